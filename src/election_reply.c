/*
 * Replies to the election's requests: each one's handler records what it
 * says (facts for election_next(); none of them acts).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

static void
el_op_error(struct election *el, int rc)
{
	if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT)
		return;		/* the session event tells what to do */
	el->retry_until = el->now + EL_RETRY_MS;
}

/* E/claims is missing (or our node is): it is made. */
static void
el_claims_again(struct election *el)
{
	el->lazy_parent = el->cl.dir;
}

/* E/breadcrumb is known to be absent. */
void
el_no_crumb(struct election *el)
{
	el->crumb_exists = 0;
	el->crumb_fresh = 1;
	el->crumb_epoch = 0;
	el->crumb_seq = el->evseq;
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
	/*
	 * Behind another, a prepared heir's promote may start the moment
	 * the release is told, in the step that tells it: the session file
	 * says it is down no more from this step's end, so that the daemon
	 * need not rewrite it before that promote (resume.c).
	 */
	if (me > 0)
		el->down = 0;
	/* A resign is done once the new node is seen in the queue. */
	if ((el->resigning == 2 || (el->resigning && EL_MUTANT(131))) &&
	    el->node != NULL)
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

	if (sid != el->sid || el->sid == 0 || EL_MUTANT(33))
		return;
	(void)xasprintf(&path, "%s/%s", el->prio_dir, name);
	if ((el->mark_have != NULL && strcmp(el->mark_have, path) == 0) ||
	    (el_pipe_has(el, EL_OP_MARK) && el->mark_path != NULL &&
	    strcmp(el->mark_path, path) == 0)) {
		free(path);
		return;
	}
	if (el->mark_have == NULL && !el_pipe_has(el, EL_OP_MARK)) {
		el->mark_have = path;
		return;
	}
	/*
	 * Another marker of our session (one from before a restart, beside
	 * the one we made or are making): deleted on its own, in any state
	 * (el_next_mark_extra()), one at a time; after each, E/priority is
	 * listed again for the next.
	 */
	if (el->mark_extra == NULL)
		el->mark_extra = path;
	else
		free(path);
}

/*
 * A session with two markers (one a change is replacing, el_next_mark())
 * counts at the lower of them: never above what it was set to.
 */
static void
el_marks_add(struct election *el, int64_t sid, int64_t prio)
{
	int i;

	for (i = 0; i < el->nmarks && !EL_MUTANT(85); i++)
		if (el->mark_sid[i] == sid) {
			if (EL_MUTANT(153) ? prio > el->mark_prio[i] :
			    prio < el->mark_prio[i])
				el->mark_prio[i] = prio;
			return;
		}
	el->mark_sid[el->nmarks] = sid;
	el->mark_prio[el->nmarks++] = prio;
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
				el_marks_add(el, sid, prio);
				el_mark_adopt(el, sid, res->children[i]);
			}
	}
	/*
	 * No E/priority, so no watch on it: it is made, then read again, so
	 * that a marker made later is seen.
	 */
	if (res->rc == ZNONODE)
		el->lazy_parent = el->prio_dir;
	el->marks_fresh = 1;
	el->marks_conn = el->conn_gen;
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
	case EL_OP_UNCLAIM:
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
	el->leader_epoch = candidate_epoch(res->data);
	/*
	 * Ours, but not what we wrote: someone allowed to write there changed
	 * it, and followers would show that. It is written again.
	 */
	if (el->acked && res->owner == el->sid && el->sid != 0 &&
	    el->ack_data != NULL && strcmp(res->data, el->ack_data) != 0)
		el->data_dirty = 1;
}

void
el_no_leader(struct election *el)
{
	/* Deleted by hand while we lead: it is written again. */
	if (el_promoted(el) && el->acked && el_owns_leader(el))
		el->acked = 0;
	el->leader_exists = 0;
	el->leader_fresh = 1;
	el->leader_owner = 0;
	el->leader_epoch = 0;
	el_replace(&el->leader_id, "");
	el_replace(&el->leader_data, "");
}

static void
el_reply_claim(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	el->marks_for_claim = 0;	/* a claim again reads them again */
	if (el_claim_created(&el->cl, rc))
		el->create_nonode = 0;
	else if (rc == ZNONODE) {
		/* Our node is gone, or E/claims is: both are seen to. */
		el->node_ok = 0;
		el_claims_again(el);
		if (el->create_nonode++ > 0 && !EL_MUTANT(21))
			el_op_error(el, rc);
	} else if (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT)
		el_op_error(el, rc);
}

static void
el_reply_claim_watch(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (el_claim_watched(&el->cl, res) < 0)
		el_op_error(el, rc);
}

static void
el_reply_claim_own(struct election *el, const struct el_result *res)
{
	if (el_claim_own_watched(&el->cl, res) < 0)
		el_op_error(el, res->rc);
}

/*
 * A stale claim ahead of ours deleted, or not (gone already, or our node
 * is): E/claims is listed again, and our node read if it may be gone.
 */
static void
el_reply_unclaim(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	el->cl.listed = 0;
	if (rc == ZNONODE)
		el->node_ok = 0;
	else if (rc != ZOK && rc != ZCONNECTIONLOSS &&
	    rc != ZOPERATIONTIMEOUT)
		el_op_error(el, rc);
}

static void
el_reply_claims(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (el_claims_listed(&el->cl, res, el->sid) < 0)
		el_claims_again(el);
	else if (rc != ZOK)
		el_op_error(el, rc);
}

static void
el_reply_sw_delete(struct election *el, const struct el_result *res)
{
	int rc = res->rc, i;

	/* Done, or one was gone already: list again either way. */
	for (i = 0; i < el->sw_nbetween; i++)
		el_replace(&el->sw_between[i], NULL);
	el->sw_nbetween = 0;
	if (el->sw_phase != 0)
		el->sw_phase = EL_MUTANT(95) ? 2 : 1;
	if (rc == ZNOAUTH)
		el_switch_clear(el, "not-allowed");
	else if (rc == ZNONODE && EL_MUTANT(112))
		el_switch_clear(el, "target-gone");
	else if (rc != ZOK && rc != ZNONODE)
		el_op_error(el, rc);
}

static void
el_reply_mark(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK || rc == ZNODEEXISTS) {
		el->create_nonode = 0;
		el->mark_unsure = 0;
		/* A change: the old one goes now (el_next_mark()). */
		if (el->mark_have != NULL &&
		    strcmp(el->mark_have, el->mark_path) != 0) {
			free(el->mark_old);
			el->mark_old = el->mark_have;
			el->mark_have = NULL;
		}
		el_replace(&el->mark_have, el->mark_path);
	} else if (rc == ZNONODE) {
		/* E/priority is gone: made again, as a create's. */
		el->parents_done = 0;
		el->parent_idx = el->nbase;
		if (el->create_nonode++ > 0 && !EL_MUTANT(21))
			el_op_error(el, rc);
	} else {
		/*
		 * Lost: made or not, it is ours until we know (issue 19.4).
		 * Unsure, el_next_mark() makes it again if still wanted
		 * (NODEEXISTS: it was made), else deletes it (NONODE: it
		 * was not); a pause or a reload meanwhile leaves nothing.
		 */
		if (el->mark_have == NULL) {
			el_replace(&el->mark_have, el->mark_path);
			el->mark_unsure = 1;
		} else
			el->marks_unknown = 1;	/* a change's: listed */
		el_op_error(el, rc);
	}
}

/*
 * The reply to the deletion of a marker of ours other than mark_have (one
 * from before a restart, or one a change replaced), if *flag says it was
 * that one: gone, or sent again (lost). 1 if it was.
 */
static int
el_unmarked_other(struct election *el, int *flag, char **path, int rc)
{
	if (!*flag)
		return 0;
	*flag = 0;
	if (rc == ZOK || rc == ZNONODE)
		el_replace(path, NULL);
	else
		el_op_error(el, rc);	/* lost: deleted again */
	return 1;
}

static void
el_reply_unmark(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (el_unmarked_other(el, &el->unmark_extra, &el->mark_extra, rc)) {
		if (el->mark_extra == NULL)
			el->marks_unknown = 1;	/* any other? */
		return;
	}
	if (el_unmarked_other(el, &el->unmark_old, &el->mark_old, rc))
		return;

	if (rc == ZOK || rc == ZNONODE) {
		el_replace(&el->mark_have, NULL);
		el->mark_unsure = 0;
	}
	else {
		/*
		 * Lost: deleted or not. Unsure, it is deleted again if
		 * still unwanted, made again if wanted once more (a
		 * marker believed in but gone would never be made again).
		 */
		el->mark_unsure = 1;
		el_op_error(el, rc);
	}
}

/*
 * The exists on our marker answered: there, and watched; or gone (deleted
 * by hand): unsure, so el_next_mark() makes it again if it is wanted.
 */
static void
el_reply_mark_own(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK)
		return;
	if (rc == ZNONODE && el->mark_have != NULL && el->mark_watch != NULL &&
	    strcmp(el->mark_have, el->mark_watch) == 0)
		el->mark_unsure = 1;
	el_replace(&el->mark_watch, NULL);
	if (rc != ZNONODE && rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT)
		el_op_error(el, rc);
}

static void
el_reply_parent(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (el->parents_done && el->lazy_parent != NULL) {
		if (rc == ZNONODE) {
			/* Its own parent is gone: all are made again. */
			el->parents_done = 0;
			el->parent_idx = 0;
			return;
		}
		if (rc != ZOK && rc != ZNODEEXISTS) {
			el_op_error(el, rc);
			return;
		}
		/* Made: the markers are read again, with a watch. */
		if (el->lazy_parent == el->prio_dir)
			el->marks_fresh = 0;
		el->lazy_parent = NULL;
	} else if (rc == ZOK || rc == ZNODEEXISTS) {
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
}

static void
el_reply_create(struct election *el, const struct el_result *res)
{
	const char *slash;
	int rc = res->rc;

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
		if ((el->want_pause || el->unhealthy || el->want_stop) &&
		    !EL_MUTANT(3))
			el_release_ask(el, NULL);
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
}

static void
el_reply_list(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK)
		el_list_done(el, res);
	else if (rc == ZNONODE) {
		el->parents_done = 0;
		el->parent_idx = 0;
		if (el->node != NULL)
			el_node_lost(el);
		/* No parent, no node: a lost create made none. */
		el->create_unknown = 0;
	} else
		el_op_error(el, rc);
}

static void
el_reply_watch_pred(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK) {
		el->pred_watched = 1;
		el->pred_czxid = res->czxid;
		el->pred_owner = res->owner;
		el_pred_head(el);
	} else if (rc == ZNONODE)
		el->listed = 0;
	else
		el_op_error(el, rc);
}

static void
el_reply_watch_own(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK && res->owner == el->sid) {
		el->node_ok = 1;
		el->epoch = res->czxid;
	} else if (rc == ZOK || rc == ZNONODE)
		el_node_lost(el);
	else
		el_op_error(el, rc);
}

static void
el_reply_leader(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

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
}

static void
el_reply_leader_exists(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

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
}

static void
el_reply_breadcrumb(struct election *el, const struct el_result *res)
{
	char big[1024];
	int rc = res->rc;

	if (rc == ZOK) {
		el->crumb_exists = 1;
		el->crumb_fresh = 1;
		el->crumb_seq = el->evseq;
		el->crumb_version = res->version;
		el->crumb_epoch = candidate_epoch(res->data);
		candidate_kv(res->data, "id", big, sizeof(big));
		el_replace(&el->crumb_id, big);
		candidate_kv(res->data, "data", big, sizeof(big));
		el_replace(&el->crumb_data, big);
	} else if (rc == ZNONODE) {
		/* A get of no node sets no watch: exists does. */
		el_no_crumb(el);
		el->crumb_armed = 0;
	} else {
		el->crumb_armed = 0;
		el_op_error(el, rc);
	}
}

static void
el_reply_crumb_exists(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZNONODE)
		el_no_crumb(el);
	else {
		/* It is there (again): what it says is read. */
		el->crumb_fresh = 0;
		el->crumb_armed = 0;
		if (rc != ZOK)
			el_op_error(el, rc);
	}
}

/*
 * Our write of the breadcrumb (the ack, new data) was applied: its version
 * is the one the multi's reply tells (the breadcrumb's set is its last
 * set, el_build_ack() and el_build_set_data()). Counted up from what we
 * knew it was wrong twice: a read answered between the write's request
 * and its reply (sim seed 763000967), and a write by hand applied between
 * our read and our ack, whose notification came where our own write's
 * would have, so that nothing told them apart (the campaign of c9c45e3,
 * seed 1049029296 -k 2000 -H: each release of that leadership was
 * refused BADVERSION, then read and sent again). The count stays for a
 * reply that does not tell.
 */
static void
el_crumb_written(struct election *el, const struct el_result *res)
{
	if (el->reply_crumb == EL_CRUMB_CREATE)
		el->crumb_version = 0;
	else if (el->reply_crumb == EL_CRUMB_SET && res->has_set_version &&
	    !EL_MUTANT(168))
		el->crumb_version = res->set_version;
	else if (el->reply_crumb == EL_CRUMB_SET && !EL_MUTANT(106))
		el->crumb_version++;
}

static void
el_reply_ack(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK) {
		el->acked = 1;
		el->leader_exists = 1;
		el->leader_owner = el->sid;
		el->leader_epoch = el->epoch;
		el_replace(&el->leader_id, el->id);
		el_replace(&el->leader_data, el->data);
		/*
		 * What we wrote (the notification of our own write, if
		 * a watch was set, came before this reply).
		 */
		el->crumb_exists = 1;
		el->crumb_fresh = 1;
		el->crumb_seq = el->evseq;
		el->crumb_epoch = el->epoch;
		if (EL_MUTANT(135))
			el->crumb_mine = 1;
		el_crumb_written(el, res);
	} else {
		/* Something changed under us: learn it all again. */
		el_invalidate(el);
		el_op_error(el, rc);
	}
}

static void
el_reply_set_data(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

	if (rc == ZOK) {
		/* Data changed again while it flew: written again. */
		if (el->data_sent_gen == el->data_gen || EL_MUTANT(47))
			el->data_dirty = 0;
		if (el->reply_crumb != EL_CRUMB_NONE) {
			el->crumb_fresh = 1;	/* ours, as written */
			el->crumb_seq = el->evseq;
		}
		el_crumb_written(el, res);
		if (el->acked && el_owns_leader(el))
			el_replace(&el->leader_data, el->data);
	} else {
		el_invalidate(el);
		el_op_error(el, rc);
	}
}

static void
el_reply_release(struct election *el, const struct el_result *res)
{
	int rc = res->rc;

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
	if (EL_MUTANT(114))
		el->crumb_mine = 0;
	if (rc == ZOK) {
		el->crumb_mine = 0;
		/*
		 * Deleting E/leader fired our watch on it: its
		 * notification came before this reply and has the
		 * watch set again.
		 */
		if (el_owns_leader(el))
			el_no_leader(el);
		/* Not ours, it stays: the watch keeps what we know. */
		if (el->release_crumb)
			el_no_crumb(el);
		el_release_done(el);
	} else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
		/*
		 * It may have been applied: whether our claim is
		 * still there is listed again before the retry
		 * (E/leader and our node are read again). Not an
		 * attempt: only a refusal counts.
		 */
		el->cl.known = 0;
		if (EL_MUTANT(154))
			el->release_attempts++;
	} else if (++el->release_attempts >= 3) {
		/*
		 * Closing the session removes our ephemeral nodes
		 * for sure; a breadcrumb left behind only makes the
		 * successor fence.
		 */
		el_release_done(el);
		el->restart = 1;
		el->restart_why = "its release refused three times";
	} else {
		el_invalidate(el);
		el->cl.known = 0;
		/*
		 * A node deleted or rewritten by hand (NONODE, BADVERSION):
		 * what we own is read again and the release goes again at
		 * once, not after the retry time (a review: a breadcrumb
		 * rewritten by hand cost a resign 1 s). The attempts above
		 * bound it.
		 */
		if ((rc != ZNONODE && rc != ZBADVERSION) || EL_MUTANT(93))
			el_op_error(el, rc);
	}
}
/* One handler per request kind (the sync is answered apart). */
static void (*const el_reply[EL_OP_COUNT])(struct election *,
    const struct el_result *) = {
	[EL_OP_CLAIM] = el_reply_claim,
	[EL_OP_CLAIM_WATCH] = el_reply_claim_watch,
	[EL_OP_CLAIMS] = el_reply_claims,
	[EL_OP_CLAIM_OWN] = el_reply_claim_own,
	[EL_OP_UNCLAIM] = el_reply_unclaim,
	[EL_OP_MARK_OWN] = el_reply_mark_own,
	[EL_OP_SW_DELETE] = el_reply_sw_delete,
	[EL_OP_MARK] = el_reply_mark,
	[EL_OP_UNMARK] = el_reply_unmark,
	[EL_OP_MARKS] = el_marks_done,
	[EL_OP_PARENT] = el_reply_parent,
	[EL_OP_CREATE] = el_reply_create,
	[EL_OP_LIST] = el_reply_list,
	[EL_OP_WATCH_PRED] = el_reply_watch_pred,
	[EL_OP_WATCH_OWN] = el_reply_watch_own,
	[EL_OP_LEADER] = el_reply_leader,
	[EL_OP_LEADER_EXISTS] = el_reply_leader_exists,
	[EL_OP_BREADCRUMB] = el_reply_breadcrumb,
	[EL_OP_CRUMB_EXISTS] = el_reply_crumb_exists,
	[EL_OP_ACK] = el_reply_ack,
	[EL_OP_SET_DATA] = el_reply_set_data,
	[EL_OP_RELEASE] = el_reply_release,
};

/* The keepalive sync: outside the pipeline, one at a time. */
static void
el_reply_sync(struct election *el, int rc)
{
	if (!el->sync_inflight)
		return;
	el->sync_inflight = 0;
	if (rc == ZOK) {
		el_confirmed(el, el->sync_sent);
		if (el->sync_conn == el->conn_gen)
			el->synced = 1;
		/* A follower that polls E/leader with its keepalive. */
		if (EL_MUTANT(103) && el->state != EL_ST_LEADING)
			el->leader_armed = 0;
	} else if (el->sync_conn == el->conn_gen)
		/*
		 * Refused (a handle whose session just expired, whose
		 * news is still on its way): not again at once.
		 */
		el->sync_retry = el->now + EL_RETRY_MS;
}

/* The cause of a state change a reply makes, for the log. */
static const char *
el_reply_cause(enum el_op op)
{
	static const char *const causes[EL_OP_COUNT] = {
		"reply", "reply: parent", "reply: create", "reply: list",
		"reply: watch_pred", "reply: watch_own", "reply: leader",
		"reply: leader_exists", "reply: breadcrumb", "reply: ack",
		"reply: release", "reply: set_data", "reply: sync",
		"reply: claim", "reply: claim_watch", "reply: claims",
		"reply: switchover", "reply: mark", "reply: unmark",
		"reply: marks", "reply: crumb_exists", "reply: claim_own",
		"reply: unclaim", "reply: mark_own",
	};

	return (unsigned)op < EL_OP_COUNT ? causes[op] : "reply";
}

void
election_op_done(struct election *el, enum el_op op,
    const struct el_result *res)
{
	int64_t sent;
	int rc = res->rc;

	el->evseq++;
	el->cause = el_reply_cause(op);
	if (op == EL_OP_SYNC) {
		el_reply_sync(el, rc);
		return;
	}
	/* Replies come in the order of the requests; anything else is old. */
	if (el->npipe == 0 || op != el->pipe[0].op)
		return;
	sent = el->pipe[0].sent;
	el->reply_crumb = el->pipe[0].crumb;
	el->npipe--;
	memmove(&el->pipe[0], &el->pipe[1], (size_t)el->npipe *
	    sizeof(el->pipe[0]));
	if (el_writes(op) ? el_answered(rc) :
	    EL_MUTANT(1) && (rc == ZOK || rc == ZNONODE))
		el_confirmed(el, sent);
	else if (el_server_answered(rc))
		el_answered_sent(el, sent);
	if ((unsigned)op < EL_OP_COUNT && el_reply[op] != NULL)
		el_reply[op](el, res);
}
