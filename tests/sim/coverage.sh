#!/bin/bash
# Where the simulator never takes the core: the lines of src/election*.c
# that no schedule runs, and the decisions it never takes one way. A
# defect planted there is one no invariant can see, however many
# schedules run. Builds the simulator with gcov's counters in BUILD_DIR,
# runs COUNT schedules of every flag combination (sweep.sh, with -A) and
# the regression seeds, then prints, per file of the core, its coverage
# and each line never run; with -b, each line with a branch never taken.
#   tests/sim/coverage.sh [-b] [COUNT [BUILD_DIR [SEED]]]
# Lines that exist only for the mutants (EL_MUTANT) are left out.
set -euo pipefail

branches=0
if [ "${1:-}" = -b ]; then
	branches=1
	shift
fi
count=${1:-300}
build=${2:-build-cov}
seed=${3:-3000000000}
jobs=${JOBS:-2}

cd "$(dirname "$0")/../.."
make -s BUILD="$build" CFLAGS="-O0 -g --coverage" LDFLAGS="--coverage" \
	"$build/sim"
rm -f "$build"/*.gcda
tests/sim/sweep.sh "$build/sim" "$seed" "$count" "$jobs" "$count" -- -A |
	grep -E 'FAILED|status' >&2 || true
"$build/sim" -f tests/sim/seeds.txt >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for src in src/election*.c; do
	gcov -b -o "$build" "$src" |
		sed -n "\\|^File '$src'|,/^\$/p" |
		sed -n 's/^\(Lines executed\|Taken at least once\):/\1:/p' |
		paste -sd ' ' | sed "s|^|$src: |"
	mv ./*.gcov "$out"/
done
for f in "$out"/election*.c.gcov; do
	awk -v file="src/$(basename "$f" .gcov)" -v br="$branches" '
	/^ +[-#0-9*]+: +[0-9]+:/ {
		split($0, a, ":")
		line = a[2] + 0
		src = $0
		sub(/^[^:]*:[^:]*:/, "", src)
		if (a[1] ~ /#####/ && src !~ /EL_MUTANT/)
			printf "%s:%d: never run: %s\n", file, line, src
		next
	}
	br && /^branch +[0-9]+ (never executed|taken 0%)/ && !(line in seen) {
		seen[line] = 1
		if (src !~ /EL_MUTANT/)
			printf "%s:%d: a way never taken: %s\n", file, line, src
	}' "$f"
done
