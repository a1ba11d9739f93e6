#!/usr/bin/env bats
# The etcd backend: several daemons on one etcd, an etcd outage, writers
# outside metad.  Runs in the etcd pass (tests/run-etcd, METAD_TEST_STORE=etcd).

# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
	metad_start
	A="$SOCK"
}

teardown() {
	[ -z "${FROZEN:-}" ] || kill -CONT "$ETCD_PID" 2>/dev/null || true
	[ -z "${METAD_FROZEN:-}" ] || kill -CONT "$METAD_PID" 2>/dev/null || true
	stop_bg "${B_PID:-}" "${W_PID:-}" "${PROXY_PID:-}"
	metad_cleanup
}

# A second daemon on the same etcd and prefix: socket $B.
start_b() {
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log"
}

@test "etcd: two daemons on one etcd see each other's writes" {
	start_b
	run -0 mctl -s "$A" put k from-a
	run -0 mctl -s "$B" get k
	assert_output from-a
	run -0 mctl -s "$B" put k from-b
	assert_output 2
	run -0 mctl -s "$A" get k
	assert_output from-b
	# A precondition checked by one daemon sees the other's write.
	run -3 mctl -s "$A" put k x --if-version 1
	run -0 mctl -s "$B" del k --if-version 2
	run -1 mctl -s "$A" get k
}

@test "etcd: a watch on one daemon sees puts made through the other" {
	start_b
	mctl -s "$A" put w/0 before
	mctl -s "$A" -o json watch --prefix w/ --count 3 >"$TESTDIR/watch.out" &
	W_PID=$!
	until_status watches 1
	mctl -s "$B" put w/1 one
	mctl -s "$A" put w/2 two
	mctl -s "$B" del w/1
	wait "$W_PID"
	W_PID=
	run jq -r '"\(.event) \(.key) \(.value)"' "$TESTDIR/watch.out"
	assert_output "put w/1 one
put w/2 two
delete w/1 null"
}

@test "etcd: an if_epoch race across two daemons has exactly one winner" {
	start_b
	local round wins pa pb
	mctl -s "$A" epoch bump lead --owner init >/dev/null
	for round in 1 2 3 4 5 6 7 8; do
		mctl -s "$A" epoch bump lead --owner a --if-epoch "$round" \
		    >"$TESTDIR/a.$round" 2>/dev/null &
		pa=$!
		mctl -s "$B" epoch bump lead --owner b --if-epoch "$round" \
		    >"$TESTDIR/b.$round" 2>/dev/null &
		pb=$!
		wait "$pa" "$pb" || true
		wins=$(cat "$TESTDIR/a.$round" "$TESTDIR/b.$round" | wc -l)
		assert_equal "$wins" 1
		run -0 mctl -s "$B" epoch get lead
		assert_output --partial "$((round + 1))"
	done
}

@test "etcd: concurrent bumps through two daemons hand out each epoch once" {
	start_b
	local i s pids=()
	for i in $(seq 1 20); do
		s=$A
		[ $((i % 2)) -eq 0 ] && s=$B
		mctl -s "$s" epoch bump e --owner "o$i" >>"$TESTDIR/epochs" &
		pids+=($!)
	done
	wait "${pids[@]}"
	run sort -n "$TESTDIR/epochs"
	assert_output "$(seq 1 20)"
}

@test "etcd: status lists the endpoints and their health" {
	run -0 mctl -o json status
	assert_output --partial "\"endpoints\":[{\"url\":\"$ETCD_URL\",\"healthy\":true}]"
	assert_output --partial '"backend":"etcd"'
}

@test "etcd: status text shows the endpoints as aligned lines, URL and health; -o json is the daemon's answer" {
	local dead=http://127.0.0.1:1 url
	# A second daemon on the same etcd, with a URL nothing listens on.
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log" --store "etcd:$ETCD_URL,$dead"
	run -0 mctl -s "$B" status
	assert_line 'backend: etcd'
	# After the name: value lines, "endpoints:" and one line per URL, in
	# the order given, the health in one column.
	url=$(printf '%-*s' "${#ETCD_URL}" "$dead")
	run -0 sed -n '/^endpoints:$/,$p' <<<"$output"
	assert_output "endpoints:
  $ETCD_URL  healthy
  $url  unhealthy"
	run -0 mctl -s "$B" -o json status
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,.*,"backend":"etcd","endpoints":\[\{"url":"'"$ETCD_URL"'","healthy":true\},\{"url":"'"$dead"'","healthy":false\}\],"view":"on: [^"]*"\}$'
}

# Keep a watch (raw protocol, one connection) on prefix o/ open in the
# background until "release watch"; its lines go to $TESTDIR/watch.raw.
raw_watch() {
	raw_held watch '{"op":"watch","prefix":"o/"}' >"$TESTDIR/watch.raw" &
	W_PID=$!
	until_status watches 1
}

# The watch has a put for every write in $TESTDIR/written.
watch_has_written() {
	[ "$(grep -c '"event":"put"' "$TESTDIR/watch.raw")" -ge \
	    "$(wc -l <"$TESTDIR/written")" ]
}

# freeze_etcd: SIGSTOP the test's etcd and wait until it is stopped (the
# signal is asynchronous: a request sent at once could still be served).
freeze_etcd() {
	kill -STOP "$ETCD_PID"
	FROZEN=1
	wait_for etcd_stopped
}

etcd_stopped() {
	[ "$(ps -o stat= -p "$ETCD_PID" | cut -c1)" = T ]
}

# N requests started in the background reached metad: their connections
# on $A are accepted and read (ss), or they have ended ($TESTDIR/rc.*).
requests_in() {
	local open done
	open=$(ss -xH src "$A" | awk '$3 == 0' | wc -l)
	done=$(find "$TESTDIR" -maxdepth 1 -name 'rc.*' | wc -l)
	[ $((open + done)) -ge "$1" ]
}

# Restart the test's daemon (socket $A) on an etcd of its own: a test that
# stops or freezes etcd must not do it to the shared one.
own_etcd() {
	metad_stop
	etcd_stop
	unset METAD_TEST_ETCD ETCD_URL ETCD_CLIENT_PORT ETCD_PEER_PORT
	etcd_start "$TESTDIR/own"
	R0=	# revisions are the new etcd's
	metad_start
}

@test "etcd: an outage under load answers unavailable, then writes and watches resume" {
	own_etcd
	local i ok=0 unavail=0 rc
	raw_watch
	for i in $(seq 1 20); do
		mctl -s "$A" put "o/$i" "v$i" >/dev/null && echo "o/$i" >>"$TESTDIR/written"
	done
	etcd_stop
	for i in $(seq 21 40); do
		rc=0
		mctl -s "$A" put "o/$i" "v$i" >/dev/null 2>"$TESTDIR/err" || rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "o/$i" >>"$TESTDIR/written"
		else
			assert_equal "$rc" 5
			grep -q unavailable "$TESTDIR/err"
			unavail=$((unavail + 1))
		fi
	done
	[ "$unavail" -gt 0 ]
	kill -0 "$METAD_PID"		# no crash
	etcd_start "$TESTDIR/own"	# the same ports and data
	for i in $(seq 41 60); do
		wait_for mctl -s "$A" put "o/$i" "v$i"
		echo "o/$i" >>"$TESTDIR/written"
	done
	run -0 mctl -s "$A" get o/60
	assert_output v60
	# The watch saw every acknowledged write, once, in order.
	wait_for watch_has_written
	release watch
	wait_bg "$W_PID"
	W_PID=
	run bash -c "grep '\"event\":\"put\"' '$TESTDIR/watch.raw' | jq -r .key"
	assert_output "$(cat "$TESTDIR/written")"
	kill -0 "$METAD_PID"
}

@test "etcd: with a writer outside metad moving etcd's revision, answers carry the revs the writes got" {
	# Another program writes its own keys on the same etcd as fast as it
	# can (at most 600 writes): etcd's revision moves between the
	# read a metad write is decided on and its commit.
	local other i out mr er bad=0
	other=$(printf 'other/x' | base64)
	for i in $(seq 1 600); do
		curl -sf -X POST "$ETCD_URL/v3/kv/put" \
		    -d "{\"key\":\"$other\",\"value\":\"$(printf '%s' "$i" | base64)\"}" \
		    >/dev/null || break
	done &
	W_PID=$!
	for i in $(seq 1 40); do
		out=$(req "{\"op\":\"txn\",\"then\":[{\"op\":\"put\",\"key\":\"k$i\",\"value\":\"v\"},{\"op\":\"put\",\"key\":\"j$i\",\"value\":\"v\"}]}")
		mr=$(jq -r '.results[0].kv.mod_rev' <<<"$out")
		[ "$(jq -r .rev <<<"$out")" = "$mr" ]
		[ "$(jq -r '.results[1].kv.create_rev' <<<"$out")" = "$mr" ]
		er=$(curl -sf -X POST "$ETCD_URL/v3/kv/range" \
		    -d "{\"key\":\"$(printf '%sk/k%s' "$ETCD_PREFIX" "$i" | base64 -w0)\"}" |
		    jq -r '.kvs[0].mod_revision')
		[ "$mr" = "$er" ] || {
			echo "k$i: metad answered mod_rev $mr, etcd has $er" >&2
			bad=$((bad + 1))
		}
		# A read after the answer reports a rev no older than the write.
		out=$(req "{\"op\":\"get\",\"key\":\"k$i\"}")
		[ "$(jq -r .rev <<<"$out")" -ge "$mr" ]
	done
	stop_bg "$W_PID"
	W_PID=
	assert_equal "$bad" 0
}

@test "etcd: while etcd does not answer, the daemon serves on and waiting requests fail together" {
	own_etcd
	mctl -s "$A" put k v >/dev/null
	# A frozen etcd accepts connections and never answers: the first call
	# waits for its timeout (2 s); the requests queued behind it must not
	# each wait as long, or they would all outlive their client's.
	freeze_etcd
	local i pids=()
	for i in 1 2 3 4 5 6 7 8; do
		(
			rc=0
			mctl -s "$A" --timeout 5 get k >/dev/null 2>"$TESTDIR/err.$i" || rc=$?
			echo "$rc" >"$TESTDIR/rc.$i"
		) &
		pids+=($!)
	done
	# A put that reads its key first (a plain put is sent at once, and
	# its outcome with a frozen etcd is unknown: it may land when etcd
	# wakes; dropproxy.bats covers that).
	(
		rc=0
		mctl -s "$A" --timeout 5 put --if-absent k2 x >/dev/null 2>&1 ||
		    rc=$?
		echo "$rc" >"$TESTDIR/rc.put"
	) &
	pids+=($!)
	# Reads and writes wait for etcd without holding the daemon: a ping,
	# which needs no etcd, is answered meanwhile.
	wait_for requests_in 9
	run -0 mctl -s "$A" --timeout 1 ping
	wait "${pids[@]}"
	run cat "$TESTDIR"/rc.*
	assert_output "$(printf '5\n%.0s' 1 2 3 4 5 6 7 8 9)"
	run cat "$TESTDIR"/err.*
	assert_line --index 0 --partial 'unavailable: etcd is unreachable'
	kill -CONT "$ETCD_PID"
	FROZEN=
	wait_for mctl -s "$A" get k
	run -0 mctl -s "$A" get k
	assert_output v
	# The write that could not read its key wrote nothing.
	run -1 mctl -s "$A" get k2
	run -0 mctl -s "$A" put k w
	assert_output 2
}

# ended N: N requests started in the background have ended ($TESTDIR/rc.*).
ended() {
	[ "$(find "$TESTDIR" -maxdepth 1 -name 'rc.*' | wc -l)" -ge "$1" ]
}

# ping_ms: one ping's round trip on $A, in whole milliseconds (rounded up).
ping_ms() {
	mctl -s "$A" --timeout 1 ping | awk '{ t = $5; sub("ms", "", t);
	    printf "%d\n", t == int(t) ? t : int(t) + 1 }'
}

@test "etcd: frozen, no kind of request holds the daemon: other connections' pings stay under 50 ms" {
	own_etcd
	local i kind n=0
	for i in 1 2 3 4 5; do
		mctl -s "$A" put "k$i" "v$i" >/dev/null
	done
	# A new daemon on the same prefix: the history above is older than its
	# cache, so a watch from it is replayed from etcd.
	metad_stop
	metad_start
	A="$SOCK"
	freeze_etcd
	# Each kind that needs etcd, the first waiting out its 2 s timeout.
	for kind in "get k1" "ls" "put k9 x" "epoch get e" "epoch bump e" \
	    "status" "wait k9 --timeout 3s" "compact $(rv @2)" \
	    "watch --prefix k --from-rev $(rv @1) --count 5"; do
		n=$((n + 1))
		(
			rc=0
			mctl -s "$A" --timeout 5 $kind >/dev/null 2>&1 || rc=$?
			echo "$rc" >"$TESTDIR/rc.$n"
		) &
	done
	(
		rc=0
		printf '%s\n' '{"op":"txn","if":[],"then":[{"op":"put","key":"t","value":"x"}]}' |
		    mctl -s "$A" --timeout 5 txn >/dev/null 2>&1 || rc=$?
		echo "$rc" >"$TESTDIR/rc.txn"
	) &
	wait_for requests_in $((n + 1))
	for i in $(seq 1 10); do
		run -0 ping_ms
		[ "$output" -lt 50 ] || fail "ping $i took $output ms"
	done
	kill -CONT "$ETCD_PID"
	FROZEN=
	wait_for ended $((n + 1))
	run -0 mctl -s "$A" --timeout 5 ping
}

@test "etcd: SIGTERM waits for a write out at etcd past the 2 s drain, and answers it" {
	own_etcd
	local p rc
	mctl -s "$A" put k v >/dev/null
	freeze_etcd
	(
		rc=0
		mctl -s "$A" --timeout 20 put k2 x >"$TESTDIR/put.out" \
		    2>"$TESTDIR/put.err" || rc=$?
		echo "$rc" >"$TESTDIR/rc.put"
	) &
	p=$!
	wait_for requests_in 1
	kill -TERM "$METAD_PID"
	# Longer than the drain's 2 s: the write is still out (its txn timed
	# out at 2 s, and is being looked up) when etcd wakes.
	sleep 3
	kill -CONT "$ETCD_PID"
	FROZEN=
	wait "$p"
	run cat "$TESTDIR/rc.put" "$TESTDIR/put.out" "$TESTDIR/put.err"
	assert_output "0
1"
	# The drain ended, exit 0 (not under "run": a subshell cannot wait).
	rc=0
	wait "$METAD_PID" || rc=$?
	assert_equal "$rc" 0
	METAD_PID=
	metad_start
	A="$SOCK"
	run -0 mctl -s "$A" -o json get k2
	assert_equal "$(jq -r '[.kv.value, .kv.version] | join(" ")' <<<"$output")" "x 1"
}

# etcd_put KEY VALUE: a put straight into etcd, under the test daemon's
# prefix, as a writer outside metad would; prints etcd's new revision.
etcd_put() {
	curl -sf -X POST "$ETCD_URL/v3/kv/put" \
	    -d "{\"key\":\"$(printf '%sk/%s' "$ETCD_PREFIX" "$1" | base64 -w0)\",\"value\":\"$(printf '%s' "$2" | base64 -w0)\"}" |
	    jq -r .header.revision
}

@test "etcd: a compaction that passes metad's event stream cancels the live watches with compacted, then events go on" {
	own_etcd
	local c i
	raw_watch
	run -0 mctl -s "$A" put o/1 one
	wait_for grep -q '"key":"o/1"' "$TESTDIR/watch.raw"
	# Put metad's event stream behind a compaction.  Freezing metad alone
	# would not: its stream is current, so etcd sends each write into the
	# stream's socket at once (metad reads them after SIGCONT), and a
	# compaction never cancels a current etcd watch.  So, with metad
	# frozen, etcd restarts (the stream's connection breaks), takes writes
	# under metad's prefix and compacts them away; on SIGCONT metad
	# reopens its stream from the revision after the last it read, which
	# is compacted: etcd cancels that watch, naming its compact revision.
	kill -STOP "$METAD_PID"
	METAD_FROZEN=1
	etcd_stop
	etcd_start "$TESTDIR/own"	# the same ports and data
	for i in 2 3 4; do
		c=$(etcd_put "o/$i" "v$i")
	done
	curl -sf -X POST "$ETCD_URL/v3/kv/compaction" \
	    -d "{\"revision\":\"$c\",\"physical\":true}" >/dev/null
	kill -CONT "$METAD_PID"
	METAD_FROZEN=
	# Not a silent gap: the watch is told, with the rev to start again
	# from (etcd compacted at c, and drops a delete made at c: so c + 1).
	wait_for grep -q '"event":"cancelled"' "$TESTDIR/watch.raw"
	release watch
	wait_bg "$W_PID"
	W_PID=
	run jq -c 'del(.rev)' "$TESTDIR/watch.raw"
	assert_output "{\"ok\":true,\"watch\":1}
{\"watch\":1,\"event\":\"put\",\"key\":\"o/1\",\"value\":\"one\",\"version\":1,\"create_rev\":$(rv @1),\"mod_rev\":$(rv @1)}
{\"watch\":1,\"event\":\"cancelled\",\"reason\":\"compacted\",\"compact_rev\":$((c + 1))}"
	run -0 status_field compact_rev
	assert_output "$((c + 1))"
	# The stream goes on from there: a new watch sees the next write, and
	# the write is answered with its events delivered.
	mctl -s "$A" -o json watch --prefix o/ --count 1 >"$TESTDIR/w2.out" &
	W_PID=$!
	until_status watches 1
	run -0 mctl -s "$A" put o/5 five
	wait_bg "$W_PID"
	W_PID=
	run jq -r '"\(.event) \(.key) \(.value)"' "$TESTDIR/w2.out"
	assert_output "put o/5 five"
	run -0 mctl -s "$A" get o/3
	assert_output v3
}

# dropproxy: a proxy in front of the test's etcd, on a free port, that
# forwards every request but drops etcd's replies to metad's write txns
# (they commit; metad hears nothing, as when the member it talks to dies
# right after committing).  Sets PROXY_URL, PROXY_PID.
dropproxy() {
	proxy_spawn "$ETCD_URL" -n -1
}

# lossy: restart the test's daemon (socket $A) on the proxy first, then
# etcd itself (the next member), so that its next write's reply is lost.
lossy() {
	metad_stop
	metad_start --store "etcd:$PROXY_URL,$ETCD_URL"
	A="$SOCK"
}

# etcd_rev: etcd's current revision, asked directly.
etcd_rev() {
	curl -sf "$ETCD_URL/v3/kv/range" -d '{"key":"AA=="}' |
	    jq -r '.header.revision'
}

@test "etcd: a write whose reply is lost is applied exactly once and answered with what happened" {
	dropproxy
	local before
	# Each kind of write, its reply lost: the answer must be the truth,
	# and etcd must hold the write once (one revision, one version).
	lossy
	mctl -s "$A" put e2 x >/dev/null	# for the delete below
	lossy
	before=$(etcd_rev)
	run -0 mctl -s "$A" -o json put n1 v --if-absent
	assert_equal "$(jq -r .kv.version <<<"$output")" 1
	assert_equal "$(jq -r .rev <<<"$output")" $((before + 1))
	assert_equal "$(etcd_rev)" $((before + 1))
	lossy
	run -0 mctl -s "$A" put n1 w --if-version 1
	assert_output 2
	lossy
	run -0 mctl -s "$A" -o json epoch bump lead --if-epoch 0 --owner me
	assert_equal "$(jq -c '[.epoch.epoch, .epoch.owner]' <<<"$output")" '[1,"me"]'
	lossy
	run -0 mctl -s "$A" -o json epoch bump term
	assert_equal "$(jq -r .epoch.epoch <<<"$output")" 1
	lossy
	before=$(etcd_rev)
	run -0 mctl -s "$A" -o json put fresh x
	assert_equal "$(jq -r .kv.version <<<"$output")" 1
	assert_equal "$(etcd_rev)" $((before + 1))
	lossy
	run -0 mctl -s "$A" del e2
	assert_output 1
	# What etcd holds, through a daemon talking to etcd directly.
	metad_stop
	metad_start
	A="$SOCK"
	local k
	for k in n1:2 lead:1 term:1 fresh:1; do
		run -0 mctl -s "$A" -o json get "${k%:*}"
		assert_equal "$(jq -r .kv.version <<<"$output")" "${k#*:}"
	done
	run -0 mctl -s "$A" get n1
	assert_output w
	run -1 mctl -s "$A" get e2
	# Each of those writes lost its reply.
	[ "$(grep -c dropped "$TESTDIR/proxy.log")" -ge 6 ]
}

@test "etcd: compact R keeps the events of R, a delete's too, for a daemon that reads them back from etcd" {
	mctl -s "$A" put k a >/dev/null
	mctl -s "$A" del k >/dev/null
	run -0 mctl -s "$A" compact "$(rv @2)"
	# A new daemon has none of it in its cache: it replays from etcd.
	metad_stop
	metad_start
	A="$SOCK"
	run -0 status_field compact_rev
	assert_output "$(rv @2)"
	run watch_lines 2 "$(rv '{"op":"watch","key":"k","from_rev":@2}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"delete","key":"k","mod_rev":@2}')"
	run req "$(rv '{"op":"watch","key":"k","from_rev":@1}')"
	assert_output --partial '"code":"compacted"'
}

@test "etcd: a txn of 128 puts, and one comparing 128 existing keys, fit etcd's default --max-txn-ops" {
	local i k ops= cmps=
	# etcd here runs with its default limit, 128 (tests/etcd.sh).
	for i in $(seq 1 128); do
		ops="$ops{\"op\":\"put\",\"key\":\"big/$i\",\"value\":\"v$i\"},"
	done
	run -0 req "{\"op\":\"txn\",\"then\":[${ops%,}]}"
	assert_output --partial '"ok":true,"succeeded":true'
	# Each put created its key (the puts' prev_kv, from nested txns).
	assert_equal "$(jq -c '[.results[] | .kv.version] | unique' <<<"$output")" '[1]'
	for k in 1 64 65 128; do
		run -0 mctl -s "$A" -o json get "big/$k"
		assert_equal "$(jq -r '[.kv.value, .kv.version] | join(" ")' <<<"$output")" "v$k 1"
	done
	# 128 compares on existing keys: the txn reads 128 found keys.
	for i in $(seq 1 128); do
		cmps="$cmps{\"key\":\"big/$i\",\"version\":1},"
	done
	ops=${ops//\"value\":\"v/\"value\":\"w}
	run -0 req "{\"op\":\"txn\",\"if\":[${cmps%,}],\"then\":[${ops%,}]}"
	assert_output --partial '"ok":true,"succeeded":true'
	assert_equal "$(jq -c '[.results[] | .kv.version] | unique' <<<"$output")" '[2]'
	run -0 mctl -s "$A" -o json get big/128
	assert_equal "$(jq -r '[.kv.value, .kv.version] | join(" ")' <<<"$output")" "w128 2"
}

# metad-protocol(7), LIMITS (value_too_large): with --max-value-bytes above
# what etcd takes in one request (its --max-request-bytes, 1.5 MiB by
# default), a put etcd refuses for its size is value_too_large, not internal.
# bats test_tags=store:etcd
@test "etcd: a value etcd refuses for its size is value_too_large, nothing written" {
	store_is etcd || skip "about etcd's request limit"
	metad_stop
	metad_start --max-value-bytes 4194304
	head -c 2097152 /dev/zero | tr '\0' x >"$TESTDIR/2m"
	run mctl -o json put big --file "$TESTDIR/2m"
	assert_failure 5
	assert_line --index 0 --partial '{"ok":false,"error":{"code":"value_too_large","message":"etcd refused the write as too large'
	run mctl -o json get big
	assert_failure 1
	run mctl put small v
	assert_success
}
