/*
 * A server's watches: one-shot, per connection, fired in the order the
 * server applies transactions, each notification sent down the same FIFO
 * as the replies (so it reaches the client before any later reply). A
 * reconnecting client re-registers its watches with the last zxid it saw,
 * and the server fires at once what happened meanwhile (setWatches).
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

void
swatch_add(struct server *v, int conn, enum wkind kind,
    const char *path)
{
	int i;

	for (i = 0; i < v->nw; i++)
		if (v->w[i].conn == conn && v->w[i].kind == kind &&
		    strcmp(v->w[i].path, path) == 0)
			return;
	if (v->nw == v->capw) {
		v->capw = v->capw ? v->capw * 2 : 16;
		v->w = xreallocarray(v->w, (size_t)v->capw, sizeof(*v->w));
	}
	v->w[v->nw].conn = conn;
	v->w[v->nw].kind = kind;
	sim_copy(v->w[v->nw].path, sizeof(v->w[v->nw].path), path);
	v->nw++;
}

void
swatch_notify(struct sim *s, struct conn *c, enum wev wev, const char *path,
    int64_t zxid)
{
	struct msg *m;

	if (sabotage_mute(s, wev, path))
		return;
	m = conn_msg_new(s, M_WATCH);
	m->wev = wev;
	m->zxid = zxid;
	sim_copy(m->path, sizeof(m->path), path);
	conn_send_s2c(s, c, m);
}

/* Fires, in registration order, the one-shot watches of kind on path. */
void
swatch_fire(struct sim *s, struct server *v, enum wkind kind,
    const char *path, enum wev wev, int64_t zxid)
{
	int i, k = 0;

	for (i = 0; i < v->nw; i++) {
		if (v->w[i].kind == kind && strcmp(v->w[i].path, path) == 0) {
			struct conn *c = conn_get(s, v->w[i].conn);

			if (c != NULL && c->s_open)
				swatch_notify(s, c, wev, path, zxid);
			continue;
		}
		v->w[k++] = v->w[i];
	}
	v->nw = k;
}

/* setWatches: what a reconnecting client was watching. */
void
swatch_reregister(struct sim *s, struct conn *c)
{
	struct server *v = &s->srv[c->server];
	struct znode *z;
	int i;

	for (i = 0; i < c->hs_nwatch; i++) {
		const struct cwatch *w = &c->hs_watches[i];

		z = ztree_get(&v->tree, w->path);
		if (w->kind == W_CHILD) {
			if (z == NULL)
				swatch_notify(s, c, WE_DELETED, w->path,
				    v->applied_zxid);
			else if (z->pzxid > c->hs_zxid)
				swatch_notify(s, c, WE_CHILD, w->path,
				    v->applied_zxid);
			else
				swatch_add(v, c->id, W_CHILD, w->path);
		} else if (w->kind == W_EXIST) {
			if (z != NULL)
				swatch_notify(s, c, WE_CREATED, w->path,
				    v->applied_zxid);
			else
				swatch_add(v, c->id, W_EXIST, w->path);
		} else if (z == NULL)
			swatch_notify(s, c, WE_DELETED, w->path,
			    v->applied_zxid);
		else if (z->mzxid > c->hs_zxid)
			swatch_notify(s, c, WE_CHANGED, w->path,
			    v->applied_zxid);
		else
			swatch_add(v, c->id, W_DATA, w->path);
	}
}

/* The connection is gone: its watches with it. */
void
swatch_drop(struct server *v, int conn)
{
	int i, k = 0;

	for (i = 0; i < v->nw; i++)
		if (v->w[i].conn != conn)
			v->w[k++] = v->w[i];
	v->nw = k;
}
