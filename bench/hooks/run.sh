#!/bin/bash
# Hook benchmark (issue 8, part 3 and 4): how soon a hook starts and how
# soon its end is seen, for this tree's hook runner and daemon and for an
# older commit's (OLD, default the merge base with main), alternating.
#
#   A  hookbench (hook.c linked into a loop like the daemon's) runs the
#      hook "exec stamp FILE" RUNS times: hook_run() called -> /bin/sh
#      execve'd, -> stamp's main, and how long hook_run() kept the loop.
#   B  the same runs: the hook's last process exits -> done callback.
#   C  the real daemon, leader against a throwaway local ZooKeeper, with
#      the demote hook "exec stamp FILE": SIGTERM -> /bin/sh execve'd of
#      the demote, -> stamp's main; RUNS_C daemons started per build.
#
# Kernel-side instants (execve done, process exit, SIGTERM generated) come
# from ftrace tracepoints (sched_process_exec, sched_process_exit,
# signal_generate) in a tracefs instance of this script's own, with the
# "mono" trace clock, which is CLOCK_MONOTONIC, so that they line up with
# the programs' clock_gettime() stamps; no BPF, no ptrace (strace would
# stop every traced process at each system call and slow exactly the
# clone/exec path being measured). Without tracefs those columns are empty.
#
# Usage (as root, Debian 12, from anywhere): bench/hooks/run.sh
# Environment: RUNS 50, RUNS_C 50, OLD (a commit), PRIO (a command put
# before the measured programs, e.g. "chrt -f 10": real-time priority, so
# that other people's processes on the machine do not decide the figures),
# KEEP=1 keeps the temporary directory.
set -euo pipefail

cd "$(dirname "$0")/../.."
REPO=$PWD
RUNS=${RUNS:-50}
RUNS_C=${RUNS_C:-50}
OLD=${OLD:-$(git merge-base HEAD main)}
PRIO=${PRIO:-}
BENCH=$REPO/bench/hooks

say() { printf '== %s\n' "$*" >&2; }
die() { echo "run.sh: $*" >&2; exit 1; }

[[ $RUNS =~ ^[1-9][0-9]{0,3}$ ]] || die "RUNS must be 1..9999"
[[ $RUNS_C =~ ^[0-9]{1,4}$ ]] || die "RUNS_C must be 0..9999"

DIR=$(mktemp -d /tmp/zkhooks.XXXXXX)
ZK_PID=""
D_PID=""
TRACE=""
# shellcheck source=scripts/tracefs.sh
. "$REPO/scripts/tracefs.sh"

cleanup() {
	if [ -n "$D_PID" ]; then
		kill -KILL -- "-$D_PID" 2>/dev/null || true
		wait "$D_PID" 2>/dev/null || true
	fi
	if [ -n "$ZK_PID" ]; then
		kill -KILL -- "-$ZK_PID" 2>/dev/null || true
		wait "$ZK_PID" 2>/dev/null || true
	fi
	tracefs_stop
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $DIR" >&2
	else
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- build
NEW=$(git rev-parse --short HEAD)
if git --no-optional-locks status --porcelain -- src Makefile | grep -q .; then
	NEW+="+uncommitted"
fi
OLD=$(git rev-parse --short "$OLD^{commit}") || die "OLD: no such commit"
say "building this tree ($NEW) and $OLD"
make -s all >/dev/null || die "make failed"
make -s -C "$BENCH" >/dev/null || die "cannot build bench/hooks"
mkdir "$DIR/old"
git archive "$OLD" | tar -x -C "$DIR/old"
make -s -C "$DIR/old" all >"$DIR/old-build.log" 2>&1 ||
	die "make of $OLD failed (see $DIR/old-build.log)"
make -s -C "$BENCH" BIN="$DIR/hookbench-old" \
    HOOK_SRC="$DIR/old/src/hook.c" >/dev/null || die "hookbench of $OLD"
STAMP=$BENCH/stamp

# ---------------------------------------------------------------- ftrace
tracefs_start "$DIR" "zkhooks$$" 16384 sched/sched_process_exec \
    sched/sched_process_exit signal/signal_generate
if [ -n "$TRACE" ]; then
	echo 'sig == 15' >"$TRACE/events/signal/signal_generate/filter"
else
	say "no tracefs: kernel-side columns stay empty"
fi

# ---------------------------------------------------------------- A, B
say "A/B: hookbench, $RUNS runs each, alternating in tens"
for ((done_runs = 0; done_runs < RUNS; done_runs += 10)); do
	n=$((RUNS - done_runs < 10 ? RUNS - done_runs : 10))
	# shellcheck disable=SC2086 # PRIO is a command line
	$PRIO "$BENCH/hookbench" "$n" "$STAMP" "$DIR/ab-new.stamps" \
	    >>"$DIR/ab-new.runs" || die "hookbench failed"
	# shellcheck disable=SC2086
	$PRIO "$DIR/hookbench-old" "$n" "$STAMP" "$DIR/ab-old.stamps" \
	    >>"$DIR/ab-old.runs" || die "hookbench ($OLD) failed"
done

# ---------------------------------------------------------------- C
if [ "$RUNS_C" -gt 0 ]; then
	# shellcheck source=scripts/zklib.sh
	. "$REPO/scripts/zklib.sh"
	say "C: starting a throwaway ZooKeeper"
	zk_start "$DIR/zk" 60 || die "ZooKeeper did not start"
	# c_run BUILD_DIR LABEL: one daemon, leader, then SIGTERM.
	c_run() {
		local conf=$DIR/c.conf sock=$DIR/c.sock t
		cat >"$conf" <<-CONF
		[zookeeper]
		hosts = 127.0.0.1:$ZK_PORT
		tick_time = ${ZK_TICK_MS}ms
		session_timeout = 4s
		[election]
		service = hookbench
		id = bench
		[hooks]
		demote = exec $STAMP $DIR/c-$2.stamps
		demote_on_start = no
		[control]
		socket = $sock
		status_file = $DIR/c.status
		log_level = warning
		CONF
		# shellcheck disable=SC2086
		setsid $PRIO "$1/zkelectd" -c "$conf" </dev/null \
		    >>"$DIR/c-$2.log" 2>&1 &
		D_PID=$!
		t=$(($(now_ms) + 20000))
		until [ "$("$1/zkelectctl" -s "$sock" ping 2>/dev/null)" = pong ]; do
			[ "$(now_ms)" -lt "$t" ] || die "$2 daemon not answering"
			sleep 0.05
		done
		"$1/zkelectctl" -s "$sock" wait leader -t 20s >/dev/null ||
			die "$2 daemon did not lead"
		# sigstamp's line: its clock just before kill(); the daemon pid.
		echo "$("$BENCH/sigstamp" "$D_PID") $D_PID" >>"$DIR/c-$2.sig"
		wait "$D_PID" || die "$2 daemon exited $?"
		D_PID=""
	}
	say "C: $RUNS_C SIGTERMs to a leading daemon per build, alternating"
	for ((i = 0; i < RUNS_C; i++)); do
		c_run "$REPO/build" new
		c_run "$DIR/old/build" old
	done
fi

[ -z "$TRACE" ] || cat "$TRACE/trace" >"$DIR/trace"
{
	echo "machine: $(nproc) CPUs, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "new: $NEW, old: $OLD, PRIO: ${PRIO:-none}"
} >"$DIR/about"
/usr/bin/python3 "$BENCH/report.py" "$DIR"
