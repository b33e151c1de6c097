/*
 * Events fed to the election: session changes, replies, watches, hooks,
 * timers and operator requests, and what the election tells about itself.
 * None of them acts; they only record facts for election_next().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"


void
election_session(struct election *el, enum el_zk state, int64_t sid)
{
	switch (state) {
	case EL_ZK_CONNECTED:
		if (el->sid != 0 && sid != el->sid) {
			/* A new session: nothing of the old one survives. */
			if (el_leading(el))
				el->lost_reason = "session-expired";
			el_forget_node(el);
			el->acked = 0;
			if (!el_leading(el))
				el->epoch = 0;
		}
		el->sid = sid;
		el->zk = EL_ZK_CONNECTED;
		el->conn_lost = 0;
		el_invalidate(el);
		break;
	case EL_ZK_CONNECTING:
	case EL_ZK_READONLY:
		if (el->zk == state)
			break;
		el->zk = state;
		el_invalidate(el);
		if (el_leading(el)) {
			if (el->grace_ms == 0)
				el->conn_lost = 1;
			else
				el->grace_timer = 1;
		}
		break;
	case EL_ZK_EXPIRED:
		if (el->zk == EL_ZK_EXPIRED)
			break;
		el->zk = EL_ZK_EXPIRED;
		if (el_leading(el))
			el->lost_reason = "session-expired";
		el_forget_node(el);
		el_invalidate(el);
		el->acked = 0;
		el->leader_exists = 0;
		el->release_pending = 0;
		el->restart = 1;
		break;
	}
}

void
election_restarted(struct election *el)
{
	el->restart = 0;
	el->inflight = EL_OP_NONE;
	el->zk = EL_ZK_CONNECTING;
	el->sid = 0;
	el_invalidate(el);
}

static void
el_op_error(struct election *el, int rc)
{
	if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT)
		return;		/* the session event tells what to do */
	el->retry_wait = 1;
	el->retry_timer = 1;
}

static void
el_list_done(struct election *el, const struct el_result *res)
{
	struct candidate *c;
	int i, n, me = -1;

	c = xcalloc((size_t)res->nchildren + 1, sizeof(*c));
	n = candidate_order(res->children, res->nchildren, c);
	el->ncandidates = n;
	if (el->node == NULL && el->create_unknown) {
		el->create_unknown = 0;
		for (i = 0; i < n; i++)
			if (c[i].sid == el->sid) {
				el_replace(&el->node, c[i].name);
				free(el->node_path);
				(void)xasprintf(&el->node_path, "%s/%s",
				    el->cand_dir, c[i].name);
				el->node_ok = 0;
				break;
			}
		free(c);
		return;
	}
	for (i = 0; el->node != NULL && i < n; i++)
		if (strcmp(c[i].name, el->node) == 0)
			me = i;
	if (el->node != NULL && me == -1) {
		free(c);
		el_node_lost(el);
		return;
	}
	el->listed = 1;
	el->listed_once = 1;
	el->first = me == 0;
	/* A resign is done once the new node is seen in the queue. */
	if (el->resigning == 2 && el->node != NULL)
		el->resign_reply = 1;
	/* The breadcrumb is read afresh before every promotion. */
	if (!el->promoted)
		el->crumb_fresh = 0;
	el->pred_watched = 0;
	free(el->pred_path);
	el->pred_path = NULL;
	if (me > 0)
		(void)xasprintf(&el->pred_path, "%s/%s", el->cand_dir,
		    c[me - 1].name);
	free(c);
}

static void
el_leader_done(struct election *el, const struct el_result *res)
{
	char buf[1024];

	el->leader_exists = 1;
	el->leader_fresh = 1;
	el->leader_owner = res->owner;
	candidate_kv(res->data, "id", buf, sizeof(buf));
	el_replace(&el->leader_id, buf);
	candidate_kv(res->data, "data", buf, sizeof(buf));
	el_replace(&el->leader_data, buf);
	candidate_kv(res->data, "epoch", buf, sizeof(buf));
	el->leader_epoch = strtoll(buf, NULL, 10);
}

static void
el_no_leader(struct election *el)
{
	el->leader_exists = 0;
	el->leader_fresh = 1;
	el->leader_owner = 0;
	el->leader_epoch = 0;
	el_replace(&el->leader_id, "");
	el_replace(&el->leader_data, "");
}

void
election_op_done(struct election *el, enum el_op op,
    const struct el_result *res)
{
	const char *slash;
	char buf[64], big[1024];
	int rc = res->rc;

	if (op != el->inflight)
		return;
	el->inflight = EL_OP_NONE;
	switch (op) {
	case EL_OP_NONE:
		break;
	case EL_OP_PARENT:
		if (rc == ZOK || rc == ZNODEEXISTS) {
			if (++el->parent_idx == el->nparents) {
				el->parent_idx = 0;
				el->parents_done = 1;
			}
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_CREATE:
		if (rc == ZOK) {
			slash = strrchr(res->path, '/');
			el_replace(&el->node, slash != NULL ? slash + 1 :
			    res->path);
			el_replace(&el->node_path, res->path);
			el->create_unknown = 0;
			el->node_ok = 0;
			el->listed = 0;
		} else if (rc == ZNONODE) {
			el->parents_done = 0;
			el->parent_idx = 0;
		} else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
			el->create_unknown = 1;
			el->listed = 0;
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_LIST:
		if (rc == ZOK)
			el_list_done(el, res);
		else if (rc == ZNONODE) {
			el->parents_done = 0;
			el->parent_idx = 0;
			if (el->node != NULL)
				el_node_lost(el);
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_WATCH_PRED:
		if (rc == ZOK)
			el->pred_watched = 1;
		else if (rc == ZNONODE)
			el->listed = 0;
		else
			el_op_error(el, rc);
		break;
	case EL_OP_WATCH_OWN:
		if (rc == ZOK && res->owner == el->sid) {
			el->node_ok = 1;
			el->epoch = res->czxid;
		} else if (rc == ZOK || rc == ZNONODE)
			el_node_lost(el);
		else
			el_op_error(el, rc);
		break;
	case EL_OP_LEADER:
		if (rc == ZOK)
			el_leader_done(el, res);
		else if (rc == ZNONODE)
			el->leader_check = 1;
		else
			el_op_error(el, rc);
		break;
	case EL_OP_LEADER_EXISTS:
		el->leader_check = 0;
		if (rc == ZNONODE)
			el_no_leader(el);
		else if (rc != ZOK)
			el_op_error(el, rc);
		break;
	case EL_OP_BREADCRUMB:
		if (rc == ZOK) {
			el->crumb_exists = 1;
			el->crumb_fresh = 1;
			candidate_kv(res->data, "epoch", buf, sizeof(buf));
			el->crumb_epoch = strtoll(buf, NULL, 10);
			candidate_kv(res->data, "id", big, sizeof(big));
			el_replace(&el->crumb_id, big);
			candidate_kv(res->data, "data", big, sizeof(big));
			el_replace(&el->crumb_data, big);
		} else if (rc == ZNONODE) {
			el->crumb_exists = 0;
			el->crumb_fresh = 1;
			el->crumb_epoch = 0;
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_ACK:
		if (rc == ZOK) {
			el->acked = 1;
			el->leader_exists = 1;
			el->leader_owner = el->sid;
			el->leader_epoch = el->epoch;
			el_replace(&el->leader_id, el->id);
			el_replace(&el->leader_data, el->data);
			el->crumb_exists = 1;
			el->crumb_epoch = el->epoch;
		} else {
			/* Something changed under us: learn it all again. */
			el_invalidate(el);
			el_op_error(el, rc);
		}
		break;
	case EL_OP_SET_DATA:
		if (rc == ZOK) {
			el->data_dirty = 0;
			if (el->acked && el_owns_leader(el))
				el_replace(&el->leader_data, el->data);
		} else {
			el_invalidate(el);
			el_op_error(el, rc);
		}
		break;
	case EL_OP_RELEASE:
		if (rc == ZOK) {
			/*
			 * Deleting E/leader used up our watch on it (its
			 * notification may even have come first): read it
			 * again, which sets a new one.
			 */
			if (el_owns_leader(el)) {
				el_no_leader(el);
				el->leader_fresh = 0;
			}
			el->crumb_exists = 0;
			el_release_done(el);
		} else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
			break;	/* retried once connected again */
		} else if (++el->release_attempts >= 3) {
			/*
			 * Closing the session removes our ephemeral nodes
			 * for sure; a breadcrumb left behind only makes the
			 * successor fence.
			 */
			el_release_done(el);
			el->restart = 1;
		} else {
			el_invalidate(el);
			el_op_error(el, rc);
		}
		break;
	}
}

void
election_watch(struct election *el, int deleted, const char *path)
{
	if (el->node_path != NULL && strcmp(path, el->node_path) == 0) {
		if (deleted)
			el_node_lost(el);
		else
			el->node_ok = 0;
	} else if (el->pred_path != NULL && strcmp(path, el->pred_path) == 0) {
		el->listed = 0;
		el->pred_watched = 0;
	} else if (strcmp(path, el->leader_path) == 0)
		el->leader_fresh = 0;
}

void
election_hook_done(struct election *el, enum hook_kind kind, int ok)
{
	if (el->hook != (int)kind)
		return;
	el->hook = -1;
	switch (kind) {
	case HOOK_FENCE:
		if (ok) {
			el->fenced = 1;
			break;
		}
		/* A failed fence must not promote: leave like a failed promote. */
		/* FALLTHROUGH */
	case HOOK_PROMOTE:
		el->promoted = 1;
		el->acked = 0;
		if (!ok) {
			el->promote_failed = 1;
			el->release_pending = 1;
		}
		break;
	case HOOK_DEMOTE:
	case HOOK_CHECK:
		break;
	}
}

void
election_timer(struct election *el, enum el_timer t)
{
	switch (t) {
	case EL_TIMER_BACKOFF:
		el->backoff = 0;
		break;
	case EL_TIMER_GRACE:
		if (el->zk != EL_ZK_CONNECTED && el_leading(el))
			el->conn_lost = 1;
		break;
	case EL_TIMER_RETRY:
		el->retry_wait = 0;
		break;
	}
}

void
election_candidates(struct election *el, char *const *names, int n)
{
	struct candidate c;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (candidate_parse(names[i], &c) == 0)
			k++;
	el->ncandidates = k;
}

void
election_lease_expired(struct election *el)
{
	if (!el_leading(el))
		return;
	el->conn_lost = 1;
	/*
	 * The connection may look fine to the client library (a freeze it
	 * has not noticed yet): nothing learned before the lease ran out is
	 * trusted for the next promotion.
	 */
	el_invalidate(el);
}

void
election_reconfigure(struct election *el, const struct election_params *p)
{
	el->fence_configured = p->fence;
	el->backoff_ms = p->retry_backoff_ms;
	el->grace_ms = p->disconnect_grace_ms;
	if (strcmp(p->data, el->data) != 0)
		election_set_data(el, p->data);
}

void
election_set_data(struct election *el, const char *data)
{
	el_replace(&el->data, data);
	el_make_data(el);
	if (el->node != NULL)
		el->data_dirty = 1;
}

int
election_resign(struct election *el)
{
	if (election_role(el) != ROLE_LEADER || el->resigning)
		return -1;
	el->resigning = 1;
	el->release_pending = 1;
	return 0;
}

void
election_pause(struct election *el, int paused)
{
	if (paused && !el->paused) {
		el->paused = 1;
		if (el->node != NULL || el->create_unknown)
			el->release_pending = 1;
	} else if (!paused)
		el->paused = 0;
	if (paused)
		el->pause_reply = 1;
}

void
election_set_unhealthy(struct election *el, int unhealthy)
{
	if (unhealthy && !el->unhealthy && el->node != NULL)
		el->release_pending = 1;
	el->unhealthy = unhealthy;
}

void
election_stop(struct election *el)
{
	el->stopping = 1;
	if (el->node != NULL)
		el->release_pending = 1;
}

enum role
election_role(const struct election *el)
{
	if (el->stopped)
		return ROLE_STOPPED;
	if (el->hook == HOOK_DEMOTE)
		return ROLE_DEMOTING;
	if (el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE)
		return ROLE_PROMOTING;
	if (el->promoted) {
		if (!el->acked)
			return ROLE_PROMOTING;
		if (el->zk == EL_ZK_CONNECTED || !el->conn_lost)
			return ROLE_LEADER;
		return ROLE_DEMOTING;
	}
	if (el->observer || el->paused || el->unhealthy)
		return ROLE_OBSERVER;
	if (el->zk != EL_ZK_CONNECTED || !el->listed_once)
		return ROLE_UNKNOWN;
	return ROLE_FOLLOWER;
}

const char *
election_role_name(enum role r)
{
	switch (r) {
	case ROLE_UNKNOWN:
		return "unknown";
	case ROLE_FOLLOWER:
		return "follower";
	case ROLE_PROMOTING:
		return "promoting";
	case ROLE_LEADER:
		return "leader";
	case ROLE_DEMOTING:
		return "demoting";
	case ROLE_OBSERVER:
		return "observer";
	case ROLE_STOPPED:
		return "stopped";
	}
	return "unknown";
}

void
election_view(const struct election *el, struct election_view *v)
{
	v->role = election_role(el);
	v->zk = el->zk;
	v->sid = el->sid;
	v->leader_id = el->leader_exists ? el->leader_id : "";
	v->leader_data = el->leader_exists ? el->leader_data : "";
	v->leader_epoch = el->leader_exists ? el->leader_epoch : 0;
	v->epoch = el->epoch;
	v->candidates = el->ncandidates;
	v->node = el->node;
	v->paused = el->paused;
	v->crumb_id = el->crumb_exists ? el->crumb_id : "";
	v->crumb_data = el->crumb_exists ? el->crumb_data : "";
	v->crumb_epoch = el->crumb_exists ? el->crumb_epoch : 0;
	v->id = el->id;
	v->data = el->data;
}
