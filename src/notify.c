/*
 * sd_notify(3) for Type=notify units. The watchdog is fed from a timer on
 * the event loop at half of WATCHDOG_USEC, so a stuck loop starves it.
 * STATUS= goes out when its text changes, and nothing says READY=1 again
 * once STOPPING=1 was said (a re-exec given up because SIGTERM came
 * during its wait would otherwise tell systemd a stopping daemon is
 * ready). Nor does a reload or a re-exec say RELOADING=1 or READY=1
 * before the first READY=1: that one waits for the startup demote, and
 * a SIGHUP during it must not tell systemd the demote is over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"
#include "xmalloc.h"

struct notify {
	int enabled;
	int ready;
	int stopping;
	char *status;		/* the last STATUS= text sent */
	struct event *watchdog;
};

static void
notify_send(struct notify *n, const char *msg)
{
	int rc;

	if (n == NULL || !n->enabled)
		return;
	if ((rc = sd_notify(0, msg)) < 0)
		log_debug("sd_notify: error %d", rc);
}

static void
notify_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	notify_send(arg, "WATCHDOG=1");
}

struct notify *
notify_new(struct event_base *base)
{
	struct notify *n;
	struct timeval tv;
	uint64_t usec = 0;

	n = xcalloc(1, sizeof(*n));
	n->enabled = getenv("NOTIFY_SOCKET") != NULL;
	if (n->enabled && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		usec /= 2;
		tv.tv_sec = (time_t)(usec / 1000000);
		tv.tv_usec = (suseconds_t)(usec % 1000000);
		n->watchdog = event_new(base, -1, EV_PERSIST, notify_watchdog,
		    n);
		if (n->watchdog == NULL || event_add(n->watchdog, &tv) == -1)
			fatalx("notify: watchdog timer");
		notify_send(n, "WATCHDOG=1");
	}
	return n;
}

void
notify_free(struct notify *n)
{
	if (n == NULL)
		return;
	if (n->watchdog != NULL)
		event_free(n->watchdog);
	free(n->status);
	free(n);
}

void
notify_ready(struct notify *n)
{
	/* Nor after a stop that came during the startup demote. */
	if (n == NULL || n->ready || n->stopping)
		return;
	n->ready = 1;
	notify_send(n, "READY=1");
}

void
notify_status(struct notify *n, const char *text)
{
	char *msg;

	if (n == NULL || !n->enabled ||
	    (n->status != NULL && strcmp(n->status, text) == 0))
		return;
	free(n->status);
	n->status = xstrdup(text);
	(void)xasprintf(&msg, "STATUS=%s", text);
	notify_send(n, msg);
	free(msg);
}

void
notify_ready_again(struct notify *n)
{
	if (n == NULL || !n->ready || n->stopping)
		return;
	notify_send(n, "READY=1");
}

void
notify_reloading(struct notify *n)
{
	if (n == NULL || !n->ready || n->stopping)
		return;
	notify_send(n, "RELOADING=1");
}

void
notify_stopping(struct notify *n)
{
	if (n == NULL)
		return;
	n->stopping = 1;
	notify_send(n, "STOPPING=1");
}
