#!/usr/bin/env bats
# Access control by peer credentials (metad(8), ACCESS): runs clients as
# another uid, and with supplementary group lists (any number of groups, and
# no user or group database: uid and gids 70000 and up have no entry).

load helpers

setup() {
	testdir
	chmod 0755 "$TESTDIR"
}

teardown() {
	metad_cleanup
}

# For the tests that run clients as another user.
need_other_uid() {
	[ "$(id -u)" -eq 0 ] || skip "root: needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
}

# as_nobody CMD...: run as uid 65534, gid 65534.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

nobody_req() {
	printf '%s\n' "$1" | as_nobody socat -t 2 - "UNIX-CONNECT:$SOCK"
}

# hold_as_nobody NAME REQUEST...: a connection of uid 65534 sending the
# REQUEST lines, its answers in $TESTDIR/NAME.out, held open until
# "release NAME".
hold_as_nobody() {
	local name=$1
	shift
	{
		printf '%s\n' "$@"
		hold_open "$name"
	} | as_nobody socat -t 10 - "UNIX-CONNECT:$SOCK" >"$TESTDIR/$name.out" &
}

# The group tests run clients as uid and gid 70000, which need not exist.
need_groups() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
}

# as_member FIRST LAST CMD...: run as uid and gid 70000 with the
# supplementary groups FIRST..LAST.
as_member() {
	local groups
	groups=$(seq -s, "$1" "$2")
	shift 2
	setpriv --reuid=70000 --regid=70000 --groups="$groups" "$@"
}

@test "the socket is 0600 by default: other users cannot even connect" {
	need_other_uid
	metad_start
	run stat -c %a "$SOCK"
	assert_output 600
	run as_nobody "$METACTL" -s "$SOCK" ping
	assert_failure 4
}

@test "a user not allowed is refused with permission_denied and disconnected" {
	need_other_uid
	metad_start --socket-mode 0666
	# The refusal comes at once, before any request.
	run as_nobody socat -t 2 -u "UNIX-CONNECT:$SOCK" -
	assert_output --partial '"code":"permission_denied"'
	assert_output --partial 'uid 65534'
	run as_nobody "$METACTL" -s "$SOCK" ping
	assert_failure 5
}

@test "--read-only-uid: reads and watches work, every write answers read_only" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid 65534
	mctl put k v >/dev/null
	run nobody_req '{"op":"hello"}'
	assert_output --partial '"access":"ro"'
	run as_nobody "$METACTL" -s "$SOCK" get k
	assert_success
	assert_output v
	run as_nobody "$METACTL" -s "$SOCK" put k w
	assert_failure 5
	assert_output --partial read_only
	run nobody_req '{"op":"delete","key":"k"}'
	assert_output --partial '"code":"read_only"'
	run nobody_req '{"op":"compact","rev":1}'
	assert_output --partial '"code":"read_only"'
	run nobody_req '{"op":"watch","prefix":""}'
	assert_output --partial '"ok":true,"watch":1'
	run mctl get k
	assert_output v
}

@test "--allow-uid by name and --allow-gid grant read-write" {
	need_other_uid
	metad_start --socket-mode 0666 --allow-uid nobody
	run as_nobody "$METACTL" -s "$SOCK" put k v
	assert_success
	metad_stop
	metad_start --socket-mode 0666 --allow-gid 65534
	run nobody_req '{"op":"hello"}'
	assert_output --partial '"access":"rw"'
}

@test "--read-only-gid grants read-only; a uid list wins over a group list" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-gid 65534
	run nobody_req '{"op":"hello"}'
	assert_output --partial '"access":"ro"'
	metad_stop
	metad_start --socket-mode 0666 --read-only-gid 65534 --allow-uid 65534
	run nobody_req '{"op":"hello"}'
	assert_output --partial '"access":"rw"'
}

@test "an unknown user name is a usage error" {
	run "$METAD" --allow-uid no-such-user-here --store memory --socket "$TESTDIR/s"
	assert_failure 2
	assert_output --partial 'unknown user "no-such-user-here"'
}

@test "--max-connections-per-peer: a read-only peer at its limit is refused resource_exhausted; the owner and root are not affected" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid 65534 \
	    --max-connections-per-peer 3
	local i
	for i in 1 2 3; do
		hold_as_nobody "c$i" '{"op":"ping"}'
	done
	for i in 1 2 3; do
		wait_for grep -q '"ok":true' "$TESTDIR/c$i.out"
	done
	# Three of the peer's, and status's own.
	run status_field connections
	assert_output 4
	# The fourth of that uid: refused at once, before any request, and
	# named.
	run as_nobody socat -t 2 -u "UNIX-CONNECT:$SOCK" -
	assert_output --partial '"code":"resource_exhausted"'
	assert_output --partial 'uid 65534 has 3 connections, the limit is 3 (--max-connections-per-peer)'
	# The owner (root here) goes on, as many as it likes.
	for i in 1 2 3 4 5; do
		run mctl ping
		assert_success
	done
	# A freed slot is the peer's again.
	release c1
	wait_for status_is connections 3
	run nobody_req '{"op":"ping"}'
	assert_output --partial '"ok":true'
	release c2
	release c3
}

@test "--max-watches-per-peer: the peer's watches over all its connections are bound; unwatch and closing free them" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid 65534 \
	    --max-watches-per-peer 3
	hold_as_nobody a '{"op":"watch","key":"a1"}' '{"op":"watch","key":"a2"}'
	wait_for has_lines 2 "$TESTDIR/a.out"
	hold_as_nobody b '{"op":"watch","key":"b1"}' '{"op":"watch","key":"b2"}'
	wait_for has_lines 2 "$TESTDIR/b.out"
	run cat "$TESTDIR/b.out"
	assert_line --index 0 --partial '"ok":true'
	assert_line --index 1 --partial '"code":"resource_exhausted"'
	assert_line --index 1 --partial 'uid 65534 has 3 watches, the limit is 3 (--max-watches-per-peer)'
	# The owner's watches do not count against the peer, nor are bound.
	run watch_lines 1 '{"op":"watch","key":"o"}'
	assert_output --partial '"ok":true'
	# Closing a connection gives its watches back.
	release a
	wait_for status_is watches 1
	run nobody_req '{"op":"watch","key":"c1"}'
	assert_output --partial '"ok":true'
	release b
}

@test "a peer holds at most 2 snapshots at once (resource_exhausted), so the daemon's 4 stay for the others" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid 65534
	mctl put k v >/dev/null
	hold_as_nobody s '{"op":"snapshot"}' '{"op":"snapshot"}' '{"op":"snapshot"}'
	wait_for has_lines 3 "$TESTDIR/s.out"
	run cat "$TESTDIR/s.out"
	assert_line --index 0 --partial '"snapshot":1,'
	assert_line --index 1 --partial '"snapshot":2,'
	assert_line --index 2 --partial '"code":"resource_exhausted","message":"uid 65534 has 2 snapshots being taken or read, the limit is 2 a peer"'
	# The owner still gets one.
	run req '{"op":"snapshot"}'
	assert_output --partial '"snapshot":3,'
	release s
}

# metad(8), ACCESS (ro access): a txn that only reads is a read, as in etcd,
# where a read-only role may run a txn of ranges; one with a put or a delete
# in either branch is refused whatever its compares decide.
@test "a read-only connection may run a txn of gets only, not one that may write" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid nobody
	req '{"op":"put","key":"k","value":"v"}'
	run nobody_req '{"op":"txn","if":[{"key":"k","version":1}],"then":[{"op":"get","key":"k"}],"else":[{"op":"get","key":"x"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"get","kv":{"key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1}}],"rev":@1}')"
	run nobody_req '{"op":"txn","if":[{"key":"k","version":9}],"then":[{"op":"get","key":"k"}],"else":[{"op":"delete","key":"k"}]}'
	assert_output '{"ok":false,"error":{"code":"read_only","message":"op \"txn\" writes, and this connection is read-only (a txn of gets only may run)"}}'
	run nobody_req '{"op":"put","key":"k","value":"w"}'
	assert_output --partial '"code":"read_only"'
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
}

@test "--allow-gid: the 300th supplementary group of the peer grants read-write" {
	need_groups
	metad_start --socket-mode 0666 --allow-gid 70300
	run as_member 70001 70300 socat -t 2 - "UNIX-CONNECT:$SOCK" \
	    <<<'{"op":"hello"}'
	assert_output --partial '"access":"rw"'
	run as_member 70001 70300 "$METACTL" -s "$SOCK" put k v
	assert_success
	run mctl get k
	assert_output v
}

@test "--allow-gid: a peer without the group among its 299 is refused" {
	need_groups
	metad_start --socket-mode 0666 --allow-gid 70300
	run as_member 70001 70299 socat -t 2 -u "UNIX-CONNECT:$SOCK" -
	assert_output --partial '"code":"permission_denied"'
	assert_output --partial 'uid 70000'
	run as_member 70001 70299 "$METACTL" -s "$SOCK" ping
	assert_failure 5
}

@test "--read-only-gid: a supplementary group grants read-only, --allow-gid wins" {
	need_groups
	metad_start --socket-mode 0666 --read-only-gid 70300
	run as_member 70001 70300 socat -t 2 - "UNIX-CONNECT:$SOCK" \
	    <<<'{"op":"hello"}'
	assert_output --partial '"access":"ro"'
	metad_stop
	metad_start --socket-mode 0666 --read-only-gid 70300 --allow-gid 70150
	run as_member 70001 70300 socat -t 2 - "UNIX-CONNECT:$SOCK" \
	    <<<'{"op":"hello"}'
	assert_output --partial '"access":"rw"'
}
