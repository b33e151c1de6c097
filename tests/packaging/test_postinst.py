"""debian/zkelectd.postinst's re-exec of the running daemons, without dpkg:
the script as shipped, with /usr/sbin/zkelectd replaced by a private path,
run as dpkg runs it on an upgrade (configure OLD-VERSION) after a new
binary was renamed over that path, as dpkg installs one."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT, run

sys.path.insert(0, str(ROOT / "tests" / "integration"))
import zkharness  # noqa: E402


def test_postinst_names_the_daemons_that_refused_the_reexec(bindir,
                                                            tmp_path):
    """Two daemons run the old binary; one's configuration file was edited
    since it started (an unknown key: the re-exec is refused and it goes
    on with the old binary). The postinst says the first re-executed and
    names the second as still on the old binary, with where to look and
    what to do, and the installation does not fail."""
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    exe = sbin / "zkelectd"
    shutil.copy2(bindir / "zkelectd", exe)
    script = (ROOT / "debian/zkelectd.postinst").read_text()
    assert "/usr/sbin/zkelectd" in script
    postinst = tmp_path / "postinst"
    postinst.write_text(script.replace("/usr/sbin/zkelectd", str(exe))
                        .replace("#DEBHELPER#", ""))

    zk = zkharness.ZkCluster(size=1)
    e = None
    try:
        zk.start()
        e = zkharness.Election(zk.hosts, "postinst-reexec",
                               session_timeout_ms=4000)
        good = e.daemon("good", start=False)
        stuck = e.daemon("stuck", start=False)
        for d in (good, stuck):
            d.exe = str(exe)
            d.start()
        e.wait_one_leader(20)
        # Edited meanwhile: the running daemon has not read it yet.
        with open(stuck.conf_path, "a") as f:
            f.write("[control]\nbogus_key = 1\n")
        # The upgrade: a new file renamed over the path, as dpkg does.
        shutil.copy2(bindir / "zkelectd", str(exe) + ".new")
        os.rename(str(exe) + ".new", exe)
        for d in (good, stuck):
            assert os.readlink(f"/proc/{d.pid}/exe") == f"{exe} (deleted)"

        r = run(["sh", str(postinst), "configure", "0.0.9"], timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        said = r.stdout.splitlines()
        assert f"zkelectd: the daemon [{good.pid}] re-executed (SIGUSR2): " \
            "it runs the new version" in said, r.stdout
        assert f"zkelectd: the daemon [{stuck.pid}] still runs the old " \
            "binary: see its log (its standard error) for why (a refused " \
            "re-exec, or a hook it waits for); restart it when " \
            "convenient" in said, r.stdout
        assert len(said) == 2, r.stdout
        assert not any(f"[{stuck.pid}] re-exec" in l for l in said)
        # What it said is so: the one runs the new file, the other the old,
        # and says why in its log.
        assert os.readlink(f"/proc/{good.pid}/exe") == str(exe)
        assert os.readlink(f"/proc/{stuck.pid}/exe") == f"{exe} (deleted)"
        assert "re-exec refused" in stuck.log_text()
        good.wait_ready(10)
        stuck.wait_ready(10)
        assert {good.role(), stuck.role()} == {"leader", "follower"}
    finally:
        if e is not None:
            problems = e.close()
            assert not problems, problems
        zk.close()


def test_postinst_shellcheck():
    r = run(["shellcheck", "-s", "sh", str(ROOT / "debian/zkelectd.postinst")])
    assert r.returncode == 0, r.stdout


def test_postinst_without_daemons_says_nothing(tmp_path):
    """No daemon runs the binary: nothing is said, nothing waited for, and
    a fresh install (configure without an old version) does nothing."""
    script = (ROOT / "debian/zkelectd.postinst").read_text()
    postinst = tmp_path / "postinst"
    postinst.write_text(script.replace("/usr/sbin/zkelectd",
                                       str(tmp_path / "none"))
                        .replace("#DEBHELPER#", ""))
    for args in (["configure", "0.0.9"], ["configure", ""]):
        r = subprocess.run(["sh", str(postinst), *args], capture_output=True,
                           text=True, timeout=30)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), args
