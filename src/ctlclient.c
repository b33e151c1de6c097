/*
 * zkelectctl's side of the control socket: one connection, one command
 * line, and the answer read until the daemon closes, all within one
 * deadline so that a stuck daemon never hangs a shell script.
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

static int
ctlclient_connect(const struct zkelectctl *zc)
{
	struct sockaddr_un sun;
	struct timeval tv;
	int fd, left;

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
		ctlclient_warnx("cannot connect to %s: %s", zc->path,
		    errno == EAGAIN ? "timed out" : strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
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

/* Handles one line of the watch stream; returns 1 when wait is done. */
static int
ctlclient_stream_line(const struct zkelectctl *zc, char *line, int first)
{
	size_t len;

	if (first)
		ctlclient_check_error(zc, line);
	if (zc->cmd->kind == KIND_WATCH) {
		(void)printf("%s\n", line);
		ctlclient_output(NULL, 0);
		return 0;
	}
	if (strncmp(line, "role=", 5) != 0)
		return 0;
	len = strcspn(line + 5, " \t\r");
	if (len != strlen(zc->role) || strncmp(line + 5, zc->role, len) != 0)
		return 0;
	if (!zc->quiet) {
		(void)printf("%s\n", line);
		ctlclient_output(NULL, 0);
	}
	return 1;
}

/* watch and wait: the connection stays open and brings one line a change. */
int
ctlclient_stream(struct zkelectctl *zc)
{
	char buf[PROTO_MAX_LINE * 4], *nl, last[64] = "";
	size_t len = 0, eat;
	ssize_t n;
	int fd, lines = 0;

	fd = ctlclient_connect(zc);
	(void)ctlclient_send(zc, fd, "watch\n");
	for (;;) {
		if (len == sizeof(buf) - 1) {
			/* A line this long is no watch line: drop it. */
			len = 0;
		}
		n = ctlclient_read(zc, fd, buf + len, sizeof(buf) - 1 - len,
		    len + (size_t)lines);
		if (n == -1) {
			(void)close(fd);
			if (zc->cmd->kind == KIND_WATCH)
				return EXIT_OK;
			if (!zc->quiet)
				ctlclient_warnx("wait: role %s not reached "
				    "within %lld ms%s%s", zc->role,
				    (long long)zc->timeout_ms,
				    last[0] != '\0' ? "; role is " : "", last);
			return EXIT_NO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = memchr(buf, '\n', len)) != NULL) {
			*nl = '\0';
			eat = (size_t)(nl - buf) + 1;
			if (strncmp(buf, "role=", 5) == 0)
				(void)snprintf(last, sizeof(last), "%.*s",
				    (int)strcspn(buf + 5, " \t\r"), buf + 5);
			if (ctlclient_stream_line(zc, buf, lines++ == 0)) {
				(void)close(fd);
				return EXIT_OK;
			}
			memmove(buf, buf + eat, len - eat);
			len -= eat;
		}
	}
	(void)close(fd);
	if (lines == 0 && len == 0) {
		ctlclient_warnx("%s: %s closed the connection without an "
		    "answer", zc->cmd->name, zc->path);
		return EXIT_UNREACHABLE;
	}
	if (len > 0) {
		buf[len] = '\0';
		if (ctlclient_stream_line(zc, buf, lines++ == 0))
			return EXIT_OK;
	}
	if (zc->cmd->kind == KIND_WATCH)
		return EXIT_OK;
	/* A daemon that closes the stream has stopped. */
	if (strcmp(zc->role, "stopped") == 0)
		return EXIT_OK;
	ctlclient_warnx("wait: %s closed the connection", zc->path);
	return EXIT_UNREACHABLE;
}
