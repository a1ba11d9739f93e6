#!/usr/bin/env bats
# The fault injector tests/faults/dropproxy.c (build/tests/dropproxy): a
# gRPC (HTTP/2) proxy in front of etcd that relays calls and their
# answers, streams included (late with -d), and loses the answer to the
# first write txn (or, -r, call of another method) after etcd has done it.
# Runs in the etcd pass (tests/run-etcd), talking to it with etcdctl and
# metad, and to etcd itself, for what it holds, with curl.

# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

DROPPROXY="$ROOT/build/tests/dropproxy"

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	[ -n "${METAD_TEST_ETCD:-}" ] || skip "needs the etcd of tests/run-etcd"
	[ -x "$DROPPROXY" ] || {
		echo "$DROPPROXY is not built (make build/tests/dropproxy)" >&2
		return 1
	}
	testdir
	ETCD="$METAD_TEST_ETCD"
	PREFIX="dropproxy-test/$BATS_TEST_NUMBER.$$/"
	proxy_start
}

teardown() {
	local rc=0
	stop_bg "${CURL_PID:-}" "${M_PID:-}"
	proxy_stop || rc=1
	[ -n "${TESTDIR:-}" ] && rm -rf "$TESTDIR"
	TESTDIR=
	return "$rc"
}

# proxy_start [OPTION...]: dropproxy on a free port in front of $ETCD, its
# stderr in $TESTDIR/proxy.log; sets PROXY (its URL) and PROXY_PID.
proxy_start() {
	proxy_spawn "$ETCD" "$@" || return 1
	PROXY="$PROXY_URL"
}

# proxy_stop: SIGTERM; fails (showing its log) unless it exits with 0, as
# it does unless a sanitizer found something.
proxy_stop() {
	[ -n "${PROXY_PID:-}" ] || return 0
	kill -TERM "$PROXY_PID"
	wait_bg "$PROXY_PID"
	PROXY_PID=
	[ "$STATUS" -eq 0 ] || {
		echo "dropproxy exited with $STATUS" >&2
		cat "$TESTDIR/proxy.log" >&2
		return 1
	}
}

b64() {
	printf %s "$1" | base64 -w0
}

# put_direct KEY VALUE: a put straight to etcd.
put_direct() {
	curl -sf "$ETCD/v3/kv/put" \
	    -d "{\"key\":\"$(b64 "$1")\",\"value\":\"$(b64 "$2")\"}" >/dev/null
}

# value_of URL KEY: the value of KEY as etcd at URL answers a range.
value_of() {
	curl -sf "$1/v3/kv/range" -d "{\"key\":\"$(b64 "$2")\"}" |
	    jq -r '.kvs[0].value // empty' | base64 -d
}

@test "dropproxy: an HTTP/1.1 connection is closed unanswered" {
	run -52 curl -s "$PROXY/v3/kv/range" -d '{"key":"AA=="}'
	assert_output ""
	run -0 cat "$TESTDIR/proxy.log"
	assert_output ""
}

@test "dropproxy: SIGTERM stops it and removes its pid file" {
	proxy_stop
	[ ! -e "$TESTDIR/proxy.pid" ]
}

# grpc_txn URL KEY VALUE: a txn through etcd's gRPC API (etcdctl), its
# compare KEY absent, as metad's writes have compares.
grpc_txn() {
	printf 'create("%s") = "0"\n\nput %s %s\n\n\n' "$2" "$2" "$3" |
	    timeout -k 1 20 env ETCDCTL_API=3 etcdctl --endpoints "$1" \
	    --dial-timeout 2s --command-timeout 5s txn
}

grpc_get() {
	timeout -k 1 20 env ETCDCTL_API=3 etcdctl --endpoints "$1" \
	    --command-timeout 5s get \
	    --print-value-only "$2"
}

@test "dropproxy: gRPC: the txn naming -k KEY commits, its answer is lost with its connection; others are answered" {
	proxy_stop
	proxy_start -k "${PREFIX}lost"
	run -0 grpc_txn "$PROXY" "${PREFIX}a" one
	assert_output --partial SUCCESS
	run -0 grpc_get "$PROXY" "${PREFIX}a"
	assert_output one
	run -0 cat "$TESTDIR/proxy.log"
	assert_output ""
	run grpc_txn "$PROXY" "${PREFIX}lost" v
	assert_failure
	run -0 value_of "$ETCD" "${PREFIX}lost"
	assert_output v
	run -0 cat "$TESTDIR/proxy.log"
	assert_output --regexp '^dropproxy: dropped the reply to POST /etcdserverpb.KV/Txn \(gRPC stream [0-9]+: its connection closed\)$'
	# -n 1: the next one naming it is answered.
	run -0 grpc_txn "$PROXY" "${PREFIX}lost/2" w
	assert_output --partial SUCCESS
	run -0 grep -c dropped "$TESTDIR/proxy.log"
	assert_output 1
}

@test "dropproxy: gRPC: -n -1 loses the answer of every txn with a compare, not of a range or a txn without one" {
	proxy_stop
	proxy_start -n -1
	run grpc_txn "$PROXY" "${PREFIX}a" one
	assert_failure
	run grpc_txn "$PROXY" "${PREFIX}b" two
	assert_failure
	run -0 value_of "$ETCD" "${PREFIX}b"
	assert_output two
	run -0 grpc_get "$PROXY" "${PREFIX}a"
	assert_output one
	# No compare: put alone.
	run -0 sh -c "printf '\n\nput ${PREFIX}c three\n\n\n' | timeout -k 1 20 env ETCDCTL_API=3 etcdctl --endpoints '$PROXY' --command-timeout 5s txn"
	assert_output --partial SUCCESS
	run -0 grep -c dropped "$TESTDIR/proxy.log"
	assert_output 2
}

@test "dropproxy: a bad argument is a usage error" {
	run -2 "$DROPPROXY" -l 1 -u http://10.0.0.1:2379
	assert_output --partial usage
	run -2 "$DROPPROXY" -l "$(free_port)" -u "$ETCD" -n -2
	run -2 "$DROPPROXY" -u "$ETCD"
	run -2 "$DROPPROXY" -l "$(free_port)" -u "$ETCD" -d 10001
	run -2 "$DROPPROXY" -l "$(free_port)" -u "$ETCD" -d -1
	run -2 "$DROPPROXY" -l "$(free_port)" -u "$ETCD" -r KV/Txn
}

# grpc_watch URL KEY REV OUT: etcdctl watching KEY from REV through URL,
# in the background (CURL_PID), its events in OUT.
grpc_watch() {
	timeout -k 1 60 env ETCDCTL_API=3 etcdctl --endpoints "$1" watch \
	    --rev "$3" "$2" >"$4" 2>&1 &
	CURL_PID=$!
}

# etcd_rev: etcd's current revision, asked directly.
etcd_rev() {
	curl -sf "$ETCD/v3/kv/range" -d '{"key":"AA=="}' |
	    jq -r '.header.revision'
}

@test "dropproxy: gRPC: a range is relayed; the first txn with a compare commits but gets no answer, the second is answered" {
	put_direct "${PREFIX}k" hello
	run -0 grpc_get "$PROXY" "${PREFIX}k"
	assert_output hello
	run -0 cat "$TESTDIR/proxy.log"
	assert_output ""
	run grpc_txn "$PROXY" "${PREFIX}a" one
	assert_failure
	run -0 value_of "$ETCD" "${PREFIX}a"
	assert_output one
	run -0 grpc_txn "$PROXY" "${PREFIX}b" two
	assert_output --partial SUCCESS
	run -0 grep -c dropped "$TESTDIR/proxy.log"
	assert_output 1
}

@test "dropproxy: gRPC: a watch streams events; a watcher that goes away does not stop the proxy; -n 0 drops nothing" {
	local rev out="$TESTDIR/watch.out"
	put_direct "${PREFIX}w" before
	rev=$(etcd_rev)
	grpc_watch "$PROXY" "${PREFIX}w" "$rev" "$out"
	wait_for grep -qx before "$out"
	put_direct "${PREFIX}w" later
	wait_for grep -qx later "$out"
	kill -0 "$CURL_PID"
	stop_bg "$CURL_PID"
	CURL_PID=
	run -0 grpc_get "$PROXY" "${PREFIX}w"
	assert_output later
	proxy_stop
	proxy_start -n 0
	run -0 grpc_txn "$PROXY" "${PREFIX}a" 1
	assert_output --partial SUCCESS
	run -0 cat "$TESTDIR/proxy.log"
	assert_output ""
}

@test "dropproxy: gRPC: -d relays a Watch connection late, in order; other calls at once" {
	local rev t0 t1 out="$TESTDIR/watch.out"
	proxy_stop
	proxy_start -d 1000
	put_direct "${PREFIX}w" zero
	rev=$(etcd_rev)
	grpc_watch "$PROXY" "${PREFIX}w" "$rev" "$out"
	wait_for grep -qx zero "$out"
	t0=$(date +%s%N)
	put_direct "${PREFIX}w" one
	put_direct "${PREFIX}w" two
	run -0 grpc_get "$PROXY" "${PREFIX}w"
	assert_output two
	run grep -c -x two "$out"
	assert_output 0
	wait_for grep -qx two "$out"
	t1=$(date +%s%N)
	[ $(((t1 - t0) / 1000000)) -ge 1000 ]
	run -0 grep -x -e zero -e one -e two "$out"
	assert_output "$(printf 'zero\none\ntwo')"
}

# metad_on_proxy: a daemon on the proxy alone (socket $M), in its own
# etcd prefix.
metad_on_proxy() {
	M="$TESTDIR/m.sock"
	metad_spawn M_PID "$M" "$TESTDIR/m.log" --store "etcd:$PROXY" \
	    --etcd-prefix "$PREFIX"
}

@test "dropproxy: gRPC -r KV/Compact: a compaction whose answer is lost is sent again, and done once" {
	local rev
	proxy_stop
	proxy_start -r /etcdserverpb.KV/Compact
	metad_on_proxy
	mctl -s "$M" put c a >/dev/null
	rev=$(mctl -s "$M" -o json put c b | jq -r .rev)
	run -0 mctl -s "$M" compact "$rev"
	run -0 cat "$TESTDIR/proxy.log"
	assert_output --regexp '^dropproxy: dropped the reply to POST /etcdserverpb.KV/Compact \(gRPC stream [0-9]+: its connection closed\)$'
	run -0 mctl -s "$M" status
	assert_line "compact_rev: $rev"
	run -0 mctl -s "$M" get c
	assert_output b
}

@test "dropproxy: gRPC -r Lease/LeaseGrant: a grant whose answer is lost fails, its lease unseen; the next is answered" {
	local l
	proxy_stop
	proxy_start -r /etcdserverpb.Lease/LeaseGrant
	metad_on_proxy
	run mctl -s "$M" lease grant 60s
	assert_failure
	assert_output --partial "etcd /v3/lease/grant: no answer"
	run -0 grep -c "dropped the reply to POST /etcdserverpb.Lease/LeaseGrant" "$TESTDIR/proxy.log"
	assert_output 1
	run -0 mctl -s "$M" lease grant 60s
	l=$output
	run -0 mctl -s "$M" lease ls
	assert_output --partial "$l"
	[ "${#lines[@]}" -eq 1 ]
	# Left to expire, its record's delete would move the shared etcd's
	# rev under a later test that counts revisions.
	run -0 mctl -s "$M" lease revoke "$l"
}

