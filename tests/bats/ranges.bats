#!/usr/bin/env bats
# Range deletes, multi-key gets and list's range_end, count_only and
# reverse (metad-protocol(7): delete, get, list), over the raw socket, on
# every backend.

load helpers

setup() {
	metad_start
}

teardown() {
	stop_bg
	leases_clear
	metad_cleanup
}

# @1 a/1, @2 a/2, @3 a/3, @4 b, @5 ab
fill() {
	printf '%s\n' '{"op":"put","key":"a/1","value":"1"}' \
	    '{"op":"put","key":"a/2","value":"2"}' \
	    '{"op":"put","key":"a/3","value":"3"}' \
	    '{"op":"put","key":"b","value":"b"}' \
	    '{"op":"put","key":"ab","value":"ab"}' | raw >/dev/null
}

@test "delete with prefix: every key at one rev, a count, one event a key" {
	fill
	run req '{"op":"delete","prefix":"a/"}'
	assert_output "$(rv '{"ok":true,"deleted":3,"rev":@6}')"
	run req '{"op":"list","keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"ab","version":1,"create_rev":@5,"mod_rev":@5},{"key":"b","version":1,"create_rev":@4,"mod_rev":@4}],"more":false,"rev":@6}')"
	run watch_lines 4 "$(rv '{"op":"watch","prefix":"a","from_rev":@6}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"delete","key":"a/1","mod_rev":@6}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"delete","key":"a/2","mod_rev":@6}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"delete","key":"a/3","mod_rev":@6}')"
	# Reads at a rev before and after it, and the keys' history.
	run req "$(rv '{"op":"list","prefix":"a/","rev":@5,"keys_only":true}')"
	assert_output --partial '"key":"a/3"'
	run req "$(rv '{"op":"list","prefix":"a/","rev":@6}')"
	assert_output "$(rv '{"ok":true,"kvs":[],"more":false,"rev":@6}')"
	run req '{"op":"history","key":"a/2"}'
	assert_output --partial "$(rv '{"event":"delete","key":"a/2","mod_rev":@6}')"
	# A key made again starts at version 1.
	run req '{"op":"put","key":"a/2","value":"x"}'
	assert_output --partial "$(rv '"version":1,"create_rev":@7')"
}

@test "delete of a range that holds nothing answers 0 and moves no rev" {
	fill
	run req '{"op":"delete","prefix":"zz"}'
	assert_output "$(rv '{"ok":true,"deleted":0,"rev":@5}')"
	run req '{"op":"delete","key":"c","range_end":"d"}'
	assert_output "$(rv '{"ok":true,"deleted":0,"rev":@5}')"
	# An end at or below the key: an empty range.
	run req '{"op":"delete","key":"b","range_end":"a"}'
	assert_output "$(rv '{"ok":true,"deleted":0,"rev":@5}')"
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@5}')"
}

@test "delete with key and range_end: the keys in [key, range_end)" {
	fill
	run req '{"op":"delete","key":"a/2","range_end":"b"}'
	assert_output "$(rv '{"ok":true,"deleted":3,"rev":@6}')"
	run req '{"op":"list","keys_only":true}'
	assert_output --partial '"kvs":[{"key":"a/1"'
	assert_output --partial '{"key":"b"'
	refute_output --partial '"a/2"'
	refute_output --partial '"a/3"'
	refute_output --partial '"ab"'
}

@test "delete with prefix in a batch with other writes: its own rev, in order" {
	fill
	run raw <<-'EOF2'
	{"op":"put","key":"a/4","value":"4"}
	{"op":"delete","prefix":"a/"}
	{"op":"put","key":"a/5","value":"5"}
	EOF2
	assert_line --index 0 --partial "$(rv '"rev":@6')"
	assert_line --index 1 "$(rv '{"ok":true,"deleted":4,"rev":@7}')"
	assert_line --index 2 --partial "$(rv '"rev":@8')"
	run req '{"op":"list","prefix":"a/","keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/5","version":1,"create_rev":@8,"mod_rev":@8}],"more":false,"rev":@8}')"
}

@test "delete with prefix takes a fence and refuses per-key preconditions" {
	fill
	run req '{"op":"delete","prefix":"a/","if_version":1}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","prefix":"a/","if_absent":true}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","key":"a/1","range_end":"b","if_mod_rev":1}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","prefix":"a/","key":"a/1"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","prefix":"a/","range_end":"b"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","range_end":"b"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"delete","prefix":7}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"epoch_bump","key":"e"}'
	assert_output --partial '"epoch":1'
	run req '{"op":"delete","prefix":"a/","fence":{"key":"e","epoch":0}}'
	assert_output --partial '"code":"fenced"'
	run req '{"op":"list","prefix":"a/","keys_only":true}'
	assert_output --partial '"a/3"'
	run req '{"op":"delete","prefix":"a/","fence":{"key":"e","epoch":1}}'
	assert_output --partial '"ok":true,"deleted":3'
}

@test "delete with prefix detaches the keys from their lease" {
	run req '{"op":"lease_grant","ttl_ms":60000}'
	L=$(printf '%s' "$output" | sed -n 's/.*"lease":\([0-9]*\).*/\1/p')
	printf '%s\n' "{\"op\":\"put\",\"key\":\"l/1\",\"value\":\"1\",\"lease\":$L}" \
	    "{\"op\":\"put\",\"key\":\"l/2\",\"value\":\"2\",\"lease\":$L}" \
	    "{\"op\":\"put\",\"key\":\"m\",\"value\":\"3\",\"lease\":$L}" | raw >/dev/null
	run req '{"op":"delete","prefix":"l/"}'
	assert_output --partial '"deleted":2'
	run req "{\"op\":\"lease_info\",\"lease\":$L}"
	assert_output --partial '"keys":["m"]'
	# Its revoke now deletes only what is left.
	run req "{\"op\":\"lease_revoke\",\"lease\":$L}"
	assert_output --partial '"ok":true'
	run req '{"op":"list","keys_only":true}'
	assert_output --partial '"kvs":[]'
}

@test "delete with an empty prefix deletes every key" {
	fill
	run req '{"op":"delete","prefix":""}'
	assert_output "$(rv '{"ok":true,"deleted":5,"rev":@6}')"
	run req '{"op":"list"}'
	assert_output --partial '"kvs":[]'
}

@test "get with keys: the present ones in key order at one rev" {
	fill
	run req '{"op":"get","keys":["b","zz","a/1","b"]}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/1","value":"1","version":1,"create_rev":@1,"mod_rev":@1},{"key":"b","value":"b","version":1,"create_rev":@4,"mod_rev":@4}],"rev":@5}')"
	run req '{"op":"get","keys":["nope"]}'
	assert_output "$(rv '{"ok":true,"kvs":[],"rev":@5}')"
	run req '{"op":"get","keys":[]}'
	assert_output "$(rv '{"ok":true,"kvs":[],"rev":@5}')"
	run req '{"op":"get","keys":["a/2","b"],"consistency":"serializable"}'
	assert_output --partial '"kvs":[{"key":"a/2"'
	# With rev: the keys as they were then.
	run req "$(rv '{"op":"get","keys":["a/3","b","a/1"],"rev":@3}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/1","value":"1","version":1,"create_rev":@1,"mod_rev":@1},{"key":"a/3","value":"3","version":1,"create_rev":@3,"mod_rev":@3}],"rev":@5}')"
}

@test "get with keys: at most 128, strings, not with key" {
	keys=$(seq 1 129 | sed 's/.*/"k&"/' | paste -sd, -)
	run req "{\"op\":\"get\",\"keys\":[$keys]}"
	assert_output --partial '"code":"bad_request"'
	assert_output --partial '128'
	keys=$(seq 1 128 | sed 's/.*/"k&"/' | paste -sd, -)
	run req "{\"op\":\"get\",\"keys\":[$keys]}"
	assert_output --partial '"ok":true,"kvs":[]'
	run req '{"op":"get","keys":[1]}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","keys":"a"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","keys":[""]}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","keys":["a"],"key":"a"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","keys":["a"],"rev":99999999}'
	assert_output --partial '"code":"bad_request"'
}
