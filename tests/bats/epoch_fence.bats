#!/usr/bin/env bats
# Epochs and fences (metad-protocol(7), EPOCHS, FENCES): epoch_bump, and a
# fence on put, delete and txn, over the raw socket and through metactl
# epoch and --fence.

load helpers

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

# Send one request line on a connection of its own, in the background,
# writing the response to file $2; the pid is appended to BG_PIDS.
req_bg() {
	printf '%s\n' "$1" | socat -t 5 - "UNIX-CONNECT:$SOCK" > "$2" &
	BG_PIDS+=("$!")
}

bg_wait() {
	local p
	for p in "${BG_PIDS[@]}"; do
		wait "$p"
	done
	BG_PIDS=()
}

@test "epoch_bump: absent key gives epoch 1, again gives 2 with the owner" {
	run req '{"op":"epoch_get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":null,"rev":@0}')"
	run req '{"op":"epoch_bump","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":1,"owner":"","version":1,"mod_rev":@1},"rev":@1}')"
	run req '{"op":"epoch_bump","key":"lead","owner":"node-2"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":2,"owner":"node-2","version":2,"mod_rev":@2},"rev":@2}')"
	run req '{"op":"epoch_get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"epoch":{"key":"lead","epoch":2,"owner":"node-2","version":2,"mod_rev":@2},"rev":@2}')"
	# An ordinary key holding the exact JSON text.
	run req '{"op":"get","key":"lead"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"lead","value":"{\"epoch\":2,\"owner\":\"node-2\"}","version":2,"create_rev":@1,"mod_rev":@2},"rev":@2}')"
}

@test "epoch_bump: if_epoch bumps only from that epoch" {
	run req '{"op":"epoch_bump","key":"e","if_epoch":0,"owner":"a"}'
	assert_output --partial '"epoch":{"key":"e","epoch":1,"owner":"a"'
	run req '{"op":"epoch_bump","key":"e","if_epoch":0,"owner":"b"}'
	assert_output "$(rv '{"ok":false,"error":{"code":"failed_precondition","message":"epoch is 1, not 0","current":{"key":"e","epoch":1,"owner":"a","version":1,"mod_rev":@1}}}')"
	run req '{"op":"epoch_bump","key":"nope","if_epoch":3}'
	assert_output --partial '"code":"failed_precondition"'
	assert_output --partial '"current":null'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@1}')"
}

@test "epoch_bump: two racing claims with the same if_epoch, exactly one wins" {
	req '{"op":"epoch_bump","key":"e","owner":"first"}' >/dev/null
	BG_PIDS=()
	req_bg '{"op":"epoch_bump","key":"e","if_epoch":1,"owner":"x"}' "$TESTDIR/x"
	req_bg '{"op":"epoch_bump","key":"e","if_epoch":1,"owner":"y"}' "$TESTDIR/y"
	bg_wait
	run cat "$TESTDIR/x" "$TESTDIR/y"
	assert_equal "${#lines[@]}" 2
	run grep -c '"ok":true,"epoch":{"key":"e","epoch":2,' "$TESTDIR/x" "$TESTDIR/y"
	assert_output --regexp '(x:1.*y:0|x:0.*y:1)'
	run grep -h '"code":"failed_precondition"' "$TESTDIR/x" "$TESTDIR/y"
	assert_output --regexp "$(rv '"current":\{"key":"e","epoch":2,"owner":"(x|y)","version":2,"mod_rev":@2\}')"
	run req '{"op":"epoch_get","key":"e"}'
	assert_output --regexp '"epoch":2,"owner":"(x|y)"'
}

@test "epoch_bump: 20 concurrent bumps hand out epochs 1..20 once each" {
	local i
	BG_PIDS=()
	for i in $(seq 1 20); do
		req_bg "{\"op\":\"epoch_bump\",\"key\":\"e\",\"owner\":\"o$i\"}" "$TESTDIR/b$i"
	done
	bg_wait
	run sh -c "cat '$TESTDIR'/b* | grep -o '\"epoch\":[0-9]*,' | tr -dc '0-9\n' | sort -n | tr '\n' ' '"
	assert_output "$(seq 1 20 | tr '\n' ' ')"
	run req '{"op":"epoch_get","key":"e"}'
	assert_output --partial '"epoch":20,'
	assert_output --partial "$(rv '"version":20,"mod_rev":@20}')"
}

@test "epochs: a key that is not an epoch document is bad_request and stays" {
	req '{"op":"put","key":"plain","value":"hello"}' >/dev/null
	req '{"op":"put","key":"neg","value":"{\"epoch\":-1}"}' >/dev/null
	run req '{"op":"epoch_get","key":"plain"}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'does not hold an epoch document'
	run req '{"op":"epoch_bump","key":"plain"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"epoch_bump","key":"neg"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"get","key":"plain"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"plain","value":"hello","version":1,"create_rev":@1,"mod_rev":@1},"rev":@2}')"
}

@test "epoch_bump: argument checks" {
	run raw <<REQS
{"op":"epoch_bump"}
{"op":"epoch_bump","key":"e","owner":5}
{"op":"epoch_bump","key":"e","owner":"$(head -c 1025 /dev/zero | tr '\0' o)"}
{"op":"epoch_bump","key":"e","if_epoch":1.5}
{"op":"epoch_bump","key":"e","fence":{"key":"f","epoch":0}}
{"op":"epoch_get","key":""}
{"op":"epoch_bump","key":"e","owner":"$(head -c 1024 /dev/zero | tr '\0' o)","id":1}
REQS
	local i
	for i in 0 1 2 3 4 5; do
		assert_regex "${lines[$i]}" '"code":"bad_request"'
	done
	assert_regex "${lines[2]}" 'field \\"owner\\" is 1025 bytes, the limit is 1024'
	assert_regex "${lines[6]}" '^\{"id":1,"ok":true,"epoch":\{"key":"e","epoch":1,'
}

@test "fence on put and delete: the matching epoch writes, a stale one is fenced" {
	req '{"op":"epoch_bump","key":"lead","owner":"n1"}' >/dev/null
	req '{"op":"epoch_bump","key":"lead","owner":"n2"}' >/dev/null
	run req '{"op":"put","key":"k","value":"ok","fence":{"key":"lead","epoch":2}}'
	assert_output --partial '"ok":true,"kv":{"key":"k","version":1'
	run req '{"op":"put","key":"k","value":"late","fence":{"key":"lead","epoch":1}}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 2, the write carried 1","current":{"key":"lead","epoch":2,"owner":"n2"}}}'
	run req '{"op":"delete","key":"k","fence":{"key":"lead","epoch":1}}'
	assert_output --partial '"code":"fenced"'
	run req '{"op":"get","key":"k"}'
	assert_output "$(rv '{"ok":true,"kv":{"key":"k","value":"ok","version":1,"create_rev":@3,"mod_rev":@3},"rev":@3}')"
	run req '{"op":"delete","key":"k","fence":{"key":"lead","epoch":2}}'
	assert_output "$(rv '{"ok":true,"deleted":true,"rev":@4}')"
}

@test "fence on txn: checked before the compares, nothing written when stale" {
	req '{"op":"epoch_bump","key":"lead"}' >/dev/null
	req '{"op":"epoch_bump","key":"lead"}' >/dev/null
	run req '{"op":"txn","fence":{"key":"lead","epoch":1},"if":[{"key":"a","version":0}],"then":[{"op":"put","key":"a","value":"1"}],"else":[{"op":"put","key":"b","value":"1"}]}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 2, the write carried 1","current":{"key":"lead","epoch":2,"owner":""}}}'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@2}')"
	run req '{"op":"txn","fence":{"key":"lead","epoch":2},"if":[{"key":"a","version":0}],"then":[{"op":"put","key":"a","value":"1"}]}'
	assert_output --partial '"ok":true,"succeeded":true'
	assert_output --partial "$(rv '"rev":@3}')"
}

@test "fence: an absent fence key is epoch 0; a non-epoch one is bad_request" {
	run req '{"op":"put","key":"k","value":"v","fence":{"key":"nobody","epoch":0}}'
	assert_output --partial '"ok":true'
	run req '{"op":"put","key":"k","value":"w","fence":{"key":"nobody","epoch":1}}'
	assert_output '{"ok":false,"error":{"code":"fenced","message":"the epoch at the fence key is 0, the write carried 1","current":{"key":"nobody","epoch":0,"owner":""}}}'
	run req '{"op":"txn","fence":{"key":"k","epoch":0},"then":[{"op":"put","key":"x","value":"1"}]}'
	assert_output --partial '"code":"bad_request"'
	assert_output --partial 'the fence key does not hold an epoch document'
	run req '{"op":"ping"}'
	assert_output "$(rv '{"ok":true,"rev":@1}')"
}

@test "epoch get of a key with no epoch exits 1" {
	run "$METACTL" epoch get leader
	assert_failure 1
	assert_output --partial 'leader: no epoch'
	run "$METACTL" -o json epoch get leader
	assert_failure 1
	assert_line --index 0 "$(rv '{"ok":true,"epoch":null,"rev":@0}')"
}

@test "epoch bump prints the new epoch alone; epoch get shows it and the owner" {
	run "$METACTL" epoch bump leader --owner node-a
	assert_success
	assert_output 1
	e=$("$METACTL" epoch bump leader --owner node-b)
	assert_equal "$e" 2
	run "$METACTL" epoch get leader
	assert_success
	assert_output 'epoch 2 owner node-b'
	run "$METACTL" -o json epoch get leader
	assert_output "$(rv '{"ok":true,"epoch":{"key":"leader","epoch":2,"owner":"node-b","version":2,"mod_rev":@2},"rev":@2}')"
	mctl epoch bump leader >/dev/null
	run "$METACTL" epoch get leader
	assert_output 'epoch 3 owner ""'
}

@test "epoch bump --if-epoch: the winner bumps, the loser exits 3 with the current epoch" {
	mctl epoch bump leader --owner node-a >/dev/null
	run "$METACTL" epoch bump leader --owner node-b --if-epoch 1
	assert_success
	assert_output 2
	run "$METACTL" epoch bump leader --owner node-c --if-epoch 1
	assert_failure 3
	assert_output --partial 'failed_precondition'
	assert_output --partial 'current epoch 2'
	assert_output --partial 'owner node-b'
	run "$METACTL" epoch get leader
	assert_output 'epoch 2 owner node-b'
	run "$METACTL" epoch bump fresh --if-epoch 0
	assert_output 1
}

@test "epoch bump of a key that is not an epoch document exits 5" {
	mctl put plain hello
	run "$METACTL" epoch bump plain
	assert_failure 5
	assert_output --partial 'bad_request'
}

@test "--fence on put and del is refused with exit 3 after a bump" {
	e=$("$METACTL" epoch bump leader --owner a)
	run "$METACTL" put --fence "leader:$e" k v1
	assert_success
	assert_output 1
	mctl epoch bump leader --owner b >/dev/null
	run "$METACTL" put --fence "leader:$e" k v2
	assert_failure 3
	assert_output --partial 'fenced'
	run "$METACTL" del --fence "leader:$e" k
	assert_failure 3
	run "$METACTL" get k
	assert_output v1
	run "$METACTL" del --fence "leader:$((e + 1))" k
	assert_success
	assert_output 1
}

@test "txn --fence is refused with exit 3 after a bump, and applies before" {
	e=$("$METACTL" epoch bump leader --owner a)
	run "$METACTL" txn --fence "leader:$e" <<<'{"then":[{"op":"put","key":"k","value":"1"}]}'
	assert_success
	mctl epoch bump leader --owner b >/dev/null
	run "$METACTL" txn --fence "leader:$e" <<<'{"then":[{"op":"put","key":"k","value":"2"}]}'
	assert_failure 3
	assert_output --partial 'fenced'
	run "$METACTL" txn --fence "leader:$e" <<-'EOF'

	put k 3
	EOF
	assert_failure 3
	run "$METACTL" get k
	assert_output 1
	run "$METACTL" txn --fence "leader:$e" <<<'{"fence":{"key":"leader","epoch":1}}'
	assert_failure 2
}

# metad-protocol(7), FENCES, as for the txn's compares and ops: the "fence"
# object of a put, delete or txn naming a field it does not know is
# bad_request naming it.
@test "a fence naming an unknown field answers bad_request naming it, nothing written" {
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
