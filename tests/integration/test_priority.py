"""Preferred leaders: election.priority and election.preempt_delay."""
import time

from zkharness import data_of, hook_runs, wait_for


def start(election, name, prio, delay="2s"):
    d = election.daemon(name, data=data_of(int(name[-1])), options={
        "election.priority": str(prio), "election.preempt_delay": delay})
    return d


def promotes(election, id=None):
    return [s for s, _ in hook_runs(election.events(), id=id,
                                    event="promote")]


def test_highest_priority_leads_after_preempt_delay(election):
    a = start(election, "node1", 0)
    a.wait_role("leader")
    b = start(election, "node2", 0)
    b.wait_role("follower")
    c = start(election, "node3", 10)
    c.wait_role("follower")
    t_joined = time.time()
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
    c.start()
    t_back = time.time()
    c.wait_role("follower")
    c.wait_role("leader", timeout=20)
    second = promotes(election, "node3")[1]
    assert second.ts - t_back >= 2.0, second.ts - t_back
    assert election.wait_one_leader(daemons=[a, b, c]) is c
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
