/*
 * The control socket. Each client gets a bufferevent; it may send one
 * line, which goes to the daemon's callback, and then only waits for the
 * answer (or, for watch, for broadcasts). Input is bounded: a client that
 * fills PROTO_MAX_LINE bytes without a newline is answered and closed.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "ctl.h"
#include "log.h"
#include "xmalloc.h"

/* A line, its "\r\n": more than this without a newline is too long. */
#define CTL_READ_LIMIT		(PROTO_MAX_LINE + 2)
#define CTL_ACCEPT_BATCH	32
#define CTL_ACCEPT_PAUSE_MS	100
#define CTL_WRITE_TIMEOUT_MS	10000	/* no write progress: drop */
#define CTL_WATCH_BACKLOG	65536	/* unread watch output: drop */
#define CTL_TOO_MANY		"error too-many-clients\n"
#define CTL_TOO_LONG		"error line-too-long"

enum ctl_state {
	CTL_READING,		/* waiting for the command line */
	CTL_WAITING,		/* line handed over, no answer yet */
	CTL_WATCHING,		/* receives broadcasts */
	CTL_CLOSING,		/* answered, closes once flushed */
};

struct ctl_client {
	TAILQ_ENTRY(ctl_client) entry;
	struct ctl *ctl;
	uint64_t id;
	uid_t uid;
	enum ctl_state state;
	struct bufferevent *bev;
	struct event *ev_idle;
};

struct ctl {
	struct event_base *base;
	char *path;
	int fd;
	dev_t dev;		/* of the socket file we bound, to unlink */
	ino_t ino;		/* only our own */
	struct event *ev_accept;
	struct event *ev_resume;	/* accepting again after EMFILE */
	int accept_warned;
	TAILQ_HEAD(, ctl_client) clients;
	int nclients;
	uint64_t next_id;
	int max_clients;
	int idle_timeout_ms;
	ctl_command_fn fn;
	void *arg;
};

static void ctl_client_free(struct ctl_client *);

static void LOG_PRINTF(3, 4)
ctl_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void
ctl_timeval(struct timeval *tv, int ms)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

static struct ctl_client *
ctl_client_find(const struct ctl *ctl, uint64_t id)
{
	struct ctl_client *c;

	TAILQ_FOREACH(c, &ctl->clients, entry)
		if (c->id == id)
			return c;
	return NULL;
}

static void
ctl_client_free(struct ctl_client *c)
{
	struct ctl *ctl = c->ctl;

	TAILQ_REMOVE(&ctl->clients, c, entry);
	ctl->nclients--;
	if (c->ev_idle != NULL)
		event_free(c->ev_idle);
	bufferevent_free(c->bev);
	free(c);
}

/* Queues text and a newline if it lacks one. */
static int
ctl_client_send(struct ctl_client *c, const char *text)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t len = strlen(text);

	if (evbuffer_add(out, text, len) == -1)
		return -1;
	if ((len == 0 || text[len - 1] != '\n') &&
	    evbuffer_add(out, "\n", 1) == -1)
		return -1;
	return 0;
}

/* Answers and closes once the answer is flushed. */
static int
ctl_client_finish(struct ctl_client *c, const char *text)
{
	struct timeval tv;

	(void)evtimer_del(c->ev_idle);
	c->state = CTL_CLOSING;
	ctl_timeval(&tv, CTL_WRITE_TIMEOUT_MS);
	if (ctl_client_send(c, text) == -1 ||
	    bufferevent_set_timeouts(c->bev, NULL, &tv) == -1 ||
	    bufferevent_enable(c->bev, EV_WRITE) == -1) {
		log_warnx("control client %llu: cannot queue the answer",
		    (unsigned long long)c->id);
		ctl_client_free(c);
		return -1;
	}
	return 0;
}

/* Answers line-too-long; the rest of the input is read and dropped. */
static void
ctl_client_too_long(struct ctl_client *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	(void)evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	(void)ctl_client_finish(c, CTL_TOO_LONG);
}

/*
 * Hands the first len bytes of input (a line without its newline) to the
 * daemon, or answers line-too-long.
 */
static void
ctl_client_line(struct ctl_client *c, size_t len)
{
	struct ctl *ctl = c->ctl;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	char line[CTL_READ_LIMIT + 1];
	size_t i;

	if (len > PROTO_MAX_LINE + 1) {
		ctl_client_too_long(c);
		return;
	}
	if (evbuffer_remove(in, line, len) != (int)len) {
		log_warnx("control client %llu: cannot read its line",
		    (unsigned long long)c->id);
		ctl_client_free(c);
		return;
	}
	(void)evbuffer_drain(in, evbuffer_get_length(in));
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > PROTO_MAX_LINE) {
		ctl_client_too_long(c);
		return;
	}
	/* An embedded NUL would cut the line into a different command. */
	for (i = 0; i < len; i++)
		if (line[i] == '\0')
			line[i] = '?';
	line[len] = '\0';

	(void)evtimer_del(c->ev_idle);
	c->state = CTL_WAITING;
	/* From now on input is only read to notice the close. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, 0);
	ctl->fn(ctl, c->id, c->uid, line, ctl->arg);
}

static void
ctl_client_read(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr p;

	if (c->state != CTL_READING) {
		(void)evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	p = evbuffer_search(in, "\n", 1, NULL);
	if (p.pos >= 0) {
		ctl_client_line(c, (size_t)p.pos);
		return;
	}
	if (evbuffer_get_length(in) >= CTL_READ_LIMIT)
		ctl_client_too_long(c);
}

static void
ctl_client_write(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;

	(void)bev;
	if (c->state == CTL_CLOSING)
		ctl_client_free(c);
}

static void
ctl_client_event(struct bufferevent *bev, short what, void *arg)
{
	struct ctl_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;

	if ((what & BEV_EVENT_EOF) && (what & BEV_EVENT_READING)) {
		switch (c->state) {
		case CTL_READING:
			/* A last line without newline still counts. */
			if ((len = evbuffer_get_length(in)) == 0)
				ctl_client_free(c);
			else
				ctl_client_line(c, len);
			return;
		case CTL_WAITING:
		case CTL_CLOSING:
			/* A half-close: the answer is still wanted. */
			return;
		case CTL_WATCHING:
			ctl_client_free(c);
			return;
		}
	}
	log_debug("control client %llu: %s", (unsigned long long)c->id,
	    (what & BEV_EVENT_TIMEOUT) ? "write timed out" :
	    (what & BEV_EVENT_EOF) ? "connection closed" :
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	ctl_client_free(c);
}

static void
ctl_client_idle(evutil_socket_t fd, short events, void *arg)
{
	struct ctl_client *c = arg;

	(void)fd;
	(void)events;
	log_debug("control client %llu: no command within %d ms, dropped",
	    (unsigned long long)c->id, c->ctl->idle_timeout_ms);
	ctl_client_free(c);
}

static void
ctl_client_new(struct ctl *ctl, int fd)
{
	struct ctl_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv;

	c = xcalloc(1, sizeof(*c));
	c->ctl = ctl;
	c->id = ++ctl->next_id;
	c->state = CTL_READING;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("control client %llu: SO_PEERCRED",
		    (unsigned long long)c->id);
		c->uid = (uid_t)-1;
	} else
		c->uid = cred.uid;

	if ((c->bev = bufferevent_socket_new(ctl->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("control client %llu: bufferevent_socket_new",
		    (unsigned long long)c->id);
		(void)close(fd);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&ctl->clients, c, entry);
	ctl->nclients++;
	bufferevent_setcb(c->bev, ctl_client_read, ctl_client_write,
	    ctl_client_event, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CTL_READ_LIMIT);
	ctl_timeval(&tv, ctl->idle_timeout_ms);
	if (bufferevent_enable(c->bev, EV_READ) == -1 ||
	    (c->ev_idle = evtimer_new(ctl->base, ctl_client_idle, c)) == NULL ||
	    evtimer_add(c->ev_idle, &tv) == -1) {
		log_warnx("control client %llu: cannot watch it",
		    (unsigned long long)c->id);
		ctl_client_free(c);
	}
}

/* Tells a client over max_clients why it is turned away. */
static void
ctl_refuse(int fd)
{
	char buf[512];
	int i;

	if (send(fd, CTL_TOO_MANY, sizeof(CTL_TOO_MANY) - 1,
	    MSG_NOSIGNAL | MSG_DONTWAIT) == -1)
		log_debug("control socket: refusing a client: send: %s",
		    strerror(errno));
	/*
	 * Unread input would turn our close into a reset that may reach the
	 * client before it read the answer.
	 */
	for (i = 0; i < 4; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
	if (close(fd) == -1)
		log_warn("control socket: close");
}

static void
ctl_resume(evutil_socket_t fd, short events, void *arg)
{
	struct ctl *ctl = arg;

	(void)fd;
	(void)events;
	if (event_add(ctl->ev_accept, NULL) == -1)
		log_warnx("control socket %s: cannot resume accepting",
		    ctl->path);
}

/* Out of descriptors: stop accepting for a moment instead of spinning. */
static void
ctl_accept_pause(struct ctl *ctl)
{
	struct timeval tv;

	if (!ctl->accept_warned)
		log_warn("control socket %s: accept, pausing", ctl->path);
	ctl->accept_warned = 1;
	ctl_timeval(&tv, CTL_ACCEPT_PAUSE_MS);
	if (event_del(ctl->ev_accept) == -1 ||
	    evtimer_add(ctl->ev_resume, &tv) == -1)
		log_warnx("control socket %s: cannot pause accepting",
		    ctl->path);
}

static void
ctl_accept(evutil_socket_t lfd, short events, void *arg)
{
	struct ctl *ctl = arg;
	int fd, i;

	(void)events;
	for (i = 0; i < CTL_ACCEPT_BATCH; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ctl_accept_pause(ctl);
			return;
		}
		ctl->accept_warned = 0;
		if (ctl->nclients >= ctl->max_clients) {
			log_debug("control socket %s: %d clients, refusing "
			    "one more", ctl->path, ctl->nclients);
			ctl_refuse(fd);
			continue;
		}
		ctl_client_new(ctl, fd);
	}
}

/* Creates the socket's directory when it is missing (not its parents). */
static int
ctl_mkparent(const char *path, char *err, size_t errlen)
{
	char *dir, *slash;
	int rc = 0;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) == 0) {
			/* Not the umask's: group members must reach it. */
			if (chmod(dir, 0755) == -1) {
				ctl_error(err, errlen, "chmod %s: %s", dir,
				    strerror(errno));
				rc = -1;
			}
		} else if (errno != EEXIST) {
			ctl_error(err, errlen, "mkdir %s: %s", dir,
			    strerror(errno));
			rc = -1;
		}
	}
	free(dir);
	return rc;
}

/*
 * Removes a socket file left by a dead daemon. A file where a daemon
 * answers, or that is no socket at all, is left alone and is an error.
 */
static int
ctl_clear_stale(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (lstat(sun->sun_path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		ctl_error(err, errlen, "control socket %s: %s", sun->sun_path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		ctl_error(err, errlen, "control socket %s exists and is not a "
		    "socket", sun->sun_path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		ctl_error(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	if (rc == 0 || errno == EAGAIN) {
		/* EAGAIN: it listens, its backlog is merely full. */
		(void)close(fd);
		ctl_error(err, errlen, "control socket %s is in use by a "
		    "running daemon", sun->sun_path);
		return -1;
	}
	if (errno != ECONNREFUSED && errno != ENOENT) {
		ctl_error(err, errlen, "control socket %s: connect: %s",
		    sun->sun_path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	(void)close(fd);
	if (unlink(sun->sun_path) == -1 && errno != ENOENT) {
		ctl_error(err, errlen, "unlink stale control socket %s: %s",
		    sun->sun_path, strerror(errno));
		return -1;
	}
	log_info("removed stale control socket %s", sun->sun_path);
	return 0;
}

static int
ctl_group(const char *group, gid_t *gid, char *err, size_t errlen)
{
	struct group *gr;

	errno = 0;
	if ((gr = getgrnam(group)) == NULL) {
		if (errno != 0 && errno != ENOENT && errno != ESRCH)
			ctl_error(err, errlen, "control socket group %s: %s",
			    group, strerror(errno));
		else
			ctl_error(err, errlen, "control socket group %s: "
			    "no such group", group);
		return -1;
	}
	*gid = gr->gr_gid;
	return 0;
}

static int
ctl_bind(struct ctl *ctl, const struct ctl_params *p, char *err,
    size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	gid_t gid = (gid_t)-1;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (p->path == NULL || p->path[0] == '\0') {
		ctl_error(err, errlen, "control socket: empty path");
		return -1;
	}
	if (strlen(p->path) >= sizeof(sun.sun_path)) {
		ctl_error(err, errlen, "control socket %s: path longer than "
		    "%zu bytes", p->path, sizeof(sun.sun_path) - 1);
		return -1;
	}
	memcpy(sun.sun_path, p->path, strlen(p->path) + 1);
	if (p->group != NULL && ctl_group(p->group, &gid, err, errlen) == -1)
		return -1;
	if (ctl_mkparent(p->path, err, errlen) == -1 ||
	    ctl_clear_stale(&sun, err, errlen) == -1)
		return -1;

	if ((ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		ctl_error(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (bind(ctl->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		ctl_error(err, errlen, "bind %s: %s", p->path, strerror(errno));
		return -1;
	}
	if (lstat(p->path, &st) == -1) {
		ctl_error(err, errlen, "stat %s: %s", p->path, strerror(errno));
		goto unlink;
	}
	ctl->dev = st.st_dev;
	ctl->ino = st.st_ino;
	/* Nobody can connect before listen(): set the rights first. */
	if (chmod(p->path, (mode_t)(p->mode & 07777)) == -1) {
		ctl_error(err, errlen, "chmod %s: %s", p->path,
		    strerror(errno));
		goto unlink;
	}
	if (p->group != NULL && chown(p->path, (uid_t)-1, gid) == -1) {
		ctl_error(err, errlen, "chown %s to group %s: %s", p->path,
		    p->group, strerror(errno));
		goto unlink;
	}
	if (listen(ctl->fd, SOMAXCONN) == -1) {
		ctl_error(err, errlen, "listen %s: %s", p->path,
		    strerror(errno));
		goto unlink;
	}
	return 0;

unlink:
	if (unlink(p->path) == -1)
		log_warn("unlink %s", p->path);
	return -1;
}

struct ctl *
ctl_open(struct event_base *base, const struct ctl_params *p,
    ctl_command_fn fn, void *arg, char *err, size_t errlen)
{
	struct ctl *ctl;

	ctl = xcalloc(1, sizeof(*ctl));
	ctl->base = base;
	ctl->fd = -1;
	ctl->path = xstrdup(p->path != NULL ? p->path : "");
	ctl->max_clients = p->max_clients > 0 ? p->max_clients : 1;
	ctl->idle_timeout_ms = p->idle_timeout_ms > 0 ? p->idle_timeout_ms :
	    5000;
	ctl->fn = fn;
	ctl->arg = arg;
	TAILQ_INIT(&ctl->clients);

	if (ctl_bind(ctl, p, err, errlen) == -1)
		goto fail;
	if ((ctl->ev_accept = event_new(base, ctl->fd, EV_READ | EV_PERSIST,
	    ctl_accept, ctl)) == NULL ||
	    (ctl->ev_resume = evtimer_new(base, ctl_resume, ctl)) == NULL ||
	    event_add(ctl->ev_accept, NULL) == -1) {
		ctl_error(err, errlen, "control socket %s: cannot add events",
		    ctl->path);
		if (unlink(ctl->path) == -1)
			log_warn("unlink %s", ctl->path);
		goto fail;
	}
	return ctl;

fail:
	if (ctl->ev_accept != NULL)
		event_free(ctl->ev_accept);
	if (ctl->ev_resume != NULL)
		event_free(ctl->ev_resume);
	if (ctl->fd != -1)
		(void)close(ctl->fd);
	free(ctl->path);
	free(ctl);
	return NULL;
}

void
ctl_close(struct ctl *ctl)
{
	struct ctl_client *c;
	struct stat st;

	if (ctl == NULL)
		return;
	while ((c = TAILQ_FIRST(&ctl->clients)) != NULL)
		ctl_client_free(c);
	event_free(ctl->ev_accept);
	event_free(ctl->ev_resume);
	if (close(ctl->fd) == -1)
		log_warn("close control socket %s", ctl->path);
	/* Another daemon may have replaced the file; leave its socket be. */
	if (lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino && unlink(ctl->path) == -1)
		log_warn("unlink %s", ctl->path);
	free(ctl->path);
	free(ctl);
}

int
ctl_reply(struct ctl *ctl, uint64_t client, const char *text)
{
	struct ctl_client *c;

	if ((c = ctl_client_find(ctl, client)) == NULL ||
	    c->state == CTL_CLOSING)
		return -1;
	return ctl_client_finish(c, text);
}

int
ctl_watch(struct ctl *ctl, uint64_t client)
{
	struct ctl_client *c;
	struct timeval tv;

	if ((c = ctl_client_find(ctl, client)) == NULL ||
	    c->state != CTL_WAITING)
		return -1;
	c->state = CTL_WATCHING;
	(void)evtimer_del(c->ev_idle);
	ctl_timeval(&tv, CTL_WRITE_TIMEOUT_MS);
	if (bufferevent_set_timeouts(c->bev, NULL, &tv) == -1)
		log_warnx("control client %llu: cannot set its write timeout",
		    (unsigned long long)c->id);
	return 0;
}

int
ctl_send(struct ctl *ctl, uint64_t client, const char *line)
{
	struct ctl_client *c;

	if ((c = ctl_client_find(ctl, client)) == NULL ||
	    c->state == CTL_CLOSING)
		return -1;
	if (ctl_client_send(c, line) == -1) {
		ctl_client_free(c);
		return -1;
	}
	return 0;
}

void
ctl_broadcast(struct ctl *ctl, const char *line)
{
	struct ctl_client *c, *next;

	for (c = TAILQ_FIRST(&ctl->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state != CTL_WATCHING)
			continue;
		if (evbuffer_get_length(bufferevent_get_output(c->bev)) >
		    CTL_WATCH_BACKLOG) {
			log_info("control client %llu: does not read its "
			    "watch stream, dropped", (unsigned long long)c->id);
			ctl_client_free(c);
			continue;
		}
		if (ctl_client_send(c, line) == -1) {
			log_warnx("control client %llu: cannot queue a watch "
			    "line", (unsigned long long)c->id);
			ctl_client_free(c);
		}
	}
}

int
ctl_clients(const struct ctl *ctl)
{
	return ctl->nclients;
}
