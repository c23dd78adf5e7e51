/* SPDX-License-Identifier: MIT */
/*
 * The integrated A/B bench (bench/run.h, qlcshape bench run|curve) on a tiny
 * QLC drive and a tiny Optane-class log: identical JSON for the same seed,
 * different JSON for another seed, only whole aligned IUs reaching the QLC
 * model with shaping on (and partial IUs with shaping off, so the check can
 * fail), the curve's SVG, and the command line's errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "qlcshape/format.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "../bench/cmds.h"
#include "../bench/drive.h"
#include "../bench/run.h"
#include "../bench/workload.h"
#include "tprof.h"
#include "ttmp.h"

/* 4K random writes on 25% of the drive (256 MB) with a 16 MB log: the log
 * fills and destage runs; plus a mix, so reads are covered too. */
static const char *job_fio =
	"[global]\n"
	"size=25%\n"
	"iodepth=16\n"
	"runtime=60ms\n"
	"ramp_time=10ms\n"
	"time_based=1\n"
	"[4k-randwrite]\n"
	"rw=randwrite\n"
	"bs=4k\n"
	"[mix]\n"
	"rw=randrw\n"
	"rwmixread=70\n"
	"bs=8k\n"
	"numjobs=2\n"
	"iodepth=4\n";

static char qlc_path[64], fast_path[64], job_path[64];

static int setup(void **state)
{
	(void)state;
	ttmp_file(qlc_path, sizeof(qlc_path), "br", ".ini", tprof_tiny_qlc);
	ttmp_file(fast_path, sizeof(fast_path), "br", ".ini", tprof_tiny_scm);
	ttmp_file(job_path, sizeof(job_path), "br", ".fio", job_fio);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(qlc_path);
	unlink(fast_path);
	unlink(job_path);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Run `bench run` with the NULL-ended argv; its standard error into *err
 * (the caller frees it). Returns the command's exit status. */
static int run_stderr(char **argv, char **err)
{
	return ttmp_stderr(qs_cmd_bench_run, argv, err);
}

static int run_cmd(const char *json, const char *seed, const char *workers)
{
	char *argv[] = {"run", job_path, "--profile", qlc_path, "--fast", fast_path,
			"--cache", "16m", "--seed", (char *)seed, "--quiet",
			"--policy", "sweep", "--policy", "fifo", "--json", (char *)json,
			"--workers", (char *)workers, NULL};
	return qs_cmd_bench_run((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
}

/* Same job, profiles and seed: byte-identical JSON, whether the runs go one
 * after another in this process or three at a time in child processes;
 * another seed differs. */
static void test_deterministic_json(void **state)
{
	(void)state;
	char a[64], b[64], c[64];
	ttmp_file(a, sizeof(a), "br", ".json", "");
	ttmp_file(b, sizeof(b), "br", ".json", "");
	ttmp_file(c, sizeof(c), "br", ".json", "");
	assert_int_equal(run_cmd(a, "7", "1"), 0);
	assert_int_equal(run_cmd(b, "7", "3"), 0);
	assert_int_equal(run_cmd(c, "8", "2"), 0);
	size_t na, nb, nc;
	char *ja = slurp(a, &na), *jb = slurp(b, &nb), *jc = slurp(c, &nc);
	assert_true(na > 500);
	assert_int_equal(na, nb);
	assert_memory_equal(ja, jb, na);
	assert_true(na != nc || memcmp(ja, jc, na));
	/* 2 jobs x (off, sweep, fifo) */
	assert_non_null(strstr(ja, "\"version\": 1"));
	assert_non_null(strstr(ja, "\"job\": \"mix\""));
	assert_non_null(strstr(ja, "\"policy\": \"fifo\""));
	size_t runs = 0;
	for (const char *p = ja; (p = strstr(p, "\"shaping\"")); p++)
		runs++;
	assert_int_equal(runs, 6);
	/* the engine's DRAM on the 4 runs with shaping on, as deterministic
	 * as the rest; none off */
	size_t mem = 0, none = 0;
	for (const char *p = ja; (p = strstr(p, "\"engine_full_scale_bytes\": ")); p++)
		mem++;
	for (const char *p = ja; (p = strstr(p, "\"memory\": null")); p++)
		none++;
	assert_int_equal(mem, 4);
	assert_int_equal(none, 2);
	free(ja);
	free(jb);
	free(jc);
	unlink(a);
	unlink(b);
	unlink(c);
}

static struct qs_bench_world *tiny_world(void)
{
	struct qs_bench_conf conf;
	qs_bench_conf_default(&conf);
	conf.profile = qlc_path;
	conf.fast = fast_path;
	conf.cache_bytes = 16u << 20;
	struct qs_bench_world *w;
	char err[512];
	int rc = qs_bench_world_new(&conf, &w, err, sizeof(err));
	if (!rc)
		rc = qs_bench_world_fill(w, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	/* 1 GB drive, model of 2^n IUs just below: the log scales with it */
	assert_true(qs_bench_world_sizes(w)->log_bytes >= (15u << 20));
	assert_true(qs_bench_world_sizes(w)->log_bytes <= (16u << 20));
	return w;
}

/*
 * Shaping on: every write the engine sends the QLC is whole aligned IUs,
 * seen both in the engine's count and by the drive model, which counts any
 * partial IU it receives. Shaping off on the same job does send partial
 * IUs, so both checks can fail. (Throughput is not checked: on this tiny
 * drive the log is 6% of the span and nearly every destaged IU carries one
 * dirty block, so shaping gains little here; figures are the bench's job.)
 */
static void test_whole_ius(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512];
	assert_int_equal(qs_job_file_load(job_path, qs_bench_world_sizes(w)->capacity, &jf, err,
					  sizeof(err)), 0);
	const struct qs_job *job = &jf->jobs[0];
	struct qs_bench_result on, off;
	for (int ord = QS_ORDER_FIFO; ord <= QS_ORDER_FULLEST; ord++) {
		struct qs_bench_variant v = {.shaping = true, .order = ord};
		assert_int_equal(qs_bench_run_job(w, job, &v, 1, &on, err, sizeof(err)), 0);
		assert_true(on.eng.qlc_writes > 0);
		assert_int_equal(on.eng.qlc_iu_whole_writes, on.eng.qlc_writes);
		assert_true(on.qlc.host_write_bytes > 0);
		assert_int_equal(on.qlc.partial_ius, 0);
		assert_int_equal(on.qlc.rmw, 0);
		assert_int_equal(on.qlc.host_write_bytes % 65536, 0);
		assert_true(on.rep.qlc.waf_iu < 1.01);
		assert_true(on.rep.fast_write_bytes > 0);
		/* the engine's DRAM when the window closed, in place: no
		 * structure of log placement's */
		assert_memory_equal(&on.rep.mem, &on.eng.mem, sizeof(on.rep.mem));
		assert_true(on.rep.mem.index > 0 && on.rep.mem.other > 0);
		assert_int_equal(on.rep.mem.qlc_blocks + on.rep.mem.map_pages, 0);
		assert_true(on.rep.mem_scale == qs_bench_world_scale(w));
	}
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, job, &v, 1, &off, err, sizeof(err)), 0);
	assert_true(off.qlc.partial_ius > 0);
	assert_true(off.eng.qlc_iu_whole_writes < off.eng.qlc_writes);
	assert_true(off.rep.qlc.waf_iu > 8);
	assert_int_equal(off.rep.fast_write_bytes, 0);
	assert_int_equal(off.rep.mem.total, 0); /* no cache: not reported */
	qs_job_file_free(jf);
	qs_bench_world_free(w);
}

/*
 * --bypass-min and --pace-pct reach the engine: 64 KiB random writes with
 * bypass_min = 64 KiB skip the log (the fast tier gets INVAL records only,
 * the QLC every client byte, none of it destaged); with pace_pct = 0 nothing
 * is paced. Without them, the engine's defaults: every write logged.
 */
static void test_engine_settings(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512], path[64];
	ttmp_file(path, sizeof(path), "br", ".fio",
		  "[w]\nrw=randwrite\nbs=64k\nsize=25%\niodepth=16\nruntime=60ms\ntime_based=1\n");
	assert_int_equal(qs_job_file_load(path, qs_bench_world_sizes(w)->capacity, &jf, err,
					  sizeof(err)), 0);
	struct qs_bench_result by, logged;
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO, .set_bypass = true,
				     .bypass_min_bytes = 65536, .set_pace = true, .pace_pct = 0};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &by, err, sizeof(err)), 0);
	assert_true(by.eng.bypass_writes > 0);
	assert_int_equal(by.eng.bypass_bytes, by.eng.client_write_bytes);
	assert_int_equal(by.eng.destage_ius, 0);
	assert_int_equal(by.eng.paced_writes, 0);
	assert_true(by.rep.fast_write_bytes < by.eng.client_write_bytes / 8);
	struct qs_bench_variant d = {.shaping = true, .order = QS_ORDER_FIFO};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &d, 1, &logged, err, sizeof(err)), 0);
	assert_int_equal(logged.eng.bypass_writes, 0);
	/* all but the writes still in flight when the window closed */
	assert_true(logged.rep.fast_write_bytes > logged.eng.client_write_bytes / 10 * 9);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(path);
}

/*
 * Log placement in the bench: the same job through the engine with
 * placement = log sends the drive only whole IUs, none of them read-filled,
 * destages, and reports its placement; the drive (the model) sees no
 * partial IU. The fast tier grows by the map region, so the log is the
 * same size as in place.
 */
static void test_log_placement(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512];
	struct qs_engine_conf lc;
	qs_bench_world_log_conf(w, &lc);
	assert_int_equal(lc.placement, QS_PLACE_LOG);
	assert_int_equal(lc.op_pct, 20);
	assert_true(lc.band_bytes >= 2 * 65536 && lc.band_bytes % 65536 == 0);
	uint64_t cap = qs_engine_conf_client_size(&lc, qs_bench_world_sizes(w)->capacity);
	assert_true(cap > 0 && cap < qs_bench_world_sizes(w)->capacity);
	assert_int_equal(qs_job_file_load(job_path, cap, &jf, err, sizeof(err)), 0);
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO,
				     .placement = QS_PLACE_LOG};
	int rc = qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_true(r.eng.destage_ius > 0);
	assert_int_equal(r.eng.qlc_iu_whole_writes, r.eng.qlc_writes);
	assert_int_equal(r.eng.read_fill_bytes, 0);
	assert_int_equal(r.qlc.partial_ius, 0);
	assert_string_equal(r.rep.placement, "log");
	assert_true(r.eng.bands > 4);
	/* its DRAM by part, the parts and the rest summing to the total; at
	 * full scale the same engine planned over the real drive */
	const struct qs_engine_mem *m = &r.rep.mem;
	assert_true(m->qlc_blocks > 0 && m->map_pages > 0 && m->map_meta > 0 && m->bands > 0);
	assert_int_equal(m->index + m->dirty + m->map_pages + m->map_meta + m->qlc_blocks +
			 m->bands + m->other, m->total);
	double scale = qs_bench_world_scale(w);
	assert_true(scale > 1);
	struct qs_engine_mem f;
	assert_true(qs_report_mem_full_parts(&r.rep, &f));
	assert_int_equal(f.total, qs_report_mem_full_scale(&r.rep));
	assert_int_equal(f.index + f.dirty + f.map_pages + f.map_meta + f.qlc_blocks + f.bands +
			 f.other, f.total);
	/* per QLC block: a bit for each of the real drive's blocks in bands */
	const struct qs_engine_conf *c = &r.rep.mem_conf;
	uint64_t qlc = (uint64_t)((double)r.rep.mem_qlc * scale) / c->band_bytes * c->band_bytes;
	uint64_t phys = qlc / 4096;
	assert_true(f.qlc_blocks >= phys / 8 && f.qlc_blocks < phys / 8 + 4096);
	/* the log index: the real log's blocks, 12-byte slots at 80% */
	double idx = (double)m->index * scale;
	assert_true(fabs((double)f.index - idx) < idx * 0.01);
	/* and not less than the linear rule gives (widths only grow) */
	assert_true((double)f.total >= (double)m->other + (double)(m->total - m->other) * scale * 0.99);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
}

/*
 * --recovery: a run in each placement ends in a power cut with the engine's
 * own I/O in flight; the engine recovers from the fast tier (it would fail
 * the run otherwise), finds the log it left, is closed and opens again; the
 * window's figures are those of the same run without the cut.
 */
static void test_recovery(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512];
	struct qs_engine_conf lc;
	qs_bench_world_log_conf(w, &lc);
	uint64_t cap = qs_engine_conf_client_size(&lc, qs_bench_world_sizes(w)->capacity);
	assert_int_equal(qs_job_file_load(job_path, cap, &jf, err, sizeof(err)), 0);
	for (int pl = 0; pl < 2; pl++) {
		struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO,
					     .placement = pl ? QS_PLACE_LOG : QS_PLACE_INPLACE};
		struct qs_bench_result plain, r;
		assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &plain, err,
						  sizeof(err)), 0);
		assert_false(plain.rec.measured);
		v.recovery = true;
		int rc = qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err));
		if (rc)
			fprintf(stderr, "%s\n", err);
		assert_int_equal(rc, 0);
		assert_true(r.rec.measured);
		assert_true(r.rec.log_used_bytes > 0 && r.rec.cached_blocks > 0);
		assert_true(r.rec.dirty_ns > 0 && r.rec.clean_ns > 0);
		assert_true((r.rec.map_region_bytes > 0) == (pl == 1));
		assert_int_equal(r.eng.client_write_bytes, plain.eng.client_write_bytes);
		assert_int_equal(r.eng.qlc_write_bytes, plain.eng.qlc_write_bytes);
	}
	qs_job_file_free(jf);
	qs_bench_world_free(w);
}

/*
 * Jobs without stonewall run together on one drive (fio's rule): both jobs
 * of the file in one group share the engine, so with the same window their
 * drive-wide figures are the same, each has its own client figures, and
 * shaping on still sends only whole IUs.
 */
static void test_group(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512];
	assert_int_equal(qs_job_file_load(job_path, qs_bench_world_sizes(w)->capacity, &jf, err,
					  sizeof(err)), 0);
	assert_int_equal(jf->njobs, 2);
	assert_false(jf->jobs[1].stonewall);
	struct qs_bench_result g[2], alone;
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_SWEEP};
	assert_int_equal(qs_bench_run_group(w, jf->jobs, 2, &v, 1, g, err, sizeof(err)), 0);
	assert_int_equal(g[0].window_ns, g[1].window_ns);
	assert_memory_equal(&g[0].qlc, &g[1].qlc, sizeof(g[0].qlc));
	assert_int_equal(g[0].eng.qlc_iu_whole_writes, g[0].eng.qlc_writes);
	assert_int_equal(g[0].qlc.partial_ius, 0);
	assert_true(g[0].rep.write.iops > 0 && g[0].rep.read.iops == 0);
	assert_true(g[1].rep.write.iops > 0 && g[1].rep.read.iops > 0);
	/* the engine saw both jobs' writes: more than the 4K job's alone */
	assert_true(g[0].eng.client_write_bytes >
		    (uint64_t)(g[0].rep.write.bw_bytes * (double)g[0].window_ns / 1e9) + 4096);
	/* and the mix job alone is a different run */
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[1], &v, 1, &alone, err, sizeof(err)), 0);
	assert_true(alone.eng.client_write_bytes != g[1].eng.client_write_bytes);
	assert_int_equal(alone.eng.qlc_iu_whole_writes, alone.eng.qlc_writes);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
}

/* text as a job file in a new temporary file (its name into path, which
 * the caller unlinks), loaded for w's capacity; fails the test if refused. */
static struct qs_job_file *load_job_text(const struct qs_bench_world *w, const char *text,
					 char *path, size_t len)
{
	struct qs_job_file *jf = NULL;
	char err[512];
	ttmp_file(path, len, "br", ".fio", text);
	int rc = qs_job_file_load(path, qs_bench_world_sizes(w)->capacity, &jf, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	return jf;
}

/* Run the first n jobs of jf one at a time, shaping off, into r; an error
 * fails the test. */
static void run_off(struct qs_bench_world *w, const struct qs_job_file *jf, size_t n,
		    struct qs_bench_result *r)
{
	char err[512];
	struct qs_bench_variant v = {.shaping = false};
	for (size_t i = 0; i < n; i++)
		if (qs_bench_run_job(w, &jf->jobs[i], &v, 1, &r[i], err, sizeof(err)))
			fail_msg("%s", err);
}

/*
 * fio's reporting groups: [b] (group_reporting, same group as [a]) is
 * summed into [a]'s entry, [c] (new_group) is a group of its own whose
 * three clones are one entry. fio's own entries (qs_bench_run_group_fio)
 * split [a]'s clones, which have no group_reporting, and sum [b] into the
 * last of them (fio's rule); either way the I/Os add up, and every
 * latency has its N, zero submission latencies on the simulator's clock
 * and ordered percentiles.
 */
static void test_group_reporting(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	char path[64];
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nsize=10%\niodepth=4\nruntime=30ms\ntime_based\nrw=randwrite\n"
		"[a]\nnumjobs=2\n[b]\ngroup_reporting\n"
		"[c]\nnew_group\ngroup_reporting\nrw=randread\nnumjobs=3\n"
		"unified_rw_reporting=both\n", path, sizeof(path));
	struct qs_bench_result g[3];
	struct qs_report_run fio[6];
	size_t nfio = 99;
	char err[512];
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO};
	assert_int_equal(qs_bench_run_group_fio(w, jf->jobs, 3, &v, 1, g, fio, &nfio, err,
						sizeof(err)), 0);
	assert_int_equal(g[0].rep.members, 2);
	assert_int_equal(g[1].rep.members, 0);
	assert_string_equal(g[1].rep.job, "b");
	assert_int_equal(g[2].rep.members, 1);
	assert_int_equal(g[2].rep.groupid, 1);
	assert_int_equal(g[2].rep.unified, QS_UNIFIED_BOTH);
	assert_int_equal(nfio, 3); /* a.0 | a.1 + b | c.0 + c.1 + c.2 */
	const struct qs_report_fdir *ab = &g[0].rep.fio[QS_DDIR_WRITE];
	assert_true(fio[0].fio[QS_DDIR_WRITE].total_ios > 0);
	assert_int_equal(fio[0].fio[QS_DDIR_WRITE].total_ios +
			 fio[1].fio[QS_DDIR_WRITE].total_ios, ab->total_ios);
	assert_int_equal(fio[0].fio[QS_DDIR_WRITE].io_bytes +
			 fio[1].fio[QS_DDIR_WRITE].io_bytes, ab->io_bytes);
	assert_int_equal(fio[2].fio[QS_DDIR_READ].total_ios,
			 g[2].rep.fio[QS_DDIR_READ].total_ios);
	assert_string_equal(fio[1].job, "a");
	assert_string_equal(fio[2].job, "c");
	/* the entry's IOPS are its jobs' I/Os together over the longest of
	 * their windows (fio's runtime of a group) */
	assert_true(g[0].rep.write.iops ==
		    (double)ab->total_ios / ((double)g[0].rep.runtime_ns / 1e9));
	for (size_t e = 0; e < nfio; e++) {
		for (int d = 0; d < QS_DDIR_N; d++) {
			const struct qs_report_fdir *f = &fio[e].fio[d];
			const struct qs_report_lat *sl = &f->lat[QS_LAT_SUBMIT],
						   *cl = &f->lat[QS_LAT_COMPLETE],
						   *tl = &f->lat[QS_LAT_TOTAL];
			assert_int_equal(tl->n, f->total_ios);
			assert_int_equal(sl->n, f->total_ios);
			assert_int_equal(sl->max, 0); /* the simulator submits in no time */
			assert_true(cl->mean == tl->mean && cl->max == tl->max);
			for (unsigned i = 1; i < QS_REPORT_NPCT; i++)
				assert_true(tl->pct[i - 1] <= tl->pct[i]);
			assert_true(!f->total_ios || (tl->min <= tl->pct[0] &&
						     tl->pct[QS_REPORT_NPCT - 1] <= tl->max));
		}
		const struct qs_report_fdir *m = &fio[e].fio_mixed;
		assert_int_equal(m->total_ios, fio[e].fio[0].total_ios + fio[e].fio[1].total_ios +
						       fio[e].fio[2].total_ios);
	}
	/* without fio's entries the bench's are the same */
	struct qs_bench_result h[3];
	assert_int_equal(qs_bench_run_group(w, jf->jobs, 3, &v, 1, h, err, sizeof(err)), 0);
	assert_int_equal(h[0].rep.fio[QS_DDIR_WRITE].total_ios, ab->total_ios);
	assert_int_equal(h[0].rep.members, 2);
	unlink(path);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
}

/*
 * fio's wait_for and startdelay: a 1 MiB sequential read that waits for a
 * random fill of its span starts when the fill's last clone is done, so no
 * drive write falls in its window (shaping off: every client write is a
 * drive write); without wait_for the two overlap; startdelay past the
 * fill's end does the same as wait_for.
 */
static void test_wait_for(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	static const char *const reads[] = {"wait_for=fill\n", "", "startdelay=10s\n"};
	for (int k = 0; k < 3; k++) {
		char job[64], text[512], err[512];
		snprintf(text, sizeof(text),
			 "[global]\nsize=5%%\niodepth=8\n[fill]\nrw=randwrite\nbs=4k\n"
			 "[read]\n%srw=read\nbs=1m\nruntime=20ms\ntime_based=1\n", reads[k]);
		struct qs_job_file *jf = load_job_text(w, text, job, sizeof(job));
		struct qs_bench_result g[2];
		struct qs_bench_variant v = {.shaping = false};
		assert_int_equal(qs_bench_run_group(w, jf->jobs, 2, &v, 1, g, err, sizeof(err)), 0);
		assert_true(g[1].rep.read.iops > 0);
		assert_int_equal(g[0].eng.client_write_bytes, jf->jobs[0].size);
		if (k == 1)
			assert_true(g[1].qlc.host_write_bytes > 0);
		else
			assert_int_equal(g[1].qlc.host_write_bytes, 0);
		qs_job_file_free(jf);
		unlink(job);
	}
	qs_bench_world_free(w);
}

/*
 * The life figure takes the profile's endurance rating, --rating-pbw
 * overrides it, and a profile without one projects no life. Same job and
 * seed, so the write rate is the same and the life scales with the rating.
 */
static double life_with(const char *qlc, double override_bytes, double *rating)
{
	struct qs_bench_conf conf;
	qs_bench_conf_default(&conf);
	conf.profile = qlc;
	conf.fast = fast_path;
	conf.cache_bytes = 16u << 20;
	conf.rating_bytes = override_bytes;
	struct qs_bench_world *w;
	char err[512];
	int rc = qs_bench_world_new(&conf, &w, err, sizeof(err));
	if (!rc)
		rc = qs_bench_world_fill(w, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	*rating = qs_bench_world_sizes(w)->rating_bytes;
	struct qs_job_file *jf;
	assert_int_equal(qs_job_file_load(job_path, qs_bench_world_sizes(w)->capacity, &jf, err,
					  sizeof(err)), 0);
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)), 0);
	assert_true(r.qlc.host_write_bytes > 0);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	return r.rep.qlc.life_years;
}

static void test_life_rating(void **state)
{
	(void)state;
	char rated[64];
	char text[1024];
	snprintf(text, sizeof(text), "%sendurance_pbw = 0.5\nendurance_rw = randwrite\n"
		 "endurance_bs_kib = 64\n", tprof_tiny_qlc);
	ttmp_file(rated, sizeof(rated), "br", ".ini", text);
	double r0, r1, r2;
	double none = life_with(qlc_path, 0, &r0);
	double prof = life_with(rated, 0, &r1);
	double over = life_with(rated, 1e15, &r2);
	assert_true(isnan(r0) && isnan(none));
	assert_true(r1 == 0.5e15 && r2 == 1e15);
	assert_true(prof > 0 && isfinite(prof));
	assert_true(fabs(over / prof - 2.0) < 1e-9);
	unlink(rated);
}

/* NAND bytes the drive programmed per byte written to it in r's window. */
static double drive_amp(const struct qs_bench_result *r)
{
	assert_true(r->qlc.host_write_bytes > 0);
	return (double)r->qlc.nand_prog_bytes / (double)r->qlc.host_write_bytes;
}

/*
 * The drive's state carries from group to group on a variant's drive: a
 * sequential write after random writes finds their garbage (its drive
 * programs more than it is sent, and the drive's clock goes on from where
 * the random writes left it); the same write on a fresh copy of the
 * filled drive (--fresh-drive) moves nothing.
 */
static void test_drive_carries(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	char path[64], err[512];
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nsize=100%\niodepth=16\ntime_based=1\nstonewall=1\nbs=64k\n"
		"[rw]\nrw=randwrite\nruntime=3s\n[sw]\nrw=write\nruntime=200ms\n",
		path, sizeof(path));
	struct qs_bench_variant v = {.shaping = false};
	struct qs_bench_drive *d;
	struct qs_bench_result rw, sw, fresh;
	assert_int_equal(qs_bench_drive_new(w, &d, err, sizeof(err)), 0);
	assert_int_equal(qs_bench_run_group_on(w, d, &jf->jobs[0], 1, &v, 1, &rw, NULL, NULL, err,
					       sizeof(err)), 0);
	assert_int_equal(qs_bench_run_group_on(w, d, &jf->jobs[1], 1, &v, 1, &sw, NULL, NULL, err,
					       sizeof(err)), 0);
	assert_int_equal(qs_bench_run_group_fio(w, &jf->jobs[1], 1, &v, 1, &fresh, NULL, NULL, err,
						sizeof(err)), 0);
	assert_true(drive_amp(&rw) > 1.2); /* the random writes reached GC */
	assert_true(drive_amp(&sw) > 1.05);
	assert_true(drive_amp(&fresh) < 1.01);
	assert_true(sw.rep.write.bw_bytes < fresh.rep.write.bw_bytes);
	qs_bench_drive_free(d);
	qs_job_file_free(jf);
	unlink(path);
	qs_bench_world_free(w);
}

/* Log placement, fifo: the variant of the two tests below. */
static const struct qs_bench_variant log_fifo = {.shaping = true, .order = QS_ORDER_FIFO,
						 .placement = QS_PLACE_LOG};

/*
 * A job file of two groups, text with %llu for a part of the client size
 * log placement leaves (1/div), loaded into *jf (path, the caller's to
 * unlink); runs both on one drive in log_fifo into r[0] and r[1] and
 * leaves the drive freed.
 */
static void log_two_groups(struct qs_bench_world *w, const char *text, uint64_t div, char *path,
			   size_t n, struct qs_job_file **jf, struct qs_bench_result r[2])
{
	char err[512], job[512];
	struct qs_engine_conf lc;
	qs_bench_world_log_conf(w, &lc);
	uint64_t cap = qs_engine_conf_client_size(&lc, qs_bench_world_sizes(w)->capacity);
	snprintf(job, sizeof(job), text, (unsigned long long)(cap / div));
	ttmp_file(path, n, "br", ".fio", job);
	assert_int_equal(qs_job_file_load(path, cap, jf, err, sizeof(err)), 0);
	struct qs_bench_drive *d;
	assert_int_equal(qs_bench_drive_new(w, &d, err, sizeof(err)), 0);
	for (int g = 0; g < 2; g++)
		assert_int_equal(qs_bench_run_group_on(w, d, &(*jf)->jobs[g], 1, &log_fifo, 1, &r[g],
						       NULL, NULL, err, sizeof(err)), 0);
	qs_bench_drive_free(d);
}

/*
 * The engine carries too: with log placement, reads in the group after the
 * writes find the writes' map and go to the QLC where destage put the
 * blocks (a freshly formatted engine would read them all as never written,
 * without a device). The same reads on a fresh engine end all the same
 * (each I/O takes at least the host's 1 us on the virtual clock: before,
 * a job of such reads ran for ever at one instant), with no QLC read.
 */
static void test_engine_carries(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	char path[64], err[512];
	struct qs_job_file *jf;
	struct qs_bench_result r[2], fresh;
	log_two_groups(w, "[global]\nsize=%llu\niodepth=16\nstonewall=1\n"
		       "[fill]\nrw=write\nbs=1m\n[rr]\nrw=randread\nbs=4k\ntime_based=1\n"
		       "runtime=100ms\n", 4, path, sizeof(path), &jf, r);
	assert_true(r[0].eng.destage_ius > 0);
	assert_true(r[1].rep.read.iops > 0);
	/* most blocks read were destaged to the QLC, the rest are in the log */
	assert_true(r[1].eng.qlc_reads > r[1].eng.client_reads / 2);
	assert_true(r[1].qlc.host_read_bytes > 0);
	assert_int_equal(qs_bench_run_group_fio(w, &jf->jobs[1], 1, &log_fifo, 1, &fresh, NULL,
						NULL, err, sizeof(err)), 0);
	assert_int_equal(fresh.eng.qlc_reads, 0);
	assert_true(fresh.eng.client_reads > 0);
	assert_true(fresh.rep.read.lat_p50_ns >= 1000);
	qs_job_file_free(jf);
	unlink(path);
	qs_bench_world_free(w);
}

/*
 * Pacing engages with log placement too. Data meets its limit there well
 * below the whole log (the map records' reserve comes off it), so a band
 * at pace_pct of the whole log was never reached: with 4K random writes
 * over the whole client size no write was paced and those that met the
 * limit waited for room, one in a thousand 45 ms on the P5316 model.
 */
static void test_log_placement_paces(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	char path[64];
	struct qs_job_file *jf;
	struct qs_bench_result r[2];
	log_two_groups(w, "[global]\nsize=%llu\niodepth=32\nstonewall=1\n[fill]\nrw=write\n"
		       "bs=1m\n[w]\nrw=randwrite\nbs=4k\ntime_based=1\nramp_time=2s\n"
		       "runtime=2s\n", 1, path, sizeof(path), &jf, r);
	fprintf(stderr, "log placement, 4K random writes: %llu writes, %llu paced, %llu "
		"throttled, p99.9 %.2f ms\n", (unsigned long long)r[1].eng.client_writes,
		(unsigned long long)r[1].eng.paced_writes,
		(unsigned long long)r[1].eng.throttled_writes,
		(double)r[1].rep.write.lat_p999_ns / 1e6);
	assert_true(r[1].eng.gc_victims > 0);
	assert_true(r[1].eng.paced_writes > 0);
	qs_job_file_free(jf);
	unlink(path);
	qs_bench_world_free(w);
}

/* The curve writes a line chart and one JSON run per point. */
static void test_curve(void **state)
{
	(void)state;
	char job[64], svg[64], json[64];
	ttmp_file(job, sizeof(job), "br", ".fio",
		  "[w]\nrw=randwrite\nbs=64k\nsize=10%\niodepth=4\nruntime=10m\nramp_time=1h\n");
	ttmp_file(svg, sizeof(svg), "br", ".svg", "");
	ttmp_file(json, sizeof(json), "br", ".json", "");
	char *argv[] = {"curve", job, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
			"--shaping", "off", "--quiet", "--svg", svg, "--json", json,
			"--runtime", "20ms", "--ramp-time", "0", NULL};
	assert_int_equal(qs_cmd_bench_curve((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv), 0);
	size_t n;
	char *s = slurp(svg, &n);
	assert_non_null(strstr(s, "<svg"));
	assert_non_null(strstr(s, "polyline"));
	free(s);
	s = slurp(json, &n);
	assert_non_null(strstr(s, "\"job\": \"w@max\""));
	assert_non_null(strstr(s, "\"job\": \"w@120%\""));
	free(s);
	unlink(job);
	unlink(svg);
	unlink(json);
}

/* Issue 12: the run command applies --runtime through qs_job_file_override,
 * so a job's hour-long ramp is cut to --runtime with a warning on stderr
 * (it ran for the whole ramp before). */
static void test_runtime_bounds_ramp(void **state)
{
	(void)state;
	char job[64];
	ttmp_file(job, sizeof(job), "br", ".fio",
		  "[w]\nrw=randwrite\nbs=64k\nsize=10%\niodepth=4\nruntime=10m\nramp_time=1h\n");
	char *argv[] = {"run", job, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
			"--shaping", "off", "--quiet", "--runtime", "20ms", NULL};
	char *s;
	assert_int_equal(run_stderr(argv, &s), 0);
	assert_non_null(strstr(s, "key 'ramp_time' value 3600 s is longer than --runtime 0.02 s"));
	free(s);
	unlink(job);
}

/*
 * Issue 13: the options of a real engine or host a job file sets are listed
 * once per run; in --mode dev (here over two sparse files) a job asking
 * for buffered I/O is refused, naming the file and line, before any I/O.
 */
static void test_fio_host_options(void **state)
{
	(void)state;
	char job[64];
	ttmp_file(job, sizeof(job), "br", ".fio",
		  "[global]\nioengine=libaio\nthread\ndirect=0\n[w]\nrw=randwrite\n"
		  "size=10%\nfilename=/dev/nvme0n1\n[r]\nrw=randread\nsize=10%\n"
		  "write_lat_log=lat\n");
	char *argv[] = {"run", job, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
			"--shaping", "off", "--quiet", "--runtime", "5ms", NULL};
	char *s;
	assert_int_equal(run_stderr(argv, &s), 0);
	/* one note per job, each naming what it inherits and what it sets */
	const char *note = strstr(s, "[w] ignored in simulation: ioengine, thread, direct, "
				     "filename\n");
	assert_non_null(note);
	note = strstr(note, "[r] ignored in simulation: ioengine, thread, direct, "
			    "write_lat_log\n");
	assert_non_null(note);
	assert_null(strstr(note + 5, "ignored in simulation")); /* once per job */
	free(s);

	char qlc[64], fast[64];
	ttmp_file(qlc, sizeof(qlc), "br", ".img", "");
	ttmp_file(fast, sizeof(fast), "br", ".img", "");
	assert_int_equal(truncate(qlc, 2ll << 30), 0);
	assert_int_equal(truncate(fast, 256ll << 20), 0);
	char *dev[] = {"run", job, "--mode", "dev", "--qlc-dev", qlc, "--fast-dev", fast,
		       "--yes-overwrite", "--shaping", "off", "--quiet", "--runtime", "5ms", NULL};
	assert_int_equal(run_stderr(dev, &s), 2);
	char want[128];
	snprintf(want, sizeof(want), "%s:4: [w] buffered I/O (direct=0 or buffered=1)", job);
	if (!strstr(s, want))
		fail_msg("stderr '%s' lacks '%s'", s, want);
	assert_non_null(strstr(s, "O_DIRECT"));
	free(s);
	unlink(qlc);
	unlink(fast);
	unlink(job);
}

/*
 * Issue 13: a bad trace is refused before the drive is filled, naming the
 * job file's line and the trace's (it used to fail in the first run); a
 * libCacheSim CSV, which auto-detection took for MSR, runs.
 */
static void test_trace_checked_first(void **state)
{
	(void)state;
	char trace[64], job[64], jtext[256], want[400];
	ttmp_file(trace, sizeof(trace), "br", ".csv", "version,time,op,size,lbn,extra\n");
	snprintf(jtext, sizeof(jtext), "[t]\ntrace=%s\niodepth=4\n", trace);
	ttmp_file(job, sizeof(job), "br", ".fio", jtext);
	char *argv[] = {"run", job, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
			"--quiet", "--shaping", "off", NULL};
	char *err = NULL;
	assert_int_equal(run_stderr(argv, &err), 2);
	snprintf(want, sizeof(want), "qlcshape bench run: %s:2: [t] key 'trace' value '%s': "
		 "%s:1: trace format not recognised", job, trace, trace);
	if (!strstr(err, want))
		fail_msg("stderr '%s' lacks '%s'", err, want);
	free(err);
	ttmp_write(trace, "version,time,op,size,lbn\n1,0,2a,4096,8\n1,0,28,8192,64\n"
			  "1,1,2a,512,7\n");
	assert_int_equal(run_stderr(argv, &err), 0);
	free(err);
	unlink(job);
	unlink(trace);
}

/*
 * Issue 11: a trace whose writes are not 4 KiB aligned. Client bytes are
 * what the trace asked for, rounding is counted on its own, and WAF host
 * divides by the client's bytes: shaping off sends the drive exactly the
 * client's bytes plus the rounding.
 */
static void test_rounding(void **state)
{
	(void)state;
	char trace[64], job[64], jtext[256];
	/* MQSim: time ns, device, lba (512-byte sectors), sectors, 0 = write:
	 * 512 B at sector 1 (4 KiB sent), 4 KiB at sector 4 (8 KiB sent),
	 * 8 KiB aligned (8 KiB sent), a read (not a write: not counted) */
	ttmp_file(trace, sizeof(trace), "br", ".trace",
		  "0 0 1 1 0\n1000 0 4 8 0\n2000 0 64 16 0\n3000 0 128 8 1\n");
	snprintf(jtext, sizeof(jtext), "[t]\ntrace=%s\ntrace_format=mqsim\niodepth=4\n", trace);
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w, jtext, job, sizeof(job));
	char err[512];
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)), 0);
	assert_int_equal(r.rep.client_write_bytes, 512 + 4096 + 8192);
	assert_int_equal(r.rep.round_write_bytes, 3584 + 4096);
	assert_int_equal(r.rep.qlc.write_bytes, 4096 + 8192 + 8192);
	assert_true(fabs(r.rep.qlc.waf_host - 20480.0 / 12800.0) < 1e-9);
	assert_true(fabs(qs_report_round_share(&r.rep) - 100.0 * 7680 / 12800) < 1e-9);
	assert_int_equal(r.rep.dirty_end_bytes, 0); /* no log */
	/* shaping on: the same rounding; the four blocks written (0, 0-1, 8-9)
	 * are still in the log, or destaged, when this short window closes */
	v.shaping = true;
	v.order = QS_ORDER_FIFO;
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)), 0);
	assert_int_equal(r.rep.client_write_bytes, 12800);
	assert_int_equal(r.rep.round_write_bytes, 7680);
	assert_int_equal(r.rep.dirty_start_bytes, 0);
	assert_int_equal(r.rep.dirty_end_bytes, r.eng.cached_blocks * 4096);
	assert_int_equal(r.rep.dirty_end_bytes + r.eng.destage_bytes, 4 * 4096);
	assert_true(qs_report_dirty_share(&r.rep) >= QS_REPORT_DIRTY_NOTE_PCT);
	assert_true(fabs(qs_report_dirty_growth(&r.rep) - qs_report_dirty_share(&r.rep)) < 1e-9);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
	unlink(trace);
}

/*
 * Issue 11: fio's steady-state detection in the driver. Random reads settle
 * at once: with iops:5% over 20 ms of 5 ms samples the job ends steady
 * soon after its 20 ms steadystate_ramp_time plus the duration, well before
 * its runtime, but not before its ramp_time; a limit nothing can be below
 * (iops:0) runs the whole runtime and reports "not steady".
 */
static void test_steadystate_run(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nrw=randread\nbs=4k\nsize=25%\niodepth=8\nruntime=1s\n"
		"time_based=1\nss_dur=20ms\nss_interval=5ms\nss_ramp=20ms\n"
		"[steady]\nss=iops:5%\n[ramped]\nss=iops:5%\nramp_time=100ms\n"
		"[never]\nss=iops:0\nruntime=100ms\n",
		job, sizeof(job));
	char err[512];
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)), 0);
	assert_string_equal(r.rep.ss.criterion, "iops");
	assert_true(r.rep.ss.reached);
	assert_true(r.rep.ss.at_s >= 0.04 - 1e-9 && r.rep.ss.at_s < 0.1);
	assert_true(r.rep.ss.last < 5);
	assert_true(r.window_ns < 100000000ull); /* ended steady, not at 1 s */
	assert_true(r.rep.read.iops > 0);
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[1], &v, 1, &r, err, sizeof(err)), 0);
	assert_true(r.rep.ss.reached);
	assert_true(r.rep.ss.at_s >= 0.1 - 1e-9 && r.rep.ss.at_s < 0.2);
	assert_true(r.window_ns > 0 && r.window_ns < 100000000ull);
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[2], &v, 1, &r, err, sizeof(err)), 0);
	assert_false(r.rep.ss.reached);
	assert_true(isnan(r.rep.ss.at_s));
	assert_true(r.rep.ss.last >= 0);
	assert_int_equal(r.window_ns, 100000000ull); /* the whole runtime */
	/* the report says so */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_table(f, &r.rep, 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "not steady"));
	assert_non_null(strstr(buf, "steady state: iops below 0 over 0.02 s"));
	free(buf);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/* Issue 11: the life at a job's rate_iops uses the client write rate it
 * asks for: every clone's rate, the writes' share of the mix, bs each. */
static void test_rated_write_rate(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[m]\nrw=randrw\nrwmixread=70\nbs=8k\nnumjobs=2\nrate_iops=1000\n"
		"size=10%\nruntime=20ms\ntime_based=1\n[r]\nrw=randread\nrate_iops=1000\n"
		"size=10%\nruntime=20ms\ntime_based=1\n",
		job, sizeof(job));
	char err[512];
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)), 0);
	assert_true(fabs(r.rep.rated_write_bytes_per_s - 1000.0 * 2 * 0.3 * 8192) < 1e-6);
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[1], &v, 1, &r, err, sizeof(err)), 0);
	assert_true(r.rep.rated_write_bytes_per_s == 0); /* reads only: no write rate */
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 33, fio's sync family through the engine: fsync=4 with end_fsync
 * sends the engine a flush after every 4th write and one at the end
 * (client_flushes), shaping off and on; sync=1 and a job without the
 * family send none (sync's writes carry FUA instead: test_workload checks
 * the stream, drive.c passes it on as QS_WRITE_FUA; the test profiles have
 * no volatile cache, so FUA costs nothing here).
 */
static void test_sync_family_run(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[f]\nrw=randwrite\nsize=10%\nnumber_ios=200\nfsync=4\nend_fsync=1\n"
		"[s]\nrw=randwrite\nsize=10%\nnumber_ios=200\nsync=1\n"
		"[n]\nrw=randwrite\nsize=10%\nnumber_ios=200\n",
		job, sizeof(job));
	char err[512];
	struct qs_bench_result r, rs, rn;
	for (int on = 0; on < 2; on++) {
		struct qs_bench_variant v = {.shaping = on};
		if (qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(r.eng.client_writes, 200);
		assert_int_equal(r.eng.client_flushes, 200 / 4 + 1);
		if (qs_bench_run_job(w, &jf->jobs[1], &v, 1, &rs, err, sizeof(err)) ||
		    qs_bench_run_job(w, &jf->jobs[2], &v, 1, &rn, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(rs.eng.client_flushes, 0);
		assert_int_equal(rn.eng.client_flushes, 0);
		assert_int_equal(rs.eng.client_writes, 200);
	}
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/* Issue 33: percentile_list sets the percentiles of fio's figures (sorted,
 * as fio does), for every latency of the job; without it fio's 17. */
static void test_percentile_list(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[p]\nrw=randwrite\nsize=10%\nnumber_ios=300\npercentile_list=99.9:50:10\n"
		"[d]\nrw=randwrite\nsize=10%\nnumber_ios=300\n",
		job, sizeof(job));
	char err[512];
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	if (qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)))
		fail_msg("%s", err);
	const struct qs_report_lat *l = &r.rep.fio[QS_DDIR_WRITE].lat[QS_LAT_COMPLETE];
	assert_int_equal(l->n, 300);
	assert_int_equal(l->npct, 3);
	assert_true(l->at[0] == 10 && l->at[1] == 50 && l->at[2] == 99.9);
	assert_true(l->pct[0] <= l->pct[1] && l->pct[1] <= l->pct[2] && l->pct[2] <= l->max);
	assert_int_equal(r.rep.fio[QS_DDIR_WRITE].lat[QS_LAT_TOTAL].npct, 3);
	if (qs_bench_run_job(w, &jf->jobs[1], &v, 1, &r, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(r.rep.fio[QS_DDIR_WRITE].lat[QS_LAT_COMPLETE].npct, QS_REPORT_NPCT);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 33: max_latency ends the job at its first I/O of the window above
 * it, with fio's error (ETIMEDOUT, in the report and fio's JSON), and the
 * table says so; a bound no I/O reaches changes nothing. Shaping off,
 * random 4k writes take milliseconds on the QLC model.
 */
static void test_max_latency(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nrw=randwrite\nsize=10%\niodepth=4\nruntime=50ms\ntime_based\n"
		"[low]\nmax_latency=500us\n[high]\nmax_latency=1h\n[none]\n",
		job, sizeof(job));
	struct qs_bench_result r[3];
	run_off(w, jf, 3, r);
	assert_int_equal(r[0].rep.error, ETIMEDOUT);
	assert_true(r[0].rep.over_lat_ns > 500000);
	assert_int_equal(r[0].rep.max_lat_ns, 500000);
	assert_true(r[0].window_ns < r[2].window_ns / 2); /* ended early */
	assert_int_equal(r[1].rep.error, 0);
	assert_int_equal(r[2].rep.error, 0);
	assert_int_equal(r[1].window_ns, r[2].window_ns); /* the whole runtime */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_table(f, &r[0].rep, 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "(max_latency 500.0 us: with shaping off an I/O took "));
	assert_non_null(strstr(buf, "fio's error 110)"));
	free(buf);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 33: rate_min and rate_iops_min are checked over every rate_cycle
 * of the window but the first (fio's rule): a direction below ends the job
 * with fio's error (EIO) and a line under the table; a minimum the job
 * meets changes nothing.
 */
static void test_rate_min(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nrw=randwrite\nsize=10%\niodepth=4\nruntime=100ms\ntime_based\n"
		"rate_cycle=10\n[iops]\nrate_iops_min=10000000\n[bw]\nrate_min=,40g\n"
		"[met]\nrate_iops_min=1\nrate_min=1k\n",
		job, sizeof(job));
	struct qs_bench_result r[3];
	run_off(w, jf, 3, r);
	assert_int_equal(r[0].rep.error, EIO);
	assert_int_equal(r[1].rep.error, EIO);
	assert_int_equal(r[2].rep.error, 0);
	/* ended after the second cycle: the first only takes the counts */
	assert_true(r[0].window_ns >= 20000000 && r[0].window_ns < 30000000);
	assert_true(r[2].window_ns == 100000000);
	assert_non_null(strstr(r[0].rep.error_why, "rate_iops_min: with shaping off the writes "
						 "ran at "));
	assert_non_null(strstr(r[1].rep.error_why, "rate_min: with shaping off the writes ran "
						 "at "));
	assert_non_null(strstr(r[1].rep.error_why, "below 4.29497e+10: the job ended there, "
						 "fio's error 5"));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_table(f, &r[0].rep, 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "  (rate_iops_min: with shaping off"));
	free(buf);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 33: write_iolog logs the I/O a run issues as fio's iolog (version
 * 2), which the bench (and fio, with replay_redirect) replays: the same
 * reads, writes and flushes as the engine received.
 */
static void test_write_iolog(void **state)
{
	(void)state;
	char job[64], log[64], text[256];
	struct qs_bench_world *w = tiny_world();
	ttmp_file(log, sizeof(log), "br", ".iolog", "");
	snprintf(text, sizeof(text), "[w]\nrw=randrw\nsize=10%%\nnumber_ios=60\nfsync=7\n"
		 "write_iolog=%s\n[r]\nread_iolog=%s\n", log, log);
	struct qs_job_file *jf = load_job_text(w, text, job, sizeof(job));
	char err[512];
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = true};
	if (qs_bench_run_job(w, &jf->jobs[0], &v, 1, &r, err, sizeof(err)))
		fail_msg("%s", err);
	size_t len;
	char *s = slurp(log, &len);
	assert_true(!strncmp(s, "fio version 2 iolog\nqlc add\nqlc open\nqlc ", 41));
	assert_non_null(strstr(s, "\nqlc sync 0 0\n"));
	assert_true(len > 8 && !strcmp(s + len - 10, "qlc close\n"));
	free(s);
	struct qs_wl *wl;
	assert_int_equal(qs_wl_open(&jf->jobs[1], 0, 1, &wl, err, sizeof(err)), 0);
	uint64_t n[QS_IO_SYNC + 1] = {0};
	struct qs_io io;
	int rc;
	while ((rc = qs_wl_next(wl, &io)) == 1)
		n[io.op]++;
	assert_int_equal(rc, 0);
	qs_wl_close(wl);
	assert_int_equal(n[QS_IO_READ] + n[QS_IO_WRITE], 60);
	assert_int_equal(n[QS_IO_READ], r.eng.client_reads);
	assert_int_equal(n[QS_IO_WRITE], r.eng.client_writes);
	assert_int_equal(n[QS_IO_SYNC], r.eng.client_flushes);
	assert_int_equal(n[QS_IO_SYNC], n[QS_IO_WRITE] / 7);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
	unlink(log);
}

static int run_args(int argc, char **argv)
{
	return qs_cmd_bench_run(argc, argv);
}

static void test_arg_errors(void **state)
{
	(void)state;
	char *a1[] = {"run", NULL};
	assert_int_equal(run_args(1, a1), 2); /* no JOB */
	char *a2[] = {"run", job_path, "--shaping", "maybe", NULL};
	assert_int_equal(run_args(4, a2), 2);
	char *a3[] = {"run", job_path, "--policy", "lru", NULL};
	assert_int_equal(run_args(4, a3), 2);
	char *a4[] = {"run", job_path, "--mode", "emu", "--qlc-dev", "/tmp/x", NULL};
	assert_int_equal(run_args(6, a4), 2); /* devices are dev mode's */
	char *a5[] = {"run", job_path, "--mode", "fast", NULL};
	assert_int_equal(run_args(4, a5), 2);
	char *a6[] = {"run", job_path, "--cache", "lots", NULL};
	assert_int_equal(run_args(4, a6), 2);
	char *a7[] = {"run", job_path, "--seed", "-3", NULL};
	assert_int_equal(run_args(4, a7), 2);
	char *a8[] = {"run", job_path, "--profile", "/nonexistent/x.ini", "--quiet", NULL};
	assert_int_equal(run_args(5, a8), 1);
	char *a9[] = {"run", "/nonexistent/job.fio", "--profile", qlc_path, "--fast", fast_path,
		      "--cache", "16m", "--quiet", NULL};
	assert_int_not_equal(run_args(9, a9), 0);
	char *a10[] = {"run", job_path, job_path, NULL};
	assert_int_equal(run_args(3, a10), 2);
	char *a11[] = {"run", job_path, "--profile", qlc_path, "--fast", fast_path,
		       "--cache", "2m", "--quiet", NULL};
	assert_int_equal(run_args(9, a11), 1); /* log too small after scaling */
	char *a14[] = {"run", job_path, "--runtime", "0", NULL};
	assert_int_equal(run_args(4, a14), 2);
	char *a15[] = {"run", job_path, "--ramp-time", "soon", NULL};
	assert_int_equal(run_args(4, a15), 2);
	char *a16[] = {"run", job_path, "--workers", "0", NULL};
	assert_int_equal(run_args(4, a16), 2);
	char *a17[] = {"run", job_path, "--workers", "2x", NULL};
	assert_int_equal(run_args(4, a17), 2);
	char *a18[] = {"run", job_path, "--mode", "emu", "--workers", "2", NULL};
	assert_int_equal(run_args(6, a18), 2); /* real time runs go one at a time */
	/* --precondition is dev mode's (the models are always filled), seq or none */
	char *a18b[] = {"run", job_path, "--precondition", "seq", NULL};
	assert_int_equal(run_args(4, a18b), 2);
	char *a18c[] = {"run", job_path, "--mode", "dev", "--precondition", "random", NULL};
	assert_int_equal(run_args(6, a18c), 2);
	/* --recovery needs devices the bench can switch off and shaping on */
	char *a19[] = {"run", job_path, "--mode", "emu", "--recovery", NULL};
	assert_int_equal(run_args(5, a19), 2);
	char *a20[] = {"run", job_path, "--shaping", "off", "--recovery", NULL};
	assert_int_equal(run_args(5, a20), 2);
	char *a21[] = {"curve", job_path, "--recovery", NULL};
	assert_int_equal(qs_cmd_bench_curve(3, a21), 2);
	/* log placement that leaves GC no room is refused before any run */
	char *a22[] = {"run", job_path, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
		       "--placement", "log", "--band-size", "64g", "--quiet", NULL};
	assert_int_equal(run_args(13, a22), 2);
	/* engine settings: sizes and ranges; no bypass with log placement */
	char *a25[] = {"run", job_path, "--bypass-min", "2g", NULL};
	assert_int_equal(run_args(4, a25), 2);
	char *a26[] = {"run", job_path, "--pace-pct", "100", NULL};
	assert_int_equal(run_args(4, a26), 2);
	char *a27[] = {"run", job_path, "--placement", "log", "--bypass-min", "64k", NULL};
	assert_int_equal(run_args(6, a27), 2);
	char *a12[] = {"ab", "extra", NULL};
	assert_int_equal(qs_cmd_bench_ab(2, a12), 2);
	/* fio's --output-format: normal and json; json+ and terse refused
	 * saying why; curve writes no fio JSON; --output a file it can make */
	const char *const bad_formats[][2] = {{"xml", "allowed normal, json"},
					      {"json+", "bins"},
					      {"normal,terse", "terse"},
					      {",", "allowed"}};
	for (size_t i = 0; i < 4; i++) {
		char *af[] = {"run", job_path, "--output-format", (char *)bad_formats[i][0], NULL};
		char *e;
		assert_int_equal(run_stderr(af, &e), 2);
		if (!strstr(e, bad_formats[i][1]))
			fail_msg("--output-format %s: %s", bad_formats[i][0], e);
		free(e);
	}
	char *a23[] = {"curve", job_path, "--output-format", "json", NULL};
	assert_int_equal(qs_cmd_bench_curve(4, a23), 2);
	char *a24[] = {"run", job_path, "--output", "/nonexistent/dir/out.json", NULL};
	assert_int_equal(run_args(4, a24), 1);
	/* a bad job file: named key and line come from the loader */
	char bad[64];
	ttmp_file(bad, sizeof(bad), "br", ".fio", "[j]\nrw=sideways\n");
	char *a13[] = {"run", bad, "--profile", qlc_path, "--fast", fast_path, "--cache", "16m",
		       "--quiet", NULL};
	assert_int_equal(run_args(9, a13), 2);
	unlink(bad);
}

/*
 * fio's flow (flow.fio, butterfly.fio): weights 1 and 8 give the clones
 * I/O counts of about 1:8 (fio 3.33 on a file here: 3,319 writes and
 * 26,545 reads in 2 s), with and without flow_sleep; equal weights give
 * equal counts. Without flow the same jobs run at their own speeds.
 */
static void test_flow(void **state)
{
	(void)state;
	struct qs_bench_world *w = tiny_world();
	static const char *const texts[] = {
		"[global]\nsize=10%\niodepth=64\nruntime=40ms\ntime_based\nnorandommap\n"
		"bs=8k\nflow_sleep=100\n[w]\nrw=write\nflow=1\n[r]\nrw=randread\nflow=8\n",
		"[global]\nsize=10%\niodepth=64\nruntime=40ms\ntime_based\nnorandommap\n"
		"bs=8k\n[w]\nrw=write\nflow=1\n[r]\nrw=randread\nflow=8\n",
		"[global]\nsize=10%\nruntime=40ms\ntime_based\nbs=4k\n[f]\nrw=read\nflow=2\n"
		"[b]\nrw=read:-8k\nflow=2\n",
		"[global]\nsize=10%\niodepth=64\nruntime=40ms\ntime_based\nnorandommap\n"
		"bs=8k\n[w]\nrw=write\n[r]\nrw=randread\n",
	};
	const double lo[] = {7.5, 7.5, 0.98, 0}, hi[] = {8.5, 8.5, 1.02, 7.5};
	for (size_t t = 0; t < 4; t++) {
		char path[64], err[512];
		struct qs_job_file *jf = load_job_text(w, texts[t], path, sizeof(path));
		struct qs_bench_result g[2];
		struct qs_bench_variant v = {.shaping = false};
		assert_int_equal(qs_bench_run_group(w, jf->jobs, 2, &v, 1, g, err, sizeof(err)), 0);
		uint64_t a = g[0].rep.fio[0].total_ios + g[0].rep.fio[1].total_ios;
		uint64_t b = g[1].rep.fio[0].total_ios + g[1].rep.fio[1].total_ios;
		double ratio = (double)b / (double)a;
		print_message("flow test %zu: %llu and %llu I/Os, %.3f\n", t, (unsigned long long)a,
			      (unsigned long long)b, ratio);
		assert_true(a > 50 && ratio >= lo[t] && ratio <= hi[t]);
		unlink(path);
		qs_job_file_free(jf);
	}
	qs_bench_world_free(w);
}

/*
 * Issue 33: fio's latency_target search. At iodepth 1 the job's random
 * reads take L each (the drive is filled); a target of twice L (99% of each 5 ms window) is met at a few
 * I/Os in flight, not at 32, so the search settles below the job's
 * iodepth and ends the job a window after; a target no I/O reaches
 * settles at iodepth. latency_percentile=100 with a target below L backs
 * off at once and at depth 1 ends the job with fio's error (ETIMEDOUT).
 * latency_run keeps the search going for the whole runtime. The depth is
 * under the table and in fio's JSON.
 */
static void test_latency_target(void **state)
{
	(void)state;
	char job[64], text[800];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nrw=randread\nsize=10%\nruntime=100ms\ntime_based\n[one]\n", job,
		sizeof(job));
	struct qs_bench_result r[5];
	run_off(w, jf, 1, r);
	double lat_us = (double)r[0].rep.read.lat_p50_ns / 1e3;
	assert_true(lat_us > 0);
	assert_int_equal(r[0].rep.lat_depth, 0); /* no search without a target */
	qs_job_file_free(jf);
	unlink(job);
	snprintf(text, sizeof(text),
		 "[global]\nrw=randread\nsize=10%%\nruntime=2s\ntime_based\niodepth=32\n"
		 "latency_window=5ms\nlatency_percentile=99\n"
		 "[tight]\nlatency_target=%.0fus\n[loose]\nlatency_target=1h\n"
		 "[strict]\nlatency_target=%.0fus\nlatency_percentile=100\n"
		 "[run]\nlatency_target=1h\nlatency_run=1\nruntime=100ms\n",
		 2 * lat_us, lat_us / 2);
	jf = load_job_text(w, text, job, sizeof(job));
	run_off(w, jf, 4, r + 1);
	const struct qs_report_run *tight = &r[1].rep, *loose = &r[2].rep;
	assert_true(tight->lat_depth >= 1);
	assert_true(tight->lat_depth < loose->lat_depth);
	assert_int_equal(loose->lat_depth, 32);
	assert_int_equal(tight->error, 0);
	/* both found their depth and ended a window later, long before 2 s */
	assert_true(r[1].window_ns < 1000000000ull && r[2].window_ns < 1000000000ull);
	assert_int_equal(r[3].rep.error, ETIMEDOUT);
	assert_int_equal(r[3].rep.lat_depth, 1);
	assert_true(r[3].rep.over_lat_ns > (uint64_t)(lat_us / 2 * 1e3));
	assert_int_equal(r[4].rep.lat_depth, 32);
	assert_int_equal(r[4].window_ns, 100000000ull); /* latency_run: the whole runtime */
	assert_int_equal(loose->lat_target_ns, 3600ull * 1000000000ull);
	assert_int_equal(loose->lat_window_ns, 5000000ull);
	assert_true(loose->lat_pct == 99.0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_table(f, &r[2].rep, 1), 0);
	struct qs_report_fio_doc doc = {"fio-3.33", 0, NULL, 0, &r[2].rep, 1, &r[2].rep, 1};
	assert_int_equal(qs_report_fio_json(f, &doc), 0);
	fclose(f);
	assert_non_null(strstr(buf, "(latency: target=3600000000.0 us, window=0.005 s, "
				    "percentile=99.00%, depth=32 with shaping off)"));
	assert_non_null(strstr(buf, "\"latency_depth\" : 32"));
	assert_non_null(strstr(buf, "\"latency_target\" : 3600000000000"));
	assert_non_null(strstr(buf, "\"latency_window\" : 5000"));
	assert_non_null(strstr(buf, "\"latency_percentile\" : 99"));
	free(buf);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 13: fio's thinktime stalls a closed-loop clone before the I/O after
 * every thinktime_blocks: at iodepth 1, blocks I/Os per 10 ms plus their
 * own time (measured by the same job without thinktime).
 */
static void test_thinktime(void **state)
{
	(void)state;
	char job[64];
	ttmp_file(job, sizeof(job), "br", ".fio",
		  "[global]\nrw=randwrite\nsize=10%\nruntime=200ms\ntime_based\n"
		  "thinktime=10ms\n[one]\n[four]\nthinktime_blocks=4\n[none]\nthinktime=0\n");
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf;
	char err[512];
	assert_int_equal(qs_job_file_load(job, qs_bench_world_sizes(w)->capacity, &jf, err,
					  sizeof(err)), 0);
	struct qs_bench_result r;
	struct qs_bench_variant v = {.shaping = false};
	assert_int_equal(qs_bench_run_job(w, &jf->jobs[2], &v, 1, &r, err, sizeof(err)), 0);
	double lat_s = 1.0 / r.rep.write.iops; /* one I/O at iodepth 1, no stall */
	assert_true(lat_s < 0.001);
	const double blocks[] = {1, 4};
	for (int i = 0; i < 2; i++) {
		assert_int_equal(qs_bench_run_job(w, &jf->jobs[i], &v, 1, &r, err, sizeof(err)), 0);
		double want = blocks[i] / (0.010 + blocks[i] * lat_s);
		if (fabs(r.rep.write.iops - want) > want * 0.05)
			fail_msg("job %s: %.1f IOPS, want %.1f", jf->jobs[i].name, r.rep.write.iops,
				 want);
	}
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

/*
 * Issue 33: fio's thinktime_iotime. A thinktime of 10 ms comes once 20 ms
 * of I/O time passed since the last began (fio counts the thinktime in:
 * every 30 ms, the first at 30 ms), so over 200 ms six thinktimes leave
 * 140 ms of I/O: 70% of the job without thinktime. thinktime_blocks set
 * beside it thinks after every 4 I/Os too (fio's rule for both), far
 * fewer I/Os.
 */
static void test_thinktime_iotime(void **state)
{
	(void)state;
	char job[64];
	struct qs_bench_world *w = tiny_world();
	struct qs_job_file *jf = load_job_text(w,
		"[global]\nrw=randwrite\nsize=10%\nruntime=200ms\ntime_based\n"
		"[none]\n[io]\nthinktime=10ms\nthinktime_iotime=20ms\n"
		"[both]\nthinktime=10ms\nthinktime_iotime=20ms\nthinktime_blocks=4\n",
		job, sizeof(job));
	struct qs_bench_result r[3];
	run_off(w, jf, 3, r);
	double share = r[1].rep.write.iops / r[0].rep.write.iops;
	if (fabs(share - 0.7) > 0.05)
		fail_msg("thinktime_iotime: %.3f of the I/Os without thinktime, want 0.7", share);
	assert_true(r[2].rep.write.iops < r[1].rep.write.iops / 2);
	qs_job_file_free(jf);
	qs_bench_world_free(w);
	unlink(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arg_errors),
		cmocka_unit_test(test_deterministic_json),
		cmocka_unit_test(test_whole_ius),
		cmocka_unit_test(test_log_placement),
		cmocka_unit_test(test_engine_settings),
		cmocka_unit_test(test_recovery),
		cmocka_unit_test(test_wait_for),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_drive_carries),
		cmocka_unit_test(test_engine_carries),
		cmocka_unit_test(test_log_placement_paces),
		cmocka_unit_test(test_group_reporting),
		cmocka_unit_test(test_life_rating),
		cmocka_unit_test(test_curve),
		cmocka_unit_test(test_runtime_bounds_ramp),
		cmocka_unit_test(test_fio_host_options),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_trace_checked_first),
		cmocka_unit_test(test_steadystate_run),
		cmocka_unit_test(test_rated_write_rate),
		cmocka_unit_test(test_sync_family_run),
		cmocka_unit_test(test_percentile_list),
		cmocka_unit_test(test_max_latency),
		cmocka_unit_test(test_latency_target),
		cmocka_unit_test(test_rate_min),
		cmocka_unit_test(test_write_iolog),
		cmocka_unit_test(test_thinktime),
		cmocka_unit_test(test_thinktime_iotime),
		cmocka_unit_test(test_flow),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
