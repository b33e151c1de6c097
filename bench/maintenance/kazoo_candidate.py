#!/usr/bin/python3
"""One kazoo candidate for bench/maintenance: Debian's python3-kazoo
`Election` recipe, used the way its documentation suggests.

  kazoo_candidate.py --hosts H:P,... --path /x/election --node k10a \
      --timeout SECONDS --hook CMD --hosts-file FILE

Once elected it runs `CMD promote NODE` and leads until its session is LOST
(expired): then `CMD demote NODE`, and it campaigns again on the new
session. A SUSPENDED connection (lost, not yet expired) keeps it leading,
which is what the recipe does by itself: kazoo's leader function is not
interrupted by a disconnect. Hooks run as zkelectd runs them (`/bin/sh -c`,
own process group, stdin /dev/null), never two at once.

SIGHUP: read the new host list from --hosts-file and hand it to
KazooClient.set_hosts (used at the next reconnect: kazoo does not move a
live connection). SIGTERM/SIGINT: demote if leading, leave, exit 0.
"""

import argparse
import signal
import subprocess
import sys
import threading


def hook(cmd, event, node):
    subprocess.run(["/bin/sh", "-c", f"{cmd} {event} {node}"],
                   stdin=subprocess.DEVNULL, start_new_session=True,
                   check=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--hook", required=True)
    ap.add_argument("--hosts-file", required=True)
    a = ap.parse_args()

    # Only the main thread takes these, through sigwait below.
    signal.pthread_sigmask(signal.SIG_BLOCK,
                           {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    from kazoo.client import KazooClient, KazooState

    zk = KazooClient(hosts=a.hosts, timeout=a.timeout)
    lost = threading.Event()
    stop = threading.Event()

    def listener(state):
        if state == KazooState.LOST:
            lost.set()
    zk.add_listener(listener)
    zk.start(timeout=60)

    def lead():
        hook(a.hook, "promote", a.node)
        while not (lost.is_set() or stop.is_set()):
            lost.wait(0.05)
        hook(a.hook, "demote", a.node)
        # Returning gives the lock up (kazoo deletes the node if it can).

    current = {}

    def campaign():
        while not stop.is_set():
            lost.clear()
            election = zk.Election(a.path, a.node)
            current["e"] = election
            try:
                election.run(lead)
            except Exception as e:  # noqa: BLE001 (session lost, cancelled)
                print(f"{a.node}: election: {e!r}", file=sys.stderr)
            # A lost session: wait for kazoo's new one before campaigning.
            while not stop.is_set() and zk.state != KazooState.CONNECTED:
                stop.wait(0.05)

    t = threading.Thread(target=campaign, daemon=True)
    t.start()
    while True:
        sig = signal.sigwait({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
        if sig == signal.SIGHUP:
            with open(a.hosts_file) as f:
                hosts = f.read().strip()
            zk.set_hosts(hosts)
            print(f"{a.node}: hosts now {hosts}", file=sys.stderr)
            continue
        break
    stop.set()
    if "e" in current:
        current["e"].cancel()
    t.join(30)
    zk.stop()
    zk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
