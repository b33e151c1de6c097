"""What the daemon's log says, and how much: dated timestamps, the change of
leader on every node, quiet passing health checks, and ZooKeeper's client
library collapsed when it repeats itself. Real daemons, a real ZooKeeper;
every wait has a deadline."""

import re
import socket
import threading

from zkharness import free_ports, start_in_order, wait_for

# RFC 3339 UTC to the millisecond, then the program's name.
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z zkelectd: ")


def daemon_lines(d):
    return [l for l in d.log_text().splitlines() if not l.startswith("====")]


def test_lines_carry_a_dated_timestamp(election):
    d = election.daemon("node1")
    d.wait_role("leader")
    d.stop()
    lines = daemon_lines(d)
    assert lines
    bad = [l for l in lines if not STAMP.match(l)]
    assert not bad, bad[:5]


class Refuser:
    """A "server" that takes each connection and closes it at once: a
    ZooKeeper that is down, whose client's attempts can be counted."""

    def __init__(self):
        self.port = free_ports(1)[0]
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            c.close()
            self.accepted += 1

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


def test_zookeeper_down_is_collapsed(election):
    srv = Refuser()
    try:
        d = election.daemon("node1", hooks=False, options={
            "zookeeper.hosts": f"127.0.0.1:{srv.port}",
            "control.log_level": "info"})
        wait_for(lambda: srv.accepted >= 15, 60, "fifteen connection attempts")
        d.stop()
    finally:
        srv.close()
    zk = [l for l in daemon_lines(d) if "zkelectd: zookeeper: " in l]
    repeated = [l for l in zk if "repeated" in l]
    assert repeated, "\n".join(zk)
    # Each distinct complaint once, then its count.
    assert len(zk) - len(repeated) <= 4, "\n".join(zk)
    counts = [int(re.search(r"repeated (\d+) more times?:", l).group(1))
              for l in repeated]
    assert max(counts) >= 10, repeated


def test_follower_logs_the_new_leader(election):
    n1, n2, n3 = start_in_order(election, 3)
    for d in (n2, n3):
        wait_for(lambda d=d: "leader is now node1 (epoch " in d.log_text(), 10,
                 f"{d.id} to log node1 leads")
    n1.stop()
    n2.wait_role("leader", 15)
    epoch = n2.leader()["epoch"]
    wait_for(lambda: f"leader is now node2 (epoch {epoch})" in n3.log_text(), 10,
             "node3 to log node2 leads")
    assert re.search(r"zkelectd: no leader$|zkelectd: leader is now node2",
                     n3.log_text(), re.M)


def test_passing_checks_log_nothing_at_info(election):
    runs = election.dir / "checks"
    sick = election.dir / "sick"
    d = election.daemon("node1", options={
        "hooks.check": f"echo run >>{runs}; echo checked the service; "
                       f"test ! -e {sick}",
        "hooks.check_interval": "100ms",
        # The interval is also the check's timeout: on a busy machine a
        # shell can take longer than 100 ms now and then, and two such in
        # a row must not make the leader leave in the middle of the test.
        "hooks.check_fall": "5",
        "control.log_level": "info"})
    d.wait_role("leader")
    wait_for(lambda: runs.exists(), 15, "a first health check")
    before = len(daemon_lines(d))
    n = len(runs.read_text().splitlines())
    wait_for(lambda: len(runs.read_text().splitlines()) >= n + 20, 30,
             "twenty more health checks")
    after = [l for l in daemon_lines(d)[before:] if "check" in l]
    # Neither the daemon's words nor the check's own output. A check
    # killed to make way for a demote (a loaded machine can bring a leader
    # to its demote point, and a renewal then keeps it leading) is not a
    # passing one: its output and its end are logged, one after the other.
    passing = [l for i, l in enumerate(after)
               if "check hook timed out" not in l and not
               (i + 1 < len(after) and "check hook timed out" in after[i + 1])]
    assert not passing, after[:10]
    assert d.role() == "leader"

    # A failing check's output is what the operator needs: it is logged.
    sick.touch()
    d.wait_role("observer", 15)
    assert re.search(r"hook check\[\d+\]: checked the service$", d.log_text(),
                     re.M), d.log_tail()
    assert "health check failed 5 times" in d.log_text()


TRACE_KV = re.compile(r"(\w+)=(\S+)")


def trace_lines(d, kind):
    out = []
    for m in re.finditer(rf"zkelectd: trace {kind}(?:\[(\d+)\])?: (.*)$",
                         d.log_text(), re.M):
        out.append(dict(TRACE_KV.findall(m.group(2)), pid=m.group(1)))
    return out


def test_handover_is_traced_at_debug_only(election):
    """At debug, the successor writes the stamps of its path from the
    release's notification to its promote hook's execve, and the old
    leader those of its demote hook's end to the release, in the order
    they happened (bench/failover/share.py reads them). At info, nothing,
    and the stamps are not even taken."""
    n1, n2 = start_in_order(election, 2)
    n3 = election.daemon("node3", options={"control.log_level": "info"})
    n3.wait_role("follower", 15)
    assert n1.ctl("resign").strip() == "ok"
    n2.wait_role("leader", 15)
    wait_for(lambda: trace_lines(n2, "promote") and
             trace_lines(n1, "release"), 10, "the handover's trace lines")
    p = trace_lines(n2, "promote")[-1]
    assert p["cause"].startswith(f"watch:{election.path}/"), p
    order = ["queued", "drained", "delivered", "decided", "entered",
             "spawning", "spawned"]
    stamps = [int(p[k]) for k in order]
    assert all(s > 0 for s in stamps), p
    assert stamps == sorted(stamps), p
    r = trace_lines(n1, "release")[-1]
    assert r["cause"] == "hook-end", r
    assert 0 < int(r["reaped"]) <= int(r["sending"]) <= int(r["sent"]), r
    # Nothing is written between the notification and the hook, nor
    # between the demote's end and the release: the lines come after.
    log = n2.log_text()
    started = log.index(f"hook promote[{p['pid']}]: started")
    signal = log.index(f"watch 2 on {p['cause'][len('watch:'):]}:")
    assert signal > started, log[started - 2000:signal + 200]
    ends = re.findall(r"(role demoting -> follower|hook demote\[\d+\]: over:)",
                      n1.log_text())
    assert ends[-2:] == ["role demoting -> follower",
                         "hook demote[" + r["hook"] + "]: over:"], ends
    # node3 (info) leads next: no stamp, no line.
    assert n2.ctl("resign").strip() == "ok"
    wait_for(lambda: n3.role() == "leader" or n1.role() == "leader", 15,
             "a third leader")
    assert "trace " not in n3.log_text()
