#!/usr/bin/env python3
"""Two connections that never read send txns whose answers are large.

answer_flood.py SOCKET PID SECONDS

Each attacker sends, in turn, a txn of 128 gets of the key "big" (1 MiB of
0x01 bytes: six times that JSON-escaped, far past --max-answer-bytes) and
a txn of 2 gets of it (about 12.6 MiB, under the default 16 MiB limit), up
to 400 lines or SECONDS seconds, and reads nothing.  Meanwhile a third
connection pings 21 times, one at a time.  Prints "ping_median_ms N",
"ping_max_ms N", "ping_slow N" (how many took over 100 ms), "hwm_kb N"
(the daemon's peak RSS, VmHWM) and "rss_kb N" (VmRSS at the end).
"""
import json
import os
import socket
import statistics
import sys
import threading
import time

sock_path, pid, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])

get = {"op": "get", "key": "big"}
lines = [
    (json.dumps({"op": "txn", "then": [get] * 128}) + "\n").encode(),
    (json.dumps({"op": "txn", "then": [get] * 2}) + "\n").encode(),
]


def attack(stop):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.setblocking(False)
    pending = b""
    sent = 0
    end = time.monotonic() + seconds
    while sent < 400 and time.monotonic() < end and not stop.is_set():
        if not pending:
            pending = lines[sent % 2]
            sent += 1
        try:
            n = s.send(pending)
            pending = pending[n:]
        except BlockingIOError:
            time.sleep(0.01)
    stop.wait(seconds)
    s.close()


def status(field):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


stop = threading.Event()
threads = [threading.Thread(target=attack, args=(stop,)) for _ in range(2)]
for t in threads:
    t.start()
time.sleep(min(1.0, seconds / 2))

p = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
p.connect(sock_path)
f = p.makefile("rb")
times = []
for i in range(21):
    t0 = time.monotonic()
    p.sendall(b'{"op":"ping"}\n')
    answer = f.readline()
    times.append((time.monotonic() - t0) * 1000)
    if b'"ok":true' not in answer:
        print("ping answered %r" % answer[:200])
        sys.exit(1)
    time.sleep(0.1)
rss = status("VmRSS")
hwm = status("VmHWM")
stop.set()
for t in threads:
    t.join()
print("ping_median_ms %d" % statistics.median(times))
print("ping_max_ms %d" % max(times))
print("ping_slow %d" % sum(1 for t in times if t > 100))
print("hwm_kb %d" % hwm)
print("rss_kb %d" % rss)
