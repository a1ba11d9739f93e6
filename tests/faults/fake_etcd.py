#!/usr/bin/python3
"""fake_etcd: a hostile server on the etcd URL, for etcd_bounds.bats.

fake_etcd.py PORT MODE [PIDFILE]

Speaks gRPC over HTTP/2 (h2c, prior knowledge, python3-h2) on 127.0.0.1:
PORT well enough for metad to open its etcd store on it: every call is
answered at revision 1 with an empty answer (a Range with no kvs, a Txn
that succeeded), a Watch with "created" and then silence.  A Range whose
request holds the bytes "attack" is answered as MODE says:

  huge     one message of 15 MiB of empty kvs (two bytes each): a
           decoder building a node per kv amplifies it about 40 times
  forever  a message whose prefix claims 1 GiB, its bytes sent forever
  headers  header blocks without end (trailers of 1000 headers, again)

One line on stderr per attack; SIGTERM stops it.
"""
import os
import signal
import socket
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions

port, mode = int(sys.argv[1]), sys.argv[2]
pidfile = sys.argv[3] if len(sys.argv) > 3 else None


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(no, payload):
    return varint(no << 3 | 2) + varint(len(payload)) + payload


def vfield(no, v):
    return varint(no << 3) + varint(v)


HEADER = field(1, vfield(1, 1) + vfield(2, 1) + vfield(3, 1) + vfield(4, 1))


FILLER = b"\x12\x00" * 8192    # empty kvs of a RangeResponse


def grpc(msg):
    return b"\0" + len(msg).to_bytes(4, "big") + msg


def answer_of(path):
    if path.endswith("/Txn"):
        return HEADER + vfield(2, 1)
    if path.endswith("/LeaseGrant"):
        return HEADER + vfield(2, 7) + vfield(3, 60)
    return HEADER


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False))
        self.paths = {}
        self.bodies = {}
        # stream: (prefix still to send, filler bytes left, trailers after)
        self.pending = {}
        self.watches = set()

    def send_headers(self, sid, end=False):
        self.h2.send_headers(sid, [(":status", "200"),
                                   ("content-type", "application/grpc")],
                             end_stream=end)

    def trailers(self, sid):
        self.h2.send_headers(sid, [("grpc-status", "0")], end_stream=True)

    def push_one(self, sid):
        """One frame of stream sid's bytes, as the windows allow: 1 if sent."""
        head, left, trailers = self.pending[sid]
        room = min(self.h2.local_flow_control_window(sid),
                   self.h2.max_outbound_frame_size)
        if room <= 0:
            return 0
        if head:
            data, head = head[:room], head[room:]
        else:
            n = min(room, left) & ~1
            data, left = FILLER[:n], left - n
        if data:
            self.h2.send_data(sid, data)
        self.pending[sid] = (head, left, trailers)
        if not head and left < 2:
            del self.pending[sid]
            if trailers:
                self.trailers(sid)
        return 1 if data else 0

    def push(self):
        """The pending streams' bytes, a frame each in turn."""
        sent = 1
        while sent and self.pending:
            sent = 0
            for sid in list(self.pending):
                sent += self.push_one(sid)

    def attack(self, sid):
        sys.stderr.write("fake_etcd: attack %s\n" % mode)
        sys.stderr.flush()
        self.send_headers(sid)
        if mode == "huge":
            n = 15 << 20
            self.pending[sid] = (b"\0" + n.to_bytes(4, "big"), n, True)
        elif mode == "forever":
            self.pending[sid] = (b"\0" + (1 << 30).to_bytes(4, "big"),
                                 1 << 40, False)
        elif mode == "headers":
            self.h2.send_data(sid, grpc(HEADER))
            self.headers_forever(sid)
            return
        self.push()

    def headers_forever(self, sid):
        # A trailer block of many headers, without END_STREAM, again and
        # again: h2 refuses a second block, so the frames are written raw.
        block = self.h2.encoder.encode(
            [("x-pad-%d" % i, "v" * 100) for i in range(1000)])
        frames = bytearray()
        chunk = 16384
        first = True
        for off in range(0, len(block), chunk):
            part = block[off:off + chunk]
            last = off + chunk >= len(block)
            ftype = 1 if first else 9       # HEADERS, then CONTINUATION
            flags = 0x4 if last else 0      # END_HEADERS
            frames += len(part).to_bytes(3, "big") + bytes([ftype, flags])
            frames += (sid & 0x7FFFFFFF).to_bytes(4, "big") + part
            first = False
        self.sock.sendall(self.h2.data_to_send())
        try:
            while True:
                self.sock.sendall(bytes(frames))
        except OSError:
            pass

    def handle(self, ev):
        if isinstance(ev, h2.events.RequestReceived):
            self.paths[ev.stream_id] = dict(ev.headers).get(
                b":path", b"").decode()
            self.bodies[ev.stream_id] = b""
        elif isinstance(ev, h2.events.DataReceived):
            self.h2.acknowledge_received_data(ev.flow_controlled_length,
                                              ev.stream_id)
            sid = ev.stream_id
            self.bodies[sid] = self.bodies.get(sid, b"") + ev.data
            path = self.paths.get(sid, "")
            if path.endswith("/Watch") and sid not in self.watches:
                self.watches.add(sid)
                self.send_headers(sid)
                self.h2.send_data(sid, grpc(HEADER + vfield(3, 1)))
        elif isinstance(ev, h2.events.StreamEnded):
            sid = ev.stream_id
            path = self.paths.get(sid, "")
            if path.endswith("/Watch"):
                return
            if path.endswith("/Range") and b"attack" in self.bodies[sid]:
                self.attack(sid)
                return
            self.send_headers(sid)
            self.h2.send_data(sid, grpc(answer_of(path)))
            self.trailers(sid)
        elif isinstance(ev, h2.events.WindowUpdated):
            self.push()
        elif isinstance(ev, h2.events.StreamReset):
            self.pending.pop(ev.stream_id, None)

    def run(self):
        self.h2.initiate_connection()
        self.sock.sendall(self.h2.data_to_send())
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return
                for ev in self.h2.receive_data(data):
                    self.handle(ev)
                out = self.h2.data_to_send()
                if out:
                    self.sock.sendall(out)
        except (OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            self.sock.close()


def main():
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", port))
    lst.listen(16)
    if pidfile:
        with open(pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    while True:
        s, _ = lst.accept()
        threading.Thread(target=Conn(s).run, daemon=True).start()


main()
