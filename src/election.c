/*
 * ZooKeeper's leader-election recipe, made safe, as a pure state machine.
 *
 * Facts learned from ZooKeeper are kept as flags that say whether they are
 * fresh; a watch notification, a reconnect, a failed request or the end
 * of the lease marks them stale, and election_next() refreshes whatever is
 * stale before it takes any decision that depends on it. Promotion needs
 * every fact fresh: our node exists and belongs to our session, it is
 * first in the queue, our claim is the first of E/claims, no other session
 * holds E/leader, the breadcrumb is known, and the lease (election_time.c)
 * has room for a demote.
 *
 * The right to lead: the claims queue. Beside the candidates' queue,
 * E/claims holds ephemeral sequential claims, claim-<sid>_<seq>, each made
 * in a multi that checks its maker's candidate node still exists; the
 * first claim (lowest sequence) is the right to lead. A claim is made by
 * the head, or, ahead of time, by the heir: the candidate second in the
 * queue while the head before it leads (E/leader names the head's node:
 * el_heir()). The heir places its claim with a listing and watches the
 * claim just before it, watches the breadcrumb, and reads the markers, all
 * while the leader leads. The leader's release deletes E/leader, the
 * breadcrumb, its node and marker and, last, its claim, in one multi; the
 * notification of that claim's deletion is the heir's one signal, and it
 * starts its promote hook without a request in between (the exists that
 * set E/leader's and the breadcrumb's watches again go out beside it,
 * waited for by nothing). A crash is the same: the session's expiry
 * deletes node, E/leader and claim in one transaction, the breadcrumb
 * stays, and the heir's watched view of it makes it fence.
 *
 * Why the claims keep the queue's order, and cannot deadlock. A claim is
 * made by a candidate first or second in the queue (a listing holding our
 * node holds every node made before it, so our place in any such listing
 * is no better than our place now, and places only improve). The heir
 * makes one only after it saw E/leader name its predecessor, and a leader
 * holds its claim from before its promote to its release: so the head's
 * claim is before the heir's, and the head never waits behind its heir.
 * Claims of a candidate whose node is gone (deleted by hand, a switchover)
 * are orphans: their owner deletes them (el_next_zk()) or its session
 * ends; a claim before ours is watched, so the wait for it has an end. The
 * simulator checks at every claim's commit that its maker is first, or
 * second behind a session holding a claim (invariant (j)).
 *
 * A claim deleted by hand. Each daemon watches its own claim (an exists,
 * beside whatever else goes out, once a listing placed it): a deletion
 * told before it promotes makes it forget the claim and make another.
 * The heir takes the release's last notification (the claim before its
 * own gone) for its own being first only when that watch was set before:
 * a connection's notifications come in zxid order, so an earlier deletion
 * of its own would have been told first; otherwise it lists. (Mutant 88
 * drops the watch: the simulator finds a promote on a claim that is gone,
 * and two leaders once that node is deleted mid-promote.) A leader whose
 * claim was deleted makes none: one made now would come after the heir's
 * prepared claim. Head again on the same node (a lost lease's demote
 * keeps it), with E/leader still its own for that node, it promotes on
 * that E/leader: no other session promotes while another holds E/leader,
 * see (1). (Mutant 89 makes a claim instead: the heir waits for its node,
 * it for the heir's claim, for ever.) With E/leader deleted by hand too,
 * it makes a claim, behind the heir's: a head whose claim is behind one of
 * a session its listing places behind it deletes that one, in a multi
 * that checks its own node (el_next_unclaim()). That claim is no one's
 * right to lead: its session cannot be the head while our older node
 * exists, and a session releases its claim before it queues again, so
 * the claim was made with the node behind ours. A claim of a session
 * neither ahead of us nor behind in our listing is listed once more to
 * tell; an old head's whose node was deleted mid-promote is waited for.
 * (Mutant 90 leaves it: no leader, for good.) Nothing survives both a
 * leader's claim and its node deleted by hand while it promotes: no
 * successor has anything left to wait for.
 *
 * Why no two leaders. A leader's application leads from its promote hook's
 * start to its demote hook's end. (1) A candidate promotes only while it
 * is first in the queue, its claim is the first of E/claims, and no other
 * session holds E/leader. Its claim exists from before its promote hook to
 * its release after its demote hook (or its session's end, see (3)), and a
 * claim made later has a higher sequence: so no one else's claim is first
 * meanwhile, even when our node is deleted by hand while we promote (the
 * heir then waits for our claim; mutant 12 takes the claims away, mutant
 * 60 lets a prepared claim stand for the right before the release: the
 * simulator finds two leaders with the first, a promote on a claim
 * behind another's with the second). E/leader is written (in a
 * multi that checks our node still exists) after promote and deleted only
 * after demote, or by ZooKeeper when the session expires. (2) A leader
 * that leaves on purpose demotes first, then deletes E/leader, its node
 * and its claim in one multi, so its successor can see none of them gone
 * before the demote ended. (3) A leader that is cut off demotes once its
 * lease is short: it has finished before the quorum can expire its
 * session, which is the only other way its claim and E/leader go away.
 * Its hook is given no more than the lease has left, whatever a reload
 * made of hooks.demote_timeout (election_demote_budget()).
 * (4) A stale read cannot make us first or hide E/leader or a claim: a
 * server applies transactions in zxid order, so a listing that holds our
 * node (or claim) holds every node (claim) created before it, and one that
 * lacks the old head's has applied its deletion, which removed E/leader
 * and its claim in the same transaction (a multi or the session's close).
 * What a frozen leader's application does while its process cannot run is
 * beyond any election: the epoch and the fence hook are for that. The
 * epoch, our node's czxid, grows from leader to leader: a leader's node is
 * first of the queue, so it was created after every earlier leader's.
 *
 * What is known from watches, and why each is safe. A prepared heir waits
 * for no request between the release and its promote hook (it sends one
 * read of the breadcrumb, which the release's last notification makes
 * moot, see (7)); an unprepared head makes its claim and lists E/claims
 * (a write and a read), and reads the breadcrumb. Each watch
 * below is of this connection: a reconnect invalidates what it told, and
 * a server sends a connection's notifications in zxid order and before
 * any later reply. (5) After our predecessor's deletion we are first
 * without a listing when it was first: it was first in our listing, or
 * E/leader named it (the session that owns E/leader owns it, and
 * E/leader's epoch is its czxid: a leader's node was first when it
 * promoted). Nodes missing from our listing were created after ours and
 * have higher sequence numbers, so none can be before us now. Otherwise
 * we list. The same holds for our claim and the claim before it
 * (el_claim_watch()). (6) E/leader's deletion is known from its
 * notification: its watch is set again with an exists that goes out
 * beside the next request, and whatever it finds is read. A new E/leader
 * of another session can only be written by the holder of the first
 * claim, which is us once we promote: an ack goes out only once our
 * claim is known first (el_claim_ready()), and its multi checks that
 * claim, first for as long as it exists. A leader whose claim and
 * E/leader were deleted by hand makes its claim again and places it
 * first (el_next_unclaim()) before it acks again. (Mutant 119 acks on a
 * claim made behind the heir's: the heir, whose claim is first, never
 * hears of that E/leader or breadcrumb and promotes past them; the
 * simulator's (j) finds the write. Mutant 120 leaves the claim out of
 * the ack's multi.) (7) The breadcrumb is kept by a
 * watch from before our claim: read with a watch (an exists when it is
 * absent), read again after every change, and known absent from its
 * deletion's notification. Once our claim is first, only we could write
 * it: a leader writes it only with the first claim and a node (the ack and
 * data multis check its node), and its writes are all answered before its
 * release is sent. So a view of it made after our claim was found first
 * (a read's reply, or a deletion's notification, which come in zxid order
 * after what made our claim first) is as good as a read made at the
 * promote, even while the watch set again after a deletion is on its way.
 * A view from before is not: a deletion notified then (an administrator's,
 * applied late by a server behind the quorum) spends the watch, and a
 * leader that held the first claim in between may have written its own
 * unseen. So a promote needs a view made after our claim was first
 * (el->crumb_seq after el->first_seq), and reads the breadcrumb again
 * otherwise. A release deletes its claim, then its breadcrumb (the last
 * two operations of its multi), so the heir hears that its claim is first,
 * then that the breadcrumb is gone, in one transaction: it promotes on the
 * release alone. The release deletes the breadcrumb (at the version it
 * read) only beside the node or the claim it was written under: while
 * either exists no one else has led, so none has deleted ours and made
 * its own at version 0 again (a read before a long stall, its node and
 * claim deleted by hand meanwhile; mutant 100); without them it stays,
 * and the next leader fences. A crashed leader's expiry leaves the breadcrumb: one read,
 * then the fence. A fence also needs a view from after the step that let
 * us lead (our node first, E/leader gone): with the leader's claim
 * deleted by hand, our claim is first before its release, and a view
 * from then may show the breadcrumb that release deletes last; the
 * breadcrumb is read again before a fence, never before a promote
 * (mutant 144 fenced a leader that released cleanly). A promote or fence is decided only once every such read
 * is in. Mutants 15-18, 60 and 86 make each of these unsafe and the unit
 * tests and the simulator catch them. A session's expiry deletes its
 * nodes in any order, which costs nothing but a wait for the last one.
 *
 * Why always a leader. Every wait has an end: for a predecessor's deletion
 * (a watch), for E/leader's (a watch), for a reply (or the connection's
 * loss), for a hook (its timeout), or for a time (election_deadline()).
 * Every operator request and every failure path ends in a rejoin at the
 * back of the queue, and a node we own is deleted whenever we must not be
 * in the queue (paused, unhealthy, stopping, a failed promote). A head
 * that yields to a higher priority (el_yield()) does so at most once per
 * session timeout, and only before any hook: it takes nothing from the
 * safety argument, and the election ends even when markers lie.
 *
 * The states. What the candidate is doing now is one enum el_state: the
 * first that holds of stopped, a demote hook running (demoting), a
 * promote or fence hook running (promoting), the application told to lead
 * (leading), stopping, observer, our nodes being deleted (releasing),
 * paused, unhealthy, no node of ours (joining), first in the queue
 * (head), second behind the head (heir), else queued (el_state_of()). It
 * is settled by el_settle() after every event and every decision, and
 * every change goes through el_go(), which checks it against the
 * transition table below (el_moves[]) and has election_next() report it
 * (EL_ACT_TRANSITION: from, to and the cause, the event or action that
 * made it); the daemon logs it at debug ("state: head -> promoting
 * (elected)"), a move the table lacks as a warning, and the simulator's
 * invariant (st) fails on one (tests/sim/check_state.c). The table, row
 * to column (x: listed):
 *
 *   from \ to      joi que hei hea pro lea dem rel pau unh obs stg std
 *   joining   (joi)  -   x   x   x   .   x   x   x   x   x   .   x   .
 *   queued    (que)  x   -   x   x   .   .   x   x   x   x   .   x   .
 *   heir      (hei)  x   x   -   x   .   .   x   x   x   x   .   x   .
 *   head      (hea)  x   .   .   -   x   .   x   x   x   x   .   x   .
 *   promoting (pro)  x   .   .   x   -   x   .   x   x   x   .   x   .
 *   leading   (lea)  .   .   .   .   .   -   x   .   .   .   .   .   .
 *   demoting  (dem)  x   x   x   x   .   .   -   x   x   x   x   x   .
 *   releasing (rel)  x   .   .   .   .   .   x   -   x   x   .   x   .
 *   paused    (pau)  x   .   .   .   .   .   x   x   -   x   .   x   .
 *   unhealthy (unh)  x   .   .   .   .   .   x   x   x   -   .   x   .
 *   observer  (obs)  .   .   .   .   .   .   x   .   .   .   -   x   .
 *   stopping  (stg)  .   .   .   .   .   .   x   .   .   .   .   -   x
 *   stopped   (std)  .   .   .   .   .   .   .   .   .   .   .   .   -
 *
 * What it says: only the head promotes (or fences); a leader leaves only
 * through its demote, and a promote or fence ends in leading (the demote
 * follows) or, a fence, back in the queue, never in a demote directly;
 * places only improve (the head never goes back behind another, it loses
 * its node first); a stop ends only in stopped, and only from stopping.
 * The demote hook may start in any state but promoting and stopped (the
 * start's demote, a resumed session's); joining -> leading is a resumed
 * session whose application was leading.
 *
 * The state and the facts. Leading and stopped are the state's alone (no
 * field says them: el_go() enters and leaves them, el_promoted() reads
 * the first), and the decisions, which run on a settled state, ask it
 * whether a leadership's hook runs (el_lead_hook()). The fields the other
 * states are settled from are not states, because each holds beside
 * more than one state, and the state, being one, cannot carry two:
 *   - hook, the hook slot's occupant: a check runs beside any state, and
 *     a demote, promote or fence holds the slot whatever brought it;
 *     demoting and promoting are the state of the slot held by one.
 *   - want_stop, want_pause, resigning, sw_phase: the operator's
 *     requests. Each holds from its asking until it is done or taken
 *     back, through a promote, a leadership and its demote that come
 *     first: stopping and paused are the states of a request with
 *     nothing of those left before it.
 *   - release_pending (and release_why): what we own is to be deleted.
 *     A leader that must leave sets it before its demote, so it holds
 *     through leading and demoting; releasing is its state once they are
 *     over, and a stop or an observer's release goes on under their own.
 *   - unhealthy: the health check's verdict (check_fall failures in a
 *     row, check_rise passes to end it), from checks that run in any
 *     state; unhealthy is the state of a verdict that keeps us out.
 *   - observer: configuration, the same for the daemon's life; observer
 *     is its state when no demote or stop stands before it.
 *   - node, first, pred_head (and the lease, the session, E/leader, the
 *     breadcrumb, the claim): what ZooKeeper said, changed by its replies
 *     and notifications whatever we do; joining, head, heir and queued
 *     are where they place us when nothing above holds.
 * el_settle() is the transition function: from the state and these
 * facts, the next state, by the order above (el_state_of()).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

#define EL_M(s) (1u << (s))

/*
 * The transition table (drawn in this file's header): the states each
 * state may move to.
 */
#define EL_OUT (EL_M(EL_ST_RELEASING) | EL_M(EL_ST_PAUSED) | \
	EL_M(EL_ST_UNHEALTHY) | EL_M(EL_ST_STOPPING))
static const unsigned el_moves[EL_ST_COUNT] = {
	[EL_ST_JOINING] = EL_M(EL_ST_QUEUED) | EL_M(EL_ST_HEIR) |
	    EL_M(EL_ST_HEAD) | EL_M(EL_ST_LEADING) | EL_M(EL_ST_DEMOTING) |
	    EL_OUT,
	[EL_ST_QUEUED] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_HEIR) |
	    EL_M(EL_ST_HEAD) | EL_M(EL_ST_DEMOTING) | EL_OUT,
	[EL_ST_HEIR] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_QUEUED) |
	    EL_M(EL_ST_HEAD) | EL_M(EL_ST_DEMOTING) | EL_OUT,
	[EL_ST_HEAD] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_PROMOTING) |
	    EL_M(EL_ST_DEMOTING) | EL_OUT,
	[EL_ST_PROMOTING] = EL_M(EL_ST_LEADING) | EL_M(EL_ST_HEAD) |
	    EL_M(EL_ST_JOINING) | EL_OUT,
	[EL_ST_LEADING] = EL_M(EL_ST_DEMOTING),
	[EL_ST_DEMOTING] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_QUEUED) |
	    EL_M(EL_ST_HEIR) | EL_M(EL_ST_HEAD) | EL_M(EL_ST_OBSERVER) |
	    EL_OUT,
	[EL_ST_RELEASING] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_DEMOTING) |
	    EL_OUT,
	[EL_ST_PAUSED] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_DEMOTING) | EL_OUT,
	[EL_ST_UNHEALTHY] = EL_M(EL_ST_JOINING) | EL_M(EL_ST_DEMOTING) |
	    EL_OUT,
	[EL_ST_OBSERVER] = EL_M(EL_ST_DEMOTING) | EL_M(EL_ST_STOPPING),
	[EL_ST_STOPPING] = EL_M(EL_ST_DEMOTING) | EL_M(EL_ST_STOPPED),
	[EL_ST_STOPPED] = 0,
};

const char *
election_state_name(enum el_state s)
{
	static const char *const names[EL_ST_COUNT] = {
		"joining", "queued", "heir", "head", "promoting", "leading",
		"demoting", "releasing", "paused", "unhealthy", "observer",
		"stopping", "stopped",
	};

	return (unsigned)s < EL_ST_COUNT ? names[s] : "unknown";
}

int
election_transition_listed(enum el_state from, enum el_state to)
{
	return (unsigned)from < EL_ST_COUNT && (unsigned)to < EL_ST_COUNT &&
	    (el_moves[from] & EL_M(to)) != 0;
}

/*
 * The one way the state changes: the move is checked against the table
 * and reported by election_next() (EL_ACT_TRANSITION) with its cause; a
 * move the table lacks is made all the same (the state must say what the
 * candidate does) and reported as unlisted, which the simulator and the
 * log call a defect.
 */
void
el_go(struct election *el, enum el_state to, const char *cause)
{
	enum el_state from = el->state;

	if (to == from)
		return;
	/* Unreported for long: the last report is stretched to this one. */
	if (el->ntrans == EL_TRANS_MAX)
		from = el->trans[--el->ntrans].from;
	el->state = to;
	if (from == to)
		return;
	el->trans[el->ntrans].from = from;
	el->trans[el->ntrans].to = to;
	el->trans[el->ntrans].cause = cause != NULL ? cause : "start";
	el->trans[el->ntrans].unlisted = !election_transition_listed(from, to);
	el->ntrans++;
}

/*
 * The application was told to lead, and its demote has not started: the
 * state leading, which only el_go() enters and leaves (at a promote's or
 * fence's end, a resumed leader's start, a demote's start).
 */
int
el_promoted(const struct election *el)
{
	return el->state == EL_ST_LEADING;
}

/*
 * A hook of the leadership holds the slot: a demote (the state demoting),
 * a promote or a fence (promoting). A check, which may run beside any
 * state, is none. The decisions read it after el_settle(), so the state
 * says it; the events, which change the slot, read the slot itself.
 */
int
el_lead_hook(const struct election *el)
{
	return el->state == EL_ST_DEMOTING || el->state == EL_ST_PROMOTING;
}

/* What the facts say the candidate is doing: the first that holds. */
static enum el_state
el_state_of(const struct election *el)
{
	if (el->state == EL_ST_STOPPED)
		return EL_ST_STOPPED;	/* el_go()'s alone, the end */
	if (el->hook == HOOK_DEMOTE)
		return EL_ST_DEMOTING;
	if (el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE)
		return EL_ST_PROMOTING;
	if (el->state == EL_ST_LEADING)
		return EL_ST_LEADING;	/* el_go()'s: no flag says it */
	if (el->want_stop)
		return EL_ST_STOPPING;
	if (el->observer)
		return EL_ST_OBSERVER;
	if (el->release_pending)
		return EL_ST_RELEASING;
	if (el->want_pause)
		return EL_ST_PAUSED;
	if (el->unhealthy)
		return EL_ST_UNHEALTHY;
	if (el->node == NULL)
		return EL_ST_JOINING;
	if (el->first)
		return EL_ST_HEAD;
	return el->pred_head ? EL_ST_HEIR : EL_ST_QUEUED;
}

/* The state at the start, not reported: nothing changed yet. */
void
el_state_init(struct election *el)
{
	el->state = el_state_of(el);
}

/* The event at which our claim was found first, once it is (see (7)). */
static void
el_first_seen(struct election *el)
{
	if (el->cl.first && !el->first_was)
		el->first_seq = el->evseq;
	el->first_was = el->cl.first;
	if ((el->first && !el->head_was) ||
	    (!el->leader_exists && el->leader_was))
		el->gone_seq = el->evseq;
	el->head_was = el->first;
	el->leader_was = el->leader_exists;
}

/* The state the last event or decision left, through el_go(). */
void
el_settle(struct election *el)
{
	enum el_state to = el_state_of(el);

	el_first_seen(el);

	/* A promote reported as a leadership from the head on. */
	if (EL_MUTANT(70) && el->state == EL_ST_HEAD &&
	    to == EL_ST_PROMOTING)
		to = EL_ST_LEADING;
	el_go(el, to, el->cause);
}

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
	if (el->priority != 0)
		(void)xasprintf(&el->create_data,
		    "id=%s\ndata=%s\npriority=%lld\n", el->id, el->data,
		    (long long)el->priority);
	else
		(void)xasprintf(&el->create_data, "id=%s\ndata=%s\n", el->id,
		    el->data);
}

/* State helpers. */

void
el_invalidate(struct election *el)
{
	el->listed = 0;
	el->node_ok = 0;
	el->leader_fresh = 0;
	el->leader_armed = 0;
	el->crumb_fresh = 0;
	el->crumb_armed = 0;
	el->pred_watched = 0;
	el->pred_head = 0;
	el_replace(&el->mark_watch, NULL);
	el_claim_invalidate(&el->cl);
}

/* Nothing of this daemon's keeps it out of the queue for now. */
int
el_may_queue(const struct election *el)
{
	return !el->observer && !el->want_pause && !el->unhealthy &&
	    !el->want_stop && el->backoff_until == 0 && !el->promote_failed &&
	    !el->run_exited && !el->restart && el->lease_error == NULL;
}

int
el_pipe_has(const struct election *el, enum el_op op)
{
	int i;

	for (i = 0; i < el->npipe; i++)
		if (el->pipe[i].op == op)
			return 1;
	return 0;
}

/*
 * Whether the predecessor is known to be first: it was in the listing, or
 * E/leader names its node (the session that owns it and the node's czxid
 * as epoch). A leader's node was first when it promoted, and nothing can
 * come before it later: sequence numbers only grow.
 */
void
el_pred_head(struct election *el)
{
	if (el->pred_path == NULL || el->pred_head)
		return;
	if (EL_MUTANT(16) && el->leader_fresh && el->leader_exists) {
		el->pred_head = 1;
		return;
	}
	if (el->pred_czxid != 0 && el->leader_fresh && el->leader_exists &&
	    el->leader_owner == el->pred_owner &&
	    el->leader_epoch == el->pred_czxid)
		el->pred_head = 1;
}

int
el_leading(const struct election *el)
{
	return el_promoted(el) || el->hook == HOOK_PROMOTE ||
	    el->hook == HOOK_FENCE;
}

void
el_forget_node(struct election *el)
{
	el->data_dirty = 0;
	el_replace(&el->node, NULL);
	el_replace(&el->node_path, NULL);
	el_replace(&el->pred_path, NULL);
	el->pred_head = 0;
	el->pred_czxid = 0;
	el->pred_owner = 0;
	el->create_unknown = 0;
	el->node_ok = 0;
	el->listed = 0;
	el->first = 0;
	el->fenced = 0;
	el->position = 0;
	el->ahead_known = 0;
	el->nahead = 0;
	el->nbehind = 0;
	el->marks_fresh = 0;
	el->yield_listed = 0;
	el->node_gen++;
}

/*
 * The one way a release is asked: what we own is to go (release_pending,
 * a request, see the header). why, the request that asked for it, is the
 * demote's reason when we lead and the cause of the release's report;
 * NULL keeps an earlier one's (a lost node or claim says its own).
 */
void
el_release_ask(struct election *el, const char *why)
{
	el->release_pending = 1;
	if (why != NULL)
		el->release_why = why;
}

void
el_node_lost(struct election *el)
{
	if (el_leading(el)) {
		el->lost_reason = "node-deleted";
		el_release_ask(el, NULL);
	}
	el_forget_node(el);
	el->epoch = 0;
}

void
el_release_done(struct election *el)
{
	el->release_pending = 0;
	el->release_why = NULL;
	el->release_attempts = 0;
	el->acked = 0;
	el_claim_forget(&el->cl);
	el->epoch = 0;
	el_forget_node(el);
	if (el->promote_failed || el->run_exited) {
		el->promote_failed = 0;
		el->run_exited = 0;
		el->backoff_until = el->now + el->backoff_ms;
		if (el->backoff_until == 0)
			el->backoff_until = 1;
	}
	if (el->resigning == 1) {
		el->resigning = 2;
		/*
		 * Handed over on purpose: our marker stays away until another
		 * leader is seen (or T), or the next head would yield back.
		 * Not a priority below 0: without its marker it would count
		 * as 0, and a head below that would yield back to it.
		 */
		if (el->priority > 0 || EL_MUTANT(48))
			el->mark_hold_until = el->now + el->timeout_ms;
	}
	el->sw_handing = 0;
}

/*
 * The session is gone, and with it every ephemeral node we had: what a
 * release was for is done, and the requests waiting on it go on.
 */
void
el_session_lost(struct election *el)
{
	if (el_leading(el))
		el->lost_reason = "session-expired";
	if (EL_MUTANT(2)) {
		el_forget_node(el);
		el->release_pending = 0;
		el->acked = 0;
		el->leader_exists = 0;
		return;
	}
	el_release_done(el);
	el->leader_exists = 0;
	el->leader_owner = 0;
	el->crumb_exists = 0;
	el_claim_forget(&el->cl);
	el_replace(&el->mark_have, NULL);
	el_replace(&el->mark_extra, NULL);
	el_replace(&el->mark_old, NULL);
	el->mark_unsure = 0;
	/*
	 * The lease was the old session's: what the new one confirms says
	 * nothing of when the old one expired. A promote still running for
	 * it is stopped at once.
	 */
	el->lease_known = 0;
	el->lease_lapsed = 0;
	el->nconf = 0;
	el->confirmed_at = 0;
	el->answered_sent = INT64_MIN;
}

int
el_owns_leader(const struct election *el)
{
	return el->leader_exists && el->leader_owner == el->sid &&
	    el->sid != 0;
}

void
el_switch_clear(struct election *el, const char *why)
{
	int i;

	if (el->sw_phase != 0 && why != NULL)
		el->sw_failed = why;
	el->sw_phase = 0;
	el_replace(&el->sw_target, NULL);
	for (i = 0; i < el->sw_nbetween; i++)
		el_replace(&el->sw_between[i], NULL);
	el->sw_nbetween = 0;
}

/* A listing of ours during a switchover: what stands before the target. */
void
el_switch_listed(struct election *el, const struct candidate *c, int n,
    int me)
{
	int i, t = -1;

	if (el->sw_phase != 1)
		return;
	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, el->sw_target) == 0)
			t = i;
	if (me != 0) {
		el_switch_clear(el, "not-leader");
		return;
	}
	if (t < 0) {
		el_switch_clear(el, "target-gone");
		return;
	}
	el->sw_nbetween = 0;
	for (i = 1; i < t + EL_MUTANT(43) && el->sw_nbetween < EL_MAX_SUBOPS;
	    i++)
		(void)xasprintf(&el->sw_between[el->sw_nbetween++], "%s/%s",
		    el->cand_dir, c[i].name);
	el->sw_phase = 2;
}
