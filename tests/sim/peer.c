/*
 * One zkelectd process, reduced to what its daemon.c does around the pure
 * election: it feeds election_clock() and the events, performs every
 * action election_next() asks for, runs hooks in one slot, wakes the
 * election at election_deadline(), and answers operators. What the
 * process cannot do while frozen (SIGSTOP, a VM pause) is deferred to
 * its wake, while its hooks, being other processes, go on running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"
#include "xmalloc.h"

/*
 * What election_params holds for a disconnect_grace left out of the
 * configuration: the whole lease where the core has that default, else 0.
 */
#ifdef EL_GRACE_LEASE
#define PEER_GRACE_UNSET EL_GRACE_LEASE
#else
#define PEER_GRACE_UNSET 0
#endif

/* When a grace counted from the disconnection at disc_at ends. */
static int64_t
peer_grace_end(const struct peer *p)
{
	return p->grace_set ? p->disc_at + p->params.disconnect_grace_ms :
	    SIM_NEVER;
}

/*
 * -H: a reload of disconnect_grace (unset: the lease; 0; a duration up
 * to the requested timeout), drawn from r. It applies at once to a grace
 * under way, counted from the disconnection; a grace already ended stays
 * ended (the leader has demoted, or is on its way).
 */
void
peer_grace_reload(struct sim *s, struct peer *p, struct rng *r)
{
	struct election_params *e = &p->params;
	int64_t end;

	p->grace_set = 1;
	switch (rng_between(r, 0, 2)) {
	case 0:
		e->disconnect_grace_ms = PEER_GRACE_UNSET;
		p->grace_set = 0;
		break;
	case 1:
		e->disconnect_grace_ms = 0;
		break;
	default:
		e->disconnect_grace_ms = rng_between(r, 100,
		    e->session_timeout_ms);
		break;
	}
	trace(s, p->idx, "reload: election.disconnect_grace %lld ms%s",
	    (long long)e->disconnect_grace_ms, p->grace_set ? "" :
	    " (unset: the lease)");
	if (p->told_connected || p->disc_at == 0 || p->grace_end <= s->now)
		return;
	end = peer_grace_end(p);
	p->grace_end = end < s->now ? s->now : end;
}

static void
peer_clock(struct sim *s, struct peer *p)
{
	election_clock(p->el, s->now);
}

void
peer_setup(struct sim *s, int i)
{
	struct peer *p = &s->peer[i];
	struct election_params *e = &p->params;
	int64_t req;

	memset(p, 0, sizeof(*p));
	p->idx = i;
	(void)snprintf(p->id, sizeof(p->id), "n%d", i);
	(void)snprintf(p->data, sizeof(p->data), "10.0.0.%d:5432", i + 1);
	p->healthy = 1;
	p->told_conn = -1;
	p->timer_at = SIM_NEVER;
	p->cl.conn = -1;
	p->cl.state = CL_CLOSED;
	e->path = SIM_ROOT;
	e->id = p->id;
	e->data = p->data;
	e->demote_on_start = 1;
	e->fence = s->fc.fence;
	/*
	 * The requested timeout is sometimes above what the servers grant
	 * (maxSessionTimeout): timings derived from it must follow the
	 * negotiated one.
	 */
	req = s->T;
	if (rng_permille(&s->rng, 200))
		req = s->T * rng_between(&s->rng, 2, 3);
	e->session_timeout_ms = req;
	e->hook_timeout_ms = rng_between(&s->rng, 300, 4000);
	if (rng_permille(&s->rng, 500))
		e->demote_timeout_ms = req / 4;
	else
		e->demote_timeout_ms = rng_between(&s->rng, 100, req / 3 - 1);
	e->check = rng_permille(&s->rng, 500);
	p->check = e->check;
	e->check_interval_ms = peer_draw_check_interval(s);
	e->check_fall = rng_between(&s->rng, 1, 3);
	e->check_rise = rng_between(&s->rng, 1, 3);
	e->retry_backoff_ms = rng_between(&s->rng, 100, 5000);
	e->disconnect_grace_ms = rng_permille(&s->rng, 700) ? 0 :
	    rng_between(&s->rng, 100, req);
	p->grace_set = 1;
	/* -L: settings the core has defaults for are sometimes unset. */
	if (s->lease_model && rng_permille(&s->rng, 300))
		e->demote_timeout_ms = 0;
	if (s->lease_model && rng_permille(&s->rng, 500)) {
		e->disconnect_grace_ms = PEER_GRACE_UNSET;
		p->grace_set = 0;
	}
	/* The lag the model's followers report with (0: at once). */
	e->tick_ms = s->tick_ms;
	/* Leave at least one candidate. */
	e->observer = i > 0 && rng_permille(&s->rng, 100);
	p->observer = e->observer;
	/* No draw without -P: the seeds found before stay the same. */
	e->preempt_delay_ms = -1;
	if (s->priorities) {
		e->priority = peer_draw_priority(s);
		e->preempt_delay_ms = ops_draw_preempt_delay(s);
	}
}

/* hooks.check_interval: mostly 0.5 to 5 s, a fifth of the time shorter. */
int64_t
peer_draw_check_interval(struct sim *s)
{
	return rng_permille(&s->rng, 200) ? rng_between(&s->rng, 100, 400) :
	    rng_between(&s->rng, 500, 5000);
}

/*
 * Mostly 0, some above, a few below; in 3 runs of 16 none above: heads
 * below 0 next to nodes below 0, where a marker missed reads as a 0
 * (mutant 49). Those runs are chosen by seed (9, 10 or 11 modulo 16:
 * residues the regression seeds of seeds.txt run with -P do not have),
 * and draw as many numbers as the others, so every other run keeps its
 * schedule.
 */
int64_t
peer_draw_priority(struct sim *s)
{
	if (rng_permille(&s->rng, 400))
		return 0;
	if (s->seed % 16 >= 9 && s->seed % 16 <= 11)
		return rng_between(&s->rng, -3, -1);
	return rng_between(&s->rng, -2, 9);
}

void
peer_free(struct sim *s, struct peer *p)
{
	int i;

	election_free(p->el);
	p->el = NULL;
	client_free(s, &p->cl);
	for (i = 0; i < p->ndef; i++)
		if (p->deferred[i].type == EV_S2C)
			conn_msg_free(s, p->deferred[i].p);
		else
			stall_news_free(&p->deferred[i]);
	free(p->deferred);
	p->deferred = NULL;
	p->ndef = p->capdef = 0;
}

/* The running daemon whose session is sid, or NULL. */
struct peer *
peer_of_session(struct sim *s, int64_t sid)
{
	int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].running && s->peer[i].cl.sid == sid)
			return &s->peer[i];
	return NULL;
}

int
peer_is_live_candidate(const struct peer *p)
{
	return p->running && !p->observer;
}

/*
 * -R: the process starts on the session file when it holds a session
 * (after a crash, or the image a re-exec starts, exact then), as
 * resume.c does: the session re-attached, its lease and role as hints.
 */
static void
peer_boot(struct sim *s, struct peer *p, int exact)
{
	struct el_resume r;
	int resume = s->resume && p->sf_valid;

	p->inc++;
	p->running = 1;
	p->stopped = 0;
	p->lead_failed = 0;
	p->back_armed = 0;
	p->frozen = 0;
	p->lib_live = 0;
	p->news_pending = 0;
	p->hook_on = 0;
	p->out_el = p->out_sync = 0;
	p->resign_wait = p->pause_wait = p->pause_resumed = 0;
	p->stop_ready_at = -1;
	p->timer_at = SIM_NEVER;
	p->begun_at = 0;
	p->told_connected = 0;
	p->disc_at = 0;
	p->able_at = 0;
	p->sess_gone = 0;
	p->busy = 0;
	p->nrestarts = 0;
	p->yields = 0;
	p->yields_seen = 0;
	p->yield_at = -1;
	p->h_fails = p->h_oks = 0;
	p->h_from = p->h_free = s->now;
	p->h_stop = 0;
	/* Handed over by a re-exec (reexec.c), kept if a check is still. */
	p->h_unhealthy = resume && p->rx && p->rx_unhealthy &&
	    p->params.check;
	/* After the quiet point, the configuration's tick_time is true. */
	if (s->quiet)
		p->params.tick_ms = s->tick_ms;
	p->el = election_new(&p->params);
	trace(s, p->idx, "process starts (T requested %lld ms)",
	    (long long)p->params.session_timeout_ms);
	check_start(s, p);
	election_clock(p->el, s->now);
	if (resume) {
		r = p->sf;
		r.exact = exact;
		r.unhealthy = p->rx && p->rx_unhealthy;
		election_resume(p->el, &r);
		s->pc[p->idx].resumed_lead = r.leader;
		check_hand_resume(s, p, &r);
		p->resuming = 1;
		fault_tie(s, p, TIE_RESUME, 200);
		trace(s, p->idx, "resumes session %016llx (%s, epoch %lld, "
		    "lease from %lld)", (unsigned long long)r.sid,
		    r.leader ? "leader" : "not leading", (long long)r.epoch,
		    (long long)r.lease_sent);
	}
	/* As zkelectd.c: a re-exec's pause is the new image's. */
	p->pause_handed = p->rx && p->rx_paused;
	if (p->pause_handed)
		election_pause(p->el, 1);
	p->rx = p->rx_paused = p->rx_unhealthy = 0;
	election_session_requested(p->el);
	client_open(s, p);
	if (resume)
		p->cl.sid = p->sf.sid;
	peer_step(s, p);
}

void
peer_start(struct sim *s, struct peer *p)
{
	if (p->running)
		return;
	peer_boot(s, p, 0);
}

/* The process is gone: systemd kills its cgroup, hooks included. */
static void
peer_exit(struct sim *s, struct peer *p, int send_close)
{
	int i;

	slot_abort(s, p);
	client_close(s, p, send_close);
	election_free(p->el);
	p->el = NULL;
	for (i = 0; i < p->ndef; i++)
		if (p->deferred[i].type == EV_S2C)
			conn_msg_free(s, p->deferred[i].p);
		else
			stall_news_free(&p->deferred[i]);
	p->ndef = 0;
	p->running = 0;
	p->frozen = 0;
	p->lib_live = 0;
	p->news_pending = 0;
	p->resign_wait = p->pause_wait = p->pause_resumed = 0;
	p->inc++;		/* its pending events are dropped */
}

/*
 * SIGUSR2: the same process executes again once no hook runs and no
 * operator waits (reexec.c), keeping its session; its connection closes
 * with the old image. The old image hands over whether it was paused
 * and whether its health check had failed; the new one reads the
 * configuration file, which (-H) may have gained or lost hooks.check
 * since.
 */
void
peer_reexec(struct sim *s, struct peer *p)
{
	int exact = !p->resuming;	/* a resume not confirmed: a guess */
	struct election_view v;

	if (!p->running || p->frozen || p->hook_on || p->resign_wait ||
	    p->pause_wait || !p->sf_valid)
		return;
	trace(s, p->idx, "fault: SIGUSR2, re-exec");
	election_view(p->el, &v);
	peer_exit(s, p, 0);
	p->rx = 1;
	p->rx_paused = v.paused != 0;
	p->rx_unhealthy = v.unhealthy != 0;
	if (s->reloads && rng_permille(&s->rng, 300)) {
		p->params.check = !p->params.check;
		p->check = p->params.check;
		trace(s, p->idx, "the new image's file: hooks.check %s",
		    p->check ? "added" : "removed");
	}
	peer_boot(s, p, exact);
}

void
peer_crash(struct sim *s, struct peer *p)
{
	if (!p->running)
		return;
	trace(s, p->idx, "fault: process crashes");
	check_crash(s, p);
	peer_exit(s, p, 0);
}

static void
peer_schedule(struct sim *s, struct peer *p)
{
	int64_t d = election_deadline(p->el), t;

	if (d == INT64_MAX) {
		if (p->timer_at != SIM_NEVER) {
			p->timer_at = SIM_NEVER;
			p->timer_gen++;
		}
		p->busy = 0;
		return;
	}
	if (d <= s->now) {
		/* It asked to be called now, right after saying it had
		 * nothing to do: tolerated, unless it never ends. */
		if (++p->busy > 1000)
			check_fail(s, "%s: election_deadline() stays at or "
			    "before now (%lld) after 1000 steps", p->id,
			    (long long)d);
		t = s->now + 1;
	} else {
		p->busy = 0;
		t = d;
	}
	if (t == p->timer_at)
		return;
	p->timer_at = t;
	p->timer_gen++;
	sim_push(s, t, EV_PEER_TIMER, p->idx, p->timer_gen, 0, 0, NULL);
}

static void
peer_send(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct zreq *r = zreq_new(s);
	struct zreply rep;
	int i, rc;

	if (act->path != NULL)
		sim_copy(r->path, sizeof(r->path), act->path);
	switch (act->op) {
	case EL_OP_PARENT:
		r->kind = ZR_CREATE;
		break;
	case EL_OP_CREATE:
		r->kind = ZR_CREATE;
		r->flags = 3;
		sim_copy(r->data, sizeof(r->data), act->data);
		if (!s->quiet && rng_permille(&s->rng, s->fc.create_blip))
			/* A reset while the create is on its way: its reply
			 * is lost whether or not it was applied. */
			sim_push(s, s->now + rng_between(&s->rng, 0, 12),
			    EV_FAULT, -1, F_BLIP, p->idx, 1, NULL);
		break;
	case EL_OP_MARK:
		r->kind = ZR_CREATE;
		r->flags = 1;
		break;
	case EL_OP_LIST:
	case EL_OP_CLAIMS:
		r->kind = ZR_CHILDREN;
		break;
	case EL_OP_MARKS:
		r->kind = ZR_CHILDREN;
		r->watch = 1;
		break;
	case EL_OP_WATCH_PRED:
	case EL_OP_WATCH_OWN:
	case EL_OP_LEADER:
	case EL_OP_BREADCRUMB:
		r->kind = ZR_GET;
		r->watch = 1;
		break;
	case EL_OP_LEADER_EXISTS:
	case EL_OP_CLAIM_WATCH:
	case EL_OP_CLAIM_OWN:
	case EL_OP_MARK_OWN:
	case EL_OP_CRUMB_EXISTS:
		r->kind = ZR_EXISTS;
		r->watch = 1;
		break;
	case EL_OP_ACK:
	case EL_OP_CLAIM:
	case EL_OP_RELEASE:
	case EL_OP_SET_DATA:
	case EL_OP_SW_DELETE:
	case EL_OP_UNMARK:
	case EL_OP_UNCLAIM:
		r->kind = ZR_MULTI;
		r->nmop = act->nsub;
		if (act->nsub > 0)
			r->mop = xcalloc((size_t)act->nsub, sizeof(*r->mop));
		for (i = 0; i < act->nsub; i++) {
			r->mop[i].kind = act->sub[i].kind;
			r->mop[i].version = act->sub[i].version;
			sim_copy(r->mop[i].path, sizeof(r->mop[i].path),
			    act->sub[i].path);
			if (act->sub[i].data != NULL)
				sim_copy(r->mop[i].data,
				    sizeof(r->mop[i].data), act->sub[i].data);
		}
		break;
	case EL_OP_SYNC:
		r->kind = ZR_SYNC;
		break;
	case EL_OP_NONE:
	case EL_OP_COUNT:
		check_fail(s, "%s: EL_ACT_ZK with EL_OP_NONE", p->id);
		zreq_free(s, r);
		return;
	}
	if (act->op == EL_OP_SYNC)
		p->out_sync++;
	else
		p->out_el++;
	rc = client_request(s, p, r, act->op);
	if (rc != ZOK) {
		/* As daemon.c: a refused submission completes at once. */
		memset(&rep, 0, sizeof(rep));
		rep.rc = rc;
		peer_reply(s, p, act->op, &rep);
	}
}

/* A release may be a head's yield to a higher priority: counted, traced. */
static void
peer_yields(struct sim *s, struct peer *p)
{
	struct election_view v;

	election_view(p->el, &v);
	if (v.yields == p->yields)
		return;
	p->yields = v.yields;
	s->st.yields++;
	trace(s, p->idx, "yields the head to session %016llx (priority %lld "
	    "> %lld)", (unsigned long long)v.yield_sid,
	    (long long)v.yield_prio, (long long)p->params.priority);
}

/* A write of the election's other than the release. */
static int
peer_op_writes(enum el_op op)
{
	switch (op) {
	case EL_OP_CREATE:
	case EL_OP_ACK:
	case EL_OP_CLAIM:
	case EL_OP_MARK:
	case EL_OP_UNMARK:
	case EL_OP_UNCLAIM:
	case EL_OP_SET_DATA:
	case EL_OP_SW_DELETE:
		return 1;
	default:
		return 0;
	}
}

static void
peer_perform(struct sim *s, struct peer *p, const struct el_action *act)
{
	th_action(s, p, act);
	check_action(s, p, act);
	check_ops_action(s, p, act);
	switch (act->type) {
	case EL_ACT_NONE:
		break;
	case EL_ACT_ZK:
		if (act->op == EL_OP_RELEASE) {
			peer_yields(s, p);
			fault_tie(s, p, TIE_RELEASE, 30);
		} else if (peer_op_writes(act->op))
			/* Its reply lost while the quorum applies it. */
			fault_tie(s, p, TIE_WRITE, 10);
		peer_send(s, p, act);
		break;
	case EL_ACT_HOOK:
		fault_tie(s, p, TIE_HOOK, 300);
		slot_start(s, p, act);
		break;
	case EL_ACT_CANCEL:
		/* Its window: the grace, or the moment SIGKILL takes. */
		fault_tie(s, p, TIE_CANCEL, act->ms + 20);
		slot_cancel(s, p, act);
		break;
	case EL_ACT_RESTART:
		/* A session replaced over and over is a tight loop. */
		if (p->nrestarts >= 16 && s->now - p->restarts[p->nrestarts %
		    16] < 10000)
			check_fail(s, "%s: 16 sessions replaced within %lld ms",
			    p->id, (long long)(s->now - p->restarts[
			    p->nrestarts % 16]));
		p->restarts[p->nrestarts++ % 16] = s->now;
		fault_tie(s, p, TIE_RESTART, 100);
		client_close(s, p, 1);
		p->out_el = p->out_sync = 0;
		election_restarted(p->el);
		election_session_requested(p->el);
		client_open(s, p);
		break;
	case EL_ACT_STOPPED:
		check_ops_stop_end(s, p);
		p->stopped = 1;
		p->sf_valid = 0;	/* removed on a clean stop */
		peer_exit(s, p, 1);
		/* After the faults, whoever stops is started again. */
		if (s->quiet)
			sim_push(s, s->now + rng_between(&s->rng, 0, 100),
			    EV_PEER_START, p->idx, 0, 0, 0, NULL);
		break;
	case EL_ACT_RESIGNED:
		p->resign_wait = 0;
		check_ops_resigned(s, p);
		break;
	case EL_ACT_PAUSED:
		p->pause_wait = 0;
		check_ops_paused(s, p);
		p->pause_resumed = p->pause_handed = 0;
		break;
	case EL_ACT_QUEUE:
	case EL_ACT_OUTRANKED:
	case EL_ACT_PREEMPT:
		break;		/* check_ops_action() carries them out */
	case EL_ACT_TRANSITION:
		break;		/* check_action() checks it */
	}
}

/*
 * -R: the session file after every step, as resume.c writes it: that a
 * promote or fence has begun only SIM_BEGUN_MS after it began, from a
 * timer (EV_SESSION_LATE; a frozen daemon's waits for its wake).
 */
#define SIM_BEGUN_MS 20

static void
peer_session_file(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	if (!s->resume)
		return;
	if (p->resuming && !v->resuming) {
		p->resuming = 0;
		check_resumed(s, p, v->role);
	}
	if (v->sid == 0 || p->cl.sid != v->sid)
		return;
	memset(&p->sf, 0, sizeof(p->sf));
	p->sf.sid = v->sid;
	p->sf.timeout_ms = v->session_timeout_ms;
	p->sf.lease_sent = v->lease_end != 0 ? v->lease_end -
	    v->session_timeout_ms : 0;
	p->sf.leader = v->promoted;
	if (!v->promote_begun)
		p->begun_at = 0;
	else if (p->begun_at == 0) {
		p->begun_at = s->now;
		sim_push(s, s->now + SIM_BEGUN_MS, EV_SESSION_LATE, p->idx, 0,
		    0, 0, NULL);
	}
	p->sf.promoting = v->promote_begun &&
	    s->now - p->begun_at >= SIM_BEGUN_MS;
	/*
	 * Cleared as a promote or fence begins, in the step that starts
	 * it: written here after the step, which no crash falls inside,
	 * as the daemon writes it before the hook's spawn (resume.c).
	 */
	p->sf.down = v->down;
	p->sf.claimed = v->claimed;
	p->sf.claim_seq = v->claim_seq;
	p->sf.crumb_claimed = v->crumb_claimed;
	p->sf.crumb_claim_seq = v->crumb_claim_seq;
	p->sf.epoch = v->promoted ? v->lead_epoch : v->epoch;
	p->sf_valid = 1;
}

void
peer_step(struct sim *s, struct peer *p)
{
	struct el_action act;
	struct election_view v;
	int n = 0;

	if (!p->running || p->frozen || p->in_step)
		return;
	p->in_step = 1;
	peer_clock(s, p);
	for (;;) {
		election_next(p->el, &act);
		if (act.type == EL_ACT_NONE)
			break;
		peer_perform(s, p, &act);
		if (!p->running) {
			p->in_step = 0;	/* STOPPED */
			return;
		}
		if (++n > 1000) {
			check_fail(s, "%s: election_next() gave over 1000 "
			    "actions in one step", p->id);
			break;
		}
	}
	p->in_step = 0;
	th_step(s, p);
	/* One view for every check of the step: none changes the election. */
	election_view(p->el, &v);
	check_step(s, p, &v);
	peer_session_file(s, p, &v);
	check_ops_step(s, p, &v);
	ops_switch_step(s, p);
	peer_schedule(s, p);
}

void
peer_session(struct sim *s, struct peer *p, enum el_zk state)
{
	if (stall_defer_session(s, p, state))
		return;
	/* AV's base, as the core learns of the connection (check_lease.c). */
	if (state == EL_ZK_CONNECTED)
		check_lease_connected(s, p, p->cl.sid, p->told_conn != -1 ?
		    p->told_conn : p->cl.conn);
	if (state == EL_ZK_AUTH_FAILED)
		p->auth_failed_at = s->now;	/* as the core is told */
	s->stir_at = s->now;
	peer_clock(s, p);
	trace(s, p->idx, "session %016llx %s", (unsigned long long)p->cl.sid,
	    state == EL_ZK_CONNECTED ? "connected" : state ==
	    EL_ZK_EXPIRED ? "expired" : state == EL_ZK_AUTH_FAILED ?
	    "auth failed" : "connecting");
	th_event(s, p, TH_SESSION, state, state == EL_ZK_CONNECTED ?
	    p->cl.sid : 0, NULL);
	p->sess_gone = state == EL_ZK_EXPIRED || state == EL_ZK_AUTH_FAILED ||
	    (p->sess_gone && state != EL_ZK_CONNECTED);
	if (state == EL_ZK_CONNECTED) {
		if (!p->told_connected)
			p->able_at = s->now;
		p->told_connected = 1;
	} else if (p->told_connected) {
		p->told_connected = 0;
		p->disc_at = s->now;	/* a disconnect_grace starts */
		p->grace_end = peer_grace_end(p);
		ops_timing_tie(s, p);
		p->able_at = 0;
	}
	/* As daemon.c: only CONNECTED carries the session and its T. */
	if (state == EL_ZK_CONNECTED)
		election_session(p->el, state, p->cl.sid, p->cl.timeout);
	else
		election_session(p->el, state, 0, 0);
	peer_step(s, p);
}

static void
peer_reply_now(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep)
{
	struct el_result res;

	p->reply_at = s->now;
	if (op == EL_OP_SYNC)
		p->out_sync--;
	else
		p->out_el--;
	memset(&res, 0, sizeof(res));
	res.rc = rep->rc;
	res.path = rep->path;
	res.data = rep->data;
	res.czxid = rep->czxid;
	res.owner = rep->owner;
	res.version = rep->version;
	res.children = rep->children;
	res.nchildren = rep->nchildren;
	res.has_set_version = rep->has_set_version;
	res.set_version = rep->set_version;
	trace(s, p->idx, "reply %s: %s%s%s", trace_op(op), trace_rc(rep->rc),
	    rep->path[0] != '\0' ? " " : "", rep->path);
	peer_clock(s, p);
	if (op == EL_OP_LIST && rep->rc == ZOK)
		ops_switch_listed(p, rep->children, rep->nchildren);
	th_result(s, p, op, &res);
	check_release_answer(s, p, op, rep->rc);
	check_ops_resign_rel(s, p, op, rep->rc);
	if (op == EL_OP_BREADCRUMB || op == EL_OP_CRUMB_EXISTS)
		check_crumb_heard(s, p);
	election_op_done(p->el, op, &res);
	fault_crumb_tie(s, p, op);
	peer_step(s, p);
}

/*
 * A reply to a request of the daemon's, as its loop reads it: the checks
 * that compare with what the core knows, then the core. conn: the
 * connection it came on (-1: failed by the library, no reply).
 */
void
peer_reply_pd(struct sim *s, struct peer *p, const struct cpending *pd,
    const struct zreply *rep, int conn)
{
	if (stall_defer_reply(s, p, pd, rep, conn))
		return;
	if (conn != -1) {
		check_lease_reply(s, p, pd, rep->rc, conn);
		check_hand_reply(s, p, pd->op, pd->issued);
	}
	peer_reply_now(s, p, pd->op, rep);
}

/* A request the library failed itself (no reply came: conn -1). */
void
peer_reply(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep)
{
	struct cpending pd;

	memset(&pd, 0, sizeof(pd));
	pd.op = op;
	peer_reply_pd(s, p, &pd, rep, -1);
}

void
peer_watch(struct sim *s, struct peer *p, enum wev wev, const char *path)
{
	if (stall_defer_watch(s, p, wev, path))
		return;
	trace(s, p->idx, "watch %s %s", wev == WE_DELETED ? "deleted" :
	    wev == WE_CREATED ? "created" : wev == WE_CHILD ? "children" :
	    "changed", path);
	peer_clock(s, p);
	th_event(s, p, TH_WATCH, wev == WE_DELETED, 0, path);
	check_mark_told(s, p, wev == WE_DELETED, path);
	if (wev != WE_DELETED && strcmp(path, SIM_CRUMB) == 0)
		check_crumb_heard(s, p);
	election_watch(p->el, wev == WE_DELETED, path);
	peer_step(s, p);
}

void
peer_operator(struct sim *s, struct peer *p, int cmd)
{
	static const char *names[] = { "resign", "pause", "resume", "stop",
	    "set-data", "switchover", "priority", "run-exit", "check-reload",
	    "timing-reload", "timing-heal" };
	struct election_view v;
	struct peer *q;
	int rc;

	peer_clock(s, p);
	trace(s, p->idx, "operator: %s", names[cmd]);
	th_event(s, p, TH_OPERATOR, cmd, 0, NULL);
	check_ops_operator(s, p);
	switch (cmd) {
	case OP_RESIGN:
		rc = election_resign(p->el);
		if (rc == 0 && p->resign_wait++ == 0) {
			p->resign_since = s->now;
			p->resign_rel = p->resign_due = 0;
		}
		trace(s, p->idx, "operator: resign -> %s", rc == 0 ?
		    "accepted" : "error not-leader");
		break;
	case OP_PAUSE:
		election_pause(p->el, 1);
		if (p->pause_wait++ == 0)
			p->pause_since = s->now;
		break;
	case OP_RESUME:
		/* Or while the pause a re-exec handed over went on. */
		p->pause_resumed = p->pause_wait > 0 || p->pause_handed;
		election_pause(p->el, 0);
		break;
	case OP_STOP:
		s->pc[p->idx].rh_stop = 1;	/* (RH) */
		p->h_stop = 1;		/* (health): no check any more */
		election_stop(p->el);
		break;
	case OP_SET_DATA:
		(void)snprintf(p->data, sizeof(p->data), "10.0.%d.%d:5432",
		    (int)rng_between(&s->rng, 1, 250), p->idx + 1);
		p->params.data = p->data;
		election_set_data(p->el, p->data);
		break;
	case OP_PRIORITY:
		/* A reload with another priority. */
		p->params.priority = peer_draw_priority(s);
		p->prio_at = s->now;
		/* A hold after a handover is the core's to keep or not. */
		if (p->params.priority <= 0)
			s->pc[p->idx].hold_from = 0;
		trace(s, p->idx, "operator: priority %lld",
		    (long long)p->params.priority);
		election_reconfigure(p->el, &p->params);
		break;
	case OP_SWITCHOVER:
		/* To another daemon's node as it knows it (maybe gone). */
		q = &s->peer[rng_between(&s->rng, 0, s->npeers - 1)];
		if (q == p || q->el == NULL)
			break;
		election_view(q->el, &v);
		if (v.node == NULL)
			break;
		rc = election_switchover(p->el, v.node, "switchover");
		trace(s, p->idx, "operator: switchover to %s (%s) -> %s",
		    q->id, v.node, rc == 0 ? "accepted" : "refused");
		if (rc == 0)
			ops_switch_begin(s, p, v.node, q->id, 0);
		break;
	case OP_RUN_EXIT:
	case OP_CHECK_RELOAD:
	case OP_TIMING_RELOAD:
	case OP_TIMING_HEAL:
		ops_operator(s, p, cmd);
		break;
	}
	peer_step(s, p);
}


void
peer_dispatch(struct sim *s, struct peer *p, const struct ev *ev)
{
	struct election_view v;
	struct conn *c;

	switch (ev->type) {
	case EV_S2C:
		c = conn_get(s, ev->a);
		if (ev->b == p->cl.gen && c != NULL)
			client_receive(s, p, c, ev->p);
		conn_msg_free(s, ev->p);
		break;
	case EV_CL_PING:
	case EV_CL_RECV:
	case EV_CL_CONNECT:
	case EV_CL_CONNTMO:
		client_timer(s, p, ev);
		break;
	case EV_PEER_TIMER:
		if (ev->a != p->timer_gen)
			break;
		p->timer_at = SIM_NEVER;
		peer_step(s, p);
		break;
	case EV_HOOK_KILL:
		slot_kill(s, p, ev->a);
		break;
	case EV_HOOK_REAP:
		slot_reap(s, p, ev->a);
		break;
	case EV_OPERATOR:
		peer_operator(s, p, ev->a);
		break;
	case EV_QUEUE:
		ops_queue_answer(s, p, ev);
		break;
	case EV_SESSION_LATE:
		election_view(p->el, &v);
		peer_session_file(s, p, &v);
		break;
	case EV_NEWS:
		stall_news(s, p, ev);
		break;
	default:
		break;
	}
}

void
peer_event(struct sim *s, struct peer *p, const struct ev *ev)
{
	int live = p->running && ev->inc == p->inc;

	switch (ev->type) {
	case EV_PEER_START:
		if (!p->running)
			peer_start(s, p);
		return;
	case EV_WAKE:
		if (live)
			freeze_wake(s, p, ev->a);
		return;
	case EV_HOOK_EXIT:
		if (live)
			slot_exit(s, p, ev->a, ev->b);
		return;
	default:
		break;
	}
	if (!live) {
		if (ev->type == EV_S2C)
			conn_msg_free(s, ev->p);
		return;
	}
	if (p->frozen && !stall_library_event(p, ev)) {
		freeze_defer(p, ev);
		return;
	}
	peer_dispatch(s, p, ev);
}
