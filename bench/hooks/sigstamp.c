/*
 * sigstamp PID: prints CLOCK_MONOTONIC in nanoseconds, then sends SIGTERM
 * to PID at once.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int
main(int argc, char *argv[])
{
	struct timespec ts;
	long pid;

	if (argc != 2 || (pid = strtol(argv[1], NULL, 10)) <= 1)
		return 2;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	if (kill((pid_t)pid, SIGTERM) == -1) {
		perror("kill");
		return 1;
	}
	(void)printf("%lld\n", (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
	return 0;
}
