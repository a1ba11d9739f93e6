#!/usr/bin/env bats
# Findings of a SPEC conformance audit, one test each, run on every backend
# unless tagged: what a black-box tester of SPEC.md tries with the raw
# protocol and with metactl.

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# SPEC 4: a request naming a field its op does not know answers bad_request
# naming the field, a txn's compares and ops included.
@test "a txn compare or op naming an unknown field answers bad_request naming it" {
	run req '{"op":"txn","then":[{"op":"put","key":"k","value":"v","bogus":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"bogus\" for a txn put"}}'
	run req '{"op":"txn","else":[{"op":"delete","key":"k","value":"v"}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"else[0]: unknown field \"value\" for a txn delete"}}'
	run req '{"op":"txn","then":[{"op":"get","key":"k","rev":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"rev\" for a txn get"}}'
	run req '{"op":"txn","if":[{"key":"k","version":0,"vresion":1}],"then":[]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"if[0]: unknown field \"vresion\" for a compare"}}'
	# nothing was written
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@0}')"
	# the known fields still work
	run req '{"op":"txn","if":[{"key":"k","version":0,"result":"="}],"then":[{"op":"put","key":"k","value":"v"},{"op":"get","key":"k"}],"else":[{"op":"delete","key":"k"}]}'
	assert_output --partial '"succeeded":true'
}
