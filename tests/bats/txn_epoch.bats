#!/usr/bin/env bats
# Transactions, epochs and fences (metad-protocol(7): TRANSACTIONS, EPOCHS,
# FENCES), spoken over the raw socket.

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# Send one request line on a connection of its own, in the background,
# writing the response to file $2; the pid is appended to BG_PIDS.
req_bg() {
	printf '%s\n' "$1" | socat -t 5 - "UNIX-CONNECT:$SOCK" > "$2" &
	BG_PIDS+=("$!")
}

bg_wait() {
	local p
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	BG_PIDS=()
}

@test "txn: compares that hold run then, a failed one runs else" {
	req '{"op":"put","key":"a","value":"1"}' >/dev/null
	run req '{"op":"txn","if":[{"key":"a","version":1},{"key":"b","version":0}],"then":[{"op":"put","key":"b","value":"x"}],"else":[{"op":"get","key":"a"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"b","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0}],"rev":@2}')"
	run req '{"op":"txn","if":[{"key":"a","version":1},{"key":"b","version":0}],"then":[{"op":"put","key":"b","value":"y"}],"else":[{"op":"get","key":"a"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":false,"results":[{"op":"get","kv":{"key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1}}],"rev":@2}')"
	run req '{"op":"get","key":"b"}'
	assert_output --partial '"value":"x"'
}

@test "txn: if, then and else are optional" {
	run req '{"op":"txn"}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[],"rev":@0}')"
	run req '{"op":"txn","if":[{"key":"k","version":3}],"then":[{"op":"put","key":"k","value":"v"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":false,"results":[],"rev":@0}')"
}

# Run a txn whose then/else say which branch ran; print "then" or "else".
branch() {
	req "{\"op\":\"txn\",\"if\":[$1],\"then\":[{\"op\":\"get\",\"key\":\"then\"}],\"else\":[{\"op\":\"get\",\"key\":\"else\"}]}" |
	    grep -o '"succeeded":[a-z]*' | sed 's/"succeeded":true/then/; s/"succeeded":false/else/'
}

@test "txn: every compare kind, absent keys and the result operators" {
	req '{"op":"put","key":"k","value":"abc"}' >/dev/null
	req '{"op":"put","key":"k","value":"abd"}' >/dev/null
	req '{"op":"put","key":"bin","value_b64":"AAH/"}' >/dev/null
	# k: version 2, create_rev @1, mod_rev @2; bin: mod_rev @3.
	run branch '{"key":"nope","version":0}'
	assert_output then
	run branch '{"key":"k","version":0}'
	assert_output else
	run branch '{"key":"k","version":2}'
	assert_output then
	run branch '{"key":"k","version":1}'
	assert_output else
	run branch "$(rv '{"key":"k","mod_rev":@2}')"
	assert_output then
	run branch "$(rv '{"key":"k","mod_rev":@1}')"
	assert_output else
	run branch '{"key":"nope","mod_rev":0}'
	assert_output then
	run branch "$(rv '{"key":"k","create_rev":@1}')"
	assert_output then
	run branch '{"key":"k","value":"abd"}'
	assert_output then
	run branch '{"key":"k","value":"abc"}'
	assert_output else
	run branch '{"key":"k","value_b64":"YWJk"}'
	assert_output then
	run branch '{"key":"bin","value_b64":"AAH/"}'
	assert_output then
	run branch '{"key":"bin","value_b64":"AAH+"}'
	assert_output else
	run branch '{"key":"nope","value":""}'
	assert_output else
	run branch '{"key":"k","version":2,"result":"!="}'
	assert_output else
	run branch '{"key":"k","version":3,"result":"<"}'
	assert_output then
	run branch "$(rv '{"key":"k","mod_rev":@1,"result":">"}')"
	assert_output then
	run branch '{"key":"k","value":"abc","result":">"}'
	assert_output then
	run branch '{"key":"k","value":"abda","result":"<"}'
	assert_output then
	run branch '{"key":"nope","value":"x","result":"!="}'
	assert_output else
	# All must hold.
	run branch "$(rv '{"key":"k","version":2},{"key":"bin","mod_rev":@3}')"
	assert_output then
	run branch "$(rv '{"key":"k","version":2},{"key":"bin","mod_rev":@2}')"
	assert_output else
}

@test "txn: all writes share one rev, and rev advances by exactly one" {
	req '{"op":"put","key":"old","value":"1"}' >/dev/null
	req '{"op":"put","key":"b","value":"1"}' >/dev/null
	run req '{"op":"txn","then":[{"op":"put","key":"a","value":"1"},{"op":"delete","key":"old"},{"op":"put","key":"b","value":"2"},{"op":"put","key":"c","value":"3"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"a","version":1,"create_rev":@3,"mod_rev":@3},"prev_version":0},{"op":"delete","deleted":true},{"op":"put","kv":{"key":"b","version":2,"create_rev":@2,"mod_rev":@3},"prev_version":1},{"op":"put","kv":{"key":"c","version":1,"create_rev":@3,"mod_rev":@3},"prev_version":0}],"rev":@3}')"
	run req '{"op":"list"}'
	assert_output --regexp "$(rv '"key":"a","value":"1","version":1,"create_rev":@3,"mod_rev":@3\}')"
	assert_output --regexp "$(rv '"key":"b","value":"2","version":2,"create_rev":@2,"mod_rev":@3\}')"
	assert_output --regexp "$(rv '"key":"c","value":"3","version":1,"create_rev":@3,"mod_rev":@3\}')"
	refute_output --partial '"key":"old"'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@3}')"
}

@test "txn: only gets or only failed deletes do not advance rev" {
	req '{"op":"put","key":"a","value":"1"}' >/dev/null
	run req '{"op":"txn","then":[{"op":"get","key":"a"},{"op":"get","key":"zz"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"get","kv":{"key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1}},{"op":"get","kv":null}],"rev":@1}')"
	run req '{"op":"txn","then":[{"op":"delete","key":"x"},{"op":"delete","key":"y"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"delete","deleted":false},{"op":"delete","deleted":false}],"rev":@1}')"
	run req '{"op":"put","key":"n","value":"1"}'
	assert_output --partial "$(rv '"rev":@2}')"
}

@test "txn: gets see the txn's earlier writes" {
	req '{"op":"put","key":"a","value":"old"}' >/dev/null
	req '{"op":"put","key":"d","value":"doomed"}' >/dev/null
	run req '{"op":"txn","then":[{"op":"get","key":"a"},{"op":"put","key":"a","value":"new"},{"op":"get","key":"a"},{"op":"get","key":"d"},{"op":"delete","key":"d"},{"op":"get","key":"d"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"get","kv":{"key":"a","value":"old","version":1,"create_rev":@1,"mod_rev":@1}},{"op":"put","kv":{"key":"a","version":2,"create_rev":@1,"mod_rev":@3},"prev_version":1},{"op":"get","kv":{"key":"a","value":"new","version":2,"create_rev":@1,"mod_rev":@3}},{"op":"get","kv":{"key":"d","value":"doomed","version":1,"create_rev":@2,"mod_rev":@2}},{"op":"delete","deleted":true},{"op":"get","kv":null}],"rev":@3}')"
}

@test "txn: its writes reach a watcher in op order, all at one rev" {
	req '{"op":"put","key":"z","value":"1"}' >/dev/null
	req '{"op":"txn","then":[{"op":"put","key":"c","value":"1"},{"op":"delete","key":"z"},{"op":"delete","key":"nope"},{"op":"put","key":"a","value":"2"}]}' >/dev/null
	run req "$(rv '{"op":"watch","prefix":"","from_rev":@2}')"
	assert_equal "${#lines[@]}" 4
	assert_equal "${lines[1]}" "$(rv '{"watch":1,"event":"put","key":"c","value":"1","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_equal "${lines[2]}" "$(rv '{"watch":1,"event":"delete","key":"z","mod_rev":@2}')"
	assert_equal "${lines[3]}" "$(rv '{"watch":1,"event":"put","key":"a","value":"2","version":1,"create_rev":@2,"mod_rev":@2}')"
}

@test "txn: compares see writes committed earlier in the same batch" {
	run raw < <(rv '{"op":"put","key":"a","value":"1","id":1}
{"op":"txn","if":[{"key":"a","mod_rev":@1}],"then":[{"op":"put","key":"a","value":"2"}],"id":2}
{"op":"txn","if":[{"key":"a","mod_rev":@1}],"then":[{"op":"put","key":"a","value":"3"}],"id":3}')
	assert_equal "${lines[1]}" "$(rv '{"id":2,"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"a","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1}],"rev":@2}')"
	assert_equal "${lines[2]}" "$(rv '{"id":3,"ok":true,"succeeded":false,"results":[],"rev":@2}')"
}

# A txn with n puts in then and m in else.
big_txn() {
	local i ops
	printf '{"op":"txn","if":[{"key":"x","version":0}],"then":['
	ops=
	for i in $(seq 1 "$1"); do
		ops="$ops{\"op\":\"put\",\"key\":\"t$i\",\"value\":\"v\"},"
	done
	printf '%s' "${ops%,}"
	printf '],"else":['
	ops=
	for i in $(seq 1 "$2"); do
		ops="$ops{\"op\":\"put\",\"key\":\"e$i\",\"value\":\"v\"},"
	done
	printf '%s' "${ops%,}"
	printf ']}\n'
}

@test "txn: 128 ops in then and else together, 129 is bad_request" {
	run sh -c "$(declare -f big_txn); big_txn 64 65 | socat -t 2 - UNIX-CONNECT:$SOCK"
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"txn has 129 ops in \"then\" and \"else\", the limit is 128"}}'
	run sh -c "$(declare -f big_txn); big_txn 64 64 | socat -t 2 - UNIX-CONNECT:$SOCK"
	assert_output --partial '"ok":true,"succeeded":true'
	assert_output --partial "$(rv '"rev":@1}')"
	run req '{"op":"status"}'
	assert_output --partial '"keys":64,'
}

@test "txn: more than 128 compares is bad_request" {
	local i cmps=
	for i in $(seq 1 129); do
		cmps="$cmps{\"key\":\"c$i\",\"version\":0},"
	done
	run req "{\"op\":\"txn\",\"if\":[${cmps%,}]}"
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'txn has 129 compares, the limit is 128'
}

@test "txn: each malformed part is bad_request naming its place" {
	run raw <<'REQS'
{"op":"txn","if":{"key":"a"}}
{"op":"txn","then":"put"}
{"op":"txn","if":[7]}
{"op":"txn","if":[{"version":1}]}
{"op":"txn","if":[{"key":"a"}]}
{"op":"txn","if":[{"key":"a","version":1,"mod_rev":2}]}
{"op":"txn","if":[{"key":"a","version":-1}]}
{"op":"txn","if":[{"key":"a","version":1},{"key":"a","value":"v","result":"~"}]}
{"op":"txn","if":[{"key":"a","value_b64":"!!"}]}
{"op":"txn","then":[{"op":"get","key":"a"},{"op":"put","key":"a"}]}
{"op":"txn","then":[{"op":"get","key":"a"},{"op":"get","key":"b"},{"op":"get","key":"c"},{"op":"put","value":"v"}]}
{"op":"txn","else":[{"op":"list","key":"a"}]}
{"op":"txn","else":[{"key":"a"}]}
{"op":"txn","else":[{"op":"get","key":""}]}
{"op":"txn","else":["get"]}
{"op":"txn","then":[{"op":"put","key":"a","value":"v","if_version":1}]}
{"op":"txn","fence":{"key":"e"}}
{"op":"ping","id":1}
REQS
	assert_equal "${#lines[@]}" 18
	local i
	for i in $(seq 0 16); do
		assert_regex "${lines[$i]}" '^\{"ok":false,"error":\{"code":"bad_request","message":"[^"]+'
	done
	assert_regex "${lines[0]}" 'field \\"if\\" must be a list'
	assert_regex "${lines[1]}" 'field \\"then\\" must be a list'
	assert_regex "${lines[2]}" '"if\[0\]: a compare must be an object'
	assert_regex "${lines[3]}" '"if\[0\]: missing field \\"key\\""'
	assert_regex "${lines[4]}" '"if\[0\]: give exactly one of'
	assert_regex "${lines[5]}" '"if\[0\]: give exactly one of'
	assert_regex "${lines[6]}" '"if\[0\]: field \\"version\\" must be an integer'
	assert_regex "${lines[7]}" '"if\[1\]: field \\"result\\" must be'
	assert_regex "${lines[8]}" '"if\[0\]: field \\"value_b64\\" is not valid base64'
	assert_regex "${lines[9]}" '"then\[1\]: missing field \\"value\\""'
	assert_regex "${lines[10]}" '"then\[3\]: missing field \\"key\\""'
	assert_regex "${lines[11]}" '"else\[0\]: field \\"op\\" must be \\"put\\", \\"delete\\" or \\"get\\""'
	assert_regex "${lines[12]}" '"else\[0\]: missing field \\"op\\""'
	assert_regex "${lines[13]}" '"else\[0\]: field \\"key\\": a key may not be empty'
	assert_regex "${lines[14]}" '"else\[0\]: an op must be an object'
	assert_regex "${lines[15]}" '"then\[0\]: field \\"if_version\\" is not allowed in a txn op'
	assert_regex "${lines[16]}" 'missing field \\"epoch\\" \(in \\"fence\\"\)'
	assert_equal "${lines[17]}" "$(rv '{"id":1,"ok":true,"rev":@0}')"
}

@test "txn: a branch may write a key once; gets and the other branch may repeat it" {
	run req '{"op":"txn","then":[{"op":"put","key":"a","value":"1"},{"op":"get","key":"b"},{"op":"delete","key":"a"}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[2]: duplicate key: then[0] already writes it (a branch writes a key at most once)"}}'
	run req '{"op":"txn","else":[{"op":"delete","key":"a"},{"op":"delete","key":"a"}]}'
	assert_output --partial '"message":"else[1]: duplicate key: else[0]'
	run req '{"op":"txn","then":[{"op":"get","key":"a"},{"op":"put","key":"a","value":"1"},{"op":"get","key":"a"}],"else":[{"op":"put","key":"a","value":"2"}]}'
	assert_output --partial '"ok":true,"succeeded":true'
}

@test "txn: value_too_large in the 2nd op rejects the whole txn" {
	metad_stop
	metad_start --max-value-bytes 10
	req '{"op":"put","key":"a","value":"orig"}' >/dev/null
	run req '{"op":"txn","then":[{"op":"put","key":"a","value":"new"},{"op":"put","key":"b","value":"12345678901"},{"op":"put","key":"c","value":"c"}]}'
	assert_output --partial '"code":"value_too_large"'
	assert_output --partial 'then[1]: value is 11 bytes, the limit is 10'
	run req '{"op":"list"}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a","value":"orig","version":1,"create_rev":@1,"mod_rev":@1}],"more":false,"rev":@1}')"
}

@test "epoch_bump: absent key gives epoch 1, again gives 2 with the owner" {
	run req '{"op":"epoch_get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":null,"rev":@0}')"
	run req '{"op":"epoch_bump","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":1,"owner":"","version":1,"mod_rev":@1},"rev":@1}')"
	run req '{"op":"epoch_bump","key":"lead","owner":"node-2"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":2,"owner":"node-2","version":2,"mod_rev":@2},"rev":@2}')"
	run req '{"op":"epoch_get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":2,"owner":"node-2","version":2,"mod_rev":@2},"rev":@2}')"
	# An ordinary key holding the exact JSON text.
	run req '{"op":"get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"lead","value":"{\"epoch\":2,\"owner\":\"node-2\"}","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "epoch_bump: if_epoch bumps only from that epoch" {
	run req '{"op":"epoch_bump","key":"e","if_epoch":0,"owner":"a"}'
	assert_output --partial '"epoch":{"key":"e","epoch":1,"owner":"a"'
	run req '{"op":"epoch_bump","key":"e","if_epoch":0,"owner":"b"}'
	assert_output "$(rv '{"ok":false,"error":{"code":"failed_precondition","message":"epoch is 1, not 0","current":{"key":"e","epoch":1,"owner":"a","version":1,"mod_rev":@1}}}')"
	run req '{"op":"epoch_bump","key":"nope","if_epoch":3}'
	assert_output --partial '"code":"failed_precondition"'
	assert_output --partial '"current":null'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@1}')"
}

@test "epoch_bump: two racing claims with the same if_epoch, exactly one wins" {
	req '{"op":"epoch_bump","key":"e","owner":"first"}' >/dev/null
	BG_PIDS=()
	req_bg '{"op":"epoch_bump","key":"e","if_epoch":1,"owner":"x"}' "$TESTDIR/x"
	req_bg '{"op":"epoch_bump","key":"e","if_epoch":1,"owner":"y"}' "$TESTDIR/y"
	bg_wait
	run cat "$TESTDIR/x" "$TESTDIR/y"
	assert_equal "${#lines[@]}" 2
	run grep -c '"ok":true,"epoch":{"key":"e","epoch":2,' "$TESTDIR/x" "$TESTDIR/y"
	assert_output --regexp '(x:1.*y:0|x:0.*y:1)'
	run grep -h '"code":"failed_precondition"' "$TESTDIR/x" "$TESTDIR/y"
	assert_output --regexp "$(rv '"current":\{"key":"e","epoch":2,"owner":"(x|y)","version":2,"mod_rev":@2\}')"
	run req '{"op":"epoch_get","key":"e"}'
	assert_output --regexp '"epoch":2,"owner":"(x|y)"'
}

@test "epoch_bump: 20 concurrent bumps hand out epochs 1..20 once each" {
	local i
	BG_PIDS=()
	for i in $(seq 1 20); do
		req_bg "{\"op\":\"epoch_bump\",\"key\":\"e\",\"owner\":\"o$i\"}" "$TESTDIR/b$i"
	done
	bg_wait
	run sh -c "cat '$TESTDIR'/b* | grep -o '\"epoch\":[0-9]*,' | tr -dc '0-9\n' | sort -n | tr '\n' ' '"
	assert_output "$(seq 1 20 | tr '\n' ' ')"
	run req '{"op":"epoch_get","key":"e"}'
	assert_output --partial '"epoch":20,'
	assert_output --partial "$(rv '"version":20,"mod_rev":@20}')"
}

@test "epochs: a key that is not an epoch document is bad_request and stays" {
	req '{"op":"put","key":"plain","value":"hello"}' >/dev/null
	req '{"op":"put","key":"neg","value":"{\"epoch\":-1}"}' >/dev/null
	run req '{"op":"epoch_get","key":"plain"}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'does not hold an epoch document'
	run req '{"op":"epoch_bump","key":"plain"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"epoch_bump","key":"neg"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","key":"plain"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"plain","value":"hello","version":1,"create_rev":@1,"mod_rev":@1},"rev":@2}')"
}

@test "epoch_bump: argument checks" {
	run raw <<REQS
{"op":"epoch_bump"}
{"op":"epoch_bump","key":"e","owner":5}
{"op":"epoch_bump","key":"e","owner":"$(head -c 1025 /dev/zero | tr '\0' o)"}
{"op":"epoch_bump","key":"e","if_epoch":1.5}
{"op":"epoch_bump","key":"e","fence":{"key":"f","epoch":0}}
{"op":"epoch_get","key":""}
{"op":"epoch_bump","key":"e","owner":"$(head -c 1024 /dev/zero | tr '\0' o)","id":1}
REQS
	local i
	for i in 0 1 2 3 4 5; do
		assert_regex "${lines[$i]}" '"code":"bad_request"'
	done
	assert_regex "${lines[2]}" 'field \\"owner\\" is 1025 bytes, the limit is 1024'
	assert_regex "${lines[6]}" '^\{"id":1,"ok":true,"epoch":\{"key":"e","epoch":1,'
}

@test "fence on put and delete: the matching epoch writes, a stale one is fenced" {
	req '{"op":"epoch_bump","key":"lead","owner":"n1"}' >/dev/null
	req '{"op":"epoch_bump","key":"lead","owner":"n2"}' >/dev/null
	run req '{"op":"put","key":"k","value":"ok","fence":{"key":"lead","epoch":2}}'
	assert_output --partial '"ok":true,"kv":{"key":"k","version":1'
	run req '{"op":"put","key":"k","value":"late","fence":{"key":"lead","epoch":1}}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 2, the write carried 1","current":{"key":"lead","epoch":2,"owner":"n2"}}}'
	run req '{"op":"delete","key":"k","fence":{"key":"lead","epoch":1}}'
	assert_output --partial '"code":"fenced"'
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"ok","version":1,"create_rev":@3,"mod_rev":@3},"rev":@3}')"
	run req '{"op":"delete","key":"k","fence":{"key":"lead","epoch":2}}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@4}')"
}

@test "fence on txn: checked before the compares, nothing written when stale" {
	req '{"op":"epoch_bump","key":"lead"}' >/dev/null
	req '{"op":"epoch_bump","key":"lead"}' >/dev/null
	run req '{"op":"txn","fence":{"key":"lead","epoch":1},"if":[{"key":"a","version":0}],"then":[{"op":"put","key":"a","value":"1"}],"else":[{"op":"put","key":"b","value":"1"}]}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 2, the write carried 1","current":{"key":"lead","epoch":2,"owner":""}}}'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@2}')"
	run req '{"op":"txn","fence":{"key":"lead","epoch":2},"if":[{"key":"a","version":0}],"then":[{"op":"put","key":"a","value":"1"}]}'
	assert_output --partial '"ok":true,"succeeded":true'
	assert_output --partial "$(rv '"rev":@3}')"
}

@test "fence: an absent fence key is epoch 0; a non-epoch one is bad_request" {
	run req '{"op":"put","key":"k","value":"v","fence":{"key":"nobody","epoch":0}}'
	assert_output --partial '"ok":true'
	run req '{"op":"put","key":"k","value":"w","fence":{"key":"nobody","epoch":1}}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 0, the write carried 1","current":{"key":"nobody","epoch":0,"owner":""}}}'
	run req '{"op":"txn","fence":{"key":"k","epoch":0},"then":[{"op":"put","key":"x","value":"1"}]}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'the fence key does not hold an epoch document'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@1}')"
}
