#!/usr/bin/env bats
# metactl's failures under -o json (one error object on stdout, the
# documented exit status), the checks it makes before sending (a value over
# metad's --max-value-bytes, a lease TTL out of bounds) and the hints of
# its connect errors (metactl(1) EXIT STATUS).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
}

teardown() {
	[ -z "${METAD_PID:-}" ] || kill -CONT "$METAD_PID" 2>/dev/null || true
	metad_cleanup
}

# json_fails STATUS CODE ARGS...: metactl ARGS exits STATUS, prints exactly
# one line on stdout, an error object with CODE, and its message on stderr.
json_fails() {
	local want=$1 code=$2
	shift 2
	run --separate-stderr "$METACTL" "$@"
	[ "$status" -eq "$want" ] ||
	    fail "metactl $*: exit $status, expected $want (stderr: $stderr)"
	[ "${#lines[@]}" -eq 1 ] ||
	    fail "metactl $*: ${#lines[@]} lines on stdout: $output"
	jq -e --arg c "$code" '.ok == false and .error.code == $c and
	    (.error.message | type == "string" and length > 0) and
	    (keys == ["error", "ok"])' <<<"$output" >/dev/null ||
	    fail "metactl $*: not a $code error object: $output"
	[[ $stderr == *metactl:* ]] || fail "metactl $*: no message on stderr"
}

@test "-o json: a usage error is one usage object and exit 2, wherever -o json is" {
	json_fails 2 usage -o json bogus
	json_fails 2 usage bogus -o json
	json_fails 2 usage --bogus -o json get k
	json_fails 2 usage get --bogus -o json
	json_fails 2 usage get -o json
	json_fails 2 usage -o json get
	json_fails 2 usage -ojson get k --timeout 5x
	json_fails 2 usage --output=json get --raw k a b
	json_fails 2 usage get k --output json --rev x
	json_fails 2 usage -o json
	# in text mode nothing goes to stdout
	run -2 --separate-stderr "$METACTL" get --bogus
	assert_output ''
	# a usage error in a script of the REPL, under its -o json
	run -2 --separate-stderr "$METACTL" -o json repl <<<'get'
	assert_output '{"ok":false,"error":{"code":"usage","message":"line 1: get: missing arguments"}}'
	run -2 --separate-stderr "$METACTL" -o json repl <<<'get "k'
	assert_output --regexp '^\{"ok":false,"error":\{"code":"usage","message":"line 1: [^"]*quote'
}

@test "-o json: no socket is one unreachable object and exit 4" {
	json_fails 4 unreachable -o json -s "$TESTDIR/none.sock" get k
	json_fails 4 unreachable put k v -o json -s "$TESTDIR/none.sock"
	metad_stop
	json_fails 4 unreachable -o json ping
}

@test "-o json: no answer within --timeout is one unreachable object and exit 4" {
	kill -STOP "$METAD_PID"
	json_fails 4 unreachable -o json --timeout 300ms get k
	assert_regex "$stderr" 'within 300ms \(--timeout\)'
	json_fails 4 unreachable put k v -o json --timeout 200ms
	kill -CONT "$METAD_PID"
	run -0 mctl ping
}

@test "-o json: a bad load file or txn is one input object, exit 5; a daemon error is its own" {
	json_fails 5 input -o json load "$TESTDIR/no-such-dump"
	printf 'not a dump\n' >"$TESTDIR/bad"
	json_fails 5 input -o json load "$TESTDIR/bad"
	assert_regex "$stderr" 'line 1: not a dump header'
	printf '{"dump":1}\n{"key":"a","value":"1"}\n{"nokey":1}\n' \
	    >"$TESTDIR/bad2"
	json_fails 5 input load "$TESTDIR/bad2" -o json
	: >"$TESTDIR/empty"
	json_fails 5 input -o json load "$TESTDIR/empty"
	json_fails 5 input -o json txn <<<'{"if":'
	json_fails 5 input -o json txn <<<'put k v'
	json_fails 5 input -o json txn <<<'{"op":"put","key":"k","value":"v"}'
	json_fails 5 input -o json put k --file "$TESTDIR/no-such-file"
	# none of it was written
	run -0 mctl -o json ls
	assert_output --partial '"kvs":[]'

	# a daemon's error is its own object, with its exit status
	mctl put k v >/dev/null
	json_fails 3 failed_precondition -o json put k v2 --if-version 5
	json_fails 5 bad_request -o json txn <<<'{"then":[{"op":"frob","key":"k"}]}'
	# a load whose txn metad refuses: metad's error alone on stdout
	printf '{"dump":1}\n{"key":"a","value":"12"}\n' >"$TESTDIR/d"
	metad_stop
	metad_start --max-value-bytes 1
	json_fails 5 value_too_large -o json load "$TESTDIR/d"
	assert_regex "$stderr" 'load stopped'
}

# A value over the limit, given as text, on stdin or in a file, is refused
# by metactl before sending (metad would answer request_too_large for one
# over --max-request-bytes).
@test "a value over --max-value-bytes is value_too_large however it is given" {
	metad_stop
	metad_start --max-value-bytes 100 --max-request-bytes 1024
	local n
	for n in 101 2000; do
		head -c "$n" /dev/zero | tr '\0' x >"$TESTDIR/v"
		run -5 --separate-stderr mctl put k "$(cat "$TESTDIR/v")"
		assert_equal "$stderr" "metactl: value_too_large: value is $n bytes, the limit is 100 (--max-value-bytes)"
		run -5 --separate-stderr mctl put k - <"$TESTDIR/v"
		assert_equal "$stderr" "metactl: value_too_large: value is $n bytes, the limit is 100 (--max-value-bytes)"
		json_fails 5 value_too_large -o json put k --file "$TESTDIR/v"
		assert_regex "$output" '--max-value-bytes'
		json_fails 5 value_too_large -o json cas k 0 - <"$TESTDIR/v"
	done
	# binary, on stdin: its bytes count, not its base64
	head -c 101 /dev/urandom >"$TESTDIR/bin"
	run -5 --separate-stderr mctl put k - <"$TESTDIR/bin"
	assert_regex "$stderr" 'value is 101 bytes'
	# at the limit it is written; nothing over it was
	head -c 100 /dev/zero | tr '\0' x >"$TESTDIR/v"
	run -0 mctl put k --file "$TESTDIR/v"
	assert_output 1
	run -0 mctl put k - <"$TESTDIR/v"
	assert_output 2
}

@test "a lease TTL outside 1s..1h is a usage error naming the range" {
	local t
	for t in 500ms 0 999ms 61m 2h; do
		run -2 --separate-stderr mctl lease grant "$t"
		assert_regex "$stderr" "invalid TTL: \"$t\" \(a lease's TTL is from 1s to 1h\)"
		run -2 --separate-stderr mctl lock name --ttl "$t" -- true
		assert_regex "$stderr" "invalid --ttl: \"$t\" \(a lease's TTL is from 1s to 1h\)"
	done
	json_fails 2 usage -o json lease grant 500ms
	run -0 mctl lease grant 1s
	run -0 mctl lease grant 1h
	run -0 mctl lock name --ttl 1s -- true
	# On etcd a lease left to expire moves the cluster's rev under a
	# later test that counts revisions.
	leases_clear
}

@test "the connect hint is true for what is at the path" {
	mkdir "$TESTDIR/dir"
	run -4 --separate-stderr mctl -s "$TESTDIR/dir" ping
	assert_equal "$stderr" "metactl: cannot connect to $TESTDIR/dir: it is a directory, not a socket (give the path of metad's socket, such as $TESTDIR/dir/metad.sock)"
	touch "$TESTDIR/file"
	run -4 --separate-stderr mctl -s "$TESTDIR/file" ping
	assert_regex "$stderr" "^metactl: cannot connect to $TESTDIR/file: it is a file, not a socket"
	refute_regex "$stderr" 'metad --socket'
	# metad refuses both paths, as the hints say
	run "$METAD" --socket "$TESTDIR/dir" --store memory
	assert_failure
	run "$METAD" --socket "$TESTDIR/file" --store memory
	assert_failure

	run -4 --separate-stderr mctl -s "$TESTDIR/no/such.sock" ping
	assert_regex "$stderr" "$TESTDIR/no does not exist: create it, then start metad with: metad --socket $TESTDIR/no/such.sock\)$"
	run -4 --separate-stderr mctl -s "$TESTDIR/free.sock" ping
	assert_regex "$stderr" "No such file or directory \(is metad running\? start it with: metad --socket $TESTDIR/free.sock\)$"
	# a stale socket: metad's, stopped by SIGKILL
	metad_stop KILL
	[ -S "$SOCK" ]
	run -4 --separate-stderr mctl ping
	assert_regex "$stderr" "nothing listens on this socket: is metad running\? start it with: metad --socket $SOCK, which replaces the stale socket\)$"
	# each suggestion works
	metad_start
	run -0 mctl ping
	mkdir "$TESTDIR/no"
	DB="$TESTDIR/meta2.db" metad_spawn P2 "$TESTDIR/no/such.sock" \
	    "$TESTDIR/metad2.log"
	run -0 mctl -s "$TESTDIR/no/such.sock" ping
	stop_bg "$P2"
}
