#!/usr/bin/env bats
# libmetad-client (metad_client(3), Errors): the daemon's limits come back
# as codes of their own (tests/client/client_limits.c), against a daemon
# with a small --max-answer-bytes and --max-leases.

load helpers

setup() {
	metad_start --max-answer-bytes 4k --max-leases 1
}

teardown() {
	leases_clear
	metad_cleanup
}

# bats test_tags=not-remote
@test "answer_too_large and resource_exhausted are MD_E_ANSWER_TOO_LARGE and MD_E_RESOURCE_EXHAUSTED, the older codes unchanged (cmocka)" {
	MD_TEST_SOCKET="$SOCK" run timeout 60 "$ROOT/build/tests/client_limits"
	echo "$output"
	assert_success
	assert_output --partial "PASSED  ] 3 test(s)"
}
