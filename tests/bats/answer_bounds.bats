#!/usr/bin/env bats
# Answers bounded in size and in what a connection holds (metad(8),
# --max-answer-bytes and --max-pending-bytes; metad-protocol(7), LIMITS).

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# put_big KEY N: KEY's value is N bytes of 0x01 (six times larger escaped).
put_big() {
	/usr/bin/python3 -c '
import base64, json, sys
v = base64.b64encode(b"\x01" * int(sys.argv[2])).decode()
print(json.dumps({"op": "put", "key": sys.argv[1], "value_b64": v}))
' "$1" "$2" | socat -t 10 - "UNIX-CONNECT:$SOCK" | grep -q '"ok":true'
}

# bats test_tags=not-remote
@test "a txn whose gets would pass --max-answer-bytes is answer_too_large and writes nothing" {
	put_big big 1048576
	local gets
	gets=$(printf ',{"op":"get","key":"big"}%.0s' $(seq 1 127))
	run req "{\"op\":\"txn\",\"then\":[{\"op\":\"get\",\"key\":\"big\"}$gets]}"
	assert_output --regexp '^\{"ok":false,"error":\{"code":"answer_too_large","message":"the answer would be [0-9]+ bytes, past --max-answer-bytes \(16777216\): get fewer'
	# Puts before and after such gets: the txn fails whole.
	gets=$(printf ',{"op":"get","key":"big"}%.0s' $(seq 1 125))
	run req "{\"op\":\"txn\",\"then\":[{\"op\":\"put\",\"key\":\"w1\",\"value\":\"a\"}$gets,{\"op\":\"delete\",\"key\":\"big\"},{\"op\":\"put\",\"key\":\"w2\",\"value\":\"b\"}]}"
	assert_output --partial '"code":"answer_too_large"'
	# A get sees the branch's own earlier writes, sized so: a put of a
	# small value first makes the same gets fit.
	run req "{\"op\":\"txn\",\"then\":[{\"op\":\"put\",\"key\":\"big\",\"value\":\"s\"}$gets]}"
	assert_output --partial '"ok":true'
	put_big big 1048576
	run req '{"op":"txn","if":[{"key":"w1","version":0}],"then":[{"op":"put","key":"w3","value":"c"},{"op":"get","key":"big"},{"op":"get","key":"big"},{"op":"get","key":"big"}]}'
	assert_output --partial '"code":"answer_too_large"'
	for k in w1 w2 w3; do
		run req "{\"op\":\"get\",\"key\":\"$k\"}"
		assert_output --partial '"kv":null'
	done
	run req '{"op":"list","prefix":"big","keys_only":true}'
	assert_output --partial '"version":3'
	# Two gets fit (about 12.6 MB): answered whole.
	run bash -c "printf '%s\n' '{\"op\":\"txn\",\"then\":[{\"op\":\"get\",\"key\":\"big\"},{\"op\":\"get\",\"key\":\"big\"}]}' | socat -t 10 - UNIX-CONNECT:$SOCK | wc -c" 2>/dev/null
	[ "$output" -gt 12000000 ]
	# A smaller limit counts the same way.
	metad_stop
	metad_start --max-answer-bytes 64k
	put_big big 20000
	run req '{"op":"txn","then":[{"op":"put","key":"w4","value":"d"},{"op":"get","key":"big"}]}'
	assert_output --partial '"code":"answer_too_large","message":"the answer would be'
	assert_output --partial '(65536)'
	run req '{"op":"get","key":"w4"}'
	assert_output --partial '"kv":null'
}

# bats test_tags=no-valgrind
@test "two connections that never read, sending txns of large answers: RSS stays under 256 MiB, pings under 100 ms" {
	[ -z "${METAD_VALGRIND:-}" ] || skip "its RSS and time bounds do not hold under valgrind"
	put_big big 1048576
	# The attack and the pings (answer_flood.py): each of two connections
	# sends txns of 128 gets of a 1 MiB value of 0x01 bytes (refused) and
	# of 2 gets (12.6 MB answers, under the limit), never reading; a
	# third pings 21 times meanwhile, 100 ms apart.  At most 2 of the 21
	# take over 100 ms, none over 1 s (a loaded 2-core machine stalls
	# any process now and then; before the bounds one took 10 s), and
	# the daemon's peak RSS (VmHWM) is bound.
	run /usr/bin/python3 "$ROOT/tests/faults/answer_flood.py" "$SOCK" "$METAD_PID" 4
	echo "# $(echo $output)" >&3
	assert_success
	local slow hwm
	slow=$(echo "$output" | sed -n 's/^ping_slow //p')
	hwm=$(echo "$output" | sed -n 's/^hwm_kb //p')
	[ "$slow" -le 2 ] || fail "$slow of 21 pings took over 100 ms"
	[ "$(echo "$output" | sed -n 's/^ping_max_ms //p')" -le 1000 ] ||
	    fail "a ping took over 1 s"
	# A sanitizer build keeps freed memory in quarantine: no bound there.
	[ -n "${SANITIZER:-}" ] || [ "$hwm" -le 262144 ] ||
	    fail "daemon peak RSS ${hwm} kB is over 262144 kB"
	# The daemon serves on.
	run req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}
