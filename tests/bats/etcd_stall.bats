#!/usr/bin/env bats
# bats file_tags=store:etcd
# No request holds the daemon's loop while etcd does not answer: every
# kind of request that needs etcd waits on the loop, and other
# connections are served meanwhile.

load helpers

setup() {
	TESTDIR="$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-test.XXXXXX")"
	# An etcd of its own: this test freezes it.
	unset METAD_TEST_ETCD
	etcd_start "$TESTDIR/own"
	metad_start
}

teardown() {
	[ -z "${FROZEN:-}" ] || kill -CONT "$ETCD_PID" 2>/dev/null || true
	metad_cleanup
}

# until_requests_out N: wait (at most 5 s) until N clients are connected.
until_requests_out() {
	local i
	for i in $(seq 1 200); do
		[ "$(ss -xH src "$SOCK" | grep -c ESTAB)" -ge "$1" ] && return 0
		sleep 0.025
	done
	echo "only $(ss -xH src "$SOCK" | grep -c ESTAB) of $1 clients came" >&2
	return 1
}

# ping_ms: one ping's round trip, in whole milliseconds (rounded up).
ping_ms() {
	mctl --timeout 1 ping | awk '{ t = $5; sub("ms", "", t);
	    printf "%d\n", t == int(t) ? t : int(t) + 1 }'
}

@test "etcd frozen: get, list, put, txn, status, epoch get/bump, wait, compact and an old watch wait; other connections' pings stay under 50 ms" {
	local i kind pids=()
	for i in 1 2 3 4 5; do
		mctl put "k$i" "v$i" >/dev/null
	done
	# A new daemon on the same prefix: the history above is older than its
	# cache, so a watch from it is replayed from etcd.
	metad_stop
	metad_start
	kill -STOP "$ETCD_PID"
	FROZEN=1
	for kind in "get k1" "ls" "put k9 x" "epoch get e" "epoch bump e" \
	    "status" "wait k9 --timeout 3s" "compact $(rv @2)" \
	    "watch --prefix k --from-rev $(rv @1) --count 5"; do
		mctl --timeout 5 $kind >/dev/null 2>&1 &
		pids+=($!)
	done
	printf '%s\n' '{"op":"txn","if":[],"then":[{"op":"put","key":"t","value":"x"}]}' |
	    mctl --timeout 5 txn >/dev/null 2>&1 &
	pids+=($!)
	# Each of those now waits for etcd on the loop (the first for its
	# 2 s timeout); the daemon answers pings all the while.
	until_requests_out 10
	for i in $(seq 1 10); do
		run -0 ping_ms
		[ "$output" -lt 50 ] || fail "ping $i took $output ms"
	done
	kill -CONT "$ETCD_PID"
	FROZEN=
	wait "${pids[@]}" || true
	run -0 mctl --timeout 5 ping
}
