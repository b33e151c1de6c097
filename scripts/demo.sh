#!/bin/bash
# A two-minute look at zkelectd: a throwaway ZooKeeper, three daemons
# electing a leader for the service "demo", a graceful failover.
# Everything lives in one temporary directory and is removed on exit.
#
# Usage (as root on Debian 12, from anywhere): scripts/demo.sh
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
SESSION_TIMEOUT=4s
NODES=(node1 node2 node3)

if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }
else
	say() { printf '\n== %s ==\n' "$*"; }
fi
die() {
	echo "demo: $*" >&2
	for n in "${NODES[@]}"; do
		if [ -f "${DIR:-/nonexistent}/$n.log" ]; then
			echo "--- $n.log (last lines)" >&2
			tail -n 20 "$DIR/$n.log" >&2
		fi
	done
	exit 1
}

# ---------------------------------------------------------------- setup
needs_deps() {
	[ -r /usr/share/java/zookeeper.jar ] || return 0
	command -v java >/dev/null || return 0
	command -v cc >/dev/null || return 0
	command -v pkg-config >/dev/null || return 0
	pkg-config --exists libevent inih libsystemd || return 0
	[ -r /usr/include/zookeeper/zookeeper.h ] || return 0
	return 1
}
if needs_deps; then
	say "installing build and run dependencies (scripts/deps.sh)"
	scripts/deps.sh
fi
if ! make -q all 2>/dev/null; then
	say "building (make)"
	make -s all
fi
ZKELECTD=$REPO/build/zkelectd
ZKELECTCTL=$REPO/build/zkelectctl

DIR=$(mktemp -d /tmp/zkelectd-demo.XXXXXX)
ZK_PID=""
declare -A PID=()

cleanup() {
	local n
	for n in "${!PID[@]}"; do
		kill -TERM "${PID[$n]}" 2>/dev/null || true
	done
	for n in "${!PID[@]}"; do
		for _ in $(seq 50); do
			kill -0 "${PID[$n]}" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "${PID[$n]}" 2>/dev/null || true
	done
	if [ -n "$ZK_PID" ]; then
		kill -KILL "$ZK_PID" 2>/dev/null || true
		wait "$ZK_PID" 2>/dev/null || true
	fi
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=scripts/zklib.sh
. "$REPO/scripts/zklib.sh"

ctl() { "$ZKELECTCTL" -s "$DIR/$1.sock" "${@:2}"; }

# wait_role NODE ROLE SECONDS
wait_role() {
	local deadline=$(($(now_ms) + $3 * 1000))
	while [ "$(ctl "$1" role 2>/dev/null)" != "$2" ]; do
		[ "$(now_ms)" -lt "$deadline" ] || die "$1 did not become $2 within $3 s"
		kill -0 "${PID[$1]}" 2>/dev/null || die "$1 exited"
		sleep 0.1
	done
}

# ---------------------------------------------------------------- ZooKeeper
say "starting a throwaway ZooKeeper"
zk_start "$DIR/zk" 30 || die "ZooKeeper did not start"
echo "ZooKeeper serving on 127.0.0.1:$ZK_PORT (mode $ZK_MODE)"

# ---------------------------------------------------------------- daemons
cat >"$DIR/hook.sh" <<'EOF'
#!/bin/bash
# Demo hook: says what it would do. A real one would move an address,
# start or fence a service... Its line first, with nothing forked: a
# demote has a quarter of the session timeout, and a busy machine is slow
# to start a process.
now=${EPOCHREALTIME/,/.}
us=${now#*.}
printf -v line '%(%T)T.%s  %s: %s (epoch %s, reason %s)' "${now%.*}" \
    "${us:0:3}" "$ZKELECT_ID" "$1" "${ZKELECT_EPOCH:-none}" "$ZKELECT_REASON"
echo "$line"
echo "$line" >>"$DEMO_DIR/hooks.log"
sleep 0.2
EOF
chmod +x "$DIR/hook.sh"
: >"$DIR/hooks.log"

i=0
for n in "${NODES[@]}"; do
	i=$((i + 1))
	cat >"$DIR/$n.conf" <<EOF
[zookeeper]
hosts = 127.0.0.1:$ZK_PORT
session_timeout = $SESSION_TIMEOUT
tick_time = ${ZK_TICK_MS}ms

[election]
service = demo
id = $n
data = 10.0.0.$i:5432

[hooks]
promote = $DIR/hook.sh PROMOTE
demote = $DIR/hook.sh DEMOTE

[control]
socket = $DIR/$n.sock
status_file = $DIR/$n.status
EOF
done

say "starting three daemons: ${NODES[*]}"
for n in "${NODES[@]}"; do
	DEMO_DIR=$DIR "$ZKELECTD" -c "$DIR/$n.conf" >"$DIR/$n.log" 2>&1 &
	PID[$n]=$!
	echo "$n: pid ${PID[$n]}"
	if [ "$n" = node1 ]; then
		wait_role "$n" leader 15
	else
		wait_role "$n" follower 15
	fi
done

say "who leads?"
for n in "${NODES[@]}"; do
	printf '%s says: %s\n' "$n" "$(ctl "$n" role)"
done
echo
echo "\$ zkelectctl -s $DIR/node2.sock leader"
ctl node2 leader
echo
echo "\$ zkelectctl -s $DIR/node2.sock members      (seq, id, data in queue order)"
ctl node2 members

OLD=""
for n in "${NODES[@]}"; do
	if ctl "$n" is-leader >/dev/null 2>&1; then
		OLD=$n
	fi
done
[ -n "$OLD" ] || die "no leader"

say "stopping the leader ($OLD) with SIGTERM"
t0=$(now_ms)
kill -TERM "${PID[$OLD]}"
deadline=$(($(now_ms) + 20000))
while kill -0 "${PID[$OLD]}" 2>/dev/null; do
	[ "$(now_ms)" -lt "$deadline" ] || die "$OLD did not exit within 20 s"
	sleep 0.1
done
set +e
wait "${PID[$OLD]}"
rc=$?
set -e
unset "PID[$OLD]"
echo "$OLD exited with status $rc; its status file now says: $(grep '^role=' "$DIR/$OLD.status")"

NEW=""
deadline=$(($(now_ms) + 20000))
while [ -z "$NEW" ]; do
	for n in "${!PID[@]}"; do
		if [ "$(ctl "$n" role 2>/dev/null)" = leader ]; then
			NEW=$n
		fi
	done
	if [ -z "$NEW" ]; then
		[ "$(now_ms)" -lt "$deadline" ] || die "no successor within 20 s"
		sleep 0.1
	fi
done
echo "$NEW took over $(($(now_ms) - t0)) ms after the SIGTERM"

say "the new leader"
ctl "$NEW" leader
echo
ctl "$NEW" members

say "hook runs, in order"
cat "$DIR/hooks.log"

say "status file of $NEW ($DIR/$NEW.status)"
cat "$DIR/$NEW.status"

say "done; cleaning up"
