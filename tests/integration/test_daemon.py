"""The daemon's own contract beyond the election: systemd notification,
journal priorities, SIGHUP reload, ACLs, a custom root, observer mode, health
checks, failed demote hooks and command-line overrides. Real daemons, a real
ZooKeeper; every wait has a deadline."""

import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest


from proxy import ZkProxy
from zkharness import binary, check_no_overlap, hook_runs, parse_kv, wait_for


class NotifySocket:
    """A stand-in for systemd's notification socket: collects datagrams."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        deadline = time.monotonic() + 120
        while self.running and time.monotonic() < deadline:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                break
            self._received(data.decode(errors="replace"))

    def _received(self, text):
        with self.lock:
            self.messages.append(text)

    def lines(self):
        with self.lock:
            return [l for m in self.messages for l in m.splitlines()]

    def wait(self, pred, timeout, what):
        return wait_for(lambda: pred(self.lines()), timeout, what)

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


def test_systemd_notify_ready_status_watchdog_reload_stopping(election):
    ns = NotifySocket(election.dir / "notify.sock")
    try:
        d = election.daemon("node1", env={"NOTIFY_SOCKET": ns.path,
                                          "WATCHDOG_USEC": "400000"})
        d.wait_role("leader")
        ns.wait(lambda ls: "READY=1" in ls, 5, "READY=1")
        ns.wait(lambda ls: any(l.startswith("STATUS=leader") for l in ls), 5,
                "STATUS=leader")
        lines = ns.lines()
        # READY comes once a role is known, never before the first STATUS.
        first_status = next(i for i, l in enumerate(lines) if l.startswith("STATUS="))
        assert lines.index("READY=1") >= first_status
        assert any("node1" in l for l in lines if l.startswith("STATUS=leader"))
        # The watchdog is fed every half of WATCHDOG_USEC (200 ms).
        ns.wait(lambda ls: ls.count("WATCHDOG=1") >= 5, 5, "five WATCHDOG=1")

        d.signal(signal.SIGHUP)
        ns.wait(lambda ls: "RELOADING=1" in ls and
                ls[ls.index("RELOADING=1"):].count("READY=1") >= 1, 5,
                "RELOADING=1 then READY=1")
        assert d.stop() == 0
        # Sent before the daemon exited, so queued already; the reader
        # thread may not have taken it yet.
        ns.wait(lambda ls: "STOPPING=1" in ls, 10, "STOPPING=1")
    finally:
        ns.close()


def test_systemd_hears_no_ready_after_stopping_nor_a_status_twice(election):
    """SIGUSR2 during a promote waits for the hook; a SIGTERM in that wait
    gives the re-exec up, and systemd must not then hear READY=1 from a
    daemon that said STOPPING=1 (a reviewer's RELOADING, STOPPING, READY).
    STATUS= goes out only when its text changes."""
    ns = NotifySocket(election.dir / "notify.sock")
    try:
        # The slow promote set before the start: the first promote is it.
        d = election.daemon("node1", start=False,
                            env={"NOTIFY_SOCKET": ns.path})
        d.hook_conf(promote_sleep=3)
        d.start()
        d.wait_role("promoting", timeout=15)
        d.signal(signal.SIGUSR2)
        ns.wait(lambda ls: "RELOADING=1" in ls, 5, "RELOADING=1")
        d.signal(signal.SIGTERM)
        assert d.wait_exit(30) == 0
        ns.wait(lambda ls: "STOPPING=1" in ls, 10, "STOPPING=1")
        time.sleep(0.3)     # the reader thread takes what was queued
        lines = ns.lines()
        after = lines[lines.index("STOPPING=1"):]
        assert "READY=1" not in after and "RELOADING=1" not in after, lines
        status = [l for l in lines if l.startswith("STATUS=")]
        assert all(a != b for a, b in zip(status, status[1:])), status
    finally:
        ns.close()


def test_systemd_hears_no_ready_after_a_stop_during_the_startup_demote(
        election):
    """SIGTERM while the startup demote runs: the unit never was ready,
    and a daemon that said STOPPING=1 must not say READY=1 once that
    demote ends (systemd would make a stopping unit active)."""
    ns = NotifySocket(election.dir / "notify.sock")
    try:
        d = election.daemon("node1", start=False,
                            env={"NOTIFY_SOCKET": ns.path})
        d.hook_conf(demote_sleep=2)     # hooks.demote_on_start's default
        d.start(wait=False)
        wait_for(lambda: "running demote hook" in d.log_text(), 10,
                 "the startup demote")
        d.signal(signal.SIGTERM)
        assert d.wait_exit(30) == 0
        ns.wait(lambda ls: "STOPPING=1" in ls, 10, "STOPPING=1")
        time.sleep(0.3)     # the reader thread takes what was queued
        lines = ns.lines()
        assert "READY=1" not in lines[lines.index("STOPPING=1"):], lines
    finally:
        ns.close()


def test_journal_stream_gets_priority_prefixes(election):
    d = election.daemon("node1", env={"JOURNAL_STREAM": "8:12345"})
    d.wait_role("leader")
    d.stop()
    lines = [l for l in d.log_text().splitlines() if not l.startswith("====")]
    assert lines, "the daemon logged nothing"
    bad = [l for l in lines if not (l[:1] == "<" and l[2:3] == ">" and l[1].isdigit())]
    assert not bad, f"lines without a <N> priority prefix: {bad[:5]}"
    # A role change is a notice (5); no timestamps of our own under the journal.
    assert any(l.startswith("<5>role ") for l in lines), lines[:20]


def test_journal_stream_startup_errors_get_priority_prefixes(tmp_path):
    """What stops the daemon before its log is set up (a broken file, a bad
    command line) is an error to the journal too: under JOURNAL_STREAM
    every line it writes starts with <3>, so that journalctl -p err shows
    why the unit failed. Without it, zkelectd -t says it as it always did."""
    zkd = str(binary("zkelectd"))
    conf = tmp_path / "broken.conf"
    conf.write_text("[zookeeper]\nhosts = 127.0.0.1:2181\n"
                    "[election]\nservice = web\nid = a\n"
                    "[control]\nbogus = 1\n")
    journal = dict(os.environ, JOURNAL_STREAM="8:12345")
    plain = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    why = f"{conf}:7: control.bogus: unknown key"
    for argv in ([zkd, "-c", str(conf)], [zkd, "-t", "-c", str(conf)]):
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                           env=journal, stdin=subprocess.DEVNULL)
        assert (r.returncode, r.stdout, r.stderr) == (1, "", f"<3>{why}\n")
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                           env=plain, stdin=subprocess.DEVNULL)
        assert (r.returncode, r.stdout, r.stderr) == \
            (1, "", f"zkelectd: {why}\n")
    # A bad command line: getopt's complaint and the usage, each line <3>.
    for bad, said in ((["-x"], "invalid option -- 'x'"),
                      (["--config"], "option '--config' requires an argument"),
                      (["-c", str(conf), "extra"],
                       "unexpected argument: extra")):
        r = subprocess.run([zkd, *bad], capture_output=True, text=True,
                           timeout=30, env=journal, stdin=subprocess.DEVNULL)
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and lines[0] == f"<3>{said}", r.stderr
        assert lines[1].startswith("<3>usage: zkelectd "), r.stderr
        assert all(l.startswith("<3>") for l in lines), r.stderr


def test_reload_applies_data_and_refuses_identity_changes(election):
    a = election.daemon("node1", data="10.0.0.1:1")
    a.wait_role("leader")
    b = election.daemon("node2", data="10.0.0.2:1")
    b.wait_role("follower")

    # New data is advertised at once: in E/leader and in our candidate node.
    a.options["election.data"] = "10.0.0.1:2"
    a.write_config()
    a.signal(signal.SIGHUP)
    wait_for(lambda: b.leader().get("data") == "10.0.0.1:2", 5,
             "the follower to see the leader's new data")
    wait_for(lambda: ("node1", "10.0.0.1:2") in [(m[1], m[2]) for m in b.members()],
             5, "members to show the new data")
    assert a.role() == "leader"

    # An identity change is refused with a warning; the rest still applies.
    a.options["election.id"] = "renamed"
    a.options["control.log_level"] = "debug"
    a.write_config()
    a.signal(signal.SIGHUP)
    wait_for(lambda: "election.id cannot change while running" in a.log_text(), 5,
             "the refusal warning")
    assert parse_kv(a.ctl("status"))["id"] == "node1"
    assert b.leader()["id"] == "node1"

    # A broken file keeps the running configuration.
    a.conf_path.write_text("[election]\nservice = x\nbogus = 1\n")
    a.signal(signal.SIGHUP)
    wait_for(lambda: "keeping the running configuration" in a.log_text(), 5,
             "the broken-file warning")
    assert f"{a.conf_path}:3: election.bogus: unknown key" in a.log_text()
    assert a.role() == "leader"
    assert b.leader() == {"id": "node1", "data": "10.0.0.1:2",
                          "epoch": b.leader()["epoch"]}


def test_reload_checks_demote_timeout_against_the_running_session(election):
    """A reload keeps the running zookeeper.session_timeout, so a new
    hooks.demote_timeout is checked against that one: a value below a third
    of the refused new timeout but not of the running one is refused with a
    warning and the old value kept (a reviewer's 9 s accepted against a
    refused 30 s, then clamped)."""
    T = election.session_timeout_ms
    old, new = T // 6, T * 5 // 6
    a = election.daemon("node1", data="10.0.0.1:1", options={
        "hooks.demote_timeout": f"{old}ms"})
    a.wait_role("leader")
    mark = len(a.log_text())
    a.options["zookeeper.session_timeout"] = f"{T * 3}ms"
    a.options["hooks.demote_timeout"] = f"{new}ms"
    a.options["election.data"] = "10.0.0.1:2"
    a.write_config()
    a.signal(signal.SIGHUP)
    wait_for(lambda: "configuration reloaded" in a.log_text()[mark:], 10,
             "the reload")
    text = a.log_text()[mark:]
    assert "zookeeper.session_timeout cannot change while running" in text
    assert (f"reload: hooks.demote_timeout {new}ms is not less than a third "
            f"of the running zookeeper.session_timeout ({T}ms); keeping "
            f"{old}ms") in text, text
    assert "not below a third of the negotiated" not in text, text
    # The rest of the file applies.
    assert parse_kv(a.ctl("status"))["data"] == "10.0.0.1:2"
    assert a.role() == "leader"


def test_digest_auth_sets_creator_all_world_read(election, kz):
    # A root of its own: the parents it creates get the same ACLs, and a
    # read-only /zkelectd would lock out every later test on this server.
    root = f"/auth-{election.service}"
    path = f"{root}/{election.service}"
    d = election.daemon("node1", options={"zookeeper.auth": "digest:ops:s3cret",
                                          "zookeeper.root": root})
    d.wait_role("leader")
    kids = kz.get_children(f"{path}/candidates")
    assert len(kids) == 1
    for path in (f"{path}/candidates/{kids[0]}", f"{path}/leader",
                 f"{path}/breadcrumb"):
        acls, _ = kz.get_acls(path)
        perms = {(a.id.scheme, a.id.id): a.perms for a in acls}
        assert perms.get(("world", "anyone")) == 1, (path, acls)  # READ only
        digest = [k for k in perms if k[0] == "digest"]
        assert len(digest) == 1 and digest[0][1].startswith("ops:"), (path, acls)
        assert perms[digest[0]] == 31, (path, acls)  # ALL
    # Without the password nobody else can delete the leader's nodes.
    from kazoo.exceptions import NoAuthError
    try:
        kz.delete(f"{root}/{election.service}/leader")
    except NoAuthError:
        pass
    else:
        raise AssertionError("an unauthenticated client deleted E/leader")
    assert d.role() == "leader"


def test_custom_root(election, kz):
    root = f"/custom/{election.service}-root"
    d = election.daemon("node1", options={"zookeeper.root": root})
    d.wait_role("leader")
    assert kz.exists(f"{root}/{election.service}/leader")
    assert len(kz.get_children(f"{root}/{election.service}/candidates")) == 1
    assert not kz.exists(election.path)


def test_observer_never_leads_and_reports_the_leader(election, kz):
    obs = election.daemon("watcher", options={"election.mode": "observer"})
    obs.wait_role("observer")
    assert obs.leader() == {"id": "", "data": "", "epoch": ""}
    a = election.daemon("node1", data="10.0.0.1:5432")
    a.wait_role("leader")
    wait_for(lambda: obs.leader().get("id") == "node1", 5, "the observer to see node1")
    assert obs.leader()["data"] == "10.0.0.1:5432"
    assert obs.role() == "observer"
    assert len(kz.get_children(f"{election.path}/candidates")) == 1
    st = obs.status()
    assert st["mode"] == "observer" and st["leader"] == "node1"
    # An observer never ran a hook, not even the startup demote.
    assert not hook_runs(election.events(), id="watcher")


def test_health_check_fall_and_rise(election):
    opts = lambda name: {
        "hooks.check": f"test -e {election.dir}/{name}.healthy",
        "hooks.check_interval": "200ms", "hooks.check_fall": "2",
        "hooks.check_rise": "2"}
    for n in ("node1", "node2"):
        (election.dir / f"{n}.healthy").touch()
    a = election.daemon("node1", options=opts("node1"))
    a.wait_role("leader")
    b = election.daemon("node2", options=opts("node2"))
    b.wait_role("follower")

    (election.dir / "node1.healthy").unlink()
    b.wait_role("leader", timeout=5)
    a.wait_role("observer", timeout=5)
    demotes = [r for r in hook_runs(election.events(), id="node1", event="demote")
               if r[0].reason == "health"]
    assert demotes, "node1 did not demote with reason health"
    assert [m[1] for m in b.members()] == ["node2"]

    (election.dir / "node1.healthy").touch()
    a.wait_role("follower", timeout=5)
    # node1 says follower once it has its node; the leader's list learns
    # of it from its own watch, a moment later on a loaded machine.
    wait_for(lambda: [m[1] for m in b.members()] == ["node2", "node1"], 10,
             "node1 back in the leader's member list")
    assert b.role() == "leader"
    election.check_invariants()


def test_reloaded_check_interval_applies_at_once(election, tmp_path):
    """hooks.check_interval shortened by SIGHUP from an hour to 200 ms: health
    settings apply at once, so checks come every 200 ms from then on, not
    after the hour the old interval had planned."""
    runs = tmp_path / "check.runs"
    check = tmp_path / "check.sh"
    check.write_text(f"#!/bin/sh\necho x >> {runs}\n")
    check.chmod(0o755)
    a = election.daemon("node1", options={
        "hooks.check": str(check), "hooks.check_interval": "60m"})
    a.wait_role("leader")
    assert not runs.exists()
    a.reload({"hooks.check_interval": "200ms"})
    wait_for(lambda: runs.exists() and len(runs.read_text().split()) >= 3,
             15, "three checks at the new interval")
    assert a.role() == "leader"


def test_failed_demote_is_reported_and_the_daemon_goes_on(election):
    a = election.daemon("node1")
    a.wait_role("leader")
    b = election.daemon("node2")
    b.wait_role("follower")
    a.hook_conf(demote_exit=3)
    assert a.ctl("resign").strip() == "ok"
    b.wait_role("leader", timeout=5)
    st = a.status()
    assert "demote hook exited 3" in st["last_error"], st
    assert a.role() == "follower"
    assert parse_kv(a.ctl("status"))["last_error"] == st["last_error"]


def test_status_file_is_replaced_atomically(election):
    d = election.daemon("node1")
    d.wait_role("leader")
    leftovers = [p.name for p in d.status_file.parent.iterdir()
                 if p.name.startswith(d.status_file.name) and p != d.status_file]
    assert not leftovers, leftovers
    # The file is shell-sourceable and agrees with the socket.
    out = subprocess.run(["/bin/sh", "-c", f'. "{d.status_file}" && echo "$role $id"'],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "leader node1"


def test_a_failed_status_write_is_tried_again(election):
    """A status file that cannot be replaced (here a directory stands at
    its temporary name, as a full /run would fail it) is written again once
    the fault is gone, without waiting for the next change; the failure is
    logged once, and its end."""
    d = election.daemon("node1")
    d.wait_role("leader")
    tmp = d.status_file.with_name(d.status_file.name + ".tmp")
    tmp.mkdir()
    try:
        assert d.ctl("pause").strip() == "ok"
        wait_for(lambda: f"write {d.status_file}" in d.log_text(), 10,
                 "the failed write to be logged")
        assert d.status()["role"] == "leader"
        # Some tries fail meanwhile (about one a second).
        time.sleep(3)
    finally:
        tmp.rmdir()
    wait_for(lambda: d.status()["role"] == "observer", 15,
             "the status file to say observer")
    assert d.status()["paused"] == "1"
    log = d.log_text()
    assert log.count(f"write {d.status_file}") == 1, log
    wait_for(lambda: f"{d.status_file} written again" in d.log_text(), 10,
             "the recovery to be logged")


def test_a_failed_last_status_write_leaves_no_leader_behind(election):
    """The "stopped" write at the exit has no retry after it: when it
    fails (a directory at the temporary name, as a full /run would), the
    file that still says leader with this exited pid is removed."""
    d = election.daemon("node1")
    d.wait_role("leader")
    tmp = d.status_file.with_name(d.status_file.name + ".tmp")
    tmp.mkdir()
    try:
        assert d.stop() == 0
    finally:
        tmp.rmdir()
    assert not d.status_file.exists(), d.status_file.read_text()
    log = d.log_text()
    assert f"write {d.status_file}" in log
    assert f"{d.status_file} removed, not written" in log


def test_check_mode_and_overrides(tmp_path):
    conf = tmp_path / "z.conf"
    conf.write_text("[zookeeper]\nhosts = 127.0.0.1:2181\n[election]\nservice = web\n")
    zkd = str(binary("zkelectd"))
    r = subprocess.run([zkd, "-t", "-c", str(conf)], capture_output=True, text=True)
    assert (r.returncode, r.stdout.strip()) == (0, "configuration OK"), r
    r = subprocess.run([zkd, "-t", "-c", str(conf), "-o", "election.mode=leader"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == \
        "zkelectd: -o election.mode: must be candidate or observer", r.stderr
    r = subprocess.run([zkd, "--check", "-c", str(conf), "-o",
                        "hooks.demote_timeout=5s"], capture_output=True, text=True)
    assert r.returncode == 1 and "hooks.demote_timeout" in r.stderr, r.stderr
    r = subprocess.run([zkd, "-t", "-c", str(tmp_path / "missing.conf")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "missing.conf: cannot read" in r.stderr, r.stderr
    r = subprocess.run([zkd, "-V"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("zkelectd ")
    r = subprocess.run([zkd, "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr


def test_make_install_lays_out_binaries_man_pages_unit_and_example(tmp_path):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run(["make", "-s", "install", f"DESTDIR={tmp_path}", "PREFIX=/usr/local"],
                       cwd=repo, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    want = ["usr/local/sbin/zkelectd", "usr/local/bin/zkelectctl",
            "usr/local/share/man/man8/zkelectd.8", "usr/local/share/man/man1/zkelectctl.1",
            "usr/local/share/man/man5/zkelectd.conf.5",
            "usr/local/lib/systemd/system/zkelectd@.service",
            "etc/zkelectd/zkelectd.conf.example"]
    for w in want:
        assert (tmp_path / w).is_file(), w
    assert os.access(tmp_path / "usr/local/sbin/zkelectd", os.X_OK)
    unit = (tmp_path / "usr/local/lib/systemd/system/zkelectd@.service").read_text()
    assert "ExecStart=/usr/local/sbin/zkelectd -c /etc/zkelectd/%i.conf" in unit
    assert "Type=notify" in unit
    # The example configuration is valid as shipped (given a service name).
    r = subprocess.run([str(tmp_path / "usr/local/sbin/zkelectd"), "-t", "-c",
                        str(tmp_path / "etc/zkelectd/zkelectd.conf.example")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "configuration OK", r


def test_demo_script_shows_a_failover():
    """The README's first command: a throwaway ZooKeeper, three daemons, the
    leader stopped, its successor taking over, everything cleaned up."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run(["scripts/demo.sh"], cwd=repo, capture_output=True, text=True,
                       timeout=180, stdin=subprocess.DEVNULL)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "node1: PROMOTE" in out or "node1: promote" in out.lower(), out[-3000:]
    lines = out.splitlines()
    promotes = [l for l in lines if "promote" in l.lower() and "node2" in l]
    demotes = [l for l in lines if "demote" in l.lower() and "node1" in l and "shutdown" in l]
    assert promotes and demotes, out[-3000:]
    # Nothing is left behind: no demo directory, no daemon of the demo. Only
    # this run's directory is looked at (the demo prints it): another run
    # of the demo, a concurrent test suite's, may have one right now.
    dirs = set(re.findall(r"/tmp/zkelectd-demo\.[A-Za-z0-9]+", out))
    assert dirs, f"the demo never named its directory:\n{out[-3000:]}"
    left = [d for d in dirs if os.path.exists(d)]
    assert not left, f"the demo left {left} behind"

    def leftovers():
        procs = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().decode(errors="replace")
            except OSError:
                continue
            if any(d in cmd for d in dirs):
                procs.append(f"{pid}: {cmd.replace(chr(0), ' ')}")
        return procs
    # A process the demo SIGKILLed on its way out may take a moment to go.
    try:
        wait_for(lambda: not leftovers(), 5, "the demo's processes to end")
    except AssertionError:
        raise AssertionError(f"processes of the demo outlived it: "
                             f"{leftovers()}") from None


def _hold(pred, seconds, what):
    """Asserts pred() at every poll for `seconds` (a property over a window,
    not a sleep: it fails at the first poll where it is false)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert pred(), what
        time.sleep(0.05)


def test_reload_moves_the_session_to_new_hosts(election):
    """A change of zookeeper.hosts on SIGHUP moves the live session to the
    new servers (zoo_set_servers): the leader keeps its session, its role
    and its epoch, runs no hook, and goes on leading once the old servers'
    ports are closed. Here the "old" and "new" ensembles are the same
    server reached through two proxies on other addresses (the C client
    tells servers apart by address only, see the next test). T is 6 s:
    with 3 s a pair of suites slowed the move through the proxies (a
    connect of 0.84 s, then syncs unanswered for a second) past the lease,
    and the leader rightly demoted."""
    election.session_timeout_ms = 6000
    old = ZkProxy(election.zk_hosts, name="proxy-old", bind="127.0.0.2")
    new = ZkProxy(election.zk_hosts, name="proxy-new", bind="127.0.0.3")
    try:
        a = election.daemon("node1", data="10.0.0.1:1",
                            options={"zookeeper.hosts": old.hosts})
        a.wait_role("leader")
        b = election.daemon("node2", data="10.0.0.2:1")
        b.wait_role("follower")
        before = a.status()
        runs = len(hook_runs(election.events()))
        assert old.connections() == 1 and new.connections() == 0

        text = a.reload({"zookeeper.hosts": new.hosts})
        assert f"zookeeper.hosts {old.hosts} -> {new.hosts}" in text, text
        # The old server is not in the new list: the client must leave it.
        wait_for(lambda: new.connections() == 1 and old.connections() == 0,
                 10, "node1 to reconnect through the new hosts")
        old.close()
        wait_for(lambda: a.status().get("zk_state") == "connected", 10,
                 "node1 connected on the new hosts")
        # Longer than a whole session timeout on the new servers alone:
        # had the session or the lease been lost, it would show.
        T = election.session_timeout_ms / 1000
        _hold(lambda: a.role() == "leader", 1.5 * T, "node1 keeps leading")
        after = a.status()
        assert after["session"] == before["session"]
        assert after["epoch"] == before["epoch"]
        assert b.leader()["epoch"] == before["epoch"]
        assert b.role() == "follower"
        assert len(hook_runs(election.events())) == runs, \
            [str(r[0]) for r in hook_runs(election.events())]
        assert new.connections() == 1
    finally:
        old.close()
        new.close()


def test_reload_refuses_hosts_it_cannot_resolve(election):
    """A host list the client cannot use is refused with the reason, the
    old list stays in force, and the rest of the file still applies."""
    a = election.daemon("node1", data="10.0.0.1:1")
    a.wait_role("leader")
    before = a.status()
    text = a.reload({"zookeeper.hosts": "no-such-host.invalid:2181",
                       "election.data": "10.0.0.1:2"})
    assert re.search(r"reload: zookeeper\.hosts no-such-host\.invalid:2181 "
                     r"refused: .+; keeping " + re.escape(election.zk_hosts),
                     text), text
    wait_for(lambda: a.leader().get("data") == "10.0.0.1:2", 5,
             "the new data to apply")
    assert a.role() == "leader"
    after = a.status()
    assert (after["session"], after["epoch"]) == \
        (before["session"], before["epoch"])

    # The same host on another port: the client library would take it as
    # no change at all and stay on the old port, so it is refused too.
    host, port = election.zk_hosts.rsplit(":", 1)
    text = a.reload({"zookeeper.hosts": f"{host}:{int(port) % 65535 + 1}"})
    assert re.search(r"reload: zookeeper\.hosts \S+ refused: the same hosts "
                     r"on other ports.*; keeping " + re.escape(election.zk_hosts),
                     text), text

    # Spelt otherwise, the same address on another port is the same server
    # to the library: refused too, not logged as a move that never comes
    # (a reviewer's localhost:Q was taken, and the daemon stayed on P).
    assert host == "127.0.0.1", election.zk_hosts
    text = a.reload({"zookeeper.hosts": f"localhost:{int(port) % 65535 + 1}"})
    assert re.search(r"reload: zookeeper\.hosts localhost:\d+ refused: the "
                     r"same hosts on other ports \(127\.0\.0\.1: port \d+ "
                     r"asked for, " + port + r" in use\).*; keeping " +
                     re.escape(election.zk_hosts), text), text

    # Still on the old servers: a session that works goes on working.
    a.ctl("resign")
    a.wait_role("leader")
    assert a.status()["session"] == before["session"]


def _blackhole_dns(tmp_path, names=()):
    """A name server that takes queries and never answers, on a loopback
    address of its own, and a resolv.conf naming it with a 30 s timeout:
    getaddrinfo() of a name not in the hosts file waits that long. The
    hosts file (rewritable in place) maps each of `names` to 127.0.0.1.
    Returns the socket (close it), the hosts file, and a wrapper that runs
    a daemon with both files in a mount namespace of its own."""
    if os.geteuid() != 0:
        pytest.skip("needs root (a mount namespace, port 53)")
    ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(50):
        addr = (f"127.53.{os.getpid() % 250 + 1}."
                f"{int.from_bytes(os.urandom(1), 'big') % 250 + 1}")
        try:
            ns.bind((addr, 53))
            break
        except OSError:
            continue
    else:
        ns.close()
        pytest.skip("no loopback address free for port 53")
    conf = tmp_path / "resolv.conf"
    conf.write_text(f"nameserver {addr}\noptions timeout:30 attempts:1\n")
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n" +
                     "".join(f"127.0.0.1 {n}\n" for n in names))
    wrapper = ["unshare", "-m", "sh", "-c",
               f"mount --bind {conf} /etc/resolv.conf && "
               f"mount --bind {hosts} /etc/hosts && exec \"$@\"",
               "blackhole-dns"]
    return ns, hosts, wrapper


def test_a_hosts_reload_never_waits_on_dns(election, tmp_path):
    """A new zookeeper.hosts with a name is resolved off the event loop: a
    reviewer's reload naming a host, with DNS that never answered, froze
    the leader's loop for 16 s (getaddrinfo() twice), past its demote
    point, while node2 promoted: two leaders. Now the loop goes on (the
    control socket answers throughout), the lease holds, the list is
    refused once its resolution is late, and no hook runs."""
    ns, _, wrapper = _blackhole_dns(tmp_path)
    try:
        T = 6000
        opts = {"zookeeper.session_timeout": f"{T}ms"}
        a = election.daemon("node1", start=False, options=opts)
        a.wrapper = wrapper
        a.start()
        a.wait_role("leader")
        b = election.daemon("node2", options=opts)
        b.wait_role("follower")
        before = a.status()
        runs = len(hook_runs(election.events()))
        mark = len(a.log_text())
        a.options["zookeeper.hosts"] = \
            election.zk_hosts + ",zk-new.example.com:2181"
        a.write_config()
        a.signal(signal.SIGHUP)
        # Past the whole session timeout, and past the resolution's bound
        # (10 s): every answer comes, and no one else leads.
        end = time.monotonic() + 12
        while time.monotonic() < end:
            assert a.ctl("role", timeout=3).strip() == "leader"
            assert b.role() == "follower"
            time.sleep(0.2)
        wait_for(lambda: "refused: no answer from name resolution" in
                 a.log_text()[mark:], 10, "the list to be refused")
        text = a.log_text()[mark:]
        assert "resolving zookeeper.hosts" in text, text
        assert re.search(r"reload: zookeeper\.hosts \S+ refused: no answer "
                         r"from name resolution in time .*; keeping " +
                         re.escape(election.zk_hosts), text), text
        assert "moves to them" not in text, text
        after = a.status()
        assert (after["session"], after["epoch"]) == \
            (before["session"], before["epoch"])
        assert len(hook_runs(election.events())) == runs
        # The old list still works.
        a.ctl("resign")
        b.wait_role("leader")
    finally:
        ns.close()


def test_a_resumed_leader_never_waits_on_dns(election, tmp_path):
    """A list with a name is resolved off the event loop before the session
    opens, and the client is given the addresses: zookeeper_init would
    resolve it in the loop's thread. A leader re-executed (SIGUSR2) while
    DNS does not answer resumes on a loop that keeps its lease: the lease
    ends it, demoted before node2 promotes, where a frozen loop (30 s in
    getaddrinfo) would have led on beside node2."""
    ns, hosts, wrapper = _blackhole_dns(tmp_path, ["zk-a.example.test"])
    try:
        T = 6000
        port = election.zk_hosts.rsplit(":", 1)[1]
        a = election.daemon("node1", start=False, options={
            "zookeeper.session_timeout": f"{T}ms",
            "zookeeper.hosts": f"zk-a.example.test:{port}"})
        a.wrapper = wrapper
        a.start()
        a.wait_role("leader")
        b = election.daemon("node2", options={
            "zookeeper.session_timeout": f"{T}ms"})
        b.wait_role("follower")
        hosts.write_text("127.0.0.1 localhost\n")     # the name, to DNS
        mark = len(a.log_text())
        a.signal(signal.SIGUSR2)
        wait_for(lambda: "re-executing" in a.log_text()[mark:], 10,
                 "the re-exec")
        # The loop answers all along, and the lease ends the leader.
        end = time.monotonic() + 3 * T / 1000
        while time.monotonic() < end and b.role() != "leader":
            a.ctl("role", timeout=3)
            time.sleep(0.2)
        b.wait_role("leader", timeout=20)
        demotes = hook_runs(election.events(), "node1", "demote")
        assert demotes and demotes[-1][1] is not None, demotes
        check_no_overlap(election.with_log_ends(election.events()))
        wait_for(lambda: re.search(r"cannot connect to zk-a\.example\.test:"
                                   r"\d+: no answer from name resolution",
                                   a.log_text()[mark:]), 20,
                 "the resolution's bound to pass, said")
        # The session was opened on the address, not the name.
        assert re.search(r"connecting to zk-a\.example\.test:\d+ "
                         r"\(127\.0\.0\.1:\d+\)", a.log_text())
    finally:
        ns.close()


def test_the_session_follows_its_hosts_names_in_dns(election, tmp_path):
    """The client is given the addresses the names resolve to, so the
    daemon resolves them again itself, off the loop (every 30 s, and after
    a lost connection), as the client library did with names: a server
    whose name now gives another address is followed, and the leader rides
    through on the same session, no hook run."""
    ns, hosts, wrapper = _blackhole_dns(tmp_path)
    old = ZkProxy(election.zk_hosts, name="dns-old", bind="127.0.0.2")
    port = int(old.hosts.rsplit(":", 1)[1])
    new = ZkProxy(election.zk_hosts, name="dns-new", bind="127.0.0.3",
                  port=port)
    try:
        hosts.write_text("127.0.0.1 localhost\n"
                         "127.0.0.2 zk-a.example.test\n")
        a = election.daemon("node1", start=False, options={
            "zookeeper.session_timeout": "10s",
            "zookeeper.hosts": f"zk-a.example.test:{port}"})
        a.wrapper = wrapper
        a.start()
        a.wait_role("leader")
        before = a.status()
        runs = len(hook_runs(election.events()))
        assert old.connections() == 1 and new.connections() == 0
        mark = len(a.log_text())
        hosts.write_text("127.0.0.1 localhost\n"
                         "127.0.0.3 zk-a.example.test\n")
        old.close()
        wait_for(lambda: new.connections() == 1, 20,
                 "node1 to follow the name to its new address")
        wait_for(lambda: a.status().get("zk_state") == "connected", 10,
                 "node1 connected again")
        assert re.search(r"zookeeper\.hosts zk-a\.example\.test:\d+ now "
                         r"resolves to 127\.0\.0\.3:\d+",
                         a.log_text()[mark:]), a.log_text()[mark:]
        assert a.role() == "leader"
        assert a.status()["session"] == before["session"]
        assert len(hook_runs(election.events())) == runs
    finally:
        ns.close()
        old.close()
        new.close()


def test_a_move_to_hosts_that_do_not_answer_is_a_disconnect(election):
    """A reload to a list none of whose servers answers: the client library
    drops its connection without a session event (update_addrs) and never
    reconnects. A reviewer's daemon then took itself for connected, its
    status said so for good, a disconnect_grace of 0 did not demote, and
    it sent every failed request again at once (75 % of a CPU). Now the
    drop is a disconnect: zk_state says connecting, the grace of 0
    demotes at once, and a reload back to good servers resumes the same
    session."""
    old = ZkProxy(election.zk_hosts, name="proxy-old", bind="127.0.0.2")
    dead = socket.socket()
    dead.bind(("127.0.0.5", 0))     # a port no one listens on
    try:
        # The session outlives the time the test spends disconnected.
        a = election.daemon("node1", options={
            "zookeeper.hosts": old.hosts,
            "zookeeper.session_timeout": "20s",
            "election.disconnect_grace": "0"})
        a.wait_role("leader")
        before = a.status()
        text = a.reload({"zookeeper.hosts":
                           f"127.0.0.5:{dead.getsockname()[1]}"})
        assert "moves to them" in text, text
        wait_for(lambda: a.status().get("zk_state") == "connecting", 10,
                 "node1 to say it is not connected")
        wait_for(lambda: any(r[0].reason == "disconnected" for r in
                             hook_runs(election.events(), "node1",
                                       "demote")), 10,
                 "the demote of a grace of 0")
        cpu0 = _cpu_seconds(a.proc.pid)
        time.sleep(2)
        assert _cpu_seconds(a.proc.pid) - cpu0 < 0.7, \
            "node1 spins while disconnected"
        a.reload({"zookeeper.hosts": old.hosts})
        a.wait_role("leader", timeout=20)
        assert a.status()["session"] == before["session"]
    finally:
        dead.close()
        old.close()


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_hosts_that_do_not_resolve_are_said_once_and_kept(election):
    """Started with a list whose names do not resolve, the daemon says why
    once (not at every retry) and keeps it in the status's last_error;
    a reload with a good list then connects. No demote hook: a startup
    demote that times out (a loaded machine) is an error said between two
    of the list's, which says that one again, rightly."""
    a = election.daemon("node1", options={
        "zookeeper.hosts": "no-such-host.invalid:2181", "hooks.demote": None})
    wait_for(lambda: "no-such-host.invalid does not resolve" in
             a.status().get("last_error", ""), 10, "the reason in status")
    first = a.log_text().count("cannot connect to no-such-host.invalid")
    time.sleep(2.5)     # two more retries, at least, a second apart
    assert a.log_text().count("cannot connect to no-such-host.invalid") \
        == first == 1, a.log_text()
    assert a.role() == "unknown"
    a.reload({"zookeeper.hosts": election.zk_hosts})
    a.wait_role("leader", timeout=15)


def test_a_request_lost_to_a_hosts_reload_counts_as_a_connection_loss(
        election):
    """A change of zookeeper.hosts moves the session (zoo_set_servers), and
    the client library leaves its old server without failing what was in
    flight there: that reply never comes, the first reply on the new
    connection does not match it, and the library fails every request in
    flight with ZRUNTIMEINCONSISTENCY. Such a request may have been applied
    or not, as after a connection loss, and the daemon takes it for one: a
    write it made is looked up again, never taken as refused."""
    old = ZkProxy(election.zk_hosts, name="proxy-old", bind="127.0.0.2")
    new = ZkProxy(election.zk_hosts, name="proxy-new", bind="127.0.0.3")
    try:
        T = 6000
        a = election.daemon("node1", options={
            "zookeeper.hosts": old.hosts,
            "zookeeper.session_timeout": f"{T}ms"})
        a.wait_role("leader")
        mark = len(a.log_text())
        # The keepalive's next sync (every T/6) is left without its reply,
        # and the move comes well before the client would give the
        # connection up (2T/3 = 4 s without hearing anything).
        old.hold_replies()
        time.sleep(T / 6000 + 0.2)
        a.reload({"zookeeper.hosts": new.hosts})
        wait_for(lambda: "keepalive sync: " in a.log_text()[mark:], 10,
                 "the held sync to fail")
        text = a.log_text()[mark:]
        assert "run time inconsistency" not in text, text
        assert "keepalive sync: connection loss" in text, text
        wait_for(lambda: a.status().get("zk_state") == "connected", 10,
                 "node1 connected on the new hosts")
        a.wait_role("leader", timeout=15)
    finally:
        old.close()
        new.close()
