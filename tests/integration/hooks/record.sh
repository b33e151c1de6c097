#!/bin/bash
# Test hook for zkelectd's integration tests: records each run in the shared
# history file, then behaves as the test asked.
#
# Usage: record.sh EVENT        (EVENT defaults to $ZKELECT_EVENT)
#
# History lines (one write each, appended):
#   <time> <ZKELECT_ID> <event> start|end <ZKELECT_EPOCH> <ZKELECT_REASON>
# with "-" for an empty value.
#
# Behaviour, from the environment or from the file $ZKT_HOOKCONF (sourced at
# every run, so a test can change it while the daemon runs); EV is the event
# in capitals:
#   ZKT_SLEEP_EV=seconds   sleep between the start and end lines
#   ZKT_EXIT_EV=code       exit status (after writing the end line)
#   ZKT_HANG_EV=1          ignore SIGTERM, fork two `sleep 1000` children,
#                          write "pgid pid child child" to $ZKT_PIDFILE and
#                          wait forever (only SIGKILL ends it; no end line)
# $ZKT_ENVLOG, when set, gets "--- EVENT" and the ZKELECT_* variables.
#
# Bash, and nothing forked in a run that is not asked to sleep or hang:
# the clock is $EPOCHREALTIME, the rest builtins. A demote hook has T/4
# (750 ms in most tests), and on a machine running two suites at once
# every process started (a `date`, a `tr`, an `env | grep | sort`) could
# take a good part of that: the script's own start is the one left.

event=${1:-${ZKELECT_EVENT:-unknown}}
if [ -n "${ZKT_HOOKCONF:-}" ] && [ -r "$ZKT_HOOKCONF" ]; then
	# shellcheck source=/dev/null
	. "$ZKT_HOOKCONF"
fi
history=${ZKT_HISTORY:-/dev/null}

record() {
	# A locale's decimal comma is no part of the history's format.
	local t=${EPOCHREALTIME/,/.}
	printf '%s %s %s %s %s %s\n' "$t" "${ZKELECT_ID:--}" \
	    "$event" "$1" "${ZKELECT_EPOCH:--}" "${ZKELECT_REASON:--}" >>"$history"
}

# The start line first. SIGTERM (a timeout, or a check stopped to free the hook slot) ends the
# run with its end line from then on, so the history shows when it was
# over (a hanging hook ignores it below).
record start
trap 'record end; exit 143' TERM
echo "record.sh: ${ZKELECT_ID:-?} $event start (epoch ${ZKELECT_EPOCH:-} reason ${ZKELECT_REASON:-})"

EV=${event^^}
sleep_s=0 exit_code=0 hang=0
eval "sleep_s=\${ZKT_SLEEP_$EV:-0}"
eval "exit_code=\${ZKT_EXIT_$EV:-0}"
eval "hang=\${ZKT_HANG_$EV:-0}"

if [ -n "${ZKT_ENVLOG:-}" ]; then
	{
		echo "--- $event"
		for name in "${!ZKELECT_@}"; do
			printf '%s=%s\n' "$name" "${!name}"
		done
	} >>"$ZKT_ENVLOG"
fi

if [ "$hang" = 1 ]; then
	trap '' TERM
	sleep 1000 &
	c1=$!
	sleep 1000 &
	c2=$!
	pgid=$(ps -o pgid= -p $$ | tr -d ' ')
	if [ -n "${ZKT_PIDFILE:-}" ]; then
		echo "$pgid $$ $c1 $c2" >"$ZKT_PIDFILE.tmp"
		mv "$ZKT_PIDFILE.tmp" "$ZKT_PIDFILE"
	fi
	wait
	sleep 1000
	exit 1
fi

if [ "$sleep_s" != 0 ]; then
	sleep "$sleep_s"
fi
# Over: a SIGTERM from here on writes no second end line (a timeout that
# fell between this end line and the exit did, and I2 read the second as
# an end without its start, in a chaos run beside another suite).
trap '' TERM
record end
exit "$exit_code"
