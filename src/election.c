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

#include "election.h"
#include "xmalloc.h"

#define EL_PREFIX "candidate-"
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

static void
el_replace(char **dst, const char *src)
{
	free(*dst);
	*dst = src != NULL ? xstrdup(src) : NULL;
}

static void
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

/* Names and data. */

int
election_parse_name(const char *name, struct el_candidate *out)
{
	const char *p = name;
	int64_t sid = 0, v = 0;
	int i, neg = 0, digits = 0;

	if (strncmp(p, EL_PREFIX, strlen(EL_PREFIX)) != 0)
		return -1;
	p += strlen(EL_PREFIX);
	for (i = 0; i < 16; i++, p++) {
		if (*p >= '0' && *p <= '9')
			sid = (int64_t)(((uint64_t)sid << 4) | (uint64_t)(*p - '0'));
		else if (*p >= 'a' && *p <= 'f')
			sid = (int64_t)(((uint64_t)sid << 4) |
			    (uint64_t)(*p - 'a' + 10));
		else
			return -1;
	}
	if (*p++ != '_')
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 12)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (*p != '\0' || digits == 0)
		return -1;
	/*
	 * ZooKeeper formats the parent's int cversion with %010d: past
	 * 2147483647 it wraps to negative numbers, which come later.
	 */
	if (neg) {
		if (v > 2147483648LL)
			return -1;
		v = 4294967296LL - v;
	}
	out->name = name;
	out->sid = sid;
	out->seq = v;
	return 0;
}

static int
el_cmp(const void *a, const void *b)
{
	const struct el_candidate *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
election_order(char *const *names, int n, struct el_candidate *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (election_parse_name(names[i], &out[k]) == 0)
			k++;
	qsort(out, (size_t)k, sizeof(*out), el_cmp);
	return k;
}

void
election_kv(const char *text, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n;
	const char *p = text, *end;

	buf[0] = '\0';
	while (p != NULL && *p != '\0') {
		end = strchr(p, '\n');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			n -= klen + 1;
			if (n >= len)
				n = len - 1;
			memcpy(buf, p + klen + 1, n);
			buf[n] = '\0';
			return;
		}
		p = end != NULL ? end + 1 : NULL;
	}
}

/* State helpers. */

static void
el_invalidate(struct election *el)
{
	el->listed = 0;
	el->node_ok = 0;
	el->leader_fresh = 0;
	el->crumb_fresh = 0;
	el->pred_watched = 0;
}

static int
el_leading(const struct election *el)
{
	return el->promoted || el->hook == HOOK_PROMOTE ||
	    el->hook == HOOK_FENCE;
}

static void
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

static void
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

static void
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

static int
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

/* Events. */

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
	if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ||
	    rc == ZSESSIONEXPIRED || rc == ZCLOSING)
		return;		/* the session event tells what to do */
	el->retry_wait = 1;
	el->retry_timer = 1;
}

static void
el_list_done(struct election *el, const struct el_result *res)
{
	struct el_candidate *c;
	int i, n, me = -1;

	c = xcalloc((size_t)res->nchildren + 1, sizeof(*c));
	n = election_order(res->children, res->nchildren, c);
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
	election_kv(res->data, "id", buf, sizeof(buf));
	el_replace(&el->leader_id, buf);
	election_kv(res->data, "data", buf, sizeof(buf));
	el_replace(&el->leader_data, buf);
	election_kv(res->data, "epoch", buf, sizeof(buf));
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
			if (el->resigning == 2)
				el->resign_reply = 1;
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
			election_kv(res->data, "epoch", buf, sizeof(buf));
			el->crumb_epoch = strtoll(buf, NULL, 10);
			election_kv(res->data, "id", big, sizeof(big));
			el_replace(&el->crumb_id, big);
			election_kv(res->data, "data", big, sizeof(big));
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
			if (el_owns_leader(el))
				el_no_leader(el);
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
	struct el_candidate c;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (election_parse_name(names[i], &c) == 0)
			k++;
	el->ncandidates = k;
}

void
election_lease_expired(struct election *el)
{
	if (el_leading(el))
		el->conn_lost = 1;
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
