#!/usr/bin/env bats
# Group lists (metad(8), ACCESS) match the peer process's supplementary
# groups, as the kernel reports them: any number of groups, and no user or
# group database (the uid and gids below have no /etc/passwd or /etc/group
# entry).

load helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
	TESTDIR="$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-test.XXXXXX")"
	chmod 0755 "$TESTDIR"
}

teardown() {
	metad_cleanup
}

# as_member FIRST LAST CMD...: run as uid and gid 70000 with the
# supplementary groups FIRST..LAST.
as_member() {
	local groups
	groups=$(seq -s, "$1" "$2")
	shift 2
	setpriv --reuid=70000 --regid=70000 --groups="$groups" "$@"
}

@test "--allow-gid: the 300th supplementary group of the peer grants read-write" {
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
	metad_start --socket-mode 0666 --allow-gid 70300
	run as_member 70001 70299 socat -t 2 -u "UNIX-CONNECT:$SOCK" -
	assert_output --partial '"code":"permission_denied"'
	assert_output --partial 'uid 70000'
	run as_member 70001 70299 "$METACTL" -s "$SOCK" ping
	assert_failure 5
}

@test "--read-only-gid: a supplementary group grants read-only, --allow-gid wins" {
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
