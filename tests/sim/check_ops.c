/*
 * Invariants of the operators' and priorities' decisions, all of them the
 * core's (issue 19):
 * (sw)     a switchover deletes only the nodes strictly between the
 *          leader's own and its target's (by sequence, so whatever the
 *          queue looks like by then);
 * (prio)   a node hands its place over only to a higher priority: a head's
 *          yield to a session whose markers it read (each of them, a
 *          change under way counting at the lower) above its own
 *          priority, a leader's preemption to a candidate whose data it
 *          read above its own, no sooner than its preempt_delay after a
 *          read of its showed that candidate not above it (a flapping
 *          candidate waits again); and a head below 0 does yield to a
 *          higher priority queued behind it long enough to be in its
 *          listing;
 * (top)    at the end, with the leader's preempt_delay not never and no
 *          hand-made marker in the run, no candidate node at the quorum
 *          advertises a priority above the leader's;
 * (sw)     ...and once its leader's demote starts for it (reason
 *          switchover or preempted), the next promote of another daemon
 *          is its target's, unless the target's node is gone by then
 *          (it yielded, was deleted, or its session ended);
 * (answer) a switchover begun after the faults stopped is carried out
 *          (its leader hands over) or given up with a reason by the core
 *          before the daemon's timeout (promote hook timeout + 2T) would
 *          cancel it: a leader that never stopped leading meanwhile was
 *          stuck. (A target that yields at the head to someone who
 *          joined since, or a node its restarted session left behind, is
 *          the queue order deciding: answered "error timeout".) Resign and
 *          pause are answered by the end ((e), check_final.c), and a
 *          resign whose release was applied is answered within 200 ms
 *          once its daemon is unhealthy (it does not queue again:
 *          (resign)). And a
 *          switchover given up as "target-gone" is one whose target the
 *          daemon's last listing of E/candidates, since it began, did not
 *          show (a blind round: a delete of the nodes between answered
 *          NONODE taken for the target gone).
 */
#include <stdio.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "sim.h"

static int check_ops_truth(struct sim *, int64_t, int64_t *);

static int64_t
check_ops_seq(const char *path)
{
	struct candidate c;
	const char *slash = strrchr(path, '/');

	if (candidate_parse(slash != NULL ? slash + 1 : path, &c) != 0)
		return -1;
	return c.seq;
}

static void
check_ops_delete(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct election_view v;
	int64_t own, target, x;
	int i;

	election_view(p->el, &v);
	if (!p->sw_on || v.node == NULL) {
		check_fail(s, "(sw) %s: deletes nodes for a switchover it does "
		    "not follow", p->id);
		return;
	}
	own = check_ops_seq(v.node);
	target = check_ops_seq(p->sw_node);
	p->sw_deleted = 1;
	for (i = 0; i < act->nsub; i++) {
		x = check_ops_seq(act->sub[i].path);
		if (act->sub[i].kind != ZK_MOP_DELETE || x < 0 || x <= own ||
		    x >= target)
			check_fail(s, "(sw) %s: a switchover from %s to %s "
			    "deletes %s, not strictly between them", p->id,
			    v.node, p->sw_node, act->sub[i].path);
	}
}

/*
 * A switchover's handoff begins (its demote, for it): its target is the
 * next to promote. Only once the switchover sent its delete of the nodes
 * between, or when there is none left: a demote for another cause (a
 * resumed leader whose claim is gone says "preempted" too) hands over to
 * the queue as it is.
 */
void
check_ops_demote(struct sim *s, struct peer *p, const char *reason)
{
	struct election_view v;
	const char *slash;

	s->pc[p->idx].handing = reason != NULL &&
	    (strcmp(reason, "resign") == 0 ||
	    strcmp(reason, "switchover") == 0);
	if (!p->sw_on || p->sw_inc != p->inc || reason == NULL ||
	    (strcmp(reason, "switchover") != 0 &&
	    strcmp(reason, "preempted") != 0))
		return;
	election_view(p->el, &v);
	if (!p->sw_deleted && (v.node == NULL ||
	    check_queue_has_node(s, 0, check_ops_seq(v.node),
	    check_ops_seq(p->sw_node))))
		return;
	slash = strrchr(p->sw_node, '/');
	sim_copy(s->sw_next, sizeof(s->sw_next), slash != NULL ? slash + 1 :
	    p->sw_node);
	s->sw_next_from = p->idx;
	s->sw_next_on = 1;
}

/* The quorum's zxid, noted at most once a second. */
void
check_zxid_note(struct sim *s)
{
	int last = (s->zhist_n + 255) % 256;

	if (s->zhist_n > 0 && s->now - s->zhist_t[last] < 1000)
		return;
	s->zhist_t[s->zhist_n % 256] = s->now;
	s->zhist_z[s->zhist_n % 256] = s->qu.zxid;
	s->zhist_n++;
}

/* A zxid the quorum had reached by t (0: none known). */
static int64_t
check_zxid_by(const struct sim *s, int64_t t)
{
	int64_t z = 0;
	int i, n = s->zhist_n < 256 ? s->zhist_n : 256;

	for (i = 0; i < n; i++)
		if (s->zhist_t[i] <= t && s->zhist_z[i] > z)
			z = s->zhist_z[i];
	return z;
}

/*
 * (prio) The yield's other half: a head below 0 lists who is behind it
 * and reads the markers again before it promotes, so it yields to a
 * node of a higher priority queued behind it long enough for that
 * listing to show it (3T + 5 s before it was sent: a server behind may
 * serve an older queue), unless it yielded within T (the core's hold),
 * a priority was reloaded of late (check_ops_truth()), or an
 * administrator deleted nodes of late. (A tenth blind round: unmarked
 * nodes counted at the head's own priority, not 0.)
 */
static void
check_ops_yield_due(struct sim *s, struct peer *p, const char *node)
{
	const struct pcheck *pc = &s->pc[p->idx];
	int64_t h = p->params.priority, win = 3 * s->T + 5000, zb, d, own;
	struct candidate c;
	const char *pre = SIM_CANDS "/";
	int i;

	if (!s->priorities || h >= 0 || node == NULL || pc->list_sent == 0 ||
	    (p->prio_at != 0 && s->now - p->prio_at < win) ||
	    (p->yield_at >= 0 && s->now < p->yield_at + s->T) ||
	    (s->admin_last != 0 && s->now - s->admin_last < win) ||
	    (zb = check_zxid_by(s, pc->list_sent - win)) == 0 ||
	    (own = check_ops_seq(node)) < 0)
		return;
	for (i = 0; i < s->qu.tree.n; i++) {
		if (strncmp(s->qu.tree.v[i].path, pre, strlen(pre)) != 0 ||
		    candidate_parse(s->qu.tree.v[i].path + strlen(pre),
		    &c) != 0 || c.seq <= own || s->qu.tree.v[i].czxid > zb ||
		    check_ops_truth(s, c.sid, &d) != 0 || d <= h)
			continue;
		check_fail(s, "(prio) %s: promotes with priority %lld over "
		    "%s (priority %lld), queued behind it since before its "
		    "last listing", p->id, (long long)h,
		    s->qu.tree.v[i].path + strlen(pre), (long long)d);
		return;
	}
}

/*
 * A promote after a switchover's handoff: the target's, or the target's
 * node is gone (nobody else can come before it while it is there; the
 * nodes between were deleted before the handoff).
 */
void
check_ops_promote(struct sim *s, struct peer *p, const char *node)
{
	char path[SIM_PATH + 64];

	check_ops_yield_due(s, p, node);
	if (!s->sw_next_on || p->idx == s->sw_next_from)
		return;
	s->sw_next_on = 0;
	if (node != NULL && strcmp(node, s->sw_next) == 0)
		return;
	(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS, s->sw_next);
	if (ztree_get(&s->qu.tree, path) != NULL)
		check_fail(s, "(sw) %s: promotes on %s after a switchover to "
		    "%s, whose node is still there", p->id,
		    node != NULL ? node : "no node", s->sw_next);
}

/*
 * The priority the operator set for the daemon of session sid, as the
 * truth a yield must follow: -1 (nothing to check) where no running daemon
 * has that session, where a hand-made marker may speak for it, or where
 * its priority was reloaded so lately that a server behind may still show
 * the old one (a cut server serves reads for up to 3T), counted from when
 * the daemon could first change its marker after the reload: awake and
 * connected (seed 939001656, -W -P -L -R: a reload, then a crash, a
 * restart and an isolation kept a session the ensemble's elections
 * renewed, and its old marker, for 20 s).
 */
static int
check_ops_truth(struct sim *s, int64_t sid, int64_t *prio)
{
	const struct peer *q;
	int i;

	if (s->st.faults[F_FORGE_MARK] != 0)
		return -1;
	for (i = 0; i < s->npeers; i++) {
		q = &s->peer[i];
		if (!q->running || q->cl.sid != sid)
			continue;
		if (q->prio_at != 0 && (q->frozen || q->able_at == 0 ||
		    s->now - (q->able_at > q->prio_at ? q->able_at :
		    q->prio_at) < 3 * s->T + 5000))
			return -1;
		*prio = q->params.priority;
		return 0;
	}
	return -1;
}

/*
 * (health) The core's verdict is the one its checks' results make: a
 * check the core did not cancel, with a check configured when it ends,
 * counts; check_fall failures in a row make the daemon unhealthy,
 * check_rise passes in a row healthy again, and a reload that removes the
 * check makes it healthy. A restart starts from the session file's.
 */
void
check_health_result(struct peer *p, int ok)
{
	int fall = p->params.check_fall > 0 ? p->params.check_fall : 1;
	int rise = p->params.check_rise > 0 ? p->params.check_rise : 1;

	if (p->hook_cancel_seen || !p->params.check)
		return;
	if (ok) {
		p->h_fails = 0;
		if (p->h_unhealthy && ++p->h_oks >= rise)
			p->h_unhealthy = p->h_oks = 0;
		return;
	}
	p->h_oks = 0;
	if (!p->h_unhealthy && ++p->h_fails >= fall) {
		p->h_unhealthy = 1;
		p->h_fails = 0;
	}
}

void
check_health_reload(struct peer *p)
{
	if (!p->params.check)
		p->h_unhealthy = p->h_fails = p->h_oks = 0;
}

/*
 * (health), its pace: the check runs every check_interval, start to start
 * (zkelectd.conf(5)), in the hooks' slot, and a reload's interval applies
 * at once. While the file has hooks.check, the process runs awake, no hook
 * holds the slot and no stop was asked of it, a check starts one interval
 * (the one in force) after the last one started, the check was added or
 * the process started, or at once when the slot comes free (or the
 * process wakes) past that point; and never before it (a needless check).
 * A reload that moved the planned check the wrong way let a sick leader
 * lead a minute longer (the eleventh blind round's C-5, mutant 155).
 */
#define SIM_CHECK_SLACK	20	/* ms: the loop's way to the slot */

static int64_t
check_health_next(const struct peer *p)
{
	return p->h_from + (p->params.check_interval_ms > 0 ?
	    p->params.check_interval_ms : 5000);
}

/* A check starts (hook), the check is added, or the process starts. */
void
check_health_start(struct sim *s, struct peer *p, int hook)
{
	if (hook && s->now + SIM_CHECK_SLACK < check_health_next(p))
		check_fail(s, "(health) %s: a check starts %lld ms after "
		    "%lld.%03lld, its interval %lld ms: a needless check",
		    p->id, (long long)(s->now - p->h_from),
		    (long long)(p->h_from / 1000),
		    (long long)(p->h_from % 1000),
		    (long long)p->params.check_interval_ms);
	p->h_from = s->now;
}

/* The clock moves on to t: a check due before it has started. */
void
check_health_due(struct sim *s, struct peer *p, int64_t t)
{
	int64_t due = check_health_next(p);

	if (!p->running || p->frozen || p->hook_on || p->h_stop ||
	    !p->params.check)
		return;
	if (p->h_free > due)
		due = p->h_free;
	if (p->woke_at > due)
		due = p->woke_at;
	if (t > due + SIM_CHECK_SLACK)
		check_fail(s, "(health) %s: its check was due at %lld.%03lld "
		    "(interval %lld ms from %lld.%03lld), none started by "
		    "%lld.%03lld", p->id, (long long)(due / 1000),
		    (long long)(due % 1000),
		    (long long)p->params.check_interval_ms,
		    (long long)(p->h_from / 1000),
		    (long long)(p->h_from % 1000), (long long)(t / 1000),
		    (long long)(t % 1000));
}

/*
 * (pause) A daemon answers "paused" once it is out of the election: no
 * candidate node of its session is left in the quorum (the contract:
 * leave the election, then answer). A claim or E/leader may be: once its
 * node was deleted (a switchover, by hand) they are orphans its owner
 * deletes when it can ((f) checks that it does), which stand for no
 * place in the queue. A session whose auth
 * failed cannot delete them: the server expires it, and them, within T.
 * A resume asked before the answer may have put the daemon back in the
 * queue by then: its pause is answered when its handoff is done. And its
 * application no longer leads: no promote, fence or demote hook runs
 * (a demote for an expired session has no release to wait for).
 */
void
check_ops_paused(struct sim *s, struct peer *p)
{
	const char *cands = SIM_CANDS "/";
	const struct znode *z;
	int i;

	if (p->pause_resumed)
		return;
	if (p->hook_on && p->hook_kind != HOOK_CHECK)
		check_fail(s, "(pause) %s: answers paused while its %s hook "
		    "runs", p->id, trace_hook(p->hook_kind));
	if (p->cl.sid == 0 || p->sess_gone)
		return;
	for (i = 0; i < s->qu.tree.n; i++) {
		z = &s->qu.tree.v[i];
		if (z->owner != p->cl.sid)
			continue;
		if (strncmp(z->path, cands, strlen(cands)) == 0)
			check_fail(s, "(pause) %s: answers paused while its "
			    "session still owns %s", p->id, z->path);
	}
}

/*
 * (resign) The contract's "answer ok once the handoff is done": when a
 * daemon answers `resigned`, the node it last led on is gone (its release
 * went through; the daemon queues again at the back), unless its session
 * is gone too: a session whose auth failed, replaced since, cannot delete
 * it, and the server expires it within T.
 */
void
check_ops_resigned(struct sim *s, struct peer *p)
{
	const struct pcheck *pc = &s->pc[p->idx];
	const struct znode *z;
	char path[SIM_PATH];

	if (p->cl.sid == 0 || p->sess_gone || pc->led_node[0] == '\0')
		return;
	(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS, pc->led_node);
	z = ztree_get(&s->qu.tree, path);
	if (z != NULL && z->owner == p->cl.sid)
		check_fail(s, "(resign) %s: answers resigned while the node it "
		    "led on, %s, is still in the queue", p->id, path);
}

/*
 * (resign), its deadline: a resign whose release a server applied (its
 * reply read by the daemon) is done once the daemon does not want to
 * queue again: while its checks make it unhealthy, the rejoin that would
 * answer it never comes, so the answer may not wait for it (a blind
 * round: an unhealthy daemon's `resigned` waited for its health to come
 * back, and the operator's resign hung, mutant 160).
 */
void
check_ops_resign_rel(struct sim *s, struct peer *p, enum el_op op, int rc)
{
	if (op == EL_OP_RELEASE && rc == ZOK && p->resign_wait &&
	    p->resign_rel == 0)
		p->resign_rel = s->now;
}

#define SIM_RESIGN_SLACK 200	/* ms: a step or two */

static void
check_ops_resign_due(struct sim *s, struct peer *p)
{
	if (!p->resign_wait || p->resign_rel == 0 || !p->h_unhealthy) {
		p->resign_due = 0;
		return;
	}
	if (p->resign_due == 0)
		p->resign_due = s->now;
	if (s->now - p->resign_due > SIM_RESIGN_SLACK)
		check_fail(s, "(resign) %s: its release applied at "
		    "%lld.%03lld, unhealthy since %lld.%03lld at the "
		    "latest, its resign is not answered", p->id,
		    (long long)(p->resign_rel / 1000),
		    (long long)(p->resign_rel % 1000),
		    (long long)(p->resign_due / 1000),
		    (long long)(p->resign_due % 1000));
}

/* Another session made E/leader: every hold but its own is over. */
static void
check_ops_leader_made(struct sim *s, int64_t sid)
{
	int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].cl.sid != sid)
			s->pc[i].hold_from = 0;
}

/*
 * (prio) At the quorum's commit of each write: a leader of a priority
 * above 0 that handed over on purpose (resign, switchover) keeps its
 * marker away from its release (the delete of the node it led on) until
 * another session has made E/leader,
 * or for T: else the next head yields back to it and the handover is
 * undone (the core's mark_hold_until).
 */
void
check_ops_commit(struct sim *s, const struct zreq *req, int64_t sid)
{
	const size_t clen = strlen(SIM_CANDS "/"), mlen = strlen(SIM_MARKS "/");
	struct peer *p = peer_of_session(s, sid);
	struct pcheck *pc = p != NULL ? &s->pc[p->idx] : NULL;
	int i, n = req->kind == ZR_MULTI ? req->nmop : 1;
	int kind;
	const char *path;

	for (i = 0; i < n && (req->kind == ZR_MULTI || req->kind ==
	    ZR_CREATE); i++) {
		kind = req->kind == ZR_MULTI ? req->mop[i].kind :
		    ZK_MOP_CREATE;
		path = req->kind == ZR_MULTI ? req->mop[i].path : req->path;
		if (kind == ZK_MOP_CHECK)
			continue;
		if (kind != ZK_MOP_DELETE && strcmp(path, SIM_LEADER) == 0)
			check_ops_leader_made(s, sid);
		else if (kind == ZK_MOP_DELETE && pc != NULL &&
		    pc->handing && strncmp(path, SIM_CANDS "/", clen) == 0 &&
		    strcmp(path + clen, pc->led_node) == 0) {
			/* Not below 0: without a marker it counts as 0. */
			if (p->params.priority > 0)
				pc->hold_from = s->now;
			pc->handing = 0;
		} else if (kind != ZK_MOP_DELETE && pc != NULL &&
		    pc->hold_from != 0 && strncmp(path, SIM_MARKS "/",
		    mlen) == 0 && s->now < pc->hold_from + s->T)
			check_fail(s, "(prio) %s: makes its marker %s %lld ms "
			    "after it handed over, before another leads",
			    p->id, path, (long long)(s->now - pc->hold_from));
	}
}

/*
 * (stop) A stop never waits for ZooKeeper to come back: once its hooks
 * are over (the state stopping, no hook to run), a daemon whose client is
 * not connected exits at once, its release unsent or unanswered (the
 * session's expiry removes what it owns). While connected it may wait for
 * the release's reply, as long as the server keeps the connection (a
 * server cut off from the quorum answers pings, not writes, until it
 * notices). The count starts again when a freeze or a stall of the daemon
 * ends. An eighth blind round's defect waited for a reconnection to send
 * the release: with the ensemble down, `systemctl stop` hung until
 * systemd's kill.
 */
#define SIM_STOP_SLACK	200	/* ms: the session event's way, a step */

/* (stop): a wait for ZooKeeper that ends now (stopped, or connected). */
void
check_ops_stop_end(struct sim *s, struct peer *p)
{
	int64_t from = p->stop_ready_at;

	if (from < 0)
		return;
	p->stop_ready_at = -1;
	if (p->woke_at > from)
		from = p->woke_at;
	if (s->now > from + SIM_STOP_SLACK)
		check_fail(s, "(stop) %s: stopping, no hook to run and not "
		    "connected since %lld.%03lld, still not stopped %lld ms "
		    "later", p->id, (long long)(from / 1000),
		    (long long)(from % 1000), (long long)(s->now - from));
}

static void
check_ops_stop(struct sim *s, struct peer *p, const struct election_view *v)
{
	if (v->state == EL_ST_STOPPING && v->hook == -1 &&
	    p->cl.state != CL_CONNECTED) {
		if (p->stop_ready_at < 0)
			p->stop_ready_at = s->now;
	} else
		check_ops_stop_end(s, p);
}

/*
 * (keep) A connected daemon keeps its session's keepalive going: with
 * nothing of its own on the wire, it asks ZooKeeper something (its
 * keepalive sync, due every T/10 after the last confirmation or a report
 * lag, at most T/2) within T of the connection, its last request, its
 * last reply, or the end of a freeze or a stall. Without it a leader's
 * lease is never renewed while it idles (a needless lease-lost demote
 * every T) and a lost create is never looked for. An eighth blind round's
 * defect kept the core's "a sync is on the wire" across a session
 * replaced while one was (a release refused three times): no keepalive
 * ever again.
 */
void
check_ops_keep(struct sim *s, struct peer *p, enum el_state st, int64_t t)
{
	const struct client *cl = &p->cl;
	int64_t from;

	if (!p->running || p->stopped || cl->state != CL_CONNECTED ||
	    cl->handshake || cl->npend > 0 || st == EL_ST_STOPPING ||
	    st == EL_ST_STOPPED || t <= 0)
		return;
	from = cl->connected_at;
	if (p->last_req_at > from)
		from = p->last_req_at;
	if (p->last_sync_at > from)
		from = p->last_sync_at;
	if (p->reply_at > from)
		from = p->reply_at;
	if (p->woke_at > from)
		from = p->woke_at;
	if (s->now > from + t + SIM_STOP_SLACK)
		check_fail(s, "(keep) %s: connected since %lld.%03lld, nothing "
		    "asked of ZooKeeper for %lld ms (T %lld ms)", p->id,
		    (long long)(cl->connected_at / 1000),
		    (long long)(cl->connected_at % 1000),
		    (long long)(s->now - from), (long long)t);
}

/*
 * (prio) The wait for an outranker runs on (the contract: a healthy
 * candidate above the leader for preempt_delay gets the leadership). An
 * OUTRANKED starts the leader's wait for that node; while the leadership
 * lasts (this incarnation, this session, leading, its node known, none
 * of its session's nodes deleted by hand) it is told again for the same
 * node only if what the leader read in between showed the node stop
 * outranking it: a queue read without the node above its priority, or a
 * listing of E/priority with no marker above it (check_ops_out_read(),
 * check_ops_out_marks()), or an operator's command to it, or a handover
 * it began. What it read is the model's: the
 * replica of the server it read. A twelfth blind round's C-3 (mutant
 * 157): the outranker forgotten at every reconnection, the wait started
 * again after each blip, so a leader that blips more often than
 * preempt_delay never hands over.
 */
static void
check_ops_outranked(struct sim *s, struct peer *p, const struct el_action *act)
{
	struct pcheck *pc = &s->pc[p->idx];

	if (act->path == NULL)
		return;
	if (pc->out_node[0] != '\0' && pc->out_inc == p->inc &&
	    pc->out_sid == p->cl.sid && pc->admin_at < pc->out_at &&
	    strcmp(pc->out_node, act->path) == 0)
		check_fail(s, "(prio) %s: told again that %s outranks it, "
		    "%lld ms after the first, with nothing read since that "
		    "showed it stop: its preempt_delay wait starts over",
		    p->id, act->path, (long long)(s->now - pc->out_at));
	sim_copy(pc->out_node, sizeof(pc->out_node), act->path);
	pc->out_inc = p->inc;
	pc->out_sid = p->cl.sid;
	pc->out_at = s->now;
}

/* (prio) A queue read without the outranker above the leader: it stopped. */
static void
check_ops_out_read(struct sim *s, struct peer *p, const struct el_queue *q)
{
	struct pcheck *pc = &s->pc[p->idx];
	int i;

	for (i = 0; i < q->n; i++)
		if (q->datas[i] != NULL &&
		    strcmp(q->names[i], pc->out_node) == 0 &&
		    candidate_priority(q->datas[i]) > p->params.priority)
			return;
	pc->out_node[0] = '\0';
}

/*
 * (prio) A listing of E/priority with no other session above: each
 * session counted at its lowest marker (check_ops_marks()).
 */
static void
check_ops_out_marks(struct sim *s, struct peer *p)
{
	struct pcheck *pc = &s->pc[p->idx];
	int j;

	if (p->params.priority < 0)
		return;
	for (j = 0; j < pc->mk_n; j++)
		if (pc->mk_sid[j] != p->cl.sid &&
		    pc->mk_low[j] > p->params.priority)
			return;
	pc->out_node[0] = '\0';
}

/* (prio) An operator's command to a daemon: its wait may start again. */
void
check_ops_operator(struct sim *s, struct peer *p)
{
	s->pc[p->idx].out_node[0] = '\0';
}

/*
 * (prio) What a yield rests on: the daemon's last listing of E/priority,
 * as the server answered it. A session with two markers there (a
 * priority change under way: the new marker made, the old one not yet
 * deleted) has, while they both stand, held each of the two priorities
 * since the read: it outranks a head only by the lower of them
 * (check_ops_yielded()). Kept here per session, its lowest.
 */
void
check_ops_marks(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep)
{
	struct pcheck *pc = &s->pc[p->idx];
	int64_t sid, prio;
	int i, j;

	if (op != EL_OP_MARKS || (rep->rc != ZOK && rep->rc != ZNONODE))
		return;
	pc->mk_n = 0;
	for (i = 0; rep->rc == ZOK && i < rep->nchildren; i++) {
		if (candidate_mark_parse(rep->children[i], &sid, &prio) != 0)
			continue;
		for (j = 0; j < pc->mk_n && pc->mk_sid[j] != sid; j++)
			;
		if (j < pc->mk_n) {
			if (prio < pc->mk_low[j])
				pc->mk_low[j] = prio;
			continue;
		}
		if (pc->mk_n == 2 * SIM_MAX_PEERS) {
			pc->mk_n = -1;
			return;
		}
		pc->mk_sid[pc->mk_n] = sid;
		pc->mk_low[pc->mk_n++] = prio;
	}
	check_ops_out_marks(s, p);
}

/*
 * (prio) A head's yield to a session whose markers, in the listing it
 * rests on, were not all above its own priority: needless (an eleventh
 * blind round's B-3, mutant 153: a session in the middle of a priority
 * change counted at its old, higher one; the head yields, and the old
 * marker gone, takes the election back).
 */
static void
check_ops_yielded(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	const struct pcheck *pc = &s->pc[p->idx];
	int j;

	for (j = 0; j < pc->mk_n; j++)
		if (pc->mk_sid[j] == v->yield_sid &&
		    pc->mk_low[j] <= p->params.priority)
			check_fail(s, "(prio) %s: yields the head to session "
			    "%016llx taken for priority %lld, but it has a "
			    "marker of priority %lld in the listing, not above "
			    "its own %lld", p->id,
			    (unsigned long long)v->yield_sid,
			    (long long)v->yield_prio,
			    (long long)pc->mk_low[j],
			    (long long)p->params.priority);
}

/*
 * A head's yield, in the step that decided it (before any reload): to a
 * priority above its own as read, and as the operator set it (a marker
 * kept away, or taken for a 0 when it was missed, makes the read wrong),
 * and at most once per session timeout (what ends the election when
 * markers lie, src/election.c's header).
 */
void
check_ops_step(struct sim *s, struct peer *p,
    const struct election_view *v)
{
	int64_t truth;

	if (v->unhealthy != p->h_unhealthy)
		check_fail(s, "(health) %s: %s, but its checks make it %s "
		    "(%d failed and %d passed in a row; fall %lld, rise %lld)",
		    p->id, v->unhealthy ? "unhealthy" : "healthy",
		    p->h_unhealthy ? "unhealthy" : "healthy", p->h_fails,
		    p->h_oks, (long long)p->params.check_fall,
		    (long long)p->params.check_rise);
	if (v->yields > p->yields_seen && v->yield_prio <= p->params.priority)
		check_fail(s, "(prio) %s: yields the head to session %016llx "
		    "of priority %lld, not above its own %lld", p->id,
		    (unsigned long long)v->yield_sid, (long long)v->yield_prio,
		    (long long)p->params.priority);
	else if (v->yields > p->yields_seen &&
	    check_ops_truth(s, v->yield_sid, &truth) == 0 &&
	    truth <= p->params.priority)
		check_fail(s, "(prio) %s: yields the head to session %016llx "
		    "taken for priority %lld, but set to %lld, not above its "
		    "own %lld", p->id, (unsigned long long)v->yield_sid,
		    (long long)v->yield_prio, (long long)truth,
		    (long long)p->params.priority);
	if (v->yields > p->yields_seen)
		check_ops_yielded(s, p, v);
	if (v->yields > p->yields_seen && p->yield_at >= 0 &&
	    s->now < p->yield_at + v->session_timeout_ms)
		check_fail(s, "(prio) %s: yields the head again %lld ms after "
		    "its last yield, within its session timeout %lld ms", p->id,
		    (long long)(s->now - p->yield_at),
		    (long long)v->session_timeout_ms);
	if (v->yields > p->yields_seen)
		p->yield_at = s->now;
	p->yields_seen = v->yields;
	if (v->role != ROLE_LEADER || v->state != EL_ST_LEADING ||
	    v->node == NULL)
		s->pc[p->idx].out_node[0] = '\0';	/* (prio) */
	check_ops_stop(s, p, v);
	check_ops_keep(s, p, v->state, v->session_timeout_ms);
	check_ops_resign_due(s, p);
}

/*
 * (prio) A leader hands over to a node that has been in the queue for its
 * whole preempt_delay: the contract's "must be healthy" that long. The
 * wait is the node's, not its daemon's: one that left and joined again
 * with a new node waits again.
 */
static void
check_ops_preempt_age(struct sim *s, struct peer *p, const char *path)
{
	const char *name = strrchr(path, '/');
	int64_t at;

	at = quorum_born_at(s, name != NULL ? name + 1 : path);
	if (at >= 0 && s->now - at < p->params.preempt_delay_ms)
		check_fail(s, "(prio) %s: preempts to %s, made %lld ms ago, "
		    "within its preempt_delay of %lld ms", p->id, path,
		    (long long)(s->now - at),
		    (long long)p->params.preempt_delay_ms);
}

/*
 * (prio) A candidate that stops outranking the leader starts its wait
 * again (the contract's "a flapping candidate starts its wait again each
 * time"): once a queue read of the leader shows a node with a priority
 * not above the leader's own (a reload of either), the leader hands over
 * to that node no sooner than a whole preempt_delay later, whatever the
 * node's priority was before. What it read is the model's: the replica
 * of the server it read, delivered to it.
 */
void
check_ops_queue_read(struct sim *s, struct peer *p, const struct el_queue *q)
{
	struct pcheck *pc = &s->pc[p->idx];
	int i, j, k;

	check_ops_out_read(s, p, q);
	for (i = 0; i < q->n; i++) {
		if (q->datas[i] == NULL ||
		    candidate_priority(q->datas[i]) > p->params.priority)
			continue;
		/* Its slot, else the oldest (forgetting only misses). */
		for (j = 0, k = 0; j < SIM_LOW_SEEN; j++) {
			if (strcmp(pc->low_node[j], q->names[i]) == 0)
				break;
			if (pc->low_at[j] < pc->low_at[k])
				k = j;
		}
		k = j < SIM_LOW_SEEN ? j : k;
		sim_copy(pc->low_node[k], sizeof(pc->low_node[k]),
		    q->names[i]);
		pc->low_at[k] = s->now;
	}
}

static void
check_ops_preempt_low(struct sim *s, struct peer *p, const char *path)
{
	const struct pcheck *pc = &s->pc[p->idx];
	const char *slash = strrchr(path, '/');
	const char *name = slash != NULL ? slash + 1 : path;
	int j;

	for (j = 0; j < SIM_LOW_SEEN; j++)
		if (pc->low_at[j] > 0 && strcmp(pc->low_node[j], name) == 0 &&
		    s->now - pc->low_at[j] < p->params.preempt_delay_ms)
			check_fail(s, "(prio) %s: preempts to %s, read %lld ms "
			    "ago with a priority not above its own, within its "
			    "preempt_delay of %lld ms", p->id, path,
			    (long long)(s->now - pc->low_at[j]),
			    (long long)p->params.preempt_delay_ms);
}

void
check_ops_action(struct sim *s, struct peer *p, const struct el_action *act)
{
	switch (act->type) {
	case EL_ACT_ZK:
		if (act->op == EL_OP_SW_DELETE)
			check_ops_delete(s, p, act);
		break;
	case EL_ACT_QUEUE:
		check_idle_queue(s, p);
		ops_queue_ask(s, p);
		break;
	case EL_ACT_OUTRANKED:
		trace(s, p->idx, "-> %s (priority %lld) outranks it: leads in "
		    "%lld ms", act->data, (long long)act->priority,
		    (long long)act->ms);
		check_ops_outranked(s, p, act);
		break;
	case EL_ACT_PREEMPT:
		trace(s, p->idx, "-> preempted: hands over to %s (%s, "
		    "priority %lld > %lld)", act->data, act->path,
		    (long long)act->priority, (long long)p->params.priority);
		if (act->priority <= p->params.priority)
			check_fail(s, "(prio) %s: preempts to %s of priority "
			    "%lld, not above its own %lld", p->id, act->data,
			    (long long)act->priority,
			    (long long)p->params.priority);
		check_ops_preempt_age(s, p, act->path);
		check_ops_preempt_low(s, p, act->path);
		s->pc[p->idx].out_node[0] = '\0';
		ops_switch_begin(s, p, act->path, act->data, 1);
		break;
	default:
		break;
	}
}

void
check_ops_timeout(struct sim *s, struct peer *p)
{
	/*
	 * Handed over, and the target yielded at the head to someone who
	 * joined since, or was a node its session left behind (it expires
	 * later), and maybe this leader won again: the queue order decided,
	 * the answer is a timeout.
	 */
	if (!s->quiet || p->sw_since < s->quiet_at ||
	    s->st.faults[F_FORGE_MARK] != 0 || p->sw_handed)
		return;
	check_fail(s, "(answer) %s: the switchover to %s begun at %lld.%03lld "
	    "neither done nor given up by its deadline", p->id, p->sw_id,
	    (long long)(p->sw_since / 1000), (long long)(p->sw_since % 1000));
}

/* (answer): the reason a switchover was given up for is what was read. */
void
check_ops_given_up(struct sim *s, struct peer *p, const char *why)
{
	if (strcmp(why, "target-gone") != 0)
		return;
	if (!p->sw_listed)
		check_fail(s, "(answer) %s: gives up the switchover to %s as "
		    "target-gone, with no listing of the candidates since it "
		    "began", p->id, p->sw_id);
	else if (p->sw_target_listed)
		check_fail(s, "(answer) %s: gives up the switchover to %s as "
		    "target-gone, but its last listing shows the target's node "
		    "%s", p->id, p->sw_id, p->sw_node);
}

/* (top), once (f) has found one leader; and nobody unhealthy for good. */
void
check_ops_final(struct sim *s)
{
	struct election_view v;
	struct znode *z, *lz;
	char path[SIM_PATH + 64];
	int i, leader = -1;

	for (i = 0; i < s->npeers && !s->failed; i++) {
		election_view(s->peer[i].el, &v);
		if (v.unhealthy && !s->peer[i].params.check)
			check_fail(s, "(f) %s: unhealthy with no check "
			    "configured: out of the election for good",
			    s->peer[i].id);
		else
			check_ops_keep(s, &s->peer[i], v.state,
			    v.session_timeout_ms);
	}
	if (s->failed || !s->priorities || s->forged != 0)
		return;
	for (i = 0; i < s->npeers; i++) {
		election_view(s->peer[i].el, &v);
		if (v.role == ROLE_LEADER)
			leader = i;
	}
	if (leader < 0 || s->peer[leader].params.preempt_delay_ms < 0)
		return;
	election_view(s->peer[leader].el, &v);
	if (v.node == NULL)
		return;
	(void)snprintf(path, sizeof(path), "%s/%s", SIM_CANDS, v.node);
	if ((lz = ztree_get(&s->qu.tree, path)) == NULL)
		return;
	for (i = 0; i < s->qu.tree.n; i++) {
		z = &s->qu.tree.v[i];
		if (strncmp(z->path, SIM_CANDS "/", strlen(SIM_CANDS) + 1) != 0)
			continue;
		if (candidate_priority(z->data) > candidate_priority(lz->data))
			check_fail(s, "(top) %s leads with priority %lld, but "
			    "%s advertises %lld", s->peer[leader].id,
			    (long long)candidate_priority(lz->data), z->path,
			    (long long)candidate_priority(z->data));
	}
}
