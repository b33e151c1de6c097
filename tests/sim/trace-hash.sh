#!/bin/bash
# The core's trace hashes for fixed seeds (issue 20: a refactor of the
# core changes no behaviour). For each flag set below, seeds 1..SEEDS run
# with -X: one line per run, its flags, seed, the hash of every event fed
# to the core and every action it gave (tests/sim/trace_hash.c) and the
# count of events. Tied faults (fault.c) and loop stalls (stall.c) only in
# the sets that ask for them with -y and -Y.
#
#   tests/sim/trace-hash.sh [SIM]            print the lines
#   tests/sim/trace-hash.sh --record [SIM]   write tests/sim/trace-hashes.txt
#   tests/sim/trace-hash.sh --check [SIM]    compare with it: exit 1 and the
#                                            differing lines if any differs
#
# A change that alters behaviour on purpose re-records, and says why in
# its commit.
set -euo pipefail

cd "$(dirname "$0")/../.."
mode=print
case "${1:-}" in
--record | --check)
	mode=${1#--}
	shift
	;;
esac
sim=${1:-build/sim}
file=tests/sim/trace-hashes.txt
seeds=300
sets=(
	""
	"-k 2000"
	"-P -W"
	"-L -A"
	"-K -A"
	"-R"
	"-H"
	"-P -W -L -R -H -A"
	"-y 200 -R -H"
	"-y 200 -P -W -L -R -H -A"
	"-Y 3000 -R -H"
	"-Y 3000 -y 200 -P -W -L -R -H -A"
)

run() {
	local f
	for f in "${sets[@]}"; do
		# A failing run (exit status 1) is hashed and marked FAILED.
		# shellcheck disable=SC2086
		# Tied faults and loop stalls only where a set asks for
		# them (-y, -Y).
		{ nice "$sim" -s 1 -n "$seeds" -X -t 0 -y 0 -Y 0 $f ||
		    [ $? -eq 1 ]; } |
		    sed -nE "s/^sim: seed ([0-9]+) hash /[${f:-none}] seed \\1 hash /p"
	done
}

case $mode in
print)
	run
	;;
record)
	run >"$file"
	echo "trace-hash: $(wc -l <"$file") runs recorded in $file"
	;;
check)
	out=$(mktemp)
	trap 'rm -f "$out"' EXIT
	run >"$out"
	if ! diff -u "$file" "$out"; then
		echo "trace-hash: DIFFERENT from $file" \
		    "($(diff "$file" "$out" | grep -c '^>') runs)"
		exit 1
	fi
	echo "trace-hash: $(wc -l <"$out") runs, all identical to $file"
	;;
esac
