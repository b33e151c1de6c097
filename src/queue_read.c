/*
 * The queue as read for a command (members, switchover) or for the core's
 * preemption: a listing of E/candidates, then each node's data, the
 * replies picked out of the daemon's by their tags. The reader's fn is
 * told once: the queue, or NULL and the error to answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "xmalloc.h"
#include "zkelectd.h"

struct queue_query {
	struct queue_query *next;
	uint64_t client;
	queue_fn fn;		/* told once: the queue, or why not */
	char *arg;		/* fn's */
	uint64_t list_tag;
	uint64_t first_tag;
	int pending;
	struct queue_read r;
};

static void
queue_read_free(struct queue_query *q)
{
	int i;

	for (i = 0; i < q->r.n; i++) {
		free(q->r.names[i]);
		free(q->r.datas[i]);
	}
	free(q->r.names);
	free(q->r.seqs);
	free(q->r.datas);
	free(q->arg);
	free(q);
}

/* Unlinks q, tells its fn (the queue, or NULL and why) and frees it. */
static void
queue_read_end(struct daemon *d, struct queue_query *q,
    const char *why)
{
	struct queue_query **pp;

	for (pp = &d->queries; *pp != NULL; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	q->fn(d, q->client, q->arg, why == NULL ? &q->r : NULL, why);
	queue_read_free(q);
}

void
queue_read_fail(struct daemon *d, const char *why)
{
	while (d->queries != NULL)
		queue_read_end(d, d->queries, why);
}

static void
queue_read_listed(struct daemon *d, struct queue_query *q,
    const struct zk_event *ev)
{
	struct candidate *c;
	char *path;
	int i, n;

	if (ev->rc != ZOK && ev->rc != ZNONODE) {
		queue_read_end(d, q, "error zookeeper-unavailable");
		return;
	}
	c = xcalloc((size_t)ev->nchildren + 1, sizeof(*c));
	n = candidate_order(ev->children, ev->nchildren, c);
	q->r.n = n;
	q->r.names = xcalloc((size_t)n + 1, sizeof(char *));
	q->r.datas = xcalloc((size_t)n + 1, sizeof(char *));
	q->r.seqs = xcalloc((size_t)n + 1, sizeof(int64_t));
	q->first_tag = d->next_tag + 1;
	d->next_tag += (uint64_t)n;
	for (i = 0; i < n; i++) {
		q->r.names[i] = xstrdup(c[i].name);
		q->r.seqs[i] = c[i].seq;
	}
	free(c);
	q->pending = n;
	for (i = 0; i < n; i++) {
		(void)xasprintf(&path, "%s/candidates/%s", d->epath,
		    q->r.names[i]);
		d->m.zk_queue_gets++;
		if (zk_get(d->zk, path, 0, q->first_tag + (uint64_t)i) != ZOK)
			q->pending--;
		free(path);
	}
	if (q->pending == 0)
		queue_read_end(d, q, NULL);
}

int
queue_read_reply(struct daemon *d, const struct zk_event *ev)
{
	struct queue_query *q;
	int i;

	for (q = d->queries; q != NULL; q = q->next) {
		if (ev->tag == q->list_tag) {
			queue_read_listed(d, q, ev);
			return 1;
		}
		if (q->r.n > 0 && ev->tag >= q->first_tag &&
		    ev->tag < q->first_tag + (uint64_t)q->r.n) {
			i = (int)(ev->tag - q->first_tag);
			if (ev->rc == ZOK && ev->data != NULL)
				q->r.datas[i] = xstrdup(ev->data);
			if (--q->pending == 0)
				queue_read_end(d, q, NULL);
			return 1;
		}
	}
	return 0;
}

void
queue_read_start(struct daemon *d, uint64_t client, queue_fn fn,
    const char *arg)
{
	struct queue_query *q;
	char *path;
	int rc;

	/* Asking a disconnected session would hang until it reconnects. */
	if (!zk_is_open(d->zk) || d->zk_state != ZOO_CONNECTED_STATE) {
		fn(d, client, arg, NULL, "error zookeeper-unavailable");
		return;
	}
	q = xcalloc(1, sizeof(*q));
	q->client = client;
	q->fn = fn;
	q->arg = arg != NULL ? xstrdup(arg) : NULL;
	q->list_tag = engine_tag(d);
	(void)xasprintf(&path, "%s/candidates", d->epath);
	d->m.zk_queue_lists++;
	rc = zk_children(d->zk, path, q->list_tag);
	free(path);
	q->next = d->queries;
	d->queries = q;
	if (rc != ZOK)
		queue_read_end(d, q, "error zookeeper-unavailable");
}
