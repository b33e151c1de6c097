/*
 * The fault schedule of a run. Each run draws its own mix: which kinds of
 * fault happen at all, how often, how hooks misbehave, how long the
 * faulty phase lasts. Faults then come at random gaps until the quiet
 * point, where every fault is healed at once and the convergence bound
 * starts (see fault_quiet()).
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

/* Relative weights when a kind is enabled in a run. */
static const int fault_weight[F_NKINDS] = {
	[F_SRV_CUT] = 8, [F_SRV_CRASH] = 4, [F_SRV_LAG] = 4, [F_BLIP] = 10,
	[F_ISOLATE] = 6, [F_FREEZE] = 8, [F_CRASH] = 3, [F_RESIGN] = 6,
	[F_PAUSE] = 5, [F_RESUME] = 4, [F_STOP] = 2, [F_DELETE_NODE] = 4,
	[F_DELETE_LEADER] = 3, [F_HEALTH] = 6, [F_SET_DATA] = 2, [F_AUTH] = 1,
	[F_SWITCHOVER] = 8, [F_PRIORITY] = 4, [F_FORGE_MARK] = 3,
	[F_SRV_RESTART] = 6, [F_ELECTION] = 5,
	[F_REEXEC] = 6,
	[F_RUN_EXIT] = 4, [F_CHECK_RELOAD] = 4, [F_DELETE_CLAIM] = 2,
	[F_ACL] = 2,
};

static const char *fault_names[F_NKINDS] = {
	"server-cut", "server-crash", "server-lag", "blip", "isolate",
	"freeze", "crash", "resign", "pause", "resume", "stop",
	"delete-node", "delete-leader", "health", "set-data", "auth",
	"switchover", "priority", "forge-mark", "server-restart", "election",
	"reexec", "run-exit", "check-reload", "delete-claim", "acl",
};

const char *
fault_name(int kind)
{
	return kind >= 0 && kind < F_NKINDS ? fault_names[kind] : "?";
}

int
fault_kinds(const char *list, uint32_t *mask)
{
	const char *p = list, *comma;
	size_t len;
	int k;

	*mask = 0;
	while (*p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		for (k = 0; k < F_NKINDS; k++)
			if (strlen(fault_names[k]) == len &&
			    strncmp(p, fault_names[k], len) == 0)
				break;
		if (k == F_NKINDS)
			return -1;
		*mask |= 1u << k;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Whether the run's flags (-W, -P, -L, -R, -H) allow a kind of fault. */
static int
fault_kind_flagged(const struct sim *s, int kind)
{
	switch (kind) {
	case F_SWITCHOVER:
		return s->switchover;
	case F_PRIORITY:
	case F_FORGE_MARK:
		return s->priorities;
	case F_SRV_RESTART:
	case F_ELECTION:
		return s->lease_model;
	case F_REEXEC:
		return s->resume;
	case F_RUN_EXIT:
	case F_CHECK_RELOAD:
	case F_ACL:
		return s->reloads;
	default:
		return 1;
	}
}

void
fault_config(struct sim *s)
{
	struct fault_cfg *fc = &s->fc;
	int i, any = 0;

	memset(fc, 0, sizeof(*fc));
	fc->fault_ms = rng_between(&s->rng, 20000, 80000);
	switch (rng_between(&s->rng, 0, 2)) {
	case 0:
		fc->mean_gap_ms = 3000;
		break;
	case 1:
		fc->mean_gap_ms = 1000;
		break;
	default:
		fc->mean_gap_ms = 300;
		break;
	}
	for (i = 0; i < F_NKINDS; i++) {
		/* No draw without -W: the seeds found before stay the same. */
		if (!fault_kind_flagged(s, i)) {
			fc->w[i] = 0;
			continue;
		}
		fc->w[i] = rng_permille(&s->rng, 650) ? fault_weight[i] : 0;
		if (s->disabled & (1u << i))
			fc->w[i] = 0;
		any += fc->w[i];
	}
	if (any == 0 && !(s->disabled & (1u << F_BLIP)))
		fc->w[F_BLIP] = 1;
	fc->promote_fail = (int)rng_between(&s->rng, 0, 150);
	fc->promote_hang = (int)rng_between(&s->rng, 0, 50);
	fc->demote_fail = (int)rng_between(&s->rng, 0, 100);
	fc->demote_hang = (int)rng_between(&s->rng, 0, 50);
	fc->fence_fail = (int)rng_between(&s->rng, 0, 150);
	fc->fence_hang = (int)rng_between(&s->rng, 0, 50);
	fc->check_hang = (int)rng_between(&s->rng, 0, 20);
	fc->hook_slow = (int)rng_between(&s->rng, 0, 400);
	fc->create_blip = (int)rng_between(&s->rng, 0, 300);
	fc->fence = rng_permille(&s->rng, 500);
}

void
fault_next(struct sim *s)
{
	int64_t t = s->now + rng_between(&s->rng, s->fc.mean_gap_ms / 4,
	    s->fc.mean_gap_ms * 7 / 4);

	if (t < s->quiet_at)
		sim_push(s, t, EV_FAULT, -1, -1, -1, 0, NULL);
}

static int
fault_pick_kind(struct sim *s)
{
	int i, total = 0;
	int64_t r;

	for (i = 0; i < F_NKINDS; i++)
		total += s->fc.w[i];
	if (total == 0)
		return -1;
	r = rng_between(&s->rng, 0, total - 1);
	for (i = 0; i < F_NKINDS; i++) {
		if (r < s->fc.w[i])
			return i;
		r -= s->fc.w[i];
	}
	return F_BLIP;
}

/* A running daemon, the leader with probability lead_pm. */
static struct peer *
fault_pick_peer(struct sim *s, int lead_pm)
{
	struct peer *p;
	int i, n;

	if (rng_permille(&s->rng, lead_pm))
		for (i = 0; i < s->npeers; i++) {
			p = &s->peer[i];
			if (p->running && !p->frozen &&
			    election_role(p->el) == ROLE_LEADER)
				return p;
		}
	for (n = 0; n < 8; n++) {
		p = &s->peer[rng_between(&s->rng, 0, s->npeers - 1)];
		if (p->running && !p->frozen)
			return p;
	}
	return NULL;
}

static int
fault_servers_all_up(struct sim *s)
{
	int i;

	for (i = 0; i < SIM_SERVERS; i++)
		if (s->srv[i].state != SRV_UP)
			return 0;
	return 1;
}

static void
fault_operator(struct sim *s, struct peer *p, int cmd, int64_t delay,
    int scheduled)
{
	sim_push(s, s->now + delay, EV_OPERATOR, p->idx, cmd, 0, scheduled,
	    NULL);
}

/* Durations drawn short, around T, or well past T. */
static int64_t
fault_duration(struct sim *s, int short_pm, int mid_pm)
{
	int64_t r = rng_between(&s->rng, 0, 999);

	if (r < short_pm)
		return rng_between(&s->rng, 10, s->T / 3);
	if (r < short_pm + mid_pm)
		return rng_between(&s->rng, s->T / 3, s->T);
	return rng_between(&s->rng, s->T, s->T * 3);
}

/* An administrator deletes one of dir's children, drawn at random. */
static void
fault_delete_child(struct sim *s, const char *dir)
{
	char **names, path[SIM_PATH];
	int n;

	n = ztree_children(&s->qu.tree, dir, &names);
	if (n > 0) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[rng_between(&s->rng, 0, n - 1)]);
		quorum_admin_delete(s, path);
	}
	ztree_names_free(names, n);
}

/*
 * Priority markers made or deleted by hand: a forged one names a running
 * candidate's session with a priority it does not have, and outlives
 * every fault (nobody heals it); heads must still end up promoting.
 */
static void
fault_forge_mark(struct sim *s)
{
	char path[SIM_PATH];
	struct peer *p;

	if (rng_permille(&s->rng, 300)) {
		fault_delete_child(s, SIM_MARKS);
		return;
	}
	p = &s->peer[rng_between(&s->rng, 0, s->npeers - 1)];
	if (!p->running || p->cl.sid == 0)
		return;
	quorum_admin_create(s, SIM_MARKS);
	s->forged++;
	(void)snprintf(path, sizeof(path), SIM_MARKS "/%016llx_%lld",
	    (unsigned long long)p->cl.sid,
	    (long long)rng_between(&s->rng, -3, 20));
	quorum_admin_create(s, path);
}


/*
 * An administrator's setAcl without DELETE, put right later, on E (half
 * the time: the deletes of E/leader and E/breadcrumb are refused NOAUTH,
 * so every release is), E/candidates (releases again, and a switchover's
 * deletes: `not-allowed`), E/claims or E/priority. Three refused
 * releases in a row replace the session. Deleting a child needs DELETE
 * on the parent (PrepRequestProcessor); closing a session deletes its
 * ephemerals whatever the ACL.
 */
static void
fault_acl(struct sim *s, struct rng *r)
{
	static const char *dirs[] = { SIM_ROOT, SIM_CANDS, SIM_CLAIMS,
	    SIM_MARKS };
	int d = rng_permille(r, 500) ? 0 : (int)rng_between(r, 1, 3);
	int64_t until = s->now + (rng_permille(r, 500) ?
	    rng_between(r, 10, 1000) : rng_between(r, 1000, s->T));

	if (until > s->acl_until[d])
		s->acl_until[d] = until;
	trace(s, -1, "fault: %s's ACL refuses deletes until %lld", dirs[d],
	    (long long)s->acl_until[d]);
}

/* Often the server of the leader's connection: defect 1's topology. */
static int
fault_pick_server(struct sim *s)
{
	struct peer *p;
	int srv;

	srv = (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
	p = fault_pick_peer(s, 1000);
	if (p != NULL && p->cl.conn != -1 &&
	    election_role(p->el) == ROLE_LEADER &&
	    rng_permille(&s->rng, 600))
		srv = conn_get(s, p->cl.conn)->server;
	return srv;
}

/*
 * -L: how long followers take to notice that their leader is gone: at
 * once when its process died (the sockets close), up to syncLimit (2-5)
 * ticks when it hangs or is cut off.
 */
static int64_t
fault_notice_leader(struct sim *s, int crashed)
{
	if (crashed || rng_permille(&s->rng, 400))
		return rng_between(&s->rng, 10, 500);
	return rng_between(&s->rng, 10, s->tick_ms * rng_between(&s->rng, 2,
	    5));
}

static void fault_on_peer(struct sim *s, int kind, struct peer *p);

static void
fault_inject(struct sim *s, int kind)
{
	struct peer *p;
	int srv;
	int64_t d;

	s->st.faults[kind]++;
	/* Without a leader, the ensemble commits nothing at all. */
	if (s->qu.electing && (kind == F_DELETE_NODE ||
	    kind == F_DELETE_LEADER || kind == F_FORGE_MARK ||
	    kind == F_DELETE_CLAIM || kind == F_ACL))
		return;
	switch (kind) {
	case F_SRV_CUT:
		if (!fault_servers_all_up(s))
			return;
		srv = fault_pick_server(s);
		/* Noticing takes syncLimit x tickTime: often more than T. */
		server_cut(s, srv, fault_duration(s, 350, 300));
		/* Its followers lost their leader: they elect another. */
		if (s->lease_model && srv == s->qu.leader)
			ensemble_elect_start(s, fault_notice_leader(s, 0));
		return;
	case F_SRV_CRASH:
	case F_SRV_RESTART:
		if (!fault_servers_all_up(s))
			return;
		srv = kind == F_SRV_RESTART ? fault_pick_server(s) :
		    (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
		trace(s, -1, "fault: server %d %s", srv, kind == F_SRV_CRASH ?
		    "crashes" : "restarts");
		server_notice(s, srv, s->srv[srv].inc);
		if (s->lease_model && srv == s->qu.leader)
			ensemble_elect_start(s, fault_notice_leader(s, 1));
		return;
	case F_ELECTION:
		if (!fault_servers_all_up(s))
			return;
		/* The leader hangs or loses its quorum: it leads no more. */
		ensemble_elect_start(s, fault_notice_leader(s, 0));
		return;
	case F_SRV_LAG:
		srv = (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
		d = rng_between(&s->rng, 100, 2000);
		trace(s, -1, "fault: server %d lags %lld ms", srv,
		    (long long)d);
		server_lag(s, srv, d);
		sim_push(s, s->now + rng_between(&s->rng, 1000, 10000),
		    EV_FAULT, -1, F_SRV_LAG, srv, 1, NULL);
		return;
	default:
		break;
	}
	if (kind == F_DELETE_NODE) {
		fault_delete_child(s, SIM_CANDS);
		return;
	}
	if (kind == F_DELETE_CLAIM) {
		fault_delete_child(s, SIM_CLAIMS);
		return;
	}
	if (kind == F_AUTH) {
		/* Credentials or ACLs changed under the daemons, then fixed. */
		s->auth_until = s->now + fault_duration(s, 0, 500);
		trace(s, -1, "fault: servers refuse authentication until %lld",
		    (long long)s->auth_until);
		return;
	}
	if (kind == F_FORGE_MARK) {
		fault_forge_mark(s);
		return;
	}
	if (kind == F_ACL) {
		fault_acl(s, &s->rng);
		return;
	}
	if (kind == F_DELETE_LEADER) {
		quorum_admin_delete(s, SIM_LEADER);
		if (rng_permille(&s->rng, 300))
			quorum_admin_delete(s, SIM_CRUMB);
		return;
	}
	p = fault_pick_peer(s, kind == F_RESIGN || kind == F_SWITCHOVER ||
	    kind == F_REEXEC || kind == F_RUN_EXIT ? 800 :
	    kind == F_FREEZE ||
	    kind == F_CRASH || kind == F_ISOLATE ? 500 : 200);
	if (p != NULL)
		fault_on_peer(s, kind, p);
}

/* A fault of one daemon's: its process, its links, its operator. */
static void
fault_on_peer(struct sim *s, int kind, struct peer *p)
{
	int i;
	int64_t d;

	switch (kind) {
	case F_BLIP:
		client_blip(s, p);
		break;
	case F_ISOLATE:
		d = s->now + fault_duration(s, 500, 300);
		trace(s, p->idx, "fault: network isolated until %lld",
		    (long long)d);
		for (i = 0; i < SIM_SERVERS; i++)
			if (rng_permille(&s->rng, 600) ||
			    (p->cl.conn != -1 &&
			    conn_get(s, p->cl.conn)->server == i))
				s->link_block[p->idx][i] = d;
		break;
	case F_FREEZE:
		freeze_start(s, p, fault_duration(s, 400, 300));
		break;
	case F_CRASH:
		peer_crash(s, p);
		/* -R: restarted at once as often as late (Restart=). */
		d = s->resume && rng_permille(&s->rng, 500) ?
		    rng_between(&s->rng, 50, s->T / 2) :
		    rng_between(&s->rng, 200, 2 * s->T);
		sim_push(s, s->now + d, EV_PEER_START, p->idx, 0, 0, 0, NULL);
		break;
	case F_REEXEC:
		peer_reexec(s, p);
		break;
	case F_RESIGN:
		fault_operator(s, p, OP_RESIGN, 0, 0);
		break;
	case F_PAUSE:
		fault_operator(s, p, OP_PAUSE, 0, 0);
		if (rng_permille(&s->rng, 600))
			fault_operator(s, p, OP_RESUME,
			    rng_between(&s->rng, 0, 3 * s->T), 1);
		break;
	case F_RESUME:
		fault_operator(s, p, OP_RESUME, 0, 0);
		break;
	case F_STOP:
		fault_operator(s, p, OP_STOP, 0, 0);
		sim_push(s, s->now + rng_between(&s->rng, 1000, 3 * s->T),
		    EV_PEER_START, p->idx, 0, 0, 0, NULL);
		break;
	case F_HEALTH:
		if (!p->check)
			break;
		p->healthy = !p->healthy;
		trace(s, p->idx, "fault: health %s", p->healthy ? "up" :
		    "down");
		sim_push(s, s->now + fault_duration(s, 300, 400), EV_FAULT, -1,
		    F_HEALTH, p->idx, 1, NULL);
		break;
	case F_SET_DATA:
		fault_operator(s, p, OP_SET_DATA, 0, 0);
		break;
	case F_SWITCHOVER:
		fault_operator(s, p, OP_SWITCHOVER, 0, 0);
		break;
	case F_PRIORITY:
		fault_operator(s, p, OP_PRIORITY, 0, 0);
		break;
	case F_RUN_EXIT:
		fault_operator(s, p, OP_RUN_EXIT, 0, 0);
		break;
	case F_CHECK_RELOAD:
		fault_operator(s, p, OP_CHECK_RELOAD, 0, 0);
		break;
	default:
		break;
	}
}

/*
 * Faults tied to a daemon's own moves. The faults drawn above come at
 * random moments, and the windows that follow a daemon's move are often
 * a few milliseconds wide (a killed check is reaped at once): a stop, a
 * crash or a hand's delete almost never falls inside one. In a run with
 * ties (4 in 10, drawn from tie_rng; -y sets it), a share of the moves
 * (a hook started or killed, a release or a new session asked for, a
 * session resumed) is followed, within the window the move opens, by a
 * fault of that daemon's own: its process, its link, its operator, its
 * own claim or node deleted by hand. Every choice comes from tie_rng, so
 * a run without ties draws from s->rng exactly what it did before.
 */
#define FAULT_TIED	2
#define FAULT_CRUMB	3	/* fault_crumb_tie()'s write */

/* What may follow each kind of move, and how often (relative weights). */
struct fault_tie_kind {
	int kind;
	int w[TIE_NMOVES];
};

static const struct fault_tie_kind fault_tie_kinds[] = {
	/*		   hook	cancel	release	restart	resume	write */
	{ F_CRASH,	{ 4,	3,	3,	2,	2,	2 } },
	{ F_STOP,	{ 3,	4,	2,	2,	2,	1 } },
	{ F_REEXEC,	{ 1,	1,	1,	1,	1,	1 } },
	{ F_BLIP,	{ 3,	2,	3,	2,	2,	6 } },
	{ F_FREEZE,	{ 2,	1,	1,	1,	1,	1 } },
	{ F_ISOLATE,	{ 1,	0,	1,	1,	1,	2 } },
	{ F_RESIGN,	{ 2,	2,	0,	1,	1,	1 } },
	{ F_PAUSE,	{ 2,	2,	1,	1,	1,	1 } },
	{ F_SWITCHOVER,	{ 1,	1,	0,	0,	1,	0 } },
	{ F_PRIORITY,	{ 1,	1,	1,	0,	1,	1 } },
	{ F_RUN_EXIT,	{ 1,	1,	0,	0,	1,	0 } },
	{ F_CHECK_RELOAD, { 1,	1,	0,	0,	1,	0 } },
	{ F_HEALTH,	{ 1,	1,	0,	0,	1,	1 } },
	{ F_DELETE_CLAIM, { 2,	1,	1,	1,	3,	1 } },
	{ F_DELETE_NODE, { 2,	1,	1,	1,	2,	1 } },
	{ F_DELETE_LEADER, { 1,	0,	1,	0,	1,	0 } },
	{ F_ACL,	{ 0,	0,	3,	0,	0,	0 } },
};
#define FAULT_TIE_KINDS	((int)(sizeof(fault_tie_kinds) / \
	sizeof(fault_tie_kinds[0])))

/* Whether this run may have a fault of this kind at all (flags, -D). */
static int
fault_kind_allowed(const struct sim *s, int kind)
{
	return !(s->disabled & (1u << kind)) && fault_kind_flagged(s, kind);
}

void
fault_tie(struct sim *s, struct peer *p, enum tie_move move, int64_t window)
{
	/* Writes came last: their own stream, the older draws unchanged. */
	struct rng *rr = move == TIE_WRITE ? &s->write_rng : &s->tie_rng;
	int i, w, total = 0;
	int64_t r;

	if (s->tie_pm == 0 || s->quiet || (move == TIE_WRITE &&
	    !s->tie_write) || !rng_permille(rr, s->tie_pm))
		return;
	for (i = 0; i < FAULT_TIE_KINDS; i++)
		if (fault_kind_allowed(s, fault_tie_kinds[i].kind))
			total += fault_tie_kinds[i].w[move];
	if (total == 0)
		return;
	r = rng_between(rr, 0, total - 1);
	for (i = 0; i < FAULT_TIE_KINDS; i++) {
		w = fault_kind_allowed(s, fault_tie_kinds[i].kind) ?
		    fault_tie_kinds[i].w[move] : 0;
		if (r < w)
			break;
		r -= w;
	}
	sim_push(s, s->now + rng_between(rr, 0, window), EV_FAULT,
	    p->idx, fault_tie_kinds[i].kind, p->idx, FAULT_TIED, NULL);
}

/* An administrator deletes a node of this daemon's session under dir. */
static void
fault_delete_own(struct sim *s, struct peer *p, const char *dir)
{
	char path[SIM_PATH];
	const struct ztree *t = &s->qu.tree;
	size_t len = strlen(dir);
	int i;

	if (p->cl.sid == 0)
		return;
	for (i = 0; i < t->n; i++)
		if (t->v[i].owner == p->cl.sid &&
		    strncmp(t->v[i].path, dir, len) == 0 &&
		    t->v[i].path[len] == '/') {
			sim_copy(path, sizeof(path), t->v[i].path);
			quorum_admin_delete(s, path);
			return;
		}
}

static void
fault_tied(struct sim *s, const struct ev *ev)
{
	struct peer *p = &s->peer[ev->b];
	int kind = ev->a;

	/* The incarnation that moved, before the faults stop. */
	if (s->quiet || ev->inc != p->inc || !p->running)
		return;
	s->st.faults[kind]++;
	s->st.tied++;
	trace(s, p->idx, "fault: %s, tied to its last move", fault_name(kind));
	switch (kind) {
	case F_ACL:
		if (!s->qu.electing)
			fault_acl(s, &s->tie_rng);
		return;
	case F_DELETE_CLAIM:
	case F_DELETE_NODE:
	case F_DELETE_LEADER:
		if (s->qu.electing)
			return;
		if (kind == F_DELETE_LEADER) {
			quorum_admin_delete(s, SIM_LEADER);
			if (rng_permille(&s->tie_rng, 300))
				quorum_admin_delete(s, SIM_CRUMB);
		} else
			fault_delete_own(s, p, kind == F_DELETE_CLAIM ?
			    SIM_CLAIMS : SIM_CANDS);
		return;
	default:
		if (!p->frozen)
			fault_on_peer(s, kind, p);
	}
}

/*
 * -H: E/breadcrumb written by hand while a head may hold a watched view
 * of it (a breadcrumb restored from a backup, a stale leader's late
 * write): a read of it answered is followed, within 50 ms or within T (a
 * head may still wait then: its lease, its claim, a listing), by the
 * write. It names the last leader that promoted, with its epoch: a head
 * must fence that epoch before it promotes (CONTRACT.md, 4). Every draw
 * comes from crumb_rng, so a run without -H, or without ties, is what it
 * was; one write at a time.
 */
void
fault_crumb_tie(struct sim *s, struct peer *p, enum el_op op)
{
	struct rng *r = &s->crumb_rng;

	if (!s->reloads || s->tie_pm == 0 || s->quiet || s->crumb_hand_due ||
	    (op != EL_OP_BREADCRUMB && op != EL_OP_CRUMB_EXISTS) ||
	    !rng_permille(r, s->tie_pm))
		return;
	s->crumb_hand_due = 1;
	sim_push(s, s->now + (rng_permille(r, 500) ? rng_between(r, 0, 50) :
	    rng_between(r, 0, s->T)), EV_FAULT, p->idx, 0, p->idx,
	    FAULT_CRUMB, NULL);
}

/*
 * Only while nobody leads (no E/leader, no leadership the checker holds
 * open and unfenced) and no daemon fences or has fenced for the node it
 * holds: the write then hides no leader a successor must fence, and
 * takes from no fence the breadcrumb it was for.
 */
static int
fault_crumb_allowed(struct sim *s)
{
	struct election_view v;
	int i;

	if (s->qu.electing || s->last_epoch == 0 ||
	    ztree_get(&s->qu.tree, SIM_LEADER) != NULL)
		return 0;
	for (i = 0; i < s->npeers; i++) {
		if (s->pc[i].open && !s->pc[i].fenced)
			return 0;
		if (!s->peer[i].running)
			continue;
		election_view(s->peer[i].el, &v);
		if (v.hook == HOOK_FENCE || (v.node != NULL &&
		    strcmp(s->pc[i].fenced_node, v.node) == 0))
			return 0;
	}
	return 1;
}

static void
fault_crumb_write(struct sim *s)
{
	const struct peer *l = &s->peer[s->last_epoch_peer];
	char data[SIM_DATA];
	int64_t zxid;

	s->crumb_hand_due = 0;
	if (s->quiet || !fault_crumb_allowed(s))
		return;
	(void)snprintf(data, sizeof(data), "id=%s\ndata=%s\nepoch=%lld\n",
	    l->id, l->data, (long long)s->last_epoch);
	if ((zxid = quorum_admin_write(s, SIM_CRUMB, data)) == 0)
		return;
	s->crumb_hand_zxid = zxid;
	s->st.crumb_writes++;
	trace(s, -1, "fault: E/breadcrumb written by hand: %s epoch %lld",
	    l->id, (long long)s->last_epoch);
}

void
fault_apply(struct sim *s, const struct ev *ev)
{
	int kind;

	if (ev->x == 0) {
		if ((kind = fault_pick_kind(s)) >= 0)
			fault_inject(s, kind);
		fault_next(s);
		return;
	}
	if (ev->x == FAULT_TIED) {
		fault_tied(s, ev);
		return;
	}
	if (ev->x == FAULT_CRUMB) {
		fault_crumb_write(s);
		return;
	}
	/* The end of a fault, or one tied to an action (a create). */
	switch (ev->a) {
	case F_SRV_LAG:
		if (!s->quiet)
			server_lag(s, ev->b, rng_between(&s->rng, 0, 20));
		break;
	case F_HEALTH:
		s->peer[ev->b].healthy = 1;
		break;
	case F_BLIP:
		if (!s->quiet && s->peer[ev->b].running &&
		    !s->peer[ev->b].frozen) {
			s->st.faults[F_BLIP]++;
			client_blip(s, &s->peer[ev->b]);
		}
		break;
	default:
		break;
	}
}

/*
 * Faults stop: cut-off servers notice (and rejoin within 3 s), links
 * heal, frozen daemons wake, stopped and crashed ones start again, health
 * comes back, hooks from now on succeed quickly (those already hanging
 * run to their timeout), about half the paused daemons are resumed. The
 * bound is what a correct election needs from here: a session expiry and
 * a reconnection (3T), a hanging promote or fence and a demote run to
 * their timeouts twice, a retry backoff, a health rise, a server rejoin.
 */
void
fault_quiet(struct sim *s)
{
	struct peer *p;
	int i, j, resumed = 0, candidates = 0;
	int64_t hook = 0, demote = 0, backoff = 0, rise = 0;

	s->quiet = 1;
	s->auth_until = 0;
	memset(s->acl_until, 0, sizeof(s->acl_until));
	trace(s, -1, "faults stop");
	ensemble_quiet(s);
	for (i = 0; i < SIM_SERVERS; i++) {
		server_lag(s, i, rng_between(&s->rng, 0, 20));
		if (s->srv[i].state == SRV_CUT)
			server_notice(s, i, s->srv[i].inc);
	}
	for (i = 0; i < s->npeers; i++) {
		p = &s->peer[i];
		for (j = 0; j < SIM_SERVERS; j++)
			s->link_block[i][j] = 0;
		p->healthy = 1;
		/* A configured tick_time the servers' again (-H). */
		if (p->params.tick_ms != s->tick_ms && p->running)
			fault_operator(s, p, OP_TIMING_HEAL, 0, 0);
		if (p->running && p->frozen)
			sim_push(s, s->now, EV_WAKE, i, p->freeze_gen, 0, 0,
			    NULL);
		if (!p->running)
			sim_push(s, s->now + rng_between(&s->rng, 0, 100),
			    EV_PEER_START, i, 0, 0, 0, NULL);
		if (!p->observer && rng_permille(&s->rng, 500)) {
			fault_operator(s, p, OP_RESUME, 0, 0);
			resumed++;
		}
		if (!p->observer)
			candidates++;
		if (p->params.hook_timeout_ms > hook)
			hook = p->params.hook_timeout_ms;
		/* Unset (-L), it is T/4. */
		if (p->params.demote_timeout_ms > demote ||
		    (p->params.demote_timeout_ms == 0 && s->T / 4 > demote))
			demote = p->params.demote_timeout_ms != 0 ?
			    p->params.demote_timeout_ms : s->T / 4;
		if (p->params.retry_backoff_ms > backoff)
			backoff = p->params.retry_backoff_ms;
		if (p->check && (p->params.check_rise + 1) *
		    p->params.check_interval_ms > rise)
			rise = (p->params.check_rise + 1) *
			    p->params.check_interval_ms;
	}
	if (resumed == 0 && candidates > 0)
		fault_operator(s, &s->peer[0], OP_RESUME, 0, 0);
	if (demote > s->T / 3)
		demote = s->T / 3;
	/* An auth failure's restart backoff reaches 30 s (its cap). */
	s->bound_ms = 3 * s->T + 2 * hook + 2 * demote + backoff + rise +
	    3000 + 2000 + (s->fc.w[F_AUTH] > 0 ? 30000 : 0) + ops_bound_ms(s);
	s->end_at = s->now + s->bound_ms;
	/*
	 * (idle): after the last stir, the core may hold a request for up to
	 * T (a marker after a yield or a leadership), a failed one waits a
	 * backoff before it goes again, and a few round trips follow.
	 */
	s->idle_slack = s->T + backoff + 2000;
	sim_push(s, s->end_at, EV_END, -1, 0, 0, 0, NULL);
}

enum hook_fate
fault_hook_fate(struct sim *s, struct peer *p, enum hook_kind kind,
    int64_t *duration)
{
	struct fault_cfg *fc = &s->fc;
	int fail = 0, hang = 0;
	int64_t limit = p->hook_ms;

	*duration = rng_between(&s->rng, 5, 300);
	if (kind == HOOK_CHECK) {
		/* A check takes a fraction of its interval (its timeout). */
		*duration = rng_between(&s->rng, 1, limit > 4 ? limit / 2 : 1);
		if (s->quiet || p->healthy)
			return !s->quiet && rng_permille(&s->rng,
			    fc->check_hang) ? HF_HANG : HF_OK;
		return HF_FAIL;
	}
	if (s->quiet)
		return HF_OK;
	switch (kind) {
	case HOOK_PROMOTE:
		fail = fc->promote_fail;
		hang = fc->promote_hang;
		break;
	case HOOK_DEMOTE:
		fail = fc->demote_fail;
		hang = fc->demote_hang;
		break;
	case HOOK_FENCE:
		fail = fc->fence_fail;
		hang = fc->fence_hang;
		break;
	default:
		break;
	}
	if (rng_permille(&s->rng, hang))
		return HF_HANG;
	/* Slow hooks: up to and past their timeout (killed then). */
	if (limit > 0 && rng_permille(&s->rng, fc->hook_slow))
		*duration = rng_between(&s->rng, limit / 4, limit + limit / 4);
	return rng_permille(&s->rng, fail) ? HF_FAIL : HF_OK;
}
