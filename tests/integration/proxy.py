"""A fault-injecting TCP proxy between zkelectd and ZooKeeper, on loopback.

One ZkProxy listens on one free 127.0.0.1 port per upstream server and
forwards every accepted connection to that server, so a daemon configured
with `zookeeper.hosts = proxy.hosts` reaches a standalone server or every
member of an ensemble through it. One thread runs a selector loop; the
controls hand their work to that thread and wait until it is done, so when
freeze() returns no byte moves any more.

Controls
  freeze()   a partition: no byte is forwarded in either direction and no
             new connection is accepted (the kernel completes handshakes
             into the listen backlog, nobody answers), while every socket
             stays open: the client sees silence, never a reset.
  thaw()     forwarding resumes; buffered bytes are delivered, the backlog
             is accepted (as after a healed partition).
  hold_replies()
             a one-way partition: bytes from the client still reach the
             server, but nothing the server sends is forwarded (it waits in
             the proxy) until release_replies() or cut(). A request sent
             while replies are held is applied, its reply is not seen.
  release_replies()
             delivers what was held and forwards again.
  hold_replies_after(marker, types=REQUEST_CREATES)
             one shot, for one connection: the first request of one of
             `types` (ZooKeeper opcodes; by default the creates and multi)
             whose body holds `marker` (bytes) reaches the server, and from
             then on nothing the server sends on that connection reaches
             the client, until it ends: the request is applied, its reply
             is lost, the client's library times the connection out and
             reconnects (a new connection, not held). Only connections made
             after the call are followed. held_pairs counts the connections
             it held.
  cut()      every current connection is reset (RST, SO_LINGER 0) on both
             sides at once.
  flap(period_s, duration_s)
             cut() every period_s for duration_s, in a background thread.
  close()    stops everything: flapping, the loop, every socket.

connect_retry_s, optional (default 0): when the server refuses the
proxy's connection, the proxy tries again every RETRY_S for that long,
holding the client's bytes, before it gives up and ends the client's
connection. A client of a real network would have had its connect refused
and retried by itself (as a ZooKeeper follower does with its leader);
behind a proxy its connect has already succeeded.

rewrite_head(index, data) -> bytes or None, optional: sees the first bytes
a client sends on a connection to upstream `index` (all of them so far) and
returns what to forward instead, or None while it needs more. Used to
rewrite the address a ZooKeeper server announces on its election links.

Every loop is bounded: the selector waits at most POLL seconds, a control
waits at most CALL_TIMEOUT seconds for the loop, and close() joins the
threads with a deadline. Only loopback is used: 127.0.0.1, or another
address of 127/8 to listen on (bind=), for a client that must see other
servers where there is one (ZooKeeper's C client tells its servers apart by
address, not port).
"""

import errno
import selectors
import socket
import struct
import threading
import time

POLL = 0.05
RETRY_S = 0.05
CALL_TIMEOUT = 5.0
BUF_LIMIT = 1 << 20
LOOPBACK = "127.0.0.1"
# ZooKeeper's opcodes of the requests that create: create, multi, create2,
# createContainer, createTTL.
REQUEST_CREATES = (1, 14, 15, 19, 21)


class ProxyError(RuntimeError):
    pass


def _parse_upstreams(upstreams):
    if isinstance(upstreams, str):
        upstreams = [h for h in upstreams.split(",") if h]
    out = []
    for u in upstreams:
        if isinstance(u, str):
            host, port = u.rsplit(":", 1)
            u = (host, int(port))
        host, port = u
        if host not in (LOOPBACK, "localhost"):
            raise ProxyError(f"upstream {host}:{port} is not on loopback")
        out.append((LOOPBACK, int(port)))
    if not out:
        raise ProxyError("no upstream")
    return out


def _reset(sock):
    """Closes sock with an RST instead of a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class _Pair:
    """One proxied connection: the client's socket and ours to the server."""

    def __init__(self, index, client, upstream):
        self.index = index
        self.client = client
        self.upstream = upstream
        self.connected = False      # upstream connect completed
        self.c2u = bytearray()      # client -> server, not yet sent
        self.u2c = bytearray()      # server -> client, not yet sent
        self.head = None            # client's first bytes, while rewritten
        self.born = time.monotonic()
        self.retry_at = None        # when to connect upstream again
        self.closed = False
        self.held = False           # replies held for good (hold_after)
        self.scan = bytearray()     # the client's bytes not yet framed
        self.frames = 0             # the client's frames seen


class ZkProxy:
    """Listens on one loopback port per upstream ZooKeeper server."""

    def __init__(self, upstreams, name="proxy", rewrite_head=None,
                 connect_retry_s=0.0, bind=LOOPBACK, port=0):
        self.name = name
        self.bind = bind
        self.connect_retry_s = connect_retry_s
        self._retrying = []
        self._rewrite_head = rewrite_head
        self._held = False
        self._hold_after = None     # (marker, types), one shot
        self.held_pairs = 0
        self.upstreams = _parse_upstreams(upstreams)
        self._sel = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._calls = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._listeners = []
        self._pairs = []
        self._frozen = False
        self._stop = threading.Event()
        self._flap_stop = threading.Event()
        self._flapper = None
        self._closed = False
        # Counters, for tests and reports.
        self.accepted = 0
        self.cut_count = 0
        self.reset_connections = 0
        try:
            for i, _ in enumerate(self.upstreams):
                ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                ls.bind((bind, port if i == 0 else 0))
                ls.listen(128)
                ls.setblocking(False)
                self._listeners.append(ls)
                self._sel.register(ls, selectors.EVENT_READ, ("listen", i))
        except BaseException:
            for ls in self._listeners:
                ls.close()
            raise
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"{name}-loop")
        self._thread.start()

    # ------------------------------------------------------------ public

    @property
    def ports(self):
        return [ls.getsockname()[1] for ls in self._listeners]

    @property
    def hosts(self):
        """The `zookeeper.hosts` value that goes through this proxy."""
        return ",".join(f"{self.bind}:{p}" for p in self.ports)

    @property
    def frozen(self):
        return self._frozen

    def connections(self, index=None):
        """Number of proxied connections (to upstream `index`, or all)."""
        return self._call(lambda: sum(
            1 for p in self._pairs
            if not p.closed and (index is None or p.index == index)))

    def upstream_ports(self):
        """The local ports of the proxy's open connections to its upstreams,
        established or on the way (what a server sees as the peer port of a
        proxied connection)."""
        def ports():
            out = []
            for p in self._pairs:
                if p.closed or p.upstream is None:
                    continue
                try:
                    out.append(p.upstream.getsockname()[1])
                except OSError:
                    pass
            return out
        return self._call(ports)

    def freeze(self):
        self._call(self._do_freeze)

    def thaw(self):
        self._call(self._do_thaw)

    def hold_replies(self):
        self._call(self._do_hold)

    def release_replies(self):
        self._call(self._do_release)

    def hold_replies_after(self, marker, types=REQUEST_CREATES):
        def arm():
            self._hold_after = (bytes(marker), tuple(types))
        self._call(arm)

    def cut(self):
        """Resets every current connection; returns how many."""
        return self._call(self._do_cut)

    def flap(self, period_s, duration_s):
        """Cuts every connection every period_s seconds for duration_s
        seconds, in a background thread; returns at once."""
        if period_s <= 0 or duration_s < 0:
            raise ValueError("flap needs period_s > 0 and duration_s >= 0")
        self.stop_flap()
        self._flap_stop.clear()
        deadline = time.monotonic() + duration_s

        def run():
            while not self._flap_stop.is_set() and not self._stop.is_set():
                if time.monotonic() >= deadline:
                    break
                try:
                    self.cut()
                except ProxyError:
                    break
                self._flap_stop.wait(period_s)
        self._flapper = threading.Thread(target=run, daemon=True,
                                         name=f"{self.name}-flap")
        self._flapper.start()
        return self._flapper

    def flapping(self):
        return self._flapper is not None and self._flapper.is_alive()

    def wait_flap(self, timeout):
        """Waits for the flapping started by flap() to end."""
        t = self._flapper
        if t is not None:
            t.join(timeout)
            if t.is_alive():
                raise ProxyError(f"{self.name}: flapping outlived {timeout}s")

    def stop_flap(self):
        t = self._flapper
        self._flap_stop.set()
        if t is not None and t is not threading.current_thread():
            t.join(CALL_TIMEOUT)
        self._flapper = None

    def close(self):
        if self._closed:
            return
        self._closed = True
        self.stop_flap()
        self._stop.set()
        self._wake()
        self._thread.join(CALL_TIMEOUT)
        # The loop closed everything on its way out; make sure anyway.
        for p in self._pairs:
            self._close_pair(p, reset=True)
        self._pairs.clear()
        for ls in self._listeners:
            try:
                ls.close()
            except OSError:
                pass
        for s in (self._wake_r, self._wake_w):
            try:
                s.close()
            except OSError:
                pass
        try:
            self._sel.close()
        except (OSError, ValueError, KeyError):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<ZkProxy {self.name} {self.hosts} -> "
                f"{','.join(f'{h}:{p}' for h, p in self.upstreams)}"
                f"{' frozen' if self._frozen else ''}>")

    # ------------------------------------------------------------ plumbing

    def _wake(self):
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass

    def _call(self, fn):
        """Runs fn in the loop thread and returns its result."""
        if self._closed or not self._thread.is_alive():
            raise ProxyError(f"{self.name} is closed")
        done = threading.Event()
        box = {}
        with self._lock:
            self._calls.append((fn, done, box))
        self._wake()
        if not done.wait(CALL_TIMEOUT):
            raise ProxyError(f"{self.name}: the loop did not answer within "
                             f"{CALL_TIMEOUT}s")
        if "exc" in box:
            raise box["exc"]
        return box.get("value")

    def _run_calls(self):
        with self._lock:
            calls, self._calls = self._calls, []
        for fn, done, box in calls:
            try:
                box["value"] = fn()
            except Exception as e:  # noqa: BLE001 - handed to the caller
                box["exc"] = e
            done.set()

    def _run(self):
        try:
            while not self._stop.is_set():
                try:
                    events = self._sel.select(POLL)
                except OSError:
                    events = []
                for key, mask in events:
                    kind, obj = key.data
                    if kind == "wake":
                        try:
                            while self._wake_r.recv(4096):
                                pass
                        except (BlockingIOError, OSError):
                            pass
                    elif kind == "listen":
                        self._accept(obj)
                    else:
                        self._io(obj, key.fileobj, mask)
                self._run_calls()
                self._run_retries()
                if self._pairs and any(p.closed for p in self._pairs):
                    self._pairs = [p for p in self._pairs if not p.closed]
        finally:
            for p in self._pairs:
                self._close_pair(p, reset=True)
            # Callers still waiting get an answer instead of a timeout.
            with self._lock:
                calls, self._calls = self._calls, []
            for _, done, box in calls:
                box["exc"] = ProxyError(f"{self.name} is closed")
                done.set()

    # -- state changes (loop thread only)

    def _do_freeze(self):
        self._frozen = True
        for ls in self._listeners:
            self._set_interest(ls, 0, ("listen", None))
        for p in self._pairs:
            self._update(p)

    def _do_thaw(self):
        self._frozen = False
        for i, ls in enumerate(self._listeners):
            self._set_interest(ls, selectors.EVENT_READ, ("listen", i))
        for p in self._pairs:
            self._update(p)

    def _do_hold(self):
        self._held = True
        for p in self._pairs:
            self._update(p)

    def _do_release(self):
        self._held = False
        for p in self._pairs:
            self._update(p)

    def _do_cut(self):
        n = 0
        for p in self._pairs:
            if not p.closed:
                n += 1
                self._close_pair(p, reset=True)
        self._pairs = []
        self.cut_count += 1
        self.reset_connections += n
        return n

    # -- sockets (loop thread only)

    def _set_interest(self, sock, events, data):
        try:
            key = self._sel.get_key(sock)
        except (KeyError, ValueError):
            key = None
        if events == 0:
            if key is not None:
                self._sel.unregister(sock)
            return
        if key is None:
            self._sel.register(sock, events, data)
        elif key.events != events:
            self._sel.modify(sock, events, data)

    def _update(self, p):
        """Selector interest of both sockets of p from its state."""
        if p.closed:
            return
        if p.upstream is None:          # waiting to connect again
            self._set_interest(p.client, 0, ("conn", p))
            return
        c_ev = u_ev = 0
        if not self._frozen:
            if p.connected:
                if len(p.c2u) < BUF_LIMIT:
                    c_ev |= selectors.EVENT_READ
                if len(p.u2c) < BUF_LIMIT:
                    u_ev |= selectors.EVENT_READ
                if p.c2u:
                    u_ev |= selectors.EVENT_WRITE
                if p.u2c and not (self._held or p.held):
                    c_ev |= selectors.EVENT_WRITE
            else:
                u_ev |= selectors.EVENT_WRITE     # the connect's completion
        self._set_interest(p.client, c_ev, ("conn", p))
        self._set_interest(p.upstream, u_ev, ("conn", p))

    def _accept(self, index):
        if self._frozen or index is None:
            return
        ls = self._listeners[index]
        for _ in range(64):
            try:
                client, _ = ls.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            self.accepted += 1
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            p = _Pair(index, client, None)
            if self._rewrite_head is not None:
                p.head = bytearray()
                p.scan = None       # an election link: not a client's frames
            self._pairs.append(p)
            self._connect_upstream(p)

    def _connect_upstream(self, p):
        up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        up.setblocking(False)
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        p.upstream = up
        p.retry_at = None
        rc = up.connect_ex(self.upstreams[p.index])
        if rc not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
            self._upstream_refused(p)
            return
        if rc == 0:
            p.connected = True
        self._update(p)

    def _upstream_refused(self, p):
        """The server is down: try again while connect_retry_s allows, else
        the client sees its connection end."""
        if time.monotonic() - p.born < self.connect_retry_s:
            try:
                self._sel.unregister(p.upstream)
            except (KeyError, ValueError, OSError):
                pass
            p.upstream.close()
            p.upstream = None
            p.retry_at = time.monotonic() + RETRY_S
            self._retrying.append(p)
            return
        self._close_pair(p, reset=False)

    def _run_retries(self):
        if self._frozen or not self._retrying:
            return
        now = time.monotonic()
        due = [p for p in self._retrying if p.retry_at <= now or p.closed]
        self._retrying = [p for p in self._retrying if p not in due]
        for p in due:
            if not p.closed:
                self._connect_upstream(p)

    def _io(self, p, sock, mask):
        if p.closed or self._frozen:
            return
        if sock is p.upstream and not p.connected:
            err = p.upstream.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err != 0:
                self._upstream_refused(p)
                return
            p.connected = True
            self._update(p)
            return
        if mask & selectors.EVENT_READ:
            src_buf = p.c2u if sock is p.client else p.u2c
            try:
                data = sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                self._finish(p, reset=True)
                return
            if data == b"":
                self._finish(p, reset=False)
                return
            if data and sock is p.client and p.head is not None:
                data = self._rewritten(p, data)
            if data:
                src_buf += data
                if sock is p.client:
                    self._frame(p, data)
        if mask & selectors.EVENT_WRITE or p.c2u or p.u2c:
            if not self._flush(p):
                return
        self._update(p)

    def _frame(self, p, data):
        """Follows the client's frames (a 4-byte length, then the body;
        the first is the connect request, each later one starts with its
        xid and opcode) for hold_replies_after()."""
        if p.scan is None:
            return
        if self._hold_after is None and p.frames > 0:
            p.scan = None           # nothing armed: no need to follow
            return
        p.scan += data
        while len(p.scan) >= 4:
            n = struct.unpack(">i", p.scan[:4])[0]
            if n < 0 or n > BUF_LIMIT:
                p.scan = None       # not ZooKeeper's framing
                return
            if len(p.scan) < 4 + n:
                return
            body = bytes(p.scan[4:4 + n])
            del p.scan[:4 + n]
            p.frames += 1
            if p.frames == 1 or self._hold_after is None or len(body) < 8:
                continue
            marker, types = self._hold_after
            if struct.unpack(">i", body[4:8])[0] in types and \
                    marker in body[8:]:
                self._hold_after = None
                p.held = True
                p.scan = None
                self.held_pairs += 1
                return

    def _rewritten(self, p, data):
        """What to forward of the client's first bytes: nothing while
        rewrite_head needs more, then its answer (unchanged bytes once the
        head is long enough to be no header at all)."""
        p.head += data
        out = self._rewrite_head(p.index, bytes(p.head))
        if out is None and len(p.head) < 4096:
            return b""
        out = bytes(p.head) if out is None else out
        p.head = None
        return out

    def _flush(self, p):
        """Sends what each direction holds; False when p was closed."""
        for dst, buf in ((p.upstream, p.c2u), (p.client, p.u2c)):
            if dst is p.client and (self._held or p.held):
                continue
            while buf:
                try:
                    n = dst.send(buf)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    self._finish(p, reset=True)
                    return False
                del buf[:n]
        return True

    def _finish(self, p, reset):
        """One side ended: deliver what is buffered (best effort), then
        end the other side the same way."""
        if not reset:
            for dst, buf in ((p.upstream, p.c2u), (p.client, p.u2c)):
                if dst is p.client and (self._held or p.held):
                    continue        # held replies are lost with the connection
                try:
                    while buf:
                        n = dst.send(buf)
                        del buf[:n]
                except OSError:
                    pass
        self._close_pair(p, reset=reset)

    def _close_pair(self, p, reset):
        if p.closed:
            return
        p.closed = True
        for s in (p.client, p.upstream):
            if s is None:
                continue
            try:
                self._sel.unregister(s)
            except (KeyError, ValueError, OSError):
                pass
            if reset:
                _reset(s)
            else:
                try:
                    s.close()
                except OSError:
                    pass
