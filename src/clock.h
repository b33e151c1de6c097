/*
 * The clocks, on the bottom floor: the logger times its repeated lines
 * with now_ms(), so the clocks may use nothing of the house.
 */
#ifndef ZKELECTD_CLOCK_H
#define ZKELECTD_CLOCK_H

#include <stdint.h>

struct timeval;

/* Milliseconds on CLOCK_BOOTTIME (keeps counting through suspend). */
int64_t now_ms(void);
/* Milliseconds since the epoch on the wall clock (CLOCK_REALTIME). */
int64_t wall_ms(void);
/* A duration of ms milliseconds (not negative) as a struct timeval. */
void clock_timeval(struct timeval *tv, int64_t ms);

#endif
