/*
 * The leader-election recipe as a pure state machine.
 *
 * It performs no I/O: the daemon feeds it events (session state changes,
 * completed ZooKeeper requests, watch notifications, finished hooks,
 * timers, operator requests) and asks it for the next action with
 * election_next() until there is none. At most one ZooKeeper request and
 * one promote/demote/fence hook are outstanding at any time, which keeps
 * every transition easy to follow and to test without a server.
 */
#ifndef ZKELECTD_ELECTION_H
#define ZKELECTD_ELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "hook.h"
#include "zk.h"

enum role {
	ROLE_UNKNOWN,
	ROLE_FOLLOWER,
	ROLE_PROMOTING,
	ROLE_LEADER,
	ROLE_DEMOTING,
	ROLE_OBSERVER,
	ROLE_STOPPED,
};

enum el_zk {
	EL_ZK_CONNECTING,
	EL_ZK_CONNECTED,
	EL_ZK_READONLY,
	EL_ZK_EXPIRED,
};

enum el_op {
	EL_OP_NONE,
	EL_OP_PARENT,		/* create a persistent parent, NODEEXISTS is fine */
	EL_OP_CREATE,		/* create our ephemeral sequential candidate */
	EL_OP_LIST,		/* children of E/candidates, no watch */
	EL_OP_WATCH_PRED,	/* get the predecessor with a watch */
	EL_OP_WATCH_OWN,	/* get our own node with a watch: owner, czxid */
	EL_OP_LEADER,		/* get E/leader with a watch */
	EL_OP_LEADER_EXISTS,	/* exists E/leader with a watch, when absent */
	EL_OP_BREADCRUMB,	/* get E/breadcrumb, no watch */
	EL_OP_ACK,		/* multi: check own, write E/leader and breadcrumb */
	EL_OP_RELEASE,		/* multi: delete what we own */
	EL_OP_SET_DATA,		/* multi: new data on our node (and E/leader) */
};

enum el_timer {
	EL_TIMER_BACKOFF,	/* retry_backoff after a failed promote */
	EL_TIMER_GRACE,		/* disconnect_grace after a lost connection */
	EL_TIMER_RETRY,		/* a pause after an unexpected error */
};

enum el_act_type {
	EL_ACT_NONE,
	EL_ACT_ZK,		/* send op; answer with election_op_done() */
	EL_ACT_HOOK,		/* run hook; answer with election_hook_done() */
	EL_ACT_TIMER,		/* arm timer; answer with election_timer() */
	EL_ACT_RESTART,		/* close the handle, open a new session */
	EL_ACT_STOPPED,		/* the stop handoff is complete: exit */
	EL_ACT_RESIGNED,	/* resign done and rejoined: answer "ok" */
	EL_ACT_PAUSED,		/* pause done: answer "ok" */
};

#define EL_MAX_SUBOPS 4

struct el_action {
	enum el_act_type type;
	enum el_op op;
	const char *path;	/* PARENT, CREATE, WATCH_*, LEADER*, ... */
	const char *data;	/* CREATE */
	struct zk_mop sub[EL_MAX_SUBOPS];	/* ACK, RELEASE */
	int nsub;
	enum hook_kind hook;
	const char *reason;	/* ZKELECT_REASON of the hook */
	enum el_timer timer;
	int64_t ms;
};

/* What a completed ZooKeeper request returned. */
struct el_result {
	int rc;			/* ZOK, ZNONODE, ZNODEEXISTS, ZCONNECTIONLOSS... */
	const char *path;	/* CREATE: the created path */
	const char *data;	/* get: the data, NUL terminated */
	int64_t czxid;		/* get/exists */
	int64_t owner;		/* ephemeralOwner */
	int32_t version;
	char *const *children;	/* LIST */
	int nchildren;
};

struct election_params {
	const char *path;	/* E = <root>/<service> */
	const char *id;
	const char *data;
	int observer;
	int fence;		/* a fence hook is configured */
	int demote_on_start;
	int64_t retry_backoff_ms;
	int64_t disconnect_grace_ms;
};

struct election;

struct election *election_new(const struct election_params *p);
void election_free(struct election *el);

/* Next action to perform, or EL_ACT_NONE. Pointers in act stay valid until
 * the next call into the election. */
void election_next(struct election *el, struct el_action *act);

/* Events. */
void election_session(struct election *el, enum el_zk state, int64_t sid);
void election_restarted(struct election *el);
void election_op_done(struct election *el, enum el_op op,
    const struct el_result *res);
void election_watch(struct election *el, int deleted, const char *path);
void election_hook_done(struct election *el, enum hook_kind kind, int ok);
void election_timer(struct election *el, enum el_timer t);
void election_set_data(struct election *el, const char *data);
/* A reload: data, fence, retry_backoff and disconnect_grace. */
void election_reconfigure(struct election *el,
    const struct election_params *p);
/* A fresh listing made for other reasons: only the count is taken. */
void election_candidates(struct election *el, char *const *names, int n);
/* The daemon's lease ran out: a leader must demote now. */
void election_lease_expired(struct election *el);

/* Operator requests. resign returns -1 when not leader. */
int election_resign(struct election *el);
void election_pause(struct election *el, int paused);
void election_set_unhealthy(struct election *el, int unhealthy);
void election_stop(struct election *el);

/* What it knows, for status, socket and hooks. */
enum role election_role(const struct election *el);
const char *election_role_name(enum role r);
struct election_view {
	enum role role;
	enum el_zk zk;
	int64_t sid;
	const char *leader_id;	/* "" when none */
	const char *leader_data;
	int64_t leader_epoch;	/* 0 when none */
	int64_t epoch;		/* ours (czxid of our node), 0 before known */
	int candidates;
	const char *node;	/* our node name or NULL */
	int paused;
	const char *id;		/* ours */
	const char *data;
	const char *crumb_id;	/* the breadcrumb: who led last */
	const char *crumb_data;
	int64_t crumb_epoch;
};
void election_view(const struct election *el, struct election_view *v);


#endif
