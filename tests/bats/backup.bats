#!/usr/bin/env bats
# Backup, restore and migration (metactl(1): dump, load, snapshot save) on
# the store under test: a dump and a snapshot are one revision even while
# writes go on, a snapshot is a metad SQLite database a daemon serves as it
# is, dump | load moves a store with binary values from sqlite to the
# store under test (etcd in the etcd pass), and load stops at a bad line
# having written nothing from its transaction on.

load helpers

setup() {
	metad_start
}

teardown() {
	[ -z "${METAD_PID:-}" ] || kill -CONT "$METAD_PID" 2>/dev/null || true
	release writer 2>/dev/null || true
	stop_bg "${WRITER:-}" "${SRC_PID:-}" "${SNAP_PID:-}" "${CONT_PID:-}"
	metad_cleanup
}

# gen_dump FILE N [FIRST]: a dump of N keys k/NNNNNN (from FIRST, default
# 1) of value vN.
gen_dump() {
	awk -v n="$2" -v first="${3:-1}" 'BEGIN {
	    print "{\"dump\":1,\"rev\":1,\"backend\":\"test\"}"
	    for (i = first; i < first + n; i++)
		printf "{\"key\":\"k/%06d\",\"value\":\"v%d\"}\n", i, i
	}' >"$1"
}

# start_writer N: in the background, put "new" into k/N, k/N-1, ... (the
# keys a paged read reaches last), one at a time, each its own revision,
# until "release writer", N puts, or 30 s.  Sets WRITER and B, the rev
# before its first put.
start_writer() {
	B=$(status_field rev)
	N=$1
	(
		end=$((SECONDS + 30))
		for ((i = $1; i >= 1; i--)); do
			[ ! -e "$TESTDIR/release.writer" ] || exit 0
			[ "$SECONDS" -lt "$end" ] || exit 0
			"$METACTL" put "$(printf 'k/%06d' "$i")" new \
			    >/dev/null || exit 1
		done
	) &
	WRITER=$!
}

rev_past() {
	[ "$(status_field rev)" -gt "$1" ]
}

# check_consistent DUMP REV: the dump is the store as of REV with the
# writer running: exactly its first REV - B puts, k/N down to
# k/(N - (REV - B) + 1), are in it.
check_consistent() {
	local n=$(($2 - B)) got first
	got=$(grep -c '"value":"new"' "$1" || true)
	first=$(grep -m 1 '"value":"new"' "$1" | jq -r .key)
	echo "rev $2, writer's base $B: $got keys new, the first $first" >&2
	[ "$got" -eq "$n" ]
	[ "$first" = "$(printf 'k/%06d' $((N - n + 1)))" ]
	# Every kv of the dump is as of REV.
	[ "$(jq -s "map(select(.mod_rev > $2)) | length" <(tail -n +2 "$1"))" -eq 0 ]
}

@test "dump: a header line, then one kv a line in key order; binary values as value_b64; PREFIX" {
	run mctl dump
	assert_success
	assert_output "$(rv '{"dump":1,"rev":@0,"backend":"'"$(backend_name)"'"}')"
	mctl put b/2 two >/dev/null
	printf '\x00\xffbin' | mctl put b/1 - >/dev/null
	mctl put c/1 three >/dev/null
	run mctl dump b/
	assert_success
	assert_line --index 0 "$(rv '{"dump":1,"rev":@3,"backend":"'"$(backend_name)"'"}')"
	assert_line --index 1 "$(rv '{"key":"b/1","value_b64":"AP9iaW4=","version":1,"create_rev":@2,"mod_rev":@2}')"
	assert_line --index 2 "$(rv '{"key":"b/2","value":"two","version":1,"create_rev":@1,"mod_rev":@1}')"
	[ "${#lines[@]}" -eq 3 ]
	# -o json changes nothing: a dump is JSON already.
	run mctl -o json dump c/
	assert_output "$(rv '{"dump":1,"rev":@3,"backend":"'"$(backend_name)"'"}
{"key":"c/1","value":"three","version":1,"create_rev":@3,"mod_rev":@3}')"
}

@test "dump is one revision however many pages, while writes go on" {
	gen_dump "$TESTDIR/in" 20000
	run mctl load "$TESTDIR/in"
	assert_output 20000
	start_writer 20000
	wait_for rev_past $((B + 3))
	for i in 1 2 3; do
		mctl dump >"$TESTDIR/dump.$i"
		R=$(head -n 1 "$TESTDIR/dump.$i" | jq .rev)
		# The writer went on after the dump's rev: writes came while
		# it was read.
		wait_for rev_past $((R + 3))
		[ "$(wc -l <"$TESTDIR/dump.$i")" -eq 20001 ]
		check_consistent "$TESTDIR/dump.$i" "$R"
	done
}

@test "snapshot save under a write load; a daemon serves the snapshot as it is" {
	gen_dump "$TESTDIR/in" 20000
	run mctl load "$TESTDIR/in"
	assert_output 20000
	printf '\x00\x01\x02' | mctl put bin - >/dev/null
	start_writer 20000
	wait_for rev_past $((B + 3))
	run mctl snapshot save "$TESTDIR/snap.db"
	assert_success
	R=$(sed -n 's/^rev: //p' <<<"$output")
	size=$(sed -n 's/^bytes: //p' <<<"$output")
	wait_for rev_past $((R + 3))
	release writer
	wait_bg "$WRITER"
	[ "$STATUS" -eq 0 ]
	[ "$(stat -c %s "$TESTDIR/snap.db")" -eq "$size" ]
	[ "$(stat -c %a "$TESTDIR/snap.db")" = 600 ]
	# Renamed into place: no temporary file left.
	[ -z "$(find "$TESTDIR" -name 'snap.db.tmp.*')" ]
	[ "$(sqlite3 "$TESTDIR/snap.db" 'PRAGMA integrity_check')" = ok ]

	# Restoring is starting a daemon on a copy.
	cp "$TESTDIR/snap.db" "$TESTDIR/restored.db"
	DB="$TESTDIR/restored.db" METAD_TEST_STORE=sqlite metad_spawn \
	    SNAP_PID "$TESTDIR/snap.sock" "$TESTDIR/snap.log"
	[ "$(METACTL_SOCKET=$TESTDIR/snap.sock status_field rev)" -eq "$R" ]
	[ "$(METACTL_SOCKET=$TESTDIR/snap.sock status_field keys)" -eq 20001 ]
	run mctl -s "$TESTDIR/snap.sock" get bin --raw
	assert_output "$(printf '\x00\x01\x02')"
	mctl -s "$TESTDIR/snap.sock" dump >"$TESTDIR/dump"
	check_consistent "$TESTDIR/dump" "$R"
	# The snapshot's daemon writes on from there.
	run mctl -s "$TESTDIR/snap.sock" put after-restore x
	assert_success
}

@test "dump | load moves 100k keys with binary values and leased keys from sqlite to the store under test, key by key, leases left out" {
	gen_dump "$TESTDIR/in" 100000
	printf '%s\n' '{"key":"bin/1","value_b64":"AAECAw=="}' \
	    '{"key":"bin/2","value_b64":"/w=="}' \
	    '{"key":"utf8/é","value":"snow ☃ man"}' >>"$TESTDIR/in"
	DB="$TESTDIR/src.db" METAD_TEST_STORE=sqlite metad_spawn SRC_PID \
	    "$TESTDIR/src.sock" "$TESTDIR/src.log"
	run mctl -s "$TESTDIR/src.sock" load "$TESTDIR/in"
	assert_output 100003
	mctl -s "$TESTDIR/src.sock" put k/000007 changed >/dev/null
	# Two keys attached to a lease: the dump leaves the lease out
	# (metactl(1), load), and the target holds them detached.
	lease=$(mctl -s "$TESTDIR/src.sock" lease grant 1h)
	mctl -s "$TESTDIR/src.sock" put leased/1 a --lease "$lease" >/dev/null
	mctl -s "$TESTDIR/src.sock" put leased/2 b --lease "$lease" >/dev/null
	run mctl -s "$TESTDIR/src.sock" -o json get leased/1
	assert_output --partial "\"lease\":$lease"
	run bash -c '"$1" -s "$2" dump | grep -c "\"lease\":"' bash \
	    "$METACTL" "$TESTDIR/src.sock"
	assert_output 0

	run bash -c '"$1" -s "$2" dump | "$1" load' bash "$METACTL" \
	    "$TESTDIR/src.sock"
	assert_success
	assert_output 100005
	for k in leased/1 leased/2; do
		run mctl -o json get "$k"
		assert_success
		refute_output --partial '"lease"'
	done
	# Both sides, key by key: the same keys and values; the target
	# assigned its own versions and revisions.
	mctl -s "$TESTDIR/src.sock" dump | tail -n +2 |
	    jq -c '{key, value, value_b64}' >"$TESTDIR/src.kv"
	mctl dump | tail -n +2 | jq -c '{key, value, value_b64}' \
	    >"$TESTDIR/dst.kv"
	[ "$(wc -l <"$TESTDIR/dst.kv")" -eq 100005 ]
	cmp "$TESTDIR/src.kv" "$TESTDIR/dst.kv"
	run mctl get k/000007
	assert_output changed
	run mctl get bin/1 --raw
	assert_output "$(printf '\x00\x01\x02\x03')"
	# Loaded again with --if-absent: every key is there, none written.
	run bash -c '"$1" -s "$2" dump | "$1" load --if-absent -o json' bash \
	    "$METACTL" "$TESTDIR/src.sock"
	assert_output '{"ok":true,"written":0,"skipped":100005}'
}

@test "load --if-absent writes only the keys that are absent and prints how many" {
	mctl put k/000002 mine >/dev/null
	gen_dump "$TESTDIR/in" 200
	run mctl load --if-absent "$TESTDIR/in"
	assert_success
	assert_output 199
	run mctl get k/000002
	assert_output mine
	run mctl get k/000200
	assert_output v200
	# Without it, every key is written.
	run mctl load - <"$TESTDIR/in"
	assert_output 200
	run mctl get k/000002
	assert_output v2
}

# bad_load FILE LINE FROM KEPT: load FILE stops at LINE having written
# KEPT keys (those of whole transactions before the line FROM) and
# nothing from FROM on.
bad_load() {
	run mctl load "$1"
	assert_failure 5
	assert_output --partial "$1: line $2: "
	assert_output --partial "nothing from line $3 on was written ($4 keys were, before it)"
	[ "$(mctl ls k/ | wc -l)" -eq "$4" ]
}

@test "load stops at a bad line: nothing from its transaction on is written" {
	# Lines 2-129 are the first transaction (128 puts), 130-257 the
	# second: a bad line 200 leaves the first written, no more.
	gen_dump "$TESTDIR/in" 300
	sed '200s/.*/{"key":"k\/x","value":"y"/' "$TESTDIR/in" >"$TESTDIR/bad"
	bad_load "$TESTDIR/bad" 200 130 128
	assert_output --partial "not a kv"

	# Not a kv: valid JSON, but no key.
	metad_restart_empty
	sed '200s/.*/{"value":"no key"}/' "$TESTDIR/in" >"$TESTDIR/bad"
	bad_load "$TESTDIR/bad" 200 130 128
	assert_output --partial 'field "key"'

	# A key over the limit (4096 bytes).
	metad_restart_empty
	long=$(head -c 4097 /dev/zero | tr '\0' k)
	sed "200s/.*/{\"key\":\"$long\",\"value\":\"x\"}/" "$TESTDIR/in" \
	    >"$TESTDIR/bad"
	bad_load "$TESTDIR/bad" 200 130 128
	assert_output --partial "4097 bytes, the limit is 4096"

	# Truncated: the input ends inside its last line.
	metad_restart_empty
	head -c -10 "$TESTDIR/in" >"$TESTDIR/bad"
	bad_load "$TESTDIR/bad" 301 258 256
	assert_output --partial "truncated"

	# The first transaction bad: nothing at all.
	metad_restart_empty
	sed '3s/.*/[1, 2]/' "$TESTDIR/in" >"$TESTDIR/bad"
	bad_load "$TESTDIR/bad" 3 2 0
}

# A fresh, empty store for the next case (its own directory on sqlite, a
# fresh prefix on etcd).
metad_restart_empty() {
	metad_stop
	# The metad backend's store is its serving daemon's: a new one.
	if store_is remote; then
		stop_bg "$SERVING_PID"
		SERVING_PID=
		rm -f "$TESTDIR"/serving.db*
	fi
	DB="$TESTDIR/meta.$RANDOM.db"
	ETCD_PREFIX="${ETCD_PREFIX:-x/}r$RANDOM/"
	metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
}

@test "load refuses a dump of a newer format version, and input that is no dump" {
	printf '{"dump":2,"rev":9,"backend":"sqlite"}\n{"key":"a","value":"b"}\n' \
	    >"$TESTDIR/new"
	run mctl load "$TESTDIR/new"
	assert_failure 5
	assert_output --partial "line 1: the dump has format version 2, newer than this metactl reads (1)"
	run mctl get a
	assert_failure 1
	printf '{"key":"a","value":"b"}\n' >"$TESTDIR/nohdr"
	run mctl load "$TESTDIR/nohdr"
	assert_failure 5
	assert_output --partial "line 1: not a dump header"
	run mctl load "$TESTDIR/missing"
	assert_failure 5
	assert_output --partial "cannot open $TESTDIR/missing"
	run mctl load </dev/null
	assert_failure 5
	assert_output --partial "empty input"
}

# on_tty COMMAND...: run COMMAND with stdout and stderr on a terminal
# (script(1)); its output, what the terminal showed, in $TESTDIR/tty.
on_tty() {
	script -qefc "$(printf '%q ' "$@")" /dev/null >"$TESTDIR/tty" 2>&1
}

# pause_metad: stop metad for 1.5 s (the next command waits that long for
# its answer).
pause_metad() {
	[ -z "${CONT_PID:-}" ] || wait "$CONT_PID"
	kill -STOP "$METAD_PID"
	(sleep 1.5; kill -CONT "$METAD_PID") &
	CONT_PID=$!
}

@test "a progress line on a terminal when it takes over a second; none in a pipe or with -o json" {
	gen_dump "$TESTDIR/in" 1000
	# metad stopped for 1.5 s: the load waits for its first answer.
	pause_metad
	on_tty "$METACTL" load "$TESTDIR/in"
	# A regular file: the percent read and the time left.
	grep -q 'loading: [0-9]*%, [0-9]*:[0-9][0-9] left: [0-9]* keys written, line [0-9]*' "$TESTDIR/tty"
	grep -q '^1000' <(tr '\r' '\n' <"$TESTDIR/tty" | sed 's/\x1b\[K//g')

	pause_metad
	run mctl load "$TESTDIR/in"
	assert_output 1000

	pause_metad
	on_tty "$METACTL" -o json load "$TESTDIR/in"
	! grep -q 'loading' "$TESTDIR/tty"
	grep -q '"written":1000' "$TESTDIR/tty"

	pause_metad
	on_tty "$METACTL" snapshot save "$TESTDIR/s.db"
	grep -q 'snapshot: [0-9]* of [0-9]* KiB' "$TESTDIR/tty"

	# dump: the progress on the terminal, the dump in the file.
	pause_metad
	on_tty sh -c '"$1" dump >"$2"' sh "$METACTL" "$TESTDIR/dump"
	grep -q 'dump: [0-9]* keys at rev [0-9]*, [0-9]* keys/s' "$TESTDIR/tty"
	[ "$(wc -l <"$TESTDIR/dump")" -eq 1001 ]
	! grep -q 'dump:' "$TESTDIR/dump"
}

@test "dump into a slow pipe on a terminal shows its progress before a page is out" {
	awk 'BEGIN {
	    print "{\"dump\":1,\"rev\":1,\"backend\":\"test\"}"
	    for (i = 1; i <= 2000; i++)
		printf "{\"key\":\"k/%06d\",\"value\":\"%01000d\"}\n", i, i
	}' >"$TESTDIR/in"
	mctl load "$TESTDIR/in"
	# Pages are of 1000 keys of 1 KB here.  The reader waits past the
	# first second, then takes 64 KB at a time, 768 KB at most, until the
	# terminal shows dump's progress line.
	local reader='head -c 1 >/dev/null; sleep 1.1; n=0
	    while [ $n -lt 12 ]; do
		head -c 65536 >/dev/null
		if grep -q "dump: [0-9]* keys at rev [0-9]*, [0-9]* keys/s" "$1"
		then echo seen >"$2"; break; fi
		sleep 0.05; n=$((n + 1))
	    done; cat >/dev/null'
	on_tty sh -c '"$1" dump | sh -c "$2" sh "$3" "$4"' sh "$METACTL" \
	    "$reader" "$TESTDIR/tty" "$TESTDIR/seen"
	[ -e "$TESTDIR/seen" ] || fail "no progress line within 768 KB: $(cat -v "$TESTDIR/tty")"
}

# conv_open: a connection of its own to talk on, request by request
# (conv REQUEST sets $output to the answer); conv_close ends it.  A
# snapshot is read only on the connection that took it.
conv_open() {
	coproc CONV { socat -t 30 - "UNIX-CONNECT:$SOCK"; }
}

conv() {
	printf '%s\n' "$1" >&"${CONV[1]}"
	output=
	IFS= read -r -t 10 output <&"${CONV[0]}"
}

conv_close() {
	local pid=$CONV_PID
	exec {CONV[1]}>&-
	wait "$pid" 2>/dev/null || true
}

@test "snapshot ops: chunks at the offsets asked, dropped once read to the end, at most 4 at once" {
	mctl put a 1 >/dev/null
	conv_open
	conv '{"op":"snapshot"}'
	assert_output --regexp "^\{\"ok\":true,\"snapshot\":1,\"rev\":$(rv @1),\"bytes\":[0-9]+\}$"
	bytes=$(jq .bytes <<<"$output")
	conv '{"op":"snapshot_read","snapshot":1,"offset":0,"limit":16}'
	assert_output '{"ok":true,"data_b64":"U1FMaXRlIGZvcm1hdCAzAA==","eof":false}'
	conv "{\"op\":\"snapshot_read\",\"snapshot\":1,\"offset\":$((bytes + 1))}"
	assert_output --partial '"code":"bad_request"'
	conv '{"op":"snapshot_read","snapshot":1,"offset":0,"limit":524289}'
	assert_output --partial '"code":"bad_request"'
	conv '{"op":"snapshot","extra":1}'
	assert_output --partial 'unknown field \"extra\" for op \"snapshot\"'
	# The last chunk: eof, and the snapshot is gone.
	conv "{\"op\":\"snapshot_read\",\"snapshot\":1,\"offset\":$((bytes - 1))}"
	assert_output --regexp '^\{"ok":true,"data_b64":"[A-Za-z0-9+/]{2}==","eof":true\}$'
	conv '{"op":"snapshot_read","snapshot":1,"offset":0}'
	assert_output --partial '"code":"not_found"'
	# Four held open (never read to the end); a fifth must wait.
	for i in 2 3 4 5; do
		conv '{"op":"snapshot"}'
		assert_output --partial "\"snapshot\":$i,"
	done
	conv '{"op":"snapshot"}'
	assert_output --partial '"code":"unavailable","message":"4 snapshots are being taken or read already (the limit is 4)"'
	# Reading one to its end frees its place.
	conv '{"op":"snapshot_read","snapshot":5,"offset":0}'
	assert_output --partial '"eof":true'
	conv '{"op":"snapshot"}'
	assert_output --partial '"snapshot":6,'
	# Another connection cannot read them: to it they are not there.
	run req '{"op":"snapshot_read","snapshot":6,"offset":0,"limit":16}'
	assert_output --partial '"code":"not_found"'
	conv '{"op":"snapshot_read","snapshot":6,"offset":0,"limit":16}'
	assert_output --partial '"ok":true'
	# Closing the connection drops its snapshots at once: four are free.
	conv_close
	for i in 7 8 9 10; do
		run req '{"op":"snapshot"}'
		assert_output --partial "\"snapshot\":$i,"
	done
}

# traced PID: every thread of PID has a tracer attached.
traced() {
	! grep -h '^TracerPid:' /proc/"$1"/task/*/status | grep -q '[[:space:]]0$'
}

@test "a snapshot is written in a directory of the daemon's own (0700, made with mkdtemp), not in a shared \$TMPDIR; it goes when the daemon stops" {
	metad_stop
	mkdir -m 1777 "$TESTDIR/tmp"
	TMPDIR="$TESTDIR/tmp" metad_spawn METAD_PID "$SOCK" "$TESTDIR/metad.log"
	run mctl put k v
	assert_success
	# Where its files are opened: strace on the running daemon.
	strace -f -qq -p "$METAD_PID" -e trace=openat -o "$TESTDIR/trace" &
	local tracer=$!
	wait_for traced "$METAD_PID"
	run mctl snapshot save "$TESTDIR/snap.db"
	assert_success
	kill -INT "$tracer"
	wait "$tracer" || true
	local dir
	dir=$(find "$TESTDIR/tmp" -mindepth 1 -maxdepth 1)
	# One entry in the shared directory: the daemon's own, 0700 and empty
	# (the snapshot, read to its end, is unlinked).
	[ "$(printf '%s\n' "$dir" | wc -l)" -eq 1 ]
	[[ $dir == "$TESTDIR/tmp/metad-snapshots."?????? ]]
	[ "$(stat -c %a "$dir")" = 700 ]
	[ -z "$(ls -A "$dir")" ]
	# Every file the snapshot opened in TMPDIR (and its -wal, -shm) was in it.
	grep -o "\"$TESTDIR/tmp/[^\"]*\"" "$TESTDIR/trace" | sort -u >"$TESTDIR/opened"
	[ -s "$TESTDIR/opened" ]
	! grep -v "^\"$dir/snapshot\\.[A-Za-z0-9]\\{6\\}\\(-wal\\|-shm\\|-journal\\)\\?\"\$" "$TESTDIR/opened"
	[ "$(sqlite3 "$TESTDIR/snap.db" 'PRAGMA integrity_check')" = ok ]
	metad_stop
	[ -z "$(ls -A "$TESTDIR/tmp")" ]
}

# A dump holds such a value as "value" with \u0000, and load writes its
# bytes back exactly, a value of NULs 6 times its size escaped included
# (load and put send it as value_b64 then, within the request limit).
@test "dump and load round-trip values holding NUL and control characters exactly" {
	local k
	printf 'a\0b' | mctl put v - >/dev/null
	printf '\0\001\037\n"\\\177' | mctl put c - >/dev/null
	printf '\377\0' | mctl put x - >/dev/null
	head -c 200000 /dev/zero | mctl put z - >/dev/null
	mctl dump >"$TESTDIR/dump"
	grep -qF '{"key":"v","value":"a\u0000b",' "$TESTDIR/dump"
	grep -qF '{"key":"c","value":"\u0000\u0001\u001f\n\"\\'$'\177''",' "$TESTDIR/dump"
	grep -qF '{"key":"x","value_b64":"/wA=",' "$TESTDIR/dump"
	for k in v c x z; do
		mctl get --raw "$k" >"$TESTDIR/$k.before"
		mctl del "$k" >/dev/null
	done
	run -0 mctl load "$TESTDIR/dump"
	assert_output 4
	for k in v c x z; do
		mctl get --raw "$k" | cmp - "$TESTDIR/$k.before"
	done
	head -c 200000 /dev/zero | cmp - "$TESTDIR/z.before"
	mctl dump | tail -n +2 | jq -c '{key, value, value_b64}' >"$TESTDIR/again"
	tail -n +2 "$TESTDIR/dump" | jq -c '{key, value, value_b64}' | cmp - "$TESTDIR/again"
}
