/*
 * What daemon.c and the features it calls (the hook slot, hooks.run,
 * hooks.notify, switchover, the queue read, metrics) share, on a floor
 * below all of them: request tags, the session's state as shown, the last
 * error, timers, the core's clock and deadline, a hook's environment, and
 * the one thing a feature asks of the daemon: a step, through the
 * callback daemon.c registered (d->step). So calls go down: the daemon
 * calls its features, the features call this file, never daemon.c.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/timerfd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

uint64_t
engine_tag(struct daemon *d)
{
	return ++d->next_tag;
}

const char *
engine_zk_state(const struct daemon *d)
{
	if (d->zk_state == ZOO_CONNECTED_STATE)
		return "connected";
	if (d->zk_state == ZOO_READONLY_STATE)
		return "readonly";
	if (d->zk_state == ZOO_EXPIRED_SESSION_STATE)
		return "expired";
	return "connecting";
}

void
engine_set_error(struct daemon *d, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(d->last_error);
	d->last_error = xstrdup(buf);
}

void
engine_arm(struct event *ev, int64_t ms)
{
	struct timeval tv;

	if (ms < 0)
		ms = 0;
	clock_timeval(&tv, ms);
	if (event_add(ev, &tv) == -1)
		fatalx("event_add");
}

void
engine_env_add(char **env, int *n, const char *name, const char *value)
{
	(void)xasprintf(&env[(*n)++], "%s=%s", name, value);
}

void
engine_clock(struct daemon *d)
{
	election_clock(d->el, now_ms());
}

/* The timerfd set to the election's next deadline, when it moved. */
void
engine_arm_deadline(struct daemon *d)
{
	struct itimerspec its;
	int64_t t = election_deadline(d->el);

	memset(&its, 0, sizeof(its));
	if (t == d->armed_deadline)
		return;
	d->armed_deadline = t;
	if (t != INT64_MAX) {
		if (t <= 0)
			t = 1;	/* zero would disarm */
		its.it_value.tv_sec = (time_t)(t / 1000);
		its.it_value.tv_nsec = (long)(t % 1000) * 1000000;
	}
	if (timerfd_settime(d->deadline_fd, TFD_TIMER_ABSTIME, &its,
	    NULL) == -1)
		fatal("timerfd_settime");
}

/*
 * A feature told the core something (a hook's end, a queue read, a
 * switchover's timeout): the daemon's step carries out what follows.
 */
void
engine_step(struct daemon *d)
{
	d->step(d);
}
