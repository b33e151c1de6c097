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
	command_members_query(d, 0, NULL, 1);
}

void
preempt_listed(struct daemon *d, int n, char *const *names,
    char *const *datas)
{
	struct election_view v;
	char buf[64], id[256], best_id[256] = "";
	const char *best = NULL;
	int64_t p, top = d->cfg.priority;
	int i;

	d->pre_querying = 0;
	election_view(d->el, &v);
	if (v.role != ROLE_LEADER || d->cfg.preempt_delay_ms < 0 ||
	    d->sw_target != NULL) {
		preempt_forget(d);
		return;
	}
	for (i = 0; i < n; i++) {
		if (datas[i] == NULL || (v.node != NULL &&
		    strcmp(names[i], v.node) == 0))
			continue;
		candidate_kv(datas[i], "priority", buf, sizeof(buf));
		p = strtoll(buf, NULL, 10);
		if (p > top) {
			top = p;
			best = names[i];
			candidate_kv(datas[i], "id", best_id,
			    sizeof(best_id));
		}
	}
	if (best == NULL) {
		preempt_forget(d);
		return;
	}
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
	(void)snprintf(id, sizeof(id), "%s", best_id);
	log_notice("preempted: handing over to %s (priority %lld > %lld)",
	    id, (long long)top, (long long)d->cfg.priority);
	preempt_forget(d);
	if (switchover_begin(d, 0, id, best, "preempted") == -1)
		log_warnx("preemption by %s refused by the election", id);
}

void
preempt_failed(struct daemon *d)
{
	d->pre_querying = 0;
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
