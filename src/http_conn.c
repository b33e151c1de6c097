/*
 * The HTTP endpoint's connections.  libevent 2.1's evhttp has no
 * connection limit, an idle timeout only (reset by every byte), and tells
 * nothing when it drops a connection, so this file keeps its own list,
 * gives each request and each answer a deadline, bounds what a connection
 * reads ahead, and at HTTP_MAX_CONNS makes room for a new connection by
 * closing the one that has gone longest without an answer, so that no
 * crowd of slow or stuck clients can keep a health check out.
 */
#include <sys/queue.h>
#include <sys/time.h>

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "clock.h"
#include "http.h"
#include "http_int.h"
#include "log.h"
#include "xmalloc.h"

/* Bytes read ahead on one connection: two requests of the largest size. */
#define HTTP_MAX_INPUT		(2 * HTTP_MAX_HEADERS)
/* A connection's place, at HTTP_MAX_CONNS, is safe this long at least. */
#define HTTP_GRACE_MS		100
#define HTTP_WARN_EVERY_S	60
#define HTTP_SWEEP_S		1

/*
 * A connection is known from its bufferevent, made here for evhttp; while
 * it has not brought a request, a reference held here keeps that
 * bufferevent from being freed under the list, and a sweep once a second
 * lets go of those evhttp has dropped (it clears their callbacks).  Once a
 * request comes, the connection's close callback takes over.
 *
 * The whole request is due within HTTP_TIMEOUT_S of the accept or of the
 * answer before, its answer written within HTTP_TIMEOUT_S of the request.
 * The list runs from the connection that has gone longest without an
 * answer to the one that had one last.
 */
struct http_conn {
	TAILQ_ENTRY(http_conn) entry;
	struct bufferevent *bev;
	struct evhttp_connection *evcon;	/* NULL until a request */
	struct event *ev_deadline;
	int64_t since;		/* now_ms() of the accept or the last answer */
	struct http *h;
};

static void
http_conn_listeners(struct http *h, int on)
{
	struct evconnlistener *l;
	size_t i;

	if (on && h->held)
		return;
	for (i = 0; i < h->nsocks; i++) {
		l = evhttp_bound_socket_get_listener(h->socks[i]);
		if ((on ? evconnlistener_enable(l) :
		    evconnlistener_disable(l)) == -1)
			log_warnx("http: cannot %s a listener",
			    on ? "enable" : "disable");
	}
	h->full = !on;
}

static void
http_conn_crowded(struct http *h, const char *what)
{
	time_t now = time(NULL);

	if (now - h->warned < HTTP_WARN_EVERY_S)
		return;
	h->warned = now;
	log_warnx("http: %d connections open: %s", h->nconns, what);
}

/*
 * At HTTP_MAX_CONNS a new connection takes the place of the one at the
 * list's head (see http_conn_new), so that slow or stuck clients cannot
 * lock a health check out.  Every connection keeps its place for
 * HTTP_GRACE_MS at least, though: while the head's grace lasts, the
 * listeners rest and the kernel's backlog holds what comes, which bounds
 * what a flood of connections can cost the loop.  After a replacement they
 * also rest until the loop's next turn, when libevent has closed the
 * descriptor of the connection replaced: never more than HTTP_MAX_FDS.
 */
static void
http_conn_room(struct http *h)
{
	struct http_conn *c = TAILQ_FIRST(&h->conns);
	struct timeval tv = { 0, 0 };
	int64_t left;

	if (!h->replaced) {
		left = h->nconns >= HTTP_MAX_CONNS && c != NULL ?
		    c->since + HTTP_GRACE_MS - now_ms() : 0;
		if (left <= 0) {
			if (h->full)
				http_conn_listeners(h, 1);
			return;
		}
		if (!h->full)
			http_conn_crowded(h, "all of them new, accepting more "
			    "in a moment");
		clock_timeval(&tv, left);
	}
	if (!h->full)
		http_conn_listeners(h, 0);
	if (evtimer_add(h->ev_room, &tv) == -1)
		fatalx("evtimer_add");
}

static void
http_conn_room_again(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;

	(void)fd;
	(void)what;
	h->replaced = 0;
	http_conn_room(h);
}

static void
http_conn_forget(struct http *h, struct http_conn *c)
{
	TAILQ_REMOVE(&h->conns, c, entry);
	event_free(c->ev_deadline);
	free(c);
	h->nconns--;
	http_conn_room(h);
}

static void
http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn *c = arg;
	struct http *h = c->h;

	(void)evcon;
	http_conn_forget(h, c);
}

/*
 * Closes c, which evhttp then frees, and forgets it.  Never from inside
 * evhttp's own callbacks on c.
 */
static void
http_conn_drop(struct http *h, struct http_conn *c)
{
	if (c->evcon != NULL) {
		evhttp_connection_set_closecb(c->evcon, NULL, NULL);
		evhttp_connection_free(c->evcon);
	} else {
		/*
		 * Before a request there is no evhttp_connection to free,
		 * but its bufferevent's event callback frees it on a
		 * timeout, as if its peer had gone silent; a bufferevent
		 * that evhttp has freed already has none.
		 */
		bufferevent_trigger_event(c->bev, BEV_EVENT_READING |
		    BEV_EVENT_TIMEOUT, 0);
		(void)bufferevent_decref(c->bev);
	}
	http_conn_forget(h, c);
}

static void
http_conn_arm(struct http_conn *c)
{
	struct timeval tv = { HTTP_TIMEOUT_S, 0 };

	if (evtimer_add(c->ev_deadline, &tv) == -1)
		fatalx("evtimer_add");
}

static void
http_conn_expired(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn *c = arg;

	(void)fd;
	(void)what;
	log_debug("http: closing a connection: a request or its answer took "
	    "over %d s", HTTP_TIMEOUT_S);
	http_conn_drop(c->h, c);
}

/* c's answer is out: the next request's time starts. */
static void
http_conn_answered(struct evhttp_request *req, void *arg)
{
	struct http_conn *c = arg;
	struct http *h = c->h;

	(void)req;
	c->since = now_ms();
	TAILQ_REMOVE(&h->conns, c, entry);
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	http_conn_arm(c);
}

static void
http_conn_sweep_arm(struct http *h)
{
	struct timeval tv = { HTTP_SWEEP_S, 0 };

	if (!evtimer_pending(h->ev_sweep, NULL) &&
	    evtimer_add(h->ev_sweep, &tv) == -1)
		fatalx("evtimer_add");
}

static void
http_conn_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct http *h = arg;
	struct http_conn *c, *next;
	bufferevent_event_cb eventcb;
	int waiting = 0;

	(void)fd;
	(void)what;
	for (c = TAILQ_FIRST(&h->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->evcon != NULL)
			continue;
		bufferevent_getcb(c->bev, NULL, NULL, &eventcb, NULL);
		if (eventcb != NULL) {
			waiting = 1;
			continue;
		}
		(void)bufferevent_decref(c->bev);
		http_conn_forget(h, c);
	}
	if (waiting)
		http_conn_sweep_arm(h);
}

struct bufferevent *
http_conn_new(struct event_base *base, void *arg)
{
	struct http *h = arg;
	struct http_conn *c;

	if (h->nconns >= HTTP_MAX_CONNS) {
		http_conn_crowded(h, "each new one replaces the one longest "
		    "without an answer");
		h->replaced = 1;
		http_conn_drop(h, TAILQ_FIRST(&h->conns));
	}
	c = xcalloc(1, sizeof(*c));
	c->h = h;
	c->since = now_ms();
	if ((c->bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		fatalx("bufferevent_socket_new");
	if ((c->ev_deadline = evtimer_new(base, http_conn_expired, c)) == NULL)
		fatalx("evtimer_new");
	/*
	 * evhttp reads on while an answer waits for a slow reader, queueing
	 * whatever requests come behind it: the high watermark bounds that,
	 * and is above the largest request evhttp accepts, so that no
	 * request ever waits on itself.
	 */
	bufferevent_setwatermark(c->bev, EV_READ, 0, HTTP_MAX_INPUT);
	bufferevent_incref(c->bev);
	http_conn_arm(c);
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	h->nconns++;
	http_conn_sweep_arm(h);
	http_conn_room(h);
	return c->bev;
}

void
http_conn_claim(struct http *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev;
	struct http_conn *c;

	if (evcon == NULL)
		return;
	bev = evhttp_connection_get_bufferevent(evcon);
	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->bev == bev)
			break;
	if (c == NULL)
		return;
	http_conn_arm(c);
	evhttp_request_set_on_complete_cb(req, http_conn_answered, c);
	if (c->evcon != NULL)
		return;
	c->evcon = evcon;
	evhttp_connection_set_closecb(evcon, http_conn_closed, c);
	(void)bufferevent_decref(bev);
}

void
http_conn_init(struct http *h, struct event_base *base)
{
	TAILQ_INIT(&h->conns);
	if ((h->ev_sweep = evtimer_new(base, http_conn_sweep, h)) == NULL ||
	    (h->ev_room = evtimer_new(base, http_conn_room_again, h)) == NULL)
		fatalx("evtimer_new");
}

void
http_conn_accepting(struct http *h, int on)
{
	h->held = !on;
	if (!on)
		http_conn_listeners(h, 0);
	else
		http_conn_room(h);
}

void
http_conn_release(struct http *h)
{
	struct http_conn *c;

	while ((c = TAILQ_FIRST(&h->conns)) != NULL) {
		TAILQ_REMOVE(&h->conns, c, entry);
		if (c->evcon != NULL)
			evhttp_connection_set_closecb(c->evcon, NULL, NULL);
		else
			(void)bufferevent_decref(c->bev);
		event_free(c->ev_deadline);
		free(c);
	}
	h->nconns = 0;
	event_free(h->ev_sweep);
	event_free(h->ev_room);
}
