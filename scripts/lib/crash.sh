# shellcheck shell=bash
# Shared by the crash tests, scripts/stress.sh (kill -9) and
# scripts/powerloss.sh (power cuts): their work directory, metad's start,
# the concurrent writers and the check of the keys a writer left.
#
# The sourcing script sets CRASH_NAME (its name in messages), METAD, DIR,
# SOCK, WRITERS and PUTS, keeps METAD_PID and WRITER_PIDS here, and defines
# fail MESSAGE, which says where it failed and exits 1.

# crash_need TOOL...: exits 1 naming the first tool not on PATH.
crash_need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || {
			echo "$CRASH_NAME: $tool is needed" >&2
			exit 1
		}
	done
}

# crash_built BINARY...: exits 1 naming the first one not built.
crash_built() {
	local b
	for b in "$@"; do
		[ -x "$b" ] || { echo "$CRASH_NAME: $b not built" >&2; exit 1; }
	done
}

# crash_dir [DIR]: prints the work directory: DIR (made) if given, else a
# new temporary one.
crash_dir() {
	if [ -n "${1:-}" ]; then
		mkdir -p "$1" && echo "$1"
	else
		mktemp -d "${TMPDIR:-/tmp}/metad-$CRASH_NAME.XXXXXX"
	fi
}

# crash_req JSON: one request to metad, its answer on stdout.
crash_req() {
	printf '%s\n' "$1" | socat -t 5 - "UNIX-CONNECT:$SOCK"
}

# crash_start_metad ARG...: metad on $SOCK with ARGs, its log appended to
# $DIR/metad.log; fails unless it answers within 10 s.
crash_start_metad() {
	local i
	"$METAD" --socket "$SOCK" "$@" 2>>"$DIR/metad.log" &
	METAD_PID=$!
	for ((i = 0; i < 400; i++)); do
		[ -S "$SOCK" ] && socat -u /dev/null "UNIX-CONNECT:$SOCK" \
		    2>/dev/null && return 0
		kill -0 "$METAD_PID" 2>/dev/null || fail "metad exited at start"
		sleep 0.025
	done
	fail "metad did not start"
}

# crash_kill_metad: metad killed (SIGKILL), if running, and waited for.
crash_kill_metad() {
	[ -n "$METAD_PID" ] || return 0
	kill -KILL "$METAD_PID" 2>/dev/null
	wait "$METAD_PID" 2>/dev/null
	METAD_PID=
}

# The requests of writer $2 in cycle $1, a few at a time: PUTS puts of
# unique keys c<cycle>/w<writer>/<n>, value v<cycle>.<writer>.<n>.
crash_gen() {
	local c=$1 w=$2 i
	for ((i = 1; i <= PUTS; i++)); do
		printf '{"id":%d,"op":"put","key":"c%d/w%d/%06d","value":"v%d.%d.%d"}\n' \
		    "$i" "$c" "$w" "$i" "$c" "$w" "$i"
		((i % 20 == 0)) && sleep 0.004
	done
}

# crash_writers CYCLE: WRITERS writers, each pipelining its puts over a
# connection of its own, the answers of writer W in $DIR/out.CYCLE.W.
crash_writers() {
	local w
	WRITER_PIDS=()
	for ((w = 1; w <= WRITERS; w++)); do
		( crash_gen "$1" "$w" | socat -t 5 - "UNIX-CONNECT:$SOCK" \
		    > "$DIR/out.$1.$w" 2>/dev/null ) &
		WRITER_PIDS+=($!)
	done
}

# crash_writers_wait: the writers waited for (they end once metad is gone:
# socat sees the close, crash_gen SIGPIPE).
crash_writers_wait() {
	local p
	for p in "${WRITER_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	WRITER_PIDS=()
}

# crash_stop_all: what is left at exit, metad and the writers.
crash_stop_all() {
	crash_kill_metad
	crash_writers_wait
}

# crash_check_keys CYCLE W ACKS: the keys of writer W in CYCLE, listed into
# $DIR/have.CYCLE.W, must be exactly 1..m, each with its value, and each
# line "N REV" of the file ACKS (/dev/null: none) says key N is at mod_rev
# REV; prints m.
crash_check_keys() {
	local c=$1 w=$2 acks=$3 have="$DIR/have.$1.$2"
	crash_req "{\"op\":\"list\",\"prefix\":\"c$c/w$w/\",\"limit\":10000}" |
	    jq -r '.kvs[] | "\(.key) \(.value) \(.mod_rev)"' > "$have" ||
	    fail "list c$c/w$w/ failed"
	awk -v c="$c" -v w="$w" -v acks="$acks" 'BEGIN {
		while ((getline l < acks) > 0) { split(l, f, " "); rev[f[1]] = f[2] }
	} {
		n = FNR; want = sprintf("c%d/w%d/%06d v%d.%d.%d", c, w, n, c, w, n)
		if ($1 " " $2 != want) { print "line " n ": " $0 " (want " want ")"; exit 1 }
		if ((n in rev) && rev[n] != $3) { print $1 ": mod_rev " $3 ", acknowledged at " rev[n]; exit 1 }
	}' "$have" >&2 ||
	    fail "writer $w: keys present are not 1..$(wc -l < "$have") as answered"
	wc -l < "$have"
}
