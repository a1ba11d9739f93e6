#!/usr/bin/env bats
# wait: an answer once a key reaches a version (metad-protocol(7), wait),
# over the raw socket and through metactl wait.

load helpers

setup() {
	metad_start
}

teardown() {
	# A test that failed may leave its metactl behind.
	[ -z "${BG:-}" ] || kill -KILL "$BG" 2>/dev/null || true
	metad_cleanup
}

@test "wait answers at once when the key is already there" {
	req '{"op":"put","key":"w","value":"1"}' >/dev/null
	run req '{"op":"wait","key":"w","version":1,"timeout_ms":1000}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"w","value":"1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
}

@test "wait blocks until the version is reached, then answers in order" {
	raw_held w '{"op":"wait","key":"w","version":2,"timeout_ms":5000,"id":1}' \
	    '{"op":"ping","id":2}' > "$TESTDIR/out" &
	local bg=$!
	# Its connection and status's: the wait is in.
	until_status connections 2
	req '{"op":"put","key":"w","value":"a"}' >/dev/null
	req '{"op":"put","key":"w","value":"b"}' >/dev/null
	release w
	wait "$bg"
	run cat "$TESTDIR/out"
	assert_line --index 0 "$(rv '{"id":1,"ok":true,"kv":{"key":"w","value":"b","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	assert_line --index 1 "$(rv '{"id":2,"ok":true,"rev":@2}')"
}

@test "wait times out with error timeout" {
	run req '{"op":"wait","key":"never","timeout_ms":100}'
	assert_output --partial '"code":"timeout"'
}

@test "a write pipelined after a pending wait is answered after it" {
	printf '%s\n' '{"op":"wait","key":"w","timeout_ms":300,"id":1}' \
	    '{"op":"put","key":"x","value":"1","id":2}' |
	    socat -t 3 - "UNIX-CONNECT:$SOCK" > "$TESTDIR/out"
	run cat "$TESTDIR/out"
	assert_line --index 0 --partial '{"id":1,"ok":false,"error":{"code":"timeout"'
	assert_line --index 1 --partial '{"id":2,"ok":true,'
}

@test "wait returns at once when the key already has the version" {
	mctl put k v1
	mctl put k v2
	run "$METACTL" wait k --version 2
	assert_success
	assert_output v2
	run "$METACTL" -o json wait k
	assert_success
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "wait times out with exit status 1" {
	run "$METACTL" --timeout 200ms wait nope
	assert_failure 1
	assert_output --partial 'timeout'
	mctl put k v
	run "$METACTL" --timeout 200ms wait k --version 2
	assert_failure 1
}

@test "wait blocks until another process writes the version" {
	"$METACTL" --timeout 5s wait k --version 2 > "$TESTDIR/out" &
	BG=$!
	until_status connections 2	# the wait's and status's
	mctl put k first
	mctl put k second
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output second
}

@test "wait --raw prints the exact bytes; --timeout 0 waits; SIGINT is 130" {
	mctl put k abc
	run "$METACTL" wait k --raw
	assert_output abc
	"$METACTL" --timeout 0 wait never > "$TESTDIR/out" &
	BG=$!
	until_status connections 2	# the wait's and status's
	kill -INT "$BG"
	wait_bg "$BG"
	assert_equal "$STATUS" 130
}
