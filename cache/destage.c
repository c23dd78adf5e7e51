/* SPDX-License-Identifier: MIT */
/*
 * Dirty-IU bookkeeping, destage and checkpoint.
 *
 * Destage turns the cached blocks of one IU into one whole, aligned IU write
 * to the QLC. Blocks of the IU that are not cached are read from the QLC
 * first (read-fill): the read-modify-write moves from the drive, where it
 * costs a program of a whole IU per 4 KiB, to the host, where a read is
 * cheap. While a destage runs its IU is busy: no bypass write or whole-IU
 * discard touches it, so an older image can never land after a newer one.
 *
 * Checkpoint moves the durable tail of the log past segments that hold no
 * live block. Before the superblock that records the new tail is written,
 * the QLC is flushed (destaged data must be durable before the log copy is
 * given up) and the log device is flushed (a block given up because it was
 * superseded is only safe once its successor record is durable).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* ---- busy IUs ------------------------------------------------------------ */

static inline uint32_t busy_bucket(uint64_t iu)
{
	return (uint32_t)((iu * 0x9e3779b97f4a7c15ull) >> 54) % BUSY_BUCKETS;
}

bool busy_has(struct qs_engine *e, uint64_t iu)
{
	for (struct busy *b = e->busy[busy_bucket(iu)]; b; b = b->next)
		if (b->iu == iu)
			return true;
	return false;
}

int busy_add(struct qs_engine *e, uint64_t iu)
{
	struct busy *b = e->busy_free;
	if (b)
		e->busy_free = b->next;
	else if (!(b = eng_alloc(e, sizeof(*b), 16)))
		return -ENOMEM;
	b->iu = iu;
	uint32_t h = busy_bucket(iu);
	b->next = e->busy[h];
	e->busy[h] = b;
	return 0;
}

void busy_del(struct qs_engine *e, uint64_t iu)
{
	for (struct busy **pp = &e->busy[busy_bucket(iu)]; *pp; pp = &(*pp)->next)
		if ((*pp)->iu == iu) {
			struct busy *b = *pp;
			*pp = b->next;
			b->next = e->busy_free;
			e->busy_free = b;
			return;
		}
}

/* ---- dirty IUs --------------------------------------------------------------- */

/*
 * The bucket lists (dirty IUs by count, newest link first) serve only the
 * fullest-first order, and keeping them costs a few cache misses on every
 * cached block. So they are kept only while that order is in force
 * (buckets_on); otherwise each IU only records when it would have been
 * linked (lseq), and buckets_rebuild() links them again in exactly the
 * order continuous upkeep would have left.
 */
static void bucket_unlink(struct qs_engine *e, uint32_t i)
{
	if (!e->buckets_on)
		return;
	struct diu *d = &e->dius[i];
	if (d->bprev != NIL)
		e->dius[d->bprev].bnext = d->bnext;
	else
		e->bucket_head[d->count] = d->bnext;
	if (d->bnext != NIL)
		e->dius[d->bnext].bprev = d->bprev;
}

static void bucket_push(struct qs_engine *e, uint32_t i)
{
	struct diu *d = &e->dius[i];
	d->bprev = NIL;
	d->bnext = e->bucket_head[d->count];
	if (d->bnext != NIL)
		e->dius[d->bnext].bprev = i;
	e->bucket_head[d->count] = i;
}

static void bucket_link(struct qs_engine *e, uint32_t i)
{
	e->dius[i].lseq = ++e->bucket_seq;
	if (e->buckets_on)
		bucket_push(e, i);
}

static int cmp_lseq(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Link every dirty IU into its bucket, oldest link first, so each list
 * ends up newest first as if it had been kept all along. */
static int buckets_rebuild(struct qs_engine *e)
{
	/* (lseq, slot) pairs in one uint64_t each would not fit: two words */
	uint64_t *v = e->ndius ? eng_alloc(e, (size_t)e->ndius * 2 * sizeof(uint64_t), 64) : NULL;
	if (e->ndius && !v)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = e->fifo_first; i != NIL; i = e->dius[i].fnext, n++) {
		v[2 * n] = e->dius[i].lseq;
		v[2 * n + 1] = i;
	}
	if (n)
		qsort(v, n, 2 * sizeof(uint64_t), cmp_lseq);
	for (uint32_t c = 0; c <= e->iu_blocks; c++)
		e->bucket_head[c] = NIL;
	for (uint32_t k = 0; k < n; k++)
		bucket_push(e, (uint32_t)v[2 * k + 1]);
	eng_free(e, v);
	e->buckets_on = true;
	return 0;
}

void dst_policy_changed(struct qs_engine *e)
{
	e->sweep_n = e->sweep_at = 0; /* rebuild the sweep order */
	if (e->conf.policy.order != QS_ORDER_FULLEST)
		e->buckets_on = false; /* rebuilt when fullest-first comes back */
}

/*
 * Dirty-IU slots: freed slots are reused last freed first, then the slots
 * never used yet in increasing order (from diu_hw), which are not touched
 * before that: a large pool costs memory only as it is used.
 */
static int diu_grow(struct qs_engine *e, uint32_t cap)
{
	struct diu *n = eng_alloc(e, (size_t)cap * sizeof(*n), 64);
	if (!n)
		return -ENOMEM;
	if (e->diu_hw)
		memcpy(n, e->dius, (size_t)e->diu_hw * sizeof(*n));
	eng_free(e, e->dius);
	e->dius = n;
	e->diu_cap = cap;
	return 0;
}

/* A slot for a new dirty IU; NIL without memory. */
static uint32_t diu_take(struct qs_engine *e)
{
	uint32_t i = e->diu_free;
	if (i != NIL) {
		e->diu_free = e->dius[i].fnext;
		return i;
	}
	if (e->diu_hw == e->diu_cap && diu_grow(e, e->diu_cap * 2) < 0)
		return NIL;
	e->dius[e->diu_hw].count = 0;
	return e->diu_hw++;
}

void dst_diu_add(struct qs_engine *e, uint64_t iu)
{
	uint32_t i;
	if (!qs_index_get(&e->diu_map, iu, &i)) {
		i = diu_take(e);
		if (i == NIL) {
			/* the index still holds the block; only ordering
			 * suffers, but counts no longer tell an IU's blocks */
			e->diu_short = true;
			return;
		}
		struct diu *d = &e->dius[i];
		d->iu = iu;
		d->count = 0;
		d->born_ms = eng_ms(e);
		d->fnext = NIL;
		d->fprev = e->fifo_last;
		if (e->fifo_last != NIL)
			e->dius[e->fifo_last].fnext = i;
		else
			e->fifo_first = i;
		e->fifo_last = i;
		qs_index_put(&e->diu_map, iu, i, NULL);
		e->ndius++;
	} else {
		bucket_unlink(e, i);
	}
	e->dius[i].count++;
	bucket_link(e, i);
}

void dst_diu_sub(struct qs_engine *e, uint64_t iu)
{
	uint32_t i;
	if (!qs_index_get(&e->diu_map, iu, &i))
		return;
	struct diu *d = &e->dius[i];
	bucket_unlink(e, i);
	if (--d->count) {
		bucket_link(e, i);
		return;
	}
	if (d->fprev != NIL)
		e->dius[d->fprev].fnext = d->fnext;
	else
		e->fifo_first = d->fnext;
	if (d->fnext != NIL)
		e->dius[d->fnext].fprev = d->fprev;
	else
		e->fifo_last = d->fprev;
	qs_index_del(&e->diu_map, iu, NULL);
	d->fnext = e->diu_free;
	e->diu_free = i;
	e->ndius--;
}

int dst_init(struct qs_engine *e)
{
	e->fifo_first = e->fifo_last = NIL;
	e->diu_free = NIL;
	e->bucket_head = eng_alloc(e, (e->iu_blocks + 1) * sizeof(uint32_t), 64);
	e->dst = eng_alloc(e, e->conf.destage_qd * sizeof(struct destage), 64);
	e->failed_ius = eng_alloc(e, e->conf.destage_qd * sizeof(struct failed_iu), 64);
	if (!e->bucket_head || !e->dst || !e->failed_ius)
		return -ENOMEM;
	for (uint32_t c = 0; c <= e->iu_blocks; c++)
		e->bucket_head[c] = NIL;
	e->buckets_on = e->conf.policy.order == QS_ORDER_FULLEST;
	memset(e->dst, 0, e->conf.destage_qd * sizeof(struct destage));
	for (uint32_t i = 0; i < e->conf.destage_qd; i++) {
		struct destage *d = &e->dst[i];
		d->e = e;
		d->buf = eng_alloc(e, e->conf.iu_bytes, QS_BLOCK_SIZE);
		d->fill = eng_alloc(e, e->conf.iu_bytes, QS_BLOCK_SIZE);
		d->snap = eng_alloc(e, e->iu_blocks * sizeof(uint32_t), 16);
		/* At most one read per cached run and one of the gaps: held
		 * here, so none is allocated per destage, and an engine freed
		 * with reads in flight (a crash) leaves none behind. */
		d->pieces = eng_alloc(e, (e->iu_blocks + 1) * sizeof(struct dpiece), 16);
		if (!d->buf || !d->fill || !d->snap || !d->pieces)
			return -ENOMEM;
	}
	uint64_t ius = e->diu_max ? e->diu_max : eng_diu_pool(e->win_blocks, e->iu_blocks);
	int rc = qs_index_init(&e->diu_map, &e->env, ius, e->dev_blocks / e->iu_blocks,
			       ENG_DIU_VAL_BITS);
	if (rc)
		return rc;
	return diu_grow(e, (uint32_t)ius);
}

void dst_fini(struct qs_engine *e)
{
	if (e->dst)
		for (uint32_t i = 0; i < e->conf.destage_qd; i++) {
			eng_free(e, e->dst[i].buf);
			eng_free(e, e->dst[i].fill);
			eng_free(e, e->dst[i].snap);
			eng_free(e, e->dst[i].pieces);
		}
	eng_free(e, e->dst);
	eng_free(e, e->failed_ius);
	eng_free(e, e->bucket_head);
	eng_free(e, e->dius);
	eng_free(e, e->sweep);
	if (e->diu_map.slots)
		qs_index_fini(&e->diu_map);
	for (uint32_t h = 0; h < BUSY_BUCKETS; h++)
		while (e->busy[h]) {
			struct busy *b = e->busy[h];
			e->busy[h] = b->next;
			eng_free(e, b);
		}
	while (e->busy_free) {
		struct busy *b = e->busy_free;
		e->busy_free = b->next;
		eng_free(e, b);
	}
}

/* ---- choosing what to destage ------------------------------------------- */

static struct failed_iu *failed_find(struct qs_engine *e, uint64_t iu)
{
	for (uint32_t i = 0; i < e->nfailed; i++)
		if (e->failed_ius[i].iu == iu)
			return &e->failed_ius[i];
	return NULL;
}

static bool eligible(struct qs_engine *e, const struct diu *d, bool urgent)
{
	if (busy_has(e, d->iu))
		return false;
	struct failed_iu *f = failed_find(e, d->iu);
	if (f && eng_now(e) < f->retry_at_ns)
		return false;
	/* Log placement packs blocks of any IUs: nothing to hold out for. */
	if (!urgent && !e->plc && e->conf.policy.partial == QS_PARTIAL_HOLD &&
	    d->count < e->iu_blocks && eng_ms(e) - d->born_ms < e->conf.policy.hold_ms)
		return false;
	return true;
}

#define PICK_SCAN_MAX 4096u /* bound the work of one pick */

/*
 * Sort n entries by IU: an LSD radix sort, 11 bits a pass, as many passes
 * as the largest IU needs (two for 2^22 IUs). The IUs are distinct, so any
 * correct sort gives the same order; this one is linear, where qsort cost
 * a few thousand instructions per destaged IU. tmp holds n entries.
 */
#define SWEEP_RADIX_BITS 11u
static void sweep_sort(struct sweep_ent *a, struct sweep_ent *tmp, uint64_t n)
{
	uint64_t max = 0;
	for (uint64_t i = 0; i < n; i++)
		if (a[i].iu > max)
			max = a[i].iu;
	uint32_t cnt[1u << SWEEP_RADIX_BITS];
	struct sweep_ent *src = a, *dst = tmp;
	for (unsigned sh = 0; sh < 64 && (sh == 0 || (max >> sh)); sh += SWEEP_RADIX_BITS) {
		memset(cnt, 0, sizeof(cnt));
		for (uint64_t i = 0; i < n; i++)
			cnt[(src[i].iu >> sh) & ((1u << SWEEP_RADIX_BITS) - 1)]++;
		uint32_t sum = 0;
		for (uint32_t d = 0; d < (1u << SWEEP_RADIX_BITS); d++) {
			uint32_t c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++)
			dst[cnt[(src[i].iu >> sh) & ((1u << SWEEP_RADIX_BITS) - 1)]++] = src[i];
		struct sweep_ent *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

static int sweep_rebuild(struct qs_engine *e)
{
	if (e->sweep_cap < e->ndius) {
		eng_free(e, e->sweep);
		e->sweep_cap = e->ndius + e->ndius / 2 + 64;
		/* the snapshot, then as much room for the sort */
		e->sweep = eng_alloc(e, 2 * e->sweep_cap * sizeof(*e->sweep), 64);
		if (!e->sweep) {
			e->sweep_cap = 0;
			return -ENOMEM;
		}
	}
	e->sweep_n = 0;
	for (uint32_t i = e->fifo_first; i != NIL; i = e->dius[i].fnext)
		e->sweep[e->sweep_n++] = (struct sweep_ent){e->dius[i].iu, i};
	sweep_sort(e->sweep, e->sweep + e->sweep_cap, e->sweep_n);
	e->sweep_at = 0;
	return 0;
}

uint32_t dst_pick(struct qs_engine *e, uint32_t after, bool urgent, bool space)
{
	uint32_t n = 0;
	enum qs_order order = e->conf.policy.order;
	/* Out of log space: free the oldest data first, whatever the policy. */
	if (space)
		order = QS_ORDER_FIFO;
	switch (order) {
	case QS_ORDER_FIFO:
		/* Those before after were not eligible, and still are not:
		 * with log placement a unit packs 16 IUs, and each pick
		 * scanned the busy ones at the head again (15% of the
		 * simulation's time over 100% of the drive). */
		for (uint32_t i = after != NIL ? e->dius[after].fnext : e->fifo_first;
		     i != NIL && n < PICK_SCAN_MAX;
		     i = e->dius[i].fnext, n++)
			if (eligible(e, &e->dius[i], urgent))
				return i;
		return NIL;
	case QS_ORDER_FULLEST:
		if (!e->buckets_on && buckets_rebuild(e) < 0)
			return NIL;
		for (uint32_t c = e->iu_blocks; c >= 1; c--)
			for (uint32_t i = e->bucket_head[c]; i != NIL && n < PICK_SCAN_MAX;
			     i = e->dius[i].bnext, n++)
				if (eligible(e, &e->dius[i], urgent))
					return i;
		return NIL;
	case QS_ORDER_SWEEP:
		for (int pass = 0; pass < 2; pass++) {
			if (e->sweep_at >= e->sweep_n && sweep_rebuild(e) < 0)
				return NIL;
			while (e->sweep_at < e->sweep_n && n < PICK_SCAN_MAX) {
				const struct sweep_ent *s = &e->sweep[e->sweep_at++];
				uint32_t i = s->idx;
				n++;
				/* Its slot then still holds it (a live slot of that IU
				 * is the only one the map can name), or look it up. */
				if ((i >= e->diu_hw || !e->dius[i].count || e->dius[i].iu != s->iu) &&
				    !qs_index_get(&e->diu_map, s->iu, &i))
					continue;
				if (eligible(e, &e->dius[i], urgent))
					return i;
			}
			if (n >= PICK_SCAN_MAX)
				return NIL;
		}
		return NIL;
	}
	return NIL;
}

/* ---- destage of one IU ------------------------------------------------------- */

static void dst_write_cb(void *arg, int res);

static void dst_release(struct qs_engine *e, struct destage *d)
{
	for (uint32_t b = 0; b < e->iu_blocks; b++)
		if (d->snap[b] != NIL)
			e->seg_pins[((d->snap[b] & SLOT_MASK) / e->seg_blocks)]--;
	busy_del(e, d->iu);
	d->active = false;
	e->dst_active--;
	eng_qop_kick(e);
}

static void dst_failed(struct qs_engine *e, struct destage *d, int res)
{
	/*
	 * The dirty blocks stay cached (the log still holds them) and the IU
	 * is retried with a growing back-off; the client writes that put
	 * them there were acknowledged long ago and are not affected.
	 */
	struct failed_iu *f = failed_find(e, d->iu);
	if (!f && e->nfailed < e->conf.destage_qd) {
		f = &e->failed_ius[e->nfailed++];
		f->iu = d->iu;
		f->attempts = 0;
	}
	uint64_t backoff = 10000000ull; /* 10 ms, doubling to 10 s */
	if (f) {
		f->attempts++;
		for (uint32_t i = 1; i < f->attempts && backoff < 10000000000ull; i++)
			backoff *= 2;
		f->retry_at_ns = eng_now(e) + backoff;
	}
	dst_pause(e);
	e->st.destage_retries++;
	eng_log(e, QS_LOG_WARN, "destage of IU %llu failed (%s); kept dirty, retry in %llu ms",
		(unsigned long long)d->iu, strerror(-res),
		(unsigned long long)(backoff / 1000000));
	dst_release(e, d);
	if (e->dst_fail_streak >= DST_FAIL_GIVE_UP)
		eng_space_kick(e);
}

void dst_pause(struct qs_engine *e)
{
	/* A device that fails every I/O must not turn destage into a busy
	 * loop: all destage pauses, with a doubling back-off. */
	e->dst_fail_streak++;
	uint64_t pause = 10000000ull;
	for (uint32_t i = 1; i < e->dst_fail_streak && pause < 10000000000ull; i++)
		pause *= 2;
	e->dst_pause_until = eng_now(e) + pause;
}

static void dst_write(struct qs_engine *e, struct destage *d)
{
	if (d->result < 0) {
		dst_failed(e, d, d->result);
		return;
	}
	uint64_t off = d->iu * e->conf.iu_bytes;
	eng_qlc_count_write(e, off, e->conf.iu_bytes);
	d->iov.iov_base = d->buf;
	d->iov.iov_len = e->conf.iu_bytes;
	e->qlc->ops->write(e->qlc->ctx, off, &d->iov, 1, 0, dst_write_cb, d);
}

static void piece_cb(void *arg, int res)
{
	struct dpiece *p = arg;
	struct destage *d = p->d;
	struct qs_engine *e = d->e;
	eng_enter(e);
	if (p->seg != UINT64_MAX)
		e->seg_pins[p->seg]--;
	if (res < 0) {
		if (p->log)
			e->st.fast_errors++;
		else
			e->st.qlc_errors++;
		if (!d->result)
			d->result = res;
	} else if (!p->log && !e->no_data) {
		/* Only the gaps: the cached blocks in between come from the log. */
		for (uint32_t b = p->b; b < p->b + p->n; b++)
			if (d->snap[b] == NIL)
				memcpy(d->buf + (size_t)b * QS_BLOCK_SIZE,
				       d->fill + (size_t)b * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	}
	if (--d->pending == 0)
		dst_write(e, d);
	eng_leave_deliver(e);
}

/* Read blocks b..b+n-1 of d's IU: from the log at off into d->buf (pinning
 * segment pin), or with vol == e->qlc from the QLC at off into d->fill. */
static void piece_read(struct qs_engine *e, struct destage *d, struct qs_vol *vol,
		       uint64_t off, uint32_t b, uint32_t n, uint64_t pin)
{
	struct dpiece *p = &d->pieces[d->npieces++];
	p->d = d;
	p->seg = pin;
	p->log = vol == e->fast;
	p->b = b;
	p->n = n;
	p->iov.iov_base = (p->log ? d->buf : d->fill) + (size_t)b * QS_BLOCK_SIZE;
	p->iov.iov_len = (size_t)n * QS_BLOCK_SIZE;
	if (pin != UINT64_MAX)
		e->seg_pins[pin]++;
	d->pending++;
	vol->ops->read(vol->ctx, off, &p->iov, 1, piece_cb, p);
}

static void dst_start(struct qs_engine *e, uint32_t di)
{
	struct destage *d = NULL;
	for (uint32_t i = 0; i < e->conf.destage_qd; i++)
		if (!e->dst[i].active) {
			d = &e->dst[i];
			break;
		}
	if (!d || busy_add(e, e->dius[di].iu) < 0)
		return;
	uint64_t iu = e->dius[di].iu, lba0 = iu * e->iu_blocks;
	d->active = true;
	d->iu = iu;
	d->result = 0;
	d->cached = 0;
	d->npieces = 0;
	e->dst_active++;
	uint32_t tombs = 0;
	/* The blocks' index slots are scattered: let their misses overlap. */
	for (uint32_t b = 0; b < e->iu_blocks; b++)
		qs_index_prefetch(&e->idx, lba0 + b);
	for (uint32_t b = 0; b < e->iu_blocks; b++) {
		uint32_t v;
		if (qs_index_get(&e->idx, lba0 + b, &v)) {
			d->snap[b] = v;
			d->cached++;
			tombs += !!(v & SLOT_TOMB);
			/* Pinned until done: the slot cannot be reused meanwhile, so
			 * comparing it at the end tells whether it was superseded. */
			e->seg_pins[(v & SLOT_MASK) / e->seg_blocks]++;
		} else {
			d->snap[b] = NIL;
		}
	}
	d->discard = tombs == e->iu_blocks;
	if (d->discard) {
		e->st.qlc_discards++;
		e->qlc->ops->discard(e->qlc->ctx, iu * e->conf.iu_bytes, e->conf.iu_bytes,
				     dst_write_cb, d);
		return;
	}
	d->pending = 1; /* held until every read is issued */
	/*
	 * The gaps (blocks not in the log) come from the QLC in one read, from
	 * the first gap to the last, cached blocks in between included: the
	 * drive reads a whole IU for any part of it, so a read per gap would
	 * cost it a NAND read per gap (and a command each) for the same page.
	 */
	uint32_t g0 = 0, g1 = e->iu_blocks;
	while (g0 < g1 && d->snap[g0] != NIL)
		g0++;
	while (g1 > g0 && d->snap[g1 - 1] != NIL)
		g1--;
	if (g0 < g1) {
		e->st.qlc_reads++;
		e->st.qlc_read_bytes += (uint64_t)(g1 - g0) * QS_BLOCK_SIZE;
		e->st.read_fill_bytes += (uint64_t)(g1 - g0) * QS_BLOCK_SIZE;
		piece_read(e, d, e->qlc, (lba0 + g0) * QS_BLOCK_SIZE, g0, g1 - g0, UINT64_MAX);
	}
	for (uint32_t b = 0; b < e->iu_blocks;) {
		uint32_t v = d->snap[b];
		if (v == NIL) {
			b++;
		} else if (v & SLOT_TOMB) {
			if (!e->no_data)
				memset(d->buf + (size_t)b * QS_BLOCK_SIZE, 0, QS_BLOCK_SIZE);
			b++;
		} else {
			uint64_t pos = eng_slot_to_pos(e, v);
			if (eng_ring_has(e, pos)) {
				if (!e->no_data)
					memcpy(d->buf + (size_t)b * QS_BLOCK_SIZE,
					       eng_ring_at(e, pos), QS_BLOCK_SIZE);
				b++;
				continue;
			}
			uint32_t j = b + 1;
			while (j < e->iu_blocks && d->snap[j] == v + (j - b) &&
			       (d->snap[j] & SLOT_MASK) / e->seg_blocks == v / e->seg_blocks)
				j++;
			e->st.log_read_bytes += (uint64_t)(j - b) * QS_BLOCK_SIZE;
			piece_read(e, d, e->fast, eng_pos_off(e, pos), b, j - b, v / e->seg_blocks);
			b = j;
		}
	}
	if (--d->pending == 0)
		dst_write(e, d);
}

static void dst_write_cb(void *arg, int res)
{
	struct destage *d = arg;
	struct qs_engine *e = d->e;
	eng_enter(e);
	if (res < 0) {
		e->st.qlc_errors++;
		dst_failed(e, d, res);
	} else {
		uint64_t lba0 = d->iu * e->iu_blocks;
		for (uint32_t b = 0; b < e->iu_blocks; b++)
			if (d->snap[b] != NIL)
				qs_index_prefetch(&e->idx, lba0 + b);
		for (uint32_t b = 0; b < e->iu_blocks; b++) {
			uint32_t v;
			if (d->snap[b] != NIL && qs_index_get(&e->idx, lba0 + b, &v) &&
			    v == d->snap[b])
				eng_index_drop(e, lba0 + b);
		}
		e->st.destage_ius++;
		if (d->cached == e->iu_blocks)
			e->st.destage_full_ius++;
		else
			e->st.destage_partial_ius++;
		e->st.destage_bytes += e->conf.iu_bytes;
		e->qlc_unflushed = true;
		struct failed_iu *f = failed_find(e, d->iu);
		if (f)
			*f = e->failed_ius[--e->nfailed];
		e->dst_fail_streak = 0;
		dst_release(e, d);
		/* Writers held at dirty_ius_max wait for exactly this. */
		if (e->diu_max && e->space_head)
			eng_space_kick(e);
	}
	dst_kick(e);
	ckpt_kick(e, false);
	eng_check_drain(e);
	eng_leave_deliver(e);
}

/* Start destages as the policy and the log's fill ask for. */
void dst_kick(struct qs_engine *e)
{
	if (!e->ready || e->closing || e->conf.mode != QS_MODE_CACHE || !e->ndius)
		return;
	const struct qs_policy *p = &e->conf.policy;
	/* The log's use: of its window, or of the dirty IUs it may hold. */
	uint64_t use = (e->alloc_pos - e->tail_pos) * 100 / e->win_blocks;
	if (e->diu_max && e->ndius * 100 / e->diu_max > use)
		use = e->ndius * 100 / e->diu_max;
	/* Writers wait for log room (not merely for a free record slot), or
	 * are paced: the log is near full, and only its oldest data frees
	 * room. (Pacing without this held the log in its band while sweep
	 * and fullest destaged IUs that freed none of it, until the log was
	 * full: fullest lost 42% of its rate at 25% of the drive.) */
	bool space = (e->space_head && e->log_full) || eng_pace_on(e);
	/* The common case on the write path: below the watermark, nothing
	 * time-based configured: no clock read. */
	if (!e->draining && !space && use < p->start_pct && !p->idle_ms && !p->max_age_ms &&
	    !e->dst_pause_until)
		return;
	uint64_t now = eng_now(e);
	if (now < e->dst_pause_until)
		return;
	uint32_t target = 0;
	bool urgent = false;
	if (e->draining || space || use >= p->urgent_pct) {
		target = e->conf.destage_qd;
		urgent = true;
	} else if (use >= p->start_pct) {
		target = (e->conf.destage_qd + 1) / 2;
	} else if (eng_idle(e, now)) {
		target = (e->conf.destage_qd + 3) / 4;
		urgent = true; /* nothing more is coming: do not hold partial IUs */
	}
	/* Age limit: the oldest dirty IU is destaged whatever the fill. */
	if (p->max_age_ms && e->fifo_first != NIL && e->dst_active < e->conf.destage_qd) {
		struct diu *d = &e->dius[e->fifo_first];
		if (eng_ms(e) - d->born_ms >= p->max_age_ms && eligible(e, d, true)) {
			if (e->plc)
				plc_dst_start(e, e->fifo_first, true, space);
			else
				dst_start(e, e->fifo_first);
		}
	}
	if (e->plc) {
		while (e->dst_active < target && plc_dst_start(e, NIL, urgent, space))
			;
		return;
	}
	while (e->dst_active < target) {
		uint32_t i = dst_pick(e, NIL, urgent, space);
		if (i == NIL)
			break;
		dst_start(e, i);
	}
}

/* When the engine next needs qs_engine_timer(), or 0. */
uint64_t dst_next_deadline(struct qs_engine *e)
{
	if (e->conf.mode != QS_MODE_CACHE || e->closed)
		return 0;
	uint64_t now = eng_now(e), best = 0;
#define CAND(t) do { uint64_t t_ = (t); if (t_ > now && (!best || t_ < best)) best = t_; } while (0)
	for (uint32_t i = 0; i < e->nfailed; i++)
		CAND(e->failed_ius[i].retry_at_ns);
	if (e->ckpt_retry_ns)
		CAND(e->ckpt_retry_ns);
	if (e->pace_held)
		CAND(e->pace_wake_ns > now ? e->pace_wake_ns : now + 1);
	if (e->plc) {
		CAND(plc_next_deadline(e));
		if (e->plc->gc_active || e->plc->ndrained)
			CAND(e->dst_pause_until);
	}
	if (e->ndius)
		CAND(e->dst_pause_until);
	if (e->ndius) {
		const struct qs_policy *p = &e->conf.policy;
		if (p->idle_ms) {
			eng_idle(e, now);
			CAND(e->idle_since_ns + (uint64_t)p->idle_ms * 1000000u);
		}
		struct diu *d = &e->dius[e->fifo_first];
		uint64_t born = e->t0_ns + (uint64_t)d->born_ms * 1000000u;
		if (p->max_age_ms)
			CAND(born + (uint64_t)p->max_age_ms * 1000000u);
		if (p->partial == QS_PARTIAL_HOLD)
			CAND(born + (uint64_t)p->hold_ms * 1000000u);
	}
#undef CAND
	return best;
}

/* ---- checkpoint ----------------------------------------------------------------- */

static void ckpt_step(struct qs_engine *e);

/*
 * The furthest record boundary the tail may move to now. A segment wholly
 * behind done_pos with no live entry and no pin stays that way until the
 * tail passes it (new entries only go at the head), so the walk resumes
 * where the last one proved everything dead instead of starting at the
 * tail each time: on a large log that walk would otherwise run on every
 * record completion.
 */
static void ckpt_candidate(struct qs_engine *e, uint64_t *pos_out, uint64_t *seq_out)
{
	uint64_t pos = e->tail_pos, seq = e->tail_seq;
	if (e->ckpt_scan_pos > pos) {
		pos = e->ckpt_scan_pos;
		seq = e->ckpt_scan_seq;
	}
	while (pos < e->done_pos) {
		uint64_t seg = (pos / e->seg_blocks) % e->nsegs;
		uint64_t seg_end = pos - pos % e->seg_blocks + e->seg_blocks;
		if (e->seg_live[seg] || e->seg_pins[seg])
			break;
		if (seg_end < e->done_pos) {
			pos = seg_end;
			seq = e->seg_first_seq[(seg_end / e->seg_blocks) % e->nsegs];
			e->ckpt_scan_pos = pos;
			e->ckpt_scan_seq = seq;
		} else {
			pos = e->done_pos;
			seq = e->done_seq;
		}
	}
	*pos_out = pos;
	*seq_out = seq;
}

const char *eng_ckpt_stage_name(enum eng_ckpt_stage s)
{
	switch (s) {
	case CKPT_MAP_FLUSH: return "map page flush";
	case CKPT_QLC_FLUSH: return "QLC flush";
	case CKPT_LOG_FLUSH: return "log device flush";
	case CKPT_SUPERBLOCK: return "superblock write";
	}
	return "step";
}

static void ckpt_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		if (e->ckpt_stage == CKPT_QLC_FLUSH) {
			e->st.qlc_errors++;
			e->qlc_unflushed = true;
		} else {
			e->st.fast_errors++;
		}
		e->ckpt_active = false;
		/*
		 * Without checkpoints the log cannot free space, and writers
		 * waiting for it would wait forever. After a few failures in a
		 * row the log is given up: waiting and new writes fail with EIO
		 * (reads still work), rather than hanging the device.
		 */
		if (++e->ckpt_fail_streak >= 5) {
			eng_log(e, QS_LOG_ERR, "checkpoint's %s failed %u times in a row: %s",
				eng_ckpt_stage_name(e->ckpt_stage), e->ckpt_fail_streak,
				strerror(-res));
			eng_fail(e, "the log cannot be checkpointed");
			eng_space_kick(e);
		} else {
			eng_log(e, QS_LOG_ERR, "checkpoint's %s failed: %s; tail kept, retrying",
				eng_ckpt_stage_name(e->ckpt_stage), strerror(-res));
			e->ckpt_retry_ns = eng_now(e) + (100000000ull << e->ckpt_fail_streak);
		}
	} else if (e->ckpt_stage == CKPT_SUPERBLOCK) {
		eng_pace_freed(e, e->ckpt_pos - e->tail_pos);
		e->tail_pos = e->ckpt_pos;
		e->tail_seq = e->ckpt_seq;
		e->ckpt_active = false;
		e->ckpt_retry_ns = 0;
		e->ckpt_fail_streak = 0;
		e->st.checkpoints++;
		eng_space_kick(e);
		dst_kick(e);
		eng_check_drain(e);
		ckpt_kick(e, false);
	} else {
		if (e->ckpt_stage == CKPT_LOG_FLUSH && e->ckpt_flush_seq > e->durable_seq) {
			e->durable_seq = e->ckpt_flush_seq;
			plc_durable(e);
		}
		e->ckpt_stage++;
		ckpt_step(e);
	}
	eng_leave_deliver(e);
}

static void ckpt_step(struct qs_engine *e)
{
	if (e->ckpt_stage == CKPT_MAP_FLUSH) {
		/* Log placement: the map pages changed by the records the tail
		 * is about to pass go to the fast tier first. */
		plc_map_flush(e, ckpt_cb, e);
		return;
	}
	if (e->ckpt_stage == CKPT_QLC_FLUSH) {
		if (e->qlc_unflushed && (e->qlc->flags & QS_VOL_VOLATILE_CACHE)) {
			e->qlc_unflushed = false;
			e->st.qlc_flushes++;
			e->qlc->ops->flush(e->qlc->ctx, ckpt_cb, e);
			return;
		}
		e->qlc_unflushed = false;
		e->ckpt_stage = CKPT_LOG_FLUSH;
	}
	if (e->ckpt_stage == CKPT_LOG_FLUSH) {
		if (e->fast->flags & QS_VOL_VOLATILE_CACHE) {
			e->st.log_flushes++;
			e->ckpt_flush_seq = e->done_seq;
			e->fast->ops->flush(e->fast->ctx, ckpt_cb, e);
			return;
		}
		e->ckpt_stage = CKPT_SUPERBLOCK;
	}
	rcv_write_sb(e, e->ckpt_pos, e->ckpt_seq, false, ckpt_cb, e);
}

void ckpt_kick(struct qs_engine *e, bool force)
{
	if (!e->ready || e->ckpt_active || e->conf.mode != QS_MODE_CACHE || e->failed ||
	    e->closed)
		return;
	if (e->ckpt_retry_ns && eng_now(e) < e->ckpt_retry_ns)
		return;
	uint64_t pos, seq;
	ckpt_candidate(e, &pos, &seq);
	/* Log placement: dirty map pages leave DRAM only through a map flush,
	 * so their number alone calls for a checkpoint (mapcache.c). */
	bool map_pressed = plc_map_pressed(e);
	if (pos == e->tail_pos && !map_pressed)
		return;
	uint64_t reclaim = pos - e->tail_pos;
	uint64_t min = e->win_blocks / 8 > e->seg_blocks ? e->win_blocks / 8 : e->seg_blocks;
	bool idle = e->conf.policy.idle_ms && eng_idle(e, eng_now(e));
	/* Writers waiting for room: any room freed helps now. Paced: a
	 * quarter of the paced band is worth a checkpoint. */
	bool pressed = e->space_head && e->log_full;
	if (eng_pace_on(e) && reclaim >= eng_pace_band(e) / 4)
		pressed = true;
	if (!force && !pressed && !e->draining && !idle && reclaim < min && !map_pressed)
		return;
	e->ckpt_active = true;
	e->ckpt_pos = pos;
	e->ckpt_seq = seq;
	e->ckpt_stage = e->plc ? CKPT_MAP_FLUSH : CKPT_QLC_FLUSH;
	ckpt_step(e);
}

/* Finish a drain once nothing is dirty and the log is empty. */
void eng_check_drain(struct qs_engine *e)
{
	if (!e->draining)
		return;
	bool stuck = false;
	for (uint32_t i = 0; i < e->nfailed; i++)
		if (e->failed_ius[i].attempts >= 5)
			stuck = true;
	int res;
	if (stuck || e->failed) {
		res = -EIO;
	} else {
		if (e->ndius || e->dst_active)
			return;
		if (e->tail_pos != e->done_pos || e->fifo_head) {
			ckpt_kick(e, true);
			return;
		}
		res = 0;
	}
	e->draining = false;
	qs_req_cb cb = e->drain_cb;
	e->drain_cb = NULL;
	eng_notify(e, cb, e->drain_arg, res);
}
