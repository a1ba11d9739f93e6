#!/usr/bin/env bats
# The etcd backend's view of its prefix (metad(8), --view-max-bytes):
# reads answered from memory stay linearizable across daemons; serializable
# and min_rev reads; the bound.  Runs in the etcd pass (tests/run-etcd).

# bats file_tags=store:etcd

bats_require_minimum_version 1.5.0
load helpers

setup() {
	store_is etcd || skip "the etcd pass runs it (tests/run-etcd)"
	command -v etcd >/dev/null || skip "etcd is not installed"
}

teardown() {
	stop_bg "${B_PID:-}"
	metad_cleanup
}

# A second daemon on the same etcd and prefix: socket $B.
start_b() {
	B="$TESTDIR/b.sock"
	metad_spawn B_PID "$B" "$TESTDIR/b.log" "$@"
}

@test "etcd view: status says it is on, with its keys and bytes" {
	metad_start
	mctl put a 1 >/dev/null
	mctl put b 22 >/dev/null
	run -0 mctl status
	assert_line --regexp '^view: on: 2 keys, [0-9]+ of 268435456 bytes$'
}

@test "etcd view: a write acknowledged by one daemon is read at once through the other" {
	metad_start
	start_b
	local i out
	# Each get is sent after the put was answered: linearizable reads
	# must see it, though B's view learns of it from its event stream.
	for i in $(seq 1 50); do
		printf '{"op":"put","key":"k","value":"%d"}\n' "$i" |
		    socat -t 5 - "UNIX-CONNECT:$SOCK" >/dev/null
		out=$(printf '{"op":"get","key":"k"}\n' |
		    socat -t 5 - "UNIX-CONNECT:$B")
		[[ $out == *"\"value\":\"$i\""* ]] || {
			echo "put $i, then B read: $out" >&2
			return 1
		}
	done
	run -0 mctl -s "$B" ls
	assert_output k
}

@test "etcd view: serializable reads answer from the view; min_rev reads wait for it" {
	metad_start
	start_b
	local rev out
	rev=$(printf '{"op":"put","key":"m","value":"x"}\n' |
	    socat -t 5 - "UNIX-CONNECT:$SOCK" | jq -r .rev)
	out=$(printf '{"op":"get","key":"m","min_rev":%s}\n' "$rev" |
	    socat -t 5 - "UNIX-CONNECT:$B")
	assert_equal "$(jq -r .kv.value <<<"$out")" x
	out=$(printf '{"op":"list","prefix":"m","min_rev":%s,"consistency":"serializable"}\n' "$rev" |
	    socat -t 5 - "UNIX-CONNECT:$B")
	assert_equal "$(jq -c '[.kvs[].key]' <<<"$out")" '["m"]'
	# This daemon's own writes: a serializable read sees them at once.
	printf '{"op":"put","key":"m","value":"y"}\n{"op":"get","key":"m","consistency":"serializable"}\n' |
	    socat -t 5 - "UNIX-CONNECT:$B" >"$TESTDIR/own"
	run jq -r 'select(.kv.value != null) | .kv.value' "$TESTDIR/own"
	assert_output y
}

@test "etcd view: a write made outside metad shows once its event arrives" {
	metad_start
	local k64 v64
	k64=$(printf '%sk/outside' "$ETCD_PREFIX" | base64 -w0)
	v64=$(printf 'etcdctl' | base64 -w0)
	curl -sf -X POST "$ETCD_URL/v3/kv/put" \
	    -d "{\"key\":\"$k64\",\"value\":\"$v64\"}" >/dev/null
	wait_for bash -c "printf '%s\n' '{\"op\":\"get\",\"key\":\"outside\",\"consistency\":\"serializable\"}' | socat -t 5 - UNIX-CONNECT:$SOCK | grep -q etcdctl"
	run -0 mctl get outside
	assert_output etcdctl
}

@test "etcd view: past --view-max-bytes it is dropped, status says so, reads go to etcd" {
	metad_start --view-max-bytes 2k
	mctl put small 1 >/dev/null
	run -0 mctl status
	assert_line --regexp '^view: on: 1 keys, [0-9]+ of 2048 bytes$'
	mctl put big "$(head -c 3000 /dev/zero | tr '\0' x)" >/dev/null
	run -0 mctl status
	assert_line "view: off: over --view-max-bytes (2048)"
	run -0 mctl get small
	assert_output 1
	run -0 mctl ls
	assert_output "$(printf 'big\nsmall')"
	run -0 mctl get small --rev "$(rv @1)"
	assert_output 1
}

@test "etcd view: the view is filled from what is there when the daemon starts" {
	metad_start
	mctl put f/1 one >/dev/null
	mctl put f/2 two >/dev/null
	start_b --view-max-bytes 1m
	run -0 mctl -s "$B" status
	assert_line --regexp '^view: on: 2 keys, [0-9]+ of 1048576 bytes$'
	run -0 mctl -s "$B" -o json ls f/ -l
	assert_output --partial '"key":"f/1","value":"one"'
	assert_output --partial '"key":"f/2","value":"two"'
	start_b_off() {
		metad_spawn C_PID "$TESTDIR/c.sock" "$TESTDIR/c.log" --view-max-bytes 0
	}
	start_b_off
	run -0 mctl -s "$TESTDIR/c.sock" status
	assert_line "view: off: --view-max-bytes 0"
	run -0 mctl -s "$TESTDIR/c.sock" get f/2
	assert_output two
	stop_bg "$C_PID"
}

@test "etcd view: --view-max-bytes takes a size; anything else is a usage error" {
	testdir
	run -2 "$METAD" --socket "$TESTDIR/x.sock" --store memory --view-max-bytes lots
	assert_output --partial "view-max-bytes"
}
