#!/usr/bin/env bash
# make bench-churn: tail latency and file growth under churn (issue 39).
# Durable puts (--sync full) from CHURN_CLIENTS clients (64) over
# CHURN_KEYS keys (1000) for CHURN_DURATION seconds (30; the issue's run
# was 60) on a fresh sqlite database, of CHURN_VALUE bytes each (if set;
# metabench's default otherwise); prints the puts/s, the daemon's CPU a
# put (/proc/PID/stat), the p99 and the longest put's wait (metabench's,
# from request to answer), the WAL's size at the end and its largest seen
# (sampled every 0.2 s), and the database plus WAL at the end.  The
# issue's bounds: longest <= 20 ms, p99 <= 5 ms, WAL <= 64 MiB, db + WAL
# <= 128 MiB.  BENCHMARKS.md records runs.
#   scripts/bench-churn.sh [METAD]
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
METAD=${1:-$BENCH_ROOT/bin/metad}
MB=$BENCH_ROOT/bin/metabench
CLIENTS=${CHURN_CLIENTS:-64}
KEYS=${CHURN_KEYS:-1000}
DURATION=${CHURN_DURATION:-30}
VALUE=()
[ -z "${CHURN_VALUE:-}" ] || VALUE=(--value-size "$CHURN_VALUE")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-churn.XXXXXX")
BENCH_PID=
trap '[ -z "$BENCH_PID" ] || kill "$BENCH_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

"$METAD" --socket "$TMP/s" --store "sqlite:$TMP/meta.db" --sync full \
    --log-level error &
BENCH_PID=$!
bench_wait -p "$BENCH_PID" "$MB" -s "$TMP/s" echo --requests 1 ||
    { echo "bench-churn: $METAD did not start" >&2; exit 1; }
t0=$(awk '{ print $14 + $15 }' "/proc/$BENCH_PID/stat")
"$MB" -s "$TMP/s" put --clients "$CLIENTS" --keys "$KEYS" \
    --duration "$DURATION" "${VALUE[@]}" -o json >"$TMP/out" &
mb=$!
walmax=0
while kill -0 "$mb" 2>/dev/null; do
	w=$(size "$TMP/meta.db-wal")
	[ "$w" -le "$walmax" ] || walmax=$w
	sleep 0.2
done
wait "$mb"
t1=$(awk '{ print $14 + $15 }' "/proc/$BENCH_PID/stat")
cpu=$(( (t1 - t0) * 1000000 / $(getconf CLK_TCK) ))
wal=$(size "$TMP/meta.db-wal")
[ "$wal" -le "$walmax" ] || walmax=$wal
db=$(size "$TMP/meta.db")
jq -r --argjson cpu "$cpu" --argjson wal "$wal" --argjson walmax "$walmax" \
    --argjson db "$db" '
	def mib: . / 1048576 * 10 | round / 10;
	def ms: . / 100 | round / 10;
	"bench-churn: \(.clients) clients, \(.keys) keys, \(.elapsed_s | round) s: \(.ops) puts, \(.ops_per_s | round) puts/s, \($cpu / .ops * 100 | round / 100) us of daemon CPU a put",
	"bench-churn: put wait p50 \(.latency_us.p50 | ms) ms, p99 \(.latency_us.p99 | ms) ms, max \(.latency_us.max | ms) ms",
	"bench-churn: WAL \($wal | mib) MiB at the end (largest seen \($walmax | mib) MiB), db + WAL \(($db + $wal) | mib) MiB"
' "$TMP/out"
kill "$BENCH_PID"
wait "$BENCH_PID" || true
BENCH_PID=
