#!/usr/bin/env python3
"""Watches at scale (issue 37, metad-protocol(7) WATCHES), in one run:

1. Durable puts (sqlite, --sync full) from 16 metabench clients with 0,
   then 10k, 100k and 1M idle watches on keys never written, spread over
   1000 connections, then 0 again once those connections closed (the two
   0 runs bracket the drift of the machine and the database); puts/s,
   each against the mean of the 0 runs, metad's CPU a put (its utime +
   stime over the puts answered) and its RSS.
2. Delivery latency of puts under one prefix to W watchers of it (metabench
   watch: per delivery, and until the last watcher had it), 1000 watchers
   at 100 puts/s and 10000 at 10 puts/s.

    scripts/bench-watch.py [BIN_DIR]        (make bench-watch)

Environment: BENCH_WATCH_SECONDS (5: each measurement; puts are the
median of BENCH_WATCH_ROUNDS of them, 3), BENCH_WATCH_IDLE
(0,10000,100000,1000000), BENCH_WATCH_CONNS (1000), BENCH_WATCH_FANOUT
(1000:100,10000:10, watchers:puts per second), BENCH_WATCH_STORE (sqlite
or memory), BENCH_WATCH_METAD (the metad to measure, default
BIN_DIR/metad: an older build for a side-by-side run).  Bounded: the run stops after 15 minutes.  Prints Markdown
tables and the commands it ran (on stderr).
"""
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "bin"
SECS = float(os.environ.get("BENCH_WATCH_SECONDS", "5"))
IDLE = [int(x) for x in
        os.environ.get("BENCH_WATCH_IDLE", "0,10000,100000,1000000").split(",")]
CONNS = int(os.environ.get("BENCH_WATCH_CONNS", "1000"))
FANOUT = [tuple(int(y) for y in x.split(":")) for x in
          os.environ.get("BENCH_WATCH_FANOUT", "1000:100,10000:10").split(",")]
STORE = os.environ.get("BENCH_WATCH_STORE", "sqlite")
ROUNDS = int(os.environ.get("BENCH_WATCH_ROUNDS", "3"))
METAD = os.environ.get("BENCH_WATCH_METAD", os.path.join(BIN, "metad"))
DEADLINE = time.monotonic() + 900
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[21]) * PAGE


def left():
    if time.monotonic() > DEADLINE:
        raise RuntimeError("the run passed its 15 minutes")


def start(tmp, tag, extra):
    sock = os.path.join(tmp, tag + ".sock")
    store = ("sqlite:" + os.path.join(tmp, tag + ".db")
             if STORE == "sqlite" else STORE)
    cmd = [METAD, "--socket", sock, "--store", store,
           "--log-level", "warn"] + extra
    print("    " + " ".join(cmd), file=sys.stderr)
    p = subprocess.Popen(cmd)
    for _ in range(1000):
        if os.path.exists(sock):
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(sock)
                s.close()
                return p, sock
            except OSError:
                pass
        time.sleep(0.01)
    p.kill()
    raise RuntimeError("metad did not start")


def stop(p):
    p.terminate()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class Idle:
    """Connections holding watches on keys nobody writes."""

    def __init__(self, sock, conns):
        self.sock = sock
        self.conns = []
        self.n = 0
        for _ in range(conns):
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            self.conns.append(s)

    def add(self, total):
        """Up to total watches, spread evenly over the connections."""
        per = {}
        for i in range(self.n, total):
            per.setdefault(i % len(self.conns), []).append(i)
        for c, ids in per.items():
            self.conns[c].sendall(b"".join(
                b'{"op":"watch","key":"bench/idle/%d"}\n' % i for i in ids))
        for c, ids in per.items():
            got, buf = 0, b""
            while got < len(ids):
                left()
                chunk = self.conns[c].recv(1 << 20)
                if not chunk:
                    raise RuntimeError("metad closed a watch connection")
                buf += chunk
                got += chunk.count(b"\n")
                if b'"ok":false' in buf:
                    raise RuntimeError("a watch was refused: %r" %
                                       buf[buf.index(b'"ok":false') - 8:][:300])
                buf = buf[buf.rfind(b"\n") + 1:]
        self.n = total

    def close(self):
        for s in self.conns:
            s.close()
        self.conns = []


def metabench(sock, args):
    cmd = [os.path.join(BIN, "metabench"), "-s", sock] + args + ["-o", "json"]
    print("    " + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True,
                         timeout=SECS + 120).stdout
    return json.loads(out)


def cpu_s(pid):
    """metad's CPU time so far (user + system), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def puts(sock, pid):
    """The median run of ROUNDS: puts/s, its p99, and the median of
    metad's CPU per put (us): on a shared machine durable puts/s drift
    with the disk, the CPU a put costs the daemon much less."""
    runs, cpu = [], []
    for _ in range(ROUNDS):
        left()
        c0 = cpu_s(pid)
        r = metabench(sock, ["put", "--clients", "16", "--pipeline", "1",
                             "--duration", str(SECS)])
        if r["errors"]:
            raise RuntimeError("put errors: %d" % r["errors"])
        runs.append((r["ops_per_s"], r["latency_us"]["p99"]))
        cpu.append((cpu_s(pid) - c0) * 1e6 / max(r["ops"], 1))
    runs.sort()
    cpu.sort()
    return runs[len(runs) // 2] + (cpu[len(cpu) // 2],)


def idle_phase(tmp):
    # --history 10000: the history is trimmed from the first run on, not
    # from the middle of the run (a drift in the puts measured).
    p, sock = start(tmp, "idle", [
        "--history", "10000",
        "--max-connections", str(CONNS + 100),
        "--max-connections-per-peer", str(CONNS + 100),
        "--max-watches-per-peer", str(max(IDLE) + 1000)])
    rows = []
    try:
        idle = Idle(sock, CONNS) if max(IDLE) > 0 else None
        for n in IDLE:
            left()
            t0 = time.monotonic()
            if n > 0:
                idle.add(n)
            setup = time.monotonic() - t0
            rate, p99, cpu = puts(sock, p.pid)
            rows.append((n, rate, p99, cpu, rss(p.pid), setup))
        if idle is not None:
            idle.close()
            time.sleep(1)
            rate, p99, cpu = puts(sock, p.pid)
            rows.append(("0 (after)", rate, p99, cpu, rss(p.pid), 0.0))
    finally:
        stop(p)
    zero = [r for r in rows if r[0] in (0, "0 (after)")] or rows[:1]
    base = sum(r[1] for r in zero) / len(zero)
    cbase = sum(r[3] for r in zero) / len(zero)
    print("| idle watches | puts/s | vs 0 | put p99 (ms) | metad CPU us/put"
          " | vs 0 | metad RSS (MiB) | watches set up in (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for n, rate, p99, cpu, r, setup in rows:
        print("| %s | %.0f | %.3f | %.2f | %.1f | %.2f | %.0f | %.1f |" % (
            n, rate, rate / base, p99 / 1000.0, cpu, cpu / cbase,
            r / 1048576.0, setup))


def fanout_phase(tmp):
    print()
    print("| watchers | puts/s asked | puts/s | delivery p50 / p99 (ms) "
          "| all watchers p50 / p99 (ms) | metad RSS (MiB) |")
    print("|---|---|---|---|---|---|")
    for watchers, rate in FANOUT:
        left()
        p, sock = start(tmp, "fan%d" % watchers, [
            "--max-connections", str(watchers + 100),
            "--max-connections-per-peer", str(watchers + 100)])
        try:
            r = metabench(sock, ["watch", "--clients", str(watchers),
                                 "--rate", str(rate), "--duration",
                                 str(SECS)])
            m = rss(p.pid)
        finally:
            stop(p)
        lat, alld = r["latency_us"], r["all_delivered_us"]
        print("| %d | %d | %.1f | %.2f / %.2f | %.2f / %.2f | %.0f |" % (
            watchers, rate, r["ops_per_s"], lat["p50"] / 1000.0,
            lat["p99"] / 1000.0, alld["p50"] / 1000.0, alld["p99"] / 1000.0,
            m / 1048576.0))


def main():
    need = max([CONNS] + [w for w, _ in FANOUT]) + 200
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    tmp = tempfile.mkdtemp(prefix="bench-watch.")
    try:
        print("metad %s store, %g s a measurement, load average %s" % (
            STORE, SECS, open("/proc/loadavg").read().split()[0]))
        print()
        idle_phase(tmp)
        fanout_phase(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
