/*
 * The election's decisions: election_next() asks, in order of urgency,
 * what is to be done now (a demote, an operator's answer, a session
 * restart, a keepalive, preemption, the next ZooKeeper request of the
 * recipe that election.c's header describes, a health check) and builds
 * the action. What it decides on are the facts election.c keeps and the
 * events record (election_event.c, election_reply.c), and the clock
 * (election_time.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

/* A request in flight that what follows must wait for. */
static int
el_pipe_busy(const struct election *el)
{
	int i;

	for (i = 0; i < el->npipe; i++)
		if (!el->pipe[i].bg)
			return 1;
	return 0;
}

static const char *
el_demote_reason(const struct election *el)
{
	if (el->lost_reason != NULL)
		return el->lost_reason;
	if (el->zk == EL_ZK_EXPIRED || el->zk == EL_ZK_AUTH_FAILED)
		return "session-expired";
	if (el->conn_lost)
		return el->conn_lost_why;
	if (el->stopping)
		return "shutdown";
	if (el->resigning)
		return el->sw_handing ? el->sw_reason : "resign";
	if (el->paused)
		return "pause";
	if (el->unhealthy)
		return "health";
	if (el->lease_error != NULL)
		return "lease-lost";
	if (el->promote_failed)
		return "promote-failed";
	if (el->run_exited)
		return "run-exited";
	if (el->zk == EL_ZK_CONNECTED && el->listed && !el->first)
		return "preempted";
	if (el->zk == EL_ZK_CONNECTED && el->leader_fresh &&
	    el->leader_exists && el->leader_owner != el->sid)
		return "preempted";
	/* Asked to leave, then asked back in: the leaving goes on. */
	if (el->release_pending)
		return el->release_why != NULL ? el->release_why : "pause";
	return NULL;
}

/* Nothing of this daemon's keeps it out of the queue for now. */
static int
el_may_queue(const struct election *el)
{
	return !el->observer && !el->paused && !el->unhealthy &&
	    !el->stopping && el->backoff_until == 0 && !el->promote_failed &&
	    !el->run_exited && !el->restart && el->lease_error == NULL;
}

static int
el_want_join(const struct election *el)
{
	return el_may_queue(el) && !el->release_pending &&
	    el->resigning != 1;
}

static void
el_act_zk_pipe(struct election *el, struct el_action *act, enum el_op op,
    const char *path, int bg)
{
	act->type = EL_ACT_ZK;
	act->op = op;
	act->path = path;
	el->pipe[el->npipe].op = op;
	el->pipe[el->npipe].sent = el->now;
	el->pipe[el->npipe].bg = bg;
	el->npipe++;
}

/* A request the next decision waits for. */
static void
el_act_zk(struct election *el, struct el_action *act, enum el_op op,
    const char *path)
{
	el_act_zk_pipe(el, act, op, path, 0);
}

/*
 * The breadcrumb is read with a watch (a get, or an exists when it is
 * known to be absent: a get of no node sets none); 1 if the read went
 * out. It goes beside whatever is in flight.
 */
static int
el_arm_crumb(struct election *el, struct el_action *act)
{
	if (el_pipe_has(el, EL_OP_BREADCRUMB) ||
	    el_pipe_has(el, EL_OP_CRUMB_EXISTS))
		return 0;
	el->crumb_armed = 1;
	el_act_zk_pipe(el, act, el->crumb_fresh && !el->crumb_exists ?
	    EL_OP_CRUMB_EXISTS : EL_OP_BREADCRUMB, el->crumb_path, 1);
	return 1;
}

/* The breadcrumb's read, unless it is known or on its way. */
static int
el_read_crumb(struct election *el, struct el_action *act)
{
	if (el->crumb_fresh)
		return 0;
	return el_arm_crumb(el, act);
}

/*
 * The breadcrumb as a claim and a promote need it: kept current by a
 * watch of this connection (see (7) in the header). 1 while a decision
 * waits, or a read went out.
 */
static int
el_watch_crumb(struct election *el, struct el_action *act)
{
	if (!el->crumb_armed && !(EL_MUTANT(18) && el->crumb_fresh) &&
	    el_arm_crumb(el, act))
		return 1;
	return !el->crumb_fresh;
}

/* The breadcrumb, unless known: 1 while it is not (a decision waits). */
static int
el_need_crumb(struct election *el, struct el_action *act)
{
	(void)el_read_crumb(el, act);
	return !el->crumb_fresh;
}

static void
el_act_hook(struct election *el, struct el_action *act, enum hook_kind kind,
    const char *reason)
{
	act->type = EL_ACT_HOOK;
	act->hook = kind;
	act->reason = reason;
	el->hook = (int)kind;
	el->hook_gen = el->node_gen;
	el->hook_cancelled = 0;
	switch (kind) {
	case HOOK_PROMOTE:
	case HOOK_FENCE:
		act->ms = el->hook_timeout_ms;
		act->epoch = el->epoch;
		break;
	case HOOK_DEMOTE:
		act->ms = el->demote_ms;
		act->epoch = EL_MUTANT(7) ? el->epoch : el->lead_epoch;
		break;
	case HOOK_CHECK:
		act->ms = el->check_interval_ms;
		act->epoch = el->leader_exists ? el->leader_epoch : 0;
		break;
	case HOOK_NOTIFY:	/* the daemon's, outside the election */
	case HOOK_RUN:
		break;
	}
}

/*
 * grace_ms: from SIGTERM to SIGKILL. A check in a promote's way gets a
 * moment to end cleanly; what stands between a leader and its demote
 * gets none.
 */
static void
el_act_cancel(struct election *el, struct el_action *act, int64_t grace_ms)
{
	act->type = EL_ACT_CANCEL;
	act->hook = (enum hook_kind)el->hook;
	act->ms = grace_ms;
	el->hook_cancelled = 1;
}

static void
el_sub(struct el_action *act, enum zk_mop_kind kind, const char *path,
    const char *data)
{
	act->sub[act->nsub].kind = kind;
	act->sub[act->nsub].path = path;
	act->sub[act->nsub].data = data;
	act->sub[act->nsub].version = -1;
	act->nsub++;
}

static void
el_build_release(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	if (el_owns_leader(el))
		el_sub(act, ZK_MOP_DELETE, el->leader_path, NULL);
	/*
	 * Ours, as read: a read from a server behind the quorum could show
	 * ours where a successor has written its own since. The version
	 * makes the multi fail then, and it is read again.
	 */
	el->release_crumb = el->crumb_exists && el->lead_epoch != 0 &&
	    el->crumb_epoch == el->lead_epoch;
	if (el->release_crumb) {
		el_sub(act, ZK_MOP_DELETE, el->crumb_path, NULL);
		if (!EL_MUTANT(19))
			act->sub[act->nsub - 1].version = el->crumb_version;
	}
	if (el->node_path != NULL)
		el_sub(act, ZK_MOP_DELETE, el->node_path, NULL);
	/*
	 * Our priority marker goes with our node, so that no head sees it
	 * without the node; it is made again before the next node.
	 */
	el->release_marked = (act->nsub > 0 || el->cl.have) &&
	    el->mark_have != NULL && !el->mark_unsure;
	if (el->release_marked)
		el_sub(act, ZK_MOP_DELETE, el->mark_have, NULL);
	/*
	 * Our claim goes last: its deletion is the heir's signal, and a
	 * server sends the notifications of one transaction in the order of
	 * its operations, so the heir has heard of everything else first.
	 */
	if (el->cl.have && el->cl.path != NULL)
		el_sub(act, ZK_MOP_DELETE, el->cl.path, NULL);
}

/* The data of E/leader and E/breadcrumb. */
static void
el_make_ack_data(struct election *el)
{
	free(el->ack_data);
	(void)xasprintf(&el->ack_data, "id=%s\ndata=%s\nepoch=%lld\n", el->id,
	    el->data, (long long)el->epoch);
}

static void
el_build_ack(struct election *el, struct el_action *act)
{
	el_make_ack_data(el);
	act->nsub = 0;
	el_sub(act, ZK_MOP_CHECK, el->node_path, NULL);
	el_sub(act, el_owns_leader(el) ? ZK_MOP_SET : ZK_MOP_CREATE_EPHEMERAL,
	    el->leader_path, el->ack_data);
	el_sub(act, el->crumb_exists ? ZK_MOP_SET : ZK_MOP_CREATE,
	    el->crumb_path, el->ack_data);
	el->crumb_version_next = el->crumb_exists ? el->crumb_version + 1 : 0;
}

/* New data goes to our candidate node and, when leading, to E/leader. */
static void
el_build_set_data(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	el->crumb_version_next = el->crumb_version;
	el_sub(act, ZK_MOP_SET, el->node_path, el->create_data);
	if (el->acked && el_owns_leader(el)) {
		el_make_ack_data(el);
		el_sub(act, ZK_MOP_SET, el->leader_path, el->ack_data);
		if (el->crumb_exists && el->crumb_epoch == el->epoch) {
			el_sub(act, ZK_MOP_SET, el->crumb_path, el->ack_data);
			el->crumb_version_next = el->crumb_version + 1;
		}
	}
}

/*
 * Preferred leaders. A candidate whose priority is not 0 keeps an
 * ephemeral marker E/priority/<sid>_<priority> while it wants to be in
 * the queue (made before its node, deleted with it by its release;
 * E/priority is made by every candidate, so that it can be watched). A
 * head or an heir reads the markers in its claim's pipeline (one request,
 * whatever the number of candidates; none of the nodes' data) with a
 * watch on E/priority's children, and again whenever a marker comes or
 * goes, so that a prepared heir knows them at the release; before any
 * fence or promote hook, yields to a session of higher priority that
 * holds a node behind ours in a listing made after that read: its claim
 * and node go in one release, as a resign's would, and it rejoins at the
 * back. A priority below 0 also yields to the candidates without a
 * marker (priority 0), so it always lists. Nothing in this is safety:
 * the claim, taken first, still decides who may promote, and a yield only
 * ever moves us back. For liveness, the highest priority in the queue
 * never yields, so honest markers end in a promote; markers that lie (a
 * hand-made one naming a queued session with a priority it does not
 * have) could send heads round forever, so a candidate yields at most
 * once per session timeout, after which it promotes as the head.
 */
static int
el_mark_wanted(const struct election *el)
{
	return el->priority != 0 && el->sid != 0 &&
	    el->now >= el->mark_hold_until && el_may_queue(el);
}

static void
el_unmark(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	el_sub(act, ZK_MOP_DELETE, el->mark_have, NULL);
	el_act_zk(el, act, EL_OP_UNMARK, NULL);
}

/* Our marker as it should be: made, replaced or deleted. */
static int
el_next_mark(struct election *el, struct el_action *act)
{
	char want[512];

	want[0] = '\0';
	if (el_mark_wanted(el))
		(void)snprintf(want, sizeof(want), "%s/%016llx_%lld",
		    el->prio_dir, (unsigned long long)el->sid,
		    (long long)el->priority);
	if (el->mark_have != NULL && strcmp(el->mark_have, want) != 0) {
		el_unmark(el, act);
		return 1;
	}
	/* One a lost release may have deleted is made again (or found). */
	if (want[0] == '\0' || (el->mark_have != NULL && !el->mark_unsure) ||
	    !el->parents_done)
		return 0;
	el_replace(&el->mark_path, want);
	el_act_zk(el, act, EL_OP_MARK, el->mark_path);
	return 1;
}

/* The markers, read for a claim beside it; 1 if the read went out. */
static int
el_read_marks(struct election *el, struct el_action *act)
{
	if (el->marks_fresh || el_pipe_has(el, EL_OP_MARKS) ||
	    (el->now < el->yield_until && !EL_MUTANT(23)))
		return 0;
	el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
	return 1;
}

static int64_t
el_marked(const struct election *el, int64_t sid, int64_t dflt)
{
	int i;

	for (i = 0; i < el->nmarks; i++)
		if (el->mark_sid[i] == sid)
			return el->mark_prio[i];
	return dflt;
}

/*
 * The head, claimed, before its fence or promote: 1 while it waits for
 * what decides a yield, or yields.
 */
static int
el_yield(struct election *el, struct el_action *act)
{
	int64_t top = el->priority, sid = 0, p;
	int i, maybe = el->priority < 0;

	if (el->now < el->yield_until && !EL_MUTANT(23))
		return 0;
	if (!el->marks_fresh) {
		if (!el_read_marks(el, act) && !el_pipe_has(el, EL_OP_MARKS))
			return 0;	/* not to be read now */
		return 1;
	}
	for (i = 0; i < el->nmarks && !maybe; i++)
		if (el->mark_sid[i] != el->sid && (el->mark_prio[i] > top ||
		    EL_MUTANT(42)))
			maybe = 1;
	if (!maybe)
		return 0;
	/* Who is behind us, listed after the markers were read. */
	if (el->yield_listed != 2 && el->yield_listed != 3) {
		if (el->yield_listed == 0) {
			el->yield_listed = 1;
			el->listed = 0;
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		}
		return 1;
	}
	/*
	 * Below 0 a node without a marker counts as 0. A marker is made
	 * before its node, so the markers read again after the listing (same
	 * server, so no older) show every marker of a listed node: one made
	 * after the first read no longer looks like a 0 (issue 19).
	 */
	if (el->priority < 0 && el->yield_listed == 2 && !EL_MUTANT(49)) {
		el->yield_listed = 3;
		el->marks_fresh = 0;
		if (!el_read_marks(el, act) && !el_pipe_has(el, EL_OP_MARKS))
			return 0;
		return 1;
	}
	for (i = 0; i < el->nbehind; i++) {
		if (el->behind[i] == el->sid)
			continue;
		p = el_marked(el, el->behind[i], 0);
		if (p > top || (EL_MUTANT(42) && p != 0 && sid == 0)) {
			top = p;
			sid = el->behind[i];
		}
	}
	if (sid == 0)
		return 0;
	el->yield_until = el->now + el->timeout_ms;
	el->yield_sid = sid;
	el->yield_prio = top;
	el->yields++;
	el->release_pending = 1;
	el->release_why = "yield";
	election_next(el, act);
	return 1;
}

/* The slot is wanted for kind: take it, or have a running check killed. */
static int
el_take_slot(struct election *el, struct el_action *act, enum hook_kind kind,
    const char *reason)
{
	if (el->hook == -1) {
		el_act_hook(el, act, kind, reason);
		return 1;
	}
	if (el->hook == HOOK_CHECK && !el->hook_cancelled) {
		el_act_cancel(el, act, kind == HOOK_DEMOTE ? 0 :
		    EL_CANCEL_GRACE_MS);
		return 1;
	}
	return 0;
}

/* A release in progress: what we own goes, after any hook is over. */
static void
el_next_release(struct election *el, struct el_action *act)
{
	if ((el->hook != -1 && el->hook != HOOK_CHECK) || el_promoted(el))
		return;
	/*
	 * A marker a lost release may have left goes first, on its own
	 * (NONODE is fine): never a marker without a node behind it.
	 */
	if (el->mark_unsure && el->mark_have != NULL) {
		el_unmark(el, act);
		return;
	}
	/*
	 * A resumed session releasing (a pause that came with the resume)
	 * first learns its marker, so that the release takes it along.
	 */
	if (el->marks_unknown && el->mark_have == NULL && !EL_MUTANT(33)) {
		if (!el_pipe_has(el, EL_OP_MARKS))
			el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return;
	}
	if (el->node == NULL && el->create_unknown && !EL_MUTANT(3)) {
		/* Find the node a lost create may have made, to delete it. */
		if (el->synced && !el->listed)
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return;
	}
	if (el_need_crumb(el, act))
		return;
	/* Which claim is ours, if a reply was lost or it was not listed. */
	if (!el->cl.known || (el->cl.have && el->cl.path == NULL)) {
		el_act_zk(el, act, EL_OP_CLAIMS, el->cl.dir);
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
}

/*
 * Our claim made, in a multi that checks our node still exists (see the
 * header): the breadcrumb's watch and the markers' read go out in the
 * same pipeline just before it, so that their replies are in when the
 * claim's comes. heir: made while our predecessor leads.
 */
static void
el_next_claim(struct election *el, struct el_action *act, int heir)
{
	if (!el->crumb_armed && !(EL_MUTANT(18) && el->crumb_fresh) &&
	    el_arm_crumb(el, act))
		return;
	if (!el->marks_for_claim) {
		el->marks_for_claim = 1;
		el->marks_fresh = 0;
		el->yield_listed = 0;
	}
	if (el_read_marks(el, act))
		return;
	el_claim_build(el, act, heir);
	el_act_zk(el, act, EL_OP_CLAIM, NULL);
}

/* What our claim asks for next (a listing, a watch); 1 if one went out. */
static int
el_next_claim_fact(struct election *el, struct el_action *act)
{
	enum el_op op = el_claim_want(&el->cl, act);

	if (op == EL_OP_NONE)
		return 0;
	el_act_zk(el, act, op, act->path);
	return 1;
}

/*
 * The heir: our predecessor is the head and leads (E/leader names its
 * node, as el_pred_head() reads it), so it holds the first claim, and a
 * claim we make now comes after its own.
 */
static int
el_heir(const struct election *el)
{
	return el->pred_head && el->pred_czxid != 0 && el->leader_fresh &&
	    el->leader_exists && el->leader_owner == el->pred_owner &&
	    el->leader_epoch == el->pred_czxid;
}

/*
 * The heir prepares while its predecessor leads: its claim made and
 * placed, the claim before it watched, the breadcrumb watched and the
 * markers read, so that the release is the one thing it waits for.
 */
static void
el_next_heir(struct election *el, struct el_action *act)
{
	if (EL_MUTANT(12))
		return;
	if (!el->cl.have) {
		if (el_heir(el))
			el_next_claim(el, act, 1);
		return;
	}
	if (el_next_claim_fact(el, act) || el_read_marks(el, act))
		return;
	(void)el_watch_crumb(el, act);
}

/*
 * The head: 1 while the first claim is not ours (made, placed, or waited
 * for with a watch on the claim before ours).
 */
static int
el_next_right(struct election *el, struct el_action *act)
{
	if (EL_MUTANT(60) && el->cl.have && el->cl.heir)
		return 0;
	if (!el->cl.have) {
		el_next_claim(el, act, 0);
		return 1;
	}
	if (el_claim_ready(&el->cl))
		return 0;
	(void)el_next_claim_fact(el, act);
	return 1;
}

/*
 * The parents, then our node: 1 while they are what there is to do (an
 * action in act, or none while we wait).
 */
static int
el_next_join(struct election *el, struct el_action *act)
{
	if (!el->parents_done) {
		el_act_zk(el, act, EL_OP_PARENT, el->parents[el->parent_idx]);
		return 1;
	}
	/* E/claims or E/priority, found missing when first needed. */
	if (el->lazy_parent != NULL) {
		el_act_zk(el, act, EL_OP_PARENT, el->lazy_parent);
		return 1;
	}
	if (el->node != NULL)
		return 0;
	if (el->create_unknown && !el->listed) {
		/*
		 * A sync first: a server behind the quorum could lack the
		 * node the lost create made.
		 */
		if (el->synced || EL_MUTANT(11))
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return 1;
	}
	free(el->create_path);
	(void)xasprintf(&el->create_path, "%s/" EL_PREFIX "%016llx_",
	    el->cand_dir, (unsigned long long)el->sid);
	el_act_zk(el, act, EL_OP_CREATE, el->create_path);
	act->data = el->create_data;
	return 1;
}

/* The head, not leading yet: the promotion when it may come. */
static void
el_next_promote(struct election *el, struct el_action *act)
{
	/* Wait for the previous leader to withdraw its acknowledgement. */
	if (el->leader_exists && el->leader_owner != el->sid &&
	    !(EL_MUTANT(60) && el->cl.have && el->cl.heir))
		return;
	/*
	 * Never on facts the lease does not cover, nor with so little of it
	 * left that the promote would be killed as it starts (a connection
	 * that keeps breaking lets no confirmation pair up): the keepalive
	 * renews a lease every T/6.
	 */
	if (el->now + el->timeout_ms / EL_PROMOTE_ROOM_DIV >= (EL_MUTANT(28) ?
	    el_lease_end(el) : el_demote_point(el)) && !EL_MUTANT(9))
		return;
	if (!EL_MUTANT(12) && el_next_right(el, act))
		return;
	if (el_watch_crumb(el, act))
		return;
	if (el_yield(el, act))
		return;
	if (el->fence_configured && !el->fenced && el->crumb_exists &&
	    el->crumb_epoch != el->epoch) {
		(void)el_take_slot(el, act, HOOK_FENCE, "elected");
		return;
	}
	if (el_take_slot(el, act, HOOK_PROMOTE, "elected") &&
	    act->type == EL_ACT_HOOK) {
		el->lead_epoch = el->epoch;
		el->lost_reason = NULL;
	}
}

/* Our place in the queue, and the promotion when it comes. */
static void
el_next_queue(struct election *el, struct el_action *act)
{
	if (el_next_join(el, act))
		return;
	if (!el->node_ok) {
		el_act_zk(el, act, EL_OP_WATCH_OWN, el->node_path);
		return;
	}
	if (el->data_dirty && (el->hook == -1 || el->hook == HOOK_CHECK)) {
		/* The breadcrumb it rewrites may be gone (deleted by hand). */
		if (el->acked && el_owns_leader(el) &&
		    el_need_crumb(el, act))
			return;
		el_build_set_data(el, act);
		el->data_sent_gen = el->data_gen;
		el_act_zk(el, act, EL_OP_SET_DATA, NULL);
		return;
	}
	if (!el->listed) {
		el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return;
	}
	/* After a lost reply, is there a claim of ours? */
	if (!el->cl.known) {
		el_act_zk(el, act, EL_OP_CLAIMS, el->cl.dir);
		return;
	}
	/*
	 * A claim of ours while we are neither the head nor the heir is an
	 * orphan: it goes. (Places only improve, so it cannot happen but by
	 * a defect; a listing tells where we stand.)
	 */
	if (!el->first && el->cl.have && !el->pred_head &&
	    !el_leading(el) && !EL_MUTANT(4)) {
		el->release_pending = 1;
		el->release_why = "preempted";
		return;
	}
	if (!el->first) {
		if (!el->pred_watched)
			el_act_zk(el, act, EL_OP_WATCH_PRED, el->pred_path);
		else
			el_next_heir(el, act);
		return;
	}
	if (el_promoted(el)) {
		if (!el->acked && el->hook == -1) {
			if (el_need_crumb(el, act))
				return;
			el_build_ack(el, act);
			el_act_zk(el, act, EL_OP_ACK, NULL);
		}
		return;
	}
	if (!el_leading(el))
		el_next_promote(el, act);
}

/*
 * A switchover: the leader is first, so the nodes between it and the
 * target are of candidates that lead nothing; deleting them is what an
 * operator's delete does, and their owners rejoin behind the target. Once
 * the target is next, the ordered release hands over to it, as a resign
 * would to whoever is next. Whatever fails or dies on the way, the queue
 * order decides, as always (see "Why always a leader").
 */
static int
el_next_switchover(struct election *el, struct el_action *act)
{
	int i;

	if (el->sw_phase == 0)
		return 0;
	if (election_role(el) != ROLE_LEADER || el->release_pending ||
	    el->resigning) {
		el_switch_clear(el, "leadership-lost");
		return 0;
	}
	if (el->sw_phase == 1) {
		el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return 1;
	}
	if (el->sw_nbetween > 0) {
		act->nsub = 0;
		for (i = 0; i < el->sw_nbetween; i++)
			el_sub(act, ZK_MOP_DELETE, el->sw_between[i], NULL);
		el_act_zk(el, act, EL_OP_SW_DELETE, NULL);
		return 1;
	}
	/* The target is next: the ordered handoff starts now. */
	el_switch_clear(el, NULL);
	el->resigning = 1;
	el->sw_handing = 1;
	el->release_pending = 1;
	el->release_why = "switchover";
	election_next(el, act);
	return 1;
}

static void
el_next_zk(struct election *el, struct el_action *act)
{
	/*
	 * E/leader is always watched. Its deletion is known from the
	 * notification: only the watch is set again (an exists, answered
	 * beside anything else in flight); any other change is read.
	 */
	if (!el->leader_armed && !(EL_MUTANT(17) && el->leader_fresh)) {
		el->leader_armed = 1;
		el_act_zk_pipe(el, act, el->leader_check || (el->leader_fresh &&
		    !el->leader_exists) ? EL_OP_LEADER_EXISTS : EL_OP_LEADER,
		    el->leader_path, 1);
		return;
	}
	if (!el->leader_fresh || el_pipe_busy(el))
		return;
	if (el_next_switchover(el, act))
		return;
	/*
	 * An acknowledgement or claim of ours with no node of ours behind
	 * it (the node was deleted after a demote) would make the next head
	 * wait forever: it goes. A node not known yet (a lost create, a
	 * resumed session) is looked for first.
	 */
	if (!el->release_pending && (el_owns_leader(el) || el->cl.have ||
	    !el->cl.known) && !el_leading(el) && el->node == NULL &&
	    !el->create_unknown && !EL_MUTANT(4))
		el->release_pending = 1;
	if (el->release_pending) {
		el_next_release(el, act);
		return;
	}
	/* An unsure marker is settled first, then E/priority listed. */
	if (el->marks_unknown && el->parents_done && !EL_MUTANT(33) &&
	    !el_pipe_has(el, EL_OP_MARKS) &&
	    !(el->mark_unsure && el->mark_have != NULL)) {
		el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return;
	}
	if (el_next_mark(el, act))
		return;
	/* A leader's markers, to know whether anyone may outrank it. */
	if (el_preempt_on(el) && el_preempt_outranked(el) < 0 &&
	    el->parents_done && !el_pipe_has(el, EL_OP_MARKS)) {
		el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return;
	}
	if (el_want_join(el))
		el_next_queue(el, act);
}

/* The health check has the slot when nothing else wants it. */
static void
el_next_check(struct election *el, struct el_action *act)
{
	if (el->check_configured && !el->stopping && el->check_due != 0 &&
	    el->now >= el->check_due &&
	    (el->hook == -1 || (EL_MUTANT(5) && el->hook != HOOK_CHECK))) {
		el->check_due = el->now + el->check_interval_ms;
		el_act_hook(el, act, HOOK_CHECK, "health");
	}
}

/*
 * A preemption due (election_preempt.c): the switchover to the candidate
 * that outranks us starts. Why an operator's switchover was given up, if
 * it was in this very step, is still to be told (election_switchover_
 * failed()). What the action points to goes at the next call.
 */
static int
el_next_preempt_go(struct election *el, struct el_action *act)
{
	const char *why = el->sw_failed;

	if (!el->pre_go || !el_preempt_on(el))
		return 0;
	el->pre_go = 0;
	if (election_switchover(el, el->pre_node, "preempted") == -1) {
		el_preempt_forget(el);
		return 0;
	}
	el->sw_failed = why;
	el_preempt_act(el, act, EL_ACT_PREEMPT);
	return 1;
}

/* What the checks decided, once every fact is read back. */
static void
el_resume_decide(struct election *el)
{
	el->resume_check = 0;
	if (el_promoted(el)) {
		if (!el->cl.have && !EL_MUTANT(30))
			el->lost_reason = "preempted";
		return;
	}
	/*
	 * A promote, fence or demote was under way: its outcome is unknown.
	 * A claim that is not first (an heir's, prepared) was never
	 * promoted on: a claim once first stays first.
	 */
	if ((el->cl.have && el->cl.first) || el_owns_leader(el))
		el->startup_demote = 1;
}

/*
 * Called by election_next() before it decides: takes the resume's checks
 * one step further. It acts only through the state it sets.
 */
static void
el_resume_next(struct election *el)
{
	if (!el->resume_check)
		return;
	/* A hook decided on it meanwhile (a demote, whatever asked). */
	if (el->hook != -1 && el->hook != HOOK_CHECK) {
		el->resume_check = 0;
		return;
	}
	/* Stopped before it knew: as a start would have. */
	if (el->stopping && !el_promoted(el) && !el->resume_exact) {
		el->resume_check = 0;
		el->startup_demote = el->resume_demote;
		return;
	}
	if (el_promoted(el) && el_lease_short(el)) {
		/* Not confirmed in time: demoted as at a start. */
		el->resume_check = 0;
		el->lost_reason = "startup";
		return;
	}
	if (!el_promoted(el) && !el->resume_exact && el_lease_short(el) &&
	    !EL_MUTANT(31)) {
		/* Not confirmed in time: as a start would. */
		el->resume_check = 0;
		el->startup_demote = el->resume_demote;
		return;
	}
	if (el->zk != EL_ZK_CONNECTED || el->create_unknown)
		return;
	/* The listing found no node of ours: the leadership is gone. */
	if (el_promoted(el) && el->node == NULL && !EL_MUTANT(30))
		el_node_lost(el);
	if (!el->leader_fresh || !el->cl.known ||
	    (el->node != NULL && !el->node_ok))
		return;
	el_resume_decide(el);
}

/*
 * A demote comes first: it never waits for ZooKeeper. 1 when the hook slot
 * has a demote (or the kill of what stands in its way) to start.
 */
static int
el_next_demote(struct election *el, struct el_action *act)
{
	const char *reason;

	if (el->startup_demote && el->hook == -1) {
		el->startup_demote = 0;
		el->lead_epoch = 0;
		el_act_hook(el, act, HOOK_DEMOTE, "startup");
		return 1;
	}
	/* A resume's, decided while a check ran: the check makes way. */
	if (el->startup_demote && el->hook == HOOK_CHECK &&
	    !el->hook_cancelled) {
		el_act_cancel(el, act, 0);
		return 1;
	}
	if (el_promoted(el) && (reason = el_demote_reason(el)) != NULL) {
		if (el->hook == -1) {
			el_go(el, EL_ST_DEMOTING, reason);
			el->lost_reason = NULL;
			el->conn_lost = 0;
			el->grace_until = 0;
			el_act_hook(el, act, HOOK_DEMOTE, reason);
			return 1;
		}
		/*
		 * The slot is a check being killed: nothing else until the
		 * demote starts (past the demote point nothing may go to
		 * ZooKeeper in the leader's name, issue 19.6).
		 */
		(void)el_take_slot(el, act, HOOK_DEMOTE, reason);
		return 1;
	}
	/* A promote or fence may not outlive the lease: it is killed. */
	if ((el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE) &&
	    !el->hook_cancelled && el_lease_short(el)) {
		el_act_cancel(el, act, 0);
		return 1;
	}
	return 0;
}

/* The operators' answers: stopped, paused, resigned. 1 when one is due. */
static int
el_next_answer(struct election *el, struct el_action *act)
{
	if (el->stopping && (el->hook == -1 || el->hook == HOOK_CHECK) &&
	    !el_promoted(el) && !el->startup_demote &&
	    (!el->release_pending || el->zk != EL_ZK_CONNECTED)) {
		/* The end is the state's alone: no flag says it. */
		el_settle(el);
		el_go(el, EL_ST_STOPPED, "handoff done");
		act->type = EL_ACT_STOPPED;
		return 1;
	}
	if (el->pause_reply && (el->hook == -1 || el->hook == HOOK_CHECK) &&
	    !el_promoted(el) && !el->release_pending) {
		el->pause_reply = 0;
		act->type = EL_ACT_PAUSED;
		return 1;
	}
	/* A resign is done too when the rejoin it promised is not wanted. */
	if (el->resigning == 2 && (el->paused || el->unhealthy ||
	    el->stopping || el->observer))
		el->resign_reply = 1;
	if (el->resign_reply) {
		el->resign_reply = 0;
		el->resigning = 0;
		act->type = EL_ACT_RESIGNED;
		return 1;
	}
	return 0;
}

/* What to do now, in order of urgency. */
static void
el_decide(struct election *el, struct el_action *act)
{
	if (el->state == EL_ST_STOPPED)
		return;
	el_resume_next(el);
	if (el_next_demote(el, act) || el_next_answer(el, act))
		return;
	if (el->restart) {
		if (!el->restart_sent && el->now >= el->restart_at) {
			el->restart_sent = 1;
			act->type = EL_ACT_RESTART;
		} else
			el_next_check(el, act);
		return;
	}
	if (el_sync_due(el)) {
		el->sync_inflight = 1;
		el->sync_sent = el->now;
		el->sync_conn = el->conn_gen;
		act->type = EL_ACT_ZK;
		act->op = EL_OP_SYNC;
		act->path = "/";
		return;
	}
	if (el_next_preempt_go(el, act) ||
	    el_next_preempt(el, act, el_preempt_on(el)))
		return;
	if (el->npipe < EL_PIPE_MAX && el->zk == EL_ZK_CONNECTED &&
	    el->retry_until == 0) {
		el_next_zk(el, act);
		if (act->type != EL_ACT_NONE)
			return;
	}
	el_next_check(el, act);
}

/* The cause of the state change an action makes, for the log. */
static const char *
el_act_cause(const struct election *el, const struct el_action *act)
{
	switch (act->type) {
	case EL_ACT_HOOK:
		return act->reason != NULL ? act->reason : "check";
	case EL_ACT_ZK:
		if (act->op == EL_OP_RELEASE && el->release_why != NULL)
			return el->release_why;
		return election_op_name(act->op);
	case EL_ACT_CANCEL:
		return "hook cancelled";
	case EL_ACT_RESTART:
		return "session restart";
	case EL_ACT_STOPPED:
		return "handoff done";
	case EL_ACT_RESIGNED:
		return "resigned";
	case EL_ACT_PAUSED:
		return "paused";
	case EL_ACT_PREEMPT:
		return "preempted";
	case EL_ACT_NONE:
	case EL_ACT_QUEUE:
	case EL_ACT_OUTRANKED:
	case EL_ACT_TRANSITION:
		break;
	}
	return el->cause;
}

/* The oldest state change not reported yet, if any. */
static int
el_next_transition(struct election *el, struct el_action *act)
{
	if (el->ntrans == 0)
		return 0;
	act->type = EL_ACT_TRANSITION;
	act->from = el->trans[0].from;
	act->to = el->trans[0].to;
	act->reason = el->trans[0].cause;
	act->unlisted = el->trans[0].unlisted;
	el->ntrans--;
	memmove(&el->trans[0], &el->trans[1], (size_t)el->ntrans *
	    sizeof(el->trans[0]));
	return 1;
}

/*
 * The state is settled before the decision (what the events did) and
 * after it (what the decision did); its changes go out first.
 */
void
election_next(struct election *el, struct el_action *act)
{
	memset(act, 0, sizeof(*act));
	act->type = EL_ACT_NONE;
	el_settle(el);
	if (el_next_transition(el, act))
		return;
	/*
	 * A decision of nothing to do that changed the state ends the step
	 * after its report, as it would have without it.
	 */
	if (el->none_reported) {
		el->none_reported = 0;
		return;
	}
	el_decide(el, act);
	if (act->type != EL_ACT_NONE)
		el->cause = el_act_cause(el, act);
	el_settle(el);
	if (act->type == EL_ACT_NONE && el_next_transition(el, act))
		el->none_reported = 1;
}

struct election *
election_new(const struct election_params *p)
{
	struct election *el;
	const char *s;
	size_t len;

#ifdef EL_MUTANTS
	if ((s = getenv("ZKELECT_MUTANT")) != NULL)
		el_mutant = atoi(s);
#endif
	el = xcalloc(1, sizeof(*el));
	el->path = xstrdup(p->path);
	(void)xasprintf(&el->cand_dir, "%s/candidates", p->path);
	(void)xasprintf(&el->leader_path, "%s/leader", p->path);
	(void)xasprintf(&el->crumb_path, "%s/breadcrumb", p->path);
	(void)xasprintf(&el->prio_dir, "%s/priority", p->path);
	/* Every ancestor of E/candidates, top down. */
	for (s = el->cand_dir + 1; el->nparents < EL_MAX_DEPTH; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		len = (size_t)(s - el->cand_dir);
		el->parents[el->nparents++] = xstrndup(el->cand_dir, len);
		if (*s == '\0')
			break;
	}
	el_claim_init(&el->cl, p->path);
	el->nbase = el->nparents;
	el->parents[el->nbase] = xstrdup(el->prio_dir);
	el->id = xstrdup(p->id);
	el->data = xstrdup(p->data);
	el->priority = p->priority;
	el->nparents = el->nbase + (el->priority != 0);
	el_make_data(el);
	el->leader_id = xstrdup("");
	el->leader_data = xstrdup("");
	el->crumb_id = xstrdup("");
	el->crumb_data = xstrdup("");
	el->observer = p->observer;
	el->startup_demote = p->demote_on_start;
	el->timeout_ms = p->session_timeout_ms > 0 ? p->session_timeout_ms :
	    10000;
	election_reconfigure(el, p);
	el->zk = EL_ZK_CONNECTING;
	el->hook = -1;
	el_state_init(el);
	el->cause = "start";
	el->answered_sent = INT64_MIN;
	return el;
}

void
election_free(struct election *el)
{
	int i;

	if (el == NULL)
		return;
	for (i = 0; i <= el->nbase; i++)
		free(el->parents[i]);
	free(el->prio_dir);
	free(el->mark_have);
	free(el->mark_path);
	free(el->mark_sid);
	free(el->mark_prio);
	free(el->behind);
	free(el->path);
	free(el->cand_dir);
	free(el->leader_path);
	free(el->crumb_path);
	el_claim_free(&el->cl);
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
	el_switch_clear(el, NULL);
	el_preempt_forget(el);
	free(el->ahead);
	free(el);
}
