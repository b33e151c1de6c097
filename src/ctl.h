/*
 * The control socket: a Unix stream listener that reads one command line
 * per connection and hands it to the daemon. Clients are named by a number
 * so that an answer given late (resign, members) never touches a client
 * that has gone away.
 */
#ifndef ZKELECTD_CTL_H
#define ZKELECTD_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

struct event_base;
struct ctl;

/*
 * Called once per client with its command line (without the newline, NUL
 * terminated; never over PROTO_MAX_LINE bytes). The daemon answers with
 * ctl_reply() now or later, or marks the client with ctl_watch().
 * Over-long lines are answered "error line-too-long" by ctl itself.
 */
typedef void (*ctl_command_fn)(struct ctl *ctl, uint64_t client,
    uid_t peer_uid, const char *line, void *arg);

struct ctl_params {
	const char *path;
	int mode;		/* permission bits, e.g. 0660 */
	const char *group;	/* group name or NULL */
	int max_clients;
	int idle_timeout_ms;	/* drop a client that sends no line, 5000 */
	int inherit_fd;		/* a listening socket bound at path already
				 * (inherited across a re-exec), or 0 */
};

/*
 * Binds the socket (replacing a stale file left by a dead daemon, refusing
 * a path where a live daemon answers) and starts accepting.
 * Returns NULL with err filled on failure.
 */
struct ctl *ctl_open(struct event_base *base, const struct ctl_params *p,
    ctl_command_fn fn, void *arg, char *err, size_t errlen);
/* Closes every client, the listener, and unlinks the socket file. */
void ctl_close(struct ctl *ctl);

/* Writes text (a trailing newline is added if missing) and closes the
 * client once it is flushed. Returns -1 when the client is gone. */
int ctl_reply(struct ctl *ctl, uint64_t client, const char *text);
/* Writes one line to a client and keeps it open. -1 when it is gone. */
int ctl_send(struct ctl *ctl, uint64_t client, const char *line);
/*
 * Keeps the client open and sends every ctl_broadcast() to it; -1 when it
 * is gone, or over the watchers' bounds (it is then answered
 * "error too-many-watchers" and closed).
 */
int ctl_watch(struct ctl *ctl, uint64_t client);
/* Writes one line to every watching client. */
void ctl_broadcast(struct ctl *ctl, const char *line);
/* Uid of the euid the daemon runs as is compared by the caller. */
int ctl_clients(const struct ctl *ctl);
/* Clients that are not watching: a command not answered, or its answer
 * not flushed yet. */
int ctl_busy(const struct ctl *ctl);
/* Stops (0) or starts again (1) accepting; the kernel queues meanwhile. */
void ctl_accepting(struct ctl *ctl, int on);
/* The listening socket. */
int ctl_listen_fd(const struct ctl *ctl);
/* 1 when a daemon answers at path, 0 when none does, -1 unknown (errno). */
int ctl_listen_live(const char *path);
/* The path a listening Unix socket is bound at; -1 when it has none. */
int ctl_listen_bound(int fd, char *buf, size_t len);

#endif
