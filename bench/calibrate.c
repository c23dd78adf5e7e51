/* SPDX-License-Identifier: MIT */
/*
 * qlcshape bench calibrate: run a drive's published workloads in its model
 * and compare.
 *
 * The published points live in the profile file next to the drive's
 * parameters ([method.NAME] and [test.N] sections, see docs/MODEL.md), so
 * this command holds no figures of its own. Each method preconditions a
 * fresh model as the review did (a sequential fill of the whole drive), then
 * runs that method's tests in the published order on the same drive state,
 * each as a closed loop with the published number of outstanding I/Os on
 * the span the review used; a method may run its write tests as vdbench
 * curves (the maximum, then paced points at 10%..120% of it) and repeat its
 * tests with other workload seeds, reporting means. Run lengths are given
 * in real-drive seconds and scaled with the capacity, so that the share of
 * the drive each test writes is the same at any scale. docs/MODEL.md has
 * the method keys.
 */
#include <errno.h>
#include <getopt.h>
#include <iniparser.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "host/env.h"
#include "host/model.h"
#include "host/rand.h"
#include "sim.h"

#define MAX_TESTS 32
#define MAX_POINTS 96

struct cal_test {
	char name[64];
	char method[32];
	int write, seq;
	uint32_t bs;
	uint32_t qd;
	double iops, mbps, gbps, lat_us; /* published; 0 when not given */
	int order;
	double run_s; /* its own run length, real-drive seconds (0: the method's) */
	/* endurance rating of this test's workload, PB written (0: none); budget:
	 * this rating defines the NAND budget, the others are predicted from it */
	double pbw;
	int budget;
};

struct cal_method {
	char name[32];
	double span_pct;
	double run_s; /* per test, real-drive seconds */
	int peak;     /* 0 mean, 1 best tenth after the ramp, 2 first first_s of the run,
			 3 a vdbench curve (the maximum for first_s, then the points) */
	double first_s; /* report = first: real-drive seconds measured at the start */
	int fill;     /* precondition: 0 none, 1 sequential fill, 2 random-order fill */
	int repeat;   /* runs of the method with other workload seeds; points are means */
	int goal;      /* 1: its points count for the calibration goal (review tables) */
	int randmap;   /* random offsets: 0 uniform (vdbench, fio norandommap), 1 each
			  block once per pass (fio's default random map) */
	double mb;     /* bytes in the method's "MB" (1e6, or 2^20 for a review whose
			  MB/s are IOPS x KiB / 1024); its GB is 1000 or 1024 of them */
};

struct cal_point {
	char name[96];
	const char *unit;
	double published, model; /* published: NAN for a prediction */
	int goal; /* from its method */
};

/* The values of keys fill and report, by struct cal_method's fill and peak:
 * what the loader reads and the JSON writes. */
static const char *const cal_fill_names[] = {"none", "seq", "random"};
static const char *const cal_report_names[] = {"mean", "peak", "first", "curve"};

/* Index of s in names[0..n), or -1. */
static int cal_name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* Points of a vdbench curve after its maximum: 10%, 20%, ... 120% of it. */
#define CURVE_POINTS 12

/* Result of one closed-loop run. */
struct cal_result {
	double iops, bytes_per_s, mean_lat_us;
	double slice_iops[10]; /* over each tenth of the run, ramp included */
	uint64_t total_ios;    /* every I/O simulated, ramp included */
	uint64_t ios;
	double point_iops[1 + CURVE_POINTS]; /* report = curve: the maximum, then each point */
	double point_lat_us[1 + CURVE_POINTS]; /* and each one's mean latency */
	int best;	/* report = curve: the point reported (the best, as vdbench's peak) */
	double prog_amp; /* NAND bytes programmed per byte written over the run's
			    second half (NAN when it wrote nothing) */
};

/* ---- closed-loop runner on the simulation ---- */

struct loop {
	struct qs_sim *sim;
	struct qs_vol *vol;
	struct qs_model *m;
	/* the model's counters at the run's half time (the wear window's start) */
	struct qs_model_counters c_half;
	uint64_t t_half;
	int half_taken;
	/* fio's random map: pass position pm_x of pm_size (a power of two at
	 * least the span's blocks), pass key pm_c (loop_map_next) */
	int randmap;
	uint64_t pm_x, pm_c, pm_size;
	uint64_t span_off, span_len, bs;
	int write, seq;
	uint64_t seq_next;
	uint64_t rng;
	uint64_t t_meas, t_end;
	uint64_t t_mend; /* end of the measured window (t_end unless report = first) */
	uint64_t done_ios, lat_sum, all_ios;
	uint64_t t0, slice_ios[10]; /* completions per tenth of the run */
	uint64_t slice_lat[10];
	uint64_t inflight;
	/*
	 * A vdbench curve (report = curve): after the maximum (its first
	 * first_ns), point k of CURVE_POINTS runs for first_ns at k x 10% of
	 * the maximum measured, paced: I/Os start no closer than 1/rate apart.
	 */
	int curve;
	uint64_t first_ns, interval_ns, next_t;
	uint64_t pt_ios[1 + CURVE_POINTS], pt_lat[1 + CURVE_POINTS]; /* per point, measured */
	struct loop_slot *slots;
	struct iovec iov; /* timing-only volume: the buffer is never touched */
};

struct loop_slot {
	struct loop *l;
	uint64_t t_submit;
};

static void loop_issue(struct loop_slot *sl);

static void loop_issue_cb(void *arg, int result)
{
	struct loop_slot *sl = arg;
	(void)result;
	if (qs_sim_now(sl->l->sim) < sl->l->t_end)
		loop_issue(sl);
}

/*
 * Next I/O of slot sl after a completion at now: at once, or in a curve's
 * paced point at the next free start time.
 */
static void loop_next(struct loop_slot *sl, uint64_t now)
{
	struct loop *l = sl->l;
	if (l->curve && now >= l->t_mend) {
		if (!l->interval_ns) {
			/* The maximum is over: pace the points from its measured rate. */
			double win = (double)(l->t_mend - l->t_meas) / 1e9;
			double iops = l->done_ios ? (double)l->done_ios / win : 1.0;
			l->interval_ns = (uint64_t)(1e9 / iops) + 1;
			l->next_t = l->t_mend;
		}
		uint64_t k = (now - l->t0) / l->first_ns; /* point number, 1.. */
		if (k < 1)
			k = 1;
		uint64_t gap = l->interval_ns * 10 / k;
		uint64_t at = l->next_t > now ? l->next_t : now;
		l->next_t = at + gap;
		if (at > now && qs_sim_schedule(l->sim, at, loop_issue_cb, sl, 0) == 0)
			return;
	}
	loop_issue(sl);
}

static void loop_done(void *arg, int result)
{
	struct loop_slot *sl = arg;
	struct loop *l = sl->l;
	uint64_t now = qs_sim_now(l->sim);
	l->inflight--;
	l->all_ios++;
	if (result == 0 && now < l->t_end) {
		uint64_t k = (now - l->t0) * 10 / (l->t_end - l->t0);
		l->slice_ios[k]++;
		l->slice_lat[k] += now - sl->t_submit;
	}
	if (result == 0 && sl->t_submit >= l->t_meas && now <= l->t_mend) {
		l->done_ios++;
		l->lat_sum += now - sl->t_submit;
	}
	if (result == 0 && l->curve && now < l->t_end) {
		/* Each point measured as the maximum is: after a tenth of it. */
		uint64_t k = (sl->t_submit - l->t0) / l->first_ns;
		uint64_t p0 = l->t0 + k * l->first_ns;
		if (sl->t_submit >= p0 + l->first_ns / 10 && now <= p0 + l->first_ns) {
			l->pt_ios[k]++;
			l->pt_lat[k] += now - sl->t_submit;
		}
	}
	if (now < l->t_end)
		loop_next(sl, now);
}

/*
 * A bijection of [0, 2^k) keyed by key: multiplications by odd numbers,
 * xor-shifts to the right and an addition, each invertible mod 2^k.
 */
static uint64_t loop_map_mix(uint64_t x, uint64_t key, uint64_t mask, unsigned half)
{
	x = (x * 0x9e3779b97f4a7c15ull + key) & mask;
	x ^= x >> half;
	x = (x * 0xbf58476d1ce4e5b9ull) & mask;
	x ^= x >> (half + 1);
	return (x * 0x94d049bb133111ebull + (key >> 32)) & mask;
}

/*
 * Next block of fio's random map: a counter through [0, 2^k) mapped by a
 * bijection, values past the span's blocks skipped, so every block comes
 * once per pass; each pass draws a new key (fio's map is cleared and drawn
 * anew), so a pass does not overwrite in the order the last one wrote.
 */
static uint64_t loop_map_next(struct loop *l, uint64_t nblocks)
{
	unsigned half = 1;
	while ((1ull << (2 * half)) < l->pm_size)
		half++;
	for (;;) {
		if (l->pm_x == l->pm_size) {
			l->pm_x = 0;
			l->pm_c = qs_splitmix64(&l->rng);
		}
		uint64_t v = loop_map_mix(l->pm_x++, l->pm_c, l->pm_size - 1, half);
		if (v < nblocks)
			return v;
	}
}

static void loop_issue(struct loop_slot *sl)
{
	struct loop *l = sl->l;
	uint64_t off;
	if (!l->half_taken && qs_sim_now(l->sim) >= l->t_half) {
		qs_model_get_counters(l->m, &l->c_half);
		l->half_taken = 1;
	}
	if (l->seq) {
		if (l->seq_next + l->bs > l->span_len)
			l->seq_next = 0;
		off = l->seq_next;
		l->seq_next += l->bs;
	} else if (l->randmap) {
		off = loop_map_next(l, l->span_len / l->bs) * l->bs;
	} else {
		off = (qs_splitmix64(&l->rng) % (l->span_len / l->bs)) * l->bs;
	}
	off += l->span_off;
	sl->t_submit = qs_sim_now(l->sim);
	l->inflight++;
	l->iov.iov_len = l->bs;
	if (l->write)
		l->vol->ops->write(l->vol->ctx, off, &l->iov, 1, 0, loop_done, sl);
	else
		l->vol->ops->read(l->vol->ctx, off, &l->iov, 1, loop_done, sl);
}

/*
 * Each point's rate of a curve, and which is best (for -v). The figure is
 * the maximum's: the published latencies at the peak are those of a full
 * queue by Little's law (4K random read 510, 64K sequential write 65
 * outstanding), which a paced point that keeps up does not have.
 */
static void cal_curve_best(const struct loop *l, struct cal_result *r)
{
	double pwin = (double)(l->first_ns - l->first_ns / 10) / 1e9;
	r->best = 0;
	for (int k = 0; k <= CURVE_POINTS; k++) {
		r->point_iops[k] = (double)l->pt_ios[k] / pwin;
		r->point_lat_us[k] = l->pt_ios[k] ? (double)l->pt_lat[k] / (double)l->pt_ios[k] / 1e3
						  : 0;
		if (r->point_iops[k] > r->point_iops[r->best])
			r->best = k;
	}
}

/*
 * Run test t of method mm on model m from its idle time for dur_ns of
 * virtual time with qd requests in flight on [0, span_len): the first tenth
 * is ramp, the rest measured (or as mm's report says; a curve's points
 * are first_ns each). Reads of a curve method run its maximum only.
 */
static int cal_run(struct qs_model *m, const struct cal_test *t, const struct cal_method *mm,
		   uint64_t span_len, uint64_t dur_ns, uint32_t qd, uint64_t seed,
		   uint64_t first_ns, struct cal_result *r)
{
	int peak = !t->write && mm->peak == 3 ? 2 : mm->peak;
	struct qs_sim *sim = qs_sim_new();
	if (!sim)
		return -ENOMEM;
	struct qs_sim_vol *sv = qs_sim_vol_new(sim, m, QS_SIM_DATA_NONE);
	struct loop l = {0};
	l.slots = calloc(qd, sizeof(*l.slots));
	if (!sv || !l.slots) {
		qs_sim_vol_free(sv);
		qs_sim_free(sim);
		free(l.slots);
		return -ENOMEM;
	}
	uint64_t t0 = qs_model_idle_time(m);
	qs_sim_run_until(sim, t0);
	l.sim = sim;
	l.vol = qs_sim_vol_vol(sv);
	l.m = m;
	l.span_off = 0;
	l.span_len = span_len - span_len % t->bs;
	l.bs = t->bs;
	l.write = t->write;
	l.seq = t->seq;
	l.rng = seed;
	l.randmap = mm->randmap;
	for (l.pm_size = 1; l.pm_size < l.span_len / l.bs; l.pm_size <<= 1)
		;
	l.pm_x = l.pm_size; /* a new pass (and key) at the first draw */
	l.t0 = t0;
	l.t_meas = t0 + dur_ns / 10;
	l.t_end = t0 + dur_ns;
	l.t_mend = l.t_end;
	if (peak == 2 && first_ns && first_ns < dur_ns) {
		/* The first first_ns of the run, after a ramp of a tenth of it. */
		l.t_meas = t0 + first_ns / 10;
		l.t_mend = t0 + first_ns;
	}
	if (peak == 3 && first_ns) {
		/* A vdbench curve: the maximum (measured as for "first"), then
		 * CURVE_POINTS paced points of first_ns each. */
		l.curve = 1;
		l.first_ns = first_ns;
		l.t_meas = t0 + first_ns / 10;
		l.t_mend = t0 + first_ns;
		l.t_end = t0 + (1 + CURVE_POINTS) * first_ns;
		dur_ns = l.t_end - t0;
	}
	l.t_half = t0 + dur_ns / 2;
	static char dummy[1];
	l.iov.iov_base = dummy;
	for (uint32_t i = 0; i < qd; i++) {
		l.slots[i].l = &l;
		loop_issue(&l.slots[i]);
	}
	qs_sim_run(sim);
	struct qs_model_counters c1;
	qs_model_get_counters(m, &c1);
	uint64_t wrote = c1.host_write_bytes - l.c_half.host_write_bytes;
	r->prog_amp = l.half_taken && wrote ? (double)(c1.nand_prog_bytes -
						       l.c_half.nand_prog_bytes) / (double)wrote
					    : NAN;
	double win = (double)(l.t_mend - l.t_meas) / 1e9;
	r->ios = l.done_ios;
	r->total_ios = l.all_ios;
	r->iops = (double)l.done_ios / win;
	r->bytes_per_s = r->iops * t->bs;
	r->mean_lat_us = l.done_ios ? (double)l.lat_sum / (double)l.done_ios / 1e3 : 0;
	for (int i = 0; i < 10; i++)
		r->slice_iops[i] = (double)l.slice_ios[i] * 10 / ((double)dur_ns / 1e9);
	if (l.curve)
		cal_curve_best(&l, r);
	if (peak == 1) {
		/* The best tenth after the first (ramp), as a rate sweep reports. */
		int b = 1;
		for (int i = 2; i < 10; i++)
			if (l.slice_ios[i] > l.slice_ios[b])
				b = i;
		r->iops = r->slice_iops[b];
		r->ios = l.slice_ios[b];
		r->mean_lat_us = l.slice_ios[b] ? (double)l.slice_lat[b] /
							  (double)l.slice_ios[b] / 1e3
						: 0;
	}
	r->bytes_per_s = r->iops * t->bs;
	qs_sim_vol_free(sv);
	qs_sim_free(sim);
	free(l.slots);
	return 0;
}

/* ---- reading the published tests from the profile file ---- */

static int parse_rw(const char *s, struct cal_test *t)
{
	static const struct {
		const char *n;
		int w, q;
	} tab[] = {{"read", 0, 1}, {"write", 1, 1}, {"randread", 0, 0}, {"randwrite", 1, 0}};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].n)) {
			t->write = tab[i].w;
			t->seq = tab[i].q;
			return 0;
		}
	return -EINVAL;
}

/* A method's offset distribution and MB: keys random and mbps_unit. */
static int load_method_units(dictionary *d, const char *path, const char *sec,
			     struct cal_method *mm)
{
	char k[128];
	snprintf(k, sizeof(k), "%s:random", sec);
	const char *rnd = iniparser_getstring(d, k, "uniform");
	mm->randmap = !strcmp(rnd, "map");
	if (!mm->randmap && strcmp(rnd, "uniform")) {
		fprintf(stderr, "calibrate: %s: [%s] random = '%s': allowed uniform (vdbench, "
			"fio norandommap), map (fio's default: each block once a pass)\n", path,
			sec, rnd);
		return -EINVAL;
	}
	snprintf(k, sizeof(k), "%s:mbps_unit", sec);
	const char *u = iniparser_getstring(d, k, "MB");
	mm->mb = !strcmp(u, "MiB") ? 1048576.0 : 1e6;
	if (strcmp(u, "MiB") && strcmp(u, "MB")) {
		fprintf(stderr, "calibrate: %s: [%s] mbps_unit = '%s': allowed MB (10^6 bytes), "
			"MiB (2^20 bytes: a review whose MB/s are IOPS x KiB / 1024)\n", path, sec,
			u);
		return -EINVAL;
	}
	return 0;
}

/* A test's own run length and endurance rating: keys run_s, pbw, budget. */
static int load_test_wear(dictionary *d, const char *path, const char *sec,
			  struct cal_test *t)
{
	char k[128];
	snprintf(k, sizeof(k), "%s:run_s", sec);
	t->run_s = iniparser_getdouble(d, k, 0);
	snprintf(k, sizeof(k), "%s:pbw", sec);
	t->pbw = iniparser_getdouble(d, k, 0);
	snprintf(k, sizeof(k), "%s:budget", sec);
	t->budget = iniparser_getint(d, k, 0);
	if (t->run_s < 0 || t->pbw < 0 || (t->budget != 0 && t->budget != 1) ||
	    ((t->pbw > 0 || t->budget) && !t->write)) {
		fprintf(stderr, "calibrate: %s: [%s] run_s = %g, pbw = %g, budget = %d: allowed "
			"run_s >= 0, pbw >= 0 (PB written, the rating of a write test's "
			"workload), budget 0 or 1 (with pbw: the rating that defines the NAND "
			"budget)\n", path, sec, t->run_s, t->pbw, t->budget);
		return -EINVAL;
	}
	if (t->budget && !(t->pbw > 0)) {
		fprintf(stderr, "calibrate: %s: [%s] budget = 1 needs pbw (the rating)\n", path,
			sec);
		return -EINVAL;
	}
	return 0;
}

static int load_tests(const char *path, struct cal_method *meth, int *nmeth,
		      struct cal_test *tests, int *ntests)
{
	dictionary *d = iniparser_load(path);
	if (!d) {
		fprintf(stderr, "calibrate: %s: cannot read\n", path);
		return -EINVAL;
	}
	*nmeth = *ntests = 0;
	int rc = 0;
	for (int i = 0; i < iniparser_getnsec(d) && !rc; i++) {
		const char *sec = iniparser_getsecname(d, i);
		char k[128];
		if (!strncmp(sec, "method.", 7) && *nmeth < 8) {
			struct cal_method *mm = &meth[(*nmeth)++];
			snprintf(mm->name, sizeof(mm->name), "%s", sec + 7);
			snprintf(k, sizeof(k), "%s:span_pct", sec);
			mm->span_pct = iniparser_getdouble(d, k, -1);
			snprintf(k, sizeof(k), "%s:run_s", sec);
			mm->run_s = iniparser_getdouble(d, k, -1);
			snprintf(k, sizeof(k), "%s:fill", sec);
			const char *fill = iniparser_getstring(d, k, "seq");
			mm->fill = cal_name_index(cal_fill_names, 3, fill);
			if (mm->fill < 0) {
				mm->fill = 0;
				fprintf(stderr,
					"calibrate: %s: [%s] fill = '%s': allowed seq, random, none\n",
					path, sec, fill);
				rc = -EINVAL;
			}
			snprintf(k, sizeof(k), "%s:repeat", sec);
			mm->repeat = iniparser_getint(d, k, 1);
			if (mm->repeat < 1 || mm->repeat > 16) {
				fprintf(stderr,
					"calibrate: %s: [%s] repeat = %d: allowed 1..16 (runs of the "
					"method with other workload seeds)\n",
					path, sec, mm->repeat);
				rc = -EINVAL;
			}
			snprintf(k, sizeof(k), "%s:goal", sec);
			mm->goal = iniparser_getint(d, k, 1);
			if (mm->goal != 0 && mm->goal != 1) {
				fprintf(stderr, "calibrate: %s: [%s] goal = %d: allowed 0, 1\n", path,
					sec, mm->goal);
				rc = -EINVAL;
			}
			snprintf(k, sizeof(k), "%s:report", sec);
			const char *rep = iniparser_getstring(d, k, "mean");
			mm->peak = cal_name_index(cal_report_names, 4, rep);
			int bad_report = mm->peak < 0;
			if (bad_report)
				mm->peak = 0;
			snprintf(k, sizeof(k), "%s:first_s", sec);
			mm->first_s = iniparser_getdouble(d, k, 0);
			if (mm->peak == 3) {
				/* A curve's length follows from its points. */
				mm->run_s = (1 + CURVE_POINTS) * mm->first_s;
				if (mm->first_s <= 0) {
					fprintf(stderr,
						"calibrate: %s: [%s] first_s = %g: report = curve "
						"needs first_s > 0 (seconds per point)\n",
						path, sec, mm->first_s);
					rc = -EINVAL;
				}
			}
			if (mm->peak == 2 && (mm->first_s <= 0 || mm->first_s > mm->run_s)) {
				fprintf(stderr,
					"calibrate: %s: [%s] first_s = %g: report = first needs "
					"0 < first_s <= run_s (%g)\n",
					path, sec, mm->first_s, mm->run_s);
				rc = -EINVAL;
			}
			if (bad_report) {
				fprintf(stderr,
					"calibrate: %s: [%s] report = '%s': allowed mean, peak, first, "
					"curve\n",
					path, sec, rep);
				rc = -EINVAL;
			}
			if (!rc)
				rc = load_method_units(d, path, sec, mm);
			if (mm->span_pct <= 0 || mm->span_pct > 100 || mm->run_s <= 0) {
				fprintf(stderr,
					"calibrate: %s: [%s] span_pct must be in (0, 100] and "
					"run_s > 0 (got %g, %g)\n",
					path, sec, mm->span_pct, mm->run_s);
				rc = -EINVAL;
			}
		} else if (!strncmp(sec, "test.", 5) && *ntests < MAX_TESTS) {
			struct cal_test *t = &tests[(*ntests)++];
			memset(t, 0, sizeof(*t));
			t->order = atoi(sec + 5);
#define GETS(key) (snprintf(k, sizeof(k), "%s:" key, sec), iniparser_getstring(d, k, NULL))
#define GETD(key) (snprintf(k, sizeof(k), "%s:" key, sec), iniparser_getdouble(d, k, 0))
			const char *s = GETS("name");
			snprintf(t->name, sizeof(t->name), "%s", s ? s : sec);
			s = GETS("method");
			snprintf(t->method, sizeof(t->method), "%s", s ? s : "");
			s = GETS("rw");
			if (!s || parse_rw(s, t)) {
				fprintf(stderr,
					"calibrate: %s: [%s] rw = '%s': allowed read, write, "
					"randread, randwrite\n",
					path, sec, s ? s : "");
				rc = -EINVAL;
			}
			t->bs = (uint32_t)(GETD("bs_kib") * 1024);
			t->qd = (uint32_t)GETD("qd");
			t->iops = GETD("iops");
			t->mbps = GETD("mbps");
			t->gbps = GETD("gbps");
			t->lat_us = GETD("lat_us");
			if (!rc)
				rc = load_test_wear(d, path, sec, t);
			if (!t->bs || t->bs % 4096 || !t->qd || t->qd > 4096) {
				fprintf(stderr,
					"calibrate: %s: [%s] bs_kib must be a multiple of 4 and "
					"qd in 1..4096 (got %u KiB, %u)\n",
					path, sec, t->bs / 1024, t->qd);
				rc = -EINVAL;
			}
#undef GETS
#undef GETD
		}
	}
	iniparser_freedict(d);
	/* Published order: by test number. */
	for (int i = 1; i < *ntests; i++)
		for (int j = i; j > 0 && tests[j].order < tests[j - 1].order; j--) {
			struct cal_test x = tests[j];
			tests[j] = tests[j - 1];
			tests[j - 1] = x;
		}
	return rc;
}

static void add_point(struct cal_point *pts, int *n, const struct cal_method *mm,
		      const char *name, const char *unit, double pub, double model)
{
	if (*n >= MAX_POINTS)
		return;
	struct cal_point *p = &pts[(*n)++];
	snprintf(p->name, sizeof(p->name), "%.31s: %.60s", mm->name, name);
	p->goal = isnan(pub) ? 0 : mm->goal;
	p->unit = unit;
	p->published = pub;
	p->model = model;
}

/* Lines printed under the table: unit checks, the endurance budget. */
#define MAX_NOTES 32
static char cal_notes[MAX_NOTES][240];
static int cal_nnotes;

__attribute__((format(printf, 1, 2))) static void cal_note(const char *fmt, ...)
{
	if (cal_nnotes >= MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cal_notes[cal_nnotes++], sizeof(cal_notes[0]), fmt, ap);
	va_end(ap);
}

/* A test's published bandwidth in bytes/s, in its method's unit (0: none). */
static double cal_pub_bytes(const struct cal_method *mm, const struct cal_test *t)
{
	return t->mbps ? t->mbps * mm->mb : t->gbps * 1000 * mm->mb;
}

/* Published IOPS: given, or the bandwidth over the block size. */
static double cal_pub_iops(const struct cal_method *mm, const struct cal_test *t)
{
	return t->iops ? t->iops : cal_pub_bytes(mm, t) / t->bs;
}

/*
 * Where a test gives IOPS and a bandwidth, which unit the bandwidth is in:
 * IOPS x block size against it in 10^6 and in 2^20 bytes. A note says
 * which matches, and warns when that is not the method's mbps_unit.
 */
static void cal_unit_check(const struct cal_method *mm, const struct cal_test *t)
{
	if (!t->iops || !(t->mbps || t->gbps))
		return;
	double pub = t->mbps ? t->mbps : t->gbps * 1000;
	double dec = t->iops * t->bs / 1e6, bin = t->iops * t->bs / 1048576.0;
	double ed = (pub - dec) / dec * 100, eb = (pub - bin) / bin * 100;
	int is_bin = fabs(eb) < fabs(ed);
	cal_note("units: %s: %s: %.6g %s = %.0f IOPS x %u KiB with MB = 2^%s bytes (%+.1f%%; "
		 "with 10^%s: %+.1f%%)%s", mm->name, t->name, t->mbps ? t->mbps : t->gbps,
		 t->mbps ? "MB/s" : "GB/s", t->iops, t->bs / 1024, is_bin ? "20" : "6 (not 2^20)",
		 is_bin ? eb : ed, is_bin ? "6" : "... 2^20", is_bin ? ed : eb,
		 is_bin != (mm->mb > 1e6) ? "; NOT the method's mbps_unit" : "");
}

/*
 * The points of test t: IOPS where published (the primary figure: a
 * bandwidth given with it is only checked for its unit), else the
 * bandwidth in the method's unit.
 */
static void add_points(struct cal_point *pts, int *n, const struct cal_method *mm,
		       const struct cal_test *t, const struct cal_result *r)
{
	int bin = mm->mb > 1e6;
	cal_unit_check(mm, t);
	if (t->iops)
		add_point(pts, n, mm, t->name, "IOPS", t->iops, r->iops);
	else if (t->mbps)
		add_point(pts, n, mm, t->name, bin ? "MiB/s" : "MB/s", t->mbps,
			  r->bytes_per_s / mm->mb);
	else if (t->gbps)
		add_point(pts, n, mm, t->name, bin ? "kMiB/s" : "GB/s", t->gbps,
			  r->bytes_per_s / (1000 * mm->mb));
}

/*
 * A test with no published figure: the model's prediction (IOPS, the
 * bandwidth in the method's unit, the mean latency), for a review not in
 * the file yet (the 15.36 TB P5316 under the 30.72 TB reviews' methods).
 * Printed with "-" for the published figure, outside the goal and the
 * worst errors.
 */
static void add_predictions(struct cal_point *pts, int *n, const struct cal_method *mm,
			    const struct cal_test *t, const struct cal_result *r)
{
	char nm[96];
	int bin = mm->mb > 1e6;
	add_point(pts, n, mm, t->name, "IOPS", NAN, r->iops);
	add_point(pts, n, mm, t->name, bin ? "MiB/s" : "MB/s", NAN, r->bytes_per_s / mm->mb);
	snprintf(nm, sizeof(nm), "%.50s latency", t->name);
	add_point(pts, n, mm, nm, "us", NAN, r->mean_lat_us);
}

/* Where the run for a method stands, for the summary of drive state. */
static void print_state(const struct qs_model *m, const char *what, const char *method)
{
	struct qs_model_counters c;
	qs_model_get_counters(m, &c);
	double host = (double)c.host_prog_bytes;
	printf("  [%s after %s] NAND WA %.2f (programmed %.1f GiB for %.1f GiB written), "
	       "RMW %llu, GC moves %llu, free superblocks %u/%u\n",
	       method, what, host > 0 ? (double)c.nand_prog_bytes / (double)c.host_write_bytes : 0,
	       (double)c.nand_prog_bytes / 1073741824.0, (double)c.host_write_bytes / 1073741824.0,
	       (unsigned long long)c.rmw, (unsigned long long)c.gc_moves,
	       qs_model_free_superblocks(m), qs_model_superblocks(m));
}

/* I/Os simulated by closed loops (preconditioning excluded), for the rate. */
static uint64_t cal_total_ios;

/*
 * Outstanding I/Os of test t: a closed loop obeys Little's law, so where
 * the review gives a latency at its peak, the outstanding count it ran is
 * IOPS x latency, which its thread count does not always equal (vdbench
 * threads may each keep several I/Os in flight). That count then, else
 * the thread count.
 */
static int cal_qd_from_latency(const struct cal_test *t)
{
	return t->lat_us && (t->iops || t->mbps || t->gbps);
}

static uint32_t cal_qd(const struct cal_method *mm, const struct cal_test *t)
{
	if (!cal_qd_from_latency(t))
		return t->qd;
	long qd = lround(cal_pub_iops(mm, t) * t->lat_us / 1e6);
	return qd < 1 ? 1 : (uint32_t)qd;
}

/* Per test, over a method's repeats: sums for the means, the range. */
struct cal_sums {
	double iops[MAX_TESTS], lat[MAX_TESTS], amp[MAX_TESTS];
	double lo[MAX_TESTS], hi[MAX_TESTS];
	uint32_t qd[MAX_TESTS];
};

static void cal_print_run(const struct cal_method *mm, const struct cal_test *t, int rp,
			  uint32_t qd, const struct cal_result *r, const struct qs_model *m)
{
	char tag[48] = "";
	if (mm->repeat > 1)
		snprintf(tag, sizeof(tag), " #%d", rp + 1);
	printf("  [%s%s] %-22s qd %-4u %10.0f IOPS %9.1f MB/s lat %8.1f us (%llu I/Os measured)\n",
	       mm->name, tag, t->name, qd, r->iops, r->bytes_per_s / 1e6, r->mean_lat_us,
	       (unsigned long long)r->ios);
	if (!t->write)
		return;
	if (mm->peak == 3) {
		printf("    IOPS at the maximum, then at 10%%..120%% of it:");
		for (int k = 0; k <= CURVE_POINTS; k++)
			printf(" %.0f", r->point_iops[k]);
		printf(" (best: %s)\n", r->best ? "a paced point" : "the maximum");
		printf("    latency (us) at each:");
		for (int k = 0; k <= CURVE_POINTS; k++)
			printf(" %.0f", r->point_lat_us[k]);
		printf("\n");
	}
	printf("    IOPS by tenth of the run:");
	for (int k = 0; k < 10; k++)
		printf(" %.0f", r->slice_iops[k]);
	printf("\n    NAND bytes per byte written over its second half: %.3f\n", r->prog_amp);
	print_state(m, t->name, mm->name);
}

/* One pass of method mm's tests on m (repeat rp), into the sums. */
static int cal_pass(struct qs_model *m, const struct cal_method *mm, const struct cal_test *tests,
		    int ntests, double tscale, uint64_t span, int rp, struct cal_sums *sm,
		    int verbose)
{
	for (int i = 0; i < ntests; i++) {
		const struct cal_test *t = &tests[i];
		if (strcmp(t->method, mm->name))
			continue;
		struct cal_result r = {0};
		uint64_t dur = (uint64_t)((t->run_s > 0 ? t->run_s : mm->run_s) * tscale * 1e9);
		/* Reads leave the drive state as it is, so they need only run
		 * long enough for a stable figure. */
		if (!t->write && dur > 500000000ull)
			dur = 500000000ull;
		uint32_t qd = cal_qd(mm, t);
		int rc = cal_run(m, t, mm, span, dur, qd, 1 + (uint64_t)i + 1000 * (uint64_t)rp,
				 (uint64_t)(mm->first_s * tscale * 1e9), &r);
		if (rc)
			return rc;
		cal_total_ios += r.total_ios;
		sm->qd[i] = qd;
		sm->iops[i] += r.iops;
		sm->lat[i] += r.mean_lat_us;
		sm->amp[i] += r.prog_amp;
		sm->lo[i] = rp ? fmin(sm->lo[i], r.iops) : r.iops;
		sm->hi[i] = rp ? fmax(sm->hi[i], r.iops) : r.iops;
		if (verbose)
			cal_print_run(mm, t, rp, qd, &r, m);
	}
	return 0;
}

/*
 * Endurance of method mm's rated tests: the NAND budget is the budget
 * test's rating times the model's program amplification under it; every
 * other rated test's rating is predicted as that budget over its own
 * amplification (a point each, unit PBW).
 */
/*
 * The bench's wear figures take the profile's endurance_pbw times its
 * endurance_prog_amp as the budget: where the profile's rating is this
 * test's, say whether that amplification is the model's.
 */
static void cal_check_profile_amp(const struct qs_profile *p, const struct cal_test *t,
				  double amp)
{
	double given = p->endurance_prog_amp > 0 ? p->endurance_prog_amp : 1;
	if (p->endurance_pbw != t->pbw || !(amp > 0))
		return;
	if (fabs(given / amp - 1) > 0.02)
		cal_note("endurance: the profile's endurance_prog_amp %.3f is not the model's "
			 "%.3f under its rating's pattern (%s): set endurance_prog_amp = %.2f",
			 given, amp, t->name, amp);
	else
		cal_note("endurance: the profile's endurance_prog_amp %.3f is the model's (%.3f)",
			 given, amp);
}

static void cal_endurance(const struct qs_profile *p, const struct cal_method *mm,
			  const struct cal_test *tests, int ntests, const struct cal_sums *sm,
			  struct cal_point *pts, int *npts)
{
	double budget = 0;
	for (int i = 0; i < ntests; i++) {
		const struct cal_test *t = &tests[i];
		if (!strcmp(t->method, mm->name) && t->budget) {
			double amp = sm->amp[i] / mm->repeat;
			budget = t->pbw * amp;
			cal_note("endurance: %s: NAND budget %.5g PB = %.5g PBW of %s (published) x "
				 "%.3f NAND bytes per byte written (model)", mm->name, budget, t->pbw,
				 t->name, amp);
			cal_check_profile_amp(p, t, amp);
		}
	}
	for (int i = 0; i < ntests && budget > 0; i++) {
		const struct cal_test *t = &tests[i];
		if (strcmp(t->method, mm->name) || t->budget || !(t->pbw > 0))
			continue;
		char nm[96];
		double amp = sm->amp[i] / mm->repeat;
		snprintf(nm, sizeof(nm), "endurance, %.40s (x %.2f)", t->name, amp);
		int n0 = *npts;
		add_point(pts, npts, mm, nm, "PBW", t->pbw, budget / amp);
		/* a prediction from the model's own GC: a goal point whatever its
		 * method's spec rows are */
		if (*npts > n0)
			pts[n0].goal = 1;
	}
}

/* The points of method mm from its sums (means over the repeats). */
static void cal_method_points(const struct qs_profile *p, const struct cal_method *mm,
			      const struct cal_test *tests, int ntests, const struct cal_sums *sm,
			      struct cal_point *pts, int *npts, int verbose)
{
	for (int i = 0; i < ntests; i++) {
		const struct cal_test *t = &tests[i];
		if (strcmp(t->method, mm->name))
			continue;
		struct cal_result r = {0};
		r.iops = sm->iops[i] / mm->repeat;
		r.bytes_per_s = r.iops * t->bs;
		r.mean_lat_us = sm->lat[i] / mm->repeat;
		if (t->iops || t->mbps || t->gbps)
			add_points(pts, npts, mm, t, &r);
		else if (!t->pbw)
			add_predictions(pts, npts, mm, t, &r);
		if (t->lat_us) {
			char nm[96];
			snprintf(nm, sizeof(nm), "%.50s latency", t->name);
			add_point(pts, npts, mm, nm, "us", t->lat_us, r.mean_lat_us);
		}
		if (verbose && mm->repeat > 1)
			printf("  [%s] %-22s qd %-4u mean of %d runs %10.0f IOPS (%.0f..%.0f) lat "
			       "%8.1f us\n",
			       mm->name, t->name, sm->qd[i], mm->repeat, r.iops, sm->lo[i],
			       sm->hi[i], r.mean_lat_us);
	}
	cal_endurance(p, mm, tests, ntests, sm, pts, npts);
}

/*
 * How method mm ran, under the table: the precondition, the span, the
 * order, the offsets, each test's length and figure, the repeats, the
 * unit, and each test's depth with where it comes from, so that a point
 * can be read against the review's method without the profile file.
 */
static void cal_print_method(const struct cal_method *mm, const struct cal_test *tests,
			     int ntests)
{
	static const char *const fill[] = {"a fresh drive (nothing written)",
					   "the whole drive written in order first",
					   "the whole drive written once in random order first"};
	printf("  %s: %s, then its tests in published order on that one drive (each finds "
	       "the state the one before left), on %g%% of it at offset 0\n",
	       mm->name, fill[mm->fill], mm->span_pct);
	int rnd = 0;
	for (int i = 0; i < ntests; i++)
		rnd |= !strcmp(tests[i].method, mm->name) && !tests[i].seq;
	printf("    ");
	if (rnd)
		printf("random offsets %s; ", mm->randmap ? "each block once a pass (fio's random map)"
							  : "uniform (vdbench, fio norandommap)");
	if (mm->peak == 3)
		printf("writes: a vdbench curve, the maximum for %g s then %d paced points at "
		       "10%%..120%% of it, the figure its maximum; ",
		       mm->first_s, CURVE_POINTS);
	else if (mm->peak == 2)
		printf("%g s a test, the figure its first %g s; ", mm->run_s, mm->first_s);
	else
		printf("%g s a test, the figure the %s after a ramp of a tenth; ", mm->run_s,
		       mm->peak ? "best tenth" : "mean");
	printf("reads at most 0.5 s\n    ");
	if (mm->repeat > 1)
		printf("the mean of %d runs with other workload seeds; ", mm->repeat);
	printf("MB = %s bytes%s\n", mm->mb > 1e6 ? "2^20" : "10^6",
	       mm->goal ? "" : "; context points (goal = 0)");
	for (int i = 0; i < ntests; i++) {
		const struct cal_test *t = &tests[i];
		if (strcmp(t->method, mm->name))
			continue;
		printf("    %s: depth %u", t->name, cal_qd(mm, t));
		if (cal_qd_from_latency(t))
			printf(" (Little's law: %.0f IOPS x %g us; the profile's qd %u)",
			       cal_pub_iops(mm, t), t->lat_us, t->qd);
		else
			printf(" (the profile's qd)");
		if (t->run_s > 0)
			printf(", run %g s", t->run_s);
		printf("\n");
	}
}

/* Point p as a JSON object; a prediction has null for the published
 * figure and the error. */
static void cal_json_point(FILE *f, const struct cal_point *p, int idx)
{
	fprintf(f, "%s\n  {\"name\": \"%s\", \"unit\": \"%s\", ", idx ? "," : "", p->name,
		p->unit);
	if (isnan(p->published))
		fprintf(f, "\"published\": null, \"model\": %.6g, \"error_pct\": null, "
			   "\"goal\": false, \"prediction\": true}", p->model);
	else
		fprintf(f, "\"published\": %.6g, \"model\": %.6g, \"error_pct\": %.2f, "
			   "\"goal\": %s}", p->published, p->model,
			(p->model - p->published) / p->published * 100.0,
			p->goal ? "true" : "false");
}

/* Method mm as a JSON object (the facts cal_print_method prints). */
static void cal_json_method(FILE *f, const struct cal_method *mm, const struct cal_test *tests,
			    int ntests, int idx)
{
	fprintf(f,
		"%s\n  {\"name\": \"%s\", \"fill\": \"%s\", \"span_pct\": %g, \"random\": "
		"\"%s\", \"report\": \"%s\", \"run_s\": %g, \"first_s\": %g, \"repeat\": %d, "
		"\"mb_bytes\": %.0f, \"goal\": %s, \"tests\": [",
		idx ? "," : "", mm->name, cal_fill_names[mm->fill], mm->span_pct,
		mm->randmap ? "map" : "uniform", cal_report_names[mm->peak], mm->run_s, mm->first_s,
		mm->repeat, mm->mb, mm->goal ? "true" : "false");
	int n = 0;
	for (int i = 0; i < ntests; i++) {
		const struct cal_test *t = &tests[i];
		if (strcmp(t->method, mm->name))
			continue;
		fprintf(f, "%s{\"name\": \"%s\", \"qd\": %u, \"qd_from\": \"%s\"}",
			n++ ? ", " : "", t->name, cal_qd(mm, t),
			cal_qd_from_latency(t) ? "latency" : "threads");
	}
	fprintf(f, "]}");
}

static int run_method(const struct qs_profile *p, uint64_t scaled, const struct cal_method *mm,
		      const struct cal_test *tests, int ntests, struct cal_point *pts, int *npts,
		      int verbose)
{
	struct qs_model *base;
	char why[512];
	int rc = qs_model_create(&base, p, scaled, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "calibrate: cannot create the model: %s\n", why);
		return rc;
	}
	uint64_t cap = qs_model_capacity(base);
	double tscale = (double)cap / (double)p->capacity_bytes;
	uint64_t span = (uint64_t)((double)cap * mm->span_pct / 100.0);
	span -= span % qs_model_iu_bytes(base);
	/* Precondition: the whole drive written sequentially (or left fresh). */
	if (mm->fill == 1)
		qs_model_fill_seq(base, 0, 0, cap);
	else if (mm->fill == 2)
		qs_model_fill_random(base, 0, 0, cap, 12345);
	if (mm->fill && verbose)
		print_state(base, mm->fill == 1 ? "sequential fill" : "random-order fill", mm->name);
	struct cal_sums *sm = calloc(1, sizeof(*sm));
	rc = sm ? 0 : -ENOMEM;
	for (int rp = 0; rp < mm->repeat && !rc; rp++) {
		/*
		 * Each repeat starts from the same preconditioned drive and runs
		 * the tests in order with other workload seeds: where a figure
		 * is measured over a short window on a drive in transition, one
		 * run's figure depends on a few GC victims; the mean does not.
		 */
		struct qs_model *m = mm->repeat > 1 ? qs_model_clone(base) : base;
		if (!m) {
			fprintf(stderr, "calibrate: cannot copy the model: %s\n", strerror(errno));
			rc = -ENOMEM;
			break;
		}
		rc = cal_pass(m, mm, tests, ntests, tscale, span, rp, sm, verbose);
		if (m != base)
			qs_model_free(m);
	}
	if (!rc)
		cal_method_points(p, mm, tests, ntests, sm, pts, npts, verbose);
	free(sm);
	qs_model_free(base);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: qlcshape bench calibrate --profile NAME [--json FILE] [--scale-gib N] "
		"[-v]\n"
		"  --profile NAME   NAME.ini in conf/profiles, else in the installed\n"
		"                   PREFIX/share/qlcshape/profiles (or a path to an .ini)\n"
		"  --json FILE      also write the points as JSON\n"
		"  --scale-gib N    model capacity in GiB (default: 2^20 IUs, or enough for\n"
		"                   the profile's superblock count)\n"
		"  -v               per-test detail and drive state (WA, GC, RMW)\n");
}

int qs_cmd_bench_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"profile", required_argument, NULL, 'p'},
		{"json", required_argument, NULL, 'j'},
		{"scale-gib", required_argument, NULL, 's'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *prof = NULL, *json = NULL;
	double scale_gib = 0;
	int verbose = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:j:s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prof = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		case 's': {
			char *end;
			scale_gib = strtod(optarg, &end);
			if (*end || scale_gib < 0.25 || scale_gib > 4096) {
				fprintf(stderr,
					"calibrate: --scale-gib '%s': allowed 0.25..4096\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!prof || optind < argc) {
		usage(stderr);
		return 2;
	}
	char path[512], err[512];
	struct qs_profile p;
	qs_profile_path(prof, path, sizeof(path));
	if (qs_profile_load(path, &p, err, sizeof(err))) {
		fprintf(stderr, "calibrate: %s\n", err);
		return 1;
	}
	struct cal_method meth[8];
	struct cal_test tests[MAX_TESTS];
	int nmeth, ntests;
	if (load_tests(path, meth, &nmeth, tests, &ntests))
		return 1;
	uint64_t scaled = qs_model_default_bytes(&p);
	if (scale_gib > 0)
		scaled = (uint64_t)(scale_gib * 1073741824.0);
	if (scaled > p.capacity_bytes)
		scaled = p.capacity_bytes;
	scaled -= scaled % p.iu_bytes;

	struct cal_point pts[MAX_POINTS];
	int npts = 0;
	uint64_t w0 = qs_henv_now_ns();
	printf("profile %s (%s), model capacity %.2f GiB (1/%.0f of %.2f TB)\n", p.name, path,
	       (double)scaled / 1073741824.0, (double)p.capacity_bytes / (double)scaled,
	       (double)p.capacity_bytes / 1e12);
	for (int i = 0; i < nmeth; i++)
		if (run_method(&p, scaled, &meth[i], tests, ntests, pts, &npts, verbose))
			return 1;
	double wall = (double)(qs_henv_now_ns() - w0) / 1e9;

	printf("\n%-58s %-5s %12s %12s %8s\n", "point", "unit", "published", "model", "error");
	double worst[2] = {0, 0}; /* [goal] */
	int ngoal = 0, npred = 0;
	for (int i = 0; i < npts; i++) {
		if (isnan(pts[i].published)) {
			npred++;
			printf("%-58s %-5s %12s %12.6g %8s  (prediction)\n", pts[i].name,
			       pts[i].unit, "-", pts[i].model, "-");
			continue;
		}
		double e = (pts[i].model - pts[i].published) / pts[i].published * 100.0;
		if (fabs(e) > worst[pts[i].goal])
			worst[pts[i].goal] = fabs(e);
		ngoal += pts[i].goal;
		printf("%-58s %-5s %12.6g %12.6g %+7.1f%%%s\n", pts[i].name, pts[i].unit,
		       pts[i].published, pts[i].model, e, pts[i].goal ? "" : "  (context)");
	}
	for (int i = 0; i < cal_nnotes; i++)
		printf("%s%s\n", i ? "" : "\n", cal_notes[i]);
	printf("\nmethods (how each point above was measured; run lengths in real-drive "
	       "seconds, scaled with the capacity; docs/MODEL.md):\n");
	for (int i = 0; i < nmeth; i++)
		cal_print_method(&meth[i], tests, ntests);
	/* The goal's points (methods with goal = 1) and the others, each with its worst. */
	printf("\n%d points: %d goal points, worst error %.1f%%", npts - npred, ngoal, worst[1]);
	if (npts - npred > ngoal)
		printf("; %d context points (goal = 0), worst %.1f%%", npts - npred - ngoal,
		       worst[0]);
	if (npred)
		printf("; %d predictions (no published figure)", npred);
	printf("\n%.1f s wall (%.1fM I/Os simulated, %.2fM per wall second incl. "
	       "preconditioning)\n",
	       wall, (double)cal_total_ios / 1e6, (double)cal_total_ios / 1e6 / wall);

	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "calibrate: %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\"profile\": \"%s\", \"scale_bytes\": %llu, \"points\": [", p.name,
			(unsigned long long)scaled);
		for (int i = 0; i < npts; i++)
			cal_json_point(f, &pts[i], i);
		fprintf(f, "\n], \"methods\": [");
		for (int i = 0; i < nmeth; i++)
			cal_json_method(f, &meth[i], tests, ntests, i);
		fprintf(f, "\n]}\n");
		if (fclose(f)) {
			fprintf(stderr, "calibrate: %s: write failed\n", json);
			return 1;
		}
	}
	return 0;
}
