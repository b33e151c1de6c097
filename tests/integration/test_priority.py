"""Preferred leaders: election.priority and election.preempt_delay."""
import re
import signal
import threading
import time

import pytest

from proxy import ZkProxy
from test_control import parse_metrics
from zkharness import ctl_request, data_of, hook_runs, wait_for


def start(election, name, prio, delay="2s"):
    d = election.daemon(name, data=data_of(int(name[-1])), options={
        "election.priority": str(prio), "election.preempt_delay": delay})
    return d


def three(election, prios, delay="never"):
    """node1 leads, node2 and node3 follow, with the priorities given."""
    a = start(election, "node1", prios[0], delay)
    a.wait_role("leader")
    b = start(election, "node2", prios[1], delay)
    b.wait_role("follower")
    c = start(election, "node3", prios[2], delay)
    c.wait_role("follower")
    return a, b, c


def promotes(election, id=None):
    return [s for s, _ in hook_runs(election.events(), id=id,
                                    event="promote")]


def test_highest_priority_leads_after_preempt_delay(election):
    a = start(election, "node1", 0)
    a.wait_role("leader")
    b = start(election, "node2", 0)
    b.wait_role("follower")
    # Before it starts: a time no later than its joining, which the
    # preempt_delay counts from (taken after wait_role, it may be later).
    t_joined = time.time()
    c = start(election, "node3", 10)
    c.wait_role("follower")
    assert c.status()["priority"] == "10"
    c.wait_role("leader", timeout=20)
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    # Not before preempt_delay (2 s) after it joined.
    first = promotes(election, "node3")[0]
    assert first.ts - t_joined >= 2.0, first.ts - t_joined
    demotes = [s.reason for s, _ in hook_runs(election.events(), id="node1",
                                              event="demote")]
    assert demotes == ["startup", "preempted"], demotes
    assert promotes(election, "node2") == []
    # And it keeps leading.
    time.sleep(3)
    assert c.role() == "leader" and len(promotes(election, "node3")) == 1

    # It dies: the next by queue order leads; back, it takes over again,
    # not before preempt_delay.
    c.kill()
    leader = election.wait_one_leader(timeout=20, daemons=[a, b])
    assert leader in (a, b)
    t_back = time.time()
    c.start()
    c.wait_role("follower")
    c.wait_role("leader", timeout=20)
    second = promotes(election, "node3")[1]
    assert second.ts - t_back >= 2.0, second.ts - t_back
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    election.check_invariants()


def queue_reads(d):
    """The requests of d's reads of the queue outside the core (listings,
    each node's data): preemption's, here."""
    m = parse_metrics(d.ctl("metrics"))
    return (m.get("zkelectd_zookeeper_requests_total", op="queue"),
            m.get("zkelectd_zookeeper_requests_total", op="queue_data"))


def test_leader_reads_the_queue_only_when_outranked(election):
    """preempt_delay 2 s: a leader that may be outranked reads the queue
    every 0.5 s. At priority 0 with no priority anywhere (no marker in
    E/priority) it reads nothing over 6 periods; a follower of a higher
    priority makes it read, and takes over; then, nobody above it, the new
    leader reads nothing either."""
    a, b, c = three(election, (0, 0, 0), "2s")
    before = queue_reads(a)
    time.sleep(3)
    # A loaded machine may stall ZooKeeper past the lease (T = 3 s): the
    # leader then demotes (lease-lost) and leads again, and still reads
    # nothing.
    a.wait_role("leader", timeout=10)
    assert queue_reads(a) == before, (before, queue_reads(a))
    assert before == (0, 0), before
    d = start(election, "node4", 5)
    d.wait_role("leader", timeout=20)
    lists, gets = queue_reads(a)
    assert lists >= 1 and gets >= 4, (lists, gets)
    demotes = [s.reason for s, _ in hook_runs(election.events(), id="node1",
                                              event="demote")]
    assert demotes[-1] == "preempted", demotes
    before = queue_reads(d)
    time.sleep(3)
    d.wait_role("leader", timeout=10)
    assert queue_reads(d) == before, (before, queue_reads(d))
    election.check_invariants()


def test_preempt_delay_never(election):
    a = start(election, "node1", 0, "never")
    a.wait_role("leader")
    c = start(election, "node3", 10, "never")
    c.wait_role("follower")
    time.sleep(4)
    assert a.role() == "leader" and c.role() == "follower"
    assert promotes(election, "node3") == []
    # An operator can still choose it.
    assert a.ctl("switchover node3", timeout=30) == "ok\n"
    c.wait_role("leader")


def test_equal_priorities_keep_queue_order(election):
    a = start(election, "node1", 5)
    a.wait_role("leader")
    b = start(election, "node2", 5)
    b.wait_role("follower")
    time.sleep(3)
    assert a.role() == "leader"
    assert promotes(election, "node2") == []
    wait_for(lambda: b.role() == "follower", 2, "node2 to stay a follower")


def hold_head(kz, path):
    """A kazoo session's candidate node at the head of the queue: the
    daemons that join queue behind it, and its deletion makes the first of
    them the head, as a leader's crash would."""
    kz.ensure_path(f"{path}/candidates")
    return kz.create(f"{path}/candidates/candidate-{kz.client_id[0]:016x}_",
                     b"id=holder\ndata=\n", ephemeral=True, sequence=True)


def markers(kz, path):
    try:
        return sorted(kz.get_children(f"{path}/priority"))
    except Exception:  # no E/priority: nobody has a priority
        return []


def test_head_yields_to_a_higher_priority_at_a_cold_start(election, kz):
    head = hold_head(kz, election.path)
    # One at a time, so that the queue is node1, node2, node3 (started
    # together, a loaded machine let node3's node in before node2's, and
    # node2 never reached the head to yield).
    a = start(election, "node1", 0, "never")
    a.wait_role("follower")
    b = start(election, "node2", 0, "never")
    b.wait_role("follower")
    c = start(election, "node3", 10, "never")
    c.wait_role("follower")
    # Only node3 advertises a priority: one marker, named by its session.
    sid = int(c.status()["session"], 16)
    wait_for(lambda: markers(kz, election.path) == [f"{sid:016x}_10"], 5,
             "node3's priority marker")
    kz.delete(head)
    # node1, then node2, reach the head and yield; node3 leads without any
    # preemption (preempt_delay=never), and nobody else ever promoted.
    c.wait_role("leader", timeout=15)
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    assert promotes(election, "node1") == []
    assert promotes(election, "node2") == []
    for d in (a, b):
        assert "yielded the head of the queue to session " \
            f"0x{sid:016x} (priority 10 > 0)" in d.log_text()
        d.wait_role("follower")
        assert re.search(r"^zkelectd_priority_yields_total\{[^}]*\} 1$",
                         d.ctl("metrics"), re.M)
    # The yielders rejoined behind it.
    queue = [line.split("\t")[1] for line in
             c.ctl("members").splitlines()]
    assert queue[0] == "node3" and sorted(queue[1:]) == ["node1", "node2"]
    election.check_invariants()


def test_successor_yields_on_failover_and_marker_goes_with_the_node(
        election, kz):
    a, b, c = three(election, (0, 0, 5))
    # The leader stops: node2 is next, but node3 outranks it.
    a.stop()
    c.wait_role("leader", timeout=15)
    assert election.wait_one_leader(daemons=[b, c]) is c
    assert promotes(election, "node2") == []
    assert "yielded the head of the queue" in b.log_text()
    # Paused, node3 leaves the queue and its marker goes with it: node2
    # leads, without yielding to a candidate that is not there.
    sid = int(c.status()["session"], 16)
    assert markers(kz, election.path) == [f"{sid:016x}_5"]
    assert c.ctl("pause", timeout=30) == "ok\n"
    b.wait_role("leader", timeout=15)
    wait_for(lambda: markers(kz, election.path) == [], 5,
             "node3's marker to go")
    assert b.log_text().count("yielded the head of the queue") == 1
    election.check_invariants()


def test_negative_priority_yields_to_the_default(election, kz):
    head = hold_head(kz, election.path)
    a = start(election, "node1", -1, "never")
    a.wait_role("follower")
    b = start(election, "node2", 0, "never")
    b.wait_role("follower")
    kz.delete(head)
    b.wait_role("leader", timeout=15)
    assert election.wait_one_leader(daemons=[a, b]) is b
    assert promotes(election, "node1") == []
    sid = int(b.status()["session"], 16)
    assert f"to session 0x{sid:016x} (priority 0 > -1)" in a.log_text()
    election.check_invariants()


def test_priority_reload_keeps_the_old_marker_until_the_new_is_made(
        election, kz):
    """Issue 19's campaign: a reload from -3 to -1 deleted the old marker
    before making the new one; when the new one could not be made, the
    node stood without a marker, and a head at -1 took it for a 0 and
    yielded to it. E/priority refuses creates here (its ACL), so the new
    marker cannot be made: the old one stays, the head keeps its place,
    and once creates are allowed again the new one replaces it."""
    from kazoo.security import OPEN_ACL_UNSAFE, make_acl
    head = hold_head(kz, election.path)
    a = start(election, "node1", -1, "never")
    a.wait_role("follower")
    b = start(election, "node2", -3, "never")
    b.wait_role("follower")
    sa = int(a.status()["session"], 16)
    sb = int(b.status()["session"], 16)
    wait_for(lambda: markers(kz, election.path) ==
             sorted([f"{sa:016x}_-1", f"{sb:016x}_-3"]), 10, "both markers")
    prio = f"{election.path}/priority"
    kz.set_acls(prio, [make_acl("world", "anyone", read=True, write=True,
                                delete=True, admin=True)])
    try:
        b.options["election.priority"] = "-1"
        b.write_config()
        b.signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in b.log_text(), 5,
                 "the reload")
        wait_for(lambda: "not allowed to mark" in b.log_text(), 10,
                 "node2's refused create of its new marker")
        assert f"{sb:016x}_-3" in markers(kz, election.path)
        kz.delete(head)
        a.wait_role("leader", timeout=15)
        assert "yielded" not in a.log_text()
        assert election.wait_one_leader(daemons=[a, b]) is a
        assert f"{sb:016x}_-3" in markers(kz, election.path)
    finally:
        kz.set_acls(prio, OPEN_ACL_UNSAFE)
    wait_for(lambda: markers(kz, election.path) ==
             sorted([f"{sa:016x}_-1", f"{sb:016x}_-1"]), 15,
             "node2's new marker, and the old one gone")
    assert promotes(election, "node2") == []
    election.check_invariants()


def test_forged_marker_cannot_stall_the_election(election, kz):
    """A marker made by hand with a priority its session does not have
    makes each head yield at most once per session timeout: someone leads."""
    head = hold_head(kz, election.path)
    a = start(election, "node1", 0, "never")
    b = start(election, "node2", 5, "never")
    for d in (a, b):
        d.wait_role("follower")
    sid = int(a.status()["session"], 16)
    # node1 claims 9 (it has 0): node2 yields to it, node1 yields back.
    kz.create(f"{election.path}/priority/{sid:016x}_9", b"")
    kz.delete(head)
    leader = election.wait_one_leader(timeout=20, daemons=[a, b])
    assert leader in (a, b)
    time.sleep(1)
    assert election.wait_one_leader(daemons=[a, b]) is leader
    election.check_invariants()


def test_marker_deleted_by_hand_is_made_again(election, kz):
    """A review: the marker of the candidate with the highest priority,
    deleted by hand, left it looking like priority 0 for good: no
    preemption ever. It watches its own marker and makes it again, and the
    leader's preemption then hands over to it."""
    a = start(election, "node1", 0, "3s")
    a.wait_role("leader")
    b = start(election, "node2", 10, "3s")
    b.wait_role("follower")
    sid = b.status()["session"]
    marker = f"{election.path}/priority/{sid}_10"
    wait_for(lambda: kz.exists(marker), 5, "node2's marker")
    kz.delete(marker)
    wait_for(lambda: kz.exists(marker), 5, "node2's marker made again")
    b.wait_role("leader", timeout=20)
    assert election.wait_one_leader(daemons=[a, b]) is b
    demotes = [s.reason for s, _ in hook_runs(election.events(), id="node1",
                                              event="demote")]
    assert demotes[-1] == "preempted", demotes


def test_resign_of_the_highest_priority_hands_over(election, kz):
    """Its marker stays away after the handoff: the next head does not
    yield back to it (preempt_delay=never keeps it from coming back)."""
    a, b, c = three(election, (10, 0, 0))
    assert a.ctl("resign", timeout=30) == "ok\n"
    b.wait_role("leader", timeout=15)
    time.sleep(1)
    assert election.wait_one_leader(daemons=[a, b, c]) is b
    assert len(promotes(election, "node1")) == 1
    assert "yielded" not in b.log_text()
    # Back once another leader is seen: node1 advertises its priority.
    sid = int(a.status()["session"], 16)
    wait_for(lambda: markers(kz, election.path) == [f"{sid:016x}_10"], 10,
             "node1's marker back")
    election.check_invariants()


def test_switchover_to_an_outranked_candidate_is_refused(election):
    a, b, c = three(election, (0, 0, 5))
    assert a.ctl("switchover node2", timeout=30) == "error outranked\n"
    assert "node3 has a higher priority" in a.log_text()
    assert a.role() == "leader"
    # The one that outranks the others can be chosen.
    assert a.ctl("switchover node3", timeout=30) == "ok\n"
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    assert promotes(election, "node2") == []
    election.check_invariants()


@pytest.mark.parametrize("order", ["123", "312", "231"])
def test_priorities_0_0_10_in_any_order(election, order):
    """Started together in any order: node3 (priority 10) leads, by a
    yield at the head or a preemption after preempt_delay, and keeps
    leading."""
    prio = {"1": 0, "2": 0, "3": 10}
    ds = {n: start(election, f"node{n}", prio[n]) for n in order}
    c = ds["3"]
    c.wait_role("leader", timeout=20)
    assert election.wait_one_leader(daemons=list(ds.values())) is c
    time.sleep(3)
    assert c.role() == "leader"
    assert len(promotes(election, "node3")) == 1
    election.check_invariants()


def test_priority_reload_before_zookeeper_is_reached(election):
    """A priority given by SIGHUP before the daemon first reached
    ZooKeeper (its election's nodes not made yet) is applied once it
    connects: it makes every parent, in order, and leads."""
    p = ZkProxy(election.zk_hosts, name="proxy-node1")
    try:
        p.freeze()
        a = election.daemon("node1", options={
            "zookeeper.hosts": p.hosts, "election.preempt_delay": "never"})
        a.wait_role("unknown")      # after the startup demote
        a.options["election.priority"] = "7"
        a.write_config()
        a.signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in a.log_text(), 5,
                 "the reload")
        assert a.role() == "unknown"
        p.thaw()
        a.wait_role("leader", timeout=20)
        assert a.status()["priority"] == "7"
        a.stop()
    finally:
        p.close()
    election.check_invariants()


def test_switchover_during_preemption_is_answered(election):
    """Issue 19.3: an operator's switchover that arrives while the leader's
    preemption reads the queue is answered: the preemption, decided on
    that read, goes on, and the operator hears why not (or ok)."""
    p = ZkProxy(election.zk_hosts, name="proxy-node1")
    try:
        a = election.daemon("node1", data=data_of(1), options={
            "zookeeper.hosts": p.hosts,
            "zookeeper.session_timeout": "8000ms",
            "election.preempt_delay": "2s"})
        a.wait_role("leader")
        c = start(election, "node3", 10)
        wait_for(lambda: "outranks this leader" in a.log_text(), 10,
                 "node1 to see node3 outrank it")
        t0 = time.time()
        # Its next look at the queue (0.5 s later) stays unanswered.
        p.hold_replies()
        wait_for(lambda: time.time() >= t0 + 2.2, 5,
                 "preempt_delay to pass while the read is held")
        answers = {}

        def ask(name):
            answers[name] = ctl_request(a.socket, "switchover node3",
                                        timeout=40)
        threads = [threading.Thread(target=ask, args=(n,))
                   for n in ("x", "y")]
        for t in threads:
            t.start()
        # One of the two is looked up (its read held too), the other is
        # told at once that a switchover is in progress.
        wait_for(lambda: "error switchover-in-progress\n" in
                 answers.values(), 10, "one switchover to be refused")
        p.release_replies()
        for t in threads:
            t.join(45)
        assert len(answers) == 2, answers
        assert sorted(answers.values())[0] in (
            "error switchover-in-progress\n", "ok\n"), answers
        c.wait_role("leader", timeout=20)
        assert election.wait_one_leader(daemons=[a, c]) is c
        a.stop()
    finally:
        p.close()
    election.check_invariants()
