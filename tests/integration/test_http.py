"""The HTTP endpoint (control.http_listen) as load balancers, Prometheus,
curl users and hostile clients see it: every path and method, the limits
on headers and idle connections, a port already taken, a reload that tries
to move it, and a real HAProxy in front of three daemons whose traffic
follows the leader through a failover.

Real daemons, a real ZooKeeper (session timeout 3 s, tickTime 200 ms). Every
wait has a deadline; nothing sleeps and hopes.
"""

import http.client
import http.server
import json
import signal
import socket
import subprocess
import threading

import pytest

from zkharness import (_reap, _spawn, data_of, free_ports, make_tmpdir,
                       wait_for, wait_value)

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
        # serves at once (the rest wait in the listen backlog).
        for d in (a, b):
            for _ in range(200):
                s = socket.socket()
                s.setblocking(False)
                try:
                    s.connect(("127.0.0.1", d.http))
                except BlockingIOError:
                    pass
                idle.append(s)
        wait_for(lambda: "connections open, accepting no more" in
                 b.log_text(), 10, "node2 to stop accepting HTTP connections")
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
