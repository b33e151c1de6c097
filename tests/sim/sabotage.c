/*
 * Deliberate lies of the model ZooKeeper (-B KIND, B=KIND in seeds.txt),
 * to show that an invariant fires: each kind feeds the real core a false
 * fact that a defect of the core could equally have made it believe, and
 * names the violation the checker must then report. The core itself is
 * never changed; a run with a sabotage is a test of check.c, not of it.
 */
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "candidate.h"
#include "sim.h"

static const struct {
	const char *name;
	const char *want;	/* in the violation it must cause */
} sabotage_kinds[SAB_NKINDS] = {
	[SAB_NONE] = { "none", "" },
	/* A listing without its head: the second believes it is first. */
	[SAB_QUEUE] = { "queue", "(j) " },
	/* E/breadcrumb read as absent: a promote skips its fence. */
	[SAB_CRUMB] = { "crumb", "(i) " },
	/* E/leader's creation never notified: its absence is believed. */
	[SAB_LEADER_WATCH] = { "leader-watch", ": reports leader " },
};

int
sabotage_parse(const char *name)
{
	int k;

	for (k = SAB_NONE + 1; k < SAB_NKINDS; k++)
		if (strcmp(name, sabotage_kinds[k].name) == 0)
			return k;
	return -1;
}

const char *
sabotage_name(int kind)
{
	return kind > SAB_NONE && kind < SAB_NKINDS ?
	    sabotage_kinds[kind].name : "none";
}

const char *
sabotage_want(int kind)
{
	return kind > SAB_NONE && kind < SAB_NKINDS ?
	    sabotage_kinds[kind].want : "";
}

/*
 * SAB_QUEUE: a listing of the candidates leaves out the first one, except
 * for its own session (so that the head does not lose its node).
 */
void
sabotage_children(struct sim *s, int64_t sid, const char *path,
    char **names, int *n)
{
	struct candidate c;
	int64_t first = -1;
	int i, head = -1;

	if (s->sabotage != SAB_QUEUE || strcmp(path, SIM_CANDS) != 0)
		return;
	for (i = 0; i < *n; i++)
		if (candidate_parse(names[i], &c) == 0 &&
		    (first < 0 || c.seq < first)) {
			first = c.seq;
			head = i;
		}
	if (head < 0 || (candidate_parse(names[head], &c) == 0 &&
	    c.sid == sid))
		return;
	free(names[head]);
	for (i = head; i + 1 < *n; i++)
		names[i] = names[i + 1];
	(*n)--;
}

/* SAB_CRUMB: a read of E/breadcrumb finds nothing. */
int
sabotage_absent(struct sim *s, const char *path)
{
	return s->sabotage == SAB_CRUMB && strcmp(path, SIM_CRUMB) == 0;
}

/* SAB_LEADER_WATCH: E/leader's creation is never notified. */
int
sabotage_mute(struct sim *s, enum wev wev, const char *path)
{
	return s->sabotage == SAB_LEADER_WATCH && wev == WE_CREATED &&
	    strcmp(path, SIM_LEADER) == 0;
}
