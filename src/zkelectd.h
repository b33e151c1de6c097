/* The daemon's state, owned by the event loop thread. */
#ifndef ZKELECTD_ZKELECTD_H
#define ZKELECTD_ZKELECTD_H

#include <stdint.h>
#include <time.h>

#include "config.h"
#include "election.h"
#include "history.h"
#include "hook.h"
#include "status.h"
#include "trace.h"
#include "zk.h"

#include <sys/types.h>

#include <event2/util.h>

struct event;
struct event_base;
struct ctl;
struct http;
struct notify;
struct zk;
struct queue_query;

struct waiter {
	struct waiter *next;
	uint64_t client;
};

/* The hook duration histogram's buckets, +Inf aside (metrics.c). */
#define METRICS_BUCKETS 13

struct daemon;

/* HTTP listeners a re-exec hands over, at most. */
#define RX_HTTP_MAX 16

/* The queue as read for a command: candidates in queue order, their
 * data NULL where a node went while it was read. */
struct queue_read {
	int n;
	char **names;
	int64_t *seqs;
	char **datas;
};
typedef void (*queue_fn)(struct daemon *d, uint64_t client, const char *arg,
    const struct queue_read *r, const char *why);

struct metrics {
	uint64_t leader_changes;
	uint64_t elections_won;
	uint64_t hook_runs[HOOK_SLOT_KINDS];
	uint64_t hook_failures[HOOK_SLOT_KINDS];
	double hook_seconds[HOOK_SLOT_KINDS];
	uint64_t hook_buckets[HOOK_SLOT_KINDS][METRICS_BUCKETS];	/* not cumulative */
	uint64_t session_expirations;
	uint64_t connection_losses;
	uint64_t socket_requests;
	uint64_t zk_requests[EL_OP_COUNT];	/* by election op; NONE: count */
	/* reads of the queue the core does not make (members, switchover,
	 * preemption): its listings, then each node's data */
	uint64_t zk_queue_lists;
	uint64_t zk_queue_gets;
};

struct daemon {
	struct event_base *base;
	/*
	 * daemon_step(), registered by main: what engine_step() runs when a
	 * feature below the daemon told the core something.
	 */
	void (*step)(struct daemon *d);
	pid_t pid;
	struct config cfg;
	const char *config_path;
	char **overrides;
	size_t noverrides;
	char *epath;		/* E */
	char *cpath;		/* E/candidates */

	struct zk *zk;
	struct resolver *resolver;	/* a new zookeeper.hosts (reload) */
	struct resolver *open_resolver;	/* the list a session is opened on */
	struct event *ev_refresh;	/* its names resolved again */
	int64_t refreshed_ms;
	struct election *el;
	struct hook_runner *hooks;
	struct ctl *ctl;
	struct http *http;	/* NULL without control.http_listen */
	struct notify *notify;

	struct event *ev_sig[7];
	int deadline_fd;	/* timerfd on CLOCK_BOOTTIME */
	struct event *ev_deadline;	/* the election's deadline */
	int64_t armed_deadline;
	struct event *ev_reopen;	/* retry a failed zookeeper_init */
	struct event *ev_count;		/* candidate count for the status */

	int zk_state;		/* ZOO_*_STATE of the handle */
	uint64_t next_tag;
	uint64_t count_tag;
	uint64_t sync_tag;	/* the election's keepalive sync in flight */
	struct {
		uint64_t tag;
		enum el_op op;
		int rc;		/* not ZOK: it could not be sent */
		char path[512];	/* for what is logged of it */
	} el_req[EL_PIPE_MAX];	/* the election's requests in flight */
	int el_nreq;
	/*
	 * Requests held back while a batch of ZooKeeper's events is stepped,
	 * sent after its last step (daemon_zk_batch()): a promote hook that
	 * the batch starts is spawned first.
	 */
	struct held_req {
		enum el_op op;
		uint64_t tag;
		char *path;
		char *data;
		struct zk_mop sub[EL_MAX_SUBOPS];
		char *sub_path[EL_MAX_SUBOPS];
		char *sub_data[EL_MAX_SUBOPS];
		int nsub;
	} held[EL_PIPE_MAX + 1];	/* and the keepalive's sync */
	int nheld;
	int holding;
	int64_t batch_drained;	/* the batch's drained stamp (trace.h) */
	pid_t hook_pid;		/* the hook in the slot, 0 held, or -1 */
	pid_t startup_pid;	/* the startup demote running, 0 held, or -1 */
	/* A demote that could not start, tried again (slot_hook.c). */
	struct el_action held_demote;
	char *held_demote_reason;	/* its reason; NULL when none is held */
	int64_t held_demote_from;	/* its first try (now_ms) */
	int64_t held_demote_wait;	/* before the next try */
	int held_demote_late;	/* the lease's end passed meanwhile: said */
	struct event *ev_held_demote;
	pid_t notify_pid;	/* hooks.notify running, or -1 */
	pid_t run_pid;		/* hooks.run running, or -1 */
	time_t run_since;	/* when it started (wall clock) */
	int run_led;		/* this leadership's run was decided on */
	int run_stopping;	/* it is being stopped: a demote waits */
	int64_t run_stop_from;	/* when its stop began (now_ms) */
	int run_held;		/* a demote waits for its end: */
	struct el_action run_demote;	/* ...that demote */
	char *run_demote_reason;
	struct event *ev_run_kill;	/* its SIGKILL, while stopping */
	unsigned long long run_start;	/* its start in /proc (0 unknown) */
	int run_orphan;		/* it is one a crashed daemon left */
	int run_orphan_killed;	/* ...and its group had SIGKILL */
	struct event *ev_run_orphan;	/* polls for that one's end */
	pid_t orphan_pgid;	/* the session file's run (resume_load()) */
	unsigned long long orphan_start;
	char *notified_leader;	/* the leader hooks.notify last heard of */
	int64_t notified_epoch;
	int64_t last_leader_epoch;
	int hook_cancelled;
	int warned_clamp;
	const char *lease_error;	/* as last logged (lease.c) */
	int64_t lease_error_T;
	int lease_error_connected;	/* ...judged on a negotiated one */

	struct queue_query *queries;	/* queue_read.c's reads */
	struct waiter *resign_waiters;
	struct waiter *pause_waiters;
	uint64_t sw_client;	/* an operator's switchover, 0 none */
	char *sw_target;	/* the target's id of the one under way */
	int sw_preempt;		/* it is the core's preemption */
	struct event *ev_sw;	/* its timeout */
	int pre_querying;	/* preemption's queue read: 1 out, 2 in step */

	int stopping;
	char *last_error;
	int64_t untrusted_owner;	/* E/leader's session, not shown */
	int yields_seen;	/* the election's yields, logged */
	struct event *ev_publish;	/* status file and STATUS, deferred */
	char *last_report;	/* last status text without "updated", as
				 * written */
	int publish_errno;	/* the status file's last write failed so */
	char *last_watch;	/* last watch line */
	enum role last_role;
	char *last_leader;
	time_t since;
	struct metrics m;
	struct history hist;
	struct trace tr;	/* the handover's stamps (debug) */

	/* reexec.c: SIGUSR2, and what the image before this one handed over */
	char **argv;		/* main's, to run again */
	char *rx_exe;		/* the binary's path at start, NULL unknown */
	int rx_pending;		/* a re-exec waits for its moment */
	int64_t rx_since;	/* the SIGUSR2 (now_ms) */
	int64_t rx_quiet_since;	/* nothing held it back since, or 0 */
	int64_t rx_lease_end;	/* the lease at rx_quiet_since */
	int rx_closed;		/* the listeners no longer accept */
	pid_t rx_check_pid;	/* the new binary's -t running, or -1 */
	int rx_check_fd;	/* its output, or -1 */
	int64_t rx_check_from;
	int rx_check_done;	/* reaped: rx_check_status says how */
	int rx_check_status;
	int rx_check_killed;	/* it ran out of time */
	struct event *ev_rx;
	int rx_inherited;	/* this image was started by a re-exec */
	int rx_ctl;		/* inherited descriptors, 0 when none */
	int rx_http[RX_HTTP_MAX];
	size_t rx_nhttp;
	pid_t rx_run_pid;	/* hooks.run's process, -1 when none */
	int rx_run_fd;
	time_t rx_run_since;
	int rx_paused;
	int rx_unhealthy;
	int rx_exact;		/* the image before had confirmed its facts */
	int rx_session;		/* the image before had a session */
	/* What the image before reported, and last told hooks.notify. */
	int rx_view;		/* handed over (an older image's is not) */
	enum role rx_role;
	time_t rx_role_since;
	char *rx_leader;
	int64_t rx_leader_epoch;
	char *rx_notified;
	int64_t rx_notified_epoch;

	/* resume.c: the session file and the session to re-attach */
	char *session_path;
	char *session_text;	/* as last written */
	int session_down;	/* the file on disk says down=1 (as read,
				 * or last written) */
	int64_t session_begun;	/* when a promote or fence was first seen
				 * begun (0: none), for its deferred line */
	struct event *ev_session_late;	/* writes it RESUME_BEGUN_MS on */
	char session_boot[64];	/* the kernel's boot id, read once */
	int resume_open;	/* the first open re-attaches resume_zs */
	int resume_told;	/* its outcome is still to be logged */

	/* crashed.c: the demote script for the unit's OnFailure= */
	char *crashed_path;
	char *crashed_text;	/* as last written ("" when there is none) */
	struct zk_session resume_zs;
};

/* lease.c */
void lease_report(struct daemon *d, const struct election_view *v);
void lease_log_demote(struct daemon *d, const char *reason);

/* engine.c: what daemon.c and its features share */
uint64_t engine_tag(struct daemon *d);
const char *engine_zk_state(const struct daemon *d);
/* Logs msg (taken) at prio and keeps it as last_error, once per cause. */
void daemon_say(struct daemon *d, int prio, char *msg);
void engine_set_error(struct daemon *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void engine_arm(struct event *ev, int64_t ms);
void engine_env_add(char **env, int *n, const char *name, const char *value);
void engine_clock(struct daemon *d);
void engine_arm_deadline(struct daemon *d);
void engine_step(struct daemon *d);

/* daemon.c */
void daemon_step(struct daemon *d);
void daemon_check_lease(struct daemon *d);
/* How long a host list's resolution may take (resolve.c). */
#define RESOLVE_MS	10000
void daemon_open(struct daemon *d);
void daemon_hosts_fresh(const char *hosts, const char *numeric,
    const char *why, void *arg);
void daemon_hosts_refresh(struct daemon *d);
void daemon_zk_event(const struct zk_event *ev, void *arg);
void daemon_zk_batch(int begin, void *arg);
/* request.c */
void daemon_send(struct daemon *d, const struct el_action *act);
void daemon_el_answer(struct daemon *d, const struct el_result *res);
void daemon_held_drop(struct daemon *d);
void daemon_reopen(evutil_socket_t fd, short what, void *arg);
void daemon_count(evutil_socket_t fd, short what, void *arg);
void daemon_deadline(evutil_socket_t fd, short what, void *arg);
void daemon_publish(evutil_socket_t fd, short what, void *arg);
void daemon_status(struct daemon *d, struct status *st, struct election_view *v);
char *daemon_watch_line(struct daemon *d);
void daemon_wake(struct daemon *d, struct waiter **list, const char *text);
void daemon_stop_answer(struct daemon *d);

/* slot_hook.c */
void slot_hook_init(struct daemon *d);
void slot_hook_free(struct daemon *d);
void slot_hook_run(struct daemon *d, const struct el_action *act);

/* reexec.c */
void reexec_request(struct daemon *d);
void reexec_inherit(struct daemon *d);
void reexec_adopt(struct daemon *d);
void reexec_free(struct daemon *d);
void reexec_unblock(void);
/* reexec_check.c: the new binary's `-t`, run before the exec. */
int reexec_check_start(struct daemon *d);
int reexec_check_poll(struct daemon *d);
void reexec_check_clear(struct daemon *d);
int reexec_reaped(pid_t pid, int status, void *arg);

/* crashed.c */
void crashed_init(struct daemon *d);
void crashed_save(struct daemon *d);
void crashed_remove(struct daemon *d);

/* resume.c */
/* Reads the session file: 1 when a session is to be re-attached. */
int resume_load(struct daemon *d);
/* -1 (err says why) when another live daemon would share the file. */
int resume_exclusive(struct daemon *d, char *err, size_t errlen);
void resume_save(struct daemon *d);
/* Before a promote or fence hook is spawned (resume.c). */
void resume_before_lead(struct daemon *d);
void resume_remove(struct daemon *d);

/* notify_hook.c */
void notify_hook_update(struct daemon *d);

/* run_hook.c */
void run_hook_init(struct daemon *d);
void run_hook_free(struct daemon *d);
int run_hook_update(struct daemon *d);
void run_hook_adopt(struct daemon *d, pid_t pid, int fd, time_t since);
void run_hook_reloaded(struct daemon *d);
void run_hook_facts(const struct daemon *d, int64_t *pgid,
    int64_t *start);
int run_hook_before_demote(struct daemon *d, const struct el_action *act);


/* switchover.c */
int switchover_start(struct daemon *d, uint64_t client, const char *id);
void switchover_found(struct daemon *d, uint64_t client, const char *id,
    const struct queue_read *r, const char *why);
void switchover_follow(struct daemon *d, const char *id, int preempt);
void switchover_perform(struct daemon *d, const struct el_action *act);
void switchover_check(struct daemon *d, const struct election_view *v);
void switchover_stop(struct daemon *d);
void switchover_free(struct daemon *d);

/* diagnose.c */
void daemon_diagnose(struct daemon *d, enum el_op op, const char *path,
    const struct el_result *res);
void daemon_diagnose_view(struct daemon *d, const struct election_view *v);

/* queue_read.c */
/*
 * Reads the queue (a listing, then each node's data) for a command, then
 * calls fn once: with the queue, or with NULL and the error to answer.
 */
void queue_read_start(struct daemon *d, uint64_t client, queue_fn fn,
    const char *arg);
/* A reply of a queue read: 1 when it was one (taken), else 0. */
int queue_read_reply(struct daemon *d, const struct zk_event *ev);
void queue_read_fail(struct daemon *d, const char *why);

/* command.c */
void command_handle(struct ctl *ctl, uint64_t client, uid_t uid,
    const char *line, void *arg);
char *command_metrics(struct daemon *d);
char *command_status(struct daemon *d, int json);

/* metrics.c */
void metrics_hook_time(struct metrics *m, enum hook_kind kind,
    int64_t duration_ms);
char *metrics_render(struct daemon *d);

#endif
