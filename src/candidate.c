/*
 * Candidate node names and the key=value data ZooKeeper nodes carry.
 * Names are candidate-<16 hex session id>_<sequence>; the order is the
 * sequence as a number, never the name as a string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "util.h"

#define CANDIDATE_PREFIX "candidate-"


/* "<16 lowercase hex digits>_", a session id as names carry it. */
static const char *
candidate_sid(const char *p, int64_t *sid)
{
	int i;

	*sid = 0;
	for (i = 0; i < 16; i++, p++) {
		if (*p >= '0' && *p <= '9')
			*sid = (int64_t)(((uint64_t)*sid << 4) |
			    (uint64_t)(*p - '0'));
		else if (*p >= 'a' && *p <= 'f')
			*sid = (int64_t)(((uint64_t)*sid << 4) |
			    (uint64_t)(*p - 'a' + 10));
		else
			return NULL;
	}
	return *p == '_' ? p + 1 : NULL;
}

int
candidate_parse(const char *name, struct candidate *out)
{
	return candidate_parse_as(name, CANDIDATE_PREFIX, out);
}

int
candidate_parse_as(const char *name, const char *prefix,
    struct candidate *out)
{
	const char *p = name;
	int64_t sid, v = 0;
	int neg = 0, digits = 0;

	if (strncmp(p, prefix, strlen(prefix)) != 0)
		return -1;
	if ((p = candidate_sid(p + strlen(prefix), &sid)) == NULL)
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 12)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (*p != '\0' || digits == 0)
		return -1;
	/*
	 * ZooKeeper formats the parent's int cversion with %010d: past
	 * 2147483647 it wraps to negative numbers, which come later.
	 */
	if (neg) {
		if (v > 2147483648LL)
			return -1;
		v = 4294967296LL - v;
	}
	out->name = name;
	out->sid = sid;
	out->seq = v;
	return 0;
}

static int
candidate_cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
candidate_order(char *const *names, int n, struct candidate *out)
{
	return candidate_order_as(names, n, CANDIDATE_PREFIX, out);
}

int
candidate_order_as(char *const *names, int n, const char *prefix,
    struct candidate *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (candidate_parse_as(names[i], prefix, &out[k]) == 0)
			k++;
	qsort(out, (size_t)k, sizeof(*out), candidate_cmp);
	return k;
}

size_t
candidate_clean(char *dst, size_t dstlen, const char *src, size_t n)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, o = 0, len;

	if (dstlen == 0)
		return 0;
	while (i < n && o + 1 < dstlen) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			dst[o++] = (char)p[i++];
			continue;
		}
		len = p[i] >= 0x80 ? utf8_seq(p + i, n - i) : 0;
		if (len == 0) {
			dst[o++] = '?';
			i++;
			continue;
		}
		if (o + len >= dstlen)
			break;		/* cut before a character, not inside */
		memcpy(dst + o, p + i, len);
		o += len;
		i += len;
	}
	dst[o] = '\0';
	return o;
}

void
candidate_kv(const char *text, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n;
	const char *p = text, *end;

	buf[0] = '\0';
	while (p != NULL && *p != '\0') {
		end = strchr(p, '\n');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			(void)candidate_clean(buf, len, p + klen + 1,
			    n - klen - 1);
			return;
		}
		p = end != NULL ? end + 1 : NULL;
	}
}

int
candidate_mark_parse(const char *name, int64_t *sid, int64_t *prio)
{
	const char *p, *why;

	if ((p = candidate_sid(name, sid)) == NULL || *p == '+' ||
	    parse_int64(p, -CANDIDATE_PRIORITY_MAX, CANDIDATE_PRIORITY_MAX,
	    prio, &why) == -1)
		return -1;
	return 0;
}

/*
 * The number under key in a node's data, or 0 when it is not a decimal
 * within [min, max]: a value cut to fit the buffer is too long to be one,
 * whatever is left.
 */
static int64_t
candidate_int(const char *text, const char *key, int64_t min, int64_t max)
{
	const char *why;
	char buf[32];
	int64_t v;

	candidate_kv(text, key, buf, sizeof(buf));
	if (strlen(buf) == sizeof(buf) - 1 ||
	    parse_int64(buf, min, max, &v, &why) == -1)
		return 0;
	return v;
}

int64_t
candidate_priority(const char *text)
{
	return candidate_int(text, "priority", -CANDIDATE_PRIORITY_MAX,
	    CANDIDATE_PRIORITY_MAX);
}

/*
 * An epoch written in E/leader or the breadcrumb (a czxid): untrusted, so
 * 0 (none) unless it is a decimal number that fits, never a value clamped
 * to INT64_MAX that a fence hook would take for a fencing token.
 */
int64_t
candidate_epoch(const char *text)
{
	return candidate_int(text, "epoch", 0, INT64_MAX);
}

int
candidate_outranking(int n, char *const *names, char *const *datas,
    int64_t floor, const char *skip1, const char *skip2)
{
	int64_t p;
	int i, best = -1;

	for (i = 0; i < n; i++) {
		if (datas[i] == NULL ||
		    (skip1 != NULL && strcmp(names[i], skip1) == 0) ||
		    (skip2 != NULL && strcmp(names[i], skip2) == 0))
			continue;
		if ((p = candidate_priority(datas[i])) > floor) {
			floor = p;
			best = i;
		}
	}
	return best;
}
