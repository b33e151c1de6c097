/*
 * SIGUSR2: the daemon executes its binary again in place (a package
 * upgrade replaced it), keeping its pid, its ZooKeeper session, its
 * listening sockets and hooks.run's process, so that no hook runs and no
 * leadership moves.
 *
 * The old image checks the configuration first: a broken file, or one
 * that changes what a running daemon keeps (config_fixed.c), refuses the
 * re-exec, and the old image goes on. So does a new binary whose own
 * `-t` fails (it cannot start here, or rejects the file): it is run
 * beside the loop first. Then it waits for its moment: no hook
 * in the slot or starting up, hooks.notify done, hooks.run not being
 * stopped, no resign, pause or switchover still to answer, no queue read
 * and no election request in flight (clients are served meanwhile); then
 * the control and HTTP listeners no longer accepting (the kernel queues
 * new clients for the next image) and the clients already accepted
 * answered; and, for a leader, a lease just renewed, so that the next
 * image has the most of it to confirm the session in. What holds it back
 * for longer than a switchover's deadline and T gives it up (logged): it
 * never execs with a command not answered. It writes the
 * session file (id, password, lease, role: resume.c), clears FD_CLOEXEC
 * on the descriptors it hands over, names them in ZKELECTD_REEXEC, checks
 * the configuration again (it may have been edited meanwhile), and
 * executes the path its binary was started from (reexec_exe()): the file
 * installed there now. If execve fails, the old image goes on as before.
 *
 * The next image takes the descriptors over (reexec_inherit(), before
 * anything is opened), closes whatever else the old one left open (its
 * ZooKeeper connection), re-attaches the session and adopts hooks.run's
 * process (still its child: the pid is the same).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "ctl.h"
#include "http.h"
#include "log.h"
#include "notify.h"
#include "session_file.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

#define REEXEC_ENV	"ZKELECTD_REEXEC"
#define REEXEC_POLL_MS	20
/*
 * From the moment nothing else holds the re-exec back: a client that has
 * sent no command by then is cut (one that has is answered first).
 */
#define REEXEC_DRAIN_MS	1000
#define REEXEC_DELETED	" (deleted)"

/*
 * The binary a re-exec runs: the path this image was started from,
 * resolved once, at start. Read at the re-exec instead, /proc/self/exe
 * would follow the running file wherever a rename moved it (mv zkelectd
 * zkelectd.old, then a new zkelectd installed) and run the old binary
 * again. A package's rename over the path leaves the link reading
 * "PATH (deleted)" at the re-exec, but it is read before that.
 */
static char *
reexec_exe(void)
{
	char buf[4096];
	ssize_t n;
	size_t dl = strlen(REEXEC_DELETED);

	if ((n = readlink("/proc/self/exe", buf, sizeof(buf))) == -1) {
		log_warn("readlink /proc/self/exe: SIGUSR2 will be refused");
		return NULL;
	}
	if ((size_t)n >= sizeof(buf)) {
		log_warnx("readlink /proc/self/exe: too long: SIGUSR2 will be "
		    "refused");
		return NULL;
	}
	buf[n] = '\0';
	/* Replaced since it started (an upgrade): the path is the same. */
	if ((size_t)n > dl && strcmp(buf + n - dl, REEXEC_DELETED) == 0)
		buf[n - dl] = '\0';
	return xstrdup(buf);
}

/*
 * As `zkelectd -t` would (the new image must start), and nothing kept
 * changed: 0, or -1 once the refusal is logged.
 */
static int
reexec_config_check(struct daemon *d, const char *when)
{
	struct config nc;
	char err[512], *was, *now;
	size_t i;
	int rc = 0;

	if (config_load(&nc, d->config_path, d->overrides, d->noverrides,
	    err, sizeof(err)) == -1) {
		log_warnx("%s: %s; re-exec refused, the running daemon goes "
		    "on", when, err);
		return -1;
	}
	for (i = 0; i < config_fixed_count() && rc == 0; i++) {
		was = config_fixed_value(&d->cfg, i);
		now = config_fixed_value(&nc, i);
		if (strcmp(was, now) != 0) {
			log_warnx("%s: %s changed from %s to %s in %s, which a "
			    "running daemon cannot take over; re-exec "
			    "refused, the running daemon goes on: restore it "
			    "to re-exec, or restart to apply it (a leader "
			    "then hands over)", when, config_fixed_name(i), was,
			    now, d->config_path);
			rc = -1;
		}
		free(was);
		free(now);
	}
	config_free(&nc);
	return rc;
}

static void
reexec_cloexec(int fd, int on)
{
	int fl;

	if (fd <= 2)
		return;
	if ((fl = fcntl(fd, F_GETFD)) == -1 ||
	    fcntl(fd, F_SETFD, on ? fl | FD_CLOEXEC : fl & ~FD_CLOEXEC) == -1)
		log_warn("fcntl %d", fd);
}

/* The descriptors handed over, FD_CLOEXEC set (1) or cleared (0). */
static void
reexec_mark(struct daemon *d, int on)
{
	size_t i;
	int fd;

	reexec_cloexec(ctl_listen_fd(d->ctl), on);
	for (i = 0; (fd = http_listen_fd(d, i)) != -1; i++)
		reexec_cloexec(fd, on);
	if (d->run_pid != -1)
		reexec_cloexec(hook_output_fd(d->hooks, d->run_pid), on);
}

/*
 * The signals the daemon handles, blocked across the exec: their default
 * action would end the new image before it has its handlers (a second
 * SIGUSR2, a SIGTERM), and a pending one is kept for it.
 */
static void
reexec_block(int how)
{
	sigset_t set;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	(void)sigaddset(&set, SIGUSR1);
	(void)sigaddset(&set, SIGUSR2);
	if (sigprocmask(how, &set, NULL) == -1)
		log_warn("sigprocmask");
}

/* In the new image, once its handlers are in place. */
void
reexec_unblock(void)
{
	reexec_block(SIG_UNBLOCK);
}

/* The control and HTTP listeners accept (1), or leave clients queued. */
static void
reexec_listen(struct daemon *d, int on)
{
	if (d->rx_closed == !on)
		return;
	d->rx_closed = !on;
	ctl_accepting(d->ctl, on);
	http_accepting(d, on);
}

static void
reexec_abort(struct daemon *d)
{
	/* Its end is still reaped as the check's (reexec_request). */
	if (d->rx_check_pid != -1 && !d->rx_check_done &&
	    kill(d->rx_check_pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("kill %ld", (long)d->rx_check_pid);
	d->rx_pending = 0;
	(void)evtimer_del(d->ev_rx);
	reexec_listen(d, 1);
	notify_ready_again(d->notify);
}

static void
reexec_hex(struct textbuf *b, const char *s)
{
	for (; *s != '\0'; s++)
		textbuf_printf(b, "%02x", (unsigned)(unsigned char)*s);
}

/* reexec_hex()'s text back in place; -1 when it is not hex. */
static int
reexec_unhex(char *s)
{
	char *out = s;
	unsigned v;

	if (strlen(s) % 2 != 0)
		return -1;
	for (; *s != '\0'; s += 2) {
		if (sscanf(s, "%2x", &v) != 1 ||
		    !isxdigit((unsigned char)s[0]) ||
		    !isxdigit((unsigned char)s[1]) || v == 0)
			return -1;
		*out++ = (char)v;
	}
	*out = '\0';
	return 0;
}

static char *
reexec_env(struct daemon *d, int session)
{
	struct election_view v;
	struct textbuf b;
	size_t i;
	int fd;

	memset(&b, 0, sizeof(b));
	election_view(d->el, &v);
	/* What a resume not yet confirmed holds is still a guess. */
	textbuf_printf(&b, "ctl=%d session=%d exact=%d paused=%d unhealthy=%d "
	    "http=", ctl_listen_fd(d->ctl), session, !v.resuming,
	    v.paused != 0, v.unhealthy != 0);
	for (i = 0; (fd = http_listen_fd(d, i)) != -1; i++)
		textbuf_printf(&b, "%s%d", i > 0 ? "," : "", fd);
	if (d->run_pid != -1)
		textbuf_printf(&b, " run=%ld,%d,%lld", (long)d->run_pid,
		    hook_output_fd(d->hooks, d->run_pid),
		    (long long)d->run_since);
	/*
	 * What it reported and last told hooks.notify: the new image goes
	 * on from there, with no role change, election won or notify of
	 * its own (the contract: the role kept, no hook). Ids come from
	 * ZooKeeper and may hold anything: in hex.
	 */
	textbuf_printf(&b, " view=%d,%lld,%lld,", (int)d->last_role,
	    (long long)d->since, (long long)d->last_leader_epoch);
	reexec_hex(&b, d->last_leader);
	textbuf_printf(&b, " notified=%lld,", (long long)d->notified_epoch);
	reexec_hex(&b, d->notified_leader);
	return b.p;
}

static void
reexec_exec(struct daemon *d)
{
	struct election_view v;
	const char *path = d->rx_exe;
	char *env;
	int session;

	if (reexec_config_check(d, "re-exec") == -1) {
		reexec_abort(d);
		return;
	}
	/* The session goes over in its file, with the freshest lease. */
	if (d->session_text != NULL)
		explicit_bzero(d->session_text, strlen(d->session_text));
	free(d->session_text);
	d->session_text = NULL;
	resume_save(d);
	session = d->session_text != NULL && d->session_text[0] != '\0';
	election_view(d->el, &v);
	if (!session && v.sid != 0) {
		/*
		 * The next image would start a session of its own while this
		 * one, and what it holds, lives on unsupervised.
		 */
		log_warnx("re-exec refused: the session file %s cannot be "
		    "written; the running daemon goes on", d->session_path);
		reexec_abort(d);
		return;
	}
	if (!session && d->session_path != NULL)
		session_file_remove(d->session_path);
	env = reexec_env(d, session);
	/* The next image keeps the crash script where the unit wants it. */
	if (setenv(REEXEC_ENV, env, 1) == -1 || (d->crashed_path != NULL &&
	    setenv("ZKELECTD_CRASHED", d->crashed_path, 1) == -1)) {
		log_warn("re-exec: setenv");
		free(env);
		reexec_abort(d);
		return;
	}
	free(env);
	log_notice("re-executing %s (pid %ld, %s)", path, (long)d->pid,
	    election_role_name(election_role(d->el)));
	reexec_mark(d, 0);
	reexec_block(SIG_BLOCK);
	(void)execv(path, d->argv);
	reexec_block(SIG_UNBLOCK);
	log_warn("re-exec: execv %s: the running daemon goes on", path);
	reexec_mark(d, 1);
	(void)unsetenv(REEXEC_ENV);
	(void)unsetenv("ZKELECTD_CRASHED");
	reexec_abort(d);
}

/*
 * What the exec would cut short, or NULL: a hook, and every command or
 * request whose answer is still to come. Each of them ends by itself (a
 * hook at its timeout; a resign, pause or switchover with ok or an error;
 * a request with ZooKeeper's answer or the connection's loss), and an
 * image that does not know of it could neither answer its client nor
 * finish it (a resign's release lost, the node promoted again).
 */
static const char *
reexec_busy(struct daemon *d)
{
	if (d->rx_check_pid != -1)
		return "the new binary's check";
	if (d->hook_pid != -1 || d->startup_pid != -1)
		return "a hook";
	if (d->notify_pid != -1)
		return "hooks.notify";
	if (d->run_stopping)
		return "the stop of hooks.run";
	if (d->resign_waiters != NULL)
		return "a resign";
	if (d->pause_waiters != NULL)
		return "a pause";
	if (d->sw_client != 0 || d->sw_target != NULL)
		return "a switchover";
	if (d->queries != NULL)
		return "a read of the queue";
	if (d->el_nreq > 0)
		return "an election request";
	return NULL;
}

/*
 * How long a re-exec may wait for what it cannot cut short: a
 * switchover's own deadline (the promote hook's timeout and 2 T), and T
 * more. A resign that ZooKeeper cannot take for longer would postpone it
 * for as long: it is given up instead.
 */
static int64_t
reexec_bound(const struct daemon *d)
{
	return d->cfg.hook_timeout_ms + 3 * d->cfg.session_timeout_ms;
}

/* Whether now is the moment: 1 go, 0 wait, -1 given up (logged). */
static int
reexec_ready(struct daemon *d)
{
	struct election_view v;
	const char *busy;
	int64_t now = now_ms(), waited;

	election_view(d->el, &v);
	if ((busy = reexec_busy(d)) != NULL) {
		if (now - d->rx_since >= reexec_bound(d)) {
			log_warnx("re-exec given up: %s still under way after "
			    "%lld ms; the running daemon goes on (send SIGUSR2 "
			    "again)", busy, (long long)(now - d->rx_since));
			return -1;
		}
		/* Clients are answered meanwhile, as ever. */
		d->rx_quiet_since = 0;
		reexec_listen(d, 1);
		return 0;
	}
	/*
	 * From here on the kernel queues new clients for the next image:
	 * those accepted already are answered first, and the drain and the
	 * lease's wait count from now, not from the signal.
	 */
	if (d->rx_quiet_since == 0) {
		d->rx_quiet_since = now;
		d->rx_lease_end = v.lease_end;
		reexec_listen(d, 0);
	}
	waited = now - d->rx_quiet_since;
	if ((ctl_busy(d->ctl) > 0 || http_busy(d) > 0) &&
	    waited < REEXEC_DRAIN_MS)
		return 0;
	/* A leader goes with a lease just renewed, or after T/2 anyway. */
	if (v.role == ROLE_LEADER && v.lease_end == d->rx_lease_end &&
	    waited < v.session_timeout_ms / 2)
		return 0;
	return 1;
}

static void
reexec_poll(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	if (!d->rx_pending)
		return;
	if (d->stopping) {
		log_notice("re-exec given up: stopping");
		reexec_abort(d);
		return;
	}
	if (d->rx_check_pid != -1 && reexec_check_poll(d) == -1) {
		reexec_abort(d);
		return;
	}
	switch (reexec_ready(d)) {
	case 1:
		reexec_exec(d);
		return;
	case -1:
		reexec_abort(d);
		return;
	}
	engine_arm(d->ev_rx, REEXEC_POLL_MS);
}

void
reexec_request(struct daemon *d)
{
	if (d->stopping || d->rx_pending) {
		log_info("received SIGUSR2: %s", d->stopping ? "stopping" :
		    "a re-exec is under way already");
		return;
	}
	if (d->rx_exe == NULL) {
		log_warnx("received SIGUSR2: the binary's path was not known "
		    "at start; re-exec refused");
		return;
	}
	if (reexec_config_check(d, "received SIGUSR2") == -1)
		return;
	if (access(d->rx_exe, X_OK) == -1) {
		log_warn("received SIGUSR2: %s; re-exec refused", d->rx_exe);
		return;
	}
	/* The check of a re-exec given up is still to be reaped. */
	if (d->rx_check_pid != -1) {
		if (!d->rx_check_done) {
			log_warnx("received SIGUSR2: the check of the re-exec "
			    "given up before has not ended; refused");
			return;
		}
		reexec_check_clear(d);
	}
	if (reexec_check_start(d) == -1)
		return;
	log_notice("received SIGUSR2: re-executing %s once the hooks, "
	    "commands and clients allow", d->rx_exe);
	notify_reloading(d->notify);
	d->rx_pending = 1;
	d->rx_since = now_ms();
	d->rx_quiet_since = 0;
	reexec_poll(-1, 0, d);
}

/* Closes what the old image left open, but for the descriptors kept. */
static void
reexec_close_rest(struct daemon *d)
{
	DIR *dir;
	struct dirent *de;
	int *fds = NULL, n = 0, fd, dfd, i;
	size_t j;
	const char *why;
	int64_t v;

	if ((dir = opendir("/proc/self/fd")) == NULL) {
		log_warn("re-exec: opendir /proc/self/fd");
		return;
	}
	dfd = dirfd(dir);
	while ((de = readdir(dir)) != NULL) {
		if (parse_int64(de->d_name, 3, INT32_MAX, &v, &why) == -1)
			continue;
		fd = (int)v;
		if (fd == dfd || fd == d->rx_ctl || fd == d->rx_run_fd)
			continue;
		for (j = 0; j < d->rx_nhttp && d->rx_http[j] != fd; j++)
			;
		if (j < d->rx_nhttp)
			continue;
		fds = xreallocarray(fds, (size_t)n + 1, sizeof(*fds));
		fds[n++] = fd;
	}
	(void)closedir(dir);
	for (i = 0; i < n; i++)
		(void)close(fds[i]);
	free(fds);
}

static int
reexec_fd(const char *s, int *fd)
{
	const char *why;
	int64_t v;

	if (parse_int64(s, 3, INT32_MAX, &v, &why) == -1 ||
	    fcntl((int)v, F_GETFD) == -1)
		return -1;
	*fd = (int)v;
	reexec_cloexec(*fd, 1);
	return 0;
}

static int
reexec_parse_run(struct daemon *d, char *s)
{
	char *pid, *fd, *since;
	const char *why;
	int64_t v;

	pid = strsep(&s, ",");
	fd = strsep(&s, ",");
	since = s;
	if (pid == NULL || fd == NULL || since == NULL ||
	    parse_int64(pid, 2, INT32_MAX, &v, &why) == -1)
		return -1;
	d->rx_run_pid = (pid_t)v;
	if (parse_int64(since, 0, INT64_MAX, &v, &why) == -1)
		return -1;
	d->rx_run_since = (time_t)v;
	/* Its output may have ended (the pipe closed): none then. */
	if (strcmp(fd, "-1") == 0)
		return 0;
	if (reexec_fd(fd, &d->rx_run_fd) == -1)
		return -1;
	return fcntl(d->rx_run_fd, F_SETFL, O_NONBLOCK);
}

/* view=ROLE,SINCE,EPOCH,LEADER: what the image before reported. */
static int
reexec_parse_view(struct daemon *d, char *s)
{
	char *role, *since, *epoch;
	const char *why;
	int64_t r, t, e;

	role = strsep(&s, ",");
	since = strsep(&s, ",");
	epoch = strsep(&s, ",");
	if (role == NULL || since == NULL || epoch == NULL || s == NULL ||
	    parse_int64(role, ROLE_UNKNOWN, ROLE_OBSERVER, &r, &why) == -1 ||
	    parse_int64(since, 0, INT64_MAX, &t, &why) == -1 ||
	    parse_int64(epoch, 0, INT64_MAX, &e, &why) == -1 ||
	    reexec_unhex(s) == -1)
		return -1;
	d->rx_role = (enum role)r;
	d->rx_role_since = (time_t)t;
	d->rx_leader_epoch = e;
	d->rx_leader = xstrdup(s);
	return 0;
}

/* notified=EPOCH,LEADER: what hooks.notify was last told. */
static int
reexec_parse_notified(struct daemon *d, char *s)
{
	char *epoch;
	const char *why;
	int64_t e;

	epoch = strsep(&s, ",");
	if (epoch == NULL || s == NULL ||
	    parse_int64(epoch, 0, INT64_MAX, &e, &why) == -1 ||
	    reexec_unhex(s) == -1)
		return -1;
	d->rx_notified_epoch = e;
	d->rx_notified = xstrdup(s);
	return 0;
}

static int
reexec_parse(struct daemon *d, char *s)
{
	char *item, *val, *fd;
	int fl;

	while ((item = strsep(&s, " ")) != NULL) {
		if ((val = strchr(item, '=')) == NULL)
			return -1;
		*val++ = '\0';
		if (strcmp(item, "ctl") == 0) {
			if (reexec_fd(val, &d->rx_ctl) == -1)
				return -1;
		} else if (strcmp(item, "session") == 0)
			d->rx_session = strcmp(val, "1") == 0;
		else if (strcmp(item, "paused") == 0)
			d->rx_paused = strcmp(val, "1") == 0;
		else if (strcmp(item, "unhealthy") == 0)
			d->rx_unhealthy = strcmp(val, "1") == 0;
		else if (strcmp(item, "exact") == 0)
			d->rx_exact = strcmp(val, "1") == 0;
		else if (strcmp(item, "http") == 0) {
			while ((fd = strsep(&val, ",")) != NULL && *fd != '\0') {
				if (d->rx_nhttp == RX_HTTP_MAX ||
				    reexec_fd(fd, &d->rx_http[d->rx_nhttp]) ==
				    -1)
					return -1;
				fl = fcntl(d->rx_http[d->rx_nhttp], F_GETFL);
				if (fl == -1 || fcntl(d->rx_http[d->rx_nhttp],
				    F_SETFL, fl | O_NONBLOCK) == -1)
					return -1;
				d->rx_nhttp++;
			}
		} else if (strcmp(item, "run") == 0) {
			if (reexec_parse_run(d, val) == -1)
				return -1;
		} else if (strcmp(item, "view") == 0) {
			if (reexec_parse_view(d, val) == -1)
				return -1;
		} else if (strcmp(item, "notified") == 0) {
			if (reexec_parse_notified(d, val) == -1)
				return -1;
		}
	}
	/* Both or neither: a view without what notify was told is none. */
	d->rx_view = d->rx_leader != NULL && d->rx_notified != NULL;
	return 0;
}

/*
 * The control socket goes on at the path it is bound at: the image before
 * refused a re-exec to another control.socket, but an older version did
 * not, and the file may have been edited in the instant before the exec.
 * Its session file is the one that goes with that path.
 */
static void
reexec_keep_socket(struct daemon *d)
{
	char bound[256];

	if (d->rx_ctl <= 0 ||
	    ctl_listen_bound(d->rx_ctl, bound, sizeof(bound)) == -1 ||
	    strcmp(bound, d->cfg.socket_path) == 0)
		return;
	log_warnx("re-exec: control.socket %s cannot change while running: "
	    "keeping %s, restart to apply it", d->cfg.socket_path, bound);
	free(d->cfg.socket_path);
	d->cfg.socket_path = xstrdup(bound);
}

/* At start, and in the new image before anything is opened. */
void
reexec_inherit(struct daemon *d)
{
	const char *env = getenv(REEXEC_ENV);
	char *s;

	d->rx_run_pid = -1;
	d->rx_run_fd = -1;
	d->rx_check_pid = -1;
	d->rx_check_fd = -1;
	d->rx_exe = reexec_exe();
	if (env == NULL)
		return;
	s = xstrdup(env);
	(void)unsetenv(REEXEC_ENV);
	d->rx_inherited = 1;
	if (reexec_parse(d, s) == -1)
		log_warnx("re-exec: %s: cannot be read in full", REEXEC_ENV);
	free(s);
	reexec_keep_socket(d);
	/* Listeners changed in the file are bound anew. */
	if (d->rx_nhttp != d->cfg.nhttp_listen) {
		while (d->rx_nhttp > 0)
			(void)close(d->rx_http[--d->rx_nhttp]);
	}
	reexec_close_rest(d);
}

/*
 * The image before's view, as if this one had reported it: a leader
 * resumed as such makes no role change (no log line, no new since, no
 * history entry, no election won), and hooks.notify runs again only for
 * a leader other than the one it was told of.
 */
static void
reexec_adopt_view(struct daemon *d)
{
	if (!d->rx_view)
		return;
	d->last_role = d->rx_role;
	d->since = d->rx_role_since;
	d->hist.role = d->rx_role;
	d->hist.paused = d->rx_paused;
	d->hist.unhealthy = d->rx_unhealthy;
	free(d->last_leader);
	d->last_leader = d->rx_leader;
	d->rx_leader = NULL;
	d->last_leader_epoch = d->rx_leader_epoch;
	free(d->notified_leader);
	d->notified_leader = d->rx_notified;
	d->rx_notified = NULL;
	d->notified_epoch = d->rx_notified_epoch;
}

/* After the hook runner exists: hooks.run's process is ours again. */
void
reexec_adopt(struct daemon *d)
{
	if ((d->ev_rx = evtimer_new(d->base, reexec_poll, d)) == NULL)
		fatalx("evtimer_new");
	hook_runner_others(d->hooks, reexec_reaped, d);
	reexec_adopt_view(d);
	if (d->rx_run_pid == -1)
		return;
	/* It may have ended in between: its zombie is reaped as a hook's. */
	run_hook_adopt(d, d->rx_run_pid, d->rx_run_fd, d->rx_run_since);
	log_info("run process [%ld] taken over", (long)d->rx_run_pid);
}

void
reexec_free(struct daemon *d)
{
	if (d->ev_rx != NULL)
		event_free(d->ev_rx);
	d->ev_rx = NULL;
	if (d->rx_check_pid != -1 && !d->rx_check_done)
		(void)kill(d->rx_check_pid, SIGKILL);
	reexec_check_clear(d);
	free(d->rx_exe);
	d->rx_exe = NULL;
	free(d->rx_leader);
	d->rx_leader = NULL;
	free(d->rx_notified);
	d->rx_notified = NULL;
}
