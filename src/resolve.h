/*
 * Host lists resolved off the event loop: getaddrinfo() may wait on DNS for
 * as long as resolv.conf's timeouts allow, and the loop runs the lease's
 * deadline, the hooks and the clients.
 */
#ifndef ZKELECTD_RESOLVE_H
#define ZKELECTD_RESOLVE_H

#include <stdint.h>

struct event_base;
struct resolver;

/*
 * The answer for list hosts, on the loop: numeric (addresses, for the
 * client library) or, when NULL, why it cannot be used.
 */
typedef void (*resolver_fn)(const char *hosts, const char *numeric,
    const char *why, void *arg);

struct resolver *resolver_new(struct event_base *base, resolver_fn fn,
    void *arg);
/*
 * Resolves hosts for a move from list from (zk_hosts_numeric()); fn is
 * called once, with the answer or, after timeout_ms, with why there is
 * none. A resolution under way is given up (its fn never called).
 */
void resolver_start(struct resolver *r, const char *from, const char *hosts,
    int64_t timeout_ms);
void resolver_cancel(struct resolver *r);
/* The list being resolved, or NULL. */
const char *resolver_pending(const struct resolver *r);
void resolver_free(struct resolver *r);

#endif
