"""Restart without failover (issue 18): SIGUSR2 re-executes the daemon in
place, keeping its session, sockets and hooks.run's process; a daemon
started again after a crash resumes its live session from the session
file; other signals never kill it. T is the election fixture's (3 s).
"""

import fcntl
import os
import re
import shutil
import signal
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

import zkharness
from proxy import ZkProxy
from zkharness import wait_for

NEXT_VERSION = "9.9.9-next"


@pytest.fixture(scope="module")
def next_binary():
    """zkelectd built again with another version string (make VERSION=).
    Workers of pytest-xdist that run this module's tests each build it,
    one at a time (a lock beside the build directory): two makes into one
    directory at once would link a half-written object."""
    out = zkharness.bin_dir() / "next"
    cmd = ["make", "-s", "-j2", f"BUILD={out}", f"VERSION={NEXT_VERSION}",
           f"{out}/zkelectd"]
    if zkharness.SAN:
        cmd.insert(3, "SAN=1")
    with open(zkharness.bin_dir() / "next.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(cmd, cwd=zkharness.REPO, check=True, timeout=600,
                       stdout=subprocess.DEVNULL)
    return out / "zkelectd"


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


def leader_from_copy(election):
    """a, leading on a copy of zkelectd in its own bin directory (so that
    a test can replace the binary under it), and b following: (a, b, the
    copy's path)."""
    bindir = election.dir / "bin"
    bindir.mkdir()
    exe = bindir / "zkelectd"
    shutil.copy2(zkharness.binary("zkelectd"), exe)
    a = election.daemon("a", start=False)
    a.exe = exe
    a.start()
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    return a, b, exe


def test_sigusr2_reexecs_the_leader_in_place(election):
    (port,) = zkharness.free_ports(1)
    run = election.dir / "run.sh"
    run.write_text("#!/bin/sh\necho run started\nexec sleep 1000\n")
    run.chmod(0o755)
    a = election.daemon("a", options={
        "hooks.run": str(run),
        "control.http_listen": f"127.0.0.1:{port}"})
    a.wait_role("leader", 20)
    b = election.daemon("b")
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
    assert hook_lines(election, since) == []
    assert "re-executing" in a.log_text()[mark:]


def session_file(d):
    return d.socket.with_suffix(".session")


def test_sigusr2_with_a_broken_config_is_refused(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    pid = a.pid
    good = a.conf_path.read_text()
    a.conf_path.write_text(good + "[zookeeper]\nsession_timeout = banana\n")
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "re-exec refused", 10, mark)
    a.conf_path.write_text(good)
    assert a.alive() and a.pid == pid
    assert a.role() == "leader"
    assert f"(pid {pid}," not in a.log_text()[mark:]


@pytest.mark.parametrize("how", ["renamed-over", "moved-away"])
def test_sigusr2_runs_the_binary_installed_now(election, next_binary, how):
    """The binary at the path the daemon started from, whether the new
    file was renamed over it (a package upgrade) or the running one moved
    away first (mv zkelectd zkelectd.old) and the new one put there."""
    a, b, exe = leader_from_copy(election)
    bindir = exe.parent
    epoch, pid = a.status()["epoch"], a.pid
    old = a.ctl("version").strip()
    assert old != NEXT_VERSION
    since = time.time()
    if how == "renamed-over":
        shutil.copy2(next_binary, bindir / "zkelectd.new")
        os.replace(bindir / "zkelectd.new", exe)
    else:
        os.rename(exe, bindir / "zkelectd.old")
        shutil.copy2(next_binary, exe)
    a.signal(signal.SIGUSR2)
    zkharness.wait_value(lambda: a.ctl("version").strip(), NEXT_VERSION, 20,
                         "the new version")
    a.wait_role("leader", 10)
    assert a.pid == pid and a.status()["epoch"] == epoch
    assert b.role() == "follower"
    assert hook_lines(election, since) == []


def test_crash_and_restart_within_the_lease_resumes(election):
    election.session_timeout_ms = 4000     # the shared server's most
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    epoch = a.status()["epoch"]
    path = session_file(a)
    assert path.exists()
    since = time.time()
    a.kill()
    time.sleep(0.5)     # the restart comes 0.5 s after the crash
    mark = len(a.log_text())
    a.start()
    wait_log(a, "resumed: leader", 20, mark)
    a.wait_role("leader", 5)
    assert a.status()["epoch"] == epoch
    assert b.role() == "follower"
    assert hook_lines(election, since) == []


def test_crash_and_restart_after_the_session_expired_demotes_first(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    t_s = election.session_timeout_ms / 1000
    killed = time.time()
    a.kill()
    b.wait_role("leader", 3 * t_s)
    time.sleep(max(0.0, killed + 3 * t_s - time.time()))   # restart at 3 T
    since = time.time()
    a.start()
    a.wait_role("follower", 20)
    assert b.role() == "leader"
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert runs == [("a", "demote", "startup")]
    election.check_invariants()


def test_sigterm_is_still_an_ordered_handoff_and_removes_the_session_file(
        election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    path = session_file(a)
    wait_for(path.exists, 10, "the session file")
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == os.geteuid()
    passwd = zkharness.parse_kv(path.read_text())["passwd"]
    assert passwd not in a.log_text()
    since = time.time()
    assert a.stop() == 0
    assert not path.exists()
    b.wait_role("leader", 10)
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert runs == [("a", "demote", "shutdown"), ("b", "promote", "elected")]


def test_a_link_planted_at_the_session_file_is_never_followed(election):
    victim = election.dir / "victim"
    victim.write_text("precious\n")
    a = election.daemon("a", start=False)
    path = session_file(a)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, path)
    a.start()
    a.wait_role("leader", 20)
    wait_for(lambda: not path.is_symlink() and path.exists(), 10,
             "the session file written in the link's place")
    assert "session file" in a.log_text()
    # Planted while the daemon runs: replaced, never written through. The
    # link goes in by a rename over the file, at once: an unlink and then
    # a symlink raced the daemon writing the file again in between.
    planted = path.with_name(path.name + ".planted")
    os.symlink(victim, planted)
    os.rename(planted, path)
    wait_for(lambda: not path.is_symlink(), 10, "the link replaced")
    assert victim.read_text() == "precious\n"
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600


def test_sigusr1_and_sigpipe_do_not_kill_the_daemon(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    mark = len(a.log_text())
    a.signal(signal.SIGUSR1)
    a.signal(signal.SIGPIPE)
    wait_log(a, "SIGUSR1: ignored", 10, mark)
    assert a.ctl("ping").strip() == "pong"
    assert a.alive() and a.role() == "leader"


def test_a_crash_not_restarted_demotes_before_the_successor_promotes(
        election):
    script = election.dir / "a.crashed"
    # The script gives the demote hook 3/4 of demote_timeout: a roomy one
    # (T = 15 s allows 4.5 s), so that a loaded machine's slow shell is not
    # taken for a hung hook (two suites at once: 0.56 s of the default ran
    # out, exit 124; so did 1.9 s of 2.5 s beside the sanitizer suite of a
    # second one and a simulator campaign).
    a = election.daemon("a", env={"ZKELECTD_CRASHED": str(script)},
                        options={"zookeeper.session_timeout": "15s",
                                 "hooks.demote_timeout": "4500ms"})
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    wait_for(script.exists, 10, "the crash script")
    assert stat.S_IMODE(os.lstat(script).st_mode) == 0o700
    epoch = a.status()["epoch"]
    a.kill()
    # Its configuration made unstartable: the starts systemd tries fail.
    a.options["zookeeper.session_timeout"] = "banana"
    for _ in range(3):
        a.start(wait=False)
        assert a.wait_exit(10) == 1
    # Then the unit's OnFailure= runs the script, with nothing else: the
    # daemon's environment (here the test hook's ZKT_HISTORY, ZKT_ENVLOG; a
    # user's PGDATA) comes from the script, as a hook would have it (a
    # reviewer's pg-demote.sh failed on a PGDATA the script did not carry).
    env = {"PATH": os.environ["PATH"]}
    r = subprocess.run(["/bin/sh", str(script)], env=env, timeout=30)
    assert r.returncode == 0
    b.wait_role("leader", 40)
    evs = election.events()
    end = [e.n for e in evs if (e.id, e.event, e.phase, e.reason) ==
           ("a", "demote", "end", "crashed")]
    promote = [e.n for e in evs if (e.id, e.event, e.phase) ==
               ("b", "promote", "start")]
    assert len(end) == 1 and len(promote) == 1
    assert end[0] < promote[0]
    event, hookenv = a.hook_env_runs()[-1]
    assert event == "demote"
    assert hookenv["ZKELECT_REASON"] == "crashed"
    assert hookenv["ZKELECT_EPOCH"] == epoch
    assert hookenv["ZKELECT_ID"] == "a"
    assert hookenv["ZKELECT_SERVICE"] == election.service


def test_a_crash_in_the_middle_of_a_promote_demotes_first(election):
    a = election.daemon("a", start=False)
    a.hook_conf(promote_hang=1)
    a.start()
    hang = wait_for(a.hang_pids, 20, "the promote hook to hang")
    epoch = [ev.epoch for ev in election.events()
             if ev.event == "promote"][-1]
    a.kill()
    # What systemd's control group kill does to the hook.
    os.killpg(hang[0], signal.SIGKILL)
    wait_for(lambda: zkharness.group_members(hang[0]) == [], 10,
             "the hook gone")
    a.hook_conf()
    since = time.time()
    a.start()
    a.wait_role("leader", 20)
    runs = [(ev.event, ev.reason, ev.epoch)
            for ev in hook_lines(election, since)]
    # The resumed session's node: its place, its epoch.
    assert runs == [("demote", "startup", "0"), ("promote", "elected", epoch)]


def crash_mid_promote_claim_deleted(election, kz, first_moment=False):
    """A leader-elect killed in its promote hook (the hook killed with
    it, as the unit's control group is), its claim deleted by hand while
    it is down, started again: the hooks it then ran. first_moment: the
    session file as a crash before its `promoting` line (written 20 ms
    into the hook, off the handover's path) leaves it, made from the one
    the later crash left with that line at 0."""
    a = election.daemon("a", start=False)
    a.hook_conf(promote_hang=1)
    a.start()
    hang = wait_for(a.hang_pids, 20, "the promote hook to hang")
    sid = a.status()["session"]
    path = session_file(a)
    wait_for(lambda: "promoting=1" in path.read_text(), 10,
             "the promote line")
    a.kill()
    os.killpg(hang[0], signal.SIGKILL)
    wait_for(lambda: zkharness.group_members(hang[0]) == [], 10,
             "the hook gone")
    if first_moment:
        path.write_text(path.read_text().replace("promoting=1",
                                                 "promoting=0"))
    claims = f"{election.path}/claims"
    for name in kz.get_children(claims):
        if name.startswith(f"claim-{sid}_"):
            kz.delete(f"{claims}/{name}")
    a.hook_conf()
    since = time.time()
    a.start()
    a.wait_role("leader", 20)
    return [(ev.event, ev.reason) for ev in hook_lines(election, since)]


def test_a_crash_in_a_promote_demotes_first_even_without_its_claim(
        election, kz):
    """The same, and an administrator deletes the claim while the daemon
    is down: nothing in ZooKeeper then says a promote had begun, but the
    session file's `promoting` line does (a review's simulator seeds: the
    restarted daemon ran no demote)."""
    runs = crash_mid_promote_claim_deleted(election, kz)
    assert runs[0] == ("demote", "startup"), runs
    assert runs[-1] == ("promote", "elected"), runs


def test_a_crash_in_a_promotes_first_moment_demotes_first_without_its_claim(
        election, kz):
    """The same, but the crash comes before the `promoting` line: what is
    left to say a promote may have begun is the claim the session file
    names, now gone (simulator seed 112000303 -W -L -R -A: the restart
    ran no demote)."""
    runs = crash_mid_promote_claim_deleted(election, kz, first_moment=True)
    assert runs[0] == ("demote", "startup"), runs
    assert runs[-1] == ("promote", "elected"), runs


def test_a_resumed_leader_acked_on_its_second_claim_is_not_fenced(
        election, kz):
    """A leader whose claim an administrator deletes during its promote
    acks on its next claim, and its breadcrumb rests on that one: the
    session file names both. Re-executed (SIGUSR2), then its node deleted
    by hand, its release still takes the breadcrumb, and the successor
    promotes without a fence (simulator seed 4593000202: the resumed
    image took the promote's claim for the breadcrumb's and left it)."""
    fence = {"hooks.fence": f"{zkharness.RECORD_HOOK} fence"}
    # a's promote waits at a gate until its claim is gone.
    started, gate = election.dir / "started", election.dir / "gate"
    held = election.dir / "held.sh"
    held.write_text(f"#!/bin/sh\ntouch {started}\n"
                    f"while [ ! -e {gate} ]; do sleep 0.02; done\n"
                    f"exec {zkharness.RECORD_HOOK} promote\n")
    held.chmod(0o755)
    a = election.daemon("a", options=dict(fence, **{
        "hooks.promote": str(held)}))
    wait_for(started.exists, 20, "a's promote")
    sid = a.status()["session"]
    claims = f"{election.path}/claims"
    first = [n for n in kz.get_children(claims)
             if n.startswith(f"claim-{sid}_")]
    assert len(first) == 1, first
    kz.delete(f"{claims}/{first[0]}")
    gate.touch()
    a.wait_role("leader", 20)
    text = session_file(a).read_text()
    claim = int(first[0].rsplit("_", 1)[1])
    assert f"claim={claim}\n" in text, text
    crumb = [int(l.split("=")[1]) for l in text.splitlines()
             if l.startswith("crumb_claim=")]
    assert crumb and crumb[0] > claim, text
    b = election.daemon("b", options=fence)
    b.wait_role("follower", 20)
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "resumed: leader", 20, mark)
    since = time.time()
    cands = f"{election.path}/candidates"
    (ours,) = [n for n in kz.get_children(cands) if sid in n]
    kz.delete(f"{cands}/{ours}")
    # a leads until it hears of the deletion: wait for b, not for one.
    b.wait_role("leader", 20)
    assert election.wait_one_leader(timeout=20) is b
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert ("a", "demote", "node-deleted") in runs, runs
    assert ("b", "promote", "elected") in runs, runs
    assert not [r for r in runs if r[1] == "fence"], runs
    election.check_invariants()


def leader_with_run(election, text, **options):
    """Daemon a, leading with hooks.run set to a script of text; returns
    it and its run's process group."""
    run = election.dir / "run.sh"
    run.write_text(text)
    run.chmod(0o755)
    a = election.daemon("a", options={"hooks.run": str(run), **options})
    a.wait_role("leader", 20)
    return a, int(wait_for(lambda: a.status().get("run_pid"), 10, "run_pid"))


def test_a_resumed_crash_starts_hooks_run_again(election):
    election.session_timeout_ms = 4000     # the shared server's most
    a, old = leader_with_run(election, "#!/bin/sh\nexec sleep 1000\n")
    since = time.time()
    a.kill()
    os.killpg(old, signal.SIGKILL)      # as the unit's control group is
    time.sleep(0.5)     # the restart comes 0.5 s after the crash
    mark = len(a.log_text())
    a.start()
    wait_log(a, "resumed: leader", 20, mark)
    # A zombie of the old group may wait for its reaper a while: the
    # restarted daemon looks for what it left before its own run starts.
    new = int(wait_for(lambda: a.status().get("run_pid") not in ("", str(old))
                       and a.status()["run_pid"], 10, "the new run"))
    assert not zkharness.process_gone(new)
    assert "still there" not in a.log_text()[mark:]
    assert hook_lines(election, since) == []


def crashed_leader_with_run(election):
    """Leader a, its run a shell with a child, killed with SIGKILL once
    the session file names the run: a, the run's group, the crash's
    time."""
    election.session_timeout_ms = 4000     # the shared server's most
    a, old = leader_with_run(election, "#!/bin/sh\nsleep 1000 &\nwait\n")
    wait_for(lambda: f"run={old}\n" in session_file(a).read_text(), 10,
             "the session file to name the run")
    # The shell and its child: a loaded machine may not have forked yet.
    wait_for(lambda: len(zkharness.group_members(old)) == 2, 10,
             "the run's child")
    since = time.time()
    a.kill()
    return a, old, since


def restart_stops_old_run_first(a, old, said):
    """Starts a again: it resumes, logs said about group old, and stops
    that group before its own run starts. Returns the new run's group."""
    mark = len(a.log_text())
    a.start()
    wait_log(a, "resumed: leader", 20, mark)
    # Zombies of the old group (a lazy reaper) are waited for up to
    # hooks.run_stop_timeout (10 s).
    new = int(wait_for(lambda: a.status().get("run_pid") not in ("", str(old))
                       and a.status()["run_pid"], 20, "the new run"))
    assert zkharness.group_members(old) == []
    log = a.log_text()[mark:]
    said = log.index(f"run process [{old}] of the daemon before a crash "
                     f"{said}")
    stopped = log.index(f"run process [{old}] stopped after")
    started = log.index(f"running run process [{new}]")
    assert said < stopped < started, log
    return new


def test_a_crash_outside_systemd_stops_the_run_it_left(election):
    """Outside systemd nothing ends hooks.run's group when the daemon dies
    (SIGKILL): the daemon started again finds it by the session file and
    stops it before it starts its own run, so one run is left, the new
    one, and the resumed leader runs no hook."""
    a, old, since = crashed_leader_with_run(election)
    assert len(zkharness.group_members(old)) == 2, "the run died with the daemon"
    time.sleep(0.5)     # the restart comes 0.5 s after the crash
    new = restart_stops_old_run_first(
        a, old, "is still there: stopping its process group")
    # The new run's shell forks its child in its own time.
    wait_for(lambda: len(zkharness.group_members(new)) == 2, 10,
             "the new run's shell and child")
    assert f"run={new}\n" in session_file(a).read_text()
    assert hook_lines(election, since) == []


def test_a_crash_stops_what_the_run_it_left_left_in_its_group(election):
    """The run's shell ended after the crash, one of its children lives
    on in its group: the daemon started again finds the group (its leader
    a zombie or gone) and kills what is left before its own run starts."""
    a, old, since = crashed_leader_with_run(election)
    os.kill(old, signal.SIGKILL)        # the shell alone: its sleep lives on
    wait_for(lambda: old not in zkharness.group_members(old), 5,
             "the shell's end")
    assert len(zkharness.group_members(old)) == 1, \
        "the shell's child died with it"
    restart_stops_old_run_first(
        a, old, "has ended: killing what it left in its process group")
    assert hook_lines(election, since) == []


def test_a_crash_restarted_late_stops_the_run_it_left_before_its_demote(
        election):
    """The same after the session expired: the run left behind ignores
    SIGTERM; with no lease left it gets SIGKILL at once, and the startup
    demote starts only once its whole group is gone."""
    demote = election.dir / "demote.sh"
    demote.write_text(f"""#!/bin/sh
if [ -r {election.dir}/old-run ] &&
    kill -0 -- "-$(cat {election.dir}/old-run)" 2>/dev/null; then
	echo alive >>{election.dir}/alive-at-demote
fi
exec {zkharness.RECORD_HOOK} demote
""")
    demote.chmod(0o755)
    a, old = leader_with_run(
        election, "#!/bin/sh\ntrap '' TERM\nsleep 1000 &\nwait\n",
        **{"hooks.demote": str(demote), "hooks.run_stop_timeout": "30s"})
    b = election.daemon("b")
    b.wait_role("follower", 20)
    wait_for(lambda: f"run={old}\n" in session_file(a).read_text(), 10,
             "the session file to name the run")
    (election.dir / "old-run").write_text(str(old))
    t_s = election.session_timeout_ms / 1000
    killed = time.time()
    a.kill()
    b.wait_role("leader", 3 * t_s)
    time.sleep(max(0.0, killed + 3 * t_s - time.time()))   # restart at 3 T
    assert len(zkharness.group_members(old)) == 2, "the run died with the daemon"
    since = time.time()
    mark = len(a.log_text())
    a.start()
    a.wait_role("follower", 20)
    assert zkharness.group_members(old) == []
    assert not (election.dir / "alive-at-demote").exists(), \
        "the startup demote ran while the old run's group lived"
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert runs == [("a", "demote", "startup")]
    log = a.log_text()[mark:]
    assert f"run process [{old}] still there: sending SIGKILL" in log
    assert log.index(f"run process [{old}] stopped after") < \
        log.index("running demote hook"), log
    assert a.status()["run_pid"] == ""
    election.check_invariants()


def test_sigusr2_on_a_follower_and_a_paused_node(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    c = election.daemon("c")
    c.wait_role("follower", 20)
    assert c.ctl("pause").strip() == "ok"
    c.wait_role("observer", 10)
    queue = [m[1] for m in a.members()]
    since = time.time()
    for d in (b, c):
        mark = len(d.log_text())
        pid = d.pid
        d.signal(signal.SIGUSR2)
        wait_log(d, "resumed:", 20, mark)
        assert d.pid == pid
    b.wait_role("follower", 10)
    c.wait_role("observer", 10)
    # The follower kept its node, so its place: nobody moved.
    assert [m[1] for m in a.members()] == queue
    assert a.role() == "leader"
    assert hook_lines(election, since) == []


def test_sigusr2_is_refused_when_the_session_cannot_be_handed_over(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    path = session_file(a)
    wait_for(path.exists, 10, "the session file")
    # A directory in the way of the temporary file: no write succeeds.
    block = path.with_name(path.name + ".tmp")
    block.mkdir()
    (block / "x").write_text("")
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "re-exec refused: the session file", 10, mark)
    assert f"(pid {a.pid}," not in a.log_text()[mark:]
    assert a.role() == "leader"
    shutil.rmtree(block)


def test_sigusr2_again_while_the_new_image_starts_does_not_kill_it(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    pid = a.pid
    since = time.time()
    # Signals every few milliseconds across several re-execs: some land
    # while the new image has no handler yet (they wait for it).
    end = time.monotonic() + 3
    while time.monotonic() < end:
        a.signal(signal.SIGUSR2)
        time.sleep(0.003)
    wait_for(lambda: a.ctl("ping").strip() == "pong", 10, "an answer")
    assert a.alive() and a.pid == pid
    a.wait_role("leader", 10)
    assert a.log_text().count(f"(pid {pid},") >= 2
    assert hook_lines(election, since) == []


def test_sigusr2_keeps_a_run_process_whose_output_ended(election):
    # The shell itself execs with its output elsewhere: the pipe ends.
    run = "echo detaching; exec sleep 1000 >/dev/null 2>&1"
    a = election.daemon("a", options={"hooks.run": run})
    a.wait_role("leader", 20)
    pid = int(wait_for(lambda: a.status().get("run_pid"), 10, "run_pid"))
    wait_log(a, "detaching", 10)
    since = time.time()
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "resumed: leader", 20, mark)
    assert int(a.status()["run_pid"]) == pid
    assert not zkharness.process_gone(pid)
    after = a.log_text()[mark:]
    assert "running run process" not in after
    assert "cannot be read in full" not in after
    assert "cannot watch its output" not in after
    assert hook_lines(election, since) == []
    # Still supervised: its end is the leader's resign (run-exited).
    os.killpg(pid, signal.SIGKILL)
    wait_log(a, "resigning", 20, mark)


def test_sigusr2_keeps_an_unhealthy_node_out_of_the_election(election):
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b", options={
        "hooks.check": "exit 1", "hooks.check_interval": "3s",
        "hooks.check_fall": "1", "hooks.check_rise": "1"})
    b.wait_role("observer", 20)
    wait_for(lambda: [m[1] for m in a.members()] == ["a"], 10,
             "b out of the queue")
    mark = len(b.log_text())
    b.signal(signal.SIGUSR2)
    wait_log(b, "resumed:", 20, mark)
    # A new image that forgot its health would rejoin at once.
    assert b.role() == "observer"
    assert [m[1] for m in a.members()] == ["a"]
    assert "rejoining" not in b.log_text()[mark:]


def test_sockets_x_and_x_sock_never_share_a_session(election):
    """Sockets X.sock and X map to one session file X.session: a daemon
    at X refuses to start while one answers at X.sock, and after that one
    crashed it does not resume its session (another election's)."""
    a = election.daemon("a", socket_path=election.dir / "x.sock")
    a.wait_role("leader", 20)
    path = session_file(a)
    wait_for(path.exists, 10, "a's session file")
    b = election.daemon("b", start=False, socket_path=election.dir / "x",
                        options={"election.service": election.service + "2"})
    b.start(wait=False)
    assert b.wait_exit(20) != 0
    assert "whose session file would be" in b.log_text()
    assert a.role() == "leader"
    a_session = a.status()["session"]
    a.kill()
    b.start()
    b.wait_role("leader", 20)
    assert "recorded for another" in b.log_text()
    assert "resuming zookeeper session" not in b.log_text()
    assert b.status()["session"] != a_session


def test_sigusr2_is_refused_when_a_key_a_reload_keeps_changed(election):
    """Each key a reload refuses: the re-exec is refused before the exec,
    naming the key and both values, and the old image goes on; with the
    file restored, the re-exec happens."""
    (port,) = zkharness.free_ports(1)
    a = election.daemon("a")
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    pid, epoch = a.pid, a.status()["epoch"]
    since = time.time()
    changes = {
        "control.socket": str(election.dir / "a2.sock"),
        "zookeeper.root": "/other",
        "election.service": election.service + "2",
        "election.id": "a2",
        "control.status_file": str(election.dir / "a2.status"),
        "zookeeper.session_timeout": "4000ms",
        "election.mode": "observer",
        "control.http_listen": f"127.0.0.1:{port}",
    }
    for key, value in changes.items():
        old = a.options.get(key)
        a.options[key] = value
        a.write_config()
        mark = len(a.log_text())
        a.signal(signal.SIGUSR2)
        wait_log(a, "re-exec refused", 10, mark)
        line = next(l for l in a.log_text()[mark:].splitlines()
                    if "re-exec refused" in l)
        assert key in line and value in line, line
        a.options[key] = old
        assert a.alive() and a.pid == pid
        assert f"(pid {pid}," not in a.log_text()[mark:]
    a.write_config()
    assert a.role() == "leader" and a.status()["epoch"] == epoch
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "resumed: leader", 20, mark)
    assert a.pid == pid and a.status()["epoch"] == epoch
    assert b.role() == "follower"
    assert hook_lines(election, since) == []


def test_a_crash_demoted_by_the_unit_then_started_again_starts_afresh(
        election):
    """The unit's OnFailure= ran the crash script (the application is
    demoted), then the daemon is started again while the session it left
    lives: it must not resume as leader, which would say it leads with no
    promote after that demote. The script removes the session file before
    its demote: the start is a fresh session's, the leadership goes on to
    the next candidate once the old session expires."""
    election.session_timeout_ms = 4000     # the shared server's most
    script = election.dir / "a.crashed"
    a = election.daemon("a", env={"ZKELECTD_CRASHED": str(script)},
                        options={"hooks.demote_timeout": "1300ms"})
    a.wait_role("leader", 20)
    b = election.daemon("b")
    b.wait_role("follower", 20)
    wait_for(script.exists, 10, "the crash script")
    path = session_file(a)
    wait_for(path.exists, 10, "the session file")
    since = time.time()
    a.kill()
    env = {"PATH": os.environ["PATH"]}
    subprocess.run(["/bin/sh", str(script)], env=env, timeout=30)
    assert not path.exists()
    mark = len(a.log_text())
    a.start()
    b.wait_role("leader", 30)
    a.wait_role("follower", 20)
    assert "resumed: leader" not in a.log_text()[mark:]
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert runs[0] == ("a", "demote", "crashed"), runs
    assert ("b", "promote", "elected") in runs, runs
    assert [r for r in runs if r[0] == "a" and r[1] == "promote"] == [], runs


class Asker(threading.Thread):
    """One command on the control socket, answered later: its answer, or
    the error that ended the wait, once joined."""

    def __init__(self, d, cmd):
        super().__init__(daemon=True)
        self.d, self.cmd = d, cmd
        self.answer = None
        self.error = None
        self.start()

    def run(self):
        try:
            self.answer = self.d.ctl(self.cmd, timeout=120).strip()
        except OSError as e:
            self.error = e

    def result(self, timeout=120):
        self.join(timeout)
        assert not self.is_alive(), f"{self.cmd}: no answer"
        return self.answer if self.error is None else repr(self.error)


def first_hook(election, since, id, event):
    return wait_for(lambda: [ev for ev in hook_lines(election, since)
                             if (ev.id, ev.event) == (id, event)],
                    30, f"{id}'s {event} hook")


@pytest.mark.parametrize("command", ["resign", "switchover b"])
def test_sigusr2_during_a_handover_answers_it_first(election, command):
    """SIGUSR2 while a resign's demote hook runs, or while a switchover
    waits for its target to lead: the re-exec waits for the command to be
    done and answered (a reviewer's client was cut, `closed the connection
    without an answer`, in 5 tries of 6)."""
    opts = {"zookeeper.session_timeout": "12s"}
    a = election.daemon("a", options=opts)
    a.wait_role("leader", 20)
    b = election.daemon("b", options=opts)
    b.wait_role("follower", 20)
    pid = a.pid
    if command == "resign":
        a.hook_conf(demote_sleep=2)
    else:
        b.hook_conf(promote_sleep=2)
    since = time.time()
    asked = Asker(a, command)
    first_hook(election, since, "a", "demote")
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    assert asked.result() == "ok"
    wait_log(a, "resumed:", 30, mark)
    assert a.pid == pid
    b.wait_role("leader", 20)
    a.wait_role("follower", 20)
    runs = [(ev.id, ev.event, ev.reason) for ev in hook_lines(election, since)]
    assert runs == [("a", "demote", command.split()[0]),
                    ("b", "promote", "elected")]


def test_sigusr2_during_a_resign_zookeeper_cannot_take_yet(election):
    """A leader cut off from ZooKeeper (its lease still good) is asked to
    resign, then gets SIGUSR2; ZooKeeper comes back 2 s later. The resign
    is answered and kept: the leader's node is released, the next one
    promotes, and the old leader is never promoted again (a reviewer saw
    DEMOTE reason=resign, then PROMOTE reason=elected on the same epoch)."""
    proxy = ZkProxy(election.zk_hosts, name="proxy-a")
    try:
        opts = {"zookeeper.session_timeout": "20s",
                "hooks.demote_timeout": "3s"}
        a = election.daemon("a", options=dict(
            opts, **{"zookeeper.hosts": proxy.hosts}))
        a.wait_role("leader", 20)
        b = election.daemon("b", options=opts)
        b.wait_role("follower", 20)
        pid = a.pid
        a.hook_conf(demote_sleep=1.2)
        mark = len(a.log_text())
        proxy.freeze()
        lost = re.compile(r"zookeeper session \S+: connecting")
        wait_for(lambda: lost.search(a.log_text()[mark:]), 30,
                 "a to see its connection lost")
        assert a.role() == "leader"
        since = time.time()
        resign = Asker(a, "resign")
        first_hook(election, since, "a", "demote")
        mark = len(a.log_text())
        a.signal(signal.SIGUSR2)
        time.sleep(2)
        proxy.thaw()
        assert resign.result() == "ok"
        wait_log(a, "resumed:", 30, mark)
        assert a.pid == pid
        b.wait_role("leader", 30)
        a.wait_role("follower", 20)
        runs = [(ev.id, ev.event, ev.reason)
                for ev in hook_lines(election, since)]
        assert runs == [("a", "demote", "resign"),
                        ("b", "promote", "elected")], runs
        a.stop()
    finally:
        proxy.close()


def test_sigusr2_waiting_past_its_bound_is_given_up(election):
    """A pause that ZooKeeper cannot take (a follower cut off) holds the
    re-exec back; past its bound (hooks.timeout and 3 T: 10 s here) the
    re-exec is given up with a warning and the daemon goes on, its pause
    answered once ZooKeeper is back: it never execs with a command not
    answered."""
    proxy = ZkProxy(election.zk_hosts, name="proxy-b")
    try:
        a = election.daemon("a")
        a.wait_role("leader", 20)
        b = election.daemon("b", options={"zookeeper.hosts": proxy.hosts,
                                          "hooks.timeout": "1s"})
        b.wait_role("follower", 20)
        pid = b.pid
        proxy.freeze()
        pause = Asker(b, "pause")
        wait_log(b, "pause requested", 10)
        mark = len(b.log_text())
        b.signal(signal.SIGUSR2)
        wait_log(b, "re-exec given up: a pause", 40, mark)
        assert b.ctl("ping").strip() == "pong"
        proxy.thaw()
        assert pause.result() == "ok"
        b.wait_role("observer", 30)
        assert b.alive() and b.pid == pid
        assert f"(pid {pid}," not in b.log_text()[mark:]
        b.stop()
    finally:
        proxy.close()


@pytest.mark.parametrize("broken", ["missing-library", "rejects-config"])
def test_sigusr2_with_a_new_binary_that_cannot_run_is_refused(election,
                                                               broken):
    """The binary installed at the daemon's path cannot run here: it needs
    a library that is not installed (ld.so ends it, exit 127), or it is a
    version that rejects the running configuration. The daemon runs it as
    `BINARY -t -c CONFIG` first and executes it only if that exits 0: the
    re-exec is refused, the running daemon goes on leading (it used to
    exec and die, leaving its application to lead until a failover)."""
    a, b, exe = leader_from_copy(election)
    bindir = exe.parent
    good = zkharness.binary("zkelectd")
    pid, epoch = a.pid, a.status()["epoch"]
    new = bindir / "zkelectd.new"
    if broken == "missing-library":
        data = good.read_bytes()
        lib = b"libzookeeper_mt.so.2"
        assert lib in data
        new.write_bytes(data.replace(lib, b"libzookeeper_mt.so.9"))
    else:
        new.write_text("#!/bin/sh\necho \"zkelectd: $*: unknown key "
                       "election.flavour\" >&2\nexit 1\n")
    new.chmod(0o755)
    os.replace(new, exe)
    assert subprocess.run([str(exe), "-t", "-c", str(a.conf_path)],
                          capture_output=True).returncode != 0
    since = time.time()
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "re-exec refused", 30, mark)
    refusal = [l for l in a.log_text()[mark:].splitlines()
               if "re-exec refused" in l][0]
    assert str(exe) in refusal and "-t" in refusal, refusal
    assert a.alive() and a.pid == pid
    assert a.ctl("ping").strip() == "pong"
    assert a.role() == "leader" and a.status()["epoch"] == epoch
    assert f"(pid {pid}," not in a.log_text()[mark:]
    # A good binary installed again: the next SIGUSR2 goes through.
    shutil.copy2(good, new)
    os.replace(new, exe)
    mark = len(a.log_text())
    a.signal(signal.SIGUSR2)
    wait_log(a, "resumed: leader", 30, mark)
    assert a.pid == pid and a.status()["epoch"] == epoch
    assert b.role() == "follower"
    assert hook_lines(election, since) == []
