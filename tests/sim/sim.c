/*
 * One run: draws the run's parameters from the seed, starts the daemons,
 * then takes events off the queue in time order until the end of the
 * convergence bound or the first violation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

void
sim_push(struct sim *s, int64_t t, enum ev_type type, int peer, int a,
    int b, int64_t x, void *p)
{
	struct ev ev;

	memset(&ev, 0, sizeof(ev));
	ev.t = t < s->now ? s->now : t;
	ev.type = type;
	ev.peer = peer;
	ev.inc = peer >= 0 ? s->peer[peer].inc : 0;
	ev.a = a;
	ev.b = b;
	ev.x = x;
	ev.p = p;
	evq_push(&s->q, &ev);
}

void
sim_copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len) {
		(void)fprintf(stderr, "sim: \"%s\" does not fit in %zu bytes\n",
		    src, len);
		abort();
	}
	memcpy(dst, src, n + 1);
}

static void
sim_dispatch(struct sim *s, const struct ev *ev)
{
	struct conn *c;
	struct zreq *r;

	switch (ev->type) {
	case EV_C2S:
		c = conn_get(s, ev->a);
		server_receive(s, c, ev->p);
		conn_msg_free(s, ev->p);
		break;
	case EV_COMMIT:
		r = ev->p;
		server_forwarded(s, r, r->conn, ev->a, ev->b);
		break;
	case EV_REVALIDATE:
		server_revalidate(s, ev->a, ev->b);
		break;
	case EV_APPLY:
		server_apply(s, ev->a, ev->b);
		break;
	case EV_EXPIRE:
		quorum_expire_check(s, ev->x);
		break;
	case EV_SRV_NOTICE:
		server_notice(s, ev->a, ev->b);
		break;
	case EV_SRV_REJOIN:
		server_rejoin(s, ev->a, ev->b);
		break;
	case EV_SRV_PING:
		server_report(s, ev->a);
		break;
	case EV_ENS_PING:
		ensemble_ping(s, ev->a);
		break;
	case EV_ELECT:
		ensemble_elect(s, ev->a, ev->b);
		break;
	case EV_OPERATOR:
		/* A resume planned during the faults is one of them. */
		if (ev->x == 1 && s->quiet)
			break;
		s->stir_at = s->now;
		s->fault_at = s->now;
		peer_event(s, &s->peer[ev->peer], ev);
		break;
	case EV_S2C:
	case EV_CL_PING:
	case EV_CL_RECV:
	case EV_CL_CONNECT:
	case EV_CL_CONNTMO:
	case EV_PEER_TIMER:
	case EV_HOOK_EXIT:
	case EV_HOOK_KILL:
	case EV_HOOK_REAP:
	case EV_WAKE:
	case EV_PEER_START:
	case EV_QUEUE:
	case EV_SESSION_LATE:
		if (ev->type == EV_WAKE || ev->type == EV_PEER_START)
			s->stir_at = s->now;
		peer_event(s, &s->peer[ev->peer], ev);
		break;
	case EV_FAULT:
		s->fault_at = s->now;
		fault_apply(s, ev);
		break;
	case EV_QUIET:
		fault_quiet(s);
		break;
	case EV_STALL:
		stall_event(s, ev);
		break;
	case EV_TIMING:
		ops_timing_event(s);
		break;
	case EV_NEWS:		/* only ever in a stalled daemon's list */
		break;
	case EV_END:
		break;
	}
}

/* Frees what events still in the queue own. */
static void
sim_drain(struct sim *s)
{
	struct ev ev;
	struct zreq *r;

	while (evq_pop(&s->q, &ev)) {
		if (ev.type == EV_C2S || ev.type == EV_S2C)
			conn_msg_free(s, ev.p);
		else if (ev.type == EV_COMMIT) {
			r = ev.p;
			if (r->orphan)
				zreq_free(s, r);
		}
	}
}

/*
 * -L: the ensemble's tickTime, per run: ZooKeeper's default 2 s (as T
 * allows) or anything from T/20 up to T/2; with -K, 40 % of the runs
 * have a tick above T/2, up to T.
 */
static int64_t
sim_draw_tick(struct sim *s)
{
	int64_t lo = s->T / 20;

	if (s->big_tick && rng_permille(&s->rng, 400))
		return rng_between(&s->rng, s->T / 2 + 1, s->T);
	if (rng_permille(&s->rng, 400))
		return 2000;
	return rng_between(&s->rng, lo, s->T / 2);
}

static void
sim_setup(struct sim *s)
{
	int i;

	s->T = rng_between(&s->rng, 2000, 10000);
	if (s->lease_model && s->tick_ms == 0)
		s->tick_ms = sim_draw_tick(s);
	/*
	 * minSessionTimeout is 2 ticks by default, and then the tick never
	 * exceeds T/2; with -K an administrator set it lower (ZooKeeper
	 * only asks min <= max), so the tick may reach T.
	 */
	if (s->tick_ms > s->T / 2 && !s->big_tick)
		s->tick_ms = s->T / 2;
	if (s->tick_ms > s->T)
		s->tick_ms = s->T;
	s->npeers = (int)rng_between(&s->rng, 2, SIM_MAX_PEERS);
	fault_config(s);
	s->quiet_at = s->fc.fault_ms;
	quorum_init(s);
	server_init(s);
	ensemble_init(s);
	for (i = 0; i < s->npeers; i++) {
		peer_setup(s, i);
		sim_push(s, rng_between(&s->rng, 0, 500), EV_PEER_START, i, 0,
		    0, 0, NULL);
	}
	trace(s, -1, "seed %llu: %d daemons, T %lld ms, tick %lld ms, faults "
	    "for %lld ms every ~%lld ms, fence %s", (unsigned long long)s->seed,
	    s->npeers, (long long)s->T, (long long)s->tick_ms,
	    (long long)s->fc.fault_ms, (long long)s->fc.mean_gap_ms,
	    s->fc.fence ? "on" : "off");
	for (i = 0; i < s->npeers; i++) {
		const struct election_params *e = &s->peer[i].params;

		trace(s, i, "%s: T req %lld, hook %lld, demote %lld%s, check %s "
		    "%lld/%lld/%lld, backoff %lld, grace %lld%s",
		    e->observer ? "observer" : "candidate",
		    (long long)e->session_timeout_ms,
		    (long long)e->hook_timeout_ms,
		    (long long)e->demote_timeout_ms,
		    e->demote_timeout_ms == 0 ? " (unset)" : "",
		    e->check ? "on" : "off",
		    (long long)e->check_interval_ms, (long long)e->check_fall,
		    (long long)e->check_rise, (long long)e->retry_backoff_ms,
		    (long long)e->disconnect_grace_ms,
		    s->peer[i].grace_set ? "" : " (unset)");
	}
	if (s->sabotage != SAB_NONE)
		trace(s, -1, "sabotage: %s (the model lies on purpose)",
		    sabotage_name(s->sabotage));
	fault_next(s);
	sim_push(s, s->quiet_at, EV_QUIET, -1, 0, 0, 0, NULL);
}

int
sim_run(uint64_t seed, const struct sim_opts *o, struct sim_stats *st,
    char *why, size_t whylen)
{
	struct sim *s = xcalloc(1, sizeof(*s));
	struct ev ev;
	int i, failed;

	s->seed = seed;
	s->verbose = o->verbose;
	s->tracing = o->tracing > 0;
	s->disabled = o->disabled;
	s->tick_ms = o->tick_ms;
	s->switchover = o->switchover;
	s->priorities = o->priorities;
	s->big_tick = o->big_tick;
	s->lease_model = o->lease_model || o->big_tick;
	s->avail = o->avail;
	s->resume = o->resume;
	s->reloads = o->reloads;
	s->sabotage = o->sabotage;
	trace_init(s, o->tracing);
	th_start(s, o->hash);
	rng_seed(&s->rng, seed);
	/* A stream of its own: runs without ties stay what they were. */
	rng_seed(&s->tie_rng, seed ^ UINT64_C(0x7469656466617574));
	/* Ties to writes, later still: a stream of their own again. */
	rng_seed(&s->write_rng, seed ^ UINT64_C(0x7772697465746965));
	/* -H: the breadcrumb written by hand, its own stream too. */
	rng_seed(&s->crumb_rng, seed ^ UINT64_C(0x6372756d62686e64));
	s->tie_write = o->tie_write == 0;
	if (o->tie > 0)
		s->tie_pm = o->tie;
	else if (o->tie == 0 && rng_permille(&s->tie_rng, 400))
		s->tie_pm = (int)rng_between(&s->tie_rng, 50, 400);
	evq_init(&s->q);
	sim_setup(s);
	stall_init(s, o, seed);
	ops_timing_init(s, seed);
	while (!s->failed && evq_pop(&s->q, &ev)) {
		if (ev.t > s->now) {
			check_advance(s, ev.t);
			s->now = ev.t;
		}
		s->st.events++;
		sim_dispatch(s, &ev);
		if (ev.type == EV_END) {
			check_final(s);
			check_ops_final(s);
			break;
		}
	}
	if (o->tracing > 0 && s->failed)
		trace_dump(s);
	failed = s->failed;
	if (why != NULL)
		(void)snprintf(why, whylen, "%s", s->why);
	if (st != NULL) {
		st->events += s->st.events;
		st->promotes += s->st.promotes;
		st->demotes += s->st.demotes;
		st->expiries += s->st.expiries;
		st->losses += s->st.losses;
		st->fence_lost += s->st.fence_lost;
		st->claims += s->st.claims;
		st->heir_claims += s->st.heir_claims;
		st->prepared += s->st.prepared;
		st->stale_claims += s->st.stale_claims;
		st->double_deletes += s->st.double_deletes;
		st->unclaims += s->st.unclaims;
		st->gone_hooks += s->st.gone_hooks;
		st->over_crumb += s->st.over_crumb;
		st->stale_crumb += s->st.stale_crumb;
		st->yields += s->st.yields;
		st->elections += s->st.elections;
		st->needless += s->st.needless;
		st->hash = s->th_hash;
		st->hash_events = s->th_events;
		for (i = 0; i < F_NKINDS; i++)
			st->faults[i] += s->st.faults[i];
		st->tied += s->st.tied;
		st->crumb_writes += s->st.crumb_writes;
		st->crumb_unheard += s->st.crumb_unheard;
		st->stalls += s->st.stalls;
	}
	sim_drain(s);
	for (i = 0; i < s->npeers; i++)
		peer_free(s, &s->peer[i]);
	conn_free_all(s);
	conn_pool_free(s);
	server_free(s);
	quorum_free(s);
	evq_free(&s->q);
	trace_free(s);
	free(s);
	return failed;
}
