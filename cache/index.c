/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "index.h"

/* Bits of key + 1 for keys up to key_max. */
static uint32_t key_bits(uint64_t key_max)
{
	return key_max == UINT64_MAX ? 64 : 64 - (uint32_t)__builtin_clzll(key_max + 1);
}

uint32_t qs_index_stride(uint64_t key_max, uint32_t val_bits)
{
	return key_bits(key_max) + val_bits <= 64 ? 8 : 12;
}

/* The slot i's key + 1 (0: empty). */
static inline uint64_t slot_key1(const struct qs_index *ix, uint64_t i)
{
	uint64_t w;
	memcpy(&w, ix->slots + i * ix->stride, 8);
	return ix->stride == 8 ? w >> ix->val_bits : w;
}

static inline uint32_t slot_val(const struct qs_index *ix, uint64_t i)
{
	const unsigned char *s = ix->slots + i * ix->stride;
	uint32_t v;
	if (ix->stride == 12) {
		memcpy(&v, s + 8, 4);
		return v;
	}
	uint64_t w;
	memcpy(&w, s, 8);
	uint32_t top = ix->val_bits - 1;
	return (uint32_t)(w & ((1ull << top) - 1)) | (uint32_t)((w >> top) & 1) << 31;
}

/* Store key + 1 = key1 (0 empties the slot) with val. */
static inline void slot_set(struct qs_index *ix, uint64_t i, uint64_t key1, uint32_t val)
{
	unsigned char *s = ix->slots + i * ix->stride;
	if (ix->stride == 12) {
		memcpy(s, &key1, 8);
		memcpy(s + 8, &val, 4);
		return;
	}
	uint32_t top = ix->val_bits - 1;
	uint64_t w = key1 << ix->val_bits | (uint64_t)(val >> 31) << top |
		     (val & ((1ull << top) - 1));
	memcpy(s, &w, 8);
}

static int alloc_slots(struct qs_index *ix, uint64_t cap)
{
	ix->slots = ix->env->ops->alloc(ix->env->ctx, cap * ix->stride, 64);
	if (!ix->slots)
		return -ENOMEM;
	memset(ix->slots, 0, cap * ix->stride);
	ix->cap = cap;
	return 0;
}

static uint64_t cap_for(uint64_t expect)
{
	return expect + expect / 4 + 16;
}

uint64_t qs_index_plan(uint64_t expect, uint64_t key_max, uint32_t val_bits)
{
	return cap_for(expect) * qs_index_stride(key_max, val_bits);
}

int qs_index_init(struct qs_index *ix, const struct qs_env *env, uint64_t expect,
		  uint64_t key_max, uint32_t val_bits)
{
	memset(ix, 0, sizeof(*ix));
	if (val_bits < 1 || val_bits > 32)
		return -EINVAL;
	ix->env = env;
	ix->stride = qs_index_stride(key_max, val_bits);
	ix->val_bits = val_bits;
	return alloc_slots(ix, cap_for(expect));
}

void qs_index_fini(struct qs_index *ix)
{
	if (ix->slots)
		ix->env->ops->free(ix->env->ctx, ix->slots);
	ix->slots = NULL;
}

bool qs_index_get(const struct qs_index *ix, uint64_t key, uint32_t *val)
{
	uint64_t i = qs_index_home(ix, key);
	for (;;) {
		uint64_t k = slot_key1(ix, i);
		if (k == key + 1) {
			*val = slot_val(ix, i);
			return true;
		}
		if (!k)
			return false;
		if (++i == ix->cap)
			i = 0;
	}
}

static int grow(struct qs_index *ix)
{
	struct qs_index old = *ix;
	if (alloc_slots(ix, old.cap * 2) < 0) {
		*ix = old;
		return -ENOMEM;
	}
	ix->count = 0;
	for (uint64_t i = 0; i < old.cap; i++) {
		uint64_t k = slot_key1(&old, i);
		if (k)
			qs_index_put(ix, k - 1, slot_val(&old, i), NULL);
	}
	qs_index_fini(&old);
	return 0;
}

int qs_index_put(struct qs_index *ix, uint64_t key, uint32_t val, uint32_t *old)
{
	uint64_t i = qs_index_home(ix, key);
	for (;;) {
		uint64_t k = slot_key1(ix, i);
		if (k == key + 1) {
			if (old)
				*old = slot_val(ix, i);
			slot_set(ix, i, k, val);
			return 0;
		}
		if (!k)
			break;
		if (++i == ix->cap)
			i = 0;
	}
	if ((ix->count + 1) * 5 > ix->cap * 4) {
		if (grow(ix) < 0)
			return -ENOMEM;
		return qs_index_put(ix, key, val, old);
	}
	slot_set(ix, i, key + 1, val);
	ix->count++;
	return 1;
}

/* Copy slot from into slot to. */
static inline void slot_move(struct qs_index *ix, uint64_t to, uint64_t from)
{
	memcpy(ix->slots + to * ix->stride, ix->slots + from * ix->stride, ix->stride);
}

bool qs_index_del(struct qs_index *ix, uint64_t key, uint32_t *old)
{
	uint64_t i = qs_index_home(ix, key);
	for (;;) {
		uint64_t k = slot_key1(ix, i);
		if (!k)
			return false;
		if (k == key + 1)
			break;
		if (++i == ix->cap)
			i = 0;
	}
	if (old)
		*old = slot_val(ix, i);
	/* Backward shift: pull later members of the probe run into the hole. */
	uint64_t hole = i;
	for (;;) {
		if (++i == ix->cap)
			i = 0;
		uint64_t k = slot_key1(ix, i);
		if (!k)
			break;
		uint64_t home = qs_index_home(ix, k - 1);
		/* Move k if its home is not in (hole, i] cyclically. */
		bool in_range = hole <= i ? (home > hole && home <= i)
					  : (home > hole || home <= i);
		if (!in_range) {
			slot_move(ix, hole, i);
			hole = i;
		}
	}
	slot_set(ix, hole, 0, 0);
	ix->count--;
	return true;
}

uint64_t qs_index_bytes(const struct qs_index *ix)
{
	return ix->cap * ix->stride;
}
