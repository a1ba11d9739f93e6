#!/usr/bin/env bats
# metactl's rough edges for a new user (metactl(1)): "did you mean", a
# command family alone, keys quoted in ls, the notes of a cut listing,
# the line numbers of a script's errors (the progress lines of load and
# dump are in backup.bats).

load helpers

bats_require_minimum_version 1.5.0

setup() {
	metad_start
}

teardown() {
	metad_cleanup
}

@test "a mistyped command names the closest ones, exit 2" {
	run -2 --separate-stderr mctl gte k
	assert_output ''
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: gte (did you mean get?)'
	run -2 --separate-stderr mctl stauts
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: stauts (did you mean status?)'
	run -2 --separate-stderr mctl lsit
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: lsit (did you mean list or ls?)'
	run -2 --separate-stderr mctl epoch gte k
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: epoch gte (did you mean epoch get?)'
	assert_equal "${stderr_lines[1]}" 'usage: metactl epoch get KEY'
	run -2 --separate-stderr mctl lease grnat 10s
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: lease grnat (did you mean lease grant?)'
	run -2 --separate-stderr mctl snapshot sav f
	assert_equal "${stderr_lines[0]}" \
	    'metactl: unknown command: snapshot sav (did you mean snapshot save?)'
	# Nothing close: no guess.
	run -2 --separate-stderr mctl frobnicate
	assert_equal "${stderr_lines[0]}" 'metactl: unknown command: frobnicate'
}

@test "epoch and lease alone list their subcommands, exit 2" {
	run -2 --separate-stderr mctl epoch
	assert_output ''
	assert_equal "$stderr" "$(cat <<-'EOF'
	metactl: epoch needs a subcommand: get or bump
	usage: metactl epoch get KEY
	       metactl epoch bump KEY [--owner OWNER] [--if-epoch N]
	EOF
	)"
	run -2 --separate-stderr mctl lease
	assert_equal "${stderr_lines[0]}" \
	    'metactl: lease needs a subcommand: grant, keepalive, revoke, info or ls'
	assert_equal "${stderr_lines[1]}" 'usage: metactl lease grant TTL [--session]'
	assert_equal "${stderr_lines[5]}" '       metactl lease ls'
}

@test "in a script, a mistyped command names the closest one and its line" {
	run -2 --separate-stderr mctl repl <<-'EOF'
	put k v
	gte k
	epoch
	EOF
	assert_output '1'
	assert_equal "${stderr_lines[0]}" \
	    'metactl: line 2: unknown command: gte (did you mean get?)'
	assert_equal "${stderr_lines[2]}" \
	    'metactl: line 3: epoch needs a subcommand: get or bump'
	assert_equal "${stderr_lines[3]}" 'usage: metactl epoch get KEY'
}

@test "a script's errors name their line, the daemon's too" {
	run -3 --separate-stderr mctl repl <<-'EOF'
	put k v

	get k
	put k w --if-version 7
	get missing
	put k x --if-version 7
	EOF
	assert_output $'1\nv'
	assert_regex "${stderr_lines[0]}" \
	    '^metactl: line 4: failed_precondition: version is 1, not 7 '
	assert_equal "${stderr_lines[1]}" 'metactl: line 5: missing: not found'
	assert_regex "${stderr_lines[2]}" '^metactl: line 6: failed_precondition: '
}

@test "ls quotes a key with a newline or a tab: one line, and -l's columns hold" {
	mctl put $'two\nlines' 1
	mctl put $'a\tb' 1
	mctl put plain 1
	run -0 --separate-stderr mctl ls
	assert_output "$(printf '%s\n' '"a\tb"' plain '"two\nlines"')"
	run -0 --separate-stderr mctl ls -l
	assert_equal "${#lines[@]}" 3
	assert_regex "${lines[0]}" '^"a\\tb"       +1 +[0-9]+$'
	assert_regex "${lines[1]}" '^plain        +1 +[0-9]+$'
	assert_regex "${lines[2]}" '^"two\\nlines" +1 +[0-9]+$'
	# -o json is untouched: the key as it is.
	run -0 mctl -o json ls
	assert_output --partial '"key":"two\nlines"'
}

@test "ls --limit and history --limit say on stderr that they cut the output" {
	mctl put a 1
	mctl put b 1
	run -0 --separate-stderr mctl ls --limit 1
	assert_output 'a'
	assert_equal "$stderr" \
	    '(more keys: --limit 1 cut the listing; without --limit ls lists them all)'
	run -0 --separate-stderr mctl ls --limit 2
	assert_output $'a\nb'
	assert_equal "$stderr" ''
	mctl put a 2
	run -0 --separate-stderr mctl history a --limit 1
	assert_output "$(rv '@1  put  1  1')"
	assert_equal "$stderr" \
	    "(more events: --limit 1 cut the history; --from-rev $(rv @2) goes on)"
	run -0 --separate-stderr mctl history a --from-rev "$(rv @2)" --limit 1
	assert_equal "$stderr" ''
	run -0 --separate-stderr mctl -o json ls --limit 1
	assert_equal "$stderr" ''
}

@test "wait's usage and metactl --help say its --timeout default" {
	run -0 mctl wait --help
	assert_line --index 1 --partial 'at most --timeout (default 10s)'
	run -0 mctl --help
	assert_line --partial 'at most --timeout (default 10s)'
}
