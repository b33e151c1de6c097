/*
 * ZooKeeper's leader-election recipe, made safe, as a pure state machine.
 *
 * Facts learned from ZooKeeper are kept as flags that say whether they are
 * fresh; a watch notification, a reconnect or a failed request marks them
 * stale, and election_next() refreshes whatever is stale before it takes
 * any decision that depends on it. Promotion needs every fact fresh:
 * our node exists and belongs to our session, it is first in the queue,
 * no other session holds E/leader, and the breadcrumb has been read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"



void
el_replace(char **dst, const char *src)
{
	free(*dst);
	*dst = src != NULL ? xstrdup(src) : NULL;
}

void
el_make_data(struct election *el)
{
	free(el->create_data);
	(void)xasprintf(&el->create_data, "id=%s\ndata=%s\n", el->id,
	    el->data);
}

struct election *
election_new(const struct election_params *p)
{
	struct election *el;
	const char *s;
	size_t len;

	el = xcalloc(1, sizeof(*el));
	el->path = xstrdup(p->path);
	(void)xasprintf(&el->cand_dir, "%s/candidates", p->path);
	(void)xasprintf(&el->leader_path, "%s/leader", p->path);
	(void)xasprintf(&el->crumb_path, "%s/breadcrumb", p->path);
	/* Every ancestor of E/candidates, top down. */
	for (s = el->cand_dir + 1; el->nparents < 15; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		len = (size_t)(s - el->cand_dir);
		el->parents[el->nparents++] = xstrndup(el->cand_dir, len);
		if (*s == '\0')
			break;
	}
	el->id = xstrdup(p->id);
	el->data = xstrdup(p->data);
	el_make_data(el);
	el->leader_id = xstrdup("");
	el->leader_data = xstrdup("");
	el->crumb_id = xstrdup("");
	el->crumb_data = xstrdup("");
	el->observer = p->observer;
	el->fence_configured = p->fence;
	el->backoff_ms = p->retry_backoff_ms;
	el->grace_ms = p->disconnect_grace_ms;
	el->startup_demote = p->demote_on_start;
	el->zk = EL_ZK_CONNECTING;
	el->hook = -1;
	return el;
}

void
election_free(struct election *el)
{
	int i;

	if (el == NULL)
		return;
	for (i = 0; i < el->nparents; i++)
		free(el->parents[i]);
	free(el->path);
	free(el->cand_dir);
	free(el->leader_path);
	free(el->crumb_path);
	free(el->id);
	free(el->data);
	free(el->create_data);
	free(el->ack_data);
	free(el->create_path);
	free(el->crumb_id);
	free(el->crumb_data);
	free(el->node);
	free(el->node_path);
	free(el->pred_path);
	free(el->leader_id);
	free(el->leader_data);
	free(el);
}

/* State helpers. */

void
el_invalidate(struct election *el)
{
	el->listed = 0;
	el->node_ok = 0;
	el->leader_fresh = 0;
	el->crumb_fresh = 0;
	el->pred_watched = 0;
}

int
el_leading(const struct election *el)
{
	return el->promoted || el->hook == HOOK_PROMOTE ||
	    el->hook == HOOK_FENCE;
}

void
el_forget_node(struct election *el)
{
	el->data_dirty = 0;
	el_replace(&el->node, NULL);
	el_replace(&el->node_path, NULL);
	el_replace(&el->pred_path, NULL);
	el->create_unknown = 0;
	el->node_ok = 0;
	el->listed = 0;
	el->first = 0;
	el->fenced = 0;
}

void
el_node_lost(struct election *el)
{
	if (el_leading(el)) {
		el->lost_reason = "node-deleted";
		el->release_pending = 1;
	}
	el_forget_node(el);
	if (!el_leading(el))
		el->epoch = 0;
}

static const char *
el_demote_reason(const struct election *el)
{
	if (el->lost_reason != NULL)
		return el->lost_reason;
	if (el->zk == EL_ZK_EXPIRED)
		return "session-expired";
	if (el->conn_lost)
		return "disconnected";
	if (el->stopping)
		return "shutdown";
	if (el->resigning)
		return "resign";
	if (el->paused)
		return "pause";
	if (el->unhealthy)
		return "health";
	if (el->promote_failed)
		return "promote-failed";
	if (el->zk == EL_ZK_CONNECTED && el->listed && !el->first)
		return "preempted";
	if (el->zk == EL_ZK_CONNECTED && el->leader_fresh &&
	    el->leader_exists && el->leader_owner != el->sid)
		return "preempted";
	return NULL;
}

static int
el_want_join(const struct election *el)
{
	return !el->observer && !el->paused && !el->unhealthy &&
	    !el->stopping && !el->backoff && !el->promote_failed &&
	    !el->release_pending && !el->restart &&
	    !(el->resigning == 1);
}

void
el_release_done(struct election *el)
{
	el->release_pending = 0;
	el->release_attempts = 0;
	el->acked = 0;
	el->epoch = 0;
	el_forget_node(el);
	if (el->promote_failed) {
		el->promote_failed = 0;
		el->backoff = 1;
		el->backoff_timer = 1;
	}
	if (el->resigning == 1)
		el->resigning = 2;
}

static void
el_act_zk(struct election *el, struct el_action *act, enum el_op op,
    const char *path)
{
	act->type = EL_ACT_ZK;
	act->op = op;
	act->path = path;
	el->inflight = op;
}

static void
el_act_hook(struct election *el, struct el_action *act, enum hook_kind kind,
    const char *reason)
{
	act->type = EL_ACT_HOOK;
	act->hook = kind;
	act->reason = reason;
	el->hook = (int)kind;
}

static void
el_sub(struct el_action *act, enum zk_mop_kind kind, const char *path,
    const char *data)
{
	act->sub[act->nsub].kind = kind;
	act->sub[act->nsub].path = path;
	act->sub[act->nsub].data = data;
	act->nsub++;
}

int
el_owns_leader(const struct election *el)
{
	return el->leader_exists && el->leader_owner == el->sid;
}

static void
el_build_release(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	if (el_owns_leader(el))
		el_sub(act, ZK_MOP_DELETE, el->leader_path, NULL);
	if (el->crumb_exists && el->epoch != 0 &&
	    el->crumb_epoch == el->epoch)
		el_sub(act, ZK_MOP_DELETE, el->crumb_path, NULL);
	if (el->node_path != NULL)
		el_sub(act, ZK_MOP_DELETE, el->node_path, NULL);
}

static void
el_build_ack(struct election *el, struct el_action *act)
{
	free(el->ack_data);
	(void)xasprintf(&el->ack_data, "id=%s\ndata=%s\nepoch=%lld\n", el->id,
	    el->data, (long long)el->epoch);
	act->nsub = 0;
	el_sub(act, ZK_MOP_CHECK, el->node_path, NULL);
	el_sub(act, el_owns_leader(el) ? ZK_MOP_SET : ZK_MOP_CREATE_EPHEMERAL,
	    el->leader_path, el->ack_data);
	el_sub(act, el->crumb_exists ? ZK_MOP_SET : ZK_MOP_CREATE,
	    el->crumb_path, el->ack_data);
}

/* New data goes to our candidate node and, when leading, to E/leader. */
static void
el_build_set_data(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	el_sub(act, ZK_MOP_SET, el->node_path, el->create_data);
	if (el->acked && el_owns_leader(el)) {
		free(el->ack_data);
		(void)xasprintf(&el->ack_data, "id=%s\ndata=%s\nepoch=%lld\n",
		    el->id, el->data, (long long)el->epoch);
		el_sub(act, ZK_MOP_SET, el->leader_path, el->ack_data);
		if (el->crumb_exists && el->crumb_epoch == el->epoch)
			el_sub(act, ZK_MOP_SET, el->crumb_path, el->ack_data);
	}
}

void
election_next(struct election *el, struct el_action *act)
{
	const char *reason;

	memset(act, 0, sizeof(*act));
	act->type = EL_ACT_NONE;
	if (el->stopped)
		return;

	/* Hooks come first: they never wait for ZooKeeper. */
	if (el->hook == -1) {
		if (el->startup_demote) {
			el->startup_demote = 0;
			el_act_hook(el, act, HOOK_DEMOTE, "startup");
			return;
		}
		if (el->promoted && (reason = el_demote_reason(el)) != NULL) {
			el->promoted = 0;
			el->lost_reason = NULL;
			el->conn_lost = 0;
			el_act_hook(el, act, HOOK_DEMOTE, reason);
			return;
		}
	}
	if (el->grace_timer) {
		el->grace_timer = 0;
		act->type = EL_ACT_TIMER;
		act->timer = EL_TIMER_GRACE;
		act->ms = el->grace_ms;
		return;
	}
	if (el->backoff_timer) {
		el->backoff_timer = 0;
		act->type = EL_ACT_TIMER;
		act->timer = EL_TIMER_BACKOFF;
		act->ms = el->backoff_ms;
		return;
	}
	if (el->retry_timer) {
		el->retry_timer = 0;
		act->type = EL_ACT_TIMER;
		act->timer = EL_TIMER_RETRY;
		act->ms = EL_RETRY_MS;
		return;
	}
	if (el->stopping && el->hook == -1 && !el->promoted &&
	    (!el->release_pending || el->zk != EL_ZK_CONNECTED)) {
		el->stopped = 1;
		act->type = EL_ACT_STOPPED;
		return;
	}
	if (el->pause_reply && el->hook == -1 && !el->promoted &&
	    !el->release_pending) {
		el->pause_reply = 0;
		act->type = EL_ACT_PAUSED;
		return;
	}
	if (el->resign_reply) {
		el->resign_reply = 0;
		el->resigning = 0;
		act->type = EL_ACT_RESIGNED;
		return;
	}
	if (el->restart) {
		act->type = EL_ACT_RESTART;
		return;
	}
	if (el->inflight != EL_OP_NONE || el->zk != EL_ZK_CONNECTED ||
	    el->retry_wait)
		return;

	if (!el->leader_fresh) {
		el_act_zk(el, act, el->leader_check ? EL_OP_LEADER_EXISTS :
		    EL_OP_LEADER, el->leader_path);
		return;
	}
	if (el->release_pending) {
		if (el->hook != -1 || el->promoted)
			return;
		if (!el->crumb_fresh) {
			el_act_zk(el, act, EL_OP_BREADCRUMB, el->crumb_path);
			return;
		}
		if (el->node_path != NULL && !el->node_ok) {
			el_act_zk(el, act, EL_OP_WATCH_OWN, el->node_path);
			return;
		}
		el_build_release(el, act);
		if (act->nsub == 0) {
			el_release_done(el);
			election_next(el, act);
			return;
		}
		el_act_zk(el, act, EL_OP_RELEASE, NULL);
		return;
	}
	if (!el_want_join(el))
		return;
	if (!el->parents_done) {
		el_act_zk(el, act, EL_OP_PARENT, el->parents[el->parent_idx]);
		return;
	}
	if (el->node == NULL) {
		if (el->create_unknown && !el->listed) {
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
			return;
		}
		free(el->create_path);
		(void)xasprintf(&el->create_path, "%s/" EL_PREFIX "%016llx_",
		    el->cand_dir, (unsigned long long)el->sid);
		el_act_zk(el, act, EL_OP_CREATE, el->create_path);
		act->data = el->create_data;
		return;
	}
	if (!el->node_ok) {
		el_act_zk(el, act, EL_OP_WATCH_OWN, el->node_path);
		return;
	}
	if (el->data_dirty && el->hook == -1) {
		el_build_set_data(el, act);
		el_act_zk(el, act, EL_OP_SET_DATA, NULL);
		return;
	}
	if (!el->listed) {
		el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return;
	}
	if (!el->first) {
		if (!el->pred_watched)
			el_act_zk(el, act, EL_OP_WATCH_PRED, el->pred_path);
		return;
	}
	if (el->hook != -1)
		return;
	if (el->promoted) {
		if (!el->acked) {
			if (!el->crumb_fresh) {
				el_act_zk(el, act, EL_OP_BREADCRUMB,
				    el->crumb_path);
				return;
			}
			el_build_ack(el, act);
			el_act_zk(el, act, EL_OP_ACK, NULL);
		}
		return;
	}
	/* Wait for the previous leader to withdraw its acknowledgement. */
	if (el->leader_exists && el->leader_owner != el->sid)
		return;
	if (!el->crumb_fresh) {
		el_act_zk(el, act, EL_OP_BREADCRUMB, el->crumb_path);
		return;
	}
	if (el->fence_configured && !el->fenced && el->crumb_exists &&
	    el->crumb_epoch != el->epoch) {
		el_act_hook(el, act, HOOK_FENCE, "elected");
		return;
	}
	el_act_hook(el, act, HOOK_PROMOTE, "elected");
}
