/*
 * The hook slot: the promote, demote, fence and check hooks the core asks
 * for (EL_ACT_HOOK), one at a time, each with the environment of its
 * moment; its end goes back to the core (election_hook_done()) and the
 * daemon steps. hooks.run and hooks.notify run beside the slot
 * (run_hook.c, notify_hook.c); a demote that waits for hooks.run's end is
 * started from there.
 *
 * A demote hook that cannot be started (no descriptor, no process left
 * to fork) is not over: the application was never told to stop leading.
 * Reported to the core as a failed demote, it would release leadership
 * and let a successor promote beside it. The daemon holds it instead, as
 * it holds one behind hooks.run: the core counts it as running, keeps
 * this node's nodes, and the start is tried again, sooner at first, until
 * it succeeds (slot_hook_retry()). It then gets what the lease leaves of
 * its budget (election_demote_budget()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>

#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/* From a failed start to the next try: doubled each time, up to the most. */
#define SLOT_RETRY_FIRST_MS	50
#define SLOT_RETRY_MAX_MS	1000

static const char *
slot_hook_cmd(const struct daemon *d, enum hook_kind kind)
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
	case HOOK_NOTIFY:
		return d->cfg.hook_notify;
	case HOOK_RUN:
		return d->cfg.hook_run;
	}
	return NULL;
}

static const char *
slot_hook_role(enum hook_kind kind, const char *reason, enum role now)
{
	switch (kind) {
	case HOOK_PROMOTE:
		return "leader";
	case HOOK_FENCE:
		return "promoting";
	case HOOK_CHECK:
	case HOOK_NOTIFY:
		return election_role_name(now);
	case HOOK_RUN:
		return "leader";
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
slot_hook_done(const struct hook_result *res, void *arg)
{
	struct daemon *d = arg;
	struct election_view v;
	const char *name = hook_kind_name(res->kind);
	char failure[256] = "", how[96];
	int cancelled = d->hook_cancelled, was_unhealthy, unhealthy;

	d->hook_pid = -1;
	d->hook_cancelled = 0;
	d->startup_pid = -1;
	engine_clock(d);
	d->m.hook_runs[res->kind]++;
	metrics_hook_time(&d->m, res->kind, res->duration_ms);
	if (!res->ok && !cancelled) {
		d->m.hook_failures[res->kind]++;
		hook_describe(res, how, sizeof(how));
		(void)snprintf(failure, sizeof(failure), "%s hook %s", name,
		    how);
		engine_set_error(d, "%s", failure);
	}
	election_view(d->el, &v);
	was_unhealthy = v.unhealthy;
	trace_hook_end(&d->tr, res->pid, res->reaped_us);
	election_hook_done(d->el, res->kind, res->ok);
	election_view(d->el, &v);
	unhealthy = v.unhealthy;
	engine_step(d);
	trace_step_end(&d->tr, NULL);

	/* What follows the hook is under way: the words can come now. */
	if (!res->ok && cancelled)
		log_info("%s hook stopped to free the hook slot", name);
	else if (!res->ok)
		log_warnx("%s", failure);
	else if (res->kind == HOOK_CHECK)
		log_debug("check hook succeeded in %lld ms",
		    (long long)res->duration_ms);
	else
		log_info("%s hook succeeded in %lld ms", name,
		    (long long)res->duration_ms);
	if (unhealthy && !was_unhealthy)
		log_warnx("health check failed %lld times: leaving the "
		    "election", (long long)d->cfg.check_fall);
	else if (!unhealthy && was_unhealthy)
		log_notice("health check passed %lld times: rejoining",
		    (long long)d->cfg.check_rise);
}

/* Spawns the hook with the environment of its moment; its pid, or -1. */
static pid_t
slot_hook_spawn(struct daemon *d, const struct el_action *act,
    const char *cmd, int64_t timeout)
{
	struct election_view v;
	enum hook_kind kind = act->hook;
	char *env[20], num[32];
	int n = 0, i;
	pid_t pid;

	election_view(d->el, &v);
	engine_env_add(env, &n, "ZKELECT_SERVICE", d->cfg.service);
	engine_env_add(env, &n, "ZKELECT_ID", d->cfg.id);
	engine_env_add(env, &n, "ZKELECT_EVENT", hook_kind_name(kind));
	engine_env_add(env, &n, "ZKELECT_ROLE",
	    slot_hook_role(kind, act->reason, v.role));
	engine_env_add(env, &n, "ZKELECT_REASON", act->reason);
	(void)snprintf(num, sizeof(num), "%lld", (long long)act->epoch);
	engine_env_add(env, &n, "ZKELECT_EPOCH", num);
	if (kind == HOOK_PROMOTE || kind == HOOK_FENCE) {
		engine_env_add(env, &n, "ZKELECT_LEADER", d->cfg.id);
		engine_env_add(env, &n, "ZKELECT_LEADER_DATA", d->cfg.data);
	} else {
		engine_env_add(env, &n, "ZKELECT_LEADER", v.leader_id);
		engine_env_add(env, &n, "ZKELECT_LEADER_DATA", v.leader_data);
	}
	engine_env_add(env, &n, "ZKELECT_DATA", d->cfg.data);
	if (kind == HOOK_FENCE) {
		engine_env_add(env, &n, "ZKELECT_FENCE_ID", v.crumb_id);
		engine_env_add(env, &n, "ZKELECT_FENCE_DATA", v.crumb_data);
		(void)snprintf(num, sizeof(num), "%lld",
		    (long long)v.crumb_epoch);
		engine_env_add(env, &n, "ZKELECT_FENCE_EPOCH", num);
	}
	env[n] = NULL;
	pid = hook_run(d->hooks, kind, cmd, env, timeout, slot_hook_done, d);
	for (i = 0; i < n; i++)
		free(env[i]);
	return pid;
}

/*
 * The demote could not start: held (the core goes on counting it as
 * running, and no other hook is asked for meanwhile), hook_pid 0 and, for
 * the start's, startup_pid 0, so that neither a re-exec nor READY=1 takes
 * it for over; tried again by slot_hook_retry().
 */
static void
slot_hook_hold(struct daemon *d, const struct el_action *act)
{
	d->hook_pid = 0;
	if (strcmp(act->reason, "startup") == 0)
		d->startup_pid = 0;
	if (d->held_demote_reason != NULL) {
		d->held_demote_wait *= 2;
		if (d->held_demote_wait > SLOT_RETRY_MAX_MS)
			d->held_demote_wait = SLOT_RETRY_MAX_MS;
	} else {
		d->held_demote = *act;
		d->held_demote_reason = xstrdup(act->reason);
		d->held_demote.reason = d->held_demote_reason;
		d->held_demote_from = now_ms();
		d->held_demote_wait = SLOT_RETRY_FIRST_MS;
		d->held_demote_late = 0;
		engine_set_error(d, "demote hook could not be started");
		log_warnx("demote hook could not be started: trying again "
		    "until it starts, keeping leadership meanwhile (the "
		    "application was not told to stop leading)");
	}
	engine_arm(d->ev_held_demote, d->held_demote_wait);
}

/*
 * Starts the hook of act, decided at the stamp decided. 0 when it started
 * (or, unset, succeeded at once), 1 when a demote was held.
 */
static int
slot_hook_begin(struct daemon *d, const struct el_action *act,
    int64_t decided)
{
	enum hook_kind kind = act->hook;
	const char *cmd = slot_hook_cmd(d, kind);
	int64_t timeout;
	pid_t pid;

	if (cmd == NULL) {
		/* An unset hook succeeds at once. */
		election_hook_done(d->el, kind, 1);
		return 0;
	}
	/*
	 * A demote must be over (its whole group gone) within act->ms: it
	 * gets SIGTERM at three quarters of it and SIGKILL at its end (never
	 * without a timeout, however little is left).
	 */
	timeout = kind == HOOK_DEMOTE ? act->ms * 3 / 4 : act->ms;
	if (kind == HOOK_DEMOTE && timeout < 1)
		timeout = 1;
	pid = slot_hook_spawn(d, act, cmd, timeout);
	if (pid == -1 && kind == HOOK_DEMOTE) {
		slot_hook_hold(d, act);
		return 1;
	}
	if (pid == -1) {
		engine_set_error(d, "%s hook could not be started",
		    hook_kind_name(kind));
		election_hook_done(d->el, kind, 0);
		return 0;
	}
	if (kind != HOOK_CHECK)
		trace_hook(&d->tr, hook_kind_name(kind), pid, decided,
		    d->hooks);
	if (kind == HOOK_DEMOTE)
		hook_set_kill_delay(d->hooks, pid, act->ms - timeout);
	d->hook_pid = pid;
	d->hook_cancelled = 0;
	if (kind == HOOK_DEMOTE && strcmp(act->reason, "startup") == 0)
		d->startup_pid = pid;
	/* Logged once started: a slow log never delays a hook. */
	if (kind == HOOK_CHECK)
		log_debug("running check hook [%ld]", (long)pid);
	else
		log_info("running %s hook [%ld] (reason %s, epoch %lld)",
		    hook_kind_name(kind), (long)pid, act->reason,
		    (long long)act->epoch);
	return 0;
}

/* A held demote's next try; its end steps the daemon. */
static void
slot_hook_retry(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct el_action act = d->held_demote;
	int late;

	(void)fd;
	(void)what;
	engine_clock(d);
	/* Set again below: to the pid, or to 0 while it is still held. */
	d->hook_pid = -1;
	if (d->startup_pid == 0)
		d->startup_pid = -1;
	act.ms = election_demote_budget(d->el, d->held_demote.ms, &late);
	if (late && !d->held_demote_late) {
		d->held_demote_late = 1;
		log_msg(LOG_ERR, "the demote hook could not be started before "
		    "the lease's end: another node may lead while this "
		    "node's application still does");
	}
	if (slot_hook_begin(d, &act, log_stamp()) == 0) {
		if (d->hook_pid > 0)
			log_notice("demote hook started %lld ms late, with "
			    "%lld ms of its budget", (long long)(now_ms() -
			    d->held_demote_from), (long long)act.ms);
		free(d->held_demote_reason);
		d->held_demote_reason = NULL;
	}
	engine_step(d);
}

void
slot_hook_init(struct daemon *d)
{
	d->ev_held_demote = evtimer_new(d->base, slot_hook_retry, d);
	if (d->ev_held_demote == NULL)
		fatalx("evtimer_new");
}

void
slot_hook_free(struct daemon *d)
{
	if (d->ev_held_demote != NULL)
		event_free(d->ev_held_demote);
	d->ev_held_demote = NULL;
	free(d->held_demote_reason);
	d->held_demote_reason = NULL;
}

/*
 * Starts the hook the core asked for. A demote comes here once hooks.run
 * is over: the daemon holds it while the run stops (run_hook.c).
 */
void
slot_hook_run(struct daemon *d, const struct el_action *act)
{
	int64_t decided = log_stamp();

	if (act->hook == HOOK_DEMOTE)
		lease_log_demote(d, act->reason);
	history_hook(&d->hist, act->hook, act->reason, act->epoch);
	(void)slot_hook_begin(d, act, decided);
}
