/*
 * The notification floor through libzookeeper_mt, as a daemon built on it
 * pays it: one handle deletes a node (zoo_adelete, or a zoo_amulti of
 * four deletes like zkelectd's release, the last one watched) after the
 * server sat idle for 300 ms; the other handle's watcher, on the
 * library's completion thread, stamps the event. The bare-protocol floor
 * of bench.py's floors phase has no client threads; the difference is the
 * library's (its I/O and completion threads).
 *
 *   cc -O2 -DTHREADED -o libfloor bench/failover/libfloor.c -lzookeeper_mt
 *   ./libfloor 127.0.0.1:PORT [N [MULTI]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <zookeeper/zookeeper.h>

static volatile long long fired;
static int pfd[2];
static long long now_ns(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000LL + ts.tv_nsec; }
static void w(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
	(void)zh; (void)state; (void)path; (void)ctx;
	if (type == ZOO_DELETED_EVENT) { fired = now_ns(); (void)!write(pfd[1], "x", 1); }
}
static void vcb(int rc, const void *d) { (void)rc; (void)d; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
	int n = argc > 2 ? atoi(argv[2]) : 30, i, multi = argc > 3 && atoi(argv[3]);
	double *r = calloc(n, sizeof(double));
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	if (pipe(pfd) == -1) return 1;
	zhandle_t *a = zookeeper_init(argv[1], NULL, 30000, 0, 0, 0);
	zhandle_t *b = zookeeper_init(argv[1], w, 30000, 0, 0, 0);
	sleep(1);
	zoo_create(a, "/lf", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	for (i = 0; i < n; i++) {
		char p[4][64]; int j, k = multi ? 4 : 1; struct Stat st;
		for (j = 0; j < k; j++) {
			snprintf(p[j], 64, "/lf/n%d-%d", i, j);
			zoo_create(a, p[j], "x", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
		}
		zoo_wexists(b, p[k - 1], w, NULL, &st);
		usleep(300000);
		fired = 0;
		long long t = now_ns();
		if (multi) {
			zoo_op_t ops[4]; zoo_op_result_t res[4];
			for (j = 0; j < 4; j++) zoo_delete_op_init(&ops[j], p[j], -1);
			zoo_amulti(a, 4, ops, res, vcb, NULL);
			{ char c; (void)!read(pfd[0], &c, 1); }
		} else {
			zoo_adelete(a, p[0], -1, vcb, NULL);
			{ char c; (void)!read(pfd[0], &c, 1); }
		}
		r[i] = (fired - t) / 1e6;
		usleep(50000);
	}
	qsort(r, n, sizeof(double), cmp);
	printf("%s: median %.2f ms min %.2f max %.2f\n", multi ? "multi4" : "delete", r[n / 2], r[0], r[n - 1]);
	zookeeper_close(a); zookeeper_close(b);
	return 0;
}
