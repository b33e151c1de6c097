/*
 * The control socket's clients. Each client gets a bufferevent; it may
 * send one line, which goes to the daemon's callback, and then only waits
 * for the answer (or, for watch, for broadcasts). Input is bounded: a
 * client that fills PROTO_MAX_LINE bytes without a newline is answered and
 * closed. The listening socket and its file are ctl_listen.c's.
 *
 * Slots: watchers may hold at most three quarters of max_clients, and one
 * peer uid a quarter of those, so one-shot commands always find a slot
 * and one user cannot take every watcher's; at max_clients a newcomer
 * takes the slot of a client that was answered or has sent nothing yet
 * (the oldest), since a command line comes at once after connecting.
 * A watcher that stops reading is dropped once CTL_WATCH_BACKLOG bytes
 * wait for it, in our buffer or the kernel's. A watcher that half-closes
 * (socat, nc -N) still wants its stream: it is kept until it closes for
 * real, which a failed write shows, or, between broadcasts, the hang-up
 * looked for at every idle timeout and whenever a slot or a watcher's
 * place is wanted, so that a dead one holds no place under the caps.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <linux/sockios.h>

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "ctl_int.h"
#include "log.h"
#include "xmalloc.h"

/* A line, its "\r\n": more than this without a newline is too long. */
#define CTL_READ_LIMIT		(PROTO_MAX_LINE + 2)
#define CTL_WRITE_TIMEOUT_MS	10000	/* no write progress: drop */
#define CTL_WATCH_BACKLOG	65536	/* unread watch output: drop */
#define CTL_TOO_LONG		"error line-too-long"
#define CTL_TOO_MANY_WATCHERS	"error too-many-watchers"
#define CTL_LINGER_MS		2000	/* answered: wait this for the EOF */
#define CTL_LINGER_BYTES	(1 << 20)	/* or for this much input */

enum ctl_state {
	CTL_READING,		/* waiting for the command line */
	CTL_WAITING,		/* line handed over, no answer yet */
	CTL_WATCHING,		/* receives broadcasts */
	CTL_CLOSING,		/* answered, closes once flushed */
	CTL_LINGER,		/* flushed and shut down: reads to its EOF */
};

struct ctl_client {
	TAILQ_ENTRY(ctl_client) entry;
	struct ctl *ctl;
	uint64_t id;
	uid_t uid;
	enum ctl_state state;
	int eof;		/* its input ended: a half-close, or a close */
	size_t dropped;		/* input read and dropped while lingering */
	struct bufferevent *bev;
	struct event *ev_idle;
};

static void ctl_client_free(struct ctl_client *);

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
	if (c->state == CTL_WATCHING)
		ctl->nwatchers--;
	if (c->ev_idle != NULL)
		event_free(c->ev_idle);
	bufferevent_free(c->bev);
	free(c);
}

/*
 * Whether the peer has closed its socket, not only its write side: a
 * Unix stream socket then reports a hang-up (both directions shut), which
 * a half-close alone never does.
 */
static int
ctl_client_hung_up(const struct ctl_client *c)
{
	struct pollfd pfd;

	pfd.fd = bufferevent_getfd(c->bev);
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == -1)
		return 0;
	return (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/*
 * A half-closed watcher's input is done with, so nothing would tell of
 * its close until the next broadcast: its timer looks for the hang-up.
 */
static int
ctl_client_probe(struct ctl_client *c)
{
	struct timeval tv;

	clock_timeval(&tv, c->ctl->idle_timeout_ms);
	return evtimer_add(c->ev_idle, &tv);
}

/*
 * Frees the half-closed watchers that have closed for real since; returns
 * how many, so that a slot or a watcher's place they held is free again.
 */
static int
ctl_reap(struct ctl *ctl)
{
	struct ctl_client *c, *next;
	int n = 0;

	for (c = TAILQ_FIRST(&ctl->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state != CTL_WATCHING || !c->eof ||
		    !ctl_client_hung_up(c))
			continue;
		log_debug("control client %llu: closed its watch stream",
		    (unsigned long long)c->id);
		ctl_client_free(c);
		n++;
	}
	return n;
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
	clock_timeval(&tv, CTL_WRITE_TIMEOUT_MS);
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
		c->dropped += evbuffer_get_length(in);
		(void)evbuffer_drain(in, evbuffer_get_length(in));
		if (c->state == CTL_LINGER && c->dropped > CTL_LINGER_BYTES)
			ctl_client_free(c);
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

/*
 * The answer is out. Closing now, while the client still sends, would
 * fail its next write (EPIPE, or a reset) before it reads the answer: so
 * the write side is shut down, telling a reader the answer is whole, and
 * the rest of the input is read and dropped until the client closes too,
 * bounded in time and bytes.
 */
static void
ctl_client_write(struct bufferevent *bev, void *arg)
{
	struct ctl_client *c = arg;
	struct timeval tv;

	if (c->state != CTL_CLOSING)
		return;
	if (c->eof) {
		ctl_client_free(c);
		return;
	}
	c->state = CTL_LINGER;
	c->dropped = 0;
	clock_timeval(&tv, CTL_LINGER_MS);
	if (shutdown(bufferevent_getfd(bev), SHUT_WR) == -1 ||
	    bufferevent_disable(bev, EV_WRITE) == -1 ||
	    evtimer_add(c->ev_idle, &tv) == -1)
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
			if ((len = evbuffer_get_length(in)) == 0) {
				ctl_client_free(c);
				return;
			}
			/*
			 * Half-closed, as after a line with its newline: the
			 * bufferevent reads no more, so its close would go
			 * unseen (a watcher's place held) unless eof says it.
			 */
			c->eof = 1;
			ctl_client_line(c, len);
			return;
		case CTL_WAITING:
		case CTL_CLOSING:
			/* A half-close: the answer is still wanted. */
			c->eof = 1;
			return;
		case CTL_WATCHING:
			/*
			 * The contract lets a client half-close right after
			 * its line: the stream goes on until it closes.
			 */
			if (!ctl_client_hung_up(c)) {
				c->eof = 1;
				if (ctl_client_probe(c) == 0)
					return;
			}
			ctl_client_free(c);
			return;
		case CTL_LINGER:
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
	/* A half-closed watcher's check: it goes on while it is there. */
	if (c->state == CTL_WATCHING) {
		if (!ctl_client_hung_up(c) && ctl_client_probe(c) == 0)
			return;
		log_debug("control client %llu: closed its watch stream",
		    (unsigned long long)c->id);
	} else if (c->state == CTL_READING)
		log_debug("control client %llu: no command within %d ms, "
		    "dropped", (unsigned long long)c->id,
		    c->ctl->idle_timeout_ms);
	ctl_client_free(c);
}

/*
 * At max_clients: frees the watchers gone since their half-close, or else
 * drops the client that matters least (one answered and lingering, else
 * the oldest that sent no line yet), and returns 0; or -1 when every slot
 * is busy with a command or a watcher.
 */
static int
ctl_client_evict(struct ctl *ctl)
{
	struct ctl_client *c, *oldest = NULL;

	if (ctl_reap(ctl) > 0)
		return 0;
	TAILQ_FOREACH(c, &ctl->clients, entry) {
		if (c->state == CTL_LINGER)
			break;
		if (c->state == CTL_READING && oldest == NULL)
			oldest = c;
	}
	if (c == NULL)
		c = oldest;
	if (c == NULL)
		return -1;
	log_debug("control client %llu: dropped for a newcomer (%d clients)",
	    (unsigned long long)c->id, ctl->nclients);
	/* It is told why, as a newcomer would be; its slot is free at once. */
	if (c->state == CTL_READING)
		(void)send(bufferevent_getfd(c->bev), CTL_TOO_MANY,
		    sizeof(CTL_TOO_MANY) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	ctl_client_free(c);
	return 0;
}

void
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
	clock_timeval(&tv, ctl->idle_timeout_ms);
	if (bufferevent_enable(c->bev, EV_READ) == -1 ||
	    (c->ev_idle = evtimer_new(ctl->base, ctl_client_idle, c)) == NULL ||
	    evtimer_add(c->ev_idle, &tv) == -1) {
		log_warnx("control client %llu: cannot watch it",
		    (unsigned long long)c->id);
		ctl_client_free(c);
	}
}

/*
 * The listener's ctl_accept_fn: the clients' bound is theirs to keep. At
 * the bound a newcomer takes the place of the client that matters least;
 * the evicted client's descriptor is closed by libevent on the next turn
 * of the loop, so the listener accepts no more before.
 */
static enum ctl_accept
ctl_client_accept(struct ctl *ctl, int fd)
{
	if (ctl->nclients < ctl->max_clients) {
		ctl_client_new(ctl, fd);
		return CTL_ACCEPT_MORE;
	}
	if (ctl_client_evict(ctl) == -1)
		return CTL_ACCEPT_REFUSE;
	ctl_client_new(ctl, fd);
	return CTL_ACCEPT_PAUSE;
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
	ctl->max_watchers = ctl->max_clients - ctl->max_clients / 4;
	ctl->max_watchers_uid = ctl->max_watchers / 4 > 0 ?
	    ctl->max_watchers / 4 : 1;
	ctl->idle_timeout_ms = p->idle_timeout_ms > 0 ? p->idle_timeout_ms :
	    5000;
	ctl->fn = fn;
	ctl->arg = arg;
	TAILQ_INIT(&ctl->clients);

	if (ctl_listen_open(ctl, p, ctl_client_accept, err, errlen) == -1) {
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	return ctl;
}

void
ctl_close(struct ctl *ctl)
{
	struct ctl_client *c;

	if (ctl == NULL)
		return;
	while ((c = TAILQ_FIRST(&ctl->clients)) != NULL)
		ctl_client_free(c);
	ctl_listen_close(ctl);
	free(ctl->path);
	free(ctl);
}

int
ctl_reply(struct ctl *ctl, uint64_t client, const char *text)
{
	struct ctl_client *c;

	if ((c = ctl_client_find(ctl, client)) == NULL ||
	    c->state == CTL_CLOSING || c->state == CTL_LINGER)
		return -1;
	return ctl_client_finish(c, text);
}

static int
ctl_watchers_of(const struct ctl *ctl, uid_t uid)
{
	const struct ctl_client *c;
	int n = 0;

	TAILQ_FOREACH(c, &ctl->clients, entry)
		if (c->state == CTL_WATCHING && c->uid == uid)
			n++;
	return n;
}

int
ctl_watch(struct ctl *ctl, uint64_t client)
{
	struct ctl_client *c;
	struct timeval tv;

	if ((c = ctl_client_find(ctl, client)) == NULL ||
	    c->state != CTL_WAITING)
		return -1;
	/* Watchers gone since their half-close hold no place. */
	(void)ctl_reap(ctl);
	if (ctl->nwatchers >= ctl->max_watchers ||
	    ctl_watchers_of(ctl, c->uid) >= ctl->max_watchers_uid) {
		log_info("control client %llu: watch refused to uid %ld "
		    "(%d watchers, at most %d, %d per uid)",
		    (unsigned long long)c->id, (long)c->uid, ctl->nwatchers,
		    ctl->max_watchers, ctl->max_watchers_uid);
		(void)ctl_client_finish(c, CTL_TOO_MANY_WATCHERS);
		return -1;
	}
	c->state = CTL_WATCHING;
	ctl->nwatchers++;
	(void)evtimer_del(c->ev_idle);
	/* Half-closed while its line was handled: as in ctl_client_event. */
	if (c->eof && (ctl_client_hung_up(c) || ctl_client_probe(c) == -1)) {
		ctl_client_free(c);
		return -1;
	}
	clock_timeval(&tv, CTL_WRITE_TIMEOUT_MS);
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
	    c->state == CTL_CLOSING || c->state == CTL_LINGER)
		return -1;
	if (ctl_client_send(c, line) == -1) {
		ctl_client_free(c);
		return -1;
	}
	return 0;
}

/* What a watcher has not read yet: in our buffer and in the kernel's. */
static size_t
ctl_client_unread(struct ctl_client *c)
{
	size_t n = evbuffer_get_length(bufferevent_get_output(c->bev));
	int queued;

	if (ioctl(bufferevent_getfd(c->bev), SIOCOUTQ, &queued) == 0 &&
	    queued > 0)
		n += (size_t)queued;
	return n;
}

void
ctl_broadcast(struct ctl *ctl, const char *line)
{
	struct ctl_client *c, *next;

	for (c = TAILQ_FIRST(&ctl->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state != CTL_WATCHING)
			continue;
		if (ctl_client_unread(c) > CTL_WATCH_BACKLOG) {
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

int
ctl_busy(const struct ctl *ctl)
{
	return ctl->nclients - ctl->nwatchers;
}

int
ctl_listen_fd(const struct ctl *ctl)
{
	return ctl->fd;
}

void
ctl_accepting(struct ctl *ctl, int on)
{
	if ((on ? event_add(ctl->ev_accept, NULL) :
	    event_del(ctl->ev_accept)) == -1)
		log_warnx("control socket %s: cannot %s accepting", ctl->path,
		    on ? "resume" : "pause");
}
