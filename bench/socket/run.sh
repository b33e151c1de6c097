#!/bin/bash
# Control-socket benchmark: `role` queries per second and their latency
# against one running zkelectd, with 1 and 32 concurrent clients (closed
# loop) and 32 clients offering a fixed 20,000 queries/s (open loop).
#
# Self-contained: builds the daemon if needed (`make` at the repo root) and
# the load generator, starts a throwaway ZooKeeper on a free loopback port
# and one zkelectd (socket and status file in a temporary directory), waits
# until it leads, runs bench/socket/loadgen RUNS times per scenario, prints
# every run and the medians, and removes everything on exit.
#
# Usage (as root on Debian 12, from anywhere): bench/socket/run.sh
# Environment:
#   SCENARIOS  "1 32 32@20000": N is a closed loop of N clients, N@R is N
#              clients starting R queries/s in all (open loop)
#   RUNS 3, DURATION 10 (seconds measured), WARMUP 1 (seconds)
#   REF        a commit to benchmark instead of the working tree: exported
#              with git archive and built in the temporary directory
#   QUIET 30, QUIET_WAIT 120: before each run, wait until the machine was
#              under QUIET % of one core busy for a second, at most
#              QUIET_WAIT seconds (others share it)
#   LOADGEN_NICE 0: nice value of the load generator (an experiment: how
#              much of the latency is the scheduler sharing 2 cores)
#   BASELINE=1 also run the scenarios against bench/socket/baseline, a
#              minimal blocking server of the same protocol (the floor)
#   BIN_DIR    a directory with zkelectd and zkelectctl built elsewhere, to
#              measure them instead (no build)
#   KEEP=1     keep the temporary directory (logs, results)
#   PROFILE=1  one more run per scenario under `perf record` of the daemon,
#              reports in $OUT (default bench/socket/out)
#   DAEMON_WRAPPER  put before the daemon's command line, e.g.
#              "valgrind --tool=callgrind --callgrind-out-file=/tmp/cg" or
#              "strace -f -c -o /tmp/sc" with a short DURATION (the figures
#              are then the tool's; dmn% is the wrapper's own process)
set -euo pipefail

cd "$(dirname "$0")/../.."
REPO=$PWD
SCENARIOS=${SCENARIOS:-"1 32 32@20000"}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-1}
PROFILE=${PROFILE:-0}
OUT=${OUT:-$REPO/bench/socket/out}
REF=${REF:-}
BIN_DIR=${BIN_DIR:-}
LOADGEN_NICE=${LOADGEN_NICE:-0}
BASELINE=${BASELINE:-0}
QUIET=${QUIET:-30}
QUIET_WAIT=${QUIET_WAIT:-120}
ZKELECTD=$REPO/build/zkelectd
ZKELECTCTL=$REPO/build/zkelectctl
LOADGEN=$REPO/bench/socket/loadgen
BASELINE_BIN=$REPO/bench/socket/baseline

say() { printf '== %s\n' "$*" >&2; }
die() {
	echo "run.sh: $*" >&2
	if [ -f "${DIR:-/nonexistent}/zkelectd.log" ]; then
		echo "--- zkelectd.log (last lines)" >&2
		tail -n 20 "$DIR/zkelectd.log" >&2
	fi
	exit 1
}

[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be 1..99"
[[ $DURATION =~ ^[1-9][0-9]{0,2}$ ]] || die "DURATION must be 1..999 (s)"
[[ $WARMUP =~ ^[0-9]{1,2}$ ]] || die "WARMUP must be 0..99 (s)"
[[ $LOADGEN_NICE =~ ^-?[0-9]{1,2}$ ]] || die "LOADGEN_NICE must be -19..19"
[[ $BASELINE =~ ^[01]$ ]] || die "BASELINE must be 0 or 1"
[[ $QUIET =~ ^[0-9]{1,3}$ ]] || die "QUIET must be 0..999 (% of one core)"
[[ $QUIET_WAIT =~ ^[0-9]{1,3}$ ]] || die "QUIET_WAIT must be 0..999 (s)"
for s in $SCENARIOS; do
	[[ $s =~ ^[1-9][0-9]{0,2}(@[1-9][0-9]{0,6})?$ ]] ||
		die "scenario $s: N (1..999) or N@RATE"
done

# ---------------------------------------------------------------- cleanup
DIR=$(mktemp -d /tmp/zkbench.XXXXXX)
ZK_PID=""
D_PID=""
B_PID=""
LG_PID=""
PERF_PID=""

stop_group() {	# PGID SECONDS: SIGTERM to the group, SIGKILL after SECONDS
	local i
	kill -TERM -- "-$1" 2>/dev/null || return 0
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 -- "-$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	[ -z "$LG_PID" ] || { kill -KILL "$LG_PID" 2>/dev/null; wait "$LG_PID"; } || true
	[ -z "$PERF_PID" ] || { kill -INT "$PERF_PID" 2>/dev/null; wait "$PERF_PID"; } || true
	[ -z "$B_PID" ] || stop_group "$B_PID" 2
	[ -z "$D_PID" ] || stop_group "$D_PID" 10
	if [ -n "$ZK_PID" ]; then
		# setsid made it a group leader: the whole JVM goes.
		kill -KILL -- "-$ZK_PID" 2>/dev/null || true
		wait "$ZK_PID" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $DIR" >&2
	else
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- build
if [ -n "$BIN_DIR" ]; then
	# Binaries built elsewhere (an experiment): used as they are.
	REV="binaries of $BIN_DIR"
	ZKELECTD=$BIN_DIR/zkelectd
	ZKELECTCTL=$BIN_DIR/zkelectctl
elif [ -n "$REF" ]; then
	# A commit, exported and built in the temporary directory: neither the
	# working tree nor build/ is touched, and others' edits in progress
	# do not end up in the figures.
	REV=$(git -C "$REPO" rev-parse --short "$REF^{commit}") ||
		die "REF $REF: no such commit"
	say "building zkelectd $REV in $DIR/tree"
	mkdir "$DIR/tree"
	git -C "$REPO" archive "$REV" | tar -x -C "$DIR/tree"
	make -s -C "$DIR/tree" all >"$DIR/build.log" 2>&1 ||
		{ tail -n 20 "$DIR/build.log" >&2; die "make of $REV failed"; }
	ZKELECTD=$DIR/tree/build/zkelectd
	ZKELECTCTL=$DIR/tree/build/zkelectctl
else
	REV="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
	if git --no-optional-locks -C "$REPO" status --porcelain -- src \
	    Makefile 2>/dev/null | grep -q .; then
		REV+=" + uncommitted changes in src/ or Makefile"
	fi
	if ! make -q all 2>/dev/null; then
		say "building the daemon (make)"
		make -s all || die "make failed"
	fi
fi
make -s -C bench/socket >/dev/null || die "cannot build bench/socket"
for b in "$ZKELECTD" "$ZKELECTCTL" "$LOADGEN" "$BASELINE_BIN"; do
	[ -x "$b" ] || die "$b missing after the build"
done

# shellcheck source=scripts/zklib.sh
. "$REPO/scripts/zklib.sh"

# ---------------------------------------------------------------- ZooKeeper
say "starting a throwaway ZooKeeper"
zk_start "$DIR/zk" 60 || die "ZooKeeper did not start"

# ---------------------------------------------------------------- zkelectd
say "starting zkelectd"
SOCK=$DIR/ctl.sock
cat >"$DIR/zkelectd.conf" <<EOF
[zookeeper]
hosts = 127.0.0.1:$ZK_PORT
tick_time = ${ZK_TICK_MS}ms
session_timeout = 10s

[election]
service = bench
id = bench1

[control]
socket = $SOCK
status_file = $DIR/status
log_level = warning
EOF
# Its own process group, so that a wrapper (strace -f) and the daemon under
# it end together.
# shellcheck disable=SC2086 # the wrapper is a command line
setsid ${DAEMON_WRAPPER:-} "$ZKELECTD" -c "$DIR/zkelectd.conf" </dev/null >"$DIR/zkelectd.log" 2>&1 &
D_PID=$!
# wait needs the socket: first wait until the daemon answers at all.
deadline=$(($(now_ms) + 20000))
until [ "$("$ZKELECTCTL" -s "$SOCK" ping 2>/dev/null)" = pong ]; do
	kill -0 "$D_PID" 2>/dev/null || die "zkelectd exited"
	[ "$(now_ms)" -lt "$deadline" ] || die "zkelectd not answering after 20 s"
	sleep 0.1
done
"$ZKELECTCTL" -s "$SOCK" wait leader -t 20s >/dev/null ||
	die "zkelectd did not become leader within 20 s"

# ---------------------------------------------------------------- load
# cpu_ticks PID: user+system clock ticks of a process so far.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# busy_ticks: clock ticks all CPUs spent busy so far (all but idle, iowait).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
HZ=$(getconf CLK_TCK)

# loadgen_args SCENARIO SOCKET: "N" is a closed loop of N clients, "N@R"
# N clients starting R queries a second in all (open loop).
loadgen_args() {
	local a=(-s "$2" -c "${1%@*}" -w "$WARMUP" -d "$DURATION" -e leader)
	[ "${1#*@}" = "$1" ] || a+=(-r "${1#*@}")
	printf '%s\n' "${a[@]}"
}

# wait_quiet: the machine is shared (other people's builds and tests); wait
# until it was less than QUIET % of one core busy for a second, at most
# QUIET_WAIT seconds, then run anyway (oth% in the table tells).
wait_quiet() {
	local i b0 b1
	for ((i = 0; i < QUIET_WAIT; i++)); do
		b0=$(busy_ticks)
		sleep 1
		b1=$(busy_ticks)
		[ $(((b1 - b0) * 100 / HZ)) -ge "$QUIET" ] || return 0
	done
	[ "$QUIET_WAIT" -eq 0 ] ||
		say "machine still busy after ${QUIET_WAIT} s, running anyway"
}

RESULTS=$DIR/results
: >"$RESULTS"
# run_load SCENARIO LABEL SOCKET PID: one load generator run against the
# server PID; its line, LABEL and the server's CPU share over the whole run
# (warm-up included) go to RESULTS.
run_load() {
	local before after busy0 busy1 line elapsed t0 args
	mapfile -t args < <(loadgen_args "$1" "$3")
	wait_quiet
	before=$(cpu_ticks "$4")
	busy0=$(busy_ticks)
	t0=$(now_ms)
	# In the background, so that a signal to this script is handled at
	# once (the trap runs when wait returns), not after the whole run.
	nice -n "$LOADGEN_NICE" "$LOADGEN" "${args[@]}" >"$DIR/line" &
	LG_PID=$!
	wait "$LG_PID" || die "loadgen failed ($1): $(cat "$DIR/line")"
	LG_PID=""
	line=$(cat "$DIR/line")
	elapsed=$(($(now_ms) - t0))
	after=$(cpu_ticks "$4")
	busy1=$(busy_ticks)
	kill -0 "$4" 2>/dev/null || die "the server ($2) died under load"
	line="scenario=$2 $line"
	line+=" daemon_cpu_pct=$(((after - before) * 100000 / HZ / elapsed))"
	line+=" machine_cpu_pct=$(((busy1 - busy0) * 100000 / HZ / elapsed))"
	echo "$line" >>"$RESULTS"
	echo "$line" >&2
}

for s in $SCENARIOS; do
	for ((r = 1; r <= RUNS; r++)); do
		say "$s run $r/$RUNS (${WARMUP} s warm-up, ${DURATION} s measured)"
		run_load "$s" "$s" "$SOCK" "$D_PID"
	done
done

if [ "$PROFILE" = 1 ]; then
	mkdir -p "$OUT"
	for s in $SCENARIOS; do
		say "$s: perf record of the daemon"
		perf record -e cpu-clock -F 1000 --call-graph dwarf,16384 \
		    -p "$D_PID" \
		    -o "$OUT/perf-$s.data" -- sleep "$((WARMUP + DURATION))" \
		    2>"$OUT/perf-$s.log" &
		PERF_PID=$!
		mapfile -t args < <(loadgen_args "$s" "$SOCK")
		"$LOADGEN" "${args[@]}" >"$DIR/line" &
		LG_PID=$!
		wait "$LG_PID" || die "loadgen failed under perf"
		LG_PID=""
		line=$(cat "$DIR/line")
		wait "$PERF_PID" || die "perf record failed: $OUT/perf-$s.log"
		PERF_PID=""
		echo "under perf: $line" >&2
		# Inclusive: what each function costs with all it calls.
		perf report -i "$OUT/perf-$s.data" --children --stdio \
		    --sort symbol -g none 2>/dev/null | grep -v '^$' \
		    >"$OUT/perf-$s.txt" || true
	done
fi

[ "$("$ZKELECTCTL" -s "$SOCK" role)" = leader ] ||
	die "zkelectd is no longer leader after the load"

ORDER=$SCENARIOS
if [ "$BASELINE" = 1 ]; then
	# The same scenarios against the floor: a minimal blocking server.
	say "starting the baseline server"
	setsid "$BASELINE_BIN" "$DIR/base.sock" leader </dev/null \
	    >"$DIR/baseline.log" 2>&1 &
	B_PID=$!
	deadline=$(($(now_ms) + 10000))
	until [ -S "$DIR/base.sock" ]; do
		kill -0 "$B_PID" 2>/dev/null || die "baseline exited"
		[ "$(now_ms)" -lt "$deadline" ] || die "no baseline socket"
		sleep 0.1
	done
	for s in $SCENARIOS; do
		ORDER+=" base:$s"
		for ((r = 1; r <= RUNS; r++)); do
			say "baseline $s run $r/$RUNS"
			run_load "$s" "base:$s" "$DIR/base.sock" "$B_PID"
		done
	done
fi

# ---------------------------------------------------------------- report
# Every run, then per scenario the median of each figure over its runs.
echo
awk -v order="$ORDER" '
BEGIN {
	nk = split("qps p50_us p99_us p999_us max_us errors daemon_cpu_pct " \
	    "loadgen_cpu_pct other_cpu_pct", K, " ")
	fmt = "%-9s %-6s %7s %8s %8s %8s %8s %6s %5s %5s %5s\n"
}
function row(s, r, v) {
	printf fmt, s, r, sprintf("%.0f", v[1]), sprintf("%.1f", v[2]),
	    sprintf("%.1f", v[3]), sprintf("%.1f", v[4]), sprintf("%.1f", v[5]),
	    v[6], v[7], v[8], v[9]
}
# The median of figure k over the runs of scenario s (the lower of the
# two middle ones for an even count).
function median(s, k,    n, i, j, t, v) {
	n = runs[s]
	for (i = 1; i <= n; i++)
		v[i] = val[s, k, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return v[int((n + 1) / 2)]
}
{
	split("", f)
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		f[kv[1]] = kv[2]
	}
	s = f["scenario"]
	n = ++runs[s]
	f["errors"] += f["missed"]
	f["other_cpu_pct"] = f["machine_cpu_pct"] - \
	    (f["daemon_cpu_pct"] + f["loadgen_cpu_pct"])
	for (i = 1; i <= nk; i++)
		val[s, i, n] = f[K[i]] + 0
}
END {
	printf fmt, "scenario", "run", "qps", "p50_us", "p99_us", "p99.9_us",
	    "max_us", "errors", "dmn%", "lg%", "oth%"
	ns = split(order, S, " ")
	for (a = 1; a <= ns; a++) {
		s = S[a]
		for (r = 1; r <= runs[s]; r++) {
			for (i = 1; i <= nk; i++)
				v[i] = val[s, i, r]
			row(s, r, v)
		}
		for (i = 1; i <= nk; i++)
			v[i] = median(s, i)
		row(s, "median", v)
		met = v[1] >= 20000 && v[3] < 1000 && v[6] == 0
		verdict[a] = sprintf("%-9s target (>= 20000 q/s, p99 < 1000 us):" \
		    " %s", s, met ? "met" : "NOT met")
	}
	print ""
	for (a = 1; a <= ns; a++)
		print verdict[a]
}' "$RESULTS"
echo
echo "scenario N: closed loop of N clients; N@R: N clients, R queries/s in all"
echo "(open loop, latency from the due time); errors include missed queries."
[ "$BASELINE" != 1 ] ||
	echo "base:S: scenario S against bench/socket/baseline (the floor)."
echo "CPU over the whole run, warm-up included, 100 = one core: dmn% the server,"
echo "lg% the load generator, oth% everything else on the machine."
echo "daemon: $REV"
