#!/usr/bin/env bats
# The TLS listener (metad(8), TLS; --listen tls://HOST:PORT): mutual TLS
# with a throwaway CA made here by the openssl CLI, identities by the
# client certificate's CN (--allow-cn, --read-only-cn), refusals, TLS 1.2
# at least, SIGHUP rotation, the per-peer limit by CN, start-up errors,
# and metactl and libmetad-client over TLS, on IPv4 and IPv6 loopback.

load helpers
bats_require_minimum_version 1.5.0

# The PKI, once for the file: a CA, another CA, the daemon's certificate
# (localhost, 127.0.0.1, ::1) and a second one for rotation, clients
# alice (rw), bob (ro), eve (no access), alice again signed by the other
# CA, and a client certificate without a CN.
setup_file() {
	local d="$BATS_FILE_TMPDIR/pki"
	mkdir -p "$d"
	pki_ca "$d/ca" testca
	pki_ca "$d/other" otherca
	pki_cert "$d/server" ca localhost \
	    "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
	pki_cert "$d/server2" ca localhost \
	    "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
	pki_cert "$d/alice" ca alice
	pki_cert "$d/bob" ca bob
	pki_cert "$d/eve" ca eve
	pki_cert "$d/alice-other" other alice
	pki_cert "$d/nocn" ca "" "" "/O=metad-test"
}

setup() {
	PKI="$BATS_FILE_TMPDIR/pki"
	PORT=$(free_port)
	URL="tls://127.0.0.1:$PORT"
}

teardown() {
	local v fd
	for v in ${!HOLD_*}; do
		stop_bg "${!v}"
	done
	for v in ${!HOLDFD_*}; do
		fd=${!v}
		exec {fd}>&- 2>/dev/null || true
	done
	unset ${!HOLD_*} ${!HOLDFD_*}
	metad_cleanup
}

# tls_start [OPTION...]: the test's daemon with a TLS listener on 127.0.0.1
# and ::1, its files copied to $TESTDIR (rotation replaces them there).
tls_start() {
	testdir
	cp "$PKI/server.crt" "$TESTDIR/tls.crt"
	cp "$PKI/server.key" "$TESTDIR/tls.key"
	metad_start --log-level info --listen "$URL" \
	    --listen "tls://[::1]:$PORT" \
	    --tls-cert "$TESTDIR/tls.crt" --tls-key "$TESTDIR/tls.key" \
	    --tls-client-ca "$PKI/ca.crt" --allow-cn alice --read-only-cn bob \
	    "$@"
}

# tctl WHO ARG...: metactl over TLS as the client WHO.
tctl() {
	local who=$1
	shift
	"$METACTL" -s "$URL" --cacert "$PKI/ca.crt" --cert "$PKI/$who.crt" \
	    --key "$PKI/$who.key" "$@"
}

# tls_raw WHO [CA]: request lines on stdin over a TLS connection as WHO
# (a file in the PKI; "-": no certificate); the answers on stdout.
tls_raw() {
	local cert=
	[ "$1" = - ] || cert="cert=$PKI/$1.crt,key=$PKI/$1.key,"
	socat -t 30 - "OPENSSL:127.0.0.1:$PORT,${cert}cafile=$PKI/${2:-ca}.crt"
}

# tls_hold NAME WHO: a TLS connection as WHO kept open; tls_send NAME LINE
# writes a request on it, its answers go to $TESTDIR/NAME.out; tls_drop
# NAME ends it (the client's end of stream, as a client leaving).
tls_hold() {
	local fd
	mkfifo "$TESTDIR/$1.in"
	socat -t 5 - "OPENSSL:127.0.0.1:$PORT,cert=$PKI/$2.crt,key=$PKI/$2.key,cafile=$PKI/ca.crt" \
	    <"$TESTDIR/$1.in" >"$TESTDIR/$1.out" 2>&1 3>&- &
	printf -v "HOLD_$1" %s "$!"
	exec {fd}>"$TESTDIR/$1.in"
	printf -v "HOLDFD_$1" %s "$fd"
}

tls_drop() {
	local v="HOLDFD_$1" p="HOLD_$1" fd
	fd=${!v}
	exec {fd}>&-
	wait_bg "${!p}"
	unset "$v" "$p"
}

tls_send() {
	local v="HOLDFD_$1"
	printf '%s\n' "$2" >&"${!v}"
}

# lines_in FILE N: FILE has N lines at least.
lines_in() {
	[ "$(wc -l <"$1")" -ge "$2" ]
}

# served_serial: the serial of the certificate a new connection is shown.
served_serial() {
	openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$PKI/ca.crt" \
	    -cert "$PKI/alice.crt" -key "$PKI/alice.key" </dev/null \
	    2>/dev/null | openssl x509 -noout -serial
}

@test "the rw CN puts, gets and watches, on 127.0.0.1 and [::1]" {
	tls_start
	run tctl alice put k v1
	assert_success
	assert_output 1
	run tctl alice get k
	assert_output v1
	tctl alice watch k --count 1 >"$TESTDIR/watch" 2>&1 3>&- &
	local w=$!
	until_status watches 1
	run "$METACTL" -s "tls://[::1]:$PORT" --cacert "$PKI/ca.crt" \
	    --cert "$PKI/alice.crt" --key "$PKI/alice.key" put k v2
	assert_success
	assert_output 2
	wait_bg "$w"
	run cat "$TESTDIR/watch"
	assert_output "$(rv 'PUT k v2 rev @2 v2')"
	# The same protocol: pipelined lines answered in order, ids echoed.
	run tls_raw alice <<<'{"id":"a","op":"hello"}
{"id":"b","op":"get","key":"k"}
{"id":"c","op":"nope"}'
	assert_line --index 0 --partial '{"id":"a","ok":true,"server":"metad"'
	assert_line --index 0 --partial '"access":"rw"'
	assert_line --index 1 --partial '{"id":"b","ok":true,"kv":{"key":"k","value":"v2"'
	assert_line --index 2 --partial '{"id":"c","ok":false,"error":{"code":"unknown_op"'
}

@test "the ro CN reads; its write answers read_only, as a --read-only-uid peer's" {
	tls_start
	tctl alice put k v >/dev/null
	run tctl bob get k
	assert_success
	assert_output v
	run tctl bob put k w
	assert_failure 5
	assert_output --partial 'read_only: op "put" writes, and this connection is read-only'
	run tls_raw bob <<<'{"op":"hello"}'
	assert_output --partial '"access":"ro"'
	run tctl alice get k
	assert_output v
}

@test "a CN in neither list is refused with permission_denied and disconnected" {
	tls_start
	run tls_raw eve <<<'{"op":"ping"}
{"op":"ping"}'
	assert_output '{"ok":false,"error":{"code":"permission_denied","message":"CN \"eve\" may not use this metad"}}'
	run tctl eve get k
	assert_failure 5
	assert_output --partial 'permission_denied: CN "eve" may not use this metad'
	# A certificate without a CN is no identity either.
	run tls_raw nocn <<<'{"op":"ping"}'
	assert_output --partial '"code":"permission_denied"'
	grep -q 'refused CN "eve"' "$TESTDIR/metad.log"
}

@test "a certificate of another CA, or none, fails the handshake" {
	tls_start
	# alice's name, but signed by a CA the daemon does not trust.
	run tctl alice-other get k
	assert_failure 4
	assert_output --partial "alert unknown ca"
	run tls_raw alice-other <<<'{"op":"ping"}'
	refute_output --partial '"ok"'
	run "$METACTL" -s "$URL" --cacert "$PKI/ca.crt" get k
	assert_failure 4
	assert_output --partial "certificate required"
	run tls_raw - <<<'{"op":"ping"}'
	refute_output --partial '"ok"'
	wait_for grep -q "peer did not return a certificate" "$TESTDIR/metad.log"
	grep -q "certificate verify failed (its certificate: unable to get local issuer certificate)" \
	    "$TESTDIR/metad.log"
	# And metactl refuses a daemon whose certificate its CA did not sign.
	run "$METACTL" -s "$URL" --cacert "$PKI/other.crt" \
	    --cert "$PKI/alice.crt" --key "$PKI/alice.key" get k
	assert_failure 4
	assert_output --partial "the daemon's certificate is not trusted"
	# The CA that signed them all lets alice in.
	run tctl alice ping
	assert_success
}

@test "TLS 1.1 is refused by the daemon; 1.2 is served" {
	tls_start
	run openssl s_client -connect "127.0.0.1:$PORT" -tls1_2 \
	    -CAfile "$PKI/ca.crt" -cert "$PKI/alice.crt" \
	    -key "$PKI/alice.key" </dev/null
	assert_success
	assert_output --partial "Protocol  : TLSv1.2"
	# SECLEVEL=0 lets this OpenSSL offer TLS 1.1: the daemon says no.
	run openssl s_client -connect "127.0.0.1:$PORT" -tls1_1 \
	    -cipher 'DEFAULT:@SECLEVEL=0' -CAfile "$PKI/ca.crt" \
	    -cert "$PKI/alice.crt" -key "$PKI/alice.key" </dev/null
	assert_failure
	assert_output --partial "alert protocol version"
	wait_for grep -q "unsupported protocol" "$TESTDIR/metad.log"
}

@test "SIGHUP: new connections get the new certificate, an open one goes on" {
	local old new
	tls_start
	old=$(openssl x509 -in "$PKI/server.crt" -noout -serial)
	new=$(openssl x509 -in "$PKI/server2.crt" -noout -serial)
	[ "$old" != "$new" ]
	run served_serial
	assert_output "$old"
	tls_hold a alice
	tls_send a '{"id":1,"op":"put","key":"k","value":"one"}'
	wait_for lines_in "$TESTDIR/a.out" 1
	cp "$PKI/server2.crt" "$TESTDIR/tls.crt"
	cp "$PKI/server2.key" "$TESTDIR/tls.key"
	kill -HUP "$METAD_PID"
	wait_for grep -q "TLS certificate, key and CA reloaded" \
	    "$TESTDIR/metad.log"
	run served_serial
	assert_output "$new"
	tls_send a '{"id":2,"op":"get","key":"k"}'
	wait_for lines_in "$TESTDIR/a.out" 2
	run sed -n 2p "$TESTDIR/a.out"
	assert_output --partial '{"id":2,"ok":true,"kv":{"key":"k","value":"one"'
	# A key that is not the certificate's: the daemon keeps what it has.
	cp "$PKI/alice.key" "$TESTDIR/tls.key"
	kill -HUP "$METAD_PID"
	wait_for grep -q "keeping the TLS certificates: --tls-key" \
	    "$TESTDIR/metad.log"
	run served_serial
	assert_output "$new"
	run tctl alice get k
	assert_output one
	kill -0 "$METAD_PID"
}

@test "--max-connections-per-peer counts a CN's connections; other CNs are not affected" {
	tls_start --max-connections-per-peer 2
	tls_hold a1 alice
	tls_hold a2 alice
	tls_send a1 '{"op":"ping"}'
	tls_send a2 '{"op":"ping"}'
	wait_for lines_in "$TESTDIR/a1.out" 1
	wait_for lines_in "$TESTDIR/a2.out" 1
	run tls_raw alice <<<'{"op":"ping"}'
	assert_output '{"ok":false,"error":{"code":"resource_exhausted","message":"CN \"alice\" has 2 connections, the limit is 2 (--max-connections-per-peer)"}}'
	run tctl bob ping
	assert_success
	# The owner on the socket is bound only by the daemon-wide limit.
	run "$METACTL" ping
	assert_success
	tls_send a1 '{"op":"ping"}'
	wait_for lines_in "$TESTDIR/a1.out" 2
	tls_drop a1
	run tctl alice ping
	assert_success
}

@test "--max-watches-per-peer counts a CN's watches over its connections" {
	tls_start --max-watches-per-peer 1
	tls_hold w alice
	tls_send w '{"id":1,"op":"watch","key":"a"}'
	wait_for lines_in "$TESTDIR/w.out" 1
	run tls_raw alice <<<'{"id":2,"op":"watch","key":"b"}'
	assert_output --partial '"code":"resource_exhausted","message":"CN \"alice\" has 1 watches, the limit is 1 (--max-watches-per-peer)"'
	run tls_raw bob <<<'{"id":3,"op":"watch","key":"b"}'
	assert_output --partial '{"id":3,"ok":true'
}

@test "the TLS options from METAD_LISTEN and the other METAD_ variables" {
	testdir
	METAD_LISTEN="$URL,tls://[::1]:$PORT" METAD_TLS_CERT="$PKI/server.crt" \
	    METAD_TLS_KEY="$PKI/server.key" METAD_TLS_CLIENT_CA="$PKI/ca.crt" \
	    METAD_ALLOW_CN=carol,alice METAD_READ_ONLY_CN=bob metad_start
	run tctl alice put e 1
	assert_success
	run "$METACTL" -s "tls://[::1]:$PORT" --cacert "$PKI/ca.crt" \
	    --cert "$PKI/bob.crt" --key "$PKI/bob.key" get e
	assert_output 1
}

@test "large answers over TLS: a 700 KiB value, a dump of 400 keys, 1000 pipelined puts" {
	tls_start --max-pending-bytes 65536
	head -c 700000 /dev/urandom >"$TESTDIR/big"
	run tctl alice put big --file "$TESTDIR/big"
	assert_success
	tctl alice get big --raw >"$TESTDIR/big.back"
	cmp "$TESTDIR/big" "$TESTDIR/big.back"
	put_n d/ 400 "$(head -c 1000 /dev/zero | tr '\0' x)"
	tctl bob dump d/ >"$TESTDIR/dump.tls"
	"$METACTL" dump d/ >"$TESTDIR/dump.sock"
	[ "$(wc -l <"$TESTDIR/dump.tls")" -eq 401 ]
	cmp "$TESTDIR/dump.tls" "$TESTDIR/dump.sock"
	# Pipelined past --max-pending-bytes: every answer, in order.
	for i in $(seq 1 1000); do
		printf '{"id":%d,"op":"put","key":"p","value":"%d"}\n' "$i" "$i"
	done | tls_raw alice >"$TESTDIR/answers"
	[ "$(grep -c '"ok":true' "$TESTDIR/answers")" -eq 1000 ]
	run sed -n '1p;1000p' "$TESTDIR/answers"
	assert_line --index 0 --partial '{"id":1,"ok":true'
	assert_line --index 1 --partial '{"id":1000,"ok":true'
}

@test "libmetad-client over TLS: rw, ro, an untrusted daemon, the environment, pipelining (cmocka)" {
	tls_start
	MD_TEST_SOCKET="$SOCK" MD_TEST_TLS_URL="tls://[::1]:$PORT" \
	    MD_TEST_TLS_CA="$PKI/ca.crt" MD_TEST_TLS_RW="$PKI/alice" \
	    MD_TEST_TLS_RO="$PKI/bob" MD_TEST_TLS_OTHER_CA="$PKI/other.crt" \
	    run timeout 120 "$ROOT/build/tests/client_tls"
	echo "$output"
	assert_success
	assert_output --partial "PASSED  ] 5 test(s)"
}

@test "metactl takes its TLS files from METACTL_CACERT, METACTL_CERT, METACTL_KEY" {
	tls_start
	METACTL_SOCKET="$URL" METACTL_CACERT="$PKI/ca.crt" \
	    METACTL_CERT="$PKI/alice.crt" METACTL_KEY="$PKI/alice.key" \
	    run "$METACTL" put e 1
	assert_success
	METACTL_CACERT="$PKI/ca.crt" METACTL_CERT="$PKI/bob.crt" \
	    METACTL_KEY="$PKI/bob.key" run "$METACTL" -s "$URL" get e
	assert_success
	assert_output 1
	# The REPL keeps one TLS connection for its session.
	run tctl alice repl <<<'put r 1
get r
status'
	assert_success
	assert_line --index 1 1
	assert_output --partial "connections: 1"
}

@test "start-up errors: missing or bad files exit 1, bad options exit 2, no socket left" {
	local base=(--socket "$BATS_TEST_TMPDIR/m.sock" --store memory
	    --listen "$URL")
	run "$METAD" "${base[@]}" --tls-cert "$PKI/nope.crt" \
	    --tls-key "$PKI/server.key" --tls-client-ca "$PKI/ca.crt"
	assert_failure 1
	assert_output --partial "--tls-cert $PKI/nope.crt: No such file or directory"
	[ ! -e "$BATS_TEST_TMPDIR/m.sock" ]
	run "$METAD" "${base[@]}" --tls-cert "$PKI/server.crt" \
	    --tls-key "$PKI/alice.key" --tls-client-ca "$PKI/ca.crt"
	assert_failure 1
	assert_output --partial "--tls-key $PKI/alice.key"
	assert_output --partial "not the key of --tls-cert"
	run "$METAD" "${base[@]}" --tls-cert "$PKI/server.crt" \
	    --tls-key "$PKI/server.key" --tls-client-ca "$PKI/server.key"
	assert_failure 1
	assert_output --partial "--tls-client-ca $PKI/server.key: no PEM CA certificate"
	run "$METAD" "${base[@]}" --tls-cert "$PKI/ca.key" \
	    --tls-key "$PKI/server.key" --tls-client-ca "$PKI/ca.crt"
	assert_failure 1
	assert_output --partial "--tls-cert $PKI/ca.key: no PEM certificate"
	run "$METAD" "${base[@]}" --tls-cert "$PKI/server.crt"
	assert_failure 2
	assert_output --partial "needs --tls-key"
	run "$METAD" --socket "$BATS_TEST_TMPDIR/m.sock" --store memory \
	    --allow-cn alice
	assert_failure 2
	assert_output --partial "are for --listen tls://HOST:PORT"
	run "$METAD" --listen "tls://::1:$PORT"
	assert_failure 2
	assert_output --partial "an IPv6 address goes in brackets"
	run "$METAD" --listen "tcp://127.0.0.1:$PORT"
	assert_failure 2
	assert_output --partial "expected tls://HOST:PORT"
	run "$METAD" --listen "tls://127.0.0.1:0"
	assert_failure 2
	assert_output --partial "the port must be a number from 1 to 65535"
	# A port taken: exit 1, and the Unix socket was not made.
	socat TCP-LISTEN:"$PORT",bind=127.0.0.1,reuseaddr - </dev/null \
	    >/dev/null 3>&- &
	local s=$!
	wait_for bash -c "ss -Htln 'sport = :$PORT' | grep -q ."
	run "$METAD" "${base[@]}" --tls-cert "$PKI/server.crt" \
	    --tls-key "$PKI/server.key" --tls-client-ca "$PKI/ca.crt"
	stop_bg "$s"
	assert_failure 1
	assert_output --partial "--listen $URL: Address already in use"
	[ ! -e "$BATS_TEST_TMPDIR/m.sock" ]
}

# metad-protocol(7), IDEMPOTENT WRITES: a token is scoped by the peer's
# identity, here its certificate's CN: alice's replay answers her first
# put; eve's same token is her own write; a TLS peer never shares the
# scope of the Unix socket's uid.
@test "idem tokens over TLS are scoped by the client's CN" {
	tls_start --allow-cn alice,eve
	run tls_raw alice <<<'{"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_success
	first=$output
	assert_output --partial '"ok":true'
	run tls_raw alice <<<'{"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$first"
	run tls_raw eve <<<'{"op":"put","key":"k","value":"e","idem":"t1"}'
	assert_output --partial '"version":2'
	run req '{"op":"put","key":"k","value":"u","idem":"t1"}'
	assert_output --partial '"version":3'
	run tls_raw alice <<<'{"op":"put","key":"k","value":"a","idem":"t1"}'
	assert_output "$first"
	run mctl get k
	assert_output u
}
