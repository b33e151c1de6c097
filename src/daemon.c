/*
 * The daemon's engine: carries out what the election decides (requests to
 * ZooKeeper, hooks, timers, a new session), feeds it what comes back, and
 * reports the outcome to the status file, systemd and watchers.
 *
 * It calls its features (request.c, slot_hook.c, run_hook.c,
 * notify_hook.c, switchover.c, queue_read.c, metrics.c) and none of them
 * calls it: what they share with it is engine.c's, and a feature that
 * told the core something asks for a step through engine_step(), which
 * runs the daemon_step() registered in d->step.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>
#include <syslog.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "ctl.h"
#include "log.h"
#include "notify.h"
#include "resolve.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

#define REOPEN_MS 1000

static void daemon_report(struct daemon *d);

/* ZooKeeper. */

/* The session is opened on list, addresses only when hosts has names. */
static void
daemon_connect(struct daemon *d, const char *list)
{
	struct timeval tv = { REOPEN_MS / 1000, (REOPEN_MS % 1000) * 1000 };
	char *msg;

	if (zk_open_session(d->zk, list, (int)d->cfg.session_timeout_ms,
	    d->cfg.auth, d->resume_open ? &d->resume_zs : NULL) == -1) {
		/*
		 * Said once (and kept in the status) until the cause changes,
		 * not at every retry; the library maps a name that does not
		 * resolve to ENOENT.
		 */
		(void)xasprintf(&msg, "cannot connect to %s: %s", d->cfg.hosts,
		    errno == ENOENT ? "a host name does not resolve" :
		    strerror(errno));
		daemon_say(d, LOG_WARNING, msg);
		if (event_add(d->ev_reopen, &tv) == -1)
			fatalx("event_add");
		return;
	}
	if (strcmp(list, d->cfg.hosts) != 0)
		log_info("connecting to %s (%s)", d->cfg.hosts, list);
	else
		log_info("connecting to %s", d->cfg.hosts);
	/* Re-attached once: a session that expired is replaced. */
	d->resume_open = 0;
	explicit_bzero(&d->resume_zs, sizeof(d->resume_zs));
}

/*
 * A list with host names is resolved off the loop (resolve.c) before the
 * session opens, and the client is given the addresses: in zookeeper_init
 * the library would resolve them in this thread, and a resumed leader's
 * loop keeps its lease. The library's own resolution again (every 30 s,
 * and on a lost connection) is replaced by daemon_hosts_refresh(). The
 * request counts from now: a resumed session's touch is taken no later
 * than it happens.
 */
void
daemon_open(struct daemon *d)
{
	d->zk_state = ZOO_CONNECTING_STATE;
	engine_clock(d);
	election_session_requested(d->el);
	if (zk_hosts_are_addresses(d->cfg.hosts))
		daemon_connect(d, d->cfg.hosts);
	else
		resolver_start(d->open_resolver, "", d->cfg.hosts, RESOLVE_MS);
}

/*
 * The answer for d->cfg.hosts: it opens the session, or, once one is
 * open, moves it when the names resolve to other addresses now.
 */
void
daemon_hosts_fresh(const char *hosts, const char *numeric, const char *why,
    void *arg)
{
	struct timeval tv = { REOPEN_MS / 1000, (REOPEN_MS % 1000) * 1000 };
	struct daemon *d = arg;
	char *msg;

	if (strcmp(hosts, d->cfg.hosts) != 0) {
		/* A reload changed the list meanwhile. */
		if (!zk_is_open(d->zk)) {
			daemon_open(d);
			daemon_step(d);
		}
		return;
	}
	if (zk_is_open(d->zk)) {
		if (numeric == NULL || zk_hosts(d->zk) == NULL ||
		    zk_hosts_same(numeric, zk_hosts(d->zk), 1))
			return;
		log_notice("zookeeper.hosts %s now resolves to %s (was %s)",
		    hosts, numeric, zk_hosts(d->zk));
		if (zk_set_hosts(d->zk, numeric) != ZOK)
			log_warnx("zk: cannot move to %s", numeric);
		return;
	}
	if (numeric == NULL) {
		(void)xasprintf(&msg, "cannot connect to %s: %s", hosts, why);
		daemon_say(d, LOG_WARNING, msg);
		if (event_add(d->ev_reopen, &tv) == -1)
			fatalx("event_add");
		return;
	}
	daemon_connect(d, numeric);
	daemon_step(d);
}

/*
 * The names of the list resolved again, as the client library would
 * (every 30 s and after a lost connection, at most once in 5 s), off the
 * loop.
 */
void
daemon_hosts_refresh(struct daemon *d)
{
	int64_t now = now_ms();

	if (!zk_is_open(d->zk) || zk_hosts_are_addresses(d->cfg.hosts) ||
	    resolver_pending(d->open_resolver) != NULL ||
	    (d->refreshed_ms != 0 && now - d->refreshed_ms < 5000))
		return;
	d->refreshed_ms = now;
	resolver_start(d->open_resolver, zk_hosts(d->zk) != NULL ?
	    zk_hosts(d->zk) : "", d->cfg.hosts, RESOLVE_MS);
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

void
daemon_zk_event(const struct zk_event *ev, void *arg)
{
	struct daemon *d = arg;
	struct election_view v;
	struct el_result res;
	int64_t delivered;

	delivered = log_stamp();
	d->batch_drained = ev->drained_us;
	engine_clock(d);
	trace_event(&d->tr, ev, delivered);
	switch (ev->type) {
	case ZK_EV_SESSION:
		/* A loss names no session: the one still held is meant. */
		election_view(d->el, &v);
		log_info("zookeeper session %016llx: %s",
		    (unsigned long long)(ev->sid != 0 ? ev->sid : v.sid),
		    zk_state_name(ev->state));
		if (ev->state == ZOO_CONNECTED_STATE) {
			d->zk_state = ev->state;
			election_session(d->el, EL_ZK_CONNECTED, ev->sid,
			    ev->timeout_ms);
			election_view(d->el, &v);
			/*
			 * A server silent for T/5 with a request waiting is
			 * left (zk_sock.c): the library's own limit, 2T/3,
			 * comes after a leader's lease must have demoted.
			 */
			zk_set_stall(d->zk, v.session_timeout_ms /
			    ZK_STALL_DIV);
			if (v.demote_clamped && !d->warned_clamp) {
				log_warnx("hooks.demote_timeout %lld ms is not "
				    "below a third of the negotiated session "
				    "timeout %lld ms: using %lld ms",
				    (long long)d->cfg.demote_timeout_ms,
				    (long long)v.session_timeout_ms,
				    (long long)v.demote_timeout_ms);
				d->warned_clamp = 1;
			}
		} else if (ev->state == ZOO_CONNECTING_STATE ||
		    ev->state == ZOO_ASSOCIATING_STATE) {
			if (d->zk_state == ZOO_CONNECTED_STATE)
				d->m.connection_losses++;
			d->zk_state = ZOO_CONNECTING_STATE;
			daemon_hosts_refresh(d);
			election_session(d->el, EL_ZK_CONNECTING, 0, 0);
		} else if (ev->state == ZOO_READONLY_STATE) {
			d->zk_state = ev->state;
			election_session(d->el, EL_ZK_READONLY, 0, 0);
		} else if (ev->state == ZOO_AUTH_FAILED_STATE) {
			engine_set_error(d, "zookeeper authentication failed "
			    "(check zookeeper.auth)");
			log_msg(LOG_ERR, "%s: retrying with a backoff",
			    d->last_error);
			d->zk_state = ZOO_EXPIRED_SESSION_STATE;
			election_session(d->el, EL_ZK_AUTH_FAILED, 0, 0);
		} else {
			d->m.session_expirations++;
			d->zk_state = ZOO_EXPIRED_SESSION_STATE;
			election_session(d->el, EL_ZK_EXPIRED, 0, 0);
		}
		break;
	case ZK_EV_WATCH:
		election_watch(d->el, ev->wtype == ZOO_DELETED_EVENT,
		    ev->path);
		break;
	case ZK_EV_REPLY:
		if (ev->tag == d->count_tag && ev->tag != 0) {
			d->count_tag = 0;
			if (ev->rc == ZOK && ev->has_stat)
				election_candidates(d->el, ev->numchildren);
			break;
		}
		memset(&res, 0, sizeof(res));
		res.rc = ev->rc;
		if (ev->tag == d->sync_tag && ev->tag != 0) {
			d->sync_tag = 0;
			if (ev->rc != ZOK)
				log_debug("keepalive sync: %s",
				    zk_strerror(ev->rc));
			election_op_done(d->el, EL_OP_SYNC, &res);
			break;
		}
		if (d->el_nreq == 0 || ev->tag != d->el_req[0].tag ||
		    ev->tag == 0) {
			(void)queue_read_reply(d, ev);
			break;
		}
		if (ev->rc != ZOK && ev->rc != ZNONODE)
			log_debug("election request %s: %s",
			    election_op_name(d->el_req[0].op),
			    zk_strerror(ev->rc));
		else if (ev->has_set_version)
			log_debug("election request %s: ok, its last set left "
			    "version %d", election_op_name(d->el_req[0].op),
			    (int)ev->set_version);
		res.path = ev->path;
		res.data = ev->data != NULL ? ev->data : "";
		res.czxid = ev->czxid;
		res.owner = ev->owner;
		res.version = ev->version;
		res.children = ev->children;
		res.nchildren = ev->nchildren;
		res.has_set_version = ev->has_set_version;
		res.set_version = ev->set_version;
		daemon_el_answer(d, &res);
		break;
	}
	daemon_step(d);
	trace_step_end(&d->tr, ev);
}

/* Timers. */

/*
 * The candidate count in the status, refreshed without a children watch
 * or a listing: E/candidates' stat has it. It decides nothing.
 */
void
daemon_count(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct election_view v;

	(void)fd;
	(void)what;
	election_view(d->el, &v);
	if (zk_is_open(d->zk) && d->zk_state == ZOO_CONNECTED_STATE &&
	    d->count_tag == 0) {
		d->count_tag = engine_tag(d);
		d->m.zk_requests[EL_OP_NONE]++;
		if (zk_exists(d->zk, d->cpath, 0, d->count_tag) != ZOK)
			d->count_tag = 0;
	}
	engine_arm(d->ev_count, v.session_timeout_ms / 3);
}

/* The election's deadline passed (on CLOCK_BOOTTIME, suspend included). */
void
daemon_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) == -1 && errno != EAGAIN)
		log_warn("read timerfd");
	engine_clock(d);
	daemon_step(d);
}

/* Carrying out what the election decided. */

static void
daemon_perform(struct daemon *d, const struct el_action *act)
{
	struct election_view v;

	switch (act->type) {
	case EL_ACT_NONE:
		break;
	case EL_ACT_ZK:
		daemon_send(d, act);
		break;
	case EL_ACT_HOOK:
		/* hooks.run ends first; its end starts this demote. */
		if (act->hook == HOOK_PROMOTE || act->hook == HOOK_FENCE)
			resume_before_lead(d);
		if (act->hook != HOOK_DEMOTE || !run_hook_before_demote(d, act))
			slot_hook_run(d, act);
		break;
	case EL_ACT_CANCEL:
		if (d->hook_pid > 0) {
			d->hook_cancelled = 1;
			log_notice("stopping the %s hook: %s",
			    hook_kind_name(act->hook), act->hook == HOOK_CHECK ?
			    "the hook slot is needed" :
			    "the lease leaves no more time");
			hook_cancel(d->hooks, d->hook_pid, act->ms);
		}
		break;
	case EL_ACT_RESTART:
		election_view(d->el, &v);
		log_notice("replacing the zookeeper session: %s",
		    v.restart_why != NULL ? v.restart_why : "expired");
		queue_read_fail(d, "error session-expired");
		zk_close(d->zk);
		election_restarted(d->el);
		daemon_held_drop(d);
		d->el_nreq = 0;
		d->sync_tag = 0;
		d->count_tag = 0;
		daemon_open(d);
		break;
	case EL_ACT_STOPPED:
		log_info("handoff complete, exiting");
		daemon_stop_answer(d);
		(void)event_base_loopexit(d->base, NULL);
		break;
	case EL_ACT_RESIGNED:
		daemon_wake(d, &d->resign_waiters, "ok");
		break;
	case EL_ACT_PAUSED:
		daemon_wake(d, &d->pause_waiters, "ok");
		break;
	case EL_ACT_QUEUE:
	case EL_ACT_OUTRANKED:
	case EL_ACT_PREEMPT:
		switchover_perform(d, act);
		break;
	case EL_ACT_TRANSITION:
		if (act->unlisted)
			log_warnx("state: %s -> %s (%s): a move the transition "
			    "table does not have", election_state_name(act->from),
			    election_state_name(act->to), act->reason);
		else
			log_debug("state: %s -> %s (%s)",
			    election_state_name(act->from),
			    election_state_name(act->to), act->reason);
		break;
	}
}

/*
 * The cheap guard of the command path: a full step (and report) only when
 * a leader's lease has run short, which is the one thing a query must see.
 */
void
daemon_check_lease(struct daemon *d)
{
	engine_clock(d);
	if (d->last_role == ROLE_LEADER && election_role(d->el) != ROLE_LEADER)
		daemon_step(d);
}

void
daemon_step(struct daemon *d)
{
	struct el_action act;
	int guard;

	/*
	 * The clock before every action, not once per step: a process
	 * stopped (SIGSTOP, a VM pause) in the middle of a step must not
	 * start a promote on the time it read before it stopped.
	 */
	for (guard = 0; guard < 1000; guard++) {
		engine_clock(d);
		election_next(d->el, &act);
		if (act.type == EL_ACT_NONE)
			break;
		daemon_perform(d, &act);
	}
	if (guard == 1000)
		fatalx("election made no progress");
	/* hooks.run could not start: the resign it asked for goes out now. */
	if (run_hook_update(d))
		daemon_step(d);
	engine_arm_deadline(d);
	daemon_report(d);
	resume_save(d);
	crashed_save(d);
}

/* Reporting. */

void
daemon_status(struct daemon *d, struct status *st, struct election_view *v)
{
	const struct history_entry *last;

	election_view(d->el, v);
	memset(st, 0, sizeof(*st));
	st->service = d->cfg.service;
	st->id = d->cfg.id;
	st->role = election_role_name(v->role);
	st->leader = v->leader_id;
	st->leader_data = v->leader_data;
	st->epoch = v->leader_epoch;
	st->candidates = v->candidates;
	st->zk_state = engine_zk_state(d);
	st->session = v->sid;
	st->pid = d->pid;
	st->since = d->since;
	st->updated = time(NULL);
	st->mode = d->cfg.mode == CONFIG_MODE_OBSERVER ? "observer" :
	    "candidate";
	st->data = d->cfg.data;
	st->my_epoch = v->epoch;
	st->last_error = d->last_error != NULL ? d->last_error : "";
	st->lease_error = v->lease_error != NULL ? v->lease_error : "";
	st->queue_position = v->position;
	st->priority = d->cfg.priority;
	st->paused = v->paused != 0;
	st->healthy = v->unhealthy == 0;
	/* The backoff ends on the election's clock: shown on the wall's. */
	if (v->backoff_until != 0)
		st->backoff_until = (time_t)((wall_ms() + v->backoff_until -
		    now_ms() + 999) / 1000);
	last = history_last(&d->hist);
	st->last_transition = last != NULL ? (time_t)(last->time_ms / 1000) :
	    0;
	st->run_pid = d->run_pid > 0 ? d->run_pid : 0;
	st->run_since = d->run_pid > 0 ? d->run_since : 0;
}

/* The watch line without its time: what a change is judged by. */
static char *
daemon_watch_state(struct daemon *d)
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
daemon_watch_line(struct daemon *d)
{
	char *state, *line, now[40];

	state = daemon_watch_state(d);
	rfc3339_ms(wall_ms(), now, sizeof(now));
	(void)xasprintf(&line, "%s time=%s", state, now);
	free(state);
	return line;
}

/* The clients waiting for a resign or a pause to be done are answered. */
void
daemon_wake(struct daemon *d, struct waiter **list, const char *text)
{
	struct waiter *w, *next;

	for (w = *list; w != NULL; w = next) {
		next = w->next;
		(void)ctl_reply(d->ctl, w->client, text);
		free(w);
	}
	*list = NULL;
}

/*
 * The daemon stops: the resigns and pauses still waiting are answered,
 * since the core says nothing more of them once its stop is under way,
 * and the socket closes soon. Both asked for the ordered handoff that the
 * stop itself carries out, so theirs is done ("ok") when the core ended
 * its stop owning nothing, with the application not told to lead (its
 * demote ended) and the session still connected: the core ends a stop on
 * a connected session only once its release is acknowledged (the nodes
 * deleted, or never made), and the session's close removes any other
 * ephemeral node at once. Without a connection the nodes may well still
 * be there, and go only with the session's expiry: the handoff was cut
 * short, answered "error shutdown" as a switchover's is (switchover.c).
 * Also called at the exit, for a pause asked after the core stopped.
 */
void
daemon_stop_answer(struct daemon *d)
{
	struct election_view v;
	const char *text = "error shutdown";

	election_view(d->el, &v);
	if (v.zk == EL_ZK_CONNECTED && v.node == NULL && !v.promoted)
		text = "ok";
	if (d->resign_waiters != NULL || d->pause_waiters != NULL)
		log_info("stopping: a resign or pause under way is answered "
		    "%s", text);
	daemon_wake(d, &d->resign_waiters, text);
	daemon_wake(d, &d->pause_waiters, text);
}

/*
 * Called at the end of every step, once the step's actions are under way:
 * the role's log line and the watch lines (queued, written by the loop)
 * now, the status file and systemd's STATUS from daemon_publish() once
 * the loop has run what else is ready.
 */
static void
daemon_report(struct daemon *d)
{
	struct election_view v;
	char *line;

	election_view(d->el, &v);
	if (v.role != d->last_role) {
		log_notice("role %s -> %s", election_role_name(d->last_role),
		    election_role_name(v.role));
		/*
		 * A successor that knew itself first without a listing only
		 * guessed the count: the new leader's is counted at once, off
		 * the handover's path (it is acknowledged already).
		 */
		if (v.role == ROLE_LEADER) {
			d->m.elections_won++;
			engine_arm(d->ev_count, 0);
		}
		d->last_role = v.role;
		d->since = time(NULL);
	}
	(void)history_note(&d->hist, wall_ms(), &v);
	lease_report(d, &v);
	daemon_diagnose_view(d, &v);
	switchover_check(d, &v);
	/* Every node says who leads, so a follower's log tells it too. */
	if (strcmp(d->last_leader, v.leader_id) != 0 ||
	    d->last_leader_epoch != v.leader_epoch) {
		if (v.leader_id[0] != '\0')
			log_info("leader is now %s (epoch %lld)", v.leader_id,
			    (long long)v.leader_epoch);
		else
			log_info("no leader");
		d->last_leader_epoch = v.leader_epoch;
	}
	if (strcmp(d->last_leader, v.leader_id) != 0) {
		if (v.leader_id[0] != '\0')
			d->m.leader_changes++;
		free(d->last_leader);
		d->last_leader = xstrdup(v.leader_id);
	}

	/* A change is judged without the line's time=. */
	line = daemon_watch_state(d);
	if (d->last_watch == NULL || strcmp(line, d->last_watch) != 0) {
		free(d->last_watch);
		d->last_watch = line;
		line = daemon_watch_line(d);
		ctl_broadcast(d->ctl, line);
	}
	free(line);

	notify_hook_update(d);

	/* Steps of one loop turn share one publishing. */
	event_active(d->ev_publish, EV_TIMEOUT, 1);
}

/*
 * Writes the status file; -1 when it could not be replaced. A failure
 * (a full /run, a directory at the temporary name) may be passing: the
 * write is tried again a second later, and again, until it succeeds,
 * since nothing else would rewrite the file before the next change. It is
 * logged once per cause, and its end once.
 */
static int
daemon_publish_file(struct daemon *d, struct status *st)
{
	struct timeval tv = { 1, 0 };
	char *text;
	int rc, saved;

	text = status_render(st, 0);
	rc = status_write(d->cfg.status_file, text);
	saved = errno;
	free(text);
	if (rc == 0) {
		if (d->publish_errno != 0)
			log_notice("%s written again", d->cfg.status_file);
		d->publish_errno = 0;
		return 0;
	}
	if (saved != d->publish_errno) {
		errno = saved;
		log_warn("write %s (tried again every second)",
		    d->cfg.status_file);
	}
	d->publish_errno = saved != 0 ? saved : EIO;
	if (event_add(d->ev_publish, &tv) == -1)
		log_warnx("event_add: the status file is not tried again");
	return -1;
}

/*
 * Rewrites the status file, and tells systemd, only when what they show
 * changed (or the file's last write failed). It runs from the loop after
 * the events that were ready with the step that asked for it, so that a
 * request or a hook never waits for it, and the status file needs no
 * fsync: it is runtime state, which readers need replaced atomically
 * (rename), not kept across a crash (it lives in /run, and the daemon
 * rewrites it when it starts).
 */
void
daemon_publish(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct election_view v;
	struct status st;
	char *text, *msg;

	(void)fd;
	(void)what;
	trace_flush(&d->tr);
	daemon_status(d, &st, &v);
	st.updated = 0;
	text = status_render(&st, 0);
	if (d->last_report == NULL || strcmp(text, d->last_report) != 0) {
		st.updated = time(NULL);
		if (daemon_publish_file(d, &st) == 0) {
			free(d->last_report);
			d->last_report = text;
			text = NULL;
		}
		if (d->zk_state == ZOO_CONNECTED_STATE ||
		    d->zk_state == ZOO_READONLY_STATE)
			(void)xasprintf(&msg, "%s, leader %s", st.role,
			    st.leader[0] != '\0' ? st.leader : "none");
		else
			(void)xasprintf(&msg, "connecting to ZooKeeper (%s), "
			    "%s, leader %s", d->cfg.hosts, st.role,
			    st.leader[0] != '\0' ? st.leader : "none");
		notify_status(d->notify, msg);
		free(msg);
	}
	free(text);
	/*
	 * The socket is bound before the loop runs; ZooKeeper may take any
	 * time to answer, and systemd must not wait for it. The startup
	 * demote, though, is what makes a node that crashed as leader safe:
	 * units ordered after this one start once it is over.
	 */
	if (d->startup_pid == -1)
		notify_ready(d->notify);
}
