/*
 * The election's clock: the lease, the keepalive sync, the grace after a
 * disconnect, backoffs, and the health check's schedule. Time comes in
 * through election_clock(); election_deadline() says when it must next be
 * looked at, so that the daemon (one timer) and the simulator (a virtual
 * clock) wake it alike.
 *
 * The lease. lease_end = s + T, where s is the send time of a request
 * the quorum confirmed whose touch of our session the quorum is known to
 * have heard of: a later confirmation on the same connection, sent at
 * least tickTime/2 (<= T/4) after s's reply (see el_confirmed()). Only a
 * sync or a write counts: a ping or a read is answered by the one server
 * we talk to, which may itself be cut off from its quorum while the quorum
 * expires our session. A leader must have finished its demote hook
 * by then, so it starts demoting at lease_end minus the demote hook's
 * budget (its timeout, at which its group is SIGKILLed) minus a small
 * margin, whether or not the connection looks up. The lease belongs to a
 * session: a new session starts without one.
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
 * A request the quorum confirmed (a sync or a write), sent at `sent` and
 * answered now. Its own touch of the session may never reach the quorum:
 * our server reports the sessions it heard from at its next report, and
 * may be cut off before it. But a confirmation proves the server was in
 * touch with the quorum when it was answered, and that the session was
 * alive then. So a confirmation sent at least a report lag (T/4) after an
 * earlier one on the same connection was answered proves that the earlier
 * one's touch was reported to a live session: the quorum cannot expire it
 * before that one's send time + T. The lease rests on that earlier send
 * time. A first confirmation, after a silence or on a new connection,
 * gives nothing by itself.
 */
void
el_confirmed(struct election *el, int64_t sent)
{
	int64_t lag = el->timeout_ms / EL_REPORT_LAG_DIV, base = 0;
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
		if (!el->lease_known || base > el->lease_sent)
			el->lease_sent = base;
		el->lease_known = 1;
		if (el->now < el_lease_end(el))
			el->lease_lapsed = 0;
	}
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
 * The demote hook must end before the session can expire. Unset, its
 * budget is T/4 of the negotiated timeout; an explicit demote_timeout at
 * or above T/3 of it is clamped to T/4 (the daemon warns).
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
}

/* When the next keepalive sync is due. */
static int64_t
el_sync_at(const struct election *el)
{
	int64_t t;

	if (!el->synced)
		return el->sync_retry > el->now ? el->sync_retry : el->now;
	t = el->sync_sent + el->timeout_ms / EL_SYNCS_PER_T;
	/* Without a lease: as soon as one can pair with the latest. */
	if ((!el->lease_known || el->lease_lapsed) && el->nconf > 0 &&
	    el->conf_conn == el->conn_gen)
		t = el->conf[el->nconf - 1].replied + el->timeout_ms /
		    EL_REPORT_LAG_DIV;
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
		if (el->node != NULL || el->create_unknown ||
		    el_pipe_has(el, EL_OP_CREATE)) {
			el->release_pending = 1;
			el->release_why = "health";
		}
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
			el->conn_lost = 1;
	}
	/* A leader that cannot count on its session any more demotes. */
	if (el_leading(el) && !el->conn_lost && el_lease_short(el))
		el->conn_lost = 1;
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

static void
el_min(int64_t *d, int64_t t)
{
	if (t < *d)
		*d = t;
}

int64_t
election_deadline(const struct election *el)
{
	int64_t d = INT64_MAX;

	if (el->stopped)
		return d;
	if (el->zk == EL_ZK_CONNECTED && !el->sync_inflight && !el->restart)
		el_min(&d, el_sync_at(el));
	if (el->lease_known && el_leading(el) && (!el->conn_lost ||
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
	if (el->check_configured && el->hook == -1 && !el->stopping &&
	    el->check_due != 0)
		el_min(&d, el->check_due);
	el_min(&d, el_preempt_deadline(el, el_preempt_on(el)));
	return d;
}
