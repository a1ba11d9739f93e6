#!/usr/bin/env bats
# Answers leave in request order on one connection, whatever each request
# waits for (metad-protocol(7), Pipelining and ordering; CONSISTENCY), on
# every backend: the connection answers from the head of its queue only.

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# pipeline FILE: send every line of FILE on one connection, print the
# answers (not the watch events); the daemon closes once all are answered.
pipeline() {
	socat -t 30 - "UNIX-CONNECT:$SOCK" <"$1" |
	    jq -c 'select(has("event") | not)'
}

@test "pipelined requests of every kind are answered in request order, each seeing the writes before it" {
	local i id=0 rounds=20 f="$TESTDIR/reqs"
	for i in $(seq 1 "$rounds"); do
		printf '{"id":%d,"op":"put","key":"o/%d","value":"v%d"}\n' $((id += 1)) "$i" "$i"
		printf '{"id":%d,"op":"get","key":"o/%d"}\n' $((id += 1)) "$i"
		printf '{"id":%d,"op":"list","prefix":"o/","keys_only":true}\n' $((id += 1))
		printf '{"id":%d,"op":"txn","if":[{"key":"o/%d","version":1}],"then":[{"op":"put","key":"t/%d","value":"x"}]}\n' $((id += 1)) "$i" "$i"
		printf '{"id":%d,"op":"wait","key":"t/%d","timeout_ms":10000}\n' $((id += 1)) "$i"
		printf '{"id":%d,"op":"epoch_bump","key":"e","owner":"me"}\n' $((id += 1))
		printf '{"id":%d,"op":"epoch_get","key":"e"}\n' $((id += 1))
		printf '{"id":%d,"op":"status"}\n' $((id += 1))
		printf '{"id":%d,"op":"watch","key":"o/%d"}\n' $((id += 1)) "$i"
		printf '{"id":%d,"op":"ping"}\n' $((id += 1))
		printf '{"id":%d,"op":"delete","key":"nothing/%d"}\n' $((id += 1)) "$i"
	done >"$f"
	pipeline "$f" >"$TESTDIR/out"
	# One answer per request, in the order sent, every one ok.
	run jq -s -c '[.[].id]' "$TESTDIR/out"
	assert_output "[$(seq -s, 1 "$id")]"
	run jq -s '[.[] | select(.ok != true)] | length' "$TESTDIR/out"
	assert_output 0
	# Each read saw the writes sent before it on the connection.
	for i in $(seq 1 "$rounds"); do
		base=$(( (i - 1) * 11 ))
		run jq -r "select(.id == $((base + 2))) | .kv.value" "$TESTDIR/out"
		assert_output "v$i"
		run jq -r "select(.id == $((base + 3))) | .kvs | length" "$TESTDIR/out"
		assert_output "$i"
		run jq -r "select(.id == $((base + 4))) | .succeeded" "$TESTDIR/out"
		assert_output true
		run jq -r "select(.id == $((base + 5))) | .kv.key" "$TESTDIR/out"
		assert_output "t/$i"
		run jq -r "select(.id == $((base + 7))) | .epoch.epoch" "$TESTDIR/out"
		assert_output "$i"
	done
}

@test "400 alternating puts and gets on one connection: answers in order, each get sees its put (3 runs)" {
	local run i f="$TESTDIR/reqs"
	for run in 1 2 3; do
		for i in $(seq 1 200); do
			printf '{"id":%d,"op":"put","key":"k%d","value":"%d.%d"}\n' $((2 * i - 1)) "$i" "$run" "$i"
			printf '{"id":%d,"op":"get","key":"k%d"}\n' $((2 * i)) "$i"
		done >"$f"
		pipeline "$f" >"$TESTDIR/out"
		run jq -s -c '[.[].id]' "$TESTDIR/out"
		assert_output "[$(seq -s, 1 400)]"
		run jq -r 'select(.kv != null and (.kv | has("value"))) | .kv.value' "$TESTDIR/out"
		assert_output "$(for i in $(seq 1 200); do echo "$run.$i"; done)"
	done
}

@test "a watch's answer comes before its replayed events, and a later answer after them" {
	local i
	for i in 1 2 3; do
		mctl put w/k "$i" >/dev/null
	done
	printf '%s\n' '{"id":1,"op":"watch","key":"w/k","from_rev":1}' \
	    '{"id":2,"op":"get","key":"w/k"}' >"$TESTDIR/reqs"
	# Revisions as this backend counts them: the test's first write is @1.
	sed -i "s/\"from_rev\":1/$(rv '"from_rev":@1')/" "$TESTDIR/reqs"
	socat -t 30 - "UNIX-CONNECT:$SOCK" <"$TESTDIR/reqs" >"$TESTDIR/out"
	run jq -c '[.id, .event, .value]' "$TESTDIR/out"
	assert_output "$(printf '%s\n' '[1,null,null]' '[null,"put","1"]' \
	    '[null,"put","2"]' '[null,"put","3"]' '[2,null,null]')"
}

# metad-protocol(7), Pipelining and ordering: one response per request, in
# request order, request_too_large included: it waits for the answers owed to
# the writes before it, whether the line's end was seen or not (an
# unterminated line past the limit).
@test "request_too_large is answered in request order, after earlier pipelined writes" {
	metad_stop
	metad_start --max-request-bytes 1024
	local v
	v=$(head -c 2000 /dev/zero | tr '\0' x)
	run raw < <(printf '{"id":1,"op":"put","key":"k","value":"a"}\n{"id":2,"op":"put","key":"k","value":"%s"}\n{"id":3,"op":"put","key":"k","value":"b"}\n{"id":4,"op":"put","key":"k","value":"%s%s' "$v" "$v" "$v")
	assert_line --index 0 --partial '{"id":1,"ok":true'
	assert_line --index 1 --partial '{"ok":false,"error":{"code":"request_too_large"'
	assert_line --index 2 --partial '{"id":3,"ok":true'
	assert_line --index 3 --partial '{"ok":false,"error":{"code":"request_too_large"'
	assert_equal "${#lines[@]}" 4
}
