/*
 * The election's requests to ZooKeeper: handed to the library in the
 * order the election made them, held back while a batch of ZooKeeper's
 * events is stepped, and answered in turn, as ZooKeeper replies.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "log.h"
#include "xmalloc.h"
#include "zkelectd.h"

/*
 * The election's requests are answered in the order they were sent, as
 * ZooKeeper replies: one that could not be sent gets its error in turn.
 */
void
daemon_el_answer(struct daemon *d, const struct el_result *res)
{
	struct el_result failed;
	enum el_op op;

	for (;;) {
		op = d->el_req[0].op;
		daemon_diagnose(d, op, d->el_req[0].path, res);
		d->el_nreq--;
		memmove(&d->el_req[0], &d->el_req[1], (size_t)d->el_nreq *
		    sizeof(d->el_req[0]));
		election_op_done(d->el, op, res);
		if (d->el_nreq == 0 || d->el_req[0].rc == ZOK)
			return;
		memset(&failed, 0, sizeof(failed));
		failed.rc = d->el_req[0].rc;
		res = &failed;
	}
}

/*
 * A request that could not be sent gets its error in its turn: at once
 * when it is the oldest in flight, else once those before it are answered.
 * One of a session given up since (EL_ACT_RESTART) is forgotten.
 */
static void
daemon_unsent(struct daemon *d, enum el_op op, const char *path,
    uint64_t tag, int rc)
{
	struct el_result res;
	int i;

	log_warnx("zookeeper request on %s: %s", path != NULL ? path :
	    d->epath, zk_strerror(rc));
	memset(&res, 0, sizeof(res));
	res.rc = rc;
	if (op == EL_OP_SYNC) {
		if (d->sync_tag == tag) {
			d->sync_tag = 0;
			election_op_done(d->el, op, &res);
		}
		return;
	}
	for (i = 0; i < d->el_nreq && d->el_req[i].tag != tag; i++)
		;
	if (i == d->el_nreq)
		return;
	if (i == 0)
		daemon_el_answer(d, &res);
	else
		d->el_req[i].rc = rc;
}

/* Hands one request to the library; returns what it said. */
static int
daemon_issue(struct daemon *d, enum el_op op, const char *path,
    const char *data, const struct zk_mop *sub, int nsub, uint64_t tag)
{
	int64_t sending = op == EL_OP_RELEASE ? log_stamp() : 0;
	int rc;

	switch (op) {
	case EL_OP_PARENT:
		rc = zk_create(d->zk, path, "", 0, tag);
		break;
	case EL_OP_CREATE:
		rc = zk_create(d->zk, path, data, ZOO_EPHEMERAL_SEQUENTIAL,
		    tag);
		break;
	case EL_OP_MARK:
		rc = zk_create(d->zk, path, "", ZOO_EPHEMERAL, tag);
		break;
	case EL_OP_LIST:
	case EL_OP_CLAIMS:
		rc = zk_children(d->zk, path, tag);
		break;
	case EL_OP_MARKS:
		rc = zk_children_watch(d->zk, path, tag);
		break;
	case EL_OP_BREADCRUMB:
	case EL_OP_WATCH_PRED:
	case EL_OP_WATCH_OWN:
	case EL_OP_LEADER:
		rc = zk_get(d->zk, path, 1, tag);
		break;
	case EL_OP_LEADER_EXISTS:
	case EL_OP_CRUMB_EXISTS:
	case EL_OP_CLAIM_WATCH:
	case EL_OP_CLAIM_OWN:
	case EL_OP_MARK_OWN:
		rc = zk_exists(d->zk, path, 1, tag);
		break;
	case EL_OP_SYNC:
		rc = zk_sync(d->zk, path, tag);
		break;
	case EL_OP_ACK:
	case EL_OP_CLAIM:
	case EL_OP_RELEASE:
	case EL_OP_SET_DATA:
	case EL_OP_SW_DELETE:
	case EL_OP_UNMARK:
	case EL_OP_UNCLAIM:
		rc = zk_multi(d->zk, sub, nsub, tag);
		break;
	default:
		rc = ZBADARGUMENTS;
		break;
	}
	if (sending != 0)
		trace_release(&d->tr, sending, log_stamp());
	if (rc != ZOK)
		daemon_unsent(d, op, path, tag, rc);
	return rc;
}

static char *
daemon_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static void
daemon_hold(struct daemon *d, const struct el_action *act, uint64_t tag)
{
	struct held_req *h;
	int i;

	if (d->nheld == (int)(sizeof(d->held) / sizeof(d->held[0])))
		fatalx("more held requests than election requests");
	h = &d->held[d->nheld++];
	memset(h, 0, sizeof(*h));
	h->op = act->op;
	h->tag = tag;
	h->path = daemon_dup(act->path);
	h->data = daemon_dup(act->data);
	h->nsub = act->nsub;
	for (i = 0; i < act->nsub; i++) {
		h->sub[i] = act->sub[i];
		h->sub[i].path = h->sub_path[i] = daemon_dup(act->sub[i].path);
		h->sub[i].data = h->sub_data[i] = daemon_dup(act->sub[i].data);
	}
}

static void
daemon_held_free(struct held_req *h)
{
	int i;

	free(h->path);
	free(h->data);
	for (i = 0; i < h->nsub; i++) {
		free(h->sub_path[i]);
		free(h->sub_data[i]);
	}
}

/* The held requests of a session given up: never sent. */
void
daemon_held_drop(struct daemon *d)
{
	int i;

	for (i = 0; i < d->nheld; i++)
		daemon_held_free(&d->held[i]);
	d->nheld = 0;
}

void
daemon_send(struct daemon *d, const struct el_action *act)
{
	uint64_t tag = engine_tag(d);

	d->m.zk_requests[act->op]++;
	if (act->op == EL_OP_SYNC)
		d->sync_tag = tag;
	else {
		if (d->el_nreq == EL_PIPE_MAX)
			fatalx("more election requests than EL_PIPE_MAX");
		d->el_req[d->el_nreq].tag = tag;
		d->el_req[d->el_nreq].op = act->op;
		d->el_req[d->el_nreq].rc = ZOK;
		(void)snprintf(d->el_req[d->el_nreq].path,
		    sizeof(d->el_req[0].path), "%s",
		    act->path != NULL ? act->path : "");
		d->el_nreq++;
	}
	if (d->holding)
		daemon_hold(d, act, tag);
	else
		(void)daemon_issue(d, act->op, act->path, act->data, act->sub,
		    act->nsub, tag);
}

/*
 * A batch of ZooKeeper's events (a release's notifications come
 * together) is stepped with the election's requests held back, and they
 * go out after its last step. So the promote hook that the batch's last
 * notification starts is spawned before the requests of the ones before
 * it, which would wake the library's I/O thread and then the server's,
 * on the successor's CPU, between the notification and the hook. A
 * request held is sent at most one batch later than the election made
 * it: it was timed from then, so what the lease counts from it only
 * starts earlier than it could (see election_time.c).
 */
void
daemon_zk_batch(int begin, void *arg)
{
	struct daemon *d = arg;
	struct held_req *h;
	char ops[160];
	size_t len = 0;
	int i, n, failed = 0;

	if (begin) {
		d->holding = 1;
		return;
	}
	d->holding = 0;
	n = d->nheld;
	d->nheld = 0;
	ops[0] = '\0';
	for (i = 0; i < n; i++) {
		h = &d->held[i];
		if (len < sizeof(ops))
			len += (size_t)snprintf(ops + len, sizeof(ops) - len,
			    "%s%s", i > 0 ? " " : "", election_op_name(h->op));
		if (daemon_issue(d, h->op, h->path, h->data, h->sub, h->nsub,
		    h->tag) != ZOK)
			failed = 1;
		daemon_held_free(h);
	}
	if (n > 0)
		log_debug("sent %d election requests held through a batch of "
		    "events (drained=%lld): %s", n, (long long)d->batch_drained,
		    ops);
	if (failed)
		engine_step(d);
}
