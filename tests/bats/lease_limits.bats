#!/usr/bin/env bats
# --max-leases (metad(8)): the daemon's leases at once, session leases
# included; on etcd, the prefix's.

load helpers

setup() {
	metad_start --max-leases 3
}

teardown() {
	[ -z "${COPROC_PID:-}" ] || stop_bg -KILL "$COPROC_PID"
	leases_clear
	metad_cleanup
}

lease_of() {
	sed -n 's/.*"lease":\([0-9]*\).*/\1/p' <<<"$1"
}

# bats test_tags=not-remote
@test "--max-leases: a grant past it is resource_exhausted, session leases count, a revoke or a closed session gives the place back" {
	local a b
	a=$(lease_of "$(req '{"op":"lease_grant","ttl_ms":60000}')")
	b=$(lease_of "$(req '{"op":"lease_grant","ttl_ms":60000}')")
	[ -n "$a" ] && [ -n "$b" ]
	# A session lease, held by a connection that stays open.
	coproc SESS { socat - "UNIX-CONNECT:$SOCK" 3>&-; }
	COPROC_PID=$SESS_PID
	echo '{"op":"lease_grant","ttl_ms":60000,"session":true}' >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	[[ $line == *'"ok":true'* ]] || fail "session grant: $line"
	run req '{"op":"lease_grant","ttl_ms":60000,"id":7}'
	assert_output '{"id":7,"ok":false,"error":{"code":"resource_exhausted","message":"leases granted: 3, the limit is 3 (--max-leases)"}}'
	# A session grant is refused the same; the leases granted live on.
	echo '{"op":"lease_grant","ttl_ms":60000,"session":true}' >&"${SESS[1]}"
	read -r line <&"${SESS[0]}"
	[[ $line == *'"code":"resource_exhausted"'* ]] || fail "session grant past the limit: $line"
	run mctl lease ls
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	# A revoke gives its place back.
	run mctl lease revoke "$a"
	assert_success
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --partial '"ok":true'
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --partial '"resource_exhausted"'
	# So does a session whose connection closes (once its revoke landed).
	exec {SESS[1]}>&-
	wait_bg "$COPROC_PID"
	COPROC_PID=
	wait_for -t 5 bash -c "[ \$('$METACTL' lease ls | wc -l) -eq 2 ]"
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --partial '"ok":true'
}

# bats test_tags=not-remote
@test "--max-leases: the default is 100000, and METAD_MAX_LEASES sets it" {
	run "$METAD" --help
	assert_output --partial '--max-leases N'
	assert_output --partial '(default 100000)'
	metad_stop
	METAD_MAX_LEASES=1 metad_start
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --partial '"ok":true'
	run req '{"op":"lease_grant","ttl_ms":60000}'
	assert_output --partial 'limit is 1 (--max-leases)"'
	run "$METAD" --max-leases 0 --help
	assert_failure
}
