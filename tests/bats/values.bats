#!/usr/bin/env bats
# Keys and values are bytes (metad-protocol(7), KEYS AND VALUES): NUL,
# control bytes, invalid UTF-8 and binary values round-trip, over the raw
# socket and through metactl, and what may not be in a key is refused.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	metad_start
}

teardown() {
	fake_peer_stop
	metad_cleanup
}

# metad-protocol(7), KEYS, VALUES AND KV OBJECTS: a value is any bytes, and a
# request may send it as "value" (a JSON string, whose \u0000 is a NUL) or
# "value_b64".  A key holds no NUL byte: bad_request.  A value holding NUL is
# valid UTF-8 and comes back as "value" with \u0000 (metad-protocol(7)).
@test "a \\u0000 in a value is stored as a NUL byte; in a key it is bad_request" {
	run raw <<'LINES'
{"op":"put","key":"v","value":"a\u0000b"}
{"op":"get","key":"v"}
{"op":"txn","if":[{"key":"v","value":"a\u0000b"}],"then":[{"op":"put","key":"w","value":"\u0000"}]}
{"op":"get","key":"w"}
{"op":"put","key":"x","value":"a\\u0000b"}
{"op":"get","key":"x"}
{"op":"put","key":"k\u0000","value":"v"}
{"op":"list","prefix":"\u0000"}
LINES
	assert_line --index 0 "$(rv '{"ok":true,"kv":{"key":"v","version":1,"create_rev":@1,"mod_rev":@1},"prev_version":0,"rev":@1}')"
	assert_line --index 1 "$(rv '{"ok":true,"kv":{"key":"v","value":"a\u0000b","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
	assert_line --index 2 --partial '"succeeded":true'
	assert_line --index 3 "$(rv '{"ok":true,"kv":{"key":"w","value":"\u0000","version":1,"create_rev":@2,"mod_rev":@2},"rev":@2}')"
	assert_line --index 5 "$(rv '{"ok":true,"kv":{"key":"x","value":"a\\u0000b","version":1,"create_rev":@3,"mod_rev":@3},"rev":@3}')"
	assert_line --index 6 '{"ok":false,"error":{"code":"bad_request","message":"field \"key\" may not hold a NUL (\\u0000); only a value may"}}'
	assert_line --index 7 --partial '"code":"bad_request"'
	[ "$(mctl get --raw v | od -An -c | tr -d ' \n')" = 'a\0b' ]
}

# The bytes C0 80 (an overlong NUL, invalid UTF-8) are refused wherever
# they are, raw.
@test "a request holding the raw bytes C0 80 is bad_request" {
	run req "$(printf '{"op":"put","key":"k","value":"\300\200"}')"
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"request is not valid UTF-8 (it holds the bytes C0 80)"}}'
}

# metad-protocol(7), KEYS, VALUES AND KV OBJECTS: "A value that is valid UTF-8
# is sent as "value"; any other as "value_b64"."  Bytes holding NUL are valid
# UTF-8 (U+0000): every answer and event carrying a value sends them as
# "value", the NUL as \u0000 and every other control character escaped as JSON
# requires; bytes that are not UTF-8 (\xff) still as value_b64.
@test "a value holding NUL is answered as \"value\" with \\u0000 in get, list, history, txn, wait and watch" {
	run raw <<'LINES'
{"op":"put","key":"v","value_b64":"YQBi"}
{"op":"put","key":"x","value_b64":"/w=="}
{"op":"put","key":"c","value_b64":"AAEfCiJc"}
{"op":"get","key":"v"}
{"op":"list","prefix":""}
{"op":"history","key":"v"}
{"op":"txn","then":[{"op":"get","key":"v"}]}
{"op":"wait","key":"v"}
{"op":"get","key":"c"}
LINES
	local kv_v kv_x kv_c
	kv_v=$(rv '{"key":"v","value":"a\u0000b","version":1,"create_rev":@1,"mod_rev":@1}')
	kv_x=$(rv '{"key":"x","value_b64":"/w==","version":1,"create_rev":@2,"mod_rev":@2}')
	kv_c=$(rv '{"key":"c","value":"\u0000\u0001\u001f\n\"\\","version":1,"create_rev":@3,"mod_rev":@3}')
	assert_line --index 3 "$(rv '{"ok":true,"kv":'"$kv_v"',"rev":@3}')"
	assert_line --index 4 "$(rv '{"ok":true,"kvs":['"$kv_c,$kv_v,$kv_x"'],"more":false,"rev":@3}')"
	assert_line --index 5 "$(rv '{"ok":true,"events":[{"event":"put",'"${kv_v#\{}"'],"more":false,"rev":@3}')"
	assert_line --index 6 "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"get","kv":'"$kv_v"'}],"rev":@3}')"
	assert_line --index 7 "$(rv '{"ok":true,"kv":'"$kv_v"',"rev":@3}')"
	assert_line --index 8 "$(rv '{"ok":true,"kv":'"$kv_c"',"rev":@3}')"
	assert_equal "${#lines[@]}" 9
	# a watch from history (watch_lines waits for its lines)
	watch_lines 2 "$(rv '{"op":"watch","key":"v","from_rev":@1}')" >"$TESTDIR/hist"
	run sed -n '2s/"watch":[0-9]*,//p' "$TESTDIR/hist"
	assert_output "$(rv '{"event":"put",'"${kv_v#\{}")"
	# a live event too
	local pid
	raw_held live '{"op":"watch","key":"v"}' >"$TESTDIR/live" &
	pid=$!
	wait_for grep -q '"ok":true' "$TESTDIR/live"
	req '{"op":"put","key":"v","value_b64":"AGIA"}' >/dev/null
	wait_for has_lines 2 "$TESTDIR/live"
	release live
	wait "$pid"
	run sed -n '2s/"watch":[0-9]*,//p' "$TESTDIR/live"
	assert_output "$(rv '{"event":"put","key":"v","value":"\u0000b\u0000","version":2,"create_rev":@1,"mod_rev":@4}')"
}

# The same values through metactl: text output is the value's bytes (as
# etcdctl get prints values), the NUL included; -o json is the daemon's
# "value" with \u0000; watch and txn print it as a JSON string token, which
# txn reads back; history as b64: (not one line of text).
@test "metactl: a value holding NUL is its bytes in text, \"value\" with \\u0000 in -o json" {
	printf 'a\0b' | mctl put v - >/dev/null
	printf '\377' | mctl put x - >/dev/null
	[ "$(mctl get --raw v | od -An -tx1 | tr -d ' \n')" = 610062 ]
	[ "$(mctl get v | od -An -tx1 | tr -d ' \n')" = 6100620a ]
	[ "$(mctl wait v | od -An -tx1 | tr -d ' \n')" = 6100620a ]
	run -0 mctl -o json get v
	assert_output "$(rv '{"ok":true,"kv":{"key":"v","value":"a\u0000b","version":1,"create_rev":@1,"mod_rev":@1},"rev":@2}')"
	run -0 mctl -o json get x
	assert_output "$(rv '{"ok":true,"kv":{"key":"x","value_b64":"/w==","version":1,"create_rev":@2,"mod_rev":@2},"rev":@2}')"
	run -0 mctl watch v --from-rev "$(rv @1)" --count 1
	assert_output "$(rv 'PUT v v1 rev @1 "a\u0000b"')"
	run -0 mctl -o json watch v --from-rev "$(rv @1)" --count 1
	assert_output "$(rv '{"event":"put","key":"v","value":"a\u0000b","version":1,"create_rev":@1,"mod_rev":@1}')"
	run -0 mctl history v
	assert_output "$(rv '@1  put  1  b64:YQBi')"
	run -0 mctl -o json history v
	assert_output --partial '"value":"a\u0000b"'
	run -0 mctl txn <<<$'\nget v\nget x'
	assert_output $'SUCCEEDED\nget v "a\\u0000b"\nget x b64:/w=='
	run -0 mctl -o json txn <<<$'value("v") = "a\\u0000b"\n\nput w "\\u0000"\nget w'
	assert_output --partial '{"op":"get","kv":{"key":"w","value":"\u0000",'
	[ "$(mctl get --raw w | od -An -tx1 | tr -d ' \n')" = 00 ]
	run mctl txn <<<$'\nput "k\\u0000" v'
	assert_failure 5
	assert_output --partial 'a key may not hold \u0000'
}

@test "put is binary-safe: 100000 random bytes through stdin and --file" {
	head -c 100000 /dev/urandom >"$TESTDIR/f"
	run -0 mctl put k - <"$TESTDIR/f"
	assert_output 1
	mctl get --raw k | cmp - "$TESTDIR/f"
	# Without --raw: the same bytes and a newline.
	mctl get k | cmp - <(cat "$TESTDIR/f"; echo)
	run -0 mctl put k2 --file "$TESTDIR/f"
	mctl get --raw k2 | cmp - "$TESTDIR/f"
}

@test "values with NUL bytes, newlines, control bytes and invalid UTF-8 round-trip" {
	local n f	# not "i": bats' run clobbers it
	printf 'a\0b\0'		>"$TESTDIR/v0"
	printf '\n'		>"$TESTDIR/v1"
	printf 'l1\nl2\n\n'	>"$TESTDIR/v2"
	printf '\xff\xfeok'	>"$TESTDIR/v3"
	printf '\xc3'		>"$TESTDIR/v4"
	printf '\x01\x1f"\\\t\r\x7f'	>"$TESTDIR/v5"
	printf 'h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'	>"$TESTDIR/v6"
	printf '\0'		>"$TESTDIR/v7"
	for n in 0 1 2 3 4 5 6 7; do
		f="$TESTDIR/v$n"
		run -0 mctl put "k$n" - <"$f"
		mctl get --raw "k$n" | cmp - "$f"
	done
	# A value with newlines given as an argument.
	mctl put nl "$(printf 'x\ny')" >/dev/null
	mctl get --raw nl | cmp - <(printf 'x\ny')
	# The daemon sends bytes that are not UTF-8 as base64; NUL bytes are
	# UTF-8, sent as \u0000 (metad-protocol(7), KEYS, VALUES AND KV
	# OBJECTS).
	run -0 mctl -o json get k3
	assert_output --partial '"value_b64":"//5vaw=="'
	run -0 mctl -o json get k0
	assert_output --partial '"value":"a\u0000b\u0000"'
	run -0 mctl -o json get k6
	assert_output --partial '"value":"hé € 😀"'
}

@test "the empty value: stored, printed as an empty line, --raw as nothing" {
	run -0 mctl put k ''
	assert_output 1
	mctl get k | cmp - <(echo)
	mctl get --raw k >"$TESTDIR/out"
	[ ! -s "$TESTDIR/out" ]
	run -0 mctl -o json get k
	assert_output --partial '"value":"","version":1'
	run -0 mctl put k - </dev/null
	assert_output 2
	run -0 mctl get k
	assert_output ''
}

@test "a value of control bytes at the daemon's limit fits its request limit" {
	# JSON escaping would take 6 bytes per byte; metactl must send base64.
	head -c 1048576 /dev/zero | tr '\0' '\001' >"$TESTDIR/f"
	run -0 mctl put k - <"$TESTDIR/f"
	mctl get --raw k | cmp - "$TESTDIR/f"
	head -c 1048576 /dev/zero | tr '\0' '"' >"$TESTDIR/q"
	run -0 mctl put q - <"$TESTDIR/q"
	mctl get --raw q | cmp - "$TESTDIR/q"
}

@test "keys with spaces, quotes, backslashes, dashes and non-ASCII" {
	local k
	for k in 'a b' 'q"uote' 'back\slash' '-dash' 'é/ü' '日本'; do
		run -0 mctl put -- "$k" "of $k"
		run -0 mctl get -- "$k"
		assert_equal "$output" "of $k"
	done
	run -0 mctl ls é
	assert_output 'é/ü'
	run -0 mctl -o json ls 'q"'
	assert_output "$(rv '{"ok":true,"kvs":[{"key":"q\"uote","version":1,"create_rev":@2,"mod_rev":@2}],"more":false,"rev":@6}')"
	# -l pads by characters, not bytes.
	run -0 mctl ls -l é
	assert_output "$(rv 'é/ü  1  @5')"
	run -0 mctl del -- -dash
	assert_output 1
}
