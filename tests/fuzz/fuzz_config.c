/*
 * The configuration loader: a file body and -o overrides. Leading lines
 * "-o section.key=value" of the input are overrides, the rest is the file.
 * A load that fails leaves an empty config and a one-line error; one that
 * succeeds gives a config that holds every promise of config.h and
 * zkelectd.conf(5); a second load of the same input gives the same.
 */
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "election.h"
#include "fuzz_check.h"
#include "xmalloc.h"

#define FUZZ_OVERRIDES_MAX	8

static int
fuzz_printable(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s), i;

	if (n < min || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

static void
fuzz_config_valid(const struct config *c, const char *path)
{
	const char *s;
	int parts = 0;
	size_t i;

	FUZZ_ASSERT(c->path != NULL && strcmp(c->path, path) == 0, "path");
	FUZZ_ASSERT(c->hosts != NULL && c->hosts[0] != '\0' &&
	    strchr(c->hosts, '/') == NULL && strchr(c->hosts, ':') != NULL &&
	    fuzz_printable(c->hosts, 1, SIZE_MAX), "hosts \"%s\"",
	    c->hosts != NULL ? c->hosts : "(null)");
	FUZZ_ASSERT(c->service != NULL && strlen(c->service) >= 1 &&
	    strlen(c->service) <= 64 && strspn(c->service,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == strlen(c->service) &&
	    strcmp(c->service, ".") != 0 && strcmp(c->service, "..") != 0,
	    "service \"%s\"", c->service != NULL ? c->service : "(null)");
	FUZZ_ASSERT(c->root != NULL && c->root[0] == '/' &&
	    fuzz_printable(c->root, 1, 256) && strstr(c->root, "//") == NULL &&
	    (strcmp(c->root, "/") == 0 || c->root[strlen(c->root) - 1] !=
	    '/') && strcmp(c->root, "/zookeeper") != 0 &&
	    strncmp(c->root, "/zookeeper/", 11) != 0, "root \"%s\"",
	    c->root != NULL ? c->root : "(null)");
	for (s = c->root; *s != '\0'; s++)
		parts += s[0] == '/' && s[1] != '\0';
	FUZZ_ASSERT(parts <= EL_MAX_DEPTH - 2, "root of %d components", parts);
	FUZZ_ASSERT(strstr(c->root, "/./") == NULL &&
	    strstr(c->root, "/../") == NULL, "root \"%s\"", c->root);
	FUZZ_ASSERT(c->id != NULL && fuzz_printable(c->id, 1, 128),
	    "id \"%s\"", c->id != NULL ? c->id : "(null)");
	FUZZ_ASSERT(c->data != NULL && fuzz_printable(c->data, 0, 512),
	    "data \"%s\"", c->data != NULL ? c->data : "(null)");
	FUZZ_ASSERT(c->mode == CONFIG_MODE_CANDIDATE ||
	    c->mode == CONFIG_MODE_OBSERVER, "mode %d", (int)c->mode);
	FUZZ_ASSERT(c->session_timeout_ms >= 1 &&
	    c->session_timeout_ms <= INT_MAX, "session_timeout %lld",
	    (long long)c->session_timeout_ms);
	FUZZ_ASSERT(c->demote_timeout_ms >= 1 && (!c->demote_timeout_set ||
	    c->demote_timeout_ms * 3 < c->session_timeout_ms),
	    "demote_timeout %lld of %lld", (long long)c->demote_timeout_ms,
	    (long long)c->session_timeout_ms);
	FUZZ_ASSERT(c->hook_timeout_ms >= 1 && c->check_interval_ms >= 1 &&
	    c->disconnect_grace_ms >= -1 && c->retry_backoff_ms >= 0 &&
	    c->tick_ms >= 1, "durations");
	FUZZ_ASSERT(c->check_fall >= 1 && c->check_fall <= 1000 &&
	    c->check_rise >= 1 && c->check_rise <= 1000, "check_fall/rise");
	FUZZ_ASSERT(c->demote_on_start == 0 || c->demote_on_start == 1,
	    "demote_on_start");
	FUZZ_ASSERT(c->socket_path != NULL && c->socket_path[0] == '/' &&
	    fuzz_printable(c->socket_path, 1,
	    sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1),
	    "socket \"%s\"", c->socket_path != NULL ? c->socket_path : "");
	FUZZ_ASSERT(c->status_file != NULL && c->status_file[0] == '/' &&
	    fuzz_printable(c->status_file, 1, PATH_MAX - 32),
	    "status_file \"%s\"", c->status_file != NULL ? c->status_file : "");
	FUZZ_ASSERT(c->socket_mode >= 0 && c->socket_mode <= 0777,
	    "socket_mode %o", c->socket_mode);
	FUZZ_ASSERT(c->log_level >= LOG_EMERG && c->log_level <= LOG_DEBUG,
	    "log_level %d", c->log_level);
	FUZZ_ASSERT(c->max_clients >= 1 && c->max_clients <= 65536,
	    "max_clients %lld", (long long)c->max_clients);
	FUZZ_ASSERT(c->nhttp_listen <= 16 && (c->nhttp_listen == 0) ==
	    (c->http_listen == NULL), "http_listen count %zu",
	    c->nhttp_listen);
	for (i = 0; i < c->nhttp_listen; i++)
		FUZZ_ASSERT(c->http_listen[i].port >= 1 &&
		    c->http_listen[i].port <= 65535 &&
		    c->http_listen[i].host != NULL &&
		    c->http_listen[i].name != NULL &&
		    strstr(c->http_listen[i].name, c->http_listen[i].host) !=
		    NULL, "http_listen %zu", i);
}

static void
fuzz_config_empty(const struct config *c)
{
	static const struct config zero;

	FUZZ_ASSERT(memcmp(c, &zero, sizeof(zero)) == 0,
	    "a failed load left something in the config");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c1, c2;
	char path[128], err1[1024], err2[1024], *ov[FUZZ_OVERRIDES_MAX];
	const char *p = (const char *)data, *end = p + size, *nl;
	size_t nov = 0, i;
	int rv1, rv2;
	FILE *f;

	if (size > 65536)
		return 0;
	while (nov < FUZZ_OVERRIDES_MAX && end - p > 3 &&
	    strncmp(p, "-o ", 3) == 0) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		ov[nov++] = strndup(p + 3, (size_t)(nl - p - 3));
		p = nl < end ? nl + 1 : end;
	}
	(void)snprintf(path, sizeof(path), "%s/fuzz.conf", fuzz_dir());
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(p, 1, (size_t)(end - p), f) != (size_t)(end - p) ||
	    fclose(f) == EOF)
		FUZZ_FAIL("write %s: %s", path, strerror(errno));

	rv1 = config_load(&c1, path, ov, nov, err1, sizeof(err1));
	rv2 = config_load(&c2, path, ov, nov, err2, sizeof(err2));
	FUZZ_ASSERT(rv1 == 0 || rv1 == -1, "config_load returned %d", rv1);
	FUZZ_ASSERT(rv1 == rv2, "two loads disagree");
	if (rv1 == 0) {
		fuzz_config_valid(&c1, path);
		FUZZ_ASSERT(strcmp(c1.hosts, c2.hosts) == 0 &&
		    strcmp(c1.service, c2.service) == 0 &&
		    strcmp(c1.root, c2.root) == 0 &&
		    config_listen_equal(&c1, &c2), "two loads differ");
		free(config_election_path(&c1));
		config_free(&c1);
		config_free(&c2);
	} else {
		fuzz_config_empty(&c1);
		fuzz_config_empty(&c2);
		FUZZ_ASSERT(err1[0] != '\0' && strcmp(err1, err2) == 0,
		    "error \"%s\" then \"%s\"", err1, err2);
		/* One line: overrides here never hold a newline. */
		FUZZ_ASSERT(strchr(err1, '\n') == NULL, "error of two lines: %s",
		    err1);
	}
	for (i = 0; i < nov; i++)
		free(ov[i]);
	return 0;
}
