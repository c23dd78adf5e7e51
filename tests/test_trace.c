/* SPDX-License-Identifier: MIT */
/* Trace readers: the sample MQSim traces, MSR CSV, fio iolog v2, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/job.h"
#include "../bench/trace.h"
#include "../bench/workload.h"
#include "ttmp.h"

/* The shared sample traces: $QS_TRACE_DIR, or next to the repository as the
 * shipped job file expects (../shared/traces from the repository root). */
static const char *sample(const char *name)
{
	static char p[512];
	const char *dirs[] = {getenv("QS_TRACE_DIR"), "../shared/traces",
			      "/work/shared/traces"};
	for (size_t i = 0; i < 3; i++) {
		if (!dirs[i])
			continue;
		snprintf(p, sizeof(p), "%s/%s", dirs[i], name);
		if (access(p, R_OK) == 0)
			return p;
	}
	return NULL;
}

static char tmp[64];

static const char *write_tmp(const char *text)
{
	ttmp_file(tmp, sizeof(tmp), "trace", NULL, text);
	return tmp;
}

static int teardown(void **state)
{
	(void)state;
	if (tmp[0])
		unlink(tmp);
	tmp[0] = 0;
	return 0;
}

static struct qs_trace *open_ok(const char *path, const struct qs_trace_opts *o)
{
	struct qs_trace *t;
	char err[256];
	int rc = qs_trace_open(path, o, &t, err, sizeof(err));
	if (rc)
		fail_msg("open %s: %s", path, err);
	return t;
}

struct counts {
	uint64_t n, reads, writes, orig_bytes, bytes;
	uint64_t last_ns, len8k;
};

static void count_all(struct qs_trace *t, struct counts *c)
{
	struct qs_io io;
	char err[256];
	int rc;
	memset(c, 0, sizeof(*c));
	while ((rc = qs_trace_next(t, &io, err, sizeof(err))) == 1) {
		c->n++;
		c->reads += io.op == QS_IO_READ;
		c->writes += io.op == QS_IO_WRITE;
		c->orig_bytes += io.orig_len;
		c->bytes += io.len;
		c->len8k += io.orig_len == 8192;
		assert_int_equal(io.off % 4096, 0);
		assert_int_equal(io.len % 4096, 0);
		/* outward rounding covers the original range */
		assert_true(io.len >= io.orig_len);
		if (io.timed) {
			assert_true(io.at_ns >= c->last_ns);
			c->last_ns = io.at_ns;
		}
	}
	if (rc < 0)
		fail_msg("%s", err);
}

static void test_mqsim_tpcc(void **state)
{
	(void)state;
	const char *p = sample("tpcc-small.trace");
	if (!p)
		skip();
	struct qs_trace_opts o = {.format = QS_TRACE_AUTO, .timescale = 1.0};
	struct qs_trace *t = open_ok(p, &o);
	assert_int_equal(qs_trace_format_of(t), QS_TRACE_MQSIM);
	struct counts c;
	count_all(t, &c);
	qs_trace_close(t);
	print_message("tpcc: %llu requests, %llu reads, %llu writes, %llu of 8 KiB, "
		      "last at %llu ns\n", (unsigned long long)c.n,
		      (unsigned long long)c.reads, (unsigned long long)c.writes,
		      (unsigned long long)c.len8k, (unsigned long long)c.last_ns);
	assert_int_equal(c.n, 6999);
	assert_int_equal(c.reads, 4381);
	assert_int_equal(c.writes, 2618);
	assert_true(c.len8k * 2 > c.n); /* "mostly 8 KiB" */
	/* first line 938513000, last 1075002000: ns since the first request */
	assert_int_equal(c.last_ns, 1075002000ull - 938513000ull);

	/* time scale halves the times; ignore_time drops them */
	o.timescale = 0.5;
	t = open_ok(p, &o);
	count_all(t, &c);
	qs_trace_close(t);
	assert_int_equal(c.last_ns, (1075002000ull - 938513000ull) / 2);
	o.ignore_time = true;
	t = open_ok(p, &o);
	struct qs_io io;
	char err[128];
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_false(io.timed);
	/* first line: 938513000 4 264719034 16 0 */
	assert_int_equal(io.op, QS_IO_WRITE);
	assert_int_equal(io.orig_off, 264719034ull * 512);
	assert_int_equal(io.orig_len, 16 * 512);
	assert_int_equal(io.off, 264719034ull * 512 / 4096 * 4096);
	/* 264719034 * 512 is 1 KiB past a 4 KiB boundary: 8 KiB spans 3 blocks */
	assert_int_equal(io.len, 12288);
	qs_trace_close(t);
}

static void test_mqsim_wsrch(void **state)
{
	(void)state;
	const char *p = sample("wsrch-small.trace");
	if (!p)
		skip();
	struct qs_trace_opts o = {.format = QS_TRACE_MQSIM, .timescale = 1.0};
	struct qs_trace *t = open_ok(p, &o);
	struct counts c;
	count_all(t, &c);
	qs_trace_close(t);
	print_message("wsrch: %llu requests, %llu reads\n", (unsigned long long)c.n,
		      (unsigned long long)c.reads);
	/* README.md says 24,782: that is `wc -l`, which misses the last
	 * line (it has no newline). The file holds 24,783 requests, 4 writes. */
	assert_int_equal(c.n, 24783);
	assert_int_equal(c.reads, 24779);
}

static void test_wrap_into_span(void **state)
{
	(void)state;
	const char *p = sample("tpcc-small.trace");
	if (!p)
		skip();
	const uint64_t so = 1ull << 30, sl = 256ull << 20;
	struct qs_trace_opts o = {.timescale = 1.0, .span_off = so, .span_len = sl};
	struct qs_trace *t = open_ok(p, &o);
	struct qs_io io;
	char err[128];
	int n = 0;
	while (qs_trace_next(t, &io, err, sizeof(err)) == 1) {
		assert_true(io.off >= so && io.off + io.len <= so + sl);
		n++;
	}
	assert_int_equal(n, 6999);
	qs_trace_close(t);
}

static void test_msr(void **state)
{
	(void)state;
	const char *p = write_tmp(
		"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
		"128166372003061629,hm,1,Read,3034603520,4096,4545\n"
		"128166372003061729,hm,1,Write,1000,100,300\n"
		"128166372013061629,hm,1,write,8192,65536,300\n");
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace *t = open_ok(p, &o);
	assert_int_equal(qs_trace_format_of(t), QS_TRACE_MSR);
	struct qs_io io;
	char err[256];
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_READ);
	assert_int_equal(io.off, 3034603520ull);
	assert_int_equal(io.len, 4096);
	assert_int_equal(io.at_ns, 0);
	assert_true(io.timed);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_WRITE);
	assert_int_equal(io.at_ns, 100 * 100); /* 100 filetime ticks of 100 ns */
	assert_int_equal(io.orig_off, 1000);
	assert_int_equal(io.orig_len, 100);
	assert_int_equal(io.off, 0);
	assert_int_equal(io.len, 4096);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.at_ns, 10000000ull * 100); /* one second */
	assert_int_equal(io.off, 8192);
	assert_int_equal(io.len, 65536);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 0);
	qs_trace_close(t);
}

static void test_iolog(void **state)
{
	(void)state;
	const char *p = write_tmp("fio version 2 iolog\n"
				  "/dev/sdb add\n"
				  "/dev/sdb open\n"
				  "/dev/sdb write 4096 8192\n"
				  "/dev/sdb read 6144 1024\n"
				  "/dev/sdb trim 1000 10000\n"
				  "/dev/sdb trim 100 200\n"
				  "/dev/sdb sync\n"
				  "/dev/sdb close\n");
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace *t = open_ok(p, &o);
	assert_int_equal(qs_trace_format_of(t), QS_TRACE_IOLOG);
	struct qs_io io;
	char err[256];
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_WRITE);
	assert_int_equal(io.off, 4096);
	assert_int_equal(io.len, 8192);
	assert_false(io.timed);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_READ);
	assert_int_equal(io.off, 4096);
	assert_int_equal(io.len, 4096);
	/* trim [1000, 11000) rounds inward to [4096, 8192) */
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_TRIM);
	assert_int_equal(io.off, 4096);
	assert_int_equal(io.len, 4096);
	assert_int_equal(io.orig_len, 10000);
	/* trim [100, 300) holds no whole block: skipped; then the sync */
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_SYNC);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 0);
	assert_int_equal(qs_trace_skipped(t), 4); /* add, open, small trim, close */
	qs_trace_close(t);
}

static void expect_bad(const char *text, enum qs_trace_format fmt, const char *where,
		       const char *what)
{
	const char *p = write_tmp(text);
	struct qs_trace_opts o = {.format = fmt, .timescale = 1.0};
	struct qs_trace *t = NULL;
	char err[256] = "";
	int rc = qs_trace_open(p, &o, &t, err, sizeof(err));
	struct qs_io io;
	if (rc == 0)
		while ((rc = qs_trace_next(t, &io, err, sizeof(err))) == 1)
			;
	qs_trace_close(t);
	if (rc != -EINVAL)
		fail_msg("rc %d (want -EINVAL) for '%s', err '%s'", rc, text, err);
	char needle[128];
	snprintf(needle, sizeof(needle), "%s%s", p, where);
	if (!strstr(err, needle) || !strstr(err, what))
		fail_msg("error '%s' lacks '%s' or '%s'", err, needle, what);
	teardown(NULL);
}

static void test_bad_lines(void **state)
{
	(void)state;
	expect_bad("1 0 8 8 1\n2 0 16 8 2\n", QS_TRACE_MQSIM, ":2:", "type '2'");
	expect_bad("1 0 8 8 1\n\n3 0 x 8 1\n", QS_TRACE_MQSIM, ":3:", "start_lba 'x'");
	expect_bad("1 0 8 8\n", QS_TRACE_MQSIM, ":1:", "5 fields");
	expect_bad("1 0 8 0 1\n", QS_TRACE_MQSIM, ":1:", "size");
	expect_bad("1,h,0,Read,0,4096,1\n2,h,0,Flush,0,4096,1\n", QS_TRACE_MSR, ":2:",
		   "Type 'Flush'");
	expect_bad("1,h,0,Read,0,4096\n", QS_TRACE_MSR, ":1:", "7 comma-separated");
	expect_bad("fio version 2 iolog\nf add\nf write 0\n", QS_TRACE_IOLOG, ":3:",
		   "OFFSET and LENGTH");
	expect_bad("fio version 2 iolog\nf erase 0 4096\n", QS_TRACE_IOLOG, ":2:",
		   "action 'erase'");
	expect_bad("fio version 3 iolog\n", QS_TRACE_IOLOG, ":1:", "version 2");
	/* issue 12: a stamp near 2^64 became 2^63 ns of virtual time, no warning */
	expect_bad("0 0 8 8 1\n18446744073709551615 0 16 8 1\n", QS_TRACE_MQSIM, ":2:",
		   "arrival_time 18446744073709551615 is 1.845e+10 s after");
	expect_bad("0,h,0,Read,0,4096,1\n18446744073709551615,h,0,Read,0,4096,1\n",
		   QS_TRACE_MSR, ":2:", "at most 365 days");
	/* issue 12: a 1 GB request failed later with no file or line */
	/* Control bytes were quoted raw (found by tests/fuzz/fuzz_trace.c). */
	expect_bad("1 0 8 8 1\n2 0 \x18\x1b[2J 8 1\n", QS_TRACE_MQSIM, ":2:",
		   "start_lba '\\x18\\x1b[2J'");
	expect_bad("1,h,0,Re\x01" "ad,0,4096,1\n", QS_TRACE_MSR, ":1:", "\\x01");
	expect_bad("1 0 8 8 1\n2 0 0 2097152 0\n", QS_TRACE_MQSIM, ":2:",
		   "request of 1073741824 bytes");
	expect_bad("fio version 2 iolog\nf write 0 1073741824\n", QS_TRACE_IOLOG, ":2:",
		   "at most 16777216 bytes");
	/* issue 12: an MQSim trace opening with a comment holding a comma was
	 * taken for MSR and failed at line 2 */
	expect_bad("# time, dev, lba, size, type\n1 0 8 8 1\n2 0 16 8 7\n", QS_TRACE_AUTO,
		   ":3:", "type '7'");
	/* issue 12: an iolog naming two files was merged onto one device */
	expect_bad("fio version 2 iolog\n/dev/a add\n/dev/b add\n/dev/a write 0 4096\n",
		   QS_TRACE_IOLOG, ":3:", "file '/dev/b' is a second file (the log names "
		   "'/dev/a' on line 2)");
}

/* issue 12: a directory read "read error" or "empty trace" */
static void test_not_a_file(void **state)
{
	(void)state;
	char dir[64], err[256] = "";
	struct qs_trace_opts o = {.format = QS_TRACE_AUTO, .timescale = 1.0};
	struct qs_trace *t = NULL;
	ttmp_dir(dir, sizeof(dir), "trace_dir");
	assert_int_equal(qs_trace_open(dir, &o, &t, err, sizeof(err)), -EINVAL);
	rmdir(dir);
	assert_null(t);
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, "not a trace file (a directory)"));
}

/* A trace job from a job file drives a workload stream. */
static void test_trace_job(void **state)
{
	(void)state;
	const char *p = sample("tpcc-small.trace");
	if (!p)
		skip();
	char text[700];
	snprintf(text, sizeof(text), "[tpcc]\ntrace=%s\ntrace_format=mqsim\n"
		 "trace_timescale=2\nsize=1g\n", p);
	const char *jp = write_tmp(text);
	struct qs_job_file *f;
	char err[256];
	int rc = qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	struct qs_wl *w;
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 1, &w, err, sizeof(err)), 0);
	struct qs_io io;
	uint64_t n = 0, last = 0;
	while ((rc = qs_wl_next(w, &io)) == 1) {
		n++;
		assert_true(io.off + io.len <= 1ull << 30);
		last = io.at_ns;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 6999);
	assert_int_equal(last, 2 * (1075002000ull - 938513000ull));
	qs_wl_close(w);
	qs_job_file_free(f);

	/* a missing trace is reported by path when the stream opens */
	snprintf(text, sizeof(text), "[x]\ntrace=/nonexistent/t.trace\n");
	jp = write_tmp(text);
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), 0);
	assert_int_equal(qs_wl_open(&f->jobs[0], 0, 1, &w, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/t.trace"));
	qs_job_file_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_mqsim_tpcc),
		cmocka_unit_test(test_mqsim_wsrch),
		cmocka_unit_test(test_wrap_into_span),
		cmocka_unit_test_teardown(test_msr, teardown),
		cmocka_unit_test_teardown(test_iolog, teardown),
		cmocka_unit_test_teardown(test_bad_lines, teardown),
		cmocka_unit_test_teardown(test_trace_job, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
