/*
 * The "metrics" answer: the Prometheus text exposition format (0.0.4).
 * Every sample carries service and id labels, so that the series of
 * several daemons (one host, one scrape target merging them) never collide.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/* Upper bounds in seconds: a static program's hook, up to the timeouts. */
static const double metrics_bounds[METRICS_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};

static const char *const metrics_zk_states[] = {
	"connecting", "connected", "readonly", "expired",
};

struct metrics_buf {
	struct textbuf t;
	char *labels;		/* service="...",id="..." */
};

void
metrics_hook_time(struct metrics *m, enum hook_kind kind, int64_t duration_ms)
{
	int i;

	for (i = 0; i < METRICS_BUCKETS; i++)
		if ((double)duration_ms / 1000.0 <= metrics_bounds[i])
			break;
	if (i < METRICS_BUCKETS)
		m->hook_buckets[kind][i]++;
	m->hook_seconds[kind] += (double)duration_ms / 1000.0;
}

static void
metrics_family(struct metrics_buf *b, const char *name, const char *type,
    const char *help)
{
	textbuf_printf(&b->t, "# HELP zkelectd_%s %s\n# TYPE zkelectd_%s %s\n",
	    name, help, name, type);
}

/* A sample with only the service and id labels. */
static void
metrics_plain(struct metrics_buf *b, const char *name, const char *value)
{
	textbuf_printf(&b->t, "zkelectd_%s{%s} %s\n", name, b->labels, value);
}

/* A family of one sample. */
static void
metrics_single(struct metrics_buf *b, const char *name, const char *type,
    const char *help, uint64_t v)
{
	char num[32];

	metrics_family(b, name, type, help);
	(void)snprintf(num, sizeof(num), "%" PRIu64, v);
	metrics_plain(b, name, num);
}

/* A sample with one more label, whose value needs no escaping. */
static void
metrics_one(struct metrics_buf *b, const char *name, const char *label,
    const char *lvalue, uint64_t v)
{
	textbuf_printf(&b->t, "zkelectd_%s{%s,%s=\"%s\"} %" PRIu64 "\n", name,
	    b->labels, label, lvalue, v);
}

static void
metrics_hooks(struct metrics_buf *b, const struct metrics *m)
{
	const char *hook;
	uint64_t cum;
	int k, i;

	metrics_family(b, "hook_runs_total", "counter", "Hook runs by hook.");
	for (k = 0; k < HOOK_SLOT_KINDS; k++)
		metrics_one(b, "hook_runs_total", "hook",
		    hook_kind_name((enum hook_kind)k), m->hook_runs[k]);
	metrics_family(b, "hook_failures_total", "counter",
	    "Failed hook runs (non-zero exit, signal or timeout) by hook.");
	for (k = 0; k < HOOK_SLOT_KINDS; k++)
		metrics_one(b, "hook_failures_total", "hook",
		    hook_kind_name((enum hook_kind)k), m->hook_failures[k]);
	metrics_family(b, "hook_duration_seconds", "histogram",
	    "Time spent in hook runs by hook.");
	for (k = 0; k < HOOK_SLOT_KINDS; k++) {
		hook = hook_kind_name((enum hook_kind)k);
		for (i = 0, cum = 0; i < METRICS_BUCKETS; i++) {
			cum += m->hook_buckets[k][i];
			textbuf_printf(&b->t,
			    "zkelectd_hook_duration_seconds_bucket"
			    "{%s,hook=\"%s\",le=\"%g\"} %" PRIu64 "\n",
			    b->labels, hook, metrics_bounds[i], cum);
		}
		textbuf_printf(&b->t, "zkelectd_hook_duration_seconds_bucket"
		    "{%s,hook=\"%s\",le=\"+Inf\"} %" PRIu64 "\n"
		    "zkelectd_hook_duration_seconds_sum{%s,hook=\"%s\"} %.3f\n"
		    "zkelectd_hook_duration_seconds_count{%s,hook=\"%s\"} %"
		    PRIu64 "\n", b->labels, hook, m->hook_runs[k], b->labels,
		    hook, m->hook_seconds[k], b->labels, hook,
		    m->hook_runs[k]);
	}
}

/* What the daemon is: role, leader, session, transitions. */
static void
metrics_state(struct metrics_buf *b, struct daemon *d,
    const struct election_view *v)
{
	static const enum role roles[] = { ROLE_UNKNOWN, ROLE_FOLLOWER,
	    ROLE_PROMOTING, ROLE_LEADER, ROLE_DEMOTING, ROLE_OBSERVER,
	    ROLE_STOPPED };
	const struct history_entry *last = history_last(&d->hist);
	const char *zk = engine_zk_state(d);
	char num[32];
	size_t i;

	metrics_family(b, "role", "gauge",
	    "1 for the role this daemon is in, 0 for the others.");
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		metrics_one(b, "role", "role", election_role_name(roles[i]),
		    v->role == roles[i]);
	metrics_single(b, "is_leader", "gauge",
	    "1 while this daemon is the acknowledged leader.",
	    v->role == ROLE_LEADER);
	metrics_family(b, "epoch", "gauge",
	    "Epoch (fencing token) of the current leader, 0 when none.");
	(void)snprintf(num, sizeof(num), "%lld", (long long)v->leader_epoch);
	metrics_plain(b, "epoch", num);
	metrics_single(b, "candidates", "gauge",
	    "Candidates in the queue at the last listing.",
	    (uint64_t)v->candidates);
	metrics_single(b, "zookeeper_connected", "gauge",
	    "1 while the ZooKeeper session is connected.",
	    v->zk == EL_ZK_CONNECTED);
	metrics_family(b, "zookeeper_state", "gauge",
	    "ZooKeeper session state: 1 for the current one, 0 for the "
	    "others.");
	for (i = 0; i < sizeof(metrics_zk_states) / sizeof(char *); i++)
		metrics_one(b, "zookeeper_state", "state",
		    metrics_zk_states[i],
		    strcmp(zk, metrics_zk_states[i]) == 0);
	metrics_single(b, "paused", "gauge",
	    "1 while paused by the operator (pause), 0 otherwise.",
	    v->paused != 0);
	metrics_single(b, "healthy", "gauge",
	    "0 while the health check has failed check_fall times, else 1.",
	    v->unhealthy == 0);
	metrics_family(b, "last_transition_timestamp_seconds", "gauge",
	    "Unix time of the last role change, 0 before the first.");
	(void)snprintf(num, sizeof(num), "%.3f", last == NULL ? 0.0 :
	    (double)last->time_ms / 1000.0);
	metrics_plain(b, "last_transition_timestamp_seconds", num);
}

char *
metrics_render(struct daemon *d)
{
	struct metrics_buf b = { { NULL, 0, 0 }, NULL };
	struct election_view v;
	const struct metrics *m = &d->m;
	char *service, *id, *version;
	int k;

	election_view(d->el, &v);
	service = label_escape(d->cfg.service);
	id = label_escape(d->cfg.id);
	version = label_escape(ZKELECTD_VERSION);
	(void)xasprintf(&b.labels, "service=\"%s\",id=\"%s\"", service, id);
	metrics_family(&b, "build_info", "gauge",
	    "Always 1; the version is a label.");
	textbuf_printf(&b.t, "zkelectd_build_info{%s,version=\"%s\"} 1\n",
	    b.labels, version);
	metrics_state(&b, d, &v);
	metrics_single(&b, "leader_changes_total", "counter",
	    "Times this daemon saw a new leader.", m->leader_changes);
	metrics_single(&b, "elections_won_total", "counter",
	    "Times this daemon became the leader.", m->elections_won);
	metrics_single(&b, "priority_yields_total", "counter",
	    "Times this daemon, at the head of the queue, yielded to a "
	    "higher priority.", (uint64_t)v.yields);
	metrics_hooks(&b, m);
	metrics_single(&b, "session_expirations_total", "counter",
	    "ZooKeeper sessions lost to expiry.", m->session_expirations);
	metrics_single(&b, "connection_losses_total", "counter",
	    "ZooKeeper connections lost.", m->connection_losses);
	metrics_single(&b, "socket_requests_total", "counter",
	    "Commands received on the control socket.", m->socket_requests);
	metrics_family(&b, "zookeeper_requests_total", "counter",
	    "Requests sent to ZooKeeper by kind (count: the status's "
	    "candidate count; queue, queue_data: reads of the queue for "
	    "members, switchover and preemption).");
	for (k = 0; k < EL_OP_COUNT; k++)
		metrics_one(&b, "zookeeper_requests_total", "op",
		    k == EL_OP_NONE ? "count" :
		    election_op_name((enum el_op)k), m->zk_requests[k]);
	metrics_one(&b, "zookeeper_requests_total", "op", "queue",
	    m->zk_queue_lists);
	metrics_one(&b, "zookeeper_requests_total", "op", "queue_data",
	    m->zk_queue_gets);
	free(service);
	free(id);
	free(version);
	free(b.labels);
	return b.t.p;
}
