# etcd on loopback for the tests (tests/bats/helpers.bash, tests/run-etcd)
# and the benchmark (scripts/bench-etcd.sh): sourced by bash, safe under
# set -eu.

# A free TCP port on loopback (a guess, checked with ss).
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || {
			echo "$p"
			return 0
		}
	done
}

# Start etcd on loopback ports with a data directory under $1, allowing
# txns of 256 operations (metad writes one more than a request's writes:
# a txn of 128 puts is 129; metad(8) says so).
# Sets ETCD_URL, ETCD_PID, ETCD_PEER_PORT, ETCD_CLIENT_PORT.
etcd_start() {
	local dir="$1" i c p fresh
	mkdir -p "$dir"
	for i in 1 2 3 4 5; do
		# New ports: a new member (a data directory left by a try that
		# failed would keep the old peer URL).
		fresh=${ETCD_CLIENT_PORT:+no}
		[ -n "$fresh" ] || rm -rf "$dir/etcd.data"
		c=${ETCD_CLIENT_PORT:-$(free_port)}
		p=${ETCD_PEER_PORT:-$(free_port)}
		etcd --name default --data-dir "$dir/etcd.data" \
		    --listen-client-urls "http://127.0.0.1:$c" \
		    --advertise-client-urls "http://127.0.0.1:$c" \
		    --listen-peer-urls "http://127.0.0.1:$p" \
		    --initial-advertise-peer-urls "http://127.0.0.1:$p" \
		    --initial-cluster "default=http://127.0.0.1:$p" \
		    --max-txn-ops 256 \
		    >>"$dir/etcd.log" 2>&1 &
		ETCD_PID=$!
		ETCD_URL="http://127.0.0.1:$c"
		ETCD_CLIENT_PORT=$c
		ETCD_PEER_PORT=$p
		local n
		# Up to about 15 s: a loaded machine starts etcd slowly.
		for n in $(seq 1 500); do
			curl -sf "$ETCD_URL/health" >/dev/null 2>&1 && return 0
			kill -0 "$ETCD_PID" 2>/dev/null || break
			sleep 0.02
		done
		kill "$ETCD_PID" 2>/dev/null || true
		wait "$ETCD_PID" 2>/dev/null || true
		ETCD_PID=
		unset ETCD_CLIENT_PORT ETCD_PEER_PORT
	done
	echo "etcd did not start" >&2
	cat "$dir/etcd.log" >&2
	return 1
}

etcd_stop() {
	[ -n "${ETCD_PID:-}" ] || return 0
	kill -TERM "$ETCD_PID" 2>/dev/null || true
	wait "$ETCD_PID" 2>/dev/null || true
	ETCD_PID=
}
