/*
 * The claims queue E/claims: the right to lead, prepared ahead.
 *
 * A claim is an ephemeral sequential node E/claims/claim-<sid>_<seq>,
 * made in a multi that checks our candidate node, by the heir while its
 * predecessor leads or by the head; the first claim of the queue is the
 * right to lead (why, and when a claim is made: election.c's header).
 * This file keeps what we know of our claim and says what it wants next
 * to know that ours is first: the listing that places it, and a watch on
 * the claim just before it, whose deletion is the release we wait for.
 * It decides nothing else and calls nothing of the election above it:
 * election.c sends what it asks for and election_event.c feeds it the
 * replies and notifications.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "election_int.h"
#include "xmalloc.h"

static void
el_claim_set(char **dst, const char *src)
{
	free(*dst);
	*dst = src != NULL ? xstrdup(src) : NULL;
}

void
el_claim_init(struct el_claim *cl, const char *path)
{
	memset(cl, 0, sizeof(*cl));
	(void)xasprintf(&cl->dir, "%s/claims", path);
	cl->known = 1;
}

void
el_claim_free(struct el_claim *cl)
{
	el_claim_forget(cl);
	free(cl->dir);
	free(cl->create);
	free(cl->data);
}

/* No claim of ours: released, or gone with the session. */
void
el_claim_forget(struct el_claim *cl)
{
	cl->have = 0;
	cl->known = 1;
	cl->heir = 0;
	el_claim_set(&cl->path, NULL);
	el_claim_set(&cl->node, NULL);
	el_claim_set(&cl->pred, NULL);
	cl->listed = 0;
	cl->first = 0;
	cl->pred_head = 0;
	cl->pred_watched = 0;
	cl->own_armed = 0;
	cl->own_watched = 0;
	cl->gone_sid = 0;
}

/*
 * Another connection: what a listing showed is read again, and the watch
 * set again. That ours is first stays true while it exists: nothing can
 * be queued before a node, and only our release or our session's end
 * deletes it.
 */
void
el_claim_invalidate(struct el_claim *cl)
{
	cl->listed = 0;
	cl->pred_watched = 0;
	cl->own_armed = 0;
	cl->own_watched = 0;
}

/*
 * Ours exists, we know which it is, it is the first, and it is watched:
 * a deletion by hand after the listing that placed it (or anyone's
 * delete of a stale claim, el_next_unclaim()) is told, or found by the
 * exists, before a promote can rest on it.
 */
int
el_claim_ready(const struct el_claim *cl)
{
	return cl->have && cl->known && cl->path != NULL && cl->first &&
	    (cl->own_watched || EL_MUTANT(88));
}

/*
 * What our claim wants next for us to know it is first, once we have one
 * (or do not know whether we have): the listing, or the watch on the one
 * before it. EL_OP_NONE when it is first, or when we wait for a watch.
 */
enum el_op
el_claim_want(struct el_claim *cl, struct el_action *act)
{
	if (!cl->known || (cl->have && (cl->path == NULL ||
	    (!cl->first && !cl->listed)))) {
		act->path = cl->dir;
		return EL_OP_CLAIMS;
	}
	if (!cl->have || cl->first || cl->pred_watched || cl->pred == NULL)
		return EL_OP_NONE;
	act->path = cl->pred;
	return EL_OP_CLAIM_WATCH;
}

/* The multi that makes our claim: our node must still be there. */
void
el_claim_build(struct election *el, struct el_action *act, int heir)
{
	struct el_claim *cl = &el->cl;

	free(cl->create);
	(void)xasprintf(&cl->create, "%s/" CANDIDATE_CLAIM_PREFIX "%016llx_",
	    cl->dir, (unsigned long long)el->sid);
	free(cl->data);
	(void)xasprintf(&cl->data, "id=%s\nepoch=%lld\n", el->id,
	    (long long)el->epoch);
	cl->heir = heir;
	act->nsub = 0;
	act->sub[0].kind = ZK_MOP_CHECK;
	act->sub[0].path = el->node_path;
	act->sub[0].data = NULL;
	act->sub[0].version = -1;
	act->sub[1].kind = ZK_MOP_CREATE_EPHEMERAL_SEQ;
	act->sub[1].path = cl->create;
	act->sub[1].data = cl->data;
	act->sub[1].version = -1;
	act->nsub = 2;
}

/*
 * The claim's multi answered rc: 1 when it is ours now (placed by a
 * listing next), 0 otherwise (the caller handles the error). After a
 * lost reply it may or may not have been made: listed to find out.
 */
int
el_claim_created(struct el_claim *cl, int rc)
{
	if (rc == ZOK) {
		cl->have = 1;
		cl->known = 1;
		cl->listed = 0;
		cl->first = 0;
		el_claim_set(&cl->path, NULL);
		return 1;
	}
	if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
		if (EL_MUTANT(13)) {
			cl->have = 0;	/* as if never made */
			cl->heir = 0;
		} else
			cl->known = 0;
	} else
		cl->heir = 0;
	return 0;
}

/*
 * E/claims listed: ours is found by our session id. The listing holds
 * ours, so it holds every claim made before ours (a server applies
 * transactions in order): the ones missing are deleted, and ours is
 * first if none is before it. -1 when E/claims is missing.
 */
int
el_claims_listed(struct el_claim *cl, const struct el_result *res,
    int64_t sid)
{
	struct candidate *c;
	char path[1024];
	int i, n, me = -1;

	if (res->rc == ZNONODE) {
		el_claim_forget(cl);
		return -1;
	}
	if (res->rc != ZOK)
		return 0;
	c = xcalloc((size_t)res->nchildren + 1, sizeof(*c));
	n = candidate_order_as(res->children, res->nchildren,
	    CANDIDATE_CLAIM_PREFIX, c);
	for (i = 0; i < n && me < 0; i++)
		if (c[i].sid == sid && sid != 0)
			me = i;
	if (me < 0) {
		free(c);
		el_claim_forget(cl);
		return 0;
	}
	cl->have = 1;
	cl->known = 1;
	el_claim_set(&cl->node, c[me].name);
	cl->seq = c[me].seq;
	(void)snprintf(path, sizeof(path), "%s/%s", cl->dir, c[me].name);
	if (cl->path == NULL || strcmp(cl->path, path) != 0) {
		cl->own_armed = 0;	/* another claim: watched anew */
		cl->own_watched = 0;
	}
	el_claim_set(&cl->path, path);
	cl->listed = 1;
	cl->first = me == 0;
	if (cl->first)
		cl->gone_sid = 0;
	cl->pred_head = me == 1;
	cl->pred_watched = 0;
	el_claim_set(&cl->pred, NULL);
	cl->pred_sid = 0;
	if (!EL_MUTANT(147))
		cl->queue_relisted = 0;
	if (me > 0) {
		(void)snprintf(path, sizeof(path), "%s/%s", cl->dir,
		    c[me - 1].name);
		el_claim_set(&cl->pred, path);
		cl->pred_sid = c[me - 1].sid;
	}
	free(c);
	return 0;
}

/* The exists with a watch on the claim before ours answered. */
int
el_claim_watched(struct el_claim *cl, const struct el_result *res)
{
	if (res->rc == ZOK) {
		cl->pred_watched = 1;
		return 0;
	}
	if (res->rc == ZNONODE) {
		cl->listed = 0;		/* gone already: listed again */
		return 0;
	}
	return -1;
}

/*
 * Our own claim is watched once we know its path, beside whatever else
 * goes out (an exists: its reply is waited for by nothing). The path to
 * watch, or NULL when it is watched, on its way, or not known.
 */
const char *
el_claim_own_want(struct el_claim *cl)
{
	if (!cl->have || !cl->known || cl->path == NULL || cl->own_armed ||
	    EL_MUTANT(88))
		return NULL;
	cl->own_armed = 1;
	return cl->path;
}

/*
 * The exists on our own claim answered: it was there, and its deletion
 * will be told (by hand: an administrator's); or it is gone already.
 */
int
el_claim_own_watched(struct el_claim *cl, const struct el_result *res)
{
	if (!cl->have || !cl->own_armed)
		return 0;	/* forgotten meanwhile (released, lost) */
	if (res->rc == ZOK) {
		cl->own_watched = 1;
		return 0;
	}
	if (res->rc == ZNONODE) {
		el_claim_forget(cl);
		return 0;
	}
	cl->own_armed = 0;
	return res->rc == ZCONNECTIONLOSS || res->rc == ZOPERATIONTIMEOUT ?
	    0 : -1;
}

/*
 * A notification on path: 1 if it was our claim or the claim before ours.
 * Ours deleted (by hand, or by our own release) is no claim: the head or
 * the heir makes another. The one before deleted makes ours first when it
 * was the first (nothing can be queued before a node that exists) and our
 * own was watched from before: its deletion, had it come first, would
 * have been told first (a connection's notifications come in zxid order).
 * Otherwise the queue is listed again.
 */
int
el_claim_watch(struct el_claim *cl, int deleted, const char *path)
{
	if (cl->path != NULL && strcmp(path, cl->path) == 0) {
		if (deleted)
			el_claim_forget(cl);
		else {
			cl->own_armed = 0;	/* new data: watched again */
			cl->own_watched = 0;
		}
		return 1;
	}
	if (cl->pred == NULL || strcmp(path, cl->pred) != 0)
		return 0;
	cl->pred_watched = 0;
	if (!deleted)
		return 1;	/* new data: the watch is set again */
	if (cl->pred_head && cl->listed &&
	    (cl->own_watched || EL_MUTANT(88))) {
		cl->first = 1;
		cl->gone_sid = 0;
		cl->pred_head = 0;
		el_claim_set(&cl->pred, NULL);
	} else
		cl->listed = 0;
	return 1;
}
