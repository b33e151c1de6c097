"""make install / make uninstall, and the bash completion it installs."""
import os
import re
import shlex
import socket
import subprocess

import pytest

from conftest import ROOT, run

EXPECTED = {
    "usr/sbin/zkelectd", "usr/bin/zkelectctl",
    "usr/share/man/man1/zkelectctl.1", "usr/share/man/man5/zkelectd.conf.5",
    "usr/share/man/man8/zkelectd.8",
    "etc/zkelectd/zkelectd.conf.example",
    "usr/lib/systemd/system/zkelectd@.service",
    "usr/lib/systemd/system/zkelectd-crashed@.service",
    "usr/share/bash-completion/completions/zkelectctl",
}


def files_under(root):
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if not p.is_dir()}


def make(target, destdir, bindir, *args):
    build = os.path.relpath(bindir, ROOT)
    r = run(["make", "-s", "-C", str(ROOT), target, f"DESTDIR={destdir}",
             f"BUILD={build}", *args])
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("prefix", ["/usr", "/usr/local"])
def test_install_then_uninstall_leaves_nothing(bindir, tmp_path, prefix):
    make("install", tmp_path, bindir, f"PREFIX={prefix}")
    want = {f.replace("usr/", prefix.lstrip("/") + "/", 1)
            if not f.startswith("etc/") else f for f in EXPECTED}
    assert files_under(tmp_path) == want
    unit = (tmp_path / prefix.lstrip("/") / "lib/systemd/system"
            / "zkelectd@.service").read_text()
    assert f"ExecStart={prefix}/sbin/zkelectd " in unit
    assert "@SBINDIR@" not in unit
    make("uninstall", tmp_path, bindir, f"PREFIX={prefix}")
    assert files_under(tmp_path) == set()
    assert not (tmp_path / "etc/zkelectd").exists()


def test_uninstall_keeps_a_users_configuration(bindir, tmp_path):
    make("install", tmp_path, bindir, "PREFIX=/usr")
    mine = tmp_path / "etc/zkelectd/web.conf"
    mine.write_text("[zookeeper]\n")
    make("uninstall", tmp_path, bindir, "PREFIX=/usr")
    assert files_under(tmp_path) == {"etc/zkelectd/web.conf"}


def complete(bindir, rundir, *words):
    """What _zkelectctl offers for the command line words (the last one
    being completed), with sockets looked up in rundir."""
    script = f"""
source {shlex.quote(str(ROOT / 'completion/zkelectctl.bash'))}
_zkelectctl_rundir={shlex.quote(str(rundir))}
COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_zkelectctl
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    r = run(["bash", "--norc", "--noprofile", "-c", script])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [w for w in r.stdout.split("\n") if w]


def test_completion(bindir, tmp_path):
    ctl = str(bindir / "zkelectctl")
    cmds = complete(bindir, tmp_path, ctl, "")
    assert "status" in cmds and "is-leader" in cmds and "wait" in cmds
    # Every command zkelectctl itself lists, and nothing else.
    r = run([ctl, "--help"])
    listed = re.findall(r"^  (\S+)", r.stdout.split("Commands:")[1]
                        .split("Options:")[0], re.M)
    assert cmds == listed
    assert complete(bindir, tmp_path, ctl, "st") == ["status"]
    assert complete(bindir, tmp_path, ctl, "-q", "-n", "web", "wait",
                    "") == ["leader", "follower", "promoting", "demoting",
                            "observer", "unknown", "stopped"]
    assert complete(bindir, tmp_path, ctl, "wait", "f") == ["follower"]
    assert complete(bindir, tmp_path, ctl, "wait", "leader", "-") == \
        ["-t", "--timeout"]
    assert complete(bindir, tmp_path, ctl, "status", "--j") == ["--json"]
    assert complete(bindir, tmp_path, ctl, "status", "--json", "-") == \
        ["-t", "--timeout"]
    assert "--service" in complete(bindir, tmp_path, ctl, "--")

    # A switchover's ID may begin with '-': "--" is offered before it, and
    # after it every word is an operand, never an option to complete.
    assert complete(bindir, tmp_path, ctl, "switchover", "") == \
        ["--", "-t", "--timeout"]
    assert complete(bindir, tmp_path, ctl, "switchover", "node2", "") == \
        ["-t", "--timeout"]
    assert complete(bindir, tmp_path, ctl, "switchover", "--", "") == []
    assert complete(bindir, tmp_path, ctl, "switchover", "--", "-") == []
    assert complete(bindir, tmp_path, ctl, "switchover", "-t", "") == []
    assert complete(bindir, tmp_path, ctl, "wait", "--", "") == \
        complete(bindir, tmp_path, ctl, "wait", "")
    # Before the command, options as getopt_long reads them: bundled, the
    # argument attached or not, long ones abbreviated; "--" ends them.
    for words in (["-qn", "web"], ["-qnweb"], ["-q", "-n", "web"],
                  ["--serv", "web"], ["--service=web"], ["-qt", "5s"],
                  ["-n", "--"], ["--"], ["-q", "--"]):
        assert complete(bindir, tmp_path, ctl, *words, "st") == \
            ["status"], words
        assert complete(bindir, tmp_path, ctl, *words, "status", "") == \
            ["--json", "-t", "--timeout"], words
    assert complete(bindir, tmp_path, ctl, "--", "-") == []
    assert complete(bindir, tmp_path, ctl, "-qt", "") == []
    assert complete(bindir, tmp_path, ctl, "-qs", str(tmp_path / "x")) == []
    (tmp_path / "x.sock").write_text("")
    assert complete(bindir, tmp_path, ctl, "-qs", str(tmp_path / "x")) == \
        [str(tmp_path / "x.sock")]
    (tmp_path / "x.sock").unlink()

    # Services: the sockets in the run directory, and only sockets.
    assert complete(bindir, tmp_path, ctl, "-n", "") == []
    socks = []
    try:
        for name in ("web", "db"):
            s = socket.socket(socket.AF_UNIX)
            s.bind(str(tmp_path / f"{name}.sock"))
            socks.append(s)
        (tmp_path / "vip.status").write_text("role=leader\n")
        assert sorted(complete(bindir, tmp_path, ctl, "-n", "")) == \
            ["db", "web"]
        assert complete(bindir, tmp_path, ctl, "--service", "w") == ["web"]
        assert complete(bindir, tmp_path, ctl, "-qn", "w") == ["web"]
        assert complete(bindir, tmp_path, ctl, "--serv", "w") == ["web"]
    finally:
        for s in socks:
            s.close()


def test_completion_is_registered_for_zkelectctl():
    r = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c",
         f"source {shlex.quote(str(ROOT / 'completion/zkelectctl.bash'))}"
         "; complete -p zkelectctl"], capture_output=True, text=True)
    assert r.stdout.strip() == "complete -F _zkelectctl zkelectctl"


def test_completion_shellcheck():
    r = run(["shellcheck", "-s", "bash",
             str(ROOT / "completion/zkelectctl.bash")])
    assert r.returncode == 0, r.stdout
