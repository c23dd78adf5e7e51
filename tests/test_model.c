/* SPDX-License-Identifier: MIT */
/* Device model: IU read-modify-write, buffer merges, GC and validity,
 * determinism, clones, FTL regions, slot layout, program passes, and the
 * profile loader's error messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../bench/cmds.h"
#include "host/model.h"
#include "host/profile.h"
#include "ttmp.h"
#include "tprof.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)

/* A small QLC-like drive: 8 dies, 64 KiB IU, 4 IUs per program unit. */
static struct qs_profile small_qlc(void)
{
	struct qs_profile p;
	tprof_small_qlc(&p, "test-qlc");
	return p;
}

static struct qs_model *new_filled(const struct qs_profile *p, uint64_t *t)
{
	struct qs_model *m = qs_model_new(p, 0);
	assert_non_null(m);
	*t = qs_model_fill_seq(m, 0, 0, qs_model_capacity(m));
	return m;
}

static void test_whole_iu_no_rmw(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	uint64_t t;
	struct qs_model *m = new_filled(&p, &t);
	struct qs_model_counters c0, c1;
	qs_model_get_counters(m, &c0);
	/* Whole, aligned IUs over mapped data: no read of the old IU. */
	t = qs_model_submit(m, t, QS_OP_WRITE, 0, 64 * KIB);
	t = qs_model_submit(m, t, QS_OP_WRITE, 128 * KIB, 256 * KIB);
	qs_model_get_counters(m, &c1);
	assert_int_equal(c1.rmw, c0.rmw);
	assert_int_equal(c1.partial_ius, c0.partial_ius);
	/* A 4 KiB write into an IU that is on NAND: one read-modify-write. */
	t = qs_model_submit(m, t, QS_OP_WRITE, 10 * 64 * KIB + 8 * KIB, 4 * KIB);
	qs_model_get_counters(m, &c0);
	assert_int_equal(c0.rmw, c1.rmw + 1);
	assert_int_equal(c0.partial_ius, c1.partial_ius + 1);
	/* A misaligned 64 KiB write touches two IUs, both partial. */
	t = qs_model_submit(m, t, QS_OP_WRITE, 20 * 64 * KIB + 4 * KIB, 64 * KIB);
	qs_model_get_counters(m, &c1);
	assert_int_equal(c1.rmw, c0.rmw + 2);
	/* Another 4 KiB write into the IU just written: it is still in the
	 * write buffer (its program unit is not complete), so it merges. */
	t = qs_model_submit(m, t, QS_OP_WRITE, 10 * 64 * KIB, 4 * KIB);
	qs_model_get_counters(m, &c0);
	assert_int_equal(c0.rmw, c1.rmw);
	assert_int_equal(c0.buffer_merges, c1.buffer_merges + 1);
	assert_int_equal(qs_model_check(m), 0);
	qs_model_free(m);
}

static void test_rmw_slower_than_whole(void **state)
{
	(void)state;
	/* The same number of 4 KiB random writes and 64 KiB random writes at
	 * the same depth: the 4 KiB ones cost a whole IU each plus a read, so
	 * they cannot move more bytes per second. */
	struct qs_profile p = small_qlc();
	double bps[2];
	for (int k = 0; k < 2; k++) {
		uint64_t t;
		struct qs_model *m = new_filled(&p, &t);
		uint64_t bs = k ? 64 * KIB : 4 * KIB, t0 = t, rng = 7;
		uint64_t done[16] = {0};
		for (int i = 0; i < 3000; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t off = ((rng >> 20) % (qs_model_capacity(m) / bs)) * bs;
			uint64_t now = done[i % 16] > t ? done[i % 16] : t;
			done[i % 16] = qs_model_submit(m, now, QS_OP_WRITE, off, bs);
			t = now;
		}
		uint64_t end = 0;
		for (int i = 0; i < 16; i++)
			end = done[i] > end ? done[i] : end;
		bps[k] = 3000.0 * (double)bs / (double)(end - t0);
		qs_model_free(m);
	}
	assert_true(bps[0] * 4 < bps[1]);
}

/*
 * The bandwidth rings forget what lies behind the clock: after a burst that
 * fills channel and link slots ahead, then idle time of any length (within
 * a lap of the ring, across zeroing blocks, or several laps), a read takes
 * exactly as long as on the drive before the burst. Stale reservations
 * left in the ring would make it slower.
 */
static void test_bandwidth_ring_idle(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	uint64_t t;
	struct qs_model *m = new_filled(&p, &t);
	t += 1000000000ull; /* let the fill's programs finish */
	uint64_t lat0 = qs_model_submit(m, t, QS_OP_READ, 0, 64 * KIB) - t;
	assert_true(lat0 > 0);
	static const uint64_t gap_ms[] = {50, 70, 300, 520, 600, 1100, 1500, 10000, 100000, 60};
	for (size_t g = 0; g < sizeof(gap_ms) / sizeof(gap_ms[0]); g++) {
		t += 1000000000ull;
		uint64_t end = t;
		for (uint64_t i = 0; i < 200; i++) { /* a burst: slots reserved ahead */
			uint64_t e = qs_model_submit(m, t, QS_OP_READ, (i * 7 % 200) * 64 * KIB,
						     64 * KIB);
			end = e > end ? e : end;
		}
		assert_true(end - t > 20 * lat0);
		t = end + gap_ms[g] * 1000000ull;
		assert_int_equal(qs_model_submit(m, t, QS_OP_READ, 0, 64 * KIB) - t, lat0);
	}
	qs_model_free(m);
}

static void test_gc_validity(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	uint64_t t;
	struct qs_model *m = new_filled(&p, &t);
	uint32_t nsb = qs_model_superblocks(m);
	assert_true(qs_model_free_superblocks(m) < nsb / 5);
	uint64_t rng = 1;
	uint64_t ius = qs_model_capacity(m) / (64 * KIB);
	/* Random whole-IU overwrites, three times the capacity: GC must
	 * free space again and again. */
	for (uint64_t i = 0; i < 3 * ius; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		t = qs_model_submit(m, t, QS_OP_WRITE, (rng % ius) * 64 * KIB, 64 * KIB);
		if (i % 997 == 0)
			assert_int_equal(qs_model_check(m), 0);
	}
	struct qs_model_counters c;
	qs_model_get_counters(m, &c);
	assert_true(c.gc_runs > 0);
	assert_true(c.gc_moves > 0);
	assert_true(c.erases > 0);
	/* GC keeps the pool near its watermark: never exhausted. */
	assert_true(qs_model_free_superblocks(m) >= p.gc_free_low - 1);
	/* Write amplification inside the drive: programmed > host written. */
	assert_true(c.nand_prog_bytes > c.host_write_bytes);
	assert_int_equal(qs_model_check(m), 0);
	/* Discard everything: validity drops to nothing and stays consistent. */
	qs_model_submit(m, t, QS_OP_DISCARD, 0, qs_model_capacity(m));
	assert_int_equal(qs_model_check(m), 0);
	qs_model_get_counters(m, &c);
	uint64_t rd = c.nand_read_bytes;
	qs_model_submit(m, t, QS_OP_READ, 0, 64 * KIB);
	qs_model_get_counters(m, &c);
	assert_int_equal(c.nand_read_bytes, rd); /* unmapped: no NAND read */
	qs_model_free(m);
}

static void test_fill_random(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	struct qs_model *m = qs_model_new(&p, 0);
	assert_non_null(m);
	uint64_t ius = qs_model_capacity(m) / (64 * KIB);
	qs_model_fill_random(m, 0, 0, qs_model_capacity(m), 42);
	struct qs_model_counters c;
	qs_model_get_counters(m, &c);
	/* Every IU written exactly once, whole: no RMW, no GC needed. */
	assert_int_equal(c.host_writes, ius);
	assert_int_equal(c.rmw, 0);
	assert_int_equal(c.gc_moves, 0);
	assert_int_equal(qs_model_check(m), 0);
	/* All of it mapped: discarding everything drops every valid IU. */
	uint32_t free0 = qs_model_free_superblocks(m);
	qs_model_submit(m, qs_model_idle_time(m), QS_OP_DISCARD, 0, qs_model_capacity(m));
	assert_int_equal(qs_model_check(m), 0);
	assert_int_equal(qs_model_free_superblocks(m), free0); /* GC is lazy */
	qs_model_free(m);
}

static uint64_t run_trace(struct qs_model *m, uint64_t t, uint64_t seed, uint64_t *sum)
{
	uint64_t cap = qs_model_capacity(m);
	for (int i = 0; i < 20000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int op = (int)((seed >> 60) % 4 == 0 ? QS_OP_READ : QS_OP_WRITE);
		uint64_t len = ((seed >> 8) % 4 == 0 ? 64 : 4) * KIB;
		uint64_t off = ((seed >> 16) % (cap / len)) * len;
		uint64_t c = qs_model_submit(m, t, op, off, len);
		assert_true(c >= t);
		*sum = *sum * 31 + c;
		t += (seed >> 40) % 20000;
	}
	return t;
}

static void test_determinism_and_clone(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	uint64_t t1, t2, s1 = 0, s2 = 0, s3 = 0;
	struct qs_model *a = new_filled(&p, &t1);
	struct qs_model *b = new_filled(&p, &t2);
	assert_int_equal(t1, t2);
	t1 = run_trace(a, t1, 99, &s1);
	t2 = run_trace(b, t2, 99, &s2);
	assert_int_equal(s1, s2);
	/* A clone continues exactly like its original. */
	struct qs_model *c = qs_model_clone(a);
	assert_non_null(c);
	s1 = s3 = 0;
	run_trace(a, t1, 5, &s1);
	run_trace(c, t1, 5, &s3);
	assert_int_equal(s1, s3);
	/* A different trace gives different times (the test can fail). */
	s2 = 0;
	run_trace(b, t2, 6, &s2);
	assert_int_not_equal(s1, s2);
	qs_model_free(a);
	qs_model_free(b);
	qs_model_free(c);
}

/*
 * A snapshot's clones continue exactly like the original, never see each
 * other's writes (their tables are copy-on-write), outlive the snapshot,
 * and a deep clone of such a clone continues like it too.
 */
static void test_snapshot_clones(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	uint64_t t, s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
	struct qs_model *a = new_filled(&p, &t);
	t = run_trace(a, t, 99, &s0);
	struct qs_model *snap = qs_model_snapshot(a);
	assert_non_null(snap);
	assert_int_equal(qs_model_check(snap), 0);
	struct qs_model *c1 = qs_model_clone(snap), *c2 = qs_model_clone(snap);
	assert_non_null(c1);
	assert_non_null(c2);
	run_trace(a, t, 5, &s1);
	run_trace(c1, t, 5, &s2);
	assert_int_equal(s1, s2);
	run_trace(c2, t, 5, &s3); /* after c1 wrote its tables */
	assert_int_equal(s1, s3);
	struct qs_model *c3 = qs_model_clone(snap); /* after both wrote */
	assert_non_null(c3);
	qs_model_free(snap); /* clones keep their mapping */
	struct qs_model *c4 = qs_model_clone(c3); /* deep copy of a snapshot clone */
	assert_non_null(c4);
	s3 = 0;
	run_trace(c3, t, 5, &s3);
	run_trace(c4, t, 5, &s4);
	assert_int_equal(s1, s3);
	assert_int_equal(s1, s4);
	/* and a different trace differs (the test can fail) */
	s2 = 0;
	run_trace(c2, t, 6, &s2);
	assert_int_not_equal(s1, s2);
	assert_int_equal(qs_model_check(c1), 0);
	assert_int_equal(qs_model_check(c2), 0);
	assert_int_equal(qs_model_check(c3), 0);
	assert_int_equal(qs_model_check(c4), 0);
	qs_model_free(a);
	qs_model_free(c1);
	qs_model_free(c2);
	qs_model_free(c3);
	qs_model_free(c4);
}

/* NAND write amplification of n random whole-IU writes on [0, span). */
static double random_write_wa(struct qs_model *m, uint64_t *t, uint64_t span, uint64_t n,
			      uint64_t seed)
{
	struct qs_model_counters c0, c1;
	qs_model_get_counters(m, &c0);
	uint64_t ius = span / (64 * KIB);
	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		*t = qs_model_submit(m, *t, QS_OP_WRITE, ((seed >> 20) % ius) * 64 * KIB,
				     64 * KIB);
		if (i % 1999 == 0)
			assert_int_equal(qs_model_check(m), 0);
	}
	qs_model_get_counters(m, &c1);
	return (double)(c1.nand_prog_bytes - c0.nand_prog_bytes) /
	       (double)(c1.host_write_bytes - c0.host_write_bytes);
}

/*
 * FTL regions: each region has its own spare, so random writes confined to
 * one region pay about the GC cost of random writes over the whole drive;
 * with one global pool a small span borrows the whole drive's spare and
 * costs almost nothing. State stays consistent (ownership included, with
 * paced GC's victim in progress) and a clone continues exactly like its
 * original.
 */
static void test_regions_span(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	p.capacity_bytes = 512 * MIB;
	p.superblocks = 256;
	double wa[2][2]; /* [regions][small span] */
	for (int r = 0; r < 2; r++) {
		p.ftl_regions = r ? 8 : 1;
		p.unit_major = (uint32_t)r;
		p.gc_paced = (uint32_t)r;
		for (int s = 0; s < 2; s++) {
			uint64_t t;
			struct qs_model *m = new_filled(&p, &t);
			uint64_t cap = qs_model_capacity(m);
			uint64_t span = s ? cap / 8 : cap;
			/* Three rewrites of the span's worth of the spare first, then measure. */
			random_write_wa(m, &t, span, 3 * span / (64 * KIB), 7);
			wa[r][s] = random_write_wa(m, &t, span, 2 * span / (64 * KIB), 8);
			assert_int_equal(qs_model_check(m), 0);
			if (r && s) {
				struct qs_model *c = qs_model_clone(m);
				assert_non_null(c);
				uint64_t s1 = 0, s2 = 0;
				run_trace(m, t, 3, &s1);
				run_trace(c, t, 3, &s2);
				assert_int_equal(s1, s2);
				assert_int_equal(qs_model_check(c), 0);
				qs_model_free(c);
			}
			qs_model_free(m);
		}
	}
	/* One pool: a 1/8 span is much cheaper than the whole drive. */
	assert_true(wa[0][1] < 0.5 * wa[0][0]);
	assert_true(wa[0][0] > 2.0);
	/* Regions: the 1/8 span costs at least 70% of the whole drive's WA. */
	assert_true(wa[1][1] > 0.7 * wa[1][0]);
	assert_true(wa[1][1] > 2.0);
}

/*
 * Slot layout: die-major keeps a whole stripe in the buffer (an IU written
 * again right away still merges after unit_ius IUs), unit-major programs a
 * die's unit as soon as its unit_ius IUs are in (the same rewrite then goes
 * to NAND).
 */
static void test_unit_major_layout(void **state)
{
	(void)state;
	for (int um = 0; um < 2; um++) {
		struct qs_profile p = small_qlc();
		p.unit_major = (uint32_t)um;
		struct qs_model *m = qs_model_new(&p, 0);
		assert_non_null(m);
		uint64_t t = 0;
		for (int i = 0; i < 4; i++)
			t = qs_model_submit(m, t, QS_OP_WRITE, (uint64_t)i * 64 * KIB, 64 * KIB);
		struct qs_model_counters c0, c1;
		qs_model_get_counters(m, &c0);
		qs_model_submit(m, t, QS_OP_WRITE, 0, 64 * KIB);
		qs_model_get_counters(m, &c1);
		assert_int_equal(c1.buffer_merges - c0.buffer_merges, um ? 0 : 1);
		assert_int_equal(qs_model_check(m), 0);
		qs_model_free(m);
	}
}

/* Mean latency of n 4K random writes at depth 1 on a filled model. */
static double rmw_latency(const struct qs_profile *p, uint64_t n)
{
	uint64_t t;
	struct qs_model *m = new_filled(p, &t);
	uint64_t ius = qs_model_capacity(m) / (64 * KIB), seed = 11, sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* A whole-IU write keeps the dies programming between RMWs. */
		t = qs_model_submit(m, t, QS_OP_WRITE, ((seed >> 24) % ius) * 64 * KIB, 64 * KIB);
		uint64_t c = qs_model_submit(m, t, QS_OP_WRITE,
					     ((seed >> 40) % ius) * 64 * KIB + 4 * KIB, 4 * KIB);
		sum += c - t;
		t = c;
	}
	qs_model_free(m);
	return (double)sum / (double)n;
}

/*
 * The read of a read-modify-write waits for the program pass under way on
 * its die: with two passes per unit it waits less than with one.
 */
static void test_prog_passes(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	p.write_buffer_bytes = 256 * MIB; /* admission never waits: the read does */
	p.prog_passes = 1;
	double one = rmw_latency(&p, 3000);
	p.prog_passes = 2;
	double two = rmw_latency(&p, 3000);
	assert_true(two < 0.9 * one);
}

/*
 * The power budget caps the programs at once, whatever the dies: 8 dies
 * with power for 3 programs write at 3 dies' rate, and without the keys at
 * 8 dies' (the channels, 4 x 800 MB/s, are not the limit).
 */
static void test_power_cap(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	double rate[2];
	for (int k = 0; k < 2; k++) {
		if (k) {
			p.power_w = 10;
			p.power_idle_w = 9;
			p.prog_mw = 1000.0 / 3;
		}
		struct qs_model *m = qs_model_new(&p, 0);
		assert_non_null(m);
		uint64_t bytes = 128 * MIB;
		uint64_t end = qs_model_fill_seq(m, 0, 0, bytes);
		rate[k] = (double)bytes / (double)end; /* bytes per ns */
		assert_int_equal(qs_model_check(m), 0);
		qs_model_free(m);
	}
	double unit_per_ns = 4.0 * 64 * KIB / (double)p.t_prog_ns;
	assert_true(fabs(rate[0] / (8 * unit_per_ns) - 1) < 0.05);
	assert_true(fabs(rate[1] / (3 * unit_per_ns) - 1) < 0.05);
}

static void test_scm_no_iu_penalty(void **state)
{
	(void)state;
	struct qs_profile p = small_qlc();
	p.media = QS_MEDIA_SCM;
	p.iu_bytes = 4 * KIB;
	p.unit_ius = 1;
	p.t_read_ns = 5000;
	p.t_prog_ns = 8000;
	struct qs_model *m = qs_model_new(&p, 0);
	assert_non_null(m);
	uint64_t t = 0, c = qs_model_submit(m, t, QS_OP_WRITE, 4 * KIB, 4 * KIB);
	/* controller + link + one media write: microseconds, no RMW */
	assert_true(c - t < 20000);
	struct qs_model_counters k;
	qs_model_get_counters(m, &k);
	assert_int_equal(k.rmw, 0);
	qs_model_free(m);
}

/* dst = src with the first from replaced by to. */
static void subst(char *dst, size_t n, const char *src, const char *from, const char *to)
{
	const char *at = strstr(src, from);
	assert_non_null(at);
	snprintf(dst, n, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
}

/* A valid profile file (its lines are what the error checks count). */
static const char *const good_ini = tprof_tiny_qlc;

static void test_profile_loader(void **state)
{
	(void)state;
	char path[64];
	ttmp_file(path, sizeof(path), "profile", ".ini", NULL);
	struct qs_profile p;
	char err[512], buf[1024];

	ttmp_write(path, good_ini);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), 0);
	assert_int_equal(p.iu_bytes, 65536);
	assert_int_equal(p.t_prog_ns, 2000000);
	assert_int_equal(p.capacity_bytes, 1000000000ull);

	/* A value out of range: the message names file, line, key, value
	 * and the allowed range. op_pct is on line 6. */
	subst(buf, sizeof(buf), good_ini, "op_pct = 7", "op_pct = 900");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	char want[600];
	snprintf(want, sizeof(want), "%s:6:", path);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "op_pct"));
	assert_non_null(strstr(err, "'900'"));
	assert_non_null(strstr(err, "0..200"));

	/* The power keys go together, and leave power for one program. */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "power_w = 25\nprog_mw = 125\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "power_idle_w is missing"));
	snprintf(buf, sizeof(buf), "%s%s", good_ini,
		 "power_w = 25\npower_idle_w = 24.95\nprog_mw = 125\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "[drive] power_idle_w = '24.95': leaves no power"));
	snprintf(buf, sizeof(buf), "%s%s", good_ini,
		 "power_w = 25\npower_idle_w = 5\nprog_mw = 125\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), 0);
	assert_true(p.power_w == 25 && p.power_idle_w == 5 && p.prog_mw == 125);

	/* Not a number. */
	subst(buf, sizeof(buf), good_ini, "channels = 2", "channels = x");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "channels"));
	assert_non_null(strstr(err, ":7:"));

	/* An unknown key is an error, not silently ignored. */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "tprog_us = 5\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tprog_us"));
	assert_non_null(strstr(err, ":19:"));

	/* A missing required key. */
	subst(buf, sizeof(buf), good_ini, "plp = 1\n", "");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "plp"));
	assert_non_null(strstr(err, "missing"));

	/* A write buffer too small for two die stripes. */
	subst(buf, sizeof(buf), good_ini, "write_buffer_mib = 8", "write_buffer_mib = 1");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "write_buffer_mib"));
	assert_non_null(strstr(err, ":17:"));

	/* No endurance keys: no rating. */
	ttmp_write(path, good_ini);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), 0);
	assert_true(p.endurance_pbw == 0);
	assert_int_equal(p.endurance_rw, QS_ENDURANCE_NONE);

	/* The three endurance keys (lines 19..21) load together. */
	static const char endur[] = "endurance_pbw = 22.93\n"
				    "endurance_rw = randwrite\n"
				    "endurance_bs_kib = 64\n";
	snprintf(buf, sizeof(buf), "%s%s", good_ini, endur);
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), 0);
	assert_true(p.endurance_pbw > 22.92 && p.endurance_pbw < 22.94);
	assert_int_equal(p.endurance_rw, QS_ENDURANCE_RANDWRITE);
	assert_int_equal(p.endurance_bs_bytes, 65536);
	assert_string_equal(qs_profile_endurance_rw_name(p.endurance_rw), "randwrite");
	assert_true(p.endurance_prog_amp == 0); /* not given */

	/* The rating's program amplification, with the rating; alone it is
	 * refused, and outside 1..100 too, naming the line (22). */
	snprintf(buf, sizeof(buf), "%s%s%s", good_ini, endur, "endurance_prog_amp = 4.56\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), 0);
	assert_true(p.endurance_prog_amp > 4.55 && p.endurance_prog_amp < 4.57);
	snprintf(buf, sizeof(buf), "%s%s%s", good_ini, endur, "endurance_prog_amp = 0.5\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":22: [drive] endurance_prog_amp = '0.5'"));
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "endurance_prog_amp = 4.56\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "endurance_prog_amp needs a rating"));

	/* A rating without its pattern: the missing key is named. */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "endurance_pbw = 22.93\nendurance_bs_kib = 64\n");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "endurance_rw is missing"));
	assert_non_null(strstr(err, path));

	/* Out of range rating, bad pattern name, blocks that are not whole IUs:
	 * each names file, line, key, value and what is allowed. */
	char src[1024];
	snprintf(src, sizeof(src), "%s%s", good_ini, endur);
	subst(buf, sizeof(buf), src, "endurance_pbw = 22.93", "endurance_pbw = 0");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:19: [drive] endurance_pbw = '0'", path);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "0.001..1e+06"));
	subst(buf, sizeof(buf), src, "= randwrite", "= randrw");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":20: [drive] endurance_rw = 'randrw'"));
	assert_non_null(strstr(err, "randwrite, write"));
	subst(buf, sizeof(buf), src, "endurance_bs_kib = 64", "endurance_bs_kib = 16");
	ttmp_write(path, buf);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":21: [drive] endurance_bs_kib = '16'"));
	assert_non_null(strstr(err, "whole number of IUs (iu_kib = 64)"));

	unlink(path);
}

/* Issue 12: what the profile loader took quietly or reported wrongly. */
static void expect_profile(const char *path, const char *text, const char *want)
{
	struct qs_profile p;
	char err[512] = "";
	ttmp_write(path, text);
	assert_int_equal(qs_profile_load(path, &p, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	if (!strstr(err, path) || !strstr(err, want))
		fail_msg("error '%s' lacks the path or '%s'", err, want);
}

static void test_profile_hostile(void **state)
{
	(void)state;
	char path[64], buf[1024];
	ttmp_file(path, sizeof(path), "profile", ".ini", NULL);
	/* a misspelt [drive] said "[drive] media is missing" */
	subst(buf, sizeof(buf), good_ini, "[drive]", "[drvie]");
	expect_profile(path, buf, ":1: unknown section '[drvie]'");
	subst(buf, sizeof(buf), good_ini, "[drive]", "[method.x]");
	expect_profile(path, buf, "no [drive] section");
	expect_profile(path, "; nothing here\n", "no [drive] section");
	/* a repeated key: the last won */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "op_pct = 20\n");
	expect_profile(path, buf, ":19: [drive] op_pct repeats the one on line 6");
	/* keys before [drive] were dropped */
	snprintf(buf, sizeof(buf), "%s%s", "op_pct = 20\n", good_ini);
	expect_profile(path, buf, ":1: key 'op_pct' before [drive]");
	/* gc_free_low = 1000 with superblocks = 16: the model grew the drive */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "superblocks = 16\ngc_free_low = 1000\n");
	expect_profile(path, buf, ":20: [drive] gc_free_low = '1000': at most half of "
				  "superblocks (16)");
	/* 700 FTL regions in 16 superblocks: the model grew the drive to 3,417
	 * superblocks (14 GB of maps for a wide die stripe; found by
	 * tests/fuzz/fuzz_profile.c) */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "superblocks = 16\nftl_regions = 700\n");
	expect_profile(path, buf, ":20: [drive] ftl_regions = '700': each region needs 4 "
				  "superblocks of its own: at most (superblocks 16 - gc_free_low 4) "
				  "/ 4 = 3");
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "superblocks = 16\nftl_regions = 3\n");
	{
		struct qs_profile q;
		char e2[512];
		ttmp_write(path, buf);
		if (qs_profile_load(path, &q, e2, sizeof(e2)))
			fail_msg("3 regions in 16 superblocks refused: %s", e2);
	}
	/* control bytes were quoted raw (found by tests/fuzz/fuzz_profile.c) */
	snprintf(buf, sizeof(buf), "%s%s", good_ini, "chan\x19nels = 2\n");
	expect_profile(path, buf, ":19: [drive] chan\\x19nels = '2': unknown key");
	/* a directory */
	char dir[64];
	struct qs_profile p;
	char err[256] = "";
	ttmp_dir(dir, sizeof(dir), "profile_dir");
	assert_int_equal(qs_profile_load(dir, &p, err, sizeof(err)), -EINVAL);
	rmdir(dir);
	assert_non_null(strstr(err, "not a profile file (a directory)"));
	unlink(path);
}

static void test_shipped_profiles_load(void **state)
{
	(void)state;
	static const char *names[] = {"p5316-30t", "p5316-15t", "p5510", "p4500", "optane"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256], err[512];
		struct qs_profile p;
		snprintf(path, sizeof(path), "conf/profiles/%s.ini", names[i]);
		if (access(path, R_OK))
			snprintf(path, sizeof(path), "../../conf/profiles/%s.ini", names[i]);
		int rc = qs_profile_load(path, &p, err, sizeof(err));
		if (rc)
			fail_msg("%s: %s", names[i], err);
		/* Ratings from drives.md where published: both P5316 capacities,
		 * the sequential one (the budget; docs/MODEL.md, Endurance). */
		if (!strncmp(names[i], "p5316", 5)) {
			assert_int_equal(p.endurance_rw, QS_ENDURANCE_WRITE);
			assert_int_equal(p.endurance_bs_bytes, p.iu_bytes);
			assert_true(p.endurance_pbw ==
				    (strstr(names[i], "30t") ? 104.55 : 51.85));
		}
		struct qs_model *m = qs_model_new(&p, (uint64_t)p.iu_bytes << 14);
		assert_non_null(m);
		qs_model_free(m);
	}
}

/*
 * A curve's points are paced at 10%, 20%, ... of the maximum measured: with
 * -v calibrate prints each point's rate; the low points run at their rate
 * (within 10%), not at the maximum.
 */
/* A shipped profile by name, from the source tree or the build directory. */
static void load_shipped(const char *name, struct qs_profile *p)
{
	char path[256], err[512];
	snprintf(path, sizeof(path), "conf/profiles/%s.ini", name);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "../../conf/profiles/%s.ini", name);
	if (qs_profile_load(path, p, err, sizeof(err)))
		fail_msg("%s: %s", name, err);
}

/*
 * The 15.36 TB P5316 is the 30.72 TB one with the parameters the capacity
 * changes: its capacity, its dies (dies_per_channel: half, same channels)
 * and its rating; everything else, power budget included, is the same
 * structure (docs/MODEL.md, Second capacity).
 */
static void test_p5316_capacities_share_structure(void **state)
{
	(void)state;
	struct qs_profile big, small;
	load_shipped("p5316-30t", &big);
	load_shipped("p5316-15t", &small);
	assert_int_equal(small.capacity_bytes * 2, big.capacity_bytes);
	assert_int_equal(small.dies_per_channel * 2, big.dies_per_channel);
	assert_true(small.endurance_pbw < big.endurance_pbw);
	/* the same drive but for those */
	small.capacity_bytes = big.capacity_bytes;
	small.dies_per_channel = big.dies_per_channel;
	small.endurance_pbw = big.endurance_pbw;
	memcpy(small.name, big.name, sizeof(small.name));
	assert_memory_equal(&small, &big, sizeof(big));
}

/* The JSON calibrate wrote to path, into out. */
static void read_json(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, len - 1, f);
	fclose(f);
	out[n] = 0;
}

/* The "model" figure of the point named name in JSON out. */
static double json_model(const char *out, const char *name)
{
	const char *p = strstr(out, name);
	double v = NAN;
	assert_non_null(p);
	assert_int_equal(sscanf(strstr(p, "\"model\": ") + 9, "%lf", &v), 1);
	return v;
}

/*
 * Endurance points: the sequential rating defines the NAND budget (its
 * amplification on a full drive overwritten in order is 1), the random
 * one is predicted from it and the model's GC, so below the budget. Units:
 * mbps_unit = MiB prints the point in MiB/s; offsets random = map run.
 * Bad values of the keys are refused by name.
 */
static void test_calibrate_endurance_units(void **state)
{
	(void)state;
	char ini[64], json[64], text[2048], out[8192];
	ttmp_file(ini, sizeof(ini), "cal", ".ini", NULL);
	ttmp_file(json, sizeof(json), "cal", ".json", NULL);
	char *argv[] = {"calibrate", "--profile", ini, "--json", json, "--scale-gib", "0.25", NULL};
	snprintf(text, sizeof(text),
		 "%s\n[method.m]\nspan_pct = 100\nrun_s = 40\nmbps_unit = MiB\nrandom = map\n"
		 "[test.1]\nmethod = m\nname = seq\nrw = write\nbs_kib = 64\nqd = 16\n"
		 "pbw = 100\nbudget = 1\nrun_s = 8\n"
		 "[test.2]\nmethod = m\nname = rnd\nrw = randwrite\nbs_kib = 64\nqd = 16\n"
		 "mbps = 100\npbw = 20\nlat_us = 20000\n",
		 good_ini);
	ttmp_write(ini, text);
	assert_int_equal(qs_cmd_bench_calibrate(7, argv), 0);
	read_json(json, out, sizeof(out));
	/* The method as run: its keys, and each test's depth with its source
	 * (100 MiB/s of 64 KiB is 1,600 IOPS; x 20 ms = 32 outstanding). */
	assert_non_null(strstr(out, "\"methods\": [\n  {\"name\": \"m\", \"fill\": \"seq\", "
				    "\"span_pct\": 100, \"random\": \"map\""));
	assert_non_null(strstr(out, "\"mb_bytes\": 1048576"));
	assert_non_null(strstr(out, "{\"name\": \"seq\", \"qd\": 16, \"qd_from\": \"threads\"}"));
	assert_non_null(strstr(out, "{\"name\": \"rnd\", \"qd\": 32, \"qd_from\": \"latency\"}"));
	assert_non_null(strstr(out, "\"unit\": \"MiB/s\""));
	assert_non_null(strstr(out, "\"unit\": \"PBW\""));
	double pbw = json_model(out, "m: endurance, rnd");
	assert_true(pbw > 5 && pbw < 60); /* 100 PB of NAND over the random WA */
	static const char *const bad[] = {"random = maps\n", "mbps_unit = GB\n"};
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "%s\n[method.m]\nspan_pct = 100\nrun_s = 4\n%s[test.1]\nmethod = m\n"
			 "name = rnd\nrw = randwrite\nbs_kib = 64\nqd = 16\nmbps = 100\n",
			 good_ini, bad[i]);
		ttmp_write(ini, text);
		assert_int_equal(qs_cmd_bench_calibrate(7, argv), 1);
	}
	/* A rating on a read, a budget without a rating: refused. */
	static const char *const badt[] = {"rw = read\npbw = 3\n", "rw = write\nbudget = 1\n"};
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "%s\n[method.m]\nspan_pct = 100\nrun_s = 4\n[test.1]\nmethod = m\n"
			 "name = x\n%sbs_kib = 64\nqd = 16\nmbps = 100\n", good_ini, badt[i]);
		ttmp_write(ini, text);
		assert_int_equal(qs_cmd_bench_calibrate(7, argv), 1);
	}
	unlink(ini);
	unlink(json);
}

static void test_calibrate_curve_pacing(void **state)
{
	(void)state;
	char ini[64], outp[64];
	ttmp_file(ini, sizeof(ini), "cur", ".ini", NULL);
	ttmp_file(outp, sizeof(outp), "cur", ".txt", NULL);
	int fd = open(outp, O_WRONLY);
	assert_true(fd >= 0);
	char text[2048];
	snprintf(text, sizeof(text),
		 "%s\n[method.m]\nspan_pct = 25\nreport = curve\nfirst_s = 4\n"
		 "[test.1]\nmethod = m\nname = 64K random write\nrw = randwrite\n"
		 "bs_kib = 64\nqd = 8\nmbps = 100\n",
		 good_ini);
	ttmp_write(ini, text);
	fflush(stdout);
	int saved = dup(1);
	assert_true(saved >= 0);
	assert_true(dup2(fd, 1) >= 0);
	char *argv[] = {"calibrate", "--profile", ini, "--scale-gib", "0.25", "-v", NULL};
	int rc = qs_cmd_bench_calibrate(6, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	assert_int_equal(rc, 0);
	FILE *f = fopen(outp, "r");
	assert_non_null(f);
	char line[1024];
	double pt[13];
	int got = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "120% of it:");
		if (!p)
			continue;
		p += strlen("120% of it:");
		for (int k = 0; k < 13; k++) {
			int used = 0;
			assert_int_equal(sscanf(p, "%lf%n", &pt[k], &used), 1);
			p += used;
		}
		got = 1;
	}
	fclose(f);
	assert_true(got);
	assert_true(pt[0] > 0);
	for (int k = 1; k <= 5; k++)
		assert_true(fabs(pt[k] - pt[0] * k / 10) < 0.1 * pt[0] * k / 10);
	unlink(ini);
	unlink(outp);
}

/* calibrate end to end on a tiny drive: the table and the JSON come out,
 * and a bad test definition is refused with its section named. */
static void test_calibrate_cmd(void **state)
{
	(void)state;
	char ini[64], json[64];
	ttmp_file(ini, sizeof(ini), "cal", ".ini", NULL);
	ttmp_file(json, sizeof(json), "cal", ".json", NULL);
	char text[2048];
	snprintf(text, sizeof(text),
		 "%s\n[method.m]\nspan_pct = 25\nrun_s = 8\n"
		 "[test.1]\nmethod = m\nname = 4K random write\nrw = randwrite\n"
		 "bs_kib = 4\nqd = 16\niops = 1000\n"
		 "[test.2]\nmethod = m\nname = 64K random write\nrw = randwrite\n"
		 "bs_kib = 64\nqd = 16\nmbps = 100\n"
		 "[test.3]\nmethod = m\nname = 64K read\nrw = read\nbs_kib = 64\nqd = 4\n",
		 good_ini);
	ttmp_write(ini, text);
	char *argv[] = {"calibrate", "--profile", ini, "--json", json, "--scale-gib", "0.25", NULL};
	assert_int_equal(qs_cmd_bench_calibrate(7, argv), 0);
	FILE *f = fopen(json, "r");
	assert_non_null(f);
	char out[8192];
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	fclose(f);
	out[n] = 0;
	assert_non_null(strstr(out, "\"points\": ["));
	assert_non_null(strstr(out, "m: 4K random write"));
	assert_non_null(strstr(out, "\"unit\": \"MB/s\""));
	assert_non_null(strstr(out, "\"error_pct\""));
	/* The 4K writes cost a whole IU each: far fewer bytes per second than
	 * the 64K writes, whatever the calibration. */
	double iops4 = 0, mbps64 = 0;
	char *p4 = strstr(out, "m: 4K random write");
	char *p64 = strstr(out, "m: 64K random write");
	assert_non_null(p4);
	assert_non_null(p64);
	assert_int_equal(sscanf(strstr(p4, "\"model\": ") + 9, "%lf", &iops4), 1);
	assert_int_equal(sscanf(strstr(p64, "\"model\": ") + 9, "%lf", &mbps64), 1);
	assert_true(iops4 > 0 && mbps64 > 0);
	assert_true(iops4 * 4096 * 4 < mbps64 * 1e6);
	/* A test without a published figure is the model's prediction: its
	 * IOPS, bandwidth and latency, with null for the figure and the error. */
	char *pr = strstr(out, "{\"name\": \"m: 64K read\", \"unit\": \"IOPS\", \"published\": null");
	assert_non_null(pr);
	double pred = 0;
	assert_int_equal(sscanf(strstr(pr, "\"model\": ") + 9, "%lf", &pred), 1);
	assert_true(pred > 0);
	assert_non_null(strstr(pr, "\"error_pct\": null, \"goal\": false, \"prediction\": true}"));
	assert_non_null(strstr(out, "\"name\": \"m: 64K read latency\", \"unit\": \"us\", "
				    "\"published\": null"));

	snprintf(text, sizeof(text),
		 "%s\n[method.m]\nspan_pct = 25\nrun_s = 100\n"
		 "[test.1]\nmethod = m\nname = x\nrw = randwrit\nbs_kib = 4\nqd = 1\n",
		 good_ini);
	ttmp_write(ini, text);
	assert_int_equal(qs_cmd_bench_calibrate(7, argv), 1);

	/* report = first: measured at the start of the run; needs first_s. */
	static const char *const first_ok = "first_s = 2\n", *const first_bad = "";
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "%s\n[method.m]\nspan_pct = 25\nrun_s = 8\nreport = first\n%s"
			 "[test.1]\nmethod = m\nname = 64K random write\nrw = randwrite\n"
			 "bs_kib = 64\nqd = 16\nmbps = 100\n",
			 good_ini, i ? first_bad : first_ok);
		ttmp_write(ini, text);
		assert_int_equal(qs_cmd_bench_calibrate(7, argv), i ? 1 : 0);
	}

	/*
	 * report = curve (a vdbench curve: the maximum, then paced points)
	 * with repeat = 2, and goal = 0 marking the points as outside the
	 * goal in the JSON; a curve needs first_s, repeat is 1..16, goal 0/1.
	 */
	static const char *const curve[] = {
		"report = curve\nfirst_s = 2\nrepeat = 2\ngoal = 0\n",
		"report = curve\n", "report = curve\nfirst_s = 2\nrepeat = 0\n",
		"goal = 2\n"};
	for (int i = 0; i < 4; i++) {
		snprintf(text, sizeof(text),
			 "%s\n[method.m]\nspan_pct = 25\nrun_s = 8\n%s"
			 "[test.1]\nmethod = m\nname = 64K random write\nrw = randwrite\n"
			 "bs_kib = 64\nqd = 16\nmbps = 100\n",
			 good_ini, curve[i]);
		ttmp_write(ini, text);
		assert_int_equal(qs_cmd_bench_calibrate(7, argv), i ? 1 : 0);
	}
	f = fopen(json, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	fclose(f);
	out[n] = 0;
	assert_non_null(strstr(out, "m: 64K random write"));
	assert_non_null(strstr(out, "\"goal\": false"));
	assert_null(strstr(out, "\"goal\": true"));
	double curve_mbps = 0;
	assert_int_equal(sscanf(strstr(out, "\"model\": ") + 9, "%lf", &curve_mbps), 1);
	assert_true(curve_mbps > 0);
	unlink(ini);
	unlink(json);
}

/*
 * A profile the model cannot build says why, naming the keys and values
 * (issue 12, finding 16: it said "Invalid argument"): the widest die stripe
 * the loader accepts (64 x 64 dies x 256 IUs) times 100000 superblocks is
 * past 2^31 IUs; and a model smaller than one IU.
 */
static void test_model_refusal_named(void **st)
{
	struct qs_profile p = small_qlc();
	struct qs_model *m = (struct qs_model *)&p; /* overwritten */
	char err[512];

	p.channels = 64;
	p.dies_per_channel = 64;
	p.unit_ius = 256;
	p.superblocks = 100000;
	p.capacity_bytes = 1000000ull * 1000000000;
	assert_int_equal(qs_model_create(&m, &p, qs_model_default_bytes(&p), err, sizeof(err)),
			 -EINVAL);
	assert_null(m);
	for (const char *want = "test-qlc\0below 2^31 IUs\0'superblocks' (100000)\0"
				"'channels' x 'dies_per_channel' x 'unit_ius' (64 x 64 x 256)\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);

	p = small_qlc();
	assert_int_equal(qs_model_create(&m, &p, 4096, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no IU of 'iu_kib' = 64 KiB"));

	assert_int_equal(qs_model_create(&m, &p, 0, err, sizeof(err)), 0);
	assert_non_null(m);
	qs_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_iu_no_rmw),
		cmocka_unit_test(test_rmw_slower_than_whole),
		cmocka_unit_test(test_bandwidth_ring_idle),
		cmocka_unit_test(test_gc_validity),
		cmocka_unit_test(test_determinism_and_clone),
		cmocka_unit_test(test_snapshot_clones),
		cmocka_unit_test(test_fill_random),
		cmocka_unit_test(test_regions_span),
		cmocka_unit_test(test_unit_major_layout),
		cmocka_unit_test(test_prog_passes),
		cmocka_unit_test(test_power_cap),
		cmocka_unit_test(test_scm_no_iu_penalty),
		cmocka_unit_test(test_profile_loader),
		cmocka_unit_test(test_profile_hostile),
		cmocka_unit_test(test_model_refusal_named),
		cmocka_unit_test(test_shipped_profiles_load),
		cmocka_unit_test(test_p5316_capacities_share_structure),
		cmocka_unit_test(test_calibrate_cmd),
		cmocka_unit_test(test_calibrate_endurance_units),
		cmocka_unit_test(test_calibrate_curve_pacing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
