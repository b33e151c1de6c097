/*
 * The logger: one line per message with a dated stamp, control bytes made
 * harmless, and log_collapse() counting repeats instead of writing them,
 * from several threads at once; a full pipe never blocks it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

#define THREADS	4
#define ROUNDS	500

static char path[] = "/tmp/zke-test-log-XXXXXX";
static int saved_stderr = -1;

/* Sends stderr to a fresh file. */
static int
test_setup(void **state)
{
	int fd;

	(void)state;
	strcpy(path, "/tmp/zke-test-log-XXXXXX");
	assert_int_not_equal(fd = mkstemp(path), -1);
	assert_int_not_equal(saved_stderr = dup(STDERR_FILENO), -1);
	assert_int_not_equal(dup2(fd, STDERR_FILENO), -1);
	(void)close(fd);
	(void)unsetenv("JOURNAL_STREAM");
	log_init("zkelectd", LOG_DEBUG);
	log_collapse_flush();
	return 0;
}

static int
test_teardown(void **state)
{
	(void)state;
	(void)dup2(saved_stderr, STDERR_FILENO);
	(void)close(saved_stderr);
	(void)unlink(path);
	return 0;
}

static char *
test_output(void)
{
	static char buf[1 << 20];
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
test_count(const char *text, const char *what)
{
	int n = 0;

	while ((text = strstr(text, what)) != NULL) {
		n++;
		text += strlen(what);
	}
	return n;
}

static void
test_stamp_and_one_line(void **state)
{
	regex_t re;
	char *out;

	(void)state;
	log_info("leader is now %s (epoch %d)", "a\nfake line", 7);
	out = test_output();
	assert_int_equal(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
	    "[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z zkelectd: leader is now a\\?fake "
	    "line \\(epoch 7\\)\n$", REG_EXTENDED), 0);
	assert_int_equal(regexec(&re, out, 0, NULL, 0), 0);
	regfree(&re);
}

static void
test_repeats_collapse(void **state)
{
	char *out;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		log_collapse(LOG_WARNING, "zookeeper", "server refused");
		log_collapse(LOG_INFO, "zookeeper", "delaying connection");
	}
	log_collapse(LOG_WARNING, "zookeeper", "something else");
	log_collapse_flush();
	out = test_output();
	assert_int_equal(test_count(out, "\n"), 5);
	assert_int_equal(test_count(out, "zookeeper: server refused\n"), 1);
	assert_int_equal(test_count(out, "zookeeper: delaying connection\n"), 1);
	assert_int_equal(test_count(out, "zookeeper: something else\n"), 1);
	assert_non_null(strstr(out, "zookeeper: ... repeated 9 more times: "
	    "server refused\n"));
	assert_non_null(strstr(out, "zookeeper: ... repeated 9 more times: "
	    "delaying connection\n"));
	/* Flushed: the next one is written again. */
	log_collapse(LOG_WARNING, "zookeeper", "server refused");
	assert_int_equal(test_count(test_output(), "zookeeper: server "
	    "refused\n"), 2);
}

static void
test_below_level_not_counted(void **state)
{
	(void)state;
	log_setlevel(LOG_INFO);
	log_collapse(LOG_DEBUG, "zookeeper", "chatter");
	log_collapse(LOG_DEBUG, "zookeeper", "chatter");
	log_collapse_flush();
	assert_string_equal(test_output(), "");
}

static void *
test_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		log_collapse(LOG_WARNING, "zookeeper", "from a thread");
		log_info("a plain line %d", i);
	}
	return NULL;
}

static void
test_threads(void **state)
{
	pthread_t t[THREADS];
	char *out, *line, *p, *end;
	long total = 0;
	int i;

	(void)state;
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, test_thread, NULL),
		    0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	log_collapse_flush();
	out = test_output();
	/* Whole lines only, and every repeat accounted for. */
	assert_int_equal(test_count(out, "zkelectd: a plain line "),
	    THREADS * ROUNDS);
	assert_int_equal(test_count(out, "zookeeper: from a thread\n"), 1);
	for (line = out; *line != '\0'; line = end + 1) {
		assert_non_null(end = strchr(line, '\n'));
		assert_int_equal(line[4], '-');
		if ((p = strstr(line, "repeated ")) != NULL && p < end)
			total += strtol(p + 9, NULL, 10);
	}
	assert_int_equal(total + 1, THREADS * ROUNDS);
}

/* The trace's stamps: a clock read only while debug lines are kept. */
static void
test_stamp_only_at_debug(void **state)
{
	int64_t a, b, off;

	(void)state;
	log_setlevel(LOG_INFO);
	assert_int_equal(log_stamp(), 0);
	log_setlevel(LOG_DEBUG);
	a = log_stamp();
	usleep(2000);
	b = log_stamp();
	assert_true(a > 0);
	/* Microseconds: 2 ms of sleep is at least 2000 of them. */
	assert_true(b - a >= 2000);
	assert_true(b - a < 10000000);
	/* The wall clock is some decades past the monotonic clock's zero. */
	off = log_stamp_offset();
	assert_true(off > (int64_t)1000000000 * 1000000);
}

/*
 * stderr a pipe that nobody reads: lines that do not fit are dropped, not
 * waited for (alarm() fails the test if a write blocks), and once the pipe
 * is read the next line comes after the count of those lost.
 */
static void
test_full_pipe_never_blocks(void **state)
{
	static char buf[1 << 17];
	char *text;
	ssize_t n;
	size_t len = 0;
	int fds[2], i;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_not_equal(dup2(fds[1], STDERR_FILENO), -1);
	(void)close(fds[1]);
	log_init("zkelectd", LOG_DEBUG);
	(void)alarm(20);
	/* 2,000 lines of about 100 bytes: three times what the pipe holds. */
	for (i = 0; i < 2000; i++)
		log_info("line %04d of a flood that nobody reads, padded out "
		    "to about a hundred bytes", i);
	(void)alarm(0);
	assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	assert_true(len > 0 && len < 100 * 2000);
	assert_non_null(strstr(buf, "line 0000 of a flood"));
	assert_null(strstr(buf, "line 1999 of a flood"));
	assert_int_equal(test_count(buf, "\n"), test_count(buf, "zkelectd: "));
	log_notice("after the reader came back");
	n = read(fds[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(text = strstr(buf, " log lines dropped: stderr was "
	    "full (its reader stalled)\n"));
	assert_non_null(strstr(text, "zkelectd: after the reader came back\n"));
	(void)close(fds[0]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, test_setup, test_teardown)
		T(test_stamp_and_one_line),
		T(test_repeats_collapse),
		T(test_below_level_not_counted),
		T(test_threads),
		T(test_stamp_only_at_debug),
		T(test_full_pipe_never_blocks),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
