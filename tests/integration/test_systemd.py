"""systemd's side of the daemon: when READY=1 comes, what STATUS= says while
ZooKeeper does not answer, and the unit file (ExecReload validates the
configuration first; systemd-analyze accepts the unit). Real daemons, a fake
notification socket; every wait has a deadline."""

import os
import pwd
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from test_daemon import NotifySocket
from zkharness import REPO, binary, free_ports, wait_for


class MarkedNotifySocket(NotifySocket):
    """Notes, for each datagram, whether a marker file existed when it came."""

    def __init__(self, path, marker):
        self.marker = Path(marker)
        self.seen = []
        super().__init__(path)

    def _received(self, text):
        exists = self.marker.exists()
        with self.lock:
            self.messages.append(text)
            self.seen.extend((line, exists) for line in text.splitlines())


def test_ready_without_zookeeper_status_says_connecting(election):
    # A port nobody listens on (reserved for this process, never bound).
    port = free_ports(1)[0]
    hosts = f"127.0.0.1:{port}"
    ns = NotifySocket(election.dir / "notify.sock")
    try:
        d = election.daemon("node1", hooks=False, env={"NOTIFY_SOCKET": ns.path},
                            options={"zookeeper.hosts": hosts})
        ns.wait(lambda ls: "READY=1" in ls, 15, "READY=1 without ZooKeeper")
        ns.wait(lambda ls: any(l.startswith("STATUS=connecting to ZooKeeper")
                               and hosts in l for l in ls), 5,
                "STATUS= saying it is connecting")
        assert d.role() == "unknown"
        assert d.stop() == 0
        # Sent before the daemon exited, so queued already; the reader
        # thread may not have taken it yet.
        ns.wait(lambda ls: "STOPPING=1" in ls, 10, "STOPPING=1")
    finally:
        ns.close()


def test_ready_waits_for_the_startup_demote(election):
    marker = election.dir / "demoted"
    ns = MarkedNotifySocket(election.dir / "notify.sock", marker)
    try:
        d = election.daemon(
            "node1", hooks=False, start=False, env={"NOTIFY_SOCKET": ns.path},
            options={"zookeeper.session_timeout": "20s",
                     "hooks.demote_timeout": "6s",
                     "hooks.demote": f"sleep 1; touch {marker}"})
        d.start()
        ns.wait(lambda ls: "READY=1" in ls, 15, "READY=1")
        with ns.lock:
            ready = [exists for line, exists in ns.seen if line == "READY=1"]
        assert ready[0], "READY=1 came before the startup demote was over"
        d.wait_role("leader", 15)
    finally:
        ns.close()


def test_a_reload_during_the_startup_demote_does_not_say_ready(election):
    """SIGHUP while the startup demote runs: the reload is done, but
    systemd hears neither RELOADING=1 nor READY=1 before the demote is over
    (a reviewer's READY=1 with the demote still running)."""
    marker = election.dir / "demoted"
    go = election.dir / "go"
    ns = MarkedNotifySocket(election.dir / "notify.sock", marker)
    try:
        d = election.daemon(
            "node1", hooks=False, start=False, env={"NOTIFY_SOCKET": ns.path},
            options={"zookeeper.session_timeout": "30s",
                     "hooks.demote_timeout": "9s",
                     "hooks.demote": f"while [ ! -e {go} ]; do sleep 0.1; "
                                     f"done; touch {marker}"})
        d.start(wait=False)
        wait_for(lambda: "running demote hook" in d.log_text(), 15,
                 "the startup demote to start")
        d.signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in d.log_text(), 8,
                 "the reload")
        go.touch()
        ns.wait(lambda ls: "READY=1" in ls, 15, "READY=1")
        with ns.lock:
            seen = list(ns.seen)
        first = [line for line, _ in seen].index("READY=1")
        assert seen[first][1], f"READY=1 before the demote was over: {seen}"
        assert ("RELOADING=1", False) not in seen[:first], seen
        d.wait_role("leader", 15)
    finally:
        ns.close()


def test_ready_comes_at_once_without_a_demote_hook(election):
    # demote_on_start with no demote hook set: nothing to wait for.
    port = free_ports(1)[0]
    ns = NotifySocket(election.dir / "notify.sock")
    try:
        election.daemon("node1", hooks=False, env={"NOTIFY_SOCKET": ns.path},
                        options={"zookeeper.hosts": f"127.0.0.1:{port}",
                                 "hooks.demote_on_start": "yes"})
        ns.wait(lambda ls: "READY=1" in ls, 15, "READY=1")
    finally:
        ns.close()


def render_unit(tmp, sbindir, name="zkelectd@.service"):
    text = (REPO / "systemd" / f"{name}.in").read_text()
    unit = tmp / name
    unit.write_text(text.replace("@SBINDIR@", str(sbindir)))
    return unit


def test_unit_reload_validates_the_file_first():
    text = (REPO / "systemd" / "zkelectd@.service.in").read_text()
    reloads = [l.split("=", 1)[1] for l in text.splitlines()
               if l.startswith("ExecReload=")]
    starts = [l.split("=", 1)[1] for l in text.splitlines()
              if l.startswith("ExecStart=")]
    assert len(reloads) == 2, reloads
    # The same file ExecStart reads, checked with -t, then the signal.
    conf = starts[0].split(" -c ", 1)[1]
    assert reloads[0] == f"@SBINDIR@/zkelectd -t -c {conf}"
    assert reloads[1] == "/bin/kill -HUP $MAINPID"


def test_unit_restarts_at_once_and_demotes_when_it_gives_up():
    text = (REPO / "systemd" / "zkelectd@.service.in").read_text()
    lines = text.splitlines()
    assert "Restart=on-failure" in lines
    assert "RestartSec=100ms" in lines
    assert "OnFailure=zkelectd-crashed@%i.service" in lines
    assert "Environment=ZKELECTD_CRASHED=/run/zkelectd/%i.crashed" in lines
    crashed = (REPO / "systemd" / "zkelectd-crashed@.service.in").read_text()
    assert "f=/run/zkelectd/%i.crashed;" in crashed


def _crashed_exec(instance):
    """The crashed unit's ExecStart as systemd runs it for `instance`
    (specifiers and $$ resolved)."""
    text = (REPO / "systemd" / "zkelectd-crashed@.service.in").read_text()
    line = [l for l in text.splitlines() if l.startswith("ExecStart=")][0]
    cmd = line[len("ExecStart="):].replace("%i", instance)
    return shlex.split(cmd.replace("%%", "%").replace("$$", "$"))


@pytest.fixture
def crashed_script():
    """(instance, its crashed script's path in /run/zkelectd, root's
    alone); the script and a /run/zkelectd made for it go afterwards."""
    run = Path("/run/zkelectd")
    made = not run.exists()
    run.mkdir(mode=0o755, exist_ok=True)
    if os.stat(run).st_uid != 0 or os.stat(run).st_mode & 0o022:
        pytest.skip("/run/zkelectd is not root's alone on this machine")
    instance = f"zke-test-{os.getpid()}"
    script = run / f"{instance}.crashed"
    try:
        yield instance, script
    finally:
        if script.is_symlink() or script.exists():
            script.unlink()
        if made:
            try:
                run.rmdir()
            except OSError:
                pass


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (/run/zkelectd)")
def test_crashed_unit_runs_only_its_own_user_s_script(tmp_path, crashed_script):
    """The crashed unit runs as root unless a drop-in says otherwise: it
    runs the script only when the script and /run/zkelectd are its user's
    alone. A daemon of another user (the hardening drop-in's zkelectd)
    could otherwise have root run what it wrote (a reviewer's uid=0)."""
    instance, script = crashed_script
    ran = tmp_path / "ran"
    argv = _crashed_exec(instance)
    # None there: nothing to do.
    assert subprocess.run(argv, timeout=10).returncode == 0
    script.write_text(f"#!/bin/sh\nid -u > {ran}\n")
    script.chmod(0o700)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and ran.read_text().strip() == "0", r
    ran.unlink()
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chown(script, nobody, -1)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and not ran.exists(), r
    assert "not run" in r.stderr and "not owned by uid 0" in r.stderr
    # Nor through a link to a file root owns.
    script.unlink()
    target = tmp_path / "root-owned.sh"
    target.write_text(f"#!/bin/sh\nid -u > {ran}\n")
    script.symlink_to(target)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and not ran.exists(), r


def test_unit_check_command_fails_on_a_broken_file(tmp_path):
    # What ExecReload runs first: exit 1 and the error for a broken file.
    bad = tmp_path / "bad.conf"
    bad.write_text("[zookeeper]\nhosts = 127.0.0.1:2181\n"
                   "[election]\nservice = web\nbogus = 1\n")
    r = subprocess.run([str(binary("zkelectd")), "-t", "-c", str(bad)],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1
    assert "bogus" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (/run/zkelectd)")
def test_crashed_unit_leaves_a_daemon_systemd_restarts_alone(tmp_path,
                                                          crashed_script):
    """systemd 254 and later start OnFailure= units on every crash, also
    one it restarts (the unit passes through "failed"): the demote must
    then not run, or a leader that resumes its session has its
    application stopped. It runs once systemd gave up (the unit failed)."""
    instance, script = crashed_script
    ran = tmp_path / "ran"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    state = tmp_path / "state"
    fake = bindir / "systemctl"
    # Answers only the question the unit should ask, about its own unit.
    fake.write_text(f"""#!/bin/sh
[ "$*" = "show --value -p ActiveState zkelectd@{instance}.service" ] || exit 9
cat {state}
""")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    argv = _crashed_exec(instance)
    script.write_text(f"#!/bin/sh\necho demoted >> {ran}\n")
    script.chmod(0o700)
    for s in ("activating", "active", "reloading"):
        state.write_text(s + "\n")
        r = subprocess.run(argv, capture_output=True, text=True,
                           timeout=10, env=env)
        assert r.returncode == 0 and not ran.exists(), r
        assert f"not run: zkelectd@{instance}.service is {s}" in r.stderr
    for s in ("failed", "inactive"):
        state.write_text(s + "\n")
        r = subprocess.run(argv, capture_output=True, text=True,
                           timeout=10, env=env)
        assert r.returncode == 0 and ran.read_text() == "demoted\n", r
        ran.unlink()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze not installed")
def test_unit_passes_systemd_analyze_verify(tmp_path):
    sbindir = tmp_path / "sbin"
    sbindir.mkdir()
    exe = sbindir / "zkelectd"
    shutil.copy(binary("zkelectd"), exe)
    unit = render_unit(tmp_path, sbindir)
    inst = tmp_path / "zkelectd@web.service"
    os.symlink(unit, inst)
    crashed = tmp_path / "zkelectd-crashed@web.service"
    os.symlink(render_unit(tmp_path, sbindir, "zkelectd-crashed@.service"),
               crashed)
    env = dict(os.environ, SYSTEMD_LOG_LEVEL="warning")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(inst),
                        str(crashed)],
                       capture_output=True, text=True, timeout=60, env=env,
                       cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "zkelectd" not in out, out
