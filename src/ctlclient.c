/*
 * zkelectctl's side of the control socket: one connection, one command
 * line, and the answer read until the daemon closes, all within one
 * deadline so that a stuck daemon never hangs a shell script. A command
 * that takes as long as the election needs (switchover, resign, pause)
 * moves its deadline on while the daemon answers ping; watch and wait
 * follow the daemon across a re-exec, which closes their stream.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctlclient.h"
#include "proto.h"
#include "util.h"
#include "xmalloc.h"

#define CTLCLIENT_ANSWER_MAX	(64 * 1024 * 1024)
/* watch and wait: a stream closed before a line, tried again this often. */
#define CTLCLIENT_RETRY_MS	100
#define CTLCLIENT_QUIET_MAX	50

void
ctlclient_warnx(const char *fmt, ...)
{
	va_list ap;

	(void)fputs("zkelectctl: ", stderr);
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fputc('\n', stderr);
}

/* Milliseconds left for poll(), -1 for no deadline. */
static int
ctlclient_remaining(const struct zkelectctl *zc)
{
	int64_t left;

	if (zc->deadline < 0)
		return -1;
	left = zc->deadline - now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* A connected socket, or -1 with errno set by connect(2). */
static int
ctlclient_try_connect(const struct zkelectctl *zc)
{
	struct sockaddr_un sun;
	struct timeval tv;
	int fd, left, err;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(zc->path) >= sizeof(sun.sun_path)) {
		ctlclient_warnx("socket path too long: %s", zc->path);
		exit(EXIT_USAGE);
	}
	memcpy(sun.sun_path, zc->path, strlen(zc->path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		ctlclient_warnx("socket: %s", strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
	/* A full listen backlog makes connect() wait, at most this long. */
	if ((left = ctlclient_remaining(zc)) >= 0) {
		tv.tv_sec = left / 1000;
		tv.tv_usec = (left % 1000) * 1000 + (left == 0);
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv)) == -1) {
			ctlclient_warnx("setsockopt: %s", strerror(errno));
			exit(EXIT_UNREACHABLE);
		}
	}
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (errno == EINTR)
			continue;
		err = errno;
		(void)close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Says why connect(2) failed (errno) and exits. */
static void __attribute__((noreturn))
ctlclient_unreachable(const struct zkelectctl *zc)
{
	ctlclient_warnx("cannot connect to %s: %s", zc->path,
	    errno == EAGAIN ? "timed out" : strerror(errno));
	exit(EXIT_UNREACHABLE);
}

static int
ctlclient_connect(const struct zkelectctl *zc)
{
	int fd;

	if ((fd = ctlclient_try_connect(zc)) == -1)
		ctlclient_unreachable(zc);
	return fd;
}

/*
 * Returns -1 when the daemon closed before taking the whole line: it may
 * have said why (too many clients), so its answer is still read.
 */
static int
ctlclient_send(const struct zkelectctl *zc, int fd, const char *line)
{
	size_t len = strlen(line), off = 0;
	ssize_t n;

	while (off < len) {
		n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				return -1;
			ctlclient_warnx("cannot send to %s: %s", zc->path,
			    errno == EAGAIN ? "timed out" : strerror(errno));
			exit(EXIT_UNREACHABLE);
		}
		off += (size_t)n;
	}
	return 0;
}

/*
 * Reads what is there, waiting until the deadline. Returns the byte count,
 * 0 at EOF, -1 on timeout. A reset after some answer ends it like EOF.
 */
static ssize_t
ctlclient_read(const struct zkelectctl *zc, int fd, char *buf, size_t len,
    size_t got)
{
	struct pollfd pfd;
	ssize_t n;
	int rc;

	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		rc = poll(&pfd, 1, ctlclient_remaining(zc));
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			ctlclient_warnx("poll: %s", strerror(errno));
			exit(EXIT_UNREACHABLE);
		}
		if (rc == 0)
			return -1;
		n = recv(fd, buf, len, 0);
		if (n >= 0)
			return n;
		if (errno == EINTR || errno == EAGAIN)
			continue;
		if (errno == ECONNRESET && got > 0)
			return 0;
		ctlclient_warnx("cannot read the answer from %s: %s",
		    zc->path, strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
}

static void
ctlclient_output(const char *buf, size_t len)
{
	if ((len > 0 && fwrite(buf, 1, len, stdout) != len) ||
	    fflush(stdout) == EOF) {
		ctlclient_warnx("stdout: %s", strerror(errno));
		exit(EXIT_NO);
	}
}

/* "error ..." answers go to stderr with the command's name. */
static void
ctlclient_check_error(const struct zkelectctl *zc, const char *answer)
{
	size_t len;

	if (strncmp(answer, "error ", 6) != 0 && strcmp(answer, "error") != 0 &&
	    strcmp(answer, "error\n") != 0)
		return;
	len = strcspn(answer, "\n");
	ctlclient_warnx("%s: %.*s", zc->cmd->name, (int)len, answer);
	exit(EXIT_DAEMON_ERROR);
}

/*
 * The answer is late: the daemon, asked ping on another connection, shows
 * it is still at work (any answer does, "error too-many-clients" too: its
 * loop runs), and the wait goes on for zc->probe_ms more. A daemon that
 * does not answer that either is taken for stuck.
 */
static void
ctlclient_probe(struct zkelectctl *zc)
{
	struct zkelectctl p = *zc;
	char buf[256];
	ssize_t n;
	int fd;

	p.deadline = now_ms() + zc->probe_ms;
	fd = ctlclient_connect(&p);
	if (ctlclient_send(&p, fd, "ping\n") == 0)
		(void)shutdown(fd, SHUT_WR);
	n = ctlclient_read(&p, fd, buf, sizeof(buf), 0);
	(void)close(fd);
	if (n <= 0) {
		ctlclient_warnx("%s: no answer from %s, and no answer to ping "
		    "within %lld ms", zc->cmd->name, zc->path,
		    (long long)zc->probe_ms);
		exit(EXIT_UNREACHABLE);
	}
	zc->deadline = now_ms() + zc->probe_ms;
}

/* One command, one answer: everything up to the daemon's close. */
int
ctlclient_oneshot(struct zkelectctl *zc, const char *line)
{
	char *answer;
	size_t len = 0, size = 4096;
	ssize_t n;
	int fd;

	fd = ctlclient_connect(zc);
	if (ctlclient_send(zc, fd, line) == 0 && shutdown(fd, SHUT_WR) == -1 &&
	    errno != ENOTCONN) {
		ctlclient_warnx("shutdown: %s", strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
	answer = xmalloc(size);
	for (;;) {
		if (size - len < 4096) {
			if (size >= CTLCLIENT_ANSWER_MAX) {
				ctlclient_warnx("%s: answer over %d bytes",
				    zc->cmd->name, CTLCLIENT_ANSWER_MAX);
				exit(EXIT_UNREACHABLE);
			}
			size *= 2;
			answer = xreallocarray(answer, size, 1);
		}
		n = ctlclient_read(zc, fd, answer + len, size - len - 1, len);
		if (n == -1 && zc->probe_ms > 0) {
			ctlclient_probe(zc);
			continue;
		}
		if (n == -1) {
			ctlclient_warnx("%s: no answer from %s within %lld ms",
			    zc->cmd->name, zc->path, (long long)zc->timeout_ms);
			exit(EXIT_UNREACHABLE);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	if (len == 0) {
		ctlclient_warnx("%s: %s closed the connection without an "
		    "answer", zc->cmd->name, zc->path);
		exit(EXIT_UNREACHABLE);
	}
	answer[len] = '\0';
	ctlclient_check_error(zc, answer);

	if (zc->cmd->kind == KIND_IS_LEADER) {
		answer[strcspn(answer, "\r\n")] = '\0';
		if (!zc->quiet)
			(void)printf("%s\n", answer);
		ctlclient_output(NULL, 0);
		n = strcmp(answer, "leader") == 0 ? EXIT_OK : EXIT_NO;
		free(answer);
		return (int)n;
	}
	/* An empty list arrives as a bare newline. */
	if (strcmp(answer, "\n") != 0)
		ctlclient_output(answer, len);
	free(answer);
	return EXIT_OK;
}

/* What watch and wait keep across the connections a re-exec makes. */
struct ctlclient_stream {
	char role[64];		/* of the last line */
	char state[PROTO_MAX_LINE + 1];	/* watch: the last line shown */
	size_t lines;		/* of every connection */
	int conns;		/* connections made */
	int quiet;		/* connections in a row ended without a line */
};

/* The part of a watch line that a change changes: all but its time=. */
static size_t
ctlclient_state_len(const char *line)
{
	const char *t = strstr(line, " time=");

	return t != NULL ? (size_t)(t - line) : strlen(line);
}

/* Handles one line of the watch stream; returns 1 when wait is done. */
static int
ctlclient_stream_line(const struct zkelectctl *zc, struct ctlclient_stream *st,
    const char *line, int first)
{
	size_t len;

	if (first)
		ctlclient_check_error(zc, line);
	if (strncmp(line, "role=", 5) == 0)
		(void)snprintf(st->role, sizeof(st->role), "%.*s",
		    (int)strcspn(line + 5, " \t\r"), line + 5);
	if (zc->cmd->kind == KIND_WATCH) {
		/* A new connection's first line tells what is, not a change. */
		len = ctlclient_state_len(line);
		if (first && st->conns > 1 && len == strlen(st->state) &&
		    strncmp(line, st->state, len) == 0)
			return 0;
		(void)snprintf(st->state, sizeof(st->state), "%.*s", (int)len,
		    line);
		(void)printf("%s\n", line);
		ctlclient_output(NULL, 0);
		return 0;
	}
	if (strncmp(line, "role=", 5) != 0 || strcmp(st->role, zc->role) != 0)
		return 0;
	if (!zc->quiet) {
		(void)printf("%s\n", line);
		ctlclient_output(NULL, 0);
	}
	return 1;
}

static int
ctlclient_stream_timeout(const struct zkelectctl *zc,
    const struct ctlclient_stream *st)
{
	if (zc->cmd->kind == KIND_WATCH)
		return EXIT_OK;
	if (!zc->quiet)
		ctlclient_warnx("wait: role %s not reached within %lld ms%s%s",
		    zc->role, (long long)zc->timeout_ms,
		    st->role[0] != '\0' ? "; role is " : "", st->role);
	return EXIT_NO;
}

/*
 * Subscribes on fd and reads its stream to the end, then closes fd.
 * Returns the exit code when watch or wait is over, -1 when the daemon
 * closed the stream.
 */
static int
ctlclient_stream_read(struct zkelectctl *zc, struct ctlclient_stream *st,
    int fd)
{
	char buf[PROTO_MAX_LINE * 4], *nl;
	size_t len = 0, eat, before = st->lines;
	ssize_t n;

	(void)ctlclient_send(zc, fd, "watch\n");
	for (;;) {
		if (len == sizeof(buf) - 1) {
			/* A line this long is no watch line: drop it. */
			len = 0;
		}
		n = ctlclient_read(zc, fd, buf + len, sizeof(buf) - 1 - len,
		    len + st->lines);
		if (n == -1) {
			(void)close(fd);
			return ctlclient_stream_timeout(zc, st);
		}
		if (n == 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = memchr(buf, '\n', len)) != NULL) {
			*nl = '\0';
			eat = (size_t)(nl - buf) + 1;
			if (ctlclient_stream_line(zc, st, buf,
			    st->lines++ == before)) {
				(void)close(fd);
				return EXIT_OK;
			}
			memmove(buf, buf + eat, len - eat);
			len -= eat;
		}
	}
	(void)close(fd);
	if (len > 0) {
		buf[len] = '\0';
		if (ctlclient_stream_line(zc, st, buf, st->lines++ == before))
			return EXIT_OK;
	}
	st->quiet = st->lines == before ? st->quiet + 1 : 0;
	return -1;
}

/*
 * The daemon closed the stream. One that stops says role=stopped first,
 * and its socket then goes (or stays with nobody listening, after a
 * crash); a re-exec (SIGUSR2) closes the stream too, but keeps the socket,
 * on which the next image answers. So the stream is taken up again while
 * the socket takes connections. Returns the exit code, or -1 with *fd the
 * new connection.
 */
static int
ctlclient_stream_again(struct zkelectctl *zc, struct ctlclient_stream *st,
    int *fd)
{
	int left;

	if (st->lines == 0 || st->quiet > CTLCLIENT_QUIET_MAX) {
		ctlclient_warnx("%s: %s closed the connection without an "
		    "answer", zc->cmd->name, zc->path);
		return EXIT_UNREACHABLE;
	}
	if (strcmp(st->role, "stopped") != 0) {
		/* Closed at once again: the daemon may be on its way out. */
		left = ctlclient_remaining(zc);
		if (st->quiet > 0 && left != 0)
			(void)poll(NULL, 0, left < 0 || left > CTLCLIENT_RETRY_MS ?
			    CTLCLIENT_RETRY_MS : left);
		if (ctlclient_remaining(zc) == 0)
			return ctlclient_stream_timeout(zc, st);
		if ((*fd = ctlclient_try_connect(zc)) != -1) {
			st->conns++;
			return -1;
		}
		if (errno != ENOENT && errno != ECONNREFUSED) {
			if (errno == EAGAIN)
				return ctlclient_stream_timeout(zc, st);
			ctlclient_warnx("cannot connect to %s again: %s",
			    zc->path, strerror(errno));
			return EXIT_UNREACHABLE;
		}
	}
	if (zc->cmd->kind == KIND_WATCH || strcmp(zc->role, "stopped") == 0)
		return EXIT_OK;
	ctlclient_warnx("wait: the daemon at %s stopped", zc->path);
	return EXIT_UNREACHABLE;
}

/* watch and wait: the connection stays open and brings one line a change. */
int
ctlclient_stream(struct zkelectctl *zc)
{
	struct ctlclient_stream st;
	int fd, rc;

	memset(&st, 0, sizeof(st));
	/*
	 * A daemon gone before the wait began is stopped as much as one
	 * that goes during it (ctlclient_stream_again): no socket, or
	 * nobody listening on it.
	 */
	if ((fd = ctlclient_try_connect(zc)) == -1) {
		if (zc->cmd->kind == KIND_WAIT &&
		    strcmp(zc->role, "stopped") == 0 &&
		    (errno == ENOENT || errno == ECONNREFUSED))
			return EXIT_OK;
		ctlclient_unreachable(zc);
	}
	st.conns = 1;
	while ((rc = ctlclient_stream_read(zc, &st, fd)) == -1 &&
	    (rc = ctlclient_stream_again(zc, &st, &fd)) == -1)
		;
	return rc;
}
