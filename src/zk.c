/*
 * libzookeeper_mt behind a queue. ZooKeeper's I/O and completion threads
 * only copy results into struct zk_event and write to an eventfd; the
 * event loop drains the queue and calls the daemon. Nothing else here is
 * touched by those threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zk.h"

/* How long the library keeps its resolution of the host list. */
#define ZK_RESOLVE_DELAY_MS	30000

/*
 * What the threads may touch: the queue, and the list of requests not
 * completed yet, under its lock.
 */
struct zk_queue {
	pthread_mutex_t lock;
	struct zk_event *head;
	struct zk_event *tail;
	struct zk_req *reqs;
	int efd;
};

/* Context of one handle, for the watcher. */
struct zk_hctx {
	struct zk_queue *q;
	unsigned gen;
};

/* Context of one request. */
struct zk_req {
	struct zk_req *prev, *next;	/* in zk_queue's reqs */
	struct zk_queue *q;
	unsigned gen;
	uint64_t tag;
	int64_t sent_ms;
	zoo_op_result_t *results;
	int nresults;
	struct Stat *set_stat;	/* multi: the last set's, filled by the library */
};

struct zk {
	struct zk_queue q;
	struct event *ev;
	zhandle_t *zh;
	struct zk_hctx *hctx;
	unsigned gen;
	char *auth;
	char *hosts;		/* the list the handle was given */
	struct ACL acl_buf[2];
	struct ACL_vector acl;
	zk_event_fn fn;
	zk_batch_fn batch;
	void *arg;
	int told;		/* the last session state handed to fn */
	int moved;		/* zoo_set_servers() since the last drain */
	/* A server silent this long with a request in flight is left. */
	int64_t stall_ms;	/* 0: never */
	struct event *ev_stall;
	int64_t connected_ms;	/* the last CONNECTED drained (now_ms) */
};

static void
zk_push(struct zk_queue *q, struct zk_event *ev)
{
	uint64_t one = 1;

	if (pthread_mutex_lock(&q->lock) != 0)
		abort();
	if (q->tail != NULL)
		q->tail->next = ev;
	else
		q->head = ev;
	q->tail = ev;
	if (pthread_mutex_unlock(&q->lock) != 0)
		abort();
	/* EAGAIN means the counter is already non-zero: the loop wakes. */
	if (write(q->efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
		abort();
}

static void
zk_event_free(struct zk_event *ev)
{
	int i;

	for (i = 0; i < ev->nchildren; i++)
		free(ev->children[i]);
	free(ev->children);
	free(ev->path);
	free(ev->data);
	free(ev);
}

static void
zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	struct zk_hctx *h = ctx;
	struct zk_event *ev;
	const clientid_t *cid;
	int64_t queued_us = log_stamp();

	ev = xcalloc(1, sizeof(*ev));
	ev->queued_us = queued_us;
	ev->gen = h->gen;
	if (type == ZOO_SESSION_EVENT) {
		/* A retrying library's run of lines ends with the state. */
		if (state != ZOO_CONNECTING_STATE &&
		    state != ZOO_ASSOCIATING_STATE)
			log_collapse_flush();
		ev->type = ZK_EV_SESSION;
		ev->state = state;
		if (state == ZOO_CONNECTED_STATE ||
		    state == ZOO_READONLY_STATE) {
			cid = zoo_client_id(zh);
			ev->sid = cid != NULL ? cid->client_id : 0;
			ev->timeout_ms = zoo_recv_timeout(zh);
		}
	} else {
		ev->type = ZK_EV_WATCH;
		ev->wtype = type;
		ev->path = xstrdup(path != NULL ? path : "");
	}
	zk_push(h->q, ev);
}

static struct zk_event *
zk_reply_new(struct zk_req *r, int rc)
{
	struct zk_event *ev;

	ev = xcalloc(1, sizeof(*ev));
	ev->queued_us = log_stamp();
	ev->type = ZK_EV_REPLY;
	ev->gen = r->gen;
	ev->tag = r->tag;
	/*
	 * The library fails what is in flight with ZRUNTIMEINCONSISTENCY when
	 * a reply does not match the oldest request (a move to other hosts
	 * left a reply behind, see zk_set_hosts) and drops the connection: the
	 * request may have been applied or not, which is a connection loss to
	 * the election (a write is looked up again, never taken as refused).
	 */
	ev->rc = rc == ZRUNTIMEINCONSISTENCY ? ZCONNECTIONLOSS : rc;
	ev->sent_ms = r->sent_ms;
	return ev;
}

static void
zk_stat_copy(struct zk_event *ev, const struct Stat *st)
{
	if (st == NULL)
		return;
	ev->has_stat = 1;
	ev->czxid = st->czxid;
	ev->owner = st->ephemeralOwner;
	ev->version = st->version;
	ev->numchildren = st->numChildren;
}

static void
zk_req_free(struct zk_req *r)
{
	struct zk_queue *q = r->q;

	if (pthread_mutex_lock(&q->lock) != 0)
		abort();
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		q->reqs = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	if (pthread_mutex_unlock(&q->lock) != 0)
		abort();
	free(r->results);
	free(r->set_stat);
	free(r);
}

static void
zk_done(struct zk_req *r, struct zk_event *ev)
{
	zk_push(r->q, ev);
	zk_req_free(r);
}

/* A multi's reply: with the version its last set left, when it has one. */
static void
zk_multi_cb(int rc, const void *data)
{
	struct zk_req *r = (struct zk_req *)data;
	struct zk_event *ev = zk_reply_new(r, rc);

	if (rc == ZOK && r->set_stat != NULL) {
		ev->has_set_version = 1;
		ev->set_version = r->set_stat->version;
	}
	zk_done(r, ev);
}

static void
zk_data_cb(int rc, const char *value, int len, const struct Stat *st,
    const void *data)
{
	struct zk_req *r = (struct zk_req *)data;
	struct zk_event *ev = zk_reply_new(r, rc);

	if (rc == ZOK) {
		if (len < 0)
			len = 0;
		ev->data = xmalloc((size_t)len + 1);
		if (len > 0)
			memcpy(ev->data, value, (size_t)len);
		ev->data[len] = '\0';
		zk_stat_copy(ev, st);
	}
	zk_done(r, ev);
}

static void
zk_stat_cb(int rc, const struct Stat *st, const void *data)
{
	struct zk_req *r = (struct zk_req *)data;
	struct zk_event *ev = zk_reply_new(r, rc);

	if (rc == ZOK)
		zk_stat_copy(ev, st);
	zk_done(r, ev);
}

static void
zk_children_cb(int rc, const struct String_vector *sv, const void *data)
{
	struct zk_req *r = (struct zk_req *)data;
	struct zk_event *ev = zk_reply_new(r, rc);
	int i;

	if (rc == ZOK && sv != NULL && sv->count > 0) {
		ev->children = xcalloc((size_t)sv->count, sizeof(char *));
		for (i = 0; i < sv->count; i++)
			ev->children[i] = xstrdup(sv->data[i]);
		ev->nchildren = sv->count;
	}
	zk_done(r, ev);
}

static void
zk_create_cb(int rc, const char *value, const struct Stat *st,
    const void *data)
{
	struct zk_req *r = (struct zk_req *)data;
	struct zk_event *ev = zk_reply_new(r, rc);

	if (rc == ZOK) {
		ev->path = xstrdup(value != NULL ? value : "");
		zk_stat_copy(ev, st);
	}
	zk_done(r, ev);
}

static void
zk_sync_cb(int rc, const char *value, const void *data)
{
	struct zk_req *r = (struct zk_req *)data;

	(void)value;
	zk_done(r, zk_reply_new(r, rc));
}

/*
 * The client library can drop its connection without a word: update_addrs
 * (a move to other hosts by zoo_set_servers, or its own resolution of the
 * list again) closes the socket and sets ZOO_NOTCONNECTED_STATE, with no
 * ZOO_CONNECTING_STATE event; only the next connection's
 * ZOO_CONNECTED_STATE is told, and never when no server of the new list
 * answers. Left so, the daemon would take itself for connected while
 * every request fails at once, and send them again and again. So where
 * the library's own state (zoo_state(), its accessor for any thread) says
 * the connection is gone while the daemon was last told it was up, the
 * daemon is told CONNECTING now, as a real loss would have told it; the
 * next connection's CONNECTED follows as after any blip.
 */
static void
zk_dropped(struct zk *zk, int64_t stamp)
{
	struct zk_event *ev;
	int state;

	if (zk->zh == NULL || (zk->told != ZOO_CONNECTED_STATE &&
	    zk->told != ZOO_READONLY_STATE))
		return;
	state = zoo_state(zk->zh);
	if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE)
		return;
	log_info("zk: the client library dropped its connection without "
	    "telling (a move to other hosts)");
	ev = xcalloc(1, sizeof(*ev));
	ev->queued_us = ev->drained_us = stamp;
	ev->gen = zk->gen;
	ev->type = ZK_EV_SESSION;
	ev->state = ZOO_CONNECTING_STATE;
	zk->told = ev->state;
	zk->fn(ev, zk->arg);
	zk_event_free(ev);
}

static void
zk_drain(evutil_socket_t fd, short what, void *arg)
{
	struct zk *zk = arg;
	struct zk_event *ev, *next;
	int64_t drained_us;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) == -1 && errno != EAGAIN)
		log_warn("zk: eventfd read");
	if (pthread_mutex_lock(&zk->q.lock) != 0)
		abort();
	ev = zk->q.head;
	zk->q.head = zk->q.tail = NULL;
	if (pthread_mutex_unlock(&zk->q.lock) != 0)
		abort();
	/*
	 * Stamped once the list is ours: an event pushed after the wake-up
	 * but before the lock was taken is drained now, after it was queued.
	 */
	drained_us = log_stamp();
	if (zk->batch != NULL)
		zk->batch(1, zk->arg);
	for (; ev != NULL; ev = next) {
		next = ev->next;
		ev->drained_us = drained_us;
		if (ev->gen == zk->gen && zk->zh != NULL) {
			if (ev->type == ZK_EV_REPLY &&
			    ev->rc == ZCONNECTIONLOSS)
				zk_dropped(zk, drained_us);
			if (ev->type == ZK_EV_SESSION) {
				zk->told = ev->state;
				if (ev->state == ZOO_CONNECTED_STATE)
					zk->connected_ms = now_ms();
			}
			zk->fn(ev, zk->arg);
		} else
			log_debug("zk: dropped an event of handle %u", ev->gen);
		zk_event_free(ev);
	}
	if (zk->moved) {
		zk->moved = 0;
		zk_dropped(zk, drained_us);
	}
	if (zk->batch != NULL)
		zk->batch(0, zk->arg);
}

/*
 * The library's lines, from any of its threads: its own time, pid and
 * thread id are dropped (the logger stamps the line), so that the same
 * complaint repeated (a server that is down) collapses into a count.
 */
static void
zk_log(const char *msg)
{
	char text[1024];
	const char *body;
	int prio = LOG_DEBUG;
	size_t len;

	if ((body = strstr(msg, "):ZOO_")) != NULL)
		body += 2;
	else
		body = msg;
	len = strlen(body);
	while (len > 0 && (body[len - 1] == '\n' || body[len - 1] == '\r' ||
	    body[len - 1] == ' '))
		len--;
	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	memcpy(text, body, len);
	text[len] = '\0';
	if (strncmp(text, "ZOO_ERROR", 9) == 0)
		prio = LOG_WARNING;
	else if (strncmp(text, "ZOO_WARN", 8) == 0)
		prio = LOG_INFO;
	log_collapse(prio, "zookeeper", text);
}

void
zk_set_loglevel(int level)
{
	zoo_set_debug_level(level >= LOG_DEBUG ? ZOO_LOG_LEVEL_INFO :
	    ZOO_LOG_LEVEL_WARN);
}

static void
zk_arm(struct event *ev, int64_t ms)
{
	struct timeval tv;

	clock_timeval(&tv, ms < 0 ? 0 : ms);
	if (event_add(ev, &tv) == -1)
		fatalx("zk: event_add");
}

/*
 * The oldest request in flight on this handle: when it went, or, when it
 * went before the connection it waits on began, when that one began; 0
 * when none.
 */
static int64_t
zk_waiting_since(struct zk *zk)
{
	struct zk_req *r;
	int64_t t = 0;

	if (pthread_mutex_lock(&zk->q.lock) != 0)
		abort();
	for (r = zk->q.reqs; r != NULL; r = r->next)
		if (r->gen == zk->gen && (t == 0 || r->sent_ms < t))
			t = r->sent_ms;
	if (pthread_mutex_unlock(&zk->q.lock) != 0)
		abort();
	return t != 0 && t < zk->connected_ms ? zk->connected_ms : t;
}

/*
 * A request has waited stall_ms on a connected server: it is left for the
 * next of the list (zk_sock.c says why and how). Only with another server
 * to go to; again at most every stall_ms.
 */
static void
zk_stall(evutil_socket_t fd, short what, void *arg)
{
	struct zk *zk = arg;
	const char *server;
	int64_t since, now = now_ms();

	(void)fd;
	(void)what;
	if (zk->zh == NULL || zk->stall_ms == 0 ||
	    (since = zk_waiting_since(zk)) == 0)
		return;
	if (now - since < zk->stall_ms) {
		zk_arm(zk->ev_stall, since + zk->stall_ms - now);
		return;
	}
	zk_arm(zk->ev_stall, zk->stall_ms);
	if (zoo_state(zk->zh) != ZOO_CONNECTED_STATE || zk->hosts == NULL ||
	    strchr(zk->hosts, ',') == NULL)
		return;
	server = zoo_get_current_server(zk->zh);
	log_warnx("zookeeper server %s has not answered for %lld ms: leaving "
	    "it for the next server", server, (long long)(now - since));
	if (zk_sock_shutdown(server) == -1)
		log_warnx("zk: no connection to %s found to leave", server);
	/* Not answered before it went: a reply now would be the old one's. */
	zk->connected_ms = now;
}

/* Requests waiting longer than ms on one server leave it (0: never). */
void
zk_set_stall(struct zk *zk, int64_t ms)
{
	zk->stall_ms = ms;
	if (ms == 0)
		(void)evtimer_del(zk->ev_stall);
}

struct zk *
zk_new(struct event_base *base, zk_event_fn fn, void *arg)
{
	struct zk *zk;

	zk = xcalloc(1, sizeof(*zk));
	if (pthread_mutex_init(&zk->q.lock, NULL) != 0)
		fatalx("zk: mutex init");
	if ((zk->q.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1)
		fatal("zk: eventfd");
	zk->ev = event_new(base, zk->q.efd, EV_READ | EV_PERSIST, zk_drain,
	    zk);
	if (zk->ev == NULL || event_add(zk->ev, NULL) == -1)
		fatalx("zk: event_add");
	if ((zk->ev_stall = evtimer_new(base, zk_stall, zk)) == NULL)
		fatalx("zk: evtimer_new");
	zk->fn = fn;
	zk->arg = arg;
	return zk;
}

void
zk_set_batch(struct zk *zk, zk_batch_fn fn)
{
	zk->batch = fn;
}

void
zk_free(struct zk *zk)
{
	struct zk_event *ev, *next;

	if (zk == NULL)
		return;
	zk_close(zk);
	for (ev = zk->q.head; ev != NULL; ev = next) {
		next = ev->next;
		zk_event_free(ev);
	}
	event_free(zk->ev);
	event_free(zk->ev_stall);
	(void)close(zk->q.efd);
	(void)pthread_mutex_destroy(&zk->q.lock);
	free(zk->auth);
	free(zk->hosts);
	free(zk);
}

int
zk_open(struct zk *zk, const char *hosts, int timeout_ms, const char *auth)
{
	return zk_open_session(zk, hosts, timeout_ms, auth, NULL);
}

int
zk_open_session(struct zk *zk, const char *hosts, int timeout_ms,
    const char *auth, const struct zk_session *sess)
{
	struct zk_hctx *h;
	clientid_t cid;
	zhandle_t *zh;
	int rc;

	if (zk->zh != NULL)
		zk_close(zk);
	h = xcalloc(1, sizeof(*h));
	h->q = &zk->q;
	h->gen = ++zk->gen;
	if (sess != NULL) {
		memset(&cid, 0, sizeof(cid));
		cid.client_id = sess->sid;
		memcpy(cid.passwd, sess->passwd, sizeof(cid.passwd));
	}
	zh = zookeeper_init2(hosts, zk_watcher, timeout_ms,
	    sess != NULL ? &cid : NULL, h, 0, zk_log);
	explicit_bzero(&cid, sizeof(cid));
	if (zh == NULL) {
		free(h);
		return -1;
	}
	/*
	 * By default the library resolves the host list again each time it
	 * looks at its socket: a netlink dump and a read of /dev/urandom
	 * before every request and reply, on the failover's critical path.
	 * Once in 30 s still follows DNS changes (and a lost connection
	 * resolves at once).
	 */
	if (zoo_set_servers_resolution_delay(zh, ZK_RESOLVE_DELAY_MS) != ZOK)
		log_warnx("zk: cannot set the host resolution delay");
	zk->zh = zh;
	zk->hctx = h;
	free(zk->hosts);
	zk->hosts = xstrdup(hosts);
	free(zk->auth);
	zk->auth = NULL;
	if (auth != NULL) {
		zk->auth = xstrdup(auth);
		rc = zoo_add_auth(zh, "digest", zk->auth,
		    (int)strlen(zk->auth), NULL, NULL);
		if (rc != ZOK)
			log_warnx("zk: add digest auth: %s", zerror(rc));
		/* Creator may do all, the world may read. */
		zk->acl_buf[0].perms = ZOO_PERM_ALL;
		zk->acl_buf[0].id.scheme = (char *)"auth";
		zk->acl_buf[0].id.id = (char *)"";
		zk->acl_buf[1].perms = ZOO_PERM_READ;
		zk->acl_buf[1].id.scheme = (char *)"world";
		zk->acl_buf[1].id.id = (char *)"anyone";
		zk->acl.count = 2;
		zk->acl.data = zk->acl_buf;
	} else
		zk->acl = ZOO_OPEN_ACL_UNSAFE;
	return 0;
}

int
zk_session_get(const struct zk *zk, struct zk_session *sess)
{
	const clientid_t *cid;

	memset(sess, 0, sizeof(*sess));
	if (zk->zh == NULL || (cid = zoo_client_id(zk->zh)) == NULL ||
	    cid->client_id == 0)
		return -1;
	sess->sid = cid->client_id;
	memcpy(sess->passwd, cid->passwd, sizeof(sess->passwd));
	return 0;
}

void
zk_close(struct zk *zk)
{
	int rc;

	if (zk->zh == NULL)
		return;
	/* Completions run from zookeeper_close carry the old generation. */
	zk->gen++;
	rc = zookeeper_close(zk->zh);
	log_collapse_flush();
	if (rc != ZOK)
		log_debug("zk: close: %s", zerror(rc));
	/*
	 * Its threads are joined: a request it did not complete never will
	 * be (the library may queue the completion for a thread that is
	 * gone). Only this thread calls the library, so the close is never
	 * deferred to one of its threads.
	 */
	while (zk->q.reqs != NULL)
		zk_req_free(zk->q.reqs);
	zk->zh = NULL;
	zk->told = 0;
	zk->moved = 0;
	free(zk->hctx);
	zk->hctx = NULL;
}

int
zk_is_open(const struct zk *zk)
{
	return zk->zh != NULL;
}

/*
 * After zoo_set_servers(), which may have dropped the connection
 * (update_addrs, in this thread): looked at by the next drain, after the
 * events queued before it (zk_dropped()).
 */
static void
zk_moved(struct zk *zk)
{
	uint64_t one = 1;

	zk->moved = 1;
	if (write(zk->q.efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
		abort();
}

const char *
zk_hosts(const struct zk *zk)
{
	return zk->hosts;
}

/*
 * zoo_set_servers resolves the new list at once (in this thread); the
 * client then keeps its session and moves to the new servers, dropping its
 * connection when its server is not in the list (or to even out the load).
 * That drop (update_addrs in the 3.8 client) closes the socket without the
 * usual cleanup: no ZOO_CONNECTING_STATE event comes, only the
 * ZOO_CONNECTED_STATE of the new connection, and a request that was in
 * flight is not failed; its reply never comes, so the first reply on the
 * new connection does not match it and the client drops that connection
 * too, failing what was in flight with ZRUNTIMEINCONSISTENCY, which
 * zk_reply_new() turns into the connection loss it is.
 * When the list does not resolve it keeps its addresses but has already
 * taken the new text, which it would resolve again later: the old text is
 * put back. Without a live handle there is nothing to move: the next
 * zk_open takes the list.
 */
int
zk_set_hosts(struct zk *zk, const char *hosts)
{
	int rc, saved;

	if (zk->zh == NULL) {
		free(zk->hosts);
		zk->hosts = xstrdup(hosts);
		return ZOK;
	}
	rc = zoo_set_servers(zk->zh, hosts);
	if (rc == ZOK) {
		free(zk->hosts);
		zk->hosts = xstrdup(hosts);
		zk_moved(zk);
		return ZOK;
	}
	saved = errno;
	if (zk->hosts != NULL && zoo_set_servers(zk->zh, zk->hosts) != ZOK)
		log_warnx("zk: cannot restore the host list %s", zk->hosts);
	errno = saved;
	return rc;
}

static struct zk_req *
zk_req_new(struct zk *zk, uint64_t tag)
{
	struct zk_req *r;

	r = xcalloc(1, sizeof(*r));
	r->q = &zk->q;
	r->gen = zk->gen;
	r->tag = tag;
	r->sent_ms = now_ms();
	if (zk->stall_ms != 0 && !evtimer_pending(zk->ev_stall, NULL))
		zk_arm(zk->ev_stall, zk->stall_ms);
	if (pthread_mutex_lock(&zk->q.lock) != 0)
		abort();
	r->next = zk->q.reqs;
	if (r->next != NULL)
		r->next->prev = r;
	zk->q.reqs = r;
	if (pthread_mutex_unlock(&zk->q.lock) != 0)
		abort();
	return r;
}

static int
zk_submitted(struct zk_req *r, int rc)
{
	if (rc != ZOK)
		zk_req_free(r);
	return rc;
}

int
zk_get(struct zk *zk, const char *path, int watch, uint64_t tag)
{
	struct zk_req *r;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	r = zk_req_new(zk, tag);
	return zk_submitted(r, zoo_aget(zk->zh, path, watch, zk_data_cb, r));
}

int
zk_exists(struct zk *zk, const char *path, int watch, uint64_t tag)
{
	struct zk_req *r;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	r = zk_req_new(zk, tag);
	return zk_submitted(r, zoo_aexists(zk->zh, path, watch, zk_stat_cb,
	    r));
}

int
zk_sync(struct zk *zk, const char *path, uint64_t tag)
{
	struct zk_req *r;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	r = zk_req_new(zk, tag);
	return zk_submitted(r, zoo_async(zk->zh, path, zk_sync_cb, r));
}

static int
zk_children_as(struct zk *zk, const char *path, int watch, uint64_t tag)
{
	struct zk_req *r;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	r = zk_req_new(zk, tag);
	return zk_submitted(r, zoo_aget_children(zk->zh, path, watch,
	    zk_children_cb, r));
}

int
zk_children(struct zk *zk, const char *path, uint64_t tag)
{
	return zk_children_as(zk, path, 0, tag);
}

int
zk_children_watch(struct zk *zk, const char *path, uint64_t tag)
{
	return zk_children_as(zk, path, 1, tag);
}

int
zk_create(struct zk *zk, const char *path, const char *data, int flags,
    uint64_t tag)
{
	struct zk_req *r;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	r = zk_req_new(zk, tag);
	return zk_submitted(r, zoo_acreate2(zk->zh, path, data,
	    data != NULL ? (int)strlen(data) : -1, &zk->acl, flags,
	    zk_create_cb, r));
}

/* Whether ops[i] is the last set of the n. */
static int
zk_last_set(const struct zk_mop *ops, int n, int i)
{
	for (i++; i < n; i++)
		if (ops[i].kind == ZK_MOP_SET)
			return 0;
	return 1;
}

int
zk_multi(struct zk *zk, const struct zk_mop *ops, int n, uint64_t tag)
{
	zoo_op_t zops[8];
	struct zk_req *r;
	int i;

	if (zk->zh == NULL)
		return ZINVALIDSTATE;
	if (n <= 0 || n > 8)
		return ZBADARGUMENTS;
	r = zk_req_new(zk, tag);
	r->results = xcalloc((size_t)n, sizeof(*r->results));
	r->nresults = n;
	for (i = 0; i < n; i++) {
		switch (ops[i].kind) {
		case ZK_MOP_CREATE:
		case ZK_MOP_CREATE_EPHEMERAL:
		case ZK_MOP_CREATE_EPHEMERAL_SEQ:
			zoo_create_op_init(&zops[i], ops[i].path, ops[i].data,
			    (int)strlen(ops[i].data), &zk->acl,
			    ops[i].kind == ZK_MOP_CREATE ? 0 :
			    ops[i].kind == ZK_MOP_CREATE_EPHEMERAL ?
			    ZOO_EPHEMERAL : ZOO_EPHEMERAL_SEQUENTIAL, NULL, 0);
			break;
		case ZK_MOP_SET:
			/* Only the last set's Stat is asked for (told back). */
			if (r->set_stat == NULL)
				r->set_stat = xcalloc(1, sizeof(*r->set_stat));
			zoo_set_op_init(&zops[i], ops[i].path, ops[i].data,
			    (int)strlen(ops[i].data), ops[i].version,
			    zk_last_set(ops, n, i) ? r->set_stat : NULL);
			break;
		case ZK_MOP_DELETE:
			zoo_delete_op_init(&zops[i], ops[i].path,
			    ops[i].version);
			break;
		case ZK_MOP_CHECK:
			zoo_check_op_init(&zops[i], ops[i].path,
			    ops[i].version);
			break;
		}
	}
	return zk_submitted(r, zoo_amulti(zk->zh, n, zops, r->results,
	    zk_multi_cb, r));
}

const char *
zk_strerror(int rc)
{
	return zerror(rc);
}

const char *
zk_state_name(int state)
{
	if (state == ZOO_CONNECTED_STATE)
		return "connected";
	if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE)
		return "connecting";
	if (state == ZOO_READONLY_STATE)
		return "readonly";
	if (state == ZOO_EXPIRED_SESSION_STATE)
		return "expired";
	if (state == ZOO_AUTH_FAILED_STATE)
		return "auth-failed";
	return "closed";
}
