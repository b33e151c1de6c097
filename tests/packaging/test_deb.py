"""debian/: dpkg-buildpackage builds a .deb from a clean copy of the
tree, with everything in place, and it installs, runs and purges."""
import fcntl
import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import sys
import time

import pytest

from conftest import ROOT, need_root, run

sys.path.insert(0, str(ROOT / "tests" / "integration"))
import zkharness  # noqa: E402

PKG = "zkelectd"


def makefile_version():
    m = re.search(r"^VERSION\s*=\s*(\S+)", (ROOT / "Makefile").read_text(),
                  re.M)
    return m.group(1)


def test_changelog_version_is_the_makefile_version():
    r = run(["dpkg-parsechangelog", "-l", str(ROOT / "debian/changelog"),
             "-S", "Version"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == makefile_version()


NEXT = "+next1"      # the version N+1 of the upgrade test: N + this


def build_deb(top, version=None):
    """Builds the package from the files git knows (tracked, and new ones
    not ignored), so that nothing built in the work tree leaks in; with
    version, as that version (Makefile and changelog)."""
    src = top / "zkelectd"
    r = run(["git", "-c", f"safe.directory={ROOT}", "-C", str(ROOT),
             "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    assert r.returncode == 0, f"not a git checkout? {r.stderr}"
    for name in filter(None, r.stdout.split("\0")):
        p = ROOT / name
        if not p.is_file():
            continue        # deleted in the work tree, not yet in git
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, src / name)
    assert not (src / "build").exists()
    if version is not None:
        mk = src / "Makefile"
        mk.write_text(re.sub(r"^VERSION\s*=.*$", f"VERSION   = {version}",
                             mk.read_text(), count=1, flags=re.M))
        cl = src / "debian/changelog"
        old = cl.read_text()
        trailer = next(l for l in old.splitlines() if l.startswith(" -- "))
        cl.write_text(f"{PKG} ({version}) unstable; urgency=medium\n\n"
                      f"  * Test build for the upgrade test.\n\n"
                      f"{trailer}\n\n{old}")
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=2")
    r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, env=env,
            timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    path = top / f"{PKG}_{version or makefile_version()}_{arch}.deb"
    assert path.is_file(), sorted(os.listdir(top))
    return path


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    return build_deb(tmp_path_factory.mktemp("deb"))


@pytest.fixture(scope="module")
def deb_next(tmp_path_factory):
    return build_deb(tmp_path_factory.mktemp("deb-next"),
                     makefile_version() + NEXT)


def test_package_contents(deb):
    r = run(["dpkg-deb", "-c", str(deb)])
    assert r.returncode == 0, r.stderr
    entries = {}
    for line in r.stdout.splitlines():
        f = line.split()
        entries[f[5].removeprefix(".")] = f[0]
    for path, mode in {
        "/usr/sbin/zkelectd": "-rwxr-xr-x",
        "/usr/bin/zkelectctl": "-rwxr-xr-x",
        "/lib/systemd/system/zkelectd@.service": "-rw-r--r--",
        "/lib/systemd/system/zkelectd-crashed@.service": "-rw-r--r--",
        "/usr/share/man/man1/zkelectctl.1.gz": "-rw-r--r--",
        "/usr/share/man/man5/zkelectd.conf.5.gz": "-rw-r--r--",
        "/usr/share/man/man8/zkelectd.8.gz": "-rw-r--r--",
        "/etc/zkelectd/zkelectd.conf.example": "-rw-r--r--",
        "/usr/share/bash-completion/completions/zkelectctl": "-rw-r--r--",
        "/usr/share/doc/zkelectd/examples/README.md": "-rw-r--r--",
        "/usr/share/doc/zkelectd/examples/vip/vip.sh": "-rwxr-xr-x",
        "/usr/share/doc/zkelectd/examples/vip/zkelectd.conf": "-rw-r--r--",
        "/usr/share/doc/zkelectd/examples/hardening/zkelectd@.service.d/"
        "hardening.conf": "-rw-r--r--",
    }.items():
        assert entries.get(path) == mode, path
    # Every example is there, under the same name.
    for p in (ROOT / "examples").rglob("*"):
        if p.is_file():
            name = "/usr/share/doc/zkelectd/" + str(p.relative_to(ROOT))
            assert name in entries, name


def test_package_installs_runs_and_purges(deb, tmp_path):
    need_root()
    # Two suites at once on one machine take turns: one installs, runs and
    # purges while the other waits (dpkg's own lock would fail it instead).
    with open("/run/lock/zkelectd-test-deb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        install_run_purge(deb)


def install_run_purge(deb):
    r = run(["dpkg-query", "-W", "-f=${Status}", PKG])
    if "installed" in r.stdout and "not-installed" not in r.stdout:
        pytest.skip(f"package {PKG} is installed on this machine already")
    try:
        r = run(["dpkg", "-i", str(deb)], timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        version = makefile_version()
        assert run(["/usr/sbin/zkelectd", "-V"]).stdout.strip().endswith(
            version)
        assert run(["/usr/bin/zkelectctl", "-V"]).stdout.strip() == \
            f"zkelectctl {version}"
        r = run(["/usr/sbin/zkelectd", "-t", "-c",
                 "/etc/zkelectd/zkelectd.conf.example"])
        assert (r.returncode, r.stdout.strip()) == (0, "configuration OK")
        unit = Path("/lib/systemd/system/zkelectd@.service").read_text()
        assert "ExecStart=/usr/sbin/zkelectd -c /etc/zkelectd/%i.conf" \
            in unit
        # A template: nothing enabled at install.
        assert glob.glob("/etc/systemd/system/*/zkelectd*") == []
        assert run(["dpkg", "-L", PKG]).stdout.count("\n") > 20
    finally:
        r = run(["dpkg", "-P", PKG], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for path in ("/usr/sbin/zkelectd", "/usr/bin/zkelectctl",
                 "/lib/systemd/system/zkelectd@.service",
                 "/etc/zkelectd/zkelectd.conf.example",
                 "/usr/share/doc/zkelectd"):
        assert not os.path.exists(path), path
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", PKG],
                       capture_output=True, text=True)
    assert "ok installed" not in r.stdout


def test_upgrade_reexecs_running_daemons_without_a_failover(deb, deb_next):
    """Version N installed, a leader and a follower running its
    /usr/sbin/zkelectd, then N+1 installed over it: the postinst
    re-executes both (SIGUSR2), nothing moves, no hook runs, both report
    N+1. There is no systemd here (PID 1 is not systemd), so the daemons
    run as the test's children, which the postinst finds as it finds a
    unit's: by their binary's path."""
    need_root()
    with open("/run/lock/zkelectd-test-deb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = run(["dpkg-query", "-W", "-f=${Status}", PKG])
        if "installed" in r.stdout and "not-installed" not in r.stdout:
            pytest.skip(f"package {PKG} is installed on this machine already")
        zk = zkharness.ZkCluster(size=1)
        e = None
        try:
            r = run(["dpkg", "-i", str(deb)], timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            zk.start()
            e = zkharness.Election(zk.hosts, "deb-upgrade",
                                   session_timeout_ms=4000)
            a = e.daemon("a", start=False)
            b = e.daemon("b", start=False)
            for d in (a, b):
                d.exe = "/usr/sbin/zkelectd"
            a.start()
            a.wait_role("leader", 20)
            b.start()
            b.wait_role("follower", 20)
            pids = (a.pid, b.pid)
            epoch = a.status()["epoch"]
            assert a.ctl("version").strip() == makefile_version()
            since = time.time()
            r = run(["dpkg", "-i", str(deb_next)], timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            for d in (a, b):
                assert f"the daemon [{d.pid}] re-executed (SIGUSR2)" in \
                    r.stdout + r.stderr, r.stdout + r.stderr
            for d in (a, b):
                zkharness.wait_value(lambda: d.ctl("version").strip(),
                                     makefile_version() + NEXT, 20,
                                     f"{d.id} running N+1")
            a.wait_role("leader", 10)
            b.wait_role("follower", 10)
            assert (a.pid, b.pid) == pids
            assert a.status()["epoch"] == epoch
            hooks = [ev for ev in e.events()
                     if ev.ts > since and ev.phase == "start"]
            assert hooks == []
        finally:
            if e is not None:
                problems = e.close()
                assert not problems, problems
            zk.close()
            run(["dpkg", "-P", PKG], timeout=300)
