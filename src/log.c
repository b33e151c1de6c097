/*
 * The daemon's only global: where log lines go and which are kept.
 * Lines go to stderr; when JOURNAL_STREAM is set (systemd captured stderr)
 * each line starts with "<N>" so the journal records its priority.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"

static struct {
	const char *progname;
	int level;
	int journal;
} logger = { "zkelectd", LOG_INFO, 0 };

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

void
log_vmsg(int prio, const char *fmt, va_list ap)
{
	char buf[2048];
	int saved = errno;

	if (prio > __atomic_load_n(&logger.level, __ATOMIC_RELAXED))
		return;
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	if (logger.journal)
		(void)fprintf(stderr, "<%d>%s\n", prio, buf);
	else {
		struct timespec ts;
		struct tm tm;
		char when[32] = "";

		/* The journal has its own clock; a terminal or file does not. */
		if (clock_gettime(CLOCK_REALTIME, &ts) == 0 &&
		    gmtime_r(&ts.tv_sec, &tm) != NULL)
			(void)snprintf(when, sizeof(when),
			    "%02d:%02d:%02d.%03ld ", tm.tm_hour, tm.tm_min,
			    tm.tm_sec, ts.tv_nsec / 1000000);
		(void)fprintf(stderr, "%s%s: %s\n", when, logger.progname,
		    buf);
	}
	errno = saved;
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
