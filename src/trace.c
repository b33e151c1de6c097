/*
 * The handover's trace (trace.h). The stamps are kept in memory while
 * the step runs, and written in one line per hook or release after it:
 * a log line on the path would cost a write() and wake the log's reader.
 * The offset turns the monotonic stamps into the wall clock that hooks
 * and other processes stamp their own lines with.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "trace.h"

void
trace_event(struct trace *t, const struct zk_event *ev, int64_t delivered)
{
	if (delivered == 0)
		return;
	t->queued = ev->queued_us;
	t->drained = ev->drained_us;
	t->delivered = delivered;
	if (ev->type == ZK_EV_WATCH)
		(void)snprintf(t->cause, sizeof(t->cause), "watch:%s",
		    ev->path != NULL ? ev->path : "");
	else if (ev->type == ZK_EV_REPLY)
		(void)snprintf(t->cause, sizeof(t->cause), "reply");
	else
		(void)snprintf(t->cause, sizeof(t->cause), "session");
}

void
trace_hook_end(struct trace *t, pid_t pid, int64_t reaped)
{
	if (reaped == 0)
		return;
	t->reaped = reaped;
	t->ended = pid;
	(void)snprintf(t->cause, sizeof(t->cause), "hook-end");
}

void
trace_hook(struct trace *t, const char *kind, pid_t pid, int64_t decided,
    const struct hook_runner *hr)
{
	if (decided == 0)
		return;
	t->kind = kind;
	t->pid = pid;
	t->decided = decided;
	hook_last_stamps(hr, &t->hs);
}

void
trace_release(struct trace *t, int64_t sending, int64_t sent)
{
	t->sending = sending;
	t->sent = sent;
}

void
trace_flush(struct trace *t)
{
	const char *cause = t->cause[0] != '\0' ? t->cause : "other";
	int64_t off;

	if (t->decided == 0 && t->sent == 0) {
		memset(t, 0, sizeof(*t));
		return;
	}
	off = log_stamp_offset();
	if (t->decided != 0)
		log_debug("trace %s[%ld]: cause=%s queued=%lld drained=%lld "
		    "delivered=%lld reaped=%lld decided=%lld entered=%lld "
		    "spawning=%lld spawned=%lld offset=%lld", t->kind,
		    (long)t->pid, cause, (long long)t->queued,
		    (long long)t->drained, (long long)t->delivered,
		    (long long)t->reaped, (long long)t->decided,
		    (long long)t->hs.entered, (long long)t->hs.spawning,
		    (long long)t->hs.spawned, (long long)off);
	if (t->sent != 0)
		log_debug("trace release: cause=%s hook=%ld queued=%lld "
		    "drained=%lld delivered=%lld reaped=%lld sending=%lld "
		    "sent=%lld offset=%lld", cause, (long)t->ended,
		    (long long)t->queued,
		    (long long)t->drained, (long long)t->delivered,
		    (long long)t->reaped, (long long)t->sending,
		    (long long)t->sent, (long long)off);
	memset(t, 0, sizeof(*t));
}
