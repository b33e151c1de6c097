/*
 * Preferred leaders, the leader's side (election.priority,
 * election.preempt_delay): while it leads, and preempt_delay is not never,
 * the leader asks for the queue (EL_ACT_QUEUE) every preempt_delay/4
 * (within 0.5 s and 5 s). The first candidate in queue order of the
 * highest priority above its own, seen with the same node (so present and
 * healthy: a paused or unhealthy candidate has no node, and a node that
 * rejoins is a new one) for preempt_delay, gets the leadership by a
 * switchover (election_switchover(), demote reason preempted). A flapping
 * candidate starts its wait again each time, so leadership never moves
 * faster than preempt_delay; one handover at a time; equal priorities
 * keep the queue order. The daemon only reads the queue and logs.
 */
#include <stdint.h>
#include <string.h>

#include "election_int.h"

static int64_t
el_preempt_period(const struct election *el)
{
	int64_t ms = el->preempt_ms / 4;

	return ms < 500 ? 500 : ms > 5000 ? 5000 : ms;
}

void
el_preempt_forget(struct election *el)
{
	el_replace(&el->pre_node, NULL);
	el_replace(&el->pre_id, NULL);
	el->pre_since = 0;
	el->pre_prio = 0;
	el->pre_told = 0;
	el->pre_go = 0;
}

/* Whether this leader looks at the queue: nothing else under way. */
static int
el_preempt_on(const struct election *el)
{
	return el->preempt_ms >= 0 && election_role(el) == ROLE_LEADER &&
	    !el->resigning && !el->release_pending && el->sw_phase == 0;
}

int64_t
el_preempt_deadline(const struct election *el)
{
	if (!el_preempt_on(el) || el->pre_reading ||
	    el->zk != EL_ZK_CONNECTED)
		return INT64_MAX;
	return el->pre_due;
}

static void
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

/* 1 with an action: a look at the queue, or what came of the last. */
int
el_next_preempt(struct election *el, struct el_action *act)
{
	const char *why;

	if (!el_preempt_on(el)) {
		el_preempt_forget(el);
		el->pre_due = 0;
		return 0;
	}
	if (el->pre_go) {
		/*
		 * What the action points to goes at the next call. Why an
		 * operator's switchover was given up, if it was in this very
		 * step, is still to be told (election_switchover_failed()).
		 */
		el->pre_go = 0;
		why = el->sw_failed;
		if (election_switchover(el, el->pre_node, "preempted") == 0) {
			el->sw_failed = why;
			el_preempt_act(el, act, EL_ACT_PREEMPT);
			return 1;
		}
		el_preempt_forget(el);
		return 0;
	}
	if (el->pre_node != NULL && !el->pre_told) {
		el->pre_told = 1;
		el_preempt_act(el, act, EL_ACT_OUTRANKED);
		return 1;
	}
	if (el->pre_reading || el->zk != EL_ZK_CONNECTED ||
	    el->now < el->pre_due)
		return 0;
	el->pre_due = el->now + el_preempt_period(el);
	el->pre_reading = 1;
	act->type = EL_ACT_QUEUE;
	act->path = el->cand_dir;
	return 1;
}

void
election_queue(struct election *el, const struct el_queue *q)
{
	char id[256];
	int64_t floor = el->priority;
	int i;

	if (!el->pre_reading)
		return;
	el->pre_reading = 0;
	if (q == NULL)
		return;		/* looked at again at the next period */
	if (!el_preempt_on(el) || el->node == NULL) {
		el_preempt_forget(el);
		return;
	}
	if (EL_MUTANT(41))
		floor = -CANDIDATE_PRIORITY_MAX - 1;
	i = candidate_outranking(q->n, q->names, q->datas, floor, el->node,
	    NULL);
	if (i < 0) {
		el_preempt_forget(el);
		return;
	}
	if (el->pre_node == NULL || strcmp(el->pre_node, q->names[i]) != 0) {
		el_preempt_forget(el);
		el_replace(&el->pre_node, q->names[i]);
		el->pre_since = el->now;
	}
	/* Its data as now read (a reload may have changed it). */
	candidate_kv(q->datas[i], "id", id, sizeof(id));
	el_replace(&el->pre_id, id);
	el->pre_prio = candidate_priority(q->datas[i]);
	if (el->pre_since == el->now)
		return;
	if (el->now - el->pre_since >= el->preempt_ms)
		el->pre_go = 1;
}
