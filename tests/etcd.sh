# etcd on loopback for the tests (tests/bats/helpers.bash, tests/run-etcd)
# and the benchmark (scripts/bench-etcd.sh): one member (etcd_start), or a
# 3-member cluster whose members can be killed and restarted
# (etcd_cluster_start, tests/bats/etcd_cluster.bats).  Sourced by bash,
# safe under set -eu.

# A free TCP port on loopback (a guess, checked with ss): below the kernel's
# ephemeral range (ip_local_port_range, 32768 up by default), so that no
# outgoing connection holds it, and used by no socket in any state.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		ss -Htan "sport = :$p" 2>/dev/null | grep -q . || {
			echo "$p"
			return 0
		}
	done
}

# Start etcd on loopback ports with a data directory under $1, with etcd's
# default limits (--max-txn-ops 128: metad's txns fit it, metad(8)), and
# the flags in ETCD_FLAGS, if any (word-split: the benchmark's
# --backend-batch-limit).  ETCD_SCHEME=https serves the client URL over TLS
# (its --cert-file and --key-file in ETCD_FLAGS), checked against the CA
# file ETCD_CACERT (scripts/bench-remote.sh).
# Sets ETCD_URL, ETCD_PID, ETCD_PEER_PORT, ETCD_CLIENT_PORT.
etcd_start() {
	local dir="$1" i c p fresh s=${ETCD_SCHEME:-http}
	mkdir -p "$dir"
	for i in 1 2 3 4 5; do
		# New ports: a new member (a data directory left by a try that
		# failed would keep the old peer URL).
		fresh=${ETCD_CLIENT_PORT:+no}
		[ -n "$fresh" ] || rm -rf "$dir/etcd.data"
		c=${ETCD_CLIENT_PORT:-$(free_port)}
		p=${ETCD_PEER_PORT:-$(free_port)}
		etcd --name default --data-dir "$dir/etcd.data" \
		    --listen-client-urls "$s://127.0.0.1:$c" \
		    --advertise-client-urls "$s://127.0.0.1:$c" \
		    --listen-peer-urls "http://127.0.0.1:$p" \
		    --initial-advertise-peer-urls "http://127.0.0.1:$p" \
		    --initial-cluster "default=http://127.0.0.1:$p" \
		    ${ETCD_FLAGS:-} >>"$dir/etcd.log" 2>&1 &
		ETCD_PID=$!
		ETCD_URL="$s://127.0.0.1:$c"
		ETCD_CLIENT_PORT=$c
		ETCD_PEER_PORT=$p
		local n
		# Up to about 15 s: a loaded machine starts etcd slowly.
		for n in $(seq 1 500); do
			curl -sf ${ETCD_CACERT:+--cacert "$ETCD_CACERT"} \
			    "$ETCD_URL/health" >/dev/null 2>&1 && return 0
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

# A 3-member etcd cluster on loopback (tests/bats/etcd_cluster.bats): each
# member's data directory under $1, its log in $1/etcdN.log, etcd's
# default limits as etcd_start.  Sets, for member i in 0 1 2:
# ETCD_CLUSTER_PIDS[i] (empty while it is down), ETCD_CLUSTER_URLS[i] (its
# client URL); ETCD_CLUSTER_DIR is $1.  Returns once every member answers
# /health (the cluster has a leader); three tries on new ports.
etcd_cluster_start() {
	local i end tries=0
	ETCD_CLUSTER_DIR="$1"
	mkdir -p "$ETCD_CLUSTER_DIR"
	while [ $((tries += 1)) -le 3 ]; do
		etcd_cluster_ports
		for i in 0 1 2; do
			rm -rf "$ETCD_CLUSTER_DIR/etcd$i.data"
			etcd_member_start "$i"
		done
		# Up to 30 s: a loaded machine starts etcd slowly.
		end=$((SECONDS + 30))
		while [ "$SECONDS" -lt "$end" ]; do
			etcd_cluster_healthy && return 0
			for i in 0 1 2; do
				kill -0 "${ETCD_CLUSTER_PIDS[i]}" 2>/dev/null ||
				    break 2
			done
			sleep 0.02
		done
		etcd_cluster_stop
	done
	echo "the etcd cluster did not start" >&2
	tail -n 20 "$ETCD_CLUSTER_DIR"/etcd*.log >&2
	return 1
}

# Six distinct free ports: a client and a peer port for each member.
etcd_cluster_ports() {
	local i p ports=()
	while [ ${#ports[@]} -lt 6 ]; do
		p=$(free_port)
		case " ${ports[*]-} " in *" $p "*) continue ;; esac
		ports+=("$p")
	done
	ETCD_CLUSTER_URLS=()
	ETCD_CLUSTER_PEERS=()
	ETCD_CLUSTER_PIDS=()
	ETCD_CLUSTER_INITIAL=
	for i in 0 1 2; do
		ETCD_CLUSTER_URLS[i]="http://127.0.0.1:${ports[2 * i]}"
		ETCD_CLUSTER_PEERS[i]="http://127.0.0.1:${ports[2 * i + 1]}"
		ETCD_CLUSTER_INITIAL+="${ETCD_CLUSTER_INITIAL:+,}etcd$i=${ETCD_CLUSTER_PEERS[i]}"
	done
}

# etcd_member_start I: start member I (again, after a kill: the same ports
# and data directory, so it rejoins as itself).  Does not wait.
etcd_member_start() {
	local i=$1
	etcd --name "etcd$i" --data-dir "$ETCD_CLUSTER_DIR/etcd$i.data" \
	    --listen-client-urls "${ETCD_CLUSTER_URLS[i]}" \
	    --advertise-client-urls "${ETCD_CLUSTER_URLS[i]}" \
	    --listen-peer-urls "${ETCD_CLUSTER_PEERS[i]}" \
	    --initial-advertise-peer-urls "${ETCD_CLUSTER_PEERS[i]}" \
	    --initial-cluster "$ETCD_CLUSTER_INITIAL" \
	    --initial-cluster-token "metad-test-$$" \
	    --initial-cluster-state new \
	    >>"$ETCD_CLUSTER_DIR/etcd$i.log" 2>&1 &
	ETCD_CLUSTER_PIDS[i]=$!
}

# etcd_member_kill I: kill -9 member I and reap it.
etcd_member_kill() {
	local pid=${ETCD_CLUSTER_PIDS[$1]}
	[ -n "$pid" ] || return 0
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	ETCD_CLUSTER_PIDS[$1]=
}

# etcd_member_healthy I: member I answers /health with a leader.
etcd_member_healthy() {
	curl -sf -m 2 "${ETCD_CLUSTER_URLS[$1]}/health" 2>/dev/null |
	    grep -q '"health":"true"'
}

etcd_cluster_healthy() {
	etcd_member_healthy 0 && etcd_member_healthy 1 && etcd_member_healthy 2
}

# etcd_leader: print the index (0, 1 or 2) of the member that is the
# leader, asked of the members that are up; fails when none says it is.
etcd_leader() {
	local i st
	for i in 0 1 2; do
		[ -n "${ETCD_CLUSTER_PIDS[i]}" ] || continue
		st=$(curl -sf -m 1 -X POST \
		    "${ETCD_CLUSTER_URLS[i]}/v3/maintenance/status" -d '{}') ||
		    continue
		if [ "$(jq -r '.leader == .header.member_id' <<<"$st")" = true ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

etcd_cluster_stop() {
	local i pid
	for i in 0 1 2; do
		pid=${ETCD_CLUSTER_PIDS[i]-}
		[ -n "$pid" ] || continue
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		ETCD_CLUSTER_PIDS[i]=
	done
}
