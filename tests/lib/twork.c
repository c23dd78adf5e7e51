/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twork.h"

#define BS 4096u

struct top_ctx {
	struct top_ctx *prev, *next; /* live list, to free after a crash */
	struct twork *w;
	char op;
	uint64_t lba, n;
	unsigned flags;
	uint32_t *idx; /* per block: history index this op wrote */
	unsigned char *buf;
};

static void ctx_free(struct twork *w, struct top_ctx *c);

static void hist_push(struct tblock *b, uint64_t ver)
{
	if (b->nhist == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->hist = realloc(b->hist, b->cap * sizeof(uint64_t));
		if (!b->hist)
			abort();
	}
	b->hist[b->nhist++] = ver;
}

void twork_init(struct twork *w, struct th *h, uint64_t span, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->h = h;
	w->rng = seed * 1000003 + 1;
	w->span = span;
	w->b = calloc(span, sizeof(struct tblock));
	for (uint64_t i = 0; i < span; i++)
		hist_push(&w->b[i], 0);
	w->next_ver = 1;
	w->max_inflight = 8;
	w->iu_blocks = h->conf.iu_bytes / BS;
}

void twork_fini(struct twork *w)
{
	while (w->live)
		ctx_free(w, w->live);
	for (uint64_t i = 0; i < w->span; i++)
		free(w->b[i].hist);
	free(w->b);
}

static void note(struct twork *w, const char *fmt, uint64_t a, uint64_t b, uint64_t c)
{
	if (!w->last_error[0])
		snprintf(w->last_error, sizeof(w->last_error), fmt, (unsigned long long)a,
			 (unsigned long long)b, (unsigned long long)c);
}

/* Is version ver (read back) allowed for block i? */
static bool allowed(struct twork *w, uint64_t i, uint64_t ver, bool crashed)
{
	struct tblock *b = &w->b[i];
	uint32_t lo = crashed ? b->floor : b->done;
	uint32_t hi = crashed ? b->nhist - 1 : b->done;
	if (b->uncertain && b->fail_lo < lo)
		lo = b->fail_lo;
	if (b->uncertain)
		hi = b->nhist - 1;
	for (uint32_t k = lo; k <= hi; k++)
		if (b->hist[k] == ver)
			return true;
	return false;
}

static struct top_ctx *ctx_new(struct twork *w)
{
	struct top_ctx *c = calloc(1, sizeof(*c));
	c->w = w;
	c->next = w->live;
	if (w->live)
		w->live->prev = c;
	w->live = c;
	return c;
}

static void ctx_free(struct twork *w, struct top_ctx *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		w->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->idx);
	free(c->buf);
	free(c);
}

static long long trace_lba = -2;

static void trace(struct twork *w, const char *what, const struct top_ctx *c, int res)
{
	if (trace_lba == -2)
		trace_lba = getenv("QS_TRACE_LBA") ? atoll(getenv("QS_TRACE_LBA")) : -1;
	if (trace_lba < 0 || c->op == 'f' || (uint64_t)trace_lba < c->lba ||
	    (uint64_t)trace_lba >= c->lba + c->n)
		return;
	uint64_t k = (uint64_t)trace_lba - c->lba, ver = 0;
	if (c->op == 'w')
		ver = w->b[trace_lba].hist[c->idx[k]];
	else if (c->op == 'r' && !strcmp(what, "done"))
		tblk_decode(c->buf + k * BS, (uint64_t)trace_lba, &ver);
	char dbg[512];
	qs_engine_debug_dump(w->h->e, dbg, sizeof(dbg));
	fprintf(stderr, "  [%s]\n", dbg);
	fprintf(stderr, "t=%llu %s %c %llu+%llu ver %llu res %d\n",
		(unsigned long long)w->h->env.now, what, c->op, (unsigned long long)c->lba,
		(unsigned long long)c->n, (unsigned long long)ver, res);
}

static void op_cb(void *arg, int res)
{
	struct top_ctx *c = arg;
	struct twork *w = c->w;
	trace(w, "done", c, res);
	w->inflight--;
	if (w->h->w.crashed) {
		/* results after the crash point are not observed */
		goto out;
	}
	if (res) {
		w->failed++;
		if (!w->allow_failures)
			note(w, "unexpected failure of op on lba %llu+%llu: %lld", c->lba, c->n,
			     (uint64_t)(int64_t)res);
	}
	switch (c->op) {
	case 'w':
	case 'd':
		for (uint64_t k = 0; k < c->n; k++) {
			struct tblock *b = &w->b[c->lba + k];
			b->busy = false;
			if (res) {
				if (!b->uncertain) {
					b->uncertain = true;
					b->fail_lo = b->done;
				}
				continue;
			}
			b->done = c->idx[k];
			b->uncertain = false;
			if (c->flags & QS_WRITE_FUA)
				b->floor = b->done;
		}
		break;
	case 'r':
		if (res)
			break;
		for (uint64_t k = 0; k < c->n; k++) {
			/* The latest version completed when the read was issued, or
			 * any write issued since (a concurrent write may or may not
			 * be seen by the read). */
			uint64_t ver;
			bool ok = !tblk_decode(c->buf + k * BS, c->lba + k, &ver);
			struct tblock *b = &w->b[c->lba + k];
			bool seen = false;
			for (uint32_t j = c->idx[k]; ok && j < b->nhist; j++)
				seen |= b->hist[j] == ver;
			if (!ok || !seen) {
				w->read_mismatch++;
				note(w, "read of lba %llu returned %llu, expected version %llu",
				     c->lba + k, tblk_decode(c->buf + k * BS, c->lba + k, &ver) ? ~0ull : ver,
				     w->b[c->lba + k].hist[w->b[c->lba + k].done]);
			}
		}
		break;
	case 'f':
		if (res)
			break;
		for (uint64_t i = 0; i < w->span; i++)
			if (w->b[i].flushing > w->b[i].floor)
				w->b[i].floor = w->b[i].flushing;
		break;
	}
out:
	ctx_free(w, c);
}

static bool range_free(struct twork *w, uint64_t lba, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		if (w->b[lba + k].busy)
			return false;
	return true;
}

static void issue_one(struct twork *w)
{
	struct th *h = w->h;
	uint64_t r = trng(&w->rng) % 100;
	struct top_ctx *c = ctx_new(w);
	/* Two draws, the length's first: in one expression their order is
	 * unspecified, and gcc's -fsanitize=integer-divide-by-zero took them
	 * the other way round from -O2, so the sanitizer build ran another
	 * workload from the same seed. */
	uint64_t draw = trng(&w->rng);
	uint64_t n = 1 + draw % (trng(&w->rng) % 4 == 0 ? 40 : 4);
	if (n > w->span)
		n = w->span;
	uint64_t lba = trng(&w->rng) % (w->span - n + 1);
	if (w->whole_ius && r < 8) {
		/* whole, aligned IUs: candidates for bypass */
		uint64_t ius = 1 + trng(&w->rng) % 2, ib = w->iu_blocks;
		if (ius * ib <= w->span) {
			n = ius * ib;
			lba = trng(&w->rng) % (w->span / ib - ius + 1) * ib;
		}
	}
	int rc;
	if (r < 55 || (w->whole_ius && r < 8)) {
		c->op = 'w';
	} else if (r < 85) {
		c->op = 'r';
	} else if (r < 92) {
		c->op = 'd';
	} else {
		c->op = 'f';
	}
	c->lba = lba;
	c->n = n;
	if ((c->op == 'w' || c->op == 'd') && !range_free(w, lba, n)) {
		ctx_free(w, c);
		return; /* overlapping in-flight writes are not compared */
	}
	switch (c->op) {
	case 'w':
	case 'd':
		c->idx = malloc(n * sizeof(uint32_t));
		if (c->op == 'w') {
			c->buf = aligned_alloc(BS, n * BS);
			c->flags = trng(&w->rng) % 16 == 0 ? QS_WRITE_FUA : 0;
		}
		for (uint64_t k = 0; k < n; k++) {
			struct tblock *b = &w->b[lba + k];
			uint64_t ver = c->op == 'w' ? w->next_ver++ : 0;
			if (c->op == 'w')
				tblk_fill(c->buf + k * BS, lba + k, ver);
			c->idx[k] = b->nhist;
			hist_push(b, ver);
			b->busy = true;
		}
		rc = c->op == 'w' ? qs_engine_write(h->e, lba * BS, n * BS, c->buf, c->flags, op_cb, c)
				  : qs_engine_discard(h->e, lba * BS, n * BS, op_cb, c);
		break;
	case 'r':
		c->buf = aligned_alloc(BS, n * BS);
		c->idx = malloc(n * sizeof(uint32_t));
		for (uint64_t k = 0; k < n; k++)
			c->idx[k] = w->b[lba + k].uncertain ? w->b[lba + k].fail_lo : w->b[lba + k].done;
		rc = qs_engine_read(h->e, lba * BS, n * BS, c->buf, op_cb, c);
		break;
	default:
		for (uint64_t i = 0; i < w->span; i++)
			w->b[i].flushing = w->b[i].done;
		rc = qs_engine_flush(h->e, op_cb, c);
		break;
	}
	w->ops++;
	trace(w, "submit", c, rc);
	if (rc) {
		/* refused at submission (e.g. EIO once the log failed): no callback */
		w->inflight++;
		op_cb(c, rc);
		return;
	}
	w->inflight++;
}

uint64_t twork_run(struct twork *w, uint64_t n)
{
	uint64_t issued = 0, steps = 0;
	while (issued < n && !w->h->w.crashed) {
		if (++steps > 50 * n + 1000000) {
			note(w, "no progress: %llu of %llu issued, %llu in flight", issued, n, w->inflight);
			break;
		}
		if (w->inflight < w->max_inflight && (trng(&w->rng) & 3)) {
			issue_one(w);
			issued++;
		} else if (!th_step(w->h)) {
			if (w->inflight) {
				note(w, "stall: %llu requests in flight and nothing to do", w->inflight, 0, 0);
				break;
			}
		}
	}
	return issued;
}

void twork_quiesce(struct twork *w)
{
	for (uint64_t i = 0; i < 5000000 && w->inflight && !w->h->w.crashed && th_step(w->h); i++)
		;
	if (w->inflight && !w->h->w.crashed) {
		struct qs_engine_stats st;
		qs_engine_get_stats(w->h->e, &st);
		fprintf(stderr, "stall: inflight %u, log used %llu/%llu, cached %llu, dirty IUs %llu, "
			"throttled %llu, destaged %llu, checkpoints %llu\n", st.inflight,
			(unsigned long long)st.log_used_blocks, (unsigned long long)st.log_blocks,
			(unsigned long long)st.cached_blocks, (unsigned long long)st.dirty_ius,
			(unsigned long long)st.throttled_writes, (unsigned long long)st.destage_ius,
			(unsigned long long)st.checkpoints);
		char dbg[2048];
		qs_engine_debug_dump(w->h->e, dbg, sizeof(dbg));
		fprintf(stderr, "stall: %s\n", dbg);
		for (struct top_ctx *c = w->live; c; c = c->next)
			fprintf(stderr, "stuck: %c %llu+%llu flags %u\n", c->op,
				(unsigned long long)c->lba, (unsigned long long)c->n, c->flags);
		note(w, "quiesce: %llu requests never completed", w->inflight, 0, 0);
	}
}

uint64_t twork_verify_all(struct twork *w, bool crashed)
{
	uint64_t bad = 0;
	unsigned char *buf = aligned_alloc(BS, 64 * BS);
	for (uint64_t lba = 0; lba < w->span; lba += 64) {
		uint64_t n = w->span - lba < 64 ? w->span - lba : 64;
		int rc = th_io(w->h, 'r', lba * BS, n * BS, buf, 0);
		if (rc) {
			note(w, "verify: read of %llu+%llu failed: %lld", lba, n, (uint64_t)(int64_t)rc);
			bad += n;
			continue;
		}
		for (uint64_t k = 0; k < n; k++) {
			uint64_t ver;
			if (tblk_decode(buf + k * BS, lba + k, &ver)) {
				note(w, "verify: lba %llu is torn or foreign%s", lba + k, 0, 0);
				bad++;
			} else if (!allowed(w, lba + k, ver, crashed)) {
				note(w, "verify: lba %llu holds version %llu, latest completed %llu",
				     lba + k, ver, w->b[lba + k].hist[w->b[lba + k].done]);
				bad++;
			}
		}
	}
	free(buf);
	return bad;
}

void twork_after_crash(struct twork *w)
{
	/*
	 * What survived becomes the new truth for later checks: read it and
	 * make it the completed and durable version (it was verified
	 * allowed), so the next phase checks read-your-writes from there.
	 */
	unsigned char *buf = aligned_alloc(BS, BS);
	for (uint64_t i = 0; i < w->span; i++) {
		struct tblock *b = &w->b[i];
		uint64_t ver = 0;
		b->busy = false;
		if (th_io(w->h, 'r', i * BS, BS, buf, 0) == 0 && !tblk_decode(buf, i, &ver)) {
			hist_push(b, ver);
			b->done = b->floor = b->flushing = b->nhist - 1;
			b->uncertain = false;
		}
	}
	free(buf);
	w->inflight = 0;
	while (w->live)
		ctx_free(w, w->live); /* requests the crashed engine never answered */
}
