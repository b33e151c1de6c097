/*
 * The ZooKeeper ensemble's leader, seen as one authority: it orders every
 * write with a zxid, validates it against the latest tree (so that the
 * outcome of a request never depends on which server forwarded it), keeps
 * the log the servers replay, and owns the sessions: a session not touched
 * for its timeout by a server in the quorum expires, and its ephemeral
 * nodes go in one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"
#include "xmalloc.h"

void
quorum_init(struct sim *s)
{
	struct quorum *q = &s->qu;

	memset(q, 0, sizeof(*q));
	ztree_init(&q->tree);
	/* The root's own parent: ZooKeeper has "/" and "/zookeeper". */
	(void)ztree_add(&q->tree, "/", "", 0, 0);
	q->sid_next = 0x100000000ULL;
}

void
quorum_free(struct sim *s)
{
	struct quorum *q = &s->qu;
	int i;

	for (i = 0; i < q->nlog; i++)
		free(q->log[i].chg);
	free(q->log);
	free(q->s);
	ztree_free(&q->tree);
	free(s->born);
	s->born = NULL;
}

/* Applies one transaction to a tree: the quorum's, or a server's replay. */
void
quorum_txn_apply(struct ztree *t, const struct txn *x)
{
	struct znode *z;
	int i;

	for (i = 0; i < x->nchg; i++) {
		const struct change *c = &x->chg[i];

		switch (c->kind) {
		case CHG_CREATE:
			(void)ztree_add(t, c->path, c->data, x->zxid,
			    c->owner);
			if ((z = ztree_parent(t, c->path)) != NULL)
				z->pzxid = x->zxid;
			break;
		case CHG_DELETE:
			ztree_del(t, c->path);
			if ((z = ztree_parent(t, c->path)) != NULL)
				z->pzxid = x->zxid;
			break;
		case CHG_SET:
			if ((z = ztree_get(t, c->path)) != NULL) {
				sim_copy(z->data, sizeof(z->data), c->data);
				z->version++;
				z->mzxid = x->zxid;
			}
			break;
		}
	}
}

static void
quorum_born(struct sim *s, const char *path, int64_t zxid)
{
	const char *name;

	if (strncmp(path, SIM_CANDS "/", strlen(SIM_CANDS) + 1) != 0)
		return;
	name = path + strlen(SIM_CANDS) + 1;
	if (s->nborn == s->capborn) {
		s->capborn = s->capborn ? s->capborn * 2 : 64;
		s->born = xreallocarray(s->born, (size_t)s->capborn,
		    sizeof(*s->born));
	}
	(void)snprintf(s->born[s->nborn].name, sizeof(s->born[0].name), "%s",
	    name);
	s->born[s->nborn].released = 0;
	s->born[s->nborn].at = s->now;
	s->born[s->nborn++].czxid = zxid;
}

/* The index of candidate node name in s->born, or -1: never made. */
static int
quorum_born_find(const struct sim *s, const char *name)
{
	int i;

	for (i = 0; i < s->nborn; i++)
		if (strcmp(s->born[i].name, name) == 0)
			return i;
	return -1;
}

/* When the quorum made candidate node name (-1: never). */
int64_t
quorum_born_at(const struct sim *s, const char *name)
{
	int i = quorum_born_find(s, name);

	return i >= 0 ? s->born[i].at : -1;
}

int64_t
quorum_born_czxid(const struct sim *s, const char *name)
{
	int i = quorum_born_find(s, name);

	return i >= 0 ? s->born[i].czxid : -1;
}

/* Appends a transaction with the changes and applies it at the quorum. */
static int64_t
quorum_append(struct sim *s, const struct change *chg, int n,
    int64_t closed_sid)
{
	struct quorum *q = &s->qu;
	struct txn *x;
	int i;

	if (q->nlog == q->caplog) {
		q->caplog = q->caplog ? q->caplog * 2 : 256;
		q->log = xreallocarray(q->log, (size_t)q->caplog,
		    sizeof(*q->log));
	}
	x = &q->log[q->nlog++];
	x->zxid = ++q->zxid;
	x->closed_sid = closed_sid;
	x->nchg = n;
	x->chg = NULL;
	if (n > 0) {
		x->chg = xreallocarray(NULL, (size_t)n, sizeof(*chg));
		memcpy(x->chg, chg, (size_t)n * sizeof(*chg));
	}
	quorum_txn_apply(&q->tree, x);
	check_zxid_note(s);
	if (n > 0)
		s->stir_at = s->now;
	for (i = 0; i < n; i++)
		if (chg[i].kind == CHG_CREATE)
			quorum_born(s, chg[i].path, x->zxid);
	server_on_commit(s);
	return x->zxid;
}

struct qsession *
quorum_session(struct sim *s, int64_t sid)
{
	int i;

	for (i = 0; i < s->qu.ns; i++)
		if (s->qu.s[i].sid == sid)
			return &s->qu.s[i];
	return NULL;
}

int64_t
quorum_session_new(struct sim *s, int64_t timeout)
{
	struct quorum *q = &s->qu;
	struct qsession *qs;

	if (q->ns == q->caps) {
		q->caps = q->caps ? q->caps * 2 : 16;
		q->s = xreallocarray(q->s, (size_t)q->caps, sizeof(*q->s));
	}
	qs = &q->s[q->ns++];
	memset(qs, 0, sizeof(*qs));
	/* Unrelated to creation order, so that names do not sort by age. */
	q->sid_next += (uint64_t)rng_between(&s->rng, 1, 0xffffff) << 8;
	qs->sid = (int64_t)((q->sid_next ^ 0x5a5a5a5a5a5aULL) &
	    0x7fffffffffffffffULL);
	qs->timeout = timeout;
	qs->live = 1;
	(void)quorum_append(s, NULL, 0, 0);	/* createSession */
	quorum_touch(s, qs->sid);
	return qs->sid;
}

void
quorum_touch(struct sim *s, int64_t sid)
{
	struct qsession *qs = quorum_session(s, sid);

	if (qs == NULL || !qs->live)
		return;
	qs->expire_at = s->now + qs->timeout;
	/* ZooKeeper's SessionTracker rounds it up to a tick boundary. */
	if (s->tick_ms > 0)
		qs->expire_at = (qs->expire_at / s->tick_ms + 1) * s->tick_ms;
	if (!qs->check_pending) {
		qs->check_pending = 1;
		sim_push(s, qs->expire_at, EV_EXPIRE, -1, 0, 0, sid, NULL);
	}
}

void
quorum_expire_check(struct sim *s, int64_t sid)
{
	struct qsession *qs = quorum_session(s, sid);

	/* Nobody expires sessions while the ensemble elects: its new
	 * leader touches them all (ensemble.c). */
	if (qs == NULL || !qs->live || s->qu.electing) {
		if (qs != NULL)
			qs->check_pending = 0;
		return;
	}
	if (s->now < qs->expire_at) {
		sim_push(s, qs->expire_at, EV_EXPIRE, -1, 0, 0,
		    sid, NULL);
		return;
	}
	qs->check_pending = 0;
	s->st.expiries++;
	qs->expired_at = s->now;
	quorum_close_session(s, sid, "expired");
	check_lease_expired(s, sid);
}

void
quorum_close_session(struct sim *s, int64_t sid, const char *why)
{
	struct qsession *qs = quorum_session(s, sid);
	struct change *chg;
	int i, n = 0;

	if (qs == NULL || !qs->live)
		return;
	qs->live = 0;
	chg = xcalloc((size_t)s->qu.tree.n + 1, sizeof(*chg));
	for (i = 0; i < s->qu.tree.n; i++)
		if (s->qu.tree.v[i].owner == sid) {
			chg[n].kind = CHG_DELETE;
			sim_copy(chg[n].path, sizeof(chg[n].path),
			    s->qu.tree.v[i].path);
			n++;
		}
	trace(s, -1, "quorum: session %016llx %s, %d ephemeral(s) deleted",
	    (unsigned long long)sid, why, n);
	(void)quorum_append(s, chg, n, sid);
	free(chg);
}

void
quorum_admin_delete(struct sim *s, const char *path)
{
	struct change c;
	struct znode *z = ztree_get(&s->qu.tree, path);
	int64_t zxid, owner;
	int i;

	if (z == NULL || ztree_has_children(&s->qu.tree, path))
		return;
	owner = z->owner;	/* z goes with the delete */
	/* The checker tells the violations this may explain apart. */
	s->admin_last = s->now;
	if (strcmp(path, SIM_CRUMB) == 0)
		check_crumb_deleted(s);
	memset(&c, 0, sizeof(c));
	c.kind = CHG_DELETE;
	sim_copy(c.path, sizeof(c.path), path);
	trace(s, -1, "admin: delete %s", path);
	zxid = quorum_append(s, &c, 1, 0);
	if (owner != 0 && strncmp(path, SIM_CLAIMS "/",
	    strlen(SIM_CLAIMS "/")) == 0)
		s->claim_taken[s->nclaim_taken++ % 32] = owner;
	for (i = 0; i < s->npeers; i++) {
		struct pcheck *pc = &s->pc[i];

		/*
		 * A crashed daemon's session lives on: it is still its; so
		 * is the session it led in, which a lost handle (auth
		 * failed) left behind while it demotes.
		 */
		if (owner == 0 || (s->peer[i].cl.sid != owner &&
		    pc->sid != owner))
			continue;
		pc->admin_at = s->now;
		if (strncmp(path, SIM_CANDS "/", strlen(SIM_CANDS "/")) == 0) {
			pc->node_admin_at = s->now;
			pc->node_admin_sid = owner;
		}
		if (strncmp(path, SIM_CLAIMS "/", strlen(SIM_CLAIMS "/")) == 0) {
			pc->claim_admin_at = s->now;
			pc->claim_admin_zxid = zxid;
			pc->claim_admin_sid = owner;
		}
	}
}

/* Whether an ACL without DELETE on path's parent holds now (acl). */
static int
quorum_acl_refuses(const struct sim *s, const char *path)
{
	static const char *dirs[] = { SIM_ROOT, SIM_CANDS, SIM_CLAIMS,
	    SIM_MARKS };
	size_t len;
	int i;

	for (i = 0; i < 4; i++) {
		len = strlen(dirs[i]);
		if (s->now < s->acl_until[i] &&
		    strncmp(path, dirs[i], len) == 0 && path[len] == '/' &&
		    strchr(path + len + 1, '/') == NULL)
			return 1;
	}
	return 0;
}

/* One operation against t (a scratch copy during a multi); fills c. */
static int
quorum_op(struct sim *s, struct ztree *t, enum zk_mop_kind kind,
    const char *path, const char *data, int32_t version, int sequential,
    int64_t sid, struct change *c, char *created)
{
	struct znode *z, *parent;
	struct txn x;

	if (kind == ZK_MOP_CREATE_EPHEMERAL_SEQ) {
		kind = ZK_MOP_CREATE_EPHEMERAL;
		sequential = 1;
	}
	memset(c, 0, sizeof(*c));
	sim_copy(c->path, sizeof(c->path), path);
	sim_copy(c->data, sizeof(c->data), data != NULL ? data : "");
	/* The parent's ACL comes before the node's existence and version. */
	if (kind == ZK_MOP_DELETE && sid != 0 && quorum_acl_refuses(s, path))
		return ZNOAUTH;
	z = ztree_get(t, path);
	if (z != NULL && version >= 0 && z->version != version &&
	    kind != ZK_MOP_CREATE && kind != ZK_MOP_CREATE_EPHEMERAL)
		return ZBADVERSION;
	switch (kind) {
	case ZK_MOP_CHECK:
		return z != NULL ? ZOK : ZNONODE;
	case ZK_MOP_CREATE:
	case ZK_MOP_CREATE_EPHEMERAL:
	case ZK_MOP_CREATE_EPHEMERAL_SEQ:
		parent = ztree_parent(t, path);
		if (parent == NULL && strchr(path + 1, '/') != NULL)
			return ZNONODE;
		if (parent != NULL && parent->owner != 0)
			return ZNOCHILDRENFOREPHEMERALS;
		if (sequential)
			(void)snprintf(c->path, sizeof(c->path), "%s%010d",
			    path, parent != NULL ? parent->cversion : 0);
		if (ztree_get(t, c->path) != NULL)
			return ZNODEEXISTS;
		c->kind = CHG_CREATE;
		c->owner = kind == ZK_MOP_CREATE_EPHEMERAL ? sid : 0;
		if (created != NULL)
			sim_copy(created, SIM_PATH, c->path);
		break;
	case ZK_MOP_SET:
		if (z == NULL)
			return ZNONODE;
		c->kind = CHG_SET;
		break;
	case ZK_MOP_DELETE:
		if (z == NULL)
			return ZNONODE;
		if (ztree_has_children(t, path))
			return ZNOTEMPTY;
		c->kind = CHG_DELETE;
		break;
	}
	/* Later operations of a multi see this one. */
	memset(&x, 0, sizeof(x));
	x.zxid = s->qu.zxid + 1;
	x.nchg = 1;
	x.chg = c;
	quorum_txn_apply(t, &x);
	return ZOK;
}

/*
 * The version a multi's last set left (a SetDataResult's Stat, which the
 * daemon asks the client library for): read off the scratch tree the
 * multi was applied to, as the quorum applies it.
 */
static void
quorum_set_version(const struct ztree *t, struct zreq *req)
{
	const struct znode *z;
	int i;

	for (i = req->nmop - 1; i >= 0; i--)
		if (req->mop[i].kind == ZK_MOP_SET)
			break;
	if (i < 0 || (z = ztree_get(t, req->mop[i].path)) == NULL)
		return;
	req->res.has_set_version = 1;
	req->res.set_version = z->version;
}

/* An administrator's persistent node (made with its parent if need be). */
void
quorum_admin_create(struct sim *s, const char *path)
{
	struct change c;
	struct ztree scratch;
	int rc;

	ztree_init(&scratch);
	ztree_copy(&scratch, &s->qu.tree);
	rc = quorum_op(s, &scratch, ZK_MOP_CREATE, path, "", -1, 0, 0, &c,
	    NULL);
	ztree_free(&scratch);
	trace(s, -1, "admin: create %s: rc %d", path, rc);
	if (rc == ZOK)
		(void)quorum_append(s, &c, 1, 0);
}

/*
 * An administrator's set of path (any version), or its create where it
 * is absent: the zxid of the write.
 */
int64_t
quorum_admin_write(struct sim *s, const char *path, const char *data)
{
	struct change c;
	struct ztree scratch;
	int rc;

	ztree_init(&scratch);
	ztree_copy(&scratch, &s->qu.tree);
	rc = quorum_op(s, &scratch, ztree_get(&s->qu.tree, path) != NULL ?
	    ZK_MOP_SET : ZK_MOP_CREATE, path, data, -1, 0, 0, &c, NULL);
	ztree_free(&scratch);
	trace(s, -1, "admin: write %s: rc %d", path, rc);
	return rc == ZOK ? quorum_append(s, &c, 1, 0) : 0;
}

/*
 * srv forwarded req for session sid. Once the session has reconnected
 * through another server, ZooKeeper's leader refuses what the old one
 * still forwards (SESSIONMOVED): a request of a dead connection is
 * applied before the session moves, or never.
 */
void
quorum_commit(struct sim *s, struct zreq *req, int64_t sid, int srv)
{
	struct qsession *qs = quorum_session(s, sid);
	struct change chg[EL_MAX_SUBOPS], real[EL_MAX_SUBOPS];
	struct ztree scratch;
	int i, n = 0, rc = ZOK;

	memset(&req->res, 0, sizeof(req->res));
	req->wait_zxid = s->qu.zxid;
	if (qs == NULL || !qs->live) {
		req->res.rc = ZSESSIONEXPIRED;
		return;
	}
	if (qs->owner != srv) {
		req->res.rc = ZSESSIONMOVED;
		return;
	}
	switch (req->kind) {
	case ZR_SYNC:
		req->res.rc = ZOK;
		sim_copy(req->res.path, sizeof(req->res.path), req->path);
		return;
	case ZR_CREATE:
		ztree_init(&scratch);
		ztree_copy(&scratch, &s->qu.tree);
		rc = quorum_op(s, &scratch, (req->flags & 1) ?
		    ZK_MOP_CREATE_EPHEMERAL : ZK_MOP_CREATE, req->path,
		    req->data, -1, (req->flags & 2) != 0, sid, &chg[0],
		    req->res.path);
		ztree_free(&scratch);
		req->res.rc = rc;
		if (rc != ZOK)
			return;
		check_queue_commit(s, req, sid);
		check_ops_commit(s, req, sid);
		req->wait_zxid = quorum_append(s, chg, 1, 0);
		return;
	case ZR_MULTI:
		ztree_init(&scratch);
		ztree_copy(&scratch, &s->qu.tree);
		for (i = 0; i < req->nmop && rc == ZOK; i++)
			rc = quorum_op(s, &scratch, req->mop[i].kind,
			    req->mop[i].path, req->mop[i].data,
			    req->mop[i].version, 0, sid,
			    &chg[i], NULL);
		if (rc == ZOK)
			quorum_set_version(&scratch, req);
		ztree_free(&scratch);
		req->res.rc = rc;
		if (rc != ZOK)
			return;
		check_queue_commit(s, req, sid);
		check_ops_commit(s, req, sid);
		/* Checks change nothing; a multi of checks only is a txn
		 * without changes, as in ZooKeeper. */
		for (i = 0; i < req->nmop; i++)
			if (req->mop[i].kind != ZK_MOP_CHECK)
				real[n++] = chg[i];
		req->wait_zxid = quorum_append(s, real, n, 0);
		check_crumb_data(s);
		return;
	default:
		req->res.rc = ZBADARGUMENTS;
		return;
	}
}
