/*
 * Our priority marker and the yield to a higher priority (see
 * "Preferred leaders" below): what a head or an heir reads before its
 * claim and its promote.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

/*
 * Preferred leaders. A candidate whose priority is not 0 keeps an
 * ephemeral marker E/priority/<sid>_<priority> while it wants to be in
 * the queue (made before its node, deleted with it by its release;
 * E/priority is made by every candidate, so that it can be watched). A
 * head or an heir reads the markers in its claim's pipeline (one request,
 * whatever the number of candidates; none of the nodes' data) with a
 * watch on E/priority's children, and again whenever a marker comes or
 * goes, so that a prepared heir knows them at the release; before any
 * fence or promote hook, yields to a session of higher priority that
 * holds a node behind ours in a listing made after that read: its claim
 * and node go in one release, as a resign's would, and it rejoins at the
 * back. A priority below 0 also yields to the candidates without a
 * marker (priority 0), so it always lists. Nothing in this is safety:
 * the claim, taken first, still decides who may promote, and a yield only
 * ever moves us back. For liveness, the highest priority in the queue
 * never yields, so honest markers end in a promote; markers that lie (a
 * hand-made one naming a queued session with a priority it does not
 * have) could send heads round forever, so a candidate yields at most
 * once per session timeout, after which it promotes as the head.
 */
static int
el_mark_wanted(const struct election *el)
{
	return el->priority != 0 && el->sid != 0 &&
	    (el->now >= el->mark_hold_until || EL_MUTANT(129)) &&
	    el_may_queue(el);
}

/* A marker of ours deleted on its own (NONODE is fine). */
void
el_unmark(struct election *el, struct el_action *act, const char *path)
{
	act->nsub = 0;
	el_sub(act, ZK_MOP_DELETE, path, NULL);
	el_act_zk(el, act, EL_OP_UNMARK, NULL);
}

/*
 * Another marker of our session that a listing showed (from before a
 * restart): deleted whatever the state, a leader's included (NONODE is
 * fine). 1 if the request went out.
 */
int
el_next_mark_extra(struct election *el, struct el_action *act)
{
	if (el->mark_extra == NULL || EL_MUTANT(82))
		return 0;
	el->unmark_extra = 1;
	el_unmark(el, act, el->mark_extra);
	return 1;
}

/*
 * Our marker as it should be: made, replaced or deleted. A change from one
 * priority to another makes the new marker before it deletes the old one,
 * and a session with two markers counts at the lower (el_marks_done()):
 * so a raise never shows us above the new priority, and no change shows
 * our node without a marker, which a head below 0 would take for a 0 and
 * yield to (issue 19). A lowered priority shows the old one until the new
 * marker is made, as a marker not yet made always has.
 */
static const char *
el_mark_want(struct election *el)
{
	if (el->mark_want[0] == '\0' || el->mark_want_sid != el->sid ||
	    el->mark_want_prio != el->priority) {
		(void)snprintf(el->mark_want, sizeof(el->mark_want),
		    "%s/%016llx_%lld", el->prio_dir,
		    (unsigned long long)el->sid, (long long)el->priority);
		el->mark_want_sid = el->sid;
		el->mark_want_prio = el->priority;
	}
	return el->mark_want;
}

int
el_next_mark(struct election *el, struct el_action *act)
{
	const char *want;
	int have;

	/* The one a change replaced, once the new one is made. */
	if (el->mark_old != NULL) {
		el->unmark_old = 1;
		el_unmark(el, act, el->mark_old);
		return 1;
	}
	want = el_mark_wanted(el) ? el_mark_want(el) : "";
	have = el->mark_have != NULL && strcmp(el->mark_have, want) == 0;
	/*
	 * Deleted first where no new one is wanted, or where it cannot be
	 * made now: E/priority is gone (a NONODE), and the old with it.
	 */
	if (el->mark_have != NULL && !have && (want[0] == '\0' ||
	    !el->parents_done || EL_MUTANT(84))) {
		el_unmark(el, act, el->mark_have);
		return 1;
	}
	/* One a lost release may have deleted is made again (or found). */
	if (want[0] == '\0' || (have && !el->mark_unsure) ||
	    !el->parents_done)
		return 0;
	el_replace(&el->mark_path, want);
	el_act_zk(el, act, EL_OP_MARK, el->mark_path);
	return 1;
}

/* The markers, read for a claim beside it; 1 if the read went out. */
int
el_read_marks(struct election *el, struct el_action *act)
{
	if (el->marks_fresh || el_pipe_has(el, EL_OP_MARKS) ||
	    (el->now < el->yield_until && !EL_MUTANT(23)))
		return 0;
	el_act_zk_pipe(el, act, EL_OP_MARKS, el->prio_dir, 1);
	return 1;
}

static int64_t
el_marked(const struct election *el, int64_t sid, int64_t dflt)
{
	int i;

	for (i = 0; i < el->nmarks; i++)
		if (el->mark_sid[i] == sid)
			return el->mark_prio[i];
	return dflt;
}

/*
 * The head, claimed, before its fence or promote: 1 while it waits for
 * what decides a yield, EL_AGAIN when it yields (its release is set).
 */
int
el_yield(struct election *el, struct el_action *act)
{
	int64_t top = el->priority, sid = 0, p;
	int i, maybe = el->priority < 0;

	if (el->now < el->yield_until && !EL_MUTANT(23))
		return 0;
	if (!el->marks_fresh) {
		if (!el_read_marks(el, act) && !el_pipe_has(el, EL_OP_MARKS))
			return 0;	/* not to be read now */
		return 1;
	}
	for (i = 0; i < el->nmarks && !maybe; i++)
		if (el->mark_sid[i] != el->sid && (el->mark_prio[i] > top ||
		    EL_MUTANT(42)))
			maybe = 1;
	if (!maybe)
		return 0;
	/* Who is behind us, listed after the markers were read. */
	if (el->yield_listed != 2 && el->yield_listed != 3) {
		if (el->yield_listed == 0) {
			el->yield_listed = 1;
			el->listed = 0;
			el_act_zk(el, act, EL_OP_LIST, el->cand_dir);
		}
		return 1;
	}
	/*
	 * Below 0 a node without a marker counts as 0. A marker is made
	 * before its node, so the markers read again after the listing (same
	 * server, so no older) show every marker of a listed node: one made
	 * after the first read no longer looks like a 0 (issue 19).
	 */
	if (el->priority < 0 && el->yield_listed == 2 && !EL_MUTANT(49)) {
		el->yield_listed = 3;
		el->marks_fresh = 0;
		if (!el_read_marks(el, act) && !el_pipe_has(el, EL_OP_MARKS))
			return 0;
		return 1;
	}
	for (i = 0; i < el->nbehind; i++) {
		if (el->behind[i] == el->sid)
			continue;
		p = el_marked(el, el->behind[i], EL_MUTANT(148) ?
		    el->priority : 0);
		if (p > top || (EL_MUTANT(42) && p != 0 && sid == 0)) {
			top = p;
			sid = el->behind[i];
		}
	}
	if (sid == 0)
		return 0;
	el->yield_until = el->now + el->timeout_ms;
	el->yield_sid = sid;
	el->yield_prio = top;
	el->yields++;
	el_release_ask(el, "yield");
	return EL_AGAIN;
}
