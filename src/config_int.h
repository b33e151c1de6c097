/*
 * The configuration's key table, shared by config.c (reading the file and
 * the -o overrides, reporting errors), config_value.c (checking and
 * storing each key's value) and config_path.c (the files keys name).
 */
#ifndef ZKELECTD_CONFIG_INT_H
#define ZKELECTD_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Room for the reason a setter gives, without the key's name. */
#define CONFIG_WHY_LEN		256

enum config_key_id {
	K_HOSTS, K_SESSION_TIMEOUT, K_TICK_TIME, K_ROOT, K_AUTH,
	K_SERVICE, K_ID, K_DATA, K_MODE, K_DISCONNECT_GRACE, K_PRIORITY,
	K_PREEMPT_DELAY,
	K_PROMOTE, K_DEMOTE, K_FENCE, K_CHECK, K_TIMEOUT, K_DEMOTE_TIMEOUT,
	K_CHECK_INTERVAL, K_CHECK_FALL, K_CHECK_RISE, K_RETRY_BACKOFF,
	K_DEMOTE_ON_START, K_NOTIFY, K_RUN, K_RUN_STOP_TIMEOUT,
	K_SOCKET, K_SOCKET_MODE, K_SOCKET_GROUP, K_STATUS_FILE, K_LOG_LEVEL,
	K_MAX_CLIENTS, K_HTTP_LISTEN,
	K_COUNT
};

/* A setter checks one value and stores it, or explains in why. */
struct config_key;
typedef int (*config_setter)(const struct config_key *, struct config *,
    const char *, char *);

struct config_key {
	const char	*section;
	const char	*name;
	config_setter	 set;
	size_t		 off;	/* field, for the generic setters */
	int64_t		 min;	/* range, or length of a string */
	int64_t		 max;
	int		 repeat;	/* may be set again: values add up */
};

/* Every key the file or -o may set, indexed by enum config_key_id. */
extern const struct config_key config_value_keys[K_COUNT];

/*
 * Checks value v for key id and stores it in cfg.  Returns 0, or -1 with
 * why (CONFIG_WHY_LEN bytes) holding the reason and cfg unchanged.
 */
int config_value_set(int id, struct config *cfg, const char *v, char *why);

/* Empties cfg's list of HTTP addresses. */
void config_value_listen_clear(struct config *cfg);

/*
 * Whether two of the files cfg names (the configuration file conf, the
 * socket, the session file beside it, the status file) are one, so that
 * writing one would replace another.  Returns -1 when they are apart, or
 * the key in the wrong (where says which keys the file or -o set, as in
 * config.c) with the reason in why, of len bytes.
 */
int config_path_clash(const struct config *cfg, const char *conf,
    const int *where, char *why, size_t len);

#endif
