#!/usr/bin/env bats
# The remote backend under faults (remote.bats has the rest): A down,
# restarted, moved to the next URL; the answer of each write kind lost
# once between B and A (tests/faults/lineproxy.py, checked here first),
# each applied once on A and answered truly; kill -9 of A under writers
# through B with a watcher on B.

# bats file_tags=store:local

bats_require_minimum_version 1.5.0
load helpers
load remote_lib

@test "lineproxy: the Nth answer is lost with its connection, the write applied; events pass, other answers too" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --drop-answer 3
	run -0 on "$P" req '{"op":"put","key":"a","value":"1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	# The watch's answer is the second; its events are not answers.
	watch_open "$P" '{"op":"watch","prefix":""}'
	run -0 on "$P" req '{"op":"put","key":"b","value":"2"}'
	assert_output ""
	run -0 cat "$TESTDIR/lineproxy.log"
	assert_output 'lineproxy: dropped answer 3 (op put, connection 3): its connection closed'
	run -0 a_req '{"op":"get","key":"b"}'
	assert_output --partial "$(rv '"version":1,"create_rev":@2,"mod_rev":@2}')"
	run -0 on "$P" req '{"op":"put","key":"c","value":"3"}'
	assert_output --partial "$(rv '"rev":@3}')"
	watch_end 3
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"b","value":"2","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"c","value":"3","version":1,"create_rev":@3,"mod_rev":@3}')"
	# --op and --match count only the answers to the requests they select.
	stop_bg "$LINEPROXY_PID"
	: >"$TESTDIR/lineproxy.log"
	lineproxy_spawn "$P" "$A" --op put --match lost --drop-answer 1
	run -0 on "$P" raw <<-'EOF'
	{"op":"put","key":"x","value":"1"}
	{"op":"txn","then":[{"op":"put","key":"lost/t","value":"1"}]}
	{"op":"get","key":"lost/t"}
	EOF
	assert_equal "$(grep -c '"ok":true' <<<"$output")" 3
	run -0 on "$P" req '{"op":"put","key":"lost/p","value":"1"}'
	assert_output ""
	run -0 on "$P" req '{"op":"put","key":"lost/q","value":"1"}'
	assert_output --partial '"ok":true'
	run -0 cat "$TESTDIR/lineproxy.log"
	assert_output --regexp '^lineproxy: dropped answer 1 \(op put, connection [0-9]+\): its connection closed$'
	[ "$(version_on_a lost/p)" = 1 ]
}

# bats test_tags=no-valgrind
@test "A down: writes and linearizable reads on B answer unavailable within a second; serializable reads answer; B stays up" {
	start_a
	start_b
	b_req '{"op":"put","key":"k","value":"v1"}' >/dev/null
	metad_stop
	local t0 line
	for line in '{"op":"put","key":"k","value":"v2"}' \
	    '{"op":"get","key":"k"}' \
	    '{"op":"delete","key":"k"}' \
	    '{"op":"txn","then":[{"op":"put","key":"t","value":"1"}]}' \
	    '{"op":"list","prefix":""}'; do
		t0=$EPOCHREALTIME
		run -0 b_req "$line"
		assert_output --regexp '^\{"ok":false,"error":\{"code":"unavailable","message":"[^"]+".*\}\}$'
		echo "$line: $(ms "$t0" "$EPOCHREALTIME") ms" >&3
		[ "$(ms "$t0" "$EPOCHREALTIME")" -lt 1000 ]
	done
	run -0 b_req '{"op":"get","key":"k","consistency":"serializable"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	# Pipelined on one connection: each answered, in order.
	run -0 on "$B" raw <<-'EOF'
	{"id":1,"op":"put","key":"k","value":"v3"}
	{"id":2,"op":"get","key":"k","consistency":"serializable"}
	{"id":3,"op":"get","key":"k"}
	EOF
	assert_equal "${#lines[@]}" 3
	assert_line --index 0 --partial '{"id":1,"ok":false,"error":{"code":"unavailable"'
	assert_line --index 1 --partial '{"id":2,"ok":true,"kv":{"key":"k","value":"v1"'
	assert_line --index 2 --partial '{"id":3,"ok":false,"error":{"code":"unavailable"'
	kill -0 "$B_PID"
}

# bats test_tags=no-valgrind
@test "A restarted on its socket: B reconnects by itself within 3 s; the writes answered unavailable were not made" {
	start_a_durable
	start_b
	b_req '{"op":"put","key":"k","value":"v1"}' >/dev/null
	metad_stop
	run -0 b_req '{"op":"put","key":"k","value":"lost"}'
	assert_output --partial '"code":"unavailable"'
	local t0
	restart_a
	t0=$EPOCHREALTIME
	wait_for -t 3 b_put_ok k v2
	echo "B wrote again $(ms "$t0" "$EPOCHREALTIME") ms after A answered" >&3
	[ "$(ms "$t0" "$EPOCHREALTIME")" -lt 3000 ]
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	run -0 b_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	kill -0 "$B_PID"
}

@test "a watch on B opened before A's restart delivers every event once, in order, across it" {
	start_a_durable
	start_b
	watch_open "$B" '{"op":"watch","prefix":"w/"}'
	a_req '{"op":"put","key":"w/1","value":"a"}' >/dev/null
	b_req '{"op":"put","key":"w/2","value":"b"}' >/dev/null
	wait_for has_lines 3 "$TESTDIR/w.out"
	restart_a
	# Written on A before B is back: the stream resumes after w/2.
	a_req '{"op":"put","key":"w/3","value":"c"}' >/dev/null
	wait_for b_put_ok w/4 d
	a_req '{"op":"delete","key":"w/1"}' >/dev/null
	watch_end 6
	assert_line --index 0 "$(rv '{"ok":true,"watch":1,"rev":@0}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"w/1","value":"a","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"w/2","value":"b","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"put","key":"w/3","value":"c","version":1,"create_rev":@3,"mod_rev":@3}')"
	assert_line --index 4 "$(rv '{"watch":1,"event":"put","key":"w/4","value":"d","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_line --index 5 "$(rv '{"watch":1,"event":"delete","key":"w/1","mod_rev":@5}')"
	assert_equal "${#lines[@]}" 6
}

@test "several URLs are tried in turn: one where nothing listens is passed over; A moved to the next one is found" {
	start_a_durable
	local a2="$TESTDIR/a2.sock"
	start_b "metad:unix:$TESTDIR/none.sock,unix:$A,unix:$a2"
	run -0 b_req '{"op":"put","key":"k","value":"v1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	restart_a "$a2"
	wait_for b_put_ok k v2
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "a put whose answer A's connection loses (lineproxy): B answers it truly, A applied it once" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --match lost/put --drop-answer 1
	start_b "metad:unix:$P"
	b_req '{"op":"put","key":"before","value":"1"}' >/dev/null
	run -0 b_req '{"id":5,"op":"put","key":"lost/put","value":"v"}'
	assert_output "$(rv '{"id":5,"ok":true,"kv":{"key":"lost/put","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
	run -0 grep -c 'lineproxy: dropped answer 1 ' "$TESTDIR/lineproxy.log"
	assert_output 1
	[ "$(version_on_a lost/put)" = 1 ]
	[ "$(history_len lost/put)" = 1 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@2')"
	# B goes on, at the next revision.
	run -0 b_req '{"op":"put","key":"after","value":"1"}'
	assert_output --partial "$(rv '"rev":@3}')"
}

@test "a txn whose answer A's connection loses (lineproxy): B answers it truly, A applied it once" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --match lost/txn --drop-answer 1
	start_b "metad:unix:$P"
	# Its compare holds once only: applied twice, the second would fail.
	run -0 b_req '{"op":"txn","if":[{"key":"lost/txn","version":0}],"then":[{"op":"put","key":"lost/txn","value":"v"}],"else":[{"op":"get","key":"lost/txn"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"lost/txn","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0}],"rev":@1}')"
	run -0 grep -c 'lineproxy: dropped answer 1 ' "$TESTDIR/lineproxy.log"
	assert_output 1
	[ "$(version_on_a lost/txn)" = 1 ]
	[ "$(history_len lost/txn)" = 1 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@1')"
}

# lost_answers OP N: lineproxy's log holds N dropped answers, each to OP.
lost_answers() {
	run -0 grep -c "^lineproxy: dropped answer [0-9]* (op $1, connection [0-9]*): its connection closed$" \
	    "$TESTDIR/lineproxy.log"
	assert_output "$2"
	assert_equal "$(wc -l <"$TESTDIR/lineproxy.log")" "$2"
}

# lost_proxy LINEPROXY-OPTION...: A, lineproxy in front of it with these
# options, and B using A through it (P).
lost_proxy() {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" "$@"
	start_b "metad:unix:$P"
}

@test "a delete whose answer A's connection loses (lineproxy): B answers it truly, A deleted once" {
	lost_proxy --op delete --drop-answer 1 --drop-answer 2
	b_put_ok lost/del 1
	b_put_ok lost/r/1 1
	b_put_ok lost/r/2 1
	# Applied twice, the second would find nothing: false, 0, rev unmoved.
	run -0 b_req '{"id":"d1","op":"delete","key":"lost/del"}'
	assert_output "$(rv '{"id":"d1","ok":true,"deleted":true,"rev":@4}')"
	run -0 b_req '{"id":"d2","op":"delete","prefix":"lost/r/"}'
	assert_output "$(rv '{"id":"d2","ok":true,"deleted":2,"rev":@5}')"
	lost_answers delete 2
	gone_on_a lost/del
	run -0 a_req '{"op":"list","prefix":"lost/"}'
	assert_output "$(rv '{"ok":true,"kvs":[],"more":false,"rev":@5}')"
	[ "$(history_len lost/del)" = 2 ]
	[ "$(history_len lost/r/1)" = 2 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@5')"
}

@test "an epoch_bump with if_epoch whose answer A's connection loses (lineproxy): B answers it truly, A bumped once" {
	lost_proxy --op epoch_bump --drop-answer 1
	# Applied twice, the second would fail: the epoch is 1, not 0.
	run -0 b_req '{"id":3,"op":"epoch_bump","key":"lost/epoch","owner":"b","if_epoch":0}'
	assert_output "$(rv '{"id":3,"ok":true,"epoch":{"key":"lost/epoch","epoch":1,"owner":"b","version":1,"mod_rev":@1},"rev":@1}')"
	lost_answers epoch_bump 1
	run -0 a_req '{"op":"epoch_get","key":"lost/epoch"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lost/epoch","epoch":1,"owner":"b","version":1,"mod_rev":@1},"rev":@1}')"
	[ "$(history_len lost/epoch)" = 1 ]
	# The next bump is the second.
	run -0 b_req '{"op":"epoch_bump","key":"lost/epoch","owner":"c","if_epoch":1}'
	assert_output --partial "$(rv '"epoch":2,"owner":"c","version":2,"mod_rev":@2},"rev":@2}')"
}

@test "a compact whose answer A's connection loses (lineproxy): B answers it truly, A compacted, its rev unmoved" {
	lost_proxy --op compact --drop-answer 1
	b_put_ok k v1
	b_put_ok k v2
	b_put_ok k v3
	run -0 b_req "$(rv '{"id":9,"op":"compact","rev":@2}')"
	assert_output "$(rv '{"id":9,"ok":true,"compact_rev":@2,"rev":@3}')"
	lost_answers compact 1
	run -0 a_req '{"op":"status"}'
	assert_output --partial "$(rv '"compact_rev":@2')"
	assert_output --partial "$(rv '"rev":@3,')"
	[ "$(history_len k)" = 2 ]
	run -0 b_req '{"op":"put","key":"k","value":"v4"}'
	assert_output --partial "$(rv '"version":4,"create_rev":@1,"mod_rev":@4},"prev_version":3,"rev":@4}')"
}

@test "a lease_grant whose answer A's connection loses (lineproxy), with and without the client's token: B answers the one lease A granted, each" {
	lost_proxy --op lease_grant --drop-answer 1 --drop-answer 2
	run -0 b_req '{"id":4,"op":"lease_grant","ttl_ms":60000}'
	assert_output --regexp '^\{"id":4,"ok":true,"lease":[1-9][0-9]*,"ttl_ms":60000\}$'
	L=$(jq -r .lease <<<"$output")
	# With the client's token, lost too, then sent again by the client.
	run -0 b_req '{"id":5,"op":"lease_grant","ttl_ms":30000,"idem":"lost-g"}'
	assert_output --regexp '^\{"id":5,"ok":true,"lease":[1-9][0-9]*,"ttl_ms":30000\}$'
	L2=$(jq -r .lease <<<"$output")
	[ "$L2" != "$L" ]
	run -0 b_req '{"id":6,"op":"lease_grant","ttl_ms":30000,"idem":"lost-g"}'
	assert_output "{\"id\":6,\"ok\":true,\"lease\":$L2,\"ttl_ms\":30000}"
	lost_answers lease_grant 2
	# Applied twice, A would hold more leases.
	run -0 a_req '{"op":"lease_list"}'
	assert_equal "$(jq -c '[.leases[].lease] | sort' <<<"$output")" \
	    "$(jq -c -n "[$L, $L2] | sort")"
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@0')"
	# It is that lease: a put through B holds it.
	run -0 b_req "{\"op\":\"put\",\"key\":\"lost/l\",\"value\":\"1\",\"lease\":$L}"
	assert_output --partial "$(rv '"rev":@1}')"
	run -0 a_req "{\"op\":\"lease_info\",\"lease\":$L}"
	assert_output --partial '"keys":["lost/l"]'
}

@test "a session lease_grant whose answer A's connection loses (lineproxy): one lease on A, B's, revoked when its client's connection closes" {
	lost_proxy --op lease_grant --drop-answer 1
	session_open
	lost_answers lease_grant 1
	run -0 a_req '{"op":"lease_list"}'
	assert_equal "$(jq -c '[.leases[].lease]' <<<"$output")" "[$SL]"
	run -0 a_req "{\"op\":\"lease_info\",\"lease\":$SL}"
	assert_output --partial '"keys":["s"]'
	exec {SESS[1]}>&-
	wait_for -t 2 gone_on_a s
	run -0 a_req '{"op":"lease_list"}'
	assert_output --partial '"leases":[]'
}

@test "a lease_revoke whose answer A's connection loses (lineproxy): B answers the rev its keys went at, A revoked once" {
	lost_proxy --op lease_revoke --drop-answer 1
	run -0 b_req '{"op":"lease_grant","ttl_ms":60000}'
	L=$(jq -r .lease <<<"$output")
	b_req "{\"op\":\"put\",\"key\":\"lost/a\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	b_req "{\"op\":\"put\",\"key\":\"lost/b\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	# Applied twice, the second would answer not_found.
	run -0 b_req "{\"id\":6,\"op\":\"lease_revoke\",\"lease\":$L}"
	assert_output "$(rv '{"id":6,"ok":true,"rev":@3,"deleted":2}')"
	lost_answers lease_revoke 1
	gone_on_a lost/a
	gone_on_a lost/b
	run -0 a_req '{"op":"history","key":"lost/a"}'
	assert_output --partial "$(rv '{"event":"delete","key":"lost/a","mod_rev":@3}')"
	run -0 a_req '{"op":"history","key":"lost/b"}'
	assert_output --partial "$(rv '{"event":"delete","key":"lost/b","mod_rev":@3}')"
	run -0 a_req '{"op":"lease_list"}'
	assert_output --partial '"leases":[]'
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@3')"
	run -0 b_req "{\"op\":\"put\",\"key\":\"lost/c\",\"value\":\"1\",\"lease\":$L}"
	assert_output --partial '"ok":false'
	assert_output --partial '"code":"not_found"'
	gone_on_a lost/c
}

@test "a put with if_version whose answer A's connection loses (lineproxy): B answers it truly, A applied it once" {
	lost_proxy --match if_version --drop-answer 1
	b_put_ok lost/v 1
	# Applied twice, the second would fail: the version is 2, not 1.
	run -0 b_req '{"id":8,"op":"put","key":"lost/v","value":"2","if_version":1,"idem":"lost-v"}'
	assert_output "$(rv '{"id":8,"ok":true,"kv":{"key":"lost/v","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1,"rev":@2}')"
	lost_answers put 1
	# Sent again by its client (its token): the first answer, again.
	run -0 b_req '{"id":9,"op":"put","key":"lost/v","value":"2","if_version":1,"idem":"lost-v"}'
	assert_output "$(rv '{"id":9,"ok":true,"kv":{"key":"lost/v","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1,"rev":@2}')"
	run -0 a_req '{"op":"get","key":"lost/v"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"lost/v","value":"2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	[ "$(history_len lost/v)" = 2 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@2')"
}

# b_writer W N: N puts of c/W through B, one connection each, one at a
# time; each answered ok is noted as "c/W REV" in $TESTDIR/acked.W.
b_writer() {
	local n ans
	for n in $(seq 1 "$2"); do
		ans=$(b_req "{\"op\":\"put\",\"key\":\"c/$1\",\"value\":\"$n\"}")
		[[ $ans == *'"ok":true'* ]] || continue
		echo "c/$1 $(jq .rev <<<"$ans")" >>"$TESTDIR/acked.$1"
	done
}

# bats test_tags=no-valgrind
@test "kill -9 of A under 4 writers through B, a watcher on B: every acknowledged write seen once, in order; B goes on" {
	start_a_durable
	start_b
	watch_open "$B" '{"op":"watch","prefix":"c/"}'
	local w pids=() last lines_want
	for w in 1 2 3 4; do
		b_writer "$w" 120 &
		pids+=($!)
	done
	BGS="${pids[*]}"
	wait_for -t 20 has_lines 100 "$TESTDIR/w.out"
	kill -9 "$METAD_PID"
	wait "$METAD_PID" 2>/dev/null || true
	METAD_PID=
	metad_spawn METAD_PID "$A" "$TESTDIR/metad.log" \
	    --store "sqlite:$TESTDIR/meta.db"
	for w in "${pids[@]}"; do
		wait "$w"
	done
	BGS=
	# Every write A holds comes to the watch: one event a rev, 1..last.
	last=$(a_req '{"op":"ping"}' | jq .rev)
	lines_want=$((last - R0 + 1))
	watch_end "$lines_want"
	assert_equal "${#lines[@]}" "$lines_want"
	printf '%s\n' "${lines[@]:1}" >"$TESTDIR/events"
	jq -r .mod_rev "$TESTDIR/events" >"$TESTDIR/revs"
	run diff <(seq $((R0 + 1)) "$last") "$TESTDIR/revs"
	assert_success
	# Each acknowledged write is there, at the rev its answer said.
	cat "$TESTDIR"/acked.* | sort >"$TESTDIR/acked"
	[ "$(wc -l <"$TESTDIR/acked")" -gt 300 ]
	jq -r '"\(.key) \(.mod_rev)"' "$TESTDIR/events" | sort >"$TESTDIR/seen"
	run comm -23 "$TESTDIR/acked" "$TESTDIR/seen"
	assert_output ""
	# The versions of each key run 1, 2, ... in the watch: no event twice.
	for w in 1 2 3 4; do
		jq -r "select(.key == \"c/$w\") | .version" "$TESTDIR/events" \
		    >"$TESTDIR/v.$w"
		run diff <(seq 1 "$(wc -l <"$TESTDIR/v.$w")") "$TESTDIR/v.$w"
		assert_success
		# Each put's value once: none applied twice.
		run bash -c "jq -r 'select(.key == \"c/$w\") | .value' \
		    '$TESTDIR/events' | sort | uniq -d"
		assert_output ""
	done
	kill -0 "$B_PID"
}
