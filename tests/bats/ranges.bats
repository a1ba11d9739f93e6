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

@test "metactl get KEY...: KEY VALUE lines at one rev, missing keys named" {
	fill
	mctl put 'sp ace' 'v w' >/dev/null
	run mctl get b a/1 'sp ace'
	[ "$status" -eq 0 ]
	assert_line --index 0 'a/1 1'
	assert_line --index 1 'b b'
	assert_line --index 2 '"sp ace" "v w"'
	run mctl get b nope
	[ "$status" -eq 1 ]
	assert_output --partial 'b b'
	assert_output --partial 'metactl: nope: not found'
	run mctl -o json get a/2 b
	assert_output --partial '"kvs":[{"key":"a/2","value":"2"'
	run mctl get --rev "$(rv @2)" a/1 a/3
	[ "$status" -eq 1 ]
	assert_line --index 0 'a/1 1'
	run mctl get --raw a/1 b
	[ "$status" -eq 2 ]
}

@test "metactl get --prefix: every key under it with its value, paged" {
	put_n p/ 250
	run mctl get --prefix p/
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 250 ]
	assert_line --index 0 'p/1 1'
	assert_line --index 249 'p/99 99'
	run mctl get --prefix p/ --limit 3
	[ "${#lines[@]}" -ge 3 ]
	assert_line --index 2 'p/100 100'
	run mctl -o json get --prefix p/2 --limit 2
	assert_output --partial '"kvs":[{"key":"p/2","value":"2"'
	run mctl get --prefix nothing/
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run mctl get --prefix p/ p/1
	[ "$status" -eq 2 ]
	run mctl get
	[ "$status" -eq 2 ]
}

@test "metactl del --prefix: the count, at one rev" {
	fill
	run mctl del --prefix a/
	assert_output 3
	run mctl del --prefix a/
	assert_output 0
	run mctl -o json del --prefix b
	assert_output "$(rv '{"ok":true,"deleted":1,"rev":@7}')"
	run mctl ls
	assert_output 'ab'
	run mctl del --prefix a --if-version 1
	[ "$status" -eq 2 ]
	run mctl del --prefix a k
	[ "$status" -eq 2 ]
	run mctl del
	[ "$status" -eq 2 ]
}

@test "metactl put --ttl: a lease of its own, and none left when the put fails" {
	run mctl put t 1 --ttl 1h
	assert_output 1
	run mctl -o json get t
	L=$(printf '%s' "$output" | sed -n 's/.*"lease":\([0-9]*\).*/\1/p')
	[ -n "$L" ]
	run mctl lease info "$L"
	assert_output --partial 'ttl_ms 3600000'
	assert_output --partial 't'
	# A failed put revokes the lease it granted.
	n=$(mctl lease ls | wc -l)
	run mctl put t 2 --ttl 1h --if-absent
	[ "$status" -eq 3 ]
	[ "$(mctl lease ls | wc -l)" -eq "$n" ]
	run mctl put t 2 --ttl 1h --lease "$L"
	[ "$status" -eq 2 ]
	run mctl put t 2 --ttl 0
	[ "$status" -eq 2 ]
}

@test "metactl put --ttl: the key goes when the TTL passes" {
	run mctl put short 1 --ttl 1s
	assert_output 1
	wait_for -t 20 sh -c '! "$METACTL" get short >/dev/null 2>&1'
}

@test "metactl snapshot status: rev, keys, bytes and integrity, offline" {
	fill
	mctl del a/2 >/dev/null
	mctl snapshot save "$TESTDIR/s.db" >/dev/null
	run mctl -s "$TESTDIR/none.sock" snapshot status "$TESTDIR/s.db"
	[ "$status" -eq 0 ]
	assert_line --index 0 "$(rv 'rev: @6')"
	assert_line --index 1 'keys: 4'
	assert_line --index 2 "bytes: $(stat -c %s "$TESTDIR/s.db")"
	assert_line --index 3 'integrity: ok'
	run mctl -o json snapshot status "$TESTDIR/s.db"
	assert_output "$(rv '{"rev":@6,"keys":4,"bytes":')$(stat -c %s "$TESTDIR/s.db"),\"integrity\":\"ok\"}"
	# Not a metad snapshot, not SQLite, damaged, missing: exit 1.
	sqlite3 "$TESTDIR/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
	run mctl snapshot status "$TESTDIR/other.db"
	[ "$status" -eq 1 ]
	assert_output --partial 'no metad snapshot'
	printf 'hello\n' > "$TESTDIR/text"
	run mctl snapshot status "$TESTDIR/text"
	[ "$status" -eq 1 ]
	cp "$TESTDIR/s.db" "$TESTDIR/bad.db"
	size=$(stat -c %s "$TESTDIR/bad.db")
	dd if=/dev/urandom of="$TESTDIR/bad.db" bs=1 seek=$((size / 2)) \
	    count=2048 conv=notrunc 2>/dev/null
	run mctl snapshot status "$TESTDIR/bad.db"
	[ "$status" -eq 1 ]
	run mctl snapshot status "$TESTDIR/missing.db"
	[ "$status" -eq 1 ]
}

@test "list with key and range_end: the keys in [key, range_end)" {
	fill
	run req '{"op":"list","key":"a/2","range_end":"b","keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/2","version":1,"create_rev":@2,"mod_rev":@2},{"key":"a/3","version":1,"create_rev":@3,"mod_rev":@3},{"key":"ab","version":1,"create_rev":@5,"mod_rev":@5}],"more":false,"rev":@5}')"
	run req '{"op":"list","key":"a/2","range_end":"b","limit":1,"after":"a/2"}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/3","value":"3","version":1,"create_rev":@3,"mod_rev":@3}],"more":true,"rev":@5}')"
	run req "$(rv '{"op":"list","key":"a/1","range_end":"a/3","rev":@2,"keys_only":true}')"
	assert_output --partial '"kvs":[{"key":"a/1",'
	assert_output --partial '{"key":"a/2",'
	refute_output --partial '"a/3"'
	run req '{"op":"list","key":"b","range_end":"a"}'
	assert_output "$(rv '{"ok":true,"kvs":[],"more":false,"rev":@5}')"
	run req '{"op":"list","key":"a"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"list","range_end":"a"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"list","prefix":"a","key":"a","range_end":"b"}'
	assert_output --partial '"code":"bad_request"'
}

@test "list with reverse: the highest keys first, paged downward" {
	fill
	run req '{"op":"list","reverse":true,"limit":2,"keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"b","version":1,"create_rev":@4,"mod_rev":@4},{"key":"ab","version":1,"create_rev":@5,"mod_rev":@5}],"more":true,"rev":@5}')"
	run req '{"op":"list","reverse":true,"limit":2,"after":"ab","keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/3","version":1,"create_rev":@3,"mod_rev":@3},{"key":"a/2","version":1,"create_rev":@2,"mod_rev":@2}],"more":true,"rev":@5}')"
	run req '{"op":"list","reverse":true,"limit":2,"after":"a/2","keys_only":true}'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/1","version":1,"create_rev":@1,"mod_rev":@1}],"more":false,"rev":@5}')"
	run req '{"op":"list","prefix":"a/","reverse":true}'
	assert_output --partial '"kvs":[{"key":"a/3","value":"3"'
	run req '{"op":"list","key":"a/1","range_end":"a/3","reverse":true,"keys_only":true}'
	assert_output --partial '"kvs":[{"key":"a/2",'
	refute_output --partial '"a/3"'
	# At a rev: as the keys were then.
	run req "$(rv '{"op":"list","reverse":true,"limit":1,"rev":@3,"keys_only":true}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a/3","version":1,"create_rev":@3,"mod_rev":@3}],"more":true,"rev":@5}')"
	run req "$(rv '{"op":"list","reverse":true,"after":"a/3","rev":@3,"keys_only":true}')"
	assert_output --partial '"kvs":[{"key":"a/2",'
	assert_output --partial '"more":false'
}

@test "list with count_only: the count at one rev, no kvs" {
	fill
	run req '{"op":"list","count_only":true}'
	assert_output "$(rv '{"ok":true,"count":5,"rev":@5}')"
	run req '{"op":"list","prefix":"a/","count_only":true,"limit":1}'
	assert_output "$(rv '{"ok":true,"count":3,"rev":@5}')"
	run req '{"op":"list","key":"a/2","range_end":"b","count_only":true}'
	assert_output "$(rv '{"ok":true,"count":3,"rev":@5}')"
	run req "$(rv '{"op":"list","count_only":true,"rev":@2}')"
	assert_output "$(rv '{"ok":true,"count":2,"rev":@5}')"
	run req '{"op":"list","prefix":"zz","count_only":true,"consistency":"serializable"}'
	assert_output "$(rv '{"ok":true,"count":0,"rev":@5}')"
	run req '{"op":"list","count_only":1}'
	assert_output --partial '"code":"bad_request"'
	# More than a page of the store's (10000): counted page by page.
	put_n c/ 10005 x
	run req '{"op":"list","prefix":"c/","count_only":true}'
	assert_output --partial '"count":10005,'
	# Below c/2: c/1, c/10..c/19, c/100..c/199, c/1000..c/1999, c/10000..
	run req '{"op":"list","prefix":"c/","count_only":true,"reverse":true,"after":"c/2"}'
	assert_output --partial '"count":1117,'
	run req '{"op":"list","prefix":"c/","count_only":true,"after":"c/9998"}'
	assert_output --partial '"count":1,'
}
