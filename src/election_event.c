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

static void el_resume_connected(struct election *el, int64_t sid);
static void el_resume_lost(struct election *el);


void
election_session(struct election *el, enum el_zk state, int64_t sid,
    int64_t timeout_ms)
{
	int64_t wait;

	switch (state) {
	case EL_ZK_CONNECTED:
		if (el->sid != 0 && sid != el->sid)
			el_session_lost(el);	/* nothing of it survives */
		el_resume_connected(el, sid);
		/*
		 * A new session: the quorum made it after we asked, with
		 * its timeout from then, whatever happened meanwhile.
		 */
		if (sid != el->sid && el->session_req != 0) {
			el->lease_sent = EL_MUTANT(20) ? el->now :
			    el->session_req;
			el->lease_known = 1;
			el->lease_lapsed = 0;
			el->answered_sent = el->session_req;
			el->session_req = 0;
		} else if (sid == el->sid)
			el_reconnected(el);
		el->sid = sid;
		el->sync_retry = 0;
		el->zk = EL_ZK_CONNECTED;
		el->conn_lost = 0;
		el->grace_until = 0;
		el->auth_failures = 0;
		el->conn_gen++;
		el->synced = 0;
		el_set_timeout(el, timeout_ms);
		el_invalidate(el);
		break;
	case EL_ZK_CONNECTING:
	case EL_ZK_READONLY:
		if (el->zk == state)
			break;
		el->zk = state;
		el->conn_gen++;
		el->synced = 0;
		el_invalidate(el);
		if (state == EL_ZK_READONLY && EL_MUTANT(24))
			el_reconnected(el);
		/* Unless told otherwise, a leader leads on while its lease holds. */
		if (el_leading(el) && !el->conn_lost &&
		    el->grace_ms != EL_GRACE_LEASE) {
			if (el->grace_ms == 0)
				el_lose_contact(el, "disconnected");
			else if (el->grace_until == 0)
				el->grace_until = el->now + el->grace_ms;
		}
		break;
	case EL_ZK_EXPIRED:
	case EL_ZK_AUTH_FAILED:
		if (el->zk == state)
			break;
		el->zk = state;
		el->conn_gen++;
		el->synced = 0;
		el_session_lost(el);
		el_resume_lost(el);
		el_invalidate(el);
		el->restart = 1;
		el->restart_sent = 0;
		el->restart_at = el->now;
		if (state == EL_ZK_AUTH_FAILED && !EL_MUTANT(10)) {
			/* Credentials do not mend by retrying at once. */
			wait = (int64_t)EL_RETRY_MS << (el->auth_failures < 5 ?
			    el->auth_failures : 5);
			if (wait > EL_RESTART_MAX_MS)
				wait = EL_RESTART_MAX_MS;
			el->restart_at = el->now + wait;
			el->auth_failures++;
		}
		break;
	}
}

void
election_restarted(struct election *el)
{
	el->restart = 0;
	el->restart_sent = 0;
	el->npipe = 0;
	el->sync_inflight = 0;
	el->zk = EL_ZK_CONNECTING;
	el->sid = 0;
	el->conn_gen++;
	el->synced = 0;
	el_invalidate(el);
}

void
election_session_requested(struct election *el)
{
	el->session_req = el->now;
}

static void
el_op_error(struct election *el, int rc)
{
	if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT)
		return;		/* the session event tells what to do */
	el->retry_until = el->now + EL_RETRY_MS;
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
	el_switch_listed(el, c, n, me);
	/* Who may lead while our node stays: only those before it. */
	free(el->ahead);
	el->ahead = NULL;
	el->nahead = me > 0 ? me : 0;
	if (el->nahead > 0) {
		el->ahead = xcalloc((size_t)el->nahead, sizeof(*el->ahead));
		for (i = 0; i < el->nahead; i++)
			el->ahead[i] = c[i].sid;
	}
	el->ahead_known = el->node != NULL;
	/* And who is behind it: what a head may yield to. */
	free(el->behind);
	el->behind = NULL;
	el->nbehind = me >= 0 ? n - me - 1 : 0;
	if (el->nbehind > 0) {
		el->behind = xcalloc((size_t)el->nbehind,
		    sizeof(*el->behind));
		for (i = 0; i < el->nbehind; i++)
			el->behind[i] = c[me + 1 + i].sid;
	}
	if (el->yield_listed == 1 && el->marks_fresh)
		el->yield_listed = 2;
	else if (el->yield_listed == 3)
		el->yield_listed = 2;	/* newer nodes: the markers again */
	el->first = me == 0;
	el->position = me + 1;
	/* A resign is done once the new node is seen in the queue. */
	if (el->resigning == 2 && el->node != NULL)
		el->resign_reply = 1;
	el->pred_watched = 0;
	el->pred_head = me == 1;
	el->pred_czxid = 0;
	el->pred_owner = 0;
	free(el->pred_path);
	el->pred_path = NULL;
	if (me > 0)
		(void)xasprintf(&el->pred_path, "%s/%s", el->cand_dir,
		    c[me - 1].name);
	free(c);
}

/*
 * A marker of our session that we do not know we have (a resumed
 * session's) becomes ours: el_next_mark() then keeps, replaces or
 * deletes it. Not while a MARK flies: its reply says what it made.
 */
static void
el_mark_adopt(struct election *el, int64_t sid, const char *name)
{
	char *path;

	if (sid != el->sid || el->sid == 0 || el->mark_have != NULL ||
	    el_pipe_has(el, EL_OP_MARK) || EL_MUTANT(33))
		return;
	(void)xasprintf(&path, "%s/%s", el->prio_dir, name);
	el->mark_have = path;
}

/* The markers of E/priority, for a yield (see el_yield()). */
static void
el_marks_done(struct election *el, const struct el_result *res)
{
	int64_t sid, prio;
	int i;

	if (res->rc != ZOK && res->rc != ZNONODE) {
		el_op_error(el, res->rc);
		return;
	}
	el->nmarks = 0;
	el->marks_unknown = 0;
	free(el->mark_sid);
	free(el->mark_prio);
	el->mark_sid = el->mark_prio = NULL;
	if (res->rc == ZOK && res->nchildren > 0) {
		el->mark_sid = xcalloc((size_t)res->nchildren, sizeof(int64_t));
		el->mark_prio = xcalloc((size_t)res->nchildren,
		    sizeof(int64_t));
		/* A name that is not a marker's tells nothing. */
		for (i = 0; i < res->nchildren; i++)
			if (candidate_mark_parse(res->children[i], &sid,
			    &prio) == 0) {
				el->mark_sid[el->nmarks] = sid;
				el->mark_prio[el->nmarks++] = prio;
				el_mark_adopt(el, sid, res->children[i]);
			}
	}
	el->marks_fresh = 1;
}

/* Writes go through the quorum; their replies confirm the session. */
static int
el_writes(enum el_op op)
{
	switch (op) {
	case EL_OP_PARENT:
	case EL_OP_CREATE:
	case EL_OP_ACK:
	case EL_OP_CLAIM:
	case EL_OP_RELEASE:
	case EL_OP_SET_DATA:
	case EL_OP_SW_DELETE:
	case EL_OP_MARK:
	case EL_OP_UNMARK:
		return 1;
	default:
		return 0;
	}
}

static void
el_leader_done(struct election *el, const struct el_result *res)
{
	char buf[1024];

	el->leader_exists = 1;
	el->leader_fresh = 1;
	el->leader_owner = res->owner;
	if (res->owner != el->sid)
		el->mark_hold_until = 0;	/* someone else leads now */
	candidate_kv(res->data, "id", buf, sizeof(buf));
	el_replace(&el->leader_id, buf);
	candidate_kv(res->data, "data", buf, sizeof(buf));
	el_replace(&el->leader_data, buf);
	candidate_kv(res->data, "epoch", buf, sizeof(buf));
	el->leader_epoch = strtoll(buf, NULL, 10);
	/*
	 * Ours, but not what we wrote: someone allowed to write there changed
	 * it, and followers would show that. It is written again.
	 */
	if (el->acked && res->owner == el->sid && el->sid != 0 &&
	    el->ack_data != NULL && strcmp(res->data, el->ack_data) != 0)
		el->data_dirty = 1;
}

static void
el_no_leader(struct election *el)
{
	/* Deleted by hand while we lead: it is written again. */
	if (el->promoted && el->acked && el_owns_leader(el))
		el->acked = 0;
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
	int64_t sent;
	int rc = res->rc, i;

	if (op == EL_OP_SYNC) {
		if (!el->sync_inflight)
			return;
		el->sync_inflight = 0;
		if (rc == ZOK) {
			el_confirmed(el, el->sync_sent);
			if (el->sync_conn == el->conn_gen)
				el->synced = 1;
		} else if (el->sync_conn == el->conn_gen)
			/*
			 * Refused (a handle whose session just expired, whose
			 * news is still on its way): not again at once.
			 */
			el->sync_retry = el->now + EL_RETRY_MS;
		return;
	}
	/* Replies come in the order of the requests; anything else is old. */
	if (el->npipe == 0 || op != el->pipe[0].op)
		return;
	sent = el->pipe[0].sent;
	el->npipe--;
	memmove(&el->pipe[0], &el->pipe[1], (size_t)el->npipe *
	    sizeof(el->pipe[0]));
	if (el_writes(op) ? el_answered(rc) :
	    EL_MUTANT(1) && (rc == ZOK || rc == ZNONODE))
		el_confirmed(el, sent);
	else if (el_answered(rc))
		el_answered_sent(el, sent);
	switch (op) {
	case EL_OP_NONE:
	case EL_OP_SYNC:
	case EL_OP_COUNT:
		break;
	case EL_OP_CLAIM:
		el->crumb_for_claim = 0;
		el->marks_for_claim = 0;	/* a claim again reads them again */
		if (rc == ZOK) {
			el->claimed = 1;
			el->claim_known = 1;
		} else if (rc == ZNODEEXISTS) {
			el->claim_wait = 1;
			el->claim_watched = 0;
		} else if (rc == ZNONODE)
			el->node_ok = 0;	/* our node is gone: see */
		else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
			/* Applied or not: it is read before anything else. */
			if (!EL_MUTANT(13))
				el->claim_known = 0;
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_CLAIM_WATCH:
		if (rc == ZOK && res->owner == el->sid) {
			/* Ours, from before a blip of this session. */
			el->claimed = 1;
			el->claim_known = 1;
			el->claim_wait = 0;
		} else if (rc == ZOK)
			el->claim_watched = 1;
		else if (rc == ZNONODE)
			el->claim_wait = 0;
		else
			el_op_error(el, rc);
		break;
	case EL_OP_SW_DELETE:
		/* Done, or one was gone already: list again either way. */
		for (i = 0; i < el->sw_nbetween; i++)
			el_replace(&el->sw_between[i], NULL);
		el->sw_nbetween = 0;
		if (el->sw_phase != 0)
			el->sw_phase = 1;
		if (rc == ZNOAUTH)
			el_switch_clear(el, "not-allowed");
		else if (rc != ZOK && rc != ZNONODE)
			el_op_error(el, rc);
		break;
	case EL_OP_MARK:
		if (rc == ZOK || rc == ZNODEEXISTS) {
			el->create_nonode = 0;
			el->mark_unsure = 0;
			el_replace(&el->mark_have, el->mark_path);
		} else if (rc == ZNONODE) {
			/* E/priority is gone: made again, as a create's. */
			el->parents_done = 0;
			el->parent_idx = el->nbase;
			if (el->create_nonode++ > 0 && !EL_MUTANT(21))
				el_op_error(el, rc);
		} else
			el_op_error(el, rc);	/* lost: made again */
		break;
	case EL_OP_UNMARK:
		if (rc == ZOK || rc == ZNONODE) {
			el_replace(&el->mark_have, NULL);
			el->mark_unsure = 0;
		}
		else
			el_op_error(el, rc);	/* lost: deleted again */
		break;
	case EL_OP_MARKS:
		el_marks_done(el, res);
		break;
	case EL_OP_CLAIM_READ:
		if (rc == ZOK || rc == ZNONODE) {
			el->claimed = rc == ZOK && res->owner == el->sid;
			el->claim_known = 1;
		} else
			el_op_error(el, rc);
		break;
	case EL_OP_PARENT:
		if (rc == ZOK || rc == ZNODEEXISTS) {
			if (++el->parent_idx >= el->nparents) {
				el->parent_idx = 0;
				el->parents_done = 1;
			}
		} else {
			/* An ancestor is gone (deleted by hand): all again. */
			if (rc == ZNONODE)
				el->parent_idx = 0;
			el_op_error(el, rc);
		}
		break;
	case EL_OP_CREATE:
		if (rc == ZOK) {
			el->create_nonode = 0;
			slash = strrchr(res->path, '/');
			el_replace(&el->node, slash != NULL ? slash + 1 :
			    res->path);
			el_replace(&el->node_path, res->path);
			el->create_unknown = 0;
			el->node_ok = 0;
			el->listed = 0;
			/* Paused, unhealthy or stopping meanwhile: it goes. */
			if ((el->paused || el->unhealthy || el->stopping) &&
			    !EL_MUTANT(3))
				el->release_pending = 1;
		} else if (rc == ZNONODE) {
			/*
			 * The parents are made again; when they were made
			 * just now, after a pause: never a loop at full speed.
			 */
			el->parents_done = 0;
			el->parent_idx = 0;
			if (el->create_nonode++ > 0 && !EL_MUTANT(21))
				el_op_error(el, rc);
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
		if (rc == ZOK) {
			el->pred_watched = 1;
			el->pred_czxid = res->czxid;
			el->pred_owner = res->owner;
			el_pred_head(el);
		} else if (rc == ZNONODE)
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
		if (rc == ZOK) {
			el_leader_done(el, res);
			el_pred_head(el);
		} else if (rc == ZNONODE) {
			/* A get of no node sets no watch: exists does. */
			el->leader_check = 1;
			el->leader_armed = 0;
		} else {
			el->leader_armed = 0;
			el_op_error(el, rc);
		}
		break;
	case EL_OP_LEADER_EXISTS:
		el->leader_check = 0;
		if (rc == ZNONODE)
			el_no_leader(el);
		else {
			/* It is there (again): what it says is read. */
			el->leader_fresh = 0;
			el->leader_armed = 0;
			if (rc != ZOK)
				el_op_error(el, rc);
		}
		break;
	case EL_OP_BREADCRUMB:
		if (rc == ZOK) {
			el->crumb_exists = 1;
			el->crumb_fresh = 1;
			el->crumb_version = res->version;
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
			el->crumb_version = el->crumb_version_next;
		} else {
			/* Something changed under us: learn it all again. */
			el_invalidate(el);
			el_op_error(el, rc);
		}
		break;
	case EL_OP_SET_DATA:
		if (rc == ZOK) {
			/* Data changed again while it flew: written again. */
			if (el->data_sent_gen == el->data_gen || EL_MUTANT(47))
				el->data_dirty = 0;
			el->crumb_version = el->crumb_version_next;
			if (el->acked && el_owns_leader(el))
				el_replace(&el->leader_data, el->data);
		} else {
			el_invalidate(el);
			el_op_error(el, rc);
		}
		break;
	case EL_OP_RELEASE:
		/*
		 * Deleted, or maybe (a lost reply), or not (a failed multi):
		 * until it is deleted for sure it is not forgotten, or the
		 * next head would yield back to it (see el_next_mark()).
		 */
		if (el->release_marked && rc == ZOK && !EL_MUTANT(40))
			el_replace(&el->mark_have, NULL);
		else if (el->release_marked && !EL_MUTANT(40))
			el->mark_unsure = 1;
		else if (el->release_marked)
			el_replace(&el->mark_have, NULL);
		el->release_marked = 0;
		if (rc == ZOK) {
			/*
			 * Deleting E/leader fired our watch on it: its
			 * notification came before this reply and has the
			 * watch set again.
			 */
			if (el_owns_leader(el))
				el_no_leader(el);
			el->crumb_exists = 0;
			el_release_done(el);
		} else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
			/*
			 * It may have been applied, and E/claim be the
			 * successor's by now: what we own is read again
			 * before the retry (E/leader and our node are).
			 */
			if (!EL_MUTANT(13))
				el->claim_known = 0;
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
			el->claim_known = 0;
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
		el->pred_watched = 0;
		if (!deleted)
			return;		/* new data: the watch is set again */
		/*
		 * Gone. If it was first, we are now: every node created
		 * after our listing has a higher sequence than ours.
		 */
		if ((el->pred_head && el->listed) || EL_MUTANT(15)) {
			el->first = 1;
			el->position = 1;
			if (el->ncandidates > 1)
				el->ncandidates--;
			el_replace(&el->pred_path, NULL);
			el->pred_head = 0;
			el->pred_czxid = 0;
			el->pred_owner = 0;
		} else
			el->listed = 0;
	} else if (strcmp(path, el->leader_path) == 0) {
		el->leader_armed = 0;
		if (deleted)
			el_no_leader(el);
		else
			el->leader_fresh = 0;
	} else if (strcmp(path, el->claim_path) == 0) {
		el->claim_wait = 0;
		el->claim_watched = 0;
	}
}

void
election_hook_done(struct election *el, enum hook_kind kind, int ok)
{
	int cancelled = el->hook_cancelled;
	int same_node = el->hook_gen == el->node_gen;

	if (el->hook != (int)kind)
		return;
	el->hook = -1;
	el->hook_cancelled = 0;
	switch (kind) {
	case HOOK_CHECK:
		/*
		 * A check killed to free the slot tells nothing, nor one
		 * that a reload took away while it ran: nothing would ever
		 * make us healthy again.
		 */
		if (!cancelled && (el->check_configured || EL_MUTANT(45)))
			el_check_done(el, ok);
		break;
	case HOOK_FENCE:
		if (!same_node && !EL_MUTANT(6)) {
			/* The node it fenced for is gone: so is its use. */
			el->lost_reason = NULL;
			break;
		}
		if (ok) {
			el->fenced = 1;
			break;
		}
		if (cancelled) {
			el->lost_reason = NULL;
			break;
		}
		/* A failed fence must not promote: leave like a failed promote. */
		/* FALLTHROUGH */
	case HOOK_PROMOTE:
		el->promoted = 1;
		el->acked = 0;
		if (!ok && !cancelled && same_node) {
			el->promote_failed = 1;
			el->release_pending = 1;
			el->release_why = "promote-failed";
		}
		if (!same_node && el->lost_reason == NULL)
			el->lost_reason = "session-expired";
		break;
	case HOOK_DEMOTE:
	case HOOK_NOTIFY:
	case HOOK_RUN:
		break;
	}
}

/* Whether this leader looks at the queue: nothing else under way. */
int
el_preempt_on(const struct election *el)
{
	return el->preempt_ms >= 0 && election_role(el) == ROLE_LEADER &&
	    !el->resigning && !el->release_pending && el->sw_phase == 0;
}

void
election_queue(struct election *el, const struct el_queue *q)
{
	el_preempt_listed(el, q, el_preempt_on(el));
}

void
election_candidates(struct election *el, int n)
{
	el->ncandidates = n;
}

void
election_reconfigure(struct election *el, const struct election_params *p)
{
	el->fence_configured = p->fence;
	el->preempt_ms = p->preempt_delay_ms;
	el->backoff_ms = p->retry_backoff_ms;
	el->grace_ms = p->disconnect_grace_ms;
	el->tick_ms = p->tick_ms > 0 ? p->tick_ms : 0;
	el->hook_timeout_ms = p->hook_timeout_ms;
	el->demote_cfg_ms = p->demote_timeout_ms > 0 ? p->demote_timeout_ms : 0;
	el_set_timeout(el, 0);
	el->check_interval_ms = p->check_interval_ms > 0 ?
	    p->check_interval_ms : 5000;
	el->check_fall = p->check_fall > 0 ? p->check_fall : 1;
	el->check_rise = p->check_rise > 0 ? p->check_rise : 1;
	if (p->check && !el->check_configured)
		el->check_due = 0;	/* first run one interval from now */
	if (!p->check) {
		el->unhealthy = 0;
		el->check_fails = 0;
		el->check_oks = 0;
	}
	el->check_configured = p->check;
	if (el->data != NULL && (strcmp(p->data, el->data) != 0 ||
	    p->priority != el->priority)) {
		/*
		 * E/priority is made when a priority first comes: after the
		 * others when they are made, else in their turn.
		 */
		if (el->priority == 0 && p->priority != 0 &&
		    el->parents_done) {
			el->parents_done = 0;
			el->parent_idx = el->nbase;
		}
		el->priority = p->priority;
		el->nparents = el->nbase + (el->priority != 0);
		if (el->parents_done == 0 && el->parent_idx >= el->nparents) {
			el->parent_idx = 0;
			el->parents_done = 1;
		}
		election_set_data(el, p->data);
	}
}

void
election_set_data(struct election *el, const char *data)
{
	el_replace(&el->data, data);
	el_make_data(el);
	el->data_gen++;
	/*
	 * A create in flight, or lost, carries the old data: the node it
	 * made is written again once known.
	 */
	if (el->node != NULL || ((el->create_unknown ||
	    el_pipe_has(el, EL_OP_CREATE)) && !EL_MUTANT(46)))
		el->data_dirty = 1;
}

int
election_resign(struct election *el)
{
	if (election_role(el) != ROLE_LEADER || el->resigning)
		return -1;
	el->resigning = 1;
	el->release_pending = 1;
	el->release_why = "resign";
	return 0;
}

int
election_switchover(struct election *el, const char *node,
    const char *reason)
{
	struct candidate c;

	if (election_role(el) != ROLE_LEADER || el->resigning ||
	    el->release_pending || el->sw_phase != 0 || el->node == NULL ||
	    candidate_parse(node, &c) == -1 || strcmp(node, el->node) == 0)
		return -1;
	el_replace(&el->sw_target, node);
	el->sw_reason = reason;
	el->sw_failed = NULL;
	el->sw_phase = 1;
	return 0;
}

void
election_switchover_cancel(struct election *el)
{
	el_switch_clear(el, NULL);
}

const char *
election_switchover_failed(struct election *el)
{
	const char *why = el->sw_failed;

	el->sw_failed = NULL;
	return why;
}

int
election_run_exited(struct election *el)
{
	if (!el->promoted || el->release_pending || el->run_exited)
		return -1;
	el->run_exited = 1;
	el->release_pending = 1;
	el->release_why = "run-exited";
	return 0;
}

/* Whether we have, or may be about to have, a node in the queue. */
static int
el_has_node(const struct election *el)
{
	if (EL_MUTANT(3))
		return el->node != NULL;
	return el->node != NULL || el->create_unknown ||
	    el_pipe_has(el, EL_OP_CREATE);
}

void
election_pause(struct election *el, int paused)
{
	int was_paused = el->paused;

	if (paused && !el->paused) {
		el->paused = 1;
		if (el_has_node(el)) {
			el->release_pending = 1;
			el->release_why = "pause";
		}
	} else if (!paused)
		el->paused = 0;
	if (paused && !(EL_MUTANT(44) && was_paused))
		el->pause_reply = 1;
}

void
election_stop(struct election *el)
{
	el->stopping = 1;
	if (el_has_node(el)) {
		el->release_pending = 1;
		el->release_why = "shutdown";
	}
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
		/* Only inside the lease, with room left for a demote. */
		if (!el->conn_lost && !el_lease_short(el))
			return ROLE_LEADER;
		return ROLE_DEMOTING;
	}
	if (el->observer || el->paused || el->unhealthy)
		return ROLE_OBSERVER;
	/* Kept out by lease_error, it still follows whoever leads. */
	if (el->zk != EL_ZK_CONNECTED ||
	    (!el->listed_once && el->lease_error == NULL))
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

/*
 * What E/leader says is shown when its session may lead: ours (and then
 * our own view of ourselves wins over its data, which anyone allowed to
 * write there could have changed), or one that held a node before ours at
 * our last listing (sequence numbers only grow: nobody else can lead
 * before our node goes). Observers, and candidates before their first
 * listing, cannot tell and show it as read.
 */
static int
el_leader_trusted(const struct election *el)
{
	int i;

	if (EL_MUTANT(22) || !el->ahead_known)
		return 1;
	for (i = 0; i < el->nahead; i++)
		if (el->ahead[i] == el->leader_owner)
			return 1;
	return 0;
}

void
election_view(const struct election *el, struct election_view *v)
{
	v->role = election_role(el);
	v->zk = el->zk;
	v->sid = el->sid;
	v->leader_id = "";
	v->leader_data = "";
	v->leader_epoch = 0;
	v->leader_untrusted = 0;
	v->leader_owner = el->leader_exists ? el->leader_owner : 0;
	if (el->leader_exists && el_owns_leader(el) && !EL_MUTANT(22)) {
		v->leader_id = el->id;
		v->leader_data = el->data;
		v->leader_epoch = el->lead_epoch != 0 ? el->lead_epoch :
		    el->epoch != 0 ? el->epoch : el->leader_epoch;
	} else if (el->leader_exists && el_leader_trusted(el)) {
		v->leader_id = el->leader_id;
		v->leader_data = el->leader_data;
		v->leader_epoch = el->leader_epoch;
	} else if (el->leader_exists)
		v->leader_untrusted = 1;
	v->epoch = el->epoch;
	v->candidates = el->ncandidates;
	v->position = el->position;
	v->node = el->node;
	v->paused = el->paused;
	v->unhealthy = el->unhealthy;
	v->hook = el->hook;
	v->session_timeout_ms = el->timeout_ms;
	v->demote_timeout_ms = el->demote_ms;
	v->demote_clamped = el->demote_clamped;
	v->lease_end = el->lease_known ? el_lease_end(el) : 0;
	v->demote_at = el->lease_known ? el_demote_point(el) : 0;
	v->confirmed_at = el->confirmed_at;
	v->report_lag_ms = el->lag_ms;
	v->lease_error = el->lease_error;
	v->resuming = el->resume_check;
	v->promoted = el->promoted;
	v->backoff_until = el->backoff_until;
	v->crumb_id = el->crumb_exists ? el->crumb_id : "";
	v->crumb_data = el->crumb_exists ? el->crumb_data : "";
	v->crumb_epoch = el->crumb_exists ? el->crumb_epoch : 0;
	v->id = el->id;
	v->data = el->data;
	v->yields = el->yields;
	v->yield_sid = el->yield_sid;
	v->yield_prio = el->yield_prio;
}

const char *
election_op_name(enum el_op op)
{
	static const char *const names[EL_OP_COUNT] = {
		"none", "parent", "create", "list", "watch_pred", "watch_own",
		"leader", "leader_exists", "breadcrumb", "ack", "release",
		"set_data", "sync", "claim", "claim_watch", "claim_read",
		"switchover", "mark", "unmark", "marks",
	};

	return (unsigned)op < EL_OP_COUNT ? names[op] : "unknown";
}

/*
 * Resuming a session (el_resume_next() in election.c takes it on): after
 * a re-exec (SIGUSR2) or a crash, the daemon
 * re-attaches the ZooKeeper session it had instead of asking for a new
 * one, and the election takes up what that session holds without running
 * a hook when all of it is still there.
 *
 * What is handed over is a hint, never a fact: the session id, its lease
 * (a send time on the same clock, which keeps counting across an exec and
 * a crash of the same boot) and whether the application was told to lead,
 * with which epoch. Every fact is read back on the re-attached session
 * before it is relied on, as after any reconnect: our node is found by
 * listing (as after a lost create) and watched, E/leader and E/claim are
 * read. Until they are in:
 *
 * - A resumed leader is a leader that has just reconnected: its lease is
 *   the one handed over until the session is re-opened, which renews it
 *   (el_resume_connected()), then confirmations of the new connection do
 *   (el_confirmed()); it demotes at the lease's demote point as any
 *   leader does. Its node gone, E/leader of another session
 *   or E/claim not its own make it demote (node-deleted, preempted).
 * - A daemon that was not leading may still have an application that
 *   leads: a crash can come between a promote's start and the file that
 *   says so. What it holds decides: E/claim or E/leader of its own with
 *   no leadership behind them means a hook was under way, so the demote
 *   hook runs first (reason startup), and the queue decides the rest.
 *   When the facts cannot be read back before the lease's demote point,
 *   it demotes as a start would (hooks.demote_on_start), unless the image
 *   that ran handed the facts over itself.
 * - A session found expired: the demote hook runs (reason startup), then
 *   a new session rejoins, as a start does.
 *
 * So nothing is led on what was not confirmed after the restart, and the
 * safety argument of election.c is unchanged: a resumed leader's
 * application leads under the same lease, with the same demote point, as
 * the image before it.
 */
void
election_resume(struct election *el, const struct el_resume *r)
{
	el->sid = r->sid;
	el_set_timeout(el, r->timeout_ms);
	if (r->lease_sent != 0) {
		el->lease_sent = r->lease_sent;
		el->lease_known = 1;
	}
	el->resume_check = 1;
	el->resume_exact = r->exact;
	el->resume_demote = el->startup_demote;
	el->startup_demote = 0;
	/*
	 * Our node, if the session still has one, is found by a listing. Its
	 * data is written again once found: a reload may have changed it
	 * just before the old image could (issue 19, sim -P -W -R 3703).
	 */
	el->create_unknown = 1;
	el->data_dirty = 1;
	el->claim_known = 0;
	/*
	 * So are its priority markers: the image before may have made one
	 * for a priority that a reload has changed since, and a marker
	 * left behind makes the heads yield to it for good (sim -W -P -L
	 * -R 30000017). E/priority is listed and ours is adopted.
	 */
	el->marks_unknown = 1;
	/* Out of the election for its health: it stays out until it rises. */
	if (r->unhealthy && el->check_configured) {
		el->unhealthy = 1;
		el->release_pending = 1;
		el->release_why = "health";
	}
	if (!r->leader || el->observer)
		return;
	el->promoted = 1;
	el->acked = 1;
	el->claimed = 1;
	el->fenced = 1;
	el->epoch = r->epoch;
	el->lead_epoch = r->epoch;
	el->leader_exists = 1;
	el->leader_owner = r->sid;
	el->leader_epoch = r->epoch;
	el_replace(&el->leader_id, el->id);
	el_replace(&el->leader_data, el->data);
}

/*
 * The re-attached session's first connection. A server re-opens a live
 * session only once the quorum's leader has touched it (a revalidation:
 * see el_reconnected() and point 3 at the top of election_time.c), and
 * this process asked for it at zookeeper_init, which it knows, where a
 * reconnect of the library's own has only the last answered send time:
 * the session cannot expire before that time + T. So its lease runs from
 * then, as a new session's does. Anything else the connection confirms
 * renews it as usual.
 */
static void
el_resume_connected(struct election *el, int64_t sid)
{
	if (!el->resume_check || sid != el->sid || el->session_req == 0)
		return;
	if (!EL_MUTANT(32) && (!el->lease_known ||
	    el->session_req > el->lease_sent)) {
		el->lease_sent = el->session_req;
		el->lease_known = 1;
		if (el->now < el_lease_end(el))
			el->lease_lapsed = 0;
	}
	el->session_req = 0;
}

/* The session expired before its facts were confirmed. */
static void
el_resume_lost(struct election *el)
{
	if (!el->resume_check)
		return;
	el->resume_check = 0;
	if (el->promoted)
		el->lost_reason = "startup";
	else
		el->startup_demote = el->resume_demote;
}
