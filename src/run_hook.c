/*
 * hooks.run: a process that runs exactly while this node leads, started
 * once a promote succeeded and E/leader is ours (role leader), stopped
 * before the demote hook starts, whatever asked for the demote (resign,
 * pause, stop, health, a lost lease). Like hooks.notify it runs beside the
 * hook slot, in a process group of its own, its output in the log.
 *
 * The demote waits for it. The core has asked for the demote hook and
 * counts it as running; the daemon holds the action here, stops the run
 * (SIGTERM to its group at once, SIGKILL later, see run_hook_kill_at())
 * and starts the demote once the whole group is gone. An unset demote
 * hook waits the same way: its instant success would let the release,
 * and with it the successor's promote, go ahead of the run's end.
 *
 * Its end on its own (the shell exited, and what it left in its group
 * was stopped too: hook.c) is a core event: the node resigns with reason
 * run-exited and rejoins after hooks.retry_backoff. One run per
 * leadership: it is not started again before the next promote, so a
 * reload that sets or changes hooks.run applies from then.
 *
 * A daemon killed with SIGKILL cannot stop it. PR_SET_PDEATHSIG would
 * need a wrapper between posix_spawn() and the shell, and would reach
 * the shell alone, not the group it starts; under systemd the unit's
 * cgroup is killed as a whole when the daemon dies (KillMode=control-group,
 * the default), which covers the group. Elsewhere the run outlives such a
 * crash: the session file names its group and the start of its leader
 * (/proc's, so that a pid used again is not taken for it), and the daemon
 * started again stops that group (SIGTERM, SIGKILL after
 * run_stop_timeout) before it starts a run of its own or any demote
 * hook. It is not ours to wait for, so its end is polled, with a signal
 * 0 to the group and its leader's /proc file, nothing more (a look
 * through the whole of /proc blocked the loop for seconds under load).
 * A group whose leader had ended already is killed at once: what is left
 * are the shell's leftovers, or zombies. It cannot be taken over: its
 * output went to the dead daemon, and a write to it now kills it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/* Room for a SIGKILLed group to be seen gone before the demote point. */
#define RUN_KILL_ROOM_MS	50
/* How often a crashed daemon's run is looked for while it is stopped. */
#define RUN_ORPHAN_POLL_MS	50

/*
 * The state, process group and start (clock ticks after boot) of process
 * pid from /proc/PID/stat: 0, or -1 when there is no such process.
 */
static int
run_proc_stat(pid_t pid, char *state, pid_t *pgrp, unsigned long long *start)
{
	char path[64], buf[1024], *p, *tok, *save = NULL;
	FILE *f;
	size_t n;
	int field;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	(void)fclose(f);
	buf[n] = '\0';
	/* The name, in parentheses, may hold anything: the fields follow. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok != NULL;
	    field++, tok = strtok_r(NULL, " ", &save)) {
		if (field == 3)
			*state = tok[0];
		else if (field == 5)
			*pgrp = (pid_t)strtol(tok, NULL, 10);
		else if (field == 22) {
			*start = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	return -1;
}

/* A zombie is gone but for its parent's wait: another's to reap. */
static int
run_proc_live(char state)
{
	return state != 'Z' && state != 'X';
}

/*
 * Whether the group pgid may still hold a process of the run that started
 * at start (/proc's clock ticks after boot): 0 no, 1 its leader lives, 2
 * its leader has ended (a zombie no one has reaped yet, or reaped) and the
 * group is still there. No process in the group: no. Its leader with
 * another start is a pid used again, which the kernel hands out only once
 * the old group is gone: no. Whether a 2 holds a live process only a look
 * through the whole of /proc could tell, and that read blocked the loop
 * for seconds on a loaded machine: it is never made.
 */
static int
run_orphan_look(pid_t pgid, unsigned long long start)
{
	unsigned long long s;
	pid_t pgrp;
	char state;

	if (kill(-pgid, 0) == -1 && errno == ESRCH)
		return 0;
	if (run_proc_stat(pgid, &state, &pgrp, &s) == 0) {
		if (s != start || pgrp != pgid)
			return 0;
		if (run_proc_live(state))
			return 1;
	}
	return 2;
}

/* Nothing of it runs again: its zombies are not waited for. */
static void
run_orphan_kill(struct daemon *d)
{
	(void)kill(-d->run_pid, SIGKILL);
	d->run_orphan_killed = 1;
	engine_arm(d->ev_run_orphan, 0);
}

static void
run_hook_kill(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	if (d->run_pid == -1)
		return;
	log_notice("run process [%ld] still there: sending SIGKILL to its "
	    "process group", (long)d->run_pid);
	if (d->run_orphan)
		run_orphan_kill(d);
	else
		hook_cancel(d->hooks, d->run_pid, 0);
}

static void run_orphan_poll(evutil_socket_t, short, void *);

/*
 * After resume_load(): the run a crashed daemon left (the session file
 * names it) is stopped now, before any hook of ours. A re-exec hands its
 * run over instead (run_hook_adopt()).
 */
void
run_hook_init(struct daemon *d)
{
	int seen;

	d->run_pid = -1;
	if ((d->ev_run_kill = evtimer_new(d->base, run_hook_kill, d)) == NULL ||
	    (d->ev_run_orphan = evtimer_new(d->base, run_orphan_poll, d)) ==
	    NULL)
		fatalx("evtimer_new");
	if (d->orphan_pgid <= 0 || d->rx_inherited ||
	    (seen = run_orphan_look(d->orphan_pgid, d->orphan_start)) == 0)
		return;
	d->run_pid = d->orphan_pgid;
	d->run_start = d->orphan_start;
	d->run_since = time(NULL);
	d->run_orphan = 1;
	d->run_stopping = 1;
	d->run_stop_from = now_ms();
	if (seen == 2) {
		/*
		 * Its shell ended with no daemon to stop what it left (or it
		 * is all zombies): that gets SIGKILL at once, as hook.c would
		 * have sent it by now, and nothing of it is waited for.
		 */
		log_notice("run process [%ld] of the daemon before a crash has "
		    "ended: killing what it left in its process group before "
		    "anything else", (long)d->run_pid);
		run_orphan_kill(d);
		return;
	}
	log_notice("run process [%ld] of the daemon before a crash is still "
	    "there: stopping its process group before anything else",
	    (long)d->run_pid);
	if (kill(-d->run_pid, SIGTERM) == -1 && errno != ESRCH)
		log_warn("kill %ld", (long)-d->run_pid);
	engine_arm(d->ev_run_kill, d->cfg.run_stop_timeout_ms);
	engine_arm(d->ev_run_orphan, RUN_ORPHAN_POLL_MS);
}

void
run_hook_free(struct daemon *d)
{
	/* Never left behind again: it was told to go; now it must. */
	if (d->run_orphan && d->run_pid != -1)
		(void)kill(-d->run_pid, SIGKILL);
	if (d->ev_run_kill != NULL)
		event_free(d->ev_run_kill);
	d->ev_run_kill = NULL;
	if (d->ev_run_orphan != NULL)
		event_free(d->ev_run_orphan);
	d->ev_run_orphan = NULL;
	free(d->run_demote_reason);
	d->run_demote_reason = NULL;
}

/*
 * When the run's group gets SIGKILL while a demote waits for it. The
 * contract wants the demote hook finished by lease_end, and the core asks
 * for it at the latest at its demote point, lease_end minus the demote's
 * whole budget (hooks.demote_timeout) and a margin: so the run may take
 * from the demote's start only what the lease has beyond that point.
 * SIGTERM went out at once; SIGKILL follows at the earlier of
 * hooks.run_stop_timeout after it and the demote point (less the moment
 * the killed group takes to be seen gone), so that the demote hook still
 * starts with its whole budget before the point. A demote asked for at
 * the point itself (the lease ran short, the connection is lost with no
 * grace) thus kills the run at once, and so does one without a lease (the
 * session expired: someone else may lead already). Asked again at every
 * step: a lease the keepalive renews meanwhile moves the point later, one
 * that is lost brings the SIGKILL to now.
 */
static int64_t
run_hook_kill_at(struct daemon *d)
{
	struct election_view v;
	int64_t t = d->run_stop_from + d->cfg.run_stop_timeout_ms;

	election_view(d->el, &v);
	if (v.lease_end == 0)
		return now_ms();
	if (v.demote_at - RUN_KILL_ROOM_MS < t)
		t = v.demote_at - RUN_KILL_ROOM_MS;
	return t;
}

static void
run_hook_arm_kill(struct daemon *d)
{
	int64_t left = run_hook_kill_at(d) - now_ms();

	if (left <= 0) {
		(void)evtimer_del(d->ev_run_kill);
		run_hook_kill(-1, 0, d);
		return;
	}
	engine_arm(d->ev_run_kill, left);
}

/* The run's whole group is gone; it was being stopped. */
static void
run_hook_stopped(struct daemon *d, pid_t pid)
{
	struct el_action act;

	d->run_stopping = 0;
	log_info("run process [%ld] stopped after %lld ms", (long)pid,
	    (long long)(now_ms() - d->run_stop_from));
	if (d->run_held) {
		d->run_held = 0;
		act = d->run_demote;
		act.reason = d->run_demote_reason;
		/*
		 * Whatever the stop took, the demote still ends by the end
		 * of the lease (less the core's margin) when there is one
		 * still ahead (election_demote_budget()).
		 */
		act.ms = election_demote_budget(d->el, act.ms, NULL);
		if (d->startup_pid == 0)
			d->startup_pid = -1;	/* slot_hook_run() sets it */
		slot_hook_run(d, &act);
		free(d->run_demote_reason);
		d->run_demote_reason = NULL;
	}
	engine_step(d);
}

/* A crashed daemon's run: polled until its whole group is gone. */
static void
run_orphan_poll(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	pid_t pid = d->run_pid;

	(void)fd;
	(void)what;
	if (!d->run_orphan)
		return;
	/*
	 * Its leader ended on the SIGTERM, what it left had the same: they
	 * get until the SIGKILL (run_hook_kill_at()), zombies included.
	 */
	if (!d->run_orphan_killed && run_orphan_look(pid, d->run_start) != 0) {
		engine_arm(d->ev_run_orphan, RUN_ORPHAN_POLL_MS);
		return;
	}
	d->run_orphan = 0;
	d->run_orphan_killed = 0;
	d->run_pid = -1;
	d->run_since = 0;
	d->run_start = 0;
	(void)evtimer_del(d->ev_run_kill);
	engine_clock(d);
	run_hook_stopped(d, pid);
}

static void
run_hook_done(const struct hook_result *res, void *arg)
{
	struct daemon *d = arg;
	pid_t pid = d->run_pid;

	d->run_pid = -1;
	d->run_since = 0;
	d->run_start = 0;
	(void)evtimer_del(d->ev_run_kill);
	engine_clock(d);
	if (d->run_stopping) {
		run_hook_stopped(d, pid);
		return;
	}
	if (res->signo != 0)
		engine_set_error(d, "run process killed by signal %d",
		    res->signo);
	else
		engine_set_error(d, "run process exited %d", res->exit_code);
	log_warnx("%s: resigning", d->last_error);
	(void)election_run_exited(d->el);
	engine_step(d);
}

/*
 * Called with the demote the core asked for: 1 when it must wait for the
 * run's end (run_hook_done() starts it), 0 when it may start now. Either
 * way this leadership is over for the run: the next one starts it again.
 */
int
run_hook_before_demote(struct daemon *d, const struct el_action *act)
{
	d->run_led = 0;
	if (d->run_pid == -1)
		return 0;
	if (!d->run_held) {
		d->run_held = 1;
		d->run_demote = *act;
		free(d->run_demote_reason);
		d->run_demote_reason = xstrdup(act->reason);
		/* Not over before it ran: READY=1 waits for it. */
		if (strcmp(act->reason, "startup") == 0)
			d->startup_pid = 0;
	}
	if (!d->run_stopping) {
		d->run_stopping = 1;
		d->run_stop_from = now_ms();
		log_info("stopping run process [%ld] before the demote hook "
		    "(reason %s)", (long)d->run_pid, act->reason);
		hook_cancel(d->hooks, d->run_pid, d->cfg.run_stop_timeout_ms);
		/* Still there (its end comes through SIGCHLD): bound it. */
		if (d->run_pid != -1)
			run_hook_arm_kill(d);
	}
	return 1;
}

/* Its start, as /proc tells it (0 when it cannot: the file names none). */
static void
run_hook_note_start(struct daemon *d)
{
	pid_t pgrp;
	char state;

	if (run_proc_stat(d->run_pid, &state, &pgrp, &d->run_start) == -1 ||
	    pgrp != d->run_pid)
		d->run_start = 0;
}

static void
run_hook_start(struct daemon *d)
{
	struct election_view v;
	char *env[12], epoch[32];
	int n = 0, i;
	pid_t pid;

	election_view(d->el, &v);
	(void)snprintf(epoch, sizeof(epoch), "%lld",
	    (long long)v.leader_epoch);
	engine_env_add(env, &n, "ZKELECT_SERVICE", d->cfg.service);
	engine_env_add(env, &n, "ZKELECT_ID", d->cfg.id);
	engine_env_add(env, &n, "ZKELECT_EVENT", hook_kind_name(HOOK_RUN));
	engine_env_add(env, &n, "ZKELECT_ROLE", election_role_name(v.role));
	engine_env_add(env, &n, "ZKELECT_REASON", "elected");
	engine_env_add(env, &n, "ZKELECT_EPOCH", epoch);
	engine_env_add(env, &n, "ZKELECT_LEADER", d->cfg.id);
	engine_env_add(env, &n, "ZKELECT_LEADER_DATA", d->cfg.data);
	engine_env_add(env, &n, "ZKELECT_DATA", d->cfg.data);
	env[n] = NULL;
	pid = hook_run(d->hooks, HOOK_RUN, d->cfg.hook_run, env, 0,
	    run_hook_done, d);
	for (i = 0; i < n; i++)
		free(env[i]);
	if (pid == -1) {
		engine_set_error(d, "run process could not be started");
		log_warnx("%s: resigning", d->last_error);
		(void)election_run_exited(d->el);
		return;
	}
	/* What its shell leaves behind when it exits is stopped as it is. */
	hook_set_kill_delay(d->hooks, pid, d->cfg.run_stop_timeout_ms);
	d->run_pid = pid;
	d->run_since = time(NULL);
	run_hook_note_start(d);
	log_info("running run process [%ld] (epoch %s)", (long)pid, epoch);
}

/*
 * A reload's hooks.run_stop_timeout reaches the run already running: what
 * its shell leaves behind when it exits is stopped with the new value. A
 * stop under way keeps the SIGKILL its SIGTERM was sent with, and
 * run_hook_kill_at() reads the new value at the next step.
 */
void
run_hook_reloaded(struct daemon *d)
{
	if (d->run_pid != -1 && !d->run_stopping)
		hook_set_kill_delay(d->hooks, d->run_pid,
		    d->cfg.run_stop_timeout_ms);
}

/* The run process a re-exec handed over: this leadership's, running. */
void
run_hook_adopt(struct daemon *d, pid_t pid, int fd, time_t since)
{
	hook_adopt(d->hooks, HOOK_RUN, pid, fd, run_hook_done, d);
	hook_set_kill_delay(d->hooks, pid, d->cfg.run_stop_timeout_ms);
	d->run_pid = pid;
	d->run_since = since;
	d->run_led = 1;
	run_hook_note_start(d);
}

/* For the session file: the run's group and start; 0 when none. */
void
run_hook_facts(const struct daemon *d, int64_t *pgid, int64_t *start)
{
	*pgid = d->run_pid > 0 && d->run_start > 0 ? d->run_pid : 0;
	*start = *pgid != 0 ? (int64_t)d->run_start : 0;
}

/*
 * Called at the end of every step: starts the run once per leadership,
 * when the core says leader, and keeps a stop's SIGKILL in time. Returns
 * 1 when the run could not be started: the resign it asked for is to go
 * out now (once), by another step.
 */
int
run_hook_update(struct daemon *d)
{
	struct election_view v;

	if (d->run_pid != -1) {
		if (d->run_stopping)
			run_hook_arm_kill(d);
		return 0;
	}
	election_view(d->el, &v);
	/* A resumed leader starts it once its session is confirmed. */
	if (d->run_led || d->stopping || v.role != ROLE_LEADER || v.resuming)
		return 0;
	d->run_led = 1;
	if (d->cfg.hook_run == NULL)
		return 0;
	run_hook_start(d);
	return d->run_pid == -1;
}
