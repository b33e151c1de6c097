/*
 * The leader-election recipe as a pure state machine.
 *
 * It performs no I/O: the daemon feeds it events (session state changes,
 * completed ZooKeeper requests, watch notifications, finished hooks,
 * timers, operator requests) and asks it for the next action with
 * election_next() until there is none. Time comes in through
 * election_clock(); the election says through election_deadline() when it
 * must be woken. Up to EL_PIPE_MAX election requests may be outstanding
 * (the daemon answers them in the order they were sent, as ZooKeeper
 * replies), plus one keepalive sync and one hook (promote, demote, fence
 * or check: they share one slot). The simulator in tests/sim runs this
 * very code.
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

/*
 * What the candidate is doing now: the states of election.c's table. Each
 * change is reported (EL_ACT_TRANSITION) with its cause.
 */
enum el_state {
	EL_ST_JOINING,		/* no node of ours in the queue: making one */
	EL_ST_QUEUED,		/* our node waits behind others */
	EL_ST_HEIR,		/* second, behind the head */
	EL_ST_HEAD,		/* first: claims, reads, then promotes */
	EL_ST_PROMOTING,	/* the promote (or fence) hook runs */
	EL_ST_LEADING,		/* the application was told to lead */
	EL_ST_DEMOTING,		/* the demote hook runs */
	EL_ST_RELEASING,	/* our nodes are being deleted: leaving */
	EL_ST_PAUSED,		/* out of the queue until resumed */
	EL_ST_UNHEALTHY,	/* out of the queue until the check passes */
	EL_ST_OBSERVER,		/* never queues */
	EL_ST_STOPPING,		/* the ordered handoff before exiting */
	EL_ST_STOPPED,
	EL_ST_COUNT
};

enum el_zk {
	EL_ZK_CONNECTING,
	EL_ZK_CONNECTED,
	EL_ZK_READONLY,
	EL_ZK_EXPIRED,
	EL_ZK_AUTH_FAILED,	/* like EXPIRED, but the new session waits */
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
	EL_OP_BREADCRUMB,	/* get E/breadcrumb with a watch */
	EL_OP_ACK,		/* multi: check own, write E/leader and breadcrumb */
	EL_OP_RELEASE,		/* multi: delete what we own */
	EL_OP_SET_DATA,		/* multi: new data on our node (and E/leader) */
	EL_OP_SYNC,		/* zoo_async on E: a quorum-confirmed round trip */
	EL_OP_CLAIM,		/* multi: check own node, create our claim
				 * (ephemeral sequential, in E/claims) */
	EL_OP_CLAIM_WATCH,	/* exists the claim before ours, with a watch */
	EL_OP_CLAIMS,		/* children of E/claims, no watch */
	EL_OP_SW_DELETE,	/* multi: delete nodes between us and a target */
	EL_OP_MARK,		/* create our priority marker (ephemeral) */
	EL_OP_UNMARK,		/* multi: delete a priority marker of ours */
	EL_OP_MARKS,		/* children of E/priority, with a watch */
	EL_OP_CRUMB_EXISTS,	/* exists E/breadcrumb with a watch, when absent */
	EL_OP_CLAIM_OWN,	/* exists our own claim, with a watch */
	EL_OP_UNCLAIM,		/* multi: check own node, delete the claim
				 * before ours (of a candidate behind us) */
	EL_OP_MARK_OWN,		/* exists our priority marker, with a watch */
	EL_OP_COUNT
};

enum el_act_type {
	EL_ACT_NONE,
	EL_ACT_ZK,		/* send op; answer with election_op_done() */
	EL_ACT_HOOK,		/* run hook; answer with election_hook_done() */
	EL_ACT_CANCEL,		/* end the running hook: SIGTERM to its group,
				 * SIGKILL act->ms later (0: SIGKILL now); its
				 * election_hook_done() still follows */
	EL_ACT_RESTART,		/* close the handle, open a new session */
	EL_ACT_STOPPED,		/* the stop handoff is complete: exit */
	EL_ACT_RESIGNED,	/* resign done and rejoined: answer "ok" */
	EL_ACT_PAUSED,		/* pause done: answer "ok" */
	/*
	 * Preemption (election.preempt_delay): read the queue, path's
	 * children in queue order and each one's data, and answer with
	 * election_queue(). Outside the pipeline: at most one at a time.
	 */
	EL_ACT_QUEUE,
	/* A candidate outranks this leader (path: its node, data: its id,
	 * priority): it leads ms from now unless it goes. For the log. */
	EL_ACT_OUTRANKED,
	/* The switchover to it (path, data, priority) has begun (reason
	 * preempted): election_switchover_failed() tells if it is given up. */
	EL_ACT_PREEMPT,
	/*
	 * The state changed (from, to; reason: its cause), for the log.
	 * unlisted: a move election.c's table does not have (a defect).
	 */
	EL_ACT_TRANSITION,
};

#define EL_MAX_SUBOPS 5
/* Election requests in flight at once (replies come back in order). */
/* Path components of E/candidates at most: the root may have two fewer. */
#define EL_MAX_DEPTH	15
#define EL_PIPE_MAX 4

struct el_action {
	enum el_act_type type;
	enum el_op op;
	const char *path;	/* PARENT, CREATE, WATCH_*, LEADER*, SYNC */
	const char *data;	/* CREATE */
	struct zk_mop sub[EL_MAX_SUBOPS];	/* ACK, RELEASE, SET_DATA */
	int nsub;
	enum hook_kind hook;
	const char *reason;	/* HOOK: ZKELECT_REASON; RELEASE: why we leave */
	int64_t epoch;		/* ZKELECT_EPOCH of the hook */
	int64_t priority;	/* OUTRANKED, PREEMPT: the candidate's */
	int64_t ms;		/* HOOK: its timeout; it must have ended
				 * (group gone) by then for DEMOTE.
				 * CANCEL: from SIGTERM to SIGKILL */
	enum el_state from, to;	/* TRANSITION */
	int unlisted;
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
	/* ACK, SET_DATA: the version the multi's last set left, if told. */
	int has_set_version;
	int32_t set_version;
};

struct election_params {
	const char *path;	/* E = <root>/<service> */
	const char *id;
	const char *data;
	int64_t priority;	/* advertised in our node's data when not 0 */
	int64_t preempt_delay_ms;	/* -1: never preempted */
	int observer;
	int fence;		/* a fence hook is configured */
	int check;		/* a health check is configured */
	int demote_on_start;
	int64_t session_timeout_ms;	/* requested; until one is negotiated */
	int64_t hook_timeout_ms;	/* promote and fence */
	int64_t demote_timeout_ms;
	int64_t check_interval_ms;
	int64_t check_fall;
	int64_t check_rise;
	int64_t retry_backoff_ms;
	int64_t disconnect_grace_ms;	/* or EL_GRACE_LEASE */
	/*
	 * The ensemble's tickTime. A touch made on a follower reaches the
	 * quorum's leader with the follower's next ping, tick/2 later at
	 * most; 0: at once (the simulator's plain model).
	 */
	int64_t tick_ms;
};

/* disconnect_grace_ms: a disconnected leader leads on while its lease holds. */
#define EL_GRACE_LEASE (-1)

struct election;

struct election *election_new(const struct election_params *p);
void election_free(struct election *el);

/*
 * The clock: milliseconds on one monotonic clock that keeps counting
 * through a suspend (CLOCK_BOOTTIME in the daemon, virtual time in the
 * simulator). Call it before every event and before election_next(); it
 * never goes backwards. A leader past the point where its demote must
 * start is demoted by this call's next election_next().
 */
void election_clock(struct election *el, int64_t now_ms);
/* When the election next wants election_clock() + election_next() called
 * even if nothing else happens (INT64_MAX: never). */
int64_t election_deadline(const struct election *el);
/*
 * What a demote asked for with the budget ms may take if it starts at the
 * clock's now: no more than the lease has left, less the margin (the
 * core's own demotes get it; the daemon's late starts ask for it); the
 * whole budget without a lease or past its end, which *late (unless
 * NULL) tells.
 */
int64_t election_demote_budget(const struct election *el, int64_t ms,
    int *late);

/* Next action to perform, or EL_ACT_NONE. Pointers in act stay valid until
 * the next call into the election. */
void election_next(struct election *el, struct el_action *act);

/* Events. */
void election_session(struct election *el, enum el_zk state, int64_t sid,
    int64_t timeout_ms);
void election_restarted(struct election *el);
/*
 * A new session is asked for now (just before zookeeper_init): the quorum
 * makes it later, and cannot expire it before its timeout has passed
 * since, so its lease runs from now until confirmations take over.
 */
void election_session_requested(struct election *el);
void election_op_done(struct election *el, enum el_op op,
    const struct el_result *res);
void election_watch(struct election *el, int deleted, const char *path);
void election_hook_done(struct election *el, enum hook_kind kind, int ok);
void election_set_data(struct election *el, const char *data);
/*
 * The session named in r is re-attached rather than a new one asked for
 * (a re-exec, or a restart after a crash: see election_event.c). Called once,
 * after election_new() and before any event; the startup demote is then
 * run only if what the session holds cannot be confirmed.
 */
struct el_resume {
	int64_t sid;
	int64_t timeout_ms;	/* its negotiated timeout */
	int64_t lease_sent;	/* its lease, on this clock; 0 when none */
	int leader;		/* the application was told to lead (promoted) */
	int promoting;		/* a promote or fence hook was started and
				 * had not ended: the application may lead */
	int64_t epoch;		/* the epoch it was told */
	/*
	 * A claim of the session, by its sequence: the one a promote or
	 * fence began on while that leadership lasts, else ours once
	 * listed. A restart that finds it gone cannot tell whether a
	 * promote began on it (a crash in the hook's first moments, before
	 * `promoting` was written, and its claim deleted by hand since).
	 */
	int claimed;
	int64_t claim_seq;
	/*
	 * The claim a leader's breadcrumb was last written under (its ack's,
	 * another than claim_seq's when that one was deleted by hand
	 * mid-promote): its release deletes the breadcrumb beside it. A file
	 * of an older version has none: claim_seq's is taken then.
	 */
	int crumb_claimed;
	int64_t crumb_claim_seq;
	/*
	 * The application was demoted (a demote hook ended well) and no
	 * promote or fence began since: not leading, whatever E/leader or
	 * the claims say. A file of an older version has none: 0.
	 */
	int down;
	int exact;		/* handed over by the image that ran (re-exec) */
	int unhealthy;		/* its health check had failed check_fall times */
};
void election_resume(struct election *el, const struct el_resume *r);
/* A reload: data, fence, check, hook timings, backoff and grace. */
void election_reconfigure(struct election *el,
    const struct election_params *p);
/*
 * The queue read for EL_ACT_QUEUE: n names in queue order, each one's data
 * (NULL when its read failed). NULL: the listing itself failed.
 */
struct el_queue {
	int n;
	char *const *names;
	char *const *datas;
};
void election_queue(struct election *el, const struct el_queue *q);
/* The number of candidates, counted elsewhere (E/candidates' stat). */
void election_candidates(struct election *el, int n);

/* Operator requests. resign returns -1 when not leader. */
int election_resign(struct election *el);
/*
 * Leader: hand over to the candidate whose node (a name in E/candidates)
 * is given. The nodes between ours and the target's are deleted, so their
 * owners rejoin at the back (as after any deletion of their node), then
 * the ordered handoff runs (demote reason: reason, switchover for an
 * operator, preempted for a higher priority) and we rejoin. -1
 * when not leader, leaving, or a switchover is under way, or the node is
 * ours or not a candidate's. election_switchover_failed() says once why
 * one was given up (the target is gone, leadership was lost, rights).
 */
int election_switchover(struct election *el, const char *node,
    const char *reason);
void election_switchover_cancel(struct election *el);
const char *election_switchover_failed(struct election *el);
/*
 * The leader's supervised process (hooks.run) ended on its own: an
 * ordered handoff (demote reason run-exited), then retry_backoff before
 * the rejoin, as after a failed promote. -1 when not leading or already
 * leaving.
 */
int election_run_exited(struct election *el);
void election_pause(struct election *el, int paused);
void election_stop(struct election *el);

/* What it knows, for status, socket and hooks. */
enum role election_role(const struct election *el);
const char *election_role_name(enum role r);
const char *election_op_name(enum el_op op);
const char *election_state_name(enum el_state s);
/* Whether election.c's transition table has the move from -> to. */
int election_transition_listed(enum el_state from, enum el_state to);
struct election_view {
	enum role role;
	enum el_state state;	/* as last reported (EL_ACT_TRANSITION) */
	enum el_zk zk;
	int64_t sid;
	const char *leader_id;	/* "" when none */
	const char *leader_data;
	int64_t leader_epoch;	/* 0 when none */
	/*
	 * E/leader is there but its session holds no candidate node ahead
	 * of ours: what it says is not shown (leader_owner is that session).
	 */
	int leader_untrusted;
	int64_t leader_owner;
	int64_t epoch;		/* ours (czxid of our node), 0 before known */
	int candidates;
	int position;		/* ours in the last listing, 1-based; 0 none */
	const char *node;	/* our node name or NULL */
	int paused;
	int unhealthy;		/* the health check failed check_fall times */
	int hook;		/* -1, or the enum hook_kind running */
	const char *id;		/* ours */
	const char *data;
	int yields;		/* a head's yields to a higher priority so far */
	int64_t yield_sid;	/* the last: to whose session, what priority */
	int64_t yield_prio;
	const char *crumb_id;	/* the breadcrumb: who led last */
	const char *crumb_data;
	int64_t crumb_epoch;
	int64_t session_timeout_ms;	/* negotiated (or requested) */
	int64_t demote_timeout_ms;	/* in force (clamped to T/4) */
	int demote_clamped;	/* configured demote_timeout >= T/3 */
	const char *restart_why;	/* the session is replaced: why */
	int64_t lease_end;	/* 0 before a quorum-confirmed reply */
	int64_t demote_at;	/* a leader demotes from then on; 0 as lease_end */
	int64_t confirmed_at;	/* the last quorum confirmation came; 0 none */
	int64_t report_lag_ms;	/* tick/2: allowed for a follower's report */
	/*
	 * NULL, or why the negotiated timeout leaves no room for a lease
	 * with this tickTime: the daemon then stays out of the queue.
	 */
	const char *lease_error;
	int64_t backoff_until;	/* 0 when not backing off */
	int resuming;		/* a resumed session's facts are being checked */
	int promote_begun;	/* a promote or fence hook runs, or ran before
				 * a restart whose checks are not over: the
				 * session file keeps it */
	int promoted;		/* the application was told to lead, and its
				 * demote has not started */
	int down;		/* el_resume's down: for the session file */
	int claimed;		/* el_resume's claimed and claim_seq: for */
	int64_t claim_seq;	/* the session file */
	int crumb_claimed;	/* el_resume's crumb_claimed and */
	int64_t crumb_claim_seq;	/* crumb_claim_seq: the same */
	int64_t lead_epoch;	/* the epoch the application was told (the
				 * session file's, while promoted: epoch is
				 * 0 once the node is gone) */
};
void election_view(const struct election *el, struct election_view *v);

#endif
