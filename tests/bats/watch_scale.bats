#!/usr/bin/env bats
# Watches at scale (metad-protocol(7), WATCHES): several keys and prefixes
# in one watch, prev_kv, progress, the lease of a delete; and metactl
# watch's several keys, --prev-kv, --progress and -- COMMAND.

load helpers

setup() {
	metad_start
}

teardown() {
	[ -z "${TESTDIR:-}" ] || release w
	stop_bg "${BG:-}"
	leases_clear
	metad_cleanup
}

# rebase: count revisions (@N) from now on (a grant on etcd writes its
# lease's own key).
rebase() {
	R0=
	rev_base
}

lease_of() {
	sed -n 's/.*"lease":\([0-9]*\).*/\1/p' <<<"$1"
}

@test "a watch of several keys and prefixes: each matching event once, in rev order" {
	raw_held w '{"op":"watch","key":"a","keys":["a","c"],"prefixes":["b/","a",""],"prefix":"b/"}' \
	    '{"op":"watch","keys":["x"],"prefixes":["b/1"]}' > "$TESTDIR/out" &
	BG=$!
	until_status watches 2
	req '{"op":"txn","then":[{"op":"put","key":"b/1","value":"1"},{"op":"put","key":"a","value":"2"}]}' >/dev/null
	req '{"op":"put","key":"zz","value":"3"}' >/dev/null
	req '{"op":"delete","key":"a"}' >/dev/null
	req '{"op":"put","key":"x","value":"4"}' >/dev/null
	release w
	wait_bg "$BG"
	run cat "$TESTDIR/out"
	assert_line --index 0 --regexp '^\{"ok":true,"watch":1,"rev":[0-9]+\}$'
	assert_line --index 1 --regexp '^\{"ok":true,"watch":2,"rev":[0-9]+\}$'
	# A txn's events in its order; within an event, watch 1 before 2.
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"b/1","value":"1","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 3 "$(rv '{"watch":2,"event":"put","key":"b/1","value":"1","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 4 "$(rv '{"watch":1,"event":"put","key":"a","value":"2","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 5 "$(rv '{"watch":1,"event":"put","key":"zz","value":"3","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 6 "$(rv '{"watch":1,"event":"delete","key":"a","mod_rev":@3}')"
	assert_line --index 7 "$(rv '{"watch":1,"event":"put","key":"x","value":"4","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_line --index 8 "$(rv '{"watch":2,"event":"put","key":"x","value":"4","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_equal "${#lines[@]}" 9
}

@test "a watch of several keys from a rev replays each matching event once, then goes on live" {
	req '{"op":"put","key":"k1","value":"1"}' >/dev/null
	req '{"op":"put","key":"other","value":"x"}' >/dev/null
	req '{"op":"put","key":"p/1","value":"2"}' >/dev/null
	raw_held w "$(rv '{"op":"watch","keys":["k1","k2"],"prefixes":["p/","k"],"from_rev":@1}')" > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	req '{"op":"put","key":"k2","value":"3"}' >/dev/null
	release w
	wait_bg "$BG"
	run sh -c "grep -o '\"key\":\"[^\"]*\",\"value\":\"[^\"]*\"' '$TESTDIR/out' | tr '\n' ' '"
	assert_output '"key":"k1","value":"1" "key":"p/1","value":"2" "key":"k2","value":"3" '
}

@test "watch keys and prefixes are checked: bad_request" {
	run req '{"op":"watch","keys":[""]}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","keys":"a"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","prefixes":[7]}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","keys":[]}'
	assert_output --partial '"code":"bad_request"'
	run req "{\"op\":\"watch\",\"keys\":[$(seq -f '"k%g"' -s, 1 129)]}"
	assert_output --partial 'at most 128 keys and prefixes'
	run req '{"op":"watch","key":"a","progress_ms":5}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","key":"a","prev_kv":"yes"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch_progress","watch":1}'
	assert_output --partial '"code":"not_found"'
}

@test "prev_kv: put and delete events carry prev, null for a create, live and replayed" {
	req '{"op":"put","key":"pk","value":"old"}' >/dev/null
	raw_held w '{"op":"watch","key":"pk","prev_kv":true}' > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	req '{"op":"put","key":"pk","value":"new"}' >/dev/null
	req '{"op":"delete","key":"pk"}' >/dev/null
	req '{"op":"put","key":"pk","value":"again"}' >/dev/null
	release w
	wait_bg "$BG"
	run cat "$TESTDIR/out"
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"pk","value":"new","version":2,"create_rev":@1,"mod_rev":@2,"prev":{"key":"pk","value":"old","version":1,"create_rev":@1,"mod_rev":@1}}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"delete","key":"pk","mod_rev":@3,"prev":{"key":"pk","value":"new","version":2,"create_rev":@1,"mod_rev":@2}}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"put","key":"pk","value":"again","version":1,"create_rev":@4,"mod_rev":@4,"prev":null}')"
	assert_equal "${#lines[@]}" 4
	run watch_lines 5 "$(rv '{"op":"watch","key":"pk","prev_kv":true,"from_rev":@1}')"
	assert_success
	assert_line --index 1 "$(rv '{"watch":2,"event":"put","key":"pk","value":"old","version":1,"create_rev":@1,"mod_rev":@1,"prev":null}')"
	assert_line --index 2 "$(rv '{"watch":2,"event":"put","key":"pk","value":"new","version":2,"create_rev":@1,"mod_rev":@2,"prev":{"key":"pk","value":"old","version":1,"create_rev":@1,"mod_rev":@1}}')"
	assert_line --index 4 "$(rv '{"watch":2,"event":"put","key":"pk","value":"again","version":1,"create_rev":@4,"mod_rev":@4,"prev":null}')"
	# Without prev_kv, no prev.
	run watch_lines 2 "$(rv '{"op":"watch","key":"pk","from_rev":@4}')"
	assert_line --index 1 "$(rv '{"watch":3,"event":"put","key":"pk","value":"again","version":1,"create_rev":@4,"mod_rev":@4}')"
}

@test "progress_ms: an idle watch is told the rev it is current at; watch_progress at once" {
	raw_held w '{"op":"watch","key":"quiet","progress_ms":100,"id":1}' \
	    '{"op":"ping","id":2}' > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	req '{"op":"put","key":"loud","value":"1"}' >/dev/null
	wait_for grep -q "$(rv '"event":"progress","rev":@1}')" "$TESTDIR/out"
	release w
	wait_bg "$BG"
	run grep -c '"event":"progress"' "$TESTDIR/out"
	assert [ "$output" -ge 1 ]
	run grep -v '"event":"progress","rev"' "$TESTDIR/out"
	assert_line --index 0 --partial '{"id":1,"ok":true,"watch":1'
	assert_line --index 1 --partial '{"id":2,"ok":true'
	assert_equal "${#lines[@]}" 2

	# watch_progress: the answer names the rev, the line follows it (ids
	# are the daemon's: this is its second watch).
	req '{"op":"put","key":"loud","value":"2"}' >/dev/null
	run raw <<-REQS
	{"op":"watch","key":"quiet","id":1}
	{"op":"put","key":"loud","value":"3","id":2}
	{"op":"watch_progress","watch":2,"id":3}
	REQS
	assert_line --index 2 "$(rv '{"id":3,"ok":true,"watch":2,"rev":@3}')"
	assert_line --index 3 "$(rv '{"watch":2,"event":"progress","rev":@3}')"
	assert_equal "${#lines[@]}" 4
}

@test "a lease's deletes say lease and cause: revoked, and expired" {
	local out L
	out=$(req '{"op":"lease_grant","ttl_ms":60000}')
	L=$(lease_of "$out")
	req "{\"op\":\"put\",\"key\":\"lk1\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	req "{\"op\":\"put\",\"key\":\"lk2\",\"value\":\"2\",\"lease\":$L}" >/dev/null
	raw_held w '{"op":"watch","prefix":"lk"}' > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	req '{"op":"delete","key":"lk2"}' >/dev/null
	req "{\"op\":\"lease_revoke\",\"lease\":$L}" >/dev/null
	out=$(req '{"op":"lease_grant","ttl_ms":1000}')
	local E
	E=$(lease_of "$out")
	req "{\"op\":\"put\",\"key\":\"lk3\",\"value\":\"3\",\"lease\":$E}" >/dev/null
	wait_for -t 15 grep -q '"key":"lk3","lease"' "$TESTDIR/out"
	release w
	wait_bg "$BG"
	run cat "$TESTDIR/out"
	assert_line --index 1 --regexp '"event":"delete","key":"lk2","mod_rev":[0-9]+\}$'
	assert_line --index 2 --regexp "\"event\":\"delete\",\"key\":\"lk1\",\"lease\":$L,\"cause\":\"revoked\",\"mod_rev\":[0-9]+\}$"
	assert_line --index 4 --regexp "\"event\":\"delete\",\"key\":\"lk3\",\"lease\":$E,\"cause\":\"expired\",\"mod_rev\":[0-9]+\}$"
	assert_equal "${#lines[@]}" 5
}

@test "metactl watch KEY... --prefix P...: one watch, each event once" {
	"$METACTL" watch k1 k2 --prefix p/ -p k -k -dash --count 5 > "$TESTDIR/mout" 2>&1 &
	BG=$!
	until_status watches 1
	rebase
	mctl put k1 one
	mctl put zz no
	mctl put p/a "two words"
	mctl del k1
	mctl put k2 three
	mctl put -- -dash four
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/mout"
	assert_output "$(rv 'PUT k1 v1 rev @1 one
PUT p/a v1 rev @3 "two words"
DELETE k1 rev @4
PUT k2 v1 rev @5 three
PUT -dash v1 rev @6 four')"
	run mctl watch
	assert_failure 2
	run mctl watch k --progress 1
	assert_failure 2
	run mctl watch k --
	assert_failure 2
	assert_output --partial 'no COMMAND'
}

@test "metactl watch --prev-kv ends lines with the value before; --progress prints PROGRESS" {
	mctl put pv first
	"$METACTL" watch pv --prev-kv --count 3 > "$TESTDIR/mout" 2>&1 &
	BG=$!
	until_status watches 1
	rebase
	mctl put pv second
	mctl del pv
	mctl put pv "third one"
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/mout"
	assert_output "$(rv 'PUT pv v2 rev @1 second prev first
DELETE pv rev @2 prev second
PUT pv v1 rev @3 "third one" prev (none)')"

	"$METACTL" watch quiet --progress 50 > "$TESTDIR/pout" 2>&1 &
	BG=$!
	wait_for grep -q '^PROGRESS rev [0-9]*$' "$TESTDIR/pout"
	stop_bg "$BG"
	BG=
}

@test "metactl watch -- COMMAND runs it once per event, in order, with the event in its environment" {
	cat > "$TESTDIR/hook" <<-'SH'
	#!/bin/sh
	# One at a time: a second one running at once would find the lock.
	mkdir "$0.lock" || { echo overlap; exit 1; }
	sleep 0.05
	printf '%s|%s|%s|%s|%s\n' "$METAD_EVENT" "$METAD_KEY" \
	    "${METAD_VALUE-unset}" "$METAD_REV" "${METAD_PREV_VALUE-unset}" >> "$0.out"
	rmdir "$0.lock"
	SH
	chmod +x "$TESTDIR/hook"
	"$METACTL" watch --prefix h/ --prev-kv --count 4 -- "$TESTDIR/hook" > "$TESTDIR/mout" 2>&1 &
	BG=$!
	until_status watches 1
	rebase
	mctl put h/a 1
	mctl put h/a "two words"
	mctl put h/b 3
	mctl del h/a
	wait_bg "$BG" 20
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/hook.out"
	assert_output "$(rv 'put|h/a|1|@1|unset
put|h/a|two words|@2|1
put|h/b|3|@3|unset
delete|h/a|unset|@4|two words')"
	# Nothing printed of the events themselves.
	run cat "$TESTDIR/mout"
	assert_output ''
}
