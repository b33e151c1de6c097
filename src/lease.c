/*
 * What the daemon says of its lease: why it does not lead when the
 * session timeout leaves no room for one with the ensemble's tickTime
 * (the log, and lease_error in the status), and the lease's figures when
 * a leader demotes because it lost touch with the quorum.
 */
#include <stdint.h>
#include <string.h>
#include <syslog.h>

#include <zookeeper/zookeeper.h>

#include "log.h"
#include "util.h"
#include "zkelectd.h"

/* Seconds from now to t on the lease's clock (negative: ago). */
static double
lease_secs(int64_t t, int64_t now)
{
	return (double)(t - now) / 1000.0;
}

/*
 * Called at every report: a change of lease_error (or of the timeout it
 * was judged on: a new session may negotiate another) is logged once.
 */
void
lease_report(struct daemon *d, const struct election_view *v)
{
	int connected = d->zk_state == ZOO_CONNECTED_STATE;
	const char *what = connected ? "negotiated" : "requested";
	/*
	 * Judged on the requested timeout, it is a notice: the servers may
	 * negotiate another (minSessionTimeout), and the negotiated one is
	 * judged again, at err, once a session is connected.
	 */
	int prio = connected ? LOG_ERR : LOG_NOTICE;

	if (v->lease_error == d->lease_error &&
	    (v->lease_error == NULL ||
	    (v->session_timeout_ms == d->lease_error_T &&
	    (!connected || d->lease_error_connected))))
		return;
	if (v->lease_error == NULL)
		log_notice("session timeout %lld ms leaves room for a lease "
		    "again: rejoining the election",
		    (long long)v->session_timeout_ms);
	else if (strcmp(v->lease_error, "timeout-below-2-ticks") == 0)
		log_msg(prio, "not leading: the %s session timeout %lld ms "
		    "is below 2 x zookeeper.tick_time (%lld ms), so the "
		    "quorum may hear of our session too late for any lease; "
		    "raise zookeeper.session_timeout (and the servers' "
		    "minSessionTimeout), or set zookeeper.tick_time to the "
		    "servers' tickTime", what,
		    (long long)v->session_timeout_ms,
		    (long long)d->cfg.tick_ms);
	else
		log_msg(prio, "not leading: the %s session timeout %lld ms "
		    "leaves no room for a lease: the report lag %lld ms "
		    "(zookeeper.tick_time/2), hooks.demote_timeout %lld ms "
		    "and a 100 ms margin leave less than an eighth of it to "
		    "lead in", what, (long long)v->session_timeout_ms,
		    (long long)v->report_lag_ms,
		    (long long)v->demote_timeout_ms);
	d->lease_error = v->lease_error;
	d->lease_error_T = v->session_timeout_ms;
	d->lease_error_connected = connected;
}

/*
 * A demote hook is about to run: when the leader lost touch with the
 * quorum, the log says how, with the lease's figures.
 */
void
lease_log_demote(struct daemon *d, const char *reason)
{
	struct election_view v;
	int64_t now = now_ms();

	if (strcmp(reason, "lease-lost") != 0 &&
	    strcmp(reason, "disconnected") != 0 &&
	    strcmp(reason, "session-expired") != 0)
		return;
	election_view(d->el, &v);
	if (strcmp(reason, "session-expired") == 0)
		log_msg(LOG_WARNING, "leadership lost: the zookeeper quorum "
		    "expired the session");
	else if (v.lease_error != NULL && strcmp(reason, "lease-lost") == 0)
		log_msg(LOG_WARNING, "leadership lost (%s): the session "
		    "timeout %lld ms leaves no room for a lease (%s)", reason,
		    (long long)v.session_timeout_ms, v.lease_error);
	else if (v.confirmed_at == 0 || v.lease_end == 0)
		log_msg(LOG_WARNING, "leadership lost (%s): no quorum "
		    "confirmation of this session", reason);
	else
		log_msg(LOG_WARNING, "leadership lost (%s): %s; last quorum "
		    "confirmation %.3f s ago, demote point %+.3f s and lease "
		    "end %+.3f s from now (hooks.demote_timeout %lld ms)",
		    reason, strcmp(reason, "lease-lost") == 0 ?
		    "no quorum confirmation came in time" :
		    "election.disconnect_grace ended a disconnect",
		    -lease_secs(v.confirmed_at, now),
		    lease_secs(v.demote_at, now),
		    lease_secs(v.lease_end, now),
		    (long long)v.demote_timeout_ms);
}
