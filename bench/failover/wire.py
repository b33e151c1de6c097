#!/usr/bin/python3
"""The release's way from the old leader to its successor, on the wire.

Reads what static-hook.sh keeps with WIRE=1 and debug: the daemons' logs
(their `trace release` and `trace promote` lines, CLOCK_MONOTONIC µs) and
the ftrace buffer (net_dev_queue on lo, sched_process_exec, on the mono
clock), and splits each handoff after the first two:

  send hop     the release handed to the library -> its first packet
               on the wire (the library's I/O thread woken to send it)
  segments     the first packet -> the last of the release (the C
               library sends a request's 4-byte length and its body with
               two send() calls, so two segments under TCP_NODELAY)
  server       the release's last packet -> the server's first packet
               after it (the release's reply or one of its
               notifications, sent together: the fsync and the way
               through the server's threads)
  successor    that packet -> the last notification handed over by the
               successor's library (the one it promotes on): the rest of
               the server's packets, and the library's two threads
  decide       -> posix_spawn() called
  exec         -> the hook's execve (the kernel)

Usage: wire.py DIR   (prints medians and ranges, µs)
"""
import pathlib
import re
import statistics
import sys

REL = re.compile(r"trace release: .*sent=(\d+)")
PRO = re.compile(r"trace promote\[(\d+)\]: cause=watch\S* queued=(\d+) "
                 r".*spawning=(\d+)")
EV = re.compile(r"\s*(.+?)-(\d+)\s+\[\d+\].{5,7}\s(\d+\.\d+): "
                r"(net_dev_queue|sched_process_exec): (.*)$")
LEN = re.compile(r"len=(\d+)")


def main():
    d = pathlib.Path(sys.argv[1])
    rel, pro = [], []
    for log in sorted(d.glob("*.log")):
        for line in log.read_text().splitlines():
            m = REL.search(line)
            if m:
                rel.append(int(m.group(1)))
            m = PRO.search(line)
            if m:
                pro.append((int(m.group(2)), int(m.group(3)),
                            int(m.group(1))))
    rel.sort()
    pro.sort()
    pkts, execs = [], {}
    for line in (d / "ftrace").read_text().splitlines():
        m = EV.match(line)
        if not m:
            continue
        t = float(m.group(3)) * 1e6
        if m.group(4) == "net_dev_queue":
            n = LEN.search(m.group(5))
            pkts.append((t, m.group(1).strip(), int(n.group(1))))
        else:
            p = re.search(r"\bpid=(\d+)", m.group(5))
            execs.setdefault(int(p.group(1)), t)
    parts = {k: [] for k in ("send hop", "segments", "server", "successor",
                             "decide", "exec")}
    for sent in rel[2:]:
        nxt = [p for p in pro if p[0] > sent]
        if not nxt:
            continue
        queued, spawning, pid = nxt[0]
        # The old leader's own packets: the length (4 bytes: 70 on lo),
        # then the release's body; then the server's first packet (its
        # threads' name, not zkelectd's) with more than a bare length.
        mine = [(t, n) for t, c, n in pkts
                if c == "zkelectd" and sent <= t <= queued]
        if len(mine) < 2 or mine[0][1] != 70:
            continue
        body = mine[1][0]
        server = [t for t, c, n in pkts
                  if c != "zkelectd" and body < t <= queued and n > 70]
        if not server or pid not in execs:
            continue
        parts["send hop"].append(mine[0][0] - sent)
        parts["segments"].append(body - mine[0][0])
        parts["server"].append(server[0] - body)
        parts["successor"].append(queued - server[0])
        parts["decide"].append(spawning - queued)
        parts["exec"].append(execs[pid] - spawning)
    n = len(parts["send hop"])
    print(f"{n} handoffs on the wire; µs, median (min-max):")
    for k, v in parts.items():
        if v:
            print(f"  {k:<10} {statistics.median(v):8.0f} "
                  f"({min(v):.0f}-{max(v):.0f})")


if __name__ == "__main__":
    main()
