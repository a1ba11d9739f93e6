#!/usr/bin/env bash
# Durable puts of two or more metad builds side by side, the way
# docs/BENCHMARKS.md compares a change with the build before it:
#   scripts/bench-put-ab.sh BASE_METAD OTHER_METAD...
# Each run starts one binary on a fresh database (sqlite, --sync full) and
# drives DURATION (3) seconds of puts from CLIENTS (64) clients over KEYS
# (20000) keys of VALUE (100) bytes with metabench; the binaries take turns
# in each of ROUNDS (7) rounds, so that a noisy machine's drift hits them
# alike.  Prints one line per run (round, binary, puts/s, the daemon's own
# CPU in us per put from /proc/PID/stat, p99 in us), then for each binary
# the medians and the median of its per-round ratio to BASE's puts/s.
# A binary whose daemon does not start, or whose run fails, stops the
# script with an error: no figure is made up.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-7}
CLIENTS=${CLIENTS:-64}
DUR=${DURATION:-3}
KEYS=${KEYS:-20000}
VALUE=${VALUE:-100}
MB=$ROOT/bin/metabench
CTL=$ROOT/bin/metactl

if [ $# -lt 2 ]; then
	echo "usage: bench-put-ab.sh BASE_METAD OTHER_METAD..." >&2
	exit 2
fi
for b in "$MB" "$CTL" "$@"; do
	[ -x "$b" ] || { echo "bench-put-ab.sh: $b: not executable" >&2
		exit 1; }
done
command -v jq >/dev/null || { echo "bench-put-ab.sh: needs jq" >&2; exit 1; }

TMP=$(mktemp -d /tmp/metad-put-ab.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)

ticks() {	# ticks PID: the process's user + system CPU, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

run() {		# run BIN: "puts/s cpu_us_per_put p99_us" of one fresh run
	local bin=$1 dir i t0 t1 out
	dir=$(mktemp -d "$TMP/run.XXXXXX")
	"$bin" --socket "$dir/s" --store "sqlite:$dir/d.db" --sync full \
	    --log-level warn 2>>"$TMP/metad.log" &
	PID=$!
	for i in $(seq 200); do
		"$CTL" -s "$dir/s" ping >/dev/null 2>&1 && break
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	"$CTL" -s "$dir/s" ping >/dev/null 2>&1 || {
		echo "bench-put-ab.sh: $bin did not start:" >&2
		tail -5 "$TMP/metad.log" >&2
		exit 1; }
	t0=$(ticks "$PID")
	out=$("$MB" -s "$dir/s" put --clients "$CLIENTS" --keys "$KEYS" \
	    --value-size "$VALUE" -d "$DUR" -o json) || {
		echo "bench-put-ab.sh: metabench failed against $bin" >&2
		exit 1; }
	t1=$(ticks "$PID")
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=
	rm -rf "$dir"
	echo "$out" | jq -r --argjson t $((t1 - t0)) --argjson hz "$HZ" '
	    if .ops > 0 and .errors == 0 then
		"\(.ops_per_s) \($t * 1000000 / $hz / .ops) \(.latency_us.p99)"
	    else error("no puts, or errors: \(.)") end'
}

median() {	# median of the numbers on stdin, one a line (of an even
		# count, the lower middle one)
	sort -g | awk 'NF { v[++n] = $1 } END { if (n) print v[int((n + 1) / 2)] }'
}

BINS=("$@")
OPS=() CPU=() P99=() RATIO=()
printf '%-6s %-40s %10s %8s %9s\n' round binary puts/s us/put p99_us
for r in $(seq "$ROUNDS"); do
	for i in "${!BINS[@]}"; do
		run "${BINS[$i]}" >"$TMP/res"
		read -r ops cpu p99 <"$TMP/res"
		OPS[i]+="$ops "
		CPU[i]+="$cpu "
		P99[i]+="$p99 "
		[ "$i" -eq 0 ] && base=$ops
		RATIO[i]+="$(awk -v a="$ops" -v b="$base" \
		    'BEGIN { printf "%.3f", a / b }') "
		printf '%-6s %-40s %10.0f %8.2f %9.0f\n' "$r" "${BINS[$i]}" \
		    "$ops" "$cpu" "$p99"
	done
done
echo
printf '%-40s %10s %8s %9s %9s  %s\n' binary puts/s us/put p99_us ratio \
    "per round (to the first)"
for i in "${!BINS[@]}"; do
	printf '%-40s %10.0f %8.2f %9.0f %9s  %s\n' "${BINS[$i]}" \
	    "$(tr ' ' '\n' <<<"${OPS[i]}" | median)" \
	    "$(tr ' ' '\n' <<<"${CPU[i]}" | median)" \
	    "$(tr ' ' '\n' <<<"${P99[i]}" | median)" \
	    "$(tr ' ' '\n' <<<"${RATIO[i]}" | median)" "${RATIO[i]}"
done
