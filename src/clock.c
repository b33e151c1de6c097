/*
 * The clocks. A clock that cannot be read leaves nothing to time the
 * election with, and nothing to log the failure with either (the logger
 * reads the clock): abort().
 */
#include <sys/time.h>

#include <stdlib.h>
#include <time.h>

#include "clock.h"

int64_t
now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1 &&
	    clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		abort();
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
wall_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		abort();
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
clock_timeval(struct timeval *tv, int64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)((ms % 1000) * 1000);
}
