/*
 * The ZooKeeper C client library inside one daemon, as far as the recipe
 * can tell: it connects to one server at a time, tries the next one when
 * a connection fails, pings after T/3 of silence on its side and gives the
 * connection up after 2T/3 without hearing anything; a lost connection is
 * reported as CONNECTING first, then every request in flight completes
 * with ZCONNECTIONLOSS (libzookeeper's handle_error() order), whether or
 * not the server applied it. On reconnecting it sends its watches with
 * the last zxid it saw, so that the server fires what happened meanwhile,
 * and it never goes back to a server behind that zxid. Requests issued
 * while connecting wait for the connection, and fail if the attempt does.
 */
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"
#include "xmalloc.h"

static void client_lost(struct sim *s, struct peer *p);

static void
client_push(struct sim *s, struct peer *p, int64_t t, enum ev_type type,
    int a)
{
	sim_push(s, t, type, p->idx, a, p->cl.gen, 0, NULL);
}

void
client_free(struct sim *s, struct client *cl)
{
	int i;

	for (i = 0; i < cl->npend; i++)
		zreq_free(s, cl->pend[i].unsent);
	cl->npend = 0;
	free(cl->w);
	cl->w = NULL;
	cl->nw = cl->capw = 0;
}

void
client_open(struct sim *s, struct peer *p)
{
	struct client *cl = &p->cl;
	int gen = cl->gen + 1;

	client_free(s, cl);
	memset(cl, 0, sizeof(*cl));
	cl->gen = gen;
	cl->state = CL_CONNECTING;
	cl->timeout = p->params.session_timeout_ms;
	cl->conn = -1;
	cl->xid_next = 1;
	check_lease_requested(s, p);
	/* zookeeper_init() shuffles the host list. */
	cl->next_server = (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
	client_push(s, p, s->now + rng_between(&s->rng, 0, 10), EV_CL_CONNECT,
	    0);
}

static void
client_hangup(struct sim *s, struct peer *p)
{
	struct conn *c = conn_get(s, p->cl.conn);

	if (c != NULL && c->c_open) {
		c->c_open = 0;
		conn_send_c2s(s, c, conn_msg_new(s, M_HANGUP));
	}
	p->cl.conn = -1;
	p->cl.handshake = 0;
}

void
client_close(struct sim *s, struct peer *p, int send_close)
{
	struct client *cl = &p->cl;
	struct conn *c = conn_get(s, cl->conn);

	if (c != NULL && c->c_open) {
		/* zookeeper_close() asks the server to end the session. */
		if (send_close && cl->state == CL_CONNECTED && !cl->handshake)
			conn_send_c2s(s, c, conn_msg_new(s, M_CLOSE_SESSION));
		else
			conn_send_c2s(s, c, conn_msg_new(s, M_HANGUP));
		c->c_open = 0;
	}
	cl->conn = -1;
	cl->state = CL_CLOSED;
	client_free(s, cl);
	cl->gen++;		/* whatever is still on its way is dropped */
}

static void
client_send(struct sim *s, struct peer *p, struct zreq *r)
{
	struct client *cl = &p->cl;
	struct msg *m = conn_msg_new(s, M_REQUEST);
	int i;

	m->req = r;
	cl->last_send = s->now;
	for (i = 0; i < cl->npend; i++)
		if (cl->pend[i].xid == r->xid) {
			cl->pend[i].sent = s->now;
			cl->pend[i].qzxid = s->qu.zxid;
		}
	conn_send_c2s(s, conn_get(s, cl->conn), m);
}

int
client_request(struct sim *s, struct peer *p, struct zreq *r, enum el_op op)
{
	struct client *cl = &p->cl;
	struct cpending *pd;
	int i;

	if (cl->state == CL_EXPIRED || cl->state == CL_CLOSED) {
		zreq_free(s, r);
		return ZINVALIDSTATE;
	}
	if (cl->npend == SIM_MAX_PENDING) {
		check_fail(s, "%s: more than %d ZooKeeper requests "
		    "outstanding", p->id, SIM_MAX_PENDING);
		zreq_free(s, r);
		return ZSYSTEMERROR;
	}
	r->xid = cl->xid_next++;
	r->release = op == EL_OP_RELEASE;
	if (op != EL_OP_SYNC) {
		p->last_req_at = s->now;
		p->last_req_op = op;
	} else
		check_idle_sync(s, p);
	pd = &cl->pend[cl->npend++];
	memset(pd, 0, sizeof(*pd));
	pd->xid = r->xid;
	pd->op = op;
	pd->issued = s->now;
	pd->qzxid = -1;
	for (i = 0; i < r->nmop; i++)
		if (strcmp(r->mop[i].path, SIM_CRUMB) == 0)
			pd->crumb = 1;
	pd->kind = r->kind;
	pd->watch = r->watch;
	sim_copy(pd->path, sizeof(pd->path), r->path);
	if (cl->state == CL_CONNECTED && cl->conn != -1 && !cl->handshake)
		client_send(s, p, r);
	else
		pd->unsent = r;
	return ZOK;
}

static void
client_watch_add(struct client *cl, enum wkind kind, const char *path)
{
	int i;

	for (i = 0; i < cl->nw; i++)
		if (cl->w[i].kind == kind && strcmp(cl->w[i].path, path) == 0)
			return;
	if (cl->nw == cl->capw) {
		cl->capw = cl->capw ? cl->capw * 2 : 8;
		cl->w = xreallocarray(cl->w, (size_t)cl->capw, sizeof(*cl->w));
	}
	cl->w[cl->nw].kind = kind;
	sim_copy(cl->w[cl->nw].path, sizeof(cl->w[cl->nw].path), path);
	cl->nw++;
}

/*
 * The requests of a gone connection: taken at once (the library's
 * cleanup_bufs()), completed with rc after the session event is delivered,
 * in the order they were sent. What the daemon asks meanwhile waits for
 * the next connection, as it does in libzookeeper.
 */
static int
client_take_pending(struct client *cl, struct cpending *copy)
{
	int n = cl->npend;

	memcpy(copy, cl->pend, (size_t)n * sizeof(*copy));
	cl->npend = 0;
	return n;
}

static void
client_fail(struct sim *s, struct peer *p, struct cpending *copy, int n,
    int gen, int rc)
{
	struct zreply rep;
	int i;

	for (i = 0; i < n; i++) {
		zreq_free(s, copy[i].unsent);
		if (p->cl.gen != gen || !p->running)
			continue;	/* the daemon replaced the handle */
		memset(&rep, 0, sizeof(rep));
		rep.rc = rc;
		s->st.losses++;
		check_ack_lost(s, p, &copy[i]);
		peer_reply(s, p, copy[i].op, &rep);
	}
}

static void
client_connected(struct sim *s, struct peer *p, const struct msg *m)
{
	struct client *cl = &p->cl;
	int i;

	cl->handshake = 0;
	cl->state = CL_CONNECTED;
	cl->connected_at = s->now;
	cl->sid = m->sid;
	cl->timeout = m->timeout;
	cl->attempts = 0;
	cl->last_send = s->now;
	client_push(s, p, s->now + cl->timeout / 3, EV_CL_PING, cl->conn);
	client_push(s, p, s->now + cl->timeout * 2 / 3, EV_CL_RECV, cl->conn);
	/*
	 * What was asked while it connected goes first, in order: the
	 * library's queue is one, and what the daemon asks once told of the
	 * connection comes after (a stalled loop may have asked, believing
	 * an older connection was up).
	 */
	for (i = 0; i < cl->npend; i++)
		if (cl->pend[i].unsent != NULL && cl->conn != -1) {
			client_send(s, p, cl->pend[i].unsent);
			cl->pend[i].unsent = NULL;
		}
	peer_session(s, p, EL_ZK_CONNECTED);
}

static void
client_reply(struct sim *s, struct peer *p, const struct msg *m)
{
	struct client *cl = &p->cl;
	struct cpending pd;
	int i;

	for (i = 0; i < cl->npend; i++)
		if (cl->pend[i].xid == m->xid)
			break;
	if (i == cl->npend)
		return;
	pd = cl->pend[i];
	memmove(&cl->pend[i], &cl->pend[i + 1],
	    (size_t)(cl->npend - i - 1) * sizeof(cl->pend[0]));
	cl->npend--;
	if (pd.watch) {
		if (pd.kind == ZR_CHILDREN) {
			if (m->rep.rc == ZOK)
				client_watch_add(cl, W_CHILD, pd.path);
		} else if (pd.kind == ZR_EXISTS)
			client_watch_add(cl, m->rep.rc == ZOK ? W_DATA :
			    W_EXIST, pd.path);
		else if (m->rep.rc == ZOK)
			client_watch_add(cl, W_DATA, pd.path);
	}
	check_release_reply(s, p, &pd, m->rep.rc);
	check_release_refused(s, p, pd.op, m->rep.rc);
	check_ops_marks(s, p, pd.op, &m->rep);
	peer_reply_pd(s, p, &pd, &m->rep, cl->conn);
}

static void
client_watch_fired(struct sim *s, struct peer *p, const struct msg *m)
{
	struct client *cl = &p->cl;
	enum wkind kind = m->wev == WE_CREATED ? W_EXIST : m->wev ==
	    WE_CHILD ? W_CHILD : W_DATA;
	int i, k = 0;

	check_hand_notified(s, p, m->zxid);
	/* A deletion ends the data and the child watches of the node. */
	for (i = 0; i < cl->nw; i++)
		if (!((cl->w[i].kind == kind || (m->wev == WE_DELETED &&
		    cl->w[i].kind == W_CHILD)) &&
		    strcmp(cl->w[i].path, m->path) == 0))
			cl->w[k++] = cl->w[i];
	cl->nw = k;
	peer_watch(s, p, m->wev, m->path);
}

void
client_receive(struct sim *s, struct peer *p, struct conn *c, struct msg *m)
{
	struct client *cl = &p->cl;
	struct cpending copy[SIM_MAX_PENDING];
	int n, gen = cl->gen;

	if (c->id != cl->conn || !c->c_open)
		return;
	cl->last_recv = s->now;
	if (m->zxid > cl->last_zxid)
		cl->last_zxid = m->zxid;
	if (m->type == M_REPLY && m->rep.zxid > cl->last_zxid)
		cl->last_zxid = m->rep.zxid;
	switch (m->type) {
	case M_CONNECTED:
		client_connected(s, p, m);
		break;
	case M_EXPIRED:
		client_hangup(s, p);
		cl->state = CL_EXPIRED;
		trace(s, p->idx, "zk: session %016llx expired",
		    (unsigned long long)cl->sid);
		n = client_take_pending(cl, copy);
		peer_session(s, p, EL_ZK_EXPIRED);
		client_fail(s, p, copy, n, gen, ZSESSIONEXPIRED);
		break;
	case M_AUTH_FAILED:
		client_hangup(s, p);
		cl->state = CL_EXPIRED;
		trace(s, p->idx, "zk: authentication failed");
		n = client_take_pending(cl, copy);
		peer_session(s, p, EL_ZK_AUTH_FAILED);
		client_fail(s, p, copy, n, gen, ZAUTHFAILED);
		break;
	case M_HANGUP:
		client_lost(s, p);
		break;
	case M_REPLY:
		client_reply(s, p, m);
		break;
	case M_WATCH:
		client_watch_fired(s, p, m);
		break;
	default:
		break;
	}
}

static void
client_retry(struct sim *s, struct peer *p)
{
	int64_t delay = rng_between(&s->rng, 0, 50);

	/* Having gone round the whole list, libzookeeper waits a little. */
	if (p->cl.attempts > 0 && p->cl.attempts % SIM_SERVERS == 0)
		delay += rng_between(&s->rng, 100, 1000);
	client_push(s, p, s->now + delay, EV_CL_CONNECT, 0);
}

static void
client_lost(struct sim *s, struct peer *p)
{
	struct client *cl = &p->cl;
	struct cpending copy[SIM_MAX_PENDING];
	int n, gen = cl->gen, was = cl->state;

	cl->state = CL_CONNECTING;
	client_hangup(s, p);
	n = client_take_pending(cl, copy);
	if (was == CL_CONNECTED) {
		trace(s, p->idx, "zk: connection lost");
		peer_session(s, p, EL_ZK_CONNECTING);
	}
	client_fail(s, p, copy, n, gen, ZCONNECTIONLOSS);
	if (cl->gen != gen || cl->state != CL_CONNECTING)
		return;
	client_retry(s, p);
}

void
client_blip(struct sim *s, struct peer *p)
{
	struct conn *c = conn_get(s, p->cl.conn);

	if (c == NULL || !c->c_open)
		return;
	trace(s, p->idx, "fault: connection to server %d reset", c->server);
	/* Both ends see the reset; the server hears after a latency. */
	client_lost(s, p);
}

static void
client_connect(struct sim *s, struct peer *p)
{
	struct client *cl = &p->cl;
	struct conn *c;
	struct msg *m;

	if (cl->state != CL_CONNECTING || cl->conn != -1)
		return;
	c = conn_new(s, p->idx, cl->gen, cl->next_server);
	cl->next_server = (cl->next_server + 1) % SIM_SERVERS;
	cl->attempts++;
	cl->conn = c->id;
	cl->handshake = 1;
	m = conn_msg_new(s, M_CONNECT);
	m->sid = cl->sid;
	m->zxid = cl->last_zxid;
	m->timeout = cl->timeout;
	if (cl->nw > 0) {
		m->nwatch = cl->nw;
		m->watches = xreallocarray(NULL, (size_t)cl->nw,
		    sizeof(*cl->w));
		memcpy(m->watches, cl->w, (size_t)cl->nw * sizeof(*cl->w));
	}
	cl->last_send = s->now;
	cl->last_recv = s->now;
	trace(s, p->idx, "zk: connecting to server %d (conn %d)", c->server,
	    c->id);
	conn_send_c2s(s, c, m);
	/* The Java client's connect timeout: T / number of hosts. */
	client_push(s, p, s->now + cl->timeout / SIM_SERVERS, EV_CL_CONNTMO,
	    c->id);
}

void
client_timer(struct sim *s, struct peer *p, const struct ev *ev)
{
	struct client *cl = &p->cl;
	struct conn *c;

	if (ev->b != cl->gen)
		return;
	switch (ev->type) {
	case EV_CL_CONNECT:
		client_connect(s, p);
		break;
	case EV_CL_CONNTMO:
		if (cl->conn == ev->a && cl->handshake) {
			trace(s, p->idx, "zk: connection attempt timed out");
			client_lost(s, p);
		}
		break;
	case EV_CL_PING:
		if (cl->conn != ev->a || cl->state != CL_CONNECTED)
			break;
		if (s->now - cl->last_send >= cl->timeout / 3) {
			c = conn_get(s, cl->conn);
			cl->last_send = s->now;
			conn_send_c2s(s, c, conn_msg_new(s, M_PING));
		}
		client_push(s, p, cl->last_send + cl->timeout / 3, EV_CL_PING,
		    cl->conn);
		break;
	case EV_CL_RECV:
		if (cl->conn != ev->a || cl->state != CL_CONNECTED)
			break;
		if (s->now - cl->last_recv >= cl->timeout * 2 / 3) {
			trace(s, p->idx, "zk: nothing heard for %lld ms",
			    (long long)(s->now - cl->last_recv));
			client_lost(s, p);
			break;
		}
		client_push(s, p, cl->last_recv + cl->timeout * 2 / 3,
		    EV_CL_RECV, cl->conn);
		break;
	default:
		break;
	}
}
