/* systemd notification: READY, STATUS, RELOADING, STOPPING and the watchdog. */
#ifndef ZKELECTD_NOTIFY_H
#define ZKELECTD_NOTIFY_H

#include <stdint.h>

struct event_base;
struct notify;

/* NULL-safe: without NOTIFY_SOCKET every call does nothing. */
struct notify *notify_new(struct event_base *base);
void notify_free(struct notify *n);
void notify_ready(struct notify *n);
void notify_status(struct notify *n, const char *text);
void notify_reloading(struct notify *n);
/* READY=1 again once a reload is finished; nothing before notify_ready(). */
void notify_ready_again(struct notify *n);
void notify_stopping(struct notify *n);

#endif
