"""The results of bench/failover as Markdown tables (printed; pasted into
bench/RESULTS.md). Also usable on saved --json files:
    /usr/bin/python3 bench/failover/report.py results.json
    /usr/bin/python3 bench/failover/report.py --compare before.json after.json
"""

import json
import statistics
import sys

LABEL = {
    "zkelectd": "zkelectd",
    "kazoo": "kazoo `Election`",
    "etcdctl": "`etcdctl elect`",
    "etcd-api": "etcd election API, 2 s lease",
}


def med(xs):
    return statistics.median(xs) if xs else None


def f(x, nd=1):
    if x is None:
        return "–"
    return f"{x:,.{nd}f}"


def stats(xs, nd=1):
    if not xs:
        return "–", "–"
    return f(med(xs), nd), f"{f(min(xs), nd)}–{f(max(xs), nd)}"


def print_report(results, a=None):
    out = []
    p = out.append
    m = results.get("machine", {})
    rows = results.get("rows", [])
    T = results.get("session_timeout_s", 2.0)
    tick = results.get("tick_ms", 200)
    p("")
    p("## Machine")
    p("")
    p("| | |")
    p("|---|---|")
    for k in ("date", "nproc", "cpu", "kernel", "zookeeper", "kazoo", "etcd",
              "zkelectd", "commit", "binary", "binary_sha256",
              "binary_mtime"):
        if k in m:
            p(f"| {k} | {m[k]} |")
    if "loadavg_start" in results:
        p(f"| load average at the start | {results['loadavg_start']} |")
    if "failover_machine_busy_pct" in results:
        p(f"| both cores busy during the failover rounds (everything, "
          f"the bench included) | {results['failover_machine_busy_pct']} % |")
    debs = [f"{k[4:]} {v}" for k, v in m.items() if k.startswith("deb:")]
    if debs:
        p(f"| Debian packages | {', '.join(debs)} |")
    p("")

    systems = []
    for r in rows:
        if r["system"] not in systems:
            systems.append(r["system"])
    order = list(LABEL)
    systems.sort(key=lambda x: order.index(x) if x in order else 99)

    def vals(system, kind, key):
        return [r[key] for r in rows if r["system"] == system and
                r["kind"] == kind and key in r and "error" not in r]

    metrics = [
        ("graceful failover (SIGTERM → successor's promote start), ms",
         "graceful", "failover_ms", 1),
        ("handoff gap (promote start − old leader's demote end), ms",
         "graceful", "gap_ms", 1),
        ("SIGTERM → the old leader's demote hook starts, ms",
         "graceful", "stop_to_demote_ms", 1),
        (f"crash failover (SIGKILL → promote start), ms, T = {T:g} s",
         "crash", "failover_ms", 0),
        ("crash failover, multiple of the TTL/session timeout",
         "crash", "failover_T", 2),
    ]
    if rows:
        p("## Failover (medians, min–max, ratio = system ÷ zkelectd "
          "median)")
        p("")
        p("| metric | system | rounds | median | min–max | ratio |")
        p("|---|---|---:|---:|---:|---:|")
        for title, kind, key, nd in metrics:
            base = med(vals("zkelectd", kind, key))
            for s in systems:
                xs = vals(s, kind, key)
                if not xs:
                    continue
                mm, rng = stats(xs, nd)
                ratio = (f"{med(xs) / base:.2f}" if base else "–")
                if s == "etcdctl" and kind == "crash":
                    lab = LABEL[s] + " (60 s lease, fixed)"
                    ratio = "–"
                else:
                    lab = LABEL.get(s, s)
                p(f"| {title} | {lab} | {len(xs)} | {mm} | {rng} | "
                  f"{ratio} |")
                title = ""
        errs = [r for r in rows if "error" in r]
        p("")
        p(f"Rounds with an error: {len(errs)}"
          + "".join(f"; {r['system']} {r['kind']} round {r['round']}: "
                    f"{r['error']}" for r in errs))
        p("")
        breakdown(p, results)
        targets(p, results, vals, T, tick)

    for n in (3, 100):
        if f"requests{n}" in results:
            requests_table(p, results)
            break
    if "footprint" in results:
        p("## Idle footprint (one zkelectd, 10 s idle)")
        p("")
        p("| session timeout | role | RSS KiB | peak RSS KiB | threads | "
          "CPU % of a core |")
        p("|---|---|---:|---:|---:|---:|")
        for r in results["footprint"]:
            p(f"| {r['config']} | {r['role']} | {r['rss_kib']:,} | "
              f"{r['hwm_kib']:,} | {r['threads']} | {r['cpu_pct']:.2f} |")
        p("")
    if "floors" in results:
        fl = results["floors"]
        p("## Floors on this machine (30 runs each)")
        p("")
        p("ZooKeeper figures from a bare protocol client (one blocking "
          "socket, tests/integration/zkraw.py), against the same server.")
        p("")
        p("| | median ms | min–max ms |")
        p("|---|---:|---:|")
        for key, title in (
                ("hook_spawn_to_first_line_ms", "posix_spawn of `/bin/sh -c "
                 "\"hook.sh promote floor\"` → the hook's first line"),
                ("hook_exec_to_first_line_ms", "posix_spawn of `hook.sh "
                 "promote floor` itself (a plain hook line, as zkelectd "
                 "runs it) → the hook's first line"),
                ("hook_shell_last_line_to_reaped_ms", "through `/bin/sh -c`: "
                 "the hook's last line → its parent has reaped it"),
                ("hook_exec_last_line_to_reaped_ms", "exec'd directly: the "
                 "hook's last line → its parent has reaped it"),
                ("create_ephemeral_ms", "ZooKeeper create (a write: fsync), "
                 "round trip"),
                ("delete_ms", "ZooKeeper delete (a write), round trip"),
                ("get_ms", "ZooKeeper getData, round trip"),
                ("sync_ms", "ZooKeeper sync, round trip"),
                ("delete_to_watch_ms", "delete sent → another session reads "
                 "the watch event"),
                ("delete_to_watch_cold_ms", "the same after the server sat "
                 "idle for the rounds' quiet (as before a handoff)"),
                ("multi4_to_watch_cold_ms", "the same for a multi of four "
                 "deletes (zkelectd's release), the last one watched"),
                ("delete_to_watch_cold_2proc_ms", "a delete after the "
                 "quiet, the watcher another process asleep through it, "
                 "as a successor is (floor2.py)"),
                ("multi4_to_watch_cold_2proc_ms", "the same for the multi "
                 "of four"),
                ("release_to_watch_cold_2proc_ms", "the same for zkelectd's "
                 "release as its successor meets it: five deletes, the "
                 "claim then the breadcrumb last, the successor watching "
                 "four, a third "
                 "session watching E/leader and setting its watch again, "
                 "the old session closed at the reply (floor2.py MULTI 2)"),
                ("handoff_gap_bare_2proc_ms", "**the handoff gap of that "
                 "protocol with a bare client**: hook.sh's demote reaped, "
                 "the release, hook.sh's promote spawned on the last "
                 "event; demote's last line → promote's first (floor2.py "
                 "MULTI 4)")):
            mm, rng = stats(fl.get(key, []), 2)
            p(f"| {title} | {mm} | {rng} |")
        p("")
        for key, what in (("delete_to_watch_ms", "a warm server"),
                          ("delete_to_watch_cold_ms",
                           "a server idle as before a handoff"),
                          ("multi4_to_watch_cold_2proc_ms",
                           "a server idle as before a handoff, zkelectd's "
                           "release (a multi of four) and the watcher in "
                           "another process, asleep")):
            parts = [med(fl.get(k, [])) for k in (
                "hook_exec_last_line_to_reaped_ms", key,
                "hook_exec_to_first_line_ms")]
            if None not in parts:
                p(f"The handoff gap's floor with {what}: the medians of a "
                  f"hook's end, a deletion's notification and a hook's "
                  f"start (exec'd directly), {parts[0]:.2f} + "
                  f"{parts[1]:.2f} + {parts[2]:.2f} = "
                  f"**{sum(parts):.2f} ms**.")
                p("")
    for s in results.get("storm", []):
        ok = s["promotes"] == 1
        p(f"## Join storm: {s['n']} zkelectd started at once, session "
          f"timeout {s['session_timeout']}")
        p("")
        p("| | |")
        p("|---|---|")
        p(f"| first promote hook started | {f(s['first_promote_s'], 2)} s |")
        p(f"| a daemon logs `-> leader` | {f(s['leader_role_s'], 2)} s |")
        p(f"| every daemon logged `-> follower` or `-> leader` | "
          f"{f(s['all_roles_s'], 2)} s ({s['with_role']} of {s['n']}) |")
        p(f"| every status file says leader or follower (polled every "
          f"~50 ms) | {f(s.get('polled_all_roles_s'), 2)} s |")
        p(f"| promote hooks run in {s.get('settle_s', '')} s after that "
          f"(must be 1) | {s['promotes']} by {', '.join(s['promoted'])}"
          f"{'' if ok else ' — **not exactly one**'} |")
        p(f"| daemons that exited | {s['exited']} |")
        p("")
    for e in results.get("errors", []):
        p(f"**Phase failed:** {e}")
    text = "\n".join(out)
    print(text, flush=True)
    return text


def breakdown(p, results):
    sh = results.get("share")
    if not sh or not sh.get("rows"):
        return
    p("## Where zkelectd's handoff gap goes (graceful rounds)")
    p("")
    p("From the daemons' trace lines (log level debug: CLOCK_MONOTONIC µs "
      "stamps kept in memory and written after the path; `share.py`) and "
      "the hooks' `date +%s%N` lines. The successor's own share ends at "
      "`posix_spawn()`'s return, which is after the shell's execve (the "
      "kernel's instant needs ftrace: `static-hook.sh`).")
    p("")
    p("| part | median ms | min–max ms | handoffs |")
    p("|---|---:|---:|---:|")
    for table in ("parts", "totals"):
        for name, s in sh[table].items():
            p(f"| {name} | {s['median']:.3f} | {s['min']:.3f}–{s['max']:.3f} "
              f"| {s['n']} |")
    p("")


def targets(p, results, vals, T, tick):
    z = "zkelectd"
    gap = med(vals(z, "graceful", "gap_ms"))
    kgap = med(vals("kazoo", "graceful", "gap_ms"))
    fo = med(vals(z, "graceful", "failover_ms"))
    kfo = med(vals("kazoo", "graceful", "failover_ms"))
    crash = vals(z, "crash", "failover_ms")
    if gap is None:
        return
    p("## Issue 8's targets, as measured here")
    p("")
    p("| target | measured | met |")
    p("|---|---|---|")

    def yes(c):
        return "yes" if c else "**no**"
    if kgap:
        p(f"| handoff gap median ≤ 3 ms and ≤ ⅓ of kazoo's | {gap:.1f} ms; "
          f"kazoo {kgap:.1f} ms (ratio {gap / kgap:.2f}) | "
          f"{yes(gap <= 3 and gap <= kgap / 3)} |")
    if kfo:
        p(f"| graceful failover ≥ 2× faster than kazoo | {fo:.1f} ms vs "
          f"{kfo:.1f} ms ({kfo / fo:.2f}×) | {yes(kfo / fo >= 2)} |")
    if crash:
        lim = T * 1000 + tick
        p(f"| crash failover ≤ T + one tick ({lim:.0f} ms) | median "
          f"{med(crash):.0f} ms, max {max(crash):.0f} ms | "
          f"{yes(max(crash) <= lim)} |")
    p("")
    p("## Issue 21's targets, as measured here")
    p("")
    p("| target | measured | met |")
    p("|---|---|---|")
    if kgap:
        p(f"| handoff gap ≤ 0.75× kazoo's | {gap:.1f} ms vs {kgap:.1f} ms "
          f"(ratio {gap / kgap:.2f}) | {yes(gap <= 0.75 * kgap)} |")
    if kfo:
        p(f"| graceful failover ≤ 0.85× kazoo's | {fo:.1f} ms vs "
          f"{kfo:.1f} ms (ratio {fo / kfo:.2f}) | {yes(fo <= 0.85 * kfo)} |")
    own = results.get("share", {}).get("totals", {}).get(
        "OWN SHARE (successor): signal -> execve")
    if own:
        p(f"| zkelectd's own share of the gap ≤ 0.5 ms (median) | "
          f"{own['median']:.2f} ms ({own['n']} handoffs, to posix_spawn's "
          f"return) | {yes(own['median'] <= 0.5)} |")
    p("")


def requests_table(p, results):
    r0 = results.get("requests3") or results.get("requests100")
    p("## ZooKeeper requests per graceful failover (zkelectd)")
    p("")
    p("Counted on the server: ZooKeeper's request log (the "
      "FinalRequestProcessor's debug line, one per request, with session "
      "id, type and path), from just before the SIGTERM to the leader until "
      "every follower's status file names the new leader, plus 100 ms; "
      "daemons matched by the `session` of their status files. `ping` and "
      "`sync` (the keepalive, every T/6 on every daemon) are left out. "
      "*Idle* is a window of the same length 1 s later, nothing happening: "
      "what the daemons send anyway (the status file's candidate count is "
      "a `getChildren` every T/3 on every daemon). Session timeout "
      f"{r0.get('session_timeout', '?')} (at 2 s these background requests "
      "are five times as frequent). `cons` Δrecved (every packet of the "
      "window, pings and syncs included) as a cross-check; `wchc` the "
      "watches held at the end of the window.")
    p("")
    p("| candidates | window ms | old leader | successor | follower max | "
      "follower median | followers that listed children | idle: "
      "follower mean / max, listing | cons Δrecved successor / follower "
      "max | watches successor / follower max |")
    p("|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    for n in (3, 100):
        r = results.get(f"requests{n}")
        if not r:
            continue
        idle = (f"{r['idle_follower_mean']:.2f} / {r['idle_follower_max']},"
                f" {len(r['idle_followers_listing'])}"
                if "idle_follower_mean" in r else "–")
        p(f"| {n} | {r['window_ms']:.0f} | {r['leader_requests']} | "
          f"{r['successor_requests']} | {r['follower_max']} | "
          f"{f(r['follower_median'], 0)} | "
          f"{len(r['followers_listing'])} of {n - 2} | {idle} | "
          f"{r['cons_recved_successor']} / {r['cons_recved_follower_max']} | "
          f"{r.get('watches_successor', '–')} / "
          f"{r.get('watches_follower_max', '–')} |")
    p("")

    def types(d):
        return ", ".join(f"`{k}` {v}" for k, v in sorted(d.items())
                         if k.split()[0] not in ("ping", "sync")) or "–"
    p("| candidates | who | requests (path relative to E) |")
    p("|---:|---|---|")
    for n in (3, 100):
        r = results.get(f"requests{n}")
        if not r:
            continue
        if r.get("successor_sequence"):
            seq = " → ".join("**promote hook**" if x == "|" else f"`{x}`"
                             for x in r["successor_sequence"])
            p(f"| {n} | successor, in order | {seq} |")
        else:
            p(f"| {n} | successor | {types(r['successor_types'])} |")
        p(f"| {n} | busiest follower ({r['follower_max_node']}) | "
          f"{types(r['follower_max_types'])} |")
        p(f"| {n} | old leader | {types(r.get('leader_types', {}))} |")
        if "leader_idle_types" in r:
            p(f"| {n} | new leader, idle {r['leader_idle_s']} s | "
              f"{types(r['leader_idle_types'])} |")
    p("")


def compare(before, after):
    """Medians of two runs side by side (e.g. before and after a change)."""
    def med_of(res, system, kind, key):
        return med([r[key] for r in res.get("rows", [])
                    if r["system"] == system and r["kind"] == kind and
                    key in r and "error" not in r])
    print("| metric | system | before | after | after ÷ before |")
    print("|---|---|---:|---:|---:|")
    for key, kind, title in (
            ("failover_ms", "graceful", "graceful failover, ms"),
            ("gap_ms", "graceful", "handoff gap, ms"),
            ("stop_to_demote_ms", "graceful", "SIGTERM → demote start, ms"),
            ("failover_ms", "crash", "crash failover, ms")):
        for s in LABEL:
            b, a = (med_of(x, s, kind, key) for x in (before, after))
            if b is None and a is None:
                continue
            q = f"{a / b:.2f}" if a is not None and b else "–"
            print(f"| {title} | {LABEL[s]} | {f(b)} | {f(a)} | {q} |")
    for n in (3, 100):
        b = before.get(f"requests{n}", {})
        a = after.get(f"requests{n}", {})
        for k in ("successor_requests", "follower_max"):
            print(f"| requests at {n}: {k} | zkelectd | {b.get(k, '–')} | "
                  f"{a.get(k, '–')} | |")
    sb = {x["session_timeout"]: x for x in before.get("storm", [])}
    for x in after.get("storm", []):
        y = sb.get(x["session_timeout"], {})
        print(f"| storm {x['session_timeout']}: promotes / all roles s | "
              f"zkelectd | {y.get('promotes', '–')} / "
              f"{f(y.get('all_roles_s'), 2)} | {x['promotes']} / "
              f"{f(x['all_roles_s'], 2)} | |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(json.load(open(sys.argv[2])), json.load(open(sys.argv[3])))
    elif len(sys.argv) == 2:
        print_report(json.load(open(sys.argv[1])))
    else:
        sys.exit("usage: report.py RESULTS.json | --compare BEFORE.json "
                 "AFTER.json")
