/*
 * stamp FILE EVENT NODE: appends "<ns since the epoch> EVENT NODE <ns of
 * CLOCK_MONOTONIC>", the first thing it does. The monotonic stamp is the
 * clock of zkelectd's trace lines (bench/failover/share.py).
 */
#include <stdio.h>
#include <time.h>

int
main(int argc, char **argv)
{
	struct timespec ts, mono;
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc != 4)
		return 2;
	if ((f = fopen(argv[1], "a")) == NULL)
		return 1;
	fprintf(f, "%lld %s %s %lld\n", (long long)ts.tv_sec * 1000000000LL +
	    ts.tv_nsec, argv[2], argv[3], (long long)mono.tv_sec *
	    1000000000LL + mono.tv_nsec);
	return fclose(f) == 0 ? 0 : 1;
}
