"""The files a configuration names must be distinct: the status file is
replaced by a rename at every write, so at the path of the control socket,
of the session file beside it or of the configuration file it would take
that file's place.  `zkelectd -t` and the start refuse such a file, and a
reload with one keeps the running configuration and its socket.  The
socket's group is looked up by -t as by the start.  Real
binaries; the reload test has its own ZooKeeper, and every wait a
deadline."""

import grp
import os
import re
import signal
import stat
import subprocess

from zkharness import binary, parse_kv, wait_for, zkelectctl

BASE = "[zookeeper]\nhosts = 127.0.0.1:2181\n[election]\nservice = web\n"


def test_check_and_start_refuse_a_status_file_at_another_file(tmp_path):
    zkd = str(binary("zkelectd"))
    conf = tmp_path / "z.conf"
    sock = tmp_path / "web.sock"
    cases = [
        (f"{tmp_path}//./web.sock", f"control.socket ({sock})"),
        (f"{tmp_path}/web.session",
         f"the session file of control.socket {sock}"),
        (str(conf), "the configuration file"),
    ]
    for status, other in cases:
        conf.write_text(BASE + f"[control]\nsocket = {sock}\n"
                        f"status_file = {status}\n")
        r = subprocess.run([zkd, "-t", "-c", str(conf)], capture_output=True,
                           text=True, timeout=30)
        want = (f"zkelectd: {conf}:7: control.status_file: {status} is "
                f"also {other}")
        assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", want)

    # The daemon refuses it the same way, before it makes any file.
    conf.write_text(BASE + f"[control]\nsocket = {sock}\n"
                    f"status_file = {sock}\n")
    r = subprocess.run([zkd, "-c", str(conf)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    assert f"{conf}:7: control.status_file: {sock} is also control.socket" \
        in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["z.conf"]


def test_check_refuses_a_socket_group_the_start_would_refuse(tmp_path):
    """control.socket_group is looked up by -t as by the start: a group
    that does not exist fails the check (systemd's ExecReload runs it), not
    the next restart (a reviewer's "configuration OK" for nosuchgroup)."""
    zkd = str(binary("zkelectd"))
    group = "zkelectd-no-such-group"
    try:
        grp.getgrnam(group)
        raise AssertionError(f"group {group} exists on this machine")
    except KeyError:
        pass
    conf = tmp_path / "z.conf"
    conf.write_text(BASE + f"[control]\nsocket = {tmp_path}/web.sock\n"
                    f"status_file = {tmp_path}/web.status\n"
                    f"socket_group = {group}\n")
    r = subprocess.run([zkd, "-t", "-c", str(conf)], capture_output=True,
                       text=True, timeout=30)
    want = f"zkelectd: {conf}:8: control.socket_group: {group}: no such group"
    assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", want)
    r = subprocess.run([zkd, "-t", "-c", str(conf), "-o",
                        f"control.socket_group={group}"],
                       capture_output=True, text=True, timeout=30)
    want = f"zkelectd: -o control.socket_group: {group}: no such group"
    assert (r.returncode, r.stdout, r.stderr.strip()) == (1, "", want)

    # The start refuses it too, before it makes the socket.
    r = subprocess.run([zkd, "-c", str(conf)], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 1, r.stderr
    assert f"{group}: no such group" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["z.conf"]


def test_a_socket_group_given_as_a_number_is_taken(election):
    """The page says "group name or number": a number that names no group
    is the gid itself, for -t and for the start alike."""
    # Root may give the socket any group; others only one of their own.
    gid = grp.getgrnam("nogroup").gr_gid if os.geteuid() == 0 \
        else os.getegid()
    d = election.daemon("node1", options={"control.socket_group": str(gid)})
    r = subprocess.run([str(binary("zkelectd")), "-t", "-c",
                        str(d.conf_path)], capture_output=True, text=True,
                       timeout=30)
    assert (r.returncode, r.stdout) == (0, "configuration OK\n"), r.stderr
    d.wait_role("leader")
    assert os.stat(d.socket).st_gid == gid


def _is_socket(path):
    return stat.S_ISSOCK(os.lstat(path).st_mode)


def test_reload_with_the_status_file_at_the_socket_keeps_the_socket(election):
    a = election.daemon("node1", data="10.0.0.1:1")
    a.wait_role("leader")
    mark = len(a.log_text())
    a.options["control.status_file"] = str(a.socket)
    a.options["election.data"] = "10.0.0.1:2"
    a.write_config()
    a.signal(signal.SIGHUP)
    wait_for(lambda: re.search(r"configuration reloaded|keeping the running",
                               a.log_text()[mark:]), 10, "the reload to end")
    text = a.log_text()[mark:]
    assert re.search(
        rf"reload: {re.escape(str(a.conf_path))}:\d+: control\.status_file: "
        rf"{re.escape(str(a.socket))} is also control\.socket; keeping the "
        r"running configuration", text), text
    assert "configuration reloaded" not in text

    # Nothing of the file applied; the socket and the status file work on.
    assert parse_kv(a.ctl("status"))["data"] == "10.0.0.1:1"
    assert _is_socket(a.socket)
    # A second candidate makes the leader write its status file again.
    b = election.daemon("node2")
    b.wait_role("follower")
    wait_for(lambda: a.status().get("candidates") == "2", 10,
             "the leader's status file to count two candidates")
    assert _is_socket(a.socket)
    r = zkelectctl(["-s", str(a.socket), "role"])
    assert (r.returncode, r.stdout.strip()) == (0, "leader"), r
    assert a.role() == "leader"
