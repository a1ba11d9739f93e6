#!/usr/bin/env bash
# metabench before and after a change to its client code, side by side:
#   scripts/bench-lib-ab.sh OLD_METABENCH NEW_METABENCH [METAD]
# One fresh metad (memory store) per workload (get, put, mixed); the two
# binaries alternate, RUNS (7) runs of REQUESTS (500000) requests each, 8
# clients, 1 thread, pipeline 16.  Prints one line per run (workload,
# binary, run, ops/s, the client's own CPU in us per request from
# /usr/bin/time), then the medians and their ratios (new / old).
set -euo pipefail

OLD=$1 NEW=$2
METAD=${3:-$(cd "$(dirname "$0")/.." && pwd)/bin/metad}
RUNS=${RUNS:-7}
N=${REQUESTS:-500000}
TMP=$(mktemp -d /tmp/metad-ab.XXXXXX)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
S=$TMP/ab.sock

for wl in get put mixed; do
	"$METAD" --socket "$S" --store memory --log-level warn \
	    2>>"$TMP/metad.log" &
	PID=$!
	for _ in $(seq 200); do [ -S "$S" ] && break; sleep 0.05; done
	"$NEW" -s "$S" preload --keys 10000 >/dev/null
	for r in $(seq "$RUNS"); do
		for v in old new; do
			bin=$OLD
			[ $v = new ] && bin=$NEW
			/usr/bin/time -o "$TMP/t" -f '%U %S' "$bin" -s "$S" \
			    "$wl" --clients 8 --threads 1 --pipeline 16 \
			    --keys 10000 --no-preload --requests "$N" \
			    -o json >"$TMP/r.json"
			echo "$wl $v $r $(jq -r .ops_per_s "$TMP/r.json") \
$(awk -v n="$(jq -r .requests "$TMP/r.json")" \
			    '{ printf "%.3f", ($1 + $2) * 1e6 / n }' "$TMP/t")"
		done
	done | tee -a "$TMP/all"
	kill "$PID"
	wait "$PID" || true
	PID=
	rm -f "$S"
done
echo "# medians: workload ops/s old new ratio | cpu us/req old new ratio"
awk '
function med(a, n,   i, j, t) {
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2; n[k]++; ops[k, n[k]] = $4; cpu[k, n[k]] = $5; w[$1] = 1 }
END {
	split("get put mixed", order, " ")
	for (i = 1; i <= 3; i++) {
		wl = order[i]
		for (v = 0; v < 2; v++) {
			k = wl SUBSEP (v ? "new" : "old")
			delete a; delete c
			for (j = 1; j <= n[k]; j++) { a[j] = ops[k, j]; c[j] = cpu[k, j] }
			mo[v] = med(a, n[k]); mc[v] = med(c, n[k])
		}
		printf "%-5s %9.0f %9.0f %.3f | %.3f %.3f %.3f\n", wl, mo[0], mo[1],
		    mo[1] / mo[0], mc[0], mc[1], mc[1] / mc[0]
	}
}' "$TMP/all"
