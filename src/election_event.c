/*
 * Events fed to the election: session changes, replies, watches, hooks,
 * timers and operator requests, and what the election tells about itself.
 * None of them acts; they only record facts for election_next().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

static void el_resume_connected(struct election *el, int64_t sid);
static void el_resume_lost(struct election *el);

/* The causes of state changes, for the log (election.c's table). */
static const char *
el_session_cause(enum el_zk state)
{
	static const char *const causes[] = { "connecting", "connected",
	    "read-only", "session expired", "auth failed" };

	return (unsigned)state < sizeof(causes) / sizeof(causes[0]) ?
	    causes[state] : "session";
}

static const char *
el_hook_cause(enum hook_kind kind, int ok)
{
	static const char *const causes[][2] = {
		{ "promote hook failed", "promote hook done" },
		{ "demote hook failed", "demote hook done" },
		{ "fence hook failed", "fence hook done" },
		{ "check failed", "check passed" },
	};

	return (unsigned)kind < sizeof(causes) / sizeof(causes[0]) ?
	    causes[kind][ok != 0] : "hook done";
}


/*
 * Cut off: unless told otherwise, a leader leads on while its lease
 * holds. The disconnect is noted even when the lease was lost already: a
 * reload that gives the lease back (a shorter demote_timeout,
 * el_lease_regained()) must still find it and apply the grace (sim -k
 * 2000 -W -P -L -R -H 1087056370).
 */
static void
el_cut_off(struct election *el)
{
	if ((EL_MUTANT(121) ? el_promoted(el) : el_leading(el)) &&
	    (!el->conn_lost || !EL_MUTANT(169))) {
		if (el->disc_at == 0)
			el->disc_at = el->now;
		el_grace_apply(el);
	}
}

/*
 * Contact is back, but a promote killed for its loss may have half
 * promoted the application: it still ends in a demote (the simulator's
 * (b), -W -P -L -R, seed 1108000112).
 */
static void
el_contact_back(struct election *el)
{
	if (!(el->hook_cancelled && el->hook == HOOK_PROMOTE) ||
	    EL_MUTANT(118))
		el->conn_lost = 0;
}

void
election_session(struct election *el, enum el_zk state, int64_t sid,
    int64_t timeout_ms)
{
	int64_t wait;

	el->evseq++;
	el->cause = el_session_cause(state);
	switch (state) {
	case EL_ZK_CONNECTED:
		if (el->sid != 0 && sid != el->sid)
			el_session_lost(el);	/* nothing of it survives */
		el_resume_connected(el, sid);
		/*
		 * A new session: the quorum made it after we asked, with
		 * its timeout from then, whatever happened meanwhile.
		 */
		if (sid != el->sid && el->session_req != 0) {
			el->lease_sent = EL_MUTANT(20) ? el->now :
			    el->session_req;
			el->lease_known = 1;
			el->lease_lapsed = 0;
			el->answered_sent = el->session_req;
			el->session_req = 0;
		} else if (sid == el->sid)
			el_reconnected(el);
		el->sid = sid;
		el->sync_retry = 0;
		el->zk = EL_ZK_CONNECTED;
		el_contact_back(el);
		if (!EL_MUTANT(96)) {
			el->grace_until = 0;
			el->disc_at = 0;
		}
		el->auth_failures = 0;
		el->conn_gen++;
		el->synced = 0;
		el_set_timeout(el, timeout_ms);
		el_invalidate(el);
		break;
	case EL_ZK_CONNECTING:
	case EL_ZK_READONLY:
		if (el->zk == state)
			break;
		el->zk = state;
		el->conn_gen++;
		el->synced = 0;
		el_invalidate(el);
		if (state == EL_ZK_READONLY && EL_MUTANT(24))
			el_reconnected(el);
		el_cut_off(el);
		break;
	case EL_ZK_EXPIRED:
	case EL_ZK_AUTH_FAILED:
		if (el->zk == state)
			break;
		el->zk = state;
		el->conn_gen++;
		el->synced = 0;
		el_session_lost(el);
		el_resume_lost(el);
		el_invalidate(el);
		el->restart = 1;
		el->restart_why = state == EL_ZK_EXPIRED ? "expired" :
		    "its authentication failed";
		el->restart_sent = 0;
		el->restart_at = el->now;
		if (state == EL_ZK_AUTH_FAILED && !EL_MUTANT(10)) {
			/* Credentials do not mend by retrying at once. */
			wait = (int64_t)EL_RETRY_MS << (el->auth_failures < 5 ?
			    el->auth_failures : 5);
			if (wait > EL_RESTART_MAX_MS)
				wait = EL_RESTART_MAX_MS;
			el->restart_at = el->now + wait;
			el->auth_failures++;
		}
		break;
	}
}

void
election_restarted(struct election *el)
{
	el->cause = "new session";
	el->restart = 0;
	el->restart_sent = 0;
	el->npipe = 0;
	if (!EL_MUTANT(138))
		el->sync_inflight = 0;
	el->zk = EL_ZK_CONNECTING;
	el->sid = 0;
	el->conn_gen++;
	el->synced = 0;
	/* The old session's breadcrumb is left for the successor's fence. */
	el->crumb_mine = 0;
	el_invalidate(el);
}

void
election_session_requested(struct election *el)
{
	el->session_req = el->now;
}

void
election_watch(struct election *el, int deleted, const char *path)
{
	el->evseq++;
	el->cause = deleted ? "watch: deleted" : "watch: changed";
	if (el->node_path != NULL && strcmp(path, el->node_path) == 0) {
		if (deleted)
			el_node_lost(el);
		else
			el->node_ok = 0;
	} else if (el->pred_path != NULL && strcmp(path, el->pred_path) == 0) {
		el->pred_watched = 0;
		if (!deleted)
			return;		/* new data: the watch is set again */
		/*
		 * Gone. If it was first, we are now: every node created
		 * after our listing has a higher sequence than ours.
		 */
		if ((el->pred_head && el->listed) || EL_MUTANT(15)) {
			if (!el->cl.first)
				el->cl.gone_sid = el->pred_owner;
			el->first = 1;
			el->position = 1;
			if (el->ncandidates > 1)
				el->ncandidates--;
			el_replace(&el->pred_path, NULL);
			el->pred_head = 0;
			el->pred_czxid = 0;
			el->pred_owner = 0;
		} else
			el->listed = 0;
	} else if (strcmp(path, el->leader_path) == 0) {
		el->leader_armed = 0;
		if (deleted)
			el_no_leader(el);
		else
			el->leader_fresh = 0;
	} else if (strcmp(path, el->prio_dir) == 0) {
		/*
		 * A marker came or went: read again, and who is behind us
		 * listed after that read.
		 */
		el->marks_fresh = 0;
		el->yield_listed = 0;
	} else if (el->mark_have != NULL && strcmp(path, el->mark_have) == 0) {
		/*
		 * Our marker deleted by hand: unsure, it is made again if it
		 * is wanted (el_next_mark()). Our own release or unmark of
		 * it, in flight, deletes it too: their reply settles it.
		 */
		el_replace(&el->mark_watch, NULL);
		if (deleted && !(el->release_marked &&
		    el_pipe_has(el, EL_OP_RELEASE)) &&
		    !(el_pipe_has(el, EL_OP_UNMARK) && (EL_MUTANT(162) ||
		    (!el->unmark_extra && !el->unmark_old))))
			el->mark_unsure = 1;
	} else if (strcmp(path, el->crumb_path) == 0) {
		el->crumb_armed = 0;
		if (deleted)
			el_no_crumb(el);
		else if (!EL_MUTANT(163))
			el->crumb_fresh = 0;
	} else
		(void)el_claim_watch(&el->cl, deleted, path);
}

void
election_hook_done(struct election *el, enum hook_kind kind, int ok)
{
	int cancelled = el->hook_cancelled;
	int same_node = el->hook_gen == el->node_gen;

	el->cause = el_hook_cause(kind, ok);
	if (el->hook != (int)kind)
		return;
	el->hook = -1;
	el->hook_cancelled = 0;
	switch (kind) {
	case HOOK_CHECK:
		/*
		 * A check killed to free the slot tells nothing, nor one
		 * that a reload took away while it ran: nothing would ever
		 * make us healthy again.
		 */
		if (!cancelled && (el->check_configured || EL_MUTANT(45)))
			el_check_done(el, ok);
		break;
	case HOOK_FENCE:
		if (!same_node && !EL_MUTANT(6)) {
			/* The node it fenced for is gone: so is its use. */
			el->lost_reason = NULL;
			break;
		}
		if (ok) {
			el->fenced = 1;
			break;
		}
		if ((EL_MUTANT(159) ? 0 : cancelled) ||
		    (EL_MUTANT(137) && !ok)) {
			el->lost_reason = NULL;
			break;
		}
		/* A failed fence must not promote: leave like a failed promote. */
		/* FALLTHROUGH */
	case HOOK_PROMOTE:
		el_go(el, EL_ST_LEADING, el->cause);
		el->acked = 0;
		if (!ok && (!cancelled || EL_MUTANT(132)) && same_node) {
			el->promote_failed = 1;
			el_release_ask(el, "promote-failed");
		}
		if (!same_node && el->lost_reason == NULL)
			el->lost_reason = "session-expired";
		break;
	case HOOK_DEMOTE:
		el->lead_claimed = 0;	/* what it rested on is undone */
		/* Told to stop, and done: the application is down. */
		if (ok)
			el->down = 1;
		break;
	case HOOK_NOTIFY:
	case HOOK_RUN:
		break;
	}
	/*
	 * A fence that ends without a promote leaves no leadership behind:
	 * the contact it lost (a fence killed at the demote point) was that
	 * attempt's, and must not demote the next one once the lease is
	 * renewed. A promote ended by then is promoted, and still demotes.
	 */
	if (!el_leading(el) && !EL_MUTANT(111))
		el->conn_lost = 0;
}

void
election_queue(struct election *el, const struct el_queue *q)
{
	el->cause = "queue read";
	el_preempt_listed(el, q, el_preempt_on(el));
}

void
election_candidates(struct election *el, int n)
{
	el->ncandidates = n;
}

void
election_set_data(struct election *el, const char *data)
{
	el->cause = "new data";
	el_replace(&el->data, data);
	el_make_data(el);
	el->data_gen++;
	/*
	 * A create in flight, or lost, carries the old data: the node it
	 * made is written again once known.
	 */
	if (el->node != NULL || ((el->create_unknown ||
	    el_pipe_has(el, EL_OP_CREATE)) && !EL_MUTANT(46)))
		el->data_dirty = 1;
}

int
election_resign(struct election *el)
{
	el->cause = "resign";
	if (election_role(el) != ROLE_LEADER || el->resigning)
		return -1;
	el->resigning = 1;
	el_release_ask(el, "resign");
	return 0;
}

int
election_switchover(struct election *el, const char *node,
    const char *reason)
{
	struct candidate c;

	el->cause = "switchover";
	if (election_role(el) != ROLE_LEADER || el->resigning ||
	    el->release_pending || el->sw_phase != 0 || el->node == NULL ||
	    candidate_parse(node, &c) == -1 || strcmp(node, el->node) == 0)
		return -1;
	el_replace(&el->sw_target, node);
	el->sw_reason = reason;
	el->sw_failed = NULL;
	el->sw_phase = 1;
	return 0;
}

void
election_switchover_cancel(struct election *el)
{
	el->cause = "switchover cancelled";
	el_switch_clear(el, NULL);
}

const char *
election_switchover_failed(struct election *el)
{
	const char *why = el->sw_failed;

	el->sw_failed = NULL;
	return why;
}

int
election_run_exited(struct election *el)
{
	el->cause = "run exited";
	if (!el_promoted(el) || el->release_pending || el->run_exited)
		return -1;
	el->run_exited = 1;
	el_release_ask(el, "run-exited");
	return 0;
}

/* Whether we have, or may be about to have, a node in the queue. */
static int
el_has_node(const struct election *el)
{
	if (EL_MUTANT(3))
		return el->node != NULL;
	return el->node != NULL || el->create_unknown ||
	    el_pipe_has(el, EL_OP_CREATE);
}

void
election_pause(struct election *el, int paused)
{
	int was_paused = el->want_pause;

	el->cause = paused ? "pause" : "resume";
	if (paused && !el->want_pause) {
		el->want_pause = 1;
		if (el_has_node(el)) {
			el_release_ask(el, "pause");
		}
	} else if (!paused)
		el->want_pause = 0;
	if (paused && !(EL_MUTANT(44) && was_paused))
		el->pause_reply = 1;
}

void
election_stop(struct election *el)
{
	el->cause = "stop";
	el->want_stop = 1;
	if (el_has_node(el)) {
		el_release_ask(el, "shutdown");
	}
}

const char *
election_role_name(enum role r)
{
	switch (r) {
	case ROLE_UNKNOWN:
		return "unknown";
	case ROLE_FOLLOWER:
		return "follower";
	case ROLE_PROMOTING:
		return "promoting";
	case ROLE_LEADER:
		return "leader";
	case ROLE_DEMOTING:
		return "demoting";
	case ROLE_OBSERVER:
		return "observer";
	case ROLE_STOPPED:
		return "stopped";
	}
	return "unknown";
}

/*
 * What E/leader says is shown when its session may lead: ours (and then
 * our own view of ourselves wins over its data, which anyone allowed to
 * write there could have changed), or one that held a node before ours at
 * our last listing (sequence numbers only grow: nobody else can lead
 * before our node goes). Observers, and candidates before their first
 * listing, cannot tell and show it as read.
 */
static int
el_leader_trusted(const struct election *el)
{
	int i;

	if (EL_MUTANT(22) || !el->ahead_known)
		return 1;
	for (i = 0; i < el->nahead; i++)
		if (el->ahead[i] == el->leader_owner)
			return 1;
	return 0;
}

/*
 * The claim the session file names (el_resume): the one a promote or
 * fence began on, from its start to its demote's end, even once deleted
 * by hand (then ours is another, or none); else, while a resumed
 * session's facts are checked, the one its file named; else ours, once
 * listed. Beside it, the claim our breadcrumb was written under.
 */
static void
el_view_claim(const struct election *el, struct election_view *v)
{
	v->claimed = 0;
	v->claim_seq = 0;
	if (el->lead_claimed && (el_lead_hook(el) || el_promoted(el) ||
	    (el->startup_demote && !EL_MUTANT(123)))) {
		v->claimed = 1;
		v->claim_seq = el->lead_claim_seq;
	} else if (el->resume_check && el->resume_claimed) {
		v->claimed = 1;
		v->claim_seq = el->resume_claim_seq;
	} else if (el->cl.have && el->cl.node != NULL) {
		v->claimed = 1;
		v->claim_seq = el->cl.seq;
	}
	/* The claim our breadcrumb was written under (el_crumb_guarded()). */
	v->crumb_claimed = el->crumb_mine && el->crumb_claim_seq >= 0;
	v->crumb_claim_seq = v->crumb_claimed ? el->crumb_claim_seq : 0;
}

void
election_view(const struct election *el, struct election_view *v)
{
	v->role = election_role(el);
	v->state = el->state;
	v->zk = el->zk;
	v->sid = el->sid;
	v->leader_id = "";
	v->leader_data = "";
	v->leader_epoch = 0;
	v->leader_untrusted = 0;
	v->leader_owner = el->leader_exists ? el->leader_owner : 0;
	if (el->leader_exists && el_owns_leader(el) && !EL_MUTANT(22)) {
		v->leader_id = el->id;
		v->leader_data = el->data;
		v->leader_epoch = el->lead_epoch != 0 ? el->lead_epoch :
		    el->epoch != 0 ? el->epoch : el->leader_epoch;
	} else if (el->leader_exists && el_leader_trusted(el)) {
		v->leader_id = el->leader_id;
		v->leader_data = el->leader_data;
		v->leader_epoch = el->leader_epoch;
	} else if (el->leader_exists)
		v->leader_untrusted = 1;
	v->epoch = el->epoch;
	v->candidates = el->ncandidates;
	v->position = el->position;
	v->node = el->node;
	v->paused = el->want_pause;
	v->unhealthy = el->unhealthy;
	v->hook = el->hook;
	v->session_timeout_ms = el->timeout_ms;
	v->demote_timeout_ms = el->demote_ms;
	v->demote_clamped = el->demote_clamped;
	v->restart_why = el->restart_why;
	v->lease_end = el->lease_known ? el_lease_end(el) : 0;
	v->demote_at = el->lease_known ? el_demote_point(el) : 0;
	v->confirmed_at = el->confirmed_at;
	v->report_lag_ms = el->lag_ms;
	v->lease_error = el->lease_error;
	v->resuming = el->resume_check;
	/*
	 * A resume's promote that may have run is kept until the demote
	 * it owes has started: a crash between the decision and the
	 * demote (a check being killed for it) must not lose it.
	 */
	v->promote_begun = el->state == EL_ST_PROMOTING ||
	    ((el->resume_check || (el->startup_demote && !EL_MUTANT(123))) &&
	    el->resume_promoting);
	v->promoted = el_promoted(el);
	/* Not while a demote it decided has yet to end (a crash redoes it). */
	v->down = el->down && !el->startup_demote;
	v->lead_epoch = EL_MUTANT(99) ? el->epoch : el->lead_epoch;
	el_view_claim(el, v);
	v->backoff_until = el->backoff_until;
	v->crumb_id = el->crumb_exists ? el->crumb_id : "";
	v->crumb_data = el->crumb_exists ? el->crumb_data : "";
	v->crumb_epoch = el->crumb_exists ? el->crumb_epoch : 0;
	v->id = el->id;
	v->data = el->data;
	v->yields = el->yields;
	v->yield_sid = el->yield_sid;
	v->yield_prio = el->yield_prio;
}

const char *
election_op_name(enum el_op op)
{
	static const char *const names[EL_OP_COUNT] = {
		"none", "parent", "create", "list", "watch_pred", "watch_own",
		"leader", "leader_exists", "breadcrumb", "ack", "release",
		"set_data", "sync", "claim", "claim_watch", "claims",
		"switchover", "mark", "unmark", "marks", "crumb_exists",
		"claim_own", "unclaim", "mark_own",
	};

	return (unsigned)op < EL_OP_COUNT ? names[op] : "unknown";
}

/*
 * Resuming a session (el_resume_next() in election_next.c takes it on): after
 * a re-exec (SIGUSR2) or a crash, the daemon
 * re-attaches the ZooKeeper session it had instead of asking for a new
 * one, and the election takes up what that session holds without running
 * a hook when all of it is still there.
 *
 * What is handed over is a hint, never a fact: the session id, its lease
 * (a send time on the same clock, which keeps counting across an exec and
 * a crash of the same boot) and whether the application was told to lead,
 * with which epoch. Every fact is read back on the re-attached session
 * before it is relied on, as after any reconnect: our node is found by
 * listing (as after a lost create) and watched, E/leader is read and
 * E/claims listed. Until they are in:
 *
 * - A resumed leader is a leader that has just reconnected: its lease is
 *   the one handed over until the session is re-opened, which renews it
 *   (el_resume_connected()), then confirmations of the new connection do
 *   (el_confirmed()); it demotes at the lease's demote point as any
 *   leader does. Its node gone, E/leader of another session
 *   or no claim of its own make it demote (node-deleted, preempted).
 * - A daemon that was not leading may still have an application that
 *   leads: a crash can come between a promote's start and the file that
 *   says so. What it holds decides: a first claim or E/leader of its own with
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
void
election_resume(struct election *el, const struct el_resume *r)
{
	el->cause = "session resumed";
	el->sid = r->sid;
	el_set_timeout(el, r->timeout_ms);
	if (r->lease_sent != 0) {
		el->lease_sent = r->lease_sent;
		el->lease_known = 1;
	}
	el->resume_check = 1;
	el->resume_exact = r->exact;
	el->resume_promoting = r->promoting;
	/* Down and nothing begun since: what the file says, if it does. */
	el->down = r->down && !r->leader && !r->promoting && !EL_MUTANT(166);
	el->resume_claimed = r->claimed;
	el->resume_claim_seq = r->claim_seq;
	el->resume_demote = el->startup_demote;
	if (!EL_MUTANT(124))
		el->startup_demote = 0;
	/*
	 * Our node, if the session still has one, is found by a listing. Its
	 * data is written again once found: a reload may have changed it
	 * just before the old image could (issue 19, sim -P -W -R 3703).
	 */
	el->create_unknown = 1;
	el->data_dirty = 1;
	el->cl.known = 0;	/* which claim is ours: E/claims is listed */
	/*
	 * So are its priority markers: the image before may have made one
	 * for a priority that a reload has changed since, and a marker
	 * left behind makes the heads yield to it for good (sim -W -P -L
	 * -R 30000017). E/priority is listed and ours is adopted.
	 */
	el->marks_unknown = 1;
	/* Out of the election for its health: it stays out until it rises. */
	if (r->unhealthy && (el->check_configured || EL_MUTANT(139))) {
		el->unhealthy = 1;
		el_release_ask(el, "health");
	}
	if (!r->leader || el->observer)
		return;
	el_go(el, EL_ST_LEADING, el->cause);
	el->acked = 1;
	el->crumb_mine = !EL_MUTANT(115);
	el->cl.have = 1;
	/* The claim it led on, named on (to its demote's end, for a crash). */
	el->lead_claimed = r->claimed && !EL_MUTANT(98);
	el->lead_claim_seq = r->claim_seq;
	el->crumb_node_epoch = r->epoch;
	if (r->crumb_claimed && !EL_MUTANT(156))
		el->crumb_claim_seq = r->crumb_claim_seq;
	else
		el->crumb_claim_seq = r->claimed ? r->claim_seq : -1;
	el->fenced = 1;
	el->epoch = r->epoch;
	el->lead_epoch = r->epoch;
	el->leader_exists = 1;
	el->leader_owner = r->sid;
	el->leader_epoch = r->epoch;
	el_replace(&el->leader_id, el->id);
	el_replace(&el->leader_data, el->data);
}

/*
 * The re-attached session's first connection. A server re-opens a live
 * session only once the quorum's leader has touched it (a revalidation:
 * see el_reconnected() and point 3 at the top of election_time.c), and
 * this process asked for it at zookeeper_init, which it knows, where a
 * reconnect of the library's own has only the last answered send time:
 * the session cannot expire before that time + T. So its lease runs from
 * then, as a new session's does, whether the resume's checks are still
 * running or a demote (a resign, a pause) ended them before it. Anything
 * else the connection confirms renews it as usual.
 */
static void
el_resume_connected(struct election *el, int64_t sid)
{
	if (sid != el->sid || el->session_req == 0)
		return;
	if (!EL_MUTANT(32) && (!el->lease_known ||
	    el->session_req > el->lease_sent)) {
		el->lease_sent = el->session_req;
		el->lease_known = 1;
		if (el->now < el_lease_end(el))
			el->lease_lapsed = 0;
	}
	el->session_req = 0;
}

/* The session expired before its facts were confirmed. */
static void
el_resume_lost(struct election *el)
{
	if (!el->resume_check)
		return;
	el->resume_check = 0;
	if (el_promoted(el))
		el->lost_reason = "startup";
	else
		el->startup_demote = el->resume_demote;
}

void
election_reconfigure(struct election *el, const struct election_params *p)
{
	int64_t interval;

	el->cause = "reload";
	el->fence_configured = p->fence;
	el->preempt_ms = p->preempt_delay_ms;
	el->backoff_ms = p->retry_backoff_ms;
	el->grace_ms = p->disconnect_grace_ms;
	if (EL_MUTANT(125))
		el_set_timeout(el, 0);
	el->tick_ms = p->tick_ms > 0 ? p->tick_ms : 0;
	el->hook_timeout_ms = p->hook_timeout_ms;
	el->demote_cfg_ms = p->demote_timeout_ms > 0 ? p->demote_timeout_ms : 0;
	if (!EL_MUTANT(125))
		el_set_timeout(el, 0);
	if (!EL_MUTANT(142))
		el_lease_regained(el);
	interval = p->check_interval_ms > 0 ? p->check_interval_ms : 5000;
	/*
	 * A new interval applies at once (the contract's "health settings
	 * apply at once"): the check already planned moves to one new
	 * interval after the last one started, which may be now.
	 */
	if (el->check_configured && p->check && el->check_due != 0 &&
	    !EL_MUTANT(87))
		el->check_due += EL_MUTANT(155) ?
		    el->check_interval_ms - interval :
		    interval - el->check_interval_ms;
	el->check_interval_ms = interval;
	el->check_fall = p->check_fall > 0 ? p->check_fall : 1;
	el->check_rise = p->check_rise > 0 ? p->check_rise : 1;
	if (p->check && !el->check_configured)
		el->check_due = 0;	/* first run one interval from now */
	if (!p->check) {
		el->unhealthy = 0;
		el->check_fails = 0;
		el->check_oks = 0;
	}
	el->check_configured = p->check;
	if (el->data != NULL && (strcmp(p->data, el->data) != 0 ||
	    p->priority != el->priority)) {
		/*
		 * E/priority is made when a priority first comes: after the
		 * others when they are made, else in their turn.
		 */
		if (el->priority == 0 && p->priority != 0 &&
		    el->parents_done) {
			el->parents_done = 0;
			el->parent_idx = el->nbase;
		}
		el->priority = p->priority;
		el->nparents = el->nbase + (el->priority != 0);
		if (el->parents_done == 0 && el->parent_idx >= el->nparents) {
			el->parent_idx = 0;
			el->parents_done = 1;
		}
		election_set_data(el, p->data);
	}
	if (!EL_MUTANT(134))
		el_grace_apply(el);
}
