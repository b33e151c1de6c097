/*
 * hook.c against real children: a real event_base, a SIGCHLD event that
 * reaps, and shell commands whose effects are checked.
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "hook.h"
#include "log.h"
#include "util.h"

/* argv[1] that makes this program the hook of test_fds_closed. */
#define TEST_LIST_FDS	"--list-fds"

/*
 * The timeout of hooks that must have set a trap before it strikes: the
 * timer starts at fork, and until the shell has run its `trap` a SIGTERM
 * ends it the default way. A shell gets there in milliseconds; a second
 * leaves room for a loaded machine to schedule it.
 */
#define TEST_TRAP_TIMEOUT_MS	1000

struct fixture {
	struct event_base *base;
	struct hook_runner *hr;
	struct event *ev_chld;
	char dir[64];
	int logfd;		/* stderr copied to this file */
	int savedfd;		/* the real stderr */
	char logpath[96];
};

struct outcome {
	int calls;
	struct hook_result res;
	char *log;		/* what was logged when done ran */
	struct fixture *fx;
};

static char *
test_slurp(const char *path)
{
	char *buf;
	size_t len = 0, size = 4096;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return strdup("");
	buf = malloc(size);
	assert_non_null(buf);
	while ((n = read(fd, buf + len, size - len - 1)) > 0) {
		len += (size_t)n;
		if (size - len < 2) {
			size *= 2;
			buf = realloc(buf, size);
			assert_non_null(buf);
		}
	}
	(void)close(fd);
	buf[len] = '\0';
	return buf;
}

static void
test_sigchld(evutil_socket_t sig, short events, void *arg)
{
	(void)sig;
	(void)events;
	hook_runner_reap(arg);
}

static void
test_done(const struct hook_result *res, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->res = *res;
	if (o->fx->logfd != -1) {
		free(o->log);
		o->log = test_slurp(o->fx->logpath);
	}
}

/* Runs the loop until *flag is set or ms pass; returns *flag. */
static int
test_loop_until(struct fixture *fx, const int *flag, int ms)
{
	struct timeval tv = { 0, 20000 };
	int64_t end = now_ms() + ms;

	while (!*flag && now_ms() < end) {
		assert_int_equal(event_base_loopexit(fx->base, &tv), 0);
		assert_int_not_equal(event_base_dispatch(fx->base), -1);
	}
	return *flag;
}

static void
test_pump(struct fixture *fx, int ms)
{
	int never = 0;

	(void)test_loop_until(fx, &never, ms);
}

static int
test_setup(void **state)
{
	struct fixture *fx;

	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	fx->logfd = fx->savedfd = -1;
	(void)strcpy(fx->dir, "/tmp/test_hook.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	assert_non_null(fx->base = event_base_new());
	assert_non_null(fx->hr = hook_runner_new(fx->base));
	assert_non_null(fx->ev_chld = evsignal_new(fx->base, SIGCHLD,
	    test_sigchld, fx->hr));
	assert_int_equal(event_add(fx->ev_chld, NULL), 0);
	*state = fx;
	return 0;
}

static void
test_capture_start(struct fixture *fx)
{
	(void)snprintf(fx->logpath, sizeof(fx->logpath), "%s/log", fx->dir);
	fx->logfd = open(fx->logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
	    0600);
	assert_int_not_equal(fx->logfd, -1);
	fx->savedfd = dup(STDERR_FILENO);
	assert_int_not_equal(fx->savedfd, -1);
	assert_int_not_equal(dup2(fx->logfd, STDERR_FILENO), -1);
}

static void
test_capture_stop(struct fixture *fx)
{
	if (fx->savedfd == -1)
		return;
	assert_int_not_equal(dup2(fx->savedfd, STDERR_FILENO), -1);
	(void)close(fx->savedfd);
	(void)close(fx->logfd);
	fx->savedfd = fx->logfd = -1;
}

static int
test_teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	test_capture_stop(fx);
	hook_runner_free(fx->hr);
	event_free(fx->ev_chld);
	event_base_free(fx->base);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* Runs cmd to its end and returns how it went in o. */
static void
test_run(struct fixture *fx, struct outcome *o, const char *cmd,
    char *const env[], int64_t timeout_ms, int wait_ms)
{
	pid_t pid;

	memset(o, 0, sizeof(*o));
	o->fx = fx;
	pid = hook_run(fx->hr, HOOK_PROMOTE, cmd, env, timeout_ms, test_done,
	    o);
	assert_true(pid > 0);
	assert_int_equal(hook_runner_active(fx->hr), 1);
	assert_true(test_loop_until(fx, &o->calls, wait_ms));
	assert_int_equal(o->calls, 1);
	assert_int_equal(o->res.pid, pid);
	assert_int_equal(o->res.kind, HOOK_PROMOTE);
	assert_int_equal(hook_runner_active(fx->hr), 0);
}

static void
test_exit_zero(void **state)
{
	struct outcome o;

	test_run(*state, &o, "exit 0", NULL, 5000, 5000);
	assert_true(o.res.ok);
	assert_int_equal(o.res.exit_code, 0);
	assert_int_equal(o.res.signo, 0);
	assert_false(o.res.timed_out);
	assert_true(o.res.duration_ms >= 0 && o.res.duration_ms < 5000);
}

static void
test_exit_code(void **state)
{
	struct outcome o;

	char how[96];

	test_run(*state, &o, "true; exit 3", NULL, 5000, 5000);
	assert_false(o.res.ok);
	assert_int_equal(o.res.exit_code, 3);
	assert_int_equal(o.res.signo, 0);
	assert_false(o.res.timed_out);
	hook_describe(&o.res, how, sizeof(how));
	assert_string_equal(how, "exited 3");
}

static void
test_no_timeout(void **state)
{
	struct outcome o;

	test_run(*state, &o, "sleep 0.2", NULL, 0, 5000);
	assert_true(o.res.ok);
	assert_true(o.res.duration_ms >= 150);
}

static void
test_killed_by_signal(void **state)
{
	struct outcome o;
	char how[96], want[32];

	test_run(*state, &o, "kill -USR1 $$; sleep 5", NULL, 10000, 5000);
	assert_false(o.res.ok);
	assert_int_equal(o.res.exit_code, -1);
	assert_int_equal(o.res.signo, SIGUSR1);
	hook_describe(&o.res, how, sizeof(how));
	(void)snprintf(want, sizeof(want), "killed by signal %d", SIGUSR1);
	assert_string_equal(how, want);
}

static void
test_env(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char cmd[512], path[128], *got;
	char *env[] = {
		"ZKELECT_EVENT=demote",
		"ZKELECT_ID=node-1",
		"ZKELECT_EVENT=promote",	/* the later one wins */
		"HOME=/nonexistent/override",
		NULL,
	};

	(void)snprintf(path, sizeof(path), "%s/env", fx->dir);
	(void)snprintf(cmd, sizeof(cmd),
	    "printf '%%s|%%s|%%s|%%s' \"$ZKELECT_EVENT\" \"$ZKELECT_ID\" "
	    "\"$HOME\" \"$(env | grep -c '^HOME=')\" > '%s'; "
	    "[ -n \"$PATH\" ]", path);
	test_run(fx, &o, cmd, env, 5000, 5000);
	assert_true(o.res.ok);
	got = test_slurp(path);
	assert_string_equal(got, "promote|node-1|/nonexistent/override|1");
	free(got);
}

static void
test_output_logged(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char want[128];

	log_init("test_hook", LOG_INFO);
	test_capture_start(fx);
	test_run(fx, &o, "echo first; echo second >&2; printf 'x\\001y\\r\\n'; "
	    "printf 'partial'", NULL, 5000, 5000);
	test_capture_stop(fx);
	assert_true(o.res.ok);
	assert_non_null(o.log);
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: first\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: second\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: x?y\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	/* The unterminated last line was logged before done ran. */
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: partial\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	free(o.log);
}

static void
test_long_line_cut(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char want[1200];
	int n;

	log_init("test_hook", LOG_INFO);
	test_capture_start(fx);
	test_run(fx, &o, "head -c 100000 /dev/zero | tr '\\0' a; echo; "
	    "echo next", NULL, 5000, 5000);
	test_capture_stop(fx);
	assert_true(o.res.ok);
	n = snprintf(want, sizeof(want), "hook promote[%ld]: ",
	    (long)o.res.pid);
	memset(want + n, 'a', 1024);
	(void)strcpy(want + n + 1024, " [cut]\n");
	assert_non_null(strstr(o.log, want));
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: next\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	/* One line for the long one, one for "next". */
	(void)snprintf(want, sizeof(want), "hook promote[%ld]:",
	    (long)o.res.pid);
	assert_non_null(strstr(strstr(o.log, want) + 1, want));
	assert_null(strstr(strstr(strstr(o.log, want) + 1, want) + 1, want));
	free(o.log);
}

static void
test_output_before_done(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char want[64];

	/*
	 * Much output, still in the pipe when the shell is reaped: done
	 * must not come before the last line was logged.
	 */
	log_init("test_hook", LOG_INFO);
	test_capture_start(fx);
	test_run(fx, &o, "x=$(head -c 60000 /dev/zero | tr '\\0' a | "
	    "fold -w 100); printf '%s\\nlast-line\\n' \"$x\"", NULL, 5000,
	    5000);
	test_capture_stop(fx);
	assert_true(o.res.ok);
	(void)snprintf(want, sizeof(want), "hook promote[%ld]: last-line\n",
	    (long)o.res.pid);
	assert_non_null(strstr(o.log, want));
	free(o.log);
}

static void
test_stdin_is_devnull(void **state)
{
	struct outcome o;

	test_run(*state, &o,
	    "test \"$(readlink /proc/$$/fd/0)\" = /dev/null && "
	    "! read line", NULL, 5000, 5000);
	assert_true(o.res.ok);
}

/*
 * The descriptors a hook inherits, listed by the hook itself: the shell
 * execs this very program (see test_list_fds), so what is listed is exactly
 * what the shell was given and passed on, and nothing the shell opens for
 * its own work (a command substitution's pipe, a redirection's saved
 * descriptor) can come and go while the list is taken.
 */
static void
test_fds_closed(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char cmd[PATH_MAX + 256], self[PATH_MAX], path[128], *got;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0 && (size_t)n < sizeof(self) - 1);
	self[n] = '\0';
	assert_null(strchr(self, '\''));
	(void)snprintf(path, sizeof(path), "%s/leak", fx->dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);	/* no O_CLOEXEC */
	assert_int_not_equal(fd, -1);
	(void)snprintf(path, sizeof(path), "%s/fds", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "exec '%s' " TEST_LIST_FDS " '%s'",
	    self, path);
	test_run(fx, &o, cmd, NULL, 5000, 5000);
	assert_true(o.res.ok);
	(void)close(fd);
	/* stdin, the output pipe twice, and nothing else. */
	got = test_slurp(path);
	assert_string_equal(got, "0 1 2\n");
	free(got);
}

static void
test_signals_reset(void **state)
{
	struct outcome o;
	struct sigaction sa, old;
	sigset_t set, oldset;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	assert_int_equal(sigemptyset(&set), 0);
	assert_int_equal(sigaddset(&set, SIGHUP), 0);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &oldset), 0);

	/* Nothing blocked in the child (exec: sh blocks some itself)... */
	test_run(*state, &o,
	    "exec grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status",
	    NULL, 5000, 5000);
	assert_true(o.res.ok);
	/* Nothing ignored either, glibc's internal signals included... */
	test_run(*state, &o,
	    "exec grep -q '^SigIgn:[[:space:]]*0*$' /proc/self/status",
	    NULL, 5000, 5000);
	assert_true(o.res.ok);
	/* ...and nothing the daemon ignores stays ignored. */
	test_run(*state, &o, "kill -USR2 $$; sleep 5", NULL, 10000, 5000);
	assert_int_equal(o.res.signo, SIGUSR2);

	assert_int_equal(sigprocmask(SIG_SETMASK, &oldset, NULL), 0);
	assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
}

static int
test_group_gone(pid_t pgid)
{
	return kill(-pgid, 0) == -1 && errno == ESRCH;
}

static void
test_timeout_terminates_group(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char how[96];
	int gone = 0;
	int64_t end;

	test_run(fx, &o, "sleep 100 & sleep 100; wait", NULL, 300, 5000);
	assert_true(o.res.timed_out);
	assert_false(o.res.ok);
	assert_int_equal(o.res.signo, SIGTERM);
	assert_true(o.res.duration_ms >= 290 && o.res.duration_ms < 3000);
	/* The timeout it was given, then when it ended. */
	assert_int_equal(o.res.timeout_ms, 300);
	assert_false(o.res.killed);
	hook_describe(&o.res, how, sizeof(how));
	assert_true(strncmp(how, "timed out after 300 ms (ended at ", 33) ==
	    0);

	/* The background sleep went with SIGTERM too (reaped by us). */
	end = now_ms() + 3000;
	while (!(gone = test_group_gone(o.res.pid)) && now_ms() < end)
		test_pump(fx, 20);
	assert_true(gone);
}

static void
test_timeout_kills_survivors(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	int64_t t0;

	/*
	 * The background sleep ignores SIGTERM; the shell itself dies of it
	 * at once. The SIGKILL 5 s later must reach the orphan, which does
	 * not even hold the output pipe open, and the hook is reported done
	 * only once its whole group is gone: what it forked never overlaps
	 * the next hook.
	 */
	t0 = now_ms();
	test_run(fx, &o, "trap '' TERM; sleep 100 >/dev/null 2>&1 & "
	    "trap - TERM; sleep 100; wait", NULL, TEST_TRAP_TIMEOUT_MS,
	    TEST_TRAP_TIMEOUT_MS + 10000);
	assert_true(o.res.timed_out);
	assert_false(o.res.ok);
	assert_int_equal(o.res.signo, SIGTERM);
	assert_true(test_group_gone(o.res.pid));
	assert_true(now_ms() - t0 >= 5000);
	assert_true(o.res.duration_ms >= 5000);
}

static void
test_timeout_ignored_term(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;

	/* The shell itself ignores SIGTERM: only SIGKILL ends it. */
	test_run(fx, &o, "trap '' TERM; sleep 100", NULL, TEST_TRAP_TIMEOUT_MS,
	    TEST_TRAP_TIMEOUT_MS + 10000);
	assert_true(o.res.timed_out);
	assert_int_equal(o.res.signo, SIGKILL);
	assert_true(o.res.duration_ms >= 5000);
	assert_true(test_group_gone(o.res.pid));
}

static void
test_timeout_but_exit_zero(void **state)
{
	struct outcome o;

	/* A hook that exits 0 on SIGTERM still failed: it timed out. */
	test_run(*state, &o, "trap 'exit 0' TERM; while :; do sleep 0.05; "
	    "done", NULL, TEST_TRAP_TIMEOUT_MS, TEST_TRAP_TIMEOUT_MS + 5000);
	assert_true(o.res.timed_out);
	assert_false(o.res.ok);
	assert_int_equal(o.res.exit_code, 0);
}

/* A hook ended to free the slot: SIGKILL at once to its whole group. */
static void
test_cancel_kills_group_now(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	pid_t pid;
	int64_t t0;

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, HOOK_CHECK, "trap '' TERM; sleep 100 & "
	    "sleep 100; wait", NULL, 60000, test_done, &o);
	assert_true(pid > 0);
	test_pump(fx, 100);
	t0 = now_ms();
	hook_cancel(fx->hr, pid, 0);
	assert_true(test_loop_until(fx, &o.calls, 5000));
	assert_false(o.res.ok);
	assert_int_equal(o.res.signo, SIGKILL);
	assert_true(test_group_gone(pid));
	/* Its 60 s timeout is not what ended it. */
	assert_int_equal(o.res.timeout_ms, 0);
	assert_true(o.res.killed);
	/* Nothing waited for a SIGTERM to work. */
	assert_true(now_ms() - t0 < 4000);
}

/* Waits until the hook has created path (its trap is set). */
static void
test_wait_file(struct fixture *fx, const char *path)
{
	int64_t end = now_ms() + 10000;

	while (access(path, F_OK) == -1 && now_ms() < end)
		test_pump(fx, 10);
	assert_int_equal(access(path, F_OK), 0);
}

/* With a grace: SIGTERM first, and a hook that obeys it ends by itself. */
static void
test_cancel_with_grace_terms_first(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char cmd[256], ready[96];
	pid_t pid;

	/*
	 * The background job says it is ready itself: a SIGTERM that fell
	 * between its fork and the reset of the shell's trap in it would be
	 * swallowed (dash), and its sleep would then keep the group alive.
	 */
	(void)snprintf(ready, sizeof(ready), "%s/ready", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "trap 'exit 7' TERM; "
	    "( : >%s; exec sleep 100 ) & wait", ready);
	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, HOOK_CHECK, cmd, NULL, 60000, test_done, &o);
	assert_true(pid > 0);
	test_wait_file(fx, ready);
	hook_cancel(fx->hr, pid, 60000);
	assert_true(test_loop_until(fx, &o.calls, 5000));
	assert_false(o.res.ok);
	assert_int_equal(o.res.exit_code, 7);
	assert_true(test_group_gone(pid));
}

/*
 * A hook that ignores the SIGTERM it was sent, cancelled again with a
 * shorter grace (a check that timed out, then the slot wanted for a
 * promote): the SIGKILL comes after that grace, not at the later moment
 * set before; a longer grace after it does not put the SIGKILL back.
 */
static void
test_cancel_again_brings_the_kill_forward(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char cmd[256], ready[96];
	pid_t pid;

	(void)snprintf(ready, sizeof(ready), "%s/ready", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "trap '' TERM; : >%s; sleep 100",
	    ready);
	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, HOOK_CHECK, cmd, NULL, 60000, test_done, &o);
	assert_true(pid > 0);
	test_wait_file(fx, ready);
	hook_cancel(fx->hr, pid, 120000);	/* SIGTERM now, SIGKILL in 2 min */
	test_pump(fx, 50);
	assert_int_equal(o.calls, 0);
	hook_cancel(fx->hr, pid, 100);
	hook_cancel(fx->hr, pid, 120000);
	/* Far below the 2 minutes either grace of 120 s would take. */
	assert_true(test_loop_until(fx, &o.calls, 60000));
	assert_false(o.res.ok);
	assert_int_equal(o.res.signo, SIGKILL);
	assert_true(o.res.killed);
	assert_true(test_group_gone(pid));
}

/* The demote's budget: SIGKILL follows SIGTERM after the delay set. */
static void
test_kill_delay_shortened(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char how[96], want[64];
	pid_t pid;
	int64_t t0;

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	t0 = now_ms();
	pid = hook_run(fx->hr, HOOK_DEMOTE, "trap '' TERM; sleep 100", NULL,
	    TEST_TRAP_TIMEOUT_MS, test_done, &o);
	assert_true(pid > 0);
	hook_set_kill_delay(fx->hr, pid, 100);
	assert_true(test_loop_until(fx, &o.calls, 10000));
	assert_true(o.res.timed_out);
	assert_true(test_group_gone(pid));
	/* Said as the timeout, and apart from it the SIGKILL's moment. */
	assert_true(o.res.killed);
	assert_int_equal(o.res.timeout_ms, TEST_TRAP_TIMEOUT_MS);
	/*
	 * Past the timeout by the kill delay, less what libevent's coarse
	 * monotonic clock (a tick of a few ms) may fire its timers early.
	 */
	assert_true(o.res.duration_ms >= TEST_TRAP_TIMEOUT_MS + 100 - 40);
	hook_describe(&o.res, how, sizeof(how));
	(void)snprintf(want, sizeof(want), "timed out after %d ms (killed at "
	    "%lld ms)", TEST_TRAP_TIMEOUT_MS, (long long)o.res.duration_ms);
	assert_string_equal(how, want);
	/* Far below the default 5 s from SIGTERM to SIGKILL. */
	assert_true(now_ms() - t0 >= TEST_TRAP_TIMEOUT_MS);
	assert_true(now_ms() - t0 < TEST_TRAP_TIMEOUT_MS + 4000);
}

static void
test_free_kills_running(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	int status;
	pid_t pid;

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, HOOK_CHECK, "sleep 100", NULL, 60000, test_done,
	    &o);
	assert_true(pid > 0);
	test_pump(fx, 100);
	/* No reaping behind our back from here on. */
	assert_int_equal(event_del(fx->ev_chld), 0);
	hook_runner_free(fx->hr);
	fx->hr = hook_runner_new(fx->base);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(o.calls, 0);
}

/*
 * Waits for ready, and for ready.sh, which the shell writes once its own
 * SIGTERM is back to the default (its background jobs keep ignoring it).
 */
static void
test_wait_ready(struct fixture *fx, const char *ready)
{
	char path[128];

	test_wait_file(fx, ready);
	(void)snprintf(path, sizeof(path), "%s.sh", ready);
	test_wait_file(fx, path);
}

/* Runs the loop until the shell pid was reaped (by the runner). */
static void
test_wait_reaped(struct fixture *fx, pid_t pid)
{
	int64_t end = now_ms() + 10000;

	while (kill(pid, 0) == 0 && now_ms() < end)
		test_pump(fx, 10);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

struct group_outcome {
	struct outcome o;
	char gone[96];		/* the grandchild's last act */
	int gone_first;		/* gone existed when done ran */
};

static void
test_group_done(const struct hook_result *res, void *arg)
{
	struct group_outcome *g = arg;

	g->gone_first = access(g->gone, F_OK) == 0;
	test_done(res, &g->o);
}

/*
 * A timed-out hook is over once its whole group is gone, seen without a
 * timer: the shell dies of SIGTERM, its child (now re-parented to us)
 * waits for a grandchild whose parent is thus still alive; both ignore
 * SIGTERM and end when told to. done must come after the grandchild's
 * end, and long before the SIGKILL due a minute later.
 */
static void
test_orphaned_grandchild_ends_group(void **state)
{
	struct fixture *fx = *state;
	struct group_outcome g;
	char cmd[1024], ready[96], go[96];
	int64_t t_go;
	pid_t pid;
	int fd;

	memset(&g, 0, sizeof(g));
	g.o.fx = fx;
	(void)snprintf(ready, sizeof(ready), "%s/ready", fx->dir);
	(void)snprintf(go, sizeof(go), "%s/go", fx->dir);
	(void)snprintf(g.gone, sizeof(g.gone), "%s/gone", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "trap '' TERM; "
	    "( ( : >%s; while [ ! -e %s ]; do sleep 0.01; done; : >%s ) & "
	    "wait ) & trap - TERM; : >%s.sh; exec sleep 100", ready, go, g.gone,
	    ready);
	pid = hook_run(fx->hr, HOOK_PROMOTE, cmd, NULL, 60000, test_group_done,
	    &g);
	assert_true(pid > 0);
	test_wait_ready(fx, ready);
	hook_cancel(fx->hr, pid, 60000);	/* SIGTERM now, SIGKILL in 60 s */
	test_wait_reaped(fx, pid);

	/* The shell is gone, its group is not: no done yet. */
	test_pump(fx, 200);
	assert_int_equal(g.o.calls, 0);
	assert_false(test_group_gone(pid));
	assert_int_equal(hook_runner_active(fx->hr), 1);

	t_go = now_ms();
	assert_int_not_equal(fd = open(go, O_WRONLY | O_CREAT, 0600), -1);
	(void)close(fd);
	assert_true(test_loop_until(fx, &g.o.calls, 20000));
	/* Far below the minute a SIGKILL (or a lost SIGCHLD) would take. */
	assert_true(now_ms() - t_go < 20000);
	assert_int_equal(g.o.calls, 1);
	assert_true(g.gone_first);
	assert_true(test_group_gone(pid));
	assert_true(g.o.res.timed_out);
	assert_false(g.o.res.ok);
	assert_int_equal(g.o.res.signo, SIGTERM);
	assert_int_equal(hook_runner_active(fx->hr), 0);
}

/*
 * Two timed-out hooks whose groups end at the same moment: both are
 * reported, however the deaths fall into the runner's reaping.
 */
static void
test_two_groups_end_together(void **state)
{
	struct fixture *fx = *state;
	struct outcome a, b;
	char cmd[1024], go[96], ready_a[96], ready_b[96];
	pid_t pa, pb;
	int fd;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.fx = b.fx = fx;
	(void)snprintf(go, sizeof(go), "%s/go", fx->dir);
	(void)snprintf(ready_a, sizeof(ready_a), "%s/ready-a", fx->dir);
	(void)snprintf(ready_b, sizeof(ready_b), "%s/ready-b", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "trap '' TERM; "
	    "( : >%s; while [ ! -e %s ]; do sleep 0.01; done ) & "
	    "trap - TERM; : >%s.sh; exec sleep 100", ready_a, go, ready_a);
	pa = hook_run(fx->hr, HOOK_FENCE, cmd, NULL, 60000, test_done, &a);
	(void)snprintf(cmd, sizeof(cmd), "trap '' TERM; "
	    "( : >%s; while [ ! -e %s ]; do sleep 0.01; done ) & "
	    "trap - TERM; : >%s.sh; exec sleep 100", ready_b, go, ready_b);
	pb = hook_run(fx->hr, HOOK_CHECK, cmd, NULL, 60000, test_done, &b);
	assert_true(pa > 0 && pb > 0);
	/* Each background job runs: its TERM is ignored from here on. */
	test_wait_ready(fx, ready_a);
	test_wait_ready(fx, ready_b);
	hook_cancel(fx->hr, pa, 60000);
	hook_cancel(fx->hr, pb, 60000);
	test_wait_reaped(fx, pa);
	test_wait_reaped(fx, pb);
	assert_int_equal(a.calls + b.calls, 0);

	assert_int_not_equal(fd = open(go, O_WRONLY | O_CREAT, 0600), -1);
	(void)close(fd);
	assert_true(test_loop_until(fx, &a.calls, 20000));
	assert_true(test_loop_until(fx, &b.calls, 20000));
	assert_true(a.res.timed_out && b.res.timed_out);
	assert_true(test_group_gone(pa) && test_group_gone(pb));
	assert_int_equal(hook_runner_active(fx->hr), 0);
}

/*
 * What left the group with setsid has escaped the hook: it neither delays
 * a timed-out hook's end nor gets its signals.
 */
static void
test_setsid_escapes(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char cmd[1024], path[96], *got;
	pid_t pid, escaped;

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	(void)snprintf(path, sizeof(path), "%s/escaped", fx->dir);
	(void)snprintf(cmd, sizeof(cmd), "trap '' TERM; "
	    "setsid sh -c 'echo $$ >%s.tmp; mv %s.tmp %s; exec sleep 100' "
	    "</dev/null >/dev/null 2>&1 & trap - TERM; : >%s.sh; "
	    "exec sleep 100", path, path, path, path);
	pid = hook_run(fx->hr, HOOK_DEMOTE, cmd, NULL, 60000, test_done, &o);
	assert_true(pid > 0);
	test_wait_ready(fx, path);
	got = test_slurp(path);
	escaped = (pid_t)atol(got);
	free(got);
	assert_true(escaped > 0 && escaped != pid);
	hook_cancel(fx->hr, pid, 60000);
	assert_true(test_loop_until(fx, &o.calls, 20000));
	assert_true(o.res.timed_out);
	assert_int_equal(o.res.signo, SIGTERM);
	/* Still alive, in a session of its own. */
	assert_int_equal(kill(escaped, 0), 0);
	assert_int_equal(getsid(escaped), escaped);
	assert_int_equal(kill(escaped, SIGKILL), 0);
}

/*
 * A hook whose shell exits in time is over then: a background job it left
 * in its group goes on (as it always did) and does not hold the slot.
 */
static void
test_background_job_outlives_hook(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;

	test_run(fx, &o, "sleep 100 >/dev/null 2>&1 & exit 0", NULL, 60000,
	    20000);
	assert_true(o.res.ok);
	assert_false(o.res.timed_out);
	assert_false(test_group_gone(o.res.pid));
	assert_int_equal(kill(-o.res.pid, SIGKILL), 0);
}

/*
 * Starts a hook of kind that exits at once and leaves a background job
 * holding its output, which prints "late-tag" once dir/go exists. Returns
 * its pid, the group to kill.
 */
static pid_t
test_leave_job(struct fixture *fx, enum hook_kind kind, const char *tag)
{
	struct outcome o;
	char cmd[256];
	pid_t pid;

	(void)snprintf(cmd, sizeof(cmd), "(while [ ! -e %s/go ]; do "
	    "sleep 0.05; done; echo late-%s) & exit 0", fx->dir, tag);
	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, kind, cmd, NULL, 60000, test_done, &o);
	assert_true(pid > 0);
	assert_true(test_loop_until(fx, &o.calls, 10000));
	assert_true(o.res.ok);
	return pid;
}

static void
test_go(struct fixture *fx)
{
	char path[96];
	int fd;

	(void)snprintf(path, sizeof(path), "%s/go", fx->dir);
	assert_int_not_equal(fd = open(path, O_WRONLY | O_CREAT, 0600), -1);
	(void)close(fd);
}

/* Pumps until the log holds what, or 10 s pass. */
static int
test_wait_logged(struct fixture *fx, const char *what)
{
	int64_t end = now_ms() + 10000;
	char *log;
	int found;

	for (;;) {
		log = test_slurp(fx->logpath);
		found = strstr(log, what) != NULL;
		free(log);
		if (found || now_ms() >= end)
			return found;
		test_pump(fx, 20);
	}
}

/*
 * What ended hooks left running is read for the last two of each kind
 * only: an older one's pipe is closed, with a warning, and its job dies
 * of SIGPIPE at its next write; another kind's stays read.
 */
static void
test_leftovers_bounded(void **state)
{
	struct fixture *fx = *state;
	pid_t pids[6];
	char tag[8], *log;
	int i;

	test_capture_start(fx);
	pids[0] = test_leave_job(fx, HOOK_NOTIFY, "notify");
	for (i = 1; i < 6; i++) {
		(void)snprintf(tag, sizeof(tag), "%d", i);
		pids[i] = test_leave_job(fx, HOOK_CHECK, tag);
		assert_int_equal(hook_runner_leftovers(fx->hr),
		    1 + (i < HOOK_LEFTOVERS_PER_KIND ? i :
		    HOOK_LEFTOVERS_PER_KIND));
	}
	test_go(fx);
	assert_true(test_wait_logged(fx, "late-notify"));
	assert_true(test_wait_logged(fx, "late-4"));
	assert_true(test_wait_logged(fx, "late-5"));
	/* Each job ends after its line, or of SIGPIPE: nothing is left. */
	for (i = 0; i < 100 && hook_runner_leftovers(fx->hr) > 0; i++)
		test_pump(fx, 50);
	assert_int_equal(hook_runner_leftovers(fx->hr), 0);
	log = test_slurp(fx->logpath);
	test_capture_stop(fx);
	assert_null(strstr(log, "late-1"));
	assert_null(strstr(log, "late-2"));
	assert_null(strstr(log, "late-3"));
	assert_non_null(strstr(log, "no longer logging the output of what "
	    "it left running"));
	assert_non_null(strstr(log, "only the last 2 ended check hooks' "
	    "output is read"));
	free(log);
	for (i = 0; i < 6; i++)
		(void)kill(-pids[i], SIGKILL);
}

/*
 * Out of descriptors, a hook still starts when ended hooks' leftovers
 * hold some: their pipes are closed to make room.
 */
static void
test_leftovers_give_room(void **state)
{
	struct fixture *fx = *state;
	struct rlimit saved, rl;
	struct outcome o;
	pid_t pids[2], pid;
	int filled[1024], nfilled = 0, top = -1, fd, nullfd;
	DIR *dir;
	struct dirent *de;

	test_capture_start(fx);
	pids[0] = test_leave_job(fx, HOOK_PROMOTE, "a");
	pids[1] = test_leave_job(fx, HOOK_PROMOTE, "b");
	assert_int_equal(hook_runner_leftovers(fx->hr), 2);

	/* Every descriptor below the limit taken but one: a hook needs 3. */
	assert_non_null(dir = opendir("/proc/self/fd"));
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.' && atoi(de->d_name) > top &&
		    atoi(de->d_name) != dirfd(dir))
			top = atoi(de->d_name);
	(void)closedir(dir);
	assert_int_not_equal(nullfd = open("/dev/null", O_RDONLY), -1);
	for (fd = 3; fd < top; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
			assert_true(nfilled < 1024);
			assert_int_not_equal(dup2(nullfd, fd), -1);
			filled[nfilled++] = fd;
		}
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = (rlim_t)top + 2;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	pid = hook_run(fx->hr, HOOK_DEMOTE, "exit 0", NULL, 60000, test_done,
	    &o);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	while (nfilled > 0)
		(void)close(filled[--nfilled]);
	(void)close(nullfd);
	assert_true(pid > 0);
	assert_int_equal(hook_runner_leftovers(fx->hr), 0);
	assert_true(test_loop_until(fx, &o.calls, 10000));
	assert_true(o.res.ok);
	assert_true(test_wait_logged(fx, "the daemon is out of descriptors"));
	test_capture_stop(fx);
	(void)kill(-pids[0], SIGKILL);
	(void)kill(-pids[1], SIGKILL);
}

/* A command the shell cannot run fails the hook (127), nothing more. */
static void
test_command_not_found(void **state)
{
	struct outcome o;

	test_run(*state, &o, "exec /nonexistent/zkelectd-test-hook", NULL,
	    5000, 5000);
	assert_false(o.res.ok);
	assert_int_equal(o.res.exit_code, 127);
}

/*
 * A hook started at the end of a slow callback: its timeout counts from
 * its start, not from when the loop woke up (libevent's cached time).
 * The step (1.5 s) outlasts the timeout (1 s), which outlasts the hook
 * (50 ms) by far: counted from the cached time the timeout would be over
 * at the spawn. (A 300 ms step and a 200 ms timeout timed the hook out on
 * a machine loaded by two suites: its start took that long.)
 */
static void
test_late_start_keeps_its_timeout_cb(evutil_socket_t fd, short events,
    void *arg)
{
	struct outcome *o = arg;
	struct timespec slow = { 1, 500 * 1000 * 1000 };

	(void)fd;
	(void)events;
	(void)nanosleep(&slow, NULL);	/* a long step before the spawn */
	o->res.pid = hook_run(o->fx->hr, HOOK_CHECK, "sleep 0.05", NULL, 1000,
	    test_done, o);
	assert_true(o->res.pid > 0);
}

static void
test_late_start_keeps_its_timeout(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	struct timeval now = { 0, 0 };

	memset(&o, 0, sizeof(o));
	o.fx = fx;
	assert_int_equal(event_base_once(fx->base, -1, EV_TIMEOUT,
	    test_late_start_keeps_its_timeout_cb, &o, &now), 0);
	assert_true(test_loop_until(fx, &o.calls, 5000));
	assert_false(o.res.timed_out);
	assert_true(o.res.ok);
}

/* Which words hook_words() takes as a program to exec, and which not. */
static void
test_words(void **state)
{
	static const struct {
		const char *cmd;
		int n;
		const char *first, *last;
	} cases[] = {
		{ "/usr/local/bin/hook.sh promote", 2, "/usr/local/bin/hook.sh",
		    "promote" },
		{ "  ./hook\t a=b  -x,y:z+1@2%3  ", 3, "./hook", "-x,y:z+1@2%3" },
		{ "/bin/true", 1, "/bin/true", "/bin/true" },
		{ "hook.sh promote", 0, NULL, NULL },	/* PATH's */
		{ "exit 3", 0, NULL, NULL },		/* a builtin */
		{ "A=/x /bin/env", 0, NULL, NULL },	/* an assignment */
		{ "/bin/echo $HOME", 0, NULL, NULL },
		{ "/bin/echo 'a b'", 0, NULL, NULL },
		{ "/bin/echo \"a\"", 0, NULL, NULL },
		{ "/bin/echo a\\ b", 0, NULL, NULL },
		{ "/bin/echo a; /bin/true", 0, NULL, NULL },
		{ "/bin/echo a | /bin/cat", 0, NULL, NULL },
		{ "/bin/echo a > /tmp/x", 0, NULL, NULL },
		{ "/bin/echo a &", 0, NULL, NULL },
		{ "/bin/ls *", 0, NULL, NULL },
		{ "/bin/ls ~", 0, NULL, NULL },
		{ "/bin/ls #x", 0, NULL, NULL },
		{ "/bin/ls {a,b}", 0, NULL, NULL },
		{ "/bin/ls [ab]", 0, NULL, NULL },
		{ "/bin/ls a\nb", 0, NULL, NULL },
		{ "/bin/ls `x`", 0, NULL, NULL },
		{ "/bin/ls ! x", 0, NULL, NULL },
		{ "/bin/ls (x)", 0, NULL, NULL },
		{ "", 0, NULL, NULL },
		{ "   ", 0, NULL, NULL },
	};
	char buf[256], *argv[8];
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = hook_words(cases[i].cmd, buf, sizeof(buf), argv, 8);
		if (n != cases[i].n)
			fail_msg("\"%s\": %d words, %d expected", cases[i].cmd,
			    n, cases[i].n);
		if (n == 0)
			continue;
		assert_string_equal(argv[0], cases[i].first);
		assert_string_equal(argv[n - 1], cases[i].last);
		assert_null(argv[n]);
	}
	/* Too many words, too long: the shell's. */
	assert_int_equal(hook_words("/bin/true a b c d e f g", buf,
	    sizeof(buf), argv, 8), 0);
	assert_int_equal(hook_words("/bin/true a b c d e f", buf,
	    sizeof(buf), argv, 8), 7);
	assert_int_equal(hook_words("/bin/true abcdef", buf, 16, argv, 8),
	    0);
}

/* Writes an executable script dir/name with the body given. */
static void
test_script(struct fixture *fx, const char *name, const char *body,
    char *path, size_t pathsz)
{
	FILE *f;

	(void)snprintf(path, pathsz, "%s/%s", fx->dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_true(fputs(body, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

/*
 * A plain command line runs without a shell between: the hook's parent
 * is the runner, its words come as written, PWD is set as dash would set
 * it. With shell syntax the shell runs it, as before.
 */
static void
test_plain_command_without_shell(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char script[256], out[256], cmd[600], want[300], *got;
	char body[600];

	(void)snprintf(out, sizeof(out), "%s/out", fx->dir);
	(void)snprintf(body, sizeof(body),
	    "#!/bin/sh\nprintf '%%s|%%s|%%s|%%s\\n' \"$(cat /proc/$PPID/comm)\" "
	    "\"$1\" \"$2\" \"$(env | grep -c '^PWD=')\" >> '%s'\nexit 4\n", out);
	test_script(fx, "hook", body, script, sizeof(script));

	(void)snprintf(cmd, sizeof(cmd), "%s promote a=b,c", script);
	test_run(fx, &o, cmd, NULL, 5000, 5000);
	assert_int_equal(o.res.exit_code, 4);
	(void)snprintf(cmd, sizeof(cmd), "%s 'promote' \"x y\"", script);
	test_run(fx, &o, cmd, NULL, 5000, 5000);
	assert_int_equal(o.res.exit_code, 4);
	got = test_slurp(out);
	(void)snprintf(want, sizeof(want),
	    "test_hook|promote|a=b,c|1\nsh|promote|x y|1\n");
	assert_string_equal(got, want);
	free(got);
}

/* PWD as the shell sets it, with a stale one given and with none. */
static void
test_plain_command_pwd_as_the_shell(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char script[256], out[256], cmd[600], body[600], cwd[PATH_MAX];
	char want[4 * PATH_MAX + 8], *got;
	char *stale[] = { "PWD=/nonexistent/stale", NULL };
	char *root[] = { "PWD=/", NULL };

	(void)snprintf(out, sizeof(out), "%s/pwd.out", fx->dir);
	(void)snprintf(body, sizeof(body),
	    "#!/bin/sh\nprintf '%%s\\n' \"$PWD\" >> '%s'\n", out);
	test_script(fx, "pwd", body, script, sizeof(script));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	/* Plain, then through the shell (the quotes), each way twice. */
	(void)snprintf(cmd, sizeof(cmd), "%s", script);
	test_run(fx, &o, cmd, stale, 5000, 5000);
	test_run(fx, &o, cmd, root, 5000, 5000);
	(void)snprintf(cmd, sizeof(cmd), "'%s'", script);
	test_run(fx, &o, cmd, stale, 5000, 5000);
	test_run(fx, &o, cmd, root, 5000, 5000);
	got = test_slurp(out);
	/* "/" is the directory only if it is the one we are in. */
	(void)snprintf(want, sizeof(want), "%s\n%s\n%s\n%s\n", cwd, cwd,
	    cwd, cwd);
	assert_string_equal(got, want);
	free(got);
}

/*
 * What the kernel will not exec directly goes to the shell, which does
 * what it always did: a script without #! runs as a shell script, a
 * missing program fails with 127, one without the execute bit with 126.
 */
static void
test_plain_command_falls_back_to_shell(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	char script[256], cmd[600];

	test_script(fx, "noshebang", "exit 5\n", script, sizeof(script));
	(void)snprintf(cmd, sizeof(cmd), "%s arg", script);
	test_run(fx, &o, cmd, NULL, 5000, 5000);
	assert_int_equal(o.res.exit_code, 5);

	test_run(fx, &o, "/nonexistent/zkelectd-test-hook arg", NULL, 5000,
	    5000);
	assert_int_equal(o.res.exit_code, 127);

	test_script(fx, "noexec", "#!/bin/sh\nexit 0\n", script,
	    sizeof(script));
	assert_int_equal(chmod(script, 0644), 0);
	test_run(fx, &o, script, NULL, 5000, 5000);
	assert_int_equal(o.res.exit_code, 126);
}

static void
test_unknown_child(void **state)
{
	struct fixture *fx = *state;
	struct outcome o;
	siginfo_t si;
	pid_t pid;

	pid = fork();
	assert_int_not_equal(pid, -1);
	if (pid == 0)
		_exit(0);
	/*
	 * A zombie before the hook starts (WNOWAIT leaves it unreaped), so
	 * that the reaping for the hook surely meets it, however the two
	 * children happen to be scheduled.
	 */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(si.si_pid, pid);
	/* The stranger is reaped and ignored; the hook is still reported. */
	test_run(fx, &o, "sleep 0.1; exit 7", NULL, 5000, 5000);
	assert_int_equal(o.res.exit_code, 7);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void
test_two_at_once(void **state)
{
	struct fixture *fx = *state;
	struct outcome a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.fx = b.fx = fx;
	assert_true(hook_run(fx->hr, HOOK_FENCE, "sleep 0.2; exit 1", NULL,
	    5000, test_done, &a) > 0);
	assert_true(hook_run(fx->hr, HOOK_CHECK, "exit 2", NULL, 5000,
	    test_done, &b) > 0);
	assert_int_equal(hook_runner_active(fx->hr), 2);
	/* Either may end first: how the two are scheduled is not ours. */
	assert_true(test_loop_until(fx, &a.calls, 5000));
	assert_true(test_loop_until(fx, &b.calls, 5000));
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(a.res.kind, HOOK_FENCE);
	assert_int_equal(a.res.exit_code, 1);
	assert_int_equal(b.res.kind, HOOK_CHECK);
	assert_int_equal(b.res.exit_code, 2);
	assert_int_equal(hook_runner_active(fx->hr), 0);
}

static void
test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(hook_kind_name(HOOK_PROMOTE), "promote");
	assert_string_equal(hook_kind_name(HOOK_DEMOTE), "demote");
	assert_string_equal(hook_kind_name(HOOK_FENCE), "fence");
	assert_string_equal(hook_kind_name(HOOK_CHECK), "check");
}

/*
 * The hook side of test_fds_closed: writes the numbers of the descriptors
 * this process was started with to path, one line, each number > 2 with
 * what it points to. Only the directory stream used for the listing is
 * left out.
 */
static int
test_list_fds(const char *path)
{
	char line[4096], link[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	size_t len = 0;
	ssize_t n;
	DIR *d;
	int fds[256], nfds = 0, i, j, fd, out, ret = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return 1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		if (nfds == (int)(sizeof(fds) / sizeof(fds[0]))) {
			ret = 1;
			break;
		}
		fds[nfds++] = fd;
	}
	(void)closedir(d);
	for (i = 1; i < nfds; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			fd = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = fd;
		}
	for (i = 0; i < nfds && len < sizeof(line); i++) {
		if (fds[i] <= STDERR_FILENO) {
			len += (size_t)snprintf(line + len, sizeof(line) - len,
			    "%s%d", i ? " " : "", fds[i]);
			continue;
		}
		(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fds[i]);
		if ((n = readlink(link, target, sizeof(target) - 1)) == -1)
			n = 0;
		target[n] = '\0';
		len += (size_t)snprintf(line + len, sizeof(line) - len,
		    "%s%d:%s", i ? " " : "", fds[i], target);
	}
	if (len >= sizeof(line) - 1)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	if ((out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return 1;
	if (write(out, line, len) != (ssize_t)len)
		ret = 1;
	if (close(out) == -1)
		ret = 1;
	return ret;
}

int
main(int argc, char *argv[])
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)
		T(test_exit_zero),
		T(test_exit_code),
		T(test_no_timeout),
		T(test_killed_by_signal),
		T(test_env),
		T(test_output_logged),
		T(test_long_line_cut),
		T(test_output_before_done),
		T(test_stdin_is_devnull),
		T(test_fds_closed),
		T(test_signals_reset),
		T(test_timeout_terminates_group),
		T(test_timeout_kills_survivors),
		T(test_timeout_ignored_term),
		T(test_timeout_but_exit_zero),
		T(test_cancel_kills_group_now),
		T(test_cancel_with_grace_terms_first),
		T(test_cancel_again_brings_the_kill_forward),
		T(test_kill_delay_shortened),
		T(test_free_kills_running),
		T(test_orphaned_grandchild_ends_group),
		T(test_two_groups_end_together),
		T(test_setsid_escapes),
		T(test_background_job_outlives_hook),
		T(test_leftovers_bounded),
		T(test_leftovers_give_room),
		T(test_command_not_found),
		T(test_words),
		T(test_late_start_keeps_its_timeout),
		T(test_plain_command_without_shell),
		T(test_plain_command_falls_back_to_shell),
		T(test_plain_command_pwd_as_the_shell),
		T(test_unknown_child),
		T(test_two_at_once),
		T(test_kind_names),
#undef T
	};

	if (argc == 3 && strcmp(argv[1], TEST_LIST_FDS) == 0)
		return test_list_fds(argv[2]);
	if (argc != 1) {
		(void)fprintf(stderr, "usage: %s\n", argv[0]);
		return 2;
	}

	/* Orphaned hook children come to us, as they would to init. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		perror("prctl");
		return 1;
	}
	(void)signal(SIGPIPE, SIG_IGN);
	log_init("test_hook", LOG_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
