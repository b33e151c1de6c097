/*
 * hookbench N STAMP FILE: runs the hook "exec STAMP FILE" N times through
 * the hook runner linked in (hook.c), one at a time, the way the daemon
 * does (an event_base, SIGCHLD as a libevent signal event that reaps, the
 * process the child subreaper), after three runs not counted. Prints per
 * run "pid t_call t_return t_done" in CLOCK_MONOTONIC nanoseconds: just
 * before hook_run(), just after it returned, and in the done callback.
 * STAMP appends its own "pid main_ns exit_ns" lines to FILE.
 */
#include <sys/prctl.h>

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <time.h>

#include <event2/event.h>

#include "hook.h"
#include "log.h"

#define WARMUP	3

struct run {
	int done;
	int ok;
	int64_t t_done;
};

static int64_t
bench_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
bench_sigchld(evutil_socket_t sig, short events, void *arg)
{
	(void)sig;
	(void)events;
	hook_runner_reap(arg);
}

static void
bench_done(const struct hook_result *res, void *arg)
{
	struct run *r = arg;

	r->t_done = bench_ns();
	r->done = 1;
	r->ok = res->ok;
}

int
main(int argc, char *argv[])
{
	struct event_base *base;
	struct hook_runner *hr;
	struct event *ev;
	struct run r;
	char cmd[PATH_MAX * 2 + 16];
	int64_t t_call, t_ret;
	long n, i;
	pid_t pid;

	if (argc != 4 || (n = strtol(argv[1], NULL, 10)) < 1) {
		(void)fprintf(stderr, "usage: hookbench N STAMP FILE\n");
		return 2;
	}
	(void)snprintf(cmd, sizeof(cmd), "exec %s %s", argv[2], argv[3]);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return 1;
	(void)signal(SIGPIPE, SIG_IGN);
	log_init("hookbench", LOG_WARNING);
	if ((base = event_base_new()) == NULL)
		return 1;
	hr = hook_runner_new(base);
	if ((ev = evsignal_new(base, SIGCHLD, bench_sigchld, hr)) == NULL ||
	    event_add(ev, NULL) == -1)
		return 1;
	for (i = -WARMUP; i < n; i++) {
		r.done = 0;
		t_call = bench_ns();
		pid = hook_run(hr, HOOK_PROMOTE, cmd, NULL, 10000, bench_done,
		    &r);
		t_ret = bench_ns();
		if (pid == -1)
			return 1;
		while (!r.done)
			if (event_base_loop(base, EVLOOP_ONCE) == -1)
				return 1;
		if (!r.ok) {
			(void)fprintf(stderr, "hookbench: the hook failed\n");
			return 1;
		}
		if (i >= 0)
			(void)printf("%ld %lld %lld %lld\n", (long)pid,
			    (long long)t_call, (long long)t_ret,
			    (long long)r.t_done);
	}
	event_free(ev);
	hook_runner_free(hr);
	event_base_free(base);
	return 0;
}
