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

if [ -n "${STRESS_DIR:-}" ]; then
	DIR="$STRESS_DIR"
	mkdir -p "$DIR"
else
	DIR="$(mktemp -d "${TMPDIR:-/tmp}/metad-stress.XXXXXX")"
fi
SOCK="$DIR/metad.sock"
DB="$DIR/meta.db"
METAD_PID=
WRITER_PIDS=()

for tool in socat jq sqlite3; do
	command -v "$tool" >/dev/null || {
		echo "stress: $tool is needed" >&2
		exit 1
	}
done
[ -x "$METAD" ] || {
	echo "stress: $METAD not built" >&2
	exit 1
}

# The writers end once metad is gone (socat sees the close, gen SIGPIPE).
stress_stop_all() {
	local p
	if [ -n "$METAD_PID" ]; then
		kill -KILL "$METAD_PID" 2>/dev/null
		wait "$METAD_PID" 2>/dev/null
		METAD_PID=
	fi
	for p in "${WRITER_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	WRITER_PIDS=()
}
trap 'stress_stop_all' EXIT
trap 'exit 130' INT TERM

fail() {
	echo "stress: FAIL (cycle $cycle, seed $SEED): $*" >&2
	echo "stress: files kept in $DIR" >&2
	exit 1
}

req() {
	printf '%s\n' "$1" | socat -t 5 - "UNIX-CONNECT:$SOCK"
}

start_metad() {
	local i
	"$METAD" --socket "$SOCK" --store "sqlite:$DB" --log-level warn \
	    2>>"$DIR/metad.log" &
	METAD_PID=$!
	for i in $(seq 1 200); do
		[ -S "$SOCK" ] && socat -u /dev/null "UNIX-CONNECT:$SOCK" \
		    2>/dev/null && return 0
		kill -0 "$METAD_PID" 2>/dev/null || fail "metad exited at start"
		sleep 0.025
	done
	fail "metad did not start"
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

# The requests of writer $2 in cycle $1, a few at a time.
gen() {
	local c=$1 w=$2 i
	for ((i = 1; i <= PUTS; i++)); do
		printf '{"id":%d,"op":"put","key":"c%d/w%d/%06d","value":"v%d.%d.%d"}\n' \
		    "$i" "$c" "$w" "$i" "$c" "$w" "$i"
		((i % 20 == 0)) && sleep 0.004
	done
}

# Checks writer $2 of cycle $1; prints m, the number of its keys present.
check_writer() {
	local c=$1 w=$2 out="$DIR/out.$1.$2" have="$DIR/have.$1.$2"
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
	req "{\"op\":\"list\",\"prefix\":\"c$c/w$w/\",\"limit\":10000}" |
	    jq -r '.kvs[] | "\(.key) \(.value)"' > "$have" ||
	    fail "list c$c/w$w/ failed"
	m=$(wc -l < "$have")
	[ "$m" -ge "$acked" ] ||
	    fail "writer $w: $acked acknowledged, only $m present"
	# Present: exactly keys 1..m, each with its value.
	awk -v c="$c" -v w="$w" '{
		n = NR; want = sprintf("c%d/w%d/%06d v%d.%d.%d", c, w, n, c, w, n)
		if ($0 != want) { print "line " NR ": " $0 " (want " want ")"; exit 1 }
	}' "$have" >&2 || fail "writer $w: keys present are not 1..$m"
	echo "$m"
}

expected_keys=0
echo "stress: SIG$SIGNAL, $CYCLES cycles, $WRITERS writers x $PUTS puts, seed $SEED, in $DIR"
start_metad
for ((cycle = 1; cycle <= CYCLES; cycle++)); do
	WRITER_PIDS=()
	for ((w = 1; w <= WRITERS; w++)); do
		( gen "$cycle" "$w" | socat -t 5 - "UNIX-CONNECT:$SOCK" \
		    > "$DIR/out.$cycle.$w" 2>/dev/null ) &
		WRITER_PIDS+=($!)
	done
	# A random moment between 20 and 800 ms into the load.
	sleep "0.$(printf '%03d' $((20 + RANDOM % 780)))"
	stop_metad
	for p in "${WRITER_PIDS[@]}"; do
		wait "$p"
	done
	WRITER_PIDS=()
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
	keys=$(req '{"op":"status"}' | jq -r .keys)
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
	n=$(req "{\"op\":\"list\",\"prefix\":\"c$c/w$w/\",\"limit\":10000,\"keys_only\":true}" |
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
