/* Logging to stderr, with syslog priority prefixes under the journal. */
#ifndef ZKELECTD_LOG_H
#define ZKELECTD_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <syslog.h>

#define LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))

void log_init(const char *progname, int level);
void log_setlevel(int level);
int log_getlevel(void);
/* Parses "debug", "info", "notice", "warning", "err"; -1 when unknown. */
int log_level_parse(const char *name);
const char *log_level_name(int level);

/*
 * CLOCK_MONOTONIC in microseconds while debug lines are kept, else 0
 * without reading a clock: the stamps of the handover's trace (the "trace"
 * debug lines) cost one load and a compare at the other levels.
 * Thread-safe.
 */
int64_t log_stamp(void);
/* CLOCK_REALTIME minus CLOCK_MONOTONIC, in microseconds, read now. */
int64_t log_stamp_offset(void);

void log_msg(int prio, const char *fmt, ...) LOG_PRINTF(2, 3);
void log_vmsg(int prio, const char *fmt, va_list ap) LOG_PRINTF(2, 0);
/*
 * "tag: text", unless the same line came a moment ago: then it is counted,
 * and "tag: ... repeated N more times: text" is written once a minute and
 * by log_collapse_flush(), which ends every run. Thread-safe.
 */
void log_collapse(int prio, const char *tag, const char *text);
void log_collapse_flush(void);
void log_warn(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_warnx(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_notice(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_info(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_debug(const char *fmt, ...) LOG_PRINTF(1, 2);
__attribute__((noreturn)) void fatal(const char *fmt, ...) LOG_PRINTF(1, 2);
__attribute__((noreturn)) void fatalx(const char *fmt, ...) LOG_PRINTF(1, 2);

#endif
