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
	char *switch_id;	/* a switchover's lookup of this id's node */
	int preempt;		/* the leader's look for higher priorities */
	uint64_t list_tag;
	uint64_t first_tag;
	int n;
	int pending;
	char **names;
	int64_t *seqs;
	char **datas;
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

/* members */

static void
command_query_free(struct members_query *q)
{
	int i;

	for (i = 0; i < q->n; i++) {
		free(q->names[i]);
		free(q->datas[i]);
	}
	free(q->names);
	free(q->seqs);
	free(q->datas);
	free(q->switch_id);
	free(q);
}

static void
command_query_unlink(struct daemon *d, struct members_query *q)
{
	struct members_query **pp;

	for (pp = &d->queries; *pp != NULL; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
}

void
command_fail_queries(struct daemon *d, const char *why)
{
	struct members_query *q, *next;

	for (q = d->queries; q != NULL; q = next) {
		next = q->next;
		if (q->switch_id != NULL)
			switchover_forget(d);
		if (q->preempt)
			preempt_failed(d);
		else
			(void)ctl_reply(d->ctl, q->client, why);
		command_query_free(q);
	}
	d->queries = NULL;
}

static void
command_members_answer(struct daemon *d, struct members_query *q)
{
	struct textbuf b = { NULL, 0, 0 };
	char id[256], data[1024];
	int i;

	if (q->preempt) {
		preempt_listed(d, q->n, q->names, q->datas);
		command_query_unlink(d, q);
		command_query_free(q);
		return;
	}
	if (q->switch_id != NULL) {
		for (i = 0; i < q->n; i++) {
			if (q->datas[i] == NULL)
				continue;
			candidate_kv(q->datas[i], "id", id, sizeof(id));
			if (strcmp(id, q->switch_id) == 0)
				break;
		}
		switchover_found(d, q->client, q->switch_id,
		    i < q->n ? q->names[i] : NULL);
		command_query_unlink(d, q);
		command_query_free(q);
		return;
	}
	textbuf_printf(&b, "%s", "");
	for (i = 0; i < q->n; i++) {
		if (q->datas[i] == NULL)
			continue;	/* gone while we asked */
		candidate_kv(q->datas[i], "id", id, sizeof(id));
		candidate_kv(q->datas[i], "data", data, sizeof(data));
		textbuf_printf(&b, "%lld\t%s\t%s\n", (long long)q->seqs[i],
		    id, data);
	}
	(void)ctl_reply(d->ctl, q->client, b.p);
	free(b.p);
	command_query_unlink(d, q);
	command_query_free(q);
}

static void
command_members_listed(struct daemon *d, struct members_query *q,
    const struct zk_event *ev)
{
	struct candidate *c;
	char *path;
	int i, n;

	if (ev->rc != ZOK && ev->rc != ZNONODE) {
		if (q->switch_id != NULL)
			switchover_forget(d);
		if (q->preempt)
			preempt_failed(d);
		else
			(void)ctl_reply(d->ctl, q->client,
			    "error zookeeper-unavailable");
		command_query_unlink(d, q);
		command_query_free(q);
		return;
	}
	c = xcalloc((size_t)ev->nchildren + 1, sizeof(*c));
	n = candidate_order(ev->children, ev->nchildren, c);
	q->n = n;
	q->names = xcalloc((size_t)n + 1, sizeof(char *));
	q->datas = xcalloc((size_t)n + 1, sizeof(char *));
	q->seqs = xcalloc((size_t)n + 1, sizeof(int64_t));
	q->first_tag = d->next_tag + 1;
	d->next_tag += (uint64_t)n;
	for (i = 0; i < n; i++) {
		q->names[i] = xstrdup(c[i].name);
		q->seqs[i] = c[i].seq;
	}
	free(c);
	q->pending = n;
	for (i = 0; i < n; i++) {
		(void)xasprintf(&path, "%s/candidates/%s", d->epath,
		    q->names[i]);
		if (zk_get(d->zk, path, 0, q->first_tag + (uint64_t)i) != ZOK)
			q->pending--;
		free(path);
	}
	if (q->pending == 0)
		command_members_answer(d, q);
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
		if (q->n > 0 && ev->tag >= q->first_tag &&
		    ev->tag < q->first_tag + (uint64_t)q->n) {
			i = (int)(ev->tag - q->first_tag);
			if (ev->rc == ZOK && ev->data != NULL)
				q->datas[i] = xstrdup(ev->data);
			if (--q->pending == 0)
				command_members_answer(d, q);
			return 1;
		}
	}
	return 0;
}

void
command_members_query(struct daemon *d, uint64_t client,
    const char *switch_id, int preempt)
{
	struct members_query *q;
	char *path;
	int rc;

	/* Asking a disconnected session would hang until it reconnects. */
	if (!zk_is_open(d->zk) || d->zk_state != ZOO_CONNECTED_STATE) {
		if (preempt)
			preempt_failed(d);
		else
			(void)ctl_reply(d->ctl, client,
			    "error zookeeper-unavailable");
		return;
	}
	q = xcalloc(1, sizeof(*q));
	q->client = client;
	q->switch_id = switch_id != NULL ? xstrdup(switch_id) : NULL;
	q->preempt = preempt;
	q->list_tag = daemon_tag(d);
	(void)xasprintf(&path, "%s/candidates", d->epath);
	rc = zk_children(d->zk, path, q->list_tag);
	free(path);
	if (rc != ZOK) {
		if (preempt)
			preempt_failed(d);
		else
			(void)ctl_reply(d->ctl, client,
			    "error zookeeper-unavailable");
		command_query_free(q);
		return;
	}
	q->next = d->queries;
	d->queries = q;
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
	} else if (strcmp(line, "members") == 0)
		command_members_query(d, client, NULL, 0);
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
			command_members_query(d, client, line + 11, 0);
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
