#!/usr/bin/env bats
# scripts/check-layers (make check-layers): the tree passes, and each rule
# fires on a small tree made up here: a cycle between sibling folders, a
# module cycle of three, a backend's header outside its backend, a file
# over 650 lines; and the known list passes only what it names exactly.
# bats file_tags=store:sqlite,no-valgrind

load helpers

CHECK="$ROOT/scripts/check-layers"

setup() {
	testdir
	T="$TESTDIR/tree"
	mkdir -p "$T/daemon"
}

teardown() {
	metad_cleanup
}

# src PATH [INCLUDE...]: the file PATH under the made-up tree, including
# each INCLUDE ("x.h").
src() {
	local path=$T/$1 inc
	shift
	mkdir -p "$(dirname "$path")"
	: >"$path"
	for inc in "$@"; do
		printf '#include "%s"\n' "$inc" >>"$path"
	done
}

# module PATH [INCLUDE...]: PATH.c including each INCLUDE, and PATH.h.
module() {
	local path=$1
	shift
	src "$path.c" "$@"
	src "$path.h"
}

@test "check-layers: the tree passes, with its known list" {
	run "$CHECK"
	assert_success
	assert_line --partial "check-layers: ok"
}

@test "check-layers: a pair of modules passes" {
	module daemon/core/a core/b.h
	module daemon/core/b core/a.h
	run "$CHECK" -C "$T"
	assert_success
	assert_output --partial "check-layers: ok"
}

@test "check-layers: a cycle between sibling folders fails, naming its arrows" {
	module daemon/net/conn ops/ops.h
	module daemon/ops/ops net/conn.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: folders: net ops"
	assert_line "  daemon/net/conn.c -> daemon/ops/ops.h"
	assert_line "  daemon/ops/ops.c -> daemon/net/conn.h"
	# One way only passes.
	src daemon/ops/ops.c
	run "$CHECK" -C "$T"
	assert_success
}

@test "check-layers: a cycle of three modules fails, a header's include counts" {
	module daemon/core/a core/b.h
	module daemon/core/b core/c.h
	src daemon/core/c.c
	src daemon/core/c.h core/a.h
	# A .c without its own .h is no module: its includes make no cycle.
	src daemon/core/loose.c core/a.h core/b.h core/c.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: modules: core/a core/b core/c"
	assert_line "  daemon/core/c.h -> daemon/core/a.h"
	refute_output --partial loose
}

@test "check-layers: a backend's header outside its backend fails" {
	module daemon/store/store
	module daemon/store/sqlite/store_sqlite store/store.h
	src daemon/store/sqlite/store_sqlite_x.c store/sqlite/store_sqlite.h
	run "$CHECK" -C "$T"
	assert_success
	src daemon/store/store.c store/sqlite/store_sqlite.h
	src daemon/store/mem/store_mem.c store/sqlite/store_sqlite.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: backend: daemon/store/store.c"
	assert_line "  daemon/store/mem/store_mem.c -> daemon/store/sqlite/store_sqlite.h"
	refute_output --partial "store_sqlite_x.c ->"
}

@test "check-layers: a file over 650 lines fails, 650 pass" {
	mkdir -p "$T/cmd"
	seq 650 >"$T/cmd/long.c"
	run "$CHECK" -C "$T"
	assert_success
	seq 651 >"$T/cmd/long.c"
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: lines: cmd/long.c"
	assert_line "  cmd/long.c: 651 lines (limit 650)"
}

@test "check-layers: the known list passes its own cycle only, and only shrinks" {
	module daemon/core/a core/b.h
	module daemon/core/b core/c.h
	module daemon/core/c core/a.h
	mkdir -p "$T/scripts"
	echo "modules core/a core/b core/c  # known" >"$T/scripts/layers-known"
	run "$CHECK" -C "$T"
	assert_success
	assert_line "check-layers: known: modules: core/a core/b core/c"
	# Grown by a fourth module: a violation.
	module daemon/core/c core/a.h core/d.h
	module daemon/core/d core/a.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: modules: core/a core/b core/c core/d"
	# Cut to a pair, the line must go.
	module daemon/core/c
	module daemon/core/d
	module daemon/core/b core/a.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line --partial "check-layers: stale: layers-known: 'modules core/a core/b core/c'"
	# Smaller than its line: shrink the line.
	echo "modules core/a core/b core/c core/d" >"$T/scripts/layers-known"
	module daemon/core/b core/c.h
	module daemon/core/c core/a.h
	run "$CHECK" -C "$T"
	assert_failure
	assert_line "check-layers: violation: modules: core/a core/b core/c"
	assert_line --partial "shrink layers-known to this one"
}
