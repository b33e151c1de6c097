/*
 * The election state machine driven by scripted events, without a server:
 * each test plays ZooKeeper's and the hooks' part and checks every action
 * the machine asks for.
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
#include "election_int.h"	/* el_go() */
#include "next_action.h"

#define SID 0x1234abcdLL
#define E "/zkelectd/svc"
#define CAND E "/candidates"
#define OURS "candidate-000000001234abcd_0000000003"
#define OTHER1 "candidate-00000000000000aa_0000000001"
#define OTHER2 "candidate-00000000000000bb_0000000002"
#define NEWER "candidate-000000001234abcd_0000000009"
#define OTHER1_LATER "candidate-00000000000000aa_0000000004"
#define T_MS 10000
#define EL_TEST_MARGIN 100	/* EL_LEASE_MARGIN_MS */
/* Our claim as the harness lists it, and a leader's before it. */
#define CLAIMS E "/claims"
#define CLAIM_OURS CLAIMS "/claim-000000001234abcd_0000000000"
#define CLAIM_AA "claim-00000000000000aa_0000000005"
#define CLAIM_OURS6 "claim-000000001234abcd_0000000006"

static int hold_syncs;		/* keepalive syncs are the test's to answer */
static int hold_claims;		/* claim multis and E/claims listings are the
				 * test's to answer */
static int hold_marks;		/* E/priority listings are the test's */
static int hold_crumb;		/* exists on E/breadcrumb is the test's */
static int hold_own;		/* exists on our own claim is the test's */
static int syncs_seen;
static int64_t cur_sid;		/* the session of the claims we answer */

/*
 * The election's requests in flight, as the test sees them: a claim the
 * test does not hold is answered (ZOK) once the replies before it are in,
 * as ZooKeeper answers in order.
 */
static enum el_op sent[16];
static int nsent;

/* The virtual clock of every test, in milliseconds. */
static int64_t now = 1000;

static void
tick(struct election *el, int64_t ms)
{
	now += ms;
	election_clock(el, now);
}

static void
params_init(struct election_params *p, int demote_on_start, int fence,
    int64_t grace_ms)
{
	memset(p, 0, sizeof(*p));
	p->preempt_delay_ms = -1;	/* the tests of preemption set it */
	p->path = E;
	p->id = "node1";
	p->data = "10.0.0.1:5432";
	p->demote_on_start = demote_on_start;
	p->fence = fence;
	p->retry_backoff_ms = 5000;
	p->disconnect_grace_ms = grace_ms;
	p->session_timeout_ms = T_MS;
	/* The longest tick ZooKeeper allows by default: a lag of T/4. */
	p->tick_ms = T_MS / 2;
	p->hook_timeout_ms = 30000;
}

static struct election *
el_start(const struct election_params *p)
{
	struct election *el = election_new(p);

	election_clock(el, now);
	hold_syncs = 0;
	hold_claims = 0;
	hold_marks = 0;
	hold_crumb = 0;
	hold_own = 0;
	nsent = 0;
	return el;
}

static struct election *
el_new_grace(int demote_on_start, int fence, int64_t grace_ms)
{
	struct election_params p;

	params_init(&p, demote_on_start, fence, grace_ms);
	return el_start(&p);
}

static struct election *
el_new(int demote_on_start, int fence)
{
	return el_new_grace(demote_on_start, fence, 0);
}

/*
 * The next action; keepalive syncs are answered at once (ZOK) unless a
 * test holds them, so that scripts read as the recipe's steps.
 */

static void answer(struct election *el, enum el_op op,
    const struct el_result *r);
static void answer_owed(struct election *el);

/* The requests the test does not hold: answered by the harness. */
static int
owed(enum el_op op)
{
	switch (op) {
	case EL_OP_MARKS:
		return !hold_marks;
	case EL_OP_CLAIM:
	case EL_OP_CLAIMS:
		return !hold_claims;
	case EL_OP_CRUMB_EXISTS:
		return !hold_crumb;
	case EL_OP_CLAIM_OWN:	/* our claim is there: watched */
	case EL_OP_MARK_OWN:	/* and our priority marker */
		return !hold_own;
	default:
		return 0;
	}
}

/*
 * No markers (nobody has a priority), the claim made, E/claims holding
 * ours alone (first), the breadcrumb absent.
 */
static void
answer_auto(struct election *el, enum el_op op)
{
	static char name[64];
	static char *kids[] = { name };
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	switch (op) {
	case EL_OP_MARKS:	/* E/priority there, without markers */
		break;
	case EL_OP_CRUMB_EXISTS:
		r.rc = ZNONODE;
		break;
	case EL_OP_CLAIMS:
		(void)snprintf(name, sizeof(name), "claim-%016llx_0000000000",
		    (unsigned long long)cur_sid);
		r.children = kids;
		r.nchildren = 1;
		break;
	default:
		break;
	}
	answer(el, op, &r);
}

/* Every reply goes through here, in the order of the requests. */
static void
answer(struct election *el, enum el_op op, const struct el_result *r)
{
	if (op != EL_OP_SYNC && nsent > 0 && sent[0] == op) {
		nsent--;
		memmove(&sent[0], &sent[1], (size_t)nsent * sizeof(sent[0]));
	}
	election_op_done(el, op, r);
	answer_owed(el);
}

/* The replies the test does not hold, once those before them are in. */
static void
answer_owed(struct election *el)
{
	if (nsent > 0 && owed(sent[0]))
		answer_auto(el, sent[0]);
}

static void
restarted(struct election *el)
{
	nsent = 0;
	election_restarted(el);
}

static struct el_action
next(struct election *el)
{
	struct el_action a;
	struct el_result r;

	election_clock(el, now);
	for (;;) {
		next_action(el, &a);
		if (a.type != EL_ACT_ZK)
			return a;
		if (a.op == EL_OP_SYNC && !hold_syncs) {
			syncs_seen++;
			memset(&r, 0, sizeof(r));
			r.rc = ZOK;
			election_op_done(el, a.op, &r);
			continue;
		}
		if (a.op != EL_OP_SYNC)
			sent[nsent++] = a.op;
		if (!owed(a.op))
			return a;
		if (nsent == 1)
			answer_owed(el);
	}
}

static void
expect_op(struct election *el, enum el_op op, const char *path)
{
	struct el_action a = next(el);

	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, op);
	if (path != NULL)
		assert_string_equal(a.path, path);
}

static void
expect_hook(struct election *el, enum hook_kind kind, const char *reason)
{
	struct el_action a = next(el);

	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, kind);
	assert_string_equal(a.reason, reason);
}

static void
expect_none(struct election *el)
{
	struct el_action a = next(el);

	assert_int_equal(a.type, EL_ACT_NONE);
}

static void
reply(struct election *el, enum el_op op, int rc)
{
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = rc;
	r.data = "";
	answer(el, op, &r);
}

static void
reply_get(struct election *el, enum el_op op, const char *data,
    int64_t owner, int64_t czxid)
{
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.data = data;
	r.owner = owner;
	r.czxid = czxid;
	answer(el, op, &r);
}

static void
reply_children(struct election *el, enum el_op op, char *const *names,
    int n)
{
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.children = names;
	r.nchildren = n;
	answer(el, op, &r);
}

static void
reply_list(struct election *el, char *const *names, int n)
{
	reply_children(el, EL_OP_LIST, names, n);
}

static void
reply_create(struct election *el, const char *path)
{
	struct el_result r;

	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.path = path;
	answer(el, EL_OP_CREATE, &r);
}

/*
 * Connected: two syncs a report lag apart, the second proving that the
 * quorum heard of the first, give the lease (lease_end = first + T).
 */
static void
session_up(struct election *el, int64_t sid)
{
	struct el_action a;

	cur_sid = sid;
	election_session(el, EL_ZK_CONNECTED, sid, T_MS);
	election_clock(el, now);
	next_action(el, &a);
	assert_int_equal(a.op, EL_OP_SYNC);
	reply(el, EL_OP_SYNC, ZOK);
	tick(el, T_MS / 4);
	next_action(el, &a);
	assert_int_equal(a.op, EL_OP_SYNC);
	reply(el, EL_OP_SYNC, ZOK);
}

/* Connect, find no leader, create the parents and our node. */
static void
join(struct election *el, int64_t sid, const char *node)
{
	struct el_action a;
	char want[128];

	session_up(el, sid);
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	a = next(el);
	while (a.type == EL_ACT_ZK && a.op == EL_OP_PARENT) {
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
		a = next(el);
	}
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_CREATE);
	(void)snprintf(want, sizeof(want), CAND "/candidate-%016llx_",
	    (unsigned long long)sid);
	assert_string_equal(a.path, want);
	assert_string_equal(a.data, "id=node1\ndata=10.0.0.1:5432\n");
	reply_create(el, node);
	expect_op(el, EL_OP_WATCH_OWN, node);
	reply_get(el, EL_OP_WATCH_OWN, "", sid, 100);
}

/* Joined, alone in the queue: the breadcrumb read (crumb's data, or none). */
static void
join_alone(struct election *el, const char *crumb)
{
	char *kids[] = { OURS };

	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	if (crumb == NULL)
		reply(el, EL_OP_BREADCRUMB, ZNONODE);
	else {
		reply_get(el, EL_OP_BREADCRUMB, crumb, 0, 7);
		/* Read before our claim was first (the claims listed after). */
		expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
		reply_get(el, EL_OP_BREADCRUMB, crumb, 0, 7);
	}
}

static void
become_leader(struct election *el)
{
	struct el_action a;

	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	assert_int_equal(election_role(el), ROLE_PROMOTING);
	election_hook_done(el, HOOK_PROMOTE, 1);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_ACK);
	assert_int_equal(a.nsub, 4);
	assert_int_equal(a.sub[0].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	/* The claim it leads on, first while it exists. */
	assert_int_equal(a.sub[1].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[1].path, CLAIM_OURS);
	assert_int_equal(a.sub[2].kind, ZK_MOP_CREATE_EPHEMERAL);
	assert_string_equal(a.sub[2].path, E "/leader");
	assert_string_equal(a.sub[2].data,
	    "id=node1\ndata=10.0.0.1:5432\nepoch=100\n");
	assert_int_equal(a.sub[3].kind, ZK_MOP_CREATE);
	assert_string_equal(a.sub[3].path, E "/breadcrumb");
	assert_int_equal(election_role(el), ROLE_PROMOTING);
	reply(el, EL_OP_ACK, ZOK);
	assert_int_equal(election_role(el), ROLE_LEADER);
}

/* Connected, and E/leader is not there. */
static void
up_no_leader(struct election *el)
{
	session_up(el, SID);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
}

static void
test_elected(void **state)
{
	struct election *el = el_new(1, 0);
	struct election_view v;

	(void)state;
	assert_int_equal(election_role(el), ROLE_UNKNOWN);
	expect_hook(el, HOOK_DEMOTE, "startup");
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_none(el);	/* not connected yet */
	become_leader(el);
	election_view(el, &v);
	assert_string_equal(v.leader_id, "node1");
	assert_int_equal(v.leader_epoch, 100);
	assert_int_equal(v.epoch, 100);
	assert_int_equal(v.candidates, 1);
	expect_none(el);
	election_free(el);
}

/*
 * The session file's down (election_view()): not while a demote runs, set
 * once it ended well, cleared the moment a promote begins (mutant 167
 * keeps it: a crash in the promote's first moments would resume as down,
 * with no demote owed).
 */
static void
test_down_from_a_demote_to_a_promote(void **state)
{
	struct election *el = el_new(1, 0);
	struct election_view v;

	(void)state;
	expect_hook(el, HOOK_DEMOTE, "startup");
	election_view(el, &v);
	assert_int_equal(v.down, 0);
	election_hook_done(el, HOOK_DEMOTE, 1);
	election_view(el, &v);
	assert_int_equal(v.down, 1);
	join_alone(el, NULL);
	election_view(el, &v);
	assert_int_equal(v.down, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_view(el, &v);
	assert_int_equal(v.down, 0);
	election_free(el);
}

/* The next action, which must be the report of the move from -> to. */
static void
expect_move(struct election *el, enum el_state from, enum el_state to,
    const char *cause)
{
	struct election_view v;
	struct el_action a;

	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_TRANSITION);
	assert_string_equal(election_state_name(a.from),
	    election_state_name(from));
	assert_string_equal(election_state_name(a.to),
	    election_state_name(to));
	assert_string_equal(a.reason, cause);
	assert_int_equal(a.unlisted, 0);
	election_view(el, &v);
	assert_int_equal(v.state, to);
}

/*
 * Each change of state is reported once, after the action that made it,
 * with its cause, and the table has it: from the start's demote to the
 * head's promote.
 */
static void
test_state_moves_are_reported(void **state)
{
	struct election *el = el_new(1, 0);
	struct el_action a;

	(void)state;
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_HOOK);
	expect_move(el, EL_ST_JOINING, EL_ST_DEMOTING, "startup");
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_move(el, EL_ST_DEMOTING, EL_ST_JOINING, "demote hook done");
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_NONE);
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	expect_move(el, EL_ST_HEAD, EL_ST_PROMOTING, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	expect_move(el, EL_ST_PROMOTING, EL_ST_LEADING, "promote hook done");
	election_pause(el, 1);
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	expect_move(el, EL_ST_LEADING, EL_ST_DEMOTING, "pause");
	election_free(el);
}

/* Stopped is the state alone: reached through stopping, then nothing. */
static void
test_state_stopped_is_the_end(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	election_stop(el);
	expect_move(el, EL_ST_JOINING, EL_ST_STOPPING, "stop");
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_STOPPED);
	expect_move(el, EL_ST_STOPPING, EL_ST_STOPPED, "handoff done");
	assert_int_equal(election_role(el), ROLE_STOPPED);
	assert_true(election_deadline(el) == INT64_MAX);
	election_pause(el, 0);
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_NONE);
	election_free(el);
}

/* The table: what may follow what. */
static void
test_state_table(void **state)
{
	(void)state;
	assert_true(election_transition_listed(EL_ST_HEAD, EL_ST_PROMOTING));
	assert_true(election_transition_listed(EL_ST_PROMOTING,
	    EL_ST_LEADING));
	assert_true(election_transition_listed(EL_ST_LEADING,
	    EL_ST_DEMOTING));
	assert_true(election_transition_listed(EL_ST_STOPPING,
	    EL_ST_STOPPED));
	/* Only the head promotes; a leader leaves only by its demote. */
	assert_false(election_transition_listed(EL_ST_QUEUED,
	    EL_ST_PROMOTING));
	assert_false(election_transition_listed(EL_ST_HEAD, EL_ST_LEADING));
	assert_false(election_transition_listed(EL_ST_LEADING,
	    EL_ST_JOINING));
	assert_false(election_transition_listed(EL_ST_PROMOTING,
	    EL_ST_DEMOTING));
	/* Places only improve; nothing follows the end. */
	assert_false(election_transition_listed(EL_ST_HEAD, EL_ST_QUEUED));
	assert_false(election_transition_listed(EL_ST_STOPPED,
	    EL_ST_JOINING));
	assert_false(election_transition_listed(EL_ST_JOINING,
	    EL_ST_STOPPED));
	assert_false(election_transition_listed(EL_ST_COUNT, EL_ST_JOINING));
	assert_string_equal(election_state_name(EL_ST_HEIR), "heir");
}

/*
 * A move the table lacks is made (the state says what is done) and
 * reported as unlisted; the facts then take the state back where they
 * say, reported too.
 */
static void
test_state_unlisted_move_is_reported(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	el_go(el, EL_ST_PROMOTING, "test");
	election_view(el, &v);
	assert_int_equal(v.state, EL_ST_PROMOTING);
	election_next(el, &a);
	assert_int_equal(a.type, EL_ACT_TRANSITION);
	assert_int_equal(a.from, EL_ST_JOINING);
	assert_int_equal(a.to, EL_ST_PROMOTING);
	assert_string_equal(a.reason, "test");
	assert_int_equal(a.unlisted, 1);
	expect_move(el, EL_ST_PROMOTING, EL_ST_JOINING, "start");
	election_free(el);
}

static void
test_follower_watches_predecessor_only(void **state)
{
	struct election *el = el_new(0, 0);
	char *three[] = { OURS, OTHER2, OTHER1, "junk", "lock-1" };
	char *two[] = { OURS, OTHER1 };

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 5);
	/* Ordered by sequence: OTHER1(1), OTHER2(2), OURS(3). */
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER2);
	reply_get(el, EL_OP_WATCH_PRED, "id=b\n", 0xbb, 50);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/* The predecessor goes, but someone is still ahead. */
	election_watch(el, 1, CAND "/" OTHER2);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply_get(el, EL_OP_WATCH_PRED, "id=a\n", 0xaa, 40);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/* A watch on some other node changes nothing. */
	election_watch(el, 1, CAND "/" OTHER2);
	expect_none(el);
	election_free(el);
}

/*
 * A settled follower asks ZooKeeper nothing but its keepalive syncs, and
 * those at most EL_SYNCS_PER_T (10) a T (the simulator's (idle)); here
 * the tick's report lag (0.5 s) is below T/10, so T/10 sets the pace.
 */
static void
test_settled_follower_sends_only_paced_syncs(void **state)
{
	struct election_params p;
	struct election *el;
	char *three[] = { OURS, OTHER2, OTHER1 };
	int i, syncs;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.tick_ms = 1000;
	el = el_start(&p);
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 3);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER2);
	reply_get(el, EL_OP_WATCH_PRED, "id=b\n", 0xbb, 50);
	expect_none(el);
	syncs = syncs_seen;
	for (i = 0; i < 400; i++) {
		tick(el, T_MS / 100);
		expect_none(el);
	}
	/* Four T: about 40, never 80. */
	assert_in_range(syncs_seen - syncs, 30, 41);
	election_free(el);
}

/*
 * The successor of a graceful handoff: the notifications tell it all, and
 * its promotion costs one round trip (the claim), with the watch on
 * E/leader and the breadcrumb's read pipelined before it.
 */
/*
 * A successor that could not prepare (its predecessor did not lead: no
 * E/leader) makes its claim after the release and lists E/claims: a
 * write and a read, pipelined behind the breadcrumb's read.
 */
static void
test_unprepared_successor_claims_then_promotes(void **state)
{
	struct election *el = el_new(0, 0);
	char *two[] = { OURS, OTHER1 };
	char *claims[] = { CLAIM_OURS6 };

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply_get(el, EL_OP_WATCH_PRED, "id=a\n", 0xaa, 40);
	expect_none(el);
	/* The release multi: E/leader, then the predecessor's node. */
	election_watch(el, 1, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	hold_claims = 1;
	expect_op(el, EL_OP_CLAIM, NULL);
	expect_none(el);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	reply(el, EL_OP_CLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 1);
	/*
	 * The breadcrumb read before our claim was first: read again (an
	 * exists, which sets the watch), and the promote waits for it.
	 */
	hold_crumb = 1;
	expect_op(el, EL_OP_CRUMB_EXISTS, E "/breadcrumb");
	expect_none(el);
	reply(el, EL_OP_CRUMB_EXISTS, ZNONODE);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * A head that found its claim first by a listing promotes only once its
 * own claim is watched: deleted between the listing and the exists (by
 * hand, or by a leader's delete of a stale claim), it claims again.
 */
static void
test_head_promotes_only_on_a_watched_claim(void **state)
{
	struct election *el = el_new(0, 0);
	char *claims[] = { CLAIM_OURS6 };
	char *again[] = { "claim-000000001234abcd_0000000008" };

	(void)state;
	join_alone(el, NULL);
	hold_claims = 1;
	hold_own = 1;
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 1);
	expect_op(el, EL_OP_CLAIM_OWN, CLAIMS "/" CLAIM_OURS6);
	expect_none(el);
	reply(el, EL_OP_CLAIM_OWN, ZNONODE);
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, again, 1);
	expect_op(el, EL_OP_CLAIM_OWN,
	    CLAIMS "/claim-000000001234abcd_0000000008");
	reply(el, EL_OP_CLAIM_OWN, ZOK);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * The heir: second, behind the leader (E/leader names its predecessor's
 * node). While the leader leads it makes its claim (a multi checking its
 * own node), places it behind the leader's and watches that one, and
 * watches the breadcrumb. The release's notifications, in the order of
 * its multi, end with the leader's claim: then the promote hook starts,
 * and no request of the heir's is awaited (the exists that set E/leader's
 * and the breadcrumb's watches again are still out).
 */
/* The heir's claim sent: joined second, E/leader naming its predecessor. */
static void
heir_claims(struct election *el)
{
	char *two[] = { OURS, OTHER1 };
	struct el_action a;

	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply_get(el, EL_OP_WATCH_PRED, "id=a\n", 0xaa, 40);
	expect_none(el);
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	hold_claims = 1;
	reply_get(el, EL_OP_LEADER, "id=a\ndata=\nepoch=40\n", 0xaa, 41);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	a = next(el);
	assert_int_equal(a.op, EL_OP_CLAIM);
	assert_int_equal(a.sub[0].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_int_equal(a.sub[1].kind, ZK_MOP_CREATE_EPHEMERAL_SEQ);
	reply_get(el, EL_OP_BREADCRUMB, "id=a\ndata=\nepoch=40\n", 0, 45);
	reply(el, EL_OP_CLAIM, ZOK);
}

static void
heir_prepared(struct election *el)
{
	char *claims[] = { CLAIM_OURS6, CLAIM_AA };

	heir_claims(el);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 2);
	expect_op(el, EL_OP_CLAIM_WATCH, CLAIMS "/" CLAIM_AA);
	reply(el, EL_OP_CLAIM_WATCH, ZOK);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	hold_claims = 0;
	hold_crumb = 1;
}

/* A prepared heir whose claim is first: the leader's was deleted by hand. */
static struct election *
heir_claim_first(void)
{
	struct election *el = el_new(0, 1);

	heir_prepared(el);
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	expect_none(el);
	return el;
}

/*
 * The leader's release, notified in the order of its multi: the heir
 * promotes on the breadcrumb's deletion, read again once its claim is
 * first.
 */
static void
release_to_heir(struct election *el)
{
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	expect_none(el);
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	election_watch(el, 1, E "/breadcrumb");
	expect_hook(el, HOOK_PROMOTE, "elected");
}

static void
test_heir_promotes_on_the_release_alone(void **state)
{
	struct election *el = el_new(0, 1);

	(void)state;
	heir_prepared(el);
	/* The release's multi: E/leader, its node, its claim, the breadcrumb. */
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	/* First in the queue, but the leader's claim is still there. */
	expect_none(el);
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	/*
	 * Our claim is first: the breadcrumb as watched before may lack what
	 * a leader wrote since its last notification, so it is read again...
	 */
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_none(el);
	/*
	 * ...but its deletion, notified after our claim was first, is
	 * enough: a graceful release deleted it, no fence, no wait.
	 */
	election_watch(el, 1, E "/breadcrumb");
	expect_hook(el, HOOK_PROMOTE, "elected");
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[0], EL_OP_LEADER_EXISTS);
	assert_int_equal(sent[1], EL_OP_BREADCRUMB);
	election_free(el);
}

/*
 * The leader's claim deleted by hand: the heir's claim is first before
 * the release, and the breadcrumb it reads then is the leader's. The
 * release (E/leader, the node, the breadcrumb: no claim left to delete)
 * is graceful: the heir reads the breadcrumb again before it fences, and
 * finds it gone (sim -W -L -R -A 2334000078, mutant 144: a needless
 * fence of a leader that released cleanly).
 */
static void
test_heir_first_before_the_release_fences_only_what_is_left(void **state)
{
	struct election *el = heir_claim_first();

	(void)state;
	/* The leader writes new data: the heir's view follows it. */
	election_watch(el, 0, E "/breadcrumb");
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply_get(el, EL_OP_BREADCRUMB, "id=a\ndata=x\nepoch=40\n", 0, 45);
	expect_none(el);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	/* Its view is from before the release: read again, no fence. */
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_none(el);
	election_watch(el, 1, E "/breadcrumb");
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * The heir's claim deleted by hand while the leader leads (issue 19's
 * review): its own watch tells it, and it makes another before the
 * release. Without that watch, the release's last notification would
 * make it promote on a claim that no longer exists, and a deletion of its
 * node mid-promote would let the next head promote beside it.
 */
static void
test_heir_whose_claim_was_deleted_claims_again(void **state)
{
	struct election *el = el_new(0, 1);
	char *claims[] = { "claim-000000001234abcd_0000000007", CLAIM_AA };

	(void)state;
	heir_prepared(el);
	hold_claims = 1;
	election_watch(el, 1, CLAIMS "/" CLAIM_OURS6);
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 2);
	expect_op(el, EL_OP_CLAIM_WATCH, CLAIMS "/" CLAIM_AA);
	reply(el, EL_OP_CLAIM_WATCH, ZOK);
	expect_none(el);
	/* The release: the promote comes on the new claim. */
	release_to_heir(el);
	election_free(el);
}

/*
 * The release notified before the exists on our own claim was answered:
 * its deletion by hand could have come first unseen, so the claim before
 * ours going is no proof that ours is first. E/claims is listed.
 */
static void
test_heir_without_its_own_claim_watched_lists_again(void **state)
{
	struct election *el = el_new(0, 1);
	char *claims[] = { CLAIM_OURS6, CLAIM_AA };
	char *mine[] = { CLAIM_OURS6 };

	(void)state;
	hold_own = 1;
	heir_claims(el);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 2);
	expect_op(el, EL_OP_CLAIM_OWN, CLAIMS "/" CLAIM_OURS6);
	expect_op(el, EL_OP_CLAIM_WATCH, CLAIMS "/" CLAIM_AA);
	/* The release, all before the exists on ours is answered. */
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	reply(el, EL_OP_CLAIM_OWN, ZOK);
	reply(el, EL_OP_CLAIM_WATCH, ZOK);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, mine, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * A deletion of the breadcrumb notified before our claim is first (a
 * server behind the quorum applying an administrator's old delete late):
 * a leader may have written its own since, which the spent watch did not
 * report. It is read again before the promote; here the leader that
 * crashed had written one, and it is fenced (the campaign's seed
 * 402780284 -W -A; mutant 86 promotes on the old view).
 */
static void
test_crumb_deleted_before_our_claim_was_first_is_read_again(void **state)
{
	struct election *el = el_new(0, 1);

	(void)state;
	heir_prepared(el);
	election_watch(el, 1, E "/breadcrumb");
	expect_op(el, EL_OP_CRUMB_EXISTS, E "/breadcrumb");
	expect_none(el);
	/* Its reply is slow; the leader crashes and its session expires. */
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	election_watch(el, 1, CAND "/" OTHER1);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	expect_none(el);	/* the breadcrumb as of now is on its way */
	reply(el, EL_OP_CRUMB_EXISTS, ZOK);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	reply_get(el, EL_OP_BREADCRUMB, "id=a\ndata=\nepoch=43\n", 0, 50);
	expect_hook(el, HOOK_FENCE, "elected");
	election_free(el);
}

/*
 * The leader crashed: its session's expiry deletes its node, E/leader and
 * claim in one transaction, in any order, and leaves the breadcrumb. The
 * heir's view of it is from before its claim was first: one read (a
 * release would have deleted the breadcrumb after the claim), then the
 * fence.
 */
static void
test_heir_fences_on_expiry_after_one_read(void **state)
{
	struct election *el = heir_claim_first();

	(void)state;
	election_watch(el, 1, CAND "/" OTHER1);
	expect_none(el);	/* E/leader still names the old leader */
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_none(el);	/* the breadcrumb's read is out */
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	reply_get(el, EL_OP_BREADCRUMB, "id=a\ndata=\nepoch=40\n", 0, 45);
	expect_hook(el, HOOK_FENCE, "elected");
	assert_int_equal(nsent, 0);
	election_free(el);
}

/*
 * The breadcrumb written after the head's read of it (by hand, or by a
 * stale leader's late write): its notification leaves the view stale
 * until the read it asks for is answered. A decision taken before that
 * would fence the epoch the breadcrumb named before, or promote over a
 * breadcrumb it takes for absent (a thirteenth blind round's miss,
 * mutant 163: the notification only re-armed the watch).
 */
static void
test_heir_reads_a_breadcrumb_written_after_its_read(void **state)
{
	struct election *el = heir_claim_first();
	struct election_view v;

	(void)state;
	election_watch(el, 1, CAND "/" OTHER1);
	expect_none(el);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_none(el);
	/* E/leader there again: read; the head waits for it. */
	reply(el, EL_OP_LEADER_EXISTS, ZOK);
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_BREADCRUMB, "id=a\ndata=\nepoch=40\n", 0, 45);
	expect_none(el);
	/* The breadcrumb written before E/leader's read is answered. */
	election_watch(el, 0, E "/breadcrumb");
	expect_none(el);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	expect_none(el);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_none(el);	/* the breadcrumb as of now is on its way */
	reply_get(el, EL_OP_BREADCRUMB, "id=b\ndata=\nepoch=44\n", 0, 45);
	expect_hook(el, HOOK_FENCE, "elected");
	election_view(el, &v);
	assert_int_equal(v.crumb_epoch, 44);
	assert_string_equal(v.crumb_id, "b");
	election_free(el);
}

/*
 * A marker of higher priority comes while the heir is prepared (its
 * candidate joined after the heir read the markers): the child watch on
 * E/priority has them read again, so that at the release the heir yields
 * to it, as a head that had just read them would.
 */
static void
test_heir_rereads_markers_when_one_comes(void **state)
{
	struct election *el = el_new(0, 0);
	char *marks[] = { "00000000000000bb_5" };
	char *kids[] = { OURS, "candidate-00000000000000bb_0000000007" };
	struct el_action a;

	(void)state;
	heir_prepared(el);
	hold_marks = 1;
	election_watch(el, 0, E "/priority");
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply_children(el, EL_OP_MARKS, marks, 1);
	expect_none(el);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	election_watch(el, 1, CAND "/" OTHER1);
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	election_watch(el, 1, E "/breadcrumb");
	/* Who holds that marker must be behind us: listed, then the yield. */
	expect_op(el, EL_OP_LIST, CAND);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	reply_list(el, kids, 2);
	/* A get of no node set no watch: an exists sets it again. */
	expect_op(el, EL_OP_CRUMB_EXISTS, E "/breadcrumb");
	reply(el, EL_OP_CRUMB_EXISTS, ZNONODE);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_string_equal(a.sub[1].path, CLAIMS "/" CLAIM_OURS6);
	election_free(el);
}

/*
 * E/priority and E/claims are made when first found missing, not by every
 * join: E/priority so that the markers can be watched (then read again),
 * E/claims when a claim's multi finds no parent.
 */
static void
test_missing_priority_and_claims_made_when_needed(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS };
	struct el_action a;

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	hold_marks = 1;
	hold_claims = 1;
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply(el, EL_OP_MARKS, ZNONODE);
	expect_op(el, EL_OP_PARENT, E "/priority");
	reply(el, EL_OP_PARENT, ZOK);
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply_children(el, EL_OP_MARKS, NULL, 0);
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZNONODE);
	expect_op(el, EL_OP_PARENT, CLAIMS);
	reply(el, EL_OP_PARENT, ZOK);
	/* Our node is looked at again (the multi also checked it). */
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply_children(el, EL_OP_MARKS, NULL, 0);
	a = next(el);
	assert_int_equal(a.op, EL_OP_CLAIM);
	election_free(el);
}

/*
 * E/priority found gone when the marker is made, and E with it (a
 * simulator seed, -P): the parents are made again from the top, not
 * E/priority alone for ever.
 */
static void
test_parents_made_from_the_top_when_their_parent_is_gone(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.priority = 7;
	el = el_start(&p);
	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
	assert_int_equal(a.op, EL_OP_MARK);
	reply(el, EL_OP_MARK, ZNONODE);
	expect_op(el, EL_OP_PARENT, E "/priority");
	reply(el, EL_OP_PARENT, ZNONODE);
	expect_none(el);
	tick(el, 1000);
	expect_op(el, EL_OP_PARENT, "/zkelectd");
	election_free(el);
}

/*
 * A prepared claim that went stale: the heir's node is deleted (by hand,
 * or a switchover) while the leader leads. Its claim, an orphan now, goes
 * by itself in a release, then the heir rejoins at the back.
 */
static void
test_stale_prepared_claim_is_released(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	heir_prepared(el);
	election_watch(el, 1, CAND "/" OURS);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, CLAIMS "/" CLAIM_OURS6);
	reply(el, EL_OP_RELEASE, ZOK);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/* Joined behind OTHER1 and OTHER2 (seq 1 and 2), OTHER2 watched. */
static void
third_in_queue(struct election *el)
{
	char *three[] = { OURS, OTHER2, OTHER1 };

	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 3);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER2);
	reply_get(el, EL_OP_WATCH_PRED, "id=b\n", 0xbb, 60);
	expect_none(el);
}

/*
 * A follower learns it is second from E/leader: the leader's session owns
 * its predecessor, and the leader's epoch is that node's czxid. Two small
 * requests per failover for it, no listing; then its own promotion needs
 * no listing either.
 */
static void
test_second_known_from_the_leader(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	int n;

	(void)state;
	third_in_queue(el);
	/* OTHER1 leads, then hands over to OTHER2: we see E/leader only. */
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=a\ndata=\nepoch=40\n", 0xaa, 41);
	expect_none(el);
	n = 0;
	election_watch(el, 1, E "/leader");
	for (a = next(el); a.type == EL_ACT_ZK; a = next(el), n++) {
		assert_int_equal(a.op, EL_OP_LEADER_EXISTS);
		reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	}
	election_watch(el, 0, E "/leader");
	/* An impostor's E/leader for OTHER2's epoch proves nothing. */
	expect_op(el, EL_OP_LEADER, E "/leader");
	n++;
	reply_get(el, EL_OP_LEADER, "id=b\ndata=\nepoch=60\n", 0xcc, 61);
	expect_none(el);
	assert_int_equal(n, 2);
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=b\ndata=\nepoch=60\n", 0xbb, 61);
	/* The heir now: it prepares its claim while OTHER2 leads. */
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply_get(el, EL_OP_BREADCRUMB, "id=b\ndata=\nepoch=60\n", 0, 61);
	expect_none(el);
	/* OTHER2 goes: we are first, without a listing or a claim. */
	election_watch(el, 1, E "/leader");
	election_watch(el, 1, CAND "/" OTHER2);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	/* The breadcrumb as of then: the release's last notification. */
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	election_watch(el, 1, E "/breadcrumb");
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * What E/leader says is shown only from a session that held a node before
 * ours; the leader's own view of itself wins over E/leader's data.
 */
static void
test_leader_node_trusted_only_from_those_ahead(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;

	(void)state;
	third_in_queue(el);
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=a\ndata=x\nepoch=40\n", 0xaa, 41);
	election_view(el, &v);
	assert_string_equal(v.leader_id, "a");
	assert_int_equal(v.leader_epoch, 40);
	assert_int_equal(v.leader_untrusted, 0);
	/* Rewritten by a session that holds no node before ours. */
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=evil\ndata=y\nepoch=0\n", 0xcc, 42);
	election_view(el, &v);
	assert_string_equal(v.leader_id, "");
	assert_string_equal(v.leader_data, "");
	assert_int_equal(v.leader_epoch, 0);
	assert_int_equal(v.leader_untrusted, 1);
	assert_int_equal(v.leader_owner, 0xcc);
	election_free(el);

	/* The leader: E/leader's data changed by someone else. */
	el = el_new(0, 0);
	become_leader(el);
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=fake\ndata=z\nepoch=0\n", SID, 101);
	election_view(el, &v);
	assert_int_equal(v.role, ROLE_LEADER);
	assert_string_equal(v.leader_id, "node1");
	assert_string_equal(v.leader_data, "10.0.0.1:5432");
	assert_int_equal(v.leader_epoch, 100);
	/* And it is written back, for the followers. */
	expect_op(el, EL_OP_SET_DATA, NULL);
	election_free(el);
}

/* New data on the predecessor: its watch is set again, nothing listed. */
static void
test_predecessor_new_data_rewatched(void **state)
{
	struct election *el = el_new(0, 0);
	char *three[] = { OURS, OTHER2, OTHER1 };

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 3);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER2);
	reply_get(el, EL_OP_WATCH_PRED, "id=b\n", 0xbb, 60);
	election_watch(el, 0, CAND "/" OTHER2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER2);
	reply_get(el, EL_OP_WATCH_PRED, "id=b2\n", 0xbb, 60);
	expect_none(el);
	/* E/leader is OTHER1's, not our predecessor's. */
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=a\ndata=\nepoch=40\n", 0xaa, 41);
	expect_none(el);
	/* It was not first: its deletion means a listing. */
	election_watch(el, 1, CAND "/" OTHER2);
	expect_op(el, EL_OP_LIST, CAND);
	election_free(el);
}

static void
test_predecessor_vanished_before_watch(void **state)
{
	struct election *el = el_new(0, 0);
	char *two[] = { OURS, OTHER1 };
	char *one[] = { OURS };

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply(el, EL_OP_WATCH_PRED, ZNONODE);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, one, 1);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	election_free(el);
}

static void
test_lost_create_reply_adopts(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OTHER1, OURS };
	struct el_action a;

	(void)state;
	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZOK);
	assert_int_equal(a.op, EL_OP_CREATE);
	reply(el, EL_OP_CREATE, ZCONNECTIONLOSS);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_UNKNOWN);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	hold_syncs = 1;
	expect_op(el, EL_OP_SYNC, NULL);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	/* A server behind the quorum could hide the node: sync first. */
	expect_none(el);
	reply(el, EL_OP_SYNC, ZOK);
	hold_syncs = 0;
	/* It lists and adopts the node that carries its session id. */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	election_free(el);
}

static void
test_lost_create_reply_not_created(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OTHER1 };
	struct el_action a;

	(void)state;
	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZOK);
	reply(el, EL_OP_CREATE, ZOPERATIONTIMEOUT);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/*
 * The candidates' directory vanishes as soon as it is made (a root too
 * deep for the core, an operator's script): the daemon pauses between
 * rounds instead of asking at full speed.
 */
static void
test_parents_that_do_not_stay_are_retried_after_a_pause(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	int round;

	(void)state;
	up_no_leader(el);
	for (round = 0; round < 3; round++) {
		for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
			reply(el, EL_OP_PARENT, ZNODEEXISTS);
		assert_int_equal(a.op, EL_OP_CREATE);
		reply(el, EL_OP_CREATE, ZNONODE);
		a = next(el);
		if (round == 0) {
			/* Once: made again at once (deleted by hand). */
			assert_int_equal(a.op, EL_OP_PARENT);
			reply(el, EL_OP_PARENT, ZNODEEXISTS);
			continue;
		}
		assert_true(a.type != EL_ACT_ZK || a.op == EL_OP_SYNC);
		tick(el, 999);
		a = next(el);
		assert_true(a.type != EL_ACT_ZK || a.op == EL_OP_SYNC);
		tick(el, 1);
	}
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
	assert_int_equal(a.op, EL_OP_CREATE);
	election_free(el);
}

static void
test_session_expiry_while_leader(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	expect_hook(el, HOOK_DEMOTE, "session-expired");
	assert_int_equal(election_role(el), ROLE_DEMOTING);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESTART);
	restarted(el);
	expect_none(el);
	session_up(el, SID + 1);
	/* The demote is still running: nothing promotes meanwhile. */
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	a = next(el);
	assert_int_equal(a.op, EL_OP_CREATE);
	assert_non_null(strstr(a.path, "candidate-000000001234abce_"));
	election_hook_done(el, HOOK_DEMOTE, 1);
	election_free(el);
}

static void
test_disconnect_demotes_at_once(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	become_leader(el);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	assert_int_equal(election_role(el), ROLE_UNKNOWN);
	election_free(el);
}

/*
 * A leader whose claim was deleted by hand makes another at once, behind
 * the heir's prepared one; that one is of a candidate behind it in the
 * queue, so it deletes it (a multi checking its own node) and its own is
 * first again. Without this, its node deleted by hand too would leave a
 * successor nothing to wait for once E/leader went; and a leader that
 * made no claim until it was the head again would wait behind the heir's
 * claim while the heir waits for its node.
 */
/*
 * Our claim made again (its CLAIM answered) behind the heir's CLAIM_AA:
 * listed, the heir found behind us in the queue, its claim deleted in a
 * multi that checks our node, ours listed first.
 */
static void
claim_placed_first_again(struct election *el)
{
	char *claims[] = { CLAIM_AA, "claim-000000001234abcd_0000000007" };
	char *mine[] = { "claim-000000001234abcd_0000000007" };
	char *two[] = { OURS, OTHER1_LATER };
	struct el_action a;

	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 2);
	/* Whose is the one before ours? Listed: behind us. */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_UNCLAIM);
	assert_int_equal(a.nsub, 2);
	assert_int_equal(a.sub[0].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_int_equal(a.sub[1].kind, ZK_MOP_DELETE);
	assert_string_equal(a.sub[1].path, CLAIMS "/" CLAIM_AA);
	reply(el, EL_OP_UNCLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, mine, 1);
}

static void
test_leader_whose_claim_was_deleted_claims_first_again(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	become_leader(el);
	hold_claims = 1;
	election_watch(el, 1, CLAIM_OURS);
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZOK);
	claim_placed_first_again(el);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

/*
 * A leader whose claim and E/leader were deleted by hand (a heir's claim
 * is first now) makes its claim again, behind the heir's, and acks only
 * once its own is first again: a heir whose claim is first knows E/leader
 * and the breadcrumb from watches, and would never hear of an ack written
 * without the first claim (seed 1002376399, mutant 119).
 */
static void
test_leader_acks_again_only_on_the_first_claim(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	hold_claims = 1;
	election_watch(el, 1, CLAIM_OURS);
	election_watch(el, 1, E "/leader");
	assert_int_equal(election_role(el), ROLE_PROMOTING);
	a = next(el);
	while (a.type == EL_ACT_ZK && a.op != EL_OP_CLAIM) {
		assert_int_not_equal(a.op, EL_OP_ACK);
		reply(el, a.op, a.op == EL_OP_LEADER_EXISTS ? ZNONODE : ZOK);
		a = next(el);
	}
	assert_int_equal(a.op, EL_OP_CLAIM);
	reply(el, EL_OP_CLAIM, ZOK);
	/* Made behind the heir's: placed first, not acked on before. */
	claim_placed_first_again(el);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_ACK);
	assert_int_equal(a.sub[1].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[1].path,
	    CLAIMS "/claim-000000001234abcd_0000000007");
	reply(el, EL_OP_ACK, ZOK);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

static void
test_lease_expired_relearns_before_promoting(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	/* Frozen past the lease while the client still says connected. */
	hold_syncs = 1;
	tick(el, T_MS + 1);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_hook_done(el, HOOK_DEMOTE, 1);
	/* Nothing from before is trusted: it reads again, no promote yet. */
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_SYNC);
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply(el, EL_OP_LEADER, ZSESSIONEXPIRED);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	hold_syncs = 0;
	election_free(el);
}

/* The lease is refreshed by syncs, never by reads. */
static void
test_reads_do_not_refresh_the_lease(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;
	char *kids[] = { OURS };
	int64_t end;

	(void)state;
	become_leader(el);
	election_view(el, &v);
	end = v.lease_end;
	assert_true(end > now);
	hold_syncs = 1;
	/* A sync goes out on its schedule and hangs (a cut-off server). */
	tick(el, T_MS / 4);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_SYNC);
	/*
	 * Reads still come back, long enough after the last write for a
	 * confirmation to pair with it: the lease does not move.
	 */
	tick(el, 1);
	election_watch(el, 0, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	election_view(el, &v);
	assert_int_equal(v.lease_end, end);
	assert_int_equal(election_role(el), ROLE_LEADER);
	/* Short of the demote's budget before the lease's end: demote. */
	now = end - v.demote_timeout_ms - 100;
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	assert_int_equal(election_role(el), ROLE_DEMOTING);
	election_hook_done(el, HOOK_DEMOTE, 1);
	/*
	 * The sync answers at last: the session was alive when it was sent,
	 * and nothing changed since (a watch would have come first), so it
	 * leads again on the same node and epoch.
	 */
	hold_syncs = 0;
	reply(el, EL_OP_SYNC, ZOK);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_PROMOTE);
	assert_int_equal(a.epoch, 100);
	(void)kids;
	election_free(el);
}

static void
test_disconnect_grace(void **state)
{
	struct election *el = el_new_grace(0, 0, 1500);
	char *kids[] = { OURS };

	(void)state;
	become_leader(el);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	assert_int_equal(election_deadline(el), now + 1500);
	/* Within the grace it still leads. */
	assert_int_equal(election_role(el), ROLE_LEADER);
	/* Back in time: it re-reads everything, keeps leading, no hook. */
	tick(el, 1000);
	session_up(el, SID);
	expect_op(el, EL_OP_LEADER, NULL);
	reply_get(el, EL_OP_LEADER, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID, 100);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids, 1);
	tick(el, 1000);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	/* Gone longer than the grace: demote. */
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	tick(el, 1500);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_free(el);
}

/*
 * A reload of disconnect_grace applies at once to a grace under way,
 * counted from the disconnection (a seventh blind round's: restarted from
 * the reload, it let a cut-off leader lead past the grace it was given):
 * shorter and already past, the leader demotes now; lease, it rides on.
 */
static void
test_disconnect_grace_reloaded_during_a_disconnect(void **state)
{
	struct election_params p;
	struct election *el;

	(void)state;
	params_init(&p, 0, 0, 1500);
	el = el_start(&p);
	become_leader(el);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	tick(el, 1000);
	p.disconnect_grace_ms = 3000;
	election_reconfigure(el, &p);
	expect_none(el);
	assert_int_equal(election_deadline(el), now + 2000);
	tick(el, 1000);
	p.disconnect_grace_ms = 1200;
	election_reconfigure(el, &p);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_free(el);

	el = el_start(&p);
	p.disconnect_grace_ms = 1500;
	election_reconfigure(el, &p);
	become_leader(el);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	tick(el, 1000);
	p.disconnect_grace_ms = EL_GRACE_LEASE;
	election_reconfigure(el, &p);
	tick(el, 1000);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	/* From the lease back to a grace: counted from the disconnection. */
	p.disconnect_grace_ms = 1800;
	election_reconfigure(el, &p);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_free(el);
}

/* The grace never eats the time the demote needs before the lease ends. */
static void
test_grace_capped_by_the_lease(void **state)
{
	struct election *el = el_new_grace(0, 0, 60000);
	struct election_view v;

	(void)state;
	become_leader(el);
	election_view(el, &v);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	assert_int_equal(election_deadline(el),
	    v.lease_end - v.demote_timeout_ms - 100);
	now = v.lease_end - v.demote_timeout_ms - 100;
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_free(el);
}

/* Every action until none, answering nothing: no hook may come. */
static void
drain_no_hook(struct election *el)
{
	struct el_action a;
	int i;

	for (i = 0; i < 32; i++) {
		a = next(el);
		assert_int_not_equal(a.type, EL_ACT_HOOK);
		if (a.type == EL_ACT_NONE)
			return;
	}
	fail_msg("the election never settles");
}

/* A leader leads until demote_at, then demotes: the lease ran out. */
static void
leads_until(struct election *el, int64_t demote_at)
{
	now = demote_at - 1;
	drain_no_hook(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	now = demote_at;
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_free(el);
}

/*
 * A leader whose first keepalive sync (sent at *sync_sent) was answered 5 ms
 * later; syncs are held from then on.
 */
static struct election *
leader_after_a_keepalive(int64_t *sync_sent)
{
	struct election *el = el_new_grace(0, 0, EL_GRACE_LEASE);

	become_leader(el);
	hold_syncs = 1;
	now = election_deadline(el);
	expect_op(el, EL_OP_SYNC, NULL);
	*sync_sent = now;
	tick(el, 5);
	reply(el, EL_OP_SYNC, ZOK);
	return el;
}

/*
 * A reconnect of the session is a touch by the quorum's leader after the
 * reconnect was asked for: the lease runs from the send time of the last
 * request answered before it, and a leader rides through (issue 17).
 */
static void
test_reconnect_renews_the_lease(void **state)
{
	struct election_view v;
	int64_t last_sent, old_end;
	struct election *el = leader_after_a_keepalive(&last_sent);

	(void)state;
	election_view(el, &v);
	old_end = v.lease_end;
	assert_true(old_end < last_sent + T_MS);
	/* Lost, and 3 s without a server: it leads on. */
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	tick(el, 3000);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_view(el, &v);
	assert_int_equal(v.lease_end, last_sent + T_MS);
	/* Past the old lease's demote point with no confirmation since. */
	now = old_end - v.demote_timeout_ms - EL_TEST_MARGIN;
	drain_no_hook(el);
	leads_until(el, v.demote_at);
}

/*
 * A server's refusal (NOAUTH: an ACL without the right) is a server's
 * answer too: the request went on a connection that was up, before the
 * reconnect was asked for, so the reconnect's lease runs from its send
 * time (the campaign on 7aa5e9e, sim -k 2000 -W -P -H -A 1055012927,
 * mutant 141: the lease rested on an older request, a needless demote).
 */
static void
test_reconnect_lease_counts_a_refused_request(void **state)
{
	struct election_view v;
	int64_t refused_sent;
	struct election *el = leader_after_a_keepalive(&refused_sent);

	(void)state;
	tick(el, 500);
	election_set_data(el, "10.0.0.9:5432");
	expect_op(el, EL_OP_SET_DATA, NULL);
	refused_sent = now;
	tick(el, 5);
	reply(el, EL_OP_SET_DATA, ZNOAUTH);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	tick(el, 100);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_view(el, &v);
	assert_int_equal(v.lease_end, refused_sent + T_MS);
	election_free(el);
}

/* A read-only server revalidates nothing with a quorum: no lease. */
static void
test_readonly_reconnect_is_no_lease(void **state)
{
	struct election_view v;
	int64_t sync_sent, old_end;
	struct election *el = leader_after_a_keepalive(&sync_sent);

	(void)state;
	election_view(el, &v);
	old_end = v.lease_end;
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	election_session(el, EL_ZK_READONLY, 0, T_MS);
	election_view(el, &v);
	assert_int_equal(v.lease_end, old_end);
	now = old_end - v.demote_timeout_ms - EL_TEST_MARGIN;
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_free(el);
}

/*
 * The keepalive goes when it can renew the lease, a report lag after the
 * last confirmation: a leader that stops hearing the quorum then leads
 * on for W = T - tick/2 - demote_timeout - margin (6.4 s of 10 s with
 * tickTime 2 s), and the demote's reason says the lease was lost.
 */
static void
test_ride_through_window(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;
	int i;

	(void)state;
	params_init(&p, 0, 0, EL_GRACE_LEASE);
	p.tick_ms = 2000;
	el = el_start(&p);
	become_leader(el);
	for (i = 0; i < 5; i++) {
		assert_int_equal(election_deadline(el), now + 1000);
		now = election_deadline(el);
		expect_none(el);	/* the sync, answered at once */
	}
	hold_syncs = 1;
	election_view(el, &v);
	assert_int_equal(v.confirmed_at, now);
	assert_int_equal(v.demote_at - v.confirmed_at,
	    T_MS - 1000 - T_MS / 4 - EL_TEST_MARGIN);
	now = election_deadline(el);
	expect_op(el, EL_OP_SYNC, NULL);	/* it hangs */
	leads_until(el, v.demote_at);
}

/*
 * minSessionTimeout below 2 ticks: the report lag may exceed anything T
 * allows, so the node stays out of the queue and says why, until a
 * session with room for a lease (issue 19, defect 1).
 */
static void
test_timeout_below_two_ticks_stays_out(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;

	(void)state;
	params_init(&p, 0, 0, EL_GRACE_LEASE);
	p.tick_ms = 2000;
	el = el_start(&p);
	election_view(el, &v);
	assert_null(v.lease_error);
	election_session(el, EL_ZK_CONNECTED, 0x99, 1000);
	election_view(el, &v);
	assert_non_null(v.lease_error);
	assert_string_equal(v.lease_error, "timeout-below-2-ticks");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_none(el);
	tick(el, 60000);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/* A new session gets 10 s: it joins. */
	election_session(el, EL_ZK_EXPIRED, 0, 0);
	(void)next(el);		/* EL_ACT_RESTART */
	election_restarted(el);
	join(el, SID, CAND "/" OURS);
	election_view(el, &v);
	assert_null(v.lease_error);
	election_free(el);

	/* T above 2 ticks, but the lag and the demote leave no room. */
	params_init(&p, 0, 0, EL_GRACE_LEASE);
	p.tick_ms = 100;
	p.session_timeout_ms = 200;
	el = el_start(&p);
	election_view(el, &v);
	assert_non_null(v.lease_error);
	assert_string_equal(v.lease_error, "no-room-for-lease");
	election_free(el);
}

/* A reload that leaves no room for a lease: an ordered handoff. */
static void
test_reload_without_lease_room_hands_over(void **state)
{
	struct election_params p;
	struct election *el;
	char *kids[] = { OURS };

	(void)state;
	params_init(&p, 0, 0, EL_GRACE_LEASE);
	el = el_start(&p);
	become_leader(el);
	p.tick_ms = T_MS;
	election_reconfigure(el, &p);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_op(el, EL_OP_RELEASE, NULL);
	reply(el, EL_OP_RELEASE, ZOK);
	expect_none(el);
	/* The right tick again: it rejoins. */
	p.tick_ms = 2000;
	election_reconfigure(el, &p);
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" NEWER);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	(void)kids;
	election_free(el);
}

/* The next action that is not a request to ZooKeeper. */
static struct el_action
next_not_zk(struct election *el)
{
	struct el_action a;

	for (a = next(el); a.type == EL_ACT_ZK; a = next(el))
		;
	return a;
}

/* A leader with hooks.demote_timeout ms, its keepalives held; *v its view. */
static struct election *
leader_with_demote_timeout(struct election_params *p, int64_t ms,
    struct election_view *v)
{
	struct election *el;

	params_init(p, 0, 0, EL_GRACE_LEASE);
	p->demote_timeout_ms = ms;
	el = el_start(p);
	become_leader(el);
	hold_syncs = 1;
	election_view(el, v);
	return el;
}

/*
 * Found by the simulator's reloads of the lease's settings: a reload that
 * raises hooks.demote_timeout past what the lease has left demotes at
 * once, with what is left, so that the hook still ends by the lease's
 * end (less the margin).
 */
static void
test_reload_raising_demote_timeout_keeps_the_lease_end(void **state)
{
	struct election_params p;
	struct election_view v;
	struct election *el = leader_with_demote_timeout(&p, 500, &v);
	struct el_action a;

	(void)state;
	now = v.lease_end - 100 - 2000;
	election_clock(el, now);
	assert_int_equal(next_not_zk(el).type, EL_ACT_NONE);
	assert_int_equal(election_role(el), ROLE_LEADER);
	p.demote_timeout_ms = 3000;
	election_reconfigure(el, &p);
	a = next_not_zk(el);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	assert_string_equal(a.reason, "lease-lost");
	assert_int_equal(a.ms, 2000);
	election_free(el);
}

/*
 * A reload that shortens hooks.demote_timeout at the moment the old one's
 * demote point came, before the demote started, moves the demote point
 * later: the leader leads on (the campaign on 7aa5e9e, sim -k 2000 -W -K
 * -H -A 1067053128, mutant 142: a needless demote).
 */
static void
test_reload_shortening_demote_timeout_at_its_point_leads_on(void **state)
{
	struct election_params p;
	struct election_view v;
	struct election *el = leader_with_demote_timeout(&p, 3000, &v);

	(void)state;
	/* The clock is read at the old demote point, then the reload. */
	now = v.demote_at;
	election_clock(el, now);
	p.demote_timeout_ms = 1000;
	election_reconfigure(el, &p);
	assert_int_equal(next_not_zk(el).type, EL_ACT_NONE);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_view(el, &v);
	leads_until(el, v.demote_at);
}

/*
 * Issue 19, defect 6 (found by the simulator): a leader woken past its
 * demote point while its health check runs has the check killed, and
 * sends nothing to ZooKeeper (here: its new data) before its demote.
 */
static void
test_woken_past_demote_point_sends_nothing_first(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;
	struct el_action a;

	(void)state;
	params_init(&p, 0, 0, EL_GRACE_LEASE);
	p.check = 1;
	p.check_interval_ms = 100000;
	p.check_fall = 1;
	p.check_rise = 1;
	el = el_start(&p);
	become_leader(el);
	now = election_deadline(el);
	while (next(el).type != EL_ACT_HOOK)
		now = election_deadline(el);
	election_view(el, &v);
	assert_int_equal(v.hook, HOOK_CHECK);
	/* Frozen past the demote point; new data came meanwhile. */
	election_set_data(el, "10.0.0.9:5432");
	now = v.demote_at + 1000;
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_CHECK);
	expect_none(el);
	election_hook_done(el, HOOK_CHECK, 0);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_free(el);
}

static void
test_promote_failure(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "promote-failed");
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 2);
	assert_int_equal(a.sub[0].kind, ZK_MOP_DELETE);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	/* The claim last: the heir hears of everything else first. */
	assert_string_equal(a.sub[1].path, CLAIM_OURS);
	reply(el, EL_OP_RELEASE, ZOK);
	expect_none(el);
	{
		struct election_view v;

		election_view(el, &v);
		assert_int_equal(v.backoff_until, now + 5000);
		assert_true(election_deadline(el) <= now + 5000);
	}
	tick(el, 4999);
	expect_none(el);
	tick(el, 1);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/* A leader asked to stop: its demote runs. */
static struct election *
leader_stopping(void)
{
	struct election *el = el_new(0, 0);

	become_leader(el);
	election_stop(el);
	expect_hook(el, HOOK_DEMOTE, "shutdown");
	return el;
}

static void
expect_stopped(struct election *el)
{
	struct el_action a = next(el);

	assert_int_equal(a.type, EL_ACT_STOPPED);
	assert_int_equal(election_role(el), ROLE_STOPPED);
	election_free(el);
}

static void
test_stop_is_an_ordered_handoff(void **state)
{
	struct election *el = leader_stopping();
	struct el_action a;

	(void)state;
	expect_none(el);	/* nothing is deleted before demote ends */
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 4);
	assert_string_equal(a.sub[0].path, E "/leader");
	assert_string_equal(a.sub[1].path, CAND "/" OURS);
	assert_string_equal(a.sub[2].path, CLAIM_OURS);
	assert_string_equal(a.sub[3].path, E "/breadcrumb");
	reply(el, EL_OP_RELEASE, ZOK);
	expect_stopped(el);
}

/* The release cannot go out: the stop ends without it, not at the
 * reconnection (mutant 136; the session's expiry removes the nodes). */
static void
test_stop_while_disconnected_ends_without_the_release(void **state)
{
	struct election *el = leader_stopping();

	(void)state;
	/* ZooKeeper goes away while the demote runs. */
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_stopped(el);
}

static void
test_demote_waits_for_promote(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);	/* never two hooks at once */
	election_hook_done(el, HOOK_PROMOTE, 1);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_free(el);
}

static void
test_waits_for_old_ack(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS };

	(void)state;
	session_up(el, SID);
	expect_op(el, EL_OP_LEADER, NULL);
	reply_get(el, EL_OP_LEADER, "id=old\ndata=x\nepoch=7\n", 0x99, 7);
	assert_int_equal(election_role(el), ROLE_UNKNOWN);
	{
		struct el_action a;
		for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
			reply(el, EL_OP_PARENT, ZOK);
		assert_int_equal(a.op, EL_OP_CREATE);
	}
	reply_create(el, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids, 1);
	/* First in the queue, but the old leader still holds E/leader. */
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/*
	 * Its deletion is known from the notification: the watch is set
	 * again, and the breadcrumb and the claim go out beside it, all
	 * answered in one round trip.
	 */
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	hold_claims = 1;
	expect_op(el, EL_OP_CLAIM, NULL);
	expect_none(el);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	reply_get(el, EL_OP_BREADCRUMB, "id=old\ndata=x\nepoch=7\n", 0, 7);
	expect_none(el);
	reply(el, EL_OP_CLAIM, ZOK);
	/* Not prepared: where the claim stands is listed. */
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	hold_claims = 0;
	answer_auto(el, EL_OP_CLAIMS);
	/* The breadcrumb read before our claim was first: read again. */
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply_get(el, EL_OP_BREADCRUMB, "id=old\ndata=x\nepoch=7\n", 0, 7);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

static void
test_fence_after_unclean_leader(void **state)
{
	struct election *el = el_new(0, 1);
	struct election_view v;

	(void)state;
	join_alone(el, "id=old\ndata=h:1\nepoch=7\n");
	expect_hook(el, HOOK_FENCE, "elected");
	election_view(el, &v);
	assert_string_equal(v.crumb_id, "old");
	assert_int_equal(v.crumb_epoch, 7);
	election_hook_done(el, HOOK_FENCE, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/* A leader resigns: its release deletes the breadcrumb at that version. */
static void
resign_releases_crumb_at(struct election *el, int32_t version)
{
	struct el_action a;

	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_string_equal(a.sub[a.nsub - 1].path, E "/breadcrumb");
	assert_int_equal(a.sub[a.nsub - 1].version, version);
	election_free(el);
}

/*
 * A leader that acked over an old breadcrumb (rewriting it: version 0 to
 * 1) releases it at version 1: a release refused for a version it failed
 * to count costs every handover a read and a second release (the
 * simulator's (rel), mutant 106).
 */
static void
test_release_counts_the_version_its_ack_wrote(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	join_alone(el, "id=old\ndata=h:1\nepoch=7\n");
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_ACK);
	assert_int_equal(a.sub[a.nsub - 1].kind, ZK_MOP_SET);
	assert_string_equal(a.sub[a.nsub - 1].path, E "/breadcrumb");
	reply(el, EL_OP_ACK, ZOK);
	assert_int_equal(election_role(el), ROLE_LEADER);
	resign_releases_crumb_at(el, 1);
}

/*
 * New data goes out while the breadcrumb's second read flies; the read's
 * answer (version 5, someone wrote it since the first read's 4) comes
 * first and is the breadcrumb before our write: the data's reply must not
 * put back what was known when it went (sim seed 763000967: the release,
 * counted from that, was refused BADVERSION).
 */
static void
test_a_read_answered_between_a_write_and_its_reply_counts(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS };
	struct el_result r;
	struct el_action a;

	(void)state;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.data = "id=old\ndata=h:1\nepoch=7\n";
	r.version = 4;
	answer(el, EL_OP_BREADCRUMB, &r);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	election_set_data(el, "10.0.0.9:5432");
	expect_op(el, EL_OP_SET_DATA, NULL);
	r.version = 5;
	answer(el, EL_OP_BREADCRUMB, &r);
	reply(el, EL_OP_SET_DATA, ZOK);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_ACK);
	reply(el, EL_OP_ACK, ZOK);
	resign_releases_crumb_at(el, 6);
}

static void
test_own_node_deleted_while_leader(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;
	int64_t epoch;

	(void)state;
	become_leader(el);
	election_view(el, &v);
	epoch = v.lead_epoch;
	assert_true(epoch != 0);
	election_watch(el, 1, CAND "/" OURS);
	/*
	 * The node's epoch is gone with it, not the leadership's: the
	 * session file keeps the one the application was told (sim -L -R
	 * 472000129: a crash before the demote resumed with epoch 0).
	 */
	election_view(el, &v);
	assert_int_equal(v.epoch, 0);
	assert_int_equal(v.promoted, 1);
	assert_int_equal(v.lead_epoch, epoch);
	expect_hook(el, HOOK_DEMOTE, "node-deleted");
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 3);
	assert_string_equal(a.sub[0].path, E "/leader");
	assert_string_equal(a.sub[1].path, CLAIM_OURS);
	assert_string_equal(a.sub[2].path, E "/breadcrumb");
	/*
	 * Deleting E/leader fires our watch before the reply comes: it is
	 * set again at once, without a read.
	 */
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_RELEASE, ZOK);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/*
 * Found by the 1,000,000-schedule campaign (sim -s 1001698419 -k 2000
 * -A): a leader whose node and claim were deleted by hand read its own
 * breadcrumb (version 0) for its release, then stalled; two others led
 * meanwhile, and the second made the breadcrumb again, at version 0, so
 * the stalled release's delete passed the version check. With neither
 * the node nor the claim it was written under left to delete beside it,
 * nothing in the multi shows that no one led since: the breadcrumb stays
 * (the next leader fences), and the release deletes E/leader alone.
 */
static void
test_release_without_node_or_claim_leaves_the_breadcrumb(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	election_watch(el, 1, CAND "/" OURS);
	expect_hook(el, HOOK_DEMOTE, "node-deleted");
	election_watch(el, 1, CLAIM_OURS);
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, E "/leader");
	election_free(el);
}

/*
 * hooks.run ended on its own: an ordered handoff with its reason, the
 * release, then retry_backoff before the rejoin; a second report, or one
 * when not leading, changes nothing.
 */
static void
test_run_exited_resigns_and_backs_off(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	assert_int_equal(election_run_exited(el), -1);
	become_leader(el);
	election_view(el, &v);
	assert_true(v.demote_at != 0 && v.demote_at < v.lease_end);
	assert_true(v.demote_at + v.demote_timeout_ms < v.lease_end);
	assert_int_equal(election_run_exited(el), 0);
	assert_int_equal(election_run_exited(el), -1);
	expect_hook(el, HOOK_DEMOTE, "run-exited");
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_string_equal(a.sub[a.nsub - 3].path, CAND "/" OURS);
	assert_string_equal(a.sub[a.nsub - 2].path, CLAIM_OURS);
	assert_string_equal(a.sub[a.nsub - 1].path, E "/breadcrumb");
	reply(el, EL_OP_RELEASE, ZOK);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_none(el);
	election_view(el, &v);
	assert_int_equal(v.backoff_until, now + 5000);
	assert_int_equal(v.role, ROLE_FOLLOWER);
	tick(el, 4999);
	expect_none(el);
	tick(el, 1);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/*
 * A leader's reads of what it owns before a release goes again: E/leader
 * ours (epoch 100), a breadcrumb of another id, our node. Whether op was
 * one of them.
 */
static int
reply_owned_read(struct election *el, enum el_op op)
{
	switch (op) {
	case EL_OP_LEADER:
		reply_get(el, op, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n",
		    SID, 101);
		return 1;
	case EL_OP_BREADCRUMB:
		reply_get(el, op, "id=x\ndata=\nepoch=7\n", 0, 9);
		return 1;
	case EL_OP_WATCH_OWN:
		reply_get(el, op, "", SID, 100);
		return 1;
	default:
		return 0;
	}
}

/*
 * A release that fails on a node rewritten by hand (the breadcrumb's
 * version) reads again and goes again at once, not after the retry time
 * (a review: a resign cost 1 s).
 */
static void
test_release_refused_for_a_version_reads_and_goes_again_at_once(
    void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	int i, again = 0;

	(void)state;
	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	reply(el, EL_OP_RELEASE, ZBADVERSION);
	/* No time passes: what it owns is read, and the release sent. */
	for (i = 0; i < 10 && !again; i++) {
		a = next(el);
		assert_int_equal(a.type, EL_ACT_ZK);
		if (a.op == EL_OP_RELEASE)
			again = 1;
		else if (!reply_owned_read(el, a.op))
			fail_msg("unexpected request %s",
			    election_op_name(a.op));
	}
	assert_true(again);
	election_free(el);
}

/*
 * A release whose replies are lost twice (it may have been applied: what
 * it owns is read again) and then refused once (its node deleted by hand)
 * goes again: only a refusal counts as an attempt. An eleventh blind
 * round counted the lost ones (mutant 154): it gave up, replaced the
 * session and left the breadcrumb, and the successor fenced.
 */
static void
test_release_lost_twice_and_refused_once_goes_again(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	int i, releases = 0;

	(void)state;
	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	for (i = 0; i < 40 && releases < 4; i++) {
		a = next(el);
		if (a.type == EL_ACT_NONE) {
			tick(el, 3000);
			continue;
		}
		assert_int_equal(a.type, EL_ACT_ZK);
		if (a.op == EL_OP_RELEASE && ++releases < 4)
			reply(el, a.op, releases < 3 ? ZOPERATIONTIMEOUT :
			    ZNONODE);
		else if (a.op != EL_OP_RELEASE && !reply_owned_read(el, a.op))
			reply(el, a.op, ZNONODE);
	}
	assert_int_equal(releases, 4);
	election_free(el);
}

static void
test_resign_rejoins_at_back(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { NEWER, OTHER1_LATER };
	struct el_action a;

	(void)state;
	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	assert_int_equal(election_resign(el), -1);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_RELEASE, ZOK);
	/* The rejoin does not wait for E/leader's watch. */
	expect_op(el, EL_OP_CREATE, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZOK);
	reply_create(el, CAND "/" NEWER);
	/* The successor wrote it meanwhile: it is read. */
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=node2\ndata=\nepoch=120\n", 0xaa, 120);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" NEWER);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 130);
	/* Not done until the new node is seen at the back of the queue. */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESIGNED);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1_LATER);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	election_free(el);
}

/*
 * A health check every interval_ms: one failure makes unhealthy, one pass
 * healthy again.
 */
static void
check_params(struct election_params *p, int64_t interval_ms)
{
	params_init(p, 0, 0, 0);
	p->check = 1;
	p->check_interval_ms = interval_ms;
	p->check_fall = 1;
	p->check_rise = 1;
}

/* A leader with such a check. */
static struct election *
checked_leader(struct election_params *p, int64_t interval_ms)
{
	struct election *el;

	check_params(p, interval_ms);
	el = el_start(p);
	become_leader(el);
	return el;
}

/*
 * A resign whose release went through, and then the health check fails
 * before the new node is listed: an unhealthy daemon does not queue
 * again, so the resign is done now (a blind round's mutant 160 waited
 * for a rejoin that comes only with the health back).
 */
static void
test_resign_answered_when_unhealthy_before_the_rejoin(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;

	(void)state;
	el = checked_leader(&p, 1000);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_op(el, EL_OP_RELEASE, NULL);
	reply(el, EL_OP_RELEASE, ZOK);
	expect_op(el, EL_OP_CREATE, NULL);
	tick(el, 1000);
	expect_hook(el, HOOK_CHECK, "health");
	election_hook_done(el, HOOK_CHECK, 0);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESIGNED);
	election_free(el);
}

static void
test_new_data_applies_at_once(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	become_leader(el);
	election_set_data(el, "10.0.0.9:5432");
	a = next(el);
	assert_int_equal(a.op, EL_OP_SET_DATA);
	assert_int_equal(a.nsub, 3);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_string_equal(a.sub[0].data, "id=node1\ndata=10.0.0.9:5432\n");
	assert_string_equal(a.sub[1].path, E "/leader");
	assert_string_equal(a.sub[1].data,
	    "id=node1\ndata=10.0.0.9:5432\nepoch=100\n");
	assert_string_equal(a.sub[2].path, E "/breadcrumb");
	reply(el, EL_OP_SET_DATA, ZOK);
	election_view(el, &v);
	assert_string_equal(v.leader_data, "10.0.0.9:5432");
	expect_none(el);
	election_free(el);
}

/*
 * Defect: a resign whose release cannot reach ZooKeeper, then expiry: the
 * daemon is back in the queue on a new session, behind OTHER1_LATER, and
 * the resign is answered.
 */
static void
resign_lost_then_rejoined(struct election *el)
{
	char *kids[] = { OTHER1_LATER, NEWER };
	struct el_action a;

	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_none(el);
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESTART);
	restarted(el);
	session_up(el, SID + 1);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	/* Back in the queue on the new session... */
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" NEWER);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID + 1, 130);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids, 2);
	/* ...and the resign is answered. */
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESIGNED);
}

static void
test_resign_then_expiry_rejoins_and_answers(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	resign_lost_then_rejoined(el);
	election_free(el);
}

/*
 * Defect (issue 19, the campaign): a daemon that led (epoch 100) and lost
 * that session, queued again in a new one, is paused. Its release reads
 * E/breadcrumb from a server behind the quorum, which still shows its old
 * breadcrumb (epoch 100, version 0), while the quorum holds the next
 * leader's, made again at version 0 after ours was deleted. The release
 * must not delete it: only the release that ends the leadership that
 * wrote it, in its session, may (crumb_mine), or the successor's goes
 * and whoever follows it does not fence it.
 */
static void
test_release_leaves_an_old_leaderships_breadcrumb(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	resign_lost_then_rejoined(el);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1_LATER);
	reply_get(el, EL_OP_WATCH_PRED, "id=node2\n", 0xbb, 140);
	expect_none(el);

	election_pause(el, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply_get(el, EL_OP_BREADCRUMB,
	    "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", 0, 7);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, CAND "/" NEWER);
	election_free(el);
}


/*
 * Found by the simulator ((b), -W -P -L -R): a promote killed at the
 * demote point while disconnected, the session back before the killed
 * hook is reaped. The reconnection must not clear the loss the kill was
 * for: the promote may have half promoted the application, and only a
 * demote undoes it.
 */
static void
promote_then_disconnected(struct election *el)
{
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
}

static void
test_promote_killed_for_a_disconnect_demotes_after_the_reconnect(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	promote_then_disconnected(el);
	/* Disconnected to the demote point: the promote is killed. */
	while ((a = next(el)).type == EL_ACT_NONE)
		now = election_deadline(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_PROMOTE);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_hook_done(el, HOOK_PROMOTE, 0);
	/* Nothing in the leader's name before it: no ack. */
	for (a = next(el); a.type == EL_ACT_ZK; a = next(el)) {
		assert_int_not_equal(a.op, EL_OP_ACK);
		reply(el, a.op, ZOK);
	}
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	assert_string_equal(a.reason, "disconnected");
	election_free(el);
}

/* Defect: a failed promote, then expiry, must not leave the election. */
static void
test_promote_failed_then_expiry_rejoins(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;

	(void)state;
	promote_then_disconnected(el);
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_hook_done(el, HOOK_DEMOTE, 1);
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	assert_int_equal(next(el).type, EL_ACT_RESTART);
	restarted(el);
	session_up(el, SID + 1);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	/* The backoff of the failed promote, then a new node. */
	election_view(el, &v);
	assert_true(v.backoff_until > now);
	expect_none(el);
	tick(el, 5000);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/* Paused while its create is in flight; the create's reply then in. */
static void
pause_during_create(struct election *el)
{
	struct el_action a;

	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZOK);
	assert_int_equal(a.op, EL_OP_CREATE);
	election_pause(el, 1);
	reply_create(el, CAND "/" OURS);
}

/* Defect: pause while the create is in flight leaves a live node. */
static void
test_pause_during_create_releases_it(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	pause_during_create(el);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	reply(el, EL_OP_RELEASE, ZOK);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_OBSERVER);
	election_free(el);
}

/* A create's reply lost, then a pause: the listing that looks for it. */
static void
lost_create_then_pause(struct election *el)
{
	struct el_action a;

	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZOK);
	reply(el, EL_OP_CREATE, ZCONNECTIONLOSS);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	election_pause(el, 1);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	/* A sync before the listing that looks for the orphan. */
	hold_syncs = 1;
	expect_op(el, EL_OP_SYNC, NULL);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_none(el);
	reply(el, EL_OP_SYNC, ZOK);
	hold_syncs = 0;
	expect_op(el, EL_OP_LIST, NULL);
}

/*
 * Found by the simulator's campaign (tied faults): a pause whose release
 * is refused three times ends it by replacing the session, and answers
 * only once the session that owns the node is gone, not before.
 */
static void
test_pause_refused_three_times_answers_after_the_restart(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS };
	struct el_action a;
	int refused = 0;

	(void)state;
	pause_during_create(el);
	for (a = next(el); refused < 3; a = next(el)) {
		assert_int_equal(a.type, EL_ACT_ZK);
		if (a.op == EL_OP_RELEASE) {
			reply(el, EL_OP_RELEASE, ZNONODE);
			refused++;
		} else if (a.op == EL_OP_LIST || a.op == EL_OP_CLAIMS)
			reply_children(el, a.op, a.op == EL_OP_LIST ? kids :
			    NULL, a.op == EL_OP_LIST ? 1 : 0);
		else if (a.op == EL_OP_WATCH_OWN)
			reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
		else
			reply(el, a.op, ZNONODE);
	}
	/* Not out of the election yet: its session still owns the node. */
	assert_int_equal(a.type, EL_ACT_RESTART);
	restarted(el);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	election_free(el);
}

/*
 * A leader resigns, is paused meanwhile, and its release is refused
 * NOAUTH (E's ACL without DELETE) three times, which ends it by replacing
 * the session. Keepalive syncs sent meanwhile (hold_syncs) are left
 * unanswered: the old session's replies never come. Returns how many.
 */
static int
resign_refused_three_times(struct election *el)
{
	struct el_action a;
	int i, refused = 0, syncs = 0;

	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	election_pause(el, 1);
	for (i = 0; i < 40 && refused < 3; i++) {
		a = next(el);
		if (a.type == EL_ACT_NONE) {
			/* NOAUTH waits the retry time; a keepalive is due */
			tick(el, 3000);
			continue;
		}
		assert_int_equal(a.type, EL_ACT_ZK);
		if (a.op == EL_OP_RELEASE) {
			reply(el, a.op, ZNOAUTH);
			refused++;
		} else if (a.op == EL_OP_SYNC)
			syncs++;
		else if (!reply_owned_read(el, a.op))
			reply(el, a.op, ZNONODE);
	}
	assert_int_equal(refused, 3);
	return syncs;
}

/*
 * Found by the simulator once its model had E's ACL refuse deletes (the
 * `acl` fault): paused during its resign, the daemon does not rejoin, so
 * its resign is done without a new node; it answers `resigned` only once
 * the session that still owns the old one is gone, as the pause does
 * (above), not before (mutant 140).
 */
static void
test_resign_refused_three_times_answers_after_the_restart(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	(void)resign_refused_three_times(el);
	/* Not handed over yet: its session still owns the node. */
	assert_int_equal(next(el).type, EL_ACT_RESTART);
	restarted(el);
	a = next(el);
	assert_true(a.type == EL_ACT_RESIGNED || a.type == EL_ACT_PAUSED);
	assert_int_equal(next(el).type, a.type == EL_ACT_RESIGNED ?
	    EL_ACT_PAUSED : EL_ACT_RESIGNED);
	election_free(el);
}

/*
 * A keepalive on the wire when the live session is replaced is the old
 * session's: the new one sends its own (an eighth blind round's defect,
 * mutant 138, kept it in flight for good: no keepalive ever again, so no
 * lease and no lost create looked for).
 */
static void
test_replaced_session_sends_its_own_keepalive(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	int i, synced = 0;

	(void)state;
	hold_syncs = 1;
	assert_true(resign_refused_three_times(el) > 0);
	assert_int_equal(next(el).type, EL_ACT_RESTART);
	restarted(el);
	election_session(el, EL_ZK_CONNECTED, SID + 1, T_MS);
	for (i = 0; i < 40 && !synced; i++) {
		a = next(el);
		if (a.type == EL_ACT_ZK && a.op == EL_OP_SYNC)
			synced = 1;
		else if (a.type == EL_ACT_ZK)
			reply(el, a.op, ZNONODE);
		else if (a.type == EL_ACT_NONE)
			tick(el, 1000);
	}
	hold_syncs = 0;
	assert_true(synced);
	election_free(el);
}

/* Defect: a lost create, then pause: the orphan is found and deleted. */
static void
test_pause_after_lost_create_deletes_orphan(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OTHER1, OURS };
	struct el_action a;

	(void)state;
	lost_create_then_pause(el);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	reply(el, EL_OP_RELEASE, ZOK);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	/* Resumed: exactly one new node. */
	election_pause(el, 0);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/*
 * Found by the simulator (-k 2000 -P -L, seed 13000326): a create's reply
 * lost, a pause, and the queue's parent gone (deleted by hand): the
 * listing that looks for the orphan failed NONODE, again and again, and
 * the pause was never answered. No parent, no node of ours.
 */
static void
test_pause_after_lost_create_without_parent(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	lost_create_then_pause(el);
	reply(el, EL_OP_LIST, ZNONODE);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	election_free(el);
}

/* Defect: our node deleted after a demote, E/leader still ours. */
static void
test_orphan_leader_node_is_deleted(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_hook_done(el, HOOK_DEMOTE, 1);
	session_up(el, SID);
	expect_op(el, EL_OP_LEADER, NULL);
	reply_get(el, EL_OP_LEADER, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID, 100);
	/* Someone deleted our node meanwhile. */
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply(el, EL_OP_WATCH_OWN, ZNONODE);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply_get(el, EL_OP_BREADCRUMB, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID,
	    101);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 3);
	assert_string_equal(a.sub[0].path, E "/leader");
	assert_string_equal(a.sub[1].path, CLAIM_OURS);
	assert_string_equal(a.sub[2].path, E "/breadcrumb");
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_RELEASE, ZOK);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/* Defect: checks ran beside promote; now one slot, killed when needed. */
/*
 * check_fall counts failures in a row: a pass between two failures ends
 * the run (a blind round's mutant 102 let them add up).
 */
static void
test_check_fall_counts_failures_in_a_row(void **state)
{
	struct election_params p;
	struct election_view v;
	struct election *el;
	int i, results[] = { 0, 1, 0, 1, 0, 0 };

	(void)state;
	params_init(&p, 0, 0, 0);
	p.check = 1;
	p.check_interval_ms = 100;
	p.check_fall = 2;
	p.check_rise = 1;
	el = el_start(&p);
	for (i = 0; i < 6; i++) {
		tick(el, 100);
		expect_hook(el, HOOK_CHECK, "health");
		election_hook_done(el, HOOK_CHECK, results[i]);
		election_view(el, &v);
		/* Unhealthy only after the last two, failures in a row. */
		assert_int_equal(v.unhealthy, i == 5);
	}
	election_free(el);
}

static void
test_check_shares_the_slot(void **state)
{
	struct election_params p;
	struct election *el;
	char *kids[] = { OURS };
	struct el_action a;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.preempt_delay_ms = -1;
	p.path = E;
	p.id = "node1";
	p.data = "10.0.0.1:5432";
	p.check = 1;
	p.check_interval_ms = 100;
	p.check_fall = 2;
	p.check_rise = 1;
	p.session_timeout_ms = T_MS;
	p.hook_timeout_ms = 30000;
	p.retry_backoff_ms = 5000;
	el = election_new(&p);
	election_clock(el, now);
	hold_syncs = 0;
	hold_claims = 0;
	hold_marks = 0;
	hold_crumb = 0;
	nsent = 0;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, NULL);
	tick(el, 100);
	/* Due while a request is out: the check takes the free slot. */
	expect_hook(el, HOOK_CHECK, "health");
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	/* The promote wants the slot: the check is killed, not joined. */
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_CHECK);
	expect_none(el);
	election_hook_done(el, HOOK_CHECK, 0);
	expect_hook(el, HOOK_PROMOTE, "elected");
	/* While promote runs, no check starts, however late it is. */
	tick(el, 1000);
	a = next(el);
	assert_int_not_equal(a.type, EL_ACT_HOOK);
	election_hook_done(el, HOOK_PROMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_ACK);
	/* A killed check counted for nothing: still healthy. */
	expect_hook(el, HOOK_CHECK, "health");
	election_free(el);
}

/*
 * Second in the queue with hooks.check every interval_ms (check_fall and
 * check_rise 1), its first check just started.
 */
static struct election *
queued_with_check(struct election_params *p, int64_t interval_ms)
{
	struct election *el;
	char *kids[] = { OTHER1, OURS };

	check_params(p, interval_ms);
	el = el_start(p);
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_WATCH_PRED, NULL);
	tick(el, interval_ms);
	expect_hook(el, HOOK_CHECK, "health");
	return el;
}

/*
 * Issue 19.2: a reload took hooks.check away while a failing check ran
 * (check_fall 1); its result made the node unhealthy for good, with no
 * check left to make it healthy again.
 */
static void
test_check_removed_while_it_runs(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;
	struct el_action a;

	(void)state;
	el = queued_with_check(&p, 100);
	p.check = 0;
	election_reconfigure(el, &p);
	election_hook_done(el, HOOK_CHECK, 0);
	election_view(el, &v);
	assert_int_equal(v.unhealthy, 0);
	/* Still queued: no release, no check again. */
	tick(el, 1000);
	a = next(el);
	assert_int_not_equal(a.type, EL_ACT_HOOK);
	assert_int_not_equal(a.op, EL_OP_RELEASE);
	election_view(el, &v);
	assert_string_equal(v.node, OURS);
	election_free(el);
}

/*
 * A reload shortens hooks.check_interval from 2 s to 0.1 s: the contract's
 * health settings apply at once, so the next check comes one new interval
 * after the last one started, not when the old interval would have had it
 * (a reviewer's reload from 40 s to 1 s saw no check for 40 s). A longer
 * one moves the next check later the same way.
 */
static void
test_check_interval_reload_applies_at_once(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;

	(void)state;
	el = queued_with_check(&p, 2000);
	election_hook_done(el, HOOK_CHECK, 1);
	tick(el, 50);
	expect_none(el);
	p.check_interval_ms = 100;
	election_reconfigure(el, &p);
	tick(el, 49);
	expect_none(el);
	tick(el, 1);
	expect_hook(el, HOOK_CHECK, "health");
	election_hook_done(el, HOOK_CHECK, 1);
	/* Longer again: not at the old second, at the new interval. */
	p.check_interval_ms = 500;
	election_reconfigure(el, &p);
	tick(el, 100);
	a = next(el);
	assert_int_not_equal(a.type, EL_ACT_HOOK);
	tick(el, 400);
	expect_hook(el, HOOK_CHECK, "health");
	election_free(el);
}

/*
 * Issue 19.6: a leader wakes past its demote point with a check running
 * and new data to write. The check is killed for the demote, and nothing
 * goes to ZooKeeper in the leader's name meanwhile: the demote first.
 */
static void
test_past_the_demote_point_nothing_before_the_demote(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;
	struct el_action a;

	(void)state;
	el = checked_leader(&p, 100);
	tick(el, 100);
	expect_hook(el, HOOK_CHECK, "health");
	election_set_data(el, "new");
	/* Frozen past the demote point, not yet past the lease's end. */
	election_view(el, &v);
	assert_true(v.demote_at + 10 < v.lease_end);
	now = v.demote_at + 10;
	election_clock(el, now);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_CHECK);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_NONE);
	election_hook_done(el, HOOK_CHECK, 1);
	next_action(el, &a);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	election_free(el);
}

/* Defect: a fence cut short by expiry left stale state behind. */
static void
test_fence_during_expiry_counts_for_nothing(void **state)
{
	struct election *el = el_new(0, 1);
	char *kids2[] = { NEWER };

	(void)state;
	join_alone(el, "id=old\ndata=\nepoch=7\n");
	expect_hook(el, HOOK_FENCE, "elected");
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	/* Its session is gone: the fence is stopped at once... */
	assert_int_equal(next(el).type, EL_ACT_CANCEL);
	assert_int_equal(next(el).type, EL_ACT_RESTART);
	restarted(el);
	/* ...but it had just succeeded: that counts for nothing now. */
	election_hook_done(el, HOOK_FENCE, 1);
	/* No demote follows: nothing was promoted. */
	session_up(el, SID + 1);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" NEWER);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID + 1, 130);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids2, 1);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply_get(el, EL_OP_BREADCRUMB, "id=old\ndata=\nepoch=7\n", 0, 7);
	expect_op(el, EL_OP_BREADCRUMB, NULL);	/* as of our first claim */
	reply_get(el, EL_OP_BREADCRUMB, "id=old\ndata=\nepoch=7\n", 0, 7);
	/* The breadcrumb is still there: fence again, for this node. */
	expect_hook(el, HOOK_FENCE, "elected");
	election_hook_done(el, HOOK_FENCE, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	assert_int_equal(next(el).op, EL_OP_ACK);
	reply(el, EL_OP_ACK, ZOK);
	/* No spurious demote after this promote. */
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

/* Defect: the demote ending a leadership lost to expiry had a new epoch. */
static void
test_demote_carries_the_lost_epoch(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	join_alone(el, NULL);
	a = next(el);
	assert_int_equal(a.hook, HOOK_PROMOTE);
	assert_int_equal(a.epoch, 100);
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.ms, 0);
	assert_int_equal(next(el).type, EL_ACT_RESTART);
	restarted(el);
	session_up(el, SID + 1);
	expect_op(el, EL_OP_LEADER, NULL);
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" NEWER);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID + 1, 130);
	election_hook_done(el, HOOK_PROMOTE, 0);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_DEMOTE);
	assert_string_equal(a.reason, "session-expired");
	assert_int_equal(a.epoch, 100);
	election_free(el);
}

/* Defect: authentication failures restarted sessions in a tight loop. */
static void
test_auth_failure_backs_off(void **state)
{
	struct election *el = el_new(0, 0);
	int64_t prev = 0, wait;
	int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		election_session(el, EL_ZK_AUTH_FAILED, 0, T_MS);
		expect_none(el);
		wait = election_deadline(el) - now;
		assert_true(wait >= prev);
		assert_true(wait >= 1000 && wait <= 30000);
		tick(el, wait);
		assert_int_equal(next(el).type, EL_ACT_RESTART);
		restarted(el);
		prev = wait;
	}
	assert_int_equal(prev, 30000);
	election_free(el);
}

/* A demote_timeout too long for the negotiated T is clamped to T/4. */
static void
test_demote_timeout_clamped_to_negotiated(void **state)
{
	struct election_params p;
	struct election *el;
	struct election_view v;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.preempt_delay_ms = -1;
	p.path = E;
	p.id = "node1";
	p.data = "";
	p.session_timeout_ms = 30000;
	p.demote_timeout_ms = 7000;
	el = election_new(&p);
	election_view(el, &v);
	assert_int_equal(v.demote_timeout_ms, 7000);
	assert_false(v.demote_clamped);
	election_session(el, EL_ZK_CONNECTED, SID, 12000);
	election_view(el, &v);
	assert_int_equal(v.session_timeout_ms, 12000);
	assert_int_equal(v.demote_timeout_ms, 3000);
	assert_true(v.demote_clamped);
	election_free(el);
}

/* Found by the simulator: a connection lost while promote runs. */
static void
test_promote_cut_short_at_the_demote_point(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	expect_none(el);
	election_view(el, &v);
	/* Woken at the demote point, not at the end of the lease. */
	assert_int_equal(election_deadline(el),
	    v.lease_end - v.demote_timeout_ms - 100);
	now = election_deadline(el);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_PROMOTE);
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "disconnected");
	election_free(el);
}

/*
 * Found by the simulator (-L -A): a fence killed at the demote point left
 * "contact lost" set with nothing promoted; once the lease was renewed the
 * node fenced and promoted again and demoted at once, reason lease-lost,
 * inside its lease (or lease-lost where its promote had failed).
 */
static void
fence_killed_at_the_demote_point(struct election *el)
{
	struct el_action a;

	join_alone(el, "id=old\ndata=h:1\nepoch=7\n");
	expect_hook(el, HOOK_FENCE, "elected");
	/* The quorum stops answering: the keepalive sync hangs. */
	hold_syncs = 1;
	tick(el, T_MS / 4);
	expect_op(el, EL_OP_SYNC, "/");
	now = election_deadline(el);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_FENCE);
}

static void
fence_killed_then_renewed(struct election *el)
{
	fence_killed_at_the_demote_point(el);
	election_hook_done(el, HOOK_FENCE, 0);
	/* Nothing was promoted: nothing to demote. */
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/* The quorum answers again: the lease is renewed. */
	reply(el, EL_OP_SYNC, ZOK);
	hold_syncs = 0;
	tick(el, T_MS / 4);
	expect_hook(el, HOOK_FENCE, "elected");
	election_hook_done(el, HOOK_FENCE, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
}

static void
test_fence_killed_at_the_demote_point_then_renewed(void **state)
{
	struct election *el = el_new(0, 1);

	(void)state;
	fence_killed_then_renewed(el);
	election_hook_done(el, HOOK_PROMOTE, 1);
	assert_int_equal(next(el).op, EL_OP_ACK);
	reply(el, EL_OP_ACK, ZOK);
	/* Its lease holds: it leads. */
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);

	el = el_new(0, 1);
	fence_killed_then_renewed(el);
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "promote-failed");
	election_free(el);
}

/*
 * The same, with the renewal read while the killed fence still runs (a
 * blind round's mutant 111): a renewal then leaves the lost contact set,
 * as it must for a killed promote; the fence's end, nothing promoted,
 * clears it. Else the next promote, with no renewal before its end,
 * demotes at once (lease-lost) inside a lease that holds.
 */
static void
test_fence_killed_renewed_while_it_dies(void **state)
{
	struct election *el = el_new(0, 1);
	struct election_view v;
	struct el_action a;

	(void)state;
	fence_killed_at_the_demote_point(el);
	/* The quorum answers while the fence is being killed. */
	reply(el, EL_OP_SYNC, ZOK);
	election_hook_done(el, HOOK_FENCE, 0);
	/* No renewal from here on: the one above holds the lease. */
	while ((a = next(el)).type == EL_ACT_NONE) {
		now = election_deadline(el);
		election_view(el, &v);
		assert_true(now < v.demote_at);
	}
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_FENCE);
	election_hook_done(el, HOOK_FENCE, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	assert_int_equal(next(el).op, EL_OP_ACK);
	election_view(el, &v);
	assert_true(now < v.demote_at);
	assert_int_equal(election_role(el), ROLE_PROMOTING);
	election_free(el);
}

/*
 * Found by the simulator (-L -A): a leader woken from a freeze read the
 * clock past its demote point, then a reply already in its socket renewed
 * the lease; it demoted all the same (lease-lost) inside the new lease.
 */
static void
test_renewal_read_after_the_demote_point(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;

	(void)state;
	become_leader(el);
	hold_syncs = 1;
	now = election_deadline(el);
	expect_op(el, EL_OP_SYNC, "/");
	election_view(el, &v);
	/* Frozen until past the demote point: the clock is read first. */
	now = v.demote_at + 1;
	election_clock(el, now);
	reply(el, EL_OP_SYNC, ZOK);
	election_view(el, &v);
	assert_true(now < v.demote_at);
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

/* Alone, promoting, the keepalive unanswered: killed at the demote point. */
static void
promote_killed_at_the_demote_point(struct election *el)
{
	struct el_action a;

	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	hold_syncs = 1;
	now = election_deadline(el);
	expect_op(el, EL_OP_SYNC, "/");
	now = election_deadline(el);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_CANCEL);
	assert_int_equal(a.hook, HOOK_PROMOTE);
}

/* A promote killed at the demote point is undone, renewal or not. */
static void
test_promote_killed_then_renewed_still_demotes(void **state)
{
	struct election *el = el_new(0, 0);

	(void)state;
	promote_killed_at_the_demote_point(el);
	reply(el, EL_OP_SYNC, ZOK);
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_free(el);
}

/*
 * The seventh blind round's: a promote the daemon killed itself (here at
 * the demote point) did not fail: after its demote the node stays first
 * in the queue, to lead again once the lease is renewed, rather than
 * being given away as a failed promote's would, with a backoff.
 */
static void
test_promote_killed_at_the_demote_point_keeps_the_node(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	promote_killed_at_the_demote_point(el);
	election_hook_done(el, HOOK_PROMOTE, 0);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_hook_done(el, HOOK_DEMOTE, 1);
	for (a = next(el); a.type != EL_ACT_NONE; a = next(el))
		assert_false(a.type == EL_ACT_ZK && a.op == EL_OP_RELEASE);
	election_view(el, &v);
	assert_int_equal(v.state, EL_ST_HEAD);
	reply(el, EL_OP_SYNC, ZOK);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * The fifth blind round's: a pause while a demote runs that no release
 * follows (a start's, an expired session's) is answered once that demote
 * has ended, in role observer, not while the application still leads.
 */
static void
test_pause_during_a_demote_without_release_waits_for_it(void **state)
{
	struct election *el = el_new(1, 0);
	struct el_action a;

	(void)state;
	expect_hook(el, HOOK_DEMOTE, "startup");
	election_pause(el, 1);
	expect_none(el);
	election_hook_done(el, HOOK_DEMOTE, 1);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	assert_int_equal(election_role(el), ROLE_OBSERVER);
	election_free(el);

	el = el_new(0, 0);
	become_leader(el);
	election_session(el, EL_ZK_EXPIRED, 0, T_MS);
	expect_hook(el, HOOK_DEMOTE, "session-expired");
	election_pause(el, 1);
	for (a = next(el); a.type != EL_ACT_NONE; a = next(el)) {
		assert_int_not_equal(a.type, EL_ACT_PAUSED);
		if (a.type == EL_ACT_RESTART)
			restarted(el);
	}
	assert_int_equal(election_role(el), ROLE_DEMOTING);
	election_hook_done(el, HOOK_DEMOTE, 1);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	election_free(el);
}

/* Found by the simulator: pause, then resume, while promote runs. */
static void
test_pause_resume_during_promote(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_pause(el, 1);
	election_pause(el, 0);
	election_hook_done(el, HOOK_PROMOTE, 1);
	expect_hook(el, HOOK_DEMOTE, "pause");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	reply(el, EL_OP_RELEASE, ZOK);
	assert_int_equal(next(el).type, EL_ACT_PAUSED);
	/* Resumed meanwhile: back in the queue. */
	expect_op(el, EL_OP_CREATE, NULL);
	election_free(el);
}

/* Found by the simulator: resign, then pause before the rejoin. */
static void
test_resign_then_pause_is_answered(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	election_pause(el, 1);
	reply(el, EL_OP_RELEASE, ZOK);
	a = next(el);
	assert_true(a.type == EL_ACT_RESIGNED || a.type == EL_ACT_PAUSED);
	a = next(el);
	assert_true(a.type == EL_ACT_RESIGNED || a.type == EL_ACT_PAUSED);
	election_free(el);
}

/*
 * A head that was not prepared makes its claim, lists E/claims, and waits
 * for a claim before its own (an old head's, whose promote may still run)
 * with a watch; its deletion makes ours first without a listing.
 */
static void
test_claim_waits_for_the_previous_holder(void **state)
{
	struct election *el = el_new(0, 0);
	char *claims[] = { CLAIM_OURS6, CLAIM_AA };
	char *one[] = { OURS };
	struct el_action a;
	struct el_result r;

	(void)state;
	join_alone(el, NULL);
	hold_claims = 1;
	a = next(el);
	assert_int_equal(a.op, EL_OP_CLAIM);
	assert_int_equal(a.nsub, 2);
	assert_int_equal(a.sub[0].kind, ZK_MOP_CHECK);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_int_equal(a.sub[1].kind, ZK_MOP_CREATE_EPHEMERAL_SEQ);
	assert_string_equal(a.sub[1].path,
	    CLAIMS "/claim-000000001234abcd_");
	assert_string_equal(a.sub[1].data, "id=node1\nepoch=100\n");
	reply(el, EL_OP_CLAIM, ZOK);
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 2);
	/*
	 * Its session is neither ahead of us nor behind in our listing:
	 * the queue is listed once more to tell a node made since (behind
	 * us: a stale claim, deleted) from none (an old head's, waited for).
	 */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, one, 1);
	expect_op(el, EL_OP_CLAIM_WATCH, CLAIMS "/" CLAIM_AA);
	memset(&r, 0, sizeof(r));
	r.rc = ZOK;
	r.owner = 0xaa;
	answer(el, EL_OP_CLAIM_WATCH, &r);
	/* The old head's promote may still run: no hook. */
	expect_none(el);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	/* New data on it is no release: watched again. */
	election_watch(el, 0, CLAIMS "/" CLAIM_AA);
	expect_op(el, EL_OP_CLAIM_WATCH, CLAIMS "/" CLAIM_AA);
	answer(el, EL_OP_CLAIM_WATCH, &r);
	expect_none(el);
	/* Its deletion: ours is first, no listing, no write. */
	election_watch(el, 1, CLAIMS "/" CLAIM_AA);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/* After a release: the new node NEWER, watched, then a listing. */
static void
rejoin_as_newer(struct election *el, char *const *kids, int n)
{
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" NEWER);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" NEWER);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 130);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, n);
}

/*
 * A head reads E/priority's markers beside its claim; a session of higher
 * priority behind it (in a listing made after that read) makes it yield:
 * its claim and node go in one release, it rejoins at the back, and no
 * hook ran. Within a session timeout it does not yield again (mutant 23:
 * forged markers could send heads round for ever).
 */
static void
test_head_yields_once_to_a_higher_priority(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS, OTHER1_LATER };
	char *rejoined[] = { OTHER1_LATER, NEWER };
	char *marks[] = { "00000000000000aa_5", "junk", "00000000000000bb_x" };
	struct el_action a;

	(void)state;
	hold_marks = 1;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_op(el, EL_OP_MARKS, E "/priority");
	expect_none(el);	/* the claim is in flight behind them */
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	reply_children(el, EL_OP_MARKS, marks, 3);
	/* Who holds the marker must be queued behind us: listed again. */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 2);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_string_equal(a.sub[1].path, CLAIM_OURS);
	assert_int_equal(election_role(el), ROLE_FOLLOWER);
	reply(el, EL_OP_RELEASE, ZOK);
	rejoin_as_newer(el, rejoined, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1_LATER);
	reply_get(el, EL_OP_WATCH_PRED, "", 0xaa, 110);
	/*
	 * It leaves (and would rejoin behind us with its marker): we are
	 * first again, and promote without reading the markers.
	 */
	election_watch(el, 1, CAND "/" OTHER1_LATER);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/*
 * A head of priority 0 with OTHER1_LATER queued behind it reads the
 * markers given, and promotes: it does not yield.
 */
static void
head_promotes_despite(char *const *marks, int n)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS, OTHER1_LATER };

	hold_marks = 1;
	join(el, SID, CAND "/" OURS);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	reply_children(el, EL_OP_MARKS, marks, n);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/* A head never yields to a lower priority queued behind it. */
static void
test_head_keeps_its_place_before_a_lower_priority(void **state)
{
	char *marks[] = { "00000000000000aa_-1" };

	(void)state;
	head_promotes_despite(marks, 1);
}

/*
 * A session with two markers (a reload replacing one, el_next_mark())
 * counts at the lower: a head of priority 0 does not yield to a session
 * marked both 5 and -1 (mutant 85 takes the first one listed).
 */
static void
test_session_of_two_markers_counts_at_the_lower(void **state)
{
	char *marks[] = { "00000000000000aa_5", "00000000000000aa_-1" };

	(void)state;
	head_promotes_despite(marks, 2);
}

/*
 * A candidate of that priority (not 0), no leader: its marker made, then
 * its node OURS, watched; the listing is the next action.
 */
static struct election *
start_marked(struct election_params *p, int64_t priority)
{
	struct election *el;
	struct el_action a;
	char want[128];

	params_init(p, 0, 0, 0);
	p->priority = priority;
	el = el_start(p);
	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
	assert_int_equal(a.op, EL_OP_MARK);
	(void)snprintf(want, sizeof(want), E "/priority/000000001234abcd_%lld",
	    (long long)priority);
	assert_string_equal(a.path, want);
	reply(el, EL_OP_MARK, ZOK);
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	return el;
}

/*
 * A candidate of priority prio, its marker made, second behind OTHER1 and
 * watching it, its own exists held.
 */
static struct election *
marked_second(struct election_params *p, int64_t prio)
{
	struct election *el = start_marked(p, prio);
	char *two[] = { OURS, OTHER1 };

	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply_get(el, EL_OP_WATCH_PRED, "id=a\n", 0xaa, 40);
	expect_none(el);
	hold_own = 1;
	return el;
}

/*
 * A review: the marker of a candidate with a priority deleted by hand
 * left it looking like priority 0 for good (no preemption ever again).
 * It watches its own marker, and makes it again once it hears.
 */
static void
test_marker_deleted_by_hand_is_made_again(void **state)
{
	struct election_params p;
	struct election *el = marked_second(&p, 10);

	(void)state;
	election_watch(el, 1, E "/priority/000000001234abcd_10");
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_10");
	reply(el, EL_OP_MARK, ZOK);
	expect_op(el, EL_OP_MARK_OWN, E "/priority/000000001234abcd_10");
	expect_none(el);
	election_free(el);
}

/*
 * A thirteenth blind round's (mutant 162): a reload from 5 to 10 makes
 * the new marker, then deletes the old one; the new one deleted by hand
 * while that UNMARK is in flight is ours to make again, as soon as the
 * UNMARK is answered. Taken for the UNMARK's own deletion, it was left
 * to the exists on it to find it gone: a round trip later, and a release
 * sent meanwhile deleted it, refused NONODE (the simulator's (rel)).
 */
static void
test_marker_deleted_by_hand_during_a_reload_is_made_again(void **state)
{
	struct election_params p;
	struct election *el = marked_second(&p, 5);

	(void)state;
	p.priority = 10;
	election_reconfigure(el, &p);
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_10");
	reply(el, EL_OP_MARK, ZOK);
	expect_op(el, EL_OP_MARK_OWN, E "/priority/000000001234abcd_10");
	expect_op(el, EL_OP_UNMARK, NULL);
	reply(el, EL_OP_MARK_OWN, ZOK);
	election_watch(el, 1, E "/priority/000000001234abcd_10");
	expect_none(el);
	reply(el, EL_OP_UNMARK, ZOK);
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_10");
	reply(el, EL_OP_MARK, ZOK);
	expect_op(el, EL_OP_MARK_OWN, E "/priority/000000001234abcd_10");
	election_free(el);
}

/*
 * Issue 19's campaign (seed 223883417): a follower reloaded from -3 to -1
 * deleted its marker first, and its new one was lost to a connection
 * loss: its node stayed without a marker, and a head at -1 took it for a
 * 0 and yielded to it. The new marker is made first, the old one deleted
 * only once it is made (mutant 84: the old order), even across a lost
 * MARK.
 */
static void
test_priority_reload_makes_the_new_marker_first(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	char *kids[] = { OTHER1, OURS };
	char *old[] = { "00000000000000aa_2", "000000001234abcd_-3" };
	int i, made = 0;

	(void)state;
	el = start_marked(&p, -3);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	reply_get(el, EL_OP_WATCH_PRED, "", 0xaa, 90);
	p.priority = -1;
	election_reconfigure(el, &p);
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_-1");
	election_session(el, EL_ZK_CONNECTING, SID, T_MS);
	reply(el, EL_OP_MARK, ZCONNECTIONLOSS);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	/* Whatever it reads again, the old marker stays until the new one
	 * is made. */
	for (i = 0; i < 20; i++) {
		a = next(el);
		if (a.type != EL_ACT_ZK)
			continue;
		if (a.op == EL_OP_UNMARK) {
			assert_true(made);
			assert_int_equal(a.nsub, 1);
			assert_string_equal(a.sub[0].path,
			    E "/priority/000000001234abcd_-3");
			reply(el, EL_OP_UNMARK, ZOK);
			break;
		}
		switch (a.op) {
		case EL_OP_MARK:
			assert_string_equal(a.path,
			    E "/priority/000000001234abcd_-1");
			reply(el, EL_OP_MARK, ZOK);
			made = 1;
			break;
		case EL_OP_MARKS:
			reply_children(el, EL_OP_MARKS, old, 2);
			break;
		case EL_OP_LEADER:
			reply_get(el, EL_OP_LEADER,
			    "id=node2\ndata=\nepoch=90\n", 0xaa, 95);
			break;
		case EL_OP_WATCH_OWN:
			reply_get(el, a.op, "", SID, 100);
			break;
		case EL_OP_WATCH_PRED:
			reply_get(el, a.op, "", 0xaa, 90);
			break;
		case EL_OP_LIST:
			reply_list(el, kids, 2);
			break;
		default:
			answer_auto(el, a.op);
			break;
		}
	}
	assert_true(made);
	assert_true(i < 20);
	election_free(el);
}

/*
 * Found by the simulator's (answer): a head below 0 read the markers
 * before a candidate behind it made its marker (then its node), listed
 * that node and took it for a 0. The markers are read again after the
 * listing: its marker (-2) is there, and the head promotes.
 */
static void
test_negative_head_reads_the_markers_after_the_listing(void **state)
{
	struct election_params p;
	struct election *el;
	char *kids[] = { OURS, OTHER1_LATER };
	char *none[] = { "000000001234abcd_-1" };
	char *marks[] = { "000000001234abcd_-1", "00000000000000aa_-2" };
	struct el_action a;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.priority = -1;
	el = el_start(&p);
	hold_marks = 1;
	up_no_leader(el);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
	assert_int_equal(a.op, EL_OP_MARK);
	reply(el, EL_OP_MARK, ZOK);
	expect_op(el, EL_OP_CREATE, NULL);
	reply_create(el, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	reply_children(el, EL_OP_MARKS, none, 1);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply_children(el, EL_OP_MARKS, marks, 2);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/* Issue 19: every pause is answered, a pause of a paused one too. */
static void
test_pause_twice_answered_twice(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	up_no_leader(el);
	election_pause(el, 1);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_PAUSED);
	election_pause(el, 1);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_PAUSED);
	election_free(el);
}

/*
 * A priority is advertised twice: in the node's data, and by a marker
 * made before the node (E/priority first made as a parent); the marker
 * goes with the node when the candidate leaves the queue (pause).
 */
static void
test_priority_marker_made_before_the_node(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	int parents = 0;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.data = "d";
	p.priority = 7;
	el = el_start(&p);
	up_no_leader(el);
	a = next(el);
	while (a.type == EL_ACT_ZK && a.op == EL_OP_PARENT) {
		parents++;
		if (strcmp(a.path, E "/priority") == 0)
			parents += 100;
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
		a = next(el);
	}
	assert_true(parents > 100);
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_MARK);
	assert_string_equal(a.path, E "/priority/000000001234abcd_7");
	reply(el, EL_OP_MARK, ZOK);
	a = next(el);
	assert_int_equal(a.op, EL_OP_CREATE);
	assert_string_equal(a.data, "id=node1\ndata=d\npriority=7\n");
	reply_create(el, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	election_pause(el, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.nsub, 2);
	assert_string_equal(a.sub[0].path, CAND "/" OURS);
	assert_string_equal(a.sub[1].path, E "/priority/000000001234abcd_7");
	reply(el, EL_OP_RELEASE, ZOK);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_PAUSED);
	expect_none(el);
	/* A reload to another priority replaces the marker. */
	election_pause(el, 0);
	p.priority = -2;
	election_reconfigure(el, &p);
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_-2");
	election_free(el);
}

/*
 * Found by the simulator (-W -P -K, seed 22000326): a priority given by a
 * reload while the queue's parents were still being made skipped to
 * E/priority, whose own parent did not exist yet: NONODE for ever, and the
 * daemon never joined. The parents are made from the top, and a NONODE
 * (a tree deleted by hand) starts them again from the top.
 */
static void
test_priority_reload_before_the_parents_exist(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;

	(void)state;
	params_init(&p, 0, 0, 0);
	el = el_start(&p);
	up_no_leader(el);
	a = next(el);
	assert_int_equal(a.op, EL_OP_PARENT);
	assert_string_equal(a.path, "/zkelectd");
	p.priority = 5;
	election_reconfigure(el, &p);
	reply(el, EL_OP_PARENT, ZOK);
	a = next(el);
	assert_int_equal(a.op, EL_OP_PARENT);
	assert_string_equal(a.path, E);
	/* Deleted by hand meanwhile: from the top again. */
	reply(el, EL_OP_PARENT, ZNONODE);
	a = next(el);
	if (a.type == EL_ACT_NONE) {
		now = election_deadline(el);
		a = next(el);
	}
	assert_int_equal(a.op, EL_OP_PARENT);
	assert_string_equal(a.path, "/zkelectd");
	while (a.type == EL_ACT_ZK && a.op == EL_OP_PARENT) {
		reply(el, EL_OP_PARENT, ZOK);
		a = next(el);
	}
	assert_int_equal(a.op, EL_OP_MARK);
	election_free(el);
}

/*
 * A leader of priority 7 (its marker made before its node) resigns: the
 * release, with the marker, is the next action (not answered).
 */
static struct election *
prio7_resigns(void)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	char *kids[] = { OURS };

	el = start_marked(&p, 7);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	expect_op(el, EL_OP_ACK, NULL);
	reply(el, EL_OP_ACK, ZOK);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_string_equal(a.sub[a.nsub - 3].path,
	    E "/priority/000000001234abcd_7");
	assert_string_equal(a.sub[a.nsub - 2].path, CLAIM_OURS);
	assert_string_equal(a.sub[a.nsub - 1].path, E "/breadcrumb");
	return el;
}

/*
 * A leader of priority 7 resigns: its marker goes with its node, and is
 * not made again with its next node until another leader is seen, so
 * that the next head does not yield back to it.
 */
static void
test_resigned_marker_stays_away_until_another_leads(void **state)
{
	struct election *el;
	struct el_action a;
	char *after[] = { OTHER1_LATER, NEWER };

	(void)state;
	el = prio7_resigns();
	reply(el, EL_OP_RELEASE, ZOK);
	/* Back in the queue without its marker. */
	rejoin_as_newer(el, after, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_RESIGNED);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1_LATER);
	reply_get(el, EL_OP_WATCH_PRED, "", 0xaa, 110);
	/* E/leader's watch fired: the next leader is read, then the marker. */
	election_watch(el, 0, E "/leader");
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=node2\ndata=\nepoch=110\n", 0xaa, 120);
	expect_op(el, EL_OP_MARK, E "/priority/000000001234abcd_7");
	election_free(el);
}

/*
 * The requests a leader's release is preceded by after a lost reply,
 * answered as its own session left them, until op comes: never a release
 * before it.
 */
static struct el_action
reads_until_crumb(struct election *el, enum el_op op, const char *crumb)
{
	struct el_action a;
	int i;

	for (i = 0; i < 10; i++) {
		a = next(el);
		assert_int_equal(a.type, EL_ACT_ZK);
		if (a.op == op)
			return a;
		assert_int_not_equal(a.op, EL_OP_RELEASE);
		if (a.op == EL_OP_SYNC)
			reply(el, EL_OP_SYNC, ZOK);
		else if (a.op == EL_OP_LEADER)
			reply_get(el, EL_OP_LEADER, "id=node1\ndata=\nepoch=100\n",
			    SID, 100);
		else if (a.op == EL_OP_CLAIMS)
			answer_auto(el, EL_OP_CLAIMS);
		else if (a.op == EL_OP_WATCH_OWN)
			reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
		else if (a.op == EL_OP_BREADCRUMB && crumb == NULL)
			reply(el, EL_OP_BREADCRUMB, ZNONODE);
		else if (a.op == EL_OP_BREADCRUMB)
			reply_get(el, EL_OP_BREADCRUMB, crumb, 0, 101);
		else
			fail_msg("unexpected %s", election_op_name(a.op));
	}
	fail_msg("no %s", election_op_name(op));
	return a;
}

/* The same, E/breadcrumb not there. */
static struct el_action
reads_until(struct election *el, enum el_op op)
{
	return reads_until_crumb(el, op, NULL);
}

/*
 * Issue 19.4: the release multi (node and marker) of a resign fails with
 * CONNECTIONLOSS. It may have been applied or not: the marker is not
 * forgotten but deleted on its own (NONODE is fine), or the next head
 * would yield back to a marker left behind; and only after the release
 * has deleted our node again (issue 19's campaign, mutant 83), or a head
 * below 0 would take our node, marker gone, for a 0 and yield to it.
 */
static void
test_marker_of_a_lost_release_is_deleted(void **state)
{
	struct election *el;
	struct el_action a;
	int i;

	(void)state;
	el = prio7_resigns();
	election_session(el, EL_ZK_CONNECTING, SID, T_MS);
	reply(el, EL_OP_RELEASE, ZCONNECTIONLOSS);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	/*
	 * The release again, without the marker, which may be gone: our
	 * node first, so that no head sees it without its marker.
	 */
	a = reads_until(el, EL_OP_RELEASE);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_true(a.nsub > 0);
	for (i = 0; i < a.nsub; i++)
		assert_null(strstr(a.sub[i].path, "/priority/"));
	reply(el, EL_OP_RELEASE, ZOK);
	/* Then the marker, on its own (NONODE: the lost release took it). */
	a = reads_until(el, EL_OP_UNMARK);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, E "/priority/000000001234abcd_7");
	reply(el, EL_OP_UNMARK, ZNONODE);
	election_free(el);
}

/*
 * The seventh blind round's: an ack whose reply is lost may have been
 * applied, so its breadcrumb is ours from the moment it is sent. A leader
 * that then leaves (a pause) before acking again deletes it with its
 * release, or the successor would fence a leader that demoted cleanly.
 */
static void
test_ack_with_its_reply_lost_releases_the_breadcrumb(void **state)
{
	struct election *el = el_new_grace(0, 0, EL_GRACE_LEASE);
	struct el_action a;
	int i, crumb = 0;

	(void)state;
	join_alone(el, NULL);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_ACK);
	election_session(el, EL_ZK_CONNECTING, 0, 0);
	reply(el, EL_OP_ACK, ZCONNECTIONLOSS);
	election_pause(el, 1);
	expect_hook(el, HOOK_DEMOTE, "pause");
	election_hook_done(el, HOOK_DEMOTE, 1);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	/* The lost ack's breadcrumb: applied. */
	a = reads_until_crumb(el, EL_OP_RELEASE,
	    "id=node1\ndata=10.0.0.1:5432\nepoch=100\n");
	for (i = 0; i < a.nsub; i++)
		crumb |= strcmp(a.sub[i].path, E "/breadcrumb") == 0;
	assert_true(crumb);
	election_free(el);
}

#define HIGH "candidate-00000000000000bb_0000000009"

/* A child of E/priority came or went: the leader reads them again. */
static void
marks_changed(struct election *el, char *const *marks, int n)
{
	election_watch(el, 0, E "/priority");
	expect_op(el, EL_OP_MARKS, E "/priority");
	reply_children(el, EL_OP_MARKS, marks, n);
}

/* The leader's next look at the queue, answered with q. */
static void
queue_look(struct election *el, struct el_queue *q)
{
	struct el_action a = next(el);

	assert_int_equal(a.type, EL_ACT_QUEUE);
	election_queue(el, q);
}

/* A look at the queue that hands the leadership to HIGH. */
static void
queue_look_preempts(struct election *el, struct el_queue *q)
{
	struct el_action a;

	queue_look(el, q);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_PREEMPT);
	assert_string_equal(a.path, HIGH);
	assert_string_equal(a.data, "high");
}

/*
 * A leader of priority 0 with preempt_delay 2 s that the markers outrank:
 * it reads the queue at once.
 */
static struct election *
outranked_leader(char *const *marks, int n)
{
	struct election_params p;
	struct election *el;
	struct el_action a;

	params_init(&p, 0, 0, 0);
	p.preempt_delay_ms = 2000;
	el = el_start(&p);
	become_leader(el);
	hold_marks = 1;
	marks_changed(el, marks, n);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	assert_string_equal(a.path, CAND);
	return el;
}

/* The same, told by its first look (q) that HIGH outranks it. */
static struct election *
waiting_leader(char *const *marks, int n, struct el_queue *q)
{
	struct election *el = outranked_leader(marks, n);
	struct el_action a;

	election_queue(el, q);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_OUTRANKED);
	return el;
}

/*
 * Preemption is the core's: a leader (priority 0, preempt_delay 2 s)
 * that a marker outranks reads the queue at once and every 0.5 s; a
 * candidate of priority 5 seen with the same node for 2 s gets the
 * leadership by a switchover (demote reason preempted). A lower priority
 * never does, nor one whose node changed (its wait starts again).
 */
static void
test_preemption_decided_in_the_core(void **state)
{
	struct election *el;
	struct el_action a;
	char *names[] = { OURS, OTHER1_LATER, HIGH };
	char *datas[] = { "id=node1\ndata=\n", "id=low\ndata=\npriority=-1\n",
	    "id=high\ndata=\npriority=5\n" };
	char *kids[] = { OURS, OTHER1_LATER, HIGH };
	char *marks[] = { "00000000000000aa_-1", "00000000000000bb_5" };
	struct el_queue q = { 3, names, datas };
	int looks;

	(void)state;
	el = outranked_leader(marks, 2);
	/* One read at a time; the next one 0.5 s later. */
	expect_none(el);
	assert_int_equal(election_deadline(el) > now + 400, 1);
	/* Only a lower priority: nothing. */
	q.n = 2;
	election_queue(el, &q);
	expect_none(el);
	tick(el, 500);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	q.n = 3;
	election_queue(el, &q);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_OUTRANKED);
	assert_string_equal(a.data, "high");
	assert_int_equal(a.priority, 5);
	assert_int_equal(a.ms, 2000);
	/* Not before preempt_delay. */
	for (looks = 0; looks < 3; looks++) {
		tick(el, 500);
		queue_look(el, &q);
		expect_none(el);
	}
	tick(el, 500);
	queue_look_preempts(el, &q);
	/* The switchover: the node between goes, then the handoff. */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 3);
	a = next(el);
	assert_int_equal(a.op, EL_OP_SW_DELETE);
	assert_int_equal(a.nsub, 1);
	assert_string_equal(a.sub[0].path, CAND "/" OTHER1_LATER);
	election_free(el);
}

/*
 * A candidate whose priority a reload puts below ours, then back, starts
 * its wait again: a read that finds nobody above us forgets who did (a
 * tenth blind round's defect kept its old wait: a handover at once).
 */
static void
test_preemption_wait_starts_again_after_a_drop(void **state)
{
	struct election *el;
	struct el_action a;
	char *names[] = { OURS, HIGH };
	char *up[] = { "id=node1\ndata=\n", "id=high\ndata=\npriority=5\n" };
	char *down[] = { "id=node1\ndata=\n", "id=high\ndata=\n" };
	char *marks[] = { "00000000000000bb_5" };
	struct el_queue q = { 2, names, up };
	int looks;

	(void)state;
	el = waiting_leader(marks, 1, &q);
	/* Three reads of it below us, its marker not yet gone. */
	q.datas = down;
	for (looks = 0; looks < 4; looks++) {
		tick(el, 500);
		a = next(el);
		assert_int_equal(a.type, EL_ACT_QUEUE);
		if (looks == 3)
			q.datas = up;
		election_queue(el, &q);
		if (looks < 3)
			expect_none(el);
	}
	/* Above us again 2 s after it was first seen: a new wait. */
	a = next(el);
	assert_int_equal(a.type, EL_ACT_OUTRANKED);
	assert_int_equal(a.ms, 2000);
	election_free(el);
}

/*
 * Reading the markers again (after a reconnect, or a marker come or gone)
 * does not start the wait again: the leader keeps who outranks it while
 * outranking is not known, and hands over once the node has been seen
 * for preempt_delay (a twelfth blind round's C-3, mutant 157, forgot it
 * whenever outranking was not known: a leader whose connection blips more
 * often than preempt_delay never handed over).
 */
static void
test_preemption_wait_runs_on_while_the_markers_are_read(void **state)
{
	struct election *el;
	char *names[] = { OURS, HIGH };
	char *datas[] = { "id=node1\ndata=\n", "id=high\ndata=\npriority=5\n" };
	char *marks[] = { "00000000000000bb_5", "00000000000000cc_-1" };
	struct el_queue q = { 2, names, datas };
	int looks;

	(void)state;
	el = waiting_leader(marks, 1, &q);
	tick(el, 1000);
	marks_changed(el, marks, 2);
	/* The same wait, half over: not told again; due at 2 s. */
	for (looks = 0; looks < 2; looks++) {
		queue_look(el, &q);
		expect_none(el);
		tick(el, 500);
	}
	queue_look_preempts(el, &q);
	election_free(el);
}

/*
 * A leader of priority 0 that no marker outranks never reads the queue
 * (E/priority's listing, watched, tells it for one request); a marker
 * above it makes it read the queue, and it stops when nothing outranks
 * it again. A reconnect reads the markers again.
 */
static void
test_preemption_reads_the_queue_only_when_outranked(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	char *names[] = { OURS, HIGH };
	char *datas[] = { "id=node1\ndata=\n", "id=high\ndata=\npriority=5\n" };
	char *low[] = { "00000000000000aa_-1", "00000000000000cc_0" };
	char *high[] = { "00000000000000aa_-1", "00000000000000bb_5" };
	struct el_queue q = { 2, names, datas };
	int looks;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.preempt_delay_ms = 2000;
	el = el_start(&p);
	become_leader(el);
	hold_marks = 1;
	for (looks = 0; looks < 20; looks++) {
		expect_none(el);
		tick(el, 500);
	}
	/* A lower priority, and an equal one: still none. */
	marks_changed(el, low, 2);
	for (looks = 0; looks < 20; looks++) {
		expect_none(el);
		tick(el, 500);
	}
	/* One above ours: the queue is read at once, then every period. */
	marks_changed(el, high, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	election_queue(el, &q);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_OUTRANKED);
	tick(el, 500);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	election_queue(el, &q);
	/* It went: nothing read, and its wait is forgotten. */
	marks_changed(el, low, 1);
	for (looks = 0; looks < 20; looks++) {
		expect_none(el);
		tick(el, 500);
	}
	/* A reconnect: the markers are read again, then the queue. */
	election_session(el, EL_ZK_CONNECTING, SID, T_MS);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	a = reads_until(el, EL_OP_MARKS);
	reply_children(el, EL_OP_MARKS, high, 2);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	election_queue(el, &q);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_OUTRANKED);
	assert_int_equal(a.ms, 2000);
	election_free(el);
}

/*
 * Below 0 a leader is outranked by every candidate of priority 0, which
 * has no marker: once a reload puts it there, it reads the queue.
 */
static void
test_preemption_below_zero_reads_the_queue(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	int looks;

	(void)state;
	params_init(&p, 0, 0, 0);
	p.preempt_delay_ms = 2000;
	el = el_start(&p);
	become_leader(el);
	for (looks = 0; looks < 4; looks++) {
		expect_none(el);
		tick(el, 500);
	}
	p.priority = -1;
	election_reconfigure(el, &p);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_QUEUE);
	assert_string_equal(a.path, CAND);
	election_free(el);
}

/*
 * Found by the simulator's (top): new data (a priority reload) while the
 * create is in flight, then while a SET_DATA is in flight. Each time the
 * node is written again with what is current.
 */
static void
test_data_changed_in_flight_is_written_again(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;
	char *kids[] = { OTHER1, OURS };

	(void)state;
	session_up(el, SID);
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply(el, EL_OP_LEADER, ZNONODE);
	expect_op(el, EL_OP_LEADER_EXISTS, E "/leader");
	reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
	for (a = next(el); a.op == EL_OP_PARENT; a = next(el))
		reply(el, EL_OP_PARENT, ZNODEEXISTS);
	assert_int_equal(a.op, EL_OP_CREATE);
	election_set_data(el, "d2");
	reply_create(el, CAND "/" OURS);
	expect_op(el, EL_OP_WATCH_OWN, CAND "/" OURS);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	a = next(el);
	assert_int_equal(a.op, EL_OP_SET_DATA);
	assert_string_equal(a.sub[0].data, "id=node1\ndata=d2\n");
	election_set_data(el, "d3");
	reply(el, EL_OP_SET_DATA, ZOK);
	a = next(el);
	assert_int_equal(a.op, EL_OP_SET_DATA);
	assert_string_equal(a.sub[0].data, "id=node1\ndata=d3\n");
	reply(el, EL_OP_SET_DATA, ZOK);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 2);
	expect_op(el, EL_OP_WATCH_PRED, CAND "/" OTHER1);
	election_free(el);
}

/*
 * Found by the simulator's (answer): a leader of priority -2 preempted
 * (or resigning) kept its marker away, so the next head (-1) took it for
 * priority 0 and yielded back. Below 0 the marker is made again at once,
 * before the next node.
 */
static void
test_negative_priority_keeps_its_marker_after_a_handover(void **state)
{
	struct election_params p;
	struct election *el;
	struct el_action a;
	char *kids[] = { OURS };

	(void)state;
	el = start_marked(&p, -2);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	/* Below 0 it lists to see who is behind (nobody). */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_hook_done(el, HOOK_PROMOTE, 1);
	expect_op(el, EL_OP_ACK, NULL);
	reply(el, EL_OP_ACK, ZOK);
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	reply(el, EL_OP_RELEASE, ZOK);
	a = next(el);
	if (a.op == EL_OP_LEADER_EXISTS) {
		reply(el, EL_OP_LEADER_EXISTS, ZNONODE);
		a = next(el);
	}
	assert_int_equal(a.type, EL_ACT_ZK);
	assert_int_equal(a.op, EL_OP_MARK);
	assert_string_equal(a.path, E "/priority/000000001234abcd_-2");
	election_free(el);
}

/*
 * A switchover: the nodes between ours and the target's are deleted (their
 * owners rejoin at the back), then the ordered handoff, reason switchover.
 */
static void
test_switchover_deletes_those_between_then_hands_over(void **state)
{
	struct election *el = el_new(0, 0);
	char *three[] = { OURS, "candidate-00000000000000cc_0000000005",
	    "candidate-00000000000000dd_0000000006" };
	char *two[] = { OURS, "candidate-00000000000000dd_0000000006" };
	struct el_action a;

	(void)state;
	assert_int_equal(election_switchover(el, three[2], "switchover"), -1);
	become_leader(el);
	assert_int_equal(election_switchover(el, OURS, "switchover"), -1);
	assert_int_equal(election_switchover(el, "junk", "switchover"), -1);
	assert_int_equal(election_switchover(el, three[2], "switchover"), 0);
	assert_int_equal(election_switchover(el, three[1], "switchover"), -1);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 3);
	a = next(el);
	assert_int_equal(a.op, EL_OP_SW_DELETE);
	assert_int_equal(a.nsub, 1);
	assert_int_equal(a.sub[0].kind, ZK_MOP_DELETE);
	assert_string_equal(a.sub[0].path, CAND "/" "candidate-"
	    "00000000000000cc_0000000005");
	reply(el, EL_OP_SW_DELETE, ZOK);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, two, 2);
	expect_hook(el, HOOK_DEMOTE, "switchover");
	assert_null(election_switchover_failed(el));
	election_free(el);

	/* The target gone: given up, still leading. */
	el = el_new(0, 0);
	become_leader(el);
	assert_int_equal(election_switchover(el, three[2], "switchover"), 0);
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, three, 2);
	expect_none(el);
	assert_string_equal(election_switchover_failed(el), "target-gone");
	assert_null(election_switchover_failed(el));
	assert_int_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

/* E/leader deleted by hand while we lead: written again. */
static void
test_leader_node_rewritten(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);
	election_watch(el, 1, E "/leader");
	expect_op(el, EL_OP_LEADER_EXISTS, NULL);
	a = next(el);
	assert_int_equal(a.op, EL_OP_ACK);
	assert_int_equal(a.sub[2].kind, ZK_MOP_CREATE_EPHEMERAL);
	election_free(el);
}

/* Found by the simulator: a CLAIM whose reply was lost may be applied. */
static void
test_lost_claim_reply_is_read_back(void **state)
{
	struct election *el = el_new(0, 0);
	char *kids[] = { OURS };
	char *claims[] = { CLAIM_OURS6 };

	(void)state;
	join_alone(el, NULL);
	hold_claims = 1;
	expect_op(el, EL_OP_CLAIM, NULL);
	reply(el, EL_OP_CLAIM, ZCONNECTIONLOSS);
	election_session(el, EL_ZK_CONNECTING, 0, T_MS);
	up_no_leader(el);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	expect_op(el, EL_OP_LIST, NULL);
	reply_list(el, kids, 1);
	/*
	 * It was applied: the listing of E/claims finds ours (by our session)
	 * first, and no second one is asked for.
	 */
	expect_op(el, EL_OP_CLAIMS, CLAIMS);
	reply_children(el, EL_OP_CLAIMS, claims, 1);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply(el, EL_OP_BREADCRUMB, ZNONODE);
	expect_hook(el, HOOK_PROMOTE, "elected");
	election_free(el);
}

/* Found by the simulator: one sync after a freeze is no lease yet. */
static void
test_one_sync_after_a_freeze_is_no_lease(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	struct el_action a;

	(void)state;
	become_leader(el);
	hold_syncs = 1;
	tick(el, T_MS + 1);
	expect_hook(el, HOOK_DEMOTE, "lease-lost");
	election_hook_done(el, HOOK_DEMOTE, 1);
	expect_op(el, EL_OP_SYNC, NULL);
	reply(el, EL_OP_SYNC, ZOK);
	expect_op(el, EL_OP_LEADER, NULL);
	reply_get(el, EL_OP_LEADER, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID, 100);
	expect_op(el, EL_OP_WATCH_OWN, NULL);
	reply_get(el, EL_OP_WATCH_OWN, "", SID, 100);
	{
		char *kids[] = { OURS };

		expect_op(el, EL_OP_LIST, NULL);
		reply_list(el, kids, 1);
	}
	/* The quorum may not have heard of that sync yet: no promote. */
	expect_none(el);
	election_view(el, &v);
	assert_true(election_deadline(el) >= now + T_MS / 4 - 1);
	now = election_deadline(el);
	expect_op(el, EL_OP_SYNC, NULL);
	reply(el, EL_OP_SYNC, ZOK);
	expect_op(el, EL_OP_BREADCRUMB, NULL);
	reply_get(el, EL_OP_BREADCRUMB, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID,
	    101);
	a = next(el);
	assert_int_equal(a.type, EL_ACT_HOOK);
	assert_int_equal(a.hook, HOOK_PROMOTE);
	election_free(el);
}

/*
 * Found by the simulator with tickTime modelled: a sync held up in the
 * network answers late, a second one right after it; the server is cut
 * off before it reports either. The lease may rest only on a touch the
 * quorum is known to have heard of: an earlier confirmation, answered a
 * report lag (tick/2) before a later one was sent on the same connection.
 */
static void
test_late_sync_does_not_stretch_the_lease(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	int64_t ack_sent, sync_sent;

	(void)state;
	become_leader(el);
	ack_sent = now;
	hold_syncs = 1;
	/* The keepalive goes a report lag after the ack, and answers late. */
	tick(el, T_MS / 4);
	expect_op(el, EL_OP_SYNC, NULL);
	sync_sent = now;
	tick(el, 1000);
	reply(el, EL_OP_SYNC, ZOK);
	election_view(el, &v);
	assert_int_equal(v.lease_end, ack_sent + T_MS);
	/* The next one goes a report lag after that reply, answers at once. */
	assert_int_equal(election_deadline(el), now + T_MS / 4);
	tick(el, T_MS / 4);
	expect_op(el, EL_OP_SYNC, NULL);
	reply(el, EL_OP_SYNC, ZOK);
	election_view(el, &v);
	/* It proves the late sync's touch, from when it was sent. */
	assert_int_equal(v.lease_end, sync_sent + T_MS);
	election_free(el);
}

/*
 * Found by the simulator with tickTime modelled: a former leader read its
 * own breadcrumb from a server behind the quorum, where the successor had
 * already written its own, and its release deleted the successor's: a
 * later crash of the successor then went unfenced. The release deletes
 * the version it read (or wrote) only.
 */
static void
test_release_deletes_only_the_breadcrumb_it_knows(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	become_leader(el);		/* the ack created it: version 0 */
	election_set_data(el, "10.0.0.9:5432");
	a = next(el);
	assert_int_equal(a.op, EL_OP_SET_DATA);
	assert_string_equal(a.sub[2].path, E "/breadcrumb");
	reply(el, EL_OP_SET_DATA, ZOK);	/* version 1 */
	assert_int_equal(election_resign(el), 0);
	expect_hook(el, HOOK_DEMOTE, "resign");
	election_hook_done(el, HOOK_DEMOTE, 1);
	a = next(el);
	assert_int_equal(a.op, EL_OP_RELEASE);
	assert_int_equal(a.sub[a.nsub - 1].kind, ZK_MOP_DELETE);
	assert_string_equal(a.sub[a.nsub - 1].path, E "/breadcrumb");
	assert_int_equal(a.sub[a.nsub - 1].version, 1);
	assert_int_equal(a.sub[0].version, -1);
	/* Someone wrote it since: the release fails and reads it again. */
	reply(el, EL_OP_RELEASE, ZBADVERSION);
	tick(el, 1000);
	expect_op(el, EL_OP_LEADER, E "/leader");
	reply_get(el, EL_OP_LEADER, "id=node1\ndata=10.0.0.1:5432\nepoch=100\n", SID, 100);
	expect_op(el, EL_OP_BREADCRUMB, E "/breadcrumb");
	reply_get(el, EL_OP_BREADCRUMB, "id=node2\ndata=\nepoch=300\n", 0xbb,
	    301);
	a = next(el);
	while (a.type == EL_ACT_ZK && a.op != EL_OP_RELEASE) {
		reply_get(el, a.op, "", SID, 100);
		a = next(el);
	}
	assert_int_equal(a.op, EL_OP_RELEASE);
	/* Not ours: it stays. */
	assert_string_not_equal(a.sub[1].path, E "/breadcrumb");
	election_free(el);
}

/*
 * A new session's lease runs from when it was asked for: the quorum made
 * it later, with its timeout from then. A session heard of only after a
 * freeze gets none until confirmations pair (seed 71277, k=2000).
 */
static void
test_new_session_lease_from_its_request(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	int64_t asked = now;

	(void)state;
	election_session_requested(el);
	tick(el, 30);
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_view(el, &v);
	assert_int_equal(v.lease_end, asked + T_MS);
	election_free(el);

	el = el_new(0, 0);
	asked = now;
	election_session_requested(el);
	tick(el, T_MS + 1);		/* frozen before it heard back */
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_clock(el, now);
	election_view(el, &v);
	assert_true(v.lease_end <= now);
	assert_int_not_equal(election_role(el), ROLE_LEADER);
	election_free(el);
}

/*
 * A sync the library refuses at once (its session just expired, the news
 * still on its way) is not sent again at once: that was a busy loop the
 * daemon ended with "election made no progress".
 */
static void
test_refused_sync_waits(void **state)
{
	struct election *el = el_new(0, 0);
	struct el_action a;

	(void)state;
	hold_syncs = 1;
	election_session(el, EL_ZK_CONNECTED, SID, T_MS);
	election_clock(el, now);
	next_action(el, &a);
	assert_int_equal(a.op, EL_OP_SYNC);
	reply(el, EL_OP_SYNC, ZINVALIDSTATE);
	next_action(el, &a);
	assert_int_not_equal(a.op, EL_OP_SYNC);
	assert_true(election_deadline(el) >= now + 1000 - 1);
	election_free(el);
}

/*
 * A promote starts only with T/8 of lease before its demote point: one
 * started with less would be killed as it starts (seen in the flapping
 * connection test, where no confirmation could pair for seconds).
 */
static void
test_no_promote_on_a_lease_nearly_spent(void **state)
{
	struct election *el = el_new(0, 0);
	struct election_view v;
	char *kids[] = { OURS };

	(void)state;
	join(el, SID, CAND "/" OURS);
	election_view(el, &v);
	hold_syncs = 1;
	/* Just short of T/8 before the demote point, nothing confirmed since. */
	now = v.lease_end - v.demote_timeout_ms - 100 - T_MS / 8;
	election_clock(el, now);
	expect_op(el, EL_OP_SYNC, NULL);	/* it hangs */
	expect_op(el, EL_OP_LIST, CAND);
	reply_list(el, kids, 1);
	expect_none(el);
	assert_int_not_equal(election_role(el), ROLE_PROMOTING);
	election_free(el);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elected),
		cmocka_unit_test(test_down_from_a_demote_to_a_promote),
		cmocka_unit_test(test_state_moves_are_reported),
		cmocka_unit_test(test_state_table),
		cmocka_unit_test(test_state_stopped_is_the_end),
		cmocka_unit_test(test_state_unlisted_move_is_reported),
		cmocka_unit_test(test_follower_watches_predecessor_only),
		cmocka_unit_test(test_settled_follower_sends_only_paced_syncs),
		cmocka_unit_test(test_release_counts_the_version_its_ack_wrote),
		cmocka_unit_test(
		    test_a_read_answered_between_a_write_and_its_reply_counts),
		cmocka_unit_test(test_unprepared_successor_claims_then_promotes),
		cmocka_unit_test(test_head_promotes_only_on_a_watched_claim),
		cmocka_unit_test(test_heir_promotes_on_the_release_alone),
		cmocka_unit_test(test_heir_first_before_the_release_fences_only_what_is_left),
		cmocka_unit_test(test_heir_whose_claim_was_deleted_claims_again),
		cmocka_unit_test(
		    test_heir_without_its_own_claim_watched_lists_again),
		cmocka_unit_test(test_heir_fences_on_expiry_after_one_read),
		cmocka_unit_test(
		    test_heir_reads_a_breadcrumb_written_after_its_read),
		cmocka_unit_test(test_crumb_deleted_before_our_claim_was_first_is_read_again),
		cmocka_unit_test(test_stale_prepared_claim_is_released),
		cmocka_unit_test(test_heir_rereads_markers_when_one_comes),
		cmocka_unit_test(
		    test_parents_made_from_the_top_when_their_parent_is_gone),
		cmocka_unit_test(
		    test_missing_priority_and_claims_made_when_needed),
		cmocka_unit_test(test_second_known_from_the_leader),
		cmocka_unit_test(test_leader_node_trusted_only_from_those_ahead),
		cmocka_unit_test(
		    test_switchover_deletes_those_between_then_hands_over),
		cmocka_unit_test(test_predecessor_new_data_rewatched),
		cmocka_unit_test(test_predecessor_vanished_before_watch),
		cmocka_unit_test(test_lost_create_reply_adopts),
		cmocka_unit_test(test_lost_create_reply_not_created),
		cmocka_unit_test(
		    test_parents_that_do_not_stay_are_retried_after_a_pause),
		cmocka_unit_test(test_session_expiry_while_leader),
		cmocka_unit_test(test_disconnect_demotes_at_once),
		cmocka_unit_test(
		    test_leader_whose_claim_was_deleted_claims_first_again),
		cmocka_unit_test(
		    test_leader_acks_again_only_on_the_first_claim),
		cmocka_unit_test(test_lease_expired_relearns_before_promoting),
		cmocka_unit_test(test_reads_do_not_refresh_the_lease),
		cmocka_unit_test(test_disconnect_grace),
		cmocka_unit_test(test_grace_capped_by_the_lease),
		cmocka_unit_test(test_disconnect_grace_reloaded_during_a_disconnect),
		cmocka_unit_test(test_reconnect_renews_the_lease),
		cmocka_unit_test(test_reconnect_lease_counts_a_refused_request),
		cmocka_unit_test(test_readonly_reconnect_is_no_lease),
		cmocka_unit_test(test_ride_through_window),
		cmocka_unit_test(test_timeout_below_two_ticks_stays_out),
		cmocka_unit_test(test_reload_without_lease_room_hands_over),
		cmocka_unit_test(test_reload_raising_demote_timeout_keeps_the_lease_end),
		cmocka_unit_test(test_reload_shortening_demote_timeout_at_its_point_leads_on),
		cmocka_unit_test(test_woken_past_demote_point_sends_nothing_first),
		cmocka_unit_test(test_promote_failure),
		cmocka_unit_test(test_run_exited_resigns_and_backs_off),
		cmocka_unit_test(test_stop_is_an_ordered_handoff),
		cmocka_unit_test(test_stop_while_disconnected_ends_without_the_release),
		cmocka_unit_test(test_demote_waits_for_promote),
		cmocka_unit_test(test_waits_for_old_ack),
		cmocka_unit_test(test_fence_after_unclean_leader),
		cmocka_unit_test(test_fence_killed_at_the_demote_point_then_renewed),
		cmocka_unit_test(test_fence_killed_renewed_while_it_dies),
		cmocka_unit_test(test_pause_refused_three_times_answers_after_the_restart),
		cmocka_unit_test(test_resign_refused_three_times_answers_after_the_restart),
		cmocka_unit_test(test_release_lost_twice_and_refused_once_goes_again),
		cmocka_unit_test(test_replaced_session_sends_its_own_keepalive),
		cmocka_unit_test(test_promote_killed_for_a_disconnect_demotes_after_the_reconnect),
		cmocka_unit_test(test_renewal_read_after_the_demote_point),
		cmocka_unit_test(test_promote_killed_then_renewed_still_demotes),
		cmocka_unit_test(test_promote_killed_at_the_demote_point_keeps_the_node),
		cmocka_unit_test(test_own_node_deleted_while_leader),
		cmocka_unit_test(test_release_without_node_or_claim_leaves_the_breadcrumb),
		cmocka_unit_test(test_resign_rejoins_at_back),
		cmocka_unit_test(
		    test_resign_answered_when_unhealthy_before_the_rejoin),
		cmocka_unit_test(
		 test_release_refused_for_a_version_reads_and_goes_again_at_once),
		cmocka_unit_test(test_new_data_applies_at_once),
		cmocka_unit_test(test_resign_then_expiry_rejoins_and_answers),
		cmocka_unit_test(test_release_leaves_an_old_leaderships_breadcrumb),
		cmocka_unit_test(test_promote_failed_then_expiry_rejoins),
		cmocka_unit_test(test_pause_during_create_releases_it),
		cmocka_unit_test(test_pause_during_a_demote_without_release_waits_for_it),
		cmocka_unit_test(test_pause_after_lost_create_deletes_orphan),
		cmocka_unit_test(test_pause_after_lost_create_without_parent),
		cmocka_unit_test(test_orphan_leader_node_is_deleted),
		cmocka_unit_test(test_check_fall_counts_failures_in_a_row),
		cmocka_unit_test(test_check_shares_the_slot),
		cmocka_unit_test(test_check_removed_while_it_runs),
		cmocka_unit_test(test_check_interval_reload_applies_at_once),
		cmocka_unit_test(
		    test_past_the_demote_point_nothing_before_the_demote),
		cmocka_unit_test(test_fence_during_expiry_counts_for_nothing),
		cmocka_unit_test(test_demote_carries_the_lost_epoch),
		cmocka_unit_test(test_auth_failure_backs_off),
		cmocka_unit_test(test_demote_timeout_clamped_to_negotiated),
		cmocka_unit_test(test_promote_cut_short_at_the_demote_point),
		cmocka_unit_test(test_pause_resume_during_promote),
		cmocka_unit_test(test_resign_then_pause_is_answered),
		cmocka_unit_test(test_claim_waits_for_the_previous_holder),
		cmocka_unit_test(test_leader_node_rewritten),
		cmocka_unit_test(test_lost_claim_reply_is_read_back),
		cmocka_unit_test(test_one_sync_after_a_freeze_is_no_lease),
		cmocka_unit_test(test_late_sync_does_not_stretch_the_lease),
		cmocka_unit_test(test_release_deletes_only_the_breadcrumb_it_knows),
		cmocka_unit_test(test_new_session_lease_from_its_request),
		cmocka_unit_test(test_refused_sync_waits),
		cmocka_unit_test(test_no_promote_on_a_lease_nearly_spent),
		cmocka_unit_test(test_head_yields_once_to_a_higher_priority),
		cmocka_unit_test(test_priority_marker_made_before_the_node),
		cmocka_unit_test(test_priority_reload_before_the_parents_exist),
		cmocka_unit_test(
		    test_resigned_marker_stays_away_until_another_leads),
		cmocka_unit_test(test_marker_of_a_lost_release_is_deleted),
		cmocka_unit_test(test_ack_with_its_reply_lost_releases_the_breadcrumb),
		cmocka_unit_test(
		    test_session_of_two_markers_counts_at_the_lower),
		cmocka_unit_test(test_priority_reload_makes_the_new_marker_first),
		cmocka_unit_test(test_marker_deleted_by_hand_is_made_again),
		cmocka_unit_test(
		    test_marker_deleted_by_hand_during_a_reload_is_made_again),
		cmocka_unit_test(test_preemption_decided_in_the_core),
		cmocka_unit_test(test_preemption_wait_starts_again_after_a_drop),
		cmocka_unit_test(
		    test_preemption_wait_runs_on_while_the_markers_are_read),
		cmocka_unit_test(test_preemption_reads_the_queue_only_when_outranked),
		cmocka_unit_test(test_preemption_below_zero_reads_the_queue),
		cmocka_unit_test(test_head_keeps_its_place_before_a_lower_priority),
		cmocka_unit_test(test_pause_twice_answered_twice),
		cmocka_unit_test(
		    test_negative_head_reads_the_markers_after_the_listing),
		cmocka_unit_test(test_data_changed_in_flight_is_written_again),
		cmocka_unit_test(
		    test_negative_priority_keeps_its_marker_after_a_handover),
	};

	return cmocka_run_group_tests_name("election", tests, NULL, NULL);
}
