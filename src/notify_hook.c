/*
 * hooks.notify: tells a command on every node, candidate or observer, who
 * leads now, on each change of leader (a new id or epoch, or no leader).
 *
 * It is the one hook that runs beside the slot of promote, demote, fence
 * and check, never in it: it only informs, so the election waits for
 * nothing it does. Queued behind the slot, it would reach the other nodes
 * late (their proxies and replicas would follow the old leader longer);
 * holding the slot, a slow notify would delay a promote or a demote, and
 * with it the handover. One runs at a time: the changes seen while it
 * runs are coalesced into one more run, with the leader of that moment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "zkelectd.h"

static void
notify_hook_done(const struct hook_result *res, void *arg)
{
	struct daemon *d = arg;
	char how[96];

	d->notify_pid = -1;
	hook_describe(res, how, sizeof(how));
	if (res->ok)
		log_info("notify hook succeeded in %lld ms",
		    (long long)res->duration_ms);
	else
		log_warnx("notify hook %s", how);
	/* A change seen while it ran gets its run now. */
	notify_hook_update(d);
}

static void
notify_hook_remember(struct daemon *d, const struct election_view *v)
{
	free(d->notified_leader);
	d->notified_leader = xstrdup(v->leader_id);
	d->notified_epoch = v->leader_epoch;
}

/*
 * Called after every step: runs the hook when the leader differs from the
 * one it last told of, unless one is running (its end calls again).
 */
void
notify_hook_update(struct daemon *d)
{
	struct election_view v;
	const char *cmd = d->cfg.hook_notify;
	char *env[12], epoch[32];
	int n = 0, i;
	pid_t pid;

	if (d->notify_pid != -1 || d->stopping)
		return;
	election_view(d->el, &v);
	/* A resumed session's view is a guess until its facts are read. */
	if (v.resuming || (strcmp(v.leader_id, d->notified_leader) == 0 &&
	    v.leader_epoch == d->notified_epoch))
		return;
	/* Unset, it still follows: one set by a reload starts from here. */
	notify_hook_remember(d, &v);
	if (cmd == NULL)
		return;

	if (v.leader_id[0] != '\0')
		(void)snprintf(epoch, sizeof(epoch), "%lld",
		    (long long)v.leader_epoch);
	else
		epoch[0] = '\0';
	engine_env_add(env, &n, "ZKELECT_SERVICE", d->cfg.service);
	engine_env_add(env, &n, "ZKELECT_ID", d->cfg.id);
	engine_env_add(env, &n, "ZKELECT_EVENT", hook_kind_name(HOOK_NOTIFY));
	engine_env_add(env, &n, "ZKELECT_ROLE", election_role_name(v.role));
	/* Set for every hook (a hook may run with set -u): empty, like the
	 * leader's variables, when nobody leads. */
	engine_env_add(env, &n, "ZKELECT_REASON",
	    v.leader_id[0] != '\0' ? "elected" : "");
	engine_env_add(env, &n, "ZKELECT_EPOCH", epoch);
	engine_env_add(env, &n, "ZKELECT_LEADER", v.leader_id);
	engine_env_add(env, &n, "ZKELECT_LEADER_DATA", v.leader_data);
	engine_env_add(env, &n, "ZKELECT_DATA", d->cfg.data);
	env[n] = NULL;
	pid = hook_run(d->hooks, HOOK_NOTIFY, cmd, env, d->cfg.hook_timeout_ms,
	    notify_hook_done, d);
	for (i = 0; i < n; i++)
		free(env[i]);
	if (pid == -1) {
		log_warnx("notify hook could not be started");
		return;
	}
	d->notify_pid = pid;
	log_info("running notify hook [%ld] (leader %s, epoch %s)", (long)pid,
	    v.leader_id[0] != '\0' ? v.leader_id : "none",
	    epoch[0] != '\0' ? epoch : "none");
}
