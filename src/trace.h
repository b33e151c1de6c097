/*
 * The handover's trace: microsecond stamps (log_stamp(), CLOCK_MONOTONIC)
 * along the path from ZooKeeper's notification to a promote hook's
 * execve, and from a demote hook's end to the release sent, written as
 * "trace" debug lines once the step that took them is over (never on the
 * path they time). At other log levels every stamp is 0 and nothing is
 * written. bench/failover/share.py reads the lines.
 */
#ifndef ZKELECTD_TRACE_H
#define ZKELECTD_TRACE_H

#include <stdint.h>
#include <sys/types.h>

#include "hook.h"
#include "zk.h"

struct trace {
	/* The event being handled, and when the daemon got it. */
	char cause[128];
	int64_t queued, drained, delivered;
	/* The end of a hook being handled (its SIGCHLD's turn). */
	int64_t reaped;
	pid_t ended;
	/* A promote or fence started in this step. */
	const char *kind;
	pid_t pid;
	int64_t decided;
	struct hook_stamps hs;
	/* The release sent in this step. */
	int64_t sending, sent;
};

/* What the next stamps follow: a ZooKeeper event, or a hook's end. */
void trace_event(struct trace *t, const struct zk_event *ev,
    int64_t delivered);
void trace_hook_end(struct trace *t, pid_t pid, int64_t reaped);
/* A hook was started at decided (log_stamp() taken before its setup). */
void trace_hook(struct trace *t, const char *kind, pid_t pid,
    int64_t decided, const struct hook_runner *hr);
void trace_release(struct trace *t, int64_t sending, int64_t sent);
/* Writes what the step stamped, and forgets it. */
void trace_flush(struct trace *t);

#endif
