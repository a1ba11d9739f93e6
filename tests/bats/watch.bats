#!/usr/bin/env bats
# Watches, history and compaction (metad-protocol(7), WATCHES, compact):
# over the raw socket and through metactl watch and compact.

load helpers

setup() {
	metad_start "${METAD_EXTRA[@]}"
}

teardown() {
	# A test that failed may leave its metactl behind.
	[ -z "${BG:-}" ] || kill -KILL "$BG" 2>/dev/null || true
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
	store_is sqlite etcd remote || skip "the memory store does not outlive its daemon"
	put_n p 4
	req "$(rv '{"op":"compact","rev":@2}')" >/dev/null
	metad_stop
	metad_start
	# The metad backend's replica, loaded at the used daemon's compact
	# rev, holds the history from the rev after it (metad(8)).
	local from=2
	! store_is remote || from=3
	run watch_lines $((6 - from)) "$(rv '{"op":"watch","prefix":"","from_rev":@'$from'}')"
	assert_equal "${#lines[@]}" $((6 - from))
	assert_line --index 1 --partial "\"key\":\"p$from\""
	run req "$(rv '{"op":"watch","prefix":"","from_rev":@'$((from - 1))'}')"
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

@test "watch needs a key or a prefix" {
	run req '{"op":"watch"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"watch","from_rev":1}'
	assert_output --partial '"code":"bad_request"'
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
	# The memory backend holds the 25 MB of values twice (keys, history),
	# and so does the metad backend's replica.
	local limit=65536
	! store_is memory remote || limit=$((65536 + 51200))
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

@test "watch --count N prints N events written by another process, then exits 0" {
	"$METACTL" watch k --count 3 > "$TESTDIR/out" 2> "$TESTDIR/err" &
	BG=$!
	until_status watches 1
	mctl put k one
	mctl put other x
	mctl put k "two words"
	mctl del k
	mctl put k after
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_line --index 0 "$(rv 'PUT k v1 rev @1 one')"
	assert_line --index 1 "$(rv 'PUT k v2 rev @3 "two words"')"
	assert_line --index 2 "$(rv 'DELETE k rev @4')"
	assert_equal "${#lines[@]}" 3
}

@test "watch --prefix sees keys under the prefix only; --prefix \"\" sees all" {
	"$METACTL" watch --prefix app/ --count 2 > "$TESTDIR/out" &
	BG=$!
	"$METACTL" watch --prefix "" --count 3 > "$TESTDIR/all" &
	local all=$!
	until_status watches 2
	mctl put app/a 1
	mctl put apple 2
	mctl put app/b 3
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	wait_bg "$all"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output "$(rv 'PUT app/a v1 rev @1 1
PUT app/b v1 rev @3 3')"
	run cat "$TESTDIR/all"
	assert_equal "${#lines[@]}" 3
	assert_line --index 1 "$(rv 'PUT apple v1 rev @2 2')"
}

@test "watch --from-rev replays the history, then goes on live" {
	mctl put a 1
	mctl put b 2
	mctl del a
	run "$METACTL" watch --prefix "" --from-rev "$(rv @2)" --count 2
	assert_success
	assert_output "$(rv 'PUT b v1 rev @2 2
DELETE a rev @3')"
	"$METACTL" watch --prefix "" --from-rev "$(rv @3)" --count 2 > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	mctl put c 3
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output "$(rv 'DELETE a rev @3
PUT c v1 rev @4 3')"
}

@test "watch text output quotes odd keys and values, binary as b64:" {
	mctl put "sp ace" ""
	printf 'a\nb' | mctl put nl - >/dev/null
	printf '\000\377' | mctl put bin - >/dev/null
	mctl put q '"x'
	mctl put p '(not found)'
	run "$METACTL" watch --prefix "" --from-rev "$(rv @1)" --count 5
	assert_success
	assert_line --index 0 "$(rv 'PUT "sp ace" v1 rev @1 ""')"
	assert_line --index 1 "$(rv 'PUT nl v1 rev @2 "a\nb"')"
	assert_line --index 2 "$(rv 'PUT bin v1 rev @3 b64:AP8=')"
	assert_line --index 3 "$(rv 'PUT q v1 rev @4 "\"x"')"
	assert_line --index 4 "$(rv 'PUT p v1 rev @5 "(not found)"')"
}

@test "watch -o json prints the events as JSON Lines, without the watch id" {
	mctl put k v
	printf '\377' | mctl put k - >/dev/null
	mctl del k
	run "$METACTL" -o json watch k --from-rev "$(rv @1)" --count 3
	assert_success
	assert_line --index 0 "$(rv '{"event":"put","key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 1 "$(rv '{"event":"put","key":"k","value_b64":"/w==","version":2,"create_rev":@1,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"event":"delete","key":"k","mod_rev":@3}')"
	assert_equal "${#lines[@]}" 3
}

@test "watch ends cleanly on SIGINT with exit status 130, events flushed" {
	"$METACTL" watch k > "$TESTDIR/out" 2> "$TESTDIR/err" &
	BG=$!
	until_status watches 1
	mctl put k v
	wait_for test -s "$TESTDIR/out"
	kill -INT "$BG"
	wait_bg "$BG"
	assert_equal "$STATUS" 130
	run cat "$TESTDIR/out"
	assert_output "$(rv 'PUT k v1 rev @1 v')"
	run cat "$TESTDIR/err"
	assert_output ''
	until_status watches 0
}

@test "--timeout does not end a watch, only bounds its start" {
	"$METACTL" --timeout 100ms watch k --count 1 > "$TESTDIR/out" &
	BG=$!
	until_status watches 1
	sleep 1		# well past the --timeout: the watch must outlive it
	mctl put k late
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output "$(rv 'PUT k v1 rev @1 late')"
}

@test "watch exits 4 with a message when metad goes away" {
	"$METACTL" watch k > "$TESTDIR/out" 2> "$TESTDIR/err" &
	BG=$!
	until_status watches 1
	metad_stop KILL
	wait_bg "$BG"
	assert_equal "$STATUS" 4
	run cat "$TESTDIR/err"
	assert_output --partial 'closed the connection'
}

@test "watch on a closed stdout (| head -1) ends quietly with status 0" {
	(
		set -o pipefail
		"$METACTL" watch k 2> "$TESTDIR/err" | head -1 > "$TESTDIR/out"
		echo "$? ${PIPESTATUS[*]}" > "$TESTDIR/status"
	) &
	BG=$!
	until_status watches 1
	# metactl finds stdout closed when it writes the event after the one
	# head took: put until it did.
	local i=0
	put_until_gone() {
		i=$((i + 1))
		mctl put k "v$i"
		[ -s "$TESTDIR/out" ] && status_is watches 0
	}
	wait_for put_until_gone
	wait_bg "$BG"
	until_status watches 0
	run cat "$TESTDIR/out"
	assert_output "$(rv 'PUT k v1 rev @1 v1')"
	run cat "$TESTDIR/err"
	assert_output ''
	# EPIPE is the end of what was wanted, not SIGPIPE's 141.
	run cat "$TESTDIR/status"
	assert_output '0 0 0'
}

@test "a slow watcher is resumed transparently: every event exactly once, in order" {
	metad_stop
	# At log level info metad says when it cancels a slow watcher.
	metad_start --max-pending-bytes 65536 --log-level info
	local n=5000 fifo="$TESTDIR/fifo" value
	value=$(head -c 1000 /dev/zero | tr '\0' x)
	mkfifo "$fifo"
	# The reader opens the pipe at once but reads nothing until metad has
	# cancelled the watch of a metactl stuck on writing to it.
	{
		wait_for -t 60 grep -q 'cancelling watches (slow_consumer)' \
		    "$TESTDIR/metad.log" || true
		cat
	} < "$fifo" > "$TESTDIR/out" &
	local reader=$!
	"$METACTL" watch --prefix s/ --count "$n" > "$fifo" 2> "$TESTDIR/err" &
	BG=$!
	until_status watches 1
	put_n s/ "$n" "$value"
	wait_bg "$BG" 60
	assert_equal "$STATUS" 0
	wait_bg "$reader" 10
	run grep -c 'slow consumer' "$TESTDIR/err"
	assert_output 1
	for i in $(seq 1 "$n"); do
		printf 'PUT s/%d v1 rev %d %s\n' "$i" "$((R0 + i))" "$value"
	done > "$TESTDIR/expected"
	run cmp "$TESTDIR/expected" "$TESTDIR/out"
	assert_success
}

@test "watch from a compacted rev exits 5 with a message" {
	mctl put k 1
	mctl put k 2
	mctl put k 3
	run mctl compact "$(rv @3)"
	assert_success
	assert_output "$(rv @3)"
	run "$METACTL" watch k --from-rev "$(rv @1)"
	assert_failure 5
	assert_output --partial 'compacted'
	assert_output --partial "$(rv 'compact_rev @3')"
	run "$METACTL" watch k --from-rev "$(rv @3)" --count 1
	assert_success
	assert_output "$(rv 'PUT k v3 rev @3 3')"
}

@test "watch usage errors exit 2" {
	run "$METACTL" watch
	assert_failure 2
	run "$METACTL" watch k --progress 5
	assert_failure 2
	run "$METACTL" watch k --count 0
	assert_failure 2
	run "$METACTL" watch k --from-rev x
	assert_failure 2
}

@test "compact prints the compacted rev; above the current rev is an error" {
	mctl put a 1
	mctl put a 2
	run mctl compact "$(rv @2)"
	assert_success
	assert_output "$(rv @2)"
	run mctl -o json compact "$(rv @2)"
	assert_output "$(rv '{"ok":true,"compact_rev":@2,"rev":@2}')"
	run mctl compact "$(rv @99)"
	assert_failure 5
	run mctl compact x
	assert_failure 2
}
