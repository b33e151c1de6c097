#!/usr/bin/python3
"""One election candidate for bench/failover, for the systems other than
zkelectd. It runs the bench's hook exactly as zkelectd runs its hooks
(`/bin/sh -c "HOOK promote NODE"`, or, when that line is plain words whose
first is a path, the program itself with those words, as zkelectd does
since issue 21; stdin /dev/null, in a process group of its own, never two
at once): promote once elected, demote on SIGTERM before
it gives leadership up (an ordered handoff, as zkelectd does), then exits.

  candidate.py kazoo   --hosts H:P --path /x/election --node k1 --hook CMD
      kazoo's Election recipe (Debian's python3-kazoo), session timeout
      --timeout seconds.
  candidate.py etcdctl --endpoint URL --name NAME --node e1 --hook CMD
      `etcdctl elect NAME NODE` as a child; elected when etcdctl prints the
      leader key; on SIGTERM: demote hook, then SIGTERM to etcdctl, which
      resigns. etcdctl elect has no TTL option: its lease lives 60 s.
  candidate.py etcd-api --endpoint URL --name NAME --node a1 --hook CMD
      the same election through etcd's own election service (v3election,
      the server side of the same concurrency.Election recipe), over the
      JSON gateway, with a lease of --ttl seconds that this process keeps
      alive itself (every TTL/3, like etcd's client): what `etcdctl elect`
      would do if it took a TTL.

Run with /usr/bin/python3 (Debian's packages). Exits 0 after a SIGTERM.
"""

import argparse
import base64
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request

# zkelectd's hook_words(): the characters no shell rule touches.
PLAIN = re.compile(r"[ \tA-Za-z0-9_./,:+@%=-]+")


class Candidate:
    """The hook slot: promote and demote never overlap, promote runs at most
    once, demote only after a promote, and nothing starts once stopping."""

    def __init__(self, hook, node):
        self.hook = hook
        self.node = node
        self.lock = threading.Lock()
        self.leading = False
        self.stopping = False

    def run_hook(self, event):
        # posix_spawn (a vfork-style clone) with the signal mask emptied:
        # this process blocks SIGTERM for its sigwait.
        line = f"{self.hook} {event} {self.node}"
        words = line.split()
        argv = ["/bin/sh", "-c", line]
        if (PLAIN.fullmatch(line) and "/" in words[0]
                and "=" not in words[0]):
            argv = words
        try:
            pid = self.spawn(argv)
        except OSError:
            pid = self.spawn(["/bin/sh", "-c", line])
        os.waitpid(pid, 0)

    @staticmethod
    def spawn(argv):
        return os.posix_spawn(
            argv[0], argv, os.environ, setpgroup=0, setsigmask=(),
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null",
                           os.O_RDONLY, 0)])

    def elected(self):
        with self.lock:
            if self.stopping or self.leading:
                return
            self.run_hook("promote")
            self.leading = True

    def stop(self):
        """Called on SIGTERM: demote (if leading) to completion."""
        with self.lock:
            self.stopping = True
            if self.leading:
                self.run_hook("demote")
                self.leading = False


def wait_for_stop():
    """Blocks until SIGTERM or SIGINT (blocked in every thread, see main)."""
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


# ---------------------------------------------------------------- kazoo

def run_kazoo(a, cand):
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=a.hosts, timeout=a.timeout)
    zk.start(timeout=15)
    election = zk.Election(a.path, a.node)
    release = threading.Event()

    def lead():
        cand.elected()
        release.wait()
        # Returning gives the lock up: kazoo deletes our node.

    def campaign():
        try:
            election.run(lead)
        except Exception as e:  # noqa: BLE001 (cancelled, or session gone)
            print(f"{a.node}: election ended: {e!r}", file=sys.stderr)

    t = threading.Thread(target=campaign, daemon=True)
    t.start()
    wait_for_stop()
    cand.stop()
    release.set()
    election.cancel()
    t.join(10)
    zk.stop()
    zk.close()


# ---------------------------------------------------------------- etcdctl

def run_etcdctl(a, cand):
    p = subprocess.Popen(
        [a.etcdctl, f"--endpoints={a.endpoint}", "elect", a.name, a.node],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, ()))

    def watch():
        # etcdctl prints the leader key (then the proposal) once elected.
        if p.stdout.readline():
            cand.elected()
        for _ in p.stdout:
            pass

    threading.Thread(target=watch, daemon=True).start()
    wait_for_stop()
    cand.stop()
    p.send_signal(signal.SIGTERM)       # etcdctl resigns: deletes its key
    p.wait(10)


# ---------------------------------------------------------------- etcd API

def b64(s):
    return base64.b64encode(s.encode()).decode()


def post(endpoint, path, body, timeout=5.0):
    req = urllib.request.Request(
        endpoint + path, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


def run_etcd_api(a, cand):
    lease = post(a.endpoint, "/v3/lease/grant", {"TTL": a.ttl})["ID"]
    stopped = threading.Event()

    def keepalive():
        while not stopped.wait(a.ttl / 3):
            try:
                post(a.endpoint, "/v3/lease/keepalive", {"ID": lease}, 2.0)
            except OSError as e:
                print(f"{a.node}: keepalive: {e}", file=sys.stderr)

    leader = {}

    def campaign():
        try:
            r = post(a.endpoint, "/v3/election/campaign",
                     {"name": b64(a.name), "lease": lease,
                      "value": b64(a.node)}, timeout=None)
        except OSError as e:
            print(f"{a.node}: campaign: {e}", file=sys.stderr)
            return
        leader.update(r["leader"])
        cand.elected()

    threading.Thread(target=keepalive, daemon=True).start()
    threading.Thread(target=campaign, daemon=True).start()
    wait_for_stop()
    cand.stop()
    try:
        if leader:
            post(a.endpoint, "/v3/election/resign", {"leader": leader})
        else:
            post(a.endpoint, "/v3/lease/revoke", {"ID": lease})
    except OSError as e:
        print(f"{a.node}: resign: {e}", file=sys.stderr)
    stopped.set()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("system", choices=("kazoo", "etcdctl", "etcd-api"))
    ap.add_argument("--node", required=True)
    ap.add_argument("--hook", required=True)
    ap.add_argument("--hosts", help="kazoo: ZooKeeper host:port")
    ap.add_argument("--path", help="kazoo: the election's znode")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="kazoo: session timeout, s")
    ap.add_argument("--endpoint", help="etcd: client URL")
    ap.add_argument("--name", help="etcd: election name")
    ap.add_argument("--ttl", type=int, default=2, help="etcd-api: lease TTL, s")
    ap.add_argument("--etcdctl", default="etcdctl")
    a = ap.parse_args()
    # Blocked here, before any thread exists, so every thread inherits the
    # mask and only wait_for_stop's sigwait takes them.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    cand = Candidate(a.hook, a.node)
    {"kazoo": run_kazoo, "etcdctl": run_etcdctl,
     "etcd-api": run_etcd_api}[a.system](a, cand)
    sys.stdout.flush()
    os._exit(0)             # daemon threads may still block in I/O


if __name__ == "__main__":
    main()
