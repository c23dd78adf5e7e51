/* SPDX-License-Identifier: MIT */
/* Simulation core: event order, determinism, completions never inside the
 * submission, the env timer, the model-backed volume's data store. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/model.h"
#include "../bench/sim.h"
#include "tprof.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)

static struct qs_profile test_profile(void)
{
	struct qs_profile p;
	tprof_small_qlc(&p, "test");
	p.capacity_bytes = 64 * MIB;
	p.channels = 2;
	p.superblocks = 32;
	p.t_read_ns = 80000;
	p.t_prog_ns = 1500000;
	p.t_erase_ns = 3000000;
	p.ctrl_units = 1;
	p.write_buffer_bytes = 4 * MIB;
	return p;
}

/* ---- event order ---- */

struct order_log {
	int seen[16];
	uint64_t when[16];
	int n;
	struct qs_sim *sim;
};

static struct order_log *g_log;

static void record(void *arg, int result)
{
	struct order_log *l = g_log;
	l->when[l->n] = qs_sim_now(l->sim);
	l->seen[l->n++] = result;
}

static void test_order(void **state)
{
	(void)state;
	struct qs_sim *s = qs_sim_new();
	assert_non_null(s);
	struct order_log log = {.sim = s};
	g_log = &log;
	/* (time, tag): equal times run in scheduling order. */
	assert_int_equal(qs_sim_schedule(s, 500, record, NULL, 1), 0);
	assert_int_equal(qs_sim_schedule(s, 100, record, NULL, 2), 0);
	assert_int_equal(qs_sim_schedule(s, 300, record, NULL, 3), 0);
	assert_int_equal(qs_sim_schedule(s, 100, record, NULL, 4), 0);
	assert_int_equal(qs_sim_schedule(s, 100, record, NULL, 5), 0);
	assert_int_equal(qs_sim_pending(s), 5);
	/* run_until stops at the bound and moves the clock to it. */
	assert_int_equal(qs_sim_run_until(s, 200), 3);
	assert_int_equal(qs_sim_now(s), 200);
	assert_int_equal(log.n, 3);
	/* An event scheduled in the past runs at the current time. */
	assert_int_equal(qs_sim_schedule(s, 50, record, NULL, 6), 0);
	assert_int_equal(qs_sim_run(s), 3);
	int want[] = {2, 4, 5, 6, 3, 1};
	uint64_t want_t[] = {100, 100, 100, 200, 300, 500};
	assert_int_equal(log.n, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(log.seen[i], want[i]);
		assert_int_equal(log.when[i], want_t[i]);
	}
	qs_sim_free(s);
}

/* ---- volume: completions never inside the submission ---- */

struct io_ctx {
	int done, result;
	uint64_t t_done;
	struct qs_sim *sim;
};

static void io_done(void *arg, int result)
{
	struct io_ctx *c = arg;
	c->done++;
	c->result = result;
	c->t_done = qs_sim_now(c->sim);
}

static void test_no_completion_inside_submit(void **state)
{
	(void)state;
	struct qs_profile p = test_profile();
	struct qs_model *m = qs_model_new(&p, 0);
	struct qs_sim *s = qs_sim_new();
	struct qs_sim_vol *sv = qs_sim_vol_new(s, m, QS_SIM_DATA_NONE);
	assert_non_null(sv);
	struct qs_vol *v = qs_sim_vol_vol(sv);
	assert_int_equal(v->size, qs_model_capacity(m));
	assert_int_equal(v->flags & QS_VOL_VOLATILE_CACHE, 0); /* PLP */
	static char buf[64 * 1024];
	struct iovec iov = {buf, sizeof(buf)};
	struct io_ctx c[5];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 5; i++)
		c[i].sim = s;
	v->ops->write(v->ctx, 0, &iov, 1, 0, io_done, &c[0]);
	assert_int_equal(c[0].done, 0);
	v->ops->read(v->ctx, 0, &iov, 1, io_done, &c[1]);
	assert_int_equal(c[1].done, 0);
	v->ops->flush(v->ctx, io_done, &c[2]);
	assert_int_equal(c[2].done, 0);
	v->ops->discard(v->ctx, 0, 64 * KIB, io_done, &c[3]);
	assert_int_equal(c[3].done, 0);
	/* Errors are reported through the callback too, and later. */
	v->ops->write(v->ctx, 100, &iov, 1, 0, io_done, &c[4]);
	assert_int_equal(c[4].done, 0);
	assert_int_equal(qs_sim_vol_inflight(sv), 5);
	qs_sim_run(s);
	for (int i = 0; i < 5; i++)
		assert_int_equal(c[i].done, 1);
	assert_int_equal(c[4].result, -EINVAL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c[i].result, 0);
	assert_true(c[0].t_done > 0); /* took virtual time */
	assert_true(c[1].t_done > 0);
	assert_int_equal(qs_sim_vol_inflight(sv), 0);
	qs_sim_vol_free(sv);
	qs_sim_free(s);
	qs_model_free(m);
}

/* ---- determinism of a closed loop through the volume ---- */

struct loop {
	struct qs_sim *sim;
	struct qs_vol *v;
	uint64_t rng, hash;
	int left;
	char buf[4096];
	struct iovec iov;
};

static void loop_next(struct loop *l);

static void loop_done(void *arg, int result)
{
	struct loop *l = arg;
	l->hash = l->hash * 1000003u ^ qs_sim_now(l->sim) ^ (uint64_t)(result + 7);
	if (l->left > 0)
		loop_next(l);
}

static void loop_next(struct loop *l)
{
	l->left--;
	l->rng = l->rng * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t off = ((l->rng >> 20) % (l->v->size / 4096)) * 4096;
	l->iov.iov_base = l->buf;
	l->iov.iov_len = 4096;
	if ((l->rng >> 60) & 1)
		l->v->ops->write(l->v->ctx, off, &l->iov, 1, 0, loop_done, l);
	else
		l->v->ops->read(l->v->ctx, off, &l->iov, 1, loop_done, l);
}

static uint64_t run_loops(uint64_t seed)
{
	struct qs_profile p = test_profile();
	struct qs_model *m = qs_model_new(&p, 0);
	struct qs_sim *s = qs_sim_new();
	struct qs_sim_vol *sv = qs_sim_vol_new(s, m, QS_SIM_DATA_NONE);
	assert_non_null(sv);
	struct loop *l = calloc(8, sizeof(*l));
	assert_non_null(l);
	for (int i = 0; i < 8; i++) {
		l[i].sim = s;
		l[i].v = qs_sim_vol_vol(sv);
		l[i].rng = seed + (uint64_t)i;
		l[i].left = 2000;
		loop_next(&l[i]);
	}
	qs_sim_run(s);
	uint64_t h = qs_sim_now(s);
	for (int i = 0; i < 8; i++)
		h = h * 31 + l[i].hash;
	free(l);
	qs_sim_vol_free(sv);
	qs_sim_free(s);
	qs_model_free(m);
	return h;
}

static void test_determinism(void **state)
{
	(void)state;
	uint64_t a = run_loops(1), b = run_loops(1), c = run_loops(2);
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
}

/* ---- env: virtual clock and the one timer ---- */

struct timer_ctx {
	struct qs_sim *sim;
	int fired;
	uint64_t at;
};

static void on_timer(void *arg)
{
	struct timer_ctx *t = arg;
	t->fired++;
	t->at = qs_sim_now(t->sim);
}

static void test_env_timer(void **state)
{
	(void)state;
	struct qs_sim *s = qs_sim_new();
	struct timer_ctx t = {.sim = s};
	qs_sim_set_timer_cb(s, on_timer, &t);
	const struct qs_env *env = qs_sim_env(s);
	assert_int_equal(env->ops->now_ns(env->ctx), 0);
	/* A newer deadline replaces the older one. */
	env->ops->timer_set(env->ctx, 1000);
	env->ops->timer_set(env->ctx, 5000);
	assert_int_equal(t.fired, 0);
	qs_sim_run(s);
	assert_int_equal(t.fired, 1);
	assert_int_equal(t.at, 5000);
	assert_int_equal(env->ops->now_ns(env->ctx), 5000);
	/* 0 cancels; the cancelled deadline does not even move the clock. */
	env->ops->timer_set(env->ctx, 9000);
	env->ops->timer_set(env->ctx, 0);
	qs_sim_run(s);
	assert_int_equal(t.fired, 1);
	assert_int_equal(qs_sim_now(s), 5000);
	/* A deadline in the past fires at once (from the loop, not inline). */
	env->ops->timer_set(env->ctx, 10);
	assert_int_equal(t.fired, 1);
	qs_sim_run(s);
	assert_int_equal(t.fired, 2);
	assert_int_equal(t.at, 5000);
	void *p = env->ops->alloc(env->ctx, 8192, 4096);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 4096, 0);
	env->ops->free(env->ctx, p);
	qs_sim_free(s);
}

/* ---- data store ---- */

static void submit_wait(struct qs_sim *s, struct qs_vol *v, int op, uint64_t off, void *buf,
			size_t len)
{
	struct io_ctx c = {.sim = s};
	struct iovec iov[2] = {{buf, len / 2}, {(char *)buf + len / 2, len / 2}};
	if (op == 0)
		v->ops->read(v->ctx, off, iov, 2, io_done, &c);
	else if (op == 1)
		v->ops->write(v->ctx, off, iov, 2, QS_WRITE_FUA, io_done, &c);
	else
		v->ops->discard(v->ctx, off, len, io_done, &c);
	qs_sim_run(s);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.result, 0);
}

static void test_data_store(void **state)
{
	(void)state;
	struct qs_profile p = test_profile();
	struct qs_model *m = qs_model_new(&p, 0);
	struct qs_sim *s = qs_sim_new();
	struct qs_sim_vol *keep = qs_sim_vol_new(s, m, QS_SIM_DATA_STORE);
	struct qs_sim_vol *timing = qs_sim_vol_new(s, m, QS_SIM_DATA_ZERO);
	struct qs_vol *v = qs_sim_vol_vol(keep), *t = qs_sim_vol_vol(timing);
	char *w = malloc(64 * KIB), *r = malloc(64 * KIB);
	assert_non_null(w);
	assert_non_null(r);
	for (size_t i = 0; i < 64 * KIB; i++)
		w[i] = (char)(i * 7 + 3);
	submit_wait(s, v, 1, 1 * MIB, w, 64 * KIB);
	memset(r, 0xaa, 64 * KIB);
	submit_wait(s, v, 0, 1 * MIB, r, 64 * KIB);
	assert_memory_equal(r, w, 64 * KIB);
	/* Never written: zeroes. */
	memset(r, 0xaa, 8 * KIB);
	submit_wait(s, v, 0, 8 * MIB, r, 8 * KIB);
	for (size_t i = 0; i < 8 * KIB; i++)
		assert_int_equal(r[i], 0);
	/* Discard part of it: those blocks read back as zeroes, the rest
	 * keeps its data. */
	submit_wait(s, v, 2, 1 * MIB + 16 * KIB, r, 16 * KIB);
	submit_wait(s, v, 0, 1 * MIB, r, 64 * KIB);
	assert_memory_equal(r, w, 16 * KIB);
	for (size_t i = 16 * KIB; i < 32 * KIB; i++)
		assert_int_equal(r[i], 0);
	assert_memory_equal(r + 32 * KIB, w + 32 * KIB, 32 * KIB);
	/* The zeroing timing-only volume stores nothing: reads return zeroes. */
	submit_wait(s, t, 1, 2 * MIB, w, 64 * KIB);
	memset(r, 0xaa, 64 * KIB);
	submit_wait(s, t, 0, 2 * MIB, r, 64 * KIB);
	for (size_t i = 0; i < 64 * KIB; i++)
		assert_int_equal(r[i], 0);
	free(w);
	free(r);
	qs_sim_vol_free(keep);
	qs_sim_vol_free(timing);
	qs_sim_free(s);
	qs_model_free(m);
}

/*
 * A power cut (qs_sim_vol_set_power): a write in flight when power goes is
 * lost, never applied and never called back, as is one submitted while it
 * is off; what completed before stays; with power back the volume works.
 * The store's copies are timed only while counted (qs_sim_vol_count_cpu).
 */
static void test_power_cut(void **state)
{
	(void)state;
	struct qs_profile p = test_profile();
	struct qs_model *m = qs_model_new(&p, 0);
	struct qs_sim *s = qs_sim_new();
	struct qs_sim_vol *sv = qs_sim_vol_new(s, m, QS_SIM_DATA_STORE);
	struct qs_vol *v = qs_sim_vol_vol(sv);
	char *a = malloc(8 * KIB), *b = malloc(8 * KIB), *r = malloc(8 * KIB);
	assert_true(a && b && r);
	memset(a, 0x11, 8 * KIB);
	memset(b, 0x22, 8 * KIB);
	qs_sim_vol_count_cpu(sv, true); /* the store's copies timed from here */
	submit_wait(s, v, 1, 0, a, 8 * KIB);
	struct io_ctx c1 = {.sim = s}, c2 = {.sim = s};
	struct iovec i1 = {b, 8 * KIB}, i2 = {b, 8 * KIB};
	v->ops->write(v->ctx, 0, &i1, 1, 0, io_done, &c1);
	qs_sim_vol_set_power(sv, false);
	v->ops->write(v->ctx, 64 * KIB, &i2, 1, 0, io_done, &c2);
	qs_sim_run(s);
	assert_int_equal(c1.done + c2.done, 0);
	assert_int_equal(qs_sim_vol_inflight(sv), 0);
	qs_sim_vol_set_power(sv, true);
	submit_wait(s, v, 0, 0, r, 8 * KIB);
	assert_memory_equal(r, a, 8 * KIB);
	submit_wait(s, v, 0, 64 * KIB, r, 8 * KIB);
	for (size_t i = 0; i < 8 * KIB; i++)
		assert_int_equal(r[i], 0);
	assert_true(qs_sim_vol_store_cpu_s(sv) > 0);
	/* not timed once counting stops */
	double cpu = qs_sim_vol_store_cpu_s(sv);
	qs_sim_vol_count_cpu(sv, false);
	submit_wait(s, v, 0, 0, r, 8 * KIB);
	assert_true(qs_sim_vol_store_cpu_s(sv) == cpu);
	free(a);
	free(b);
	free(r);
	qs_sim_vol_free(sv);
	qs_sim_free(s);
	qs_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_no_completion_inside_submit),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_env_timer),
		cmocka_unit_test(test_data_store),
		cmocka_unit_test(test_power_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
