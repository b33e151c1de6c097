/*
 * The floor for the control-socket benchmark: the smallest server that
 * speaks the same protocol. One thread, blocking calls, no event loop:
 * accept, read up to the newline (or EOF), write a fixed answer, close.
 * Four or five system calls a query, against the daemon's fifteen or so.
 * Measured with the same load generator, it shows what this machine's
 * kernel and the load generator cost on their own, so that the daemon's
 * share can be told apart.
 *
 * usage: baseline SOCKET_PATH [ANSWER]; it serves until killed, or until
 * it has answered 100,000,000 connections.
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BL_MAX_CONNECTIONS	100000000L
#define BL_MAX_LINE		1026

static void __attribute__((noreturn))
bl_fatal(const char *what)
{
	(void)fprintf(stderr, "baseline: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Reads until a newline or EOF; 0 on success, -1 on error. */
static int
bl_read_line(int fd)
{
	char buf[BL_MAX_LINE];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(buf)) {
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		if (memchr(buf + got, '\n', (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return -1;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_un sun;
	const char *answer;
	char *text;
	size_t len;
	long served;
	int lfd, fd;

	if (argc < 2 || argc > 3) {
		(void)fprintf(stderr, "usage: baseline SOCKET_PATH [ANSWER]\n");
		return 2;
	}
	answer = argc == 3 ? argv[2] : "leader";
	if (asprintf(&text, "%s\n", answer) == -1)
		bl_fatal("asprintf");
	len = strlen(text);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		bl_fatal("signal");

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(argv[1]) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		bl_fatal(argv[1]);
	}
	memcpy(sun.sun_path, argv[1], strlen(argv[1]) + 1);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		bl_fatal("socket");
	if (bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		bl_fatal("bind");
	if (listen(lfd, SOMAXCONN) == -1)
		bl_fatal("listen");

	for (served = 0; served < BL_MAX_CONNECTIONS; served++) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			bl_fatal("accept4");
		}
		/* A client that sends nothing just gets no answer. */
		if (bl_read_line(fd) == 0 &&
		    send(fd, text, len, MSG_NOSIGNAL) != (ssize_t)len)
			(void)fprintf(stderr, "baseline: send: %s\n",
			    strerror(errno));
		if (close(fd) == -1)
			bl_fatal("close");
	}
	free(text);
	return 0;
}
