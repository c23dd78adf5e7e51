/* SPDX-License-Identifier: MIT */
/* Job file parsing: values, inheritance, every error naming its place. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/job.h"
#include "../bench/workload.h"
#include "ttmp.h"

#define GiB (1024ull * 1024 * 1024)
#define CAP (100 * GiB)

static char path[64];

/* Write text to a fresh temporary file; its name is left in path. */
static void write_file(const char *text)
{
	ttmp_file(path, sizeof(path), "job", NULL, text);
}

static int teardown(void **state)
{
	(void)state;
	if (path[0])
		unlink(path);
	path[0] = 0;
	return 0;
}

static void test_sizes_and_times(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(qs_job_parse_size("4096", 1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(qs_job_parse_size("4k", 1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(qs_job_parse_size("4K", 1024, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(qs_job_parse_size("1m", 1024, &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(qs_job_parse_size("1g", 1024, &v), 0);
	assert_int_equal(v, GiB);
	assert_int_equal(qs_job_parse_size("2KiB", 1000, &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(qs_job_parse_size("2kb", 1000, &v), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(qs_job_parse_size("1.5m", 1024, &v), 0);
	assert_int_equal(v, 1572864);
	assert_int_equal(qs_job_parse_size("4x", 1024, &v), -EINVAL);
	assert_int_equal(qs_job_parse_size("k", 1024, &v), -EINVAL);
	assert_int_equal(qs_job_parse_size("99999999e", 1024, &v), -ERANGE);

	assert_int_equal(qs_job_parse_time("30", 1000000000ull, &v), 0);
	assert_int_equal(v, 30000000000ull);
	assert_int_equal(qs_job_parse_time("10s", 1000000000ull, &v), 0);
	assert_int_equal(v, 10000000000ull);
	assert_int_equal(qs_job_parse_time("500ms", 1000000000ull, &v), 0);
	assert_int_equal(v, 500000000ull);
	assert_int_equal(qs_job_parse_time("2m", 1000000000ull, &v), 0);
	assert_int_equal(v, 120000000000ull);
	assert_int_equal(qs_job_parse_time("250us", 1000000000ull, &v), 0);
	assert_int_equal(v, 250000ull);
	assert_int_equal(qs_job_parse_time("1.5s", 1000000000ull, &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(qs_job_parse_time("5 parsecs", 1000000000ull, &v), -EINVAL);
}

static void test_good_file_and_inheritance(void **state)
{
	(void)state;
	write_file("; comment\n"
		   "# another\n"
		   "[global]\n"
		   "rw=randwrite\n"
		   "bs=16k\n"
		   "size=5%\n"
		   "iodepth=8\n"
		   "runtime=2s\n"
		   "time_based=1\n"
		   "ioengine=libaio\n"
		   "\n"
		   "[First-Job]\n"
		   "bs=4k  ; trailing comment\n"
		   "\n"
		   "[mix]\n"
		   "rw=randrw\n"
		   "rwmixwrite=30\n"
		   "numjobs=4\n"
		   "offset=10g\n"
		   "offset_increment=20g\n"
		   "size=1g\n"
		   "random_distribution=zipf:1.2\n"
		   "rate_iops=5000\n"
		   "rate_process=poisson\n"
		   "ramp_time=500ms\n"
		   "\n"
		   "[par]\n"
		   "random_distribution=pareto:0.3\n"
		   "runtime=30\n"
		   "offset=50%\n"
		   "kb_base=1000\n"
		   "bs=8KiB\n"
		   "norandommap=1\n");
	struct qs_job_file *f;
	char err[512] = "";
	int rc = qs_job_file_load(path, CAP, &f, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	assert_string_equal(err, "");
	assert_int_equal(f->njobs, 3);

	const struct qs_job *a = &f->jobs[0];
	assert_string_equal(a->name, "First-Job");
	assert_int_equal(a->line, 12);
	assert_int_equal(a->rw, QS_RW_RANDWRITE);     /* from [global] */
	assert_int_equal(a->bs, 4096);		      /* own value wins */
	assert_int_equal(a->iodepth, 8);
	assert_int_equal(a->size, CAP / 20 / 4096 * 4096);
	assert_int_equal(a->offset, 0);
	assert_int_equal(a->runtime_ns, 2000000000ull);
	assert_true(a->time_based);
	assert_int_equal(a->numjobs, 1);
	assert_int_equal(a->dist, QS_DIST_RANDOM);
	assert_int_equal(a->rate_iops, 0);
	assert_null(a->trace);
	assert_false(qs_job_reads(a));
	assert_true(qs_job_writes(a));

	const struct qs_job *m = &f->jobs[1];
	assert_string_equal(m->name, "mix");
	assert_int_equal(m->rw, QS_RW_RANDRW);
	assert_int_equal(m->rwmixread, 70);
	assert_int_equal(m->bs, 16384); /* inherited */
	assert_int_equal(m->numjobs, 4);
	assert_int_equal(m->offset, 10 * GiB);
	assert_int_equal(m->offset_increment, 20 * GiB);
	assert_int_equal(m->size, GiB);
	assert_int_equal(m->dist, QS_DIST_ZIPF);
	assert_true(m->dist_param > 1.19 && m->dist_param < 1.21);
	assert_int_equal(m->rate_iops, 5000);
	assert_int_equal(m->rate_process, QS_RATE_POISSON);
	assert_int_equal(m->ramp_time_ns, 500000000ull);
	assert_true(qs_job_reads(m) && qs_job_writes(m));

	const struct qs_job *p = &f->jobs[2];
	assert_int_equal(p->dist, QS_DIST_PARETO);
	assert_true(p->dist_param > 0.29 && p->dist_param < 0.31);
	assert_int_equal(p->runtime_ns, 30000000000ull);
	assert_int_equal(p->offset, CAP / 2);
	assert_int_equal(p->bs, 8192); /* KiB is binary whatever kb_base */
	assert_true(p->norandommap);
	/* Streams of clones: clone 3 of mix starts at 10g + 3 * 20g. */
	struct qs_wl *w;
	assert_int_equal(qs_wl_open(m, 3, 1, &w, err, sizeof(err)), 0);
	uint64_t so, sl;
	qs_wl_span(w, &so, &sl);
	assert_int_equal(so, 70 * GiB);
	assert_int_equal(sl, GiB);
	qs_wl_close(w);
	qs_job_file_free(f);
}

/* As in fio, [global] shapes only the jobs after it. */
static void test_global_position(void **state)
{
	(void)state;
	write_file("[early]\nbs=8k\n[global]\nrw=write\nbs=16k\n[late]\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->njobs, 2);
	assert_string_equal(f->jobs[0].name, "early");
	assert_int_equal(f->jobs[0].rw, QS_RW_READ);
	assert_int_equal(f->jobs[0].bs, 8192);
	assert_string_equal(f->jobs[1].name, "late");
	assert_int_equal(f->jobs[1].rw, QS_RW_WRITE);
	assert_int_equal(f->jobs[1].bs, 16384);
	qs_job_file_free(f);
}

static void test_kb_base(void **state)
{
	(void)state;
	write_file("[j]\nkb_base=1000\nsize=8k\nbs=4KiB\n");
	struct qs_job_file *f;
	char err[512] = "";
	/* 8k with kb_base 1000 is 8000 bytes: not a 4 KiB multiple. */
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'size'"));
	assert_non_null(strstr(err, ":3:"));
}

/* Load text expecting failure; err must hold every needle. */
static void expect_error(const char *text, const char *const *needles)
{
	write_file(text);
	struct qs_job_file *f = (void *)0x1;
	char err[512] = "";
	int rc = qs_job_file_load(path, CAP, &f, err, sizeof(err));
	if (rc == 0)
		fail_msg("loaded, expected an error for:\n%s", text);
	assert_null(f);
	assert_non_null(strstr(err, path));
	for (; *needles; needles++)
		if (!strstr(err, *needles))
			fail_msg("error '%s' lacks '%s'", err, *needles);
	teardown(NULL);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("[global]\nbs=4k\n[a]\nrw=randwrite\nfrobnicate=7\n",
		     (const char *[]){":5:", "'frobnicate'", "'7'", "unknown", NULL});
	expect_error("[a]\nrw=sideways\n",
		     (const char *[]){":2:", "'rw'", "'sideways'", "randwrite", NULL});
	/* Control bytes were quoted raw (found by tests/fuzz/fuzz_job.c). */
	expect_error("[a]\nrw=side\x1b[2Jways\n",
		     (const char *[]){":2:", "'rw'", "'side\\x1b[2Jways'", NULL});
	expect_error("[a]\nrw=write\nr\x0c" "e\n",
		     (const char *[]){":3:", "'r\\x0ce'", NULL});
	expect_error("[a]\nbs=3000\n",
		     (const char *[]){":2:", "'bs'", "'3000'", "multiple of 512", NULL});
	expect_error("[global]\nbs=6000\n[a]\n",
		     (const char *[]){":2:", "[global]", "'bs'", "'6000'", NULL});
	expect_error("[a]\nrwmixread=101\n",
		     (const char *[]){":2:", "'rwmixread'", "'101'", "0 to 100", NULL});
	expect_error("[a]\niodepth=0\n",
		     (const char *[]){":2:", "'iodepth'", "'0'", "1 to 65536", NULL});
	expect_error("[a]\nrandom_distribution=zipf:1\n",
		     (const char *[]){":2:", "'random_distribution'", "'zipf:1'",
				      "not 1", NULL});
	expect_error("[a]\nrandom_distribution=pareto:1.5\n",
		     (const char *[]){":2:", "'pareto:1.5'", "0 < h < 1", NULL});
	expect_error("[a]\nrandom_distribution=normal\n",
		     (const char *[]){":2:", "'normal'", "zipf", NULL});
	expect_error("[a]\nrate_process=bursty\n",
		     (const char *[]){":2:", "'rate_process'", "'bursty'", "poisson", NULL});
	expect_error("[a]\nruntime=5 fortnights\n",
		     (const char *[]){":2:", "'runtime'", "'5 fortnights'", "ms", NULL});
	expect_error("[a]\ntime_based=maybe\n",
		     (const char *[]){":2:", "'time_based'", "'maybe'", "0 or 1", NULL});
	expect_error("[a]\nsize=150%\n",
		     (const char *[]){":2:", "'size'", "'150%'", "percentage", NULL});
	expect_error("[a]\nsize=200g\n",
		     (const char *[]){":2:", "'size'", "at most", NULL});
	expect_error("[a]\noffset=100g\n",
		     (const char *[]){":2:", "'offset'", "below the capacity", NULL});
	expect_error("[a]\nnumjobs=8\noffset_increment=20g\nsize=1g\n",
		     (const char *[]){":3:", "'offset_increment'", "21474836480",
				      "below the capacity", NULL});
	expect_error("rw=write\n[a]\n",
		     (const char *[]){":1:", "'rw'", "outside any section", NULL});
	/* a bare key is fio's flag; one that needs a value is refused */
	expect_error("[a]\nbs\n", (const char *[]){":2:", "'bs'", "no value", NULL});
	expect_error("[a]\nioengine\n",
		     (const char *[]){":2:", "'ioengine'", "no value", NULL});
	expect_error("[a]\nrw=write\nrate 5\n",
		     (const char *[]){":3:", "'rate 5'", "bare option", NULL});
	expect_error("[a]\nsize=${QS_TEST_JOB_UNSET_VAR}\n",
		     (const char *[]){":2:", "QS_TEST_JOB_UNSET_VAR", "not set", NULL});
	expect_error("[a]\nsize=${\n", (const char *[]){":2:", "closing", NULL});
	expect_error("[a]\nbs=4k\n[a]\n",
		     (const char *[]){":3:", "repeats", "line 1", NULL});
	expect_error("[a\nbs=4k\n", (const char *[]){":1:", "']'", NULL});
	expect_error("[global]\nbs=4k\n", (const char *[]){"no job section", NULL});
	expect_error("[a]\ntrace=x.trace\nnumjobs=2\n",
		     (const char *[]){":3:", "'numjobs'", "trace", NULL});
	expect_error("[a]\ntrace_format=spc\n",
		     (const char *[]){":2:", "'trace_format'", "'spc'", "mqsim", "blktrace",
				      "libcachesim", "csv", NULL});
	expect_error("[a]\ntrace_timescale=0\n",
		     (const char *[]){":2:", "'trace_timescale'", "'0'", "above 0", NULL});
	expect_error("[a]\ntime_based=1\n",
		     (const char *[]){"'time_based'", "runtime", NULL});
	/* issue 12: a key on the header line was dropped */
	expect_error("[a] bs=64k\nrw=write\n",
		     (const char *[]){":1:", "'bs=64k'", "'[a]'", "line of its own", NULL});
	/* issue 12: kb_base=1000 refused 4k saying "a multiple of 4k" */
	expect_error("[a]\nkb_base=1000\nbs=4k\n",
		     (const char *[]){":3:", "'bs'", "'4k'", "4000 bytes", "4KiB", NULL});
	/* issue 12: include suggested "include default.fio=1 for a flag";
	 * issue 13: include is fio's, a missing file is named with the line */
	expect_error("[a]\ninclude qs-no-such-file.fio\n",
		     (const char *[]){":2:", "include qs-no-such-file.fio", "cannot open",
				      NULL});
	/* issue 12: a line iniparser cannot take failed as "could not read" */
	{
		char t[1200];
		int n = snprintf(t, sizeof(t), "[a]\n;");
		memset(t + n, 'c', 1100);
		strcpy(t + n + 1100, "\n");
		expect_error(t, (const char *[]){":2:", "line longer than 1000", NULL});
	}
}

/* Issue 13: fio's syntax: bare flags, include (relative to the including
 * file), ${VAR}, inline comments, the options of real engines ignored and
 * listed, direct=0 / buffered=1 kept for --mode dev. */
static void test_fio_syntax(void **state)
{
	(void)state;
	char inc[64], text[512], err[512] = "";
	ttmp_file(inc, sizeof(inc), "inc", NULL,
		  "bs=16k ; a comment\nioengine=libaio\n[second]\nrw=randread\n");
	const char *base = strrchr(inc, '/') + 1;
	setenv("QS_TEST_JOB_SIZE", "2g", 1);
	snprintf(text, sizeof(text),
		 "[global]\nthread\ngroup_reporting\nexitall\ndirect=0\n"
		 "[first]\nrw=randwrite\ntime_based\nruntime=5\nnorandommap\n"
		 "size=${QS_TEST_JOB_SIZE}\ninclude %s\nstonewall # comment\n"
		 "write_bw_log=x\n", base);
	write_file(text);
	struct qs_job_file *f;
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(inc);
	assert_int_equal(f->njobs, 2);
	const struct qs_job *a = &f->jobs[0], *b = &f->jobs[1];
	assert_string_equal(a->name, "first");
	assert_true(a->time_based && a->norandommap);
	assert_int_equal(a->size, 2 * GiB);
	assert_int_equal(a->bs, 16384);
	assert_true(a->buffered);
	assert_int_equal(a->buffered_line, 5);
	assert_string_equal(a->buffered_file, path);
	/* the includer goes on in the included file's last section */
	assert_string_equal(b->name, "second");
	assert_int_equal(b->rw, QS_RW_RANDREAD);
	assert_true(b->stonewall);
	assert_false(a->stonewall);
	assert_non_null(f->ignored);
	assert_string_equal(f->ignored, "thread, exitall, direct, ioengine, write_bw_log");
	/* group_reporting is fio's report option now, not an ignored one */
	assert_true(a->group_reporting && b->group_reporting);
	assert_int_equal(a->groupid, 0);
	assert_int_equal(b->groupid, 1); /* stonewall starts a group */
	qs_job_file_free(f);
	unsetenv("QS_TEST_JOB_SIZE");

	/* an error in an included file names that file and line */
	ttmp_file(inc, sizeof(inc), "inc", NULL, "rw=write\nbs=3000\n");
	snprintf(text, sizeof(text), "[a]\ninclude %s\n", strrchr(inc, '/') + 1);
	write_file(text);
	f = (void *)0x1;
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
	unlink(inc);
	assert_null(f);
	char want[128];
	snprintf(want, sizeof(want), "%s:2: [a] key 'bs' value '3000'", inc);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);

	/* so does an error found once the job is complete (size past the end) */
	ttmp_file(inc, sizeof(inc), "inc", NULL, "rw=write\nsize=200g\n");
	snprintf(text, sizeof(text), "[a]\ninclude %s\n", strrchr(inc, '/') + 1);
	write_file(text);
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
	unlink(inc);
	snprintf(want, sizeof(want), "%s:2: [a] key 'size'", inc);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);

	/* direct=1 after direct=0 is direct again; no buffered */
	write_file("[a]\ndirect=0\ndirect=1\nbuffered=0\n");
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_false(f->jobs[0].buffered);
	assert_string_equal(f->ignored, "direct, buffered");
	qs_job_file_free(f);

	/* an include loop stops with a reason */
	write_file("[a]\n");
	snprintf(text, sizeof(text), "[global]\ninclude %s\n[a]\n", strrchr(path, '/') + 1);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
	if (!strstr(err, "deep"))
		fail_msg("%s", err);
}

/* Load text (expected good) into *f. */
static void load_ok(const char *text, struct qs_job_file **f)
{
	char err[512] = "";
	write_file(text);
	if (qs_job_file_load(path, CAP, f, err, sizeof(err)))
		fail_msg("%s\nfor:\n%s", err, text);
}

/* The offsets of the first n I/Os of clone 0 of job j (n at most 64); the
 * count the stream gave is returned (it may end sooner). */
static size_t stream_offsets(const struct qs_job *j, uint64_t *off, size_t n)
{
	struct qs_wl *w;
	char err[256];
	assert_int_equal(qs_wl_open(j, 0, 1, &w, err, sizeof(err)), 0);
	struct qs_io io;
	size_t k = 0;
	while (k < n && qs_wl_next(w, &io) == 1)
		off[k++] = io.off;
	qs_wl_close(w);
	return k;
}

/* qsort: unsigned, largest first */
static int cmp_desc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Issue 13: the workload options of fio's examples. */
static void test_fio_workload_options(void **state)
{
	(void)state;
	struct qs_job_file *f;
	uint64_t off[64];

	/* rw=read:-8k reads backwards (backwards-read.fio), from the last block */
	load_ok("[b]\nrw=read:-8k\nbs=4k\nsize=64k\n", &f);
	assert_int_equal(f->jobs[0].seq_skip, -8192);
	assert_int_equal(stream_offsets(&f->jobs[0], off, 64), 16);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(off[i], 61440 - 4096 * i);
	qs_job_file_free(f);

	/* rw=write:112k skips 112k after each 16k (cross-stripe-verify.fio);
	 * io_size and loops bound the bytes */
	load_ok("[s]\nrw=write:112k\nbs=16k\nsize=1m\nio_size=256k\nloops=2\n", &f);
	assert_int_equal(f->jobs[0].io_bytes, 512 * 1024);
	assert_int_equal(stream_offsets(&f->jobs[0], off, 64), 32);
	assert_int_equal(off[0], 0);
	assert_int_equal(off[1], 128 * 1024);
	assert_int_equal(off[7], 7 * 128 * 1024);
	/* 253 valid starts of 4 pages in 256: the 9th wraps to page 256 % 253 */
	assert_int_equal(off[8], (256 % 253) * 4096);
	qs_job_file_free(f);

	/* rw=randread:4: a new random offset every 4 I/Os; number_ios ends it */
	load_ok("[r]\nrw=randread:4\nbs=4k\nsize=1g\nnumber_ios=12\n", &f);
	assert_int_equal(stream_offsets(&f->jobs[0], off, 64), 12);
	for (size_t i = 0; i < 12; i++)
		if (i % 4)
			assert_int_equal(off[i], off[i - 1] + 4096);
	assert_true(off[4] != off[3] + 4096 || off[8] != off[7] + 4096);
	qs_job_file_free(f);

	/* zoned: 60% of the I/Os in the first 10%, 30% in the next 20%, 10% in
	 * the rest (rand-zones.fio's form, the last size empty) */
	load_ok("[z]\nrw=randread\nsize=100m\nnorandommap\nnumber_ios=20000\n"
		"random_distribution=zoned:60/10:30/20:10/\n", &f);
	const struct qs_job *z = &f->jobs[0];
	assert_int_equal(z->dist, QS_DIST_ZONED);
	assert_int_equal(z->nzones, 3);
	struct qs_wl *w;
	char err[256];
	assert_int_equal(qs_wl_open(z, 0, 7, &w, err, sizeof(err)), 0);
	unsigned hits[3] = {0, 0, 0}, total = 0;
	struct qs_io io;
	uint64_t span = z->size;
	while (qs_wl_next(w, &io) == 1) {
		total++;
		hits[io.off < span / 10 ? 0 : io.off < span * 3 / 10 ? 1 : 2]++;
	}
	qs_wl_close(w);
	assert_int_equal(total, 20000);
	assert_true(hits[0] > 11600 && hits[0] < 12400);
	assert_true(hits[1] > 5600 && hits[1] < 6400);
	assert_true(hits[2] > 1700 && hits[2] < 2300);
	qs_job_file_free(f);

	/* normal:1 over 10,000 blocks: a deviation of 100 blocks, so the 400
	 * most popular blocks take about 95% of the I/Os, wherever they are */
	load_ok("[n]\nrw=randread\nsize=40000k\nio_size=80000k\nnumber_ios=20000\n"
		"random_distribution=normal:1\n", &f);
	assert_int_equal(f->jobs[0].dist, QS_DIST_NORMAL);
	static unsigned nhits[10000];
	memset(nhits, 0, sizeof(nhits));
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 9, &w, err, sizeof(err)), 0);
	unsigned nn = 0;
	while (qs_wl_next(w, &io) == 1) {
		assert_true(io.off / 4096 < 10000);
		nhits[io.off / 4096]++;
		nn++;
	}
	qs_wl_close(w);
	assert_int_equal(nn, 20000);
	qsort(nhits, 10000, sizeof(nhits[0]), cmp_desc);
	unsigned top = 0;
	for (int i = 0; i < 400; i++)
		top += nhits[i];
	assert_true(top > 18600 && top < 19400);
	qs_job_file_free(f);
	expect_error("[n]\nrw=randread\nrandom_distribution=normal\n",
		     (const char *[]){":3:", "'random_distribution'", "normal:dev", NULL});

	load_ok("[a]\nrw=randwrite\nsize=64m\nrandom_distribution=zoned_abs:50/4m:50/\n", &f);
	assert_int_equal(f->jobs[0].zones[0].nblocks, 1024);
	assert_int_equal(f->jobs[0].zones[1].first, 1024);
	assert_int_equal(f->jobs[0].zones[1].nblocks, 16384 - 1024);
	qs_job_file_free(f);

	/* rate in bytes/s as IOPS; the direction the job does */
	load_ok("[w]\nrw=write\nbs=8k\nrate=1m\n[r]\nrw=read\nrate=,2m\n"
		"[m]\nrw=randrw\nbs=4k\nrate=300,300,300\n", &f);
	assert_true(f->jobs[0].rate_iops == 128.0);
	assert_true(f->jobs[1].rate_iops == 0.0);
	assert_true(f->jobs[2].rate_iops == 600.0 / 4096);
	qs_job_file_free(f);

	/* filesize is the span, size then the bytes; fill_device to the end */
	load_ok("[f]\nfilesize=1g\nsize=4g\n[d]\noffset=1g\nsize=2g\nfill_device\n"
		"[t]\ntimeout=5\n", &f);
	assert_int_equal(f->jobs[0].size, GiB);
	assert_int_equal(f->jobs[0].io_bytes, 4 * GiB);
	assert_int_equal(f->jobs[1].size, CAP - GiB);
	assert_int_equal(f->jobs[1].io_bytes, CAP - GiB);
	assert_int_equal(f->jobs[2].runtime_ns, 5000000000ull);
	qs_job_file_free(f);

	/* bs=R,W, bsrange and bssplit: sizes per direction, offsets on the
	 * smallest (cmdprio-bssplit.fio's list) */
	load_ok("[p]\nrw=randrw\nsize=1g\nnumber_ios=4000\n"
		"bssplit=64k/40:1024k/60,1024k/100\n"
		"[q]\nrw=rw\nbs=8k,16k\nsize=1m\n[g]\nrw=randwrite\nbsrange=4k-16k\n"
		"size=1m\nio_size=100m\nnumber_ios=3000\n", &f);
	const struct qs_job *p = &f->jobs[0];
	assert_int_equal(p->bs, 65536);
	assert_int_equal(p->bs_max, 1024 * 1024);
	assert_int_equal(p->nbss[0], 2);
	assert_int_equal(p->nbss[1], 1);
	assert_true(fabs(qs_job_mean_bs(p, false) - (0.4 * 65536 + 0.6 * 1048576)) < 1e-6);
	assert_true(qs_job_mean_bs(p, true) == 1048576.0);
	assert_int_equal(qs_wl_open(p, 0, 3, &w, err, sizeof(err)), 0);
	unsigned small = 0, reads = 0;
	while (qs_wl_next(w, &io) == 1) {
		assert_int_equal(io.off % 65536, 0);
		assert_true(io.off + io.len <= p->size);
		if (io.op == QS_IO_WRITE) {
			assert_int_equal(io.len, 1048576);
			continue;
		}
		reads++;
		small += io.len == 65536;
		assert_true(io.len == 65536 || io.len == 1048576);
	}
	qs_wl_close(w);
	assert_true(small > reads * 35 / 100 && small < reads * 45 / 100);
	const struct qs_job *q = &f->jobs[1];
	assert_int_equal(q->bs, 8192);
	assert_int_equal(qs_wl_open(q, 0, 3, &w, err, sizeof(err)), 0);
	uint64_t bytes = 0;
	while (qs_wl_next(w, &io) == 1) {
		assert_int_equal(io.len, io.op == QS_IO_READ ? 8192 : 16384);
		bytes += io.len;
	}
	qs_wl_close(w);
	assert_true(bytes >= 1024 * 1024 && bytes < 1024 * 1024 + 16384);
	const struct qs_job *g = &f->jobs[2];
	unsigned seen[5] = {0};
	assert_int_equal(qs_wl_open(g, 0, 3, &w, err, sizeof(err)), 0);
	while (qs_wl_next(w, &io) == 1) {
		assert_true(io.len >= 4096 && io.len <= 16384 && io.len % 4096 == 0);
		seen[io.len / 4096]++;
	}
	qs_wl_close(w);
	for (int k = 1; k <= 4; k++)
		assert_true(seen[k] > 600);
	qs_job_file_free(f);
	expect_error("[b]\nbssplit=500/10:4k/90\n",
		     (const char *[]){":2:", "'bssplit'", "multiples of 512", NULL});
	expect_error("[b]\nbssplit=4k/10:8k/80\n",
		     (const char *[]){":2:", "'bssplit'", "summing to 100", NULL});
	expect_error("[b]\nbsrange=16k-4k\n", (const char *[]){":2:", "'bsrange'", NULL});
	/* percentage_random=25: three in four random I/Os follow the last one */
	load_ok("[p]\nrw=randwrite\nsize=1g\npercentage_random=25\nnumber_ios=8000\n"
		"nrfiles=1\n", &f);
	assert_int_equal(f->jobs[0].pct_seq[1], 75);
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 5, &w, err, sizeof(err)), 0);
	uint64_t last = 0;
	unsigned follows = 0, n = 0;
	while (qs_wl_next(w, &io) == 1) {
		follows += n++ && io.off == last + 4096;
		last = io.off;
	}
	qs_wl_close(w);
	assert_int_equal(n, 8000);
	assert_true(follows > 5800 && follows < 6200);
	qs_job_file_free(f);
	expect_error("[p]\npercentage_random=101\n",
		     (const char *[]){":2:", "'percentage_random'", "0 (sequential)", NULL});
	/* fio's trim patterns as engine discards, trims' sizes by fio's rule
	 * (bs=R,W gives trims W; a trailing comma keeps their default) */
	load_ok("[t]\nrw=randtrim\nsize=8m\nbs=4k,64k\nnumber_ios=64\n"
		"[u]\nrw=trim\nsize=1m\nbs=8k,64k,\n"
		"[v]\nrw=randtrimwrite\nsize=4m\nbs=16k\nnumber_ios=64\n", &f);
	assert_true(qs_job_trims(&f->jobs[0]) && !qs_job_reads(&f->jobs[0]) &&
		    !qs_job_writes(&f->jobs[0]));
	assert_true(qs_job_rw_random(f->jobs[0].rw));
	assert_int_equal(f->jobs[0].bs, 65536); /* the grid: trims' size alone */
	assert_int_equal(f->jobs[1].bs, 4096);
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 3, &w, err, sizeof(err)), 0);
	n = 0;
	while (qs_wl_next(w, &io) == 1) {
		assert_int_equal(io.op, QS_IO_TRIM);
		assert_int_equal(io.len, 65536);
		n++;
	}
	qs_wl_close(w);
	assert_int_equal(n, 64);
	assert_int_equal(stream_offsets(&f->jobs[1], off, 4), 4);
	assert_int_equal(off[1], 4096); /* sequential trims of 4k */
	/* randtrimwrite: every trim, then a write of the same blocks */
	assert_int_equal(qs_wl_open(&f->jobs[2], 0, 3, &w, err, sizeof(err)), 0);
	n = 0;
	struct qs_io prev = {0};
	while (qs_wl_next(w, &io) == 1) {
		assert_int_equal(io.op, n % 2 ? QS_IO_WRITE : QS_IO_TRIM);
		if (n % 2)
			assert_true(io.off == prev.off && io.len == prev.len && io.len == 16384);
		prev = io;
		n++;
	}
	qs_wl_close(w);
	assert_int_equal(n, 64);
	assert_true(qs_job_writes(&f->jobs[2]) && qs_job_trims(&f->jobs[2]));
	qs_job_file_free(f);
	/* sizes that are not whole 4 KiB blocks (iometer's, JESD219's bssplit)
	 * go out as whole blocks; the stream says what was asked for */
	load_ok("[b]\nrw=randwrite\nsize=1m\nio_size=100m\nbssplit=512/20:1536/30:8k/50\n"
		"number_ios=4000\nblockalign=4k\n", &f);
	const struct qs_job *sb = &f->jobs[0];
	assert_int_equal(sb->bs, 4096);
	assert_int_equal(sb->bss[1][0].lo, 4096);
	assert_int_equal(sb->bss[1][0].req, 512);
	assert_int_equal(sb->bss[1][2].req, 0);
	assert_true(fabs(qs_job_mean_bs(sb, 1) - (0.2 * 512 + 0.3 * 1536 + 0.5 * 8192)) < 1e-6);
	assert_int_equal(qs_wl_open(sb, 0, 3, &w, err, sizeof(err)), 0);
	unsigned asked512 = 0;
	while (qs_wl_next(w, &io) == 1) {
		assert_int_equal(io.off % 4096, 0);
		assert_int_equal(io.len % 4096, 0);
		assert_true(io.orig_len == 512 || io.orig_len == 1536 || io.orig_len == 8192);
		assert_true(io.len == (io.orig_len + 4095) / 4096 * 4096);
		asked512 += io.orig_len == 512;
	}
	qs_wl_close(w);
	assert_true(asked512 > 700 && asked512 < 900);
	qs_job_file_free(f);
	expect_error("[t]\nrw=randtrim\nbs=512\n",
		     (const char *[]){":3:", "'bs'", "trims of 512 bytes", "whole 4 KiB", NULL});
	expect_error("[a]\nrw=randread\nbs=64k\nblockalign=4k\n",
		     (const char *[]){":4:", "'blockalign'", "4096", "65536", NULL});
	expect_error("[a]\nbsrange=512-8k\n",
		     (const char *[]){":2:", "'bsrange'", "multiples of 4k", NULL});
	expect_error("[t]\nnrfiles=4\n", (const char *[]){":2:", "'nrfiles'", "one span", NULL});

	/* zonemode=strided (disk-zone-profile.fio): zonesize bytes, then skip
	 * zoneskip; the job ends when the zones pass the end of the span */
	load_ok("[z]\nrw=read\nbs=64k\nsize=10m\nzonemode=strided\nzonesize=256k\n"
		"zoneskip=1m\n", &f);
	assert_int_equal(stream_offsets(&f->jobs[0], off, 64), 32);
	for (size_t i = 0; i < 32; i++)
		assert_int_equal(off[i], (i / 4) * 1280 * 1024 + (i % 4) * 65536);
	qs_job_file_free(f);
	expect_error("[z]\nrw=randread\nzonemode=strided\nzonesize=1m\n",
		     (const char *[]){":3:", "'zonemode'", "sequential", NULL});
	expect_error("[z]\nrw=read\nzonesize=1m\n",
		     (const char *[]){":3:", "'zonemode'", "only with zonemode=strided", NULL});

	/* fio options the bench knows and refuses say why */
	expect_error("[global]\nflow_watermark=2\n[a]\n",
		     (const char *[]){":2:", "[global]", "'flow_watermark'", "'2'", "refused",
				      "a weight", NULL});
	/* fio's flow: a weight, its flow's number and the sleep of a held
	 * clone; a paced job keeps its schedule, so it takes no flow */
	load_ok("[a]\nflow=8\nflow_id=3\nflow_sleep=1000\n", &f);
	assert_int_equal(f->jobs[0].flow, 8);
	assert_int_equal(f->jobs[0].flow_id, 3);
	assert_int_equal(f->jobs[0].flow_sleep_ns, 1000000); /* microseconds, fio's unit */
	qs_job_file_free(f);
	expect_error("[a]\nrw=write\nflow=2\nrate_iops=100\n",
		     (const char *[]){":3:", "'flow'", "paced", NULL});
	expect_error("[a]\nflow=1001\n", (const char *[]){":2:", "'flow'", "1000", NULL});
	load_ok("[t]\nthinktime=2000\nthinktime_blocks=8\nthinktime_spin=100\n", &f);
	assert_int_equal(f->jobs[0].thinktime_ns, 2000000); /* microseconds, fio's unit */
	assert_int_equal(f->jobs[0].thinktime_blocks, 8);
	qs_job_file_free(f);
	expect_error("[a]\nzonemode=zbd\n",
		     (const char *[]){":2:", "'zonemode'", "conventional", NULL});

	expect_error("[m]\nrw=randrw\nrate=1m,\n",
		     (const char *[]){":3:", "'rate'", "unrated direction", NULL});
	expect_error("[m]\nrw=randrw\nrate_iops=0,50\n",
		     (const char *[]){":3:", "'rate_iops'", "unrated direction", NULL});
	expect_error("[m]\nrw=randrw\nrate_iops=5,x\n",
		     (const char *[]){":3:", "'rate_iops'", "R,W[,T]", NULL});
	expect_error("[m]\nrw=write\nrate=1m\nrate_iops=5\n",
		     (const char *[]){":3:", "'rate'", "rate_iops", NULL});
	expect_error("[z]\nrw=randread\nrandom_distribution=zoned:50/10:40/20\n",
		     (const char *[]){":3:", "'random_distribution'", "summing to 100", NULL});
	expect_error("[z]\nrw=randread\nrandom_distribution=zoned:50/:50/20\n",
		     (const char *[]){":3:", "'random_distribution'", "the last", NULL});
	expect_error("[s]\nrw=write:3k\n",
		     (const char *[]){":2:", "'rw'", "'write:3k'", "multiple of 4k", NULL});
	expect_error("[s]\nrw=randwrite:0\n", (const char *[]){":2:", "'rw'", NULL});
}

/* The option value of key among n options as written, NULL if absent. */
static const char *opt_val(const struct qs_report_opt *o, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(o[i].key, key))
			return o[i].val;
	return NULL;
}

/* fio's reporting options: groups numbered by fio's rule (stonewall or
 * new_group starts one), group_reporting and unified_rw_reporting kept per
 * job, name= as fio's job name, and the options as written for fio's
 * JSON ("job options", "global options": key=value only, the last value
 * of a repeated key). */
static void test_fio_report_options(void **state)
{
	(void)state;
	write_file("[global]\nbs=8k\ngroup_reporting\nbs=16k\n"
		   "[a]\nrw=randwrite\nname=alpha\n"
		   "[b]\nrw=randread\nunified_rw_reporting=mixed\n"
		   "[c]\nnew_group\nunified_rw_reporting=2\nnumjobs=2\nnumjobs=3\n"
		   "[d]\nstonewall\ngroup_reporting=0\n[e]\nnew_group\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->njobs, 5);
	const unsigned gid[] = {0, 0, 1, 2, 3};
	const bool gr[] = {true, true, true, false, true};
	const enum qs_report_unified un[] = {QS_UNIFIED_NONE, QS_UNIFIED_MIXED, QS_UNIFIED_BOTH,
					  QS_UNIFIED_NONE, QS_UNIFIED_NONE};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(f->jobs[i].groupid, gid[i]);
		assert_int_equal(f->jobs[i].group_reporting, gr[i]);
		assert_int_equal(f->jobs[i].unified, un[i]);
	}
	assert_string_equal(f->jobs[0].fio_name, "alpha");
	assert_string_equal(f->jobs[0].name, "a");
	assert_string_equal(f->jobs[1].fio_name, "");
	assert_int_equal(f->ngopts, 1); /* bs once; the bare flag is not listed */
	assert_string_equal(f->gopts[0].key, "bs");
	assert_string_equal(f->gopts[0].val, "16k");
	const struct qs_job *c = &f->jobs[2];
	assert_int_equal(c->nopts, 2); /* unified_rw_reporting, numjobs */
	assert_string_equal(opt_val(c->opts, c->nopts, "numjobs"), "3");
	assert_string_equal(opt_val(c->opts, c->nopts, "unified_rw_reporting"), "2");
	assert_null(opt_val(c->opts, c->nopts, "new_group"));
	assert_string_equal(opt_val(f->jobs[0].opts, f->jobs[0].nopts, "name"), "alpha");
	assert_int_equal(f->jobs[3].nopts, 1); /* group_reporting=0 */
	assert_null(f->ignored);
	qs_job_file_free(f);
	expect_error("[a]\nunified_rw_reporting=3\n",
		     (const char *[]){":2:", "'unified_rw_reporting'", "mixed", NULL});
	expect_error("[a]\ngroup_reporting=maybe\n",
		     (const char *[]){":2:", "'group_reporting'", "0 or 1", NULL});
}

/*
 * Issue 33: every key is in the one table. An alias is its option (wait_for_previous
 * is stonewall), a class-2 option lands in its job's note, a class-3 one is refused
 * with its reason but accepted with fio's off, and read_iolog, replay_no_stall and
 * offset_align do what fio's do.
 */
static void test_option_table(void **state)
{
	(void)state;
	write_file("[global]\nioengine=io_uring\nhipri\n"
		   "[a]\nrw=write\nsize=1m\nserialize_overlap=0\ncgroup=x\n"
		   "[b]\nwait_for_previous\nfill_fs=1\nfileoffset=8k\n"
		   "[c]\noffset=0.3%\noffset_align=1m\nsize=1m\n"
		   "[d]\noffset=0.3%\nsize=1m\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(f->jobs[0].noeffect, "ioengine, hipri, serialize_overlap, cgroup");
	assert_string_equal(f->jobs[1].noeffect, "ioengine, hipri");
	assert_true(f->jobs[1].stonewall);
	assert_int_equal(f->jobs[1].offset, 8192);
	assert_int_equal(f->jobs[1].size, CAP - 8192); /* fill_fs: to the end */
	/* 0.3% of 100 GiB is 322122547.2 bytes: d rounds it down to 4 KiB,
	 * offset_align=1m takes c up to the next MiB (fio's rule) */
	assert_int_equal(f->jobs[3].offset, 322121728);
	assert_int_equal(f->jobs[2].offset, 308ull << 20);
	assert_string_equal(f->ignored, "ioengine, hipri, serialize_overlap, cgroup");
	qs_job_file_free(f);

	expect_error("[a]\nserialize_overlap=1\n",
		     (const char *[]){":2:", "'serialize_overlap'", "'1'", "refused",
				      "0 is accepted", NULL});
	expect_error("[a]\nprofile=tiobench\n",
		     (const char *[]){":2:", "'profile'", "refused", "built-in", NULL});
	expect_error("[a]\nrw_sequencer=identical\n",
		     (const char *[]){":2:", "'rw_sequencer'", "sequential", NULL});
	expect_error("[a]\nstats\n", (const char *[]){":2:", "'stats'", "no value", NULL});
	expect_error("[a]\noffset_align=3k\n",
		     (const char *[]){":2:", "'offset_align'", "multiple of 4k", NULL});
	expect_error("[a]\nno_such_option=1\n",
		     (const char *[]){":2:", "unknown key 'no_such_option'", NULL});

	/* the table: fio's classes, an alias names a known option */
	struct qs_job_opt_info o;
	size_t n = 0, cls[4] = {0};
	for (; qs_job_opt(n, &o); n++) {
		assert_true(o.cls >= QS_JOB_OPT_DOES && o.cls <= QS_JOB_OPT_REFUSED);
		assert_non_null(o.here);
		assert_true(o.here[0] != 0);
		cls[o.cls]++;
	}
	assert_true(n > 217);
	assert_true(cls[1] && cls[2] && cls[3]);
}

/* fio's sync family as the stream's fields (test_workload checks what the
 * stream does with them); not with a trace, which has flushes of its own */
static void test_sync_keys(void **state)
{
	(void)state;
	write_file("[global]\nrw=write\nsize=1m\n[a]\nfsync=8\nend_fsync=1\n"
		   "[b]\nfdatasync=2\nwrite_barrier=5\nsync=dsync\n"
		   "[c]\nfsync_on_close=1\nend_fsync=0\nsync=0\n[d]\nsync=none\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(f->jobs[0].fsync_every, 8);
	assert_true(f->jobs[0].end_fsync);
	assert_false(f->jobs[0].sync_writes);
	assert_int_equal(f->jobs[1].fsync_every, 2);
	assert_int_equal(f->jobs[1].barrier_every, 5);
	assert_true(f->jobs[1].sync_writes);
	assert_false(f->jobs[1].end_fsync);
	assert_true(f->jobs[2].end_fsync); /* fsync_on_close, whatever end_fsync says */
	assert_false(f->jobs[2].sync_writes);
	assert_false(f->jobs[3].sync_writes);
	assert_null(f->ignored);
	qs_job_file_free(f);
	expect_error("[a]\nsync=maybe\n",
		     (const char *[]){":2:", "'sync'", "'maybe'", "dsync", NULL});
	expect_error("[a]\nfsync=-1\n", (const char *[]){":2:", "'fsync'", "integer", NULL});
	expect_error("[a]\nrate_cycle=0\n",
		     (const char *[]){":2:", "'rate_cycle'", "above 0", NULL});
	expect_error("[a]\nrate_iops_min=1,x\n",
		     (const char *[]){":2:", "'rate_iops_min'", "R[,W[,T]]", NULL});
	expect_error("[a]\nmax_latency=2h\n",
		     (const char *[]){":2:", "'max_latency'", "'2h'", "microseconds", NULL});
	expect_error("[a]\npercentile_list=50:101\n",
		     (const char *[]){":2:", "'percentile_list'", "'50:101'", "0 to 100", NULL});
	expect_error("[a]\npercentile_list=50::99\n",
		     (const char *[]){":2:", "'percentile_list'", "':'", NULL});
	expect_error("[a]\ntrace=x.log\nfsync=4\n",
		     (const char *[]){":3:", "'fsync'", "not with a trace", NULL});
}

/*
 * Issue 33: fio's latency profile and thinktime_iotime, in fio's units
 * (latency_target and latency_window in microseconds, thinktime_iotime in
 * seconds), their defaults (latency_percentile 100, no search) and the
 * errors, each naming line, key, value and what is allowed.
 */
static void test_latency_keys(void **state)
{
	(void)state;
	struct qs_job_file *f;
	load_ok("[l]\nlatency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9\n"
		"latency_run=1\nthinktime=10\nthinktime_iotime=2\n[d]\nthinktime_blocks=3\n", &f);
	const struct qs_job *l = &f->jobs[0], *d = &f->jobs[1];
	assert_int_equal(l->lat_target_ns, 500000000ull);
	assert_int_equal(l->lat_window_ns, 5000000000ull);
	assert_true(l->lat_pct == 99.9);
	assert_true(l->lat_run);
	assert_int_equal(l->thinktime_iotime_ns, 2000000000ull);
	assert_false(l->thinktime_blocks_set);
	assert_int_equal(d->lat_target_ns, 0);
	assert_true(d->lat_pct == 100.0);
	assert_false(d->lat_run);
	assert_true(d->thinktime_blocks_set);
	assert_null(f->ignored);
	qs_job_file_free(f);
	expect_error("[a]\nlatency_target=2h\n",
		     (const char *[]){":2:", "'latency_target'", "'2h'", "microseconds", NULL});
	expect_error("[a]\nlatency_window=x\n",
		     (const char *[]){":2:", "'latency_window'", "'x'", "up to 1 hour", NULL});
	expect_error("[a]\nlatency_percentile=100.5\n",
		     (const char *[]){":2:", "'latency_percentile'", "'100.5'", "0 to 100", NULL});
	expect_error("[a]\nlatency_run=maybe\n",
		     (const char *[]){":2:", "'latency_run'", "'maybe'", "0 or 1", NULL});
	expect_error("[a]\nthinktime_iotime=2d\n",
		     (const char *[]){":2:", "'thinktime_iotime'", "'2d'", "seconds", NULL});
}

/*
 * Issue 33: sizes written for the real drive scale with the model. On a
 * capacity 100 times smaller than the drive they were written for, a job
 * whose offset_increment (30 clones of 124g) and io_size do not fit has
 * its sizes in bytes divided by 100 (4 KiB down) and names them; sizes in
 * % stay; a job that fits as written is not scaled; one that would not fit
 * even scaled is refused with the error of its sizes as written; and
 * without a scale (1) nothing is scaled.
 */
static void test_scaled_sizes(void **state)
{
	(void)state;
	const uint64_t cap = 40ull << 30; /* 40 GiB of a 4 TiB drive: 1/100 */
	write_file("[global]\nbs=16k\nrw=write\n"
		   "[stripes]\noffset_increment=124g\nio_size=120g\noffset=120k\nnumjobs=30\n"
		   "[pct]\noffset_increment=124g\nnumjobs=30\nsize=1%\n"
		   "[fits]\noffset_increment=1g\nnumjobs=30\nsize=1g\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load_scaled(path, cap, UINT64_MAX, 100, &f, err, sizeof(err)))
		fail_msg("%s", err);
	const struct qs_job *st = &f->jobs[0], *pc = &f->jobs[1], *fi = &f->jobs[2];
	assert_string_equal(st->scaled, "offset, offset_increment, io_size");
	assert_true(st->scaled_by == 100);
	assert_int_equal(st->offset_increment, (124ull << 30) / 100 / 4096 * 4096);
	assert_int_equal(st->io_bytes, (120ull << 30) / 100 / 4096 * 4096);
	assert_int_equal(st->offset, 0); /* 1,228 bytes: 4 KiB down */
	assert_string_equal(pc->scaled, "offset_increment");
	assert_int_equal(pc->size, cap / 100 / 4096 * 4096); /* 1% of the model, as written */
	assert_string_equal(fi->scaled, "");
	assert_int_equal(fi->offset_increment, 1ull << 30);
	assert_int_equal(fi->size, 1ull << 30);
	qs_job_file_free(f);
	/* 30 clones 2 TiB apart: 600 GiB at 1/100, still past 40 GiB */
	write_file("[a]\noffset_increment=2t\nnumjobs=30\n");
	f = (void *)0x1;
	assert_int_equal(qs_job_file_load_scaled(path, cap, UINT64_MAX, 100, &f, err,
						 sizeof(err)), -EINVAL);
	assert_null(f);
	assert_non_null(strstr(err, "'offset_increment' value 2199023255552"));
	/* scale 1: as written, refused */
	write_file("[a]\noffset_increment=124g\nnumjobs=30\n");
	f = (void *)0x1;
	assert_int_equal(qs_job_file_load_scaled(path, cap, UINT64_MAX, 1, &f, err,
						 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'offset_increment' value 133143986176"));
}

/*
 * Issue 33: fio's rate and rate_iops per direction. A mixed job with caps
 * that differ runs each direction at its own: rate_iops their sum, a read
 * drawn with its share (not rwmixread); one field of rate_iops keeps the
 * bench's rule (the clone's I/Os together); equal caps sum as before.
 */
static void test_rate_per_direction(void **state)
{
	(void)state;
	write_file("[global]\nrw=randrw\nrwmixread=90\nsize=1m\n"
		   "[i]\nrate_iops=100,300\n[b]\nbs=4k,8k\nrate=400k,800k\n"
		   "[e]\nrate_iops=100,100\n[o]\nrate_iops=100\n[w]\nrw=write\nrate_iops=7,9\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	const struct qs_job *i = &f->jobs[0], *b = &f->jobs[1];
	assert_true(i->rate_mix);
	assert_true(i->rate_iops == 400.0);
	assert_true(fabs(i->rate_read_share - 0.25) < 1e-12);
	/* 400k/4k = 100 reads, 800k/8k = 100 writes a second: equal I/Os */
	assert_true(b->rate_mix);
	assert_true(fabs(b->rate_iops - 200.0) < 1e-9);
	assert_true(fabs(b->rate_read_share - 0.5) < 1e-12);
	assert_false(f->jobs[2].rate_mix); /* equal caps: rwmixread, their sum */
	assert_true(f->jobs[2].rate_iops == 200.0);
	assert_true(f->jobs[3].rate_iops == 100.0); /* one value: together */
	assert_true(f->jobs[4].rate_iops == 9.0);   /* writes only: their cap */
	assert_false(f->jobs[4].rate_mix);
	qs_job_file_free(f);

	/* the stream: a quarter reads, whatever rwmixread says */
	write_file("[i]\nrw=randrw\nrwmixread=90\nsize=1m\nio_size=1g\nrate_iops=100,300\n");
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	struct qs_wl *w;
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 1, &w, err, sizeof(err)), 0);
	unsigned reads = 0, n = 20000;
	for (unsigned k = 0; k < n; k++) {
		struct qs_io io;
		assert_int_equal(qs_wl_next(w, &io), 1);
		reads += io.op == QS_IO_READ;
		assert_true(io.timed);
	}
	assert_true(fabs((double)reads / n - 0.25) < 0.02);
	qs_wl_close(w);
	qs_job_file_free(f);
}

/* read_iolog is the bench's trace; replay_no_stall its trace_ignore_time */
static void test_read_iolog(void **state)
{
	(void)state;
	char tr[64];
	ttmp_file(tr, sizeof(tr), "job", ".log",
		  "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n"
		  "/dev/x close\n");
	char text[256];
	snprintf(text, sizeof(text), "[r]\nread_iolog=%s\nreplay_no_stall=1\n", tr);
	write_file(text);
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(f->jobs[0].trace, tr);
	assert_true(f->jobs[0].trace_ignore_time);
	assert_null(f->jobs[0].noeffect);
	qs_job_file_free(f);

	/* replay_time_scale (percent of the trace's rate) and replay_skip */
	write_file("[r]\nrw=write\nreplay_time_scale=200\nreplay_skip=read, flush\n"
		   "[s]\nrw=write\nreplay_time_scale=50\nreplay_skip=sync\n");
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(f->jobs[0].trace_timescale == 0.5);
	assert_int_equal(f->jobs[0].replay_skip, (1u << QS_IO_READ) | (1u << QS_IO_SYNC));
	assert_true(f->jobs[1].trace_timescale == 2.0);
	assert_int_equal(f->jobs[1].replay_skip, 1u << QS_IO_SYNC);
	qs_job_file_free(f);
	expect_error("[r]\nreplay_align=3k\n",
		     (const char *[]){":2:", "'replay_align'", "power of 2", NULL});
	expect_error("[r]\nreplay_scale=0\n",
		     (const char *[]){":2:", "'replay_scale'", "from 1", NULL});
	expect_error("[r]\nreplay_skip=read,append\n",
		     (const char *[]){":2:", "'replay_skip'", "'read,append'", "flush", NULL});
	expect_error("[r]\nreplay_time_scale=0\n",
		     (const char *[]){":2:", "'replay_time_scale'", "percentage", NULL});

	/* the stream of the trace without its writes: the read, then the end */
	ttmp_file(tr, sizeof(tr), "job", ".log",
		  "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 0 4096\n"
		  "/dev/x read 40960 4096\n/dev/x write 4096 4096\n/dev/x close\n");
	snprintf(text, sizeof(text), "[r]\nread_iolog=%s\nreplay_skip=write\n"
		 "replay_scale=2\nreplay_align=16k\n", tr);
	write_file(text);
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	struct qs_wl *w;
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 1, &w, err, sizeof(err)), 0);
	struct qs_io io;
	assert_int_equal(qs_wl_next(w, &io), 1);
	assert_int_equal(io.op, QS_IO_READ);
	/* 40960 / 2 = 20480, aligned down to 16k (scale alone: 20480,
	 * align alone: 32768) */
	assert_int_equal(io.off, 16384);
	assert_int_equal(qs_wl_next(w, &io), 0);
	qs_wl_close(w);
	qs_job_file_free(f);
	unlink(tr);
}

/* Issue 12: a line starting with a NUL byte was skipped without a word
 * (and a NUL inside a line cut it there). */
static void test_nul_byte(void **state)
{
	(void)state;
	static const char text[] = "[a]\nrw=write\n\0bs=64k\n";
	ttmp_file(path, sizeof(path), "job", NULL, "");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
	fclose(f);
	struct qs_job_file *jf = (void *)0x1;
	char err[512] = "";
	assert_int_equal(qs_job_file_load(path, CAP, &jf, err, sizeof(err)), -EINVAL);
	assert_null(jf);
	print_message("%s\n", err);
	assert_non_null(strstr(err, ":3: NUL byte at column 1"));
}

static void test_missing_file(void **state)
{
	(void)state;
	struct qs_job_file *f;
	char dir[64], derr[512] = "";
	ttmp_dir(dir, sizeof(dir), "job_dir");
	assert_int_equal(qs_job_file_load(dir, CAP, &f, derr, sizeof(derr)), -EINVAL);
	rmdir(dir);
	assert_non_null(strstr(derr, "not a regular file (a directory)"));
	char err[256];
	assert_int_equal(qs_job_file_load("/nonexistent/x.fio", CAP, &f, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.fio"));
}

/* Every shipped job file loads, on the 30.72 TB drive and on a small one. */
static void test_shipped_files(void **state)
{
	(void)state;
	glob_t g;
	const char *dir = getenv("QS_SRCDIR");
	char pat[512];
	snprintf(pat, sizeof(pat), "%s/conf/bench/*.fio", dir ? dir : ".");
	assert_int_equal(glob(pat, 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 6);
	const uint64_t caps[] = {30720000000000ull / 4096 * 4096, 64 * GiB};
	bool saw_trace = false;
	for (size_t c = 0; c < 2; c++)
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct qs_job_file *f;
			char err[512] = "";
			int rc = qs_job_file_load(g.gl_pathv[i], caps[c], &f, err, sizeof(err));
			if (rc)
				fail_msg("%s: %s", g.gl_pathv[i], err);
			assert_true(f->njobs >= 1);
			for (size_t j = 0; j < f->njobs; j++) {
				const struct qs_job *jb = &f->jobs[j];
				if (jb->trace) {
					saw_trace = true;
					assert_string_equal(jb->trace,
							    "../shared/traces/tpcc-small.trace");
					continue;
				}
				assert_int_equal(jb->size % 4096, 0);
				assert_true(jb->size <= caps[c] / 20);
				assert_true(jb->runtime_ns > 0 && jb->time_based);
				assert_int_equal(jb->bs % 4096, 0);
			}
			qs_job_file_free(f);
		}
	assert_true(saw_trace);
	globfree(&g);
}

/* The default file is the five jobs the docs promise. */
static void test_default_file(void **state)
{
	(void)state;
	const char *dir = getenv("QS_SRCDIR");
	char p[512];
	snprintf(p, sizeof(p), "%s/conf/bench/default.fio", dir ? dir : ".");
	struct qs_job_file *f;
	char err[512] = "";
	assert_int_equal(qs_job_file_load(p, 64 * GiB, &f, err, sizeof(err)), 0);
	assert_int_equal(f->njobs, 5);
	static const struct {
		const char *name;
		enum qs_job_rw rw;
		uint64_t bs;
	} want[] = {
		{"4k-randread", QS_RW_RANDREAD, 4096},
		{"4k-randwrite", QS_RW_RANDWRITE, 4096},
		{"64k-read", QS_RW_READ, 65536},
		{"64k-write", QS_RW_WRITE, 65536},
		{"64k-randwrite", QS_RW_RANDWRITE, 65536},
	};
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(f->jobs[i].name, want[i].name);
		assert_int_equal(f->jobs[i].rw, want[i].rw);
		assert_int_equal(f->jobs[i].bs, want[i].bs);
		assert_int_equal(f->jobs[i].size, 64 * GiB / 20 / 4096 * 4096);
		/* issue 11: steady state, fio's way; writes after a 30 s ramp,
		 * reads after 1 s */
		bool rd = want[i].rw == QS_RW_RANDREAD || want[i].rw == QS_RW_READ;
		assert_int_equal(f->jobs[i].ss, QS_SS_IOPS_SLOPE);
		assert_true(f->jobs[i].ss_pct && f->jobs[i].ss_limit == 1.0);
		assert_int_equal(f->jobs[i].ramp_time_ns, rd ? 1000000000ull : 30000000000ull);
		assert_int_equal(f->jobs[i].ss_ramp_ns, f->jobs[i].ramp_time_ns);
		assert_int_equal(f->jobs[i].ss_dur_ns, rd ? 5000000000ull : 20000000000ull);
		assert_int_equal(f->jobs[i].runtime_ns, rd ? 20000000000ull : 60000000000ull);
	}
	qs_job_file_free(f);
}

/* Issue 12: ramp_time=30d under --runtime 200ms ran for 30 days (fio's
 * ramp comes before the runtime). --runtime now bounds the ramp, with a
 * warning naming the key; --ramp-time still sets any ramp. */
static void test_runtime_bounds_ramp(void **state)
{
	(void)state;
	write_file("[global]\nsize=1%\nruntime=200ms\n[j]\nrw=randwrite\n"
		   "ramp_time=30d\n[k]\nramp_time=100ms\n");
	struct qs_job_file *f;
	char err[512] = "";
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), 0);
	char *msg = NULL;
	size_t msglen = 0;
	FILE *w = open_memstream(&msg, &msglen);
	assert_int_equal(qs_job_file_override(f, 200000000ull, UINT64_MAX, w), 1);
	fclose(w);
	print_message("%s", msg);
	assert_int_equal(f->jobs[0].runtime_ns, 200000000ull);
	assert_int_equal(f->jobs[0].ramp_time_ns, 200000000ull);
	assert_true(f->jobs[0].time_based);
	assert_int_equal(f->jobs[1].ramp_time_ns, 100000000ull); /* shorter: kept */
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, ":4: [j] key 'ramp_time' value 2592000 s"));
	assert_non_null(strstr(msg, "--runtime 0.2 s"));
	free(msg);
	/* --ramp-time given: it wins, nothing is cut, nothing is said */
	assert_int_equal(qs_job_file_override(f, 200000000ull, 5000000000ull, NULL), 0);
	assert_int_equal(f->jobs[0].ramp_time_ns, 5000000000ull);
	assert_int_equal(f->jobs[1].ramp_time_ns, 5000000000ull);
	qs_job_file_free(f);
}

/* fio's startdelay and wait_for: the delay is a time; wait_for resolves to
 * an earlier job of the same group, and anything else is refused naming
 * the line, the key, the value and why. */
static void test_wait_for(void **state)
{
	(void)state;
	struct qs_job_file *f;
	char err[512] = "";
	write_file("[global]\nsize=1%\n[fill]\nrw=randwrite\n[other]\n[read]\n"
		   "wait_for=fill\nstartdelay=1500ms\n");
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), 0);
	assert_int_equal(f->jobs[0].wait_back, 0);
	assert_int_equal(f->jobs[2].wait_back, 2);
	assert_int_equal(f->jobs[2].startdelay_ns, 1500000000ull);
	qs_job_file_free(f);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[read]\nwait_for=fill\n[fill]\n",
		 ":2: [read] key 'wait_for' value 'fill': allowed: the name of an earlier job of "
		 "the same group (no earlier job has that name)"},
		{"[fill]\n[read]\nstonewall=1\nwait_for=fill\n", ":4: [read] key 'wait_for' "
		 "value 'fill': allowed: the name of an earlier job of the same group (a stonewall"},
		{"[fill]\n[mid]\nstonewall=1\n[read]\nwait_for=fill\n", ":5: [read] key "
		 "'wait_for' value 'fill'"},
		{"[read]\nwait_for=read\n", "(no earlier job has that name)"},
		{"[read]\nstartdelay=31d\n", "key 'startdelay' value '31d': allowed: a time"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(bad[i].text);
		assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
		print_message("%s\n", err);
		assert_non_null(strstr(err, bad[i].want));
	}
}

/* Issue 11: time_based=1 without a runtime in the file loads when the
 * command line gives one (--runtime, applied by the override after the
 * load), and is still refused without. */
static void test_time_based_runtime(void **state)
{
	(void)state;
	write_file("[j]\nrw=randwrite\ntime_based=1\n");
	struct qs_job_file *f = NULL;
	char err[512] = "";
	assert_int_equal(qs_job_file_load(path, CAP, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "key 'time_based' value 1"));
	assert_non_null(strstr(err, "--runtime"));
	assert_int_equal(qs_job_file_load_runtime(path, CAP, 2000000000ull, &f, err,
						  sizeof(err)), 0);
	qs_job_file_override(f, 2000000000ull, UINT64_MAX, NULL);
	assert_int_equal(f->jobs[0].runtime_ns, 2000000000ull);
	assert_true(f->jobs[0].time_based);
	qs_job_file_free(f);
	assert_int_equal(qs_job_file_load_runtime(path, CAP, UINT64_MAX, &f, err, sizeof(err)),
			 -EINVAL);
}

/* Issue 11: fio's steady-state options, long and short names, percentages
 * and absolute limits; errors name the line, key, value and range. */
static void test_steadystate(void **state)
{
	(void)state;
	write_file("[global]\nruntime=5m\ntime_based=1\n"
		   "[a]\nsteadystate=iops_slope:0.5%\nsteadystate_duration=30s\n"
		   "steadystate_ramp_time=10s\n"
		   "[b]\nss=BW:1000000\nss_dur=2s\nss_interval=500ms\nss_ramp=1m\n"
		   "[c]\nss=iops:0\n");
	struct qs_job_file *f;
	char err[512] = "";
	if (qs_job_file_load(path, CAP, &f, err, sizeof(err)))
		fail_msg("%s", err);
	const struct qs_job *a = &f->jobs[0], *b = &f->jobs[1], *c = &f->jobs[2];
	assert_int_equal(a->ss, QS_SS_IOPS_SLOPE);
	assert_true(a->ss_limit == 0.5 && a->ss_pct);
	assert_int_equal(a->ss_dur_ns, 30000000000ull);
	assert_int_equal(a->ss_ramp_ns, 10000000000ull);
	assert_int_equal(a->ss_interval_ns, 1000000000ull); /* fio's default */
	assert_string_equal(qs_job_ss_name(a->ss), "iops_slope");
	assert_int_equal(b->ss, QS_SS_BW);
	assert_true(b->ss_limit == 1e6 && !b->ss_pct);
	assert_int_equal(b->ss_dur_ns, 2000000000ull);
	assert_int_equal(b->ss_interval_ns, 500000000ull);
	assert_int_equal(b->ss_ramp_ns, 60000000000ull);
	/* a criterion without a duration: no detection, as in fio */
	assert_int_equal(c->ss, QS_SS_IOPS);
	assert_int_equal(c->ss_dur_ns, 0);
	qs_job_file_free(f);

	expect_error("[a]\nss=iops_mean:1%\n",
		     (const char *[]){":2:", "'ss'", "'iops_mean:1%'", "iops_slope:L", NULL});
	expect_error("[a]\nsteadystate=iops:-1\n",
		     (const char *[]){":2:", "'steadystate'", "at least 0", NULL});
	expect_error("[a]\nsteadystate=bw:5%x\n", (const char *[]){":2:", "'bw:5%x'", NULL});
	expect_error("[a]\nsteadystate=bw\n", (const char *[]){":2:", "'bw'", NULL});
	expect_error("[a]\nsteadystate_duration=10s\n",
		     (const char *[]){":2:", "'steadystate_duration'", "steadystate criterion",
				      NULL});
	expect_error("[a]\nss=iops:1%\nss_dur=2500ms\n",
		     (const char *[]){":3:", "'steadystate_duration' value 2.5 s",
				      "whole number of them", NULL});
	expect_error("[a]\nss=iops:1%\nss_dur=1s\n",
		     (const char *[]){":3:", "2 to 100000 times", NULL});
	expect_error("[a]\nss=iops:1%\nss_interval=0\n",
		     (const char *[]){":3:", "'ss_interval'", "above 0", NULL});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_and_times),
		cmocka_unit_test_teardown(test_good_file_and_inheritance, teardown),
		cmocka_unit_test_teardown(test_global_position, teardown),
		cmocka_unit_test_teardown(test_kb_base, teardown),
		cmocka_unit_test_teardown(test_errors, teardown),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_shipped_files),
		cmocka_unit_test(test_default_file),
		cmocka_unit_test_teardown(test_runtime_bounds_ramp, teardown),
		cmocka_unit_test_teardown(test_wait_for, teardown),
		cmocka_unit_test_teardown(test_steadystate, teardown),
		cmocka_unit_test_teardown(test_time_based_runtime, teardown),
		cmocka_unit_test_teardown(test_nul_byte, teardown),
		cmocka_unit_test_teardown(test_fio_syntax, teardown),
		cmocka_unit_test_teardown(test_fio_report_options, teardown),
		cmocka_unit_test_teardown(test_fio_workload_options, teardown),
		cmocka_unit_test_teardown(test_option_table, teardown),
		cmocka_unit_test_teardown(test_read_iolog, teardown),
		cmocka_unit_test_teardown(test_sync_keys, teardown),
		cmocka_unit_test_teardown(test_latency_keys, teardown),
		cmocka_unit_test_teardown(test_scaled_sizes, teardown),
		cmocka_unit_test_teardown(test_rate_per_direction, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
