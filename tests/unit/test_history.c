/*
 * The ring of role transitions: each change recorded once with the reason
 * its hooks were given or the one the view shows, oldest first, the last
 * HISTORY_MAX kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"

static struct election_view
test_view(enum role role)
{
	struct election_view v;

	memset(&v, 0, sizeof(v));
	v.role = role;
	v.zk = EL_ZK_CONNECTED;
	v.leader_id = "";
	return v;
}

/* Notes v and returns the reason of the entry it added. */
static const char *
test_note(struct history *h, int64_t t, const struct election_view *v)
{
	assert_int_equal(history_note(h, t, v), 1);
	return history_last(h)->reason;
}

static void
test_failover_reasons(void **state)
{
	struct history *h = calloc(1, sizeof(*h));
	struct election_view v;
	const struct history_entry *e;

	(void)state;
	assert_null(history_last(h));
	/* The startup demote. */
	history_hook(h, HOOK_DEMOTE, "startup", 0);
	v = test_view(ROLE_DEMOTING);
	assert_string_equal(test_note(h, 1000, &v), "startup");
	v = test_view(ROLE_UNKNOWN);
	assert_string_equal(test_note(h, 1001, &v), "startup");
	v = test_view(ROLE_FOLLOWER);
	v.leader_id = "a";
	v.leader_epoch = 5;
	assert_string_equal(test_note(h, 1002, &v), "joined");
	e = history_last(h);
	assert_int_equal(e->epoch, 5);
	assert_string_equal(e->leader, "a");
	/* Nothing changed: nothing added, whatever the checks did. */
	history_hook(h, HOOK_CHECK, "health", 5);
	assert_int_equal(history_note(h, 1003, &v), 0);
	assert_int_equal(h->n, 3);
	/* Elected: promoting, then leader, with our epoch. */
	history_hook(h, HOOK_PROMOTE, "elected", 9);
	v = test_view(ROLE_PROMOTING);
	assert_string_equal(test_note(h, 1004, &v), "elected");
	assert_int_equal(history_last(h)->epoch, 9);
	v = test_view(ROLE_LEADER);
	v.leader_id = "me";
	v.leader_epoch = 9;
	assert_string_equal(test_note(h, 1005, &v), "elected");
	/* Resigned: demoting, then follower, both "resign". */
	history_hook(h, HOOK_DEMOTE, "resign", 9);
	v = test_view(ROLE_DEMOTING);
	assert_string_equal(test_note(h, 1006, &v), "resign");
	v = test_view(ROLE_FOLLOWER);
	assert_string_equal(test_note(h, 1007, &v), "resign");
	assert_int_equal(history_last(h)->epoch, 9);
	/* A dropped connection, then back. */
	v = test_view(ROLE_UNKNOWN);
	v.zk = EL_ZK_CONNECTING;
	assert_string_equal(test_note(h, 1008, &v), "disconnected");
	v = test_view(ROLE_FOLLOWER);
	assert_string_equal(test_note(h, 1009, &v), "joined");
	v = test_view(ROLE_UNKNOWN);
	v.zk = EL_ZK_EXPIRED;
	assert_string_equal(test_note(h, 1010, &v), "session-expired");
	free(h);
}

static void
test_observer_reasons(void **state)
{
	struct history *h = calloc(1, sizeof(*h));
	struct election_view v;

	(void)state;
	v = test_view(ROLE_FOLLOWER);
	(void)test_note(h, 1, &v);
	v = test_view(ROLE_OBSERVER);
	v.paused = 1;
	assert_string_equal(test_note(h, 2, &v), "pause");
	v = test_view(ROLE_FOLLOWER);
	assert_string_equal(test_note(h, 3, &v), "resume");
	v = test_view(ROLE_OBSERVER);
	v.unhealthy = 1;
	assert_string_equal(test_note(h, 4, &v), "health");
	v = test_view(ROLE_FOLLOWER);
	assert_string_equal(test_note(h, 5, &v), "health");
	/* A leader whose lease ran short before its demote could start. */
	history_hook(h, HOOK_PROMOTE, "elected", 3);
	v = test_view(ROLE_LEADER);
	(void)test_note(h, 6, &v);
	v = test_view(ROLE_DEMOTING);
	assert_string_equal(test_note(h, 7, &v), "lease");
	v = test_view(ROLE_STOPPED);
	history_hook(h, HOOK_DEMOTE, "shutdown", 3);
	assert_string_equal(test_note(h, 8, &v), "shutdown");
	free(h);
}

static void
test_ring_and_render(void **state)
{
	struct history *h = calloc(1, sizeof(*h));
	struct election_view v;
	char *text, *line, want[128];
	int i;

	(void)state;
	for (i = 0; i < HISTORY_MAX + 20; i++) {
		v = test_view(i % 2 == 0 ? ROLE_FOLLOWER : ROLE_UNKNOWN);
		v.zk = i % 2 == 0 ? EL_ZK_CONNECTED : EL_ZK_CONNECTING;
		v.leader_id = "x\ty\nz";
		v.leader_epoch = i;
		(void)test_note(h, 1795386726000 + i, &v);
	}
	assert_int_equal(h->n, HISTORY_MAX);
	text = history_render(h);
	/* Oldest first: the first 20 are gone. */
	(void)snprintf(want, sizeof(want), "2026-11-22T22:32:06.020Z\t"
	    "unknown\tfollower\tjoined\t20\tx?y?z\n");
	assert_memory_equal(text, want, strlen(want));
	line = text;
	for (i = 0; i < HISTORY_MAX; i++) {
		line = strchr(line, '\n');
		assert_non_null(line);
		line++;
	}
	assert_string_equal(line, "");
	assert_int_equal(history_last(h)->epoch, HISTORY_MAX + 19);
	free(text);
	free(h);
}

/*
 * A leader id longer than an entry holds is cut before a character, never
 * inside one: "history" stays valid UTF-8 (found by tests/fuzz/fuzz_render).
 */
static void
test_leader_cut_utf8(void **state)
{
	struct history *h = calloc(1, sizeof(*h));
	struct election_view v;
	char id[HISTORY_LEADER_MAX + 8];

	(void)state;
	/* 'a' up to the last byte an entry holds, then a 2-byte "\xc3\xa9". */
	memset(id, 'a', HISTORY_LEADER_MAX - 2);
	memcpy(id + HISTORY_LEADER_MAX - 2, "\xc3\xa9z", 4);
	v = test_view(ROLE_FOLLOWER);
	v.leader_id = id;
	(void)test_note(h, 1795386726000, &v);
	assert_int_equal(strlen(history_last(h)->leader),
	    HISTORY_LEADER_MAX - 2);
	assert_int_equal(strspn(history_last(h)->leader, "a"),
	    HISTORY_LEADER_MAX - 2);
	free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failover_reasons),
		cmocka_unit_test(test_observer_reasons),
		cmocka_unit_test(test_ring_and_render),
		cmocka_unit_test(test_leader_cut_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
