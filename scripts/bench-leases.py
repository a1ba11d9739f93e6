#!/usr/bin/env python3
"""What leases cost metad (issue 16): N live leases, each with a key, and
keepalives at R/s; the daemon's CPU and RSS, side by side with the same
daemon holding N plain keys and answering pings at the same rate (the cost
of any request), in one run.  Bounded: each phase lasts BENCH_LEASE_SECONDS
(default 20 s), and the whole run stops after 10 minutes.

    scripts/bench-leases.py [BIN_DIR]       (make bench-leases)

Environment: BENCH_LEASES (10000), BENCH_LEASE_RATE (1000 keepalives/s),
BENCH_LEASE_SECONDS (20), BENCH_LEASE_STORE (sqlite, memory or etcd),
BENCH_LEASE_TTL_MS (60000).  With etcd, an etcd of its own (default flags,
loopback, a temporary directory) is started for the run, each phase on a
prefix of its own, and etcd's CPU and RSS are measured beside metad's.
Also times lease_list of all the leases, and (etcd) a daemon's start with
them.  Prints a Markdown table and the commands it ran.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "bin"
N = int(os.environ.get("BENCH_LEASES", "10000"))
RATE = int(os.environ.get("BENCH_LEASE_RATE", "1000"))
SECS = float(os.environ.get("BENCH_LEASE_SECONDS", "20"))
STORE = os.environ.get("BENCH_LEASE_STORE", "sqlite")
TTL = int(os.environ.get("BENCH_LEASE_TTL_MS", "60000"))
ETCD = {}   # url, proc
DEADLINE = time.monotonic() + 600
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile("rwb", buffering=0)
        self.buf = b""

    def send(self, reqs):
        self.s.sendall(b"".join(json.dumps(r).encode() + b"\n"
                                for r in reqs))

    def recv(self, n):
        out = []
        while len(out) < n:
            while b"\n" not in self.buf:
                chunk = self.s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("metad closed the connection")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            out.append(json.loads(line))
        return out

    def call(self, reqs):
        self.send(reqs)
        res = self.recv(len(reqs))
        bad = [r for r in res if not r.get("ok")]
        if bad:
            raise RuntimeError("error answers: %r" % bad[:3])
        return res


def proc_cpu_rss(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK    # utime + stime
    rss = int(fields[21]) * PAGE
    return cpu, rss


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def etcd_start(tmp):
    c, p = free_port(), free_port()
    url = "http://127.0.0.1:%d" % c
    cmd = ["etcd", "--name", "bench", "--data-dir",
           os.path.join(tmp, "etcd.data"),
           "--listen-client-urls", url, "--advertise-client-urls", url,
           "--listen-peer-urls", "http://127.0.0.1:%d" % p,
           "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % p,
           "--initial-cluster", "bench=http://127.0.0.1:%d" % p]
    print("    " + " ".join(cmd), file=sys.stderr)
    log = open(os.path.join(tmp, "etcd.log"), "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    for _ in range(1500):
        try:
            with socket.create_connection(("127.0.0.1", c), 0.1):
                ETCD.update(url=url, proc=proc)
                time.sleep(0.5)
                return
        except OSError:
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError("etcd did not start")


def start(tmp, tag, sock_tag=None):
    sock = os.path.join(tmp, (sock_tag or tag) + ".sock")
    if os.path.exists(sock):
        os.unlink(sock)
    extra = []
    if STORE == "sqlite":
        store = "sqlite:" + os.path.join(tmp, tag + ".db")
    elif STORE == "etcd":
        store = "etcd:" + ETCD["url"]
        extra = ["--etcd-prefix", "bench/%s/" % tag]
    else:
        store = STORE
    cmd = [os.path.join(BIN, "metad"), "--socket", sock, "--store", store,
           "--log-level", "warn"] + extra
    print("    " + " ".join(cmd), file=sys.stderr)
    p = subprocess.Popen(cmd)
    for _ in range(500):
        if os.path.exists(sock):
            try:
                return p, Conn(sock)
            except OSError:
                pass
        time.sleep(0.01)
    p.kill()
    raise RuntimeError("metad did not start")


def load(c, leases):
    """N keys, each with a lease of its own when leases (60 s)."""
    ids = []
    for lo in range(0, N, 500):
        hi = min(N, lo + 500)
        if leases:
            res = c.call([{"op": "lease_grant", "ttl_ms": TTL}
                          for _ in range(lo, hi)])
            ids += [r["lease"] for r in res]
            if TTL < 10000:     # short: kept alive while loading too
                c.call([{"op": "lease_keepalive", "lease": i}
                        for i in ids])
            c.call([{"op": "put", "key": "bench/l/%08d" % i, "value": "x",
                     "lease": ids[i]} for i in range(lo, hi)])
        else:
            c.call([{"op": "put", "key": "bench/l/%08d" % i, "value": "x"}
                    for i in range(lo, hi)])
    return ids


def paced(c, make, seconds):
    """make(i) requests at RATE/s for seconds, in 10 ms steps."""
    step = 0.01
    per = max(1, int(RATE * step))
    sent = 0
    t0 = time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end and time.monotonic() < DEADLINE:
        c.call([make(sent + k) for k in range(per)])
        sent += per
        nxt = t0 + (sent / RATE)
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    return sent / (time.monotonic() - t0)


def measure(pid, fn):
    """metad's CPU %, RSS, the rate fn() gives; etcd's CPU % and RSS."""
    epid = ETCD["proc"].pid if ETCD else None
    cpu0, _ = proc_cpu_rss(pid)
    ecpu0 = proc_cpu_rss(epid)[0] if epid else 0.0
    t0 = time.monotonic()
    rate = fn()
    dt = time.monotonic() - t0
    cpu1, rss = proc_cpu_rss(pid)
    ecpu1, erss = proc_cpu_rss(epid) if epid else (0.0, 0)
    return (100.0 * (cpu1 - cpu0) / dt, rss, rate,
            100.0 * (ecpu1 - ecpu0) / dt, erss)


def run(tmp, leases):
    tag = "leases" if leases else "plain"
    p, c = start(tmp, tag)
    try:
        _, rss0 = proc_cpu_rss(p.pid)
        t0 = time.monotonic()
        ids = load(c, leases)
        load_s = time.monotonic() - t0
        # Short leases are kept alive from the start (no idle phase).
        idle = (measure(p.pid, lambda: time.sleep(SECS) or 0.0)
                if not leases or TTL >= 1000 * SECS + 10000 else None)
        if leases:
            busy = measure(p.pid, lambda: paced(
                c, lambda i: {"op": "lease_keepalive",
                              "lease": ids[i % len(ids)]}, SECS))
            t1 = time.monotonic()
            left = c.call([{"op": "lease_list"}])[0]["leases"]
            ls_s = time.monotonic() - t1
            assert len(left) == N, len(left)
        else:
            busy = measure(p.pid, lambda: paced(
                c, lambda i: {"op": "ping"}, SECS))
        keys = c.call([{"op": "list", "prefix": "bench/l/",
                        "keys_only": True, "limit": 10000}])[0]["kvs"]
        assert len(keys) == min(N, 10000), len(keys)
        start_s = None
        if leases and STORE == "etcd":
            # A second daemon on the prefix: its start reads every record.
            t1 = time.monotonic()
            p2, c2 = start(tmp, tag, tag + "2")
            c2.call([{"op": "ping"}])
            start_s = time.monotonic() - t1
            p2.terminate()
            p2.wait()
        return {"tag": tag, "rss0": rss0, "load_s": load_s, "idle": idle,
                "busy": busy, "ls_s": ls_s if leases else None,
                "start_s": start_s}
    finally:
        try:
            if leases:
                c.call([{"op": "lease_revoke", "lease": i} for i in ids])
        finally:
            p.terminate()
            p.wait()


def main():
    tmp = tempfile.mkdtemp(prefix="metad-bench-leases.")
    try:
        print("commands:", file=sys.stderr)
        if STORE == "etcd":
            etcd_start(tmp)
        plain = run(tmp, False)
        lease = run(tmp, True)
    finally:
        if ETCD:
            ETCD["proc"].terminate()
            ETCD["proc"].wait()
        shutil.rmtree(tmp)
    mib = 1 << 20
    print("| %d keys on %s | load (s) | RSS empty | idle CPU | idle RSS "
          "| %d req/s | CPU | RSS |%s" % (N, STORE, RATE,
                                         " etcd idle CPU | etcd CPU | "
                                         "etcd RSS |" if ETCD else ""))
    print("| --- " * (11 if ETCD else 8) + "|")
    for r, what in ((plain, "plain keys; pings"),
                    (lease, "a lease each (%d ms); keepalives" % TTL)):
        idle = r["idle"] or (float("nan"), 0, 0, float("nan"), 0)
        print("| %s | %.1f | %.1f MiB | %.2f%% | %.1f MiB | %.0f/s | "
              "%.1f%% | %.1f MiB |%s" % (
                  what, r["load_s"], r["rss0"] / mib, idle[0],
                  idle[1] / mib, r["busy"][2], r["busy"][0],
                  r["busy"][1] / mib,
                  " %.1f%% | %.1f%% | %.0f MiB |" % (
                      idle[3], r["busy"][3], r["busy"][4] / mib)
                  if ETCD else ""))
    print("\nlease_list of %d leases: %.2f s" % (N, lease["ls_s"]))
    if lease["start_s"] is not None:
        print("a second daemon's start with them: %.2f s"
              % lease["start_s"])


if __name__ == "__main__":
    main()
