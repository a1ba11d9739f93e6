#!/usr/bin/env bash
# Durable puts of metad on sqlite (--sync full) side by side with Redis
# (appendonly, appendfsync always) in one run (issue 18), and metad's gets
# for the record: `make bench-redis`.  Both on Unix sockets, 100-byte values
# over 20000 keys; metad driven by metabench, Redis by redis-benchmark; the
# runs interleaved, every figure the median of BENCH_RUNS runs.
#
# Knobs: BENCH_RUNS (3), BENCH_DURATION (seconds a metad run, 3),
# BENCH_OUT (build/bench/redis), BENCH_BEFORE (another metad binary, e.g.
# main's, measured in the same rounds: a before/after column).  Writes the
# table to $BENCH_OUT/summary.md; "per round" is the median of each round's
# ratio to the Redis run next to it.
set -euo pipefail

. "$(dirname "$0")/bench-lib.sh"
ROOT=$BENCH_ROOT
RUNS=${BENCH_RUNS:-3}
DUR=${BENCH_DURATION:-3}
OUT=${BENCH_OUT:-$ROOT/build/bench/redis}
MB=$ROOT/bin/metabench
METAD=$ROOT/bin/metad
METACTL=$ROOT/bin/metactl
TMP=$(mktemp -d /tmp/metad-bench-redis.XXXXXX)
declare -A PIDS=()

for c in redis-server redis-benchmark jq; do
	command -v "$c" >/dev/null || {
		echo "bench-redis.sh: needs $c (scripts/deps.sh)" >&2; exit 1; }
done
for b in "$MB" "$METAD" "$METACTL"; do
	[ -x "$b" ] || { echo "bench-redis.sh: $b missing" >&2; exit 1; }
done
mkdir -p "$OUT"
rm -f "$OUT"/*.txt "$OUT"/summary.md

cleanup() {
	local n
	[ -z "$BENCH_PID" ] || kill "$BENCH_PID" 2>/dev/null || true
	for n in "${!PIDS[@]}"; do
		kill -TERM "${PIDS[$n]}" 2>/dev/null || true
		wait "${PIDS[$n]}" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

wait_sock() {	# wait_sock CMD...: until CMD answers
	bench_wait "$@" && return 0
	echo "bench-redis.sh: did not start: $*" >&2
	exit 1
}

metad_start() {	# metad_start NAME ARGS... (METAD_BIN: the binary)
	local name=$1; shift
	"${METAD_BIN:-$METAD}" --socket "$TMP/$name.sock" --log-level warn "$@" \
	    2>>"$TMP/$name.log" &
	PIDS[$name]=$!
	wait_sock "$METACTL" -s "$TMP/$name.sock" ping
}

stop() {
	kill -TERM "${PIDS[$1]}"
	wait "${PIDS[$1]}" || true
	unset "PIDS[$1]"
}

# redis_put CLIENTS: SETs/s of a fresh Redis, about DUR seconds of them.
redis_put() {
	local n=$(( $1 == 1 ? 4000 : $1 == 16 ? 25000 : 60000 ))
	rm -rf "$TMP/redis"
	mkdir -p "$TMP/redis"
	redis-server --port 0 --unixsocket "$TMP/r.sock" --appendonly yes \
	    --appendfsync always --save '' --dir "$TMP/redis" \
	    >>"$TMP/redis.log" 2>&1 &
	PIDS[redis]=$!
	wait_sock redis-cli -s "$TMP/r.sock" ping
	n=$(( n * DUR / 3 ))
	redis-benchmark -s "$TMP/r.sock" -t set -d 100 -r 20000 -c "$1" \
	    -n "$n" --csv | awk -F'"' '$2 == "SET" { print $4 }'
	stop redis
}

metad_put() {	# metad_put CLIENTS: puts/s on a fresh database
	bench_fresh_put "${METAD_BIN:-$METAD}" "$1" 20000 100 "$DUR" "$TMP" \
	    >"$TMP/put"
	cut -d' ' -f1 "$TMP/put"
}

med() {	# med FILE: the median of its lines
	bench_median <"$1"
}

# rmed A B: the median of the rounds' A / B (a round's runs are adjacent in
# time, so its ratio shares the load of that moment).
rmed() {
	paste "$1" "$2" | awk '{ print $1 / $2 }' >"$TMP/ratios"
	med "$TMP/ratios"
}

for r in $(seq "$RUNS"); do
	for c in 1 16 64; do
		echo "== run $r, $c clients" >&2
		redis_put "$c" >>"$OUT/redis$c.txt"
		metad_put "$c" >>"$OUT/metad$c.txt"
		[ -z "${BENCH_BEFORE:-}" ] ||
		    METAD_BIN=$BENCH_BEFORE metad_put "$c" >>"$OUT/before$c.txt"
	done
done

# Gets (point reads at the current rev) on 10000 keys, for before/after.
gets() {	# gets TAG: on a metad of METAD_BIN, interleaved by the caller
	"$MB" -s "$TMP/g$1.sock" get --no-preload --clients "$2" \
	    --keys 10000 -d "$DUR" -o json >"$TMP/get.json"
	jq .ops_per_s "$TMP/get.json" >>"$OUT/get$1$2.txt"
	jq .latency_us.p50 "$TMP/get.json" >>"$OUT/get$1${2}_p50.txt"
}
tags=a
[ -z "${BENCH_BEFORE:-}" ] || tags="a b"
for t in $tags; do
	[ "$t" = a ] && bin=$METAD || bin=$BENCH_BEFORE
	METAD_BIN=$bin metad_start "g$t" --store "sqlite:$TMP/g$t.db" \
	    --sync full
	"$MB" -s "$TMP/g$t.sock" preload --keys 10000 -o json >/dev/null
done
# Each daemon checkpoints its preload once its writes pause (250 ms) or
# later: none of that runs beside the other's first gets.
sleep 2
for r in $(seq "$RUNS"); do
	for c in 1 16; do
		for t in $tags; do
			gets "$t" "$c"
		done
	done
done
for t in $tags; do
	stop "g$t"
done

{
	if [ -n "${BENCH_BEFORE:-}" ]; then
		echo "| clients | metad puts/s | Redis puts/s | metad / Redis | per round | before puts/s | before / Redis | per round |"
		echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	else
		echo "| clients | metad puts/s | Redis puts/s | metad / Redis | per round |"
		echo "| --- | --- | --- | --- | --- |"
	fi
	for c in 1 16 64; do
		m=$(med "$OUT/metad$c.txt"); rd=$(med "$OUT/redis$c.txt")
		printf '| %s | %.0f | %.0f | %.2f | %.2f |' "$c" "$m" "$rd" \
		    "$(echo "$m / $rd" | bc -l)" \
		    "$(rmed "$OUT/metad$c.txt" "$OUT/redis$c.txt")"
		if [ -n "${BENCH_BEFORE:-}" ]; then
			b=$(med "$OUT/before$c.txt")
			printf ' %.0f | %.2f | %.2f |' "$b" \
			    "$(echo "$b / $rd" | bc -l)" \
			    "$(rmed "$OUT/before$c.txt" "$OUT/redis$c.txt")"
		fi
		echo
	done
	echo
	echo "| gets, 10000 keys | metad | gets/s | p50 us |"
	echo "| --- | --- | --- | --- |"
	for c in 1 16; do
		for t in $tags; do
			[ "$t" = a ] && n=this || n=before
			printf '| %s clients | %s | %.0f | %s |\n' "$c" "$n" \
			    "$(med "$OUT/get$t$c.txt")" \
			    "$(med "$OUT/get$t${c}_p50.txt")"
		done
	done
} | tee "$OUT/summary.md"
