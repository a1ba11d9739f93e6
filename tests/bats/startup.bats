#!/usr/bin/env bats
# Every way metad is started (metad(8): OPTIONS, SIGNALS, SYSTEMD) takes
# concurrent writers and stops on SIGTERM within 2 s keeping every
# acknowledged write: in the foreground, with --daemonize, under
# systemd-socket-activate(1), and as the shipped system and user units
# start it (their ExecStart= line, socket-activated, Type=notify).  Each
# form gets the same load: 16 connections pipelining puts, a txn of 128
# puts and a load of 10000 keys; then SIGTERM (and a second signal while
# it drains), then, on a store that outlives its daemon, a restart that
# reads every write back.

load helpers

CONNS=16
PUTS=200		# per connection
LOADN=10000
TOTAL=$((CONNS * PUTS + 128 + LOADN))

setup() {
	testdir
	DB="$TESTDIR/meta.db"
	SOCK="$TESTDIR/metad.sock"
	export METACTL_SOCKET="$SOCK"
	NOTIFY_LOG="$TESTDIR/notify.log"
	: >"$NOTIFY_LOG"
}

teardown() {
	stop_bg "${LISTENER_PID:-}"
	if [ -n "${DAEMON_PIDFILE:-}" ] && [ -s "$DAEMON_PIDFILE" ]; then
		kill -KILL "$(cat "$DAEMON_PIDFILE")" 2>/dev/null || true
	fi
	metad_cleanup
}

# The store spec of this pass (metad_spawn's), and its extra options.
store_args() {
	case "${METAD_TEST_STORE:-sqlite}" in
	sqlite) STORE_ARGS=(--store "sqlite:$DB") ;;
	memory) STORE_ARGS=(--store memory) ;;
	etcd)
		etcd_for_test || return 1
		STORE_ARGS=(--store "etcd:$ETCD_URL" --etcd-prefix "$ETCD_PREFIX")
		;;
	remote)
		serving_for_test || return 1
		STORE_ARGS=(--store "metad:unix:$SERVING_SOCK")
		;;
	esac
}

# The load file: LOADN keys in metactl dump's format.
load_file() {
	{
		echo '{"dump":1,"rev":0,"backend":"memory"}'
		seq 1 "$LOADN" | awk '{ printf "{\"key\":\"l/%d\",\"value\":\"lv%d\",\"version\":1,\"create_rev\":1,\"mod_rev\":1}\n", $1, $1 }'
	} >"$TESTDIR/load.jsonl"
}

# The writers, all at once: CONNS connections each pipelining PUTS puts
# (c<conn>/<n> = n), one txn of 128 puts (t/<n>), one load of LOADN keys;
# each must be acknowledged in full within 30 s, or the form fails.
writers() {
	local c pids=() rc=0 txn
	load_file
	txn=$(seq 1 128 | awk 'BEGIN { printf "{\"if\":[],\"then\":[" }
	    { printf "%s{\"op\":\"put\",\"key\":\"t/%d\",\"value\":\"tv%d\"}", (NR > 1 ? "," : ""), $1, $1 }
	    END { print "]}" }')
	for c in $(seq 1 "$CONNS"); do
		timeout 30 bash -c "$(declare -f put_n); SOCK=$SOCK; put_n c$c/ $PUTS" \
		    2>>"$TESTDIR/writers.err" &
		pids+=($!)
	done
	timeout 30 "$METACTL" txn <<<"$txn" >"$TESTDIR/txn.out" 2>&1 &
	pids+=($!)
	timeout 30 "$METACTL" load "$TESTDIR/load.jsonl" \
	    >"$TESTDIR/load.out" 2>&1 &
	pids+=($!)
	for c in "${pids[@]}"; do
		wait "$c" || rc=1
	done
	if [ "$rc" -ne 0 ] || ! grep -q SUCCEEDED "$TESTDIR/txn.out"; then
		cat "$TESTDIR/writers.err" "$TESTDIR/txn.out" \
		    "$TESTDIR/load.out" >&2
		return 1
	fi
}

# Every write is there: the key count, and the last of each kind.
all_there() {
	local c
	run mctl status
	assert_success
	assert_line "keys: $TOTAL"
	for c in 1 $CONNS; do
		run mctl get "c$c/$PUTS"
		assert_output "$PUTS"
	done
	run mctl get t/128
	assert_output tv128
	run mctl get "l/$LOADN"
	assert_output "lv$LOADN"
}

# exited PID: PID is gone or a zombie (a daemon that is not our child
# waits for init to reap it).
exited() {
	[ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# stop_within PID: SIGTERM, a second SIGTERM and a SIGINT while it drains;
# PID exits within 2 s (it need not be our child).
stop_within() {
	local pid=$1 t0
	t0=$EPOCHREALTIME
	kill -TERM "$pid"
	kill -TERM "$pid" 2>/dev/null || true
	kill -INT "$pid" 2>/dev/null || true
	wait_for -t 5 exited "$pid"
	local took
	took=$(ms "$t0" "$EPOCHREALTIME")
	echo "stopped in $took ms" >&2
	[ -n "${METAD_VALGRIND:-}" ] || [ "$took" -le 2000 ]
}

# The form's daemon is gone: on a durable store, start it again in the
# foreground and read every write back.
after_restart() {
	store_is sqlite etcd remote || return 0
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	all_there
	metad_stop
}

# One form: the load, every write read back, the stop, the restart.
exercise() {
	local pid=$1
	writers
	all_there
	stop_within "$pid"
	after_restart
}

notify_listen() {
	socat -u -t 0.1 "UNIX-RECVFROM:$TESTDIR/notify.sock,fork" \
	    SYSTEM:"cat; echo" >>"$NOTIFY_LOG" 2>/dev/null &
	LISTENER_PID=$!
	wait_for test -S "$TESTDIR/notify.sock"
}

notified() {
	grep -qx "$1" "$NOTIFY_LOG"
}

# activate METAD_ARGS...: metad exec'd by systemd-socket-activate at the
# first connection on $SOCK, which that tool made, with NOTIFY_SOCKET.
activate() {
	notify_listen
	NOTIFY_SOCKET="$TESTDIR/notify.sock" systemd-socket-activate \
	    -l "$SOCK" -E NOTIFY_SOCKET "$@" --log-level warn \
	    2>>"$TESTDIR/metad.log" 3>&- &
	METAD_PID=$!
	wait_for test -S "$SOCK"
	run mctl ping
	assert_success
	wait_for notified READY=1
}

@test "foreground: 16 pipelining writers, a 128-put txn and a 10000-key load; SIGTERM stops it within 2 s, nothing lost" {
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	exercise "$METAD_PID"
	METAD_PID=
}

@test "--daemonize: the parent returns once the child serves, the child takes every writer, SIGTERM stops it within 2 s" {
	store_args
	DAEMON_PIDFILE="$TESTDIR/pid"
	# (Not "run": a daemon that kept the parent's stderr would hold its
	# pipe open.)
	timeout 20 "$METAD" --daemonize --pidfile "$DAEMON_PIDFILE" \
	    --socket "$SOCK" "${STORE_ARGS[@]}" 2>"$TESTDIR/stderr" 3>&-
	# Serving already: the parent returned only once the child did.
	run mctl ping
	assert_success
	exercise "$(cat "$DAEMON_PIDFILE")"
	[ ! -e "$DAEMON_PIDFILE" ]
	DAEMON_PIDFILE=
}

@test "--daemonize: a daemon that cannot start says why, and the parent exits with its status" {
	run "$METAD" --daemonize --socket "$TESTDIR/no/such/dir/x.sock" \
	    --store memory 3>&-
	assert_failure 1
	assert_output --partial "$TESTDIR/no/such/dir"
	# A log file it cannot write: said at once, nothing made.
	run "$METAD" --daemonize --socket "$SOCK" --store memory \
	    --log-file "$TESTDIR/no/dir/log" 3>&-
	assert_failure 1
	assert_output --partial "--log-file $TESTDIR/no/dir/log"
	[ ! -e "$SOCK" ]
	# A live daemon on the socket: refused, exit 1, nothing left running.
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run "$METAD" --daemonize --socket "$SOCK" --store memory 3>&-
	assert_failure 1
	assert_output --partial "already running"
}

@test "--daemonize writes nothing into the terminal it left; --log-file gets the log, reopened on SIGHUP" {
	DAEMON_PIDFILE="$TESTDIR/pid"
	"$METAD" --daemonize --pidfile "$DAEMON_PIDFILE" --socket "$SOCK" \
	    --store memory --log-level info 2>"$TESTDIR/stderr" 3>&-
	local pid
	pid=$(cat "$DAEMON_PIDFILE")
	run mctl ping
	assert_success
	kill -TERM "$pid"
	wait_for exited "$pid"
	DAEMON_PIDFILE=
	# Not a byte after it detached: no "listening on", no "stopping".
	[ ! -s "$TESTDIR/stderr" ]

	# Its log went to syslog: the daemon's child opens /dev/log (connect
	# fails here where no syslog daemon listens; the point is where it
	# logs) and writes its messages there, priority "daemon.info" (<30>).
	# (strace follows the daemon: it returns when the daemon exits.)
	DAEMON_PIDFILE="$TESTDIR/pid"
	strace -f -qq -e trace=connect -s 200 -o "$TESTDIR/trace" \
	    "$METAD" --daemonize --pidfile "$DAEMON_PIDFILE" --socket "$SOCK" \
	    --store memory --log-level info 2>"$TESTDIR/stderr" 3>&- &
	local tracer=$!
	wait_for test -s "$DAEMON_PIDFILE"
	pid=$(cat "$DAEMON_PIDFILE")
	run mctl ping
	assert_success
	kill -TERM "$pid"
	wait "$tracer"
	DAEMON_PIDFILE=
	grep -q 'connect(.*sun_path="/dev/log"' "$TESTDIR/trace"
	[ ! -s "$TESTDIR/stderr" ]

	DAEMON_PIDFILE="$TESTDIR/pid"
	"$METAD" --daemonize --pidfile "$DAEMON_PIDFILE" --socket "$SOCK" \
	    --store memory --log-level info --log-file "$TESTDIR/log" \
	    2>"$TESTDIR/stderr" 3>&-
	pid=$(cat "$DAEMON_PIDFILE")
	wait_for grep -q "listening on $SOCK" "$TESTDIR/log"
	[ "$(stat -c %a "$TESTDIR/log")" = 600 ]
	mv "$TESTDIR/log" "$TESTDIR/log.1"
	kill -HUP "$pid"
	wait_for grep -q "reopened" "$TESTDIR/log"
	kill -TERM "$pid"
	wait_for exited "$pid"
	DAEMON_PIDFILE=
	grep -q 'stopping' "$TESTDIR/log"
	grep -q '^[0-9-]*T[0-9:]*Z metad: ' "$TESTDIR/log"
	[ ! -s "$TESTDIR/stderr" ]
}

@test "systemd-socket-activate: the passed socket takes every writer, READY=1, SIGTERM stops it within 2 s" {
	store_args
	activate "$METAD" "${STORE_ARGS[@]}"
	exercise "$METAD_PID"
	notified STOPPING=1
	METAD_PID=
}

# The shipped unit's ExecStart= as systemd runs it: the specifiers and
# @BINDIR@ filled in, the paths moved into the test's directory, the store
# this pass's.
unit_exec() {
	local unit=$1 line
	line=$(sed -n 's/^ExecStart=//p' "$ROOT/systemd/$unit")
	line=${line//@BINDIR@/$ROOT/bin}
	line=${line//\/run\/metad\/metad.sock/$SOCK}
	line=${line//%t\/metad.sock/$SOCK}
	line=${line%% --store *}
	echo "$line"
}

@test "the system and user units' ExecStart=, socket-activated with Type=notify, take every writer and stop within 2 s" {
	local unit cmd
	for unit in metad.service.in user/metad.service.in; do
		store_args
		grep -qx 'Type=notify' "$ROOT/systemd/$unit"
		cmd=$(unit_exec "$unit")
		[[ $cmd == "$ROOT/bin/metad --foreground --socket $SOCK" ]]
		: >"$NOTIFY_LOG"
		# shellcheck disable=SC2086 # the unit's words
		activate $cmd "${STORE_ARGS[@]}"
		exercise "$METAD_PID"
		# socat's forked reader appends the datagram after it came: wait for it.
		wait_for notified STOPPING=1
		METAD_PID=
		stop_bg "$LISTENER_PID"
		LISTENER_PID=
		rm -f "$SOCK" "$TESTDIR/notify.sock"
		rm -f "$DB" "$DB-wal" "$DB-shm"
		! store_is etcd || ETCD_PREFIX="${ETCD_PREFIX%/}.u/"
	done
}
