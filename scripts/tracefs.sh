# shellcheck shell=bash
# Helpers shared by bench/hooks/run.sh and bench/failover/static-hook.sh:
# kernel instants from ftrace tracepoints, in a tracefs instance of the
# script's own, on the "mono" trace clock (CLOCK_MONOTONIC, so that they
# line up with the programs' clock_gettime() stamps). Source it; it
# defines functions only. Needs root; without tracefs TRACE stays empty.

# tracefs_start DIR NAME KB EVENT...: mounts tracefs under DIR when it is
# not mounted, makes the instance NAME with a KB buffer, enables each
# EVENT (e.g. sched/sched_process_exec) and starts tracing. Sets TRACE
# (the instance's directory, empty when there is none) and TRACEFS_MOUNTED
# (what tracefs_stop unmounts).
tracefs_start() {
	local dir=$1 name=$2 kb=$3 t=/sys/kernel/tracing e
	shift 3
	TRACE=""
	TRACEFS_MOUNTED=""
	if [ ! -e "$t/trace_clock" ]; then
		mkdir -p "$dir/tracefs"
		if mount -t tracefs nodev "$dir/tracefs" 2>/dev/null; then
			t=$dir/tracefs
			TRACEFS_MOUNTED=$t
		fi
	fi
	[ -d "$t/instances" ] && mkdir "$t/instances/$name" 2>/dev/null ||
	    return 0
	TRACE=$t/instances/$name
	echo mono >"$TRACE/trace_clock"
	echo "$kb" >"$TRACE/buffer_size_kb"
	for e in "$@"; do
		echo 1 >"$TRACE/events/$e/enable"
	done
	echo 1 >"$TRACE/tracing_on"
}

# tracefs_stop: stops tracing, removes the instance, unmounts; for a
# cleanup trap (never fails).
tracefs_stop() {
	if [ -n "${TRACE:-}" ]; then
		echo 0 >"$TRACE/tracing_on" 2>/dev/null || true
		rmdir "$TRACE" 2>/dev/null || true
	fi
	[ -z "${TRACEFS_MOUNTED:-}" ] ||
	    umount "$TRACEFS_MOUNTED" 2>/dev/null || true
	TRACE=""
	TRACEFS_MOUNTED=""
}
