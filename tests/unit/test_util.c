/*
 * Label escaping for the metrics, the millisecond RFC 3339 times and the
 * socket's group.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"

static void
test_label_escape(void **state)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "node1", "node1" },
		{ "", "" },
		{ "a\"b", "a\\\"b" },
		{ "a\\b", "a\\\\b" },
		{ "a\nb", "a\\nb" },
		{ "tab\there\x7f", "tab?here?" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "bad\xff\xc3", "bad??" },		/* invalid, cut short */
		{ "\xc0\xaf", "??" },			/* overlong */
		{ "\xed\xa0\x80", "???" },		/* a surrogate */
		{ "\xf4\x90\x80\x80", "????" },		/* past U+10FFFF */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = label_escape(cases[i].in);
		assert_string_equal(s, cases[i].out);
		free(s);
	}
}

static void
test_rfc3339_ms(void **state)
{
	char buf[40];

	(void)state;
	rfc3339_ms(1795386726007, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-22T22:32:06.007Z");
	rfc3339_ms(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
}

/* A name first, else a number; chown's "no change" is no gid. */
static void
test_parse_group(void **state)
{
	const char *why = NULL;
	gid_t gid = 1;

	(void)state;
	assert_int_equal(parse_group("root", &gid, &why), 0);
	assert_int_equal(gid, 0);
	assert_int_equal(parse_group("4242", &gid, &why), 0);
	assert_int_equal(gid, 4242);
	assert_int_equal(parse_group("zkelectd-no-such-group", &gid, &why),
	    -1);
	assert_string_equal(why, "no such group");
	why = NULL;
	assert_int_equal(parse_group("4294967295", &gid, &why), -1);
	assert_string_equal(why, "no such group");
	assert_int_equal(parse_group("-1", &gid, &why), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_escape),
		cmocka_unit_test(test_rfc3339_ms),
		cmocka_unit_test(test_parse_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
