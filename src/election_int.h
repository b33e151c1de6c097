/*
 * The election's internal state, shared by election.c (decisions) and
 * election_event.c (what ZooKeeper, hooks and operators report).
 */
#ifndef ZKELECTD_ELECTION_INT_H
#define ZKELECTD_ELECTION_INT_H

#include "candidate.h"
#include "election.h"

#define EL_PREFIX CANDIDATE_NAME_PREFIX
#define EL_RETRY_MS 1000

struct election {
	char *path;		/* E */
	char *cand_dir;		/* E/candidates */
	char *leader_path;	/* E/leader */
	char *crumb_path;	/* E/breadcrumb */
	char *parents[16];
	int nparents;
	char *id;
	char *data;
	char *create_data;
	char *ack_data;
	char *create_path;
	int observer;
	int fence_configured;
	int64_t backoff_ms;
	int64_t grace_ms;

	/* session */
	enum el_zk zk;
	int64_t sid;
	int conn_lost;		/* disconnected past the grace period */
	int grace_timer;	/* a grace timer is to be armed */
	int restart;		/* the session must be replaced */

	/* requests */
	int paused;
	int unhealthy;
	int stopping;
	int stopped;
	int resigning;		/* 1 leaving, 2 released: rejoining */
	int pause_reply;
	int resign_reply;
	int backoff;
	int backoff_timer;
	int retry_wait;
	int retry_timer;
	int startup_demote;

	/* our place in the queue */
	enum el_op inflight;
	int parent_idx;
	int parents_done;
	char *node;		/* basename, or NULL */
	char *node_path;
	int64_t epoch;		/* czxid of our node */
	int create_unknown;	/* a create's reply was lost */
	int node_ok;		/* watched and owned, since the last change */
	int listed;
	int listed_once;
	int first;
	char *pred_path;
	int pred_watched;
	int ncandidates;

	/* E/leader */
	int leader_fresh;
	int leader_check;		/* E/leader was absent: exists-watch it */
	int leader_exists;
	int64_t leader_owner;
	char *leader_id;
	char *leader_data;
	int64_t leader_epoch;

	/* E/breadcrumb */
	int crumb_fresh;
	int crumb_exists;
	int64_t crumb_epoch;
	char *crumb_id;
	char *crumb_data;

	/* leadership */
	int hook;		/* -1, or the enum hook_kind running */
	int fenced;
	int promoted;		/* the application was told to lead */
	int promote_failed;
	int acked;		/* E/leader written for this leadership */
	const char *lost_reason;
	int release_pending;
	int release_attempts;
	int data_dirty;		/* election.data changed: rewrite our nodes */
};

void el_replace(char **dst, const char *src);
void el_make_data(struct election *el);
void el_invalidate(struct election *el);
int el_leading(const struct election *el);
void el_forget_node(struct election *el);
void el_node_lost(struct election *el);
void el_release_done(struct election *el);
int el_owns_leader(const struct election *el);

#endif
