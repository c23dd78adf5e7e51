/* SPDX-License-Identifier: MIT */
/*
 * The engine's hash index (cache/index.c) against a plain reference, in
 * both slot layouts: 8-byte packed slots (key and value share 64 bits) and
 * 12-byte ones, through growth, backward-shift deletion and the flag bit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tlib.h"
#include "../cache/index.h"

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_stride(void **state)
{
	(void)state;
	/* 30.72 TB at 20% op: 6.0e9 client blocks (33 bits), a 400 GiB log
	 * (27 bits of slot and the flag) */
	assert_int_equal(qs_index_stride(6000000000ull, 28), 8);
	/* 35 bits of key and 30 of value do not fit */
	assert_int_equal(qs_index_stride((1ull << 35) - 1, 30), 12);
	assert_int_equal(qs_index_stride((1ull << 35) - 2, 29), 8);
	assert_int_equal(qs_index_stride(UINT64_MAX, 1), 12);
	assert_int_equal(qs_index_plan(100, 1000, 10), 8 * (100 + 25 + 16));
	assert_int_equal(qs_index_plan(100, UINT64_MAX, 10), 12 * (100 + 25 + 16));
}

/*
 * Random puts, replaces and deletes over nkeys keys (spread up to key_max),
 * checked against an array after every step and whole at the end; values
 * use every number bit and the flag.
 */
static void model_run(uint64_t key_max, uint32_t val_bits, uint32_t want_stride)
{
	struct tenv t;
	tenv_init(&t);
	enum { NKEYS = 3000, STEPS = 60000 };
	uint64_t keys[NKEYS];
	uint32_t ref[NKEYS];
	bool has[NKEYS] = {false};
	assert_true(key_max >= NKEYS); /* room for NKEYS distinct keys */
	uint64_t s = 0x9e3779b97f4a7c15ull ^ key_max ^ val_bits;
	for (int i = 0; i < NKEYS; i++) {
		/* the extremes, then random keys (duplicates are harmless: the
		 * reference then treats both entries as one key's history) */
		keys[i] = i == 0 ? 0 : i == 1 ? key_max : rng_next(&s) % (key_max + 1);
		for (int j = 0; j < i; j++)
			if (keys[j] == keys[i])
				keys[i] = (keys[i] + 1) % (key_max + 1), j = -1;
	}
	struct qs_index ix;
	/* sized for a tenth: the table must grow */
	assert_int_equal(qs_index_init(&ix, &t.env, NKEYS / 10, key_max, val_bits), 0);
	assert_int_equal(ix.stride, want_stride);
	uint32_t num_mask = val_bits > 1 ? (uint32_t)((1ull << (val_bits - 1)) - 1) : 0;
	uint64_t live = 0;
	for (int step = 0; step < STEPS; step++) {
		int k = (int)(rng_next(&s) % NKEYS);
		uint32_t got, old = 12345;
		if (rng_next(&s) % 3) {
			uint32_t v = (uint32_t)rng_next(&s) & num_mask;
			if (rng_next(&s) & 1)
				v |= QS_INDEX_FLAG;
			int rc = qs_index_put(&ix, keys[k], v, &old);
			assert_int_equal(rc, has[k] ? 0 : 1);
			if (has[k])
				assert_int_equal(old, ref[k]);
			live += !has[k];
			has[k] = true;
			ref[k] = v;
		} else {
			bool was = qs_index_del(&ix, keys[k], &old);
			assert_int_equal(was, has[k]);
			if (was)
				assert_int_equal(old, ref[k]);
			live -= has[k];
			has[k] = false;
		}
		assert_int_equal(ix.count, live);
		assert_int_equal(qs_index_get(&ix, keys[k], &got), has[k]);
		if (has[k])
			assert_int_equal(got, ref[k]);
	}
	for (int k = 0; k < NKEYS; k++) {
		uint32_t got;
		assert_int_equal(qs_index_get(&ix, keys[k], &got), has[k]);
		if (has[k])
			assert_int_equal(got, ref[k]);
	}
	assert_true(qs_index_bytes(&ix) == ix.cap * want_stride);
	qs_index_fini(&ix);
}

static void test_model_packed(void **state)
{
	(void)state;
	model_run(6000000000ull, 28, 8);
	model_run((1ull << 32) - 2, 32, 8); /* every bit of the word used */
	model_run(20000, 1, 8);		    /* the flag alone */
}

static void test_model_wide(void **state)
{
	(void)state;
	model_run(UINT64_MAX - 1, 32, 12);
	model_run(1ull << 40, 28, 12);
}

static void test_bad_bits(void **state)
{
	(void)state;
	struct tenv t;
	tenv_init(&t);
	struct qs_index ix;
	assert_int_equal(qs_index_init(&ix, &t.env, 10, 100, 0), -EINVAL);
	assert_int_equal(qs_index_init(&ix, &t.env, 10, 100, 33), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stride),
		cmocka_unit_test(test_model_packed),
		cmocka_unit_test(test_model_wide),
		cmocka_unit_test(test_bad_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
