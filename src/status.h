/* The status file: key=value lines, rewritten atomically on every change. */
#ifndef ZKELECTD_STATUS_H
#define ZKELECTD_STATUS_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct textbuf;

struct status {
	const char *service;
	const char *id;
	const char *role;
	const char *leader;
	const char *leader_data;
	int64_t epoch;
	int candidates;
	const char *zk_state;
	int64_t session;
	pid_t pid;
	time_t since;
	time_t updated;
	const char *mode;
	const char *data;
	int64_t my_epoch;
	const char *last_error;
	const char *lease_error;	/* "" or why this node may not lead */
	int queue_position;	/* 1-based; 0 when not queued */
	int64_t priority;	/* election.priority */
	int paused;
	int healthy;
	time_t backoff_until;	/* 0 when none */
	time_t last_transition;	/* 0 before the first */
	pid_t run_pid;		/* hooks.run's process group; 0 when none */
	time_t run_since;	/* when it started; 0 when none */
};

/* Renders the lines ("key=value\n"...) or one JSON object; caller frees. */
char *status_render(const struct status *st, int json);
/*
 * One member of a JSON object as status_render() writes it, after a comma
 * when comma is set: "key":"v" with quote, backslash and control bytes
 * escaped (v must already be valid UTF-8, as candidate_clean() makes
 * peers' text), or "key":v.
 */
void status_json_str(struct textbuf *b, const char *key, const char *v,
    int comma);
void status_json_num(struct textbuf *b, const char *key, int64_t v,
    int comma);
/*
 * Writes text to path through a temporary file created exclusively in the
 * same directory, then rename; no fsync.  The temporary file is the path
 * with STATUS_TMP_SUFFIX, and whatever stands there is unlinked first.
 */
#define STATUS_TMP_SUFFIX	".tmp"
int status_write(const char *path, const char *text);
/* The same, the file created with mode (before the umask). */
int status_write_mode(const char *path, const char *text, mode_t mode);

#endif
