#!/usr/bin/python3
"""A deletion's notification between two processes, as at a handoff.

The floors phase's bare figures (bench.py) have both sessions in one
process, which has just sent the delete when the event arrives: a warm
reader. At a handoff the watcher is another process that has slept
through the quiet. Here the watching session lives in a child process,
blocked in recv() for the whole pause; the parent deletes (one node, or a
multi of four deletes like zkelectd's release, the last one watched) and
the child stamps the event on CLOCK_MONOTONIC. A bare protocol client on
both sides (tests/integration/zkraw.py: one blocking socket, no threads).

Usage: floor2.py HOST:PORT [N [MULTI [QUIET_S]]]   (prints JSON: the ms)
"""
import json
import os
import pathlib
import struct
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] /
                       "tests" / "integration"))
from kazoo.protocol.serialization import (Create, Delete, Exists,  # noqa: E402
                                          Transaction)
from kazoo.security import OPEN_ACL_UNSAFE  # noqa: E402
from zkraw import RawZk  # noqa: E402


def watcher(host, port, down, up):
    """The child: a watch on each path it is given, then the event's
    instant back to the parent."""
    two = RawZk(host, port, timeout_ms=30000)
    while True:
        path = os.read(down, 512)
        if not path:
            os._exit(0)
        two.call(Exists(path.decode(), True))
        os.write(up, b"k")
        while not two.read(30).is_event:
            pass
        os.write(up, struct.pack("q", time.monotonic_ns()))


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    port = int(port)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    k = 4 if len(sys.argv) > 3 and int(sys.argv[3]) else 1
    quiet = float(sys.argv[4]) if len(sys.argv) > 4 else 0.3
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        watcher(host, port, down_r, up_w)
    os.close(down_r)
    os.close(up_w)
    one = RawZk(host, port, timeout_ms=30000)
    try:
        one.call(Create("/bench-floor2", b"", OPEN_ACL_UNSAFE, 0))
    except Exception:
        pass            # there from an earlier run
    res = []
    for i in range(n):
        paths = [f"/bench-floor2/p{os.getpid()}-{i}-{j}" for j in range(k)]
        for path in paths:
            one.call(Create(path, b"x", OPEN_ACL_UNSAFE, 1))
        os.write(down_w, paths[-1].encode())
        os.read(up_r, 1)
        time.sleep(quiet)
        req = (Transaction([Delete(x, -1) for x in paths]) if k > 1
               else Delete(paths[0], -1))
        t = time.monotonic_ns()
        one.wait_reply(one.send(req))
        fired = struct.unpack("q", os.read(up_r, 8))[0]
        res.append((fired - t) / 1e6)
        time.sleep(0.05)
    os.close(down_w)
    os.waitpid(pid, 0)
    one.close_session()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
