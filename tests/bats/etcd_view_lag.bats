#!/usr/bin/env bats
# Linearizable reads through a daemon whose view lags (metad-protocol(7),
# CONSISTENCY): two daemons on one etcd and prefix, A direct, B behind
# tests/faults/dropproxy -d, which relays etcd's watch streams to B late while
# its calls (the probe, writes, direct reads) go through at once.  A read
# through B must see a write A acknowledged before it was sent: by waiting for
# its view to reach the probe's revision, or, past 1 s, by asking etcd.  Runs
# in the etcd pass (tests/run-etcd).

# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
	[ -x "$ROOT/build/tests/dropproxy" ] || {
		echo "build/tests/dropproxy is not built" >&2
		return 1
	}
}

teardown() {
	local rc=0
	stop_bg "${B_PID:-}"
	if [ -n "${PROXY_PID:-}" ]; then
		kill -TERM "$PROXY_PID"
		wait_bg "$PROXY_PID"
		[ "$STATUS" -eq 0 ] || {
			echo "dropproxy exited with $STATUS" >&2
			cat "$TESTDIR/proxy.log" >&2
			rc=1
		}
	fi
	metad_cleanup
	return "$rc"
}

# start_lagging MS: daemon A (socket $SOCK) on etcd, then daemon B (socket
# $B) on the same prefix through a proxy that relays etcd's watch streams
# MS ms late.
start_lagging() {
	metad_start
	proxy_spawn "$ETCD_URL" -d "$1" || return 1
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log" --store "etcd:$PROXY_URL"
}

# ms_now: a clock in milliseconds.
ms_now() {
	echo $(($(date +%s%N) / 1000000))
}

# put_a KEY VALUE: put through A; answered (acknowledged) when it returns.
put_a() {
	local out
	out=$(printf '{"op":"put","key":"%s","value":"%s"}\n' "$1" "$2" |
	    socat -t 5 - "UNIX-CONNECT:$SOCK")
	[[ $out == *'"rev":'* ]] || {
		echo "put $1=$2 through A: $out" >&2
		return 1
	}
}

# get_b KEY [CONSISTENCY]: the value B answers for KEY (empty: none);
# sets ELAPSED, the milliseconds from sending to the answer.
get_b() {
	local req t0
	req="{\"op\":\"get\",\"key\":\"$1\"${2:+,\"consistency\":\"$2\"}}"
	t0=$(ms_now)
	GOT=$(printf '%s\n' "$req" | socat -t 10 - "UNIX-CONNECT:$B")
	ELAPSED=$(($(ms_now) - t0))
	[[ $GOT == *'"kv"'* || $GOT == *'not_found'* ]] || {
		echo "B answered $req with: $GOT" >&2
		return 1
	}
	VALUE=$(jq -r '.kv.value // empty' <<<"$GOT")
}

@test "etcd view lag: a linearizable read through B sees A's acknowledged write though B's stream lags" {
	start_lagging 500
	local i
	for i in 1 2 3; do
		put_a k "v$i"
		get_b k
		[ "$VALUE" = "v$i" ] || {
			echo "put v$i through A, then B read: $GOT" >&2
			return 1
		}
	done
	# The stream is late, not lost: B's own view catches up.
	wait_for bash -c "printf '%s\n' '{\"op\":\"get\",\"key\":\"k\",\"consistency\":\"serializable\"}' | socat -t 5 - UNIX-CONNECT:$B | grep -q '\"value\":\"v3\"'"
}

# bats test_tags=no-valgrind
@test "etcd view lag: a serializable read through B is answered from its view at once, stale or not" {
	start_lagging 3000
	put_a s old
	# B's view has "old" once its event, 3 s late, is in.
	wait_for -t 10 bash -c "printf '%s\n' '{\"op\":\"get\",\"key\":\"s\",\"consistency\":\"serializable\"}' | socat -t 5 - UNIX-CONNECT:$B | grep -q '\"value\":\"old\"'"
	put_a s new
	get_b s serializable
	# Either value is allowed (metad-protocol(7), CONSISTENCY); not
	# waiting 3 s is not.
	[[ $VALUE == old || $VALUE == new ]] || {
		echo "serializable read through B: $GOT" >&2
		return 1
	}
	[ "$ELAPSED" -lt 900 ] || {
		echo "a serializable read took $ELAPSED ms (the stream lags 3000 ms; a probe would wait 1000)" >&2
		return 1
	}
}

# bats test_tags=no-valgrind
@test "etcd view lag: with B's stream 3 s late, a linearizable read through B is answered by etcd after 1 s" {
	start_lagging 3000
	local i
	for i in 1 2; do
		put_a f "w$i"
		get_b f
		[ "$VALUE" = "w$i" ] || {
			echo "put w$i through A, then B read: $GOT" >&2
			return 1
		}
		# The view waits 1 s for the probe's revision, then etcd
		# answers: well before the stream brings the write (3 s).
		[ "$ELAPSED" -lt 2500 ] || {
			echo "B's linearizable read took $ELAPSED ms" >&2
			return 1
		}
	done
	grep -q 'etcd answers the reads' "$TESTDIR/b.log" || {
		echo "B did not log its fallback to etcd:" >&2
		cat "$TESTDIR/b.log" >&2
		return 1
	}
}
