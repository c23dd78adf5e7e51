/* SPDX-License-Identifier: MIT */
/*
 * Crash sweep, in the manner of SQLite's crash tests. One deterministic
 * workload (writes, FUA writes, reads, flushes, discards, with destage and
 * checkpoints running on a tiny log) is run once to count its crash points:
 * every write and flush submitted to either volume. Then, for every point N
 * in turn, the workload is run again from a fresh format and the machine
 * "crashes" at the Nth point: on odd N a power loss (each write not yet
 * flushed, or still in flight, on either device is kept, dropped or torn at
 * 512-byte granularity), on even N a process crash (device caches survive).
 * The points after the workload's fall in a clean close. The log is
 * recovered and every block is checked against invariants 1 to 3 of the
 * design brief: no torn 4 KiB block, nothing older than what the last
 * completed flush (or FUA write) covered, nothing never written. A short
 * workload then runs on the recovered engine, checked for read-your-writes,
 * and a clean close and reopen must keep it all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "twork.h"

#define SPAN 512
#define OPS 1600

static bool log_placement; /* the sweep running: in place or log */
static bool paged;	   /* ... log placement with the map far larger than its DRAM */

/*
 * What every sweep shares: destage early and in order, a small DRAM buffer
 * and log queue so that crash points fall inside destage and checkpoints.
 * Log writes tear at 512 bytes: the log must detect any tear. The QLC is
 * taken to write each 4 KiB logical block atomically, as NVMe guarantees
 * for one LBA of a 4 KiB-formatted namespace: a bypass write cut by power
 * loss leaves each of its blocks old or new.
 */
static void sweep_conf(struct th *h)
{
	h->conf.policy.start_pct = 30;
	h->conf.policy.urgent_pct = 70;
	h->conf.policy.order = QS_ORDER_FIFO;
	h->conf.dram_buffer_bytes = 32 * 4096;
	h->conf.log_qd = 2;
	h->qlc.tear_unit = 4096;
}

/*
 * Log placement: 20 bands of 4 IUs, op 40% (768 client blocks), a log of
 * 256 blocks, the map region's 2 and the clean state's 4: destage packs
 * blocks into bands and GC runs within the workload, so crash points fall
 * in band open and close, GC relocation and map page writes, and the
 * close's clean state.
 */
static void setup_log(struct th *h, uint64_t seed)
{
	assert_int_equal(th_init(h, (2 + 256 + 2 + 40 + 3) * 4096ull, 20ull * 4 * 65536, seed), 0);
	h->conf.placement = QS_PLACE_LOG;
	h->conf.op_pct = 40;
	h->conf.band_bytes = 4 * 65536;
	sweep_conf(h);
	h->qlc.check_iu = 65536;
	h->qlc.check_band = 4 * 65536;
}

/*
 * Log placement with the map paged: 360 bands (18 map pages of client
 * blocks in 5-byte entries, op 40%, 4 KiB IUs) and 64 KiB of map DRAM (12 page frames, 4 COW
 * frames),
 * the workload over every client block: lookups miss and read pages,
 * dirty pages call for checkpoints, pinned pages are copied for the
 * running flush, clean pages are evicted, and recovery's replay reads
 * pages (and writes them back when frames run out), so crash points fall
 * in all of it.
 */
static void setup_paged(struct th *h, uint64_t seed)
{
	assert_int_equal(th_init_paged(h, seed), 0);
	sweep_conf(h);
	/* 5-byte map and P2L entries, a 30.72 TB drive's (18 map pages
	 * instead of 14; the other log sweep keeps the 4-byte ones) */
	h->conf.map_entry_bytes = 5;
}

static void setup_th(struct th *h, uint64_t seed)
{
	if (paged) {
		setup_paged(h, seed);
		return;
	}
	if (log_placement) {
		setup_log(h, seed);
		return;
	}
	assert_int_equal(th_init(h, (2 + 128) * 4096ull, 2ull << 20, seed), 0);
	sweep_conf(h);
	h->conf.bypass_min_bytes = 65536;
	h->qlc.check_iu = 65536;
}

/* Run the workload; with crash_at != 0, crash there. Returns the points seen. */
static uint64_t run_point(uint64_t crash_at, uint64_t *violations, char *why, size_t whylen)
{
	struct th h;
	struct twork w;
	setup_th(&h, 7);
	assert_int_equal(th_open(&h, true), 0);
	uint64_t base = h.w.points;
	h.w.crash_at = crash_at ? base + crash_at : 0;
	twork_init(&w, &h, paged ? qs_engine_size(h.e) / 4096 : SPAN, 11);
	w.whole_ius = !log_placement; /* bypass is for in place only */
	/* paged: every few writes fill the dirty pages a checkpoint takes,
	 * each a dozen crash points; a shorter workload has as many */
	twork_run(&w, paged ? 240 : OPS);
	twork_quiesce(&w);
	uint64_t points = h.w.points - base;
	*violations = 0;
	if (!crash_at) {
		assert_int_equal(w.read_mismatch, 0);
		if (paged) {
			/* the sweep covers paging only if the workload pages */
			struct qs_engine_stats s;
			qs_engine_get_stats(h.e, &s);
			if (getenv("QS_CRASH_VERBOSE"))
				fprintf(stderr, "paged map: %llu hits, %llu misses, %llu page reads, "
					"%llu page writes, %llu checkpoints, peak %llu bytes\n",
					(unsigned long long)s.map_hits,
					(unsigned long long)s.map_misses,
					(unsigned long long)s.map_page_reads,
					(unsigned long long)s.map_page_writes,
					(unsigned long long)s.checkpoints,
					(unsigned long long)s.map_peak_bytes);
			/* more misses than pages: pages were evicted and read again */
			assert_true(s.map_misses > s.map_region_bytes / 2 / 4096);
			assert_true(s.map_page_reads > 0);
			assert_true(s.map_peak_bytes <= s.map_dram_limit);
		}
		assert_int_equal(th_close(&h), 0);
		points = h.w.points - base;
		goto out;
	}
	if (!h.w.crashed) {
		/* The crash point lies in the close (its map pages, log
		 * placement's clean state, the flushes, the clean superblock):
		 * close, and crash there. */
		int rc = th_close_or_crash(&h);
		if (rc < 0) {
			snprintf(why, whylen, "close before the crash point failed: %d", rc);
			(*violations)++;
			goto out;
		}
	}
	bool power = crash_at % 2 == 1;
	th_crash(&h, power);
	int rc = th_open(&h, false);
	if (rc) {
		snprintf(why, whylen, "recovery failed: %d", rc);
		(*violations)++;
		goto out;
	}
	uint64_t bad = twork_verify_all(&w, true);
	if (bad) {
		snprintf(why, whylen, "%s crash: %s", power ? "power" : "process", w.last_error);
		(*violations)++;
		goto close;
	}
	/* life goes on after recovery: read-your-writes, then a clean reopen */
	twork_after_crash(&w);
	if (!power && crash_at % 16 == 0) {
		/* The devices kept their caches through the process crash,
		 * and recovery acted on what it read there: a power cut soon
		 * after must find it durable (recovery flushes the log). One
		 * process crash in eight: each costs a second recovery. */
		h.w.crash_at = h.w.points + 1 + (crash_at / 2) % 8;
		twork_run(&w, 60);
		twork_quiesce(&w);
		if (h.w.crashed || h.w.crash_at) {
			h.w.crash_at = 0;
			th_crash(&h, true);
			rc = th_open(&h, false);
			if (rc || twork_verify_all(&w, true)) {
				snprintf(why, whylen, "power cut after process-crash recovery: %d %s",
					 rc, w.last_error);
				(*violations)++;
				goto close;
			}
			twork_after_crash(&w);
		}
	}
	twork_run(&w, 60);
	twork_quiesce(&w);
	/* a request that never completes is a hang: as much a violation */
	if (w.read_mismatch || w.failed || w.inflight || twork_verify_all(&w, false)) {
		snprintf(why, whylen, "after recovery: %s", w.last_error);
		(*violations)++;
		goto close;
	}
	int crc = th_close(&h), orc = crc ? -1 : th_open(&h, false);
	if (crc || orc || twork_verify_all(&w, false)) {
		snprintf(why, whylen, "after recovery, close %d, reopen %d: %s", crc, orc,
			 w.last_error);
		(*violations)++;
	}
close:
	if (h.e && !th_close(&h) && !*violations) {
		/* GC can move every block the map points at: its P2L entry is
		 * durable (written before the record that mapped it). */
		char pw[160];
		if (th_p2l_audit(&h, pw, sizeof(pw))) {
			snprintf(why, whylen, "%s", pw);
			(*violations)++;
		}
	}
out:
	if (h.qlc.iu_violations) {
		snprintf(why, whylen, "%llu QLC writes not whole IUs",
			 (unsigned long long)h.qlc.iu_violations);
		(*violations)++;
	}
	if (h.qlc.band_violations) {
		snprintf(why, whylen, "%llu QLC writes out of order in their band",
			 (unsigned long long)h.qlc.band_violations);
		(*violations)++;
	}
	twork_fini(&w);
	th_fini(&h);
	return points;
}

static void sweep(const char *name)
{
	uint64_t v;
	char why[512] = "";
	uint64_t points = run_point(0, &v, why, sizeof(why));
	if (getenv("QS_CRASH_VERBOSE"))
		fprintf(stderr, "%s: %llu points\n", name, (unsigned long long)points);
	uint64_t step = getenv("QS_CRASH_STEP") ? strtoull(getenv("QS_CRASH_STEP"), NULL, 0) : 1;
	uint64_t violations = 0, swept = 0, first = 1;
	/* QS_CRASH_ONLY=N: that point alone (to debug it) */
	if (getenv("QS_CRASH_ONLY")) {
		first = strtoull(getenv("QS_CRASH_ONLY"), NULL, 0);
		points = first;
	}
	bool verbose = getenv("QS_CRASH_VERBOSE") != NULL;
	for (uint64_t n = first; n <= points; n += step) {
		why[0] = 0;
		if (verbose)
			fprintf(stderr, "crash point %llu\n", (unsigned long long)n);
		run_point(n, &v, why, sizeof(why));
		swept++;
		if (v) {
			if (violations < 10)
				fprintf(stderr, "crash point %llu: %s\n", (unsigned long long)n, why);
			violations++;
		}
	}
	printf("crash sweep%s: %llu points, %llu violations\n", name, (unsigned long long)swept,
	       (unsigned long long)violations);
	assert_int_equal(violations, 0);
	if (step == 1)
		assert_true(swept >= 2000);
}

#ifndef QS_CRASH_PAGED_PROGRAM
static void test_crash_sweep(void **st)
{
	if (getenv("QS_CRASH_LOG_ONLY"))
		return; /* to debug the other sweep */
	log_placement = false;
	sweep("");
}

static void test_crash_sweep_log(void **st)
{
	log_placement = true;
	paged = false;
	sweep(" (log placement)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_sweep),
		cmocka_unit_test(test_crash_sweep_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
/* tests/test_crash_paged.c: the paged map's sweep, a program of its own */
static void test_crash_sweep_paged(void **st)
{
	log_placement = paged = true;
	sweep(" (log placement, paged map)");
	paged = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_sweep_paged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
