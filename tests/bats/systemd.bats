#!/usr/bin/env bats
# bats file_tags=store:sqlite
# metad under systemd (metad(8), SYSTEMD): socket activation through a
# socket systemd-socket-activate(1) creates and passes (LISTEN_FDS,
# LISTEN_PID), readiness and stopping told on NOTIFY_SOCKET (a datagram
# listener, socat, on an abstract name and on a path), and the units make
# install puts in place checked by systemd-analyze verify, which needs no
# running systemd.  Nothing here depends on the backend: sqlite pass only.

load helpers

setup() {
	testdir
	DB="$TESTDIR/meta.db"
	SOCK="$TESTDIR/act.sock"
	export METACTL_SOCKET="$SOCK"
	NOTIFY_LOG="$TESTDIR/notify.log"
	: >"$NOTIFY_LOG"
}

teardown() {
	stop_bg "${LISTENER_PID:-}"
	metad_cleanup
}

# notify_listen ADDRESS: a datagram listener on ADDRESS (socat's
# ABSTRACT-RECVFROM:NAME or UNIX-RECVFROM:PATH) appending what it gets to
# $NOTIFY_LOG, one datagram a line (a child per datagram, "fork").
notify_listen() {
	socat -u -t 0.1 "$1,fork" SYSTEM:"cat; echo" >>"$NOTIFY_LOG" \
	    2>/dev/null &
	LISTENER_PID=$!
}

notified() {
	grep -qx "$1" "$NOTIFY_LOG"
}

# activate NOTIFY_SOCKET [metad options...]: metad started by
# systemd-socket-activate on $SOCK, which that tool creates, as systemd
# does; it execs metad at the first connection.
activate() {
	local notify=$1
	shift
	NOTIFY_SOCKET="$notify" systemd-socket-activate -l "$SOCK" \
	    -E NOTIFY_SOCKET "$METAD" --store "sqlite:$DB" --log-level info \
	    "$@" 2>>"$TESTDIR/metad.log" 3>&- &
	METAD_PID=$!
	wait_for test -S "$SOCK"
}

@test "socket activation: metad serves the passed socket, tells READY=1 and STOPPING=1 (abstract NOTIFY_SOCKET)" {
	local name="metad-test-$$-$RANDOM" inode
	notify_listen "ABSTRACT-RECVFROM:$name"
	# --socket names another path: the passed socket wins.
	activate "@$name" --socket "$TESTDIR/unused.sock"
	inode=$(stat -c %i "$SOCK")
	run mctl put k v
	assert_success
	wait_for notified READY=1
	run mctl get k
	assert_output v
	[ ! -e "$TESTDIR/unused.sock" ]
	grep -q "serving systemd's socket $SOCK" "$TESTDIR/metad.log"
	! notified STOPPING=1
	metad_stop
	wait_for notified STOPPING=1
	[ "$(sed -n 1p "$NOTIFY_LOG")" = READY=1 ]
	# The socket is systemd's: metad neither replaced nor removed it.
	[ -S "$SOCK" ]
	[ "$(stat -c %i "$SOCK")" = "$inode" ]
}

@test "NOTIFY_SOCKET as a path; without it metad still starts" {
	notify_listen "UNIX-RECVFROM:$TESTDIR/notify.sock"
	wait_for test -S "$TESTDIR/notify.sock"
	activate "$TESTDIR/notify.sock"
	run mctl ping
	assert_success
	wait_for notified READY=1
	metad_stop
	wait_for notified STOPPING=1

	# Plain start, no systemd at all: its own socket, created and removed.
	rm -f "$SOCK"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run mctl ping
	assert_success
	metad_stop
	[ ! -e "$SOCK" ]
}

@test "socket activation for another pid is not ours; several sockets or a non-socket are refused" {
	# LISTEN_PID of another process: metad makes its own socket.
	LISTEN_PID=1 LISTEN_FDS=1 "$METAD" --socket "$SOCK" \
	    --store "sqlite:$DB" 2>>"$TESTDIR/metad.log" 3>&- &
	METAD_PID=$!
	daemon_wait "$METAD_PID" "$SOCK" "$TESTDIR/metad.log"
	grep -q "listening on $SOCK" "$TESTDIR/metad.log"
	metad_stop

	run bash -c 'LISTEN_PID=$$ LISTEN_FDS=2 exec "$0" --store "sqlite:$1" \
	    3</dev/null 4</dev/null' "$METAD" "$DB"
	assert_failure
	assert_output --partial "socket activation passed 2 sockets; metad serves exactly one"
	run bash -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --store "sqlite:$1" \
	    3<"$1"' "$METAD" "$DB"
	assert_failure
	assert_output --partial "descriptor 3 is not a listening Unix stream socket"
}

# notify_listen_one PATH: one listener process on the datagram socket PATH
# writing each datagram whole, then a newline, to $NOTIFY_LOG (socat's
# fork per datagram lets two children's writes interleave when datagrams
# come 100 ms apart).
notify_listen_one() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode() + "\n")
        f.flush()
' "$1" "$NOTIFY_LOG" 2>/dev/null &
	LISTENER_PID=$!
	wait_for test -S "$1"
}

@test "WATCHDOG_USEC: metad pings WATCHDOG=1 from its loop; STATUS= lines say the rev and connections as they change" {
	notify_listen_one "$TESTDIR/notify.sock"
	NOTIFY_SOCKET="$TESTDIR/notify.sock" WATCHDOG_USEC=200000 \
	    metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	wait_for notified READY=1
	wait_for notified "STATUS=serving, rev 0, 0 connections"
	# Every 100 ms: a handful within a second.
	wait_for -t 5 pings_at_least 5
	run mctl put k v
	assert_success
	hold_open conn | socat - "UNIX-CONNECT:$SOCK" >/dev/null &
	local held=$!
	wait_for notified "STATUS=serving, rev 1, 1 connection"
	release conn
	wait "$held" || true
	# A wedged loop stops pinging (SIGSTOP stands for it).
	kill -STOP "$METAD_PID"
	local n
	n=$(grep -c '^WATCHDOG=1$' "$NOTIFY_LOG")
	sleep 0.5
	[ "$(grep -c '^WATCHDOG=1$' "$NOTIFY_LOG")" -le $((n + 1)) ]
	kill -CONT "$METAD_PID"
	wait_for -t 5 pings_at_least $((n + 3))
	metad_stop
	wait_for notified STOPPING=1
	notified STATUS=stopping

	# WATCHDOG_PID of another process: not ours to ping.
	: >"$NOTIFY_LOG"
	NOTIFY_SOCKET="$TESTDIR/notify.sock" WATCHDOG_USEC=100000 \
	    WATCHDOG_PID=1 metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	wait_for notified READY=1
	sleep 0.3
	! notified WATCHDOG=1
}

pings_at_least() {
	[ "$(grep -c '^WATCHDOG=1$' "$NOTIFY_LOG")" -ge "$1" ]
}

@test "under journald (JOURNAL_STREAM is stderr) each log line carries its priority prefix; elsewhere none" {
	: >"$TESTDIR/journal"
	JOURNAL_STREAM="$(stat -c '%d:%i' "$TESTDIR/journal")" \
	    "$METAD" --socket "$SOCK" --store memory --log-level info \
	    --max-connections 1 2>>"$TESTDIR/journal" 3>&- &
	METAD_PID=$!
	wait_for grep -q 'listening on' "$TESTDIR/journal"
	grep -q '^<6>metad: listening on ' "$TESTDIR/journal"
	# A warning: the connection over --max-connections.
	hold_open one | socat - "UNIX-CONNECT:$SOCK" >/dev/null &
	local held=$!
	wait_for status_is connections 1 || true
	"$METACTL" ping >/dev/null 2>&1 || true
	metad_stop
	release one
	wait "$held" || true
	grep -q '^<6>metad: .*stopping' "$TESTDIR/journal"
	! grep -v '^<[3467]>metad: ' "$TESTDIR/journal"

	# Another stream (a file that is not JOURNAL_STREAM's): plain lines.
	: >"$TESTDIR/plain"
	JOURNAL_STREAM="1:1" "$METAD" --socket "$SOCK" --store memory \
	    --log-level info 2>>"$TESTDIR/plain" 3>&- &
	METAD_PID=$!
	wait_for grep -q 'listening on' "$TESTDIR/plain"
	metad_stop
	grep -q '^metad: listening on ' "$TESTDIR/plain"
	! grep -q '^<' "$TESTDIR/plain"
}

# The units as make install puts them under PREFIX (a real path, so that
# ExecStart names the metad installed there), verified with the installed
# man pages on MANPATH (Documentation=).  Any message is a finding: verify
# only warns, exit 0, about an unknown key.
verify_units() {
	local dir=$1
	shift
	(cd "$dir" && MANPATH="$PFX/share/man" XDG_RUNTIME_DIR="$TESTDIR/xdg" \
	    systemd-analyze "$@" verify metad.service metad.socket 2>&1)
}

install_prefix() {
	PFX="$TESTDIR/prefix"
	mkdir -p "$TESTDIR/xdg"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory \
	    -C "$ROOT" -o all PREFIX="$PFX" install >/dev/null
}

@test "systemd-analyze verify accepts the installed system and user units" {
	install_prefix
	grep -qx "ExecStart=$PFX/bin/metad --foreground --socket /run/metad/metad.sock --store sqlite:/var/lib/metad/meta.db" \
	    "$PFX/lib/systemd/system/metad.service"
	run verify_units "$PFX/lib/systemd/system"
	assert_success
	assert_output ""
	run verify_units "$PFX/lib/systemd/user" --user
	assert_success
	assert_output ""
	grep -qx "Type=notify" "$PFX/lib/systemd/system/metad.service"
	grep -qx "Type=notify" "$PFX/lib/systemd/user/metad.service"
}

@test "systemd-analyze verify finds a mistake in a unit (the check can fail)" {
	install_prefix
	sed -i 's/^ProtectSystem=/ProtectSystm=/' \
	    "$PFX/lib/systemd/system/metad.service"
	run verify_units "$PFX/lib/systemd/system"
	assert_output --partial "Unknown key 'ProtectSystm'"
	rm "$PFX/bin/metad"
	run verify_units "$PFX/lib/systemd/system"
	assert_failure
	assert_output --partial "is not executable"
}
