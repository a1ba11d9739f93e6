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
	store_is sqlite etcd remote || skip "the memory store does not outlive its daemon"
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
	store_is sqlite etcd remote || skip "the memory store does not outlive its daemon"
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
	# One message, ours (not getopt's as well), and where to look.
	assert_equal "${#lines[@]}" 2
	assert_line --index 0 'metad: unknown option "--bogus"'
	assert_line --index 1 "Try 'metad --help' for the options."
	run "$METAD" --history
	assert_failure 2
	assert_line --index 0 'metad: option --history needs a value'
	run "$METAD" --daemonize=yes
	assert_failure 2
	assert_line --index 0 'metad: option --daemonize takes no value'
	# A path where a store spec goes: a usage error, the path said once,
	# with the spec it likely meant.
	run "$METAD" --store "$TESTDIR/x.db"
	assert_failure 2
	assert_line --index 0 "metad: invalid value \"$TESTDIR/x.db\" for --store: expected sqlite:PATH, memory, etcd:URL[,URL...] or metad:URL[,URL...] (a database file: sqlite:$TESTDIR/x.db)"
	[ ! -e "$TESTDIR/x.db" ]
	# From the environment: the variable is named.
	METAD_HISTORY=abc run "$METAD"
	assert_failure 2
	assert_line --index 0 'metad: invalid value "abc" in METAD_HISTORY (--history)'
}

@test "--help says what every option does" {
	run "$METAD" --help
	assert_success
	local o n=0
	for o in $(printf '%s\n' "$output" | grep -o -- '^  --[a-z-]*'); do
		# The option's line says something after its argument (or,
		# for a long option, the line below it does).
		printf '%s\n' "$output" | grep -A1 -E -- "^  $o( [A-Z]+)?( |\$)" |
		    grep -Eq -- "^(  $o( [A-Z]+)? +| {26})[a-z(]" ||
		    fail "$o has no description"
		n=$((n + 1))
	done
	[ "$n" -ge 20 ]
	assert_output --partial 'METAD_<NAME>'
	# No line past 79 columns.
	! printf '%s\n' "$output" | grep -q '.\{80\}'
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

# Trace metad's syscalls (strace -f: every thread): is every write
# answered only after an fdatasync of the WAL that began after the write's
# WAL frames were written, and returned?  The requests go one at a time
# (each waits for its answer), so that between two answers only the WAL
# writes of one request happen: single puts (their fsync on the loop, but
# for the first after a txn) and txns of 8 puts (more events than
# SQ_SYNC_INLINE: fsynced by the store's thread while the loop goes on).  Before each txn the loop is left idle long enough for
# a checkpoint due (250 ms after the last write) to be over, so that none writes
# the WAL between the txn's commit and its fsync.
#
# The model: W counts the WAL's pwrites, each once it returned; an
# fdatasync or fsync of the WAL (either descriptor) covers the W it saw
# when it began, once it returned (strace -f splits a call that another
# thread interrupts: "PID fdatasync(... <unfinished ...>", later "PID <...
# fdatasync resumed>) = 0"); an answer is good iff the covered W is the
# current one.  Prints "ok N" (N answers checked), then how many puts were
# covered by a sync of the answering thread (the loop) and how many txns by
# one of another thread; or the first answer sent before its fsync.
fsync_before_ack() {
	strace -f -y -s 300 -e trace=pwrite64,write,writev,fdatasync,fsync \
	    -o "$TESTDIR/trace" "$METAD" --socket "$TESTDIR/st.sock" \
	    --store "sqlite:$TESTDIR/st.db" --pidfile "$TESTDIR/st.pid" "$@" \
	    >/dev/null 2>&1 3>&- &
	local pid=$! i j txn
	daemon_wait "$pid" "$TESTDIR/st.sock" /dev/null || {
		kill -TERM "$(cat "$TESTDIR/st.pid" 2>/dev/null)" "$pid" 2>/dev/null
		return 1
	}
	for i in $(seq 1 8); do
		printf '{"op":"put","key":"k%d","value":"v"}\n' "$i" | one_req
		printf '{"op":"put","key":"j%d","value":"w"}\n' "$i" | one_req
		txn=
		for j in $(seq 1 8); do
			txn="$txn${txn:+,}{\"op\":\"put\",\"key\":\"t$i.$j\",\"value\":\"x\"}"
		done
		sleep 0.4
		printf '{"op":"txn","if":[],"then":[%s]}\n' "$txn" | one_req
	done
	for i in $(seq 1 4); do
		printf '{"op":"put","key":"k%d","value":"again"}\n' "$i" | one_req
	done
	kill -TERM "$(cat "$TESTDIR/st.pid")"	# strace ends with it
	wait "$pid" || true
	awk '
	function covered(w, tid) {
		if (w >= synced) { synced = w; by = tid }
	}
	{ tid = $1 }
	/ pwrite64\(/ && /-wal>/ {
		if (/<unfinished \.\.\.>$/) pw[tid] = 1; else W++
	}
	/<\.\.\. pwrite64 resumed>/ && (tid in pw) { delete pw[tid]; W++ }
	/ (fdatasync|fsync)\(/ && /-wal>/ {
		if (/<unfinished \.\.\.>$/) at[tid] = W
		else if (/\) += 0$/) covered(W, tid)
	}
	/<\.\.\. (fdatasync|fsync) resumed>/ && (tid in at) {
		if (/\) += 0$/) covered(at[tid], tid)
		delete at[tid]
	}
	/socket:\[/ && / (write|writev)\(/ && /prev_version|succeeded/ {
		if (synced < W) { print "answered before fsync: " $0; bad = 1; exit }
		n++
		if (/succeeded/) { txns++; if (by != tid) other++ }
		else { puts++; if (by == tid) loop++ }
	}
	END {
		if (bad) exit
		print "ok " n
		print "puts synced by the loop: " loop + 0 " of " puts + 0
		print "txns synced by another thread: " other + 0 " of " txns + 0
	}' "$TESTDIR/trace"
}

# One request on a connection of its own, its answer awaited.
one_req() {
	socat -t 5 - "UNIX-CONNECT:$TESTDIR/st.sock" > /dev/null
}

# bats test_tags=store:sqlite
@test "--sync full: no put is answered before its WAL write is fsync'd" {
	store_is sqlite || skip "about the sqlite file"
	command -v strace >/dev/null || skip "needs strace"
	run fsync_before_ack
	assert_line --index 0 "ok 28"
	# Both paths were taken: the puts' fsync on the loop, the txns'
	# (8 events) on the store's thread; and the first put after a txn
	# (a group of 8: more clients may be coming) on the thread too, so
	# 12 of the 20 puts on the loop (SQ_SYNC_INLINE).
	assert_line --index 1 "puts synced by the loop: 12 of 20"
	assert_line --index 2 "txns synced by another thread: 8 of 8"
	# The check can fail: with --sync off nothing is fsync'd at all.
	rm -f "$TESTDIR"/st.*
	run fsync_before_ack --sync off
	assert_output --partial "answered before fsync"
}

# bats test_tags=store:sqlite
@test "--history trims, then kill -9: every kept rev reads exactly as written, and each key's history" {
	metad_start --history 40
	local i r k
	for i in $(seq 0 299); do
		if [ $((i % 7)) -eq 3 ]; then
			printf '{"op":"delete","key":"k%d"}\n' $((i * 3 % 10))
		else
			printf '{"op":"put","key":"k%d","value":"v%d"}\n' \
			    $((i % 10)) "$i"
		fi
	done > "$TESTDIR/ops"
	# In batches of 20 (a connection each): a commit trims only revs
	# of the batches before it.
	for i in $(seq 1 20 300); do
		sed -n "$i,$((i + 19))p" "$TESTDIR/ops" |
		    socat -t 30 - "UNIX-CONNECT:$SOCK"
	done > "$TESTDIR/answers"
	[ "$(grep -c '"ok":true' "$TESTDIR/answers")" -eq 300 ]
	# The model: "rev key value" of each write that made a rev (- deleted).
	paste -d ' ' "$TESTDIR/ops" "$TESTDIR/answers" | awk '
		/"deleted":false/ { next }
		{
			match($0, /"key":"k[0-9]"/); k = substr($0, RSTART + 7, 2)
			v = "-"
			if (match($0, /"value":"v[0-9]+"/))
				v = substr($0, RSTART + 9, RLENGTH - 10)
			match($0, /"rev":[0-9]+}$/)
			print substr($0, RSTART + 6, RLENGTH - 7), k, v
		}' > "$TESTDIR/model"
	[ "$(wc -l < "$TESTDIR/model")" -gt 250 ]
	metad_stop KILL
	metad_start --history 40
	local c rev
	c=$(status_field compact_rev)
	rev=$(status_field rev)
	[ "$c" -gt 200 ]
	[ "$rev" -eq "$(tail -1 "$TESTDIR/model" | cut -d ' ' -f 1)" ]
	for r in $(seq "$c" "$rev"); do
		for k in 0 1 2 3 4 5 6 7 8 9; do
			printf '{"op":"get","key":"k%d","rev":%d}\n' "$k" "$r"
		done
	done > "$TESTDIR/gets"
	for k in 0 1 2 3 4 5 6 7 8 9; do
		printf '{"op":"history","key":"k%d"}\n' "$k"
	done >> "$TESTDIR/gets"
	socat -t 30 - "UNIX-CONNECT:$SOCK" < "$TESTDIR/gets" > "$TESTDIR/got"
	# Each answer against the model: the key's last write at or before r;
	# each key's history: its writes from compact_rev on, in order.
	run awk -v c="$((c + 0))" '
		FNR == NR { rv[NR] = $1 + 0; key[NR] = $2; val[NR] = $3; n = NR; next }
		/"op":"get"/ {
			match($0, /"key":"k[0-9]"/); k = substr($0, RSTART + 7, 2)
			match($0, /"rev":[0-9]+}/); r = substr($0, RSTART + 6, RLENGTH - 7) + 0
			want = "null"
			for (i = 1; i <= n && rv[i] <= r; i++)
				if (key[i] == k)
					want = val[i] == "-" ? "null" : val[i]
			got = "null"
			if (match($0, /"value":"v[0-9]+"/))
				got = substr($0, RSTART + 9, RLENGTH - 10)
			if (got != want) { print "at " r " " k ": " got " not " want; bad = 1 }
			next
		}
		/"op":"history"/ {
			match($0, /"key":"k[0-9]"/); k = substr($0, RSTART + 7, 2)
			want = ""
			for (i = 1; i <= n; i++)
				if (key[i] == k && rv[i] >= c)
					want = want " " rv[i] (val[i] == "-" ? ":del" : ":" val[i])
			got = ""
			s = $0
			while (match(s, /"event":"(put|delete)"[^}]*"mod_rev":[0-9]+/)) {
				e = substr(s, RSTART, RLENGTH)
				match(e, /"mod_rev":[0-9]+/); m = substr(e, RSTART + 10)
				if (e ~ /"event":"delete"/) got = got " " m ":del"
				else {
					match(e, /"value":"v[0-9]+"/)
					got = got " " m ":" substr(e, RSTART + 9, RLENGTH - 10)
				}
				s = substr(s, index(s, e) + length(e))
			}
			if (got != want) { print "history " k ":" got " not" want; bad = 1 }
		}
		END { exit bad }' "$TESTDIR/model" <(paste -d ' ' "$TESTDIR/gets" "$TESTDIR/got")
	assert_success
	metad_stop
	run sqlite3 "$DB" 'PRAGMA integrity_check'
	assert_output ok
}

# bats test_tags=store:sqlite
@test "--sync full: a commit's WAL frames reach the file in one write, not two a page" {
	store_is sqlite || skip "about the sqlite file"
	command -v strace >/dev/null || skip "needs strace"
	local v pid
	v=$(head -c 1500 /dev/zero | tr '\0' x)
	strace -f -y -e trace=pwrite64 -o "$TESTDIR/trace" "$METAD" \
	    --socket "$TESTDIR/st.sock" --store "sqlite:$TESTDIR/st.db" \
	    --pidfile "$TESTDIR/st.pid" >/dev/null 2>&1 3>&- &
	pid=$!
	daemon_wait "$pid" "$TESTDIR/st.sock" /dev/null || {
		kill -TERM "$(cat "$TESTDIR/st.pid" 2>/dev/null)" "$pid" 2>/dev/null
		false
	}
	# One txn of 12 puts of 1500 bytes: one commit of 5 or more pages.
	local ops="" i
	for i in $(seq 1 12); do
		ops="$ops${ops:+,}{\"op\":\"put\",\"key\":\"k$i\",\"value\":\"$v\"}"
	done
	local out
	out=$(socat -t 5 - "UNIX-CONNECT:$TESTDIR/st.sock" \
	    <<<"{\"op\":\"txn\",\"then\":[$ops]}")
	kill -TERM "$(cat "$TESTDIR/st.pid")"
	wait "$pid" || true
	assert_equal "$(jq -r .succeeded <<<"$out")" true
	# SQLite alone writes each frame as a 24-byte header and its page.
	run awk '/-wal>/ && /pwrite64\(/ {
		n = split($0, a, ", "); size = a[n - 1] + 0
		if (size == 24) hdr++
		if (size >= 5 * 4120) big++
	} END { printf "headers alone %d, writes of 5 frames or more %d\n", hdr, big }' "$TESTDIR/trace"
	assert_output --regexp '^headers alone 0, writes of 5 frames or more [1-9]'
}

# bats test_tags=store:sqlite
@test "the database, its WAL and the directories metad makes are 0600/0700 whatever the umask" {
	store_is sqlite || skip "about the sqlite file"
	testdir
	DB="$TESTDIR/new/dir/meta.db"
	SOCK="$TESTDIR/metad.sock"
	export METACTL_SOCKET="$SOCK"
	umask 022
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run mctl put k v
	assert_success
	[ "$(stat -c %a "$DB")" = 600 ]
	[ "$(stat -c %a "$DB-wal")" = 600 ]
	[ "$(stat -c %a "$TESTDIR/new/dir")" = 700 ]
	[ "$(stat -c %a "$TESTDIR/new")" = 700 ]
}
