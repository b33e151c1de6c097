/*
 * ctl.c with a real event_base and a socket in a temporary directory.
 * The client side is plain non-blocking sockets; the test pumps the loop
 * while it waits for their answers.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "ctl.h"
#include "log.h"
#include "util.h"

enum test_mode {
	MODE_ECHO,		/* answer "echo:<line>" at once */
	MODE_DEFER,		/* the test answers later */
	MODE_WATCH,		/* make the client a watcher */
};

struct fixture {
	struct event_base *base;
	char dir[64];
	char path[128];
	struct ctl *ctl;
	enum test_mode mode;
	int calls;
	uint64_t client;
	uid_t uid;
	char line[PROTO_MAX_LINE + 1];
	size_t linelen;
};

static void
test_command(struct ctl *ctl, uint64_t client, uid_t uid, const char *line,
    void *arg)
{
	struct fixture *fx = arg;
	char answer[PROTO_MAX_LINE + 16];

	fx->calls++;
	fx->client = client;
	fx->uid = uid;
	fx->linelen = strlen(line);
	assert_true(fx->linelen <= PROTO_MAX_LINE);
	memcpy(fx->line, line, fx->linelen + 1);
	switch (fx->mode) {
	case MODE_ECHO:
		(void)snprintf(answer, sizeof(answer), "echo:%s", line);
		assert_int_equal(ctl_reply(ctl, client, answer), 0);
		break;
	case MODE_DEFER:
		break;
	case MODE_WATCH:
		assert_int_equal(ctl_watch(ctl, client), 0);
		break;
	}
}

static struct ctl *
test_open_params(struct fixture *fx, int mode, const char *group,
    int max_clients, int idle_ms, char *err, size_t errlen)
{
	struct ctl_params p;

	memset(&p, 0, sizeof(p));
	p.path = fx->path;
	p.mode = mode;
	p.group = group;
	p.max_clients = max_clients;
	p.idle_timeout_ms = idle_ms;
	return ctl_open(fx->base, &p, test_command, fx, err, errlen);
}

static void
test_open(struct fixture *fx)
{
	char err[256] = "";

	fx->ctl = test_open_params(fx, 0660, NULL, 16, 5000, err, sizeof(err));
	if (fx->ctl == NULL)
		fail_msg("ctl_open: %s", err);
}

static int
test_setup(void **state)
{
	struct fixture *fx;

	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	(void)strcpy(fx->dir, "/tmp/test_ctl.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	(void)snprintf(fx->path, sizeof(fx->path), "%s/t.sock", fx->dir);
	assert_non_null(fx->base = event_base_new());
	*state = fx;
	return 0;
}

static int
test_teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	ctl_close(fx->ctl);
	event_base_free(fx->base);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void
test_pump(struct fixture *fx, int ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	assert_int_equal(event_base_loopexit(fx->base, &tv), 0);
	assert_int_not_equal(event_base_dispatch(fx->base), -1);
}

/* Runs the loop until *v >= want or ms pass. */
static int
test_pump_until(struct fixture *fx, const int *v, int want, int ms)
{
	int64_t end = now_ms() + ms;

	while (*v < want && now_ms() < end)
		test_pump(fx, 10);
	return *v >= want;
}

/*
 * Runs the loop until ctl has want clients or ms pass: accepting and
 * noticing a close take loop turns, which a loaded machine spreads out.
 */
static int
test_pump_until_clients(struct fixture *fx, int want, int ms)
{
	int64_t end = now_ms() + ms;

	while (ctl_clients(fx->ctl) != want && now_ms() < end)
		test_pump(fx, 10);
	return ctl_clients(fx->ctl) == want;
}

static int
test_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_true(strlen(path) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_not_equal(fd, -1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fail_msg("connect %s: %s", path, strerror(errno));
	assert_int_not_equal(fcntl(fd, F_SETFL, O_NONBLOCK), -1);
	return fd;
}

static void
test_send(int fd, const char *data, size_t len)
{
	assert_int_equal(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/*
 * Reads until EOF (or until a newline when one_line), pumping the loop.
 * Returns the length, -1 on timeout. A reset after data counts as EOF.
 */
static ssize_t
test_read(struct fixture *fx, int fd, char *buf, size_t size, int one_line,
    int ms)
{
	struct pollfd pfd;
	size_t len = 0;
	ssize_t n;
	int64_t end = now_ms() + ms;

	while (now_ms() < end) {
		(void)event_base_loop(fx->base, EVLOOP_NONBLOCK);
		n = recv(fd, buf + len, size - len - 1, 0);
		if (n > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			if (one_line && memchr(buf, '\n', len) != NULL)
				return (ssize_t)len;
			assert_true(len < size - 1);
			continue;
		}
		if (n == 0 || (errno == ECONNRESET && len > 0)) {
			buf[len] = '\0';
			return (ssize_t)len;
		}
		if (errno != EAGAIN)
			fail_msg("recv: %s", strerror(errno));
		pfd.fd = fd;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, 5);
	}
	buf[len] = '\0';
	return -1;
}

/* Sends data on a new connection and returns the whole answer. */
static void
test_ask(struct fixture *fx, const char *data, size_t len, int half_close,
    const char *want)
{
	char buf[4096];
	int fd;

	fd = test_connect(fx->path);
	test_send(fd, data, len);
	if (half_close)
		assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(test_read(fx, fd, buf, sizeof(buf), 0, 3000) >= 0);
	assert_string_equal(buf, want);
	(void)close(fd);
}

static void
test_command_and_reply(void **state)
{
	struct fixture *fx = *state;

	test_open(fx);
	test_ask(fx, "ping\n", 5, 0, "echo:ping\n");
	assert_int_equal(fx->calls, 1);
	assert_int_equal(fx->uid, geteuid());
	assert_string_equal(fx->line, "ping");
	test_ask(fx, "status json\r\n", 13, 0, "echo:status json\n");
	assert_string_equal(fx->line, "status json");
	assert_true(test_pump_until_clients(fx, 0, 2000));
}

static void
test_half_close_gets_late_answer(void **state)
{
	struct fixture *fx = *state;
	char buf[256];
	int fd;

	test_open(fx);
	fx->mode = MODE_DEFER;
	fd = test_connect(fx->path);
	test_send(fd, "resign\n", 7);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(test_pump_until(fx, &fx->calls, 1, 2000));
	/* The EOF has been seen by now; the client must stay. */
	test_pump(fx, 100);
	assert_int_equal(ctl_clients(fx->ctl), 1);
	assert_int_equal(ctl_reply(fx->ctl, fx->client, "ok\n"), 0);
	assert_int_equal(test_read(fx, fd, buf, sizeof(buf), 0, 2000), 3);
	assert_string_equal(buf, "ok\n");
	(void)close(fd);
	assert_int_equal(ctl_clients(fx->ctl), 0);
}

static void
test_eof_without_newline(void **state)
{
	struct fixture *fx = *state;
	char buf[256];
	int fd;

	test_open(fx);
	test_ask(fx, "role", 4, 1, "echo:role\n");
	assert_string_equal(fx->line, "role");

	/* Nothing at all, then EOF: just closed. */
	fd = test_connect(fx->path);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_int_equal(test_read(fx, fd, buf, sizeof(buf), 0, 2000), 0);
	(void)close(fd);
	assert_int_equal(fx->calls, 1);
}

static void
test_line_limits(void **state)
{
	struct fixture *fx = *state;
	char data[PROTO_MAX_LINE + 3], want[PROTO_MAX_LINE + 8];

	test_open(fx);
	memset(data, 'a', sizeof(data));
	(void)strcpy(want, "echo:");
	memset(want + 5, 'a', PROTO_MAX_LINE);
	(void)strcpy(want + 5 + PROTO_MAX_LINE, "\n");

	data[PROTO_MAX_LINE] = '\n';
	test_ask(fx, data, PROTO_MAX_LINE + 1, 0, want);
	assert_int_equal(fx->linelen, PROTO_MAX_LINE);

	data[PROTO_MAX_LINE] = '\r';
	data[PROTO_MAX_LINE + 1] = '\n';
	test_ask(fx, data, PROTO_MAX_LINE + 2, 0, want);
	assert_int_equal(fx->linelen, PROTO_MAX_LINE);

	data[PROTO_MAX_LINE] = 'a';
	data[PROTO_MAX_LINE + 1] = '\n';
	test_ask(fx, data, PROTO_MAX_LINE + 2, 0, "error line-too-long\n");
	test_ask(fx, data, PROTO_MAX_LINE + 1, 1, "error line-too-long\n");
	assert_int_equal(fx->calls, 2);
}

static void
test_endless_line(void **state)
{
	struct fixture *fx = *state;
	char chunk[8192], buf[256];
	size_t sent = 0;
	ssize_t n;
	int fd;

	test_open(fx);
	memset(chunk, 'x', sizeof(chunk));
	fd = test_connect(fx->path);
	/* Far more than any line, sent while the daemon side runs. */
	while (sent < 1024 * 1024) {
		n = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
		if (n > 0)
			sent += (size_t)n;
		else if (n == -1 && errno == EAGAIN)
			test_pump(fx, 5);
		else
			break;	/* the daemon closed on us: fine */
	}
	assert_true(test_read(fx, fd, buf, sizeof(buf), 0, 3000) >= 0);
	assert_string_equal(buf, "error line-too-long\n");
	(void)close(fd);
	assert_int_equal(fx->calls, 0);
	assert_true(test_pump_until_clients(fx, 0, 2000));
}

static void
test_nul_and_junk(void **state)
{
	struct fixture *fx = *state;

	test_open(fx);
	test_ask(fx, "pi\0ng\n", 6, 0, "echo:pi?ng\n");
	assert_string_equal(fx->line, "pi?ng");
	assert_int_equal(fx->linelen, 5);
	/* One command per connection: the rest is ignored. */
	test_ask(fx, "ping\nresign\nmore\n", 17, 1, "echo:ping\n");
	assert_int_equal(fx->calls, 2);
	test_ask(fx, "\xff\xfe\x01\n", 4, 0, "echo:\xff\xfe\x01\n");
}

static void
test_idle_client_dropped(void **state)
{
	struct fixture *fx = *state;
	char err[256], buf[64];
	int64_t t0;
	int fd, i;

	fx->ctl = test_open_params(fx, 0660, NULL, 16, 200, err, sizeof(err));
	assert_non_null(fx->ctl);

	t0 = now_ms();
	fd = test_connect(fx->path);
	assert_int_equal(test_read(fx, fd, buf, sizeof(buf), 0, 3000), 0);
	assert_true(now_ms() - t0 >= 180);
	(void)close(fd);

	/* Trickling bytes does not keep a client alive. */
	t0 = now_ms();
	fd = test_connect(fx->path);
	for (i = 0; i < 10 && now_ms() - t0 < 150; i++) {
		test_send(fd, "p", 1);
		test_pump(fx, 30);
	}
	assert_int_equal(test_read(fx, fd, buf, sizeof(buf), 0, 3000), 0);
	(void)close(fd);
	assert_int_equal(fx->calls, 0);
	assert_int_equal(ctl_clients(fx->ctl), 0);
}

static void
test_stale_socket_replaced(void **state)
{
	struct fixture *fx = *state;
	struct sockaddr_un sun;
	int fd;

	/* What a crashed daemon leaves: a socket file nobody listens on. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_true(strlen(fx->path) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, fx->path, strlen(fx->path) + 1);
	assert_int_not_equal(fd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	(void)close(fd);

	test_open(fx);
	test_ask(fx, "ping\n", 5, 0, "echo:ping\n");
}

static void
test_live_socket_refused(void **state)
{
	struct fixture *fx = *state;
	struct ctl *second;
	char err[256] = "";

	test_open(fx);
	second = test_open_params(fx, 0660, NULL, 16, 5000, err, sizeof(err));
	assert_null(second);
	assert_non_null(strstr(err, "is in use by a running daemon"));
	assert_non_null(strstr(err, fx->path));
	/* The first one still owns its file. */
	test_ask(fx, "ping\n", 5, 0, "echo:ping\n");
}

static void
test_not_a_socket(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	char err[256] = "";
	int fd;

	assert_int_not_equal(fd = open(fx->path, O_WRONLY | O_CREAT, 0600), -1);
	(void)close(fd);
	assert_null(test_open_params(fx, 0660, NULL, 16, 5000, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "not a socket"));
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void
test_mode_and_group(void **state)
{
	struct fixture *fx = *state;
	struct group *gr;
	struct stat st;
	char err[256] = "";

	fx->ctl = test_open_params(fx, 0600, NULL, 16, 5000, err, sizeof(err));
	assert_non_null(fx->ctl);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	ctl_close(fx->ctl);
	fx->ctl = NULL;

	/* A group the test may give the file to: its own. */
	assert_non_null(gr = getgrgid(getegid()));
	fx->ctl = test_open_params(fx, 0660, gr->gr_name, 16, 5000, err,
	    sizeof(err));
	assert_non_null(fx->ctl);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, getegid());
	ctl_close(fx->ctl);
	fx->ctl = NULL;

	assert_null(test_open_params(fx, 0660, "no-such-group-zk", 16, 5000,
	    err, sizeof(err)));
	assert_non_null(strstr(err, "no-such-group-zk"));
	assert_int_equal(access(fx->path, F_OK), -1);
}

static void
test_parent_created_and_unlinked(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	char dir[96];
	mode_t mask;

	(void)snprintf(dir, sizeof(dir), "%s/run", fx->dir);
	(void)snprintf(fx->path, sizeof(fx->path), "%s/svc.sock", dir);
	/* A daemon's strict umask does not lock its clients out. */
	mask = umask(077);
	test_open(fx);
	(void)umask(mask);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	ctl_close(fx->ctl);
	fx->ctl = NULL;
	assert_int_equal(access(fx->path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void
test_path_too_long(void **state)
{
	struct fixture *fx = *state;
	char err[256] = "";

	memset(fx->path, 'a', sizeof(fx->path) - 1);
	fx->path[0] = '/';
	fx->path[sizeof(fx->path) - 1] = '\0';
	assert_null(test_open_params(fx, 0660, NULL, 16, 5000, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "longer than"));
}

static void
test_max_clients(void **state)
{
	struct fixture *fx = *state;
	char err[256], buf[128];
	int a, b, c, d, e;

	fx->ctl = test_open_params(fx, 0660, NULL, 2, 5000, err, sizeof(err));
	assert_non_null(fx->ctl);
	a = test_connect(fx->path);
	b = test_connect(fx->path);
	assert_true(test_pump_until_clients(fx, 2, 2000));
	/* Full of clients that sent nothing: the oldest gives its slot. */
	c = test_connect(fx->path);
	test_send(c, "ping\n", 5);
	assert_true(test_read(fx, c, buf, sizeof(buf), 0, 2000) >= 0);
	assert_string_equal(buf, "echo:ping\n");
	assert_true(test_read(fx, a, buf, sizeof(buf), 0, 2000) >= 0);
	assert_string_equal(buf, "error too-many-clients\n");
	(void)close(a);
	(void)close(c);
	assert_true(test_pump_until_clients(fx, 1, 2000));

	/* Every slot busy with a command: the newcomer is refused. */
	fx->mode = MODE_DEFER;
	test_send(b, "x\n", 2);
	d = test_connect(fx->path);
	test_send(d, "y\n", 2);
	assert_true(test_pump_until(fx, &fx->calls, 3, 2000));
	e = test_connect(fx->path);
	test_send(e, "ping\n", 5);
	assert_true(test_read(fx, e, buf, sizeof(buf), 0, 2000) >= 0);
	assert_string_equal(buf, "error too-many-clients\n");
	assert_int_equal(ctl_clients(fx->ctl), 2);
	assert_int_equal(fx->calls, 3);
	(void)close(e);
	(void)close(b);
	(void)close(d);
}

static void
test_reply_to_gone_client(void **state)
{
	struct fixture *fx = *state;
	uint64_t first;
	int fd;

	test_open(fx);
	assert_int_equal(ctl_reply(fx->ctl, 12345, "x"), -1);
	assert_int_equal(ctl_watch(fx->ctl, 12345), -1);

	test_ask(fx, "ping\n", 5, 0, "echo:ping\n");
	first = fx->client;
	assert_int_equal(ctl_reply(fx->ctl, first, "again"), -1);

	/* A client that resets before the answer is gone too. */
	fx->mode = MODE_DEFER;
	fd = test_connect(fx->path);
	test_send(fd, "members\n", 8);
	assert_true(test_pump_until(fx, &fx->calls, 2, 2000));
	assert_true(fx->client > first);
	(void)close(fd);
	test_pump(fx, 50);
	/* Queued (a close looks like a half-close), then dropped. */
	(void)ctl_reply(fx->ctl, fx->client, "late");
	assert_true(test_pump_until_clients(fx, 0, 2000));
	assert_int_equal(ctl_reply(fx->ctl, fx->client, "later"), -1);
}

static void
test_watch_and_broadcast(void **state)
{
	struct fixture *fx = *state;
	char err[256], buf[256];
	int a, b;

	/* Watchers are not subject to the idle timeout. */
	fx->ctl = test_open_params(fx, 0660, NULL, 16, 200, err, sizeof(err));
	assert_non_null(fx->ctl);
	fx->mode = MODE_WATCH;
	a = test_connect(fx->path);
	b = test_connect(fx->path);
	test_send(a, "watch\n", 6);
	test_send(b, "watch\n", 6);
	assert_true(test_pump_until(fx, &fx->calls, 2, 2000));
	test_pump(fx, 400);
	assert_int_equal(ctl_clients(fx->ctl), 2);

	ctl_broadcast(fx->ctl, "role=leader leader=a epoch=1");
	assert_true(test_read(fx, a, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=leader leader=a epoch=1\n");
	assert_true(test_read(fx, b, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=leader leader=a epoch=1\n");

	/* A watcher that leaves is freed; the other one goes on. */
	(void)close(a);
	assert_true(test_pump_until_clients(fx, 1, 2000));
	ctl_broadcast(fx->ctl, "role=follower leader=b epoch=2\n");
	assert_true(test_read(fx, b, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=follower leader=b epoch=2\n");

	/* A command client never sees broadcasts. */
	fx->mode = MODE_DEFER;
	a = test_connect(fx->path);
	test_send(a, "role\n", 5);
	assert_true(test_pump_until(fx, &fx->calls, 3, 2000));
	ctl_broadcast(fx->ctl, "role=leader leader=a epoch=3");
	assert_int_equal(ctl_reply(fx->ctl, fx->client, "leader"), 0);
	assert_true(test_read(fx, a, buf, sizeof(buf), 0, 2000) > 0);
	assert_string_equal(buf, "leader\n");
	(void)close(a);
	(void)close(b);
}

/* Connects, asks watch and half-closes, as socat and nc -N do. */
static int
test_half_closed_watcher(struct fixture *fx)
{
	int fd, calls = fx->calls;

	fd = test_connect(fx->path);
	test_send(fd, "watch\n", 6);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(test_pump_until(fx, &fx->calls, calls + 1, 2000));
	return fd;
}

static void
test_watcher_half_close(void **state)
{
	struct fixture *fx = *state;
	char err[256], buf[256];
	int fd;

	/* The idle timeout paces the check for a watcher's real close. */
	fx->ctl = test_open_params(fx, 0660, NULL, 16, 200, err, sizeof(err));
	assert_non_null(fx->ctl);
	fx->mode = MODE_WATCH;
	fd = test_half_closed_watcher(fx);
	/* Its EOF is seen, and several checks pass: it stays. */
	test_pump(fx, 1000);
	assert_int_equal(ctl_clients(fx->ctl), 1);
	ctl_broadcast(fx->ctl, "role=leader leader=a epoch=1");
	assert_true(test_read(fx, fd, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=leader leader=a epoch=1\n");
	ctl_broadcast(fx->ctl, "role=follower leader=b epoch=2");
	assert_true(test_read(fx, fd, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=follower leader=b epoch=2\n");

	/* Its real close is noticed without a broadcast. */
	(void)close(fd);
	assert_true(test_pump_until_clients(fx, 0, 3000));
}

static void
test_half_closed_watchers_that_close_hold_no_place(void **state)
{
	struct fixture *fx = *state;
	char buf[256];
	int fds[3], fd, i;

	/* 16 clients: 12 watchers, 3 of one uid; the check every 5 s. */
	test_open(fx);
	fx->mode = MODE_WATCH;
	for (i = 0; i < 3; i++)
		fds[i] = test_half_closed_watcher(fx);
	test_pump(fx, 100);
	assert_int_equal(ctl_clients(fx->ctl), 3);
	for (i = 0; i < 3; i++)
		(void)close(fds[i]);
	/*
	 * At once, long before the next check: the uid's places are free
	 * (test_command asserts that ctl_watch takes it).
	 */
	fd = test_half_closed_watcher(fx);
	assert_int_equal(ctl_clients(fx->ctl), 1);
	ctl_broadcast(fx->ctl, "role=leader leader=a epoch=1");
	assert_true(test_read(fx, fd, buf, sizeof(buf), 1, 2000) > 0);
	assert_string_equal(buf, "role=leader leader=a epoch=1\n");
	(void)close(fd);
}

static void
test_watcher_that_never_reads(void **state)
{
	struct fixture *fx = *state;
	char line[1000];
	int fd, i;

	test_open(fx);
	fx->mode = MODE_WATCH;
	fd = test_connect(fx->path);
	test_send(fd, "watch\n", 6);
	assert_true(test_pump_until(fx, &fx->calls, 1, 2000));
	memset(line, 'w', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (i = 0; i < 2000 && ctl_clients(fx->ctl) == 1; i++) {
		ctl_broadcast(fx->ctl, line);
		(void)event_base_loop(fx->base, EVLOOP_NONBLOCK);
	}
	/* Dropped instead of buffering without end. */
	assert_int_equal(ctl_clients(fx->ctl), 0);
	(void)close(fd);
}

static void
test_fd_exhaustion(void **state)
{
	struct fixture *fx = *state;
	struct rlimit old, low;
	struct rusage r0, r1;
	char buf[128];
	const char *preload = getenv("LD_PRELOAD");
	long cpu_ms;
	int fd, spare;

	/*
	 * Valgrind checks the limit after accept(2) took the connection and
	 * then closes it: that reset is its own, not ours.
	 */
	if (preload != NULL && strstr(preload, "valgrind") != NULL)
		skip();
	test_open(fx);
	fd = test_connect(fx->path);
	test_send(fd, "ping\n", 5);

	/* Lower the limit to the lowest free descriptor: accept fails. */
	assert_int_not_equal(spare = dup(0), -1);
	(void)close(spare);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)spare;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);

	assert_int_equal(getrusage(RUSAGE_SELF, &r0), 0);
	test_pump(fx, 300);
	assert_int_equal(getrusage(RUSAGE_SELF, &r1), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	cpu_ms = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1000 +
	    (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1000 +
	    (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1000 +
	    (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1000;
	/* The loop did not spin on the pending connection. */
	assert_true(cpu_ms < 150);
	assert_int_equal(fx->calls, 0);

	/* With descriptors back, the waiting client is served. */
	assert_true(test_read(fx, fd, buf, sizeof(buf), 0, 2000) >= 0);
	assert_string_equal(buf, "echo:ping\n");
	(void)close(fd);
}

static void
test_close_with_clients(void **state)
{
	struct fixture *fx = *state;
	char buf[64];
	int a, b, c;

	test_open(fx);
	fx->mode = MODE_WATCH;
	a = test_connect(fx->path);
	test_send(a, "watch\n", 6);
	assert_true(test_pump_until(fx, &fx->calls, 1, 2000));
	fx->mode = MODE_DEFER;
	b = test_connect(fx->path);
	test_send(b, "resign\n", 7);
	c = test_connect(fx->path);
	assert_true(test_pump_until(fx, &fx->calls, 2, 2000));
	assert_int_equal(ctl_clients(fx->ctl), 3);
	ctl_close(fx->ctl);
	fx->ctl = NULL;
	assert_int_equal(access(fx->path, F_OK), -1);
	assert_int_equal(test_read(fx, a, buf, sizeof(buf), 0, 1000), 0);
	assert_int_equal(test_read(fx, b, buf, sizeof(buf), 0, 1000), 0);
	(void)close(a);
	(void)close(b);
	(void)close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)
		T(test_command_and_reply),
		T(test_half_close_gets_late_answer),
		T(test_eof_without_newline),
		T(test_line_limits),
		T(test_endless_line),
		T(test_nul_and_junk),
		T(test_idle_client_dropped),
		T(test_stale_socket_replaced),
		T(test_live_socket_refused),
		T(test_not_a_socket),
		T(test_mode_and_group),
		T(test_parent_created_and_unlinked),
		T(test_path_too_long),
		T(test_max_clients),
		T(test_reply_to_gone_client),
		T(test_watch_and_broadcast),
		T(test_watcher_half_close),
		T(test_half_closed_watchers_that_close_hold_no_place),
		T(test_watcher_that_never_reads),
		T(test_fd_exhaustion),
		T(test_close_with_clients),
#undef T
	};

	/* As the daemon does: a closed client is an error, not a signal. */
	(void)signal(SIGPIPE, SIG_IGN);
	log_init("test_ctl", LOG_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
