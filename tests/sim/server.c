/*
 * The three servers. Each keeps a replica that replays the quorum's log a
 * little behind it (its lag), serves reads from that replica, forwards
 * writes and syncs to the quorum and answers them once it has applied
 * their zxid, all in the order its client sent them. A server cut off
 * from the quorum keeps its stale replica and goes on answering pings and
 * reads, while writes and syncs hang and its clients' touches no longer
 * reach the quorum; when it notices, it drops every client and later
 * rejoins with a fresh copy of the quorum's tree.
 */
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"
#include "xmalloc.h"

void
server_init(struct sim *s)
{
	int i;

	for (i = 0; i < SIM_SERVERS; i++) {
		struct server *v = &s->srv[i];

		memset(v, 0, sizeof(*v));
		v->idx = i;
		v->state = SRV_UP;
		ztree_init(&v->tree);
		ztree_copy(&v->tree, &s->qu.tree);
		v->lag_ms = rng_between(&s->rng, 0, 20);
	}
	for (i = 0; s->tick_ms > 0 && !s->lease_model && i < SIM_SERVERS; i++)
		sim_push(s, rng_between(&s->rng, 1, s->tick_ms / 2),
		    EV_SRV_PING, -1, i, 0, 0, NULL);
	/* Some ensembles have a slow follower (a slow disk, a far site). */
	if (rng_permille(&s->rng, 250))
		s->srv[rng_between(&s->rng, 0, SIM_SERVERS - 1)].lag_ms =
		    rng_between(&s->rng, 50, 600);
}

void
server_free(struct sim *s)
{
	int i;

	for (i = 0; i < SIM_SERVERS; i++) {
		ztree_free(&s->srv[i].tree);
		free(s->srv[i].w);
		free(s->srv[i].touched);
	}
}

void
server_on_commit(struct sim *s)
{
	int i;

	for (i = 0; i < SIM_SERVERS; i++) {
		struct server *v = &s->srv[i];
		int64_t t;

		if (v->state != SRV_UP)
			continue;
		t = s->now + v->lag_ms;
		if (t < v->apply_last)
			t = v->apply_last;
		v->apply_last = t;
		sim_push(s, t, EV_APPLY, -1, i, v->inc, 0, NULL);
	}
}

/*
 * A client's packet reached this server. By default the quorum hears of
 * it at once; with -k, as in ZooKeeper, a follower reports the sessions
 * it heard from with its next ping to the leader (every tick/2), and a
 * follower cut off meanwhile never reports them. With -L, the server that
 * leads the ensemble touches at once, the others report at the leader's
 * ping rounds (ensemble.c).
 */
static void
server_touch(struct sim *s, struct server *v, int64_t sid)
{
	int i;

	if (v->state != SRV_UP)
		return;
	if (s->tick_ms == 0 || (s->lease_model && s->qu.leader == v->idx)) {
		quorum_touch(s, sid);
		return;
	}
	for (i = 0; i < v->ntouched; i++)
		if (v->touched[i] == sid)
			return;
	if (v->ntouched == v->captouched) {
		v->captouched = v->captouched ? v->captouched * 2 : 16;
		v->touched = xreallocarray(v->touched, (size_t)v->captouched,
		    sizeof(*v->touched));
	}
	v->touched[v->ntouched++] = sid;
}

/* What the server heard of since its last report reaches the quorum. */
void
server_report_touches(struct sim *s, int srv)
{
	struct server *v = &s->srv[srv];
	int i;

	if (v->state == SRV_UP)
		for (i = 0; i < v->ntouched; i++)
			quorum_touch(s, v->touched[i]);
	v->ntouched = 0;
}

void
server_report(struct sim *s, int srv)
{
	server_report_touches(s, srv);
	sim_push(s, s->now + s->tick_ms / 2, EV_SRV_PING, -1, srv, 0, 0, NULL);
}

static void
server_hangup(struct sim *s, struct conn *c)
{
	if (!c->s_open)
		return;
	conn_send_s2c(s, c, conn_msg_new(s, M_HANGUP));
	server_conn_gone(s, c);
}

/* The server forgets the connection: its watches and queued requests. */
void
server_conn_gone(struct sim *s, struct conn *c)
{
	struct zreq *r, *next;

	c->s_open = 0;
	swatch_drop(&s->srv[c->server], c->id);
	for (r = c->q_head; r != NULL; r = next) {
		next = r->next;
		if (r->state == ZS_FORWARDED) {
			r->orphan = 1;	/* the commit event frees it */
			continue;
		}
		ztree_names_free(r->res.children, r->res.nchildren);
		zreq_free(s, r);
	}
	c->q_head = c->q_tail = NULL;
}

static void
server_reply(struct sim *s, struct conn *c, struct zreq *r)
{
	struct msg *m = conn_msg_new(s, M_REPLY);

	m->xid = r->xid;
	m->rep = r->res;
	m->rep.zxid = s->srv[c->server].applied_zxid;
	r->res.children = NULL;
	r->res.nchildren = 0;
	conn_send_s2c(s, c, m);
}

/* A read, answered from this server's replica as it stands. */
static void
server_read(struct sim *s, struct conn *c, struct zreq *r)
{
	struct server *v = &s->srv[c->server];
	struct znode *z = ztree_get(&v->tree, r->path);

	if (sabotage_absent(s, r->path))
		z = NULL;
	memset(&r->res, 0, sizeof(r->res));
	if (z != NULL) {
		sim_copy(r->res.data, sizeof(r->res.data), z->data);
		r->res.czxid = z->czxid;
		r->res.mzxid = z->mzxid;
		r->res.owner = z->owner;
		r->res.version = z->version;
	}
	switch (r->kind) {
	case ZR_GET:
		r->res.rc = z != NULL ? ZOK : ZNONODE;
		if (z != NULL && r->watch)
			swatch_add(v, c->id, W_DATA, r->path);
		break;
	case ZR_EXISTS:
		r->res.rc = z != NULL ? ZOK : ZNONODE;
		r->res.data[0] = '\0';
		if (r->watch)
			swatch_add(v, c->id, z != NULL ? W_DATA :
			    W_EXIST, r->path);
		break;
	case ZR_CHILDREN:
		r->res.rc = z != NULL ? ZOK : ZNONODE;
		if (z != NULL && r->watch)
			swatch_add(v, c->id, W_CHILD, r->path);
		if (z != NULL)
			r->res.nchildren = ztree_children(&v->tree, r->path,
			    &r->res.children);
		if (z != NULL)
			sabotage_children(s, c->sid, r->path,
			    r->res.children, &r->res.nchildren);
		break;
	default:
		break;
	}
}

/* Serves the connection's requests in order, as far as it can. */
static void
server_pump(struct sim *s, struct conn *c)
{
	struct server *v = &s->srv[c->server];
	struct zreq *r;
	int64_t t;

	while ((r = c->q_head) != NULL && c->s_open) {
		if (r->state == ZS_QUEUED && (r->kind == ZR_GET ||
		    r->kind == ZR_EXISTS || r->kind == ZR_CHILDREN)) {
			server_read(s, c, r);
		} else if (r->state == ZS_QUEUED) {
			if (v->state != SRV_UP)
				return;	/* hangs while cut off */
			r->state = ZS_FORWARDED;
			r->sid = c->sid;
			r->conn = c->id;
			/* The link to the leader is one FIFO per server. */
			t = s->now + rng_between(&s->rng, 1, 8);
			if (t < v->fwd_last)
				t = v->fwd_last;
			v->fwd_last = t;
			sim_push(s, t, EV_COMMIT, -1, c->server, v->inc, 0, r);
			return;
		} else if (r->state == ZS_COMMITTED &&
		    v->applied_zxid >= r->wait_zxid && v->state == SRV_UP) {
			/* answered below */
		} else
			return;
		server_reply(s, c, r);
		c->q_head = r->next;
		if (c->q_head == NULL)
			c->q_tail = NULL;
		zreq_free(s, r);
	}
}

static void
server_pump_all(struct sim *s, int srv)
{
	int i;

	for (i = 0; i < s->nconns; i++) {
		struct conn *c = s->conns[i];

		if (c->server == srv && c->s_open && c->q_head != NULL)
			server_pump(s, c);
	}
}

/* A child of its parent came or went: the parent's child watches fire. */
static void
server_fire_parent(struct sim *s, struct server *v, const char *path,
    int64_t zxid)
{
	char parent[SIM_PATH];
	char *slash;

	sim_copy(parent, sizeof(parent), path);
	if ((slash = strrchr(parent, '/')) == NULL || slash == parent)
		return;
	*slash = '\0';
	swatch_fire(s, v, W_CHILD, parent, WE_CHILD, zxid);
}

void
server_apply(struct sim *s, int srv, int inc)
{
	struct server *v = &s->srv[srv];
	const struct txn *x;
	int i;

	if (v->inc != inc || v->state != SRV_UP || v->applied >= s->qu.nlog)
		return;
	x = &s->qu.log[v->applied++];
	quorum_txn_apply(&v->tree, x);
	v->applied_zxid = x->zxid;
	for (i = 0; i < x->nchg; i++) {
		const struct change *ch = &x->chg[i];

		if (ch->kind == CHG_CREATE)
			swatch_fire(s, v, W_EXIST, ch->path, WE_CREATED,
			    x->zxid);
		else
			swatch_fire(s, v, W_DATA, ch->path, ch->kind ==
			    CHG_DELETE ? WE_DELETED : WE_CHANGED, x->zxid);
		if (ch->kind != CHG_SET)
			server_fire_parent(s, v, ch->path, x->zxid);
	}
	/* A closed or expired session's connection is dropped here. */
	if (x->closed_sid != 0)
		for (i = 0; i < s->nconns; i++) {
			struct conn *c = s->conns[i];

			if (c->server == srv && c->s_open &&
			    c->sid == x->closed_sid)
				server_hangup(s, c);
		}
	server_pump_all(s, srv);
}

/* A write or sync reaches the quorum's leader, or is lost on the way. */
void
server_forwarded(struct sim *s, struct zreq *r, int conn, int srv, int inc)
{
	struct conn *c = conn_get(s, conn);

	/*
	 * Cut off (or restarted) since it was sent: the leader may or may
	 * not have received it. If it commits, the cut-off server never
	 * applies it and its client never hears: the lost-reply write.
	 */
	if (s->srv[srv].inc != inc && rng_permille(&s->rng, 500)) {
		r->state = ZS_LOST;
		if (r->orphan)
			zreq_free(s, r);
		return;
	}
	quorum_commit(s, r, r->sid, srv);
	r->state = ZS_COMMITTED;
	if (r->release && r->res.rc == ZOK)
		check_hand_release(s, r);
	if (r->release)
		check_release_unheld(s, r);
	if (r->kind != ZR_SYNC)
		trace(s, -1, "quorum: %s from server %d conn %d: rc %d %s",
		    r->kind == ZR_CREATE ? "create" : "multi", srv, conn,
		    r->res.rc, r->res.path);
	if (r->orphan) {
		ztree_names_free(r->res.children, r->res.nchildren);
		zreq_free(s, r);
		return;
	}
	if (c == NULL || !c->s_open)
		return;
	/* A connection-level error: ZooKeeper tears the connection down
	 * (the queue, r with it), and the client reconnects. */
	if (r->res.rc == ZSESSIONMOVED)
		server_hangup(s, c);
	else
		server_pump(s, c);
}

/*
 * A connection request. The server checks what it can alone, then asks
 * the leader to create or revalidate the session, through the same FIFO
 * as the writes it forwards: so whatever an older connection of the
 * session had forwarded reaches the leader first, while the session still
 * belongs to its old server (and is refused there as moved).
 */
static void
server_connect(struct sim *s, struct conn *c, const struct msg *m)
{
	struct server *v = &s->srv[c->server];
	int i;
	int64_t t;

	/* A cut-off server cannot validate a session: the client waits. */
	if (v->state == SRV_CUT)
		return;
	/* ZooKeeper refuses a client that has seen a later zxid. */
	if (v->applied_zxid < m->zxid) {
		server_hangup(s, c);
		return;
	}
	/* The session's older connection here is closed (reopenSession). */
	for (i = 0; m->sid != 0 && i < s->nconns; i++) {
		struct conn *o = s->conns[i];

		if (o != c && o->server == c->server && o->s_open &&
		    o->sid == m->sid)
			server_hangup(s, o);
	}
	c->hs_sid = m->sid;
	c->hs_zxid = m->zxid;
	c->hs_timeout = m->timeout;
	free(c->hs_watches);
	c->hs_watches = NULL;
	c->hs_nwatch = m->nwatch;
	if (m->nwatch > 0) {
		c->hs_watches = xreallocarray(NULL, (size_t)m->nwatch,
		    sizeof(*m->watches));
		memcpy(c->hs_watches, m->watches,
		    (size_t)m->nwatch * sizeof(*m->watches));
	}
	t = s->now + rng_between(&s->rng, 1, 8);
	if (t < v->fwd_last)
		t = v->fwd_last;
	v->fwd_last = t;
	sim_push(s, t, EV_REVALIDATE, -1, c->id, v->inc, 0, NULL);
}

/* The leader's answer to a connection request. */
void
server_revalidate(struct sim *s, int conn, int inc)
{
	struct conn *c = conn_get(s, conn);
	struct server *v;
	struct qsession *qs;
	struct msg *r;

	if (c == NULL || !c->s_open)
		return;
	v = &s->srv[c->server];
	if (v->inc != inc || v->state != SRV_UP)
		return;		/* cut off meanwhile: the client times out */
	if (c->hs_sid == 0)
		/* The servers grant T whatever the client asked. */
		c->sid = quorum_session_new(s, s->T);
	else
		c->sid = c->hs_sid;
	qs = quorum_session(s, c->sid);
	if (qs == NULL || !qs->live) {
		conn_send_s2c(s, c, conn_msg_new(s, M_EXPIRED));
		server_hangup(s, c);
		return;
	}
	qs->owner = c->server;
	trace(s, -1, "server %d: session %016llx connected (conn %d)",
	    c->server, (unsigned long long)c->sid, c->id);
	quorum_touch(s, c->sid);
	c->established = 1;
	r = conn_msg_new(s, M_CONNECTED);
	r->sid = c->sid;
	r->timeout = qs->timeout;
	conn_send_s2c(s, c, r);
	if (s->now < s->auth_until) {
		/* The client's zoo_add_auth() packet is refused. */
		conn_send_s2c(s, c, conn_msg_new(s, M_AUTH_FAILED));
		server_hangup(s, c);
		return;
	}
	swatch_reregister(s, c);
}

void
server_receive(struct sim *s, struct conn *c, struct msg *m)
{
	struct server *v = &s->srv[c->server];
	struct zreq *r;

	if (!c->s_open || c->srv_inc != v->conn_inc) {
		/* A restarted server answers a stale connection with RST. */
		if (c->s_open)
			server_hangup(s, c);
		return;
	}
	if (v->state == SRV_DOWN) {
		server_hangup(s, c);
		return;
	}
	switch (m->type) {
	case M_CONNECT:
		server_connect(s, c, m);
		break;
	case M_REQUEST:
		r = m->req;
		m->req = NULL;
		if (!c->established) {
			zreq_free(s, r);
			break;
		}
		server_touch(s, v, c->sid);
		r->next = NULL;
		if (c->q_tail != NULL)
			c->q_tail->next = r;
		else
			c->q_head = r;
		c->q_tail = r;
		server_pump(s, c);
		break;
	case M_PING:
		if (!c->established)
			break;
		server_touch(s, v, c->sid);
		conn_send_s2c(s, c, conn_msg_new(s, M_PONG));
		break;
	case M_CLOSE_SESSION:
		if (c->established && v->state == SRV_UP)
			quorum_close_session(s, c->sid, "closed");
		server_conn_gone(s, c);
		break;
	case M_HANGUP:
		server_conn_gone(s, c);
		break;
	default:
		break;
	}
}

void
server_cut(struct sim *s, int srv, int64_t notice_ms)
{
	struct server *v = &s->srv[srv];

	if (v->state != SRV_UP)
		return;
	v->state = SRV_CUT;
	v->inc++;
	v->ntouched = 0;	/* never reported now */
	trace(s, -1, "server %d: cut off from the quorum (notices in %lld ms)",
	    srv, (long long)notice_ms);
	sim_push(s, s->now + notice_ms, EV_SRV_NOTICE, -1, srv, v->inc, 0,
	    NULL);
}

/* The server leaves service (it noticed the cut, or it crashed). */
void
server_notice(struct sim *s, int srv, int inc)
{
	struct server *v = &s->srv[srv];
	int i;

	if (v->inc != inc || v->state == SRV_DOWN)
		return;
	trace(s, -1, "server %d: out of service, drops its clients", srv);
	v->state = SRV_DOWN;
	v->inc++;
	v->conn_inc++;
	v->ntouched = 0;
	for (i = 0; i < s->nconns; i++) {
		struct conn *c = s->conns[i];

		if (c->server == srv && c->s_open)
			server_hangup(s, c);
	}
	v->nw = 0;
	sim_push(s, s->now + rng_between(&s->rng, 200, 3000), EV_SRV_REJOIN,
	    -1, srv, v->inc, 0, NULL);
}

void
server_rejoin(struct sim *s, int srv, int inc)
{
	struct server *v = &s->srv[srv];

	/* While the ensemble elects, nobody serves (ensemble.c). */
	if (v->state != SRV_DOWN || v->inc != inc || s->qu.electing)
		return;
	server_up(s, srv);
}

/* The server follows the quorum's leader again, with its whole tree. */
void
server_up(struct sim *s, int srv)
{
	struct server *v = &s->srv[srv];

	if (v->state != SRV_DOWN)
		return;
	trace(s, -1, "server %d: back in the quorum", srv);
	v->state = SRV_UP;
	v->inc++;
	v->conn_inc++;
	ztree_copy(&v->tree, &s->qu.tree);
	v->applied = s->qu.nlog;
	v->applied_zxid = s->qu.zxid;
	v->apply_last = s->now;
}

void
server_lag(struct sim *s, int srv, int64_t lag_ms)
{
	s->srv[srv].lag_ms = lag_ms;
}
