/*
 * The event queue: a heap ordered by time, then by insertion.
 * The second key makes ties deterministic and keeps the messages of one
 * connection direction in the order they were sent (their arrival times
 * never decrease, see conn.c).
 *
 * It is the simulator's busiest structure (every event goes in and out,
 * with some 50 waiting), so both keys are packed in one integer, the
 * time above the insertion count, compared in one instruction, and the
 * heap is 4-ary: half as deep as a binary one, and the four children of
 * a node share a cache line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

#define EVQ_SEQ_BITS	24
#define EVQ_SEQ_MAX	((UINT64_C(1) << EVQ_SEQ_BITS) - 1)
#define EVQ_T_MAX	((INT64_C(1) << (64 - EVQ_SEQ_BITS)) - 1)
#define EVQ_ARITY	4

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

static int
evq_key_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct evq_key *)a)->key;
	uint64_t y = ((const struct evq_key *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * The insertion count ran out of its bits (a run of 16 million events):
 * the waiting events are numbered again from 0 in their order, which a
 * sorted array, itself a heap, gives. (A few hundred wait at most; millions
 * would be a runaway model, and would leave no room to number them.)
 */
static void
evq_renumber(struct evq *q)
{
	int i;

	if ((uint64_t)q->n > EVQ_SEQ_MAX / 2) {
		(void)fprintf(stderr, "sim: %d events waiting\n", q->n);
		abort();
	}
	qsort(q->heap, (size_t)q->n, sizeof(*q->heap), evq_key_cmp);
	for (i = 0; i < q->n; i++)
		q->heap[i].key = (q->heap[i].key & ~EVQ_SEQ_MAX) | (uint64_t)i;
	q->seq = (uint64_t)q->n;
}

/*
 * Both sift with a hole: the key moved is written once, where it lands,
 * and the others move up or down by one copy each.
 */
void
evq_push(struct evq *q, const struct ev *ev)
{
	struct evq_key k;
	int64_t t = ev->t;
	int i, up;

	/*
	 * A time past the field (35 years of virtual milliseconds) can
	 * only fall after the run's EV_END, which ends it: such events are
	 * never taken in order, only drained, so the field's end serves.
	 */
	if (t > EVQ_T_MAX)
		t = EVQ_T_MAX;
	if (q->seq > EVQ_SEQ_MAX)
		evq_renumber(q);
	k.slot = evq_slot(q);
	k.key = (uint64_t)t << EVQ_SEQ_BITS | q->seq++;
	q->pool[k.slot] = *ev;
	for (i = q->n++; i > 0; i = up) {
		up = (i - 1) / EVQ_ARITY;
		if (k.key > q->heap[up].key)
			break;
		q->heap[i] = q->heap[up];
	}
	q->heap[i] = k;
}

/*
 * The least of the children of a node that has some, from c on: three
 * comparisons without a branch when all four are there (most levels).
 */
static int
evq_least(const struct evq_key *h, int c, int n)
{
	int a, b, j;

	if (c + EVQ_ARITY <= n) {
		a = c + (h[c + 1].key < h[c].key);
		b = c + 2 + (h[c + 3].key < h[c + 2].key);
		return h[b].key < h[a].key ? b : a;
	}
	for (j = c + 1; j < n; j++)
		if (h[j].key < h[c].key)
			c = j;
	return c;
}

int
evq_pop(struct evq *q, struct ev *out)
{
	struct evq_key last;
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
	last = q->heap[n];
	for (;;) {
		c = EVQ_ARITY * i + 1;
		if (c >= n)
			break;
		c = evq_least(q->heap, c, n);
		if (q->heap[c].key > last.key)
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = last;
	return 1;
}
