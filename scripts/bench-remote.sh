#!/usr/bin/env bash
# What the remote backend (--store metad:URL, metad(8)) costs, measured in
# one run (`make bench-remote`): durable puts and gets of 100-byte values
# over 1000 keys at 1, 16 and 64 clients on
#  (a) a serving metad A on sqlite (--sync full) on its Unix socket,
#  (b) a metad B with --store metad:unix:A's socket (its gets also
#      --serializable: answered from B's replica),
#  (c) A's TLS listener (mutual TLS, the client's CN "bench"),
#  (d) etcd over TLS, driven directly: wrk on its JSON gateway
#      (bench/etcd_direct.lua), as bench-etcd.sh drives it.  wrk shows no
#      client certificate, so this etcd runs without --client-cert-auth
#      and without --trusted-ca-file (etcd 3.4 asks every client for a
#      certificate when it has a CA file); each connection's handshake is
#      done before it is measured, here as in (c).
# metad driven by metabench, A's TLS through libmetad-client's
# METACTL_CACERT, METACTL_CERT and METACTL_KEY; the certificates made here
# by the openssl CLI.  Every run of a round (a client count) is adjacent in
# time, the rounds BENCH_RUNS times; each figure the median, each ratio the
# ratio of the medians, then each round's ratio (a noisy machine moves the
# runs of a round together).
#
# Knobs (environment): BENCH_RUNS (3), BENCH_DURATION (seconds a run, 3),
# BENCH_ETCD_FLAGS (etcd's own flags, default "--backend-batch-limit 1000"
# as in bench-etcd.sh).
set -euo pipefail

. "$(dirname "$0")/bench-lib.sh"
ROOT=$BENCH_ROOT
RUNS=${BENCH_RUNS:-3}
DUR=${BENCH_DURATION:-3}
MB=$ROOT/bin/metabench
METAD=$ROOT/bin/metad
METACTL=$ROOT/bin/metactl
KEYS=1000
CLIENTS="1 16 64"
bench_needs bench-remote.sh "$MB" "$METAD" "$METACTL" -- etcd wrk openssl \
    curl jq bc
bench_tmp bench-remote

. "$ROOT/tests/pki.sh"
pki_ca "$TMP/ca" bench-remote-ca
pki_cert "$TMP/server" ca localhost "subjectAltName=DNS:localhost,IP:127.0.0.1"
pki_cert "$TMP/bench" ca bench

. "$ROOT/tests/etcd.sh"

# start NAME ARGS...: a metad on $TMP/NAME.sock, once it answers.
start() {
	local name=$1
	shift
	"$METAD" --socket "$TMP/$name.sock" --log-level warn "$@" \
	    2>>"$TMP/$name.log" &
	PIDS+=($!)
	bench_wait -p "$!" "$METACTL" -s "$TMP/$name.sock" ping || {
		echo "bench-remote.sh: metad $name did not start:" >&2
		tail -5 "$TMP/$name.log" >&2
		exit 1
	}
}
PORT=$(free_port)
TLS=tls://127.0.0.1:$PORT
start a --store "sqlite:$TMP/a.db" --sync full --listen "$TLS" \
    --tls-cert "$TMP/server.crt" --tls-key "$TMP/server.key" \
    --tls-client-ca "$TMP/ca.crt" --allow-cn bench
start b --store "metad:unix:$TMP/a.sock"

ETCD_FLAGS="${BENCH_ETCD_FLAGS---backend-batch-limit 1000} --cert-file $TMP/server.crt --key-file $TMP/server.key"
ETCD_SCHEME=https ETCD_CACERT=$TMP/ca.crt etcd_start "$TMP/etcd"
PIDS+=("$ETCD_PID")
E=$ETCD_URL
echo "etcd $(etcd --version | awk '/etcd Version/ {print $3}') on $E, flags: ${BENCH_ETCD_FLAGS---backend-batch-limit 1000} (TLS, no client certificates)"

# mb FILE WHERE ARGS...: one metabench run on WHERE (a socket or $TLS),
# its ops/s appended to FILE; a run with errors, or none done, fails.
mb() {
	local file=$1 where=$2 out
	shift 2
	out=$(METACTL_CACERT=$TMP/ca.crt METACTL_CERT=$TMP/bench.crt \
	    METACTL_KEY=$TMP/bench.key "$MB" -s "$where" "$@" \
	    --keys "$KEYS" --value-size 100 --no-preload -d "$DUR" -o json) || {
		echo "bench-remote.sh: metabench $* on $where failed" >&2
		exit 1
	}
	jq -r 'if .ops > 0 and .errors == 0 then .ops_per_s
	    else error("no ops, or errors: \(.)") end' <<<"$out" >>"$file"
}

# etcdw FILE OP SERIAL CLIENTS: one wrk run on etcd, its requests/s
# appended to FILE; a run with any answer not 2xx fails.
etcdw() {
	local t=$(($4 < 2 ? 1 : 2)) out
	out=$(OP=$2 SERIAL=$3 KEYS=$KEYS wrk -t "$t" -c "$4" -d "${DUR}s" \
	    -s "$ROOT/bench/etcd_direct.lua" "$E")
	if grep -q -e '^  Non-2xx' -e '^  Socket errors' <<<"$out"; then
		echo "bench-remote.sh: wrk $2 on etcd: $out" >&2
		exit 1
	fi
	awk '/^Requests\/sec:/ { print $2 }' <<<"$out" >>"$1"
}

# The keys of the gets: A's (B sees A's store), and etcd's.
"$MB" -s "$TMP/a.sock" preload --keys "$KEYS" --value-size 100 -o json \
    >/dev/null
OP=put KEYS=$KEYS wrk -t 1 -c 4 -d 1s -s "$ROOT/bench/etcd_direct.lua" "$E" \
    >/dev/null
# A checkpoints its preload once its writes pause: not during a run.
sleep 2

R=$TMP/r
mkdir "$R"
for r in $(seq "$RUNS"); do
	for c in $CLIENTS; do
		echo "== run $r of $RUNS, $c clients" >&2
		mb "$R/put.a.$c" "$TMP/a.sock" put --clients "$c"
		mb "$R/put.b.$c" "$TMP/b.sock" put --clients "$c"
		mb "$R/put.c.$c" "$TLS" put --clients "$c"
		etcdw "$R/put.d.$c" put 0 "$c"
		mb "$R/get.a.$c" "$TMP/a.sock" get --clients "$c"
		mb "$R/get.bs.$c" "$TMP/b.sock" get --clients "$c" \
		    --serializable
		mb "$R/get.bl.$c" "$TMP/b.sock" get --clients "$c"
		mb "$R/get.c.$c" "$TLS" get --clients "$c"
		etcdw "$R/get.dl.$c" get 0 "$c"
		etcdw "$R/get.ds.$c" get 1 "$c"
	done
done

med() {	# med FILE: the median of its lines
	bench_median <"$1"
}
ratio() {	# ratio A B: the ratio of the medians of files A and B
	printf '%.2f' "$(echo "$(med "$1") / $(med "$2")" | bc -l)"
}
rounds() {	# rounds A B: each round's A / B
	paste -d' ' "$1" "$2" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / $2 }'
}

echo
echo "metad A: sqlite, --sync full; B: --store metad:unix:A; 100-byte values, $KEYS keys; ops/s, the median of $RUNS x ${DUR} s"
echo
echo "| puts, clients | (a) A unix | (b) B remote | (c) A TLS | (d) etcd TLS | b / a | per round | b / d | per round |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in $CLIENTS; do
	printf '| %s | %.0f | %.0f | %.0f | %.0f | %s | %s | %s | %s |\n' "$c" \
	    "$(med "$R/put.a.$c")" "$(med "$R/put.b.$c")" \
	    "$(med "$R/put.c.$c")" "$(med "$R/put.d.$c")" \
	    "$(ratio "$R/put.b.$c" "$R/put.a.$c")" \
	    "$(rounds "$R/put.b.$c" "$R/put.a.$c")" \
	    "$(ratio "$R/put.b.$c" "$R/put.d.$c")" \
	    "$(rounds "$R/put.b.$c" "$R/put.d.$c")"
done
echo
echo "| gets, clients | (a) A unix | (b) B serializable | (b) B linearizable | (c) A TLS | (d) etcd TLS linearizable | (d) etcd TLS serializable | b ser / a | per round | b lin / a | per round |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in $CLIENTS; do
	printf '| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %s | %s | %s |\n' \
	    "$c" "$(med "$R/get.a.$c")" "$(med "$R/get.bs.$c")" \
	    "$(med "$R/get.bl.$c")" "$(med "$R/get.c.$c")" \
	    "$(med "$R/get.dl.$c")" "$(med "$R/get.ds.$c")" \
	    "$(ratio "$R/get.bs.$c" "$R/get.a.$c")" \
	    "$(rounds "$R/get.bs.$c" "$R/get.a.$c")" \
	    "$(ratio "$R/get.bl.$c" "$R/get.a.$c")" \
	    "$(rounds "$R/get.bl.$c" "$R/get.a.$c")"
done
