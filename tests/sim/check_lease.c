/*
 * The lease against the model's truth, and availability:
 *  (L1) the core's lease end is never later than the earliest moment the
 *       quorum could expire the session: its expiry as the quorum's
 *       leader has it now, from the touches it has really heard (a
 *       follower's come with its next report, and may never come). No
 *       session can expire while the ensemble elects a leader, and the
 *       new leader renews them all, so nothing is checked meanwhile.
 *  (L2) a demote that ends a leadership starts with its whole budget
 *       (act->ms) before that moment; a promote or fence starts before
 *       the core's own demote point and with a whole demote's budget
 *       before that moment too.
 *  (AV) with -A: no needless demote. A demote ending a leadership with
 *       reason disconnected or lease-lost is needless when a lease done
 *       right, from what the daemon had received in that session, still
 *       had more than a whole demote before it: see check_lease_demote().
 *  (room) with -A: a promote or fence the lease kills ran at least T/8,
 *       the room it is owed before the demote point: check_lease_room().
 */
#include <stdio.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"

/* The core's margin after a demote's SIGKILL (EL_LEASE_MARGIN_MS). */
#define CHECK_LEASE_MARGIN_MS 100
/* What AV allows for the daemon's timers and the model's rounding. */
#define CHECK_AV_SLACK_MS 50
/* (G): a hook killed in a demote's way, reaped (tied faults: 1-30 ms). */
#define CHECK_GRACE_SLACK_MS 50
/* (room): the kill of a promote its lease left no room (the timers). */
#define CHECK_ROOM_SLACK_MS 10

/*
 * The earliest moment the quorum could expire session sid: SIM_NEVER
 * while nothing can (an election; a session closed by its own daemon).
 */
static int64_t
check_lease_expiry(struct sim *s, int64_t sid)
{
	struct qsession *qs = quorum_session(s, sid);

	if (qs == NULL || s->qu.electing)
		return SIM_NEVER;
	if (qs->live)
		return qs->expire_at;
	return qs->expired_at != 0 ? qs->expired_at : SIM_NEVER;
}

/*
 * The demote hook's budget the configuration gives (the contract's
 * hooks.demote_timeout): T/4 of the negotiated timeout when unset or at
 * or above T/3 of it.
 */
static int64_t
check_lease_budget(const struct peer *p, int64_t T)
{
	int64_t d = p->params.demote_timeout_ms;

	if (d == 0 || d * 3 >= T)
		d = T / 4;
	return d > 0 ? d : 1;
}

/*
 * (DT) What the daemon leads with follows its configuration at once,
 * reloads included: the demote's budget, the report lag of the
 * configured tick_time, and no lease where T is below 2 ticks.
 */
static void
check_lease_config(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	int64_t T = v->session_timeout_ms, tick = p->params.tick_ms;
	int below = tick > 0 && T < 2 * tick;

	if (v->lease_error != NULL)
		s->pc[p->idx].no_lease = 1;

	if (v->demote_timeout_ms != check_lease_budget(p, T))
		check_fail(s, "(DT) %s: demotes with %lld ms, but "
		    "hooks.demote_timeout %lld ms with T %lld ms gives %lld",
		    p->id, (long long)v->demote_timeout_ms,
		    (long long)p->params.demote_timeout_ms, (long long)T,
		    (long long)check_lease_budget(p, T));
	if (v->report_lag_ms != tick / 2)
		check_fail(s, "(DT) %s: a report lag of %lld ms, but "
		    "zookeeper.tick_time is %lld ms", p->id,
		    (long long)v->report_lag_ms, (long long)tick);
	if (below != (v->lease_error != NULL &&
	    strcmp(v->lease_error, "timeout-below-2-ticks") == 0))
		check_fail(s, "(DT) %s: lease_error %s, but T %lld ms and "
		    "zookeeper.tick_time %lld ms", p->id, v->lease_error != NULL
		    ? v->lease_error : "none", (long long)T, (long long)tick);
}

/* (L1) and (DT), for one daemon, after each of its steps. */
void
check_lease_step(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	int64_t e;

	check_lease_config(s, p, v);
	/* A check killed for a demote that a renewal took back. */
	if (s->pc[p->idx].av_cut_check && v->role == ROLE_LEADER)
		s->pc[p->idx].av_cut_at = 0;

	/* Woke past its demote point, but a buffered reply renewed it. */
	if (s->pc[p->idx].av_woke_late && v->demote_at > s->now &&
	    v->lease_end > s->pc[p->idx].av_freeze_lease)
		s->pc[p->idx].av_woke_late = 0;
	if (v->lease_end == 0 || v->sid == 0)
		return;
	e = check_lease_expiry(s, v->sid);
	if (v->lease_end > e)
		check_fail(s, "(L1) %s: lease_end %lld, but the quorum could "
		    "expire session %016llx at %lld", p->id,
		    (long long)v->lease_end, (unsigned long long)v->sid,
		    (long long)e);
}

/*
 * (G) disconnect_grace is an upper bound too: a daemon whose application
 * leads, told of a disconnection and of no connection since, has started
 * its demote once the grace has run from that moment (from its waking,
 * if it was frozen then), give or take the kill of a hook in the demote's
 * way (the tied faults' slow SIGKILLs take up to 30 ms). A disconnection
 * the core forgot (told while a promote ran, say) leaves a leader that
 * rides on to its lease's end against its configuration.
 */
void
check_lease_grace(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	int64_t g = p->params.disconnect_grace_ms, from;

	if (!v->promoted || p->grace_end == SIM_NEVER || p->told_connected ||
	    p->disc_at == 0)
		return;
	from = p->grace_end;
	if (p->woke_at > from)
		from = p->woke_at;
	if (s->now <= from + CHECK_GRACE_SLACK_MS)
		return;
	check_fail(s, "(G) %s: leads at %lld, %lld ms into a disconnection "
	    "(told at %lld), past its disconnect_grace of %lld (ended at "
	    "%lld)", p->id, (long long)s->now, (long long)(s->now - p->disc_at),
	    (long long)p->disc_at, (long long)g, (long long)p->grace_end);
}

/* (L1) when the quorum expires a session: nobody's lease may go on. */
void
check_lease_expired(struct sim *s, int64_t sid)
{
	struct election_view v;
	int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].running && s->peer[i].el != NULL) {
			election_view(s->peer[i].el, &v);
			check_lease_step(s, &s->peer[i], &v);
		}
	(void)sid;
}

/* (L2) at a promote's or fence's start. */
void
check_lease_promote(struct sim *s, struct peer *p, enum hook_kind kind)
{
	struct election_view v;
	int64_t e, d;

	election_view(p->el, &v);
	if (v.demote_at != 0 && s->now >= v.demote_at)
		check_fail(s, "(L2) %s: %s starts at or past its demote point "
		    "%lld", p->id, trace_hook(kind), (long long)v.demote_at);
	s->pc[p->idx].rm_ran = 0;
	s->pc[p->idx].rm_start = s->now;
	s->pc[p->idx].rm_T = v.session_timeout_ms;
	s->pc[p->idx].rm_budget = v.demote_timeout_ms;
	s->pc[p->idx].rm_lag = v.report_lag_ms;
	e = check_lease_expiry(s, v.sid);
	d = check_lease_budget(p, v.session_timeout_ms);
	if (s->now + d + CHECK_LEASE_MARGIN_MS > e)
		check_fail(s, "(L2) %s: %s starts with no room for a demote of "
		    "%lld ms before the quorum could expire session %016llx "
		    "at %lld", p->id, trace_hook(kind), (long long)d,
		    (unsigned long long)v.sid, (long long)e);
}

/* Whether rc is the quorum's answer (as el_answered()). */
static int
check_lease_answered(int rc)
{
	switch (rc) {
	case ZOK:
	case ZNONODE:
	case ZNODEEXISTS:
	case ZBADVERSION:
	case ZNOTEMPTY:
	case ZNOCHILDRENFOREPHEMERALS:
		return 1;
	}
	return 0;
}

/*
 * The report lag a daemon told the ensemble's tick could allow for: a
 * follower reports its touches every tick/2. Without the tick modelled,
 * ZooKeeper's default tick (2 s, as T allows).
 */
static int64_t
check_lease_lag(struct sim *s, const struct peer *p)
{
	int64_t tick = s->tick_ms;

	/* A tick_time configured above the servers' is waited for. */
	if (p->params.tick_ms > tick)
		tick = p->params.tick_ms;
	if (tick == 0)
		tick = s->T / 2 < 2000 ? s->T / 2 : 2000;
	return tick / 2 + 20;
}

static void
check_lease_base(struct pcheck *pc, int64_t base, const char *from)
{
	if (base > pc->av_base) {
		pc->av_base = base;
		pc->av_from = from;
	}
}

/* A new session is asked for now. */
void
check_lease_requested(struct sim *s, struct peer *p)
{
	s->pc[p->idx].av_req = s->now;
}

/*
 * A connection established for session sid: a new session runs from when
 * it was asked for; a known one was revalidated by the quorum's leader,
 * which touched it after the reconnection was asked for, so after every
 * request answered on an older connection was sent. (The send time, not
 * the reply's: a daemon reads its clock when it gets to a reply, maybe
 * after the library asked for the new connection.)
 */
void
check_lease_connected(struct sim *s, struct peer *p, int64_t sid, int conn)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (sid != pc->av_sid) {
		pc->av_sid = sid;
		pc->av_base = pc->av_req;
		pc->av_from = "request";
		pc->av_answered = pc->av_req;
	} else
		check_lease_base(pc, pc->av_answered, "reconnect");
	pc->av_conn = conn;
	pc->av_nconf = 0;
}

/*
 * A reply: a write's or sync's answer from the quorum, sent at `sent`,
 * pairs with an earlier one on the same connection answered at least a
 * report lag before it was sent: that earlier one's touch was reported
 * to a live session.
 */
void
check_lease_reply(struct sim *s, struct peer *p, const struct cpending *pd,
    int rc, int conn)
{
	struct pcheck *pc = &s->pc[p->idx];
	int64_t lag = check_lease_lag(s, p);
	int i;

	if (p->cl.sid != pc->av_sid || pd->issued == 0)
		return;
	if (pd->issued > pc->av_answered)
		pc->av_answered = pd->issued;
	if ( !check_lease_answered(rc) || (pd->kind !=
	    ZR_SYNC && pd->kind != ZR_CREATE && pd->kind != ZR_MULTI))
		return;
	if (conn != pc->av_conn) {
		pc->av_conn = conn;
		pc->av_nconf = 0;
	}
	for (i = pc->av_nconf - 1; i >= 0; i--)
		if (pc->av_conf[i].replied + lag <= pd->issued) {
			check_lease_base(pc, pc->av_conf[i].sent, "pair");
			break;
		}
	if (pc->av_nconf == 16) {
		memmove(&pc->av_conf[0], &pc->av_conf[1],
		    15 * sizeof(pc->av_conf[0]));
		pc->av_nconf--;
	}
	pc->av_conf[pc->av_nconf].sent = pd->issued;
	pc->av_conf[pc->av_nconf].replied = s->now;
	pc->av_nconf++;
}

/* A freeze: the core's demote point then, for AV's excuse at the wake. */
void
check_lease_freeze(struct sim *s, struct peer *p)
{
	struct election_view v;

	election_view(p->el, &v);
	s->pc[p->idx].av_freeze_at = v.demote_at;
	s->pc[p->idx].av_freeze_lease = v.lease_end;
}

void
check_lease_wake(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (pc->av_freeze_at != 0 && s->now >= pc->av_freeze_at)
		pc->av_woke_late = 1;
}

/*
 * (room) A promote or fence killed now, v the view then: how long it ran
 * if that is short of T/8, the room the contract gives one before its
 * demote point, with the lease's settings as they were at its start (a
 * reload may bring the demote point closer); the demote's reason tells
 * whether the lease killed it (check_lease_room()).
 */
static void
check_lease_room_cut(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	struct pcheck *pc = &s->pc[p->idx];
	int64_t ran = s->now - pc->rm_start;

	pc->rm_ran = 0;
	if (pc->rm_start == 0 || v->session_timeout_ms != pc->rm_T ||
	    v->demote_timeout_ms != pc->rm_budget ||
	    v->report_lag_ms != pc->rm_lag)
		return;
	if (ran + CHECK_ROOM_SLACK_MS < pc->rm_T / 8)
		pc->rm_ran = ran > 0 ? ran : 1;
}

/*
 * (room) with -A, at a demote after a promote or fence was killed: one
 * killed by the lease (lease-lost, or disconnected with no
 * disconnect_grace configured) had T/8 before its demote point when it
 * started (the man page: no promote or fence starts without room in its
 * lease); one killed sooner was started into a lease running out, a
 * needless failover where waiting for a renewal would have let a whole
 * promote go ahead (a fourteenth blind round's miss).
 */
static void
check_lease_room(struct sim *s, struct peer *p, const char *why)
{
	struct pcheck *pc = &s->pc[p->idx];
	int64_t ran = pc->rm_ran;

	pc->rm_ran = 0;
	if (ran == 0 || (strcmp(why, "lease-lost") != 0 &&
	    (strcmp(why, "disconnected") != 0 || p->grace_set)))
		return;
	s->st.needless++;
	if (s->avail)
		check_fail(s, "(room) %s: a promote or fence started at %lld "
		    "killed by its lease (reason %s) %lld ms later, short of "
		    "the T/8 (%lld ms) of room it is owed", p->id,
		    (long long)pc->rm_start, why, (long long)ran,
		    (long long)(pc->rm_T / 8));
}

/*
 * A promote or fence killed (at the demote point), or a check killed to
 * make way for a demote: the demote that follows was decided now, on what
 * the daemon knew now (its base, its budget, its demote point), even if
 * a reply read or a reload taken in the same instant changes them before
 * the demote starts.
 */
void
check_lease_cancel(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (!p->hook_on)
		return;
	election_view(p->el, &v);
	if (pc->resumed_lead && v.demote_at != 0 && (pc->rs_point == 0 ||
	    v.demote_at < pc->rs_point))
		pc->rs_point = v.demote_at;
	if (pc->av_cut_at != 0)
		return;
	if (p->hook_kind != HOOK_PROMOTE && p->hook_kind != HOOK_FENCE &&
	    (p->hook_kind != HOOK_CHECK || v.role != ROLE_DEMOTING))
		return;
	if (p->hook_kind != HOOK_CHECK)
		check_lease_room_cut(s, p, &v);
	pc->av_cut_at = s->now;
	pc->av_cut_base = pc->av_base;
	pc->av_cut_from = pc->av_from;
	pc->av_cut_budget = check_lease_budget(p, v.session_timeout_ms);
	pc->av_cut_check = p->hook_kind == HOOK_CHECK;
}

/*
 * (RS) -R: a daemon that resumed its session as the leader leads on
 * without a hook (the contract's restart without failover). At the first
 * demote since, a startup one comes only once its own lease leaves no
 * room, as its view tells, or once its session is gone. The truth cannot
 * judge it: the process cannot know what its predecessor's library
 * touched after the session file's last line.
 */
void
check_lease_resumed(struct sim *s, struct peer *p, const char *why)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (!pc->resumed_lead)
		return;
	pc->resumed_lead = 0;
	election_view(p->el, &v);
	/*
	 * Decided when a check was killed for it, maybe before a reply
	 * read since renewed the lease: its demote point then counts.
	 */
	if (pc->rs_point != 0 && pc->rs_point < v.demote_at)
		v.demote_at = pc->rs_point;
	pc->rs_point = 0;
	if (p->sess_gone || why == NULL ||
	    strcmp(why, "startup") != 0 ||
	    v.demote_at == 0 || s->now >= v.demote_at)
		return;
	s->st.needless++;
	if (s->avail)
		check_fail(s, "(RS) %s: resumed as the leader of session "
		    "%016llx, demotes at the start at %lld, but its lease "
		    "holds to its demote point %lld", p->id,
		    (unsigned long long)v.sid, (long long)s->now,
		    (long long)v.demote_at);
}

/*
 * (L2) A demote that starts with less than its budget (and the margin)
 * left of the core's own lease, behind a killed hook or after a reload,
 * is given no more than what is left less the margin: it ends by then.
 */
static void
check_lease_demote_budget(struct sim *s, struct peer *p,
    const struct el_action *act)
{
	struct election_view v;
	int64_t left;

	election_view(p->el, &v);
	left = v.lease_end - CHECK_LEASE_MARGIN_MS - s->now;
	if (v.lease_end != 0 && left > 0 && act->ms > left)
		check_fail(s, "(L2) %s: demote given %lld ms, past its lease's "
		    "end %lld less the margin", p->id, (long long)act->ms,
		    (long long)v.lease_end);
}

/*
 * (L2) and (AV) at the start of a demote that ends a leadership of the
 * session pc->sid. AV: with a lease done right the daemon demotes at
 * av_base + T - demote_timeout - margin, where av_base is the latest of:
 * the session's request (a new session), the send time of the latest
 * request a server answered before a reconnection (the leader touched the
 * session when revalidating it), and each
 * confirmation's send time once a confirmation sent a report lag after
 * its reply came back. Before that point, minus a slack, a demote for
 * `disconnected` or `lease-lost` is needless, unless the daemon's
 * disconnect_grace is set in its configuration (then `disconnected` is
 * what was asked for, but not before that grace has run from the moment
 * the core was told of the disconnection).
 */
void
check_lease_demote(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;
	int64_t e, at, t = s->now, base = pc->av_base, budget = -1;
	const char *why = act->reason != NULL ? act->reason : "";
	const char *from = pc->av_from;
	int late = pc->av_woke_late;

	if (pc->av_cut_at != 0) {
		t = pc->av_cut_at;
		base = pc->av_cut_base;
		from = pc->av_cut_from;
		budget = pc->av_cut_budget;
	}
	pc->av_cut_at = 0;
	pc->av_woke_late = 0;
	check_lease_demote_budget(s, p, act);
	check_lease_room(s, p, why);
	if (strcmp(why, "startup") == 0)
		return;
	e = check_lease_expiry(s, pc->sid);
	if (!pc->excused && s->now + act->ms > e)
		check_fail(s, "(L2) %s: demote (reason %s) starts at %lld with "
		    "%lld ms to run, but the quorum could expire session "
		    "%016llx at %lld", p->id, why, (long long)s->now,
		    (long long)act->ms, (unsigned long long)pc->sid,
		    (long long)e);
	/*
	 * A grace counts from a disconnection told by the decision: one told
	 * after the kill of a promote (the lease's) only names the demote
	 * (seed 5455000070 of -k 2000 -W -P -H -A).
	 */
	if (strcmp(why, "disconnected") == 0 && p->disc_at != 0 &&
	    p->disc_at <= t && p->grace_end != SIM_NEVER &&
	    t < p->grace_end) {
		s->st.needless++;
		if (s->avail)
			check_fail(s, "(AV) %s: needless demote (reason "
			    "disconnected) at %lld, %lld ms into its "
			    "disconnect_grace of %lld (disconnected at %lld, "
			    "its grace ends at %lld)", p->id, (long long)t,
			    (long long)(t - p->disc_at),
			    (long long)p->params.disconnect_grace_ms,
			    (long long)p->disc_at, (long long)p->grace_end);
		return;
	}
	/* Its grace had ended (a reload since does not take that back). */
	if (strcmp(why, "disconnected") == 0 && p->disc_at != 0 &&
	    p->grace_end != SIM_NEVER)
		return;
	if (pc->av_sid != pc->sid || base == 0 || late)
		return;
	if (strcmp(why, "lease-lost") != 0 && (strcmp(why, "disconnected") !=
	    0 || p->grace_set))
		return;
	election_view(p->el, &v);
	/* A reload left no room for a lease ((DT) checks why). */
	if (pc->no_lease || v.lease_error != NULL)
		return;
	if (budget < 0)
		budget = check_lease_budget(p, v.session_timeout_ms);
	at = base + v.session_timeout_ms - budget - CHECK_LEASE_MARGIN_MS;
	if (t >= at - CHECK_AV_SLACK_MS)
		return;
	/* Counted (-S) whether or not AV is checked. */
	s->st.needless++;
	if (s->avail)
		check_fail(s, "(AV) %s: needless demote (reason %s, %s): the "
		    "quorum touched session %016llx after %lld (%s), a lease "
		    "done right demotes from %lld", p->id, why, v.zk ==
		    EL_ZK_CONNECTED ? "connected" : "not connected",
		    (unsigned long long)pc->sid, (long long)base, from,
		    (long long)at);
}
