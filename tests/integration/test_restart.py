"""Restart without failover (issue 18): SIGUSR2 re-executes the daemon in
place, keeping its session, sockets and hooks.run's process; a daemon
started again after a crash resumes its live session from the session
file; other signals never kill it.

The lease a re-attached session starts from is the one the daemon had, and
a new connection renews it only after a confirmation paired a report lag
(T/4) after another: the room is the lease's, a fraction of T. These tests
use T = 10 s on a server with tickTime 500 ms (the shared one caps T at
4 s), so that a loaded machine does not eat that room.
"""

import os
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

import zkharness
from zkharness import wait_for

T_MS = 10000


@pytest.fixture(scope="module")
def zk10():
    cluster = zkharness.ZkCluster(size=1, tick_ms=500)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


def _election(request, hosts, t_ms):
    zkharness.binary("zkelectd")
    e = zkharness.Election(hosts, request.node.name, session_timeout_ms=t_ms)
    request.node.zke_election = e
    return e


@pytest.fixture
def el10(request, zk10):
    zk10.ensure_serving()
    e = _election(request, zk10.hosts, T_MS)
    yield e
    problems = e.close()
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def hook_lines(e, since):
    """Hook runs (start lines) in the history after time `since`."""
    return [ev for ev in e.events()
            if ev.ts > since and ev.phase == "start"]


def wait_log(d, text, timeout=20, after=0):
    wait_for(lambda: text in d.log_text()[after:], timeout,
             f"{d.id} to log {text!r}")


class Querier(threading.Thread):
    """Asks the daemon over its control socket (and HTTP when given) in a
    loop until stopped; every failure is kept."""

    def __init__(self, d, http_port=None):
        super().__init__(daemon=True)
        self.d = d
        self.http_port = http_port
        self.stop = threading.Event()
        self.failures = []
        self.answers = 0

    def run(self):
        while not self.stop.is_set():
            try:
                r = self.d.ctl("role", timeout=10).strip()
                if r not in ("leader", "follower"):
                    self.failures.append(f"role {r!r}")
                if self.http_port:
                    url = f"http://127.0.0.1:{self.http_port}/role"
                    with urllib.request.urlopen(url, timeout=10) as resp:
                        resp.read()
                self.answers += 1
            except (OSError, urllib.error.URLError) as e:
                self.failures.append(repr(e))

    def finish(self):
        self.stop.set()
        self.join(30)


def test_sigusr2_reexecs_the_leader_in_place(el10):
    (port,) = zkharness.free_ports(1)
    run = el10.dir / "run.sh"
    run.write_text("#!/bin/sh\necho run started\nexec sleep 1000\n")
    run.chmod(0o755)
    a = el10.daemon("a", options={
        "hooks.run": str(run),
        "control.http_listen": f"127.0.0.1:{port}"})
    a.wait_role("leader", 20)
    b = el10.daemon("b")
    b.wait_role("follower", 20)
    st = a.status()
    run_pid = int(st["run_pid"])
    pid, epoch = a.pid, st["epoch"]
    since = time.time()
    q = Querier(a, port)
    q.start()
    wait_for(lambda: q.answers > 5, 10, "queries answered")
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "resumed: leader", 20, mark)
    answered = q.answers
    wait_for(lambda: q.answers > answered + 5, 10, "queries after")
    q.finish()
    assert q.failures == []
    assert a.alive() and a.pid == pid
    st = a.status()
    assert st["pid"] == str(pid)
    assert st["epoch"] == epoch
    assert st["role"] == "leader"
    assert int(st["run_pid"]) == run_pid
    assert not zkharness.process_gone(run_pid)
    assert b.role() == "follower"
    assert hook_lines(el10, since) == []
    assert "re-executing" in a.log_text()[mark:]
