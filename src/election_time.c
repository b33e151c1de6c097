/*
 * The election's clock: the lease, the keepalive sync, the grace after a
 * disconnect, backoffs, and the health check's schedule. Time comes in
 * through election_clock(); election_deadline() says when it must next be
 * looked at, so that the daemon (one timer) and the simulator (a virtual
 * clock) wake it alike.
 *
 * The lease. lease_end = send time of the last request that the quorum
 * confirmed + T, less the lag of the quorum's news of our session. Only a
 * sync or a write counts: a ping or a read is answered by the one server
 * we talk to, which may itself be cut off from its quorum while the quorum
 * expires our session. Whatever the quorum confirmed at time s, our server
 * was in touch with the quorum after s, and it reports the sessions it
 * heard from every tickTime/2 (<= T/4), so the quorum cannot expire the
 * session before s + T - T/4. A leader must have finished its demote hook
 * by then, so it starts demoting at lease_end minus the demote hook's
 * budget (its timeout, at which its group is SIGKILLed) minus a small
 * margin, whether or not the connection looks up. The lease belongs to a
 * session: a new session starts without one.
 */
#include <stdint.h>

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
	return el->lease_sent + el->timeout_ms -
	    el->timeout_ms / EL_REPORT_LAG_DIV;
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
 * After a silence longer than the lease (a freeze, a long disconnect) the
 * session may be expiring at the quorum even though our server answers:
 * the quorum learns of our news at the server's next report. So the first
 * confirmation after it only starts a probation, and one sent a report
 * lag (T/4) later renews the lease.
 */
void
el_confirmed(struct election *el, int64_t sent)
{
	int64_t lag = el->timeout_ms / EL_REPORT_LAG_DIV;
	int64_t quiet_since;

	/* A new session was last heard of by the quorum when it was made. */
	quiet_since = el->lease_known ? el->lease_sent : el->session_at;
	if (sent >= quiet_since + el->timeout_ms - lag && !EL_MUTANT(14)) {
		/* A new probation after another silence. */
		if (!el->probation ||
		    sent >= el->probation_sent + el->timeout_ms - lag) {
			el->probation = 1;
			el->probation_sent = sent;
			return;
		}
		if (sent < el->probation_sent + lag)
			return;
	}
	el->probation = 0;
	if (!el->lease_known || sent > el->lease_sent)
		el->lease_sent = sent;
	el->lease_known = 1;
	if (el->now < el_lease_end(el))
		el->lease_lapsed = 0;
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
		return el->now;
	t = el->sync_sent + el->timeout_ms / EL_SYNCS_PER_T;
	if (el->probation && t < el->probation_sent + el->timeout_ms /
	    EL_REPORT_LAG_DIV)
		t = el->probation_sent + el->timeout_ms / EL_REPORT_LAG_DIV;
	return t;
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
	return d;
}
