#!/bin/sh
# Role-query latency on a daemon under hostile clients (random payloads,
# slow clients, 60 watchers that never read, 300 idle connections) and a
# failover, as tests/integration/test_hostile.py's
# test_hostile_clients_never_stall_commands_or_the_election does it, but
# with the attack held SECONDS (default 30) before the failover.
# Run by hand from the repository root after `make`; prints the query
# count, median, p99 and max. Results go to bench/RESULTS.md.
set -eu
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
i=0
while [ "$i" -lt "$runs" ]; do
	ZKE_HOSTILE_SECONDS=${SECONDS_HELD:-30} /usr/bin/python3 -m pytest -q -s \
	    tests/integration/test_hostile.py \
	    -k hostile_clients_never_stall 2>&1 | grep -E 'role queries|passed|failed'
	i=$((i + 1))
done
