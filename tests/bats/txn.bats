#!/usr/bin/env bats
# Transactions (metad-protocol(7), TRANSACTIONS): compares, then and else,
# over the raw socket and through metactl txn (its JSON and text forms).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# Run a txn whose then/else say which branch ran; print "then" or "else".
branch() {
	req "{\"op\":\"txn\",\"if\":[$1],\"then\":[{\"op\":\"get\",\"key\":\"then\"}],\"else\":[{\"op\":\"get\",\"key\":\"else\"}]}" |
	    grep -o '"succeeded":[a-z]*' | sed 's/"succeeded":true/then/; s/"succeeded":false/else/'
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

@test "txn JSON: success exits 0 and prints one line per result" {
	mctl put k v1
	run "$METACTL" txn <<-'EOF'
	{"if":[{"key":"k","version":1}],
	 "then":[{"op":"put","key":"k","value":"v2"},{"op":"get","key":"k"},
	         {"op":"delete","key":"gone"},{"op":"get","key":"nope"}],
	 "else":[{"op":"get","key":"k"}]}
	EOF
	assert_success
	assert_output "SUCCEEDED
put k v2
get k v2
del gone (not found)
get nope (not found)"
}

@test "txn JSON: a failed compare runs else and exits 1; op txn is accepted" {
	mctl put k v1
	run "$METACTL" txn <<-'EOF'
	{"op":"txn","if":[{"key":"k","value":"other"}],
	 "then":[{"op":"delete","key":"k"}],"else":[{"op":"get","key":"k"}]}
	EOF
	assert_failure 1
	assert_output "FAILED
get k v1"
	run "$METACTL" -o json txn <<<'{"if":[{"key":"k","version":9}]}'
	assert_failure 1
	assert_output "$(rv '{"ok":true,"succeeded":false,"results":[],"rev":@1}')"
}

@test "txn JSON: a delete that removed the key says so" {
	mctl put k v1
	run "$METACTL" txn <<<'{"then":[{"op":"delete","key":"k"}]}'
	assert_success
	assert_output "SUCCEEDED
del k deleted"
}

@test "txn: invalid input and a bad request are exit 5" {
	run "$METACTL" txn <<<'{"if":'
	assert_failure 5
	run "$METACTL" txn <<<'{"op":"put","key":"k","value":"v"}'
	assert_failure 5
	run "$METACTL" txn <<<'{"then":[{"op":"frob","key":"k"}]}'
	assert_failure 5
	assert_output --partial 'bad_request'
}

@test "txn text form: compares, then, else (etcdctl style)" {
	mctl put k v1
	mctl put owner "node a"
	run "$METACTL" txn <<-EOF
	# claim k if nobody changed it
	version("k") = 1
	value("owner") = "node a"
	mod("k") < $(rv @5)

	put k "two words"
	put bin b64:AAEC
	del gone
	get owner

	get k
	EOF
	assert_success
	assert_output "SUCCEEDED
put k v2
put bin v1
del gone (not found)
get owner \"node a\""
	run "$METACTL" get bin --raw
	assert_output "$(printf '\000\001\002')"
}

@test "txn text form: a failed compare runs the else section" {
	mctl put k v1
	run "$METACTL" txn <<-'EOF'
	version("k") != 1
	create_rev("k") > 0

	del k

	get k
	get "no such key"
	EOF
	assert_failure 1
	assert_output "FAILED
get k v1
get \"no such key\" (not found)"
}

@test "txn text form: no compares (leading blank line), missing else" {
	run "$METACTL" txn <<-'EOF'

	put a 1
	put b ""
	EOF
	assert_success
	assert_output "SUCCEEDED
put a v1
put b v1"
	run "$METACTL" get b
	assert_output ""
}

@test "txn text form: errors name the line and exit 5 (input)" {
	run "$METACTL" txn <<<'put k v'
	assert_failure 5
	assert_output --partial 'line 1: expected a compare'
	run "$METACTL" txn <<-'EOF'

	put k two words
	EOF
	assert_failure 5
	assert_output --partial 'line 2: unexpected text after the op'
	run "$METACTL" txn <<-'EOF'
	version("k") = x
	EOF
	assert_failure 5
	assert_output --partial 'expected an integer'
	run "$METACTL" txn <<-'EOF'
	version("k") = 1

	put k v

	get k

	get k
	EOF
	assert_failure 5
	assert_output --partial 'more than three sections'
	run "$METACTL" txn <<<'value("k") = "unterminated'
	assert_failure 5
	run "$METACTL" txn <<-'EOF'

	put k b64:not-base64
	EOF
	assert_failure 5
	assert_output --partial 'base64'
}

# metad-protocol(7), REQUESTS AND RESPONSES: a request naming a field its op
# does not know answers bad_request naming the field, a txn's compares and ops
# included.
@test "a txn compare or op naming an unknown field answers bad_request naming it" {
	run req '{"op":"txn","then":[{"op":"put","key":"k","value":"v","bogus":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"bogus\" for a txn put"}}'
	run req '{"op":"txn","else":[{"op":"delete","key":"k","value":"v"}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"else[0]: unknown field \"value\" for a txn delete"}}'
	run req '{"op":"txn","then":[{"op":"get","key":"k","rev":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"rev\" for a txn get"}}'
	run req '{"op":"txn","if":[{"key":"k","version":0,"vresion":1}],"then":[]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"if[0]: unknown field \"vresion\" for a compare"}}'
	# nothing was written
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@0}')"
	# the known fields still work
	run req '{"op":"txn","if":[{"key":"k","version":0,"result":"="}],"then":[{"op":"put","key":"k","value":"v"},{"op":"get","key":"k"}],"else":[{"op":"delete","key":"k"}]}'
	assert_output --partial '"succeeded":true'
}
