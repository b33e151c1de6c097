"""Hostile input from ZooKeeper: what peers wrote is untrusted and shown
under one rule (control bytes and invalid UTF-8 replaced) by every output."""
import grp
import json
import os
import random
import re
import signal
import socket
import stat
import subprocess
import threading
import time

from zkharness import (binary, ctl_request_raw, hook_runs, parse_kv,
                       wait_for)

BAD = re.compile(r"[\x00-\x1f\x7f-\x9f]")

HOSTILE_ID = b"ev\til\x1b[31m\r\x07\xff\xfe\xc3\xa9"
HOSTILE_DATA = b"d\tata\x1b]0;pwned\x07 \xc3\x28 \xe2\x82\xac"


def plant_hostile_leader(kz, path):
    """A kazoo session that heads the queue and acknowledges itself leader
    with hostile id and data, as a buggy or malicious peer could."""
    kz.ensure_path(f"{path}/candidates")
    sid = kz.client_id[0]
    me = kz.create(f"{path}/candidates/candidate-{sid:016x}_",
                   b"id=" + HOSTILE_ID + b"\ndata=" + HOSTILE_DATA + b"\n",
                   ephemeral=True, sequence=True)
    _, st = kz.get(me)
    kz.create(f"{path}/leader", b"id=" + HOSTILE_ID + b"\ndata=" +
              HOSTILE_DATA + b"\nepoch=" + str(st.czxid).encode() + b"\n",
              ephemeral=True)
    return st.czxid


def ask(d, cmd, timeout=5.0):
    """The raw answer: bytes, so that invalid UTF-8 would show."""
    return ctl_request_raw(d.socket, cmd, timeout)


def clean_text(raw, seps="\n"):
    """raw decodes as UTF-8 (strictly) and has no control character but
    the separators."""
    text = raw.decode("utf-8")
    for c in seps:
        text = text.replace(c, "")
    assert not BAD.search(text), raw
    return raw.decode("utf-8")


def test_peer_data_is_cleaned_in_every_output(election, kz):
    epoch = plant_hostile_leader(kz, election.path)
    d = election.daemon("node1", data="10.0.0.1:5432")
    d.wait_role("follower")
    want_id = "ev?il?[31m????\u00e9"
    want_data = "d?ata?]0;pwned? ?( \u20ac"
    wait_for(lambda: d.leader().get("id") == want_id, 10,
             "node1 to report the planted leader, cleaned")

    assert parse_kv(clean_text(ask(d, "leader"))) == {
        "id": want_id, "data": want_data, "epoch": str(epoch)}

    # members: three tab-separated fields on every line.
    lines = clean_text(ask(d, "members"), "\n\t").splitlines()
    assert [line.split("\t")[1:] for line in lines] == [
        [want_id, want_data], ["node1", "10.0.0.1:5432"]], lines
    # members json: the same queue, strict JSON.
    arr = json.loads(clean_text(ask(d, "members json")))
    assert [[str(m["seq"]), m["id"], m["data"]] for m in arr] == \
        [line.split("\t") for line in lines], arr
    assert [m["priority"] for m in arr] == [0, 0], arr

    # status and status json.
    st = parse_kv(clean_text(ask(d, "status")))
    assert st["leader"] == want_id and st["leader_data"] == want_data, st
    st = json.loads(clean_text(ask(d, "status json")))
    assert st["leader"] == want_id and st["leader_data"] == want_data, st

    # The status file: sourceable lines, nothing a terminal would obey.
    body = clean_text(d.status_file.read_bytes())
    assert all(re.match(r"^[a-z_]+=", line) for line in body.splitlines())
    out = subprocess.run(["sh", "-c", f". {d.status_file}; printf %s "
                          "\"$leader\""], capture_output=True, check=True)
    assert out.stdout.decode() == want_id

    # The first watch line.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(d.socket))
        s.sendall(b"watch\n")
        line = s.recv(4096)
    assert clean_text(line).startswith(f"role=follower leader={want_id} ")
    assert d.role() == "follower"


def test_a_forged_epoch_is_not_taken_for_a_number(election, kz):
    """E/leader's epoch= is untrusted: a value too large for any czxid is
    no epoch (0), not clamped to INT64_MAX as if it were a fencing token
    (a reviewer's forged breadcrumb reached a fence hook that way)."""
    path = election.path
    kz.ensure_path(f"{path}/candidates")
    sid = kz.client_id[0]
    kz.create(f"{path}/candidates/candidate-{sid:016x}_", b"id=forger\n",
              ephemeral=True, sequence=True)
    kz.create(f"{path}/leader", b"id=forger\ndata=x\n"
              b"epoch=999999999999999999999\n", ephemeral=True)
    d = election.daemon("node1")
    d.wait_role("follower")
    wait_for(lambda: d.leader().get("id") == "forger", 10,
             "node1 to report the planted leader")
    assert d.leader()["epoch"] in ("", "0"), d.leader()
    assert d.status()["epoch"] in ("", "0"), d.status()


def test_socket_rights_never_follow_a_link(tmp_path):
    """The socket gets its mode from the umask at bind and its group
    without following links: no chmod or chown by a path that a symlink
    could replace (seen with strace), and the result is exact."""
    sd = tmp_path / "run"
    sock = sd / "s.sock"
    conf = tmp_path / "z.conf"
    conf.write_text("[zookeeper]\nhosts = 127.0.0.1:1\n"
                    "[election]\nservice = hostile\nid = n1\n"
                    f"[control]\nsocket = {sock}\n"
                    f"status_file = {tmp_path / 'status'}\n"
                    "socket_mode = 0640\nsocket_group = nogroup\n"
                    "[hooks]\ndemote_on_start = no\n")
    trace = tmp_path / "trace"
    p = subprocess.Popen(
        ["strace", "-f", "-qq", "-o", str(trace), "-e",
         "trace=chmod,fchmodat,chown,fchownat,lchown,umask,bind",
         str(binary("zkelectd")), "-c", str(conf)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        # Listening (so past the bind, the mode and the group): it answers.
        wait_for(lambda: _ping(sock), 15, "the socket to answer")
        st = os.lstat(sock)
        assert stat.S_ISSOCK(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o640, oct(st.st_mode)
        assert st.st_gid == grp.getgrnam("nogroup").gr_gid
    finally:
        os.killpg(p.pid, signal.SIGTERM)     # strace and zkelectd
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(20)
    calls = [line for line in trace.read_text().splitlines()
             if str(sock) in line]
    assert any("bind(" in c for c in calls), calls
    for c in calls:
        if "chmod" in c:
            raise AssertionError(f"the socket's mode set by path: {c}")
        if "chown" in c and not ("lchown(" in c or
                                 "AT_SYMLINK_NOFOLLOW" in c):
            raise AssertionError(f"the socket's group set through links: {c}")


def _ping(path):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(str(path))
            s.sendall(b"ping\n")
            return s.recv(64) == b"pong\n"
    except OSError:
        return False


def test_status_file_never_writes_through_a_symlink(election, tmp_path):
    """A symlink planted at <status_file>.tmp (in a directory others can
    write) never gets the daemon to write its target."""
    d = election.daemon("node1", start=False)
    victim = tmp_path / "secret"
    victim.write_text("precious\n")
    tmp = d.status_file.with_name(d.status_file.name + ".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, tmp)
    d.start()
    d.wait_role("leader")
    assert d.ctl("resign") == "ok\n"
    d.wait_role("leader")
    assert victim.read_text() == "precious\n"
    assert d.status()["role"] == "leader"
    assert not os.path.islink(d.status_file)


def test_deepest_root_works(election, kz):
    """The deepest root the configuration accepts (13 components) leads;
    one more is refused when the file is read (a deeper one made the core
    ask for its parents at full speed forever)."""
    root = "/" + "/".join(f"r{i}" for i in range(13))
    d = election.daemon("node1", options={"zookeeper.root": root})
    d.wait_role("leader")
    assert kz.exists(f"{root}/{election.service}/leader")
    r = subprocess.run([str(binary("zkelectd")), "-t", "-c", str(d.conf_path),
                        "-o", f"zookeeper.root={root}/r13"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "zookeeper.root: has more than 13 path components" in r.stderr, r


def wait_logged(d, text, timeout=10):
    wait_for(lambda: text in d.log_text(), timeout, f"{d.id} to log {text!r}")


def test_an_ephemeral_node_on_the_root_s_path_is_named(election, kz):
    """zookeeper.root under an ephemeral node: no parent can be made
    there, ever. The election waits, and says why once, at err and in
    last_error, where it used to retry in silence."""
    eph = f"/{election.path.strip('/').replace('/', '-')}-eph"
    kz.create(eph, b"", ephemeral=True)
    d = election.daemon("node1", options={"zookeeper.root": f"{eph}/x",
                                          "hooks.demote_on_start": "no"})
    wait_logged(d, "(ZNOCHILDRENFOREPHEMERALS)")
    assert "ZNOCHILDRENFOREPHEMERALS" in d.status()["last_error"]
    time.sleep(2.5)     # retries would log it again: they must not
    assert d.log_text().count("(ZNOCHILDRENFOREPHEMERALS)") == 1
    assert d.role() == "unknown"


def test_persistent_node_at_the_head_is_named(election, kz):
    """A persistent node named like a candidate heads the queue: the
    election waits behind it (it may be someone's), and says so once."""
    kz.ensure_path(f"{election.path}/candidates")
    junk = kz.create(f"{election.path}/candidates/candidate-{0:016x}_",
                     b"id=junk\n", sequence=True)
    # No startup demote: one killed at its timeout by a stalled machine
    # would be the last error instead of the queue's.
    d = election.daemon("node1",
                        options={"hooks.demote_on_start": "no"})
    wait_logged(d, f"{junk} is not ephemeral")
    d.wait_role("follower")
    assert f"{junk} is not ephemeral" in d.status()["last_error"]
    time.sleep(2.5)     # retries would log it again: they must not
    assert d.log_text().count(f"{junk} is not ephemeral") == 1
    assert d.role() == "follower"
    kz.delete(junk)
    d.wait_role("leader")


def test_persistent_leader_node_is_named(election, kz):
    kz.ensure_path(f"{election.path}/candidates")
    kz.create(f"{election.path}/leader", b"id=ghost\ndata=\nepoch=1\n")
    d = election.daemon("node1")
    wait_logged(d, f"{election.path}/leader is not ephemeral")
    assert d.role() != "leader"
    kz.delete(f"{election.path}/leader")
    d.wait_role("leader")


def test_root_without_rights_is_named(election, kz):
    from kazoo.security import make_acl
    root = f"/ro-{election.service}"
    kz.create(root, b"", acl=[make_acl("world", "anyone", read=True)])
    d = election.daemon("node1", options={"zookeeper.root": root})
    wait_logged(d, "(ZNOAUTH)")
    # The status file is written after the step that logged it.
    wait_for(lambda: "ZNOAUTH" in d.status()["last_error"], 10,
             "the status's last_error to name ZNOAUTH")
    # Retried at a pause, not at full speed (the keepalive syncs aside:
    # they go on their own schedule, a report lag apart).
    time.sleep(3)
    m = parse_metrics_total(d.ctl("metrics"))
    assert m < 20, f"{m} requests to ZooKeeper in about 3 s"
    assert d.role() in ("unknown", "follower")


def parse_metrics_total(text):
    """The sum of zkelectd_zookeeper_requests_total over its ops, but
    the keepalive sync."""
    total = 0
    for line in text.splitlines():
        if line.startswith("zkelectd_zookeeper_requests_total{") and \
                'op="sync"' not in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def test_hooks_do_not_inherit_what_systemd_gave_the_daemon(election, tmp_path):
    """NOTIFY_SOCKET, the watchdog's and the journal's variables are the
    daemon's: a hook with them could speak to systemd in its place."""
    dump = tmp_path / "env"
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(str(tmp_path / "notify.sock"))
    try:
        d = election.daemon("node1", env={
            "NOTIFY_SOCKET": str(tmp_path / "notify.sock"),
            "WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "1",
            "JOURNAL_STREAM": "8:12345", "ZKT_KEEP": "kept"},
            options={"hooks.promote": f"env > {dump}"})
        d.wait_role("leader")
        wait_for(lambda: dump.exists() and "ZKELECT_EVENT=promote" in
                 dump.read_text(), 10, "the promote hook's environment")
        env = dict(line.split("=", 1) for line in
                   dump.read_text().splitlines() if "=" in line)
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                     "JOURNAL_STREAM"):
            assert name not in env, (name, env.get(name))
        assert env.get("ZKT_KEEP") == "kept"    # the rest is inherited
    finally:
        ns.close()


def test_descriptor_limit_keeps_room_for_hooks(election):
    """Under an open-files limit of 64, max_clients is lowered to what
    fits beside what hooks and ZooKeeper need; 80 clients held open never
    stop a demote and a promote."""
    a = election.daemon("node1", start=False)
    a.wrapper = ["prlimit", "--nofile=64:64", "--"]
    a.start()
    a.wait_role("leader")
    # 64 less 44 kept: 32, and 12 for pipes that hooks' leftovers hold.
    wait_logged(a, "serving at most 20 control clients")
    b = election.daemon("node2")
    b.wait_role("follower")
    held = []
    try:
        for _ in range(80):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(str(a.socket))
            held.append(s)
        # A command still gets a slot (an idle client gives its own).
        assert a.ctl("role") == "leader\n"
        assert a.ctl("resign") == "ok\n"
        b.wait_role("leader")
        a.wait_role("follower")
        assert b.ctl("resign") == "ok\n"
        a.wait_role("leader")
    finally:
        for s in held:
            s.close()
    assert "Too many open files" not in a.log_text()
    runs = [(start.event, start.reason, end is not None)
            for start, end in hook_runs(election.events(), id="node1")]
    assert ("demote", "resign", True) in runs, runs
    assert runs[-1][:1] == ("promote",), runs


def test_leader_spoofing_is_not_believed(election, kz):
    """Anyone who can write E/leader: the leader keeps reporting itself and
    writes its own data back; a follower shows nothing from a session that
    holds no node before its own."""
    a = election.daemon("node1", data="10.0.0.1:1")
    a.wait_role("leader")
    b = election.daemon("node2")
    b.wait_role("follower")
    mine = a.leader()
    assert mine["id"] == "node1" and mine["epoch"] not in ("", "0")
    lp = f"{election.path}/leader"

    kz.set(lp, b"id=fake\ndata=evil\nepoch=0\n")
    assert a.leader() == mine
    assert a.role() == "leader"
    wait_for(lambda: kz.get(lp)[0].startswith(b"id=node1\n"), 10,
             "the leader to write its E/leader back")
    wait_for(lambda: b.leader() == mine, 10, "node2 to see node1 again")

    # A stranger's session takes E/leader while node1 is frozen: node2
    # shows nothing from it, and says why.
    a.signal(signal.SIGSTOP)
    try:
        wait_for(lambda: _replace(kz, lp), 10, "a stranger's E/leader")
        wait_logged(b, "which had no candidate node before ours")
        assert b.leader() == {"id": "", "data": "", "epoch": ""}
        assert "no candidate node before ours" in b.status()["last_error"]
    finally:
        a.signal(signal.SIGCONT)


def _replace(kz, lp):
    """Deletes E/leader and makes one owned by kz's session."""
    from kazoo.exceptions import NoNodeError, NodeExistsError
    try:
        kz.delete(lp)
    except NoNodeError:
        pass
    try:
        kz.create(lp, b"id=stranger\ndata=\nepoch=1\n", ephemeral=True)
    except NodeExistsError:
        return False
    return True


ROLE_WORDS = {"leader", "follower", "promoting", "demoting", "observer",
              "unknown", "stopped"}


def test_hostile_clients_never_stall_commands_or_the_election(election):
    """Random payloads, slow clients, watchers that never read and a flood
    of idle connections on the node that must take over, while another
    client's role queries keep being answered and a failover happens.
    (How fast the queries are answered is measured by bench/hostile/.)"""
    n1 = election.daemon("node1")
    n1.wait_role("leader")
    n2 = election.daemon("node2")
    n2.wait_role("follower")
    path = str(n2.socket)
    stop = threading.Event()
    errors, answers, lat = [], [], []

    def conn(timeout=10):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(path)
        return s

    def drain(s):
        data = b""
        try:
            while (b := s.recv(65536)):
                data += b
        except (ConnectionResetError, socket.timeout):
            pass
        return data

    def random_payloads(seed):
        rng = random.Random(seed)
        while not stop.is_set():
            s = conn()
            try:
                n = rng.choice([0, 1, 10, 200, 1023, 1024, 1025, 3000])
                body = bytes(rng.randrange(256) for _ in range(n))
                if rng.random() < 0.5:
                    body += b"\n"
                try:
                    s.sendall(body)
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                drain(s)
            except OSError as e:
                errors.append(f"random payload: {e!r}")
            finally:
                s.close()

    def slow_client():
        while not stop.is_set():
            s = conn()
            try:
                try:
                    for b in b"role\n":
                        s.sendall(bytes([b]))
                        time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    pass    # evicted for a newcomer: told so, see below
                got = drain(s).decode(errors="replace").strip()
                if got not in ROLE_WORDS and got != "error too-many-clients":
                    errors.append(f"slow client got {got!r}")
            except OSError as e:
                errors.append(f"slow client: {e!r}")
            finally:
                s.close()

    # The flood's start and end each count one: odd while it comes in.
    flood = [0]
    evicted = []

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            f0 = flood[0]
            try:
                s = conn()
                s.sendall(b"role\n")
                got = drain(s).decode(errors="replace").strip()
                s.close()
            except OSError as e:
                got = repr(e)
            # While the flood comes in, a probe that has not sent its line
            # yet (its thread starved on a busy machine) is the oldest
            # client without one: dropped for a newcomer, as the daemon
            # does by design (told so, or the pipe broken under its send).
            # Not an answer; any other time it would be.
            if (f0 % 2 == 1 or flood[0] != f0) and (
                    got == "error too-many-clients" or
                    got.startswith(("BrokenPipeError",
                                    "ConnectionResetError"))):
                evicted.append(got)
                continue
            lat.append(time.monotonic() - t0)
            answers.append(got)
            time.sleep(0.02)

    watchers, idle = [], []
    threads = [threading.Thread(target=random_payloads, args=(i,),
                                daemon=True) for i in range(3)]
    threads += [threading.Thread(target=slow_client, daemon=True)
                for _ in range(3)]
    prober = threading.Thread(target=probe, daemon=True)
    try:
        for _ in range(60):     # watchers that never read
            s = conn()
            s.sendall(b"watch\n")
            watchers.append(s)
        for t in threads:
            t.start()
        prober.start()
        flood[0] += 1
        for _ in range(300):    # a flood of idle connections
            idle.append(conn())
        flood[0] += 1
        # bench/hostile/run.sh sets a longer attack before the failover.
        time.sleep(float(os.environ.get("ZKE_HOSTILE_SECONDS", "1")))
        n1.signal(signal.SIGTERM)
        assert n1.wait_exit(timeout=20) == 0
        n2.wait_role("leader", timeout=15)
        time.sleep(1)
    finally:
        stop.set()
        for t in threads + [prober]:
            t.join(30)
        for s in watchers + idle:
            s.close()
    assert not errors, errors[:10]
    bad = [a for a in answers if a not in ROLE_WORDS]
    assert answers and not bad, bad[:10]
    assert answers[-1] == "leader", answers[-5:]
    lat.sort()
    print(f"{len(evicted)} probes dropped for the flood's newcomers")
    print(f"{len(lat)} role queries: median {lat[len(lat) // 2] * 1000:.2f} "
          f"ms, p99 {lat[len(lat) * 99 // 100] * 1000:.2f} ms, "
          f"max {lat[-1] * 1000:.2f} ms")
    assert n2.ctl("role") == "leader\n"
    election.check_invariants()
