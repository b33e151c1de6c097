/*
 * The control socket's state, shared by ctl.c (the clients and what they
 * are told) and ctl_listen.c (the listening socket and its file).
 */
#ifndef ZKELECTD_CTL_INT_H
#define ZKELECTD_CTL_INT_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"

struct ctl_client;

#define CTL_TOO_MANY		"error too-many-clients\n"

struct ctl {
	struct event_base *base;
	char *path;
	int fd;
	dev_t dev;		/* of the socket file we bound, to unlink */
	ino_t ino;		/* only our own */
	struct event *ev_accept;
	struct event *ev_resume;	/* accepting again after EMFILE */
	int accept_warned;
	TAILQ_HEAD(, ctl_client) clients;
	int nclients;
	int nwatchers;
	uint64_t next_id;
	int max_clients;
	int max_watchers;	/* max_clients less the slots kept for others */
	int max_watchers_uid;	/* watchers of one peer uid */
	int idle_timeout_ms;
	ctl_command_fn fn;
	void *arg;
};

void ctl_timeval(struct timeval *tv, int ms);
/* Takes an accepted, non-blocking descriptor over, or closes it. */
void ctl_client_new(struct ctl *ctl, int fd);
/*
 * At max_clients: drops the client that matters least (one answered and
 * lingering, else the oldest that sent no line yet) and returns 0, or -1
 * when every slot is busy with a command or a watcher.
 */
int ctl_client_evict(struct ctl *ctl);

/*
 * Binds and listens on p->path and starts accepting into ctl->fd.
 * Returns -1 with err filled, the socket file gone and nothing left open.
 */
int ctl_listen_open(struct ctl *ctl, const struct ctl_params *p, char *err,
    size_t errlen);
/* Stops accepting and removes the socket file if it is still ours. */
void ctl_listen_close(struct ctl *ctl);

#endif
