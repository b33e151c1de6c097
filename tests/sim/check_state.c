/*
 * Invariant (st): the core's state machine moves only along its table.
 * Every EL_ACT_TRANSITION is a move election.c's transition table has,
 * starts where the last one of the same daemon's incarnation ended (no
 * change went around el_go()), and after every step the view's state is
 * the last one reported.
 */
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
