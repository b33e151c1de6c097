#!/bin/sh
# The one hook every system in bench/failover runs, as `/bin/sh -c
# "hook.sh EVENT NODE"`: two lines in $BENCH_EVENTS, taken as the hook's
# first and last acts: "<ns since the epoch> EVENT start|end NODE".
# As cheap as a shell hook gets: one fork+exec of date per line.
echo "$(date +%s%N) $1 start $2" >>"$BENCH_EVENTS"
echo "$(date +%s%N) $1 end $2" >>"$BENCH_EVENTS"
