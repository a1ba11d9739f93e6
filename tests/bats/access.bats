#!/usr/bin/env bats
# Access control by peer credentials (metad(8), ACCESS): runs clients as
# another uid.

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
