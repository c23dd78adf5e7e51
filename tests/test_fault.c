/* SPDX-License-Identifier: MIT */
/*
 * Fault sweep (SQLite's do_ioerr_test, OCF's surprise-shutdown tests): fail
 * the Nth I/O of one device, transiently (that I/O only) or persistently
 * (every I/O from the Nth on), for N = 1, 2, ... until the workload runs
 * without hitting the fault. On both devices. A hit fault must show: the
 * engine counted a device error, and either a client request failed or the
 * failed I/O was background work (destage, checkpoint) that is retried. The
 * state must stay consistent: every successful read returns the latest
 * completed version, or for a block whose write failed the old or the new
 * one; after the device recovers and the engine is reopened, every block
 * still holds such a version (no acknowledged write lost, nothing older).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "twork.h"

#define SPAN 256
#define OPS 160

struct outcome {
	bool hit;
	uint64_t failed_reqs, dev_errors, bad;
	char why[300];
};

static bool fault_log; /* the sweep running: in place or log placement */
static bool fault_paged; /* ... log placement with the map far larger than its DRAM */

/*
 * Log placement: 20 bands of 4 IUs at op 40% (768 client blocks), written
 * over twice before the fault is armed, so the workload's destage needs GC
 * from its first bands on: faults land in unit reads and writes, MAP and
 * MOVE records, map pages and band reuse.
 */
static void setup(struct th *h, uint64_t n)
{
	if (!fault_log) {
		assert_int_equal(th_init(h, (2 + 96) * 4096ull, 1ull << 20, n), 0);
		h->conf.bypass_min_bytes = 65536;
	} else if (fault_paged) {
		/* 14 map pages, 12 page frames (test_crash's paged sweep): faults
		 * land in map page reads (a lookup's, recovery's) and writes */
		assert_int_equal(th_init_paged(h, n), 0);
	} else {
		assert_int_equal(th_init(h, (2 + 256 + 2 + 40 + 3) * 4096ull, 20ull * 4 * 65536, n), 0); /* log, map, P2L, clean state */
		h->conf.placement = QS_PLACE_LOG;
		h->conf.op_pct = 40;
		h->conf.band_bytes = 4 * 65536;
		h->qlc.check_band = 4 * 65536;
	}
	h->conf.policy.start_pct = 20;
	h->conf.dram_buffer_bytes = (n % 2) ? 16 * 4096 : 0;
	if (!fault_paged)
		h->qlc.check_iu = 65536;
}

static void run_fault(bool on_fast, bool persistent, uint64_t n, struct outcome *o)
{
	struct th h;
	struct twork w;
	setup(&h, n);
	assert_int_equal(th_open(&h, true), 0);
	if (fault_log) {
		twork_init(&w, &h, qs_engine_size(h.e) / 4096, 5);
		twork_run(&w, fault_paged ? 100 : 300);
		twork_quiesce(&w);
		assert_int_equal(w.read_mismatch, 0);
	}
	struct tvol *dev = on_fast ? &h.fast : &h.qlc;
	dev->fail_at = dev->ios + n;
	dev->fail_persistent = persistent;
	if (!fault_log) {
		twork_init(&w, &h, SPAN, 5);
		w.whole_ius = true;
	}
	w.allow_failures = true;
	/* paged: every write's destage and lookup reads or writes map pages,
	 * so a shorter workload has as many I/Os to fail */
	twork_run(&w, fault_paged ? OPS / 8 : OPS);
	twork_quiesce(&w);
	/*
	 * The clients are done, but the engine's own I/O (destage, checkpoint)
	 * may still be queued, the faulted one among them: let what is queued
	 * complete (no timers, so retries after a backoff do not start) before
	 * the error counts are read.
	 */
	for (int i = 0; i < 1000000 && (h.fast.queue || h.qlc.queue) && th_step(&h); i++)
		;
	o->hit = dev->fault_hit;
	o->failed_reqs = w.failed;
	struct qs_engine_stats st;
	qs_engine_get_stats(h.e, &st);
	o->dev_errors = st.fast_errors + st.qlc_errors;
	o->bad = w.read_mismatch;
	if (w.read_mismatch)
		snprintf(o->why, sizeof(o->why), "while running: %s", w.last_error);
	if (!persistent && !o->bad) {
		/* the device is fine again: retries complete, all must verify */
		for (int i = 0; i < 200000 && th_step(&h); i++)
			;
		o->bad += twork_verify_all(&w, false);
		if (o->bad && !o->why[0])
			snprintf(o->why, sizeof(o->why), "after the fault: %s", w.last_error);
	}
	th_close(&h); /* may fail with a dead device: that is the point */
	/* Repair: the device works again. Recovery must find every acknowledged
	 * write, and for failed ones the old or the new version. */
	tvol_crash(&h.fast, false);
	tvol_crash(&h.qlc, false);
	tvol_revive(&h.fast);
	tvol_revive(&h.qlc);
	int rc = th_open(&h, false);
	if (rc) {
		o->bad++;
		snprintf(o->why, sizeof(o->why), "reopen after repair failed: %d", rc);
	} else {
		uint64_t b = twork_verify_all(&w, false);
		if (b && !o->why[0])
			snprintf(o->why, sizeof(o->why), "after repair: %s", w.last_error);
		o->bad += b;
		th_close(&h);
	}
	if (h.qlc.iu_violations || h.qlc.band_violations) {
		o->bad++;
		snprintf(o->why, sizeof(o->why), "QLC write not whole IUs or out of band order");
	}
	twork_fini(&w);
	th_fini(&h);
}

static void sweep(bool on_fast, bool persistent)
{
	uint64_t n, bad_points = 0, silent = 0, last = 100000;
	/* QS_FAULT_ONLY=N: that point alone, of the log-placement sweeps (to debug it) */
	n = 1;
	if (fault_log && getenv("QS_FAULT_ONLY"))
		n = last = strtoull(getenv("QS_FAULT_ONLY"), NULL, 0);
	for (; n <= last; n++) {
		struct outcome o = {0};
		run_fault(on_fast, persistent, n, &o);
		if (!o.hit)
			break; /* the workload ran clean: past its last I/O */
		if (!o.dev_errors) {
			silent++;
			fprintf(stderr, "fault at I/O %llu was not counted\n", (unsigned long long)n);
		}
		if (o.bad) {
			if (bad_points < 5)
				fprintf(stderr, "%s %s fault at I/O %llu: %s\n", on_fast ? "log" : "QLC",
					persistent ? "persistent" : "transient", (unsigned long long)n,
					o.why);
			bad_points++;
		}
	}
	printf("fault sweep%s %s %s: %llu points, %llu inconsistent, %llu unreported\n",
	       fault_paged ? " (log placement, paged map)" : fault_log ? " (log placement)" : "",
	       on_fast ? "log device" : "QLC device",
	       persistent ? "persistent" : "transient",
	       (unsigned long long)n - 1, (unsigned long long)bad_points,
	       (unsigned long long)silent);
	if (last == 100000)
		assert_true(n > 50);
	assert_int_equal(bad_points, 0);
	assert_int_equal(silent, 0);
}

static void test_fault_fast_transient(void **st) { sweep(true, false); }
static void test_fault_fast_persistent(void **st) { sweep(true, true); }
static void test_fault_qlc_transient(void **st) { sweep(false, false); }
static void test_fault_qlc_persistent(void **st) { sweep(false, true); }
static void test_log_fast_transient(void **st) { fault_log = true; sweep(true, false); }
static void test_log_fast_persistent(void **st) { fault_log = true; sweep(true, true); }
static void test_log_qlc_transient(void **st) { fault_log = true; sweep(false, false); }
static void test_log_qlc_persistent(void **st) { fault_log = true; sweep(false, true); }
static void test_paged_fast_transient(void **st)
{
	fault_log = fault_paged = true;
	sweep(true, false);
	fault_paged = false;
}
static void test_paged_fast_persistent(void **st)
{
	fault_log = fault_paged = true;
	sweep(true, true);
	fault_paged = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_fast_transient),
		cmocka_unit_test(test_fault_fast_persistent),
		cmocka_unit_test(test_fault_qlc_transient),
		cmocka_unit_test(test_fault_qlc_persistent),
		cmocka_unit_test(test_log_fast_transient),
		cmocka_unit_test(test_log_fast_persistent),
		cmocka_unit_test(test_log_qlc_transient),
		cmocka_unit_test(test_log_qlc_persistent),
		cmocka_unit_test(test_paged_fast_transient),
		cmocka_unit_test(test_paged_fast_persistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
