#!/usr/bin/env bats
# Per-peer limits count per peer identity (metad(8), ACCESS and
# --max-connections-per-peer): a uid let in by a uid list, or the group
# whose list let it in, shared by every uid that group lets in.  Runs
# clients as other uids.

load helpers

setup() {
	testdir
	chmod 0755 "$TESTDIR"
	[ "$(id -u)" -eq 0 ] || skip "root: needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
}

teardown() {
	metad_cleanup
}

# hold_as UID GID NAME REQUEST...: a connection of uid UID, gid GID (and no
# other group), kept open until "release NAME"; its answers in NAME.out.
hold_as() {
	local uid=$1 gid=$2 name=$3
	shift 3
	{
		printf '%s\n' "$@"
		hold_open "$name"
	} | setpriv --reuid="$uid" --regid="$gid" --clear-groups \
	    socat -t 10 - "UNIX-CONNECT:$SOCK" >"$TESTDIR/$name.out" &
}

# as_read UID GID: connect as UID, GID and print what the daemon says
# unasked (a refusal), sending nothing; for 5 s at most.
as_read() {
	timeout 5 setpriv --reuid="$1" --regid="$2" --clear-groups \
	    socat -t 2 -u "UNIX-CONNECT:$SOCK" -
}

as_req() {
	printf '%s\n' "$3" | setpriv --reuid="$1" --regid="$2" --clear-groups \
	    socat -t 2 - "UNIX-CONNECT:$SOCK"
}

@test "--max-connections-per-peer: uids let in by one --read-only-gid share its quota; a uid let in by its own list does not" {
	metad_start --socket-mode 0666 --read-only-gid 65534 \
	    --read-only-uid 65530 --max-connections-per-peer 2
	hold_as 65534 65534 a '{"op":"ping"}'
	hold_as 65533 65534 b '{"op":"ping"}'
	wait_for grep -q '"ok":true' "$TESTDIR/a.out"
	wait_for grep -q '"ok":true' "$TESTDIR/b.out"
	# A third uid of that group: the group's quota is taken.
	run as_read 65532 65534
	assert_output --partial '"code":"resource_exhausted"'
	assert_output --partial 'gid 65534 has 2 connections, the limit is 2 (--max-connections-per-peer)'
	# A uid let in by --read-only-uid is its own peer, whatever its group.
	run as_req 65530 65534 '{"op":"ping"}'
	assert_output --partial '"ok":true'
	# The owner is not bound.
	run mctl ping
	assert_success
	release a
	wait_for status_is connections 2
	run as_req 65532 65534 '{"op":"ping"}'
	assert_output --partial '"ok":true'
	release b
}

@test "--max-watches-per-peer: the watches of a group's uids count together" {
	metad_start --socket-mode 0666 --read-only-gid 65534 \
	    --max-watches-per-peer 2
	hold_as 65534 65534 a '{"op":"watch","key":"a1"}' '{"op":"watch","key":"a2"}'
	wait_for has_lines 2 "$TESTDIR/a.out"
	hold_as 65533 65534 b '{"op":"watch","key":"b1"}'
	wait_for has_lines 1 "$TESTDIR/b.out"
	run cat "$TESTDIR/b.out"
	assert_output --partial '"code":"resource_exhausted"'
	assert_output --partial 'gid 65534 has 2 watches, the limit is 2 (--max-watches-per-peer)'
	release a
	release b
}
