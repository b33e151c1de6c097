/*
 * Resuming a session: after a re-exec (SIGUSR2) or a crash, the daemon
 * re-attaches the ZooKeeper session it had instead of asking for a new
 * one, and the election takes up what that session holds without running
 * a hook when all of it is still there.
 *
 * What is handed over is a hint, never a fact: the session id, its lease
 * (a send time on the same clock, which keeps counting across an exec and
 * a crash of the same boot) and whether the application was told to lead,
 * with which epoch. Every fact is read back on the re-attached session
 * before it is relied on, as after any reconnect: our node is found by
 * listing (as after a lost create) and watched, E/leader and E/claim are
 * read. Until they are in:
 *
 * - A resumed leader is a leader that has just reconnected: its lease is
 *   the one handed over until the session is re-opened, which renews it
 *   (el_resume_connected()), then confirmations of the new connection do
 *   (el_confirmed()); it demotes at the lease's demote point as any
 *   leader does. Its node gone, E/leader of another session
 *   or E/claim not its own make it demote (node-deleted, preempted).
 * - A daemon that was not leading may still have an application that
 *   leads: a crash can come between a promote's start and the file that
 *   says so. What it holds decides: E/claim or E/leader of its own with
 *   no leadership behind them means a hook was under way, so the demote
 *   hook runs first (reason startup), and the queue decides the rest.
 *   When the facts cannot be read back before the lease's demote point,
 *   it demotes as a start would (hooks.demote_on_start), unless the image
 *   that ran handed the facts over itself.
 * - A session found expired: the demote hook runs (reason startup), then
 *   a new session rejoins, as a start does.
 *
 * So nothing is led on what was not confirmed after the restart, and the
 * safety argument of election.c is unchanged: a resumed leader's
 * application leads under the same lease, with the same demote point, as
 * the image before it.
 */
#include <stdint.h>

#include "election_int.h"

void
election_resume(struct election *el, const struct el_resume *r)
{
	el->sid = r->sid;
	el_set_timeout(el, r->timeout_ms);
	if (r->lease_sent != 0) {
		el->lease_sent = r->lease_sent;
		el->lease_known = 1;
	}
	el->resume_check = 1;
	el->resume_exact = r->exact;
	el->resume_demote = el->startup_demote;
	el->startup_demote = 0;
	/* Our node, if the session still has one, is found by a listing. */
	el->create_unknown = 1;
	el->claim_known = 0;
	if (!r->leader || el->observer)
		return;
	el->promoted = 1;
	el->acked = 1;
	el->claimed = 1;
	el->fenced = 1;
	el->epoch = r->epoch;
	el->lead_epoch = r->epoch;
	el->leader_exists = 1;
	el->leader_owner = r->sid;
	el->leader_epoch = r->epoch;
	el_replace(&el->leader_id, el->id);
	el_replace(&el->leader_data, el->data);
}

/* What the checks decided, once every fact is read back. */
static void
el_resume_decide(struct election *el)
{
	el->resume_check = 0;
	if (el->promoted) {
		if (!el->claimed && !EL_MUTANT(24))
			el->lost_reason = "preempted";
		return;
	}
	/* A promote, fence or demote was under way: its outcome is unknown. */
	if (el->claimed || el_owns_leader(el))
		el->startup_demote = 1;
}

/*
 * Called by election_next() before it decides: takes the resume's checks
 * one step further. It acts only through the state it sets.
 */
void
el_resume_next(struct election *el)
{
	if (!el->resume_check)
		return;
	/* A hook decided on it meanwhile (a demote, whatever asked). */
	if (el->hook != -1 && el->hook != HOOK_CHECK) {
		el->resume_check = 0;
		return;
	}
	/* Stopped before it knew: as a start would have. */
	if (el->stopping && !el->promoted && !el->resume_exact) {
		el->resume_check = 0;
		el->startup_demote = el->resume_demote;
		return;
	}
	if (el->promoted && el_lease_short(el)) {
		/* Not confirmed in time: demoted as at a start. */
		el->resume_check = 0;
		el->lost_reason = "startup";
		return;
	}
	if (!el->promoted && !el->resume_exact && el_lease_short(el) &&
	    !EL_MUTANT(25)) {
		/* Not confirmed in time: as a start would. */
		el->resume_check = 0;
		el->startup_demote = el->resume_demote;
		return;
	}
	if (el->zk != EL_ZK_CONNECTED || el->create_unknown)
		return;
	/* The listing found no node of ours: the leadership is gone. */
	if (el->promoted && el->node == NULL && !EL_MUTANT(24))
		el_node_lost(el);
	if (!el->leader_fresh || !el->claim_known ||
	    (el->node != NULL && !el->node_ok))
		return;
	el_resume_decide(el);
}

/*
 * The re-attached session's first connection. A server re-opens a live
 * session only once the quorum's leader has touched it (a revalidation,
 * answered by the leader itself, so no report lag stands between), and
 * it was asked for after zookeeper_init: the session cannot expire before
 * that time + T. So its lease runs from then, as a new session's does
 * (election_session_requested()). Anything else the connection confirms
 * renews it as usual.
 */
void
el_resume_connected(struct election *el, int64_t sid)
{
	if (!el->resume_check || sid != el->sid || el->session_req == 0)
		return;
	if (!EL_MUTANT(26) && (!el->lease_known ||
	    el->session_req > el->lease_sent)) {
		el->lease_sent = el->session_req;
		el->lease_known = 1;
		el->lease_lapsed = 0;
	}
	el->session_req = 0;
}

/* The session expired before its facts were confirmed. */
void
el_resume_lost(struct election *el)
{
	if (!el->resume_check)
		return;
	el->resume_check = 0;
	if (el->promoted)
		el->lost_reason = "startup";
	else
		el->startup_demote = el->resume_demote;
}
