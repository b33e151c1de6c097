#!/bin/bash
# The `make check` driver (the Makefile builds `all` and `unit` first).
#
# Runs, in order, printing each part's own output:
#   1. every $BUILD/unit/test_* (cmocka)
#   2. tests/conf/run.sh (config golden tests), and the unit tests against
#      each mutant of the election core (make mutants)
#   2a. the libFuzzer harnesses of tests/fuzz replayed once over their
#      seed corpora, after their validators' self-test (make fuzz-replay;
#      clang); the self-test and each harness count as one test each
#   2b. the election simulator: a fixed campaign of $SIM_SCHEDULES seeded
#      schedules (default 24000, on two processes), $SIM_TICK_SCHEDULES
#      more (6000) with tickTime modelled (-k 2000), $SIM_SWITCH_SCHEDULES
#      (4000) with switchovers asked of leaders (-W), $SIM_PRIO_SCHEDULES
#      (4000) with priorities, their reloads and forged markers as well
#      (-P -W), $SIM_RELOAD_SCHEDULES (2000) with hooks.run exits and
#      hooks.check reloads on top (-P -W -R), the regression seeds
#      of tests/sim/seeds.txt, and each of their mutants found again
#      (make sim-mutants); every schedule counts as one test
#   3. the pytest integration suite against $BUILD, then tests/packaging
#      (examples, man pages, install, completion, the .deb) once
#   4. a sanitizer build (make SAN=1 BUILD=build-san all) and the
#      integration suite again against it, failing on any ASan/UBSan/LSan
#      report in a daemon's log
# and ends with exactly one line "N passed, N failed" (totals; a part that
# could not run counts as one failure). Exits 1 if anything failed.
#
# Environment: BUILD (default build), SAN_BUILD (default build-san),
# CHECK_SKIP_SAN=1 skips part 4 (for quick local runs; it then counts as
# a failure, so that a green line always means everything ran),
# CHECK_TIMEOUT per-suite limit in seconds (default 900).
set -u

cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
SAN_BUILD=${SAN_BUILD:-build-san}
MAKE=${MAKE:-make}
PYTHON=/usr/bin/python3
TIMEOUT=${CHECK_TIMEOUT:-900}
SIM_SCHEDULES=${SIM_SCHEDULES:-24000}
SIM_TICK_SCHEDULES=${SIM_TICK_SCHEDULES:-6000}
SIM_SWITCH_SCHEDULES=${SIM_SWITCH_SCHEDULES:-4000}
SIM_PRIO_SCHEDULES=${SIM_PRIO_SCHEDULES:-4000}
SIM_RELOAD_SCHEDULES=${SIM_RELOAD_SCHEDULES:-2000}

passed=0
failed=0
problems=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT

heading() {
	printf '\n==== %s ====\n' "$*"
}

# broken WHAT: a part that could not run, or whose result could not be read.
broken() {
	problems+=("$1")
	failed=$((failed + 1))
	printf 'check: %s\n' "$1" >&2
}

# run CMD...: runs with a time limit, output both shown and kept in $out.
run() {
	timeout --kill-after=30 "$TIMEOUT" "$@" 2>&1 | tee "$out"
	return "${PIPESTATUS[0]}"
}

# sum_matches REGEX: the sum of the first group of every matching line of $out.
sum_matches() {
	sed -nE "s/$1/\\1/p" "$out" | awk '{ n += $1 } END { print n + 0 }'
}

unit_tests() {
	heading "unit tests ($BUILD/unit)"
	local t rc p f any=0
	for t in "$BUILD"/unit/test_*; do
		[ -x "$t" ] || continue
		any=1
		printf -- '-- %s\n' "$t"
		run "$t"
		rc=$?
		p=$(sum_matches '^\[  PASSED  \] ([0-9]+) test\(s\).*')
		f=$(sum_matches '^\[  FAILED  \] ([0-9]+) test\(s\).*')
		passed=$((passed + p))
		failed=$((failed + f))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			broken "$t exited with status $rc without a cmocka failure count"
		elif [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			broken "$t printed no cmocka summary"
		fi
	done
	if [ "$any" -eq 0 ]; then
		if compgen -G 'tests/unit/test_*.c' >/dev/null; then
			broken "no unit test executables in $BUILD/unit (run make unit)"
		else
			echo "(no unit tests)"
		fi
	fi
}

conf_tests() {
	heading "config golden tests (tests/conf/run.sh)"
	if [ ! -x tests/conf/run.sh ]; then
		broken "tests/conf/run.sh missing or not executable"
		return
	fi
	run tests/conf/run.sh
	local rc=$? last
	last=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1)
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
		if [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
			broken "tests/conf/run.sh exited with status $rc"
		fi
	else
		broken "tests/conf/run.sh did not end with 'N passed, N failed'"
	fi
}

# Each mutant of the core (an old defect put back) must fail a unit test.
mutant_tests() {
	heading "mutants of the election core (make mutants)"
	run "$MAKE" mutants || :	# survivors are counted below
	passed=$((passed + $(grep -c ': caught$' "$out")))
	failed=$((failed + $(grep -c ': survived' "$out")))
	if ! grep -q ': caught$' "$out"; then
		broken "make mutants did not run"
	fi
}

# The validators' self-test, then every harness of tests/fuzz once over
# its seeds: one test each.
fuzz_tests() {
	heading "fuzz harnesses replayed over their seeds (make fuzz-replay)"
	if ! run "$MAKE" fuzz-replay; then
		:	# failures are counted below
	fi
	local last
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		broken "make fuzz-replay did not build or run the harnesses"
	fi
}

# sim_count LABEL: adds the last "sim: N schedules, N passed, N failed"
# line of $out to the totals.
sim_count() {
	local line
	line=$(grep -E '^sim: [0-9]+ schedules, ' "$out" | tail -n 1)
	if [[ "$line" =~ ^sim:\ [0-9]+\ schedules,\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		broken "$1: no summary line"
	fi
}

# The simulator runs the real election core against a model ZooKeeper:
# a fixed budget of schedules on two processes (seeds 1..SIM_SCHEDULES),
# the regression seeds, and the seeds that find the core's old defects.
sim_tests() {
	heading "election simulator: $SIM_SCHEDULES schedules, regression seeds, mutants"
	if ! run "$MAKE" "$BUILD/sim"; then
		broken "make $BUILD/sim failed"
		return
	fi
	run tests/sim/campaign.sh "$BUILD/sim" 1 "$SIM_SCHEDULES" 2 -- -t 150 -l 20
	sim_count "simulator campaign"
	# The same with ZooKeeper's tickTime modelled (reports every tick/2).
	run tests/sim/campaign.sh "$BUILD/sim" 1000000 "$SIM_TICK_SCHEDULES" 2 \
	    -- -k 2000 -t 150 -l 20
	sim_count "simulator campaign, tickTime modelled"
	# And with operators asking leaders for switchovers (-W).
	run tests/sim/campaign.sh "$BUILD/sim" 2000000 "$SIM_SWITCH_SCHEDULES" 2 \
	    -- -W -t 150 -l 20
	sim_count "simulator campaign, switchovers"
	# And with priorities: heads yield, reloads, forged markers (-P).
	run tests/sim/campaign.sh "$BUILD/sim" 3000000 "$SIM_PRIO_SCHEDULES" 2 \
	    -- -P -W -t 150 -l 20
	sim_count "simulator campaign, priorities"
	# And with hooks.run exiting and hooks.check reloaded (-R), on top.
	run tests/sim/campaign.sh "$BUILD/sim" 4000000 "$SIM_RELOAD_SCHEDULES" \
	    2 -- -P -W -R -t 150 -l 20
	sim_count "simulator campaign, reloads and hooks.run"
	run "$BUILD/sim" -f tests/sim/seeds.txt -t 150
	sim_count "simulator regression seeds"
	run "$MAKE" sim-mutants
	sim_count "simulator mutant seeds"
}

# pytest_count WHAT RC: adds the pytest summary in $out to the totals.
pytest_count() {
	local summary p f e
	# pytest -q ends with e.g. "12 passed, 1 failed, 2 errors in 40.1s".
	summary=$(grep -E '^(=+ )?[0-9]+ [a-z]+.* in [0-9.]+s' "$out" | tail -n 1)
	if [ -z "$summary" ]; then
		broken "$1: no pytest summary (status $2)"
		return
	fi
	p=$(sed -nE 's/.*[^0-9]([0-9]+) passed.*/\1/p' <<<" $summary")
	f=$(sed -nE 's/.*[^0-9]([0-9]+) failed.*/\1/p' <<<" $summary")
	e=$(sed -nE 's/.*[^0-9]([0-9]+) errors?.*/\1/p' <<<" $summary")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0} + ${e:-0}))
	if [ "$2" -ne 0 ] && [ $((${f:-0} + ${e:-0})) -eq 0 ]; then
		broken "$1: pytest exited with status $2"
	fi
}

# integration LABEL BIN_DIR SAN CHAOS_SECONDS
integration() {
	heading "integration tests: $1"
	run env ZKELECTD_BIN_DIR="$2" ZKELECTD_SAN="$3" \
	    ZKELECTD_CHAOS_SECONDS="$4" \
	    "$PYTHON" -m pytest -p no:cacheprovider -q tests/integration
	pytest_count "integration ($1)" $?
}

# Examples, man pages, install, completion and the Debian package: the
# same whatever the build flavour, so run once.
packaging() {
	heading "packaging tests (tests/packaging)"
	run env ZKELECTD_BIN_DIR="$BUILD" \
	    "$PYTHON" -m pytest -p no:cacheprovider -q tests/packaging
	pytest_count "packaging" $?
}

start=$SECONDS
unit_tests
conf_tests
mutant_tests
fuzz_tests
sim_tests
# The chaos test runs its full minute once; under the sanitizers (slower,
# and what it looks for is memory errors) a shorter run keeps the whole
# check within its time budget.
integration "$BUILD" "$BUILD" 0 "${ZKELECTD_CHAOS_SECONDS:-60}"
packaging

heading "sanitizer build ($SAN_BUILD)"
if [ "${CHECK_SKIP_SAN:-0}" = 1 ]; then
	broken "sanitizer run skipped (CHECK_SKIP_SAN=1)"
elif run "$MAKE" SAN=1 BUILD="$SAN_BUILD" all; then
	integration "$SAN_BUILD, ASan+UBSan" "$SAN_BUILD" 1 20
else
	broken "make SAN=1 BUILD=$SAN_BUILD all failed"
fi

heading "summary ($((SECONDS - start))s)"
for p in "${problems[@]}"; do
	echo "problem: $p"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
