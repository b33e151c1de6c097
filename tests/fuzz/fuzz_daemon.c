/*
 * The daemon as zkelectd.c's main builds it, without signals, the HTTP
 * endpoint or a ZooKeeper session: what command_handle() needs to answer.
 */
#include <sys/socket.h>
#include <sys/timerfd.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "ctl_int.h"
#include "fuzz_check.h"
#include "fuzz_daemon.h"
#include "log.h"
#include "notify.h"
#include "xmalloc.h"

#define FUZZ_IDLE_TURNS	8	/* loop turns with nothing done: stop */
#define FUZZ_ANSWER_MAX	(1 << 20)

static void
fuzz_daemon_config(struct config *cfg)
{
	char path[128], err[512], *text;
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/zkelectd.conf", fuzz_dir());
	(void)xasprintf(&text, "[zookeeper]\nhosts = 127.0.0.1:1\n"
	    "[election]\nservice = fz\nid = fuzz-node\ndata = role=db\n"
	    "[hooks]\ndemote_on_start = no\n"
	    "[control]\nsocket = %s/fz.sock\nstatus_file = %s/fz.status\n",
	    fuzz_dir(), fuzz_dir());
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) == EOF)
		FUZZ_FAIL("write %s: %s", path, strerror(errno));
	free(text);
	if (config_load(cfg, path, NULL, 0, err, sizeof(err)) == -1)
		FUZZ_FAIL("config: %s", err);
}

/*
 * The harness stands in for ZooKeeper: it calls queue_read_reply() with the
 * replies it makes up. What the library itself reports (a handle that
 * never connects) would change the daemon at random moments: dropped.
 */
static void
fuzz_daemon_zk_event(const struct zk_event *ev, void *arg)
{
	(void)ev;
	(void)arg;
}

void
fuzz_daemon_init(struct daemon *d)
{
	struct election_params ep;
	struct ctl_params cp;
	char err[512];

	memset(d, 0, sizeof(*d));
	fuzz_daemon_config(&d->cfg);
	if ((d->base = event_base_new()) == NULL)
		FUZZ_FAIL("event_base_new");
	d->pid = getpid();
	d->epath = config_election_path(&d->cfg);
	(void)xasprintf(&d->cpath, "%s/candidates", d->epath);
	d->last_leader = xstrdup("");
	d->last_role = ROLE_UNKNOWN;
	d->since = time(NULL);
	d->zk_state = ZOO_CONNECTING_STATE;
	d->hook_pid = -1;
	d->startup_pid = -1;
	d->notify_pid = -1;
	d->notified_leader = xstrdup("");
	d->armed_deadline = -1;
	d->step = daemon_step;

	memset(&cp, 0, sizeof(cp));
	cp.path = d->cfg.socket_path;
	cp.mode = d->cfg.socket_mode;
	cp.max_clients = (int)d->cfg.max_clients;
	cp.idle_timeout_ms = 5000;
	if ((d->ctl = ctl_open(d->base, &cp, command_handle, d, err,
	    sizeof(err))) == NULL)
		FUZZ_FAIL("ctl_open: %s", err);
	d->hooks = hook_runner_new(d->base);
	d->notify = notify_new(d->base);
	d->zk = zk_new(d->base, fuzz_daemon_zk_event, d);

	memset(&ep, 0, sizeof(ep));
	ep.path = d->epath;
	ep.id = d->cfg.id;
	ep.data = d->cfg.data;
	ep.session_timeout_ms = d->cfg.session_timeout_ms;
	ep.hook_timeout_ms = d->cfg.hook_timeout_ms;
	ep.check_interval_ms = d->cfg.check_interval_ms;
	ep.check_fall = d->cfg.check_fall;
	ep.check_rise = d->cfg.check_rise;
	ep.preempt_delay_ms = d->cfg.preempt_delay_ms;
	ep.retry_backoff_ms = d->cfg.retry_backoff_ms;
	d->el = election_new(&ep);

	d->deadline_fd = timerfd_create(CLOCK_BOOTTIME,
	    TFD_NONBLOCK | TFD_CLOEXEC);
	d->ev_publish = event_new(d->base, -1, 0, daemon_publish, d);
	if (d->deadline_fd == -1 || d->ev_publish == NULL)
		FUZZ_FAIL("timerfd or event_new");
}

void
fuzz_daemon_free(struct daemon *d)
{
	queue_read_fail(d, "error stopping");
	daemon_wake(d, &d->resign_waiters, "error stopping");
	daemon_wake(d, &d->pause_waiters, "error stopping");
	ctl_close(d->ctl);
	hook_runner_free(d->hooks);
	zk_free(d->zk);
	election_free(d->el);
	notify_free(d->notify);
	(void)close(d->deadline_fd);
	event_free(d->ev_publish);
	event_base_free(d->base);
	free(d->epath);
	free(d->cpath);
	free(d->last_error);
	free(d->last_report);
	free(d->last_watch);
	free(d->last_leader);
	free(d->notified_leader);
	config_free(&d->cfg);
}

/* Sends what it can of the input; half-closes once all is out. */
static int
fuzz_client_push(struct fuzz_client *c)
{
	ssize_t r;

	if (c->off < c->n) {
		r = send(c->fd, c->in + c->off, c->n - c->off, MSG_NOSIGNAL);
		if (r > 0) {
			c->off += (size_t)r;
			return 1;
		}
		if (r == -1 && errno != EAGAIN)
			c->off = c->n;	/* closed on us: stop sending */
	}
	if (c->off == c->n && !c->shut) {
		(void)shutdown(c->fd, SHUT_WR);
		c->shut = 1;
		return 1;
	}
	return 0;
}

/* Runs the loop until the daemon closes or nothing happens any more. */
static void
fuzz_client_pump(struct daemon *d, struct fuzz_client *c)
{
	ssize_t r;
	int idle = 0, progress;

	while (!c->closed && idle < FUZZ_IDLE_TURNS) {
		progress = fuzz_client_push(c);
		(void)event_base_loop(d->base, EVLOOP_NONBLOCK);
		r = recv(c->fd, c->out + c->len, FUZZ_ANSWER_MAX - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			progress = 1;
		} else if (r == 0 || (r == -1 && errno != EAGAIN))
			c->closed = 1;
		idle = progress ? 0 : idle + 1;
	}
}

void
fuzz_client_start(struct daemon *d, struct fuzz_client *c, const void *in,
    size_t n)
{
	int sv[2];

	memset(c, 0, sizeof(*c));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1)
		FUZZ_FAIL("socketpair: %s", strerror(errno));
	ctl_client_new(d->ctl, sv[0]);
	c->fd = sv[1];
	c->in = in;
	c->n = n;
	c->out = xmalloc(FUZZ_ANSWER_MAX + 1);
	fuzz_client_pump(d, c);
}

char *
fuzz_client_finish(struct daemon *d, struct fuzz_client *c, int *closed)
{
	fuzz_client_pump(d, c);
	(void)close(c->fd);
	/* The daemon notices the close. */
	(void)event_base_loop(d->base, EVLOOP_NONBLOCK);
	FUZZ_ASSERT(memchr(c->out, '\0', c->len) == NULL,
	    "NUL byte in an answer");
	c->out[c->len] = '\0';
	*closed = c->closed;
	return c->out;
}

char *
fuzz_daemon_ask(struct daemon *d, const void *in, size_t n, int *closed)
{
	struct fuzz_client c;

	fuzz_client_start(d, &c, in, n);
	return fuzz_client_finish(d, &c, closed);
}
