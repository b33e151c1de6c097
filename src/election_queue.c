/*
 * Our place in the queue, the claim and the promotion, the release and a
 * switchover we lead: the ZooKeeper requests of the recipe that
 * election.c's header describes, decided by el_next_zk().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

static int
el_want_join(const struct election *el)
{
	return el_may_queue(el) && !el->release_pending &&
	    el->resigning != 1;
}

/*
 * A release in progress: what we own goes, after any hook is over.
 * EL_AGAIN when there was nothing left to delete: it is done.
 */
static int
el_next_release(struct election *el, struct el_action *act)
{
	if (el_lead_hook(el) || el_promoted(el))
		return 0;
	/*
	 * A resumed session releasing (a pause that came with the resume)
	 * first learns its marker, so that the release takes it along.
	 */
	if (el->marks_unknown && el->mark_have == NULL && !EL_MUTANT(33)) {
		if (!el_pipe_has(el, EL_OP_MARKS))
			el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return 0;
	}
	if (el->node == NULL && el->create_unknown && !EL_MUTANT(3)) {
		/* Find the node a lost create may have made, to delete it. */
		if (EL_MUTANT(161) ? !el->listed : (el->synced && !el->listed))
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return 0;
	}
	if (el_need_crumb(el, act))
		return 0;
	/* Which claim is ours, if a reply was lost or it was not listed. */
	if (!el->cl.known || (el->cl.have && el->cl.path == NULL)) {
		el_act_zk(el, act, EL_OP_CLAIMS, el->cl.dir);
		return 0;
	}
	if (el->node_path != NULL && !el->node_ok) {
		el_act_zk(el, act, EL_OP_WATCH_OWN, el->node_path);
		return 0;
	}
	el_build_release(el, act);
	/*
	 * A marker a lost release may have left goes on its own (NONODE is
	 * fine), but last, once nothing else of ours is left: never our node
	 * without its marker, or a head of negative priority would take us
	 * for priority 0 and yield to us. A marker without a node moves no
	 * one: a yield needs the node behind it.
	 */
	if ((act->nsub == 0 || EL_MUTANT(83)) && el->mark_unsure &&
	    el->mark_have != NULL) {
		el_unmark(el, act, el->mark_have);
		return 0;
	}
	if (act->nsub == 0) {
		el_release_done(el);
		return EL_AGAIN;
	}
	el_act_zk(el, act, EL_OP_RELEASE, NULL);
	act->reason = el->release_why;	/* why we leave */
	return 0;
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
	    el->leader_epoch == el->pred_czxid && !EL_MUTANT(108);
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
 * The head (or the leader) finds its claim behind one of a candidate
 * behind it: the heir's, prepared while we led, before our claim was
 * deleted by hand and made again. Neither would ever be first: the heir
 * waits for our node, we for its claim. It is no one's right to lead: its
 * session cannot be the head while our node, made before its own, exists
 * (the multi checks it does), and a session releases its claim before it
 * queues again, so the claim was made with the node behind us. So we
 * delete it; its owner, watching its own claim, prepares again behind
 * ours. 1 if a request went out.
 */
static int
el_next_unclaim(struct election *el, struct el_action *act)
{
	int i, behind = 0;

	if (!el->first || !el->cl.listed || el->cl.first ||
	    el->cl.pred == NULL || EL_MUTANT(90))
		return 0;
	/*
	 * The head before us, whose node we saw go: its claim goes in the
	 * same transaction (a release, an expiry), or it is an orphan whose
	 * promote may still run (its node deleted by hand). Waited for.
	 */
	if (el->cl.pred_sid == el->cl.gone_sid || el->cl.pred_sid == 0)
		return 0;
	for (i = 0; i < el->nbehind; i++)
		if (el->behind[i] == el->cl.pred_sid && el->cl.pred_sid != 0)
			behind = 1;
	/*
	 * Its session not behind us in our last listing: a node made since
	 * (behind us too), or none (an orphan, waited for). Listed once to
	 * tell.
	 */
	if (!behind && !el->cl.queue_relisted) {
		el->cl.queue_relisted = 1;
		el->listed = 0;
		el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return 1;
	}
	if (!behind)
		return 0;
	act->nsub = 0;
	el_sub(act, ZK_MOP_CHECK, el->node_path, NULL);
	el_sub(act, ZK_MOP_DELETE, el->cl.pred, NULL);
	el_act_zk(el, act, EL_OP_UNCLAIM, NULL);
	return 1;
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
	if (el_next_unclaim(el, act))
		return 1;
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

/*
 * The head, not leading yet: the promotion when it may come. EL_AGAIN
 * when it yields instead (el_yield()).
 */
static int
el_next_promote(struct election *el, struct el_action *act)
{
	int rc;

	/* Wait for the previous leader to withdraw its acknowledgement. */
	if (el->leader_exists && el->leader_owner != el->sid &&
	    !(EL_MUTANT(60) && el->cl.have && el->cl.heir))
		return 0;
	/*
	 * Never on facts the lease does not cover, nor with so little of it
	 * left that the promote would be killed as it starts (a connection
	 * that keeps breaking lets no confirmation pair up): the keepalive
	 * renews a lease every T/6.
	 */
	if (el->now + (EL_MUTANT(164) ? 0 : el->timeout_ms /
	    EL_PROMOTE_ROOM_DIV) >= (EL_MUTANT(28) ? el_lease_end(el) :
	    el_demote_point(el)) && !EL_MUTANT(9))
		return 0;
	if (!EL_MUTANT(12) && el_next_right(el, act))
		return 0;
	if (el_watch_crumb(el, act))
		return 0;
	/*
	 * The breadcrumb as it was when our claim was first, or later:
	 * a view from before may lack what a leader wrote since (see (7)).
	 * first_seq is current: el_settle() ran before this decision.
	 */
	if (el->crumb_seq <= el->first_seq && !EL_MUTANT(86)) {
		(void)el_arm_crumb(el, act);
		return 0;
	}
	if ((rc = el_yield(el, act)) != 0)
		return rc;
	if (el->fence_configured && !el->fenced && el->crumb_exists &&
	    el->crumb_epoch != el->epoch) {
		/*
		 * A fence is for a predecessor that left without its
		 * release. A view from before the step that let us lead
		 * (our node first, E/leader gone) may show a breadcrumb
		 * that step's release deleted last, its claim gone before
		 * (by hand): it is read again (sim -W -L -R -A 2334000078).
		 */
		if (el->crumb_seq <= el->gone_seq && !EL_MUTANT(144)) {
			(void)el_arm_crumb(el, act);
			return 0;
		}
		(void)el_take_slot(el, act, HOOK_FENCE, "elected");
		return 0;
	}
	if (el_take_slot(el, act, HOOK_PROMOTE, "elected") &&
	    act->type == EL_ACT_HOOK) {
		el->lead_epoch = el->epoch;
		el->lost_reason = NULL;
	}
	return 0;
}

/*
 * Our place in the queue, and the promotion when it comes (EL_AGAIN: see
 * el_next_promote()).
 */
static int
el_next_queue(struct election *el, struct el_action *act)
{
	if (el_next_join(el, act))
		return 0;
	if (!el->node_ok) {
		el_act_zk(el, act, EL_OP_WATCH_OWN, el->node_path);
		return 0;
	}
	if (el->data_dirty && !el_lead_hook(el)) {
		/* The breadcrumb it rewrites may be gone (deleted by hand). */
		if (el->acked && el_owns_leader(el) &&
		    el_need_crumb(el, act))
			return 0;
		el_build_set_data(el, act);
		el->data_sent_gen = el->data_gen;
		el_act_zk(el, act, EL_OP_SET_DATA, NULL);
		return 0;
	}
	if (!el->listed) {
		el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		return 0;
	}
	/* After a lost reply, is there a claim of ours? */
	if (!el->cl.known) {
		el_act_zk(el, act, EL_OP_CLAIMS, el->cl.dir);
		return 0;
	}
	/*
	 * A claim of ours while we are neither the head nor the heir is an
	 * orphan: it goes. (Places only improve, so it cannot happen but by
	 * a defect; a listing tells where we stand.)
	 */
	if (!el->first && el->cl.have && !el->pred_head &&
	    !el_leading(el) && !EL_MUTANT(4)) {
		el_release_ask(el, "preempted");
		return 0;
	}
	if (!el->first) {
		if (!el->pred_watched)
			el_act_zk(el, act, EL_OP_WATCH_PRED, el->pred_path);
		else
			el_next_heir(el, act);
		return 0;
	}
	if (el_promoted(el)) {
		if (!el->acked && el->hook == -1) {
			/*
			 * E/leader and the breadcrumb are written only
			 * with the first claim (see (6), (7)): ours deleted
			 * by hand and made again behind a heir's is placed
			 * first (el_next_unclaim()) before the ack.
			 */
			if (!el_claim_ready(&el->cl) && !EL_MUTANT(12) &&
			    !EL_MUTANT(119)) {
				if (!el_lease_short(el))
					(void)el_next_right(el, act);
				return 0;
			}
			if (el_need_crumb(el, act))
				return 0;
			el_build_ack(el, act);
			el_act_zk(el, act, EL_OP_ACK, NULL);
		} else if (el->acked && !el_claim_ready(&el->cl) &&
		    !el_lease_short(el) && !EL_MUTANT(89))
			(void)el_next_right(el, act);
		return 0;
	}
	if (!el_leading(el))
		return el_next_promote(el, act);
	/*
	 * Our claim deleted by hand while we promote (or fence, or lead,
	 * above): made again and placed first (el_next_unclaim()). Else our
	 * node deleted by hand too would leave a successor nothing to wait
	 * for, and a restart after a crash nothing that says a promote may
	 * have run (el_resume_decide()). Never past the demote point:
	 * nothing goes out in a leader's name then (issue 19.6).
	 */
	if (!el_claim_ready(&el->cl) && !el_lease_short(el) && !EL_MUTANT(89))
		(void)el_next_right(el, act);
	return 0;
}

/*
 * A switchover: the leader is first, so the nodes between it and the
 * target are of candidates that lead nothing; deleting them is what an
 * operator's delete does, and their owners rejoin behind the target. Once
 * the target is next, the ordered release hands over to it, as a resign
 * would to whoever is next. Whatever fails or dies on the way, the queue
 * order decides, as always (see "Why always a leader"). 1 when a request
 * went out, EL_AGAIN when the release starts.
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
	el->sw_handing = !EL_MUTANT(113);
	el_release_ask(el, "switchover");
	return EL_AGAIN;
}

/*
 * The next request of the recipe, if any; EL_AGAIN when what it set
 * (a release) is to be decided on at once.
 */
int
el_next_zk(struct election *el, struct el_action *act)
{
	const char *path;
	int rc;

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
		return 0;
	}
	/*
	 * Our claim is watched too: one deleted by hand is made again
	 * (el_claim_watch()), never taken for the right to lead.
	 */
	if (!el->release_pending && (path = el_claim_own_want(&el->cl)) !=
	    NULL) {
		el_act_zk_pipe(el, act, EL_OP_CLAIM_OWN, path, 1);
		return 0;
	}
	/*
	 * And our priority marker: one deleted by hand is made again, or
	 * whoever reads the markers takes us for priority 0 for good.
	 */
	if (!el->release_pending && el->mark_have != NULL &&
	    !el->mark_unsure && (el->mark_watch == NULL ||
	    strcmp(el->mark_watch, el->mark_have) != 0) && !EL_MUTANT(91)) {
		el_replace(&el->mark_watch, el->mark_have);
		el_act_zk_pipe(el, act, EL_OP_MARK_OWN, el->mark_watch, 1);
		return 0;
	}
	if (!el->leader_fresh || el_pipe_busy(el))
		return 0;
	if (el_next_mark_extra(el, act))
		return 0;
	if ((rc = el_next_switchover(el, act)) != 0)
		return rc == EL_AGAIN ? EL_AGAIN : 0;
	/*
	 * An acknowledgement or claim of ours with no node of ours behind
	 * it (the node was deleted after a demote) would make the next head
	 * wait forever: it goes. A node not known yet (a lost create, a
	 * resumed session) is looked for first.
	 */
	if (!el->release_pending && (el_owns_leader(el) || el->cl.have ||
	    !el->cl.known) && !el_leading(el) && el->node == NULL &&
	    !el->create_unknown && !EL_MUTANT(4))
		el_release_ask(el, NULL);
	if (el->release_pending)
		return el_next_release(el, act);
	/*
	 * An unsure marker is settled first, then E/priority listed: once
	 * the parents are made, or at once by a daemon that will not make
	 * them (paused, unhealthy: a marker a lost create left must not stay
	 * for as long as it stays out; a NONODE says there is none).
	 */
	if (el->marks_unknown && (el->parents_done || !el_may_queue(el)) &&
	    !EL_MUTANT(33) &&
	    !el_pipe_has(el, EL_OP_MARKS) &&
	    !(el->mark_unsure && el->mark_have != NULL)) {
		el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return 0;
	}
	if (el_next_mark(el, act))
		return 0;
	/* A leader's markers, to know whether anyone may outrank it. */
	if (el_preempt_on(el) && el_preempt_outranked(el) < 0 &&
	    el->parents_done && !el_pipe_has(el, EL_OP_MARKS)) {
		el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
		return 0;
	}
	if (el_want_join(el))
		return el_next_queue(el, act);
	return 0;
}
