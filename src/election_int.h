/*
 * The election's internal state, shared by election.c (the facts and
 * their upkeep), election_time.c (the clock: lease, keepalive, grace,
 * health schedule), election_reply.c and election_event.c (what ZooKeeper,
 * hooks and operators report) and election_next.c (the decisions).
 */
#ifndef ZKELECTD_ELECTION_INT_H
#define ZKELECTD_ELECTION_INT_H

#include "candidate.h"
#include "election.h"

#define EL_PREFIX CANDIDATE_NAME_PREFIX
#define EL_RETRY_MS 1000
#define EL_RESTART_MAX_MS 30000
/* Room for the process group to be seen gone after the demote's SIGKILL. */
#define EL_LEASE_MARGIN_MS 100
/* A check killed to free the slot for a promote: SIGTERM, then SIGKILL. */
#define EL_CANCEL_GRACE_MS 100
/*
 * ZooKeeper's default bounds of the session timeout are 2 and 20 ticks;
 * below 2 ticks (minSessionTimeout set lower) the daemon does not lead.
 */
#define EL_MIN_TICKS 2
/* Confirmations kept to pair a new one with (see el_confirmed()). */
#define EL_CONF_MAX 16
/* A promote or fence starts only with T/8 of lease before the demote. */
#define EL_PROMOTE_ROOM_DIV 8
/*
 * A keepalive sync goes a report lag after the last confirmation, when it
 * can renew the lease, but no more than this many per session timeout.
 */
#define EL_SYNCS_PER_T 10

/*
 * What a write of ours does to E/breadcrumb, counted when its reply comes
 * (not when it went: a read answered meanwhile saw it before our write).
 */
#define EL_CRUMB_NONE	0
#define EL_CRUMB_SET	1	/* its version goes up by one */
#define EL_CRUMB_CREATE	2	/* made: version 0 */

/*
 * A build with EL_MUTANTS puts one old defect back, the one numbered by
 * el_mutant (ZKELECT_MUTANT in the environment): 1 reads refresh the
 * lease, 2 a release cut short by expiry is forgotten, 3 a create in
 * flight survives pause, 4 an orphan E/leader stays, 5 checks run beside
 * other hooks, 6 a fence counts across sessions, 7 a demote takes the new
 * node's epoch, 8 no demote budget before the lease ends, 9 promotes on
 * facts older than the lease, 10 auth failures restart at once, 11
 * adoption lists without a sync, 12 no claim (E/claims), 13 a claim's
 * create whose reply was lost is taken as not made, 14 one confirmation alone renews the
 * lease, 15 a predecessor's deletion makes us first wherever we stood,
 * 16 any leader makes its follower's predecessor the head, 17 E/leader's
 * watch is not set again after its deletion, 18 a breadcrumb view no
 * watch keeps current is trusted for a claim and a promote, 19 a release deletes a breadcrumb of any
 * version, 20 a new session's lease runs from when it is heard of, not
 * from when it was asked for, 21 a create that finds no parent retries at
 * once, 22 E/leader of any session is shown, 23 a head yields to a
 * higher priority however often it has yielded, 24 a read-only connection
 * renews the lease as a reconnect does, 25 a reconnect's lease runs from
 * when it is heard of, not from the last reply before it was asked for,
 * 26 the lease rests on a confirmation's reply time, not its send time,
 * 27 the report lag is subtracted where it must be added (confirmations
 * closer than it pair), 28 a promote's room is measured to the lease's
 * end, not to the demote point (26-28: the simulator's,
 * tests/sim/seeds.txt), 30 a resumed leader does not check that its node
 * and claim are still its own, 31 a resumed daemon that was not leading
 * never ends its checks nor demotes at its lease's demote point, 32 a
 * re-opened session's lease is not renewed by its re-opening, 33 a
 * resumed session does not look for its priority markers (one made for a
 * priority a reload changed since stays, and heads yield to it for good;
 * the simulator's, -W -P -L -R). Issue 19's
 * (40 on, each caught by a unit test):
 * 40 a release whose reply was lost forgets
 * the priority marker it may have left, 41 a leader preempts to the best
 * of the others even below its own priority, 42 a head yields to any
 * marked session behind it, whatever its priority, 43 a switchover
 * deletes the target's node with those before it, 44 a pause of a
 * candidate already paused is never answered, 45 a check that a reload
 * took away while it ran still counts, 46 new data (or priority) while a
 * create is in flight is never written to the node it made, 47 new data
 * while a SET_DATA is in flight is never written, 48 a leader of a
 * priority below 0 that hands over keeps its marker away (and so counts
 * as 0 to a head below it, which yields back), 49 a head below 0 takes a
 * listed node whose marker came after its read of the markers for a 0;
 * 60 (issue 21) a prepared claim is taken for the right to lead: the
 * heir promotes once first, without the release (the claim before its
 * own, E/leader).
 * 50 a leader that reads the queue only while a marker outranks it does
 * not read the markers again when one comes or goes (it keeps the ones
 * it knew, and a higher priority that joins later never leads).
 * 70 (issue 20) a promote is reported as a leadership from the head on,
 * a move the transition table does not have (election.c's header).
 * 71 (the 1,000,000-schedule campaign) a release deletes a breadcrumb
 * that names the epoch we last led with after that leadership was
 * released or its session replaced (a stale read of it passes the
 * version check once a successor made its own, at version 0 again).
 * Retired with 100: its guard covers this case too (crumb_mine stays as
 * a second guard, which no test can tell from none).
 * 86 (the campaign again) a promote trusts a view of the breadcrumb from
 * before our claim was first: a deletion notified late by a server behind
 * the quorum hides the breadcrumb a later leader wrote, and a crashed
 * leader goes unfenced.
 * 94 (a blind round's sweep) a restart ignores that the claim its session
 * file names is gone (a crash in a promote's first moments, before the
 * file says it began, and the claim deleted by hand since).
 * 95 (a blind round) a switchover hands over once its delete of the nodes
 * between is answered, whatever the answer (a lost reply, a node gone
 * first), without listing the queue again: one of the nodes between
 * leads, not the target. The simulator finds it ((sw)'s next promote).
 * 96 (a blind round) a reconnection keeps the disconnect_grace of the
 * disconnection before: a second one demotes when the first's grace ends.
 * The simulator finds it (AV counts the grace from the last disconnect).
 * 97 (a blind round) a check in a demote's way gets the SIGTERM grace
 * meant for one in a promote's way, taken from the demote's budget. The
 * simulator finds it ((g): no grace past the demote point).
 * 98 a resumed leader does not name the claim it led on (its file's):
 * a crash in its demote after that claim was deleted by hand leaves the
 * next restart nothing to demote for.
 * 99 (a fresh sweep) the view gives the session file the node's epoch for
 * a leader, 0 once its node is deleted by hand: a crash before the demote
 * resumes a leader whose demote names epoch 0.
 * 100 (the campaign) a release deletes the breadcrumb it read as its own
 * without the node or the claim it was written under: a read made before
 * a long stall passes the version check once a successor made its own,
 * at version 0 again, after the administrator deleted both.
 * 101 (a blind round) a pause is answered before its release is done:
 * the daemon still owns its node when it says it left the election.
 * 102 (a blind round) a passing check does not end a run of failures:
 * check_fall failures that are not in a row make the daemon unhealthy.
 * 103-105 (the simulator's (idle)) a follower re-arms E/leader after
 * every keepalive sync; a leader reads the queue without its pause;
 * keepalive syncs go twice as often. 106 (a blind round) the breadcrumb's
 * version is not counted up after our write of it: the release is
 * refused, read again and sent again. 107 (a blind round) the release
 * deletes the breadcrumb before its claim: the heir reads it again
 * before it promotes. 108 (a mechanical mutant) the heir never prepares
 * its claim. 109 (a blind round) a resume's startup demote stops naming
 * the claim its session file named; 110 (a blind round) a stop ends while
 * a resume's startup demote waits for a check to be killed (retired:
 * since 143's fix nothing at all goes while that demote waits, so the
 * stop's own guard is a second line no test can tell from none).
 * 111 (a blind round) a fence killed at the demote point leaves its lost
 * contact behind when it ends without a promote: the next promote, once
 * the lease is renewed, demotes at once.
 * 112-116 (a fourth blind round) a switchover's delete of the nodes
 * between answered NONODE taken for its target gone (given up,
 * "target-gone", while the target stands); a switchover's handoff whose
 * demote is told "resign", not "switchover" or "preempted"; a release
 * that fails forgets that the breadcrumb is ours, so its retry leaves it
 * and the successor fences a leader that demoted cleanly. 115 (the same
 * round) a resumed leader does not know the breadcrumb is its own: its
 * release leaves it, and the successor fences a leader that demoted
 * cleanly. 116 (the same round) "lease-lost" only for a promoted leader,
 * not during a promote: a renewal read before the killed promote is
 * reaped lets the daemon lead on an application whose promote was killed.
 * 117 (the campaign on the tied faults) a pause whose release was refused
 * three times is answered before the session that owns the node is
 * replaced. 118 (the same) a reconnection read before a promote killed
 * for the lost contact is reaped clears that loss: the daemon leads on
 * an application whose promote was killed.
 * 124-126 (a fifth blind round) a resume keeps the start's demote (every
 * resumed leader demotes and promotes again); a reload computes the
 * lease's figures before it stores the new tick_time and demote_timeout;
 * a pause is answered while a demote that no release follows still runs.
 * 127 (the timing reloads of the simulator that found 125) a reload that
 * raises hooks.demote_timeout past what the lease has left demotes at once
 * with the whole new budget: the hook may run past the lease's end.
 * 128, 129 (a sixth blind round) the preemption's wait follows the
 * outranking daemon's id, not its node (one that left and joined again
 * keeps its old wait); the marker's hold after a resign or a switchover
 * ignored (the resigner's marker made again as it rejoins); 130 a demote
 * started late given what is left of the lease without the margin; 131
 * `resigned` answered at a listing before the resign's release is done.
 * 132-135 (a seventh blind round) a promote the daemon killed itself
 * taken for a failed one (its node given away, a backoff); a reloaded
 * disconnect_grace counted from the reload, not the disconnection (133),
 * or not applied to a grace under way (134, the core before it); an
 * ack's breadcrumb taken for ours only once its reply came (a lost reply
 * leaves it behind at the release: a needless fence).
 * 136 (an eighth blind round) a stop whose release cannot be sent waits
 * for a reconnection instead of ending: with ZooKeeper down, a stop hangs
 * until systemd kills the daemon. 137 (the same round) a fence that
 * failed of itself taken for a killed one: run again at once, in a loop
 * that keeps the head's place (no leader while it fails). 138 (the
 * same round) a keepalive in flight kept across a session replaced
 * while connected (a release refused three times): no keepalive ever
 * again. 139 (the same round) a re-exec's unhealthy verdict kept with no
 * check configured: out of the election until a reload. 140 (found
 * by the model of 138's path) `resigned` answered before the live
 * session that still owns the node is replaced (117's for a pause).
 * 141-143 (the campaign on 7aa5e9e) a server's refusal (NOAUTH) not
 * taken for an answer before a reconnect: the lease rests on an older
 * request, a needless demote; a reload's shorter demote_timeout leaves
 * the lease-lost decision taken at the same moment: a needless demote; a
 * resume's startup demote lets requests go while the check it kills is
 * reaped: a SET_DATA past the demote point. 144 (a ninth blind round's,
 * found once (i) checked fences too) a fence on a view of the breadcrumb
 * from before the release that deleted it: a clean leader fenced.
 * 145-147 (a tenth blind round's, found by only a few of `make check`'s
 * schedules: kept as mutants so that they stay found) a renewal takes
 * back any lost contact, not only lease-lost (a leader past its
 * disconnect_grace leads on); a reload's grace applied without clearing
 * the one under way; the claims' relist flag never cleared (a second
 * stale claim ahead is waited on for good). 148 (the same round's miss,
 * found once (prio) checked the yield's other half) a node behind the
 * head without a marker counted at the head's own priority, not 0: a
 * head below 0 promotes over the 0s behind it. The same round's other
 * misses, each found once a check was added: 149 ((prio): a read showing
 * an outranker not above starts its wait again) a queue read that finds
 * nobody above keeps the outranker seen before and its old wait; 150
 * ((crumb): the breadcrumb compared with E/leader) a leader's new data
 * written to E/leader but not to its breadcrumb: a later fence gets the
 * old data; 151 ((RH)) a resumed session's claim forces the startup
 * demote, first or not: an heir never leader demotes; 152 ((rel) beside
 * the claim from before the ack) a claim of sequence 0 does not guard its
 * breadcrumb: a first leader whose node was deleted by hand leaves it,
 * and is fenced after a clean demote. An eleventh blind round's misses:
 * 153 ((prio) at a yield) a session listed with two markers counted at
 * the higher, not the lower: a head yields to a daemon lowered below it;
 * 154 ((rel) given up) a release's lost reply counted as one of its three
 * attempts: a release lost twice and refused once gives up and leaves its
 * breadcrumb; 155 ((health)'s pace) a reload moves the planned check by
 * old - new, not new - old: a shorter interval checks later; 156 ((rel)
 * after a re-exec) a resumed leader takes the claim its promote began on
 * for the one its breadcrumb was written under: acked on another, it
 * releases without the breadcrumb; a twelfth blind round's: 157 ((prio)'s
 * wait runs on) the outranker forgotten whenever outranking is not known
 * yes: every reconnection starts the preempt_delay wait again; 158 ((rel)
 * a marker never held) the release deletes our marker while unsure it
 * exists: refused NONODE until the session is replaced; a thirteenth's:
 * 159 ((undo)) a fence killed at the demote point ends as a failed one,
 * the state leading: a demote with nothing to undo, or an ack with no
 * promote; 160 ((resign)) an unhealthy daemon's resign waits for a rejoin
 * that never comes; 161 (unit tests only) a release after a lost create
 * lists E/candidates without the connection's sync; 162 ((rel) told
 * gone) our marker deleted by hand while any UNMARK is in flight taken
 * for that UNMARK's deletion, not only while one of it is; 163 ((i), the
 * breadcrumb written by hand) a change of the breadcrumb notified only
 * re-arms its watch: a decision before the read's reply takes the old
 * view (a promote with no fence, a fence of the old epoch).
 * A fourteenth's: 164 ((room)) the promote's room dropped: a head starts
 * its promote with only ms left before its demote point, killed as it
 * starts; 165 ((h) resumed) a leader not listed yet (a resumed one's
 * first = 0) is taken for preempted: a demote at every resume.
 * 166 ((RH)) the session file's down line ignored: a daemon demoted
 * after a lost lease, head again with E/leader still its own, demotes
 * again at a restart; 167 (two leaders) down not cleared when a promote
 * begins: a crash in the promote's first moments resumes as down, with
 * no demote at its lease's end; 168 ((rel)) the breadcrumb's version
 * counted up at the ack's reply instead of taken from it: a write by hand
 * between our read and our ack costs each release of that leadership a
 * refusal, a read and a second release. 169 ((G)) a disconnect while
 * the lease was lost already is not noted: a reload that gives the lease
 * back leaves the leader leading past a disconnect_grace of 0.
 * The tests must catch each.
 */
#ifdef EL_MUTANTS
extern int el_mutant;
#define EL_MUTANT(n) (el_mutant == (n))
#else
#define EL_MUTANT(n) 0
#endif

/*
 * Our claim in the claims queue E/claims (election_claim.c): made by the
 * heir while its predecessor leads, or by the head; the first claim is
 * the right to lead. See election.c's header.
 */
struct el_claim {
	char *dir;		/* E/claims */
	char *create;		/* E/claims/claim-<sid>_, as created */
	char *data;
	int have;		/* one of ours exists, as far as we know */
	int known;		/* have is what ZooKeeper has (0: a reply lost) */
	int heir;		/* made while we were the heir: prepared */
	char *path;		/* ours, once listed (NULL until then) */
	char *node;		/* its name */
	int64_t seq;		/* ...and its sequence */
	int listed;		/* E/claims listed on this connection, ours in it */
	int first;		/* ours is the first claim of E/claims */
	char *pred;		/* the claim just before ours */
	int64_t pred_sid;	/* ...its session */
	int queue_relisted;	/* the candidates listed again to place it */
	int64_t gone_sid;	/* the session of the head whose node went
				 * before ours was first: its claim goes in
				 * the same transaction, or is an orphan */
	int pred_head;		/* and it was the first */
	int pred_watched;
	int own_armed;		/* ours is watched, or its exists is out */
	int own_watched;	/* ...and answered: it was there */
};

/* State changes not yet reported by election_next(). */
#define EL_TRANS_MAX 8

struct election {
	/*
	 * What we are doing now (election.c's table), and what made the
	 * last change: the event or action election_next() last saw.
	 */
	enum el_state state;
	const char *cause;
	struct {
		enum el_state from, to;
		const char *cause;
		int unlisted;
	} trans[EL_TRANS_MAX];
	int ntrans;
	int none_reported;	/* a decision of nothing went out as a change */

	char *path;		/* E */
	char *cand_dir;		/* E/candidates */
	char *leader_path;	/* E/leader */
	char *crumb_path;	/* E/breadcrumb */
	char *prio_dir;		/* E/priority */
	/* the ancestors of E/candidates, then E/priority (when priority) */
	char *parents[EL_MAX_DEPTH + 1];
	int nparents;
	int nbase;		/* the ancestors of E/candidates alone */
	/*
	 * E/claims, or E/priority for a candidate without a priority: made
	 * when a request finds it missing (once in a service's life), so
	 * that a join costs no more writes than it did.
	 */
	const char *lazy_parent;
	char *id;
	char *data;
	char *create_data;
	char *ack_data;
	char *create_path;
	int observer;
	int fence_configured;
	int check_configured;
	int64_t backoff_ms;
	int64_t grace_ms;
	int64_t hook_timeout_ms;
	int64_t demote_cfg_ms;	/* as configured */
	int64_t demote_ms;	/* in force: clamped below T/3 */
	int demote_clamped;
	int64_t check_interval_ms;
	int64_t check_fall;
	int64_t check_rise;
	int64_t tick_ms;	/* the ensemble's tickTime, 0: no report lag */
	int64_t lag_ms;		/* report lag allowed: tick/2 */
	const char *lease_error;	/* no room for a lease: not queued */

	/* time */
	int64_t now;
	int64_t timeout_ms;	/* T: negotiated, or requested until then */
	int64_t lease_sent;	/* send time of the last confirmed request */
	int lease_known;	/* lease_sent is set */
	int lease_lapsed;	/* the lease ran out: facts were dropped */
	struct {
		int64_t sent, replied;
	} conf[EL_CONF_MAX];	/* confirmations on this connection */
	int nconf;
	int conf_conn;		/* conn_gen of conf[] */
	int64_t confirmed_at;	/* the last confirmation came then */
	/*
	 * The send time of the latest request a server answered, in this
	 * session (the session's request at first): it precedes any
	 * reconnect asked for after the reply came (see election_time.c).
	 */
	int64_t answered_sent;
	int64_t session_req;	/* when the session to come was asked for */
	int sync_inflight;
	int64_t sync_sent;
	int sync_conn;		/* conn_gen when the sync in flight was sent */
	int synced;		/* a sync of this connection came back */
	int64_t sync_retry;	/* 0, or no sync before then (one failed) */
	struct {
		enum el_op op;
		int64_t sent;
		int bg;		/* a read nothing else waits behind */
		int crumb;	/* EL_CRUMB_*: what it writes there */
	} pipe[EL_PIPE_MAX];	/* election requests in flight, oldest first */
	int npipe;
	int conn_gen;		/* counts connections */

	/* session */
	enum el_zk zk;
	int64_t sid;
	int conn_lost;		/* a leader must demote: lost contact */
	const char *conn_lost_why;	/* disconnected or lease-lost */
	int64_t grace_until;	/* 0, or when a disconnected leader demotes */
	int64_t disc_at;	/* 0, or when a leader was told it is cut off */
	int restart;		/* the session must be replaced */
	const char *restart_why;	/* why, for the log */
	int64_t restart_at;
	int restart_sent;
	int auth_failures;

	/*
	 * Requests: intents of the operator, each kept until it is done or
	 * taken back, whatever the state meanwhile. A pause was asked and not resumed. An intent, not a state: a
	 * leader asked to pause leads, demotes and releases first; the
	 * state paused is what is left once nothing of those remains.
	 */
	int want_pause;
	/*
	 * A stop was asked (final). It is an intent, not a state: it holds
	 * through a promote, a leadership and its demote, which come first;
	 * the handoff itself, once nothing of those is left, is the state
	 * stopping.
	 */
	int want_stop;
	int resigning;		/* 1 leaving, 2 released: rejoining */
	/*
	 * A switchover we lead: 1 list the queue, 2 delete the nodes between
	 * ours and the target's (their owners rejoin at the back), then the
	 * ordered release. sw_failed says why one was given up.
	 */
	int sw_phase;
	char *sw_target;
	char *sw_between[EL_MAX_SUBOPS];
	int sw_nbetween;
	const char *sw_failed;
	int sw_handing;		/* the release is a switchover's */
	const char *sw_reason;	/* its demote reason */
	int64_t priority;
	int pause_reply;
	int resign_reply;
	int64_t backoff_until;	/* 0, or the end of retry_backoff */
	int64_t retry_until;	/* 0, or the end of the pause after an error */
	int startup_demote;

	/* health */
	int unhealthy;
	int64_t check_due;
	int64_t check_fails;
	int64_t check_oks;

	/* our place in the queue */
	int parent_idx;
	int create_nonode;	/* creates that found no parent, in a row */
	int parents_done;
	char *node;		/* basename, or NULL */
	char *node_path;
	int node_gen;		/* counts the nodes we forgot */
	int64_t epoch;		/* czxid of our node */
	int create_unknown;	/* a create's reply was lost */
	int node_ok;		/* watched and owned, since the last change */
	int listed;
	int listed_once;
	int64_t *ahead;		/* sessions of the nodes before ours, last listing */
	int nahead;
	int ahead_known;	/* a listing since our node was made */
	int first;
	char *pred_path;
	int pred_watched;
	int64_t pred_czxid;	/* from its watch: 0 until then */
	int64_t pred_owner;
	int pred_head;		/* the predecessor is first: nobody before it */
	int ncandidates;
	int position;		/* ours in the last listing, 1-based; 0 none */

	/* E/leader */
	int leader_fresh;	/* what we know of E/leader is its state */
	int leader_armed;	/* a watch on it is set, or being set */
	int leader_check;	/* E/leader was absent: exists-watch it */
	int leader_exists;
	int64_t leader_owner;
	char *leader_id;
	char *leader_data;
	int64_t leader_epoch;

	/* our claim in E/claims: from before promote until the release */
	struct el_claim cl;

	/*
	 * Priority markers (E/priority/<sid>_<priority>, see el_next_mark()):
	 * ours as made (NULL when none), and the listing of all of them
	 * read for a claim, with the sessions behind our node (priority < 0).
	 */
	char *mark_have;
	char *mark_extra;	/* another of our session's, to delete */
	int unmark_extra;	/* the UNMARK in flight is mark_extra's */
	char *mark_old;		/* one a change replaced: deleted after */
	int unmark_old;		/* the UNMARK in flight is mark_old's */
	int mark_unsure;	/* a lost release may have deleted it */
	int resume_promoting;	/* resumed: a promote or fence had begun */
	/*
	 * A demote hook ended well and no promote, fence or demote began
	 * since, nor did a listing place us behind another (election_
	 * view()): the application is not leading. Resumed from the file.
	 */
	int down;
	int resume_claimed;	/* resumed: the file named a claim, */
	int64_t resume_claim_seq;	/* ...this one */
	int lead_claimed;	/* a promote or fence began on a claim, */
	int64_t lead_claim_seq;	/* ...this one; till its demote is over */
	char *mark_watch;	/* mark_have, watched on this connection */
	int marks_unknown;	/* a resumed session's own: list E/priority */
	char *mark_path;	/* the one being made */
	/*
	 * Ours as it should be for (want_sid, want_prio), formatted again
	 * only when they change: el_next_mark() asks at every step.
	 */
	char mark_want[512];
	int64_t mark_want_sid;
	int64_t mark_want_prio;
	int marks_fresh;
	int marks_conn;		/* conn_gen when they were read */
	int yield_listed;	/* 1 a listing is wanted for a yield, 2 made,
				 * 3 the markers read again after it (< 0) */
	int64_t yield_until;	/* no yield again before then */
	int64_t mark_hold_until;	/* none after a resign, until then */
	int release_marked;	/* the release in flight deletes it */
	int release_crumb;	/* and the breadcrumb */
	int marks_for_claim;
	int64_t *mark_sid;
	int64_t *mark_prio;
	int nmarks;
	int64_t *behind;	/* sessions of the nodes after ours, last listing */
	int nbehind;
	int64_t yield_sid;	/* to whom, for the log */
	int64_t yield_prio;
	int yields;		/* counts yields */

	/*
	 * Preemption (el_next_preempt()): a leader that a marker outranks
	 * (el_preempt_outranked()) reads the queue every preempt_delay/4
	 * (0.5 s to 5 s); the first of the highest priority
	 * above ours, seen with the same node for preempt_delay, gets the
	 * leadership by a switchover (reason preempted).
	 */
	int64_t preempt_ms;	/* -1: never */
	int64_t pre_due;	/* the next look, 0: at once */
	int pre_reading;	/* EL_ACT_QUEUE out */
	char *pre_node;		/* who outranks us, seen since pre_since */
	char *pre_id;
	int64_t pre_prio;
	int64_t pre_since;
	int pre_told;		/* EL_ACT_OUTRANKED sent for pre_node */
	int pre_go;		/* preempt_delay passed: hand over */

	/*
	 * Events counted in the order they come (replies and notifications
	 * of one connection come in zxid order), and the one at which our
	 * claim was last found first; the one at which our node was last
	 * found first, or E/leader gone (the last step before a promote).
	 */
	int64_t evseq;
	int64_t first_seq;
	int first_was;
	int64_t gone_seq;
	int head_was;
	int leader_was;
	/* E/breadcrumb */
	int crumb_fresh;
	int crumb_armed;	/* a watch on it is set, or being set */
	int crumb_exists;
	int64_t crumb_epoch;
	int64_t crumb_seq;	/* the event that made the view (el->evseq) */
	int32_t crumb_version;
	/*
	 * What the write being built does to it (EL_CRUMB_*), kept with
	 * the request in the pipe; reply_crumb is the one replied to.
	 */
	int crumb_write;
	int reply_crumb;
	int crumb_mine;		/* maybe written (an ack sent) by a leadership
				   of this session not yet released */
	int64_t crumb_node_epoch;	/* ...under this node of ours */
	int64_t crumb_claim_seq;	/* ...and this claim (-1: none) */
	char *crumb_id;
	char *crumb_data;

	/* the hook slot, shared by promote, demote, fence and check */
	int hook;		/* -1, or the enum hook_kind running */
	int hook_gen;		/* node_gen when it started */
	int hook_cancelled;	/* EL_ACT_CANCEL sent for it */

	/* leadership */
	int fenced;
	int64_t lead_epoch;	/* the epoch the application was told */
	int promote_failed;
	int run_exited;		/* hooks.run ended: leave, then back off */
	int acked;		/* E/leader written for this leadership */
	const char *lost_reason;
	int release_pending;
	const char *release_why;	/* the request that asked for it */
	int release_attempts;
	int data_dirty;		/* election.data changed: rewrite our nodes */
	int data_gen;		/* counts election_set_data() */
	int data_sent_gen;	/* data_gen of the SET_DATA in flight */

	/* a resumed session (election_resume(), el_resume_next()) */
	int resume_check;	/* what it holds is not all read back yet */
	int resume_exact;	/* handed over by a live image: no guess in it */
	int resume_demote;	/* demote_on_start, for a resume that fails */
};

/*
 * The core's files, each calling only those listed before it here:
 * election_claim.c and election_preempt.c (leaves), election.c (the facts
 * and their upkeep), election_time.c (the clock), election_reply.c (the
 * replies), election_event.c (the other events), election_act.c (what an
 * action carries), election_mark.c (the priority markers and the yield),
 * election_queue.c (the recipe's requests: join, claim, promote, release,
 * switchover), election_next.c (the decisions: election_next()).
 */

/*
 * What a decision of the lower files returns when what it set (a release)
 * changes what is to be done now: election_next() decides again, at once.
 */
#define EL_AGAIN 2

/* election.c */
void el_go(struct election *el, enum el_state to, const char *cause);
void el_settle(struct election *el);
void el_state_init(struct election *el);
int el_promoted(const struct election *el);
int el_lead_hook(const struct election *el);
void el_replace(char **dst, const char *src);
void el_make_data(struct election *el);
void el_invalidate(struct election *el);
int el_leading(const struct election *el);
void el_forget_node(struct election *el);
void el_release_ask(struct election *el, const char *why);
void el_node_lost(struct election *el);
void el_release_done(struct election *el);
void el_session_lost(struct election *el);
int el_owns_leader(const struct election *el);
void el_switch_clear(struct election *el, const char *why);
void el_switch_listed(struct election *el, const struct candidate *c, int n,
    int me);
int el_pipe_has(const struct election *el, enum el_op op);
int el_may_queue(const struct election *el);
void el_pred_head(struct election *el);

/* election_preempt.c */
void el_preempt_forget(struct election *el);
int64_t el_preempt_deadline(const struct election *el, int on);
void el_preempt_act(struct election *el, struct el_action *act,
    enum el_act_type type);
int el_preempt_outranked(const struct election *el);
int el_next_preempt(struct election *el, struct el_action *act, int on);
void el_preempt_listed(struct election *el, const struct el_queue *q,
    int on);

/* election_reply.c */
void el_no_leader(struct election *el);
void el_no_crumb(struct election *el);

/* election_claim.c */
void el_claim_init(struct el_claim *cl, const char *path);
void el_claim_free(struct el_claim *cl);
void el_claim_forget(struct el_claim *cl);
void el_claim_invalidate(struct el_claim *cl);
enum el_op el_claim_want(struct el_claim *cl, struct el_action *act);
void el_claim_build(struct election *el, struct el_action *act, int heir);
int el_claim_ready(const struct el_claim *cl);
int el_claim_created(struct el_claim *cl, int rc);
int el_claims_listed(struct el_claim *cl, const struct el_result *res,
    int64_t sid);
int el_claim_watched(struct el_claim *cl, const struct el_result *res);
const char *el_claim_own_want(struct el_claim *cl);
int el_claim_own_watched(struct el_claim *cl, const struct el_result *res);
int el_claim_watch(struct el_claim *cl, int deleted, const char *path);

/* election_time.c */
int64_t el_lease_end(const struct election *el);
int64_t el_demote_point(const struct election *el);
int el_lease_short(const struct election *el);
void el_lease_regained(struct election *el);
int el_answered(int rc);
int el_server_answered(int rc);
void el_confirmed(struct election *el, int64_t sent);
void el_answered_sent(struct election *el, int64_t sent);
void el_reconnected(struct election *el);
void el_grace_apply(struct election *el);
void el_lose_contact(struct election *el, const char *why);
void el_set_timeout(struct election *el, int64_t timeout_ms);
int el_sync_due(const struct election *el);
void el_check_done(struct election *el, int ok);
int el_preempt_on(const struct election *el);

/* election_act.c */
int el_pipe_busy(const struct election *el);
void el_act_zk_pipe(struct election *el, struct el_action *act, enum el_op op,
    const char *path, int bg);
void el_act_zk(struct election *el, struct el_action *act, enum el_op op,
    const char *path);
int el_arm_crumb(struct election *el, struct el_action *act);
int el_watch_crumb(struct election *el, struct el_action *act);
int el_need_crumb(struct election *el, struct el_action *act);
void el_act_hook(struct election *el, struct el_action *act,
    enum hook_kind kind, const char *reason);
void el_act_cancel(struct election *el, struct el_action *act,
    int64_t grace_ms);
void el_sub(struct el_action *act, enum zk_mop_kind kind, const char *path,
    const char *data);
void el_build_release(struct election *el, struct el_action *act);
void el_build_ack(struct election *el, struct el_action *act);
void el_build_set_data(struct election *el, struct el_action *act);
int el_take_slot(struct election *el, struct el_action *act,
    enum hook_kind kind, const char *reason);

/* election_mark.c */
void el_unmark(struct election *el, struct el_action *act,
    const char *path);
int el_next_mark_extra(struct election *el, struct el_action *act);
int el_next_mark(struct election *el, struct el_action *act);
int el_read_marks(struct election *el, struct el_action *act);
int el_yield(struct election *el, struct el_action *act);

/* election_queue.c */
int el_next_zk(struct election *el, struct el_action *act);

#endif
