/*
 * The handover's trace (trace.h). The stamps are kept in memory while
 * the loop runs the events that are ready, and written afterwards: a log
 * line on the path would cost a write() and wake the log's reader. The
 * offset turns the monotonic stamps into the wall clock that hooks and
 * other processes stamp their own lines with.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "trace.h"

void
trace_event(struct trace *t, const struct zk_event *ev, int64_t delivered)
{
	struct trace_cause *c = &t->now;

	if (delivered == 0)
		return;
	memset(c, 0, sizeof(*c));
	c->queued = ev->queued_us;
	c->drained = ev->drained_us;
	c->delivered = delivered;
	if (ev->type == ZK_EV_WATCH)
		(void)snprintf(c->what, sizeof(c->what), "watch:%s",
		    ev->path != NULL ? ev->path : "");
	else
		(void)snprintf(c->what, sizeof(c->what), "%s",
		    ev->type == ZK_EV_REPLY ? "reply" : "session");
}

void
trace_hook_end(struct trace *t, pid_t pid, int64_t reaped)
{
	if (reaped == 0)
		return;
	memset(&t->now, 0, sizeof(t->now));
	(void)snprintf(t->now.what, sizeof(t->now.what), "hook-end");
	t->now.reaped = reaped;
	t->now.ended = pid;
}

void
trace_step_end(struct trace *t, const struct zk_event *ev)
{
	int64_t stepped = log_stamp();

	if (stepped != 0 && ev != NULL && ev->type == ZK_EV_WATCH) {
		if (t->nwatch == TRACE_WATCHES)
			t->lost++;
		else {
			t->watch[t->nwatch].wtype = ev->wtype;
			(void)snprintf(t->watch[t->nwatch].path,
			    sizeof(t->watch[0].path), "%s",
			    ev->path != NULL ? ev->path : "");
			t->watch[t->nwatch].queued = ev->queued_us;
			t->watch[t->nwatch].drained = ev->drained_us;
			t->watch[t->nwatch].delivered = t->now.delivered;
			t->watch[t->nwatch].stepped = stepped;
			t->nwatch++;
		}
	}
	memset(&t->now, 0, sizeof(t->now));
}

void
trace_hook(struct trace *t, const char *kind, pid_t pid, int64_t decided,
    const struct hook_runner *hr)
{
	if (decided == 0)
		return;
	t->hooked = 1;
	t->hook_cause = t->now;
	t->kind = kind;
	t->pid = pid;
	t->decided = decided;
	hook_last_stamps(hr, &t->hs);
}

void
trace_release(struct trace *t, int64_t sending, int64_t sent)
{
	if (sending == 0)
		return;
	t->released = 1;
	t->rel_cause = t->now;
	t->sending = sending;
	t->sent = sent;
}

static const char *
trace_what(const struct trace_cause *c)
{
	return c->what[0] != '\0' ? c->what : "other";
}

void
trace_flush(struct trace *t)
{
	const struct trace_cause *c;
	int64_t off;
	int i;

	if (t->nwatch == 0 && !t->hooked && !t->released)
		return;
	off = log_stamp_offset();
	for (i = 0; i < t->nwatch; i++)
		log_debug("watch %d on %s: queued=%lld drained=%lld "
		    "delivered=%lld stepped=%lld", t->watch[i].wtype,
		    t->watch[i].path, (long long)t->watch[i].queued,
		    (long long)t->watch[i].drained,
		    (long long)t->watch[i].delivered,
		    (long long)t->watch[i].stepped);
	if (t->lost > 0)
		log_debug("trace: %d more notifications not kept", t->lost);
	c = &t->hook_cause;
	if (t->hooked)
		log_debug("trace %s[%ld]: cause=%s queued=%lld drained=%lld "
		    "delivered=%lld reaped=%lld decided=%lld entered=%lld "
		    "spawning=%lld spawned=%lld offset=%lld", t->kind,
		    (long)t->pid, trace_what(c), (long long)c->queued,
		    (long long)c->drained, (long long)c->delivered,
		    (long long)c->reaped, (long long)t->decided,
		    (long long)t->hs.entered, (long long)t->hs.spawning,
		    (long long)t->hs.spawned, (long long)off);
	c = &t->rel_cause;
	if (t->released)
		log_debug("trace release: cause=%s hook=%ld queued=%lld "
		    "drained=%lld delivered=%lld reaped=%lld sending=%lld "
		    "sent=%lld offset=%lld", trace_what(c), (long)c->ended,
		    (long long)c->queued, (long long)c->drained,
		    (long long)c->delivered, (long long)c->reaped,
		    (long long)t->sending, (long long)t->sent,
		    (long long)off);
	t->nwatch = 0;
	t->lost = 0;
	t->hooked = 0;
	t->released = 0;
}
