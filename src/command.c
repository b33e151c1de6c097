/*
 * The control socket's commands. Most answer at once from the daemon's
 * state; members asks ZooKeeper, and resign and pause answer once the
 * election has done what they asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "ctl.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

struct members_query {
	struct members_query *next;
	uint64_t client;
	queue_fn fn;		/* told once: the queue, or why not */
	char *arg;		/* fn's */
	uint64_t list_tag;
	uint64_t first_tag;
	int pending;
	struct queue_read r;
};

/* The watch line without its time: what a change is judged by. */
char *
command_watch_state(struct daemon *d)
{
	struct election_view v;
	char *line;

	election_view(d->el, &v);
	(void)xasprintf(&line, "role=%s leader=%s epoch=%lld",
	    election_role_name(v.role), v.leader_id,
	    (long long)v.leader_epoch);
	return line;
}

char *
command_watch_line(struct daemon *d)
{
	char *state, *line, now[40];

	state = command_watch_state(d);
	rfc3339_ms(wall_ms(), now, sizeof(now));
	(void)xasprintf(&line, "%s time=%s", state, now);
	free(state);
	return line;
}

void
command_wake(struct daemon *d, struct waiter **list, const char *text)
{
	struct waiter *w, *next;

	for (w = *list; w != NULL; w = next) {
		next = w->next;
		(void)ctl_reply(d->ctl, w->client, text);
		free(w);
	}
	*list = NULL;
}

static void
command_wait(struct waiter **list, uint64_t client)
{
	struct waiter *w;

	w = xcalloc(1, sizeof(*w));
	w->client = client;
	w->next = *list;
	*list = w;
}

/* The queue read for a command (members, switchover, preemption). */

static void
command_query_free(struct members_query *q)
{
	int i;

	for (i = 0; i < q->r.n; i++) {
		free(q->r.names[i]);
		free(q->r.datas[i]);
	}
	free(q->r.names);
	free(q->r.seqs);
	free(q->r.datas);
	free(q->arg);
	free(q);
}

/* Unlinks q, tells its fn (the queue, or NULL and why) and frees it. */
static void
command_query_end(struct daemon *d, struct members_query *q,
    const char *why)
{
	struct members_query **pp;

	for (pp = &d->queries; *pp != NULL; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	q->fn(d, q->client, q->arg, why == NULL ? &q->r : NULL, why);
	command_query_free(q);
}

void
command_fail_queries(struct daemon *d, const char *why)
{
	while (d->queries != NULL)
		command_query_end(d, d->queries, why);
}

static void
command_members_listed(struct daemon *d, struct members_query *q,
    const struct zk_event *ev)
{
	struct candidate *c;
	char *path;
	int i, n;

	if (ev->rc != ZOK && ev->rc != ZNONODE) {
		command_query_end(d, q, "error zookeeper-unavailable");
		return;
	}
	c = xcalloc((size_t)ev->nchildren + 1, sizeof(*c));
	n = candidate_order(ev->children, ev->nchildren, c);
	q->r.n = n;
	q->r.names = xcalloc((size_t)n + 1, sizeof(char *));
	q->r.datas = xcalloc((size_t)n + 1, sizeof(char *));
	q->r.seqs = xcalloc((size_t)n + 1, sizeof(int64_t));
	q->first_tag = d->next_tag + 1;
	d->next_tag += (uint64_t)n;
	for (i = 0; i < n; i++) {
		q->r.names[i] = xstrdup(c[i].name);
		q->r.seqs[i] = c[i].seq;
	}
	free(c);
	q->pending = n;
	for (i = 0; i < n; i++) {
		(void)xasprintf(&path, "%s/candidates/%s", d->epath,
		    q->r.names[i]);
		d->m.zk_queue_gets++;
		if (zk_get(d->zk, path, 0, q->first_tag + (uint64_t)i) != ZOK)
			q->pending--;
		free(path);
	}
	if (q->pending == 0)
		command_query_end(d, q, NULL);
}

int
command_reply(struct daemon *d, const struct zk_event *ev)
{
	struct members_query *q;
	int i;

	for (q = d->queries; q != NULL; q = q->next) {
		if (ev->tag == q->list_tag) {
			command_members_listed(d, q, ev);
			return 1;
		}
		if (q->r.n > 0 && ev->tag >= q->first_tag &&
		    ev->tag < q->first_tag + (uint64_t)q->r.n) {
			i = (int)(ev->tag - q->first_tag);
			if (ev->rc == ZOK && ev->data != NULL)
				q->r.datas[i] = xstrdup(ev->data);
			if (--q->pending == 0)
				command_query_end(d, q, NULL);
			return 1;
		}
	}
	return 0;
}

void
command_read_queue(struct daemon *d, uint64_t client, queue_fn fn,
    const char *arg)
{
	struct members_query *q;
	char *path;
	int rc;

	/* Asking a disconnected session would hang until it reconnects. */
	if (!zk_is_open(d->zk) || d->zk_state != ZOO_CONNECTED_STATE) {
		fn(d, client, arg, NULL, "error zookeeper-unavailable");
		return;
	}
	q = xcalloc(1, sizeof(*q));
	q->client = client;
	q->fn = fn;
	q->arg = arg != NULL ? xstrdup(arg) : NULL;
	q->list_tag = daemon_tag(d);
	(void)xasprintf(&path, "%s/candidates", d->epath);
	d->m.zk_queue_lists++;
	rc = zk_children(d->zk, path, q->list_tag);
	free(path);
	q->next = d->queries;
	d->queries = q;
	if (rc != ZOK)
		command_query_end(d, q, "error zookeeper-unavailable");
}

/*
 * members: one line per candidate, seq, id and data; with arg ("members
 * json") one JSON array of objects that add the advertised priority.
 */
static void
command_members_done(struct daemon *d, uint64_t client, const char *arg,
    const struct queue_read *r, const char *why)
{
	struct textbuf b = { NULL, 0, 0 };
	char id[256], data[1024];
	int i, first = 1;

	if (r == NULL) {
		(void)ctl_reply(d->ctl, client, why);
		return;
	}
	textbuf_printf(&b, "%s", arg != NULL ? "[" : "");
	for (i = 0; i < r->n; i++) {
		if (r->datas[i] == NULL)
			continue;	/* gone while we asked */
		candidate_kv(r->datas[i], "id", id, sizeof(id));
		candidate_kv(r->datas[i], "data", data, sizeof(data));
		if (arg == NULL) {
			textbuf_printf(&b, "%lld\t%s\t%s\n",
			    (long long)r->seqs[i], id, data);
			continue;
		}
		textbuf_printf(&b, "%s{", first ? "" : ",");
		first = 0;
		status_json_num(&b, "seq", r->seqs[i], 0);
		status_json_str(&b, "id", id, 1);
		status_json_str(&b, "data", data, 1);
		status_json_num(&b, "priority",
		    candidate_priority(r->datas[i]), 1);
		textbuf_printf(&b, "}");
	}
	if (arg != NULL)
		textbuf_printf(&b, "]\n");
	(void)ctl_reply(d->ctl, client, b.p);
	free(b.p);
}

/* The Prometheus text exposition (metrics.c). */
char *
command_metrics(struct daemon *d)
{
	return metrics_render(d);
}

/* The status lines, or its JSON object: what "status" answers. */
char *
command_status(struct daemon *d, int json)
{
	struct election_view v;
	struct status st;

	daemon_status(d, &st, &v);
	return status_render(&st, json);
}

/* Dispatch. */

static int
command_allowed(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

void
command_handle(struct ctl *ctl, uint64_t client, uid_t uid, const char *line,
    void *arg)
{
	struct daemon *d = arg;
	struct election_view v;
	char *text;

	(void)ctl;
	d->m.socket_requests++;
	/* A leader whose lease is gone must not answer as leader. */
	daemon_check_lease(d);
	if (strcmp(line, "ping") == 0)
		(void)ctl_reply(d->ctl, client, "pong");
	else if (strcmp(line, "version") == 0)
		(void)ctl_reply(d->ctl, client, ZKELECTD_VERSION);
	else if (strcmp(line, "role") == 0)
		(void)ctl_reply(d->ctl, client,
		    election_role_name(election_role(d->el)));
	else if (strcmp(line, "status") == 0 ||
	    strcmp(line, "status json") == 0) {
		text = command_status(d, line[6] != '\0');
		(void)ctl_reply(d->ctl, client, text);
		free(text);
	} else if (strcmp(line, "leader") == 0) {
		election_view(d->el, &v);
		if (v.leader_id[0] == '\0')
			text = xstrdup("id=\ndata=\nepoch=\n");
		else
			(void)xasprintf(&text, "id=%s\ndata=%s\nepoch=%lld\n",
			    v.leader_id, v.leader_data,
			    (long long)v.leader_epoch);
		(void)ctl_reply(d->ctl, client, text);
		free(text);
	} else if (strcmp(line, "members") == 0 ||
	    strcmp(line, "members json") == 0)
		command_read_queue(d, client, command_members_done,
		    line[7] != '\0' ? "json" : NULL);
	else if (strcmp(line, "history") == 0) {
		text = history_render(&d->hist);
		(void)ctl_reply(d->ctl, client, text);
		free(text);
	} else if (strcmp(line, "metrics") == 0) {
		text = command_metrics(d);
		(void)ctl_reply(d->ctl, client, text);
		free(text);
	} else if (strcmp(line, "watch") == 0) {
		text = command_watch_line(d);
		if (ctl_watch(d->ctl, client) == 0)
			(void)ctl_send(d->ctl, client, text);
		free(text);
	} else if (strncmp(line, "switchover", 10) == 0 &&
	    (line[10] == '\0' || line[10] == ' ')) {
		if (!command_allowed(uid)) {
			log_info("control: switchover refused to uid %ld",
			    (long)uid);
			(void)ctl_reply(d->ctl, client,
			    "error permission-denied");
			return;
		}
		if (switchover_start(d, client, line[10] == ' ' ? line + 11 :
		    "") == 0)
			command_read_queue(d, client, switchover_found,
			    line + 11);
	} else if (strcmp(line, "resign") == 0 || strcmp(line, "pause") == 0 ||
	    strcmp(line, "resume") == 0) {
		if (!command_allowed(uid)) {
			log_info("control: %s refused to uid %ld", line,
			    (long)uid);
			(void)ctl_reply(d->ctl, client,
			    "error permission-denied");
			return;
		}
		if (line[1] == 'e' && line[2] == 's' && line[3] == 'i') {
			if (election_resign(d->el) == -1) {
				(void)ctl_reply(d->ctl, client,
				    "error not-leader");
				return;
			}
			log_notice("control: resign requested");
			command_wait(&d->resign_waiters, client);
		} else if (line[0] == 'p') {
			log_notice("control: pause requested");
			election_pause(d->el, 1);
			command_wait(&d->pause_waiters, client);
		} else {
			log_notice("control: resume requested");
			election_pause(d->el, 0);
			(void)ctl_reply(d->ctl, client, "ok");
		}
		daemon_step(d);
	} else
		(void)ctl_reply(d->ctl, client, "error unknown-command");
}
