#!/usr/bin/env bats
# The etcd backend on a real 3-member etcd cluster on loopback, its members
# killed with kill -9 under concurrent writers and a watcher.  Runs in the
# etcd pass (tests/run-etcd); the cluster is the test's own, the shared
# etcd is not touched.  Prints the stall after each kill as a TAP comment
# (docs/RELIABILITY.md records them).

# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
	testdir
	etcd_cluster_start "$TESTDIR/cluster"
	# The daemon's etcd is the cluster, all three members, the leader
	# first: the member it talks to is the one killed first, so writes in
	# flight lose their replies (the hardest case, every run).
	wait_for leader_known
	local l urls i
	l=$(cat "$TESTDIR/leader")
	urls=${ETCD_CLUSTER_URLS[l]}
	for i in 0 1 2; do
		[ "$i" = "$l" ] || urls+=",${ETCD_CLUSTER_URLS[i]}"
	done
	METAD_TEST_ETCD=${ETCD_CLUSTER_URLS[l]}
	metad_start --store "etcd:$urls"
	A="$SOCK"
	FIRST_PID=$METAD_PID
	WRITERS=()
}

teardown() {
	[ -z "${TESTDIR:-}" ] || touch "$TESTDIR/stop"
	stop_bg ${WRITERS[@]+"${WRITERS[@]}"} "${W_PID:-}"
	metad_stop
	[ -n "${BATS_TEST_COMPLETED:-}" ] || [ -z "${TESTDIR:-}" ] || show_logs
	etcd_cluster_stop
	metad_cleanup
}

# After a failure: what happened when, metad's log, the end of etcd's.
show_logs() {
	local f
	for f in "$TESTDIR/timeline" "$TESTDIR/metad.log" \
	    "$TESTDIR"/cluster/etcd*.log; do
		[ -e "$f" ] || continue
		echo "--- $f" >&2
		tail -n 40 "$f" >&2
	done
}

# Writer W: puts c/W/1, c/W/2, ... each once, --if-absent, until
# $TESTDIR/stop exists, or 3000 puts, or 60 s.  Each put is a line of
# $TESTDIR/w.W: "W I START END RC JSON" (times from $EPOCHREALTIME, the
# answer as metactl -o json printed it).
writer() {
	local w=$1 i=0 t0 out rc end=$((SECONDS + 60))
	while [ ! -e "$TESTDIR/stop" ] && [ "$i" -lt 3000 ] &&
	    [ "$SECONDS" -lt "$end" ]; do
		i=$((i + 1))
		t0=$EPOCHREALTIME
		rc=0
		out=$(mctl -s "$A" -o json --timeout 30s put "c/$w/$i" "v$w.$i" \
		    --if-absent 2>/dev/null) || rc=$?
		printf '%s %s %s %s %s %s\n' "$w" "$i" "$t0" "$EPOCHREALTIME" \
		    "$rc" "${out//$'\n'/ }" >>"$TESTDIR/w.$w"
	done
}

# acked_after T N: at least N puts were acknowledged after time T.
acked_after() {
	[ "$(cat "$TESTDIR"/w.* 2>/dev/null |
	    awk -v t="$1" '$5 == 0 && $4 > t' | wc -l)" -ge "$2" ]
}

# leader_is_not I: a member other than I is the leader.
leader_is_not() {
	leader_known && [ "$(cat "$TESTDIR/leader")" != "$1" ]
}

# leader_known: some member says it is the leader; its index is in
# $TESTDIR/leader.
leader_known() {
	etcd_leader >"$TESTDIR/leader"
}

# stall_ms FROM TO: the longest gap, in ms, between consecutive
# acknowledged puts (all writers) that reaches past FROM and starts
# before TO.
stall_ms() {
	cat "$TESTDIR"/w.* | awk '$5 == 0 { print $4 }' | sort -n |
	    awk -v from="$1" -v to="$2" '
		NR > 1 && $1 > from && prev < to && $1 - prev > max {
			max = $1 - prev
		}
		{ prev = $1 }
		END { printf "%d\n", max * 1000 }'
}

# The writers' puts as a table, $TESTDIR/puts, one a line:
# "KEY RC CODE MOD_REV VERSION UNKNOWN MESSAGE" (UNKNOWN: 1 when the
# answer says the outcome is not known).
puts_table() {
	cat "$TESTDIR"/w.* | jq -R -r '
	    capture("^(?<w>\\S+) (?<i>\\S+) \\S+ \\S+ (?<rc>\\S+) ?(?<j>.*)$")
	    | (.j | fromjson? // {}) as $a
	    | ["c/\(.w)/\(.i)", .rc, ($a.error.code // "-"),
	       ($a.kv.mod_rev // 0), ($a.kv.version // 0),
	       (if ($a.error.message // "") | test("may or may not")
	        then 1 else 0 end),
	       ($a.error.message // "-" | gsub("\\s"; "_"))]
	    | @tsv' >"$TESTDIR/puts"
}

# etcd_kvs: the keys c/... as etcd holds them, asked of member I directly:
# "KEY VALUE VERSION MOD_REVISION" lines in $TESTDIR/etcd.kvs.
etcd_kvs() {
	local from to
	from=$(printf '%sk/c/' "$ETCD_PREFIX" | base64 -w0)
	to=$(printf '%sk/c0' "$ETCD_PREFIX" | base64 -w0)
	curl -sf -m 5 -X POST "${ETCD_CLUSTER_URLS[$1]}/v3/kv/range" \
	    -d "{\"key\":\"$from\",\"range_end\":\"$to\"}" |
	    jq -r --arg p "${ETCD_PREFIX}k/" '.kvs // [] | .[] |
		[(.key | @base64d | ltrimstr($p)), (.value | @base64d),
		 .version, .mod_revision] | @tsv' >"$TESTDIR/etcd.kvs"
}

# The watch has a put for each of the N keys etcd holds.
watch_has() {
	[ "$(grep -c '"event":"put"' "$TESTDIR/watch.raw")" -ge "$1" ]
}

# Every endpoint of the daemon is healthy again.
endpoints_healthy() {
	mctl -s "$A" -o json status |
	    jq -e '[.endpoints[].healthy] == [true, true, true]'
}

@test "etcd cluster: kill -9 the leader, then a follower, under 4 writers: no acknowledged write lost or doubled, the watch sees each once" {
	local w l f back t_kill1 t_leader t_restart t_kill2 t_stop elect resume
	local n_acked n_unavail n_unknown stall1 stall2
	raw_held watch '{"op":"watch","prefix":"c/"}' >"$TESTDIR/watch.raw" &
	W_PID=$!
	until_status watches 1
	for w in 1 2 3 4; do
		writer "$w" &
		WRITERS+=($!)
	done
	wait_for -t 20 acked_after 0 40

	# The leader dies; the two others elect a new one and writes resume.
	wait_for leader_known
	l=$(cat "$TESTDIR/leader")
	t_kill1=$EPOCHREALTIME
	etcd_member_kill "$l"
	echo "kill1 $t_kill1 leader $l" >"$TESTDIR/timeline"
	wait_for -t 20 leader_is_not "$l"
	t_leader=$EPOCHREALTIME
	echo "leader $t_leader $(cat "$TESTDIR/leader")" >>"$TESTDIR/timeline"
	wait_for -t 20 acked_after "$EPOCHREALTIME" 40
	# It comes back before a follower dies: two of three are always up.
	t_restart=$EPOCHREALTIME
	etcd_member_start "$l"
	echo "restart $t_restart $l" >>"$TESTDIR/timeline"
	wait_for -t 20 etcd_member_healthy "$l"
	# The follower to kill is not the one just back: the cluster's quorum
	# needs it.
	back=$l
	wait_for leader_known
	l=$(cat "$TESTDIR/leader")
	for f in 0 1 2; do
		[ "$f" = "$l" ] || [ "$f" = "$back" ] || break
	done
	t_kill2=$EPOCHREALTIME
	etcd_member_kill "$f"
	echo "kill2 $t_kill2 follower $f" >>"$TESTDIR/timeline"
	wait_for -t 20 acked_after "$EPOCHREALTIME" 40
	t_stop=$EPOCHREALTIME
	touch "$TESTDIR/stop"
	echo "stop $t_stop" >>"$TESTDIR/timeline"
	for w in "${WRITERS[@]}"; do
		wait_bg "$w" 60
	done
	WRITERS=()
	etcd_member_start "$f"
	wait_for -t 20 etcd_cluster_healthy

	# What each put was answered.
	puts_table
	n_acked=$(awk '$2 == 0' "$TESTDIR/puts" | wc -l)
	n_unavail=$(awk '$3 == "unavailable"' "$TESTDIR/puts" | wc -l)
	n_unknown=$(awk '$3 == "unavailable" && $6 == 1' "$TESTDIR/puts" | wc -l)
	stall1=$(stall_ms "$t_kill1" "$t_restart")
	stall2=$(stall_ms "$t_kill2" "$t_stop")
	# How long etcd took to have a new leader (as polled), and the first
	# acknowledgement after it.
	elect=$(awk -v a="$t_kill1" -v b="$t_leader" \
	    'BEGIN { printf "%d\n", (b - a) * 1000 }')
	resume=$(cat "$TESTDIR"/w.* | awk -v t="$t_leader" '$5 == 0 && $4 > t {
		if (min == "" || $4 < min) min = $4 }
	    END { printf "%d\n", (min - t) * 1000 }')
	echo "# $n_acked puts acknowledged, $n_unavail unavailable ($n_unknown outcome unknown); stall after the leader's kill: $stall1 ms (a new leader seen after $elect ms, the first put acknowledged $resume ms later); after the follower's: $stall2 ms" >&3
	[ -z "${METAD_CLUSTER_REPORT:-}" ] ||
	    echo "$stall1 $elect $resume $stall2 $n_acked $n_unavail $n_unknown" >>"$METAD_CLUSTER_REPORT"
	# Acknowledged puts made version 1; a put told its own key exists was
	# applied twice; any other answer is wrong (or metad hung: rc 4).
	run awk '$2 == 0 && $5 != 1 || $2 != 0 && $3 != "unavailable"' \
	    "$TESTDIR/puts"
	assert_output ""
	[ "$n_acked" -gt 120 ]

	# etcd holds each acknowledged put, at the rev it was answered, once.
	etcd_kvs "$f"
	run awk 'FNR == NR { if ($2 == 0) acked[$1] = $4; else if ($6 == 1)
		    maybe[$1] = 1; next }
		{ split($1, p, "/"); seen[$1] = 1 }
		$3 != 1 { print "doubled:", $0 }
		$2 != "v" p[2] "." p[3] { print "wrong value:", $0 }
		$1 in acked && $4 != acked[$1] { print "other rev:", $0, acked[$1] }
		!($1 in acked) && !($1 in maybe) { print "told not done:", $0 }
		END { for (k in acked) if (!(k in seen)) print "lost:", k }' \
	    "$TESTDIR/puts" "$TESTDIR/etcd.kvs"
	assert_output ""

	# The same through metad: one get per acknowledged key, pipelined.
	awk '$2 == 0 { printf "{\"op\":\"get\",\"key\":\"%s\"}\n", $1 }' \
	    "$TESTDIR/puts" | socat -t 30 - "UNIX-CONNECT:$A" |
	    jq -r '[.kv.key // "-", .kv.value // "-", .kv.version // 0,
		.kv.mod_rev // 0] | @tsv' >"$TESTDIR/metad.kvs"
	run awk 'FNR == NR { if ($2 == 0) acked[$1] = $4; next }
		{ split($1, p, "/"); n++ }
		!($1 in acked) || $2 != "v" p[2] "." p[3] || $3 != 1 ||
		    $4 != acked[$1] { print "metad has:", $0 }
		END { if (n != length(acked)) print n, "answers for",
		    length(acked), "gets" }' \
	    "$TESTDIR/puts" "$TESTDIR/metad.kvs"
	assert_output ""

	# The watch saw every put etcd holds once, in rev order: the
	# acknowledged ones at their revs.
	wait_for watch_has "$(wc -l <"$TESTDIR/etcd.kvs")"
	release watch
	wait_bg "$W_PID"
	W_PID=
	jq -r 'select(.event != null) | [.event, .key, .mod_rev] | @tsv' \
	    "$TESTDIR/watch.raw" >"$TESTDIR/watch.evs"
	run awk 'FILENAME == ARGV[1] { if ($2 == 0) acked[$1] = $4; next }
		FILENAME == ARGV[2] { held[$1] = $4; next }
		$1 != "put" { print "event:", $0; next }
		$3 <= last { print "out of order:", $0, "after", last }
		$2 in seen { print "twice:", $0 }
		!($2 in held) { print "not in etcd:", $0 }
		$2 in acked && $3 != acked[$2] { print "other rev:", $0 }
		{ seen[$2] = 1; last = $3 }
		END { for (k in held) if (!(k in seen)) print "missed:", k }' \
	    "$TESTDIR/puts" "$TESTDIR/etcd.kvs" "$TESTDIR/watch.evs"
	assert_output ""

	# The same daemon all along, serving, every endpoint healthy again.
	assert_equal "$METAD_PID" "$FIRST_PID"
	kill -0 "$METAD_PID"
	run -0 mctl -s "$A" put after yes
	run -0 mctl -s "$A" get after
	assert_output yes
	wait_for -t 20 endpoints_healthy
}
