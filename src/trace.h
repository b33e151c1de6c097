/*
 * The handover's trace: microsecond stamps (log_stamp(), CLOCK_MONOTONIC)
 * along the path from ZooKeeper's notification to a promote hook's
 * execve, and from a demote hook's end to the release sent. They are kept
 * in memory and written as debug lines ("trace ..." and "watch ... on")
 * by trace_flush(), which the daemon calls from its deferred publishing,
 * after every event that was ready: never on the path they time, not even
 * between two notifications that came together. At other log levels every
 * stamp is 0 and nothing is kept or written. bench/failover/share.py
 * reads the lines.
 */
#ifndef ZKELECTD_TRACE_H
#define ZKELECTD_TRACE_H

#include <stdint.h>
#include <sys/types.h>

#include "hook.h"
#include "zk.h"

#define TRACE_WATCHES	16	/* notifications kept per loop turn */

/* What a step followed: a ZooKeeper event, a hook's end, or neither. */
struct trace_cause {
	char what[128];
	int64_t queued, drained, delivered;	/* a ZooKeeper event */
	int64_t reaped;				/* a hook's end */
	pid_t ended;
};

struct trace {
	struct trace_cause now;		/* of the step under way */
	struct {
		int wtype;
		char path[256];
		int64_t queued, drained, delivered, stepped;
	} watch[TRACE_WATCHES];
	int nwatch;
	int lost;			/* notifications beyond watch[] */
	/* A hook started (promote, fence, demote), and what led to it. */
	int hooked;
	struct trace_cause hook_cause;
	const char *kind;
	pid_t pid;
	int64_t decided;
	struct hook_stamps hs;
	/* The release sent, and what led to it. */
	int released;
	struct trace_cause rel_cause;
	int64_t sending, sent;
};

/* What the next stamps follow: a ZooKeeper event, or a hook's end. */
void trace_event(struct trace *t, const struct zk_event *ev,
    int64_t delivered);
void trace_hook_end(struct trace *t, pid_t pid, int64_t reaped);
/* The step is over: a watch notification is noted with its stamps. */
void trace_step_end(struct trace *t, const struct zk_event *ev);
/* A hook was started at decided (log_stamp() taken before its setup). */
void trace_hook(struct trace *t, const char *kind, pid_t pid,
    int64_t decided, const struct hook_runner *hr);
void trace_release(struct trace *t, int64_t sending, int64_t sent);
/* Writes what was stamped since the last call, and forgets it. */
void trace_flush(struct trace *t);

#endif
