/*
 * A resumed session (election_resume()): the election fed with a small
 * model of what ZooKeeper holds, answering every request from it, and
 * the first thing that is not a request checked: no hook when all of it
 * is still ours, the demote hook (with its reason) when it is not, or
 * when it cannot be confirmed in time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <zookeeper/zookeeper.h>

#include "election.h"
#include "next_action.h"

#define SID 0x1234abcdLL
#define OTHER 0xaaLL
#define E "/zkelectd/svc"
#define CAND E "/candidates"
#define OURS "candidate-000000001234abcd_0000000003"
#define AHEAD "candidate-00000000000000aa_0000000001"
#define T_MS 10000
#define EPOCH 100

/* What the model server holds. */
struct world {
	int64_t node_owner;	/* our node's session: 0 when it is gone */
	int64_t leader_owner;	/* E/leader's: 0 none */
	int64_t claim_owner;	/* the first claim of E/claims: 0 none */
	int ahead;		/* another session's node before ours */
	const char *marker;	/* our priority marker's name in E/priority */
	int heir_claim;		/* a claim of ours behind the first (issue 21) */
	int crumb;		/* E/breadcrumb names us, epoch 100 */
};

/* The last marker the election deleted (UNMARK). */
static char unmarked[256];
/* The paths the last release deleted, one per line. */
static char released[1024];

static int64_t now = 1000;

static int with_check;		/* a health check is configured */
static int64_t check_ms = 60000;	/* and its interval */

static struct election *
resumed(const struct el_resume *r, int demote_on_start)
{
	struct election_params p;
	struct election *el;

	memset(&p, 0, sizeof(p));
	p.path = E;
	p.id = "node1";
	p.data = "10.0.0.1:5432";
	p.demote_on_start = demote_on_start;
	p.retry_backoff_ms = 5000;
	p.disconnect_grace_ms = T_MS;
	p.session_timeout_ms = T_MS;
	p.hook_timeout_ms = 30000;
	p.check = with_check;
	p.check_interval_ms = check_ms;
	p.check_fall = 1;
	p.check_rise = 1;
	p.preempt_delay_ms = -1;	/* preemption is tested elsewhere */
	el = election_new(&p);
	election_clock(el, now);
	election_resume(el, r);
	return el;
}

static void
resume_hint(struct el_resume *r, int leader, int exact)
{
	memset(r, 0, sizeof(*r));
	r->sid = SID;
	r->timeout_ms = T_MS;
	r->lease_sent = now - T_MS / 4;
	r->leader = leader;
	r->epoch = leader ? EPOCH : 0;
	r->exact = exact;
}

static void
connect_session(struct election *el)
{
	election_session_requested(el);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
}

static void
answer(struct election *el, enum el_op op, int rc, int64_t owner,
    const char *data)
{
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = rc;
	r.owner = owner;
	r.czxid = EPOCH;
	r.data = data != NULL ? data : "";
	election_op_done(el, op, &r);
}

static void
answer_list(struct election *el, const struct world *w)
{
	char *kids[2];
	struct el_result r;
	int n = 0;

	if (w->ahead)
		kids[n++] = (char *)AHEAD;
	if (w->node_owner != 0)
		kids[n++] = (char *)OURS;
	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.children = kids;
	r.nchildren = n;
	election_op_done(el, EL_OP_LIST, &r);
}

/*
 * E/claims: the first claim of w, if any, then ours if the election made
 * one meanwhile (an heir's, prepared).
 */
static void
answer_claims(struct election *el, const struct world *w, int made)
{
	char first[64], ours[64], *kids[2];
	struct el_result r;
	int n = 0;

	(void)snprintf(first, sizeof(first), "claim-%016llx_0000000000",
	    (unsigned long long)w->claim_owner);
	(void)snprintf(ours, sizeof(ours), "claim-%016llx_0000000001",
	    (unsigned long long)SID);
	if (w->claim_owner != 0)
		kids[n++] = first;
	if (made && w->claim_owner != SID)
		kids[n++] = ours;
	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.children = kids;
	r.nchildren = n;
	election_op_done(el, EL_OP_CLAIMS, &r);
}

static void
answer_marks(struct election *el, const struct world *w)
{
	char *kids[1];
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = ZOK;	/* E/priority is there, with ours or none */
	kids[0] = (char *)w->marker;
	r.children = kids;
	r.nchildren = w->marker != NULL;
	election_op_done(el, EL_OP_MARKS, &r);
}

static int
exists_rc(int64_t owner)
{
	return owner != 0 ? ZOK : ZNONODE;
}

/* Answers every request from w; returns the first other action. */
static struct el_action
serve(struct election *el, const struct world *w)
{
	static const char leader_data[] = "id=node1\ndata=10.0.0.1:5432\n"
	    "epoch=100\n";
	struct el_action a;
	int guard, i, made = w->heir_claim;

	for (guard = 0; guard < 200; guard++) {
		election_clock(el, now);
		next_action(el, &a);
		if (a.type != EL_ACT_ZK)
			return a;
		switch (a.op) {
		case EL_OP_LIST:
			answer_list(el, w);
			break;
		case EL_OP_WATCH_OWN:
			answer(el, a.op, exists_rc(w->node_owner),
			    w->node_owner, NULL);
			break;
		case EL_OP_WATCH_PRED:
			answer(el, a.op, ZOK, OTHER, "id=a\n");
			break;
		case EL_OP_LEADER:
		case EL_OP_LEADER_EXISTS:
			answer(el, a.op, exists_rc(w->leader_owner),
			    w->leader_owner, leader_data);
			break;
		case EL_OP_CLAIMS:
			answer_claims(el, w, made);
			break;
		case EL_OP_CLAIM_WATCH:
			answer(el, a.op, exists_rc(w->claim_owner),
			    w->claim_owner, NULL);
			break;
		case EL_OP_PARENT:
			answer(el, a.op, ZNODEEXISTS, 0, NULL);
			break;
		case EL_OP_BREADCRUMB:
		case EL_OP_CRUMB_EXISTS:
			answer(el, a.op, w->crumb ? ZOK : ZNONODE, 0,
			    w->crumb ? leader_data : NULL);
			break;
		case EL_OP_MARKS:
			answer_marks(el, w);
			break;
		case EL_OP_CLAIM:
			made = 1;
			answer(el, a.op, ZOK, 0, NULL);
			break;
		case EL_OP_UNMARK:
			assert_int_equal(a.nsub, 1);
			(void)snprintf(unmarked, sizeof(unmarked), "%s",
			    a.sub[0].path);
			answer(el, a.op, ZOK, 0, NULL);
			break;
		case EL_OP_RELEASE:
			released[0] = '\0';
			for (i = 0; i < a.nsub; i++)
				(void)snprintf(released + strlen(released),
				    sizeof(released) - strlen(released),
				    "%s\n", a.sub[i].path);
			answer(el, a.op, ZOK, 0, NULL);
			break;
		case EL_OP_CREATE:	/* a new node: the caller's to see */
			return a;
		case EL_OP_SYNC:
		case EL_OP_ACK:
		case EL_OP_SET_DATA:
		case EL_OP_CLAIM_OWN:	/* our claim, as listed */
		case EL_OP_MARK_OWN:	/* our marker, as made */
			answer(el, a.op, ZOK, 0, NULL);
			break;
		default:
			fail_msg("unexpected request %s", election_op_name(a.op));
		}
	}
	fail_msg("no end to the requests");
	return a;
}

static void
expect_demote(struct election *el, const struct world *w, const char *why)
{
	struct el_action a = serve(el, w);

	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	assert_string_equal(a.reason, why);
}

static void
test_resumed_leader_leads_on_without_a_hook(void **state)
{
	struct world w = { SID, SID, SID, 0, NULL, 0, 0 };
	struct election_view v;
	struct el_resume r;
	struct election *el;
	struct el_action a;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	/* A leader from the start, on the lease handed over. */
	assert_int_equal(election_role(el), ROLE_LEADER);
	connect_session(el);
	a = serve(el, &w);
	assert_int_equal(a.type, EL_ACT_NONE);
	election_view(el, &v);
	assert_int_equal(v.role, ROLE_LEADER);
	assert_int_equal(v.resuming, 0);
	assert_int_equal(v.epoch, EPOCH);
	assert_int_equal(v.leader_epoch, EPOCH);
	election_free(el);
}

/*
 * The image before made a marker for priority 6; a reload gave 0 while it
 * resumed (sim -W -P -L -R 30000017): the resumed session lists
 * E/priority, finds its own marker and deletes it, or the heads would
 * yield to it for good. Mutant 33 does not look.
 */
static void
test_resumed_session_finds_its_old_marker(void **state)
{
	struct world w = { SID, SID, SID, 0, "000000001234abcd_6", 0, 0 };
	struct el_resume r;
	struct election *el;
	struct el_action a;

	(void)state;
	unmarked[0] = '\0';
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	connect_session(el);
	a = serve(el, &w);
	assert_int_equal(a.type, EL_ACT_NONE);
	assert_string_equal(unmarked, E "/priority/000000001234abcd_6");
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

static void
test_resumed_leader_whose_claim_is_gone_demotes(void **state)
{
	struct world w = { SID, SID, OTHER, 0, NULL, 0, 0 };
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	connect_session(el);
	expect_demote(el, &w, "preempted");
	election_free(el);
}

static void
test_resumed_leader_whose_node_is_gone_demotes(void **state)
{
	struct world w = { 0, SID, SID, 0, NULL, 0, 0 };
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	connect_session(el);
	expect_demote(el, &w, "node-deleted");
	election_free(el);
}

static void
test_resumed_leader_with_another_leader_demotes(void **state)
{
	struct world w = { SID, OTHER, SID, 0, NULL, 0, 0 };
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	connect_session(el);
	expect_demote(el, &w, "preempted");
	election_free(el);
}

/* A crash in the middle of a promote: E/claim ours, E/leader not. */
static void
test_claim_without_leadership_demotes_first(void **state)
{
	struct world w = { SID, 0, SID, 0, NULL, 0, 0 };
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 0, 0);
	el = resumed(&r, 0);
	connect_session(el);
	expect_demote(el, &w, "startup");
	election_free(el);
}

/*
 * A crash in the middle of a promote, and its claim deleted by hand
 * before the restart (a review's sim seeds): nothing in ZooKeeper says a
 * promote began, but the session file does.
 */
/* A session resumed with r, in world w: no hook, a follower. */
static void
resumed_follows_quietly(const struct world *w, const struct el_resume *r)
{
	struct election *el;
	struct el_action a;

	el = resumed(r, 1);
	connect_session(el);
	a = serve(el, w);
	assert_int_equal(a.type, EL_ACT_NONE);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	election_free(el);
}

/* A session resumed with r, in world w: its first hook is a startup demote. */
static void
resumed_demotes_first(const struct world *w, const struct el_resume *r)
{
	struct election *el;

	el = resumed(r, 0);
	connect_session(el);
	expect_demote(el, w, "startup");
	election_free(el);
}

static void
test_promote_begun_without_a_claim_demotes_first(void **state)
{
	struct world w = { SID, 0, 0, 0, NULL, 0, 0 };
	struct el_resume r;

	(void)state;
	resume_hint(&r, 0, 0);
	r.promoting = 1;
	resumed_demotes_first(&w, &r);
}

/*
 * A crash in a promote's first moments leaves a session file without
 * `promoting` (resume.c writes it from a timer), and an administrator
 * deleted the claim since: the file still names the claim the promote
 * rested on, and that it is gone is enough (sim -W -L -R -A 112000303).
 * Or ours now is another claim than the one named (deleted by hand
 * during the promote, another made since, behind the first).
 */
static void
test_named_claim_gone_or_replaced_demotes_first(void **state)
{
	struct world gone = { SID, 0, 0, 0, NULL, 0, 0 };
	struct world other = { SID, OTHER, OTHER, 1, NULL, 1, 0 };
	struct el_resume r;

	(void)state;
	resume_hint(&r, 0, 0);
	r.claimed = 1;
	r.claim_seq = 0;	/* other's claim of ours is _0000000001 */
	resumed_demotes_first(&gone, &r);
	resumed_demotes_first(&other, &r);
}

/*
 * Demoted after a lost lease (E/leader and the node kept), head again, a
 * claim made behind another session's: a re-exec's file says down (the
 * demote ended, nothing begun since). No demote again (sim -k 2000 -R -A
 * 1025043307, mutant 166); without the line, as before: one. A file
 * that says a promote had begun demotes whatever it says of down.
 */
static void
test_resumed_down_does_not_demote_again(void **state)
{
	struct world w = { SID, SID, OTHER, 0, NULL, 1, 0 };
	struct el_resume r;
	struct election *el;
	struct el_action a;
	struct election_view v;

	(void)state;
	resume_hint(&r, 0, 1);
	resumed_demotes_first(&w, &r);
	r.down = 1;
	el = resumed(&r, 0);
	connect_session(el);
	a = serve(el, &w);
	assert_false(a.type == EL_ACT_HOOK && a.hook == HOOK_DEMOTE);
	election_view(el, &v);
	assert_int_equal(v.down, 1);	/* the next file says it again */
	election_free(el);
	r.promoting = 1;
	resumed_demotes_first(&w, &r);
}

/*
 * A leader resumed on a file naming claim 5 (its promote's, not ours: ours
 * is listed as _0000000000) and, when crumb_seq is not -1, that claim as
 * its breadcrumb's: all of it confirmed, it leads on.
 */
static struct election *
resumed_on_claim_5(const struct world *w, int exact, int64_t crumb_seq)
{
	struct el_resume r;
	struct election *el;
	struct el_action a;

	resume_hint(&r, 1, exact);
	r.claimed = 1;
	r.claim_seq = 5;
	r.crumb_claimed = crumb_seq != -1;
	r.crumb_claim_seq = crumb_seq;
	el = resumed(&r, 1);
	connect_session(el);
	a = serve(el, w);
	assert_int_equal(a.type, EL_ACT_NONE);
	assert_int_equal(election_role(el), ROLE_LEADER);
	return el;
}

/*
 * A resumed leader names the claim its file named, the one it led on,
 * to its demote's end, whatever claim it holds since: a crash in that
 * demote with the claim deleted by hand still demotes first.
 */
static void
test_resumed_leader_names_the_claim_it_led_on(void **state)
{
	struct world w = { SID, SID, SID, 0, NULL, 0, 0 };
	struct election *el;
	struct election_view v;

	(void)state;
	el = resumed_on_claim_5(&w, 0, -1);
	election_view(el, &v);
	assert_int_equal(v.claimed, 1);
	assert_int_equal(v.claim_seq, 5);
	assert_int_equal(election_resign(el), 0);
	expect_demote(el, &w, "resign");
	election_view(el, &v);
	assert_int_equal(v.claim_seq, 5);
	election_free(el);
}

/*
 * A leader promoted on one claim, deleted by hand mid-promote, acked on
 * another (its next), re-executed: its breadcrumb rests on the second,
 * as the session file says. With its node deleted by hand, the release
 * deletes the breadcrumb beside that claim, or the successor fences a
 * leader that demoted cleanly (sim -s 4593000202 -k 2000 -P -K -R -H -A;
 * mutant 156 takes the claim it was promoted on).
 */
static void
test_resumed_leader_releases_the_breadcrumb_of_its_ack(void **state)
{
	struct world w = { SID, SID, SID, 0, NULL, 0, 1 };
	struct election *el;
	struct election_view v;
	struct el_action a;

	(void)state;
	/* Promoted on claim 5, deleted by hand since; acked on ours (0). */
	el = resumed_on_claim_5(&w, 1, 0);
	election_view(el, &v);
	assert_int_equal(v.crumb_claimed, 1);
	assert_int_equal(v.crumb_claim_seq, 0);
	w.node_owner = 0;
	election_watch(el, 1, CAND "/" OURS);
	expect_demote(el, &w, "node-deleted");
	election_hook_done(el, HOOK_DEMOTE, 1);
	released[0] = '\0';
	a = serve(el, &w);
	assert_int_equal(a.op, EL_OP_CREATE);
	assert_non_null(strstr(released, E "/claims/claim-000000001234abcd_"
	    "0000000000\n"));
	assert_non_null(strstr(released, E "/breadcrumb\n"));
	election_free(el);
}

/*
 * A startup demote for a claim the session file names keeps naming it to
 * its end: a second crash during that demote, the claim deleted by hand
 * since, must demote first again (a third blind round's miss, mutant
 * 109; the simulator does not reach it).
 */
static void
test_startup_demote_keeps_naming_the_claim(void **state)
{
	struct world w = { SID, 0, SID, 0, NULL, 0, 0 };
	struct election_view v;
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 0, 0);
	r.claimed = 1;
	r.claim_seq = 5;	/* ours is listed as _0000000000 */
	el = resumed(&r, 0);
	connect_session(el);
	expect_demote(el, &w, "startup");
	election_view(el, &v);
	assert_int_equal(v.claimed, 1);
	assert_int_equal(v.claim_seq, 5);
	election_free(el);
}

static void
assert_startup_demote(const struct el_action *a)
{
	assert_int_equal(a->type, EL_ACT_HOOK);
	assert_int_equal(a->hook, HOOK_DEMOTE);
	assert_string_equal(a->reason, "startup");
}

/*
 * Resumed with r while a health check runs (due before the session is
 * back), in world w: the checks decide on a startup demote, and the
 * check is being killed to make way for it (its end not told yet).
 */
static struct election *
resumed_check_killed_for_a_demote(const struct el_resume *r,
    const struct world *w)
{
	struct election *el;
	struct el_action a;

	with_check = 1;
	check_ms = 1000;
	el = resumed(r, 0);
	with_check = 0;
	check_ms = 60000;
	now += 1000;		/* the check is due before the session is back */
	election_clock(el, now);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_CHECK);
	connect_session(el);
	a = serve(el, w);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	return el;
}

/* The same, resumed not leading, with E/leader ours and no claim. */
static struct election *
owing_a_startup_demote(const struct world *w)
{
	struct el_resume r;

	resume_hint(&r, 0, 0);
	return resumed_check_killed_for_a_demote(&r, w);
}

/*
 * A stop while a startup demote waits for a running check to end (the
 * resume found our claim first without E/leader: a promote may have
 * begun): the daemon runs the demote before it stops (a third blind
 * round's miss, mutant 110, retired since 143's fix holds everything
 * while that demote waits).
 */
static void
test_stop_waits_for_a_pending_startup_demote(void **state)
{
	struct world w = { SID, 0, SID, 0, NULL, 0, 0 };
	struct election *el = owing_a_startup_demote(&w);
	struct el_action a;

	(void)state;
	election_stop(el);
	/* The check is still being killed: no end before the demote. */
	a = serve(el, &w);
	assert_int_equal(a.type, EL_ACT_NONE);
	election_hook_done(el, HOOK_CHECK, 0);
	a = serve(el, &w);
	assert_startup_demote(&a);
	election_free(el);
}

/*
 * A resume that owes a startup demote (a promote had begun; the claim its
 * file named is gone) while a check runs: until the check is killed and
 * the demote starts, what the session file is written from still says a
 * promote may have run, and names that claim. A crash in that window must
 * not leave a third process nothing that says so (the loop-stall model's
 * first find, sim -P -L -R -H -A -Y 3000 1384000593, mutant 123).
 */
static void
test_owed_startup_demote_kept_until_it_starts(void **state)
{
	struct world w = { SID, 0, 0, 0, NULL, 0, 0 };
	struct election_view v;
	struct el_resume r;
	struct election *el;
	struct el_action a;

	(void)state;
	resume_hint(&r, 0, 0);
	r.promoting = 1;
	r.claimed = 1;
	r.claim_seq = 5;
	el = resumed_check_killed_for_a_demote(&r, &w);
	/* Decided, the check still being killed: a crash now must know. */
	election_view(el, &v);
	assert_int_equal(v.resuming, 0);
	assert_int_equal(v.promote_begun, 1);
	assert_int_equal(v.claimed, 1);
	assert_int_equal(v.claim_seq, 5);
	election_hook_done(el, HOOK_CHECK, 0);
	a = serve(el, &w);
	assert_startup_demote(&a);
	election_free(el);
}

/*
 * A resume's startup demote, decided while a check runs: nothing goes to
 * ZooKeeper until the killed check is reaped and the demote starts (its
 * application may lead past the demote point: the campaign on 7aa5e9e,
 * sim -W -K -R -A 1042058391, mutant 143, sent the node's data first).
 */
static void
test_owed_startup_demote_sends_nothing_before_it(void **state)
{
	struct world w = { SID, 0, SID, 0, NULL, 0, 0 };
	struct election *el = owing_a_startup_demote(&w);
	struct el_action a;

	(void)state;
	election_set_data(el, "10.0.0.9:5432");
	now += 3000;
	election_clock(el, now);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_NONE);
	election_hook_done(el, HOOK_CHECK, 0);
	next_action(el, &a);
	assert_startup_demote(&a);
	election_free(el);
}

/* The claim named is still ours and not first: no promote rested on it. */
static void
test_named_heir_claim_kept_runs_no_hook(void **state)
{
	struct world w = { SID, OTHER, OTHER, 1, NULL, 1, 0 };
	struct el_resume r;

	(void)state;
	resume_hint(&r, 0, 0);
	r.claimed = 1;
	r.claim_seq = 1;
	resumed_follows_quietly(&w, &r);
}

static void
test_resumed_follower_runs_no_hook(void **state)
{
	struct world w = { SID, OTHER, OTHER, 1, NULL, 0, 0 };
	struct el_resume r;

	(void)state;
	resume_hint(&r, 0, 0);
	resumed_follows_quietly(&w, &r);
}

/*
 * The heir's claim, prepared before the restart, is not the first: no
 * promote can have started on it, so no demote hook runs; the claim is
 * kept (not made again).
 */
static void
test_resumed_heir_with_a_prepared_claim_runs_no_hook(void **state)
{
	struct world w = { SID, OTHER, OTHER, 1, NULL, 1, 0 };
	struct el_resume r;

	(void)state;
	resume_hint(&r, 0, 0);
	resumed_follows_quietly(&w, &r);
}

static void
test_expired_session_demotes_with_reason_startup(void **state)
{
	struct el_resume r;
	struct election *el;
	struct el_action a;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	election_session(el, EL_ZK_EXPIRED, 0, 0);
	next_action(el, &a);
	assert_startup_demote(&a);
	election_free(el);
}

/* Never connected: the leader demotes at the lease's demote point. */
static void
test_unconfirmed_leader_demotes_at_its_demote_point(void **state)
{
	struct el_resume r;
	struct election *el;
	struct el_action a;
	int64_t at;

	(void)state;
	resume_hint(&r, 1, 1);
	el = resumed(&r, 1);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_NONE);
	at = election_deadline(el);
	assert_true(at > now && at < r.lease_sent + T_MS);
	now = at;
	election_clock(el, now);
	next_action(el, &a);
	assert_startup_demote(&a);
	election_free(el);
}

/*
 * After a crash, the file may say "not leading" while a promote had just
 * started: unconfirmed by the demote point, the start's demote runs. A
 * re-exec's hint is exact: nothing runs.
 */
static void
test_unconfirmed_crash_resume_demotes_as_a_start(void **state)
{
	struct el_resume r;
	struct election *el;
	struct el_action a;
	int exact;

	(void)state;
	for (exact = 0; exact <= 1; exact++) {
		resume_hint(&r, 0, exact);
		el = resumed(&r, 1);
		next_action(el, &a);
		assert_int_equal(a.type, EL_ACT_NONE);
		now += T_MS;
		election_clock(el, now);
		next_action(el, &a);
		if (exact) {
			assert_int_equal(a.type, EL_ACT_NONE);
		} else {
			assert_int_equal(a.type, EL_ACT_HOOK);
			assert_int_equal(a.hook, HOOK_DEMOTE);
			assert_string_equal(a.reason, "startup");
		}
		election_free(el);
	}
}

/* Out of the election for its health, it stays out: no node, observer. */
static void
test_resumed_unhealthy_node_stays_out(void **state)
{
	struct world w = { 0, OTHER, 0, 1, NULL, 0, 0 };
	struct el_resume r;
	struct election *el;
	struct el_action a;

	(void)state;
	resume_hint(&r, 0, 1);
	r.unhealthy = 1;
	with_check = 1;
	el = resumed(&r, 1);
	with_check = 0;
	connect_session(el);
	a = serve(el, &w);
	assert_int_equal(a.type, EL_ACT_NONE);
	assert_int_equal(election_role(el), ROLE_OBSERVER);
	election_free(el);
}

/*
 * The verdict a re-exec hands over needs a check to end it: a new image
 * whose file has no hooks.check any more is healthy, not out for good
 * (an eighth blind round's defect, mutant 139).
 */
static void
test_resumed_unhealthy_without_a_check_is_healthy(void **state)
{
	struct election_view v;
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 0, 1);
	r.unhealthy = 1;
	el = resumed(&r, 1);
	election_view(el, &v);
	assert_int_equal(v.unhealthy, 0);
	election_free(el);
}

/* Re-opening the session renews the lease from when it was asked for. */
static void
test_reopened_session_renews_the_lease(void **state)
{
	struct election_view v;
	struct el_resume r;
	struct election *el;

	(void)state;
	resume_hint(&r, 1, 1);
	r.lease_sent = now - T_MS / 2;
	el = resumed(&r, 1);
	now += 200;
	election_clock(el, now);
	connect_session(el);
	election_view(el, &v);
	assert_int_equal(v.lease_end, now + T_MS);
	election_free(el);
}

/*
 * Found by the simulator (-k 2000 -P -R -A, seed 29000453): a re-exec'd
 * leader demoted (an operator's resign) before its first connection, so
 * its resume's checks were over when the session was re-opened; the
 * re-opening then renewed nothing (this image had no answered request
 * yet) and it later demoted for lease-lost a request's worth too early.
 * The image asked for the session at zookeeper_init: a re-opening renews
 * the lease from then, checks or not.
 */
static void
test_reopened_after_the_checks_renews_the_lease(void **state)
{
	struct election_view v;
	struct el_resume r;
	struct election *el;
	struct el_action a;
	int64_t asked;

	(void)state;
	resume_hint(&r, 1, 1);
	r.lease_sent = now - T_MS / 2;
	el = resumed(&r, 1);
	election_session_requested(el);
	asked = now;
	election_pause(el, 1);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	/* The demote decided it: the resume's checks are over. */
	next_action(el, &a);
	election_view(el, &v);
	assert_int_equal(v.resuming, 0);
	now += 200;
	election_clock(el, now);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_view(el, &v);
	assert_int_equal(v.lease_end, asked + T_MS);
	election_free(el);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resumed_leader_leads_on_without_a_hook),
		cmocka_unit_test(test_resumed_session_finds_its_old_marker),
		cmocka_unit_test(
		    test_resumed_leader_whose_claim_is_gone_demotes),
		cmocka_unit_test(test_resumed_leader_whose_node_is_gone_demotes),
		cmocka_unit_test(
		    test_resumed_leader_with_another_leader_demotes),
		cmocka_unit_test(test_claim_without_leadership_demotes_first),
		cmocka_unit_test(
		    test_promote_begun_without_a_claim_demotes_first),
		cmocka_unit_test(
		    test_named_claim_gone_or_replaced_demotes_first),
		cmocka_unit_test(test_resumed_down_does_not_demote_again),
		cmocka_unit_test(test_resumed_leader_names_the_claim_it_led_on),
		cmocka_unit_test(
		    test_resumed_leader_releases_the_breadcrumb_of_its_ack),
		cmocka_unit_test(test_startup_demote_keeps_naming_the_claim),
		cmocka_unit_test(test_stop_waits_for_a_pending_startup_demote),
		cmocka_unit_test(test_owed_startup_demote_kept_until_it_starts),
		cmocka_unit_test(test_owed_startup_demote_sends_nothing_before_it),
		cmocka_unit_test(test_named_heir_claim_kept_runs_no_hook),
		cmocka_unit_test(test_resumed_follower_runs_no_hook),
		cmocka_unit_test(
		    test_resumed_heir_with_a_prepared_claim_runs_no_hook),
		cmocka_unit_test(
		    test_expired_session_demotes_with_reason_startup),
		cmocka_unit_test(
		    test_unconfirmed_leader_demotes_at_its_demote_point),
		cmocka_unit_test(
		    test_unconfirmed_crash_resume_demotes_as_a_start),
		cmocka_unit_test(test_reopened_session_renews_the_lease),
		cmocka_unit_test(
		    test_reopened_after_the_checks_renews_the_lease),
		cmocka_unit_test(test_resumed_unhealthy_node_stays_out),
		cmocka_unit_test(test_resumed_unhealthy_without_a_check_is_healthy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
