"""debian/: dpkg-buildpackage builds a .deb from a clean copy of the
tree, with everything in place, and it installs, runs and purges."""
import fcntl
import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, need_root, run

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


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    """Builds the package from the files git knows (tracked, and new ones
    not ignored), so that nothing built in the work tree leaks in."""
    top = tmp_path_factory.mktemp("deb")
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
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=2")
    r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, env=env,
            timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    path = top / f"{PKG}_{makefile_version()}_{arch}.deb"
    assert path.is_file(), sorted(os.listdir(top))
    return path


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
