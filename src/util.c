/*
 * Checked number parsing, the socket's group, time rendering, the
 * escaping of metric labels, and posix_spawn()'s set-up shared by the
 * hooks and the re-exec's check.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "xmalloc.h"

int
parse_int64(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why)
{
	char *end;
	long long v;

	if (*s == '\0' || isspace((unsigned char)*s)) {
		*why = "not a number";
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0') {
		*why = "not a number";
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

int
parse_group(const char *s, gid_t *gid, const char **why)
{
	struct group *gr;
	const char *nwhy;
	int64_t n;

	errno = 0;
	if ((gr = getgrnam(s)) != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	/* getgrnam(3): each of these also means "not found". */
	if (errno != 0 && errno != ENOENT && errno != ESRCH &&
	    errno != EBADF && errno != EPERM) {
		*why = strerror(errno);
		return -1;
	}
	/* (gid_t)-1 is chown's "leave the group as it is". */
	if (parse_int64(s, 0, (int64_t)(gid_t)-1 - 1, &n, &nwhy) == 0) {
		*gid = (gid_t)n;
		return 0;
	}
	*why = "no such group";
	return -1;
}

int
parse_duration_ms(const char *s, int64_t min, int64_t max, int64_t *out,
    const char **why)
{
	char num[32];
	size_t len = strlen(s), digits;
	int64_t v, mult = 1;

	digits = strspn(s, "0123456789");
	if (digits == 0) {
		*why = (*s == '-') ? "must not be negative" :
		    "not a duration (use ms, s or m)";
		return -1;
	}
	if (strcmp(s + digits, "") == 0 || strcmp(s + digits, "ms") == 0)
		mult = 1;
	else if (strcmp(s + digits, "s") == 0)
		mult = 1000;
	else if (strcmp(s + digits, "m") == 0)
		mult = 60000;
	else {
		*why = "not a duration (use ms, s or m)";
		return -1;
	}
	if (digits >= sizeof(num) || len >= sizeof(num)) {
		*why = "out of range";
		return -1;
	}
	memcpy(num, s, digits);
	num[digits] = '\0';
	if (parse_int64(num, 0, INT64_MAX / 60000, &v, why) == -1)
		return -1;
	v *= mult;
	if (v < min || v > max) {
		*why = (v == 0) ? "must be greater than zero" : "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

void
rfc3339(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)strncpy(buf, "1970-01-01T00:00:00Z", len - 1), buf[len - 1] = '\0';
}

void
rfc3339_ms(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char sec[32];

	if (ms < 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		(void)strcpy(sec, "1970-01-01T00:00:00");
	(void)snprintf(buf, len, "%s.%03dZ", sec,
	    ms < 0 ? 0 : (int)(ms % 1000));
}

int
id_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

size_t
utf8_seq(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (n == 0)
		return 0;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	/* A NUL is no continuation byte: nothing past a string's end. */
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp < 0xa0)
		return 0;
	return len;
}

char *
label_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;
	size_t n;

	o = out = xmalloc(strlen(s) * 2 + 1);
	while (*p != '\0') {
		if (*p == '\\' || *p == '"') {
			*o++ = '\\';
			*o++ = (char)*p++;
		} else if (*p == '\n') {
			*o++ = '\\';
			*o++ = 'n';
			p++;
		} else if (*p < 0x20 || *p == 0x7f ||
		    (n = *p < 0x80 ? 1 : utf8_seq(p, 4)) == 0) {
			*o++ = '?';
			p++;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

void
textbuf_printf(struct textbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vasprintf");
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
	memcpy(b->p + b->len, s, (size_t)n + 1);
	b->len += (size_t)n;
	free(s);
}

int
spawn_init(posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr)
{
	int err;

	if ((err = posix_spawn_file_actions_init(fa)) != 0)
		return err;
	if ((err = posix_spawnattr_init(attr)) != 0)
		(void)posix_spawn_file_actions_destroy(fa);
	return err;
}

int
spawn_output(posix_spawn_file_actions_t *fa, int outfd)
{
	int err;

	if ((err = posix_spawn_file_actions_adddup2(fa, outfd,
	    STDOUT_FILENO)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(fa, outfd,
	    STDERR_FILENO)) != 0)
		return err;
	return posix_spawn_file_actions_addclosefrom_np(fa, STDERR_FILENO + 1);
}
