/* SPDX-License-Identifier: MIT */
/* Log-linear latency histogram (see hist.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

void qs_hist_reset(struct qs_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

struct qs_hist *qs_hist_new(void)
{
	struct qs_hist *h = malloc(sizeof(*h));
	if (h)
		qs_hist_reset(h);
	return h;
}

size_t qs_hist_bucket_of(uint64_t v)
{
	if (v < QS_HIST_SUB)
		return (size_t)v;
	unsigned msb = 63 - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
	unsigned shift = msb - QS_HIST_SUB_BITS;
	/* The top SUB_BITS bits below the leading one pick the sub-bucket. */
	size_t sub = (size_t)((v >> shift) & (QS_HIST_SUB - 1));
	return QS_HIST_SUB + (size_t)shift * QS_HIST_SUB + sub;
}

void qs_hist_bucket_range(size_t idx, uint64_t *lo, uint64_t *hi)
{
	if (idx < QS_HIST_SUB) {
		*lo = *hi = idx;
		return;
	}
	size_t shift = (idx - QS_HIST_SUB) / QS_HIST_SUB;
	uint64_t sub = (idx - QS_HIST_SUB) % QS_HIST_SUB;
	uint64_t base = (uint64_t)(QS_HIST_SUB + sub) << shift;
	*lo = base;
	*hi = base + ((1ull << shift) - 1);
}

void qs_hist_add(struct qs_hist *h, uint64_t v)
{
	h->bucket[qs_hist_bucket_of(v)]++;
	h->count++;
	h->sum += (long double)v;
	h->sumsq += (long double)v * (long double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void qs_hist_add_n(struct qs_hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	h->bucket[qs_hist_bucket_of(v)] += n;
	h->count += n;
	h->sum += (long double)v * (long double)n;
	h->sumsq += (long double)v * (long double)v * (long double)n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void qs_hist_merge(struct qs_hist *dst, const struct qs_hist *src)
{
	if (!src->count)
		return;
	for (size_t i = 0; i < QS_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double qs_hist_mean(const struct qs_hist *h)
{
	return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

double qs_hist_stddev(const struct qs_hist *h)
{
	if (h->count < 2)
		return 0.0;
	long double n = (long double)h->count;
	long double var = (h->sumsq - h->sum * h->sum / n) / (n - 1);
	/* rounding may leave a tiny negative variance for equal values */
	return var > 0 ? (double)sqrtl(var) : 0.0;
}

uint64_t qs_hist_percentile(const struct qs_hist *h, double p)
{
	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	/* Rank of the wanted value, 1-based: ceil(p/100 * count). */
	double r = p * (double)h->count / 100.0;
	/* Trim floating-point noise so that 99% of 100 values is rank 99. */
	uint64_t rank = (uint64_t)ceil(r - r * 1e-12);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (size_t i = 0; i < QS_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t lo, hi;
			qs_hist_bucket_range(i, &lo, &hi);
			uint64_t mid = lo + (hi - lo) / 2;
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;
}
