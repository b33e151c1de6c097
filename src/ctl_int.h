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

/* What the listener does after handing a descriptor to ctl.c. */
enum ctl_accept {
	CTL_ACCEPT_MORE,	/* taken: accept the next one */
	CTL_ACCEPT_PAUSE,	/* taken for an evicted one: none more this turn */
	CTL_ACCEPT_REFUSE,	/* every slot busy: the listener turns it away */
};
/*
 * ctl.c's part in accepting, registered with ctl_listen_open(): takes an
 * accepted, non-blocking descriptor over (CTL_ACCEPT_MORE or
 * CTL_ACCEPT_PAUSE) or leaves it to the listener (CTL_ACCEPT_REFUSE).
 */
typedef enum ctl_accept (*ctl_accept_fn)(struct ctl *ctl, int fd);

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
	ctl_accept_fn accept;	/* ctl_listen_open()'s */
};

/* Takes an accepted, non-blocking descriptor over, or closes it. */
void ctl_client_new(struct ctl *ctl, int fd);

/*
 * Binds and listens on p->path and starts accepting into ctl->fd, handing
 * each accepted descriptor to fn. Returns -1 with err filled, the socket
 * file gone and nothing left open.
 */
int ctl_listen_open(struct ctl *ctl, const struct ctl_params *p,
    ctl_accept_fn fn, char *err, size_t errlen);
/* Stops accepting and removes the socket file if it is still ours. */
void ctl_listen_close(struct ctl *ctl);

#endif
