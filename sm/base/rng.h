/*
 * A seeded pseudo-random sequence for the offline studies (splitmix64:
 * every state, even 0, gives a full-period sequence), so that a run is
 * repeated exactly from its --seed.
 */
#ifndef IBSMD_RNG_H
#define IBSMD_RNG_H

#include <stdint.h>

static inline uint64_t rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in 0 .. n - 1 (n >= 1; the bias of the modulo is below 2^-32 for n < 2^32). */
static inline uint32_t rng_below(uint64_t *x, uint32_t n)
{
	return (uint32_t)(rng_next(x) % n);
}

#endif
