"""The harness itself: ZooKeeper servers, the ensemble, the history checks.
These need no zkelectd binary."""

import os
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from kazoo.client import KazooClient

import zkharness
from zkharness import (add_log_ends, check_alternation, check_no_overlap,
                       read_history, wait_for, RECORD_HOOK)


def kazoo(hosts):
    c = KazooClient(hosts=hosts, timeout=10)
    c.start(timeout=15)
    return c


def test_standalone_server_serves(zk, kz):
    assert zk[0].mode() == "standalone"
    kz.create("/harness-selftest", b"x", makepath=True)
    assert kz.get("/harness-selftest")[0] == b"x"
    kz.delete("/harness-selftest")


def test_servers_start_from_the_class_archive(zk):
    """zkcds.py: the archive is made once and every server maps it (so
    that a suite's sixty JVMs do not each load the same classes anew)."""
    jsa = zkharness.class_archive()
    if jsa is None:
        cds = zkharness.zkcds
        pytest.fail("no class archive: " + "; ".join(
            f.read_text().strip() for f in cds.DIR.glob(cds.PREFIX + "*.failed")))
    assert jsa.is_file()
    maps = Path(f"/proc/{zk[0].proc.pid}/maps").read_text()
    assert str(jsa) in maps, "the server did not map the archive"


def test_server_stop_and_restart_keeps_data(zk_factory):
    c = zk_factory()
    client = kazoo(c.hosts)
    try:
        client.create("/keep", b"1")
    finally:
        client.stop()
        client.close()
    c[0].stop()
    assert c[0].mode() is None
    assert c[0].restart() == "standalone"
    client = kazoo(c.hosts)
    try:
        assert client.get("/keep")[0] == b"1"
    finally:
        client.stop()
        client.close()


def test_three_server_ensemble(zk_factory):
    c = zk_factory(size=3)
    modes = c.wait_serving()
    assert sorted(modes) == ["follower", "follower", "leader"]
    first = kazoo(c[0].hostport)
    third = kazoo(c[2].hostport)
    try:
        first.create("/ensemble", b"quorum")
        third.sync("/ensemble")
        assert third.get("/ensemble")[0] == b"quorum"

        # Losing the leader leaves a quorum of two that elects a new one.
        old = c.leader()
        old.stop()
        # A follower goes on answering "follower" until it notices its
        # leader is gone (syncLimit x tickTime): wait for the new one.
        wait_for(lambda: sorted(m for m in c.wait_serving() if m) ==
                 ["follower", "leader"], 60, "a leader among the two left")
        survivor = next(s for s in c.servers if s.running())
        client = kazoo(survivor.hostport)
        try:
            assert client.get("/ensemble")[0] == b"quorum"
        finally:
            client.stop()
            client.close()

        # Back again, it rejoins as a follower.
        old.start()
        assert old.wait_serving() == "follower"
    finally:
        for k in (first, third):
            k.stop()
            k.close()


def _history(tmp_path, lines):
    p = tmp_path / "history"
    p.write_text("".join(f"{i}.0 {l}\n" for i, l in enumerate(lines, 1)))
    return read_history(p)


def test_history_checks_accept_a_clean_handover(tmp_path):
    ev = _history(tmp_path, [
        "a started - - -", "b started - - -",
        "a demote start - startup", "a demote end - startup",
        "b demote start - startup", "b demote end - startup",
        "a promote start 5 elected", "a promote end 5 elected",
        "a demote start 5 shutdown", "a demote end 5 shutdown",
        "a exited - 0 -",
        "b promote start 9 elected", "b promote end 9 elected",
    ])
    check_no_overlap(ev)
    check_alternation(ev)


def test_log_ends_close_a_killed_demote_for_i2(tmp_path):
    # A startup demote killed at its timeout after its first line (1.0),
    # reaped at 1.5 per the log; the promote starts at 2.0.
    ev = _history(tmp_path, [
        "a demote start 0 startup", "a promote start 5 elected",
        "a promote end 5 elected",
    ])
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(ev)
    check_alternation(add_log_ends(ev, {"a": [(0.9, 1.5)]}, True))
    # Reaped only after the promote started: the overlap is still seen.
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(add_log_ends(ev, {"a": [(0.9, 2.5)]}, True))
    # Killed before its first line: for I2 it starts at its spawn too.
    none = _history(tmp_path, ["a promote start 5 elected",
                               "a promote end 5 elected"])
    merged = add_log_ends(none, {"a": [(0.1, 0.5)]}, True)
    assert [(e.event, e.phase) for e in merged] == [
        ("demote", "start"), ("demote", "end"), ("promote", "start"),
        ("promote", "end")]
    check_alternation(merged)
    # A frozen leader woke with a few ms of lease left: its lease-lost
    # demote was killed before record.sh wrote a line (a chaos run), and
    # it promoted again later; its log says the demote ran in between.
    again = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "a promote start 5 elected", "a promote end 5 elected"])
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(again)
    check_alternation(add_log_ends(again, {"a": [(2.2, 2.3)]}, True))
    # Reaped only after the second promote started: still two promotes.
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(add_log_ends(again, {"a": [(2.2, 3.5)]}, True))


def test_log_ends_close_a_killed_demote_for_i1_only(tmp_path):
    # a's demote hook (history lines at 3 and later) was killed at its
    # timeout before record.sh wrote its end; a's log says it was reaped
    # at 3.5, and b promoted at 4.0 (the lines are stamped 1.0, 2.0, ...).
    ev = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "a demote start 5 lease-lost",
        "b promote start 9 elected", "b promote end 9 elected",
    ])
    with pytest.raises(AssertionError, match="I1"):
        check_no_overlap(ev)
    merged = add_log_ends(ev, {"a": [(2.9, 3.5)], "b": []})
    check_no_overlap(merged)
    assert [(e.n, e.id, e.event, e.phase) for e in merged][2:5] == [
        (3, "a", "demote", "start"), (4, "a", "demote", "end"),
        (5, "b", "promote", "start")]
    assert [e.n for e in ev] == [1, 2, 3, 4, 5]     # not changed
    # Reaped only after b's promote started: still two leaders.
    with pytest.raises(AssertionError, match="I1"):
        check_no_overlap(add_log_ends(ev, {"a": [(2.9, 4.2)]}))
    # A hook still running (no reaping in the log) closes nothing.
    with pytest.raises(AssertionError, match="I1"):
        check_no_overlap(add_log_ends(ev, {"a": [(2.9, None)]}))
    # A demote whose end record.sh wrote is not added twice.
    done = _history(tmp_path, [
        "a promote start 5 elected", "a demote start 5 shutdown",
        "a demote end 5 shutdown", "b promote start 9 elected",
    ])
    assert len(add_log_ends(done, {"a": [(1.9, 3.02)]})) == 4


def test_history_checks_catch_overlap_and_misorder(tmp_path):
    overlap = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "b promote start 9 elected", "b promote end 9 elected",
        "a demote start 5 shutdown", "a demote end 5 shutdown",
    ])
    with pytest.raises(AssertionError, match="I1"):
        check_no_overlap(overlap)
    # A SIGKILLed daemon's leadership ends with it.
    killed = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "a killed - -9 -",
        "b promote start 9 elected", "b promote end 9 elected",
    ])
    check_no_overlap(killed)
    # A leader that exits without demoting still holds its interval.
    unclean = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "a exited - 0 -",
        "b promote start 9 elected",
    ])
    with pytest.raises(AssertionError, match="I1"):
        check_no_overlap(unclean)
    nested = _history(tmp_path, [
        "a promote start 5 elected", "a demote start 5 health",
        "a demote end 5 health", "a promote end 5 elected",
    ])
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(nested)
    twice = _history(tmp_path, [
        "a promote start 5 elected", "a promote end 5 elected",
        "a promote start 7 elected", "a promote end 7 elected",
    ])
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(twice)
    hung = _history(tmp_path, [
        "a demote start - startup", "a demote end - startup",
        "a promote start 5 elected",
        "a demote start 5 promote-failed", "a demote end 5 promote-failed",
    ])
    with pytest.raises(AssertionError, match="I2"):
        check_alternation(hung)
    check_alternation(hung, allow_unfinished={("a", "promote")})


def test_record_hook_hangs_and_dies_with_its_group(tmp_path):
    env = dict(os.environ, ZKT_HISTORY=str(tmp_path / "h"), ZKT_HANG_PROMOTE="1",
               ZKT_PIDFILE=str(tmp_path / "pids"), ZKELECT_ID="x")
    p = subprocess.Popen([str(RECORD_HOOK), "promote"], env=env,
                         start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        words = zkharness.wait_for(
            lambda: (tmp_path / "pids").exists() and (tmp_path / "pids").read_text().split(),
            5, "pid file")
        pgid, pids = int(words[0]), [int(w) for w in words[1:]]
        assert pgid == p.pid and len(pids) == 3
        os.killpg(pgid, 15)          # ignored
        time.sleep(0.2)
        assert all(not zkharness.process_gone(x) for x in pids)
        os.killpg(pgid, 9)
        p.wait(5)
        zkharness.wait_for(lambda: not zkharness.group_members(pgid), 5, "group gone")
    finally:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass


def test_hook_spans_tell_the_runs_a_signal_ended():
    """Only a run a signal ended (or not over yet) may lack record.sh's
    lines; the others' log stamps can lag the history by the daemon's wait
    for a CPU, and must not be taken for runs of their own."""
    class Log:
        def log_text(self):
            return "\n".join(
                f"2026-11-29T18:00:0{s}.000Z zkelectd: hook demote[{p}]: {w}"
                for s, p, w in (
                    (1, 10, "started: record.sh demote"),
                    (2, 10, "over: code 0 signal 0 after 5 ms"),
                    (3, 11, "started: record.sh demote"),
                    (4, 11, "over: code -1 signal 9 after 309 ms (timed out)"),
                    (5, 12, "started: record.sh demote"),
                    (6, 12, "over: code 143 signal 0 after 700 ms (timed out)"),
                    (7, 13, "started: record.sh demote")))
    t0 = datetime(2026, 11, 29, 18, 0, 0, tzinfo=timezone.utc).timestamp()
    every = zkharness.Daemon.hook_spans(Log(), "demote")
    assert [(a - t0, b and b - t0) for a, b in every] == \
        [(1, 2), (3, 4), (5, 6), (7, None)]
    killed = zkharness.Daemon.hook_spans(Log(), "demote", killed_only=True)
    assert [(a - t0, b and b - t0) for a, b in killed] == [(3, 4), (7, None)]
