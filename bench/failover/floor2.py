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

MULTI 2 is zkelectd's release as a successor meets it: five deletes in one
multi (E/leader, the leader's node, its marker, its claim, the breadcrumb
last), the successor watching E/leader, the node, the claim and the
breadcrumb (the last is its signal), a third session watching E/leader that sets its watch
again when it fires (as a follower does), and the deleter, a session of
its own made for the round, closing it as soon as the reply is in (a
daemon that stops). MULTI 3 is the same with the claim deleted first.
MULTI 4 is MULTI 2 as a whole handoff: the deleter first runs hook.sh's
demote and reaps it, the successor runs hook.sh's promote on the
breadcrumb's event (both spawned as zkelectd spawns a plain hook line), and the figure
is the handoff gap, the promote's first line less the demote's last.

The company of MULTI 2-4 can be taken away, to see what it costs the
successor: FLOOR2_NO_THIRD=1 runs without the third session, and
FLOOR2_LATE_CLOSE_MS=N has the deleter close its session N ms after the
reply instead of at once (`floor2.sh company` alternates the four variants).

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


HOOK = str(pathlib.Path(__file__).resolve().parent / "hook.sh")


def spawn_hook(event):
    """hook.sh EVENT, exec'd directly as zkelectd runs a plain hook line
    (its own process group, stdin /dev/null)."""
    return os.posix_spawn(HOOK, [HOOK, event, "floor"], os.environ,
                          setpgroup=0, file_actions=[(
                              os.POSIX_SPAWN_OPEN, 0, "/dev/null",
                              os.O_RDONLY, 0)])


def watcher(host, port, down, up, rearm=False, hook=False):
    """A child: a watch on each path it is given (one per line), then the
    instant of the last one's event back to the parent; with rearm, the
    watch of the first path set again at its event (a follower's); with
    hook, hook.sh's promote spawned at that event."""
    two = RawZk(host, port, timeout_ms=30000)
    while True:
        paths = os.read(down, 4096)
        if not paths:
            os._exit(0)
        paths = paths.decode().split("\n")
        for path in paths:
            two.call(Exists(path, True))
        os.write(up, b"k")
        while True:
            f = two.read(30)
            if f.is_event and f.value.path == paths[-1]:
                break
        if hook:
            os.waitpid(spawn_hook("promote"), 0)
        if rearm:       # NONODE: the watch waits for a create
            two.wait_reply(two.send(Exists(paths[0], True)))
        os.write(up, struct.pack("q", time.monotonic_ns()))


def child(host, port, rearm=False, hook=False):
    """A watcher() in a child process: its pipes' parent ends."""
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        watcher(host, port, down_r, up_w, rearm, hook)
    os.close(down_r)
    os.close(up_w)
    return pid, down_w, up_r


def gap(path):
    """The last handoff in hook.sh's lines: promote start - demote end."""
    ns = {}
    for line in pathlib.Path(path).read_text().splitlines():
        t, event, what, _ = line.split()
        ns[(event, what)] = int(t)
    return (ns[("promote", "start")] - ns[("demote", "end")]) / 1e6


def release(host, port, n, quiet, claim_first, hook=False):
    """MULTI 2 and 3 (above): the ms from the multi sent to the last
    watched node's event at the successor; MULTI 4, the handoff gap."""
    succ, s_down, s_up = child(host, port, hook=hook)
    with_third = os.environ.get("FLOOR2_NO_THIRD", "0") != "1"
    late_close = int(os.environ.get("FLOOR2_LATE_CLOSE_MS", "0")) / 1000
    if with_third:
        third, t_down, t_up = child(host, port, rearm=True)
    res = []
    for i in range(n):
        base = f"/bench-floor2/r{os.getpid()}-{i}"
        names = ["leader", "node", "mark", "claim", "crumb"]
        paths = [f"{base}-{x}" for x in names]
        old = RawZk(host, port, timeout_ms=30000)
        for path in paths:
            old.call(Create(path, b"x", OPEN_ACL_UNSAFE, 1))
        os.write(s_down, "\n".join([paths[0], paths[1], paths[3],
                                     paths[4]]).encode())
        if with_third:
            os.write(t_down, paths[0].encode())
        os.read(s_up, 1)
        if with_third:
            os.read(t_up, 1)
        time.sleep(quiet)
        order = ([paths[3]] + paths[:3] + paths[4:] if claim_first
                 else paths)
        if hook:
            os.waitpid(spawn_hook("demote"), 0)
        t = time.monotonic_ns()
        old.wait_reply(old.send(Transaction([Delete(x, -1) for x in order])))
        if late_close:
            time.sleep(late_close)
        old.close_session()
        fired = struct.unpack("q", os.read(s_up, 8))[0]
        res.append(gap(os.environ["BENCH_EVENTS"]) if hook
                   else (fired - t) / 1e6)
        if with_third:
            os.read(t_up, 8)
        time.sleep(0.05)
    os.close(s_down)
    if with_third:      # it holds a copy of s_down: the successor's EOF
        os.close(t_down)
    os.waitpid(succ, 0)
    if with_third:
        os.waitpid(third, 0)
    return res


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    port = int(port)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    multi = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    k = 4 if multi else 1
    quiet = float(sys.argv[4]) if len(sys.argv) > 4 else 0.3
    one = RawZk(host, port, timeout_ms=30000)
    try:
        one.call(Create("/bench-floor2", b"", OPEN_ACL_UNSAFE, 0))
    except Exception:
        pass            # there from an earlier run
    if multi >= 2:
        if multi == 4:
            os.environ["BENCH_EVENTS"] = f"/tmp/floor2-events.{os.getpid()}"
        try:
            res = release(host, port, n, quiet, multi == 3, multi == 4)
        finally:
            if multi == 4 and os.path.exists(os.environ["BENCH_EVENTS"]):
                os.unlink(os.environ["BENCH_EVENTS"])
        one.close_session()
        print(json.dumps(res))
        return
    pid, down_w, up_r = child(host, port)
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
