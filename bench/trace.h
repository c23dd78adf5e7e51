/* SPDX-License-Identifier: MIT */
/*
 * Bench trace replay: readers for block I/O traces that yield the same
 * struct qs_io items as generated workloads (bench/workload.h).
 *
 * Formats:
 *  - MQSim: "arrival_time device start_lba size_in_sectors type" (512-byte
 *    sectors, type 0 = write, 1 = read); time unit taken as 1 ns, as MQSim
 *    reads it.
 *  - MSR Cambridge CSV: "Timestamp,Hostname,DiskNumber,Type,Offset,Size,
 *    ResponseTime", Timestamp in Windows filetime (100 ns), bytes.
 *  - fio iolog version 2: "fio version 2 iolog", then "FILE add|open|close"
 *    and "FILE read|write|trim|sync OFFSET LENGTH" lines; no time stamps, so
 *    its I/Os are never timed.
 *  - blktrace binary (struct blk_io_trace records, <linux/blktrace_api.h>,
 *    either byte order): one file (a per-CPU NAME.blktrace.N, or a merged
 *    dump of blkparse -d), or the base NAME of blktrace -o NAME, whose
 *    per-CPU files NAME.blktrace.0, .1, ... (up to the first missing one,
 *    as blkparse looks for them) are merged by time.
 *  - blkparse's default text output of such a trace.
 *    Of both, only queue (Q) events are requests: what the application
 *    asked for, once each, before the scheduler merged, split or requeued
 *    it (the later G, I, D, C events of the same request are not counted
 *    again). Discards are trims, a flush with no data a sync, a write with
 *    a preflush (FWS) a sync and then the write; one device per trace.
 *  - libCacheSim's block CSV (its data/ layout): "version,time,op,size,
 *    lbn", time in seconds, op a SCSI opcode in hex (08/28/a8/88 read,
 *    0a/2a/aa/8a write, 35/91 synchronize cache), size in bytes, lbn in
 *    512-byte sectors; an optional header line; other opcodes are skipped.
 *  - CSV with a column map (trace_columns, struct qs_trace_cols).
 *
 * Mapping to the engine's 4 KiB units (why: the engine only takes whole
 * 4 KiB blocks): reads and writes are rounded outward, off down and end up
 * to 4 KiB, so the submitted range covers every byte the trace touched;
 * trims are rounded inward (a discard must not zero bytes the trace did not
 * trim) and a trim smaller than one aligned block is skipped. The original
 * byte offset and length are kept in orig_off/orig_len for reporting.
 * When a span is given, offsets wrap modulo the span length (traces often
 * address more than a simulated drive holds); a request that would then
 * straddle the span's end is moved back to end there.
 *
 * Time: at_ns = (stamp - first stamp) * native unit * timescale, so the
 * first request is at 0 and timescale 0.5 replays twice as fast. With
 * ignore_time set, I/Os are untimed (replay as fast as the queue allows).
 */
#ifndef QS_BENCH_TRACE_H
#define QS_BENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "workload.h"

enum qs_trace_format {
	QS_TRACE_AUTO = 0, /* detect from the first bytes and the first line */
	QS_TRACE_MQSIM = 1,
	QS_TRACE_MSR = 2,
	QS_TRACE_IOLOG = 3,
	QS_TRACE_BLKTRACE = 4, /* blktrace binary */
	QS_TRACE_BLKPARSE = 5, /* blkparse's default text */
	QS_TRACE_LCS = 6,      /* libCacheSim CSV: version,time,op,size,lbn */
	QS_TRACE_CSV = 7,      /* CSV with a column map (opts.cols) */
};
#define QS_TRACE_FORMATS 8

/* The fields of a CSV line a column map places. */
enum qs_trace_field {
	QS_TF_TIME = 0,
	QS_TF_OP,
	QS_TF_OFFSET,
	QS_TF_SIZE,
	QS_TF_N,
};

/* How a CSV's op column writes the direction. */
enum qs_trace_opcode {
	QS_TOP_NAME = 0, /* read/r, write/w, trim/discard/d, flush/sync/f */
	QS_TOP_SCSI,	 /* a SCSI opcode in hex, as libCacheSim's */
	QS_TOP_W0R1,	 /* 0 write, 1 read (MQSim's) */
	QS_TOP_R0W1,	 /* 0 read, 1 write */
};

/* The largest column a map may name. */
#define QS_TRACE_MAX_COL 64

/*
 * A column map, "time:1:s,op:2:scsi,size:4:B,offset:5:sector": for each
 * field its column, counted from 1 (0: the trace has none; only time may
 * be left out, the trace is then untimed), and its unit.
 */
struct qs_trace_cols {
	unsigned col[QS_TF_N];
	uint64_t unit[QS_TF_N];	  /* time: ns per unit; offset, size: bytes per unit */
	enum qs_trace_opcode opcode; /* the op column's encoding */
};

/* The largest request a trace may hold (after the 4 KiB mapping), as a
 * job's largest bs: a larger one is refused naming the file and line
 * rather than failing in the driver without either. */
#define QS_TRACE_MAX_IO (16ull << 20)
/* The latest time a request may come after the first, scaled: beyond it
 * the nanoseconds no longer fit a double exactly (and a stamp near 2^64
 * overflowed to 2^63 ns). */
#define QS_TRACE_MAX_NS (365ull * 86400 * 1000000000)
/* trace_timescale's range: enough to take seconds to nanoseconds (1e9)
 * and any stamp unit from picoseconds to a millennium. */
#define QS_TRACE_MAX_SCALE 1e12

struct qs_trace_opts {
	enum qs_trace_format format;
	struct qs_trace_cols cols;   /* QS_TRACE_CSV: the column map */
	double timescale;	     /* multiplies time stamps; > 0, 1.0 = as is */
	bool ignore_time;	     /* untimed replay */
	uint64_t span_off, span_len; /* wrap into this range; span_len 0 = no wrap */
	/* fio's replay_scale and replay_align: each request's offset divided
	 * by scale, then aligned down to align (a power of 2), before the
	 * 4 KiB mapping; 0: as is */
	uint64_t scale, align;
};

struct qs_trace;

/* "auto", "mqsim", "msr", "iolog", "blktrace", "blkparse", "libcachesim",
 * "csv" -> *f; -EINVAL if unknown. */
int qs_trace_format_parse(const char *name, enum qs_trace_format *f);
const char *qs_trace_format_name(enum qs_trace_format f);

/*
 * Parse a column map (the job key trace_columns) into *c: comma-separated
 * FIELD:COLUMN[:UNIT] with FIELD time (a unit is needed: s, ms, us, ns,
 * 100ns), op (name, scsi, w0r1, r0w1; default name), offset and size (B,
 * sector, KiB or a number of bytes; default B). op, offset and size are
 * needed, each field and column once. On error -EINVAL and why in err
 * (without the value, which the caller quotes).
 */
int qs_trace_columns_parse(const char *s, struct qs_trace_cols *c, char *err, size_t errlen);

/*
 * Open the trace at path (read as a stream; memory does not grow with the
 * trace), a regular file, or for blktrace the base name of its per-CPU
 * files. opts is copied. With QS_TRACE_AUTO the format is detected: the
 * blktrace magic in the first bytes (or no file at path but
 * path.blktrace.0), else from the first line that is not a comment: the
 * iolog header, a blkparse event line, libCacheSim's header or 5-field
 * line, MSR's header or 7-field line, 5 numbers for MQSim; a column map
 * makes it csv. A first line of none of these is refused naming its line
 * and the formats. On error returns -errno and writes "path: reason" to
 * err. The caller owns *out and frees it with qs_trace_close().
 */
int qs_trace_open(const char *path, const struct qs_trace_opts *opts,
		  struct qs_trace **out, char *err, size_t errlen);

/*
 * Read the next request into *io. Returns 1 with an I/O, 0 at the end of the
 * trace, -EINVAL on a malformed line (err gets "path:line: what is wrong"),
 * or another -errno on a read error.
 */
int qs_trace_next(struct qs_trace *t, struct qs_io *io, char *err,
		  size_t errlen);

/* The format in use (after AUTO was resolved). */
enum qs_trace_format qs_trace_format_of(const struct qs_trace *t);

/* Records skipped so far (sub-block trims, "FILE add/open/close" lines,
 * blktrace events other than a queued request, SCSI commands that move no
 * data). */
uint64_t qs_trace_skipped(const struct qs_trace *t);

/* blktrace binary: the files read (1 for one file), and the per-CPU files
 * beside a single NAME.blktrace.N that was named alone (0 otherwise). */
unsigned qs_trace_files(const struct qs_trace *t);
unsigned qs_trace_siblings(const struct qs_trace *t);

/* Close t (NULL is fine). */
void qs_trace_close(struct qs_trace *t);

/* Request sizes of a summary: up to 512 B, 1 KiB, ... 1 MiB, and above. */
#define QS_TRACE_SIZE_BUCKETS 13
/* A summary counts distinct 4 KiB blocks in chunks of 2 MiB; beyond this
 * many chunks (512 MiB of tables) it stops and says so. */
#define QS_TRACE_FOOTPRINT_MAX_CHUNKS (1u << 22)

/*
 * What a trace holds, read through once (qs_trace_scan): for the summary
 * line a bench run prints per trace, and the largest request, which the
 * run's buffers must hold. Offsets are the trace's own, before wrapping.
 */
struct qs_trace_summary {
	enum qs_trace_format format;
	uint64_t reads, writes, trims, flushes, skipped;
	uint64_t read_bytes, write_bytes;
	uint64_t size_hist[QS_TRACE_SIZE_BUCKETS]; /* reads and writes, orig_len */
	uint64_t writes_4k;	   /* writes whose offset and length are 4 KiB multiples */
	uint64_t writes_iu;	   /* ... multiples of the IU (whole IUs) */
	uint64_t write_mod8[8];	   /* writes by start sector (512 B) mod 8 */
	uint64_t footprint_blocks; /* distinct 4 KiB blocks read or written */
	bool footprint_capped;	   /* more than QS_TRACE_FOOTPRINT_MAX_CHUNKS: a lower bound */
	uint64_t max_end;	   /* the highest byte addressed, plus one */
	uint64_t max_io;	   /* the largest request after the 4 KiB mapping */
	bool timed;
	uint64_t duration_ns;	   /* last request's time after the first's, scaled */
	double timescale;
	uint32_t iu_bytes;
	unsigned files, siblings;  /* qs_trace_files, qs_trace_siblings */
};

/*
 * Read the trace at path through with opts (as a replay would, span
 * included, so that every refusal the replay would meet comes now) into
 * *s; iu_bytes is the drive's IU for the alignment share. 0, or -errno
 * with err as qs_trace_open and qs_trace_next write it. Memory: the
 * footprint's tables, freed before it returns.
 */
int qs_trace_scan(const char *path, const struct qs_trace_opts *opts, uint32_t iu_bytes,
		  struct qs_trace_summary *s, char *err, size_t errlen);

/*
 * Whether most writes (at least half, of at least 8) start at one sector
 * offset k != 0 within 4 KiB blocks, as a partition misaligned by k
 * sectors makes them (k 7: one starting at sector 63); *k and *share (of
 * the writes) set when true.
 */
bool qs_trace_summary_misaligned(const struct qs_trace_summary *s, unsigned *k, double *share);

/*
 * One line (no newline) of s into buf: requests, reads and writes (trims
 * and flushes when there are any), the size histogram, the shares of
 * writes aligned to 4 KiB and to the IU (and a misaligned partition),
 * footprint, highest offset, duration. Returns buf.
 */
const char *qs_trace_summary_format(const struct qs_trace_summary *s, char *buf, size_t len);

/* How qs_trace_export writes its fio iolog (bench/trace_export.c). */
struct qs_trace_export_opts {
	const char *file; /* the file name every line gives: 1 to 256 bytes, no blanks */
	bool timed;	  /* version 3, stamped in microseconds; else version 2, untimed */
};

/* What an export wrote and skipped. */
struct qs_trace_export_result {
	enum qs_trace_format format;   /* the trace's, AUTO resolved */
	uint64_t lines[QS_IO_SYNC + 1]; /* requests written, by enum qs_io_op */
	uint64_t skipped;	       /* qs_trace_skipped at the end */
	bool out_failed;	       /* the error was in writing out, not the trace */
};

/*
 * Read the trace at path with opts (as a replay does: qs_trace_next's
 * mapping and span) and write it to out as a fio iolog: the header, "FILE
 * add" and "FILE open", one "FILE read|write|trim|sync OFFSET LENGTH" line
 * per request (a flush is "FILE sync 0 0": fio takes a line with fewer
 * fields for a file action), "FILE close". With eo->timed, version 3: each
 * line starts with the request's time in microseconds (fio 3.33 reads
 * them so), plus 1 (why: in trace_export.c); a trace without time stamps
 * is refused before anything is written. Any time; out stays the
 * caller's (written, not flushed or closed). Fills *res (also on failure:
 * what was done so far). Returns 0, or -errno with err as qs_trace_open
 * and qs_trace_next write it ("path:line: what"; -EINVAL for a bad trace,
 * a file name fio cannot read back, or a timed export of an untimed
 * trace) or, with res->out_failed, the write's error and err "writing the
 * iolog: reason".
 */
int qs_trace_export(const char *path, const struct qs_trace_opts *opts,
		    const struct qs_trace_export_opts *eo, FILE *out,
		    struct qs_trace_export_result *res, char *err, size_t errlen);

#endif
