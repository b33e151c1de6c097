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

void
evq_push(struct evq *q, const struct ev *ev)
{
	struct ev tmp;
	int i, up;

	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 256;
		q->heap = xreallocarray(q->heap, (size_t)q->cap,
		    sizeof(*q->heap));
	}
	i = q->n++;
	q->heap[i] = *ev;
	q->heap[i].seq = q->seq++;
	while (i > 0) {
		up = (i - 1) / 2;
		if (!evq_before(&q->heap[i], &q->heap[up]))
			break;
		tmp = q->heap[i];
		q->heap[i] = q->heap[up];
		q->heap[up] = tmp;
		i = up;
	}
}

int
evq_pop(struct evq *q, struct ev *out)
{
	struct ev tmp;
	int i = 0, l, r, m;

	if (q->n == 0)
		return 0;
	*out = q->heap[0];
	q->heap[0] = q->heap[--q->n];
	for (;;) {
		l = 2 * i + 1;
		r = l + 1;
		m = i;
		if (l < q->n && evq_before(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->n && evq_before(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		tmp = q->heap[i];
		q->heap[i] = q->heap[m];
		q->heap[m] = tmp;
		i = m;
	}
	return 1;
}
