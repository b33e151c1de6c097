/* The daemon's event loop, as every part of it expects it. */
#include <event2/event.h>

#include "log.h"
#include "loop.h"

/*
 * The event loop's base. Its timers count from when they are added, not
 * from the time libevent caches when the loop wakes up: a timer added at
 * the end of a long step (a busy machine, a slow spawn) would otherwise
 * be cut short by the step's length, and a 100 ms check "timed out after
 * 0 ms", a failure that made a healthy leader leave the election.
 */
struct event_base *
loop_base_new(void)
{
	struct event_config *ec;
	struct event_base *base;

	if ((ec = event_config_new()) == NULL ||
	    event_config_set_flag(ec, EVENT_BASE_FLAG_NO_CACHE_TIME) == -1)
		fatalx("event_config");
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}
