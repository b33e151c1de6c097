"""zkelectd's election as a user sees it: real daemons, a real ZooKeeper,
the control socket, the status file, the hooks and the ZooKeeper tree.

Every test waits for conditions with deadlines; the session timeout is
3 s (ZooKeeper's tickTime is 200 ms) so that crashes are noticed fast.
"""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from zkharness import (data_of, member_ids, start_in_order, wait_members,
                       RECORD_HOOK, STATUS_KEYS, HarnessError, ctl_request,
                       group_members, hook_runs, parse_kv, process_gone,
                       wait_for, zkelectctl)

CANDIDATE_RE = re.compile(r"^candidate-([0-9a-f]{16})_(\d{10})$")
RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
HOOK_VARS = ("ZKELECT_SERVICE", "ZKELECT_ID", "ZKELECT_EVENT", "ZKELECT_ROLE",
             "ZKELECT_REASON", "ZKELECT_EPOCH", "ZKELECT_LEADER",
             "ZKELECT_LEADER_DATA", "ZKELECT_DATA")
SIGKILL_DELAY = 5.0     # the contract's delay between SIGTERM and SIGKILL


def last_run(events, id, event, reason=None):
    runs = [r for r in hook_runs(events, id=id, event=event)
            if reason is None or r[0].reason == reason]
    assert runs, f"no {event} hook run of {id} (reason {reason}) in the history"
    return runs[-1]


def sid_matches(session_value, sid_hex):
    """The status file's session, hex (with or without 0x) or decimal,
    names the same session as a candidate znode's 16 hex digits."""
    v = session_value.strip().lower()
    want = int(sid_hex, 16)
    candidates = []
    if v.startswith("0x"):
        candidates.append(int(v, 16))
    else:
        for base in (16, 10):
            try:
                candidates.append(int(v, base))
            except ValueError:
                pass
    return want in candidates


def candidates_match(value, ids):
    """The status file's `candidates`: a count, or a list of the ids."""
    if value is None:
        return False
    if value.strip() == str(len(ids)):
        return True
    return sorted(w for w in re.split(r"[,\s]+", value) if w) == sorted(ids)


def settled_status(d, timeout=5, **expect):
    """The status file once it shows the expected values (a callable value
    is a predicate on the file's value)."""
    def ok(st, k, v):
        return v(st.get(k)) if callable(v) else st.get(k) == v

    def read():
        st = d.status()
        return st if all(ok(st, k, v) for k, v in expect.items()) else None
    try:
        return wait_for(read, timeout, f"{d.id} status file with {expect}")
    except HarnessError as e:
        raise HarnessError(f"{e}; file now: {d.status_file.read_text()!r}") from None


# ---------------------------------------------------------------- election

def test_three_daemons_elect_one_leader(election):
    daemons = start_in_order(election)
    n1 = daemons[0]

    infos = [d.leader() for d in daemons]
    epoch = infos[0].get("epoch", "")
    assert epoch.isdigit() and int(epoch) > 0, infos[0]
    for d, info in zip(daemons, infos):
        assert info == {"id": "node1", "data": n1.data, "epoch": epoch}, d.id
        assert d.role() == ("leader" if d is n1 else "follower")

    for d in daemons:
        members = d.members()
        assert [m[1] for m in members] == ["node1", "node2", "node3"], d.id
        assert [m[2] for m in members] == [data_of(i) for i in (1, 2, 3)]
        seqs = [int(m[0]) for m in members]
        assert seqs == sorted(set(seqs)), members

    for d in daemons:
        role = "leader" if d is n1 else "follower"
        st = settled_status(
            d, role=role, leader="node1",
            candidates=lambda v: candidates_match(v, ["node1", "node2", "node3"]))
        missing = [k for k in STATUS_KEYS if k not in st]
        assert not missing, f"{d.id} status file lacks {missing}"
        assert st["service"] == election.service
        assert st["id"] == d.id
        assert st["leader_data"] == n1.data
        assert st["epoch"] == epoch
        assert st["zk_state"] == "connected"
        assert st["session"]
        assert st["pid"] == str(d.pid)
        assert RFC3339_UTC.match(st["since"]), st["since"]
        assert RFC3339_UTC.match(st["updated"]), st["updated"]

        # The socket's `status` says what the file says.
        sock = parse_kv(d.ctl("status"))
        for k in STATUS_KEYS:
            if k != "updated":
                assert sock.get(k) == st[k], f"{d.id}: status {k}: socket " \
                    f"{sock.get(k)!r} file {st[k]!r}"

        # Shell-sourceable, as the contract promises.
        out = subprocess.run(
            ["/bin/sh", "-c", '. "$1" && printf "%s|%s|%s\\n" "$role" "$leader" "$epoch"',
             "sh", str(d.status_file)], capture_output=True, text=True, timeout=5)
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"{role}|node1|{epoch}\n"

    election.check_invariants()


def test_sigterm_leader_hands_off_to_next_in_queue(election):
    n1, n2, n3 = start_in_order(election)

    assert n1.stop() == 0
    assert n1.status()["role"] == "stopped"
    assert not n1.socket.exists(), "the socket file outlived the daemon"

    assert election.wait_one_leader() is n2
    assert n3.leader()["id"] == "node2"
    wait_members(n3, ["node2", "node3"])

    ev = election.with_log_ends(election.events())
    demote_start, demote_end = last_run(ev, "node1", "demote", "shutdown")
    assert demote_end is not None, "node1's shutdown demote did not finish"
    promote_start, _ = last_run(ev, "node2", "promote")
    assert promote_start.reason == "elected"
    assert promote_start.n > demote_end.n, (
        f"node2 promoted ({promote_start}) before node1's demote ended ({demote_end})")
    election.check_invariants()


def test_kill9_of_leader_successor_within_session_timeout(election, kz):
    """SIGKILL of the leader: the successor leads once ZooKeeper expires
    the old session, on the notification of the old node's deletion and
    without waiting for anything else. What is ours is counted from that
    deletion (seen by a watch of the test's own session): a successor
    that waited a further session timeout, or for a timer of its own,
    fails; how soon ZooKeeper expires the session is the server's."""
    n1, n2, n3 = start_in_order(election)
    old_epoch = int(n1.leader()["epoch"])
    timeout_s = election.session_timeout_ms / 1000
    first = min(kz.get_children(f"{election.path}/candidates"),
                key=lambda c: c.rsplit("_", 1)[1])
    gone = []
    assert kz.exists(f"{election.path}/candidates/{first}",
                     watch=lambda ev: gone.append(time.monotonic()))

    t0 = time.monotonic()
    n1.kill()
    n2.wait_role("leader", timeout=timeout_s + 10)
    led = time.monotonic()
    wait_for(lambda: gone, 5, "the watch on the old leader's node")
    print(f"successor led {led - t0:.2f}s after SIGKILL, "
          f"{led - gone[0]:.2f}s after the old node's deletion "
          f"(session timeout {timeout_s}s)")
    assert led - gone[0] < timeout_s, \
        (f"the successor led {led - gone[0]:.2f}s after the old node was "
         f"deleted (session timeout {timeout_s}s)")

    assert election.wait_one_leader() is n2
    assert int(n2.leader()["epoch"]) > old_epoch
    wait_members(n3, ["node2", "node3"])
    election.check_invariants()


def test_epoch_strictly_grows_across_leaderships(election):
    daemons = {d.id: d for d in start_in_order(election)}
    leaders = ["node1"]
    epochs = [int(daemons["node1"].leader()["epoch"])]

    # Three graceful handovers; each old leader comes back at the back.
    for _ in range(3):
        cur = daemons[leaders[-1]]
        assert cur.stop() == 0
        new = election.wait_one_leader()
        leaders.append(new.id)
        epochs.append(int(new.leader()["epoch"]))
        cur.start()
        cur.wait_role("follower")
    # And a crash.
    cur = daemons[leaders[-1]]
    cur.kill()
    new = election.wait_one_leader(timeout=election.session_timeout_ms / 1000 + 10)
    leaders.append(new.id)
    epochs.append(int(new.leader()["epoch"]))

    assert leaders == ["node1", "node2", "node3", "node1", "node2"], \
        "leadership did not follow the queue order"
    assert all(a < b for a, b in zip(epochs, epochs[1:])), epochs

    promotes = hook_runs(election.events(), event="promote")
    assert [int(s.epoch) for s, _ in promotes] == epochs, \
        "ZKELECT_EPOCH of the promote hooks differs from the socket's epochs"
    election.check_invariants()


def test_failed_promote_passes_leadership_on_and_rejoins_at_back(election):
    daemons = start_in_order(election, n=4, options={"hooks.retry_backoff": "500ms"})
    n1, n2, n3, n4 = daemons
    n2.hook_conf(promote_exit=1)

    assert n1.stop() == 0
    assert election.wait_one_leader(timeout=15) is n3
    wait_members(n3, ["node3", "node4", "node2"])
    n2.wait_role("follower")
    assert member_ids(n2) == ["node3", "node4", "node2"]

    ev = election.with_log_ends(election.events())
    p_start, p_end = last_run(ev, "node2", "promote")
    assert p_end is not None
    d_start, d_end = last_run(ev, "node2", "demote")
    assert d_start.reason == "promote-failed"
    assert d_start.n > p_end.n and d_end is not None
    n3_start, _ = last_run(ev, "node3", "promote")
    assert n3_start.n > d_end.n, "node3 promoted before node2's demote ended"
    assert int(n3_start.epoch) > int(p_start.epoch)
    election.check_invariants()


def hang_promote(election, hook_timeout):
    """node1 leads, node2's promote hook hangs (ignoring SIGTERM, with two
    `sleep 1000` children), node1 stops. Returns node2, node3, the hook's
    start Event and the wall-clock time its processes were last seen."""
    daemons = start_in_order(election, options={
        "hooks.timeout": f"{int(hook_timeout * 1000)}ms",
        "hooks.retry_backoff": "500ms"})
    n1, n2, n3 = daemons
    n2.hook_conf(promote_hang=1)

    assert n1.stop() == 0
    pgid, pids = wait_for(n2.hang_pids, 15, "node2's hanging promote hook")
    hang_start, _ = last_run(election.events(), "node2", "promote")
    assert all(not process_gone(p) for p in pids), "the hook did not hang"
    deadline = hang_start.ts + hook_timeout + SIGKILL_DELAY + 2.0

    last_alive = [time.time()]

    def all_gone():
        # The time is taken before the look: a process found alive was
        # alive at that time or later. (Taken after it, a stall of this
        # process between the two would date the sighting too late.)
        t = time.time()
        left = group_members(pgid) + [p for p in pids if not process_gone(p)]
        if left:
            last_alive[0] = t
        return not left
    try:
        wait_for(all_gone, max(0.1, deadline - time.time()),
                 f"hook group {pgid} ({pids}) to be killed")
    except HarnessError:
        for p in pids:
            if not process_gone(p):
                os.kill(p, signal.SIGKILL)
        raise
    print(f"hook processes gone {last_alive[0] - hang_start.ts:.2f}s after "
          f"the hook started (timeout {hook_timeout}s + SIGKILL {SIGKILL_DELAY}s)")
    return n2, n3, hang_start, last_alive[0]


def test_hung_promote_hook_is_killed_with_its_children(election):
    n2, n3, hang_start, _ = hang_promote(election, hook_timeout=1.0)

    assert election.wait_one_leader(timeout=15) is n3
    ev = election.with_log_ends(election.events())
    d_start, d_end = last_run(ev, "node2", "demote")
    assert d_start.reason == "promote-failed"
    assert d_start.n > hang_start.n
    n3_start, _ = last_run(ev, "node3", "promote")
    assert d_end is not None and n3_start.n > d_end.n
    election.check_invariants(allow_unfinished={("node2", "promote")})


def test_hung_promote_hook_is_gone_before_demote_runs(election):
    """Hooks never run concurrently: the demote after a timed-out promote
    (and so the next leader's promote) waits until the promote hook's
    processes are gone, not only its shell."""
    n2, n3, hang_start, last_alive = hang_promote(election, hook_timeout=1.0)
    assert election.wait_one_leader(timeout=15) is n3
    d_start, _ = last_run(election.events(), "node2", "demote")
    assert d_start.ts > last_alive, (
        f"node2's demote hook started {last_alive - d_start.ts:.2f}s before "
        f"its timed-out promote hook's processes were gone")


def test_hook_environment_and_demote_on_start(election):
    # T = 8 s gives each demote hook 2 s (T/4): at T = 3 s a loaded
    # machine's record.sh outlasted its 750 ms, and the startup demote
    # this test reads was killed before it wrote its environment.
    roomy = {"zookeeper.session_timeout": "8000ms"}
    n1 = election.daemon("node1", data=data_of(1), options=roomy)
    n1.wait_role("leader")
    n2 = election.daemon("node2", data=data_of(2), options=roomy)
    n2.wait_role("follower")
    n3 = election.daemon("node3", data=data_of(3),
                         options={"hooks.demote_on_start": "no", **roomy})
    n3.wait_role("follower")
    epoch1 = n1.leader()["epoch"]

    assert n1.stop() == 0
    assert election.wait_one_leader() is n2
    epoch2 = n2.leader()["epoch"]

    def check(env, **want):
        missing = [v for v in HOOK_VARS if v not in env]
        assert not missing, f"hook environment lacks {missing}: {env}"
        for k, v in want.items():
            name = f"ZKELECT_{k.upper()}"
            if isinstance(v, tuple):
                assert env[name] in v, f"{name}={env[name]!r}, want one of {v}"
            else:
                assert env[name] == v, f"{name}={env[name]!r}, want {v!r}"

    common1 = dict(service=election.service, id="node1", data=data_of(1))
    runs1 = n1.hook_env_runs()
    assert [e for e, _ in runs1] == ["demote", "promote", "demote"], runs1
    check(runs1[0][1], event="demote", reason="startup", **common1)
    check(runs1[1][1], event="promote", role="leader", reason="elected",
          epoch=epoch1, leader="node1", leader_data=data_of(1), **common1)
    check(runs1[2][1], event="demote", reason="shutdown", epoch=epoch1,
          role=("follower", "stopped"), **common1)

    runs2 = n2.hook_env_runs()
    assert [e for e, _ in runs2] == ["demote", "promote"], runs2
    common2 = dict(service=election.service, id="node2", data=data_of(2))
    check(runs2[0][1], event="demote", reason="startup", **common2)
    check(runs2[1][1], event="promote", role="leader", reason="elected",
          epoch=epoch2, leader="node2", leader_data=data_of(2), **common2)

    assert n3.hook_env_runs() == [], "demote_on_start=no still ran a hook"
    election.check_invariants()


def test_plain_hook_runs_without_a_shell(election):
    """A hook line of plain words, the first a path, is exec'd by zkelectd
    itself (the hook's parent is the daemon, its words as written, PWD set
    as the shell would); one with shell syntax still goes through /bin/sh
    -c, and a program the kernel will not run fails as the shell says."""
    out = election.dir / "parents"
    script = election.dir / "parent.sh"
    # No fork in it (read, not cat): a loaded machine must not make the
    # demote outlast its budget (562 ms) before its line is written.
    script.write_text(
        "#!/bin/sh\n"
        "read -r comm < /proc/$PPID/comm\n"
        f"echo \"$1 $comm $2 ${{PWD:+pwd}}\" >> {out}\n")
    script.chmod(0o755)
    n1 = election.daemon("node1", hooks=False, options={
        "hooks.promote": f"{script} promote a=b,c",
        "hooks.demote": f"{script} 'demote' \"x y\"",
    })
    n1.wait_role("leader")
    assert n1.stop() == 0
    lines = out.read_text().splitlines()
    assert lines == ["demote sh x y pwd", "promote zkelectd a=b,c pwd",
                     "demote sh x y pwd"], lines


def test_plain_hook_the_kernel_refuses_fails_as_in_the_shell(election):
    missing = election.dir / "no-such-hook"
    n1 = election.daemon("node1", hooks=False, options={
        "hooks.promote": f"{missing} promote",
    })
    want = re.compile(r"hook promote\[\d+\]: sh: 1: \S*no-such-hook: not "
                      r"found\n(.*\n)*.*promote.*(127|exit)")
    deadline = time.monotonic() + 15
    while not want.search(n1.log_text()):
        assert time.monotonic() < deadline, n1.log_text()[-3000:]
        time.sleep(0.1)
    assert n1.role() != "leader"


# ---------------------------------------------------------------- the tree

def candidates(kz, election):
    """{id: (name, sid_hex, seq, data dict, stat)} of the candidate znodes."""
    base = f"{election.path}/candidates"
    out = {}
    for name in kz.get_children(base):
        m = CANDIDATE_RE.match(name)
        assert m, f"bad candidate znode name {name!r}"
        raw, stat = kz.get(f"{base}/{name}")
        text = raw.decode()
        data = parse_kv(text)
        assert text == f"id={data.get('id')}\ndata={data.get('data')}\n", \
            f"candidate {name} data {text!r}"
        assert stat.ephemeralOwner == int(m.group(1), 16), \
            f"{name} is not owned by the session it names"
        assert data["id"] not in out, f"two candidate znodes for {data['id']}"
        out[data["id"]] = (name, m.group(1), int(m.group(2)), data, stat)
    return out


def leader_znode(kz, election, name="leader"):
    got = kz.exists(f"{election.path}/{name}")
    if not got:
        return None, None
    raw, stat = kz.get(f"{election.path}/{name}")
    return parse_kv(raw.decode()), stat


def test_zookeeper_tree(election, kz):
    fence = {"hooks.fence": f"{RECORD_HOOK} fence"}
    n1, n2, n3 = start_in_order(election, options=fence)
    epoch1 = n1.leader()["epoch"]

    cands = candidates(kz, election)
    assert sorted(cands) == ["node1", "node2", "node3"]
    for d in (n1, n2, n3):
        name, sid, seq, data, stat = cands[d.id]
        assert data == {"id": d.id, "data": d.data}
        assert sid_matches(d.status()["session"], sid), \
            f"{d.id}: status session {d.status()['session']!r} vs znode {name}"
    assert [i for i, *_ in sorted(cands.items(), key=lambda kv: kv[1][2])] == \
        ["node1", "node2", "node3"]

    lead, lstat = leader_znode(kz, election)
    assert lead == {"id": "node1", "data": n1.data, "epoch": epoch1}
    assert lstat.ephemeralOwner == cands["node1"][4].ephemeralOwner
    assert int(epoch1) == cands["node1"][4].czxid, \
        "epoch is not the czxid of the leader's candidate znode"
    crumb, cstat = leader_znode(kz, election, "breadcrumb")
    assert crumb == lead
    assert cstat.ephemeralOwner == 0, "breadcrumb must be persistent"

    events = []
    kz.exists(f"{election.path}/breadcrumb", watch=events.append)
    assert n1.stop() == 0
    assert election.wait_one_leader() is n2
    epoch2 = n2.leader()["epoch"]
    wait_for(lambda: events, 5, "a watch event on the breadcrumb")
    assert events[0].type == "DELETED", f"breadcrumb was not deleted: {events[0]}"

    cands = wait_for(lambda: (c := candidates(kz, election)) and len(c) == 2 and c,
                     5, "two candidate znodes")
    assert sorted(cands) == ["node2", "node3"]
    lead, _ = leader_znode(kz, election)
    assert lead == {"id": "node2", "data": n2.data, "epoch": epoch2}
    assert int(epoch2) == cands["node2"][4].czxid
    crumb, cstat2 = wait_for(
        lambda: (b := leader_znode(kz, election, "breadcrumb"))[0] and b,
        5, "the new leader's breadcrumb")
    assert crumb == lead
    assert cstat2.czxid > cstat.czxid
    assert not hook_runs(election.events(), event="fence"), \
        "a graceful handoff must not fence"
    election.check_invariants()


def test_fence_runs_after_leader_crash(election, kz):
    fence = {"hooks.fence": f"{RECORD_HOOK} fence"}
    n1, n2, n3 = start_in_order(election, options=fence)
    epoch1 = n1.leader()["epoch"]
    n1.kill()
    assert election.wait_one_leader(timeout=election.session_timeout_ms / 1000 + 10) is n2

    ev = election.events()
    f_start, f_end = last_run(ev, "node2", "fence")
    p_start, _ = last_run(ev, "node2", "promote")
    assert f_end is not None and f_end.n < p_start.n
    fence_env = [env for e, env in n2.hook_env_runs() if e == "fence"]
    assert len(fence_env) == 1
    env = fence_env[0]
    assert env.get("ZKELECT_FENCE_ID") == "node1"
    assert env.get("ZKELECT_FENCE_DATA") == n1.data
    assert env.get("ZKELECT_FENCE_EPOCH") == epoch1
    crumb, _ = leader_znode(kz, election, "breadcrumb")
    assert crumb["id"] == "node2"
    election.check_invariants()


def test_a_release_deletes_the_breadcrumb_at_the_version_its_ack_left(
        election, kz):
    """A new leader's ack writes over a crashed leader's breadcrumb (a set
    in its multi), and the version that set left comes back in the multi's
    reply (its SetDataResult's Stat, which zk.c asks the library for): the
    release deletes the breadcrumb at that version, once. Counted up from
    the leader's read instead, it was wrong when a write by hand fell
    between the read and the ack (the campaign's seed 1049029296 -k 2000
    -H), and every release of that leadership was refused, read and sent
    again."""
    opts = {"control.log_level": "debug"}
    n1, n2 = start_in_order(election, n=2, options=opts)
    n1.kill()
    assert election.wait_one_leader(
        timeout=election.session_timeout_ms / 1000 + 10) is n2
    crumb, st = leader_znode(kz, election, "breadcrumb")
    assert crumb["id"] == "node2" and st.version >= 1, (crumb, st)
    wait_for(lambda: f"election request ack: ok, its last set left version "
             f"{st.version}" in n2.log_text(), 5, "the version in the reply")
    mark = len(n2.log_text())
    # A pause, not a resign: the only candidate left would lead again at
    # once and write a new breadcrumb, a window a poll may miss.
    assert n2.ctl("pause", timeout=20).strip() == "ok"
    wait_for(lambda: kz.exists(f"{election.path}/breadcrumb") is None, 10,
             "the release to delete the breadcrumb")
    assert "release: bad version" not in n2.log_text()[mark:]
    election.check_invariants()


def test_release_without_node_or_claim_leaves_the_breadcrumb(election, kz):
    """An administrator deletes the leader's candidate node and its claim
    in one transaction. The leader demotes (node-deleted) and releases
    E/leader, but leaves E/breadcrumb: with neither the node nor the claim
    it was written under in the release, nothing in it shows that no one
    else has led since the breadcrumb was read (the simulator's campaign,
    seed 1001698419: a release that stalled after that read deleted a
    successor's breadcrumb, made again at version 0). So the next leader
    fences it, as after a crash."""
    fence = {"hooks.fence": f"{RECORD_HOOK} fence"}
    n1, n2, n3 = start_in_order(election, options=fence)
    epoch1 = n1.leader()["epoch"]
    name, sid, *_ = candidates(kz, election)["node1"]
    claims = f"{election.path}/claims"
    claim = [c for c in kz.get_children(claims) if c.startswith(f"claim-{sid}_")]
    assert len(claim) == 1, f"node1's claims: {claim}"
    before = len(election.events())
    t = kz.transaction()
    t.delete(f"{election.path}/candidates/{name}")
    t.delete(f"{claims}/{claim[0]}")
    assert all(r is True for r in t.commit()), "the administrator's delete"

    # Until node1 hears of the delete, all three still agree that it leads.
    n2.wait_role("leader", timeout=20)
    assert election.wait_one_leader(timeout=20) is n2
    ev = election.with_log_ends(election.events())
    d_start, d_end = last_run(ev, "node1", "demote")
    assert d_start.n > before and d_start.reason == "node-deleted", d_start
    f_start, f_end = last_run(ev, "node2", "fence")
    assert f_start is not None, "node2 promoted without fencing node1"
    assert d_end.n < f_start.n and f_end.n < last_run(ev, "node2", "promote")[0].n
    fence_env = [env for e, env in n2.hook_env_runs() if e == "fence"]
    assert [(e.get("ZKELECT_FENCE_ID"), e.get("ZKELECT_FENCE_EPOCH"))
            for e in fence_env] == [("node1", epoch1)]
    election.check_invariants()


# ---------------------------------------------------------------- clients

def test_zkelectctl(election):
    n1 = election.daemon("node1", data=data_of(1))
    n1.wait_role("leader")
    n2 = election.daemon("node2", data=data_of(2))
    n2.wait_role("follower")
    s1, s2 = ["-s", str(n1.socket)], ["-s", str(n2.socket)]

    r = zkelectctl(s1 + ["role"])
    assert (r.returncode, r.stdout) == (0, "leader\n"), r
    r = zkelectctl(s2 + ["role"])
    assert (r.returncode, r.stdout) == (0, "follower\n"), r
    r = zkelectctl(s1 + ["status"])
    assert r.returncode == 0, r
    st = parse_kv(r.stdout)
    assert (st["role"], st["leader"], st["id"]) == ("leader", "node1", "node1")
    r = zkelectctl(s2 + ["leader"])
    assert r.returncode == 0, r
    assert parse_kv(r.stdout) == {"id": "node1", "data": data_of(1),
                                  "epoch": n1.leader()["epoch"]}
    r = zkelectctl(s2 + ["members"])
    assert r.returncode == 0, r
    rows = [l.split("\t") for l in r.stdout.splitlines()]
    assert [row[1:] for row in rows] == [["node1", data_of(1)], ["node2", data_of(2)]]

    assert zkelectctl(s1 + ["is-leader"]).returncode == 0
    assert zkelectctl(s2 + ["is-leader"]).returncode == 1
    r = zkelectctl(s2 + ["resign"])
    assert r.returncode == 4, f"resign on a follower: {r}"

    missing = n1.dir / "nonexistent.sock"
    r = zkelectctl(["-s", str(missing), "role"])
    assert r.returncode == 3, r
    r = zkelectctl(["-n", election.service + "-none", "role"])
    assert r.returncode == 3, r


def test_zkelectctl_by_service_name(election):
    # /run/zkelectd is shared with any other run of the suite on this
    # machine, so it is never removed: a concurrent run's daemon may be
    # between making it and binding its socket in it. (An empty directory
    # is what the daemon itself leaves, and /run is gone at reboot.)
    rundir = Path("/run/zkelectd")
    rundir.mkdir(parents=True, exist_ok=True)
    try:
        d = election.daemon("node1", socket_path="default")
        assert d.socket == rundir / f"{election.service}.sock"
        d.wait_role("leader")
        r = zkelectctl(["-n", election.service, "role"])
        assert (r.returncode, r.stdout) == (0, "leader\n"), r
        assert zkelectctl(["-n", election.service, "is-leader"]).returncode == 0
        assert d.stop() == 0
        assert not d.socket.exists()
        r = zkelectctl(["-n", election.service, "role"])
        assert r.returncode == 3, r
    finally:
        for d in election.daemons.values():
            d.stop()
        Path(rundir / f"{election.service}.sock").unlink(missing_ok=True)


def test_control_socket_basics(election):
    d = election.daemon("node1", data=data_of(1))
    d.wait_role("leader")
    assert d.ctl("ping") == "pong\n"
    assert d.ctl("no-such-command") == "error unknown-command\n"
    assert d.ctl("role", half_close=True) == "leader\n"
    assert d.ctl("ping", half_close=True) == "pong\n"
    assert d.ctl("version").strip()
    answer = ctl_request(d.socket, "x" * 2000)
    assert answer == "error line-too-long\n"
    # The daemon still answers afterwards.
    assert d.ctl("ping") == "pong\n"
