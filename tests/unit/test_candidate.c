/* Candidate names: parsing, numeric ordering past 2^31, junk, node data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "candidate.h"

static void
test_names(void **state)
{
	static const struct {
		const char *name;
		int ok;
		int64_t sid;
		int64_t seq;
	} cases[] = {
		{ "candidate-000000001234abcd_0000000003", 1, 0x1234abcd, 3 },
		{ "candidate-ffffffffffffffff_2147483647", 1, -1, 2147483647 },
		{ "candidate-0000000000000001_-2147483648", 1, 1, 2147483648LL },
		{ "candidate-0000000000000001_-2147483647", 1, 1, 2147483649LL },
		{ "candidate-0000000000000001_-0000000001", 1, 1, 4294967295LL },
		{ "candidate-0000000000000001_", 0, 0, 0 },
		{ "candidate-000000000000001_0000000001", 0, 0, 0 },
		{ "candidate-000000000000000G_0000000001", 0, 0, 0 },
		{ "candidate-0000000000000001_00000x0001", 0, 0, 0 },
		{ "candidate-0000000000000001_0000000001x", 0, 0, 0 },
		{ "lock-0000000001", 0, 0, 0 },
		{ "", 0, 0, 0 },
	};
	struct candidate c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = candidate_parse(cases[i].name, &c);

		assert_int_equal(rc == 0, cases[i].ok);
		if (cases[i].ok) {
			assert_int_equal(c.sid, cases[i].sid);
			assert_int_equal(c.seq, cases[i].seq);
		}
	}
}

static void
test_order_numeric_and_wrap(void **state)
{
	char *names[] = {
		"candidate-0000000000000003_-2147483648",
		"candidate-0000000000000001_2147483647",
		"junk",
		"candidate-0000000000000002_0000000010",
		"candidate-0000000000000004_0000000009",
	};
	struct candidate c[5];
	int n;

	(void)state;
	n = candidate_order(names, 5, c);
	assert_int_equal(n, 4);
	assert_int_equal(c[0].sid, 4);
	assert_int_equal(c[1].sid, 2);
	assert_int_equal(c[2].sid, 1);
	assert_int_equal(c[3].sid, 3);
}

static void
test_kv(void **state)
{
	char buf[8];

	(void)state;
	candidate_kv("id=a\ndata=b c\nepoch=7\n", "data", buf, sizeof(buf));
	assert_string_equal(buf, "b c");
	candidate_kv("id=a\nepoch=7", "epoch", buf, sizeof(buf));
	assert_string_equal(buf, "7");
	candidate_kv("id=a\n", "data", buf, sizeof(buf));
	assert_string_equal(buf, "");
	candidate_kv("ids=x\nid=y\n", "id", buf, sizeof(buf));
	assert_string_equal(buf, "y");
	candidate_kv("id=0123456789\n", "id", buf, sizeof(buf));
	assert_string_equal(buf, "0123456");
	candidate_kv("", "id", buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static void
test_clean(void **state)
{
	char buf[64];
	char small[6];

	(void)state;
	/* Tab, ESC, CR, BEL, DEL: one '?' each. */
	candidate_kv("id=a\tb\x1b[31mc\rd\ae\x7f\n", "id", buf, sizeof(buf));
	assert_string_equal(buf, "a?b?[31mc?d?e?");
	/* Well-formed UTF-8 stays; each stray or bad byte is one '?'. */
	candidate_kv("data=caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n",
	    "data", buf, sizeof(buf));
	assert_string_equal(buf, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	candidate_kv("id=\xff\xfe\x80x\xc3\n", "id", buf, sizeof(buf));
	assert_string_equal(buf, "???x?");
	/* Overlong '/', a surrogate, past U+10FFFF, C1 CSI (U+009B). */
	candidate_kv("id=\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xc2\x9b\n",
	    "id", buf, sizeof(buf));
	assert_string_equal(buf, "???????????");
	/* A value cut to fit is cut before a character, never inside. */
	candidate_kv("id=abc\xe2\x82\xacz\n", "id", small, sizeof(small));
	assert_string_equal(small, "abc");
	candidate_kv("id=abcd\xc3\xa9\n", "id", small, sizeof(small));
	assert_string_equal(small, "abcd");
	assert_int_equal(candidate_clean(buf, sizeof(buf), "a\0b", 3), 3);
	assert_string_equal(buf, "a?b");
}

/* What a peer advertises as its priority: a valid integer, else 0. */
static void
test_priority(void **state)
{
	static const struct {
		const char *data;
		int64_t want;
	} cases[] = {
		{ "id=a\ndata=b\n", 0 },
		{ "id=a\npriority=5\n", 5 },
		{ "priority=-3", -3 },
		{ "priority=1000000\n", 1000000 },
		{ "priority=-1000000\n", -1000000 },
		{ "priority=1000001\n", 0 },
		{ "priority=-1000001\n", 0 },
		{ "priority=99999999999999999999999\n", 0 },
		{ "priority=5x\n", 0 },
		{ "priority= 5\n", 0 },
		{ "priority=\n", 0 },
		{ "priority=\x1b" "5\n", 0 },
		{ "priorityx=5\npriority=7\n", 7 },
		/* Cut to fit, the first 31 bytes would read 7. */
		{ "priority=0000000000000000000000000000007x\n", 0 },
		{ "priority=007\n", 7 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(candidate_priority(cases[i].data),
		    cases[i].want);
}

/*
 * Epochs in E/leader and the breadcrumb: untrusted, so a number that fits
 * or 0, never a huge value clamped to INT64_MAX (a reviewer's forged
 * breadcrumb reached the fence hook as 9223372036854775807).
 */
static void
test_epoch(void **state)
{
	static const struct {
		const char *data;
		int64_t want;
	} cases[] = {
		{ "id=a\ndata=b\nepoch=4294967312\n", 4294967312LL },
		{ "id=a\n", 0 },
		{ "epoch=0\n", 0 },
		{ "epoch=9223372036854775807\n", INT64_MAX },
		{ "epoch=9223372036854775808\n", 0 },
		{ "epoch=999999999999999999999\n", 0 },
		{ "epoch=-5\n", 0 },
		{ "epoch=12abc\n", 0 },
		{ "epoch=\n", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(candidate_epoch(cases[i].data) == cases[i].want);
}

/* Priority markers' names: <16 hex>_<priority in range>, nothing else. */
static void
test_mark_names(void **state)
{
	static const struct {
		const char *name;
		int ok;
		int64_t sid, prio;
	} cases[] = {
		{ "00000000000000aa_5", 1, 0xaa, 5 },
		{ "1234567890abcdef_-1000000", 1, 0x1234567890abcdefLL,
		    -1000000 },
		{ "00000000000000aa_1000000", 1, 0xaa, 1000000 },
		{ "00000000000000aa_1000001", 0, 0, 0 },
		{ "00000000000000aa_+5", 0, 0, 0 },
		{ "00000000000000aa_ 5", 0, 0, 0 },
		{ "00000000000000aa_5x", 0, 0, 0 },
		{ "00000000000000aa_", 0, 0, 0 },
		{ "00000000000000AA_5", 0, 0, 0 },
		{ "0000000000000aa_5", 0, 0, 0 },
		{ "candidate-00000000000000aa_5", 0, 0, 0 },
		{ "junk", 0, 0, 0 },
	};
	int64_t sid, prio;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(candidate_mark_parse(cases[i].name, &sid,
		    &prio), cases[i].ok ? 0 : -1);
		if (!cases[i].ok)
			continue;
		assert_true(sid == cases[i].sid);
		assert_true(prio == cases[i].prio);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_order_numeric_and_wrap),
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_epoch),
		cmocka_unit_test(test_mark_names),
	};

	return cmocka_run_group_tests_name("candidate", tests, NULL, NULL);
}
