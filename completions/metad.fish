# fish completion for metad(8), the daemon of the metad store.
#
# Install as .../fish/vendor_completions.d/metad.fish.  Completes every
# option and the values that have a fixed set or are paths.  Keep the list
# in sync with daemon/config.c (tests/bats/docs.bats checks it).

complete -c metad -f
complete -c metad -l socket -r -F -d 'the Unix socket to serve on'
complete -c metad -l store -x -a 'sqlite: memory etcd:http:// etcd:https:// metad:unix: metad:tls://' -d 'the store'
complete -c metad -l etcd-prefix -x -d 'the prefix of the keys in etcd'
complete -c metad -l view-max-bytes -x -d "the etcd view's memory limit"
complete -c metad -l store-cacert -r -F -d "the CA of etcd's certificate"
complete -c metad -l store-cert -r -F -d 'the client certificate for etcd'
complete -c metad -l store-key -r -F -d 'the key of --store-cert'
complete -c metad -l store-user -x -d 'the etcd user to authenticate as'
complete -c metad -l store-password-file -r -F -d "the file of the etcd user's password"
complete -c metad -l sync -x -a 'full normal off' -d 'how sqlite syncs'
complete -c metad -l history -x -d 'revisions of write events kept'
complete -c metad -l max-value-bytes -x -d 'the largest value'
complete -c metad -l max-request-bytes -x -d 'the longest request line'
complete -c metad -l max-pending-bytes -x -d 'unsent output per connection'
complete -c metad -l max-connections -x -d 'connections served at once'
complete -c metad -l max-connections-per-peer -x -d 'connections of one peer'
complete -c metad -l max-answer-bytes -x -d 'the largest txn, list or history answer'
complete -c metad -l idem-window -x -d "how long a write's idem token is kept"
complete -c metad -l max-watches-per-peer -x -d 'watches of one peer'
complete -c metad -l max-leases -x -d 'leases at once'
complete -c metad -l socket-mode -x -d "the socket's mode"
complete -c metad -l allow-uid -x -a '(__fish_complete_users)' -d 'users with read-write access'
complete -c metad -l allow-gid -x -a '(__fish_complete_groups)' -d 'groups with read-write access'
complete -c metad -l read-only-uid -x -a '(__fish_complete_users)' -d 'users with read-only access'
complete -c metad -l read-only-gid -x -a '(__fish_complete_groups)' -d 'groups with read-only access'
complete -c metad -l listen -x -a 'tls://' -d 'also serve with mutual TLS (tls://HOST:PORT)'
complete -c metad -l tls-cert -r -F -d 'the TLS certificate, PEM'
complete -c metad -l tls-key -r -F -d 'its private key, PEM'
complete -c metad -l tls-client-ca -r -F -d "the CA of every client's certificate"
complete -c metad -l allow-cn -x -d 'TLS client CNs with read-write access'
complete -c metad -l read-only-cn -x -d 'TLS client CNs with read-only access'
complete -c metad -l pidfile -r -F -d 'write the pid to this file'
complete -c metad -l log-level -x -a 'error warn info debug' -d 'the least severe messages logged'
complete -c metad -l log-file -r -F -d 'log to this file once serving'
complete -c metad -l log-syslog -d 'log to syslog'
complete -c metad -l metrics-listen -x -d 'serve GET /metrics over HTTP at [HOST:]PORT'
complete -c metad -l foreground -d 'stay in the foreground (the default)'
complete -c metad -l daemonize -d 'detach once serving'
complete -c metad -l help -d 'print the usage'
complete -c metad -l version -d 'print the version'
