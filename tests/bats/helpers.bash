# Shared by every bats file: each file (or test) starts its own metad on its
# own socket in a temporary directory, and stops it afterwards.
#
#   METAD_TEST_STORE   backend for the daemon under test: "sqlite" (default),
#                      "memory", "remote" (the remote backend: every
#                      daemon under test uses one daemon of the test's
#                      on sqlite, serving_for_test) or "etcd" (the etcd at $METAD_TEST_ETCD if
#                      set, as tests/run does, else one started for the
#                      test on loopback ports and stopped afterwards); each
#                      test's daemon gets its own --etcd-prefix ($ETCD_PREFIX)
#   METAD_WRAPPER      a command metad runs under (make valgrind sets it,
#                      and METAD_VALGRIND=1: wait_for then allows five
#                      times as long)
#
# Which tests run on which backend is said by bats tags, and tests/run
# passes each backend's --filter-tags:
#   store:sqlite   only on sqlite (about the sqlite file)
#   store:durable  needs a store that outlives its daemon (sqlite, etcd)
#   store:etcd     only on etcd (etcd.bats)
#   store:local    only on sqlite and memory
#   not-remote     not on the metad backend (METAD_TEST_STORE=remote): what
#                  the daemon under test does itself there is the daemon
#                  it uses's (its --idem-window, --max-leases, its commits'
#                  metrics, a write's --max-answer-bytes, a key's lease in
#                  kv objects: metad(8), the metad backend)
#   no-valgrind    not with metad under valgrind (timing, RSS)
# A tagged test also skips when run by hand on another backend, with a
# line that costs nothing: store_is sqlite || skip "about the sqlite file".
#
# Waiting: for the thing itself (wait_for, until_status, daemon_wait,
# wait_bg), never for a fixed while; a client that must stay connected
# holds its connection until the test releases it (raw_held, hold_open).

bats_load_library bats-support
bats_load_library bats-assert

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
METAD="$ROOT/bin/metad"
METACTL="$ROOT/bin/metactl"
# free_port, etcd_start, etcd_stop
source "$ROOT/tests/etcd.sh"
# pki_ca, pki_cert: certificates for the TLS tests.
source "$ROOT/tests/pki.sh"

# testdir: make the test's temporary directory, $TESTDIR, unless it is
# there (metad_cleanup removes it).
testdir() {
	TESTDIR="${TESTDIR:-$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-test.XXXXXX")}"
}

# Start a daemon: metad_start [extra metad options...]
# Sets SOCK, DB, METAD_PID; exports METACTL_SOCKET for metactl.
metad_start() {
	testdir
	SOCK="$TESTDIR/metad.sock"
	DB="$TESTDIR/meta.db"
	export METACTL_SOCKET="$SOCK"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log" "$@" && rev_base
}

# metad_spawn VAR SOCKET LOG [extra metad options...]: start a metad on
# SOCKET with the test's store (METAD_TEST_STORE), its stderr appended to
# LOG, and wait until it answers.  Sets the variable VAR to its pid.
metad_spawn() {
	local var=$1 sock=$2 log=$3 store extra=()
	shift 3
	case "${METAD_TEST_STORE:-sqlite}" in
	sqlite) store="sqlite:$DB" ;;
	memory) store="memory" ;;
	etcd)
		etcd_for_test || return 1
		store="etcd:$ETCD_URL"
		extra=(--etcd-prefix "$ETCD_PREFIX")
		;;
	remote)
		serving_for_test || return 1
		store="metad:unix:$SERVING_SOCK"
		;;
	*) store="$METAD_TEST_STORE" ;;
	esac
	${METAD_WRAPPER:-} "$METAD" --socket "$sock" --store "$store" \
	    "${extra[@]}" --log-level warn "$@" 2>>"$log" 3>&- &
	printf -v "$var" %s "$!"
	daemon_wait "$!" "$sock" "$log"
}

# daemon_wait PID SOCKET LOG: wait until the daemon PID answers on SOCKET
# (a stale socket file may be there); if it exits first or does not answer
# within 30 s, show its LOG and fail.
daemon_wait() {
	wait_for -t 30 answers_or_gone "$2" "$1" || true
	answers "$2" && return 0
	if pid_gone "$1"; then
		echo "metad exited before it answered on $2" >&2
	else
		echo "metad did not answer on $2" >&2
	fi
	cat "$3" >&2
	return 1
}

# answers SOCKET: something accepts connections on SOCKET.
answers() {
	[ -S "$1" ] && socat -u /dev/null "UNIX-CONNECT:$1" 2>/dev/null
}

answers_or_gone() {
	answers "$1" || pid_gone "$2"
}

pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# wait_for [-t SECONDS] CMD...: run CMD (its output discarded) until it
# succeeds, at most SECONDS (default 10, five times as long under
# valgrind); past that, say what never happened and fail.  For waiting on
# the thing itself (a socket, a line in a file, a status field) instead of
# sleeping for a while.
wait_for() {
	local t=10 end
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	[ -z "${METAD_VALGRIND:-}" ] || t=$((t * 5))
	end=$((SECONDS + t + 1))
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "waited $t s in vain for: $*" >&2
			return 1
		fi
		sleep 0.02
	done
}

# metad_stop [SIGNAL]: stop the daemon with SIGTERM (or SIGNAL: KILL) and
# wait for it.
metad_stop() {
	stop_bg "-${1:-TERM}" "${METAD_PID:-}"
	METAD_PID=
}

# stop_bg [-SIGNAL] PID...: signal background processes (SIGTERM by
# default) and wait for them; an empty PID is none.
stop_bg() {
	local sig=TERM pid
	case $1 in -*) sig=${1#-}; shift ;; esac
	for pid in "$@"; do
		[ -n "$pid" ] || continue
		kill -"$sig" "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

metad_cleanup() {
	metad_stop
	stop_bg "${SERVING_PID:-}"
	SERVING_PID=
	etcd_stop
	[ -n "${TESTDIR:-}" ] && rm -rf "$TESTDIR"
	TESTDIR=
	R0=
}

# Revisions.  An empty sqlite or memory store is at rev 0; a test's fresh
# prefix on etcd starts at etcd's current revision, which earlier tests
# moved (metad(8), Revisions: the etcd backend reports etcd's own revisions).
# R0 is the rev of the store when the test's first daemon answered, so tests
# write a revision as @N, "the test's Nth write": rv '{"rev":@2}' prints
# {"rev":2} on sqlite and {"rev":R0+2} on etcd.
rev_base() {
	[ -z "${R0:-}" ] || return 0
	R0=$(printf '{"op":"ping"}\n' | raw | sed -n 's/.*"rev":\([0-9]*\).*/\1/p')
	[ -n "$R0" ] || {
		echo "metad did not answer ping" >&2
		return 1
	}
}

# rv STRING: STRING with every @N replaced by the revision R0 + N.
rv() {
	local s="$1" out="" n
	while [[ $s =~ ^([^@]*)@([0-9]+)(.*)$ ]]; do
		n=${BASH_REMATCH[2]}
		out+="${BASH_REMATCH[1]}$((R0 + 10#$n))"
		s=${BASH_REMATCH[3]}
	done
	printf '%s\n' "$out$s"
}

# Send raw request lines (stdin) to the daemon, print the response lines.
raw() {
	socat -t 2 - "UNIX-CONNECT:$SOCK"
}

# Send one request line ($1), print the response lines.
req() {
	printf '%s\n' "$1" | raw
}

mctl() {
	"$METACTL" "$@"
}

# backend_name: the name the daemon under test gives its backend (hello,
# status, a dump's header).
backend_name() {
	case "${METAD_TEST_STORE:-sqlite}" in
	remote) echo metad ;;
	*) echo "${METAD_TEST_STORE:-sqlite}" ;;
	esac
}

# store_is NAME...: the daemon under test runs on one of these backends
# (sqlite, memory, etcd: METAD_TEST_STORE up to a colon, sqlite by
# default).  On etcd, revs are etcd's: other namespaces move them too.
store_is() {
	local s store=${METAD_TEST_STORE:-sqlite}
	for s in "$@"; do
		[ "${store%%:*}" != "$s" ] || return 0
	done
	return 1
}

# The daemon the remote backend's daemons of this test use
# (METAD_TEST_STORE=remote): one of its own on sqlite, started once, on
# $SERVING_SOCK; metad_cleanup stops it.
serving_for_test() {
	# A test that made itself a new $TESTDIR gets a new one too.
	[ -n "${SERVING_PID:-}" ] && [ "$SERVING_SOCK" = "$TESTDIR/serving.sock" ] &&
	    return 0
	stop_bg "${SERVING_PID:-}"
	SERVING_SOCK="$TESTDIR/serving.sock"
	# The METAD_ variables a test sets are for the daemon under test.
	# shellcheck disable=SC2046 # one word per variable
	env $(env | sed -n 's/^\(METAD_[A-Z0-9_]*\)=.*/-u \1/p') \
	    "$METAD" --socket "$SERVING_SOCK" --store "sqlite:$TESTDIR/serving.db" \
	    --log-level warn 2>>"$TESTDIR/serving.log" 3>&- &
	SERVING_PID=$!
	daemon_wait "$SERVING_PID" "$SERVING_SOCK" "$TESTDIR/serving.log"
}

# The etcd for this test: the shared one, or one of its own.
etcd_for_test() {
	ETCD_PREFIX="${ETCD_PREFIX:-metad-test/$(basename "$TESTDIR")/}"
	if [ -n "${METAD_TEST_ETCD:-}" ]; then
		ETCD_URL="$METAD_TEST_ETCD"
		return 0
	fi
	[ -n "${ETCD_PID:-}" ] && return 0
	etcd_start "$TESTDIR"
}

# leases_clear: revoke every lease the daemon lists.  On etcd a lease left
# to expire after its test deletes its keys then, moving the cluster's
# revision under a later test that counts revisions.
leases_clear() {
	local l
	for l in $("$METACTL" lease ls 2>/dev/null | cut -d' ' -f1); do
		"$METACTL" lease revoke "$l" >/dev/null 2>&1 || true
	done
}

# status_field NAME: one field of "metactl status".
status_field() {
	"$METACTL" status | sed -n "s/^$1: //p"
}

# until_status FIELD VALUE: wait until "metactl status" shows FIELD: VALUE
# (watches 2: both watchers are registered).
until_status() {
	wait_for status_is "$1" "$2"
}

status_is() {
	[ "$(status_field "$1")" = "$2" ]
}

# wait_bg PID [SECONDS]: wait for a background process, at most SECONDS
# (default 10), killing it past that; sets STATUS to its exit status (and
# clears BG, which teardowns kill, when PID is $BG).
wait_bg() {
	wait_for -t "${2:-10}" pid_gone "$1" || kill -KILL "$1" 2>/dev/null || true
	STATUS=0
	wait "$1" || STATUS=$?
	[ "$1" != "${BG:-}" ] || BG=
}

# put_n PREFIX N [VALUE]: N pipelined puts PREFIX1..PREFIXN on one
# connection, each of value VALUE (default: its number); returns once all
# are answered, and fails unless all were acknowledged.
put_n() {
	local i acked
	acked=$(for i in $(seq 1 "$2"); do
		printf '{"op":"put","key":"%s%d","value":"%s"}\n' "$1" "$i" \
		    "${3:-$i}"
	done | socat -t 30 - "UNIX-CONNECT:$SOCK" | grep -c '"ok":true' || true)
	[ "$acked" -eq "$2" ] || {
		echo "put_n $1 $2: $acked of $2 puts acknowledged" >&2
		return 1
	}
}

# hold_open NAME: the rest of a client's input, to keep its connection
# open: returns (EOF) once the test calls "release NAME", or once the
# test's directory is gone (its teardown ran), or after 5 minutes.
hold_open() {
	local f="$TESTDIR/release.$1" dir="$TESTDIR" end=$((SECONDS + 300))
	until [ -e "$f" ] || [ ! -d "$dir" ] || [ "$SECONDS" -ge "$end" ]; do
		sleep 0.1
	done
}

release() {
	touch "$TESTDIR/release.$1"
}

# raw_held NAME REQUEST...: send the REQUEST lines on a connection of their
# own and print what comes back until "release NAME" closes it.  Run it in
# the background: raw_held w "$req" >"$TESTDIR/out" &.  A write's events
# are sent before its answer, so a watch released after the writes were
# answered has printed all of their events.
raw_held() {
	local name=$1
	shift
	{
		printf '%s\n' "$@"
		hold_open "$name"
	} | socat -t 10 - "UNIX-CONNECT:$SOCK"
}

# timed_watch FILE REQUEST: a watch whose lines go to FILE, each after the
# time it arrived ($EPOCHREALTIME); its pid in WATCH.
timed_watch() {
	raw_held timed "$2" | while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done >"$1" 3>&- &
	WATCH=$!
	wait_for grep -q '"ok":true' "$1"
}

# ms A B: (B - A) in whole milliseconds, for $EPOCHREALTIME values.
ms() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%d\n", (b - a) * 1000 }'
}

# watch_lines N REQUEST: send REQUEST (a watch) on a connection of its own,
# close it once N lines came back (at most 10 s), and print them; fails
# (quietly: "run" would count a message as a line) when fewer came.
watch_lines() {
	local out="$TESTDIR/watch_lines.out" pid rc=0
	raw_held watch_lines "$2" >"$out" &
	pid=$!
	wait_for has_lines "$1" "$out" 2>/dev/null || rc=1
	release watch_lines
	wait "$pid" || rc=1
	rm -f "$TESTDIR/release.watch_lines"
	cat "$out"
	return "$rc"
}

# has_lines N FILE: FILE has N lines or more.
has_lines() {
	[ "$(wc -l <"$2")" -ge "$1" ]
}

# proxy_spawn UPSTREAM [dropproxy OPTION...]: tests/faults/dropproxy on a
# free loopback port in front of the etcd at UPSTREAM, its stderr in
# $TESTDIR/proxy.log; sets PROXY_URL and PROXY_PID.  A port taken between
# the guess and the bind: another.
proxy_spawn() {
	local upstream=$1 port try
	shift
	for try in 1 2 3 4 5; do
		port=$(free_port)
		rm -f "$TESTDIR/proxy.pid"
		"$ROOT/build/tests/dropproxy" -l "$port" -u "$upstream" \
		    -p "$TESTDIR/proxy.pid" "$@" 2>>"$TESTDIR/proxy.log" &
		PROXY_PID=$!
		PROXY_URL="http://127.0.0.1:$port"
		wait_for proxy_up_or_gone || break
		[ -s "$TESTDIR/proxy.pid" ] && return 0
		wait "$PROXY_PID" 2>/dev/null || true
		PROXY_PID=
	done
	cat "$TESTDIR/proxy.log" >&2
	return 1
}

proxy_up_or_gone() {
	[ -s "$TESTDIR/proxy.pid" ] || pid_gone "$PROXY_PID"
}

# lineproxy_spawn SOCKET UPSTREAM [lineproxy OPTION...]:
# tests/faults/lineproxy.py on the Unix socket SOCKET in front of the metad
# on the Unix socket UPSTREAM (--drop-answer N loses its Nth answer), its
# stderr in $TESTDIR/lineproxy.log; sets LINEPROXY_PID.
lineproxy_spawn() {
	local sock=$1 upstream=$2
	shift 2
	rm -f "$TESTDIR/lineproxy.pid"
	python3 "$ROOT/tests/faults/lineproxy.py" -l "$sock" -u "$upstream" \
	    -p "$TESTDIR/lineproxy.pid" "$@" 2>>"$TESTDIR/lineproxy.log" 3>&- &
	LINEPROXY_PID=$!
	wait_for lineproxy_up_or_gone
	[ -s "$TESTDIR/lineproxy.pid" ] && return 0
	cat "$TESTDIR/lineproxy.log" >&2
	return 1
}

lineproxy_up_or_gone() {
	[ -s "$TESTDIR/lineproxy.pid" ] || pid_gone "$LINEPROXY_PID"
}

# trap_script: $TESTDIR/trap.sh SIG, a COMMAND for metactl lock that says
# it runs (its pid in $TESTDIR/cmd), and on SIG writes "got SIG" to
# $TESTDIR/got, then handles it slowly: it exits 0 only once the test
# creates $TESTDIR/go (30 s at most).
trap_script() {
	cat >"$TESTDIR/trap.sh" <<-EOF_TRAP
	#!/bin/sh
	trap 'echo "got \$1" >"$TESTDIR/got"
	i=0
	while [ ! -e "$TESTDIR/go" ] && [ \$i -lt 600 ]; do
		sleep 0.05
		i=\$((i + 1))
	done
	exit 0' "\$1"
	echo \$\$ >"$TESTDIR/cmd"
	while :; do sleep 0.05; done
	EOF_TRAP
	rm -f "$TESTDIR/got" "$TESTDIR/go" "$TESTDIR/cmd"
}

# lease_kept_alive LEASE: its remaining TTL, which only falls between two
# keepalives, went up from one look to the next (metactl refreshed it),
# within 10 s.
lease_kept_alive() {
	LEASE_LEFT=$(lease_remaining "$1")
	wait_for lease_rose "$1"
}

lease_remaining() {
	"$METACTL" lease info "$1" | awk 'NR == 1 { print $6 }'
}

lease_rose() {
	local left
	left=$(lease_remaining "$1")
	[ "$left" -gt "$LEASE_LEFT" ] && return 0
	LEASE_LEFT=$left
	return 1
}
