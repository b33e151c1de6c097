#!/bin/bash
# Shows that the simulator finds each old defect of the core: runs the
# same seeds against the core built with EL_MUTANTS, once as it is and once
# per mutant (ZKELECT_MUTANT=n puts defect n back, see src/election_int.h),
# and names for each mutant the first seeds that fail only with it.
#   tests/sim/mutants.sh BUILD_DIR [COUNT] [SEED]
# Exits 1 if a mutant survives (no seed of the range tells it apart).
set -u
build=${1:-build-mut}
count=${2:-5000}
seed=${3:-1}
sim="$build/sim"
base=$(mktemp)
trap 'rm -f "$base"' EXIT

failing() {
	"$sim" -s "$seed" -n "$count" -t 0 | sed -n 's/^sim: seed \([0-9]*\) FAILED: \(.*\)/\1 \2/p'
}

ZKELECT_MUTANT=0 failing | awk '{ print $1 }' | sort >"$base"
survivors=0
for m in 1 2 3 4 5 6 7 8 9 10 11; do
	found=$(ZKELECT_MUTANT=$m failing | sort -k1,1 | join -v 1 - "$base" |
	    sort -n | head -n 3)
	if [ -z "$found" ]; then
		echo "mutant $m: survived ($count seeds from $seed)"
		survivors=$((survivors + 1))
	else
		echo "mutant $m: caught, e.g. seed $(head -n 1 <<<"$found")"
		tail -n +2 <<<"$found" | sed 's/^/    also seed /'
	fi
done
[ "$survivors" -eq 0 ]
