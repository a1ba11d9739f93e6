# The test runners themselves (tests/run, tests/run-etcd, tests/valgrind):
# each way a test run can fail is caught and counted in the closing line.
# A fake bats (tests/runner/bin/bats) plays back TAP written by the test;
# fake unit test binaries (tests/runner/unit/) end in each way one can.
# make check runs this file once, through tests/run.

bats_load_library bats-support
bats_load_library bats-assert

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	UNIT="$BATS_TEST_DIRNAME/unit"
	FIX="$BATS_TEST_DIRNAME/fixtures"
	TAP="$BATS_TEST_TMPDIR/tap"
	ARGS="$BATS_TEST_TMPDIR/args"
	# The runner under test starts clean, whatever this run was given.
	unset CI METAD_TEST_STORE METAD_TEST_FILES METAD_VALGRIND \
	    METAD_BATS_TIMEOUT METAD_TEST_ETCD
	# A bats started from this one must not see its variables, nor its
	# libexec directory first on PATH.
	local v
	CLEAN=()
	for v in $(compgen -e); do
		case "$v" in
		BATS_*) CLEAN+=(-u "$v") ;;
		esac
	done
	CLEAN_PATH=${PATH#"$BATS_LIBEXEC:"}
}

# clean [VAR=VALUE...] COMMAND...: run COMMAND, in a clean environment.
clean() {
	run env "${CLEAN[@]}" PATH="$CLEAN_PATH" "$@"
}

# tap: the fake bats's TAP, from stdin.
tap() {
	cat >"$TAP"
}

# fake_bats RC [VAR=VALUE...]: tests/run --bats-only, with the fake bats
# playing back $TAP and exiting RC, in the environment given.
fake_bats() {
	local rc=$1
	shift
	clean PATH="$BATS_TEST_DIRNAME/bin:$CLEAN_PATH" FAKE_BATS_TAP="$TAP" \
	    FAKE_BATS_RC="$rc" FAKE_BATS_ARGS="$ARGS" "$@" \
	    "$ROOT/tests/run" --bats-only
}

# closing LINE: the runner's last line is LINE.
closing() {
	assert_equal "${lines[${#lines[@]} - 1]}" "$1"
}

@test "a clean bats run passes" {
	printf '1..2\nok 1 a\nok 2 b\n' | tap
	fake_bats 0
	assert_success
	closing "check: 2 passed, 0 failed, 0 skipped"
	refute_output --partial "# failed"
}

@test "a bats run that dies halfway fails: the planned tests that never reported are failed" {
	printf '1..5\nok 1 a\nok 2 b\n' | tap
	fake_bats 1
	assert_failure
	closing "check: 2 passed, 3 failed, 0 skipped"
	assert_output --partial "bats: 3 of 5 planned tests never reported"
}

@test "a bats run that exits non-zero after its full plan passed fails" {
	printf '1..2\nok 1 a\nok 2 b\n' | tap
	fake_bats 1
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_output --partial "bats: exit status 1"
}

@test "a bats run that exits 0 with a short plan fails" {
	printf '1..3\nok 1 a\n' | tap
	fake_bats 0
	assert_failure
	closing "check: 1 passed, 2 failed, 0 skipped"
}

@test "more results than planned is a failure" {
	printf '1..1\nok 1 a\nok 2 b\n' | tap
	fake_bats 0
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_output --partial "bats: 2 results for a plan of 1"
}

@test "a bats run with no plan fails" {
	printf 'bats: something broke\n' | tap
	fake_bats 1
	assert_failure
	closing "check: 0 passed, 1 failed, 0 skipped"
	assert_output --partial "bats: no TAP plan"
}

@test "a run that tests nothing fails" {
	printf '1..0\n' | tap
	fake_bats 0
	assert_failure
	closing "check: 0 passed, 0 failed, 0 skipped"
	assert_output --partial "no test passed"
}

@test "not ok is failed, and the failed test is named at the end" {
	printf '1..3\nok 1 a\nnot ok 2 b\n# (in test file x.bats, line 3)\nok 3 c\n' | tap
	fake_bats 1
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_line "#   bats: not ok 2 b"
}

@test "a skip is counted apart, and passes outside CI" {
	printf '1..3\nok 1 a\nok 2 b # skip zsh is not installed\nok 3 c\n' | tap
	fake_bats 0
	assert_success
	closing "check: 2 passed, 0 failed, 1 skipped"
}

@test "under CI a skip is failed and named" {
	printf '1..3\nok 1 a\nok 2 b # skip zsh is not installed\nok 3 c\n' | tap
	fake_bats 0 CI=1
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_output --partial "bats: ok 2 b # skip zsh is not installed"
}

@test "under CI a skip without a reason is failed" {
	printf '1..2\nok 1 a\nok 2 b # skip\n' | tap
	fake_bats 0 CI=true
	assert_failure
	closing "check: 1 passed, 1 failed, 0 skipped"
}

@test "under CI a skip whose reason starts with root: or container: is still a skip" {
	tap <<-'EOF'
	1..4
	ok 1 a
	ok 2 b # skip root: runs clients as another uid
	ok 3 c # skip container: cannot mount a tmpfs here
	ok 4 d # skip rootless: not the rule
	EOF
	fake_bats 0 CI=true
	assert_failure
	closing "check: 1 passed, 1 failed, 2 skipped"
	assert_output --partial "bats: ok 4 d # skip rootless"
	refute_output --partial "bats: ok 2"
	refute_output --partial "bats: ok 3"
}

@test "a unit test binary that passes in two cmocka groups" {
	run "$ROOT/tests/run" --unit-only "$UNIT/ok"
	assert_success
	closing "check: 3 passed, 0 failed, 0 skipped"
}

@test "a unit test binary killed by a signal fails" {
	run "$ROOT/tests/run" --unit-only "$UNIT/killed"
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_output --partial "unit/killed: killed by signal 11"
}

@test "a unit test binary that exits non-zero with all its tests passed fails" {
	run "$ROOT/tests/run" --unit-only "$UNIT/exit-status"
	assert_failure
	closing "check: 2 passed, 1 failed, 0 skipped"
	assert_output --partial "unit/exit-status: exit status 3"
}

@test "a unit test binary that exits 0 with a short plan fails" {
	run "$ROOT/tests/run" --unit-only "$UNIT/short-plan"
	assert_failure
	closing "check: 2 passed, 2 failed, 0 skipped"
	assert_output --partial "unit/short-plan: 2 of 4 planned tests never reported"
}

@test "a unit test binary with no plan fails" {
	run "$ROOT/tests/run" --unit-only "$UNIT/no-plan"
	assert_failure
	closing "check: 0 passed, 1 failed, 0 skipped"
}

@test "a unit test binary's not ok is failed and named" {
	run "$ROOT/tests/run" --unit-only "$UNIT/failed"
	assert_failure
	closing "check: 1 passed, 1 failed, 0 skipped"
	assert_output --partial "unit/failed: not ok 2 - b"
}

@test "a cmocka skip is counted apart; under CI it is failed" {
	run "$ROOT/tests/run" --unit-only "$UNIT/skip"
	assert_success
	closing "check: 1 passed, 0 failed, 2 skipped"
	CI=1 run "$ROOT/tests/run" --unit-only "$UNIT/skip"
	assert_failure
	closing "check: 1 passed, 2 failed, 0 skipped"
}

@test "unit binaries and bats add up in one closing line; one dead binary fails the whole run" {
	printf '1..2\nok 1 a\nok 2 b\n' | tap
	clean PATH="$BATS_TEST_DIRNAME/bin:$CLEAN_PATH" FAKE_BATS_TAP="$TAP" \
	    "$ROOT/tests/run" "$UNIT/ok" "$UNIT/killed"
	assert_failure
	closing "check: 7 passed, 1 failed, 0 skipped"
}

@test "the bats filter of each pass, and METAD_TEST_FILES as the files" {
	printf '1..1\nok 1 a\n' | tap
	local store want
	for store in "" sqlite sqlite:/tmp/x.db memory etcd; do
		case "$store" in
		"" | sqlite*) want='!store:etcd' ;;
		memory) want='!store:etcd,!store:sqlite,!store:durable' ;;
		etcd) want='!store:sqlite,!store:local' ;;
		esac
		fake_bats 0 METAD_TEST_STORE="$store" \
		    METAD_TEST_FILES="a.bats b.bats"
		assert_success
		assert_equal "$(cat "$ARGS")" \
		    "$(printf '%s\n' --tap --timing --filter-tags "$want" a.bats b.bats)"
		fake_bats 0 METAD_TEST_STORE="$store" METAD_VALGRIND=1
		assert_success
		assert_equal "$(sed -n 4p "$ARGS")" "$want,!no-valgrind"
	done
	fake_bats 0 METAD_TEST_STORE=nosuch
	assert_equal "$status" 2
	assert_output --partial "METAD_TEST_STORE=nosuch"
}

# Which tests of $FIX/tags.bats and $FIX/etcd-file.bats the real bats runs
# through tests/run, in the environment given: "ok" lines, names only.
tagged() {
	clean METAD_TEST_FILES="$FIX/tags.bats $FIX/etcd-file.bats" "$@" \
	    "$ROOT/tests/run" --bats-only
	assert_success
	grep '^ok ' <<<"$output" | cut -d' ' -f3- | sed 's/ in [0-9]*ms$//' |
	    paste -sd'|'
}

@test "the tags select each pass's tests with the installed bats" {
	assert_equal "$(tagged)" \
	    "untagged|store:sqlite|store:durable|no-valgrind|store:durable no-valgrind"
	assert_equal "$(tagged METAD_TEST_STORE=memory)" "untagged|no-valgrind"
	assert_equal "$(tagged METAD_TEST_STORE=etcd)" \
	    "untagged|store:durable|store:etcd|no-valgrind|store:durable no-valgrind|file_tags=store:etcd"
	assert_equal "$(tagged METAD_VALGRIND=1)" \
	    "untagged|store:sqlite|store:durable"
	assert_equal "$(tagged METAD_VALGRIND=1 METAD_TEST_STORE=memory)" \
	    "untagged"
}

@test "the bats run under METAD_BATS_TIMEOUT is stopped and its missing tests failed" {
	printf '1..3\nok 1 a\n' | tap
	printf '#!/bin/sh\ncat "$FAKE_BATS_TAP"\nexec sleep 60\n' \
	    >"$BATS_TEST_TMPDIR/bats"
	chmod +x "$BATS_TEST_TMPDIR/bats"
	clean PATH="$BATS_TEST_TMPDIR:$CLEAN_PATH" FAKE_BATS_TAP="$TAP" \
	    METAD_BATS_TIMEOUT=1 "$ROOT/tests/run" --bats-only
	assert_failure
	closing "check: 1 passed, 2 failed, 0 skipped"
}

# A PATH with bash and dirname only: no etcd.
no_etcd_path() {
	mkdir -p "$BATS_TEST_TMPDIR/noetcd"
	ln -sf "$(command -v bash)" "$(command -v dirname)" \
	    "$BATS_TEST_TMPDIR/noetcd/"
	echo "$BATS_TEST_TMPDIR/noetcd"
}

@test "tests/run-etcd without etcd: a skip outside CI, a failure under CI" {
	local p
	p=$(no_etcd_path)
	clean PATH="$p" "$ROOT/tests/run-etcd"
	assert_success
	assert_output --partial "etcd is not installed"
	clean PATH="$p" CI=true "$ROOT/tests/run-etcd"
	assert_failure
	assert_output --partial "etcd is not installed"
}

@test "tests/run-etcd --unit runs each binary with METAD_TEST_ETCD set, in one closing line with the bats" {
	command -v etcd >/dev/null || skip "etcd is not installed"
	printf '#!/bin/sh\necho "# etcd at $METAD_TEST_ETCD"\n' \
	    >"$BATS_TEST_TMPDIR/unit"
	printf 'printf "1..1\\nok 1 - etcd\\n"\n' >>"$BATS_TEST_TMPDIR/unit"
	chmod +x "$BATS_TEST_TMPDIR/unit"
	clean "$ROOT/tests/run-etcd" --unit "$BATS_TEST_TMPDIR/unit" \
	    --unit "$UNIT/ok" "$FIX/etcd-file.bats"
	assert_success
	assert_line --regexp '^# etcd at http://127\.0\.0\.1:[0-9]+$'
	closing "check: 5 passed, 0 failed, 0 skipped"
}

@test "tests/valgrind's bats run is counted by tests/run, without no-valgrind tests, and fails on a skip under CI" {
	printf '1..2\nok 1 a\nok 2 b # skip needs strace\n' | tap
	clean PATH="$BATS_TEST_DIRNAME/bin:$CLEAN_PATH" FAKE_BATS_TAP="$TAP" \
	    FAKE_BATS_ARGS="$ARGS" VALGRIND_BATS=x.bats \
	    VALGRIND_LOGS="$BATS_TEST_TMPDIR/vg" CI=1 "$ROOT/tests/valgrind"
	assert_failure
	assert_line "check: 1 passed, 1 failed, 0 skipped"
	assert_equal "$(sed -n 4p "$ARGS")" '!store:etcd,!no-valgrind'
	assert_equal "$(sed -n 5p "$ARGS")" "tests/bats/x.bats"
}
