"""One hook slot per daemon: promote, demote, fence and the health check
never run at the same time (issue 7, defect 5)."""

import zkharness
from zkharness import RECORD_HOOK, wait_for


def runs_of(events, id):
    """[(event, start_ts, end_ts or None)] of one daemon's hook runs."""
    out, open_runs = [], {}
    for e in events:
        if e.id != id or e.phase not in ("start", "end"):
            continue
        if e.phase == "start":
            open_runs[e.event] = len(out)
            out.append([e.event, e.ts, None])
        elif e.event in open_runs:
            out[open_runs.pop(e.event)][2] = e.ts
    return out


def test_check_never_runs_beside_promote_or_demote(election):
    """With check_interval=100ms and a promote that takes 1.5 s, no check
    starts while promote (or demote) runs, and checks go on after."""
    d = election.daemon("node1", options={
        "hooks.check": f"{RECORD_HOOK} check",
        "hooks.check_interval": "100ms",
        "hooks.check_fall": "3",
        "hooks.demote_on_start": "no",
    }, start=False)
    d.hook_conf(promote_sleep=1.5)
    d.start()
    d.wait_role("leader", timeout=20)

    def checks_after_promote():
        runs = runs_of(election.events(), "node1")
        promote_end = [r[2] for r in runs if r[0] == "promote" and r[2]]
        return promote_end and sum(1 for r in runs if r[0] == "check"
                                   and r[1] > promote_end[0]) >= 3
    wait_for(checks_after_promote, 15, "health checks after the promote")
    d.hook_conf(demote_sleep=0.5)
    assert d.stop() == 0

    runs = runs_of(election.events(), "node1")
    long_ones = [r for r in runs if r[0] in ("promote", "demote")]
    assert [r[0] for r in long_ones] == ["promote", "demote"], runs
    for kind, start, end in long_ones:
        assert end is not None, (kind, runs)
        inside = [r for r in runs if r[0] == "check"
                  and start <= r[1] <= end]
        assert not inside, f"check started during {kind}: {inside}"
    # Every check ended before the next hook of the daemon started, or
    # was killed (SIGKILL, no end line) to free the slot for it: the daemon
    # waits until its process group is gone (tests/unit/test_hook.c).
    log = d.log_text()
    for a, b in zip(runs, runs[1:]):
        if a[2] is None:
            assert a[0] == "check" and "stopping the check hook" in log, (a, b)
        else:
            assert a[2] <= b[1], (a, b)
