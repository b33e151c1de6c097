#!/bin/bash
# The libFuzzer harnesses of tests/fuzz (built by `make fuzz-build`).
#
#   scripts/fuzz.sh run BUILD SECONDS HARNESS...
#       fuzzes each harness for SECONDS, one after the other, starting from
#       its seeds (tests/fuzz/corpus/<h>) and BUILD/corpus/<h>, where new
#       inputs are kept; a crash is saved as BUILD/crash-<h>-*. Prints
#       libFuzzer's final stats line per harness; exits 1 on any crash.
#   scripts/fuzz.sh replay BUILD 0 HARNESS...
#       runs BUILD/fuzz_selftest (the validators refuse broken texts),
#       then each harness once over its seeds; one line for each,
#       "fuzz replay <h>: ok|FAILED", then "N passed, N failed".
set -u

cd "$(dirname "$0")/.." || exit 1

# libzookeeper_mt's own leaks are not the harnesses' (see the file).
export LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

mode=${1:?run or replay}
build=${2:?build directory}
seconds=${3:?seconds}
shift 3

passed=0
failed=0
if [ "$mode" = replay ]; then
	if "$build/fuzz_selftest"; then
		echo "fuzz replay selftest: ok"
		passed=$((passed + 1))
	else
		echo "fuzz replay selftest: FAILED"
		failed=$((failed + 1))
	fi
fi
for h in "$@"; do
	bin=$build/fuzz_$h
	seeds=tests/fuzz/corpus/$h
	log=$build/fuzz-$mode-$h.log
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "fuzz $mode $h: FAILED ($bin or $seeds missing)"
		failed=$((failed + 1))
		continue
	fi
	case $mode in
	replay)
		# -runs=0: every seed once, no mutation.
		"$bin" -runs=0 "$seeds" >"$log" 2>&1
		rc=$?
		;;
	run)
		mkdir -p "$build/corpus/$h"
		"$bin" -max_total_time="$seconds" -max_len=4096 \
		    -print_final_stats=1 -artifact_prefix="$build/crash-$h-" \
		    "$build/corpus/$h" "$seeds" >"$log" 2>&1
		rc=$?
		grep -a -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1
		grep -a -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
		    "$log"
		echo "corpus: $(find "$build/corpus/$h" -type f | wc -l) files"
		;;
	*)
		echo "fuzz.sh: unknown mode $mode" >&2
		exit 2
		;;
	esac
	if [ "$rc" -eq 0 ]; then
		echo "fuzz $mode $h: ok"
		passed=$((passed + 1))
	else
		echo "fuzz $mode $h: FAILED (status $rc, see $log)"
		grep -a -E 'ERROR|FUZZ ASSERTION|SUMMARY|Test unit written' "$log" |
		    head -n 5
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
