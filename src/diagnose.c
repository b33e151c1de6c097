/*
 * Stalls the election cannot get out of by itself: ZooKeeper state that
 * nobody's session will ever remove, and a root this daemon may not write.
 * The election waits, which is safe; this says why, once per cause, at
 * err and in last_error, with what an operator must do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <zookeeper/zookeeper.h>

#include "log.h"
#include "xmalloc.h"
#include "zkelectd.h"

static char *
diagnose_text(const struct daemon *d, enum el_op op, const char *path,
    const struct el_result *res)
{
	char *msg = NULL;

	if (path == NULL || *path == '\0')
		path = d->epath;
	if (res->rc == ZNOAUTH)
		(void)xasprintf(&msg, "not allowed to %s %s (ZNOAUTH): give "
		    "zookeeper.auth's user the rights on zookeeper.root, or "
		    "choose another root", election_op_name(op), path);
	else if (res->rc == ZNOCHILDRENFOREPHEMERALS)
		(void)xasprintf(&msg, "cannot %s %s (ZNOCHILDRENFOREPHEMERALS): "
		    "a node on zookeeper.root's path is ephemeral and can "
		    "have no children; choose another root, or delete that "
		    "node by hand", election_op_name(op), path);
	else if (res->rc == ZOK && res->owner == 0 &&
	    op == EL_OP_WATCH_PRED)
		(void)xasprintf(&msg, "%s is not ephemeral: no session will "
		    "ever delete it, so the candidates behind it wait for "
		    "ever; delete it by hand (zkCli.sh delete %s)", path,
		    path);
	else if (res->rc == ZOK && res->owner == 0 &&
	    (op == EL_OP_LEADER || op == EL_OP_LEADER_EXISTS))
		(void)xasprintf(&msg, "%s is not ephemeral: no leader's "
		    "session owns it, and no candidate promotes while it "
		    "stays; delete it by hand (zkCli.sh delete %s)", path,
		    path);
	return msg;
}

/* Logs msg (taken) at prio and keeps it as last_error, once per cause. */
void
daemon_say(struct daemon *d, int prio, char *msg)
{
	if (d->last_error == NULL || strcmp(d->last_error, msg) != 0) {
		log_msg(prio, "%s", msg);
		free(d->last_error);
		d->last_error = msg;
		return;
	}
	free(msg);
}

void
daemon_diagnose(struct daemon *d, enum el_op op, const char *path,
    const struct el_result *res)
{
	char *msg;

	if ((msg = diagnose_text(d, op, path, res)) != NULL)
		daemon_say(d, LOG_ERR, msg);
}

void
daemon_diagnose_view(struct daemon *d, const struct election_view *v)
{
	char *msg;

	/* A head that yielded to a higher priority: said once each time. */
	if (v->yields != d->yields_seen) {
		d->yields_seen = v->yields;
		log_info("yielded the head of the queue to session 0x%016llx "
		    "(priority %lld > %lld): rejoining at the back",
		    (unsigned long long)v->yield_sid,
		    (long long)v->yield_prio, (long long)d->cfg.priority);
	}
	/* Said once per session that holds it, not at every step. */
	if (!v->leader_untrusted) {
		d->untrusted_owner = 0;
		return;
	}
	if (v->leader_owner == d->untrusted_owner)
		return;
	d->untrusted_owner = v->leader_owner;
	(void)xasprintf(&msg, "%s/leader is held by session 0x%016llx, "
	    "which had no candidate node before ours: what it says is not "
	    "shown (written by hand? delete it, or protect the root with "
	    "zookeeper.auth)", d->epath, (unsigned long long)v->leader_owner);
	daemon_say(d, LOG_WARNING, msg);
}
