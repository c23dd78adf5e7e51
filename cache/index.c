/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "index.h"

static inline uint64_t slot_of(const struct qs_index *ix, uint64_t key)
{
	uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	return (uint64_t)(((unsigned __int128)h * ix->cap) >> 64);
}

static int alloc_arrays(struct qs_index *ix, uint64_t cap)
{
	ix->keys = ix->env->ops->alloc(ix->env->ctx, cap * sizeof(uint64_t), 64);
	ix->vals = ix->env->ops->alloc(ix->env->ctx, cap * sizeof(uint32_t), 64);
	if (!ix->keys || !ix->vals) {
		if (ix->keys)
			ix->env->ops->free(ix->env->ctx, ix->keys);
		if (ix->vals)
			ix->env->ops->free(ix->env->ctx, ix->vals);
		return -ENOMEM;
	}
	memset(ix->keys, 0, cap * sizeof(uint64_t));
	ix->cap = cap;
	return 0;
}

int qs_index_init(struct qs_index *ix, const struct qs_env *env, uint64_t expect)
{
	memset(ix, 0, sizeof(*ix));
	ix->env = env;
	return alloc_arrays(ix, expect + expect / 4 + 16);
}

void qs_index_fini(struct qs_index *ix)
{
	if (ix->keys)
		ix->env->ops->free(ix->env->ctx, ix->keys);
	if (ix->vals)
		ix->env->ops->free(ix->env->ctx, ix->vals);
	ix->keys = NULL;
	ix->vals = NULL;
}

bool qs_index_get(const struct qs_index *ix, uint64_t key, uint32_t *val)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->keys[i];
		if (k == key + 1) {
			*val = ix->vals[i];
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
	if (alloc_arrays(ix, old.cap * 2) < 0) {
		*ix = old;
		return -ENOMEM;
	}
	ix->count = 0;
	for (uint64_t i = 0; i < old.cap; i++)
		if (old.keys[i])
			qs_index_put(ix, old.keys[i] - 1, old.vals[i], NULL);
	qs_index_fini(&old);
	return 0;
}

int qs_index_put(struct qs_index *ix, uint64_t key, uint32_t val, uint32_t *old)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->keys[i];
		if (k == key + 1) {
			if (old)
				*old = ix->vals[i];
			ix->vals[i] = val;
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
	ix->keys[i] = key + 1;
	ix->vals[i] = val;
	ix->count++;
	return 1;
}

bool qs_index_del(struct qs_index *ix, uint64_t key, uint32_t *old)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->keys[i];
		if (!k)
			return false;
		if (k == key + 1)
			break;
		if (++i == ix->cap)
			i = 0;
	}
	if (old)
		*old = ix->vals[i];
	/* Backward shift: pull later members of the probe run into the hole. */
	uint64_t hole = i;
	for (;;) {
		if (++i == ix->cap)
			i = 0;
		uint64_t k = ix->keys[i];
		if (!k)
			break;
		uint64_t home = slot_of(ix, k - 1);
		/* Move k if its home is not in (hole, i] cyclically. */
		bool in_range = hole <= i ? (home > hole && home <= i)
					  : (home > hole || home <= i);
		if (!in_range) {
			ix->keys[hole] = k;
			ix->vals[hole] = ix->vals[i];
			hole = i;
		}
	}
	ix->keys[hole] = 0;
	ix->count--;
	return true;
}

uint64_t qs_index_bytes(const struct qs_index *ix)
{
	return ix->cap * (sizeof(uint64_t) + sizeof(uint32_t));
}
