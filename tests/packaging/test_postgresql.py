"""examples/postgresql against a real PostgreSQL 15 (Debian's `postgresql`,
installed by scripts/deps.sh) and a real ZooKeeper ensemble: a primary and
a streaming standby in temporary directories on loopback ports, run as the
`postgres` user, and two zkelectd (as root, like the unit) with the
example's hooks and settings.

1. Bootstrap as the example's zkelectd.conf says: the first server starts
   as a standby of nothing, the first leader's promote makes it the
   primary and records its epoch; the second is a pg_basebackup copy that
   streams from it.
2. pg-fence.sh with a fencing command that does nothing fails while the
   primary runs. The leader's zkelectd and its PostgreSQL are SIGKILLed
   together (a crash): the standby's zkelectd fences the old primary
   (FENCE_COMMAND checks that it is down), promotes its server, which
   takes writes and records the new, higher epoch; what was written before
   is there.
3. Every ZooKeeper server is restarted in turn: the primary keeps running
   and takes a write every 0.1 s the whole time, and no hook runs (a
   leader rides through ZooKeeper maintenance while its lease holds).

Every wait has a deadline. Needs root (PostgreSQL runs as `postgres`
through runuser, zkelectd as root).
"""
import os
import pwd
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, need_root, run

sys.path.insert(0, str(ROOT / "tests/integration"))
import zkharness  # noqa: E402

EXAMPLE = ROOT / "examples/postgresql"
PGBIN = Path("/usr/lib/postgresql/15/bin")
T_MS = 10000            # session timeout: a failover takes about T
HOOK_LINE = ("running promote hook", "running demote hook",
             "running fence hook")


class Postgres:
    """One PostgreSQL server of the test, run as `postgres`."""

    def __init__(self, base, name, port):
        self.dir = base / name
        self.port = port
        self.sockdir = base
        self.log = base / f"{name}.log"

    def as_postgres(self, *argv, timeout=60, check=True):
        r = run(["runuser", "-u", "postgres", "--", *map(str, argv)],
                timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"{argv[0]}: exit {r.returncode}\n"
                                 f"{r.stdout}{r.stderr}\n{self.log_tail()}")
        return r

    def configure(self):
        with open(self.dir / "postgresql.conf", "a") as f:
            f.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                    f"unix_socket_directories = '{self.sockdir}'\n"
                    "fsync = off\nshared_buffers = 16MB\n"
                    "wal_keep_size = 64MB\n")

    def start(self):
        self.as_postgres(PGBIN / "pg_ctl", "-D", self.dir, "-l", self.log,
                         "-w", "-t", "60", "start")

    def pid(self):
        return int((self.dir / "postmaster.pid").read_text().split()[0])

    def kill(self):
        """SIGKILL of the postmaster and of every child: a crash."""
        pid = self.pid()
        children = run(["pgrep", "-P", str(pid)]).stdout.split()
        for p in [pid, *map(int, children)]:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        zkharness.wait_for(lambda: zkharness.process_gone(pid), 10,
                           "the killed postmaster to go")

    def sql(self, query, timeout=10):
        """Runs query as `postgres` on the Unix socket (peer authentication,
        as on a Debian server); returns (ok, output)."""
        try:
            r = run(["runuser", "-u", "postgres", "--", "psql", "-X", "-q",
                     "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.sockdir,
                     "-p", str(self.port),
                     "-d", "dbname=postgres connect_timeout=3",
                     "-c", query], timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, "timeout"
        return r.returncode == 0, (r.stdout.strip() or r.stderr.strip())

    def value(self, query):
        ok, out = self.sql(query)
        assert ok, f"{query}: {out}\n{self.log_tail()}"
        return out

    def log_tail(self, lines=30):
        try:
            return "\n".join(self.log.read_text(errors="replace")
                             .splitlines()[-lines:])
        except OSError:
            return ""


def hook_lines(d):
    return [l for l in d.log_text().splitlines()
            if any(h in l for h in HOOK_LINE)]


def zkelectd(election, id, pg, fence_cmd):
    # What the example's drop-in gives, plus where this server listens, on
    # the PATH of a stock Debian (no pg_ctl on it).
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           "PGDATA": str(pg.dir), "PGUSER": "postgres",
           "PGHOST": str(pg.sockdir), "PGPORT": str(pg.port),
           "PGDATABASE": "postgres", "PGCONNECT_TIMEOUT": "3",
           "STOP_WAIT": "1", "FENCE_COMMAND": fence_cmd}
    return election.daemon(id, hooks=False, data=f"127.0.0.1:{pg.port}",
                           env=env, options={
        "hooks.promote": EXAMPLE / "pg-promote.sh",
        "hooks.demote": EXAMPLE / "pg-demote.sh",
        "hooks.fence": EXAMPLE / "pg-fence.sh",
        "hooks.check": "pg_isready -q -t 2",
        "hooks.timeout": "30s",
        # The example's ratio (30s / 9s) at a third of its session timeout.
        "hooks.demote_timeout": "3s",
        "control.log_level": "info",
    })


class Writer:
    """Inserts a row every 0.1 s until stopped; keeps every failure."""

    def __init__(self, pg):
        self.pg = pg
        self.ok = 0
        self.failures = []
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_ev.is_set():
            ok, out = self.pg.sql("INSERT INTO ticks VALUES (now())")
            if ok:
                self.ok += 1
            else:
                self.failures.append((time.strftime("%T"), out))
            self.stop_ev.wait(0.1)

    def stop(self):
        self.stop_ev.set()
        self.thread.join(30)


@pytest.fixture
def pg_env():
    need_root()
    if not (PGBIN / "initdb").exists():
        pytest.fail(f"{PGBIN}/initdb missing: run scripts/deps.sh")
    pwd.getpwnam("postgres")
    base = zkharness.make_tmpdir("zke-pg-")
    shutil.chown(base, "postgres", "postgres")
    os.chmod(base, 0o755)
    pa, pb = zkharness.free_ports(2)
    a, b = Postgres(base, "a", pa), Postgres(base, "b", pb)
    zk = zkharness.ZkCluster(size=3)
    made = {"zk": zk, "a": a, "b": b, "base": base, "election": None}
    try:
        yield made
    finally:
        if made["election"] is not None:
            made["election"].close()
        for pg in (a, b):
            if (pg.dir / "postmaster.pid").exists():
                pg.as_postgres(PGBIN / "pg_ctl", "-D", pg.dir, "-m",
                               "immediate", "-w", "stop", check=False)
        zk.close()
        zkharness.remove_tmpdir(base)


def test_postgresql_failover_and_zookeeper_maintenance(pg_env, request):
    zk, a, b, base = (pg_env[k] for k in ("zk", "a", "b", "base"))
    zk.start()
    election = zkharness.Election(zk.hosts, "pg", session_timeout_ms=T_MS)
    pg_env["election"] = election
    request.node.zke_logs = lambda: {
        **election.collect_logs(), "postgresql a": a.log_tail(),
        "postgresql b": b.log_tail(), **zk.log_tails(20)}

    # 1. Bootstrap: a fresh server started as a standby of nothing.
    # Debian's authentication (pg_createcluster's): peer on the socket,
    # passwords over TCP.
    a.as_postgres(PGBIN / "initdb", "-D", a.dir, "--auth-local=peer",
                  "--auth-host=scram-sha-256", timeout=120)
    a.configure()
    (a.dir / "standby.signal").touch()
    shutil.chown(a.dir / "standby.signal", "postgres", "postgres")
    a.start()
    assert a.value("SELECT pg_is_in_recovery()") == "t"
    # The fence of the old primary: a stonith that stops it (here, the
    # same machine) and succeeds only once it is down.
    fence = base / "fence.sh"
    fence.write_text(
        "#!/bin/sh\n"
        f"runuser -u postgres -- {PGBIN}/pg_ctl -D \"$OLD_PGDATA\" "
        "-m immediate -w stop >/dev/null 2>&1\n"
        f"runuser -u postgres -- {PGBIN}/pg_ctl -D \"$OLD_PGDATA\" "
        "status >/dev/null 2>&1\n"
        "[ $? -eq 3 ]\n")
    fence.chmod(0o755)
    da = zkelectd(election, "pg1", a, f"OLD_PGDATA={b.dir} {fence}")
    da.wait_role("leader", timeout=60)
    epoch_a = da.status()["epoch"]
    assert a.value("SELECT pg_is_in_recovery()") == "f"
    assert a.value("SELECT max(epoch) FROM zkelectd_epoch") == epoch_a

    # The standby: a copy of the primary that streams from it.
    b.as_postgres(PGBIN / "pg_basebackup", "-D", b.dir, "-R", "-X", "stream",
                  "-h", a.sockdir, "-p", a.port, timeout=120)
    b.configure()
    b.start()
    zkharness.wait_for(
        lambda: a.value("SELECT count(*) FROM pg_stat_replication "
                        "WHERE state = 'streaming'") == "1",
        60, "the standby to stream from the primary")
    db = zkelectd(election, "pg2", b, f"OLD_PGDATA={a.dir} {fence}")
    db.wait_role("follower", timeout=30)
    # Both startup demotes found a standby: nothing to stop.
    for d in (da, db):
        assert "PostgreSQL is a standby: nothing to demote" in d.log_text(), \
            d.log_tail()
    a.value("CREATE TABLE ticks (at timestamptz)")
    a.value("INSERT INTO ticks VALUES (now())")
    zkharness.wait_for(lambda: b.sql("SELECT count(*) FROM ticks") ==
                       (True, "1"), 30, "the row to reach the standby")

    # A fence command that did nothing is caught: the old primary still
    # takes connections (its role cannot be read without a password).
    r = run([str(EXAMPLE / "pg-fence.sh")], env={
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "FENCE_COMMAND": "true",
        "ZKELECT_FENCE_ID": "pg1", "ZKELECT_FENCE_EPOCH": epoch_a,
        "ZKELECT_FENCE_DATA": f"127.0.0.1:{a.port}"})
    assert r.returncode == 1, r.stderr
    assert "still accepts connections after the fence" in r.stderr

    # 2. The leader's host crashes: zkelectd and PostgreSQL, SIGKILL both.
    da.kill()
    a.kill()
    db.wait_role("leader", timeout=T_MS / 1000 + 60)
    epoch_b = db.status()["epoch"]
    assert int(epoch_b) > int(epoch_a)
    assert b.value("SELECT pg_is_in_recovery()") == "f"
    assert b.value("INSERT INTO ticks VALUES (now()) RETURNING 1") == "1"
    assert b.value("SELECT count(*) FROM ticks") == "2"
    assert b.value("SELECT max(epoch) FROM zkelectd_epoch") == epoch_b
    assert "fencing 'pg1'" in db.log_text()

    # 3. ZooKeeper maintenance: every server restarted in turn, while the
    # primary takes writes. Its leader must not notice.
    hooks_before = hook_lines(db)
    postmaster = b.pid()
    writer = Writer(b)
    try:
        zkharness.wait_for(lambda: writer.ok >= 5, 30, "writes to flow")
        for server in zk.servers:
            server.restart(60)
            zk.wait_serving(60)
            assert db.role() == "leader", db.log_tail()
            done = writer.ok
            zkharness.wait_for(lambda: writer.ok > done, 30,
                               f"a write after the restart of {server.port}")
        # After the last restart, as long as a session timeout: a demote
        # the restarts caused would show by then.
        deadline = time.monotonic() + T_MS / 1000
        while time.monotonic() < deadline:
            assert db.role() == "leader", db.log_tail()
            time.sleep(0.1)
    finally:
        writer.stop()
    assert writer.failures == [], writer.failures[:10]
    assert b.pid() == postmaster
    assert hook_lines(db) == hooks_before, hook_lines(db)
    assert db.status()["epoch"] == epoch_b
    assert b.value("SELECT pg_is_in_recovery()") == "f"
