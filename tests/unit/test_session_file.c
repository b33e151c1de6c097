/*
 * The session file: what is written is what is read back, a lease of
 * another boot is dropped, a file that is not a regular file of ours
 * with mode 0600 (a link, a wider mode) is refused, and one recorded by
 * another owner, or by an older version (no owner), says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "session_file.h"

static char dir[] = "/tmp/zke-sessionfile-XXXXXX";

static const struct session_owner owner = {
	"/zkelectd", "web", "node1", "/run/zkelectd/web.sock",
};

/* What a reader sets before session_file_read(). */
static void
reader(struct session_facts *g, const char *boot)
{
	memset(g, 0, sizeof(*g));
	g->owner = owner;
	(void)snprintf(g->boot, sizeof(g->boot), "%s", boot);
}

/*
 * Renders f, checks that the text has `has` and lacks `lacks` (each when
 * not NULL), writes it at p and reads it back into g, as on boot "boot-a".
 */
static void
round_trip(const char *p, const struct session_facts *f,
    struct session_facts *g, const char *has, const char *lacks)
{
	const char *why;
	char *text = session_file_render(f);

	if (has != NULL)
		assert_non_null(strstr(text, has));
	if (lacks != NULL)
		assert_null(strstr(text, lacks));
	assert_int_equal(session_file_write(p, text), 0);
	free(text);
	reader(g, "boot-a");
	assert_int_equal(session_file_read(p, g, &why), 0);
}

static void
facts(struct session_facts *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->owner = owner;
	f->zs.sid = (int64_t)0x0100000e5e3c0001LL;
	for (i = 0; i < sizeof(f->zs.passwd); i++)
		f->zs.passwd[i] = (char)(0xf0 + i);
	f->timeout_ms = 4000;
	f->lease_sent = 123456;
	f->leader = 1;
	/* Promoted on claim 4, deleted by hand; acked on claim 6. */
	f->claimed = 1;
	f->claim_seq = 4;
	f->crumb_claimed = 1;
	f->crumb_claim_seq = 6;
	f->epoch = 4294967312LL;
	(void)snprintf(f->boot, sizeof(f->boot), "boot-a");
}

static char *
path_of(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void
test_path_replaces_the_socket_suffix(void **state)
{
	/* The socket, its session file, the other socket with that file. */
	static const char *const cases[][3] = {
		{ "/run/zkelectd/web.sock", "/run/zkelectd/web.session",
		    "/run/zkelectd/web" },
		{ "/tmp/ctl", "/tmp/ctl.session", "/tmp/ctl.sock" },
	};
	char *p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = session_file_path(cases[i][0]);
		assert_string_equal(p, cases[i][1]);
		free(p);
		p = session_file_sibling(cases[i][0]);
		assert_string_equal(p, cases[i][2]);
		free(p);
	}
}

static void
test_written_is_read_back(void **state)
{
	struct session_facts f, g;
	struct stat st;
	const char *why;
	char *p = path_of("a.session"), *text;

	(void)state;
	facts(&f);
	text = session_file_render(&f);
	assert_int_equal(session_file_write(p, text), 0);
	free(text);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	reader(&g, "boot-a");
	assert_int_equal(session_file_read(p, &g, &why), 0);
	assert_string_equal(g.owner.socket, owner.socket);
	assert_int_equal(g.zs.sid, f.zs.sid);
	assert_memory_equal(g.zs.passwd, f.zs.passwd, sizeof(f.zs.passwd));
	assert_int_equal(g.timeout_ms, 4000);
	assert_int_equal(g.lease_sent, 123456);
	assert_int_equal(g.leader, 1);
	assert_int_equal(g.claimed, 1);
	assert_int_equal(g.claim_seq, 4);
	assert_int_equal(g.crumb_claimed, 1);
	assert_int_equal(g.crumb_claim_seq, 6);
	assert_int_equal(g.epoch, f.epoch);
	/* No breadcrumb's claim (an older version's file): none is read. */
	f.crumb_claimed = 0;
	round_trip(p, &f, &g, NULL, "crumb_claim");
	assert_int_equal(g.claim_seq, 4);
	assert_int_equal(g.crumb_claimed, 0);
	/* Another boot: the clock the lease is on started again. */
	reader(&g, "boot-b");
	assert_int_equal(session_file_read(p, &g, &why), 0);
	assert_int_equal(g.zs.sid, f.zs.sid);
	assert_int_equal(g.lease_sent, 0);
	session_file_remove(p);
	assert_int_equal(session_file_read(p, &g, &why), 1);
	free(p);
}

/* down=1 round trips; a file without the line (older) reads as down=0. */
static void
test_down_is_read_back(void **state)
{
	struct session_facts f, g;
	char *p = path_of("d.session");

	(void)state;
	facts(&f);
	f.leader = 0;
	f.down = 1;
	round_trip(p, &f, &g, "\ndown=1\n", NULL);
	assert_int_equal(g.down, 1);
	f.down = 0;
	round_trip(p, &f, &g, NULL, "down=");
	assert_int_equal(g.down, 0);
	session_file_remove(p);
	free(p);
}

/*
 * hooks.run's group and start round trip; none, no line; another boot's
 * processes are not this one's. Each value has a line of its own, a
 * number, so that an older version, which ignores keys it does not know
 * but parses every value as one, still reads the file.
 */
static void
test_the_run_is_read_back(void **state)
{
	struct session_facts f, g;
	const char *why;
	char *p = path_of("r.session");

	(void)state;
	facts(&f);
	f.run_pgid = 4242;
	f.run_start = 987654321;
	round_trip(p, &f, &g, "\nrun=4242\nrun_start=987654321\n", NULL);
	assert_int_equal(g.run_pgid, 4242);
	assert_int_equal(g.run_start, 987654321);
	reader(&g, "boot-b");
	assert_int_equal(session_file_read(p, &g, &why), 0);
	assert_int_equal(g.run_pgid, 0);
	f.run_pgid = 0;
	round_trip(p, &f, &g, NULL, "\nrun=");
	assert_int_equal(g.run_pgid, 0);
	session_file_remove(p);
	free(p);
}

static void
test_untrusted_files_are_refused(void **state)
{
	struct session_facts f, g;
	const char *why;
	char *p = path_of("b.session"), *target = path_of("target"), *text;
	FILE *fp;

	(void)state;
	facts(&f);
	text = session_file_render(&f);
	assert_int_equal(session_file_write(target, text), 0);
	/* A link to a good file is still a link. */
	assert_int_equal(symlink(target, p), 0);
	reader(&g, "boot-a");
	assert_int_equal(session_file_read(p, &g, &why), -1);
	assert_non_null(why);
	/* Written over the link: the link is replaced, the target kept. */
	f.epoch = 7;
	free(text);
	text = session_file_render(&f);
	assert_int_equal(session_file_write(p, text), 0);
	assert_int_equal(session_file_read(target, &g, &why), 0);
	assert_int_not_equal(g.epoch, 7);
	/* A mode others can read. */
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(session_file_read(p, &g, &why), -1);
	assert_int_equal(chmod(p, 0600), 0);
	/* Junk. */
	assert_non_null(fp = fopen(p, "w"));
	(void)fputs("sid=zz\n", fp);
	(void)fclose(fp);
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(session_file_read(p, &g, &why), -1);
	session_file_remove(p);
	session_file_remove(target);
	free(text);
	free(p);
	free(target);
}

static void
put(const char *p, const char *text)
{
	FILE *fp;

	assert_non_null(fp = fopen(p, "w"));
	(void)fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(p, 0600), 0);
}

#define FACTS	"sid=0100000e5e3c0001\n" \
	"passwd=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\ntimeout=4000\n" \
	"lease=0\nleader=1\nepoch=5\nboot=boot-a\n"

static void
test_the_owner_is_compared(void **state)
{
	static const struct {
		const char *owner;	/* the file's owner lines */
		int rc;
		const char *why;	/* a word of it */
	} cases[] = {
		{ "root=/zkelectd\nservice=web\nid=node1\n"
		    "socket=/run/zkelectd/web.sock\n", 0, NULL },
		{ "root=/other\nservice=web\nid=node1\n"
		    "socket=/run/zkelectd/web.sock\n", SESSION_FILE_OTHER,
		    "zookeeper.root" },
		{ "root=/zkelectd\nservice=db\nid=node1\n"
		    "socket=/run/zkelectd/web.sock\n", SESSION_FILE_OTHER,
		    "election.service" },
		{ "root=/zkelectd\nservice=web\nid=node2\n"
		    "socket=/run/zkelectd/web.sock\n", SESSION_FILE_OTHER,
		    "election.id" },
		/* X and X.sock share the file: the socket tells them apart. */
		{ "root=/zkelectd\nservice=web\nid=node1\n"
		    "socket=/run/zkelectd/web\n", SESSION_FILE_OTHER,
		    "control.socket" },
		/* The version before wrote no owner. */
		{ "", SESSION_FILE_ANON, "older version" },
		/* Some owner lines but not all: no version writes that. */
		{ "root=/zkelectd\nservice=web\n", -1, "incomplete" },
	};
	struct session_facts g;
	const char *why;
	char *p = path_of("o.session"), *text;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(asprintf(&text, "%s%s", cases[i].owner, FACTS) > 0);
		put(p, text);
		free(text);
		reader(&g, "boot-a");
		assert_int_equal(session_file_read(p, &g, &why), cases[i].rc);
		if (cases[i].why != NULL)
			assert_non_null(strstr(why, cases[i].why));
		/* What the caller set is kept. */
		assert_ptr_equal(g.owner.root, owner.root);
		assert_int_equal(g.zs.sid, (int64_t)0x0100000e5e3c0001LL);
	}
	session_file_remove(p);
	free(p);
}

static void
test_a_file_too_long_is_refused(void **state)
{
	struct session_facts g;
	const char *why;
	char *p = path_of("l.session"), *text;
	char pad[5000];

	(void)state;
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	/* Its end, past what is read, would have been an unknown key. */
	assert_true(asprintf(&text, "%s%s#=%s\n",
	    "root=/zkelectd\nservice=web\nid=node1\n"
	    "socket=/run/zkelectd/web.sock\n", FACTS, pad) > 0);
	put(p, text);
	free(text);
	reader(&g, "boot-a");
	assert_int_equal(session_file_read(p, &g, &why), -1);
	assert_string_equal(why, "too long");
	session_file_remove(p);
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_replaces_the_socket_suffix),
		cmocka_unit_test(test_written_is_read_back),
		cmocka_unit_test(test_down_is_read_back),
		cmocka_unit_test(test_the_run_is_read_back),
		cmocka_unit_test(test_untrusted_files_are_refused),
		cmocka_unit_test(test_the_owner_is_compared),
		cmocka_unit_test(test_a_file_too_long_is_refused),
	};
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	(void)rmdir(dir);
	return rc;
}
