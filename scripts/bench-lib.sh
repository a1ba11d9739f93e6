# Shared by the benchmarks (sourced by bench-redis.sh, bench-put-ab.sh,
# bench-etcd.sh, bench-remote.sh...): what they need, their temporary
# directory and servers, waiting for a server, one run of puts on a fresh
# database, medians.  The sourcing script sets -euo pipefail; one that does
# not use bench_tmp kills $BENCH_PID (if set) in its own exit trap.

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_PID=

# bench_wait [-p PID] CMD...: 0 once CMD answers (10 s at most); 1 if it
# does not, or as soon as process PID (the server) is gone.
bench_wait() {
	local i pid=
	if [ "$1" = -p ]; then
		pid=$2
		shift 2
	fi
	for i in $(seq 200); do
		"$@" >/dev/null 2>&1 && return 0
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# bench_needs NAME BIN... -- CMD...: exit 1, saying which, unless every BIN
# is built and every CMD installed (NAME: the script's, in the message).
bench_needs() {
	local name=$1 c
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ -x "$1" ] || { echo "$name: $1 missing: make" >&2; exit 1; }
		shift
	done
	[ $# -eq 0 ] || shift
	for c in "$@"; do
		command -v "$c" >/dev/null ||
		    { echo "$name: needs $c (scripts/deps.sh)" >&2; exit 1; }
	done
}

# bench_tmp NAME: TMP, a directory of this run's, and PIDS, the servers
# the script starts; at exit they are stopped and TMP removed.
bench_tmp() {
	TMP=$(mktemp -d "/tmp/metad-$1.XXXXXX")
	PIDS=()
	trap bench_cleanup EXIT
}

bench_cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}

# bench_median: the median of the numbers on stdin, one a line (of an even
# count, the lower middle one; blank lines do not count).
bench_median() {
	sort -g | awk 'NF { v[++n] = $1 } END { if (n) print v[int((n + 1) / 2)] }'
}

# bench_fresh_put BIN CLIENTS KEYS VALUE DUR TMPDIR: one run of metabench
# put against BIN on a fresh sqlite database with --sync full; prints
# "puts/s daemon-CPU-us-per-put p99-us".  A daemon that does not start, or
# a run that fails or has errors, is an error (return 1), never a figure.
bench_fresh_put() {
	local bin=$1 clients=$2 keys=$3 value=$4 dur=$5 tmp=$6
	local dir t0 t1 out hz
	dir=$(mktemp -d "$tmp/put.XXXXXX")
	"$bin" --socket "$dir/s" --store "sqlite:$dir/d.db" --sync full \
	    --log-level warn 2>>"$tmp/metad.log" &
	BENCH_PID=$!
	if ! bench_wait -p "$BENCH_PID" "$BENCH_ROOT/bin/metactl" \
	    -s "$dir/s" ping; then
		echo "$(basename "$0"): $bin did not start:" >&2
		tail -5 "$tmp/metad.log" >&2
		return 1
	fi
	t0=$(awk '{ print $14 + $15 }' "/proc/$BENCH_PID/stat")
	if ! out=$("$BENCH_ROOT/bin/metabench" -s "$dir/s" put \
	    --clients "$clients" --keys "$keys" --value-size "$value" \
	    -d "$dur" -o json); then
		echo "$(basename "$0"): metabench failed against $bin" >&2
		return 1
	fi
	t1=$(awk '{ print $14 + $15 }' "/proc/$BENCH_PID/stat")
	kill "$BENCH_PID"
	wait "$BENCH_PID" 2>/dev/null || true
	BENCH_PID=
	rm -rf "$dir"
	hz=$(getconf CLK_TCK)
	jq -r --argjson t $((t1 - t0)) --argjson hz "$hz" '
	    if .ops > 0 and .errors == 0 then
		"\(.ops_per_s) \($t * 1000000 / $hz / .ops) \(.latency_us.p99)"
	    else error("no puts, or errors: \(.)") end' <<<"$out"
}
