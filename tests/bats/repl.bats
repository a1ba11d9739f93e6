#!/usr/bin/env bats
# metactl repl (metactl(1), REPL): a script of commands on stdin, and the
# interactive shell on a terminal, driven through tmux (a private server per
# test).

load helpers
bats_require_minimum_version 1.5.0

setup() {
	metad_start
	export XDG_STATE_HOME="$TESTDIR/state"
	TM="$TESTDIR/tmux.sock"	# a private tmux server, gone with TESTDIR
	NSESSIONS=0
}

teardown() {
	tmux -S "$TM" kill-server 2>/dev/null || true
	[ -z "${BG:-}" ] || kill -KILL "$BG" 2>/dev/null || true
	metad_cleanup
}

tm() {
	tmux -S "$TM" -f /dev/null "$@"
}

# repl_start [ARGS...]: metactl ARGS in a new 100x30 terminal (session $S);
# when metactl exits the screen says "[exited STATUS]" (and a sleep keeps
# the terminal open, for the test to read it).
repl_start() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	NSESSIONS=$((NSESSIONS + 1))
	S="s$NSESSIONS"
	printf '#!/bin/sh\n"$@"\necho "[exited $?]"\nexec sleep 600\n' \
	    > "$TESTDIR/term.sh"
	tm new-session -d -s "$S" -x 100 -y 30 env METACTL_SOCKET="$SOCK" \
	    XDG_STATE_HOME="$XDG_STATE_HOME" INPUTRC=/dev/null \
	    sh "$TESTDIR/term.sh" "$METACTL" "$@"
	screen_wait 'metactl> '
}

keys() {
	tm send-keys -t "$S" "$@"
}

screen() {
	tm capture-pane -p -N -t "$S"	# -N: with trailing spaces
}

# screen_wait [-x] TEXT [N]: wait until TEXT is on the screen (with -x:
# is a whole line of it), or is there N times.
screen_wait() {
	local x=
	if [ "$1" = -x ]; then
		x=x
		shift
	fi
	wait_for on_screen "-${x}F" "$1" "${2:-1}" && return 0
	screen >&2
	return 1
}

# on_screen GREP-OPTIONS TEXT N: grep finds TEXT N times on the screen.
on_screen() {
	[ "$(screen | grep -c "$1" -- "$2")" -ge "$3" ]
}

# prompts_wait N: wait until the screen shows N prompts.
prompts_wait() {
	screen_wait 'metactl>' "$1"
}

@test "a script: put, get, a not-found that does not end it, ls; the status of the last failure" {
	run -1 --separate-stderr mctl repl <<-'EOF'
	put a 1
	get a
	get missing
	put b 2
	ls
	EOF
	assert_output $'1\n1\n1\na\nb'
	assert_equal "$stderr" 'metactl: line 3: missing: not found'
}

@test "a script splits words like sh: quotes, backslashes, comments, blank lines" {
	run -0 --separate-stderr mctl repl <<-'EOF'
	# a whole-line comment

	put 'two words' "say \"hi\" \\o/ \n"   # a comment
	get 'two words'
	put a\ b it\'s' 'a"#"b
	get "a b"
	put empty ''
	-o json get empty
	EOF
	local want
	want=$(cat <<-'EOF'
	1
	say "hi" \o/ \n
	1
	it's a#b
	1
	{"ok":true,"kv":{"key":"empty","value":"","version":1,"create_rev":@3,"mod_rev":@3},"rev":@3}
	EOF
	)
	assert_output "$(rv "$want")"
	assert_equal "$stderr" ''
}

@test "an unterminated quote fails its line only, named by number" {
	run -2 --separate-stderr mctl repl <<-'EOF'
	put k 'open
	put k v
	get k
	EOF
	assert_output $'1\nv'
	assert_equal "$stderr" 'metactl: line 1: unterminated single quote'
}

@test "the status is that of the last line that failed; 0 when none did" {
	run -1 --separate-stderr mctl repl <<-'EOF'
	bogus
	get missing
	ping -o json
	EOF
	assert_line --index 0 --partial '"ok":true'
	assert_equal "${stderr_lines[0]}" 'metactl: line 1: unknown command: bogus'
	run -2 mctl repl <<-'EOF'
	get missing
	get
	EOF
	run -0 mctl repl <<-'EOF'
	put k v
	get k
	EOF
}

@test "options on a line apply to that line alone" {
	run -4 --separate-stderr mctl -o json repl <<-'EOF'
	put k v
	-o text get k
	get k
	get k -o text
	--timeout 1s -s /nonexistent/sock ping -o text
	ls
	EOF
	assert_line --index 0 --partial '"ok":true'
	assert_line --index 1 'v'
	assert_line --index 2 --partial '"value":"v"'
	assert_line --index 3 'v'
	assert_line --index 4 --partial '"ok":true'
}

@test "quit and exit stop a script; what follows is not run" {
	run -0 mctl repl <<-'EOF'
	put k v
	quit
	put k w
	EOF
	assert_output '1'
	run -0 mctl repl <<< $'exit\nget missing'
	run -0 mctl get k
	assert_output 'v'
}

@test "in a script stdin is the script: put - and txn are refused, and go on" {
	run -2 --separate-stderr mctl repl <<-'EOF'
	put k -
	txn
	put k v
	EOF
	assert_output '1'
	assert_equal "${stderr_lines[0]}" \
	    "metactl: line 1: put: stdin is the REPL's script here, it cannot also hold the input"
	assert_equal "${stderr_lines[2]}" \
	    "metactl: line 2: txn: stdin is the REPL's script here, it cannot also hold the input"
}

@test "a line over 1 MiB is refused, the next one runs" {
	run -2 --separate-stderr mctl repl < <(
		printf 'put k '; head -c 1048577 /dev/zero | tr '\0' x; echo
		echo 'put k small')
	assert_output '1'
	assert_equal "$stderr" \
	    'metactl: line 1: the line is longer than 1048576 bytes'
}

@test "without a command and without a terminal, metactl is a usage error" {
	run -2 --separate-stderr mctl < /dev/null
	assert_equal "${stderr_lines[0]}" 'metactl: no command given'
	run -2 --separate-stderr mctl repl extra < /dev/null
	assert_equal "${stderr_lines[0]}" 'metactl: repl: too many arguments'
}

@test "the session reconnects after metad restarts" {
	mkfifo "$TESTDIR/in"
	"$METACTL" repl < "$TESTDIR/in" > "$TESTDIR/out" 2> "$TESTDIR/err" &
	BG=$!
	exec 5> "$TESTDIR/in"
	echo 'put a 1' >&5
	wait_for test -s "$TESTDIR/out"
	[ "$(status_field connections)" = 2 ]	# the session's and ours
	metad_stop
	metad_start 5>&-	# the fifo must close with our fd 5
	# A memory store does not outlive its daemon: put "a" back as it was.
	! store_is memory || mctl put a 1 >/dev/null
	printf 'get a\nput a 2\n' >&5
	exec 5>&-
	wait_bg "$BG"
	assert_equal "$STATUS" 0
	run cat "$TESTDIR/out"
	assert_output $'1\n1\n2'
	run cat "$TESTDIR/err"
	assert_output ''
}

@test "interactive (the default on a terminal): put, get, a not-found that goes on" {
	repl_start
	keys 'put k v1' Enter
	screen_wait -x '1'
	keys 'get missing' Enter
	screen_wait -x 'metactl: missing: not found'
	keys 'get k' Enter
	screen_wait -x 'v1'
	keys 'repl' Enter
	screen_wait -x 'metactl: repl: already in the REPL'
	keys 'help get' Enter
	screen_wait 'print a key'
	[ "$(status_field connections)" = 2 ]	# ours and status's
}

@test "Ctrl-C stops a watch and returns to the prompt; the session goes on" {
	repl_start repl
	keys 'watch k' Enter
	until_status watches 1
	mctl put k hello
	screen_wait -x "$(rv 'PUT k v1 rev @1 hello')"
	keys C-c
	prompts_wait 2
	until_status watches 0
	keys 'get k' Enter
	screen_wait -x 'hello'
	prompts_wait 3
}

@test "Ctrl-C clears a half-typed line and shows a fresh prompt" {
	repl_start
	keys 'put k half'
	screen_wait 'metactl> put k half'
	keys C-c
	prompts_wait 2
	keys 'get k' Enter
	screen_wait -x 'metactl: k: not found'
	run -1 mctl get k
}

@test "the history is kept across sessions in XDG_STATE_HOME" {
	repl_start
	keys 'put hist 1' Enter
	screen_wait -x '1'
	keys 'quit' Enter
	screen_wait '[exited 0]'
	run cat "$XDG_STATE_HOME/metactl/history"
	assert_output $'put hist 1\nquit'
	run stat -c %a "$XDG_STATE_HOME/metactl"
	assert_output '700'
	repl_start
	keys Up
	screen_wait 'metactl> quit'
	keys Up
	screen_wait 'metactl> put hist 1'
}

@test "Tab completes commands, options and keys (asking metad)" {
	mctl put config.main 42
	mctl put other 1
	repl_start
	keys 'sta' Tab
	screen_wait 'metactl> status '
	keys Enter
	screen_wait -x 'keys: 2'
	keys 'get conf' Tab
	screen_wait 'metactl> get config.main '
	keys Enter
	screen_wait -x '42'
	keys 'get --ra' Tab
	screen_wait 'metactl> get --raw '
	keys C-u 'get config.main --re' Tab
	screen_wait 'metactl> get config.main --rev '
	keys C-u 'hist' Tab
	screen_wait 'metactl> history '
	keys 'conf' Tab
	screen_wait 'metactl> history config.main '
	keys C-u 'ep' Tab 'b' Tab
	screen_wait 'metactl> epoch bump '
}

@test "Ctrl-D leaves with status 0" {
	repl_start
	keys 'get missing' Enter
	screen_wait -x 'metactl: missing: not found'
	keys C-d
	screen_wait '[exited 0]'
}

@test "txn typed at the prompt: a hint, a txn> prompt a line, Ctrl-D runs it" {
	repl_start
	keys 'txn' Enter
	screen_wait '(txn: compares, a blank line, then-ops, a blank line, else-ops; Ctrl-D on a new line runs it)'
	local n=1 line
	for line in 'version("k") = 0' '' 'put k v1' ''; do
		screen_wait 'txn> ' $n
		keys "$line" Enter
		n=$((n + 1))
	done
	screen_wait -x 'txn> ' 		# the fifth, on a line of its own
	keys C-d
	screen_wait -x 'SUCCEEDED'
	screen_wait -x 'put k v1'
	prompts_wait 2
	run -0 mctl get k
	assert_output 'v1'
	# Ctrl-C gives up a txn half typed; the session goes on.
	keys 'txn' Enter
	screen_wait 'txn> ' 6
	keys 'put k v2' Enter
	screen_wait 'txn> ' 7
	keys C-c
	prompts_wait 3
	keys 'get k' Enter
	screen_wait -x 'v1'
	prompts_wait 4
}

@test "a mistyped command at the prompt names the closest one; epoch alone lists its commands" {
	repl_start
	keys 'stauts' Enter
	screen_wait -x 'metactl: unknown command: stauts (did you mean status?)'
	keys 'epoch' Enter
	screen_wait -x 'metactl: epoch needs a subcommand: get or bump'
	screen_wait -x 'usage: metactl epoch get KEY'
	prompts_wait 3
}

# metactl_pid: the metactl of session $S (the child of its term.sh).
metactl_pid() {
	pgrep -P "$(tm display-message -p -t "$S" '#{pane_pid}')"
}

@test "lock: Ctrl-C reaches COMMAND, the lock is kept until it ends; the session goes on" {
	trap_script
	repl_start
	keys "lock sig --ttl 1s -- sh $TESTDIR/trap.sh INT" Enter
	wait_for test -s "$TESTDIR/cmd"
	keys C-c
	wait_for test -s "$TESTDIR/got"
	run cat "$TESTDIR/got"
	assert_output "got INT"
	# COMMAND still handles it: the lock is held, its lease kept alive.
	run mctl ls sig/.lock/
	assert_equal "${#lines[@]}" 1
	lease_kept_alive "$("$METACTL" lease ls | cut -d' ' -f1)"
	touch "$TESTDIR/go"
	prompts_wait 2
	run mctl ls sig/.lock/
	assert_output ''
	keys 'put k after' Enter
	screen_wait -x '1'
}

@test "lock: SIGTERM goes on to COMMAND; metactl exits 143 once the lock is released" {
	trap_script
	repl_start
	keys "lock sig -- sh $TESTDIR/trap.sh TERM" Enter
	wait_for test -s "$TESTDIR/cmd"
	kill -TERM "$(metactl_pid)"
	wait_for test -s "$TESTDIR/got"
	run cat "$TESTDIR/got"
	assert_output "got TERM"
	run mctl ls sig/.lock/
	assert_equal "${#lines[@]}" 1
	! on_screen -F '[exited' 1
	touch "$TESTDIR/go"
	screen_wait '[exited 143]'
	run mctl ls sig/.lock/
	assert_output ''
}

@test "lock: COMMAND starts with nothing blocked and only what was ignored at start ignored" {
	# metactl starts with SIGUSR1 ignored, SIGTTIN and SIGTTOU not.
	cat >"$TESTDIR/mc" <<-EOF_MC
	#!/bin/sh
	exec env --ignore-signal=USR1 --default-signal=TTIN,TTOU sh -c 'grep "^SigIgn" /proc/self/status >"\$0"; exec "\$@"' "$TESTDIR/start.sig" "$METACTL" "\$@"
	EOF_MC
	chmod +x "$TESTDIR/mc"
	METACTL="$TESTDIR/mc" repl_start
	# exec: sh would give a child of its own a mask of its own.
	keys "lock mask -- sh -c 'exec grep -E \"^Sig(Blk|Ign)\" /proc/self/status >$TESTDIR/cmd.sig'" Enter
	prompts_wait 2
	run cat "$TESTDIR/cmd.sig"
	assert_line --regexp '^SigBlk:[[:space:]]+0+$'
	assert_line "$(cat "$TESTDIR/start.sig")"
}

@test "lock: a wait for the lock names the holder; Ctrl-C gives it up" {
	"$METACTL" lock w --owner bob -- sleep 30 3>&- &
	BG=$!
	wait_for mctl epoch get w
	repl_start
	keys 'lock w -- true' Enter
	screen_wait -x 'metactl: waiting for w (held by bob, epoch 1)'
	keys C-c
	prompts_wait 2
	screen_wait -x 'metactl: interrupted'
	# Our waiter key is gone, the holder's stays.
	run mctl ls w/.lock/
	assert_equal "${#lines[@]}" 1
	run mctl epoch get w
	assert_output 'epoch 1 owner bob'
}
