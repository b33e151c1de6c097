"""What a failover costs ZooKeeper, counted by each daemon's own
zkelectd_zookeeper_requests_total (issue 8): the successor promotes without
listing the queue and, having prepared its claim while the leader led, with
no request between the release and its promote hook (issue 21); the next
candidate learns it is next from E/leader and prepares; every other
follower makes at most two small requests, however many candidates there
are."""
import re

import pytest

from test_control import parse_metrics
from zkharness import start_in_order, wait_for

# Periodic requests that have nothing to do with a failover.
PERIODIC = {"sync", "count"}


def requests_of(d):
    m = parse_metrics(d.ctl("metrics"))
    out = {}
    for labels, value in m.series("zkelectd_zookeeper_requests_total").items():
        op = dict(labels)["op"]
        if op not in PERIODIC and value:
            out[op] = int(value)
    return out


def delta(before, after):
    return {op: n - before.get(op, 0) for op, n in after.items()
            if n - before.get(op, 0)}


# What the heir sends while the leader leads, to prepare its claim (issue
# 21): the breadcrumb read with a watch, the markers, the claim, E/claims
# listed, the claim before its own watched, and its own (an exists: one
# deleted by hand is made again, never taken for the right to lead).
PREPARE = {"breadcrumb", "marks", "claim", "claims", "claim_watch",
           "claim_own"}


def prepared(d):
    """The heir's claim is placed and the leader's before it watched."""
    return requests_of(d).get("claim_watch", 0) >= 1


@pytest.mark.parametrize("n", [3, 12])
def test_failover_requests_stay_flat(election, n):
    ds = start_in_order(election, n)
    # Every follower has read E/leader and watches its predecessor; the
    # heir has prepared its claim.
    for d in ds[1:]:
        wait_for(lambda d=d: d.leader().get("id") == "node1", 10, f"{d.id} sees node1")
    wait_for(lambda: prepared(ds[1]), 10, "node2 prepares its claim")
    before = {d.id: requests_of(d) for d in ds[1:]}
    ds[0].stop()
    ds[1].wait_role("leader", timeout=15)
    for d in ds[2:]:
        wait_for(lambda d=d: d.leader().get("id") == "node2", 10, f"{d.id} sees node2")
    wait_for(lambda: prepared(ds[2]), 10, "node3 prepares its claim")
    cost = {d.id: delta(before[d.id], requests_of(d)) for d in ds[1:]}

    # The successor: no listing, no claim between the release and its
    # promote. Its claim's notification asks for one read of the
    # breadcrumb, which the release's last notification (the breadcrumb's
    # deletion) makes moot: the promote does not wait for it. Then the
    # exists that set E/leader's and the breadcrumb's watches again, its
    # ack, E/leader read back.
    succ = cost["node2"]
    assert not set(succ) & ({"list"} | PREPARE - {"breadcrumb"}), \
        f"the successor prepared nothing ahead: {cost}"
    assert succ.get("breadcrumb", 0) <= 1, cost
    assert succ.get("ack") == 1, cost
    assert sum(succ.values()) <= 5, f"successor: {cost}"
    # The new heir: a follower's two, then its preparation, once each.
    heir = cost["node3"]
    assert "list" not in heir, f"node3 listed the queue: {cost}"
    assert all(heir.get(op) == 1 for op in PREPARE), cost
    assert sum(heir.values()) - len(PREPARE) <= 2, cost
    for d in ds[3:]:
        c = cost[d.id]
        assert "list" not in c, f"{d.id} listed the queue: {cost}"
        assert sum(c.values()) <= 2, f"{d.id} made more than 2: {cost}"

    # The next failover: node3 knew from E/leader that it was next.
    before = {d.id: requests_of(d) for d in ds[2:]}
    ds[1].stop()
    ds[2].wait_role("leader", timeout=15)
    for d in ds[3:]:
        wait_for(lambda d=d: d.leader().get("id") == "node3", 10, f"{d.id} sees node3")
    cost = {d.id: delta(before[d.id], requests_of(d)) for d in ds[2:]}
    assert not set(cost["node3"]) & ({"list"} | PREPARE - {"breadcrumb"}), \
        cost
    assert cost["node3"].get("breadcrumb", 0) <= 1, cost
    assert sum(cost["node3"].values()) <= 5, cost
    if n > 3:
        wait_for(lambda: prepared(ds[3]), 10, "node4 prepares its claim")
        cost = {d.id: delta(before[d.id], requests_of(d)) for d in ds[2:]}
    for d in ds[4:]:
        assert sum(cost[d.id].values()) <= 2, cost


def promote_batches(log):
    """Each promote's batch of ZooKeeper events, from the debug lines: the
    promote's hook pid, its batch's drained= stamp (shared by the events
    one wake-up of the loop handed over) and the paths notified in it."""
    drained = {}
    for m in re.finditer(r"watch \d+ on (\S+): queued=\d+ drained=(\d+)", log):
        drained.setdefault(m.group(2), []).append(m.group(1))
    for m in re.finditer(r"trace promote\[(\d+)\]: cause=watch:\S+ "
                         r"queued=\d+ drained=(\d+)", log):
        yield m.group(1), m.group(2), drained.get(m.group(2), [])


def test_a_batch_sends_its_requests_after_the_promote_it_starts(election):
    """The release's notifications reach the successor together: E/leader's
    and the breadcrumb's, which ask for their watches to be set again, and
    the one it promotes on. The requests go out once the whole batch is
    stepped, after the promote hook was spawned, not between the
    notification and the hook (issue 21)."""
    ds = start_in_order(election, 3)
    seen = 0
    for _ in range(6):
        lead = election.wait_one_leader()
        heir = [d for d in ds if d is not lead and d.alive()]
        wait_for(lambda: any(prepared(d) for d in heir), 10,
                 "the heir prepares its claim")
        lead.stop()
        succ = wait_for(lambda: next((d for d in heir
                                      if d.role() == "leader"), None), 15,
                        "a successor")
        log = succ.log_text()
        for pid, drained, paths in promote_batches(log):
            if not [p for p in paths if "/claims/" in p or
                    p.endswith("/leader")]:
                continue
            # E/leader's or the leader's claim's notification came in the
            # promote's batch (the breadcrumb's, last, is the promote's
            # signal): the requests they asked for (E/leader's exists, a
            # read of the breadcrumb) went out after the hook started.
            started = log.find(f"hook promote[{pid}]: started")
            held = log.find(f"held through a batch of events "
                            f"(drained={drained}): ")
            assert 0 <= started < held, \
                f"promote [{pid}] in a batch of {paths}:\n{log[-4000:]}"
            ops = log[held:log.index("\n", held)].split(": ", 1)[1].split()
            assert {"leader_exists", "breadcrumb", "crumb_exists"} & \
                set(ops), ops
            seen += 1
        if seen:
            break
        lead.start()
    assert seen, "no handoff's notifications came in one batch in 6 tries"
