#!/bin/bash
# The `make check` driver (the Makefile builds `all` and `unit` first).
#
# Runs, printing each part's own output:
#   1. every $BUILD/unit/test_* (cmocka)
#   2. tests/conf/run.sh (config golden tests), and the unit tests against
#      each mutant of the election core (make mutants)
#   3. the libFuzzer harnesses of tests/fuzz replayed once over their
#      seed corpora, after their validators' self-test (make fuzz-replay;
#      clang); the self-test and each harness count as one test each
#   4. the election simulator: a fixed campaign of seeded schedules for
#      every combination of its optional fault families (tests/sim/sweep.sh:
#      96 of them), with availability checked (-A), $SIM_SCHEDULES schedules
#      for the plain one and $SIM_COMBO_SCHEDULES for each other, the
#      regression seeds of tests/sim/seeds.txt, and each of their mutants
#      found again (make sim-mutants); each campaign, the regression seeds
#      and the mutant seeds count as one test each, and the schedules are
#      reported on a line of their own
#   5. the pytest integration suite against $BUILD, the same against
#      $SAN_BUILD once the sanitizer build is made (make SAN=1
#      BUILD=$SAN_BUILD all; failing on any ASan/UBSan/LSan report in a
#      daemon's log), each on $INTEGRATION_WORKERS pytest-xdist workers,
#      and tests/packaging (examples, man pages, install, completion, the
#      .deb)
# and ends with exactly one line "N passed, N failed" (tests; a part that
# could not run counts as one failure). Exits 1 if anything failed.
# Everything runs at once: the three suites of part 5 and parts 1 and 2's
# tests, which mostly wait on servers, timeouts and hooks, at normal
# priority, and the mutants, the fuzz seeds and the simulator, which keep
# both CPUs busy, in the background under SCHED_IDLE (cpu_parts), so that
# they use only the CPU the rest leaves and never delay a daemon. The
# suites and the sanitizer build start first, the unit and golden tests
# follow in the foreground; each background part's output is printed whole
# once it ended.
#
# Environment: BUILD (default build), SAN_BUILD (default build-san),
# CHECK_SKIP_SAN=1 skips the sanitizer suite (for quick local runs; it then
# counts as a failure, so that a green line always means everything ran),
# CHECK_TIMEOUT per-suite limit in seconds (default 1200: a hang's net,
# not a budget; two runs side by side on a machine whose fork and exec
# cost 8 ms took 570 s for one suite), CHECK_CPU_TIMEOUT
# the same for each step of cpu_parts (default 3600: under SCHED_IDLE a
# step gets only the CPU that everything else on the machine leaves, so
# its wall time follows the machine's load, not its own work),
# INTEGRATION_WORKERS (default 3), SIM_SCHEDULES, SIM_COMBO_SCHEDULES.
set -u

cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
SAN_BUILD=${SAN_BUILD:-build-san}
MAKE=${MAKE:-make}
PYTHON=/usr/bin/python3
TIMEOUT=${CHECK_TIMEOUT:-1200}
CPU_TIMEOUT=${CHECK_CPU_TIMEOUT:-3600}
SIM_SCHEDULES=${SIM_SCHEDULES:-4000}
SIM_COMBO_SCHEDULES=${SIM_COMBO_SCHEDULES:-250}
# Options of every simulator campaign (invariants switched on): -A, no
# needless demote (availability, tests/sim/README.md).
SIM_ALWAYS=(-A)
WORKERS=${INTEGRATION_WORKERS:-3}
JOBS=$(nproc)
sim_schedules=0
sim_campaigns=0

passed=0
failed=0
skipped=0
problems=()
tmp=$(mktemp -d)
out=$tmp/out
trap 'rm -rf "$tmp"' EXIT

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
	run "$MAKE" -j"$JOBS" mutants || :	# survivors are counted below
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
	if ! run "$MAKE" -j"$JOBS" fuzz-replay; then
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

# sim_count LABEL: the last "sim: N schedules, N passed, N failed" line of
# $out is one test, passed when no schedule failed; its schedules are
# added to the simulator's own count.
sim_count() {
	local line
	line=$(grep -E '^sim: [0-9]+ schedules, ' "$out" | tail -n 1)
	if [[ "$line" =~ ^sim:\ ([0-9]+)\ schedules,\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
		sim_schedules=$((sim_schedules + BASH_REMATCH[1]))
		sim_campaigns=$((sim_campaigns + 1))
		if [ "${BASH_REMATCH[3]}" -eq 0 ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			problems+=("$1: ${BASH_REMATCH[3]} schedules failed")
		fi
	else
		broken "$1: no summary line"
	fi
}

# sim_count_all LABEL: every campaign summary line of $out, one test each.
sim_count_all() {
	local line all=$out want got
	out=$tmp/one
	while IFS= read -r line; do
		printf '%s\n' "$line" >"$out"
		sim_count "$1"
	done < <(grep -E '^sim: [0-9]+ schedules, ' "$all")
	out=$all
	want=$(sed -nE 's/^sim sweep: .*, ([0-9]+) flag combinations$/\1/p' "$out")
	got=$(grep -cE '^sim: [0-9]+ schedules, ' "$out")
	if [ -z "$want" ] || [ "$got" -ne "$want" ]; then
		broken "$1: $got campaign summaries, ${want:-no count} expected"
	fi
}

# The simulator runs the real election core against a model ZooKeeper:
# fixed seeds for every combination of its optional fault families, the
# regression seeds, and the seeds that find the core's old defects.
sim_tests() {
	heading "election simulator: every flag combination, regression seeds, mutants"
	if ! run "$MAKE" -j"$JOBS" "$BUILD/sim"; then
		broken "make $BUILD/sim failed"
		return
	fi
	run tests/sim/sweep.sh "$BUILD/sim" 1 "$SIM_COMBO_SCHEDULES" "$JOBS" \
	    "$SIM_SCHEDULES" -- "${SIM_ALWAYS[@]}" -t 150 -l 20
	sim_count_all "simulator campaign"
	run "$BUILD/sim" -f tests/sim/seeds.txt -t 150
	sim_count "simulator regression seeds"
	run "$MAKE" -j"$JOBS" sim-mutants
	sim_count "simulator mutant seeds"
}

# pytest_count WHAT RC FILE: adds the pytest summary in FILE to the totals.
pytest_count() {
	local summary p f e s
	# pytest -q ends with e.g. "12 passed, 1 failed, 2 errors in 40.1s".
	summary=$(grep -E '^(=+ )?[0-9]+ [a-z]+.* in [0-9.]+s' "$3" | tail -n 1)
	if [ -z "$summary" ]; then
		broken "$1: no pytest summary (status $2)"
		return
	fi
	p=$(sed -nE 's/.*[^0-9]([0-9]+) passed.*/\1/p' <<<" $summary")
	f=$(sed -nE 's/.*[^0-9]([0-9]+) failed.*/\1/p' <<<" $summary")
	e=$(sed -nE 's/.*[^0-9]([0-9]+) errors?.*/\1/p' <<<" $summary")
	s=$(sed -nE 's/.*[^0-9]([0-9]+) skipped.*/\1/p' <<<" $summary")
	passed=$((passed + ${p:-0}))
	skipped=$((skipped + ${s:-0}))
	failed=$((failed + ${f:-0} + ${e:-0}))
	if [ "$2" -ne 0 ] && [ $((${f:-0} + ${e:-0})) -eq 0 ]; then
		broken "$1: pytest exited with status $2"
	fi
}

# suite NAME LABEL CMD...: starts a pytest suite in the background, its
# output into $tmp/NAME; suite_end counts it once it ended.
suite_pids=()
suite_names=()
suite_labels=()
suite() {
	local name=$1 label=$2
	shift 2
	timeout --kill-after=30 "$TIMEOUT" "$@" >"$tmp/$name" 2>&1 &
	suite_pids+=($!)
	suite_names+=("$name")
	suite_labels+=("$label")
}

suites_end() {
	local i rc
	for i in "${!suite_pids[@]}"; do
		wait "${suite_pids[$i]}"
		rc=$?
		heading "${suite_labels[$i]}"
		cat "$tmp/${suite_names[$i]}"
		pytest_count "${suite_labels[$i]}" "$rc" "$tmp/${suite_names[$i]}"
	done
}

# integration NAME LABEL BIN_DIR SAN CHAOS_SECONDS
integration() {
	suite "$1" "integration tests: $2" env ZKELECTD_BIN_DIR="$3" \
	    ZKELECTD_SAN="$4" ZKELECTD_CHAOS_SECONDS="$5" \
	    "$PYTHON" -m pytest -p no:cacheprovider -q -rs -n "$WORKERS" \
	    tests/integration
}

# cpu_parts: the parts that keep both CPUs busy (mutants, fuzz seeds,
# simulator), run in the background under SCHED_IDLE while the integration
# suites, which mostly wait, run beside them: they take only the CPU time
# the suites leave, and never delay a daemon, a server or a hook. Their
# output goes to $tmp/cpu, their counts to $tmp/cpu.counts (the subshell
# cannot change the totals) and their problems to $tmp/cpu.problems.
cpu_parts() {
	chrt -i -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 "$BASHPID" >/dev/null
	TIMEOUT=$CPU_TIMEOUT	# this subshell's steps only
	out=$tmp/cpu.out
	passed=0 failed=0 sim_schedules=0 sim_campaigns=0 problems=()
	mutant_tests
	fuzz_tests
	sim_tests
	echo "$passed $failed $sim_schedules $sim_campaigns" >"$tmp/cpu.counts"
	if [ "${#problems[@]}" -gt 0 ]; then
		printf '%s\n' "${problems[@]}" >"$tmp/cpu.problems"
	fi
}

cpu_end() {
	local p f s c line
	wait "$cpu_pid"
	cat "$tmp/cpu"
	if ! read -r p f s c <"$tmp/cpu.counts" 2>/dev/null; then
		broken "mutants, fuzz seeds and simulator: no result (see above)"
		return
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	sim_schedules=$((sim_schedules + s))
	sim_campaigns=$((sim_campaigns + c))
	if [ -f "$tmp/cpu.problems" ]; then
		while IFS= read -r line; do
			problems+=("$line")
		done <"$tmp/cpu.problems"
	fi
}

start=$SECONDS
# The chaos test runs its full minute once; under the sanitizers (slower,
# and what it looks for is memory errors) a shorter run will do.
integration plain "$BUILD" "$BUILD" 0 "${ZKELECTD_CHAOS_SECONDS:-60}"
# Examples, man pages, install, completion and the Debian package: the
# same whatever the build flavour, so run once.
suite packaging "packaging tests (tests/packaging)" env \
    ZKELECTD_BIN_DIR="$BUILD" "$PYTHON" -m pytest -p no:cacheprovider -q -rs \
    tests/packaging
cpu_parts >"$tmp/cpu" 2>&1 &
cpu_pid=$!

heading "sanitizer build ($SAN_BUILD), then its integration suite"
san=0
if [ "${CHECK_SKIP_SAN:-0}" = 1 ]; then
	broken "sanitizer run skipped (CHECK_SKIP_SAN=1)"
elif run "$MAKE" -j"$JOBS" SAN=1 BUILD="$SAN_BUILD" all; then
	san=1
else
	broken "make SAN=1 BUILD=$SAN_BUILD all failed"
fi
if [ "$san" = 1 ]; then
	integration san "$SAN_BUILD, ASan+UBSan" "$SAN_BUILD" 1 20
fi
# The unit and golden tests last, beside the suites: they mostly wait (the
# hook runner's timeouts), and run first they left both CPUs idle.
unit_tests
conf_tests
cpu_end
suites_end

heading "summary ($((SECONDS - start))s)"
for p in "${problems[@]}"; do
	echo "problem: $p"
done
echo "simulator: $sim_schedules schedules in $sim_campaigns runs"
# Not counted below: each suite's "short test summary" above says why.
echo "skipped: $skipped pytest tests (not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
