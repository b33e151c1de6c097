/*
 * The daemon's engine: carries out what the election decides (requests to
 * ZooKeeper, hooks, timers, a new session), feeds it what comes back, and
 * reports the outcome to the status file, systemd and watchers.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "ctl.h"
#include "log.h"
#include "notify.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

#define REOPEN_MS 1000

static void daemon_report(struct daemon *d);

uint64_t
daemon_tag(struct daemon *d)
{
	return ++d->next_tag;
}

const char *
daemon_zk_state(const struct daemon *d)
{
	if (d->zk_state == ZOO_CONNECTED_STATE)
		return "connected";
	if (d->zk_state == ZOO_READONLY_STATE)
		return "readonly";
	if (d->zk_state == ZOO_EXPIRED_SESSION_STATE)
		return "expired";
	return "connecting";
}

static void
daemon_set_error(struct daemon *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
daemon_set_error(struct daemon *d, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(d->last_error);
	d->last_error = xstrdup(buf);
}

void
daemon_arm(struct event *ev, int64_t ms)
{
	struct timeval tv;

	if (ms < 0)
		ms = 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
	if (event_add(ev, &tv) == -1)
		fatalx("event_add");
}

/* Hooks. */

static const char *
daemon_hook_cmd(const struct daemon *d, enum hook_kind kind)
{
	switch (kind) {
	case HOOK_PROMOTE:
		return d->cfg.hook_promote;
	case HOOK_DEMOTE:
		return d->cfg.hook_demote;
	case HOOK_FENCE:
		return d->cfg.hook_fence;
	case HOOK_CHECK:
		return d->cfg.hook_check;
	}
	return NULL;
}

static const char *
daemon_hook_role(enum hook_kind kind, const char *reason, enum role now)
{
	switch (kind) {
	case HOOK_PROMOTE:
		return "leader";
	case HOOK_FENCE:
		return "promoting";
	case HOOK_CHECK:
		return election_role_name(now);
	case HOOK_DEMOTE:
		break;
	}
	if (strcmp(reason, "shutdown") == 0)
		return "stopped";
	if (strcmp(reason, "pause") == 0 || strcmp(reason, "health") == 0)
		return "observer";
	return "follower";
}

static void
daemon_hook_done(const struct hook_result *res, void *arg)
{
	struct daemon *d = arg;

	d->m.hook_runs[res->kind]++;
	d->m.hook_seconds[res->kind] += (double)res->duration_ms / 1000.0;
	if (!res->ok) {
		d->m.hook_failures[res->kind]++;
		if (res->timed_out)
			daemon_set_error(d, "%s hook timed out after %lld ms",
			    hook_kind_name(res->kind),
			    (long long)res->duration_ms);
		else if (res->signo != 0)
			daemon_set_error(d, "%s hook killed by signal %d",
			    hook_kind_name(res->kind), res->signo);
		else
			daemon_set_error(d, "%s hook exited %d",
			    hook_kind_name(res->kind), res->exit_code);
		log_warnx("%s", d->last_error);
	} else
		log_info("%s hook succeeded in %lld ms",
		    hook_kind_name(res->kind), (long long)res->duration_ms);
	if (res->kind == HOOK_CHECK) {
		d->health_running = 0;
		if (res->ok) {
			d->health_fails = 0;
			if (d->unhealthy &&
			    ++d->health_oks >= d->cfg.check_rise) {
				log_notice("health check passed %lld times: "
				    "rejoining", (long long)d->cfg.check_rise);
				d->unhealthy = 0;
				election_set_unhealthy(d->el, 0);
			}
		} else {
			d->health_oks = 0;
			if (!d->unhealthy &&
			    ++d->health_fails >= d->cfg.check_fall) {
				log_warnx("health check failed %lld times: "
				    "leaving the election",
				    (long long)d->cfg.check_fall);
				d->unhealthy = 1;
				election_set_unhealthy(d->el, 1);
			}
		}
	} else
		election_hook_done(d->el, res->kind, res->ok);
	daemon_step(d);
}

static void
daemon_env_add(char **env, int *n, const char *name, const char *value)
{
	(void)xasprintf(&env[(*n)++], "%s=%s", name, value);
}

static void
daemon_run_hook(struct daemon *d, enum hook_kind kind, const char *reason)
{
	struct election_view v;
	const char *cmd = daemon_hook_cmd(d, kind);
	char *env[20], num[32];
	int64_t timeout;
	int n = 0, i;
	pid_t pid;

	election_view(d->el, &v);
	if (cmd == NULL) {
		/* An unset hook succeeds at once. */
		if (kind != HOOK_CHECK)
			election_hook_done(d->el, kind, 1);
		return;
	}
	daemon_env_add(env, &n, "ZKELECT_SERVICE", d->cfg.service);
	daemon_env_add(env, &n, "ZKELECT_ID", d->cfg.id);
	daemon_env_add(env, &n, "ZKELECT_EVENT", hook_kind_name(kind));
	daemon_env_add(env, &n, "ZKELECT_ROLE",
	    daemon_hook_role(kind, reason, v.role));
	daemon_env_add(env, &n, "ZKELECT_REASON", reason);
	(void)snprintf(num, sizeof(num), "%lld", (long long)(kind ==
	    HOOK_CHECK ? v.leader_epoch : v.epoch));
	daemon_env_add(env, &n, "ZKELECT_EPOCH", num);
	if (kind == HOOK_PROMOTE || kind == HOOK_FENCE) {
		daemon_env_add(env, &n, "ZKELECT_LEADER", d->cfg.id);
		daemon_env_add(env, &n, "ZKELECT_LEADER_DATA", d->cfg.data);
	} else {
		daemon_env_add(env, &n, "ZKELECT_LEADER", v.leader_id);
		daemon_env_add(env, &n, "ZKELECT_LEADER_DATA", v.leader_data);
	}
	daemon_env_add(env, &n, "ZKELECT_DATA", d->cfg.data);
	if (kind == HOOK_FENCE) {
		daemon_env_add(env, &n, "ZKELECT_FENCE_ID", v.crumb_id);
		daemon_env_add(env, &n, "ZKELECT_FENCE_DATA", v.crumb_data);
		(void)snprintf(num, sizeof(num), "%lld",
		    (long long)v.crumb_epoch);
		daemon_env_add(env, &n, "ZKELECT_FENCE_EPOCH", num);
	}
	env[n] = NULL;
	switch (kind) {
	case HOOK_DEMOTE:
		timeout = d->cfg.demote_timeout_ms;
		break;
	case HOOK_CHECK:
		timeout = d->cfg.check_interval_ms;
		break;
	default:
		timeout = d->cfg.hook_timeout_ms;
		break;
	}
	log_info("running %s hook (reason %s, epoch %lld)",
	    hook_kind_name(kind), reason, (long long)v.epoch);
	pid = hook_run(d->hooks, kind, cmd, env, timeout, daemon_hook_done,
	    d);
	for (i = 0; i < n; i++)
		free(env[i]);
	if (pid == -1) {
		daemon_set_error(d, "%s hook could not be started",
		    hook_kind_name(kind));
		if (kind != HOOK_CHECK)
			election_hook_done(d->el, kind, 0);
		else
			d->health_running = 0;
	}
}

/* ZooKeeper. */

void
daemon_open(struct daemon *d)
{
	struct timeval tv = { REOPEN_MS / 1000, (REOPEN_MS % 1000) * 1000 };

	d->zk_state = ZOO_CONNECTING_STATE;
	if (zk_open(d->zk, d->cfg.hosts, (int)d->cfg.session_timeout_ms,
	    d->cfg.auth) == -1) {
		log_warn("zookeeper_init %s", d->cfg.hosts);
		if (event_add(d->ev_reopen, &tv) == -1)
			fatalx("event_add");
		return;
	}
	log_info("connecting to %s", d->cfg.hosts);
}

void
daemon_reopen(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	daemon_open(d);
	daemon_step(d);
}

static void
daemon_send(struct daemon *d, const struct el_action *act)
{
	uint64_t tag = daemon_tag(d);
	int rc, watch = 1;

	d->el_tag = tag;
	d->el_op = act->op;
	switch (act->op) {
	case EL_OP_PARENT:
		rc = zk_create(d->zk, act->path, "", 0, tag);
		break;
	case EL_OP_CREATE:
		rc = zk_create(d->zk, act->path, act->data,
		    ZOO_EPHEMERAL_SEQUENTIAL, tag);
		break;
	case EL_OP_LIST:
		rc = zk_children(d->zk, act->path, tag);
		break;
	case EL_OP_BREADCRUMB:
		watch = 0;
		/* FALLTHROUGH */
	case EL_OP_WATCH_PRED:
	case EL_OP_WATCH_OWN:
	case EL_OP_LEADER:
		rc = zk_get(d->zk, act->path, watch, tag);
		break;
	case EL_OP_LEADER_EXISTS:
		rc = zk_exists(d->zk, act->path, 1, tag);
		break;
	case EL_OP_ACK:
	case EL_OP_RELEASE:
	case EL_OP_SET_DATA:
		rc = zk_multi(d->zk, act->sub, act->nsub, tag);
		break;
	default:
		rc = ZBADARGUMENTS;
		break;
	}
	if (rc != ZOK) {
		struct el_result res;

		log_warnx("zookeeper request on %s: %s",
		    act->path != NULL ? act->path : d->epath, zk_strerror(rc));
		memset(&res, 0, sizeof(res));
		res.rc = rc;
		election_op_done(d->el, act->op, &res);
	}
}

void
daemon_zk_event(const struct zk_event *ev, void *arg)
{
	struct daemon *d = arg;
	struct el_result res;

	switch (ev->type) {
	case ZK_EV_SESSION:
		log_info("zookeeper session %016llx: %s",
		    (unsigned long long)ev->sid, zk_state_name(ev->state));
		if (ev->state == ZOO_CONNECTED_STATE) {
			d->zk_state = ev->state;
			d->session_timeout_ms = ev->timeout_ms;
			election_session(d->el, EL_ZK_CONNECTED, ev->sid);
		} else if (ev->state == ZOO_CONNECTING_STATE ||
		    ev->state == ZOO_ASSOCIATING_STATE) {
			if (d->zk_state == ZOO_CONNECTED_STATE)
				d->m.connection_losses++;
			d->zk_state = ZOO_CONNECTING_STATE;
			election_session(d->el, EL_ZK_CONNECTING, 0);
		} else if (ev->state == ZOO_READONLY_STATE) {
			d->zk_state = ev->state;
			election_session(d->el, EL_ZK_READONLY, 0);
		} else {
			if (ev->state == ZOO_AUTH_FAILED_STATE)
				log_warnx("zookeeper authentication failed");
			d->m.session_expirations++;
			d->zk_state = ZOO_EXPIRED_SESSION_STATE;
			election_session(d->el, EL_ZK_EXPIRED, 0);
		}
		break;
	case ZK_EV_WATCH:
		log_debug("watch %d on %s", ev->wtype, ev->path);
		election_watch(d->el, ev->wtype == ZOO_DELETED_EVENT,
		    ev->path);
		break;
	case ZK_EV_REPLY:
		if (ev->rc == ZOK || ev->rc == ZNONODE ||
		    ev->rc == ZNODEEXISTS) {
			/* The server answered: our lease runs from the send. */
			if (ev->sent_ms > d->lease_sent_ms)
				d->lease_sent_ms = ev->sent_ms;
		}
		if (ev->tag == d->keepalive_tag && ev->tag != 0) {
			d->keepalive_tag = 0;
			if (ev->rc == ZOK)
				election_candidates(d->el, ev->children,
				    ev->nchildren);
			break;
		}
		if (ev->tag != d->el_tag) {
			(void)command_reply(d, ev);
			break;
		}
		if (ev->rc != ZOK && ev->rc != ZNONODE)
			log_debug("election request %d: %s", d->el_op,
			    zk_strerror(ev->rc));
		memset(&res, 0, sizeof(res));
		res.rc = ev->rc;
		res.path = ev->path;
		res.data = ev->data != NULL ? ev->data : "";
		res.czxid = ev->czxid;
		res.owner = ev->owner;
		res.version = ev->version;
		res.children = ev->children;
		res.nchildren = ev->nchildren;
		d->el_tag = 0;
		election_op_done(d->el, d->el_op, &res);
		break;
	}
	daemon_step(d);
}

/* Leases and timers. */

void
daemon_keepalive(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	/*
	 * A cheap request whose acknowledgement extends the lease, and keeps
	 * the candidate count in the status fresh without a children watch.
	 */
	if (zk_is_open(d->zk) && d->zk_state == ZOO_CONNECTED_STATE) {
		d->keepalive_tag = daemon_tag(d);
		if (zk_children(d->zk, d->cpath, d->keepalive_tag) != ZOK)
			d->keepalive_tag = 0;
	}
	daemon_arm(d->ev_keepalive, d->session_timeout_ms / 3);
	daemon_step(d);
}

void
daemon_timer_fired(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_timer *t = arg;

	(void)fd;
	(void)what;
	election_timer(t->d->el, t->which);
	daemon_step(t->d);
}

static int
daemon_lease_ok(const struct daemon *d)
{
	return now_ms() < d->lease_sent_ms + d->session_timeout_ms;
}


void
daemon_health(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	if (d->cfg.hook_check != NULL && !d->health_running && !d->stopping) {
		d->health_running = 1;
		daemon_run_hook(d, HOOK_CHECK, "health");
	}
	daemon_arm(d->ev_health, d->cfg.check_interval_ms);
}

/* Carrying out what the election decided. */

static void
daemon_perform(struct daemon *d, const struct el_action *act)
{
	int64_t ms;

	switch (act->type) {
	case EL_ACT_NONE:
		break;
	case EL_ACT_ZK:
		daemon_send(d, act);
		break;
	case EL_ACT_HOOK:
		daemon_run_hook(d, act->hook, act->reason);
		break;
	case EL_ACT_TIMER:
		ms = act->ms;
		if (act->timer == EL_TIMER_GRACE) {
			/* The grace never outlives the lease. */
			int64_t left = d->lease_sent_ms +
			    d->session_timeout_ms - now_ms();
			if (left < ms)
				ms = left;
		}
		daemon_arm(d->ev_timer[act->timer], ms);
		break;
	case EL_ACT_RESTART:
		log_notice("replacing the expired zookeeper session");
		command_fail_queries(d, "error session-expired");
		zk_close(d->zk);
		election_restarted(d->el);
		d->el_tag = 0;
		daemon_open(d);
		break;
	case EL_ACT_STOPPED:
		log_info("handoff complete, exiting");
		(void)event_base_loopexit(d->base, NULL);
		break;
	case EL_ACT_RESIGNED:
		command_wake(d, &d->resign_waiters, "ok");
		break;
	case EL_ACT_PAUSED:
		command_wake(d, &d->pause_waiters, "ok");
		break;
	}
}

/*
 * The cheap guard of the command path: a full step (and report) only when
 * a leader's lease has run out, which is the one thing a query must see.
 */
void
daemon_check_lease(struct daemon *d)
{
	if (election_role(d->el) == ROLE_LEADER && !daemon_lease_ok(d))
		daemon_step(d);
}

void
daemon_step(struct daemon *d)
{
	struct el_action act;
	int guard;

	/*
	 * A leader whose lease ran out (a long freeze, a partition not yet
	 * noticed by the client) demotes before anything else is done.
	 */
	if (election_role(d->el) == ROLE_LEADER && !daemon_lease_ok(d)) {
		log_warnx("leader lease expired: demoting");
		election_lease_expired(d->el);
	}
	for (guard = 0; guard < 1000; guard++) {
		election_next(d->el, &act);
		if (act.type == EL_ACT_NONE)
			break;
		daemon_perform(d, &act);
	}
	if (guard == 1000)
		fatalx("election made no progress");
	daemon_report(d);
}

/* Reporting. */

void
daemon_status(struct daemon *d, struct status *st, struct election_view *v)
{
	election_view(d->el, v);
	memset(st, 0, sizeof(*st));
	st->service = d->cfg.service;
	st->id = d->cfg.id;
	st->role = election_role_name(v->role);
	st->leader = v->leader_id;
	st->leader_data = v->leader_data;
	st->epoch = v->leader_epoch;
	st->candidates = v->candidates;
	st->zk_state = daemon_zk_state(d);
	st->session = v->sid;
	st->pid = d->pid;
	st->since = d->since;
	st->updated = time(NULL);
	st->mode = d->cfg.mode == CONFIG_MODE_OBSERVER ? "observer" :
	    "candidate";
	st->data = d->cfg.data;
	st->my_epoch = v->epoch;
	st->last_error = d->last_error != NULL ? d->last_error : "";
}

static void
daemon_report(struct daemon *d)
{
	struct election_view v;
	struct status st;
	char *text, *line, *msg;

	election_view(d->el, &v);
	if (v.role != d->last_role) {
		log_notice("role %s -> %s", election_role_name(d->last_role),
		    election_role_name(v.role));
		if (v.role == ROLE_LEADER)
			d->m.elections_won++;
		d->last_role = v.role;
		d->since = time(NULL);
	}
	if (strcmp(d->last_leader, v.leader_id) != 0) {
		if (v.leader_id[0] != '\0')
			d->m.leader_changes++;
		free(d->last_leader);
		d->last_leader = xstrdup(v.leader_id);
	}

	daemon_status(d, &st, &v);
	st.updated = 0;
	text = status_render(&st, 0);
	if (d->last_report == NULL || strcmp(text, d->last_report) != 0) {
		free(d->last_report);
		d->last_report = text;
		st.updated = time(NULL);
		text = status_render(&st, 0);
		if (status_write(d->cfg.status_file, text) == -1)
			log_warn("write %s", d->cfg.status_file);
		(void)xasprintf(&msg, "%s, leader %s", st.role,
		    st.leader[0] != '\0' ? st.leader : "none");
		notify_status(d->notify, msg);
		free(msg);
	}
	free(text);

	line = command_watch_line(d);
	if (d->last_watch == NULL || strcmp(line, d->last_watch) != 0) {
		ctl_broadcast(d->ctl, line);
		free(d->last_watch);
		d->last_watch = line;
	} else
		free(line);
	if (v.role != ROLE_UNKNOWN)
		notify_ready(d->notify);
}
