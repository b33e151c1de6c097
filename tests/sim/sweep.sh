#!/bin/bash
# A campaign for every combination of the simulator's optional fault
# families (`make sim`, and scripts/check.sh with fixed seeds).
#   tests/sim/sweep.sh SIM SEED|random COUNT [JOBS [PLAIN_COUNT]] [-- OPTIONS...]
# Combination i (0: no family) runs COUNT schedules (PLAIN_COUNT for the
# plain one, default COUNT) from seed SEED + i * 1000000, on JOBS processes
# (default: every CPU), with OPTIONS added; random draws SEED afresh. Each
# campaign prints its own summary line (campaign.sh's). A failure prints
# the lines that replay it. Exits 1 if any schedule failed, 2 if a
# campaign could not run.
set -u
sim=$1
seed=$2
count=$3
jobs=${4:-$(nproc)}
plain=${5:-$count}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = "--" ] && shift
# The families (tests/sim/README.md): -k 2000 tickTime modelled, -W
# switchovers, -P priorities (reloads, forged markers), -L the ensemble's
# leader, its tick, elections and server restarts, -R crash restarts that
# resume their session and re-execs, -H hooks.run exits and hooks.check
# reloads.
families=("-k 2000" "-W" "-P" "-L" "-R" "-H")
if [ "$seed" = random ]; then
	seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
fi
echo "sim sweep: starting seed $seed, $((1 << ${#families[@]})) flag combinations"
status=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((mask = 0; mask < 1 << ${#families[@]}; mask++)); do
	flags=()
	for i in "${!families[@]}"; do
		# shellcheck disable=SC2206
		((mask & 1 << i)) && flags+=(${families[$i]})
	done
	flags+=("$@")
	s=$((seed + mask * 1000000))
	n=$count
	[ "$mask" -eq 0 ] && n=$plain
	echo "-- seeds $s..$((s + n - 1)), flags: ${flags[*]:-none}"
	tests/sim/campaign.sh "$sim" "$s" "$n" "$jobs" -- "${flags[@]}" |
	    tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 1 ] && [ "$status" -eq 0 ] && status=1
		[ "$rc" -gt 1 ] && status=2
		sed -nE "s/^sim: seed ([0-9]+) FAILED.*/\\1/p" "$out" |
		    sort -un | head -n 5 | while read -r f; do
			echo "replay: $sim -s $f${flags[*]:+ ${flags[*]}} -v"
		done
	fi
done
echo "sim sweep: starting seed $seed, status $status"
exit "$status"
