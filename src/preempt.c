/*
 * Preferred leaders (election.priority, election.preempt_delay). Every
 * candidate advertises its priority in its node's data (a priority= line
 * when not 0). While it leads, and preempt_delay is not never, the leader
 * looks at the queue every preempt_delay/4 (within 0.5 s and 5 s): the
 * first candidate in queue order of the highest priority above its own,
 * seen with the same node (so present and healthy: a paused or unhealthy
 * candidate has no node, and a node that rejoins is a new one) for
 * preempt_delay, gets the leadership by a switchover (switchover.c,
 * demote reason preempted). A flapping candidate starts its wait again
 * each time, so leadership never moves faster than preempt_delay; one
 * handover at a time; equal priorities keep the queue order.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

static int64_t
preempt_period(const struct daemon *d)
{
	int64_t ms = d->cfg.preempt_delay_ms / 4;

	return ms < 500 ? 500 : ms > 5000 ? 5000 : ms;
}

static void
preempt_forget(struct daemon *d)
{
	free(d->pre_node);
	d->pre_node = NULL;
	d->pre_since = 0;
}

static void
preempt_tick(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	daemon_arm(d->ev_preempt, preempt_period(d));
	if (d->cfg.preempt_delay_ms < 0 ||
	    election_role(d->el) != ROLE_LEADER) {
		preempt_forget(d);
		return;
	}
	if (d->pre_querying || d->sw_client != 0 || d->sw_target != NULL ||
	    !zk_is_open(d->zk) || d->zk_state != ZOO_CONNECTED_STATE)
		return;
	d->pre_querying = 1;
	command_read_queue(d, 0, preempt_listed, NULL);
}

/* The queue was read (command_read_queue): who outranks us, if anyone. */
void
preempt_listed(struct daemon *d, uint64_t client, const char *arg,
    const struct queue_read *r, const char *why)
{
	struct election_view v;
	char best_id[256];
	const char *best;
	int64_t top;
	int i;

	(void)client;
	(void)arg;
	(void)why;
	d->pre_querying = 0;
	if (r == NULL)
		return;		/* looked at again at the next tick */
	election_view(d->el, &v);
	if (v.role != ROLE_LEADER || d->cfg.preempt_delay_ms < 0 ||
	    d->sw_target != NULL) {
		preempt_forget(d);
		return;
	}
	if ((i = queue_outranking(r, d->cfg.priority, v.node, NULL)) < 0) {
		preempt_forget(d);
		return;
	}
	best = r->names[i];
	top = candidate_priority(r->datas[i]);
	candidate_kv(r->datas[i], "id", best_id, sizeof(best_id));
	if (d->pre_node == NULL || strcmp(d->pre_node, best) != 0) {
		preempt_forget(d);
		d->pre_node = xstrdup(best);
		d->pre_since = now_ms();
		log_info("candidate %s (priority %lld) outranks this leader "
		    "(%lld): it leads after %lld ms unless it goes", best_id,
		    (long long)top, (long long)d->cfg.priority,
		    (long long)d->cfg.preempt_delay_ms);
		return;
	}
	if (now_ms() - d->pre_since < d->cfg.preempt_delay_ms)
		return;
	log_notice("preempted: handing over to %s (priority %lld > %lld)",
	    best_id, (long long)top, (long long)d->cfg.priority);
	preempt_forget(d);
	if (switchover_begin(d, 0, best_id, best, "preempted") == -1)
		log_warnx("preemption by %s refused by the election",
		    best_id);
}

void
preempt_init(struct daemon *d)
{
	if ((d->ev_preempt = evtimer_new(d->base, preempt_tick, d)) == NULL)
		fatalx("evtimer_new");
	daemon_arm(d->ev_preempt, preempt_period(d));
}

void
preempt_free(struct daemon *d)
{
	preempt_forget(d);
	if (d->ev_preempt != NULL)
		event_free(d->ev_preempt);
	d->ev_preempt = NULL;
}
