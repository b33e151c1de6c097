#!/bin/bash
# `make sim`: a campaign for every combination of the simulator's optional
# fault families, from a starting seed drawn afresh each run unless given.
#   tests/sim/sweep.sh SIM [SEED|random] COUNT [JOBS]
# Each combination runs COUNT schedules from SEED (the same seeds, other
# flags). A failure prints the line that replays it. Exits 1 if any
# schedule failed, 2 if a campaign could not run.
set -u
sim=$1
seed=${2:-random}
count=$3
jobs=${4:-$(nproc)}
if [ "$seed" = random ]; then
	seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000000 + 1))
fi
echo "sim sweep: seeds $seed..$((seed + count - 1)) for each flag combination"
status=0
for k in "" "-k 2000"; do
	for w in "" "-W"; do
		for p in "" "-P"; do
			# shellcheck disable=SC2206
			flags=($k $w $p)
			echo "-- flags: ${flags[*]:-none}"
			tests/sim/campaign.sh "$sim" "$seed" "$count" "$jobs" -- \
			    "${flags[@]}" | tee /tmp/sweep.$$
			rc=${PIPESTATUS[0]}
			if [ "$rc" -ne 0 ]; then
				[ "$rc" -eq 1 ] && [ "$status" -eq 0 ] && status=1
				[ "$rc" -gt 1 ] && status=2
				sed -nE "s/^sim: seed ([0-9]+) FAILED.*/\\1/p" /tmp/sweep.$$ |
				    sort -un | head -n 5 | while read -r s; do
					echo "replay: $sim -s $s${flags[*]:+ ${flags[*]}} -v"
				done
			fi
		done
	done
done
rm -f /tmp/sweep.$$
echo "sim sweep: starting seed $seed, status $status"
exit "$status"
