"""examples/: every script passes shellcheck and sh -n, every unit and the
hardening drop-in pass systemd-analyze verify, every zkelectd.conf passes
zkelectd -t, and vip.sh moves a real address inside a network namespace
made here, as root and as an unprivileged user with only the capabilities
of the hardening drop-in."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, need_root, run

sys.path.insert(0, str(ROOT / "tests/integration"))
import zkharness  # noqa: E402

EXAMPLES = ROOT / "examples"
VIP = "192.0.2.10/24"   # TEST-NET-1: never routed, and inside a namespace


def scripts():
    found = []
    for p in sorted(EXAMPLES.rglob("*")):
        if p.is_file() and p.read_bytes().startswith(b"#!"):
            found.append(p)
    return found


def units():
    return sorted(p for p in EXAMPLES.rglob("*")
                  if p.suffix in (".service", ".timer") and p.is_file())


def rel(p):
    return str(p.relative_to(ROOT))


def test_examples_exist():
    names = {rel(p) for p in scripts()} | {rel(p) for p in units()}
    for want in ("examples/vip/vip.sh", "examples/postgresql/pg-promote.sh",
                 "examples/postgresql/pg-fence.sh",
                 "examples/leader-only-job/job@.service",
                 "examples/leader-only-job/job@.timer",
                 "examples/app/myapp@.service", "examples/app/app-hook.sh"):
        assert want in names
    assert (EXAMPLES / "hardening/zkelectd@.service.d/hardening.conf").is_file()
    assert (EXAMPLES / "README.md").is_file()


@pytest.mark.parametrize("script", scripts(), ids=rel)
def test_script_shellcheck_and_sh_n(script):
    assert script.read_text().startswith("#!/bin/sh\n"), \
        "examples are POSIX sh scripts"
    assert os.access(script, os.X_OK), f"{rel(script)} is not executable"
    r = run(["shellcheck", "-s", "sh", str(script)])
    assert r.returncode == 0, r.stdout + r.stderr
    # dash is Debian's /bin/sh, the shell zkelectd runs hooks with.
    r = run(["sh", "-n", str(script)])
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("conf", sorted(EXAMPLES.rglob("zkelectd.conf")),
                         ids=rel)
def test_example_config_is_valid(bindir, conf):
    r = run([str(bindir / "zkelectd"), "-t", "-c", str(conf)])
    assert (r.returncode, r.stdout.strip()) == (0, "configuration OK"), \
        r.stderr


def render_units(bindir, dest):
    """The real zkelectd@.service and every example unit in dest, with
    the commands they run pointing at files that exist here (systemd-
    analyze verify checks that every Exec*= program is executable)."""
    subst = {
        "/usr/bin/zkelectctl": str(bindir / "zkelectctl"),
        "/usr/local/bin/myapp": "/bin/true",
        "/usr/local/bin/myjob": "/bin/true",
    }
    text = (ROOT / "systemd/zkelectd@.service.in").read_text()
    (dest / "zkelectd@.service").write_text(
        text.replace("@SBINDIR@", str(bindir)))
    for u in units():
        text = u.read_text()
        for k, v in subst.items():
            text = text.replace(k, v)
        (dest / u.name).write_text(text)


def verify(paths):
    r = run(["systemd-analyze", "verify", "--man=no"]
            + [str(p) for p in paths])
    return r.returncode, (r.stdout + r.stderr).strip()


def instance(path):
    """A template unit is verified as its instance "web"."""
    return path.parent / path.name.replace("@.", "@web.")


def test_units_verify(bindir, tmp_path):
    render_units(bindir, tmp_path)
    paths = [instance(tmp_path / u.name) for u in units()]
    paths.append(instance(tmp_path / "zkelectd@.service"))
    assert verify(paths) == (0, "")


def test_verify_catches_a_broken_unit(bindir, tmp_path):
    """The test above would see a mistake: an unknown key is reported."""
    render_units(bindir, tmp_path)
    u = tmp_path / "job@.service"
    u.write_text(u.read_text().replace("[Service]", "[Service]\nBogus=1"))
    rc, out = verify([instance(u)])
    assert "Unknown key" in out and "Bogus" in out


def test_hardening_dropin_verifies_on_the_real_unit(bindir, tmp_path):
    render_units(bindir, tmp_path)
    shutil.copytree(EXAMPLES / "hardening/zkelectd@.service.d",
                    tmp_path / "zkelectd@.service.d")
    # The drop-in is read: a broken copy of it is reported.
    assert verify([tmp_path / "zkelectd@vip.service"]) == (0, "")
    conf = tmp_path / "zkelectd@.service.d/hardening.conf"
    conf.write_text(conf.read_text() + "ProtectSystem=bogus\n")
    rc, out = verify([tmp_path / "zkelectd@vip.service"])
    assert "hardening.conf" in out and "bogus" in out


def test_hardening_sysusers_file_parses(tmp_path):
    r = run(["systemd-sysusers", "--root", str(tmp_path), "--dry-run",
             str(EXAMPLES / "hardening/sysusers.conf")])
    assert r.returncode == 0, r.stderr
    assert "Creating user 'zkelectd'" in r.stdout + r.stderr


def hardening_caps():
    """The capabilities the hardening drop-in gives, as setpriv wants
    them (+net_admin,+net_raw); the bounding set must be the same."""
    text = (EXAMPLES / "hardening/zkelectd@.service.d/hardening.conf") \
        .read_text()
    amb = re.search(r"^AmbientCapabilities=(.*)$", text, re.M).group(1)
    bnd = re.search(r"^CapabilityBoundingSet=(.*)$", text, re.M).group(1)
    assert amb.split() == bnd.split()
    return ",".join("+" + c.lower().removeprefix("cap_")
                    for c in amb.split())


# Inside the namespace: waits for a gratuitous ARP for the address given
# as argv[1] on the interface argv[2] and prints "garp" when one came.
SNIFFER = r"""
import socket, sys
ip = socket.inet_aton(sys.argv[1])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.bind((sys.argv[2], 0))
s.settimeout(60)
print("ready", flush=True)
while True:
    f = s.recv(2048)
    arp = f[14:42]
    # sender IP (bytes 14-17 of the ARP payload) = target IP = the address
    if len(arp) == 28 and arp[14:18] == ip and arp[24:28] == ip:
        print("garp", flush=True)
        break
"""


class Netns:
    def __init__(self, tag=""):
        self.name = f"zkt{os.getpid()}{tag}"
        self.up = False

    def __enter__(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self.up = True
        # Both ends of the pair live in the namespace: nothing of the
        # host's network is touched, and deleting the namespace removes
        # them.
        for cmd in (["link", "add", "va", "type", "veth", "peer", "name",
                     "vb"],
                    ["link", "set", "va", "up"],
                    ["link", "set", "vb", "up"],
                    ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", self.name] + cmd, check=True)
        return self

    def __exit__(self, *exc):
        if self.up:
            subprocess.run(["ip", "netns", "del", self.name], check=False)

    def addresses(self):
        r = run(["ip", "-n", self.name, "-o", "-4", "addr", "show", "dev",
                 "va"], check=True)
        return re.findall(r"inet (\S+)", r.stdout)

    def hook(self, event, reason, prefix=(), script=None):
        env = {"ZKELECT_EVENT": event, "ZKELECT_REASON": reason,
               "ZKELECT_ROLE": "leader" if event == "promote"
               else "follower",
               "ZKELECT_SERVICE": "vip", "ZKELECT_ID": "n1",
               "ZKELECT_EPOCH": "42", "ARPING_COUNT": "1"}
        cmd = (["ip", "netns", "exec", self.name] + list(prefix) + ["env"]
               + [f"{k}={v}" for k, v in env.items()]
               + [str(script or EXAMPLES / "vip/vip.sh"), VIP, "va"])
        return run(cmd, timeout=60)


def vip_cycle(ns, prefix=(), script=None):
    def hook(event, reason):
        r = ns.hook(event, reason, prefix, script)
        assert r.returncode == 0, f"{event}/{reason}: {r.stderr}"
        return r.stderr

    # Startup demote on a node that never held the address.
    assert "not on va" in hook("demote", "startup")
    assert ns.addresses() == []

    sniffer = subprocess.Popen(
        ["ip", "netns", "exec", ns.name, "/usr/bin/python3", "-c", SNIFFER,
         VIP.split("/")[0], "vb"], stdout=subprocess.PIPE, text=True)
    try:
        assert sniffer.stdout.readline().strip() == "ready"
        assert "added" in hook("promote", "elected")
        assert ns.addresses() == [VIP]
        # The promote announced the address on the segment.
        assert sniffer.stdout.readline().strip() == "garp"
    finally:
        sniffer.kill()
        sniffer.wait()

    assert "already on va" in hook("promote", "elected")
    assert ns.addresses() == [VIP]
    assert "removed" in hook("demote", "resign")
    assert ns.addresses() == []
    assert "not on va" in hook("demote", "shutdown")
    assert ns.addresses() == []


def test_vip_in_a_network_namespace():
    need_root()
    with Netns() as ns:
        vip_cycle(ns)
        # A promote that cannot work fails: no such device.
        r = run(["ip", "netns", "exec", ns.name, "env",
                 "ZKELECT_EVENT=promote", str(EXAMPLES / "vip/vip.sh"),
                 VIP, "nosuch0"])
        assert r.returncode == 1 and "no device nosuch0" in r.stderr
        # A demote on a device that does not exist has nothing to remove.
        r = run(["ip", "netns", "exec", ns.name, "env",
                 "ZKELECT_EVENT=demote", str(EXAMPLES / "vip/vip.sh"),
                 VIP, "nosuch0"])
        assert r.returncode == 0, r.stderr
        # Not run as a promote or demote hook: usage error.
        r = run([str(EXAMPLES / "vip/vip.sh"), VIP, "va"],
                env={"PATH": os.environ["PATH"], "ZKELECT_EVENT": "fence"})
        assert r.returncode == 2 and "handles promote and demote" in r.stderr


def test_vip_follows_the_leader_through_zkelectd():
    """Two zkelectd daemons against a real ZooKeeper, each with vip.sh as
    its promote and demote hook on a namespace of its own: the address is
    on the leader's device only, and moves on an ordered handoff."""
    need_root()
    zk = zkharness.ZkCluster(size=1)
    election = None
    try:
        with Netns("a") as na, Netns("b") as nb:
            zk.start()
            election = zkharness.Election(zk.hosts, "vip-failover")

            def daemon(id, ns):
                hook = f"ip netns exec {ns.name} {EXAMPLES / 'vip/vip.sh'}" \
                    f" {VIP} va"
                return election.daemon(
                    id, hooks=False, env={"ARPING_COUNT": "1"},
                    options={"hooks.promote": hook, "hooks.demote": hook})

            d1 = daemon("n1", na)
            assert election.wait_one_leader(timeout=30) is d1
            assert na.addresses() == [VIP]
            d2 = daemon("n2", nb)
            d2.wait_role("follower", timeout=30)
            assert nb.addresses() == []
            # Both ran the startup demote on a device without the address.
            for d in (d1, d2):
                assert "not on va (nothing to remove)" in d.log_text()

            assert d1.stop() == 0
            d2.wait_role("leader", timeout=30)
            assert na.addresses() == []
            assert nb.addresses() == [VIP]
            assert "removed 192.0.2.10/24 from va" in d1.log_text()
            assert d2.stop() == 0
            assert nb.addresses() == []
    finally:
        problems = election.close() if election else []
        zk.close()
    assert problems == []


def test_vip_as_unprivileged_user_with_hardening_caps():
    """What hardening.conf grants is enough for vip.sh, and needed."""
    need_root()
    caps = hardening_caps()
    d = tempfile.mkdtemp(prefix="zkvip")
    try:
        os.chmod(d, 0o755)
        script = Path(d) / "vip.sh"
        shutil.copy(EXAMPLES / "vip/vip.sh", script)
        os.chmod(script, 0o755)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534",
                  "--clear-groups", "--no-new-privs",
                  "--bounding-set=-all," + caps]
        with Netns() as ns:
            vip_cycle(ns, nobody + ["--inh-caps=-all," + caps,
                                    "--ambient-caps=" + caps], script)
            # Without the capabilities the promote fails, and says why.
            r = ns.hook("promote", "elected", nobody + ["--inh-caps=-all"],
                        script)
            assert r.returncode == 1, r.stderr
            assert "ip addr add" in r.stderr
            assert ns.addresses() == []
    finally:
        shutil.rmtree(d)


def pg_hook(name, tmp_path, **env):
    base = {"PATH": os.environ["PATH"], "ZKELECT_SERVICE": "pg",
            "ZKELECT_ID": "db2"}
    base.update(env)
    return run([str(EXAMPLES / "postgresql" / name)], env=base,
               cwd=tmp_path)


def test_pg_fence_never_fakes_success(tmp_path):
    old = {"ZKELECT_EVENT": "fence", "ZKELECT_FENCE_ID": "db1",
           "ZKELECT_FENCE_DATA": "", "ZKELECT_FENCE_EPOCH": "7"}
    r = pg_hook("pg-fence.sh", tmp_path, **old)
    assert r.returncode == 1 and "no FENCE_COMMAND" in r.stderr
    r = pg_hook("pg-fence.sh", tmp_path, FENCE_COMMAND="exit 3", **old)
    assert r.returncode == 1 and "'db1' is not fenced" in r.stderr
    # The command runs with the previous leader's identity.
    r = pg_hook("pg-fence.sh", tmp_path,
                FENCE_COMMAND='echo "$ZKELECT_FENCE_ID $ZKELECT_FENCE_EPOCH"'
                ' > fenced', **old)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fenced").read_text() == "db1 7\n"


def test_pg_hooks_refuse_to_run_blind(tmp_path):
    r = pg_hook("pg-promote.sh", tmp_path, ZKELECT_EVENT="promote")
    assert r.returncode == 2 and "ZKELECT_EPOCH" in r.stderr
    r = pg_hook("pg-promote.sh", tmp_path, ZKELECT_EVENT="promote",
                ZKELECT_EPOCH="12", PROMOTE_WAIT="soon")
    assert r.returncode == 2 and "PROMOTE_WAIT" in r.stderr
    r = pg_hook("pg-demote.sh", tmp_path, ZKELECT_EVENT="demote")
    assert r.returncode == 1 and "PGDATA is not set" in r.stderr


def test_app_hook_maps_events_to_systemctl(tmp_path):
    """app-hook.sh against a systemctl that records its calls and fails
    when SYSTEMCTL_FAIL is set (there is no systemd to start units here)."""
    fake = tmp_path / "bin/systemctl"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "$*" >> "$CALLS"\n'
                    '[ -z "${SYSTEMCTL_FAIL:-}" ]\n')
    fake.chmod(0o755)
    calls = tmp_path / "calls"

    def hook(event, role="follower", fail=""):
        env = {"PATH": f"{fake.parent}:{os.environ['PATH']}",
               "CALLS": str(calls), "SYSTEMCTL_FAIL": fail,
               "ZKELECT_EVENT": event, "ZKELECT_ROLE": role}
        return run([str(EXAMPLES / "app/app-hook.sh"), "myapp@web.service"],
                   env=env).returncode

    assert hook("promote", "leader") == 0
    assert hook("demote") == 0
    assert hook("check", "leader") == 0
    assert hook("check", "follower", fail="1") == 0   # not asked
    assert calls.read_text().splitlines() == [
        "start myapp@web.service", "stop myapp@web.service",
        "is-active --quiet myapp@web.service"]
    assert hook("promote", "leader", fail="1") == 1
    assert hook("check", "leader", fail="1") == 1
    assert hook("fence") == 2
