"""Reads what bench/hooks/run.sh left in its directory and prints the
tables (microseconds: median, min-max, n)."""

import os
import re
import statistics
import sys

D = sys.argv[1]
EV = re.compile(r"\s(\d+\.\d+): (\w+): (.*)$")


def lines(name):
    path = os.path.join(D, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.split() for l in f if l.strip()]


def trace():
    """pid -> {"exec": [(t_ns, filename)], "exit": t_ns}; SIGTERMs: pid -> t_ns"""
    procs, sigs = {}, {}
    path = os.path.join(D, "trace")
    if not os.path.exists(path):
        return procs, sigs
    with open(path) as f:
        for line in f:
            m = EV.search(line)
            if not m:
                continue
            t = int(round(float(m.group(1)) * 1e9))
            kv = dict(w.split("=", 1) for w in m.group(3).split() if "=" in w)
            if m.group(2) == "sched_process_exec":
                procs.setdefault(int(kv["pid"]), {"exec": []})["exec"].append(
                    (t, kv["filename"]))
            elif m.group(2) == "sched_process_exit":
                procs.setdefault(int(kv["pid"]), {"exec": []})["exit"] = t
            elif m.group(2) == "signal_generate" and kv.get("sig") == "15":
                sigs.setdefault(int(kv["pid"]), t)
    return procs, sigs


def stat(xs):
    xs = [x / 1000.0 for x in xs if x is not None]
    if not xs:
        return "–"
    return "%.0f (%.0f–%.0f, n=%d)" % (statistics.median(xs), min(xs),
                                       max(xs), len(xs))


def sh_exec(procs, pid):
    for t, fn in procs.get(pid, {}).get("exec", []):
        if fn == "/bin/sh":
            return t
    return None


def ab(procs, build):
    runs = lines(f"ab-{build}.runs")
    stamps = {int(s[0]): (int(s[1]), int(s[2])) for s in lines(f"ab-{build}.stamps")}
    out = {"sh": [], "main": [], "ret": [], "exit_done": [], "kexit_done": []}
    for r in runs:
        pid, t_call, t_ret, t_done = map(int, r)
        sh = sh_exec(procs, pid)
        out["sh"].append(sh - t_call if sh else None)
        out["ret"].append(t_ret - t_call)
        if pid in stamps:
            out["main"].append(stamps[pid][0] - t_call)
            out["exit_done"].append(t_done - stamps[pid][1])
        kexit = procs.get(pid, {}).get("exit")
        out["kexit_done"].append(t_done - kexit if kexit else None)
    return out


def c(procs, sigs, build):
    sig = lines(f"c-{build}.sig")
    stamps = lines(f"c-{build}.stamps")
    out = {"sh": [], "main": []}
    # One demote per daemon, in the same order as the SIGTERMs.
    for (t_kill, dpid), s in zip(sig, stamps):
        t_kill, dpid, hpid, t_main = int(t_kill), int(dpid), int(s[0]), int(s[1])
        out["main"].append(t_main - t_kill)
        sh = sh_exec(procs, hpid)
        ksig = sigs.get(dpid)
        out["sh"].append(sh - ksig if sh and ksig else None)
    return out


def main():
    with open(os.path.join(D, "about")) as f:
        print(f.read().strip())
    procs, sigs = trace()
    a = {b: ab(procs, b) for b in ("new", "old")}
    print("\n| A/B: hookbench (µs, median (min–max, n)) | new: posix_spawn | old: fork |")
    print("|---|---|---|")
    for key, label in (("sh", "hook_run() called → /bin/sh execve done (ftrace)"),
                       ("main", "hook_run() called → the command's main (`exec stamp`)"),
                       ("ret", "hook_run() called → returned (the loop is held)"),
                       ("kexit_done", "hook's last process exits (ftrace) → done callback"),
                       ("exit_done", "stamp's last clock read before _exit → done callback")):
        print(f"| {label} | {stat(a['new'][key])} | {stat(a['old'][key])} |")
    cc = {b: c(procs, sigs, b) for b in ("new", "old")}
    if any(cc[b]["main"] for b in cc):
        print("\n| C: daemon, leader (µs, median (min–max, n)) | new | old |")
        print("|---|---|---|")
        for key, label in (("sh", "SIGTERM generated (ftrace) → demote's /bin/sh execve done (ftrace)"),
                           ("main", "sigstamp's clock before kill() → the demote command's main")):
            print(f"| {label} | {stat(cc['new'][key])} | {stat(cc['old'][key])} |")


main()
