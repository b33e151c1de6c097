/*
 * SIGUSR2's check of the new binary (reexec.c): it is run as `BINARY -t`
 * with the daemon's own arguments before the exec, beside the event loop,
 * and the exec goes ahead only if it exits 0.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/* The new binary's `-t`: killed if it has not ended by then. */
#define REEXEC_CHECK_MS	10000
/* What is kept of its output for the log. */
#define REEXEC_CHECK_OUT	512

/*
 * The new binary, run as `BINARY -t` with the daemon's own arguments
 * (-c, -o): a binary that cannot start here (a shared library missing,
 * another architecture) or a version that rejects the running
 * configuration must not replace the running daemon, which the exec
 * would end. It runs beside the event loop: its end comes through
 * SIGCHLD (reexec_reaped()), its output through a pipe read then.
 */
static char **
reexec_check_argv(struct daemon *d)
{
	char **argv;
	size_t n, i;

	for (n = 0; d->argv[n] != NULL; n++)
		;
	argv = xcalloc(n + 2, sizeof(*argv));
	argv[0] = d->rx_exe;
	argv[1] = "-t";
	for (i = 1; i < n; i++)
		argv[i + 1] = d->argv[i];
	return argv;
}

/* Its command line, for the log. */
static char *
reexec_check_line(struct daemon *d)
{
	struct textbuf b;
	size_t i;

	memset(&b, 0, sizeof(b));
	textbuf_printf(&b, "%s -t", d->rx_exe);
	for (i = 1; d->argv[i] != NULL; i++)
		textbuf_printf(&b, " %s", d->argv[i]);
	return b.p;
}

static int
reexec_check_spawn(struct daemon *d, int outfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	char **argv;
	int err;

	if ((err = spawn_init(&fa, &attr)) != 0)
		return err;
	/* The daemon ignores SIGPIPE, which exec would keep. */
	(void)sigemptyset(&none);
	(void)sigemptyset(&dfl);
	(void)sigaddset(&dfl, SIGPIPE);
	argv = reexec_check_argv(d);
	if ((err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF)) != 0 ||
	    (err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (err = posix_spawnattr_setsigdefault(&attr, &dfl)) != 0 ||
	    (err = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO,
	    "/dev/null", O_RDONLY, 0)) != 0 ||
	    (err = spawn_output(&fa, outfd)) != 0)
		goto out;
	err = posix_spawn(&d->rx_check_pid, d->rx_exe, &fa, &attr, argv,
	    environ);
out:
	free(argv);
	(void)posix_spawnattr_destroy(&attr);
	(void)posix_spawn_file_actions_destroy(&fa);
	return err;
}

/* Starts the check: 0, or -1 (logged) when it could not be. */
int
reexec_check_start(struct daemon *d)
{
	int p[2], err;

	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("received SIGUSR2: pipe; re-exec refused");
		return -1;
	}
	d->rx_check_pid = -1;
	err = reexec_check_spawn(d, p[1]);
	(void)close(p[1]);
	if (err != 0) {
		d->rx_check_pid = -1;
		(void)close(p[0]);
		log_warnx("received SIGUSR2: %s -t: %s; re-exec refused, the "
		    "running daemon goes on", d->rx_exe, strerror(err));
		return -1;
	}
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) == -1)
		log_warn("fcntl O_NONBLOCK");
	d->rx_check_fd = p[0];
	d->rx_check_from = now_ms();
	d->rx_check_done = 0;
	d->rx_check_killed = 0;
	return 0;
}

/* SIGCHLD: whether pid was the check (its status kept), 1, or not, 0. */
int
reexec_reaped(pid_t pid, int status, void *arg)
{
	struct daemon *d = arg;

	if (d->rx_check_pid == -1 || pid != d->rx_check_pid)
		return 0;
	d->rx_check_status = status;
	d->rx_check_done = 1;
	return 1;
}

void
reexec_check_clear(struct daemon *d)
{
	if (d->rx_check_fd != -1)
		(void)close(d->rx_check_fd);
	d->rx_check_fd = -1;
	d->rx_check_pid = -1;
	d->rx_check_done = 0;
}

/* What it printed, on one line, for the log ("" for nothing). */
static void
reexec_check_output(struct daemon *d, char *buf, size_t len)
{
	ssize_t n;
	size_t got = 0, i;

	while (got < len - 1 &&
	    (n = read(d->rx_check_fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		got--;
	buf[got] = '\0';
	for (i = 0; i < got; i++)
		if (buf[i] == '\n')
			buf[i] = ';';
		else if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
			buf[i] = '?';
}

/*
 * While the check runs: 0 it has not ended, or ended with 0 (the check
 * is cleared: d->rx_check_pid is -1); -1 it failed (logged).
 */
int
reexec_check_poll(struct daemon *d)
{
	char out[REEXEC_CHECK_OUT], how[64], *line;
	int st = d->rx_check_status, rc = 0;

	if (!d->rx_check_done) {
		if (!d->rx_check_killed &&
		    now_ms() - d->rx_check_from >= REEXEC_CHECK_MS) {
			d->rx_check_killed = 1;
			if (kill(d->rx_check_pid, SIGKILL) == -1 &&
			    errno != ESRCH)
				log_warn("kill %ld", (long)d->rx_check_pid);
		}
		return 0;
	}
	reexec_check_output(d, out, sizeof(out));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		log_info("re-exec: %s -t: %s", d->rx_exe, out[0] != '\0' ?
		    out : "ok");
	} else {
		if (d->rx_check_killed)
			(void)snprintf(how, sizeof(how), "did not end within "
			    "%d ms", REEXEC_CHECK_MS);
		else if (WIFEXITED(st))
			(void)snprintf(how, sizeof(how), "exited %d",
			    WEXITSTATUS(st));
		else
			(void)snprintf(how, sizeof(how), "killed by signal %d",
			    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		line = reexec_check_line(d);
		log_warnx("re-exec refused: the new binary cannot run here: "
		    "`%s` %s%s%s; the running daemon goes on", line, how,
		    out[0] != '\0' ? ": " : "", out);
		free(line);
		rc = -1;
	}
	reexec_check_clear(d);
	return rc;
}
