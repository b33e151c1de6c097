/*
 * zkelectd: joins a ZooKeeper leader election for a service and tells the
 * world who leads, through a Unix socket, a status file and hooks.
 *
 * One libevent loop owns all state. ZooKeeper's threads hand their news
 * over through zk.c's queue; the election (election.c) decides; this file
 * carries its decisions out and reports the outcome.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "ctl.h"
#include "http.h"
#include "log.h"
#include "notify.h"
#include "resolve.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

/*
 * Descriptors the daemon needs beside its clients (see fd_budget): 32 for
 * itself and the hooks running, and room for the output pipes of ended
 * hooks that what they left running still holds (hook.h).
 */
#define ZKELECTD_FD_RESERVE	(32 + HOOK_LEFTOVER_MAX)

/* Each line begins with pfx: "<3>" when it goes to the journal. */
static void
usage(FILE *f, const char *pfx)
{
	(void)fprintf(f,
	    "%susage: zkelectd [-t] [-c FILE] [-o section.key=value]...\n"
	    "%s  -c, --config FILE   configuration file (default %s)\n"
	    "%s  -o SECTION.KEY=VAL  override one configuration key "
	    "(repeatable)\n"
	    "%s  -t, --check         validate the configuration and exit\n"
	    "%s  -V, --version       print the version and exit\n"
	    "%s  -h, --help          this help\n", pfx, pfx,
	    CONFIG_DEFAULT_PATH, pfx, pfx, pfx, pfx);
}

/*
 * Whether stderr goes to the journal, as log_init() will find it: what
 * goes wrong before then (the command line, the configuration) is written
 * with the same "<3>" prefix as the lines after, so that the journal
 * files why a unit failed as an error (journalctl -p err), not as info.
 */
static int
startup_journal(void)
{
	return getenv("JOURNAL_STREAM") != NULL;
}

/* An error before log_init(): as zkelectd -t always said it, or "<3>". */
static void LOG_PRINTF(1, 2)
startup_error(const char *fmt, ...)
{
	va_list ap;

	(void)fputs(startup_journal() ? "<3>" : "zkelectd: ", stderr);
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fputc('\n', stderr);
}

/*
 * getopt's complaint, in its own words, said as the other startup errors
 * are: getopt's own would go to the journal without a prefix, and begin
 * with argv[0] where every other line says "zkelectd". ch is ':' for a
 * missing argument, '?' for anything else, with optopt the option's
 * letter: 0 for a long option unknown or ambiguous, and a valid letter
 * for a long one given "=VALUE" it does not take.
 */
static void
startup_bad_option(int ch, const char *word, const char *letters)
{
	size_t n = strcspn(word, "=");

	if (ch == ':' && strncmp(word, "--", 2) == 0)
		startup_error("option '%s' requires an argument", word);
	else if (ch == ':')
		startup_error("option requires an argument -- '%c'", optopt);
	else if (optopt == 0)
		startup_error("unrecognized or ambiguous option '%s'", word);
	else if (strchr(letters, optopt) != NULL)
		startup_error("option '%.*s' doesn't allow an argument",
		    (int)n, word);
	else
		startup_error("invalid option -- '%c'", optopt);
}

/* Signals and reload. */

static void
daemon_election_params(const struct daemon *d, struct election_params *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->path = d->epath;
	ep->id = d->cfg.id;
	ep->data = d->cfg.data;
	ep->priority = d->cfg.priority;
	ep->preempt_delay_ms = d->cfg.preempt_delay_ms;
	ep->observer = d->cfg.mode == CONFIG_MODE_OBSERVER;
	ep->fence = d->cfg.hook_fence != NULL;
	ep->demote_on_start = d->cfg.demote_on_start &&
	    d->cfg.mode == CONFIG_MODE_CANDIDATE;
	ep->retry_backoff_ms = d->cfg.retry_backoff_ms;
	ep->disconnect_grace_ms = d->cfg.disconnect_grace_ms < 0 ?
	    EL_GRACE_LEASE : d->cfg.disconnect_grace_ms;
	ep->tick_ms = d->cfg.tick_ms;
	ep->check = d->cfg.hook_check != NULL;
	ep->session_timeout_ms = d->cfg.session_timeout_ms;
	ep->hook_timeout_ms = d->cfg.hook_timeout_ms;
	/* Unset, it follows the negotiated timeout (T/4). */
	ep->demote_timeout_ms = d->cfg.demote_timeout_set ?
	    d->cfg.demote_timeout_ms : 0;
	ep->check_interval_ms = d->cfg.check_interval_ms;
	ep->check_fall = d->cfg.check_fall;
	ep->check_rise = d->cfg.check_rise;
}

/*
 * A new zookeeper.hosts moves the live session to those servers: same
 * session, role and epoch, the client reconnects as after a blip. The
 * list is resolved first, off the loop (resolve.c): a name would make
 * getaddrinfo() wait on DNS, and the loop keeps the lease. The client is
 * then given the addresses, so that it resolves nothing in this thread
 * either. Until the answer comes the old list stays; a list that does not
 * resolve in RESOLVE_MS, or clashes with the old one, is refused. Without
 * a live handle there is nothing to move: the next session takes the list.
 */
static void
daemon_hosts_resolved(const char *hosts, const char *numeric,
    const char *why, void *arg)
{
	struct daemon *d = arg;
	int rc;

	if (numeric == NULL) {
		log_warnx("reload: zookeeper.hosts %s refused: %s; keeping %s",
		    hosts, why, d->cfg.hosts);
		return;
	}
	errno = 0;
	rc = zk_set_hosts(d->zk, numeric);
	if (rc != ZOK && rc != ZINVALIDSTATE) {
		log_warnx("reload: zookeeper.hosts %s refused: %s; keeping %s",
		    hosts, rc == ZSYSTEMERROR ? strerror(errno) :
		    zk_strerror(rc), d->cfg.hosts);
		return;
	}
	log_notice("reload: zookeeper.hosts %s -> %s: the session moves to "
	    "them (%s)", d->cfg.hosts, hosts, numeric);
	free(d->cfg.hosts);
	d->cfg.hosts = xstrdup(hosts);
}

/* The running list stays in nc until the new one is resolved. */
static void
daemon_reload_hosts(struct daemon *d, struct config *nc)
{
	const char *pending = resolver_pending(d->resolver);

	if (strcmp(nc->hosts, d->cfg.hosts) == 0) {
		if (pending != NULL) {
			log_notice("reload: zookeeper.hosts back to %s: the "
			    "move to %s is given up", d->cfg.hosts, pending);
			resolver_cancel(d->resolver);
		}
		return;
	}
	if (!zk_is_open(d->zk)) {
		resolver_cancel(d->resolver);
		log_notice("reload: zookeeper.hosts %s -> %s: the next "
		    "session uses them", d->cfg.hosts, nc->hosts);
		(void)zk_set_hosts(d->zk, nc->hosts);
		return;
	}
	if (pending == NULL || strcmp(pending, nc->hosts) != 0) {
		log_info("reload: resolving zookeeper.hosts %s", nc->hosts);
		resolver_start(d->resolver, zk_hosts(d->zk) != NULL ?
		    zk_hosts(d->zk) : d->cfg.hosts, nc->hosts, RESOLVE_MS);
	}
	free(nc->hosts);
	nc->hosts = xstrdup(d->cfg.hosts);
}

/* The library's period: a change of the names in DNS is followed. */
static void
daemon_refresh(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	daemon_hosts_refresh(arg);
}

static void
daemon_reload(struct daemon *d)
{
	struct election_view v;
	struct election_params ep;
	struct config nc;
	char err[512], *was, *now;
	int64_t asked;
	size_t i;

	notify_reloading(d->notify);
	if (config_load(&nc, d->config_path, d->overrides, d->noverrides,
	    err, sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration",
		    err);
		notify_ready_again(d->notify);
		return;
	}
	/* What a running daemon cannot take over stays (config_fixed.c). */
	for (i = 0; i < config_fixed_count(); i++) {
		was = config_fixed_value(&d->cfg, i);
		now = config_fixed_value(&nc, i);
		if (strcmp(was, now) != 0)
			log_warnx("reload: %s cannot change while running; "
			    "restart to apply it", config_fixed_name(i));
		free(was);
		free(now);
	}
	asked = nc.demote_timeout_ms;
	if (config_keep_fixed(&nc, &d->cfg))
		log_warnx("reload: hooks.demote_timeout %lldms is not less "
		    "than a third of the running zookeeper.session_timeout "
		    "(%lldms); keeping %lldms", (long long)asked,
		    (long long)nc.session_timeout_ms,
		    (long long)nc.demote_timeout_ms);
	daemon_reload_hosts(d, &nc);
	config_free(&d->cfg);
	d->cfg = nc;
	run_hook_reloaded(d);
	daemon_election_params(d, &ep);
	election_reconfigure(d->el, &ep);
	log_setlevel(d->cfg.log_level);
	zk_set_loglevel(d->cfg.log_level);
	election_view(d->el, &v);
	if (v.demote_clamped)
		log_warnx("reload: hooks.demote_timeout %lld ms is not below a "
		    "third of the negotiated session timeout %lld ms: using "
		    "%lld ms", (long long)d->cfg.demote_timeout_ms,
		    (long long)v.session_timeout_ms,
		    (long long)v.demote_timeout_ms);
	d->warned_clamp = v.demote_clamped;
	log_info("configuration reloaded from %s", d->config_path);
	notify_ready_again(d->notify);
	daemon_step(d);
}

static void
daemon_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		if (d->stopping) {
			log_info("already stopping");
			break;
		}
		/* The demote (when leading) starts first, the words after. */
		d->stopping = 1;
		election_stop(d->el);
		daemon_step(d);
		log_notice("received %s: stopping",
		    sig == SIGTERM ? "SIGTERM" : "SIGINT");
		notify_stopping(d->notify);
		break;
	case SIGHUP:
		daemon_reload(d);
		break;
	case SIGUSR1:
		/* Logs go to stderr: there is nothing to reopen. */
		log_info("received SIGUSR1: ignored");
		break;
	case SIGUSR2:
		reexec_request(d);
		break;
	case SIGCHLD:
		hook_runner_reap(d->hooks);
		break;
	}
}

static void
daemon_mkdir_parent(const char *path)
{
	char *dir, *slash;

	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) == -1 && errno != EEXIST)
			log_warn("mkdir %s", dir);
	}
	free(dir);
}

/*
 * Descriptors: each control client holds one, and so may each HTTP
 * connection; the rest (ZooKeeper's socket and pipes, the hooks' pipes,
 * those of ended hooks that their leftovers hold, the status file,
 * timers, signals, sd_notify) must always be there, or a demote hook
 * could not start. The soft limit is raised as far as that needs (up to
 * the hard one) and max_clients lowered to what fits.
 */
static int
zkelectd_fd_budget(const struct config *cfg)
{
	struct rlimit rl;
	rlim_t fixed, need, got;
	int max = (int)cfg->max_clients;

	fixed = ZKELECTD_FD_RESERVE + (cfg->nhttp_listen > 0 ?
	    HTTP_MAX_FDS + (rlim_t)cfg->nhttp_listen : 0);
	need = fixed + (rlim_t)max;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("getrlimit RLIMIT_NOFILE");
		return max;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		got = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY &&
		    rl.rlim_max < need ? rl.rlim_max : need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
			log_warn("setrlimit RLIMIT_NOFILE %llu",
			    (unsigned long long)rl.rlim_cur);
			rl.rlim_cur = got;
		}
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return max;
	got = rl.rlim_cur > fixed ? rl.rlim_cur - fixed : 1;
	log_warnx("control.max_clients %d and %llu descriptors kept for "
	    "hooks, ZooKeeper%s do not fit the open-files limit %llu: "
	    "serving at most %llu control clients (raise LimitNOFILE=)",
	    max, (unsigned long long)(fixed), cfg->nhttp_listen > 0 ?
	    " and HTTP" : "", (unsigned long long)rl.rlim_cur,
	    (unsigned long long)got);
	return (int)got;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const int sigs[7] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD,
	    SIGUSR1, SIGUSR2, 0 };
	struct timeval refresh_tv = { 30, 0 };
	struct election_params ep;
	struct ctl_params cp;
	struct daemon d;
	struct status st;
	struct election_view v;
	char err[512], ctlerr[512], *text;
	int ch, check = 0, i;

	memset(&d, 0, sizeof(d));
	d.config_path = CONFIG_DEFAULT_PATH;
	/* Kept as given (getopt may permute argv): a re-exec runs it again. */
	d.argv = xcalloc((size_t)argc + 1, sizeof(char *));
	for (i = 0; i < argc; i++)
		d.argv[i] = argv[i];
	/*
	 * getopt's complaints are said here, as every startup error, with the
	 * prefix under the journal; the leading ':' silences getopt's own and
	 * tells a missing argument apart.
	 */
	while ((ch = getopt_long(argc, argv, ":c:o:tVh", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'c':
			d.config_path = optarg;
			break;
		case 'o':
			d.overrides = xreallocarray(d.overrides,
			    d.noverrides + 1, sizeof(char *));
			d.overrides[d.noverrides++] = optarg;
			break;
		case 't':
			check = 1;
			break;
		case 'V':
			(void)printf("zkelectd %s\n", ZKELECTD_VERSION);
			free(d.overrides);
			free(d.argv);
			return 0;
		case 'h':
			usage(stdout, "");
			free(d.overrides);
			free(d.argv);
			return 0;
		default:
			startup_bad_option(ch, argv[optind - 1], "cotVh");
			usage(stderr, startup_journal() ? "<3>" : "");
			free(d.overrides);
			free(d.argv);
			return 2;
		}
	}
	if (optind != argc) {
		startup_error("unexpected argument: %s", argv[optind]);
		usage(stderr, startup_journal() ? "<3>" : "");
		free(d.overrides);
		free(d.argv);
		return 2;
	}
	/*
	 * -t also looks up what the start would refuse (systemd's reload
	 * runs it); the start leaves that to the step that needs it, and a
	 * re-exec that inherits its socket needs none of it.
	 */
	if ((check ? config_check : config_load)(&d.cfg, d.config_path,
	    d.overrides, d.noverrides, err, sizeof(err)) == -1) {
		startup_error("%s", err);
		free(d.overrides);
		free(d.argv);
		return 1;
	}
	if (check) {
		(void)printf("configuration OK\n");
		config_free(&d.cfg);
		free(d.overrides);
		free(d.argv);
		return 0;
	}
	log_init("zkelectd", d.cfg.log_level);
	zk_set_loglevel(d.cfg.log_level);
	reexec_inherit(&d);
	crashed_init(&d);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal");
	/* Children a hook leaves behind are ours to reap, not init's. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl PR_SET_CHILD_SUBREAPER");
	if ((d.base = event_base_new()) == NULL)
		fatalx("event_base_new");

	d.pid = getpid();
	d.epath = config_election_path(&d.cfg);
	(void)xasprintf(&d.cpath, "%s/candidates", d.epath);
	d.last_leader = xstrdup("");
	d.last_role = ROLE_UNKNOWN;
	d.since = time(NULL);
	d.zk_state = ZOO_CONNECTING_STATE;
	d.hook_pid = -1;
	d.startup_pid = -1;
	d.notify_pid = -1;
	d.notified_leader = xstrdup("");
	d.armed_deadline = -1;
	d.step = daemon_step;

	memset(&cp, 0, sizeof(cp));
	cp.path = d.cfg.socket_path;
	cp.mode = d.cfg.socket_mode;
	cp.group = d.cfg.socket_group;
	cp.max_clients = zkelectd_fd_budget(&d.cfg);
	cp.idle_timeout_ms = 5000;
	cp.inherit_fd = d.rx_ctl;
	d.ctl = ctl_open(d.base, &cp, command_handle, &d, ctlerr,
	    sizeof(ctlerr));
	if (d.ctl == NULL)
		fatalx("%s", ctlerr);
	/*
	 * The image before a re-exec passed this at its start (or was a
	 * version that did not check, and ending it here would be a crash).
	 */
	if (!d.rx_inherited &&
	    resume_exclusive(&d, ctlerr, sizeof(ctlerr)) == -1) {
		ctl_close(d.ctl);
		fatalx("%s", ctlerr);
	}
	if (d.cfg.nhttp_listen > 0 && http_open(&d, ctlerr,
	    sizeof(ctlerr)) == -1)
		fatalx("%s", ctlerr);
	daemon_mkdir_parent(d.cfg.status_file);

	d.hooks = hook_runner_new(d.base);
	d.notify = notify_new(d.base);
	d.zk = zk_new(d.base, daemon_zk_event, &d);
	zk_set_batch(d.zk, daemon_zk_batch);
	d.resolver = resolver_new(d.base, daemon_hosts_resolved, &d);
	d.open_resolver = resolver_new(d.base, daemon_hosts_fresh, &d);
	daemon_election_params(&d, &ep);
	/* A re-exec with no session: the image before ran no hook undone. */
	if (d.rx_inherited && !d.rx_session)
		ep.demote_on_start = 0;
	d.el = election_new(&ep);
	/*
	 * Once the socket is ours and nobody answers at its sibling: no other
	 * live daemon uses this session file, and the file names its owner.
	 */
	(void)resume_load(&d);
	if (d.rx_paused)
		election_pause(d.el, 1);
	run_hook_init(&d);
	slot_hook_init(&d);
	reexec_adopt(&d);

	for (i = 0; sigs[i] != 0; i++) {
		d.ev_sig[i] = evsignal_new(d.base, sigs[i], daemon_signal, &d);
		if (d.ev_sig[i] == NULL || event_add(d.ev_sig[i], NULL) == -1)
			fatalx("signal event");
	}
	/* What a re-exec blocked (reexec.c) arrives now, if it came. */
	reexec_unblock();
	/* Its end may have come during the exec: looked at in the loop. */
	if (d.rx_run_pid != -1 && kill(d.pid, SIGCHLD) == -1)
		log_warn("kill SIGCHLD");
	/*
	 * One timer for all the election's deadlines, on the lease's clock:
	 * after a suspend it fires at once, so a leader demotes on wake.
	 */
	d.deadline_fd = timerfd_create(CLOCK_BOOTTIME,
	    TFD_NONBLOCK | TFD_CLOEXEC);
	if (d.deadline_fd == -1)
		fatal("timerfd_create");
	d.ev_deadline = event_new(d.base, d.deadline_fd, EV_READ | EV_PERSIST,
	    daemon_deadline, &d);
	d.ev_reopen = evtimer_new(d.base, daemon_reopen, &d);
	d.ev_count = evtimer_new(d.base, daemon_count, &d);
	d.ev_refresh = event_new(d.base, -1, EV_PERSIST, daemon_refresh, &d);
	d.ev_publish = event_new(d.base, -1, 0, daemon_publish, &d);
	if (d.ev_deadline == NULL || d.ev_reopen == NULL || d.ev_count == NULL ||
	    d.ev_publish == NULL || d.ev_refresh == NULL ||
	    event_add(d.ev_deadline, NULL) == -1 ||
	    event_add(d.ev_refresh, &refresh_tv) == -1)
		fatalx("event_new");
	engine_arm(d.ev_count, d.cfg.session_timeout_ms / 3);

	log_notice("starting: service %s, id %s, %s, election path %s",
	    d.cfg.service, d.cfg.id, d.cfg.mode == CONFIG_MODE_OBSERVER ?
	    "observer" : "candidate", d.epath);
	daemon_open(&d);
	daemon_step(&d);
	if (event_base_dispatch(d.base) == -1)
		fatalx("event_base_dispatch");

	/* Closing the session removes whatever ephemeral node is left. */
	zk_close(d.zk);
	resume_remove(&d);
	crashed_remove(&d);
	queue_read_fail(&d, "error stopping");
	daemon_stop_answer(&d);
	switchover_stop(&d);
	/* No publishing still due may overwrite "stopped". */
	(void)event_del(d.ev_publish);
	daemon_status(&d, &st, &v);
	st.role = election_role_name(ROLE_STOPPED);
	st.zk_state = "connecting";
	text = status_render(&st, 0);
	if (status_write(d.cfg.status_file, text) == -1) {
		log_warn("write %s", d.cfg.status_file);
		/*
		 * No retry comes after this one: better no file than one that
		 * names this exited process in its role. Its removal frees
		 * room (a full /run) for one more try.
		 */
		if (unlink(d.cfg.status_file) == -1 && errno != ENOENT)
			log_warn("unlink %s", d.cfg.status_file);
		else if (status_write(d.cfg.status_file, text) == -1)
			log_warn("%s removed, not written", d.cfg.status_file);
	}
	free(text);
	/*
	 * The last watch line (role=stopped) is queued: give the loop a few
	 * turns to write it before the sockets close.
	 */
	for (i = 0; i < 4; i++)
		(void)event_base_loop(d.base, EVLOOP_NONBLOCK);
	log_notice("stopped");

	reexec_free(&d);
	switchover_free(&d);
	ctl_close(d.ctl);
	http_close(&d);
	hook_runner_free(d.hooks);
	run_hook_free(&d);
	slot_hook_free(&d);
	resolver_free(d.resolver);
	resolver_free(d.open_resolver);
	zk_free(d.zk);
	election_free(d.el);
	notify_free(d.notify);
	for (i = 0; sigs[i] != 0; i++)
		event_free(d.ev_sig[i]);
	event_free(d.ev_deadline);
	(void)close(d.deadline_fd);
	event_free(d.ev_reopen);
	event_free(d.ev_count);
	event_free(d.ev_refresh);
	event_free(d.ev_publish);
	event_base_free(d.base);
	free(d.epath);
	free(d.cpath);
	free(d.last_error);
	free(d.last_report);
	free(d.last_watch);
	free(d.last_leader);
	free(d.notified_leader);
	free(d.overrides);
	free(d.argv);
	config_free(&d.cfg);
	return 0;
}
