/* SPDX-License-Identifier: MIT */
/*
 * The store of kept map updates (cache/pend.c) against a plain reference:
 * random puts, replaces, holds, takes of the fullest page and of random
 * pages, and epoch moves, checked after every step (counts per page and per epoch, the
 * fullest page's count) and whole at the end; the plan against what init
 * allocates; a full store refusing a new LBA but not a replace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../cache/pend.h"

/* An environment that counts what is allocated. */
static uint64_t allocated;

static void *cnt_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	void *p = NULL;
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size))
		return NULL;
	allocated += size;
	return p;
}

static void cnt_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const struct qs_env_ops cnt_ops = {.alloc = cnt_alloc, .free = cnt_free};
static const struct qs_env cnt_env = {&cnt_ops, NULL};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

enum { PAGES = 40, PER = 50, LBAS = PAGES * PER, CAP = 300, EPOCHS = 5 };

struct ref {
	bool has[LBAS];
	uint64_t val[LBAS];
	uint8_t flags[LBAS], epoch[LBAS];
	uint32_t count;
	bool held[PAGES]; /* qs_pend_fullest passes it over */
	bool seen[LBAS]; /* a take's or move's callback reported it */
};

static uint32_t ref_page_count(const struct ref *r, uint64_t g)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < PER; i++)
		n += r->has[g * PER + i];
	return n;
}

static void check_all(struct qs_pend *pd, const struct ref *r)
{
	uint32_t most = 0, ep[EPOCHS] = {0}, held = 0;
	assert_int_equal(pd->count, r->count);
	for (uint64_t g = 0; g < PAGES; g++) {
		uint32_t n = ref_page_count(r, g);
		assert_int_equal(qs_pend_page_count(pd, g), n);
		assert_int_equal(qs_pend_page_held(pd, g), r->held[g]);
		if (!r->held[g])
			most = n > most ? n : most;
		else
			held += n;
	}
	for (uint64_t lba = 0; lba < LBAS; lba++) {
		struct qs_pend_ent *e;
		bool got = qs_pend_get(pd, lba, &e);
		assert_int_equal(got, r->has[lba]);
		if (!got)
			continue;
		assert_true(e->val == r->val[lba]);
		assert_int_equal(e->flags, r->flags[lba]);
		assert_int_equal(e->epoch, r->epoch[lba]);
		ep[r->epoch[lba]]++;
	}
	for (uint32_t x = 0; x < EPOCHS; x++)
		assert_int_equal(qs_pend_epoch_count(pd, x), ep[x]);
	assert_int_equal(qs_pend_unheld_count(pd), r->count - held);
	uint64_t page = UINT64_MAX;
	assert_int_equal(qs_pend_fullest(pd, &page), most);
	if (most) {
		assert_int_equal(ref_page_count(r, page), most);
		assert_false(r->held[page]);
	}
}

/* Hold page g if it has entries (a hold of an empty page does nothing). */
static void hold_page(struct qs_pend *pd, struct ref *r, uint64_t g)
{
	qs_pend_page_hold(pd, g);
	if (ref_page_count(r, g))
		r->held[g] = true;
}

/* A take's or move's callback: the entry is the reference's, once. */
static void seen_cb(void *arg, uint64_t lba, const struct qs_pend_ent *e)
{
	struct ref *r = arg;
	assert_true(lba < LBAS);
	assert_true(r->has[lba]);
	assert_false(r->seen[lba]);
	assert_true(e->val == r->val[lba]);
	assert_int_equal(e->flags, r->flags[lba]);
	r->seen[lba] = true;
}

static void take_page(struct qs_pend *pd, struct ref *r, uint64_t g)
{
	memset(r->seen, 0, sizeof(r->seen));
	uint32_t want = ref_page_count(r, g);
	assert_int_equal(qs_pend_page_take(pd, g, seen_cb, r), want);
	for (uint32_t i = 0; i < PER; i++) {
		uint64_t lba = g * PER + i;
		assert_int_equal(r->seen[lba], r->has[lba]);
		r->has[lba] = false;
	}
	r->held[g] = false;
	r->count -= want;
}

static void move_epoch(struct qs_pend *pd, struct ref *r, uint8_t from, uint8_t to)
{
	memset(r->seen, 0, sizeof(r->seen));
	uint32_t want = 0;
	for (uint64_t lba = 0; lba < LBAS; lba++)
		want += r->has[lba] && r->epoch[lba] == from;
	assert_int_equal(qs_pend_epoch_move(pd, from, to, seen_cb, r), from == to ? 0 : want);
	for (uint64_t lba = 0; lba < LBAS; lba++) {
		bool moved = r->has[lba] && r->epoch[lba] == from && from != to;
		assert_int_equal(r->seen[lba], moved);
		if (moved)
			r->epoch[lba] = to;
	}
}

static void put_one(struct qs_pend *pd, struct ref *r, uint64_t *s)
{
	/* half the puts on the first few pages, so that counts differ */
	uint64_t lba = rng_next(s) % 2 ? rng_next(s) % (4 * PER) : rng_next(s) % LBAS;
	uint64_t val = rng_next(s) % 7 == 0 ? UINT64_MAX : rng_next(s);
	uint8_t flags = (uint8_t)rng_next(s), epoch = (uint8_t)(rng_next(s) % EPOCHS);
	int rc = qs_pend_put(pd, lba, val, flags, epoch);
	if (!r->has[lba] && r->count == CAP) {
		assert_int_equal(rc, -ENOSPC);
		return;
	}
	assert_int_equal(rc, 0);
	r->count += !r->has[lba];
	r->has[lba] = true;
	r->val[lba] = val;
	r->flags[lba] = flags;
	r->epoch[lba] = epoch;
}

static void test_model(void **state)
{
	(void)state;
	static struct ref r;
	struct qs_pend pd;
	memset(&r, 0, sizeof(r));
	assert_int_equal(qs_pend_init(&pd, &cnt_env, CAP, PAGES, PER, EPOCHS), 0);
	uint64_t s = 0x2545f4914f6cdd1dull;
	for (int step = 0; step < 40000; step++) {
		uint64_t k = rng_next(&s) % 100, page;
		if (k < 80) {
			put_one(&pd, &r, &s);
		} else if (k < 90) {
			if (qs_pend_fullest(&pd, &page))
				take_page(&pd, &r, page);
		} else if (k < 93) {
			take_page(&pd, &r, rng_next(&s) % PAGES);
		} else if (k < 96) {
			hold_page(&pd, &r, rng_next(&s) % PAGES);
		} else {
			move_epoch(&pd, &r, (uint8_t)(rng_next(&s) % EPOCHS),
				   (uint8_t)(rng_next(&s) % EPOCHS));
		}
		if (step % 97 == 0)
			check_all(&pd, &r);
	}
	check_all(&pd, &r);
	/* drain by fullest page: counts never rise */
	uint64_t page;
	uint32_t last = PER + 1, n;
	while ((n = qs_pend_fullest(&pd, &page))) {
		assert_true(n <= last);
		last = n;
		take_page(&pd, &r, page);
	}
	for (uint64_t g = 0; g < PAGES; g++)
		if (r.held[g])
			take_page(&pd, &r, g);
	assert_int_equal(r.count, 0);
	check_all(&pd, &r);
	qs_pend_fini(&pd);
}

static void test_full(void **state)
{
	(void)state;
	struct qs_pend pd;
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 3, 2, 4, 1), 0);
	for (uint64_t lba = 0; lba < 3; lba++)
		assert_int_equal(qs_pend_put(&pd, lba * 2, lba, 0, 0), 0);
	assert_int_equal(qs_pend_put(&pd, 7, 1, 0, 0), -ENOSPC);
	assert_int_equal(qs_pend_put(&pd, 2, 9, 1, 0), 0); /* a replace fits */
	uint64_t page;
	assert_int_equal(qs_pend_fullest(&pd, &page), 2);
	assert_int_equal(page, 0);
	assert_int_equal(qs_pend_page_take(&pd, 0, NULL, NULL), 2);
	assert_int_equal(qs_pend_put(&pd, 7, 1, 0, 0), 0);
	struct qs_pend_ent *e;
	assert_true(qs_pend_get(&pd, 7, &e));
	assert_false(qs_pend_get(&pd, 6, &e));
	assert_int_equal(qs_pend_epoch_count(&pd, 0), 2);
	qs_pend_fini(&pd);
}

static void test_plan_args(void **state)
{
	(void)state;
	struct qs_pend pd;
	allocated = 0;
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 1000, 77, 811, 16), 0);
	assert_int_equal(allocated, qs_pend_plan(1000, 77, 811, 16));
	qs_pend_fini(&pd);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 0, 77, 811, 16), -EINVAL);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 10, 0, 811, 16), -EINVAL);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 10, 77, 0, 16), -EINVAL);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 10, 77, 70000, 16), -EINVAL);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 10, 77, 811, 0), -EINVAL);
	assert_int_equal(qs_pend_init(&pd, &cnt_env, 10, 77, 811, QS_PEND_EPOCHS_MAX + 1), -EINVAL);
	qs_pend_fini(&pd); /* zeroed by the failed init: harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_plan_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
