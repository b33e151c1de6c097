/* zk_hosts_same, zk_hosts_clash: which host lists the client library can
 * move between. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zk.h"

static void
test_hosts_same(void **state)
{
	static const struct {
		const char *a, *b;
		int entries;	/* zk_hosts_same(a, b, 1) */
		int hosts;	/* zk_hosts_same(a, b, 0) */
	} cases[] = {
		{ "zk1:2181", "zk1:2181", 1, 1 },
		{ "zk1:2181,zk2:2181", "zk2:2181,zk1:2181", 1, 1 },
		{ "zk1:2181", "zk1:2182", 0, 1 },
		{ "127.0.0.1:2181,127.0.0.1:2182", "127.0.0.1:3000", 0, 1 },
		{ "zk1:2181,zk2:2181", "zk1:2181", 0, 0 },
		{ "zk1:2181", "zk1:2181,zk2:2181", 0, 0 },
		{ "zk1:2181", "zk10:2181", 0, 0 },
		{ "zk10:2181", "zk1:2181", 0, 0 },
		{ "::1:2181", "::1:2182", 0, 1 },
		{ "::1:2181", "::2:2181", 0, 0 },
		{ "10.0.0.1:2181,10.0.0.2:2181", "10.0.0.3:2181,10.0.0.4:2181",
		    0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(zk_hosts_same(cases[i].a, cases[i].b, 1),
		    cases[i].entries);
		assert_int_equal(zk_hosts_same(cases[i].a, cases[i].b, 0),
		    cases[i].hosts);
	}
}

/*
 * Resolved as the library resolves them: an address of both lists on
 * other ports clashes however it is spelt (a reviewer's reload from
 * 127.0.0.1:P to localhost:Q was taken and never applied); lists that do
 * not resolve fall back to the text.
 */
static void
test_hosts_clash(void **state)
{
	static const struct {
		const char *a, *b;
		int clash;
	} cases[] = {
		{ "127.0.0.1:2181", "127.0.0.1:2181", 0 },
		{ "127.0.0.1:2181", "127.0.0.1:2182", 1 },
		{ "127.0.0.1:2181", "localhost:2182", 1 },
		{ "127.0.0.1:2181", "localhost:2181", 0 },
		{ "127.0.0.1:2181", "127.0.0.2:2182", 0 },
		{ "127.0.0.1:2181,127.0.0.2:2181", "127.0.0.1:2181,"
		    "127.0.0.3:2181", 0 },
		{ "127.0.0.1:2181,127.0.0.2:2181", "127.0.0.3:2181,"
		    "127.0.0.2:2190", 1 },
		{ "[::1]:2181", "::1:2182", 1 },
		{ "[::1]:2181", "127.0.0.1:2182", 0 },
		{ "no-such-host.invalid:2181", "no-such-host.invalid:2182", 1 },
		{ "no-such-host.invalid:2181", "127.0.0.1:2182", 0 },
	};
	char buf[256];
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = zk_hosts_clash(cases[i].a, cases[i].b, buf, sizeof(buf));
		if (cases[i].clash) {
			assert_non_null(why);
			assert_non_null(strstr(why, "the same hosts on other "
			    "ports"));
		} else
			assert_null(why);
	}
	why = zk_hosts_clash("127.0.0.1:2181", "localhost:2182", buf,
	    sizeof(buf));
	assert_non_null(strstr(why, "(127.0.0.1: port 2182 asked for, 2181 "
	    "in use)"));
}

/*
 * What the client library is given after a reload: addresses only, in the
 * form it parses (the port after the last colon), so that it resolves
 * nothing on the event loop; refused with the name that failed, or with
 * the clash, as zk_hosts_clash() says.
 */
static void
test_hosts_numeric(void **state)
{
	char buf[256], *list;

	(void)state;
	list = zk_hosts_numeric("127.0.0.1:2181", "127.0.0.2:2182,"
	    "[::1]:2183", buf, sizeof(buf));
	assert_string_equal(list, "127.0.0.2:2182,::1:2183");
	free(list);
	list = zk_hosts_numeric("127.0.0.1:2181", "localhost:2181", buf,
	    sizeof(buf));
	assert_non_null(list);
	assert_non_null(strstr(list, "127.0.0.1:2181"));
	assert_null(strstr(list, "localhost"));
	free(list);
	assert_null(zk_hosts_numeric("127.0.0.1:2181", "127.0.0.2:2181,"
	    "no-such-host.invalid:2181", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "no-such-host.invalid does not resolve ("));
	assert_null(zk_hosts_numeric("127.0.0.1:2181", "localhost:2182", buf,
	    sizeof(buf)));
	assert_non_null(strstr(buf, "the same hosts on other ports"));
	assert_null(zk_hosts_numeric("127.0.0.1:2181", "127.0.0.2", buf,
	    sizeof(buf)));
	assert_non_null(strstr(buf, "host:port"));
	/* An old list that does not resolve is compared as text. */
	list = zk_hosts_numeric("no-such-host.invalid:2181", "127.0.0.1:2182",
	    buf, sizeof(buf));
	assert_string_equal(list, "127.0.0.1:2182");
	free(list);
}

/* Lists that open a session at once, and lists resolved off the loop. */
static void
test_hosts_are_addresses(void **state)
{
	(void)state;
	assert_int_equal(zk_hosts_are_addresses("127.0.0.1:2181"), 1);
	assert_int_equal(zk_hosts_are_addresses("127.0.0.1:2181,::1:2182,"
	    "[fe80::1]:2183"), 1);
	assert_int_equal(zk_hosts_are_addresses("localhost:2181"), 0);
	assert_int_equal(zk_hosts_are_addresses("127.0.0.1:2181,zk1:2181"), 0);
	assert_int_equal(zk_hosts_are_addresses("127.0.0.1"), 0);
	assert_int_equal(zk_hosts_are_addresses("1.2.3:2181"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts_same),
		cmocka_unit_test(test_hosts_clash),
		cmocka_unit_test(test_hosts_numeric),
		cmocka_unit_test(test_hosts_are_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
