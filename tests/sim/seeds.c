/*
 * The regression seeds file (tests/sim/seeds.txt). One seed per line,
 * then optional words, then what the seed found after a '#':
 *
 *   1302 D=delete-leader,delete-node k=2000 m=6  # what it found
 *
 * D= leaves fault kinds out and k= sets the tick model, as -D and -k do,
 * and w=1, p=1, l=1, K=1, A=1, r=1 and h=1 stand for -W, -P, -L, -K, -A, -R
 * and -H, so
 * that the run is the one that found it. m=N marks a seed that finds
 * mutant N of the core (an old defect put back, see EL_MUTANT): run with
 * -M by a simulator built with EL_MUTANTS, it must fail; run plainly, it
 * must pass like every other line. B=KIND marks a self-test of the
 * checker: the model lies on purpose (sabotage.c, as -B does); run with
 * -M (with its m=, or the core as it is), it must fail with the violation
 * that KIND is for; a plain run skips it. y=N gives the run tied faults
 * at N per mille of the daemons' moves, y=c draws them as a campaign
 * does (fault_tie()); Y=N stalls each daemon's loop once every N ms on
 * average, Y=c draws stalls as a campaign does (stall.c). Without y= (Y=)
 * a line has no tied faults (stalls), as every line found before they
 * existed; and ties to writes (TIE_WRITE) only with z=1, for the lines
 * found before those. Lines starting with '#' are comments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "xmalloc.h"

static int
seeds_word(struct seed_entry *e, const char *w, const char *path, int line)
{
	char *end;

	if (strncmp(w, "D=", 2) == 0) {
		if (fault_kinds(w + 2, &e->opts.disabled) == -1)
			goto bad;
		return 0;
	}
	errno = 0;
	if (strncmp(w, "k=", 2) == 0) {
		e->opts.tick_ms = strtoll(w + 2, &end, 10);
		if (errno == 0 && *end == '\0' && end != w + 2 &&
		    e->opts.tick_ms >= 0)
			return 0;
	} else if (strcmp(w, "w=1") == 0) {
		e->opts.switchover = 1;
		return 0;
	} else if (strcmp(w, "p=1") == 0) {
		e->opts.priorities = 1;
		return 0;
	} else if (strcmp(w, "l=1") == 0) {
		e->opts.lease_model = 1;
		return 0;
	} else if (strcmp(w, "K=1") == 0) {
		e->opts.big_tick = 1;
		return 0;
	} else if (strcmp(w, "A=1") == 0) {
		e->opts.avail = 1;
		return 0;
	} else if (strcmp(w, "r=1") == 0) {
		e->opts.resume = 1;
		return 0;
	} else if (strcmp(w, "h=1") == 0) {
		e->opts.reloads = 1;
		return 0;
	} else if (strcmp(w, "Y=c") == 0) {
		e->opts.stall = 0;
		return 0;
	} else if (strncmp(w, "Y=", 2) == 0) {
		e->opts.stall = (int)strtol(w + 2, &end, 10);
		if (errno == 0 && *end == '\0' && end != w + 2 &&
		    e->opts.stall > 0)
			return 0;
	} else if (strcmp(w, "z=1") == 0) {
		e->opts.tie_write = 0;
		return 0;
	} else if (strcmp(w, "y=c") == 0) {
		e->opts.tie = 0;
		return 0;
	} else if (strncmp(w, "y=", 2) == 0) {
		e->opts.tie = (int)strtol(w + 2, &end, 10);
		if (errno == 0 && *end == '\0' && end != w + 2 &&
		    e->opts.tie >= 0 && e->opts.tie <= 1000) {
			if (e->opts.tie == 0)
				e->opts.tie = -1;
			return 0;
		}
	} else if (strncmp(w, "B=", 2) == 0) {
		if ((e->opts.sabotage = sabotage_parse(w + 2)) > 0)
			return 0;
	} else if (strncmp(w, "m=", 2) == 0) {
		e->mutant = (int)strtol(w + 2, &end, 10);
		if (errno == 0 && *end == '\0' && end != w + 2 &&
		    e->mutant > 0)
			return 0;
	}
bad:
	(void)fprintf(stderr, "sim: %s:%d: bad word %s\n", path, line, w);
	return -1;
}

int
seeds_load(const char *path, struct seed_entry **out, int *n)
{
	FILE *f = fopen(path, "r");
	char buf[1024], *p, *w, *save = NULL, *end;
	struct seed_entry *v = NULL, *e;
	int cap = 0, line = 0;

	*n = 0;
	if (f == NULL) {
		(void)fprintf(stderr, "sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f) != NULL) {
		line++;
		if ((p = strchr(buf, '#')) != NULL)
			*p = '\0';
		w = strtok_r(buf, " \t\r\n", &save);
		if (w == NULL)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			v = xreallocarray(v, (size_t)cap, sizeof(*v));
		}
		e = &v[*n];
		memset(e, 0, sizeof(*e));
		e->opts.tie = -1;
		e->opts.tie_write = -1;
		e->opts.stall = -1;
		errno = 0;
		e->seed = strtoull(w, &end, 10);
		if (errno != 0 || *end != '\0') {
			(void)fprintf(stderr, "sim: %s:%d: bad seed %s\n", path,
			    line, w);
			goto fail;
		}
		while ((w = strtok_r(NULL, " \t\r\n", &save)) != NULL)
			if (seeds_word(e, w, path, line) == -1)
				goto fail;
		(*n)++;
	}
	(void)fclose(f);
	*out = v;
	return 0;
fail:
	(void)fclose(f);
	free(v);
	return -1;
}
