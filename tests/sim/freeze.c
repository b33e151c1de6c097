/*
 * Freezing a daemon (SIGSTOP, a VM paused, a suspend): its clock jumps.
 * Nothing of the process runs meanwhile: its client library neither pings
 * nor reads, its timers do not fire, its operators wait. What arrives is
 * kept in order and handed over at the wake, while its hooks, other
 * processes, go on and end on their own time.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

void
freeze_start(struct sim *s, struct peer *p, int64_t ms)
{
	if (!p->running || p->frozen)
		return;
	trace(s, p->idx, "fault: frozen for %lld ms", (long long)ms);
	p->frozen = 1;
	p->frozen_from = s->now;
	p->wake_at = s->now + ms;
	p->freeze_gen++;
	check_freeze(s, p);
	sim_push(s, p->wake_at, EV_WAKE, p->idx, p->freeze_gen, 0, 0, NULL);
}

void
freeze_defer(struct peer *p, const struct ev *ev)
{
	if (p->ndef == p->capdef) {
		p->capdef = p->capdef ? p->capdef * 2 : 32;
		p->deferred = xreallocarray(p->deferred, (size_t)p->capdef,
		    sizeof(*p->deferred));
	}
	p->deferred[p->ndef++] = *ev;
}

/*
 * Wakes a frozen process. Its client library reads what the socket
 * buffered before its timers look at the clock (it sat in poll()), then
 * the rest runs in the order it fell due.
 */
void
freeze_wake(struct sim *s, struct peer *p, int gen)
{
	struct ev *def;
	int i, n, pass, inc = p->inc;

	if (!p->frozen || gen != p->freeze_gen)
		return;
	p->frozen = 0;
	p->woke_at = s->now;
	trace(s, p->idx, "wakes after %lld ms", (long long)(s->now -
	    p->frozen_from));
	if (p->told_connected)
		p->able_at = s->now;
	def = p->deferred;
	n = p->ndef;
	p->deferred = NULL;
	p->ndef = p->capdef = 0;
	election_clock(p->el, s->now);
	check_wake(s, p);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			if ((def[i].type == EV_S2C) != (pass == 0))
				continue;
			if (p->inc != inc || !p->running || p->frozen) {
				/* crashed, stopped or frozen again meanwhile */
				if (p->running && p->inc == inc)
					freeze_defer(p, &def[i]);
				else if (def[i].type == EV_S2C)
					conn_msg_free(s, def[i].p);
				continue;
			}
			peer_dispatch(s, p, &def[i]);
		}
	free(def);
	peer_step(s, p);
}
