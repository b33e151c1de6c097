/* The configuration: INI file plus -o overrides, validated as a whole. */
#ifndef ZKELECTD_CONFIG_H
#define ZKELECTD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_DEFAULT_PATH "/etc/zkelectd/zkelectd.conf"
#define CONFIG_RUNDIR "/run/zkelectd"

enum config_mode {
	CONFIG_MODE_CANDIDATE,
	CONFIG_MODE_OBSERVER,
};

/* One control.http_listen address, numeric and checked. */
struct config_listen {
	char *host;		/* "127.0.0.1", "::1", "0.0.0.0" */
	int port;
	char *name;		/* as logged: "127.0.0.1:8008", "[::1]:8008" */
};

struct config {
	char *path;		/* file it was read from */

	char *hosts;		/* zookeeper.hosts */
	int64_t session_timeout_ms;
	int64_t tick_ms;	/* zookeeper.tick_time: the ensemble's */
	char *root;		/* no trailing slash, "/zkelectd" by default */
	char *auth;		/* "user:password" part of digest:..., or NULL */

	char *service;
	char *id;		/* defaults to the hostname */
	char *data;		/* "" by default */
	enum config_mode mode;
	int64_t disconnect_grace_ms;	/* -1: lease (the default) */
	int64_t priority;	/* election.priority, 0 by default */
	int64_t preempt_delay_ms;	/* -1: never */

	char *hook_promote;	/* NULL when unset */
	char *hook_demote;
	char *hook_fence;
	char *hook_check;
	char *hook_notify;	/* on every change of leader, beside the slot */
	char *hook_run;		/* the leader's supervised process */
	int64_t run_stop_timeout_ms;	/* its SIGTERM to SIGKILL, at most */
	int64_t hook_timeout_ms;
	int64_t demote_timeout_ms;	/* session_timeout/4 unless set */
	int demote_timeout_set;		/* set in the file: checked, not derived */
	int64_t check_interval_ms;
	int64_t check_fall;
	int64_t check_rise;
	int64_t retry_backoff_ms;
	int demote_on_start;

	char *socket_path;	/* /run/zkelectd/<service>.sock by default */
	int socket_mode;	/* 0660 */
	char *socket_group;	/* NULL when unset */
	char *status_file;	/* /run/zkelectd/<service>.status by default */
	int log_level;		/* syslog priority, LOG_INFO by default */
	int64_t max_clients;	/* control.max_clients, 256 */
	struct config_listen *http_listen;	/* control.http_listen */
	size_t nhttp_listen;			/* 0: no HTTP endpoint */
};

/*
 * Reads path, applies the "section.key=value" overrides in order, fills the
 * defaults and validates. On success returns 0 and *cfg owns its strings.
 * On failure returns -1, *cfg is left empty and err holds one line such as
 * "/etc/zkelectd/zkelectd.conf:7: zookeeper.session_timeout: bad duration".
 */
int config_load(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, char *err, size_t errlen);
/*
 * config_load() for -t: also refuses what the start would and can be
 * looked up without side effects (a control.socket_group no group has).
 */
int config_check(struct config *cfg, const char *path, char *const *overrides,
    size_t noverrides, char *err, size_t errlen);
void config_free(struct config *cfg);

/* Whether two configurations name the same HTTP addresses, in order. */
int config_listen_equal(const struct config *a, const struct config *b);
/* Replaces dst's HTTP addresses with a copy of src's. */
void config_listen_copy(struct config *dst, const struct config *src);

/*
 * The keys a running daemon cannot take over (config_fixed.c): a reload
 * keeps them, a re-exec that would change one is refused. Their count,
 * the name of the i-th ("control.socket") and its value in c as text
 * (newly allocated); config_keep_fixed() puts old's values into nc, and
 * returns 1 when nc's hooks.demote_timeout, not less than a third of the
 * session timeout kept, was refused for old's (0 otherwise).
 */
size_t config_fixed_count(void);
const char *config_fixed_name(size_t i);
char *config_fixed_value(const struct config *c, size_t i);
int config_keep_fixed(struct config *nc, const struct config *old);

/* The election path <root>/<service>, newly allocated. */
char *config_election_path(const struct config *cfg);

#endif
