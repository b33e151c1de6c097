/*
 * -X: a hash of everything a run fed the core and everything it gave
 * back, so that a refactor of the core can show it changed no behaviour
 * (tests/sim/trace-hash.sh records and compares the hashes of fixed
 * seeds). FNV-1a 64 over, per daemon and virtual time: each event as the
 * simulated daemon hands it over (session, reply with all its fields,
 * watch, hook's end, operator request, queue read), each action with all
 * its fields, and after every step the deadline and the view.
 */
#include <string.h>

#include "sim.h"

#define TH_OFFSET 0xcbf29ce484222325ULL
#define TH_PRIME 0x100000001b3ULL

void
th_start(struct sim *s, int on)
{
	s->th_on = on;
	s->th_hash = TH_OFFSET;
	s->th_events = 0;
}

static void
th_bytes(struct sim *s, const void *buf, size_t n)
{
	const unsigned char *b = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		s->th_hash ^= b[i];
		s->th_hash *= TH_PRIME;
	}
}

static void
th_int(struct sim *s, int64_t v)
{
	unsigned char b[8];
	int i;

	/* Little-endian whatever the host, so the hashes travel. */
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)v >> (8 * i));
	th_bytes(s, b, sizeof(b));
}

/* NULL and "" hash apart; the NUL ends each string. */
static void
th_str(struct sim *s, const char *str)
{
	if (str == NULL) {
		th_int(s, -1);
		return;
	}
	th_bytes(s, str, strlen(str) + 1);
}

static void
th_head(struct sim *s, const struct peer *p, int what)
{
	th_int(s, what);
	th_int(s, p->idx);
	th_int(s, s->now);
}

void
th_event(struct sim *s, const struct peer *p, int kind, int64_t a,
    int64_t b, const char *str)
{
	if (!s->th_on)
		return;
	s->th_events++;
	th_head(s, p, 'E');
	th_int(s, kind);
	th_int(s, a);
	th_int(s, b);
	th_str(s, str);
}

void
th_result(struct sim *s, const struct peer *p, enum el_op op,
    const struct el_result *res)
{
	int i;

	if (!s->th_on)
		return;
	th_event(s, p, TH_REPLY, op, res->rc, res->path);
	th_str(s, res->data);
	th_int(s, res->czxid);
	th_int(s, res->owner);
	th_int(s, res->version);
	th_int(s, res->nchildren);
	for (i = 0; i < res->nchildren; i++)
		th_str(s, res->children[i]);
}

void
th_queue(struct sim *s, const struct peer *p, const struct el_queue *q)
{
	int i;

	if (!s->th_on)
		return;
	th_event(s, p, TH_QUEUE, q != NULL ? q->n : -1, 0, NULL);
	for (i = 0; q != NULL && i < q->n; i++) {
		th_str(s, q->names[i]);
		th_str(s, q->datas[i]);
	}
}

void
th_action(struct sim *s, const struct peer *p, const struct el_action *act)
{
	int i;

	/* A state change is reported for the log: not hashed, so that the
	 * hashes stay comparable with the core from before it had states. */
	if (!s->th_on || act->type == EL_ACT_TRANSITION)
		return;
	th_head(s, p, 'A');
	th_int(s, act->type);
	th_int(s, act->op);
	th_str(s, act->path);
	th_str(s, act->data);
	th_int(s, act->nsub);
	for (i = 0; i < act->nsub && i < EL_MAX_SUBOPS; i++) {
		th_int(s, act->sub[i].kind);
		th_str(s, act->sub[i].path);
		th_str(s, act->sub[i].data);
		th_int(s, act->sub[i].version);
	}
	th_int(s, act->hook);
	th_str(s, act->reason);
	th_int(s, act->epoch);
	th_int(s, act->priority);
	th_int(s, act->ms);
}

/* After a step: when the core wants waking, and what it says it knows. */
void
th_step(struct sim *s, const struct peer *p)
{
	struct election_view v;
	int64_t f[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	size_t i;

	if (!s->th_on || p->el == NULL)
		return;
	election_view(p->el, &v);
	th_head(s, p, 'S');
	th_int(s, election_deadline(p->el));
	f[0] = v.role;
	f[1] = v.zk;
	f[2] = v.sid;
	f[3] = v.leader_epoch;
	f[4] = v.epoch;
	f[5] = v.position;
	f[6] = v.paused;
	f[7] = v.unhealthy;
	f[8] = v.hook;
	f[9] = v.lease_end;
	f[10] = v.demote_at;
	f[11] = v.backoff_until;
	f[12] = v.resuming;
	f[13] = v.promoted;
	f[14] = v.candidates;
	f[15] = v.leader_untrusted;
	f[16] = v.crumb_epoch;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		th_int(s, f[i]);
	th_str(s, v.leader_id);
	th_str(s, v.leader_data);
	th_str(s, v.node);
	th_str(s, v.data);
	th_str(s, v.crumb_id);
}
