/* zk_hosts_same, zk_hosts_clash: which host lists the client library can
 * move between; zk_sock_shutdown: leaving a silent server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <unistd.h>

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

/* A listener on the loopback, a client connected to it: the client's fd. */
static int
connected_pair(int family, char *hostport, size_t len, int *lfd)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int c;

	memset(&sa, 0, sizeof(sa));
	sa.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&sa)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&sa)->sin6_addr = in6addr_loopback;
	if ((*lfd = socket(family, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(*lfd, (struct sockaddr *)&sa, family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) == -1 ||
	    listen(*lfd, 1) == -1 ||
	    getsockname(*lfd, (struct sockaddr *)&sa, &sl) == -1) {
		(void)close(*lfd);
		return -1;
	}
	assert_int_not_equal(c = socket(family, SOCK_STREAM, 0), -1);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sl), 0);
	if (family == AF_INET)
		(void)snprintf(hostport, len, "127.0.0.1:%d",
		    ntohs(((struct sockaddr_in *)&sa)->sin_port));
	else
		(void)snprintf(hostport, len, "[::1]:%d",
		    ntohs(((struct sockaddr_in6 *)&sa)->sin6_port));
	return c;
}

/* zk_sock_shutdown: the connection to the server named goes, no other. */
static void
test_sock_shutdown(void **state)
{
	static const int families[] = { AF_INET, AF_INET6 };
	char hostport[64], other[64], buf[1];
	int c, c2, l, l2;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		if ((c = connected_pair(families[i], hostport,
		    sizeof(hostport), &l)) == -1)
			continue;	/* no IPv6 loopback here */
		assert_int_not_equal(c2 = connected_pair(families[i], other,
		    sizeof(other), &l2), -1);
		assert_int_equal(zk_sock_shutdown(hostport), 0);
		/* Shut down: it reads its end at once. */
		assert_int_equal(read(c, buf, 1), 0);
		/* The other is untouched: it still writes. */
		assert_int_equal(write(c2, "x", 1), 1);
		(void)close(c);
		(void)close(c2);
		(void)close(l);
		(void)close(l2);
		assert_int_equal(zk_sock_shutdown(hostport), -1);
	}
	assert_int_equal(zk_sock_shutdown("127.0.0.1"), -1);
	assert_int_equal(zk_sock_shutdown("[::1:2181"), -1);
	assert_int_equal(zk_sock_shutdown("zk1:2181"), -1);
	assert_int_equal(zk_sock_shutdown(NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts_same),
		cmocka_unit_test(test_hosts_clash),
		cmocka_unit_test(test_hosts_numeric),
		cmocka_unit_test(test_hosts_are_addresses),
		cmocka_unit_test(test_sock_shutdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
