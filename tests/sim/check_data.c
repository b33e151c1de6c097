/*
 * Invariant (data), at the end of a run once (f) has found the queue
 * settled: what an operator set is what the others see. Every live
 * candidate's node at the quorum carries its daemon's election.data and
 * (with -P) its election.priority as last reloaded, and so do E/leader and
 * every daemon's view of the leader. A reload whose new data meets a
 * create or SET_DATA in flight must not be lost (mutants 46, 47).
 * Invariant (crumb), at each multi the quorum commits: E/leader and its
 * leader's breadcrumb say the same (check_crumb_data()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "sim.h"

/* The node of session sid in E/candidates at the quorum, or NULL. */
static struct znode *
check_data_node(struct sim *s, int64_t sid)
{
	struct candidate c;
	struct znode *z;
	const char *name;
	size_t len = strlen(SIM_CANDS "/");
	int i;

	for (i = 0; i < s->qu.tree.n; i++) {
		z = &s->qu.tree.v[i];
		if (strncmp(z->path, SIM_CANDS "/", len) != 0)
			continue;
		name = z->path + len;
		if (strchr(name, '/') == NULL &&
		    candidate_parse(name, &c) == 0 && c.sid == sid)
			return z;
	}
	return NULL;
}

/*
 * The markers a session made itself (ephemeral, its own; a hand-made one
 * is persistent and not the core's to keep): one, for the priority last
 * set, while it is a live candidate with a priority; none otherwise (a
 * marker outliving its node, or a priority, makes heads yield to what the
 * operator no longer set: mutant 40's release whose reply was lost).
 */
static void
check_data_marks(struct sim *s, const struct peer *p, int queued)
{
	char want[SIM_PATH];
	const struct znode *z;
	size_t len = strlen(SIM_MARKS "/");
	int i, mine = 0, wanted = queued && p->params.priority != 0;

	(void)snprintf(want, sizeof(want), SIM_MARKS "/%016llx_%lld",
	    (unsigned long long)p->cl.sid, (long long)p->params.priority);
	for (i = 0; i < s->qu.tree.n && !s->failed; i++) {
		z = &s->qu.tree.v[i];
		if (strncmp(z->path, SIM_MARKS "/", len) != 0 ||
		    z->owner != p->cl.sid || p->cl.sid == 0)
			continue;
		mine++;
		if (!wanted || strcmp(z->path, want) != 0)
			check_fail(s, "(data) %s: marker %s at the end, but "
			    "it was set to priority %lld%s", p->id, z->path,
			    (long long)p->params.priority,
			    queued ? "" : " and owns no node");
	}
	if (!s->failed && wanted && mine == 0)
		check_fail(s, "(data) %s: no marker at the end, but it was set "
		    "to priority %lld", p->id, (long long)p->params.priority);
}

static void
check_data_peer(struct sim *s, const struct peer *p)
{
	struct znode *z = check_data_node(s, p->cl.sid);
	char data[sizeof(p->data) + 16];
	int64_t prio;

	/*
	 * A marker made by hand is not the core's to undo; one of its own
	 * deleted by hand, it makes again.
	 */
	if (s->priorities && s->forged == 0)
		check_data_marks(s, p, z != NULL);
	if (z == NULL || s->failed)
		return;
	candidate_kv(z->data, "data", data, sizeof(data));
	prio = candidate_priority(z->data);
	if (strcmp(data, p->data) != 0 ||
	    (s->priorities && prio != p->params.priority))
		check_fail(s, "(data) %s: its node %s says data %s priority "
		    "%lld, but it was set to %s priority %lld", p->id,
		    z->path, data, (long long)prio, p->data,
		    (long long)p->params.priority);
}

/*
 * (crumb) The breadcrumb tells a successor whom to fence, with the fenced
 * leader's data: whenever the quorum holds E/leader and a breadcrumb of
 * the same leader (id and epoch, so written by its acks and data updates),
 * the two say the same. A leader's new data written to E/leader alone
 * leaves a stale breadcrumb, and a later fence gets the old data (a tenth
 * blind round, mutant 150). Checked at each multi the quorum commits; the
 * lie of -B crumb hides the breadcrumb from the core on purpose.
 */
void
check_crumb_data(struct sim *s)
{
	const struct znode *l, *c;
	char lid[64], cid[64], ld[80], cd[80];

	if (s->sabotage == SAB_CRUMB ||
	    (l = ztree_get(&s->qu.tree, SIM_LEADER)) == NULL ||
	    (c = ztree_get(&s->qu.tree, SIM_CRUMB)) == NULL)
		return;
	candidate_kv(l->data, "id", lid, sizeof(lid));
	candidate_kv(c->data, "id", cid, sizeof(cid));
	if (strcmp(lid, cid) != 0 ||
	    check_epoch_of(l->data) != check_epoch_of(c->data) ||
	    strcmp(l->data, c->data) == 0)
		return;
	candidate_kv(l->data, "data", ld, sizeof(ld));
	candidate_kv(c->data, "data", cd, sizeof(cd));
	check_fail(s, "(crumb) %s: E/leader and the breadcrumb of epoch %lld "
	    "differ: E/leader says data %s, the breadcrumb %s", lid,
	    (long long)check_epoch_of(l->data), ld, cd);
}

/* leader: the one leader (f) found, or -1 where nobody may lead. */
void
check_data_final(struct sim *s, int leader)
{
	struct election_view v;
	const struct peer *l;
	struct znode *z;
	char data[sizeof(l->data) + 16];
	int i;

	for (i = 0; i < s->npeers && !s->failed; i++)
		if (s->peer[i].running && !s->peer[i].observer)
			check_data_peer(s, &s->peer[i]);
	if (s->failed || leader < 0)
		return;
	l = &s->peer[leader];
	z = ztree_get(&s->qu.tree, SIM_LEADER);
	if (z != NULL) {
		candidate_kv(z->data, "data", data, sizeof(data));
		if (strcmp(data, l->data) != 0)
			check_fail(s, "(data) %s leads with data %s, but "
			    "E/leader says %s", l->id, l->data, data);
	}
	for (i = 0; i < s->npeers && !s->failed; i++) {
		election_view(s->peer[i].el, &v);
		if (strcmp(v.leader_data, l->data) != 0)
			check_fail(s, "(data) %s: reports the leader's data "
			    "%s, but %s leads with %s", s->peer[i].id,
			    v.leader_data, l->id, l->data);
	}
}
