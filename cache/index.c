/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "index.h"

static inline uint64_t slot_of(const struct qs_index *ix, uint64_t key)
{
	return qs_index_home(ix, key);
}

static int alloc_arrays(struct qs_index *ix, uint64_t cap)
{
	ix->slots = ix->env->ops->alloc(ix->env->ctx, cap * sizeof(*ix->slots), 64);
	if (!ix->slots)
		return -ENOMEM;
	memset(ix->slots, 0, cap * sizeof(*ix->slots));
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
	if (ix->slots)
		ix->env->ops->free(ix->env->ctx, ix->slots);
	ix->slots = NULL;
}

bool qs_index_get(const struct qs_index *ix, uint64_t key, uint32_t *val)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->slots[i].key;
		if (k == key + 1) {
			*val = ix->slots[i].val;
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
		if (old.slots[i].key)
			qs_index_put(ix, old.slots[i].key - 1, old.slots[i].val, NULL);
	qs_index_fini(&old);
	return 0;
}

int qs_index_put(struct qs_index *ix, uint64_t key, uint32_t val, uint32_t *old)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->slots[i].key;
		if (k == key + 1) {
			if (old)
				*old = ix->slots[i].val;
			ix->slots[i].val = val;
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
	ix->slots[i].key = key + 1;
	ix->slots[i].val = val;
	ix->count++;
	return 1;
}

bool qs_index_del(struct qs_index *ix, uint64_t key, uint32_t *old)
{
	uint64_t i = slot_of(ix, key);
	for (;;) {
		uint64_t k = ix->slots[i].key;
		if (!k)
			return false;
		if (k == key + 1)
			break;
		if (++i == ix->cap)
			i = 0;
	}
	if (old)
		*old = ix->slots[i].val;
	/* Backward shift: pull later members of the probe run into the hole. */
	uint64_t hole = i;
	for (;;) {
		if (++i == ix->cap)
			i = 0;
		uint64_t k = ix->slots[i].key;
		if (!k)
			break;
		uint64_t home = slot_of(ix, k - 1);
		/* Move k if its home is not in (hole, i] cyclically. */
		bool in_range = hole <= i ? (home > hole && home <= i)
					  : (home > hole || home <= i);
		if (!in_range) {
			ix->slots[hole] = ix->slots[i];
			hole = i;
		}
	}
	ix->slots[hole].key = 0;
	ix->count--;
	return true;
}

uint64_t qs_index_bytes(const struct qs_index *ix)
{
	return ix->cap * sizeof(*ix->slots);
}
