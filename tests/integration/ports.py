"""Loopback TCP ports for throwaway ZooKeeper servers, reserved for the
life of the calling process.

A port found free by binding to port 0 is free only a moment: until the
server binds it (a JVM takes a second to get there, and a stopped server
leaves it unbound until its restart) the kernel may hand it out again: to
another bind(0) (a concurrent run's), or, once connect() runs short of the
odd ports it prefers, as the local port of an outgoing connection, up to a
client that reconnects to the stopped server connecting to itself. Then
the server cannot bind and the test fails by chance. So ports are taken

  - outside the kernel's ephemeral range (ip_local_port_range), which
    connect() and bind(0) draw from, so that no socket can get one by
    accident, and
  - under an exclusive lock in LOCK_DIR (one file per port, flock), held
    until the process exits, so that concurrent test runs (another
    checkout's suite, the demo) never pick the same one; a port is also
    checked to be bindable when it is taken.

scripts/zklib.sh reserves its ports the same way, in the same directory.
"""

import fcntl
import os
import random
import socket

LOCK_DIR = "/tmp/zkelectd-ports"
SPAN = 10000            # how many ports below (or above) the ephemeral range

_held = {}              # port -> open lock file, for the process's life


def ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999           # Linux's default
    return lo, hi


def candidates():
    """The ports this module hands out, in a random order."""
    lo, hi = ephemeral_range()
    if lo - SPAN >= 1024:
        pool = range(lo - SPAN, lo)
    else:
        pool = range(hi + 1, min(65536, hi + 1 + SPAN))
    if len(pool) < 100:
        raise RuntimeError(f"no room for test ports outside the ephemeral "
                           f"range {lo}-{hi}")
    ports = list(pool)
    random.SystemRandom().shuffle(ports)
    return ports


def _bindable(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _lock(port):
    """The open, locked lock file of port, or None when another process
    holds it."""
    try:
        os.mkdir(LOCK_DIR)
        os.chmod(LOCK_DIR, 0o1777)      # shared by every user's runs
    except FileExistsError:
        pass
    fd = os.open(os.path.join(LOCK_DIR, str(port)),
                 os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def reserve(n):
    """n distinct loopback ports, reserved until this process exits."""
    got = []
    for port in candidates():
        if len(got) == n:
            break
        if port in _held:
            continue
        fd = _lock(port)
        if fd is None:
            continue
        if not _bindable(port):
            os.close(fd)        # someone else's server: not ours to take
            continue
        _held[port] = fd
        got.append(port)
    if len(got) < n:
        raise RuntimeError(f"only {len(got)} of {n} test ports free")
    return got
