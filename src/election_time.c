/*
 * The election's clock: the lease, the keepalive sync, the grace after a
 * disconnect, backoffs, and the health check's schedule. Time comes in
 * through election_clock(); election_deadline() says when it must next be
 * looked at, so that the daemon (one timer) and the simulator (a virtual
 * clock) wake it alike.
 *
 * The lease. lease_end = s + T: s is a time no later than a touch of our
 * session that the quorum's leader is known to have heard (it then
 * cannot expire the session before that touch + T; its SessionTracker
 * only rounds the expiry up to a tick). Three things give such an s:
 *
 * 1. A new session: the quorum made it after we asked for it, so s is
 *    the moment we asked (election_session_requested()).
 * 2. Two confirmations on one connection (el_confirmed()). Only a sync or
 *    a write counts: a ping or a read is answered by the one server we
 *    talk to, which may itself be cut off from its quorum while the
 *    quorum expires our session. A follower tells the leader of the
 *    sessions it heard from when the leader pings it, every tickTime/2
 *    (Leader.lead()'s loop, Learner.ping()'s touch table, LearnerHandler
 *    on PING: touch); a follower cut off before its next ping never
 *    tells. So a confirmation's own touch counts only once a later
 *    confirmation on the same connection, sent at least a report lag
 *    (tick/2) after the first was answered, shows the server still in
 *    touch with the quorum: s is then the first one's send time.
 * 3. A reconnect of the session (el_reconnected()). The server a client
 *    reconnects to revalidates the session with the quorum's leader
 *    before it answers the handshake (ZooKeeperServer.reopenSession ->
 *    revalidateSession; on a follower Learner.validateSession sends
 *    REVALIDATE, and the leader's LearnerHandler answers it through
 *    checkIfValidGlobalSession, which touches the session; the leader
 *    itself touches it in its own tracker). A session the quorum expired
 *    is refused, so CONNECTED with the same session id means the
 *    quorum's leader touched it after the reconnect was asked for, and
 *    directly: no report lag. Its lease base must precede that request.
 *    Our own clock readings of the library's events are late (we read
 *    the clock when we get to its news), so only our send times are safe
 *    lower bounds: a request is sent no earlier than we recorded it, its
 *    reply came on an older connection (the library delivers the new
 *    connection's event before anything sent on it), that connection was
 *    gone before the library asked for the new one, and the touch came
 *    after. So s = the send time of the latest request any server
 *    answered before the reconnect (answered_sent). A read-only server
 *    revalidates nothing with a quorum: READONLY gives no lease.
 *
 * The first two rest on ZooKeeper's quorum being what answers a sync or a
 * revalidation, as the contract does. The report lag comes from the
 * ensemble's real tickTime (zookeeper.tick_time), never from T: ZooKeeper
 * lets minSessionTimeout go below 2 ticks, and then tick/2 > T/4. When T
 * leaves no room for a lease with that tick (T < 2 ticks, or the demote's
 * budget and the lag leave a fresh lease too short to promote in), the
 * daemon stays out of the queue and says why (lease_error).
 *
 * A leader must have finished its demote hook by lease_end, so it starts
 * demoting at lease_end minus the demote hook's budget (its timeout, at
 * which its group is SIGKILLed) minus a small margin, connected or not
 * (reason lease-lost). That decision is taken back when a reply read
 * after the clock (a wake from a freeze) renews the lease before the
 * demote has started, and when a fence killed for it ends with nothing
 * promoted; a promote killed for it is always undone by the demote.
 * The keepalive sync goes when it can renew the
 * lease: a report lag after the last confirmation came. So a leader that
 * stops hearing the quorum right after a confirmation leads on for
 * W = T - max(tick/2, T/10) - demote_timeout - 100 ms - two round trips
 * (6.4 s for T = 10 s, tickTime 2 s, demote_timeout T/4), and a reconnect
 * inside W renews the lease from the last reply before it. The lease
 * belongs to a session: a new session starts without one.
 */
#include <stdint.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"

#ifdef EL_MUTANTS
int el_mutant;
#endif

int64_t
el_lease_end(const struct election *el)
{
	if (!el->lease_known)
		return INT64_MIN;
	return el->lease_sent + el->timeout_ms;
}

int64_t
el_demote_point(const struct election *el)
{
	if (!el->lease_known)
		return INT64_MIN;
	if (EL_MUTANT(8))
		return el_lease_end(el);
	return el_lease_end(el) - el->demote_ms - EL_LEASE_MARGIN_MS;
}

/*
 * What a demote asked for with the budget ms may take when it starts now:
 * it must be over by the lease's end, less the margin. At the demote
 * point that is its whole budget; a reload that raised
 * hooks.demote_timeout past what the lease has left, or a start held up
 * (a killed hook in the way, the daemon's hooks.run or failed spawns),
 * gets what is left. Without a lease (none yet, or the session expired),
 * or past its end (a freeze), nothing is left to keep: the whole budget,
 * and *late (unless NULL) says whether the end was passed.
 */
int64_t
election_demote_budget(const struct election *el, int64_t ms, int *late)
{
	int64_t left;

	if (late != NULL)
		*late = 0;
	if (!el->lease_known || EL_MUTANT(127))
		return ms;
	left = el_lease_end(el) - (EL_MUTANT(130) ? 0 : EL_LEASE_MARGIN_MS) -
	    el->now;
	if (left > 0)
		return left < ms ? left : ms;
	if (late != NULL)
		*late = 1;
	return ms;
}

/* Too little lease left to lead: a leader must start demoting now. */
int
el_lease_short(const struct election *el)
{
	return el->now >= el_demote_point(el);
}

/*
 * Whether a write's reply came from the quorum: the server answered it,
 * errors included (a failed write is committed as an error transaction).
 */
int
el_answered(int rc)
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
 * Whether a server sent rc: the quorum's answers, and the refusals a
 * server gives of its own (an ACL without the right, a bad request). Any
 * of them proves the request was sent on a connection that was still up,
 * which is all a reconnect's lease needs (el_reconnected()).
 */
int
el_server_answered(int rc)
{
	switch (rc) {
	case ZNOAUTH:
	case ZINVALIDACL:
	case ZBADARGUMENTS:
		return !EL_MUTANT(141);
	}
	return el_answered(rc);
}

/* The lease now rests on a touch no earlier than base. */
static void
el_lease_from(struct election *el, int64_t base)
{
	if (!el->lease_known || base > el->lease_sent)
		el->lease_sent = base;
	el->lease_known = 1;
	if (el->now < el_lease_end(el))
		el->lease_lapsed = 0;
	el_lease_regained(el);
}

/*
 * A leader that read the clock past its demote point before it read a
 * reply renewing the lease (a wake from a freeze, a buffered reply), or a
 * reload that moves the demote point later (a shorter demote_timeout),
 * leads on, as if it had read them in the other order: no demote has
 * started yet. A promote or fence already killed for it still ends in a
 * demote (election_hook_done()).
 */
void
el_lease_regained(struct election *el)
{
	if (el->conn_lost && (strcmp(el->conn_lost_why, "lease-lost") == 0 ||
	    EL_MUTANT(145)) && !el_lease_short(el) && !(el->hook_cancelled &&
	    (el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE)))
		el->conn_lost = 0;
}

/* A server answered a request sent then (its reply is in). */
void
el_answered_sent(struct election *el, int64_t sent)
{
	if (sent > el->answered_sent)
		el->answered_sent = sent;
}

/*
 * The session is connected again (not read-only): the quorum's leader
 * touched it after the reconnect was asked for, which was after every
 * reply we have (see the top of this file).
 */
void
el_reconnected(struct election *el)
{
	if (EL_MUTANT(25))
		el->answered_sent = el->now;
	if (el->answered_sent != INT64_MIN)
		el_lease_from(el, el->answered_sent);
}

/*
 * A request the quorum confirmed (a sync or a write), sent at `sent` and
 * answered now. Its own touch of the session may never reach the quorum:
 * our server reports the sessions it heard from at its next ping, and
 * may be cut off before it. But a confirmation proves the server was in
 * touch with the quorum when it was answered, and that the session was
 * alive then. So a confirmation sent at least a report lag (tick/2) after
 * an earlier one on the same connection was answered proves that the
 * earlier one's touch was reported to a live session: the quorum cannot
 * expire it before that one's send time + T. The lease rests on that
 * earlier send time. A first confirmation, after a silence or on a new
 * connection, gives nothing by itself.
 */
void
el_confirmed(struct election *el, int64_t sent)
{
	int64_t lag = el->lag_ms, base = 0;
	int i, found = 0;

	if (el->conf_conn != el->conn_gen) {
		el->nconf = 0;
		el->conf_conn = el->conn_gen;
	}
	for (i = el->nconf - 1; i >= 0; i--)
		if ((EL_MUTANT(27) ? el->conf[i].replied - lag :
		    el->conf[i].replied + lag) <= sent) {
			base = EL_MUTANT(26) ? el->conf[i].replied :
			    el->conf[i].sent;
			found = 1;
			break;
		}
	if (EL_MUTANT(14)) {
		base = sent - lag;
		found = 1;
	}
	if (found) {
		/* Older confirmations can pair no better: they go. */
		if (!EL_MUTANT(14) && i > 0) {
			el->nconf -= i;
			memmove(&el->conf[0], &el->conf[i],
			    (size_t)el->nconf * sizeof(el->conf[0]));
		}
		el_lease_from(el, base);
	}
	el->confirmed_at = el->now;
	el_answered_sent(el, EL_MUTANT(122) ? el->now : sent);
	if (el->nconf == EL_CONF_MAX) {
		el->nconf--;
		memmove(&el->conf[0], &el->conf[1],
		    (size_t)el->nconf * sizeof(el->conf[0]));
	}
	el->conf[el->nconf].sent = sent;
	el->conf[el->nconf].replied = el->now;
	el->nconf++;
}

/*
 * Leave the queue (an ordered release if leading) for a reason of our
 * own, our node made or on its way.
 */
static void
el_leave_queue(struct election *el, const char *why)
{
	if (el->release_pending)
		return;
	if (el->node != NULL || el->create_unknown ||
	    el_pipe_has(el, EL_OP_CREATE))
		el_release_ask(el, why);
}

/*
 * Whether T leaves room for a lease with this tick: ZooKeeper's own floor
 * of 2 ticks (below it the report lag exceeds T/4), and a fresh lease
 * must still leave a promote its room before the demote point.
 */
static const char *
el_lease_check(const struct election *el)
{
	if (el->tick_ms > 0 && el->timeout_ms < EL_MIN_TICKS * el->tick_ms)
		return "timeout-below-2-ticks";
	if (el->timeout_ms - el->lag_ms - el->demote_ms - EL_LEASE_MARGIN_MS <=
	    el->timeout_ms / EL_PROMOTE_ROOM_DIV)
		return "no-room-for-lease";
	return NULL;
}

/*
 * The demote hook must end before the session can expire. Unset, its
 * budget is T/4 of the negotiated timeout; an explicit demote_timeout at
 * or above T/3 of it is clamped to T/4 (the daemon warns). Where T leaves
 * no room for a lease, the daemon leaves the queue until it does.
 */
void
el_set_timeout(struct election *el, int64_t timeout_ms)
{
	if (timeout_ms > 0)
		el->timeout_ms = timeout_ms;
	el->demote_clamped = el->demote_cfg_ms != 0 &&
	    el->demote_cfg_ms * 3 >= el->timeout_ms;
	el->demote_ms = el->demote_cfg_ms != 0 && !el->demote_clamped ?
	    el->demote_cfg_ms : el->timeout_ms / 4;
	if (el->demote_ms < 1)
		el->demote_ms = 1;
	el->lag_ms = el->tick_ms / 2;
	el->lease_error = el_lease_check(el);
	if (el->lease_error != NULL)
		el_leave_queue(el, "lease-lost");
}

/*
 * When the next keepalive sync is due: as soon as it can renew the lease,
 * a report lag after the last confirmation (so that the two pair up), but
 * no more than EL_SYNCS_PER_T per T.
 */
static int64_t
el_sync_at(const struct election *el)
{
	int64_t t, step = el->timeout_ms / EL_SYNCS_PER_T /
	    (EL_MUTANT(105) ? 2 : 1);

	if (!el->synced)
		return el->sync_retry > el->now ? el->sync_retry : el->now;
	if (step < el->lag_ms)
		step = el->lag_ms;
	t = el->sync_sent + step;
	if (el->nconf > 0 && el->conf_conn == el->conn_gen)
		t = el->conf[el->nconf - 1].replied + step;
	return t > el->sync_retry ? t : el->sync_retry;
}

int
el_sync_due(const struct election *el)
{
	if (el->zk != EL_ZK_CONNECTED || el->sync_inflight || el->restart)
		return 0;
	return el->now >= el_sync_at(el);
}

void
el_check_done(struct election *el, int ok)
{
	if (ok) {
		if (!EL_MUTANT(102))
			el->check_fails = 0;
		if (el->unhealthy && ++el->check_oks >= el->check_rise) {
			el->unhealthy = 0;
			el->check_oks = 0;
		}
		return;
	}
	el->check_oks = 0;
	if (!el->unhealthy && ++el->check_fails >= el->check_fall) {
		el->unhealthy = 1;
		el->check_fails = 0;
		el_leave_queue(el, "health");
	}
}

void
election_clock(struct election *el, int64_t now_ms)
{
	if (now_ms > el->now)
		el->now = now_ms;
	if (el->check_configured && el->check_due == 0)
		el->check_due = el->now + el->check_interval_ms;
	if (el->backoff_until != 0 && el->now >= el->backoff_until)
		el->backoff_until = 0;
	if (el->retry_until != 0 && el->now >= el->retry_until)
		el->retry_until = 0;
	if (el->grace_until != 0 && el->now >= el->grace_until) {
		el->grace_until = 0;
		if (el->zk != EL_ZK_CONNECTED && el_leading(el))
			el_lose_contact(el, "disconnected");
	}
	/* A leader that cannot count on its session any more demotes. */
	if ((EL_MUTANT(116) ? el_promoted(el) : el_leading(el)) &&
	    el_lease_short(el))
		el_lose_contact(el, "lease-lost");
	/*
	 * Past the lease nothing learned before is trusted for the next
	 * promotion (a freeze, a suspend, a partition not yet noticed).
	 */
	if (el->lease_known && !el->lease_lapsed && !EL_MUTANT(9) &&
	    el->now >= el_lease_end(el)) {
		el->lease_lapsed = 1;
		el_invalidate(el);
	}
}

/* A leader must demote: why (the demote hook's reason). */
void
el_lose_contact(struct election *el, const char *why)
{
	if (el->conn_lost)
		return;
	el->conn_lost = 1;
	el->conn_lost_why = why;
}

static void
el_min(int64_t *d, int64_t t)
{
	if (t < *d)
		*d = t;
}

/*
 * The disconnect_grace of a leader told it is cut off (at disc_at), as it
 * is configured now: counted from that moment, so that a reload applies
 * at once to a grace under way (a shorter one may end it now); lease, the
 * default, leaves the leader to its lease; 0 demotes at once.
 */
void
el_grace_apply(struct election *el)
{
	int64_t from;

	if (el->disc_at == 0 || el->conn_lost || el->zk == EL_ZK_CONNECTED ||
	    !el_leading(el))
		return;
	if (!EL_MUTANT(146))
		el->grace_until = 0;
	if (el->grace_ms == EL_GRACE_LEASE)
		return;
	from = EL_MUTANT(133) ? el->now : el->disc_at;
	if (el->now >= from + el->grace_ms)
		el_lose_contact(el, "disconnected");
	else
		el->grace_until = from + el->grace_ms;
}

int64_t
election_deadline(const struct election *el)
{
	int64_t d = INT64_MAX;

	if (el->state == EL_ST_STOPPED)
		return d;
	if (el->zk == EL_ZK_CONNECTED && !el->sync_inflight && !el->restart)
		el_min(&d, el_sync_at(el));
	if (el->lease_known && (el_leading(el) ||
	    (el->resume_check && !el->resume_exact)) && (!el->conn_lost ||
	    ((el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE) &&
	    !el->hook_cancelled)))
		el_min(&d, el_demote_point(el));
	if (el->lease_known && !el->lease_lapsed)
		el_min(&d, el_lease_end(el));
	if (el->grace_until != 0)
		el_min(&d, el->grace_until);
	if (el->backoff_until != 0)
		el_min(&d, el->backoff_until);
	if (el->retry_until != 0)
		el_min(&d, el->retry_until);
	if (el->restart && !el->restart_sent)
		el_min(&d, el->restart_at);
	if (el->check_configured && el->hook == -1 && !el->want_stop &&
	    el->check_due != 0)
		el_min(&d, el->check_due);
	el_min(&d, el_preempt_deadline(el, el_preempt_on(el)));
	return d;
}

/* Whether this leader looks at the queue: nothing else under way. */
int
el_preempt_on(const struct election *el)
{
	return el->preempt_ms >= 0 && election_role(el) == ROLE_LEADER &&
	    !el->resigning && !el->release_pending && el->sw_phase == 0;
}

enum role
election_role(const struct election *el)
{
	if (el->state == EL_ST_STOPPED)
		return ROLE_STOPPED;
	if (el->hook == HOOK_DEMOTE)
		return ROLE_DEMOTING;
	if (el->hook == HOOK_PROMOTE || el->hook == HOOK_FENCE)
		return ROLE_PROMOTING;
	if (el_promoted(el)) {
		if (!el->acked)
			return ROLE_PROMOTING;
		/* Only inside the lease, with room left for a demote. */
		if (!el->conn_lost && !el_lease_short(el))
			return ROLE_LEADER;
		return ROLE_DEMOTING;
	}
	if (el->observer || el->want_pause || el->unhealthy)
		return ROLE_OBSERVER;
	/* Kept out by lease_error, it still follows whoever leads. */
	if (el->zk != EL_ZK_CONNECTED ||
	    (!el->listed_once && el->lease_error == NULL))
		return ROLE_UNKNOWN;
	return ROLE_FOLLOWER;
}
