/*
 * The session file: the ZooKeeper session a daemon holds (id and
 * password), with the lease and leadership it had, kept next to the
 * control socket so that a daemon started again after a crash, or the
 * image a re-exec starts, can re-attach the session (election_resume()).
 * Mode 0600, written by a temporary file and a rename, never read through
 * a link, removed on a clean stop. Its password is never logged.
 *
 * It names the daemon that holds the session (its election and its
 * socket): a session is only ever resumed by the daemon it belongs to,
 * never by one of another election, nor by a daemon whose socket maps to
 * the same file (X and X.sock) or whose configuration changed in between.
 */
#ifndef ZKELECTD_SESSION_FILE_H
#define ZKELECTD_SESSION_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "zk.h"

/* Who holds the session: the configuration's values. */
struct session_owner {
	const char *root;	/* zookeeper.root */
	const char *service;	/* election.service */
	const char *id;		/* election.id */
	const char *socket;	/* control.socket */
};

/* session_file_read()'s results beside 0 (ours) and -1 (untrusted). */
#define SESSION_FILE_NONE	1	/* there is none */
#define SESSION_FILE_OTHER	2	/* another daemon's: why says how */
#define SESSION_FILE_ANON	3	/* an older version's: no owner in it */

struct session_facts {
	struct session_owner owner;	/* set by the caller, read and written */
	struct zk_session zs;
	int64_t timeout_ms;	/* negotiated */
	int64_t lease_sent;	/* on now_ms()'s clock, this boot; 0 none */
	int leader;		/* the application was told to lead */
	int promoting;		/* a promote or fence hook had begun */
	int down;		/* demoted, nothing begun since (el_resume) */
	int claimed;		/* a claim is named (el_resume's): */
	int64_t claim_seq;	/* ...its sequence */
	int crumb_claimed;	/* the breadcrumb's claim is named: */
	int64_t crumb_claim_seq;	/* ...its sequence */
	int64_t epoch;		/* its epoch */
	int64_t run_pgid;	/* hooks.run's process group, 0 none: */
	int64_t run_start;	/* ...its leader's start (/proc, this boot) */
	char boot[64];		/* the boot id the lease's clock is of */
};

/* The kernel's boot id into buf ("" when unknown): read it once. */
void session_file_boot(char *buf, size_t len);

/* <control.socket less ".sock">.session; the caller frees it. */
char *session_file_path(const char *socket_path);
/*
 * The other control socket path whose session file is the same: X for
 * X.sock, X.sock for X. The caller frees it.
 */
char *session_file_sibling(const char *socket_path);
/* Renders f as the file's text; the caller frees it. */
char *session_file_render(const struct session_facts *f);
/* Writes text (session_file_render()'s); -1 with errno set. */
int session_file_write(const char *path, const char *text);
/*
 * Reads the file: 0 when it is f->owner's, SESSION_FILE_NONE when there
 * is none, -1 when it cannot be trusted (not a regular file of ours with
 * mode 0600, or malformed), SESSION_FILE_OTHER when it names another
 * owner, SESSION_FILE_ANON when it names none (an older version wrote
 * it), with why saying what. A lease of another boot than f->boot's is
 * dropped (lease_sent 0). The caller sets f->boot (session_file_boot())
 * and f->owner before; they are kept.
 */
int session_file_read(const char *path, struct session_facts *f,
    const char **why);
/* Removes it; a file that is not there is fine. */
void session_file_remove(const char *path);

#endif
