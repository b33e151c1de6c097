"""`members json` (issue 11): the queue as one JSON array that adds each
candidate's advertised priority, while `members` keeps its three fields."""
import json
import time

from zkharness import ctl_request_raw, data_of, wait_for, zkelectctl

KEYS = ["seq", "id", "data", "priority"]


def raw(d, cmd):
    return ctl_request_raw(d.socket, cmd)


def members_json(d):
    """The parsed array; strict UTF-8, one line, every object exact."""
    body = raw(d, "members json")
    assert body.endswith(b"]\n") and body.count(b"\n") == 1, body
    arr = json.loads(body.decode("utf-8"))
    assert isinstance(arr, list), body
    for m in arr:
        assert list(m) == KEYS, body
        assert type(m["seq"]) is int and type(m["priority"]) is int, body
        assert type(m["id"]) is str and type(m["data"]) is str, body
    return arr


def plain_rows(d):
    text = raw(d, "members").decode("utf-8")
    assert text.endswith("\n"), text
    rows = [line.split("\t") for line in text.splitlines()]
    assert all(len(r) == 3 for r in rows), text
    return rows


def test_members_json_shows_priorities_in_queue_order(election):
    prios = {"node1": 0, "node2": 5, "node3": -3}
    ds = []
    for i, (name, prio) in enumerate(prios.items(), 1):
        # No preemption: the queue stays the start order.
        d = election.daemon(name, data=data_of(i), options={
            "election.priority": str(prio),
            "election.preempt_delay": "never"})
        d.wait_role("leader" if i == 1 else "follower", timeout=15)
        ds.append(d)
    assert election.wait_one_leader() is ds[0]

    for d in ds:
        arr = members_json(d)
        assert [m["id"] for m in arr] == ["node1", "node2", "node3"], arr
        assert {m["id"]: m["priority"] for m in arr} == prios, arr
        assert [m["data"] for m in arr] == [data_of(i) for i in (1, 2, 3)]
        seqs = [m["seq"] for m in arr]
        assert seqs == sorted(set(seqs)), arr
        # The plain answer is unchanged: the same queue, three fields.
        assert plain_rows(d) == [[str(m["seq"]), m["id"], m["data"]]
                                 for m in arr]

    # zkelectctl members --json asks the same.
    r = zkelectctl(["-s", str(ds[1].socket), "members", "--json"])
    assert r.returncode == 0 and r.stderr == "", r
    assert [(m["id"], m["priority"]) for m in json.loads(r.stdout)] == \
        list(prios.items()), r.stdout
    r = zkelectctl(["-s", str(ds[1].socket), "members"])
    assert r.returncode == 0 and r.stderr == "", r
    assert [line.split("\t")[1] for line in r.stdout.splitlines()] == \
        list(prios), r.stdout
    election.check_invariants()


def test_members_json_of_hostile_candidates(election, kz):
    d = election.daemon("node1", data="10.0.0.1:5432", options={
        "election.preempt_delay": "1s"})
    d.wait_role("leader")
    planted = [
        (b'id=q"uo\\te\npriority=99999999\n'
         b"data=\x1b[2J\t\xff\xc3\xa9\x7f{\n", 'q"uo\\te',
         "?[2J??\u00e9?{", 0),
        (b"id=p2\ndata=\xe2\x82\n\npriority=5x\n", "p2", "??", 0),
        (b"id=p3\npriority=\xef\xbc\x97\n", "p3", "", 0),
        # Cut to fit, it would read 7.
        (b"id=p4\npriority=" + b"0" * 30 + b"7x\n", "p4", "", 0),
        (b"priority=-1000000\n", "", "", -1000000),
    ]
    path = f"{election.path}/candidates"
    kz.ensure_path(path)
    sid = kz.client_id[0]
    for data, *_ in planted:
        kz.create(f"{path}/candidate-{sid:016x}_", data, ephemeral=True,
                  sequence=True)
    wait_for(lambda: len(members_json(d)) == 1 + len(planted), 10,
             "the planted candidates in members json")

    arr = members_json(d)
    assert [(m["id"], m["data"], m["priority"]) for m in arr] == \
        [("node1", "10.0.0.1:5432", 0)] + [tuple(p[1:]) for p in planted], arr
    rows = plain_rows(d)
    assert [[str(m["seq"]), m["id"], m["data"]] for m in arr] == rows, rows

    # No invalid priority outranks the leader, which looks at the queue
    # every 0.5 s (preempt_delay/4, at least 0.5 s): no preemption begins.
    time.sleep(1.5)
    assert d.role() == "leader" and members_json(d)[0]["id"] == "node1"
    assert "outranks" not in d.log_text(), d.log_tail()
