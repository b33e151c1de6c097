/*
 * A load generator for zkelectd's control socket. Each client is one
 * thread running blocking queries one after the other: connect, send the
 * command line, half-close (as zkelectctl and socat do), read until EOF,
 * close. The latency of a query is the whole of that, taken with
 * CLOCK_MONOTONIC.
 *
 * Closed loop (default): each client starts its next query as soon as the
 * last one ended, so the load is whatever the server sustains and, with N
 * clients, the mean latency is N / throughput (Little's law). Queries that
 * start after the warm-up and end before the end of the window count.
 * Open loop (-r RATE): the clients together start RATE queries a second
 * on a fixed schedule, each client every clients/RATE seconds, staggered.
 * A query's latency runs from the moment it was due, not from when a late
 * client got to send it, so a stall counts for every query it delayed;
 * every query due in the window counts, however late it ends.
 * The throughput is the number of counted queries divided by the window.
 *
 * The run is bounded in time (warm-up + duration, plus at most 5 s of
 * catching up in the open loop, then the rest is reported as missed) and
 * in count (at most -m queries per client). Each query has a socket
 * timeout, so a server that stops answering ends the run with errors
 * instead of a hang.
 *
 * Output: one line of key=value pairs on stdout; errors on stderr. The
 * exit status is 0 only when every query got the expected answer.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LG_MAX_CLIENTS		1024
#define LG_MAX_ANSWER		4096
#define LG_FIRST_ERRORS		5	/* errors printed per client */
#define LG_GRACE_NS		5000000000u	/* open loop: catching up */

struct lg_opts {
	const char *path;
	const char *command;
	const char *expect;	/* answer expected, NULL: any */
	int clients;
	double warmup_s;
	double duration_s;
	long max_per_client;
	int timeout_ms;
	int half_close;
	double rate;		/* open loop: queries/s of all clients, 0: closed */
};

struct lg_client {
	pthread_t thread;
	const struct lg_opts *o;
	struct sockaddr_un sun;
	uint64_t t_start;	/* ns, CLOCK_MONOTONIC: window start */
	uint64_t t_end;		/* window end */
	uint64_t t_first;	/* open loop: when the first query is due */
	uint64_t interval;	/* open loop: ns between queries, 0: closed */
	uint64_t *lat;		/* ns per measured query */
	size_t nlat;
	size_t caplat;
	long done;		/* queries finished, warm-up included */
	long errors;
	long measured_errors;
	long missed;		/* open loop: due queries never sent */
};

static void __attribute__((noreturn, format(printf, 1, 2)))
lg_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)fputs("loadgen: ", stderr);
	(void)vfprintf(stderr, fmt, ap);
	(void)fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static uint64_t
lg_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		lg_fatal("clock_gettime: %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
lg_sleep_until(uint64_t t)
{
	struct timespec ts;
	int rc;

	ts.tv_sec = (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
	    NULL)) == EINTR)
		;
	if (rc != 0)
		lg_fatal("clock_nanosleep: %s", strerror(rc));
}

static double
lg_number(const char *s, const char *what, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		lg_fatal("%s: %s is not a number in [%g, %g]", what, s, lo, hi);
	return v;
}

static void
lg_client_error(struct lg_client *c, int measured, const char *what,
    int err)
{
	c->errors++;
	if (measured)
		c->measured_errors++;
	if (c->errors <= LG_FIRST_ERRORS)
		(void)fprintf(stderr, "loadgen: %s: %s\n", what,
		    err != 0 ? strerror(err) : "unexpected answer");
}

/*
 * One query. Returns 0 when the whole answer arrived (and matched, when
 * an answer is expected), else -1 with errno-like *err (0: bad answer).
 */
static int
lg_query(struct lg_client *c, const char **what, int *err)
{
	const struct lg_opts *o = c->o;
	char buf[LG_MAX_ANSWER];
	struct timeval tv;
	size_t got = 0, len, off;
	ssize_t n;
	int fd, rc = -1;

	*err = 0;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		*what = "socket";
		*err = errno;
		return -1;
	}
	tv.tv_sec = o->timeout_ms / 1000;
	tv.tv_usec = (o->timeout_ms % 1000) * 1000;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1) {
		*what = "setsockopt";
		*err = errno;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&c->sun, sizeof(c->sun)) == -1) {
		*what = "connect";
		*err = errno;
		goto out;
	}
	len = strlen(o->command);
	for (off = 0; off < len; off += (size_t)n) {
		n = send(fd, o->command + off, len - off, MSG_NOSIGNAL);
		if (n == -1) {
			*what = "send";
			*err = errno;
			goto out;
		}
	}
	if (o->half_close && shutdown(fd, SHUT_WR) == -1) {
		*what = "shutdown";
		*err = errno;
		goto out;
	}
	for (;;) {
		if (got == sizeof(buf)) {
			*what = "answer longer than the buffer";
			goto out;
		}
		n = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			*what = "recv";
			*err = errno;
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (o->expect != NULL && (got != strlen(o->expect) ||
	    memcmp(buf, o->expect, got) != 0)) {
		*what = "answer";
		goto out;
	}
	rc = 0;
out:
	if (close(fd) == -1 && rc == 0) {
		*what = "close";
		*err = errno;
		rc = -1;
	}
	return rc;
}

static void *
lg_client_run(void *arg)
{
	struct lg_client *c = arg;
	const char *what;
	uint64_t t0, t1, due = c->t_first;
	int err, ok, measured;

	while (c->done < c->o->max_per_client) {
		if (c->interval != 0) {
			if (due >= c->t_end)
				break;
			/* Too far behind: give up, but say how much. */
			if ((t0 = lg_now()) > c->t_end + LG_GRACE_NS) {
				c->missed += (long)((c->t_end - due - 1) /
				    c->interval + 1);
				break;
			}
			if (t0 < due)
				lg_sleep_until(due);
			t0 = due;
			due += c->interval;
		} else if ((t0 = lg_now()) >= c->t_end)
			break;
		ok = lg_query(c, &what, &err) == 0;
		t1 = lg_now();
		c->done++;
		/*
		 * Open loop: every query due in the window counts, however
		 * late it ends. Closed loop: only the ones that ended in it
		 * (at most one a client is left out).
		 */
		measured = t0 >= c->t_start &&
		    (c->interval != 0 ? t0 < c->t_end : t1 <= c->t_end);
		if (!ok) {
			lg_client_error(c, measured, what, err);
			continue;
		}
		if (!measured)
			continue;
		if (c->nlat == c->caplat) {
			c->caplat = c->caplat ? c->caplat * 2 : 65536;
			if ((c->lat = realloc(c->lat, c->caplat *
			    sizeof(*c->lat))) == NULL)
				lg_fatal("out of memory for %zu samples",
				    c->caplat);
		}
		c->lat[c->nlat++] = t1 - t0;
	}
	return NULL;
}

static int
lg_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted samples, in microseconds. */
static double
lg_pct(const uint64_t *v, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1000.0;
}

static void __attribute__((noreturn))
lg_usage(void)
{
	(void)fprintf(stderr,
	    "usage: loadgen -s SOCKET [-c CLIENTS] [-d SECONDS] [-w SECONDS]\n"
	    "               [-C COMMAND] [-e ANSWER] [-m MAX_PER_CLIENT]\n"
	    "               [-r RATE] [-t TIMEOUT_MS] [-k]\n"
	    "  -c clients (threads), default 1      -d measured seconds, "
	    "default 10\n"
	    "  -w warm-up seconds, default 1        -C command, default "
	    "role\n"
	    "  -e expected answer line (checked)    -m queries per client, "
	    "default 10000000\n"
	    "  -r open loop: RATE queries/s in all, on a schedule "
	    "(default: closed loop)\n"
	    "  -t per-query socket timeout, ms, default 5000\n"
	    "  -k keep the write side open (no half-close)\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct lg_opts o = { NULL, "role", NULL, 1, 1.0, 10.0, 10000000, 5000,
	    1, 0 };
	struct lg_client *cl;
	char *cmd = NULL, *expect = NULL;
	uint64_t *all, t_launch, t_start, t_end;
	size_t n = 0, k;
	long errors = 0, merrors = 0, done = 0, missed = 0;
	struct rusage ru;
	double window, cpu_s, wall_s;
	int ch, i, rc;

	while ((ch = getopt(argc, argv, "s:c:d:w:C:e:m:r:t:k")) != -1) {
		switch (ch) {
		case 's':
			o.path = optarg;
			break;
		case 'c':
			o.clients = (int)lg_number(optarg, "-c", 1,
			    LG_MAX_CLIENTS);
			break;
		case 'd':
			o.duration_s = lg_number(optarg, "-d", 0.1, 3600);
			break;
		case 'w':
			o.warmup_s = lg_number(optarg, "-w", 0, 600);
			break;
		case 'C':
			o.command = optarg;
			break;
		case 'e':
			o.expect = optarg;
			break;
		case 'm':
			o.max_per_client = (long)lg_number(optarg, "-m", 1,
			    1e9);
			break;
		case 'r':
			o.rate = lg_number(optarg, "-r", 1, 1e7);
			break;
		case 't':
			o.timeout_ms = (int)lg_number(optarg, "-t", 1, 600000);
			break;
		case 'k':
			o.half_close = 0;
			break;
		default:
			lg_usage();
		}
	}
	if (optind != argc || o.path == NULL)
		lg_usage();
	/* The protocol is line-based: the command and answer end with \n. */
	if (asprintf(&cmd, "%s\n", o.command) == -1 ||
	    (o.expect != NULL && asprintf(&expect, "%s\n", o.expect) == -1))
		lg_fatal("out of memory");
	o.command = cmd;
	o.expect = expect;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		lg_fatal("signal: %s", strerror(errno));

	if ((cl = calloc((size_t)o.clients, sizeof(*cl))) == NULL)
		lg_fatal("out of memory");
	t_launch = lg_now();
	t_start = t_launch + (uint64_t)(o.warmup_s * 1e9);
	t_end = t_start + (uint64_t)(o.duration_s * 1e9);
	for (i = 0; i < o.clients; i++) {
		cl[i].o = &o;
		cl[i].sun.sun_family = AF_UNIX;
		if (strlen(o.path) >= sizeof(cl[i].sun.sun_path))
			lg_fatal("socket path too long: %s", o.path);
		memcpy(cl[i].sun.sun_path, o.path, strlen(o.path) + 1);
		cl[i].t_start = t_start;
		cl[i].t_end = t_end;
		if (o.rate > 0) {
			/* Each client every clients/rate s, staggered. */
			cl[i].interval = (uint64_t)(1e9 * o.clients / o.rate);
			if (cl[i].interval == 0)
				cl[i].interval = 1;
			cl[i].t_first = t_launch + cl[i].interval *
			    (uint64_t)i / (uint64_t)o.clients;
		}
		if ((rc = pthread_create(&cl[i].thread, NULL, lg_client_run,
		    &cl[i])) != 0)
			lg_fatal("pthread_create: %s", strerror(rc));
	}
	lg_sleep_until(t_end);
	for (i = 0; i < o.clients; i++) {
		if ((rc = pthread_join(cl[i].thread, NULL)) != 0)
			lg_fatal("pthread_join: %s", strerror(rc));
		n += cl[i].nlat;
		errors += cl[i].errors;
		merrors += cl[i].measured_errors;
		done += cl[i].done;
		missed += cl[i].missed;
	}
	if ((all = malloc((n ? n : 1) * sizeof(*all))) == NULL)
		lg_fatal("out of memory for %zu samples", n);
	for (i = 0, k = 0; i < o.clients; i++) {
		if (cl[i].nlat > 0)
			memcpy(all + k, cl[i].lat, cl[i].nlat * sizeof(*all));
		k += cl[i].nlat;
		free(cl[i].lat);
	}
	/* Our own share of the machine, to tell apart from the daemon's. */
	wall_s = (double)(lg_now() - t_launch) / 1e9;
	if (getrusage(RUSAGE_SELF, &ru) == -1)
		lg_fatal("getrusage: %s", strerror(errno));
	cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	qsort(all, n, sizeof(*all), lg_cmp);
	window = o.duration_s;
	(void)printf("clients=%d rate=%.0f duration_s=%.2f queries=%zu qps=%.0f "
	    "p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
	    "errors=%ld measured_errors=%ld missed=%ld total_queries=%ld "
	    "loadgen_cpu_pct=%.0f\n",
	    o.clients, o.rate, window, n, (double)n / window,
	    lg_pct(all, n, 50), lg_pct(all, n, 90), lg_pct(all, n, 99),
	    lg_pct(all, n, 99.9), n ? (double)all[n - 1] / 1000.0 : 0.0,
	    errors, merrors, missed, done, 100.0 * cpu_s / wall_s);
	free(all);
	free(cl);
	free(cmd);
	free(expect);
	return errors == 0 && missed == 0 && n > 0 ? 0 : 1;
}
