#!/usr/bin/env bats
# Leases and locks on etcd (metad-protocol(7), LEASES): etcd's own leases,
# shared by two daemons on one etcd and prefix, and expiring by etcd's clock
# when the daemon that kept a session alive is killed.

# bats file_tags=store:etcd

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
	SOCK_B="$TESTDIR/b.sock"
	metad_spawn PID_B "$SOCK_B" "$TESTDIR/b.log"
}

teardown() {
	[ -z "${TESTDIR:-}" ] || release timed
	stop_bg "${A:-}" "${B:-}" "${WATCH:-}" "${BG:-}" "${C_PID:-}" \
	    "${PROXY_PID:-}"
	[ -z "${COPROC_PID:-}" ] || stop_bg -KILL "$COPROC_PID"
	METACTL_SOCKET="$SOCK_B" leases_clear
	stop_bg "${PID_B:-}"
	metad_cleanup
}

# on_b ARGS...: metactl through the second daemon.
on_b() {
	"$METACTL" -s "$SOCK_B" "$@"
}

gone() {
	run mctl get "$1"
	[ "$status" -eq 1 ]
}

epoch_b_is() {
	[ "$(on_b epoch get "$1" | cut -d' ' -f2)" = "$2" ]
}

gone_b() {
	run on_b get "$1"
	[ "$status" -eq 1 ]
}

@test "a lease granted through one daemon is seen, kept alive and revoked through the other" {
	L=$(mctl lease grant 60s)
	mctl put --lease "$L" k v
	run on_b get -o json k
	assert_output --partial "\"lease\":$L}"
	run on_b lease ls
	assert_output --regexp "^$L 60000 [0-9]+ -$"
	run on_b lease info "$L"
	assert_line --index 0 --regexp "^lease $L ttl_ms 60000 remaining_ms [0-9]+ session no$"
	assert_line --index 1 k
	run on_b lease keepalive "$L"
	assert_output 60000
	# A put through the second daemon attaches to it too.
	on_b put --lease "$L" k2 v2
	run mctl lease info "$L"
	assert_line --index 2 k2
	on_b lease revoke "$L"
	wait_for -t 2 gone k
	gone k2
	run mctl lease info "$L"
	assert_failure 1
	run mctl put --lease "$L" k3 v
	assert_failure 5
	assert_output --partial "lease $L not found"
	gone_b k3
}

@test "a lock taken through one daemon is respected through the other" {
	cat >"$TESTDIR/crit" <<-'EOF'
	#!/bin/sh
	# Fails if another holder is inside; logs its fence.
	mkdir "$1/inside" || { echo OVERLAP >>"$1/log"; exit 9; }
	echo "$METAD_FENCE" >>"$1/log"
	sleep 0.3
	rmdir "$1/inside"
	EOF
	chmod +x "$TESTDIR/crit"
	for i in 1 2 3; do
		"$METACTL" lock job -- "$TESTDIR/crit" "$TESTDIR" 3>&- &
		A="$A $!"
		"$METACTL" -s "$SOCK_B" lock job -- "$TESTDIR/crit" "$TESTDIR" 3>&- &
		B="$B $!"
	done
	for p in $A $B; do
		wait_bg "$p" 30
		assert_equal "$STATUS" 0
	done
	A= B=
	run cat "$TESTDIR/log"
	refute_output --partial OVERLAP
	assert_equal "$(grep -c . "$TESTDIR/log")" 6
	# Each holder's epoch is greater than every earlier holder's.
	run sh -c "cut -d: -f2 '$TESTDIR/log' | sort -n -c"
	assert_success
	run on_b epoch get job
	assert_output --regexp "^epoch 6 "
}

@test "a lock held through one daemon is freed at once for the other when its holder is killed" {
	"$METACTL" lock hold -- sleep 60 3>&- &
	A=$!
	wait_for epoch_b_is hold 1
	t0=$SECONDS
	kill -KILL "$A"
	wait "$A" 2>/dev/null || true
	A=
	run on_b lock hold -- sh -c 'echo "$METAD_FENCE"'
	assert_success
	assert_output hold:2
	[ $((SECONDS - t0)) -le 3 ]
}

# The daemon that kept a session alive dies with its host: etcd expires
# the lease by its TTL (no keepalives), and the other daemon sees the
# deletes; a restart does not give it its TTL again (metad(8)).
# bats test_tags=no-valgrind
@test "a session lease whose daemon is killed expires by its TTL on etcd" {
	coproc SESS { socat - "UNIX-CONNECT:$SOCK" 3>&-; }
	COPROC_PID=$SESS_PID
	echo '{"op":"lease_grant","ttl_ms":3000,"session":true}' >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	SL=$(sed -n 's/.*"lease":\([0-9]*\).*/\1/p' <<<"$line")
	echo "{\"op\":\"put\",\"key\":\"s\",\"value\":\"1\",\"lease\":$SL}" >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	[[ $line == *'"ok":true'* ]]
	run on_b lease info "$SL"
	assert_line --index 0 --regexp "session yes$"
	# Kept alive past its TTL by the daemon.
	sleep 4
	run on_b get s
	assert_output 1
	t0=$SECONDS
	metad_stop KILL
	run on_b get s
	assert_output 1
	wait_for -t 6 gone_b s
	[ $((SECONDS - t0)) -le 5 ]
	run on_b lease info "$SL"
	assert_failure 1
}

# punctual TTL_MS: a lease granted through A, kept alive through B only for
# over TTL_MS + 1 s (A sees B's keepalives), then B is killed after the last
# one: A alone expires it, no earlier than TTL_MS after that keepalive and at
# most 1 s after, although etcd's own TTL is whole seconds, at least 2 s
# with its default flags, checked every 500 ms (metad(8)).
punctual() {
	local ttl=$1 l t0 t1 del tdel i
	timed_watch "$TESTDIR/w" '{"op":"watch","prefix":"p/"}'
	l=$(mctl lease grant "${ttl}ms")
	mctl put --lease "$l" p/1 x
	for i in 1 2 3 4 5 6; do
		run on_b lease keepalive "$l"
		assert_output "$ttl"
		sleep "$(awk -v t="$ttl" 'BEGIN { print t / 2000 }')"
	done
	run mctl get p/1
	assert_output x
	t0=$EPOCHREALTIME
	on_b lease keepalive "$l"
	t1=$EPOCHREALTIME
	kill -KILL "$PID_B"
	wait "$PID_B" 2>/dev/null || true
	PID_B=
	wait_for -t 5 grep -q '"event":"delete","key":"p/1"' "$TESTDIR/w"
	del=$(grep '"event":"delete","key":"p/1"' "$TESTDIR/w")
	tdel=${del%% *}
	echo "ttl $ttl: expired $(ms "$t0" "$tdel") ms after the last keepalive was sent, $(ms "$t1" "$tdel") ms after its answer" >&3
	[ "$(ms "$t0" "$tdel")" -ge "$ttl" ]
	[ "$(ms "$t1" "$tdel")" -le $((ttl + 1000)) ]
	run mctl lease info "$l"
	assert_failure 1
}

# bats test_tags=no-valgrind
@test "expiry on etcd is punctual with a TTL of 1000 ms, kept alive through the other daemon" {
	punctual 1000
}

# bats test_tags=no-valgrind
@test "expiry on etcd is punctual with a TTL of 1500 ms, kept alive through the other daemon" {
	punctual 1500
}

# A daemon that starts finds the short leases of its prefix and times each
# from its start: one kept alive just before the daemon was restarted (and
# no other daemon running) still ends within 1 s of its TTL.
# bats test_tags=no-valgrind
@test "a restarted daemon times the short leases it finds from its start" {
	local l t0 t1 del tdel
	stop_bg -KILL "$PID_B"
	PID_B=
	l=$(mctl lease grant 1000ms)
	mctl put --lease "$l" p/1 x
	t0=$EPOCHREALTIME
	mctl lease keepalive "$l"
	t1=$EPOCHREALTIME
	metad_stop KILL
	metad_start
	timed_watch "$TESTDIR/w" '{"op":"watch","prefix":"p/"}'
	wait_for -t 5 grep -q '"event":"delete","key":"p/1"' "$TESTDIR/w"
	del=$(grep '"event":"delete","key":"p/1"' "$TESTDIR/w")
	tdel=${del%% *}
	echo "expired $(ms "$t0" "$tdel") ms after the last keepalive was sent, $(ms "$t1" "$tdel") ms after its answer" >&3
	[ "$(ms "$t0" "$tdel")" -ge 1000 ]
	[ "$(ms "$t1" "$tdel")" -le 2000 ]
}

# A revoke answers how many keys it deleted: the delete events at its rev,
# however many puts attached keys to the lease just before it (another
# daemon's, racing with it).
@test "a revoke's deleted count is its delete events, with puts attaching keys meanwhile" {
	local l out rev n i
	l=$(mctl lease grant 60s)
	raw_held rw '{"op":"watch","prefix":"r/"}' >"$TESTDIR/w" &
	WATCH=$!
	wait_for grep -q '"ok":true' "$TESTDIR/w"
	for ((i = 1; i <= 300; i++)); do
		printf '{"op":"put","key":"r/%03d","value":"v","lease":%s}\n' \
		    "$i" "$l"
	done | socat -t 10 - "UNIX-CONNECT:$SOCK_B" >"$TESTDIR/puts" 3>&- &
	BG=$!
	wait_for -t 10 grep -q '"ok":true' "$TESTDIR/puts"
	out=$(req "{\"op\":\"lease_revoke\",\"lease\":$l}")
	wait_bg "$BG" 20
	BG=
	rev=$(sed -n 's/.*"rev":\([0-9]*\).*/\1/p' <<<"$out")
	n=$(sed -n 's/.*"deleted":\([0-9]*\).*/\1/p' <<<"$out")
	wait_for has_lines $((n + 1)) "$TESTDIR/w"
	release rw
	wait "$WATCH" || true
	WATCH=
	echo "revoke at rev $rev deleted $n keys; $(grep -c '"ok":true' "$TESTDIR/puts") puts landed" >&3
	[ "$n" -gt 0 ]
	assert_equal "$(grep '"event":"delete"' "$TESTDIR/w" |
	    grep -c "\"mod_rev\":$rev}")" "$n"
	assert_equal "$(grep -c '"event":"delete"' "$TESTDIR/w")" "$n"
	assert_equal "$(grep -c '"ok":true' "$TESTDIR/puts")" "$n"
}

# The store's wait for the stream to count a revoke's deletes is bounded
# (5 s, then the keys listed before it); the answer still waits for the
# stream (up to 30 s), as every write's does, so that this daemon's next
# serializable read sees the deletes.
@test "a revoke through a daemon whose watch stream lags 8 s: counted after 5 s, answered when the stream passes it" {
	local l out t0 el
	proxy_spawn "$ETCD_URL" -d 8000
	C_SOCK="$TESTDIR/c.sock"
	metad_spawn C_PID "$C_SOCK" "$TESTDIR/c.log" --store "etcd:$PROXY_URL"
	l=$(mctl lease grant 60s)
	mctl put --lease "$l" lag/1 v
	mctl put --lease "$l" lag/2 v
	t0=$(date +%s%N)
	out=$(printf '{"op":"lease_revoke","lease":%s}\n' "$l" |
	    socat -t 20 - "UNIX-CONNECT:$C_SOCK")
	el=$((($(date +%s%N) - t0) / 1000000))
	echo "answered in $el ms: $out" >&3
	[[ $out == *'"ok":true'* && $out == *'"deleted":2'* ]]
	[ "$el" -ge 7500 ] && [ "$el" -lt 12000 ]
	grep -q 'the watch stream is not there yet after 5000 ms' "$TESTDIR/c.log"
	out=$(printf '{"op":"get","key":"lag/1","consistency":"serializable"}\n' |
	    socat -t 5 - "UNIX-CONNECT:$C_SOCK")
	[[ $out == *'"ok":true'* ]]
	[ "$(jq -r '.kv.value // "none"' <<<"$out")" = none ]
	gone lag/1
	gone lag/2
}
