# bash completion for metactl(1), the client of metad(8).
#
# Installed as .../bash-completion/completions/metactl, bash-completion
# loads it the first time "metactl <TAB>" is pressed; it also works when
# sourced by hand, without bash-completion.  Completes commands, global
# and per-command options, option values, and key names, which it asks
# the daemon for ("metactl ls PREFIX"): nothing, quietly, when metad is not
# running.  Keep the lists below in sync with cmd/ (tests/bats/docs.bats
# checks them).

_metactl_commands='get put cas del ls history watch wait txn epoch lease lock compact status metrics ping dump load snapshot help repl'
_metactl_global_opts='-s --socket -o --output --timeout --cacert --cert --key -h --help --version'

# The options of a command ("epoch bump" for two-word commands).
_metactl_cmd_opts()
{
	case $1 in
	get)		echo '-r --raw --rev --prefix --limit' ;;
	put)		echo '--file --if-absent --if-version --if-mod-rev --fence --lease --ttl --idem' ;;
	cas)		echo '--fence --idem' ;;
	del|delete)	echo '--if-absent --if-version --if-mod-rev --fence --prefix --idem' ;;
	ls|list)	echo '-l --long --limit --rev' ;;
	history)	echo '--from-rev --limit' ;;
	watch)		echo '-p --prefix -k --key --from-rev -n --count --prev-kv --progress' ;;
	wait)		echo '--version -r --raw' ;;
	txn)		echo '--fence --idem' ;;
	'epoch bump')	echo '--owner --if-epoch' ;;
	'lease grant')	echo '--session' ;;
	'lease keepalive') echo '--forever' ;;
	lock)		echo '--ttl --owner --wait' ;;
	load)		echo '--if-absent' ;;
	esac
}

# 0 if option $1 takes a value (of any command: the names do not clash).
_metactl_takes_value()
{
	case $1 in
	-s|--socket|-o|--output|--timeout|--cacert|--cert|--key|--file|\
	--if-version|--if-mod-rev|\
	--fence|--idem|--limit|-p|--prefix|--from-rev|-n|--count|--version|--owner|\
	--if-epoch|--rev|--lease|--ttl|--wait|-k|--key|--progress)
		return 0 ;;
	esac
	return 1
}

# Keys starting with $1, from the daemon on the socket the command line
# names (-s, and --cacert, --cert, --key for tls://), if any; at most
# 1000, waiting at most 2 seconds.
_metactl_keys()
{
	local -a cmd=("${words[0]}")
	[[ -n $socket ]] && cmd+=(--socket "$socket")
	cmd+=("${tls[@]}")
	local key
	while IFS= read -r key; do
		[[ $key == "$1"* ]] || continue
		if [[ $key == *[[:space:]\'\"\\\$\`\;\&\|\<\>\(\)\*\?\[\]\!\#]* ]]; then
			printf -v key '%q' "$key"
		fi
		COMPREPLY+=("$key")
	done < <("${cmd[@]}" --timeout 2s ls --limit 1000 -- "$1" 2>/dev/null)
}

# Sets words, cword, cur and prev: with bash-completion's _init_completion
# when it is there, else from the line up to the cursor (split at blanks
# only, so that keys holding ':' or '=' stay whole), else from COMP_WORDS.
_metactl_init()
{
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion -n =: || return 1
		return 0
	fi
	if [[ -n ${COMP_LINE-} ]]; then
		local line=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}
		read -ra words <<<"$line"
		[[ ${#words[@]} -eq 0 || $line == *[[:blank:]] ]] && words+=('')
		cword=$((${#words[@]} - 1))
	else
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	cur=${words[cword]}
	prev=${words[cword-1]}
	return 0
}

_metactl()
{
	local cur prev words cword
	_metactl_init || return
	# --option=value, split by COMP_WORDBREAKS or not.
	if [[ $cur == =* && $prev == -* ]]; then
		cur=${cur#=}
	elif [[ $prev == = && $cword -ge 2 ]]; then
		prev=${words[cword-2]}
	elif [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	fi
	COMPREPLY=()

	# The command, its position, the socket, and the positional
	# arguments before the word being completed.
	local command='' socket='' npos=0 i w
	local -a tls=()
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		case $w in
		=|:)	continue ;;
		--socket=*)	socket=${w#*=}; continue ;;
		--cacert=*|--cert=*|--key=*)	tls+=("$w"); continue ;;
		--cacert|--cert|--key)
			tls+=("$w" "${words[i+1]}")
			((i++)); continue ;;
		--*=*)	continue ;;
		-s|--socket)
			socket=${words[i+1]}
			((i++)); continue ;;
		-*)
			_metactl_takes_value "$w" && ((i++))
			[[ ${words[i]} == = ]] && ((i++))
			continue ;;
		esac
		if [[ -z $command ]]; then
			command=$w
		elif [[ $command == epoch || $command == snapshot ||
		    $command == lease ]] &&
		    [[ $npos -eq 0 ]]; then
			command="$command $w"
		else
			((npos++))
		fi
	done

	case $prev in
	-s|--socket|--file|--cacert|--cert|--key)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return ;;
	-o|--output)
		COMPREPLY=($(compgen -W 'text json' -- "$cur"))
		return ;;
	-p|--prefix|-k|--key)
		_metactl_keys "$cur"
		return ;;
	--fence)
		# KEY:EPOCH: the key, then the epoch is the user's.
		if [[ $cur != *:* ]]; then
			_metactl_keys "$cur"
			COMPREPLY=("${COMPREPLY[@]/%/:}")
			compopt -o nospace 2>/dev/null
		fi
		return ;;
	esac
	if _metactl_takes_value "$prev"; then
		return
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$_metactl_global_opts $(_metactl_cmd_opts "$command")" -- "$cur"))
		return
	fi
	case $command in
	'')
		COMPREPLY=($(compgen -W "$_metactl_commands" -- "$cur")) ;;
	epoch)
		COMPREPLY=($(compgen -W 'get bump' -- "$cur")) ;;
	lease)
		COMPREPLY=($(compgen -W 'grant keepalive revoke info ls' -- "$cur")) ;;
	snapshot)
		COMPREPLY=($(compgen -W 'save status' -- "$cur")) ;;
	help)
		if ((npos == 0)); then
			COMPREPLY=($(compgen -W "$_metactl_commands" -- "$cur"))
		elif [[ ${words[cword-1]} == epoch ]]; then
			COMPREPLY=($(compgen -W 'get bump' -- "$cur"))
		elif [[ ${words[cword-1]} == snapshot ]]; then
			COMPREPLY=($(compgen -W 'save status' -- "$cur"))
		elif [[ ${words[cword-1]} == lease ]]; then
			COMPREPLY=($(compgen -W 'grant keepalive revoke info ls' -- "$cur"))
		fi ;;
	lock)
		# NAME, then after -- the command is the user's.
		((npos == 0)) && [[ " ${words[*]:0:cword} " != *' -- '* ]] &&
		    _metactl_keys "$cur" ;;
	load|'snapshot save'|'snapshot status')
		if ((npos == 0)); then
			COMPREPLY=($(compgen -f -- "$cur"))
			compopt -o filenames 2>/dev/null
		fi ;;
	dump)
		((npos == 0)) && _metactl_keys "$cur" ;;
	get)	# get KEY KEY...: a key at every place
		_metactl_keys "$cur" ;;
	put|cas|del|delete|watch|wait|'epoch get'|'epoch bump'|ls|list|history)
		((npos == 0)) && _metactl_keys "$cur" ;;
	esac
	# Readline replaces only what follows the last ':' of the word.
	if [[ $cur == *:* && ${COMP_WORDBREAKS-} == *:* ]]; then
		local pre=${cur%"${cur##*:}"}
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=${COMPREPLY[i]#"$pre"}
		done
	fi
	return 0
}

complete -F _metactl metactl
