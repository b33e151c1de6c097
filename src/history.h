/*
 * The last role transitions of this daemon, for the "history" command,
 * the status's last_transition and the metrics: a ring of HISTORY_MAX.
 */
#ifndef ZKELECTD_HISTORY_H
#define ZKELECTD_HISTORY_H

#include <stdint.h>

#include "election.h"
#include "hook.h"

#define HISTORY_MAX 100
#define HISTORY_REASON_MAX 32
#define HISTORY_LEADER_MAX 256

struct history_entry {
	int64_t time_ms;	/* wall clock, ms since the epoch */
	enum role from;
	enum role to;
	char reason[HISTORY_REASON_MAX];
	int64_t epoch;
	char leader[HISTORY_LEADER_MAX];
};

/* All zero is an empty history whose role is ROLE_UNKNOWN. */
struct history {
	struct history_entry e[HISTORY_MAX];
	int first;		/* the oldest entry */
	int n;
	enum role role;		/* the role at the last note */
	int paused;		/* and the view's flags then */
	int unhealthy;
	/* The last promote, fence or demote hook: its reason and epoch. */
	char hook_reason[HISTORY_REASON_MAX];
	int64_t hook_epoch;
	int hook_fresh;		/* it started since the last entry */
};

/* A promote, fence or demote hook starts (a check is no transition). */
void history_hook(struct history *h, enum hook_kind kind, const char *reason,
    int64_t epoch);
/*
 * What the election shows at the end of a step: an entry when the role
 * changed. Returns 1 when it added one.
 */
int history_note(struct history *h, int64_t now_ms,
    const struct election_view *v);
/* The newest entry, or NULL. */
const struct history_entry *history_last(const struct history *h);
/*
 * One line per entry, oldest first, tab-separated: time (RFC 3339 UTC
 * with milliseconds), from, to, reason, epoch, leader. Caller frees.
 */
char *history_render(const struct history *h);

#endif
