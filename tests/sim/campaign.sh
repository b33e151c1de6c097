#!/bin/bash
# Runs a campaign of simulated schedules on several processes.
#   tests/sim/campaign.sh SIM SEED COUNT [JOBS] [-- SIM_OPTIONS...]
# Seeds SEED .. SEED+COUNT-1 are split into JOBS contiguous ranges (default:
# the number of CPUs), one build/sim each; their outputs are printed in
# seed order, then one summary line in build/sim's own format:
#   sim: N schedules, N passed, N failed, N events, N.N s, N sched/s, N events/s
# Exits 1 if any schedule failed, 2 if a process could not run.
set -u
sim=$1
seed=$2
count=$3
jobs=${4:-$(nproc)}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = "--" ] && shift
[ "$jobs" -ge 1 ] || jobs=1
[ "$jobs" -le "$count" ] || jobs=$count

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s%N)
per=$(((count + jobs - 1) / jobs))
pids=()
for ((j = 0; j < jobs; j++)); do
	s=$((seed + j * per))
	n=$((count - j * per < per ? count - j * per : per))
	[ "$n" -gt 0 ] || break
	"$sim" -s "$s" -n "$n" "$@" >"$dir/$j" 2>&1 &
	pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
	wait "$pid"
	rc=$?
	[ "$rc" -le 1 ] || status=2
done
sched=0 passed=0 failed=0 events=0
for ((j = 0; j < ${#pids[@]}; j++)); do
	grep -v '^sim: [0-9]* schedules,' "$dir/$j"
	line=$(grep '^sim: [0-9]* schedules,' "$dir/$j" | tail -n 1)
	if [[ "$line" =~ ^sim:\ ([0-9]+)\ schedules,\ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ events ]]; then
		sched=$((sched + BASH_REMATCH[1]))
		passed=$((passed + BASH_REMATCH[2]))
		failed=$((failed + BASH_REMATCH[3]))
		events=$((events + BASH_REMATCH[4]))
	else
		echo "campaign: process $j printed no summary" >&2
		status=2
	fi
done
ms=$((($(date +%s%N) - start) / 1000000))
awk -v n="$sched" -v p="$passed" -v f="$failed" -v e="$events" -v t="$ms" \
    -v j="${#pids[@]}" 'BEGIN {
	t /= 1000
	fmt = "sim: %d schedules, %d passed, %d failed, %.0f events, %.1f s, "
	fmt = fmt "%.0f sched/s, %.0f events/s (%d processes)\n"
	printf fmt, n, p, f, e, t, (t > 0 ? n / t : 0), (t > 0 ? e / t : 0), j
}'
[ "$status" -eq 0 ] || exit "$status"
[ "$failed" -eq 0 ]
