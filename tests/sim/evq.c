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
	q->free = -1;
}

void
evq_free(struct evq *q)
{
	free(q->heap);
	free(q->pool);
	memset(q, 0, sizeof(*q));
	q->free = -1;
}

static int
evq_before(const struct evq_key *a, const struct evq_key *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return a->seq < b->seq;
}

/*
 * The heap and the pool grow together: at most cap events wait, so a
 * full heap means no free slot, and the new slots are n..cap-1.
 */
static int
evq_slot(struct evq *q)
{
	int i;

	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 256;
		q->heap = xreallocarray(q->heap, (size_t)q->cap,
		    sizeof(*q->heap));
		q->pool = xreallocarray(q->pool, (size_t)q->cap,
		    sizeof(*q->pool));
		for (i = q->cap - 1; i >= q->n; i--) {
			q->pool[i].a = q->free;
			q->free = i;
		}
	}
	i = q->free;
	q->free = q->pool[i].a;
	return i;
}

/*
 * Both sift with a hole: the key moved is written once, where it lands,
 * and the others move up or down by one copy each.
 */
void
evq_push(struct evq *q, const struct ev *ev)
{
	struct evq_key k;
	int i, up;

	k.slot = evq_slot(q);
	k.t = ev->t;
	k.seq = q->seq++;
	q->pool[k.slot] = *ev;
	q->pool[k.slot].seq = k.seq;
	for (i = q->n++; i > 0; i = up) {
		up = (i - 1) / 2;
		if (!evq_before(&k, &q->heap[up]))
			break;
		q->heap[i] = q->heap[up];
	}
	q->heap[i] = k;
}

int
evq_pop(struct evq *q, struct ev *out)
{
	struct evq_key *last;
	int i = 0, c, n, slot;

	if (q->n == 0)
		return 0;
	slot = q->heap[0].slot;
	*out = q->pool[slot];
	q->pool[slot].a = q->free;
	q->free = slot;
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
