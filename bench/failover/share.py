#!/usr/bin/python3
"""zkelectd's own share of the handoff gap, from its trace lines (issue 21).

Reads the debug logs of the daemons of one run (zkelectd at log_level =
debug writes a `trace promote[PID]` line after each promote it starts and
a `trace release` line after each release it sends, with CLOCK_MONOTONIC
microsecond stamps and the wall clock's offset; see src/trace.h) and the
hooks' events file (bench/failover/hook.sh's `NS EVENT start|end NODE`
lines, or stamp.c's `NS EVENT NODE MONO_NS`), and splits every graceful
handoff's gap, the old leader's demote end -> the successor's promote
hook's first line, into:

  old leader  demote end -> SIGCHLD's turn of the loop (the hook's shell
              exits, the kernel signals, libevent wakes)   [hook end]
              -> the release handed to libzookeeper         [ours]
  ZooKeeper   release sent -> the successor's library hands over the
              first of the release's notifications, then the last, the
              one a prepared heir waits for                 [notification]
  successor   that notification -> the loop drains the queue -> the event
              reaches the daemon -> the core decides to promote -> the
              hook's setup -> posix_spawn() returns, the shell exec'd
                                                            [ours: the share]
  hook        execve -> the hook's first line             [hook start]

The own share, as issue 21 defines it (gap - notification - hook start),
is the successor's part (notification handed over -> execve) plus the old
leader's (SIGCHLD -> release sent); both are printed, with their parts,
per handoff and as medians with min-max.

With --ftrace (a tracefs buffer with sched_process_exec and
sched_process_exit on the "mono" clock, as static-hook.sh records it),
the kernel's own instants replace two of the daemon's: the shell's execve
(posix_spawn() returns later, when the parent runs again, often after the
hook's first line on a busy machine) and the demote hook's exit.

Usage: share.py [--ftrace FILE] [--json OUT] EVENTS LOG...
(each LOG named NODE.log, the node's name in EVENTS)
"""
import argparse
import json
import pathlib
import re
import statistics
import sys

TRACE = re.compile(r"trace (promote|release)(?:\[(\d+)\])?: (.*)$")
WATCH = re.compile(r"watch (-?\d+) on (\S+): (.*)$")
KV = re.compile(r"(\w+)=(\S+)")
FTRACE = re.compile(r"\s(\d+\.\d+): (sched_process_exec|sched_process_exit): "
                    r"(.*)$")


def kv(text):
    return {k: v for k, v in KV.findall(text)}


def num(d, k):
    try:
        v = int(d.get(k, "0"))
    except ValueError:
        return None
    return v if v != 0 else None


def read_log(path):
    """Trace and watch records of one daemon's log, in its order."""
    promotes, releases, watches = [], [], []
    for line in path.read_text(errors="replace").splitlines():
        m = TRACE.search(line)
        if m:
            d = kv(m.group(3))
            rec = {k: num(d, k) for k in d if k != "cause"}
            rec["cause"] = d.get("cause", "")
            if m.group(1) == "promote":
                rec["pid"] = int(m.group(2))
                promotes.append(rec)
            else:
                releases.append(rec)
            continue
        m = WATCH.search(line)
        if m:
            d = kv(m.group(3))
            watches.append({"path": m.group(2),
                            **{k: num(d, k) for k in d}})
    return promotes, releases, watches


def read_events(path):
    """[(node, event, phase, rt_us, mono_us or None)] in file order."""
    out = []
    for line in path.read_text(errors="replace").splitlines():
        f = line.split()
        try:
            if len(f) == 4 and f[2] in ("start", "end"):
                out.append((f[3], f[1], f[2], int(f[0]) / 1000, None))
            elif len(f) == 4:
                # stamp.c: one line, its start, which is also its end.
                out.append((f[2], f[1], "start", int(f[0]) / 1000,
                            int(f[3]) / 1000))
                out.append((f[2], f[1], "end", int(f[0]) / 1000,
                            int(f[3]) / 1000))
        except ValueError:
            continue
    return out


def read_ftrace(path):
    """pid -> {"exec": its first execve (µs): /bin/sh's, or the hook's own
    when zkelectd exec'd it directly; "exit": µs}."""
    procs = {}
    for line in path.read_text(errors="replace").splitlines():
        m = FTRACE.search(line)
        if not m:
            continue
        t = float(m.group(1)) * 1e6
        d = kv(m.group(3))
        try:
            pid = int(d["pid"])
        except (KeyError, ValueError):
            continue
        p = procs.setdefault(pid, {})
        if m.group(2) == "sched_process_exec":
            p.setdefault("exec", t)
        else:
            p["exit"] = t
    return procs


def handoffs(events, logs, procs):
    """One row per promote the trace saw, with the demote before it."""
    rows = []
    for node, (promotes, _, watches) in logs.items():
        for p in promotes:
            if p.get("spawned") is None or p.get("offset") is None:
                continue
            off = p["offset"]

            def mono(e):
                return e[4] if e[4] is not None else e[3] - off
            # The hook's first line: the node's first promote start at or
            # after the setup began.
            starts = [mono(e) for e in events if e[0] == node and
                      e[1] == "promote" and e[2] == "start" and
                      mono(e) >= p["decided"] - 1000]
            if not starts:
                continue
            first_line = min(starts)
            if first_line - p["spawned"] > 1e6:
                continue
            # The old leader: the last demote end of another node before.
            dem = [(mono(e), e[0]) for e in events if e[0] != node and
                   e[1] == "demote" and e[2] == "end" and
                   mono(e) <= first_line]
            if not dem:
                continue
            dem_end, old = max(dem)
            # A graceful handoff takes milliseconds; a crash's takes T.
            if first_line - dem_end > 1e6:
                continue
            row = {"node": node, "old": old, "pid": p["pid"],
                   "cause": p["cause"], "demote_end": dem_end,
                   "first_line": first_line, "gap": first_line - dem_end}
            for k in ("queued", "drained", "delivered", "decided",
                      "entered", "spawning", "spawned"):
                row[k] = p.get(k)
            row["exec"] = procs.get(p["pid"], {}).get("exec")
            # The execve, as the kernel saw it, else posix_spawn's return.
            row["execve"] = row["exec"] or row["spawned"]
            rel = [r for r in logs.get(old, ([], [], []))[1]
                   if r.get("sent") is not None and
                   dem_end - 1000 <= r["sent"] <= first_line]
            # A handoff has a release between; a crash has none.
            if not rel:
                continue
            r = rel[0]
            row["reaped"] = r.get("reaped")
            row["hook_exit"] = procs.get(r.get("hook"), {}).get("exit")
            row["sending"] = r.get("sending")
            row["sent"] = r["sent"]
            # The release's first notification to the successor.
            ws = [w["queued"] for w in watches
                  if w.get("queued") is not None and
                  r["sent"] <= w["queued"] <= first_line]
            if ws:
                row["first_queued"] = min(ws)
            rows.append(row)
    rows.sort(key=lambda r: r["first_line"])
    return rows


# (name, from, to): each part of the gap in ms.
PARTS = [
    ("demote end -> its exit (kernel)", "demote_end", "hook_exit"),
    ("its exit -> SIGCHLD seen by the loop", "hook_exit", "reaped"),
    ("demote end -> SIGCHLD seen", "demote_end", "reaped"),
    ("SIGCHLD -> release sending", "reaped", "sending"),
    ("release: zoo_amulti call", "sending", "sent"),
    ("release sent -> 1st notification", "sent", "first_queued"),
    ("1st -> signal notification", "first_queued", "queued"),
    ("signal queued -> loop drained", "queued", "drained"),
    ("drained -> delivered", "drained", "delivered"),
    ("delivered -> decided", "delivered", "decided"),
    ("decided -> hook_run", "decided", "entered"),
    ("hook_run -> posix_spawn", "entered", "spawning"),
    ("posix_spawn -> execve (kernel)", "spawning", "exec"),
    ("posix_spawn -> its return", "spawning", "spawned"),
    ("execve -> hook's first line", "execve", "first_line"),
]
TOTALS = [
    ("gap", "demote_end", "first_line"),
    ("OWN SHARE (successor): signal -> execve", "queued", "execve"),
    ("successor: signal -> posix_spawn() called", "queued", "spawning"),
    ("old leader: SIGCHLD -> release sent", "reaped", "sent"),
    ("old leader: hook exit -> release sent", "hook_exit", "sent"),
    ("notification: release sent -> signal", "sent", "queued"),
    ("hook start: execve -> first line", "execve", "first_line"),
]


def span(row, a, b):
    if row.get(a) is None or row.get(b) is None:
        return None
    return (row[b] - row[a]) / 1000.0


def summary(rows, spans):
    out = {}
    for name, a, b in spans:
        xs = [v for v in (span(r, a, b) for r in rows) if v is not None]
        if xs:
            out[name] = {"median": statistics.median(xs), "min": min(xs),
                         "max": max(xs), "n": len(xs)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("events")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--json", help="write rows and summary here")
    ap.add_argument("--ftrace", help="a tracefs buffer (mono clock)")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N handoffs (warm-up)")
    ap.add_argument("--quiet", action="store_true",
                    help="the summary only, not every handoff")
    a = ap.parse_args()
    events = read_events(pathlib.Path(a.events))
    logs = {pathlib.Path(p).stem: read_log(pathlib.Path(p))
            for p in a.logs}
    procs = read_ftrace(pathlib.Path(a.ftrace)) if a.ftrace else {}
    rows = handoffs(events, logs, procs)[a.skip:]
    if not rows:
        sys.exit("no traced handoff found (log_level = debug?)")
    if not a.quiet:
        print("handoff  gap ms  own ms  leader ms  notif ms  hook ms  cause")
        for i, r in enumerate(rows, 1):
            def f(x):
                return "   -  " if x is None else f"{x:7.3f}"
            print(f"{i:7} {f(span(r, 'demote_end', 'first_line'))} "
                  f"{f(span(r, 'queued', 'execve'))} "
                  f"{f(span(r, 'reaped', 'sent'))}  "
                  f"{f(span(r, 'sent', 'queued'))} "
                  f"{f(span(r, 'execve', 'first_line'))}  "
                  f"{r['old']}->{r['node']} {r['cause']}")
    parts = summary(rows, PARTS)
    totals = summary(rows, TOTALS)
    print(f"\n{len(rows)} handoffs; ms, median (min-max):")
    for spans, table in ((PARTS, parts), (TOTALS, totals)):
        for name, _, _ in spans:
            if name in table:
                s = table[name]
                print(f"  {name:40} {s['median']:7.3f} "
                      f"({s['min']:.3f}-{s['max']:.3f})")
        print()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(
            {"rows": rows, "parts": parts, "totals": totals}, indent=1))


if __name__ == "__main__":
    main()
