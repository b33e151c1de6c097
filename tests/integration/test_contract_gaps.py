"""Behaviours of CONTRACT.md that no other test drove through the real
binaries (tests/CONTRACT-MAP.md lists which test covers what): SIGINT,
a failing fence hook, the default election.id, how a hook is started,
zkelectd's help and version options, the epoch kept by a leader that
promotes again on the same candidate node, the node a create whose
reply was lost made, adopted rather than made twice, and a leader that
learns its session expired demoting with that reason.

Each test judges by what the daemons report and record (status file,
socket, hook history, log), waiting for it with a deadline.
"""

import os
import re
import signal
import socket
import subprocess
import time

import pytest

from zkharness import (RECORD_HOOK, binary, data_of, hook_runs,
                       start_in_order, wait_for)
# The fault fixtures (a proxy between a daemon and ZooKeeper, healed at
# teardown) are test_faults.py's.
from test_faults import faults, proxy_factory  # noqa: F401
from test_faults import (T_s, candidate_of, close_session_from_outside,
                         runs_of, set_timeout)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_sigint_is_an_ordered_handoff_like_sigterm(election):
    n1, n2 = start_in_order(election, n=2)

    n1.signal(signal.SIGINT)
    assert n1.wait_exit(20) == 0
    assert n1.status()["role"] == "stopped"
    assert "received SIGINT: stopping" in n1.log_text()

    assert election.wait_one_leader() is n2
    ev = election.events()
    demote = [r for r in hook_runs(ev, id="node1", event="demote")
              if r[0].reason == "shutdown"]
    assert demote and demote[-1][1] is not None, \
        "node1's shutdown demote did not run to its end"
    promote = hook_runs(ev, id="node2", event="promote")
    assert promote and promote[-1][0].n > demote[-1][1].n, \
        "node2 promoted before node1's demote ended"
    election.check_invariants()


def test_a_failing_fence_hook_means_no_promote(election):
    fence = {"hooks.fence": f"{RECORD_HOOK} fence"}
    n1, n2 = start_in_order(election, n=2, options=fence)
    n2.hook_conf(fence_exit=1)

    # A crash leaves E/breadcrumb behind: node2 must fence first.
    n1.kill()

    def fence_then_demote():
        ev = election.events()
        fences = [r for r in hook_runs(ev, id="node2", event="fence")
                  if r[1] is not None]
        if not fences:
            return None
        after = [r for r in hook_runs(ev, id="node2", event="demote")
                 if r[0].n > fences[0][1].n]
        return (fences[0], after[0]) if after else None

    fence_run, demote = wait_for(fence_then_demote, 30,
                                 "node2's failed fence, then its demote")
    assert demote[0].reason == "promote-failed"
    ev = election.events()
    promoted = [r for r in hook_runs(ev, id="node2", event="promote")
                if r[0].n > fence_run[0].n and r[0].n < demote[0].n]
    assert promoted == [], "node2 promoted although its fence failed"
    assert n2.role() != "leader"


def test_election_id_defaults_to_the_host_name(election):
    d = election.daemon("node1", hooks=False,
                        options={"election.id": None})
    d.wait_role("leader", timeout=15)
    host = socket.gethostname()
    assert d.status()["id"] == host
    assert d.leader()["id"] == host
    assert [m[1] for m in d.members()] == [host]


PROBE = """#!/bin/sh
# Where the hook runs: its process group and its standard input.
{
	echo "pid=$$"
	echo "pgid=$(ps -o pgid= -p $$ | tr -d ' ')"
	echo "stdin=$(readlink /proc/$$/fd/0)"
} >"$1.tmp"
mv "$1.tmp" "$1"
echo "probe says hello on stdout"
echo "probe says hello on stderr" >&2
"""


@pytest.mark.parametrize("form", ["exec /bin/sh", "/bin/sh"],
                         ids=["through-the-shell", "exec-d-directly"])
def test_a_hook_runs_in_its_own_group_with_stdin_from_dev_null(election,
                                                                  tmp_path,
                                                                  form):
    # "exec ..." goes through /bin/sh -c; plain words whose first is a path
    # are exec'd by the daemon itself: the same rules hold for both.
    probe = tmp_path / "probe.sh"
    probe.write_text(PROBE)
    out = tmp_path / "probe.out"
    d = election.daemon("node1", hooks=False, options={
        "hooks.promote": f"{form} {probe} {out}"})
    d.wait_role("leader", timeout=15)

    got = dict(line.split("=", 1)
               for line in wait_for(lambda: out.exists() and out.read_text(),
                                    10, "the probe's report").splitlines())
    assert got["stdin"] == "/dev/null"
    assert got["pgid"] == got["pid"], "the hook leads no process group"
    assert int(got["pgid"]) != os.getpgid(d.pid)
    wait_for(lambda: "probe says hello on stdout" in d.log_text() and
             "probe says hello on stderr" in d.log_text(), 10,
             "the hook's output in the daemon's log")


def test_zkelectd_help_and_version_options():
    zkd = str(binary("zkelectd"))
    with open(os.path.join(ROOT, "Makefile")) as f:
        version = re.search(r"^VERSION\s*=\s*(\S+)", f.read(), re.M).group(1)
    for opt in ("-V", "--version"):
        r = subprocess.run([zkd, opt], capture_output=True, text=True)
        assert (r.returncode, r.stdout.split()) == (0, ["zkelectd",
                                                        version]), opt
    for opt in ("-h", "--help"):
        r = subprocess.run([zkd, opt], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith("usage: zkelectd"), \
            opt
        for o in ("-c", "--config", "-o", "-t", "--check", "-V",
                  "--version", "-h", "--help"):
            assert re.search(rf"(^|\s){o}\b", r.stdout), (opt, o)


def test_promoting_again_on_the_same_node_keeps_the_epoch(election, faults):
    # disconnect_grace 0: a reset alone makes the leader demote, and the
    # session (with its node, still first) lives on.
    n1, n2 = faults.start_in_order(
        2, proxied=("node1",), options={"election.disconnect_grace": "0"})
    epoch = n1.leader()["epoch"]
    st = n1.status()
    before = len(election.events())

    faults.proxies["node1"].cut()

    def promoted_again():
        runs = [r for r in hook_runs(election.events(), id="node1")
                if r[0].n > before]
        # A demote killed at its timeout on a loaded machine has no end
        # line; the promote still comes only after it is reaped.
        demotes = [r for r in runs if r[0].event == "demote"]
        if not demotes:
            return None
        again = [r for r in runs if r[0].event == "promote" and
                 r[1] is not None and r[0].n > demotes[0][0].n]
        return (demotes[0], again[0]) if again else None

    demote, promote = wait_for(promoted_again, 30,
                               "node1's demote on the reset, then its promote")
    assert demote[0].reason == "disconnected"
    assert promote[0].epoch == epoch, "a new epoch on the same node"
    n1.wait_role("leader", timeout=10)
    assert election.wait_one_leader() is n1
    assert n1.leader()["epoch"] == epoch
    st2 = n1.status()
    assert (st2["session"], st2["my_epoch"]) == (st["session"],
                                                 st["my_epoch"])
    assert hook_runs(election.events(), id="node2", event="promote") == []
    faults.check_all()


def test_a_lost_create_reply_adopts_the_node_it_made(election, faults,
                                                      proxy_factory, kz):
    """The recipe's step 2: node2's create of its candidate node reaches
    ZooKeeper and is applied, and its reply never comes back (the proxy
    holds every reply on that connection from the create on, so the
    library times the connection out and reconnects). The daemon must list
    the children and adopt the node that carries its session id, not
    create a second one."""
    n1, = faults.start_in_order(1)
    cands = f"{election.path}/candidates"
    proxy = proxy_factory(election.zk_hosts, name="proxy-node2")
    faults.proxies["node2"] = proxy
    proxy.hold_replies_after(b"/candidates/candidate-")
    n2 = election.daemon("node2", data=data_of(2),
                         options={"zookeeper.hosts": proxy.hosts})
    n2.wait_role("follower", timeout=30)
    assert election.wait_one_leader() is n1
    # The create went out on a connection whose replies were lost, and
    # the daemon came back on another.
    assert proxy.held_pairs == 1
    assert proxy.accepted >= 2, proxy.accepted
    st = n2.status()
    mine = [c for c in kz.get_children(cands)
            if c.startswith(f"candidate-{st['session']}_")]
    assert len(mine) == 1, (mine, st["session"])
    _, stat = kz.get(f"{cands}/{mine[0]}")
    assert stat.ephemeralOwner == int(st["session"], 16)
    # Two creates in all under E/candidates (node1's and node2's one),
    # none deleted: a second node made and removed would show here.
    _, parent = kz.get(cands)
    assert parent.cversion == 2, parent
    assert st["queue_position"] == "2", st
    # The daemon saw its create fail without an answer (the library's
    # timeout) and listed instead of creating again.
    log = n2.log_text()
    lost = log.find("election request create: operation timeout")
    assert lost >= 0, n2.log_tail(40)
    assert re.search(r"requests [^\n]*: [^\n]*\blist\b", log[lost:]), \
        n2.log_tail(40)
    faults.check_all()


def test_a_leader_that_learns_its_session_expired_demotes_so(election,
                                                             faults, kz):
    """Reason `session-expired`, through the binary. A leader hears of an
    expiry only when it reconnects: node1 is partitioned (silence, no
    reset: it rides through, the default grace being the lease), its
    session is closed from outside (a second client attaches with its id
    and the password ZooKeeper derives from it, then closes it), and the
    partition is healed well inside node1's lease: its reconnect is refused
    as expired, and it demotes with that reason, then rejoins behind node2
    with a new session and a new node.

    A forced close of a live leader's session is outside what any lease
    covers: node2 promotes as soon as node1's ephemerals are gone, while
    node1 still believes it leads, until the heal. So this test bounds that
    overlap by the heal and does not run the no-overlap check. T is 20 s
    so that the lease (about 15 s) outlasts the close and the heal however
    loaded the machine: a demote for lease-lost would fail the test."""
    set_timeout(election, 20000)
    T = T_s(election)
    n1, n2 = faults.start_in_order(2, proxied=("node1",))
    old_sid = n1.status()["session"]
    old_node = candidate_of(kz, election, n1)
    before = len(election.events())

    faults.partition("node1")
    t_cut = time.monotonic()
    close_session_from_outside(election, old_sid)
    n2.wait_role("leader", timeout=T)
    assert n1.role() == "leader", "node1 should not know yet"
    faults.heal("node1")
    healed_after = time.monotonic() - t_cut

    def demoted():
        runs = [r for r in runs_of(election.events(), "node1", "demote")
                if r[0].n > before]
        return runs[0] if runs else None
    run = wait_for(demoted, T / 2, "node1's demote after the heal")
    assert run[0].reason == "session-expired", (run[0], healed_after)
    n1.wait_role("follower", timeout=T)
    assert election.wait_one_leader() is n2
    assert n1.status()["session"] != old_sid
    new_node = wait_for(lambda: candidate_of(kz, election, n1), 10,
                        "node1's new candidate znode")
    assert new_node != old_node
    assert re.search(r"session \S+: expired", n1.log_text()), \
        n1.log_tail(40)
    assert "replacing the zookeeper session: expired" in n1.log_text(), \
        n1.log_tail(40)
    # node1 never ran another hook in between: its only demote is this one.
    assert [r[0].reason for r in runs_of(election.events()[before:],
                                         "node1")] == ["session-expired"]


def test_a_resign_whose_release_is_refused_replaces_the_session(election, kz):
    """A release refused three times in a row is not retried for ever: with
    an ACL on E without DELETE (an administrator's mistake), the leader's
    release (E/leader, a child of E) is refused NOAUTH every time, and the
    daemon closes its session, which deletes its ephemeral nodes whatever
    the ACL (test_zk_model.py M8), then joins with a new one. Its resign
    answers ok once that is done: the old node is gone by then, node2
    leads, and the log says why the session was replaced. The simulator's
    `acl` fault drives the same path (zkelectd(8) says what the daemon does)."""
    from kazoo.security import OPEN_ACL_UNSAFE, make_acl
    n1, n2 = start_in_order(election, 2)
    old_sid = n1.status()["session"]
    old_node = candidate_of(kz, election, n1)
    no_delete = make_acl("world", "anyone", read=True, write=True,
                         create=True, admin=True)
    kz.set_acls(election.path, [no_delete])
    try:
        answer = n1.ctl("resign", timeout=30)
        kz.sync(election.path)
        node_left = kz.exists(f"{election.path}/candidates/{old_node}")
        n2.wait_role("leader", timeout=15)
    finally:
        kz.set_acls(election.path, OPEN_ACL_UNSAFE)
    assert answer == "ok\n", answer
    assert node_left is None, "resign answered while the old node stayed"
    assert n1.status()["session"] != old_sid
    assert election.wait_one_leader() is n2
    assert "replacing the zookeeper session: its release refused three " \
        "times" in n1.log_text(), n1.log_tail(40)
    election.check_invariants()
