/*
 * The value of each configuration key: its setter checks the text the file
 * or -o gave and stores it in struct config, or says why it is refused.
 * The table of keys lives here too, next to the setters it names, so that
 * the setters stay private to this file.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "candidate.h"
#include "config_int.h"
#include "election.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

#define CONFIG_ROOT_MAX		256
/* E/candidates is the root, the service and one more. */
#define CONFIG_ROOT_PARTS	(EL_MAX_DEPTH - 2)
/* zookeeper_init() takes the session timeout as an int. */
#define CONFIG_DURATION_MAX	INT_MAX
#define CONFIG_SUN_PATH_MAX \
	(sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1)
/* Leaves room for the suffix of the status file's temporary copy. */
#define CONFIG_STATUS_MAX	(PATH_MAX - 32)
/* Addresses of control.http_listen, all occurrences together. */
#define CONFIG_LISTEN_MAX	16

#define CONFIG_FIELD(cfg, k)	((void *)((char *)(cfg) + (k)->off))
#define CONFIG_STR(cfg, k)	((char **)CONFIG_FIELD(cfg, k))
#define CONFIG_I64(cfg, k)	((int64_t *)CONFIG_FIELD(cfg, k))

static int config_value_why(char *, const char *, ...) LOG_PRINTF(2, 3);

static int
config_value_why(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(why, CONFIG_WHY_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

static void
config_value_replace(char **dst, const char *v)
{
	free(*dst);
	*dst = (v != NULL) ? xstrdup(v) : NULL;
}

/* Printable ASCII is safe in logs, the status file, JSON and znodes. */
static int
config_value_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* One "host:port" of zookeeper.hosts, s to e. */
static int
config_value_hostport(const char *s, const char *e, char *why)
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
		return config_value_why(why, "\"%.*s\" is not host:port",
		    len, s);
	for (q = s; q < colon; q++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789.-_:%", *q) == NULL)
			return config_value_why(why, "bad host in \"%.*s\"",
			    len, s);
	plen = (size_t)(e - colon - 1);
	if (plen < sizeof(port)) {
		memcpy(port, colon + 1, plen);
		port[plen] = '\0';
	}
	if (plen >= sizeof(port) ||
	    parse_int64(port, 1, 65535, &n, &w) == -1)
		return config_value_why(why, "bad port in \"%.*s\" (1-65535)",
		    len, s);
	return 0;
}

static int
config_value_hosts(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s, *e;

	if (*v == '\0')
		return config_value_why(why, "must not be empty");
	if (strchr(v, '/') != NULL)
		return config_value_why(why, "a chroot suffix is not "
		    "supported, use zookeeper.root");
	for (s = v;; s = e + 1) {
		e = strchrnul(s, ',');
		if (config_value_hostport(s, e, why) == -1)
			return -1;
		if (*e == '\0')
			break;
	}
	config_value_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* A ZooKeeper path; "/" alone puts the election right under the top. */
static int
config_value_root(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s, *e;
	size_t n = strlen(v);
	int parts = 0;

	if (v[0] != '/')
		return config_value_why(why, "must start with '/'");
	if (n > CONFIG_ROOT_MAX)
		return config_value_why(why, "longer than %d bytes",
		    CONFIG_ROOT_MAX);
	if (!config_value_printable(v))
		return config_value_why(why, "must be printable ASCII");
	if (n > 1 && v[n - 1] == '/')
		return config_value_why(why, "must not end with '/'");
	if (strstr(v, "//") != NULL)
		return config_value_why(why, "must not contain '//'");
	for (s = v + 1; *s != '\0'; s = (*e == '\0') ? e : e + 1) {
		e = strchrnul(s, '/');
		if (e > s && ++parts > CONFIG_ROOT_PARTS)
			return config_value_why(why, "has more than %d path "
			    "components", CONFIG_ROOT_PARTS);
		if ((e - s == 1 && s[0] == '.') ||
		    (e - s == 2 && s[0] == '.' && s[1] == '.'))
			return config_value_why(why, "must not contain "
			    "\".\" or \"..\"");
	}
	if (strcmp(v, "/zookeeper") == 0 || strncmp(v, "/zookeeper/", 11) == 0)
		return config_value_why(why,
		    "/zookeeper is reserved by ZooKeeper");
	config_value_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* Empty means none, so that -o zookeeper.auth= can take it away. */
static int
config_value_auth(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *user = v + strlen("digest:"), *colon;

	if (*v == '\0') {
		config_value_replace(CONFIG_STR(cfg, k), NULL);
		return 0;
	}
	if (strncmp(v, "digest:", strlen("digest:")) != 0 ||
	    (colon = strchr(user, ':')) == NULL || colon == user ||
	    colon[1] == '\0')
		return config_value_why(why, "must be digest:user:password");
	config_value_replace(CONFIG_STR(cfg, k), user);
	return 0;
}

static int
config_value_service(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (n < (size_t)k->min || n > (size_t)k->max ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") != n)
		return config_value_why(why, "must be 1 to %lld of the "
		    "characters A-Z a-z 0-9 . _ -", (long long)k->max);
	if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
		return config_value_why(why, "must not be \".\" or \"..\"");
	config_value_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/* election.id and election.data: peers read them from znode data. */
static int
config_value_text(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (n == 0 && k->min > 0)
		return config_value_why(why, "must not be empty");
	if (n > (size_t)k->max)
		return config_value_why(why, "longer than %lld bytes",
		    (long long)k->max);
	if (!config_value_printable(v))
		return config_value_why(why, "must be printable ASCII "
		    "(no tabs, newlines or control characters)");
	config_value_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

/*
 * election.id, as election.data, and more: the watch line and history
 * are words of key=value (role=follower leader=ID epoch=N), which an id
 * with a space would cut into other words (an id "db1 epoch=9" reads as a
 * false fencing token), and one with '=' would give a naive search for
 * "epoch=" a match inside it. A hostname with either is refused too.
 */
static int
config_value_id(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	if (strpbrk(v, " =") != NULL)
		return config_value_why(why, "must not hold spaces or '=' "
		    "(the watch line is words of key=value)");
	return config_value_text(k, cfg, v, why);
}

static int
config_value_mode(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	(void)k;
	if (strcmp(v, "candidate") == 0)
		cfg->mode = CONFIG_MODE_CANDIDATE;
	else if (strcmp(v, "observer") == 0)
		cfg->mode = CONFIG_MODE_OBSERVER;
	else
		return config_value_why(why, "must be candidate or observer");
	return 0;
}

static int
config_value_duration(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *w;

	if (parse_duration_ms(v, k->min, k->max, CONFIG_I64(cfg, k),
	    &w) == 0)
		return 0;
	if (strcmp(w, "out of range") == 0)
		return config_value_why(why, "out of range (at most %lldms)",
		    (long long)k->max);
	return config_value_why(why, "%s", w);
}

static int
config_value_number(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *w;

	if (parse_int64(v, k->min, k->max, CONFIG_I64(cfg, k), &w) == 0)
		return 0;
	return config_value_why(why, "%s (%lld-%lld)", w, (long long)k->min,
	    (long long)k->max);
}

/* A duration, or the word given, stored as -1. */
static int
config_value_duration_or(const struct config_key *k, struct config *cfg,
    const char *v, char *why, const char *word)
{
	size_t len;

	if (strcmp(v, word) == 0) {
		*CONFIG_I64(cfg, k) = -1;
		return 0;
	}
	if (config_value_duration(k, cfg, v, why) == 0)
		return 0;
	len = strlen(why);
	if (len + strlen(word) + sizeof(" (or )") <= CONFIG_WHY_LEN)
		(void)snprintf(why + len, CONFIG_WHY_LEN - len, " (or %s)",
		    word);
	return -1;
}

/* A duration, or never (-1): no preemption. */
static int
config_value_preempt(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	return config_value_duration_or(k, cfg, v, why, "never");
}

/* A duration, or lease (-1): a disconnected leader leads on while it may. */
static int
config_value_grace(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	return config_value_duration_or(k, cfg, v, why, "lease");
}

/* Hook command lines; empty means none. */
static int
config_value_command(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	(void)why;
	config_value_replace(CONFIG_STR(cfg, k), (*v == '\0') ? NULL : v);
	return 0;
}

static int
config_value_bool(const struct config_key *k, struct config *cfg,
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
		return config_value_why(why, "must be yes or no");
	return 0;
}

static int
config_value_path(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);

	if (v[0] != '/')
		return config_value_why(why, "must be an absolute path");
	if (n > (size_t)k->max)
		return config_value_why(why, "longer than %lld bytes",
		    (long long)k->max);
	if (v[n - 1] == '/')
		return config_value_why(why,
		    "must name a file, not a directory");
	if (!config_value_printable(v))
		return config_value_why(why, "must be printable ASCII");
	config_value_replace(CONFIG_STR(cfg, k), v);
	return 0;
}

static int
config_value_socket_mode(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	size_t n = strlen(v);
	long mode;

	if (n == 0 || n > 4 || strspn(v, "01234567") != n)
		return config_value_why(why,
		    "must be an octal mode such as 0660");
	mode = strtol(v, NULL, 8);
	if (mode > k->max)
		return config_value_why(why, "must be at most 0777");
	cfg->socket_mode = (int)mode;
	return 0;
}

/* Resolved when the socket is made; here only its shape is checked. */
static int
config_value_group(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	const char *s;

	for (s = v; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s > 0x7e ||
		    *s == ':')
			return config_value_why(why,
			    "must be a group name or number");
	config_value_replace(CONFIG_STR(cfg, k), (*v == '\0') ? NULL : v);
	return 0;
}

static int
config_value_log_level(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	int level;

	(void)k;
	if ((level = log_level_parse(v)) == -1)
		return config_value_why(why,
		    "must be debug, info, notice, warning or err");
	cfg->log_level = level;
	return 0;
}

void
config_value_listen_clear(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nhttp_listen; i++) {
		free(cfg->http_listen[i].host);
		free(cfg->http_listen[i].name);
	}
	free(cfg->http_listen);
	cfg->http_listen = NULL;
	cfg->nhttp_listen = 0;
}

/*
 * One ADDR:PORT of control.http_listen, s to e: a numeric IPv4 address,
 * an IPv6 one in brackets, or "*" (or nothing) for every IPv4 address.
 * Names are refused so that what the daemon binds never depends on DNS.
 */
static int
config_value_listen_one(const char *s, const char *e, struct config_listen *l,
    char *why)
{
	struct in6_addr a6;
	struct in_addr a4;
	const char *h = s, *colon, *w;
	char host[INET6_ADDRSTRLEN], port[8];
	size_t hlen, plen;
	int64_t n;
	int len = (int)(e - s), v6 = (*s == '[');

	if (len == 0)
		return config_value_why(why, "empty address in the list");
	if (v6) {
		if ((colon = memchr(s, ']', (size_t)len)) == NULL ||
		    colon + 1 == e || colon[1] != ':')
			return config_value_why(why, "\"%.*s\" is not "
			    "[IPv6]:PORT", len, s);
		h = s + 1;
		hlen = (size_t)(colon - h);
		colon++;
	} else {
		if ((colon = memchr(s, ':', (size_t)len)) == NULL)
			return config_value_why(why, "\"%.*s\" is not "
			    "ADDR:PORT", len, s);
		if (memchr(colon + 1, ':', (size_t)(e - colon - 1)) != NULL)
			return config_value_why(why, "\"%.*s\": an IPv6 "
			    "address takes brackets, as in [::1]:8008", len, s);
		hlen = (size_t)(colon - s);
	}
	if (hlen >= sizeof(host))
		return config_value_why(why, "\"%.*s\": address too long",
		    len, s);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (!v6 && (hlen == 0 || strcmp(host, "*") == 0))
		(void)snprintf(host, sizeof(host), "0.0.0.0");
	if ((v6 && inet_pton(AF_INET6, host, &a6) != 1) ||
	    (!v6 && inet_pton(AF_INET, host, &a4) != 1))
		return config_value_why(why, "\"%.*s\": not a numeric "
		    "address (an IPv4 address, [IPv6] or *)", len, s);
	plen = (size_t)(e - colon - 1);
	if (plen > 0 && plen < sizeof(port)) {
		memcpy(port, colon + 1, plen);
		port[plen] = '\0';
	}
	if (plen == 0 || plen >= sizeof(port) ||
	    parse_int64(port, 1, 65535, &n, &w) == -1)
		return config_value_why(why, "bad port in \"%.*s\" (1-65535)",
		    len, s);
	l->host = xstrdup(host);
	l->port = (int)n;
	(void)xasprintf(&l->name, v6 ? "[%s]:%d" : "%s:%d", host, l->port);
	return 0;
}

/*
 * control.http_listen: a comma-separated list that each further
 * occurrence of the key adds to; an empty value empties the list.
 */
static int
config_value_listen(const struct config_key *k, struct config *cfg,
    const char *v, char *why)
{
	struct config_listen l, *list;
	const char *s, *e;
	size_t n = cfg->nhttp_listen, i, added = 0;

	(void)k;
	if (*v == '\0') {
		config_value_listen_clear(cfg);
		return 0;
	}
	list = xreallocarray(NULL, n + CONFIG_LISTEN_MAX, sizeof(*list));
	if (n > 0)
		memcpy(list, cfg->http_listen, n * sizeof(*list));
	for (s = v;; s = e + 1) {
		e = strchrnul(s, ',');
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (n + added == CONFIG_LISTEN_MAX) {
			(void)config_value_why(why, "more than %d addresses",
			    CONFIG_LISTEN_MAX);
			goto fail;
		}
		if (config_value_listen_one(s, e, &l, why) == -1)
			goto fail;
		for (i = 0; i < n + added; i++)
			if (strcmp(list[i].name, l.name) == 0)
				break;
		list[n + added++] = l;
		if (i < n + added - 1) {
			(void)config_value_why(why, "%s listed twice", l.name);
			goto fail;
		}
		e = strchrnul(e, ',');
		if (*e == '\0')
			break;
	}
	free(cfg->http_listen);
	cfg->http_listen = list;
	cfg->nhttp_listen = n + added;
	return 0;
fail:
	for (i = n; i < n + added; i++) {
		free(list[i].host);
		free(list[i].name);
	}
	free(list);
	return -1;
}

#define F(field)		offsetof(struct config, field)
#define DURATION(field, min) \
	config_value_duration, F(field), (min), CONFIG_DURATION_MAX
#define COMMAND(field)		config_value_command, F(field), 0, 0
const struct config_key config_value_keys[K_COUNT] = {
	[K_HOSTS] = { "zookeeper", "hosts", config_value_hosts, F(hosts),
	    0, 0 },
	[K_SESSION_TIMEOUT] = { "zookeeper", "session_timeout",
	    DURATION(session_timeout_ms, 1) },
	[K_TICK_TIME] = { "zookeeper", "tick_time", DURATION(tick_ms, 1) },
	[K_ROOT] = { "zookeeper", "root", config_value_root, F(root), 0, 0 },
	[K_AUTH] = { "zookeeper", "auth", config_value_auth, F(auth), 0, 0 },
	[K_SERVICE] = { "election", "service", config_value_service,
	    F(service), 1, 64 },
	[K_ID] = { "election", "id", config_value_id, F(id), 1, 128 },
	[K_DATA] = { "election", "data", config_value_text, F(data), 0, 512 },
	[K_MODE] = { "election", "mode", config_value_mode, F(mode), 0, 0 },
	[K_DISCONNECT_GRACE] = { "election", "disconnect_grace",
	    config_value_grace, F(disconnect_grace_ms), 0,
	    CONFIG_DURATION_MAX },
	[K_PRIORITY] = { "election", "priority", config_value_number,
	    F(priority), -CANDIDATE_PRIORITY_MAX, CANDIDATE_PRIORITY_MAX },
	[K_PREEMPT_DELAY] = { "election", "preempt_delay",
	    config_value_preempt, F(preempt_delay_ms), 0, 86400000 },
	[K_PROMOTE] = { "hooks", "promote", COMMAND(hook_promote) },
	[K_DEMOTE] = { "hooks", "demote", COMMAND(hook_demote) },
	[K_FENCE] = { "hooks", "fence", COMMAND(hook_fence) },
	[K_CHECK] = { "hooks", "check", COMMAND(hook_check) },
	[K_TIMEOUT] = { "hooks", "timeout", DURATION(hook_timeout_ms, 1) },
	[K_DEMOTE_TIMEOUT] = { "hooks", "demote_timeout",
	    DURATION(demote_timeout_ms, 1) },
	[K_CHECK_INTERVAL] = { "hooks", "check_interval",
	    DURATION(check_interval_ms, 1) },
	[K_CHECK_FALL] = { "hooks", "check_fall", config_value_number,
	    F(check_fall), 1, 1000 },
	[K_CHECK_RISE] = { "hooks", "check_rise", config_value_number,
	    F(check_rise), 1, 1000 },
	[K_RETRY_BACKOFF] = { "hooks", "retry_backoff",
	    DURATION(retry_backoff_ms, 0) },
	[K_DEMOTE_ON_START] = { "hooks", "demote_on_start", config_value_bool,
	    F(demote_on_start), 0, 0 },
	[K_NOTIFY] = { "hooks", "notify", COMMAND(hook_notify) },
	[K_RUN] = { "hooks", "run", COMMAND(hook_run) },
	[K_RUN_STOP_TIMEOUT] = { "hooks", "run_stop_timeout",
	    DURATION(run_stop_timeout_ms, 1) },
	[K_SOCKET] = { "control", "socket", config_value_path, F(socket_path),
	    1, CONFIG_SUN_PATH_MAX },
	[K_SOCKET_MODE] = { "control", "socket_mode", config_value_socket_mode,
	    F(socket_mode), 0, 0777 },
	[K_SOCKET_GROUP] = { "control", "socket_group", config_value_group,
	    F(socket_group), 0, 0 },
	[K_STATUS_FILE] = { "control", "status_file", config_value_path,
	    F(status_file), 1, CONFIG_STATUS_MAX },
	[K_LOG_LEVEL] = { "control", "log_level", config_value_log_level,
	    F(log_level), 0, 0 },
	[K_MAX_CLIENTS] = { "control", "max_clients", config_value_number,
	    F(max_clients), 1, 65536 },
	[K_HTTP_LISTEN] = { "control", "http_listen", config_value_listen,
	    F(http_listen), 0, 0, 1 },
};
#undef COMMAND
#undef DURATION
#undef F

int
config_value_set(int id, struct config *cfg, const char *v, char *why)
{
	const struct config_key *k = &config_value_keys[id];

	return k->set(k, cfg, v, why);
}
