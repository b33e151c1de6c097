/*
 * The daemon's side of a resumed session: the session file kept up to
 * date while the daemon runs, read when it starts (after a crash, or in
 * the image a re-exec started), removed on a clean stop. The election
 * (election_resume(), election_event.c) decides what the session still
 * holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "ctl.h"
#include "log.h"
#include "session_file.h"
#include "util.h"
#include "xmalloc.h"
#include "zkelectd.h"

static void
resume_owner(const struct daemon *d, struct session_owner *o)
{
	o->root = d->cfg.root;
	o->service = d->cfg.service;
	o->id = d->cfg.id;
	o->socket = d->cfg.socket_path;
}

/*
 * Two daemons whose sockets are X and X.sock would share one session file
 * (session_file_path()): each would overwrite the other's session, and a
 * clean stop of one would remove it. The owner recorded in the file keeps
 * either from resuming the other's session; this keeps them from running
 * side by side at all. A daemon refuses to start while a daemon answers
 * at the other path. The check comes after our own socket listens, so of
 * two such daemons starting at the same moment, one at least sees the
 * other (both may refuse: neither runs on a shared file). A lock would
 * need a file of its own, and its descriptor handed over a re-exec.
 */
int
resume_exclusive(struct daemon *d, char *err, size_t errlen)
{
	char *sib = session_file_sibling(d->cfg.socket_path);
	int rc = ctl_listen_live(sib);

	if (d->session_path == NULL)
		d->session_path = session_file_path(d->cfg.socket_path);
	if (rc == 1)
		(void)snprintf(err, errlen, "control socket %s: a daemon "
		    "answers at %s, whose session file would be this one's "
		    "too (%s); give one of them another control.socket",
		    d->cfg.socket_path, sib, d->session_path);
	free(sib);
	return rc == 1 ? -1 : 0;
}

/*
 * A file that names no owner was written by the version before this one.
 * It is still ours when a re-exec handed us the control socket at our
 * configured path (an upgrade: the image before wrote it for that
 * socket); after a crash nothing says whose it is.
 */
static int
resume_anon(struct daemon *d, const char *why)
{
	if (d->rx_inherited)
		return 1;
	log_warnx("session file %s: %s, and not handed over by a re-exec: "
	    "not resumed", d->session_path, why);
	return 0;
}

int
resume_load(struct daemon *d)
{
	struct session_facts f;
	struct el_resume r;
	const char *why;
	int rc;

	if (d->session_path == NULL)
		d->session_path = session_file_path(d->cfg.socket_path);
	session_file_boot(d->session_boot, sizeof(d->session_boot));
	memset(&f, 0, sizeof(f));
	(void)snprintf(f.boot, sizeof(f.boot), "%s", d->session_boot);
	resume_owner(d, &f.owner);
	rc = session_file_read(d->session_path, &f, &why);
	if (rc == SESSION_FILE_NONE)
		return 0;
	if (rc == -1) {
		log_warnx("session file %s: %s: not resumed, removed",
		    d->session_path, why);
		session_file_remove(d->session_path);
		return 0;
	}
	/*
	 * Another election's session (the configuration changed since it was
	 * written) is left to expire: its nodes are not ours to use. Ours
	 * soon replaces the file.
	 */
	if (rc == SESSION_FILE_OTHER) {
		log_warnx("session file %s: %s: not resumed", d->session_path,
		    why);
		explicit_bzero(&f, sizeof(f));
		return 0;
	}
	if (rc == SESSION_FILE_ANON && !resume_anon(d, why)) {
		explicit_bzero(&f, sizeof(f));
		return 0;
	}
	/* Its run, if still there, is stopped whatever the session holds. */
	if (f.run_pgid > 0 && f.run_pgid <= INT32_MAX && f.run_start > 0) {
		d->orphan_pgid = (pid_t)f.run_pgid;
		d->orphan_start = (unsigned long long)f.run_start;
	}
	/* A lease from a clock that does not fit is no lease. */
	if (f.lease_sent > now_ms())
		f.lease_sent = 0;
	memset(&r, 0, sizeof(r));
	r.sid = f.zs.sid;
	r.timeout_ms = f.timeout_ms;
	r.lease_sent = f.lease_sent;
	r.leader = f.leader;
	r.promoting = f.promoting;
	r.down = f.down;
	d->session_down = f.down;
	r.claimed = f.claimed;
	r.claim_seq = f.claim_seq;
	r.crumb_claimed = f.crumb_claimed;
	r.crumb_claim_seq = f.crumb_claim_seq;
	r.epoch = f.epoch;
	r.exact = d->rx_inherited && d->rx_exact;
	r.unhealthy = d->rx_unhealthy;
	election_resume(d->el, &r);
	d->resume_zs = f.zs;
	d->resume_open = 1;
	d->resume_told = 1;
	explicit_bzero(&f, sizeof(f));
	log_notice("resuming zookeeper session %016llx (%s, epoch %lld)",
	    (unsigned long long)r.sid, r.leader ? "leader" : "not leading",
	    (long long)r.epoch);
	return 1;
}

/*
 * Whether the file says a promote or fence has begun. Said RESUME_BEGUN_MS
 * after it began, from a timer: the rewrite (a rename, which a disk's
 * journal may flush) stays out of the promote hook's start, which the
 * successor's handoff gap measures. A crash in those first milliseconds
 * restarts on the claim the file names (el_resume_decide()); the
 * simulator models the same delay (peer.c).
 */
#define RESUME_BEGUN_MS 20

static void
resume_late(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	resume_save(arg);
}

static int
resume_begun(struct daemon *d, int begun)
{
	struct timeval tv;
	int64_t now = now_ms();

	if (!begun) {
		d->session_begun = 0;
		return 0;
	}
	if (d->session_begun == 0)
		d->session_begun = now;
	if (now - d->session_begun >= RESUME_BEGUN_MS)
		return 1;
	if (d->ev_session_late == NULL &&
	    (d->ev_session_late = evtimer_new(d->base, resume_late, d)) ==
	    NULL)
		fatalx("evtimer_new");
	if (!evtimer_pending(d->ev_session_late, NULL)) {
		clock_timeval(&tv, d->session_begun + RESUME_BEGUN_MS - now);
		(void)evtimer_add(d->ev_session_late, &tv);
	}
	return 0;
}

/* The text last written: wiped (it holds the session's password), then text. */
static void
resume_text_set(struct daemon *d, char *text)
{
	if (d->session_text != NULL)
		explicit_bzero(d->session_text, strlen(d->session_text));
	free(d->session_text);
	d->session_text = text;
}

/* Called after every step: the file follows the session and its lease. */
void
resume_save(struct daemon *d)
{
	struct election_view v;
	struct session_facts f;
	char *text;

	if (d->session_path == NULL)
		return;
	memset(&f, 0, sizeof(f));
	resume_owner(d, &f.owner);
	election_view(d->el, &v);
	if (d->resume_told && !v.resuming) {
		d->resume_told = 0;
		log_notice("zookeeper session %016llx resumed: %s, epoch %lld",
		    (unsigned long long)v.sid, election_role_name(v.role),
		    (long long)v.epoch);
	}
	if (v.sid == 0 || zk_session_get(d->zk, &f.zs) == -1 ||
	    f.zs.sid != v.sid)
		return;
	f.timeout_ms = v.session_timeout_ms;
	f.lease_sent = v.lease_end != 0 ? v.lease_end - v.session_timeout_ms :
	    0;
	f.leader = v.promoted;
	f.promoting = resume_begun(d, v.promote_begun);
	f.down = v.down;
	f.claimed = v.claimed;
	f.claim_seq = v.claim_seq;
	f.crumb_claimed = v.crumb_claimed;
	f.crumb_claim_seq = v.crumb_claim_seq;
	f.epoch = v.promoted ? v.lead_epoch : v.epoch;
	run_hook_facts(d, &f.run_pgid, &f.run_start);
	(void)snprintf(f.boot, sizeof(f.boot), "%s", d->session_boot);
	text = session_file_render(&f);
	explicit_bzero(&f, sizeof(f));
	if (d->session_text != NULL && strcmp(text, d->session_text) == 0) {
		explicit_bzero(text, strlen(text));
		free(text);
		return;
	}
	if (session_file_write(d->session_path, text) == -1) {
		if (d->session_text == NULL || d->session_text[0] != '\0')
			log_warn("write %s", d->session_path);
		explicit_bzero(text, strlen(text));
		text[0] = '\0';
	} else
		d->session_down = v.down;
	resume_text_set(d, text);
}

/*
 * A promote or fence hook is about to be spawned: the application may lead
 * from its start, so the file must not say down=1 then (a restart would
 * resume without the demote it owes: el_resume_decide()). resume_save()
 * runs after the step, after the spawn: when the file says down=1, it is
 * written first, here, or removed if it cannot be (a restart then starts
 * a session of its own, with its startup demote). A prepared heir's file
 * no longer says it by its promote (the listing that placed it behind
 * another cleared it, election_reply.c): this is a head's rarer path.
 */
void
resume_before_lead(struct daemon *d)
{
	if (!d->session_down || d->session_path == NULL)
		return;
	resume_save(d);
	if (!d->session_down)
		return;
	log_warnx("session file %s cannot say a promote begins: removed",
	    d->session_path);
	session_file_remove(d->session_path);
	d->session_down = 0;
	resume_text_set(d, NULL);
}

void
resume_remove(struct daemon *d)
{
	if (d->ev_session_late != NULL) {
		event_free(d->ev_session_late);
		d->ev_session_late = NULL;
	}
	if (d->session_path != NULL)
		session_file_remove(d->session_path);
	resume_text_set(d, NULL);
	free(d->session_path);
	d->session_path = NULL;
}
