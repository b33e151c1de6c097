/*
 * The ensemble's own leader, with -L (the lease model), as ZooKeeper's
 * server does it (apache/zookeeper, zookeeper-server/.../server):
 *  - Sessions expire in buckets: ExpiryQueue rounds now + timeout up to
 *    the next multiple of tickTime (quorum_touch()).
 *  - A touch made on the leader's server counts at once; a follower keeps
 *    a touch table and sends it with its answer to the leader's PING
 *    (Learner.ping()), which the leader sends to every learner every
 *    tickTime/2 (Leader.lead()); the leader's LearnerHandler then touches
 *    each session, from its own clock. A follower that drops out first
 *    never reports what it heard.
 *  - A reconnection is revalidated by the leader (REVALIDATE, handled by
 *    Leader.revalidateSession() -> checkIfValidGlobalSession() ->
 *    touchSession()): server_revalidate() touches at the quorum.
 *  - A leader lost (crashed, or cut off from a quorum of followers) makes
 *    every learner shut its server down and close its clients
 *    (Learner.shutdown() -> closeAllConnections()) once it notices,
 *    after up to syncLimit ticks; meanwhile no write or sync is answered.
 *    No session expires without a leader. The new leader builds its
 *    SessionTrackerImpl from the sessions of its tree and tracks each
 *    from now: every session gets a whole timeout again.
 */
#include <stdio.h>

#include "sim.h"

static void
ensemble_ping_next(struct sim *s, int64_t delay)
{
	sim_push(s, s->now + delay, EV_ENS_PING, -1, s->qu.ping_gen, 0, 0,
	    NULL);
}

void
ensemble_init(struct sim *s)
{
	if (!s->lease_model)
		return;
	s->qu.leader = (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
	ensemble_ping_next(s, rng_between(&s->rng, 1, s->tick_ms / 2));
}

/* Whether a touch on server srv counts at the quorum at once. */
int
ensemble_leads(const struct sim *s, int srv)
{
	return !s->lease_model || s->qu.leader == srv;
}

/* The leader's PING round: each follower in the quorum reports. */
void
ensemble_ping(struct sim *s, int gen)
{
	int i;

	if (gen != s->qu.ping_gen || s->qu.electing)
		return;
	for (i = 0; i < SIM_SERVERS; i++)
		if (i != s->qu.leader)
			server_report_touches(s, i);
	ensemble_ping_next(s, s->tick_ms / 2);
}

/*
 * The leader is lost: followers notice after notice_ms (then every
 * server drops its clients), and elect a new one.
 */
void
ensemble_elect_start(struct sim *s, int64_t notice_ms)
{
	int i;

	if (!s->lease_model || s->qu.electing)
		return;
	s->st.elections++;
	s->qu.electing = 1;
	s->qu.ping_gen++;
	trace(s, -1, "ensemble: leader server %d lost, followers notice in "
	    "%lld ms", s->qu.leader, (long long)notice_ms);
	s->qu.leader = -1;
	for (i = 0; i < SIM_SERVERS; i++)
		if (s->srv[i].state == SRV_UP)
			server_cut(s, i, notice_ms);
	sim_push(s, s->now + notice_ms, EV_ELECT, -1, 1, s->qu.ping_gen, 0,
	    NULL);
}

/* The followers noticed: every server drops its clients, then votes. */
static void
ensemble_noticed(struct sim *s)
{
	int i;

	s->qu.electing = 2;
	for (i = 0; i < SIM_SERVERS; i++)
		if (s->srv[i].state != SRV_DOWN)
			server_notice(s, i, s->srv[i].inc);
	sim_push(s, s->now + rng_between(&s->rng, 200, 3000), EV_ELECT, -1, 2,
	    s->qu.ping_gen, 0, NULL);
}

/* A new leader: every server follows it, every session starts over. */
static void
ensemble_elected(struct sim *s)
{
	int i;

	s->qu.leader = (int)rng_between(&s->rng, 0, SIM_SERVERS - 1);
	s->qu.electing = 0;
	trace(s, -1, "ensemble: server %d leads, every session renewed",
	    s->qu.leader);
	for (i = 0; i < SIM_SERVERS; i++)
		server_up(s, i);
	for (i = 0; i < s->qu.ns; i++)
		if (s->qu.s[i].live)
			quorum_touch(s, s->qu.s[i].sid);
	ensemble_ping_next(s, rng_between(&s->rng, 1, s->tick_ms / 2));
}

void
ensemble_elect(struct sim *s, int phase, int gen)
{
	if (gen != s->qu.ping_gen || s->qu.electing != phase)
		return;
	if (phase == 1)
		ensemble_noticed(s);
	else
		ensemble_elected(s);
}

/* Faults stop: an election under way ends within 3 s. */
void
ensemble_quiet(struct sim *s)
{
	if (s->qu.electing == 1)
		ensemble_noticed(s);
}
