/*
 * The readable trace of a run: virtual time, daemon, what happened. It
 * costs nothing unless asked for: a campaign runs without it, and a
 * failing seed is run again with it (the run is deterministic), keeping
 * the last lines in a ring, or printing every line as it comes (-v).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "sim.h"
#include "xmalloc.h"

void
trace_init(struct sim *s, int cap)
{
	s->ring_cap = cap;
	s->ring_n = s->ring_pos = 0;
	s->ring = cap > 0 ? xcalloc((size_t)cap, sizeof(*s->ring)) : NULL;
}

void
trace_free(struct sim *s)
{
	int i;

	for (i = 0; i < s->ring_cap; i++)
		free(s->ring[i]);
	free(s->ring);
	s->ring = NULL;
	s->ring_cap = 0;
}

void
trace(struct sim *s, int peer, const char *fmt, ...)
{
	char msg[512], *line;
	va_list ap;

	if (!s->verbose && !s->tracing)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)xasprintf(&line, "%6lld.%03lld %-3s %s",
	    (long long)(s->now / 1000), (long long)(s->now % 1000),
	    peer >= 0 ? s->peer[peer].id : "--", msg);
	if (s->verbose)
		(void)printf("%s\n", line);
	if (s->ring_cap == 0) {
		free(line);
		return;
	}
	free(s->ring[s->ring_pos]);
	s->ring[s->ring_pos] = line;
	s->ring_pos = (s->ring_pos + 1) % s->ring_cap;
	if (s->ring_n < s->ring_cap)
		s->ring_n++;
}

void
trace_dump(struct sim *s)
{
	int i, start = (s->ring_pos - s->ring_n + s->ring_cap) %
	    (s->ring_cap > 0 ? s->ring_cap : 1);

	for (i = 0; i < s->ring_n; i++)
		(void)printf("  %s\n", s->ring[(start + i) % s->ring_cap]);
}

const char *
trace_op(enum el_op op)
{
	switch (op) {
	case EL_OP_NONE:
	case EL_OP_COUNT:
		return "none";
	case EL_OP_PARENT:
		return "PARENT";
	case EL_OP_CREATE:
		return "CREATE";
	case EL_OP_LIST:
		return "LIST";
	case EL_OP_WATCH_PRED:
		return "WATCH_PRED";
	case EL_OP_WATCH_OWN:
		return "WATCH_OWN";
	case EL_OP_LEADER:
		return "LEADER";
	case EL_OP_LEADER_EXISTS:
		return "LEADER_EXISTS";
	case EL_OP_BREADCRUMB:
		return "BREADCRUMB";
	case EL_OP_ACK:
		return "ACK";
	case EL_OP_RELEASE:
		return "RELEASE";
	case EL_OP_SET_DATA:
		return "SET_DATA";
	case EL_OP_SYNC:
		return "SYNC";
	case EL_OP_CLAIM:
		return "CLAIM";
	case EL_OP_CLAIM_WATCH:
		return "CLAIM_WATCH";
	case EL_OP_CLAIM_OWN:
		return "CLAIM_OWN";
	case EL_OP_UNCLAIM:
		return "UNCLAIM";
	case EL_OP_MARK_OWN:
		return "MARK_OWN";
	case EL_OP_CLAIMS:
		return "CLAIMS";
	case EL_OP_CRUMB_EXISTS:
		return "CRUMB_EXISTS";
	case EL_OP_MARK:
		return "MARK";
	case EL_OP_UNMARK:
		return "UNMARK";
	case EL_OP_MARKS:
		return "MARKS";
	case EL_OP_SW_DELETE:
		return "SW_DELETE";
	}
	return "?";
}

const char *
trace_hook(enum hook_kind k)
{
	switch (k) {
	case HOOK_PROMOTE:
		return "promote";
	case HOOK_DEMOTE:
		return "demote";
	case HOOK_FENCE:
		return "fence";
	case HOOK_CHECK:
		return "check";
	case HOOK_NOTIFY:
		return "notify";
	case HOOK_RUN:
		return "run";
	}
	return "?";
}

const char *
trace_rc(int rc)
{
	switch (rc) {
	case ZOK:
		return "ok";
	case ZNONODE:
		return "NONODE";
	case ZNODEEXISTS:
		return "NODEEXISTS";
	case ZCONNECTIONLOSS:
		return "CONNECTIONLOSS";
	case ZSESSIONEXPIRED:
		return "SESSIONEXPIRED";
	case ZINVALIDSTATE:
		return "INVALIDSTATE";
	case ZNOTEMPTY:
		return "NOTEMPTY";
	case ZBADVERSION:
		return "BADVERSION";
	case ZNOCHILDRENFOREPHEMERALS:
		return "NOCHILDRENFOREPHEMERALS";
	case ZSESSIONMOVED:
		return "SESSIONMOVED";
	default:
		return "error";
	}
}
