#!/usr/bin/env python3
"""lineproxy: a proxy for metad's line protocol that loses an answer.

    lineproxy.py -l SOCKET -u UPSTREAM [-p PIDFILE] [--drop-answer N]...
                 [--op OP[,OP...]] [--match TEXT]

Listens on the Unix socket SOCKET; each client it accepts is connected to
the Unix socket UPSTREAM (a metad), and bytes are copied both ways as they
are.  With --drop-answer N, the N-th answer from upstream (a line holding a
top-level "ok" member; event lines, {"watch":..., are not answers) is not
passed on: the proxy closes both sides of that connection instead, so the
client loses the answer of a request upstream has applied.  Answers are
counted over all connections, from 1; --drop-answer may be given more than
once.  --op (a comma-separated list of ops) and --match (a substring of
the request line) count only the answers to the requests they select
(requests are answered in order: metad-protocol(7), Pipelining and
ordering).  Every dropped answer is logged on stderr:

    lineproxy: dropped answer N (op OP, connection C): its connection closed

The pid file is written once SOCKET listens (a test waits for it); SIGTERM
or SIGINT removes it and SOCKET and exits 0.  Python 3, standard library
only.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading

CHUNK = 65536


class Counter:
    """The answers counted so far over every connection, and which to drop."""

    def __init__(self, drops):
        self.lock = threading.Lock()
        self.seen = 0
        self.drops = set(drops)

    def next_drops(self):
        """Count one answer; true when it is one to drop."""
        with self.lock:
            self.seen += 1
            return self.seen in self.drops


def request_op(line):
    """The "op" of a request line, or None when it is not an object."""
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("op"), str):
        return obj["op"]
    return None


def is_answer(line):
    """A line of upstream's is an answer: a top-level "ok" member."""
    if line.lstrip().startswith(b'{"watch":'):
        return False
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and "ok" in obj


class Pair:
    """One client and its upstream connection, a thread each way."""

    def __init__(self, proxy, client, number):
        self.proxy = proxy
        self.client = client
        self.number = number
        self.upstream = None
        self.lock = threading.Lock()
        self.pending = []  # (op, selected) of each request not yet answered
        self.closed = False
        self.ended = 0  # directions whose stream ended

    def start(self):
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(self.proxy.args.upstream)
        except OSError:
            # Upstream down: the client sees its connection closed.
            up.close()
            self.client.close()
            return
        self.upstream = up
        for target in (self.requests, self.answers):
            threading.Thread(target=target, daemon=True).start()

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def end(self):
        """One direction's stream ended; the second closes both."""
        with self.lock:
            self.ended += 1
            last = self.ended == 2
        if last:
            self.close()

    def selected(self, line, op):
        args = self.proxy.args
        if args.op is not None and op not in args.op:
            return False
        if args.match is not None and args.match not in line:
            return False
        return True

    def requests(self):
        """Client to upstream: passed on as it comes; each whole request
        line noted, before it is sent, with whether it is counted."""
        buf = b""
        try:
            while True:
                data = self.client.recv(CHUNK)
                if not data:
                    self.upstream.shutdown(socket.SHUT_WR)
                    self.end()
                    return
                buf += data
                *lines, buf = buf.split(b"\n")
                with self.lock:
                    for line in lines:
                        if not line.strip(b" \t\r"):
                            continue  # a blank line gets no answer
                        op = request_op(line)
                        self.pending.append((op, self.selected(line, op)))
                self.upstream.sendall(data)
        except OSError:
            self.close()

    def answer_dropped(self, line):
        """Note an answer line; true when it is the one to lose."""
        if not is_answer(line):
            return False
        with self.lock:
            op, chosen = self.pending.pop(0) if self.pending else (None, None)
        if chosen is None:
            # Unasked (permission_denied, unavailable at the limit):
            # counted only when no request is selected.
            chosen = self.proxy.args.op is None and \
                self.proxy.args.match is None
        if not chosen or not self.proxy.counter.next_drops():
            return False
        sys.stderr.write(
            "lineproxy: dropped answer %d (op %s, connection %d): "
            "its connection closed\n"
            % (self.proxy.counter.seen, op or "?", self.number))
        sys.stderr.flush()
        return True

    def answers(self):
        """Upstream to client, whole lines at a time, but the dropped."""
        buf = b""
        try:
            while True:
                data = self.upstream.recv(CHUNK)
                if not data:
                    if buf:
                        self.client.sendall(buf)
                    self.client.shutdown(socket.SHUT_WR)
                    self.end()
                    return
                buf += data
                *lines, buf = buf.split(b"\n")
                out = []
                for line in lines:
                    if self.answer_dropped(line):
                        if out:
                            self.client.sendall(b"".join(out))
                        self.close()
                        return
                    out.append(line + b"\n")
                if out:
                    self.client.sendall(b"".join(out))
        except OSError:
            self.close()


class Proxy:
    def __init__(self, args):
        self.args = args
        self.counter = Counter(args.drop_answer)
        self.listener = None

    def listen(self):
        try:
            os.unlink(self.args.listen)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.args.listen)
        s.listen(64)
        self.listener = s

    def serve(self):
        number = 0
        while True:
            client, _ = self.listener.accept()
            number += 1
            Pair(self, client, number).start()


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="lineproxy.py",
        description="A metad line-protocol proxy that loses answers.")
    p.add_argument("-l", "--listen", required=True, metavar="SOCKET",
                   help="the Unix socket to listen on")
    p.add_argument("-u", "--upstream", required=True, metavar="UPSTREAM",
                   help="the Unix socket of the metad behind it")
    p.add_argument("-p", "--pid-file", metavar="FILE",
                   help="written once SOCKET listens")
    p.add_argument("--drop-answer", type=int, action="append", default=[],
                   metavar="N", help="lose the N-th answer (from 1)")
    p.add_argument("--op", type=lambda s: set(s.split(",")),
                   metavar="OP[,OP...]",
                   help="count only the answers to these ops")
    p.add_argument("--match", type=lambda s: s.encode(), metavar="TEXT",
                   help="count only the answers to requests holding TEXT")
    args = p.parse_args(argv)
    if any(n < 1 for n in args.drop_answer):
        p.error("--drop-answer: N counts from 1")
    return args


def main(argv):
    args = parse_args(argv)
    proxy = Proxy(args)

    def stop(signum, frame):
        for f in (args.pid_file, args.listen):
            if f:
                try:
                    os.unlink(f)
                except OSError:
                    pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        proxy.listen()
    except OSError as e:
        sys.stderr.write("lineproxy: %s: %s\n" % (args.listen, e.strerror))
        return 1
    if args.pid_file:
        tmp = args.pid_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(tmp, args.pid_file)
    proxy.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
