/*
 * Invariant (j), the queue's order. ZooKeeper's sequence numbers only
 * grow, so a candidate node that was first once stays first for as long
 * as it exists: nothing can be queued before it. Hence, against the
 * quorum's committed tree (not any daemon's view of it):
 *  - when the quorum commits the creation of E/claim, the claimant's
 *    candidate node is the first of the queue (check_queue_commit(),
 *    called by quorum_commit() before it applies the transaction);
 *  - when a promote or fence hook starts, the daemon's node is the first
 *    of the queue, or already gone: deleted by hand or with its session,
 *    the daemon has not heard yet and will demote. Gone by a release of
 *    its own session is no excuse (check_queue_hook()).
 * A daemon that believes itself first without being so (a listing
 * skipped on the strength of a watch, say) is caught the moment it acts
 * on it.
 */
#include <stdio.h>
#include <string.h>

#include "candidate.h"
#include "sim.h"

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
	int i;

	for (i = 0; i < s->npeers; i++)
		if (s->peer[i].running && s->peer[i].cl.sid == sid)
			return s->peer[i].id;
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
 * (j) The quorum is about to commit req, a create or multi of session sid
 * that succeeded against its tree (which it has not changed yet). If it
 * creates E/claim, the claimant's candidate node must lead the queue: the
 * node the multi checks (the core's EL_OP_CLAIM: check of its own node,
 * create of E/claim), or else the session's own lowest node. Deletes of
 * the session's own nodes are noted for check_queue_hook().
 */
void
check_queue_commit(struct sim *s, const struct zreq *req, int64_t sid)
{
	const size_t dirlen = strlen(SIM_CANDS "/");
	char head[SIM_PATH], node[SIM_PATH], buf[40];
	const char *who;
	int i, claim = 0;

	node[0] = '\0';
	if (req->kind == ZR_CREATE)
		claim = strcmp(req->path, SIM_CLAIM) == 0;
	else if (req->kind == ZR_MULTI)
		for (i = 0; i < req->nmop; i++) {
			const struct zmop *m = &req->mop[i];
			int cand = strncmp(m->path, SIM_CANDS "/",
			    dirlen) == 0;

			if ((m->kind == ZK_MOP_CREATE ||
			    m->kind == ZK_MOP_CREATE_EPHEMERAL) &&
			    strcmp(m->path, SIM_CLAIM) == 0)
				claim = 1;
			else if (m->kind == ZK_MOP_CHECK && cand)
				sim_copy(node, sizeof(node), m->path + dirlen);
			else if (m->kind == ZK_MOP_DELETE && cand)
				check_queue_released(s, m->path + dirlen, sid);
		}
	if (!claim)
		return;
	s->st.claims++;
	who = check_queue_who(s, sid, buf, sizeof(buf));
	if (node[0] == '\0')
		check_queue_first(s, sid, node, sizeof(node));
	check_queue_first(s, 0, head, sizeof(head));
	trace(s, -1, "check: E/claim for %s, node %s; the queue's first is %s",
	    who, node[0] != '\0' ? node : "(none)",
	    head[0] != '\0' ? head : "(none)");
	if (node[0] == '\0')
		check_fail(s, "(j) %s: E/claim committed, but it has no "
		    "candidate node", who);
	else if (strcmp(node, head) != 0)
		check_fail(s, "(j) %s: E/claim committed for %s, but %s is "
		    "first in the queue", who, node, head);
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
}
