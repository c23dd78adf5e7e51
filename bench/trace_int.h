/* SPDX-License-Identifier: MIT */
/*
 * Inside the trace readers (bench/trace*.c): the reader's state and the
 * helpers every format shares. Not for other callers: bench/trace.h is the
 * interface.
 */
#ifndef QS_BENCH_TRACE_INT_H
#define QS_BENCH_TRACE_INT_H

#include <stdio.h>

#include "trace.h"

#define TRACE_BLK 4096ull

struct trace_blk; /* blktrace binary input (trace_blk.c) */

struct qs_trace {
	char *path;
	FILE *f; /* text formats */
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
	/* One request read ahead: a blktrace write with a preflush is
	 * returned as the flush, then this write. */
	struct qs_io ahead;
	bool have_ahead;
	/* blktrace and blkparse: the one device the trace may hold, and where
	 * it was first seen (a record number or a line) */
	char dev[32];
	uint64_t dev_at;
	bool blkparse_end; /* blkparse: its closing statistics began */
	bool csv_first;	   /* csv, libcachesim: the first line is still to come */
	struct trace_blk *blk;
	/* Where the request being parsed came from, for messages: a binary
	 * record number (0 for text, which names its line) and file. */
	uint64_t rec;
	const char *rec_path;
};

/* "path:line" or "path: record N", the request being parsed, into buf. */
const char *trace_where(const struct qs_trace *t, char *buf, size_t len);

/* Strip the line end and surrounding blanks in place. */
char *trace_trim(char *s);

/* An unsigned decimal that fills the whole string. */
bool trace_parse_u64(const char *s, uint64_t *out);

/*
 * A decimal number of units, fractions allowed ("12", "0.25"), as a whole
 * count of nanoseconds with unit_ns per unit (fraction digits below one
 * nanosecond are dropped). false on junk, a sign or overflow.
 */
bool trace_parse_ns(const char *s, uint64_t unit_ns, uint64_t *out);

/* Map io's orig_off/orig_len to engine blocks and wrap them into the span:
 * 1 with a request, 0 to skip it (a trim with no whole block), -EINVAL. */
int trace_map_range(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen);

/* io's issue time from a stamp of unit_ns per tick (field names the stamp
 * in messages): 0 or -EINVAL. */
int trace_set_time(struct qs_trace *t, struct qs_io *io, uint64_t stamp, double unit_ns,
		   const char *field, char *err, size_t errlen);

/*
 * blktrace's and blkparse's classification of one queued request (both
 * readers take it from here, so they cannot disagree): flush is the F
 * before the direction, dir blkparse's direction letter (D discard, W
 * write, R read, N none), off and len in bytes. Fills io and, for a write
 * with a preflush, t's read-ahead write. 1 with a request, 0 to skip one
 * with no data and no flush, -EINVAL.
 */
int trace_blk_request(struct qs_trace *t, bool flush, char dir, uint64_t off, uint64_t len,
		      uint64_t stamp_ns, struct qs_io *io, char *err, size_t errlen);

/* The one device of a blktrace or blkparse trace: 0, or -EINVAL naming
 * the first one when dev is a second. */
int trace_blk_device(struct qs_trace *t, const char *dev, char *err, size_t errlen);

/* trace_blk.c: blktrace binary files. */
bool trace_blk_magic(const unsigned char *b, size_t n);
int trace_blk_open(struct qs_trace *t, bool base, char *err, size_t errlen);
int trace_blk_next(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen);
void trace_blk_close(struct qs_trace *t);
unsigned trace_blk_files(const struct qs_trace *t);
unsigned trace_blk_siblings(const struct qs_trace *t);
/* blkparse's default text output: one line. */
bool trace_blkparse_line(const char *s);
int trace_parse_blkparse(struct qs_trace *t, char *s, struct qs_io *io, char *err,
			 size_t errlen);

/* trace_csv.c: the libCacheSim layout and CSV with a column map. */
bool trace_lcs_line(const char *s);
int trace_parse_lcs(struct qs_trace *t, char *s, struct qs_io *io, char *err, size_t errlen);
int trace_parse_csv(struct qs_trace *t, char *s, struct qs_io *io, char *err, size_t errlen);
/* Split s at commas in place into at most max trimmed fields; the count
 * (max + 1 when there are more). */
int trace_csv_split(char *s, char **fld, int max);

#endif
