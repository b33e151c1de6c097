/*
 * What an action carries, built for the decisions (election_mark.c,
 * election_queue.c, election_next.c): a ZooKeeper request (and its place
 * in the pipeline), a read of the breadcrumb, a hook or its cancel, the
 * multis of the ack, the release and new data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

/* A request in flight that what follows must wait for. */
int
el_pipe_busy(const struct election *el)
{
	int i;

	for (i = 0; i < el->npipe; i++)
		if (!el->pipe[i].bg)
			return 1;
	return 0;
}

void
el_act_zk_pipe(struct election *el, struct el_action *act, enum el_op op,
    const char *path, int bg)
{
	act->type = EL_ACT_ZK;
	act->op = op;
	act->path = path;
	el->pipe[el->npipe].op = op;
	el->pipe[el->npipe].sent = el->now;
	el->pipe[el->npipe].bg = bg;
	el->pipe[el->npipe].crumb = el->crumb_write;
	el->crumb_write = EL_CRUMB_NONE;
	el->npipe++;
}

/* A request the next decision waits for. */
void
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
int
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
int
el_watch_crumb(struct election *el, struct el_action *act)
{
	if (!el->crumb_armed && !(EL_MUTANT(18) && el->crumb_fresh) &&
	    el_arm_crumb(el, act))
		return 1;
	return !el->crumb_fresh;
}

/* The breadcrumb, unless known: 1 while it is not (a decision waits). */
int
el_need_crumb(struct election *el, struct el_action *act)
{
	(void)el_read_crumb(el, act);
	return !el->crumb_fresh;
}

void
el_act_hook(struct election *el, struct el_action *act, enum hook_kind kind,
    const char *reason)
{
	act->type = EL_ACT_HOOK;
	act->hook = kind;
	act->reason = reason;
	el->hook = (int)kind;
	el->hook_gen = el->node_gen;
	el->hook_cancelled = 0;
	/*
	 * The application may lead from now (or, a demote, until its end):
	 * the session file stops saying it is down (election_view()).
	 */
	if (kind == HOOK_DEMOTE || kind == HOOK_FENCE ||
	    (kind == HOOK_PROMOTE && !EL_MUTANT(167)))
		el->down = 0;
	switch (kind) {
	case HOOK_PROMOTE:
	case HOOK_FENCE:
		act->ms = el->hook_timeout_ms;
		act->epoch = el->epoch;
		/* The claim it rests on (el_claim_ready()), for a restart. */
		if (el->cl.node != NULL) {
			el->lead_claimed = 1;
			el->lead_claim_seq = el->cl.seq;
		}
		break;
	case HOOK_DEMOTE:
		act->ms = election_demote_budget(el, el->demote_ms, NULL);
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
void
el_act_cancel(struct election *el, struct el_action *act, int64_t grace_ms)
{
	act->type = EL_ACT_CANCEL;
	act->hook = (enum hook_kind)el->hook;
	act->ms = grace_ms;
	el->hook_cancelled = 1;
}

void
el_sub(struct el_action *act, enum zk_mop_kind kind, const char *path,
    const char *data)
{
	act->sub[act->nsub].kind = kind;
	act->sub[act->nsub].path = path;
	act->sub[act->nsub].data = data;
	act->sub[act->nsub].version = -1;
	act->nsub++;
}

/*
 * The release deletes the node or the claim our breadcrumb was written
 * under: a node of ours that was first when we led, or a claim that was
 * the first, exists at the multi only if it existed all along (their
 * names are never made again), and while it did no other candidate was
 * first, so none led and wrote a breadcrumb of its own.
 */
static int
el_crumb_guarded(const struct election *el)
{
	if (el->node_path != NULL && el->epoch != 0 &&
	    el->epoch == el->crumb_node_epoch)
		return 1;
	return el->cl.have && el->cl.path != NULL &&
	    (EL_MUTANT(152) ? el->crumb_claim_seq > 0 :
	    el->crumb_claim_seq >= 0) && el->cl.seq == el->crumb_claim_seq;
}

void
el_build_release(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	if (el_owns_leader(el))
		el_sub(act, ZK_MOP_DELETE, el->leader_path, NULL);
	/*
	 * Ours, as read: a read from a server behind the quorum could show
	 * ours where a successor has written its own since. The version
	 * makes the multi fail then, and it is read again; but not once
	 * ours was deleted and a successor made its own, at version 0
	 * again. So only while the leadership that wrote it is not yet
	 * released, in this session (crumb_mine), and only beside the
	 * delete of the node or the claim it was written under
	 * (el_crumb_guarded()): while either exists no one else can have
	 * led since, and a read made before a long stall cannot delete a
	 * successor's.
	 */
	el->release_crumb = el->crumb_exists && el->lead_epoch != 0 &&
	    el->crumb_epoch == el->lead_epoch &&
	    el->crumb_mine &&
	    (el_crumb_guarded(el) || EL_MUTANT(100));
	if (el->node_path != NULL)
		el_sub(act, ZK_MOP_DELETE, el->node_path, NULL);
	/*
	 * Our priority marker goes with our node, so that no head sees it
	 * without the node; it is made again before the next node.
	 */
	el->release_marked = (act->nsub > 0 || el->cl.have ||
	    el->release_crumb) &&
	    el->mark_have != NULL && (EL_MUTANT(158) || !el->mark_unsure);
	if (el->release_marked)
		el_sub(act, ZK_MOP_DELETE, el->mark_have, NULL);
	/*
	 * Our claim, then the breadcrumb, go last: a server sends the
	 * notifications of one transaction in the order of its operations,
	 * so the heir hears of everything else first, then that its claim
	 * is first, then that the breadcrumb is gone: a view of the
	 * breadcrumb from after its claim was first, which it needs to
	 * promote without a read (see (7) in election.c).
	 */
	if (el->cl.have && el->cl.path != NULL && !EL_MUTANT(107))
		el_sub(act, ZK_MOP_DELETE, el->cl.path, NULL);
	if (el->release_crumb) {
		el_sub(act, ZK_MOP_DELETE, el->crumb_path, NULL);
		if (!EL_MUTANT(19))
			act->sub[act->nsub - 1].version = el->crumb_version;
	}
	if (el->cl.have && el->cl.path != NULL && EL_MUTANT(107))
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

void
el_build_ack(struct election *el, struct el_action *act)
{
	el_make_ack_data(el);
	act->nsub = 0;
	el_sub(act, ZK_MOP_CHECK, el->node_path, NULL);
	/* The claim it rests on: first while it exists (el_claim_ready()). */
	if (el->cl.have && el->cl.path != NULL && !EL_MUTANT(120))
		el_sub(act, ZK_MOP_CHECK, el->cl.path, NULL);
	el_sub(act, el_owns_leader(el) ? ZK_MOP_SET : ZK_MOP_CREATE_EPHEMERAL,
	    el->leader_path, el->ack_data);
	el_sub(act, el->crumb_exists ? ZK_MOP_SET : ZK_MOP_CREATE,
	    el->crumb_path, el->ack_data);
	el->crumb_write = el->crumb_exists ? EL_CRUMB_SET : EL_CRUMB_CREATE;
	/* Written from now on, maybe (a lost reply), until released. */
	if (!EL_MUTANT(135))
		el->crumb_mine = 1;
	el->crumb_node_epoch = el->epoch;
	el->crumb_claim_seq = el->cl.have && el->cl.path != NULL ?
	    el->cl.seq : -1;
}

/* New data goes to our candidate node and, when leading, to E/leader. */
void
el_build_set_data(struct election *el, struct el_action *act)
{
	act->nsub = 0;
	el_sub(act, ZK_MOP_SET, el->node_path, el->create_data);
	if (el->acked && el_owns_leader(el)) {
		el_make_ack_data(el);
		el_sub(act, ZK_MOP_SET, el->leader_path, el->ack_data);
		if (el->crumb_exists && el->crumb_epoch == el->epoch &&
		    !EL_MUTANT(150)) {
			el_sub(act, ZK_MOP_SET, el->crumb_path, el->ack_data);
			el->crumb_write = EL_CRUMB_SET;
		}
	}
}

/* The slot is wanted for kind: take it, or have a running check killed. */
int
el_take_slot(struct election *el, struct el_action *act, enum hook_kind kind,
    const char *reason)
{
	if (el->hook == -1) {
		el_act_hook(el, act, kind, reason);
		return 1;
	}
	if (el->hook == HOOK_CHECK && !el->hook_cancelled) {
		el_act_cancel(el, act, kind == (EL_MUTANT(97) ? HOOK_PROMOTE :
		    HOOK_DEMOTE) ? 0 : EL_CANCEL_GRACE_MS);
		return 1;
	}
	return 0;
}
