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
process that needs it (or the first of each process, while it fails):
the harness runs one server with -XX:DumpLoadedClassList until it serves
(zkharness.py, _list_classes), then `java -Xshare:dump` makes the
archive of those classes (about 2 s in all). Whatever goes
wrong, the servers start without it, as before: slower, the same server.
A JVM also refuses an archive made by another JDK or for other jars and
starts without it, so a stale one costs nothing but the warning.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

DIR = Path("/tmp")
PREFIX = "zkelectd-zk-cds-"

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


def _make(path, java, classpath, opts, list_classes):
    """Writes the archive at path, or raises with what failed."""
    work = Path(tempfile.mkdtemp(prefix="zkt-zk-cds-", dir="/tmp"))
    try:
        classes = work / "classes.txt"
        list_classes(classes)
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


def archive(classpath, opts, list_classes):
    """The archive's path for servers run as `java OPTS -cp CLASSPATH`,
    made if need be (list_classes(PATH) runs a server with
    -XX:DumpLoadedClassList=PATH until it serves); None when there is none
    (no java, or it could not be made: the reason is in the .failed file
    beside it). Asked once per process."""
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
                _make(path, java, classpath, opts, list_classes)
                result = path
                failed.unlink(missing_ok=True)
            except (OSError, RuntimeError, AssertionError,
                    subprocess.SubprocessError) as e:
                failed.write_text(f"{e}\n")
    _memo[key] = result
    return result
