/* SPDX-License-Identifier: MIT */
/*
 * A trace read through once before a bench run (qs_trace_scan): every
 * refusal the replay would meet, found before the drive is filled, and the
 * summary line the run prints for it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* 4 KiB blocks per footprint chunk: 512 (2 MiB), one 64-byte bitmap. */
#define FP_SHIFT 9
#define FP_WORDS ((1u << FP_SHIFT) / 64)

/* The distinct 4 KiB blocks a trace touches: 2 MiB chunks with a bitmap
 * each, in an open-addressed table (the chunks of a sparse trace cost
 * only what they hold). */
struct fp_chunk {
	uint64_t key; /* chunk index + 1; 0 = empty slot */
	uint64_t bits[FP_WORDS];
};

struct fp_set {
	struct fp_chunk *slot;
	size_t cap, n; /* cap a power of two */
	uint64_t blocks;
	bool capped;
};

static size_t fp_hash(uint64_t k, size_t cap)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static struct fp_chunk *fp_find(struct fp_chunk *slot, size_t cap, uint64_t key)
{
	size_t i = fp_hash(key, cap);
	while (slot[i].key && slot[i].key != key)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

/* Double the table; false when out of memory or at the cap. */
static bool fp_grow(struct fp_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	if (s->n >= QS_TRACE_FOOTPRINT_MAX_CHUNKS)
		return false;
	struct fp_chunk *n = calloc(cap, sizeof(*n));
	if (!n)
		return false;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i].key)
			*fp_find(n, cap, s->slot[i].key) = s->slot[i];
	free(s->slot);
	s->slot = n;
	s->cap = cap;
	return true;
}

/* Mark block b; false when the table can hold no more chunks. */
static bool fp_add(struct fp_set *s, uint64_t b)
{
	uint64_t key = (b >> FP_SHIFT) + 1;
	if (s->n * 2 >= s->cap && !fp_grow(s))
		return false;
	struct fp_chunk *c = fp_find(s->slot, s->cap, key);
	if (!c->key) {
		c->key = key;
		s->n++;
	}
	unsigned i = (unsigned)(b & ((1u << FP_SHIFT) - 1));
	uint64_t m = 1ull << (i % 64);
	if (!(c->bits[i / 64] & m)) {
		c->bits[i / 64] |= m;
		s->blocks++;
	}
	return true;
}

/* The 4 KiB blocks of [off, off + len). */
static void fp_range(struct fp_set *s, uint64_t off, uint64_t len)
{
	if (s->capped || !len)
		return;
	for (uint64_t b = off / 4096, e = (off + len - 1) / 4096; b <= e; b++) {
		if (!fp_add(s, b)) {
			s->capped = true;
			return;
		}
	}
}

/* Bucket of a request size: <= 512 B, <= 1 KiB, ... <= 1 MiB, above. */
static unsigned sum_bucket(uint64_t len)
{
	unsigned b = 0;
	for (uint64_t lim = 512; b < QS_TRACE_SIZE_BUCKETS - 1 && len > lim; lim *= 2)
		b++;
	return b;
}

static void sum_add(struct qs_trace_summary *s, struct fp_set *fp, const struct qs_io *io)
{
	if (io->timed && io->at_ns > s->duration_ns)
		s->duration_ns = io->at_ns;
	s->timed |= io->timed;
	if (io->op == QS_IO_SYNC) {
		s->flushes++;
		return;
	}
	if (io->len > s->max_io)
		s->max_io = io->len;
	if (io->orig_off + io->orig_len > s->max_end)
		s->max_end = io->orig_off + io->orig_len;
	if (io->op == QS_IO_TRIM) {
		s->trims++;
		return;
	}
	s->size_hist[sum_bucket(io->orig_len)]++;
	fp_range(fp, io->orig_off, io->orig_len);
	if (io->op == QS_IO_READ) {
		s->reads++;
		s->read_bytes += io->orig_len;
		return;
	}
	s->writes++;
	s->write_bytes += io->orig_len;
	s->writes_4k += io->orig_off % 4096 == 0 && io->orig_len % 4096 == 0;
	s->writes_iu += s->iu_bytes && io->orig_off % s->iu_bytes == 0 &&
			io->orig_len % s->iu_bytes == 0;
	s->write_mod8[(io->orig_off / 512) % 8]++;
}

int qs_trace_scan(const char *path, const struct qs_trace_opts *opts, uint32_t iu_bytes,
		  struct qs_trace_summary *s, char *err, size_t errlen)
{
	struct qs_trace *t;
	struct fp_set fp = {0};
	struct qs_io io;
	memset(s, 0, sizeof(*s));
	int rc = qs_trace_open(path, opts, &t, err, errlen);
	if (rc)
		return rc;
	s->iu_bytes = iu_bytes;
	s->timescale = opts->timescale;
	while ((rc = qs_trace_next(t, &io, err, errlen)) == 1)
		sum_add(s, &fp, &io);
	s->format = qs_trace_format_of(t);
	s->skipped = qs_trace_skipped(t);
	s->files = qs_trace_files(t);
	s->siblings = qs_trace_siblings(t);
	s->footprint_blocks = fp.blocks;
	s->footprint_capped = fp.capped;
	free(fp.slot);
	qs_trace_close(t);
	return rc < 0 ? rc : 0;
}

bool qs_trace_summary_misaligned(const struct qs_trace_summary *s, unsigned *k, double *share)
{
	unsigned best = 1;
	for (unsigned i = 2; i < 8; i++)
		if (s->write_mod8[i] > s->write_mod8[best])
			best = i;
	if (s->writes < 8 || s->write_mod8[best] * 2 < s->writes)
		return false;
	*k = best;
	*share = 100.0 * (double)s->write_mod8[best] / (double)s->writes;
	return true;
}

/* Append to buf at *at (cut at len). */
static void sum_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void sum_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	if (*at >= len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static double sum_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* "4K" for 4096, "512" for 512 ... */
static const char *sum_size_name(unsigned b, char *buf, size_t len)
{
	uint64_t v = 512ull << b;
	if (v >= 1ull << 20)
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v >= 1024)
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static void sum_counts(const struct qs_trace_summary *s, char *buf, size_t len, size_t *at)
{
	uint64_t n = s->reads + s->writes + s->trims + s->flushes;
	sum_put(buf, len, at, "%" PRIu64 " requests: %" PRIu64 " reads, %" PRIu64 " writes", n,
		s->reads, s->writes);
	if (s->trims)
		sum_put(buf, len, at, ", %" PRIu64 " trims", s->trims);
	if (s->flushes)
		sum_put(buf, len, at, ", %" PRIu64 " flushes", s->flushes);
	if (s->skipped)
		sum_put(buf, len, at, " (%" PRIu64 " records not replayed: no request, or a trim "
			"under 4 KiB)", s->skipped);
}

static void sum_hist(const struct qs_trace_summary *s, char *buf, size_t len, size_t *at)
{
	uint64_t n = s->reads + s->writes;
	char name[16];
	if (!n)
		return;
	sum_put(buf, len, at, "; sizes");
	for (unsigned b = 0; b < QS_TRACE_SIZE_BUCKETS; b++) {
		if (!s->size_hist[b])
			continue;
		if (b == QS_TRACE_SIZE_BUCKETS - 1)
			sum_put(buf, len, at, " >1M");
		else
			sum_put(buf, len, at, " <=%s", sum_size_name(b, name, sizeof(name)));
		sum_put(buf, len, at, " %.1f%%", sum_pct(s->size_hist[b], n));
	}
}

static void sum_align(const struct qs_trace_summary *s, char *buf, size_t len, size_t *at)
{
	unsigned k;
	double share;
	if (!s->writes)
		return;
	sum_put(buf, len, at, "; writes aligned to 4 KiB %.1f%%, to the %u KiB IU %.1f%%",
		sum_pct(s->writes_4k, s->writes), s->iu_bytes / 1024,
		sum_pct(s->writes_iu, s->writes));
	if (qs_trace_summary_misaligned(s, &k, &share))
		sum_put(buf, len, at, "; MISALIGNED: %.1f%% of writes start at sector %u mod 8, "
			"as on a partition starting %u sectors past a 4 KiB boundary%s", share, k, k,
			k == 7 ? " (such as sector 63)" : "");
}

/* Bytes in decimal units, from KB to TB, one decimal. */
static const char *sum_bytes(double b, char *buf, size_t len)
{
	static const char *const unit[] = {"KB", "MB", "GB", "TB"};
	unsigned u = 0;
	b /= 1e3;
	while (u < 3 && b >= 1e3) {
		b /= 1e3;
		u++;
	}
	snprintf(buf, len, "%.1f %s", b, unit[u]);
	return buf;
}

static void sum_span(const struct qs_trace_summary *s, char *buf, size_t len, size_t *at)
{
	char a[32], b[32];
	sum_put(buf, len, at, "; footprint %s%s, highest offset %s",
		s->footprint_capped ? "over " : "",
		sum_bytes((double)s->footprint_blocks * 4096, a, sizeof(a)),
		sum_bytes((double)s->max_end, b, sizeof(b)));
	if (!s->timed) {
		sum_put(buf, len, at, "; untimed");
	} else {
		sum_put(buf, len, at, "; duration %.3f s", (double)s->duration_ns / 1e9 / s->timescale);
		if (s->timescale != 1.0)
			sum_put(buf, len, at, " (%.3f s at trace_timescale %g)",
				(double)s->duration_ns / 1e9, s->timescale);
	}
	if (s->siblings)
		sum_put(buf, len, at, "; one per-CPU file of %u: name the trace's base (without "
			".blktrace.N) to read them all", s->siblings + 1);
	else if (s->files > 1)
		sum_put(buf, len, at, "; %u per-CPU files merged", s->files);
}

const char *qs_trace_summary_format(const struct qs_trace_summary *s, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	sum_counts(s, buf, len, &at);
	sum_hist(s, buf, len, &at);
	sum_align(s, buf, len, &at);
	sum_span(s, buf, len, &at);
	return buf;
}
