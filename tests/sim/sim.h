/*
 * A deterministic simulation of zkelectd's election: the real pure core
 * (src/election*.c) runs in several simulated daemons against a model
 * ZooKeeper ensemble on one virtual clock, with faults drawn from a seed.
 *
 * One struct sim owns everything of a run and is passed to every
 * function; nothing is global, so a run is a function of its seed.
 * Files, one concern each:
 *   rng.c      the random numbers (xoshiro256**), the only source of choice
 *   evq.c      the event queue: a heap ordered by (time, insertion)
 *   ztree.c    a znode tree: one per server replica and one at the quorum
 *   quorum.c   the ZooKeeper leader: zxids, commits, the txn log, sessions,
 *              their owner server and their expiry
 *   server.c   the three servers: replicas that apply the log, requests
 *              served in order, cut-offs from the quorum, crashes
 *   ensemble.c with -L: which server leads the ensemble, its PING rounds
 *              (followers' touch reports), elections
 *   swatch.c   a server's one-shot watches and setWatches
 *   conn.c     TCP connections: FIFO per direction, latency, partitions
 *   client.c   the ZooKeeper client library inside each daemon: connect,
 *              reconnect, pings, timeouts, watch re-registration
 *   peer.c     one zkelectd: feeds the election its events and performs
 *              its actions, as daemon.c does; crashes, operators
 *   slot.c     its hook slot: hooks run, fail, hang, get killed
 *   freeze.c   a frozen daemon: everything deferred to its wake
 *   fault.c    the fault schedule of a run and the quiet phase
 *   check.c    the invariants, checked on every step
 *   check_queue.c  invariant (j): the queue's order, at the quorum's commit
 *   check_final.c  the end of a run: answers (e) and convergence (f)
 *   check_data.c   (data): the data and priority set are what others see;
 *              (crumb): the breadcrumb says what E/leader says
 *   check_lease.c  the lease against the model's truth (L1, L2) and
 *              availability (AV)
 *   sabotage.c lies of the model (-B), to show that an invariant fires
 *   trace.c    the readable trace of a run
 *   sim.c      one run: setup, the event loop, the end
 *   seeds.c    the regression seeds file
 *   main.c     the command line: a campaign of seeds
 * model.h holds the ZooKeeper model's types, this file the rest.
 */
#ifndef ZKELECTD_SIM_H
#define ZKELECTD_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "election.h"
#include "log.h"
#include "model.h"

#define SIM_NEVER	INT64_MAX

/* rng.c */
struct rng {
	uint64_t s[4];
};
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [lo, hi]. */
int64_t rng_between(struct rng *r, int64_t lo, int64_t hi);
/* True with probability permille / 1000. */
int rng_permille(struct rng *r, int permille);

/* evq.c */
enum ev_type {
	EV_C2S,			/* a client's message reaches its server */
	EV_S2C,			/* a server's message reaches the client */
	EV_COMMIT,		/* a proposal reaches the quorum's leader */
	EV_REVALIDATE,		/* a connection request reaches the leader */
	EV_APPLY,		/* a server applies the next txn of the log */
	EV_EXPIRE,		/* the quorum looks at a session's last touch */
	EV_SRV_NOTICE,		/* a cut-off server notices, drops clients */
	EV_SRV_REJOIN,		/* a server is back in the quorum */
	EV_SRV_PING,		/* a server reports its touches (-k) */
	EV_ENS_PING,		/* the ZooKeeper leader pings followers (-L) */
	EV_ELECT,		/* the next phase of an election (-L) */
	EV_CL_PING,		/* the client library's ping timer */
	EV_CL_RECV,		/* its "nothing heard for 2T/3" timer */
	EV_CL_CONNECT,		/* its next connection attempt */
	EV_CL_CONNTMO,		/* a connection attempt took too long */
	EV_PEER_TIMER,		/* election_deadline() is due */
	EV_HOOK_EXIT,		/* a hook's process group is gone */
	EV_HOOK_KILL,		/* the daemon's hook timeout fires */
	EV_HOOK_REAP,		/* the daemon reaps the hook: hook_done */
	EV_OPERATOR,		/* a zkelectctl command reaches the daemon */
	EV_WAKE,		/* a frozen daemon runs again */
	EV_PEER_START,		/* a daemon process (re)starts */
	EV_QUEUE,		/* a leader's queue read is answered (ops.c) */
	EV_FAULT,		/* the next fault of the schedule */
	EV_QUIET,		/* faults stop */
	EV_END,			/* the convergence bound is over */
	EV_SESSION_LATE,	/* the session file's deferred promote line */
	EV_STALL,		/* a daemon's next loop stall (-Y, stall.c) */
	EV_TIMING,		/* the next reload of the lease's settings (-H) */
	EV_NEWS,		/* the library's news a stalled loop reads late */
};

struct ev {
	int64_t t;
	enum ev_type type;
	int peer;		/* the daemon it is for, or -1 */
	int inc;		/* the daemon's incarnation it is for */
	int a, b;
	int64_t x;
	void *p;
};

/*
 * The heap holds only the keys and where the event is: a sift moves 16
 * bytes a level, not the whole event. The key is the time above the
 * insertion count (evq.c). The events wait in a pool whose free slots
 * are chained through their `a` field.
 */
struct evq_key {
	uint64_t key;
	int slot;
};

struct evq {
	struct evq_key *heap;
	struct ev *pool;
	int n, cap;
	int free;		/* the first free slot of the pool, or -1 */
	uint64_t seq;
};
void evq_init(struct evq *q);
void evq_free(struct evq *q);
void evq_push(struct evq *q, const struct ev *ev);
int evq_pop(struct evq *q, struct ev *out);

/* peer.c */
enum hook_fate {
	HF_OK,
	HF_FAIL,
	HF_HANG,		/* runs until the daemon kills it */
};

struct peer {
	int idx;
	char id[16];
	char data[32];
	int observer;
	int check;
	struct election_params params;
	int yields;		/* the core's count, last seen */
	struct election *el;
	int running;		/* the process exists */
	int inc;		/* incarnation: bumped at every (re)start */
	int stopped;		/* exited after EL_ACT_STOPPED */
	struct client cl;
	int64_t last_req_at;	/* when the core last sent a request */
	enum el_op last_req_op;	/* and which */
	int64_t last_sync_at;	/* its last keepalive sync */
	int64_t reply_at;	/* the core's last reply (or failure) */
	int64_t ack_at;		/* its last ack the quorum applied */
	int64_t crumb_heard;	/* (i): the zxid its core was told with its
				 * last news of E/breadcrumb (a watch's, a
				 * read's reply), check_crumb_heard() */
	int64_t ack_told;	/* crumb_heard when its last ack went */
	/* (rel): the breadcrumb its last answered write left, and when */
	int64_t crumb_zxid, crumb_sid, crumb_at, crumb_epoch;
	int64_t crumb_ack_zxid;	/* ...and the ack that wrote it first */
	int crumb_inc;
	int64_t hand_since;	/* (hand): heir notified of a release, 0 */
	int64_t last_queue_at;	/* its last queue read (a leader's) */
	int out_el, out_sync;	/* election requests and syncs out */
	int in_step;
	int freeze_gen;
	int frozen;
	int lib_live;		/* frozen is a loop stall: the library runs */
	int news_pending;	/* the library's news not yet told the core */
	int64_t told_zxid;	/* then: the latest zxid the core was told */
	int told_conn;		/* the connection news being told came on */
	int telling;		/* stall_news() tells the core its next news */
	int64_t frozen_from, wake_at;
	int64_t woke_at;	/* the last freeze's end (0: never frozen) */
	struct ev *deferred;
	int ndef, capdef;
	int healthy;		/* what the check hook would say */
	/* the hook slot */
	int hook_on;		/* between HOOK and its hook_done */
	int hook_seq;
	enum hook_kind hook_kind;
	int64_t hook_start, hook_ms;
	int64_t hook_sid;	/* the session when it started */
	int hook_exited;	/* the process group is gone */
	int hook_cancel_seen;	/* the core cancelled it (EL_ACT_CANCEL) */
	/* check_ops.c (health): the verdict its checks' results make */
	int h_unhealthy, h_fails, h_oks;
	/* ...and its pace: the last check's start (or the check's or the
	 * process's), the last hook's end, a stop asked of this process */
	int64_t h_from, h_free;
	int h_stop;
	int hook_ok;
	/* (h): its last promote or fence failed of itself, not cancelled */
	int lead_failed;
	int back_armed;		/* (back) a failed promote or fence: */
	int64_t failed_at;	/* when it failed, and the backoff */
	int64_t failed_backoff;	/* ...configured then */
	int64_t timer_at;	/* the pending EV_PEER_TIMER, or SIM_NEVER */
	int64_t begun_at;	/* a promote or fence seen begun (-R), or 0 */
	int timer_gen;
	int busy;		/* consecutive steps with deadline <= now */
	char fence_id[16];	/* whom the running fence hook fences */
	char fence_node[SIM_PATH];	/* the node it fences for */
	int64_t fence_epoch;
	int64_t fence_told;	/* crumb_heard at its start */
	enum role last_role;	/* after its last step */
	int64_t last_lease;
	int64_t auth_failed_at;	/* its last AUTH_FAILED */
	int64_t restarts[16];	/* when the last sessions were replaced */
	int grace_set;		/* disconnect_grace set in its configuration */
	int told_connected;	/* the core was last told CONNECTED */
	int64_t disc_at;	/* ...else when it was told it was not; 0 */
	/*
	 * When the grace of that disconnection ends, as configured since
	 * (a reload applies at once; one that came after the end leaves
	 * it), or SIM_NEVER when no grace is set (lease).
	 */
	int64_t grace_end;
	int nrestarts;
	/* the operator's waiting clients */
	int resign_wait, pause_wait;
	int64_t resign_since, pause_since;
	/* (resign) its resign's release answered applied, when (0: not
	 * yet); since when it has been due unanswered (0: not due) */
	int64_t resign_rel, resign_due;
	int64_t stop_ready_at;	/* (stop) stopping, no hook, since: or -1 */
	/* ops.c: the switchover it follows (an operator's or preemption) */
	int sw_on, sw_inc, sw_preempt;
	int sw_handed;		/* it stopped leading since (handed over) */
	int sw_deleted;		/* it sent the delete of the nodes between */
	int sw_listed;		/* a listing of E/candidates came since, */
	int sw_target_listed;	/* ...and the last one had the target */
	int yields_seen;	/* check_ops.c: the core's yields, checked */
	int64_t yield_at;	/* check_ops.c: its last yield, -1 none */
	int64_t prio_at;	/* its last priority reload (0: none) */
	int64_t able_at;	/* connected and awake since (0: not now) */
	int pause_resumed;	/* a resume came while a pause waited */
	int pause_handed;	/* a re-exec's pause, not answered yet */
	int sess_gone;		/* the core was told its session expired or
				 * failed its auth (the server expires it) */
	/* check_data.c: markers the core cannot know it made: a MARK whose
	 * reply was lost, and (-R) those made before its last start */
	char sw_node[SIM_PATH];
	char sw_id[16];
	int64_t sw_since;
	/* -R: the session file, as resume.c keeps it after every step */
	struct el_resume sf;
	int sf_valid;
	/* SIGUSR2: what the image hands to the next (reexec.c's paused and
	 * unhealthy), consumed by its start */
	int rx, rx_paused, rx_unhealthy;
	int resuming;		/* a resumed session not confirmed yet */
};

/* check.c: what the checker remembers of each daemon. */
struct pcheck {
	int64_t list_sent;	/* its last listing of E/candidates sent */
	/* check_state.c: the last state reported, in incarnation st_inc */
	enum el_state st;
	int st_inc;
	int app_lead;		/* (ack) its application told to lead: a
				 * promote started, no demote ended well
				 * since (any image) */
	int fence_failed;	/* (undo) a fence failed of itself (not
				 * cancelled), no demote ended well since */
	int open;		/* between promote start and demote end */
	int fenced;		/* ...but a successor's fence stopped its
				 * application meanwhile */
	int64_t open_at;
	int64_t epoch;
	int excused;		/* frozen past its lease, or crashed */
	int crashed;		/* its process died while it led */
	int64_t demote_at_freeze;	/* lease_end - demote_timeout then */
	int last_pd;		/* 'P', 'D' or 0 this incarnation */
	int fenced_between;	/* a fence ran since the last demote */
	int must_demote;	/* woke past its lease: demote first */
	int promote_killed;	/* its promote was killed: demote next */
	int startup_demoted;	/* a startup demote since its last promote */
	int lost_demoted;	/* ...or one for lost contact or session */
	int resumed_lead;	/* (RS) -R: resumed as the leader, no hook
				 * started since */
	int no_lease;		/* (AV) a lease_error since its promote */
	int64_t rs_point;	/* (RS) its demote point at a hook's kill */
	/*
	 * (RH) -R: the truth of its application, and what the session file
	 * its last start resumed named, until that image's first demote
	 */
	int lead_begun;		/* a promote or fence started, and no demote
				 * ended well since (any image) */
	int rh_on;		/* resumed, no demote or promote since */
	int64_t rh_sid;		/* ...this session */
	int rh_exact;		/* ...handed over by a re-exec */
	int rh_claimed;		/* ...the file named a claim, */
	int64_t rh_claim_seq;	/* ...this one */
	int rh_stop;		/* ...a stop asked since the start */
	int rh_short;		/* ...its lease short at a check's kill */
	/* (prio) its last listing of E/priority: each session's lowest
	 * marker (mk_n -1: more sessions than kept) */
	int64_t mk_sid[2 * SIM_MAX_PEERS], mk_low[2 * SIM_MAX_PEERS];
	int mk_n;
	int handing;		/* (prio) its last demote handed over on
				 * purpose (resign, switchover) */
	int64_t hold_from;	/* ...and its release then committed: its
				 * marker stays away until another leads */
	char led_node[64];	/* (resign) the node of its last promote */
	/* (prio) the nodes its queue reads last showed not above it, when */
#define SIM_LOW_SEEN	16
	char low_node[SIM_LOW_SEEN][64];
	int64_t low_at[SIM_LOW_SEEN];
	/* (prio) the outranker its last OUTRANKED named (empty: none, or
	 * one read since as not above it), in incarnation out_inc and
	 * session out_sid, at out_at */
	char out_node[64];
	int out_inc;
	int64_t out_sid, out_at;
	/* (rel) the last marker its core was told deleted (a watch), in
	 * incarnation gone_inc, and the quorum's last delete of it then */
	char gone_mark[SIM_PATH];
	int gone_inc;
	int64_t gone_zxid;
	char node[SIM_PATH];
	int64_t sid;		/* the session it promoted in */
	char fenced_node[SIM_PATH];	/* the node of its last good fence */
	char promoted_node[SIM_PATH];	/* (i) the node of its last promote */
	int64_t fenced_epoch;	/* and the breadcrumb's epoch it fenced */
	int64_t fenced_told;	/* and its fence_told */
	int64_t admin_at;	/* an administrator last deleted a node of
				 * its session (E/leader included) */
	int64_t node_admin_at;	/* ...its candidate node, */
	int64_t claim_admin_at;	/* ...its claim, */
	int64_t claim_admin_zxid;	/* ...in this transaction, */
	int64_t claim_admin_sid;	/* ...of this session */
	int64_t node_admin_sid;	/* the session of its node deleted */
	int64_t heir_zxid;	/* its last claim made as the heir, */
	int heir_used;		/* ...and a promote on it */
	/* check_lease.c: what a lease done right could know (AV) */
	int64_t av_sid;		/* the session it is about */
	int64_t av_base;	/* the latest send time the quorum is known
				 * to have touched the session after */
	const char *av_from;	/* what gave it: request, reconnect, pair */
	int64_t av_req;		/* when its session was last asked for */
	int64_t av_answered;	/* the send time of the latest request a
				 * server answered, this session */
	int av_conn;		/* the connection of av_conf */
	int64_t av_freeze_at;	/* its demote point when it froze */
	int64_t av_freeze_lease;	/* ...and its lease's end: a reload
					 * that moves the point renews nothing */
	int av_woke_late;	/* woke past it, not renewed since: AV
				 * excuses its demote */
	int64_t av_cut_at;	/* a promote or fence was killed then, */
	int64_t av_cut_base;	/* ...with this base: the demote's cause */
	const char *av_cut_from;
	int64_t av_cut_budget;	/* ...and the demote's budget then */
	int av_cut_check;	/* ...a check's kill, which a renewal read
				 * before its reaping takes back */
	/* (room) its last promote's or fence's start, and the lease's
	 * settings then (T, the demote's budget, the report lag) */
	int64_t rm_start, rm_T, rm_budget, rm_lag;
	int64_t rm_ran;		/* ...killed after this long, short of T/8
				 * (0: not), awaiting the demote's reason */
	struct {
		int64_t sent, replied;
	} av_conf[16];		/* confirmations on av_conn */
	int av_nconf;
	int rel_refused;	/* (rel) its releases a server refused since
				 * one was applied or its session replaced */
};

/* fault.c: the knobs of a run and what it injected. */
/* The kinds of fault (fault.c). */
enum fault_kind {
	F_SRV_CUT,
	F_SRV_CRASH,
	F_SRV_LAG,
	F_BLIP,
	F_ISOLATE,
	F_FREEZE,
	F_CRASH,
	F_RESIGN,
	F_PAUSE,
	F_RESUME,
	F_STOP,
	F_DELETE_NODE,
	F_DELETE_LEADER,
	F_HEALTH,
	F_SET_DATA,
	F_AUTH,
	F_SWITCHOVER,		/* only with -W (w=1): older seeds stay as they were */
	F_PRIORITY,		/* only with -P (p=1): a reload's new priority */
	F_FORGE_MARK,		/* only with -P: a hand-made priority marker */
	F_SRV_RESTART,		/* only with -L (l=1): a server restarts */
	F_ELECTION,		/* only with -L: an election in the ensemble */
	F_REEXEC,		/* only with -R (r=1): SIGUSR2, a re-exec */
	F_RUN_EXIT,		/* only with -H (h=1): hooks.run exits on its own */
	F_CHECK_RELOAD,		/* only with -H: a reload adds or removes
				 * hooks.check */
	F_DELETE_CLAIM,		/* a claim of E/claims deleted by hand */
	F_ACL,			/* only with -H: E's ACL loses DELETE for a
				 * while (every release refused NOAUTH) */
	F_NKINDS,
};

struct fault_cfg {
	int64_t fault_ms;	/* length of the faulty phase */
	int64_t mean_gap_ms;	/* mean time between faults */
	int w[F_NKINDS];		/* weights of the fault kinds */
	int promote_fail, promote_hang;	/* per mille */
	int demote_fail, demote_hang;
	int fence_fail, fence_hang;
	int check_hang;
	int hook_slow;		/* per mille: a hook takes seconds */
	int create_blip;	/* per mille: a blip right after a create */
	int fence;		/* the run configures a fence hook */
};

struct sim_stats {
	uint64_t events;
	uint64_t faults[F_NKINDS];
	uint64_t tied;		/* of them, tied to a daemon's move */
	uint64_t crumb_writes;	/* E/breadcrumb written by hand (-H) */
	uint64_t crumb_unheard;	/* (i) over such a write not yet heard */
	uint64_t stalls;	/* loop stalls (-Y) */
	uint64_t promotes, demotes, expiries, losses;
	uint64_t fence_lost;	/* fences whose session ended meanwhile */
	uint64_t claims;	/* claim commits checked for (j) */
	uint64_t heir_claims;	/* ...made by the heir (prepared) */
	uint64_t prepared;	/* promotes on a claim made as the heir */
	uint64_t stale_claims;	/* prepared claims released unused */
	uint64_t unclaims;	/* heads' deletes of a stale claim */
	uint64_t double_deletes;	/* (a) excused: claim and node deleted
					 * by hand in one leadership */
	uint64_t gone_hooks;	/* promotes, fences for a gone node */
	uint64_t over_crumb;	/* promotes over another epoch's crumb */
	uint64_t stale_crumb;	/* ...that the daemon's view lacked */
	uint64_t yields;	/* heads that yielded to a higher priority */
	uint64_t elections;	/* elections inside the ensemble (-L) */
	uint64_t needless;	/* demotes AV calls needless (-A or not) */
	uint64_t hash;		/* -X: the last run's (not summed) */
	uint64_t hash_events;	/* the events in it */
};

struct sim {
	uint64_t seed;
	struct rng rng;
	struct evq q;
	int64_t now;
	int verbose;		/* trace to stdout as it happens */
	int tracing;		/* keep a trace (replay of a failure) */
	uint32_t disabled;	/* fault kinds left out */
	int64_t tick_ms;	/* servers report touches every tick/2 */
	int sabotage;		/* enum sabotage_kind: the model lies */
	int switchover;		/* operators ask leaders for switchovers */
	int priorities;		/* candidates have priorities (-P) */
	int lease_model;	/* the ZooKeeper lease model, new faults (-L) */
	int big_tick;		/* ticks up to T, not T/2 (-K) */
	int avail;		/* the availability invariant (-A) */
	int resume;		/* restarts resume the session (-R) */
	int reloads;		/* F_RUN_EXIT, F_CHECK_RELOAD (-H) */
	/*
	 * Faults tied to a daemon's own moves (fault_tie()): drawn from a
	 * stream of their own, so that a run without them is the run it
	 * was before they existed.
	 */
	struct rng tie_rng;
	int tie_pm;		/* per mille of moves that get one, or 0 */
	/* Loop stalls (stall.c): a stream of their own as well. */
	struct rng stall_rng;
	int64_t stall_ms;	/* a daemon's mean time between them, or 0 */
	struct rng timing_rng;	/* -H: reloads of the lease's settings */
	struct rng write_rng;	/* ties to writes (TIE_WRITE) */
	/*
	 * -H: E/breadcrumb written by hand (fault_crumb_tie()), a stream of
	 * its own again; the zxid of the last such write, and whether one
	 * is on its way
	 */
	struct rng crumb_rng;
	int64_t crumb_hand_zxid;
	int crumb_hand_due;
	int tie_write;		/* those drawn at all */
	int64_t timing_ms;	/* their mean time between, or 0 */
	int npeers;
	struct peer peer[SIM_MAX_PEERS];
	struct pcheck pc[SIM_MAX_PEERS];
	struct server srv[SIM_SERVERS];
	struct quorum qu;
	struct conn **conns;
	int nconns, capconns;
	struct msg *msg_pool;	/* free lists (conn.c) */
	struct zreq *zreq_pool;
	int64_t T;		/* the negotiated session timeout of the run */
	int64_t link_block[SIM_MAX_PEERS][SIM_SERVERS];
	int64_t auth_until;	/* the servers refuse our credentials */
	/* An ACL without DELETE on E, E/candidates, E/claims, E/priority
	 * (the acl fault): their children's deletes are refused until then */
	int64_t acl_until[4];
	struct fault_cfg fc;
	int quiet;		/* faults have stopped */
	int64_t quiet_at, end_at, bound_ms;
	/*
	 * (idle): the last moment something happened that a daemon may
	 * answer with requests: a change of the tree, a session event, an
	 * operator's command, a start or a wake-up (check_final.c).
	 */
	int64_t stir_at;
	int64_t idle_slack;
	/*
	 * (hand), check_hand.c: the last release applied, whose first
	 * candidate held the first claim (0: none to watch), and the last
	 * fault or operator's command.
	 */
	int64_t hand_zxid, hand_sid, hand_at;
	int64_t fault_at;
	int failed;
	char why[512];
	struct sim_stats st;
	int64_t admin_last;	/* the last administrator's delete */
	/* The quorum's zxid now and then (check_ops.c): a ring, 1 s apart. */
	int64_t zhist_t[256], zhist_z[256];
	int zhist_n;
	int64_t crumb_admin_at;	/* ... of E/breadcrumb */
	int64_t claim_taken[32];	/* sessions whose claim an */
	int nclaim_taken;		/* administrator deleted (a ring) */
	int forged;		/* markers made by hand (forge-mark's
				 * deletes are not counted: the core makes
				 * its own again) */
	int claims_seen;	/* the core takes claims (E/claims) */
	/* check_ops.c: a switchover's handoff began: the next promote */
	int sw_next_on;
	int sw_next_from;	/* ...of a daemon other than this one */
	char sw_next[SIM_PATH];	/* ...is this node's while it exists */
	int64_t last_epoch;	/* of the last promote */
	int last_epoch_peer;
	char last_epoch_node[SIM_PATH];
	/* every candidate node ever created: its czxid (epochs), when
	 * the quorum made it, and whether a request of its own session
	 * deleted it */
	struct {
		char name[64];
		int64_t czxid;
		int64_t at;
		int released;
	} *born;
	int nborn, capborn;
	/* -X: trace_hash.c */
	int th_on;
	uint64_t th_hash, th_events;
	/* trace ring */
	char **ring;
	int ring_n, ring_pos, ring_cap;
};

/* sim.c: how a run is made, from the command line. */
struct sim_opts {
	int verbose;		/* print the trace as it goes */
	int tracing;		/* keep the last N lines, print on failure */
	uint32_t disabled;	/* fault kinds never injected (1 << kind) */
	int64_t tick_ms;	/* model follower touch batching (0: off) */
	int sabotage;		/* enum sabotage_kind (0: none) */
	int switchover;		/* F_SWITCHOVER may be drawn (-W, w=1) */
	int priorities;		/* priorities, F_PRIORITY, F_FORGE_MARK (-P) */
	int lease_model;	/* -L (l=1): see sim.c */
	int big_tick;		/* -K (K=1): ticks up to T, implies -L */
	int avail;		/* -A (A=1): no needless demote */
	int resume;		/* crashes resume, F_REEXEC (-R) */
	int reloads;		/* F_RUN_EXIT, F_CHECK_RELOAD may be drawn (-H) */
	int hash;		/* -X: hash what the core got and gave */
	int tie;		/* -y: tied faults: 0 drawn per run, -1 none,
				 * N > 0 every run at N per mille */
	int tie_write;		/* ties to writes too (TIE_WRITE): 0 yes,
				 * -1 no (seeds.txt lines without z=1) */
	int stall;		/* -Y: loop stalls: 0 drawn per run, -1 none,
				 * N > 0 every run, one each N ms a daemon */
};
int sim_run(uint64_t seed, const struct sim_opts *o, struct sim_stats *st,
    char *why, size_t whylen);

/* seeds.c: one line of tests/sim/seeds.txt. */
struct seed_entry {
	uint64_t seed;
	struct sim_opts opts;	/* D= and k= */
	int mutant;		/* m=: the mutant it finds, or 0 */
};
int seeds_load(const char *path, struct seed_entry **out, int *n);
void sim_push(struct sim *s, int64_t t, enum ev_type type, int peer,
    int a, int b, int64_t x, void *p);
/* Copies src into dst; a model string too long for its field is a bug in
 * the model, never cut silently: it aborts. */
void sim_copy(char *dst, size_t len, const char *src);

/* peer.c */
void peer_setup(struct sim *s, int i);
int64_t peer_draw_priority(struct sim *s);
int64_t peer_draw_check_interval(struct sim *s);
void peer_start(struct sim *s, struct peer *p);
void peer_crash(struct sim *s, struct peer *p);
void peer_reexec(struct sim *s, struct peer *p);
void peer_free(struct sim *s, struct peer *p);
void peer_event(struct sim *s, struct peer *p, const struct ev *ev);
void peer_session(struct sim *s, struct peer *p, enum el_zk state);
void peer_reply(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep);
void peer_reply_pd(struct sim *s, struct peer *p, const struct cpending *pd,
    const struct zreply *rep, int conn);
void peer_watch(struct sim *s, struct peer *p, enum wev wev,
    const char *path);
void peer_dispatch(struct sim *s, struct peer *p, const struct ev *ev);

/* check_state.c: invariant (st), the core's transition table */
void check_state_transition(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_state_step(struct sim *s, struct peer *p,
    const struct election_view *v);
void check_state_hook(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_state_ack(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_state_reaped(struct sim *s, struct peer *p);

/* trace_hash.c: -X */
enum th_event_kind {
	TH_SESSION, TH_REPLY, TH_WATCH, TH_HOOK_DONE, TH_OPERATOR, TH_QUEUE,
};
void th_start(struct sim *s, int on);
void th_event(struct sim *s, const struct peer *p, int kind, int64_t a,
    int64_t b, const char *str);
void th_result(struct sim *s, const struct peer *p, enum el_op op,
    const struct el_result *res);
void th_queue(struct sim *s, const struct peer *p, const struct el_queue *q);
void th_action(struct sim *s, const struct peer *p,
    const struct el_action *act);
void th_step(struct sim *s, const struct peer *p);

/* slot.c */
void slot_start(struct sim *s, struct peer *p, const struct el_action *act);
void slot_cancel(struct sim *s, struct peer *p, const struct el_action *act);
void slot_exit(struct sim *s, struct peer *p, int seq, int ok);
void slot_kill(struct sim *s, struct peer *p, int seq);
void slot_reap(struct sim *s, struct peer *p, int seq);
void slot_abort(struct sim *s, struct peer *p);

/* freeze.c */
void freeze_start(struct sim *s, struct peer *p, int64_t ms);
void freeze_defer(struct peer *p, const struct ev *ev);
void freeze_wake(struct sim *s, struct peer *p, int gen);
/* stall.c: the daemon's loop stalls while its client library runs */
void stall_init(struct sim *s, const struct sim_opts *o, uint64_t seed);
void stall_event(struct sim *s, const struct ev *ev);
int stall_library_event(const struct peer *p, const struct ev *ev);
int stall_defer_reply(struct sim *s, struct peer *p,
    const struct cpending *pd, const struct zreply *rep, int conn);
int stall_defer_watch(struct sim *s, struct peer *p, enum wev wev,
    const char *path);
int stall_defer_session(struct sim *s, struct peer *p, enum el_zk state);
void stall_news(struct sim *s, struct peer *p, const struct ev *ev);
void stall_news_free(struct ev *ev);
int64_t stall_told_zxid(const struct peer *p);
void peer_operator(struct sim *s, struct peer *p, int cmd);
void peer_step(struct sim *s, struct peer *p);
struct peer *peer_of_session(struct sim *s, int64_t sid);
int peer_is_live_candidate(const struct peer *p);

enum op_cmd {
	OP_RESIGN,
	OP_PAUSE,
	OP_RESUME,
	OP_STOP,
	OP_SET_DATA,
	OP_SWITCHOVER,
	OP_PRIORITY,
	OP_RUN_EXIT,
	OP_CHECK_RELOAD,
	OP_TIMING_RELOAD,
	OP_TIMING_HEAL,		/* at the quiet point: tick_time true again */
};

/* fault.c */
void fault_config(struct sim *s);
void fault_next(struct sim *s);
void fault_apply(struct sim *s, const struct ev *ev);
void fault_quiet(struct sim *s);
/* The moves a fault may be tied to (fault_tie()). */
enum tie_move {
	TIE_HOOK,		/* a hook started */
	TIE_CANCEL,		/* a hook killed, or asked to end */
	TIE_RELEASE,		/* a release sent */
	TIE_RESTART,		/* a new session asked for */
	TIE_RESUME,		/* a session resumed at a start */
	TIE_WRITE,		/* another write sent (ack, claim, marker...) */
	TIE_NMOVES
};
void fault_tie(struct sim *s, struct peer *p, enum tie_move move,
    int64_t window);
void fault_crumb_tie(struct sim *s, struct peer *p, enum el_op op);
enum hook_fate fault_hook_fate(struct sim *s, struct peer *p,
    enum hook_kind kind, int64_t *duration);
const char *fault_name(int kind);
/* Parses "kind,kind" into a mask of 1 << kind; -1 on an unknown name. */
int fault_kinds(const char *list, uint32_t *mask);

/* check.c */
void check_hook_start(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_hook_exit(struct sim *s, struct peer *p, enum hook_kind kind,
    int ok);
void check_action(struct sim *s, struct peer *p, const struct el_action *act);
void check_step(struct sim *s, struct peer *p,
    const struct election_view *v);
void check_advance(struct sim *s, int64_t t);
void check_freeze(struct sim *s, struct peer *p);
void check_wake(struct sim *s, struct peer *p);
void check_crash(struct sim *s, struct peer *p);
void check_resumed(struct sim *s, struct peer *p, enum role role);
void check_crumb_deleted(struct sim *s);
void check_start(struct sim *s, struct peer *p);
int64_t check_epoch_of(const char *data);
void check_crumb_heard(struct sim *s, struct peer *p);
void check_zxid_note(struct sim *s);
int check_hand_deleted(struct sim *s, const struct peer *p);
/* check_queue.c */
void check_queue_commit(struct sim *s, const struct zreq *req, int64_t sid);
void check_queue_hook(struct sim *s, struct peer *p, const char *node,
    enum hook_kind kind);

/* check_lease.c */
void check_lease_grace(struct sim *s, struct peer *p,
    const struct election_view *v);
void check_lease_step(struct sim *s, struct peer *p,
    const struct election_view *v);
void check_lease_expired(struct sim *s, int64_t sid);
void check_lease_promote(struct sim *s, struct peer *p, enum hook_kind kind);
void check_lease_resumed(struct sim *s, struct peer *p, const char *why);
void check_lease_demote(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_lease_requested(struct sim *s, struct peer *p);
void check_lease_connected(struct sim *s, struct peer *p, int64_t sid,
    int conn);
void check_ack_lost(struct sim *s, struct peer *p, const struct cpending *pd);
void check_promote_failed(struct sim *s, struct peer *p, const char *what,
    const char *reason);
void check_release_reply(struct sim *s, struct peer *p,
    const struct cpending *pd, int rc);
void check_release_refused(struct sim *s, struct peer *p, enum el_op op,
    int rc);
void check_release_crumb(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_release_answer(struct sim *s, struct peer *p, enum el_op op,
    int rc);
void check_release_unheld(struct sim *s, const struct zreq *r);
void check_mark_told(struct sim *s, const struct peer *p, int deleted,
    const char *path);
/* check_hand.c */
void check_hand_release(struct sim *s, const struct zreq *r);
void check_hand_notified(struct sim *s, struct peer *p, int64_t zxid);
void check_hand_promoted(struct sim *s, struct peer *p);
void check_hand_reply(struct sim *s, struct peer *p, enum el_op op,
    int64_t sent);
void check_hand_resume(struct sim *s, struct peer *p,
    const struct el_resume *r);
void check_hand_cancel(struct sim *s, struct peer *p);
void check_hand_startup(struct sim *s, struct peer *p, const char *why);
int check_hand_resumed_preempted(struct sim *s, struct peer *p);
void check_lease_reply(struct sim *s, struct peer *p,
    const struct cpending *pd, int rc, int conn);
void check_lease_freeze(struct sim *s, struct peer *p);
void check_lease_wake(struct sim *s, struct peer *p);
void check_lease_cancel(struct sim *s, struct peer *p);

/* check_final.c */
void check_final(struct sim *s);
void check_idle_sync(struct sim *s, struct peer *p);
void check_idle_queue(struct sim *s, struct peer *p);

/* check_data.c: (data), what an operator set is what the others see */
void check_data_final(struct sim *s, int leader);
void check_crumb_data(struct sim *s);

/* check_ops.c: switchovers, priorities, answers (issue 19) */
void check_ops_action(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_ops_timeout(struct sim *s, struct peer *p);
void check_ops_given_up(struct sim *s, struct peer *p, const char *why);
void check_health_result(struct peer *p, int ok);
void check_health_reload(struct peer *p);
void check_health_start(struct sim *s, struct peer *p, int hook);
void check_health_due(struct sim *s, struct peer *p, int64_t t);
void check_ops_paused(struct sim *s, struct peer *p);
void check_ops_resigned(struct sim *s, struct peer *p);
void check_ops_resign_rel(struct sim *s, struct peer *p, enum el_op op,
    int rc);
void check_ops_commit(struct sim *s, const struct zreq *req, int64_t sid);
void check_ops_stop_end(struct sim *s, struct peer *p);
void check_backoff(struct sim *s, struct peer *p, enum hook_kind kind);
void check_ops_keep(struct sim *s, struct peer *p, enum el_state st,
    int64_t t);
void check_ops_marks(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep);
void check_ops_step(struct sim *s, struct peer *p,
    const struct election_view *v);
void check_ops_final(struct sim *s);
void check_ops_operator(struct sim *s, struct peer *p);
void check_ops_demote(struct sim *s, struct peer *p, const char *reason);
int check_queue_has_node(struct sim *s, int64_t sid, int64_t after,
    int64_t before);
void check_ops_promote(struct sim *s, struct peer *p, const char *node);
void check_ops_queue_read(struct sim *s, struct peer *p,
    const struct el_queue *q);

/* ops.c: preempt.c and switchover.c of the simulated daemon */
void ops_queue_ask(struct sim *s, struct peer *p);
void ops_queue_answer(struct sim *s, struct peer *p, const struct ev *ev);
void ops_switch_listed(struct peer *p, char *const *children, int n);
void ops_switch_begin(struct sim *s, struct peer *p, const char *node,
    const char *id, int preempt);
void ops_switch_step(struct sim *s, struct peer *p);
int64_t ops_bound_ms(const struct sim *s);
int64_t ops_draw_preempt_delay(struct sim *s);
void ops_operator(struct sim *s, struct peer *p, int cmd);
void ops_timing_init(struct sim *s, uint64_t seed);
void ops_timing_event(struct sim *s);
void ops_timing_tie(struct sim *s, struct peer *p);
void peer_grace_reload(struct sim *s, struct peer *p, struct rng *r);
void check_fail(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sabotage.c: lies of the model, to show that an invariant fires. */
enum sabotage_kind {
	SAB_NONE,
	SAB_QUEUE,		/* listings leave out the head: (j) */
	SAB_CRUMB,		/* E/breadcrumb reads as absent: (i) */
	SAB_LEADER_WATCH,	/* E/leader's creation never notified: (f) */
	SAB_NKINDS,
};
/* The kind named, or -1. */
int sabotage_parse(const char *name);
const char *sabotage_name(int kind);
/* What the violation it causes must say. */
const char *sabotage_want(int kind);
void sabotage_children(struct sim *s, int64_t sid, const char *path,
    char **names, int *n);
int sabotage_absent(struct sim *s, const char *path);
int sabotage_mute(struct sim *s, enum wev wev, const char *path);

/* trace.c */
void trace(struct sim *s, int peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void trace_init(struct sim *s, int cap);
void trace_dump(struct sim *s);
void trace_free(struct sim *s);
const char *trace_op(enum el_op op);
const char *trace_hook(enum hook_kind k);
const char *trace_rc(int rc);

#endif
