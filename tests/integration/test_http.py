"""The HTTP endpoint (control.http_listen) as load balancers, Prometheus,
curl users and hostile clients see it: every path and method, the limits
on headers, idle connections, a request's time, a pipelining slow reader's
memory and a crowd of slow clients (a health check still gets in), a port
already taken, a reload that tries to move it, and a real HAProxy in front
of three daemons whose traffic follows the leader through a failover.

Real daemons, a real ZooKeeper (session timeout 3 s, tickTime 200 ms). Every
wait has a deadline; nothing sleeps and hopes.
"""

import http.client
import http.server
import json
import select
import signal
import socket
import subprocess
import threading
import time

import pytest

from zkharness import (SAN, _reap, _spawn, data_of, free_ports, make_tmpdir,
                       san_env, wait_for, wait_value)

PATHS = ("/leader", "/follower", "/role", "/status", "/metrics", "/health")


# ---------------------------------------------------------------- helpers

def http_daemon(election, id, **kw):
    """A daemon with an HTTP endpoint on a free loopback port (d.http)."""
    (port,) = free_ports(1)
    options = dict(kw.pop("options", None) or {})
    options["control.http_listen"] = f"127.0.0.1:{port}"
    d = election.daemon(id, data=data_of(int(id[-1])), options=options, **kw)
    d.http = port
    return d


def leader_and_follower(election):
    """node1 leading, node2 following, both with an HTTP endpoint."""
    a = http_daemon(election, "node1")
    a.wait_role("leader")
    b = http_daemon(election, "node2")
    b.wait_role("follower")
    election.wait_one_leader()
    return a, b


def get(port, path, method="GET", headers=None, timeout=5):
    """(status, headers dict with lower-case names, body bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        c.close()


def raw(port, request, timeout=5):
    """Sends request bytes, returns everything until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks)


def code(port, path):
    return get(port, path)[0]


def wait_code(port, path, want, timeout=15):
    wait_value(lambda: code(port, path), want, timeout,
               f"GET {path} on :{port} to answer {want}")


# ---------------------------------------------------------------- endpoints

def test_every_path_on_leader_and_follower(election):
    a, b = leader_and_follower(election)

    st, h, body = get(a.http, "/leader")
    assert (st, body) == (200, b"leader\n")
    assert h["content-type"].startswith("text/plain")
    assert h["cache-control"] == "no-store"
    st, _, body = get(b.http, "/leader")
    assert (st, body) == (503, b"not leader: follower\n")

    assert get(b.http, "/follower")[::2] == (200, b"follower\n")
    assert get(a.http, "/follower")[::2] == (503, b"not follower: leader\n")

    assert get(a.http, "/role")[::2] == (200, b"leader\n")
    assert get(b.http, "/role")[::2] == (200, b"follower\n")

    for d in (a, b):
        st, h, body = get(d.http, "/status")
        assert st == 200
        assert h["content-type"] == "application/json"
        doc = json.loads(body)
        sock = json.loads(d.ctl("status json"))
        assert doc.keys() == sock.keys()
        assert doc["id"] == d.id and doc["leader"] == "node1"
        assert doc["role"] == ("leader" if d is a else "follower")

        st, h, body = get(d.http, "/metrics")
        assert st == 200
        assert h["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = body.decode()
        assert "# TYPE zkelectd_is_leader gauge" in text
        want = 1 if d is a else 0
        assert any(l.startswith("zkelectd_is_leader") and
                   l.endswith(f" {want}") for l in text.splitlines()), text

        assert get(d.http, "/health")[::2] == (200, b"ok\n")

    # A query string does not change the path.
    assert get(a.http, "/leader?from=haproxy")[0] == 200

    # A paused follower is no follower for a load balancer; resumed, it is.
    assert b.ctl("pause").strip() == "ok"
    assert get(b.http, "/follower")[::2] == (
        503, b"not follower: observer (paused)\n")
    assert get(b.http, "/role")[2] == b"observer\n"
    assert b.ctl("resume").strip() == "ok"
    wait_code(b.http, "/follower", 200)


def test_head_methods_and_unknown_paths(election):
    a = http_daemon(election, "node1")
    a.wait_role("leader")

    for path in PATHS:
        got = get(a.http, path)
        st, h, body = get(a.http, path, method="HEAD")
        assert st == got[0], path
        assert body == b"", path
        assert int(h["content-length"]) == len(got[2]), path
        # Nothing after the header, even where the client does not know
        # that HEAD has no body.
        out = raw(a.http, f"HEAD {path} HTTP/1.1\r\nHost: x\r\n"
                  "Connection: close\r\n\r\n".encode())
        assert out.endswith(b"\r\n\r\n"), out

    for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
        st, h, body = get(a.http, "/leader", method=method)
        assert st == 405, method
        assert h["allow"] == "GET, HEAD"
        assert b"read-only" in body
    # A POST changes nothing: the leader still leads.
    assert a.role() == "leader"

    st, _, body = get(a.http, "/nope")
    assert st == 404 and b"/leader" in body
    assert get(a.http, "/")[0] == 404
    assert get(a.http, "/leader/")[0] == 404
    assert get(a.http, "/nope", method="POST")[0] == 404

    # libevent refuses CONNECT and methods it does not know itself.
    for line in (b"FOO /leader", b"FOO /nope", b"CONNECT /leader",
                 b"CONNECT example.com:443"):
        with socket.create_connection(("127.0.0.1", a.http),
                                      timeout=5) as s:
            s.sendall(line + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            out = b""
            while b"\r\n" not in out:
                b = s.recv(4096)
                assert b, (line, out)
                out += b
        assert out.startswith(b"HTTP/1.1 501 "), (line, out[:100])


def test_oversized_requests_are_refused(election):
    a = http_daemon(election, "node1")
    a.wait_role("leader")

    out = raw(a.http, b"GET /leader HTTP/1.1\r\nHost: x\r\nX-Big: " +
              b"a" * 20000 + b"\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 400 "), out[:100]

    body = b"x" * 5000
    out = raw(a.http, b"POST /leader HTTP/1.1\r\nHost: x\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert out.startswith(b"HTTP/1.1 413 "), out[:100]

    # The daemon serves on.
    assert get(a.http, "/leader")[::2] == (200, b"leader\n")
    assert a.role() == "leader"


def test_health_and_leader_follow_zookeeper(election, zk):
    a = http_daemon(election, "node1")
    a.wait_role("leader")
    assert code(a.http, "/health") == 200
    server = zk[0]
    try:
        server.stop()
        wait_code(a.http, "/health", 503)
        st, _, body = get(a.http, "/health")
        assert body.startswith(b"zookeeper session ")
        # Without the quorum the lease runs out: no longer leader.
        wait_code(a.http, "/leader", 503)
        assert get(a.http, "/follower")[0] == 503
    finally:
        server.start()
        server.wait_serving()
    wait_code(a.http, "/health", 200, timeout=30)
    wait_code(a.http, "/leader", 200, timeout=30)


def test_idle_connections_do_not_stop_a_failover(election):
    a, b = leader_and_follower(election)

    idle = []
    try:
        # 200 connections to each, sending nothing: more than the daemon
        # serves at once (each new one replaces an old one, and the rest
        # wait in the listen backlog).
        for d in (a, b):
            for _ in range(200):
                s = socket.socket()
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", d.http))
                except BlockingIOError:
                    pass
                idle.append(s)
        wait_for(lambda: "connections open" in b.log_text(), 10,
                 "node2 to have every HTTP connection slot taken")
        # The control socket still answers at once, and the failover is
        # as prompt as ever: node1's session expires (3 s), node2 leads.
        assert b.role() == "follower"
        a.kill()
        b.wait_role("leader", timeout=15)
    finally:
        for s in idle:
            s.close()
    # Once the crowd is gone, HTTP answers again.
    assert b.alive()
    wait_code(b.http, "/leader", 200, timeout=30)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def test_a_pipelining_slow_reader_cannot_grow_memory(election):
    """One client sends GET after GET on one connection without waiting
    and reads the answers only a little every half second, which keeps
    every timeout away: what the daemon holds for it stays small."""
    # AddressSanitizer's quarantine would hold every request's memory freed.
    env = ({"ASAN_OPTIONS": san_env()["ASAN_OPTIONS"] +
            ":quarantine_size_mb=1"} if SAN else None)
    a = http_daemon(election, "node1", env=env)
    a.wait_role("leader")
    assert get(a.http, "/role")[0] == 200
    before = rss_kb(a.pid)
    bound = 64 << 10
    batch = b"GET /role HTTP/1.1\r\nHost: x\r\n\r\n" * 2000
    answers = b""
    with socket.create_connection(("127.0.0.1", a.http)) as s:
        s.setblocking(False)
        sent, t0, last_read = 0, time.monotonic(), 0.0
        # 5 s, or 256 MiB sent: without a bound the daemon passes 64 MiB
        # long before either.
        while time.monotonic() - t0 < 5 and sent < 256 << 20:
            try:
                sent += s.send(batch)
            except BlockingIOError:
                select.select([], [s], [], 0.05)
            if time.monotonic() - last_read >= 0.5:
                last_read = time.monotonic()
                try:
                    answers += s.recv(65536)[:200]
                except BlockingIOError:
                    pass
                grown = rss_kb(a.pid) - before
                assert grown < bound, (
                    f"daemon RSS grew by {grown} kB after {sent >> 20} "
                    "MiB of pipelined requests")
        grown = rss_kb(a.pid) - before
        assert grown < bound, (f"daemon RSS grew by {grown} kB after "
                               f"{sent >> 20} MiB of pipelined requests")
    # The connection was served all along, just no faster than it read.
    assert answers.startswith(b"HTTP/1.1 200 OK\r\n"), answers[:100]
    assert get(a.http, "/leader")[::2] == (200, b"leader\n")
    assert a.role() == "leader"


class SlowClients:
    """n connections that each send one more byte of a request's headers
    every second, and a new one in place of any the daemon closes: a
    stream of slow clients, in a thread."""

    def __init__(self, port, n):
        self.port, self.n = port, n
        self.socks = []
        self.replaced = 0
        self.stop = threading.Event()
        for _ in range(n):
            self.socks.append(self._open())
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self):
        try:
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=1)
            s.sendall(b"GET /leader HTTP/1.1\r\nHost: x\r\n")
            return s
        except OSError:
            return None

    def _alive(self, s):
        if s is None:
            return False
        try:
            if select.select([s], [], [], 0)[0] and not s.recv(4096):
                return False
            s.sendall(b"X")
            return True
        except OSError:
            return False

    def _run(self):
        while not self.stop.wait(1):
            for i, s in enumerate(self.socks):
                if not self._alive(s):
                    if s is not None:
                        s.close()
                    self.socks[i] = self._open()
                    self.replaced += 1

    def close(self):
        self.stop.set()
        self.thread.join(10)
        for s in self.socks:
            if s is not None:
                s.close()


def test_slow_clients_cannot_lock_health_checks_out(election):
    """70 connections that trickle their headers a byte a second, opened
    again as soon as the daemon drops them, take every connection slot
    and more: a health check still gets its answer, again and again."""
    a = http_daemon(election, "node1")
    a.wait_role("leader")
    slow = SlowClients(a.http, 70)
    try:
        wait_for(lambda: "connections open" in a.log_text(), 10,
                 "the slow clients to take every HTTP connection slot")
        t0 = time.monotonic()
        # Over 8 s, longer than a request may take, so that the daemon
        # also drops and the clients open again meanwhile.
        while time.monotonic() - t0 < 8:
            st, _, body = get(a.http, "/leader", timeout=5)
            assert (st, body) == (200, b"leader\n")
            time.sleep(0.5)
        assert slow.replaced > 0, "the daemon closed no slow connection"
    finally:
        slow.close()
    assert a.role() == "leader"


def test_a_request_has_a_deadline(election):
    """A request's headers trickled a byte every half second do not keep
    a connection open past the deadline, 5 s after the accept."""
    a = http_daemon(election, "node1")
    a.wait_role("leader")
    with socket.create_connection(("127.0.0.1", a.http), timeout=2) as s:
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()

        def closed():
            if select.select([s], [], [], 0)[0]:
                try:
                    return s.recv(4096) == b""
                except OSError:
                    return True
            try:
                s.sendall(b"X")
            except OSError:
                return True
            return False
        wait_for(closed, 20, "the daemon to close a trickling request",
                 interval=0.5)
        took = time.monotonic() - t0
    assert took >= 4, f"closed after {took:.1f} s, before the deadline"


def test_port_taken_is_an_error_at_start(election):
    (port,) = free_ports(1)
    taken = socket.socket()
    taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    taken.bind(("127.0.0.1", port))
    taken.listen()
    try:
        d = election.daemon("node1", start=False, options={
            "control.http_listen": f"127.0.0.1:{port}"})
        d.start(wait=False)
        rc = d.wait_exit(timeout=10)
        assert rc != 0
        assert (f"http: cannot listen on 127.0.0.1:{port}: "
                "Address already in use") in d.log_text()
    finally:
        taken.close()


def test_several_addresses_and_reload(election):
    p1, p2, p3 = free_ports(3)
    d = election.daemon("node1", options={
        "control.http_listen": f"127.0.0.1:{p1}, [::1]:{p2}"})
    d.wait_role("leader")
    assert code(p1, "/leader") == 200
    c = http.client.HTTPConnection("::1", p2, timeout=5)
    try:
        c.request("GET", "/leader")
        assert c.getresponse().status == 200
    finally:
        c.close()

    # Moving the endpoint needs a restart: the reload says so and keeps it.
    d.options["control.http_listen"] = f"127.0.0.1:{p3}"
    d.write_config()
    d.signal(signal.SIGHUP)
    wait_for(lambda: "control.http_listen cannot change while running"
             in d.log_text(), 5, "the refusal warning")
    assert code(p1, "/leader") == 200
    with pytest.raises(OSError):
        get(p3, "/leader", timeout=2)


# ---------------------------------------------------------------- HAProxy

class NodeServer:
    """A stand-in for the service behind one node: answers its node id."""

    def __init__(self, id, port):
        body = f"{id}\n".encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                      Handler)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


HAPROXY_CFG = """global
    maxconn 256

defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
    timeout check 1s

listen app
    bind 127.0.0.1:{front}
    option httpchk GET /leader
    default-server inter 100ms fall 1 rise 2
{servers}
"""


def through(front):
    """The node id that answered a request sent through HAProxy, or the
    status code when none did (503: no server is up)."""
    st, _, body = get(front, "/", timeout=5)
    return body.decode().strip() if st == 200 else st


def only(front, id, n=20):
    return all(through(front) == id for _ in range(n))


def leader_only(front, lead):
    """30 requests in a row through HAProxy reach `lead` and nothing else.
    A loaded machine may stall ZooKeeper past the lease (T = 3 s): the
    leader then demotes (lease-lost) and HAProxy answers 503 while nobody
    leads, which is right; such a window is tried again, up to three
    times. No request may ever reach another node."""
    for _ in range(3):
        wait_for(lambda: only(front, lead.id), 30,
                 f"HAProxy to send every request to {lead.id}")
        mark = len(lead.log_text())
        got = [through(front) for _ in range(30)]
        assert set(got) <= {lead.id, 503}, got
        if got == [lead.id] * 30:
            return
        assert "(lease-lost)" in lead.log_text()[mark:], got
    raise AssertionError(f"{lead.id} lost its lease in three windows")


def test_haproxy_sends_traffic_to_the_leader_only(election):
    nodes, apps = [], []
    (front,) = free_ports(1)
    app_ports = free_ports(3)
    tmp = make_tmpdir("zke-")
    proc = None
    try:
        for i in (1, 2, 3):
            apps.append(NodeServer(f"node{i}", app_ports[i - 1]))
            d = http_daemon(election, f"node{i}")
            d.wait_role("leader" if i == 1 else "follower")
            nodes.append(d)
        election.wait_one_leader()
        servers = "\n".join(
            f"    server {d.id} 127.0.0.1:{app_ports[i]} check port {d.http}"
            for i, d in enumerate(nodes))
        cfg = tmp / "haproxy.cfg"
        cfg.write_text(HAPROXY_CFG.format(front=front, servers=servers))
        check = subprocess.run(["haproxy", "-c", "-f", str(cfg)],
                               capture_output=True, text=True, timeout=10)
        assert check.returncode == 0, check.stdout + check.stderr
        log = open(tmp / "haproxy.log", "wb")
        try:
            proc = _spawn(["haproxy", "-db", "-f", str(cfg)], "haproxy",
                          stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()

        leader_only(front, nodes[0])

        nodes[0].kill()
        new = election.wait_one_leader(timeout=20, daemons=nodes[1:])
        leader_only(front, new)
    finally:
        if proc is not None:
            _reap(proc, signal.SIGTERM, 10)
        for app in apps:
            app.close()
