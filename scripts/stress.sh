#!/usr/bin/env bash
# kill -9 metad at random moments under concurrent write load, restart it,
# and check that nothing acknowledged was lost and the database is intact.
#
#   scripts/stress.sh            (make stress: 50 cycles)
#
# Environment:
#   STRESS_CYCLES   cycles (default 50)
#   STRESS_WRITERS  concurrent writer connections (default 4)
#   STRESS_PUTS     puts sent by each writer in a cycle (default 3000)
#   STRESS_SEED     seed of the kill moments (default: random, printed)
#   STRESS_SIGNAL   KILL (default) or TERM: with TERM, metad must also exit
#                   0 within 5 s and every answer it sent be a whole line
#   STRESS_DIR      work directory (default: a new temporary one, removed
#                   on success, kept on failure)
#   METAD           the daemon (default: bin/metad of this tree)
#
# A cycle: W writers each pipeline STRESS_PUTS puts of unique keys
# c<cycle>/w<writer>/<n> over their own socat connection, paced so that
# writes are in flight all the time; metad is killed with SIGKILL at a random
# moment; the writers' answers say which writes were acknowledged.  Then
# metad restarts on the same database and for each writer:
#   - every acknowledged put is there with its value;
#   - what is there is a prefix 1..m of what it sent (a batch commits
#     whole, in order: no holes);
#   - no answer was an error;
# and PRAGMA integrity_check says ok.  At the end every cycle's keys are
# checked again and the key count must be their sum.
# Exit 0 if every cycle passed, 1 on the first failure (its files are kept).
set -u

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
METAD="${METAD:-$ROOT/bin/metad}"
CYCLES="${STRESS_CYCLES:-50}"
WRITERS="${STRESS_WRITERS:-4}"
PUTS="${STRESS_PUTS:-3000}"
SEED="${STRESS_SEED:-$$}"
SIGNAL="${STRESS_SIGNAL:-KILL}"
case "$SIGNAL" in
KILL|TERM) ;;
*) echo "stress: STRESS_SIGNAL must be KILL or TERM" >&2; exit 2 ;;
esac
RANDOM=$SEED
CRASH_NAME=stress
# shellcheck source=scripts/lib/crash.sh
. "$ROOT/scripts/lib/crash.sh"

crash_need socat jq sqlite3
crash_built "$METAD"
DIR="$(crash_dir "${STRESS_DIR:-}")" || exit 1
SOCK="$DIR/metad.sock"
DB="$DIR/meta.db"
METAD_PID=
WRITER_PIDS=()

trap 'crash_stop_all' EXIT
trap 'exit 130' INT TERM

fail() {
	echo "stress: FAIL (cycle $cycle, seed $SEED): $*" >&2
	echo "stress: files kept in $DIR" >&2
	exit 1
}

start_metad() {
	crash_start_metad --store "sqlite:$DB" --log-level warn
}

# Sends SIGNAL to metad and waits for it (TERM: it must exit 0 in 5 s).
stop_metad() {
	local i rc=0
	kill "-$SIGNAL" "$METAD_PID"
	if [ "$SIGNAL" = TERM ]; then
		for ((i = 0; i < 100; i++)); do
			kill -0 "$METAD_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$METAD_PID" 2>/dev/null &&
		    fail "metad still running 5 s after SIGTERM"
		wait "$METAD_PID" || rc=$?
		METAD_PID=
		[ "$rc" -eq 0 ] || fail "metad exited $rc on SIGTERM"
		return 0
	fi
	wait "$METAD_PID" 2>/dev/null
	METAD_PID=
}

# Checks writer $2 of cycle $1; prints m, the number of its keys present.
check_writer() {
	local w=$2 out="$DIR/out.$1.$2"
	local acked m
	if grep -q '"ok":false' "$out"; then
		fail "writer $w got an error: $(grep -m1 '"ok":false' "$out")"
	fi
	acked=$(grep -o '^{"id":[0-9]*,"ok":true' "$out" | tr -dc '0-9\n' |
	    sort -n | tail -1)
	acked=${acked:-0}
	# A clean stop sends whole answers only.
	if [ "$SIGNAL" = TERM ] && [ -s "$out" ] && [ -n "$(tail -c 1 "$out")" ]; then
		fail "writer $w: the last answer is cut short"
	fi
	# Acknowledged in order: the ids answered are exactly 1..acked.
	[ "$(grep -c '"ok":true' "$out")" -eq "$acked" ] ||
	    fail "writer $w: answers are not 1..$acked"
	# Present: exactly keys 1..m, each with its value.
	m=$(crash_check_keys "$1" "$w" /dev/null) || exit 1
	[ "$m" -ge "$acked" ] ||
	    fail "writer $w: $acked acknowledged, only $m present"
	echo "$m"
}

expected_keys=0
echo "stress: SIG$SIGNAL, $CYCLES cycles, $WRITERS writers x $PUTS puts, seed $SEED, in $DIR"
start_metad
for ((cycle = 1; cycle <= CYCLES; cycle++)); do
	crash_writers "$cycle"
	# A random moment between 20 and 800 ms into the load.
	sleep "0.$(printf '%03d' $((20 + RANDOM % 780)))"
	stop_metad
	crash_writers_wait
	# The daemon holds the database exclusively: check it while down.
	[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] ||
	    fail "integrity_check: $(sqlite3 "$DB" 'PRAGMA integrity_check' | head -3)"
	start_metad
	acked_total=0
	line=""
	for ((w = 1; w <= WRITERS; w++)); do
		m=$(check_writer "$cycle" "$w") || exit 1
		echo "$m" > "$DIR/count.$cycle.$w"
		expected_keys=$((expected_keys + m))
		a=$(grep -c '"ok":true' "$DIR/out.$cycle.$w")
		acked_total=$((acked_total + a))
		line="$line $a/$m"
	done
	keys=$(crash_req '{"op":"status"}' | jq -r .keys)
	[ "$keys" = "$expected_keys" ] ||
	    fail "status says $keys keys, expected $expected_keys"
	echo "stress: cycle $cycle ok: acknowledged/present per writer:$line"
	[ "$acked_total" -gt 0 ] || echo "stress: cycle $cycle: nothing was acknowledged"
	rm -f "$DIR"/out.$cycle.* "$DIR"/have.$cycle.*
done

# Nothing from an earlier cycle went missing later.
cycle=final
for f in "$DIR"/count.*; do
	c=${f#"$DIR"/count.}
	w=${c#*.}
	c=${c%.*}
	n=$(crash_req "{\"op\":\"list\",\"prefix\":\"c$c/w$w/\",\"limit\":10000,\"keys_only\":true}" |
	    jq '.kvs | length')
	[ "$n" = "$(cat "$f")" ] || fail "c$c/w$w: $n keys now, $(cat "$f") before"
done
kill -TERM "$METAD_PID"
wait "$METAD_PID" || fail "metad exited non-zero on SIGTERM"
METAD_PID=
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "final integrity_check"
echo "stress: $CYCLES cycles passed ($expected_keys keys)"
[ -n "${STRESS_DIR:-}" ] || rm -rf "$DIR"
exit 0
