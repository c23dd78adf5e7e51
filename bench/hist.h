/* SPDX-License-Identifier: MIT */
/*
 * Latency histogram with log-linear buckets, like fio's: values below 128
 * have a bucket each; above, every power-of-two range [2^k, 2^(k+1)) is cut
 * into 128 equal buckets. A value is reported as its bucket's midpoint, so
 * the relative error of any percentile is below 1/256 (0.4%). Mean, min and
 * max are exact. Memory is fixed (about 59 KiB) whatever is recorded.
 * Not thread-safe: one histogram per thread, merged afterwards.
 */
#ifndef QS_BENCH_HIST_H
#define QS_BENCH_HIST_H

#include <stddef.h>
#include <stdint.h>

#define QS_HIST_SUB_BITS 7
#define QS_HIST_SUB (1u << QS_HIST_SUB_BITS)
#define QS_HIST_BUCKETS (QS_HIST_SUB + (64 - QS_HIST_SUB_BITS) * QS_HIST_SUB)

struct qs_hist {
	uint64_t count;
	uint64_t min, max;
	long double sum; /* exact for any realistic run */
	long double sumsq; /* of the values' squares: fio's stddev */
	uint64_t bucket[QS_HIST_BUCKETS];
};

/* Empty h (also how a caller-allocated histogram is initialised). */
void qs_hist_reset(struct qs_hist *h);

/* Allocate an empty histogram; NULL if out of memory. Free with free(). */
struct qs_hist *qs_hist_new(void);

/* Record one value (nanoseconds, by convention). */
void qs_hist_add(struct qs_hist *h, uint64_t v);

/* Record n values v at once (as n calls of qs_hist_add). */
void qs_hist_add_n(struct qs_hist *h, uint64_t v, uint64_t n);

/* Add every value recorded in src to dst; src is unchanged. */
void qs_hist_merge(struct qs_hist *dst, const struct qs_hist *src);

/* Exact mean; 0 when empty. */
double qs_hist_mean(const struct qs_hist *h);

/* Sample standard deviation (n - 1 in the denominator, as fio prints
 * it); 0 with fewer than two values. */
double qs_hist_stddev(const struct qs_hist *h);

/*
 * The p-th percentile (0 < p <= 100): the smallest recorded value v such
 * that at least p% of values are <= v, reported as its bucket's midpoint,
 * clamped to [min, max]. 0 when empty.
 */
uint64_t qs_hist_percentile(const struct qs_hist *h, double p);

/* Bucket index of v and the range of values [lo, hi] it holds. */
size_t qs_hist_bucket_of(uint64_t v);
void qs_hist_bucket_range(size_t idx, uint64_t *lo, uint64_t *hi);

#endif
