/*
 * floor2.py's measurement through the C client library, to weigh its two
 * builds against each other and against the bare client: a deletion's
 * notification between two processes, both asleep for the quiet before
 * it. The parent deletes (zoo_adelete, or a zoo_amulti of four deletes
 * like zkelectd's release, the last one watched); the child's watcher
 * stamps the event on CLOCK_MONOTONIC.
 *
 * With -DTHREADED, libzookeeper_mt as zkelectd uses it: the requests go
 * out on the library's I/O thread, the watcher runs on its completion
 * thread. Without, libzookeeper_st driven from one poll() loop per
 * process (zookeeper_interest, zookeeper_process), no threads: what a
 * threadless zkelectd could reach. Debian's libzookeeper-st-dev conflicts
 * with libzookeeper-mt-dev, but the library itself (libzookeeper-st2)
 * installs beside it and the header is the same:
 *
 *   cc -O2 -DTHREADED -o floor2-mt bench/failover/floor2.c -lzookeeper_mt
 *   apt-get install libzookeeper-st2
 *   cc -O2 -o floor2-st bench/failover/floor2.c \
 *       /usr/lib/x86_64-linux-gnu/libzookeeper_st.so.2
 *   ./floor2-mt HOST:PORT [N [MULTI]]
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <zookeeper/zookeeper.h>

static zhandle_t *zh;
static volatile int pending;
static volatile long long fired;
static int wake[2];		/* THREADED: the library's threads → main */

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
kick(void)
{
#ifdef THREADED
	(void)!write(wake[1], "x", 1);
#endif
}

static void
watcher(zhandle_t *h, int type, int state, const char *path, void *ctx)
{
	(void)h; (void)state; (void)path; (void)ctx;
	if (type == ZOO_DELETED_EVENT) {
		fired = now_ns();
		kick();
	}
}

static void
void_done(int rc, const void *d)
{
	(void)rc; (void)d;
	pending--;
	kick();
}

static void
string_done(int rc, const char *v, const void *d)
{
	(void)rc; (void)v; (void)d;
	pending--;
	kick();
}

static void
stat_done(int rc, const struct Stat *s, const void *d)
{
	(void)rc; (void)s; (void)d;
	pending--;
	kick();
}

static int
all_done(void)
{
	return pending == 0;
}

static int
was_fired(void)
{
	return fired != 0;
}

/* Runs the handle until cond() holds or MS pass. */
static void
pump(int ms, int (*cond)(void))
{
	long long end = now_ns() + (long long)ms * 1000000;
	struct pollfd p;
	int left;

	while (!(cond != NULL && cond()) && now_ns() < end) {
		left = (int)((end - now_ns()) / 1000000) + 1;
#ifdef THREADED
		p.fd = wake[0];
		p.events = POLLIN;
		if (poll(&p, 1, left) > 0) {
			char buf[64];

			(void)!read(wake[0], buf, sizeof(buf));
		}
#else
		int fd, ev, to;
		struct timeval tv;

		zookeeper_interest(zh, &fd, &ev, &tv);
		p.fd = fd;
		p.events = (ev & ZOOKEEPER_READ ? POLLIN : 0) |
		    (ev & ZOOKEEPER_WRITE ? POLLOUT : 0);
		p.revents = 0;
		to = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
		(void)poll(&p, 1, left < to ? left : to);
		zookeeper_process(zh,
		    (p.revents & (POLLIN | POLLHUP | POLLERR) ?
		    ZOOKEEPER_READ : 0) |
		    (p.revents & POLLOUT ? ZOOKEEPER_WRITE : 0));
#endif
	}
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The child: a watch on each path it is sent, the event's instant back. */
static void
child(int down, int up)
{
	char path[64];
	long long f;

	for (;;) {
		if (read(down, path, sizeof(path)) != sizeof(path))
			_exit(0);
		pending = 1;
		fired = 0;
		zoo_awexists(zh, path, watcher, NULL, stat_done, NULL);
		pump(5000, all_done);
		(void)!write(up, "k", 1);
		pump(30000, was_fired);
		f = fired;
		(void)!write(up, &f, sizeof(f));
	}
}

int
main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 30;
	int multi = argc > 3 && atoi(argv[3]), k = multi ? 4 : 1;
	int down[2], up[2], i, j;
	static char path[4][64];
	static zoo_op_t ops[4];
	static zoo_op_result_t res[4];
	double *r;
	pid_t pid;

	if (argc < 2 || (r = calloc((size_t)n, sizeof(*r))) == NULL) {
		fprintf(stderr, "usage: floor2 HOST:PORT [N [MULTI]]\n");
		return 2;
	}
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	if (pipe(down) == -1 || pipe(up) == -1)
		return 1;
	if ((pid = fork()) == -1)
		return 1;
	if (pipe(wake) == -1)
		return 1;
	zh = zookeeper_init(argv[1], NULL, 30000, 0, 0, 0);
	pump(1000, NULL);
	if (pid == 0)
		child(down[0], up[1]);
	pending = 1;
	zoo_acreate(zh, "/floor2", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0,
	    string_done, NULL);
	pump(2000, all_done);
	for (i = 0; i < n; i++) {
		char c;
		long long t, f;

		for (j = 0; j < k; j++) {
			snprintf(path[j], sizeof(path[j]), "/floor2/c%d-%d-%d",
			    (int)getpid(), i, j);
			pending++;
			zoo_acreate(zh, path[j], "x", 1, &ZOO_OPEN_ACL_UNSAFE,
			    ZOO_EPHEMERAL, string_done, NULL);
		}
		pump(2000, all_done);
		(void)!write(down[1], path[k - 1], sizeof(path[k - 1]));
		(void)!read(up[0], &c, 1);
		usleep(300000);
		t = now_ns();
		pending++;
		if (multi) {
			for (j = 0; j < 4; j++)
				zoo_delete_op_init(&ops[j], path[j], -1);
			zoo_amulti(zh, 4, ops, res, void_done, NULL);
		} else
			zoo_adelete(zh, path[0], -1, void_done, NULL);
		pump(2000, all_done);
		(void)!read(up[0], &f, sizeof(f));
		r[i] = (double)(f - t) / 1e6;
		usleep(50000);
	}
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
	qsort(r, (size_t)n, sizeof(*r), cmp);
#ifdef THREADED
	printf("libzookeeper_mt, two processes, ");
#else
	printf("libzookeeper_st, two processes, ");
#endif
	printf("%s: median %.2f ms, min %.2f, max %.2f\n",
	    multi ? "multi of four" : "delete", r[n / 2], r[0], r[n - 1]);
	zookeeper_close(zh);
	return 0;
}
