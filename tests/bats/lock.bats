#!/usr/bin/env bats
# metactl lock NAME -- COMMAND (metactl(1), lock): mutual exclusion, FIFO,
# epochs, the fence in COMMAND's environment, a dead holder, a lost lock.

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
}

teardown() {
	stop_bg "${A:-}" "${B:-}" "${BG:-}"
	leases_clear
	metad_cleanup
}

# waiters NAME N: N waiter keys (the holder's included) under NAME.
waiters() {
	[ "$("$METACTL" ls "$1/.lock/" | grep -c .)" -eq "$2" ]
}

epoch_is() {
	[ "$("$METACTL" epoch get "$1" | cut -d' ' -f2)" = "$2" ]
}

@test "lock runs COMMAND with the fence, passes its status through" {
	run mctl lock job -- sh -c 'echo "$METAD_FENCE $METAD_LOCK_EPOCH $METAD_LOCK_KEY"; "$0" put --fence "$METAD_FENCE" out done' "$METACTL"
	assert_success
	assert_line --index 0 "job:1 1 job"
	run mctl get out
	assert_output done
	run mctl lock job --owner me -- sh -c 'exit 7'
	assert_failure 7
	run mctl epoch get job
	assert_output "epoch 2 owner me"
	# COMMAND's own 2 is no usage error of metactl's.
	run mctl lock job -- sh -c 'exit 2'
	assert_failure 2
	refute_output --partial usage
	# A stale fence is refused.
	run mctl put --fence job:1 out late
	assert_failure 3
	run -127 mctl lock job -- /nonexistent/command
	assert_failure 127
	# The waiter keys are gone with the holders.
	run mctl ls job/.lock/
	assert_output ''
	run mctl lease ls
	assert_output ''
}

@test "4 concurrent holders never overlap, each with a greater epoch" {
	cat >"$TESTDIR/crit" <<-'EOF'
	#!/bin/sh
	# Inside the lock: nobody else may be here.
	mkdir "$1/busy" 2>/dev/null || echo OVERLAP >>"$1/log"
	echo "$2 $METAD_LOCK_EPOCH" >>"$1/log"
	sleep 0.05
	rmdir "$1/busy"
	EOF
	chmod +x "$TESTDIR/crit"
	pids=()
	for w in 1 2 3 4; do
		(
			for i in 1 2 3 4 5; do
				"$METACTL" lock --wait 60s crit -- "$TESTDIR/crit" \
				    "$TESTDIR" "$w.$i" || echo "FAILED $w.$i $?" >>"$TESTDIR/log"
			done
		) 3>&- &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait_bg "$p" 90
	done
	run grep -c . "$TESTDIR/log"
	assert_output 20
	run grep -E 'OVERLAP|FAILED' "$TESTDIR/log"
	assert_failure
	# Epochs 1..20, each holder's greater than every earlier one's.
	run awk '{ print $2 }' "$TESTDIR/log"
	assert_output "$(seq 1 20)"
}

@test "waiters are served in the order they asked" {
	mctl lock fifo -- sh -c 'sleep 1' 3>&- &
	A=$!
	wait_for epoch_is fifo 1
	for w in 1 2 3; do
		"$METACTL" lock fifo -- sh -c "echo $w >>'$TESTDIR/order'" 3>&- &
		eval "W$w=\$!"
		# The next one asks only once this one waits.
		wait_for waiters fifo $((w + 1))
	done
	wait_bg "$A" 20
	wait_bg "$W1" 20
	wait_bg "$W2" 20
	wait_bg "$W3" 20
	run cat "$TESTDIR/order"
	assert_output "$(printf '1\n2\n3')"
}

# bats test_tags=no-valgrind
@test "a killed holder frees the lock at once" {
	"$METACTL" lock held -- sh -c "echo \$\$ >'$TESTDIR/child'; trap 'echo TERM >>\"$TESTDIR/child.term\"; exit 0' TERM; while :; do sleep 0.05; done" 3>&- &
	A=$!
	wait_for epoch_is held 1
	wait_for test -s "$TESTDIR/child"
	"$METACTL" lock held --wait 30s -- sh -c "echo got \$METAD_LOCK_EPOCH >'$TESTDIR/b'" 3>&- &
	B=$!
	wait_for waiters held 2
	t0=$EPOCHREALTIME
	kill -KILL "$A"
	wait_bg "$B" 10
	assert_equal "$STATUS" 0
	elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "the waiter held the lock $elapsed ms after kill -9 of the holder" >&3
	[ "$elapsed" -lt 2000 ]
	run cat "$TESTDIR/b"
	assert_output "got 2"
	# COMMAND of the dead holder was told (SIGTERM).
	wait_for test -s "$TESTDIR/child.term"
}

@test "a lost lock: COMMAND gets SIGTERM, metactl exits 1" {
	"$METACTL" lock lost -- sh -c "trap 'echo TERM >\"$TESTDIR/term\"; exit 0' TERM; while :; do sleep 0.05; done" 2>"$TESTDIR/err" 3>&- &
	A=$!
	wait_for epoch_is lost 1
	L=$("$METACTL" lease ls | cut -d' ' -f1)
	mctl lease revoke "$L"
	wait_bg "$A" 10
	assert_equal "$STATUS" 1
	run cat "$TESTDIR/term"
	assert_output TERM
	run cat "$TESTDIR/err"
	assert_output --partial "lock lost lost"
	assert_output --partial "SIGTERM"
}

@test "a COMMAND that ignores SIGTERM gets SIGKILL after the grace period" {
	"$METACTL" lock stubborn -- sh -c "trap '' TERM; echo \$\$ >'$TESTDIR/pid'; while :; do sleep 0.05; done" 2>/dev/null 3>&- &
	A=$!
	wait_for epoch_is stubborn 1
	wait_for test -s "$TESTDIR/pid"
	t0=$SECONDS
	mctl lease revoke "$("$METACTL" lease ls | cut -d' ' -f1)"
	wait_bg "$A" 20
	assert_equal "$STATUS" 1
	[ $((SECONDS - t0)) -ge 9 ]
	pid_gone "$(cat "$TESTDIR/pid")"
}

@test "--wait gives up and exits 1; bad options are usage errors" {
	mctl lock busy -- sh -c 'sleep 30' 3>&- &
	A=$!
	wait_for epoch_is busy 1
	run mctl lock busy --wait 300ms -- true
	assert_failure 1
	assert_output --partial "not acquired within --wait"
	# The waiter left no key behind.
	run mctl ls busy/.lock/
	assert_equal "${#lines[@]}" 1
	run mctl lock busy --ttl 100ms -- true
	assert_failure 2
	run mctl lock busy
	assert_failure 2
	run mctl lock --wait soon busy -- true
	assert_failure 2
}

@test "the holder keeps its lease alive longer than the TTL" {
	run mctl lock slow --ttl 1s -- sh -c 'sleep 2.5; echo "$METAD_LOCK_EPOCH"'
	assert_success
	assert_output 1
	run mctl epoch get slow
	assert_output --partial "epoch 1 owner $(hostname):"
}

@test "SIGINT, SIGTERM: sent on to COMMAND, the lock kept until it ends, then exit 130, 143" {
	for sig in INT TERM; do
		trap_script
		# A background job of a script ignores SIGINT: not this one.
		env --default-signal=INT "$METACTL" lock sig --ttl 1s -- sh "$TESTDIR/trap.sh" "$sig" 3>&- &
		A=$!
		wait_for test -s "$TESTDIR/cmd"
		kill -"$sig" "$A"
		wait_for test -s "$TESTDIR/got"
		run cat "$TESTDIR/got"
		assert_output "got $sig"
		# COMMAND still handles it: metactl waits, the lock is held.
		kill -0 "$A"
		waiters sig 1
		lease_kept_alive "$("$METACTL" lease ls | cut -d' ' -f1)"
		touch "$TESTDIR/go"
		wait_bg "$A" 10
		A=
		if [ "$sig" = INT ]; then
			assert_equal "$STATUS" 130
		else
			assert_equal "$STATUS" 143
		fi
		run mctl ls sig/.lock/
		assert_output ''
	done
}

@test "COMMAND starts with nothing blocked and what was ignored at start ignored" {
	# metactl starts with SIGUSR1 ignored and SIGUSR2 blocked.
	start() {
		env --ignore-signal=USR1 perl -MPOSIX -e 'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGUSR2)) or die; exec @ARGV or die' -- "$@"
	}
	want=$(start grep '^SigIgn' /proc/self/status)
	[[ $want = *[1-9a-f]* ]]
	run start "$METACTL" lock mask -- grep -E '^Sig(Blk|Ign)' /proc/self/status
	assert_success
	assert_line --regexp '^SigBlk:[[:space:]]+0+$'
	assert_line "$want"
}

@test "a waiter on a terminal names the holder; so does --wait's error" {
	mctl lock busy --owner bob -- sh -c 'sleep 30' 3>&- &
	A=$!
	wait_for epoch_is busy 1
	run -1 script -qec "'$METACTL' lock busy --wait 300ms -- true" /dev/null
	output=${output//$'\r'/}
	mapfile -t lines <<<"$output"
	assert_line --index 0 "metactl: waiting for busy (held by bob, epoch 1)"
	assert_line --index 1 "metactl: lock busy: not acquired within --wait 300ms; waiting for busy (held by bob, epoch 1)"
	# Not on a terminal: the error alone.
	run -1 --separate-stderr mctl lock busy --wait 300ms -- true
	assert_equal "$stderr" "metactl: lock busy: not acquired within --wait 300ms; waiting for busy (held by bob, epoch 1)"
}
