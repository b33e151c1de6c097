#ifndef ZKELECTD_LOOP_H
#define ZKELECTD_LOOP_H

/* The event loop's base: its timers count from when they are added. */
struct event_base;
struct event_base *loop_base_new(void);

#endif
