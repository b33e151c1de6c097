/*
 * Invariant (j), the queue's order. ZooKeeper's sequence numbers only
 * grow, so a candidate node that was first once stays first for as long
 * as it exists: nothing can be queued before it. Hence, against the
 * quorum's committed tree (not any daemon's view of it):
 *  - when the quorum commits the creation of a claim (E/claims), the
 *    claimant's candidate node is the first of the queue, or the second
 *    (the heir's) behind a node whose session holds a claim already, so
 *    that the claims queue keeps the candidates' order
 *    (check_queue_commit(), called by quorum_commit() before it applies
 *    the transaction);
 *  - when a promote or fence hook starts, the daemon's node is the first
 *    of the queue, or already gone: deleted by hand or with its session,
 *    the daemon has not heard yet and will demote. Gone by a release of
 *    its own session is no excuse. And its session holds the first claim
 *    of E/claims (once the core takes claims): a prepared claim is no
 *    right to lead before the claims ahead of it are gone
 *    (check_queue_hook());
 *  - when the quorum commits an ack that creates E/leader or the
 *    breadcrumb, the acker's session holds the first claim: a heir whose
 *    claim is first knows both from watches (check_queue_ack()).
 * A daemon that believes itself first without being so (a listing
 * skipped on the strength of a watch, say) is caught the moment it acts
 * on it.
 */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "candidate.h"
#include "sim.h"
#include "xmalloc.h"

/*
 * The first candidate node (lowest sequence) of the quorum's queue, of
 * session sid's nodes only unless sid is 0, into name; "" when none.
 */
static void
check_queue_first(struct sim *s, int64_t sid, char *name, size_t len)
{
	struct candidate c;
	char **names;
	int64_t first = -1;
	int i, n;

	name[0] = '\0';
	n = ztree_children(&s->qu.tree, SIM_CANDS, &names);
	for (i = 0; i < n; i++)
		if (candidate_parse(names[i], &c) == 0 &&
		    (sid == 0 || c.sid == sid) &&
		    (first < 0 || c.seq < first)) {
			first = c.seq;
			sim_copy(name, len, names[i]);
		}
	ztree_names_free(names, n);
}

/* Whose session sid is, for a message. */
static const char *
check_queue_who(struct sim *s, int64_t sid, char *buf, size_t len)
{
	const struct peer *p = peer_of_session(s, sid);

	if (p != NULL)
		return p->id;
	(void)snprintf(buf, len, "session %016llx", (unsigned long long)sid);
	return buf;
}

/* A request of the node's own session deletes it (a release). */
static void
check_queue_released(struct sim *s, const char *name, int64_t sid)
{
	struct candidate c;
	int i;

	if (candidate_parse(name, &c) != 0 || c.sid != sid)
		return;
	for (i = 0; i < s->nborn; i++)
		if (strcmp(s->born[i].name, name) == 0)
			s->born[i].released = 1;
}

static int
check_queue_was_released(struct sim *s, const char *name)
{
	int i;

	for (i = 0; i < s->nborn; i++)
		if (strcmp(s->born[i].name, name) == 0)
			return s->born[i].released;
	return 0;
}

/*
 * The first claim of E/claims (lowest sequence), of session sid's only
 * unless sid is 0: its owner, or 0 when none (and how many there are).
 */
static int64_t
check_queue_claim(struct sim *s, int64_t sid, int *count, char *name,
    size_t len)
{
	struct candidate c;
	char **names;
	int64_t first = -1, owner = 0;
	int i, n;

	*count = 0;
	if (name != NULL)
		name[0] = '\0';
	n = ztree_children(&s->qu.tree, SIM_CLAIMS, &names);
	for (i = 0; i < n; i++)
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &c) == 0 && (sid == 0 || c.sid == sid)) {
			(*count)++;
			if (first < 0 || c.seq < first) {
				first = c.seq;
				owner = c.sid;
				if (name != NULL)
					(void)snprintf(name, len, "%s/%s",
					    SIM_CLAIMS, names[i]);
			}
		}
	ztree_names_free(names, n);
	return owner;
}

/* The session of the n-th (0-based) candidate node of the queue, or 0. */
static int64_t
check_queue_nth(struct sim *s, int nth)
{
	struct candidate *c;
	char **names;
	int64_t sid = 0;
	int n, k;

	n = ztree_children(&s->qu.tree, SIM_CANDS, &names);
	c = xcalloc((size_t)n + 1, sizeof(*c));
	k = candidate_order(names, n, c);
	if (nth < k)
		sid = c[nth].sid;
	free(c);
	ztree_names_free(names, n);
	return sid;
}

/*
 * An administrator deleted a claim of session sid: a head (a leader) that
 * holds none since is no defect of the core, which makes no claim while
 * it leads. Nothing can give it back its place in E/claims.
 */
static int
check_queue_claim_taken(const struct sim *s, int64_t sid)
{
	int i;

	for (i = 0; i < 32 && i < s->nclaim_taken; i++)
		if (sid != 0 && s->claim_taken[i] == sid)
			return 1;
	return 0;
}

/*
 * Whether the quorum holds a candidate node of session sid (any, when 0)
 * whose sequence is strictly between after and before.
 */
int
check_queue_has_node(struct sim *s, int64_t sid, int64_t after,
    int64_t before)
{
	const char *pre = SIM_CANDS "/";
	struct candidate c;
	int i;

	for (i = 0; i < s->qu.tree.n; i++)
		if (strncmp(s->qu.tree.v[i].path, pre, strlen(pre)) == 0 &&
		    candidate_parse(s->qu.tree.v[i].path + strlen(pre),
		    &c) == 0 && (sid == 0 || c.sid == sid) &&
		    c.seq > after && c.seq < before)
			return 1;
	return 0;
}

/*
 * An administrator deleted both the claim and the candidate node that p
 * has now (its view's node is gone from the quorum, and so is every claim
 * of its session; a resumed daemon that has not listed its node yet has
 * none in its view: then no node of its session is left): what the
 * contract promises for one of the two, it cannot for both (see (a)).
 */
int
check_hand_deleted(struct sim *s, const struct peer *p)
{
	const struct pcheck *pc = &s->pc[p->idx];
	struct election_view v;
	char path[2 * SIM_PATH];
	int n;

	if (p->cl.sid == 0 || pc->claim_admin_sid != p->cl.sid ||
	    pc->node_admin_sid != p->cl.sid)
		return 0;
	election_view(p->el, &v);
	if (v.node == NULL) {
		if (check_queue_has_node(s, p->cl.sid, -1, INT64_MAX))
			return 0;
	} else {
		(void)snprintf(path, sizeof(path), SIM_CANDS "/%s", v.node);
		if (ztree_get(&s->qu.tree, path) != NULL)
			return 0;
	}
	(void)check_queue_claim(s, p->cl.sid, &n, NULL, 0);
	return n == 0;
}

/* The heir's claim, about to be committed: counted for -S. */
static void
check_queue_heir(struct sim *s, int64_t sid)
{
	const struct peer *p = peer_of_session(s, sid);
	struct pcheck *pc;

	if (p == NULL)
		return;
	pc = &s->pc[p->idx];
	if (pc->heir_zxid != 0 && !pc->heir_used)
		s->st.stale_claims++;
	pc->heir_zxid = s->qu.zxid + 1;
	pc->heir_used = 0;
}

/*
 * (j) The quorum is about to commit req, a create or multi of session sid
 * that succeeded against its tree (which it has not changed yet). If it
 * creates a claim, the claimant's candidate node (the one the multi
 * checks: the core's EL_OP_CLAIM, or else the session's own lowest node)
 * must be first in the queue, or second behind a node whose session holds
 * a claim. Deletes of the session's own nodes are noted for
 * check_queue_hook().
 */
/*
 * (i) A daemon deletes E/breadcrumb only where it names itself: one that
 * deletes its successor's (a read from a server behind showed it its own)
 * leaves the next leader nothing to fence.
 */
static void
check_queue_crumb(struct sim *s, int64_t sid)
{
	const struct znode *z = ztree_get(&s->qu.tree, SIM_CRUMB);
	char id[32];
	int64_t epoch;
	int i;

	if (z == NULL)
		return;
	candidate_kv(z->data, "id", id, sizeof(id));
	epoch = check_epoch_of(z->data);
	for (i = 0; i < s->npeers; i++) {
		if (!s->peer[i].running || s->peer[i].cl.sid != sid ||
		    strcmp(s->peer[i].id, id) == 0)
			continue;
		check_fail(s, "(i) %s: deletes the breadcrumb of %s "
		    "(epoch %lld): the next leader will not fence it",
		    s->peer[i].id, id, (long long)epoch);
	}
}

/* A candidate node of the quorum with that czxid (a leadership's). */
static int
check_queue_epoch_node(struct sim *s, int64_t epoch)
{
	char **names, path[2 * SIM_PATH];
	const struct znode *z;
	int i, n, found = 0;

	n = ztree_children(&s->qu.tree, SIM_CANDS, &names);
	for (i = 0; i < n && !found; i++) {
		(void)snprintf(path, sizeof(path), SIM_CANDS "/%s", names[i]);
		z = ztree_get(&s->qu.tree, path);
		found = z != NULL && z->czxid == epoch;
	}
	ztree_names_free(names, n);
	return found;
}

/*
 * (j) A claim deleted by a session not its own's (a head's stale-claim
 * delete): it was no one's right to lead. Its owner is not between a
 * promote's start and a demote's end, and its node, if it has one, is
 * behind the deleter's in the queue.
 */
static void
check_queue_unclaim(struct sim *s, const char *name, int64_t sid)
{
	struct candidate k, *c;
	char **names, buf[40];
	int i, n, m, mine = -1, its = -1;

	if (candidate_parse_as(name, CANDIDATE_CLAIM_PREFIX, &k) != 0 ||
	    k.sid == sid)
		return;
	s->st.unclaims++;
	n = ztree_children(&s->qu.tree, SIM_CANDS, &names);
	c = xcalloc((size_t)n + 1, sizeof(*c));
	m = candidate_order(names, n, c);
	for (i = 0; i < m; i++) {
		if (c[i].sid == sid && mine < 0)
			mine = i;
		if (c[i].sid == k.sid && its < 0)
			its = i;
	}
	free(c);
	ztree_names_free(names, n);
	/*
	 * Its owner leading on a node that still exists: that claim is its
	 * right to lead. (One made for a node it queued with again, its
	 * leadership's node and claim deleted by hand, protects nothing of
	 * that leadership.)
	 */
	for (i = 0; i < s->npeers; i++)
		if (s->pc[i].open && s->pc[i].sid == k.sid &&
		    check_queue_epoch_node(s, s->pc[i].epoch))
			check_fail(s, "(j) %s deletes the claim %s of %s, "
			    "which leads", check_queue_who(s, sid, buf,
			    sizeof(buf)), name, s->peer[i].id);
	if (mine < 0 || (its >= 0 && its < mine))
		check_fail(s, "(j) %s deletes the claim %s of a session %s",
		    check_queue_who(s, sid, buf, sizeof(buf)), name,
		    mine < 0 ? "while it has no node itself" : "ahead of it");
}

/*
 * (j) E/leader or the breadcrumb created (an ack): only by the session
 * that holds the first claim of E/claims. A heir whose claim is first
 * knows both from watches ((6) and (7) in election.c): a write by anyone
 * else (a leader whose claim was deleted by hand and made again behind
 * the heir's) is one it never hears of, and it promotes past it.
 */
static void
check_queue_ack(struct sim *s, const char *path, int64_t sid)
{
	char buf[40];
	int64_t first;
	int n;

	if (!s->claims_seen)
		return;
	first = check_queue_claim(s, 0, &n, NULL, 0);
	if (first != sid)
		check_fail(s, "(j) %s: creates %s without the first claim "
		    "(%s)", check_queue_who(s, sid, buf, sizeof(buf)), path,
		    n == 0 ? "there is none" : "another session's is");
}

void
check_queue_commit(struct sim *s, const struct zreq *req, int64_t sid)
{
	const size_t dirlen = strlen(SIM_CANDS "/");
	const size_t cdirlen = strlen(SIM_CLAIMS "/");
	char head[SIM_PATH], node[SIM_PATH], buf[40];
	const char *who;
	int64_t second;
	int i, claim = 0, held;

	node[0] = '\0';
	if (req->kind == ZR_CREATE)
		claim = strncmp(req->path, SIM_CLAIMS "/", cdirlen) == 0;
	else if (req->kind == ZR_MULTI)
		for (i = 0; i < req->nmop; i++) {
			const struct zmop *m = &req->mop[i];
			int cand = strncmp(m->path, SIM_CANDS "/",
			    dirlen) == 0;

			if ((m->kind == ZK_MOP_CREATE ||
			    m->kind == ZK_MOP_CREATE_EPHEMERAL ||
			    m->kind == ZK_MOP_CREATE_EPHEMERAL_SEQ) &&
			    strncmp(m->path, SIM_CLAIMS "/", cdirlen) == 0)
				claim = 1;
			else if (m->kind == ZK_MOP_CHECK && cand)
				sim_copy(node, sizeof(node), m->path + dirlen);
			else if (m->kind == ZK_MOP_DELETE && cand)
				check_queue_released(s, m->path + dirlen, sid);
			else if ((m->kind == ZK_MOP_CREATE ||
			    m->kind == ZK_MOP_CREATE_EPHEMERAL) &&
			    (strcmp(m->path, SIM_CRUMB) == 0 ||
			    strcmp(m->path, SIM_LEADER) == 0))
				check_queue_ack(s, m->path, sid);
			else if (m->kind == ZK_MOP_DELETE &&
			    strcmp(m->path, SIM_CRUMB) == 0)
				check_queue_crumb(s, sid);
			else if (m->kind == ZK_MOP_DELETE &&
			    strncmp(m->path, SIM_CLAIMS "/", cdirlen) == 0)
				check_queue_unclaim(s, m->path + cdirlen,
				    sid);
		}
	if (!claim)
		return;
	s->st.claims++;
	who = check_queue_who(s, sid, buf, sizeof(buf));
	if (node[0] == '\0')
		check_queue_first(s, sid, node, sizeof(node));
	check_queue_first(s, 0, head, sizeof(head));
	second = check_queue_nth(s, 1);
	trace(s, -1, "check: a claim for %s, node %s; the queue's first is %s",
	    who, node[0] != '\0' ? node : "(none)",
	    head[0] != '\0' ? head : "(none)");
	if (node[0] == '\0') {
		check_fail(s, "(j) %s: a claim committed, but it has no "
		    "candidate node", who);
		return;
	}
	if (strcmp(node, head) == 0)
		return;
	s->st.heir_claims++;
	check_queue_heir(s, sid);
	(void)check_queue_claim(s, check_queue_nth(s, 0), &held, NULL, 0);
	if (second != sid)
		check_fail(s, "(j) %s: a claim committed for %s, but %s is "
		    "first in the queue and it is not second", who, node,
		    head);
	else if (held == 0 && !check_queue_claim_taken(s, check_queue_nth(s,
	    0)))
		check_fail(s, "(j) %s: a claim committed for %s, second in "
		    "the queue behind %s, which holds no claim", who, node,
		    head);
}

/*
 * (j) A promote or fence starts only on the first claim of E/claims: the
 * daemon's session holds no claim at all (gone with the session, which it
 * has not heard of yet, or a core that takes none), or its own is first.
 */
static void
check_queue_right(struct sim *s, struct peer *p, enum hook_kind kind)
{
	char buf[40], name[SIM_PATH];
	struct pcheck *pc = &s->pc[p->idx];
	struct znode *z;
	int64_t first;
	int n, all;

	if (!s->claims_seen)
		return;
	(void)check_queue_claim(s, p->cl.sid, &n, name, sizeof(name));
	z = ztree_get(&s->qu.tree, name);
	if (n > 0 && z != NULL && z->czxid == pc->heir_zxid &&
	    !pc->heir_used) {
		pc->heir_used = 1;
		s->st.prepared++;
	}
	first = check_queue_claim(s, 0, &all, NULL, 0);
	if (n == 0) {
		/*
		 * Its claim deleted by hand in a transaction it has not
		 * heard of yet (nothing it received is as recent): it could
		 * not know. One it could have heard of is a defect.
		 */
		if (pc->claim_admin_sid == p->cl.sid &&
		    pc->claim_admin_zxid > stall_told_zxid(p))
			return;
		if (quorum_session(s, p->cl.sid) != NULL &&
		    quorum_session(s, p->cl.sid)->live)
			check_fail(s, "(j) %s: %s starts, but its session "
			    "holds no claim", p->id, trace_hook(kind));
		return;
	}
	if (first != p->cl.sid)
		check_fail(s, "(j) %s: %s starts on a claim behind %s's",
		    p->id, trace_hook(kind),
		    check_queue_who(s, first, buf, sizeof(buf)));
}

/*
 * (j) A promote or fence hook starts only for the head of the queue, or
 * for a node already gone (an administrator's delete, or its session's
 * expiry: the daemon has not heard yet and will demote), but not deleted
 * by the daemon's own release.
 */
void
check_queue_hook(struct sim *s, struct peer *p, const char *node,
    enum hook_kind kind)
{
	char head[SIM_PATH], path[SIM_PATH];

	if (node == NULL)
		return;
	(void)snprintf(path, sizeof(path), SIM_CANDS "/%s", node);
	if (ztree_get(&s->qu.tree, path) == NULL) {
		s->st.gone_hooks++;
		trace(s, p->idx, "check: %s starts for %s, which is gone",
		    trace_hook(kind), node);
		if (check_queue_was_released(s, node))
			check_fail(s, "(j) %s: %s starts for %s, which its "
			    "own session deleted", p->id, trace_hook(kind),
			    node);
		return;
	}
	check_queue_first(s, 0, head, sizeof(head));
	if (strcmp(head, node) != 0)
		check_fail(s, "(j) %s: %s starts for %s, but %s is first in "
		    "the queue", p->id, trace_hook(kind), node, head);
	check_queue_right(s, p, kind);
}
