#!/usr/bin/env bats
# metactl epoch, txn and --fence (metactl(1): COMMANDS, TRANSACTIONS).

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

@test "epoch get of a key with no epoch exits 1" {
	run "$METACTL" epoch get leader
	assert_failure 1
	assert_output --partial 'leader: no epoch'
	run "$METACTL" -o json epoch get leader
	assert_failure 1
	assert_line --index 0 "$(rv '{"ok":true,"epoch":null,"rev":@0}')"
}

@test "epoch bump prints the new epoch alone; epoch get shows it and the owner" {
	run "$METACTL" epoch bump leader --owner node-a
	assert_success
	assert_output 1
	e=$("$METACTL" epoch bump leader --owner node-b)
	assert_equal "$e" 2
	run "$METACTL" epoch get leader
	assert_success
	assert_output 'epoch 2 owner node-b'
	run "$METACTL" -o json epoch get leader
	assert_output "$(rv '{"ok":true,"epoch":{"key":"leader","epoch":2,"owner":"node-b","version":2,"mod_rev":@2},"rev":@2}')"
	mctl epoch bump leader >/dev/null
	run "$METACTL" epoch get leader
	assert_output 'epoch 3 owner ""'
}

@test "epoch bump --if-epoch: the winner bumps, the loser exits 3 with the current epoch" {
	mctl epoch bump leader --owner node-a >/dev/null
	run "$METACTL" epoch bump leader --owner node-b --if-epoch 1
	assert_success
	assert_output 2
	run "$METACTL" epoch bump leader --owner node-c --if-epoch 1
	assert_failure 3
	assert_output --partial 'failed_precondition'
	assert_output --partial 'current epoch 2'
	assert_output --partial 'owner node-b'
	run "$METACTL" epoch get leader
	assert_output 'epoch 2 owner node-b'
	run "$METACTL" epoch bump fresh --if-epoch 0
	assert_output 1
}

@test "epoch bump of a key that is not an epoch document exits 5" {
	mctl put plain hello
	run "$METACTL" epoch bump plain
	assert_failure 5
	assert_output --partial 'bad_request'
}

@test "--fence on put and del is refused with exit 3 after a bump" {
	e=$("$METACTL" epoch bump leader --owner a)
	run "$METACTL" put --fence "leader:$e" k v1
	assert_success
	assert_output 1
	mctl epoch bump leader --owner b >/dev/null
	run "$METACTL" put --fence "leader:$e" k v2
	assert_failure 3
	assert_output --partial 'fenced'
	run "$METACTL" del --fence "leader:$e" k
	assert_failure 3
	run "$METACTL" get k
	assert_output v1
	run "$METACTL" del --fence "leader:$((e + 1))" k
	assert_success
	assert_output 1
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

@test "txn --fence is refused with exit 3 after a bump, and applies before" {
	e=$("$METACTL" epoch bump leader --owner a)
	run "$METACTL" txn --fence "leader:$e" <<<'{"then":[{"op":"put","key":"k","value":"1"}]}'
	assert_success
	mctl epoch bump leader --owner b >/dev/null
	run "$METACTL" txn --fence "leader:$e" <<<'{"then":[{"op":"put","key":"k","value":"2"}]}'
	assert_failure 3
	assert_output --partial 'fenced'
	run "$METACTL" txn --fence "leader:$e" <<-'EOF'

	put k 3
	EOF
	assert_failure 3
	run "$METACTL" get k
	assert_output 1
	run "$METACTL" txn --fence "leader:$e" <<<'{"fence":{"key":"leader","epoch":1}}'
	assert_failure 2
}
