/*
 * status_write() against a real directory: the file is replaced whole, and
 * whatever stands at its temporary name is replaced, never written through.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "status.h"

struct fixture {
	char dir[64];
	char path[96];		/* the status file */
	char tmp[112];		/* its temporary name */
};

static char *
test_slurp(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd;

	assert_int_not_equal(fd = open(path, O_RDONLY), -1);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	(void)close(fd);
	return buf;
}

static int
test_setup(void **state)
{
	struct fixture *fx;

	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	(void)strcpy(fx->dir, "/tmp/test_status.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	(void)snprintf(fx->path, sizeof(fx->path), "%s/svc.status", fx->dir);
	(void)snprintf(fx->tmp, sizeof(fx->tmp), "%s.tmp", fx->path);
	*state = fx;
	return 0;
}

static int
test_teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void
test_write_and_replace(void **state)
{
	struct fixture *fx = *state;
	struct stat st;

	assert_int_equal(status_write(fx->path, "role=follower\n"), 0);
	assert_string_equal(test_slurp(fx->path), "role=follower\n");
	assert_int_equal(status_write(fx->path, "role=leader\n"), 0);
	assert_string_equal(test_slurp(fx->path), "role=leader\n");
	/* Nothing is left beside it, and everyone may read it. */
	assert_int_equal(access(fx->tmp, F_OK), -1);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0444, 0444);
}

/* A leftover of a crash at the temporary name is no obstacle. */
static void
test_stale_temporary(void **state)
{
	struct fixture *fx = *state;
	int fd;

	assert_int_not_equal(fd = open(fx->tmp, O_WRONLY | O_CREAT, 0600), -1);
	assert_int_equal(write(fd, "stale stale stale\n", 18), 18);
	(void)close(fd);
	assert_int_equal(status_write(fx->path, "role=leader\n"), 0);
	assert_string_equal(test_slurp(fx->path), "role=leader\n");
	assert_int_equal(access(fx->tmp, F_OK), -1);
}

/*
 * A link planted at the temporary name (a status directory others can
 * write to) must not make the daemon write, as root, to where it points.
 */
static void
test_planted_link_not_followed(void **state)
{
	struct fixture *fx = *state;
	char victim[128];
	int fd;

	(void)snprintf(victim, sizeof(victim), "%s/victim", fx->dir);
	assert_int_not_equal(fd = open(victim, O_WRONLY | O_CREAT, 0600), -1);
	assert_int_equal(write(fd, "precious\n", 9), 9);
	(void)close(fd);
	assert_int_equal(symlink(victim, fx->tmp), 0);
	assert_int_equal(status_write(fx->path, "role=leader\n"), 0);
	assert_string_equal(test_slurp(victim), "precious\n");
	assert_string_equal(test_slurp(fx->path), "role=leader\n");
}

static void
test_missing_directory_fails(void **state)
{
	struct fixture *fx = *state;
	char path[128];

	(void)snprintf(path, sizeof(path), "%s/none/svc.status", fx->dir);
	assert_int_equal(status_write(path, "role=leader\n"), -1);
}

/* The keys that tell why and when, in the lines and in the JSON. */
static void
test_render_why_and_when(void **state)
{
	struct status st;
	char *text;

	(void)state;
	memset(&st, 0, sizeof(st));
	st.service = st.id = st.role = st.leader = st.leader_data = "";
	st.zk_state = st.mode = st.data = st.last_error = "";
	st.lease_error = "";
	st.queue_position = 2;
	st.healthy = 1;
	st.last_transition = 1795386726;
	text = status_render(&st, 0);
	assert_non_null(strstr(text, "\nqueue_position=2\npaused=0\n"
	    "healthy=1\nbackoff_until=\n"
	    "last_transition=2026-11-22T22:32:06Z\nrun_pid=\nrun_since=\n"
	    "priority=0\n"));
	free(text);
	text = status_render(&st, 1);
	assert_non_null(strstr(text, ",\"queue_position\":2,\"paused\":0,"
	    "\"healthy\":1,\"backoff_until\":\"\","
	    "\"last_transition\":\"2026-11-22T22:32:06Z\","
	    "\"run_pid\":\"\",\"run_since\":\"\",\"priority\":0}"));
	free(text);
	/* hooks.run running: its process group and since when. */
	st.run_pid = 4242;
	st.run_since = 1795386726;
	text = status_render(&st, 0);
	assert_non_null(strstr(text, "\nrun_pid=4242\n"
	    "run_since=2026-11-22T22:32:06Z\n"));
	free(text);
	text = status_render(&st, 1);
	assert_non_null(strstr(text, ",\"run_pid\":4242,"
	    "\"run_since\":\"2026-11-22T22:32:06Z\",\"priority\":0}"));
	free(text);
	st.run_pid = 0;
	st.run_since = 0;
	/* Not queued, paused, unhealthy, backing off, no change yet. */
	st.queue_position = 0;
	st.paused = 1;
	st.healthy = 0;
	st.backoff_until = 1795386756;
	st.last_transition = 0;
	text = status_render(&st, 0);
	assert_non_null(strstr(text, "\nqueue_position=0\npaused=1\n"
	    "healthy=0\nbackoff_until=2026-11-22T22:32:36Z\n"
	    "last_transition=\n"));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)
		T(test_write_and_replace),
		T(test_stale_temporary),
		T(test_planted_link_not_followed),
		T(test_missing_directory_fails),
		cmocka_unit_test(test_render_why_and_when),
#undef T
	};

	(void)umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
