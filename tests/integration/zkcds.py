"""A class-data-sharing archive for the test ZooKeeper servers.

A suite starts some sixty JVMs (a server per worker, the ensembles of the
ride-through and model tests, restarts), and each spends most of its
first half second loading and verifying the same few thousand classes of
the JDK and zookeeper.jar: over a run of `make check`, a fifth of the
machine's CPU goes to the JVMs, on two cores that the daemons under test,
the simulator and the builds share. An AppCDS archive maps those classes
ready-made: a server then starts on about two thirds of the CPU (0.39
against 0.58 s measured) and serves sooner (0.30 against 0.47 s).

The archive is made once per machine, JDK and set of jars (its name
carries a digest of them), in /tmp under a lock, by the first test
process that needs it (or the first of each process, while it fails): one server run with -XX:DumpLoadedClassList until
it serves, then `java -Xshare:dump` (about 2 s in all). Whatever goes
wrong, the servers start without it, as before: slower, the same server.
A JVM also refuses an archive made by another JDK or for other jars and
starts without it, so a stale one costs nothing but the warning.
"""

import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ports import reserve as reserve_ports

DIR = Path("/tmp")
PREFIX = "zkelectd-zk-cds-"
SERVE_TIMEOUT = 60      # seconds for the dumping server to serve

_memo = {}              # key -> Path or None, for this process


def _fingerprint(java, classpath, opts):
    """What the archive depends on: the JDK, the jars and the options."""
    h = hashlib.sha256()
    parts = [os.path.realpath(java), *classpath.split(":")]
    for p in parts:
        real = os.path.realpath(p)
        try:
            st = os.stat(real)
            h.update(f"{real} {st.st_size} {st.st_mtime_ns}\n".encode())
        except OSError:
            h.update(f"{real} missing\n".encode())
    h.update(" ".join(opts).encode())
    return h.hexdigest()[:16]


def _serving(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            out = b""
            while True:
                b = s.recv(4096)
                if not b:
                    break
                out += b
        return b"Mode:" in out
    except OSError:
        return False


def _make(path, java, classpath, opts, main):
    """Writes the archive at path, or raises with what failed."""
    work = Path(tempfile.mkdtemp(prefix="zkt-zk-cds-", dir="/tmp"))
    try:
        port = reserve_ports(1)[0]
        (work / "data").mkdir()
        cfg = work / "zoo.cfg"
        cfg.write_text(f"tickTime=200\ndataDir={work / 'data'}\n"
                       f"clientPort={port}\nclientPortAddress=127.0.0.1\n"
                       "admin.enableServer=false\n"
                       "4lw.commands.whitelist=srvr\n")
        # The servers' own logging, so that its classes are archived too.
        (work / "log4j.properties").write_text(
            "log4j.rootLogger=INFO, C\n"
            "log4j.appender.C=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.C.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.C.layout.ConversionPattern=%d %-5p %m%n\n")
        classes = work / "classes.txt"
        log = open(work / "dump.log", "wb")
        proc = subprocess.Popen(
            [java, *opts, f"-XX:DumpLoadedClassList={classes}",
             f"-Dlog4j.configuration=file:{work / 'log4j.properties'}",
             "-cp", classpath, main, str(cfg)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        log.close()
        try:
            deadline = time.monotonic() + SERVE_TIMEOUT
            while not _serving(port):
                if proc.poll() is not None:
                    raise RuntimeError(f"the server exited ({proc.returncode})")
                if time.monotonic() > deadline:
                    raise RuntimeError("the server did not serve")
                time.sleep(0.05)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        r = subprocess.run(
            [java, "-Xshare:dump", f"-XX:SharedClassListFile={classes}",
             f"-XX:SharedArchiveFile={tmp}", *opts, "-cp", classpath],
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120)
        if r.returncode != 0 or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            raise RuntimeError(f"java -Xshare:dump: {r.returncode}: "
                               f"{(r.stdout + r.stderr)[-500:]}")
        os.replace(tmp, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def archive(classpath, opts, main):
    """The archive's path for servers run as `java OPTS -cp CLASSPATH
    MAIN`, made if need be; None when there is none (no java, or it could
    not be made: the reason is in the .failed file beside it). Asked once
    per process."""
    java = shutil.which("java")
    if java is None:
        return None
    key = _fingerprint(java, classpath, opts)
    if key in _memo:
        return _memo[key]
    path = DIR / f"{PREFIX}{key}.jsa"
    failed = path.with_suffix(".failed")
    result = None
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            result = path
        else:
            # Tried again by each test process that finds none: a busy
            # machine's slow server must not leave the suites without it
            # for good. The last failure's reason stays beside it.
            try:
                _make(path, java, classpath, opts, main)
                result = path
                failed.unlink(missing_ok=True)
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                failed.write_text(f"{e}\n")
    _memo[key] = result
    return result
