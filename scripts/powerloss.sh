#!/usr/bin/env bash
# Power cuts under concurrent write load: metad on powerfs (tests/faults/
# powerfs.c, a FUSE file system that loses every write since a file's last
# fsync, and every name since its directory's), the power cut at a random
# moment or at a random fsync, restart, and check that nothing acknowledged
# was lost and the database is intact.  kill -9 (scripts/stress.sh) keeps
# the page cache: it cannot see a missing fsync; this does.
#
#   scripts/powerloss.sh          (make powerloss: 20 cycles a mode)
#
# Environment:
#   PL_CYCLES    cycles of each mode (default 20)
#   PL_MODES     powerfs's modes (default "drop torn sectors")
#   PL_WRITERS   concurrent writer connections (default 4)
#   PL_PUTS      puts sent by each writer in a cycle (default 2000)
#   PL_SYNC      metad's --sync (default full)
#   PL_FRESH     1: each cycle's database is t<cycle>/sub/dir/meta.db in a
#                tree metad makes (its directories), else meta.db
#   PL_CUT       when the power goes: random (default: time or fsync, at
#                random), time (50-800 ms into the load), fsync (at the
#                20th-420th fsync from the start of the load) or acks
#                (once the writers hold 10-50% of their answers: always
#                mid-load, however fast the machine)
#   PL_EXPECT    keep (default): every acknowledged write must survive;
#                lose: the negative control, some acknowledged write must
#                be lost in some cycle (else the test is not testing)
#   PL_SEED      seed of the cut moments and of powerfs (default: random)
#   PL_DIR       work directory (default: a new temporary one, removed on
#                success, kept on failure)
#   METAD, POWERFS  the binaries (default: this tree's)
#
# A cycle: powerfs is mounted on the backing directory; metad serves a
# database on it with --sync PL_SYNC; W writers each pipeline PL_PUTS puts
# of unique keys c<cycle>/w<writer>/<n> over their own connection; the
# power goes either at a random moment (the control file's "cut") or at a
# random fsync from now ("arm N": that fsync fails instead); metad is
# killed, powerfs unmounted (the backing directory holds what survived).
# Then PRAGMA integrity_check on the file, powerfs mounted again, metad
# started on the same database, and for each writer: what is there is a
# prefix 1..m of what it sent, each with its value and the mod_rev its
# answer gave, and m is at least what was acknowledged; the store's rev
# and key count are what every cycle left together.  Exit 0 if every
# cycle passed (PL_EXPECT=lose: if some acknowledged write was lost), 1
# otherwise (the files are kept), 2 when FUSE cannot be used here.
set -u

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
METAD="${METAD:-$ROOT/bin/metad}"
POWERFS="${POWERFS:-$ROOT/build/tests/powerfs}"
CYCLES="${PL_CYCLES:-20}"
MODES="${PL_MODES:-drop torn sectors}"
WRITERS="${PL_WRITERS:-4}"
PUTS="${PL_PUTS:-2000}"
SYNC="${PL_SYNC:-full}"
FRESH="${PL_FRESH:-0}"
EXPECT="${PL_EXPECT:-keep}"
CUT="${PL_CUT:-random}"
SEED="${PL_SEED:-$$}"
RANDOM=$SEED

case "$CUT" in
random|time|fsync|acks) ;;
*) echo "powerloss: PL_CUT must be random, time, fsync or acks" >&2; exit 2 ;;
esac
case "$EXPECT" in
keep|lose) ;;
*) echo "powerloss: PL_EXPECT must be keep or lose" >&2; exit 2 ;;
esac
CRASH_NAME=powerloss
# shellcheck source=scripts/lib/crash.sh
. "$ROOT/scripts/lib/crash.sh"

DIR="$(crash_dir "${PL_DIR:-}")" || exit 1
BK="$DIR/backing"
MNT="$DIR/mnt"
SOCK="$DIR/metad.sock"
METAD_PID=
FS_PID=
WRITER_PIDS=()
mkdir -p "$BK" "$MNT"

crash_need socat jq sqlite3 fusermount3 mountpoint
crash_built "$METAD" "$POWERFS"

pl_stop_all() {
	crash_stop_all
	fs_umount
}
trap 'pl_stop_all' EXIT
trap 'exit 130' INT TERM

fail() {
	echo "powerloss: FAIL (mode $mode, cycle $cycle, seed $SEED): $*" >&2
	echo "powerloss: files kept in $DIR" >&2
	exit 1
}

ctl() {
	printf '%s\n' "$1" > "$MNT/.powerloss"
}

# Mounts powerfs in mode $1; exit 2 if FUSE cannot be used here.
fs_mount() {
	local i
	"$POWERFS" -m "$1" -S "$((SEED * 7919 + cycle))" "$BK" "$MNT" \
	    2>>"$DIR/powerfs.log" &
	FS_PID=$!
	for ((i = 0; i < 200; i++)); do
		[ -e "$MNT/.powerloss" ] && return 0
		if ! kill -0 "$FS_PID" 2>/dev/null; then
			FS_PID=
			# libfuse's and fusermount3's words: FUSE refused.
			if tail -n 1 "$DIR/powerfs.log" | grep -q '^fuse\|^fusermount'; then
				echo "powerloss: no FUSE here: $(tail -n 1 "$DIR/powerfs.log")" >&2
				exit 2
			fi
			fail "powerfs exited: $(tail -n 1 "$DIR/powerfs.log")"
		fi
		sleep 0.025
	done
	fail "powerfs did not mount"
}

fs_umount() {
	[ -n "$FS_PID" ] || return 0
	fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null
	wait "$FS_PID" 2>/dev/null
	FS_PID=
}

start_metad() {
	crash_start_metad --store "sqlite:$MNT/$DB" --sync "$SYNC" \
	    --log-level error
}

# Checks writer $2 of cycle $1; prints "m lost": its keys present, and
# how many acknowledged ones are not.
check_writer() {
	local w=$2 out="$DIR/out.$1.$2"
	local acked m
	# id and rev of each answer, "id rev", in the order sent.  After the
	# cut the writes fail (an error answer): no ok may follow one.
	sed -n 's/^{"id":\([0-9]*\),"ok":true,.*"rev":\([0-9]*\)}$/\1 \2/p' \
	    "$out" > "$out.acks"
	acked=$(wc -l < "$out.acks")
	[ "$acked" -eq 0 ] || [ "$(tail -n 1 "$out.acks" | cut -d' ' -f1)" -eq "$acked" ] ||
	    fail "writer $w: answers are not 1..$acked"
	[ "$acked" -eq 0 ] || [ "$(head -n "$acked" "$out" | grep -c '"ok":true')" -eq "$acked" ] ||
	    fail "writer $w: an ok answer after an error"
	# Present: exactly keys 1..m, with their values, and the acknowledged
	# ones at the rev their answers gave.
	m=$(crash_check_keys "$1" "$w" "$out.acks") || exit 1
	if [ "$m" -lt "$acked" ] && [ "$EXPECT" = keep ]; then
		fail "writer $w: $acked acknowledged, only $m present"
	fi
	echo "$m $((acked > m ? acked - m : 0))"
}

echo "powerloss: --sync $SYNC, modes $MODES, $CYCLES cycles each, $WRITERS writers x $PUTS puts, fresh $FRESH, expect $EXPECT, seed $SEED, in $DIR"
total_lost=0
total_acked=0
cycles_run=0
for mode in $MODES; do
	rm -rf "$BK" && mkdir -p "$BK"
	expected_keys=0
	for ((cycle = 1; cycle <= CYCLES; cycle++)); do
		DB=meta.db
		if [ "$FRESH" = 1 ]; then
			DB="t$cycle/sub/dir/meta.db"
			expected_keys=0
		fi
		fs_mount "$mode"
		start_metad
		crash_writers "$cycle"
		how=$CUT
		if [ "$how" = random ]; then
			how=fsync
			((RANDOM % 2 == 0)) || how=time
		fi
		if [ "$how" = acks ]; then
			# A moment between answers, never after the load: a
			# fast machine can finish it inside "time"'s window.
			n=$((WRITERS * PUTS * (10 + RANDOM % 41) / 100))
			for ((i = 0; i < 3000; i++)); do
				[ "$(cat "$DIR"/out.$cycle.* 2>/dev/null |
				    grep -c '"ok":true')" -ge "$n" ] && break
				sleep 0.005
			done
			how="at $n answers"
			ctl cut
		elif [ "$how" = time ]; then
			ms=$((50 + RANDOM % 750))
			sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
			how="at $ms ms"
			ctl cut
		else
			n=$((20 + RANDOM % 400))
			how="at fsync $n"
			ctl "arm $n"
			for ((i = 0; i < 200; i++)); do
				grep -q '^frozen 1' "$MNT/.powerloss" && break
				kill -0 "$METAD_PID" 2>/dev/null || break
				sleep 0.01
			done
			ctl cut
		fi
		stats=$(tr '\n' ' ' < "$MNT/.powerloss")
		crash_stop_all
		fs_umount
		case "$stats" in
		*"missing 0"*) ;;
		*) fail "powerfs lost an inode at the cut: $stats" ;;
		esac
		if [ -e "$BK/$DB" ]; then
			ic=$(sqlite3 "$BK/$DB" 'PRAGMA integrity_check' 2>&1)
			[ "$ic" = ok ] || fail "integrity_check: $(echo "$ic" | head -3)"
		fi
		fs_mount "$mode"
		start_metad
		lost=0
		acked_total=0
		line=""
		for ((w = 1; w <= WRITERS; w++)); do
			r=$(check_writer "$cycle" "$w") || exit 1
			m=${r% *}
			lost=$((lost + ${r#* }))
			expected_keys=$((expected_keys + m))
			a=$(wc -l < "$DIR/out.$cycle.$w.acks")
			acked_total=$((acked_total + a))
			line="$line $a/$m"
		done
		st=$(crash_req '{"op":"status"}')
		keys=$(echo "$st" | jq -r .keys)
		rev=$(echo "$st" | jq -r .rev)
		[ "$keys" = "$expected_keys" ] ||
		    fail "status says $keys keys, expected $expected_keys"
		# Each put made one key at a rev of its own, nothing else wrote.
		[ "$rev" = "$expected_keys" ] ||
		    fail "status says rev $rev, expected $expected_keys"
		kill -TERM "$METAD_PID"
		wait "$METAD_PID" || fail "metad exited non-zero on SIGTERM"
		METAD_PID=
		fs_umount
		total_lost=$((total_lost + lost))
		total_acked=$((total_acked + acked_total))
		cycles_run=$((cycles_run + 1))
		lz=$(echo "$stats" | sed -n 's/.*lost_ops \([0-9]*\).*torn_ops \([0-9]*\).*/\1 ops lost, \2 torn/p')
		echo "powerloss: $mode cycle $cycle ok (cut $how; $lz): acknowledged/present per writer:$line; lost $lost"
		rm -f "$DIR"/out.$cycle.* "$DIR"/have.$cycle.*
	done
done
echo "powerloss: $cycles_run cycles, $total_acked acknowledged, $total_lost acknowledged writes lost"
if [ "$EXPECT" = lose ]; then
	[ "$total_lost" -gt 0 ] ||
	    { mode=all; cycle=all; fail "--sync $SYNC lost nothing: the cut does not bite"; }
	echo "powerloss: negative control passed: --sync $SYNC lost writes"
else
	echo "powerloss: $cycles_run cycles passed"
fi
[ -n "${PL_DIR:-}" ] || rm -rf "$DIR"
exit 0
