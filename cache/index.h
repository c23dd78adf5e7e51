/* SPDX-License-Identifier: MIT */
/*
 * A map from 64-bit keys to 32-bit values: open addressing, linear probing,
 * backward-shift deletion, each key stored with its value in one packed
 * 12-byte slot (a lookup costs one cache miss, not one per array). The engine uses one for LBA -> log slot (the block index) and one
 * for IU -> dirty-IU record. Capacity is not a power of two, so the table
 * can be sized close to what is needed; it doubles when 80% full.
 * Single-threaded, like the engine; memory through the environment.
 */
#ifndef QS_CACHE_INDEX_H
#define QS_CACHE_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "qlcshape/env.h"

struct qs_index_slot {
	uint64_t key; /* key + 1; 0 marks an empty slot */
	uint32_t val;
} __attribute__((packed));

struct qs_index {
	const struct qs_env *env;
	struct qs_index_slot *slots; /* NULL until qs_index_init */
	uint64_t cap, count;
};

/* The home slot of key. */
static inline uint64_t qs_index_home(const struct qs_index *ix, uint64_t key)
{
	uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	return (uint64_t)(((unsigned __int128)h * ix->cap) >> 64);
}

/*
 * Start loading key's home slot into the cache (a hint; no effect on the
 * map). Lets a caller overlap the misses of several lookups.
 * always_inline is not about speed: GCC 12 judges a function that only
 * prefetches to be pure, and deletes a call to a pure function whose result
 * is unused before it inlines it, so every prefetch through this function
 * was silently dropped (objdump of the tool showed none of them).
 */
static inline __attribute__((always_inline)) void
qs_index_prefetch(const struct qs_index *ix, uint64_t key)
{
	__builtin_prefetch(&ix->slots[qs_index_home(ix, key)], 1);
}

/* Size for expect entries at most 80% load. 0 or -ENOMEM. */
int qs_index_init(struct qs_index *ix, const struct qs_env *env, uint64_t expect);
void qs_index_fini(struct qs_index *ix);
bool qs_index_get(const struct qs_index *ix, uint64_t key, uint32_t *val);
/* Insert or replace. 1 if the key is new, 0 if replaced (*old set when
 * old != NULL), -ENOMEM if the table had to grow and could not. */
int qs_index_put(struct qs_index *ix, uint64_t key, uint32_t val, uint32_t *old);
/* Remove; true if the key was there (*old set when old != NULL). */
bool qs_index_del(struct qs_index *ix, uint64_t key, uint32_t *old);
uint64_t qs_index_bytes(const struct qs_index *ix);

#endif
