/* SPDX-License-Identifier: MIT */
/*
 * Bench workload streams (see workload.h).
 *
 * Random offsets are drawn as block numbers in [0, nblocks) of the clone's
 * span, nblocks = size / bs:
 *  - random (uniform): like fio's default random map, every block is hit
 *    once per pass, in an order given by a keyed permutation (a Feistel
 *    network on the next power of four, cycle-walking down into range), new
 *    key each pass. norandommap=1 draws independently instead.
 *  - zipf:theta: rank k (1-based) has probability k^-theta / zeta(n, theta),
 *    sampled with the closed-form method of Gray et al. ("Quickly
 *    generating billion-record synthetic databases", SIGMOD 1994), which is
 *    also what fio uses.
 *  - pareto:h: rank = (n - 1) * u^(ln h / ln(1 - h)) for uniform u, fio's
 *    meaning: a fraction h of the blocks receives a fraction 1 - h of the
 *    hits (pareto:0.2 is the 80/20 rule).
 * Like fio, which hashes the zipf/pareto rank, the hot ranks are scattered
 * over the span (a fixed keyed permutation of the ranks), so hot blocks are
 * not all at the start of the span; which block is hot depends on the seed.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/rand.h"

#include "job.h"
#include "trace.h"
#include "workload.h"

void qs_wl_rng_seed(struct qs_wl_rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng->s[i] = qs_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t qs_wl_rng_next(struct qs_wl_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t qs_wl_rng_below(struct qs_wl_rng *rng, uint64_t n)
{
	/* Multiply-shift: the bias is at most n / 2^64. */
	return (uint64_t)(((unsigned __int128)qs_wl_rng_next(rng) * n) >> 64);
}

double qs_wl_rng_double(struct qs_wl_rng *rng)
{
	return (double)(qs_wl_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* A keyed bijection of [0, n): Feistel network on 2*half bits. */
struct perm {
	uint64_t n;
	unsigned half; /* bits per half */
	uint64_t key;
};

static void perm_init(struct perm *p, uint64_t n, uint64_t key)
{
	unsigned bits = 0;
	while (bits < 64 && (n - 1) >> bits)
		bits++;
	p->n = n;
	p->half = (bits + 1) / 2;
	if (p->half == 0)
		p->half = 1;
	p->key = key;
}

static uint64_t perm_round(uint64_t x, uint64_t key, unsigned r)
{
	uint64_t s = x ^ key ^ ((uint64_t)r << 56);
	return qs_splitmix64(&s);
}

static uint64_t perm_apply(const struct perm *p, uint64_t x)
{
	uint64_t mask = (1ull << p->half) - 1;
	/* Cycle-walk: the domain is below 4n, so few steps on average. */
	do {
		uint64_t l = x >> p->half, r = x & mask;
		for (unsigned i = 0; i < 4; i++) {
			uint64_t nl = r;
			r = l ^ (perm_round(r, p->key, i) & mask);
			l = nl;
		}
		x = (l << p->half) | r;
	} while (x >= p->n);
	return x;
}

struct qs_wl {
	const struct qs_job *job;
	unsigned clone;
	char err[256];
	uint64_t span_off, span_len, nblocks;
	struct qs_wl_rng rng;
	/* sequential: next block per direction (fio keeps one per direction);
	 * with rw=...:N (seq_skip) the next 4 KiB page instead */
	uint64_t seq_pos[QS_JOB_DIRS];
	/* rw=rand...:N: I/Os left before the next random offset, the last block */
	uint64_t rand_left, rand_last, rand_len; /* rand_len: grains of the last */
	bool seq_started[QS_JOB_DIRS];
	/* zonemode=strided: the current zone's start and the bytes done in it */
	uint64_t zone_start[QS_JOB_DIRS], zone_done[QS_JOB_DIRS];
	/* trimwrite: the write of the blocks the last trim trimmed is next */
	bool tw_pending;
	uint64_t tw_rel, tw_len, tw_req;
	/* uniform with random map */
	struct perm pass_perm;
	uint64_t pass_idx, pass_no, perm_seed;
	/* zipf / pareto */
	struct perm scatter;
	double zeta_n, zeta2, zipf_alpha, zipf_eta, pareto_pow;
	/* fio's sync family: writes so far, a flush due before the next
	 * I/O, the flush at the end issued */
	uint64_t writes;
	bool sync_due, end_synced;
	/* budget and timing */
	uint64_t bytes_done;
	double t_ns;
	uint64_t ios;
	/* replay */
	struct qs_trace *trace;
};

/* zeta(n, theta) = sum_{i=1..n} i^-theta: exact for the first 10^4 terms,
 * then the midpoint-rule integral of x^-theta for the rest. Against the full
 * sum to n = 2e7 the relative error is below 1e-10 for theta 0.5 to 2, and a
 * clone opens in microseconds instead of summing millions of terms. */
static double zeta(uint64_t n, double theta)
{
	const uint64_t exact = 10000;
	double z = 0;
	uint64_t m = n < exact ? n : exact;
	for (uint64_t i = 1; i <= m; i++)
		z += pow((double)i, -theta);
	if (n > m) {
		double a = (double)m + 0.5, b = (double)n + 0.5;
		z += (pow(b, 1 - theta) - pow(a, 1 - theta)) / (1 - theta);
	}
	return z;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int qs_wl_open(const struct qs_job *job, unsigned clone, uint64_t seed,
	       struct qs_wl **out, char *err, size_t errlen)
{
	*out = NULL;
	if (clone >= job->numjobs) {
		snprintf(err, errlen, "job %s: clone %u out of range (numjobs %u)",
			 job->name, clone, job->numjobs);
		return -EINVAL;
	}
	struct qs_wl *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "job %s: out of memory", job->name);
		return -ENOMEM;
	}
	w->job = job;
	w->clone = clone;
	w->span_off = job->offset + (uint64_t)clone * job->offset_increment;
	w->span_len = job->size;

	uint64_t s = seed ^ hash_str(job->name) ^ ((uint64_t)clone << 32);
	qs_wl_rng_seed(&w->rng, qs_splitmix64(&s));

	if (job->trace) {
		struct qs_trace_opts o = {
			.format = job->trace_format,
			.cols = job->trace_cols,
			.timescale = job->trace_timescale,
			.ignore_time = job->trace_ignore_time,
			.scale = job->replay_scale,
			.align = job->replay_align,
			.span_off = w->span_off,
			.span_len = w->span_len,
		};
		int rc = qs_trace_open(job->trace, &o, &w->trace, err, errlen);
		if (rc) {
			free(w);
			return rc;
		}
		*out = w;
		return 0;
	}

	w->nblocks = job->size / job->bs;
	w->span_len = w->nblocks * job->bs;
	if (!w->nblocks) {
		snprintf(err, errlen, "job %s: size %llu is below bs %llu", job->name,
			 (unsigned long long)job->size, (unsigned long long)job->bs);
		free(w);
		return -EINVAL;
	}
	w->perm_seed = qs_wl_rng_next(&w->rng);
	perm_init(&w->pass_perm, w->nblocks, w->perm_seed);
	perm_init(&w->scatter, w->nblocks, qs_wl_rng_next(&w->rng));
	if (job->dist == QS_DIST_ZIPF) {
		double th = job->dist_param, n = (double)w->nblocks;
		w->zeta_n = zeta(w->nblocks, th);
		w->zeta2 = 1.0 + pow(0.5, th);
		w->zipf_alpha = 1.0 / (1.0 - th);
		w->zipf_eta = (1.0 - pow(2.0 / n, 1.0 - th)) /
			      (1.0 - w->zeta2 / w->zeta_n);
	} else if (job->dist == QS_DIST_PARETO) {
		/* The hot set is h of the blocks (1 - h when h > 1/2); below one
		 * block the shape cannot be drawn (every I/O lands on one block
		 * whatever h is), so such an h is refused rather than run as a
		 * single-block workload under the name pareto. */
		double h = job->dist_param, n = (double)w->nblocks;
		double hot = h < 0.5 ? h : 1.0 - h;
		if (!(h > 0 && h < 1) || hot * n < 1.0) {
			snprintf(err, errlen,
				 "job %s: random_distribution=pareto:%g leaves a hot set of "
				 "%.3g of %llu blocks (size %llu / bs %llu); allowed: "
				 "h from %.3g to %.9g (the hot share h, or 1 - h, must "
				 "be at least one block); fix: raise h or size",
				 job->name, h, hot * n, (unsigned long long)w->nblocks,
				 (unsigned long long)job->size, (unsigned long long)job->bs,
				 1.0 / n, 1.0 - 1.0 / n);
			free(w);
			return -EINVAL;
		}
		/* log1p(-h), not log(1 - h): for a small h, 1 - h rounds to 1,
		 * log gives 0 and the exponent becomes infinite. */
		w->pareto_pow = log(h) / log1p(-h);
	}
	*out = w;
	return 0;
}

/* A rank computed in double, as an index in [0, n): converting a double
 * at or past 2^64 (or inf, or NaN) to an integer is undefined, and the
 * optimised build then returns one fixed value for every draw. */
static uint64_t rank_clamp(const struct qs_wl *w, double x)
{
	double last = (double)(w->nblocks - 1);
	if (!(x >= 0))
		return 0;
	if (!(x < last))
		return w->nblocks - 1;
	return (uint64_t)x;
}

/* Zipf rank in [0, n) (0 = most popular), Gray et al. */
static uint64_t zipf_rank(struct qs_wl *w)
{
	double u = qs_wl_rng_double(&w->rng);
	double uz = u * w->zeta_n;
	uint64_t r;

	if (uz < 1.0)
		r = 0;
	else if (uz < w->zeta2)
		r = 1;
	else
		r = rank_clamp(w, (double)w->nblocks *
				  pow(w->zipf_eta * u - w->zipf_eta + 1.0, w->zipf_alpha));
	return r < w->nblocks ? r : w->nblocks - 1;
}

static uint64_t pareto_rank(struct qs_wl *w)
{
	double u = qs_wl_rng_double(&w->rng);
	uint64_t r = rank_clamp(w, (double)(w->nblocks - 1) * pow(u, w->pareto_pow));
	return r < w->nblocks ? r : w->nblocks - 1;
}

/* A size for the next I/O of direction d (0 reads, 1 writes, 2 trims)
 * from the job's bs=R,W,T, bsrange or bssplit list (bssplit's shares;
 * bsrange's multiples of its low end, uniform); *req: the bytes asked
 * for, when that is not whole 4 KiB blocks (else 0). */
static uint64_t wl_pick_len(struct qs_wl *w, int d, uint64_t *req)
{
	const struct qs_job *j = w->job;
	const struct qs_job_bss *e = j->bss[d];
	unsigned i = 0;
	if (j->nbss[d] > 1) {
		double u = qs_wl_rng_double(&w->rng) * 100.0;
		while (i + 1 < j->nbss[d] && u >= e[i].pct) {
			u -= e[i].pct;
			i++;
		}
	}
	*req = e[i].req;
	if (e[i].lo == e[i].hi)
		return e[i].lo;
	return e[i].lo * (1 + qs_wl_rng_below(&w->rng, e[i].hi / e[i].lo));
}

/* random_distribution=zoned: a zone by its access share, then a uniform
 * block in it (fio draws uniformly within a zone too). */
static uint64_t zoned_block(struct qs_wl *w)
{
	const struct qs_job *j = w->job;
	double u = qs_wl_rng_double(&w->rng) * 100.0;
	unsigned z = 0;
	while (z + 1 < j->nzones && u >= j->zones[z].access_pct) {
		u -= j->zones[z].access_pct;
		z++;
	}
	return j->zones[z].first + qs_wl_rng_below(&w->rng, j->zones[z].nblocks);
}

/*
 * The next page (4 KiB) of a sequential stream with fio's rw=...:N offset
 * modifier: each I/O (len bytes) starts len + N bytes after the last one
 * (N < 0: before),
 * wrapping within the span's valid starts. A backwards stream (bs + N < 0)
 * starts at the span's last block.
 */
static uint64_t seq_skip_page(struct qs_wl *w, uint64_t *pos, bool *started, uint64_t len)
{
	const struct qs_job *j = w->job;
	int64_t bs_pages = (int64_t)(len / 4096);
	int64_t starts = (int64_t)(w->span_len / 4096) - bs_pages + 1;
	int64_t step = bs_pages + j->seq_skip / 4096;
	if (!*started) {
		*started = true;
		*pos = step < 0 ? (uint64_t)(starts - 1) : 0;
	}
	uint64_t page = *pos;
	int64_t next = ((int64_t)*pos + step % starts + starts) % starts;
	*pos = (uint64_t)next;
	return page;
}

/*
 * random_distribution=normal:dev: a rank drawn from a normal distribution
 * around the span's middle with a deviation of dev percent of the blocks
 * (Box-Muller), drawn again while outside; like zipf and pareto, the ranks
 * are scattered over the span (fio hashes its normal offsets alike).
 */
static uint64_t normal_rank(struct qs_wl *w)
{
	double n = (double)w->nblocks, sd = w->job->dist_param / 100.0 * n;
	for (;;) {
		double u1 = qs_wl_rng_double(&w->rng), u2 = qs_wl_rng_double(&w->rng);
		double z = sqrt(-2.0 * log1p(-u1)) * cos(2.0 * M_PI * u2);
		double x = n / 2.0 + z * sd;
		if (x >= 0 && x < n)
			return rank_clamp(w, x);
	}
}

static uint64_t random_block(struct qs_wl *w)
{
	switch (w->job->dist) {
	case QS_DIST_ZONED:
		return zoned_block(w);
	case QS_DIST_ZIPF:
		return perm_apply(&w->scatter, zipf_rank(w));
	case QS_DIST_PARETO:
		return perm_apply(&w->scatter, pareto_rank(w));
	case QS_DIST_NORMAL:
		return perm_apply(&w->scatter, normal_rank(w));
	case QS_DIST_RANDOM:
		break;
	}
	if (w->job->norandommap)
		return qs_wl_rng_below(&w->rng, w->nblocks);
	if (w->pass_idx == w->nblocks) {
		/* Every block was hit once: start a new pass in a new order. */
		w->pass_idx = 0;
		w->pass_no++;
		perm_init(&w->pass_perm, w->nblocks, w->perm_seed + w->pass_no);
	}
	return perm_apply(&w->pass_perm, w->pass_idx++);
}

/* The trace's next request but those of fio's replay_skip. */
static int wl_trace_next(struct qs_wl *w, struct qs_io *io)
{
	int rc;
	do
		rc = qs_trace_next(w->trace, io, w->err, sizeof(w->err));
	while (rc == 1 && (w->job->replay_skip & (1u << io->op)));
	return rc;
}

static int wl_emit(struct qs_wl *w, struct qs_io *io, enum qs_io_op op, uint64_t rel,
		   uint64_t len, uint64_t req);

/* The direction of the next generated I/O: 0 reads, 1 writes, 2 trims;
 * the mixes draw with rwmixread. */
static int wl_direction(struct qs_wl *w)
{
	const struct qs_job *j = w->job;
	switch (j->rw) {
	case QS_RW_READ:
	case QS_RW_RANDREAD:
		return 0;
	case QS_RW_WRITE:
	case QS_RW_RANDWRITE:
		return 1;
	case QS_RW_TRIM:
	case QS_RW_RANDTRIM:
	case QS_RW_TRIMWRITE: /* the trim; its write follows (tw_pending) */
	case QS_RW_RANDTRIMWRITE:
		return 2;
	case QS_RW_RW:
	case QS_RW_RANDRW:
		break;
	}
	/* a cap per direction: each at its own (job.h); a caller that runs
	 * the job unrated (bench curve's maximum) gets rwmixread back */
	if (j->rate_mix && j->rate_iops)
		return qs_wl_rng_double(&w->rng) < j->rate_read_share ? 0 : 1;
	return qs_wl_rng_below(&w->rng, 100) < j->rwmixread ? 0 : 1;
}

/* An engine flush (fio's fsync family): no bytes, not one of the job's
 * I/Os (number_ios, the rate's slots count the data), issued when the next
 * I/O would be. Returns 1. */
static int wl_emit_sync(struct qs_wl *w, struct qs_io *io)
{
	memset(io, 0, sizeof(*io));
	io->op = QS_IO_SYNC;
	io->off = io->orig_off = w->span_off;
	if (w->job->rate_iops) {
		io->timed = true;
		io->at_ns = (uint64_t)(w->t_ns + 0.5);
	}
	w->sync_due = false;
	return 1;
}

/* The stream's end: fio's end_fsync (or fsync_on_close) flushes once. */
static int wl_end(struct qs_wl *w, struct qs_io *io)
{
	if (!w->job->end_fsync || w->end_synced)
		return 0;
	w->end_synced = true;
	return wl_emit_sync(w, io);
}

int qs_wl_next(struct qs_wl *w, struct qs_io *io)
{
	const struct qs_job *j = w->job;

	if (w->trace)
		return wl_trace_next(w, io);
	if (w->sync_due) /* fsync=N: after the N-th write, before what follows */
		return wl_emit_sync(w, io);
	if (!j->time_based && w->bytes_done >= (j->io_bytes ? j->io_bytes : j->size))
		return wl_end(w, io);
	if (j->number_ios && w->ios >= j->number_ios)
		return wl_end(w, io);

	if (w->tw_pending) /* trimwrite: the write after the trim */
		return wl_emit(w, io, QS_IO_WRITE, w->tw_rel, w->tw_len, w->tw_req);
	int d = wl_direction(w);
	bool random = qs_job_rw_random(j->rw);
	uint64_t rel; /* byte offset in the span */
	uint64_t req = 0;
	uint64_t len = j->nbss[d] ? wl_pick_len(w, d, &req) : j->bs;
	uint64_t grains = len / j->bs; /* bs is the smallest size, the grid */
	/* fio's percentage_random: this one follows the last I/O */
	bool follow = random && j->pct_seq[d] && w->ios &&
		      qs_wl_rng_below(&w->rng, 100) < j->pct_seq[d];
	if (follow || (random && j->rand_seq_nr > 1 && w->rand_left)) {
		/* fio's randread:N: sequential between new random offsets */
		if (w->rand_left)
			w->rand_left--;
		w->rand_last = (w->rand_last + w->rand_len) % w->nblocks;
		rel = w->rand_last * j->bs;
	} else if (random) {
		w->rand_last = random_block(w);
		w->rand_left = j->rand_seq_nr > 1 ? j->rand_seq_nr - 1 : 0;
		rel = w->rand_last * j->bs;
	} else if (j->seq_skip) {
		rel = seq_skip_page(w, &w->seq_pos[d], &w->seq_started[d], len) * 4096;
	} else if (j->zone_size) {
		if (w->zone_done[d] + len > j->zone_size) {
			w->zone_start[d] += j->zone_size + j->zone_skip;
			w->zone_done[d] = 0;
		}
		if (w->zone_start[d] + len > w->span_len) {
			if (!j->time_based)
				return wl_end(w, io); /* fio: the zones have passed the end */
			w->zone_start[d] = 0;
		}
		rel = w->zone_start[d] + w->zone_done[d];
		w->zone_done[d] += len;
	} else if (grains > 1) {
		uint64_t *pos = &w->seq_pos[d];
		if (*pos + grains > w->nblocks)
			*pos = 0; /* wrap within the span */
		rel = *pos * j->bs;
		*pos = (*pos + grains) % w->nblocks;
	} else {
		uint64_t *pos = &w->seq_pos[d];
		rel = *pos * j->bs;
		*pos = (*pos + 1) % w->nblocks; /* wrap within the span */
	}
	if (random) {
		w->rand_len = grains;
		/* a larger I/O drawn near the end ends at the end */
		if (rel + len > w->span_len)
			rel = w->span_len - len;
	}
	if (j->rw == QS_RW_TRIMWRITE || j->rw == QS_RW_RANDTRIMWRITE) {
		w->tw_pending = true;
		w->tw_rel = rel;
		w->tw_len = len;
		w->tw_req = req;
	}
	static const enum qs_io_op ops[QS_JOB_DIRS] = {QS_IO_READ, QS_IO_WRITE, QS_IO_TRIM};
	return wl_emit(w, io, ops[d], rel, len, req);
}

/*
 * io: an I/O of op at byte rel of the span, len bytes submitted (whole 4
 * KiB blocks) for req asked (0: len; a size of fio's that is not whole
 * blocks: the rounding is len - req, the driver's report says so), issued
 * at the rate's next time. Counts it against the job's budget; returns 1.
 */
static int wl_emit(struct qs_wl *w, struct qs_io *io, enum qs_io_op op, uint64_t rel,
		   uint64_t len, uint64_t req)
{
	const struct qs_job *j = w->job;
	memset(io, 0, sizeof(*io));
	if (op == QS_IO_WRITE) {
		w->tw_pending = false;
		w->writes++;
		w->sync_due = j->fsync_every && w->writes % j->fsync_every == 0;
		io->fua = j->sync_writes ||
			  (j->barrier_every && w->writes % j->barrier_every == 0);
	}
	io->op = op;
	io->off = w->span_off + rel;
	io->len = len;
	io->orig_off = io->off;
	io->orig_len = req ? req : len;
	if (j->rate_iops) {
		double gap = 1e9 / (double)j->rate_iops;
		io->timed = true;
		io->at_ns = (uint64_t)(w->t_ns + 0.5);
		if (j->rate_process == QS_RATE_POISSON)
			gap = -log1p(-qs_wl_rng_double(&w->rng)) * gap;
		w->t_ns += gap;
	}
	w->bytes_done += io->orig_len;
	w->ios++;
	return 1;
}

const char *qs_wl_error(const struct qs_wl *w)
{
	return w->err;
}

void qs_wl_span(const struct qs_wl *w, uint64_t *off, uint64_t *len)
{
	*off = w->span_off;
	*len = w->span_len;
}

void qs_wl_close(struct qs_wl *w)
{
	if (!w)
		return;
	qs_trace_close(w->trace);
	free(w);
}
