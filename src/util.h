/*
 * Checked number parsing, the socket's group, time rendering and label
 * escaping, shared by the daemon and the client.
 */
#ifndef ZKELECTD_UTIL_H
#define ZKELECTD_UTIL_H

#include <sys/types.h>

#include <spawn.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The clocks are clock.c's, below the logger; their users find them here. */
#include "clock.h"

/*
 * Parses a decimal integer in [min, max] with no trailing junk.
 * Returns 0, or -1 with *why set to a short reason ("not a number",
 * "out of range").
 */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why);
/*
 * A group as control.socket_group gives it: a name from the group
 * database, or else a number (chown(1)'s order). Returns 0, or -1 with
 * *why set ("no such group", or why the database could not answer).
 */
int parse_group(const char *s, gid_t *gid, const char **why);
/* Duration: a number with ms, s or m suffix; a bare number is ms. */
int parse_duration_ms(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why);

/* RFC 3339 UTC rendering of a wall-clock time, e.g. 2026-11-22T01:02:03Z. */
void rfc3339(time_t t, char *buf, size_t len);
/* The same with milliseconds, e.g. 2026-11-22T01:02:03.456Z. */
void rfc3339_ms(int64_t ms, char *buf, size_t len);
/* A candidate's election.id as configured: printable ASCII, 1 to 128. */
int id_valid(const char *s);
/*
 * Length of the well-formed UTF-8 sequence of two to four bytes at p (at
 * most n bytes), 0 when there is none: ASCII, overlong forms, surrogates,
 * code points past U+10FFFF and C1 controls (U+0080..U+009F) are not. The
 * one rule for what peers wrote (candidate_clean) and for label values.
 */
size_t utf8_seq(const unsigned char *p, size_t n);
/*
 * A label value of the Prometheus text format: backslash, double quote
 * and newline escaped, other control bytes and invalid UTF-8 replaced by
 * '?'. Caller frees.
 */
char *label_escape(const char *s);

/* A growing text: p is NUL-terminated once anything was added. */
struct textbuf {
	char *p;
	size_t len;
	size_t cap;
};
void textbuf_printf(struct textbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * posix_spawn()'s file actions and attributes, both made or neither:
 * 0, or the error (nothing to destroy then).
 */
int spawn_init(posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr);
/* The child's stdout and stderr to outfd, every descriptor above closed. */
int spawn_output(posix_spawn_file_actions_t *fa, int outfd);

#endif
