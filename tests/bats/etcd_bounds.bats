#!/usr/bin/env bats
# What a server on the etcd URL sends is bounded before it is buffered
# (metad-protocol(7), LIMITS): a hostile one (tests/faults/fake_etcd.py,
# HTTP/2 through python3-h2) that sends a huge answer, streams one
# forever, or sends header blocks without end gets its connection closed
# with a logged error, and the daemon does not grow.
# bats file_tags=store:etcd

load helpers

setup() {
	testdir
	/usr/bin/python3 -c 'import h2' 2>/dev/null ||
	    skip "needs python3-h2 (scripts/deps.sh)"
}

teardown() {
	metad_stop
	stop_bg "${FAKE_PID:-}"
	metad_cleanup
}

# fake_start MODE: the fake etcd on a free loopback port, and a metad on
# it; SOCK, METAD_PID.
fake_start() {
	local port
	port=$(free_port)
	/usr/bin/python3 "$ROOT/tests/faults/fake_etcd.py" "$port" "$1" \
	    "$TESTDIR/fake.pid" 2>>"$TESTDIR/fake.log" 3>&- &
	FAKE_PID=$!
	wait_for test -s "$TESTDIR/fake.pid"
	SOCK="$TESTDIR/metad.sock"
	export METACTL_SOCKET="$SOCK"
	"$METAD" --socket "$SOCK" --store "etcd:http://127.0.0.1:$port" \
	    --log-level warn 2>>"$TESTDIR/metad.log" 3>&- &
	METAD_PID=$!
	daemon_wait "$METAD_PID" "$SOCK" "$TESTDIR/metad.log"
}

# attack N: N reads at a revision at once, each a Range of the key
# "attack", which the fake answers as its mode says; then the daemon's
# peak RSS in kB, in HWM, once it logged the connection closed.
attack() {
	local i pids=()
	for i in $(seq 1 "$1"); do
		printf '{"op":"get","key":"attack","rev":1}\n' |
		    socat -t 30 - "UNIX-CONNECT:$SOCK" >>"$TESTDIR/answers" &
		pids+=($!)
	done
	wait_for -t 60 grep -q "closing the connection" "$TESTDIR/metad.log"
	for i in "${pids[@]}"; do
		wait_bg "$i" 40
	done
	HWM=$(awk '/VmHWM/ {print $2}' "/proc/$METAD_PID/status")
	echo "# peak RSS ${HWM} kB" >&3
	# The daemon serves on.
	run req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}

# bats test_tags=no-valgrind
@test "etcd: an answer that would decode past its limit (15 MiB of empty kvs) closes the connection, logged, never decoded" {
	fake_start huge
	attack 1
	run grep -c 'the answer to /etcdserverpb.KV/Range (15728640 bytes) would take [0-9]* bytes decoded, past the limit of [0-9]*: closing the connection' "$TESTDIR/metad.log"
	assert_output 1
	# Decoded it took 630 MB (40 times its size).
	[ -n "${SANITIZER:-}" ] || [ "$HWM" -le 98304 ] ||
	    fail "peak RSS ${HWM} kB is over 98304 kB"
	run cat "$TESTDIR/answers"
	refute_output --partial '"ok":true'
}

# bats test_tags=no-valgrind
@test "etcd: an answer whose prefix claims 1 GiB closes the connection at its prefix, nothing buffered" {
	fake_start forever
	attack 1
	run grep -c 'an answer on /etcdserverpb.KV/Range is 1073741824 bytes, past the limit of 67108864: closing the connection' "$TESTDIR/metad.log"
	assert_output 1
	# It buffered 64 MiB before.
	[ -n "${SANITIZER:-}" ] || [ "$HWM" -le 32768 ] ||
	    fail "peak RSS ${HWM} kB is over 32768 kB"
}

# bats test_tags=no-valgrind
@test "etcd: header blocks without end close the connection past 64 KiB" {
	fake_start headers
	attack 1
	run grep -c 'a header block on /etcdserverpb.KV/Range is [0-9]* bytes, past the limit of 65536: closing the connection' "$TESTDIR/metad.log"
	assert_output 1
	[ -n "${SANITIZER:-}" ] || [ "$HWM" -le 32768 ] ||
	    fail "peak RSS ${HWM} kB is over 32768 kB"
}
