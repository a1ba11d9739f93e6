#!/usr/bin/env bats
# The remote backend (--store metad:URL[,URL...]): a daemon B that keeps no
# data of its own and uses the daemon A at URL (a Unix socket, unix:PATH,
# or tls://HOST:PORT with --store-cacert, --store-cert, --store-key).
# Writes through B are A's, with A's revisions, forwarded with an idem
# token, as their lines came; B's replica, fed by one watch stream from A,
# answers serializable reads and B's own watches, its keys with their
# leases; linearizable reads on B see every write A acknowledged; a
# session lease granted through B ends with its client's connection to B;
# mutual TLS, and what B says at start when A's TLS refuses it.  Outages,
# lost answers and kill -9: remote_faults.bats.

# bats file_tags=store:local

bats_require_minimum_version 1.5.0
load helpers
load remote_lib

@test "writes through B are A's: put, txn, delete, epoch_bump, compact, a failed precondition; ids echoed" {
	start_a
	start_b
	run -0 b_req '{"id":7,"op":"put","key":"k","value":"v1"}'
	assert_output "$(rv '{"id":7,"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	run -0 b_req '{"op":"txn","if":[{"key":"k","version":1}],"then":[{"op":"put","key":"k","value":"v2"},{"op":"get","key":"k"}],"else":[{"op":"get","key":"k"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"k","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1},{"op":"get","kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2}}],"rev":@2}')"
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output --partial '"value":"v2","version":2'
	# A failed precondition is A's answer, word for word; nothing written.
	run -0 b_req '{"op":"put","key":"k","value":"x","if_version":5}'
	assert_output --partial '"code":"failed_precondition"'
	through_b=$output
	run -0 a_req '{"op":"put","key":"k","value":"x","if_version":5}'
	assert_output "$through_b"
	run -0 b_req '{"op":"delete","key":"k"}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@3}')"
	gone_on_a k
	run -0 b_req '{"op":"epoch_bump","key":"e","owner":"b-client"}'
	assert_output --partial "$(rv '"rev":@4}')"
	run -0 a_req '{"op":"epoch_get","key":"e"}'
	assert_output --partial '"epoch":1,'
	assert_output --partial '"owner":"b-client"'
	run -0 b_req "$(rv '{"op":"compact","rev":@2}')"
	assert_output "$(rv '{"ok":true,"compact_rev":@2,"rev":@4}')"
	run -0 a_req '{"op":"status"}'
	assert_output --partial "$(rv '"compact_rev":@2')"
	assert_output --partial "$(rv '"rev":@4,')"
}

@test "writes on A and through B number one sequence of A's revisions" {
	start_a
	start_b
	local n s
	for n in $(seq 1 10); do
		s=$A
		[ $((n % 2)) -eq 0 ] && s=$B
		run -0 on "$s" req "{\"op\":\"put\",\"key\":\"k\",\"value\":\"v$n\"}"
		assert_output "$(rv "{\"ok\":true,\"kv\":{\"key\":\"k\",\"version\":$n,\"create_rev\":@1,\"mod_rev\":@$n},\"prev_version\":$((n - 1)),\"rev\":@$n}")"
	done
	[ "$(history_len k)" = 10 ]
}

@test "a linearizable read on B sees every write A acknowledged, at once" {
	start_a
	start_b
	local n
	for n in $(seq 1 20); do
		a_req "{\"op\":\"put\",\"key\":\"k\",\"value\":\"v$n\"}" >/dev/null
		run -0 b_req '{"op":"get","key":"k"}'
		assert_output "$(rv "{\"ok\":true,\"kv\":{\"key\":\"k\",\"value\":\"v$n\",\"version\":$n,\"create_rev\":@1,\"mod_rev\":@$n},\"rev\":@$n}")"
	done
	a_req '{"op":"put","key":"l/1","value":"x"}' >/dev/null
	run -0 b_req '{"op":"list","prefix":"l/","consistency":"linearizable"}'
	assert_output --partial '"key":"l/1","value":"x"'
	a_req '{"op":"delete","key":"k"}' >/dev/null
	run -0 b_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@22}')"
}

@test "a serializable read on B answers from its replica: B's own writes at once, A's once the stream brings them" {
	start_a
	start_b
	b_req '{"op":"put","key":"k","value":"v1"}' >/dev/null
	run -0 b_req '{"op":"get","key":"k","consistency":"serializable"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	a_req '{"op":"put","key":"k","value":"v2"}' >/dev/null
	wait_for -t 2 b_sees k v2
	# min_rev on B waits for its replica to reach A's revision.
	a_req '{"op":"put","key":"k","value":"v3"}' >/dev/null
	run -0 b_req "$(rv '{"op":"get","key":"k","consistency":"serializable","min_rev":@3,"timeout_ms":5000}')"
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v3","version":3,"create_rev":@1,"mod_rev":@3},"rev":@3}')"
}

@test "a watch on B replays from from_rev, then sees writes on A and through B, in order, each once" {
	start_a
	start_b
	b_req '{"op":"put","key":"a1","value":"1"}' >/dev/null
	b_req '{"op":"put","key":"a2","value":"2"}' >/dev/null
	a_req '{"op":"put","key":"a3","value":"3"}' >/dev/null
	wait_for -t 2 b_sees a3 3
	watch_open "$B" "$(rv '{"op":"watch","prefix":"a","from_rev":@2}')"
	a_req '{"op":"put","key":"a9","value":"x"}' >/dev/null
	b_req '{"op":"delete","key":"a1"}' >/dev/null
	b_req '{"op":"put","key":"b","value":"not watched"}' >/dev/null
	a_req '{"op":"put","key":"a~","value":"end"}' >/dev/null
	watch_end 6
	assert_line --index 0 "$(rv '{"ok":true,"watch":1,"rev":@3}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"a2","value":"2","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"a3","value":"3","version":1,"create_rev":@3,"mod_rev":@3}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"put","key":"a9","value":"x","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_line --index 4 "$(rv '{"watch":1,"event":"delete","key":"a1","mod_rev":@5}')"
	assert_line --index 5 "$(rv '{"watch":1,"event":"put","key":"a~","value":"end","version":1,"create_rev":@7,"mod_rev":@7}')"
	assert_equal "${#lines[@]}" 6
}

@test "three watches on B are fed by one watch on A; concurrent writers on both, every event once, in rev order" {
	start_a
	start_b
	local n pids=() bgs=()
	for n in 1 2 3; do
		on "$B" raw_held "w$n" '{"op":"watch","prefix":""}' \
		    >"$TESTDIR/w$n.out" &
		bgs+=($!)
	done
	BGS="${bgs[*]}"
	for n in 1 2 3; do
		wait_for grep -q '"ok":true' "$TESTDIR/w$n.out"
	done
	wait_for watches_on "$B" 3
	wait_for watches_on "$A" 1
	on "$A" put_n a- 50 &
	pids+=($!)
	on "$B" put_n b- 50 &
	pids+=($!)
	wait "${pids[@]}"
	for n in 1 2 3; do
		wait_for has_lines 101 "$TESTDIR/w$n.out"
		release "w$n"
	done
	wait "${bgs[@]}"
	BGS=
	watches_on "$A" 1
	for n in 1 2 3; do
		run -0 sed -n 's/.*"mod_rev":\([0-9]*\)}$/\1/p' "$TESTDIR/w$n.out"
		assert_equal "$(tr '\n' ' ' <<<"$output")" \
		    "$(seq $((R0 + 1)) $((R0 + 100)) | tr '\n' ' ')"
		run -0 grep -o '"key":"[ab]-[0-9]*"' "$TESTDIR/w$n.out"
		assert_equal "$(sort -u <<<"$output" | wc -l)" 100
	done
}

@test "idem through B: the same token answers the first outcome, applied once on A" {
	start_a
	start_b
	run -0 b_req '{"id":1,"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$(rv '{"id":1,"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run -0 b_req '{"id":"two","op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$(rv '{"id":"two","ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	# Another body under the token: still the first answer, nothing written.
	run -0 b_req '{"op":"put","key":"k","value":"other","idem":"t1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"a","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	[ "$(history_len k)" = 1 ]
	# A txn whose compare would fail now is replayed as it first was.
	t='{"op":"txn","if":[{"key":"t","version":0}],"then":[{"op":"put","key":"t","value":"1"}],"idem":"x"}'
	run -0 b_req "$t"
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"t","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0}],"rev":@2}')"
	first=$output
	run -0 b_req "$t"
	assert_output "$first"
	[ "$(version_on_a t)" = 1 ]
	run -0 b_req '{"op":"put","key":"k","value":"b","idem":"t2"}'
	assert_output --partial "$(rv '"rev":@3}')"
}

@test "idem through B: one token on 8 connections at once is applied once, every answer the same" {
	start_a
	start_b
	local n bgs=()
	for n in 1 2 3 4 5 6 7 8; do
		b_req '{"op":"put","key":"k","value":"v","idem":"once"}' \
		    >"$TESTDIR/at.$n" &
		bgs+=($!)
	done
	BGS="${bgs[*]}"
	wait "${bgs[@]}"
	BGS=
	run -0 cat "$TESTDIR/at.1"
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	for n in 2 3 4 5 6 7 8; do
		cmp "$TESTDIR/at.1" "$TESTDIR/at.$n"
	done
	[ "$(version_on_a k)" = 1 ]
	[ "$(history_len k)" = 1 ]
}

@test "a session lease granted through B is revoked when its client's connection to B closes" {
	start_a
	start_b
	run -0 b_req '{"op":"lease_grant","ttl_ms":60000}'
	L=$(jq -r .lease <<<"$output")
	b_req "{\"op\":\"put\",\"key\":\"p\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	session_open
	run -0 a_req '{"op":"get","key":"s"}'
	assert_output --partial '"value":"1"'
	assert_output --partial "\"lease\":$SL}"
	run -0 a_req "{\"op\":\"lease_info\",\"lease\":$SL}"
	assert_output --partial '"keys":["s"]'
	# Other connections to B that come and go leave it alone.
	b_req '{"op":"ping"}' >/dev/null
	b_req '{"op":"ping"}' >/dev/null
	run -0 a_req '{"op":"get","key":"s"}'
	assert_output --partial '"value":"1"'
	exec {SESS[1]}>&-
	wait_for -t 2 gone_on_a s
	run -0 a_req "{\"op\":\"lease_info\",\"lease\":$SL}"
	assert_output --partial '"code":"not_found"'
	# The lease that was not a session's stays, with its key.
	run -0 a_req '{"op":"get","key":"p"}'
	assert_output --partial "\"lease\":$L}"
}

@test "a session lease granted through B ends on A within its TTL when B is killed" {
	start_a
	start_b
	session_open 2000
	run -0 a_req '{"op":"get","key":"s"}'
	assert_output --partial '"value":"1"'
	stop_bg -KILL "$B_PID"
	B_PID=
	wait_for -t 4 gone_on_a s
	run -0 a_req "{\"op\":\"lease_info\",\"lease\":$SL}"
	assert_output --partial '"code":"not_found"'
}

@test "over mutual TLS: B with --store metad:tls:// and its client certificate, a CN A allows" {
	local pki="$TESTDIR/pki" port url
	mkdir -p "$pki"
	pki_ca "$pki/ca" remote-test-ca
	pki_cert "$pki/server" ca localhost "subjectAltName=DNS:localhost,IP:127.0.0.1"
	pki_cert "$pki/node-b" ca node-b
	port=$(free_port)
	url="tls://127.0.0.1:$port"
	start_a --listen "$url" --tls-cert "$pki/server.crt" \
	    --tls-key "$pki/server.key" --tls-client-ca "$pki/ca.crt" \
	    --allow-cn node-b
	start_b "metad:$url" --store-cacert "$pki/ca.crt" \
	    --store-cert "$pki/node-b.crt" --store-key "$pki/node-b.key"
	run -0 b_req '{"op":"put","key":"k","value":"v1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output --partial '"value":"v1","version":1'
	watch_open "$B" '{"op":"watch","key":"k"}'
	a_req '{"op":"put","key":"k","value":"v2"}' >/dev/null
	run -0 b_req '{"op":"get","key":"k"}'
	assert_output --partial '"value":"v2","version":2'
	watch_end 2
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2}')"
}

# b_refused WHY CACERT CERT: B started with these TLS files against A's
# TLS listener ($url) exits 1 within 5 s, saying WHY.
b_refused() {
	local t0=$SECONDS
	run timeout 20 "$METAD" --socket "$TESTDIR/b.sock" --store "metad:$url" \
	    --store-cacert "$2" --store-cert "$3.crt" --store-key "$3.key"
	assert_failure 1
	assert_output --partial "$1"
	[ $((SECONDS - t0)) -lt 5 ]
	[ ! -S "$TESTDIR/b.sock" ]
}

@test "over TLS, a wrong CA, a client certificate A refuses, a CN A does not allow: B exits 1 at start, saying which" {
	local pki="$TESTDIR/pki" port url
	mkdir -p "$pki"
	pki_ca "$pki/ca" remote-test-ca
	pki_ca "$pki/other" other-ca
	pki_cert "$pki/server" ca localhost "subjectAltName=DNS:localhost,IP:127.0.0.1"
	pki_cert "$pki/node-b" ca node-b
	pki_cert "$pki/eve" ca eve
	pki_cert "$pki/stranger" other node-b
	port=$(free_port)
	url="tls://127.0.0.1:$port"
	start_a --listen "$url" --tls-cert "$pki/server.crt" \
	    --tls-key "$pki/server.key" --tls-client-ca "$pki/ca.crt" \
	    --allow-cn node-b
	b_refused "the metad used's certificate did not verify against --store-cacert" \
	    "$pki/other.crt" "$pki/node-b"
	b_refused "the metad used refused metad's client certificate (--store-cert)" \
	    "$pki/ca.crt" "$pki/stranger"
	b_refused 'permission_denied: CN "eve" may not use this metad' \
	    "$pki/ca.crt" "$pki/eve"
	# The right ones still start it.
	start_b "metad:$url" --store-cacert "$pki/ca.crt" \
	    --store-cert "$pki/node-b.crt" --store-key "$pki/node-b.key"
	run -0 b_req '{"op":"ping"}'
	assert_output --partial '"ok":true'
}

@test "a key's lease shows on B: put through B or on A, read from the replica, on a B loaded later, in B's watches with with_lease; a revoke on A takes its keys" {
	start_a
	run -0 a_req '{"op":"lease_grant","ttl_ms":60000}'
	L=$(jq -r .lease <<<"$output")
	R0=
	rev_base
	a_req "{\"op\":\"put\",\"key\":\"l/a\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	# compacted at 1: B's load reads l/a at A's compact rev.
	a_req "$(rv '{"op":"compact","rev":@1}')" >/dev/null
	a_req "{\"op\":\"put\",\"key\":\"l/b\",\"value\":\"1\",\"lease\":$L}" >/dev/null
	start_b
	run -0 b_req "{\"op\":\"put\",\"key\":\"l/c\",\"value\":\"1\",\"lease\":$L}"
	assert_output --partial "\"lease\":$L}"
	local k
	for k in a b c; do
		run -0 b_req "{\"op\":\"get\",\"key\":\"l/$k\",\"consistency\":\"serializable\"}"
		assert_output --partial "\"lease\":$L}"
	done
	run -0 b_req '{"op":"list","prefix":"l/"}'
	assert_equal "$(jq -c "[.kvs[] | .lease == $L]" <<<"$output")" '[true,true,true]'
	# A put without the lease detaches the key, on B too.
	a_req '{"op":"put","key":"l/b","value":"2"}' >/dev/null
	run -0 b_req '{"op":"get","key":"l/b"}'
	assert_output --partial '"value":"2"'
	refute_output --partial '"lease"'
	run -0 on "$B" watch_lines 4 "$(rv '{"op":"watch","prefix":"l/","from_rev":@2,"with_lease":true}')"
	assert_line --index 1 --partial "$(rv "\"key\":\"l/b\",\"value\":\"1\",\"version\":1,\"create_rev\":@2,\"mod_rev\":@2,\"lease\":$L}")"
	assert_line --index 2 --partial "$(rv "\"key\":\"l/c\",\"value\":\"1\",\"version\":1,\"create_rev\":@3,\"mod_rev\":@3,\"lease\":$L}")"
	assert_line --index 3 --partial "$(rv '"key":"l/b","value":"2","version":2,"create_rev":@2,"mod_rev":@4}')"
	run -0 b_req "$(rv '{"op":"get","key":"l/b","rev":@2}')"
	assert_output --partial "\"lease\":$L}"
	a_req "{\"op\":\"lease_revoke\",\"lease\":$L}" >/dev/null
	run -0 b_req '{"op":"list","prefix":"l/"}'
	assert_equal "$(jq -c '[.kvs[].key]' <<<"$output")" '["l/b"]'
}

@test "a write through B goes to A as its line came, its id and idem dropped, the token spliced in: blanks, escapes, unicode, ids of every kind" {
	start_a
	start_b
	# The direct decoder's line: blanks kept, a string id with escapes.
	run -0 b_req '{ "id" : "x\"y\\z" , "op":"put",  "key":"kä", "value":"a\nb\"é" }'
	assert_output "$(rv '{"id":"x\"y\\z","ok":true,"kv":{"key":"kä","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	run -0 a_req '{"op":"get","key":"kä"}'
	assert_output --partial '"value":"a\nb\"é",'
	# \u escapes and a \u0000 go the general way, spliced the same.
	run -0 b_req '{"op":"put","key":"k\u00e9","value":"a\u0000b","id":-3}'
	assert_output "$(rv '{"id":-3,"ok":true,"kv":{"key":"ké","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
	run -0 a_req '{"op":"get","key":"ké"}'
	assert_output --partial '"value":"a\u0000b",'
	# A name with an escape may spell "id": its tree decides, and A gets
	# none (its answer would not be one).
	run -0 b_req '{"\u0069d":5,"op":"put","key":"n","value":"v"}'
	assert_output "$(rv '{"id":5,"ok":true,"kv":{"key":"n","version":1,"create_rev":@3,"mod_rev":@3},"prev_version":0,"rev":@3}')"
	# Nested values holding "id", braces and quotes in strings.
	run -0 b_req '{"op":"txn","id":"t","if":[],"then":[{"op":"put","key":"id","value":"{\"id\":1}]"}],"else":[]}'
	assert_output "$(rv '{"id":"t","ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"id","version":1,"create_rev":@4,"mod_rev":@4},"prev_version":0}],"rev":@4}')"
	run -0 a_req '{"op":"get","key":"id"}'
	assert_output --partial '"value":"{\"id\":1}]",'
	# The client's token is B's to scope: A saw another one.
	run -0 b_req '{"op":"put","key":"i","value":"1","idem":"t9","id":1}'
	assert_output --partial "$(rv '"rev":@5}')"
	run -0 a_req '{"op":"put","key":"i","value":"2","idem":"t9"}'
	assert_output --partial "$(rv '"version":2,"create_rev":@5,"mod_rev":@6}')"
}
