#!/usr/bin/env bats
# Idempotent writes (metad-protocol(7), IDEMPOTENT WRITES): a write's
# "idem" token answers it again with its first answer, without writing,
# on every backend.

load helpers

setup() {
	testdir
	chmod 0755 "$TESTDIR"
}

teardown() {
	stop_bg ${BGS:-}
	metad_cleanup
}

# no_id JSON: the answer without its "id" member.
# at_once NAME REQUEST: REQUEST sent on 8 connections at once, each answer
# in $TESTDIR/NAME.1 to .8; every answer must be the first's.
at_once() {
	local name=$1 line=$2 i
	BGS=
	for i in 1 2 3 4 5 6 7 8; do
		req "$line" >"$TESTDIR/$name.$i" &
		BGS="$BGS $!"
	done
	for i in $BGS; do
		wait "$i"
	done
	BGS=
	for i in 2 3 4 5 6 7 8; do
		cmp "$TESTDIR/$name.1" "$TESTDIR/$name.$i"
	done
}

no_id() {
	sed 's/^{"id":[^,]*,/{/' <<<"$1"
}

# version KEY: the key's version, from a get.
version() {
	req "{\"op\":\"get\",\"key\":\"$1\"}" | sed -n 's/.*"version":\([0-9]*\).*/\1/p'
}

@test "a put with a token is applied once; sent again it answers the same, with its own id" {
	metad_start
	run req '{"id":1,"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$(rv '{"id":1,"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	first=$output
	run req '{"id":"two","op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$(rv '{"id":"two","ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	# No id: the same answer, none echoed.
	run req '{"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$(no_id "$first")"
	[ "$(version k)" = 1 ]
	# Another body under the same token: still the first answer, nothing
	# written (the value stays "a").
	run req '{"op":"put","key":"k","value":"other","idem":"t1"}'
	assert_output "$(no_id "$first")"
	run mctl get k
	assert_output a
	# A new token writes.
	run req '{"op":"put","key":"k","value":"b","idem":"t2"}'
	assert_output --partial "$(rv '"rev":@2}')"
}

@test "a txn, a delete, an epoch bump and a compact are replayed as first answered" {
	metad_start
	t='{"op":"txn","if":[{"key":"k","version":0}],"then":[{"op":"put","key":"k","value":"1"},{"op":"get","key":"k"}],"else":[{"op":"get","key":"k"}],"idem":"x"}'
	run req "$t"
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0},{"op":"get","kv":{"key":"k","value":"1","version":1,"create_rev":@1,"mod_rev":@1}}],"rev":@1}')"
	first=$output
	# Its compare would fail now: the replay is still the first outcome.
	run req "$t"
	assert_output "$first"
	run req '{"op":"epoch_bump","key":"e","owner":"me","idem":"eb"}'
	bump=$output
	assert_output --partial "$(rv '"rev":@2}')"
	run req '{"op":"epoch_bump","key":"e","owner":"me","idem":"eb"}'
	assert_output "$bump"
	run req '{"op":"delete","key":"k","idem":"d"}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@3}')"
	run req '{"op":"delete","key":"k","idem":"d"}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@3}')"
	run req "$(rv '{"op":"compact","rev":@2,"idem":"c"}')"
	compact=$output
	assert_output --partial '"ok":true'
	run req "$(rv '{"op":"compact","rev":@3,"idem":"c"}')"
	assert_output "$compact"
	run req '{"op":"epoch_get","key":"e"}'
	assert_output --partial '"epoch":1,'
}

@test "a failed precondition is replayed as the same failure, even once it would hold" {
	metad_start
	mctl put k v1 >/dev/null
	run req '{"op":"put","key":"k","value":"x","if_version":2,"idem":"p"}'
	assert_output --partial '"code":"failed_precondition"'
	assert_output --partial '"message":"version is 1, not 2"'
	first=$output
	mctl put k v2 >/dev/null	# now at version 2: the put would hold
	run req '{"op":"put","key":"k","value":"x","if_version":2,"idem":"p"}'
	assert_output "$first"
	run mctl get k
	assert_output v2
	# A fenced write and an unknown lease are outcomes too.
	run req '{"op":"put","key":"f","value":"x","fence":{"key":"e","epoch":3},"idem":"fe"}'
	assert_output --partial '"code":"fenced"'
	fenced=$output
	req '{"op":"epoch_bump","key":"e"}' >/dev/null
	run req '{"op":"put","key":"f","value":"x","fence":{"key":"e","epoch":3},"idem":"fe"}'
	assert_output "$fenced"
}

@test "lease grant and revoke with a token: one lease, one revoke" {
	metad_start
	run req '{"op":"lease_grant","ttl_ms":60000,"idem":"g"}'
	grant=$output
	id=$(sed -n 's/.*"lease":\([0-9]*\).*/\1/p' <<<"$grant")
	[ -n "$id" ]
	run req '{"op":"lease_grant","ttl_ms":60000,"idem":"g"}'
	assert_output "$grant"
	run req '{"op":"lease_list"}'
	[ "$(grep -o '"lease":' <<<"$output" | wc -l)" -eq 1 ]
	put=$(mctl -o json put --lease "$id" lk v | jq -r .rev)
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,"deleted":1\}$'
	revoked=$output
	rev=$(jq -r .rev <<<"$revoked")
	[ "$rev" -gt "$put" ]
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output "$revoked"
	# Without the token: the lease is gone.
	run req "{\"op\":\"lease_revoke\",\"lease\":$id}"
	assert_output --partial '"code":"not_found"'
	# A revoke that found no lease is an outcome too: replayed as it was,
	# even once a lease is granted again.
	run req '{"op":"lease_revoke","lease":12345,"idem":"nf"}'
	assert_output --partial '"code":"not_found"'
	notfound=$output
	run req '{"op":"lease_revoke","lease":12345,"idem":"nf"}'
	assert_output "$notfound"
}

# bats test_tags=store:etcd
@test "etcd: a lease grant and a revoke whose txn answers etcd loses are applied once and answered truly" {
	local prefix="idem-test/$BATS_TEST_NUMBER.$$/" grant id put revoked
	[ -x "$ROOT/build/tests/dropproxy" ] || {
		echo "build/tests/dropproxy is not built" >&2
		return 1
	}
	testdir
	# The txns putting a lease's record lose their answers: the grant's
	# and the revoke's (its note); the daemon reads the token's record
	# back to learn that they landed.  The proxy is its one endpoint (with
	# another, it would go on there after the first loss).
	proxy_spawn "$METAD_TEST_ETCD" -n 2 -m "${prefix}l/"
	BGS=$PROXY_PID
	SOCK="$TESTDIR/m.sock"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/m.log" \
	    --store "etcd:$PROXY_URL" --etcd-prefix "$prefix"
	run req '{"id":1,"op":"lease_grant","ttl_ms":60000,"idem":"g"}'
	assert_output --regexp '^\{"id":1,"ok":true,"lease":[0-9]+,"ttl_ms":60000\}$'
	grant=$output
	id=$(jq -r .lease <<<"$grant")
	run req '{"id":1,"op":"lease_grant","ttl_ms":60000,"idem":"g"}'
	assert_output "$grant"
	run -0 mctl -s "$SOCK" lease ls
	assert_output --partial "$id"
	[ "${#lines[@]}" -eq 1 ]
	put=$(mctl -s "$SOCK" -o json put --lease "$id" lk v | jq -r .rev)
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,"deleted":1\}$'
	revoked=$output
	[ "$(jq -r .rev <<<"$revoked")" -gt "$put" ]
	run -0 grep -c "dropped the reply" "$TESTDIR/proxy.log"
	assert_output 2
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output "$revoked"
	run mctl -s "$SOCK" get lk
	assert_failure
	run -0 mctl -s "$SOCK" lease ls
	assert_output ""
}

# bats test_tags=store:etcd
@test "etcd: a revoke whose answer's txn answer etcd loses is answered truly, and replayed" {
	local prefix="idem-test/$BATS_TEST_NUMBER.$$/" id revoked
	[ -x "$ROOT/build/tests/dropproxy" ] || {
		echo "build/tests/dropproxy is not built" >&2
		return 1
	}
	testdir
	# The three txns naming the token's record lose their answers (each
	# lands): the grant's, the revoke's note and the txn recording the
	# revoke's answer, after which the daemon answers what it knows.
	# (A record left "begun" is finished from the stream's end of the
	# lease: the LeaseRevoke test below.)
	proxy_spawn "$METAD_TEST_ETCD" -n 3 -m "${prefix}i/"
	BGS=$PROXY_PID
	SOCK="$TESTDIR/m.sock"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/m.log" \
	    --store "etcd:$PROXY_URL" --etcd-prefix "$prefix"
	id=$(req '{"op":"lease_grant","ttl_ms":60000,"idem":"g"}' | jq -r .lease)
	[ -n "$id" ] && [ "$id" != null ]
	mctl -s "$SOCK" put --lease "$id" lk v >/dev/null
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,"deleted":1\}$'
	revoked=$output
	run -0 grep -c "dropped the reply" "$TESTDIR/proxy.log"
	assert_output 3
	run grep -c "not known to be recorded for its idem token" "$TESTDIR/m.log"
	assert_output 1
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output "$revoked"
}

# bats test_tags=store:etcd
@test "etcd: a revoke whose LeaseRevoke answer etcd loses is answered truly, and replayed" {
	local prefix="idem-test/$BATS_TEST_NUMBER.$$/" id put revoked
	[ -x "$ROOT/build/tests/dropproxy" ] || {
		echo "build/tests/dropproxy is not built" >&2
		return 1
	}
	testdir
	proxy_spawn "$METAD_TEST_ETCD" -n 1 -r /etcdserverpb.Lease/LeaseRevoke
	BGS=$PROXY_PID
	SOCK="$TESTDIR/m.sock"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/m.log" \
	    --store "etcd:$PROXY_URL,$METAD_TEST_ETCD" --etcd-prefix "$prefix"
	id=$(mctl -s "$SOCK" -o json lease grant 60s | jq -r .lease)
	put=$(mctl -s "$SOCK" -o json put --lease "$id" lk v | jq -r .rev)
	mctl -s "$SOCK" put --lease "$id" lk2 v >/dev/null
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,"deleted":2\}$'
	revoked=$output
	[ "$(jq -r .rev <<<"$revoked")" -gt "$put" ]
	run -0 grep -c "dropped the reply to POST /etcdserverpb.Lease/LeaseRevoke" "$TESTDIR/proxy.log"
	assert_output 1
	run req "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r\"}"
	assert_output "$revoked"
	run mctl -s "$SOCK" get lk2
	assert_failure
}

# bats test_tags=store:durable
@test "a token is answered again after kill -9 and a restart" {
	metad_start
	run req '{"op":"put","key":"k","value":"a","idem":"crash"}'
	first=$output
	run req '{"op":"put","key":"k","value":"x","if_absent":true,"idem":"crash2"}'
	failed=$output
	assert_output --partial '"code":"failed_precondition"'
	metad_stop KILL
	metad_start
	run req '{"op":"put","key":"k","value":"b","idem":"crash"}'
	assert_output "$first"
	run req '{"op":"delete","key":"k","idem":"crash2"}'
	assert_output "$failed"
	run mctl get k
	assert_output a
}

@test "tokens are their peer's: another uid's same token is its own" {
	[ "$(id -u)" -eq 0 ] || skip "root: needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
	metad_start --socket-mode 0666 --allow-uid 65534
	run req '{"op":"put","key":"k","value":"root","idem":"same"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	nobody() {
		printf '%s\n' "$1" | setpriv --reuid=65534 --regid=65534 \
		    --clear-groups socat -t 2 - "UNIX-CONNECT:$SOCK"
	}
	run nobody '{"op":"put","key":"k","value":"nobody","idem":"same"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1,"rev":@2}')"
	run nobody '{"op":"put","key":"k","value":"nobody","idem":"same"}'
	assert_output --partial "$(rv '"rev":@2}')"
	run req '{"op":"put","key":"k","value":"root","idem":"same"}'
	assert_output --partial "$(rv '"rev":@1}')"
	run mctl get k
	assert_output nobody
}

# bats test_tags=not-remote
@test "--idem-window: past it, the token is forgotten and the write applies again" {
	metad_start --idem-window 1s
	run req '{"op":"put","key":"k","value":"a","idem":"w"}'
	assert_output --partial "$(rv '"rev":@1}')"
	run req '{"op":"put","key":"k","value":"a","idem":"w"}'
	assert_output --partial "$(rv '"rev":@1}')"
	# Expired: applied again (at a new rev), and recorded again.
	again() {
		req '{"op":"put","key":"k","value":"a","idem":"w"}' |
		    grep -q "$(rv '"rev":@2}')"
	}
	wait_for -t 20 again
	run req '{"op":"put","key":"k","value":"a","idem":"w"}'
	assert_output --partial "$(rv '"rev":@2}')"
	[ "$(version k)" = 2 ]
}

@test "a lease grant and a revoke with one token on 8 connections at once: one lease, one revoke, one answer" {
	metad_start
	local id
	at_once g '{"op":"lease_grant","ttl_ms":60000,"idem":"g8"}'
	run cat "$TESTDIR/g.1"
	assert_output --regexp '^\{"ok":true,"lease":[0-9]+,"ttl_ms":60000\}$'
	id=$(jq -r .lease "$TESTDIR/g.1")
	run req '{"op":"lease_list"}'
	[ "$(grep -o '"lease":' <<<"$output" | wc -l)" -eq 1 ]
	mctl put --lease "$id" lk v >/dev/null
	at_once r "{\"op\":\"lease_revoke\",\"lease\":$id,\"idem\":\"r8\"}"
	run cat "$TESTDIR/r.1"
	assert_output --regexp '^\{"ok":true,"rev":[0-9]+,"deleted":1\}$'
	# Pipelined on one connection, too.
	run raw <<-EOF
	{"id":1,"op":"lease_grant","ttl_ms":60000,"idem":"gp"}
	{"id":2,"op":"lease_grant","ttl_ms":60000,"idem":"gp"}
	EOF
	[ "$(jq -r .lease <<<"${lines[0]}")" = "$(jq -r .lease <<<"${lines[1]}")" ]
	run req '{"op":"lease_list"}'
	[ "$(grep -o '"lease":' <<<"$output" | wc -l)" -eq 1 ]
}

@test "the same token sent on 8 connections at once is applied once" {
	metad_start
	local i
	BGS=
	for i in 1 2 3 4 5 6 7 8; do
		req "{\"op\":\"put\",\"key\":\"k\",\"value\":\"v$i\",\"idem\":\"dup\"}" \
		    >"$TESTDIR/ans.$i" &
		BGS="$BGS $!"
	done
	for i in $BGS; do
		wait "$i"
	done
	BGS=
	for i in 2 3 4 5 6 7 8; do
		cmp "$TESTDIR/ans.1" "$TESTDIR/ans.$i"
	done
	run cat "$TESTDIR/ans.1"
	assert_output --partial "$(rv '"version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	[ "$(version k)" = 1 ]
	# Pipelined on one connection, too.
	run raw <<-EOF
	{"id":1,"op":"put","key":"p","value":"1","idem":"pipe"}
	{"id":2,"op":"put","key":"p","value":"2","idem":"pipe"}
	EOF
	assert_line --index 0 "$(rv '{"id":1,"ok":true,"kv":{"key":"p","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
	assert_line --index 1 "$(rv '{"id":2,"ok":true,"kv":{"key":"p","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
}

@test "a token must be a string of 1 to 128 bytes, on a write" {
	metad_start
	run req '{"op":"put","key":"k","value":"a","idem":""}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'field \"idem\"'
	run req '{"op":"put","key":"k","value":"a","idem":7}'
	assert_output --partial '"code":"bad_request"'
	long=$(printf 'x%.0s' $(seq 129))
	run req "{\"op\":\"put\",\"key\":\"k\",\"value\":\"a\",\"idem\":\"$long\"}"
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","key":"k","idem":"r"}'
	assert_output --partial 'unknown field \"idem\"'
	run req "{\"op\":\"put\",\"key\":\"k\",\"value\":\"a\",\"idem\":\"${long:1}\"}"
	assert_output --partial '"ok":true'
	run req '{"op":"put","key":"k","value":"a","idem":"é✓"}'
	assert_output --partial '"ok":true'
}

@test "writes with tokens on 16 connections at once: each replay is its first answer" {
	metad_start
	local i
	BGS=
	for i in $(seq 16); do
		(
			req "{\"op\":\"put\",\"key\":\"c$i\",\"value\":\"$i\",\"idem\":\"c$i\"}" \
			    >"$TESTDIR/first.$i"
			req "{\"op\":\"put\",\"key\":\"c$i\",\"value\":\"$i\",\"idem\":\"c$i\"}" \
			    >"$TESTDIR/again.$i"
		) &
		BGS="$BGS $!"
	done
	for i in $BGS; do
		wait "$i"
	done
	BGS=
	for i in $(seq 16); do
		grep -q '"ok":true' "$TESTDIR/first.$i"
		cmp "$TESTDIR/first.$i" "$TESTDIR/again.$i"
		# The answer's rev is the key's mod_rev, as a read says.
		rev=$(sed -n 's/.*"rev":\([0-9]*\)}$/\1/p' "$TESTDIR/first.$i")
		run req "{\"op\":\"get\",\"key\":\"c$i\"}"
		assert_output --partial "\"version\":1,\"create_rev\":$rev,\"mod_rev\":$rev}"
	done
}

# bats test_tags=store:etcd
@test "etcd: a write whose txn answer etcd loses is applied once, and its token replays the answer" {
	[ -n "${METAD_TEST_ETCD:-}" ] || skip "needs the etcd of tests/run-etcd"
	[ -x "$ROOT/build/tests/dropproxy" ] || {
		echo "build/tests/dropproxy is not built" >&2
		return 1
	}
	testdir
	local prefix="idem-test/$BATS_TEST_NUMBER.$$/"
	# Only the txn writing key "lost" loses its reply; the daemon then
	# asks the next endpoint, etcd itself, whether it landed.
	proxy_spawn "$METAD_TEST_ETCD" -n 1 -k "${prefix}k/lost"
	BGS=$PROXY_PID
	SOCK="$TESTDIR/m.sock"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/m.log" \
	    --store "etcd:$PROXY_URL,$METAD_TEST_ETCD" --etcd-prefix "$prefix"
	run req '{"id":1,"op":"put","key":"lost","value":"a","idem":"L"}'
	assert_output --regexp '^\{"id":1,"ok":true,"kv":\{"key":"lost","version":1,"create_rev":([0-9]+),"mod_rev":\1\},"prev_version":0,"rev":\1\}$'
	first=$output
	run grep -c dropped "$TESTDIR/proxy.log"
	assert_output 1
	run req '{"id":1,"op":"put","key":"lost","value":"b","idem":"L"}'
	assert_output "$first"
	run req '{"op":"get","key":"lost"}'
	assert_output --partial '"value":"a","version":1,'
}

# bats test_tags=store:etcd
@test "etcd: expired records are swept from the prefix, those in their window stay" {
	metad_start --idem-window 2s
	req '{"op":"put","key":"k","value":"a","idem":"old"}' >/dev/null
	records() {
		curl -sf "$ETCD_URL/v3/kv/range" -d "{\"key\":\"$(printf %s "${ETCD_PREFIX}i/" | base64 -w0)\",\"range_end\":\"$(printf %s "${ETCD_PREFIX}i0" | base64 -w0)\",\"count_only\":true}" |
		    jq -r '.count // "0"'
	}
	run records
	assert_output 1
	no_records() {
		[ "$(records)" = 0 ]
	}
	wait_for -t 30 no_records
	# A record within its window is kept through sweeps.
	metad_stop
	metad_start --idem-window 1h --log-level debug
	run req '{"op":"put","key":"k","value":"b","idem":"new"}'
	first=$output
	wait_for -t 30 grep -q "idem sweep: 1 records read, 0 expired" "$TESTDIR/metad.log"
	run records
	assert_output 1
	run req '{"op":"put","key":"k","value":"c","idem":"new"}'
	assert_output "$first"
}

# bats test_tags=store:sqlite
@test "sqlite: expired records are dropped by later writes with a token, 4 at most each" {
	metad_start --idem-window 1s
	local i
	for i in 1 2 3 4 5 6; do
		req "{\"op\":\"put\",\"key\":\"k$i\",\"value\":\"a\",\"idem\":\"t$i\"}" >/dev/null
	done
	# Past the window of all six: t1's put applies again, and drops the
	# 4 oldest expired records (t1 to t4) before it records its own.
	local after_ms=$(($(date +%s%3N) + 1100))
	past() {
		[ "$(date +%s%3N)" -gt "$after_ms" ]
	}
	wait_for past
	run req '{"op":"put","key":"k1","value":"a","idem":"t1"}'
	assert_output --partial '"version":2,'
	metad_stop		# the database is the daemon's while it runs
	run sqlite3 "$DB" 'SELECT CAST(substr(tok, 7) AS TEXT) FROM idem ORDER BY expires'
	assert_output "$(printf 't5\nt6\nt1')"
}

@test "metactl --idem on put, cas, del and txn: run again, the same output and exit status" {
	metad_start
	run mctl put k v --idem p1
	assert_success
	assert_output 1
	run mctl put k w --idem p1
	assert_success
	assert_output 1
	run mctl get k
	assert_output v
	run mctl cas k 7 x --idem c1
	assert_failure 3
	mctl put k v2 >/dev/null
	run mctl cas k 7 x --idem c1
	assert_failure 3
	run mctl -o json txn --idem t1 <<<'{"then":[{"op":"put","key":"t","value":"1"}]}'
	assert_success
	first=$output
	run mctl -o json txn --idem t1 <<<'{"then":[{"op":"put","key":"t","value":"1"}]}'
	assert_output "$first"
	run mctl del k --idem d1
	assert_output 1
	run mctl del k --idem d1
	assert_output 1
	run mctl put k v --idem ""
	assert_failure 2
	assert_output --partial 'invalid --idem'
}
