/*
 * build/sim: runs a campaign of simulated schedules.
 *
 *   sim [-s SEED] [-n COUNT] [-v] [-x] [-t LINES] [-l MAX] [-S] [-D KINDS]
 *       [-k TICK] [-B LIE] [-W] [-P] [-L] [-K] [-A] [-R] [-H] [-X] [-y N]
 *   sim -f FILE [-M] [-v] [-t LINES]
 *
 * Runs seeds SEED .. SEED+COUNT-1, or the lines of a seeds file (see
 * seeds.c): each must pass, or with -M (a simulator built with
 * EL_MUTANTS) each line marked m=N must fail with mutant N put back, and
 * each line marked B=LIE must fail with the violation its lie is for.
 * -B LIE makes the model ZooKeeper lie on purpose (sabotage.c: queue,
 * crumb, leader-watch), to show that an invariant of check.c fires.
 * The first failing seed is run again with a trace and its last LINES
 * lines (default 300, 0: none) are printed; -v prints the whole trace of
 * every run as it goes (for one seed). -x stops at the first failure; -l
 * prints at most MAX failing seeds (the count is always right).
 * -S prints what the runs injected; -D leaves out the fault kinds named
 * (comma-separated, as -S names them), to tell causes apart. -k TICK
 * models ZooKeeper's tickTime (capped at T/2): followers report the
 * sessions they heard from to the leader every TICK/2 instead of at once.
 * -L models the ensemble's leader, its tick (drawn per run), elections
 * and server restarts, and leaves some settings unset (README.md); -K
 * lets the tick reach T (implies -L); -A checks availability: no
 * needless demote (invariant AV). -y N gives every run faults tied to the
 * daemons' moves at N per mille of them (-y 0: none; unset, 4 runs in 10
 * draw theirs: fault_tie() in fault.c). -Y MS stalls each daemon's loop
 * while its client library runs, one stall every MS ms on average (-Y 0:
 * none; unset, 3 runs in 10 draw theirs: stall.c). -X prints per run a
 * hash of every event fed to the core and every action it gave, and the
 * count of events (trace_hash.c, tests/sim/trace-hash.sh).
 * The last line is the summary that scripts/check.sh reads:
 *   sim: N schedules, N passed, N failed, N events, N.N s, N sched/s,
 *   N events/s
 * Exit status 1 if any schedule failed (with -M: if any mutant survived).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

struct main_run {
	struct sim_opts o;	/* from the command line */
	int lines;
	uint64_t max_shown;	/* -l: failing seeds printed at most */
	int stop;
	int stats;
	int mutants;		/* -M */
	uint64_t count, failed, shown;
	struct sim_stats st;
};

static void
main_usage(void)
{
	(void)fprintf(stderr, "usage: sim [-s SEED] [-n COUNT] [-v] [-x] "
	    "[-t LINES] [-l MAX] [-S] [-D KIND,...] [-k TICK] [-B LIE]\n"
	    "       [-W] [-P] [-L] [-K] [-A] [-R] [-H] [-X] [-y PERMILLE] [-Y MS]\n"
	    "       sim -f FILE [-M] [-v] [-t LINES]\n");
	exit(2);
}

static uint64_t
main_number(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0')
		main_usage();
	return v;
}

static double
main_clock(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One schedule; want_fail for a mutant seed. Returns whether the outcome
 * was the wanted one.
 */
static int
main_one(struct main_run *r, uint64_t seed, const struct sim_opts *o,
    int want_fail)
{
	struct sim_opts replay;
	char why[512];
	int failed;

	if (o->verbose)
		(void)printf("==== seed %llu\n", (unsigned long long)seed);
	failed = sim_run(seed, o, &r->st, why, sizeof(why));
	r->count++;
	if (o->hash)
		(void)printf("sim: seed %llu hash %016llx events %llu%s\n",
		    (unsigned long long)seed, (unsigned long long)r->st.hash,
		    (unsigned long long)r->st.hash_events,
		    failed ? " FAILED" : "");
	if (want_fail && o->sabotage != SAB_NONE) {
		/* A self-test of the checker: the lie's own violation. */
		if (failed && strstr(why, sabotage_want(o->sabotage)) == NULL)
			failed = 0;
		(void)printf("sim: seed %llu B=%s %s: %s\n",
		    (unsigned long long)seed, sabotage_name(o->sabotage),
		    failed ? "is caught" : "is NOT CAUGHT", why[0] != '\0' ?
		    why : "no violation");
		if (!failed)
			r->failed++;
		return failed;
	}
	if (want_fail) {
		(void)printf("sim: seed %llu %s: %s\n",
		    (unsigned long long)seed, failed ? "finds its mutant" :
		    "MISSES its mutant", failed ? why : "no violation");
		if (!failed)
			r->failed++;
		return failed;
	}
	if (!failed)
		return 1;
	r->failed++;
	if (r->failed > r->max_shown) {
		if (r->failed == r->max_shown + 1)
			(void)printf("sim: (more failing seeds not shown)\n");
		return 0;
	}
	(void)printf("sim: seed %llu FAILED: %s\n", (unsigned long long)seed,
	    why);
	if (!o->verbose && r->lines > 0 && r->shown++ < 1) {
		(void)printf("sim: trace of seed %llu (last %d lines; all: "
		    "build/sim -s %llu -v%s):\n", (unsigned long long)seed,
		    r->lines, (unsigned long long)seed,
		    o->disabled || o->tick_ms || o->sabotage ||
		    o->switchover || o->priorities || o->lease_model ||
		    o->big_tick || o->avail ? " with the same options" : "");
		replay = *o;
		replay.tracing = r->lines;
		(void)sim_run(seed, &replay, NULL, NULL, 0);
	}
	(void)fflush(stdout);
	return 0;
}

static void
main_file(struct main_run *r, const char *path)
{
	struct seed_entry *v;
	struct sim_opts o;
	char num[16];
	int i, n;

	if (seeds_load(path, &v, &n) == -1)
		exit(2);
	for (i = 0; i < n; i++) {
		if (r->mutants && v[i].mutant == 0 &&
		    v[i].opts.sabotage == SAB_NONE)
			continue;
		/* A lie of the model is no run of the core to pass. */
		if (!r->mutants && v[i].opts.sabotage != SAB_NONE)
			continue;
		o = v[i].opts;
		o.verbose = r->o.verbose;
		/* The core reads its mutant in election_new(). */
		(void)snprintf(num, sizeof(num), "%d", r->mutants ?
		    v[i].mutant : 0);
		if (setenv("ZKELECT_MUTANT", num, 1) == -1) {
			perror("sim: setenv");
			exit(2);
		}
		if (!main_one(r, v[i].seed, &o, r->mutants) && r->stop)
			break;
	}
	free(v);
}

static void
main_stats(const struct main_run *r)
{
	int k;

	(void)printf("sim: injected:");
	for (k = 0; k < F_NKINDS; k++)
		(void)printf(" %s=%llu", fault_name(k),
		    (unsigned long long)r->st.faults[k]);
	(void)printf(" (tied to a daemon's move: %llu) loop-stalls=%llu "
	    "breadcrumb-writes=%llu (unheard at a promote or fence: %llu)",
	    (unsigned long long)r->st.tied,
	    (unsigned long long)r->st.stalls,
	    (unsigned long long)r->st.crumb_writes,
	    (unsigned long long)r->st.crumb_unheard);
	(void)printf("\nsim: promotes=%llu demotes=%llu session-expiries=%llu "
	    "requests-lost=%llu fences-across-a-new-session=%llu\n",
	    (unsigned long long)r->st.promotes,
	    (unsigned long long)r->st.demotes,
	    (unsigned long long)r->st.expiries,
	    (unsigned long long)r->st.losses,
	    (unsigned long long)r->st.fence_lost);
	(void)printf("sim: claims-checked=%llu hooks-for-a-gone-node=%llu "
	    "promotes-over-a-breadcrumb=%llu (not in the view: %llu)\n",
	    (unsigned long long)r->st.claims,
	    (unsigned long long)r->st.gone_hooks,
	    (unsigned long long)r->st.over_crumb,
	    (unsigned long long)r->st.stale_crumb);
	(void)printf("sim: yields-to-a-higher-priority=%llu "
	    "elections-in-the-ensemble=%llu needless-demotes=%llu\n",
	    (unsigned long long)r->st.yields,
	    (unsigned long long)r->st.elections,
	    (unsigned long long)r->st.needless);
	(void)printf("sim: claims-made-by-the-heir=%llu "
	    "promotes-on-a-prepared-claim=%llu "
	    "prepared-claims-left-unused=%llu "
	    "two-leaders-after-claim-and-node-deleted-by-hand=%llu "
	    "stale-claims-deleted-by-the-head=%llu\n",
	    (unsigned long long)r->st.heir_claims,
	    (unsigned long long)r->st.prepared,
	    (unsigned long long)r->st.stale_claims,
	    (unsigned long long)r->st.double_deletes,
	    (unsigned long long)r->st.unclaims);
}

int
main(int argc, char **argv)
{
	struct main_run r;
	uint64_t seed = 1, count = 1, i;
	const char *file = NULL;
	double t0, dt;
	int ch;

	memset(&r, 0, sizeof(r));
	r.lines = 300;
	r.max_shown = UINT64_MAX;
	while ((ch = getopt(argc, argv, "s:n:vxf:t:l:SD:k:MB:WPLKARHXy:Y:")) != -1) {
		switch (ch) {
		case 's':
			seed = main_number(optarg);
			break;
		case 'n':
			count = main_number(optarg);
			break;
		case 'v':
			r.o.verbose = 1;
			break;
		case 'x':
			r.stop = 1;
			break;
		case 'f':
			file = optarg;
			break;
		case 't':
			r.lines = (int)main_number(optarg);
			break;
		case 'l':
			r.max_shown = main_number(optarg);
			break;
		case 'S':
			r.stats = 1;
			break;
		case 'D':
			if (fault_kinds(optarg, &r.o.disabled) == -1) {
				(void)fprintf(stderr, "sim: unknown fault "
				    "kind in %s\n", optarg);
				exit(2);
			}
			break;
		case 'k':
			r.o.tick_ms = (int64_t)main_number(optarg);
			break;
		case 'M':
			r.mutants = 1;
			break;
		case 'W':
			r.o.switchover = 1;
			break;
		case 'P':
			r.o.priorities = 1;
			break;
		case 'L':
			r.o.lease_model = 1;
			break;
		case 'K':
			r.o.big_tick = 1;
			break;
		case 'A':
			r.o.avail = 1;
			break;
		case 'R':
			r.o.resume = 1;
			break;
		case 'H':
			r.o.reloads = 1;
			break;
		case 'X':
			r.o.hash = 1;
			break;
		case 'Y':
			r.o.stall = (int)main_number(optarg);
			if (r.o.stall == 0)
				r.o.stall = -1;
			break;
		case 'y':
			r.o.tie = (int)main_number(optarg);
			if (r.o.tie > 1000)
				main_usage();
			if (r.o.tie == 0)
				r.o.tie = -1;
			break;
		case 'B':
			if ((r.o.sabotage = sabotage_parse(optarg)) == -1) {
				(void)fprintf(stderr, "sim: unknown lie %s\n",
				    optarg);
				exit(2);
			}
			break;
		default:
			main_usage();
		}
	}
	if (optind != argc || (r.mutants && file == NULL))
		main_usage();
	/* The core logs through log.c: keep a campaign's output readable. */
	log_init("sim", r.o.verbose ? LOG_DEBUG : LOG_CRIT);
	t0 = main_clock();
	if (file != NULL)
		main_file(&r, file);
	else
		for (i = 0; i < count; i++)
			if (!main_one(&r, seed + i, &r.o, 0) && r.stop)
				break;
	dt = main_clock() - t0;
	if (r.stats)
		main_stats(&r);
	(void)printf("sim: %llu schedules, %llu passed, %llu failed, "
	    "%llu events, %.1f s, %.0f sched/s, %.0f events/s\n",
	    (unsigned long long)r.count,
	    (unsigned long long)(r.count - r.failed),
	    (unsigned long long)r.failed, (unsigned long long)r.st.events, dt,
	    dt > 0 ? (double)r.count / dt : 0.0,
	    dt > 0 ? (double)r.st.events / dt : 0.0);
	return r.failed > 0 ? 1 : 0;
}
