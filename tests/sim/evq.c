/*
 * The event queue: a binary heap ordered by time, then by insertion.
 * The second key makes ties deterministic and keeps the messages of one
 * connection direction in the order they were sent (their arrival times
 * never decrease, see conn.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

void
evq_init(struct evq *q)
{
	memset(q, 0, sizeof(*q));
}

void
evq_free(struct evq *q)
{
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

static int
evq_before(const struct ev *a, const struct ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return a->seq < b->seq;
}

/*
 * Both sift with a hole: the element moved is written once, where it
 * lands, and the others move up or down by one copy each.
 */
void
evq_push(struct evq *q, const struct ev *ev)
{
	struct ev e = *ev;
	int i, up;

	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 256;
		q->heap = xreallocarray(q->heap, (size_t)q->cap,
		    sizeof(*q->heap));
	}
	e.seq = q->seq++;
	for (i = q->n++; i > 0; i = up) {
		up = (i - 1) / 2;
		if (!evq_before(&e, &q->heap[up]))
			break;
		q->heap[i] = q->heap[up];
	}
	q->heap[i] = e;
}

int
evq_pop(struct evq *q, struct ev *out)
{
	struct ev *last;
	int i = 0, c, n;

	if (q->n == 0)
		return 0;
	*out = q->heap[0];
	n = --q->n;
	if (n == 0)
		return 1;
	last = &q->heap[n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && evq_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!evq_before(&q->heap[c], last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = *last;
	return 1;
}
