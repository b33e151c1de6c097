/*
 * The unit tests' scripts read the actions that do something: the state
 * changes the core reports for the log (EL_ACT_TRANSITION) are skipped
 * here, and read where a test is about them (test_election.c's
 * test_state_*()).
 */
#ifndef ZKELECTD_TEST_NEXT_ACTION_H
#define ZKELECTD_TEST_NEXT_ACTION_H

#include "election.h"

static void
next_action(struct election *el, struct el_action *a)
{
	do
		election_next(el, a);
	while (a->type == EL_ACT_TRANSITION);
}

#endif
