/*
 * The keys a running daemon cannot take over, in one place: a SIGHUP
 * reload keeps their old values (with a warning), and a SIGUSR2 re-exec
 * whose file changed one is refused, since the new image would resume the
 * session under the new values. Another socket path would hand the
 * listener over at the old path and look for the session file at the new
 * one (a new session beside the old, whose nodes live on until they
 * expire); another root, service or id would re-attach the session in
 * another election and leave the old one's E/leader standing; another
 * status file would leave the old one saying "leader"; the server keeps a
 * session's timeout from its creation, so a new one would be a lease the
 * server does not honour (and the demote budget derives from it); another
 * mode would resume a leader as an observer; and HTTP listeners are bound
 * once, at their addresses.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"
#include "xmalloc.h"

enum {
	FIXED_ROOT, FIXED_SERVICE, FIXED_ID, FIXED_SOCKET, FIXED_STATUS,
	FIXED_TIMEOUT, FIXED_MODE, FIXED_HTTP, FIXED_N
};

static const char *const config_fixed_keys[FIXED_N] = {
	[FIXED_ROOT] = "zookeeper.root",
	[FIXED_SERVICE] = "election.service",
	[FIXED_ID] = "election.id",
	[FIXED_SOCKET] = "control.socket",
	[FIXED_STATUS] = "control.status_file",
	[FIXED_TIMEOUT] = "zookeeper.session_timeout",
	[FIXED_MODE] = "election.mode",
	[FIXED_HTTP] = "control.http_listen",
};

size_t
config_fixed_count(void)
{
	return FIXED_N;
}

const char *
config_fixed_name(size_t i)
{
	return i < FIXED_N ? config_fixed_keys[i] : "?";
}

char *
config_fixed_value(const struct config *c, size_t i)
{
	struct textbuf b;
	size_t k;

	memset(&b, 0, sizeof(b));
	textbuf_printf(&b, "%s", "");
	switch (i) {
	case FIXED_ROOT:
		textbuf_printf(&b, "%s", c->root);
		break;
	case FIXED_SERVICE:
		textbuf_printf(&b, "%s", c->service);
		break;
	case FIXED_ID:
		textbuf_printf(&b, "%s", c->id);
		break;
	case FIXED_SOCKET:
		textbuf_printf(&b, "%s", c->socket_path);
		break;
	case FIXED_STATUS:
		textbuf_printf(&b, "%s", c->status_file);
		break;
	case FIXED_TIMEOUT:
		textbuf_printf(&b, "%lldms", (long long)c->session_timeout_ms);
		break;
	case FIXED_MODE:
		textbuf_printf(&b, "%s", c->mode == CONFIG_MODE_OBSERVER ?
		    "observer" : "candidate");
		break;
	default:
		for (k = 0; k < c->nhttp_listen; k++)
			textbuf_printf(&b, "%s%s", k > 0 ? " " : "",
			    c->http_listen[k].name);
		if (c->nhttp_listen == 0)
			textbuf_printf(&b, "(none)");
		break;
	}
	return b.p;
}

static void
config_fixed_string(char **dst, const char *src)
{
	if (strcmp(*dst, src) == 0)
		return;
	free(*dst);
	*dst = xstrdup(src);
}

int
config_keep_fixed(struct config *nc, const struct config *old)
{
	int refused = 0;

	config_fixed_string(&nc->root, old->root);
	config_fixed_string(&nc->service, old->service);
	config_fixed_string(&nc->id, old->id);
	config_fixed_string(&nc->socket_path, old->socket_path);
	config_fixed_string(&nc->status_file, old->status_file);
	if (nc->session_timeout_ms != old->session_timeout_ms) {
		nc->session_timeout_ms = old->session_timeout_ms;
		/*
		 * Its default is a quarter of the timeout kept; a value set
		 * was checked against the new timeout, and must be against
		 * the one kept, as config_finish() does, or the old stays.
		 */
		if (!nc->demote_timeout_set)
			nc->demote_timeout_ms = nc->session_timeout_ms / 4;
		else if (nc->demote_timeout_ms * 3 >= nc->session_timeout_ms) {
			nc->demote_timeout_ms = old->demote_timeout_ms;
			nc->demote_timeout_set = old->demote_timeout_set;
			refused = 1;
		}
	}
	nc->mode = old->mode;
	if (!config_listen_equal(nc, old))
		config_listen_copy(nc, old);
	return refused;
}
