/* SPDX-License-Identifier: MIT */
/*
 * A map from 64-bit keys to 32-bit values: open addressing, linear probing,
 * backward-shift deletion, each key stored with its value in one slot (a
 * lookup costs one cache miss, not one per array). The engine uses one for
 * LBA -> log slot (the block index) and one for IU -> dirty-IU record.
 *
 * A slot is 8 bytes when the largest key and the values fit in 64 bits
 * together (key + 1 in the high bits, the value in the low ones: at 30.72
 * TB, 33 bits of LBA and 28 of log slot), else 12 (an 8-byte key and a
 * 4-byte value). Values are a flag in bit 31 and a number below
 * 2^(val_bits - 1) in the bits under it, as the engine's log slots are
 * (SLOT_TOMB); a packed slot keeps the flag in its value's top bit.
 *
 * Capacity is not a power of two, so the table can be sized close to what
 * is needed; it doubles when 80% full. Single-threaded, like the engine;
 * memory through the environment.
 */
#ifndef QS_CACHE_INDEX_H
#define QS_CACHE_INDEX_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "qlcshape/env.h"

#define QS_INDEX_FLAG 0x80000000u

struct qs_index {
	const struct qs_env *env;
	unsigned char *slots; /* NULL until qs_index_init */
	uint64_t cap, count;
	uint32_t stride;      /* bytes a slot: 8 (packed) or 12 */
	uint32_t val_bits;    /* a packed slot's value bits, flag included */
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
	__builtin_prefetch(ix->slots + qs_index_home(ix, key) * ix->stride, 1);
}

/*
 * The bytes of one slot for keys up to key_max and values whose number
 * part is below 2^(val_bits - 1) (val_bits 1 to 32): 8 or 12.
 */
uint32_t qs_index_stride(uint64_t key_max, uint32_t val_bits);

/*
 * Size for expect entries at most 80% load, keys up to key_max and values
 * as qs_index_stride says. 0, -EINVAL (val_bits out of range) or -ENOMEM.
 * Keys above key_max or values out of range must not be put.
 */
int qs_index_init(struct qs_index *ix, const struct qs_env *env, uint64_t expect,
		  uint64_t key_max, uint32_t val_bits);
void qs_index_fini(struct qs_index *ix);
bool qs_index_get(const struct qs_index *ix, uint64_t key, uint32_t *val);
/* Insert or replace. 1 if the key is new, 0 if replaced (*old set when
 * old != NULL), -ENOMEM if the table had to grow and could not. */
int qs_index_put(struct qs_index *ix, uint64_t key, uint32_t val, uint32_t *old);
/* Remove; true if the key was there (*old set when old != NULL). */
bool qs_index_del(struct qs_index *ix, uint64_t key, uint32_t *old);
uint64_t qs_index_bytes(const struct qs_index *ix);
/* What qs_index_init allocates for these arguments (cache/mem.c plans it). */
uint64_t qs_index_plan(uint64_t expect, uint64_t key_max, uint32_t val_bits);

#endif
