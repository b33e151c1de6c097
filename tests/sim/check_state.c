/*
 * Invariant (st): the core's state machine moves only along its table.
 * Every EL_ACT_TRANSITION is a move election.c's transition table has,
 * starts where the last one of the same daemon's incarnation ended (no
 * change went around el_go()), and after every step the view's state is
 * the last one reported.
 *
 * Invariant (ack): a daemon acks (sends the request that writes E/leader
 * for its session) only while its application was told to lead in this
 * leadership: a promote hook started, by this image or an earlier one of
 * the same daemon (-R), and no demote ended well since (one that failed,
 * or died, may leave it leading). A fence tells the application nothing:
 * a fence killed at the demote point that ends as a promote would, with
 * the contact then back, acks a leader that neither promoted nor fenced
 * (the thirteenth blind round, mutant 159).
 *
 * Invariant (undo): a demote hook, but a start's ("startup": a start
 * cannot know), runs only where the application may lead: a promote
 * started since a demote last ended well (any image), or a fence failed
 * of itself since, which the daemon leaves as a failed promote. A fence
 * the daemon cancelled (killed at its demote point) promoted nothing:
 * a demote after it alone undoes a promote that never ran (mutant 159,
 * with the contact still lost).
 */
#include <string.h>

#include "sim.h"

void
check_state_transition(struct sim *s, struct peer *p,
    const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];

	trace(s, p->idx, "-> state %s -> %s (%s)%s",
	    election_state_name(act->from), election_state_name(act->to),
	    act->reason, act->unlisted ? " UNLISTED" : "");
	if (act->unlisted || !election_transition_listed(act->from, act->to))
		check_fail(s, "(st) %s: %s -> %s (%s) is not in the transition "
		    "table", p->id, election_state_name(act->from),
		    election_state_name(act->to), act->reason);
	else if (pc->st_inc == p->inc && act->from != pc->st)
		check_fail(s, "(st) %s: %s -> %s, but the last state reported "
		    "was %s", p->id, election_state_name(act->from),
		    election_state_name(act->to), election_state_name(pc->st));
	pc->st_inc = p->inc;
	pc->st = act->to;
}

void
check_state_step(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (pc->st_inc != p->inc) {
		/* A new incarnation's first state: where it starts. */
		pc->st_inc = p->inc;
		pc->st = v->state;
	} else if (v->state != pc->st)
		check_fail(s, "(st) %s: its state is %s after the step, but "
		    "the last reported was %s", p->id,
		    election_state_name(v->state), election_state_name(pc->st));
}

/* (ack), (undo) The application told to lead; a demote checked. */
void
check_state_hook(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (act->hook == HOOK_PROMOTE)
		pc->app_lead = 1;
	if (act->hook != HOOK_DEMOTE)
		return;
	if (!pc->app_lead && !pc->fence_failed && (act->reason == NULL ||
	    strcmp(act->reason, "startup") != 0))
		check_fail(s, "(undo) %s: demotes (reason %s) with nothing to "
		    "undo: no promote started since a demote ended well, nor "
		    "a fence failed of itself (one killed promoted nothing)",
		    p->id, act->reason != NULL ? act->reason : "-");
}

/*
 * p's hook is reaped: a fence that failed, not cancelled; a demote that
 * ended well (one that failed, or died, may leave the application
 * leading).
 */
void
check_state_reaped(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (p->hook_kind == HOOK_FENCE && !p->hook_ok &&
	    !p->hook_cancel_seen)
		pc->fence_failed = 1;
	if (p->hook_kind == HOOK_DEMOTE && p->hook_ok) {
		pc->app_lead = 0;
		pc->fence_failed = 0;
	}
}

/* (ack) A request p sends that writes E/leader as an ack. */
void
check_state_ack(struct sim *s, struct peer *p, const struct el_action *act)
{
	int i, ack = act->op == EL_OP_ACK;

	for (i = 0; i < act->nsub; i++)
		if (act->sub[i].kind == ZK_MOP_CREATE_EPHEMERAL &&
		    act->sub[i].path != NULL &&
		    strcmp(act->sub[i].path, SIM_LEADER) == 0)
			ack = 1;
	if (ack && !s->pc[p->idx].app_lead)
		check_fail(s, "(ack) %s: acks as the leader (%s), but its "
		    "application was never told to lead: no promote started "
		    "since a demote ended well", p->id, trace_op(act->op));
}
