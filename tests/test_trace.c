/* SPDX-License-Identifier: MIT */
/*
 * Trace readers: the sample MQSim traces, MSR CSV, fio iolog v2, blktrace
 * binary files (made here from the documented struct blk_io_trace, and
 * checked against Debian's blkparse reading the same files), blkparse's
 * text, libCacheSim's CSV, CSV with a column map, format detection,
 * refusals with file and line, and the summary of qs_trace_scan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <byteswap.h>
#include <errno.h>
#include <linux/blktrace_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench/cmds.h"
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

/* A new temporary file holding text (the previous one is removed). */
static const char *write_tmp(const char *text)
{
	if (tmp[0])
		unlink(tmp);
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

/* ---- blktrace binary and blkparse text ---- */

/* One blktrace record to write: on which CPU's file, and what it holds. */
struct bt_ev {
	unsigned cpu;
	uint64_t time;
	uint32_t action;
	uint64_t sector;
	uint32_t bytes;
	const char *pdu;
	uint16_t pdu_len;
	uint32_t device; /* 0: 8,0 */
};

#define BT_Q(cat) (BLK_TA_QUEUE | BLK_TC_ACT(cat))
#define BT_ACT(ta, cat) ((ta) | BLK_TC_ACT(cat))

/* What a trace of two CPUs could hold: a process name, a write queued,
 * issued and completed, a read, a discard, an empty flush (FWS) and one
 * from a read (FN), a FUA write at sector 15, a write's GETRQ, a write
 * with a preflush, a SCSI pass-through, a message, a metadata read. */
static const struct bt_ev bt_events[] = {
	{0, 1000, BLK_TN_PROCESS, 0, 0, "dd", 3, 0},
	{0, 1000000, BT_Q(BLK_TC_WRITE | BLK_TC_SYNC), 2048, 4096, NULL, 0, 0},
	{0, 1000500, BT_ACT(BLK_TA_ISSUE, BLK_TC_WRITE | BLK_TC_SYNC), 2048, 4096, NULL, 0, 0},
	{0, 1100000, BT_ACT(BLK_TA_COMPLETE, BLK_TC_WRITE | BLK_TC_SYNC), 2048, 4096, NULL, 0, 0},
	{1, 2000000, BT_Q(BLK_TC_READ), 8, 65536, NULL, 0, 0},
	{1, 2500000, BT_Q(BLK_TC_WRITE | BLK_TC_DISCARD), 100, 8192, NULL, 0, 0},
	{0, 3000000, BT_Q(BLK_TC_WRITE | BLK_TC_FLUSH | BLK_TC_SYNC), 0, 0, NULL, 0, 0},
	{1, 4000000, BT_Q(BLK_TC_READ | BLK_TC_FLUSH), 0, 0, NULL, 0, 0},
	{1, 5000000, BT_Q(BLK_TC_WRITE | BLK_TC_FUA), 15, 4096, NULL, 0, 0},
	{1, 5500000, BT_ACT(BLK_TA_GETRQ, BLK_TC_WRITE), 15, 4096, NULL, 0, 0},
	{0, 6000000, BT_Q(BLK_TC_WRITE | BLK_TC_FLUSH | BLK_TC_SYNC), 4096, 4096, NULL, 0, 0},
	{1, 6500000, BT_Q(BLK_TC_READ | BLK_TC_PC), 0, 512, "\x28\0\0\0\0\0\0\0\1\0", 10, 0},
	{0, 7000000, BLK_TN_MESSAGE, 0, 0, "hello", 6, 0},
	{1, 8000000, BT_Q(BLK_TC_READ | BLK_TC_META), 1000000, 12288, NULL, 0, 0},
};

/* The requests of bt_events, in time order across both CPUs. */
static const struct bt_want {
	enum qs_io_op op;
	uint64_t orig_off, orig_len, at_ns;
} bt_want[] = {
	{QS_IO_WRITE, 2048 * 512, 4096, 0},
	{QS_IO_READ, 8 * 512, 65536, 1000000},
	{QS_IO_TRIM, 100 * 512, 8192, 1500000},
	{QS_IO_SYNC, 0, 0, 2000000},
	{QS_IO_SYNC, 0, 0, 3000000},
	{QS_IO_WRITE, 15 * 512, 4096, 4000000},
	{QS_IO_SYNC, 0, 0, 5000000}, /* the preflush, then its write */
	{QS_IO_WRITE, 4096 * 512, 4096, 5000000},
	{QS_IO_READ, 1000000ull * 512, 12288, 7000000},
};
#define BT_NWANT (sizeof(bt_want) / sizeof(bt_want[0]))

static void bt_put(FILE *f, const struct bt_ev *e, uint32_t seq, bool swap)
{
	struct blk_io_trace r = {
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.sequence = seq,
		.time = e->time,
		.sector = e->sector,
		.bytes = e->bytes,
		.action = e->action,
		.pid = 100,
		.device = e->device ? e->device : 8u << 20,
		.cpu = e->cpu,
		.pdu_len = e->pdu_len,
	};
	if (swap) {
		r.magic = bswap_32(r.magic);
		r.sequence = bswap_32(r.sequence);
		r.time = bswap_64(r.time);
		r.sector = bswap_64(r.sector);
		r.bytes = bswap_32(r.bytes);
		r.action = bswap_32(r.action);
		r.pid = bswap_32(r.pid);
		r.device = bswap_32(r.device);
		r.cpu = bswap_32(r.cpu);
		r.pdu_len = bswap_16(r.pdu_len);
	}
	assert_int_equal(fwrite(&r, sizeof(r), 1, f), 1);
	if (e->pdu_len)
		assert_int_equal(fwrite(e->pdu, 1, e->pdu_len, f), e->pdu_len);
}

/* Write the events of cpu (UINT_MAX: all) to path, in order. */
static void bt_write(const char *path, const struct bt_ev *ev, size_t n, unsigned cpu,
		     bool swap)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	uint32_t seq = 1;
	for (size_t i = 0; i < n; i++)
		if (cpu == UINT32_MAX || ev[i].cpu == cpu)
			bt_put(f, &ev[i], seq++, swap);
	assert_int_equal(fclose(f), 0);
}

static char bt_dir[64];

/* DIR/NAME.blktrace.0 and .1 of bt_events; the base DIR/NAME into base. */
static void bt_files(char *base, size_t n, const char *name, bool swap)
{
	char p[160];
	if (!bt_dir[0])
		ttmp_dir(bt_dir, sizeof(bt_dir), "blktrace");
	snprintf(base, n, "%s/%s", bt_dir, name);
	for (unsigned cpu = 0; cpu < 2; cpu++) {
		snprintf(p, sizeof(p), "%s.blktrace.%u", base, cpu);
		bt_write(p, bt_events, sizeof(bt_events) / sizeof(bt_events[0]), cpu, swap);
	}
}

static int bt_teardown(void **state)
{
	char cmd[128];
	(void)state;
	if (bt_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", bt_dir);
		assert_int_equal(system(cmd), 0);
	}
	bt_dir[0] = 0;
	return teardown(state);
}

/* The trace at path yields exactly want[0..n), with the 4 KiB mapping. */
static void expect_ios(const char *path, enum qs_trace_format fmt, enum qs_trace_format got,
		       const struct bt_want *want, size_t n)
{
	struct qs_trace_opts o = {.format = fmt, .timescale = 1.0};
	struct qs_trace *t = open_ok(path, &o);
	struct qs_io io;
	char err[512];
	int rc;
	size_t i = 0;
	assert_int_equal(qs_trace_format_of(t), got);
	while ((rc = qs_trace_next(t, &io, err, sizeof(err))) == 1) {
		if (i >= n)
			fail_msg("%s: request %zu beyond the %zu expected", path, i + 1, n);
		if (io.op != want[i].op || io.orig_off != want[i].orig_off ||
		    io.orig_len != want[i].orig_len || !io.timed || io.at_ns != want[i].at_ns)
			fail_msg("%s: request %zu: op %d off %llu len %llu at %llu, want op %d off "
				 "%llu len %llu at %llu", path, i + 1, io.op,
				 (unsigned long long)io.orig_off, (unsigned long long)io.orig_len,
				 (unsigned long long)io.at_ns, want[i].op,
				 (unsigned long long)want[i].orig_off,
				 (unsigned long long)want[i].orig_len,
				 (unsigned long long)want[i].at_ns);
		if (io.op != QS_IO_SYNC) {
			assert_int_equal(io.off % 4096, 0);
			assert_true(io.op == QS_IO_TRIM ? io.len <= io.orig_len
						       : io.len >= io.orig_len);
		}
		i++;
	}
	if (rc < 0)
		fail_msg("%s: %s", path, err);
	assert_int_equal(i, n);
	qs_trace_close(t);
}

/* blktrace -o NAME: the base name merges both CPUs' files by time, in
 * either byte order; one per-CPU file named alone is read alone. */
static void test_blktrace_binary(void **state)
{
	(void)state;
	char base[128], one[160];
	bt_files(base, sizeof(base), "le", false);
	expect_ios(base, QS_TRACE_AUTO, QS_TRACE_BLKTRACE, bt_want, BT_NWANT);
	expect_ios(base, QS_TRACE_BLKTRACE, QS_TRACE_BLKTRACE, bt_want, BT_NWANT);
	bt_files(base, sizeof(base), "be", true);
	expect_ios(base, QS_TRACE_AUTO, QS_TRACE_BLKTRACE, bt_want, BT_NWANT);

	snprintf(one, sizeof(one), "%s.blktrace.1", base);
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace *t = open_ok(one, &o);
	assert_int_equal(qs_trace_files(t), 1);
	assert_int_equal(qs_trace_siblings(t), 1);
	struct qs_io io;
	char err[256];
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.op, QS_IO_READ); /* CPU 1's first: the read */
	assert_int_equal(io.at_ns, 0);
	qs_trace_close(t);
	t = open_ok(base, &o);
	assert_int_equal(qs_trace_files(t), 2);
	assert_int_equal(qs_trace_siblings(t), 0);
	qs_trace_close(t);

	/* a cgroup's queue event carries its id in an 8-byte payload */
	const struct bt_ev cg[] = {
		{0, 500, BT_Q(BLK_TC_WRITE) | __BLK_TA_CGROUP, 8, 4096, "\1\0\0\0\0\0\0\0", 8, 0},
		{0, 900, BT_Q(BLK_TC_READ), 16, 4096, NULL, 0, 0},
	};
	const struct bt_want cg_want[] = {{QS_IO_WRITE, 4096, 4096, 0}, {QS_IO_READ, 8192, 4096, 400}};
	snprintf(one, sizeof(one), "%s/cg.bin", bt_dir);
	bt_write(one, cg, 2, UINT32_MAX, false);
	expect_ios(one, QS_TRACE_AUTO, QS_TRACE_BLKTRACE, cg_want, 2);
}

static bool have_blkparse(void)
{
	return system("blkparse -V >/dev/null 2>&1") == 0;
}

/*
 * Debian's blkparse reads the same files: its text output, read by the
 * blkparse reader, gives the same requests as the binary reader, for both
 * byte orders; its merged binary dump (-d) is one file that gives them too.
 */
static void test_blkparse_agrees(void **state)
{
	(void)state;
	char base[128], txt[192], txt2[192], dump[192], cmd[800];
	if (!have_blkparse()) {
		print_message("blkparse missing (scripts/deps.sh installs Debian's blktrace)\n");
		skip();
	}
	bt_files(base, sizeof(base), "le", false);
	snprintf(txt, sizeof(txt), "%s.txt", base);
	snprintf(dump, sizeof(dump), "%s.dump", base);
	snprintf(cmd, sizeof(cmd), "blkparse -i '%s' -d '%s' >'%s' 2>/dev/null", base, dump, txt);
	assert_int_equal(system(cmd), 0);
	expect_ios(txt, QS_TRACE_AUTO, QS_TRACE_BLKPARSE, bt_want, BT_NWANT);
	expect_ios(dump, QS_TRACE_AUTO, QS_TRACE_BLKTRACE, bt_want, BT_NWANT);

	bt_files(base, sizeof(base), "be", true);
	snprintf(txt2, sizeof(txt2), "%s.txt", base);
	snprintf(cmd, sizeof(cmd), "blkparse -i '%s' >'%s' 2>/dev/null", base, txt2);
	assert_int_equal(system(cmd), 0);
	expect_ios(txt2, QS_TRACE_BLKPARSE, QS_TRACE_BLKPARSE, bt_want, BT_NWANT);
	/* blkparse itself reads both byte orders alike (names aside) */
	snprintf(cmd, sizeof(cmd), "cmp -s <(grep -v 'le\\|be' '%s') <(grep -v 'le\\|be' '%s')",
		 txt, txt2);
	char sh[900];
	snprintf(sh, sizeof(sh), "bash -c \"%s\"", cmd);
	assert_int_equal(system(sh), 0);
}

/* A binary file that is not one, is cut, or holds two devices: refused
 * naming the file and the record. */
static void test_blktrace_bad(void **state)
{
	(void)state;
	char base[128], p[192], err[512];
	struct qs_trace_opts o = {.format = QS_TRACE_BLKTRACE, .timescale = 1.0};
	struct qs_trace *t = NULL;
	struct qs_io io;
	bt_files(base, sizeof(base), "bad", false);
	snprintf(p, sizeof(p), "%s.blktrace.0", base);

	/* cut inside its last record */
	FILE *f = fopen(p, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_int_equal(ftruncate(fileno(f), n - 10), 0);
	fclose(f);
	int rc = qs_trace_open(base, &o, &t, err, sizeof(err));
	while (rc == 0 && (rc = qs_trace_next(t, &io, err, sizeof(err))) == 1)
		rc = 0;
	qs_trace_close(t);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "record 7"));
	assert_non_null(strstr(err, "ends inside the record"));

	/* not blktrace's magic */
	const struct bt_ev one[] = {{0, 1, BT_Q(BLK_TC_READ), 0, 4096, NULL, 0, 0}};
	bt_write(p, one, 1, UINT32_MAX, false);
	f = fopen(p, "r+b");
	assert_int_equal(fwrite("XXXX", 1, 4, f), 4);
	fclose(f);
	assert_int_equal(qs_trace_open(p, &o, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "record 1 (byte 0): magic 0x58585858 is not blktrace's"));
	/* an older version */
	bt_write(p, one, 1, UINT32_MAX, false);
	f = fopen(p, "r+b");
	unsigned char v6 = 6;
	assert_int_equal(fwrite(&v6, 1, 1, f), 1);
	fclose(f);
	assert_int_equal(qs_trace_open(p, &o, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "version 6: allowed 7"));
	/* a payload past the end */
	const struct bt_ev pdu[] = {{0, 1, BLK_TN_MESSAGE, 0, 0, "hello", 6, 0}};
	bt_write(p, pdu, 1, UINT32_MAX, false);
	assert_int_equal(truncate(p, (off_t)sizeof(struct blk_io_trace) + 2), 0);
	assert_int_equal(qs_trace_open(p, &o, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "6 bytes of payload pass the end"));
	/* a second device */
	const struct bt_ev two[] = {{0, 1, BT_Q(BLK_TC_READ), 0, 4096, NULL, 0, 0},
				    {0, 2, BT_Q(BLK_TC_READ), 0, 4096, NULL, 0, (8u << 20) | 16}};
	bt_write(p, two, 2, UINT32_MAX, false);
	t = open_ok(p, &o);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), -EINVAL);
	qs_trace_close(t);
	assert_non_null(strstr(err, ": record 2: device 8,16 is a second device (the trace's "
				    "requests were on 8,0 from record 1 on)"));
	/* a base name with no files */
	snprintf(p, sizeof(p), "%s/none", bt_dir);
	assert_int_equal(qs_trace_open(p, &o, &t, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, p));
}

static void test_blkparse_bad(void **state)
{
	(void)state;
	static const char ok[] = "  8,0    0        1     0.000000000   100  Q  WS 2048 + 8 [dd]\n";
	char text[512];
	snprintf(text, sizeof(text), "%s  8,0    0        2     0.000000100   100  Q  XS 8 + 8 "
		 "[dd]\n", ok);
	expect_bad(text, QS_TRACE_AUTO, ":2:", "RWBS field 'XS'");
	snprintf(text, sizeof(text), "%sgarbage here\n", ok);
	expect_bad(text, QS_TRACE_BLKPARSE, ":2:", "not a blkparse event line");
	snprintf(text, sizeof(text), "%s  8,0    0        2     0.000000100   100  Q  W 8 - 8 "
		 "[dd]\n", ok);
	expect_bad(text, QS_TRACE_BLKPARSE, ":2:", "needs 'SECTOR + COUNT'");
	snprintf(text, sizeof(text), "%s  8,16   1        1     0.000000200   100  Q  R 8 + 8 "
		 "[dd]\n", ok);
	expect_bad(text, QS_TRACE_BLKPARSE, ":2:", "device 8,16 is a second device (the trace's "
		   "requests were on 8,0 from line 1 on)");
	/* the statistics at the end are not events */
	snprintf(text, sizeof(text), "%sCPU0 (sda):\n Reads Queued:  0,  0KiB\nTotal (sda):\n"
		 "Events (sda): 1 entries\nInput file sda.blktrace.0 added\n", ok);
	const struct bt_want w[] = {{QS_IO_WRITE, 2048 * 512, 4096, 0}};
	expect_ios(write_tmp(text), QS_TRACE_AUTO, QS_TRACE_BLKPARSE, w, 1);
}

/* ---- CSV ---- */

/* libCacheSim's layout is no MSR trace (issue 13: auto-detection took it
 * for one and failed, after filling the drive). */
static void test_libcachesim(void **state)
{
	(void)state;
	static const char text[] = "version,time,op,size,lbn\n"
				   "1,33898,2a,512,42932745\n"
				   "1,33898,28,4096,42932746\n"
				   "1,33899,35,0,0\n"
				   "1,33900,12,36,0\n" /* INQUIRY: no data to replay */
				   "1,33901.5,0x8a,8192,16\n";
	const struct bt_want w[] = {
		{QS_IO_WRITE, 42932745ull * 512, 512, 0},
		{QS_IO_READ, 42932746ull * 512, 4096, 0},
		{QS_IO_SYNC, 0, 0, 1000000000},
		{QS_IO_WRITE, 16 * 512, 8192, 3500000000ull},
	};
	const char *p = write_tmp(text);
	expect_ios(p, QS_TRACE_AUTO, QS_TRACE_LCS, w, 4);
	expect_ios(write_tmp(strchr(text, '\n') + 1), QS_TRACE_AUTO, QS_TRACE_LCS, w, 4);
	expect_bad("version,time,op,size,lbn\n1,1,2a,512,8\n1,2,zz,512,8\n", QS_TRACE_AUTO, ":3:",
		   "op 'zz': allowed a SCSI opcode in hex");
	expect_bad("1,1,2a,512,8\n1,-2,2a,512,8\n", QS_TRACE_AUTO, ":2:", "time '-2'");
	expect_bad("1,1,2a,512,8\n1,2,2a,512\n", QS_TRACE_LCS, ":2:", "expected 5 comma-separated");
}

static void columns_bad(const char *spec, const char *why)
{
	struct qs_trace_cols c;
	char err[256] = "";
	assert_int_equal(qs_trace_columns_parse(spec, &c, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why))
		fail_msg("columns '%s': error '%s' lacks '%s'", spec, err, why);
}

static void test_columns(void **state)
{
	(void)state;
	struct qs_trace_cols c;
	char err[256];
	assert_int_equal(qs_trace_columns_parse("time:5:us,op:2,offset:3:sector,size:4:B", &c, err,
						sizeof(err)), 0);
	assert_int_equal(c.col[QS_TF_TIME], 5);
	assert_int_equal(c.unit[QS_TF_TIME], 1000);
	assert_int_equal(c.col[QS_TF_OFFSET], 3);
	assert_int_equal(c.unit[QS_TF_OFFSET], 512);
	assert_int_equal(c.unit[QS_TF_SIZE], 1);
	assert_int_equal(c.opcode, QS_TOP_NAME);
	assert_int_equal(qs_trace_columns_parse("op:1:scsi,offset:2:4096,size:3:KiB", &c, err,
						sizeof(err)), 0);
	assert_int_equal(c.col[QS_TF_TIME], 0);
	assert_int_equal(c.unit[QS_TF_OFFSET], 4096);
	assert_int_equal(c.unit[QS_TF_SIZE], 1024);
	assert_int_equal(c.opcode, QS_TOP_SCSI);
	columns_bad("time:1,op:2,offset:3,size:4", "time needs a unit");
	columns_bad("tme:1:s,op:2,offset:3,size:4", "field 'tme'");
	columns_bad("op:2,offset:3,size:3", "column 3 is both offset and size");
	columns_bad("op:2,offset:3", "needs op, offset and size");
	columns_bad("op:0,offset:3,size:4", "a column from 1 to 64");
	columns_bad("op:2:hex,offset:3,size:4", "unit 'hex': op's encoding");
	columns_bad("op:2,offset:3:parsec,size:4", "unit 'parsec': offset's unit");
	columns_bad("op:2,op:3,offset:4,size:5", "field op given twice");
}

static struct qs_trace_opts csv_opts(const char *spec)
{
	struct qs_trace_opts o = {.format = QS_TRACE_AUTO, .timescale = 1.0};
	char err[256];
	if (qs_trace_columns_parse(spec, &o.cols, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	return o;
}

/* A CSV placed by a column map: its header skipped, units applied; and
 * the MSR layout read through a map gives what the MSR reader gives. */
static void test_csv(void **state)
{
	(void)state;
	const char *p = write_tmp("device_id,opcode,offset,length,timestamp\n"
				  "3,W,8192,4096,1000000\n"
				  "3,R,0,512,1000250.5\n"
				  "3,F,0,0,1000500\n"
				  "3,discard,4096,8192,1002000\n");
	struct qs_trace_opts o = csv_opts("op:2,offset:3,size:4,time:5:us");
	struct qs_trace *t = open_ok(p, &o);
	assert_int_equal(qs_trace_format_of(t), QS_TRACE_CSV);
	const struct bt_want w[] = {
		{QS_IO_WRITE, 8192, 4096, 0},
		{QS_IO_READ, 0, 512, 250500},
		{QS_IO_SYNC, 0, 0, 500000},
		{QS_IO_TRIM, 4096, 8192, 2000000},
	};
	struct qs_io io;
	char err[256];
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
		assert_int_equal(io.op, w[i].op);
		assert_int_equal(io.orig_off, w[i].orig_off);
		assert_int_equal(io.orig_len, w[i].orig_len);
		assert_int_equal(io.at_ns, w[i].at_ns);
	}
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 0);
	qs_trace_close(t);

	p = write_tmp("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
		      "128166372003061629,hm,1,Read,3034603520,4096,4545\n"
		      "128166372003061729,hm,1,Write,1000,100,300\n");
	struct qs_trace_opts msr = {.format = QS_TRACE_MSR, .timescale = 1.0};
	struct qs_trace *a = open_ok(p, &msr);
	o = csv_opts("time:1:100ns,op:4,offset:5,size:6");
	struct qs_trace *b = open_ok(p, &o);
	struct qs_io x, y;
	int ra, rb;
	while ((ra = qs_trace_next(a, &x, err, sizeof(err))) == 1 &&
	       (rb = qs_trace_next(b, &y, err, sizeof(err))) == 1)
		assert_memory_equal(&x, &y, sizeof(x));
	assert_int_equal(ra, 0);
	qs_trace_close(a);
	qs_trace_close(b);

	/* csv without a map has nothing to read its columns by */
	struct qs_trace_opts nomap = {.format = QS_TRACE_CSV, .timescale = 1.0};
	assert_int_equal(qs_trace_open(p, &nomap, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a column map"));

	/* refusals name the line, the column and what is allowed */
	const char *bad[][3] = {
		{"1,W,0\n", ":1:", "3 comma-separated fields: trace_columns needs 4"},
		{"1,W,0,4096\n1,X,0,4096\n", ":2:", "column 2 (op) 'X': allowed read, r"},
		{"1,W,0,4096\n1,W,abc,4096\n", ":2:", "column 3 (offset) 'abc'"},
		{"1,W,0,4096\n1,W,0,-1\n", ":2:", "column 4 (size) '-1'"},
	};
	for (size_t i = 0; i < 4; i++) {
		p = write_tmp(bad[i][0]);
		o = csv_opts("time:1:s,op:2,offset:3,size:4");
		int rc = qs_trace_open(p, &o, &t, err, sizeof(err));
		while (rc == 0 && (rc = qs_trace_next(t, &io, err, sizeof(err))) == 1)
			rc = 0;
		qs_trace_close(t);
		assert_int_equal(rc, -EINVAL);
		if (!strstr(err, bad[i][1]) || !strstr(err, bad[i][2]))
			fail_msg("'%s': error '%s'", bad[i][0], err);
	}
}

/* A first line of no known format is refused at open, naming it. */
static void test_detect(void **state)
{
	(void)state;
	expect_bad("hello world\n", QS_TRACE_AUTO, ":1:", "trace format not recognised from "
		   "its first line 'hello world'");
	expect_bad("# a comment\n\n1,2,3,4,5,6\n", QS_TRACE_AUTO, ":3:",
		   "(comma-separated, but neither MSR's 7 fields nor libCacheSim's 5)");
	expect_bad("1 2 3 4\n", QS_TRACE_AUTO, ":1:", "allowed: mqsim (5 numbers)");
	const char *p = write_tmp("  8,0    0        1     0.000000000   100  Q  WS 2048 + 8 [dd]\n");
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace *t = open_ok(p, &o);
	assert_int_equal(qs_trace_format_of(t), QS_TRACE_BLKPARSE);
	qs_trace_close(t);
	/* FIFOs are read only once; a bench run reads its trace twice. Refused
	 * without being opened: with no writer, opening it would wait. */
	char fifo[80];
	snprintf(fifo, sizeof(fifo), "%s.fifo", p);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	char err[512];
	assert_int_equal(qs_trace_open(fifo, &o, &t, err, sizeof(err)), -EINVAL);
	unlink(fifo);
	assert_non_null(strstr(err, "a FIFO"));
}

/* trace_timescale reaches from seconds to nanoseconds (issue 13: it was
 * capped at 1e6). */
static void test_timescale(void **state)
{
	(void)state;
	const char *p = write_tmp("1 0 8 8 1\n3 0 16 8 1\n");
	struct qs_trace_opts o = {.format = QS_TRACE_MQSIM, .timescale = 1e9};
	struct qs_trace *t = open_ok(p, &o);
	struct qs_io io;
	char err[256];
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(qs_trace_next(t, &io, err, sizeof(err)), 1);
	assert_int_equal(io.at_ns, 2000000000ull);
	qs_trace_close(t);
	o.timescale = 2e12;
	assert_int_equal(qs_trace_open(p, &o, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 1e+12"));

	char text[300];
	struct qs_job_file *f;
	snprintf(text, sizeof(text), "[t]\ntrace=%s\ntrace_timescale=1e9\n", p);
	const char *jp = write_tmp(text);
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), 0);
	assert_true(f->jobs[0].trace_timescale == 1e9);
	qs_job_file_free(f);
	snprintf(text, sizeof(text), "[t]\ntrace=x\ntrace_timescale=2e12\n");
	jp = write_tmp(text);
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: [t] key 'trace_timescale'"));
}

/* trace_columns in a job file: parsed, refused naming the line and why,
 * and only with the csv format. */
static void test_job_columns(void **state)
{
	(void)state;
	struct qs_job_file *f;
	char err[600];
	const char *jp = write_tmp("[t]\ntrace=x.csv\ntrace_columns=op:1,offset:2:sector,size:3\n");
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), 0);
	assert_int_equal(f->jobs[0].trace_cols.unit[QS_TF_OFFSET], 512);
	assert_int_equal(f->jobs[0].trace_line, 2);
	assert_string_equal(f->jobs[0].trace_file, jp);
	qs_job_file_free(f);
	jp = write_tmp("[t]\ntrace=x.csv\ntrace_columns=op:1,offset:2:furlong,size:3\n");
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: [t] key 'trace_columns'"));
	assert_non_null(strstr(err, "unit 'furlong': offset's unit"));
	jp = write_tmp("[t]\ntrace=x.csv\ntrace_format=msr\ntrace_columns=op:1,offset:2,size:3\n");
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":4: [t] key 'trace_columns': allowed only with "
				    "trace_format=csv"));
	jp = write_tmp("[t]\ntrace=x.csv\ntrace_format=csv\n");
	assert_int_equal(qs_job_file_load(jp, 8ull << 30, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: [t] key 'trace' with trace_format=csv: needs "
				    "trace_columns"));
}

/* ---- the summary ---- */

/*
 * Ten 4 KiB writes at sectors 63, 71, ...: a partition starting at sector
 * 63, which the summary names; two reads. Footprint: the writes cover
 * blocks 7 to 17, the first read blocks 7 and 8 again, the second one new
 * block 100: 12 blocks.
 */
static void test_summary(void **state)
{
	(void)state;
	char text[600], line[1500], err[256];
	size_t n = 0;
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d 0 %d 8 0\n", i * 1000,
				      63 + 8 * i);
	snprintf(text + n, sizeof(text) - n, "20000 0 56 16 1\n2000000 0 800 8 1\n");
	const char *p = write_tmp(text);
	struct qs_trace_opts o = {.format = QS_TRACE_AUTO, .timescale = 0.5};
	struct qs_trace_summary s;
	assert_int_equal(qs_trace_scan(p, &o, 65536, &s, err, sizeof(err)), 0);
	assert_int_equal(s.format, QS_TRACE_MQSIM);
	assert_int_equal(s.writes, 10);
	assert_int_equal(s.reads, 2);
	assert_int_equal(s.writes_4k, 0);
	assert_int_equal(s.writes_iu, 0);
	assert_int_equal(s.write_mod8[7], 10);
	assert_int_equal(s.footprint_blocks, 12);
	assert_int_equal(s.size_hist[3], 11); /* <= 4K: the writes and one read */
	assert_int_equal(s.size_hist[4], 1);
	assert_int_equal(s.max_io, 8192); /* a misaligned 4 KiB write spans two blocks */
	assert_int_equal(s.max_end, 808 * 512);
	assert_int_equal(s.duration_ns, 1000000); /* 2 ms at half the time */
	unsigned k;
	double share;
	assert_true(qs_trace_summary_misaligned(&s, &k, &share));
	assert_int_equal(k, 7);
	assert_true(share == 100.0);
	qs_trace_summary_format(&s, line, sizeof(line));
	print_message("%s\n", line);
	const char *want[] = {
		"12 requests: 2 reads, 10 writes",
		"sizes <=4K 91.7% <=8K 8.3%",
		"writes aligned to 4 KiB 0.0%, to the 64 KiB IU 0.0%",
		"MISALIGNED: 100.0% of writes start at sector 7 mod 8, as on a partition starting "
		"7 sectors past a 4 KiB boundary (such as sector 63)",
		"footprint 49.2 KB", "duration 0.002 s (0.001 s at trace_timescale 0.5)",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(line, want[i]))
			fail_msg("summary '%s' lacks '%s'", line, want[i]);

	/* whole aligned IUs: every share 100%, no misalignment, untimed */
	p = write_tmp("fio version 2 iolog\nf write 0 65536\nf write 131072 131072\n"
		      "f trim 0 65536\nf sync\n");
	assert_int_equal(qs_trace_scan(p, &o, 65536, &s, err, sizeof(err)), 0);
	qs_trace_summary_format(&s, line, sizeof(line));
	assert_int_equal(s.writes_iu, 2);
	assert_false(qs_trace_summary_misaligned(&s, &k, &share));
	const char *want2[] = {"4 requests: 0 reads, 2 writes, 1 trims, 1 flushes",
			       "4 KiB 100.0%, to the 64 KiB IU 100.0%", "; untimed"};
	for (size_t i = 0; i < 3; i++)
		if (!strstr(line, want2[i]))
			fail_msg("summary '%s' lacks '%s'", line, want2[i]);
	assert_null(strstr(line, "MISALIGNED"));
}

/* The sample: its counts, and its writes' offsets, 71% of them at sector 2
 * mod 8 (an MQSim trace's own LBAs). */
static void test_summary_tpcc(void **state)
{
	(void)state;
	const char *p = sample("tpcc-small.trace");
	if (!p)
		skip();
	struct qs_trace_opts o = {.format = QS_TRACE_AUTO, .timescale = 1.0};
	struct qs_trace_summary s;
	char err[256], line[1500];
	unsigned k;
	double share;
	assert_int_equal(qs_trace_scan(p, &o, 65536, &s, err, sizeof(err)), 0);
	assert_int_equal(s.reads, 4381);
	assert_int_equal(s.writes, 2618);
	assert_int_equal(s.duration_ns, 1075002000ull - 938513000ull);
	assert_true(qs_trace_summary_misaligned(&s, &k, &share));
	assert_int_equal(k, 2);
	print_message("%s\n", qs_trace_summary_format(&s, line, sizeof(line)));
	/* a refusal is the reader's, with its line */
	assert_int_equal(qs_trace_scan(write_tmp("1 0 8 8 1\n2 0 8 8 9\n"), &o, 65536, &s, err,
				       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: field type '9'"));
}

/* An MQSim trace whose requests show each rule of the mapping in a 64 KiB
 * span: a write rounded outward (512 + 4096 bytes: [0, 8192)), an aligned
 * read, a write at 1 MiB wrapped to 0, a write rounded out to [61440,
 * 69632) that would straddle the span's end, moved back to end there, a
 * read at 68 KiB wrapped to 4 KiB. Times in ns: 0, 1 ms, 2500.4 us,
 * 2500.6 us, 7 ms. */
static const char export_mqsim[] = "0 0 1 8 0\n"
				   "1000000 0 16 8 1\n"
				   "2500400 0 2048 16 0\n"
				   "2500600 0 126 4 0\n"
				   "7000000 0 136 8 1\n";

/* qs_trace_export of path into a string (*text, the caller frees it). */
static int export_str(const char *path, const struct qs_trace_opts *o,
		      const struct qs_trace_export_opts *eo, char **text,
		      struct qs_trace_export_result *res, char *err, size_t errlen)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	assert_non_null(f);
	int rc = qs_trace_export(path, o, eo, f, res, err, errlen);
	assert_int_equal(fclose(f), 0);
	return rc;
}

/* The exact iolog, version 2 and 3, of the trace above in a 64 KiB span. */
static void test_export_text(void **state)
{
	(void)state;
	const char *p = write_tmp(export_mqsim);
	struct qs_trace_opts o = {.timescale = 1.0, .span_len = 65536};
	struct qs_trace_export_opts eo = {.file = "qlc"};
	struct qs_trace_export_result r;
	char err[256], *text;
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), 0);
	assert_string_equal(text, "fio version 2 iolog\n"
				  "qlc add\n"
				  "qlc open\n"
				  "qlc write 0 8192\n"
				  "qlc read 8192 4096\n"
				  "qlc write 0 8192\n"
				  "qlc write 57344 8192\n"
				  "qlc read 4096 4096\n"
				  "qlc close\n");
	free(text);
	assert_int_equal(r.format, QS_TRACE_MQSIM);
	assert_int_equal(r.lines[QS_IO_READ], 2);
	assert_int_equal(r.lines[QS_IO_WRITE], 3);
	assert_int_equal(r.lines[QS_IO_TRIM] + r.lines[QS_IO_SYNC] + r.skipped, 0);
	assert_false(r.out_failed);

	/* version 3: microseconds, rounded, plus 1 (fio waits nothing after
	 * a line stamped 0); the file's lines at 0 and at the last request */
	eo = (struct qs_trace_export_opts){.file = "/dev/x", .timed = true};
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), 0);
	assert_string_equal(text, "fio version 3 iolog\n"
				  "0 /dev/x add\n"
				  "0 /dev/x open\n"
				  "1 /dev/x write 0 8192\n"
				  "1001 /dev/x read 8192 4096\n"
				  "2501 /dev/x write 0 8192\n"
				  "2502 /dev/x write 57344 8192\n"
				  "7001 /dev/x read 4096 4096\n"
				  "7001 /dev/x close\n");
	free(text);
	/* trace_timescale 2: twice as slow */
	o.timescale = 2;
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), 0);
	assert_non_null(strstr(text, "\n2001 /dev/x read 8192 4096\n5002 /dev/x write 0 8192\n"
				     "5002 /dev/x write 57344 8192\n14001 /dev/x read 4096"));
	free(text);
}

/* A timed export of a trace without times is refused before anything is
 * written, saying why; so is a file name fio would not read back. */
static void test_export_refusals(void **state)
{
	(void)state;
	struct qs_trace_opts o = {.timescale = 1.0};
	struct qs_trace_export_opts eo = {.file = "qlc", .timed = true};
	struct qs_trace_export_result r;
	char err[256], *text;
	const char *p = write_tmp("fio version 2 iolog\nf add\nf write 0 4096\n");
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(text, "");
	free(text);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, "needs time stamps, and the trace has none (a fio iolog "
				    "version 2 has none)"));

	p = write_tmp(export_mqsim);
	o.ignore_time = true;
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), -EINVAL);
	free(text);
	assert_non_null(strstr(err, "(trace_ignore_time is set)"));

	p = write_tmp("w,0,4096\n");
	o = csv_opts("op:1,offset:2,size:3");
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), -EINVAL);
	free(text);
	assert_non_null(strstr(err, "(its column map has no time column)"));

	/* a bad line: the reader's refusal, with the trace's file and line */
	o = (struct qs_trace_opts){.timescale = 1.0};
	eo.timed = false;
	p = write_tmp("0 0 8 8 1\n1 0 8 8 5\n");
	assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), -EINVAL);
	free(text);
	char want[128];
	snprintf(want, sizeof(want), "%s:2: field type '5'", p);
	assert_non_null(strstr(err, want));

	const char *names[] = {"", "a b", "a\tb"};
	for (size_t i = 0; i < 3; i++) {
		eo.file = names[i];
		assert_int_equal(export_str(p, &o, &eo, &text, &r, err, sizeof(err)), -EINVAL);
		free(text);
		assert_non_null(strstr(err, "allowed 1 to 256 bytes without blanks"));
	}

	/* a failed write is the output's, not the trace's */
	FILE *full = fopen("/dev/full", "w");
	if (!full)
		return;
	setvbuf(full, NULL, _IONBF, 0);
	eo.file = "qlc";
	p = write_tmp(export_mqsim);
	assert_int_equal(qs_trace_export(p, &o, &eo, full, &r, err, sizeof(err)), -ENOSPC);
	fclose(full);
	assert_true(r.out_failed);
	assert_non_null(strstr(err, "writing the iolog: No space left on device"));
}

/* Each request the reader yields, compared. */
static void same_requests(struct qs_trace *a, struct qs_trace *b)
{
	struct qs_io x, y;
	char err[256];
	int ra, rb;
	uint64_t n = 0;
	while ((ra = qs_trace_next(a, &x, err, sizeof(err))) == 1) {
		assert_int_equal(rb = qs_trace_next(b, &y, err, sizeof(err)), 1);
		assert_int_equal(x.op, y.op);
		assert_int_equal(x.off, y.off);
		assert_int_equal(x.len, y.len);
		n++;
	}
	assert_int_equal(ra, 0);
	assert_int_equal(qs_trace_next(b, &y, err, sizeof(err)), 0);
	assert_true(n > 0);
}

/* The exported iolog, read back as a trace, yields the requests the
 * original yields with the same options: a csv with a trim, a sub-block
 * trim (skipped) and a flush, and the MQSim sample in an 8 GiB span. */
static void export_reread(const char *path, const struct qs_trace_opts *o)
{
	struct qs_trace_export_opts eo = {.file = "/dev/qlc"};
	struct qs_trace_export_result r;
	char err[256], *text, log[64];
	assert_int_equal(export_str(path, o, &eo, &text, &r, err, sizeof(err)), 0);
	ttmp_file(log, sizeof(log), "export", ".iolog", text);
	free(text);
	struct qs_trace_opts io = {.format = QS_TRACE_IOLOG, .timescale = 1.0};
	struct qs_trace *a = open_ok(path, o), *b = open_ok(log, &io);
	same_requests(a, b);
	assert_int_equal(qs_trace_skipped(b), 3); /* add, open, close */
	qs_trace_close(a);
	qs_trace_close(b);
	unlink(log);
}

static void test_export_reread(void **state)
{
	(void)state;
	struct qs_trace_opts o = csv_opts("op:2,offset:3,size:4,time:5:us");
	o.span_len = 1 << 20;
	export_reread(write_tmp("device_id,opcode,offset,length,timestamp\n"
				"3,W,8192,4096,1000000\n"
				"3,R,1048000,512,1000250.5\n"
				"3,F,0,0,1000500\n"
				"3,discard,4000,9000,1002000\n"
				"3,discard,100,200,1002000\n"
				"3,W,3000000,70000,1003000\n"),
		      &o);
	const char *p = sample("tpcc-small.trace");
	if (!p)
		return;
	o = (struct qs_trace_opts){.timescale = 1.0, .span_len = 8ull << 30};
	export_reread(p, &o);
}

/* The file OUT holds, or NULL (the caller frees it). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	if (!f)
		return NULL;
	if (getdelim(&buf, &cap, 0, f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

/* qlcshape bench trace-export ARGS... (NULL-ended): the exit status, its
 * standard error into *err (the caller frees it). */
static int export_cmd(char **err, ...)
{
	char *argv[16] = {"trace-export"};
	int n = 1;
	va_list ap;
	va_start(ap, err);
	while (n < 15 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return ttmp_stderr(qs_cmd_bench_trace_export, argv, err);
}

/* The command: OUT written whole through OUT.tmp, the summary line; exit
 * status 2 for bad options or a bad trace, 1 for an OUT it cannot write,
 * and no OUT or OUT.tmp after a failure. */
static void test_export_cmd(void **state)
{
	(void)state;
	char dir[64], out[128], tmpout[140], *err, *text;
	ttmp_dir(dir, sizeof(dir), "export");
	snprintf(out, sizeof(out), "%s/t.iolog", dir);
	snprintf(tmpout, sizeof(tmpout), "%s.tmp", out);
	char *p = strdup(write_tmp(export_mqsim));
	assert_int_equal(export_cmd(&err, p, "--span", "64k", "--file", "/dev/sdz", "--timed",
				    "-o", out, NULL), 0);
	assert_non_null(strstr(err, "(mqsim): 5 requests written to"));
	assert_non_null(strstr(err, "as fio iolog version 3: 2 reads, 3 writes, 0 trims, 0 "
				    "syncs; 0 records skipped"));
	free(err);
	assert_non_null(text = slurp(out));
	assert_non_null(strstr(text, "fio version 3 iolog\n0 /dev/sdz add\n0 /dev/sdz open\n"
				     "1 /dev/sdz write 0 8192\n"));
	assert_non_null(strstr(text, "2502 /dev/sdz write 57344 8192\n"));
	free(text);
	assert_int_not_equal(access(tmpout, F_OK), 0);
	unlink(out);

	const char *bad[][4] = {
		{"--span", "1000", "--span '1000': allowed a size above 0, a multiple of 4k", NULL},
		{"--timescale", "2", "--timescale: only with --timed", NULL},
		{"--format", "mqsim", "--columns: only with --format csv (or auto), not mqsim",
		 "op:1,offset:2,size:3"},
		{"--format", "tar", "--format 'tar': allowed auto, mqsim", NULL},
		{"--file", "a b", "file name 'a b' for the iolog", NULL},
	};
	for (size_t i = 0; i < 5; i++) {
		int st = bad[i][3] ? export_cmd(&err, p, bad[i][0], bad[i][1], "--columns",
						bad[i][3], "-o", out, NULL)
				   : export_cmd(&err, p, bad[i][0], bad[i][1], "-o", out, NULL);
		if (st != 2 || !strstr(err, bad[i][2]))
			fail_msg("%s %s: status %d, '%s'", bad[i][0], bad[i][1], st, err);
		free(err);
	}
	assert_int_equal(export_cmd(&err, NULL), 2);
	assert_non_null(strstr(err, "missing TRACE"));
	free(err);

	/* a bad line at the end: no OUT, no OUT.tmp */
	free(p);
	p = strdup(write_tmp("0 0 8 8 1\n1 0 8 8 0\n2 0 8 0 1\n"));
	assert_int_equal(export_cmd(&err, p, "-o", out, NULL), 2);
	assert_non_null(strstr(err, ":3: start_lba 8 size_in_sectors 0"));
	free(err);
	assert_int_not_equal(access(out, F_OK), 0);
	assert_int_not_equal(access(tmpout, F_OK), 0);
	/* --timed on an untimed trace */
	free(p);
	p = strdup(write_tmp("fio version 2 iolog\nf add\nf write 0 4096\n"));
	assert_int_equal(export_cmd(&err, p, "--timed", "-o", out, NULL), 2);
	assert_non_null(strstr(err, "a timed iolog (version 3) needs time stamps"));
	free(err);
	assert_int_not_equal(access(out, F_OK), 0);
	/* an OUT that cannot be written: status 1, naming it */
	char nodir[160];
	snprintf(nodir, sizeof(nodir), "%s/none/t.iolog", dir);
	assert_int_equal(export_cmd(&err, p, "-o", nodir, NULL), 1);
	assert_non_null(strstr(err, "cannot write"));
	assert_non_null(strstr(err, "none/t.iolog.tmp"));
	free(err);
	free(p);
	rmdir(dir);
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
		cmocka_unit_test_teardown(test_blktrace_binary, bt_teardown),
		cmocka_unit_test_teardown(test_blkparse_agrees, bt_teardown),
		cmocka_unit_test_teardown(test_blktrace_bad, bt_teardown),
		cmocka_unit_test_teardown(test_blkparse_bad, teardown),
		cmocka_unit_test_teardown(test_libcachesim, teardown),
		cmocka_unit_test(test_columns),
		cmocka_unit_test_teardown(test_csv, teardown),
		cmocka_unit_test_teardown(test_detect, teardown),
		cmocka_unit_test_teardown(test_timescale, teardown),
		cmocka_unit_test_teardown(test_job_columns, teardown),
		cmocka_unit_test_teardown(test_summary, teardown),
		cmocka_unit_test_teardown(test_summary_tpcc, teardown),
		cmocka_unit_test_teardown(test_export_text, teardown),
		cmocka_unit_test_teardown(test_export_refusals, teardown),
		cmocka_unit_test_teardown(test_export_reread, teardown),
		cmocka_unit_test_teardown(test_export_cmd, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
