/* SPDX-License-Identifier: MIT */
/* Engine unit tests: the data path one feature at a time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th.h"
#include "twork.h"

#define MiB (1024ull * 1024)
#define BS 4096u

static unsigned char *blocks(uint64_t lba, uint64_t n, uint64_t ver)
{
	unsigned char *b = malloc(n * BS);
	for (uint64_t i = 0; i < n; i++)
		tblk_fill(b + i * BS, lba + i, ver);
	return b;
}

static void check_blocks(struct th *h, uint64_t lba, uint64_t n, uint64_t ver)
{
	unsigned char *b = malloc(n * BS);
	assert_int_equal(th_io(h, 'r', lba * BS, n * BS, b, 0), 0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = 99;
		assert_int_equal(tblk_decode(b + i * BS, lba + i, &v), 0);
		assert_int_equal(v, ver);
	}
	free(b);
}

static void write_blocks(struct th *h, uint64_t lba, uint64_t n, uint64_t ver, unsigned fl)
{
	unsigned char *b = blocks(lba, n, ver);
	assert_int_equal(th_io(h, 'w', lba * BS, n * BS, b, fl), 0);
	free(b);
}

static struct th *setup(uint64_t fast, uint64_t qlc)
{
	struct th *h = malloc(sizeof(*h));
	assert_int_equal(th_init(h, fast, qlc, 1), 0);
	h->qlc.check_iu = 65536;
	return h;
}

static void teardown(struct th *h)
{
	th_fini(h);
	free(h);
}

static void test_write_read_overlay(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 3, 5, 7, 0);
	check_blocks(h, 3, 5, 7);
	check_blocks(h, 0, 3, 0);	/* never written: zeroes from the QLC */
	write_blocks(h, 5, 1, 8, 0);	/* overwrite in the middle */
	check_blocks(h, 5, 1, 8);
	check_blocks(h, 6, 2, 7);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.cached_blocks, 5);
	assert_int_equal(s.dirty_ius, 1);
	assert_true(s.log_appends >= 2);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_destage_whole_ius(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.policy.start_pct = 0; /* destage at once */
	h->conf.segment_blocks = h->conf.group_commit_blocks = 32; /* one record per IU */
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 17, 2, 3, 0); /* partial IU 1: needs read-fill */
	write_blocks(h, 32, 16, 4, 0); /* whole IU 2 */
	th_run_idle(h);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.destage_ius, 2);
	assert_int_equal(s.destage_full_ius, 1);
	/* one read, gap 16 to gap 19..31, cached 17..18 between included */
	assert_int_equal(s.read_fill_bytes, 16 * BS);
	assert_int_equal(s.cached_blocks, 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	assert_true(h->qlc.writes >= 2);
	/* the QLC now holds the data */
	uint64_t v;
	assert_int_equal(tblk_decode(h->qlc.cur + 17 * BS, 17, &v), 0);
	assert_int_equal(v, 3);
	check_blocks(h, 16, 1, 0);
	check_blocks(h, 17, 2, 3);
	check_blocks(h, 32, 16, 4);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_discard(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 0, 64, 5, 0);
	/* blocks 10..49: partial IU 0 tail, whole IUs 1 and 2, partial IU 3 head */
	assert_int_equal(th_io(h, 'd', 10 * BS, 40 * BS, NULL, 0), 0);
	check_blocks(h, 0, 10, 5);
	check_blocks(h, 10, 40, 0);
	check_blocks(h, 50, 14, 5);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_true(s.qlc_discards >= 1);
	h->conf.policy.start_pct = 0;
	assert_int_equal(th_close(h), 0);
	/* after recovery the discard still holds */
	assert_int_equal(th_open(h, false), 0);
	check_blocks(h, 10, 40, 0);
	check_blocks(h, 50, 14, 5);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_bypass(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.bypass_min_bytes = 65536;
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 16, 4, 1, 0);	 /* cached older copy */
	write_blocks(h, 16, 32, 2, 0);	 /* bypass: two whole IUs */
	check_blocks(h, 16, 32, 2);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.bypass_writes, 1);
	assert_int_equal(s.cached_blocks, 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	/* crash now: recovery must not resurrect the older cached copy */
	th_crash(h, false);
	assert_int_equal(th_open(h, false), 0);
	check_blocks(h, 16, 32, 2);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_flush_durable(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 100, 3, 9, 0);
	assert_int_equal(th_io(h, 'f', 0, 0, NULL, 0), 0);
	write_blocks(h, 200, 1, 10, QS_WRITE_FUA);
	th_crash(h, true);
	assert_int_equal(th_open(h, false), 0);
	check_blocks(h, 100, 3, 9);
	check_blocks(h, 200, 1, 10);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/*
 * Recovery reads the log several segments ahead. A read that fails where
 * the scan needs it fails the open with the device's error, and only once
 * every read ahead is back (the engine is freed next: ASan in make test
 * catches a late completion); one that fails past the log's end is never
 * looked at. Every read of the open is failed in turn.
 */
static void test_recovery_read_fails(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.segment_blocks = 16; /* 31 segments: the scan reads ahead */
	h->conf.group_commit_blocks = 16;
	assert_int_equal(th_open(h, true), 0);
	for (uint64_t i = 0; i < 120; i++)
		write_blocks(h, i * 3, 1 + i % 3, 5, 0);
	assert_int_equal(th_io(h, 'f', 0, 0, NULL, 0), 0);
	th_crash(h, true);
	unsigned failed = 0, opened = 0;
	for (uint64_t n = 1; n <= 40; n++) {
		h->fast.fail_at = h->fast.ios + n;
		h->fast.fail_persistent = false;
		int rc = th_open(h, false);
		h->fast.fail_at = 0;
		if (rc) {
			assert_int_equal(rc, -EIO);
			failed++;
			continue;
		}
		opened++;
		for (uint64_t i = 0; i < 120; i += 17)
			check_blocks(h, i * 3, 1 + i % 3, 5);
		th_crash(h, false);
	}
	assert_true(failed >= 8); /* the scan's reads, its flush, the superblock write */
	assert_true(opened >= 1); /* a superblock copy, reads past the log, I/O after the open */
	assert_int_equal(th_open(h, false), 0);
	for (uint64_t i = 0; i < 120; i++)
		check_blocks(h, i * 3, 1 + i % 3, 5);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/*
 * After a process crash the log device's cache still holds what the scan
 * read; recovery flushes it before acting on it (a band emptied by a
 * record only in the cache must not be written again). A clean open has
 * nothing to flush.
 */
static void test_recovery_flushes(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 10, 4, 3, 0);
	th_crash(h, false);
	uint64_t f0 = h->fast.flushes;
	assert_int_equal(th_open(h, false), 0);
	assert_int_equal(h->fast.flushes, f0 + 1);
	check_blocks(h, 10, 4, 3);
	assert_int_equal(th_close(h), 0);
	f0 = h->fast.flushes;
	assert_int_equal(th_open(h, false), 0);
	assert_int_equal(h->fast.flushes, f0);
	check_blocks(h, 10, 4, 3);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_passthrough(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.mode = QS_MODE_PASSTHROUGH;
	h->qlc.check_iu = 0;
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 1, 1, 4, 0);
	check_blocks(h, 1, 1, 4);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.qlc_writes, 1);
	assert_int_equal(s.qlc_iu_whole_writes, 0);
	assert_int_equal(h->fast.writes, 0);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_log_full_throttles(void **st)
{
	/* a log of 4 segments of 16 blocks; write 20x that */
	struct th *h = setup((2 + 64) * BS, 16 * MiB);
	h->conf.policy.start_pct = 90;
	h->conf.policy.urgent_pct = 95;
	assert_int_equal(th_open(h, true), 0);
	for (uint64_t i = 0; i < 1280; i++)
		write_blocks(h, (i * 7) % 4096, 1, i + 1, 0);
	for (uint64_t i = 1280 - 400; i < 1280; i++)
		check_blocks(h, (i * 7) % 4096, 1, i + 1);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_true(s.checkpoints > 0);
	assert_true(s.destage_ius > 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/*
 * The DRAM bounds dram_limit divides into (log_window_blocks,
 * dirty_ius_max): 4 KiB writes to IUs chosen at random, four times the
 * dirty IUs allowed, never hold more dirty IUs or more of the log than
 * the bounds; writes wait for destage instead, and every block reads back
 * its newest version. The index is sized for the window, not the log.
 */
static void dram_bounds_run(uint64_t win_segs, uint64_t ius_max, bool window_binds)
{
	struct th *h = setup(256 * MiB, 512 * MiB);
	uint64_t win = win_segs * h->conf.segment_blocks;
	h->conf.log_window_blocks = win;
	h->conf.dirty_ius_max = ius_max;
	assert_int_equal(th_open(h, true), 0);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_true(s.log_blocks > 2 * win); /* the window binds, not the log */
	/* the index for the window (8-byte slots at 80%), not for the log;
	 * the records for the bound; both as the plan has them */
	assert_int_equal(s.mem.index, 8 * (win + win / 4 + 16));
	struct qs_engine_mem plan;
	assert_int_equal(qs_engine_dram_plan(&h->conf, h->fast.vol.size, h->qlc.vol.size, &plan,
					     NULL), 0);
	assert_int_equal(plan.index, s.mem.index);
	assert_int_equal(plan.dirty, s.mem.dirty);
	struct twork w;
	twork_init(&w, h, 512 * MiB / BS, 11);
	w.max_inflight = 32;
	uint64_t peak_dirty = 0, peak_used = 0;
	for (int i = 0; i < 400; i++) {
		twork_run(&w, 50);
		qs_engine_get_stats(h->e, &s);
		peak_dirty = s.dirty_ius > peak_dirty ? s.dirty_ius : peak_dirty;
		peak_used = s.log_used_blocks > peak_used ? s.log_used_blocks : peak_used;
	}
	twork_quiesce(&w);
	assert_true(peak_dirty <= ius_max);
	assert_true(peak_used <= win);
	/* the bound meant did bind */
	if (window_binds)
		assert_true(peak_used > win / 10 * 9);
	else
		assert_true(peak_dirty > ius_max / 10 * 9);
	assert_int_equal(twork_verify_all(&w, false), 0);
	assert_int_equal(w.read_mismatch, 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	twork_fini(&w);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/*
 * A log written with no bounds, then recovered after a power cut under
 * smaller ones (dram_limit lowered across a restart): recovery takes all
 * that the log holds, past the bounds, every block reads back, and writes
 * go on (they wait for destage to bring the log under the bounds).
 */
static void dram_bounds_shrink(void)
{
	struct th *h = setup(256 * MiB, 512 * MiB);
	assert_int_equal(th_open(h, true), 0);
	struct twork w;
	twork_init(&w, h, 512 * MiB / BS, 12);
	w.max_inflight = 32;
	twork_run(&w, 6000);
	twork_quiesce(&w);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_true(s.dirty_ius > 2048 && s.log_used_blocks > 2 * 512 * h->conf.segment_blocks / 16);
	th_crash(h, true);
	h->conf.log_window_blocks = 32 * h->conf.segment_blocks;
	h->conf.dirty_ius_max = 1024;
	assert_int_equal(th_open(h, false), 0);
	twork_after_crash(&w);
	assert_int_equal(twork_verify_all(&w, true), 0);
	twork_run(&w, 3000);
	twork_quiesce(&w);
	assert_int_equal(twork_verify_all(&w, false), 0);
	assert_int_equal(w.read_mismatch, 0);
	qs_engine_get_stats(h->e, &s);
	assert_true(s.dirty_ius <= 1024 + 64); /* back under the bound, but for what waits */
	twork_fini(&w);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_dram_bounds(void **st)
{
	(void)st;
	dram_bounds_run(256, 4096, true);   /* 4,096 blocks of log, at most */
	dram_bounds_run(1024, 1024, false); /* 1,024 dirty IUs, at most */
	dram_bounds_shrink();
}

/*
 * Pacing (policy.pace_pct): once the log is in the paced band, writes are
 * held and let in in steps; with pace_pct = 0 none is held. Every read and
 * every block checks either way. Then the QLC dies.
 */
static void test_pacing(void **st)
{
	for (int on = 0; on < 2; on++) {
		struct th *h = setup((2 + 256) * BS, 16 * MiB);
		h->step_ns = 20000; /* 20 us a step: seconds of workload */
		h->conf.policy.pace_pct = on ? 90 : 0;
		assert_int_equal(th_open(h, true), 0);
		struct twork w;
		twork_init(&w, h, 4096, 3);
		twork_run(&w, 40000);
		twork_quiesce(&w);
		assert_int_equal(w.read_mismatch, 0);
		assert_int_equal(twork_verify_all(&w, false), 0);
		struct qs_engine_stats s;
		qs_engine_get_stats(h->e, &s);
		if (getenv("QS_TEST_VERBOSE"))
			fprintf(stderr, "pace_pct %u: %llu writes, %llu paced, %llu throttled, "
				"%llu records\n", h->conf.policy.pace_pct,
				(unsigned long long)s.client_writes, (unsigned long long)s.paced_writes,
				(unsigned long long)s.throttled_writes, (unsigned long long)s.log_appends);
		if (on)
			assert_true(s.paced_writes > 0);
		else
			assert_int_equal(s.paced_writes, 0);
		assert_int_equal(h->qlc.iu_violations, 0);
		{
			/* The QLC fails for good: destage stops, the log fills,
			 * and writes and discards must fail with EIO, paced or
			 * not, rather than wait for room that never comes (a
			 * discard did, before this test). */
			h->qlc.fail_at = h->qlc.ios + 1;
			h->qlc.fail_persistent = true;
			w.allow_failures = true;
			twork_run(&w, 20000);
			twork_quiesce(&w);
			qs_engine_get_stats(h->e, &s);
			if (getenv("QS_TEST_VERBOSE"))
				fprintf(stderr, "QLC dead: %llu failed, %llu paced, %llu throttled, "
					"log %llu of %llu\n", (unsigned long long)w.failed,
					(unsigned long long)s.paced_writes,
					(unsigned long long)s.throttled_writes,
					(unsigned long long)s.log_used_blocks,
					(unsigned long long)s.log_blocks);
			assert_int_equal(w.inflight, 0);
			assert_true(w.failed > 0);
			th_close(h); /* fails: the QLC is dead */
			twork_fini(&w);
			teardown(h);
		}
	}
}

/*
 * A clean close makes everything before its superblock durable: the
 * superblock is FUA, but the records, and the map pages of log placement,
 * are plain writes in the device's cache until the log device is flushed.
 * The close skipped that flush whenever the QLC had nothing to flush (no
 * destage since the last checkpoint; log placement's units are FUA): a
 * power cut after the stop then lost records the clean superblock vouched
 * for. Here nothing is destaged and nothing flushed before the close.
 */
static void test_clean_close_flushes(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	for (uint64_t i = 0; i < 32; i++)
		write_blocks(h, i * 16, 1, i + 1, 0);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.destage_ius, 0);
	uint64_t flushes = h->fast.flushes;
	assert_int_equal(th_close(h), 0);
	assert_true(h->fast.flushes > flushes);
	/* The power goes after the stop: only what was flushed is left. */
	tvol_crash(&h->fast, true);
	tvol_crash(&h->qlc, true);
	tvol_revive(&h->fast);
	tvol_revive(&h->qlc);
	assert_int_equal(th_open(h, false), 0);
	for (uint64_t i = 0; i < 32; i++)
		check_blocks(h, i * 16, 1, i + 1);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_bad_requests(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(h, true), 0);
	unsigned char b[BS];
	assert_int_equal(qs_engine_write(h->e, 1, BS, b, 0, NULL, NULL), -EINVAL);
	assert_int_equal(qs_engine_write(h->e, 16 * MiB, BS, b, 0, NULL, NULL), -EINVAL);
	assert_int_equal(qs_engine_read(h->e, 0, 0, b, NULL, NULL), -EINVAL);
	assert_int_equal(th_close(h), 0);
	/* opening an unformatted device says so */
	struct th *g = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(g, false), -ENODATA);
	teardown(g);
	teardown(h);
}

struct flag {
	bool done;
	int res;
};

static void flag_cb(void *arg, int res)
{
	struct flag *f = arg;
	f->done = true;
	f->res = res;
}

/*
 * A partial IU's gaps come from the QLC in one read spanning them, and only
 * the gaps are taken from it: the cached blocks in between keep the log's
 * newer data, not the QLC's older copy that the same read brought in.
 */
static void test_destage_fill_one_read(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.policy.start_pct = 100; /* destage only when drained */
	h->conf.policy.urgent_pct = 100;
	assert_int_equal(th_open(h, true), 0);
	write_blocks(h, 16, 16, 1, 0); /* IU 1 whole, version 1 */
	struct flag f = {0};
	assert_int_equal(qs_engine_drain(h->e, flag_cb, &f), 0);
	th_wait(h, &f.done);
	assert_int_equal(f.res, 0);
	struct qs_engine_stats s0, s;
	qs_engine_get_stats(h->e, &s0);
	assert_int_equal(s0.destage_full_ius, 1);
	write_blocks(h, 18, 1, 2, 0); /* gaps 16..17, 19..20, 23..31 */
	write_blocks(h, 21, 2, 3, 0);
	f = (struct flag){0};
	assert_int_equal(qs_engine_drain(h->e, flag_cb, &f), 0);
	th_wait(h, &f.done);
	assert_int_equal(f.res, 0);
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.destage_partial_ius - s0.destage_partial_ius, 1);
	assert_int_equal(s.qlc_reads - s0.qlc_reads, 1);
	assert_int_equal(s.read_fill_bytes - s0.read_fill_bytes, 16 * BS);
	assert_int_equal(s.cached_blocks, 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	static const uint64_t want[16] = {1, 1, 2, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	for (uint64_t b = 0; b < 16; b++) {
		uint64_t v;
		assert_int_equal(tblk_decode(h->qlc.cur + (16 + b) * BS, 16 + b, &v), 0);
		assert_int_equal(v, want[b]);
	}
	check_blocks(h, 16, 2, 1);
	check_blocks(h, 18, 1, 2);
	check_blocks(h, 19, 2, 1);
	check_blocks(h, 21, 2, 3);
	check_blocks(h, 23, 9, 1);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

static void test_drain(void **st)
{
	struct th *h = setup(2 * MiB, 16 * MiB);
	h->conf.policy.start_pct = 100; /* nothing destages by itself */
	h->conf.policy.urgent_pct = 100;
	assert_int_equal(th_open(h, true), 0);
	for (uint64_t i = 0; i < 40; i++)
		write_blocks(h, i * 3, 2, i + 1, 0);
	struct qs_engine_stats s;
	qs_engine_get_stats(h->e, &s);
	assert_true(s.cached_blocks > 0);
	/* a drain with nothing dirty completes too */
	struct flag z = {0};
	struct th *empty = setup(2 * MiB, 16 * MiB);
	assert_int_equal(th_open(empty, true), 0);
	assert_int_equal(qs_engine_drain(empty->e, flag_cb, &z), 0);
	th_wait(empty, &z.done);
	assert_true(z.done);
	assert_int_equal(z.res, 0);
	assert_int_equal(th_close(empty), 0);
	teardown(empty);

	struct flag f = {0};
	assert_int_equal(qs_engine_drain(h->e, flag_cb, &f), 0);
	th_wait(h, &f.done);
	assert_true(f.done);
	assert_int_equal(f.res, 0);
	qs_engine_get_stats(h->e, &s);
	assert_int_equal(s.cached_blocks, 0);
	assert_int_equal(s.log_used_blocks, 0);
	assert_int_equal(h->qlc.iu_violations, 0);
	for (uint64_t i = 0; i < 40; i++) {
		uint64_t v;
		assert_int_equal(tblk_decode(h->qlc.cur + i * 3 * BS, i * 3, &v), 0);
		assert_int_equal(v, i + 1);
	}
	/* a drain cut short by close */
	write_blocks(h, 500, 3, 77, 0);
	struct flag g = {0}, c = {0};
	assert_int_equal(qs_engine_drain(h->e, flag_cb, &g), 0);
	assert_int_equal(qs_engine_close(h->e, flag_cb, &c), 0);
	th_wait(h, &c.done);
	assert_true(g.done && c.done);
	assert_true(g.res == 0 || g.res == -ECANCELED);
	assert_int_equal(c.res, 0);
	qs_engine_free(h->e);
	h->e = NULL;
	assert_int_equal(th_open(h, false), 0);
	check_blocks(h, 500, 3, 77);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/* One random workload (reads, writes, discards, flushes, destage under a
 * small log with a DRAM buffer) with the given open flags. */
static void nodata_run(unsigned flags, struct qs_engine_stats *s, uint64_t vol[6])
{
	struct th *h = setup((2 + 256) * BS, 16 * MiB);
	h->open_flags = flags;
	h->conf.dram_buffer_bytes = 64 * BS;
	h->conf.policy.start_pct = 20;
	assert_int_equal(th_open(h, true), 0);
	struct twork w;
	twork_init(&w, h, 2048, 11);
	twork_run(&w, 4000);
	twork_quiesce(&w);
	if (!flags)
		assert_int_equal(w.read_mismatch, 0);
	qs_engine_get_stats(h->e, s);
	uint64_t v[6] = {h->qlc.writes, h->qlc.flushes, h->qlc.discards, h->fast.writes,
			 h->fast.flushes, h->qlc.iu_violations};
	memcpy(vol, v, sizeof(v));
	twork_fini(&w);
	assert_int_equal(th_close(h), 0);
	teardown(h);
}

/* QS_OPEN_NO_DATA only skips work on data bytes: the same workload gives
 * the same statistics and the same volume traffic with and without it. */
static void test_no_data_same_decisions(void **st)
{
	struct qs_engine_stats a, b;
	uint64_t va[6], vb[6];
	nodata_run(0, &a, va);
	nodata_run(QS_OPEN_NO_DATA, &b, vb);
	assert_true(a.destage_ius > 0 && a.log_read_bytes > 0 && a.client_reads > 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_memory_equal(va, vb, sizeof(va));
	assert_int_equal(va[5], 0);
}

/* The QLC volume's ops, wrapped to record the offsets of its writes in order. */
static const struct qs_vol_ops *wr_orig;
static uint64_t wr_off[4096];
static uint32_t wr_n;

static void wr_read(void *c, uint64_t off, const struct iovec *iov, int n, qs_io_cb cb,
		    void *a)
{
	wr_orig->read(c, off, iov, n, cb, a);
}

static void wr_write(void *c, uint64_t off, const struct iovec *iov, int n, unsigned fl,
		     qs_io_cb cb, void *a)
{
	if (wr_n < sizeof(wr_off) / sizeof(wr_off[0]))
		wr_off[wr_n++] = off;
	wr_orig->write(c, off, iov, n, fl, cb, a);
}

static void wr_flush(void *c, qs_io_cb cb, void *a)
{
	wr_orig->flush(c, cb, a);
}

static void wr_discard(void *c, uint64_t off, uint64_t len, qs_io_cb cb, void *a)
{
	wr_orig->discard(c, off, len, cb, a);
}

static const struct qs_vol_ops wr_ops = {wr_read, wr_write, wr_flush, wr_discard};

/*
 * The QLC write order of destage under fullest-first, for an engine that
 * ran with order first while the log filled (nothing destaged yet) and was
 * switched to fullest-first just before destage starts.
 */
static uint32_t fullest_order(enum qs_order first, uint64_t *out)
{
	struct th *h = setup((2 + 1024) * BS, 16 * MiB);
	h->conf.policy.order = first;
	h->conf.policy.start_pct = 90;
	h->conf.policy.urgent_pct = 95;
	h->conf.policy.max_age_ms = 0;
	wr_orig = h->qlc.vol.ops;
	h->qlc.vol.ops = &wr_ops;
	wr_n = 0;
	assert_int_equal(th_open(h, true), 0);
	/* 300 one-block writes over 128 IUs: many IUs share a count, so the
	 * order among equals (the last one to reach a count first) matters */
	uint64_t rng = 5;
	for (uint64_t i = 0; i < 300; i++)
		write_blocks(h, trng(&rng) % 2048, 1, i + 1, 0);
	struct qs_policy p;
	qs_engine_get_policy(h->e, &p);
	p.order = QS_ORDER_FULLEST;
	assert_int_equal(qs_engine_set_policy(h->e, &p), 0);
	assert_int_equal(wr_n, 0);
	p.start_pct = 0;
	assert_int_equal(qs_engine_set_policy(h->e, &p), 0);
	th_run_idle(h);
	uint32_t n = wr_n;
	memcpy(out, wr_off, n * sizeof(*out));
	assert_int_equal(th_close(h), 0);
	teardown(h);
	return n;
}

/* Fullest-first picks the same IUs in the same order whether it was in
 * force all along or switched to from another order (its bucket lists are
 * then rebuilt, as they are not kept under the other orders). */
static void test_fullest_after_switch(void **st)
{
	static uint64_t a[4096], b[4096], c[4096];
	uint32_t na = fullest_order(QS_ORDER_FULLEST, a);
	uint32_t nb = fullest_order(QS_ORDER_FIFO, b);
	uint32_t nc = fullest_order(QS_ORDER_SWEEP, c);
	assert_true(na > 50);
	assert_int_equal(na, nb);
	assert_int_equal(na, nc);
	assert_memory_equal(a, b, na * sizeof(*a));
	assert_memory_equal(a, c, na * sizeof(*a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read_overlay),
		cmocka_unit_test(test_recovery_read_fails),
		cmocka_unit_test(test_recovery_flushes),
		cmocka_unit_test(test_destage_whole_ius),
		cmocka_unit_test(test_destage_fill_one_read),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_bypass),
		cmocka_unit_test(test_flush_durable),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_log_full_throttles),
		cmocka_unit_test(test_dram_bounds),
		cmocka_unit_test(test_pacing),
		cmocka_unit_test(test_clean_close_flushes),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_no_data_same_decisions),
		cmocka_unit_test(test_fullest_after_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
