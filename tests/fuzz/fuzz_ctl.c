/*
 * The control socket: arbitrary bytes from clients through ctl.c's line
 * handling into command_handle() of a real daemon. The input is one or
 * more clients' bytes, separated by form feeds (0x0c); each answer must
 * be the documented one for the line ctl.c makes of those bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_daemon.h"
#include "proto.h"
#include "xmalloc.h"

#define FUZZ_CLIENTS_MAX	8

static const char *const fuzz_roles[] = {
	"unknown", "follower", "promoting", "leader", "demoting", "observer",
	"stopped", NULL,
};

/* The line ctl.c hands over: up to the newline, one '\r' less, NUL '?'. */
static int
fuzz_ctl_line(const char *in, size_t n, char *line)
{
	const char *nl = memchr(in, '\n', n);
	size_t len = nl != NULL ? (size_t)(nl - in) : n, i;

	if (len > 0 && in[len - 1] == '\r')
		len--;
	if (len > PROTO_MAX_LINE)
		return -1;
	for (i = 0; i < len; i++)
		line[i] = in[i] == '\0' ? '?' : in[i];
	line[len] = '\0';
	return 0;
}

static int
fuzz_ctl_role(const char *s)
{
	int i;

	for (i = 0; fuzz_roles[i] != NULL; i++)
		if (strcmp(s, fuzz_roles[i]) == 0)
			return 1;
	return 0;
}

/* "role=R leader=L epoch=N time=T" with a known role. */
static void
fuzz_ctl_watch(const char *ans)
{
	char role[32];

	fuzz_expect(fuzz_clean(ans, strlen(ans) - 1), "watch line", ans);
	FUZZ_ASSERT(sscanf(ans, "role=%31[a-z] leader=", role) == 1 &&
	    fuzz_ctl_role(role) && strstr(ans, " epoch=") != NULL &&
	    strstr(ans, " time=") != NULL &&
	    strchr(ans, '\n') == ans + strlen(ans) - 1, "bad watch line: %s",
	    ans);
}

/* "id=...\ndata=...\nepoch=...\n", the values clean. */
static void
fuzz_ctl_leader(const char *ans)
{
	const char *keys[] = { "id=", "data=", "epoch=" }, *p = ans, *nl;
	int i;

	for (i = 0; i < 3; i++) {
		FUZZ_ASSERT(strncmp(p, keys[i], strlen(keys[i])) == 0 &&
		    (nl = strchr(p, '\n')) != NULL, "bad leader answer: %s",
		    ans);
		fuzz_expect(fuzz_clean(p, (size_t)(nl - p)), "leader answer",
		    ans);
		p = nl + 1;
	}
	FUZZ_ASSERT(*p == '\0', "junk after the leader answer: %s", ans);
}

static void
fuzz_ctl_check(const char *line, const char *ans, int closed)
{
	if (strcmp(line, "ping") == 0)
		FUZZ_ASSERT(strcmp(ans, "pong\n") == 0, "ping: %s", ans);
	else if (strcmp(line, "version") == 0)
		FUZZ_ASSERT(strcmp(ans, ZKELECTD_VERSION "\n") == 0,
		    "version: %s", ans);
	else if (strcmp(line, "role") == 0) {
		FUZZ_ASSERT(ans[0] != '\0' && ans[strlen(ans) - 1] == '\n',
		    "role: %s", ans);
		FUZZ_ASSERT(strlen(ans) < 32, "role: %s", ans);
		{
			char r[32];

			memcpy(r, ans, strlen(ans) - 1);
			r[strlen(ans) - 1] = '\0';
			FUZZ_ASSERT(fuzz_ctl_role(r), "role: %s", ans);
		}
	} else if (strcmp(line, "status") == 0)
		fuzz_expect(fuzz_status(ans, "role", NULL, 0), "status", ans);
	else if (strcmp(line, "status json") == 0)
		fuzz_expect(fuzz_json(ans), "status json", ans);
	else if (strcmp(line, "leader") == 0)
		fuzz_ctl_leader(ans);
	else if (strcmp(line, "members") == 0 ||
	    strcmp(line, "members json") == 0)
		FUZZ_ASSERT(strcmp(ans, "error zookeeper-unavailable\n") == 0,
		    "members without a session: %s", ans);
	else if (strcmp(line, "history") == 0)
		fuzz_expect(fuzz_utf8(ans, strlen(ans)), "history", ans);
	else if (strcmp(line, "metrics") == 0)
		fuzz_expect(fuzz_metrics(ans), "metrics", ans);
	else if (strcmp(line, "watch") == 0) {
		/* The client half-closed: the line may or may not be out. */
		if (ans[0] != '\0')
			fuzz_ctl_watch(ans);
		return;
	} else if (strncmp(line, "switchover", 10) == 0 &&
	    (line[10] == '\0' || line[10] == ' '))
		/* Never leader here: a bad id, or not the leader. */
		FUZZ_ASSERT(strcmp(ans, "error bad-id\n") == 0 ||
		    strcmp(ans, "error not-leader\n") == 0,
		    "switchover of a non-leader: %s", ans);
	else if (strcmp(line, "resign") == 0)
		FUZZ_ASSERT(strcmp(ans, "error not-leader\n") == 0,
		    "resign of a non-leader: %s", ans);
	else if (strcmp(line, "pause") == 0) {
		FUZZ_ASSERT(strcmp(ans, "ok\n") == 0 || ans[0] == '\0',
		    "pause: %s", ans);
		return;
	} else if (strcmp(line, "resume") == 0)
		FUZZ_ASSERT(strcmp(ans, "ok\n") == 0, "resume: %s", ans);
	else
		FUZZ_ASSERT(strcmp(ans, "error unknown-command\n") == 0,
		    "unknown command \"%s\": %s", line, ans);
	FUZZ_ASSERT(closed, "not closed after \"%s\"", line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon d;
	const char *p = (const char *)data, *end = p + size, *ff;
	char line[PROTO_MAX_LINE + 1], *ans;
	size_t n;
	int closed, clients = 0;

	if (size > 16384)
		return 0;
	fuzz_daemon_init(&d);
	while (p <= end && clients++ < FUZZ_CLIENTS_MAX) {
		ff = memchr(p, '\f', (size_t)(end - p));
		n = ff != NULL ? (size_t)(ff - p) : (size_t)(end - p);
		ans = fuzz_daemon_ask(&d, p, n, &closed);
#ifdef FUZZ_DEBUG
		fprintf(stderr, "<<%.*s>> closed=%d\n%s", (int)n, p, closed, ans);
#endif
		if (n == 0) {
			FUZZ_ASSERT(ans[0] == '\0' && closed,
			    "an empty client got an answer: %s", ans);
		} else if (fuzz_ctl_line(p, n, line) == -1) {
			FUZZ_ASSERT(strcmp(ans, "error line-too-long\n") == 0
			    && closed, "over-long line: %s", ans);
		} else
			fuzz_ctl_check(line, ans, closed);
		free(ans);
		if (ff == NULL)
			break;
		p = ff + 1;
	}
	fuzz_daemon_free(&d);
	return 0;
}
