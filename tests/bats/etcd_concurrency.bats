#!/usr/bin/env bats
# Writes out together on etcd: many txns in flight at once, each guarded by
# compares on the keys it read (no global serialization point): no lost
# update, exact versions, each connection's writes in the order sent, one
# winner between daemons, and exactly once when a reply is lost meanwhile.
# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
	metad_start
	A="$SOCK"
}

teardown() {
	stop_bg "${B_PID:-}" "${PROXY_PID:-}"
	metad_cleanup
}

# cas_adder SOCK N OUT: add 1 to the number in key ctr N times, each a
# read then a put --if-version of the version read, again on a lost race
# (at most 400 tries); one line "VERSION_READ VERSION_ANSWERED" in OUT a
# success.
cas_adder() {
	local sock=$1 n=$2 out=$3 done=0 tries=0 got v val ans
	while [ "$done" -lt "$n" ] && [ "$tries" -lt 400 ]; do
		tries=$((tries + 1))
		got=$("$METACTL" -s "$sock" -o json get ctr) || continue
		v=$(jq -r .kv.version <<<"$got")
		val=$(jq -r .kv.value <<<"$got")
		if ans=$("$METACTL" -s "$sock" put ctr $((val + 1)) \
		    --if-version "$v" 2>/dev/null); then
			echo "$v $ans" >>"$out"
			done=$((done + 1))
		fi
	done
}

@test "etcd concurrency: read-then-put --if-version from 6 connections loses no update, each answered its exact version" {
	run -0 mctl -s "$A" put ctr 0
	local j pids=()
	for j in 1 2 3 4 5 6; do
		cas_adder "$A" 12 "$TESTDIR/cas.$j" &
		pids+=($!)
	done
	for j in "${pids[@]}"; do
		wait_bg "$j" 120
	done
	# 72 increments, each on the version it read: value 72, version 73.
	run -0 mctl -s "$A" -o json get ctr
	assert_equal "$(jq -r .kv.value <<<"$output")" 72
	assert_equal "$(jq -r .kv.version <<<"$output")" 73
	run cat "$TESTDIR"/cas.*
	assert_equal "${#lines[@]}" 72
	# Each success answered the version after the one it read, and no two
	# successes made the same version.
	run awk '$2 != $1 + 1' "$TESTDIR"/cas.*
	assert_output ""
	run sh -c "cut -d' ' -f2 '$TESTDIR'/cas.* | sort -n | uniq -d"
	assert_output ""
}

@test "etcd concurrency: 60 pipelined writes on one connection are applied and answered in the order sent" {
	local i
	# Writes of one key and of others, interleaved, in one burst.
	for i in $(seq 1 30); do
		printf '{"op":"put","key":"p","value":"v%d","id":%d}\n' "$i" "$i"
		printf '{"op":"put","key":"q%d","value":"x","id":%d}\n' "$i" \
		    $((100 + i))
	done >"$TESTDIR/in"
	socat -t 30 - "UNIX-CONNECT:$A" <"$TESTDIR/in" >"$TESTDIR/out"
	run jq -r .id "$TESTDIR/out"
	assert_output "$(for i in $(seq 1 30); do echo "$i"; echo $((100 + i)); done)"
	# p's versions 1..30 in order, revs going up in the order sent.
	run jq -r 'select(.id < 100) | .kv.version' "$TESTDIR/out"
	assert_output "$(seq 1 30)"
	run sh -c "jq -r .rev '$TESTDIR/out' | sort -c -n -u && echo sorted"
	assert_output sorted
	run -0 mctl -s "$A" get p
	assert_output v30
}

@test "etcd concurrency: two daemons race put --if-absent on the same 30 keys: exactly one winner each" {
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log"
	local i s
	for s in a b; do
		for i in $(seq 1 30); do
			printf '{"op":"put","key":"r%d","value":"%s","if_absent":true}\n' \
			    "$i" "$s"
		done >"$TESTDIR/in.$s"
	done
	socat -t 30 - "UNIX-CONNECT:$A" <"$TESTDIR/in.a" >"$TESTDIR/out.a" &
	local pa=$!
	socat -t 30 - "UNIX-CONNECT:$B" <"$TESTDIR/in.b" >"$TESTDIR/out.b"
	wait "$pa"
	# Every request answered: a win (version 1) or failed_precondition.
	run sh -c "cat '$TESTDIR'/out.a '$TESTDIR'/out.b | wc -l"
	assert_output 60
	run sh -c "cat '$TESTDIR'/out.a '$TESTDIR'/out.b | grep -c '\"ok\":true'"
	assert_output 30
	run sh -c "cat '$TESTDIR'/out.a '$TESTDIR'/out.b | grep -c failed_precondition"
	assert_output 30
	# The winner's value is what both daemons read, at version 1.
	for i in $(seq 1 30); do
		s=$(jq -r "select(.ok) | .kv.key" "$TESTDIR/out.a" | grep -cx "r$i" || true)
		[ "$s" = 1 ] && s=a || s=b
		run -0 mctl -s "$B" -o json get "r$i"
		assert_equal "$(jq -r '[.kv.value, .kv.version] | join(" ")' <<<"$output")" "$s 1"
	done
}

@test "etcd concurrency: a reply lost while other writes are in flight is applied once, and the others too" {
	local i before
	# Only the txn writing key "lost" loses its reply (its gRPC
	# connection closes: the replies in flight on it are lost too).
	proxy_spawn "$ETCD_URL" -n 1 -k "${ETCD_PREFIX}k/lost"
	metad_stop
	metad_start --store "etcd:$PROXY_URL,$ETCD_URL"
	A="$SOCK"
	for i in 1 2 3 4; do
		put_n "w$i/" 40 &
		eval "P$i=\$!"
	done
	sleep 0.05	# the writers are under way (their count is checked below)
	run -0 mctl -s "$A" -o json put lost once
	assert_equal "$(jq -r .kv.version <<<"$output")" 1
	for i in 1 2 3 4; do
		eval "wait \$P$i"
	done
	run grep -c dropped "$TESTDIR/proxy.log"
	assert_output 1
	# etcd holds each write once: every key at version 1, lost too.
	metad_stop
	metad_start
	A="$SOCK"
	run -0 mctl -s "$A" -o json get lost
	assert_equal "$(jq -r '[.kv.value, .kv.version] | join(" ")' <<<"$output")" "once 1"
	run -0 mctl -s "$A" -o json ls w
	assert_equal "$(jq -s '[.[].kvs // [] | .[]] | length' <<<"$output")" 160
	assert_equal "$(jq -s '[.[].kvs // [] | .[] | select(.version != 1)] | length' <<<"$output")" 0
}
