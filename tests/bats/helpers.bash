# Shared by every bats file: each file (or test) starts its own metad on its
# own socket in a temporary directory, and stops it afterwards.
#
#   METAD_TEST_STORE   backend for the daemon under test: "sqlite" (default)
#                      or "memory"
#   METAD_WRAPPER      a command metad runs under (make valgrind sets it,
#                      and METAD_VALGRIND=1 for tests too slow to run so)

bats_load_library bats-support
bats_load_library bats-assert

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
METAD="$ROOT/bin/metad"
METACTL="$ROOT/bin/metactl"

# Start a daemon: metad_start [extra metad options...]
# Sets SOCK, DB, METAD_PID; exports METACTL_SOCKET for metactl.
metad_start() {
	TESTDIR="${TESTDIR:-$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-test.XXXXXX")}"
	SOCK="$TESTDIR/metad.sock"
	DB="$TESTDIR/meta.db"
	local store
	case "${METAD_TEST_STORE:-sqlite}" in
	sqlite) store="sqlite:$DB" ;;
	memory) store="memory" ;;
	*) store="$METAD_TEST_STORE" ;;
	esac
	${METAD_WRAPPER:-} "$METAD" --socket "$SOCK" --store "$store" \
	    --log-level warn "$@" 2>>"$TESTDIR/metad.log" 3>&- &
	METAD_PID=$!
	export METACTL_SOCKET="$SOCK"
	local i
	for i in $(seq 1 200); do
		# Ready once it answers (a stale socket file may be there).
		[ -S "$SOCK" ] && socat -u /dev/null "UNIX-CONNECT:$SOCK" \
		    2>/dev/null && return 0
		kill -0 "$METAD_PID" 2>/dev/null || {
			cat "$TESTDIR/metad.log" >&2
			return 1
		}
		sleep 0.025
	done
	echo "metad did not start" >&2
	return 1
}

# Stop the daemon with SIGTERM and wait for it.
metad_stop() {
	[ -n "${METAD_PID:-}" ] || return 0
	kill -TERM "$METAD_PID" 2>/dev/null || true
	wait "$METAD_PID" 2>/dev/null || true
	METAD_PID=
}

metad_kill9() {
	[ -n "${METAD_PID:-}" ] || return 0
	kill -KILL "$METAD_PID" 2>/dev/null || true
	wait "$METAD_PID" 2>/dev/null || true
	METAD_PID=
}

metad_cleanup() {
	metad_stop
	[ -n "${TESTDIR:-}" ] && rm -rf "$TESTDIR"
	TESTDIR=
}

# Send raw request lines (stdin) to the daemon, print the response lines.
raw() {
	socat -t 2 - "UNIX-CONNECT:$SOCK"
}

mctl() {
	"$METACTL" "$@"
}
