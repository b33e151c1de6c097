/*
 * A daemon's hook slot, as hook.c and daemon.c run it: one hook at a time
 * (promote, demote, fence, check), its fate drawn by fault.c, killed at
 * its timeout by the daemon's timer (late if the daemon is frozen, which
 * its child processes are not), cancelled on EL_ACT_CANCEL, reaped into
 * election_hook_done(). A crash takes the slot's hook with it (systemd
 * kills the whole cgroup).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void
slot_start(struct sim *s, struct peer *p, const struct el_action *act)
{
	enum hook_fate fate;
	int64_t dur;

	p->hook_on = 1;
	p->hook_seq++;
	p->hook_kind = act->hook;
	p->hook_start = s->now;
	p->hook_sid = p->cl.sid;
	p->hook_ms = act->ms;
	p->hook_exited = 0;
	p->hook_cancel_seen = 0;
	if (act->hook == HOOK_PROMOTE || act->hook == HOOK_FENCE) {
		check_backoff(s, p, act->hook);
		p->lead_failed = 0;
	}
	check_hook_start(s, p, act);
	fate = fault_hook_fate(s, p, act->hook, &dur);
	if (fate != HF_HANG)
		sim_push(s, s->now + dur, EV_HOOK_EXIT, p->idx, p->hook_seq,
		    fate == HF_OK, 0, NULL);
	if (act->ms > 0)
		sim_push(s, s->now + act->ms, EV_HOOK_KILL, p->idx,
		    p->hook_seq, 0, 0, NULL);
}

/*
 * (back): a promote or fence that failed of itself while the daemon's node
 * is still the quorum's, in the session it ran for; one whose node went
 * meanwhile (by hand, or with its session) asks for no backoff: the
 * daemon rejoins with a new node.
 */
static void
slot_failed(struct sim *s, struct peer *p)
{
	struct election_view v;
	char path[SIM_PATH + 64];

	p->back_armed = 0;
	if (!p->lead_failed || p->cl.sid != p->hook_sid)
		return;
	election_view(p->el, &v);
	if (v.node == NULL)
		return;
	(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS, v.node);
	if (ztree_get(&s->qu.tree, path) == NULL)
		return;
	p->back_armed = 1;
	p->failed_at = s->now;
	p->failed_backoff = p->params.retry_backoff_ms;
}

void
slot_reap(struct sim *s, struct peer *p, int seq)
{
	if (!p->hook_on || seq != p->hook_seq)
		return;
	p->hook_on = 0;
	p->h_free = s->now;
	trace(s, p->idx, "hook_done %s %s", trace_hook(p->hook_kind),
	    p->hook_ok ? "ok" : "failed");
	if (p->hook_kind == HOOK_FENCE && p->cl.sid != p->hook_sid)
		s->st.fence_lost++;
	if (p->hook_kind == HOOK_CHECK)
		check_health_result(p, p->hook_ok);
	check_state_reaped(s, p);
	if (p->hook_kind == HOOK_PROMOTE || p->hook_kind == HOOK_FENCE) {
		p->lead_failed = !p->hook_ok && !p->hook_cancel_seen;
		slot_failed(s, p);
	}
	election_clock(p->el, s->now);
	th_event(s, p, TH_HOOK_DONE, p->hook_kind, p->hook_ok, NULL);
	election_hook_done(p->el, p->hook_kind, p->hook_ok);
	peer_step(s, p);
}

/* The hook's process group ends: a fact of the world, frozen or not. */
void
slot_exit(struct sim *s, struct peer *p, int seq, int ok)
{
	if (!p->hook_on || seq != p->hook_seq || p->hook_exited)
		return;
	p->hook_exited = 1;
	p->hook_ok = ok;
	check_hook_exit(s, p, p->hook_kind, ok);
	sim_push(s, s->now + rng_between(&s->rng, 0, 2), EV_HOOK_REAP, p->idx,
	    seq, 0, 0, NULL);
}

/*
 * SIGKILL to the group: it is gone at once, but in a run with tied faults
 * (fault_tie()) a killed group sometimes takes a few milliseconds to be
 * gone (a loaded machine, a child in an uninterruptible sleep), drawn
 * from their stream: the windows a kill opens are the ones they aim at.
 */
static void
slot_sigkill(struct sim *s, struct peer *p, int seq)
{
	int64_t r;

	if (s->tie_pm == 0 || (r = rng_between(&s->tie_rng, 0, 9)) < 6) {
		slot_exit(s, p, seq, 0);
		return;
	}
	sim_push(s, s->now + (r < 9 ? rng_between(&s->tie_rng, 1, 5) :
	    rng_between(&s->tie_rng, 5, 30)), EV_HOOK_EXIT, p->idx, seq, 0, 0,
	    NULL);
}

/*
 * EL_ACT_CANCEL: SIGTERM to the group, SIGKILL act->ms later (0: at once).
 * A hook given a grace may end at any point of it.
 */
void
slot_cancel(struct sim *s, struct peer *p, const struct el_action *act)
{
	if (p->hook_on)
		p->hook_cancel_seen = 1;
	if (!p->hook_on || p->hook_exited)
		return;
	trace(s, p->idx, "hook %s cancelled (SIGKILL in %lld ms)",
	    trace_hook(p->hook_kind), (long long)act->ms);
	if (act->ms > 0) {
		sim_push(s, s->now + rng_between(&s->rng, 0, act->ms),
		    EV_HOOK_EXIT, p->idx, p->hook_seq, 0, 0, NULL);
		return;
	}
	slot_sigkill(s, p, p->hook_seq);
}

void
slot_kill(struct sim *s, struct peer *p, int seq)
{
	if (p->hook_on && seq == p->hook_seq && !p->hook_exited) {
		trace(s, p->idx, "hook %s killed at its timeout",
		    trace_hook(p->hook_kind));
		slot_sigkill(s, p, seq);
	}
}

/* The process dies, its cgroup with it. */
void
slot_abort(struct sim *s, struct peer *p)
{
	if (p->hook_on && !p->hook_exited) {
		p->hook_exited = 1;
		check_hook_exit(s, p, p->hook_kind, 0);
	}
	p->hook_on = 0;
}
