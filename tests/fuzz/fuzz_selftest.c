/*
 * The validators of fuzz_check.c must refuse what is broken, or the
 * harnesses prove nothing: each case is a text and whether it is valid.
 * Run by `make fuzz-replay` beside the harnesses.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_check.h"

enum { JSON, STATUS, METRICS, CLEAN };

static const struct {
	int kind;
	const char *text;
	int valid;
} cases[] = {
	{ JSON, "{\"a\":\"\xc3\xa9\",\"b\":[1,-2.5e3,true,null]}\n", 1 },
	{ JSON, "{\"a\":\"\\u001b\\\"\"}\n", 1 },
	{ JSON, "{\"a\":\"x\xff\"}\n", 0 },
	{ JSON, "{\"a\":\"\xc0\xaf\"}\n", 0 },
	{ JSON, "{\"a\":\"\xed\xa0\x80\"}\n", 0 },
	{ JSON, "{\"a\":\"x\x01\"}\n", 0 },
	{ JSON, "{\"a\":\"\\x\"}\n", 0 },
	{ JSON, "{\"a\":1,}\n", 0 },
	{ JSON, "{\"a\":01}\n", 0 },
	{ JSON, "{\"a\":1}\n{}", 0 },
	{ STATUS, "a=b\nc='x'\\''y z'\nd=\n", 1 },
	{ STATUS, "a='\xc3\xa9 $(x)'\n", 1 },
	{ STATUS, "a=b c\n", 0 },
	{ STATUS, "a=$(x)\n", 0 },
	{ STATUS, "a='b\x1b'\n", 0 },
	{ STATUS, "a='b\n", 0 },
	{ STATUS, "a='b'x\n", 0 },
	{ STATUS, "a=b", 0 },
	{ STATUS, "A=b\n", 0 },
	{ METRICS, "# HELP x Some help.\n# TYPE x gauge\n"
	    "x{a=\"b\\\"\\\\\\n\",c=\"\xc3\xa9\"} 1.5\nx +Inf\n", 1 },
	{ METRICS, "x{a=\"b\\q\"} 1\n", 0 },
	{ METRICS, "x{a=\"b\"c\"} 1\n", 0 },
	{ METRICS, "x{a=\"b\"} one\n", 0 },
	{ METRICS, "x{a=\"\xff\"} 1\n", 0 },
	{ METRICS, "# TYPE x gauges\n", 0 },
	{ METRICS, "9x 1\n", 0 },
	{ CLEAN, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 1 },
	{ CLEAN, "tab\t", 0 },
	{ CLEAN, "del\x7f", 0 },
	{ CLEAN, "c1\xc2\x85", 0 },
	{ CLEAN, "\xf4\x90\x80\x80", 0 },
	{ CLEAN, "cut\xe2\x82", 0 },
};

int
main(void)
{
	const char *why = NULL;
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		switch (cases[i].kind) {
		case JSON:
			why = fuzz_json(cases[i].text);
			break;
		case STATUS:
			why = fuzz_status(cases[i].text, NULL, NULL, 0);
			break;
		case METRICS:
			why = fuzz_metrics(cases[i].text);
			break;
		case CLEAN:
			why = fuzz_clean(cases[i].text, strlen(cases[i].text));
			break;
		}
		if ((why == NULL) != cases[i].valid) {
			printf("case %zu: %s: %s\n", i, cases[i].valid ?
			    "refused" : "accepted", why != NULL ? why : "");
			failed++;
		}
	}
	printf("fuzz_selftest: %zu cases, %d wrong\n", i, failed);
	return failed != 0;
}
