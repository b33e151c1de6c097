/*
 * Validators written from the formats' specifications, independently of
 * the daemon's own escaping code, so that a bug there is not mirrored.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "log.h"

static char fuzz_tmp[64];

const char *
fuzz_dir(void)
{
	if (fuzz_tmp[0] == '\0') {
		(void)snprintf(fuzz_tmp, sizeof(fuzz_tmp), "/tmp/zkfuzz.XXXXXX");
		if (mkdtemp(fuzz_tmp) == NULL)
			FUZZ_FAIL("mkdtemp: %s", strerror(errno));
		/* Quiet: the harnesses judge answers, not log lines. */
		log_init("zkelectd-fuzz", LOG_CRIT);
		(void)signal(SIGPIPE, SIG_IGN);
	}
	return fuzz_tmp;
}

void
fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FUZZ ASSERTION FAILED at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void
fuzz_expect(const char *why, const char *what, const char *text)
{
	if (why != NULL)
		FUZZ_FAIL("%s: %s in:\n%s", what, why, text);
}

/* Length of the well-formed sequence at p, 0 when there is none; *cp. */
static size_t
fuzz_utf8_one(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return len;
}

static const char *
fuzz_utf8_scan(const char *s, size_t n, int controls)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;
	uint32_t c;

	while (i < n) {
		if ((len = fuzz_utf8_one(p + i, n - i, &c)) == 0)
			return "invalid UTF-8";
		if (!controls && (c < 0x20 || (c >= 0x7f && c <= 0x9f)))
			return "control character";
		i += len;
	}
	return NULL;
}

const char *
fuzz_utf8(const char *s, size_t n)
{
	return fuzz_utf8_scan(s, n, 1);
}

const char *
fuzz_clean(const char *s, size_t n)
{
	return fuzz_utf8_scan(s, n, 0);
}

/* JSON */

struct fuzz_json {
	const char *p;
	int depth;
};

static void
fuzz_json_ws(struct fuzz_json *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int
fuzz_json_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

static const char *
fuzz_json_string(struct fuzz_json *j)
{
	const unsigned char *p = (const unsigned char *)j->p + 1;
	size_t len;
	uint32_t c;
	int i;

	for (;;) {
		if (*p == '"')
			break;
		if (*p == '\0')
			return "unterminated string";
		if (*p < 0x20)
			return "raw control character in a string";
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (i = 1; i <= 4; i++)
					if (!fuzz_json_hex((char)p[i]))
						return "bad \\u escape";
				p += 5;
				continue;
			}
			if (strchr("\"\\/bfnrt", *p) == NULL || *p == '\0')
				return "bad escape";
			p++;
			continue;
		}
		if ((len = fuzz_utf8_one(p, strlen((const char *)p), &c)) == 0)
			return "invalid UTF-8 in a string";
		p += len;
	}
	j->p = (const char *)p + 1;
	return NULL;
}

static const char *
fuzz_json_number(struct fuzz_json *j)
{
	const char *p = j->p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return "bad number";
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return "bad fraction";
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return "bad exponent";
		while (*p >= '0' && *p <= '9')
			p++;
	}
	j->p = p;
	return NULL;
}

static const char *fuzz_json_value(struct fuzz_json *);

static const char *
fuzz_json_list(struct fuzz_json *j, char close, int object)
{
	const char *why;

	j->p++;
	fuzz_json_ws(j);
	if (*j->p == close) {
		j->p++;
		return NULL;
	}
	for (;;) {
		if (object) {
			if (*j->p != '"')
				return "object key is not a string";
			if ((why = fuzz_json_string(j)) != NULL)
				return why;
			fuzz_json_ws(j);
			if (*j->p++ != ':')
				return "missing ':'";
			fuzz_json_ws(j);
		}
		if ((why = fuzz_json_value(j)) != NULL)
			return why;
		fuzz_json_ws(j);
		if (*j->p == close) {
			j->p++;
			return NULL;
		}
		if (*j->p++ != ',')
			return "missing ',' or closing bracket";
		fuzz_json_ws(j);
	}
}

static const char *
fuzz_json_value(struct fuzz_json *j)
{
	const char *why;

	if (++j->depth > 64)
		return "nested too deep";
	switch (*j->p) {
	case '{':
		why = fuzz_json_list(j, '}', 1);
		break;
	case '[':
		why = fuzz_json_list(j, ']', 0);
		break;
	case '"':
		why = fuzz_json_string(j);
		break;
	case 't':
	case 'f':
	case 'n':
		why = "bad literal";
		if (strncmp(j->p, "true", 4) == 0 ||
		    strncmp(j->p, "null", 4) == 0) {
			j->p += 4;
			why = NULL;
		} else if (strncmp(j->p, "false", 5) == 0) {
			j->p += 5;
			why = NULL;
		}
		break;
	default:
		why = fuzz_json_number(j);
		break;
	}
	j->depth--;
	return why;
}

const char *
fuzz_json(const char *s)
{
	struct fuzz_json j = { s, 0 };
	const char *why;

	fuzz_json_ws(&j);
	if ((why = fuzz_json_value(&j)) != NULL)
		return why;
	if (strcmp(j.p, "\n") != 0 && *j.p != '\0')
		return "junk after the JSON value";
	return NULL;
}

/* Status lines */

static int
fuzz_shell_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("._:/@%+,=-", c) != NULL);
}

/* One value, up to its newline: decoded into val when val is not NULL. */
static const char *
fuzz_status_value(const char *p, const char *end, char *val, size_t vlen)
{
	size_t o = 0;
	int quoted = 0;

	if (p < end && *p == '\'')
		quoted = 1;
	while (p < end) {
		if (quoted && *p == '\'') {
			p++;
			while (p < end && *p != '\'') {
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					return "control byte in a value";
				if (val != NULL && o + 1 < vlen)
					val[o++] = *p;
				p++;
			}
			if (p == end)
				return "unterminated quote";
			p++;
			if (p < end && strncmp(p, "\\''", 3) == 0 &&
			    end - p >= 3) {
				if (val != NULL && o + 1 < vlen)
					val[o++] = '\'';
				p += 2;		/* the next quoted part */
				continue;
			}
			if (p != end)
				return "text after a closing quote";
		} else if (!quoted) {
			if (!fuzz_shell_safe((unsigned char)*p))
				return "unsafe character in a bare value";
			if (val != NULL && o + 1 < vlen)
				val[o++] = *p;
			p++;
		} else
			return "bad quoting";
	}
	if (val != NULL && vlen > 0)
		val[o] = '\0';
	return NULL;
}

const char *
fuzz_status(const char *s, const char *key, char *val, size_t vlen)
{
	const char *p = s, *nl, *eq, *k, *why;
	int found = 0;

	if ((why = fuzz_utf8(s, strlen(s))) != NULL)
		return why;
	while (*p != '\0') {
		if ((nl = strchr(p, '\n')) == NULL)
			return "last line without a newline";
		if ((eq = memchr(p, '=', (size_t)(nl - p))) == NULL || eq == p)
			return "line is not key=value";
		for (k = p; k < eq; k++)
			if (!((*k >= 'a' && *k <= 'z') || *k == '_'))
				return "bad key";
		if (key != NULL && strlen(key) == (size_t)(eq - p) &&
		    strncmp(key, p, (size_t)(eq - p)) == 0) {
			found = 1;
			why = fuzz_status_value(eq + 1, nl, val, vlen);
		} else
			why = fuzz_status_value(eq + 1, nl, NULL, 0);
		if (why != NULL)
			return why;
		p = nl + 1;
	}
	if (key != NULL && !found)
		return "key missing";
	return NULL;
}

/* Metrics */

static int
fuzz_metric_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == ':' || (!first && c >= '0' && c <= '9');
}

static const char *
fuzz_metric_name(const char **pp)
{
	const char *p = *pp;

	if (!fuzz_metric_name_char(*p, 1))
		return "bad metric name";
	while (fuzz_metric_name_char(*p, 0))
		p++;
	*pp = p;
	return NULL;
}

static const char *
fuzz_metric_labels(const char **pp)
{
	const char *p = *pp + 1;

	if (*p == '}') {
		*pp = p + 1;
		return NULL;
	}
	for (;;) {
		if (!fuzz_metric_name_char(*p, 1) || *p == ':')
			return "bad label name";
		while (fuzz_metric_name_char(*p, 0) && *p != ':')
			p++;
		if (*p++ != '=' || *p++ != '"')
			return "label without =\"";
		while (*p != '"') {
			if (*p == '\n' || *p == '\0')
				return "unterminated label value";
			if (*p == '\\') {
				p++;
				if (*p != '\\' && *p != '"' && *p != 'n')
					return "bad escape in a label value";
			}
			p++;
		}
		p++;
		if (*p == '}') {
			*pp = p + 1;
			return NULL;
		}
		if (*p++ != ',')
			return "missing ',' between labels";
	}
}

static const char *
fuzz_metric_value(const char *p, const char *end)
{
	char buf[64], *e;
	size_t n = (size_t)(end - p);

	if (n == 0 || n >= sizeof(buf))
		return "bad sample value";
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (strcmp(buf, "+Inf") == 0 || strcmp(buf, "-Inf") == 0 ||
	    strcmp(buf, "NaN") == 0)
		return NULL;
	(void)strtod(buf, &e);
	if (*e != '\0' || strchr(buf, ' ') != NULL)
		return "bad sample value";
	return NULL;
}

const char *
fuzz_metrics(const char *s)
{
	const char *p = s, *nl, *why;

	if ((why = fuzz_utf8(s, strlen(s))) != NULL)
		return why;
	while (*p != '\0') {
		if ((nl = strchr(p, '\n')) == NULL)
			return "last line without a newline";
		if (strncmp(p, "# HELP ", 7) == 0) {
			p += 7;
			if ((why = fuzz_metric_name(&p)) != NULL)
				return why;
			if (*p != ' ' || p + 1 >= nl)
				return "HELP without text";
		} else if (strncmp(p, "# TYPE ", 7) == 0) {
			p += 7;
			if ((why = fuzz_metric_name(&p)) != NULL)
				return why;
			if (*p++ != ' ')
				return "TYPE without a type";
			if (!((nl - p == 7 && strncmp(p, "counter", 7) == 0) ||
			    (nl - p == 5 && strncmp(p, "gauge", 5) == 0) ||
			    (nl - p == 9 && strncmp(p, "histogram", 9) == 0) ||
			    (nl - p == 7 && strncmp(p, "summary", 7) == 0) ||
			    (nl - p == 7 && strncmp(p, "untyped", 7) == 0)))
				return "unknown TYPE";
		} else {
			if ((why = fuzz_metric_name(&p)) != NULL)
				return why;
			if (*p == '{' && (why = fuzz_metric_labels(&p)) != NULL)
				return why;
			if (p > nl)
				return "labels run past the line";
			if (*p++ != ' ')
				return "no space before the value";
			if ((why = fuzz_metric_value(p, nl)) != NULL)
				return why;
		}
		p = nl + 1;
	}
	return NULL;
}
