#!/usr/bin/env bats
# Reads at a revision, key history, min_rev and consistency
# (metad-protocol(7): READS AT A REVISION, CONSISTENCY), and unknown request
# fields (metad-protocol(7), REQUESTS AND RESPONSES), over the raw socket and
# through metactl get --rev, ls --rev and history.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	metad_start
}

teardown() {
	stop_bg
	metad_cleanup
}

# @1 a=1, @2 b=1, @3 a=2, @4 delete b, @5 c=1
fill() {
	printf '%s\n' '{"op":"put","key":"a","value":"1"}' \
	    '{"op":"put","key":"b","value":"1"}' \
	    '{"op":"put","key":"a","value":"2"}' \
	    '{"op":"delete","key":"b"}' \
	    '{"op":"put","key":"c","value":"1"}' | raw >/dev/null
}

# revoke_reads R: what a revoke of r/000-r/299 at rev R (then r/000 put
# again at a later rev) shows to the reads at the revs around it.
revoke_reads() {
	local r=$1
	run mctl get r/150 --rev $((r - 1))
	assert_success
	assert_output v150
	run mctl get r/150 --rev "$r"
	assert_failure 1
	assert_equal "$(mctl ls r/ --rev $((r - 1)) | wc -l)" 300
	assert_equal "$(mctl ls r/ --rev "$r" | wc -l)" 0
	assert_equal "$(mctl ls r/)" r/000
	run req '{"op":"history","key":"r/000"}'
	assert_output --regexp '^\{"ok":true,"events":\[\{"event":"put","key":"r/000","value":"v0".*\},\{"event":"delete","key":"r/000","mod_rev":'"$r"'\},\{"event":"put","key":"r/000","value":"again","version":1,.*\],"more":false,'
	# A watch from r starts with its 300 deletes, from r + 1 after them.
	mctl watch --prefix r/ --from-rev "$r" --count 301 >"$TESTDIR/w"
	assert_equal "$(head -300 "$TESTDIR/w" | grep -c "^DELETE r/[0-9]* rev $r\$")" 300
	run sed -n 301p "$TESTDIR/w"
	assert_output --regexp '^PUT r/000 v1 rev [0-9]+ again$'
	run mctl watch --prefix r/ --from-rev $((r + 1)) --count 1
	assert_output --regexp '^PUT r/000 v1 rev [0-9]+ again$'
}

# @1 a=1, @2 b=1, @3 a=2, @4 del a, @5 a=3 (created again)
fill_by_metactl() {
	mctl put a 1 >/dev/null
	mctl put b 1 >/dev/null
	mctl put a 2 >/dev/null
	mctl del a >/dev/null
	mctl put a 3 >/dev/null
}

@test "get with rev answers the key as it was at that rev" {
	fill
	run req "$(rv '{"op":"get","key":"a","rev":@2}')"
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@5}')"
	run req "$(rv '{"op":"get","key":"b","rev":@3}')"
	assert_output --partial "$(rv '"kv":{"key":"b","value":"1","version":1,"create_rev":@2,"mod_rev":@2}')"
	run req "$(rv '{"op":"get","key":"b","rev":@4}')"
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@5}')"
	run req "$(rv '{"op":"get","key":"a","rev":@5}')"
	assert_output --partial '"value":"2","version":2'
}

@test "a rev above the current one is bad_request, not the current value" {
	fill
	run req "$(rv '{"op":"get","key":"a","rev":@9}')"
	assert_output --partial '"ok":false,"error":{"code":"bad_request"'
	run req "$(rv '{"op":"list","rev":@6}')"
	assert_output --partial '"ok":false,"error":{"code":"bad_request"'
	run req '{"op":"get","key":"a","rev":-1}'
	assert_output --partial '"code":"bad_request"'
}

@test "list with rev answers that state, and its pages are one snapshot" {
	fill
	run req "$(rv '{"op":"list","rev":@2}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1},{"key":"b","value":"1","version":1,"create_rev":@2,"mod_rev":@2}],"more":false,"rev":@5}')"
	run req "$(rv '{"op":"list","rev":@5,"limit":1,"keys_only":true}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a","version":2,"create_rev":@1,"mod_rev":@3}],"more":true,"rev":@5}')"
	# Writes between the pages do not show in the snapshot.
	printf '%s\n' '{"op":"put","key":"b2","value":"x"}' \
	    '{"op":"delete","key":"c"}' | raw >/dev/null
	run req "$(rv '{"op":"list","rev":@5,"limit":1,"after":"a"}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"c","value":"1","version":1,"create_rev":@5,"mod_rev":@5}],"more":false,"rev":@7}')"
	run req '{"op":"list","after":"a"}'
	assert_output --partial '"kvs":[{"key":"b2"'
}

@test "below the compact rev: compacted with compact_rev; a key written before it keeps its value" {
	fill
	run req "$(rv '{"op":"compact","rev":@4}')"
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"get","key":"a","rev":@3}')"
	assert_output --partial "$(rv '"error":{"code":"compacted"')"
	assert_output --partial "$(rv '"compact_rev":@4}}')"
	run req "$(rv '{"op":"list","rev":@2}')"
	assert_output --partial '"code":"compacted"'
	# a was last written at @3, below the compaction point.
	run req "$(rv '{"op":"get","key":"a","rev":@4}')"
	assert_output --partial "$(rv '"kv":{"key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@3}')"
	run req "$(rv '{"op":"list","rev":@4}')"
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@3}],"more":false,"rev":@5}')"
}

@test "history lists a key's puts and deletes oldest first, in pages" {
	fill
	req '{"op":"put","key":"b","value":"2"}' >/dev/null
	run req '{"op":"history","key":"b"}'
	assert_output "$(rv '{"ok":true,"events":[{"event":"put","key":"b","value":"1","version":1,"create_rev":@2,"mod_rev":@2},{"event":"delete","key":"b","mod_rev":@4},{"event":"put","key":"b","value":"2","version":1,"create_rev":@6,"mod_rev":@6}],"more":false,"rev":@6}')"
	run req '{"op":"history","key":"b","limit":2}'
	assert_output --partial "$(rv '{"event":"delete","key":"b","mod_rev":@4}],"more":true')"
	run req "$(rv '{"op":"history","key":"b","from_rev":@5,"limit":2}')"
	assert_output "$(rv '{"ok":true,"events":[{"event":"put","key":"b","value":"2","version":1,"create_rev":@6,"mod_rev":@6}],"more":false,"rev":@6}')"
	run req '{"op":"history","key":"none"}'
	assert_output "$(rv '{"ok":true,"events":[],"more":false,"rev":@6}')"
	run req '{"op":"history","key":"b","limit":0}'
	assert_output --partial '"code":"bad_request","message":"field \"limit\" must be from 1 to 10000"'
	run req '{"op":"history"}'
	assert_output --partial '"code":"bad_request"'
}

@test "history from below the compact rev is compacted; the default starts at it" {
	fill
	req "$(rv '{"op":"compact","rev":@3}')" >/dev/null
	run req "$(rv '{"op":"history","key":"a","from_rev":@2}')"
	assert_output --partial "$(rv '"code":"compacted"')"
	assert_output --partial "$(rv '"compact_rev":@3}}')"
	run req '{"op":"history","key":"a"}'
	assert_output "$(rv '{"ok":true,"events":[{"event":"put","key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@3}],"more":false,"rev":@5}')"
}

@test "min_rev waits until the daemon's view reaches it, and what follows waits too" {
	raw_held mr "$(rv '{"op":"get","key":"k","min_rev":@2,"id":1}')" \
	    '{"op":"ping","id":2}' >"$TESTDIR/mr.out" &
	BG=$!
	req '{"op":"put","key":"k","value":"1"}' >/dev/null
	[ ! -s "$TESTDIR/mr.out" ]
	req '{"op":"put","key":"k","value":"2"}' >/dev/null
	wait_for has_lines 2 "$TESTDIR/mr.out"
	release mr
	wait_bg "$BG"
	run cat "$TESTDIR/mr.out"
	assert_line -n 0 "$(rv '{"id":1,"ok":true,"kv":{"key":"k","value":"2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	assert_line -n 1 "$(rv '{"id":2,"ok":true,"rev":@2}')"
}

@test "min_rev already reached answers at once; not reached in timeout_ms: timeout" {
	req '{"op":"put","key":"k","value":"1"}' >/dev/null
	run req "$(rv '{"op":"list","min_rev":@1}')"
	assert_output --partial '"kvs":[{"key":"k"'
	run req "$(rv '{"op":"get","key":"k","min_rev":@5,"timeout_ms":200}')"
	assert_output --partial '"ok":false,"error":{"code":"timeout"'
	run req "$(rv '{"op":"list","min_rev":@5,"timeout_ms":0}')"
	assert_output --partial '"code":"timeout"'
	run req '{"op":"get","key":"k","min_rev":1,"timeout_ms":99999999999}'
	assert_output --partial '"code":"bad_request"'
}

@test "consistency: linearizable and serializable read the same here; anything else is bad_request" {
	req '{"op":"put","key":"k","value":"1"}' >/dev/null
	run req '{"op":"get","key":"k","consistency":"serializable"}'
	assert_output --partial '"value":"1"'
	run req '{"op":"list","consistency":"linearizable"}'
	assert_output --partial '"value":"1"'
	run req '{"op":"get","key":"k","consistency":"eventual"}'
	assert_output --partial '"code":"bad_request","message":"field \"consistency\" must be \"linearizable\" or \"serializable\""'
	run req '{"op":"get","key":"k","consistency":1}'
	assert_output --partial '"code":"bad_request"'
}

@test "every op answers bad_request naming a field it does not know" {
	local op leases=""
	# The lease ops are unknown_op on etcd until it has leases.
	store_is etcd ||
	    leases="lease_grant lease_keepalive lease_revoke lease_info lease_list"
	for op in hello ping status get list history watch unwatch wait \
	    compact put delete txn epoch_get epoch_bump $leases; do
		run req "{\"op\":\"$op\",\"id\":7,\"frobnicate\":1}"
		assert_output "{\"id\":7,\"ok\":false,\"error\":{\"code\":\"bad_request\",\"message\":\"unknown field \\\"frobnicate\\\" for op \\\"$op\\\"\"}}"
	done
	# A name that is not UTF-8 is not quoted back.
	run bash -c "printf '{\"op\":\"ping\",\"\\x81x\":1}\\n' | socat -t 2 - UNIX-CONNECT:$SOCK"
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"unknown field (its name is not valid UTF-8) for op \"ping\""}}'
	run req '{"op":"put","key":"k","value":"v","ttl_ms":5}'
	assert_output --partial 'unknown field \"ttl_ms\" for op \"put\"'
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@0}')"
}

@test "every field an op knows is still accepted" {
	run req '{"op":"put","key":"k","value":"v","if_absent":true,"id":1}'
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"get","key":"k","rev":@1,"min_rev":@1,"consistency":"linearizable","timeout_ms":10,"id":2}')"
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"list","prefix":"","after":"a","limit":5,"keys_only":true,"rev":@1,"min_rev":@1,"consistency":"serializable","timeout_ms":10}')"
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"history","key":"k","from_rev":@1,"limit":3}')"
	assert_output --partial '"ok":true'
	run req '{"op":"put","key":"k","value_b64":"dg==","if_version":1}'
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"delete","key":"k","if_mod_rev":@2}')"
	assert_output --partial '"ok":true'
	run req '{"op":"wait","key":"k","version":1,"timeout_ms":0}'
	assert_output --partial '"code":"timeout"'
	run req '{"op":"epoch_bump","key":"e","owner":"me"}'
	assert_output --partial '"ok":true'
	run req '{"op":"epoch_bump","key":"e","if_epoch":1}'
	assert_output --partial '"ok":true'
	run req '{"op":"txn","if":[],"then":[{"op":"put","key":"t","value":"1"}],"else":[],"fence":{"key":"e","epoch":2}}'
	assert_output --partial '"succeeded":true'
	run req "$(rv '{"op":"watch","prefix":"t","from_rev":@1}')"
	assert_output --partial '"ok":true'
	run req '{"op":"unwatch","watch":99}'
	assert_output --partial '"code":"not_found"'
}

# A lease's revoke deletes all its keys at one rev: 300 here, more events
# than the SQLite backend's history ids leave one rev (schema 6: those of
# the next revs follow them).  The reads around it, through the binary,
# again after a restart (where the store outlives its daemon), then a
# compaction just past it.
@test "a revoke of 300 keys at one rev: reads, history and watches around it, after a restart, compacted past it" {
	local l r i
	l=$(mctl lease grant 1h)
	for i in $(seq 0 299); do
		printf '{"op":"put","key":"r/%03d","value":"v%d","lease":%s}\n' \
		    "$i" "$i" "$l"
	done | raw >/dev/null
	mctl lease revoke "$l"
	mctl put r/000 again >/dev/null
	mctl put x 1 >/dev/null
	r=$(req '{"op":"history","key":"r/150"}' |
	    sed -n 's/.*"event":"delete","key":"r\/150","mod_rev":\([0-9]*\).*/\1/p')
	[ -n "$r" ]
	revoke_reads "$r"
	if ! store_is memory; then
		metad_stop
		metad_start
		revoke_reads "$r"
	fi
	req "{\"op\":\"compact\",\"rev\":$((r + 1))}" >/dev/null
	run mctl get r/150 --rev "$r"
	assert_failure 5
	assert_equal "$(mctl ls r/ --rev $((r + 1)))" r/000
	run mctl watch --prefix r/ --from-rev $((r + 1)) --count 1
	assert_output --regexp '^PUT r/000 v1 rev [0-9]+ again$'
}

@test "get --rev prints the value at that revision; absent then is exit 1" {
	fill_by_metactl
	run mctl get a --rev "$(rv @1)"
	assert_success
	assert_output 1
	run mctl get a --rev "$(rv @3)"
	assert_output 2
	run mctl get a --rev "$(rv @4)"
	assert_failure 1
	assert_output "metactl: a: not found"
	run mctl -o json get b --rev "$(rv @2)"
	assert_success
	assert_output "$(rv '{"ok":true,"kv":{"key":"b","value":"1","version":1,"create_rev":@2,"mod_rev":@2},"rev":@5}')"
	run mctl get a
	assert_output 3
}

@test "get --rev: above the current rev is bad_request, below the compact rev compacted (exit 5); a bad number is usage" {
	fill_by_metactl
	run mctl get a --rev "$(rv @6)"
	assert_failure 5
	assert_output --partial "metactl: bad_request: "
	mctl compact "$(rv @3)" >/dev/null
	run mctl get a --rev "$(rv @2)"
	assert_failure 5
	assert_output --partial "metactl: compacted: "
	assert_output --partial "$(rv '(compact_rev @3)')"
	run mctl get b --rev "$(rv @3)"
	assert_success
	assert_output 1
	run mctl get a --rev x
	assert_failure 2
	assert_output --partial 'invalid --rev: "x"'
}

@test "ls --rev lists the keys as they were; every page at that rev" {
	fill_by_metactl
	run mctl ls --rev "$(rv @2)"
	assert_success
	assert_output "$(printf 'a\nb')"
	run mctl ls -l --rev "$(rv @4)"
	assert_output "$(rv 'b  1  @2')"
	put_n k 5
	mctl del k2 >/dev/null
	# 1000 keys a page: 1200 keys take two pages, at one rev.
	put_n p 1200
	rev=$(mctl -o json ls p --limit 1 | sed 's/.*"rev":\([0-9]*\).*/\1/')
	mctl del p1 >/dev/null
	mctl put p9999 x >/dev/null
	run mctl ls p --rev "$rev"
	assert_success
	assert_equal "${#lines[@]}" 1200
	assert_line -n 0 p1
	refute_line p9999
	run mctl ls k --rev "$(rv @10)"
	assert_output "$(printf 'k1\nk2\nk3\nk4\nk5')"
	run mctl -o json ls k --rev "$(rv @11)" --limit 2
	assert_output --partial '"kvs":[{"key":"k1","version":1'
	assert_output --partial '{"key":"k3","version":1'
	assert_output --partial '"more":true'
	run mctl ls --rev "$(rv @99999)"
	assert_failure 5
	assert_output --partial "metactl: bad_request: "
}

@test "history prints a key's events, oldest first, in columns" {
	fill_by_metactl
	printf 'x\ny' | mctl put b - >/dev/null
	run mctl history a
	assert_success
	assert_output "$(rv '@1  put     1  1
@3  put     2  2
@4  delete  -
@5  put     1  3')"
	run mctl history b
	assert_output "$(rv '@2  put  1  1
@6  put  2  b64:eAp5')"
	run mctl history none
	assert_success
	assert_output ""
}

@test "history --from-rev and --limit page; -o json is one object" {
	fill_by_metactl
	run --separate-stderr mctl history a --from-rev "$(rv @3)" --limit 2
	assert_success
	assert_output "$(rv '@3  put     2  2
@4  delete  -')"
	run mctl -o json history a --limit 1
	assert_output "$(rv '{"ok":true,"events":[{"event":"put","key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1}],"more":true,"rev":@5}')"
	run mctl -o json history a --from-rev "$(rv @4)"
	assert_output "$(rv '{"ok":true,"events":[{"event":"delete","key":"a","mod_rev":@4},{"event":"put","key":"a","value":"3","version":1,"create_rev":@5,"mod_rev":@5}],"more":false,"rev":@5}')"
	# More than a page (1000 events) pages through all.
	for i in $(seq 1 1100); do
		printf '{"op":"put","key":"many","value":"%d"}\n' "$i"
	done | socat -t 30 - "UNIX-CONNECT:$SOCK" >/dev/null
	run mctl history many
	assert_equal "${#lines[@]}" 1100
	assert_line -n 1099 --regexp '  1100  1100$'
}

@test "history: compacted is exit 5; usage errors are exit 2" {
	fill_by_metactl
	mctl compact "$(rv @3)" >/dev/null
	run mctl history a --from-rev "$(rv @1)"
	assert_failure 5
	assert_output --partial "metactl: compacted: "
	run mctl history a
	assert_success
	assert_line -n 0 "$(rv '@3  put     2  2')"
	run mctl history
	assert_failure 2
	run mctl history a b
	assert_failure 2
	run mctl history a --limit -1
	assert_failure 2
	run mctl history ""
	assert_failure 2
}

@test "the REPL runs get --rev and history on its one connection" {
	fill_by_metactl
	run mctl repl <<-EOF
	get a --rev $(rv @1)
	history b
	ls --rev $(rv @2)
	EOF
	assert_success
	assert_line -n 0 1
	assert_line -n 1 "$(rv '@2  put  1  1')"
	assert_line -n 2 a
	assert_line -n 3 b
}
