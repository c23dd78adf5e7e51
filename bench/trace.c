/* SPDX-License-Identifier: MIT */
/* Bench trace replay: opening, format detection, the text formats MQSim,
 * MSR and iolog, and the helpers every reader shares (see trace.h for
 * formats and the 4 KiB mapping; trace_blk.c and trace_csv.c for the
 * others). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"
#include "host/text.h"

#define BLK TRACE_BLK

static const char *const trace_names[QS_TRACE_FORMATS] = {
	"auto", "mqsim", "msr", "iolog", "blktrace", "blkparse", "libcachesim", "csv",
};

int qs_trace_format_parse(const char *name, enum qs_trace_format *f)
{
	for (int i = 0; i < QS_TRACE_FORMATS; i++) {
		if (!strcasecmp(name, trace_names[i])) {
			*f = (enum qs_trace_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *qs_trace_format_name(enum qs_trace_format f)
{
	return (unsigned)f < QS_TRACE_FORMATS ? trace_names[f] : "?";
}

const char *trace_where(const struct qs_trace *t, char *buf, size_t len)
{
	if (t->rec)
		snprintf(buf, len, "%s: record %" PRIu64, t->rec_path, t->rec);
	else
		snprintf(buf, len, "%s:%u", t->path, t->line);
	return buf;
}

unsigned qs_trace_files(const struct qs_trace *t)
{
	return t->blk ? trace_blk_files(t) : 1;
}

unsigned qs_trace_siblings(const struct qs_trace *t)
{
	return t->blk ? trace_blk_siblings(t) : 0;
}

enum qs_trace_format qs_trace_format_of(const struct qs_trace *t)
{
	return t->o.format;
}

uint64_t qs_trace_skipped(const struct qs_trace *t)
{
	return t->skipped;
}

void qs_trace_close(struct qs_trace *t)
{
	if (!t)
		return;
	if (t->f)
		fclose(t->f);
	trace_blk_close(t);
	free(t->pending);
	free(t->iolog_file);
	free(t->buf);
	free(t->path);
	free(t);
}

char *trace_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* Read the next non-empty line; NULL at EOF (or error: check ferror). */
static char *next_line(struct qs_trace *t)
{
	if (t->pending) {
		free(t->buf);
		t->buf = t->pending;
		t->cap = strlen(t->pending) + 1;
		t->pending = NULL;
		t->line = t->pending_line;
		return trace_trim(t->buf);
	}
	while (getline(&t->buf, &t->cap, t->f) >= 0) {
		t->line++;
		char *s = trace_trim(t->buf);
		if (*s)
			return s;
	}
	return NULL;
}

/* A new reader of path with opts (before its input is opened). */
static int trace_new(const char *path, const struct qs_trace_opts *opts, struct qs_trace **out,
		     char *err, size_t errlen)
{
	if (!(opts->timescale > 0 && opts->timescale <= QS_TRACE_MAX_SCALE)) {
		snprintf(err, errlen, "%s: time scale %g: allowed above 0 and at most %g", path,
			 opts->timescale, QS_TRACE_MAX_SCALE);
		return -EINVAL;
	}
	struct qs_trace *t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	t->o = *opts;
	t->rec_path = t->path;
	*out = t;
	return 0;
}

/* Whether path names no file but is the base of blktrace's per-CPU files. */
static bool trace_is_blk_base(const char *path)
{
	char p[4200];
	struct stat st;
	if (stat(path, &st) == 0 || errno != ENOENT)
		return false;
	int n = snprintf(p, sizeof(p), "%s.blktrace.0", path);
	return n > 0 && (size_t)n < sizeof(p) && stat(p, &st) == 0;
}

/* Refuse what is not a regular file, naming what it is: 0 or -EINVAL. */
static int trace_regular(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISREG(st->st_mode))
		return 0;
	snprintf(err, errlen, "%s: not a trace file (%s)%s", path,
		 S_ISDIR(st->st_mode) ? "a directory" :
		 S_ISFIFO(st->st_mode) ? "a FIFO" : "a device or socket",
		 S_ISDIR(st->st_mode) ? "" : ": a bench run reads its trace more than once "
		 "(a check before the run, then the run); write it to a file first");
	return -EINVAL;
}

/*
 * Open the text file (or see that it is a blktrace binary one). A FIFO or
 * device is refused, before it is opened (opening a FIFO waits for a
 * writer): a bench run reads a trace more than once (the check before the
 * run, then the run), and a FIFO only gives it once.
 */
static int trace_open_file(struct qs_trace *t, bool *binary, char *err, size_t errlen)
{
	const char *path = t->path;
	struct stat st;
	int rc;
	if (stat(path, &st) == 0 && (rc = trace_regular(path, &st, err, errlen)))
		return rc;
	t->f = fopen(path, "r");
	if (!t->f) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open trace: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fileno(t->f), &st) == 0 && (rc = trace_regular(path, &st, err, errlen)))
		return rc; /* replaced since the stat */
	unsigned char head[4];
	size_t n = fread(head, 1, sizeof(head), t->f);
	*binary = trace_blk_magic(head, n);
	rewind(t->f);
	return 0;
}

/* Skip comment lines, which do not say the format ("# lba, size" is no
 * MSR line), and keep the first other one for the parser. */
static int trace_first_line(struct qs_trace *t, char **first, char *err, size_t errlen)
{
	while ((*first = next_line(t)) && **first == '#')
		;
	if (!*first && ferror(t->f)) {
		snprintf(err, errlen, "%s:%u: read error: %s", t->path, t->line + 1,
			 strerror(errno));
		return -EIO;
	}
	if (!*first) {
		snprintf(err, errlen, "%s: empty trace (%u lines, none a request)", t->path,
			 t->line);
		return -EINVAL;
	}
	return 0;
}

/* Count the comma-separated fields of s. */
static int trace_commas(const char *s)
{
	int n = 1;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* MQSim's line: 5 unsigned numbers separated by blanks. */
static bool trace_mqsim_line(const char *s)
{
	int n = 0;
	while (*s) {
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
		n++;
		while (*s == ' ' || *s == '\t')
			s++;
	}
	return n == 5;
}

/*
 * The format of a text trace from its first line; a line of no known
 * format is refused with what each format's lines look like.
 */
static int trace_detect(struct qs_trace *t, const char *first, char *err, size_t errlen)
{
	int commas = trace_commas(first);
	if (!strncmp(first, "fio version ", 12))
		t->o.format = QS_TRACE_IOLOG;
	else if (trace_blkparse_line(first))
		t->o.format = QS_TRACE_BLKPARSE;
	else if (trace_lcs_line(first))
		t->o.format = QS_TRACE_LCS;
	else if (!strncasecmp(first, "Timestamp,", 10) || commas == 7)
		t->o.format = QS_TRACE_MSR;
	else if (trace_mqsim_line(first))
		t->o.format = QS_TRACE_MQSIM;
	if (t->o.format != QS_TRACE_AUTO)
		return 0;
	char q[80];
	snprintf(err, errlen, "%s:%u: trace format not recognised from its first line '%s'%s: "
		 "allowed: mqsim (5 numbers), msr (7 comma-separated fields), iolog ('fio version "
		 "2 iolog'), blkparse (its default output), libcachesim ('version,time,op,size,"
		 "lbn'), blktrace binary; or name the format with trace_format (a CSV of another "
		 "layout: trace_format=csv and trace_columns)", t->path, t->line,
		 qs_text_vis(q, sizeof(q), first),
		 commas > 1 ? " (comma-separated, but neither MSR's 7 fields nor "
		 "libCacheSim's 5)" : "");
	return -EINVAL;
}

/* The header lines some formats open with are consumed; any other first
 * line is kept for the parser. */
static int trace_take_first(struct qs_trace *t, const char *first, char *err, size_t errlen)
{
	if (t->o.format == QS_TRACE_IOLOG) {
		if (strcmp(first, "fio version 2 iolog")) {
			snprintf(err, errlen, "%s:%u: expected the header 'fio version 2 "
				 "iolog', found '%.60s'", t->path, t->line, first);
			return -EINVAL;
		}
		return 0;
	}
	if (t->o.format == QS_TRACE_MSR && !strncasecmp(first, "Timestamp,", 10))
		return 0; /* an optional header line naming the columns */
	t->csv_first = true;
	t->pending = strdup(first);
	t->pending_line = t->line;
	if (!t->pending) {
		snprintf(err, errlen, "%s: out of memory", t->path);
		return -ENOMEM;
	}
	return 0;
}

static int trace_open_text(struct qs_trace *t, char *err, size_t errlen)
{
	char *first;
	int rc = trace_first_line(t, &first, err, errlen);
	if (rc)
		return rc;
	if (t->o.format == QS_TRACE_AUTO && (rc = trace_detect(t, first, err, errlen)))
		return rc;
	return trace_take_first(t, first, err, errlen);
}

static int trace_open(const char *path, const struct qs_trace_opts *opts,
		      struct qs_trace **out, char *err, size_t errlen)
{
	struct qs_trace *t;
	bool binary = false;
	*out = NULL;
	int rc = trace_new(path, opts, &t, err, errlen);
	if (rc)
		return rc;
	if (t->o.format == QS_TRACE_AUTO && t->o.cols.col[QS_TF_OFFSET])
		t->o.format = QS_TRACE_CSV; /* a column map says what it is */
	if (t->o.format == QS_TRACE_CSV && !t->o.cols.col[QS_TF_OFFSET]) {
		snprintf(err, errlen, "%s: the csv format needs a column map (trace_columns)", path);
		qs_trace_close(t);
		return -EINVAL;
	}
	bool want_blk = t->o.format == QS_TRACE_AUTO || t->o.format == QS_TRACE_BLKTRACE;
	if (want_blk && trace_is_blk_base(path)) {
		t->o.format = QS_TRACE_BLKTRACE;
		rc = trace_blk_open(t, true, err, errlen);
	} else if (!(rc = trace_open_file(t, &binary, err, errlen))) {
		if (binary && t->o.format == QS_TRACE_AUTO)
			t->o.format = QS_TRACE_BLKTRACE;
		rc = t->o.format == QS_TRACE_BLKTRACE ? trace_blk_open(t, false, err, errlen)
						      : trace_open_text(t, err, errlen);
	}
	if (rc) {
		qs_trace_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

bool trace_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int trace_map_range(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
{
	uint64_t start, end;
	char w[600];
	if (io->orig_off > UINT64_MAX - 2 * BLK ||
	    io->orig_len > UINT64_MAX - 2 * BLK - io->orig_off) {
		snprintf(err, errlen, "%s: offset %" PRIu64 " + length %" PRIu64 " overflows",
			 trace_where(t, w, sizeof(w)), io->orig_off, io->orig_len);
		return -EINVAL;
	}
	if (t->o.scale > 1)
		io->orig_off /= t->o.scale;
	if (t->o.align > 1)
		io->orig_off &= ~(t->o.align - 1);
	if (io->op == QS_IO_TRIM) {
		start = (io->orig_off + BLK - 1) / BLK * BLK;
		end = (io->orig_off + io->orig_len) / BLK * BLK;
		if (end <= start)
			return 0; /* no whole block to discard: skip */
	} else {
		start = io->orig_off / BLK * BLK;
		end = (io->orig_off + io->orig_len + BLK - 1) / BLK * BLK;
	}
	io->off = start;
	io->len = end - start;
	if (io->len > QS_TRACE_MAX_IO) {
		snprintf(err, errlen, "%s: request of %" PRIu64 " bytes at offset %" PRIu64
			 ": allowed at most %llu bytes (%llu MiB) per request",
			 trace_where(t, w, sizeof(w)), io->orig_len, io->orig_off, QS_TRACE_MAX_IO,
			 QS_TRACE_MAX_IO >> 20);
		return -EINVAL;
	}
	if (t->o.span_len) {
		uint64_t span = t->o.span_len / BLK * BLK;
		if (io->len > span) {
			snprintf(err, errlen, "%s: request of %" PRIu64 " bytes is "
				 "larger than the replay span of %" PRIu64 " bytes",
				 trace_where(t, w, sizeof(w)), io->len, span);
			return -EINVAL;
		}
		uint64_t rel = io->off % span;
		if (rel + io->len > span)
			rel = span - io->len;
		io->off = t->o.span_off + rel;
	}
	return 1;
}

int trace_set_time(struct qs_trace *t, struct qs_io *io, uint64_t stamp, double unit_ns,
		   const char *field, char *err, size_t errlen)
{
	char w[600];
	if (t->o.ignore_time)
		return 0;
	if (!t->have_first) {
		t->have_first = true;
		t->first_stamp = stamp;
	}
	/* Traces are in arrival order, but tolerate small disorder: a stamp
	 * before the first one counts as time 0. */
	uint64_t rel = stamp >= t->first_stamp ? stamp - t->first_stamp : 0;
	double ns = (double)rel * unit_ns * t->o.timescale;
	if (!(ns <= (double)QS_TRACE_MAX_NS)) {
		snprintf(err, errlen, "%s: %s %" PRIu64 " is %.4g s after the first request's "
			 "(%" PRIu64 ", trace_timescale %g); allowed: at most %llu days",
			 trace_where(t, w, sizeof(w)), field, stamp, ns / 1e9, t->first_stamp,
			 t->o.timescale, QS_TRACE_MAX_NS / 86400000000000ull);
		return -EINVAL;
	}
	io->timed = true;
	io->at_ns = (uint64_t)llround(ns);
	return 0;
}

bool trace_parse_ns(const char *s, uint64_t unit_ns, uint64_t *out)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, scale = 1;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return false;
	for (; isdigit((unsigned char)*p); p++)
		if (__builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
			return false;
	if (*p == '.') {
		/* up to 18 digits of the fraction: beyond them a nanosecond of
		 * any unit up to 1e9 ns is long past */
		for (p++; isdigit((unsigned char)*p); p++) {
			if (scale < 1000000000000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (*p)
		return false;
	uint64_t ns;
	if (__builtin_mul_overflow(whole, unit_ns, &ns))
		return false;
	uint64_t part = (uint64_t)((unsigned __int128)frac * unit_ns / scale);
	if (__builtin_add_overflow(ns, part, &ns))
		return false;
	*out = ns;
	return true;
}

/* "arrival_time device start_lba size_in_sectors type" */
static int parse_mqsim(struct qs_trace *t, char *s, struct qs_io *io, char *err,
		       size_t errlen)
{
	char *fld[6];
	int n = 0;
	for (char *save = NULL, *p = strtok_r(s, " \t", &save); p;
	     p = strtok_r(NULL, " \t", &save)) {
		if (n == 6)
			break;
		fld[n++] = p;
	}
	if (n != 5) {
		snprintf(err, errlen, "%s:%u: expected 5 fields 'arrival_time device "
			 "start_lba size_in_sectors type', found %s%d", t->path,
			 t->line, n > 5 ? "more than " : "", n > 5 ? 5 : n);
		return -EINVAL;
	}
	static const char *const names[] = {"arrival_time", "device", "start_lba",
					     "size_in_sectors", "type"};
	uint64_t v[5];
	for (int i = 0; i < 5; i++) {
		if (!trace_parse_u64(fld[i], &v[i])) {
			snprintf(err, errlen, "%s:%u: field %s '%s' is not an unsigned "
				 "integer", t->path, t->line, names[i], fld[i]);
			return -EINVAL;
		}
	}
	if (v[4] > 1) {
		snprintf(err, errlen, "%s:%u: field type '%s': allowed 0 (write) or 1 "
			 "(read)", t->path, t->line, fld[4]);
		return -EINVAL;
	}
	if (!v[3] || v[3] > (1ull << 40) || v[2] > (UINT64_MAX >> 10)) {
		snprintf(err, errlen, "%s:%u: start_lba %s size_in_sectors %s: allowed "
			 "size 1 to 2^40 sectors, start below 2^54", t->path, t->line,
			 fld[2], fld[3]);
		return -EINVAL;
	}
	io->op = v[4] ? QS_IO_READ : QS_IO_WRITE;
	io->orig_off = v[2] * 512;
	io->orig_len = v[3] * 512;
	if (trace_set_time(t, io, v[0], 1.0, "arrival_time", err, errlen))
		return -EINVAL;
	return trace_map_range(t, io, err, errlen);
}

/* "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime" */
static int parse_msr(struct qs_trace *t, char *s, struct qs_io *io, char *err,
		     size_t errlen)
{
	char *fld[8];
	int n = 0;
	char *p = s;
	while (n < 8) {
		fld[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	if (n != 7) {
		snprintf(err, errlen, "%s:%u: expected 7 comma-separated fields "
			 "'Timestamp,Hostname,DiskNumber,Type,Offset,Size,"
			 "ResponseTime', found %s%d", t->path, t->line,
			 n > 7 ? "more than " : "", n > 7 ? 7 : n);
		return -EINVAL;
	}
	for (int i = 0; i < 7; i++)
		fld[i] = trace_trim(fld[i]);
	uint64_t ts, off, len;
	if (!trace_parse_u64(fld[0], &ts)) {
		snprintf(err, errlen, "%s:%u: Timestamp '%s' is not an unsigned integer",
			 t->path, t->line, fld[0]);
		return -EINVAL;
	}
	if (!strcasecmp(fld[3], "Read"))
		io->op = QS_IO_READ;
	else if (!strcasecmp(fld[3], "Write"))
		io->op = QS_IO_WRITE;
	else {
		snprintf(err, errlen, "%s:%u: Type '%s': allowed Read or Write",
			 t->path, t->line, fld[3]);
		return -EINVAL;
	}
	if (!trace_parse_u64(fld[4], &off) || !trace_parse_u64(fld[5], &len) || !len) {
		snprintf(err, errlen, "%s:%u: Offset '%s' Size '%s': allowed unsigned "
			 "byte counts, Size above 0", t->path, t->line, fld[4], fld[5]);
		return -EINVAL;
	}
	io->orig_off = off;
	io->orig_len = len;
	if (trace_set_time(t, io, ts, 100.0, "Timestamp", err, errlen))
		return -EINVAL;
	return trace_map_range(t, io, err, errlen);
}

/* "FILE ACTION [OFFSET LENGTH]" */
static int parse_iolog(struct qs_trace *t, char *s, struct qs_io *io, char *err,
		       size_t errlen)
{
	char *fld[5];
	int n = 0;
	for (char *save = NULL, *p = strtok_r(s, " \t", &save); p;
	     p = strtok_r(NULL, " \t", &save)) {
		if (n == 5)
			break;
		fld[n++] = p;
	}
	/* The replay drives one device: two files' offsets would land on it
	 * as if they were one file's. */
	if (n >= 1 && !t->iolog_file) {
		t->iolog_file = strdup(fld[0]);
		t->iolog_line = t->line;
		if (!t->iolog_file) {
			snprintf(err, errlen, "%s: out of memory", t->path);
			return -ENOMEM;
		}
	} else if (n >= 1 && strcmp(fld[0], t->iolog_file)) {
		snprintf(err, errlen, "%s:%u: file '%.100s' is a second file (the log names "
			 "'%.100s' on line %u); the replay drives one device: give each file's "
			 "lines a trace of its own", t->path, t->line, fld[0], t->iolog_file,
			 t->iolog_line);
		return -EINVAL;
	}
	if (n == 2 && (!strcmp(fld[1], "add") || !strcmp(fld[1], "open") ||
		       !strcmp(fld[1], "close")))
		return 0; /* file management: one device, nothing to do */
	if (n == 2 && !strcmp(fld[1], "sync")) {
		io->op = QS_IO_SYNC;
		return 1;
	}
	if (n < 2) {
		snprintf(err, errlen, "%s:%u: expected 'FILE ACTION [OFFSET LENGTH]'",
			 t->path, t->line);
		return -EINVAL;
	}
	if (!strcmp(fld[1], "read"))
		io->op = QS_IO_READ;
	else if (!strcmp(fld[1], "write"))
		io->op = QS_IO_WRITE;
	else if (!strcmp(fld[1], "trim"))
		io->op = QS_IO_TRIM;
	else if (!strcmp(fld[1], "sync") || !strcmp(fld[1], "datasync")) {
		io->op = QS_IO_SYNC;
		return 1;
	} else {
		snprintf(err, errlen, "%s:%u: action '%s': allowed add, open, close, "
			 "read, write, trim, sync, datasync", t->path, t->line, fld[1]);
		return -EINVAL;
	}
	uint64_t off, len;
	if (n != 4 || !trace_parse_u64(fld[2], &off) || !trace_parse_u64(fld[3], &len) || !len) {
		snprintf(err, errlen, "%s:%u: action '%s' needs OFFSET and LENGTH, "
			 "unsigned byte counts with LENGTH above 0", t->path, t->line,
			 fld[1]);
		return -EINVAL;
	}
	io->orig_off = off;
	io->orig_len = len;
	return trace_map_range(t, io, err, errlen);
}

/* One line of the trace's text format: 1, 0 to skip it, -errno. */
static int trace_parse_line(struct qs_trace *t, char *s, struct qs_io *io, char *err,
			    size_t errlen)
{
	switch (t->o.format) {
	case QS_TRACE_MSR: return parse_msr(t, s, io, err, errlen);
	case QS_TRACE_IOLOG: return parse_iolog(t, s, io, err, errlen);
	case QS_TRACE_BLKPARSE: return trace_parse_blkparse(t, s, io, err, errlen);
	case QS_TRACE_LCS: return trace_parse_lcs(t, s, io, err, errlen);
	case QS_TRACE_CSV: return trace_parse_csv(t, s, io, err, errlen);
	default: return parse_mqsim(t, s, io, err, errlen);
	}
}

static int trace_next_text(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
{
	for (;;) {
		char *s = next_line(t);
		if (!s) {
			if (ferror(t->f)) {
				snprintf(err, errlen, "%s:%u: read error: %s", t->path,
					 t->line + 1, strerror(errno));
				return -EIO;
			}
			return 0;
		}
		if (*s == '#')
			continue; /* comment lines some tools add */
		memset(io, 0, sizeof(*io));
		int rc = trace_parse_line(t, s, io, err, errlen);
		t->csv_first = false;
		if (rc == 0) {
			t->skipped++;
			continue;
		}
		return rc;
	}
}

static int trace_next(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
{
	if (t->have_ahead) {
		*io = t->ahead;
		t->have_ahead = false;
		return 1;
	}
	if (t->blk)
		return trace_blk_next(t, io, err, errlen);
	return trace_next_text(t, io, err, errlen);
}

/* The public entry points: errors quote the trace's bytes, made text. */
int qs_trace_open(const char *path, const struct qs_trace_opts *opts,
		  struct qs_trace **out, char *err, size_t errlen)
{
	int rc = trace_open(path, opts, out, err, errlen);
	if (rc < 0)
		qs_text_vis_msg(err, errlen);
	return rc;
}

int qs_trace_next(struct qs_trace *t, struct qs_io *io, char *err,
		  size_t errlen)
{
	int rc = trace_next(t, io, err, errlen);
	if (rc < 0)
		qs_text_vis_msg(err, errlen);
	return rc;
}
