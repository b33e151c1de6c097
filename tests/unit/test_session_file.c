/*
 * The session file: what is written is what is read back, a lease of
 * another boot is dropped, and a file that is not a regular file of ours
 * with mode 0600 (a link, a wider mode) is refused.
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

static void
facts(struct session_facts *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->zs.sid = (int64_t)0x0100000e5e3c0001LL;
	for (i = 0; i < sizeof(f->zs.passwd); i++)
		f->zs.passwd[i] = (char)(0xf0 + i);
	f->timeout_ms = 4000;
	f->lease_sent = 123456;
	f->leader = 1;
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
	char *p;

	(void)state;
	p = session_file_path("/run/zkelectd/web.sock");
	assert_string_equal(p, "/run/zkelectd/web.session");
	free(p);
	p = session_file_path("/tmp/ctl");
	assert_string_equal(p, "/tmp/ctl.session");
	free(p);
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
	memset(&g, 0, sizeof(g));
	(void)snprintf(g.boot, sizeof(g.boot), "boot-a");
	assert_int_equal(session_file_read(p, &g, &why), 0);
	assert_int_equal(g.zs.sid, f.zs.sid);
	assert_memory_equal(g.zs.passwd, f.zs.passwd, sizeof(f.zs.passwd));
	assert_int_equal(g.timeout_ms, 4000);
	assert_int_equal(g.lease_sent, 123456);
	assert_int_equal(g.leader, 1);
	assert_int_equal(g.epoch, f.epoch);
	/* Another boot: the clock the lease is on started again. */
	memset(&g, 0, sizeof(g));
	(void)snprintf(g.boot, sizeof(g.boot), "boot-b");
	assert_int_equal(session_file_read(p, &g, &why), 0);
	assert_int_equal(g.zs.sid, f.zs.sid);
	assert_int_equal(g.lease_sent, 0);
	session_file_remove(p);
	assert_int_equal(session_file_read(p, &g, &why), 1);
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
	memset(&g, 0, sizeof(g));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_replaces_the_socket_suffix),
		cmocka_unit_test(test_written_is_read_back),
		cmocka_unit_test(test_untrusted_files_are_refused),
	};
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	(void)rmdir(dir);
	return rc;
}
