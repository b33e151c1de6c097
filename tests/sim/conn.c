/*
 * TCP connections between a daemon's client library and a server. Each
 * direction is a FIFO: a message arrives after a random latency but never
 * before the one sent ahead of it, which is what lets a client see a
 * watch notification before any later reply. A blocked link (a silent
 * partition) holds messages back, as TCP retransmission would, until it
 * heals; the ends give up on their own timers meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

struct conn *
conn_new(struct sim *s, int peer, int client_gen, int srv)
{
	struct conn *c;

	if (s->nconns == s->capconns) {
		s->capconns = s->capconns ? s->capconns * 2 : 64;
		s->conns = xreallocarray(s->conns, (size_t)s->capconns,
		    sizeof(*s->conns));
	}
	c = xcalloc(1, sizeof(*c));
	c->id = s->nconns;
	c->peer = peer;
	c->client_gen = client_gen;
	c->server = srv;
	c->srv_inc = s->srv[srv].conn_inc;
	c->c_open = 1;
	c->s_open = 1;
	s->conns[s->nconns++] = c;
	return c;
}

struct conn *
conn_get(struct sim *s, int id)
{
	if (id < 0 || id >= s->nconns)
		return NULL;
	return s->conns[id];
}

int64_t
conn_latency(struct sim *s)
{
	/*
	 * -L: one message in ten is slow (a retransmission, a busy server):
	 * so the moment a server touches a session falls anywhere inside a
	 * request's flight, from just after its send to just before its
	 * reply. Slow links are a fault: they heal when the faults stop.
	 */
	if (s->lease_model && !s->quiet && rng_permille(&s->rng, 100))
		return rng_between(&s->rng, 20, 300);
	/* Mostly a LAN; now and then a slow packet. */
	if (rng_permille(&s->rng, 20))
		return rng_between(&s->rng, 20, 80);
	return rng_between(&s->rng, 1, 5);
}

static int64_t
conn_arrival(struct sim *s, struct conn *c, int64_t last)
{
	int64_t t = s->now, block = s->link_block[c->peer][c->server];

	if (block > t)
		t = block;
	t += conn_latency(s);
	return t > last ? t : last;
}

void
conn_send_c2s(struct sim *s, struct conn *c, struct msg *m)
{
	c->c2s_last = conn_arrival(s, c, c->c2s_last);
	sim_push(s, c->c2s_last, EV_C2S, -1, c->id, 0, 0, m);
}

void
conn_send_s2c(struct sim *s, struct conn *c, struct msg *m)
{
	c->s2c_last = conn_arrival(s, c, c->s2c_last);
	sim_push(s, c->s2c_last, EV_S2C, c->peer, c->id, c->client_gen, 0, m);
}

/*
 * Messages and requests come and go by the hundred thousand a second,
 * with a few dozen in flight: too many for malloc, whose per-size caches
 * they overflow. A run keeps the ones it is done with on its free lists
 * (conn_pool_free() returns them at its end) and hands them out again
 * zeroed, as calloc would.
 */
struct msg *
conn_msg_new(struct sim *s, enum msg_type type)
{
	struct msg *m = s->msg_pool;

	if (m != NULL) {
		s->msg_pool = m->next;
		memset(m, 0, sizeof(*m));
	} else
		m = xcalloc(1, sizeof(*m));
	m->type = type;
	return m;
}

struct zreq *
zreq_new(struct sim *s)
{
	struct zreq *r = s->zreq_pool;

	if (r != NULL) {
		s->zreq_pool = r->next;
		memset(r, 0, sizeof(*r));
	} else
		r = xcalloc(1, sizeof(*r));
	return r;
}

/* A request's own allocations: only a multi's operations. */
void
zreq_free(struct sim *s, struct zreq *r)
{
	if (r == NULL)
		return;
	free(r->mop);
	r->mop = NULL;
	r->next = s->zreq_pool;
	s->zreq_pool = r;
}

void
conn_msg_free(struct sim *s, struct msg *m)
{
	if (m == NULL)
		return;
	ztree_names_free(m->rep.children, m->rep.nchildren);
	zreq_free(s, m->req);
	free(m->watches);
	m->next = s->msg_pool;
	s->msg_pool = m;
}

/* The end of a run: the free lists go back to malloc. */
void
conn_pool_free(struct sim *s)
{
	struct msg *m;
	struct zreq *r;

	while ((m = s->msg_pool) != NULL) {
		s->msg_pool = m->next;
		free(m);
	}
	while ((r = s->zreq_pool) != NULL) {
		s->zreq_pool = r->next;
		free(r);
	}
}

void
conn_free_all(struct sim *s)
{
	struct zreq *r, *next;
	int i;

	for (i = 0; i < s->nconns; i++) {
		for (r = s->conns[i]->q_head; r != NULL; r = next) {
			next = r->next;
			ztree_names_free(r->res.children, r->res.nchildren);
			zreq_free(s, r);
		}
		free(s->conns[i]->hs_watches);
		free(s->conns[i]);
	}
	free(s->conns);
	s->conns = NULL;
	s->nconns = s->capconns = 0;
}
