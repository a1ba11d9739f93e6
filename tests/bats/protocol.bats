#!/usr/bin/env bats
# The wire protocol, spoken over the raw socket (metad-protocol(7)).

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# Send one request line, print the one response line.
@test "hello reports server, protocol, backend, access, rev and the value limit" {
	run req '{"op":"hello","id":1}'
	assert_success
	assert_output --regexp "$(rv '^\{"id":1,"ok":true,"server":"metad","version":"[0-9.]+","protocol":1,"backend":"(sqlite|memory|etcd|metad)","access":"rw","rev":@0,"max_value_bytes":1048576\}$')"
}

@test "ping answers the current rev" {
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@0}')"
}

@test "put creates at version 1 and advances rev by exactly one" {
	run req '{"op":"put","key":"a","value":"1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run req '{"op":"put","key":"a","value":"2"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1,"rev":@2}')"
	run req '{"op":"get","key":"a"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "get of an absent key answers kv null" {
	run req '{"op":"get","key":"nope","id":"x"}'
	assert_output "$(rv '{"id":"x","ok":true,"kv":null,"rev":@0}')"
}

@test "delete removes; re-creating starts at version 1 with a new create_rev" {
	req '{"op":"put","key":"k","value":"v"}' >/dev/null
	req '{"op":"put","key":"k","value":"v"}' >/dev/null
	run req '{"op":"delete","key":"k"}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@3}')"
	run req '{"op":"delete","key":"k"}'
	assert_output "$(rv '{"ok":true,"deleted":false,"rev":@3}')"
	run req '{"op":"put","key":"k","value":"w"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@4,"mod_rev":@4},"prev_version":0,"rev":@4}')"
}

@test "if_absent fails on an existing key with the current metadata" {
	req '{"op":"put","key":"k","value":"v"}' >/dev/null
	run req '{"op":"put","key":"k","value":"w","if_absent":true}'
	assert_output --partial '"ok":false,"error":{"code":"failed_precondition"'
	assert_output --partial "$(rv '"current":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1}')"
	run req '{"op":"get","key":"k"}'
	assert_output --partial '"value":"v"'
}

@test "if_version: match writes, mismatch fails, 0 means absent" {
	run req '{"op":"put","key":"k","value":"a","if_version":0}'
	assert_output --partial '"version":1'
	run req '{"op":"put","key":"k","value":"b","if_version":1}'
	assert_output --partial '"version":2'
	run req '{"op":"put","key":"k","value":"c","if_version":1}'
	assert_output --partial '"code":"failed_precondition"'
	assert_output --partial '"current":{"key":"k","version":2'
	run req '{"op":"put","key":"n","value":"c","if_version":3}'
	assert_output --partial '"current":null'
}

@test "if_mod_rev protects against ABA" {
	req '{"op":"put","key":"k","value":"a"}' >/dev/null
	req '{"op":"delete","key":"k"}' >/dev/null
	req '{"op":"put","key":"k","value":"a"}' >/dev/null
	# Same version (1) as before, but mod_rev moved from @1 to @3.
	run req "$(rv '{"op":"put","key":"k","value":"b","if_mod_rev":@1}')"
	assert_output --partial '"code":"failed_precondition"'
	run req "$(rv '{"op":"delete","key":"k","if_mod_rev":@3}')"
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@4}')"
}

@test "a failed precondition changes nothing, not even rev" {
	req '{"op":"put","key":"k","value":"a"}' >/dev/null
	req '{"op":"put","key":"k","value":"b","if_version":7}' >/dev/null
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@1}')"
}

@test "binary values travel as value_b64, UTF-8 ones as value" {
	run req '{"op":"put","key":"bin","value_b64":"AAH/"}'
	assert_output --partial '"version":1'
	run req '{"op":"get","key":"bin"}'
	assert_output --partial '"value_b64":"AAH/"'
	req '{"op":"put","key":"txt","value_b64":"aMOp"}' >/dev/null
	run req '{"op":"get","key":"txt"}'
	assert_output --partial '"value":"hé"'
}

@test "list: sorted, prefix, after, limit, more, keys_only" {
	for k in b/2 a/1 b/1 b/3 c; do
		req "{\"op\":\"put\",\"key\":\"$k\",\"value\":\"v\"}" >/dev/null
	done
	run req '{"op":"list","prefix":"b/","limit":2,"keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"b/1","version":1,"create_rev":@3,"mod_rev":@3},{"key":"b/2","version":1,"create_rev":@1,"mod_rev":@1}],"more":true,"rev":@5}')"
	run req '{"op":"list","prefix":"b/","after":"b/2"}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"b/3","value":"v","version":1,"create_rev":@4,"mod_rev":@4}],"more":false,"rev":@5}')"
	run req '{"op":"list"}'
	assert_output --regexp '"kvs":\[\{"key":"a/1".*"key":"b/1".*"key":"b/2".*"key":"b/3".*"key":"c"'
}

@test "list limit out of range is bad_request naming the limit" {
	run req '{"op":"list","limit":10001}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial '10000'
	run req '{"op":"list","limit":0}'
	assert_output --partial '"code":"bad_request"'
}

@test "malformed requests get errors and the connection stays usable" {
	run raw <<'REQS'
not json
[1,2]
{"op":"get"}
{"op":"frobnicate","id":7}
{"op":"get","key":""}
{"op":"put","key":"k"}
{"op":"put","key":"k","value":"a","value_b64":"YQ=="}
{"op":"put","key":"k","value_b64":"!!!"}
{"op":"put","key":"k","value":"a","if_version":-1}
{"op":"put","key":"k","value":"a","if_version":1.5}
{"op":"put","key":"k","value":"a","if_version":9007199254740992}
{"op":"put","key":"k","value":"a","if_absent":true,"if_version":0}
{"op":"get","key":"a\u0000b"}
{"op":"get","key":5}
{"op":"ping","id":2}
REQS
	assert_success
	assert_equal "${#lines[@]}" 15
	local i
	for i in 0 1 2 4 5 6 7 8 9 10 11 12 13; do
		assert_regex "${lines[$i]}" '"ok":false,"error":\{"code":"bad_request","message":"[^"]+'
	done
	assert_equal "${lines[3]}" '{"id":7,"ok":false,"error":{"code":"unknown_op","message":"unknown op \"frobnicate\""}}'
	assert_equal "${lines[14]}" "$(rv '{"id":2,"ok":true,"rev":@0}')"
}

@test "messages name the field and the limit" {
	run req "{\"op\":\"get\",\"key\":\"$(head -c 4097 /dev/zero | tr '\0' k)\"}"
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'key is 4097 bytes, the limit is 4096'
	run req "{\"op\":\"get\",\"key\":\"$(head -c 4096 /dev/zero | tr '\0' k)\"}"
	assert_output --partial '"ok":true'
}

@test "value over --max-value-bytes is value_too_large" {
	metad_stop
	metad_start --max-value-bytes 10
	run req '{"op":"put","key":"k","value":"12345678901"}'
	assert_output --partial '"code":"value_too_large"'
	assert_output --partial 'the limit is 10'
	run req '{"op":"put","key":"k","value":"1234567890"}'
	assert_output --partial '"ok":true'
}

@test "an over-long line is request_too_large and the rest of it is skipped" {
	metad_stop
	metad_start --max-request-bytes 2000
	run raw < <(printf '{"op":"put","key":"k","value":"%s"}\n{"op":"ping","id":1}\n' "$(head -c 5000 /dev/zero | tr '\0' x)")
	assert_equal "${#lines[@]}" 2
	assert_regex "${lines[0]}" '"code":"request_too_large".*2000'
	assert_equal "${lines[1]}" "$(rv '{"id":1,"ok":true,"rev":@0}')"
}

@test "an id is a string or an integer of at most 64 digits, echoed byte for byte; anything else is bad_request, answered without one" {
	local d64 d65
	d64=$(printf '9%.0s' $(seq 1 64))
	d65=$(printf '9%.0s' $(seq 1 65))
	run raw <<REQS
{"op":"ping","id":"abc"}
{"op":"ping","id":"a\u0062c\/"}
{"op":"ping","id":-9007199254740993}
{"op":"ping","id":$d64}
{"op":"ping","id":$d65}
{"op":"ping","id":true}
{"op":"ping","id":null}
{"op":"ping","id":1.5}
{"op":"ping","id":1e2}
{"op":"ping","id":[1]}
{"op":"get","key":"k","id":false}
REQS
	assert_equal "${lines[0]}" "$(rv '{"id":"abc","ok":true,"rev":@0}')"
	assert_equal "${lines[1]}" "$(rv '{"id":"a\u0062c\/","ok":true,"rev":@0}')"
	assert_equal "${lines[2]}" "$(rv '{"id":-9007199254740993,"ok":true,"rev":@0}')"
	assert_equal "${lines[3]}" "$(rv '{"id":'"$d64"',"ok":true,"rev":@0}')"
	local i
	for i in 4 5 6 7 8 9 10; do
		assert_regex "${lines[$i]}" '^\{"ok":false,"error":\{"code":"bad_request"'
	done
	assert_regex "${lines[4]}" 'a string or an integer of at most 64 digits'
}

@test "a string with a bad escape or a raw control character is bad_request, never a truncated key or value" {
	run raw <<'REQS'
{"op":"put","key":"k","value":"ab\u00zzcd"}
{"op":"put","key":"k\u00zz","value":"x"}
{"op":"put","key":"k","value":"a	b"}
{"op":"txn","then":[{"op":"put","key":"t","value":"\x"}]}
{"op":"ping","id":"\u000\u0001"}
{"op":"put","key":"k","value":"a\u0000b\u00e9\n\/"}
REQS
	local i
	for i in 0 1 3 4; do
		assert_regex "${lines[$i]}" '^\{"ok":false,"error":\{"code":"bad_request","message":"request is not valid JSON: a bad escape in a string'
	done
	assert_regex "${lines[2]}" '"code":"bad_request","message":"request is not valid JSON: a control character in a string'
	assert_regex "${lines[5]}" '"ok":true'
	# Between tokens only blanks: cJSON took any control byte for one.
	run raw < <(printf '{"op"\x01:"ping"}\n')
	assert_output --partial 'a control character between tokens (byte 5)'
	run req '{"op":"get","key":"k"}'
	assert_output --partial '"value":"a\u0000bé\n/"'
	run req '{"op":"list"}'
	assert_output --partial '"kvs":[{"key":"k",'
	refute_output --partial '"key":"t"'
}

@test "a member named twice in one object is bad_request, however its name is spelled" {
	run raw <<'REQS'
{"op":"put","op":"get","key":"k","value":"v"}
{"\u0069d":1,"id":2,"op":"ping"}
{"op":"txn","then":[{"op":"put","key":"a","value":"1","key":"b"}]}
{"op":"ping","id":3}
REQS
	assert_regex "${lines[0]}" '^\{"ok":false,"error":\{"code":"bad_request","message":"member \\"op\\" appears twice in one object"'
	assert_regex "${lines[1]}" '^\{"ok":false,"error":\{"code":"bad_request","message":"member \\"id\\" appears twice'
	assert_regex "${lines[2]}" '"code":"bad_request","message":"member \\"key\\" appears twice'
	assert_equal "${lines[3]}" "$(rv '{"id":3,"ok":true,"rev":@0}')"
	# Nothing was written by the put that named op twice.
	run req '{"op":"get","key":"k"}'
	assert_output --partial '"kv":null'
	# Many members: the check sorts them, and still finds the pair.
	local many
	many=$(seq 1 300 | awk '{ printf "\"m%d\":1,", $1 }')
	run req "{${many}\"m150\":2,\"op\":\"ping\"}"
	assert_output --partial 'member \"m150\" appears twice'
}

@test "300 pipelined requests are answered in order, reads see earlier writes" {
	local i
	{
		for i in $(seq 1 100); do
			printf '{"op":"put","key":"p%d","value":"%d","id":%d}\n' "$i" "$i" "$((3 * i))"
			printf '{"op":"get","key":"p%d","id":%d}\n' "$i" "$((3 * i + 1))"
			printf '{"op":"ping","id":%d}\n' "$((3 * i + 2))"
		done
	} | socat -t 5 - "UNIX-CONNECT:$SOCK" > "$TESTDIR/out"
	run wc -l < "$TESTDIR/out"
	assert_output 300
	for i in 1 50 100; do
		run sed -n "$((3 * i - 2))p" "$TESTDIR/out"
		assert_output "{\"id\":$((3 * i)),\"ok\":true,\"kv\":{\"key\":\"p$i\",\"version\":1,\"create_rev\":$((R0 + i)),\"mod_rev\":$((R0 + i))},\"prev_version\":0,\"rev\":$((R0 + i))}"
		run sed -n "$((3 * i - 1))p" "$TESTDIR/out"
		assert_output "{\"id\":$((3 * i + 1)),\"ok\":true,\"kv\":{\"key\":\"p$i\",\"value\":\"$i\",\"version\":1,\"create_rev\":$((R0 + i)),\"mod_rev\":$((R0 + i))},\"rev\":$((R0 + i))}"
	done
	# Every id once, in order.
	run sh -c "grep -o '^{\"id\":[0-9]*' '$TESTDIR/out' | cut -d: -f2 | tr '\n' ' '"
	assert_output "$(seq 3 302 | tr '\n' ' ')"
}

@test "status reports keys, rev and connections" {
	req '{"op":"put","key":"a","value":"1"}' >/dev/null
	req '{"op":"put","key":"b","value":"1"}' >/dev/null
	run req '{"op":"status"}'
	if store_is etcd; then
		# etcd's compaction is global to the whole etcd: an earlier
		# test's may show, but this store never compacted past R0.
		assert_output --regexp "$(rv '^\{"ok":true,"rev":@2,"compact_rev":[0-9]+,"keys":2,"db_bytes":[0-9]+,"connections":1,"watches":0,"uptime_s":[0-9]+,"backend":"etcd","endpoints":\[\{"url":"[^"]+","healthy":true\}\],"view":"on: 2 keys, [0-9]+ of 268435456 bytes"\}$')"
		local c
		c=$(sed -n 's/.*"compact_rev":\([0-9]*\).*/\1/p' <<<"$output")
		[ "$c" -le "$R0" ]
	elif store_is remote; then
		assert_output --regexp "$(rv '^\{"ok":true,"rev":@2,"compact_rev":0,"keys":2,"db_bytes":[0-9]+,"connections":1,"watches":0,"uptime_s":[0-9]+,"backend":"metad","endpoints":\[\{"url":"unix:[^"]+","healthy":true\}\],"view":"on: a replica at rev @2, streaming"\}$')"
	else
		assert_output --regexp "$(rv '^\{"ok":true,"rev":@2,"compact_rev":0,"keys":2,"db_bytes":[0-9]+,"connections":1,"watches":0,"uptime_s":[0-9]+,"backend":"(sqlite|memory)"\}$')"
	fi
}

@test "an unterminated last line is answered before the connection closes" {
	printf '{"op":"ping","id":1}\n{"op":"ping","id":2}' | raw > "$TESTDIR/out"
	run cat "$TESTDIR/out"
	assert_line --index 0 "$(rv '{"id":1,"ok":true,"rev":@0}')"
	assert_line --index 1 "$(rv '{"id":2,"ok":true,"rev":@0}')"
}

# bats test_tags=no-valgrind
@test "--max-connections: one more is refused politely, the others go on" {
	[ -z "${METAD_VALGRIND:-}" ] || skip "timing: too slow under valgrind"
	metad_stop
	metad_start --max-connections 2
	local pids=() i
	for i in 1 2; do
		raw_held held '{"op":"ping"}' > "$TESTDIR/held.$i" &
		pids+=($!)
	done
	# Both are in once both were answered.
	wait_for test -s "$TESTDIR/held.1" -a -s "$TESTDIR/held.2"
	run timeout 5 socat -t 2 -u "UNIX-CONNECT:$SOCK" -
	assert_output --partial '"code":"unavailable"'
	assert_output --partial 'the limit is 2'
	release held
	wait "${pids[@]}"
	run cat "$TESTDIR/held.1" "$TESTDIR/held.2"
	assert_line --index 0 "$(rv '{"ok":true,"rev":@0}')"
	assert_line --index 1 "$(rv '{"ok":true,"rev":@0}')"
	# Once they are gone there is room again.
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@0}')"
}

@test "watches per connection are limited to 1024" {
	run sh -c "for i in \$(seq 1 1025); do echo '{\"op\":\"watch\",\"prefix\":\"x\"}'; done |
	    socat -t 5 - 'UNIX-CONNECT:$SOCK' | tail -2"
	assert_line --index 0 "$(rv '{"ok":true,"watch":1024,"rev":@0}')"
	assert_line --index 1 --partial '"code":"bad_request"'
	assert_line --index 1 --partial 'the limit is 1024'
}

@test "a txn of more than 128 operations is refused naming the limit" {
	local ops
	ops=$(for i in $(seq 1 129); do printf '{"op":"get","key":"k%d"},' "$i"; done)
	run req "{\"op\":\"txn\",\"then\":[${ops%,}]}"
	assert_output --partial '"code":"bad_request"'
	assert_output --partial '128'
}

# bats test_tags=no-valgrind
@test "out of descriptors (EMFILE): accepting pauses instead of spinning, then resumes" {
	command -v prlimit >/dev/null || skip "needs prlimit"
	[ -z "${METAD_VALGRIND:-}" ] || skip "valgrind keeps descriptors of its own"
	prlimit --pid "$METAD_PID" --nofile=24:
	local pids=() i
	for i in $(seq 1 30); do
		raw_held c "$(printf '{"op":"ping","id":%d}' "$i")" \
		    > "$TESTDIR/c.$i" 2>/dev/null &
		pids+=($!)
	done
	# Out of descriptors with clients still waiting, metad says it pauses.
	wait_for grep -q 'accept: pausing' "$TESTDIR/metad.log"
	cpu() { awk '{print $14 + $15}' "/proc/$METAD_PID/stat"; }
	local before after
	before=$(cpu)
	sleep 1		# the second over which metad's CPU time is measured
	after=$(cpu)
	# Spinning on accept would burn ~100 ticks in that second.
	[ $((after - before)) -lt 30 ]
	# The clients let go; the ones metad could not accept come in.
	release c
	wait "${pids[@]}"
	# Every client was answered in the end, those over the limit late.
	run sh -c "cat '$TESTDIR'/c.* | grep -c '\"ok\":true'"
	assert_output 30
	prlimit --pid "$METAD_PID" --nofile=1024:
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@0}')"
}

@test "--max-answer-bytes: a list or history whose answer would pass it is answer_too_large, saying how to page, before it is built" {
	metad_stop
	metad_start --max-answer-bytes 8k
	local v i
	v=$(printf 'x%.0s' $(seq 1 1000))
	for i in 1 2 3 4 5 6 7 8 9 10; do
		put_n "big/$i-" 1 "$v"
	done
	run req '{"op":"list","prefix":"big/"}'
	assert_output --regexp '^\{"ok":false,"error":\{"code":"answer_too_large","message":"the answer would be [0-9]+ bytes, past --max-answer-bytes \(8192\): ask for fewer keys'
	# What fits is answered: fewer keys, or keys only.
	run req '{"op":"list","prefix":"big/","limit":3}'
	assert_output --partial '"more":true'
	run req '{"op":"list","prefix":"big/","keys_only":true}'
	assert_output --partial '"more":false'
	# A value of control bytes is six times larger escaped: counted so.
	put_n ctl 1 "$(printf '\\u0001%.0s' $(seq 1 1500))"
	run req '{"op":"list","prefix":"ctl"}'
	assert_output --partial '"code":"answer_too_large"'
	run req '{"op":"get","key":"ctl1"}'
	assert_output --partial '"ok":true'
	# A key's history: the same.
	for i in 1 2 3 4 5 6 7 8 9; do
		put_n h 1 "$v"
	done
	run req '{"op":"history","key":"h1"}'
	assert_output --partial '"code":"answer_too_large","message":"the answer would be'
	assert_output --partial 'ask for fewer events'
	run req '{"op":"history","key":"h1","limit":2}'
	assert_output --partial '"ok":true'
}

# metad-protocol(7): an id is echoed as it was written, not through a
# double: an integer above 2^53 (a 64-bit counter) comes back unchanged; a
# fraction or an exponent is no integer: bad_request, without an id.
@test "a numeric id is echoed as sent, beyond 2^53 too; a fraction is bad_request" {
	run raw <<'LINES'
{"id":9007199254740993,"op":"ping"}
{"op":"ping","id":18446744073709551615}
{"id":0.1,"op":"ping"}
{"x":{"id":1},"id" : -15 ,"op":"ping"}
{"id":"9007199254740993","op":"ping"}
{"id":-1.5E+3,"op":"ping"}
LINES
	assert_line --index 0 --regexp '^\{"id":9007199254740993,"ok":true,"rev":[0-9]+\}$'
	assert_line --index 1 --regexp '^\{"id":18446744073709551615,"ok":true,"rev":[0-9]+\}$'
	assert_line --index 2 --regexp '^\{"ok":false,"error":\{"code":"bad_request","message":"field \\"id\\" must be a string or an integer'
	assert_line --index 3 --regexp '^\{"id":-15,"ok":false,"error":\{"code":"bad_request","message":"unknown field \\"x\\" for op \\"ping\\""\}\}$'
	assert_line --index 4 --regexp '^\{"id":"9007199254740993","ok":true,"rev":[0-9]+\}$'
	assert_line --index 5 --regexp '^\{"ok":false,"error":\{"code":"bad_request"'
}

# metad-protocol(7), FRAMING: a line ends with LF, a CR before it is
# ignored; so a request of exactly --max-request-bytes fits with CRLF too,
# and one byte more is request_too_large either way.
@test "a request of exactly --max-request-bytes fits whether it ends in LF or CRLF" {
	metad_stop
	metad_start --max-request-bytes 1024
	local v line long
	v=$(head -c 991 /dev/zero | tr '\0' x)
	line="{\"op\":\"put\",\"key\":\"k\",\"value\":\"$v\"}"
	long="{\"op\":\"put\",\"key\":\"k\",\"value\":\"x$v\"}"
	[ "${#line}" -eq 1024 ] && [ "${#long}" -eq 1025 ]
	run raw < <(printf '%s\n%s\r\n%s\r\n{"op":"ping"}\n' "$line" "$line" "$long")
	assert_line --index 0 --partial '"ok":true,"kv":{"key":"k","version":1'
	assert_line --index 1 --partial '"ok":true,"kv":{"key":"k","version":2'
	assert_line --index 2 --partial '"code":"request_too_large"'
	assert_line --index 3 "$(rv '{"ok":true,"rev":@2}')"
}
