/*
 * The daemon's only global: where log lines go and which are kept.
 * Lines go to stderr, each with one write(), so that lines from
 * ZooKeeper's threads never interleave with the loop's; when
 * JOURNAL_STREAM is set (systemd captured stderr) each line starts with
 * "<N>" so the journal records its priority, otherwise with an RFC 3339
 * UTC time to the millisecond.
 *
 * A stderr that is not a file (a pipe, the journal's stream socket, a
 * terminal) fills when its reader stalls: a hung journald, a stopped
 * `| logger`, a hook that floods it. A write there would block the event
 * loop, and with it every demote the lease asks for, so a line goes out
 * only when it fits now (poll() says the pipe has room, a socket takes
 * MSG_DONTWAIT); one that does not is dropped and counted, and the next
 * line that fits is preceded by how many were lost. A regular file is
 * written as before (a full disk fails at once), and fatal()'s last words
 * wait up to a second for room.
 *
 * A library that repeats itself (ZooKeeper's client, retrying a server
 * that is down, logs two lines every few hundred milliseconds) goes
 * through log_collapse(): a line seen again soon after is counted instead
 * of written, and "... repeated N more times" follows once the run ends
 * (log_collapse_flush()) or once a minute while it lasts.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

#define LOG_MSG_MAX		2048
#define LOG_REPEAT_SLOTS	8	/* distinct lines remembered */
#define LOG_REPEAT_TEXT		512	/* compared and kept of each */
#define LOG_REPEAT_MS		60000	/* a count is written at least this often */
#define LOG_FATAL_WAIT_MS	1000	/* fatal()'s line waits this long for room */

/* What stderr is, which says how a line is written without blocking. */
enum log_out {
	LOG_OUT_UNKNOWN,
	LOG_OUT_FILE,		/* a regular file: write() */
	LOG_OUT_SOCKET,		/* the journal's stream: send(MSG_DONTWAIT) */
	LOG_OUT_STREAM,		/* a pipe, a FIFO, a terminal: poll(), write() */
};

struct log_repeat {
	const char *tag;	/* NULL: free slot */
	int prio;
	char text[LOG_REPEAT_TEXT];
	unsigned long count;	/* times seen since last written */
	int64_t written;	/* when the line or its count was written */
	int64_t seen;		/* when it came last */
};

static struct {
	const char *progname;
	int level;
	int journal;
	/* ZooKeeper's threads log too: the table is behind the lock. */
	pthread_mutex_t lock;
	struct log_repeat repeats[LOG_REPEAT_SLOTS];
	/* And the writing behind this one (taken after lock, never before). */
	pthread_mutex_t wlock;
	enum log_out out;
	unsigned long dropped;	/* lines lost since the last one written */
	int cut;		/* a line went out cut short: end it first */
} logger = { "zkelectd", LOG_INFO, 0, PTHREAD_MUTEX_INITIALIZER, { { 0 } },
    PTHREAD_MUTEX_INITIALIZER, LOG_OUT_UNKNOWN, 0, 0 };

static const struct {
	const char *name;
	int level;
} log_levels[] = {
	{ "debug", LOG_DEBUG },
	{ "info", LOG_INFO },
	{ "notice", LOG_NOTICE },
	{ "warning", LOG_WARNING },
	{ "err", LOG_ERR },
};

void
log_init(const char *progname, int level)
{
	logger.progname = progname;
	__atomic_store_n(&logger.level, level, __ATOMIC_RELAXED);
	logger.journal = getenv("JOURNAL_STREAM") != NULL;
	/* What stderr is, found at the first line written. */
	logger.out = LOG_OUT_UNKNOWN;
}

void
log_setlevel(int level)
{
	/* ZooKeeper's threads log too: the level is read atomically. */
	__atomic_store_n(&logger.level, level, __ATOMIC_RELAXED);
}

int
log_getlevel(void)
{
	return __atomic_load_n(&logger.level, __ATOMIC_RELAXED);
}

int
log_level_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (strcasecmp(name, log_levels[i].name) == 0)
			return log_levels[i].level;
	return -1;
}

const char *
log_level_name(int level)
{
	size_t i;

	for (i = 0; i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (log_levels[i].level == level)
			return log_levels[i].name;
	return "unknown";
}

int64_t
log_stamp(void)
{
	struct timespec ts;

	if (__atomic_load_n(&logger.level, __ATOMIC_RELAXED) < LOG_DEBUG ||
	    clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
log_stamp_offset(void)
{
	struct timespec mono, real;

	if (clock_gettime(CLOCK_MONOTONIC, &mono) == -1 ||
	    clock_gettime(CLOCK_REALTIME, &real) == -1)
		return 0;
	return ((int64_t)real.tv_sec - mono.tv_sec) * 1000000 +
	    (real.tv_nsec - mono.tv_nsec) / 1000;
}

static enum log_out
log_out_kind(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) == -1)
		return LOG_OUT_STREAM;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return LOG_OUT_FILE;
	if (S_ISSOCK(st.st_mode))
		return LOG_OUT_SOCKET;
	return LOG_OUT_STREAM;
}

/*
 * One write of what fits now (or within wait_ms); -1 with EAGAIN when
 * nothing does.
 */
static ssize_t
log_try(const char *buf, size_t len, int wait_ms)
{
	struct pollfd pfd;
	ssize_t n;
	int r;

	for (;;) {
		if (logger.out == LOG_OUT_FILE)
			n = write(STDERR_FILENO, buf, len);
		else if (logger.out == LOG_OUT_SOCKET) {
			n = send(STDERR_FILENO, buf, len,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n == -1 && errno == ENOTSOCK) {
				logger.out = LOG_OUT_STREAM;
				continue;
			}
			if (n == -1 && (errno == EAGAIN ||
			    errno == EWOULDBLOCK) && wait_ms > 0) {
				pfd.fd = STDERR_FILENO;
				pfd.events = POLLOUT;
				if (poll(&pfd, 1, wait_ms) == 1) {
					wait_ms = 0;
					continue;
				}
				errno = EAGAIN;
			}
		} else {
			/*
			 * A pipe with room takes a line of up to PIPE_BUF
			 * bytes whole (ours are shorter) without blocking.
			 */
			pfd.fd = STDERR_FILENO;
			pfd.events = POLLOUT;
			r = poll(&pfd, 1, wait_ms);
			if (r == -1 && errno == EINTR)
				continue;
			if (r == 0) {
				errno = EAGAIN;
				return -1;
			}
			if (r == -1)
				return -1;
			if ((pfd.revents & POLLOUT) == 0) {
				/* POLLERR, POLLHUP: no reader any more. */
				errno = EPIPE;
				return -1;
			}
			n = write(STDERR_FILENO, buf, len);
		}
		if (n == -1 && errno == EINTR)
			continue;
		return n;
	}
}

/* As much of buf as fits now (or within wait_ms): how much went out. */
static size_t
log_some(const char *buf, size_t len, int wait_ms)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = log_try(buf + done, len - done, wait_ms);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

static size_t log_format(char *line, size_t size, int prio, const char *msg);

/*
 * Writes a whole line to stderr, one write() but for a short one, never
 * waiting for a reader (wait_ms: fatal()'s last words). A line that does
 * not fit is dropped and counted; one cut short is ended by the next.
 * Called with wlock.
 */
static void
log_write_locked(const char *buf, size_t len, int wait_ms)
{
	char note[160], line[256];
	size_t n, w;

	if (logger.out == LOG_OUT_UNKNOWN)
		logger.out = log_out_kind();
	if (logger.cut) {
		if (log_some("\n", 1, wait_ms) != 1) {
			logger.dropped++;
			return;
		}
		logger.cut = 0;
	}
	if (logger.dropped > 0) {
		(void)snprintf(note, sizeof(note), "%lu log line%s dropped: "
		    "stderr was full (its reader stalled)", logger.dropped,
		    logger.dropped == 1 ? "" : "s");
		n = log_format(line, sizeof(line), LOG_WARNING, note);
		if ((w = log_some(line, n, wait_ms)) != n) {
			logger.cut = w > 0;
			logger.dropped++;
			return;
		}
		logger.dropped = 0;
	}
	if ((w = log_some(buf, len, wait_ms)) != len) {
		logger.cut = w > 0;
		logger.dropped++;
	}
}

static void
log_write(const char *buf, size_t len, int wait_ms)
{
	if (pthread_mutex_lock(&logger.wlock) != 0)
		return;
	log_write_locked(buf, len, wait_ms);
	(void)pthread_mutex_unlock(&logger.wlock);
}

/* The line as it goes out, newline included: its length. */
static size_t
log_format(char *line, size_t size, int prio, const char *msg)
{
	char when[40] = "";
	struct timespec ts;
	struct tm tm;
	size_t len;
	int n;

	if (logger.journal)
		n = snprintf(line, size, "<%d>%s\n", prio, msg);
	else {
		/* The journal has its own clock; a terminal or file does not. */
		if (clock_gettime(CLOCK_REALTIME, &ts) == 0 &&
		    gmtime_r(&ts.tv_sec, &tm) != NULL &&
		    (len = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S",
		    &tm)) > 0)
			(void)snprintf(when + len, sizeof(when) - len,
			    ".%03dZ ", (int)(ts.tv_nsec / 1000000));
		n = snprintf(line, size, "%s%s: %s\n", when, logger.progname,
		    msg);
	}
	if (n < 0)
		return 0;
	if ((size_t)n >= size) {
		n = (int)size - 1;
		line[n - 1] = '\n';
	}
	return (size_t)n;
}

static void
log_vmsg_wait(int prio, int wait_ms, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX], line[LOG_MSG_MAX + 64];
	unsigned char *p;
	size_t n;
	int saved = errno;

	if (prio > __atomic_load_n(&logger.level, __ATOMIC_RELAXED))
		return;
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	/* A line stays one line, whatever a peer or a hook put in it. */
	for (p = (unsigned char *)msg; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			*p = '?';
	if ((n = log_format(line, sizeof(line), prio, msg)) > 0)
		log_write(line, n, wait_ms);
	errno = saved;
}

void
log_vmsg(int prio, const char *fmt, va_list ap)
{
	log_vmsg_wait(prio, 0, fmt, ap);
}

/* Called with the lock held. */
static void
log_repeat_report(struct log_repeat *r, int64_t now)
{
	if (r->count > 0)
		log_msg(r->prio, "%s: ... repeated %lu more time%s: %s", r->tag,
		    r->count, r->count == 1 ? "" : "s", r->text);
	r->count = 0;
	r->written = now;
}

void
log_collapse(int prio, const char *tag, const char *text)
{
	struct log_repeat *r, *slot = NULL;
	int64_t now;
	size_t i;

	if (prio > __atomic_load_n(&logger.level, __ATOMIC_RELAXED))
		return;
	if (pthread_mutex_lock(&logger.lock) != 0) {
		log_msg(prio, "%s: %s", tag, text);
		return;
	}
	now = now_ms();
	for (i = 0; i < LOG_REPEAT_SLOTS; i++) {
		r = &logger.repeats[i];
		if (r->tag != NULL && strcmp(r->tag, tag) == 0 &&
		    strncmp(r->text, text, sizeof(r->text) - 1) == 0 &&
		    strlen(r->text) == strnlen(text, sizeof(r->text) - 1)) {
			if (now - r->seen >= LOG_REPEAT_MS) {
				/* The run had ended: this starts another. */
				log_repeat_report(r, now);
				r->seen = now;
				log_msg(prio, "%s: %s", tag, text);
				goto out;
			}
			r->count++;
			r->seen = now;
			if (now - r->written >= LOG_REPEAT_MS)
				log_repeat_report(r, now);
			goto out;
		}
		/* A free slot, else the one that came longest ago. */
		if (slot == NULL || (slot->tag != NULL &&
		    (r->tag == NULL || r->seen < slot->seen)))
			slot = r;
	}
	if (slot->tag != NULL)
		log_repeat_report(slot, now);
	slot->tag = tag;
	slot->prio = prio;
	(void)snprintf(slot->text, sizeof(slot->text), "%s", text);
	slot->count = 0;
	slot->written = slot->seen = now;
	log_msg(prio, "%s: %s", tag, text);
out:
	(void)pthread_mutex_unlock(&logger.lock);
}

void
log_collapse_flush(void)
{
	int64_t now = now_ms();
	size_t i;

	if (pthread_mutex_lock(&logger.lock) != 0)
		return;
	for (i = 0; i < LOG_REPEAT_SLOTS; i++) {
		if (logger.repeats[i].tag == NULL)
			continue;
		log_repeat_report(&logger.repeats[i], now);
		logger.repeats[i].tag = NULL;
	}
	(void)pthread_mutex_unlock(&logger.lock);
}

void
log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(prio, fmt, ap);
	va_end(ap);
}

static void LOG_PRINTF(3, 4)
log_msg_wait(int prio, int wait_ms, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg_wait(prio, wait_ms, fmt, ap);
	va_end(ap);
}

static void
log_vwarn(int prio, int wait_ms, const char *fmt, va_list ap)
{
	char buf[1536];
	int saved = errno;

	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg_wait(prio, wait_ms, "%s: %s", buf, strerror(saved));
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwarn(LOG_WARNING, 0, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_NOTICE, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwarn(LOG_CRIT, LOG_FATAL_WAIT_MS, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg_wait(LOG_CRIT, LOG_FATAL_WAIT_MS, fmt, ap);
	va_end(ap);
	exit(1);
}
