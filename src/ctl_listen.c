/*
 * The control socket's listener: its file is made with the configured
 * rights before anyone can connect, a file left by a dead daemon is
 * replaced but a live daemon's is not, and accepting is throttled so that
 * too many clients or too few descriptors never make the loop spin.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "ctl_int.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define CTL_ACCEPT_BATCH	32
#define CTL_ACCEPT_PAUSE_MS	100

/* Fills err for ctl_open()'s caller, which decides what to log. */
static void LOG_PRINTF(3, 4)
ctl_listen_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Tells a client over max_clients why it is turned away. */
static void
ctl_listen_refuse(int fd)
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
ctl_listen_resume(evutil_socket_t fd, short events, void *arg)
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
ctl_listen_pause(struct ctl *ctl)
{
	struct timeval tv;

	if (!ctl->accept_warned)
		log_warn("control socket %s: accept, pausing", ctl->path);
	ctl->accept_warned = 1;
	clock_timeval(&tv, CTL_ACCEPT_PAUSE_MS);
	if (event_del(ctl->ev_accept) == -1 ||
	    evtimer_add(ctl->ev_resume, &tv) == -1)
		log_warnx("control socket %s: cannot pause accepting",
		    ctl->path);
}

static void
ctl_listen_accept(evutil_socket_t lfd, short events, void *arg)
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
				ctl_listen_pause(ctl);
			return;
		}
		ctl->accept_warned = 0;
		switch (ctl->accept(ctl, fd)) {
		case CTL_ACCEPT_MORE:
			break;
		case CTL_ACCEPT_PAUSE:
			return;
		case CTL_ACCEPT_REFUSE:
			log_debug("control socket %s: %d clients, refusing one "
			    "more", ctl->path, ctl->nclients);
			ctl_listen_refuse(fd);
			break;
		}
	}
}

/* Creates the socket's directory when it is missing (not its parents). */
static int
ctl_listen_mkparent(const char *path, char *err, size_t errlen)
{
	char *dir, *slash;
	int rc = 0;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) == 0) {
			/* Not the umask's: group members must reach it. */
			if (chmod(dir, 0755) == -1) {
				ctl_listen_error(err, errlen, "chmod %s: %s",
				    dir, strerror(errno));
				rc = -1;
			}
		} else if (errno != EEXIST) {
			ctl_listen_error(err, errlen, "mkdir %s: %s", dir,
			    strerror(errno));
			rc = -1;
		}
	}
	free(dir);
	return rc;
}

/*
 * Whether a daemon answers at sun: 1 it does, 0 nobody (no file, or a
 * socket nobody listens on), -1 with errno when that cannot be told.
 */
static int
ctl_listen_probe(const struct sockaddr_un *sun)
{
	int fd, rc, saved;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	saved = errno;
	(void)close(fd);
	/* EAGAIN: it listens, its backlog is merely full. */
	if (rc == 0 || saved == EAGAIN)
		return 1;
	if (saved == ECONNREFUSED || saved == ENOENT)
		return 0;
	errno = saved;
	return -1;
}

/* A path too long for a socket: nobody can listen there. */
static int
ctl_listen_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return 0;
}

int
ctl_listen_live(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;

	if (ctl_listen_addr(path, &sun) == -1 || lstat(path, &st) == -1 ||
	    !S_ISSOCK(st.st_mode))
		return 0;
	return ctl_listen_probe(&sun);
}

/*
 * Removes a socket file left by a dead daemon. A file where a daemon
 * answers, or that is no socket at all, is left alone and is an error.
 */
static int
ctl_listen_clear_stale(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(sun->sun_path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		ctl_listen_error(err, errlen, "control socket %s: %s",
		    sun->sun_path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		ctl_listen_error(err, errlen, "control socket %s exists and "
		    "is not a socket", sun->sun_path);
		return -1;
	}
	switch (ctl_listen_probe(sun)) {
	case 1:
		ctl_listen_error(err, errlen, "control socket %s is in use "
		    "by a running daemon", sun->sun_path);
		return -1;
	case -1:
		ctl_listen_error(err, errlen, "control socket %s: connect: %s",
		    sun->sun_path, strerror(errno));
		return -1;
	}
	if (unlink(sun->sun_path) == -1 && errno != ENOENT) {
		ctl_listen_error(err, errlen, "unlink stale control socket "
		    "%s: %s", sun->sun_path, strerror(errno));
		return -1;
	}
	log_info("removed stale control socket %s", sun->sun_path);
	return 0;
}

static int
ctl_listen_group(const char *group, gid_t *gid, char *err, size_t errlen)
{
	const char *why;

	if (parse_group(group, gid, &why) == -1) {
		ctl_listen_error(err, errlen, "control socket group %s: %s",
		    group, why);
		return -1;
	}
	return 0;
}

static int
ctl_listen_bind(struct ctl *ctl, const struct ctl_params *p, char *err,
    size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	gid_t gid = (gid_t)-1;
	mode_t old_umask;
	int rc, saved;

	if (p->path == NULL || p->path[0] == '\0') {
		ctl_listen_error(err, errlen, "control socket: empty path");
		return -1;
	}
	if (ctl_listen_addr(p->path, &sun) == -1) {
		ctl_listen_error(err, errlen, "control socket %s: path longer "
		    "than %zu bytes", p->path, sizeof(sun.sun_path) - 1);
		return -1;
	}
	if (p->group != NULL &&
	    ctl_listen_group(p->group, &gid, err, errlen) == -1)
		return -1;
	if (ctl_listen_mkparent(p->path, err, errlen) == -1 ||
	    ctl_listen_clear_stale(&sun, err, errlen) == -1)
		return -1;

	if ((ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		ctl_listen_error(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * The rights come with the file: bind under a umask that leaves the
	 * configured mode, since a chmod by path after bind would follow a
	 * symlink put in the socket's place in a directory others can write.
	 * Nobody can connect before listen().
	 */
	old_umask = umask((mode_t)(~p->mode & 0777));
	rc = bind(ctl->fd, (struct sockaddr *)&sun, sizeof(sun));
	saved = errno;
	(void)umask(old_umask);
	if (rc == -1) {
		ctl_listen_error(err, errlen, "bind %s: %s", p->path,
		    strerror(saved));
		return -1;
	}
	if (lstat(p->path, &st) == -1) {
		ctl_listen_error(err, errlen, "stat %s: %s", p->path,
		    strerror(errno));
		goto unlink;
	}
	ctl->dev = st.st_dev;
	ctl->ino = st.st_ino;
	if (!S_ISSOCK(st.st_mode)) {
		ctl_listen_error(err, errlen, "control socket %s was replaced "
		    "as it was made", p->path);
		return -1;
	}
	/* The owner, never through a link. */
	if (p->group != NULL && fchownat(AT_FDCWD, p->path, (uid_t)-1, gid,
	    AT_SYMLINK_NOFOLLOW) == -1) {
		ctl_listen_error(err, errlen, "chown %s to group %s: %s",
		    p->path, p->group, strerror(errno));
		goto unlink;
	}
	if (listen(ctl->fd, SOMAXCONN) == -1) {
		ctl_listen_error(err, errlen, "listen %s: %s", p->path,
		    strerror(errno));
		goto unlink;
	}
	return 0;

unlink:
	if (unlink(p->path) == -1)
		log_warn("unlink %s", p->path);
	return -1;
}

/*
 * The socket a re-exec handed over: already bound at the path and
 * listening, its file (the one to unlink at the end) is the path's. One
 * bound elsewhere is refused: clients would look for the daemon at the
 * path and find nobody, and the session file goes with the path.
 */
static int
ctl_listen_adopt(struct ctl *ctl, const struct ctl_params *p, char *err,
    size_t errlen)
{
	char bound[sizeof(((struct sockaddr_un *)NULL)->sun_path) + 1];
	struct stat st;
	int fl;

	ctl->fd = p->inherit_fd;
	if (ctl_listen_bound(ctl->fd, bound, sizeof(bound)) == -1 ||
	    p->path == NULL || strcmp(bound, p->path) != 0) {
		ctl_listen_error(err, errlen, "control socket %s: the "
		    "inherited descriptor %d is bound at %s", p->path,
		    p->inherit_fd, bound);
		return -1;
	}
	if ((fl = fcntl(ctl->fd, F_GETFL)) == -1 ||
	    fcntl(ctl->fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(ctl->fd, F_SETFD, FD_CLOEXEC) == -1) {
		ctl_listen_error(err, errlen, "control socket %s: inherited "
		    "descriptor %d: %s", p->path, p->inherit_fd,
		    strerror(errno));
		return -1;
	}
	if (lstat(p->path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		ctl->dev = st.st_dev;
		ctl->ino = st.st_ino;
	}
	return 0;
}

int
ctl_listen_bound(int fd, char *buf, size_t len)
{
	struct sockaddr_un sun;
	socklen_t sl = sizeof(sun);

	memset(&sun, 0, sizeof(sun));
	(void)snprintf(buf, len, "?");
	if (getsockname(fd, (struct sockaddr *)&sun, &sl) == -1 ||
	    sun.sun_family != AF_UNIX)
		return -1;
	/* sun_path need not end in a NUL when it is full. */
	if (sl <= offsetof(struct sockaddr_un, sun_path) ||
	    (size_t)snprintf(buf, len, "%.*s",
	    (int)(sl - offsetof(struct sockaddr_un, sun_path)), sun.sun_path)
	    >= len)
		return -1;
	return 0;
}

int
ctl_listen_open(struct ctl *ctl, const struct ctl_params *p,
    ctl_accept_fn fn, char *err, size_t errlen)
{
	ctl->accept = fn;
	if ((p->inherit_fd > 0 ? ctl_listen_adopt(ctl, p, err, errlen) :
	    ctl_listen_bind(ctl, p, err, errlen)) == -1)
		goto fail;
	if ((ctl->ev_accept = event_new(ctl->base, ctl->fd,
	    EV_READ | EV_PERSIST, ctl_listen_accept, ctl)) == NULL ||
	    (ctl->ev_resume = evtimer_new(ctl->base, ctl_listen_resume,
	    ctl)) == NULL ||
	    event_add(ctl->ev_accept, NULL) == -1) {
		ctl_listen_error(err, errlen, "control socket %s: cannot add "
		    "events", ctl->path);
		if (unlink(ctl->path) == -1)
			log_warn("unlink %s", ctl->path);
		goto fail;
	}
	return 0;

fail:
	if (ctl->ev_accept != NULL)
		event_free(ctl->ev_accept);
	if (ctl->ev_resume != NULL)
		event_free(ctl->ev_resume);
	if (ctl->fd != -1)
		(void)close(ctl->fd);
	ctl->ev_accept = NULL;
	ctl->ev_resume = NULL;
	ctl->fd = -1;
	return -1;
}

void
ctl_listen_close(struct ctl *ctl)
{
	struct stat st;

	event_free(ctl->ev_accept);
	event_free(ctl->ev_resume);
	if (close(ctl->fd) == -1)
		log_warn("close control socket %s", ctl->path);
	/* Another daemon may have replaced the file; leave its socket be. */
	if (lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino && unlink(ctl->path) == -1)
		log_warn("unlink %s", ctl->path);
}
