#!/usr/bin/env bats
# scripts/bench-put-ab.sh, the side-by-side put benchmark that
# docs/BENCHMARKS.md measures changes with: a line a run, medians and
# per-round ratios, and an error (never a figure) when a build fails.
# bats file_tags=store:sqlite,no-valgrind

load helpers

AB="$ROOT/scripts/bench-put-ab.sh"

setup() {
	testdir
}

teardown() {
	metad_cleanup
}

@test "bench-put-ab.sh: a line a run, then each build's medians and ratio" {
	run env ROUNDS=2 CLIENTS=2 DURATION=1 KEYS=50 "$AB" "$METAD" "$METAD"
	assert_success
	# 2 rounds of 2 builds, each with puts/s, us/put and p99 above zero.
	run awk -v m="$METAD" '$1 ~ /^[12]$/ && $2 == m && $3 > 0 && $4 > 0 &&
	    $5 > 0 { n++ } END { print n + 0 }' <<<"$output"
	assert_output 4
	# The summary: the first build is its own base (1.000 each round).
	run bash -c 'sed -n "/^binary /,\$p" | sed 1d' <<<"$(env ROUNDS=1 \
	    CLIENTS=2 DURATION=1 KEYS=50 "$AB" "$METAD" "$METAD")"
	assert_line --index 0 --regexp "^$METAD +[0-9]+ +[0-9.]+ +[0-9]+ +1\.000  1\.000 \$"
	assert_line --index 1 --regexp "^$METAD +[0-9]+ +[0-9.]+ +[0-9]+ +[0-9]\.[0-9]{3}  [0-9]\.[0-9]{3} \$"
}

@test "bench-put-ab.sh: a build that does not start is an error, not a figure" {
	printf '#!/bin/sh\necho "no daemon here" >&2\nexit 3\n' >"$TESTDIR/bad"
	chmod +x "$TESTDIR/bad"
	run env ROUNDS=1 CLIENTS=2 DURATION=1 KEYS=50 "$AB" "$METAD" \
	    "$TESTDIR/bad"
	assert_failure
	assert_output --partial "$TESTDIR/bad did not start"
	assert_output --partial "no daemon here"
	refute_output --regexp "^1 +$TESTDIR/bad "
}

@test "bench-put-ab.sh: one build is a usage error" {
	run "$AB" "$METAD"
	assert_failure 2
	assert_output --partial "usage: bench-put-ab.sh BASE_METAD OTHER_METAD"
}
