"""A bare ZooKeeper client for tests that must see the wire.

kazoo hands watch events and replies to different threads, so the order
in which they arrive on the connection is lost by the time a test sees
them. RawZk speaks the client protocol on one blocking socket, with
kazoo's serializers, and keeps every frame the server sent in arrival
order (`frames`): a test can tell whether a watch event came before a
reply. It sends nothing on its own (no pings): keep its sessions' timeouts
longer than what a test does with them, or call ping().

    raw = RawZk("127.0.0.1", port, timeout_ms=10000)
    xid = raw.send(GetData("/x", True))
    frame = raw.wait_reply(xid)
    raw.close()
"""

import socket
import struct
import time
from dataclasses import dataclass

from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.serialization import (Close, Connect, Ping, ReplyHeader,
                                          Watch, int_struct)

WATCH_XID = -1
PING_XID = -2
NO_PASSWORD = b"\0" * 16


class RawZkError(AssertionError):
    pass


@dataclass
class Frame:
    n: int              # arrival order on this connection, from 0
    t: float            # time.monotonic() when it was read
    xid: int
    zxid: int
    err: int            # 0 or a ZooKeeper error code
    request: object     # the request this replies to (None for events, pings)
    value: object       # the deserialized reply body, or a Watch

    @property
    def is_event(self):
        return self.xid == WATCH_XID

    @property
    def error(self):
        """The kazoo exception class of err, or None."""
        return EXCEPTIONS[self.err] if self.err else None

    def __str__(self):
        what = ("event" if self.is_event else "ping" if self.xid == PING_XID
                else f"reply xid={self.xid} {type(self.request).__name__}")
        err = f" err={self.error.__name__}" if self.err else ""
        return f"#{self.n} {what} zxid={self.zxid:#x}{err} {self.value!r}"


class RawZk:
    """One ZooKeeper session on one connection (or a reattachment of an
    existing session: pass session_id and passwd)."""

    def __init__(self, host, port, timeout_ms=10000, session_id=0,
                 passwd=NO_PASSWORD, connect_timeout=10.0, last_zxid=0):
        self.sock = socket.create_connection((host, port), timeout=connect_timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.frames = []
        self.pending = {}       # xid -> request
        self.next_xid = 1
        self._buf = bytearray()
        body = Connect(0, last_zxid, timeout_ms, session_id, passwd, False).serialize()
        self.sock.sendall(int_struct.pack(len(body)) + body)
        answer = self._read_frame(time.monotonic() + connect_timeout)
        connect, _ = Connect.deserialize(answer, 0)
        self.timeout_ms = connect.time_out
        self.session_id = connect.session_id
        self.passwd = connect.passwd
        if self.timeout_ms <= 0:
            self.close()
            raise RawZkError(f"session {session_id:#x} is expired (the server "
                             f"answered timeout {connect.time_out})")

    @property
    def sid_hex(self):
        """The session id as the election names it: 16 lowercase hex digits."""
        return f"{self.session_id:016x}"

    # -- wire

    def _read_frame(self, deadline):
        while True:
            if len(self._buf) >= 4:
                (n,) = struct.unpack_from("!i", self._buf, 0)
                if len(self._buf) >= 4 + n:
                    frame = bytes(self._buf[4:4 + n])
                    del self._buf[:4 + n]
                    return frame
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame from the server in time")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buf += chunk

    def send(self, request, xid=None):
        """Sends a request (a kazoo serialization tuple); returns its xid."""
        if xid is None:
            xid = self.next_xid
            self.next_xid += 1
        body = int_struct.pack(xid) + int_struct.pack(request.type) + request.serialize()
        self.sock.sendall(int_struct.pack(len(body)) + body)
        self.pending[xid] = request
        return xid

    def ping(self):
        return self.send(Ping(), xid=PING_XID)

    def read(self, timeout):
        """The next frame from the server (also kept in self.frames)."""
        data = self._read_frame(time.monotonic() + timeout)
        header, off = ReplyHeader.deserialize(data, 0)
        request = value = None
        if header.xid == WATCH_XID:
            value, _ = Watch.deserialize(data, off)
        elif header.xid == PING_XID:
            self.pending.pop(PING_XID, None)
        else:
            request = self.pending.pop(header.xid, None)
            if header.err == 0 and request is not None and off < len(data):
                value = request.deserialize(data, off)
        f = Frame(len(self.frames), time.monotonic(), header.xid, header.zxid,
                  header.err, request, value)
        self.frames.append(f)
        return f

    def wait_reply(self, xid, timeout=10.0):
        """Reads frames until the reply to xid; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            f = self.read(max(0.001, deadline - time.monotonic()))
            if f.xid == xid:
                return f

    def call(self, request, timeout=10.0):
        """send + wait_reply; raises the kazoo exception of an error."""
        f = self.wait_reply(self.send(request), timeout)
        if f.err:
            raise f.error()
        return f.value

    def events(self):
        return [f for f in self.frames if f.is_event]

    def close_session(self, timeout=10.0):
        """Ends the session (its ephemeral nodes go), then the connection."""
        try:
            self.wait_reply(self.send(Close()), timeout)
        finally:
            self.close()

    def close(self):
        """Drops the connection without closing the session (a client that
        died): the session lives on until it expires."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
