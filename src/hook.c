/*
 * Hook commands run as children of the daemon: /bin/sh -c in a process
 * group of their own, so that a timeout can reach everything the command
 * started. Output goes through a pipe into the log, one line at a time.
 *
 * A hook stays in the runner's list after its shell was reaped while its
 * output pipe is still open (a background child may hold it) or while the
 * SIGKILL that follows a timeout is still due.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "hook.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define HOOK_SHELL		"/bin/sh"
#define HOOK_KILL_DELAY_MS	5000
#define HOOK_POLL_MS		50	/* checks for an empty group after SIGKILL */
#define HOOK_LINE_MAX		1024	/* longer output lines are cut */
#define HOOK_READ_SIZE		4096
#define HOOK_DRAIN_MAX		65536	/* read at once when the shell exits */
#define HOOK_CLOSE_MAX		65536	/* fallback fd loop bound */

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
	enum hook_phase phase;
	int64_t start_ms;
	int64_t kill_delay_ms;	/* from SIGTERM to SIGKILL */
	int fd;			/* read end of the output pipe, or -1 */
	struct event *ev_out;
	struct event *ev_timer;
	hook_done_fn done;
	void *arg;
	char line[HOOK_LINE_MAX + 1];
	size_t linelen;
	int cut;		/* dropping the rest of an over-long line */
	int deferred;		/* timed out: done waits for an empty group */
	struct hook_result res;
};

struct hook_runner {
	struct event_base *base;
	TAILQ_HEAD(, hook) hooks;
	int active;
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
	free(h);
}

/* Frees a hook once nothing about it is left to do. */
static void
hook_maybe_free(struct hook *h)
{
	if (h->running || h->fd != -1 || h->phase == HOOK_TERMED ||
	    h->deferred)
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
		if ((h->running || h->phase == HOOK_TERMED) &&
		    kill(-h->pid, SIGKILL) == -1 && errno != ESRCH)
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
	log_info("hook %s[%ld]: %s%s", hook_kind_name(h->kind), (long)h->pid,
	    h->line, suffix);
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

/* A process group is gone once no process, not even a zombie, is in it. */
static int
hook_group_empty(const struct hook *h)
{
	return kill(-h->pid, 0) == -1 && errno == ESRCH;
}

/*
 * A hook that timed out is reported only when its whole process group is
 * gone, so that what it forked never overlaps the next hook.
 */
static void
hook_finish_deferred(struct hook *h)
{
	struct hook_result res = h->res;
	hook_done_fn done = h->done;
	void *arg = h->arg;

	h->deferred = 0;
	res.duration_ms = now_ms() - h->start_ms;
	log_debug("hook %s[%ld]: process group gone after %lld ms",
	    hook_kind_name(h->kind), (long)h->pid,
	    (long long)res.duration_ms);
	hook_maybe_free(h);
	if (done != NULL)
		done(&res, arg);
}

static void
hook_timer(evutil_socket_t fd, short events, void *arg)
{
	struct hook *h = arg;
	struct timeval tv;
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
		tv.tv_sec = (time_t)(h->kill_delay_ms / 1000);
		tv.tv_usec = (suseconds_t)(h->kill_delay_ms % 1000) * 1000;
		if (evtimer_add(h->ev_timer, &tv) == -1)
			log_warnx("hook %s[%ld]: cannot arm the SIGKILL timer",
			    name, (long)h->pid);
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
		/* FALLTHROUGH */
	case HOOK_KILLED:
		if (h->deferred && !hook_group_empty(h)) {
			/* Killed processes wait to be reaped, by us or init. */
			tv.tv_sec = 0;
			tv.tv_usec = HOOK_POLL_MS * 1000;
			if (evtimer_add(h->ev_timer, &tv) == -1)
				log_warnx("hook %s[%ld]: cannot arm a timer",
				    name, (long)h->pid);
			break;
		}
		if (h->deferred)
			hook_finish_deferred(h);
		else
			hook_maybe_free(h);
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
 * The daemon's environment with env layered over it (a later entry of env
 * wins over an earlier one). The strings are borrowed, only the array is
 * allocated.
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
		if (!hook_env_listed(environ[i], env, m))
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

static void
hook_child_fail(const char *msg)
{
	ssize_t n;

	n = write(STDERR_FILENO, msg, strlen(msg));
	(void)n;
	_exit(127);
}

/*
 * Runs in the child between fork and exec: only async-signal-safe calls,
 * as the daemon has other threads.
 */
static void __attribute__((noreturn))
hook_child(int nullfd, int outfd, unsigned int maxfd, char *const argv[],
    char *const envp[])
{
	struct sigaction sa;
	sigset_t none;
	unsigned int fd;
	int sig;

	/* The parent does the same; whichever runs first wins the race. */
	(void)setpgid(0, 0);

	/* Handlers and ignores of the daemon (SIGPIPE) must not leak. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	(void)sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);

	if (dup2(outfd, STDOUT_FILENO) == -1 ||
	    dup2(outfd, STDERR_FILENO) == -1)
		_exit(127);
	if (dup2(nullfd, STDIN_FILENO) == -1)
		hook_child_fail("zkelectd: hook: cannot open /dev/null\n");
	if (close_range(STDERR_FILENO + 1, ~0U, 0) == -1)
		for (fd = STDERR_FILENO + 1; fd < maxfd; fd++)
			(void)close((int)fd);

	(void)execve(HOOK_SHELL, argv, envp);
	hook_child_fail("zkelectd: hook: cannot execute " HOOK_SHELL "\n");
	_exit(127);
}

static unsigned int
hook_max_fd(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > HOOK_CLOSE_MAX)
		return HOOK_CLOSE_MAX;
	return (unsigned int)rl.rlim_cur;
}

static int
hook_open_fds(const char *name, int *nullfd, int pfd[2])
{
	*nullfd = -1;
	pfd[0] = pfd[1] = -1;
	if ((*nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		log_warn("hook %s: open /dev/null", name);
		goto fail;
	}
	if (pipe2(pfd, O_CLOEXEC) == -1) {
		log_warn("hook %s: pipe", name);
		goto fail;
	}
	if (hook_fd_above_stdio(nullfd) == -1 ||
	    hook_fd_above_stdio(&pfd[0]) == -1 ||
	    hook_fd_above_stdio(&pfd[1]) == -1) {
		log_warn("hook %s: fcntl F_DUPFD", name);
		goto fail;
	}
	if (fcntl(pfd[0], F_SETFL, O_NONBLOCK) == -1) {
		log_warn("hook %s: fcntl O_NONBLOCK", name);
		goto fail;
	}
	return 0;
fail:
	if (*nullfd != -1)
		(void)close(*nullfd);
	if (pfd[0] != -1)
		(void)close(pfd[0]);
	if (pfd[1] != -1)
		(void)close(pfd[1]);
	return -1;
}

pid_t
hook_run(struct hook_runner *hr, enum hook_kind kind, const char *cmd,
    char *const env[], int64_t timeout_ms, hook_done_fn done, void *arg)
{
	const char *name = hook_kind_name(kind);
	char *argv[4];
	char **envp;
	sigset_t all, old;
	struct hook *h;
	struct timeval tv;
	unsigned int maxfd;
	int nullfd, pfd[2], err;
	pid_t pid;

	if (hook_open_fds(name, &nullfd, pfd) == -1)
		return -1;
	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)cmd;
	argv[3] = NULL;
	envp = hook_environ(env);
	maxfd = hook_max_fd();

	/*
	 * No signal handler of the daemon (libevent's among them) may run
	 * in the child before the child has reset them.
	 */
	(void)sigfillset(&all);
	if ((err = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0) {
		errno = err;
		log_warn("hook %s: pthread_sigmask", name);
		goto fail;
	}
	pid = fork();
	if (pid == 0)
		hook_child(nullfd, pfd[1], maxfd, argv, envp);
	err = errno;
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		errno = err;
		log_warn("hook %s: fork", name);
		goto fail;
	}
	free(envp);
	(void)close(nullfd);
	(void)close(pfd[1]);

	/* EACCES: the child has exec'd, so it did setpgid itself. */
	if (setpgid(pid, pid) == -1 && errno != EACCES && errno != ESRCH)
		log_warn("hook %s[%ld]: setpgid", name, (long)pid);

	h = xcalloc(1, sizeof(*h));
	h->hr = hr;
	h->kind = kind;
	h->pid = pid;
	h->running = 1;
	h->phase = HOOK_WAITING;
	h->start_ms = now_ms();
	h->kill_delay_ms = HOOK_KILL_DELAY_MS;
	h->fd = pfd[0];
	h->done = done;
	h->arg = arg;
	TAILQ_INSERT_TAIL(&hr->hooks, h, entry);
	hr->active++;

	if ((h->ev_out = event_new(hr->base, h->fd, EV_READ | EV_PERSIST,
	    hook_output, h)) == NULL ||
	    (h->ev_timer = evtimer_new(hr->base, hook_timer, h)) == NULL)
		fatalx("hook %s[%ld]: event_new", name, (long)pid);
	if (event_add(h->ev_out, NULL) == -1)
		log_warnx("hook %s[%ld]: cannot watch its output", name,
		    (long)pid);
	if (timeout_ms > 0) {
		tv.tv_sec = (time_t)(timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
		if (evtimer_add(h->ev_timer, &tv) == -1)
			log_warnx("hook %s[%ld]: cannot arm its timeout", name,
			    (long)pid);
	}
	log_debug("hook %s[%ld]: started: %s", name, (long)pid, cmd);
	return pid;

fail:
	free(envp);
	(void)close(nullfd);
	(void)close(pfd[0]);
	(void)close(pfd[1]);
	return -1;
}

static void
hook_exited(struct hook *h, int status)
{
	struct hook_result res;
	hook_done_fn done = h->done;
	void *arg = h->arg;

	h->running = 0;
	h->hr->active--;

	memset(&res, 0, sizeof(res));
	res.kind = h->kind;
	res.pid = h->pid;
	res.duration_ms = now_ms() - h->start_ms;
	res.timed_out = h->phase != HOOK_WAITING;
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
	if (h->phase == HOOK_WAITING)
		(void)evtimer_del(h->ev_timer);
	log_debug("hook %s[%ld]: exited: code %d signal %d after %lld ms%s",
	    hook_kind_name(h->kind), (long)h->pid, res.exit_code, res.signo,
	    (long long)res.duration_ms, res.timed_out ? " (timed out)" : "");
	if (res.timed_out && !hook_group_empty(h)) {
		h->res = res;
		h->deferred = 1;
		return;
	}
	hook_maybe_free(h);

	/* h may be gone: only the copies are used from here. */
	if (done != NULL)
		done(&res, arg);
}

static struct hook *
hook_find(struct hook_runner *hr, pid_t pid)
{
	struct hook *h;

	TAILQ_FOREACH(h, &hr->hooks, entry)
		if (h->pid == pid && (h->running || h->deferred))
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

	if ((h = hook_find(hr, pid)) == NULL || h->phase != HOOK_WAITING)
		return;
	log_debug("hook %s[%ld]: cancelled", hook_kind_name(h->kind),
	    (long)h->pid);
	(void)evtimer_del(h->ev_timer);
	if (grace_ms > 0) {
		h->kill_delay_ms = grace_ms;
		hook_timer(-1, 0, h);	/* SIGTERM now, SIGKILL after grace */
		return;
	}
	h->phase = HOOK_TERMED;
	hook_timer(-1, 0, h);		/* SIGKILL now */
}

void
hook_runner_reap(struct hook_runner *hr)
{
	struct hook *h;
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
			log_debug("reaped child %ld that is no hook",
			    (long)pid);
			continue;
		}
		hook_exited(h, status);
	}
	/* Reaping may have emptied the group of a timed-out hook. */
	TAILQ_FOREACH(h, &hr->hooks, entry)
		if (h->deferred && hook_group_empty(h)) {
			hook_finish_deferred(h);
			break;	/* the list may have changed */
		}
}
