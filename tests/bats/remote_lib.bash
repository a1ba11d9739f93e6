# The remote backend's tests (remote.bats, remote_faults.bats): a daemon B
# that keeps no data of its own and uses the daemon A at URL (a Unix
# socket, unix:PATH, or tls://HOST:PORT).  A runs on the pass's store
# (sqlite or memory), on sqlite where it must outlive a restart.  Loaded
# after helpers.bash.

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
