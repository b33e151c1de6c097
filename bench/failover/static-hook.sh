#!/bin/bash
# The handoff gap of zkelectd alone, with the cheapest hook there is: a
# static program (stamp.c) that writes the clocks, exec'd by zkelectd
# itself (a hook line of plain words; VIA_SHELL=1: by `/bin/sh -c exec`).
# Three daemons on a throwaway ZooKeeper; the leader is asked to resign ROUNDS times (an ordered handoff, as on SIGTERM); prints
# the median gap between the old leader's demote and the successor's
# promote. Run by hand: bench/failover/static-hook.sh [ROUNDS]
# ZKELECTD_LOG_LEVEL=debug: the daemons write their trace lines, and
# share.py splits each gap into its parts (zkelectd's own share);
# KEEP=1 keeps the directory (logs, events) and says where. At debug,
# when tracefs can be had (root), the kernel's execve and exit instants
# (sched_process_exec/exit, "mono" clock = CLOCK_MONOTONIC) are recorded
# in a tracefs instance of this script's own, for share.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-30}
# WIRE=1 (with debug) also records the packets on lo (net_dev_queue) and
# the wake-ups (sched_wakeup), and wire.py splits the release's way to the
# successor: the old leader's process, the server, the successor's library.
# The hook line: plain words, which zkelectd execs itself; VIA_SHELL=1
# puts `exec ` before it, so that /bin/sh -c starts first and execs it
# (how every hook ran before issue 21's direct exec).
VIA=
[ "${VIA_SHELL:-0}" = 1 ] && VIA="exec "
BIN=${ZKELECTD_BIN_DIR:-build}
LEVEL=${ZKELECTD_LOG_LEVEL:-info}
# shellcheck source=scripts/zklib.sh
. scripts/zklib.sh
D=$(mktemp -d /tmp/zkstatic.XXXXXX)
PIDS=()
# shellcheck source=scripts/tracefs.sh
. scripts/tracefs.sh
# Only what this script started, by process id.
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	[ -n "${ZK_PID:-}" ] && kill "$ZK_PID" 2>/dev/null
	wait 2>/dev/null || true
	tracefs_stop
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $D" >&2
	else
		rm -rf "$D"
	fi
}
trap cleanup EXIT
cc -O2 -static -o "$D/stamp" bench/failover/stamp.c
zk_start "$D/zk" 30 >/dev/null
if [ "$LEVEL" = debug ]; then
	EXTRA=()
	[ "${WIRE:-0}" = 1 ] && EXTRA=(net/net_dev_queue sched/sched_wakeup)
	tracefs_start "$D" "zkstatic$$" 65536 sched/sched_process_exec \
	    sched/sched_process_exit "${EXTRA[@]}"
	[ -n "$TRACE" ] || echo "no tracefs: no kernel instants" >&2
fi
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
promote = $VIA$D/stamp $D/events promote $n
demote = $VIA$D/stamp $D/events demote $n
demote_on_start = no
[control]
socket = $D/$n.sock
status_file = $D/$n.status
log_level = $LEVEL
EOC
	"$BIN/zkelectd" -c "$D/$n.conf" 2>"$D/$n.log" &
	PIDS+=("$!")
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
    t, ev = line.split()[:2]
    if ev == "demote":
        last = int(t)
    elif ev == "promote" and last is not None:
        gaps.append((int(t) - last) / 1e6)
        last = None
gaps = gaps[2:]     # ZooKeeper warms up
print("handoffs %d, gap median %.2f ms, min %.2f, max %.2f" % (
    len(gaps), statistics.median(gaps), min(gaps), max(gaps)))
PY
if [ "$LEVEL" = debug ]; then
	FT=()
	if [ -n "$TRACE" ]; then
		echo 0 >"$TRACE/tracing_on"
		cat "$TRACE/trace" >"$D/ftrace"
		FT=(--ftrace "$D/ftrace")
	fi
	# shellcheck disable=SC2086 # SHARE_ARGS: options, split on purpose
	/usr/bin/python3 bench/failover/share.py --skip 2 "${FT[@]}" \
	    ${SHARE_ARGS:-} "$D/events" "$D/a.log" "$D/b.log" "$D/c.log"
	if [ "${WIRE:-0}" = 1 ] && [ -n "$TRACE" ]; then
		/usr/bin/python3 bench/failover/wire.py "$D"
	fi
fi
