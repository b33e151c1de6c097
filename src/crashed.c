/*
 * The demote that outlives the daemon (ZKELECTD_CRASHED). A daemon that
 * dies as leader and cannot be started again (its binary or its
 * configuration broken: systemd gives up at the unit's start limit)
 * leaves its application leading while the session it left behind
 * expires and a successor promotes. So that no daemon is needed then, the
 * daemon keeps a shell script at the path ZKELECTD_CRASHED names (the
 * unit sets it): the demote hook's command line with the environment it
 * would get (the daemon's own environment less what systemd gave the
 * daemon alone, as hooks get it: a PGDATA set with `systemctl edit` for
 * the daemon's unit does not reach the crashed unit otherwise; then
 * reason crashed, role stopped) and its budget, under timeout(1), after
 * removing the session file (a later start must not resume as leader an
 * application this demoted). The unit's OnFailure= runs it with /bin/sh.
 * It is rewritten when what it says changes (a reload, a new leadership)
 * and removed on a clean stop; mode 0700, written as the status file is
 * (a temporary file and a rename, never through a link).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"
#include "log.h"
#include "session_file.h"
#include "status.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

#define CRASHED_ENV	"ZKELECTD_CRASHED"

/* One shell word: single quotes, a quote inside as '\''. */
static void
crashed_word(struct textbuf *b, const char *s)
{
	textbuf_printf(b, "'");
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			textbuf_printf(b, "'\\''");
		else
			textbuf_printf(b, "%c", *s);
	}
	textbuf_printf(b, "'");
}

static void
crashed_var(struct textbuf *b, const char *name, const char *value)
{
	textbuf_printf(b, "%s=", name);
	crashed_word(b, value);
	textbuf_printf(b, "\nexport %s\n", name);
}

/*
 * One variable of the daemon's environment, if hooks get it and its name
 * is a shell variable's (ZKELECT_* are set after, as for a hook).
 */
static void
crashed_inherit(struct textbuf *b, const char *var)
{
	const char *eq = strchr(var, '='), *p;
	char *name;

	if (eq == NULL || eq == var || !hook_env_passed(var) ||
	    strncmp(var, "ZKELECT_", 8) == 0 ||
	    (var[0] >= '0' && var[0] <= '9'))
		return;
	for (p = var; p < eq; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_'))
			return;
	name = xstrndup(var, (size_t)(eq - var));
	crashed_var(b, name, eq + 1);
	free(name);
}

static char *
crashed_render(struct daemon *d)
{
	struct election_view v;
	struct textbuf b;
	char epoch[32], **e;
	int64_t term, kill;

	election_view(d->el, &v);
	memset(&b, 0, sizeof(b));
	textbuf_printf(&b, "#!/bin/sh\n# Written by zkelectd for its unit's "
	    "OnFailure=: the daemon died and\n# could not be started again. "
	    "Removed on a clean stop.\n");
	for (e = environ; e != NULL && *e != NULL; e++)
		crashed_inherit(&b, *e);
	crashed_var(&b, "ZKELECT_SERVICE", d->cfg.service);
	crashed_var(&b, "ZKELECT_ID", d->cfg.id);
	crashed_var(&b, "ZKELECT_EVENT", "demote");
	crashed_var(&b, "ZKELECT_ROLE", "stopped");
	crashed_var(&b, "ZKELECT_REASON", "crashed");
	(void)snprintf(epoch, sizeof(epoch), "%lld",
	    (long long)(v.role == ROLE_LEADER ? v.epoch : 0));
	crashed_var(&b, "ZKELECT_EPOCH", epoch);
	crashed_var(&b, "ZKELECT_LEADER", v.leader_id);
	crashed_var(&b, "ZKELECT_LEADER_DATA", v.leader_data);
	crashed_var(&b, "ZKELECT_DATA", d->cfg.data);
	/*
	 * The session file goes first: it says this daemon leads, and a
	 * daemon started again after this demote would resume that
	 * leadership with no promote hook. Without it, the start is a fresh
	 * session's, with its startup demote.
	 */
	if (d->session_path != NULL) {
		textbuf_printf(&b, "rm -f -- ");
		crashed_word(&b, d->session_path);
		textbuf_printf(&b, "\n");
	}
	/* As the daemon runs a demote: SIGTERM at 3/4, SIGKILL at its end. */
	term = v.demote_timeout_ms * 3 / 4;
	kill = v.demote_timeout_ms - term;
	textbuf_printf(&b, "exec timeout -k %lld.%03llds %lld.%03llds "
	    "/bin/sh -c ", (long long)(kill / 1000), (long long)(kill % 1000),
	    (long long)(term / 1000), (long long)(term % 1000));
	crashed_word(&b, d->cfg.hook_demote);
	textbuf_printf(&b, "\n");
	return b.p;
}

void
crashed_init(struct daemon *d)
{
	const char *path = getenv(CRASHED_ENV);

	if (path != NULL && path[0] != '\0')
		d->crashed_path = xstrdup(path);
	(void)unsetenv(CRASHED_ENV);
}

/* Called after every step: the script says what a demote would now. */
void
crashed_save(struct daemon *d)
{
	char *text;

	if (d->crashed_path == NULL)
		return;
	if (d->cfg.hook_demote == NULL) {
		if (d->crashed_text == NULL || d->crashed_text[0] != '\0')
			session_file_remove(d->crashed_path);
		free(d->crashed_text);
		d->crashed_text = xstrdup("");
		return;
	}
	text = crashed_render(d);
	if (d->crashed_text != NULL && strcmp(text, d->crashed_text) == 0) {
		free(text);
		return;
	}
	if (status_write_mode(d->crashed_path, text, 0700) == -1) {
		log_warn("write %s", d->crashed_path);
		text[0] = '\0';
	}
	free(d->crashed_text);
	d->crashed_text = text;
}

void
crashed_remove(struct daemon *d)
{
	if (d->crashed_path != NULL)
		session_file_remove(d->crashed_path);
	free(d->crashed_path);
	free(d->crashed_text);
	d->crashed_path = NULL;
	d->crashed_text = NULL;
}
