/*
 * The configuration file.  inih splits the INI syntax; this file reads the
 * file itself (so that an over-long line is an error, not a silent cut),
 * hands every value to its setter in config_value.c, applies the -o
 * overrides and checks the keys against each other (and, in config_path.c,
 * the files they name).  A load fills a fresh struct config and hands it
 * over only when all of it is valid, so a broken file on reload changes
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "config_int.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

/* Debian's libinih reads lines into a 200-byte buffer. */
#define CONFIG_LINE_MAX		199
#define CONFIG_FILE_MAX		(1024 * 1024)
/* UTF-8's byte order mark, which some editors put at the top. */
#define CONFIG_BOM		"\xef\xbb\xbf"
#define CONFIG_BOM_LEN		3

struct config_parse {
	struct config	*cfg;
	const char	*path;
	const char	*buf;
	size_t		 len;
	size_t		 pos;
	int		 lineno;	/* line the reader handed out last */
	int		 section_line;	/* of the last [section] */
	int		 stop;		/* the reader ends the file */
	int		 system;	/* -t: look up what the start would */
	int		 failed;
	int		 errline;
	char		*err;
	size_t		 errlen;
	/* Where each key was set: 0 not set, >0 file line, -1 by -o. */
	int		 where[K_COUNT];
};

static const char *const config_sections[] = {
	"zookeeper", "election", "hooks", "control",
};

static void config_fail(struct config_parse *, int, const char *, ...)
    LOG_PRINTF(3, 4);
static void config_key_fail(struct config_parse *, int, const char *, ...)
    LOG_PRINTF(3, 4);

/*
 * Keeps the first error only: it is the one nearest the top of the file,
 * and the others may be its consequences.  line > 0 names a line of the
 * file, 0 the file as a whole, -1 nothing (the message starts "-o ...").
 */
static void
config_fail(struct config_parse *p, int line, const char *fmt, ...)
{
	char body[1024];
	va_list ap;

	if (p->failed)
		return;
	p->failed = 1;
	p->errline = line;
	va_start(ap, fmt);
	(void)vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (p->errlen == 0)
		return;
	if (line > 0)
		(void)snprintf(p->err, p->errlen, "%s:%d: %s", p->path, line,
		    body);
	else if (line == 0)
		(void)snprintf(p->err, p->errlen, "%s: %s", p->path, body);
	else
		(void)snprintf(p->err, p->errlen, "%s", body);
}

static int
config_section_known(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(config_sections) / sizeof(config_sections[0]);
	    i++)
		if (strlen(config_sections[i]) == len &&
		    strncmp(config_sections[i], name, len) == 0)
			return 1;
	return 0;
}

/* An error about one key, located where that key was last set. */
static void
config_key_fail(struct config_parse *p, int id, const char *fmt, ...)
{
	const struct config_key *k = &config_value_keys[id];
	char body[1024];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (p->where[id] < 0)
		config_fail(p, -1, "-o %s.%s: %s", k->section, k->name, body);
	else
		config_fail(p, p->where[id], "%s.%s: %s", k->section, k->name,
		    body);
}

static int
config_key_find(const char *section, const char *name)
{
	int i;

	for (i = 0; i < K_COUNT; i++)
		if (strcmp(config_value_keys[i].section, section) == 0 &&
		    strcmp(config_value_keys[i].name, name) == 0)
			return i;
	return -1;
}

/* Sets one key; where is a file line, or -1 for an override. */
static int
config_apply(struct config_parse *p, int id, const char *value, int where)
{
	char why[CONFIG_WHY_LEN];

	/* The first -o of a key the file repeats replaces the file's list. */
	if (config_value_keys[id].repeat && where < 0 && p->where[id] > 0)
		(void)config_value_set(id, p->cfg, "", why);
	p->where[id] = where;
	if (config_value_set(id, p->cfg, value, why) == -1) {
		config_key_fail(p, id, "%s", why);
		return -1;
	}
	return 0;
}

/*
 * Sections are checked as the reader meets them, so that an empty section
 * with a misspelt name is reported too.  The scan for ']' stops where inih
 * sees a comment; inih itself reports a header without ']'.  inih drops
 * what follows the ']', which would lose a key written on the same line:
 * only blanks, and a comment after a blank, may follow it.
 */
static int
config_check_section(struct config_parse *p, const char *line, size_t len)
{
	size_t i, j;

	p->section_line = p->lineno;
	for (i = 1; i < len && line[i] != ']'; i++)
		if (line[i] == ';' && (line[i - 1] == ' ' ||
		    line[i - 1] == '\t'))
			return 0;
	if (i >= len)
		return 0;
	if (!config_section_known(line + 1, i - 1)) {
		config_fail(p, p->lineno, "[%.*s]: unknown section",
		    (int)(i - 1), line + 1);
		return -1;
	}
	for (j = i + 1; j < len && (line[j] == ' ' || line[j] == '\t'); j++)
		;
	if (j == len || (j > i + 1 && line[j] == ';'))
		return 0;
	config_fail(p, p->lineno, "[%.*s]: text after the section name",
	    (int)(i - 1), line + 1);
	return -1;
}

/*
 * inih's fgets-style reader, over the file read whole.  It counts lines,
 * so the handler knows where it is, and ends the file at the first error.
 * Leading blanks are dropped so that inih never takes an indented line as
 * the continuation of the previous value.  A UTF-8 byte order mark, which
 * inih would drop from the first line, is dropped here, before the line
 * is looked at.
 */
static char *
config_reader(char *str, int num, void *stream)
{
	struct config_parse *p = stream;
	const char *line, *nl;
	size_t len, limit = CONFIG_LINE_MAX;

	if (p->stop || p->pos >= p->len || num <= 1)
		return NULL;
	line = p->buf + p->pos;
	nl = memchr(line, '\n', p->len - p->pos);
	len = (nl != NULL) ? (size_t)(nl - line) : p->len - p->pos;
	p->pos += len + (nl != NULL);
	p->lineno++;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if ((size_t)num - 1 < limit)
		limit = (size_t)num - 1;
	if (len > limit) {
		config_fail(p, p->lineno, "line longer than %zu bytes", limit);
		p->stop = 1;
		return NULL;
	}
	if (memchr(line, '\0', len) != NULL) {
		config_fail(p, p->lineno, "NUL byte in line");
		p->stop = 1;
		return NULL;
	}
	if (p->lineno == 1 && len >= CONFIG_BOM_LEN &&
	    memcmp(line, CONFIG_BOM, CONFIG_BOM_LEN) == 0) {
		line += CONFIG_BOM_LEN;
		len -= CONFIG_BOM_LEN;
	}
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (len > 0 && *line == '[' &&
	    config_check_section(p, line, len) == -1) {
		p->stop = 1;
		return NULL;
	}
	memcpy(str, line, len);
	str[len] = '\0';
	return str;
}

static int
config_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct config_parse *p = user;
	int id;

	if (*name == '\0' || value == NULL) {
		config_fail(p, p->lineno, "syntax error");
		goto fail;
	}
	if (*section == '\0') {
		config_fail(p, p->lineno, "%s: key outside any section", name);
		goto fail;
	}
	if ((id = config_key_find(section, name)) == -1) {
		if (!config_section_known(section, strlen(section)))
			config_fail(p, p->section_line,
			    "[%s]: unknown section", section);
		else
			config_fail(p, p->lineno, "%s.%s: unknown key",
			    section, name);
		goto fail;
	}
	if (p->where[id] > 0 && !config_value_keys[id].repeat) {
		config_fail(p, p->lineno, "%s.%s: duplicate key (first set "
		    "on line %d)", section, name, p->where[id]);
		goto fail;
	}
	if (config_apply(p, id, value, p->lineno) == -1)
		goto fail;
	return 1;
fail:
	p->stop = 1;
	return 0;
}

static char *
config_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * "section.key=value" from the command line.  Blanks around the key and the
 * value are dropped as in the file, but ';' is no comment here.
 */
static int
config_override(struct config_parse *p, const char *arg)
{
	char *copy, *key, *dot, *eq, *value;
	int id, rv = -1;

	copy = xstrdup(arg);
	if ((eq = strchr(copy, '=')) == NULL) {
		config_fail(p, -1, "-o %s: must be section.key=value", arg);
		goto out;
	}
	*eq = '\0';
	key = config_trim(copy);
	value = config_trim(eq + 1);
	if ((dot = strchr(key, '.')) == NULL || dot == key ||
	    dot[1] == '\0') {
		config_fail(p, -1, "-o %s: must be section.key=value", key);
		goto out;
	}
	*dot = '\0';
	if ((id = config_key_find(key, dot + 1)) == -1) {
		config_fail(p, -1, "-o %s.%s: %s", key, dot + 1,
		    config_section_known(key, strlen(key)) ?
		    "unknown key" : "unknown section");
		goto out;
	}
	rv = config_apply(p, id, value, -1);
out:
	free(copy);
	return rv;
}

/* Defaults that depend on other keys, and checks across keys. */
static int
config_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	char host[256], why[CONFIG_WHY_LEN], clash[1024];
	int id;

	if (cfg->hosts == NULL) {
		config_fail(p, 0, "zookeeper.hosts: required key missing");
		return -1;
	}
	if (cfg->service == NULL) {
		config_fail(p, 0, "election.service: required key missing");
		return -1;
	}
	if (cfg->root == NULL)
		cfg->root = xstrdup("/zkelectd");
	if (cfg->data == NULL)
		cfg->data = xstrdup("");
	if (cfg->id == NULL) {
		if (gethostname(host, sizeof(host)) == -1) {
			config_fail(p, 0, "election.id: cannot get the "
			    "hostname: %s", strerror(errno));
			return -1;
		}
		host[sizeof(host) - 1] = '\0';
		if (config_value_set(K_ID, cfg, host, why) == -1) {
			config_fail(p, 0, "election.id: the hostname cannot be "
			    "the default: %s", why);
			return -1;
		}
	}
	/* The demote hook must end well inside the lease. */
	if (p->where[K_DEMOTE_TIMEOUT] != 0) {
		cfg->demote_timeout_set = 1;
		if (cfg->demote_timeout_ms * 3 >= cfg->session_timeout_ms) {
			config_key_fail(p, K_DEMOTE_TIMEOUT, "%lldms is not "
			    "less than a third of zookeeper.session_timeout "
			    "(%lldms)",
			    (long long)cfg->demote_timeout_ms,
			    (long long)cfg->session_timeout_ms);
			return -1;
		}
	} else {
		cfg->demote_timeout_ms = cfg->session_timeout_ms / 4;
		if (cfg->demote_timeout_ms == 0)
			cfg->demote_timeout_ms = 1;
	}
	if (cfg->socket_path == NULL)
		(void)xasprintf(&cfg->socket_path, "%s/%s.sock", CONFIG_RUNDIR,
		    cfg->service);
	if (cfg->status_file == NULL)
		(void)xasprintf(&cfg->status_file, "%s/%s.status",
		    CONFIG_RUNDIR, cfg->service);
	if ((id = config_path_clash(cfg, p->path, p->where, clash,
	    sizeof(clash))) != -1) {
		config_key_fail(p, id, "%s", clash);
		return -1;
	}
	return 0;
}

/*
 * What the start refuses beyond the file, looked up without side effects
 * (-t only): the socket's group. ExecReload runs -t, and a group that
 * exists nowhere would otherwise pass a reload and fail the next restart.
 * The start's other refusals (a socket in use, a directory it cannot
 * make) depend on the moment or make files, and stay the start's.
 */
static int
config_finish_system(struct config_parse *p)
{
	const char *why;
	gid_t gid;

	if (p->cfg->socket_group != NULL &&
	    parse_group(p->cfg->socket_group, &gid, &why) == -1) {
		config_key_fail(p, K_SOCKET_GROUP, "%s: %s",
		    p->cfg->socket_group, why);
		return -1;
	}
	return 0;
}

/* Reads the whole file; returns 0, or -1 with errno set. */
static int
config_read(const char *path, char **bufp, size_t *lenp)
{
	char *buf;
	size_t len = 0, cap = 4096;
	ssize_t n;
	int fd, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_FILE_MAX) {
			errno = EFBIG;
			goto fail;
		}
	}
	(void)close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	saved = errno;
	free(buf);
	(void)close(fd);
	errno = saved;
	return -1;
}

static int
config_load_as(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, int system, char *err, size_t errlen)
{
	struct config new;
	struct config_parse p;
	char *buf = NULL;
	size_t i;
	int rv;

	memset(&new, 0, sizeof(new));
	memset(&p, 0, sizeof(p));
	new.path = xstrdup(path);
	new.session_timeout_ms = 10000;
	new.mode = CONFIG_MODE_CANDIDATE;
	new.tick_ms = 2000;
	new.disconnect_grace_ms = -1;
	new.priority = 0;
	new.preempt_delay_ms = 30000;
	new.hook_timeout_ms = 30000;
	new.check_interval_ms = 5000;
	new.check_fall = 3;
	new.check_rise = 2;
	new.retry_backoff_ms = 5000;
	new.run_stop_timeout_ms = 10000;
	new.demote_on_start = 1;
	new.socket_mode = 0660;
	new.log_level = LOG_INFO;
	new.max_clients = 256;

	p.cfg = &new;
	p.path = path;
	p.system = system;
	p.err = err;
	p.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';

	if (config_read(path, &buf, &p.len) == -1) {
		config_fail(&p, 0, "cannot read: %s", strerror(errno));
		goto fail;
	}
	p.buf = buf;
	rv = ini_parse_stream(config_reader, &p, config_handler, &p);
	if (rv > 0 && (!p.failed || (p.errline > 0 && rv < p.errline))) {
		/* inih found a syntax error above our first error. */
		p.failed = 0;
		config_fail(&p, rv, "syntax error");
	} else if (rv < 0 && !p.failed)
		config_fail(&p, 0, "cannot parse (inih error %d)", rv);
	if (p.failed)
		goto fail;
	for (i = 0; i < noverrides; i++)
		if (config_override(&p, overrides[i]) == -1)
			goto fail;
	if (config_finish(&p) == -1 ||
	    (p.system && config_finish_system(&p) == -1))
		goto fail;
	free(buf);
	*cfg = new;
	return 0;
fail:
	free(buf);
	config_free(&new);
	memset(cfg, 0, sizeof(*cfg));
	return -1;
}

int
config_load(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, char *err, size_t errlen)
{
	return config_load_as(cfg, path, overrides, noverrides, 0, err,
	    errlen);
}

int
config_check(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, char *err, size_t errlen)
{
	return config_load_as(cfg, path, overrides, noverrides, 1, err,
	    errlen);
}

void
config_free(struct config *cfg)
{
	free(cfg->path);
	free(cfg->hosts);
	free(cfg->root);
	free(cfg->auth);
	free(cfg->service);
	free(cfg->id);
	free(cfg->data);
	free(cfg->hook_promote);
	free(cfg->hook_demote);
	free(cfg->hook_fence);
	free(cfg->hook_check);
	free(cfg->hook_notify);
	free(cfg->hook_run);
	free(cfg->socket_path);
	free(cfg->socket_group);
	free(cfg->status_file);
	config_value_listen_clear(cfg);
	memset(cfg, 0, sizeof(*cfg));
}

int
config_listen_equal(const struct config *a, const struct config *b)
{
	size_t i;

	if (a->nhttp_listen != b->nhttp_listen)
		return 0;
	for (i = 0; i < a->nhttp_listen; i++)
		if (strcmp(a->http_listen[i].name, b->http_listen[i].name) != 0)
			return 0;
	return 1;
}

void
config_listen_copy(struct config *dst, const struct config *src)
{
	size_t i;

	config_value_listen_clear(dst);
	if (src->nhttp_listen == 0)
		return;
	dst->http_listen = xcalloc(src->nhttp_listen,
	    sizeof(*dst->http_listen));
	for (i = 0; i < src->nhttp_listen; i++) {
		dst->http_listen[i].host = xstrdup(src->http_listen[i].host);
		dst->http_listen[i].port = src->http_listen[i].port;
		dst->http_listen[i].name = xstrdup(src->http_listen[i].name);
	}
	dst->nhttp_listen = src->nhttp_listen;
}

char *
config_election_path(const struct config *cfg)
{
	char *path;

	/* A root of "/" puts the election right under the top. */
	if (strcmp(cfg->root, "/") == 0)
		(void)xasprintf(&path, "/%s", cfg->service);
	else
		(void)xasprintf(&path, "%s/%s", cfg->root, cfg->service);
	return path;
}
