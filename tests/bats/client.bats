#!/usr/bin/env bats
# libmetad-client (metad_client(3)): its cmocka tests (tests/client) against a
# daemon started here, with a second one whose small --max-pending-bytes
# makes a lagging watcher a slow consumer; its exports; the example; and
# an install into a temporary prefix that a program builds against with
# pkg-config.

load helpers

CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-120}

setup() {
	metad_start "${METAD_EXTRA[@]}"
}

teardown() {
	stop_bg "${SLOW_PID:-}"
	SLOW_PID=
	metad_cleanup
}

# A second daemon on the same store kind, cancelling watchers past 64 KiB.
slow_start() {
	local db=$DB
	DB="$TESTDIR/slow.db"
	SLOW="$TESTDIR/slow.sock"
	metad_spawn SLOW_PID "$SLOW" "$TESTDIR/slow.log" \
	    --max-pending-bytes 65536
	DB=$db
}

key_absent() {
	! "$METACTL" get "$1" >/dev/null 2>&1
}

# A tree's make, not joining the one that may run the suite.
lib_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory \
	    -C "$ROOT" -o all "$@"
}

@test "every call and its errors against a live daemon (cmocka)" {
	MD_TEST_SOCKET="$SOCK" run timeout "$CLIENT_TIMEOUT" \
	    "$ROOT/build/tests/client_ops"
	echo "$output"
	assert_success
	assert_output --partial "PASSED  ] 14 test(s)"
}

@test "watches resume after slow_consumer; views fill, follow and wait (cmocka)" {
	slow_start
	MD_TEST_SOCKET="$SOCK" MD_TEST_SLOW_SOCKET="$SLOW" run timeout \
	    "$CLIENT_TIMEOUT" "$ROOT/build/tests/client_watch"
	echo "$output"
	assert_success
	assert_output --partial "PASSED  ] 6 test(s)"
}

@test "the libraries export md_ symbols only; the soname is versioned" {
	local so="$ROOT/build/lib/libmetad-client.so"
	run bash -c "nm -D --defined-only '$so' | awk '{ print \$3 }' | grep -v '^md_'"
	assert_output ""
	# Exactly the functions <metad/client.h> declares.
	diff <(grep -oE '\bmd_[a-z_]+\(' "$ROOT/include/metad/client.h" |
	    tr -d '(' | LC_ALL=C sort -u) \
	    <(nm -D --defined-only "$so" | awk '{ print $3 }' | LC_ALL=C sort)
	run bash -c "readelf -d '$so' | grep SONAME"
	assert_output --partial "[libmetad-client.so.0]"
	# The archive's hidden insides are local: a program keeps its own
	# xmalloc, buf_add, proto_parse...
	run bash -c "nm --defined-only -g '$ROOT/build/lib/libmetad-client.a' | awk 'NF == 3 { print \$3 }' | grep -v '^md_'"
	assert_output ""
}

@test "the example: a leader election with an epoch and a fenced write" {
	run "$ROOT/build/examples/leader" -s "$SOCK" demo alice
	assert_success
	assert_line --index 0 "alice leads demo with epoch 1 (lease held)"
	assert_line --index 1 "wrote election/demo/state: leader=alice epoch=1"
	run "$ROOT/build/examples/leader" -s "$SOCK" demo bob 1
	assert_success
	assert_line --index 0 --regexp "^bob leads demo with epoch 2"
	assert_line --index 2 "epoch 1 refused: the epoch at the fence key is 2, the write carried 1"
	# The state key was on bob's session lease (metad-protocol(7),
	# LEASES), revoked when the program's connection closed.
	assert_line --index 0 "bob leads demo with epoch 2 (lease held)"
	wait_for -t 10 key_absent election/demo/state
	run "$METACTL" get election/demo/state
	assert_failure 1
	run "$ROOT/build/examples/leader" -s "$TESTDIR/none.sock" demo carol
	assert_failure 1
	assert_output --partial "leader: connect: connect: cannot connect to"
}

# bats test_tags=store:sqlite
@test "installed into a prefix, a program builds with pkg-config (shared and static) and runs" {
	local p="$TESTDIR/prefix" pc san=()
	# A sanitizer build's library wants its runtime in the program too.
	[ -z "${SANITIZER:-}" ] || san=(-fsanitize="$SANITIZER")
	run lib_make install PREFIX="$p"
	assert_success
	export PKG_CONFIG_PATH="$p/lib/pkgconfig"
	run pkg-config --cflags --libs metad-client
	assert_success
	assert_output --partial "-I$p/include"
	assert_output --partial "-L$p/lib -lmetad-client"
	pc=$output
	run cc -Wall -Wextra -Werror "${san[@]}" -o "$TESTDIR/leader" \
	    "$ROOT/examples/leader.c" $pc
	assert_success
	LD_LIBRARY_PATH="$p/lib" run "$TESTDIR/leader" -s "$SOCK" inst alice
	assert_success
	assert_line --index 1 "wrote election/inst/state: leader=alice epoch=1"
	LD_LIBRARY_PATH="$p/lib" run ldd "$TESTDIR/leader"
	assert_output --partial "libmetad-client.so.0 => $p/lib/"

	# Static: the archive and what pkg-config --static adds.
	run cc -Wall -Wextra -Werror "${san[@]}" -o "$TESTDIR/leader-static" \
	    "$ROOT/examples/leader.c" $(pkg-config --cflags metad-client) \
	    "$p/lib/libmetad-client.a" $(pkg-config --static --libs-only-other --libs-only-l libcjson openssl)
	assert_success
	run "$TESTDIR/leader-static" -s "$SOCK" inst bob 1
	assert_success
	assert_line --index 2 --partial "epoch 1 refused"
	run ldd "$TESTDIR/leader-static"
	refute_output --partial "libmetad-client"

	run lib_make uninstall PREFIX="$p"
	assert_success
	run find "$p" ! -type d
	assert_output ""
}
