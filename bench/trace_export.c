/* SPDX-License-Identifier: MIT */
/*
 * qlcshape bench trace-export: a trace the bench reads, written as a fio
 * iolog with the bench's own mapping, so that fio's read_iolog replays on
 * a real device the very requests the bench simulates. The mapping is
 * qs_trace_next's (bench/trace.h): there is one piece of code for it (the
 * VM comparison, tests/vm/peers.sh, used to carry an awk copy).
 *
 * What fio does with the log (fio 3.33's iolog.c, and /usr/bin/fio 3.33
 * run on a file): it opens the file each line names, relative to its
 * working directory (its --filename does not change that), unless
 * replay_redirect=DEV sends every line to DEV; a sync needs OFFSET and
 * LENGTH (with fewer fields a line is a file action, and "sync" is no
 * file action); trim lines are dropped with "bad ddir: 2" before fio 3.34;
 * version 3 stamps are microseconds.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "job.h"
#include "trace.h"
#include "host/text.h"

#define TE_CMD "bench trace-export"
#define TE_DEFAULT_FILE "qlc"
/* fio reads a line's file name with %256s. */
#define TE_MAX_FILE 256

static const char *const te_actions[QS_IO_SYNC + 1] = {
	[QS_IO_READ] = "read",
	[QS_IO_WRITE] = "write",
	[QS_IO_TRIM] = "trim",
	[QS_IO_SYNC] = "sync",
};

/* fprintf to out: 0 or -errno. */
__attribute__((format(printf, 2, 3))) static int te_put(FILE *out, const char *fmt, ...)
{
	va_list ap;
	errno = 0;
	va_start(ap, fmt);
	int n = vfprintf(out, fmt, ap);
	va_end(ap);
	return n < 0 ? -(errno ? errno : EIO) : 0;
}

/*
 * A request's version 3 stamp: its time in microseconds, rounded, plus 1.
 * Why the 1: fio (delay_since_ttime, 3.33 as today) waits nothing before a
 * line whose predecessor is stamped 0, so the gap between a trace's first
 * request (always at 0) and its second would be lost. The header's lines
 * keep 0; every request is at 1 or later.
 */
static uint64_t te_stamp_us(const struct qs_io *io)
{
	return (io->at_ns + 500) / 1000 + 1;
}

/* A line's stamp and its blank in buf for version 3; "" for version 2. */
static const char *te_stamp(const struct qs_trace_export_opts *eo, uint64_t us, char *buf,
			    size_t len)
{
	if (!eo->timed)
		return "";
	snprintf(buf, len, "%" PRIu64 " ", us);
	return buf;
}

/* "FILE add|open|close", stamped us in version 3: 0 or -errno. */
static int te_file_line(FILE *out, const struct qs_trace_export_opts *eo, uint64_t us,
			const char *action)
{
	char s[24];
	return te_put(out, "%s%s %s\n", te_stamp(eo, us, s, sizeof(s)), eo->file, action);
}

/* The header, then the file's add and open at time 0: 0 or -errno. */
static int te_head(FILE *out, const struct qs_trace_export_opts *eo)
{
	int rc = te_put(out, "fio version %d iolog\n", eo->timed ? 3 : 2);
	if (!rc)
		rc = te_file_line(out, eo, 0, "add");
	if (!rc)
		rc = te_file_line(out, eo, 0, "open");
	return rc;
}

/* One request's line; a flush has no range and says "0 0". 0 or -errno. */
static int te_io_line(FILE *out, const struct qs_trace_export_opts *eo, const struct qs_io *io)
{
	char s[24];
	bool sync = io->op == QS_IO_SYNC;
	return te_put(out, "%s%s %s %" PRIu64 " %" PRIu64 "\n",
		      te_stamp(eo, te_stamp_us(io), s, sizeof(s)), eo->file, te_actions[io->op],
		      sync ? 0 : io->off, sync ? 0 : io->len);
}

/* A file name fio reads back whole: 0, or -EINVAL with why in err. */
static int te_check_file(const char *file, char *err, size_t errlen)
{
	size_t n = strlen(file);
	if (n && n <= TE_MAX_FILE && strcspn(file, " \t\n\v\f\r") == n)
		return 0;
	char q[80];
	snprintf(err, errlen, "file name '%s' for the iolog: allowed 1 to %d bytes without "
		 "blanks (fio reads it with %%%ds)", qs_text_vis(q, sizeof(q), file), TE_MAX_FILE,
		 TE_MAX_FILE);
	return -EINVAL;
}

/* Refuse a timed export of a trace read without times: -EINVAL. */
static int te_untimed(const char *path, const struct qs_trace_opts *opts,
		      enum qs_trace_format f, char *err, size_t errlen)
{
	const char *why = opts->ignore_time ? "trace_ignore_time is set" :
			  f == QS_TRACE_IOLOG ? "a fio iolog version 2 has none" :
			  f == QS_TRACE_CSV ? "its column map has no time column" :
			  "its requests carry none";
	snprintf(err, errlen, "%s: a timed iolog (version 3) needs time stamps, and the trace "
		 "has none (%s): export it untimed (version 2)", path, why);
	return -EINVAL;
}

/* Mark a failed write of the log: rc, with the reason in err. */
static int te_out_fail(struct qs_trace_export_result *res, int rc, char *err, size_t errlen)
{
	res->out_failed = true;
	snprintf(err, errlen, "writing the iolog: %s", strerror(-rc));
	return rc;
}

/* The log of t into out: the header once the first request is known
 * good, the requests, the close. 0 or -errno (qs_trace_export). */
static int te_copy(struct qs_trace *t, const char *path, const struct qs_trace_opts *opts,
		   const struct qs_trace_export_opts *eo, FILE *out,
		   struct qs_trace_export_result *res, char *err, size_t errlen)
{
	struct qs_io io;
	uint64_t us = 0;
	int rc, more = qs_trace_next(t, &io, err, errlen);
	if (more < 0)
		return more;
	/* a reader stamps all its requests or none: the first one says */
	if (more && eo->timed && !io.timed)
		return te_untimed(path, opts, res->format, err, errlen);
	if ((rc = te_head(out, eo)))
		return te_out_fail(res, rc, err, errlen);
	for (; more == 1; more = qs_trace_next(t, &io, err, errlen)) {
		if ((rc = te_io_line(out, eo, &io)))
			return te_out_fail(res, rc, err, errlen);
		res->lines[io.op]++;
		us = te_stamp_us(&io);
	}
	if (more < 0)
		return more;
	/* closed with the last request's stamp: no wait after it */
	rc = te_file_line(out, eo, us, "close");
	return rc ? te_out_fail(res, rc, err, errlen) : 0;
}

int qs_trace_export(const char *path, const struct qs_trace_opts *opts,
		    const struct qs_trace_export_opts *eo, FILE *out,
		    struct qs_trace_export_result *res, char *err, size_t errlen)
{
	struct qs_trace *t;
	memset(res, 0, sizeof(*res));
	int rc = te_check_file(eo->file, err, errlen);
	if (rc || (rc = qs_trace_open(path, opts, &t, err, errlen)))
		return rc;
	res->format = qs_trace_format_of(t);
	rc = te_copy(t, path, opts, eo, out, res, err, errlen);
	res->skipped = qs_trace_skipped(t);
	qs_trace_close(t);
	return rc;
}

/* The command's arguments. */
struct te_cmd {
	const char *trace;
	const char *out; /* NULL: the standard output */
	struct qs_trace_opts topts;
	struct qs_trace_export_opts eo;
	bool scale_set;
};

static int te_usage(FILE *f)
{
	fprintf(f,
		"usage: qlcshape bench trace-export TRACE [OPTIONS]\n"
		"  Writes the block trace TRACE (any trace a job's trace= reads) as a fio\n"
		"  iolog, each request mapped as a bench run replays it: reads and writes\n"
		"  rounded outward to 4 KiB, trims inward (one with no whole aligned block\n"
		"  is left out), offsets wrapped into --span, a request that would straddle\n"
		"  the span's end moved back to end there; a flush is 'FILE sync 0 0'.\n"
		"  Replayed by fio, it issues on a device the requests the bench simulates:\n"
		"    qlcshape bench trace-export app.trace --span 8g -o app.iolog\n"
		"    fio --name=app --read_iolog=app.iolog --replay_redirect=/dev/DEV \\\n"
		"        --direct=1 --ioengine=io_uring --iodepth=16\n"
		"  fio opens the file the log names (--file), relative to its working\n"
		"  directory whatever its --filename says, unless --replay_redirect=DEV\n"
		"  sends every request to DEV. fio before 3.34 drops an iolog's trim\n"
		"  lines (\"bad ddir: 2\").\n"
		"options:\n"
		"  --format F      the trace's format, as the job key trace_format: auto\n"
		"                  (default: detected), mqsim, msr, iolog, blktrace,\n"
		"                  blkparse, libcachesim, csv\n"
		"  --columns MAP   a csv trace's column map, as trace_columns, e.g.\n"
		"                  time:1:s,op:2,offset:3:sector,size:4:B\n"
		"  --span SIZE     wrap offsets into [0, SIZE), as a job's size does: a\n"
		"                  multiple of 4k (e.g. 8g; k, m, g binary, as in job\n"
		"                  files); default: no wrap, the trace's own offsets\n"
		"  --file NAME     the file every line names (default " TE_DEFAULT_FILE ")\n"
		"  --timed         fio iolog version 3 (fio 3.31 and later): each line\n"
		"                  starts with the request's time in microseconds (plus 1,\n"
		"                  as fio waits nothing after a line stamped 0), and fio\n"
		"                  replays at the trace's pace (its replay_time_scale and\n"
		"                  replay_no_stall apply); refused for a trace without time\n"
		"                  stamps (an iolog, a csv without a time column). Default:\n"
		"                  version 2, no times: fio issues as fast as its iodepth\n"
		"                  allows\n"
		"  --timescale X   with --timed: multiplies the trace's times, as\n"
		"                  trace_timescale (0.5: twice as fast; default 1)\n"
		"  -o, --output OUT  write to OUT (through OUT.tmp, renamed once whole);\n"
		"                  default: the standard output\n"
		"At the end one line on the standard error: the requests written by kind,\n"
		"the records skipped (no request in them, or a trim under 4 KiB), the\n"
		"format. Exit status: 0; 1 if the trace cannot be read or the output\n"
		"written; 2 for a usage error or a bad trace (the error names the trace's\n"
		"file and line).\n");
	return f == stdout ? 0 : 2;
}

/* --format, --columns: as the job keys trace_format and trace_columns.
 * 0, or exit status 2. */
static int te_opt_trace(int c, const char *arg, struct te_cmd *o)
{
	char why[300];
	if (c == 'f') {
		if (!qs_trace_format_parse(arg, &o->topts.format))
			return 0;
		fprintf(stderr, "qlcshape " TE_CMD ": --format '%s': allowed auto, mqsim, msr, "
				"iolog, blktrace, blkparse, libcachesim, csv\n", arg);
		return 2;
	}
	if (!qs_trace_columns_parse(arg, &o->topts.cols, why, sizeof(why)))
		return 0;
	fprintf(stderr, "qlcshape " TE_CMD ": --columns '%s': FIELD:COLUMN[:UNIT],... with op, "
			"offset, size (and time), as trace_columns; here: %s\n", arg, why);
	return 2;
}

/* --span, --timescale: 0, or exit status 2. */
static int te_opt_number(int c, const char *arg, struct te_cmd *o)
{
	char *end;
	if (c == 's') {
		uint64_t v;
		if (!qs_job_parse_size(arg, 1024, &v) && v && v % 4096 == 0) {
			o->topts.span_len = v;
			return 0;
		}
		fprintf(stderr, "qlcshape " TE_CMD ": --span '%s': allowed a size above 0, a "
				"multiple of 4k (e.g. 8g; k, m, g binary)\n", arg);
		return 2;
	}
	double d = strtod(arg, &end);
	if (end != arg && !*end && d > 0 && d <= QS_TRACE_MAX_SCALE) {
		o->topts.timescale = d;
		o->scale_set = true;
		return 0;
	}
	fprintf(stderr, "qlcshape " TE_CMD ": --timescale '%s': allowed a number above 0 and at "
			"most 1e12 (1 = time stamps as they are, 0.5 = twice as fast)\n", arg);
	return 2;
}

/* One option from getopt_long: 0 to go on, -1 after --help, else exit status 2. */
static int te_opt(int c, const char *arg, struct te_cmd *o)
{
	switch (c) {
	case 'f': case 'c': return te_opt_trace(c, arg, o);
	case 's': case 'x': return te_opt_number(c, arg, o);
	case 'F': o->eo.file = arg; return 0;
	case 't': o->eo.timed = true; return 0;
	case 'o': o->out = arg; return 0;
	case 'h': return te_usage(stdout) ? 2 : -1;
	default: return te_usage(stderr);
	}
}

/* What the options say together, and the one TRACE: 0 or exit status 2. */
static int te_check(int argc, char **argv, struct te_cmd *o)
{
	enum qs_trace_format f = o->topts.format;
	if (optind + 1 != argc) {
		fprintf(stderr, "qlcshape " TE_CMD ": %s\n",
			optind == argc ? "missing TRACE" : "only one TRACE allowed");
		return te_usage(stderr);
	}
	o->trace = argv[optind];
	if (o->topts.cols.col[QS_TF_OFFSET] && f != QS_TRACE_AUTO && f != QS_TRACE_CSV) {
		fprintf(stderr, "qlcshape " TE_CMD ": --columns: only with --format csv (or auto), "
				"not %s, whose columns are fixed\n", qs_trace_format_name(f));
		return 2;
	}
	if (o->scale_set && !o->eo.timed) {
		fprintf(stderr, "qlcshape " TE_CMD ": --timescale: only with --timed (an untimed "
				"iolog has no times to scale)\n");
		return 2;
	}
	return 0;
}

/* Parse argv into *o: 0, -1 after --help, or exit status 2. */
static int te_parse(int argc, char **argv, struct te_cmd *o)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"columns", required_argument, NULL, 'c'},
		{"span", required_argument, NULL, 's'},
		{"file", required_argument, NULL, 'F'},
		{"timed", no_argument, NULL, 't'},
		{"timescale", required_argument, NULL, 'x'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof(*o));
	o->topts.format = QS_TRACE_AUTO;
	o->topts.timescale = 1.0;
	o->eo.file = TE_DEFAULT_FILE;
	optind = 1;
	opterr = 1;
	int c, rc;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1)
		if ((rc = te_opt(c, optarg, o)))
			return rc;
	return te_check(argc, argv, o);
}

/* The export into out, flushed; errors printed, out's named name. Exit status. */
static int te_export(const struct te_cmd *o, FILE *out, const char *name,
		     struct qs_trace_export_result *res)
{
	char err[1200];
	int rc = qs_trace_export(o->trace, &o->topts, &o->eo, out, res, err, sizeof(err));
	if (!rc && fflush(out))
		rc = te_out_fail(res, errno ? -errno : -EIO, err, sizeof(err));
	if (!rc)
		return 0;
	if (res->out_failed) {
		fprintf(stderr, "qlcshape " TE_CMD ": %s: %s\n", name, err);
		return 1;
	}
	fprintf(stderr, "qlcshape " TE_CMD ": %s\n", err);
	return rc == -EINVAL ? 2 : 1;
}

/* The export into o->out through OUT.tmp, renamed once whole, so that a
 * failed export leaves no half file (and an old OUT as it was). Exit status. */
static int te_to_file(const struct te_cmd *o, struct qs_trace_export_result *res)
{
	char tmp[4200];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->out) >= (int)sizeof(tmp)) {
		fprintf(stderr, "qlcshape " TE_CMD ": -o '%.100s...': path too long\n", o->out);
		return 2;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "qlcshape " TE_CMD ": cannot write %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	int st = te_export(o, f, tmp, res);
	if (fclose(f) && !st) {
		fprintf(stderr, "qlcshape " TE_CMD ": %s: writing the iolog: %s\n", tmp,
			strerror(errno));
		st = 1;
	}
	if (!st && rename(tmp, o->out)) {
		fprintf(stderr, "qlcshape " TE_CMD ": cannot rename %s to %s: %s\n", tmp, o->out,
			strerror(errno));
		st = 1;
	}
	if (st)
		unlink(tmp);
	return st;
}

/* The closing line on stderr: what was written, what skipped, the format. */
static void te_summary(const struct te_cmd *o, const struct qs_trace_export_result *r)
{
	char q[300], w[300];
	const uint64_t *n = r->lines;
	fprintf(stderr, "qlcshape " TE_CMD ": %s (%s): %" PRIu64 " requests written to %s as "
			"fio iolog version %d: %" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64
			" trims, %" PRIu64 " syncs; %" PRIu64 " records skipped (no request in "
			"them, or a trim under 4 KiB)\n",
		qs_text_vis(q, sizeof(q), o->trace), qs_trace_format_name(r->format),
		n[QS_IO_READ] + n[QS_IO_WRITE] + n[QS_IO_TRIM] + n[QS_IO_SYNC],
		o->out ? qs_text_vis(w, sizeof(w), o->out) : "the standard output", o->eo.timed ? 3 : 2, n[QS_IO_READ],
		n[QS_IO_WRITE], n[QS_IO_TRIM], n[QS_IO_SYNC], r->skipped);
}

int qs_cmd_bench_trace_export(int argc, char **argv)
{
	struct te_cmd o;
	struct qs_trace_export_result res;
	int st = te_parse(argc, argv, &o);
	if (st)
		return st < 0 ? 0 : st;
	st = o.out ? te_to_file(&o, &res) : te_export(&o, stdout, "the standard output", &res);
	if (!st)
		te_summary(&o, &res);
	return st;
}
