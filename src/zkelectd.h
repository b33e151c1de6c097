/* The daemon's state, owned by the event loop thread. */
#ifndef ZKELECTD_ZKELECTD_H
#define ZKELECTD_ZKELECTD_H

#include <stdint.h>
#include <time.h>

#include "config.h"
#include "election.h"
#include "hook.h"
#include "status.h"
#include "zk.h"

#include <sys/types.h>

#include <event2/util.h>

struct event;
struct event_base;
struct ctl;
struct notify;
struct zk;
struct members_query;

struct waiter {
	struct waiter *next;
	uint64_t client;
};

struct daemon_timer {
	struct daemon *d;
	enum el_timer which;
};

struct metrics {
	uint64_t leader_changes;
	uint64_t elections_won;
	uint64_t hook_runs[4];
	uint64_t hook_failures[4];
	double hook_seconds[4];
	uint64_t session_expirations;
	uint64_t connection_losses;
	uint64_t socket_requests;
};

struct daemon {
	struct event_base *base;
	pid_t pid;
	struct config cfg;
	const char *config_path;
	char **overrides;
	size_t noverrides;
	char *epath;		/* E */
	char *cpath;		/* E/candidates */

	struct zk *zk;
	struct election *el;
	struct hook_runner *hooks;
	struct ctl *ctl;
	struct notify *notify;

	struct event *ev_sig[5];
	struct event *ev_timer[3];	/* indexed by enum el_timer */
	struct daemon_timer timers[3];
	struct event *ev_reopen;	/* retry a failed zookeeper_init */
	struct event *ev_keepalive;	/* lease refresh while leading */
	struct event *ev_health;

	int zk_state;		/* ZOO_*_STATE of the handle */
	int64_t session_timeout_ms;	/* negotiated */
	int64_t lease_sent_ms;	/* send time of the last acknowledged request */
	uint64_t next_tag;
	uint64_t keepalive_tag;
	uint64_t el_tag;	/* tag of the election's request in flight */
	enum el_op el_op;

	struct members_query *queries;
	struct waiter *resign_waiters;
	struct waiter *pause_waiters;

	int stopping;
	char *last_error;
	char *last_report;	/* last status text without "updated" */
	char *last_watch;	/* last watch line */
	enum role last_role;
	char *last_leader;
	time_t since;
	int health_fails;
	int health_oks;
	int health_running;
	int unhealthy;
	struct metrics m;
};

/* daemon.c */
void daemon_step(struct daemon *d);
void daemon_check_lease(struct daemon *d);
void daemon_open(struct daemon *d);
void daemon_arm(struct event *ev, int64_t ms);
void daemon_zk_event(const struct zk_event *ev, void *arg);
void daemon_reopen(evutil_socket_t fd, short what, void *arg);
void daemon_keepalive(evutil_socket_t fd, short what, void *arg);
void daemon_timer_fired(evutil_socket_t fd, short what, void *arg);
void daemon_health(evutil_socket_t fd, short what, void *arg);
void daemon_status(struct daemon *d, struct status *st, struct election_view *v);
const char *daemon_zk_state(const struct daemon *d);
uint64_t daemon_tag(struct daemon *d);

/* command.c */
void command_handle(struct ctl *ctl, uint64_t client, uid_t uid,
    const char *line, void *arg);
int command_reply(struct daemon *d, const struct zk_event *ev);
void command_fail_queries(struct daemon *d, const char *why);
void command_wake(struct daemon *d, struct waiter **list, const char *text);
char *command_watch_line(struct daemon *d);

#endif
