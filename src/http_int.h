/*
 * The HTTP endpoint's state, shared by http.c (the answers and the
 * listening sockets) and http_conn.c (the connections: counted, timed,
 * and at HTTP_MAX_CONNS replaced).
 */
#ifndef ZKELECTD_HTTP_INT_H
#define ZKELECTD_HTTP_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <time.h>

struct bufferevent;
struct event;
struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_request;
struct http_conn;

/* evhttp's idle timeout, and the deadline of a request and of its answer. */
#define HTTP_TIMEOUT_S		5
#define HTTP_MAX_HEADERS	8192

struct http {
	struct evhttp *evh;
	struct evhttp_bound_socket **socks;
	size_t nsocks;
	TAILQ_HEAD(, http_conn) conns;	/* longest without an answer first */
	int nconns;		/* connections open */
	struct event *ev_sweep;
	struct event *ev_room;	/* to see if there is room again */
	int full;		/* listeners disabled */
	int replaced;		/* a connection has made room for another */
	int held;		/* and held so for a re-exec */
	time_t warned;		/* last "too many connections" warning */
};

/* Readies h's list and timers on base. */
void http_conn_init(struct http *h, struct event_base *base);
/* evhttp_set_bevcb()'s callback (arg: the struct http): a connection. */
struct bufferevent *http_conn_new(struct event_base *base, void *arg);
/*
 * req came whole: its connection is known from now on by its close
 * callback, and its answer has HTTP_TIMEOUT_S.
 */
void http_conn_claim(struct http *h, struct evhttp_request *req);
/* Stops (0) or starts again (1) accepting, for a re-exec. */
void http_conn_accepting(struct http *h, int on);
/* Lets go of every connection and the timers, before evhttp_free(). */
void http_conn_release(struct http *h);

#endif
