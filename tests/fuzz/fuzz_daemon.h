/*
 * A real struct daemon, set up as zkelectd.c's main does (configuration
 * loaded from a file, event base, control socket, election core, hook
 * runner, ZooKeeper handle never opened), for the harnesses that go
 * through command_handle(). Clients are socketpairs handed to ctl.c
 * exactly as its listener hands accepted descriptors.
 */
#ifndef ZKELECTD_FUZZ_DAEMON_H
#define ZKELECTD_FUZZ_DAEMON_H

#include <stddef.h>

#include "zkelectd.h"

void fuzz_daemon_init(struct daemon *d);
void fuzz_daemon_free(struct daemon *d);
/*
 * Connects a client, writes the n bytes of in, half-closes, and runs the
 * loop until the daemon closes the connection or nothing happens any
 * more. Returns the answer (NUL-terminated, caller frees); *closed says
 * whether the daemon closed the connection.
 */
char *fuzz_daemon_ask(struct daemon *d, const void *in, size_t n,
    int *closed);

/* A client whose answer may come later (members). */
struct fuzz_client {
	int fd;
	const char *in;
	size_t n;
	size_t off;
	int shut;
	int closed;
	char *out;
	size_t len;
};
/* Connects, sends, half-closes and runs the loop until it is idle. */
void fuzz_client_start(struct daemon *d, struct fuzz_client *c,
    const void *in, size_t n);
/* Runs the loop until idle again, closes; the answer as for ask. */
char *fuzz_client_finish(struct daemon *d, struct fuzz_client *c,
    int *closed);

#endif
