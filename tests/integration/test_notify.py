"""hooks.notify: every node, candidate or observer, runs it on each change of
leader with the new leader in its environment; one run at a time; beside
the hook slot, so that a slow one never delays a promote; killed at
hooks.timeout. Real daemons, a real ZooKeeper; every wait has a deadline."""

import os
import signal
import time

from zkharness import data_of, process_gone, start_in_order, wait_for

NOTIFY_SH = """#!/bin/sh
# One line when it starts and one when it ends, in the node's own file:
#   start|end LEADER EPOCH ROLE LEADER_DATA REASON
# (REASON: unset or empty written as such; set -u as a strict hook has it)
set -u
f="{dir}/notify-$ZKELECT_ID"
r=${{ZKELECT_REASON-unset}}
line="${{ZKELECT_LEADER:--}} ${{ZKELECT_EPOCH:--}} $ZKELECT_ROLE ${{ZKELECT_LEADER_DATA:--}} ${{r:-empty}}"
echo "start $line" >>"$f"
# A test may make the node's next runs slow.
if [ -r "{dir}/sleep-$ZKELECT_ID" ]; then
	echo "$$" >"{dir}/sleeping-$ZKELECT_ID"
	sleep "$(cat "{dir}/sleep-$ZKELECT_ID")"
fi
echo "end $line" >>"$f"
"""

HANG_SH = """#!/bin/sh
# Ignores SIGTERM and leaves a child behind: only the group's SIGKILL ends it.
trap '' TERM
sleep 1000 &
echo "$$ $!" >"{dir}/hang-$ZKELECT_ID.tmp"
mv "{dir}/hang-$ZKELECT_ID.tmp" "{dir}/hang-$ZKELECT_ID"
wait
"""


def script(election, name, text):
    path = election.dir / name
    path.write_text(text.format(dir=election.dir))
    path.chmod(0o755)
    return path


def runs(election, id):
    """[(phase, leader, epoch, role, leader_data, reason)] of one node's
    notify runs."""
    try:
        text = (election.dir / f"notify-{id}").read_text()
    except FileNotFoundError:
        return []
    return [tuple(l.split()) for l in text.splitlines() if l.strip()]


def last_end(election, id):
    ends = [r for r in runs(election, id) if r[0] == "end"]
    return ends[-1] if ends else None


def check_one_at_a_time(election, id):
    phases = [r[0] for r in runs(election, id)]
    for i, p in enumerate(phases):
        assert p == ("start" if i % 2 == 0 else "end"), \
            f"{id}: notify runs overlap: {runs(election, id)}"


def test_every_node_is_told_of_each_new_leader(election):
    hook = script(election, "notify.sh", NOTIFY_SH)
    opts = {"hooks.notify": str(hook)}
    n1, n2, n3 = start_in_order(election, 3, options=opts)
    obs = election.daemon("obs", options=dict(opts, **{"election.mode": "observer"}))
    obs.wait_role("observer")
    epoch1 = int(n1.leader()["epoch"])

    for d in (n1, n2, n3, obs):
        wait_for(lambda d=d: (last_end(election, d.id) or ())[1:3] ==
                 ("node1", str(epoch1)), 15, f"{d.id} told node1 leads")
    # The hook sees this node's role (node3 may have heard of node1 during
    # its startup demote) and the leader's data.
    assert last_end(election, "obs")[3] == "observer"
    assert last_end(election, "node2")[4] == data_of(1)
    # A leader named: the reason is elected (set for every hook, so that a
    # hook written with set -u runs).
    assert last_end(election, "obs")[5] == "elected"

    n1.stop()
    n2.wait_role("leader", 15)
    epoch2 = int(n2.leader()["epoch"])
    assert epoch2 > epoch1
    for d in (n2, n3, obs):
        wait_for(lambda d=d: (last_end(election, d.id) or ())[1:3] ==
                 ("node2", str(epoch2)), 15, f"{d.id} told node2 leads")
        check_one_at_a_time(election, d.id)
    assert last_end(election, "node3")[3:] == ("follower", data_of(2),
                                               "elected")
    assert "leader is now node2" in n3.log_text()
    assert "leader is now node2" in obs.log_text()


def test_a_reexec_tells_notify_nothing_and_keeps_the_role(election):
    """SIGUSR2 keeps the role and runs no hook: the new image goes on from
    what the old one reported and told hooks.notify, so no node's notify
    runs again for a leader it was told of, and the leader's role shows
    no change (its since, no history entry, no election won)."""
    hook = script(election, "notify.sh", NOTIFY_SH)
    opts = {"hooks.notify": str(hook)}
    nodes = start_in_order(election, 2, options=opts)
    n1 = nodes[0]
    epoch = n1.leader()["epoch"]
    for d in nodes:
        wait_for(lambda d=d: (last_end(election, d.id) or ())[1:3] ==
                 ("node1", epoch), 15, f"{d.id} told node1 leads")
    told = {d.id: runs(election, d.id) for d in nodes}
    since = n1.status()["since"]
    for d in nodes:
        mark = len(d.log_text())
        pid = d.pid
        d.signal(signal.SIGUSR2)
        wait_for(lambda d=d: "resumed:" in d.log_text()[mark:], 20,
                 f"{d.id} resumed")
        assert d.pid == pid
        d.wait_role("leader" if d is n1 else "follower", 10)
        # Its first listing is read: a notify would have started by now.
        wait_for(lambda d=d: d.leader()["id"] == "node1", 10,
                 f"{d.id} to know its leader")
    time.sleep(0.5)
    for d in nodes:
        assert runs(election, d.id) == told[d.id], d.id
    st = n1.status()
    assert (st["role"], st["since"], st["epoch"]) == ("leader", since, epoch)
    assert n1.ctl("history").strip() == "", "a re-exec is no role change"
    assert "zkelectd_elections_won_total" not in "".join(
        l for l in n1.ctl("metrics").splitlines(True)
        if l.startswith("zkelectd_elections_won_total") and
        not l.rstrip().endswith(" 0")), "a re-exec won no election"
    log = n1.log_text()
    assert "role unknown -> leader" not in log[log.rindex("re-executing"):]


def test_a_slow_notify_does_not_delay_the_promote(election):
    hook = script(election, "notify.sh", NOTIFY_SH)
    opts = {"hooks.notify": str(hook), "hooks.timeout": "120s"}
    n1, n2 = start_in_order(election, 2, options=opts)
    wait_for(lambda: (last_end(election, "node2") or ())[1:2] == ("node1",), 15,
             "node2 told node1 leads")
    # From now on node2's notify runs take a minute.
    (election.dir / "sleep-node2").write_text("60\n")

    n1.stop()
    n2.wait_role("leader", 30)
    # node2's promote ran while a notify run of node2 had not ended.
    started = [r for r in runs(election, "node2") if r[0] == "start"]
    ended = [r for r in runs(election, "node2") if r[0] == "end"]
    assert len(started) == len(ended) + 1, runs(election, "node2")
    promotes = [e for e in election.events()
                if e.id == "node2" and e.event == "promote" and e.phase == "end"]
    assert promotes, "node2 never promoted"
    assert (election.dir / "sleeping-node2").exists()
    pid = int((election.dir / "sleeping-node2").read_text())
    assert not process_gone(pid), "the slow notify run ended already"
    (election.dir / "sleep-node2").unlink()


def test_a_hanging_notify_is_killed_at_its_timeout(election):
    hook = script(election, "hang.sh", HANG_SH)
    d = election.daemon("node1", options={"hooks.notify": str(hook),
                                          "hooks.timeout": "1s"})
    d.wait_role("leader")
    pidfile = election.dir / "hang-node1"
    wait_for(pidfile.exists, 15, "the notify hook to start")
    pids = [int(w) for w in pidfile.read_text().split()]
    # SIGTERM at 1 s (ignored), SIGKILL to the group 5 s later.
    wait_for(lambda: all(process_gone(p) for p in pids), 30,
             "the hanging notify hook's group to be killed")
    wait_for(lambda: "notify hook timed out" in d.log_text(), 10,
             "the timeout to be logged")
    assert d.role() == "leader"


def test_no_leader_runs_it_with_empty_values(election):
    hook = script(election, "notify.sh", NOTIFY_SH)
    obs = election.daemon("obs", hooks=False, options={
        "hooks.notify": str(hook), "election.mode": "observer"})
    obs.wait_role("observer")
    n1 = election.daemon("node1")
    n1.wait_role("leader")
    wait_for(lambda: (last_end(election, "obs") or ())[1:2] == ("node1",), 15,
             "obs told node1 leads")
    n1.stop()
    wait_for(lambda: (last_end(election, "obs") or ())[1:3] == ("-", "-"), 15,
             "obs told nobody leads")
    # Nobody leads: ZKELECT_REASON is set, and empty, like the leader's.
    assert last_end(election, "obs")[5] == "empty"
    assert "no leader" in obs.log_text()
