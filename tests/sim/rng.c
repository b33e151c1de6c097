/*
 * The simulation's only source of choice: xoshiro256** seeded through
 * splitmix64, so that a run is a pure function of its seed on every
 * platform (no rand(), no time, no addresses).
 */
#include <stdint.h>

#include "sim.h"

static uint64_t
rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
rng_seed(struct rng *r, uint64_t seed)
{
	int i;
	uint64_t z;

	for (i = 0; i < 4; i++) {
		seed += 0x9e3779b97f4a7c15ULL;
		z = seed;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		r->s[i] = z ^ (z >> 31);
	}
}

uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

int64_t
rng_between(struct rng *r, int64_t lo, int64_t hi)
{
	uint64_t span;

	if (hi <= lo)
		return lo;
	span = (uint64_t)(hi - lo) + 1;
	/* The modulo bias is far below anything a schedule could notice. */
	return lo + (int64_t)(rng_next(r) % span);
}

int
rng_permille(struct rng *r, int permille)
{
	return (int)(rng_next(r) % 1000) < permille;
}
