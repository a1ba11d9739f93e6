#!/usr/bin/env bats
# metactl watch, wait and compact (metactl(1), COMMANDS).

load helpers

setup() {
	metad_start
}

teardown() {
	# A test that failed may leave its metactl behind.
	[ -z "${BG:-}" ] || kill -KILL "$BG" 2>/dev/null || true
	metad_cleanup
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
	run "$METACTL" watch k --prefix p
	assert_failure 2
	run "$METACTL" watch k --count 0
	assert_failure 2
	run "$METACTL" watch k --from-rev x
	assert_failure 2
}

@test "wait returns at once when the key already has the version" {
	mctl put k v1
	mctl put k v2
	run "$METACTL" wait k --version 2
	assert_success
	assert_output v2
	run "$METACTL" -o json wait k
	assert_success
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "wait times out with exit status 1" {
	run "$METACTL" --timeout 200ms wait nope
	assert_failure 1
	assert_output --partial 'timeout'
	mctl put k v
	run "$METACTL" --timeout 200ms wait k --version 2
	assert_failure 1
}

@test "wait blocks until another process writes the version" {
	"$METACTL" --timeout 5s wait k --version 2 > "$TESTDIR/out" &
	BG=$!
	until_status connections 2	# the wait's and status's
	mctl put k first
	mctl put k second
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output second
}

@test "wait --raw prints the exact bytes; --timeout 0 waits; SIGINT is 130" {
	mctl put k abc
	run "$METACTL" wait k --raw
	assert_output abc
	"$METACTL" --timeout 0 wait never > "$TESTDIR/out" &
	BG=$!
	until_status connections 2	# the wait's and status's
	kill -INT "$BG"
	wait_bg "$BG"
	assert_equal "$STATUS" 130
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
