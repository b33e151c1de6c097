/*
 * Candidate names and node data, as read from ZooKeeper: candidate_parse,
 * candidate_order, candidate_clean and candidate_kv on arbitrary bytes.
 * Input: one byte sizing candidate_clean's buffer, one sizing
 * candidate_kv's, then the text (names are its lines).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "fuzz_check.h"
#include "xmalloc.h"

#define FUZZ_NAMES_MAX	64

/* The grammar, checked on its own: candidate-<16 hex>_[-]<1-12 digits>. */
static int
fuzz_name_ok(const char *s, int64_t *sid, int64_t *seq)
{
	const char *p = s + strlen("candidate-"), *d;
	int i, neg = 0;

	if (strncmp(s, "candidate-", strlen("candidate-")) != 0)
		return 0;
	for (i = 0; i < 16; i++)
		if (strchr("0123456789abcdef", p[i]) == NULL || p[i] == '\0')
			return 0;
	*sid = (int64_t)strtoull(p, NULL, 16);	/* stops at '_' */
	if (p[16] != '_')
		return 0;
	d = p + 17;
	if (*d == '-') {
		neg = 1;
		d++;
	}
	if (strlen(d) < 1 || strlen(d) > 12 || strspn(d, "0123456789") !=
	    strlen(d))
		return 0;
	*seq = strtoll(d, NULL, 10);
	if (neg) {
		if (*seq > 2147483648LL)
			return 0;
		*seq = 4294967296LL - *seq;
	}
	return 1;
}

static void
fuzz_parse(const char *name)
{
	struct candidate c;
	int64_t sid = 0, seq = 0;
	int ok = fuzz_name_ok(name, &sid, &seq);

	if (candidate_parse(name, &c) == 0) {
		FUZZ_ASSERT(ok, "accepted a bad name \"%s\"", name);
		FUZZ_ASSERT(c.name == name && c.sid == sid && c.seq == seq &&
		    c.seq >= 0, "\"%s\": sid %llx seq %lld", name,
		    (unsigned long long)c.sid, (long long)c.seq);
	} else
		FUZZ_ASSERT(!ok, "refused a good name \"%s\"", name);
}

static void
fuzz_order(char **names, int n)
{
	struct candidate out[FUZZ_NAMES_MAX], tmp;
	int k, i, j, good = 0, seen;

	for (i = 0; i < n; i++)
		good += candidate_parse(names[i], &tmp) == 0;
	k = candidate_order(names, n, out);
	FUZZ_ASSERT(k == good, "kept %d of %d good names", k, good);
	for (i = 0; i < k; i++) {
		FUZZ_ASSERT(i == 0 || out[i - 1].seq <= out[i].seq,
		    "not in sequence order at %d", i);
		for (j = 0, seen = 0; j < n; j++)
			seen += out[i].name == names[j];
		FUZZ_ASSERT(seen == 1, "a name that was not given");
		for (j = 0; j < i; j++)
			FUZZ_ASSERT(out[j].name != out[i].name,
			    "a name kept twice");
	}
}

/*
 * The output only holds bytes of the input in their order, or '?', is
 * clean, fits, and equals the input when that is clean and fits.
 */
static void
fuzz_clean_check(const char *src, size_t n, size_t dstlen)
{
	char *dst = xmalloc(dstlen + 1);
	size_t len, i, j;

	dst[dstlen] = 'X';	/* a canary past the room given */
	len = candidate_clean(dst, dstlen, src, n);
	FUZZ_ASSERT(dst[dstlen] == 'X', "wrote past the buffer");
	if (dstlen == 0) {
		FUZZ_ASSERT(len == 0, "length %zu with no room", len);
		free(dst);
		return;
	}
	FUZZ_ASSERT(len == strlen(dst) && len < dstlen,
	    "length %zu, strlen %zu, room %zu", len, strlen(dst), dstlen);
	fuzz_expect(fuzz_clean(dst, len), "candidate_clean", dst);
	for (i = 0, j = 0; i < len; i++, j++) {
		if (dst[i] == '?' && (j >= n || src[j] != '?'))
			continue;
		FUZZ_ASSERT(j < n && dst[i] == src[j],
		    "output byte %zu is not input byte %zu", i, j);
	}
	if (fuzz_clean(src, n) == NULL && n < dstlen)
		FUZZ_ASSERT(len == n && memcmp(dst, src, n) == 0,
		    "clean input changed");
	free(dst);
}

static void
fuzz_kv(const char *text, const char *key, size_t len)
{
	char *buf = xmalloc(len), *want = xmalloc(len);
	const char *p = text, *nl;
	size_t klen = strlen(key), n;

	want[0] = '\0';
	for (; *p != '\0'; p = nl + 1) {
		nl = strchrnul(p, '\n');
		n = (size_t)(nl - p);
		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			(void)candidate_clean(want, len, p + klen + 1,
			    n - klen - 1);
			break;
		}
		if (*nl == '\0')
			break;
	}
	candidate_kv(text, key, buf, len);
	FUZZ_ASSERT(strlen(buf) < len, "value longer than its room");
	fuzz_expect(fuzz_clean(buf, strlen(buf)), "candidate_kv", buf);
	FUZZ_ASSERT(strcmp(buf, want) == 0, "%s: \"%s\", not \"%s\"", key,
	    buf, want);
	free(buf);
	free(want);
}

/* A members line as command.c writes it: three tab-separated fields. */
static void
fuzz_members_line(const char *text)
{
	char id[256], data[1024], *line, *t1, *t2;

	candidate_kv(text, "id", id, sizeof(id));
	candidate_kv(text, "data", data, sizeof(data));
	(void)xasprintf(&line, "%lld\t%s\t%s\n", 42LL, id, data);
	FUZZ_ASSERT((t1 = strchr(line, '\t')) != NULL &&
	    (t2 = strchr(t1 + 1, '\t')) != NULL && strchr(t2 + 1, '\t') ==
	    NULL && strchr(line, '\n') == line + strlen(line) - 1,
	    "members line: %s", line);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "id", "data", "epoch", "d", "" };
	char *text, *copy, *names[FUZZ_NAMES_MAX], *line, *save;
	size_t cleanlen, kvlen, n, i;
	int nnames = 0;

	if (size < 2 || size > 65536)
		return 0;
	cleanlen = data[0];
	kvlen = (size_t)data[1] * 8 + 1;
	n = size - 2;
	text = xmalloc(n + 1);
	memcpy(text, data + 2, n);
	text[n] = '\0';

	fuzz_clean_check(text, n, cleanlen);
	fuzz_clean_check(text, n, n + 1);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i][0] != '\0')
			fuzz_kv(text, keys[i], kvlen);
	fuzz_members_line(text);

	/* Names: the lines of the text up to its first NUL. */
	copy = xstrdup(text);
	for (line = strtok_r(copy, "\n", &save); line != NULL &&
	    nnames < FUZZ_NAMES_MAX; line = strtok_r(NULL, "\n", &save)) {
		fuzz_parse(line);
		names[nnames++] = line;
	}
	fuzz_order(names, nnames);
	free(copy);
	free(text);
	return 0;
}
