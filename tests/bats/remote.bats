#!/usr/bin/env bats
# The remote backend (--store metad:URL[,URL...]): a daemon B that keeps no
# data of its own and uses the daemon A at URL (a Unix socket, unix:PATH,
# or tls://HOST:PORT with --store-cacert, --store-cert, --store-key).
# Writes through B are A's, with A's revisions, forwarded with an idem
# token; B's replica, fed by one watch stream from A, answers serializable
# reads and B's own watches; linearizable reads on B see every write A
# acknowledged; an outage of A answers unavailable at once and B
# reconnects by itself, its watchers missing nothing; a session lease
# granted through B ends with its client's connection to B.  The lost
# answers come from tests/faults/lineproxy.py, checked here first.
#
# A runs on the pass's store (sqlite or memory), on sqlite where it must
# outlive a restart.

# bats file_tags=store:local

bats_require_minimum_version 1.5.0
load helpers

setup() {
	testdir
}

teardown() {
	# A failed test shows what B logged.
	[ -n "${BATS_TEST_COMPLETED:-}" ] || [ ! -s "${TESTDIR:-}/b.log" ] ||
	    sed 's/^/b.log: /' "$TESTDIR/b.log" >&2
	[ -z "${TESTDIR:-}" ] || release w
	[ -z "${COPROC_PID:-}" ] || stop_bg -KILL "$COPROC_PID"
	stop_bg ${BGS:-} "${W:-}" "${B_PID:-}" "${LINEPROXY_PID:-}"
	metad_cleanup
}

# start_a [OPTION...]: the daemon A (the test's daemon: SOCK, METAD_PID,
# R0), its socket in A.
start_a() {
	metad_start "$@"
	A="$SOCK"
}

# start_a_durable: A on an SQLite file, whatever the pass, for the tests
# that restart it.
start_a_durable() {
	start_a --store "sqlite:$TESTDIR/meta.db"
}

# restart_a [SOCKET]: stop A and start it again on the same file, on its
# socket (or SOCKET: then A is that).
restart_a() {
	metad_stop
	A=${1:-$A}
	metad_spawn METAD_PID "$A" "$TESTDIR/metad.log" \
	    --store "sqlite:$TESTDIR/meta.db"
}

# start_b [STORE [OPTION...]]: the daemon B on $TESTDIR/b.sock, using
# STORE (default: metad:unix:$A); its socket in B, its pid in B_PID.
start_b() {
	local store=${1:-metad:unix:$A}
	shift || true
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log" --store "$store" "$@"
}

# on SOCKET CMD...: CMD (req, raw, raw_held, put_n) talking to the daemon
# on SOCKET instead of $SOCK.
on() {
	local SOCK=$1
	shift
	"$@"
}

# a_req LINE, b_req LINE: one request to A, to B; the answer lines.
a_req() {
	on "$A" req "$1"
}

b_req() {
	on "$B" req "$1"
}

# b_put_ok KEY VALUE: a put through B answered ok.
b_put_ok() {
	b_req "{\"op\":\"put\",\"key\":\"$1\",\"value\":\"$2\"}" |
	    grep -q '"ok":true'
}

# b_sees KEY VALUE: a serializable get on B (its replica) answers VALUE.
b_sees() {
	b_req "{\"op\":\"get\",\"key\":\"$1\",\"consistency\":\"serializable\"}" |
	    grep -qF "\"value\":\"$2\""
}

# gone_on_a KEY: A has no KEY.
gone_on_a() {
	a_req "{\"op\":\"get\",\"key\":\"$1\"}" | grep -q '"kv":null'
}

# watches_on SOCKET N: the daemon on SOCKET has N watches.
watches_on() {
	[ "$("$METACTL" -s "$1" -o json status | jq .watches)" = "$2" ]
}

# history_len KEY: the number of KEY's events A keeps.
history_len() {
	a_req "{\"op\":\"history\",\"key\":\"$1\"}" | jq '.events | length'
}

# version_on_a KEY: KEY's version on A.
version_on_a() {
	a_req "{\"op\":\"get\",\"key\":\"$1\"}" | jq .kv.version
}

# watch_open SOCKET REQUEST: REQUEST (a watch) on a connection of its own
# to the daemon on SOCKET until "release w", its lines in $TESTDIR/w.out,
# its pid in W; returns once it is answered.
watch_open() {
	on "$1" raw_held w "$2" >"$TESTDIR/w.out" &
	W=$!
	wait_for grep -q '"ok":true' "$TESTDIR/w.out"
}

# watch_end N: wait for N lines in $TESTDIR/w.out, close the watch and put
# its lines in $output and $lines.
watch_end() {
	wait_for has_lines "$1" "$TESTDIR/w.out"
	release w
	wait "$W"
	W=
	run cat "$TESTDIR/w.out"
}

# session_open: a connection to B (coproc) that grants a session lease of
# TTL ms (default 60000) and puts key s with it; the connection stays open
# until closed or killed.  The lease's id in SL.
session_open() {
	local line
	coproc SESS { socat - "UNIX-CONNECT:$B" 3>&-; }
	COPROC_PID=$SESS_PID
	printf '{"op":"lease_grant","ttl_ms":%d,"session":true}\n' \
	    "${1:-60000}" >&"${SESS[1]}"
	read -r -t 10 line <&"${SESS[0]}"
	SL=$(jq -r .lease <<<"$line")
	[[ $SL =~ ^[0-9]+$ ]]
	echo "{\"op\":\"put\",\"key\":\"s\",\"value\":\"1\",\"lease\":$SL}" >&"${SESS[1]}"
	read -r -t 10 line <&"${SESS[0]}"
	[[ $line == *'"ok":true'* ]]
}

# pki_ca FILE CN: a self-signed CA, FILE.crt and FILE.key.
pki_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.crt" -subj "/CN=$2" -days 2 \
	    -addext basicConstraints=critical,CA:TRUE 2>/dev/null
}

# pki_cert FILE CA CN [EXTENSIONS]: a certificate the CA (a name in the
# same directory) signed.
pki_cert() {
	local d
	d=$(dirname "$1")
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.csr" -subj "/CN=$3" 2>/dev/null
	openssl x509 -req -in "$1.csr" -CA "$d/$2.crt" -CAkey "$d/$2.key" \
	    -CAcreateserial -out "$1.crt" -days 2 \
	    ${4:+-extfile <(printf '%s\n' "$4")} 2>/dev/null
}

@test "lineproxy: the Nth answer is lost with its connection, the write applied; events pass, other answers too" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --drop-answer 3
	run -0 on "$P" req '{"op":"put","key":"a","value":"1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"a","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	# The watch's answer is the second; its events are not answers.
	watch_open "$P" '{"op":"watch","prefix":""}'
	run -0 on "$P" req '{"op":"put","key":"b","value":"2"}'
	assert_output ""
	run -0 cat "$TESTDIR/lineproxy.log"
	assert_output 'lineproxy: dropped answer 3 (op put, connection 3): its connection closed'
	run -0 a_req '{"op":"get","key":"b"}'
	assert_output --partial "$(rv '"version":1,"create_rev":@2,"mod_rev":@2}')"
	run -0 on "$P" req '{"op":"put","key":"c","value":"3"}'
	assert_output --partial "$(rv '"rev":@3}')"
	watch_end 3
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"b","value":"2","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"c","value":"3","version":1,"create_rev":@3,"mod_rev":@3}')"
	# --op and --match count only the answers to the requests they select.
	stop_bg "$LINEPROXY_PID"
	: >"$TESTDIR/lineproxy.log"
	lineproxy_spawn "$P" "$A" --op put --match lost --drop-answer 1
	run -0 on "$P" raw <<-'EOF'
	{"op":"put","key":"x","value":"1"}
	{"op":"txn","then":[{"op":"put","key":"lost/t","value":"1"}]}
	{"op":"get","key":"lost/t"}
	EOF
	assert_equal "$(grep -c '"ok":true' <<<"$output")" 3
	run -0 on "$P" req '{"op":"put","key":"lost/p","value":"1"}'
	assert_output ""
	run -0 on "$P" req '{"op":"put","key":"lost/q","value":"1"}'
	assert_output --partial '"ok":true'
	run -0 cat "$TESTDIR/lineproxy.log"
	assert_output --regexp '^lineproxy: dropped answer 1 \(op put, connection [0-9]+\): its connection closed$'
	[ "$(version_on_a lost/p)" = 1 ]
}

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

# bats test_tags=no-valgrind
@test "A down: writes and linearizable reads on B answer unavailable within a second; serializable reads answer; B stays up" {
	start_a
	start_b
	b_req '{"op":"put","key":"k","value":"v1"}' >/dev/null
	metad_stop
	local t0 line
	for line in '{"op":"put","key":"k","value":"v2"}' \
	    '{"op":"get","key":"k"}' \
	    '{"op":"delete","key":"k"}' \
	    '{"op":"txn","then":[{"op":"put","key":"t","value":"1"}]}' \
	    '{"op":"list","prefix":""}'; do
		t0=$EPOCHREALTIME
		run -0 b_req "$line"
		assert_output --regexp '^\{"ok":false,"error":\{"code":"unavailable","message":"[^"]+".*\}\}$'
		echo "$line: $(ms "$t0" "$EPOCHREALTIME") ms" >&3
		[ "$(ms "$t0" "$EPOCHREALTIME")" -lt 1000 ]
	done
	run -0 b_req '{"op":"get","key":"k","consistency":"serializable"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v1","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	# Pipelined on one connection: each answered, in order.
	run -0 on "$B" raw <<-'EOF'
	{"id":1,"op":"put","key":"k","value":"v3"}
	{"id":2,"op":"get","key":"k","consistency":"serializable"}
	{"id":3,"op":"get","key":"k"}
	EOF
	assert_equal "${#lines[@]}" 3
	assert_line --index 0 --partial '{"id":1,"ok":false,"error":{"code":"unavailable"'
	assert_line --index 1 --partial '{"id":2,"ok":true,"kv":{"key":"k","value":"v1"'
	assert_line --index 2 --partial '{"id":3,"ok":false,"error":{"code":"unavailable"'
	kill -0 "$B_PID"
}

# bats test_tags=no-valgrind
@test "A restarted on its socket: B reconnects by itself within 3 s; the writes answered unavailable were not made" {
	start_a_durable
	start_b
	b_req '{"op":"put","key":"k","value":"v1"}' >/dev/null
	metad_stop
	run -0 b_req '{"op":"put","key":"k","value":"lost"}'
	assert_output --partial '"code":"unavailable"'
	local t0
	restart_a
	t0=$EPOCHREALTIME
	wait_for -t 3 b_put_ok k v2
	echo "B wrote again $(ms "$t0" "$EPOCHREALTIME") ms after A answered" >&3
	[ "$(ms "$t0" "$EPOCHREALTIME")" -lt 3000 ]
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	run -0 b_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
	kill -0 "$B_PID"
}

@test "a watch on B opened before A's restart delivers every event once, in order, across it" {
	start_a_durable
	start_b
	watch_open "$B" '{"op":"watch","prefix":"w/"}'
	a_req '{"op":"put","key":"w/1","value":"a"}' >/dev/null
	b_req '{"op":"put","key":"w/2","value":"b"}' >/dev/null
	wait_for has_lines 3 "$TESTDIR/w.out"
	restart_a
	# Written on A before B is back: the stream resumes after w/2.
	a_req '{"op":"put","key":"w/3","value":"c"}' >/dev/null
	wait_for b_put_ok w/4 d
	a_req '{"op":"delete","key":"w/1"}' >/dev/null
	watch_end 6
	assert_line --index 0 "$(rv '{"ok":true,"watch":1,"rev":@0}')"
	assert_line --index 1 "$(rv '{"watch":1,"event":"put","key":"w/1","value":"a","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_line --index 2 "$(rv '{"watch":1,"event":"put","key":"w/2","value":"b","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 3 "$(rv '{"watch":1,"event":"put","key":"w/3","value":"c","version":1,"create_rev":@3,"mod_rev":@3}')"
	assert_line --index 4 "$(rv '{"watch":1,"event":"put","key":"w/4","value":"d","version":1,"create_rev":@4,"mod_rev":@4}')"
	assert_line --index 5 "$(rv '{"watch":1,"event":"delete","key":"w/1","mod_rev":@5}')"
	assert_equal "${#lines[@]}" 6
}

@test "several URLs are tried in turn: one where nothing listens is passed over; A moved to the next one is found" {
	start_a_durable
	local a2="$TESTDIR/a2.sock"
	start_b "metad:unix:$TESTDIR/none.sock,unix:$A,unix:$a2"
	run -0 b_req '{"op":"put","key":"k","value":"v1"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	restart_a "$a2"
	wait_for b_put_ok k v2
	run -0 a_req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v2","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
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

@test "a put whose answer A's connection loses (lineproxy): B answers it truly, A applied it once" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --match lost/put --drop-answer 1
	start_b "metad:unix:$P"
	b_req '{"op":"put","key":"before","value":"1"}' >/dev/null
	run -0 b_req '{"id":5,"op":"put","key":"lost/put","value":"v"}'
	assert_output "$(rv '{"id":5,"ok":true,"kv":{"key":"lost/put","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
	run -0 grep -c 'lineproxy: dropped answer 1 ' "$TESTDIR/lineproxy.log"
	assert_output 1
	[ "$(version_on_a lost/put)" = 1 ]
	[ "$(history_len lost/put)" = 1 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@2')"
	# B goes on, at the next revision.
	run -0 b_req '{"op":"put","key":"after","value":"1"}'
	assert_output --partial "$(rv '"rev":@3}')"
}

@test "a txn whose answer A's connection loses (lineproxy): B answers it truly, A applied it once" {
	start_a
	P="$TESTDIR/p.sock"
	lineproxy_spawn "$P" "$A" --match lost/txn --drop-answer 1
	start_b "metad:unix:$P"
	# Its compare holds once only: applied twice, the second would fail.
	run -0 b_req '{"op":"txn","if":[{"key":"lost/txn","version":0}],"then":[{"op":"put","key":"lost/txn","value":"v"}],"else":[{"op":"get","key":"lost/txn"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"put","kv":{"key":"lost/txn","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0}],"rev":@1}')"
	run -0 grep -c 'lineproxy: dropped answer 1 ' "$TESTDIR/lineproxy.log"
	assert_output 1
	[ "$(version_on_a lost/txn)" = 1 ]
	[ "$(history_len lost/txn)" = 1 ]
	run -0 a_req '{"op":"ping"}'
	assert_output --partial "$(rv '"rev":@1')"
}

# b_writer W N: N puts of c/W through B, one connection each, one at a
# time; each answered ok is noted as "c/W REV" in $TESTDIR/acked.W.
b_writer() {
	local n ans
	for n in $(seq 1 "$2"); do
		ans=$(b_req "{\"op\":\"put\",\"key\":\"c/$1\",\"value\":\"$n\"}")
		[[ $ans == *'"ok":true'* ]] || continue
		echo "c/$1 $(jq .rev <<<"$ans")" >>"$TESTDIR/acked.$1"
	done
}

# bats test_tags=no-valgrind
@test "kill -9 of A under 4 writers through B, a watcher on B: every acknowledged write seen once, in order; B goes on" {
	start_a_durable
	start_b
	watch_open "$B" '{"op":"watch","prefix":"c/"}'
	local w pids=() last lines_want
	for w in 1 2 3 4; do
		b_writer "$w" 120 &
		pids+=($!)
	done
	BGS="${pids[*]}"
	wait_for -t 20 has_lines 100 "$TESTDIR/w.out"
	kill -9 "$METAD_PID"
	wait "$METAD_PID" 2>/dev/null || true
	METAD_PID=
	metad_spawn METAD_PID "$A" "$TESTDIR/metad.log" \
	    --store "sqlite:$TESTDIR/meta.db"
	for w in "${pids[@]}"; do
		wait "$w"
	done
	BGS=
	# Every write A holds comes to the watch: one event a rev, 1..last.
	last=$(a_req '{"op":"ping"}' | jq .rev)
	lines_want=$((last - R0 + 1))
	watch_end "$lines_want"
	assert_equal "${#lines[@]}" "$lines_want"
	printf '%s\n' "${lines[@]:1}" >"$TESTDIR/events"
	jq -r .mod_rev "$TESTDIR/events" >"$TESTDIR/revs"
	run diff <(seq $((R0 + 1)) "$last") "$TESTDIR/revs"
	assert_success
	# Each acknowledged write is there, at the rev its answer said.
	cat "$TESTDIR"/acked.* | sort >"$TESTDIR/acked"
	[ "$(wc -l <"$TESTDIR/acked")" -gt 300 ]
	jq -r '"\(.key) \(.mod_rev)"' "$TESTDIR/events" | sort >"$TESTDIR/seen"
	run comm -23 "$TESTDIR/acked" "$TESTDIR/seen"
	assert_output ""
	# The versions of each key run 1, 2, ... in the watch: no event twice.
	for w in 1 2 3 4; do
		jq -r "select(.key == \"c/$w\") | .version" "$TESTDIR/events" \
		    >"$TESTDIR/v.$w"
		run diff <(seq 1 "$(wc -l <"$TESTDIR/v.$w")") "$TESTDIR/v.$w"
		assert_success
		# Each put's value once: none applied twice.
		run bash -c "jq -r 'select(.key == \"c/$w\") | .value' \
		    '$TESTDIR/events' | sort | uniq -d"
		assert_output ""
	done
	kill -0 "$B_PID"
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
