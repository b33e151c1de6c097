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
 *   quorum.c   the ZooKeeper leader: zxids, commits, the txn log, sessions
 *              and their expiry
 *   server.c   the three servers: replicas that apply the log, watches,
 *              requests served in order, cut-offs from the quorum
 *   conn.c     TCP connections: FIFO per direction, latency, partitions
 *   client.c   the ZooKeeper client library inside each daemon: connect,
 *              reconnect, pings, timeouts, watch re-registration
 *   peer.c     one zkelectd: feeds the election its events and performs
 *              its actions, hooks, freezes, crashes, operator requests
 *   fault.c    the fault schedule of a run
 *   check.c    the invariants, checked on every step
 *   trace.c    the readable trace of a run
 *   sim.c      one run: setup, the event loop, the end
 *   main.c     the command line: a campaign of seeds
 */
#ifndef ZKELECTD_SIM_H
#define ZKELECTD_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "election.h"
#include "log.h"

#define SIM_SERVERS	3
#define SIM_MAX_PEERS	7
#define SIM_PATH	112
#define SIM_DATA	160
#define SIM_ROOT	"/zkelectd/svc"
#define SIM_CANDS	SIM_ROOT "/candidates"
#define SIM_LEADER	SIM_ROOT "/leader"
#define SIM_CRUMB	SIM_ROOT "/breadcrumb"
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
	EV_FAULT,		/* the next fault of the schedule */
	EV_QUIET,		/* faults stop */
	EV_END,			/* the convergence bound is over */
};

struct ev {
	int64_t t;
	uint64_t seq;
	enum ev_type type;
	int peer;		/* the daemon it is for, or -1 */
	int inc;		/* the daemon's incarnation it is for */
	int a, b;
	int64_t x;
	void *p;
};

struct evq {
	struct ev *heap;
	int n, cap;
	uint64_t seq;
};
void evq_init(struct evq *q);
void evq_free(struct evq *q);
void evq_push(struct evq *q, const struct ev *ev);
int evq_pop(struct evq *q, struct ev *out);

/* ztree.c */
struct znode {
	char path[SIM_PATH];
	char data[SIM_DATA];
	int64_t czxid, mzxid, owner;
	int32_t version, cversion;
};

struct ztree {
	struct znode *v;
	int n, cap;
};
void ztree_init(struct ztree *t);
void ztree_free(struct ztree *t);
void ztree_copy(struct ztree *dst, const struct ztree *src);
struct znode *ztree_get(const struct ztree *t, const char *path);
/* The parent of path, or NULL for "/" and paths whose parent is "/". */
struct znode *ztree_parent(const struct ztree *t, const char *path);
int ztree_has_children(const struct ztree *t, const char *path);
/* Names (not paths) of path's children, sorted by name; *out is freed by
 * ztree_names_free. Returns the count. */
int ztree_children(const struct ztree *t, const char *path, char ***out);
void ztree_names_free(char **names, int n);
struct znode *ztree_add(struct ztree *t, const char *path, const char *data,
    int64_t zxid, int64_t owner);
void ztree_del(struct ztree *t, const char *path);

/* quorum.c: one committed transaction, as every server replays it. */
enum chg_kind {
	CHG_CREATE,
	CHG_DELETE,
	CHG_SET,
};

struct change {
	enum chg_kind kind;
	char path[SIM_PATH];
	char data[SIM_DATA];
	int64_t owner;
};

struct txn {
	int64_t zxid;
	int64_t closed_sid;	/* a closeSession: the server drops it */
	int nchg;
	struct change *chg;
};

/* What a request asks and what it got: the model's wire format. */
enum zreq_kind {
	ZR_CREATE,
	ZR_GET,
	ZR_EXISTS,
	ZR_CHILDREN,
	ZR_MULTI,
	ZR_SYNC,
};

struct zmop {
	enum zk_mop_kind kind;
	char path[SIM_PATH];
	char data[SIM_DATA];
};

struct zreply {
	int rc;
	int64_t zxid;		/* the server's last applied zxid */
	char path[SIM_PATH];	/* CREATE */
	char data[SIM_DATA];
	int64_t czxid, mzxid, owner;
	int32_t version;
	char **children;
	int nchildren;
};

enum zreq_state {
	ZS_QUEUED,
	ZS_FORWARDED,		/* on its way to the quorum's leader */
	ZS_COMMITTED,		/* reply once applied here */
	ZS_LOST,		/* the leader never got it */
};

struct zreq {
	struct zreq *next;	/* in the server's per-connection queue */
	int64_t xid;
	enum zreq_kind kind;
	int flags;		/* CREATE: 1 ephemeral, 2 sequential */
	int watch;
	char path[SIM_PATH];
	char data[SIM_DATA];
	struct zmop mop[EL_MAX_SUBOPS];
	int nmop;
	/* server side */
	int state;		/* enum zreq_state */
	int orphan;		/* its connection closed while forwarded */
	int64_t sid;
	int conn;
	int64_t wait_zxid;	/* reply once the server applied this */
	struct zreply res;
};

/* conn.c: messages on the wire. */
enum msg_type {
	M_CONNECT,		/* c2s: sid (0: new session), last zxid seen */
	M_REQUEST,		/* c2s */
	M_PING,			/* c2s */
	M_CLOSE_SESSION,	/* c2s: zookeeper_close() */
	M_HANGUP,		/* either way: the TCP connection is gone */
	M_CONNECTED,		/* s2c: sid, negotiated timeout */
	M_EXPIRED,		/* s2c: the session is gone (then hangup) */
	M_AUTH_FAILED,		/* s2c: credentials refused (then hangup) */
	M_REPLY,		/* s2c */
	M_WATCH,		/* s2c */
	M_PONG,			/* s2c */
};

enum wkind {
	W_DATA,
	W_EXIST,
};

enum wev {
	WE_CREATED,
	WE_DELETED,
	WE_CHANGED,
};

struct msg {
	enum msg_type type;
	int64_t sid, zxid, timeout;
	struct zreq *req;	/* REQUEST: owned by the server once it arrives */
	struct zreply rep;	/* REPLY */
	int64_t xid;		/* REPLY */
	enum wev wev;		/* WATCH */
	char path[SIM_PATH];	/* WATCH */
	/* CONNECT: the client's watches, for setWatches */
	int nwatch;
	struct cwatch *watches;
};

struct conn {
	int id;
	int peer, client_gen;	/* the client end */
	int server;
	int srv_inc;		/* the server's conn_inc when accepted */
	int c_open, s_open;	/* each end's view */
	int64_t sid;		/* once the handshake is done */
	int established;
	int64_t c2s_last, s2c_last;	/* FIFO: arrival of the last message */
	struct zreq *q_head, *q_tail;	/* server: requests in order */
	/* the handshake, while the leader revalidates the session */
	int64_t hs_sid, hs_zxid, hs_timeout;
	struct cwatch *hs_watches;
	int hs_nwatch;
};

/* server.c */
enum srv_state {
	SRV_UP,
	SRV_CUT,		/* cut off from the quorum, has not noticed */
	SRV_DOWN,		/* noticed (or crashed): no clients, no replica */
};

struct swatch {
	int conn;
	enum wkind kind;
	char path[SIM_PATH];
};

struct server {
	int idx;
	enum srv_state state;
	int inc;		/* bumped at every cut and rejoin: what the
				 * server had in flight with the quorum is void */
	int conn_inc;		/* bumped when it drops every client */
	struct ztree tree;
	int applied;		/* count of txns of the log applied */
	int64_t applied_zxid;
	int64_t apply_last;	/* when the last scheduled apply happens */
	int64_t lag_ms;		/* how far behind the quorum it applies */
	int64_t fwd_last;	/* FIFO to the leader: last arrival there */
	struct swatch *w;
	int nw, capw;
	int64_t *touched;	/* sessions heard since the last report */
	int ntouched, captouched;
};

/* quorum.c */
struct qsession {
	int64_t sid;
	int64_t timeout;
	int64_t last_touch;
	int owner;		/* the server it last connected through */
	int live;
	int check_pending;
};

struct quorum {
	int64_t zxid;
	struct ztree tree;
	struct txn *log;
	int nlog, caplog;
	struct qsession *s;
	int ns, caps;
	uint64_t sid_next;
};

/* client.c: the library inside one daemon. */
enum cl_state {
	CL_CONNECTING,
	CL_CONNECTED,
	CL_EXPIRED,		/* or auth failed: the handle is dead */
	CL_CLOSED,
};

struct cwatch {
	enum wkind kind;
	char path[SIM_PATH];
};

struct cpending {
	int64_t xid;
	enum el_op op;
	struct zreq *unsent;	/* issued while connecting: sent once connected */
	enum zreq_kind kind;
	int watch;
	char path[SIM_PATH];
};

#define SIM_MAX_PENDING 32

struct client {
	int gen;		/* bumped by every zookeeper_init */
	enum cl_state state;
	int64_t sid;
	int64_t timeout;	/* requested, then negotiated */
	int conn;		/* -1 when none */
	int handshake;		/* the current conn waits for CONNECTED */
	int next_server;
	int attempts;		/* connection attempts since the last success */
	int64_t last_recv, last_send;
	int64_t last_zxid;
	int64_t xid_next;
	struct cpending pend[SIM_MAX_PENDING];	/* awaiting replies */
	int npend;
	struct cwatch *w;
	int nw, capw;
};

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
	struct election *el;
	int running;		/* the process exists */
	int inc;		/* incarnation: bumped at every (re)start */
	int stopped;		/* exited after EL_ACT_STOPPED */
	struct client cl;
	int out_el, out_sync;	/* election requests and syncs out */
	int in_step;
	int freeze_gen;
	int frozen;
	int64_t frozen_from, wake_at;
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
	int hook_ok;
	int64_t timer_at;	/* the pending EV_PEER_TIMER, or SIM_NEVER */
	int timer_gen;
	int busy;		/* consecutive steps with deadline <= now */
	char fence_id[16];	/* whom the running fence hook fences */
	char fence_node[SIM_PATH];	/* the node it fences for */
	int64_t fence_epoch;
	enum role last_role;	/* after its last step */
	int64_t last_lease;
	int64_t auth_failed_at;	/* its last AUTH_FAILED */
	int64_t restarts[16];	/* when the last sessions were replaced */
	int nrestarts;
	/* the operator's waiting clients */
	int resign_wait, pause_wait;
	int64_t resign_since, pause_since;
};

/* check.c: what the checker remembers of each daemon. */
struct pcheck {
	int open;		/* between promote start and demote end */
	int64_t open_at;
	int64_t epoch;
	int excused;		/* frozen past its lease, or crashed */
	int64_t demote_at_freeze;	/* lease_end - demote_timeout then */
	int last_pd;		/* 'P', 'D' or 0 this incarnation */
	int fenced_between;	/* a fence ran since the last demote */
	int must_demote;	/* woke past its lease: demote first */
	char node[SIM_PATH];
	int64_t sid;		/* the session it promoted in */
	char fenced_node[SIM_PATH];	/* the node of its last good fence */
	int64_t admin_at;	/* an administrator last deleted a node of
				 * its session (E/leader included) */
};

/* fault.c: the knobs of a run and what it injected. */
struct fault_cfg {
	int64_t fault_ms;	/* length of the faulty phase */
	int64_t mean_gap_ms;	/* mean time between faults */
	int w[16];		/* weights of the fault kinds */
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
	uint64_t faults[16];
	uint64_t promotes, demotes, expiries, losses;
	uint64_t fence_lost;	/* fences whose session ended meanwhile */
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
	int npeers;
	struct peer peer[SIM_MAX_PEERS];
	struct pcheck pc[SIM_MAX_PEERS];
	struct server srv[SIM_SERVERS];
	struct quorum qu;
	struct conn **conns;
	int nconns, capconns;
	int64_t T;		/* the negotiated session timeout of the run */
	int64_t link_block[SIM_MAX_PEERS][SIM_SERVERS];
	int64_t auth_until;	/* the servers refuse our credentials */
	struct fault_cfg fc;
	int quiet;		/* faults have stopped */
	int64_t quiet_at, end_at, bound_ms;
	int failed;
	char why[512];
	struct sim_stats st;
	int64_t admin_last;	/* the last administrator's delete */
	int64_t last_epoch;	/* of the last promote */
	int last_epoch_peer;
	char last_epoch_node[SIM_PATH];
	/* every candidate node ever created: its czxid (epochs) */
	struct {
		char name[64];
		int64_t czxid;
	} *born;
	int nborn, capborn;
	/* trace ring */
	char **ring;
	int ring_n, ring_pos, ring_cap;
};

/* sim.c: how a run is made, from the command line. */
struct sim_opts {
	int verbose;		/* print the trace as it goes */
	int tracing;		/* keep the last N lines, print them on failure */
	uint32_t disabled;	/* fault kinds never injected (1 << kind) */
	int64_t tick_ms;	/* model follower touch batching (0: off) */
};
int sim_run(uint64_t seed, const struct sim_opts *o, struct sim_stats *st,
    char *why, size_t whylen);
void sim_push(struct sim *s, int64_t t, enum ev_type type, int peer,
    int a, int b, int64_t x, void *p);
/* Copies src into dst; a model string too long for its field is a bug in
 * the model, never cut silently: it aborts. */
void sim_copy(char *dst, size_t len, const char *src);

/* quorum.c */
void quorum_init(struct sim *s);
void quorum_free(struct sim *s);
int64_t quorum_session_new(struct sim *s, int64_t timeout);
struct qsession *quorum_session(struct sim *s, int64_t sid);
void quorum_touch(struct sim *s, int64_t sid);
void quorum_expire_check(struct sim *s, int64_t sid);
/* Commits req of session sid: fills req->res and appends a txn (its zxid
 * in req->wait_zxid); a read-only outcome commits nothing. */
void quorum_commit(struct sim *s, struct zreq *req, int64_t sid, int srv);
void quorum_txn_apply(struct ztree *t, const struct txn *x);
void quorum_close_session(struct sim *s, int64_t sid, const char *why);
/* An administrator's zkCli: deletes path (NONODE is fine). */
void quorum_admin_delete(struct sim *s, const char *path);
int64_t quorum_born_czxid(const struct sim *s, const char *name);

/* server.c */
void server_init(struct sim *s);
void server_free(struct sim *s);
void server_on_commit(struct sim *s);
void server_apply(struct sim *s, int srv, int inc);
void server_receive(struct sim *s, struct conn *c, struct msg *m);
void server_forwarded(struct sim *s, struct zreq *req, int conn, int srv,
    int inc);
void server_revalidate(struct sim *s, int conn, int inc);
void server_cut(struct sim *s, int srv, int64_t notice_ms);
void server_notice(struct sim *s, int srv, int inc);
void server_rejoin(struct sim *s, int srv, int inc);
void server_lag(struct sim *s, int srv, int64_t lag_ms);
void server_report(struct sim *s, int srv);
void server_conn_gone(struct sim *s, struct conn *c);

/* conn.c */
struct conn *conn_new(struct sim *s, int peer, int client_gen, int srv);
struct conn *conn_get(struct sim *s, int id);
void conn_send_c2s(struct sim *s, struct conn *c, struct msg *m);
void conn_send_s2c(struct sim *s, struct conn *c, struct msg *m);
struct msg *msg_new(enum msg_type type);
void msg_free(struct msg *m);
void conn_free_all(struct sim *s);
int64_t conn_latency(struct sim *s);

/* client.c */
void client_open(struct sim *s, struct peer *p);
void client_close(struct sim *s, struct peer *p, int send_close);
void client_receive(struct sim *s, struct peer *p, struct conn *c,
    struct msg *m);
void client_timer(struct sim *s, struct peer *p, const struct ev *ev);
/* Sends a request; returns ZOK or a synchronous error (no reply then). */
int client_request(struct sim *s, struct peer *p, struct zreq *req,
    enum el_op op);
void client_blip(struct sim *s, struct peer *p);
void client_free(struct client *cl);

/* peer.c */
void peer_setup(struct sim *s, int i);
void peer_start(struct sim *s, struct peer *p);
void peer_crash(struct sim *s, struct peer *p);
void peer_free(struct peer *p);
void peer_event(struct sim *s, struct peer *p, const struct ev *ev);
void peer_session(struct sim *s, struct peer *p, enum el_zk state);
void peer_reply(struct sim *s, struct peer *p, enum el_op op,
    const struct zreply *rep);
void peer_watch(struct sim *s, struct peer *p, enum wev wev,
    const char *path);
void peer_freeze(struct sim *s, struct peer *p, int64_t ms);
void peer_operator(struct sim *s, struct peer *p, int cmd);
void peer_step(struct sim *s, struct peer *p);
int peer_is_live_candidate(const struct peer *p);

enum op_cmd {
	OP_RESIGN,
	OP_PAUSE,
	OP_RESUME,
	OP_STOP,
	OP_SET_DATA,
};

/* fault.c */
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
	F_NKINDS,
};
void fault_config(struct sim *s);
void fault_next(struct sim *s);
void fault_apply(struct sim *s, const struct ev *ev);
void fault_quiet(struct sim *s);
enum hook_fate fault_hook_fate(struct sim *s, struct peer *p,
    enum hook_kind kind, int64_t *duration);
const char *fault_name(int kind);

/* check.c */
void check_hook_start(struct sim *s, struct peer *p,
    const struct el_action *act);
void check_hook_exit(struct sim *s, struct peer *p, enum hook_kind kind,
    int ok);
void check_action(struct sim *s, struct peer *p, const struct el_action *act);
void check_step(struct sim *s, struct peer *p);
void check_advance(struct sim *s, int64_t t);
void check_freeze(struct sim *s, struct peer *p);
void check_wake(struct sim *s, struct peer *p);
void check_crash(struct sim *s, struct peer *p);
void check_start(struct sim *s, struct peer *p);
void check_answers(struct sim *s);
void check_final(struct sim *s);
void check_fail(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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
