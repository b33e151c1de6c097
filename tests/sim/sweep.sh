#!/bin/bash
# A campaign for every combination of the simulator's optional fault
# families (`make sim`, and scripts/check.sh with fixed seeds).
#   tests/sim/sweep.sh SIM SEED|random COUNT [JOBS [PLAIN_COUNT]] [-- OPTIONS...]
# A family is left out or takes one of its forms (-L or -K: -K is -L with
# ticks up to T). Combination i (0: no family) runs COUNT schedules
# (PLAIN_COUNT for the plain one, default COUNT) from seed
# SEED + i * 1000000, on JOBS processes
# (default: every CPU), with OPTIONS added; random draws SEED afresh. Each
# campaign prints its own summary line (campaign.sh's). A failure prints
# the lines that replay it. Exits 1 if any schedule failed, 2 if a
# campaign could not run. COMBOS="I J..." in the environment runs only
# those combinations (numbered as printed), so that a long campaign can be
# split over several runs with the same SEED. SWEEP_LIST=1 only prints each
# combination's line (seeds and flags) and runs nothing
# (tests/sim/longrun.sh reads them).
set -u
sim=$1
seed=$2
count=$3
jobs=${4:-$(nproc)}
plain=${5:-$count}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = "--" ] && shift
# The families (tests/sim/README.md), each with its forms separated by |:
# -k 2000 tickTime modelled, -W switchovers, -P priorities (reloads,
# forged markers), -L the ensemble's leader, its tick, elections and
# server restarts, or -K the same with ticks up to T (below 2 ticks
# nobody may lead), -R crash restarts that resume their session and
# re-execs, -H hooks.run exits and hooks.check reloads.
families=("-k 2000" "-W" "-P" "-L|-K" "-R" "-H")
if [ "$seed" = random ]; then
	seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
fi
combos=1
for f in "${families[@]}"; do
	IFS='|' read -r -a forms <<<"$f"
	combos=$((combos * (${#forms[@]} + 1)))
done
echo "sim sweep: starting seed $seed, $combos flag combinations"
status=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((mask = 0; mask < combos; mask++)); do
	if [ -n "${COMBOS:-}" ] && [[ " $COMBOS " != *" $mask "* ]]; then
		continue
	fi
	# mask in mixed radix: one digit per family, 0 leaves it out.
	flags=()
	rest=$mask
	for f in "${families[@]}"; do
		IFS='|' read -r -a forms <<<"$f"
		d=$((rest % (${#forms[@]} + 1)))
		rest=$((rest / (${#forms[@]} + 1)))
		# shellcheck disable=SC2206
		[ "$d" -gt 0 ] && flags+=(${forms[$((d - 1))]})
	done
	flags+=("$@")
	s=$((seed + mask * 1000000))
	n=$count
	[ "$mask" -eq 0 ] && n=$plain
	echo "-- combination $mask: seeds $s..$((s + n - 1)), flags: ${flags[*]:-none}"
	[ -n "${SWEEP_LIST:-}" ] && continue
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
