#!/usr/bin/env bats
# Watches, waits, history and compaction over the raw protocol
# (metad-protocol(7), WATCHES, wait, history, compact).

load helpers

setup() {
	metad_start "${METAD_EXTRA[@]}"
}

teardown() {
	metad_cleanup
}

@test "a watch replays from from_rev then continues live, in order" {
	put_n a 3
	raw_held w "$(rv '{"op":"watch","prefix":"a","from_rev":@2}')" > "$TESTDIR/out" &
	local bg=$!
	until_status watches 1
	req '{"op":"put","key":"a9","value":"x"}' >/dev/null
	req '{"op":"delete","key":"a1"}' >/dev/null
	req '{"op":"put","key":"b","value":"not watched"}' >/dev/null
	release w
	wait "$bg"
	run cat "$TESTDIR/out"
	assert_line --index 0 "$(rv '{"ok":true,"watch":1,"rev":@3}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"a2","value":"2","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"a3","value":"3","version":1,"create_rev":@3,"mod_rev":@3}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"put","key":"a9","value":"x","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_line --index 4 "$(rv '{"watch":1,"event":"delete","key":"a1","mod_rev":@5}')"
	assert_equal "${#lines[@]}" 5
}

@test "an exact-key watch sees only that key; default from_rev is now" {
	put_n k 2
	raw_held w '{"op":"watch","key":"k1"}' > "$TESTDIR/out" &
	local bg=$!
	until_status watches 1
	req '{"op":"put","key":"k10","value":"x"}' >/dev/null
	req '{"op":"put","key":"k1","value":"y"}' >/dev/null
	release w
	wait "$bg"
	run cat "$TESTDIR/out"
	assert_equal "${#lines[@]}" 2
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"k1","value":"y","version":2,"create_rev":@1,"mod_rev":@4}')"
}

@test "concurrent writers: every event exactly once, revs strictly increasing" {
	raw_held w '{"op":"watch","prefix":""}' > "$TESTDIR/out" &
	local bg=$! w pids=()
	until_status watches 1
	for w in 1 2 3 4; do
		put_n "w$w-" 100 &
		pids+=($!)
	done
	wait "${pids[@]}"
	release w
	wait "$bg"
	run sh -c "grep -c '\"event\":\"put\"' '$TESTDIR/out'"
	assert_output 400
	# mod_revs are @1..@400, each once, in order.
	run sh -c "grep -o '\"mod_rev\":[0-9]*' '$TESTDIR/out' | cut -d: -f2 | tr '\n' ' '"
	assert_output "$(seq $((R0 + 1)) $((R0 + 400)) | tr '\n' ' ')"
}

@test "resuming from the last seen rev + 1 yields exactly the missed events" {
	put_n r 5
	watch_lines 6 "$(rv '{"op":"watch","prefix":"r","from_rev":@1}')" > "$TESTDIR/first"
	last=$(grep -o '"mod_rev":[0-9]*' "$TESTDIR/first" | tail -1 | cut -d: -f2)
	assert_equal "$last" "$(rv @5)"
	# The connection is gone; writes happen meanwhile.
	put_n s 3
	put_n r 7
	watch_lines 8 "{\"op\":\"watch\",\"prefix\":\"r\",\"from_rev\":$((last + 1))}" > "$TESTDIR/second"
	run sh -c "grep -o '\"mod_rev\":[0-9]*' '$TESTDIR/second' | cut -d: -f2 | tr '\n' ' '"
	assert_output "$(seq $((R0 + 9)) $((R0 + 15)) | tr '\n' ' ')"
}

@test "compact drops history; an older from_rev answers compacted" {
	put_n c 10
	run req "$(rv '{"op":"compact","rev":@6}')"
	assert_output "$(rv '{"ok":true,"compact_rev":@6,"rev":@10}')"
	run req "$(rv '{"op":"watch","prefix":"","from_rev":@5}')"
	assert_output --partial '"code":"compacted"'
	assert_output --partial "$(rv '"compact_rev":@6')"
	run watch_lines 6 "$(rv '{"op":"watch","prefix":"","from_rev":@6}')"
	assert_equal "${#lines[@]}" 6
	run req "$(rv '{"op":"compact","rev":@11}')"
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"status"}'
	assert_output --partial "$(rv '"compact_rev":@6')"
}

@test "--history keeps only the last N revisions" {
	metad_stop
	rm -rf "$TESTDIR"; TESTDIR=
	metad_start --history 32
	# A commit never trims a revision of its own batch (its events are
	# still to be delivered): the 200th write comes alone, so that its
	# commit trims to the last 32 revisions.
	put_n h 199
	req '{"op":"put","key":"h200","value":"x"}' >/dev/null
	run req '{"op":"status"}'
	compact=$(echo "$output" | grep -o '"compact_rev":[0-9]*' | cut -d: -f2)
	if store_is etcd; then
		# --history does not compact etcd (metad(8)): the whole
		# history of the test is still there.
		[ "$compact" -le "$R0" ] ||
		    fail "compact_rev $compact is above the test's first rev $R0"
		run watch_lines 201 "$(rv '{"op":"watch","prefix":"","from_rev":@1}')"
		assert_equal "${#lines[@]}" 201
	else
		[ "$compact" -ge 150 ] && [ "$compact" -le 169 ] ||
		    fail "compact_rev $compact is not in 150..169"
	fi
	run req "$(rv '{"op":"watch","prefix":"","from_rev":@169}')"
	assert_output --partial '"ok":true'
}

# bats test_tags=store:durable
@test "history and compact_rev survive a restart" {
	store_is sqlite etcd || skip "the memory store does not outlive its daemon"
	put_n p 4
	req "$(rv '{"op":"compact","rev":@2}')" >/dev/null
	metad_stop
	metad_start
	run watch_lines 4 "$(rv '{"op":"watch","prefix":"","from_rev":@2}')"
	assert_equal "${#lines[@]}" 4
	assert_line --index 1 --partial '"key":"p2"'
	run req "$(rv '{"op":"watch","prefix":"","from_rev":@1}')"
	assert_output --partial '"code":"compacted"'
}

@test "unwatch stops events; an unknown id is not_found" {
	run raw <<'REQS'
{"op":"watch","prefix":""}
{"op":"unwatch","watch":1}
{"op":"put","key":"x","value":"1"}
{"op":"unwatch","watch":1}
REQS
	assert_equal "${#lines[@]}" 4
	assert_line --index 1 '{"ok":true,"watch":1}'
	assert_line --index 2 --partial '"kv":{"key":"x"'
	assert_line --index 3 --partial '"code":"not_found"'
}

@test "watch needs exactly one of key and prefix" {
	run req '{"op":"watch"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","key":"a","prefix":"a"}'
	assert_output --partial '"code":"bad_request"'
}

@test "wait answers at once when the key is already there" {
	req '{"op":"put","key":"w","value":"1"}' >/dev/null
	run req '{"op":"wait","key":"w","version":1,"timeout_ms":1000}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"w","value":"1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
}

@test "wait blocks until the version is reached, then answers in order" {
	raw_held w '{"op":"wait","key":"w","version":2,"timeout_ms":5000,"id":1}' \
	    '{"op":"ping","id":2}' > "$TESTDIR/out" &
	local bg=$!
	# Its connection and status's: the wait is in.
	until_status connections 2
	req '{"op":"put","key":"w","value":"a"}' >/dev/null
	req '{"op":"put","key":"w","value":"b"}' >/dev/null
	release w
	wait "$bg"
	run cat "$TESTDIR/out"
	assert_line --index 0 "$(rv '{"id":1,"ok":true,"kv":{"key":"w","value":"b","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	assert_line --index 1 "$(rv '{"id":2,"ok":true,"rev":@2}')"
}

@test "wait times out with error timeout" {
	run req '{"op":"wait","key":"never","timeout_ms":100}'
	assert_output --partial '"code":"timeout"'
}

@test "1000 watchers on one prefix each receive the event" {
	local c i pids=() watches=()
	for i in $(seq 1 250); do
		watches+=('{"op":"watch","prefix":"fan/"}')
	done
	for c in 1 2 3 4; do
		raw_held fan "${watches[@]}" > "$TESTDIR/fan.$c" &
		pids+=($!)
	done
	until_status watches 1000
	req '{"op":"put","key":"fan/x","value":"go"}' >/dev/null
	release fan
	wait "${pids[@]}"
	run sh -c "cat '$TESTDIR'/fan.* | grep -c '\"event\":\"put\",\"key\":\"fan/x\"'"
	assert_output 1000
	run sh -c "cat '$TESTDIR'/fan.* | grep '\"event\"' | grep -o '^{\"watch\":[0-9]*' | sort -u | wc -l"
	assert_output 1000
}

# bats test_tags=no-valgrind
@test "a watcher that does not read is cancelled, memory stays bounded, nothing is lost" {
	[ -z "${METAD_VALGRIND:-}" ] || skip "its RSS bound does not hold under valgrind"
	metad_stop
	rm -rf "$TESTDIR"; TESTDIR=
	metad_start --max-pending-bytes 1048576
	local big
	big=$(head -c 10000 /dev/zero | tr '\0' v)
	# A watcher whose reader is stuck until "release go": socat blocks on
	# a full pipe.  Its connection stays open until "release stuck".
	raw_held stuck '{"op":"watch","prefix":"big/"}' |
	    { hold_open go; cat > "$TESTDIR/slow"; } &
	local bg=$!
	# A watcher that reads: once it has the last put, metad has handed
	# every event to the stuck one too (on etcd that is later than the
	# acknowledgements: events come from etcd's watch stream).
	timeout 60 "$METACTL" watch big/2500 --count 1 > "$TESTDIR/last" &
	local last=$!
	until_status watches 2
	# 2500 puts of 10 kB: 25 MB through a watcher that never reads.
	for i in $(seq 1 2500); do
		printf '{"op":"put","key":"big/%d","value":"%s"}\n' "$i" "$big"
	done > "$TESTDIR/load"
	timeout 60 socat -t 30 - "UNIX-CONNECT:$SOCK" < "$TESTDIR/load" > "$TESTDIR/acks"
	run grep -c '"ok":true' "$TESTDIR/acks"
	assert_output 2500
	wait "$last" || { release go; fail "the reading watcher did not see big/2500"; }
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$METAD_PID/status")
	echo "# daemon RSS ${rss} kB" >&3
	release go
	# A sanitizer build keeps freed memory in quarantine: no bound there.
	# The memory backend holds the 25 MB of values twice (keys, history).
	local limit=65536
	! store_is memory || limit=$((65536 + 51200))
	[ -n "${SANITIZER:-}" ] || [ "$rss" -lt "$limit" ] ||
	    fail "daemon RSS ${rss} kB is not below $limit kB"
	# Its last line once read: the cancellation.
	wait_for grep -q '"event":"cancelled"' "$TESTDIR/slow"
	release stuck
	wait "$bg"
	run grep -c '"event":"cancelled","reason":"slow_consumer"' "$TESTDIR/slow"
	assert_output 1
	next=$(grep -o '"next_rev":[0-9]*' "$TESTDIR/slow" | cut -d: -f2)
	got=$(grep -c '"event":"put"' "$TESTDIR/slow")
	# Everything before next_rev was delivered, nothing after it.
	assert_equal "$got" "$((next - R0 - 1))"
	# Resume: the rest arrives, each event once.
	raw_held rest "{\"op\":\"watch\",\"prefix\":\"big/\",\"from_rev\":$next}" > "$TESTDIR/rest" &
	bg=$!
	wait_for -t 60 grep -q '"key":"big/2500"' "$TESTDIR/rest"
	release rest
	wait "$bg"
	run grep -c '"event":"put"' "$TESTDIR/rest"
	assert_output "$((2500 - (next - R0) + 1))"
}

@test "a write pipelined after a pending wait is answered after it" {
	printf '%s\n' '{"op":"wait","key":"w","timeout_ms":300,"id":1}' \
	    '{"op":"put","key":"x","value":"1","id":2}' |
	    socat -t 3 - "UNIX-CONNECT:$SOCK" > "$TESTDIR/out"
	run cat "$TESTDIR/out"
	assert_line --index 0 --partial '{"id":1,"ok":false,"error":{"code":"timeout"'
	assert_line --index 1 --partial '{"id":2,"ok":true,'
}
