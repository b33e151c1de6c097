"""switchover ID: the leader hands over to a named candidate by an ordered
handoff; the candidates between step aside (their nodes are deleted, they
rejoin at the back) and never promote."""
import threading

from zkharness import (hook_runs, member_ids, start_in_order, wait_for,
                       zkelectctl)


def ctl(d, *args, timeout=60):
    return zkelectctl(["-s", str(d.socket), *args], timeout=timeout)


def test_switchover_to_the_last_candidate(election):
    a, b, c = start_in_order(election, 3)
    r = ctl(a, "switchover", "node3")
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    c.wait_role("leader")
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    # node2 stepped aside behind node3 and node1 rejoined: both at the
    # back, in the order they got there (under load node1's quick demote
    # may beat node2's news of its deleted node).
    wait_for(lambda: member_ids(c)[:1] == ["node3"] and
             sorted(member_ids(c)[1:]) == ["node1", "node2"], 10,
             "node3 first, node1 and node2 behind it")
    runs = [(s.id, s.event, s.reason) for s, _ in hook_runs(election.events())
            if s.reason != "startup"]
    assert runs == [("node1", "promote", "elected"),
                    ("node1", "demote", "switchover"),
                    ("node3", "promote", "elected")], runs
    hist = [line.split("\t") for line in a.ctl("history").splitlines()]
    assert any(h[2] == "demoting" and h[3] == "switchover" for h in hist), hist
    election.check_invariants()


def test_switchover_errors_leave_the_leader(election):
    a, b = start_in_order(election, 2)
    for args, want in ((["switchover", "nobody"], "no-such-candidate"),
                       (["switchover", "node1"], "already-leader")):
        r = ctl(a, *args)
        assert r.returncode == 4, r
        assert r.stderr == f"zkelectctl: switchover: error {want}\n", r
    r = ctl(b, "switchover", "node1")
    assert r.returncode == 4 and "error not-leader" in r.stderr, r
    r = ctl(a, "switchover")
    assert r.returncode == 2 and "to which candidate" in r.stderr, r
    # A paused candidate is not in the queue.
    assert b.ctl("pause") == "ok\n"
    r = ctl(a, "switchover", "node2")
    assert r.returncode == 4 and "no-such-candidate" in r.stderr, r
    assert b.ctl("resume") == "ok\n"
    b.wait_role("follower")
    # Its node is made beside the role's change: the leader lists it soon.
    wait_for(lambda: member_ids(a) == ["node1", "node2"], 10,
             "node2 queued again")
    assert a.role() == "leader"
    assert [s.event for s, _ in hook_runs(election.events(), id="node1")
            if s.reason != "startup"] == ["promote"]


def switchover_under_way(a, target):
    """Asks a for a switchover to target from a thread, and waits until a
    demotes for it; returns a function that waits for the answer."""
    result = {}

    def ask():
        result["r"] = ctl(a, "switchover", target)
    t = threading.Thread(target=ask, daemon=True)
    t.start()
    wait_for(lambda: a.role() == "demoting", 10, f"{a.id} to demote")

    def answer():
        t.join(30)
        return result["r"]
    return answer


def test_leader_killed_mid_switchover(election):
    a, b, c = start_in_order(election, 3)
    a.hook_conf(demote_sleep=1.5)
    # node1 demotes for the switchover: kill it in its demote hook.
    answer = switchover_under_way(a, "node3")
    a.kill()
    r = answer()
    assert r.returncode != 0, r
    leader = election.wait_one_leader(timeout=30, daemons=[b, c])
    assert leader in (b, c)
    election.check_invariants(allow_unfinished=("node1",))


def test_leader_stopped_mid_switchover_answers_its_operator(election):
    """SIGTERM to the leader while its switchover is under way: the stop
    goes on (its demote, its release) and the daemon exits before the
    target leads; the operator is told `error shutdown` before the socket
    closes, never left with an end of file."""
    a, b, c = start_in_order(election, 3)
    a.hook_conf(demote_sleep=1.0)
    c.hook_conf(promote_sleep=3.0)
    answer = switchover_under_way(a, "node3")
    assert a.stop() == 0
    r = answer()
    assert (r.returncode, r.stderr) == (
        4, "zkelectctl: switchover: error shutdown\n"), r
    assert election.wait_one_leader(timeout=30, daemons=[b, c]) is c
    election.check_invariants()


def test_switchover_whose_deletes_are_refused_answers_not_allowed(election,
                                                                   kz):
    """`error not-allowed` (zkelectctl(1)): ZooKeeper refuses to delete
    the nodes between the leader and its target (an ACL on E/candidates
    without DELETE, an administrator's mistake: the real server checks the
    parent's DELETE, test_zk_model.py M8). The leader keeps leading, nobody
    promotes or demotes, and the queue is as it was; once the ACL is put
    right the same switchover goes through. The simulator's acl fault
    drives the same path."""
    from kazoo.security import OPEN_ACL_UNSAFE, make_acl
    a, b, c = start_in_order(election, 3)
    cands = f"{election.path}/candidates"
    no_delete = make_acl("world", "anyone", read=True, write=True,
                         create=True, admin=True)
    kz.set_acls(cands, [no_delete])
    try:
        r = ctl(a, "switchover", "node3")
    finally:
        kz.set_acls(cands, OPEN_ACL_UNSAFE)
    assert (r.returncode, r.stderr) == (
        4, "zkelectctl: switchover: error not-allowed\n"), r
    assert a.role() == "leader"
    assert member_ids(a) == ["node1", "node2", "node3"]
    assert [(s.id, s.event) for s, _ in hook_runs(election.events())
            if s.reason != "startup"] == [("node1", "promote")]
    r = ctl(a, "switchover", "node3")
    assert (r.returncode, r.stdout) == (0, "ok\n"), r
    assert election.wait_one_leader(daemons=[a, b, c]) is c
    election.check_invariants()
