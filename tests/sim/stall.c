/*
 * Loop stalls (-Y): the daemon's event loop stops for a while (a status
 * file or a log line written to a slow disk, a machine short of CPU or
 * memory) while libzookeeper_mt's own threads go on. They ping, notice a
 * lost connection, connect again to the same session, and take replies
 * and notifications, which wait in the queue the loop reads until it runs
 * again (request.c). So the core learns late, in order, and reads its
 * clock when it gets to the news: a reply read after the library has
 * connected again, which a freeze (it stops the threads too) never
 * shows. The session meanwhile stays alive. Hooks, other processes, go on;
 * the daemon's timers, operators and reaping wait for the loop, as in a
 * freeze (freeze.c), whose waking this shares.
 *
 * In 3 runs in 10 (-Y sets it), each daemon stalls now and then (its mean
 * time between stalls drawn per run), mostly for milliseconds, sometimes
 * for a second or more. Every choice comes from stall_rng, so a run
 * without stalls is the run it was before they existed.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

enum stall_kind {
	NEWS_REPLY,
	NEWS_WATCH,
	NEWS_SESSION,
};

/* What the library handed over while the loop stood still. */
struct stall_news {
	enum stall_kind kind;
	struct cpending pd;	/* NEWS_REPLY: the request it answers */
	struct zreply rep;	/* its reply (children copied) */
	int conn;		/* the connection it came on */
	enum wev wev;		/* NEWS_WATCH */
	char path[SIM_PATH];
	enum el_zk state;	/* NEWS_SESSION */
	int sconn;		/* NEWS_SESSION: the library's connection */
	int64_t zxid;		/* the library's last zxid when it came */
};

static void
stall_schedule(struct sim *s, int i)
{
	sim_push(s, s->now + rng_between(&s->stall_rng, s->stall_ms / 4,
	    s->stall_ms * 7 / 4), EV_STALL, i, 0, 0, 0, NULL);
}

void
stall_init(struct sim *s, const struct sim_opts *o, uint64_t seed)
{
	int i;

	rng_seed(&s->stall_rng, seed ^ UINT64_C(0x73746c6c6c6f6f70));
	s->stall_ms = 0;
	if (o->stall > 0)
		s->stall_ms = o->stall;
	else if (o->stall == 0 && rng_permille(&s->stall_rng, 300))
		s->stall_ms = rng_between(&s->stall_rng, 2000, 20000);
	if (s->stall_ms == 0)
		return;
	for (i = 0; i < s->npeers; i++)
		stall_schedule(s, i);
}

/* A stall's length: mostly short, sometimes beyond the lease. */
static int64_t
stall_length(struct sim *s)
{
	int64_t r = rng_between(&s->stall_rng, 0, 9);

	if (r < 6)
		return rng_between(&s->stall_rng, 1, 50);
	if (r < 9)
		return rng_between(&s->stall_rng, 50, 1000);
	return rng_between(&s->stall_rng, 1000, s->T * 3 / 2);
}

/* EV_STALL: the daemon's loop stops, unless it is frozen or down. */
void
stall_event(struct sim *s, const struct ev *ev)
{
	struct peer *p = &s->peer[ev->peer];
	int64_t ms;

	if (s->quiet)
		return;
	stall_schedule(s, ev->peer);
	ms = stall_length(s);
	if (!p->running || p->frozen)
		return;
	s->st.stalls++;
	trace(s, p->idx, "fault: loop stalled for %lld ms (the library runs)",
	    (long long)ms);
	freeze_start(s, p, ms);
	p->lib_live = 1;
	if (p->news_pending == 0)
		p->told_zxid = p->cl.last_zxid;
}

/* What the library's threads do themselves while the loop stalls. */
int
stall_library_event(const struct peer *p, const struct ev *ev)
{
	if (!p->lib_live)
		return 0;
	switch (ev->type) {
	case EV_S2C:
	case EV_CL_PING:
	case EV_CL_RECV:
	case EV_CL_CONNECT:
	case EV_CL_CONNTMO:
		return 1;
	default:
		return 0;
	}
}

/*
 * Whether news goes to the loop's queue: while it stalls, and after it,
 * until the news from before is told (what the library answers at once
 * to a request asked meanwhile comes after it).
 */
static int
stall_holds(struct peer *p)
{
	/* The news being told now goes through (stall_news()). */
	if (p->telling) {
		p->telling = 0;
		return 0;
	}
	return p->frozen || p->news_pending > 0;
}

/*
 * The news of this kind kept for the loop, or NULL when the loop takes it
 * at once.
 */
static struct stall_news *
stall_keep(struct sim *s, struct peer *p, enum stall_kind kind)
{
	struct stall_news *n;
	struct ev ev;

	if (!stall_holds(p))
		return NULL;
	n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->zxid = p->cl.last_zxid;
	p->news_pending++;
	memset(&ev, 0, sizeof(ev));
	ev.t = s->now;
	ev.type = EV_NEWS;
	ev.peer = p->idx;
	ev.inc = p->inc;
	ev.p = n;
	freeze_defer(p, &ev);
	return n;
}

/* 1 if the loop stalls: the reply is kept for it. */
int
stall_defer_reply(struct sim *s, struct peer *p, const struct cpending *pd,
    const struct zreply *rep, int conn)
{
	struct stall_news *n;
	int i;

	if ((n = stall_keep(s, p, NEWS_REPLY)) == NULL)
		return 0;
	n->pd = *pd;
	n->rep = *rep;
	n->conn = conn;
	n->rep.children = NULL;
	if (rep->nchildren > 0) {
		n->rep.children = xcalloc((size_t)rep->nchildren,
		    sizeof(*n->rep.children));
		for (i = 0; i < rep->nchildren; i++)
			n->rep.children[i] = xstrdup(rep->children[i]);
	}
	return 1;
}

int
stall_defer_watch(struct sim *s, struct peer *p, enum wev wev,
    const char *path)
{
	struct stall_news *n;

	if ((n = stall_keep(s, p, NEWS_WATCH)) == NULL)
		return 0;
	n->wev = wev;
	sim_copy(n->path, sizeof(n->path), path);
	return 1;
}

int
stall_defer_session(struct sim *s, struct peer *p, enum el_zk state)
{
	struct stall_news *n;

	if ((n = stall_keep(s, p, NEWS_SESSION)) == NULL)
		return 0;
	n->state = state;
	n->sconn = p->cl.conn;
	return 1;
}

void
stall_news_free(struct ev *ev)
{
	struct stall_news *n = ev->p;

	if (ev->type != EV_NEWS || n == NULL)
		return;
	ztree_names_free(n->rep.children, n->rep.nchildren);
	free(n);
	ev->p = NULL;
}

/*
 * The latest zxid the core has been told of: what the library received,
 * less what waits for a stalled loop.
 */
int64_t
stall_told_zxid(const struct peer *p)
{
	return p->news_pending > 0 ? p->told_zxid : p->cl.last_zxid;
}

/* The loop runs again and gets to the news, in the order it came. */
void
stall_news(struct sim *s, struct peer *p, const struct ev *ev)
{
	struct stall_news *n = ev->p;
	struct ev copy = *ev;

	p->news_pending--;
	p->told_zxid = n->zxid;
	p->telling = 1;
	switch (n->kind) {
	case NEWS_REPLY:
		peer_reply_pd(s, p, &n->pd, &n->rep, n->conn);
		break;
	case NEWS_WATCH:
		peer_watch(s, p, n->wev, n->path);
		break;
	case NEWS_SESSION:
		p->told_conn = n->sconn;
		peer_session(s, p, n->state);
		p->told_conn = -1;
		break;
	}
	stall_news_free(&copy);
}
