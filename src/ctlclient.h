/*
 * What the two halves of zkelectctl share: zkelectctl.c reads the command
 * line and picks the socket, ctlclient.c talks to the daemon and turns its
 * answer into output. Both end the process on failure with one of the
 * exit codes below, since a one-shot client has nothing to clean up.
 */
#ifndef ZKELECTD_CTLCLIENT_H
#define ZKELECTD_CTLCLIENT_H

#include <stdint.h>

enum zkelectctl_exit {
	EXIT_OK = 0,
	EXIT_NO = 1,		/* not leader, wait timed out */
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	EXIT_DAEMON_ERROR = 4,	/* the daemon answered "error ..." */
};

enum zkelectctl_kind {
	KIND_PLAIN,		/* print the answer */
	KIND_HANDOFF,		/* plain, answered once the election did it */
	KIND_JSON,		/* plain; --json asks "NAME json" */
	KIND_IS_LEADER,
	KIND_WAIT,
	KIND_SWITCHOVER,	/* switchover ID */
	KIND_WATCH,
};

struct zkelectctl_cmd {
	const char *name;
	enum zkelectctl_kind kind;
	const char *args;
	const char *help;
};

struct zkelectctl {
	const struct zkelectctl_cmd *cmd;
	const char *path;
	const char *role;	/* wait */
	const char *target;	/* switchover */
	int json;		/* status or members --json */
	int quiet;
	int64_t timeout_ms;	/* -1: none */
	int64_t deadline;	/* now_ms() based; -1: none */
	int64_t probe_ms;	/* >0: at the deadline, ping; alive, wait on */
};

/* "zkelectctl: " and the message on stderr, for both halves. */
void ctlclient_warnx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/*
 * Sends line (newline included) and reads the answer up to the daemon's
 * close; prints it and returns the exit code. zc->deadline bounds it all,
 * unless zc->probe_ms is set: then each time it passes the daemon is
 * asked ping on another connection, and an answer within probe_ms moves
 * the deadline on by probe_ms.
 */
int ctlclient_oneshot(struct zkelectctl *zc, const char *line);
/*
 * watch and wait: subscribes, then prints every line (watch) or waits for
 * the line with role zc->role (wait) until zc->deadline, if any.
 * Returns the exit code.
 */
int ctlclient_stream(struct zkelectctl *zc);

#endif
