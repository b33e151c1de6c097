/*
 * The configuration file.  inih splits the INI syntax; this file reads the
 * file itself (so that an over-long line is an error, not a silent cut),
 * checks every value, applies the -o overrides and checks the keys against
 * each other.  A load fills a fresh struct config and hands it over only
 * when all of it is valid, so a broken file on reload changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

/* Debian's libinih reads lines into a 200-byte buffer. */
#define CONFIG_LINE_MAX		199
#define CONFIG_FILE_MAX		(1024 * 1024)
#define CONFIG_WHY_LEN		256
#define CONFIG_ROOT_MAX		256
/* zookeeper_init() takes the session timeout as an int. */
#define CONFIG_DURATION_MAX	INT_MAX
#define CONFIG_SUN_PATH_MAX \
	(sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1)
/* Leaves room for the suffix of the status file's temporary copy. */
#define CONFIG_STATUS_MAX	(PATH_MAX - 32)

#define CONFIG_FIELD(cfg, k)	((void *)((char *)(cfg) + (k)->off))
#define CONFIG_STR(cfg, k)	((char **)CONFIG_FIELD(cfg, k))
#define CONFIG_I64(cfg, k)	((int64_t *)CONFIG_FIELD(cfg, k))

enum config_key_id {
	K_HOSTS, K_SESSION_TIMEOUT, K_ROOT, K_AUTH,
	K_SERVICE, K_ID, K_DATA, K_MODE, K_DISCONNECT_GRACE,
	K_PROMOTE, K_DEMOTE, K_FENCE, K_CHECK, K_TIMEOUT, K_DEMOTE_TIMEOUT,
	K_CHECK_INTERVAL, K_CHECK_FALL, K_CHECK_RISE, K_RETRY_BACKOFF,
	K_DEMOTE_ON_START,
	K_SOCKET, K_SOCKET_MODE, K_SOCKET_GROUP, K_STATUS_FILE, K_LOG_LEVEL,
	K_MAX_CLIENTS,
	K_COUNT
};

/* A setter checks one value and stores it, or explains in why. */
struct config_key;
typedef int (*config_setter)(const struct config_key *, struct config *,
    const char *, char *);

struct config_key {
	const char	*section;
	const char	*name;
	config_setter	 set;
	size_t		 off;	/* field, for the generic setters */
	int64_t		 min;	/* range, or length of a string */
	int64_t		 max;
};

struct config_parse {
	struct config	*cfg;
	const char	*path;
	const char	*buf;
	size_t		 len;
	size_t		 pos;
	int		 lineno;	/* line the reader handed out last */
	int		 section_line;	/* of the last [section] */
	int		 stop;		/* the reader ends the file */
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

static int config_why(char *, const char *, ...) LOG_PRINTF(2, 3);
static void config_fail(struct config_parse *, int, const char *, ...)
    LOG_PRINTF(3, 4);
static void config_key_fail(struct config_parse *, int, const char *, ...)
    LOG_PRINTF(3, 4);

static int
config_why(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(why, CONFIG_WHY_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

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

static void
config_replace(char **dst, const char *v)
{
	free(*dst);
	*dst = (v != NULL) ? xstrdup(v) : NULL;
}

/* Printable ASCII is safe in logs, the status file, JSON and znodes. */
static int
config_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* One "host:port" of zookeeper.hosts, s to e. */
static int
config_check_hostport(const char *s, const char *e, char *why)
{
	const char *q, *colon = NULL, *w;
	char port[8];
	size_t plen;
	int64_t n;
	int len = (int)(e - s);

	/* The client splits at the last ':', so IPv6 takes no brackets. */
	for (q = s; q < e; q++)
		if (*q == ':')
			colon = q;
	if (colon == NULL || colon == s || colon + 1 == e)
		return config_why(why, "\"%.*s\" is not host:port", len, s);
	for (q = s; q < colon; q++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789.-_:%", *q) == NULL)
			return config_why(why, "bad host in \"%.*s\"", len, s);
	plen = (size_t)(e - colon - 1);
	if (plen < sizeof(port)) {
		memcpy(port, colon + 1, plen);
		port[plen] = '\0';
	}
	if (plen >= sizeof(port) ||
	    parse_int64(port, 1, 65535, &n, &w) == -1)
		return config_why(why, "bad port in \"%.*s\" (1-65535)",
		    len, s);
	return 0;
}

static int
config_set_hosts(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s, *e;

	if (*v == '\0')
		return config_why(why, "must not be empty");
	if (strchr(v, '/') != NULL)
		return config_why(why, "a chroot suffix is not supported, "
		    "use zookeeper.root");
	for (s = v;; s = e + 1) {
		e = strchrnul(s, ',');
		if (config_check_hostport(s, e, why) == -1)
			return -1;
		if (*e == '\0')
			break;
	}
	config_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* A ZooKeeper path; "/" alone puts the election right under the top. */
static int
config_set_root(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s, *e;
	size_t n = strlen(v);

	if (v[0] != '/')
		return config_why(why, "must start with '/'");
	if (n > CONFIG_ROOT_MAX)
		return config_why(why, "longer than %d bytes", CONFIG_ROOT_MAX);
	if (!config_printable(v))
		return config_why(why, "must be printable ASCII");
	if (n > 1 && v[n - 1] == '/')
		return config_why(why, "must not end with '/'");
	if (strstr(v, "//") != NULL)
		return config_why(why, "must not contain '//'");
	for (s = v + 1; *s != '\0'; s = (*e == '\0') ? e : e + 1) {
		e = strchrnul(s, '/');
		if ((e - s == 1 && s[0] == '.') ||
		    (e - s == 2 && s[0] == '.' && s[1] == '.'))
			return config_why(why, "must not contain \".\" or "
			    "\"..\"");
	}
	if (strcmp(v, "/zookeeper") == 0 || strncmp(v, "/zookeeper/", 11) == 0)
		return config_why(why, "/zookeeper is reserved by ZooKeeper");
	config_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* Empty means none, so that -o zookeeper.auth= can take it away. */
static int
config_set_auth(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *user = v + strlen("digest:"), *colon;

	if (*v == '\0') {
		config_replace(CONFIG_STR(cfg, k), NULL);
		return 0;
	}
	if (strncmp(v, "digest:", strlen("digest:")) != 0 ||
	    (colon = strchr(user, ':')) == NULL || colon == user ||
	    colon[1] == '\0')
		return config_why(why, "must be digest:user:password");
	config_replace(CONFIG_STR(cfg, k), user);
	return 0;
}

static int
config_set_service(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (n < (size_t)k->min || n > (size_t)k->max ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") != n)
		return config_why(why, "must be 1 to %lld of the characters "
		    "A-Z a-z 0-9 . _ -", (long long)k->max);
	if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
		return config_why(why, "must not be \".\" or \"..\"");
	config_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* election.id and election.data: peers read them from znode data. */
static int
config_set_text(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (n == 0 && k->min > 0)
		return config_why(why, "must not be empty");
	if (n > (size_t)k->max)
		return config_why(why, "longer than %lld bytes",
		    (long long)k->max);
	if (!config_printable(v))
		return config_why(why, "must be printable ASCII "
		    "(no tabs, newlines or control characters)");
	config_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

static int
config_set_mode(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	(void)k;
	if (strcmp(v, "candidate") == 0)
		cfg->mode = CONFIG_MODE_CANDIDATE;
	else if (strcmp(v, "observer") == 0)
		cfg->mode = CONFIG_MODE_OBSERVER;
	else
		return config_why(why, "must be candidate or observer");
	return 0;
}

static int
config_set_duration(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *w;

	if (parse_duration_ms(v, k->min, k->max, CONFIG_I64(cfg, k),
	    &w) == 0)
		return 0;
	if (strcmp(w, "out of range") == 0)
		return config_why(why, "out of range (at most %lldms)",
		    (long long)k->max);
	return config_why(why, "%s", w);
}

static int
config_set_number(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *w;

	if (parse_int64(v, k->min, k->max, CONFIG_I64(cfg, k), &w) == 0)
		return 0;
	return config_why(why, "%s (%lld-%lld)", w, (long long)k->min,
	    (long long)k->max);
}

/* Hook command lines; empty means none. */
static int
config_set_command(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	(void)why;
	config_replace(CONFIG_STR(cfg, k), (*v == '\0') ? NULL : v);
	return 0;
}

static int
config_set_bool(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	(void)k;
	if (strcasecmp(v, "yes") == 0 || strcasecmp(v, "true") == 0 ||
	    strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0)
		cfg->demote_on_start = 1;
	else if (strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0 ||
	    strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0)
		cfg->demote_on_start = 0;
	else
		return config_why(why, "must be yes or no");
	return 0;
}

static int
config_set_path(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (v[0] != '/')
		return config_why(why, "must be an absolute path");
	if (n > (size_t)k->max)
		return config_why(why, "longer than %lld bytes",
		    (long long)k->max);
	if (v[n - 1] == '/')
		return config_why(why, "must name a file, not a directory");
	if (!config_printable(v))
		return config_why(why, "must be printable ASCII");
	config_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

static int
config_set_socket_mode(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);
	long mode;

	if (n == 0 || n > 4 || strspn(v, "01234567") != n)
		return config_why(why, "must be an octal mode such as 0660");
	mode = strtol(v, NULL, 8);
	if (mode > k->max)
		return config_why(why, "must be at most 0777");
	cfg->socket_mode = (int)mode;
	return 0;
}

/* Resolved when the socket is made; here only its shape is checked. */
static int
config_set_group(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s;

	for (s = v; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s > 0x7e ||
		    *s == ':')
			return config_why(why,
			    "must be a group name or number");
	config_replace(CONFIG_STR(cfg, k), (*v == '\0') ? NULL : v);
	return 0;
}

static int
config_set_log_level(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	int level;

	(void)k;
	if ((level = log_level_parse(v)) == -1)
		return config_why(why,
		    "must be debug, info, notice, warning or err");
	cfg->log_level = level;
	return 0;
}

#define F(field)		offsetof(struct config, field)
#define DURATION(field, min) \
	config_set_duration, F(field), (min), CONFIG_DURATION_MAX
#define COMMAND(field)		config_set_command, F(field), 0, 0
static const struct config_key config_keys[K_COUNT] = {
	[K_HOSTS] = { "zookeeper", "hosts", config_set_hosts, F(hosts), 0, 0 },
	[K_SESSION_TIMEOUT] = { "zookeeper", "session_timeout",
	    DURATION(session_timeout_ms, 1) },
	[K_ROOT] = { "zookeeper", "root", config_set_root, F(root), 0, 0 },
	[K_AUTH] = { "zookeeper", "auth", config_set_auth, F(auth), 0, 0 },
	[K_SERVICE] = { "election", "service", config_set_service,
	    F(service), 1, 64 },
	[K_ID] = { "election", "id", config_set_text, F(id), 1, 128 },
	[K_DATA] = { "election", "data", config_set_text, F(data), 0, 512 },
	[K_MODE] = { "election", "mode", config_set_mode, F(mode), 0, 0 },
	[K_DISCONNECT_GRACE] = { "election", "disconnect_grace",
	    DURATION(disconnect_grace_ms, 0) },
	[K_PROMOTE] = { "hooks", "promote", COMMAND(hook_promote) },
	[K_DEMOTE] = { "hooks", "demote", COMMAND(hook_demote) },
	[K_FENCE] = { "hooks", "fence", COMMAND(hook_fence) },
	[K_CHECK] = { "hooks", "check", COMMAND(hook_check) },
	[K_TIMEOUT] = { "hooks", "timeout", DURATION(hook_timeout_ms, 1) },
	[K_DEMOTE_TIMEOUT] = { "hooks", "demote_timeout",
	    DURATION(demote_timeout_ms, 1) },
	[K_CHECK_INTERVAL] = { "hooks", "check_interval",
	    DURATION(check_interval_ms, 1) },
	[K_CHECK_FALL] = { "hooks", "check_fall", config_set_number,
	    F(check_fall), 1, 1000 },
	[K_CHECK_RISE] = { "hooks", "check_rise", config_set_number,
	    F(check_rise), 1, 1000 },
	[K_RETRY_BACKOFF] = { "hooks", "retry_backoff",
	    DURATION(retry_backoff_ms, 0) },
	[K_DEMOTE_ON_START] = { "hooks", "demote_on_start", config_set_bool,
	    F(demote_on_start), 0, 0 },
	[K_SOCKET] = { "control", "socket", config_set_path, F(socket_path),
	    1, CONFIG_SUN_PATH_MAX },
	[K_SOCKET_MODE] = { "control", "socket_mode", config_set_socket_mode,
	    F(socket_mode), 0, 0777 },
	[K_SOCKET_GROUP] = { "control", "socket_group", config_set_group,
	    F(socket_group), 0, 0 },
	[K_STATUS_FILE] = { "control", "status_file", config_set_path,
	    F(status_file), 1, CONFIG_STATUS_MAX },
	[K_LOG_LEVEL] = { "control", "log_level", config_set_log_level,
	    F(log_level), 0, 0 },
	[K_MAX_CLIENTS] = { "control", "max_clients", config_set_number,
	    F(max_clients), 1, 65536 },
};
#undef COMMAND
#undef DURATION
#undef F

/* An error about one key, located where that key was last set. */
static void
config_key_fail(struct config_parse *p, int id, const char *fmt, ...)
{
	const struct config_key *k = &config_keys[id];
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
		if (strcmp(config_keys[i].section, section) == 0 &&
		    strcmp(config_keys[i].name, name) == 0)
			return i;
	return -1;
}

/* Sets one key; where is a file line, or -1 for an override. */
static int
config_apply(struct config_parse *p, int id, const char *value, int where)
{
	const struct config_key *k = &config_keys[id];
	char why[CONFIG_WHY_LEN];

	p->where[id] = where;
	if (k->set(k, p->cfg, value, why) == -1) {
		config_key_fail(p, id, "%s", why);
		return -1;
	}
	return 0;
}

/*
 * Sections are checked as the reader meets them, so that an empty section
 * with a misspelt name is reported too.  The scan for ']' stops where inih
 * sees a comment; inih itself reports a header without ']'.
 */
static int
config_check_section(struct config_parse *p, const char *line, size_t len)
{
	size_t i;

	p->section_line = p->lineno;
	for (i = 1; i < len && line[i] != ']'; i++)
		if (line[i] == ';' && (line[i - 1] == ' ' ||
		    line[i - 1] == '\t'))
			return 0;
	if (i >= len || config_section_known(line + 1, i - 1))
		return 0;
	config_fail(p, p->lineno, "[%.*s]: unknown section", (int)(i - 1),
	    line + 1);
	return -1;
}

/*
 * inih's fgets-style reader, over the file read whole.  It counts lines,
 * so the handler knows where it is, and ends the file at the first error.
 * Leading blanks are dropped so that inih never takes an indented line as
 * the continuation of the previous value.
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
	if (p->where[id] > 0) {
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
	char host[256], why[CONFIG_WHY_LEN];

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
		if (config_set_text(&config_keys[K_ID], cfg, host,
		    why) == -1) {
			config_fail(p, 0, "election.id: the hostname cannot be "
			    "the default: %s", why);
			return -1;
		}
	}
	/* The demote hook must end well inside the lease. */
	if (p->where[K_DEMOTE_TIMEOUT] != 0) {
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

int
config_load(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, char *err, size_t errlen)
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
	new.disconnect_grace_ms = 0;
	new.hook_timeout_ms = 30000;
	new.check_interval_ms = 5000;
	new.check_fall = 3;
	new.check_rise = 2;
	new.retry_backoff_ms = 5000;
	new.demote_on_start = 1;
	new.socket_mode = 0660;
	new.log_level = LOG_INFO;
	new.max_clients = 256;

	p.cfg = &new;
	p.path = path;
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
	if (config_finish(&p) == -1)
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
	free(cfg->socket_path);
	free(cfg->socket_group);
	free(cfg->status_file);
	memset(cfg, 0, sizeof(*cfg));
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
