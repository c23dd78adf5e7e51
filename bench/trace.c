/* SPDX-License-Identifier: MIT */
/* Bench trace replay (see trace.h for formats and the 4 KiB mapping). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"
#include "host/text.h"

#define BLK 4096ull

struct qs_trace {
	char *path;
	FILE *f;
	struct qs_trace_opts o;
	char *buf;
	size_t cap;
	unsigned line;
	bool have_first;
	uint64_t first_stamp;
	uint64_t skipped;
	char *pending; /* first line read by format detection, not yet parsed */
	unsigned pending_line;
	char *iolog_file; /* iolog: the one FILE it may name */
	unsigned iolog_line;
};

int qs_trace_format_parse(const char *name, enum qs_trace_format *f)
{
	static const char *const names[] = {"auto", "mqsim", "msr", "iolog"};
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(name, names[i])) {
			*f = (enum qs_trace_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *qs_trace_format_name(enum qs_trace_format f)
{
	switch (f) {
	case QS_TRACE_AUTO: return "auto";
	case QS_TRACE_MQSIM: return "mqsim";
	case QS_TRACE_MSR: return "msr";
	case QS_TRACE_IOLOG: return "iolog";
	}
	return "?";
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
	free(t->pending);
	free(t->iolog_file);
	free(t->buf);
	free(t->path);
	free(t);
}

/* Strip the line end and surrounding blanks in place. */
static char *trim(char *s)
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
		return trim(t->buf);
	}
	while (getline(&t->buf, &t->cap, t->f) >= 0) {
		t->line++;
		char *s = trim(t->buf);
		if (*s)
			return s;
	}
	return NULL;
}

static int trace_open(const char *path, const struct qs_trace_opts *opts,
		      struct qs_trace **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!(opts->timescale > 0)) {
		snprintf(err, errlen, "%s: time scale %g must be above 0", path,
			 opts->timescale);
		return -EINVAL;
	}
	struct qs_trace *t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path))) {
		free(t);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	t->o = *opts;
	t->f = fopen(path, "r");
	if (!t->f) {
		int rc = -errno;
		snprintf(err, errlen, "%s: cannot open trace: %s", path,
			 strerror(errno));
		qs_trace_close(t);
		return rc;
	}
	struct stat st;
	if (fstat(fileno(t->f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		snprintf(err, errlen, "%s: not a trace file (%s)", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "a device or socket");
		qs_trace_close(t);
		return -EINVAL;
	}
	/* Comment lines do not say the format: "# lba, size" is no MSR line. */
	char *first;
	while ((first = next_line(t)) && *first == '#')
		;
	if (!first && ferror(t->f)) {
		snprintf(err, errlen, "%s:%u: read error: %s", path, t->line + 1,
			 strerror(errno));
		qs_trace_close(t);
		return -EIO;
	}
	if (!first) {
		snprintf(err, errlen, "%s: empty trace (%u lines, none a request)", path,
			 t->line);
		qs_trace_close(t);
		return -EINVAL;
	}
	bool iolog_hdr = !strncmp(first, "fio version ", 12);
	if (t->o.format == QS_TRACE_AUTO)
		t->o.format = iolog_hdr ? QS_TRACE_IOLOG :
			      strchr(first, ',') ? QS_TRACE_MSR : QS_TRACE_MQSIM;
	if (t->o.format == QS_TRACE_IOLOG) {
		if (strcmp(first, "fio version 2 iolog")) {
			snprintf(err, errlen, "%s:%u: expected the header 'fio version 2 "
				 "iolog', found '%.60s'", path, t->line, first);
			qs_trace_close(t);
			return -EINVAL;
		}
		/* header consumed */
	} else if (t->o.format == QS_TRACE_MSR && !strncasecmp(first, "Timestamp,", 10)) {
		/* an optional header line naming the columns: consumed */
	} else {
		t->pending = strdup(first);
		t->pending_line = t->line;
		if (!t->pending) {
			snprintf(err, errlen, "%s: out of memory", path);
			qs_trace_close(t);
			return -ENOMEM;
		}
	}
	*out = t;
	return 0;
}

/* Parse an unsigned decimal field that must fill the whole string. */
static bool parse_u64(const char *s, uint64_t *out)
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

/* Map [off, off+len) to engine blocks and wrap into the span. */
static int map_range(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
{
	uint64_t start, end;
	if (io->orig_off > UINT64_MAX - 2 * BLK ||
	    io->orig_len > UINT64_MAX - 2 * BLK - io->orig_off) {
		snprintf(err, errlen, "%s:%u: offset %" PRIu64 " + length %" PRIu64
			 " overflows", t->path, t->line, io->orig_off, io->orig_len);
		return -EINVAL;
	}
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
		snprintf(err, errlen, "%s:%u: request of %" PRIu64 " bytes at offset %" PRIu64
			 ": allowed at most %llu bytes (%llu MiB) per request", t->path, t->line,
			 io->orig_len, io->orig_off, QS_TRACE_MAX_IO, QS_TRACE_MAX_IO >> 20);
		return -EINVAL;
	}
	if (t->o.span_len) {
		uint64_t span = t->o.span_len / BLK * BLK;
		if (io->len > span) {
			snprintf(err, errlen, "%s:%u: request of %" PRIu64 " bytes is "
				 "larger than the replay span of %" PRIu64 " bytes",
				 t->path, t->line, io->len, span);
			return -EINVAL;
		}
		uint64_t rel = io->off % span;
		if (rel + io->len > span)
			rel = span - io->len;
		io->off = t->o.span_off + rel;
	}
	return 1;
}

static int set_time(struct qs_trace *t, struct qs_io *io, uint64_t stamp,
		    double unit_ns, const char *field, char *err, size_t errlen)
{
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
		snprintf(err, errlen, "%s:%u: %s %" PRIu64 " is %.4g s after the first request's "
			 "(%" PRIu64 ", trace_timescale %g); allowed: at most %llu days",
			 t->path, t->line, field, stamp, ns / 1e9, t->first_stamp,
			 t->o.timescale, QS_TRACE_MAX_NS / 86400000000000ull);
		return -EINVAL;
	}
	io->timed = true;
	io->at_ns = (uint64_t)llround(ns);
	return 0;
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
		if (!parse_u64(fld[i], &v[i])) {
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
	if (set_time(t, io, v[0], 1.0, "arrival_time", err, errlen))
		return -EINVAL;
	return map_range(t, io, err, errlen);
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
		fld[i] = trim(fld[i]);
	uint64_t ts, off, len;
	if (!parse_u64(fld[0], &ts)) {
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
	if (!parse_u64(fld[4], &off) || !parse_u64(fld[5], &len) || !len) {
		snprintf(err, errlen, "%s:%u: Offset '%s' Size '%s': allowed unsigned "
			 "byte counts, Size above 0", t->path, t->line, fld[4], fld[5]);
		return -EINVAL;
	}
	io->orig_off = off;
	io->orig_len = len;
	if (set_time(t, io, ts, 100.0, "Timestamp", err, errlen))
		return -EINVAL;
	return map_range(t, io, err, errlen);
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
	if (n != 4 || !parse_u64(fld[2], &off) || !parse_u64(fld[3], &len) || !len) {
		snprintf(err, errlen, "%s:%u: action '%s' needs OFFSET and LENGTH, "
			 "unsigned byte counts with LENGTH above 0", t->path, t->line,
			 fld[1]);
		return -EINVAL;
	}
	io->orig_off = off;
	io->orig_len = len;
	return map_range(t, io, err, errlen);
}

static int trace_next(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
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
		int rc;
		switch (t->o.format) {
		case QS_TRACE_MSR:
			rc = parse_msr(t, s, io, err, errlen);
			break;
		case QS_TRACE_IOLOG:
			rc = parse_iolog(t, s, io, err, errlen);
			break;
		case QS_TRACE_MQSIM:
		default:
			rc = parse_mqsim(t, s, io, err, errlen);
			break;
		}
		if (rc == 0) {
			t->skipped++;
			continue;
		}
		return rc;
	}
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
