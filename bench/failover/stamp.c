/* stamp FILE EVENT NODE: appends "<ns since the epoch> EVENT NODE". */
#include <stdio.h>
#include <time.h>

int
main(int argc, char **argv)
{
	struct timespec ts;
	FILE *f;

	if (argc != 4)
		return 2;
	clock_gettime(CLOCK_REALTIME, &ts);
	if ((f = fopen(argv[1], "a")) == NULL)
		return 1;
	fprintf(f, "%lld %s %s\n", (long long)ts.tv_sec * 1000000000LL +
	    ts.tv_nsec, argv[2], argv[3]);
	return fclose(f) == 0 ? 0 : 1;
}
