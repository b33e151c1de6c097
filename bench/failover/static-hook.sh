#!/bin/bash
# The handoff gap of zkelectd alone, with the cheapest hook there is: a
# static program (stamp.c) that writes CLOCK_REALTIME, exec'd by
# `/bin/sh -c exec`. Three daemons on a throwaway ZooKeeper; the leader is
# asked to resign ROUNDS times (an ordered handoff, as on SIGTERM); prints
# the median gap between the old leader's demote and the successor's
# promote. Run by hand: bench/failover/static-hook.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-30}
BIN=${ZKELECTD_BIN_DIR:-build}
# shellcheck source=scripts/zklib.sh
. scripts/zklib.sh
D=$(mktemp -d /tmp/zkstatic.XXXXXX)
cleanup() {
	pkill -TERM -f "$D/" 2>/dev/null || true
	[ -n "${ZK_PID:-}" ] && kill "$ZK_PID" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$D"
}
trap cleanup EXIT
cc -O2 -static -o "$D/stamp" bench/failover/stamp.c
zk_start "$D/zk" 30 >/dev/null
for n in a b c; do
	cat >"$D/$n.conf" <<EOC
[zookeeper]
hosts = 127.0.0.1:$ZK_PORT
tick_time = ${ZK_TICK_MS}ms
session_timeout = 2s
[election]
service = static
id = $n
[hooks]
promote = exec $D/stamp $D/events promote $n
demote = exec $D/stamp $D/events demote $n
demote_on_start = no
[control]
socket = $D/$n.sock
status_file = $D/$n.status
EOC
	"$BIN/zkelectd" -c "$D/$n.conf" 2>"$D/$n.log" &
	sleep 0.5
done
sleep 1
for _ in $(seq 1 "$ROUNDS"); do
	for n in a b c; do
		if [ "$("$BIN/zkelectctl" -s "$D/$n.sock" role 2>/dev/null)" = leader ]; then
			"$BIN/zkelectctl" -s "$D/$n.sock" resign >/dev/null
			break
		fi
	done
	sleep 0.3
done
/usr/bin/python3 - "$D/events" <<'PY'
import statistics, sys
gaps, last = [], None
for line in open(sys.argv[1]):
    t, ev, _ = line.split()
    if ev == "demote":
        last = int(t)
    elif ev == "promote" and last is not None:
        gaps.append((int(t) - last) / 1e6)
        last = None
gaps = gaps[2:]     # ZooKeeper warms up
print("handoffs %d, gap median %.2f ms, min %.2f, max %.2f" % (
    len(gaps), statistics.median(gaps), min(gaps), max(gaps)))
PY
