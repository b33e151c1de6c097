/*
 * Host lists resolved off the event loop. A reload that names a host makes
 * getaddrinfo() ask DNS, which can take as long as resolv.conf's timeouts
 * (20 s for an unreachable server at glibc's defaults); done on the loop,
 * that froze a leader past its demote point while a successor promoted.
 *
 * Each resolution runs on a detached thread of its own, which touches only
 * its job: the two lists in, the answer out, written back (the job's
 * pointer) through a pipe the loop reads. The loop waits at most the
 * caller's bound; a job given up (late, or superseded) is freed when its
 * thread hands it in, never answered. The pipe is never closed while the
 * process lives, so a thread still in getaddrinfo() at exit or after a
 * give-up always has somewhere to write; it is close-on-exec, and a
 * re-exec ends such threads with the old image.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "resolve.h"
#include "xmalloc.h"
#include "zk.h"

struct resolve_job {
	char *from;
	char *hosts;
	char *numeric;		/* the answer, or NULL */
	char why[256];
	int wfd;
};

struct resolver {
	int fd[2];
	struct event *ev_done;
	struct event *ev_late;
	struct resolve_job *cur;	/* the one to answer, or NULL */
	resolver_fn fn;
	void *arg;
};

static void
resolve_job_free(struct resolve_job *j)
{
	free(j->from);
	free(j->hosts);
	free(j->numeric);
	free(j);
}

static void *
resolve_thread(void *arg)
{
	struct resolve_job *j = arg;

	j->numeric = zk_hosts_numeric(j->from, j->hosts, j->why,
	    sizeof(j->why));
	/* A pointer is far below PIPE_BUF: the write is whole. */
	while (write(j->wfd, &j, sizeof(j)) == -1)
		if (errno != EINTR)
			abort();
	return NULL;
}

static void
resolve_done(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = arg;
	struct resolve_job *j;
	ssize_t n;

	(void)what;
	while ((n = read(fd, &j, sizeof(j))) == (ssize_t)sizeof(j)) {
		if (j != r->cur) {
			resolve_job_free(j);
			continue;
		}
		r->cur = NULL;
		(void)event_del(r->ev_late);
		r->fn(j->hosts, j->numeric, j->why, r->arg);
		resolve_job_free(j);
	}
	if (n == -1 && errno != EAGAIN && errno != EINTR)
		fatal("resolver pipe");
}

/* The bound passed: answered now, the thread's answer thrown away. */
static void
resolve_late(evutil_socket_t fd, short what, void *arg)
{
	struct resolver *r = arg;
	char why[160], *hosts;

	(void)fd;
	(void)what;
	if (r->cur == NULL)
		return;
	hosts = xstrdup(r->cur->hosts);
	r->cur = NULL;
	(void)snprintf(why, sizeof(why), "no answer from name resolution in "
	    "time (DNS unreachable or slow?)");
	r->fn(hosts, NULL, why, r->arg);
	free(hosts);
}

struct resolver *
resolver_new(struct event_base *base, resolver_fn fn, void *arg)
{
	struct resolver *r;

	r = xcalloc(1, sizeof(*r));
	if (pipe2(r->fd, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2");
	/* The threads' end blocks: a full pipe would mean a lost answer. */
	if (fcntl(r->fd[1], F_SETFL, 0) == -1)
		fatal("fcntl");
	r->ev_done = event_new(base, r->fd[0], EV_READ | EV_PERSIST,
	    resolve_done, r);
	r->ev_late = evtimer_new(base, resolve_late, r);
	if (r->ev_done == NULL || r->ev_late == NULL ||
	    event_add(r->ev_done, NULL) == -1)
		fatalx("resolver: event_new");
	r->fn = fn;
	r->arg = arg;
	return r;
}

void
resolver_start(struct resolver *r, const char *from, const char *hosts,
    int64_t timeout_ms)
{
	struct timeval tv = { (time_t)(timeout_ms / 1000),
	    (suseconds_t)(timeout_ms % 1000) * 1000 };
	struct resolve_job *j;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc;

	resolver_cancel(r);
	j = xcalloc(1, sizeof(*j));
	j->from = xstrdup(from);
	j->hosts = xstrdup(hosts);
	j->wfd = r->fd[1];
	/* Signals are the loop's: the thread starts with all of them blocked. */
	(void)sigfillset(&all);
	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) != 0)
		fatalx("resolver: pthread_attr");
	(void)pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&t, &attr, resolve_thread, j);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	(void)pthread_attr_destroy(&attr);
	if (rc != 0) {
		(void)snprintf(j->why, sizeof(j->why), "cannot start a "
		    "resolver thread: %s", strerror(rc));
		r->fn(j->hosts, NULL, j->why, r->arg);
		resolve_job_free(j);
		return;
	}
	r->cur = j;
	if (evtimer_add(r->ev_late, &tv) == -1)
		fatalx("resolver: evtimer_add");
}

void
resolver_cancel(struct resolver *r)
{
	/* Its thread still hands it in; resolve_done() frees it then. */
	r->cur = NULL;
	(void)event_del(r->ev_late);
}

const char *
resolver_pending(const struct resolver *r)
{
	return r->cur != NULL ? r->cur->hosts : NULL;
}

/*
 * The answers already handed in are freed; the pipe stays open: a thread
 * still resolving writes to it (its job, on its stack, is not a leak).
 */
void
resolver_free(struct resolver *r)
{
	struct resolve_job *j;

	if (r == NULL)
		return;
	while (read(r->fd[0], &j, sizeof(j)) == (ssize_t)sizeof(j))
		resolve_job_free(j);
	event_free(r->ev_done);
	event_free(r->ev_late);
	free(r);
}
