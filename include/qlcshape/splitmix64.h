/* SPDX-License-Identifier: MIT */
/*
 * qs_splitmix64: the small deterministic generator of the engine (a new
 * log's uuid) and of everything above it (workloads, calibration, the
 * engine benchmark, the tests; include/host/rand.h): Vigna's splitmix64,
 * one 64-bit state, advanced by each call. Any thread; the state is the
 * caller's.
 */
#ifndef QLCSHAPE_SPLITMIX64_H
#define QLCSHAPE_SPLITMIX64_H

#include <stdint.h>

static inline uint64_t qs_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
