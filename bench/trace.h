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

#include "workload.h"

enum qs_trace_format {
	QS_TRACE_AUTO = 0, /* guess from the first line */
	QS_TRACE_MQSIM = 1,
	QS_TRACE_MSR = 2,
	QS_TRACE_IOLOG = 3,
};

/* The largest request a trace may hold (after the 4 KiB mapping), as a
 * job's largest bs: a larger one is refused naming the file and line
 * rather than failing in the driver without either. */
#define QS_TRACE_MAX_IO (16ull << 20)
/* The latest time a request may come after the first, scaled: beyond it
 * the nanoseconds no longer fit a double exactly (and a stamp near 2^64
 * overflowed to 2^63 ns). */
#define QS_TRACE_MAX_NS (365ull * 86400 * 1000000000)

struct qs_trace_opts {
	enum qs_trace_format format;
	double timescale;	     /* multiplies time stamps; > 0, 1.0 = as is */
	bool ignore_time;	     /* untimed replay */
	uint64_t span_off, span_len; /* wrap into this range; span_len 0 = no wrap */
};

struct qs_trace;

/* "auto", "mqsim", "msr", "iolog" -> *f; -EINVAL if unknown. */
int qs_trace_format_parse(const char *name, enum qs_trace_format *f);
const char *qs_trace_format_name(enum qs_trace_format f);

/*
 * Open the trace at path (read line by line; memory does not grow with the
 * trace). opts is copied. With QS_TRACE_AUTO the format is guessed from the
 * first non-empty line: the iolog header, else a comma means MSR, else
 * MQSim. On error returns -errno and writes "path: reason" to err. The
 * caller owns *out and frees it with qs_trace_close().
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

/* Records skipped so far (sub-block trims, "FILE add/open/close" lines). */
uint64_t qs_trace_skipped(const struct qs_trace *t);

/* Close t (NULL is fine). */
void qs_trace_close(struct qs_trace *t);

#endif
