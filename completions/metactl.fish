# fish completion for metactl(1), the client of metad(8).
#
# Install as .../fish/vendor_completions.d/metactl.fish.  Completes
# commands, global and per-command options, option values, and key names,
# which it asks the daemon for ("metactl ls PREFIX"): nothing, quietly,
# when metad is not running.  Keep the lists below in sync with cmd/
# (tests/bats/docs.bats checks them).

# Options that take a value (of any command: the names do not clash).
set -g __metactl_value_opts -s --socket -o --output --timeout --cacert \
    --cert --key --file \
    --if-version --if-mod-rev --fence --idem --limit -p --prefix --from-rev \
    -n --count --version --owner --if-epoch --lease --ttl --wait

# Prints the command ("epoch-get" for "epoch get", "" for none yet) and
# the number of its positional arguments before the cursor.
function __metactl_parse
    set -l toks (commandline -opc)
    set -e toks[1]
    set -l cmd ''
    set -l npos 0
    set -l skip 0
    for t in $toks
        if test $skip -eq 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $t
            if contains -- $t $__metactl_value_opts
                set skip 1
            end
            continue
        end
        if test -z "$cmd"
            set cmd $t
        else if contains -- "$cmd" epoch snapshot lease
            set cmd $cmd-$t
        else
            set npos (math $npos + 1)
        end
    end
    echo $cmd
    echo $npos
end

function __metactl_needs_command
    set -l p (__metactl_parse)
    test -z "$p[1]"
end

# True if the command is one of the arguments.
function __metactl_using
    set -l p (__metactl_parse)
    contains -- "$p[1]" $argv
end

# True if the word being completed is the KEY (or ls's PREFIX).
function __metactl_key_arg
    set -l p (__metactl_parse)
    contains -- "$p[1]" get; and return 0	# get KEY KEY...
    contains -- "$p[1]" put cas del delete watch wait epoch-get \
        epoch-bump ls list history dump lock; and test "$p[2]" -eq 0
end

# The -s/--socket given on the command line, as options for metactl.
function __metactl_socket_args
    set -l toks (commandline -opc)
    set -l n (count $toks)
    for i in (seq 2 $n)
        switch $toks[$i]
            case -s --socket
                if test $i -lt $n
                    printf '%s\n' --socket $toks[(math $i + 1)]
                end
            case '--socket=*' '--cacert=*' '--cert=*' '--key=*'
                printf '%s\n' $toks[$i]
            case --cacert --cert --key
                if test $i -lt $n
                    printf '%s\n' $toks[$i] $toks[(math $i + 1)]
                end
        end
    end
end

# Keys starting with the word being completed, from the daemon; at most
# 1000, waiting at most 2 seconds.
function __metactl_keys
    set -l prog (commandline -opc)[1]
    set -l prefix (string replace -r -- '^--?[a-z-]*=' '' (commandline -ct))
    command $prog (__metactl_socket_args) --timeout 2s ls --limit 1000 \
        -- "$prefix" 2>/dev/null
end

complete -c metactl -f

# Global options, before or after the command.
complete -c metactl -s s -l socket -r -F -d "metad's socket"
complete -c metactl -s o -l output -x -a 'text json' -d 'Output format'
complete -c metactl -l timeout -x -d 'Limit for connecting and each answer (500ms, 2s, 1m)'
complete -c metactl -l cacert -r -F -d "tls://: the CA of metad's certificate"
complete -c metactl -l cert -r -F -d "tls://: this client's certificate"
complete -c metactl -l key -r -F -d 'tls://: its private key'
complete -c metactl -s h -l help -d 'Show the help'
complete -c metactl -n 'not __metactl_using wait' -l version -d "Show metactl's version"

# Commands.
complete -c metactl -n __metactl_needs_command -a get -d "Print a key's value"
complete -c metactl -n __metactl_needs_command -a put -d 'Write a value; prints the new version'
complete -c metactl -n __metactl_needs_command -a cas -d "Write only if the key's version is VERSION"
complete -c metactl -n __metactl_needs_command -a del -d 'Delete a key'
complete -c metactl -n __metactl_needs_command -a ls -d 'List keys'
complete -c metactl -n __metactl_needs_command -a history -d "List a key's puts and deletes"
complete -c metactl -n __metactl_needs_command -a watch -d 'Stream the changes of keys and prefixes'
complete -c metactl -n __metactl_needs_command -a wait -d 'Block until a key reaches a version'
complete -c metactl -n __metactl_needs_command -a txn -d 'Run a transaction read from stdin'
complete -c metactl -n __metactl_needs_command -a epoch -d 'Read or bump a leadership epoch'
complete -c metactl -n __metactl_needs_command -a lease -d 'Grant, keep alive, revoke or list leases'
complete -c metactl -n __metactl_needs_command -a lock -d 'Run a command holding a lock, fenced'
complete -c metactl -n __metactl_needs_command -a compact -d 'Drop the watch history below a revision'
complete -c metactl -n __metactl_needs_command -a status -d "Show the daemon's status"
complete -c metactl -n __metactl_needs_command -a metrics -d "Print the daemon's metrics (Prometheus' text format)"
complete -c metactl -n __metactl_needs_command -a ping -d 'Check that metad answers'
complete -c metactl -n __metactl_needs_command -a dump -d 'Write the keys as JSON Lines, all at one revision'
complete -c metactl -n __metactl_needs_command -a load -d 'Write the keys of a dump; prints the number written'
complete -c metactl -n __metactl_needs_command -a snapshot -d 'Save a consistent copy of the store, or show a snapshot file'
complete -c metactl -n __metactl_needs_command -a help -d "List the commands, or show a command's help"
complete -c metactl -n __metactl_needs_command -a repl -d 'The interactive shell'

complete -c metactl -n '__metactl_using epoch' -a get -d "Print a key's epoch and owner"
complete -c metactl -n '__metactl_using epoch' -a bump -d "Increment a key's epoch"
complete -c metactl -n '__metactl_using lease' -a grant -d 'Create a lease of TTL; prints its id'
complete -c metactl -n '__metactl_using lease' -a keepalive -d "Refresh a lease's TTL"
complete -c metactl -n '__metactl_using lease' -a revoke -d 'Revoke a lease, deleting its keys'
complete -c metactl -n '__metactl_using lease' -a info -d "Print a lease's TTL, time left and keys"
complete -c metactl -n '__metactl_using lease' -a ls -d 'List the live leases'
complete -c metactl -n '__metactl_using snapshot' -a save -d 'Write a consistent copy of the store to FILE'
complete -c metactl -n '__metactl_using snapshot' -a status -d "Print a snapshot file's rev, keys, size and integrity"
complete -c metactl -n '__metactl_using help' -a 'get put cas del ls history watch wait txn epoch lease lock compact status metrics ping dump load snapshot help repl'

# Per-command options.
complete -c metactl -n '__metactl_using get wait' -s r -l raw -d 'Exact bytes, no newline added'
complete -c metactl -n '__metactl_using put' -l file -r -F -d 'Read the value from a file'
complete -c metactl -n '__metactl_using put del delete' -l if-absent -d 'Only if the key does not exist'
complete -c metactl -n '__metactl_using put del delete' -l if-version -x -d 'Only if the key is at this version (0: absent)'
complete -c metactl -n '__metactl_using put del delete' -l if-mod-rev -x -d "Only if the key's mod_rev is this"
complete -c metactl -n '__metactl_using put cas del delete txn' -l fence -x -a '(__metactl_keys)' -d 'KEY:EPOCH, only if the epoch at KEY is EPOCH'
complete -c metactl -n '__metactl_using put cas del delete txn' -l idem -x -d 'a token: sent again, the write is answered as first'
complete -c metactl -n '__metactl_using ls list' -s l -l long -d 'With version and mod_rev'
complete -c metactl -n '__metactl_using ls list' -l limit -x -d 'At most N keys'
complete -c metactl -n '__metactl_using get ls list' -l rev -x -d 'As of this revision'
complete -c metactl -n '__metactl_using history' -l from-rev -x -d 'From this revision'
complete -c metactl -n '__metactl_using history' -l limit -x -d 'At most N events'
complete -c metactl -n '__metactl_using watch' -s p -l prefix -x -a '(__metactl_keys)' -d 'Every key under the prefix'
complete -c metactl -n '__metactl_using watch' -l from-rev -x -d 'Replay the history from this revision'
complete -c metactl -n '__metactl_using watch' -s n -l count -x -d 'Exit after N events'
complete -c metactl -n '__metactl_using watch' -s k -l key -x -a '(__metactl_keys)' -d 'A key (one starting with -)'
complete -c metactl -n '__metactl_using watch' -l prev-kv -d 'Show the value before each event'
complete -c metactl -n '__metactl_using watch' -l progress -x -d 'A PROGRESS line after this many idle ms'
complete -c metactl -n '__metactl_using wait' -l version -x -d 'Wait for this version (default 1)'
complete -c metactl -n '__metactl_using epoch-bump' -l owner -x -d 'The new owner'
complete -c metactl -n '__metactl_using epoch-bump' -l if-epoch -x -d 'Only if the epoch is N (0: none yet)'
complete -c metactl -n '__metactl_using put' -l lease -x -d 'Attach the key to this lease'
complete -c metactl -n '__metactl_using put' -l ttl -x -d 'A lease of this TTL for the key'
complete -c metactl -n '__metactl_using get del delete' -l prefix -x -a '(__metactl_keys)' -d 'Every key under the prefix'
complete -c metactl -n '__metactl_using get' -l limit -x -d 'With --prefix: at most N keys'
complete -c metactl -n '__metactl_using lease-grant' -l session -d 'Revoked when this connection closes'
complete -c metactl -n '__metactl_using lease-keepalive' -l forever -d 'Refresh every TTL/3 until interrupted'
complete -c metactl -n '__metactl_using lock' -l ttl -x -d "The session lease's TTL (default 10s)"
complete -c metactl -n '__metactl_using lock' -l owner -x -d 'The owner in the epoch document'
complete -c metactl -n '__metactl_using lock' -l wait -x -d 'Give up after this long'
complete -c metactl -n '__metactl_using load' -l if-absent -d 'Skip the keys that exist'

# Files: load's dump, snapshot save's and status's FILE.
complete -c metactl -n '__metactl_using load snapshot-save snapshot-status' -F

# Keys.
complete -c metactl -n __metactl_key_arg -a '(__metactl_keys)' -d Key
