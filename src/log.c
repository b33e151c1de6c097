/*
 * The daemon's only global: where log lines go and which are kept.
 * Lines go to stderr, each with one write(), so that lines from
 * ZooKeeper's threads never interleave with the loop's; when
 * JOURNAL_STREAM is set (systemd captured stderr) each line starts with
 * "<N>" so the journal records its priority, otherwise with an RFC 3339
 * UTC time to the millisecond.
 *
 * A library that repeats itself (ZooKeeper's client, retrying a server
 * that is down, logs two lines every few hundred milliseconds) goes
 * through log_collapse(): a line seen again soon after is counted instead
 * of written, and "... repeated N more times" follows once the run ends
 * (log_collapse_flush()) or once a minute while it lasts.
 */
#include <errno.h>
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
} logger = { "zkelectd", LOG_INFO, 0, PTHREAD_MUTEX_INITIALIZER, { { 0 } } };

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

/* Writes all of buf to stderr; a line is one write() but for a short one. */
static void
log_write(const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(STDERR_FILENO, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

void
log_vmsg(int prio, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX], line[LOG_MSG_MAX + 64], when[40] = "";
	struct timespec ts;
	struct tm tm;
	unsigned char *p;
	size_t len;
	int saved = errno, n;

	if (prio > __atomic_load_n(&logger.level, __ATOMIC_RELAXED))
		return;
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	/* A line stays one line, whatever a peer or a hook put in it. */
	for (p = (unsigned char *)msg; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			*p = '?';
	if (logger.journal)
		n = snprintf(line, sizeof(line), "<%d>%s\n", prio, msg);
	else {
		/* The journal has its own clock; a terminal or file does not. */
		if (clock_gettime(CLOCK_REALTIME, &ts) == 0 &&
		    gmtime_r(&ts.tv_sec, &tm) != NULL &&
		    (len = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S",
		    &tm)) > 0)
			(void)snprintf(when + len, sizeof(when) - len,
			    ".%03dZ ", (int)(ts.tv_nsec / 1000000));
		n = snprintf(line, sizeof(line), "%s%s: %s\n", when,
		    logger.progname, msg);
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	log_write(line, (size_t)n);
	errno = saved;
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

static void
log_vwarn(int prio, const char *fmt, va_list ap)
{
	char buf[1536];
	int saved = errno;

	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	log_msg(prio, "%s: %s", buf, strerror(saved));
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwarn(LOG_WARNING, fmt, ap);
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
	log_vwarn(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
