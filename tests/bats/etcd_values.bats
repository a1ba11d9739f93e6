#!/usr/bin/env bats
# The etcd backend's unit tests (tests/unit/test_store_etcd.c) need a live
# etcd: the etcd pass (tests/run-etcd, METAD_TEST_STORE=etcd) runs them on
# its own.  Built with the rest of the unit tests (make check, or make
# build/tests/test_store_etcd); with SANITIZER= they run sanitized too.

load helpers

UNIT="$ROOT/build/tests/test_store_etcd"

setup() {
	on_etcd || skip "the etcd pass runs it (make check-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
	[ -x "$UNIT" ] || skip "not built: make build/tests/test_store_etcd"
	TESTDIR="$(mktemp -d "${BATS_TMPDIR:-/tmp}/metad-test.XXXXXX")"
	etcd_for_test
}

teardown() {
	metad_cleanup
}

@test "etcd: the backend's unit tests pass on this etcd (a put copies exactly the value)" {
	CMOCKA_MESSAGE_OUTPUT=TAP METAD_TEST_ETCD="$ETCD_URL" run "$UNIT"
	assert_success
	assert_output --partial 'ok 1 - test_put_value_lengths'
	refute_output --partial "# SKIP"
}
