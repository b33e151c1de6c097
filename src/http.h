/* The read-only HTTP endpoint (control.http_listen), on libevent's evhttp. */
#ifndef ZKELECTD_HTTP_H
#define ZKELECTD_HTTP_H

#include <stddef.h>

struct daemon;

/*
 * HTTP connections served at once; a new one beyond takes the place of
 * the one that has gone longest without an answer.
 */
#define HTTP_MAX_CONNS	64
/* Descriptors they hold at most: one more while one replaces another. */
#define HTTP_MAX_FDS	(HTTP_MAX_CONNS + 1)

/*
 * Listens on every address of d->cfg.http_listen (the first d->rx_nhttp
 * of them on the sockets a re-exec handed over) and answers from d's
 * state on d->base.  Returns 0 (d->http set), or -1 with err naming the
 * address that failed and why.
 */
int http_open(struct daemon *d, char *err, size_t errlen);
/* Stops (0) or starts again (1) accepting, for a re-exec. */
void http_accepting(struct daemon *d, int on);
/* Connections open. */
int http_busy(const struct daemon *d);
/* The i-th listening socket, or -1. */
int http_listen_fd(const struct daemon *d, size_t i);
/* Closes the listeners and every connection; d->http is NULL after. */
void http_close(struct daemon *d);

#endif
