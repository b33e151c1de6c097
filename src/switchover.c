/*
 * switchover ID on the control socket: the leader hands over to the
 * candidate whose election.id is ID. Its node is found as members finds
 * them (a listing and each node's data); the election core then deletes
 * the nodes between ours and the target's and hands over (election.c,
 * el_next_switchover). The client is answered "ok" once this daemon sees
 * ID lead, or "error REASON": not-leader, no-such-candidate (ID is not in
 * the queue: unknown, paused or unhealthy), already-leader, outranked
 * (another queued candidate, not ours, has a higher priority: the target
 * would yield to it at the head), switchover-in-progress, target-gone,
 * leadership-lost, not-allowed, or timeout (the promote hook's timeout and two session timeouts). Whatever
 * happens, the queue order decides who leads next, as after a resign.
 * A preemption (the core's, below) is followed the same way, with no
 * client; an operator's switchover meets it with switchover-in-progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "candidate.h"
#include "ctl.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/* The operator's switchover, looked up or under way, is answered. */
static void
switchover_answer(struct daemon *d, const char *answer)
{
	if (d->sw_client != 0)
		(void)ctl_reply(d->ctl, d->sw_client, answer);
	d->sw_client = 0;
}

/*
 * The switchover under way ends: its operator, if any, is answered, and
 * whatever the core still had to say of it is taken.
 */
static void
switchover_end(struct daemon *d, const char *answer)
{
	(void)election_switchover_failed(d->el);
	if (!d->sw_preempt)
		switchover_answer(d, answer);
	d->sw_preempt = 0;
	free(d->sw_target);
	d->sw_target = NULL;
	if (d->ev_sw != NULL)
		(void)evtimer_del(d->ev_sw);
}

static void
switchover_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	log_warnx("switchover to %s: not leading in time; the queue order "
	    "decides", d->sw_target != NULL ? d->sw_target : "?");
	election_switchover_cancel(d->el);
	switchover_end(d, "error timeout");
	engine_step(d);
}

int
switchover_start(struct daemon *d, uint64_t client, const char *id)
{
	const char *err = NULL;

	if (!id_valid(id))
		err = "error bad-id";
	else if (d->sw_client != 0 || d->sw_target != NULL)
		err = "error switchover-in-progress";
	else if (election_role(d->el) != ROLE_LEADER)
		err = "error not-leader";
	else if (strcmp(id, d->cfg.id) == 0)
		err = "error already-leader";
	if (err != NULL) {
		(void)ctl_reply(d->ctl, client, err);
		return -1;
	}
	d->sw_client = client;
	return 0;
}

/*
 * The core's switchover to id has begun, the operator's (preempt 0: the
 * client in sw_client is answered when it ends) or the core's own
 * preemption (1): followed until id leads, or for the promote hook's
 * timeout and two session timeouts.
 */
void
switchover_follow(struct daemon *d, const char *id, int preempt)
{
	struct timeval tv;
	const char *why;
	char *text;
	int64_t ms;

	/* An operator's, given up in the step that began this one. */
	if (d->sw_target != NULL && !d->sw_preempt) {
		why = election_switchover_failed(d->el);
		(void)xasprintf(&text, "error %s", why != NULL ? why :
		    "leadership-lost");
		switchover_end(d, text);
		free(text);
	}
	free(d->sw_target);
	d->sw_target = xstrdup(id);
	d->sw_preempt = preempt;
	if (d->ev_sw == NULL &&
	    (d->ev_sw = evtimer_new(d->base, switchover_timeout, d)) == NULL)
		fatalx("evtimer_new");
	ms = d->cfg.hook_timeout_ms + 2 * d->cfg.session_timeout_ms;
	clock_timeval(&tv, ms);
	if (evtimer_add(d->ev_sw, &tv) == -1)
		fatalx("evtimer_add");
}

/* The queue was read (queue_read_start): ID's node, if it is there. */
void
switchover_found(struct daemon *d, uint64_t client, const char *id,
    const struct queue_read *r, const char *why)
{
	struct election_view v;
	char buf[256];
	int i, j;

	if (client != d->sw_client)
		return;
	/* A preemption began while the queue was read: one at a time. */
	if (d->sw_target != NULL) {
		switchover_answer(d, "error switchover-in-progress");
		return;
	}
	if (r == NULL) {
		switchover_answer(d, why);
		return;
	}
	for (i = 0; i < r->n; i++) {
		if (r->datas[i] == NULL)
			continue;
		candidate_kv(r->datas[i], "id", buf, sizeof(buf));
		if (strcmp(buf, id) == 0)
			break;
	}
	if (i == r->n) {
		switchover_answer(d, "error no-such-candidate");
		return;
	}
	/*
	 * A candidate queued with a higher priority would have the target
	 * yield to it at the head: said now rather than after a timeout.
	 * Ours does not count (our marker stays away after the handoff).
	 */
	election_view(d->el, &v);
	if ((j = candidate_outranking(r->n, r->names, r->datas,
	    candidate_priority(r->datas[i]), v.node, r->names[i])) >= 0) {
		candidate_kv(r->datas[j], "id", buf, sizeof(buf));
		log_warnx("control: switchover to %s refused: %s has a "
		    "higher priority", id, buf);
		switchover_answer(d, "error outranked");
		return;
	}
	log_notice("control: switchover to %s (%s) requested", id,
	    r->names[i]);
	if (election_switchover(d->el, r->names[i], "switchover") == -1) {
		switchover_answer(d, "error not-leader");
		return;
	}
	switchover_follow(d, id, 0);
	engine_step(d);
}

void
switchover_check(struct daemon *d, const struct election_view *v)
{
	const char *why;
	char *text;

	if (d->sw_target == NULL)
		return;
	if (strcmp(v->leader_id, d->sw_target) == 0 &&
	    v->role != ROLE_LEADER) {
		log_notice("switchover: %s leads", d->sw_target);
		switchover_end(d, "ok");
		return;
	}
	if ((why = election_switchover_failed(d->el)) != NULL) {
		log_warnx("switchover to %s given up: %s", d->sw_target, why);
		(void)xasprintf(&text, "error %s", why);
		switchover_end(d, text);
		free(text);
	}
}

/*
 * At the exit, while the loop still turns to write the last answers: an
 * operator whose switchover is still under way (its target not leading
 * yet) is told. Later, at switchover_free(), the sockets are closing and
 * the answer would go unwritten.
 */
void
switchover_stop(struct daemon *d)
{
	switchover_end(d, "error shutdown");
	switchover_answer(d, "error shutdown");
}

void
switchover_free(struct daemon *d)
{
	switchover_stop(d);
	if (d->ev_sw != NULL)
		event_free(d->ev_sw);
	d->ev_sw = NULL;
}

/*
 * Preemption, carried out: the election core decides when a leader looks
 * at the queue and whom it hands over to (election_preempt.c). The queue
 * is read here when the core asks (EL_ACT_QUEUE: a listing and each
 * node's data, as members reads them) and given back with
 * election_queue(); what the core decided is logged (EL_ACT_OUTRANKED,
 * EL_ACT_PREEMPT) and the handover followed as any switchover.
 */
static void
switchover_queue_read(struct daemon *d, uint64_t client, const char *arg,
    const struct queue_read *r, const char *why)
{
	struct el_queue q;
	int in_step = d->pre_querying == 2;

	(void)client;
	(void)arg;
	(void)why;
	d->pre_querying = 0;
	engine_clock(d);
	if (r == NULL) {
		/* Looked at again at the next period. */
		election_queue(d->el, NULL);
		if (!in_step)
			engine_arm_deadline(d);
		return;
	}
	q.n = r->n;
	q.names = r->names;
	q.datas = r->datas;
	election_queue(d->el, &q);
	if (!in_step)
		engine_step(d);
}

void
switchover_perform(struct daemon *d, const struct el_action *act)
{
	switch (act->type) {
	case EL_ACT_QUEUE:
		/* A failure answered at once comes back inside this step. */
		d->pre_querying = 2;
		queue_read_start(d, 0, switchover_queue_read, NULL);
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
