/*
 * Peer data, rendered. A hostile ZooKeeper answers every request of the
 * real election core of a real daemon from the input: return codes,
 * children's names, and the data of E/leader, E/breadcrumb and the
 * candidates' nodes (which go through candidate_kv() as in the daemon).
 * Then status, status json, leader, watch, role, metrics, history (and
 * members and members json, whose replies come from the end of the
 * input) are asked through the control socket and must be valid: the
 * JSON parses, the status lines are sourceable and show what the
 * election knows, the metrics lines are well formed, nothing holds a
 * control byte or invalid UTF-8. Label escaping is fed raw bytes too.
 * What ZooKeeper itself decides is honest (our node's path and owner);
 * what peers write is not.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "fuzz_check.h"
#include "fuzz_daemon.h"
#include "util.h"
#include "xmalloc.h"

#define FUZZ_STEPS	200
#define FUZZ_KIDS_MAX	6
#define FUZZ_OWN_SID	0x1000000000000a01LL
#define FUZZ_PEER_SID	0x2000000000000b02LL

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static unsigned
fuzz_byte(struct fuzz_in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

/*
 * A string, length first: a byte, and when it is 255 a second one that
 * adds four times its value (up to 1275 bytes). NUL-terminated copy.
 */
static char *
fuzz_str(struct fuzz_in *in)
{
	size_t len = fuzz_byte(in), i;
	char *s;

	if (len == 255)
		len += (size_t)fuzz_byte(in) * 4;

	if (len > in->n)
		len = in->n;
	s = xmalloc(len + 1);
	for (i = 0; i < len; i++)
		s[i] = (char)fuzz_byte(in);
	s[len] = '\0';
	return s;
}

static int
fuzz_rc(struct fuzz_in *in)
{
	static const int rcs[] = { ZOK, ZOK, ZOK, ZOK, ZOK, ZNONODE,
	    ZNODEEXISTS, ZCONNECTIONLOSS, ZNOAUTH, ZBADVERSION, ZSESSIONEXPIRED,
	    ZOPERATIONTIMEOUT, ZOK, ZOK, ZOK, ZNONODE };

	return rcs[fuzz_byte(in) % (sizeof(rcs) / sizeof(rcs[0]))];
}

static int64_t
fuzz_owner(struct fuzz_in *in)
{
	switch (fuzz_byte(in) % 3) {
	case 0:
		return FUZZ_PEER_SID;
	case 1:
		return FUZZ_OWN_SID;
	default:
		return 0;
	}
}

/* One request of the election, answered from the input. */
/*
 * Children of a listing after the first nkids: names a peer could have
 * made (PREFIX-<peer sid>_<sequence>) or any name, as the input says.
 */
static int
fuzz_kids(struct fuzz_in *in, char **kids, int nkids, const char *prefix)
{
	unsigned k;

	while (nkids < FUZZ_KIDS_MAX && (k = fuzz_byte(in) % 3) != 0) {
		if (k == 1)
			(void)xasprintf(&kids[nkids++], "%s-%016llx_%010u",
			    prefix, (unsigned long long)FUZZ_PEER_SID,
			    fuzz_byte(in));
		else
			kids[nkids++] = fuzz_str(in);
	}
	return nkids;
}

static void
fuzz_answer(struct daemon *d, struct fuzz_in *in, const struct el_action *act,
    char *node, size_t nodelen)
{
	struct el_result res;
	char *kids[FUZZ_KIDS_MAX + 1], *data = NULL, *path = NULL;
	const char *slash;
	int i, nkids = 0;

	memset(&res, 0, sizeof(res));
	res.rc = fuzz_rc(in);
#ifdef FUZZ_DEBUG
	fprintf(stderr, "op %s rc %d %s\n", election_op_name(act->op), res.rc,
	    act->path != NULL ? act->path : "");
#endif
	switch (act->op) {
	case EL_OP_CREATE:
		(void)xasprintf(&path, "%s%010u", act->path,
		    fuzz_byte(in) + 1);
		res.path = path;
		slash = strrchr(path, '/');
		(void)snprintf(node, nodelen, "%s", slash != NULL ? slash + 1 :
		    path);
		break;
	case EL_OP_LIST:
		if (node[0] != '\0' && fuzz_byte(in) % 4 != 3)
			kids[nkids++] = xstrdup(node);
		/* The peer's own node, or any name a peer could create. */
		nkids = fuzz_kids(in, kids, nkids, "candidate");
		res.children = kids;
		res.nchildren = nkids;
		break;
	case EL_OP_WATCH_OWN:
		/* Our own node: ZooKeeper tells the truth about it. */
		res.data = "";
		res.owner = FUZZ_OWN_SID;
		res.czxid = 4096 + fuzz_byte(in);
		break;
	case EL_OP_WATCH_PRED:
	case EL_OP_LEADER:
	case EL_OP_BREADCRUMB:
		res.data = data = fuzz_str(in);
		res.owner = fuzz_owner(in);
		res.czxid = (int64_t)fuzz_byte(in) << 8 | fuzz_byte(in);
		res.version = (int32_t)fuzz_byte(in);
		break;
	case EL_OP_CLAIMS:
		/* Claims of a peer, or any name a peer could create. */
		nkids = fuzz_kids(in, kids, nkids, "claim");
		res.children = kids;
		res.nchildren = nkids;
		break;
	case EL_OP_LEADER_EXISTS:
	case EL_OP_CLAIM_WATCH:
		res.owner = fuzz_owner(in);
		break;
	default:
		break;
	}
	election_op_done(d->el, act->op, &res);
	for (i = 0; i < nkids; i++)
		free(kids[i]);
	free(data);
	free(path);
}

/* The election runs until it waits and the input says no more. */
static void
fuzz_drive(struct daemon *d, struct fuzz_in *in)
{
	struct el_action act;
	struct election_view v;
	char node[256] = "";
	/* Ahead of the real clock, which the commands then cannot move. */
	int64_t now = now_ms() + 60000;
	int step;

	d->zk_state = ZOO_CONNECTED_STATE;
	election_clock(d->el, now);
	election_session(d->el, EL_ZK_CONNECTED, FUZZ_OWN_SID, 10000);
	for (step = 0; step < FUZZ_STEPS && in->n > 0; step++) {
		now += fuzz_byte(in) * 7;
		election_clock(d->el, now);
		election_next(d->el, &act);
		switch (act.type) {
		case EL_ACT_ZK:
			fuzz_answer(d, in, &act, node, sizeof(node));
			break;
		case EL_ACT_HOOK:
			election_hook_done(d->el, act.hook, fuzz_byte(in) % 4);
			break;
		case EL_ACT_RESTART:
			election_restarted(d->el);
			election_session(d->el, EL_ZK_CONNECTED, FUZZ_OWN_SID,
			    10000);
			break;
		case EL_ACT_NONE:
			/* Waiting: something changes in ZooKeeper. */
			election_watch(d->el, fuzz_byte(in) % 2,
			    fuzz_byte(in) % 2 ? "/zkelectd/fz/leader" :
			    "/zkelectd/fz/candidates");
			break;
		default:
			break;
		}
		/* What daemon_report() does at the end of every step. */
		election_view(d->el, &v);
		(void)history_note(&d->hist, wall_ms(), &v);
	}
}

static char *
fuzz_ask(struct daemon *d, const char *line)
{
	int closed;

	return fuzz_daemon_ask(d, line, strlen(line), &closed);
}

static void
fuzz_render_check(struct daemon *d)
{
	struct election_view v;
	char *ans, val[2048], *p, *t;
	const char *keys[] = { "id=", "data=", "epoch=" };
	int i;

	election_view(d->el, &v);
#ifdef FUZZ_DEBUG
	fprintf(stderr, "role %s leader \"%s\" data \"%s\" epoch %lld\n",
	    election_role_name(v.role), v.leader_id, v.leader_data,
	    (long long)v.leader_epoch);
#endif
	fuzz_expect(fuzz_clean(v.leader_id, strlen(v.leader_id)), "leader id",
	    v.leader_id);
	fuzz_expect(fuzz_clean(v.leader_data, strlen(v.leader_data)),
	    "leader data", v.leader_data);
	/* A leader never shows another as leader, whatever E/leader says. */
	FUZZ_ASSERT(v.role != ROLE_LEADER || v.leader_id[0] == '\0' ||
	    strcmp(v.leader_id, d->cfg.id) == 0, "leader shows \"%s\"",
	    v.leader_id);

	ans = fuzz_ask(d, "status\n");
	fuzz_expect(fuzz_status(ans, "leader", val, sizeof(val)), "status",
	    ans);
	FUZZ_ASSERT(strcmp(val, v.leader_id) == 0, "status leader \"%s\", "
	    "view \"%s\"", val, v.leader_id);
	fuzz_expect(fuzz_status(ans, "leader_data", val, sizeof(val)),
	    "status", ans);
	FUZZ_ASSERT(strcmp(val, v.leader_data) == 0, "status leader_data "
	    "\"%s\", view \"%s\"", val, v.leader_data);
	free(ans);

	ans = fuzz_ask(d, "status json\n");
	fuzz_expect(fuzz_json(ans), "status json", ans);
	free(ans);

	ans = fuzz_ask(d, "leader\n");
	for (i = 0, p = ans; i < 3; i++) {
		FUZZ_ASSERT(strncmp(p, keys[i], strlen(keys[i])) == 0 &&
		    strchr(p, '\n') != NULL, "leader answer: %s", ans);
		fuzz_expect(fuzz_clean(p, (size_t)(strchr(p, '\n') - p)),
		    "leader answer", ans);
		p = strchr(p, '\n') + 1;
	}
	FUZZ_ASSERT(*p == '\0', "leader answer: %s", ans);
	free(ans);

	ans = fuzz_ask(d, "metrics\n");
	fuzz_expect(fuzz_metrics(ans), "metrics", ans);
	free(ans);

	ans = fuzz_ask(d, "role\n");
	(void)snprintf(val, sizeof(val), "%s\n", election_role_name(v.role));
	FUZZ_ASSERT(strcmp(ans, val) == 0, "role: %s", ans);
	free(ans);

	/* time, from, to, reason, epoch, leader: six clean fields. */
	ans = fuzz_ask(d, "history\n");
	fuzz_expect(fuzz_utf8(ans, strlen(ans)), "history", ans);
	/* No entry yet: an empty answer, its newline added by ctl.c. */
	for (p = strcmp(ans, "\n") == 0 ? ans + 1 : ans; *p != '\0';
	    p = strchr(p, '\n') + 1) {
		FUZZ_ASSERT(strchr(p, '\n') != NULL, "history: %s", ans);
		for (i = 0, t = p; i < 5; i++, t++)
			FUZZ_ASSERT((t = strchr(t, '\t')) != NULL &&
			    t < strchr(p, '\n'), "history line: %s", ans);
		fuzz_expect(fuzz_clean(t, (size_t)(strchr(p, '\n') - t)),
		    "history leader", ans);
	}
	free(ans);

	ans = daemon_watch_line(d);
	fuzz_expect(fuzz_clean(ans, strlen(ans)), "watch line", ans);
	free(ans);
}

/*
 * ZooKeeper's replies to a members query: read from the input by the
 * first query, the same again for the next.
 */
struct fuzz_replies {
	char *kids[FUZZ_KIDS_MAX];
	int nkids;
	int rc;
	int reverse;
	char *datas[FUZZ_KIDS_MAX];
	int rcs[FUZZ_KIDS_MAX];
	int ndatas;
};

static void
fuzz_replies_free(struct fuzz_replies *r)
{
	int i;

	for (i = 0; i < r->nkids; i++)
		free(r->kids[i]);
	for (i = 0; i < r->ndatas; i++)
		free(r->datas[i]);
}

/*
 * Asks line (members or members json) and answers the daemon's own
 * requests (on a handle that never connects) from r, whatever r lacks
 * from in. Returns the answer, or NULL when the library refused the
 * listing while it was connecting (the answer checked here).
 */
static char *
fuzz_members_ask(struct daemon *d, const char *line, struct fuzz_replies *r,
    struct fuzz_in *in)
{
	struct fuzz_client c;
	struct zk_event ev;
	uint64_t tag, last;
	int i, closed;
	char *ans;

	tag = d->next_tag;
	fuzz_client_start(d, &c, line, strlen(line));
	FUZZ_ASSERT(d->next_tag == tag + 1, "%s sent no listing", line);
	tag = d->next_tag;
	if (c.closed) {
		ans = fuzz_client_finish(d, &c, &closed);
		FUZZ_ASSERT(strcmp(ans, "error zookeeper-unavailable\n") == 0,
		    "%s: %s", line, ans);
		free(ans);
		return NULL;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = ZK_EV_REPLY;
	ev.tag = tag;
	ev.rc = r->rc;
	ev.children = r->kids;
	ev.nchildren = r->nkids;
	FUZZ_ASSERT(queue_read_reply(d, &ev) == 1, "listing not taken");
	last = d->next_tag;
	/* The gets, each answered once, in order or backwards. */
	for (i = 0; tag + 1 + (uint64_t)i <= last; i++) {
		FUZZ_ASSERT(i < FUZZ_KIDS_MAX, "more gets than children");
		if (i == r->ndatas) {
			r->datas[i] = fuzz_str(in);
			r->rcs[i] = fuzz_rc(in) == ZOK ? ZOK : ZNONODE;
			r->ndatas++;
		}
		memset(&ev, 0, sizeof(ev));
		ev.type = ZK_EV_REPLY;
		ev.tag = r->reverse ? last - (uint64_t)i :
		    tag + 1 + (uint64_t)i;
		ev.rc = r->rcs[i];
		ev.data = r->datas[i];
		FUZZ_ASSERT(queue_read_reply(d, &ev) == 1, "get not taken");
	}
	ans = fuzz_client_finish(d, &c, &closed);
#ifdef FUZZ_DEBUG
	fprintf(stderr, "%s:\n%s", line, ans);
#endif
	FUZZ_ASSERT(closed, "%s not answered: %s", line, ans);
	return ans;
}

/*
 * members: the listing and each node's data come from the input, as
 * ZooKeeper's replies. Each line is "seq<TAB>id<TAB>data", clean, in
 * order; members json, given the same replies, is strict JSON with one
 * object per line.
 */
static void
fuzz_members(struct daemon *d, struct fuzz_in *in)
{
	struct fuzz_replies r;
	char *ans, *json, *p, *nl, *t, *t2;
	long long seq, prev = -1;
	int i, lines = 0, objects = 0;

	if (zk_open(d->zk, "127.0.0.1:1", 10000, NULL) == -1)
		FUZZ_FAIL("zk_open");
	d->zk_state = ZOO_CONNECTED_STATE;
	memset(&r, 0, sizeof(r));
	while (r.nkids < FUZZ_KIDS_MAX && (i = (int)fuzz_byte(in) % 3) != 0) {
		if (i == 1)
			(void)xasprintf(&r.kids[r.nkids++],
			    "candidate-%016llx_%010u",
			    (unsigned long long)FUZZ_PEER_SID + fuzz_byte(in),
			    fuzz_byte(in));
		else
			r.kids[r.nkids++] = fuzz_str(in);
	}
	r.rc = fuzz_rc(in);
	r.reverse = fuzz_byte(in) % 2;
	if ((ans = fuzz_members_ask(d, "members\n", &r, in)) == NULL) {
		fuzz_replies_free(&r);
		return;
	}
	fuzz_expect(fuzz_utf8(ans, strlen(ans)), "members", ans);
	if (strcmp(ans, "error zookeeper-unavailable\n") != 0 &&
	    strcmp(ans, "\n") != 0) {
		for (p = ans; *p != '\0'; p = nl + 1, lines++) {
			nl = strchr(p, '\n');
			FUZZ_ASSERT(nl != NULL, "members: %s", ans);
			seq = strtoll(p, &t, 10);
			FUZZ_ASSERT(t > p && *t == '\t' && seq >= prev,
			    "members line out of order: %s", ans);
			prev = seq;
			/* id and data: clean, so no third tab. */
			t2 = memchr(t + 1, '\t', (size_t)(nl - t - 1));
			FUZZ_ASSERT(t2 != NULL, "members line of two fields: %s",
			    ans);
			fuzz_expect(fuzz_clean(t + 1, (size_t)(t2 - t - 1)),
			    "members id", ans);
			fuzz_expect(fuzz_clean(t2 + 1, (size_t)(nl - t2 - 1)),
			    "members data", ans);
		}
	}

	if ((json = fuzz_members_ask(d, "members json\n", &r, in)) == NULL) {
		free(ans);
		fuzz_replies_free(&r);
		return;
	}
	if (strcmp(ans, "error zookeeper-unavailable\n") == 0)
		FUZZ_ASSERT(strcmp(json, ans) == 0, "members json: %s", json);
	else {
		fuzz_expect(fuzz_json(json), "members json", json);
		FUZZ_ASSERT(json[0] == '[', "members json: %s", json);
		/* A string holds no '{"' unescaped: these start the objects. */
		for (p = json; (p = strstr(p, "{\"seq\":")) != NULL; p++)
			objects++;
		FUZZ_ASSERT(objects == lines, "members json has %d objects, "
		    "members %d lines: %s%s", objects, lines, ans, json);
	}
	free(json);
	free(ans);
	fuzz_replies_free(&r);
}

/* Label escaping of raw bytes makes a valid sample line. */
static void
fuzz_label(struct fuzz_in *in)
{
	char *raw = fuzz_str(in), *esc, *line;

	esc = label_escape(raw);
	(void)xasprintf(&line, "zkelectd_x{id=\"%s\"} 1\n", esc);
	fuzz_expect(fuzz_metrics(line), "label_escape", line);
	free(line);
	free(esc);
	free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in, mem;
	struct daemon d;
	size_t memlen;

	if (size < 1 || size > 65536)
		return 0;
	/*
	 * The first byte says how much of the end of the input makes the
	 * replies to members; none, and members is not asked.
	 */
	memlen = (size_t)data[0] * 4;
	if (memlen > size - 1)
		memlen = size - 1;
	in.p = data + 1;
	in.n = size - 1 - memlen;
	mem.p = data + size - memlen;
	mem.n = memlen;
	fuzz_label(&in);
	fuzz_daemon_init(&d);
	fuzz_drive(&d, &in);
	fuzz_render_check(&d);
	/* Only when asked: a ZooKeeper handle costs two threads. */
	if (mem.n > 0)
		fuzz_members(&d, &mem);
	fuzz_daemon_free(&d);
	return 0;
}
