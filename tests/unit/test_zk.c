/* zk_hosts_same: which host lists the client library can move between. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
