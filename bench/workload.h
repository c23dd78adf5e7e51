/* SPDX-License-Identifier: MIT */
/*
 * Bench workload streams: the I/Os a job asks for, one at a time.
 *
 * A stream belongs to one clone of one job (fio's numjobs makes clones).
 * It is either generated from the job's options (rw, bs, rwmixread,
 * random_distribution, rate_iops...) or replayed from a trace (bench/trace.h).
 * Either way the caller gets the same struct qs_io items and drives them:
 * closed loop (keep iodepth in flight, ignore at_ns) or open loop (issue each
 * I/O at its at_ns). The stream reads no clock and does no I/O.
 *
 * Generated streams are deterministic: the same job, clone and seed give the
 * same sequence on every machine (own PRNG, no rand(), no floating-point
 * state shared between streams).
 */
#ifndef QS_BENCH_WORKLOAD_H
#define QS_BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct qs_job;

enum qs_io_op {
	QS_IO_READ = 0,
	QS_IO_WRITE = 1,
	QS_IO_TRIM = 2,	 /* engine discard */
	QS_IO_SYNC = 3,	 /* engine flush; off and len are 0 */
};

/* One I/O of a stream. */
struct qs_io {
	enum qs_io_op op;
	uint64_t off, len;	     /* bytes to submit: 4 KiB aligned, in range */
	uint64_t orig_off, orig_len; /* bytes as the trace/job asked, for reports */
	uint64_t at_ns;		     /* issue time since stream start, if timed */
	bool timed;		     /* rated job or timed trace: honour at_ns */
	bool fua;		     /* a write durable when it completes (fio's
					sync, write_barrier) */
};

/* Small deterministic PRNG: xoshiro256**, seeded through splitmix64. */
struct qs_wl_rng {
	uint64_t s[4];
};

/* Seed rng from one 64-bit value; any value (including 0) is fine. */
void qs_wl_rng_seed(struct qs_wl_rng *rng, uint64_t seed);
/* Next 64 random bits. */
uint64_t qs_wl_rng_next(struct qs_wl_rng *rng);
/* Uniform integer in [0, n), n > 0, without modulo bias worth noting (<2^-64). */
uint64_t qs_wl_rng_below(struct qs_wl_rng *rng, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. */
double qs_wl_rng_double(struct qs_wl_rng *rng);

struct qs_wl;

/*
 * Open the stream of clone `clone` (0 .. job->numjobs-1) of job. seed is the
 * run's seed; each job clone derives its own from it, its job name and its
 * clone number, so adding a job does not change the streams of the others.
 * A trace job opens its trace file here (path as in the job, relative to
 * the current directory). The stream keeps a pointer to job, which must
 * outlive it. On error returns -errno and writes a message naming the file
 * and line (trace) or the job to err. The caller owns *out and frees it with
 * qs_wl_close().
 */
int qs_wl_open(const struct qs_job *job, unsigned clone, uint64_t seed,
	       struct qs_wl **out, char *err, size_t errlen);

/*
 * Produce the next I/O into *io. Returns 1 when an I/O was produced, 0 when
 * the stream has ended (a job that is not time_based ends after `size` bytes;
 * a trace ends at its end; a time_based job never ends: the caller stops it
 * at runtime), or -errno on a bad trace line (message via qs_wl_error()).
 * Time (runtime, ramp_time) is the caller's to enforce.
 */
int qs_wl_next(struct qs_wl *w, struct qs_io *io);

/* The last error message of w ("" if none); valid until the next call. */
const char *qs_wl_error(const struct qs_wl *w);

/* The byte range [*off, *off + *len) this clone's I/Os fall in. */
void qs_wl_span(const struct qs_wl *w, uint64_t *off, uint64_t *len);

/* Free w (NULL is fine), closing its trace if any. */
void qs_wl_close(struct qs_wl *w);

#endif
