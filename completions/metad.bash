# bash completion for metad(8), the daemon of the metad store.
#
# Installed as .../bash-completion/completions/metad; also works when
# sourced by hand.  Completes every option and the values that have a
# fixed set (--store's kinds, --sync, --log-level) or are paths.  Keep the
# list in sync with daemon/config.c (tests/bats/docs.bats checks it).

_metad_opts='--socket --store --etcd-prefix --view-max-bytes --store-cacert
--store-cert --store-key --store-user --store-password-file --sync --history
--max-value-bytes --max-request-bytes --max-pending-bytes --max-connections
--max-connections-per-peer --max-watches-per-peer --max-leases --max-answer-bytes --idem-window
--socket-mode --allow-uid --allow-gid --read-only-uid --read-only-gid
--listen --tls-cert --tls-key --tls-client-ca --allow-cn --read-only-cn
--pidfile --log-level --log-file --log-syslog --metrics-listen --foreground
--daemonize --help --version'

_metad()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	# --option=value
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	elif [[ $cur == = && $prev == --* ]]; then
		cur=
	elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	COMPREPLY=()
	case $prev in
	--socket|--pidfile|--log-file|--tls-cert|--tls-key|--tls-client-ca|\
	--store-cacert|--store-cert|--store-key|--store-password-file)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--store)
		case $cur in
		sqlite:*)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -P sqlite: -- "${cur#sqlite:}")) ;;
		*)
			compopt -o nospace 2>/dev/null
			COMPREPLY=($(compgen -W 'sqlite: memory etcd:http:// etcd:https:// metad:unix: metad:tls://' \
			    -- "$cur")) ;;
		esac
		return ;;
	--sync)
		COMPREPLY=($(compgen -W 'full normal off' -- "$cur"))
		return ;;
	--log-level)
		COMPREPLY=($(compgen -W 'error warn info debug' -- "$cur"))
		return ;;
	--allow-uid|--read-only-uid)
		COMPREPLY=($(compgen -u -- "$cur"))
		return ;;
	--allow-gid|--read-only-gid)
		COMPREPLY=($(compgen -g -- "$cur"))
		return ;;
	--listen)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W 'tls://' -- "$cur"))
		return ;;
	--allow-cn|--read-only-cn|\
	--etcd-prefix|--view-max-bytes|--store-user|--history|--max-value-bytes|\
	--max-request-bytes|--max-pending-bytes|--max-connections|--socket-mode|\
	--max-connections-per-peer|--max-watches-per-peer|--max-leases|\
	--max-answer-bytes|--idem-window|--metrics-listen)
		return ;;
	esac
	COMPREPLY=($(compgen -W "$_metad_opts" -- "$cur"))
}
complete -F _metad metad
