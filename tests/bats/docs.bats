#!/usr/bin/env bats
# Docs ship with code (STYLE rule 10): the man pages are clean under
# mandoc's lint, every command and option of metactl and metad is
# documented and completed, and the shell completions work.

load helpers
bats_require_minimum_version 1.5.0

MAN="$ROOT/man"
COMP="$ROOT/completions"

teardown() {
	metad_cleanup
}

# metactl's commands, from "metactl help": one a line, "epoch get" as two
# words.
metactl_commands() {
	"$METACTL" help | awk '
	    /^commands:/ { on = 1; next }
	    on && /^$/ { exit }
	    on && /^  [a-z]/ {
		if ($2 ~ /^[a-z]+$/) print $1 " " $2; else print $1
	    }'
}

# Every long option named in "metactl help" (usage lines and options).
metactl_long_options() {
	"$METACTL" help | grep -o -- '--[a-z][a-z-]*' | sort -u
}

# bash_complete [--bash-completion] WORD...: run _metactl in a fresh bash
# on the command line "WORD..." (the last word is the one completed; give
# "" to complete a new word) and print COMPREPLY, one entry a line.
bash_complete() {
	local bc=
	if [ "$1" = --bash-completion ]; then
		bc=/usr/share/bash-completion/bash_completion
		shift
	fi
	bash --norc --noprofile -c '
	    bc=$1 comp=$2; shift 2
	    if [ -n "$bc" ]; then . "$bc" || exit 9; fi
	    . "$comp" || exit 9
	    COMP_WORDS=("$@")
	    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	    COMP_LINE="${COMP_WORDS[*]}"
	    COMP_POINT=${#COMP_LINE}
	    _metactl
	    printf "%s\n" "${COMPREPLY[@]}"' \
	    bash "$bc" "$COMP/metactl.bash" "$METACTL" "$@"
}

need_bash_completion() {
	[ -r /usr/share/bash-completion/bash_completion ] ||
	    skip "bash-completion is not installed"
}

@test "every man page is clean under mandoc -Tlint -Wwarning and groff -ww" {
	local m n=0
	for m in "$MAN"/*.[1-9]; do
		run mandoc -Tlint -Wwarning "$m"
		[ "$status" -eq 0 ] && [ -z "$output" ] ||
		    fail "$m: $output"
		# groff warns of what mandoc lets by: a line it cannot
		# break, an escape inside a macro argument.
		run --separate-stderr groff -ww -man -Tutf8 -z "$m"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] && [ -z "$output" ] ||
		    fail "groff: $m: $stderr"
		n=$((n + 1))
	done
	[ "$n" -ge 4 ]
	[ -f "$MAN/metactl.1" ] && [ -f "$MAN/metad.8" ] &&
	    [ -f "$MAN/metad-protocol.7" ] && [ -f "$MAN/metad_client.3" ]
}

# Quotes that render doubled: a quoting macro nested in another
# (".Qq a , Qq b" on one line gives "a, "b""), or a quote glued to another.
# An empty JSON string, "", stands alone and passes.
QUOTE_ARTEFACT='"""|""[[:alnum:]_]|[[:alnum:]_,]""|’’|‘‘|””|““'

@test "no man page renders a doubled quote, under groff or mandoc" {
	local m out
	for m in "$MAN"/*.[1-9]; do
		out=$(groff -man -Tutf8 -P-cbou "$m" 2>/dev/null |
		    grep -En "$QUOTE_ARTEFACT") &&
		    fail "groff renders $m with a doubled quote: $out"
		out=$(mandoc -Tutf8 "$m" | sed 's/.\x08//g' |
		    grep -En "$QUOTE_ARTEFACT") &&
		    fail "mandoc renders $m with a doubled quote: $out"
	done
	# The check sees the nesting it is for.
	printf '%s\n' '.Dd January 1, 2026' '.Dt X 7' .Os '.Sh NAME' '.Nm x' \
	    '.Nd y' '.Sh DESCRIPTION' '.Pq Qq a , Qq b .' \
	    >"$BATS_TEST_TMPDIR/nested.7"
	groff -man -Tutf8 -P-cbou "$BATS_TEST_TMPDIR/nested.7" |
	    grep -Eq "$QUOTE_ARTEFACT"
	mandoc -Tutf8 "$BATS_TEST_TMPDIR/nested.7" | sed 's/.\x08//g' |
	    grep -Eq "$QUOTE_ARTEFACT"
}

@test "no help text, man page or installed header cites SPEC, a document outside the tree" {
	local first second out
	while read -r first second; do
		out=$("$METACTL" help $first $second 2>&1)
		grep -n SPEC <<<"$out" &&
		    fail "metactl help $first $second cites SPEC"
	done <<<"$(metactl_commands)"
	out=$("$METACTL" help; "$METAD" --help 2>&1) || true
	grep -n SPEC <<<"$out" && fail "metactl help or metad --help cites SPEC"
	out=$(grep -n -w SPEC "$MAN"/*.[1-9] "$ROOT/include/metad/client.h") &&
	    fail "cites SPEC: $out"
	return 0
}

@test "every metactl command is in metactl(1) and in the bash, zsh and fish completions" {
	local cmds c first second f
	cmds=$(metactl_commands)
	[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 10 ]
	while read -r first second; do
		c="$first${second:+ $second}"
		grep -Eq "^\.It Cm $c( |\$)" "$MAN/metactl.1" ||
		    fail "metactl.1 has no entry \".It Cm $c\""
		for f in metactl.bash _metactl metactl.fish; do
			grep -qw -- "$first" "$COMP/$f" ||
			    fail "$f does not complete \"$first\""
			[ -z "$second" ] || grep -qw -- "$second" "$COMP/$f" ||
			    fail "$f does not complete \"$c\""
		done
	done <<<"$cmds"
}

@test "every option in metactl help is in metactl(1) and in the three completions" {
	local o name
	for o in $(metactl_long_options); do
		name=${o#--}
		# An entry: ".It Fl -raw", ".It Cm get ... Fl r | -raw".
		grep -Eq "^\.It .*(Fl|\|) -$name( |\$)" "$MAN/metactl.1" ||
		    fail "metactl.1 does not document $o"
		grep -q -- "$o" "$COMP/metactl.bash" ||
		    fail "metactl.bash does not complete $o"
		grep -q -- "$o" "$COMP/_metactl" ||
		    fail "_metactl does not complete $o"
		grep -Eq -- "-l $name( |\$)" "$COMP/metactl.fish" ||
		    fail "metactl.fish does not complete $o"
	done
}

@test "every long option of metad, and its METAD_ variable, is in metad(8)" {
	local usage o name var
	usage=$("$METAD" --help)
	for o in $(printf '%s\n' "$usage" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		name=${o#--}
		grep -Eq "^\.It .*Fl -$name( |\$)" "$MAN/metad.8" ||
		    fail "metad.8 does not document $o"
		# An option with a value can come from the environment.
		if printf '%s\n' "$usage" | grep -Eq -- "$o [A-Za-z]"; then
			var=METAD_$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')
			grep -q "^\.It Ev $var\$" "$MAN/metad.8" ||
			    fail "metad.8 does not document $var"
		fi
	done
}

@test "every long option of metad is in the bash, zsh and fish completions of metad" {
	local o name
	for o in $("$METAD" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		name=${o#--}
		grep -Eq -- "(^|[ '])$o( |\$|')" "$COMP/metad.bash" ||
		    fail "metad.bash does not complete $o"
		grep -Eq -- "'(\([^)]*\))?$o[=[]" "$COMP/_metad" ||
		    fail "_metad does not complete $o"
		grep -Eq -- "-l $name( |\$)" "$COMP/metad.fish" ||
		    fail "metad.fish does not complete $o"
	done
}

@test "metad completions: bash values, zsh and fish parse and complete" {
	run bash --norc --noprofile -c '. "$1"; COMP_WORDS=(metad --sync ""); COMP_CWORD=2; _metad; printf "%s\n" "${COMPREPLY[@]}"' bash "$COMP/metad.bash"
	assert_output "$(printf 'full\nnormal\noff')"
	run bash --norc --noprofile -c '. "$1"; COMP_WORDS=(metad --read-o); COMP_CWORD=1; _metad; printf "%s\n" "${COMPREPLY[@]}"' bash "$COMP/metad.bash"
	assert_output "$(printf -- '--read-only-uid\n--read-only-gid\n--read-only-cn')"
	if command -v zsh >/dev/null; then
		run head -1 "$COMP/_metad"
		assert_output '#compdef metad'
		run zsh -n "$COMP/_metad"
		assert_success
	fi
	if command -v fish >/dev/null; then
		run fish --no-config -c 'source $argv[1]; complete -C "metad --log-level "' "$COMP/metad.fish"
		assert_line --regexp '^debug	'
		assert_line --regexp '^error	'
	fi
}

@test "metad-protocol(7) documents every op and every error code" {
	local op code
	for op in $(sed -n '/ops_table\[\]/,/^};/p' "$ROOT/daemon/ops/ops.c" |
	    grep -o '{ "[a-z_]*"' | tr -d '{ "'); do
		grep -q "^\.Ss $op\$" "$MAN/metad-protocol.7" ||
		    fail "metad-protocol.7 has no section for op $op"
	done
	for code in $(sed -n '/proto_code_names\[\]/,/^};/p' \
	    "$ROOT/common/proto.c" | grep -o '"[a-z_]*"' | tr -d '"'); do
		[ "$code" = ok ] && continue
		grep -q "^\.It Cm $code\$" "$MAN/metad-protocol.7" ||
		    fail "metad-protocol.7 does not explain error $code"
	done
}

# The long options in the usage of command "$1" ("epoch bump": two words).
metactl_command_options() {
	"$METACTL" help $1 | head -1 | sed 's/^usage: metactl [^]]*][^]]*][^]]*] //' |
	    grep -o -- '--[a-z][a-z-]*' | sort -u
}

# complete_every_option bash|fish: that shell's completion offers, after
# each command, every option of its usage.
complete_every_option() {
	local cmds first second c o out
	cmds=$(metactl_commands)
	while read -r first second; do
		c="$first${second:+ $second}"
		if [ "$1" = bash ]; then
			out=$(bash_complete $c --)
		else
			out=$(fish --no-config -c 'source $argv[1]; complete -C "$argv[2] --"' \
			    "$COMP/metactl.fish" "$METACTL $c" | cut -f1)
		fi
		for o in $(metactl_command_options "$c"); do
			grep -qx -- "$o" <<<"$out" ||
			    fail "$1 does not complete $o after \"$c\""
		done
	done <<<"$cmds"
}

@test "bash completes every option of every command" {
	complete_every_option bash
}

@test "fish completes every option of every command" {
	command -v fish >/dev/null || skip "fish is not installed"
	complete_every_option fish
}

@test "bash: the completion registers _metactl for metactl" {
	run bash --norc --noprofile -c '. "$1" && complete -p metactl' bash \
	    "$COMP/metactl.bash"
	assert_success
	assert_output 'complete -F _metactl metactl'
}

@test "bash: commands, global and command options, option values" {
	run bash_complete ""
	assert_success
	for c in get put cas del ls watch wait txn epoch compact status ping help; do
		assert_line "$c"
	done
	run bash_complete g
	assert_output get
	run bash_complete epoch ""
	assert_output "$(printf 'get\nbump')"
	run bash_complete -o ""
	assert_output "$(printf 'text\njson')"
	run bash_complete get k --
	assert_line --socket
	assert_line --timeout
	assert_line --raw
	refute_line --if-absent
	run bash_complete put k v --if
	assert_output "$(printf -- '--if-absent\n--if-version\n--if-mod-rev')"
	run bash_complete watch --
	assert_line --prefix
	assert_line --from-rev
	assert_line --count
	run bash_complete epoch bump k --
	assert_line --owner
	assert_line --if-epoch
	run bash_complete hist
	assert_output history
	run bash_complete history k --
	assert_line --from-rev
	assert_line --limit
	run bash_complete get k --re
	assert_output --rev
	run bash_complete ls --re
	assert_output --rev
}

@test "bash: key names come from the running daemon" {
	metad_start
	mctl put app/a 1 >/dev/null
	mctl put app/b 2 >/dev/null
	mctl put other 3 >/dev/null
	run bash_complete get app/
	assert_success
	assert_output "$(printf 'app/a\napp/b')"
	run bash_complete epoch bump a
	assert_output "$(printf 'app/a\napp/b')"
	run bash_complete history app/
	assert_output "$(printf 'app/a\napp/b')"
	# The value of --rev is not a key.
	run bash_complete get --rev ""
	assert_output ""
	run bash_complete watch --prefix o
	assert_output other
	run bash_complete -s "$SOCK" del ""
	assert_line app/a
	assert_line other
	# The value of put is not a key.
	run bash_complete put app/a ""
	assert_output ""
}

@test "bash: nothing, quietly, when the daemon is not running" {
	export METACTL_SOCKET="$BATS_TEST_TMPDIR/none.sock"
	run --separate-stderr bash_complete get a
	assert_success
	assert_output ""
	[ -z "$stderr" ]
}

@test "bash: with bash-completion, keys holding a colon" {
	need_bash_completion
	metad_start
	mctl put svc:leader 1 >/dev/null
	mctl put svc:lock 2 >/dev/null
	run bash_complete --bash-completion get ""
	assert_line svc:leader
	# Readline replaces only what follows the colon.
	run bash_complete --bash-completion get svc:le
	assert_output leader
	run bash_complete --bash-completion ""
	assert_line get
	assert_line epoch
}

@test "bash: bash-completion loads it lazily from its completions directory" {
	need_bash_completion
	testdir
	mkdir -p "$TESTDIR/completions"
	cp "$COMP/metactl.bash" "$TESTDIR/completions/metactl"
	run env BASH_COMPLETION_USER_DIR="$TESTDIR" bash --norc --noprofile -c '
	    . /usr/share/bash-completion/bash_completion
	    __load_completion metactl && complete -p metactl'
	assert_success
	assert_output 'complete -F _metactl metactl'
}

@test "zsh: _metactl is a compdef file and parses" {
	command -v zsh >/dev/null || skip "zsh is not installed"
	run head -1 "$COMP/_metactl"
	assert_output '#compdef metactl'
	run zsh -n "$COMP/_metactl"
	assert_success
	assert_output ""
}

@test "fish: metactl.fish parses and completes commands, options and keys" {
	command -v fish >/dev/null || skip "fish is not installed"
	run fish --no-execute "$COMP/metactl.fish"
	assert_success
	metad_start
	mctl put app/a 1 >/dev/null
	mctl put app/b 2 >/dev/null
	run fish --no-config -c 'source $argv[1]; complete -C "$argv[2] "' \
	    "$COMP/metactl.fish" "$METACTL"
	assert_line --regexp '^get	'
	assert_line --regexp '^epoch	'
	run fish --no-config -c 'source $argv[1]; complete -C "$argv[2] get app/"' \
	    "$COMP/metactl.fish" "$METACTL"
	assert_line --regexp '^app/a'
	assert_line --regexp '^app/b'
	run fish --no-config -c 'source $argv[1]; complete -C "$argv[2] epoch bump k --"' \
	    "$COMP/metactl.fish" "$METACTL"
	assert_line --regexp '^--owner'
	assert_line --regexp '^--if-epoch'
	run fish --no-config -c 'source $argv[1]; complete -C "$argv[2] history app/"' \
	    "$COMP/metactl.fish" "$METACTL"
	assert_line --regexp '^app/a'
	run fish --no-config -c 'source $argv[1]; complete -C "$argv[2] history k --"' \
	    "$COMP/metactl.fish" "$METACTL"
	assert_line --regexp '^--from-rev'
	assert_line --regexp '^--limit'
}

@test "README: the intro's command list names every metactl command" {
	local list first second
	# The backquoted list of the "- `metactl`" bullet, over its lines.
	list=$(awk '/^- `metactl`/ { on = 1 } on && /^$/ { exit } on' \
	    "$ROOT/README.md" | tr '\n' ' ' | sed -n 's/^[^:]*: `\([^`]*\)`.*/\1/p')
	[ -n "$list" ] || fail "README.md has no \"- \`metactl\`\" command list"
	while read -r first second; do
		case $first in help | repl) continue ;; esac
		grep -qw -- "$first" <<<"$list" ||
		    fail "README.md's command list leaves out $first"
	done <<<"$(metactl_commands)"
}

# README.md's lock example, as a shell would run it: the lines from
# "$ metactl lock" to the one closing its quoted script, unindented.
readme_lock_example() {
	sed -n "/^    \\\$ metactl lock /,/'\$/p" "$ROOT/README.md" |
	    sed 's/^    //; s/^\$ //'
}

@test "README: the lock example runs, and a step that fails stops it before \"done\"" {
	local script
	script=$(readme_lock_example)
	grep -q 'sh -ec' <<<"$script" || fail "not the example: $script"
	metad_start
	cd "$TESTDIR"
	run env PATH="$ROOT/bin:$PATH" sh -c "$script"
	assert_success
	run mctl get jobs/reindex/state
	assert_output done
	# The reindex fails: the script stops there, and lock exits with it.
	echo 'not a database' >app.db
	run env PATH="$ROOT/bin:$PATH" sh -c "$script"
	assert_failure
	run mctl get jobs/reindex/state
	assert_output running
}
