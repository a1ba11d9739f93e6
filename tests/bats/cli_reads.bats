#!/usr/bin/env bats
# metactl get --rev, ls --rev and history (metactl(1); metad-protocol(7),
# READS AT A REVISION): output, paging and exit statuses, through the
# binaries.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# @1 a=1, @2 b=1, @3 a=2, @4 del a, @5 a=3 (created again)
fill() {
	mctl put a 1 >/dev/null
	mctl put b 1 >/dev/null
	mctl put a 2 >/dev/null
	mctl del a >/dev/null
	mctl put a 3 >/dev/null
}

@test "get --rev prints the value at that revision; absent then is exit 1" {
	fill
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
	fill
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
	fill
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
	fill
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
	fill
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
	fill
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
	fill
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
