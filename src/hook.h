/*
 * Running hook commands: /bin/sh -c in their own process group, stdin from
 * /dev/null, output into the daemon's log, killed at their timeout.
 */
#ifndef ZKELECTD_HOOK_H
#define ZKELECTD_HOOK_H

#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct hook_runner;

enum hook_kind {
	HOOK_PROMOTE,
	HOOK_DEMOTE,
	HOOK_FENCE,
	HOOK_CHECK,
	HOOK_NOTIFY,		/* hooks.notify: beside the slot, never in it */
	HOOK_RUN,		/* hooks.run: the leader's process, beside it */
};

/* The kinds that share the hook slot (and the metrics' arrays). */
#define HOOK_SLOT_KINDS	4
#define HOOK_KINDS	6

/*
 * A hook is over when its shell has exited, but what it left running in
 * the background may still hold its output pipe, which the runner goes on
 * reading into the log. It does so for the last HOOK_LEFTOVERS_PER_KIND
 * ended hooks of each kind (a check that leaves a process at every run
 * must not take a promote's application off the log); an older one's pipe
 * is closed. HOOK_LEFTOVER_MAX is what they may hold in all, for the
 * daemon's descriptor budget.
 */
#define HOOK_LEFTOVERS_PER_KIND	2
#define HOOK_LEFTOVER_MAX	(HOOK_LEFTOVERS_PER_KIND * HOOK_KINDS)

struct hook_result {
	enum hook_kind kind;
	int ok;			/* exited with status 0 */
	int exit_code;		/* -1 when killed by a signal */
	int signo;		/* the signal that ended it, or 0 */
	int timed_out;
	int64_t timeout_ms;	/* the timeout it was given, 0 for none */
	int killed;		/* its group got SIGKILL */
	int64_t duration_ms;
	pid_t pid;
	int64_t reaped_us;	/* its SIGCHLD's turn of the loop (log_stamp) */
};

/* The last hook_run()'s trace stamps (log_stamp(): 0 unless debug). */
struct hook_stamps {
	int64_t entered;	/* hook_run() called */
	int64_t spawning;	/* posix_spawn() called */
	int64_t spawned;	/* it returned: the shell was exec'd */
};

typedef void (*hook_done_fn)(const struct hook_result *res, void *arg);

struct hook_runner *hook_runner_new(struct event_base *base);
/* Kills every hook still running (SIGKILL to each group) and frees. */
void hook_runner_free(struct hook_runner *hr);

/*
 * Starts cmd under /bin/sh -c with the daemon's environment plus env (a
 * NULL-terminated list of "NAME=value"). Its output is logged at info line
 * by line, but a check's is kept until it ends (the first 4 KiB): logged
 * at info if it failed, at debug if it passed. done is called once, from the
 * event loop, when the shell has been reaped. On timeout the group gets
 * SIGTERM, then SIGKILL 5 s later, and the run counts as failed; done
 * then waits until no process of the group is left, which the runner sees
 * without polling only if the process is the child subreaper
 * (PR_SET_CHILD_SUBREAPER) and calls hook_runner_reap() on SIGCHLD.
 * Returns the child's pid, or -1 (logged) when it could not be started,
 * a shell that cannot be executed included; done is then not called.
 * When the daemon is out of descriptors, the pipes of ended hooks'
 * leftovers are closed to make room, and the start tried once more.
 * A command of plain words whose first is a path is exec'd without the
 * shell (hook_words()), as the shell would, with PWD set as it would.
 */
pid_t hook_run(struct hook_runner *hr, enum hook_kind kind, const char *cmd,
    char *const env[], int64_t timeout_ms, hook_done_fn done, void *arg);

/*
 * cmd's words in argv (pointing into buf, a copy; argv has room for
 * maxwords, the NULL included) when /bin/sh -c would run it as one program
 * with those words untouched: hook_run() then execs that program itself.
 * Returns how many, or 0: shell syntax, a first word without '/', too
 * long.
 */
int hook_words(const char *cmd, char *buf, size_t bufsz, char *argv[],
    int maxwords);

void hook_last_stamps(const struct hook_runner *hr, struct hook_stamps *st);

/*
 * Takes over a child started before a re-exec (its pid, which is its
 * process group, and the read end of its output pipe, non-blocking, or -1
 * when its output had ended) as if hook_run() had started it now, with
 * no timeout.
 */
void hook_adopt(struct hook_runner *hr, enum hook_kind kind, pid_t pid,
    int fd, hook_done_fn done, void *arg);
/* The read end of a running hook's output pipe, or -1. */
int hook_output_fd(const struct hook_runner *hr, pid_t pid);
/* The time from a timeout's SIGTERM to the SIGKILL (5 s unless set). */
void hook_set_kill_delay(struct hook_runner *hr, pid_t pid, int64_t ms);
/*
 * Ends the hook as a timeout would: SIGTERM to its process group and
 * SIGKILL grace_ms later, or SIGKILL at once when grace_ms is 0. When
 * SIGTERM was sent already, the SIGKILL still to come moves to grace_ms
 * from now if that is sooner. done follows (not ok) once the group is
 * gone.
 */
void hook_cancel(struct hook_runner *hr, pid_t pid, int64_t grace_ms);

/* Reaps every exited child; call on SIGCHLD. */
void hook_runner_reap(struct hook_runner *hr);

/*
 * A child the daemon started itself, not through hook_run(), is reaped
 * by hook_runner_reap() too (it waits for any child): fn gets its pid and
 * wait status, and returns 1 when the child was its own.
 */
typedef int (*hook_other_fn)(pid_t pid, int status, void *arg);
void hook_runner_others(struct hook_runner *hr, hook_other_fn fn,
    void *arg);

/* Number of hooks running. */
int hook_runner_active(const struct hook_runner *hr);
/* Number of ended hooks whose output pipe is still read. */
int hook_runner_leftovers(const struct hook_runner *hr);

/*
 * How a hook that did not succeed ended, for a message that names the
 * hook first: "exited 3", "killed by signal 9", "timed out after 2000 ms
 * (killed at 7005 ms)".
 */
void hook_describe(const struct hook_result *res, char *buf, size_t len);

const char *hook_kind_name(enum hook_kind kind);
/* Whether an entry (NAME=value) of the daemon's environment reaches hooks. */
int hook_env_passed(const char *var);

#endif
