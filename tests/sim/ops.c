/*
 * What the daemon's switchover.c does around the core, for the
 * simulated daemons: the leader's queue read for preemption
 * (EL_ACT_QUEUE), and following a switchover (an operator's, or the
 * core's preemption, EL_ACT_PREEMPT) until its target leads, the core
 * gives it up, or its timeout (the promote hook's timeout and two session
 * timeouts) cancels it, as the daemon's timer does.
 *
 * The queue read is queue_read.c's: a listing, then each node's
 * data, from the replica of the server the connection goes to. The model
 * reads that replica once, a round trip (1-20 ms) after the request; a
 * connection that is not up when it is asked or when the answer is due
 * fails it (NULL), as a connection loss does. A failure while it is asked
 * is answered inside the step, as the daemon's is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "sim.h"
#include "xmalloc.h"

void
ops_queue_ask(struct sim *s, struct peer *p)
{
	trace(s, p->idx, "-> read the queue (preemption)");
	if (p->cl.state != CL_CONNECTED || p->cl.conn < 0) {
		th_queue(s, p, NULL);
		election_queue(p->el, NULL);
		return;
	}
	sim_push(s, s->now + rng_between(&s->rng, 1, 20), EV_QUEUE, p->idx,
	    p->cl.conn, p->cl.gen, 0, NULL);
}

void
ops_queue_answer(struct sim *s, struct peer *p, const struct ev *ev)
{
	struct candidate *c;
	struct el_queue q;
	struct conn *cn = conn_get(s, ev->a);
	struct znode *z;
	char **names, **order, **datas, path[SIM_PATH + 64];
	int i, n, all;

	election_clock(p->el, s->now);
	if (cn == NULL || ev->b != p->cl.gen || p->cl.conn != ev->a ||
	    p->cl.state != CL_CONNECTED || !cn->established ||
	    s->srv[cn->server].state == SRV_DOWN) {
		trace(s, p->idx, "queue read: lost");
		th_queue(s, p, NULL);
		election_queue(p->el, NULL);
		peer_step(s, p);
		return;
	}
	all = ztree_children(&s->srv[cn->server].tree, SIM_CANDS, &names);
	c = xcalloc((size_t)all + 1, sizeof(*c));
	n = candidate_order(names, all, c);
	order = xcalloc((size_t)n + 1, sizeof(*order));
	datas = xcalloc((size_t)n + 1, sizeof(*datas));
	for (i = 0; i < n; i++) {
		order[i] = xstrdup(c[i].name);
		(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS,
		    c[i].name);
		z = ztree_get(&s->srv[cn->server].tree, path);
		datas[i] = z != NULL ? xstrdup(z->data) : NULL;
	}
	trace(s, p->idx, "queue read: %d candidate(s) from server %d", n,
	    cn->server);
	q.n = n;
	q.names = order;
	q.datas = datas;
	th_queue(s, p, &q);
	check_ops_queue_read(s, p, &q);
	election_queue(p->el, &q);
	for (i = 0; i < n; i++) {
		free(order[i]);
		free(datas[i]);
	}
	free(order);
	free(datas);
	free(c);
	ztree_names_free(names, all);
	peer_step(s, p);
}

/* A switchover the core took on: followed as switchover.c does. */
void
ops_switch_begin(struct sim *s, struct peer *p, const char *node,
    const char *id, int preempt)
{
	const char *why;

	/* An operator's, given up in the step that began this one. */
	if (p->sw_on && p->sw_inc == p->inc && !p->sw_preempt) {
		why = election_switchover_failed(p->el);
		trace(s, p->idx, "switchover to %s given up: %s", p->sw_id,
		    why != NULL ? why : "leadership-lost");
	}
	sim_copy(p->sw_node, sizeof(p->sw_node), node);
	sim_copy(p->sw_id, sizeof(p->sw_id), id);
	p->sw_since = s->now;
	p->sw_preempt = preempt;
	p->sw_inc = p->inc;
	p->sw_handed = 0;
	p->sw_deleted = 0;
	p->sw_listed = 0;
	p->sw_on = 1;
}

/*
 * A listing of E/candidates reached the daemon during a switchover: what
 * it can know of its target (read before the core steps on it).
 */
void
ops_switch_listed(struct peer *p, char *const *children, int n)
{
	const char *slash = strrchr(p->sw_node, '/');
	const char *name = slash != NULL ? slash + 1 : p->sw_node;
	int i;

	if (!p->sw_on)
		return;
	p->sw_listed = 1;
	p->sw_target_listed = 0;
	for (i = 0; i < n; i++)
		if (strcmp(children[i], name) == 0)
			p->sw_target_listed = 1;
}

/* After a step: its target leads, the core gave it up, or it timed out. */
void
ops_switch_step(struct sim *s, struct peer *p)
{
	struct election_view v;
	const char *why;

	if (!p->sw_on)
		return;
	if (p->sw_inc != p->inc) {
		p->sw_on = 0;	/* the process that followed it is gone */
		return;
	}
	election_view(p->el, &v);
	if (v.role != ROLE_LEADER)
		p->sw_handed = 1;
	if (strcmp(v.leader_id, p->sw_id) == 0 && v.role != ROLE_LEADER) {
		trace(s, p->idx, "switchover: %s leads (ok)", p->sw_id);
		(void)election_switchover_failed(p->el);
		p->sw_on = 0;
		return;
	}
	if ((why = election_switchover_failed(p->el)) != NULL) {
		trace(s, p->idx, "switchover to %s given up: %s", p->sw_id,
		    why);
		p->sw_on = 0;
		check_ops_given_up(s, p, why);
		return;
	}
	if (s->now < p->sw_since + p->params.hook_timeout_ms + 2 * s->T)
		return;
	trace(s, p->idx, "switchover to %s: timeout", p->sw_id);
	check_ops_timeout(s, p);
	election_switchover_cancel(p->el);
	p->sw_on = 0;
}

/*
 * What the bound after the faults needs besides (fault_quiet()): a
 * leader's preempt_delay, two looks at the queue, and the handover.
 */
int64_t
ops_bound_ms(const struct sim *s)
{
	int64_t delay = -1, hook = 0;
	int i;

	for (i = 0; i < s->npeers; i++) {
		if (s->peer[i].params.preempt_delay_ms > delay)
			delay = s->peer[i].params.preempt_delay_ms;
		if (s->peer[i].params.hook_timeout_ms > hook)
			hook = s->peer[i].params.hook_timeout_ms;
	}
	if (delay < 0)
		return 0;
	return delay + 2 * 5000 + 2 * hook + 2 * s->T;
}

/* With -P: preempt_delay never (a quarter), or 0 to 2T. */
int64_t
ops_draw_preempt_delay(struct sim *s)
{
	if (rng_permille(&s->rng, 250))
		return -1;
	return rng_between(&s->rng, 0, 2 * s->T);
}

/*
 * -H: in half the runs, reloads of the lease's settings, now and then,
 * to a daemon drawn at random. Their moments and values come from a
 * stream of their own (timing_rng): a run without them is the run it was
 * before they existed.
 */
static void
ops_timing_next(struct sim *s)
{
	sim_push(s, s->now + rng_between(&s->timing_rng, s->timing_ms / 4,
	    s->timing_ms * 7 / 4), EV_TIMING, -1, 0, 0, 0, NULL);
}

void
ops_timing_init(struct sim *s, uint64_t seed)
{
	rng_seed(&s->timing_rng, seed ^ UINT64_C(0x74696d696e677321));
	s->timing_ms = 0;
	if (!s->reloads || !rng_permille(&s->timing_rng, 500))
		return;
	s->timing_ms = rng_between(&s->timing_rng, 2000, 15000);
	ops_timing_next(s);
}

/*
 * A leader told it is cut off: in 4 of 10 such moments, a reload of its
 * timings, mostly within 300 ms, else within T, while its lease runs
 * down and its grace runs (a raised demote_timeout must not outlast the
 * lease, a grace reloaded applies at once).
 */
void
ops_timing_tie(struct sim *s, struct peer *p)
{
	struct election_view v;

	if (s->timing_ms == 0 || s->quiet)
		return;
	election_view(p->el, &v);
	if (v.role != ROLE_LEADER && v.role != ROLE_PROMOTING)
		return;
	if (!rng_permille(&s->timing_rng, 400))
		return;
	/* Most disconnections are short: most reloads come soon. */
	sim_push(s, s->now + rng_between(&s->timing_rng, 0,
	    rng_permille(&s->timing_rng, 600) ? 300 : s->T), EV_OPERATOR,
	    p->idx, OP_TIMING_RELOAD, 0, 1, NULL);
}

/* EV_TIMING: a SIGHUP to a running daemon (its loop takes it in turn). */
void
ops_timing_event(struct sim *s)
{
	struct peer *p;

	if (s->quiet)
		return;
	ops_timing_next(s);
	p = &s->peer[rng_between(&s->timing_rng, 0, s->npeers - 1)];
	if (p->running)
		sim_push(s, s->now, EV_OPERATOR, p->idx, OP_TIMING_RELOAD, 0, 1,
		    NULL);
}

/*
 * The reload. hooks.demote_timeout: unset (T/4), T/4, anything below
 * T/3, or just below T/3 (the daemon refuses more: clamped to T/4 when
 * the negotiated T is shorter than asked). zookeeper.tick_time: never
 * below the servers' (no lease could rest on a shorter one), maybe above
 * it, maybe so far that T is below 2 ticks and the daemon must leave the
 * queue. The quiet point makes it the servers' again (OP_TIMING_HEAL).
 */
static void
ops_timing_reload(struct sim *s, struct peer *p, int cmd)
{
	struct election_params *e = &p->params;
	struct rng *r = &s->timing_rng;
	int64_t req = e->session_timeout_ms, tick = s->tick_ms;
	int what = cmd == OP_TIMING_HEAL ? 1 : (int)rng_between(r, 0, 2);

	if (what != 1) {
		switch (rng_between(r, 0, 3)) {
		case 0:
			e->demote_timeout_ms = 0;
			break;
		case 1:
			e->demote_timeout_ms = req / 4;
			break;
		case 2:
			e->demote_timeout_ms = rng_between(r, 100,
			    req / 3 - 1);
			break;
		default:
			e->demote_timeout_ms = rng_between(r, req / 4,
			    req / 3 - 1);
			break;
		}
	}
	if (what != 0 && cmd == OP_TIMING_RELOAD) {
		switch (rng_between(r, 0, 2)) {
		case 0:
			break;
		case 1:
			if (tick < s->T / 2)
				tick = rng_between(r, tick, s->T / 2);
			break;
		default:
			tick = rng_between(r, tick > s->T / 2 ? tick :
			    s->T / 2 + 1, s->T);
			break;
		}
	}
	if (what != 0)
		e->tick_ms = tick;
	if (cmd == OP_TIMING_RELOAD && rng_permille(r, 500))
		peer_grace_reload(s, p, r);
	trace(s, p->idx, "reload: hooks.demote_timeout %lld ms, "
	    "zookeeper.tick_time %lld ms", (long long)e->demote_timeout_ms,
	    (long long)e->tick_ms);
	election_reconfigure(p->el, e);
}

/*
 * With -H: hooks.run ends on its own (run_hook.c's report: an ordered
 * handoff, then a backoff), mostly the leader's; or a SIGHUP reload adds
 * or takes away hooks.check (with its interval, fall and rise as drawn),
 * maybe while a check runs, or gives a configured check another interval
 * (which applies at once: the check planned moves).
 */
void
ops_operator(struct sim *s, struct peer *p, int cmd)
{
	int rc;

	if (cmd == OP_TIMING_RELOAD || cmd == OP_TIMING_HEAL) {
		/* One a freeze held past the quiet point makes it true. */
		ops_timing_reload(s, p, s->quiet ? OP_TIMING_HEAL : cmd);
		return;
	}
	if (cmd == OP_RUN_EXIT) {
		rc = election_run_exited(p->el);
		trace(s, p->idx, "hooks.run exits: %s", rc == 0 ?
		    "the leader hands over" : "not leading: nothing");
		return;
	}
	if (p->params.check && rng_permille(&s->rng, 500)) {
		p->params.check_interval_ms = peer_draw_check_interval(s);
		trace(s, p->idx, "reload: hooks.check_interval %lld ms",
		    (long long)p->params.check_interval_ms);
		election_reconfigure(p->el, &p->params);
		return;
	}
	p->params.check = !p->params.check;
	p->check = p->params.check;
	trace(s, p->idx, "reload: hooks.check %s", p->check ? "added" :
	    "removed");
	check_health_reload(p);
	if (p->check)
		check_health_start(s, p, 0);
	election_reconfigure(p->el, &p->params);
}
