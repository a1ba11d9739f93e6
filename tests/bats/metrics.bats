#!/usr/bin/env bats
# The metrics (metad(8), METRICS): the metrics op, metactl metrics and
# --metrics-listen.  Each exposition is parsed whole by a real parser
# (python3-prometheus-client's text_string_to_metric_families), and the
# counters are checked to move by exactly the work done.

load helpers

bats_require_minimum_version 1.5.0

PY=/usr/bin/python3

setup() {
	"$PY" -c 'import prometheus_client' 2>/dev/null ||
	    skip "needs python3-prometheus-client (scripts/deps.sh)"
}

teardown() {
	leases_clear
	metad_cleanup
}

# flat: the exposition on stdin, parsed whole, as "NAME{K=V,...} VALUE"
# lines (labels sorted, whole numbers without ".0"); then "# FAMILY TYPE"
# lines.  A malformed exposition fails it.
flat() {
	"$PY" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(sys.stdin.read()))
for f in fams:
    for s in f.samples:
        v = s.value
        v = int(v) if v == int(v) else v
        ls = ",".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, ls, v))
for f in fams:
    print("# %s %s" % (f.name, f.type))
'
}

# snap FILE: the metrics now, through metactl, flattened into FILE.
snap() {
	mctl metrics | flat >"$1"
}

# val FILE SAMPLE: a sample's value in a flattened exposition (0 if absent).
val() {
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}

# now_at_least SAMPLE N: the metrics show SAMPLE at N or more now.
now_at_least() {
	mctl metrics | flat >"$TESTDIR/now"
	[ "$(val "$TESTDIR/now" "$1")" -ge "$2" ]
}

# delta A B SAMPLE: how much SAMPLE moved from A to B.
delta() {
	echo $(($(val "$2" "$3") - $(val "$1" "$3")))
}

@test "the exposition parses whole: every family metad_, typed, with HELP; the ones every store has" {
	metad_start
	run -0 mctl metrics
	assert_line --partial '# HELP metad_requests_total '
	assert_line '# TYPE metad_requests_total counter'
	snap "$TESTDIR/m"
	run grep -v '^# metad_' "$TESTDIR/m"
	refute_output --partial '# '
	for f in "metad_requests counter" "metad_request_duration_seconds histogram" \
	    "metad_commits counter" "metad_commit_batch_size histogram" \
	    "metad_bytes_received counter" "metad_bytes_sent counter" \
	    "metad_connections gauge" "metad_watches gauge" "metad_leases gauge" \
	    "metad_keys gauge" "metad_rev gauge" "metad_compact_rev gauge" \
	    "metad_db_bytes gauge" "metad_compaction_duration_seconds histogram" \
	    "metad_watch_cancellations counter" \
	    "metad_loop_lag_seconds histogram" \
	    "metad_process_resident_memory_bytes gauge" \
	    "metad_process_cpu_seconds counter" "metad_store_up gauge"; do
		grep -qx "# $f" "$TESTDIR/m" || fail "no family: $f"
	done
	# Every op shows from the start, ok at 0.
	assert_equal "$(val "$TESTDIR/m" 'metad_requests_total{op=txn,outcome=ok}')" 0
	grep -q '^metad_requests_total{op=txn,outcome=ok} 0$' "$TESTDIR/m"
	[ "$(val "$TESTDIR/m" 'metad_process_resident_memory_bytes{}')" -gt 1000000 ]
	assert_equal "$(val "$TESTDIR/m" 'metad_store_up{}')" 1
}

# bats test_tags=not-remote
@test "N puts count N ok puts; a failed precondition, a bad request and an unknown op under their codes" {
	metad_start
	snap "$TESTDIR/a"
	for i in 1 2 3 4 5; do
		mctl put "k$i" v >/dev/null
	done
	run mctl put k1 w --if-version 9
	assert_failure 3
	run req '{"op":"put","value":"x"}'
	assert_output --partial '"code":"bad_request"'
	run req '{"op":"frobnicate"}'
	assert_output --partial '"code":"unknown_op"'
	mctl get k1 >/dev/null
	snap "$TESTDIR/b"
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=put,outcome=ok}')" 5
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=put,outcome=failed_precondition}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=put,outcome=bad_request}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=unknown,outcome=unknown_op}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=get,outcome=ok}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_request_duration_seconds_count{op=put}')" 7
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_request_duration_seconds_bucket{le=+Inf,op=put}')" 7
	# The snapshot before is itself one metrics request, answered ok.
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=metrics,outcome=ok}')" 1
	# Six writes through the group commit, one at a time: six batches of one.
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commits_total{}')" 6
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commit_batch_size_count{}')" 6
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commit_batch_size_sum{}')" 6
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commit_batch_size_bucket{le=1}')" 6
}

# bats test_tags=not-remote
@test "a pipelined burst: every put counted once, the batches' sizes sum to it" {
	metad_start
	snap "$TESTDIR/a"
	put_n p 200
	snap "$TESTDIR/b"
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=put,outcome=ok}')" 200
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commit_batch_size_sum{}')" 200
	n=$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commits_total{}')
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_commit_batch_size_count{}')" "$n"
	[ "$n" -ge 1 ] && [ "$n" -le 200 ]
}

@test "a line over --max-request-bytes counts as op unknown, request_too_large" {
	metad_start --max-request-bytes 1024
	snap "$TESTDIR/a"
	printf '{"op":"put","key":"k","value":"%02000d"}\n' 0 | raw >"$TESTDIR/out"
	grep -q '"code":"request_too_large"' "$TESTDIR/out"
	snap "$TESTDIR/b"
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=unknown,outcome=request_too_large}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_requests_total{op=put,outcome=ok}')" 0
}

# bats test_tags=no-valgrind
@test "a watcher that does not read: its cancellation counted once, under slow_consumer" {
	metad_start --max-pending-bytes 4096
	# Its reader is stuck until "release go"; the connection stays open
	# until "release stuck".
	raw_held stuck '{"op":"watch","prefix":"s/"}' |
	    { hold_open go; cat >/dev/null; } &
	bg=$!
	until_status watches 1
	snap "$TESTDIR/a"
	v=$(head -c 4000 /dev/zero | tr '\0' v)
	for i in $(seq 1 300); do
		printf '{"op":"put","key":"s/%d","value":"%s"}\n' "$i" "$v"
	done >"$TESTDIR/load"
	socat -t 30 - "UNIX-CONNECT:$SOCK" <"$TESTDIR/load" >"$TESTDIR/acks"
	assert_equal "$(grep -c '"ok":true' "$TESTDIR/acks")" 300
	wait_for now_at_least 'metad_watch_cancellations_total{reason=slow_consumer}' 1
	release go
	release stuck
	wait "$bg" || true
	wait_for status_is watches 0
	snap "$TESTDIR/b"
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_watch_cancellations_total{reason=slow_consumer}')" 1
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_watch_cancellations_total{reason=compacted}')" 0
	assert_equal "$(val "$TESTDIR/b" 'metad_watches{}')" 0
}

@test "bytes received and sent grow by at least what went over the socket" {
	metad_start
	for i in $(seq 1 50); do
		printf '{"op":"put","key":"b%d","value":"%0100d"}\n' "$i" 0
	done >"$TESTDIR/in"
	snap "$TESTDIR/a"
	raw <"$TESTDIR/in" >"$TESTDIR/out"
	assert_equal "$(grep -c '"ok":true' "$TESTDIR/out")" 50
	snap "$TESTDIR/b"
	sent=$(wc -c <"$TESTDIR/in")
	got=$(wc -c <"$TESTDIR/out")
	[ "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_bytes_received_total{}')" -ge "$sent" ]
	[ "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_bytes_sent_total{}')" -ge "$got" ]
}

# bats test_tags=not-remote
@test "gauges: keys, rev and compact_rev as status says; connections and watches open now" {
	metad_start
	put_n g 7
	mctl del g3 >/dev/null
	rev=$(status_field rev)
	mctl compact "$rev" >/dev/null
	raw_held w1 '{"op":"watch","key":"g1"}' >/dev/null &
	raw_held w2 '{"op":"watch","prefix":"g"}' >/dev/null &
	until_status watches 2
	snap "$TESTDIR/m"
	release w1
	release w2
	assert_equal "$(val "$TESTDIR/m" 'metad_keys{}')" 6
	assert_equal "$(val "$TESTDIR/m" 'metad_rev{}')" "$rev"
	assert_equal "$(val "$TESTDIR/m" 'metad_compact_rev{}')" "$rev"
	assert_equal "$(val "$TESTDIR/m" 'metad_watches{}')" 2
	# The two watchers and metactl's own connection.
	assert_equal "$(val "$TESTDIR/m" 'metad_connections{}')" 3
	[ "$(val "$TESTDIR/m" 'metad_db_bytes{}')" -gt 0 ]
	assert_equal "$(val "$TESTDIR/m" 'metad_compaction_duration_seconds_count{}')" 1
	wait_for status_is watches 0
	snap "$TESTDIR/m"
	assert_equal "$(val "$TESTDIR/m" 'metad_watches{}')" 0
	assert_equal "$(val "$TESTDIR/m" 'metad_connections{}')" 1
}

# bats test_tags=not-remote
@test "leases: the live leases the daemon knows" {
	metad_start
	if store_is etcd; then
		# etcd keeps the leases: the daemon knows its session ones.
		raw_held s1 '{"op":"lease_grant","ttl_ms":60000,"session":true}' >/dev/null &
		raw_held s2 '{"op":"lease_grant","ttl_ms":60000,"session":true}' >/dev/null &
		wait_for now_at_least 'metad_leases{}' 2
		assert_equal "$(val "$TESTDIR/now" 'metad_leases{}')" 2
		release s1
		release s2
	else
		a=$(mctl lease grant 60s)
		mctl lease grant 60s >/dev/null
		snap "$TESTDIR/m"
		assert_equal "$(val "$TESTDIR/m" 'metad_leases{}')" 2
		mctl lease revoke "${a%% *}" >/dev/null
		snap "$TESTDIR/m"
		assert_equal "$(val "$TESTDIR/m" 'metad_leases{}')" 1
	fi
}

@test "metactl metrics prints the op's text as is; -o json the answer; a read-only peer may ask" {
	testdir
	chmod 0755 "$TESTDIR"
	metad_start --socket-mode 0666 --read-only-uid 65534
	run -0 mctl -o json metrics
	assert_output --regexp '^\{"ok":true,"text":"# HELP metad_requests_total '
	printf '%s\n' "$output" | jq -r .text >"$TESTDIR/json.txt"
	mctl metrics >"$TESTDIR/plain.txt"
	# The same families and samples, but for what the first request moved.
	diff <(grep '^# ' "$TESTDIR/json.txt") <(grep '^# ' "$TESTDIR/plain.txt")
	[ "$(tail -c 1 "$TESTDIR/plain.txt" | od -An -c | tr -d ' ')" = '\n' ]
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
		run setpriv --reuid=65534 --regid=65534 --clear-groups \
		    "$METACTL" -s "$SOCK" metrics
		assert_success
		assert_line '# TYPE metad_rev gauge'
	fi
	run mctl metrics extra
	assert_failure 2
}

@test "--metrics-listen: GET /metrics serves the same text, 404 elsewhere, bounded headers" {
	port=$(free_port)
	metad_start --metrics-listen "127.0.0.1:$port"
	put_n h 3
	run -0 curl -sS -D "$TESTDIR/hdr" -o "$TESTDIR/http.txt" "http://127.0.0.1:$port/metrics"
	grep -qi '^Content-Type: text/plain; version=0.0.4' "$TESTDIR/hdr"
	flat <"$TESTDIR/http.txt" >"$TESTDIR/h"
	snap "$TESTDIR/m"
	diff <(grep '^# ' "$TESTDIR/h") <(grep '^# ' "$TESTDIR/m")
	assert_equal "$(val "$TESTDIR/h" 'metad_requests_total{op=put,outcome=ok}')" 3
	assert_equal "$(val "$TESTDIR/m" 'metad_requests_total{op=put,outcome=ok}')" 3
	assert_equal "$(val "$TESTDIR/h" 'metad_keys{}')" 3
	run curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other"
	assert_output 404
	run curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics"
	refute_output 200
	run curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 10000 /dev/zero | tr '\0' a)" \
	    "http://127.0.0.1:$port/metrics"
	refute_output 200
	# Still serving after those.
	run -0 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics"
	assert_output 200
}

@test "--metrics-listen: a bad value is a usage error; a port taken fails the start" {
	testdir
	run "$METAD" --metrics-listen 0 --store memory --socket "$TESTDIR/s"
	assert_failure 2
	assert_output --partial 'metrics-listen'
	run "$METAD" --metrics-listen ::1:9100 --store memory --socket "$TESTDIR/s"
	assert_failure 2
	assert_output --partial 'brackets'
	port=$(free_port)
	socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" /dev/null &
	BG=$!
	wait_for ss -Htln "sport = :$port"
	run "$METAD" --metrics-listen "$port" --store memory --socket "$TESTDIR/s"
	stop_bg "$BG"
	assert_failure
	assert_output --partial "cannot listen there"
}

# bats test_tags=store:sqlite
@test "sqlite: every fsync of N puts' batches timed; the WAL's size; checkpoints timed" {
	store_is sqlite || skip "about the sqlite file"
	metad_start --sync full
	snap "$TESTDIR/a"
	grep -qx '# metad_fsync_duration_seconds histogram' "$TESTDIR/a"
	grep -qx '# metad_checkpoint_duration_seconds histogram' "$TESTDIR/a"
	grep -qx '# metad_wal_bytes gauge' "$TESTDIR/a"
	for i in 1 2 3 4; do
		mctl put "f$i" v >/dev/null
	done
	snap "$TESTDIR/b"
	# One at a time: each answered after its own fsync.
	assert_equal "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_fsync_duration_seconds_count{}')" 4
	[ "$(val "$TESTDIR/b" 'metad_wal_bytes{}')" -gt 0 ]
	[ "$(val "$TESTDIR/b" 'metad_wal_bytes{}')" -le "$(val "$TESTDIR/b" 'metad_db_bytes{}')" ]
	# The dirty map is checkpointed once the writes pause.
	wait_for now_at_least 'metad_checkpoint_duration_seconds_count{}' 1
	# A memory-like store would show no such family: not here.
	run grep -c '^# metad_store_requests' "$TESTDIR/b"
	assert_output 0
}

@test "a store's own families are there only where the store measures them" {
	metad_start
	snap "$TESTDIR/m"
	run grep -cE '^# metad_(fsync_duration_seconds|checkpoint_duration_seconds|wal_bytes) ' "$TESTDIR/m"
	if store_is sqlite; then
		assert_output 3
	else
		assert_output 0
	fi
	if store_is etcd; then
		grep -qx '# metad_store_requests counter' "$TESTDIR/m"
	else
		run grep -c '^# metad_store_requests' "$TESTDIR/m"
		assert_output 0
	fi
}

# bats test_tags=store:etcd
@test "etcd: calls to etcd counted by call and outcome, each timed" {
	store_is etcd || skip "about the etcd backend"
	metad_start
	snap "$TESTDIR/a"
	for i in 1 2 3; do
		mctl put "e$i" v >/dev/null
	done
	snap "$TESTDIR/b"
	[ "$(delta "$TESTDIR/a" "$TESTDIR/b" 'metad_store_requests_total{call=Txn,outcome=ok}')" -ge 3 ]
	# Each call's count of outcomes is its histogram's count.
	for c in $(sed -n 's/^metad_store_request_duration_seconds_count{call=\([A-Za-z]*\)}.*/\1/p' "$TESTDIR/b"); do
		sum=$(awk -v c="call=$c," 'index($1, "metad_store_requests_total{" c) == 1 { s += $2 } END { print s + 0 }' "$TESTDIR/b")
		assert_equal "$(val "$TESTDIR/b" "metad_store_request_duration_seconds_count{call=$c}")" "$sum"
	done
}

@test "docs/metrics-alerts.yml: a Prometheus rule file whose rules name families metad serves" {
	"$PY" -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"
	metad_start
	mctl metrics >"$TESTDIR/m.txt"
	run "$PY" - "$ROOT/docs/metrics-alerts.yml" "$TESTDIR/m.txt" <<'EOF'
import re, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
names = [m for m, _ in re.findall(r"^# TYPE (\S+) (\S+)", text, re.M)]
served = set()
for n in names:
    served.update([n, n + "_bucket", n + "_sum", n + "_count"])
rules = [r for g in doc["groups"] for r in g["rules"]]
assert len(rules) >= 3, rules
for g in doc["groups"]:
    assert g["name"] and g["rules"]
for r in rules:
    assert r["alert"] and r["expr"] and r["annotations"]["summary"], r
    used = set(re.findall(r"\bmetad_[a-z_]+", r["expr"]))
    assert used or r["expr"].startswith("up{"), r["alert"]
    # The store's own families show only on a store that measures them.
    missing = {u for u in used - served
               if not u.startswith(("metad_fsync_", "metad_checkpoint_",
                                    "metad_wal_", "metad_store_requests",
                                    "metad_store_request_"))}
    assert not missing, (r["alert"], missing)
print(" ".join(sorted(r["alert"] for r in rules)))
EOF
	assert_success
	assert_output --partial Fsync
	assert_output --partial Loop
	assert_output --partial Watch
}
