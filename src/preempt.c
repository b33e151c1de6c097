/*
 * Preferred leaders, carried out: the election core decides when a leader
 * looks at the queue and whom it hands over to (election_preempt.c). This
 * file reads the queue when the core asks (EL_ACT_QUEUE: a listing and
 * each node's data, as members reads them), gives it back with
 * election_queue(), and logs what the core decided (EL_ACT_OUTRANKED,
 * EL_ACT_PREEMPT); the handover is then followed as any switchover
 * (switchover.c).
 */
#include <stdint.h>

#include "log.h"
#include "zkelectd.h"

/* The queue was read (command_read_queue): the core decides. */
static void
preempt_listed(struct daemon *d, uint64_t client, const char *arg,
    const struct queue_read *r, const char *why)
{
	struct el_queue q;
	int in_step = d->pre_querying == 2;

	(void)client;
	(void)arg;
	(void)why;
	d->pre_querying = 0;
	daemon_clock(d);
	if (r == NULL) {
		/* Looked at again at the next period. */
		election_queue(d->el, NULL);
		if (!in_step)
			daemon_arm_deadline(d);
		return;
	}
	q.n = r->n;
	q.names = r->names;
	q.datas = r->datas;
	election_queue(d->el, &q);
	if (!in_step)
		daemon_step(d);
}

void
preempt_perform(struct daemon *d, const struct el_action *act)
{
	switch (act->type) {
	case EL_ACT_QUEUE:
		/* A failure answered at once comes back inside this step. */
		d->pre_querying = 2;
		command_read_queue(d, 0, preempt_listed, NULL);
		if (d->pre_querying == 2)
			d->pre_querying = 1;
		break;
	case EL_ACT_OUTRANKED:
		log_info("candidate %s (priority %lld) outranks this leader "
		    "(%lld): it leads after %lld ms unless it goes", act->data,
		    (long long)act->priority, (long long)d->cfg.priority,
		    (long long)act->ms);
		break;
	case EL_ACT_PREEMPT:
		log_notice("preempted: handing over to %s (priority %lld > "
		    "%lld)", act->data, (long long)act->priority,
		    (long long)d->cfg.priority);
		switchover_follow(d, act->data, 1);
		break;
	default:
		break;
	}
}
