"""hooks.run: a process that runs only while its node leads. It starts after
the promote hook ended, is gone (its whole process group) before the demote
hook starts, whatever ends the leadership; SIGTERM first, SIGKILL after
hooks.run_stop_timeout or sooner when the lease needs the demote; its own
exit makes the node resign (reason run-exited) and rejoin after
hooks.retry_backoff. Real daemons, a real ZooKeeper; every wait has a
deadline."""

import datetime
import json
import re

from proxy import ZkProxy
from zkharness import (RECORD_HOOK, group_members, member_ids, process_gone,
                       start_in_order, wait_for)

# Writes "<time> <id> run start|end <epoch> <why>" lines to {dir}/runs and
# its process group and child to {dir}/run-<id>; a child (sleep) shares its process group.
# {dir}/run-ignore-term: SIGTERM is ignored (the child inherits that);
# {dir}/run-exit-<id>: it exits 3 on its own, leaving the child behind.
RUN_SH = """#!/bin/sh
runs="{dir}/runs"
id=$ZKELECT_ID
line() {{
	t=$(date +%s.%N) || t=$(date +%s.%N)
	echo "$t $id run $1 ${{ZKELECT_EPOCH:--}} $2" >>"$runs"
}}
if [ -e "{dir}/run-ignore-term" ]; then
	trap '' TERM
else
	trap 'line end term; exit 0' TERM
fi
line start "$ZKELECT_EVENT/$ZKELECT_ROLE/$ZKELECT_REASON"
sleep 1000 &
pgid=$(ps -o pgid= -p $$ | tr -d ' ')
echo "$pgid $!" >"{dir}/run-$id.tmp"
mv "{dir}/run-$id.tmp" "{dir}/run-$id"
echo "run.sh: $id leads with epoch $ZKELECT_EPOCH"
while [ ! -e "{dir}/run-exit-$id" ]; do
	sleep 0.05
done
rm -f "{dir}/run-exit-$id"
line end exited
exit 3
"""

# The demote hook notes whether the node's run group still has a live
# process when it starts, then records like every test hook.
DEMOTE_SH = """#!/bin/sh
if [ -r "{dir}/run-$ZKELECT_ID" ]; then
	read pgid child <"{dir}/run-$ZKELECT_ID"
	if kill -0 -- "-$pgid" 2>/dev/null; then
		echo "$ZKELECT_ID $pgid" >>"{dir}/alive-at-demote"
	fi
fi
exec {record} demote
"""


def script(election, name, text):
    path = election.dir / name
    path.write_text(text.format(dir=election.dir, record=RECORD_HOOK))
    path.chmod(0o755)
    return path


def options(election, **extra):
    opts = {"hooks.run": str(script(election, "run.sh", RUN_SH)),
            "hooks.demote": str(script(election, "demote.sh", DEMOTE_SH))}
    opts.update(extra)
    return opts


def run_lines(election, id=None):
    """[(ts, id, phase, epoch, why)] of the run processes, in order."""
    try:
        text = (election.dir / "runs").read_text()
    except FileNotFoundError:
        return []
    out = []
    for l in text.splitlines():
        w = l.split()
        if len(w) == 6 and (id is None or w[1] == id):
            out.append((float(w[0]), w[1], w[3], w[4], w[5]))
    return out


def run_pids(election, id):
    """(pgid, child) of the node's last run process."""
    words = (election.dir / f"run-{id}").read_text().split()
    return int(words[0]), int(words[1])


def hooks_of(election, id, event, phase):
    return [e for e in election.events()
            if e.id == id and e.event == event and e.phase == phase]


def alive_at_demote(election):
    try:
        return (election.dir / "alive-at-demote").read_text()
    except FileNotFoundError:
        return ""


def wait_run(election, d, n=1, timeout=15):
    """Waits for the node's n-th run start; returns its (pgid, child)."""
    wait_for(lambda: len([r for r in run_lines(election, d.id)
                          if r[2] == "start"]) >= n and
             (election.dir / f"run-{d.id}").exists(), timeout,
             f"{d.id}'s run process number {n}")
    pgid, child = wait_for(lambda: run_pids(election, d.id)
                           if str(run_pids(election, d.id)[0]) ==
                           d.status().get("run_pid") else None, timeout,
                           f"{d.id}'s status shows its run process")
    # Its uptime: the status gives when it started, RFC 3339 UTC.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z",
                        d.status().get("run_since", "")), d.status()
    return pgid, child


def check_started_after_promote(election, id):
    start = [r for r in run_lines(election, id) if r[2] == "start"][-1]
    promote_end = hooks_of(election, id, "promote", "end")[-1]
    assert start[0] > promote_end.ts, \
        f"{id}'s run started before its promote ended"
    assert start[4] == "run/leader/elected", start
    assert start[3] == promote_end.epoch, (start, promote_end)


def check_gone_before_demote(election, id, pgid, child, reason):
    demotes = hooks_of(election, id, "demote", "start")
    assert demotes and demotes[-1].reason == reason, demotes
    assert f"{id} {pgid}" not in alive_at_demote(election), \
        f"{id}'s run group {pgid} was alive when its demote started"
    assert process_gone(child), "the run's child survived"
    assert group_members(pgid) == []


def test_run_follows_leadership(election):
    opts = options(election)
    n1, n2 = start_in_order(election, 2, options=opts)
    pgid, child = wait_run(election, n1)
    check_started_after_promote(election, "node1")
    assert not process_gone(child)
    st = json.loads(n1.ctl("status json"))
    assert st["run_pid"] == pgid and st["run_since"] != ""
    assert n1.status()["run_since"] != ""
    assert n2.status()["run_pid"] == ""
    assert json.loads(n2.ctl("status json"))["run_pid"] == ""
    wait_for(lambda: f"hook run[{pgid}]: run.sh: node1 leads with epoch"
             in n1.log_text(), 10, "the run's output in the log")

    # A resign: the run ends (SIGTERM) before the demote hook starts.
    assert n1.ctl("resign").strip() == "ok"
    n2.wait_role("leader", 15)
    check_gone_before_demote(election, "node1", pgid, child, "resign")
    assert run_lines(election, "node1")[-1][2:] != ("end", "exited")
    assert n1.status()["run_pid"] == ""
    pgid2, child2 = wait_run(election, n2)
    check_started_after_promote(election, "node2")

    # A pause: the same, and node1 leads again with a new run.
    assert n2.ctl("pause").strip() == "ok"
    n1.wait_role("leader", 15)
    check_gone_before_demote(election, "node2", pgid2, child2, "pause")
    pgid3, child3 = wait_run(election, n1, n=2)
    check_started_after_promote(election, "node1")

    # SIGTERM to the daemon: run stopped, demote, exit.
    assert n1.stop() == 0
    check_gone_before_demote(election, "node1", pgid3, child3, "shutdown")
    election.check_invariants()


def test_run_ignoring_sigterm_is_killed(election):
    (election.dir / "run-ignore-term").touch()
    d = election.daemon("node1", options=options(
        election, **{"hooks.run_stop_timeout": "500ms"}))
    d.wait_role("leader", 15)
    pgid, child = wait_run(election, d)
    assert d.stop() == 0
    check_gone_before_demote(election, "node1", pgid, child, "shutdown")
    assert hooks_of(election, "node1", "demote", "end")[-1].reason == "shutdown"
    # The runner's own timer or the daemon's, both at run_stop_timeout.
    log = d.log_text()
    assert ("sending SIGKILL to its process group" in log or
            f"hook run[{pgid}]: process group killed with SIGKILL" in log)


def test_run_stop_never_pushes_the_demote_past_the_lease(election):
    """While the lease is renewed the run gets its run_stop_timeout; once
    it is not (ZooKeeper silent), the SIGKILL comes at the point where the
    demote must start to end within the lease: within seconds with a 3 s
    session, not after the minute of run_stop_timeout."""
    (election.dir / "run-ignore-term").touch()
    proxy = ZkProxy(election.zk_hosts, name="proxy-node1")
    try:
        opts = options(election, **{"hooks.run_stop_timeout": "60s"})
        opts["zookeeper.hosts"] = proxy.hosts
        d = election.daemon("node1", options=opts)
        d.wait_role("leader", 15)
        pgid, child = wait_run(election, d)
        proxy.freeze()
        demotes = wait_for(lambda: [e for e in hooks_of(election, "node1",
                                                        "demote", "start")
                                    if e.reason != "startup"], 20,
                           "node1's demote, the lease running out")
        check_gone_before_demote(election, "node1", pgid, child,
                                 demotes[-1].reason)
        assert "sending SIGKILL to its process group" in d.log_text()
        wait_for(lambda: hooks_of(election, "node1", "demote", "end")[-1]
                 .reason != "startup", 10, "node1's demote to end")
        (election.dir / "run-ignore-term").unlink()
        proxy.thaw()
        assert d.stop() == 0
    finally:
        proxy.close()


def test_run_exit_makes_the_node_resign(election):
    n1, n2 = start_in_order(election, 2, options=options(
        election, **{"hooks.retry_backoff": "8s"}))
    pgid, child = wait_run(election, n1)
    (election.dir / "run-exit-node1").touch()
    n2.wait_role("leader", 15)
    check_gone_before_demote(election, "node1", pgid, child, "run-exited")
    assert run_lines(election, "node1")[-1][2] == "end"
    wait_for(lambda: "run process exited 3: resigning" in n1.log_text(), 10,
             "node1 logs why it resigns")
    demote_end = hooks_of(election, "node1", "demote", "end")[-1]
    assert demote_end.reason == "run-exited"
    # Backing off for retry_backoff after the release, then back in the
    # queue behind node2.
    until = wait_for(lambda: n1.status().get("backoff_until"), 15,
                     "node1 backs off")
    until = datetime.datetime.strptime(until, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    assert until >= demote_end.ts + 7, (until, demote_end.ts)
    wait_for(lambda: member_ids(n2) == ["node2", "node1"], 30,
             "node1 rejoins after its backoff")
    assert n1.role() == "follower"
    assert "run process exited 3" in n1.status()["last_error"]
    pgid2, _ = wait_run(election, n2)
    assert group_members(pgid) == []
    election.check_invariants()


def test_a_reloaded_run_stop_timeout_reaches_the_running_run(election):
    """A SIGHUP's hooks.run_stop_timeout applies to the run already
    running: its shell exits and leaves a child that ignores SIGTERM; the
    child is killed after the reloaded 300 ms, not the minute the run
    started with, and the node resigns then (the run's end on its own is
    the end of its whole group)."""
    (election.dir / "run-ignore-term").touch()
    d = election.daemon("node1", options=options(
        election, **{"hooks.run_stop_timeout": "60s"}))
    d.wait_role("leader", 15)
    pgid, child = wait_run(election, d)
    assert "configuration reloaded" in d.reload(
        {"hooks.run_stop_timeout": "300ms"})
    (election.dir / "run-exit-node1").touch()
    wait_for(lambda: process_gone(child), 20,
             "the run's leftover child to be killed after 300 ms")
    wait_for(lambda: "run process exited 3: resigning" in d.log_text(), 10,
             "node1 logs why it resigns")
    assert group_members(pgid) == []
    election.check_invariants()
