/*
 * zkelectctl: the command line client of zkelectd's control socket. It
 * sends one command line, reads the answer until the daemon closes and
 * turns it into output and an exit code that shell scripts can test.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"
#include "util.h"
#include "xmalloc.h"

#ifndef ZKELECTD_VERSION
#define ZKELECTD_VERSION "unknown"
#endif

#define ZKELECTCTL_TIMEOUT_MS	30000
#define ZKELECTCTL_ANSWER_MAX	(64 * 1024 * 1024)
#define ZKELECTCTL_SERVICE_MAX	64

enum zkelectctl_exit {
	EXIT_OK = 0,
	EXIT_NO = 1,		/* not leader, wait timed out */
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	EXIT_DAEMON_ERROR = 4,	/* the daemon answered "error ..." */
};

enum zkelectctl_kind {
	KIND_PLAIN,		/* print the answer */
	KIND_STATUS,		/* plain, with --json */
	KIND_IS_LEADER,
	KIND_WAIT,
	KIND_WATCH,
};

static const struct zkelectctl_cmd {
	const char *name;
	enum zkelectctl_kind kind;
	const char *args;
	const char *help;
} zkelectctl_cmds[] = {
	{ "ping", KIND_PLAIN, "", "check that the daemon answers: pong" },
	{ "version", KIND_PLAIN, "", "the daemon's version" },
	{ "role", KIND_PLAIN, "", "this node's role, one word" },
	{ "status", KIND_STATUS, " [--json]",
	    "key=value status lines, or one JSON object" },
	{ "leader", KIND_PLAIN, "", "the leader's id=, data=, epoch= lines" },
	{ "members", KIND_PLAIN, "",
	    "candidates in queue order: seq, id, data" },
	{ "resign", KIND_PLAIN, "",
	    "hand leadership over and rejoin at the back: ok" },
	{ "pause", KIND_PLAIN, "", "leave the election (role observer): ok" },
	{ "resume", KIND_PLAIN, "", "rejoin the election: ok" },
	{ "metrics", KIND_PLAIN, "", "Prometheus text exposition" },
	{ "watch", KIND_WATCH, "",
	    "print role=R leader=ID epoch=N on every change" },
	{ "is-leader", KIND_IS_LEADER, "",
	    "exit 0 when this node is the leader, 1 when not" },
	{ "wait", KIND_WAIT, " ROLE [-t DURATION]",
	    "wait until the role is ROLE; exit 1 on timeout" },
};

static const char *zkelectctl_roles[] = {
	"leader", "follower", "promoting", "demoting", "observer", "unknown",
	"stopped",
};

struct zkelectctl {
	const struct zkelectctl_cmd *cmd;
	const char *path;
	const char *role;	/* wait */
	int json;		/* status --json */
	int quiet;
	int64_t timeout_ms;	/* -1: none */
	int64_t deadline;	/* now_ms() based; -1: none */
};

static void __attribute__((format(printf, 1, 2)))
zkelectctl_warnx(const char *fmt, ...)
{
	va_list ap;

	(void)fputs("zkelectctl: ", stderr);
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fputc('\n', stderr);
}

static void
zkelectctl_usage(FILE *f)
{
	size_t i;
	int n;

	(void)fprintf(f,
	    "usage: zkelectctl [-q] [-s SOCKET | -n SERVICE] [-t DURATION] "
	    "COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < sizeof(zkelectctl_cmds) / sizeof(zkelectctl_cmds[0]);
	    i++) {
		n = fprintf(f, "  %s%s", zkelectctl_cmds[i].name,
		    zkelectctl_cmds[i].args);
		if (n > 24)
			(void)fprintf(f, "\n%26s", "");
		else
			(void)fprintf(f, "%*s", 26 - (n < 0 ? 0 : n), "");
		(void)fprintf(f, "%s\n", zkelectctl_cmds[i].help);
	}
	(void)fprintf(f, "\nOptions:\n"
	    "  -s, --socket SOCKET     control socket path\n"
	    "  -n, --service SERVICE   use " PROTO_RUNDIR "/SERVICE.sock\n"
	    "  -t, --timeout DURATION  answer timeout (default 30s); for wait "
	    "and watch,\n"
	    "                          how long to wait (default: forever); "
	    "ms, s, m\n"
	    "  -q, --quiet             is-leader and wait print nothing\n"
	    "  -h, --help              print this help\n"
	    "  -V, --version           print the version\n"
	    "\nWithout -s or -n, the only socket in " PROTO_RUNDIR " is used.\n"
	    "Exit codes: 0 ok, 1 no (not leader, wait timed out), 2 usage,\n"
	    "3 daemon unreachable, 4 the daemon answered an error.\n");
}

static void __attribute__((noreturn))
zkelectctl_usage_error(void)
{
	(void)fprintf(stderr, "Try 'zkelectctl --help'.\n");
	exit(EXIT_USAGE);
}

static const struct zkelectctl_cmd *
zkelectctl_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(zkelectctl_cmds) / sizeof(zkelectctl_cmds[0]);
	    i++)
		if (strcmp(zkelectctl_cmds[i].name, name) == 0)
			return &zkelectctl_cmds[i];
	return NULL;
}

static int
zkelectctl_role_valid(const char *role)
{
	size_t i;

	for (i = 0; i < sizeof(zkelectctl_roles) / sizeof(zkelectctl_roles[0]);
	    i++)
		if (strcmp(zkelectctl_roles[i], role) == 0)
			return 1;
	return 0;
}

static int64_t
zkelectctl_duration(const char *s)
{
	const char *why;
	int64_t ms;

	if (parse_duration_ms(s, 1, INT64_MAX / 2, &ms, &why) == -1) {
		zkelectctl_warnx("bad duration '%s': %s", s, why);
		zkelectctl_usage_error();
	}
	return ms;
}

static int
zkelectctl_service_valid(const char *s)
{
	size_t len = strlen(s);

	return len >= 1 && len <= ZKELECTCTL_SERVICE_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == len;
}

/* The only socket in the run directory, when there is exactly one. */
static char *
zkelectctl_default_socket(void)
{
	glob_t g;
	char *path;
	int rc;

	rc = glob(PROTO_RUNDIR "/*.sock", 0, NULL, &g);
	if (rc == GLOB_NOMATCH) {
		zkelectctl_warnx("no control socket in %s (is zkelectd "
		    "running?); use -s SOCKET or -n SERVICE", PROTO_RUNDIR);
		exit(EXIT_UNREACHABLE);
	}
	if (rc != 0) {
		zkelectctl_warnx("cannot list %s", PROTO_RUNDIR);
		exit(EXIT_UNREACHABLE);
	}
	if (g.gl_pathc > 1) {
		zkelectctl_warnx("%zu control sockets in %s; choose one with "
		    "-n SERVICE or -s SOCKET", (size_t)g.gl_pathc,
		    PROTO_RUNDIR);
		globfree(&g);
		zkelectctl_usage_error();
	}
	path = xstrdup(g.gl_pathv[0]);
	globfree(&g);
	return path;
}

/* Milliseconds left for poll(), -1 for no deadline. */
static int
zkelectctl_remaining(const struct zkelectctl *zc)
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
zkelectctl_connect(const struct zkelectctl *zc)
{
	struct sockaddr_un sun;
	struct timeval tv;
	int fd, left;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(zc->path) >= sizeof(sun.sun_path)) {
		zkelectctl_warnx("socket path too long: %s", zc->path);
		exit(EXIT_USAGE);
	}
	memcpy(sun.sun_path, zc->path, strlen(zc->path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		zkelectctl_warnx("socket: %s", strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
	/* A full listen backlog makes connect() wait, at most this long. */
	if ((left = zkelectctl_remaining(zc)) >= 0) {
		tv.tv_sec = left / 1000;
		tv.tv_usec = (left % 1000) * 1000 + (left == 0);
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv)) == -1) {
			zkelectctl_warnx("setsockopt: %s", strerror(errno));
			exit(EXIT_UNREACHABLE);
		}
	}
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (errno == EINTR)
			continue;
		zkelectctl_warnx("cannot connect to %s: %s", zc->path,
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
zkelectctl_send(const struct zkelectctl *zc, int fd, const char *line)
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
			zkelectctl_warnx("cannot send to %s: %s", zc->path,
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
zkelectctl_read(const struct zkelectctl *zc, int fd, char *buf, size_t len,
    size_t got)
{
	struct pollfd pfd;
	ssize_t n;
	int rc;

	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		rc = poll(&pfd, 1, zkelectctl_remaining(zc));
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			zkelectctl_warnx("poll: %s", strerror(errno));
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
		zkelectctl_warnx("cannot read the answer from %s: %s",
		    zc->path, strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
}

static void
zkelectctl_output(const char *buf, size_t len)
{
	if ((len > 0 && fwrite(buf, 1, len, stdout) != len) ||
	    fflush(stdout) == EOF) {
		zkelectctl_warnx("stdout: %s", strerror(errno));
		exit(EXIT_NO);
	}
}

/* "error ..." answers go to stderr with the command's name. */
static void
zkelectctl_check_error(const struct zkelectctl *zc, const char *answer)
{
	size_t len;

	if (strncmp(answer, "error ", 6) != 0 && strcmp(answer, "error") != 0 &&
	    strcmp(answer, "error\n") != 0)
		return;
	len = strcspn(answer, "\n");
	zkelectctl_warnx("%s: %.*s", zc->cmd->name, (int)len, answer);
	exit(EXIT_DAEMON_ERROR);
}

/* One command, one answer: everything up to the daemon's close. */
static int
zkelectctl_oneshot(struct zkelectctl *zc, const char *line)
{
	char *answer;
	size_t len = 0, size = 4096;
	ssize_t n;
	int fd;

	fd = zkelectctl_connect(zc);
	if (zkelectctl_send(zc, fd, line) == 0 && shutdown(fd, SHUT_WR) == -1 &&
	    errno != ENOTCONN) {
		zkelectctl_warnx("shutdown: %s", strerror(errno));
		exit(EXIT_UNREACHABLE);
	}
	answer = xmalloc(size);
	for (;;) {
		if (size - len < 4096) {
			if (size >= ZKELECTCTL_ANSWER_MAX) {
				zkelectctl_warnx("%s: answer over %d bytes",
				    zc->cmd->name, ZKELECTCTL_ANSWER_MAX);
				exit(EXIT_UNREACHABLE);
			}
			size *= 2;
			answer = xreallocarray(answer, size, 1);
		}
		n = zkelectctl_read(zc, fd, answer + len, size - len - 1, len);
		if (n == -1) {
			zkelectctl_warnx("%s: no answer from %s within %lld ms",
			    zc->cmd->name, zc->path, (long long)zc->timeout_ms);
			exit(EXIT_UNREACHABLE);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	if (len == 0) {
		zkelectctl_warnx("%s: %s closed the connection without an "
		    "answer", zc->cmd->name, zc->path);
		exit(EXIT_UNREACHABLE);
	}
	answer[len] = '\0';
	zkelectctl_check_error(zc, answer);

	if (zc->cmd->kind == KIND_IS_LEADER) {
		answer[strcspn(answer, "\r\n")] = '\0';
		if (!zc->quiet)
			(void)printf("%s\n", answer);
		zkelectctl_output(NULL, 0);
		n = strcmp(answer, "leader") == 0 ? EXIT_OK : EXIT_NO;
		free(answer);
		return (int)n;
	}
	/* An empty list arrives as a bare newline. */
	if (strcmp(answer, "\n") != 0)
		zkelectctl_output(answer, len);
	free(answer);
	return EXIT_OK;
}

/* Handles one line of the watch stream; returns 1 when wait is done. */
static int
zkelectctl_stream_line(const struct zkelectctl *zc, char *line, int first)
{
	size_t len;

	if (first)
		zkelectctl_check_error(zc, line);
	if (zc->cmd->kind == KIND_WATCH) {
		(void)printf("%s\n", line);
		zkelectctl_output(NULL, 0);
		return 0;
	}
	if (strncmp(line, "role=", 5) != 0)
		return 0;
	len = strcspn(line + 5, " \t\r");
	if (len != strlen(zc->role) || strncmp(line + 5, zc->role, len) != 0)
		return 0;
	if (!zc->quiet) {
		(void)printf("%s\n", line);
		zkelectctl_output(NULL, 0);
	}
	return 1;
}

/* watch and wait: the connection stays open and brings one line a change. */
static int
zkelectctl_stream(struct zkelectctl *zc)
{
	char buf[PROTO_MAX_LINE * 4], *nl, last[64] = "";
	size_t len = 0, eat;
	ssize_t n;
	int fd, lines = 0;

	fd = zkelectctl_connect(zc);
	(void)zkelectctl_send(zc, fd, "watch\n");
	for (;;) {
		if (len == sizeof(buf) - 1) {
			/* A line this long is no watch line: drop it. */
			len = 0;
		}
		n = zkelectctl_read(zc, fd, buf + len, sizeof(buf) - 1 - len,
		    len + (size_t)lines);
		if (n == -1) {
			(void)close(fd);
			if (zc->cmd->kind == KIND_WATCH)
				return EXIT_OK;
			if (!zc->quiet)
				zkelectctl_warnx("wait: role %s not reached "
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
			if (zkelectctl_stream_line(zc, buf, lines++ == 0)) {
				(void)close(fd);
				return EXIT_OK;
			}
			memmove(buf, buf + eat, len - eat);
			len -= eat;
		}
	}
	(void)close(fd);
	if (lines == 0 && len == 0) {
		zkelectctl_warnx("%s: %s closed the connection without an "
		    "answer", zc->cmd->name, zc->path);
		return EXIT_UNREACHABLE;
	}
	if (len > 0) {
		buf[len] = '\0';
		if (zkelectctl_stream_line(zc, buf, lines++ == 0))
			return EXIT_OK;
	}
	if (zc->cmd->kind == KIND_WATCH)
		return EXIT_OK;
	/* A daemon that closes the stream has stopped. */
	if (strcmp(zc->role, "stopped") == 0)
		return EXIT_OK;
	zkelectctl_warnx("wait: %s closed the connection", zc->path);
	return EXIT_UNREACHABLE;
}

/* Arguments after the command: -t anywhere, a role, --json. */
static void
zkelectctl_command_args(struct zkelectctl *zc, int argc, char **argv)
{
	const char *arg;
	int i;

	for (i = 0; i < argc; i++) {
		arg = argv[i];
		if (strcmp(arg, "-t") == 0 || strcmp(arg, "--timeout") == 0) {
			if (++i == argc) {
				zkelectctl_warnx("%s: %s needs a duration",
				    zc->cmd->name, arg);
				zkelectctl_usage_error();
			}
			zc->timeout_ms = zkelectctl_duration(argv[i]);
		} else if (strncmp(arg, "-t", 2) == 0 && arg[2] != '\0')
			zc->timeout_ms = zkelectctl_duration(arg + 2);
		else if (strncmp(arg, "--timeout=", 10) == 0)
			zc->timeout_ms = zkelectctl_duration(arg + 10);
		else if (zc->cmd->kind == KIND_STATUS && !zc->json &&
		    (strcmp(arg, "--json") == 0 || strcmp(arg, "json") == 0))
			zc->json = 1;
		else if (zc->cmd->kind == KIND_WAIT && zc->role == NULL &&
		    arg[0] != '-') {
			if (!zkelectctl_role_valid(arg)) {
				zkelectctl_warnx("wait: unknown role '%s' (one "
				    "of leader, follower, promoting, demoting, "
				    "observer, unknown, stopped)", arg);
				zkelectctl_usage_error();
			}
			zc->role = arg;
		} else {
			zkelectctl_warnx("%s: unexpected argument '%s'",
			    zc->cmd->name, arg);
			zkelectctl_usage_error();
		}
	}
	if (zc->cmd->kind == KIND_WAIT && zc->role == NULL) {
		zkelectctl_warnx("wait: which role? (wait ROLE [-t DURATION])");
		zkelectctl_usage_error();
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 's' },
		{ "service", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct zkelectctl zc;
	const char *service = NULL, *socket_path = NULL;
	char *path = NULL, line[64];
	int ch, rc;

	memset(&zc, 0, sizeof(zc));
	zc.timeout_ms = -1;
	while ((ch = getopt_long(argc, argv, "+hVqs:n:t:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			zkelectctl_usage(stdout);
			return EXIT_OK;
		case 'V':
			(void)printf("zkelectctl %s\n", ZKELECTD_VERSION);
			return EXIT_OK;
		case 'q':
			zc.quiet = 1;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'n':
			service = optarg;
			break;
		case 't':
			zc.timeout_ms = zkelectctl_duration(optarg);
			break;
		default:
			zkelectctl_usage_error();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		zkelectctl_usage(stderr);
		return EXIT_USAGE;
	}
	if ((zc.cmd = zkelectctl_find(argv[0])) == NULL) {
		zkelectctl_warnx("unknown command '%s'", argv[0]);
		zkelectctl_usage_error();
	}
	zkelectctl_command_args(&zc, argc - 1, argv + 1);

	if (service != NULL && socket_path != NULL) {
		zkelectctl_warnx("-s and -n exclude each other");
		zkelectctl_usage_error();
	}
	if (service != NULL) {
		if (!zkelectctl_service_valid(service)) {
			zkelectctl_warnx("bad service name '%s' (1 to %d of "
			    "A-Z a-z 0-9 . _ -)", service,
			    ZKELECTCTL_SERVICE_MAX);
			zkelectctl_usage_error();
		}
		(void)xasprintf(&path, "%s/%s.sock", PROTO_RUNDIR, service);
	} else if (socket_path != NULL)
		path = xstrdup(socket_path);
	else
		path = zkelectctl_default_socket();
	zc.path = path;

	switch (zc.cmd->kind) {
	case KIND_WAIT:
	case KIND_WATCH:
		zc.deadline = zc.timeout_ms < 0 ? -1 : now_ms() + zc.timeout_ms;
		rc = zkelectctl_stream(&zc);
		break;
	default:
		if (zc.timeout_ms < 0)
			zc.timeout_ms = ZKELECTCTL_TIMEOUT_MS;
		zc.deadline = now_ms() + zc.timeout_ms;
		(void)snprintf(line, sizeof(line), "%s\n",
		    zc.cmd->kind == KIND_IS_LEADER ? "role" :
		    zc.json ? "status json" : zc.cmd->name);
		rc = zkelectctl_oneshot(&zc, line);
		break;
	}
	free(path);
	return rc;
}
