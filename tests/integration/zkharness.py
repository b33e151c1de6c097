"""Harness for zkelectd's integration tests.

Throwaway ZooKeeper servers (standalone or a three-server ensemble on
loopback), the daemon under test driven through its real binary, socket and
status file, and the parsers for the history file the test hooks write.

Every process started here lives in its own process group, dies with the
test process (PR_SET_PDEATHSIG through setpriv) and is killed again by an
atexit handler, so an interrupted run leaves nothing behind.
"""

import atexit
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import zkcds
from ports import reserve as reserve_ports

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORD_HOOK = HERE / "hooks" / "record.sh"

POLL = 0.05
SAN = os.environ.get("ZKELECTD_SAN") == "1"
SAN_PATTERNS = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer")
STATUS_KEYS = ("service", "id", "role", "leader", "leader_data", "epoch",
               "candidates", "zk_state", "session", "pid", "since", "updated")
ROLES = ("leader", "follower", "promoting", "demoting", "observer",
         "unknown", "stopped")

ZK_JAR = "/usr/share/java/zookeeper.jar"
# zookeeper.jar's manifest names its own dependencies; slf4j needs a
# binding to print anything, which these two provide.
ZK_LOG_JARS = ("/usr/share/java/slf4j-log4j12.jar",
               "/usr/share/java/log4j-1.2.jar")
ZK_JVM_OPTS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Djava.net.preferIPv4Stack=true",
               "-Dzookeeper.jmx.log4j.disable=true")
ZK_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
# The same for every server, so that one class-data archive serves all
# (zkcds.py); each server's log4j.properties is named by a property.
ZK_CLASSPATH = ":".join([ZK_JAR, *ZK_LOG_JARS])
LOG4J = """log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.Target=System.err
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
"""


class HarnessError(AssertionError):
    """A condition the harness waited for did not happen."""


# ---------------------------------------------------------------- cleanup

_groups = {}        # pgid -> what it is, for processes still running
_tmpdirs = set()


def _register(proc, what):
    _groups[proc.pid] = what


def _unregister(proc):
    _groups.pop(proc.pid, None)


def _cleanup_everything():
    for pgid in list(_groups):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _groups.pop(pgid, None)
    for d in list(_tmpdirs):
        shutil.rmtree(d, ignore_errors=True)
        _tmpdirs.discard(d)


atexit.register(_cleanup_everything)


TMP_PREFIXES = ("zkt-zk-", "zke-")


def make_tmpdir(prefix):
    """A short temporary directory (Unix socket paths are limited to 107
    bytes), removed at exit unless ZKELECTD_KEEP_TMP=1."""
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    Path(d, ".owner").write_text(f"{os.getpid()}\n")
    if os.environ.get("ZKELECTD_KEEP_TMP") != "1":
        _tmpdirs.add(d)
    return Path(d)


def sweep_stale_tmpdirs():
    """Removes the directories of an earlier run that was SIGKILLed (its
    processes died with it, through PDEATHSIG, but not its files)."""
    if os.environ.get("ZKELECTD_KEEP_TMP") == "1":
        return
    for d in Path("/tmp").iterdir():
        if not d.name.startswith(TMP_PREFIXES):
            continue
        try:
            owner = int(Path(d, ".owner").read_text())
        except (OSError, ValueError):
            continue
        if owner != os.getpid() and process_gone(owner):
            shutil.rmtree(d, ignore_errors=True)


def remove_tmpdir(d):
    d = str(d)
    if d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
        _tmpdirs.discard(d)


def _spawn(argv, what, **kw):
    """Popen in a new session, killed if this process dies."""
    if shutil.which("setpriv"):
        argv = ["setpriv", "--pdeathsig", "KILL", "--"] + list(argv)
    proc = subprocess.Popen(argv, start_new_session=True,
                            stdin=subprocess.DEVNULL, **kw)
    _register(proc, what)
    return proc


def _reap(proc, sig, timeout):
    """Sends sig to proc's group, waits for proc; SIGKILLs the group when it
    outlives timeout. Returns the exit status."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        rc = proc.wait(timeout=10)
    # Anything left in the group (a hook of a killed daemon has its own
    # group and is not touched here).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _unregister(proc)
    return rc


# ---------------------------------------------------------------- helpers

def free_ports(n):
    """n distinct loopback TCP ports, reserved for this process: outside the
    kernel's ephemeral range and locked against concurrent runs (ports.py),
    so that nothing else can take one while its server is not bound."""
    return reserve_ports(n)


def wait_for(pred, timeout, what, interval=POLL):
    """Polls pred() until it returns a true value, which is returned;
    raises HarnessError naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            v = pred()
            if v:
                return v
        except HarnessError:
            raise
        except Exception as e:  # noqa: BLE001 - reported at the deadline
            last_exc = e
        if time.monotonic() >= deadline:
            extra = f" (last error: {last_exc!r})" if last_exc else ""
            raise HarnessError(f"timed out after {timeout}s waiting for "
                               f"{what}{extra}")
        time.sleep(interval)


def wait_value(get, want, timeout, what, more=lambda: ""):
    """Polls get() until it returns want; at the deadline the HarnessError
    also lists the values seen (each change once) and more()."""
    seen = []

    def reached():
        v = get()
        if not seen or seen[-1] != v:
            seen.append(v)
        return v == want
    try:
        wait_for(reached, timeout, what)
    except HarnessError as e:
        raise HarnessError(f"{e}; seen: {seen[-10:]}{more()}") from None


def process_gone(pid):
    """True when pid does not exist or is a zombie (pid 1 of a container
    does not always reap the orphans it inherits)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def group_members(pgid):
    """Live (non-zombie) pids of process group pgid."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2:].split()
        # rest[0] state, rest[1] ppid, rest[2] pgrp
        if int(rest[2]) == pgid and rest[0] not in "ZX":
            alive.append(int(entry))
    return alive


def parse_kv(text):
    """key=value lines into a dict; values may be shell-quoted."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"not a key=value line: {line!r}")
        k, v = line.split("=", 1)
        if v[:1] in ("'", '"'):
            v = " ".join(shlex.split(v))
        out[k.strip()] = v
    return out


def four_letter(host, port, cmd, timeout=2.0):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(cmd.encode())
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks).decode(errors="replace")


# ---------------------------------------------------------------- ZooKeeper

class ZkServer:
    """One ZooKeeper server process (standalone or ensemble member)."""

    def __init__(self, workdir, client_port, tick_ms=200, min_session_ms=None,
                 max_session_ms=60000, myid=None, quorum=None):
        self.dir = Path(workdir)
        self.data_dir = self.dir / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = client_port
        self.myid = myid
        self.cfg = self.dir / "zoo.cfg"
        self.log_path = self.dir / "zookeeper.log"
        self.proc = None
        lines = [
            f"tickTime={tick_ms}",
            f"dataDir={self.data_dir}",
            f"clientPort={client_port}",
            "clientPortAddress=127.0.0.1",
            "admin.enableServer=false",
            "4lw.commands.whitelist=*",
            f"minSessionTimeout={min_session_ms or 2 * tick_ms}",
            f"maxSessionTimeout={max_session_ms}",
            "maxClientCnxns=0",
            # No fsync of the transaction log: a test server's durability
            # across a machine crash is not under test, and on ext4 an
            # fsync waits for the journal, so the builds and suites beside
            # it could hold a write (and the syncs queued behind it) for
            # seconds: a leader at T = 3 s then rightly demoted, lease-lost
            # after 2.1 s without a confirmation (test_zkelectctl_every_
            # command, once, two suites' builds beside it). A server's
            # restart keeps its data as before: the log is still written.
            "forceSync=no",
        ]
        if quorum:
            lines += ["initLimit=10", "syncLimit=5", "standaloneEnabled=false",
                      "reconfigEnabled=false", "electionPortBindRetry=0"]
            for sid, peer, elect in quorum:
                lines.append(f"server.{sid}=127.0.0.1:{peer}:{elect}")
            (self.data_dir / "myid").write_text(f"{myid}\n")
        self.cfg.write_text("\n".join(lines) + "\n")
        (self.dir / "log4j.properties").write_text(LOG4J)

    @property
    def hostport(self):
        return f"127.0.0.1:{self.port}"

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, jvm_opts=None):
        """Starts the server, its JVM with jvm_opts if given, else with
        ZK_JVM_OPTS and the class archive (zkcds.py)."""
        if self.running():
            return
        opts = jvm_opts
        if opts is None:
            opts = list(ZK_JVM_OPTS)
            jsa = class_archive()
            if jsa is not None:
                opts.append(f"-XX:SharedArchiveFile={jsa}")
        log4j = self.dir / "log4j.properties"
        argv = ["java", *opts, f"-Dlog4j.configuration=file:{log4j}",
                "-cp", ZK_CLASSPATH, ZK_MAIN, str(self.cfg)]
        log = open(self.log_path, "ab")
        try:
            self.proc = _spawn(argv, f"zookeeper :{self.port}", stdout=log,
                               stderr=subprocess.STDOUT, cwd=self.dir)
        finally:
            log.close()

    def mode(self):
        """The `Mode:` of srvr (standalone, leader, follower), or None when
        the server does not answer or does not serve."""
        try:
            out = four_letter("127.0.0.1", self.port, "srvr")
        except OSError:
            return None
        m = re.search(r"^Mode: (\S+)", out, re.M)
        return m.group(1) if m else None

    def wait_serving(self, timeout=30):
        def serving():
            if self.proc is not None and self.proc.poll() is not None:
                raise HarnessError(
                    f"zookeeper :{self.port} exited with {self.proc.returncode}"
                    f"\n{self.log_tail()}")
            return self.mode()
        try:
            return wait_for(serving, timeout, f"zookeeper :{self.port} srvr Mode")
        except HarnessError as e:
            raise HarnessError(f"{e}\n{self.log_tail()}") from None

    def stop(self, timeout=10):
        """Graceful stop (SIGTERM), SIGKILL after timeout."""
        if self.proc is None:
            return None
        rc = _reap(self.proc, signal.SIGTERM, timeout)
        self.proc = None
        return rc

    def kill(self):
        """Crash: SIGKILL."""
        if self.proc is None:
            return None
        rc = _reap(self.proc, signal.SIGKILL, 10)
        self.proc = None
        return rc

    def restart(self, timeout=30):
        self.stop()
        self.start()
        return self.wait_serving(timeout)

    def freeze(self):
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def thaw(self):
        os.killpg(self.proc.pid, signal.SIGCONT)

    def log_tail(self, lines=40):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _list_classes(path):
    """zkcds.py's first step: a standalone server run until it serves, the
    classes it loaded written to path."""
    d = make_tmpdir("zkt-zk-")
    try:
        (port,) = free_ports_outside_ephemeral(1)
        srv = ZkServer(d / "zk1", port)
        srv.start([*ZK_JVM_OPTS, f"-XX:DumpLoadedClassList={path}"])
        try:
            srv.wait_serving(timeout=60)
        finally:
            srv.stop()
    finally:
        remove_tmpdir(d)


def class_archive():
    """The test servers' class-data archive (zkcds.py), or None."""
    return zkcds.archive(ZK_CLASSPATH, ZK_JVM_OPTS, _list_classes)


class ZkCluster:
    """A standalone server (size=1) or an ensemble (size=3, 5) on loopback,
    each server with its own ports and temporary data directory."""

    def __init__(self, size=1, tick_ms=200, min_session_ms=None,
                 max_session_ms=60000):
        self.dir = make_tmpdir("zkt-zk-")
        self.size = size
        self.servers = []
        if size == 1:
            (port,) = free_ports_outside_ephemeral(1)
            self.servers.append(ZkServer(self.dir / "zk1", port, tick_ms,
                                         min_session_ms, max_session_ms))
        else:
            ports = free_ports_outside_ephemeral(3 * size)
            quorum = [(i + 1, ports[3 * i + 1], ports[3 * i + 2])
                      for i in range(size)]
            for i in range(size):
                self.servers.append(ZkServer(
                    self.dir / f"zk{i + 1}", ports[3 * i], tick_ms,
                    min_session_ms, max_session_ms, myid=i + 1, quorum=quorum))

    @property
    def hosts(self):
        return ",".join(s.hostport for s in self.servers)

    def __getitem__(self, i):
        return self.servers[i]

    def start(self, timeout=60):
        for s in self.servers:
            s.start()
        return self.wait_serving(timeout)

    def wait_serving(self, timeout=60):
        """Waits until every running server reports a Mode; returns the
        modes in server order (None for stopped servers)."""
        deadline = time.monotonic() + timeout
        modes = []
        for s in self.servers:
            if s.running():
                modes.append(s.wait_serving(max(0.1, deadline - time.monotonic())))
            else:
                modes.append(None)
        return modes

    def ensure_serving(self, timeout=60):
        """Restarts stopped servers (a test may have left one down)."""
        for s in self.servers:
            if not s.running():
                s.start()
        return self.wait_serving(timeout)

    def leader(self):
        for s in self.servers:
            if s.mode() in ("leader", "standalone"):
                return s
        return None

    def stop(self):
        for s in self.servers:
            s.stop()

    def close(self):
        for s in self.servers:
            s.kill()
        remove_tmpdir(self.dir)

    def log_tails(self, lines=40):
        return {f"zookeeper :{s.port}": s.log_tail(lines) for s in self.servers}


# ---------------------------------------------------------------- the daemon

def bin_dir():
    d = Path(os.environ.get("ZKELECTD_BIN_DIR", "build"))
    return d if d.is_absolute() else REPO / d


def binary(name):
    p = bin_dir() / name
    if not os.access(p, os.X_OK):
        raise HarnessError(f"{p} not found or not executable: run make first")
    return p


def san_env(env=None):
    env = dict(os.environ if env is None else env)
    if SAN:
        env["ASAN_OPTIONS"] = "abort_on_error=0:detect_leaks=1"
        env["LSAN_OPTIONS"] = f"suppressions={HERE / 'lsan.supp'}"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    return env


def san_findings(text):
    """Lines of a log that a sanitizer wrote, with some context."""
    lines = text.splitlines()
    hits = [i for i, l in enumerate(lines) if any(p in l for p in SAN_PATTERNS)]
    if not hits:
        return None
    first = hits[0]
    return "\n".join(lines[max(0, first - 2):first + 40])


def zkelectctl(args, timeout=10, prefix=()):
    """Runs zkelectctl (behind prefix, e.g. setpriv); returns
    CompletedProcess with text output."""
    argv = [*prefix, str(binary("zkelectctl")), *args]
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                        env=san_env(), stdin=subprocess.DEVNULL)
    if SAN:
        found = san_findings(cp.stderr)
        if found:
            raise HarnessError(f"sanitizer report from {argv}:\n{found}")
    return cp


def ctl_request(path, cmd, timeout=5.0, half_close=False):
    """Sends one command line to a control socket and returns the whole
    answer (the daemon closes the connection after it)."""
    return ctl_request_raw(path, cmd, timeout, half_close).decode(
        errors="replace")


def ctl_request_raw(path, cmd, timeout=5.0, half_close=False):
    """The same answer as bytes, so that invalid UTF-8 would show."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
        data = cmd.encode() if isinstance(cmd, str) else cmd
        try:
            s.sendall(data + b"\n")
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass    # the daemon may answer and close before reading it all
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        s.close()


class Daemon:
    """One zkelectd process with its own config, socket, status file, log
    and hook settings, all under workdir/<id>/."""

    def __init__(self, election, id, data="", hooks=True, options=None,
                 env=None, socket_path=None):
        self.election = election
        self.id = id
        self.data = data
        self.dir = election.dir / id
        self.dir.mkdir(parents=True, exist_ok=True)
        if socket_path == "default":
            self.socket = Path("/run/zkelectd") / f"{election.service}.sock"
        elif socket_path:
            self.socket = Path(socket_path)
        else:
            self.socket = self.dir / "ctl.sock"
        self.status_file = self.dir / "status"
        self.log_path = self.dir / "zkelectd.log"
        self.conf_path = self.dir / "zkelectd.conf"
        self.hookconf = self.dir / "hook.conf"
        self.envlog = self.dir / "hookenv.log"
        self.pidfile = self.dir / "hang.pids"
        self.proc = None
        self.returncode = None
        self.san_report = None
        self.extra_env = dict(env or {})
        self.wrapper = []       # argv put before zkelectd's, e.g. prlimit
        self.exe = None         # another zkelectd binary than binary()'s
        self.options = {
            "zookeeper.hosts": election.zk_hosts,
            "zookeeper.session_timeout": f"{election.session_timeout_ms}ms",
            # The servers' real tickTime: the lease's report lag rests on it.
            "zookeeper.tick_time": f"{election.tick_ms}ms",
            "election.service": election.service,
            "election.id": id,
            "election.data": data,
            "control.socket": str(self.socket),
            "control.status_file": str(self.status_file),
            "control.log_level": "debug",
        }
        if socket_path == "default":
            del self.options["control.socket"]
        if hooks:
            self.options["hooks.promote"] = f"{RECORD_HOOK} promote"
            self.options["hooks.demote"] = f"{RECORD_HOOK} demote"
        self.options.update(options or {})
        self.hook_conf()

    # -- configuration

    def write_config(self):
        sections = {}
        for key, value in self.options.items():
            if value is None:
                continue
            section, name = key.split(".", 1)
            sections.setdefault(section, []).append(f"{name} = {value}")
        text = "".join(f"[{s}]\n" + "\n".join(lines) + "\n\n"
                       for s, lines in sections.items())
        self.conf_path.write_text(text)

    def hook_conf(self, **settings):
        """Sets how the test hook behaves from its next run on, e.g.
        hook_conf(promote_exit=1, demote_sleep=0.2, promote_hang=1)."""
        lines = []
        for k, v in settings.items():
            event, what = k.split("_", 1)
            assert what in ("sleep", "exit", "hang"), k
            lines.append(f"ZKT_{what.upper()}_{event.upper()}={shlex.quote(str(v))}")
        tmp = self.hookconf.with_suffix(".tmp")
        tmp.write_text("".join(l + "\n" for l in lines))
        os.replace(tmp, self.hookconf)

    # -- life cycle

    def start(self, wait=True, timeout=15):
        assert not self.alive(), f"{self.id} already running"
        self.write_config()
        env = san_env()
        env.update({
            "ZKT_HISTORY": str(self.election.history),
            "ZKT_HOOKCONF": str(self.hookconf),
            "ZKT_ENVLOG": str(self.envlog),
            "ZKT_PIDFILE": str(self.pidfile),
        })
        env.update(self.extra_env)
        self.returncode = None
        self.election.mark(self.id, "started")
        log = open(self.log_path, "ab")
        try:
            log.write(f"==== zkelectd -c {self.conf_path} ({time.strftime('%T')})\n"
                      .encode())
            log.flush()
            exe = self.exe or binary("zkelectd")
            self.proc = _spawn(self.wrapper + [str(exe), "-c",
                                str(self.conf_path)],
                               f"zkelectd {self.id}", stdout=log,
                               stderr=subprocess.STDOUT, env=env)
        finally:
            log.close()
        if wait:
            self.wait_ready(timeout)
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _check_alive(self):
        if self.proc is not None and self.proc.poll() is not None:
            self._after_exit(self.proc.returncode, "exited")
            raise HarnessError(f"zkelectd {self.id} exited with "
                               f"{self.returncode}\n{self.log_tail()}")

    def wait_ready(self, timeout=15):
        def ready():
            self._check_alive()
            return self.ctl("ping").strip() == "pong"
        return wait_for(ready, timeout, f"{self.id} to answer ping")

    def stop(self, timeout=20):
        """SIGTERM and wait; returns the exit status."""
        if not self.alive():
            return self.returncode
        rc = _reap(self.proc, signal.SIGTERM, timeout)
        self._after_exit(rc, "exited")
        return rc

    def kill(self):
        """SIGKILL (a crash of the daemon's host, as far as the history
        file is concerned: its leadership ends here)."""
        if not self.alive():
            return self.returncode
        rc = _reap(self.proc, signal.SIGKILL, 10)
        self._after_exit(rc, "killed")
        return rc

    def reload(self, options):
        """Rewrites the file with `options` changed, sends SIGHUP and waits
        until the daemon says the reload is over (applied or refused, key
        by key); returns the log written since."""
        mark = len(self.log_text())
        moving = "zookeeper.hosts" in options and \
            options["zookeeper.hosts"] != self.options.get("zookeeper.hosts")
        self.options.update(options)
        self.write_config()
        self.signal(signal.SIGHUP)
        wait_for(lambda: re.search(r"configuration reloaded|keeping the running",
                                   self.log_text()[mark:]), 5,
                 "the reload to end")
        # A new host list is resolved off the loop: its outcome comes after.
        if moving and "keeping the running" not in self.log_text()[mark:]:
            wait_for(lambda: re.search(
                r"reload: zookeeper\.hosts \S+ (refused|-> )",
                self.log_text()[mark:]), 15, "the host list's outcome")
        return self.log_text()[mark:]

    def signal(self, sig):
        os.kill(self.proc.pid, sig)

    def wait_exit(self, timeout):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"{self.id} did not exit within {timeout}s") from None
        _unregister(self.proc)
        self._after_exit(rc, "exited")
        return rc

    def _after_exit(self, rc, how):
        if self.returncode is not None and self.proc is None:
            return
        self.returncode = rc
        self.election.mark(self.id, how, rc)
        if self.proc is not None:
            _unregister(self.proc)
        self.proc = None
        if SAN:
            self.san_report = san_findings(self.log_text())

    # -- observing

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines=60):
        return "\n".join(self.log_text().splitlines()[-lines:])

    def outages(self, since=0.0):
        """[(start, seconds)] the daemon spent between a lost connection
        and the next one, from its log (wall-clock start, from `since`); a
        connection still lost counts up to now."""
        out, lost = [], None
        for line in self.log_text().splitlines():
            m = OUTAGE_LINE.match(line)
            if not m:
                continue
            t = datetime.fromisoformat(
                m.group(1).replace("Z", "+00:00")).timestamp()
            if m.group(2) == "connecting" and lost is None:
                lost = t
            elif m.group(2) == "connected" and lost is not None:
                if lost >= since:
                    out.append((lost, round(t - lost, 3)))
                lost = None
        if lost is not None and lost >= since:
            out.append((lost, round(time.time() - lost, 3)))
        return out

    def hook_spans(self, kind, since=0.0, killed_only=False):
        """[(start, end or None)] wall-clock spans of this daemon's `kind`
        hooks that started at or after `since`, from its own log: from the
        spawn to the reaping of the hook's shell. Unlike the history that
        record.sh writes, a hook killed before its first line is in it.
        With killed_only, only the runs a signal ended (or not over yet):
        record.sh wrote both lines of every other, and the log's stamps
        may lag them by the daemon's wait for a CPU (138 ms seen beside
        another suite), too far to tell them apart."""
        spans, open_ = [], {}
        for line in self.log_text().splitlines():
            m = HOOK_LINE.match(line)
            if not m or m.group(2) != kind:
                continue
            t = datetime.fromisoformat(
                m.group(1).replace("Z", "+00:00")).timestamp()
            if m.group(4) == "started" and t >= since:
                open_[m.group(3)] = len(spans)
                spans.append([t, None, True])
            elif m.group(4) == "over" and m.group(3) in open_:
                i = open_.pop(m.group(3))
                spans[i][1] = t
                spans[i][2] = HOOK_SIGNALLED.search(line) is not None
        return [(a, b) for a, b, killed in spans
                if killed or not killed_only]

    def away_since(self, t0):
        """The longest time the daemon went without its quorum's answers
        after a fault made at wall-clock t0 (a server stopped): its
        outages from t0 on, the first counted from t0 itself, since the
        quorum may stop answering at the fault, well before the server the
        daemon is connected to drops it (a JVM slow to shut down, on a
        loaded machine). The lease also counts the time since its last
        confirmation before t0: up to a sync step (T/10) plus a round
        trip, which the callers leave as a margin."""
        outages = self.outages(since=t0 - 0.5)
        return max([s for _, s in outages] +
                   [start + s - t0 for start, s in outages[:1] if start > t0],
                   default=0.0)

    def ctl(self, cmd, timeout=5.0, half_close=False):
        return ctl_request(self.socket, cmd, timeout, half_close)

    def role(self):
        return self.ctl("role").strip()

    def leader(self):
        return parse_kv(self.ctl("leader"))

    def members(self):
        """[(seq, id, data), ...] in queue order."""
        out = []
        for line in self.ctl("members").splitlines():
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) == 2:
                parts.append("")
            if len(parts) != 3:
                raise HarnessError(f"{self.id}: bad members line {line!r}")
            out.append(tuple(parts))
        return out

    def status(self):
        return parse_kv(self.status_file.read_text())

    def wait_role(self, role, timeout=10):
        def get():
            self._check_alive()
            return self.role()
        wait_value(get, role, timeout, f"{self.id} role {role}",
                   lambda: "\n" + self.log_tail())

    def hook_env_runs(self):
        """The environment of each hook run: [(event, {NAME: value})]."""
        runs = []
        try:
            text = self.envlog.read_text()
        except FileNotFoundError:
            return runs
        for line in text.splitlines():
            if line.startswith("--- "):
                runs.append((line[4:].strip(), {}))
            elif "=" in line and runs:
                k, v = line.split("=", 1)
                runs[-1][1][k] = v
        return runs

    def hang_pids(self):
        """(pgid, [pids]) written by a hanging hook, or None."""
        try:
            words = self.pidfile.read_text().split()
        except FileNotFoundError:
            return None
        if len(words) < 2:
            return None
        return int(words[0]), [int(w) for w in words[1:]]


def data_of(i):
    return f"10.0.0.{i}:5432"


def start_in_order(election, n=3, options=None):
    """Starts node1..nN one after the other, so that the queue order is the
    start order: node1 leads, the others follow."""
    daemons = []
    for i in range(1, n + 1):
        d = election.daemon(f"node{i}", data=data_of(i), options=options)
        d.wait_role("leader" if i == 1 else "follower", timeout=15)
        daemons.append(d)
    assert election.wait_one_leader() is daemons[0]
    return daemons


def member_ids(d):
    return [m[1] for m in d.members()]


def wait_members(d, ids, timeout=10):
    try:
        wait_for(lambda: member_ids(d) == ids, timeout, f"{d.id} members {ids}")
    except HarnessError as e:
        raise HarnessError(f"{e}; members now: {d.members()}") from None


def service_name(test_name):
    base = re.sub(r"[^A-Za-z0-9._-]", "-", test_name)[:48].strip("-.") or "t"
    return f"{base}-{os.urandom(3).hex()}"


class Election:
    """The daemons of one test: one election service, one temporary
    directory, one hook history file."""

    def __init__(self, zk_hosts, test_name, session_timeout_ms=3000,
                 tick_ms=200):
        self.zk_hosts = zk_hosts
        self.service = service_name(test_name)
        self.session_timeout_ms = session_timeout_ms
        self.tick_ms = tick_ms  # the servers' (ZkServer's default)
        self.dir = make_tmpdir("zke-")
        self.history = self.dir / "history"
        self.history.touch()
        self.daemons = {}
        self.final_logs = None

    @property
    def path(self):
        return f"/zkelectd/{self.service}"

    def daemon(self, id, start=True, **kw):
        d = Daemon(self, id, **kw)
        self.daemons[id] = d
        if start:
            d.start()
        return d

    def live(self):
        return [d for d in self.daemons.values() if d.alive()]

    def mark(self, id, what, rc=None):
        """A harness line in the history: started, exited, killed."""
        line = f"{time.time():.9f} {id} {what} - {'-' if rc is None else rc} -\n"
        with open(self.history, "a") as f:
            f.write(line)

    def events(self):
        return read_history(self.history)

    def wait_one_leader(self, timeout=15, daemons=None):
        """Waits until exactly one of the live candidates says `leader`, the
        others say `follower`, and all name the same leader; returns it."""
        state = {}

        def settled():
            ds = daemons or self.live()
            for d in ds:
                d._check_alive()
            roles = {d.id: d.role() for d in ds}
            leaders = {d.id: d.leader().get("id") for d in ds}
            state.update(roles=roles, leaders=leaders)
            lead = [d for d in ds if roles[d.id] == "leader"]
            if len(lead) != 1:
                return None
            if any(r != "follower" for i, r in roles.items() if i != lead[0].id):
                return None
            if set(leaders.values()) != {lead[0].id}:
                return None
            return lead[0]
        try:
            return wait_for(settled, timeout, "exactly one leader")
        except HarnessError as e:
            raise HarnessError(f"{e}; last state: {state}") from None

    def check_invariants(self, allow_unfinished=()):
        evs = self.events()
        check_no_overlap(self.with_log_ends(evs))
        check_alternation(self.with_log_ends(evs, need_start=True),
                          allow_unfinished)

    def with_log_ends(self, events, need_start=False):
        """The history with the ends of killed demote hooks taken from the
        daemons' logs (add_log_ends())."""
        return add_log_ends(events, {d.id: d.hook_spans("demote",
                                                        killed_only=True)
                                     for d in self.daemons.values()},
                            need_start)

    def collect_logs(self):
        if self.final_logs is not None:
            return self.final_logs
        logs = {f"zkelectd {d.id}": d.log_tail(150) for d in self.daemons.values()}
        try:
            logs["hook history"] = self.history.read_text()
        except OSError:
            pass
        return logs

    def close(self):
        """Stops every daemon still running; returns the sanitizer reports
        and the daemons that did not exit 0 on SIGTERM."""
        problems = []
        # Followers first and with well-behaved hooks, so that stopping
        # does not hand leadership around (or to a hanging hook).
        for d in self.daemons.values():
            d.hook_conf()
        order = list(self.daemons.values())
        for d in order:
            try:
                if d.alive() and d.role() == "leader":
                    order.remove(d)
                    order.append(d)
                    break
            except OSError:
                pass
        for d in order:
            if d.alive():
                rc = d.stop()
                if rc != 0:
                    problems.append(f"zkelectd {d.id} exited {rc} on SIGTERM at teardown")
        for d in self.daemons.values():
            if d.san_report:
                problems.append(f"sanitizer report in zkelectd {d.id}'s log:\n"
                                f"{d.san_report}")
        self.final_logs = None
        self.final_logs = self.collect_logs()
        remove_tmpdir(self.dir)
        return problems


# A daemon's log line about its session: connecting, connected, expired.
OUTAGE_LINE = re.compile(r"(\S+) zkelectd: zookeeper session \S+: (\S+)")
HOOK_LINE = re.compile(r"(\S+) zkelectd: hook (\w+)\[(\d+)\]: (started|over):")
HOOK_SIGNALLED = re.compile(r": over: code -?\d+ signal [1-9]")


# ---------------------------------------------------------------- history

MARKERS = ("started", "exited", "killed")


@dataclass
class Event:
    n: int          # line number: the order of writes to the file
    ts: float
    id: str
    event: str      # promote, demote, fence, check, or a marker
    phase: str      # start, end, or "-" for markers
    epoch: str
    reason: str

    def __str__(self):
        return (f"#{self.n} {self.id} {self.event} {self.phase} "
                f"epoch={self.epoch} reason={self.reason}")


def read_history(path):
    # Every record ends with a newline; a last line without one is a write
    # still under way (a reader may see the first part of an append that
    # straddles a page), not a record yet.
    lines = Path(path).read_text().split("\n")[:-1]
    events = []
    for n, line in enumerate(lines, 1):
        f = line.split()
        if len(f) != 6:
            raise ValueError(f"history line {n} malformed: {line!r}")
        events.append(Event(n, float(f[0]), f[1], f[2], f[3], f[4], f[5]))
    return events


@dataclass
class Interval:
    id: str
    start: Event            # promote start
    end: Event | None       # demote end or kill marker; None = still open

    def overlaps(self, other):
        a_end = self.end.n if self.end else float("inf")
        b_end = other.end.n if other.end else float("inf")
        return self.start.n < b_end and other.start.n < a_end

    def __str__(self):
        return f"{self.id} [{self.start} .. {self.end or 'open'}]"


def leadership_intervals(events):
    """Per daemon, the spans from a promote hook's start to the end of the
    demote hook that follows it (or to a SIGKILL of the daemon, or open)."""
    out = []
    open_by_id = {}
    for e in events:
        if e.event == "promote" and e.phase == "start":
            if e.id not in open_by_id:
                open_by_id[e.id] = Interval(e.id, e, None)
                out.append(open_by_id[e.id])
        elif (e.event == "demote" and e.phase == "end") or e.event == "killed":
            iv = open_by_id.pop(e.id, None)
            if iv:
                iv.end = e
    return out


def add_log_ends(events, demote_spans, need_start=False):
    """The history, with the end of every demote hook that record.sh did
    not live to write (killed at hooks.demote_timeout, on a loaded machine
    before its last line or even its first) taken from the daemon's own
    log: demote_spans maps an id to its [(spawned, reaped)] from
    Daemon.hook_spans(). Each end is put after every line stamped before
    the reaping, so it is never earlier than the kill: a late end only
    makes I1 stricter, and for I2 a hook that started before the killed
    one was reaped is still seen to start while it runs. With need_start
    (for I2), a hook that record.sh wrote no line of gets its start too,
    at its spawn per the log. Returns new Events, renumbered; the input is
    not changed."""
    out = [replace(e) for e in events]
    for id_, spans in demote_spans.items():
        ends = [e.ts for e in events
                if e.id == id_ and e.event == "demote" and e.phase == "end"]
        starts = [e.ts for e in events
                  if e.id == id_ and e.event == "demote" and
                  e.phase == "start"]
        for start, over in spans:
            if over is None or any(start - 0.05 <= t <= over + 0.05
                                   for t in ends):
                continue
            if need_start and not any(start - 0.05 <= t <= over + 0.05
                                      for t in starts):
                # Killed before record.sh's first line (a frozen leader
                # woke with a few ms of lease left): its spawn, per the log.
                at = len(out)
                while at > 0 and out[at - 1].ts > start:
                    at -= 1
                out.insert(at, Event(0, start, id_, "demote", "start", "-",
                                     "spawned-per-log"))
            at = len(out)
            while at > 0 and out[at - 1].ts > over:
                at -= 1
            out.insert(at, Event(0, over, id_, "demote", "end", "-",
                                 "reaped-per-log"))
    for n, e in enumerate(out, 1):
        e.n = n
    return out


def check_no_overlap(events):
    """I1: no two daemons' [promote start, demote end] intervals overlap."""
    ivs = leadership_intervals(events)
    for i, a in enumerate(ivs):
        for b in ivs[i + 1:]:
            if a.id != b.id and a.overlaps(b):
                raise AssertionError(f"I1 violated: leaderships overlap:\n  {a}\n  {b}")


def check_alternation(events, allow_unfinished=()):
    """I2: per daemon, hooks never overlap and promote/demote alternate
    (a fence may only come right before a promote). allow_unfinished names
    (id, event) pairs whose start may lack an end (a hook killed at its
    timeout)."""
    state = {}  # id -> (open hook Event or None, last finished event name)
    for e in events:
        open_ev, last = state.get(e.id, (None, None))
        if e.event in MARKERS:
            if e.event == "started":
                state[e.id] = (None, None)
            continue
        if e.phase == "start":
            if open_ev is not None:
                # A check is SIGKILLed (no end line) when a demote needs
                # the slot; the daemon waits until its group is gone.
                if (open_ev.event != "check" and
                        (open_ev.id, open_ev.event) not in allow_unfinished):
                    raise AssertionError(f"I2 violated: {e} while {open_ev} runs")
                # Killed at its timeout: it counts as having run.
                if open_ev.event != "check":
                    last = open_ev.event
            if e.event == "check":
                state[e.id] = (e, last)
                continue
            if e.event in ("promote", "demote") and last == e.event:
                raise AssertionError(f"I2 violated: {e} follows another {last}")
            if last == "fence" and e.event != "promote":
                raise AssertionError(f"I2 violated: {e} after a fence")
            state[e.id] = (e, last)
        elif e.phase == "end":
            if open_ev is None or open_ev.event != e.event:
                raise AssertionError(f"I2 violated: {e} without its start "
                                     f"(open: {open_ev})")
            state[e.id] = (None, last if e.event == "check" else e.event)
        else:
            raise AssertionError(f"bad history phase: {e}")


def hook_runs(events, id=None, event=None):
    """[(start Event, end Event or None)] of hook runs, filtered."""
    runs, open_ = [], {}
    for e in events:
        if e.event in MARKERS:
            continue
        if e.phase == "start":
            open_[(e.id, e.event)] = len(runs)
            runs.append([e, None])
        elif e.phase == "end":
            i = open_.pop((e.id, e.event), None)
            if i is not None:
                runs[i][1] = e
    return [tuple(r) for r in runs
            if (id is None or r[0].id == id) and (event is None or r[0].event == event)]


# ---------------------------------------------------------------- cut-off ensemble

ELECTION_V1, ELECTION_V2 = -65536, -65535   # QuorumCnxManager protocol versions
# A follower whose connection to its new leader is refused retries for
# initLimit x tickTime; behind a proxy its connect succeeds and only the
# proxy sees the refusal (the leader has not bound its port yet), so the
# proxy retries instead (without this, the follower gets an end of stream,
# gives up, and the new leader waits initLimit x tickTime for it in vain).
PEER_CONNECT_RETRY_S = 3.0


def _peer_cfg(text, init_limit, sync_limit):
    """A server's zoo.cfg with its own initLimit and syncLimit."""
    text = re.sub(r"^initLimit=\d+$", f"initLimit={init_limit}", text, flags=re.M)
    return re.sub(r"^syncLimit=\d+$", f"syncLimit={sync_limit}", text, flags=re.M)


def _announce_via(data, port):
    """Rewrites the first message of a ZooKeeper election connection (the
    initiator's protocol version, server id and its own election address)
    so that it announces 127.0.0.1:port instead; None while data is too
    short to tell, data unchanged when it is no such message.

    A server that receives a connection from a server with a lower id
    drops it and connects back to the address announced there, not to the
    one its configuration names (QuorumCnxManager.handleConnection): without
    this, that link would bypass the proxies."""
    if len(data) < 8:
        return None
    (version,) = struct.unpack_from("!q", data, 0)
    if version not in (ELECTION_V1, ELECTION_V2):
        return data
    if len(data) < 20:
        return None
    sid, n = struct.unpack_from("!qi", data, 8)
    if n <= 0 or n > 1024:
        return data
    if len(data) < 20 + n:
        return None
    addr = f"127.0.0.1:{port}".encode()
    return (struct.pack("!qqi", version, sid, len(addr)) + addr
            + data[20 + n:])


def free_ports_outside_ephemeral(n):
    """n ports for servers behind proxies: the same reservation as
    free_ports() (outside the ephemeral range, locked against concurrent
    runs; see ports.py)."""
    return reserve_ports(n)


class CutEnsemble:
    """A ZooKeeper ensemble on loopback (three servers by default) whose
    server-to-server links all go through fault-injecting proxies, so that
    a test can silently cut one server off from the others: cut_off(sid)
    freezes every quorum and election connection to and from server sid
    (traffic stops, connections stay open, nobody sees a reset), heal(sid)
    lets it flow again. Clients reach the servers directly (hosts,
    hosts_of(sid...)); a client session opened before the cut stays
    connected to a cut-off follower, a new one cannot be opened there (the
    leader creates sessions).

    Each ordered pair of servers (i, j) has its own proxy, links[(i, j)],
    carrying i's connections to j's quorum port (upstream 0) and election
    port (upstream 1); in server i's zoo.cfg the `server.j` line names that
    proxy, its own line its real ports. The election connections'
    announced addresses are rewritten to point at the reverse link
    (_announce_via).

    A cut-off follower notices only when it has heard nothing from the
    leader for syncLimit x tickTime (the socket timeout of its link) and
    keeps serving its clients' reads and pings until then; the defaults
    (200 ms x 30 = 6 s) leave a follower cut off from its quorum serving
    for longer than the session timeouts the tests use (2-4 s).

    start() brings up servers 1..n-1 first and then server n, so that server
    n is a follower: the one a test cuts off by default (`victim`); the
    leader (leader_sid()) can be cut off as well. close() kills everything;
    use it as a context manager or from a fixture's finally.
    """

    def __init__(self, size=3, tick_ms=200, init_limit=30, sync_limit=30,
                 min_session_ms=None, max_session_ms=60000):
        from proxy import ZkProxy       # proxy.py lives beside this file
        if size < 3:
            raise ValueError("an ensemble to cut a server off has >= 3 servers")
        self.size = size
        self.tick_ms = tick_ms
        self.init_limit = init_limit
        self.sync_limit = sync_limit
        self.dir = make_tmpdir("zkt-zk-")
        self.sids = list(range(1, size + 1))
        self.links = {}
        self.cut = {}                   # sid -> time.time() of its cut_off
        self.servers = []
        ports = free_ports_outside_ephemeral(3 * size)
        self.real = {sid: tuple(ports[3 * (sid - 1):3 * sid]) for sid in self.sids}
        try:
            for i in self.sids:
                for j in self.sids:
                    if i != j:
                        _, q, e = self.real[j]
                        self.links[(i, j)] = ZkProxy(
                            [("127.0.0.1", q), ("127.0.0.1", e)],
                            name=f"zk{i}->zk{j}",
                            rewrite_head=self._rewriter(i, j),
                            connect_retry_s=PEER_CONNECT_RETRY_S)
            for i in self.sids:
                quorum = []
                for j in self.sids:
                    if i == j:
                        quorum.append((j, self.real[j][1], self.real[j][2]))
                    else:
                        quorum.append((j, *self.links[(i, j)].ports))
                s = ZkServer(self.dir / f"zk{i}", self.real[i][0], tick_ms,
                             min_session_ms, max_session_ms, myid=i,
                             quorum=quorum)
                s.cfg.write_text(_peer_cfg(s.cfg.read_text(), init_limit,
                                           sync_limit))
                self.servers.append(s)
        except BaseException:
            self.close()
            raise

    def _rewriter(self, i, j):
        def rewrite(index, data):
            if index != 1:
                return data             # quorum port: nothing to rewrite
            # i announces itself; j must reach i through the link (j, i).
            return _announce_via(data, self.links[(j, i)].ports[1])
        return rewrite

    # -- servers

    @property
    def sync_window_s(self):
        """How long a cut-off follower goes on serving: syncLimit x tickTime."""
        return self.sync_limit * self.tick_ms / 1000

    def server(self, sid):
        """The ZkServer with id sid (1-based, as in zoo.cfg)."""
        return self.servers[sid - 1]

    @property
    def victim(self):
        return self.size

    @property
    def hosts(self):
        return ",".join(s.hostport for s in self.servers)

    def hosts_of(self, *sids):
        return ",".join(self.server(sid).hostport for sid in sids)

    def others(self, sid):
        return [s for s in self.sids if s != sid]

    def start(self, timeout=60):
        """Starts the first n-1 servers, waits for their quorum, then the
        last; returns the modes by server id."""
        deadline = time.monotonic() + timeout
        try:
            for s in self.servers[:-1]:
                s.start()
            for s in self.servers[:-1]:
                s.wait_serving(max(0.1, deadline - time.monotonic()))
            self.server(self.victim).start()
            self.server(self.victim).wait_serving(max(0.1, deadline - time.monotonic()))
        except HarnessError as e:
            raise HarnessError(f"{e}\n{self.log_report()}") from None
        modes = self.modes()
        if modes[self.victim] != "follower":
            raise HarnessError(f"server {self.victim} is no follower: {modes}")
        return modes

    def modes(self):
        return {sid: self.server(sid).mode() for sid in self.sids}

    def leader_sid(self):
        for sid, m in self.modes().items():
            if m == "leader":
                return sid
        return None

    def bypassing_connections(self):
        """Established connections to a server's real quorum or election
        port that do not come from one of the proxies, as
        [(server port, peer port)]: links the proxies cannot cut. Empty
        when every server-to-server link goes through the proxies."""
        real = {p for sid in self.sids for p in self.real[sid][1:]}
        proxied = set()
        for p in self.links.values():
            proxied.update(p.upstream_ports())
        out = []
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            f = line.split()
            local, remote, state = f[1], f[2], f[3]
            if state != "01":               # ESTABLISHED
                continue
            lport = int(local.split(":")[1], 16)
            rport = int(remote.split(":")[1], 16)
            if lport in real and rport not in proxied:
                out.append((lport, rport))
        return out

    # -- faults

    def server_links(self, sid):
        """Every link to or from server sid."""
        return [p for (i, j), p in self.links.items() if sid in (i, j)]

    def cut_off(self, sid=None, verify=True):
        """Freezes all of server sid's quorum and election links (both
        directions); returns the time.time() just before the first freeze.
        With verify, then shows that the cut is real (verify_cut)."""
        sid = sid or self.victim
        probe = self._probe(sid) if verify else None
        try:
            t = time.time()
            for p in self.server_links(sid):
                p.freeze()
            self.cut[sid] = t
            if probe is not None:
                self.verify_cut(sid, probe)
        finally:
            if probe is not None:
                probe.close()
        return t

    def _probe(self, sid):
        from zkraw import RawZk
        return RawZk("127.0.0.1", self.server(sid).port, timeout_ms=10000)

    def verify_cut(self, sid, probe, timeout=10, hold=0.5):
        """A write through the other servers succeeds within timeout (the
        quorum goes on without server sid), while probe, a session on server
        sid opened before the cut, does not see it for `hold` seconds (a
        server in the quorum sees a write within milliseconds). A new session
        cannot be opened on a cut-off follower (the leader creates sessions),
        hence the probe. Returns the probe's path."""
        from kazoo.exceptions import NoNodeError
        from kazoo.protocol.serialization import Exists
        path = f"/zkt-cut-{os.urandom(4).hex()}"
        with _kazoo(self.hosts_of(*self.others(sid)), timeout=10) as quorum:
            try:
                quorum.create_async(path, b"").get(timeout=timeout)
            except Exception as e:
                raise HarnessError(f"the quorum without server {sid} did not "
                                   f"take a write within {timeout}s: {e!r}") from None
        end = time.monotonic() + hold
        while True:
            try:
                probe.call(Exists(path, False), timeout=5)
                raise HarnessError(f"server {sid} saw {path}: it is not cut off")
            except NoNodeError:
                pass
            if time.monotonic() >= end:
                return path
            time.sleep(POLL)

    def heal(self, sid=None):
        """Lets server sid's links flow again; returns the time.time()."""
        sid = sid or self.victim
        for p in self.server_links(sid):
            p.thaw()
        self.cut.pop(sid, None)
        return time.time()

    def heal_all(self):
        errors = []
        for p in self.links.values():
            try:
                p.thaw()
            except Exception as e:  # noqa: BLE001 - reported, teardown goes on
                errors.append(f"{p.name}: {e!r}")
        self.cut.clear()
        return errors

    def wait_rejoined(self, sid=None, timeout=60):
        """After heal(): waits until server sid follows again and has the
        quorum's latest write (a probe written through another server)."""
        from kazoo.client import KazooClient
        sid = sid or self.victim
        deadline = time.monotonic() + timeout
        path = f"/zkt-rejoin-{os.urandom(4).hex()}"
        with _kazoo(self.hosts_of(*self.others(sid)), timeout=10) as quorum:
            quorum.create(path, b"")
            try:
                def caught_up():
                    if self.server(sid).mode() != "follower":
                        return False
                    c = KazooClient(hosts=self.server(sid).hostport, timeout=10)
                    try:
                        c.start(timeout=max(0.5, min(5, deadline - time.monotonic())))
                        return c.exists(path) is not None
                    finally:
                        c.stop()
                        c.close()
                wait_for(caught_up, max(0.1, deadline - time.monotonic()),
                         f"server {sid} to rejoin the quorum", interval=0.2)
            finally:
                quorum.delete(path)

    # -- teardown

    def close(self):
        """Kills every server, closes every proxy, removes the directory;
        safe to call more than once and after a partial __init__."""
        for s in self.servers:
            try:
                s.kill()
            except Exception:  # noqa: BLE001 - go on with the others
                pass
        for p in self.links.values():
            try:
                p.close()
            except Exception:  # noqa: BLE001
                pass
        remove_tmpdir(self.dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def log_report(self, lines=40):
        return "\n".join(f"---- zookeeper {sid} :{self.server(sid).port}\n"
                         f"{self.server(sid).log_tail(lines)}"
                         for sid in self.sids if sid <= len(self.servers))

    def log_tails(self, lines=40):
        return {f"zookeeper {sid} :{self.server(sid).port}": self.server(sid).log_tail(lines)
                for sid in self.sids if sid <= len(self.servers)}


class _kazoo:
    """A started KazooClient as a context manager, stopped and closed on
    the way out however the block ends."""

    def __init__(self, hosts, timeout=10, start_timeout=20, **kw):
        from kazoo.client import KazooClient
        self.client = KazooClient(hosts=hosts, timeout=timeout, **kw)
        self.start_timeout = start_timeout

    def __enter__(self):
        self.client.start(timeout=self.start_timeout)
        return self.client

    def __exit__(self, *exc):
        try:
            self.client.stop()
        finally:
            self.client.close()


kazoo_client = _kazoo
