/*
 * The status file and the "status" answer share one rendering. Values are
 * written bare when they are shell-safe and single-quoted otherwise, so the
 * file can be sourced; they never contain a newline.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"
#include "util.h"
#include "xmalloc.h"

static void
status_put(struct textbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
status_puts(struct textbuf *b, const char *s)
{
	status_put(b, s, strlen(s));
}

static int
status_safe(const char *v)
{
	unsigned char c;

	for (; (c = (unsigned char)*v) != '\0'; v++)
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || memchr("._:/@%+,=-", c, 10) != NULL))
			return 0;
	return 1;
}

/* Control characters never reach the file: a newline would split a line. */
static char
status_char(char c)
{
	return ((unsigned char)c < 0x20 || c == 0x7f) ? '?' : c;
}

static void
status_shell(struct textbuf *b, const char *key, const char *v)
{
	char c;

	status_puts(b, key);
	status_puts(b, "=");
	if (status_safe(v))
		status_puts(b, v);
	else {
		status_puts(b, "'");
		for (; *v != '\0'; v++) {
			if (*v == '\'')
				status_puts(b, "'\\''");
			else {
				c = status_char(*v);
				status_put(b, &c, 1);
			}
		}
		status_puts(b, "'");
	}
	status_puts(b, "\n");
}

void
status_json_str(struct textbuf *b, const char *key, const char *v,
    int comma)
{
	char esc[8];

	if (comma)
		status_puts(b, ",");
	status_puts(b, "\"");
	status_puts(b, key);
	status_puts(b, "\":\"");
	for (; *v != '\0'; v++) {
		if (*v == '"' || *v == '\\') {
			esc[0] = '\\';
			esc[1] = *v;
			status_put(b, esc, 2);
		} else if ((unsigned char)*v < 0x20) {
			(void)snprintf(esc, sizeof(esc), "\\u%04x",
			    (unsigned)(unsigned char)*v);
			status_puts(b, esc);
		} else
			status_put(b, v, 1);
	}
	status_puts(b, "\"");
}

void
status_json_num(struct textbuf *b, const char *key, int64_t v, int comma)
{
	char num[32];

	(void)snprintf(num, sizeof(num), "%" PRId64, v);
	if (comma)
		status_puts(b, ",");
	status_puts(b, "\"");
	status_puts(b, key);
	status_puts(b, "\":");
	status_puts(b, num);
}

char *
status_render(const struct status *st, int json)
{
	struct textbuf b = { NULL, 0, 0 };
	char since[32], updated[32], epoch[32], cands[32], session[32],
	    pid[32], myepoch[32], qpos[32], prio[32], backoff[32] = "",
	    last[32] = "",
	    runpid[32] = "", runsince[32] = "";

	rfc3339(st->since, since, sizeof(since));
	rfc3339(st->updated, updated, sizeof(updated));
	if (st->backoff_until != 0)
		rfc3339(st->backoff_until, backoff, sizeof(backoff));
	if (st->last_transition != 0)
		rfc3339(st->last_transition, last, sizeof(last));
	if (st->run_pid > 0) {
		(void)snprintf(runpid, sizeof(runpid), "%ld",
		    (long)st->run_pid);
		rfc3339(st->run_since, runsince, sizeof(runsince));
	}
	(void)snprintf(qpos, sizeof(qpos), "%d", st->queue_position);
	(void)snprintf(prio, sizeof(prio), "%" PRId64, st->priority);
	(void)snprintf(epoch, sizeof(epoch), "%" PRId64, st->epoch);
	(void)snprintf(myepoch, sizeof(myepoch), "%" PRId64, st->my_epoch);
	(void)snprintf(cands, sizeof(cands), "%d", st->candidates);
	(void)snprintf(session, sizeof(session), "%016" PRIx64,
	    (uint64_t)st->session);
	(void)snprintf(pid, sizeof(pid), "%ld", (long)st->pid);
	status_puts(&b, "");
	if (json) {
		status_puts(&b, "{");
		status_json_str(&b, "service", st->service, 0);
		status_json_str(&b, "id", st->id, 1);
		status_json_str(&b, "role", st->role, 1);
		status_json_str(&b, "leader", st->leader, 1);
		status_json_str(&b, "leader_data", st->leader_data, 1);
		status_json_num(&b, "epoch", st->epoch, 1);
		status_json_num(&b, "candidates", st->candidates, 1);
		status_json_str(&b, "zk_state", st->zk_state, 1);
		status_json_str(&b, "session", session, 1);
		status_json_num(&b, "pid", st->pid, 1);
		status_json_str(&b, "since", since, 1);
		status_json_str(&b, "updated", updated, 1);
		status_json_str(&b, "mode", st->mode, 1);
		status_json_str(&b, "data", st->data, 1);
		status_json_num(&b, "my_epoch", st->my_epoch, 1);
		status_json_str(&b, "last_error", st->last_error, 1);
		status_json_str(&b, "lease_error", st->lease_error, 1);
		status_json_num(&b, "queue_position", st->queue_position, 1);
		status_json_num(&b, "paused", st->paused != 0, 1);
		status_json_num(&b, "healthy", st->healthy != 0, 1);
		status_json_str(&b, "backoff_until", backoff, 1);
		status_json_str(&b, "last_transition", last, 1);
		/* As in the file: empty when none, never a pid of 0. */
		if (st->run_pid > 0)
			status_json_num(&b, "run_pid", st->run_pid, 1);
		else
			status_json_str(&b, "run_pid", "", 1);
		status_json_str(&b, "run_since", runsince, 1);
		status_json_num(&b, "priority", st->priority, 1);
		status_puts(&b, "}\n");
		return b.p;
	}
	status_shell(&b, "service", st->service);
	status_shell(&b, "id", st->id);
	status_shell(&b, "role", st->role);
	status_shell(&b, "leader", st->leader);
	status_shell(&b, "leader_data", st->leader_data);
	status_shell(&b, "epoch", epoch);
	status_shell(&b, "candidates", cands);
	status_shell(&b, "zk_state", st->zk_state);
	status_shell(&b, "session", session);
	status_shell(&b, "pid", pid);
	status_shell(&b, "since", since);
	status_shell(&b, "updated", updated);
	status_shell(&b, "mode", st->mode);
	status_shell(&b, "data", st->data);
	status_shell(&b, "my_epoch", myepoch);
	status_shell(&b, "last_error", st->last_error);
	status_shell(&b, "lease_error", st->lease_error);
	status_shell(&b, "queue_position", qpos);
	status_shell(&b, "paused", st->paused ? "1" : "0");
	status_shell(&b, "healthy", st->healthy ? "1" : "0");
	status_shell(&b, "backoff_until", backoff);
	status_shell(&b, "last_transition", last);
	status_shell(&b, "run_pid", runpid);
	status_shell(&b, "run_since", runsince);
	status_shell(&b, "priority", prio);
	return b.p;
}

/*
 * No fsync: the file is runtime state (under /run, rewritten at every
 * start), so readers need it replaced atomically, which rename does, and
 * not kept across a crash; an fsync would cost milliseconds on a disk.
 */
int
status_write(const char *path, const char *text)
{
	return status_write_mode(path, text, 0644);
}

int
status_write_mode(const char *path, const char *text, mode_t mode)
{
	char *tmp;
	size_t len = strlen(text), off = 0;
	ssize_t n;
	int fd, saved;

	(void)xasprintf(&tmp, "%s" STATUS_TMP_SUFFIX, path);
	/*
	 * Created exclusively: whatever stands at the temporary name (a
	 * crash's leftover, a planted link) is removed, never written through.
	 */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    mode);
	if (fd == -1 && errno == EEXIST) {
		if (unlink(tmp) == -1 && errno != ENOENT)
			goto fail;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, mode);
	}
	if (fd == -1)
		goto fail;
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		off += (size_t)n;
	}
	if (close(fd) == -1) {
		fd = -1;
		goto fail_fd;
	}
	if (rename(tmp, path) == -1) {
		fd = -1;
		goto fail_fd;
	}
	free(tmp);
	return 0;
fail_fd:
	saved = errno;
	if (fd != -1)
		(void)close(fd);
	(void)unlink(tmp);
	errno = saved;
fail:
	saved = errno;
	free(tmp);
	errno = saved;
	return -1;
}
