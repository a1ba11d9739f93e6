# shellcheck shell=sh
# Sourced by the tests: starts and stops the installed metad as the test's
# user, on a socket in $AUTOPKGTEST_TMP (a new temporary directory when run
# by hand).

TESTDIR=${AUTOPKGTEST_TMP:-$(mktemp -d)}
SOCK=$TESTDIR/metad.sock
METAD_PID=

# metad_start STORE: metad serving $SOCK once its pidfile is there
# (--pidfile is written once it serves), at most 10 seconds.
metad_start() {
	rm -f "$TESTDIR/metad.pid"
	/usr/bin/metad --foreground --socket "$SOCK" --store "$1" \
	    --pidfile "$TESTDIR/metad.pid" 2>>"$TESTDIR/metad.log" &
	METAD_PID=$!
	tries=0
	while [ ! -s "$TESTDIR/metad.pid" ]; do
		if ! kill -0 "$METAD_PID" 2>/dev/null; then
			echo "metad exited before serving:" >&2
			cat "$TESTDIR/metad.log" >&2
			return 1
		fi
		tries=$((tries + 1))
		if [ "$tries" -gt 200 ]; then
			echo "metad did not serve $SOCK within 10 seconds" >&2
			return 1
		fi
		sleep 0.05
	done
}

# metad_stop: SIGTERM, and metad exits 0.
metad_stop() {
	kill -TERM "$METAD_PID"
	rc=0
	wait "$METAD_PID" || rc=$?
	METAD_PID=
	if [ "$rc" -ne 0 ]; then
		echo "metad exited $rc on SIGTERM:" >&2
		cat "$TESTDIR/metad.log" >&2
		return 1
	fi
}

metad_cleanup() {
	[ -z "$METAD_PID" ] || kill -KILL "$METAD_PID" 2>/dev/null || true
}
trap metad_cleanup EXIT
