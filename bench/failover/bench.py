#!/usr/bin/python3
"""bench/failover: failover of zkelectd against kazoo's Election recipe and
etcd's election, with one hook script, on one machine (issue 8's benchmark).
Run through bench/failover/run.sh, which owns the temporary directory and the
last-resort cleanup; see bench/failover/README.md for what is measured and
how.
"""

import argparse
import base64
import calendar
import datetime
import fcntl
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
# The integration suite's port reservation and four-letter-word client.
from ports import reserve  # noqa: E402
from zkharness import four_letter  # noqa: E402

import share  # noqa: E402  (bench/failover/share.py)

PY = "/usr/bin/python3"
MARK = "BENCH_FAILOVER_DIR"     # in the environment of every child
LEADER_IDLE_S = 10              # the requests phase's idle leader window
ZK_JAR = "/usr/share/java/zookeeper.jar"
ZK_LOG_JARS = ("/usr/share/java/slf4j-log4j12.jar",
               "/usr/share/java/log4j-1.2.jar")
T0 = time.monotonic()


def say(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", file=sys.stderr,
          flush=True)


class BenchError(Exception):
    pass


def wait_for(pred, timeout, what, interval=0.01):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise BenchError(f"timed out ({timeout} s) waiting for {what}")
        time.sleep(interval)


def parse_kv(text):
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k] = v
    return out


def log_roles(path, since_ns):
    """[(ns, from, to)] of the "role A -> B" lines of a daemon's log (its
    stamps: RFC 3339 UTC to the ms), from since_ns on."""
    out = []
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return out
    for m in re.finditer(r"^(\S+)\.(\d{3})Z zkelectd: role "
                         r"(\w+) -> (\w+)$", text, re.M):
        sec = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
        ns = (sec * 1000 + int(m.group(2))) * 10**6
        if ns >= since_ns - 10**6:      # the stamp is truncated to the ms
            out.append((ns, m.group(3), m.group(4)))
    return out


def cpu_busy():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def read_kv(path):
    try:
        return parse_kv(Path(path).read_text())
    except OSError:
        return {}


# ---------------------------------------------------------------- processes

class Procs:
    """Every process the bench starts: its own session (process group),
    the MARK variable in its environment, so that cleanup() finds it and
    whatever it started, and nothing else, by /proc/*/environ."""

    def __init__(self, workdir):
        self.dir = Path(workdir)
        self.env = dict(os.environ)
        self.env[MARK] = str(self.dir)
        self.env.pop("NOTIFY_SOCKET", None)
        self.marker = f"{MARK}={self.dir}".encode()

    def spawn(self, argv, log, env=None, **kw):
        e = dict(self.env)
        if env:
            e.update(env)
        out = open(log, "ab") if isinstance(log, (str, Path)) else log
        try:
            return subprocess.Popen(argv, env=e,
                                    stdin=kw.pop("stdin", subprocess.DEVNULL),
                                    stdout=kw.pop("stdout", out),
                                    stderr=kw.pop("stderr", subprocess.STDOUT),
                                    start_new_session=True, **kw)
        finally:
            if out is not log:
                out.close()

    def marked(self):
        pids = []
        me = os.getpid()
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == me:
                continue
            try:
                with open(f"/proc/{p}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if self.marker in env:
                pids.append(int(p))
        return pids

    def cleanup(self):
        for _ in range(50):
            pids = self.marked()
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)


def stop_procs(procs, timeout=20):
    """SIGTERM to each (the process, not its group), then SIGKILL to the
    groups of those still running after timeout."""
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        reap(p, signal.SIGKILL, 10, group=True)


def reap(proc, sig=signal.SIGTERM, timeout=10, group=False):
    if proc is None or proc.poll() is not None:
        return
    try:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        proc.wait(timeout)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


# ---------------------------------------------------------------- ZooKeeper

LOG4J = """log4j.rootLogger=WARN, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{{ISO8601}} %-5p %m%n
log4j.logger.org.apache.zookeeper.server.FinalRequestProcessor={level}, REQ
log4j.additivity.org.apache.zookeeper.server.FinalRequestProcessor=false
log4j.appender.REQ=org.apache.log4j.FileAppender
log4j.appender.REQ.File={reqlog}
log4j.appender.REQ.layout=org.apache.log4j.PatternLayout
log4j.appender.REQ.layout.ConversionPattern=%d{{yyyy-MM-dd'T'HH:mm:ss.SSSZ}} %m%n
"""


class ZooKeeper:
    """One standalone server. Started with reqlog=True, it logs every request
    it processes (the FinalRequestProcessor's debug lines) into requests.log;
    that costs a write per request, so it is on only while requests are
    counted (restart() switches it: same data, port and sessions)."""

    def __init__(self, procs, workdir, tick_ms):
        self.procs = procs
        self.dir = Path(workdir)
        (self.dir / "data").mkdir(parents=True)
        self.port = reserve(1)[0]
        self.reqlog = self.dir / "requests.log"
        (self.dir / "zoo.cfg").write_text("\n".join([
            f"tickTime={tick_ms}",
            f"dataDir={self.dir / 'data'}",
            f"clientPort={self.port}",
            "clientPortAddress=127.0.0.1",
            "admin.enableServer=false",
            "4lw.commands.whitelist=*",
            f"minSessionTimeout={2 * tick_ms}",
            "maxSessionTimeout=60000",
            "maxClientCnxns=0",
        ]) + "\n")
        self.proc = None

    @property
    def hosts(self):
        return f"127.0.0.1:{self.port}"

    def start(self, reqlog=False):
        (self.dir / "log4j.properties").write_text(
            LOG4J.format(reqlog=self.reqlog,
                         level="DEBUG" if reqlog else "INFO"))
        cp = ":".join([str(self.dir), ZK_JAR, *ZK_LOG_JARS])
        self.proc = self.procs.spawn(
            ["java", "-Xmx512m", "-XX:+UseSerialGC",
             "-Djava.net.preferIPv4Stack=true",
             "-Dzookeeper.jmx.log4j.disable=true", "-cp", cp,
             "org.apache.zookeeper.server.quorum.QuorumPeerMain",
             str(self.dir / "zoo.cfg")], self.dir / "zookeeper.log",
            cwd=self.dir)

        def serving():
            if self.proc.poll() is not None:
                raise BenchError("ZooKeeper exited:\n" + self.log_tail())
            try:
                return "Mode:" in self.cmd("srvr")
            except OSError:
                return False
        wait_for(serving, 60, "ZooKeeper to serve", 0.2)

    def restart(self, reqlog):
        reap(self.proc, signal.SIGTERM, 20)
        self.start(reqlog)

    def cmd(self, c):
        return four_letter("127.0.0.1", self.port, c, timeout=5.0)

    def watches(self):
        """{session id: number of watched paths} (wchc)."""
        out = {}
        sid = None
        for line in self.cmd("wchc").splitlines():
            if line.startswith("0x"):
                sid = int(line.strip(), 16)
                out[sid] = 0
            elif line.strip() and sid is not None:
                out[sid] += 1
        return out

    def version(self):
        m = re.search(r"Zookeeper version: (\S+)", self.cmd("srvr"))
        return m.group(1).rstrip(",") if m else "?"

    def cons(self):
        """{session id (int): (recved, sent)} of every client connection."""
        out = {}
        for m in re.finditer(r"recved=(\d+),sent=(\d+),sid=0x([0-9a-f]+)",
                             self.cmd("cons")):
            out[int(m.group(3), 16)] = (int(m.group(1)), int(m.group(2)))
        return out

    def reqlog_size(self):
        try:
            return self.reqlog.stat().st_size
        except OSError:
            return 0

    def requests(self, start, end):
        """[(ms since the epoch, session id, type, path)] the server
        processed between two offsets of requests.log."""
        with open(self.reqlog, "rb") as f:
            f.seek(start)
            text = f.read(end - start).decode(errors="replace")
        out = []
        for line in text.splitlines():
            # Each request has two debug lines; this one, once.
            if "Processing request::" not in line:
                continue
            m = re.search(r"sessionid:0x([0-9a-f]+) type:(\w+)", line)
            if m:
                p = re.search(r"reqpath:(\S+)", line)
                ms = None
                try:
                    ms = int(datetime.datetime.strptime(
                        line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S.%f%z"
                    ).timestamp() * 1000)
                except ValueError:
                    pass
                out.append((ms, int(m.group(1), 16), m.group(2),
                            p.group(1) if p else ""))
        return out

    def log_tail(self, n=30):
        try:
            lines = (self.dir / "zookeeper.log").read_text(
                errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])


# ---------------------------------------------------------------- etcd

class Etcd:
    def __init__(self, procs, workdir, etcd_bin):
        self.procs = procs
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True)
        self.bin = etcd_bin
        self.client_port, self.peer_port = reserve(2)
        self.proc = None

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.client_port}"

    def start(self):
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.proc = self.procs.spawn(
            [self.bin, "--name", "bench", "--data-dir", str(self.dir / "data"),
             "--listen-client-urls", self.endpoint,
             "--advertise-client-urls", self.endpoint,
             "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"bench={peer}",
             "--log-level", "warn"], self.dir / "etcd.log")

        def serving():
            if self.proc.poll() is not None:
                raise BenchError("etcd exited:\n" + (
                    self.dir / "etcd.log").read_text(errors="replace")[-3000:])
            try:
                return self.count("bench-probe/") == 0
            except OSError:
                return False
        wait_for(serving, 30, "etcd to serve", 0.2)

    def post(self, path, body, timeout=5.0):
        req = urllib.request.Request(
            self.endpoint + path, data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode())

    def count(self, prefix):
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        r = self.post("/v3/kv/range", {
            "key": base64.b64encode(prefix.encode()).decode(),
            "range_end": base64.b64encode(end.encode()).decode(),
            "count_only": True})
        return int(r.get("count", 0))


# ---------------------------------------------------------------- hook events

class Events:
    """The lines the hook appends: (ns, event, start|end, node)."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.touch()
        self.pos = 0
        self.rows = []
        self.last = {}          # node -> (event, phase) of its last line

    def poll(self):
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        cut = data.rfind(b"\n") + 1
        self.pos += cut
        for line in data[:cut].decode().splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue
            row = (int(parts[0]), parts[1], parts[2], parts[3])
            self.rows.append(row)
            self.last[row[3]] = (row[1], row[2])
        return self.rows

    def first(self, event, phase, after, exclude=None, node=None):
        for r in self.rows:
            if (r[0] > after and r[1] == event and r[2] == phase and
                    r[3] != exclude and (node is None or r[3] == node)):
                return r
        return None

    def last_of(self, event, phase, node, after):
        hit = None
        for r in self.rows:
            if r[0] > after and r[1:] == (event, phase, node):
                hit = r
        return hit

    def leaders(self):
        """Nodes whose last hook line is the end of a promote."""
        return [n for n, ev in self.last.items() if ev == ("promote", "end")]


# ---------------------------------------------------------------- systems

class System:
    """Three (or more) candidates of one election system sharing the bench
    hook. Subclasses start a candidate and say when the election settled."""

    name = "?"
    fixed_ttl = None    # a lease the bench cannot set (etcdctl elect's)

    @property
    def crash_ttl_s(self):
        return self.fixed_ttl or float(self.b.T)

    def __init__(self, b, nodes):
        self.b = b
        self.nodes = nodes
        self.events = Events(b.dir / f"events-{self.name}.log")
        self.proc = {}

    def hook_cmd(self):
        return str(self.b.hook)

    def env(self):
        return {"BENCH_EVENTS": str(self.events.path)}

    def alive(self, n):
        p = self.proc.get(n)
        return p is not None and p.poll() is None

    def pid(self, n):
        return self.proc[n].pid

    def start(self, n):
        """(Re)start candidate n; its earlier hook lines no longer count."""
        self.events.poll()
        self.events.last.pop(n, None)
        self._start(n)

    def start_all(self):
        for n in self.nodes:
            self.start(n)
            self.wait_settled(30 + 2 * len(self.nodes), need=self.started())

    def started(self):
        return [n for n in self.nodes if self.alive(n)]

    def wait_settled(self, timeout=30, need=None):
        """The one leader once every live candidate is queued and the leader
        finished its promote."""
        need = need or self.nodes

        def ok():
            self.events.poll()
            return self.settled(need)
        return wait_for(ok, timeout, f"{self.name} to settle", 0.02)

    def settled(self, need):
        """The leader, when every candidate in need runs, exactly one of
        them ended a promote last, and len(need) are queued (queued())."""
        if not all(self.alive(n) for n in need):
            return None
        leaders = [n for n in self.events.leaders() if n in need]
        if len(leaders) != 1 or self.queued() != len(need):
            return None
        return leaders[0]

    def stop(self, n, sig):
        p = self.proc[n]
        if sig == signal.SIGKILL:
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.send_signal(sig)

    def wait_exit(self, n, timeout=20):
        p = self.proc[n]
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
            raise BenchError(f"{self.name} {n} did not exit in {timeout} s")

    def stop_all(self, timeout=20):
        """SIGTERM to every candidate (they close their sessions: nothing
        is left for the server to expire), SIGKILL after timeout."""
        stop_procs(list(self.proc.values()), timeout)
        self.proc.clear()


class Zkelectd(System):
    name = "zkelectd"

    def __init__(self, b, nodes, service="failover", log_level="debug",
                 session_timeout=None, binary=None):
        self.service = service
        self.binary = binary or b.zkelectd
        self.log_level = log_level
        self.session_timeout = session_timeout or f"{b.T}s"
        super().__init__(b, nodes)
        self.name = "zkelectd" if service == "failover" else service
        # On the run's tmpfs (run.sh's RUNDIR), as /run/zkelectd would be,
        # reached from the run's directory too.
        self.sdir = b.run_dir / f"zkelectd-{service}"
        self.sdir.mkdir(exist_ok=True)
        if b.run_dir != b.dir:
            (b.dir / f"zkelectd-{service}").symlink_to(self.sdir)
        for n in nodes:
            self.write_conf(n)

    def write_conf(self, n):
        (self.sdir / f"{n}.conf").write_text(f"""[zookeeper]
hosts = {self.b.zk.hosts}
tick_time = {self.b.a.tick}ms
session_timeout = {self.session_timeout}
root = /bench
[election]
service = {self.service}
id = {n}
[hooks]
promote = {self.hook_cmd()} promote {n}
demote = {self.hook_cmd()} demote {n}
demote_on_start = no
[control]
socket = {self.sdir / (n + '.sock')}
status_file = {self.sdir / (n + '.status')}
log_level = {self.log_level}
""")

    def status(self, n):
        return read_kv(self.sdir / f"{n}.status")

    def log_path(self, n):
        return self.sdir / f"{n}.log"

    def _start(self, n):
        argv = [str(self.binary), "-c", str(self.sdir / f"{n}.conf")]
        self.proc[n] = self.b.procs.spawn(argv, self.log_path(n),
                                          env=self.env())

    def settled(self, need):
        st = {n: self.status(n) for n in need}
        leaders = [n for n in need if st[n].get("role") == "leader"]
        if len(leaders) != 1:
            return None
        lead = leaders[0]
        for n in need:
            s = st[n]
            if (not self.alive(n) or s.get("pid") != str(self.pid(n)) or
                    s.get("role") not in ("leader", "follower") or
                    s.get("leader") != lead or
                    s.get("candidates") != str(len(need)) or
                    s.get("zk_state") != "connected"):
                return None
        if self.events.last.get(lead) != ("promote", "end"):
            return None
        return lead

    def stop(self, n, sig):
        # The daemon alone: its hooks are in groups of their own anyway.
        if sig == signal.SIGKILL:
            os.kill(self.proc[n].pid, signal.SIGKILL)
        else:
            self.proc[n].send_signal(sig)


class Kazoo(System):
    name = "kazoo"

    def _start(self, n):
        self.proc[n] = self.b.procs.spawn(
            [PY, str(HERE / "candidate.py"), "kazoo", "--node", n,
             "--hook", self.hook_cmd(), "--hosts", self.b.zk.hosts,
             "--path", "/bench-kazoo/election",
             "--timeout", str(self.b.T)],
            self.b.dir / f"kazoo-{n}.log", env=self.env())

    def queued(self):
        return self.b.kz_children("/bench-kazoo/election")


class EtcdSystem(System):
    def __init__(self, b, nodes, mode):
        self.mode = mode
        self.name = mode
        self.election = f"bench-{mode}"
        if mode == "etcdctl":
            self.fixed_ttl = 60.0
        super().__init__(b, nodes)

    def _start(self, n):
        argv = [PY, str(HERE / "candidate.py"), self.mode, "--node", n,
                "--hook", self.hook_cmd(), "--endpoint", self.b.etcd.endpoint,
                "--name", self.election, "--etcdctl", self.b.etcdctl,
                "--ttl", str(self.b.T)]
        self.proc[n] = self.b.procs.spawn(
            argv, self.b.dir / f"{self.mode}-{n}.log", env=self.env())

    def queued(self):
        try:
            return self.b.etcd.count(self.election + "/")
        except OSError:
            return -1


# ---------------------------------------------------------------- statistics

def med(xs):
    return statistics.median(xs) if xs else float("nan")


# ---------------------------------------------------------------- the bench

class Bench:
    def __init__(self, a):
        self.a = a
        self.dir = Path(a.dir)
        self.run_dir = Path(a.run_dir or a.dir)
        self.procs = Procs(self.dir)
        self.T = a.session_timeout
        self.hook = self.dir / "hook.sh"
        shutil.copy(HERE / "hook.sh", self.hook)
        self.hook.chmod(0o755)
        self.zkelectd = Path(a.zkelectd).resolve()
        self.etcdctl = shutil.which("etcdctl") or "etcdctl"
        self.zk = None
        self.etcd = None
        self.kz = None
        self.rows = []          # one dict per failover
        self.report = []        # lines of the final report
        self.results = {}

    # ------------------------------------------------------------ helpers
    def kz_children(self, path):
        try:
            return len(self.kz.get_children(path))
        except Exception:  # noqa: BLE001 (NoNodeError before the first)
            return -1

    def out(self, line=""):
        print(line, flush=True)
        self.report.append(line)

    # ------------------------------------------------------------ setup
    def machine(self):
        info = {
            "date": subprocess.run(["date", "-u"], capture_output=True,
                                   text=True).stdout.strip(),
            "nproc": os.cpu_count(),
            "kernel": platform.release(),
            "zookeeper": self.zk.version() if self.zk else "-",
            "kazoo": self.kazoo_version(),
            "etcd": self.etcd_version(),
            "zkelectd": subprocess.run([str(self.zkelectd), "-V"],
                                       capture_output=True, text=True
                                       ).stdout.strip(),
            "binary": str(self.zkelectd),
        }
        for pkg in ("zookeeper", "libzookeeper-mt2", "python3-kazoo",
                    "etcd-server", "openjdk-17-jre-headless"):
            r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                               capture_output=True, text=True)
            info[f"deb:{pkg}"] = r.stdout.strip() if r.returncode == 0 else "-"
        info["binary_sha256"] = hashlib.sha256(
            self.zkelectd.read_bytes()).hexdigest()[:16]
        info["binary_mtime"] = time.strftime(
            "%Y-%m-%d %H:%M:%S UTC",
            time.gmtime(self.zkelectd.stat().st_mtime))
        try:
            if self.zkelectd == (REPO / "build" / "zkelectd").resolve():
                info["commit"] = subprocess.run(
                    ["git", "-C", str(REPO), "log", "-1",
                     "--format=%h (%cs) %s", "--", "src", "Makefile"],
                    capture_output=True, text=True).stdout.strip() + (
                    " — last commit of src/ and Makefile in this checkout")
            else:
                info["commit"] = "external binary (--zkelectd)"
        except OSError:
            info["commit"] = "?"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        return info

    @staticmethod
    def kazoo_version():
        try:
            import kazoo.version
            return kazoo.version.__version__
        except Exception:  # noqa: BLE001
            return "?"

    def etcd_version(self):
        if not self.a.etcd:
            return "-"
        r = subprocess.run(["etcd", "--version"], capture_output=True,
                           text=True)
        m = re.search(r"etcd Version: (\S+)", r.stdout)
        return m.group(1) if m else "?"

    def start_servers(self):
        self.zk = ZooKeeper(self.procs, self.dir / "zk", self.a.tick)
        say(f"starting ZooKeeper on {self.zk.hosts} (tickTime "
            f"{self.a.tick} ms)")
        self.zk.start()
        import logging
        from kazoo.client import KazooClient
        # Its reconnections across the request-log restarts are expected.
        logging.getLogger("kazoo").setLevel(logging.ERROR)
        self.kz = KazooClient(hosts=self.zk.hosts, timeout=10)
        self.kz.start(timeout=15)
        if self.a.etcd:
            self.etcd = Etcd(self.procs, self.dir / "etcd", self.a.etcd)
            say(f"starting etcd on {self.etcd.endpoint}")
            self.etcd.start()

    def close(self):
        if self.kz is not None:
            try:
                self.kz.stop()
                self.kz.close()
            except Exception:  # noqa: BLE001
                pass

    # ------------------------------------------------------------ failovers
    def failover(self, system, kind, rnd):
        ev = system.events
        lead = system.wait_settled(60)
        time.sleep(self.a.quiet)
        ev.poll()
        sig = signal.SIGTERM if kind == "graceful" else signal.SIGKILL
        t0 = time.time_ns()
        system.stop(lead, sig)
        timeout = 20 if kind == "graceful" else system.crash_ttl_s * 3 + 20

        def promoted():
            ev.poll()
            return ev.first("promote", "start", t0, exclude=lead)
        succ = wait_for(promoted, timeout,
                        f"{system.name}: a successor to {lead}")
        system.wait_exit(lead)
        ev.poll()
        row = {"system": system.name, "kind": kind, "round": rnd,
               "leader": lead, "successor": succ[3], "t_signal": t0,
               "t_promote": succ[0],
               "failover_ms": (succ[0] - t0) / 1e6}
        if kind == "graceful":
            ds = ev.first("demote", "start", t0, node=lead)
            if ds is not None:
                row["stop_to_demote_ms"] = (ds[0] - t0) / 1e6
            dem = ev.last_of("demote", "end", lead, t0)
            if dem is None:
                row["error"] = "no demote end of the old leader"
            else:
                row["t_demote_end"] = dem[0]
                row["gap_ms"] = (succ[0] - dem[0]) / 1e6
                if dem[0] > succ[0]:
                    row["error"] = "promote started before the demote ended"
        else:
            row["failover_T"] = (succ[0] - t0) / 1e9 / system.crash_ttl_s
        self.rows.append(row)
        say(f"{system.name:9} {kind:8} round {rnd:2}: {lead} -> {succ[3]} "
            f"{row['failover_ms']:9.1f} ms"
            + (f", gap {row['gap_ms']:.1f} ms" if "gap_ms" in row else "")
            + (f"  ERROR {row['error']}" if "error" in row else ""))
        system.start(lead)
        # Settled again before the next round, which may be another
        # system's: a candidate still starting (a Python interpreter
        # importing kazoo takes a few hundred ms of CPU here) would run
        # through that system's handoff and slow it, and the order of
        # the systems in a round would bias the comparison.
        system.wait_settled(60)
        return row

    # zkelectd's own share of every graceful handoff's gap, from the
    # daemons' trace lines (log level debug): bench/failover/share.py.
    def share(self, system):
        logs = {n: share.read_log(system.log_path(n)) for n in system.nodes
                if system.log_path(n).exists()}
        rows = share.handoffs(share.read_events(system.events.path), logs,
                              {})
        self.results["share"] = {
            "rows": rows, "parts": share.summary(rows, share.PARTS),
            "totals": share.summary(rows, share.TOTALS)}

    def round(self, system, kind, rnd):
        """One failover; on a failure, the error is recorded and the
        system's candidates are restarted (dropped after 3 failures)."""
        try:
            self.failover(system, kind, rnd)
            return True
        except BenchError as e:
            say(f"{system.name} {kind} round {rnd}: FAILED: {e}")
            self.rows.append({"system": system.name, "kind": kind,
                              "round": rnd, "error": str(e)})
            system.failures = getattr(system, "failures", 0) + 1
            system.stop_all(5)
            if system.failures >= 3:
                return False
            try:
                system.start_all()
            except BenchError as e2:
                say(f"{system.name}: restart failed: {e2}")
                return False
            return True

    def phase_failover(self):
        a = self.a
        systems = [Zkelectd(self, ["z1", "z2", "z3"],
                            log_level=a.zkelectd_log_level)]
        if a.zkelectd_b:
            # Another build of the daemon in the same rounds (an A/B
            # comparison): its own service, so its own election.
            systems.append(Zkelectd(self, ["y1", "y2", "y3"],
                                    service="zkelectd-b",
                                    log_level=a.zkelectd_log_level,
                                    binary=Path(a.zkelectd_b).resolve()))
        if "kazoo" in a.systems:
            systems.append(Kazoo(self, ["k1", "k2", "k3"]))
        if self.etcd is not None:
            if "etcdctl" in a.systems:
                systems.append(EtcdSystem(self, ["e1", "e2", "e3"],
                                          "etcdctl"))
            if "etcd-api" in a.systems:
                systems.append(EtcdSystem(self, ["a1", "a2", "a3"],
                                          "etcd-api"))
        for s in systems:
            say(f"starting 3 {s.name} candidates")
            s.start_all()
        self.systems = systems
        live = list(systems)
        for rnd in range(1, a.rounds + 1):
            # Alternating: every system once per kind per round, starting
            # with a different one each round.
            for kind in ("graceful", "crash"):
                ss = [s for s in live if kind == "graceful" or
                      s.fixed_ttl is None]
                k = rnd % max(1, len(ss))
                for s in ss[k:] + ss[:k]:
                    if not self.round(s, kind, rnd):
                        say(f"{s.name}: dropped from the remaining rounds")
                        live.remove(s)
        if a.etcdctl_crash:
            for s in live:
                if s.name == "etcdctl":
                    say("etcdctl elect crash: its lease is 60 s (no TTL "
                        "option); one round")
                    self.round(s, "crash", 1)
        for s in systems:
            s.stop_all()
        if a.zkelectd_log_level == "debug":
            self.share(systems[0])

    # ------------------------------------------------------------ requests
    def phase_requests(self, n):
        """Requests per graceful failover, counted on the server, and the
        same count over an idle window of the same length afterwards: what
        the daemons send anyway (keepalive syncs every T/6, pings, and the
        candidate count of the status file, a getChildren every T/3)."""
        nodes = [f"r{i:03d}" for i in range(1, n + 1)]
        say("restarting ZooKeeper with its request log on")
        self.zk.restart(reqlog=True)
        s = Zkelectd(self, nodes, service=f"req{n}", log_level="info",
                     session_timeout=self.a.requests_session_timeout)
        say(f"requests per failover: starting {n} zkelectd (session "
            f"timeout {s.session_timeout})")
        for nd in nodes:
            s.start(nd)
        lead = s.wait_settled(60 + n)
        time.sleep(1.0)
        sessions = {}
        for nd in nodes:
            sid = s.status(nd).get("session", "")
            if sid:
                sessions[int(sid, 16)] = nd
        c0 = self.zk.cons()
        off0 = self.zk.reqlog_size()
        t0 = time.time_ns()
        s.stop(lead, signal.SIGTERM)
        rest = [nd for nd in nodes if nd != lead]

        def done():
            s.events.poll()
            st = [s.status(nd) for nd in rest]
            ls = [x for x in st if x.get("role") == "leader"]
            if len(ls) != 1:
                return None
            new = ls[0]["id"]
            # Not `candidates`: the status file's count is refreshed by a
            # listing every T/3 whatever happens; waiting for it would put
            # that listing in the window.
            if all(x.get("leader") == new for x in st):
                return new
            return None
        new = wait_for(done, 30, f"req{n}: every follower to see the leader")
        time.sleep(0.1)         # what the last ones do right after
        t1 = time.time_ns()
        c1 = self.zk.cons()
        off1 = self.zk.reqlog_size()
        watches = self.zk.watches()
        s.wait_exit(lead)
        hook = s.events.first("promote", "start", t0, node=new)
        # The idle window: as long as the failover's, once all is calm.
        time.sleep(1.0)
        off2 = self.zk.reqlog_size()
        time.sleep((t1 - t0) / 1e9)
        off3 = self.zk.reqlog_size()
        # The new leader alone, idle, over two of preemption's periods
        # (preempt_delay 30 s, the default: a look every 5 s while anyone
        # may outrank it).
        time.sleep(LEADER_IDLE_S)
        off4 = self.zk.reqlog_size()
        s.stop_all()
        say("restarting ZooKeeper with its request log off")
        self.zk.restart(reqlog=False)
        prefix = f"/bench/req{n}/"
        bg = ("ping", "sync")

        def key(typ, path):
            if path.startswith(prefix):
                rel = path[len(prefix):]
                if rel.startswith("candidates/candidate-"):
                    rel = "candidates/candidate-*"
                return f"{typ} {rel}"
            return f"{typ} E" if path == prefix[:-1] else typ

        def count(reqs):
            per = {}
            for _, sid, typ, path in reqs:
                nd = sessions.get(sid)
                if nd is not None:
                    k = key(typ, path)
                    per.setdefault(nd, {}).setdefault(k, 0)
                    per[nd][k] += 1
            return per
        reqs = self.zk.requests(off0, off1)
        per = count(reqs)
        idle = count(self.zk.requests(off2, off3))
        lidle = count(self.zk.requests(off3, off4)).get(new, {})

        def total(nd, p=per):
            return sum(v for k, v in p.get(nd, {}).items()
                       if k.split()[0] not in bg)

        def listing(p):
            return sorted(nd for nd in followers
                          if any(k.startswith("getChildren")
                                 for k in p.get(nd, {})))
        followers = [nd for nd in rest if nd != new]
        fmax = max(followers, key=total) if followers else None
        # The successor's requests in order, "|" where its promote hook
        # started (the server's millisecond stamps).
        seq = []
        for ms, sid, typ, path in reqs:
            if sessions.get(sid) != new or typ in bg:
                continue
            if hook and "|" not in seq and ms is not None and \
                    ms * 10**6 > hook[0]:
                seq.append("|")
            seq.append(key(typ, path))
        recved = {}
        for sid, nd in sessions.items():
            if sid in c0 and sid in c1:
                recved[nd] = c1[sid][0] - c0[sid][0]
        res = {
            "n": n, "leader": lead, "successor": new,
            "session_timeout": s.session_timeout,
            "window_ms": (t1 - t0) / 1e6,
            "successor_requests": total(new),
            "successor_types": per.get(new, {}),
            "successor_sequence": seq,
            "follower_max": total(fmax) if fmax else 0,
            "follower_max_node": fmax,
            "follower_max_types": per.get(fmax, {}) if fmax else {},
            "follower_median": med([total(nd) for nd in followers]),
            "followers_listing": listing(per),
            "idle_followers_listing": listing(idle),
            "idle_follower_mean": (sum(total(nd, idle) for nd in followers)
                                   / max(1, len(followers))),
            "idle_follower_max": max((total(nd, idle) for nd in followers),
                                     default=0),
            "leader_requests": total(lead),
            "leader_idle_s": LEADER_IDLE_S,
            "leader_idle_types": lidle,
            "leader_idle_requests": sum(
                v for k, v in lidle.items() if k.split()[0] not in bg),
            "leader_idle_queue": sum(
                v for k, v in lidle.items()
                if k in ("getChildren candidates", "getChildren2 candidates",
                         "getData candidates/candidate-*")),
            "leader_types": per.get(lead, {}),
            "cons_recved_successor": recved.get(new),
            "cons_recved_follower_max": max(
                (recved.get(nd, 0) for nd in followers), default=0),
            "pings_syncs_followers": sum(
                v for nd in followers for k, v in per.get(nd, {}).items()
                if k.split()[0] in bg),
            "watches_successor": watches.get(
                next((k for k, v in sessions.items() if v == new), -1), 0),
            "watches_follower_max": max(
                (watches.get(k, 0) for k, v in sessions.items()
                 if v in followers), default=0),
        }
        self.results[f"requests{n}"] = res
        say(f"req{n}: successor {res['successor_requests']} "
            f"{' '.join(seq)}; follower max {res['follower_max']} "
            f"{res['follower_max_types']}; followers listing: "
            f"{len(res['followers_listing'])} (idle window: "
            f"{len(res['idle_followers_listing'])})")
        say(f"req{n}: the new leader idle for {LEADER_IDLE_S} s: "
            f"{res['leader_idle_requests']} requests, "
            f"{res['leader_idle_queue']} of them reading the queue "
            f"{res['leader_idle_types']}")
        return res

    # ------------------------------------------------------------ footprint
    def phase_footprint(self):
        say("idle footprint: 10 s")
        out = {}
        for label, to, nodes in (("T=10s", "10s", ["f1", "f2"]),
                                 ("T=2s", "2s", ["g1"])):
            s = Zkelectd(self, nodes, service=f"idle{to}", log_level="info",
                         session_timeout=to)
            for nd in nodes:
                s.start(nd)
            s.wait_settled(30)
            out[label] = s
        time.sleep(2)
        tck = os.sysconf("SC_CLK_TCK")

        def cpu(pid):
            f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            return int(f[11]) + int(f[12])
        before = {}
        for label, s in out.items():
            for nd in s.nodes:
                before[nd] = cpu(s.pid(nd))
        t = time.monotonic()
        time.sleep(10)
        dt = time.monotonic() - t
        res = []
        for label, s in out.items():
            for nd in s.nodes:
                pid = s.pid(nd)
                st = parse_kv(open(f"/proc/{pid}/status").read()
                              .replace(":\t", "=").replace(": ", "="))
                role = s.status(nd).get("role")
                res.append({
                    "config": label, "role": role,
                    "rss_kib": int(st["VmRSS"].split()[0]),
                    "hwm_kib": int(st["VmHWM"].split()[0]),
                    "threads": int(st["Threads"]),
                    "cpu_pct": 100.0 * (cpu(pid) - before[nd]) / tck / dt,
                })
            s.stop_all()
        self.results["footprint"] = res
        return res

    # ------------------------------------------------------------ floors
    def phase_floors(self, n=30):
        """What no election code can beat on this machine: starting the
        bench hook (posix_spawn of /bin/sh -c, and of the hook itself, as
        zkelectd runs a plain hook line) up to its first line, its end
        (last line → reaped by its parent), ZooKeeper round trips as
        kazoo sees them (a write is an fsync), and a deletion's
        notification to a watcher."""
        say("floors: hook start, ZooKeeper round trips")
        ev = Events(self.dir / "events-floor.log")
        env = dict(self.procs.env, BENCH_EVENTS=str(ev.path))
        spawn, direct, spawn_end, direct_end = [], [], [], []
        for i in range(2 * n):
            # Alternately through the shell and exec'd directly (how
            # zkelectd runs a plain hook line since issue 21).
            argv = ["/bin/sh", "-c", f"{self.hook} promote floor"]
            if i % 2:
                argv = [str(self.hook), "promote", "floor"]
            t = time.time_ns()
            pid = os.posix_spawn(argv[0], argv, env, setpgroup=0)
            os.waitpid(pid, 0)
            t_reaped = time.time_ns()
            ev.poll()
            (direct if i % 2 else spawn).append((ev.rows[-2][0] - t) / 1e6)
            # The hook's end: its last line's stamp → its parent has
            # reaped it (what an old leader waits for before its release).
            (direct_end if i % 2 else spawn_end).append(
                (t_reaped - ev.rows[-1][0]) / 1e6)
            time.sleep(0.02)
        # A bare client (tests/integration/zkraw.py: one blocking socket,
        # no threads), so the figures are the server's and the kernel's.
        from kazoo.protocol.serialization import (Create, Delete, Exists,
                                                  GetData, Sync, Transaction)
        from kazoo.security import OPEN_ACL_UNSAFE
        from zkraw import RawZk
        self.kz.ensure_path("/bench-floor")
        one = RawZk("127.0.0.1", self.zk.port, timeout_ms=30000)
        two = RawZk("127.0.0.1", self.zk.port, timeout_ms=30000)
        res = {"hook_spawn_to_first_line_ms": spawn,
               "hook_exec_to_first_line_ms": direct,
               "hook_shell_last_line_to_reaped_ms": spawn_end,
               "hook_exec_last_line_to_reaped_ms": direct_end}
        for k in ("create_ephemeral_ms", "delete_ms", "get_ms", "sync_ms",
                  "delete_to_watch_ms", "delete_to_watch_cold_ms",
                  "multi4_to_watch_cold_ms"):
            res[k] = []

        def timed(key, req):
            t = time.perf_counter_ns()
            one.call(req)
            res[key].append((time.perf_counter_ns() - t) / 1e6)
        for i in range(n):
            path = f"/bench-floor/n{i}"
            timed("create_ephemeral_ms",
                  Create(path, b"x", OPEN_ACL_UNSAFE, 1))
            timed("get_ms", GetData(path, False))
            timed("sync_ms", Sync(path))
            two.call(Exists(path, True))
            t = time.perf_counter_ns()
            xid = one.send(Delete(path, -1))
            f = two.read(5)
            if f.is_event:
                res["delete_to_watch_ms"].append(
                    (time.perf_counter_ns() - t) / 1e6)
            one.wait_reply(xid)
            res["delete_ms"].append((time.perf_counter_ns() - t) / 1e6)
            time.sleep(0.02)
        # The same after the server sat idle as long as before a failover
        # round (--quiet): its threads, and this machine's idle CPUs, wake
        # up on the path. Once a plain delete (kazoo's release), once a
        # multi of four deletes watched on its last (zkelectd's release:
        # leader, breadcrumb, node, claim).
        for i in range(n):
            for key, k in (("delete_to_watch_cold_ms", 1),
                           ("multi4_to_watch_cold_ms", 4)):
                paths = [f"/bench-floor/c{i}-{k}-{j}" for j in range(k)]
                for path in paths:
                    one.call(Create(path, b"x", OPEN_ACL_UNSAFE, 1))
                two.call(Exists(paths[-1], True))
                time.sleep(self.a.quiet)
                req = (Transaction([Delete(x, -1) for x in paths]) if k > 1
                       else Delete(paths[0], -1))
                t = time.perf_counter_ns()
                xid = one.send(req)
                while not two.read(5).is_event:
                    pass
                res[key].append((time.perf_counter_ns() - t) / 1e6)
                one.wait_reply(xid)
        one.close_session()
        two.close_session()
        # The same between two processes (floor2.py): the watcher sleeps
        # through the quiet in another process, as a successor does.
        # And the whole handoff so (MULTI 4): zkelectd's release with its
        # company (a third watcher, the old session closed), hook.sh's
        # demote reaped before it and promote spawned on the claim's event.
        for key, k in (("delete_to_watch_cold_2proc_ms", 0),
                       ("multi4_to_watch_cold_2proc_ms", 1),
                       ("release_to_watch_cold_2proc_ms", 2),
                       ("handoff_gap_bare_2proc_ms", 4)):
            out = subprocess.run(
                [sys.executable, str(HERE / "floor2.py"),
                 f"127.0.0.1:{self.zk.port}", str(n), str(k),
                 str(self.a.quiet)],
                env=self.procs.env, capture_output=True, text=True,
                timeout=n * (self.a.quiet + 5) + 30, check=True)
            res[key] = json.loads(out.stdout)
        self.results["floors"] = res
        say("floors: " + ", ".join(f"{k} {med(v):.2f}" for k, v in res.items()))
        return res

    # ------------------------------------------------------------ storm
    def phase_storm(self, n, session_timeout):
        sdir = self.dir / f"storm-{session_timeout}"
        sdir.mkdir()
        ev = Events(sdir / "promotes.log")
        lock = sdir / "go.lock"
        lock.touch()
        lfd = os.open(lock, os.O_RDWR)
        fcntl.flock(lfd, fcntl.LOCK_EX)
        nodes = [f"s{i:03d}" for i in range(1, n + 1)]
        for nd in nodes:
            (sdir / f"{nd}.conf").write_text(f"""[zookeeper]
hosts = {self.zk.hosts}
tick_time = {self.a.tick}ms
session_timeout = {session_timeout}
root = /bench
[election]
service = storm{session_timeout}
id = {nd}
[hooks]
promote = {self.hook} promote {nd}
demote_on_start = no
[control]
socket = {sdir / (nd + '.sock')}
status_file = {sdir / (nd + '.status')}
log_level = {self.a.storm_log_level}
""")
        say(f"join storm: {n} zkelectd (session timeout {session_timeout}), "
            "waiting on one lock")
        procs = {}
        # Each waits for a shared lock the bench holds, then execs the
        # daemon (same pid): releasing the lock starts them all at once.
        script = ('exec 9<"$1" && flock -s 9 && exec 9<&- && '
                  'exec "$2" -c "$3"')
        for nd in nodes:
            procs[nd] = self.procs.spawn(
                ["sh", "-c", script, "sh", str(lock), str(self.zkelectd),
                 str(sdir / f"{nd}.conf")], sdir / f"{nd}.log",
                env={"BENCH_EVENTS": str(ev.path)})

        def blocked():
            waiting = 0
            for p in procs.values():
                try:
                    kids = open(f"/proc/{p.pid}/task/{p.pid}/children"
                                ).read().split()
                except OSError:
                    continue
                waiting += len(kids) == 1
            return waiting == n
        wait_for(blocked, 60, "every storm daemon to wait on the lock", 0.1)
        time.sleep(0.5)
        t0 = time.time_ns()
        fcntl.flock(lfd, fcntl.LOCK_UN)
        os.close(lfd)
        # Live view: poll the status files (every ~50 ms). The figures
        # reported come from the daemons' own log lines ("role A -> B",
        # millisecond stamps) read afterwards.
        pending = set(nodes)
        promoted = None
        t_lead = None
        t_all = None
        deadline = time.monotonic() + self.a.storm_wait
        while time.monotonic() < deadline:
            ev.poll()
            if promoted is None:
                p1 = ev.first("promote", "start", 0)
                promoted = p1[3] if p1 else None
            if promoted and t_lead is None and read_kv(
                    sdir / f"{promoted}.status").get("role") == "leader":
                t_lead = time.time_ns()
            for nd in list(pending):
                r = read_kv(sdir / f"{nd}.status").get("role")
                if r in ("leader", "follower"):
                    pending.discard(nd)
            if not pending and t_all is None:
                t_all = time.time_ns()
            if t_all and t_lead and (time.time_ns() - max(t_all, t_lead)
                                     > self.a.storm_settle * 1e9):
                break
            time.sleep(0.05)
        ev.poll()
        promotes = [r for r in ev.rows if r[1:3] == ("promote", "start")]
        dead = [nd for nd, p in procs.items() if p.poll() is not None]
        first_role = {}
        lead_role = {}
        for nd in nodes:
            for ns, frm, to in log_roles(sdir / f"{nd}.log", t0):
                if to in ("leader", "follower") and nd not in first_role:
                    first_role[nd] = ns
                if to == "leader":
                    lead_role[nd] = ns
        res = {
            "n": n, "session_timeout": session_timeout,
            "promotes": len(promotes),
            "promoted": sorted({r[3] for r in promotes}),
            "first_promote_s": ((promotes[0][0] - t0) / 1e9
                                if promotes else None),
            "leader_role_s": ((min(lead_role.values()) - t0) / 1e9
                              if lead_role else None),
            "leaders": sorted(lead_role),
            "all_roles_s": ((max(first_role.values()) - t0) / 1e9
                            if len(first_role) == n else None),
            "with_role": len(first_role),
            "polled_all_roles_s": (t_all - t0) / 1e9 if t_all else None,
            "exited": len(dead),
            "settle_s": self.a.storm_settle,
        }
        say(f"storm: {res}")
        self.results.setdefault("storm", []).append(res)
        say("storm: stopping the daemons")
        stop_procs(list(procs.values()), 60)
        return res


def main():
    ap = argparse.ArgumentParser(
        prog="bench/failover/run.sh",
        description="Failover of zkelectd, kazoo's Election recipe, "
        "`etcdctl elect` and etcd's election API with one hook script, "
        "ZooKeeper requests per failover, a join storm, the idle footprint "
        "and the floors of this machine. Prints Markdown tables.")
    ap.add_argument("--dir", required=True, help=argparse.SUPPRESS)
    ap.add_argument("--run-dir", help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=20,
                    help="failover rounds per system and kind (default 20)")
    ap.add_argument("--quick", action="store_true",
                    help="5 rounds, no 60 s etcdctl crash round "
                    "(about 2 minutes)")
    ap.add_argument("--zkelectd", default=os.environ.get(
        "ZKELECTD", str(REPO / "build" / "zkelectd")),
                    help="the daemon to measure (default $ZKELECTD, else "
                    "build/zkelectd of this checkout, built first)")
    ap.add_argument("--zkelectd-b", metavar="PATH",
                    help="another zkelectd binary, measured as the system "
                    "zkelectd-b in the same alternating rounds (A/B)")
    ap.add_argument("--systems", default="zkelectd,kazoo,etcdctl,etcd-api",
                    help="besides zkelectd, which always runs")
    ap.add_argument("--phases",
                    default="failover,requests,footprint,floors,storm")
    ap.add_argument("--tick", type=int, default=200,
                    help="ZooKeeper tickTime, ms (default 200)")
    ap.add_argument("--session-timeout", type=int, default=2,
                    help="T, s: zkelectd's session_timeout, kazoo's "
                    "timeout, the etcd lease's TTL (default 2)")
    ap.add_argument("--quiet", type=float, default=0.3,
                    help="s of calm before each failover (default 0.3)")
    ap.add_argument("--requests-n", default="3,100",
                    help="candidate counts for the request count")
    ap.add_argument("--requests-session-timeout", default="10s",
                    help="zkelectd's session timeout while requests are "
                    "counted (default 10s, the daemon's default: its "
                    "background requests, every T/6 and T/3, then rarely "
                    "fall in the window)")
    ap.add_argument("--storm", type=int, default=500,
                    help="daemons in the join storm (default 500)")
    ap.add_argument("--storm-session-timeouts", default="10s,2s",
                    help="one storm per value (zkelectd's default is 10s)")
    ap.add_argument("--storm-wait", type=float, default=60,
                    help="s the storm may take at most")
    ap.add_argument("--storm-log-level", default="notice")
    ap.add_argument("--storm-settle", type=float, default=5,
                    help="s to watch for a second promote once settled")
    ap.add_argument("--etcdctl-crash", type=int, choices=(0, 1),
                    help="one crash round of etcdctl elect, whose lease is "
                    "60 s (default 1, 0 with --quick)")
    ap.add_argument("--zkelectd-log-level", default="info",
                    help="of the 3 timed daemons: debug gives the gap's "
                    "breakdown and zkelectd's own share from their trace "
                    "lines (share.py; default info)")
    ap.add_argument("--json", help="also write every measurement there")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (logs)")
    a = ap.parse_args()
    if a.quick:
        a.rounds = min(a.rounds, 5)
    if a.etcdctl_crash is None:
        a.etcdctl_crash = 0 if a.quick else 1
    a.systems = a.systems.split(",")
    a.phases = a.phases.split(",")
    a.etcd = shutil.which("etcd") if (
        shutil.which("etcdctl") and ({"etcdctl", "etcd-api"} &
                                     set(a.systems))) else None
    if not a.etcd and ({"etcdctl", "etcd-api"} & set(a.systems)):
        say("etcd/etcdctl not found: etcd skipped (apt-get install -y "
            "etcd-server etcd-client)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    b = Bench(a)

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_signal)
    errors = b.results.setdefault("errors", [])

    def phase(name, fn, *args):
        try:
            fn(*args)
        except (BenchError, OSError, subprocess.SubprocessError) as e:
            say(f"phase {name} FAILED: {e}")
            errors.append(f"{name}: {e}")
    try:
        b.start_servers()
        b.results["machine"] = b.machine()
        b.results["session_timeout_s"] = a.session_timeout
        b.results["tick_ms"] = a.tick
        b.results["loadavg_start"] = open("/proc/loadavg").read().strip()
        if "failover" in a.phases:
            c0 = cpu_busy()
            phase("failover", b.phase_failover)
            c1 = cpu_busy()
            b.results["failover_machine_busy_pct"] = round(
                100.0 * (c1[0] - c0[0]) / max(1, c1[1] - c0[1]), 1)
        if "requests" in a.phases:
            for n in (int(x) for x in a.requests_n.split(",")):
                phase(f"requests {n}", b.phase_requests, n)
        if "footprint" in a.phases:
            phase("footprint", b.phase_footprint)
        if "floors" in a.phases:
            phase("floors", b.phase_floors)
        if "storm" in a.phases:
            for to in a.storm_session_timeouts.split(","):
                phase(f"storm {to}", b.phase_storm, a.storm, to)
    finally:
        b.results["rows"] = b.rows
        if a.json:
            Path(a.json).write_text(json.dumps(b.results, indent=1) + "\n")
        b.close()
        b.procs.cleanup()
    import report
    report.print_report(b.results, a)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
