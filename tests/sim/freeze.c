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
	if (!p->running || (p->frozen && !p->lib_live))
		return;
	/* A freeze in a loop's stall stops the library too, from now. */
	p->lib_live = 0;
	trace(s, p->idx, "fault: frozen for %lld ms", (long long)ms);
	if (p->frozen) {
		p->wake_at = s->now + ms;
		p->freeze_gen++;
		sim_push(s, p->wake_at, EV_WAKE, p->idx, p->freeze_gen, 0, 0,
		    NULL);
		return;
	}
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
 * What waited for the process, in two passes: what its client library
 * reads first (the socket, and the news it took during a stall), then
 * the rest in the order it fell due.
 */
static void
freeze_run(struct sim *s, struct peer *p, int inc)
{
	struct ev *def = p->deferred;
	int i, n = p->ndef, pass;

	p->deferred = NULL;
	p->ndef = p->capdef = 0;
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			/*
			 * What the library took during a stall comes
			 * before what it reads now, in its order.
			 */
			if ((def[i].type == EV_S2C ||
			    def[i].type == EV_NEWS) != (pass == 0))
				continue;
			if (p->inc != inc || !p->running || p->frozen) {
				/* crashed, stopped or frozen again meanwhile */
				if (p->running && p->inc == inc)
					freeze_defer(p, &def[i]);
				else if (def[i].type == EV_S2C)
					conn_msg_free(s, def[i].p);
				else
					stall_news_free(&def[i]);
				continue;
			}
			peer_dispatch(s, p, &def[i]);
		}
	free(def);
}

/*
 * Wakes a frozen process. Its client library reads what the socket
 * buffered before its timers look at the clock (it sat in poll()), then
 * the rest runs in the order it fell due. What the library answered at
 * once meanwhile (a request on a handle that cannot send) waited behind
 * the news before it, and comes next.
 */
void
freeze_wake(struct sim *s, struct peer *p, int gen)
{
	int inc = p->inc;

	if (!p->frozen || gen != p->freeze_gen)
		return;
	p->frozen = 0;
	p->lib_live = 0;
	p->woke_at = s->now;
	trace(s, p->idx, "wakes after %lld ms", (long long)(s->now -
	    p->frozen_from));
	if (p->told_connected)
		p->able_at = s->now;
	election_clock(p->el, s->now);
	check_wake(s, p);
	do
		freeze_run(s, p, inc);
	while (p->ndef > 0 && p->running && p->inc == inc && !p->frozen);
	peer_step(s, p);
}
