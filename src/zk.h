/*
 * A thin wrapper around libzookeeper_mt that keeps ZooKeeper's threads away
 * from the daemon's state: every watcher and completion callback copies
 * what it got into a queue and wakes the event loop through an eventfd;
 * the loop hands the events to the daemon. Each handle has a generation,
 * and events of an older handle are dropped. This file decides nothing.
 */
#ifndef ZKELECTD_ZK_H
#define ZKELECTD_ZK_H

#include <stdint.h>

struct event_base;
struct zk;

enum zk_ev_type {
	ZK_EV_SESSION,		/* state: ZOO_CONNECTED_STATE, ... */
	ZK_EV_WATCH,		/* wtype: ZOO_DELETED_EVENT, ...; path */
	ZK_EV_REPLY,		/* tag, rc, and what the request returns */
};

struct zk_event {
	struct zk_event *next;
	unsigned gen;
	enum zk_ev_type type;
	int state;
	int wtype;
	int64_t sid;		/* SESSION: the session id when connected */
	int timeout_ms;		/* SESSION: the negotiated timeout */
	uint64_t tag;
	int rc;
	char *path;		/* WATCH path, or the path a create made */
	char *data;		/* get: NUL terminated copy */
	int has_stat;
	int64_t czxid;
	int64_t owner;
	int32_t version;
	int32_t numchildren;
	char **children;
	int nchildren;
	int64_t sent_ms;	/* REPLY: when the request was sent */
	/* REPLY of a multi: the version its last set left, when it had one. */
	int has_set_version;
	int32_t set_version;
	/*
	 * At log level debug (log_stamp(), else 0): when the library's
	 * thread handed it over, and when the loop took it from the queue.
	 */
	int64_t queued_us;
	int64_t drained_us;
};

/* One operation of a multi. */
enum zk_mop_kind {
	ZK_MOP_CREATE,
	ZK_MOP_CREATE_EPHEMERAL,
	ZK_MOP_CREATE_EPHEMERAL_SEQ,	/* ephemeral sequential */
	ZK_MOP_SET,
	ZK_MOP_DELETE,
	ZK_MOP_CHECK,
};

struct zk_mop {
	enum zk_mop_kind kind;
	const char *path;
	const char *data;
	int32_t version;	/* SET, DELETE, CHECK: the expected one, or -1 */
};

typedef void (*zk_event_fn)(const struct zk_event *ev, void *arg);

struct zk *zk_new(struct event_base *base, zk_event_fn fn, void *arg);
/*
 * Called with 1 before a batch of events (all the library's threads queued
 * since the loop last looked) is handed to zk_event_fn one by one, and
 * with 0 after the last of them.
 */
typedef void (*zk_batch_fn)(int begin, void *arg);
void zk_set_batch(struct zk *zk, zk_batch_fn fn);
void zk_free(struct zk *zk);

/* Opens a new handle (and session); the old one must be closed. auth is
 * "user:password" for digest, or NULL. Returns -1 with errno set. */
int zk_open(struct zk *zk, const char *hosts, int timeout_ms,
    const char *auth);
/* A session's credentials, as zoo_client_id() gives them. */
struct zk_session {
	int64_t sid;
	char passwd[16];
};
/* zk_open(), re-attaching the session sess instead of asking for one. */
int zk_open_session(struct zk *zk, const char *hosts, int timeout_ms,
    const char *auth, const struct zk_session *sess);
/* The current handle's session: 0, or -1 when it has none yet. */
int zk_session_get(const struct zk *zk, struct zk_session *sess);
/* Closes the current handle, if any; its pending events are dropped. */
void zk_close(struct zk *zk);
int zk_is_open(const struct zk *zk);
/* Moves the live session to another server list (zoo_set_servers);
 * returns ZOK, or the error with which the list was refused (errno set
 * for ZSYSTEMERROR). Give it addresses (zk_hosts_numeric()): names would
 * be resolved here, on the caller's thread. */
int zk_set_hosts(struct zk *zk, const char *hosts);
/* The daemon leaves a server silent for T / this with a request waiting. */
#define ZK_STALL_DIV	5
/* A server that leaves a request unanswered ms long is left (0: never). */
void zk_set_stall(struct zk *zk, int64_t ms);
/* Shuts down this process's connection to HOST:PORT (zk_sock.c). */
int zk_sock_shutdown(const char *hostport);
/* The list the handle was last given, or NULL. */
const char *zk_hosts(const struct zk *zk);
/* 1 when two host:port lists hold the same entries (ports = 1) or name
 * the same hosts (ports = 0, what the client library compares). */
int zk_hosts_same(const char *a, const char *b, int ports);
/*
 * Whether the client library could move from list a to list b as b is
 * written: NULL when it can, else why not, in buf. The lists are resolved
 * as the library resolves them; an address of both on other ports is the
 * same server to it. Lists that do not resolve are compared as text.
 */
const char *zk_hosts_clash(const char *a, const char *b, char *buf,
    size_t len);
/*
 * List b resolved to addresses, for a move from list a: NULL with why in
 * buf when it does not resolve or clashes (zk_hosts_clash()). It waits on
 * DNS: never on the event loop (resolve.c).
 */
char *zk_hosts_numeric(const char *a, const char *b, char *buf, size_t len);
/* 1 when every host of the list is an IPv4 or IPv6 address. */
int zk_hosts_are_addresses(const char *list);
void zk_set_loglevel(int level);

/*
 * Asynchronous requests; the reply comes back as a ZK_EV_REPLY with tag.
 * They return ZOK or the ZooKeeper error of the submission (no reply then).
 */
int zk_get(struct zk *zk, const char *path, int watch, uint64_t tag);
int zk_exists(struct zk *zk, const char *path, int watch, uint64_t tag);
int zk_children(struct zk *zk, const char *path, uint64_t tag);
/* The same, leaving a watch on path's children (a ZOO_CHILD_EVENT). */
int zk_children_watch(struct zk *zk, const char *path, uint64_t tag);
/* zoo_async: a round trip through the quorum's leader. */
int zk_sync(struct zk *zk, const char *path, uint64_t tag);
int zk_create(struct zk *zk, const char *path, const char *data, int flags,
    uint64_t tag);
int zk_multi(struct zk *zk, const struct zk_mop *ops, int n, uint64_t tag);

const char *zk_strerror(int rc);
const char *zk_state_name(int state);

#endif
