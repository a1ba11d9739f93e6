#!/usr/bin/env bats
# Power loss (issue 39): metad on powerfs (tests/faults/powerfs.c), a FUSE
# file system that loses every write since a file's last fsync and every
# name since its directory's, cut under concurrent writers, restarted and
# checked (scripts/powerloss.sh; make powerloss runs many more cycles).
# docs/RELIABILITY.md, "Power loss", says what it models.
# bats file_tags=store:sqlite

load helpers

POWERFS="$ROOT/build/tests/powerfs"
POWERLOSS="$ROOT/scripts/powerloss.sh"

setup() {
	testdir
	store_is sqlite || skip "about the sqlite file"
	[ -x "$POWERFS" ] || fail "$POWERFS is not built (make build/tests/powerfs)"
	[ -c /dev/fuse ] || skip "container: no FUSE (/dev/fuse is missing)"
	FS_PID=
}

teardown() {
	if [ -n "$FS_PID" ]; then
		fusermount3 -u "$TESTDIR/mnt" 2>/dev/null ||
		    fusermount3 -uz "$TESTDIR/mnt" 2>/dev/null
		wait "$FS_PID" 2>/dev/null
	fi
	metad_cleanup
}

# powerloss [VAR=VALUE...]: scripts/powerloss.sh in $TESTDIR/pl, skipped
# when FUSE cannot be used here (the script exits 2).
powerloss() {
	run env PL_DIR="$TESTDIR/pl" METAD="$METAD" POWERFS="$POWERFS" \
	    PL_WRITERS=3 "$@" "$POWERLOSS"
	[ "$status" -ne 2 ] || skip "container: no FUSE here (mount refused): $output"
}

# fs_mount MODE: powerfs over $TESTDIR/bk on $TESTDIR/mnt.
fs_mount() {
	mkdir -p "$TESTDIR/bk" "$TESTDIR/mnt"
	"$POWERFS" -m "$1" -S 7 "$TESTDIR/bk" "$TESTDIR/mnt" \
	    2>>"$TESTDIR/powerfs.log" &
	FS_PID=$!
	wait_for -t 5 test -e "$TESTDIR/mnt/.powerloss" && return 0
	# libfuse's and fusermount3's words: FUSE refused; else powerfs failed.
	grep -q '^fuse\|^fusermount' "$TESTDIR/powerfs.log" &&
	    skip "container: no FUSE here (mount refused): $(tail -n 1 "$TESTDIR/powerfs.log")"
	fail "powerfs did not mount: $(cat "$TESTDIR/powerfs.log")"
}

fs_cut() {
	echo cut > "$TESTDIR/mnt/.powerloss"
	fusermount3 -u "$TESTDIR/mnt"
	wait "$FS_PID"
	FS_PID=
}

# fsync PATH...: each file or directory fsynced.
fsync() {
	/usr/bin/python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)' "$@"
}

@test "powerfs: unsynced writes and names are lost at the cut, fsynced ones kept (POSIX directories)" {
	mkdir -p "$TESTDIR/bk/d"
	printf old > "$TESTDIR/bk/kept"
	fs_mount drop
	m="$TESTDIR/mnt"
	printf new >> "$m/kept"			# not fsynced: lost
	printf a > "$m/d/synced"		# file and directory fsynced
	printf c > "$m/d/nofile"		# the dir fsynced, not the file
	fsync "$m/d/synced" "$m/d"
	printf b > "$m/d/nodir"			# the file fsynced, not its dir
	fsync "$m/d/nodir"
	mkdir "$m/e"				# a dir whose parent is not
	printf x > "$m/e/f"
	fsync "$m/e/f" "$m/e"
	mv "$m/d/synced" "$m/d/moved"		# a rename not fsynced
	fs_cut
	run cat "$TESTDIR/bk/kept"
	assert_output old
	run cat "$TESTDIR/bk/d/synced"
	assert_output a
	[ ! -e "$TESTDIR/bk/d/moved" ]
	[ ! -e "$TESTDIR/bk/d/nodir" ]
	[ -e "$TESTDIR/bk/d/nofile" ]
	[ ! -s "$TESTDIR/bk/d/nofile" ]
	[ ! -e "$TESTDIR/bk/e" ]
	[ ! -e "$TESTDIR/bk/.powerfs" ]
}

@test "powerfs: torn keeps an in-order prefix, sectors a subset; a cut at the armed fsync fails it" {
	fs_mount torn
	m="$TESTDIR/mnt"
	: > "$m/f"
	fsync "$m/f" "$m"
	# 64 writes of one sector each, in order: 'A'+i at sector i.
	/usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(64):
    os.pwrite(fd, bytes([65 + i % 26]) * 512, i * 512)
os.close(fd)' "$m/f"
	fs_cut
	# What is left: sectors 0..k-1 whole, nothing after.
	run /usr/bin/python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
assert len(b) % 512 == 0, len(b)
for i in range(len(b) // 512):
    assert b[i*512:(i+1)*512] == bytes([65 + i % 26]) * 512, i
print(len(b) // 512)' "$TESTDIR/bk/f"
	assert_success
	[ "$output" -lt 64 ]			# torn somewhere (seed 7)
	fs_mount sectors
	printf 'seed 11\n' > "$m/.powerloss"
	/usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"Z" * 512 * 64, 0)
os.close(fd)' "$m/f"
	fs_cut
	run /usr/bin/python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
z = sum(1 for i in range(len(b) // 512) if b[i*512:(i+1)*512] == b"Z" * 512)
print(z, len(b) // 512)' "$TESTDIR/bk/f"
	assert_success
	z=${output% *}
	# Some sectors new, some old (a random half, seeded), of a size
	# old (the torn file's) or new (64 sectors).
	[ "$z" -gt 0 ] && [ "$z" -lt "${output#* }" ]
	fs_mount drop
	echo "arm 2" > "$m/.powerloss"
	printf a > "$m/g"
	fsync "$m/g"				# the first: durable
	printf b >> "$m/g"
	run fsync "$m/g"			# the second: the cut, EIO
	assert_failure
	run grep '^frozen 1' "$m/.powerloss"
	assert_success
	fusermount3 -u "$m"
	wait "$FS_PID"
	FS_PID=
	# g's name was never durable (its directory was not fsynced).
	[ ! -e "$TESTDIR/bk/g" ]
}

@test "--sync full: power cuts in drop, torn and sectors modes under 3 writers lose nothing acknowledged" {
	powerloss PL_CYCLES=2 PL_PUTS=600
	assert_success
	assert_output --partial "powerloss: 6 cycles passed"
	assert_output --partial ", 0 acknowledged writes lost"
}

@test "--sync full: a database whose directories metad makes (t1/sub/dir/meta.db) survives the cut" {
	powerloss PL_FRESH=1 PL_MODES=drop PL_CYCLES=2 PL_PUTS=400 PL_CUT=time
	assert_success
	assert_output --partial "powerloss: 2 cycles passed"
}

@test "negative control: --sync normal loses acknowledged writes at the cut (the test bites)" {
	powerloss PL_SYNC=normal PL_EXPECT=lose PL_MODES=drop PL_CYCLES=3 \
	    PL_PUTS=600 PL_CUT=acks
	assert_success
	assert_output --partial "negative control passed"
}
