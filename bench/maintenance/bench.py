#!/usr/bin/python3
"""bench/maintenance: does routine ZooKeeper maintenance move leadership?

zkelectd and kazoo's Election, side by side on one 3-server ensemble
(tickTime 2 s), each at T = 10 s and T = 4 s (four systems of two
candidates each, all running the whole time), with one hook. Every
candidate reaches the ensemble through a TCP proxy of its own
(tests/integration/proxy.py). The events, one after the other, each
followed by a settling time:

  rolling restart   each ZooKeeper server SIGTERM + start, followers first,
                    the ZooKeeper leader last
  kill ZK leader    SIGKILL of the ZooKeeper leader, started again 15 s later
  3 resets          each system's leader's link reset three times, 2 s apart
  freeze T/6        each system's leader's link frozen (silence, no reset)
                    for T/6 of its system
  hosts reload      every candidate moved to a new host list (other
                    proxies, on another loopback address), the old proxies
                    closed: zkelectd by SIGHUP (zoo_set_servers), kazoo by
                    KazooClient.set_hosts (taken at its next reconnect)

For each event and system: the demotes (demote hook runs) and the time the
system had no leading application (no node between the end of a promote
and the start of a demote); and the time the ensemble did not answer
(no server in mode leader with a quorum serving, polled with `srvr`).
Prints a Markdown table; --json keeps the raw figures.

Run it through run.sh (see README.md).
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "integration"))

import zkharness  # noqa: E402
from proxy import ZkProxy  # noqa: E402

HOOK = REPO / "bench" / "failover" / "hook.sh"
TICK_MS = 2000
SETTLE_S = 15.0         # after each event: longer than the larger T
FIRST, SECOND = "127.0.0.2", "127.0.0.3"    # loopback addresses of proxies


def wait_for(pred, timeout, what):
    return zkharness.wait_for(pred, timeout, what, interval=0.05)


class Node:
    """One candidate: its process, its proxy, its files."""

    def __init__(self, system, name, upstreams):
        self.system = system
        self.name = name
        self.upstreams = upstreams
        self.proxy = ZkProxy(upstreams, name=f"proxy-{name}", bind=FIRST)
        self.old_proxy = None
        self.proc = None
        self.dir = system.dir / name
        self.dir.mkdir()

    def env(self):
        env = dict(os.environ, BENCH_EVENTS=str(self.system.events))
        env.pop("NOTIFY_SOCKET", None)
        return env

    def start(self):
        log = open(self.dir / "log", "ab")
        try:
            self.proc = zkharness._spawn(self.argv(), self.name, stdout=log,
                                         stderr=subprocess.STDOUT,
                                         env=self.env())
        finally:
            log.close()

    def stop(self):
        if self.proc is not None:
            zkharness._reap(self.proc, signal.SIGTERM, 30)
            self.proc = None
        for p in (self.proxy, self.old_proxy):
            if p is not None:
                p.close()

    def move(self):
        """The hosts reload: a new proxy on the second address; the old one
        is closed by close_old() once the reload is given."""
        self.old_proxy = self.proxy
        self.proxy = ZkProxy(self.upstreams, name=f"proxy2-{self.name}",
                             bind=SECOND)
        self.reload(self.proxy.hosts)

    def close_old(self):
        self.old_proxy.close()


class ZkelectdNode(Node):
    def argv(self):
        self.write_config(self.proxy.hosts)
        return [str(self.system.bench.zkelectd), "-c", str(self.dir / "conf")]

    def write_config(self, hosts):
        s = self.system
        (self.dir / "conf").write_text(
            f"[zookeeper]\nhosts = {hosts}\n"
            f"session_timeout = {s.T}s\n"
            f"[election]\nservice = {s.key}\nid = {self.name}\n"
            f"[hooks]\npromote = {HOOK} promote {self.name}\n"
            f"demote = {HOOK} demote {self.name}\n"
            f"demote_on_start = no\n"
            f"[control]\nsocket = {self.dir}/sock\n"
            f"status_file = {self.dir}/status\nlog_level = info\n")

    def reload(self, hosts):
        self.write_config(hosts)
        self.proc.send_signal(signal.SIGHUP)

    def moved(self):
        return self.proxy.connections() > 0


class KazooNode(Node):
    def argv(self):
        (self.dir / "hosts").write_text(self.proxy.hosts + "\n")
        return ["/usr/bin/python3", str(HERE / "kazoo_candidate.py"),
                "--hosts", self.proxy.hosts,
                "--path", f"/bench-maintenance/{self.system.key}",
                "--node", self.name, "--timeout", str(self.system.T),
                "--hook", str(HOOK), "--hosts-file", str(self.dir / "hosts")]

    def reload(self, hosts):
        (self.dir / "hosts").write_text(hosts + "\n")
        self.proc.send_signal(signal.SIGHUP)

    def moved(self):
        # kazoo keeps its connection until it breaks: nothing to wait for.
        return True


class System:
    """Two candidates of one kind at one session timeout."""

    def __init__(self, bench, kind, T):
        self.bench = bench
        self.kind = kind
        self.T = T
        self.key = f"{kind}-T{T}"
        self.label = f"{kind} T={T}s"
        self.dir = bench.dir / self.key
        self.dir.mkdir()
        self.events = self.dir / "events"
        self.events.touch()
        cls = ZkelectdNode if kind == "zkelectd" else KazooNode
        self.nodes = [cls(self, f"{kind[0]}{T}{c}", bench.cluster.hosts)
                      for c in "ab"]

    def hook_lines(self):
        out = []
        for line in self.events.read_text().splitlines():
            w = line.split()
            if len(w) == 4:
                out.append((int(w[0]) / 1e9, w[1], w[2], w[3]))
        return out

    def intervals(self, now):
        """Leadership intervals [(from, to)]: promote end to demote start."""
        since, out = {}, []
        for t, event, phase, node in self.hook_lines():
            if event == "promote" and phase == "end":
                since.setdefault(node, t)
            elif event == "demote" and phase == "start" and node in since:
                out.append((since.pop(node), t))
        out += [(t, now) for t in since.values()]
        return out

    def leader(self):
        """The node leading now, or None."""
        state = {}
        for t, event, phase, node in self.hook_lines():
            if event == "promote" and phase == "end":
                state[node] = True
            elif event == "demote" and phase == "start":
                state[node] = False
        nodes = [n for n in self.nodes if state.get(n.name)]
        return nodes[0] if len(nodes) == 1 else None

    def measure(self, t0, t1):
        demotes = sum(1 for t, e, p, _ in self.hook_lines()
                      if e == "demote" and p == "start" and t0 <= t <= t1)
        covered = []
        for a, b in self.intervals(t1):
            a, b = max(a, t0), min(b, t1)
            if a < b:
                covered.append((a, b))
        return demotes, (t1 - t0) - union_length(covered)


def union_length(spans):
    total, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


class Probe:
    """Polls every server's `srvr` every 0.1 s: the ensemble answers when a
    server is the leader and a quorum serves."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.samples = []
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def answers(self):
        modes = [s.mode() if s.running() else None
                 for s in self.cluster.servers]
        serving = [m for m in modes if m in ("leader", "follower")]
        return "leader" in modes and len(serving) * 2 > len(modes)

    def run(self):
        while not self.stop_ev.is_set():
            self.samples.append((time.time(), self.answers()))
            self.stop_ev.wait(0.1)

    def down_time(self, t0, t1):
        down, prev = 0.0, None
        for t, ok in list(self.samples):
            if prev is not None and t0 <= prev[0] < t1 and not prev[1]:
                down += min(t, t1) - prev[0]
            prev = (t, ok)
        return down

    def close(self):
        self.stop_ev.set()
        self.thread.join(5)


class Bench:
    def __init__(self, args):
        self.args = args
        self.zkelectd = Path(args.zkelectd).resolve()
        self.dir = Path(args.dir)
        self.cluster = zkharness.ZkCluster(size=3, tick_ms=TICK_MS)
        self.systems = []
        self.results = []

    def log(self, msg):
        print(f"{time.strftime('%T')} {msg}", file=sys.stderr, flush=True)

    def all_lead(self, timeout=120):
        wait_for(lambda: all(s.leader() is not None for s in self.systems),
                 timeout, "every system to have one leader")

    def quorum(self, timeout=120):
        wait_for(self.probe.answers, timeout, "the ensemble to answer")

    def event(self, name, action):
        self.quorum()
        self.all_lead()
        self.log(f"event: {name}")
        t0 = time.time()
        action()
        self.log(f"  done; settling {SETTLE_S:.0f} s")
        time.sleep(SETTLE_S)    # the measuring window, not a wait for state
        self.quorum()
        self.all_lead()
        t1 = time.time()
        row = {"event": name, "window_s": round(t1 - t0, 1),
               "zk_down_s": round(self.probe.down_time(t0, t1), 1)}
        for s in self.systems:
            d, gap = s.measure(t0, t1)
            row[s.label] = {"demotes": d, "not_leading_s": round(gap, 2)}
        self.results.append(row)
        self.log(f"  {row}")

    # ------------------------------------------------------------ events

    def restart(self, server, kill=False, down_s=0.0):
        (server.kill if kill else server.stop)()
        if down_s:
            time.sleep(down_s)  # the outage itself, part of the event
        server.start()
        server.wait_serving(120)
        self.quorum()

    def rolling_restart(self):
        leader = self.cluster.leader()
        for s in self.cluster.servers:
            if s is not leader:
                self.restart(s)
        self.restart(self.cluster.leader())

    def kill_leader(self):
        self.restart(self.cluster.leader(), kill=True, down_s=15.0)

    def leaders(self):
        return [(s, s.leader()) for s in self.systems]

    def resets(self):
        for i in range(3):
            for s, n in self.leaders():
                if n is not None:
                    n.proxy.cut()
            if i < 2:
                time.sleep(2.0)

    def freeze(self):
        frozen = [(s.T / 6, n) for s, n in self.leaders() if n is not None]
        t0 = time.monotonic()
        for _, n in frozen:
            n.proxy.freeze()
        for d, n in sorted(frozen, key=lambda x: x[0]):
            time.sleep(max(0.0, t0 + d - time.monotonic()))
            n.proxy.thaw()

    def reload(self):
        nodes = [n for s in self.systems for n in s.nodes]
        for n in nodes:
            n.move()
        wait_for(lambda: all(n.moved() for n in nodes), 30,
                 "every zkelectd on its new hosts")
        for n in nodes:
            n.close_old()

    # ------------------------------------------------------------ run

    def run(self):
        self.log(f"ensemble of 3, tickTime {TICK_MS} ms")
        self.cluster.start(120)
        self.probe = Probe(self.cluster)
        for kind in ("zkelectd", "kazoo"):
            for T in self.args.timeouts:
                self.systems.append(System(self, kind, T))
        for s in self.systems:
            for n in s.nodes:
                n.start()
        self.all_lead()
        time.sleep(5)   # every follower queued too before the first event
        for key, name, action in self.events():
            if key in self.args.events:
                self.event(name, action)

    def events(self):
        return [
            ("rolling", "rolling restart (followers, then ZK leader)",
             self.rolling_restart),
            ("kill", "SIGKILL of the ZK leader, started 15 s later",
             self.kill_leader),
            ("resets", "3 connection resets of the leader's link",
             self.resets),
            ("freeze", "T/6 freeze of the leader's link", self.freeze),
            ("reload", "hosts reload (new addresses, old closed)",
             self.reload),
        ]

    def close(self):
        for s in self.systems:
            for n in s.nodes:
                n.stop()
        if hasattr(self, "probe"):
            self.probe.close()
        self.cluster.close()


def report(results, labels, meta):
    out = [f"zkelectd {meta['zkelectd_version']} ({meta['zkelectd']}), "
           f"kazoo {meta['kazoo']}, ZooKeeper {meta['zookeeper']}; "
           f"{meta['machine']}; {meta['date']}", "",
           "Each cell: demotes of the leader / seconds without a leading "
           "application, in the event's window (event + "
           f"{SETTLE_S:.0f} s).", ""]
    out.append("| event | ZK not answering (s) | " + " | ".join(labels) + " |")
    out.append("|---|---|" + "---|" * len(labels))
    for r in results:
        cells = [f"{r[l]['demotes']} / {r[l]['not_leading_s']:.1f}"
                 for l in labels]
        out.append(f"| {r['event']} | {r['zk_down_s']:.1f} | "
                   + " | ".join(cells) + " |")
    return "\n".join(out)


def package_version(name):
    return subprocess.run(["dpkg-query", "-W", "-f=${Version}", name],
                          capture_output=True, text=True).stdout.strip()


def meta_of(zkelectd):
    ver = subprocess.run([str(zkelectd), "-V"], capture_output=True,
                         text=True).stdout.strip()
    return {"zkelectd": str(zkelectd), "zkelectd_version": ver,
            "kazoo": package_version("python3-kazoo"),
            "zookeeper": package_version("zookeeper"),
            "machine": f"{platform.node()}, {os.cpu_count()} CPUs, "
                       f"{platform.system()} {platform.release()}",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="working directory")
    ap.add_argument("--zkelectd", default=str(REPO / "build" / "zkelectd"))
    ap.add_argument("--timeouts", type=int, nargs="+", default=[10, 4],
                    help="session timeouts T in seconds (default 10 4)")
    ap.add_argument("--events", nargs="+", metavar="EVENT",
                    default=["rolling", "kill", "resets", "freeze", "reload"],
                    help="which events, in this order: rolling kill resets "
                    "freeze reload (default: all)")
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args()
    bench = Bench(args)
    labels = []
    try:
        bench.run()
        labels = [s.label for s in bench.systems]
    finally:
        bench.close()
    meta = meta_of(bench.zkelectd)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"meta": meta, "results": bench.results}, indent=1) + "\n")
    print(report(bench.results, labels, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
