/*
 * The election's decisions: election_next() asks, in order of urgency,
 * what is to be done now (a demote, an operator's answer, a session
 * restart, a keepalive, preemption, the next ZooKeeper request of the
 * recipe that election.c's header describes (election_queue.c), a health
 * check) and builds the action (election_act.c). What it decides on are the facts election.c keeps and the
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


static const char *
el_demote_reason(const struct election *el)
{
	if (el->lost_reason != NULL)
		return el->lost_reason;
	if (el->zk == EL_ZK_EXPIRED || el->zk == EL_ZK_AUTH_FAILED)
		return "session-expired";
	if (el->conn_lost)
		return el->conn_lost_why;
	if (el->want_stop)
		return "shutdown";
	if (el->resigning)
		return el->sw_handing ? el->sw_reason : "resign";
	if (el->want_pause)
		return "pause";
	if (el->unhealthy)
		return "health";
	if (el->lease_error != NULL)
		return "lease-lost";
	if (el->promote_failed)
		return "promote-failed";
	if (el->run_exited)
		return "run-exited";
	if (el->zk == EL_ZK_CONNECTED &&
	    (EL_MUTANT(165) ? !el->first : el->listed && !el->first))
		return "preempted";
	if (el->zk == EL_ZK_CONNECTED && el->leader_fresh &&
	    el->leader_exists && el->leader_owner != el->sid)
		return "preempted";
	/* Asked to leave, then asked back in: the leaving goes on. */
	if (el->release_pending)
		return el->release_why != NULL ? el->release_why : "pause";
	return NULL;
}

/* The health check has the slot when nothing else wants it. */
static void
el_next_check(struct election *el, struct el_action *act)
{
	if (el->check_configured && !el->want_stop && el->check_due != 0 &&
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

/* The claim the session file named is not ours now (not the one we have). */
static int
el_resume_claim_gone(const struct election *el)
{
	if (!el->resume_claimed)
		return 0;
	return !el->cl.have || el->cl.node == NULL ||
	    el->cl.seq != el->resume_claim_seq;
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
	 * promoted on: a claim once first stays first. The session file
	 * says a promote or fence had begun even when an administrator
	 * deleted that claim meanwhile (and then the node), once the hook
	 * ran for a moment (resume.c); before that, it names the claim,
	 * and a claim it names that is gone may have been promoted on.
	 * The demote then keeps the claim named, for a crash during it.
	 * None of it counts when the file said the application was down
	 * (a demote ended, nothing begun since: el->down), which the daemon
	 * writes before a promote or fence begins: E/leader still ours (a
	 * lost lease's demote keeps it) was not promoted on again.
	 */
	if ((!el->down && ((el->cl.have && (el->cl.first ||
	    EL_MUTANT(151))) || el_owns_leader(el) ||
	    (el_resume_claim_gone(el) && !EL_MUTANT(94)))) ||
	    (el->resume_promoting && !EL_MUTANT(92))) {
		el->startup_demote = 1;
		if (el->resume_claimed && !EL_MUTANT(109)) {
			el->lead_claimed = 1;
			el->lead_claim_seq = el->resume_claim_seq;
		}
	}
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
	if (el_lead_hook(el)) {
		el->resume_check = 0;
		return;
	}
	/* Stopped before it knew: as a start would have. */
	if (el->want_stop && !el_promoted(el) && !el->resume_exact) {
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
	/*
	 * A resume's, decided while a check ran: the check makes way, and
	 * nothing else goes until the demote starts (its application may
	 * lead past its demote point: issue 19.6).
	 */
	if (el->startup_demote && el->hook == HOOK_CHECK) {
		if (!el->hook_cancelled)
			el_act_cancel(el, act, 0);
		return !el->hook_cancelled || !EL_MUTANT(143);
	}
	if (el_promoted(el) && (reason = el_demote_reason(el)) != NULL) {
		if (el->hook == -1) {
			el_go(el, EL_ST_DEMOTING, reason);
			el->lost_reason = NULL;
			el->conn_lost = 0;
			el->grace_until = 0;
			el->disc_at = 0;
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
	/*
	 * The handoff under way (the state stopping: asked, and no demote,
	 * promote or leadership left before it) ends once what we own is
	 * released, or cannot be.
	 */
	if (el->state == EL_ST_STOPPING && !el->startup_demote &&
	    (!el->release_pending || (EL_MUTANT(136) ?
	    el->zk == EL_ZK_EXPIRED || el->zk == EL_ZK_AUTH_FAILED :
	    el->zk != EL_ZK_CONNECTED))) {
		/* The end is the state's alone: no flag says it. */
		el_settle(el);
		el_go(el, EL_ST_STOPPED, "handoff done");
		act->type = EL_ACT_STOPPED;
		return 1;
	}
	/*
	 * Once out of the election: released, or (a release refused over
	 * and over) the live session that owns the node replaced.
	 */
	if (el->pause_reply && (!el_lead_hook(el) || EL_MUTANT(126)) &&
	    !el_promoted(el) &&
	    (!el->release_pending || EL_MUTANT(101)) &&
	    (!el->restart || el->zk != EL_ZK_CONNECTED || EL_MUTANT(117))) {
		el->pause_reply = 0;
		act->type = EL_ACT_PAUSED;
		return 1;
	}
	/* A resign is done too when the rejoin it promised is not wanted. */
	if (el->resigning == 2 && (el->want_pause ||
	    (el->unhealthy && !EL_MUTANT(160)) ||
	    el->want_stop || el->observer))
		el->resign_reply = 1;
	/* As a pause's: not before the live session that owns it is
	 * replaced, when its release was refused over and over. */
	if (el->resign_reply && (!el->restart ||
	    el->zk != EL_ZK_CONNECTED || EL_MUTANT(140))) {
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
		if (el_next_zk(el, act) == EL_AGAIN)
			election_next(el, act);
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
	free(el->mark_watch);
	free(el->mark_extra);
	free(el->mark_old);
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
