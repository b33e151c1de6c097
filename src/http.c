/*
 * The HTTP endpoint for load balancers and Prometheus: GET and HEAD of
 * /leader, /follower, /role, /status, /metrics and /health, answered from
 * the daemon's state in memory, never after a ZooKeeper round trip.
 * Nothing here changes that state.  It runs on the daemon's one event loop,
 * so every limit is there to keep a slow or hostile client from costing
 * the election anything: headers and bodies are small, and http_conn.c
 * bounds what a connection reads ahead, how long a request and its answer
 * may take and how many connections are open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <zookeeper/zookeeper.h>

#include "http.h"
#include "http_int.h"
#include "log.h"
#include "xmalloc.h"
#include "zkelectd.h"

#define HTTP_MAX_BODY		1024
#define HTTP_BACKLOG		128

#define HTTP_TEXT	"text/plain; charset=utf-8"
#define HTTP_JSON	"application/json"
#define HTTP_METRICS	"text/plain; version=0.0.4; charset=utf-8"

/* One route's answer: a status code and a malloc'd body. */
typedef int (*http_answer)(struct daemon *, char **);

static int
http_leader(struct daemon *d, char **body)
{
	enum role r = election_role(d->el);

	if (r == ROLE_LEADER) {
		*body = xstrdup("leader\n");
		return HTTP_OK;
	}
	(void)xasprintf(body, "not leader: %s\n", election_role_name(r));
	return HTTP_SERVUNAVAIL;
}

static int
http_follower(struct daemon *d, char **body)
{
	struct election_view v;
	const char *why = NULL;

	election_view(d->el, &v);
	if (v.paused)
		why = "paused";
	else if (v.unhealthy)
		why = "unhealthy";
	else if (v.zk != EL_ZK_CONNECTED)
		why = "disconnected";
	else if (v.backoff_until != 0)
		why = "backing off after a failed promote";
	if (v.role == ROLE_FOLLOWER && why == NULL) {
		*body = xstrdup("follower\n");
		return HTTP_OK;
	}
	(void)xasprintf(body, "not follower: %s%s%s%s\n",
	    election_role_name(v.role), why != NULL ? " (" : "",
	    why != NULL ? why : "", why != NULL ? ")" : "");
	return HTTP_SERVUNAVAIL;
}

static int
http_role(struct daemon *d, char **body)
{
	(void)xasprintf(body, "%s\n", election_role_name(election_role(d->el)));
	return HTTP_OK;
}

static int
http_status(struct daemon *d, char **body)
{
	*body = command_status(d, 1);
	return HTTP_OK;
}

static int
http_metrics(struct daemon *d, char **body)
{
	*body = command_metrics(d);
	return HTTP_OK;
}

static int
http_health(struct daemon *d, char **body)
{
	if (d->zk_state == ZOO_CONNECTED_STATE) {
		*body = xstrdup("ok\n");
		return HTTP_OK;
	}
	(void)xasprintf(body, "zookeeper session %s\n", engine_zk_state(d));
	return HTTP_SERVUNAVAIL;
}

static const struct http_route {
	const char *path;
	http_answer answer;
	const char *type;
} http_routes[] = {
	{ "/leader", http_leader, HTTP_TEXT },
	{ "/follower", http_follower, HTTP_TEXT },
	{ "/role", http_role, HTTP_TEXT },
	{ "/status", http_status, HTTP_JSON },
	{ "/metrics", http_metrics, HTTP_METRICS },
	{ "/health", http_health, HTTP_TEXT },
};

static void
http_send(struct evhttp_request *req, int code, const char *reason,
    const char *type, const char *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf;
	char len[32];

	(void)evhttp_add_header(h, "Content-Type", type);
	(void)evhttp_add_header(h, "Cache-Control", "no-store");
	/* evhttp leaves the length out of a HEAD answer: say it. */
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		(void)snprintf(len, sizeof(len), "%zu", strlen(body));
		(void)evhttp_add_header(h, "Content-Length", len);
		evhttp_send_reply(req, code, reason, NULL);
		return;
	}
	if ((buf = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	if (evbuffer_add(buf, body, strlen(body)) == -1)
		fatalx("evbuffer_add");
	evhttp_send_reply(req, code, reason, buf);
	evbuffer_free(buf);
}

static const char *
http_reason(int code)
{
	switch (code) {
	case HTTP_OK:
		return "OK";
	case HTTP_SERVUNAVAIL:
		return "Service Unavailable";
	}
	return "Error";
}

static void
http_request(struct evhttp_request *req, void *arg)
{
	struct daemon *d = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *path = (uri != NULL) ? evhttp_uri_get_path(uri) : NULL;
	char *body;
	size_t i;
	int code;

	http_conn_claim(d->http, req);
	if (path == NULL)
		path = "";
	for (i = 0; i < sizeof(http_routes) / sizeof(http_routes[0]); i++)
		if (strcmp(path, http_routes[i].path) == 0)
			break;
	if (i == sizeof(http_routes) / sizeof(http_routes[0])) {
		http_send(req, HTTP_NOTFOUND, "Not Found", HTTP_TEXT,
		    "not found (try /leader, /follower, /role, /status, "
		    "/metrics or /health)\n");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		(void)evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		http_send(req, 405, "Method Not Allowed", HTTP_TEXT,
		    "method not allowed: this endpoint is read-only\n");
		return;
	}
	/* A leader whose lease is gone must not answer as leader. */
	daemon_check_lease(d);
	code = http_routes[i].answer(d, &body);
	log_debug("http: %s %s: %d", cmd == EVHTTP_REQ_GET ? "GET" : "HEAD",
	    path, code);
	http_send(req, code, http_reason(code), http_routes[i].type, body);
	free(body);
}

/* Listening. */

static int
http_socket(const struct config_listen *l, char *err, size_t errlen)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	struct sockaddr *sa;
	socklen_t salen;
	int fd, on = 1, v6;

	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	v6 = inet_pton(AF_INET, l->host, &sin.sin_addr) != 1;
	if (v6) {
		if (inet_pton(AF_INET6, l->host, &sin6.sin6_addr) != 1) {
			(void)snprintf(err, errlen, "http: %s: bad address",
			    l->name);
			return -1;
		}
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)l->port);
		sa = (struct sockaddr *)&sin6;
		salen = sizeof(sin6);
	} else {
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)l->port);
		sa = (struct sockaddr *)&sin;
		salen = sizeof(sin);
	}
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1)
		goto fail;
	/* [::] means IPv6 alone; IPv4 has its own address (*). */
	if (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
	    sizeof(on)) == -1)
		goto fail;
	if (bind(fd, sa, salen) == -1 || listen(fd, HTTP_BACKLOG) == -1)
		goto fail;
	return fd;
fail:
	(void)snprintf(err, errlen, "http: cannot listen on %s: %s", l->name,
	    strerror(errno));
	if (fd != -1)
		(void)close(fd);
	return -1;
}

int
http_open(struct daemon *d, char *err, size_t errlen)
{
	struct http *h;
	size_t i;
	int fd;

	h = xcalloc(1, sizeof(*h));
	d->http = h;
	if ((h->evh = evhttp_new(d->base)) == NULL)
		fatalx("evhttp_new");
	http_conn_init(h, d->base);
	evhttp_set_timeout(h->evh, HTTP_TIMEOUT_S);
	evhttp_set_max_headers_size(h->evh, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->evh, HTTP_MAX_BODY);
	/* Every method reaches http_request, which answers 405 itself. */
	evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h->evh, http_request, d);
	evhttp_set_bevcb(h->evh, http_conn_new, h);
	h->socks = xcalloc(d->cfg.nhttp_listen, sizeof(*h->socks));
	for (i = 0; i < d->cfg.nhttp_listen; i++) {
		if (i < d->rx_nhttp)
			fd = d->rx_http[i];
		else if ((fd = http_socket(&d->cfg.http_listen[i], err,
		    errlen)) == -1)
			goto fail;
		h->socks[i] = evhttp_accept_socket_with_handle(h->evh, fd);
		if (h->socks[i] == NULL) {
			(void)close(fd);
			(void)snprintf(err, errlen, "http: cannot listen on "
			    "%s", d->cfg.http_listen[i].name);
			goto fail;
		}
		h->nsocks++;
		log_info("http: listening on %s", d->cfg.http_listen[i].name);
	}
	return 0;
fail:
	http_close(d);
	return -1;
}

void
http_accepting(struct daemon *d, int on)
{
	struct http *h = d->http;

	if (h != NULL)
		http_conn_accepting(h, on);
}

int
http_busy(const struct daemon *d)
{
	return d->http != NULL ? d->http->nconns : 0;
}

int
http_listen_fd(const struct daemon *d, size_t i)
{
	if (d->http == NULL || i >= d->http->nsocks)
		return -1;
	return evhttp_bound_socket_get_fd(d->http->socks[i]);
}

void
http_close(struct daemon *d)
{
	struct http *h = d->http;

	if (h == NULL)
		return;
	d->http = NULL;
	/* Let go of every connection before evhttp frees them all. */
	http_conn_release(h);
	evhttp_free(h->evh);
	free(h->socks);
	free(h);
}
