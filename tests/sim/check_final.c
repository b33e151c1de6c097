/*
 * The end of a run, once the bound after the faults has passed: every
 * request answered (e), and convergence (f): one leader, first in the
 * queue, owning E/leader and the first claim, known as such by every
 * daemon; one
 * candidate node per live healthy unpaused candidate, none for anyone
 * else; nobody stuck.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "sim.h"
#include "xmalloc.h"

/*
 * The core's claims, when it takes them, stand for the leadership: the
 * leader's is the first of E/claims; besides it there is at most one, the
 * heir's (prepared), whose node is second in the queue.
 */
static void
check_final_claims(struct sim *s, struct peer *p)
{
	struct candidate *c, k;
	char **names, **cand;
	int64_t first = -1, owner = 0;
	int i, n, nc, m, heirs = 0;

	n = ztree_children(&s->qu.tree, SIM_CLAIMS, &names);
	nc = ztree_children(&s->qu.tree, SIM_CANDS, &cand);
	c = xcalloc((size_t)nc + 1, sizeof(*c));
	m = candidate_order(cand, nc, c);
	for (i = 0; i < n; i++)
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &k) == 0 && (first < 0 || k.seq < first)) {
			first = k.seq;
			owner = k.sid;
		}
	for (i = 0; i < n; i++) {
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &k) != 0 || k.sid == owner)
			continue;
		heirs++;
		if (m < 2 || c[1].sid != k.sid)
			check_fail(s, "(f) a claim %s of a session whose node "
			    "is not the second in the queue", names[i]);
	}
	if (owner != p->cl.sid && (n > 0 || s->claims_seen))
		check_fail(s, "(f) %s leads but the first claim is %s",
		    p->id, n > 0 ? "someone else's" : "missing");
	else if (heirs > 1)
		check_fail(s, "(f) %d claims besides the leader's", heirs);
	free(c);
	ztree_names_free(cand, nc);
	ztree_names_free(names, n);
}

/*
 * And the heir has its claim (issue 21: the right to lead prepared before
 * the failover, so that the release is its only signal), unless
 * priorities may keep it from taking it (-P). Checked once everyone
 * reports the leader (an heir that missed E/leader is (f)'s already).
 */
static void
check_final_heir(struct sim *s)
{
	struct candidate *c, k;
	const struct peer *p;
	char **names, **cand;
	int i, n, nc, m, heir = 0;

	if (!s->claims_seen || s->priorities)
		return;
	nc = ztree_children(&s->qu.tree, SIM_CANDS, &cand);
	c = xcalloc((size_t)nc + 1, sizeof(*c));
	m = candidate_order(cand, nc, c);
	n = ztree_children(&s->qu.tree, SIM_CLAIMS, &names);
	for (i = 0; i < n && m >= 2; i++)
		if (candidate_parse_as(names[i], CANDIDATE_CLAIM_PREFIX,
		    &k) == 0 && k.sid == c[1].sid)
			heir = 1;
	if (m >= 2 && !heir && (p = peer_of_session(s, c[1].sid)) != NULL)
		check_fail(s, "(f) %s: the heir, without a prepared claim",
		    p->id);
	free(c);
	ztree_names_free(cand, nc);
	ztree_names_free(names, n);
}

static void
check_final_answers(struct sim *s)
{
	int i;

	for (i = 0; i < s->npeers; i++) {
		struct peer *p = &s->peer[i];

		if (!p->running)
			continue;
		if (p->resign_wait)
			check_fail(s, "(e) %s: resign asked at %lld.%03lld "
			    "never answered", p->id,
			    (long long)(p->resign_since / 1000),
			    (long long)(p->resign_since % 1000));
		if (p->pause_wait)
			check_fail(s, "(e) %s: pause asked at %lld.%03lld "
			    "never answered", p->id,
			    (long long)(p->pause_since / 1000),
			    (long long)(p->pause_since % 1000));
	}
}

/*
 * How many candidate nodes session sid owns in the quorum's tree; the
 * total and the lowest sequence come back through all and first.
 */
static int
check_final_nodes(struct sim *s, int64_t sid, int *all, int64_t *first)
{
	struct candidate c;
	char **names;
	int i, n, k = 0;

	n = ztree_children(&s->qu.tree, SIM_CANDS, &names);
	*all = n;
	*first = -1;
	for (i = 0; i < n; i++) {
		if (candidate_parse(names[i], &c) != 0)
			continue;
		if (*first < 0 || c.seq < *first)
			*first = c.seq;
		if (c.sid == sid)
			k++;
	}
	ztree_names_free(names, n);
	return k;
}

/*
 * Every daemon knows who leads: one that believes E/leader absent, or
 * someone else's, forever (a watch never set again) fails here.
 */
static void
check_final_views(struct sim *s, int leader, int64_t epoch)
{
	const struct peer *l = &s->peer[leader];
	struct election_view v;
	struct znode *z;
	char id[32];
	int i;

	z = ztree_get(&s->qu.tree, SIM_LEADER);
	if (z != NULL) {
		candidate_kv(z->data, "id", id, sizeof(id));
		if (strcmp(id, l->id) != 0 ||
		    check_epoch_of(z->data) != epoch)
			check_fail(s, "(f) %s leads with epoch %lld, but "
			    "E/leader says %s", l->id, (long long)epoch,
			    z->data);
	}
	for (i = 0; i < s->npeers && !s->failed; i++) {
		election_view(s->peer[i].el, &v);
		if (strcmp(v.leader_id, l->id) != 0 || v.leader_epoch != epoch)
			check_fail(s, "(f) %s: reports leader %s epoch %lld, "
			    "but %s leads with epoch %lld", s->peer[i].id,
			    v.leader_id[0] != '\0' ? v.leader_id : "(none)",
			    (long long)v.leader_epoch, l->id,
			    (long long)epoch);
		/*
		 * Its place in the queue (the status file's candidates and
		 * the position beside it) comes from one listing: the
		 * leader is first, and nobody is behind the last.
		 */
		if (s->peer[i].observer || v.paused || v.unhealthy)
			continue;
		if (v.position < 1 || v.position > v.candidates ||
		    (i == leader && v.position != 1))
			check_fail(s, "(f) %s: position %d of %d candidates%s",
			    s->peer[i].id, v.position, v.candidates,
			    i == leader ? ", and it leads" : "");
	}
}

/*
 * (idle): once nothing stirs, a daemon sends no request but its keepalive
 * syncs, and a leader its queue reads. Only a change of the tree (the
 * watches), a session event, an operator's command, a start or a wake-up
 * gives a daemon a reason to ask ZooKeeper anything; a request long
 * after the last of these (idle_slack: T for a request the core holds,
 * a retry's backoff, a few round trips) is a retry that never converges
 * or a poll that should not be (issue 21: a follower's requests per
 * failover stay at 2). The periodic ones keep their pace: syncs at most
 * EL_SYNCS_PER_T (10) per T, a leader's queue reads every 0.5 s at most.
 */
static int
check_idle_now(const struct sim *s, int64_t t)
{
	return s->quiet && s->idle_slack > 0 && t > s->stir_at + s->idle_slack;
}

void
check_idle_sync(struct sim *s, struct peer *p)
{
	int64_t prev = p->last_sync_at;

	p->last_sync_at = s->now;
	if (check_idle_now(s, s->now) && check_idle_now(s, prev) &&
	    s->now - prev < p->cl.timeout / 10)
		check_fail(s, "(idle) %s: keepalive syncs %lld ms apart, "
		    "below T/10 (%lld ms)", p->id, (long long)(s->now - prev),
		    (long long)(p->cl.timeout / 10));
}

void
check_idle_queue(struct sim *s, struct peer *p)
{
	int64_t prev = p->last_queue_at;

	p->last_queue_at = s->now;
	if (check_idle_now(s, s->now) && check_idle_now(s, prev) &&
	    s->now - prev < 500)
		check_fail(s, "(idle) %s: queue reads %lld ms apart, below "
		    "0.5 s", p->id, (long long)(s->now - prev));
}

static void
check_final_idle(struct sim *s)
{
	struct peer *p;
	int i;

	for (i = 0; i < s->npeers && !s->failed; i++) {
		p = &s->peer[i];
		if (!check_idle_now(s, p->last_req_at))
			continue;
		check_fail(s, "(idle) %s: %s sent at %lld.%03lld, nothing "
		    "stirred since %lld.%03lld", p->id,
		    election_op_name(p->last_req_op),
		    (long long)(p->last_req_at / 1000),
		    (long long)(p->last_req_at % 1000),
		    (long long)(s->stir_at / 1000),
		    (long long)(s->stir_at % 1000));
	}
}

/*
 * The convergence check, once the bound after the faults has passed.
 * Where T is below 2 ticks (-K) no lease is possible, and the contract
 * says the daemon does not lead: then nobody leads, and a candidate owns
 * at most one node (it may stay queued or leave the queue).
 */
void
check_final(struct sim *s)
{
	struct election_view v;
	struct candidate c;
	struct znode *z;
	struct peer *p;
	int i, leaders = 0, leader = -1, owned = 0, k, all = 0;
	int nolease = s->tick_ms > 0 && s->T < 2 * s->tick_ms;
	int64_t first = -1;

	check_final_answers(s);
	for (i = 0; i < s->qu.tree.n; i++)
		if (s->qu.tree.v[i].owner != 0)
			trace(s, -1, "end: %s owned by %016llx",
			    s->qu.tree.v[i].path,
			    (unsigned long long)s->qu.tree.v[i].owner);
	for (i = 0; i < s->npeers; i++)
		trace(s, i, "end: session %016llx%s", (unsigned long long)
		    s->peer[i].cl.sid, s->peer[i].running ? "" : " (not running)");
	for (i = 0; i < s->npeers && !s->failed; i++) {
		p = &s->peer[i];
		if (!p->running) {
			check_fail(s, "(f) %s: not running at the end", p->id);
			break;
		}
		election_view(p->el, &v);
		if (v.role == ROLE_LEADER) {
			leaders++;
			leader = i;
		}
		if (v.zk != EL_ZK_CONNECTED ||
		    (v.hook != -1 && v.hook != HOOK_CHECK) ||
		    v.role == ROLE_PROMOTING || v.role == ROLE_DEMOTING ||
		    v.role == ROLE_UNKNOWN)
			check_fail(s, "(f) %s: stuck: role %s, zk %d, hook %d",
			    p->id, election_role_name(v.role), v.zk, v.hook);
		k = check_final_nodes(s, p->cl.sid, &all, &first);
		owned += k;
		if (p->observer || v.paused || v.unhealthy) {
			if (k != 0)
				check_fail(s, "(f) %s: %s but owns %d "
				    "candidate node(s)", p->id, p->observer ?
				    "observer" : v.paused ? "paused" :
				    "unhealthy", k);
		} else if (k != 1 && !(nolease && k == 0))
			check_fail(s, "(f) %s: live candidate owns %d "
			    "candidate nodes", p->id, k);
	}
	if (s->failed)
		return;
	if (all != owned)
		check_fail(s, "(f) %d candidate node(s), %d of them owned by "
		    "live daemons' sessions", all, owned);
	if (nolease) {
		if (leaders != 0)
			check_fail(s, "(f) %d leader(s), but T %lld is below 2 "
			    "ticks of %lld: no lease is possible", leaders,
			    (long long)s->T, (long long)s->tick_ms);
		check_data_final(s, -1);
		return;
	}
	if (leaders != 1) {
		check_fail(s, "(f) %d leader(s) %lld ms after the faults "
		    "stopped", leaders, (long long)s->bound_ms);
		return;
	}
	p = &s->peer[leader];
	z = ztree_get(&s->qu.tree, SIM_LEADER);
	if (z == NULL || z->owner != p->cl.sid)
		check_fail(s, "(f) %s leads but E/leader is %s", p->id,
		    z == NULL ? "missing" : "someone else's");
	check_final_claims(s, p);
	election_view(p->el, &v);
	if (v.node == NULL || candidate_parse(v.node, &c) != 0 ||
	    c.seq != first)
		check_fail(s, "(f) %s leads but its node %s is not the first",
		    p->id, v.node != NULL ? v.node : "(none)");
	check_final_views(s, leader, v.epoch);
	check_final_heir(s);
	check_data_final(s, leader);
	check_final_idle(s);
}
