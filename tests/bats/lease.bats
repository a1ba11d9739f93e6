#!/usr/bin/env bats
# Leases and sessions (metad-protocol(7), LEASES), over the raw socket and
# metactl.

load helpers

setup() {
	metad_start
}

teardown() {
	[ -z "${TESTDIR:-}" ] || release timed
	stop_bg "${BG:-}" "${WATCH:-}"
	[ -z "${COPROC_PID:-}" ] || stop_bg -KILL "$COPROC_PID"
	leases_clear
	metad_cleanup
}

# rebase: count revisions (@N) from now on.  A grant on etcd writes its
# lease's own key (metad(8)), so tests count writes from after it.
rebase() {
	R0=
	rev_base
}

# lease_of JSON: the "lease" number in a response.
lease_of() {
	sed -n 's/.*"lease":\([0-9]*\).*/\1/p' <<<"$1"
}

absent() {
	[ "$(req "{\"op\":\"get\",\"key\":\"$1\"}")" = \
	    "$(req '{"op":"ping"}' | sed 's/{"ok":true,/{"ok":true,"kv":null,/')" ]
}

gone() {
	run mctl get "$1"
	[ "$status" -eq 1 ]
}

# kv_lease_shown L: the kv object in $output names lease L (the metad
# backend's replica too: its stream's put events carry their leases).
kv_lease_shown() {
	assert_output --partial "\"lease\":$1}"
}

@test "lease_grant, put with lease, lease_info, lease_list, kv shows its lease" {
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --regexp '^\{"ok":true,"lease":[0-9]+,"ttl_ms":60000\}$'
	L=$(lease_of "$output")
	rebase
	run req "{\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"lease\":$L}"
	assert_output "$(rv "{\"ok\":true,\"kv\":{\"key\":\"a\",\"version\":1,\"create_rev\":@1,\"mod_rev\":@1,\"lease\":$L},\"prev_version\":0,\"rev\":@1}")"
	run req '{"op":"get","key":"a"}'
	kv_lease_shown "$L"
	run req '{"op":"list"}'
	kv_lease_shown "$L"
	run req "{\"op\":\"lease_info\",\"lease\":$L}"
	assert_output --regexp "^\\{\"ok\":true,\"lease\":$L,\"ttl_ms\":60000,\"remaining_ms\":[0-9]+,\"session\":false,\"keys\":\\[\"a\"\\],\"more\":false\\}$"
	run req '{"op":"lease_list"}'
	assert_output --regexp "^\\{\"ok\":true,\"leases\":\\[\\{\"lease\":$L,\"ttl_ms\":60000,\"remaining_ms\":[0-9]+,\"session\":false\\}\\]\\}$"
	# A put without lease detaches the key.
	req '{"op":"put","key":"a","value":"2"}' >/dev/null
	run req '{"op":"get","key":"a"}'
	refute_output --partial '"lease"'
	run req "{\"op\":\"lease_info\",\"lease\":$L}"
	assert_output --partial '"keys":[]'
}

@test "with_lease: a put event of a leased key carries the lease, a read at its past rev and a prev too; without it, none" {
	run req '{"op":"lease_grant","ttl_ms":60000}'
	L=$(lease_of "$output")
	rebase
	req "{\"op\":\"put\",\"key\":\"a\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	req '{"op":"put","key":"a","value":"2"}' >/dev/null
	run -0 watch_lines 3 "$(rv '{"op":"watch","key":"a","from_rev":@1,"with_lease":true}')"
	assert_line --index 1 --partial "$(rv "\"event\":\"put\",\"key\":\"a\",\"value\":\"1\",\"version\":1,\"create_rev\":@1,\"mod_rev\":@1,\"lease\":$L}")"
	assert_line --index 2 --partial "$(rv '"event":"put","key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@2}')"
	run -0 watch_lines 2 "$(rv '{"op":"watch","key":"a","from_rev":@1}')"
	assert_line --index 1 --partial "$(rv '"event":"put","key":"a","value":"1","version":1,"create_rev":@1,"mod_rev":@1}')"
	run -0 watch_lines 2 "$(rv '{"op":"watch","key":"a","from_rev":@2,"prev_kv":true}')"
	assert_line --index 1 --partial "$(rv "\"prev\":{\"key\":\"a\",\"value\":\"1\",\"version\":1,\"create_rev\":@1,\"mod_rev\":@1,\"lease\":$L}}")"
	run -0 req "$(rv '{"op":"get","key":"a","rev":@1}')"
	assert_output --partial "\"lease\":$L}"
	run -0 req "$(rv '{"op":"get","key":"a","rev":@2}')"
	refute_output --partial '"lease"'
	# Live too: a watch at the head sees the next leased put with it.
	raw_held w '{"op":"watch","key":"b","with_lease":true}' >"$TESTDIR/w.out" &
	WATCH=$!
	wait_for grep -q '"ok":true' "$TESTDIR/w.out"
	req "{\"op\":\"put\",\"key\":\"b\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	wait_for has_lines 2 "$TESTDIR/w.out"
	release w
	wait "$WATCH"
	WATCH=
	run cat "$TESTDIR/w.out"
	assert_line --index 1 --partial "$(rv "\"event\":\"put\",\"key\":\"b\",\"value\":\"1\",\"version\":1,\"create_rev\":@3,\"mod_rev\":@3,\"lease\":$L}")"
	run -0 req '{"op":"watch","key":"a","with_lease":1}'
	assert_output --partial '"code":"bad_request"'
}

@test "bad lease input: stable errors, nothing written, connection usable" {
	run raw <<-'EOF'
	{"op":"lease_grant","ttl_ms":999}
	{"op":"lease_grant","ttl_ms":3600001}
	{"op":"lease_grant"}
	{"op":"lease_grant","ttl_ms":"5s"}
	{"op":"lease_grant","ttl_ms":5000,"session":1}
	{"op":"put","key":"k","value":"v","lease":"12"}
	{"op":"put","key":"k","value":"v","lease":-1}
	{"op":"put","key":"k","value":"v","lease":0}
	{"op":"put","key":"k","value":"v","lease":12345}
	{"op":"txn","then":[{"op":"put","key":"k","value":"v","lease":12345}]}
	{"op":"txn","then":[{"op":"delete","key":"k","lease":1}]}
	{"op":"lease_keepalive","lease":12345}
	{"op":"lease_revoke","lease":12345}
	{"op":"lease_info","lease":12345}
	{"op":"lease_keepalive","lease":true}
	{"op":"lease_grant","ttl_ms":5000,"ttl":1}
	{"op":"ping"}
	EOF
	assert_success
	assert_equal "$(grep -c '"code":"bad_request"' <<<"$output")" 11
	assert_equal "$(grep -c '"code":"not_found"' <<<"$output")" 5
	assert_line --index 8 --partial 'lease 12345 not found'
	assert_line --index 15 --partial 'unknown field \"ttl\"'
	assert_line --index 16 "$(rv '{"ok":true,"rev":@0}')"
	run req '{"op":"lease_list"}'
	assert_output '{"ok":true,"leases":[]}'
}

# bats test_tags=no-valgrind
@test "expiry: not before the TTL, at most 1 s after; all keys at one rev" {
	timed_watch "$TESTDIR/w" '{"op":"watch","prefix":"e/"}'
	t0=$EPOCHREALTIME
	# 1 s: below etcd's shortest TTL, timed by metad there (metad(8)).
	L=$(mctl lease grant 1s)
	t1=$EPOCHREALTIME
	rebase
	mctl put --lease "$L" e/1 x
	mctl put --lease "$L" e/2 y
	mctl put e/3 z
	wait_for -t 5 grep -q '"event":"delete","key":"e/2"' "$TESTDIR/w"
	del=$(grep '"event":"delete","key":"e/1"' "$TESTDIR/w")
	tdel=${del%% *}
	echo "expired $(ms "$t0" "$tdel") ms after the grant was sent, $(ms "$t1" "$tdel") ms after its answer" >&3
	[ "$(ms "$t0" "$tdel")" -ge 1000 ]
	[ "$(ms "$t1" "$tdel")" -le 2000 ]
	assert_equal "$(grep -c '"event":"delete"' "$TESTDIR/w")" 2
	# Each says which lease's end deleted it (metad-protocol(7), WATCHES).
	grep -q "$(rv '"key":"e/1","lease":'"$L"',"cause":"expired","mod_rev":@4}')" "$TESTDIR/w"
	grep -q "$(rv '"key":"e/2","lease":'"$L"',"cause":"expired","mod_rev":@4}')" "$TESTDIR/w"
	run mctl get e/3
	assert_output z
	run mctl lease info "$L"
	assert_failure 1
}

@test "keepalive keeps the keys; without it they go" {
	L=$(mctl lease grant 2s)
	mctl put --lease "$L" k v
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do
		run mctl lease keepalive "$L"
		assert_output 2000
		sleep 0.3
	done
	run mctl get k
	assert_output v
	wait_for -t 4 gone k
}

@test "lease keepalive --forever refreshes until interrupted" {
	L=$(mctl lease grant 1s)
	mctl put --lease "$L" k v
	"$METACTL" lease keepalive --forever "$L" >"$TESTDIR/ka" 3>&- &
	BG=$!
	wait_for -t 5 has_lines 6 "$TESTDIR/ka"
	run mctl get k
	assert_output v
	kill -INT "$BG"
	wait_bg "$BG"
	assert_equal "$STATUS" 130
	wait_for -t 3 gone k
}

@test "revoke deletes every key of the lease at one rev" {
	L=$(mctl lease grant 60s)
	rebase
	mctl put --lease "$L" r/1 a
	mctl put --lease "$L" r/2 b
	# On etcd the lease's own key notes a client's revoke first (a rev).
	local at=3
	! store_is etcd || at=4
	run mctl lease revoke "$L"
	assert_output "$(rv "@$at")"
	run mctl ls r/
	assert_output ''
	run req "$(rv '{"op":"history","key":"r/2","from_rev":@1}')"
	assert_output --partial "$(rv "{\"event\":\"delete\",\"key\":\"r/2\",\"mod_rev\":@$at}")"
	run mctl lease revoke "$L"
	assert_failure 1
	assert_output --partial not_found
	run mctl put --lease "$L" r/3 c
	assert_failure 5
	gone r/3
	# A lease with no keys deletes none: its answer is the store's rev
	# (on sqlite and memory no write; on etcd the lease's own key goes).
	L=$(mctl lease grant 60s)
	run mctl lease revoke "$L"
	rebase
	assert_output "$(rv @0)"
}

@test "lease ls and info in text" {
	L=$(mctl lease grant 30s)
	mctl put --lease "$L" "k 1" v
	run mctl lease ls
	assert_output --regexp "^$L 30000 [0-9]+ -$"
	run mctl lease info "$L"
	assert_line --index 0 --regexp "^lease $L ttl_ms 30000 remaining_ms [0-9]+ session no$"
	assert_line --index 1 '"k 1"'
	run mctl lease grant 0s
	assert_failure 2
	assert_output --partial 'from 1s to 1h'
	run mctl lease info 0
	assert_failure 2
}

# session_open: a connection (coproc) that grants a session lease and puts
# key s with it; the connection stays open until killed.
session_open() {
	coproc SESS { socat - "UNIX-CONNECT:$SOCK" 3>&-; }
	echo '{"op":"lease_grant","ttl_ms":60000,"session":true}' >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	SL=$(lease_of "$line")
	echo "{\"op\":\"put\",\"key\":\"s\",\"value\":\"1\",\"lease\":$SL}" >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	[[ $line == *'"ok":true'* ]]
	COPROC_PID=$SESS_PID
}

@test "a session lease is revoked when its connection closes" {
	session_open
	run mctl lease info "$SL"
	assert_output --partial "session yes"
	run mctl get s
	assert_output 1
	exec {SESS[1]}>&-
	wait_for -t 2 gone s
	run mctl lease info "$SL"
	assert_failure 1
}

# bats test_tags=no-valgrind
@test "a session lease is revoked at once when its client is killed" {
	session_open
	t0=$EPOCHREALTIME
	kill -KILL "$COPROC_PID"
	wait_for -t 2 gone s
	echo "gone $(ms "$t0" "$EPOCHREALTIME") ms after kill -9" >&3
	[ "$(ms "$t0" "$EPOCHREALTIME")" -lt 1000 ]
}

# bats test_tags=store:sqlite
@test "after kill -9 of the daemon every lease has its whole TTL again; sessions are revoked" {
	local el rem
	L=$(mctl lease grant 5s)
	mctl put --lease "$L" d v
	session_open
	sleep 2
	metad_stop KILL
	t0=$EPOCHREALTIME
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run mctl get d
	assert_output v
	gone s
	run mctl lease info "$L"
	el=$(ms "$t0" "$EPOCHREALTIME")
	assert_output --regexp "remaining_ms [0-9]+ "
	rem=$(sed -n '1s/.*remaining_ms \([0-9]*\) .*/\1/p' <<<"$output")
	# The whole TTL from the restart, at most el ms ago (how long the
	# restart and these reads took, however slow the machine); what was
	# left before the kill (3 s or less) would be below 5000 - el.
	[ "$rem" -le 5000 ]
	[ "$rem" -ge $((5000 - el - 5)) ]
	run mctl lease info "$SL"
	assert_failure 1
	wait_for -t 8 gone d
	[ "$(ms "$t0" "$EPOCHREALTIME")" -ge 4900 ]
}

# bats test_tags=store:sqlite
@test "a lease survives a clean restart with its keys" {
	L=$(mctl lease grant 60s)
	mctl put --lease "$L" k v
	metad_stop
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run mctl get k -o json
	assert_output --partial "\"lease\":$L}"
	run mctl lease revoke "$L"
	assert_success
	gone k
}

# A grant or revoke applied in a batch whose commit then fails answers an
# error and leaves the lease table as the store is: no lease that was
# never recorded, no lease forgotten whose keys are still there.  With the
# file full, some small writes still fit (in what a refused one left):
# each answer, ok or storage_full, must match what lease ls says.
# bats test_tags=store:sqlite
@test "a grant or revoke whose commit fails changes no lease (file size limit)" {
	local pad i l out want=() failed_grant=0 failed_revoke=0
	metad_stop
	FSIZE_SAVED=$(ulimit -S -f)
	ulimit -S -f 1024		# 1 MiB for metad
	metad_start
	ulimit -S -f "$FSIZE_SAVED"
	FSIZE_SAVED=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		l=$(mctl lease grant 60s)
		mctl put --lease "$l" "k/$i" v
		want+=("$l")
	done
	pad=$(printf '%3000s' '' | tr ' ' x)
	for ((i = 1; i <= 500; i++)); do
		printf '{"op":"put","key":"f/%05d","value":"%s"}\n' "$i" "$pad"
	done | socat -t 10 - "UNIX-CONNECT:$SOCK" >"$TESTDIR/fill"
	grep -q '"code":"storage_full"' "$TESTDIR/fill"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		out=$(req '{"op":"lease_grant","ttl_ms":60000}')
		case $out in
		*'"ok":true'*) want+=("$(lease_of "$out")") ;;
		*storage_full*) failed_grant=$((failed_grant + 1)) ;;
		*) echo "$out"; false ;;
		esac
	done
	for i in 1 2 3 4 5 6 7 8 9 10; do
		l=${want[$((i - 1))]}
		out=$(req "{\"op\":\"lease_revoke\",\"lease\":$l}")
		case $out in
		*'"ok":true'*) want[$((i - 1))]=; gone "k/$i" ;;
		*storage_full*)
			failed_revoke=$((failed_revoke + 1))
			run mctl get "k/$i"
			assert_output v
			;;
		*) echo "$out"; false ;;
		esac
	done
	echo "grants refused: $failed_grant, revokes refused: $failed_revoke" >&3
	[ "$failed_grant" -gt 0 ]
	[ "$failed_revoke" -gt 0 ]
	mctl lease ls | cut -d' ' -f1 | sort >"$TESTDIR/ls"
	printf '%s\n' "${want[@]}" | grep . | sort >"$TESTDIR/want"
	run diff "$TESTDIR/want" "$TESTDIR/ls"
	assert_success
	prlimit --pid "$METAD_PID" --fsize=unlimited
	for l in $(cat "$TESTDIR/want"); do
		mctl lease revoke "$l"
	done
	run mctl list k/
	assert_output ''
	run mctl lease ls
	assert_output ''
}
