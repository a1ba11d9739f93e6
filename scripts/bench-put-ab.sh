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

. "$(dirname "$0")/bench-lib.sh"
ROUNDS=${ROUNDS:-7}
CLIENTS=${CLIENTS:-64}
DUR=${DURATION:-3}
KEYS=${KEYS:-20000}
VALUE=${VALUE:-100}

if [ $# -lt 2 ]; then
	echo "usage: bench-put-ab.sh BASE_METAD OTHER_METAD..." >&2
	exit 2
fi
for b in "$BENCH_ROOT/bin/metabench" "$BENCH_ROOT/bin/metactl" "$@"; do
	[ -x "$b" ] || { echo "bench-put-ab.sh: $b: not executable" >&2
		exit 1; }
done
command -v jq >/dev/null || { echo "bench-put-ab.sh: needs jq" >&2; exit 1; }

TMP=$(mktemp -d /tmp/metad-put-ab.XXXXXX)
cleanup() {
	[ -z "$BENCH_PID" ] || kill "$BENCH_PID" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

BINS=("$@")
OPS=() CPU=() P99=() RATIO=()
printf '%-6s %-40s %10s %8s %9s\n' round binary puts/s us/put p99_us
for r in $(seq "$ROUNDS"); do
	for i in "${!BINS[@]}"; do
		bench_fresh_put "${BINS[$i]}" "$CLIENTS" "$KEYS" "$VALUE" \
		    "$DUR" "$TMP" >"$TMP/res"
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
	    "$(tr ' ' '\n' <<<"${OPS[i]}" | bench_median)" \
	    "$(tr ' ' '\n' <<<"${CPU[i]}" | bench_median)" \
	    "$(tr ' ' '\n' <<<"${P99[i]}" | bench_median)" \
	    "$(tr ' ' '\n' <<<"${RATIO[i]}" | bench_median)" "${RATIO[i]}"
done
