#!/usr/bin/env bash
# metad on etcd against metad on sqlite (the baseline), and against etcd
# driven directly (wrk on its JSON gateway, bench/etcd_direct.lua: the same
# keys, value size and requests in flight), measured in the same run: each
# workload BENCH_RUNS times (3), interleaved, and the median of each.
# Starts its own etcd on loopback ports with a temporary data directory
# (run by "make bench-etcd").
#
# Then the reads (metad-protocol(7), CONSISTENCY): metad's view of etcd
# (linearizable and serializable gets) against etcd driven directly, and on sqlite a get at a
# past revision against a plain get.
#
# Knobs (environment): BENCH_RUNS (3), BENCH_DURATION (seconds per run, 3),
# BENCH_PART (all; reads: only the reads; writes: only the puts against
# etcd direct and against etcd's own txn of metad's shape),
# BENCH_ETCD_FLAGS (the etcd's own flags, for both metad and etcd direct;
# default "--backend-batch-limit 1000", as metad(8) advises for etcd 3.4:
# etcd 3.4 copies its backend's read buffer in every write txn, and this
# bounds the buffer; "" runs etcd's defaults).
set -euo pipefail

. "$(dirname "$0")/bench-lib.sh"
ROOT=$BENCH_ROOT
RUNS=${BENCH_RUNS:-3}
DUR=${BENCH_DURATION:-3}
MB=$ROOT/bin/metabench
METAD=$ROOT/bin/metad
MCTL=$ROOT/bin/metactl
PART=${BENCH_PART:-all}
bench_needs bench-etcd.sh "$MB" "$METAD" -- etcd jq curl wrk bc
bench_tmp bench-etcd

. "$ROOT/tests/etcd.sh"
ETCD_FLAGS=${BENCH_ETCD_FLAGS---backend-batch-limit 1000}
echo "etcd $(etcd --version | awk '/etcd Version/ {print $3}'), flags: ${ETCD_FLAGS:-(defaults)}"
etcd_start "$TMP"
PIDS+=("$ETCD_PID")
E=$ETCD_URL
"$METAD" --socket "$TMP/sqlite.sock" --store "sqlite:$TMP/meta.db" \
    --log-level warn 2>>"$TMP/metad.log" &
PIDS+=($!)
"$METAD" --socket "$TMP/etcd.sock" --store "etcd:$E" --log-level warn \
    2>>"$TMP/metad.log" &
PIDS+=($!)
for s in sqlite etcd; do
	for _ in $(seq 1 200); do
		[ -S "$TMP/$s.sock" ] && break
		sleep 0.025
	done
done

median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench ID LABEL JQ-FIELD METABENCH-ARGS...: one table row.
bench() {
	local name=$1 label=$2 field=$3 r s
	shift 3
	for r in $(seq 1 "$RUNS"); do
		for s in sqlite etcd; do
			"$MB" -s "$TMP/$s.sock" "$@" --duration "$DUR" -o json |
			    jq -r "$field" >>"$TMP/$name.$s"
		done
	done
	local a b
	a=$(median <"$TMP/$name.sqlite")
	b=$(median <"$TMP/$name.etcd")
	printf '| %s | %s | %s | %.3f |\n' "$label" "$a" "$b" \
	    "$(echo "$b / $a" | bc -l)"
}

# A put load on the daemon while a one-client get runs: the get's p99.
under_load() {
	local r s pid
	for r in $(seq 1 "$RUNS"); do
		for s in sqlite etcd; do
			"$MB" -s "$TMP/$s.sock" put --clients 4 --keys 1000 \
			    --no-preload --duration $((DUR + 1)) -o json >/dev/null &
			pid=$!
			sleep 0.5
			"$MB" -s "$TMP/$s.sock" get --clients 1 --keys 1000 \
			    --duration "$DUR" -o json | jq -r .latency_us.p99 \
			    >>"$TMP/load.$s"
			wait "$pid"
		done
	done
	local a b
	a=$(median <"$TMP/load.sqlite")
	b=$(median <"$TMP/load.etcd")
	printf '| get p99 us, 1 client, under a 4-client put load | %s | %s | %.3f |\n' \
	    "$a" "$b" "$(echo "$b / $a" | bc -l)"
}

if [ "$PART" != reads ]; then
if [ "$PART" = all ]; then
echo "| workload (median of $RUNS x ${DUR} s) | sqlite | etcd | etcd / sqlite |"
echo "| --- | --- | --- | --- |"
bench put1 "put ops/s, 1 client" .ops_per_s put --clients 1 --keys 1000
bench put8 "put ops/s, 8 clients" .ops_per_s put --clients 8 --keys 1000
bench get1 "get ops/s, 1 client" .ops_per_s get --clients 1 --keys 1000
bench get8 "get ops/s, 8 clients" .ops_per_s get --clients 8 --keys 1000
bench lat1 "get p50 us, 1 client" .latency_us.p50 get --clients 1 --keys 1000
under_load
fi

# direct ID LABEL OP CLIENTS [WRK_OP]: metad on etcd (metabench) against
# etcd driven directly (wrk, doing WRK_OP: OP by default), interleaved;
# ops/s.
direct() {
	local name=$1 label=$2 op=$3 n=$4 wop=${5:-$3} r t a b
	t=$((n < 2 ? 1 : 2))
	for r in $(seq 1 "$RUNS"); do
		"$MB" -s "$TMP/etcd.sock" "$op" --clients "$n" --keys 1000 \
		    --duration "$DUR" -o json | jq -r .ops_per_s \
		    >>"$TMP/$name.metad"
		OP=$wop KEYS=1000 wrk -t "$t" -c "$n" -d "${DUR}s" \
		    -s "$ROOT/bench/etcd_direct.lua" "$E" |
		    awk '/^Requests\/sec:/ { print $2 }' >>"$TMP/$name.direct"
	done
	a=$(median <"$TMP/$name.direct")
	b=$(median <"$TMP/$name.metad")
	printf '| %s | %s | %s | %.3f |\n' "$label" "$a" "$b" \
	    "$(echo "$b / $a" | bc -l)"
}

fi

# Keys for the gets on both sides.
OP=put KEYS=1000 wrk -t 1 -c 4 -d 1s -s "$ROOT/bench/etcd_direct.lua" "$E" \
    >/dev/null
if [ "$PART" != reads ]; then
echo
echo "| workload (median of $RUNS x ${DUR} s) | etcd direct | metad on etcd | metad / direct |"
echo "| --- | --- | --- | --- |"
direct dput1 "put ops/s, 1 client" put 1
direct dput16 "put ops/s, 16 clients" put 16
direct dput64 "put ops/s, 64 clients" put 64
if [ "$PART" = all ]; then
	direct dget1 "get ops/s, 1 client (linearizable)" get 1
	direct dget16 "get ops/s, 16 clients (linearizable)" get 16
	direct dget64 "get ops/s, 64 clients (linearizable)" get 64
fi
# The same puts against what an exactly-once write costs etcd itself: a txn
# of metad's shape (a compare, a slot put, the put with prev_kv).
echo
echo "| workload (median of $RUNS x ${DUR} s) | etcd direct, txn of metad's shape | metad on etcd | metad / direct txn |"
echo "| --- | --- | --- | --- |"
direct tput16 "put ops/s, 16 clients" put 16 txn
direct tput64 "put ops/s, 64 clients" put 64 txn
fi
[ "$PART" != writes ] || exit 0

# read ID LABEL CLIENTS METAD-OPTION SERIAL: gets through metad's view
# (metabench, with --serializable or not) against etcd driven directly
# (wrk, SERIAL=1: serializable), interleaved; ops/s.
read_direct() {
	local name=$1 label=$2 n=$3 opt=$4 serial=$5 r t a b
	t=$((n < 2 ? 1 : 2))
	for r in $(seq 1 "$RUNS"); do
		"$MB" -s "$TMP/etcd.sock" get --clients "$n" --keys 1000 \
		    --no-preload $opt --duration "$DUR" -o json |
		    jq -r .ops_per_s >>"$TMP/$name.metad"
		OP=get SERIAL=$serial KEYS=1000 wrk -t "$t" -c "$n" \
		    -d "${DUR}s" -s "$ROOT/bench/etcd_direct.lua" "$E" |
		    awk '/^Requests\/sec:/ { print $2 }' >>"$TMP/$name.direct"
	done
	a=$(median <"$TMP/$name.direct")
	b=$(median <"$TMP/$name.metad")
	printf '| %s | %s | %s | %.3f |\n' "$label" "$a" "$b" \
	    "$(echo "$b / $a" | bc -l)"
}

# past ID LABEL CLIENTS: on sqlite, gets at the current state against gets
# at revision $PAST (before every key was written again), interleaved.
past() {
	local name=$1 label=$2 n=$3 r a b
	for r in $(seq 1 "$RUNS"); do
		"$MB" -s "$TMP/sqlite.sock" get --clients "$n" --keys 1000 \
		    --no-preload --duration "$DUR" -o json |
		    jq -r .ops_per_s >>"$TMP/$name.now"
		"$MB" -s "$TMP/sqlite.sock" get --clients "$n" --keys 1000 \
		    --no-preload --at-rev "$PAST" --duration "$DUR" -o json |
		    jq -r .ops_per_s >>"$TMP/$name.past"
	done
	a=$(median <"$TMP/$name.now")
	b=$(median <"$TMP/$name.past")
	printf '| %s | %s | %s | %.3f |\n' "$label" "$a" "$b" \
	    "$(echo "$a / $b" | bc -l)"
}

# metad's keys for its view (the same names as etcd direct's).
"$MB" -s "$TMP/etcd.sock" preload --keys 1000 -o json >/dev/null
echo
echo "| reads (median of $RUNS x ${DUR} s) | etcd direct | metad on etcd (view) | metad / direct |"
echo "| --- | --- | --- | --- |"
read_direct vlin1 "get ops/s, 1 client: linearizable, both" 1 "" 0
read_direct vlin16 "get ops/s, 16 clients: linearizable, both" 16 "" 0
read_direct vser16 "get ops/s, 16 clients: metad serializable, etcd linearizable" 16 --serializable 0
read_direct vserser16 "get ops/s, 16 clients: serializable, both" 16 --serializable 1

# sqlite: 1000 keys, each written again after $PAST.
"$MB" -s "$TMP/sqlite.sock" preload --keys 1000 -o json >/dev/null
PAST=$("$MCTL" -s "$TMP/sqlite.sock" -o json ping | jq -r .rev)
"$MB" -s "$TMP/sqlite.sock" preload --keys 1000 -o json >/dev/null
echo
echo "| sqlite (median of $RUNS x ${DUR} s) | get ops/s | get at a past rev ops/s | cost ratio (past / plain) |"
echo "| --- | --- | --- | --- |"
past past1 "1 client" 1
past past16 "16 clients" 16
