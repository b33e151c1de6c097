/*
 * The invariants, checked as the run goes (this file, but (j) in
 * check_queue.c, (e) and (f), at the end of a run, in check_final.c, and
 * the lease's L1, L2, AV and G in check_lease.c):
 *  (a) no two daemons between promote start and demote end at the same
 *      instant, unless the older one is excused: frozen at or past the
 *      point its demote had to start (it could not act), or crashed while
 *      leading when nothing could fence it; a successful fence ends the
 *      fenced leader's interval
 *  (b) per daemon one hook at a time, and promote and demote alternate
 *  (c) role leader only while now < lease_end, also between events
 *  (d) the epoch of a promote is its node's czxid and grows from leader to
 *      leader; the same node keeps its epoch
 *  (e) every accepted resign and every pause is answered
 *  (f) after the faults, within the bound: one leader, one node per live
 *      healthy unpaused candidate and none for anyone else, nobody stuck;
 *      every daemon (observers and paused ones too, the leader itself)
 *      reports that leader: its view's leader_id and leader_epoch are the
 *      leader's id and epoch
 *  (g) a promote or fence starts only inside a lease; a daemon that wakes
 *      past the start of its demote demotes before anything else
 *  (h) what hooks are told is true: a demote that ends a leadership
 *      carries that leadership's epoch; "session-expired" means the session
 *      it led in is gone; "resign" means an operator asked it to resign
 *      (a switchover's or a preemption's handoff says so); "node-deleted"
 *      means the node it led on is gone from the quorum; "preempted" that
 *      E/leader is another session's, a node is before the one it led on,
 *      or it began a handover (or resumed and its claim is gone)
 *  (i) with a fence hook, a promote over a breadcrumb of another epoch
 *      (the quorum's E/breadcrumb when the promote starts, whatever the
 *      daemon believes; one written by hand once the daemon heard of
 *      it) comes after a successful fence of that epoch for
 *      the same candidate node; so does one over a breadcrumb the daemon
 *      believes is there; and a fence runs only over a breadcrumb of
 *      another epoch the quorum holds when it starts
 *  (j) the queue's order is kept: when the quorum commits the creation
 *      of a claim (E/claims), the claimant's candidate node is the first
 *      (lowest sequence) of the quorum's queue, or the second behind a
 *      session holding a claim; when a promote or fence hook starts, the
 *      daemon's node is the first of the quorum's queue, or already gone,
 *      deleted by hand or with its session (it will demote), not by its
 *      own release, and its session holds the first claim; when it
 *      commits an ack's creation of E/leader or the breadcrumb, the
 *      acker's session holds the first claim. Sequence numbers only
 *      grow, so nothing can come before a node that was first once
 * The first violation stops the run.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "sim.h"

void
check_fail(struct sim *s, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	if (s->failed)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->failed = 1;
	(void)snprintf(s->why, sizeof(s->why), "t=%lld.%03lld %s",
	    (long long)(s->now / 1000), (long long)(s->now % 1000), buf);
	trace(s, -1, "VIOLATION: %s", buf);
}

static void
check_view(struct peer *p, struct election_view *v)
{
	election_view(p->el, v);
}

void
check_start(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];

	pc->last_pd = 0;
	pc->fenced_between = 0;
	pc->must_demote = 0;
	pc->promote_killed = 0;
	pc->resumed_lead = 0;
	pc->av_cut_at = 0;	/* a kill's demote died with its process */
	pc->rs_point = 0;
	pc->rh_on = 0;
	pc->handing = 0;
	pc->hold_from = 0;
	p->last_role = ROLE_UNKNOWN;
	p->last_lease = 0;
}

/* The epoch= of E/leader's or E/breadcrumb's data. */
int64_t
check_epoch_of(const char *data)
{
	char buf[32];

	candidate_kv(data, "epoch", buf, sizeof(buf));
	return strtoll(buf, NULL, 10);
}

/* The crumb in the quorum: who led last and with which epoch. */
static int
check_crumb(struct sim *s, char *id, size_t idlen, int64_t *epoch)
{
	struct znode *z = ztree_get(&s->qu.tree, SIM_CRUMB);

	if (z == NULL)
		return 0;
	candidate_kv(z->data, "id", id, idlen);
	*epoch = check_epoch_of(z->data);
	return 1;
}

/* The quorum's E/breadcrumb is the last write by hand (fault_crumb_tie()). */
static int
check_crumb_hand(struct sim *s)
{
	const struct znode *z = ztree_get(&s->qu.tree, SIM_CRUMB);

	return z != NULL && s->crumb_hand_zxid != 0 &&
	    z->mzxid == s->crumb_hand_zxid;
}

/*
 * (i) with E/breadcrumb written by hand (fault_crumb_tie(), -H): a daemon
 * can act on the write once it hears of it: its watch's notification (a
 * change, a creation), or a read's reply, from a server that applied it.
 * From then on (told: the zxid its core was told with its last such news,
 * p->crumb_heard, at least the write's) the quorum's breadcrumb is what
 * (i) holds its promotes and fences to; before, the write is in flight
 * (or came after a deletion spent the watch), and what the daemon decided
 * on the breadcrumb before it stands (counted, -S). 1 when the quorum's
 * breadcrumb is such a write that told does not reach.
 */
static int
check_crumb_unheard(struct sim *s, int64_t told)
{
	if (!check_crumb_hand(s) || s->crumb_hand_zxid <= told)
		return 0;
	s->st.crumb_unheard++;
	return 1;
}

/* News of E/breadcrumb reaches p's core (check_crumb_unheard()). */
void
check_crumb_heard(struct sim *s, struct peer *p)
{
	(void)s;
	p->crumb_heard = stall_told_zxid(p);
}

void
check_crash(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	char id[32];
	int64_t epoch = 0;

	if (!pc->open || pc->excused)
		return;
	pc->crashed = 1;
	/*
	 * Its application goes on leading. With a fence hook and a
	 * breadcrumb naming it, the successor must fence it first;
	 * otherwise nothing can stop it and an overlap is excused.
	 */
	if (s->fc.fence && check_crumb(s, id, sizeof(id), &epoch) &&
	    strcmp(id, p->id) == 0 && epoch == pc->epoch) {
		trace(s, p->idx, "check: crashed while leading; a successor "
		    "must fence epoch %lld", (long long)epoch);
		return;
	}
	pc->excused = 1;
	trace(s, p->idx, "check: crashed while leading, unfenceable: "
	    "excused");
}

/*
 * -R: a resumed daemon confirmed what its session holds. Leading, it
 * supervises its application again: whatever its crash excused is over,
 * and an overlap from now on is one.
 */
void
check_resumed(struct sim *s, struct peer *p, enum role role)
{
	struct pcheck *pc = &s->pc[p->idx];

	trace(s, p->idx, "resumed: %s", election_role_name(role));
	if (role != ROLE_LEADER || !pc->open)
		return;
	/* A leader resumed leads on with its breadcrumb: (rel) follows it. */
	if (p->crumb_sid == p->cl.sid)
		p->crumb_inc = p->inc;
	pc->excused = 0;
	pc->crashed = 0;
}

/*
 * (back) A promote or fence that failed of itself is followed by the
 * contract's "demote, ordered release, wait retry_backoff, rejoin at the
 * back": no promote or fence of the same process before the backoff
 * (the shorter of the one configured then and now, for a reload). An
 * eighth blind round's defect took a fence that failed for a killed one
 * and ran it again at once, in a loop that keeps the head's place: with a
 * fencing device out of reach, no leader ever, where the next candidate
 * would have fenced and led.
 */
void
check_backoff(struct sim *s, struct peer *p, enum hook_kind kind)
{
	int64_t wait = p->failed_backoff;

	if (!p->back_armed)
		return;
	p->back_armed = 0;
	if (p->params.retry_backoff_ms < wait)
		wait = p->params.retry_backoff_ms;
	if (s->now < p->failed_at + wait)
		check_fail(s, "(back) %s: starts a %s %lld ms after a promote "
		    "or fence that failed, within its retry_backoff %lld ms",
		    p->id, trace_hook(kind), (long long)(s->now - p->failed_at),
		    (long long)wait);
}

/* An administrator deleted the breadcrumb: a crashed leader it named can
 * no longer be found to be fenced. */
void
check_crumb_deleted(struct sim *s)
{
	int i;

	s->crumb_admin_at = s->now;
	for (i = 0; i < s->npeers; i++)
		if (s->pc[i].open && s->pc[i].crashed && !s->pc[i].excused) {
			s->pc[i].excused = 1;
			trace(s, i, "check: its breadcrumb deleted while "
			    "crashed: excused");
		}
}

/*
 * The breadcrumb as the write pd left it, if it still names us: an ack's,
 * or new data written over the breadcrumb an ack of this process and
 * session wrote (the same epoch; a heir's new data leaves the breadcrumb
 * as it was).
 */
static void
check_crumb_written(struct sim *s, struct peer *p, const struct cpending *pd)
{
	const struct znode *z;
	char id[64];

	(void)snprintf(id, sizeof(id), "id=%s\n", p->id);
	if ((pd->op != EL_OP_ACK && pd->op != EL_OP_SET_DATA) ||
	    (z = ztree_get(&s->qu.tree, SIM_CRUMB)) == NULL ||
	    strncmp(z->data, id, strlen(id)) != 0)
		return;
	/* New data that left the breadcrumb alone wrote nothing of it. */
	if (pd->op == EL_OP_SET_DATA && (!pd->crumb ||
	    p->crumb_sid != p->cl.sid || p->crumb_inc != p->inc ||
	    z->mzxid == p->crumb_zxid ||
	    check_epoch_of(z->data) != p->crumb_epoch))
		return;
	if (pd->op == EL_OP_ACK)
		p->crumb_ack_zxid = pd->qzxid;
	p->crumb_zxid = z->mzxid;
	p->crumb_sid = p->cl.sid;
	p->crumb_at = pd->sent;
	p->crumb_inc = p->inc;
	p->crumb_epoch = check_epoch_of(z->data);
}

/*
 * (rel) A leader knows what it wrote: its release is never refused for
 * a version (BADVERSION) unless an administrator deleted something since
 * its ack (E/leader or the breadcrumb, made again by another leader, or
 * its node or claim). A version the core failed to count up costs a
 * refused release, a read and a second release in every handover (a
 * blind round's mutant, 106) and nothing else would show it.
 */
void
check_release_reply(struct sim *s, struct peer *p, const struct cpending *pd,
    int rc)
{
	if (rc != ZOK)
		return;
	if (pd->op == EL_OP_ACK)
		p->ack_at = s->now;
	check_crumb_written(s, p, pd);
}

/*
 * (rel) An ack whose reply was lost may have been applied: the
 * breadcrumb it wrote, if the quorum has it, is followed as an answered
 * ack's (a seventh blind round took it for ours only at the reply). Only
 * a breadcrumb written after the ack went out can be its: one the quorum
 * refused (its node deleted by hand, say) leaves the breadcrumb of an
 * earlier ack, which is followed from that ack's time (the campaign of
 * 2271a7e, seed 1001493987 -k 2000: a refused ack took over the earlier
 * breadcrumb with its own, later time, and so lost the excuse of a node
 * deleted by hand in between).
 */
void
check_ack_lost(struct sim *s, struct peer *p, const struct cpending *pd)
{
	const struct znode *z;

	if (pd->op != EL_OP_ACK || pd->qzxid < 0 ||
	    (z = ztree_get(&s->qu.tree, SIM_CRUMB)) == NULL ||
	    z->mzxid <= pd->qzxid)
		return;
	check_crumb_written(s, p, pd);
}

/*
 * (rel): a release refused for a version nobody else changed. The
 * breadcrumb written by hand (-H) and not heard of when the ack went
 * (check_crumb_unheard()) changed it: the ack's write over it is counted
 * from the read before. One the core heard of first it reads again (a
 * thirteenth blind round's, mutant 163, did not).
 */
void
check_release_refused(struct sim *s, struct peer *p, enum el_op op, int rc)
{
	if (op != EL_OP_RELEASE || rc != ZBADVERSION ||
	    s->admin_last >= p->ack_at || s->crumb_hand_zxid > p->ack_told)
		return;
	check_fail(s, "(rel) %s: release refused (BADVERSION), nothing "
	    "deleted by hand since its ack at %lld.%03lld%s", p->id,
	    (long long)(p->ack_at / 1000), (long long)(p->ack_at % 1000),
	    s->crumb_hand_zxid != 0 ? " (it had heard of the breadcrumb's "
	    "write by hand when the ack went)" : "");
}

/* Whether the quorum ever applied a create of path. */
static int
check_ever_made(const struct sim *s, const char *path)
{
	int i, j;

	for (i = 0; i < s->qu.nlog; i++)
		for (j = 0; j < s->qu.log[i].nchg; j++)
			if (s->qu.log[i].chg[j].kind == CHG_CREATE &&
			    strcmp(s->qu.log[i].chg[j].path, path) == 0)
				return 1;
	return 0;
}

/*
 * (rel) A release refused (NONODE) names no priority marker the quorum
 * never held: a marker's name is its session's and priority's, so one
 * never made is one whose MARK was lost with its connection and never
 * applied. Until the core knows it was made it may not delete it in the
 * release's multi: the multi fails as a whole on every try, until the
 * third refusal replaces the session; the heir waits, the resign or
 * pause is answered late, the breadcrumb may be left (a twelfth blind
 * round's B-3, mutant 158: the release deleted a marker it was unsure
 * of).
 */
void
check_release_unheld(struct sim *s, const struct zreq *r)
{
	const struct peer *p = peer_of_session(s, r->sid);
	size_t len = strlen(SIM_MARKS "/");
	int i;

	if (r->res.rc != ZNONODE)
		return;
	for (i = 0; i < r->nmop; i++)
		if (r->mop[i].kind == ZK_MOP_DELETE &&
		    strncmp(r->mop[i].path, SIM_MARKS "/", len) == 0 &&
		    ztree_get(&s->qu.tree, r->mop[i].path) == NULL &&
		    !check_ever_made(s, r->mop[i].path))
			check_fail(s, "(rel) %s: release refused (NONODE): it "
			    "deletes marker %s, which the quorum never held",
			    p != NULL ? p->id : "?", r->mop[i].path);
}

/* The zxid of the quorum's last change of kind to path, or 0. */
static int64_t
check_last_change(const struct sim *s, int kind, const char *path)
{
	int i, j;

	for (i = s->qu.nlog - 1; i >= 0; i--)
		for (j = 0; j < s->qu.log[i].nchg; j++)
			if ((int)s->qu.log[i].chg[j].kind == kind &&
			    strcmp(s->qu.log[i].chg[j].path, path) == 0)
				return s->qu.log[i].zxid;
	return 0;
}

/* A watch tells p's core that path was deleted: kept for (rel). */
void
check_mark_told(struct sim *s, const struct peer *p, int deleted,
    const char *path)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (!deleted ||
	    strncmp(path, SIM_MARKS "/", strlen(SIM_MARKS "/")) != 0)
		return;
	sim_copy(pc->gone_mark, sizeof(pc->gone_mark), path);
	pc->gone_inc = p->inc;
	pc->gone_zxid = check_last_change(s, CHG_DELETE, path);
}

/*
 * (rel) A release deletes no priority marker its core was told (a watch)
 * was deleted, that nobody made again since: the multi fails NONODE as a
 * whole, and the resign, pause or stop waits for another try. Checked
 * as the core sends it. Our marker deleted by hand while any UNMARK was
 * in flight (of a reload's old marker, or of a hand-made one of our
 * session) was taken for that UNMARK's own deletion (a thirteenth blind
 * round's A-4, mutant 162).
 */
static void
check_release_told(struct sim *s, const struct peer *p,
    const struct el_action *act)
{
	const struct pcheck *pc = &s->pc[p->idx];
	int i;

	if (pc->gone_mark[0] == '\0' || pc->gone_inc != p->inc ||
	    ztree_get(&s->qu.tree, pc->gone_mark) != NULL ||
	    check_last_change(s, CHG_CREATE, pc->gone_mark) > pc->gone_zxid)
		return;
	for (i = 0; i < act->nsub; i++)
		if (act->sub[i].kind == ZK_MOP_DELETE &&
		    strcmp(act->sub[i].path, pc->gone_mark) == 0)
			check_fail(s, "(rel) %s: its release deletes marker "
			    "%s, which it was told was deleted (zxid %lld), "
			    "and nobody made since", p->id, pc->gone_mark,
			    (long long)pc->gone_zxid);
}

/*
 * (rel) A release's reply as the core reads it: one a server gave that
 * refuses it counts, one lost with its connection does not (it may have
 * been applied: the core reads again and retries), one applied ends it.
 */
void
check_release_answer(struct sim *s, struct peer *p, enum el_op op, int rc)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (op != EL_OP_RELEASE)
		return;
	if (rc == ZOK)
		pc->rel_refused = 0;
	else if (rc != ZCONNECTIONLOSS)
		pc->rel_refused++;
}

/*
 * (rel) A session replaced while its handle lives (not expired, its
 * authentication not failed) is a release given up: the contract
 * retries a release after a read until it is refused three times for
 * real. One given up on lost replies leaves the breadcrumb, and the
 * successor fences a leader that demoted cleanly (a blind round: a lost
 * reply counted as an attempt).
 */
static void
check_release_given_up(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (p->cl.state != CL_EXPIRED && pc->rel_refused < 3)
		check_fail(s, "(rel) %s: gives its release up and replaces "
		    "its live session, refused %d time(s) by a server",
		    p->id, pc->rel_refused);
	pc->rel_refused = 0;
}

/*
 * (rel) Whether the release deletes a claim of its session that the
 * quorum held before its ack went out: the ack checked it, and it
 * exists still (a name is never made again), so it was first all along
 * and nobody else led since. The core knows that claim as the one it
 * acked under, whatever was deleted by hand (its node, say): a claim
 * whose sequence is 0 guards as well as any other.
 */
static int
check_release_guarded(struct sim *s, const struct peer *p,
    const struct el_action *act)
{
	const struct znode *z;
	size_t len = strlen(SIM_CLAIMS "/");
	int i;

	for (i = 0; i < act->nsub; i++)
		if (act->sub[i].kind == ZK_MOP_DELETE &&
		    strncmp(act->sub[i].path, SIM_CLAIMS "/", len) == 0 &&
		    (z = ztree_get(&s->qu.tree, act->sub[i].path)) != NULL &&
		    z->owner == p->cl.sid && z->czxid <= p->crumb_ack_zxid)
			return 1;
	return 0;
}

/*
 * (rel), and a release deletes the breadcrumb its leadership wrote: in
 * the process and session whose write of it was answered, while the
 * quorum's is still that write and nothing was deleted by hand since the
 * write was sent. A
 * breadcrumb left behind makes the successor fence a leader that
 * demoted cleanly, and costs the heir its promote on the release alone
 * (a blind round: a failed release that forgot the breadcrumb was ours).
 */
void
check_release_crumb(struct sim *s, struct peer *p,
    const struct el_action *act)
{
	const struct pcheck *pc = &s->pc[p->idx];
	const struct qsession *qs = quorum_session(s, p->cl.sid);
	const struct znode *z;
	int i;

	/*
	 * Not once the quorum has expired the session: its release can
	 * delete nothing, and a leader whose session ended is one the
	 * successor must fence (the campaign on b30b267, seed 1012017016
	 * -P -L: frozen past its lease, the session expired, its node and
	 * claim gone with it, the release sent on waking).
	 */
	if (qs == NULL || !qs->live)
		return;
	/*
	 * The leadership of its last promote, in the process that wrote the
	 * breadcrumb or one that resumed it as the leader (a resume that
	 * ends in a startup demote knows not what it led with), ended by
	 * a demote of its own choosing: one for a lost lease, contact or
	 * session may leave the breadcrumb, and the successor fences.
	 */
	if (p->crumb_sid == 0 || p->crumb_sid != p->cl.sid ||
	    p->crumb_inc != p->inc ||
	    p->crumb_epoch != pc->epoch || pc->startup_demoted ||
	    pc->lost_demoted ||
	    (s->admin_last >= p->crumb_at &&
	    !check_release_guarded(s, p, act)) ||
	    (z = ztree_get(&s->qu.tree, SIM_CRUMB)) == NULL ||
	    z->mzxid != p->crumb_zxid)
		return;
	for (i = 0; i < act->nsub; i++)
		if (act->sub[i].kind == ZK_MOP_DELETE &&
		    strcmp(act->sub[i].path, SIM_CRUMB) == 0)
			return;
	check_fail(s, "(rel) %s: release leaves the breadcrumb its write "
	    "sent at %lld.%03lld left, unchanged and %s", p->id,
	    (long long)(p->crumb_at / 1000), (long long)(p->crumb_at % 1000),
	    s->admin_last >= p->crumb_at ? "its claim from before the ack "
	    "deleted with it" : "nothing deleted by hand since");
}

void
check_freeze(struct sim *s, struct peer *p)
{
	struct election_view v;

	check_view(p, &v);
	s->pc[p->idx].demote_at_freeze = v.lease_end - v.demote_timeout_ms;
	check_lease_freeze(s, p);
}

void
check_wake(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	check_lease_wake(s, p);
	if (!pc->open)
		return;
	if (s->now > pc->demote_at_freeze && !pc->excused) {
		pc->excused = 1;
		trace(s, p->idx, "check: was frozen past the start of its "
		    "demote: excused");
	}
	check_view(p, &v);
	if (s->now >= v.lease_end - v.demote_timeout_ms &&
	    !(p->hook_on && p->hook_kind == HOOK_DEMOTE)) {
		pc->must_demote = 1;
		trace(s, p->idx, "check: woke past the start of its demote "
		    "(lease_end %lld): must demote first",
		    (long long)v.lease_end);
	}
}

static const char *
check_ts(const struct sim *s, int64_t t, char *buf, size_t len)
{
	(void)s;
	(void)snprintf(buf, len, "%lld.%03lld", (long long)(t / 1000),
	    (long long)(t % 1000));
	return buf;
}

/*
 * (i) at a promote with a fence hook: the quorum's breadcrumb, not the
 * daemon's view of it: a view gone stale must not let a promote skip the
 * fence. No daemon can write it meanwhile (the daemon holds the first
 * claim, a leader's writes check its own node, which is gone); an
 * administrator deletes it (nothing to fence then), or writes it (-H):
 * from the moment the daemon hears of that write, the promote fences its
 * epoch first (check_crumb_unheard(); a fence that started before stands).
 * Nor may it promote over what it believes is there. dd: its claim and
 * node both deleted by hand (check_promote()). A promote again on the
 * node of its last promote is held to neither by a write by hand: no one
 * else can have led since that promote (CONTRACT.md, 5), whose decision
 * stands (a resumed leader takes its node's fence as done).
 */
static void
check_promote_crumb(struct sim *s, struct peer *p,
    const struct el_action *act, const struct election_view *v, int dd)
{
	struct pcheck *pc = &s->pc[p->idx];
	char cid[32];
	int64_t cepoch = 0;

	if (check_crumb_hand(s) && strcmp(pc->promoted_node, v->node) == 0) {
		s->st.crumb_unheard++;
		return;
	}
	if (!dd && check_crumb(s, cid, sizeof(cid), &cepoch) &&
	    cepoch != act->epoch && !check_crumb_unheard(s, p->crumb_heard)) {
		s->st.over_crumb++;
		if (v->crumb_epoch != cepoch)
			s->st.stale_crumb++;
		if (strcmp(pc->fenced_node, v->node) != 0)
			check_fail(s, "(i) %s: promotes over the breadcrumb of "
			    "epoch %lld (%s) without fencing it (its view: "
			    "epoch %lld)", p->id, (long long)cepoch, cid,
			    (long long)v->crumb_epoch);
		else if (pc->fenced_epoch != cepoch &&
		    !check_crumb_unheard(s, pc->fenced_told))
			check_fail(s, "(i) %s: promotes over the breadcrumb of "
			    "epoch %lld (%s), but its fence was for epoch "
			    "%lld", p->id, (long long)cepoch, cid,
			    (long long)pc->fenced_epoch);
	}
	if (v->crumb_epoch != 0 && v->crumb_epoch != act->epoch &&
	    strcmp(pc->fenced_node, v->node) != 0)
		check_fail(s, "(i) %s: promotes over the breadcrumb of epoch "
		    "%lld (%s) it knows of without fencing it", p->id,
		    (long long)v->crumb_epoch, v->crumb_id);
}

static void
check_promote(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;
	char ts[32];
	int64_t czxid;
	int i, dd = 0;

	check_view(p, &v);
	s->st.promotes++;
	pc->av_cut_at = 0;
	/*
	 * Its claim and its node both deleted by hand in this session,
	 * unheard yet: it promotes on a node that is gone, with nothing to
	 * keep the next head waiting, and on a view a successor's writes
	 * may have outdated. No election can help it (it demotes once it
	 * hears); (a), (d) and (i) have nothing to say of it.
	 */
	if (check_hand_deleted(s, p)) {
		s->st.double_deletes++;
		dd = 1;
	}
	check_queue_hook(s, p, v.node, HOOK_PROMOTE);
	check_ops_promote(s, p, v.node);
	check_lease_promote(s, p, HOOK_PROMOTE);
	if (v.lease_end <= s->now)
		check_fail(s, "(g) %s: promote starts outside its lease "
		    "(lease_end %lld)", p->id, (long long)v.lease_end);
	if (v.node == NULL)
		check_fail(s, "(d) %s: promote without a candidate node",
		    p->id);
	else {
		czxid = quorum_born_czxid(s, v.node);
		if (czxid != act->epoch)
			check_fail(s, "(d) %s: promote epoch %lld but its node "
			    "%s has czxid %lld", p->id,
			    (long long)act->epoch, v.node, (long long)czxid);
	}
	if (s->fc.fence && v.node != NULL)
		check_promote_crumb(s, p, act, &v, dd);
	(void)snprintf(pc->promoted_node, sizeof(pc->promoted_node), "%s",
	    v.node != NULL ? v.node : "");
	if (!dd && act->epoch < s->last_epoch)
		check_fail(s, "(d) %s: promote epoch %lld below the last "
		    "leader's %lld%s", p->id, (long long)act->epoch,
		    (long long)s->last_epoch, s->admin_last > 0 &&
		    s->admin_last >= s->now - 2 * s->T ?
		    " [an administrator deleted nodes meanwhile]" : "");
	else if (!dd && act->epoch == s->last_epoch && v.node != NULL &&
	    (s->last_epoch_peer != p->idx ||
	    strcmp(s->last_epoch_node, v.node) != 0))
		check_fail(s, "(d) %s: promote epoch %lld already used by %s",
		    p->id, (long long)act->epoch,
		    s->peer[s->last_epoch_peer].id);
	s->last_epoch = act->epoch;
	s->last_epoch_peer = p->idx;
	(void)snprintf(s->last_epoch_node, sizeof(s->last_epoch_node), "%s",
	    v.node != NULL ? v.node : "");
	for (i = 0; i < s->npeers; i++) {
		struct pcheck *o = &s->pc[i];

		if (i == p->idx || !o->open || o->excused || o->fenced || dd)
			continue;
		/* Frozen, and the freeze has reached its demote point. */
		if (s->peer[i].frozen && s->now >= o->demote_at_freeze)
			continue;
		/*
		 * Its claim deleted by hand in this session (it leads on
		 * its E/leader since, and makes none), and its node while
		 * it led: what kept the next head from promoting is gone,
		 * and no election can help it.
		 */
		if (o->claim_admin_sid == o->sid &&
		    o->node_admin_at >= o->open_at - s->T) {
			s->st.double_deletes++;
			continue;
		}
		check_fail(s, "(a) two leaders: %s promotes (epoch %lld) "
		    "while %s leads since %s (epoch %lld)%s", p->id,
		    (long long)act->epoch, s->peer[i].id,
		    check_ts(s, o->open_at, ts, sizeof(ts)),
		    (long long)o->epoch, o->admin_at > 0 &&
		    o->admin_at >= o->open_at - s->T ?
		    " [an administrator deleted its node or E/leader]" :
		    s->admin_last > 0 && s->admin_last >= o->open_at - s->T ?
		    " [an administrator deleted nodes meanwhile]" : "");
	}
	if (!pc->open || pc->fenced) {
		pc->open = 1;
		pc->open_at = s->now;
		pc->excused = 0;
		pc->fenced = 0;
	}
	pc->epoch = act->epoch;
	pc->sid = p->cl.sid;
}

/*
 * (h): "promote-failed" (a demote's reason, a release's cause: the node
 * is given up and the daemon backs off) only after a promote or fence
 * that failed of itself, not one the daemon cancelled (a seventh blind
 * round: a promote killed at the demote point gave its node away).
 */
void
check_promote_failed(struct sim *s, struct peer *p, const char *what,
    const char *reason)
{
	if (reason != NULL && strcmp(reason, "promote-failed") == 0 &&
	    !p->lead_failed)
		check_fail(s, "(h) %s: %s for promote-failed, but its last "
		    "promote or fence %s", p->id, what, p->hook_cancel_seen ?
		    "was cancelled by the daemon" : "did not fail");
}

static void
check_demote(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct qsession *qs;

	s->st.demotes++;
	check_lease_resumed(s, p, act->reason);
	check_hand_startup(s, p, act->reason);
	/* A restarted process cannot know what its predecessor led with. */
	if (!pc->open || (act->reason != NULL &&
	    strcmp(act->reason, "startup") == 0))
		return;
	if (act->epoch != pc->epoch)
		check_fail(s, "(h) %s: demote with epoch %lld ends the "
		    "leadership of epoch %lld", p->id, (long long)act->epoch,
		    (long long)pc->epoch);
	/* A switchover's or a preemption's handoff says so (a blind round). */
	if (act->reason != NULL && strcmp(act->reason, "resign") == 0 &&
	    p->resign_wait == 0)
		check_fail(s, "(h) %s: demote reason resign, but no operator's "
		    "resign is pending", p->id);
	check_promote_failed(s, p, "demote", act->reason);
	check_lease_demote(s, p, act);
	qs = quorum_session(s, pc->sid);
	/* The core reports an auth failure as an expiry, by design. */
	if (act->reason != NULL && strcmp(act->reason, "session-expired") ==
	    0 && qs != NULL && qs->live && p->auth_failed_at < pc->open_at)
		check_fail(s, "(h) %s: demote reason session-expired, but "
		    "session %016llx it led in is alive", p->id,
		    (unsigned long long)pc->sid);
}

/*
 * (i) A fence runs only over a breadcrumb of another epoch that the
 * quorum holds when it starts (the contract: a predecessor that left
 * without a graceful demote): one that demoted and released cleanly is
 * never fenced. No daemon writes E/breadcrumb while the fencer holds the
 * first claim; an administrator deletes it (a view of it may then lag,
 * while the watch's news is on its way: 2T and 5 s), or writes it (-H:
 * it counts once the daemon heard of it, check_crumb_unheard()).
 */
static void
check_fence_needed(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	char cid[32];
	int64_t cepoch;

	if (check_hand_deleted(s, p))
		return;
	if (!check_crumb(s, cid, sizeof(cid), &cepoch)) {
		if (s->crumb_admin_at == 0 ||
		    s->crumb_admin_at < s->now - 2 * s->T - 5000)
			check_fail(s, "(i) %s: fences with no breadcrumb in "
			    "the quorum (its view: epoch %lld of %s)", p->id,
			    (long long)v->crumb_epoch, v->crumb_id);
		return;
	}
	if (cepoch != v->crumb_epoch && !check_crumb_unheard(s,
	    p->crumb_heard))
		check_fail(s, "(i) %s: fences epoch %lld, but the quorum's "
		    "breadcrumb is epoch %lld (%s)", p->id,
		    (long long)v->crumb_epoch, (long long)cepoch, cid);
}

void
check_hook_start(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct election_view v;

	trace(s, p->idx, "HOOK %s start (reason %s, epoch %lld, timeout %lld)",
	    trace_hook(act->hook), act->reason != NULL ? act->reason : "-",
	    (long long)act->epoch, (long long)act->ms);
	if (act->hook == HOOK_PROMOTE || act->hook == HOOK_FENCE)
		check_hand_promoted(s, p);
	switch (act->hook) {
	case HOOK_PROMOTE:
		check_promote(s, p, act);
		break;
	case HOOK_FENCE:
		check_view(p, &v);
		check_queue_hook(s, p, v.node, HOOK_FENCE);
		check_lease_promote(s, p, HOOK_FENCE);
		if (v.lease_end <= s->now)
			check_fail(s, "(g) %s: fence starts outside its lease",
			    p->id);
		check_fence_needed(s, p, &v);
		(void)snprintf(p->fence_id, sizeof(p->fence_id), "%s",
		    v.crumb_id);
		p->fence_epoch = v.crumb_epoch;
		p->fence_told = p->crumb_heard;
		(void)snprintf(p->fence_node, sizeof(p->fence_node), "%s",
		    v.node != NULL ? v.node : "");
		break;
	case HOOK_DEMOTE:
		check_demote(s, p, act);
		break;
	case HOOK_CHECK:
		check_health_start(s, p, 1);
		break;
	case HOOK_NOTIFY:	/* the daemon's alone, never the core's */
	case HOOK_RUN:
		check_fail(s, "%s: the core asked for a daemon's hook (%d)",
		    p->id, (int)act->hook);
		break;
	}
}

void
check_hook_exit(struct sim *s, struct peer *p, enum hook_kind kind, int ok)
{
	int i;

	trace(s, p->idx, "HOOK %s ends %s after %lld ms", trace_hook(kind),
	    ok ? "ok" : "failed", (long long)(s->now - p->hook_start));
	if (kind == HOOK_DEMOTE) {
		s->pc[p->idx].open = 0;
		/* (RH) A demote that failed, or died, may leave it leading. */
		if (ok)
			s->pc[p->idx].lead_begun = 0;
		s->pc[p->idx].excused = 0;
		s->pc[p->idx].fenced = 0;
		s->pc[p->idx].crashed = 0;
	}
	if (kind == HOOK_FENCE && ok) {
		(void)snprintf(s->pc[p->idx].fenced_node,
		    sizeof(s->pc[p->idx].fenced_node), "%s", p->fence_node);
		s->pc[p->idx].fenced_epoch = p->fence_epoch;
		s->pc[p->idx].fenced_told = p->fence_told;
	}
	if (kind == HOOK_FENCE && ok)
		for (i = 0; i < s->npeers; i++)
			if (s->pc[i].open && !s->pc[i].fenced &&
			    s->pc[i].epoch == p->fence_epoch &&
			    strcmp(s->peer[i].id, p->fence_id) == 0) {
				trace(s, p->idx, "check: fenced %s (epoch "
				    "%lld)", s->peer[i].id,
				    (long long)p->fence_epoch);
				s->pc[i].fenced = 1;
			}
}

/*
 * Whether a daemon that woke past the start of its demote still is: a
 * reply the quorum confirmed before the wake, read from the socket's
 * buffer after it, renews the lease as it should.
 */
static int
check_past_demote(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (!pc->must_demote)
		return 0;
	check_view(p, &v);
	if (v.lease_end != 0 && s->now < v.lease_end - v.demote_timeout_ms) {
		pc->must_demote = 0;
		trace(s, p->idx, "check: a buffered reply renewed its lease "
		    "(lease_end %lld)", (long long)v.lease_end);
	}
	return pc->must_demote;
}

/*
 * (h) "preempted" ends a leadership that someone else took or was handed:
 * E/leader another session's, a node before the one it led on (or that
 * node gone), a preemption or switchover it began, or a resumed leader's
 * claim gone (check_hand_resumed_preempted(): only then, mutant 165). An
 * administrator's deletes of late excuse it (a view of
 * E/leader may lag the quorum's).
 */
static void
check_demote_preempted(struct sim *s, struct peer *p, const char *led)
{
	struct znode *z = ztree_get(&s->qu.tree, SIM_LEADER);
	struct candidate c;
	const char *name = strrchr(led, '/') + 1;

	if (check_hand_resumed_preempted(s, p) || p->sw_on ||
	    (s->admin_last != 0 && s->admin_last >= s->now - 2 * s->T - 5000))
		return;
	if (z != NULL && z->owner != p->cl.sid)
		return;
	if (ztree_get(&s->qu.tree, led) == NULL ||
	    candidate_parse(name, &c) != 0 ||
	    check_queue_has_node(s, 0, -1, c.seq))
		return;
	check_fail(s, "(h) %s: demotes for preempted, but E/leader is %s, "
	    "no node is before %s and no handover was begun", p->id,
	    z != NULL ? "its own" : "gone", name);
}

/*
 * (h) A leader told its node was deleted lost it: the node it led on is
 * gone from the quorum (a name is never made again). A demote for a
 * deletion that did not happen is a needless failover.
 */
static void
check_demote_why(struct sim *s, struct peer *p, const char *reason)
{
	struct pcheck *pc = &s->pc[p->idx];
	char path[SIM_PATH + 64];

	if (reason == NULL || pc->led_node[0] == '\0')
		return;
	(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS, pc->led_node);
	/* Resumed as the leader: it leads on the node its session led on. */
	if (pc->last_pd != 'P') {
		if (pc->resumed_lead && strcmp(reason, "preempted") == 0)
			check_demote_preempted(s, p, path);
		return;
	}
	if (strcmp(reason, "node-deleted") == 0 &&
	    ztree_get(&s->qu.tree, path) != NULL)
		check_fail(s, "(h) %s: demotes for node-deleted, but %s is "
		    "still in the queue", p->id, pc->led_node);
	if (strcmp(reason, "preempted") == 0)
		check_demote_preempted(s, p, path);
}

static void
check_action_hook(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	if (p->hook_on)
		check_fail(s, "(b) %s: hook %s starts while %s runs", p->id,
		    trace_hook(act->hook), trace_hook(p->hook_kind));
	if (act->hook != HOOK_DEMOTE && check_past_demote(s, p))
		check_fail(s, "(g) %s: woke past its lease but starts %s "
		    "before demoting", p->id, trace_hook(act->hook));
	if (pc->promote_killed && act->hook != HOOK_DEMOTE &&
	    act->hook != HOOK_CHECK)
		check_fail(s, "(b) %s: starts %s after its promote was killed, "
		    "before the demote that undoes it", p->id,
		    trace_hook(act->hook));
	switch (act->hook) {
	case HOOK_PROMOTE:
		check_view(p, &v);
		(void)snprintf(pc->led_node, sizeof(pc->led_node), "%s",
		    v.node != NULL ? v.node : "");
		pc->hold_from = 0;	/* leads again: the handover is over */
		if (pc->last_pd == 'P')
			check_fail(s, "(b) %s: two promotes without a demote",
			    p->id);
		pc->last_pd = 'P';
		pc->fenced_between = 0;
		pc->resumed_lead = 0;
		pc->rh_on = 0;
		pc->lead_begun = 1;
		pc->no_lease = 0;
		pc->startup_demoted = 0;
		pc->lost_demoted = 0;
		break;
	case HOOK_DEMOTE:
		check_demote_why(s, p, act->reason);
		if (pc->last_pd == 'D' && !pc->fenced_between)
			check_fail(s, "(b) %s: two demotes without a promote "
			    "(reason %s)", p->id, act->reason);
		pc->last_pd = 'D';
		pc->fenced_between = 0;
		pc->must_demote = 0;
		pc->promote_killed = 0;
		if (act->reason != NULL && strcmp(act->reason, "startup") == 0)
			pc->startup_demoted = 1;
		if (act->reason != NULL && (strcmp(act->reason,
		    "lease-lost") == 0 || strcmp(act->reason,
		    "disconnected") == 0 || strcmp(act->reason,
		    "session-expired") == 0))
			pc->lost_demoted = 1;
		check_ops_demote(s, p, act->reason);
		break;
	case HOOK_FENCE:
		pc->fenced_between = 1;
		pc->lead_begun = 1;
		break;
	case HOOK_CHECK:
	case HOOK_NOTIFY:
	case HOOK_RUN:
		break;
	}
}

void
check_action(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;

	switch (act->type) {
	case EL_ACT_ZK:
		if (act->op == EL_OP_CLAIM)
			s->claims_seen = 1;
		if (act->op == EL_OP_LIST)
			pc->list_sent = s->now;
		if (act->op == EL_OP_ACK)
			p->ack_told = p->crumb_heard;
		check_state_ack(s, p, act);
		if (act->op == EL_OP_RELEASE) {
			check_release_crumb(s, p, act);
			check_release_told(s, p, act);
			check_promote_failed(s, p, "release", act->reason);
		}
		trace(s, p->idx, "-> %s %s", trace_op(act->op),
		    act->path != NULL ? act->path : act->nsub > 0 ?
		    act->sub[0].path : "");
		if (act->op == EL_OP_SYNC ? p->out_sync > 0 :
		    p->out_el >= EL_PIPE_MAX)
			check_fail(s, "%s: %s sent while %d %s request(s) "
			    "are outstanding", p->id, trace_op(act->op),
			    act->op == EL_OP_SYNC ? p->out_sync : p->out_el,
			    act->op == EL_OP_SYNC ? "sync" : "election");
		if ((act->op == EL_OP_ACK ||
		    act->op == EL_OP_CLAIM || act->op == EL_OP_CREATE ||
		    act->op == EL_OP_SET_DATA) && check_past_demote(s, p))
			check_fail(s, "(g) %s: woke past its lease but sends "
			    "%s before demoting", p->id, trace_op(act->op));
		break;
	case EL_ACT_HOOK:
		check_action_hook(s, p, act);
		check_state_hook(s, p, act);
		break;
	case EL_ACT_CANCEL:
		trace(s, p->idx, "-> cancel hook");
		/* A killed promote may have half promoted: a demote undoes it. */
		if (p->hook_on && !p->hook_exited && p->hook_kind == HOOK_PROMOTE)
			pc->promote_killed = 1;
		check_lease_cancel(s, p);
		check_hand_cancel(s, p);
		/*
		 * (g) A leader past its demote point kills what stands in
		 * its demote's way at once: a grace would be taken from the
		 * demote's own budget.
		 */
		check_view(p, &v);
		if (act->ms > 0 && v.promoted && v.demote_at != 0 &&
		    s->now >= v.demote_at)
			check_fail(s, "(g) %s: past its demote point %lld, "
			    "gives hook %s %lld ms of grace", p->id,
			    (long long)v.demote_at, trace_hook(act->hook),
			    (long long)act->ms);
		break;
	case EL_ACT_QUEUE:
	case EL_ACT_OUTRANKED:
	case EL_ACT_PREEMPT:
		break;		/* check_ops_action() */
	case EL_ACT_RESTART:
		trace(s, p->idx, "-> restart session");
		check_release_given_up(s, p);
		break;
	case EL_ACT_STOPPED:
		trace(s, p->idx, "-> stopped");
		/* A check dies with the daemon (hook_runner_free). */
		if (p->hook_on && p->hook_kind != HOOK_CHECK)
			check_fail(s, "%s: exits with hook %s running", p->id,
			    trace_hook(p->hook_kind));
		if (pc->open)
			check_fail(s, "%s: exits without demoting", p->id);
		break;
	case EL_ACT_TRANSITION:
		check_state_transition(s, p, act);
		break;
	case EL_ACT_RESIGNED:
		trace(s, p->idx, "-> resigned%s", p->resign_wait ? "" :
		    " (nobody asked)");
		break;
	case EL_ACT_PAUSED:
		trace(s, p->idx, "-> paused%s", p->pause_wait ? "" :
		    " (nobody asked)");
		break;
	case EL_ACT_NONE:
		break;
	}
}

void
check_step(struct sim *s, struct peer *p, const struct election_view *v)
{
	struct pcheck *pc = &s->pc[p->idx];
	int want;

	check_state_step(s, p, v);
	if (v->role != p->last_role)
		trace(s, p->idx, "role %s (lease_end %lld)",
		    election_role_name(v->role), (long long)v->lease_end);
	p->last_role = v->role;
	p->last_lease = v->lease_end;
	check_lease_step(s, p, v);
	check_lease_grace(s, p, v);
	if (v->role == ROLE_LEADER && s->now >= v->lease_end)
		check_fail(s, "(c) %s: role leader at or past lease_end %lld",
		    p->id, (long long)v->lease_end);
	if (v->role == ROLE_LEADER && !pc->open)
		check_fail(s, "(a) %s: role leader without a promote hook",
		    p->id);
	if (v->role == ROLE_LEADER && pc->promote_killed)
		check_fail(s, "(b) %s: role leader on a promote that was killed",
		    p->id);
	/*
	 * (self): a leader shows itself, with the data set now (unless its
	 * claim and its node were both deleted by hand: another leads).
	 */
	if (v->role == ROLE_LEADER && !check_hand_deleted(s, p) &&
	    (strcmp(v->leader_id, p->id) != 0 ||
	    strcmp(v->leader_data, p->data) != 0))
		check_fail(s, "(self) %s: role leader, shows leader \"%s\" "
		    "data \"%s\" (its data \"%s\")", p->id, v->leader_id,
		    v->leader_data, p->data);
	want = p->hook_on ? (int)p->hook_kind : -1;
	if (v->hook != want)
		check_fail(s, "%s: the view says hook %d, the daemon runs %d",
		    p->id, v->hook, want);
}

void
check_advance(struct sim *s, int64_t t)
{
	int i;

	for (i = 0; i < s->npeers; i++) {
		struct peer *p = &s->peer[i];

		if (!p->running || p->frozen)
			continue;
		check_health_due(s, p, t);
		if (p->last_role == ROLE_LEADER && p->last_lease < t)
			check_fail(s, "(c) %s: still leader at its lease_end "
			    "%lld: nothing woke it before that", p->id,
			    (long long)p->last_lease);
	}
}
