#!/usr/bin/env bats
# metactl, through the real binaries: output, JSON mode, exit statuses,
# socket resolution and timeouts (metactl(1)).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
}

teardown() {
	fake_peer_stop
	metad_cleanup
}

# A listener that is not metad: fake_peer SOCKET SOCAT-ADDRESS (one process
# per connection).  Sets SOCAT_PID.
fake_peer() {
	socat "UNIX-LISTEN:$1,fork" "$2" >/dev/null 2>&1 3>&- &
	SOCAT_PID=$!
	wait_for test -S "$1"
}

fake_peer_stop() {
	stop_bg "${SOCAT_PID:-}"
	SOCAT_PID=
}

# Asserts that $1 is one line holding a JSON object without "id".
assert_json_line() {
	assert_equal "$(printf '%s\n' "$1" | wc -l)" 1
	printf '%s\n' "$1" | jq -e 'type == "object" and (has("id") | not)' \
	    >/dev/null || fail "not one JSON object without id: $1"
}

# --- get ---------------------------------------------------------------
@test "get prints the value and a newline; --raw the exact bytes" {
	run -0 mctl put k hello
	mctl get k >"$TESTDIR/out"
	printf 'hello\n' | cmp - "$TESTDIR/out"
	mctl get --raw k >"$TESTDIR/out"
	printf 'hello' | cmp - "$TESTDIR/out"
	mctl get k --raw -o text >"$TESTDIR/out"
	printf 'hello' | cmp - "$TESTDIR/out"
}

@test "get of an absent key: exit 1, nothing on stdout, the key named on stderr" {
	run -1 --separate-stderr mctl get nope
	assert_output ''
	assert_equal "$stderr" 'metactl: nope: not found'
	run -1 --separate-stderr mctl get --raw nope
	assert_output ''
}

@test "get -o json prints the response without id; kv null when absent" {
	mctl put k v >/dev/null
	run -0 --separate-stderr mctl -o json get k
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	assert_equal "$stderr" ''
	run -1 --separate-stderr mctl get nope -o json
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@1}')"
	assert_equal "$stderr" 'metactl: nope: not found'
}

# --- put: values -------------------------------------------------------
@test "put prints the new version" {
	run -0 --separate-stderr mctl put k a
	assert_output 1
	assert_equal "$stderr" ''
	run -0 mctl put k b
	assert_output 2
	run -0 mctl get k
	assert_output b
}

@test "put k - reads stdin; --file reads a file; --file - reads stdin" {
	run -0 mctl put k - < <(printf 'from stdin')
	assert_output 1
	run -0 mctl get k
	assert_output 'from stdin'
	printf 'from a file' >"$TESTDIR/f"
	run -0 mctl put k --file "$TESTDIR/f"
	assert_output 2
	run -0 mctl get k
	assert_output 'from a file'
	run -0 mctl put --file - k < <(printf 'stdin again')
	assert_output 3
	run -0 mctl get k
	assert_output 'stdin again'
}

@test "put: a lone dash from stdin, a dash-led value after --" {
	printf - | mctl put k - >/dev/null
	run -0 mctl get k
	assert_equal "$output" -
	run -0 mctl put k2 -- -v
	assert_output 1
	run -0 mctl get k2
	assert_equal "$output" -v
}

@test "put of an unreadable --file is exit 5 naming the file, nothing written" {
	run -5 --separate-stderr mctl put k --file "$TESTDIR/missing"
	assert_output ''
	assert_regex "$stderr" "cannot open $TESTDIR/missing: No such file"
	run -1 mctl get k
}

# --- put: preconditions ------------------------------------------------
@test "put --if-absent: creates, then fails with exit 3 and the current version" {
	run -0 mctl put k a --if-absent
	assert_output 1
	run -3 --separate-stderr mctl put k b --if-absent
	assert_output ''
	assert_regex "$stderr" "$(rv '^metactl: failed_precondition: .*current version 1, mod_rev @1')"
	run -0 mctl get k
	assert_output a
}

@test "put --if-version: match writes, mismatch is exit 3, 0 means absent" {
	run -0 mctl put k a --if-version 0
	assert_output 1
	run -0 mctl put k b --if-version 1
	assert_output 2
	run -3 --separate-stderr mctl put k c --if-version 1
	assert_output ''
	assert_regex "$stderr" "$(rv 'failed_precondition: .*current version 2, mod_rev @2')"
	run -3 --separate-stderr mctl put absent c --if-version 4
	assert_regex "$stderr" 'failed_precondition: .*the key does not exist'
	run -3 mctl put k c --if-version 0
	run -0 mctl get k
	assert_output b
	run -1 mctl get absent
}

@test "put --if-mod-rev: match writes, mismatch is exit 3 with the current version" {
	mctl put other x >/dev/null
	mctl put k a >/dev/null
	mctl put other y >/dev/null
	# k: version 1, mod_rev @2.
	run -0 mctl put k b --if-mod-rev "$(rv @2)"
	assert_output 2
	run -3 --separate-stderr mctl put k c --if-mod-rev "$(rv @2)"
	assert_regex "$stderr" "$(rv 'failed_precondition: .*current version 2, mod_rev @4')"
	run -0 mctl get k
	assert_output b
}

@test "put -o json on a failed precondition: the error response on stdout, exit 3" {
	mctl put k a >/dev/null
	run -3 --separate-stderr mctl -o json put k b --if-absent
	assert_json_line "$output"
	printf '%s\n' "$output" | jq -e "$(rv '.ok == false and
	    .error.code == "failed_precondition" and
	    .error.current == {"key":"k","version":1,"create_rev":@1,"mod_rev":@1}')"
	assert_regex "$stderr" '^metactl: failed_precondition: '
}

@test "two preconditions are a usage error, exit 2, nothing written" {
	run -2 --separate-stderr mctl put k v --if-absent --if-version 0
	assert_output ''
	assert_regex "$stderr" 'at most one of --if-absent, --if-version and --if-mod-rev'
	assert_regex "$stderr" 'usage: metactl .* put KEY'
	run -2 mctl put k v --if-version 1 --if-mod-rev 1
	run -3 mctl put k v --if-version 9007199254740991
	run -2 mctl del k --if-version 1 --if-version 1
	run -1 mctl get k
}

# --- cas ---------------------------------------------------------------
@test "cas KEY VERSION VALUE: success prints the version, conflict is exit 3" {
	run -0 mctl cas k 0 a
	assert_output 1
	run -0 mctl cas k 1 b
	assert_output 2
	run -3 --separate-stderr mctl cas k 1 c
	assert_output ''
	assert_regex "$stderr" 'failed_precondition: .*current version 2'
	run -3 mctl cas absent 1 c
	run -0 mctl get k
	assert_output b
	run -0 mctl cas k 2 - < <(printf 'from stdin')
	assert_output 3
	run -0 mctl get k
	assert_output 'from stdin'
}

# --- del ---------------------------------------------------------------
@test "del prints 1 when it deleted, 0 when the key was absent, exit 0 both" {
	mctl put k v >/dev/null
	run -0 mctl del k
	assert_output 1
	run -1 mctl get k
	run -0 mctl del k
	assert_output 0
	run -0 mctl delete never-was
	assert_output 0
}

@test "del with preconditions" {
	mctl put k a >/dev/null
	mctl put k b >/dev/null
	run -3 --separate-stderr mctl del k --if-version 1
	assert_output ''
	assert_regex "$stderr" "$(rv 'failed_precondition: .*current version 2, mod_rev @2')"
	run -3 mctl del k --if-mod-rev "$(rv @1)"
	run -3 mctl del k --if-absent
	run -0 mctl get k
	assert_output b
	run -0 mctl del k --if-mod-rev "$(rv @2)"
	assert_output 1
	mctl put k c >/dev/null
	run -0 mctl del k --if-version 1
	assert_output 1
	run -3 --separate-stderr mctl del k --if-version 1
	assert_regex "$stderr" 'the key does not exist'
}

# --- ls ----------------------------------------------------------------
@test "ls: sorted bytewise, with a prefix, --limit" {
	local k
	for k in b/2 a/1 b/10 B c b/1; do
		mctl put "$k" v >/dev/null
	done
	run -0 mctl ls
	assert_output "$(printf '%s\n' B a/1 b/1 b/10 b/2 c)"
	run -0 mctl ls b/
	assert_output "$(printf '%s\n' b/1 b/10 b/2)"
	run -0 mctl list b/1
	assert_output "$(printf '%s\n' b/1 b/10)"
	run -0 mctl ls zzz
	assert_output ''
	run -0 --separate-stderr mctl ls --limit 2
	assert_output "$(printf '%s\n' B a/1)"
	run -0 mctl ls b/ --limit 0
	assert_equal "${#lines[@]}" 3
}

@test "ls -l: aligned columns of key, version and mod_rev" {
	local i
	mctl put a v >/dev/null
	for i in $(seq 1 11); do
		mctl put bbbbbbbbbb v >/dev/null
	done
	mctl put cc v >/dev/null
	run -0 mctl ls -l
	# The mod_rev column is as wide as its widest number, @13.
	local r13
	r13=$(rv @13)
	assert_equal "${lines[0]}" "$(printf '%-10s  %2s  %*s' a 1 ${#r13} "$(rv @1)")"
	assert_equal "${lines[1]}" "$(printf '%-10s  %2s  %*s' bbbbbbbbbb 11 ${#r13} "$(rv @12)")"
	assert_equal "${lines[2]}" "$(printf '%-10s  %2s  %*s' cc 1 ${#r13} "$r13")"
	assert_equal "${#lines[@]}" 3
	run -0 mctl ls --long --limit 1 b
	assert_output "$(rv 'bbbbbbbbbb  11  @12')"
}

@test "ls pages through more than 1000 keys by default" {
	# 2500 keys in one pipelined connection, in shuffled order.
	seq 1 2500 | shuf | while read -r i; do
		printf '{"op":"put","key":"k%d","value":"v%d"}\n' "$i" "$i"
	done | socat -t 10 - "UNIX-CONNECT:$SOCK" >"$TESTDIR/puts"
	run grep -c '"ok":true' "$TESTDIR/puts"
	assert_output 2500
	seq 1 2500 | sed 's/^/k/' | LC_ALL=C sort >"$TESTDIR/expected"

	run -0 mctl ls
	assert_equal "${#lines[@]}" 2500
	mctl ls | diff - "$TESTDIR/expected"
	run -0 mctl ls -l
	assert_equal "${#lines[@]}" 2500
	# k1, k10-k19, k100-k199, k1000-k1999: 1111 keys across two pages.
	mctl ls k1 | diff - <(grep '^k1' "$TESTDIR/expected")
	run -0 --separate-stderr mctl ls --limit 1500
	assert_equal "${#lines[@]}" 1500
	mctl ls --limit 1500 2>/dev/null | diff - <(head -n 1500 "$TESTDIR/expected")

	run -0 mctl -o json ls
	assert_json_line "$output"
	printf '%s\n' "$output" | jq -e "$(rv '(.kvs | length) == 2500 and
	    .more == false and .rev == @2500 and
	    ([.kvs[].key] == ([.kvs[].key] | sort))')"
	run -0 mctl -o json ls --limit 1200
	printf '%s\n' "$output" | jq -e '(.kvs | length) == 1200 and .more == true'
}

# --- JSON output -------------------------------------------------------
@test "-o json: one line of valid JSON without id for every command" {
	local out
	out="$(mctl -o json put k v)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	out="$(mctl -o json cas k 1 w)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"kv":{"key":"k","version":2,"create_rev":@1,"mod_rev":@2},"prev_version":1,"rev":@2}')"
	out="$(mctl -o json get k)"
	assert_json_line "$out"
	out="$(mctl -o json ls)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"kvs":[{"key":"k","version":2,"create_rev":@1,"mod_rev":@2}],"more":false,"rev":@2}')"
	out="$(mctl -o json ls -l)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"kvs":[{"key":"k","value":"w","version":2,"create_rev":@1,"mod_rev":@2}],"more":false,"rev":@2}')"
	out="$(mctl -o json status)"
	assert_json_line "$out"
	printf '%s\n' "$out" | jq -e "$(rv '.ok and .rev == @2 and .keys == 1 and
	    (.backend | type) == "string" and (.connections >= 1)')"
	out="$(mctl -o json ping)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"rev":@2}')"
	out="$(mctl -o json del k)"
	assert_json_line "$out"
	assert_equal "$out" "$(rv '{"ok":true,"deleted":true,"rev":@3}')"
	out="$(mctl -o json del k)"
	assert_equal "$out" "$(rv '{"ok":true,"deleted":false,"rev":@3}')"
	out="$(mctl --output=json ls)"
	assert_equal "$out" "$(rv '{"ok":true,"kvs":[],"more":false,"rev":@3}')"
}

# --- status and ping ---------------------------------------------------
@test "status prints name: value lines" {
	mctl put a 1 >/dev/null
	mctl put b 2 >/dev/null
	run -0 mctl status
	assert_line "$(rv 'rev: @2')"
	if store_is etcd; then
		# etcd's compaction is global: an earlier test may have
		# compacted it, never past this test's start.
		assert_line --regexp '^compact_rev: [0-9]+$'
		local c
		c=$(printf '%s\n' "$output" | sed -n 's/^compact_rev: //p')
		[ "$c" -le "$R0" ] || fail "compact_rev $c is past R0 $R0"
	else
		assert_line 'compact_rev: 0'
	fi
	assert_line 'keys: 2'
	assert_line 'connections: 1'
	assert_line 'watches: 0'
	assert_line --regexp '^db_bytes: [0-9]+$'
	assert_line --regexp '^uptime_s: [0-9]+$'
	assert_line --regexp '^backend: (sqlite|memory|etcd|metad)$'
	if store_is etcd; then
		# Last, the endpoints: a line each, URL and health.
		assert_equal "$(printf '%s\n' "$output" | tail -2)" "endpoints:
  $ETCD_URL  healthy"
	fi
	refute_line --partial '"'
}

@test "ping prints ok, the rev and the round trip" {
	run -0 mctl ping
	assert_output --regexp "$(rv '^ok rev @0 time [0-9]+\.[0-9]{3}ms$')"
	mctl put a 1 >/dev/null
	run -0 mctl ping
	assert_output --regexp "$(rv '^ok rev @1 time ')"
}

# --- usage errors ------------------------------------------------------
@test "usage errors are exit 2 with a message and a usage line, before connecting" {
	local -a cases=(
		''
		'frobnicate'
		'get'
		'get a --limit 5'
		'get --raw a b'
		'get --prefix p k'
		'del --prefix p k'
		'put k v --ttl 1s --lease 5'
		'put'
		'put k'
		'put k v extra'
		'cas k 1'
		'del'
		'ls a b'
		'status extra'
		'ping extra'
		'get --bogus k'
		'--bogus get k'
		'get -x k'
		'put k v --if-version abc'
		'put k v --if-version -1'
		'put k v --if-version 1.5'
		'put k v --if-version 9007199254740992'
		'put k v --if-mod-rev x'
		'put k v --if-version'
		'put k v --file /dev/null'
		'cas k abc v'
		'del k --if-mod-rev abc'
		'ls --limit x'
		'ls --limit -5'
		'-o yaml get k'
		'--timeout 5x ping'
		'-s'
	)
	local c
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$METACTL" -s "$TESTDIR/nowhere.sock" $c
		[ "$status" -eq 2 ] || fail "metactl $c: exit $status, not 2: $stderr"
		assert_equal "$output" ''
		assert_regex "$stderr" '^metactl: '
		assert_regex "$stderr" 'usage: metactl'
	done
}

@test "usage messages name what was wrong" {
	run -2 --separate-stderr mctl frobnicate
	assert_regex "$stderr" 'unknown command: frobnicate'
	run -2 --separate-stderr mctl get --bogus k
	assert_regex "$stderr" 'unknown or misused option --bogus'
	run -2 --separate-stderr mctl put k v --if-version abc
	assert_regex "$stderr" 'invalid --if-version: "abc"'
	run -2 --separate-stderr mctl get ''
	assert_regex "$stderr" 'KEY may not be empty'
	run -2 --separate-stderr mctl get "$(head -c 4097 /dev/zero | tr '\0' k)"
	assert_regex "$stderr" 'KEY is 4097 bytes, the limit is 4096'
	run -2 --separate-stderr mctl get "$(printf 'a\xff')"
	assert_regex "$stderr" 'not valid UTF-8'
	run -2 --separate-stderr mctl -o yaml ping
	assert_regex "$stderr" 'invalid output format: "yaml"'
}

@test "--help and --version print to stdout and exit 0" {
	run -0 mctl --help
	assert_output --partial 'exit status:'
	assert_output --partial 'get KEY [--raw]'
	run -0 mctl put --help
	assert_line --regexp '^usage: metactl .* put KEY '
	run -0 mctl --version
	assert_output --regexp '^metactl [0-9.]+ \(protocol 1\)$'
}

# --- unreachable daemon, timeouts, other errors ------------------------
@test "daemon not running: exit 4 and a message naming the socket" {
	metad_stop
	run -4 --separate-stderr mctl get k
	assert_output ''
	assert_regex "$stderr" "^metactl: cannot connect to $SOCK: .*is metad running"
	run -4 --separate-stderr mctl -s "$TESTDIR/no/such.sock" put k v
	assert_regex "$stderr" "cannot connect to $TESTDIR/no/such.sock"
	run -4 mctl -o json ping
	# A regular file is not a socket either.
	touch "$TESTDIR/plain"
	run -4 --separate-stderr mctl ping -s "$TESTDIR/plain"
	assert_regex "$stderr" "$TESTDIR/plain"
}

@test "--timeout: a daemon that accepts but never answers is exit 4" {
	fake_peer "$TESTDIR/dead.sock" EXEC:'sleep 5'	# holds, never answers
	run -4 --separate-stderr mctl -s "$TESTDIR/dead.sock" --timeout 300ms ping
	assert_output ''
	assert_equal "$stderr" "metactl: no answer from metad on $TESTDIR/dead.sock within 300ms (--timeout)"
	run -4 --separate-stderr mctl put k v -s "$TESTDIR/dead.sock" --timeout=200ms
	assert_regex "$stderr" 'within 200ms'
}

@test "--timeout accepts ms, s, m, h, bare seconds and 0; rejects others" {
	local t
	for t in 500ms 2s 1m 1h 24h 5 0 86400; do
		run -0 mctl --timeout "$t" ping
	done
	run -0 mctl ping --timeout 2s
	for t in 5x 1.5s -1 '' ms 25h 86401s ' 1s'; do
		run --separate-stderr mctl --timeout "$t" ping
		[ "$status" -eq 2 ] || fail "--timeout '$t': exit $status"
		assert_regex "$stderr" 'invalid duration'
	done
}

@test "other daemon errors are exit 5: value_too_large" {
	metad_stop
	metad_start --max-value-bytes 10
	run -0 mctl put k 1234567890
	run -5 --separate-stderr mctl put k 12345678901
	assert_output ''
	assert_regex "$stderr" '^metactl: value_too_large: .*10'
	run -5 mctl put k - < <(printf '12345678901')
	run -5 --separate-stderr mctl -o json cas k 1 12345678901
	assert_json_line "$output"
	printf '%s\n' "$output" | jq -e '.ok == false and .error.code == "value_too_large"'
	run -0 mctl get k
	assert_output 1234567890
}

@test "an output that cannot be written is exit 5" {
	mctl put k v >/dev/null
	run -5 --separate-stderr sh -c '"$0" get k >/dev/full' "$METACTL"
	assert_regex "$stderr" 'cannot write the output'
	run -5 sh -c '"$0" -o json ls >/dev/full' "$METACTL"
	run -5 sh -c '"$0" status >/dev/full' "$METACTL"
}

@test "a peer that is not metad: garbage is exit 5, a hang-up exit 4" {
	# It answers garbage and keeps the connection a while: no hang-up.
	printf '#!/bin/sh\nread l\necho garbage\nsleep 1\n' >"$TESTDIR/garbage"
	chmod +x "$TESTDIR/garbage"
	fake_peer "$TESTDIR/garbage.sock" "EXEC:$TESTDIR/garbage"
	run -5 --separate-stderr mctl -s "$TESTDIR/garbage.sock" get k
	assert_equal "$stderr" 'metactl: metad sent a response line that is not one JSON object'
	fake_peer_stop
	fake_peer "$TESTDIR/hangup.sock" EXEC:true
	run -4 --separate-stderr mctl -s "$TESTDIR/hangup.sock" get k
	assert_regex "$stderr" "$TESTDIR/hangup.sock"
}

# --- socket resolution -------------------------------------------------
@test "socket resolution: -s, then METACTL_SOCKET, then METAD_SOCKET, then XDG_RUNTIME_DIR" {
	local bad="$TESTDIR/bad.sock"
	# METACTL_SOCKET wins over METAD_SOCKET.
	run -0 env METACTL_SOCKET="$SOCK" METAD_SOCKET="$bad" "$METACTL" ping
	run -4 --separate-stderr env METACTL_SOCKET="$bad" METAD_SOCKET="$SOCK" \
	    "$METACTL" ping
	assert_regex "$stderr" "$bad"
	# METAD_SOCKET alone; an empty METACTL_SOCKET is unset.
	run -0 env -u METACTL_SOCKET METAD_SOCKET="$SOCK" "$METACTL" ping
	run -0 env METACTL_SOCKET= METAD_SOCKET="$SOCK" "$METACTL" ping
	# -s wins over both, before or after the command.
	run -0 env METACTL_SOCKET="$bad" METAD_SOCKET="$bad" "$METACTL" \
	    -s "$SOCK" ping
	run -0 env METACTL_SOCKET="$bad" "$METACTL" ping --socket "$SOCK"
	# Then $XDG_RUNTIME_DIR/metad.sock (the helper's socket is named so).
	run -0 env -u METACTL_SOCKET -u METAD_SOCKET XDG_RUNTIME_DIR="$TESTDIR" \
	    "$METACTL" ping
	# Then /tmp/metad-$UID/metad.sock.
	local fallback="/tmp/metad-$UID/metad.sock"
	if [ ! -S "$fallback" ]; then
		run -4 --separate-stderr env -u METACTL_SOCKET -u METAD_SOCKET \
		    -u XDG_RUNTIME_DIR "$METACTL" ping
		assert_regex "$stderr" "$fallback"
	fi
}

# --- concurrency -------------------------------------------------------

# 25 increments of "counter" by read-modify-write with cas, retrying on
# exit 3; at most 2000 attempts.  Exits non-zero on anything unexpected.
incr_loop() {
	local done=0 tries=0 resp rc
	local re='"value":"([0-9]+)","version":([0-9]+)'
	while [ "$done" -lt 25 ]; do
		tries=$((tries + 1))
		[ "$tries" -le 2000 ] || return 1
		resp="$("$METACTL" -o json get counter)" || return 1
		[[ $resp =~ $re ]] || return 1
		rc=0
		"$METACTL" cas counter "${BASH_REMATCH[2]}" \
		    "$((BASH_REMATCH[1] + 1))" >/dev/null 2>&1 || rc=$?
		case "$rc" in
		0) done=$((done + 1)) ;;
		3) ;;
		*) return 1 ;;
		esac
	done
}

@test "concurrent cas increments from 4 clients lose no update" {
	mctl put counter 0 >/dev/null
	local pids=() pid i
	for i in 1 2 3 4; do
		incr_loop 3>&- &
		pids+=("$!")
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || fail "an increment loop failed"
	done
	run -0 mctl get counter
	assert_output 100
	run -0 mctl -o json get counter
	assert_output --partial '"version":101'
}
