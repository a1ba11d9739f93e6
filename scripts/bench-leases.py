#!/usr/bin/env python3
"""What leases cost metad (issue 16): N live leases, each with a key, and
keepalives at R/s; the daemon's CPU and RSS, side by side with the same
daemon holding N plain keys and answering pings at the same rate (the cost
of any request), in one run.  Bounded: each phase lasts BENCH_LEASE_SECONDS
(default 20 s), and the whole run stops after 10 minutes.

    scripts/bench-leases.py [BIN_DIR]       (make bench-leases)

Environment: BENCH_LEASES (10000), BENCH_LEASE_RATE (1000 keepalives/s),
BENCH_LEASE_SECONDS (20), BENCH_LEASE_STORE (sqlite).  Prints a Markdown
table and the commands it ran.
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


def start(tmp, tag):
    sock = os.path.join(tmp, tag + ".sock")
    store = ("sqlite:" + os.path.join(tmp, tag + ".db")
             if STORE == "sqlite" else STORE)
    cmd = [os.path.join(BIN, "metad"), "--socket", sock, "--store", store,
           "--log-level", "warn"]
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
            res = c.call([{"op": "lease_grant", "ttl_ms": 60000}
                          for _ in range(lo, hi)])
            ids += [r["lease"] for r in res]
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
    cpu0, _ = proc_cpu_rss(pid)
    t0 = time.monotonic()
    rate = fn()
    dt = time.monotonic() - t0
    cpu1, rss = proc_cpu_rss(pid)
    return 100.0 * (cpu1 - cpu0) / dt, rss, rate


def run(tmp, leases):
    tag = "leases" if leases else "plain"
    p, c = start(tmp, tag)
    try:
        _, rss0 = proc_cpu_rss(p.pid)
        t0 = time.monotonic()
        ids = load(c, leases)
        load_s = time.monotonic() - t0
        idle = measure(p.pid, lambda: time.sleep(SECS) or 0.0)
        if leases:
            busy = measure(p.pid, lambda: paced(
                c, lambda i: {"op": "lease_keepalive",
                              "lease": ids[i % len(ids)]}, SECS))
            left = c.call([{"op": "lease_list"}])[0]["leases"]
            assert len(left) == N, len(left)
        else:
            busy = measure(p.pid, lambda: paced(
                c, lambda i: {"op": "ping"}, SECS))
        keys = c.call([{"op": "list", "prefix": "bench/l/",
                        "keys_only": True, "limit": 10000}])[0]["kvs"]
        assert len(keys) == min(N, 10000), len(keys)
        return {"tag": tag, "rss0": rss0, "load_s": load_s, "idle": idle,
                "busy": busy}
    finally:
        p.terminate()
        p.wait()


def main():
    tmp = tempfile.mkdtemp(prefix="metad-bench-leases.")
    try:
        print("commands:", file=sys.stderr)
        plain = run(tmp, False)
        lease = run(tmp, True)
    finally:
        shutil.rmtree(tmp)
    mib = 1 << 20
    print("| %d keys on %s | load (s) | RSS empty | idle CPU | idle RSS "
          "| %d req/s | CPU | RSS |" % (N, STORE, RATE))
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r, what in ((plain, "plain keys; pings"),
                    (lease, "a lease each; keepalives")):
        print("| %s | %.1f | %.1f MiB | %.2f%% | %.1f MiB | %.0f/s | "
              "%.1f%% | %.1f MiB |" % (
                  what, r["load_s"], r["rss0"] / mib, r["idle"][0],
                  r["idle"][1] / mib, r["busy"][2], r["busy"][0],
                  r["busy"][1] / mib))


if __name__ == "__main__":
    main()
