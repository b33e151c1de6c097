"""What a failover costs ZooKeeper, counted by each daemon's own
zkelectd_zookeeper_requests_total (issue 8): the successor promotes without
listing the queue, the next candidate learns it is next from E/leader, and
every other follower makes at most two small requests, however many
candidates there are."""
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


@pytest.mark.parametrize("n", [3, 12])
def test_failover_requests_stay_flat(election, n):
    ds = start_in_order(election, n)
    # Every follower has read E/leader and watches its predecessor.
    for d in ds[1:]:
        wait_for(lambda d=d: d.leader().get("id") == "node1", 10, f"{d.id} sees node1")
    before = {d.id: requests_of(d) for d in ds[1:]}
    ds[0].stop()
    ds[1].wait_role("leader", timeout=15)
    for d in ds[2:]:
        wait_for(lambda d=d: d.leader().get("id") == "node2", 10, f"{d.id} sees node2")
    cost = {d.id: delta(before[d.id], requests_of(d)) for d in ds[1:]}

    succ = cost["node2"]
    assert "list" not in succ, f"the successor listed the queue: {cost}"
    assert succ.get("claim") == 1 and succ.get("ack") == 1, cost
    # One listing of E/priority's markers (a small one: nobody here has a
    # priority) goes beside the claim, whatever n.
    assert succ.get("marks") == 1, cost
    assert sum(succ.values()) <= 6, f"successor: {cost}"
    for d in ds[2:]:
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
    assert "list" not in cost["node3"], f"node3 listed the queue: {cost}"
    assert sum(cost["node3"].values()) <= 6, cost
    for d in ds[3:]:
        assert sum(cost[d.id].values()) <= 2, cost
