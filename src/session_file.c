/*
 * The session file (see session_file.h). Its lines are key=value: the
 * owner (root, service, id, socket: the configuration's values), sid
 * (hex), passwd (32 hex digits), timeout, lease, leader, promoting (a
 * promote or fence hook had begun; a file without it says 0), claim (the
 * sequence of the claim el_resume names; no line when none), crumb_claim
 * (the claim a leader's breadcrumb was written under; no line when none,
 * and none in a file of an older version), epoch and boot
 * (the kernel's boot id: the lease's clock starts again at a boot), and
 * run and run_start while hooks.run runs (its process group and its
 * start in /proc: a daemon started again after a crash stops the run
 * the crashed one left, run_hook.c). A file of the version before this
 * one has no owner lines; older versions ignore the run lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "session_file.h"
#include "status.h"
#include "util.h"
#include "xmalloc.h"

#define SESSION_FILE_MAX	4096
#define SESSION_BOOT_ID		"/proc/sys/kernel/random/boot_id"

char *
session_file_path(const char *socket_path)
{
	size_t len = strlen(socket_path);
	char *p;

	if (len > 5 && strcmp(socket_path + len - 5, ".sock") == 0)
		len -= 5;
	(void)xasprintf(&p, "%.*s.session", (int)len, socket_path);
	return p;
}

char *
session_file_sibling(const char *socket_path)
{
	size_t len = strlen(socket_path);
	char *p;

	if (len > 5 && strcmp(socket_path + len - 5, ".sock") == 0)
		(void)xasprintf(&p, "%.*s", (int)len - 5, socket_path);
	else
		(void)xasprintf(&p, "%s.sock", socket_path);
	return p;
}

void
session_file_boot(char *buf, size_t len)
{
	FILE *f;

	buf[0] = '\0';
	if ((f = fopen(SESSION_BOOT_ID, "re")) == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	(void)fclose(f);
}

char *
session_file_render(const struct session_facts *f)
{
	char pw[2 * sizeof(f->zs.passwd) + 1], claim[80], run[80], *text;
	size_t n = 0;
	size_t i;

	for (i = 0; i < sizeof(f->zs.passwd); i++)
		(void)snprintf(pw + 2 * i, 3, "%02x",
		    (unsigned char)f->zs.passwd[i]);
	claim[0] = '\0';
	if (f->claimed)
		n = (size_t)snprintf(claim, sizeof(claim), "claim=%lld\n",
		    (long long)f->claim_seq);
	if (f->crumb_claimed)
		(void)snprintf(claim + n, sizeof(claim) - n,
		    "crumb_claim=%lld\n", (long long)f->crumb_claim_seq);
	run[0] = '\0';
	if (f->run_pgid > 0)
		(void)snprintf(run, sizeof(run), "run=%lld\nrun_start=%lld\n",
		    (long long)f->run_pgid, (long long)f->run_start);
	(void)xasprintf(&text, "root=%s\nservice=%s\nid=%s\nsocket=%s\n"
	    "sid=%016llx\npasswd=%s\ntimeout=%lld\n"
	    "lease=%lld\nleader=%d\npromoting=%d\n%s%sepoch=%lld\n%sboot=%s\n",
	    f->owner.root, f->owner.service, f->owner.id, f->owner.socket,
	    (unsigned long long)f->zs.sid, pw, (long long)f->timeout_ms,
	    (long long)f->lease_sent, f->leader != 0, f->promoting != 0,
	    f->down ? "down=1\n" : "", claim, (long long)f->epoch, run,
	    f->boot);
	explicit_bzero(pw, sizeof(pw));
	return text;
}

int
session_file_write(const char *path, const char *text)
{
	return status_write_mode(path, text, 0600);
}

static int
session_hex(const char *s, unsigned char *out, size_t n)
{
	unsigned int v;
	size_t i;

	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return 0;
}

/* What the lines said beside the facts. */
struct session_seen {
	char boot[64];
	int owner;		/* owner lines read */
	const char *other;	/* the first owner line that is not ours */
};

/* An owner line: 1 it is one, 0 it is not. */
static int
session_owner_line(const char *key, const char *v,
    const struct session_owner *o, struct session_seen *s)
{
	static const struct {
		const char *key;
		size_t off;
		const char *other;
	} keys[] = {
		{ "root", offsetof(struct session_owner, root),
		    "recorded for another zookeeper.root" },
		{ "service", offsetof(struct session_owner, service),
		    "recorded for another election.service" },
		{ "id", offsetof(struct session_owner, id),
		    "recorded for another election.id" },
		{ "socket", offsetof(struct session_owner, socket),
		    "recorded for another control.socket" },
	};
	const char *mine;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(key, keys[i].key) != 0)
			continue;
		memcpy(&mine, (const char *)o + keys[i].off, sizeof(mine));
		s->owner |= 1 << i;
		if (s->other == NULL && (mine == NULL || strcmp(mine, v) != 0))
			s->other = keys[i].other;
		return 1;
	}
	return 0;
}

#define SESSION_OWNER_ALL	0xf

/* One line: 1 known and well formed, 0 unknown key, -1 malformed. */
static int
session_line(char *line, struct session_facts *f, struct session_seen *s)
{
	char *v = strchr(line, '=');
	const char *why;
	unsigned char sid[8];
	int64_t n;
	size_t i;

	if (v == NULL)
		return -1;
	*v++ = '\0';
	if (session_owner_line(line, v, &f->owner, s))
		return 1;
	if (strcmp(line, "sid") == 0) {
		if (session_hex(v, sid, sizeof(sid)) == -1)
			return -1;
		f->zs.sid = 0;
		for (i = 0; i < sizeof(sid); i++)
			f->zs.sid = (int64_t)(((uint64_t)f->zs.sid << 8) |
			    sid[i]);
		return 1;
	}
	if (strcmp(line, "passwd") == 0)
		return session_hex(v, (unsigned char *)f->zs.passwd,
		    sizeof(f->zs.passwd)) == 0 ? 1 : -1;
	if (strcmp(line, "boot") == 0) {
		(void)snprintf(s->boot, sizeof(s->boot), "%s", v);
		return 1;
	}
	if (parse_int64(v, 0, INT64_MAX, &n, &why) == -1)
		return -1;
	if (strcmp(line, "timeout") == 0)
		f->timeout_ms = n;
	else if (strcmp(line, "lease") == 0)
		f->lease_sent = n;
	else if (strcmp(line, "leader") == 0)
		f->leader = n != 0;
	else if (strcmp(line, "promoting") == 0)
		f->promoting = n != 0;
	else if (strcmp(line, "down") == 0)
		f->down = n != 0;
	else if (strcmp(line, "claim") == 0) {
		f->claimed = 1;
		f->claim_seq = n;
	} else if (strcmp(line, "crumb_claim") == 0) {
		f->crumb_claimed = 1;
		f->crumb_claim_seq = n;
	}
	else if (strcmp(line, "epoch") == 0)
		f->epoch = n;
	else if (strcmp(line, "run") == 0)
		f->run_pgid = n;
	else if (strcmp(line, "run_start") == 0)
		f->run_start = n;
	else
		return 0;
	return 1;
}

static int
session_parse(char *text, struct session_facts *f, const char **why)
{
	struct session_seen s;
	char *line, *save = NULL;

	memset(&s, 0, sizeof(s));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (session_line(line, f, &s) == -1) {
			*why = "malformed";
			return -1;
		}
	/* Some owner lines but not all: no version wrote that. */
	if (f->zs.sid == 0 || f->timeout_ms <= 0 ||
	    (s.owner != 0 && s.owner != SESSION_OWNER_ALL)) {
		*why = "incomplete";
		return -1;
	}
	if (f->boot[0] == '\0' || strcmp(f->boot, s.boot) != 0) {
		f->lease_sent = 0;
		f->run_pgid = 0;	/* another boot's processes */
	}
	if (s.owner == 0) {
		*why = "no owner recorded (an older version wrote it)";
		return SESSION_FILE_ANON;
	}
	if (s.other != NULL) {
		*why = s.other;
		return SESSION_FILE_OTHER;
	}
	return 0;
}

int
session_file_read(const char *path, struct session_facts *f,
    const char **why)
{
	char buf[SESSION_FILE_MAX + 1], now_boot[64];
	struct session_owner owner = f->owner;
	struct stat st;
	ssize_t n;
	size_t off = 0;
	int fd, rc;

	(void)snprintf(now_boot, sizeof(now_boot), "%s", f->boot);
	memset(f, 0, sizeof(*f));
	(void)snprintf(f->boot, sizeof(f->boot), "%s", now_boot);
	f->owner = owner;
	*why = NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		return SESSION_FILE_NONE;
	if (fd == -1) {
		*why = errno == ELOOP ? "a symbolic link" : strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		*why = "not a file of the daemon's user with mode 0600";
		(void)close(fd);
		return -1;
	}
	/* One byte more than fits tells a file too long from one that fits. */
	while (off <= SESSION_FILE_MAX) {
		n = read(fd, buf + off, SESSION_FILE_MAX + 1 - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	(void)close(fd);
	if (off > SESSION_FILE_MAX) {
		explicit_bzero(buf, sizeof(buf));
		*why = "too long";
		return -1;
	}
	buf[off] = '\0';
	rc = session_parse(buf, f, why);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

void
session_file_remove(const char *path)
{
	if (unlink(path) == -1 && errno != ENOENT)
		log_warn("unlink %s", path);
}
