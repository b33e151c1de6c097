/*
 * The hook slot: the promote, demote, fence and check hooks the core asks
 * for (EL_ACT_HOOK), one at a time, each with the environment of its
 * moment; its end goes back to the core (election_hook_done()) and the
 * daemon steps. hooks.run and hooks.notify run beside the slot
 * (run_hook.c, notify_hook.c); a demote that waits for hooks.run's end is
 * started from there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "zkelectd.h"

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
	char failure[256] = "";
	int cancelled = d->hook_cancelled, was_unhealthy, unhealthy;

	d->hook_pid = -1;
	d->hook_cancelled = 0;
	d->startup_pid = -1;
	engine_clock(d);
	d->m.hook_runs[res->kind]++;
	metrics_hook_time(&d->m, res->kind, res->duration_ms);
	if (!res->ok && !cancelled) {
		d->m.hook_failures[res->kind]++;
		if (res->timed_out)
			(void)snprintf(failure, sizeof(failure),
			    "%s hook timed out after %lld ms", name,
			    (long long)res->duration_ms);
		else if (res->signo != 0)
			(void)snprintf(failure, sizeof(failure),
			    "%s hook killed by signal %d", name, res->signo);
		else
			(void)snprintf(failure, sizeof(failure),
			    "%s hook exited %d", name, res->exit_code);
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

/*
 * Starts the hook the core asked for. A demote comes here once hooks.run
 * is over: the daemon holds it while the run stops (run_hook.c).
 */
void
slot_hook_run(struct daemon *d, const struct el_action *act)
{
	struct election_view v;
	enum hook_kind kind = act->hook;
	const char *cmd = slot_hook_cmd(d, kind);
	char *env[20], num[32];
	int64_t timeout, decided = log_stamp();
	int n = 0, i;
	pid_t pid;

	if (kind == HOOK_DEMOTE)
		lease_log_demote(d, act->reason);
	election_view(d->el, &v);
	history_hook(&d->hist, kind, act->reason, act->epoch);
	if (cmd == NULL) {
		/* An unset hook succeeds at once. */
		election_hook_done(d->el, kind, 1);
		return;
	}
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
	/*
	 * A demote must be over (its whole group gone) within act->ms: it
	 * gets SIGTERM at three quarters of it and SIGKILL at its end.
	 */
	timeout = kind == HOOK_DEMOTE ? act->ms * 3 / 4 : act->ms;
	pid = hook_run(d->hooks, kind, cmd, env, timeout, slot_hook_done, d);
	for (i = 0; i < n; i++)
		free(env[i]);
	if (pid == -1) {
		engine_set_error(d, "%s hook could not be started",
		    hook_kind_name(kind));
		election_hook_done(d->el, kind, 0);
		return;
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
}
