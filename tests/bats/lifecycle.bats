#!/usr/bin/env bats
# The daemon's life: sockets, signals, restart, durability.  They run on
# every backend but those about what a store keeps across a restart (tag
# store:durable, not on memory) and about the sqlite file itself (tag
# store:sqlite).

load helpers

setup() {
	testdir
}

teardown() {
	metad_cleanup
}

# bats test_tags=store:durable
@test "data, versions and rev survive a restart" {
	store_is sqlite etcd || skip "the memory store does not outlive its daemon"
	metad_start
	req '{"op":"put","key":"a","value":"1"}' >/dev/null
	req '{"op":"put","key":"a","value":"2"}' >/dev/null
	req '{"op":"put","key":"b","value":"x"}' >/dev/null
	req '{"op":"delete","key":"b"}' >/dev/null
	metad_stop
	metad_start
	run req '{"op":"get","key":"a"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","value":"2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@4}')"
	run req '{"op":"put","key":"b","value":"y"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"b","version":1,"create_rev":@5,"mod_rev":@5},"prev_version":0,"rev":@5}')"
}

@test "SIGTERM removes the socket and exits 0" {
	metad_start
	kill -TERM "$METAD_PID"
	local rc=0
	wait "$METAD_PID" || rc=$?
	METAD_PID=
	assert_equal "$rc" 0
	[ ! -e "$SOCK" ]
}

# On etcd a write whose transaction is still out when the drain's 2 s end
# can land unanswered (its client sees the connection close), as when
# etcd's reply is lost: that is the etcd backend's exactly-once work.
# bats test_tags=store:sqlite
@test "SIGTERM in the middle of pipelined writes: every write that landed was answered, every answered one landed" {
	store_is sqlite || skip "about the sqlite file"
	metad_start
	# 2000 pipelined puts (about 110 kB: the client's writes all fit in the
	# socket, so it goes on reading whatever happens); SIGTERM once the
	# first answers came, while the daemon is still in the middle of them.
	seq 1 2000 | awk '{ printf "{\"op\":\"put\",\"key\":\"s/%d\",\"value\":\"x\"}\n", $1 }' |
	    socat -t 10 - "UNIX-CONNECT:$SOCK" >"$TESTDIR/answers" 2>/dev/null &
	local client=$!
	wait_for has_lines 100 "$TESTDIR/answers"
	kill -TERM "$METAD_PID"
	wait "$METAD_PID" || true
	METAD_PID=
	wait "$client" || true
	local answered landed
	answered=$(grep -c '"ok":true' "$TESTDIR/answers")
	metad_start
	landed=$(mctl status | sed -n 's/^keys: //p')
	[ "$answered" -gt 0 ]
	assert_equal "$landed" "$answered"
}

@test "refuses to start on a socket a live daemon answers" {
	metad_start
	run "$METAD" --socket "$SOCK" --store memory
	assert_failure
	assert_output --partial "already running"
	run req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}

@test "removes a stale socket and starts" {
	metad_start
	metad_stop KILL
	[ -S "$SOCK" ]
	metad_start
	run req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}

# bats test_tags=store:durable
@test "kill -9 during concurrent writes loses no acknowledged write" {
	store_is sqlite etcd || skip "the memory store does not outlive its daemon"
	metad_start
	local w pids=()
	for w in 1 2 3 4; do
		(
			i=0
			while [ $i -lt 400 ]; do
				i=$((i + 1))
				if v=$("$METACTL" put "w$w/$i" "val-$w-$i" 2>/dev/null); then
					echo "w$w/$i val-$w-$i $v"
				else
					exit 0
				fi
			done
		) > "$TESTDIR/acked.$w" &
		pids+=($!)
	done
	# Kill it once the writes are well under way.
	acked_at_least() {
		[ "$(cat "$TESTDIR"/acked.* | wc -l)" -ge "$1" ]
	}
	wait_for acked_at_least 40
	metad_stop KILL
	wait "${pids[@]}"
	cat "$TESTDIR"/acked.* > "$TESTDIR/acked"
	# Something must have been acknowledged for the test to mean anything.
	[ "$(wc -l < "$TESTDIR/acked")" -gt 10 ]
	metad_start
	local key val ver
	while read -r key val ver; do
		run "$METACTL" get "$key"
		assert_success
		assert_output "$val"
	done < "$TESTDIR/acked"
	metad_stop
	store_is sqlite || return 0
	run sqlite3 "$DB" 'PRAGMA integrity_check'
	assert_output ok
}

# bats test_tags=store:sqlite
@test "a second daemon on the same database refuses to start" {
	store_is sqlite || skip "about the sqlite file"
	metad_start
	run "$METAD" --socket "$TESTDIR/other.sock" --store "sqlite:$DB"
	assert_failure
	assert_output --partial "locked"
	run req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}

@test "the default socket lives in \$XDG_RUNTIME_DIR" {
	XDG_RUNTIME_DIR="$TESTDIR" "$METAD" --store memory 2>/dev/null &
	METAD_PID=$!
	SOCK="$TESTDIR/metad.sock"
	wait_for test -S "$SOCK"
	run stat -c %a "$SOCK"
	assert_output 600
}

@test "options come from METAD_* environment variables" {
	METAD_MAX_VALUE_BYTES=4 metad_start
	run req '{"op":"put","key":"k","value":"12345"}'
	assert_output --partial '"code":"value_too_large"'
}

@test "bad options are a usage error" {
	run "$METAD" --sync sometimes
	assert_failure 2
	assert_output --partial 'invalid value "sometimes" for --sync'
	run "$METAD" --bogus
	assert_failure 2
}

@test "METAD_DAEMONIZE=1 forks, writes the pidfile, and the daemon serves" {
	SOCK="$TESTDIR/d.sock"
	# The daemon keeps stderr: send it to a file, and close bats' fd 3.
	METAD_DAEMONIZE=1 "$METAD" --socket "$SOCK" --store memory \
	    --pidfile "$TESTDIR/pid" 2>>"$TESTDIR/metad.log" 3>&-
	METAD_PID=$(cat "$TESTDIR/pid")		# teardown stops it if we fail
	run req '{"op":"ping"}'
	assert_output '{"ok":true,"rev":0}'
	kill -TERM "$METAD_PID"
	# It exits removing its pidfile (it is not our child: no wait).
	wait_for test ! -e "$TESTDIR/pid"
	METAD_PID=
}

# Trace metad's syscalls: is every put answered only after an fdatasync of
# the WAL that followed the put's WAL writes?  Prints "ok N" (N answers
# checked) or the first answer sent while the WAL was not yet synced.
fsync_before_ack() {
	strace -f -y -s 300 -e trace=pwrite64,write,writev,fdatasync,fsync \
	    -o "$TESTDIR/trace" "$METAD" --socket "$TESTDIR/st.sock" \
	    --store "sqlite:$TESTDIR/st.db" --pidfile "$TESTDIR/st.pid" "$@" \
	    >/dev/null 2>&1 3>&- &
	local pid=$! i
	daemon_wait "$pid" "$TESTDIR/st.sock" /dev/null || {
		kill -TERM "$(cat "$TESTDIR/st.pid" 2>/dev/null)" "$pid" 2>/dev/null
		return 1
	}
	for i in $(seq 1 20); do
		printf '{"op":"put","key":"k%d","value":"v"}\n{"op":"put","key":"j%d","value":"w"}\n' "$i" "$i"
	done | socat -t 5 - "UNIX-CONNECT:$TESTDIR/st.sock" > /dev/null
	kill -TERM "$(cat "$TESTDIR/st.pid")"	# strace ends with it
	wait "$pid" || true
	awk '
	/-wal>/ && /pwrite64\(/ { dirty = 1 }
	/-wal>/ && /(fdatasync|fsync)\(/ { dirty = 0 }
	/socket:\[/ && /prev_version/ && /(write|writev)\(/ {
		if (dirty) { print "answered before fsync: " $0; bad = 1; exit }
		n++
	}
	END { if (!bad) print "ok " n }' "$TESTDIR/trace"
}

# bats test_tags=store:sqlite
@test "--sync full: no put is answered before its WAL write is fsync'd" {
	store_is sqlite || skip "about the sqlite file"
	command -v strace >/dev/null || skip "needs strace"
	run fsync_before_ack
	assert_output --regexp '^ok [1-9][0-9]*$'
	# The check can fail: with --sync off nothing is fsync'd at all.
	rm -f "$TESTDIR"/st.*
	run fsync_before_ack --sync off
	assert_output --partial "answered before fsync"
}
