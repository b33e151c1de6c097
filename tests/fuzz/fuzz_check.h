/*
 * What the fuzz harnesses assert about the daemon's outputs: strict UTF-8,
 * strict JSON, shell-sourceable status lines, Prometheus exposition lines.
 * Each check returns NULL when the text is valid, else a short reason.
 */
#ifndef ZKELECTD_FUZZ_CHECK_H
#define ZKELECTD_FUZZ_CHECK_H

#include <stddef.h>

/* Reports the reason and the text, then aborts: libFuzzer keeps the input. */
#define FUZZ_FAIL(...)	fuzz_fail(__FILE__, __LINE__, __VA_ARGS__)
#define FUZZ_ASSERT(cond, ...) do {					\
	if (!(cond))							\
		FUZZ_FAIL(__VA_ARGS__);					\
} while (0)

void fuzz_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/*
 * A directory of this process for the files a harness writes, made at
 * the first call, which also sets the logger quiet and SIGPIPE ignored.
 */
const char *fuzz_dir(void);
/* Aborts with the reason and the text when why is not NULL. */
void fuzz_expect(const char *why, const char *what, const char *text);

/* Well-formed UTF-8 (no overlong forms, surrogates, past U+10FFFF). */
const char *fuzz_utf8(const char *s, size_t n);
/* Also no control character: C0, DEL, C1 (U+0080..U+009F). */
const char *fuzz_clean(const char *s, size_t n);
/* One JSON value (RFC 8259, strict), then only a newline. */
const char *fuzz_json(const char *s);
/*
 * key=value lines, each value a bare shell word of safe characters or a
 * single-quoted word ('\'' for a quote), no control character. When key
 * is not NULL, its decoded value is stored in val (room for vlen).
 */
const char *fuzz_status(const char *s, const char *key, char *val,
    size_t vlen);
/* Prometheus text exposition 0.0.4: comments and samples. */
const char *fuzz_metrics(const char *s);

#endif
