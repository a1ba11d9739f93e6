#!/usr/bin/env bash
# The benchmark suite of issue 6 (run by "make bench").  Each workload gets
# its own metad on a temporary socket and database; the baselines (in-process
# SQLite, a bare echo server) run in the same invocation, interleaved with
# metad's runs, and every figure is the median of BENCH_RUNS runs.
#
# Knobs (environment): BENCH_RUNS (3), BENCH_DURATION (seconds per run, 3),
# BENCH_BIG_KEYS (1000000), BENCH_OUT (build/bench/results).
# Writes one JSON line per run to $BENCH_OUT/*.jsonl, the commands to
# $BENCH_OUT/commands.txt, and the table to $BENCH_OUT/summary.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${BENCH_RUNS:-3}
DUR=${BENCH_DURATION:-3}
BIG=${BENCH_BIG_KEYS:-1000000}
OUT=${BENCH_OUT:-$ROOT/build/bench/results}
MB=$ROOT/bin/metabench
METAD=$ROOT/bin/metad
METACTL=$ROOT/bin/metactl
BASE=$ROOT/build/bench/sqlite_baseline
ECHO=$ROOT/build/bench/echo_server
TMP=$(mktemp -d /tmp/metad-bench.XXXXXX)
declare -A PIDS=()

for b in "$MB" "$METAD" "$METACTL" "$BASE" "$ECHO"; do
	[ -x "$b" ] || { echo "bench.sh: $b missing: make bench-build" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "bench.sh: needs jq" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.jsonl "$OUT"/commands.txt "$OUT"/summary.md
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

cleanup() {
	local n
	for n in "${!PIDS[@]}"; do
		kill -TERM "${PIDS[$n]}" 2>/dev/null || true
		wait "${PIDS[$n]}" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

log() { printf '%s\n' "$*" >&2; }

# run TAG CMD...: run a measurement, keep its JSON line in TAG.jsonl.
run() {
	local tag=$1; shift
	printf '%s\n' "$*" | sed "s|$TMP|\$TMP|g; s|$ROOT/||g" >>"$OUT/commands.txt"
	"$@" -o json >>"$OUT/$tag.jsonl"
}

# start NAME ARGS...: a metad on $TMP/NAME.sock, ready when it answers ping.
start() {
	local name=$1 sock=$TMP/$1.sock i; shift
	"$METAD" --socket "$sock" --log-level warn "$@" 2>>"$TMP/$name.log" &
	PIDS[$name]=$!
	printf 'metad --socket $TMP/%s.sock %s\n' "$name" "$*" |
	    sed "s|$TMP|\$TMP|g" >>"$OUT/commands.txt"
	for i in $(seq 200); do
		"$METACTL" -s "$sock" ping >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	log "bench.sh: metad $name did not start:"; cat "$TMP/$name.log" >&2
	exit 1
}

stop() {
	kill -TERM "${PIDS[$1]}"
	wait "${PIDS[$1]}" || true
	unset "PIDS[$1]"
}

hwm_kib() { awk '/^VmHWM/ { print $2 }' "/proc/${PIDS[$1]}/status"; }
sock() { printf '%s/%s.sock' "$TMP" "$1"; }

# med TAG JQ-EXPR: the median over the runs of TAG.
med() {
	jq -s "map($2) | sort | .[(length - 1) / 2 | floor]" "$OUT/$1.jsonl"
}

fresh_put() {	# fresh_put TAG CLIENTS KEYS: durable puts on a new database
	rm -f "$TMP"/p.db*
	start p --store "sqlite:$TMP/p.db" --sync full
	run "$1" "$MB" -s "$(sock p)" put --clients "$2" --keys "$3" \
	    --value-size 100 -d "$DUR"
	stop p
}

bench_puts() {
	local r
	log "== durable puts: 64 and 1 clients vs in-process SQLite"
	for r in $(seq "$RUNS"); do
		rm -f "$TMP"/base.db*
		run sqlite64 "$BASE" --db "$TMP/base.db" --batch 64 --keys 20000 \
		    --value-size 100 --duration "$DUR" --sync full
		fresh_put put64 64 20000
		fresh_put put1 1 20000
	done
}

bench_gets() {
	local r
	log "== gets vs echo, puts at 10k keys"
	"$ECHO" "$(sock echo)" 2>>"$TMP/echo.log" &
	PIDS[echo]=$!
	start g --store "sqlite:$TMP/g.db" --sync full
	run preload10k "$MB" -s "$(sock g)" preload --keys 10000
	for r in $(seq "$RUNS"); do
		run echo1 "$MB" -s "$(sock echo)" echo --clients 1 -d "$DUR"
		run get1 "$MB" -s "$(sock g)" get --no-preload --clients 1 \
		    --keys 10000 -d "$DUR"
		run echo16 "$MB" -s "$(sock echo)" echo --clients 16 -d "$DUR"
		run get16 "$MB" -s "$(sock g)" get --no-preload --clients 16 \
		    --keys 10000 -d "$DUR"
	done
	stop echo
}

bench_metactl() {
	log "== metactl get as a process"
	printf 'hyperfine -N --warmup 20 --runs 300 "bin/metactl -s $TMP/g.sock get bench/k/00000001" "bin/metactl --version"\n' >>"$OUT/commands.txt"
	if command -v hyperfine >/dev/null; then
		hyperfine -N --warmup 20 --runs 300 --export-json "$TMP/hf.json" \
		    "$METACTL -s $(sock g) get bench/k/00000001" \
		    "$METACTL --version" >/dev/null
		jq -c '{median_ms: (.results[0].median * 1000),
		    floor_ms: (.results[1].median * 1000), tool: "hyperfine"}' \
		    "$TMP/hf.json" >>"$OUT/metactl.jsonl"
		return
	fi
	local i t0 t1
	for i in $(seq 300); do
		t0=$(date +%s%N)
		"$METACTL" -s "$(sock g)" get bench/k/00000001 >/dev/null
		t1=$(date +%s%N)
		echo $(( (t1 - t0) / 1000 ))
	done | sort -n | awk '{ v[NR] = $1 } END { printf \
	    "{\"median_ms\":%.3f,\"floor_ms\":0,\"tool\":\"loop\"}\n", \
	    v[int((NR + 1) / 2)] / 1000 }' >>"$OUT/metactl.jsonl"
}

bench_extra() {
	local r
	log "== cas, mixed (for the record)"
	for r in $(seq "$RUNS"); do
		run cas_contended "$MB" -s "$(sock g)" cas --clients 16 --keys 4 \
		    -d "$DUR"
		run cas_own "$MB" -s "$(sock g)" cas --clients 16 --own-keys \
		    --keys 10000 -d "$DUR"
		run mixed16 "$MB" -s "$(sock g)" mixed --no-preload --clients 16 \
		    --keys 10000 --get-pct 90 -d "$DUR"
	done
}

bench_big() {
	local r
	log "== $BIG keys"
	start big --store "sqlite:$TMP/big.db" --sync full
	run preload_big "$MB" -s "$(sock big)" preload --keys "$BIG"
	# Interleaved with the same runs on the 10k-key daemon of bench_gets.
	for r in $(seq "$RUNS"); do
		run get16_10k "$MB" -s "$(sock g)" get --no-preload \
		    --clients 16 --keys 10000 -d "$DUR"
		run get16_big "$MB" -s "$(sock big)" get --no-preload \
		    --clients 16 --keys "$BIG" -d "$DUR"
		run put64_10k "$MB" -s "$(sock g)" put --clients 64 \
		    --keys 10000 -d "$DUR"
		run put64_big "$MB" -s "$(sock big)" put --clients 64 \
		    --keys "$BIG" -d "$DUR"
	done
	echo "{\"hwm_kib\": $(hwm_kib g)}" >>"$OUT/rss10k.jsonl"
	echo "{\"hwm_kib\": $(hwm_kib big)}" >>"$OUT/rss_big.jsonl"
	stop big
	stop g
}

bench_watch() {
	local r
	log "== watch fan-out, 1000 watchers"
	start w --store "sqlite:$TMP/w.db" --sync full
	for r in $(seq "$RUNS"); do
		run watch1000 "$MB" -s "$(sock w)" watch --clients 1000 \
		    --rate 100 -d "$DUR"
	done
	stop w
}

bench_memory() {
	local r
	log "== memory backend, pipelined puts"
	start m --store memory
	for r in $(seq "$RUNS"); do
		run mem_put "$MB" -s "$(sock m)" put --clients 4 --pipeline 64 \
		    --keys 10000 -d "$DUR"
	done
	stop m
}

# pmed A EXPR-A B EXPR-B: the median over rounds of A[i] / B[i] (each
# round ran A and B back to back, so the pair saw the same machine load).
pmed() {
	paste <(jq "$2" "$OUT/$1.jsonl") <(jq "$4" "$OUT/$3.jsonl") |
	    awk '{ printf "%.4f\n", ($2 > 0 ? $1 / $2 : 0) }' | sort -g |
	    awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'
}

# row NAME BASELINE METAD RATIO TARGET PASS: one line of the table.
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }

# verdict VALUE OP LIMIT: PASS or FAIL.
verdict() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
	ok = (op == ">=") ? v >= l : v <= l; print ok ? "PASS" : "FAIL" }'; }
fmt() { awk -v v="$1" 'BEGIN { printf "%.0f", v }'; }
fmt1() { awk -v v="$1" 'BEGIN { printf "%.1f", v }'; }

summary() {
	local s64 p64 p1 e1 g1 e16 g16 mc fl p10 g10 gb pb hwm w99 wa99 mem r
	s64=$(med sqlite64 .writes_per_s); p64=$(med put64 .ops_per_s)
	p1=$(med put1 .ops_per_s)
	e1=$(med echo1 .latency_us.p50); g1=$(med get1 .latency_us.p50)
	e16=$(med echo16 .ops_per_s); g16=$(med get16 .ops_per_s)
	mc=$(med metactl .median_ms); fl=$(med metactl .floor_ms)
	p10=$(med put64_10k .ops_per_s); g10=$(med get16_10k .ops_per_s)
	gb=$(med get16_big .ops_per_s); pb=$(med put64_big .ops_per_s)
	hwm=$(med rss_big .hwm_kib)
	w99=$(med watch1000 .latency_us.p99)
	wa99=$(med watch1000 .all_delivered_us.p99)
	mem=$(med mem_put .ops_per_s)
	echo "Machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' \
	    /proc/cpuinfo); load average at start $LOAD0, at end $(cut -d' ' -f1-3 \
	    /proc/loadavg); $RUNS runs of $DUR s; medians, ratio = median of the"
	echo "per-round ratios."
	echo
	echo "| target | baseline | metad | ratio | target | result |"
	echo "| --- | --- | --- | --- | --- | --- |"
	r=$(pmed put64 .ops_per_s sqlite64 .writes_per_s)
	row "durable puts, 64 clients vs in-process SQLite (batch 64), puts/s" \
	    "$(fmt "$s64")" "$(fmt "$p64")" "$r" ">= 0.50" "$(verdict "$r" ">=" 0.5)"
	r=$(pmed put64 .ops_per_s put1 .ops_per_s)
	row "durable puts, 64 clients vs 1 client, puts/s" "$(fmt "$p1")" \
	    "$(fmt "$p64")" "$r" ">= 10" "$(verdict "$r" ">=" 10)"
	r=$(pmed get1 .latency_us.p50 echo1 .latency_us.p50)
	row "get, 1 client, p50 latency us vs echo" "$(fmt1 "$e1")" \
	    "$(fmt1 "$g1")" "$r" "<= 2.0" "$(verdict "$r" "<=" 2)"
	r=$(pmed get16 .ops_per_s echo16 .ops_per_s)
	row "get, 16 clients, ops/s vs echo" "$(fmt "$e16")" "$(fmt "$g16")" \
	    "$r" ">= 0.70" "$(verdict "$r" ">=" 0.7)"
	row "metactl get, median wall ms (floor: metactl --version)" \
	    "$(fmt1 "$fl")" "$(awk -v v="$mc" 'BEGIN { printf "%.2f", v }')" \
	    "-" "<= 1.5 ms" "$(verdict "$mc" "<=" 1.5)"
	row "watch, 1000 watchers, p99 per delivery ms (to all: $(fmt1 \
	    "$(awk -v v="$wa99" 'BEGIN { print v / 1000 }')") ms)" "-" \
	    "$(fmt1 "$(awk -v v="$w99" 'BEGIN { print v / 1000 }')")" "-" \
	    "<= 20 ms" "$(verdict "$w99" "<=" 20000)"
	r=$(pmed get16_big .ops_per_s get16_10k .ops_per_s)
	row "get, 16 clients, $BIG keys vs 10k, ops/s" "$(fmt "$g10")" \
	    "$(fmt "$gb")" "$r" ">= 0.70" "$(verdict "$r" ">=" 0.7)"
	r=$(pmed put64_big .ops_per_s put64_10k .ops_per_s)
	row "durable put, 64 clients, $BIG keys vs 10k, ops/s" "$(fmt "$p10")" \
	    "$(fmt "$pb")" "$r" ">= 0.70" "$(verdict "$r" ">=" 0.7)"
	row "daemon VmHWM with $BIG keys, MiB" "-" \
	    "$(fmt1 "$(awk -v v="$hwm" 'BEGIN { print v / 1024 }')")" "-" \
	    "<= 64" "$(verdict "$hwm" "<=" 65536)"
	row "memory backend, 4 clients x pipeline 64, puts/s" "-" \
	    "$(fmt "$mem")" "-" ">= 150000" "$(verdict "$mem" ">=" 150000)"
	echo
	echo "For the record (medians): cas contended (16 clients, 4 keys)" \
	    "$(fmt "$(med cas_contended .ops_per_s)") ops/s," \
	    "$(fmt "$(med cas_contended .conflicts)") conflicts;" \
	    "cas own keys $(fmt "$(med cas_own .ops_per_s)") ops/s;" \
	    "mixed 90/10 16 clients $(fmt "$(med mixed16 .ops_per_s)") ops/s;" \
	    "preload of $BIG keys $(med preload_big .elapsed_s) s;" \
	    "VmHWM at 10k keys $(fmt1 "$(awk -v v="$(med rss10k .hwm_kib)" \
	    'BEGIN { print v / 1024 }')") MiB."
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "metad benchmarks: $RUNS runs of ${DUR} s each, results in $OUT"
bench_puts
bench_gets
bench_metactl
bench_extra
bench_big
bench_watch
bench_memory
summary | tee "$OUT/summary.md"
