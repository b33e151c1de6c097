"""What tells an operator why and when: metrics that combine across daemons
(labels, build info, ZooKeeper state set, paused/healthy, the last
transition, hook duration histograms, promtool), the `history` command, the
status keys queue_position, paused, healthy, backoff_until and
last_transition, and the time= of watch lines.

Real daemons, a real ZooKeeper (session timeout 3 s). Every wait has a
deadline; nothing sleeps and hopes.
"""

import json
import re
import subprocess
import time
from datetime import datetime, timezone

from test_control import (RFC3339_UTC, WATCH_RE, Stream, check_watch_lines,
                          metrics_of, parse_metrics, watch_state)
from zkharness import (HarnessError, parse_kv, start_in_order, wait_for,
                       zkelectctl)

HISTORY_ROLES = ("unknown", "follower", "promoting", "leader", "demoting",
                 "observer", "stopped")
BUCKETS = ("0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1",
           "2.5", "5", "10", "30", "60", "+Inf")
HOOKS = ("promote", "demote", "fence", "check")


def promtool(text):
    """`promtool check metrics` on text (from stdin): (ok, its output)."""
    r = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=60)
    return r.returncode == 0, r.stdout + r.stderr


def merge_expositions(texts):
    """What a scrape of several targets into one place (or node_exporter's
    textfile collector over several files) does: one family, announced once
    by its HELP and TYPE, holding the samples of every exposition."""
    order, families = [], {}
    for text in texts:
        current = None
        for line in text.splitlines():
            if line.startswith("# HELP ") or line.startswith("# TYPE "):
                name = line.split(" ", 3)[2]
                if name not in families:
                    families[name] = {"head": [], "samples": []}
                    order.append(name)
                fam = families[name]
                if len(fam["head"]) < 2:
                    fam["head"].append(line)
                else:
                    assert line in fam["head"], \
                        f"{name}: the daemons disagree: {line!r} vs {fam['head']}"
                current = name
            elif line and not line.startswith("#"):
                assert current is not None, f"sample before any family: {line!r}"
                families[current]["samples"].append(line)
    return "".join("\n".join(families[n]["head"] + families[n]["samples"]) +
                   "\n" for n in order)


def series_keys(text):
    """The series (name and labels, value aside) of an exposition."""
    return {line.rsplit(" ", 1)[0] for line in text.splitlines()
            if line and not line.startswith("#")}


def history_of(d):
    """[(time, from, to, reason, epoch, leader)] of `history`, oldest first."""
    rows = []
    for line in d.ctl("history").splitlines():
        parts = line.split("\t")
        assert len(parts) == 6, f"{d.id}: bad history line {line!r}"
        when, frm, to, reason, epoch, leader = parts
        assert RFC3339_UTC.match(when) and when.endswith("Z"), line
        assert frm in HISTORY_ROLES and to in HISTORY_ROLES and frm != to, line
        assert re.fullmatch(r"[a-z-]+", reason), line
        assert re.fullmatch(r"\d+", epoch), line
        rows.append((parse_time(when), frm, to, reason, int(epoch), leader))
    for a, b in zip(rows, rows[1:]):
        assert a[2] == b[1], f"{d.id}: history does not chain: {a} then {b}"
        assert a[0] <= b[0], f"{d.id}: history not oldest first: {a}, {b}"
    return rows


def parse_time(text):
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp()


def transitions(rows):
    return [(frm, to, reason) for _, frm, to, reason, _, _ in rows]


def status_json(d):
    return json.loads(d.ctl("status json"))


def wait_status(d, what, pred, timeout=10):
    """Waits until pred(status) holds for the socket's status, the status
    file and the JSON alike."""
    seen = []

    def ok():
        st = parse_kv(d.ctl("status"))
        seen[:] = [st]
        return pred(st)
    try:
        wait_for(ok, timeout, f"{d.id}: {what}")
    except HarnessError as e:
        raise HarnessError(f"{e}; status: {seen}") from None


# ---------------------------------------------------------------- metrics

def test_metrics_labels_and_new_families(election):
    started = time.time()
    n1, n2 = start_in_order(election, 2)
    version = n1.ctl("version").strip()
    for d, role in ((n1, "leader"), (n2, "follower")):
        m = metrics_of(d)   # strict: every sample labelled service and id
        assert (m.service, m.id) == (election.service, d.id)
        assert m.type_of("zkelectd_build_info") == "gauge"
        assert m.get("zkelectd_build_info", version=version) == 1
        assert m.get("zkelectd_role", role=role) == 1

        assert m.type_of("zkelectd_zookeeper_state") == "gauge"
        states = {dict(l)["state"]: v
                  for l, v in m.series("zkelectd_zookeeper_state").items()}
        assert states == {"connecting": 0, "connected": 1, "readonly": 0,
                          "expired": 0}, states
        assert m.get("zkelectd_zookeeper_connected") == 1
        assert m.get("zkelectd_paused") == 0
        assert m.get("zkelectd_healthy") == 1

        last = m.get("zkelectd_last_transition_timestamp_seconds")
        assert started - 5 <= last <= time.time() + 5, (started, last)
        st = parse_kv(d.ctl("status"))
        assert abs(last - parse_time(st["last_transition"])) < 1.01, \
            (last, st["last_transition"])

        # Hook durations: a histogram per hook, cumulative buckets whose
        # +Inf is the count, which is the runs.
        assert m.type_of("zkelectd_hook_duration_seconds") == "histogram"
        for hook in HOOKS:
            counts = [m.get("zkelectd_hook_duration_seconds_bucket",
                            hook=hook, le=le) for le in BUCKETS]
            assert counts == sorted(counts), (hook, counts)
            runs = m.get("zkelectd_hook_runs_total", hook=hook)
            assert counts[-1] == runs == \
                m.get("zkelectd_hook_duration_seconds_count", hook=hook)
        # The startup demote (a quick script) ran once on each.
        assert m.get("zkelectd_hook_duration_seconds_bucket", hook="demote",
                     le="60") >= 1
    assert metrics_of(n1).get("zkelectd_hook_runs_total", hook="promote") == 1

    # A demote of 0.3 s lands above the 0.25 s bucket, in the 0.5 s one.
    n1.hook_conf(demote_sleep=0.3)
    before = metrics_of(n1)
    assert n1.ctl("resign", timeout=20) == "ok\n"
    assert election.wait_one_leader(daemons=[n2]) is n2
    m = metrics_of(n1)
    for le in ("0.005", "0.01", "0.025", "0.05", "0.1", "0.25"):
        assert m.get("zkelectd_hook_duration_seconds_bucket", hook="demote",
                     le=le) == before.get(
            "zkelectd_hook_duration_seconds_bucket", hook="demote", le=le), le
    assert m.get("zkelectd_hook_duration_seconds_count", hook="demote") == \
        before.get("zkelectd_hook_duration_seconds_count", hook="demote") + 1
    assert m.get("zkelectd_hook_duration_seconds_sum", hook="demote") >= \
        before.get("zkelectd_hook_duration_seconds_sum", hook="demote") + 0.3
    assert m.get("zkelectd_last_transition_timestamp_seconds") > \
        before.get("zkelectd_last_transition_timestamp_seconds")

    # Paused: the gauge says so (and the role alone could not: observer).
    assert n1.ctl("pause", timeout=20) == "ok\n"
    m = metrics_of(n1)
    assert m.get("zkelectd_paused") == 1 and m.get("zkelectd_healthy") == 1
    assert n1.ctl("resume") == "ok\n"
    wait_for(lambda: metrics_of(n1).get("zkelectd_paused") == 0, 5,
             "node1's paused gauge back to 0")


def test_two_daemons_metrics_combine_under_promtool(election):
    # A third daemon whose id needs escaping in a label value.
    odd = 'odd"one"\\back'
    n1, n2 = start_in_order(election, 2)
    n3 = election.daemon("odd", options={"election.id": odd,
                                         "election.mode": "observer"})
    n3.wait_role("observer")
    texts = [d.ctl("metrics") for d in (n1, n2, n3)]
    m3 = parse_metrics(texts[2])
    assert m3.id == odd, m3.id
    assert 'id="odd\\"one\\"\\\\back"' in texts[2]

    # Each exposition alone passes promtool.
    for d, text in zip((n1, n2, n3), texts):
        ok, out = promtool(text)
        assert ok, f"{d.id}: promtool check metrics: {out}\n{text}"
    # Their series never collide: the service and id labels tell them apart.
    keys = [series_keys(t) for t in texts]
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            assert not keys[i] & keys[j], sorted(keys[i] & keys[j])[:5]
    # Concatenated as one scrape of them would hold them (one HELP and TYPE
    # per family, every daemon's samples under it): promtool passes too.
    # (A bare `cat` of the answers repeats each HELP line, which the text
    # format forbids whatever the labels: see zkelectd(8), METRICS.)
    merged = merge_expositions(texts)
    ok, out = promtool(merged)
    assert ok, f"merged expositions: promtool check metrics: {out}\n{merged}"
    assert series_keys(merged) == keys[0] | keys[1] | keys[2]


# ---------------------------------------------------------------- history

def test_history_of_a_failover_and_a_resign(election):
    n1, n2 = start_in_order(election, 2)
    rows = history_of(n1)
    assert rows, "node1 has no history"
    assert rows[-1][2] == "leader" and rows[-1][3] == "elected", rows
    epoch1 = int(n1.leader()["epoch"])
    assert rows[-1][4] == epoch1 and rows[-1][5] == "node1", rows
    # The startup demote shows, with its reason.
    assert ("unknown", "demoting", "startup") in transitions(rows), rows
    # zkelectctl prints the same lines.
    r = zkelectctl(["-s", str(n1.socket), "history"])
    assert r.returncode == 0 and r.stderr == "", r
    assert r.stdout == n1.ctl("history")

    assert n1.ctl("resign", timeout=20) == "ok\n"
    assert election.wait_one_leader(daemons=[n2]) is n2
    epoch2 = int(n2.leader()["epoch"])
    t2 = transitions(history_of(n2))
    i = t2.index(("follower", "promoting", "elected"))
    assert t2[i + 1] == ("promoting", "leader", "elected"), t2
    last = history_of(n2)[-1]
    assert last[1:] == ("promoting", "leader", "elected", epoch2, "node2"), last
    t1 = transitions(history_of(n1))
    i = t1.index(("leader", "demoting", "resign"))
    assert t1[i + 1] == ("demoting", "follower", "resign"), t1
    resign_rows = [r for r in history_of(n1) if r[3] == "resign"]
    assert all(r[4] == epoch1 for r in resign_rows), resign_rows

    assert n2.ctl("resign", timeout=20) == "ok\n"
    assert election.wait_one_leader(daemons=[n1]) is n1
    t2 = transitions(history_of(n2))
    assert t2[-2:] == [("leader", "demoting", "resign"),
                       ("demoting", "follower", "resign")], t2


def test_history_keeps_the_last_100(election):
    (n1,) = start_in_order(election, 1)
    # Each pause and resume of a lone leader: leader -> demoting ->
    # observer, observer -> (promoting ->) leader...
    for _ in range(30):
        assert n1.ctl("pause", timeout=20) == "ok\n"
        assert n1.ctl("resume") == "ok\n"
        n1.wait_role("leader")
    rows = history_of(n1)
    assert len(rows) == 100, len(rows)
    assert rows[-1][2] == "leader"
    reasons = {r[3] for r in rows}
    assert {"pause", "resume", "elected"} <= reasons, reasons
    assert ("demoting", "observer", "pause") in transitions(rows)


# ---------------------------------------------------------------- status

def test_status_keys_queue_paused_healthy(election, tmp_path):
    n1, n2, n3 = start_in_order(election, 3)
    for d, pos in ((n1, 1), (n2, 2), (n3, 3)):
        wait_status(d, f"queue_position {pos}",
                    lambda st, pos=pos: st["queue_position"] == str(pos))
        st = parse_kv(d.ctl("status"))
        assert (st["paused"], st["healthy"], st["backoff_until"]) == \
            ("0", "1", ""), st
        assert RFC3339_UTC.match(st["last_transition"]), st
        js = status_json(d)
        assert js["queue_position"] == pos
        assert (js["paused"], js["healthy"]) == (0, 1), js
        assert js["backoff_until"] == ""
        assert js["last_transition"] == st["last_transition"]
        # The status file says the same.
        wait_for(lambda d=d, pos=pos: d.status().get("queue_position") ==
                 str(pos), 5, f"{d.id}'s status file queue_position")
        assert d.status()["last_transition"] == st["last_transition"]

    before = parse_kv(n3.ctl("status"))["last_transition"]
    assert n3.ctl("pause", timeout=20) == "ok\n"
    st = parse_kv(n3.ctl("status"))
    assert (st["role"], st["paused"], st["healthy"], st["queue_position"]) == \
        ("observer", "1", "1", "0"), st
    assert parse_time(st["last_transition"]) >= parse_time(before)
    assert status_json(n3)["paused"] == 1
    wait_for(lambda: n3.status().get("paused") == "1", 5,
             "node3's status file paused=1")
    assert history_of(n3)[-1][2:4] == ("observer", "pause")
    assert n3.ctl("resume") == "ok\n"
    wait_status(n3, "paused=0 and back in the queue at 3",
                lambda st: st["paused"] == "0" and
                st["queue_position"] == "3")
    assert history_of(n3)[-1][1:4] == ("observer", "follower", "resume") or \
        ("observer", "follower", "resume") in transitions(history_of(n3))


def test_status_healthy_and_backoff(election, tmp_path):
    flag = tmp_path / "healthy"
    flag.touch()
    # A check times out at check_interval: at 200 ms a stall of the loaded
    # machine failed both daemons' `test -e` (313 and 342 ms) after they
    # rejoined, and nobody was leader to resign; 1 s outlasts such stalls.
    n1, n2 = start_in_order(election, 2, options={
        "hooks.check": f"test -e {flag}",
        "hooks.check_interval": "1s",
        "hooks.check_fall": "1",
        "hooks.check_rise": "1",
        "hooks.retry_backoff": "30s",
    })
    # Unhealthy: healthy=0 (role observer, which alone would not tell why).
    flag.unlink()
    for d in (n1, n2):
        wait_status(d, "healthy=0, role observer",
                    lambda st: (st["healthy"], st["role"]) == ("0", "observer"))
        assert parse_kv(d.ctl("status"))["paused"] == "0"
        assert status_json(d)["healthy"] == 0
        assert metrics_of(d).get("zkelectd_healthy") == 0
    assert ("demoting", "observer", "health") in transitions(history_of(n1))
    flag.touch()
    # Both rejoin, in whichever order their checks pass.
    lead = election.wait_one_leader()
    other = n2 if lead is n1 else n1
    wait_status(other, "healthy=1", lambda st: st["healthy"] == "1")

    # A failed promote: backoff_until is when the node rejoins.
    other.hook_conf(promote_exit=1)
    t0 = time.time()
    assert lead.ctl("resign", timeout=20) == "ok\n"
    wait_status(other, "backoff_until set",
                lambda st: st["backoff_until"] != "", timeout=20)
    st = parse_kv(other.ctl("status"))
    until = parse_time(st["backoff_until"])
    assert t0 + 25 <= until <= time.time() + 31, (t0, st["backoff_until"])
    assert status_json(other)["backoff_until"] == st["backoff_until"]
    assert st["queue_position"] == "0", st
    assert ("promoting", "demoting", "promote-failed") in \
        transitions(history_of(other)), history_of(other)


# ---------------------------------------------------------------- watch

def test_watch_lines_carry_the_time(election):
    n1, n2 = start_in_order(election, 2)
    w = Stream(n2.socket)
    try:
        line = w.readline(5)
        m = WATCH_RE.match(line)
        assert m and m.group(1) == "follower", line
        assert abs(parse_time(m.group(4)) - time.time()) < 60, line
        # Commands that change nothing send no line (the time alone is no
        # change); a pause and a resume send theirs.
        for _ in range(5):
            assert n2.ctl("ping") == "pong\n"
        assert n2.ctl("pause", timeout=20) == "ok\n"
        w.until(lambda l: watch_state(l).startswith("role=observer "), 10,
                "node2's role=observer line")
        assert n2.ctl("resume") == "ok\n"
        w.until(lambda l: watch_state(l).startswith("role=follower "), 10,
                "node2's role=follower line")
        lines = w.texts()
        check_watch_lines(lines, "node2")
        times = [parse_time(WATCH_RE.match(l).group(4)) for l in lines]
        assert times == sorted(times), lines
        # zkelectctl watch prints the lines as they come.
        # -t counts from before it connects: the session timeout of the
        # tests (3 s) for the daemon's first line, not a guess at how fast
        # a loaded machine answers.
        r = zkelectctl(["-s", str(n2.socket), "watch", "-t", "3s"])
        first = r.stdout.splitlines()[0]
        assert WATCH_RE.match(first) and \
            watch_state(first) == watch_state(lines[-1]), (first, lines)
    finally:
        w.close()
