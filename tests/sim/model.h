/*
 * The model ZooKeeper of the simulator: its trees, transactions, requests,
 * wire messages, connections, servers, quorum and client library. See
 * sim.h for how the files fit together.
 */
#ifndef ZKELECTD_SIM_MODEL_H
#define ZKELECTD_SIM_MODEL_H

#include <stdint.h>

#include "election.h"

struct sim;
struct peer;
struct ev;

#define SIM_SERVERS	3
#define SIM_MAX_PEERS	7
#define SIM_PATH	112
#define SIM_DATA	160
#define SIM_ROOT	"/zkelectd/svc"
#define SIM_CANDS	SIM_ROOT "/candidates"
#define SIM_LEADER	SIM_ROOT "/leader"
#define SIM_CRUMB	SIM_ROOT "/breadcrumb"
#define SIM_CLAIMS	SIM_ROOT "/claims"
#define SIM_MARKS	SIM_ROOT "/priority"

/* ztree.c */
struct znode {
	char path[SIM_PATH];
	char data[SIM_DATA];
	int64_t czxid, mzxid, owner;
	int64_t pzxid;		/* the last change of its children */
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
	int32_t version;	/* -1: any */
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
	/* MULTI: the version its last set left (the daemon asks for it). */
	int has_set_version;
	int32_t set_version;
};

enum zreq_state {
	ZS_QUEUED,
	ZS_FORWARDED,		/* on its way to the quorum's leader */
	ZS_COMMITTED,		/* reply once applied here */
	ZS_LOST,		/* the leader never got it */
};

struct zreq {
	struct zreq *next;	/* in the server's per-connection queue, or
				 * on the run's free list (conn.c) */
	int64_t xid;
	enum zreq_kind kind;
	int flags;		/* CREATE: 1 ephemeral, 2 sequential */
	int watch;
	int release;		/* the core's release (check_hand.c) */
	char path[SIM_PATH];
	char data[SIM_DATA];
	struct zmop *mop;	/* MULTI: nmop of them (zreq_free) */
	int nmop;
	/* server side */
	int state;		/* enum zreq_state */
	int orphan;		/* its connection closed while forwarded */
	int64_t sid;
	int conn;
	int64_t wait_zxid;	/* reply once the server applied this */
	struct zreply res;
};
struct zreq *zreq_new(struct sim *s);
void zreq_free(struct sim *s, struct zreq *r);

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
	W_CHILD,		/* getChildren's watch */
};

enum wev {
	WE_CREATED,
	WE_DELETED,
	WE_CHANGED,
	WE_CHILD,		/* a child created or deleted */
};

struct msg {
	enum msg_type type;
	int64_t sid, zxid, timeout;
	struct zreq *req;	/* REQUEST: the server's once it arrives */
	struct zreply rep;	/* REPLY */
	int64_t xid;		/* REPLY */
	enum wev wev;		/* WATCH */
	char path[SIM_PATH];	/* WATCH */
	/* CONNECT: the client's watches, for setWatches */
	int nwatch;
	struct cwatch *watches;
	struct msg *next;	/* on the run's free list (conn.c) */
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
	SRV_DOWN,		/* noticed (or crashed): no clients */
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
				 * server had in flight with the quorum is
				 * void */
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
	int64_t expire_at;	/* when the quorum expires it, untouched */
	int owner;		/* the server it last connected through */
	int live;
	int check_pending;
	int64_t expired_at;	/* the quorum expired it then (0: it did not) */
};

struct quorum {
	int64_t zxid;
	struct ztree tree;
	struct txn *log;
	int nlog, caplog;
	struct qsession *s;
	int ns, caps;
	uint64_t sid_next;
	/* -L: the server that leads the ensemble (its clients' touches
	 * count at once, the others' at its next ping), or -1 while the
	 * ensemble elects one */
	int leader;
	int electing;
	int ping_gen;
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
	int64_t sent;		/* when it went on the wire */
	int64_t issued;		/* when the daemon asked (its own clock's
				 * send time: <= sent) */
	int crumb;		/* a multi that writes E/breadcrumb */
	int64_t qzxid;		/* the quorum's zxid when it went on the wire
				 * (-1: never sent): what it applied has a
				 * later one */
	struct zreq *unsent;	/* issued while connecting: sent once
				 * connected */
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
	int64_t connected_at;	/* the current connection's handshake */
	int64_t last_zxid;
	int64_t xid_next;
	struct cpending pend[SIM_MAX_PENDING];	/* awaiting replies */
	int npend;
	struct cwatch *w;
	int nw, capw;
};


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
void quorum_admin_create(struct sim *s, const char *path);
int64_t quorum_admin_write(struct sim *s, const char *path,
    const char *data);
int64_t quorum_born_czxid(const struct sim *s, const char *name);
int64_t quorum_born_at(const struct sim *s, const char *name);

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
void server_report_touches(struct sim *s, int srv);
void server_up(struct sim *s, int srv);

/* ensemble.c */
void ensemble_init(struct sim *s);
int ensemble_leads(const struct sim *s, int srv);
void ensemble_ping(struct sim *s, int gen);
void ensemble_elect_start(struct sim *s, int64_t notice_ms);
void ensemble_elect(struct sim *s, int phase, int gen);
void ensemble_quiet(struct sim *s);
void server_conn_gone(struct sim *s, struct conn *c);

/* swatch.c */
void swatch_add(struct server *v, int conn, enum wkind kind,
    const char *path);
void swatch_notify(struct sim *s, struct conn *c, enum wev wev,
    const char *path, int64_t zxid);
void swatch_fire(struct sim *s, struct server *v, enum wkind kind,
    const char *path, enum wev wev, int64_t zxid);
void swatch_reregister(struct sim *s, struct conn *c);
void swatch_drop(struct server *v, int conn);

/* conn.c */
struct conn *conn_new(struct sim *s, int peer, int client_gen, int srv);
struct conn *conn_get(struct sim *s, int id);
void conn_send_c2s(struct sim *s, struct conn *c, struct msg *m);
void conn_send_s2c(struct sim *s, struct conn *c, struct msg *m);
struct msg *conn_msg_new(struct sim *s, enum msg_type type);
void conn_msg_free(struct sim *s, struct msg *m);
void conn_free_all(struct sim *s);
void conn_pool_free(struct sim *s);
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
void client_free(struct sim *s, struct client *cl);

#endif
