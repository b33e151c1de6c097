/*
 * The role transitions a daemon went through, each with why. The reason
 * is the one its hooks were given (ZKELECT_REASON) when the change is a
 * promote or a demote; otherwise what the election's view says (paused,
 * unhealthy, disconnected...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "history.h"
#include "util.h"
#include "xmalloc.h"

void
history_hook(struct history *h, enum hook_kind kind, const char *reason,
    int64_t epoch)
{
	if (kind == HOOK_CHECK)
		return;
	(void)snprintf(h->hook_reason, sizeof(h->hook_reason), "%s", reason);
	h->hook_epoch = epoch;
	h->hook_fresh = 1;
}

static int
history_hookish(enum role r)
{
	return r == ROLE_PROMOTING || r == ROLE_LEADER || r == ROLE_DEMOTING;
}

static const char *
history_reason(const struct history *h, enum role from, enum role to,
    const struct election_view *v, int *by_hook)
{
	*by_hook = 0;
	/*
	 * A hook that started since the last change made this one; one that
	 * ended (promoting or demoting is over) too.
	 */
	if (h->hook_reason[0] != '\0' && (history_hookish(from) ||
	    history_hookish(to)) && (h->hook_fresh || from == ROLE_PROMOTING ||
	    from == ROLE_DEMOTING)) {
		*by_hook = 1;
		return h->hook_reason;
	}
	if (to == ROLE_STOPPED)
		return "shutdown";
	if (to == ROLE_OBSERVER)
		return v->paused ? "pause" : v->unhealthy ? "health" :
		    "observer";
	if (v->zk == EL_ZK_EXPIRED || v->zk == EL_ZK_AUTH_FAILED)
		return "session-expired";
	if (v->zk != EL_ZK_CONNECTED)
		return "disconnected";
	/* A leader whose lease ran short before its demote could start. */
	if (to == ROLE_DEMOTING)
		return "lease";
	if (from == ROLE_OBSERVER)
		return h->paused ? "resume" : h->unhealthy ? "health" :
		    "observer";
	return "joined";
}

/*
 * A tab or a newline from a peer's id would break the lines apart, and an
 * id longer than an entry must be cut before a character, not inside one:
 * the rule every output of peer data shares.
 */
static void
history_copy(char *dst, const char *src, size_t len)
{
	(void)candidate_clean(dst, len, src, strlen(src));
}

int
history_note(struct history *h, int64_t now_ms, const struct election_view *v)
{
	struct history_entry *e;
	const char *reason;
	int by_hook, i, added = 0;

	if (v->role != h->role) {
		reason = history_reason(h, h->role, v->role, v, &by_hook);
		if (h->n < HISTORY_MAX)
			i = (h->first + h->n++) % HISTORY_MAX;
		else {
			i = h->first;
			h->first = (h->first + 1) % HISTORY_MAX;
		}
		e = &h->e[i];
		e->time_ms = now_ms;
		e->from = h->role;
		e->to = v->role;
		(void)snprintf(e->reason, sizeof(e->reason), "%s", reason);
		e->epoch = by_hook ? h->hook_epoch : v->leader_epoch;
		history_copy(e->leader, v->leader_id, sizeof(e->leader));
		h->hook_fresh = 0;
		h->role = v->role;
		added = 1;
	}
	h->paused = v->paused;
	h->unhealthy = v->unhealthy;
	return added;
}

const struct history_entry *
history_last(const struct history *h)
{
	if (h->n == 0)
		return NULL;
	return &h->e[(h->first + h->n - 1) % HISTORY_MAX];
}

char *
history_render(const struct history *h)
{
	const struct history_entry *e;
	char *text, *p, when[40];
	size_t len, off = 0;
	int i;

	len = (size_t)h->n * (sizeof(*e) + 64) + 1;
	text = xmalloc(len);
	text[0] = '\0';
	for (i = 0; i < h->n; i++) {
		e = &h->e[(h->first + i) % HISTORY_MAX];
		rfc3339_ms(e->time_ms, when, sizeof(when));
		p = text + off;
		off += (size_t)snprintf(p, len - off,
		    "%s\t%s\t%s\t%s\t%lld\t%s\n", when,
		    election_role_name(e->from), election_role_name(e->to),
		    e->reason, (long long)e->epoch, e->leader);
	}
	return text;
}
