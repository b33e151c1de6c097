/*
 * (hand) The heir promotes on the release alone (issue 21): when a leader's
 * release is applied and the candidate it leaves first already holds the
 * first claim (its prepared claim), that daemon starts its promote (or its
 * fence) without waiting for the reply of any request it sent after the
 * release's first notification reached it. A read it needs first (an
 * extra round trip in every graceful handover: the release's deletes in
 * another order, a breadcrumb read again) fails here; nothing else in the
 * checker bounds a handover's latency.
 *
 * Only where the heir could know everything: it runs, is awake, connected
 * in the session that holds the claim, neither paused nor unhealthy nor
 * running a hook, with no request of its own in flight (but syncs), a
 * lease that leaves a promote its room (as the core counts it, when the
 * notification comes and when the reply does), and no priorities (-P:
 * markers it may read, a yield); and no fault or operator's command for
 * T before the release (a node deleted by hand, a leader that lost its
 * lease: a handover of another kind) or after it, nor a new session of
 * the heir. A release that does not delete the breadcrumb is left out
 * (check_hand_release()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "sim.h"

/* The session of the first candidate node and of the first claim. */
static int64_t
check_hand_first(struct sim *s, const char *dir, const char *prefix)
{
	struct candidate c;
	char **names;
	int64_t seq = -1, sid = 0;
	int i, n;

	n = ztree_children(&s->qu.tree, dir, &names);
	for (i = 0; i < n; i++)
		if (candidate_parse_as(names[i], prefix, &c) == 0 &&
		    (seq < 0 || c.seq < seq)) {
			seq = c.seq;
			sid = c.sid;
		}
	ztree_names_free(names, n);
	return sid;
}

/*
 * A leader's release r was applied. Only one that deletes the breadcrumb
 * is the heir's whole signal: without it the heir cannot know from its
 * watches that nobody wrote one after its claim was first, and reads it
 * (the one read issue 21 allows, election.c's (7)). And only one that
 * deletes the leader's node: one whose node was deleted by hand is a
 * handover of another kind, however long ago (campaign seed 1,002,170,090,
 * -W: the node went during a promote that then hung to its timeout; the
 * heir, first since, listed the claims when E/leader went).
 */
void
check_hand_release(struct sim *s, const struct zreq *r)
{
	int64_t sid;
	size_t len = strlen(SIM_CANDS);
	int i, crumb = 0, node = 0;

	s->hand_zxid = 0;
	for (i = 0; i < r->nmop; i++) {
		if (r->mop[i].kind != ZK_MOP_DELETE)
			continue;
		if (strcmp(r->mop[i].path, SIM_CRUMB) == 0)
			crumb = 1;
		if (strncmp(r->mop[i].path, SIM_CANDS, len) == 0 &&
		    r->mop[i].path[len] == '/')
			node = 1;
	}
	if (!crumb || !node || s->priorities ||
	    s->fault_at + s->T >= s->now)
		return;
	sid = check_hand_first(s, SIM_CANDS, CANDIDATE_NAME_PREFIX);
	if (sid == 0 || check_hand_first(s, SIM_CLAIMS,
	    CANDIDATE_CLAIM_PREFIX) != sid || peer_of_session(s, sid) == NULL)
		return;
	s->hand_zxid = r->wait_zxid;
	s->hand_sid = sid;
	s->hand_at = s->now;
}

/*
 * Whether p, as it is now, could promote on the release alone; notified:
 * its first notification of it, when nothing of its own may be in flight.
 */
static int
check_hand_able(struct sim *s, struct peer *p, int notified)
{
	struct election_view v;
	int i;

	if (!p->running || p->frozen || p->cl.state != CL_CONNECTED ||
	    p->cl.sid != s->hand_sid || s->fault_at >= s->hand_at)
		return 0;
	for (i = 0; i < p->cl.npend && notified; i++)
		if (p->cl.pend[i].op != EL_OP_SYNC)
			return 0;
	election_view(p->el, &v);
	/* Its lease leaves a promote its room (T/8) before the demote. */
	return !v.paused && !v.unhealthy && v.hook == -1 &&
	    v.lease_end - v.demote_timeout_ms - 100 - s->now >
	    v.session_timeout_ms / 8;
}

/* A notification of transaction zxid reaches p. */
void
check_hand_notified(struct sim *s, struct peer *p, int64_t zxid)
{
	if (zxid == 0 || zxid != s->hand_zxid || p->cl.sid != s->hand_sid)
		return;
	s->hand_zxid = 0;	/* its first notification only */
	if (!check_hand_able(s, p, 1))
		return;
	p->hand_since = s->now;
	trace(s, p->idx, "check: heir, notified of the release");
}

/* p starts a promote or a fence: the handover is done. */
void
check_hand_promoted(struct sim *s, struct peer *p)
{
	(void)s;
	p->hand_since = 0;
}

/*
 * A reply reaches p while it has still to promote on a release: if it
 * asked after the release's notification, it waited for it.
 */
void
check_hand_reply(struct sim *s, struct peer *p, enum el_op op, int64_t sent)
{
	if (p->hand_since == 0)
		return;
	if (s->fault_at >= p->hand_since || p->cl.sid != s->hand_sid) {
		p->hand_since = 0;
		return;
	}
	if (op == EL_OP_SYNC || sent < p->hand_since)
		return;
	/* Its lease may have run short since: then it waits, as it must. */
	if (!check_hand_able(s, p, 0)) {
		p->hand_since = 0;
		return;
	}
	check_fail(s, "(hand) %s: heir with the first claim, notified of the "
	    "release at %lld.%03lld, waits for %s before it promotes", p->id,
	    (long long)(p->hand_since / 1000),
	    (long long)(p->hand_since % 1000), election_op_name(op));
}

/*
 * (RH) -R: a resumed daemon runs a startup demote only where its
 * application may lead: a promote or fence of an earlier image (the
 * model's truth: one started, and no demote ended well since), or one it
 * cannot rule out from what it reads (E/leader its session's, the claim
 * its session file named first or gone), or its resume was never confirmed
 * (a stop, a lease run short, an expiry: it demotes as a start does).
 * A claim behind another session's in E/claims was never promoted on (a
 * claim once first stays first): an heir that restarts, never leader,
 * does not disrupt its application (a tenth blind round, mutant 151).
 * Checked with -A, as (RS) and (AV) are; counted (-S) without.
 */
void
check_hand_resume(struct sim *s, struct peer *p, const struct el_resume *r)
{
	struct pcheck *pc = &s->pc[p->idx];

	pc->rh_on = 1;
	pc->rh_sid = r->sid;
	pc->rh_exact = r->exact;
	pc->rh_claimed = r->claimed;
	pc->rh_claim_seq = r->claim_seq;
	pc->rh_stop = 0;
	pc->rh_short = 0;
}

/* A startup demote decided when a check was killed: its lease then. */
void
check_hand_cancel(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (!pc->rh_on)
		return;
	election_view(p->el, &v);
	if (v.demote_at == 0 || s->now >= v.demote_at)
		pc->rh_short = 1;
}

/* A resume that was never confirmed: it demotes as a start would. */
static int
check_hand_unconfirmed(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (p->sess_gone)
		return 1;
	if (pc->rh_exact)
		return 0;
	election_view(p->el, &v);
	return pc->rh_stop || pc->rh_short || v.demote_at == 0 ||
	    s->now >= v.demote_at;
}

/*
 * Session sid's one claim in E/claims (*seq), and the first claim of
 * another session before it (into ahead): 0 when there is none, or when
 * the session has several (which one the daemon takes for its own is
 * not the quorum's to say).
 */
static int
check_hand_behind(struct sim *s, int64_t sid, int64_t *seq, char *ahead,
    size_t len)
{
	struct candidate c;
	char **names;
	int64_t first = -1;
	int i, n, k = -1, ours = 0;

	*seq = -1;
	n = ztree_children(&s->qu.tree, SIM_CLAIMS, &names);
	for (i = 0; i < n; i++)
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &c) == 0 && c.sid == sid) {
			*seq = c.seq;
			ours++;
		}
	for (i = 0; i < n && ours == 1; i++)
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &c) == 0 && c.sid != sid && c.seq < *seq &&
		    (first < 0 || c.seq < first)) {
			first = c.seq;
			k = i;
		}
	if (k >= 0)
		(void)snprintf(ahead, len, "%s", names[k]);
	ztree_names_free(names, n);
	return k >= 0;
}

/*
 * (h) resumed: a leader resumed (-R) with no hook since demotes for
 * preempted where any leader may (check.c's check_demote_preempted())
 * or where its claim is gone: its session holds none in E/claims (what
 * the core reads back before it leads on). With its node first,
 * E/leader its own and its claim there, "preempted" is the needless
 * failover a resume exists to avoid: a fourteenth blind round's, mutant
 * 165, took a node not listed yet (a resumed leader's) for one not first.
 * 1 when the demote is excused.
 */
int
check_hand_resumed_preempted(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	char ahead[SIM_PATH];
	int64_t seq;

	if (!pc->resumed_lead)
		return 0;
	(void)check_hand_behind(s, pc->rh_sid, &seq, ahead, sizeof(ahead));
	return seq < 0;
}

/* The first demote since a resumed start, with its reason. */
void
check_hand_startup(struct sim *s, struct peer *p, const char *why)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct znode *z = ztree_get(&s->qu.tree, SIM_LEADER);
	char ahead[SIM_PATH];
	int64_t seq;

	if (!pc->rh_on)
		return;
	pc->rh_on = 0;
	if (why == NULL || strcmp(why, "startup") != 0 || pc->lead_begun ||
	    (z != NULL && z->owner == pc->rh_sid) ||
	    check_hand_unconfirmed(s, p))
		return;
	if (!check_hand_behind(s, pc->rh_sid, &seq, ahead, sizeof(ahead)) ||
	    (pc->rh_claimed && pc->rh_claim_seq != seq))
		return;
	s->st.needless++;
	if (s->avail)
		check_fail(s, "(RH) %s: resumed session %016llx, its claim %lld "
		    "behind %s, never told to lead (no promote or fence "
		    "since its last demote ended), runs a startup demote",
		    p->id, (unsigned long long)pc->rh_sid, (long long)seq,
		    ahead);
}
