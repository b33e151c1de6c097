/*
 * Preferred leaders, the leader's side (election.priority,
 * election.preempt_delay): while it leads, and preempt_delay is not never,
 * the leader keeps the priority markers E/priority/<sid>_<priority> known
 * (a listing with a child watch, one request whatever the number of
 * candidates, read again when a marker comes or goes and after a
 * reconnect: see el_mark_wanted()), and only while one of them names a
 * priority above its own asks for the queue (EL_ACT_QUEUE) at once and
 * then every preempt_delay/4 (within 0.5 s and 5 s). Below 0 it is
 * outranked by every candidate of priority 0, which has no marker: it
 * reads the queue all the time. The first candidate in queue order of the
 * highest priority above its own, seen with the same node (so present and
 * healthy: a paused or unhealthy candidate has no node, and a node that
 * rejoins is a new one) for preempt_delay, gets the leadership by a
 * switchover (started by election_next.c, demote reason preempted). A
 * flapping candidate starts its wait again each time, so leadership never
 * moves faster than preempt_delay; one handover at a time; equal
 * priorities keep the queue order. The daemon only reads the queue and
 * logs. The markers only spare reads: one that lies or is stale (its
 * session no longer queued) costs the reads of the queue it asks for, and
 * the queue's data, as read, decides; a candidate makes its marker before
 * its node, so none that outranks us is queued unseen.
 *
 * A leaf below the rest of the core: the callers say whether this leader
 * looks at the queue at all (on: el_preempt_on(), election_event.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "election_int.h"
#include "xmalloc.h"

static int64_t
el_preempt_period(const struct election *el)
{
	int64_t ms = el->preempt_ms / 4;

	return ms < 500 ? 500 : ms > 5000 ? 5000 : ms;
}

static void
el_preempt_set(char **dst, const char *src)
{
	free(*dst);
	*dst = src != NULL ? xstrdup(src) : NULL;
}

void
el_preempt_forget(struct election *el)
{
	el_preempt_set(&el->pre_node, NULL);
	el_preempt_set(&el->pre_id, NULL);
	el->pre_since = 0;
	el->pre_prio = 0;
	el->pre_told = 0;
	el->pre_go = 0;
}

/*
 * Whether a marker of another session names a priority above ours: 1 yes
 * (or ours is below 0), 0 no, -1 not known (the markers are to be read
 * on this connection: election_next.c asks for them).
 */
int
el_preempt_outranked(const struct election *el)
{
	int i;

	if (el->priority < 0)
		return 1;
	if ((!el->marks_fresh && !EL_MUTANT(50)) ||
	    el->marks_conn != el->conn_gen)
		return -1;
	for (i = 0; i < el->nmarks; i++)
		if (el->mark_sid[i] != el->sid &&
		    el->mark_prio[i] > el->priority)
			return 1;
	return 0;
}

int64_t
el_preempt_deadline(const struct election *el, int on)
{
	if (!on || el->pre_reading || el->zk != EL_ZK_CONNECTED ||
	    el_preempt_outranked(el) != 1)
		return INT64_MAX;
	return el->pre_due;
}

/* OUTRANKED or PREEMPT: who, at what priority, how long still. */
void
el_preempt_act(struct election *el, struct el_action *act,
    enum el_act_type type)
{
	act->type = type;
	act->path = el->pre_node;
	act->data = el->pre_id;
	act->priority = el->pre_prio;
	act->ms = el->pre_since + el->preempt_ms - el->now;
	if (act->ms < 0)
		act->ms = 0;
}

/*
 * 1 with an action: a look at the queue, or who outranks us. A handover
 * due (pre_go) is election_next.c's to start.
 */
int
el_next_preempt(struct election *el, struct el_action *act, int on)
{
	if (!on) {
		el_preempt_forget(el);
		el->pre_due = 0;
		return 0;
	}
	/* Nobody can outrank us: who did is forgotten, nothing is read. */
	if (EL_MUTANT(157) ? el_preempt_outranked(el) != 1 :
	    el_preempt_outranked(el) == 0)
		el_preempt_forget(el);
	if (el->pre_node != NULL && !el->pre_told) {
		el->pre_told = 1;
		el_preempt_act(el, act, EL_ACT_OUTRANKED);
		return 1;
	}
	if (el->pre_reading || el->zk != EL_ZK_CONNECTED ||
	    el->now < el->pre_due || el_preempt_outranked(el) != 1)
		return 0;
	el->pre_due = el->now + (EL_MUTANT(104) ? 0 : el_preempt_period(el));
	el->pre_reading = 1;
	act->type = EL_ACT_QUEUE;
	act->path = el->cand_dir;
	return 1;
}

/* The queue read for EL_ACT_QUEUE (NULL: it failed). */
void
el_preempt_listed(struct election *el, const struct el_queue *q, int on)
{
	char id[256];
	int64_t floor = el->priority;
	int i;

	if (!el->pre_reading)
		return;
	el->pre_reading = 0;
	if (q == NULL)
		return;		/* looked at again at the next period */
	if (!on || el->node == NULL) {
		el_preempt_forget(el);
		return;
	}
	if (EL_MUTANT(41))
		floor = -CANDIDATE_PRIORITY_MAX - 1;
	i = candidate_outranking(q->n, q->names, q->datas, floor, el->node,
	    NULL);
	if (i < 0) {
		if (!EL_MUTANT(149))
			el_preempt_forget(el);
		return;
	}
	/* Its data as now read (a reload may have changed it). */
	candidate_kv(q->datas[i], "id", id, sizeof(id));
	if (EL_MUTANT(128) ? el->pre_id == NULL || strcmp(el->pre_id, id) != 0 :
	    el->pre_node == NULL || strcmp(el->pre_node, q->names[i]) != 0) {
		el_preempt_forget(el);
		el->pre_since = el->now;
	}
	el_preempt_set(&el->pre_node, q->names[i]);
	el_preempt_set(&el->pre_id, id);
	el->pre_prio = candidate_priority(q->datas[i]);
	if (el->pre_since == el->now)
		return;
	if (el->now - el->pre_since >= el->preempt_ms)
		el->pre_go = 1;
}
