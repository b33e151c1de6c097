/*
 * build/sim: runs a campaign of simulated schedules.
 *
 *   sim [-s SEED] [-n COUNT] [-v] [-x] [-f FILE] [-t LINES] [-S] [-D KINDS]
 *       [-k TICK]
 *
 * Runs seeds SEED .. SEED+COUNT-1 (or the seeds listed in FILE, one per
 * line, first word). The first failing seed is run again with a trace
 * and its last LINES lines (default 300, 0: none) are printed; -v prints the whole trace
 * of every run as it goes (for one seed). -x stops at the first failure.
 * -S prints what the runs injected; -D leaves out the fault kinds named
 * (comma-separated, as -S names them), to tell causes apart. -k TICK
 * models ZooKeeper's tickTime (capped at T/2): followers report the
 * sessions they heard from to the leader every TICK/2 instead of at once.
 * The last line is the summary that
 * scripts/check.sh reads:
 *   sim: N schedules, N passed, N failed, N events, N.N s, N sched/s, N events/s
 * Exit status 1 if any schedule failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

static void
main_usage(void)
{
	(void)fprintf(stderr, "usage: sim [-s SEED] [-n COUNT] [-v] [-x] "
	    "[-f FILE] [-t LINES] [-S] [-D KIND,...] [-k TICK]\n");
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

static uint32_t
main_kinds(const char *list)
{
	char buf[256], *tok, *save = NULL;
	uint32_t mask = 0;
	int k;

	(void)snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < F_NKINDS; k++)
			if (strcmp(tok, fault_name(k)) == 0)
				break;
		if (k == F_NKINDS) {
			(void)fprintf(stderr, "sim: unknown fault kind %s\n",
			    tok);
			exit(2);
		}
		mask |= 1u << k;
	}
	return mask;
}

/* Seeds of FILE: the first word of every line not starting with '#'. */
static uint64_t *
main_seed_file(const char *path, uint64_t *n)
{
	FILE *f = fopen(path, "r");
	char line[512];
	uint64_t *v = NULL, cap = 0;

	*n = 0;
	if (f == NULL) {
		(void)fprintf(stderr, "sim: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			if (v == NULL) {
				(void)fprintf(stderr, "sim: out of memory\n");
				exit(2);
			}
		}
		v[(*n)++] = strtoull(p, NULL, 10);
	}
	(void)fclose(f);
	return v;
}

int
main(int argc, char **argv)
{
	struct sim_stats st;
	struct sim_opts o, replay;
	uint64_t seed = 1, count = 1, i, *list = NULL, failed = 0, shown = 0;
	int ch, stop = 0, lines = 300, stats = 0, k;
	const char *file = NULL;
	char why[512];
	double t0, dt;

	memset(&o, 0, sizeof(o));
	while ((ch = getopt(argc, argv, "s:n:vxf:t:SD:k:")) != -1) {
		switch (ch) {
		case 's':
			seed = main_number(optarg);
			break;
		case 'n':
			count = main_number(optarg);
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'D':
			o.disabled = main_kinds(optarg);
			break;
		case 'k':
			o.tick_ms = (int64_t)main_number(optarg);
			break;
		case 'x':
			stop = 1;
			break;
		case 'f':
			file = optarg;
			break;
		case 't':
			lines = (int)main_number(optarg);
			break;
		case 'S':
			stats = 1;
			break;
		default:
			main_usage();
		}
	}
	if (optind != argc)
		main_usage();
	/* The core logs through log.c: keep a campaign's output readable. */
	log_init("sim", o.verbose ? LOG_DEBUG : LOG_CRIT);
	if (file != NULL)
		list = main_seed_file(file, &count);
	memset(&st, 0, sizeof(st));
	t0 = main_clock();
	for (i = 0; i < count; i++) {
		uint64_t sd = list != NULL ? list[i] : seed + i;

		if (o.verbose)
			(void)printf("==== seed %llu\n", (unsigned long long)sd);
		if (sim_run(sd, &o, &st, why, sizeof(why)) == 0)
			continue;
		failed++;
		(void)printf("sim: seed %llu FAILED: %s\n",
		    (unsigned long long)sd, why);
		if (!o.verbose && lines > 0 && shown++ < 1) {
			(void)printf("sim: trace of seed %llu (last %d lines; "
			    "all: build/sim -s %llu -v):\n",
			    (unsigned long long)sd, lines,
			    (unsigned long long)sd);
			replay = o;
			replay.tracing = lines;
			(void)sim_run(sd, &replay, NULL, NULL, 0);
		}
		(void)fflush(stdout);
		if (stop) {
			count = i + 1;
			break;
		}
	}
	dt = main_clock() - t0;
	if (stats) {
		(void)printf("sim: injected:");
		for (k = 0; k < F_NKINDS; k++)
			(void)printf(" %s=%llu", fault_name(k),
			    (unsigned long long)st.faults[k]);
		(void)printf("\nsim: promotes=%llu demotes=%llu "
		    "session-expiries=%llu requests-lost=%llu "
		    "fences-across-a-new-session=%llu\n",
		    (unsigned long long)st.promotes,
		    (unsigned long long)st.demotes,
		    (unsigned long long)st.expiries,
		    (unsigned long long)st.losses,
		    (unsigned long long)st.fence_lost);
	}
	(void)printf("sim: %llu schedules, %llu passed, %llu failed, "
	    "%llu events, %.1f s, %.0f sched/s, %.0f events/s\n",
	    (unsigned long long)count, (unsigned long long)(count - failed),
	    (unsigned long long)failed, (unsigned long long)st.events, dt,
	    dt > 0 ? (double)count / dt : 0.0,
	    dt > 0 ? (double)st.events / dt : 0.0);
	free(list);
	return failed > 0 ? 1 : 0;
}
