#!/bin/bash
# A sweep too long for one sitting (issue 19's 1,000,000 schedules for
# every flag combination), run in chunks that a ledger remembers, so that
# a run stopped at any moment loses at most the chunk under way.
#   tests/sim/longrun.sh SIM SEED COUNT LEDGER [JOBS [CHUNK]] [-- OPTIONS...]
# Combination i covers the seeds sweep.sh gives it (SEED + i * 1000000, COUNT
# of them, its flags and OPTIONS), in chunks of CHUNK schedules (default
# 100000), each a tests/sim/campaign.sh run on JOBS processes (default:
# every CPU). Each chunk appends one line to LEDGER:
#   combo I chunk K seeds FIRST..LAST flags: F start T end T rc R :: SUMMARY
# A chunk the ledger already lists with rc 0 is skipped, so running the
# same command again resumes; one that failed is run again, and its
# replay lines are kept in LEDGER.out. COMBOS="I J..." limits the run to
# those combinations. BREADTH=1 runs chunk 0 of every combination, then
# chunk 1 of every one, and so on: the same schedules in the end, but a
# rare failure of any combination shows up early rather than after the
# combinations before it. Exits 1 if a chunk failed, 2 if one could not
# run.
set -u
sim=$1
seed=$2
count=$3
ledger=$4
jobs=${5:-$(nproc)}
chunk=${6:-100000}
shift $(($# < 6 ? $# : 6))
[ "${1:-}" = "--" ] && shift
here=$(dirname "$0")
status=0
touch "$ledger" || exit 2
masks=() firsts=() flagsets=()
while read -r _ _ mask _ first _ flags; do
	masks+=("${mask%:}")
	firsts+=("${first%%..*}")
	[ "$flags" = none ] && flags=
	flagsets+=("$flags")
done < <(SWEEP_LIST=1 "$here/sweep.sh" "$sim" "$seed" "$count" 1 "$count" \
    -- "$@" | grep '^-- combination ')
nchunks=$(((count + chunk - 1) / chunk))

# Chunk k of combination i (its index in the lists above).
run_chunk() {
	local i=$1 k=$2 mask=${masks[$1]} flags=${flagsets[$1]} s n t0 out rc sum
	if grep -q "^combo $mask chunk $k .* rc 0 ::" "$ledger"; then
		return
	fi
	s=$((firsts[i] + k * chunk))
	n=$((count - k * chunk < chunk ? count - k * chunk : chunk))
	t0=$(date -u +%FT%T)
	# shellcheck disable=SC2086
	out=$("$here/campaign.sh" "$sim" "$s" "$n" "$jobs" -- $flags 2>&1)
	rc=$?
	sum=$(grep '^sim: [0-9]* schedules,' <<<"$out" | tail -n 1)
	echo "combo $mask chunk $k seeds $s..$((s + n - 1)) flags: ${flags:-none} start $t0 end $(date -u +%FT%T) rc $rc :: $sum" >>"$ledger"
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 1 ] && [ "$status" -eq 0 ] && status=1
		[ "$rc" -gt 1 ] && status=2
		sed -nE "s/^sim: seed ([0-9]+) FAILED.*/\\1/p" <<<"$out" |
		    sort -un | head -n 5 | while read -r f; do
			echo "combo $mask: replay: $sim -s $f $flags -v"
		done >>"$ledger.out"
	fi
}

if [ -n "${BREADTH:-}" ]; then
	for ((k = 0; k < nchunks; k++)); do
		for ((i = 0; i < ${#masks[@]}; i++)); do
			run_chunk "$i" "$k"
		done
	done
else
	for ((i = 0; i < ${#masks[@]}; i++)); do
		for ((k = 0; k < nchunks; k++)); do
			run_chunk "$i" "$k"
		done
	done
fi
exit "$status"
