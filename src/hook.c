/*
 * Hook commands run as children of the daemon: /bin/sh -c in a process
 * group of their own, so that a timeout can reach everything the command
 * started. Output goes through a pipe into the log, one line at a time.
 *
 * A command line of plain words whose first is a path (hook_words()) is
 * exec'd directly: it is what /bin/sh -c would run, with the same argv,
 * in the same process group, with the PWD the shell would export, but
 * without a shell's start and its fork (dash forks even for the last
 * command of -c), about a millisecond on the handover's critical path and
 * a process between the daemon and the hook. Anything else (quotes,
 * expansions, redirections, separators, a program found through PATH, a
 * builtin) goes through /bin/sh -c, and so does a direct exec that the
 * kernel refuses: the shell then does what it would have done (a script
 * without #!, or its own "not found" and exit status 127).
 *
 * A hook starts with posix_spawn(): glibc's clone(CLONE_VM | CLONE_VFORK)
 * copies no page tables and returns once the program has been exec'd, and
 * everything the child needs (argv, the environment, its file actions) is
 * prepared before, so that nothing runs between the decision and the
 * execve but the kernel's work.
 *
 * A hook is over when its shell has exited, or, once its timeout struck,
 * when its whole process group is gone. A hook stays in the runner's list
 * after that while its output pipe is still open: a background child it
 * left (an application a promote started with `&`) may hold it, and what
 * that child writes is worth logging. Only the last
 * HOOK_LEFTOVERS_PER_KIND of each kind are kept so, or a check that leaves
 * a process at every run would take a descriptor at every run until none
 * is left for the demote hook; an older one's pipe is closed, and its
 * processes' next write fails with EPIPE (or SIGPIPE kills them), as on a
 * terminal that was closed.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "hook.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define HOOK_SHELL		"/bin/sh"
#define HOOK_WORDS_MAX		64	/* more words go through the shell */
#define HOOK_KILL_DELAY_MS	5000
#define HOOK_LINE_MAX		1024	/* longer output lines are cut */
#define HOOK_READ_SIZE		4096
#define HOOK_DRAIN_MAX		65536	/* read at once when the shell exits */
#define HOOK_HELD_MAX		4096	/* a check's output kept until its end */
#define HOOK_LEFTOVER_WARN_MS	60000	/* one warning a minute per kind */

extern char **environ;

enum hook_phase {
	HOOK_WAITING,		/* timeout timer armed (or no timeout) */
	HOOK_TERMED,		/* SIGTERM sent, SIGKILL due */
	HOOK_KILLED,		/* SIGKILL sent */
};

struct hook {
	TAILQ_ENTRY(hook) entry;
	struct hook_runner *hr;
	enum hook_kind kind;
	pid_t pid;		/* also the process group id */
	int running;		/* the shell has not been reaped */
	int status;		/* the shell's wait status, once reaped */
	int over;		/* done was called; never signalled again */
	enum hook_phase phase;
	int64_t start_ms;
	int64_t end_ms;		/* when it was over */
	int64_t timeout_ms;	/* as given; 0 once cancelled */
	int64_t reaped_us;	/* log_stamp() of its reaping */
	int64_t kill_delay_ms;	/* from SIGTERM to SIGKILL */
	int64_t kill_at_ms;	/* now_ms() the SIGKILL is due (HOOK_TERMED) */
	int fd;			/* read end of the output pipe, or -1 */
	struct event *ev_out;
	struct event *ev_timer;
	hook_done_fn done;
	void *arg;
	char line[HOOK_LINE_MAX + 1];
	size_t linelen;
	int cut;		/* dropping the rest of an over-long line */
	int hold;		/* keep the output until the end (a check) */
	char *held;		/* lines kept, each ending in '\n' */
	size_t heldlen;
	unsigned long dropped;	/* lines that did not fit in held */
};

struct hook_runner {
	struct event_base *base;
	TAILQ_HEAD(, hook) hooks;
	int active;
	struct hook_stamps stamps;	/* of the last hook_run() */
	/* Closed leftovers' warnings, by kind: the next one due, and the
	 * closes logged at debug since the last. */
	int64_t warn_next[HOOK_KINDS];
	unsigned long unwarned[HOOK_KINDS];
	hook_other_fn other;	/* a child that is no hook, reaped */
	void *other_arg;
};

static void hook_output(evutil_socket_t, short, void *);
static void hook_timer(evutil_socket_t, short, void *);

const char *
hook_kind_name(enum hook_kind kind)
{
	switch (kind) {
	case HOOK_PROMOTE:
		return "promote";
	case HOOK_DEMOTE:
		return "demote";
	case HOOK_FENCE:
		return "fence";
	case HOOK_CHECK:
		return "check";
	case HOOK_NOTIFY:
		return "notify";
	case HOOK_RUN:
		return "run";
	}
	return "unknown";
}

struct hook_runner *
hook_runner_new(struct event_base *base)
{
	struct hook_runner *hr;

	hr = xcalloc(1, sizeof(*hr));
	hr->base = base;
	TAILQ_INIT(&hr->hooks);
	return hr;
}

static void
hook_close_output(struct hook *h)
{
	if (h->ev_out != NULL) {
		event_free(h->ev_out);
		h->ev_out = NULL;
	}
	if (h->fd != -1) {
		if (close(h->fd) == -1)
			log_warn("hook %s[%ld]: close output pipe",
			    hook_kind_name(h->kind), (long)h->pid);
		h->fd = -1;
	}
}

static void
hook_free(struct hook *h)
{
	TAILQ_REMOVE(&h->hr->hooks, h, entry);
	hook_close_output(h);
	if (h->ev_timer != NULL)
		event_free(h->ev_timer);
	free(h->held);
	free(h);
}

/* Frees a hook once nothing about it is left to do. */
static void
hook_maybe_free(struct hook *h)
{
	if (!h->over || h->fd != -1)
		return;
	hook_free(h);
}

void
hook_runner_free(struct hook_runner *hr)
{
	struct hook *h;

	if (hr == NULL)
		return;
	while ((h = TAILQ_FIRST(&hr->hooks)) != NULL) {
		/* Not over: the shell or a process of its group holds pgid. */
		if (!h->over && kill(-h->pid, SIGKILL) == -1 && errno != ESRCH)
			log_warn("hook %s[%ld]: kill", hook_kind_name(h->kind),
			    (long)h->pid);
		hook_free(h);
	}
	free(hr);
}

int
hook_runner_active(const struct hook_runner *hr)
{
	return hr->active;
}

static int
hook_is_leftover(const struct hook *h)
{
	return h->over && h->fd != -1;
}

int
hook_runner_leftovers(const struct hook_runner *hr)
{
	const struct hook *h;
	int n = 0;

	TAILQ_FOREACH(h, &hr->hooks, entry)
		n += hook_is_leftover(h);
	return n;
}

/*
 * Stops reading an ended hook's output: what it left running gets EPIPE
 * (or SIGPIPE) at its next write. Warned once a minute per kind, so that
 * a check leaving a process at every run does not flood the log; the
 * closes in between are logged at debug and counted in the next warning.
 */
static void
hook_leftover_close(struct hook *h, const char *why)
{
	struct hook_runner *hr = h->hr;
	const char *name = hook_kind_name(h->kind);
	int64_t now = now_ms();
	int k = (int)h->kind;
	char more[96] = "";

	if (now < hr->warn_next[k]) {
		hr->unwarned[k]++;
		log_debug("hook %s[%ld]: no longer logging the output of what "
		    "it left running (%s)", name, (long)h->pid, why);
		hook_free(h);
		return;
	}
	if (hr->unwarned[k] > 0)
		(void)snprintf(more, sizeof(more), " (and of %lu more %s "
		    "hooks since the last warning)", hr->unwarned[k], name);
	log_warnx("hook %s[%ld]: no longer logging the output of what it "
	    "left running, %.1f s after it ended: %s; their next write gets "
	    "EPIPE or SIGPIPE%s", name, (long)h->pid,
	    (double)(now - h->end_ms) / 1000.0, why, more);
	hr->warn_next[k] = now + HOOK_LEFTOVER_WARN_MS;
	hr->unwarned[k] = 0;
	hook_free(h);
}

/*
 * The hook is over: freed, unless its output is still open, and then the
 * oldest ended hooks of its kind beyond the bound are let go.
 */
static void
hook_settle(struct hook *h)
{
	struct hook_runner *hr = h->hr;
	enum hook_kind kind = h->kind;
	struct hook *o;
	char why[96];
	int n = 0;

	if (!hook_is_leftover(h)) {
		hook_maybe_free(h);
		return;
	}
	TAILQ_FOREACH(o, &hr->hooks, entry)
		n += hook_is_leftover(o) && o->kind == kind;
	if (n <= HOOK_LEFTOVERS_PER_KIND)
		return;
	(void)snprintf(why, sizeof(why), "only the last %d ended %s hooks' "
	    "output is read", HOOK_LEFTOVERS_PER_KIND, hook_kind_name(kind));
	/* One kind's hooks run one at a time: the first started ended first. */
	while (n-- > HOOK_LEFTOVERS_PER_KIND) {
		TAILQ_FOREACH(o, &hr->hooks, entry)
			if (hook_is_leftover(o) && o->kind == kind)
				break;
		hook_leftover_close(o, why);
	}
}

/* Out of descriptors: every ended hook's output gives its own back. */
static int
hook_leftovers_reclaim(struct hook_runner *hr)
{
	struct hook *h, *next;
	int n = 0;

	for (h = TAILQ_FIRST(&hr->hooks); h != NULL; h = next) {
		next = TAILQ_NEXT(h, entry);
		if (!hook_is_leftover(h))
			continue;
		hook_leftover_close(h, "the daemon is out of descriptors");
		n++;
	}
	return n;
}

void
hook_describe(const struct hook_result *res, char *buf, size_t len)
{
	const char *how = res->killed ? "killed" : "ended";

	if (res->timed_out && res->timeout_ms > 0)
		(void)snprintf(buf, len, "timed out after %lld ms (%s at "
		    "%lld ms)", (long long)res->timeout_ms, how,
		    (long long)res->duration_ms);
	else if (res->timed_out)
		(void)snprintf(buf, len, "stopped (%s at %lld ms)", how,
		    (long long)res->duration_ms);
	else if (res->signo != 0)
		(void)snprintf(buf, len, "killed by signal %d", res->signo);
	else
		(void)snprintf(buf, len, "exited %d", res->exit_code);
}

/* Logs the collected line, made safe for a log line. */
static void
hook_emit(struct hook *h, const char *suffix)
{
	size_t i, len = h->linelen;
	unsigned char c;

	h->linelen = 0;
	if (h->cut) {
		h->cut = 0;
		return;
	}
	if (len > 0 && h->line[len - 1] == '\r')
		len--;
	for (i = 0; i < len; i++) {
		c = (unsigned char)h->line[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			h->line[i] = '?';
	}
	h->line[len] = '\0';
	if (!h->hold) {
		log_info("hook %s[%ld]: %s%s", hook_kind_name(h->kind),
		    (long)h->pid, h->line, suffix);
		return;
	}
	len = strlen(h->line) + strlen(suffix) + 1;
	if (h->heldlen + len > HOOK_HELD_MAX) {
		h->dropped++;
		return;
	}
	if (h->held == NULL)
		h->held = xmalloc(HOOK_HELD_MAX + 1);
	(void)snprintf(h->held + h->heldlen, HOOK_HELD_MAX + 1 - h->heldlen,
	    "%s%s\n", h->line, suffix);
	h->heldlen += len;
}

/*
 * A check runs every few seconds: what a passing one says is debug, what
 * a failing one says is what the operator needs to read.
 */
static void
hook_release_held(struct hook *h, int ok)
{
	int prio = ok ? LOG_DEBUG : LOG_INFO;
	char *line, *next;

	h->hold = 0;
	for (line = h->held; line != NULL && line < h->held + h->heldlen;
	    line = next + 1) {
		next = strchr(line, '\n');
		*next = '\0';
		log_msg(prio, "hook %s[%ld]: %s", hook_kind_name(h->kind),
		    (long)h->pid, line);
	}
	if (h->dropped > 0)
		log_msg(prio, "hook %s[%ld]: %lu more lines not kept",
		    hook_kind_name(h->kind), (long)h->pid, h->dropped);
	free(h->held);
	h->held = NULL;
	h->heldlen = 0;
	h->dropped = 0;
}

static void
hook_output_bytes(struct hook *h, const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			hook_emit(h, "");
			continue;
		}
		if (h->cut)
			continue;
		if (h->linelen == HOOK_LINE_MAX) {
			/* Log what fits now and drop the rest of the line. */
			hook_emit(h, " [cut]");
			h->cut = 1;
			continue;
		}
		h->line[h->linelen++] = buf[i];
	}
}

/*
 * Reads up to max bytes of output. At EOF (or on a read error) the
 * partial last line is logged and the pipe closed.
 */
static void
hook_read(struct hook *h, size_t max)
{
	char buf[HOOK_READ_SIZE];
	size_t total = 0;
	ssize_t n;

	while (h->fd != -1 && total < max) {
		n = read(h->fd, buf, sizeof(buf));
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			log_warn("hook %s[%ld]: read output",
			    hook_kind_name(h->kind), (long)h->pid);
		}
		if (n <= 0) {
			if (h->linelen > 0)
				hook_emit(h, "");
			h->cut = 0;
			hook_close_output(h);
			return;
		}
		hook_output_bytes(h, buf, (size_t)n);
		total += (size_t)n;
	}
}

static void
hook_output(evutil_socket_t fd, short events, void *arg)
{
	struct hook *h = arg;

	(void)fd;
	(void)events;
	hook_read(h, HOOK_READ_SIZE);
	hook_maybe_free(h);
}

/*
 * Whether the process group of a timed-out hook is gone, asked without
 * polling: the daemon is the child subreaper (PR_SET_CHILD_SUBREAPER, set
 * at start), so every process of the hook's tree whose parent dies is
 * re-parented to the daemon, never to init, and every exit of a child of
 * the daemon raises SIGCHLD, after which hook_runner_reap() reaps and asks
 * again. The group counts as gone when no child of ours is left in it
 * (waitid P_PGID says ECHILD; WNOWAIT leaves a zombie to the reaping loop).
 *
 * Why no child of ours in the group means no process in it: take any
 * process P of the group, alive or a zombie not yet reaped. Its parent is
 * alive (a process whose parent dies gets a new, living one), and so is
 * the parent's parent, up to the daemon: the chain cannot pass the daemon
 * to init, as the daemon is a subreaper, and starts below it, since the
 * group's first process is our shell. The process of that chain just
 * below the daemon is our child, and it is in the group as long as no
 * process between it and P left the group on purpose. In particular, a
 * grandchild whose parent is still alive keeps the group non-empty
 * through that parent (or its parent, ...); and when the parent exits,
 * the kernel re-parents its children to us before the parent becomes a
 * zombie we can reap (exit_notify), so there is no moment at which the
 * parent is gone and the grandchild not yet ours. A zombie grandchild
 * whose parent exits without reaping it is re-parented the same way and
 * reaped by us.
 *
 * What this does not see: a process that left the group with setsid() or
 * setpgid() has escaped the hook, together with what it had forked before
 * (as kill(-pgid, 0) would not see the former either); such escapes are
 * the documented way for a hook to leave something running. Leaving the
 * group raises no signal, which is why a hook whose shell exited in time
 * is over at once, and only a timed-out hook waits for its group: after
 * its SIGKILL whatever is left can only die, and every death is seen.
 */
static int
hook_group_empty(const struct hook *h)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PGID, (id_t)h->pid, &si,
		    WEXITED | WNOHANG | WNOWAIT) == 0)
			return 0;
		if (errno == ECHILD)
			return 1;
		if (errno != EINTR) {
			/* Never wait on a group we cannot ask about. */
			log_warn("hook %s[%ld]: waitid",
			    hook_kind_name(h->kind), (long)h->pid);
			return 1;
		}
	}
}

/*
 * Reports a hook as over: its shell has been reaped and, if the timeout
 * struck, its group is gone. From here its group id may be reused by any
 * process, so it is never signalled again.
 */
static void
hook_finish(struct hook *h)
{
	struct hook_result res;
	hook_done_fn done = h->done;
	void *arg = h->arg;
	int status = h->status;

	h->over = 1;
	h->hr->active--;
	h->end_ms = now_ms();
	(void)evtimer_del(h->ev_timer);

	memset(&res, 0, sizeof(res));
	res.kind = h->kind;
	res.pid = h->pid;
	res.reaped_us = h->reaped_us;
	res.duration_ms = h->end_ms - h->start_ms;
	res.timed_out = h->phase != HOOK_WAITING;
	res.timeout_ms = h->timeout_ms;
	res.killed = h->phase == HOOK_KILLED;
	if (WIFEXITED(status)) {
		res.exit_code = WEXITSTATUS(status);
		res.signo = 0;
	} else {
		res.exit_code = -1;
		res.signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	res.ok = !res.timed_out && WIFEXITED(status) && res.exit_code == 0;

	/* Everything the shell wrote is in the pipe by now. */
	hook_read(h, HOOK_DRAIN_MAX);
	if (h->hold)
		hook_release_held(h, res.ok);
	hook_settle(h);

	/* h may be gone: only the copies are used from here. */
	if (done != NULL)
		done(&res, arg);
	/* After done: what follows the hook (a release) goes first. */
	log_debug("hook %s[%ld]: over: code %d signal %d after %lld ms%s",
	    hook_kind_name(res.kind), (long)res.pid, res.exit_code, res.signo,
	    (long long)res.duration_ms, res.timed_out ? " (timed out)" : "");
}

/*
 * Arms h's timer tv from now. libevent counts a timer from the time it
 * cached when the loop woke up: armed at the end of a long step (a busy
 * machine, a slow spawn), a 100 ms check timeout had already run out and
 * the check "timed out after 0 ms", a failure that made a healthy leader
 * leave the election. The election's own deadline is an absolute
 * timerfd (engine.c), which the cache does not touch; the loop's other
 * timers may fire early and are only asked again.
 */
static int
hook_timer_add(struct hook *h, int64_t ms)
{
	struct timeval tv;

	clock_timeval(&tv, ms);
	(void)event_base_update_cache_time(h->hr->base);
	return evtimer_add(h->ev_timer, &tv);
}

/* SIGTERM went out: the SIGKILL follows ms from now. */
static void
hook_arm_kill(struct hook *h, int64_t ms)
{
	h->kill_at_ms = now_ms() + ms;
	if (hook_timer_add(h, ms) == -1)
		log_warnx("hook %s[%ld]: cannot arm the SIGKILL timer",
		    hook_kind_name(h->kind), (long)h->pid);
}

/*
 * The shell of hooks.run ended while what it started goes on: that is
 * leadership's process outliving its supervision. The rest of its group
 * gets SIGTERM now and SIGKILL after the kill delay, as at a timeout, so
 * that the run is over only once nothing of it is left.
 */
static void
hook_run_leftovers(struct hook *h)
{
	log_warnx("hook %s[%ld]: the shell exited, stopping what it left "
	    "in its process group", hook_kind_name(h->kind), (long)h->pid);
	h->phase = HOOK_TERMED;
	if (kill(-h->pid, SIGTERM) == -1 && errno != ESRCH)
		log_warn("hook %s[%ld]: kill SIGTERM", hook_kind_name(h->kind),
		    (long)h->pid);
	hook_arm_kill(h, h->kill_delay_ms);
}

/* Whether the hook's end is known (its shell is reaped). */
static int
hook_ready(struct hook *h)
{
	if (h->over || h->running)
		return 0;
	if (h->phase == HOOK_WAITING && h->kind == HOOK_RUN &&
	    !hook_group_empty(h)) {
		hook_run_leftovers(h);
		return 0;
	}
	/* A timeout struck: what the shell forked must be gone too. */
	return h->phase == HOOK_WAITING || hook_group_empty(h);
}

/*
 * Reports every hook whose end is known, one at a time: a done callback
 * may start, cancel or end other hooks, so the list is walked afresh.
 */
static void
hook_finish_ready(struct hook_runner *hr)
{
	struct hook *h;

	do {
		TAILQ_FOREACH(h, &hr->hooks, entry)
			if (hook_ready(h))
				break;
		if (h != NULL)
			hook_finish(h);
	} while (h != NULL);
}

static void
hook_timer(evutil_socket_t fd, short events, void *arg)
{
	struct hook *h = arg;
	const char *name = hook_kind_name(h->kind);

	(void)fd;
	(void)events;
	switch (h->phase) {
	case HOOK_WAITING:
		log_debug("hook %s[%ld]: timed out, sending SIGTERM to its "
		    "process group", name, (long)h->pid);
		h->phase = HOOK_TERMED;
		if (kill(-h->pid, SIGTERM) == -1 && errno != ESRCH)
			log_warn("hook %s[%ld]: kill SIGTERM", name,
			    (long)h->pid);
		hook_arm_kill(h, h->kill_delay_ms);
		break;
	case HOOK_TERMED:
		/*
		 * The shell may be gone already; what it started in the
		 * background still belongs to the group and must not
		 * survive the timeout.
		 */
		h->phase = HOOK_KILLED;
		if (kill(-h->pid, SIGKILL) == 0)
			log_info("hook %s[%ld]: process group killed with "
			    "SIGKILL", name, (long)h->pid);
		else if (errno != ESRCH)
			log_warn("hook %s[%ld]: kill SIGKILL", name,
			    (long)h->pid);
		/*
		 * Each death to come raises SIGCHLD. Only a group already
		 * empty (its last processes left it) must be seen here.
		 */
		if (!h->running && hook_group_empty(h))
			hook_finish(h);
		break;
	case HOOK_KILLED:
		break;
	}
}

static int
hook_env_same(const char *a, const char *b)
{
	size_t la = strcspn(a, "="), lb = strcspn(b, "=");

	return la == lb && strncmp(a, b, la) == 0;
}

static int
hook_env_listed(const char *var, char *const list[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (hook_env_same(var, list[i]))
			return 1;
	return 0;
}

/*
 * What systemd hands the daemon alone: a hook that inherited them could
 * tell systemd it is ready or stopping, feed the watchdog in the daemon's
 * place, or be taken for the daemon's own journal stream.
 */
static const char *const hook_env_dropped[] = {
	"NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=", "JOURNAL_STREAM=",
	"LISTEN_FDS=", "LISTEN_PID=", "LISTEN_FDNAMES=", NULL,
};

int
hook_env_passed(const char *var)
{
	return !hook_env_listed(var, (char *const *)hook_env_dropped,
	    sizeof(hook_env_dropped) / sizeof(hook_env_dropped[0]) - 1);
}

/*
 * The daemon's environment less hook_env_dropped, with env layered over
 * it (a later entry of env wins over an earlier one). The strings are
 * borrowed, only the array is allocated.
 */
static char **
hook_environ(char *const env[])
{
	size_t n = 0, m = 0, i, k = 0;
	char **envp;

	while (environ != NULL && environ[n] != NULL)
		n++;
	while (env != NULL && env[m] != NULL)
		m++;
	envp = xcalloc(n + m + 1, sizeof(*envp));
	for (i = 0; i < n; i++)
		if (!hook_env_listed(environ[i], env, m) &&
		    hook_env_passed(environ[i]))
			envp[k++] = environ[i];
	for (i = 0; i < m; i++)
		if (!hook_env_listed(env[i], env + i + 1, m - i - 1))
			envp[k++] = env[i];
	envp[k] = NULL;
	return envp;
}

/* Moves *fd above stdio, so that the child's dup2() calls cannot clash. */
static int
hook_fd_above_stdio(int *fd)
{
	int nfd;

	if (*fd > STDERR_FILENO)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)) == -1)
		return -1;
	(void)close(*fd);
	*fd = nfd;
	return 0;
}

/*
 * Starts the shell: in a new process group (set before exec, so that a
 * timeout always reaches the group), with every signal at its default and
 * none blocked (the daemon ignores SIGPIPE, and exec keeps ignores), stdin
 * from nullfd, stdout and stderr into outfd, and no other descriptor:
 * closefrom in the child covers even one another thread opened without
 * O_CLOEXEC. glibc blocks signals around the clone and resets the
 * daemon's handlers in the child, and reports a failed exec as the error.
 */
static int
hook_spawn(pid_t *pid, const char *path, int nullfd, int outfd,
    char *const argv[], char *const envp[])
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	unsigned long *word = (unsigned long *)(void *)&all;
	const size_t bits = 8 * sizeof(*word);
	int err, sig;

	if ((err = spawn_init(&fa, &attr)) != 0)
		return err;
	(void)sigemptyset(&none);
	(void)sigfillset(&all);
	/*
	 * glibc's sigfillset() leaves out its two internal signals (SIGRTMIN
	 * - 2 and - 1, 32 and 33), and its posix_spawn() then sets those to
	 * SIG_IGN in the child, which exec keeps for the hook and all it
	 * runs. They are set by hand in the kernel's bit mask, which is what
	 * the child reads (test_signals_reset checks SigIgn).
	 */
	for (sig = 32; sig <= 33; sig++)
		word[(sig - 1) / bits] |= 1UL << ((sig - 1) % bits);
	if ((err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0 ||
	    (err = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
	    (err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (err = posix_spawnattr_setsigdefault(&attr, &all)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(&fa, nullfd,
	    STDIN_FILENO)) != 0 ||
	    (err = spawn_output(&fa, outfd)) != 0)
		goto out;
	err = posix_spawn(pid, path, &fa, &attr, argv, envp);
out:
	(void)posix_spawnattr_destroy(&attr);
	(void)posix_spawn_file_actions_destroy(&fa);
	return err;
}

/*
 * Splits cmd into argv (words of buf, a copy) when /bin/sh -c would run it
 * as one program with those words as they are: only characters no shell
 * rule touches, blanks between, the first word a path (it has a '/', so
 * neither PATH, a builtin, a function nor an assignment is involved).
 * Returns the number of words, or 0 when the shell must read the line.
 */
int
hook_words(const char *cmd, char *buf, size_t bufsz, char *argv[],
    int maxwords)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,:+@%=-";
	size_t len = strlen(cmd);
	char *p;
	int n = 0;

	if (len == 0 || len >= bufsz)
		return 0;
	memcpy(buf, cmd, len + 1);
	for (p = buf; *p != '\0'; p++)
		if (*p != ' ' && *p != '\t' && strchr(plain, *p) == NULL)
			return 0;
	for (p = buf; *p != '\0';) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (*p == '\0')
			break;
		if (n == maxwords - 1)
			return 0;
		argv[n++] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
	}
	if (n == 0 || strchr(argv[0], '/') == NULL ||
	    strchr(argv[0], '=') != NULL)
		return 0;
	argv[n] = NULL;
	return n;
}

/*
 * What dash exports before it runs anything: PWD, kept when it names the
 * working directory, else the directory's path. Set so in a direct
 * exec's environment.
 */
static char **
hook_environ_pwd(char **envp, char *pwd, size_t pwdsz)
{
	struct stat a, b;
	size_t n, at = (size_t)-1;

	for (n = 0; envp[n] != NULL; n++)
		if (strncmp(envp[n], "PWD=", 4) == 0)
			at = n;
	if (at != (size_t)-1 && envp[at][4] == '/' &&
	    stat(envp[at] + 4, &a) == 0 && stat(".", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return envp;
	memcpy(pwd, "PWD=", 4);
	if (getcwd(pwd + 4, pwdsz - 4) == NULL)
		return envp;
	if (at != (size_t)-1) {
		envp[at] = pwd;
		return envp;
	}
	envp = xreallocarray(envp, n + 2, sizeof(*envp));
	envp[n] = pwd;
	envp[n + 1] = NULL;
	return envp;
}

/* The child's stdin and output pipe; -1 with errno and *what on failure. */
static int
hook_open_fds(int *nullfd, int pfd[2], const char **what)
{
	int err;

	*nullfd = -1;
	pfd[0] = pfd[1] = -1;
	*what = "open /dev/null";
	if ((*nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		goto fail;
	*what = "pipe";
	if (pipe2(pfd, O_CLOEXEC) == -1)
		goto fail;
	*what = "fcntl F_DUPFD";
	if (hook_fd_above_stdio(nullfd) == -1 ||
	    hook_fd_above_stdio(&pfd[0]) == -1 ||
	    hook_fd_above_stdio(&pfd[1]) == -1)
		goto fail;
	*what = "fcntl O_NONBLOCK";
	if (fcntl(pfd[0], F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	return 0;
fail:
	err = errno;
	if (*nullfd != -1)
		(void)close(*nullfd);
	if (pfd[0] != -1)
		(void)close(pfd[0]);
	if (pfd[1] != -1)
		(void)close(pfd[1]);
	errno = err;
	return -1;
}

/*
 * hook_open_fds(), logged; out of descriptors, it tries once more after
 * the ended hooks' leftovers gave theirs back (a demote must start).
 */
static int
hook_open_fds_reclaim(struct hook_runner *hr, const char *name, int *nullfd,
    int pfd[2])
{
	const char *what;

	if (hook_open_fds(nullfd, pfd, &what) == 0)
		return 0;
	if ((errno == EMFILE || errno == ENFILE) &&
	    hook_leftovers_reclaim(hr) > 0 &&
	    hook_open_fds(nullfd, pfd, &what) == 0)
		return 0;
	log_warn("hook %s: %s", name, what);
	return -1;
}

/* A hook started (by us, or by the image before a re-exec) is watched. */
static struct hook *
hook_track(struct hook_runner *hr, enum hook_kind kind, pid_t pid, int fd,
    hook_done_fn done, void *arg)
{
	const char *name = hook_kind_name(kind);
	struct hook *h;

	h = xcalloc(1, sizeof(*h));
	h->hr = hr;
	h->kind = kind;
	h->pid = pid;
	h->running = 1;
	h->phase = HOOK_WAITING;
	h->start_ms = now_ms();
	h->kill_delay_ms = HOOK_KILL_DELAY_MS;
	h->fd = fd;
	h->hold = kind == HOOK_CHECK;
	h->done = done;
	h->arg = arg;
	TAILQ_INSERT_TAIL(&hr->hooks, h, entry);
	hr->active++;

	if ((h->ev_timer = evtimer_new(hr->base, hook_timer, h)) == NULL)
		fatalx("hook %s[%ld]: event_new", name, (long)pid);
	/* An adopted hook whose output had ended has none. */
	if (h->fd == -1)
		return h;
	if ((h->ev_out = event_new(hr->base, h->fd, EV_READ | EV_PERSIST,
	    hook_output, h)) == NULL)
		fatalx("hook %s[%ld]: event_new", name, (long)pid);
	if (event_add(h->ev_out, NULL) == -1)
		log_warnx("hook %s[%ld]: cannot watch its output", name,
		    (long)pid);
	return h;
}

void
hook_adopt(struct hook_runner *hr, enum hook_kind kind, pid_t pid, int fd,
    hook_done_fn done, void *arg)
{
	(void)hook_track(hr, kind, pid, fd, done, arg);
}

int
hook_output_fd(const struct hook_runner *hr, pid_t pid)
{
	const struct hook *h;

	TAILQ_FOREACH(h, &hr->hooks, entry)
		if (h->pid == pid && !h->over)
			return h->fd;
	return -1;
}

pid_t
hook_run(struct hook_runner *hr, enum hook_kind kind, const char *cmd,
    char *const env[], int64_t timeout_ms, hook_done_fn done, void *arg)
{
	const char *name = hook_kind_name(kind);
	char *argv[HOOK_WORDS_MAX + 1], *sh[4];
	char words[1024], pwd[PATH_MAX + 4];
	char **envp;
	struct hook *h;
	int nullfd, pfd[2], err = ENOEXEC;
	pid_t pid;

	hr->stamps.entered = log_stamp();
	if (hook_open_fds_reclaim(hr, name, &nullfd, pfd) == -1)
		return -1;
	sh[0] = (char *)"sh";
	sh[1] = (char *)"-c";
	sh[2] = (char *)cmd;
	sh[3] = NULL;
	envp = hook_environ(env);
	if (hook_words(cmd, words, sizeof(words), argv, HOOK_WORDS_MAX + 1) >
	    0) {
		envp = hook_environ_pwd(envp, pwd, sizeof(pwd));
		hr->stamps.spawning = log_stamp();
		err = hook_spawn(&pid, argv[0], nullfd, pfd[1], argv, envp);
	}
	/* Not plain, or refused: the shell says what it makes of it. */
	if (err != 0) {
		hr->stamps.spawning = log_stamp();
		err = hook_spawn(&pid, HOOK_SHELL, nullfd, pfd[1], sh, envp);
	}
	hr->stamps.spawned = log_stamp();
	free(envp);
	(void)close(nullfd);
	(void)close(pfd[1]);
	if (err != 0) {
		errno = err;
		log_warn("hook %s: cannot run " HOOK_SHELL, name);
		(void)close(pfd[0]);
		return -1;
	}

	h = hook_track(hr, kind, pid, pfd[0], done, arg);
	h->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
	if (timeout_ms > 0) {
		if (hook_timer_add(h, timeout_ms) == -1)
			log_warnx("hook %s[%ld]: cannot arm its timeout", name,
			    (long)pid);
	}
	log_debug("hook %s[%ld]: started: %s", name, (long)pid, cmd);
	return pid;
}

void
hook_last_stamps(const struct hook_runner *hr, struct hook_stamps *st)
{
	*st = hr->stamps;
}

static struct hook *
hook_find(struct hook_runner *hr, pid_t pid)
{
	struct hook *h;

	TAILQ_FOREACH(h, &hr->hooks, entry)
		if (h->pid == pid && !h->over)
			return h;
	return NULL;
}

void
hook_set_kill_delay(struct hook_runner *hr, pid_t pid, int64_t ms)
{
	struct hook *h;

	if ((h = hook_find(hr, pid)) != NULL)
		h->kill_delay_ms = ms;
}

void
hook_cancel(struct hook_runner *hr, pid_t pid, int64_t grace_ms)
{
	struct hook *h;

	if ((h = hook_find(hr, pid)) == NULL || h->phase == HOOK_KILLED)
		return;
	if (h->phase == HOOK_TERMED) {
		/*
		 * SIGTERM went out: only a SIGKILL sooner can be asked. A
		 * check that timed out and ignores its SIGTERM would hold
		 * the slot for the whole kill delay against a promote that
		 * gives it a grace of 100 ms.
		 */
		if (grace_ms == 0) {
			(void)evtimer_del(h->ev_timer);
			hook_timer(-1, 0, h);
		} else if (now_ms() + grace_ms < h->kill_at_ms) {
			(void)evtimer_del(h->ev_timer);
			hook_arm_kill(h, grace_ms);
		}
		return;
	}
	log_debug("hook %s[%ld]: cancelled", hook_kind_name(h->kind),
	    (long)h->pid);
	(void)evtimer_del(h->ev_timer);
	h->timeout_ms = 0;	/* what ends it now is no timeout */
	if (grace_ms > 0) {
		h->kill_delay_ms = grace_ms;
		hook_timer(-1, 0, h);	/* SIGTERM now, SIGKILL after grace */
		return;
	}
	h->phase = HOOK_TERMED;
	hook_timer(-1, 0, h);		/* SIGKILL now */
}

void
hook_runner_others(struct hook_runner *hr, hook_other_fn fn, void *arg)
{
	hr->other = fn;
	hr->other_arg = arg;
}

void
hook_runner_reap(struct hook_runner *hr)
{
	struct hook *h;
	int64_t seen_us = log_stamp();
	pid_t pid;
	int status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0)
			break;
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				log_warn("waitpid");
			break;
		}
		TAILQ_FOREACH(h, &hr->hooks, entry)
			if (h->running && h->pid == pid)
				break;
		if (h == NULL) {
			if (hr->other == NULL ||
			    !hr->other(pid, status, hr->other_arg))
				log_debug("reaped child %ld that is no hook",
				    (long)pid);
			continue;
		}
		h->running = 0;
		h->status = status;
		h->reaped_us = seen_us;
	}
	/* Every zombie is reaped: a group's emptiness is known now. */
	hook_finish_ready(hr);
}
