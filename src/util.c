/* Checked number parsing and clocks. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

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

int64_t
now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1 &&
	    clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		abort();
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
rfc3339(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)strncpy(buf, "1970-01-01T00:00:00Z", len - 1), buf[len - 1] = '\0';
}
