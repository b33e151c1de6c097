"""The control socket and zkelectctl as users, their scripts and hostile
clients see them: every socket command, every zkelectctl command and exit
code, the socket's permissions and ownership, stale and contested socket
files, and clients that misbehave or come in crowds.

Real daemons, a real ZooKeeper (session timeout 3 s, tickTime 200 ms). Every
wait has a deadline; nothing sleeps and hopes.
"""

import grp
import json
import math
import os
import random
import re
import select
import signal
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from proxy import ZkProxy
from zkharness import (data_of, member_ids, start_in_order, wait_members,
                       ROLES, SAN, STATUS_KEYS, HarnessError, binary,
                       hook_runs, make_tmpdir, parse_kv, san_env,
                       san_findings, wait_for, zkelectctl)

NOBODY = 65534
RUNDIR = Path("/run/zkelectd")
# A control client that sends nothing for this long is dropped (the
# contract); test_crowd_does_not_stall_failover's queries ask within
# ASK_WITHIN of connecting.
IDLE_LIMIT = 5.0
ASK_WITHIN = 3.0
# zkelectctl's -t counts from before it connects: a watch or wait whose
# first line must come within it is given the session timeout of the tests
# (3 s), not a guess at how fast a loaded machine answers; a wait expected
# to return at once is given much more, which costs nothing when it does.
FIRST_LINE_WITHIN = "3s"
RETURNS_AT_ONCE = "20s"
WATCH_RE = re.compile(r"^role=(\S+) leader=(\S*) epoch=(\d+) time=(\S+)$")
RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
COMMANDS = ("ping", "version", "role", "status", "leader", "members",
            "resign", "pause", "resume", "metrics", "history", "watch",
            "is-leader", "wait")


# ---------------------------------------------------------------- helpers

def knows_leader(daemons, id, data, epoch, when, timeout=3):
    """[] when every daemon reports the leader (within the session timeout),
    else a message per daemon that does not."""
    want = {"id": id, "data": data, "epoch": str(epoch)}
    try:
        wait_for(lambda: all(d.leader() == want for d in daemons), timeout,
                 f"{[d.id for d in daemons]} to report {want}")
        return []
    except HarnessError:
        return [f"{when}, {d.id} (role {d.role()}) answers `leader` with "
                f"{d.leader()} and its status says leader="
                f"{d.status().get('leader')!r}, while {id} leads"
                for d in daemons if d.leader() != want]


def sock_args(d):
    return ["-s", str(d.socket)]


def ctl_ok(args, timeout=20):
    r = zkelectctl(args, timeout=timeout)
    assert r.returncode == 0, f"zkelectctl {args}: {r}"
    assert r.stderr == "", f"zkelectctl {args} wrote to stderr: {r.stderr!r}"
    return r


def ctl_as_nobody(args, timeout=10):
    """zkelectctl run as nobody:nogroup without supplementary groups."""
    return zkelectctl(args, timeout, prefix=(
        "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"))


def shared_dir():
    """A directory that user nobody can traverse."""
    d = make_tmpdir("zke-")
    os.chmod(d, 0o755)
    return d


def make_stale_socket(path):
    """A socket file nobody listens on: bound, then closed."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
    except BaseException:
        s.close()
        raise
    return s


def read_to_eof(s, deadline):
    """Everything until the peer closes (a reset after data counts as the
    close); HarnessError at the deadline."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HarnessError(f"no end of answer by the deadline; got "
                               f"{b''.join(chunks)[:200]!r}")
        s.settimeout(left)
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)


def query(path, payload, timeout=10.0):
    """One small request, the whole answer as text."""
    deadline = time.monotonic() + timeout
    s = connect(path, timeout)
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass    # refused before it read: its answer is still there
        return read_to_eof(s, deadline).decode(errors="replace")
    finally:
        s.close()


def exchange(path, payload, timeout=10.0):
    """Sends a (big) payload from a thread while reading the answer, so
    that a daemon answering before it took the whole payload cannot
    deadlock the test."""
    deadline = time.monotonic() + timeout
    s = connect(path, timeout)

    def send():
        try:
            s.sendall(payload)
        except OSError:
            pass    # the daemon answered and closed: expected
    t = threading.Thread(target=send, daemon=True)
    t.start()
    try:
        return read_to_eof(s, deadline).decode(errors="replace")
    finally:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        t.join(timeout)
        s.close()


class Stream:
    """A `watch` connection: lines as they come, with their arrival time."""

    def __init__(self, path, line=b"watch\n", timeout=5.0):
        self.sock = connect(path, timeout)
        self.sock.sendall(line)
        self.buf = b""
        self.eof = False
        self.lines = []     # (monotonic time, line)

    def readline(self, timeout):
        """The next line, None at the end of the stream."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                if self.buf:
                    rest, self.buf = self.buf, b""
                    return self._got(rest)
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessError(f"no watch line within {timeout:.1f}s; "
                                   f"lines so far: {self.texts()}")
            self.sock.settimeout(left)
            try:
                b = self.sock.recv(4096)
            except socket.timeout:
                continue
            except ConnectionResetError:
                b = b""
            if not b:
                self.eof = True
            self.buf += b
        line, _, self.buf = self.buf.partition(b"\n")
        return self._got(line)

    def _got(self, raw):
        text = raw.decode(errors="replace")
        self.lines.append((time.monotonic(), text))
        return text

    def until(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            line = self.readline(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise HarnessError(f"watch stream ended before {what}; "
                                   f"lines: {self.texts()}")
            if pred(line):
                return line

    def read_to_end(self, timeout):
        deadline = time.monotonic() + timeout
        while self.readline(max(0.0, deadline - time.monotonic())) is not None:
            pass

    def texts(self):
        return [t for _, t in self.lines]

    def close(self):
        self.sock.close()


def watch_state(line):
    """A watch line without its time= (which every line has)."""
    m = WATCH_RE.match(line)
    assert m, f"bad watch line {line!r}"
    assert RFC3339_UTC.match(m.group(4)), f"bad time in {line!r}"
    return line[:m.start(4) - len(" time=")]


def check_watch_lines(lines, who):
    """Every line well formed, and one line per change: never the same
    state twice in a row (the time aside)."""
    for line in lines:
        m = WATCH_RE.match(line)
        assert m, f"{who}: bad watch line {line!r}"
        assert m.group(1) in ROLES, f"{who}: unknown role in {line!r}"
    states = [watch_state(line) for line in lines]
    for a, b in zip(states, states[1:]):
        assert a != b, f"{who}: watch repeated {a!r} without a change: {lines}"


def wait_closed(socks, deadline):
    """Waits until each socket is closed by its peer; returns
    {index: (monotonic time of the close, bytes received before it)}."""
    closed = {}
    got = {i: b"" for i in range(len(socks))}
    for s in socks:
        s.setblocking(False)
    while len(closed) < len(socks):
        left = deadline - time.monotonic()
        if left <= 0:
            open_ = [i for i in range(len(socks)) if i not in closed]
            raise HarnessError(f"sockets {open_} still open at the deadline")
        ready, _, _ = select.select(
            [s for i, s in enumerate(socks) if i not in closed], [], [], left)
        now = time.monotonic()
        for s in ready:
            i = socks.index(s)
            try:
                b = s.recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                b = b""
            if b:
                got[i] += b
            else:
                closed[i] = (now, got[i])
    return closed


# ---------------------------------------------------------------- Prometheus

METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
VALUE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
                   r"|[+-]Inf|NaN")
SAMPLE = re.compile(rf"^({METRIC_NAME})(?:\{{(.*)\}})? (\S+)(?: (-?\d+))?$")
HELP = re.compile(rf"^# HELP ({METRIC_NAME}) ((?:[^\\\n]|\\[\\n])*)$")
TYPE = re.compile(rf"^# TYPE ({METRIC_NAME}) "
                  r"(counter|gauge|summary|histogram|untyped)$")
SUFFIXES = {"summary": ("_sum", "_count"),
            "histogram": ("_bucket", "_sum", "_count")}


class Metrics:
    def __init__(self, families, samples, service=None, id=None):
        self.families = families    # name -> {"help", "type"}
        self.samples = samples      # (name, frozenset(labels)) -> float,
        self.service = service      # without the service and id labels
        self.id = id                # every sample carries

    def get(self, name, **labels):
        key = (name, frozenset(labels.items()))
        assert key in self.samples, (
            f"no sample {name}{labels or ''}; have: "
            f"{sorted(n for n, _ in self.samples if n.startswith(name))}")
        return self.samples[key]

    def series(self, name):
        """{frozenset(labels): value} of every sample called name."""
        return {l: v for (n, l), v in self.samples.items() if n == name}

    def type_of(self, family):
        return self.families[family]["type"]


def parse_metrics(text):
    """A strict parser of the Prometheus text exposition format (0.0.4):
    every sample belongs to a family announced before it by both `# HELP`
    and `# TYPE`, a family's samples are contiguous, no series twice,
    names and labels well formed, values floats."""
    assert text.endswith("\n"), "exposition does not end with a newline"
    families = {}
    samples = {}
    finished = set()        # families whose samples ended
    current = None
    for n, line in enumerate(text[:-1].split("\n"), 1):
        where = f"metrics line {n} {line!r}"
        if line == "":
            continue
        if line.startswith("#"):
            if line.startswith("# HELP ") or line.startswith("# TYPE "):
                m = (HELP if line.startswith("# HELP ") else TYPE).match(line)
                assert m, f"{where}: malformed"
                name, what = m.group(1), line[2:6].lower()
                fam = families.setdefault(name, {})
                assert what not in fam, f"{where}: second {what.upper()}"
                assert name not in finished and name != current, \
                    f"{where}: {what.upper()} after the family's samples"
                fam[what] = m.group(2)
            continue    # any other comment is ignored, as Prometheus does
        m = SAMPLE.match(line)
        assert m, f"{where}: not `name{{labels}} value`"
        name, raw_labels, raw_value = m.group(1), m.group(2), m.group(3)
        labels = {}
        if raw_labels:
            pos = 0
            while pos < len(raw_labels):
                lm = LABEL.match(raw_labels, pos)
                assert lm, f"{where}: bad labels at {raw_labels[pos:]!r}"
                assert lm.group(1) not in labels, f"{where}: label twice"
                labels[lm.group(1)] = re.sub(
                    r"\\(.)", lambda e: "\n" if e.group(1) == "n"
                    else e.group(1), lm.group(2))
                pos = lm.end()
                if pos < len(raw_labels):
                    assert raw_labels[pos] == ",", f"{where}: bad labels"
                    pos += 1
        assert VALUE.fullmatch(raw_value), f"{where}: value is no float"
        value = float(raw_value)
        family = None
        if name in families and families[name].get("type") not in SUFFIXES:
            family = name
        else:
            for ftype, sufs in SUFFIXES.items():
                for suf in sufs:
                    base = name[:-len(suf)]
                    if name.endswith(suf) and \
                            families.get(base, {}).get("type") == ftype:
                        family = base
            if family is None and families.get(name, {}).get("type") == "summary":
                family = name
                assert "quantile" in labels, f"{where}: summary without quantile"
        assert family is not None, \
            f"{where}: no # TYPE for its family before it"
        fam = families[family]
        assert "help" in fam and "type" in fam, \
            f"{where}: family {family} lacks a preceding # HELP or # TYPE"
        assert family not in finished, \
            f"{where}: samples of {family} are not contiguous"
        if current is not None and current != family:
            finished.add(current)
        current = family
        assert family.startswith("zkelectd_"), f"{where}: not prefixed zkelectd_"
        if fam["type"] == "counter" or name.endswith(("_count", "_sum")):
            assert value >= 0 and not math.isnan(value), \
                f"{where}: negative counter"
        key = (name, frozenset(labels.items()))
        assert key not in samples, f"{where}: series exposed twice"
        samples[key] = value
    for name, fam in families.items():
        assert "help" in fam and "type" in fam, \
            f"family {name} has only {sorted(fam)}"
    # One daemon's exposition: every sample labelled with its service and
    # id, the same on every sample; get() and series() leave them out.
    idents = {(dict(l).get("service"), dict(l).get("id"))
              for _, l in samples}
    assert len(idents) == 1 and None not in next(iter(idents)), \
        f"samples not all labelled with one service and id: {idents}"
    service, id = next(iter(idents))
    stripped = {(n, frozenset((k, v) for k, v in l
                              if k not in ("service", "id"))): v
                for (n, l), v in samples.items()}
    return Metrics(families, stripped, service, id)


def metrics_of(d):
    return parse_metrics(d.ctl("metrics"))


def check_metrics_plausible(m, role, candidates, won, promote_runs):
    """What every healthy daemon's metrics say."""
    roles = m.series("zkelectd_role")
    assert m.type_of("zkelectd_role") == "gauge"
    assert {dict(l).get("role") for l in roles} >= set(ROLES) - {"stopped"}, roles
    assert all(v in (0.0, 1.0) for v in roles.values()), roles
    assert m.get("zkelectd_role", role=role) == 1.0, roles
    assert sum(roles.values()) == 1.0, f"more than one role is 1: {roles}"

    for fam, typ in (("zkelectd_leader_changes_total", "counter"),
                     ("zkelectd_elections_won_total", "counter"),
                     ("zkelectd_hook_runs_total", "counter"),
                     ("zkelectd_hook_failures_total", "counter"),
                     ("zkelectd_hook_duration_seconds", "histogram"),
                     ("zkelectd_session_expirations_total", "counter"),
                     ("zkelectd_connection_losses_total", "counter"),
                     ("zkelectd_candidates", "gauge"),
                     ("zkelectd_socket_requests_total", "counter")):
        assert fam in m.families, f"no metric family {fam}"
        assert m.type_of(fam) == typ, f"{fam} is a {m.type_of(fam)}, not a {typ}"

    assert m.get("zkelectd_leader_changes_total") >= 1
    assert m.get("zkelectd_elections_won_total") == won
    for hook in ("promote", "demote"):
        runs = m.get("zkelectd_hook_runs_total", hook=hook)
        assert runs == int(runs)
        assert m.get("zkelectd_hook_duration_seconds_count", hook=hook) == runs
        assert m.get("zkelectd_hook_duration_seconds_sum", hook=hook) >= 0
        assert m.get("zkelectd_hook_failures_total", hook=hook) <= runs
    assert m.get("zkelectd_hook_runs_total", hook="promote") == promote_runs
    # demote_on_start: every daemon ran its demote hook once at start.
    assert m.get("zkelectd_hook_runs_total", hook="demote") >= 1
    assert m.get("zkelectd_session_expirations_total") == 0
    assert m.get("zkelectd_connection_losses_total") == 0
    assert m.get("zkelectd_candidates") == candidates
    assert m.get("zkelectd_socket_requests_total") >= 1


# ---------------------------------------------------------------- commands

def test_ping_version_role_status_and_json(election):
    n1, n2 = start_in_order(election, 2)
    epoch = n1.leader()["epoch"]

    v = subprocess.run([str(binary("zkelectd")), "-V"], capture_output=True,
                       text=True, timeout=10, env=san_env())
    assert v.returncode == 0, v
    version = v.stdout.split()[-1]
    assert re.match(r"^\d+\.\d+", version), v.stdout

    for d, role in ((n1, "leader"), (n2, "follower")):
        assert d.ctl("ping") == "pong\n"
        answer = d.ctl("version")
        assert answer in (f"{version}\n", f"zkelectd {version}\n"), \
            f"{d.id}: socket version {answer!r}, zkelectd -V {v.stdout!r}"
        assert d.ctl("role") == f"{role}\n"

        def consistent():
            # Both answers from the same state (`updated` moves on changes).
            # The candidate count is the last listing's: it may lag a
            # moment behind a join.
            text = d.ctl("status")
            raw_json = d.ctl("status json")
            if d.ctl("status") != text or parse_kv(text)["candidates"] != "2":
                return None
            return text, raw_json
        text, raw_json = wait_for(consistent, 5,
                                  f"{d.id} stable status with 2 candidates")

        st = parse_kv(text)
        missing = [k for k in STATUS_KEYS if k not in st]
        assert not missing, f"{d.id}: status lacks {missing}: {text!r}"
        assert all(re.match(r"^[a-z_]+=", l) for l in text.splitlines()), text
        assert st["service"] == election.service
        assert st["id"] == d.id
        assert st["role"] == role
        assert st["leader"] == "node1"
        assert st["leader_data"] == data_of(1)
        assert st["epoch"] == epoch
        assert st["candidates"] == "2"
        assert st["zk_state"] == "connected"
        assert re.match(r"^(0x)?[0-9a-f]+$", st["session"]), st["session"]
        assert st["pid"] == str(d.pid)
        assert RFC3339_UTC.match(st["since"]), st["since"]
        assert RFC3339_UTC.match(st["updated"]), st["updated"]

        assert raw_json.count("\n") == 1 and raw_json.endswith("\n"), raw_json
        obj = json.loads(raw_json)
        assert isinstance(obj, dict), raw_json
        assert set(obj) == set(st), \
            f"{d.id}: keys differ: json {sorted(obj)} status {sorted(st)}"
        for k, value in obj.items():
            assert isinstance(value, (str, int)) and not isinstance(value, bool), \
                f"{d.id}: json {k}={value!r}"
            assert str(value) == st[k], \
                f"{d.id}: {k}: json {value!r}, status {st[k]!r}"


def test_leader_answer_with_and_without_a_leader(election):
    """An observer never leads: alone, it reports no leader (empty values);
    with a candidate, that candidate; the observer is never a member."""
    obs = election.daemon("watcher", options={"election.mode": "observer"})
    obs.wait_role("observer")
    no_leader_before = obs.ctl("leader")
    # An observer is one from the start, before its session exists; and
    # `members` asks ZooKeeper (zookeeper-unavailable until connected).
    st = wait_for(lambda: (s := parse_kv(obs.ctl("status")))["zk_state"] ==
                  "connected" and s, 5, "observer connected")
    assert st["leader"] == "" and st["role"] == "observer"
    assert obs.ctl("members") in ("", "\n"), "an observer joined the queue"

    n1 = election.daemon("node1", data=data_of(1))
    n1.wait_role("leader")
    epoch = n1.leader()["epoch"]
    want = f"id=node1\ndata={data_of(1)}\nepoch={epoch}\n"
    wait_for(lambda: obs.ctl("leader") == want, 5, "the observer to see node1")
    assert n1.ctl("leader") == want
    rows = [l.split("\t") for l in obs.ctl("members").splitlines()]
    assert rows == [[rows[0][0], "node1", data_of(1)]], rows
    assert obs.role() == "observer"

    assert n1.stop() == 0
    wait_for(lambda: parse_kv(obs.ctl("leader"))["id"] == "", 5,
             "the observer to see no leader")
    no_leader_after = obs.ctl("leader")
    assert obs.role() == "observer"

    for answer in (no_leader_before, no_leader_after):
        assert answer == "id=\ndata=\nepoch=\n", (
            f"`leader` without a leader answered {answer!r}; the contract "
            f"says id=, data=, epoch= lines with empty values")


def test_members_and_resign(election):
    n1, n2, n3 = start_in_order(election, 3)
    epoch1 = int(n1.leader()["epoch"])
    # The successor's promote hook takes a moment, so `promoting` lasts.
    n2.hook_conf(promote_sleep=0.5)

    for d in (n1, n2, n3):
        raw = d.ctl("members")
        assert raw.endswith("\n"), raw
        rows = [l.split("\t") for l in raw.splitlines()]
        assert all(len(r) == 3 for r in rows), f"{d.id}: {raw!r}"
        assert [r[1] for r in rows] == ["node1", "node2", "node3"], raw
        assert [r[2] for r in rows] == [data_of(i) for i in (1, 2, 3)], raw
        assert all(r[0].isdigit() for r in rows), raw
        seqs = [int(r[0]) for r in rows]
        assert seqs == sorted(set(seqs)), raw

    assert n2.ctl("resign") == "error not-leader\n"
    assert n3.ctl("resign") == "error not-leader\n"
    assert n1.role() == "leader"

    answer = n1.ctl("resign", timeout=20)
    # The moment `ok` arrives:
    successor = n2.role()
    resigner = n1.role()
    queue = member_ids(n1)
    assert answer == "ok\n"
    assert resigner == "follower"
    assert queue == ["node2", "node3", "node1"], \
        f"resign answered ok before node1 rejoined at the back: {queue}"
    # By `ok` our leadership is released and ZooKeeper has told the
    # successor; its own reaction (list, read, promote) is its business and
    # cannot be observed from here, so it gets a short deadline.
    problems = []
    if successor not in ("promoting", "leader"):
        wait_for(lambda: n2.role() in ("promoting", "leader"), 2,
                 "node2 to take over right after the resign")

    assert election.wait_one_leader(daemons=[n2, n3]) is n2
    epoch2 = n2.leader()["epoch"]
    assert int(epoch2) > epoch1
    for d in (n1, n2, n3):
        wait_members(d, ["node2", "node3", "node1"])
    assert n1.ctl("resign") == "error not-leader\n"

    ev = election.events()
    demotes = [r for r in hook_runs(ev, id="node1", event="demote")
               if r[0].reason == "resign"]
    assert len(demotes) == 1 and demotes[0][1] is not None, demotes
    promote = hook_runs(ev, id="node2", event="promote")[-1][0]
    assert promote.n > demotes[0][1].n, \
        "node2 promoted before node1's demote hook ended"
    election.check_invariants()

    # The node that resigned follows the new leader, and says so.
    problems += knows_leader([n1], "node2", data_of(2), epoch2, "after resign")
    assert not problems, "\n".join(problems)


def test_pause_survives_until_resume(election):
    n1, n2, n3 = start_in_order(election, 3)

    answer = n1.ctl("pause", timeout=20)
    role_at_ok = n1.role()
    queue_at_ok = member_ids(n2)
    assert answer == "ok\n"
    assert role_at_ok == "observer"
    assert "node1" not in queue_at_ok, f"paused node1 still queued: {queue_at_ok}"
    assert election.wait_one_leader(daemons=[n2, n3]) is n2
    assert n1.role() == "observer"

    # The pause outlives a change of leader.
    assert n2.ctl("resign", timeout=20) == "ok\n"
    assert election.wait_one_leader(daemons=[n3]) is n3
    n2.wait_role("follower")
    wait_members(n3, ["node3", "node2"])
    assert n1.role() == "observer"
    assert n1.ctl("resign") == "error not-leader\n"
    assert n1.ctl("pause") == "ok\n", "pause while paused"
    assert n1.role() == "observer"

    assert n1.ctl("resume") == "ok\n"
    n1.wait_role("follower")
    for d in (n1, n2, n3):
        wait_members(d, ["node3", "node2", "node1"])
    assert election.wait_one_leader(daemons=[n3]) is n3
    assert (n1.role(), n2.role()) == ("follower", "follower")

    ev = election.events()
    pause_demotes = [r for r in hook_runs(ev, id="node1", event="demote")
                     if r[0].reason == "pause"]
    assert len(pause_demotes) == 1 and pause_demotes[0][1] is not None
    election.check_invariants()

    # Paused, then resumed, node1 reports who leads (an observer does);
    # so does node2, which resigned.
    problems = knows_leader([n1, n2], "node3", data_of(3),
                            n3.leader()["epoch"],
                            "after pause and resume (node1), resign (node2)")
    assert not problems, "\n".join(problems)


def test_watch_reports_changes_and_a_failover(election):
    n1, n2, n3 = start_in_order(election, 3)
    epoch1 = int(n1.leader()["epoch"])
    n2.hook_conf(promote_sleep=0.3)

    w1, w2 = Stream(n1.socket), Stream(n2.socket)
    try:
        # The current state at once (before any change: the deadline only
        # bounds a hang, so it is generous).
        assert watch_state(w1.readline(5)) == \
            f"role=leader leader=node1 epoch={epoch1}"
        assert watch_state(w2.readline(5)) == \
            f"role=follower leader=node1 epoch={epoch1}"
        # A watcher is no idle client: it outlives the 5 s idle limit.
        # (Checked in test_idle_and_hostile_clients' timing: we do not wait.)

        assert n1.stop() == 0
        last = w2.until(lambda l: l.startswith("role=leader "), 10,
                        "node2's role=leader line")
        m = WATCH_RE.match(last)
        assert m and m.group(2) == "node2", last
        epoch2 = int(m.group(3))
        assert epoch2 > epoch1
        assert epoch2 == int(n2.leader()["epoch"])
        lines2 = w2.texts()
        assert any(l.startswith("role=promoting ") for l in lines2), \
            f"node2's watch never showed promoting: {lines2}"
        check_watch_lines(lines2, "node2")

        wait_for(lambda: n3.leader()["id"] == "node2", 5, "node3 to see node2")
        r = ctl_ok(sock_args(n3) + ["watch", "-t", FIRST_LINE_WITHIN])
        assert watch_state(r.stdout.splitlines()[0]) == \
            f"role=follower leader=node2 epoch={epoch2}"
        check_watch_lines(r.stdout.splitlines(), "zkelectctl watch")

        # The stopped leader's stream ends, its last line telling so.
        w1.read_to_end(5)
        lines1 = w1.texts()
        check_watch_lines(lines1, "node1")
        assert lines1[-1].startswith("role=stopped "), (
            f"node1's watch stream ended without a role=stopped line: {lines1}")
    finally:
        w1.close()
        w2.close()


def test_metrics(election):
    n1, n2 = start_in_order(election, 2)
    # The candidate count is the last listing's: it may lag behind a join.
    for d in (n1, n2):
        wait_for(lambda: metrics_of(d).get("zkelectd_candidates") == 2, 5,
                 f"{d.id} to count two candidates")

    m1, m2 = metrics_of(n1), metrics_of(n2)
    check_metrics_plausible(m1, "leader", 2, won=1, promote_runs=1)
    check_metrics_plausible(m2, "follower", 2, won=0, promote_runs=0)
    # Every hook failure the daemon logged, and no other: none, unless a
    # loaded machine's startup demote outlasted its T/4 (seen under ASan).
    def logged_failures(d, hook):
        return len(re.findall(
            rf"\b{hook} hook (timed out after|killed by signal|exited)",
            d.log_text()))
    startup = {}
    for d, m in ((n1, m1), (n2, m2)):
        for hook in ("promote", "demote"):
            startup[d.id, hook] = logged_failures(d, hook)
            assert m.get("zkelectd_hook_failures_total", hook=hook) == \
                startup[d.id, hook], (d.id, hook)

    # Each request counts.
    before = metrics_of(n1).get("zkelectd_socket_requests_total")
    for _ in range(5):
        assert n1.ctl("ping") == "pong\n"
    after = metrics_of(n1).get("zkelectd_socket_requests_total")
    assert after >= before + 6, (before, after)

    # A slow, failing demote: counted as a run, a failure and its time.
    n1.hook_conf(demote_sleep=0.3, demote_exit=1)
    assert n1.ctl("resign", timeout=20) == "ok\n"
    assert election.wait_one_leader(daemons=[n2]) is n2
    n1.wait_role("follower")
    for d in (n1, n2):
        wait_for(lambda: metrics_of(d).get("zkelectd_candidates") == 2, 5,
                 f"{d.id} to count two candidates again")
    m1, m2 = metrics_of(n1), metrics_of(n2)
    check_metrics_plausible(m1, "follower", 2, won=1, promote_runs=1)
    check_metrics_plausible(m2, "leader", 2, won=1, promote_runs=1)
    # Its 0.3 s sleep fits the resign's demote budget, unless a loaded
    # machine stalls the hook past it (once: 564 ms): a failure either way.
    assert re.search(r"demote hook (exited 1|timed out after)",
                     n1.log_text()), n1.log_text()[-2000:]
    assert m1.get("zkelectd_hook_failures_total", hook="demote") == \
        startup["node1", "demote"] + 1
    assert m1.get("zkelectd_hook_runs_total", hook="demote") == 2
    assert m1.get("zkelectd_hook_duration_seconds_sum", hook="demote") >= 0.3
    assert m2.get("zkelectd_leader_changes_total") >= 2
    assert m2.get("zkelectd_hook_failures_total", hook="promote") == 0


# ---------------------------------------------------------------- zkelectctl

def test_zkelectctl_every_command(election):
    n1, n2 = start_in_order(election, 2)
    s1, s2 = sock_args(n1), sock_args(n2)
    epoch = n1.leader()["epoch"]

    assert ctl_ok(s1 + ["ping"]).stdout == "pong\n"
    assert ctl_ok(s1 + ["version"]).stdout == n1.ctl("version")
    assert ctl_ok(s1 + ["role"]).stdout == "leader\n"
    assert ctl_ok(s2 + ["role"]).stdout == "follower\n"

    # status and status --json are read at two moments: node2's news may
    # reach node1 between them, so both wait for it first.
    wait_for(lambda: parse_kv(ctl_ok(s1 + ["status"]).stdout)
             .get("candidates") == "2", 10, "node1 to count two candidates")
    st = parse_kv(ctl_ok(s1 + ["status"]).stdout)
    assert (st["role"], st["leader"], st["epoch"]) == ("leader", "node1", epoch)
    obj = json.loads(ctl_ok(s1 + ["status", "--json"]).stdout)
    assert set(obj) >= set(STATUS_KEYS)
    for k in STATUS_KEYS:
        if k != "updated":
            assert str(obj[k]) == st[k], f"status --json {k}: {obj[k]!r} vs {st[k]!r}"

    assert parse_kv(ctl_ok(s2 + ["leader"]).stdout) == \
        {"id": "node1", "data": data_of(1), "epoch": epoch}
    rows = [l.split("\t") for l in ctl_ok(s2 + ["members"]).stdout.splitlines()]
    assert [r[1:] for r in rows] == [["node1", data_of(1)], ["node2", data_of(2)]]
    m = parse_metrics(ctl_ok(s1 + ["metrics"]).stdout)
    assert m.get("zkelectd_role", role="leader") == 1

    r = ctl_ok(s1 + ["watch", "-t", FIRST_LINE_WITHIN])
    assert watch_state(r.stdout.splitlines()[0]) == \
        f"role=leader leader=node1 epoch={epoch}"

    r = ctl_ok(s1 + ["is-leader"])
    assert r.stdout == "leader\n"
    r = zkelectctl(s2 + ["is-leader"])
    assert (r.returncode, r.stdout) == (1, "follower\n"), r
    r = zkelectctl(["-q"] + s2 + ["is-leader"])
    assert (r.returncode, r.stdout, r.stderr) == (1, "", ""), r

    r = ctl_ok(s1 + ["wait", "leader", "-t", RETURNS_AT_ONCE])
    assert r.stdout.endswith("\n") and len(r.stdout.splitlines()) == 1, r
    assert watch_state(r.stdout.strip()) == \
        f"role=leader leader=node1 epoch={epoch}"
    t0 = time.monotonic()
    r = zkelectctl(s2 + ["wait", "observer", "-t", FIRST_LINE_WITHIN])
    took = time.monotonic() - t0
    assert r.returncode == 1, r
    assert r.stdout == ""
    assert "observer" in r.stderr and "follower" in r.stderr, \
        f"the timeout message should name the wanted and the current role: {r.stderr!r}"
    assert 2.9 <= took < 8, f"wait -t {FIRST_LINE_WITHIN} took {took:.2f}s"

    r = zkelectctl(s2 + ["resign"])
    assert (r.returncode, r.stdout) == (4, ""), r
    assert r.stderr == "zkelectctl: resign: error not-leader\n", r.stderr

    # wait leader on the follower returns when the leader resigns. The
    # resign comes only once the waiter's request has reached node2 (its
    # request counter moved past what the polls themselves add): whether
    # the waiter connects before or after the resign is up to the
    # scheduler, and after it there would be nothing left to wait for.
    base = metrics_of(n2).get("zkelectd_socket_requests_total")
    waiter = subprocess.Popen(
        [str(binary("zkelectctl")), *s2, "wait", "leader", "-t", "20s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=san_env(), stdin=subprocess.DEVNULL)
    polls = [0]

    def waiter_arrived():
        polls[0] += 1
        got = metrics_of(n2).get("zkelectd_socket_requests_total")
        return got - base - polls[0] >= 1
    try:
        wait_for(waiter_arrived, 10, "zkelectctl wait's request at node2")
        assert waiter.poll() is None, "wait leader returned on a follower"
        assert ctl_ok(s1 + ["resign"]).stdout == "ok\n"
        out, err = waiter.communicate(timeout=15)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate()
    if SAN:
        assert not san_findings(err), err
    assert waiter.returncode == 0, (waiter.returncode, out, err)
    m = WATCH_RE.match(out.strip())
    assert m and m.group(1) == "leader" and m.group(2) == "node2", out
    assert int(m.group(3)) > int(epoch)
    assert election.wait_one_leader(daemons=[n2]) is n2

    # pause / resume on the (now) follower.
    assert ctl_ok(s1 + ["pause"]).stdout == "ok\n"
    assert ctl_ok(s1 + ["role"]).stdout == "observer\n"
    assert ctl_ok(s1 + ["resume"]).stdout == "ok\n"
    r = ctl_ok(s1 + ["wait", "follower", "-t", RETURNS_AT_ONCE])
    assert WATCH_RE.match(r.stdout.strip()).group(1) == "follower", r.stdout
    election.check_invariants()


def test_zkelectctl_exit_codes_and_messages(election):
    n1, n2 = start_in_order(election, 2)

    r = zkelectctl(["--help"])
    assert r.returncode == 0 and r.stderr == "", r
    for cmd in COMMANDS:
        assert re.search(rf"^\s+{re.escape(cmd)}\b", r.stdout, re.M), \
            f"--help does not list {cmd}"
    r = zkelectctl(["-h"])
    assert r.returncode == 0 and "usage" in r.stdout.lower()

    # 2: usage.
    for args, words in (
            (sock_args(n1) + ["frobnicate"], ["frobnicate"]),
            (sock_args(n1) + ["wait", "leader", "-t", "5x"], ["5x", "duration"]),
            (["-t", "soon"] + sock_args(n1) + ["role"], ["soon", "duration"]),
            (sock_args(n1) + ["wait", "-t", "1s"], ["wait"]),
            (sock_args(n1) + ["wait", "boss", "-t", "1s"], ["boss"]),
            (sock_args(n1) + ["role", "extra"], ["extra"]),
            (sock_args(n1), [])):
        r = zkelectctl(args)
        assert r.returncode == 2, f"{args}: {r}"
        assert r.stdout == "", f"{args}: {r}"
        for w in words:
            assert w in r.stderr.lower(), f"{args}: stderr {r.stderr!r} lacks {w!r}"
        assert r.stderr.strip(), f"{args}: no message"

    # 3: unreachable: no socket file; a socket file nobody listens on.
    missing = n1.dir / "missing.sock"
    stale = n1.dir / "stale.sock"
    make_stale_socket(stale)
    for path in (missing, stale):
        for cmd in (["role"], ["is-leader"], ["status", "--json"],
                    ["wait", "leader", "-t", "1s"], ["watch", "-t", "1s"]):
            r = zkelectctl(["-s", str(path), *cmd])
            assert r.returncode == 3, f"{path.name} {cmd}: {r}"
            assert r.stdout == ""
            assert str(path) in r.stderr, \
                f"{path.name} {cmd}: message does not name the socket: {r.stderr!r}"

    # 4: the daemon answered an error.
    r = zkelectctl(sock_args(n2) + ["resign"])
    assert (r.returncode, r.stdout) == (4, ""), r
    assert r.stderr == "zkelectctl: resign: error not-leader\n"

    # And 0/1 of is-leader are not confused with them.
    assert zkelectctl(sock_args(n1) + ["is-leader"]).returncode == 0
    assert zkelectctl(sock_args(n2) + ["is-leader"]).returncode == 1


def test_zkelectctl_by_service_name(election):
    # The daemon makes RUNDIR when it is missing. It is never removed here:
    # it is shared with any other run of the suite on this machine, whose
    # daemon may be between making it and binding its socket in it.
    d = election.daemon("node1", socket_path="default", start=False)
    sock = RUNDIR / f"{election.service}.sock"
    assert d.socket == sock
    try:
        d.start()
        d.wait_role("leader")
        n = ["-n", election.service]
        assert ctl_ok(n + ["role"]).stdout == "leader\n"
        assert ctl_ok(n + ["is-leader"]).stdout == "leader\n"
        assert json.loads(ctl_ok(n + ["status", "--json"]).stdout)["service"] == \
            election.service
        assert ctl_ok(n + ["wait", "leader", "-t", RETURNS_AT_ONCE]).stdout.startswith(
            "role=leader leader=node1 ")
        assert d.stop() == 0
        assert not sock.exists(), "the socket file outlived the daemon"
        r = zkelectctl(n + ["role"])
        assert r.returncode == 3, r
        assert str(sock) in r.stderr, r.stderr
        r = zkelectctl(["-n", "../etc/passwd", "role"])
        assert r.returncode == 2, r
    finally:
        d.stop()
        sock.unlink(missing_ok=True)


# ---------------------------------------------------------------- permissions

def test_socket_mode_0666_others_query_but_do_not_control(election):
    sd = shared_dir()
    n1 = election.daemon("node1", data=data_of(1),
                         socket_path=str(sd / "ctl.sock"),
                         options={"control.socket_mode": "0666"})
    n1.wait_role("leader")
    assert stat.S_IMODE(os.stat(n1.socket).st_mode) == 0o666
    s = sock_args(n1)

    r = ctl_as_nobody(s + ["role"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "leader\n", ""), r
    r = ctl_as_nobody(s + ["status"])
    assert r.returncode == 0 and parse_kv(r.stdout)["role"] == "leader", r
    for cmd in ("resign", "pause", "resume", "switchover node2"):
        r = ctl_as_nobody(s + cmd.split())
        assert (r.returncode, r.stdout) == (4, ""), f"{cmd} as nobody: {r}"
        name = cmd.split()[0]
        assert r.stderr == f"zkelectctl: {name}: error permission-denied\n", r.stderr

    assert n1.role() == "leader"
    assert member_ids(n1) == ["node1"]
    assert [r[0].reason for r in hook_runs(election.events(), id="node1",
                                           event="demote")] == ["startup"]

    # root may.
    assert ctl_ok(s + ["pause"]).stdout == "ok\n"
    assert n1.role() == "observer"
    assert ctl_ok(s + ["resume"]).stdout == "ok\n"
    n1.wait_role("leader")


def test_socket_default_mode_and_group(election):
    sd = shared_dir()
    n1 = election.daemon("node1", socket_path=str(sd / "a.sock"))
    n1.wait_role("leader")
    n2 = election.daemon("node2", socket_path=str(sd / "b.sock"),
                         options={"control.socket_group": "nogroup"})
    n2.wait_role("follower")
    nogroup = grp.getgrnam("nogroup").gr_gid

    st1, st2 = os.stat(n1.socket), os.stat(n2.socket)
    assert stat.S_ISSOCK(st1.st_mode) and stat.S_ISSOCK(st2.st_mode)
    assert stat.S_IMODE(st1.st_mode) == 0o660, oct(st1.st_mode)
    assert stat.S_IMODE(st2.st_mode) == 0o660, oct(st2.st_mode)
    assert st1.st_gid == os.getegid(), st1.st_gid
    assert st2.st_gid == nogroup, f"socket group {st2.st_gid}, want {nogroup}"

    # nobody (group nogroup) cannot reach the 0660 root:root socket ...
    r = ctl_as_nobody(sock_args(n1) + ["role"])
    assert r.returncode == 3, r
    assert str(n1.socket) in r.stderr and "ermission" in r.stderr, r.stderr
    # ... but reaches the root:nogroup one, and still may not control it.
    r = ctl_as_nobody(sock_args(n2) + ["role"])
    assert (r.returncode, r.stdout) == (0, "follower\n"), r
    r = ctl_as_nobody(sock_args(n2) + ["resign"])
    assert r.returncode == 4, r
    assert r.stderr == "zkelectctl: resign: error permission-denied\n", r.stderr


def test_stale_socket_replaced_live_socket_kept(election):
    sd = election.dir / "sock"
    sd.mkdir()
    path = sd / "ctl.sock"
    make_stale_socket(path)
    r = zkelectctl(["-s", str(path), "ping"])
    assert r.returncode == 3, r

    n1 = election.daemon("node1", socket_path=str(path))
    n1.wait_role("leader")
    assert n1.ctl("ping") == "pong\n"
    assert ctl_ok(["-s", str(path), "role"]).stdout == "leader\n"
    assert "stale" in n1.log_text() and str(path) in n1.log_text()
    live_ino = os.stat(path).st_ino

    # A second daemon on the same socket path fails, naming it.
    n2 = election.daemon("node2", socket_path=str(path), start=False)
    t0 = time.monotonic()
    n2.start(wait=False)
    rc = n2.wait_exit(timeout=10)
    assert rc != 0, "a second daemon started on a socket held by a live one"
    log2 = n2.log_text()
    said = [l for l in log2.splitlines() if str(path) in l]
    assert said, f"the refusal does not name {path}:\n{log2}"
    assert any(re.search(r"in use|running|already", l) for l in said), said
    print(f"second daemon exited {rc} after {time.monotonic() - t0:.2f}s: {said}")

    # The first one goes on serving on its socket, alone in the election.
    assert os.stat(path).st_ino == live_ino, "the socket file was replaced"
    assert n1.ctl("ping") == "pong\n"
    assert n1.role() == "leader"
    assert ctl_ok(["-s", str(path), "is-leader"]).stdout == "leader\n"
    assert member_ids(n1) == ["node1"]
    assert n1.status()["pid"] == str(n1.pid)


# ---------------------------------------------------------------- hostile

def test_idle_and_hostile_clients(election):
    n1 = election.daemon("node1", data=data_of(1))
    n1.wait_role("leader")
    epoch = n1.leader()["epoch"]

    # Two silent clients, timed at the end: one sends nothing, one half a
    # line. Meanwhile everybody else is served.
    t0 = time.monotonic()
    silent = connect(n1.socket)
    slow = connect(n1.socket)
    slow.sendall(b"pi")
    watcher = Stream(n1.socket)
    assert watcher.readline(5).startswith("role=leader ")

    try:
        assert exchange(n1.socket, b"x" * (1 << 20) + b"\n") == \
            "error line-too-long\n"
        assert exchange(n1.socket, b"y" * (1 << 20)) == "error line-too-long\n"
        assert n1.ctl("ping") == "pong\n"

        junk = bytes(b for b in range(256) if b != 0x0a)
        for payload in (b"\x00" + junk + b"\n", b"\x00\x00\x00\n",
                        b"\xff\xfe\x00binary\x00junk\n", b"ping\x00\n",
                        b"resign\x00junk\n", b"pause\x00\n"):
            assert query(n1.socket, payload) == "error unknown-command\n", payload

        for part in (b"sta", b"res", b"pin", b"\x00"):
            s = connect(n1.socket)
            s.sendall(part)
            s.close()
        s = connect(n1.socket)
        s.close()       # connect and go

        assert n1.ctl("ping") == "pong\n"
        assert n1.role() == "leader"
        assert n1.leader()["epoch"] == epoch
        assert member_ids(n1) == ["node1"]

        closed = wait_closed([silent, slow], t0 + 9)
        for name, (when, got) in zip(("silent", "half-line"),
                                     (closed[0], closed[1])):
            after = when - t0
            print(f"{name} client dropped after {after:.2f}s ({got!r})")
            assert 4.0 <= after <= 7.0, \
                f"{name} client dropped after {after:.2f}s, want about 5 s"

        # The watcher, idle as it is, stays connected.
        assert n1.ctl("ping") == "pong\n"
        watcher.sock.setblocking(False)
        try:
            assert watcher.sock.recv(1) != b"", "the watcher was dropped"
        except BlockingIOError:
            pass    # still open, nothing to read: right
    finally:
        for s in (silent, slow):
            s.close()
        watcher.close()
    assert n1.role() == "leader"
    assert [r[0].reason for r in hook_runs(election.events(), id="node1",
                                           event="demote")] == ["startup"]


def test_max_clients(election):
    """Idle clients give their slots to newcomers (oldest first, told why);
    only when every slot is busy is a newcomer refused."""
    n1 = election.daemon("node1", options={"control.max_clients": "8"})
    n1.wait_role("leader")

    held = [connect(n1.socket) for _ in range(8)]
    try:
        # Each query takes the slot of the oldest client that sent nothing.
        for i in range(3):
            assert query(n1.socket, b"role\n") == "leader\n"
            assert read_to_eof(held[i], time.monotonic() + 5) == \
                b"error too-many-clients\n"
            held.append(connect(n1.socket))     # all slots taken again
        r = zkelectctl(sock_args(n1) + ["role"])
        assert r.returncode == 0 and r.stdout == "leader\n", r
        # A held client that did send its line keeps its slot.
        held[4].sendall(b"role\n")
        assert read_to_eof(held[4], time.monotonic() + 5) == b"leader\n"
    finally:
        for s in held:
            s.close()
    wait_for(lambda: all(n1.ctl("ping") == "pong\n" for _ in range(10)), 3,
             "all slots free again")

    # One slot, held by a watcher: nothing to take, the newcomer is refused.
    n2 = election.daemon("node2", options={"control.max_clients": "1"})
    n2.wait_role("follower")
    w = Stream(n2.socket)
    try:
        assert w.readline(5).startswith("role=follower ")
        assert query(n2.socket, b"role\n") == "error too-many-clients\n"
        r = zkelectctl(sock_args(n2) + ["role"])
        assert r.returncode == 4, r
        assert "too-many-clients" in r.stderr, r.stderr
    finally:
        w.close()
    wait_for(lambda: n2.ctl("ping") == "pong\n", 3, "the slot back")
    assert n1.role() == "leader"


def test_watchers_never_lock_out_commands(election):
    """Watchers that never read hold at most 3/4 of the slots, a quarter of
    those per uid; one-shot commands keep answering."""
    n1 = election.daemon("node1", socket_path=str(shared_dir() / "n1.sock"),
                         options={"control.max_clients": "32",
                                  "control.socket_mode": "0666"})
    n1.wait_role("leader")
    # 32 slots: 24 for watchers, 6 per uid.
    root_w = [connect(n1.socket) for _ in range(6)]
    try:
        for s in root_w:
            s.sendall(b"watch\n")
            s.settimeout(5)
            assert s.recv(4096).startswith(b"role=leader ")
        assert query(n1.socket, b"watch\n") == "error too-many-watchers\n"
        # Another uid still gets its own.
        r = ctl_as_nobody(["-s", n1.socket, "watch", "-t", FIRST_LINE_WITHIN])
        assert r.returncode == 0 and r.stdout.startswith("role=leader "), r
        # 40 more connections that send nothing: commands still answer.
        idle = [connect(n1.socket) for _ in range(40)]
        try:
            for _ in range(20):
                assert n1.ctl("role") == "leader\n"
        finally:
            for s in idle:
                s.close()
    finally:
        for s in root_w:
            s.close()
    wait_for(lambda: query(n1.socket, b"role\n") == "leader\n", 5,
             "served again")
    r = zkelectctl(["-s", n1.socket, "watch", "-t", FIRST_LINE_WITHIN])
    assert r.returncode == 0 and r.stdout.startswith("role=leader "), r


def test_crowd_does_not_stall_failover(election):
    """50 idle connections and 500 concurrent role queries on the follower
    that must take over, while the leader is stopped."""
    n1, n2, n3 = start_in_order(election, 3)
    nq = 500
    watch = Stream(n2.socket)
    assert watch.readline(5).startswith("role=follower leader=node1 ")
    idle = [connect(n2.socket) for _ in range(50)]

    results = [None] * nq
    early = [False] * nq
    waited = [0.0] * nq         # from before connecting to asked
    arrived = threading.Semaphore(0)
    go = threading.Event()

    def ask(i):
        # All connected at once, then all asking at once. But a client that
        # sends nothing for 5 s is dropped without a word (the contract),
        # and on a loaded machine the daemon may take longer than that to
        # accept all 500: one that has waited ASK_WITHIN asks anyway.
        s = None
        try:
            t_start = time.monotonic()
            s = connect(n2.socket, timeout=20)
            arrived.release()
            if not go.wait(timeout=ASK_WITHIN):
                early[i] = True
            deadline = time.monotonic() + 20
            try:
                s.sendall(b"role\n")
            except (BrokenPipeError, ConnectionResetError):
                pass    # refused at once: the answer is there to read
            # The daemon accepted after t_start and had the line by now:
            # a bound of how long it saw the client idle. With 500 threads
            # taking turns at the interpreter, a thread may wait seconds
            # between two of its lines (a pair of suites: three dropped
            # for idleness that had measured 3 s before their send).
            waited[i] = time.monotonic() - t_start
            results[i] = read_to_eof(s, deadline).decode(errors="replace")
        except Exception as e:  # noqa: BLE001 - reported below
            results[i] = e
            if s is None:
                arrived.release()
        finally:
            if s is not None:
                s.close()

    threads = [threading.Thread(target=ask, args=(i,), daemon=True)
               for i in range(nq)]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        for _ in range(nq):
            assert arrived.acquire(timeout=max(0.0, deadline -
                                               time.monotonic())), \
                "the queries did not connect within 30 s"
        go.set()
        n1.signal(signal.SIGTERM)
        rc = n1.wait_exit(timeout=15)
        t_exit = time.monotonic()
        assert rc == 0
        line = watch.until(lambda l: l.startswith("role=leader "), 10,
                           "node2 to lead")
        t_lead = watch.lines[-1][0]
        assert WATCH_RE.match(line).group(2) == "node2", line
        lag = t_lead - t_exit
        print(f"node2 leader {lag:.2f}s after node1 exited")
        assert lag < 3.0, f"successor led {lag:.2f}s after the old leader exited"

        deadline = time.monotonic() + 30
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in threads), "queries still hang"
    finally:
        for s in idle:
            s.close()
        watch.close()

    allowed = {f"{r}\n" for r in ROLES} | {"error too-many-clients\n"}
    # Only a thread the machine did not run for seconds asks that late; the
    # daemon may have dropped it for idleness before it asked, rightly. A
    # second's margin: a loaded daemon may see its idle timer before a line
    # that came just in time.
    idled = {i for i in range(nq) if waited[i] > IDLE_LIMIT - 1.0}
    bad = [(i, r) for i, r in enumerate(results)
           if r not in allowed and not (i in idled and r == "")]
    answered = sum(1 for r in results if r in allowed and
                   r != "error too-many-clients\n")
    refused = sum(1 for r in results if r == "error too-many-clients\n")
    print(f"{answered} answered, {refused} refused, {len(bad)} bad, "
          f"{sum(early)} asked before all had connected, "
          f"{len(idled)} asked {IDLE_LIMIT - 1.0:.0f} s or more after "
          f"connecting")
    assert not bad, f"{len(bad)} queries got neither a role nor a refusal: {bad[:10]}"
    assert answered > 0

    assert election.wait_one_leader(daemons=[n2, n3]) is n2
    wait_members(n3, ["node2", "node3"])
    election.check_invariants()


def test_over_long_line_then_half_close_gets_the_answer(election):
    """A client that sends more than a line's worth and half-closes reads
    "error line-too-long", never a reset, whatever the length."""
    n1 = election.daemon("node1")
    n1.wait_role("leader")
    rng = random.Random(1234)
    sizes = [2000, 4096, 65536, 100000] + \
        [rng.randrange(1100, 100001) for _ in range(60)]
    for n in sizes:
        # As a one-threaded client does it: all of it, then the half-close,
        # then the answer.
        s = connect(n1.socket, 10)
        try:
            # In pieces, as socat and nc copy their input.
            for i in range(0, n, 8192):
                s.sendall(b"x" * min(8192, n - i))
                time.sleep(0.002)
            s.shutdown(socket.SHUT_WR)
            got = read_to_eof(s, time.monotonic() + 10)
        except OSError as e:
            got = e
        finally:
            s.close()
        assert got == b"error line-too-long\n", (n, got)
    assert n1.ctl("ping") == "pong\n"
    assert n1.role() == "leader"


# ------------------------------------------- long commands, streams, ids

def test_watch_half_closed_streams_until_the_client_closes(election):
    """The contract lets a client half-close right after its line (socat,
    nc -N) and watch goes on until the client closes: the half-closed
    watcher gets every change, holds its watcher's place while it is
    there, and gives it back once it closes."""
    # 4 clients: 3 watchers, 1 per uid.
    n1, n2 = start_in_order(election, 2, options={"control.max_clients": 4})
    epoch1 = n1.leader()["epoch"]
    w = Stream(n2.socket)
    try:
        w.sock.shutdown(socket.SHUT_WR)
        assert watch_state(w.readline(5)) == \
            f"role=follower leader=node1 epoch={epoch1}"
        # Still watching: the uid's one watcher's place is taken.
        assert query(n2.socket, b"watch\n", 10) == "error too-many-watchers\n"
        assert n1.ctl("resign") == "ok\n"
        last = w.until(lambda l: l.startswith("role=leader "), 15,
                       "node2's role=leader line on the half-closed stream")
        assert WATCH_RE.match(last).group(2) == "node2", last
        check_watch_lines(w.texts(), "half-closed watcher")
    finally:
        w.close()
    # Its close frees the place (long before any idle timeout would).
    again = Stream(n2.socket)
    try:
        assert watch_state(again.readline(5)).startswith("role=leader ")
    finally:
        again.close()


def test_watch_without_newline_half_closed_gives_its_place_back(election):
    """A watch line without its newline, then a half-close (as
    `printf watch | socat - UNIX-CONNECT:SOCK` sends it), then the close:
    the watcher's place is free again at once when another watcher wants
    it, and so is its client slot, as after a watch line with newline."""
    # 4 clients: 3 watchers, 1 per uid.
    n1 = election.daemon("node1", options={"control.max_clients": 4})
    n1.wait_role("leader")
    for i in range(6):
        a = Stream(n1.socket, line=b"watch")
        try:
            a.sock.shutdown(socket.SHUT_WR)
            assert watch_state(a.readline(10)).startswith("role=leader "), i
        finally:
            a.close()
        # The close above is the peer's hang-up already: no waiting.
        b = Stream(n1.socket)
        try:
            first = b.readline(10)
            assert first is not None and \
                watch_state(first).startswith("role=leader "), (i, first)
        finally:
            b.close()
    assert n1.ctl("ping") == "pong\n"


def test_wait_stopped_for_a_daemon_gone_already(election):
    """wait stopped ends when the socket is gone or nobody listens on it:
    also when it was so before the wait began (exit 0, nothing printed);
    a wait for another role, and watch, still find the daemon unreachable
    (exit 3)."""
    n1 = election.daemon("node1")
    n1.wait_role("leader")
    assert n1.stop() == 0
    assert not n1.socket.exists()
    stale = election.dir / "stale.sock"
    make_stale_socket(stale)
    for path in (n1.socket, stale):
        r = zkelectctl(["-s", str(path), "wait", "stopped", "-t", "20s"],
                       timeout=30)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), (path, r)
        for cmd in (["wait", "leader", "-t", "20s"], ["watch", "-t", "20s"]):
            r = zkelectctl(["-s", str(path), *cmd], timeout=30)
            assert r.returncode == 3 and r.stdout == "", (path, cmd, r)
            assert "cannot connect" in r.stderr, (path, cmd, r)


def test_switchover_to_an_id_that_begins_with_a_dash(election):
    """zkelectd takes election.id = -x; zkelectctl reaches it after --."""
    a = election.daemon("node1", data=data_of(1))
    a.wait_role("leader")
    b = election.daemon("-x", data=data_of(2))
    b.wait_role("follower")
    r = zkelectctl(sock_args(a) + ["switchover", "--", "-x"], timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    b.wait_role("leader")
    assert a.leader()["id"] == "-x"
    # Without the --, -x is an unknown option, and the message says why.
    r = zkelectctl(sock_args(b) + ["switchover", "-x"])
    assert r.returncode == 2 and "goes after --" in r.stderr, r
    # Options may still come before the --; after it nothing is one.
    r = zkelectctl(sock_args(b) + ["switchover", "-t", "60s", "--",
                                   "node1"], timeout=90)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    a.wait_role("leader")
    r = zkelectctl(sock_args(a) + ["switchover", "--", "-x", "-t", "1s"])
    assert r.returncode == 2 and "'-t'" in r.stderr, r


class SocketRequests:
    """Counts the commands a daemon's socket got besides our own metrics
    queries: how a test knows that zkelectctl wait, which prints nothing
    until its role comes, has subscribed."""

    def __init__(self, d):
        self.d = d
        self.asked = 0
        self.base = self._value()

    def _value(self):
        self.asked += 1
        return metrics_of(self.d).get("zkelectd_socket_requests_total")

    def others(self):
        value = self._value()
        return value - self.base - (self.asked - 1)


def test_wait_and_watch_follow_the_daemon_across_a_reexec(election):
    """SIGUSR2 re-executes the daemon without stopping it, closing every
    watch stream: zkelectctl wait and watch take the stream up again on
    the same socket; only role=stopped (or the socket gone) is a stop."""
    n1, n2 = start_in_order(election, 2)
    pid = n2.pid
    count = SocketRequests(n2)
    argv = [str(binary("zkelectctl")), *sock_args(n2)]
    procs = {}
    try:
        for name, cmd in (("stopped", ["wait", "stopped"]),
                          ("leader", ["wait", "leader"]),
                          ("watch", ["watch"])):
            procs[name] = subprocess.Popen(
                argv + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL, text=True, env=san_env())
        wait_for(lambda: count.others() >= 3, 10, "the three to subscribe")
        mark = len(n2.log_text())
        n2.signal(signal.SIGUSR2)
        wait_for(lambda: "resumed: follower" in n2.log_text()[mark:], 20,
                 "node2 to re-execute")
        assert n2.alive() and n2.pid == pid
        # The role wait goes on after the re-exec: node2 leads.
        assert n1.ctl("resign") == "ok\n"
        out, err = procs["leader"].communicate(timeout=30)
        assert procs["leader"].returncode == 0, (out, err)
        assert out.startswith("role=leader leader=node2 "), (out, err)
        # The daemon never stopped: neither did wait stopped, nor watch.
        for name in ("stopped", "watch"):
            assert procs[name].poll() is None, (
                f"zkelectctl {name} ended at the re-exec: "
                f"{procs[name].communicate()}")
        assert n2.stop() == 0
        out, err = procs["stopped"].communicate(timeout=30)
        assert procs["stopped"].returncode == 0, (out, err)
        assert out.startswith("role=stopped "), (out, err)
        out, err = procs["watch"].communicate(timeout=30)
        assert procs["watch"].returncode == 0, (out, err)
        lines = out.splitlines()
        # Every change once, the re-exec's new stream adding no line.
        check_watch_lines(lines, "zkelectctl watch")
        assert lines[0].startswith("role=follower leader=node1 ")
        assert any(l.startswith("role=leader leader=node2 ")
                   for l in lines), lines
        assert lines[-1].startswith("role=stopped "), lines
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()


# The client's answer timeout lowered for the test: a daemon silent this
# long is asked ping, and must answer within as long.
QUICK = "3s"


def ctl_quick(args, timeout=60):
    return zkelectctl(args, timeout, prefix=("env",
                                             f"ZKELECTCTL_TIMEOUT={QUICK}"))


def timed(f, *args):
    t0 = time.monotonic()
    r = f(*args)
    return r, time.monotonic() - t0


def test_switchover_resign_and_pause_wait_as_long_as_the_daemon_works(
        election):
    """switchover, resign and pause are answered once the election has
    done them, which takes as long as hooks take (a switchover's own
    deadline is hooks.timeout + 2 session timeouts, 50 s by default):
    zkelectctl's answer timeout (30 s, here $ZKELECTCTL_TIMEOUT) is only
    how long the daemon may stay silent, and a ping shows it is not stuck.
    Here each takes longer than that timeout: a leader's run process that
    ignores SIGTERM is killed only after run_stop_timeout, and a promote
    hook sleeps."""
    # The timeout is honoured: a socket that takes connections but never
    # answers, whose ping is not answered either.
    silent = election.dir / "silent.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(silent))
    listener.listen(16)
    try:
        for cmd, words in ((["ping"], ["within 3000 ms"]),
                           (["switchover", "node2"], ["ping", "3000 ms"])):
            try:
                r = ctl_quick(["-s", str(silent), *cmd], timeout=20)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"zkelectctl {cmd} to a silent socket with "
                    f"ZKELECTCTL_TIMEOUT={QUICK} still running after 20 s")
            assert r.returncode == 3, (cmd, r)
            for w in words:
                assert w in r.stderr, (cmd, r)
    finally:
        listener.close()

    ignore_term = election.dir / "run-ignore-term.sh"
    ignore_term.write_text("#!/bin/sh\ntrap '' TERM\nexec sleep 1000\n")
    ignore_term.chmod(0o755)
    n1, n2 = start_in_order(election, 2, options={
        "hooks.run": str(ignore_term), "hooks.run_stop_timeout": "5s"})

    # An explicit -t still bounds the whole wait; the resign goes on.
    r = zkelectctl(sock_args(n1) + ["-t", "1s", "resign"], timeout=30)
    assert r.returncode == 3 and "within 1000 ms" in r.stderr, r
    n2.wait_role("leader", 30)

    r, took = timed(ctl_quick, sock_args(n2) + ["resign"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    assert took > 3.0, f"resign answered in {took:.1f}s: no wait was shown"
    n1.wait_role("leader", 30)

    n2.hook_conf(promote_sleep=6)
    r, took = timed(ctl_quick, sock_args(n1) + ["switchover", "node2"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    assert took > 3.0, took
    # ok once node1 sees node2's E/leader; node2 says leader once its own
    # ack's reply is in, a moment later on a loaded machine.
    n2.wait_role("leader", 10)

    r, took = timed(ctl_quick, sock_args(n2) + ["pause"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", ""), r
    assert took > 3.0, took
    n2.wait_role("observer", 10)
    n1.wait_role("leader", 30)
    election.check_invariants()


def start_waiting(args):
    """zkelectctl args, running in the background."""
    return subprocess.Popen([str(binary("zkelectctl")), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=san_env(), stdin=subprocess.DEVNULL)


def answer_of(proc, timeout=30):
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if SAN:
        assert not san_findings(err), err
    return proc.returncode, out, err


# A session timeout long enough for a demote hook of seconds (the demote
# timeout is clamped to a quarter of it).
SLOW_DEMOTE = {"zookeeper.session_timeout": "12s"}


@pytest.mark.parametrize("cmd", ["resign", "pause"])
def test_resign_or_pause_under_way_at_a_stop_is_answered(election, cmd):
    """A SIGTERM that comes while a resign's or a pause's demote hook runs
    carries the ordered handoff to its end: the client that asked is
    answered ok, as the handoff it asked for was done (not left without an
    answer when the daemon exits)."""
    n1 = election.daemon("node1", data=data_of(1), options=SLOW_DEMOTE)
    n1.wait_role("leader", 15)
    n2 = election.daemon("node2", data=data_of(2))
    n2.wait_role("follower", 15)
    n1.hook_conf(demote_sleep=2.5)
    proc = start_waiting(sock_args(n1) + [cmd])
    try:
        n1.wait_role("demoting", 15)
        n1.signal(signal.SIGTERM)
        assert n1.wait_exit(30) == 0
    finally:
        rc, out, err = answer_of(proc)
    assert (rc, out, err) == (0, "ok\n", ""), (rc, out, err, n1.log_tail())
    n2.wait_role("leader", 30)
    election.check_invariants()


def test_resign_under_way_at_a_stop_without_zookeeper_is_refused(election):
    """The same stop with ZooKeeper out of reach once the demote hook runs:
    the daemon exits without its release (its node goes with the session's
    expiry), so the resign was not done: error shutdown, as a switchover
    cut short by a stop is answered."""
    p = ZkProxy(election.zk_hosts, name="proxy-node1")
    try:
        n1 = election.daemon("node1", data=data_of(1), options={
            **SLOW_DEMOTE, "zookeeper.hosts": p.hosts})
        n1.wait_role("leader", 15)
        n2 = election.daemon("node2", data=data_of(2))
        n2.wait_role("follower", 15)
        n1.hook_conf(demote_sleep=2.5)
        proc = start_waiting(sock_args(n1) + ["resign"])
        try:
            n1.wait_role("demoting", 15)
            p.freeze()
            p.cut()
            n1.signal(signal.SIGTERM)
            assert n1.wait_exit(30) == 0
        finally:
            rc, out, err = answer_of(proc)
        assert (rc, out, err) == (
            4, "", "zkelectctl: resign: error shutdown\n"), \
            (rc, out, err, n1.log_tail())
        n2.wait_role("leader", 40)
        election.check_invariants()
    finally:
        p.close()
