#!/usr/bin/env bats
# Findings of a conformance audit against the documented contract
# (metad-protocol(7), metad(8), metactl(1)), one test each, run on every
# backend unless tagged: what a black-box tester tries with the raw
# protocol and with metactl.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	testdir
	chmod 0755 "$TESTDIR"
}

# For the tests that run clients as another user (as access.bats).
need_other_uid() {
	[ "$(id -u)" -eq 0 ] || skip "root: needs root to run clients as another uid"
	command -v setpriv >/dev/null || skip "needs setpriv"
}

nobody_req() {
	printf '%s\n' "$1" | setpriv --reuid=65534 --regid=65534 --clear-groups \
	    socat -t 2 - "UNIX-CONNECT:$SOCK"
}

teardown() {
	metad_cleanup
}

# metad-protocol(7), REQUESTS AND RESPONSES: a request naming a field its op
# does not know answers bad_request naming the field, a txn's compares and ops
# included.
@test "a txn compare or op naming an unknown field answers bad_request naming it" {
	metad_start
	run req '{"op":"txn","then":[{"op":"put","key":"k","value":"v","bogus":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"bogus\" for a txn put"}}'
	run req '{"op":"txn","else":[{"op":"delete","key":"k","value":"v"}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"else[0]: unknown field \"value\" for a txn delete"}}'
	run req '{"op":"txn","then":[{"op":"get","key":"k","rev":1}]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"then[0]: unknown field \"rev\" for a txn get"}}'
	run req '{"op":"txn","if":[{"key":"k","version":0,"vresion":1}],"then":[]}'
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"if[0]: unknown field \"vresion\" for a compare"}}'
	# nothing was written
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":null,"rev":@0}')"
	# the known fields still work
	run req '{"op":"txn","if":[{"key":"k","version":0,"result":"="}],"then":[{"op":"put","key":"k","value":"v"},{"op":"get","key":"k"}],"else":[{"op":"delete","key":"k"}]}'
	assert_output --partial '"succeeded":true'
}

# metad(8), ACCESS (ro access): a txn that only reads is a read, as in etcd,
# where a read-only role may run a txn of ranges; one with a put or a delete
# in either branch is refused whatever its compares decide.
@test "a read-only connection may run a txn of gets only, not one that may write" {
	need_other_uid
	metad_start --socket-mode 0666 --read-only-uid nobody
	req '{"op":"put","key":"k","value":"v"}'
	run nobody_req '{"op":"txn","if":[{"key":"k","version":1}],"then":[{"op":"get","key":"k"}],"else":[{"op":"get","key":"x"}]}'
	assert_output "$(rv '{"ok":true,"succeeded":true,"results":[{"op":"get","kv":{"key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1}}],"rev":@1}')"
	run nobody_req '{"op":"txn","if":[{"key":"k","version":9}],"then":[{"op":"get","key":"k"}],"else":[{"op":"delete","key":"k"}]}'
	assert_output '{"ok":false,"error":{"code":"read_only","message":"op \"txn\" writes, and this connection is read-only (a txn of gets only may run)"}}'
	run nobody_req '{"op":"put","key":"k","value":"w"}'
	assert_output --partial '"code":"read_only"'
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"v","version":1,"create_rev":@1,"mod_rev":@1},"rev":@1}')"
}

# metad-protocol(7): an id is echoed as it was written, not through a
# double: an integer above 2^53 (a 64-bit counter) comes back unchanged; a
# fraction or an exponent is no integer: bad_request, without an id.
@test "a numeric id is echoed as sent, beyond 2^53 too; a fraction is bad_request" {
	metad_start
	run raw <<'LINES'
{"id":9007199254740993,"op":"ping"}
{"op":"ping","id":18446744073709551615}
{"id":0.1,"op":"ping"}
{"x":{"id":1},"id" : -15 ,"op":"ping"}
{"id":"9007199254740993","op":"ping"}
{"id":-1.5E+3,"op":"ping"}
LINES
	assert_line --index 0 --regexp '^\{"id":9007199254740993,"ok":true,"rev":[0-9]+\}$'
	assert_line --index 1 --regexp '^\{"id":18446744073709551615,"ok":true,"rev":[0-9]+\}$'
	assert_line --index 2 --regexp '^\{"ok":false,"error":\{"code":"bad_request","message":"field \\"id\\" must be a string or an integer'
	assert_line --index 3 --regexp '^\{"id":-15,"ok":false,"error":\{"code":"bad_request","message":"unknown field \\"x\\" for op \\"ping\\""\}\}$'
	assert_line --index 4 --regexp '^\{"id":"9007199254740993","ok":true,"rev":[0-9]+\}$'
	assert_line --index 5 --regexp '^\{"ok":false,"error":\{"code":"bad_request"'
}

# metad-protocol(7), KEYS, VALUES AND KV OBJECTS: a value is any bytes, and a
# request may send it as "value" (a JSON string, whose \u0000 is a NUL) or
# "value_b64".  A key holds no NUL byte: bad_request.  A value holding NUL is
# valid UTF-8 and comes back as "value" with \u0000 (metad-protocol(7)).
@test "a \\u0000 in a value is stored as a NUL byte; in a key it is bad_request" {
	metad_start
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
	metad_start
	run req "$(printf '{"op":"put","key":"k","value":"\300\200"}')"
	assert_output '{"ok":false,"error":{"code":"bad_request","message":"request is not valid UTF-8 (it holds the bytes C0 80)"}}'
}

# metad-protocol(7), LIMITS (value_too_large): with --max-value-bytes above
# what etcd takes in one request (its --max-request-bytes, 1.5 MiB by
# default), a put etcd refuses for its size is value_too_large, not internal.
# bats test_tags=store:etcd
@test "etcd: a value etcd refuses for its size is value_too_large, nothing written" {
	store_is etcd || skip "about etcd's request limit"
	metad_start --max-value-bytes 4194304
	head -c 2097152 /dev/zero | tr '\0' x >"$TESTDIR/2m"
	run mctl -o json put big --file "$TESTDIR/2m"
	assert_failure 5
	assert_line --index 0 --partial '{"ok":false,"error":{"code":"value_too_large","message":"etcd refused the write as too large'
	run mctl -o json get big
	assert_failure 1
	run mctl put small v
	assert_success
}

# metad-protocol(7), FENCES, as for the txn's compares and ops: the "fence"
# object of a put, delete or txn naming a field it does not know is
# bad_request naming it.
@test "a fence naming an unknown field answers bad_request naming it, nothing written" {
	metad_start
	run raw <<'LINES'
{"op":"epoch_bump","key":"ep"}
{"op":"put","key":"k","value":"v","fence":{"key":"ep","epoch":1,"epcoh":2}}
{"op":"delete","key":"k","fence":{"key":"ep","epoch":1,"x":null}}
{"op":"txn","fence":{"key":"ep","epoch":1,"extra":true},"then":[{"op":"put","key":"k","value":"v"}]}
{"op":"get","key":"k"}
{"op":"put","key":"k","value":"v","fence":{"key":"ep","epoch":1}}
LINES
	assert_line --index 1 '{"ok":false,"error":{"code":"bad_request","message":"unknown field \"epcoh\" for \"fence\""}}'
	assert_line --index 2 '{"ok":false,"error":{"code":"bad_request","message":"unknown field \"x\" for \"fence\""}}'
	assert_line --index 3 '{"ok":false,"error":{"code":"bad_request","message":"unknown field \"extra\" for \"fence\""}}'
	assert_line --index 4 "$(rv '{"ok":true,"kv":null,"rev":@1}')"
	assert_line --index 5 "$(rv '{"ok":true,"kv":{"key":"k","version":1,"create_rev":@2,"mod_rev":@2},"prev_version":0,"rev":@2}')"
}

# metad-protocol(7), FRAMING: a line ends with LF, a CR before it is
# ignored; so a request of exactly --max-request-bytes fits with CRLF too,
# and one byte more is request_too_large either way.
@test "a request of exactly --max-request-bytes fits whether it ends in LF or CRLF" {
	metad_start --max-request-bytes 1024
	local v line long
	v=$(head -c 991 /dev/zero | tr '\0' x)
	line="{\"op\":\"put\",\"key\":\"k\",\"value\":\"$v\"}"
	long="{\"op\":\"put\",\"key\":\"k\",\"value\":\"x$v\"}"
	[ "${#line}" -eq 1024 ] && [ "${#long}" -eq 1025 ]
	run raw < <(printf '%s\n%s\r\n%s\r\n{"op":"ping"}\n' "$line" "$line" "$long")
	assert_line --index 0 --partial '"ok":true,"kv":{"key":"k","version":1'
	assert_line --index 1 --partial '"ok":true,"kv":{"key":"k","version":2'
	assert_line --index 2 --partial '"code":"request_too_large"'
	assert_line --index 3 "$(rv '{"ok":true,"rev":@2}')"
}

# metad-protocol(7), Pipelining and ordering: one response per request, in
# request order, request_too_large included: it waits for the answers owed to
# the writes before it, whether the line's end was seen or not (an
# unterminated line past the limit).
@test "request_too_large is answered in request order, after earlier pipelined writes" {
	metad_start --max-request-bytes 1024
	local v
	v=$(head -c 2000 /dev/zero | tr '\0' x)
	run raw < <(printf '{"id":1,"op":"put","key":"k","value":"a"}\n{"id":2,"op":"put","key":"k","value":"%s"}\n{"id":3,"op":"put","key":"k","value":"b"}\n{"id":4,"op":"put","key":"k","value":"%s%s' "$v" "$v" "$v")
	assert_line --index 0 --partial '{"id":1,"ok":true'
	assert_line --index 1 --partial '{"ok":false,"error":{"code":"request_too_large"'
	assert_line --index 2 --partial '{"id":3,"ok":true'
	assert_line --index 3 --partial '{"ok":false,"error":{"code":"request_too_large"'
	assert_equal "${#lines[@]}" 4
}

# metad-protocol(7), KEYS, VALUES AND KV OBJECTS: "A value that is valid UTF-8
# is sent as "value"; any other as "value_b64"."  Bytes holding NUL are valid
# UTF-8 (U+0000): every answer and event carrying a value sends them as
# "value", the NUL as \u0000 and every other control character escaped as JSON
# requires; bytes that are not UTF-8 (\xff) still as value_b64.
@test "a value holding NUL is answered as \"value\" with \\u0000 in get, list, history, txn, wait and watch" {
	metad_start
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
	metad_start
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

# A dump holds such a value as "value" with \u0000, and load writes its
# bytes back exactly, a value of NULs 6 times its size escaped included
# (load and put send it as value_b64 then, within the request limit).
@test "dump and load round-trip values holding NUL and control characters exactly" {
	metad_start
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
