/* SPDX-License-Identifier: MIT */
/*
 * Log placement: bands, the map, destage into bands, GC, map pages.
 *
 * Durability, in the order things happen (docs/ARCHITECTURE.md, Log
 * placement):
 *
 *  - A unit (destage or GC) is written to its band with FUA (free on a
 *    drive with power-loss protection), and its MAP or MOVE record is
 *    appended only once that write completed: a map entry, in the log or
 *    in a map page, never points at data that a power loss could take.
 *    The record is applied (map updated, cached copies dropped) when it
 *    completes in log order. A MAP applies to a block only while its
 *    cached copy is still the one that was destaged (the log position is
 *    in the record), at runtime and in recovery alike, so a newer write
 *    or a TRIM in between wins; recovery leaves the cached copy in place
 *    (it wins over the map until destaged again). A MOVE applies only
 *    where the block is still mapped at its old place.
 *  - A band whose last valid block went away is reused only once the
 *    record that took it away is durable (a log flush), no read of it is in
 *    flight and nothing is being written into it.
 *  - Every checkpoint writes the dirty map pages (each to the slot that
 *    does not hold its newest copy) before it flushes and moves the tail,
 *    so a record leaves the log only after the map pages it changed are on
 *    the fast tier. Recovery reads the map region, then replays the log.
 */
#include <errno.h>
#include <string.h>

#include "engine_int.h"

/* ---- map and reverse map ------------------------------------------------ */

/* Entry i of a table of width w (4 or 8): called with a constant w, the
 * width test disappears from the loops that run over the whole map. */
static inline uint64_t tbl_get_w(const void *t, uint64_t i, uint32_t w)
{
	if (w == 4) {
		uint32_t v = ((const uint32_t *)t)[i];
		return v == UINT32_MAX ? PLC_NONE : v;
	}
	return ((const uint64_t *)t)[i];
}

static inline void tbl_set_w(void *t, uint64_t i, uint64_t v, uint32_t w)
{
	if (w == 4)
		((uint32_t *)t)[i] = v == PLC_NONE ? UINT32_MAX : (uint32_t)v;
	else
		((uint64_t *)t)[i] = v;
}

static inline uint64_t tbl_get(const struct plc *p, const void *t, uint64_t i)
{
	return tbl_get_w(t, i, p->width);
}

static inline void tbl_set(const struct plc *p, void *t, uint64_t i, uint64_t v)
{
	tbl_set_w(t, i, v, p->width);
}

static inline uint64_t band_of(const struct plc *p, uint64_t phys)
{
	return phys / p->band_blocks;
}

static inline bool bit_get(const uint8_t *bm, uint64_t i)
{
	return bm[i >> 3] & (1u << (i & 7));
}

static inline void bit_put(uint8_t *bm, uint64_t i, bool v)
{
	if (v)
		bm[i >> 3] |= (uint8_t)(1u << (i & 7));
	else
		bm[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

static void page_fill(struct qs_engine *e, struct qs_fmt_map_page *b, uint64_t pg);

/*
 * lba's entry is about to change: its page joins the next map flush, and if
 * the flush running now has not copied the page yet, the page is copied
 * first (copy on write), so that the flush writes the map exactly as it was
 * at its snapshot (after every record before snap_seq, nothing after).
 */
static void page_touch(struct qs_engine *e, uint64_t lba)
{
	struct plc *p = e->plc;
	uint64_t pg = lba / p->per_page;
	/* Timing-only runs write no page contents: nothing to copy. */
	if (!e->no_data && bit_get(p->pending, pg) && !p->cow[pg]) {
		p->cow[pg] = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		if (p->cow[pg])
			page_fill(e, p->cow[pg], pg);
		else
			p->mf_result = -ENOMEM; /* this flush cannot be exact: fail it */
	}
	if (bit_get(p->dirty, pg))
		return;
	bit_put(p->dirty, pg, true);
	p->dirty_list[p->ndirty++] = pg;
}

static void band_drained(struct qs_engine *e, uint64_t b)
{
	struct plc *p = e->plc;
	struct band *bd = &p->bands[b];
	if (bd->drained || bd->valid || (bd->state != BAND_FULL && bd->state != BAND_VICTIM))
		return;
	bd->drained = true;
	p->drained[p->ndrained++] = b;
}

/*
 * Point lba at phys (or PLC_NONE). At runtime the reverse map and the
 * bands' valid counts follow; in recovery they are rebuilt at the end.
 */
static void map_set(struct qs_engine *e, uint64_t lba, uint64_t phys, bool runtime)
{
	struct plc *p = e->plc;
	uint64_t old = tbl_get(p, p->map, lba);
	page_touch(e, lba);
	tbl_set(p, p->map, lba, phys);
	if (!runtime)
		return;
	if (old != PLC_NONE) {
		struct band *bd = &p->bands[band_of(p, old)];
		bd->valid--;
		bd->drop_seq = p->apply_seq;
		p->mapped--;
		if (!bd->valid)
			band_drained(e, band_of(p, old));
	}
	if (phys != PLC_NONE) {
		tbl_set(p, p->rev, phys, lba);
		p->bands[band_of(p, phys)].valid++;
		p->mapped++;
	}
}

void plc_apply(struct qs_engine *e, const struct qs_fmt_extent *x,
	       const struct qs_fmt_ext_phys *py, bool runtime)
{
	struct plc *p = e->plc;
	/* In recovery the map pages already hold every record before map_seq:
	 * their map changes apply again only from there (a TRIM still drops
	 * the cached copies the replayed DATA records made). */
	bool map = runtime || p->apply_seq >= e->sb.map_seq;
	if (!map) {
		if (x->kind == QS_EXT_TRIM)
			eng_index_drop_range(e, x->lba, x->nblocks);
		return;
	}
	switch (x->kind) {
	case QS_EXT_MAP:
		for (uint32_t i = 0; i < x->nblocks; i++) {
			uint32_t v;
			uint64_t lba = x->lba + i;
			if (!qs_index_get(&e->idx, lba, &v) || (v & SLOT_TOMB) ||
			    eng_slot_to_pos(e, v) != py->from + i)
				continue; /* superseded or trimmed since: the copy is garbage */
			map_set(e, lba, py->phys + i, runtime);
			/* In recovery the cached copy stays: the QLC write may not
			 * have been durable, and the copy wins over the map. */
			if (runtime)
				eng_index_drop(e, lba);
		}
		break;
	case QS_EXT_MOVE:
		for (uint32_t i = 0; i < x->nblocks; i++)
			if (tbl_get(p, p->map, x->lba + i) == py->from + i) {
				map_set(e, x->lba + i, py->phys + i, runtime);
				p->gc_moved += runtime;
			}
		break;
	case QS_EXT_TRIM:
		for (uint64_t i = 0; i < x->nblocks; i++)
			if (tbl_get(p, p->map, x->lba + i) != PLC_NONE)
				map_set(e, x->lba + i, PLC_NONE, runtime);
		eng_index_drop_range(e, x->lba, x->nblocks);
		break;
	}
}

/* ---- set-up ------------------------------------------------------------- */

uint64_t plc_format_geometry(struct qs_engine *e, uint64_t seg)
{
	struct qs_fmt_sb *sb = &e->sb;
	uint64_t band_blocks = e->conf.band_bytes / QS_BLOCK_SIZE;
	uint64_t phys = e->qlc->size / e->conf.band_bytes * band_blocks;
	uint32_t width = qs_fmt_map_width(phys);
	uint64_t pages = qs_fmt_map_pages(e->conf.qlc_size / QS_BLOCK_SIZE, width);
	uint64_t after = 2 * pages + qs_fmt_clean_blocks(phys, (uint32_t)band_blocks, width);
	uint64_t blocks = e->fast->size / QS_BLOCK_SIZE;
	if (blocks < QS_FMT_LOG_START + after)
		return 0;
	uint64_t log = (blocks - QS_FMT_LOG_START - after) / seg * seg;
	if (log > (uint64_t)SLOT_MASK / seg * seg)
		log = (uint64_t)SLOT_MASK / seg * seg;
	sb->placement = QS_FMT_PLACE_LOG;
	sb->band_blocks = (uint32_t)band_blocks;
	sb->map_width = width;
	sb->qlc_phys_size = phys * QS_BLOCK_SIZE;
	sb->map_start = QS_FMT_LOG_START + log;
	sb->map_pages = pages;
	sb->map_seq = 1; /* the first record's: nothing is in the map pages yet */
	sb->map_gen = 0;
	return log;
}

static int bitmap_alloc(struct qs_engine *e, uint8_t **bm, uint64_t bits)
{
	size_t n = (size_t)((bits + 7) / 8);
	if (!(*bm = eng_alloc(e, n, 64)))
		return -ENOMEM;
	memset(*bm, 0, n);
	return 0;
}

static int units_alloc(struct qs_engine *e, struct unit *u, bool gc)
{
	memset(u, 0, sizeof(*u));
	u->e = e;
	u->gc = gc;
	size_t ib = e->iu_blocks;
	u->lba = eng_alloc(e, ib * sizeof(uint64_t), 16);
	u->from = eng_alloc(e, ib * sizeof(uint64_t), 16);
	u->snap = eng_alloc(e, ib * sizeof(uint32_t), 16);
	u->ius = eng_alloc(e, ib * sizeof(uint64_t), 16);
	u->x = eng_alloc(e, ib * sizeof(struct plc_ext), 16);
	u->buf = eng_alloc(e, e->conf.iu_bytes, QS_BLOCK_SIZE);
	return u->lba && u->from && u->snap && u->ius && u->x && u->buf ? 0 : -ENOMEM;
}

static void units_free(struct qs_engine *e, struct unit *u)
{
	eng_free(e, u->lba);
	eng_free(e, u->from);
	eng_free(e, u->snap);
	eng_free(e, u->ius);
	eng_free(e, u->x);
	eng_free(e, u->buf);
}

static int tbl_alloc(struct qs_engine *e, void **t, uint64_t n)
{
	size_t bytes = (size_t)(n ? n : 1) * e->plc->width;
	if (!(*t = eng_alloc(e, bytes, 64)))
		return -ENOMEM;
	memset(*t, 0xff, bytes); /* all unmapped */
	return 0;
}

int plc_init(struct qs_engine *e)
{
	const struct qs_fmt_sb *sb = &e->sb;
	struct plc *p = eng_alloc(e, sizeof(*p), 64);
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	e->plc = p;
	p->lbas = sb->qlc_size / QS_BLOCK_SIZE;
	p->phys = sb->qlc_phys_size / QS_BLOCK_SIZE;
	p->band_blocks = sb->band_blocks;
	p->nbands = p->phys / p->band_blocks;
	p->width = sb->map_width;
	p->per_page = qs_fmt_map_per_page(p->width);
	p->map_start = sb->map_start;
	p->map_pages = sb->map_pages;
	p->cs_start = p->map_start + 2 * p->map_pages;
	p->cs_band_pages = qs_fmt_band_pages(p->nbands);
	p->cs_blocks = qs_fmt_clean_blocks(p->phys, p->band_blocks, p->width);
	p->open[0] = p->open[1] = PLC_NONE;
	p->victim = PLC_NONE;
	p->bands = eng_alloc(e, p->nbands * sizeof(struct band), 64);
	p->freeq = eng_alloc(e, p->nbands * sizeof(uint64_t), 64);
	p->drained = eng_alloc(e, p->nbands * sizeof(uint64_t), 64);
	p->dirty_list = eng_alloc(e, p->map_pages * sizeof(uint64_t), 64);
	p->mf_list = eng_alloc(e, p->map_pages * sizeof(uint64_t), 64);
	p->gcu = eng_alloc(e, 2 * e->conf.destage_qd * sizeof(struct unit), 64);
	p->dstu = p->gcu ? p->gcu + e->conf.destage_qd : NULL;
	if (!p->bands || !p->freeq || !p->drained || !p->dirty_list || !p->mf_list || !p->gcu ||
	    tbl_alloc(e, &p->map, p->lbas) || tbl_alloc(e, &p->rev, p->phys) ||
	    bitmap_alloc(e, &p->dirty, p->map_pages) || bitmap_alloc(e, &p->newest, p->map_pages) ||
	    bitmap_alloc(e, &p->pending, p->map_pages) ||
	    bitmap_alloc(e, &p->written, p->map_pages) ||
	    !(p->written_list = eng_alloc(e, p->map_pages * sizeof(uint64_t), 64)) ||
	    !(p->cow = eng_alloc(e, p->map_pages * sizeof(void *), 64)))
		return -ENOMEM;
	memset(p->cow, 0, p->map_pages * sizeof(void *));
	memset(p->bands, 0, p->nbands * sizeof(struct band));
	memset(p->gcu, 0, 2 * e->conf.destage_qd * sizeof(struct unit));
	for (uint32_t i = 0; i < 2 * e->conf.destage_qd; i++)
		if (units_alloc(e, &p->gcu[i], i < e->conf.destage_qd))
			return -ENOMEM;
	for (uint32_t i = 0; i < PLC_MAP_QD; i++) {
		p->mfw[i].e = e;
		if (!(p->mfw[i].buf = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE)))
			return -ENOMEM;
	}
	/*
	 * Log room for map records (see plc_log_reserve): destaging a unit
	 * takes one MAP record at worst, and getting it a band may take GC
	 * moving (100 - op) / op units more, a MOVE record each at worst.
	 */
	uint64_t full = p->nbands > 4 ? (p->nbands - 4) * p->band_blocks : 0;
	if (full <= p->lbas) {
		eng_log(e, QS_LOG_ERR, "log placement: %llu bands cannot hold %llu client "
			"blocks with 4 spare; format with a larger op_pct",
			(unsigned long long)p->nbands, (unsigned long long)p->lbas);
		return -EINVAL;
	}
	/* With all but 4 bands full, the emptiest holds at most v = lbas /
	 * full valid blocks; gaining a band moves v / (1 - v) bands' worth. */
	p->rsv_per_unit = (uint32_t)(1 + (p->lbas + (full - p->lbas) - 1) / (full - p->lbas));
	uint64_t need = (uint64_t)(QS_FMT_MIN_LOG_SEGMENTS + 1) * e->seg_blocks +
			(uint64_t)(e->conf.destage_qd + 1) * p->rsv_per_unit * 2;
	if (e->log_blocks < need) {
		eng_log(e, QS_LOG_ERR,
			"log of %llu blocks is too small for log placement: it needs at least "
			"%llu (5 segments and room for map records)",
			(unsigned long long)e->log_blocks, (unsigned long long)need);
		return -ENOSPC;
	}
	/* A fresh log: every band free, in order. Recovery rebuilds this. */
	for (uint64_t b = 0; b < p->nbands; b++)
		p->freeq[b] = b;
	p->free_n = p->nbands;
	return 0;
}

void plc_fini(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (!p)
		return;
	if (p->gcu)
		for (uint32_t i = 0; i < 2 * e->conf.destage_qd; i++)
			units_free(e, &p->gcu[i]);
	for (uint32_t i = 0; i < PLC_MAP_QD; i++)
		eng_free(e, p->mfw[i].buf);
	eng_free(e, p->gcu);
	eng_free(e, p->bands);
	eng_free(e, p->freeq);
	eng_free(e, p->drained);
	eng_free(e, p->dirty_list);
	eng_free(e, p->mf_list);
	eng_free(e, p->map);
	eng_free(e, p->rev);
	eng_free(e, p->dirty);
	eng_free(e, p->newest);
	eng_free(e, p->pending);
	eng_free(e, p->written);
	eng_free(e, p->written_list);
	if (p->cow)
		for (uint64_t i = 0; i < p->map_pages; i++)
			eng_free(e, p->cow[i]);
	eng_free(e, p->cow);
	eng_free(e, p->ld_buf);
	eng_free(e, p);
	e->plc = NULL;
}

/* ---- format: the map region reads back as zeroes (never written) ------- */

struct fmt_ctx {
	struct qs_engine *e;
	qs_io_cb cb;
	void *arg;
	int stage;
};

static void format_map_cb(void *arg, int res)
{
	struct fmt_ctx *c = arg;
	struct qs_engine *e = c->e;
	if (!res && c->stage == 0 && (e->fast->flags & QS_VOL_VOLATILE_CACHE)) {
		/* The zeroed region must be durable before a superblock points
		 * at it: stale pages of an older format would fail their CRC
		 * (seeded with the new uuid), but a page that fails is read as
		 * torn, not as never written. */
		c->stage = 1;
		e->st.log_flushes++;
		e->fast->ops->flush(e->fast->ctx, format_map_cb, c);
		return;
	}
	qs_io_cb cb = c->cb;
	void *cbarg = c->arg;
	eng_free(e, c);
	cb(cbarg, res);
}

void plc_format_map(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct fmt_ctx *c = eng_alloc(e, sizeof(*c), 16);
	if (!c) {
		cb(arg, -ENOMEM);
		return;
	}
	c->e = e;
	c->cb = cb;
	c->arg = arg;
	c->stage = 0;
	e->fast->ops->discard(e->fast->ctx, e->plc->map_start * QS_BLOCK_SIZE,
			      2 * e->plc->map_pages * QS_BLOCK_SIZE, format_map_cb, c);
}

/* ---- read path -------------------------------------------------------- */

void plc_band_unpin(struct qs_engine *e, uint64_t band)
{
	struct band *bd = &e->plc->bands[band];
	bd->pins--;
	if (!bd->pins && bd->drained)
		plc_kick(e);
}

int plc_read(struct qs_engine *e, struct req *r, uint64_t lba, uint64_t n, unsigned char *buf)
{
	struct plc *p = e->plc;
	for (uint64_t i = 0; i < n;) {
		uint64_t ph = tbl_get(p, p->map, lba + i);
		if (ph == PLC_NONE) {
			if (!e->no_data)
				memset(buf + i * QS_BLOCK_SIZE, 0, QS_BLOCK_SIZE);
			i++;
			continue;
		}
		/* Blocks written together lie together: merge within a band. */
		uint64_t j = i + 1;
		while (j < n && tbl_get(p, p->map, lba + j) == ph + (j - i) &&
		       band_of(p, ph + (j - i)) == band_of(p, ph))
			j++;
		e->st.qlc_reads++;
		e->st.qlc_read_bytes += (j - i) * QS_BLOCK_SIZE;
		p->bands[band_of(p, ph)].pins++;
		int rc = eng_sub_io(e, r, e->qlc, 'r', ph * QS_BLOCK_SIZE, buf + i * QS_BLOCK_SIZE,
				    (j - i) * QS_BLOCK_SIZE, UINT64_MAX, band_of(p, ph));
		if (rc) {
			p->bands[band_of(p, ph)].pins--;
			return rc;
		}
		i = j;
	}
	return 0;
}

/* ---- bands ---------------------------------------------------------------- */

/* Reusable: nothing valid, the records that emptied it durable, no read
 * and no write of it in flight. */
static bool band_reusable(struct qs_engine *e, const struct band *bd)
{
	return !bd->valid && !bd->pins && !bd->inflight &&
	       bd->drop_seq < eng_durable_seq(e);
}

/* The log flush bands_reclaim asked for is done (or failed). */
static void flush_done(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	e->plc->flush_asked = false;
	/* A failing log device: ask again only after a pause (the timer). */
	if (res < 0)
		e->plc->flush_retry_ns = eng_now(e) + 100000000ull;
	plc_kick(e);
	eng_leave_deliver(e);
}

static void bands_reclaim(struct qs_engine *e)
{
	if (!e->plc->ndrained)
		return;
	struct plc *p = e->plc;
	bool waiting = false;
	for (uint64_t i = 0; i < p->ndrained;) {
		uint64_t b = p->drained[i];
		struct band *bd = &p->bands[b];
		if (bd->valid || (bd->state != BAND_FULL && bd->state != BAND_VICTIM)) {
			bd->drained = false; /* cannot happen: only appends add blocks */
			p->drained[i] = p->drained[--p->ndrained];
			continue;
		}
		if (!band_reusable(e, bd)) {
			waiting |= bd->drop_seq >= eng_durable_seq(e);
			i++;
			continue;
		}
		if (p->victim == b)
			p->victim = PLC_NONE;
		bd->drained = false;
		bd->state = BAND_FREE;
		p->freeq[(p->free_head + p->free_n) % p->nbands] = b;
		p->free_n++;
		p->drained[i] = p->drained[--p->ndrained];
	}
	/* Drained bands wait for a log flush that nobody else may issue soon:
	 * ask for one when bands are short. */
	if (waiting && !p->flush_asked && p->free_n <= PLC_GC_RESERVE + 2 &&
	    (!p->flush_retry_ns || eng_now(e) >= p->flush_retry_ns)) {
		p->flush_retry_ns = 0;
		struct req *r = eng_req_alloc(e);
		if (r) {
			r->type = REQ_INTERNAL;
			r->owner = e;
			r->cb = flush_done;
			r->arg = e;
			p->flush_asked = true;
			eng_flush_enqueue(e, r);
		}
	}
}

void plc_durable(struct qs_engine *e)
{
	if (e->plc && e->plc->ndrained)
		plc_kick(e);
}

/* Can stream s (0 client, 1 GC) take an IU now? Client data may not open
 * the last free bands: GC needs them to finish emptying a band, which is
 * what frees more. */
static bool band_ready(const struct plc *p, int s)
{
	return p->open[s] != PLC_NONE || (p->free_n && (s == 1 || p->free_n > PLC_GC_RESERVE));
}

uint64_t plc_log_reserve(const struct qs_engine *e)
{
	const struct plc *p = e->plc;
	uint64_t blocks = e->st.cached_blocks + (e->alloc_pos - e->done_pos);
	return (blocks / e->iu_blocks + e->conf.destage_qd + 1) * p->rsv_per_unit + e->seg_blocks;
}

bool plc_starved(const struct qs_engine *e)
{
	return !band_ready(e->plc, 0);
}

/* Take the next IU of stream s's open band, opening one if needed; only
 * when band_ready(). */
static void band_alloc(struct qs_engine *e, int s, uint64_t *phys, uint64_t *band)
{
	struct plc *p = e->plc;
	if (p->open[s] == PLC_NONE) {
		p->open[s] = p->freeq[p->free_head];
		p->free_head = (p->free_head + 1) % p->nbands;
		p->free_n--;
		p->wp[s] = 0;
		struct band *bd = &p->bands[p->open[s]];
		bd->state = BAND_OPEN;
		bd->valid = 0;
		bd->drop_seq = 0;
	}
	*band = p->open[s];
	*phys = p->open[s] * p->band_blocks + p->wp[s];
	p->wp[s] += e->iu_blocks;
	if (p->wp[s] >= p->band_blocks) {
		struct band *bd = &p->bands[p->open[s]];
		bd->state = BAND_FULL;
		bd->age = ++p->closes;
		p->open[s] = PLC_NONE;
		band_drained(e, *band);
	}
}

/* ---- units: gather, read, write, log ------------------------------------ */

static void bands_reclaim(struct qs_engine *e);

static void unit_write(struct qs_engine *e, struct unit *u);
static void unit_logged(void *arg, int res);

static void unit_release(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	if (!u->gc) {
		for (uint32_t k = 0; k < u->n; k++)
			e->seg_pins[slot_seg(e, u->snap[k])]--;
		for (uint32_t i = 0; i < u->nius; i++)
			busy_del(e, u->ius[i]);
		e->dst_active--;
	} else {
		p->gc_active--;
	}
	if (u->band != PLC_NONE) {
		/* Written into that band: it may be freed only now, once the
		 * unit's map records applied (or failed), not when the write
		 * completed, or a late MAP could point into a reused band. */
		struct band *bd = &p->bands[u->band];
		bd->inflight--;
		u->band = PLC_NONE;
		if (!bd->inflight && bd->drained)
			bands_reclaim(e);
	}
	u->active = false;
}

static void unit_failed(struct qs_engine *e, struct unit *u, int res)
{
	eng_log(e, QS_LOG_WARN, "%s unit of %u blocks failed (%s); kept, retried",
		u->gc ? "GC" : "destage", u->n, strerror(-res));
	if (u->gc) {
		/* Its victims hold blocks still valid: let GC pick them again. */
		struct plc *p = e->plc;
		for (uint32_t k = 0; k < u->n; k++) {
			uint64_t b = band_of(p, u->from[k]);
			if (b == p->victim)
				p->victim_at = 0;
			else if (p->bands[b].state == BAND_VICTIM)
				p->bands[b].state = BAND_FULL;
		}
	}
	e->st.destage_retries++;
	dst_pause(e);
	unit_release(e, u);
	/* As in place: a full log while the QLC keeps failing fails writes
	 * rather than hanging the device (eng_space_kick). */
	if (e->dst_fail_streak >= DST_FAIL_GIVE_UP)
		eng_space_kick(e);
}

struct upiece {
	struct io_link link; /* first: eng_io_alloc */
	struct unit *u;
	uint64_t seg, band;
	struct iovec iov;
};

static void upiece_cb(void *arg, int res)
{
	struct upiece *pc = arg;
	struct unit *u = pc->u;
	struct qs_engine *e = u->e;
	eng_enter(e);
	if (pc->seg != UINT64_MAX)
		e->seg_pins[pc->seg]--;
	if (pc->band != UINT64_MAX)
		plc_band_unpin(e, pc->band);
	if (res < 0) {
		if (pc->band != UINT64_MAX)
			e->st.qlc_errors++;
		else
			e->st.fast_errors++;
		if (!u->result)
			u->result = res;
	}
	eng_io_free(e, pc);
	if (--u->pending == 0)
		unit_write(e, u);
	eng_leave_deliver(e);
}

/* Read n blocks from vol at off into slot k of u's buffer. */
static void unit_read(struct qs_engine *e, struct unit *u, struct qs_vol *vol, uint64_t off,
		      uint32_t k, uint32_t n, uint64_t seg, uint64_t band)
{
	struct upiece *pc = eng_io_alloc(e, sizeof(*pc));
	if (!pc) {
		if (!u->result)
			u->result = -ENOMEM;
		return;
	}
	pc->u = u;
	pc->seg = seg;
	pc->band = band;
	pc->iov.iov_base = u->buf + (size_t)k * QS_BLOCK_SIZE;
	pc->iov.iov_len = (size_t)n * QS_BLOCK_SIZE;
	if (seg != UINT64_MAX)
		e->seg_pins[seg]++;
	if (band != UINT64_MAX)
		e->plc->bands[band].pins++;
	u->pending++;
	vol->ops->read(vol->ctx, off, &pc->iov, 1, upiece_cb, pc);
}

/* Destage: the cached blocks of slot k.. from the DRAM buffer or the log. */
static void unit_read_cached(struct qs_engine *e, struct unit *u)
{
	for (uint32_t k = 0; k < u->n;) {
		uint64_t pos = u->from[k];
		if (eng_ring_has(e, pos)) {
			if (!e->no_data)
				memcpy(u->buf + (size_t)k * QS_BLOCK_SIZE, eng_ring_at(e, pos),
				       QS_BLOCK_SIZE);
			k++;
			continue;
		}
		uint32_t j = k + 1;
		while (j < u->n && u->from[j] == pos + (j - k) &&
		       slot_seg(e, u->snap[j]) == slot_seg(e, u->snap[k]))
			j++;
		e->st.log_read_bytes += (uint64_t)(j - k) * QS_BLOCK_SIZE;
		unit_read(e, u, e->fast, eng_pos_off(e, pos), k, j - k, UINT64_MAX, UINT64_MAX);
		k = j;
	}
}

static struct unit *unit_take(struct qs_engine *e, bool gc)
{
	struct unit *pool = gc ? e->plc->gcu : e->plc->dstu;
	for (uint32_t i = 0; i < e->conf.destage_qd; i++) {
		struct unit *u = &pool[i];
		if (!u->active) {
			u->active = true;
			u->n = u->nius = u->nx = 0;
			u->result = 0;
			u->band = PLC_NONE;
			u->pending = 1; /* held until every read is issued */
			return u;
		}
	}
	return NULL;
}

/* Add the cached blocks of dirty IU di to u; false when u is full. */
static bool unit_add_iu(struct qs_engine *e, struct unit *u, uint32_t di)
{
	uint64_t iu = e->dius[di].iu, lba0 = iu * e->iu_blocks;
	busy_add(e, iu);
	u->ius[u->nius++] = iu;
	for (uint32_t b = 0; b < e->iu_blocks && u->n < e->iu_blocks; b++) {
		uint32_t v;
		if (!qs_index_get(&e->idx, lba0 + b, &v))
			continue;
		u->lba[u->n] = lba0 + b;
		u->snap[u->n] = v;
		u->from[u->n] = eng_slot_to_pos(e, v);
		/* Pinned until logged: the slot cannot be reused, so the MAP's
		 * comparison of positions tells whether it was superseded. */
		e->seg_pins[slot_seg(e, v)]++;
		u->n++;
	}
	return u->n < e->iu_blocks;
}

bool plc_dst_start(struct qs_engine *e, uint32_t first, bool urgent, bool space)
{
	struct unit *u = unit_take(e, false);
	if (!u)
		return false;
	e->dst_active++;
	uint32_t di = first != NIL ? first : dst_pick(e, urgent, space);
	/* Pack whole dirty IUs while they fit; one may be split at the end
	 * (the rest of it waits until this unit is logged). */
	while (di != NIL && unit_add_iu(e, u, di))
		di = dst_pick(e, urgent, space);
	if (!u->n) {
		unit_release(e, u);
		return false;
	}
	unit_read_cached(e, u);
	if (--u->pending == 0)
		unit_write(e, u);
	return true;
}

/* GC: gather the next valid blocks of the victim into u and read them. */
static void gc_gather(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	uint64_t base = p->victim * p->band_blocks;
	while (p->victim_at < p->band_blocks && u->n < e->iu_blocks) {
		uint64_t ph = base + p->victim_at;
		uint64_t lba = tbl_get(p, p->rev, ph);
		if (lba == PLC_NONE || tbl_get(p, p->map, lba) != ph) {
			p->victim_at++;
			continue;
		}
		/* A run of valid blocks, one read. */
		uint32_t k = u->n;
		while (p->victim_at < p->band_blocks && u->n < e->iu_blocks) {
			uint64_t q = base + p->victim_at, l = tbl_get(p, p->rev, q);
			if (l == PLC_NONE || tbl_get(p, p->map, l) != q)
				break;
			u->lba[u->n] = l;
			u->from[u->n] = q;
			u->n++;
			p->victim_at++;
		}
		uint32_t n = u->n - k;
		e->st.qlc_reads++;
		e->st.qlc_read_bytes += (uint64_t)n * QS_BLOCK_SIZE;
		p->gc_read_bytes += (uint64_t)n * QS_BLOCK_SIZE;
		unit_read(e, u, e->qlc, ph * QS_BLOCK_SIZE, k, n, UINT64_MAX, p->victim);
	}
}

static void park(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	int s = u->gc;
	u->next = NULL;
	if (p->park_tail[s])
		p->park_tail[s]->next = u;
	else
		p->park_head[s] = u;
	p->park_tail[s] = u;
}

static void unit_write_cb(void *arg, int res);
static void unit_issue(struct qs_engine *e, struct unit *u);
static void drop_parked(struct qs_engine *e);

/* Reads are done: write the unit, or park it until its stream has a band
 * (in order: units of a stream reach their band in the order they park). */
static void unit_write(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	if (u->result < 0) {
		unit_failed(e, u, u->result);
		return;
	}
	if (p->park_head[u->gc] || !band_ready(p, u->gc)) {
		park(e, u);
		/* Closing or failed: plc_kick has already given the parked
		 * units up, and would not be called again to drop this one. */
		if (e->closing || e->failed)
			drop_parked(e);
		return;
	}
	unit_issue(e, u);
}

/* Take the next IU of the stream's band and write the unit there. */
static void unit_issue(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	band_alloc(e, u->gc, &u->phys, &u->band);
	if (!e->no_data && u->n < e->iu_blocks)
		memset(u->buf + (size_t)u->n * QS_BLOCK_SIZE, 0,
		       (size_t)(e->iu_blocks - u->n) * QS_BLOCK_SIZE);
	p->bands[u->band].inflight++;
	eng_qlc_count_write(e, u->phys * QS_BLOCK_SIZE, e->conf.iu_bytes);
	if (u->gc) {
		p->gc_write_bytes += e->conf.iu_bytes;
	} else {
		e->st.destage_ius++;
		if (u->n == e->iu_blocks)
			e->st.destage_full_ius++;
		else
			e->st.destage_partial_ius++;
		e->st.destage_bytes += e->conf.iu_bytes;
	}
	u->iov.iov_base = u->buf;
	u->iov.iov_len = e->conf.iu_bytes;
	/*
	 * FUA: a unit is durable before its MAP or MOVE record is logged. For
	 * GC nothing else holds the data; for destage the cached copy does,
	 * but only while its DATA record is durable, and the map pages a
	 * checkpoint writes may already point at the unit when neither that
	 * record nor a QLC flush has reached the media. (Free on drives with
	 * power-loss protection, which declare no volatile cache.)
	 */
	unsigned fl = (e->qlc->flags & QS_VOL_VOLATILE_CACHE) ? QS_WRITE_FUA : 0;
	e->qlc->ops->write(e->qlc->ctx, u->phys * QS_BLOCK_SIZE, &u->iov, 1, fl, unit_write_cb, u);
}

/* The unit's extents: runs of slots with consecutive LBAs and sources. */
static void unit_extents(struct qs_engine *e, struct unit *u)
{
	u->nx = 0;
	for (uint32_t k = 0; k < u->n;) {
		uint32_t j = k + 1;
		while (j < u->n && u->lba[j] == u->lba[k] + (j - k) &&
		       u->from[j] == u->from[k] + (j - k))
			j++;
		struct plc_ext *x = &u->x[u->nx++];
		x->lba = u->lba[k];
		x->n = j - k;
		x->phys = u->phys + k;
		x->from = u->from[k];
		x->kind = u->gc ? QS_EXT_MOVE : QS_EXT_MAP;
		k = j;
	}
}

static void unit_write_cb(void *arg, int res)
{
	struct unit *u = arg;
	struct qs_engine *e = u->e;
	eng_enter(e);
	if (res < 0) {
		e->st.qlc_errors++;
		unit_failed(e, u, res);
	} else {
		e->dst_fail_streak = 0;
		unit_extents(e, u);
		struct req *r = eng_req_alloc(e);
		if (!r) {
			unit_failed(e, u, -ENOMEM);
		} else {
			r->type = REQ_INTERNAL;
			r->owner = e;
			r->cb = unit_logged;
			r->arg = u;
			r->px = u->x;
			r->px_n = u->nx;
			r->pending = 1; /* the wait for the append */
			/* Header-only: it may use the log's reserve, and it is what
			 * lets the log's tail move. */
			eng_space_wait(e, r);
			eng_space_kick(e);
		}
	}
	dst_kick(e);
	eng_leave_deliver(e);
}

/* The unit's MAP or MOVE records are in the log (and applied) or failed. */
static void unit_logged(void *arg, int res)
{
	struct unit *u = arg;
	struct qs_engine *e = u->e;
	if (res < 0) {
		unit_failed(e, u, res);
	} else {
		unit_release(e, u);
	}
	eng_enter(e);
	plc_kick(e);
	dst_kick(e);
	ckpt_kick(e, false);
	eng_check_drain(e);
	eng_leave_deliver(e);
}

/* ---- GC ------------------------------------------------------------------------ */

/* The full band GC should empty next, PLC_NONE if none is worth it. */
static uint64_t gc_pick(struct qs_engine *e)
{
	struct plc *p = e->plc;
	uint64_t best = PLC_NONE;
	double best_score = -1;
	/* Short of bands, free the most now: greedy, whatever the policy. */
	bool greedy = e->conf.gc_victim == QS_GC_GREEDY || p->free_n + p->ndrained <= PLC_GC_RESERVE + 1;
	for (uint64_t b = 0; b < p->nbands; b++) {
		const struct band *bd = &p->bands[b];
		if (bd->state != BAND_FULL || bd->inflight || !bd->valid ||
		    bd->valid >= p->band_blocks)
			continue;
		double u = (double)bd->valid / p->band_blocks, score;
		if (greedy) {
			score = 1.0 - u;
		} else {
			/* Rosenblum and Ousterhout's cost-benefit: free space
			 * gained times its age, per block read and written. */
			double age = (double)(p->closes - bd->age) + 1.0;
			score = (1.0 - u) * age / (1.0 + u);
		}
		if (score > best_score) {
			best_score = score;
			best = b;
		}
	}
	return best;
}

/* GC units in flight the free bands call for (0: no GC now). */
static uint32_t gc_target(struct qs_engine *e)
{
	struct plc *p = e->plc;
	uint64_t free = p->free_n + p->ndrained;
	uint64_t spare = p->nbands - (p->lbas + p->band_blocks - 1) / p->band_blocks;
	uint64_t start = spare / 4 > PLC_GC_RESERVE + 2 ? spare / 4 : PLC_GC_RESERVE + 2;
	if (free >= start)
		return 0;
	if (free <= PLC_GC_RESERVE + 1 || e->draining)
		return e->conf.destage_qd;
	return (e->conf.destage_qd + 1) / 2;
}

static void gc_kick(struct qs_engine *e)
{
	struct plc *p = e->plc;
	/* After a failed unit GC pauses with destage (dst_pause). */
	if (e->dst_pause_until && eng_now(e) < e->dst_pause_until)
		return;
	uint32_t target = gc_target(e);
	while (p->gc_active < target) {
		struct unit *u = unit_take(e, true);
		if (!u)
			break;
		p->gc_active++;
		/* A unit is filled across victims: padding the end of each one
		 * would waste what GC is there to gain. */
		while (u->n < e->iu_blocks) {
			if (p->victim == PLC_NONE || p->victim_at >= p->band_blocks) {
				uint64_t v = gc_pick(e);
				if (v == PLC_NONE)
					break;
				p->victim = v;
				p->victim_at = 0;
				p->bands[v].state = BAND_VICTIM;
				p->gc_victims++;
			}
			gc_gather(e, u);
		}
		if (!u->n) {
			u->pending = 0;
			unit_release(e, u);
			break;
		}
		if (--u->pending == 0)
			unit_write(e, u);
	}
}

static void unpark(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (int s = 1; s >= 0; s--) {
		while (p->park_head[s] && band_ready(p, s)) {
			struct unit *u = p->park_head[s];
			p->park_head[s] = u->next;
			if (!p->park_head[s])
				p->park_tail[s] = NULL;
			unit_issue(e, u);
		}
	}
}

/* Closing, or the log has failed: units waiting for a band give up (their
 * blocks stay cached or mapped where they were) so close can finish. */
static void drop_parked(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (int s = 0; s < 2; s++)
		while (p->park_head[s]) {
			struct unit *u = p->park_head[s];
			p->park_head[s] = u->next;
			unit_release(e, u);
		}
	p->park_tail[0] = p->park_tail[1] = NULL;
}

void plc_kick(struct qs_engine *e)
{
	if (!e->plc || !e->ready || e->closed)
		return;
	bands_reclaim(e);
	unpark(e);
	if (e->closing || e->failed)
		drop_parked(e);
	if (!e->closing)
		gc_kick(e);
}

uint64_t plc_next_deadline(const struct qs_engine *e)
{
	return e->plc ? e->plc->flush_retry_ns : 0;
}

bool plc_busy(const struct qs_engine *e)
{
	const struct plc *p = e->plc;
	return p && (p->gc_active || p->mf_active || p->park_head[0] || p->park_head[1]);
}

/* ---- map pages -------------------------------------------------------------- */

static void mf_issue(struct qs_engine *e);

/* Page pg as the map holds it now, sealed (not in timing-only runs). */
static void page_fill(struct qs_engine *e, struct qs_fmt_map_page *b, uint64_t pg)
{
	struct plc *p = e->plc;
	uint64_t first = pg * p->per_page;
	uint32_t n = (uint32_t)(p->lbas - first < p->per_page ? p->lbas - first : p->per_page);
	if (e->no_data)
		return;
	memset(b, 0, sizeof(*b));
	b->magic = QS_FMT_MAP_MAGIC;
	b->version = QS_FMT_VERSION;
	b->width = (uint16_t)p->width;
	b->page = pg;
	b->gen = p->snap_gen;
	b->nentries = n;
	memcpy(b->entries, (const uint8_t *)p->map + first * p->width, (size_t)n * p->width);
	qs_fmt_map_seal(b, e->seed);
}

static void mf_write_cb(void *arg, int res)
{
	struct plc_mfw *w = arg;
	struct qs_engine *e = w->e;
	struct plc *p = e->plc;
	eng_enter(e);
	w->busy = false;
	p->mf_inflight--;
	if (res < 0) {
		e->st.fast_errors++;
		if (!p->mf_result)
			p->mf_result = res;
		/* written again by the next flush */
		if (!bit_get(p->dirty, w->page)) {
			bit_put(p->dirty, w->page, true);
			p->dirty_list[p->ndirty++] = w->page;
		}
	}
	mf_issue(e);
	eng_leave_deliver(e);
}

/* Write page pg, as it was at the snapshot, to the slot that does not hold
 * its newest committed copy. */
static void mf_write(struct qs_engine *e, struct plc_mfw *w, uint64_t pg)
{
	struct plc *p = e->plc;
	w->page = pg;
	w->slot = !bit_get(p->newest, pg);
	w->busy = true;
	if (p->cow[pg]) {
		if (!e->no_data)
			memcpy(w->buf, p->cow[pg], QS_BLOCK_SIZE);
		eng_free(e, p->cow[pg]);
		p->cow[pg] = NULL;
	} else {
		page_fill(e, w->buf, pg);
	}
	bit_put(p->pending, pg, false);
	if (!bit_get(p->written, pg)) {
		bit_put(p->written, pg, true);
		p->written_list[p->nwritten++] = pg;
	}
	w->iov.iov_base = w->buf;
	w->iov.iov_len = QS_BLOCK_SIZE;
	p->mf_inflight++;
	p->map_page_writes++;
	e->fast->ops->write(e->fast->ctx, (p->map_start + 2 * pg + w->slot) * QS_BLOCK_SIZE,
			    &w->iov, 1, 0, mf_write_cb, w);
}

static void mf_issue(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (uint32_t i = 0; i < PLC_MAP_QD && p->mf_next < p->mf_n; i++)
		if (!p->mfw[i].busy)
			mf_write(e, &p->mfw[i], p->mf_list[p->mf_next++]);
	if (p->mf_next == p->mf_n && !p->mf_inflight && p->mf_active) {
		p->mf_active = false;
		/* Written in full: the next superblock may commit it. */
		p->mf_ready = !p->mf_result;
		p->mf_cb(p->mf_arg, p->mf_result);
	}
}

void plc_map_flush(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct plc *p = e->plc;
	/*
	 * Snapshot: the pages changed so far, as of now (every record before
	 * done_seq applied, none after); changes from now on copy a page
	 * still to be written first, and wait for the next flush.
	 */
	memcpy(p->mf_list, p->dirty_list, p->ndirty * sizeof(uint64_t));
	p->mf_n = p->ndirty;
	p->mf_next = 0;
	for (uint64_t i = 0; i < p->ndirty; i++) {
		bit_put(p->dirty, p->dirty_list[i], false);
		bit_put(p->pending, p->dirty_list[i], true);
	}
	p->ndirty = 0;
	p->snap_seq = e->done_seq;
	p->snap_gen = ++p->gen;
	p->mf_result = 0;
	p->mf_ready = false;
	p->mf_cb = cb;
	p->mf_arg = arg;
	p->mf_active = true;
	mf_issue(e);
}

void plc_map_commit_fields(const struct qs_engine *e, struct qs_fmt_sb *sb)
{
	const struct plc *p = e->plc;
	if (p && p->mf_ready) {
		sb->map_seq = p->snap_seq;
		sb->map_gen = p->snap_gen;
	}
}

void plc_map_committed(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (!p || !p->mf_ready)
		return;
	/* The superblock names the new gen: every page written since the last
	 * commit (to the slot that did not hold its committed copy) now holds
	 * its committed copy there. */
	for (uint64_t i = 0; i < p->nwritten; i++) {
		uint64_t pg = p->written_list[i];
		bit_put(p->written, pg, false);
		bit_put(p->newest, pg, !bit_get(p->newest, pg));
	}
	p->nwritten = 0;
	p->mf_ready = false;
}

/* ---- recovery ------------------------------------------------------------------ */

static bool blank(const void *b)
{
	const uint64_t *w = b;
	for (size_t i = 0; i < QS_BLOCK_SIZE / 8; i++)
		if (w[i])
			return false;
	return true;
}

/*
 * Take the newest committed copy of page pg from its two slots: valid, of a
 * gen at or below the superblock's map_gen (a copy of a later gen was
 * written by a checkpoint that never committed it).
 */
static int load_page(struct qs_engine *e, uint64_t pg, const unsigned char *slots)
{
	struct plc *p = e->plc;
	const struct qs_fmt_map_page *c[2] = {(const void *)slots,
					      (const void *)(slots + QS_BLOCK_SIZE)};
	enum qs_fmt_status st[2];
	int best = -1;
	bool stale = false;
	for (int s = 0; s < 2; s++) {
		st[s] = qs_fmt_map_check(c[s], &e->sb, pg);
		if (st[s] == QS_FMT_OK && c[s]->gen > p->gen)
			p->gen = c[s]->gen; /* new gens must pass every one on the device */
		if (st[s] == QS_FMT_OK && c[s]->gen > e->sb.map_gen) {
			stale = true;
			continue;
		}
		if (st[s] == QS_FMT_OK && (best < 0 || c[s]->gen > c[best]->gen))
			best = s;
	}
	/* An uncommitted copy is rewritten by the next flush, before a later
	 * commit could take it for a committed one. */
	if (stale) {
		bit_put(p->dirty, pg, true);
		p->dirty_list[p->ndirty++] = pg;
	}
	if (best < 0) {
		/* Never committed since format: its first slot reads as zeroes
		 * (one torn or uncommitted write cannot spoil both). */
		if (blank(c[0]) || blank(c[1]))
			return 0;
		eng_log(e, QS_LOG_ERR, "recovery: map page %llu: no committed copy (%s, %s)",
			(unsigned long long)pg, qs_fmt_status_str(st[0]), qs_fmt_status_str(st[1]));
		return -EBADMSG;
	}
	const struct qs_fmt_map_page *b = c[best];
	memcpy((uint8_t *)p->map + pg * p->per_page * p->width, b->entries,
	       (size_t)b->nentries * p->width);
	bit_put(p->newest, pg, best);
	return 0;
}

/* ---- region I/O: the map and the clean state, PLC_LOAD_BLOCKS at a time ---- */

static void region_next(struct qs_engine *e);

static uint64_t region_chunk(const struct plc *p)
{
	uint64_t left = p->ld_blocks - p->ld_next;
	return left < PLC_LOAD_BLOCKS ? left : PLC_LOAD_BLOCKS;
}

static void region_end(struct qs_engine *e, int res)
{
	struct plc *p = e->plc;
	eng_free(e, p->ld_buf);
	p->ld_buf = NULL;
	p->ld_done(e, res);
}

static void region_read_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	struct plc *p = e->plc;
	uint64_t n = region_chunk(p);
	p->ld_rd_failed = res < 0;
	if (!res)
		res = p->ld_take(e, p->ld_next, p->ld_buf, n);
	if (res) {
		region_end(e, res);
		return;
	}
	p->ld_next += n;
	region_next(e);
}

static void region_next(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (p->ld_next >= p->ld_blocks) {
		region_end(e, 0);
		return;
	}
	p->ld_iov.iov_base = p->ld_buf;
	p->ld_iov.iov_len = (size_t)(region_chunk(p) * QS_BLOCK_SIZE);
	e->fast->ops->read(e->fast->ctx, (p->ld_start + p->ld_next) * QS_BLOCK_SIZE,
			   &p->ld_iov, 1, region_read_cb, e);
}

/* Read blocks [start, start + blocks) of the fast device in order; take
 * gets each chunk (blk: its first block, relative to start; 0 or -errno to
 * stop), done the end (0, take's error, or the read's -errno). */
static void region_read(struct qs_engine *e, uint64_t start, uint64_t blocks,
			int (*take)(struct qs_engine *, uint64_t, const unsigned char *, uint64_t),
			void (*done)(struct qs_engine *, int))
{
	struct plc *p = e->plc;
	p->ld_start = start;
	p->ld_blocks = blocks;
	p->ld_next = 0;
	p->ld_take = take;
	p->ld_done = done;
	p->ld_rd_failed = false;
	p->ld_buf = eng_alloc(e, PLC_LOAD_BLOCKS * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	if (!p->ld_buf) {
		done(e, -ENOMEM);
		return;
	}
	region_next(e);
}

/* Map region chunk: pairs of slots, page blk / 2 first. */
static int map_take(struct qs_engine *e, uint64_t blk, const unsigned char *buf, uint64_t n)
{
	for (uint64_t i = 0; i < n; i += 2) {
		int rc = load_page(e, (blk + i) / 2, buf + i * QS_BLOCK_SIZE);
		if (rc)
			return rc;
	}
	return 0;
}

static void clean_read(struct qs_engine *e);

static void map_done(struct qs_engine *e, int res)
{
	struct plc *p = e->plc;
	if (p->ld_rd_failed)
		eng_log(e, QS_LOG_ERR, "recovery: map read at page %llu failed: %s",
			(unsigned long long)(p->ld_next / 2), strerror(-res));
	/* The superblock of a clean shutdown says whether it left the
	 * clean state, and only for the map pages at its head. */
	if (!res && (e->sb.flags & QS_SB_CLEAN_STATE) && e->sb.map_seq == e->sb.head_seq) {
		clean_read(e);
		return;
	}
	p->ld_cb(p->ld_arg, res);
}

void plc_load(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct plc *p = e->plc;
	p->ld_cb = cb;
	p->ld_arg = arg;
	region_read(e, p->map_start, 2 * p->map_pages, map_take, map_done);
}

/* ---- clean state: written by a clean close, read by the next open ---------- */

/* Block blk of the clean state, as the engine holds it now, sealed. */
static void clean_fill(struct qs_engine *e, uint64_t blk, unsigned char *b)
{
	struct plc *p = e->plc;
	memset(b, 0, QS_BLOCK_SIZE);
	if (blk == 0) {
		struct qs_fmt_clean *c = (void *)b;
		c->magic = QS_FMT_CLEAN_MAGIC;
		c->version = QS_FMT_VERSION;
		c->size = sizeof(*c);
		c->generation = p->cs_gen;
		c->nbands = p->nbands;
		c->closes = p->closes;
		c->mapped = p->mapped;
		for (int s = 0; s < 2; s++) {
			c->open[s] = p->open[s];
			c->wp[s] = p->open[s] == PLC_NONE ? 0 : (uint32_t)p->wp[s];
		}
		qs_fmt_clean_seal(c, e->seed);
		return;
	}
	struct qs_fmt_map_page *pg = (void *)b;
	pg->version = QS_FMT_VERSION;
	pg->gen = p->cs_gen;
	if (blk <= p->cs_band_pages) {
		uint64_t per = qs_fmt_band_per_page(), first = (blk - 1) * per;
		pg->magic = QS_FMT_BAND_MAGIC;
		pg->width = QS_FMT_BAND_ENTRY;
		pg->page = blk - 1;
		pg->nentries = (uint32_t)(p->nbands - first < per ? p->nbands - first : per);
		for (uint32_t i = 0; i < pg->nentries; i++) {
			const struct band *bd = &p->bands[first + i];
			uint64_t since = bd->valid && p->closes > bd->age ? p->closes - bd->age : 0;
			uint64_t v = bd->valid | (since < UINT32_MAX ? since : UINT32_MAX) << 32;
			memcpy(pg->entries + (size_t)i * QS_FMT_BAND_ENTRY, &v, sizeof(v));
		}
	} else {
		uint64_t first = (blk - 1 - p->cs_band_pages) * p->per_page;
		pg->magic = QS_FMT_REV_MAGIC;
		pg->width = (uint16_t)p->width;
		pg->page = blk - 1 - p->cs_band_pages;
		pg->nentries = (uint32_t)(p->phys - first < p->per_page ? p->phys - first
									: p->per_page);
		memcpy(pg->entries, (const uint8_t *)p->rev + first * p->width,
		       (size_t)pg->nentries * p->width);
	}
	qs_fmt_map_seal(pg, e->seed);
}

static void clean_write_next(struct qs_engine *e);

static void clean_write_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	struct plc *p = e->plc;
	eng_enter(e);
	if (res < 0) {
		e->st.fast_errors++;
		eng_free(e, p->ld_buf);
		p->ld_buf = NULL;
		p->ld_cb(p->ld_arg, res);
	} else {
		p->ld_next += region_chunk(p);
		clean_write_next(e);
	}
	eng_leave_deliver(e);
}

static void clean_write_next(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (p->ld_next >= p->ld_blocks) {
		eng_free(e, p->ld_buf);
		p->ld_buf = NULL;
		p->cs_written = true;
		p->ld_cb(p->ld_arg, 0);
		return;
	}
	uint64_t n = region_chunk(p);
	for (uint64_t i = 0; i < n; i++)
		clean_fill(e, p->ld_next + i, p->ld_buf + i * QS_BLOCK_SIZE);
	p->ld_iov.iov_base = p->ld_buf;
	p->ld_iov.iov_len = (size_t)(n * QS_BLOCK_SIZE);
	e->fast->ops->write(e->fast->ctx, (p->ld_start + p->ld_next) * QS_BLOCK_SIZE, &p->ld_iov,
			    1, 0, clean_write_cb, e);
}

void plc_clean_write(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct plc *p = e->plc;
	p->cs_written = false;
	/* Timing-only runs keep no contents to write; nothing would read them. */
	if (e->no_data) {
		cb(arg, 0);
		return;
	}
	p->ld_cb = cb;
	p->ld_arg = arg;
	/* For the superblock that follows: the close writes no other first. */
	p->cs_gen = e->sb.generation + 1;
	p->ld_start = p->cs_start;
	p->ld_blocks = p->cs_blocks;
	p->ld_next = 0;
	p->ld_buf = eng_alloc(e, PLC_LOAD_BLOCKS * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	if (!p->ld_buf) {
		cb(arg, -ENOMEM);
		return;
	}
	clean_write_next(e);
}

void plc_clean_commit_fields(const struct qs_engine *e, struct qs_fmt_sb *sb)
{
	const struct plc *p = e->plc;
	/* The map pages must be the map at the head: recovery then changes
	 * nothing the clean state describes. */
	if (p && p->cs_written && p->cs_gen == sb->generation && sb->map_seq == sb->head_seq)
		sb->flags |= QS_SB_CLEAN_STATE;
}

static int clean_bad(struct qs_engine *e, const char *what, uint64_t page,
		     enum qs_fmt_status st)
{
	eng_log(e, QS_LOG_WARN, "recovery: clean state %s %llu: %s; rebuilding the reverse "
		"map from the map instead", what, (unsigned long long)page, qs_fmt_status_str(st));
	return -EBADMSG;
}

/* Clean state chunk: the header, then band pages into the bands, then
 * reverse-map pages into the reverse map. */
static int clean_take(struct qs_engine *e, uint64_t blk, const unsigned char *buf, uint64_t n)
{
	struct plc *p = e->plc;
	for (uint64_t i = 0; i < n; i++, blk++) {
		const unsigned char *b = buf + i * QS_BLOCK_SIZE;
		const struct qs_fmt_map_page *pg = (const void *)b;
		enum qs_fmt_status st;
		if (blk == 0) {
			memcpy(&p->cs, b, sizeof(p->cs));
			if ((st = qs_fmt_clean_check(&p->cs, &e->sb)) != QS_FMT_OK)
				return clean_bad(e, "header at block", p->cs_start, st);
		} else if (blk <= p->cs_band_pages) {
			if ((st = qs_fmt_band_page_check(pg, &e->sb, &p->cs, blk - 1)) != QS_FMT_OK)
				return clean_bad(e, "band page", blk - 1, st);
			uint64_t first = (blk - 1) * qs_fmt_band_per_page();
			for (uint32_t k = 0; k < pg->nentries; k++) {
				uint64_t v;
				memcpy(&v, pg->entries + (size_t)k * QS_FMT_BAND_ENTRY, sizeof(v));
				p->bands[first + k].valid = (uint32_t)v;
				p->bands[first + k].age = p->cs.closes - (v >> 32);
			}
		} else {
			uint64_t pgno = blk - 1 - p->cs_band_pages;
			if ((st = qs_fmt_rev_page_check(pg, &e->sb, &p->cs, pgno)) != QS_FMT_OK)
				return clean_bad(e, "reverse-map page", pgno, st);
			memcpy((uint8_t *)p->rev + pgno * p->per_page * p->width, pg->entries,
			       (size_t)pg->nentries * p->width);
		}
	}
	return 0;
}

static void clean_done(struct qs_engine *e, int res)
{
	struct plc *p = e->plc;
	uint64_t valid = 0;
	for (uint64_t b = 0; !res && b < p->nbands; b++)
		valid += p->bands[b].valid;
	if (!res && valid != p->cs.mapped) {
		eng_log(e, QS_LOG_WARN, "recovery: clean state: bands hold %llu valid blocks, the "
			"header says %llu mapped; rebuilding the reverse map from the map instead",
			(unsigned long long)valid, (unsigned long long)p->cs.mapped);
		res = -EBADMSG;
	}
	if (p->ld_rd_failed || res == -ENOMEM)
		eng_log(e, QS_LOG_WARN, "recovery: clean state read at block %llu failed: %s; "
			"rebuilding the reverse map from the map instead",
			(unsigned long long)(p->cs_start + p->ld_next), strerror(-res));
	p->cs_loaded = !res;
	if (res) {
		/* What was taken goes: the rebuild starts from nothing. */
		memset(p->rev, 0xff, (size_t)p->phys * p->width);
		memset(p->bands, 0, p->nbands * sizeof(struct band));
	}
	/* The clean state only saves the rebuild's time: without it the open
	 * goes on and rebuilds. */
	p->ld_cb(p->ld_arg, 0);
}

static void clean_read(struct qs_engine *e)
{
	struct plc *p = e->plc;
	region_read(e, p->cs_start, p->cs_blocks, clean_take, clean_done);
}

/* First IU of band b past its last mapped block (band_blocks: none left). */
static uint32_t band_top(const struct qs_engine *e, uint64_t b)
{
	const struct plc *p = e->plc;
	uint64_t base = b * p->band_blocks;
	uint32_t top = p->band_blocks;
	while (top && tbl_get(p, p->rev, base + top - 1) == PLC_NONE)
		top--;
	return (top + e->iu_blocks - 1) / e->iu_blocks * e->iu_blocks;
}

/*
 * Reopen, as the streams' open bands, the two bands with the most room
 * after their last mapped block (GC's first: it is what frees bands).
 * Write pointers are not stored, so the bands open at the stop are not
 * known; but the blocks after a band's last mapped one hold nothing the
 * recovered map points at, and that map is durable (recovery flushed the
 * log it was built from), so writing them again is safe. Taking those
 * bands as full instead lost their room at every restart: after a few,
 * GC found no band to write into and the engine stopped for good.
 */
static void rebuild_resume(struct qs_engine *e)
{
	struct plc *p = e->plc;
	uint64_t pick[2] = {PLC_NONE, PLC_NONE}; /* most room first */
	uint32_t top[2] = {p->band_blocks, p->band_blocks};
	for (uint64_t b = 0; b < p->nbands; b++) {
		if (p->bands[b].state != BAND_FULL)
			continue;
		uint32_t t = band_top(e, b);
		if (t < top[0]) {
			pick[1] = pick[0], top[1] = top[0];
			pick[0] = b, top[0] = t;
		} else if (t < top[1]) {
			pick[1] = b, top[1] = t;
		}
	}
	for (int k = 0; k < 2 && pick[k] != PLC_NONE; k++) {
		int s = 1 - k;
		p->bands[pick[k]].state = BAND_OPEN;
		p->open[s] = pick[k];
		p->wp[s] = top[k];
	}
}

/* Prefetch distance of the reverse-map fill, in client blocks: enough to
 * cover a cache miss at the rate the loop runs. */
#define REBUILD_AHEAD 32u

/*
 * The reverse map from the map, in client block order, for entries of
 * width w (a constant where it is called). Its stores land at random (a
 * block's place says nothing of its LBA), so the store a few blocks ahead
 * is prefetched: at 6e9 client blocks (30.72 TB) this loop is most of what
 * a clean open costs. Returns the first client block whose QLC block is
 * mapped twice, or lbas.
 */
static inline __attribute__((always_inline)) uint64_t rebuild_rev_w(struct plc *p, uint32_t w)
{
	uint64_t n = p->lbas, mapped = 0, lba;
	for (lba = 0; lba < n; lba++) {
		if (lba + REBUILD_AHEAD < n) {
			uint64_t ah = tbl_get_w(p->map, lba + REBUILD_AHEAD, w);
			if (ah != PLC_NONE)
				__builtin_prefetch((const uint8_t *)p->rev + ah * w, 1);
		}
		uint64_t ph = tbl_get_w(p->map, lba, w);
		if (ph == PLC_NONE)
			continue;
		if (tbl_get_w(p->rev, ph, w) != PLC_NONE)
			break;
		tbl_set_w(p->rev, ph, lba, w);
		mapped++;
	}
	p->mapped = mapped;
	return lba;
}

static int rebuild_rev(struct qs_engine *e)
{
	struct plc *p = e->plc;
	uint64_t lba = p->width == 4 ? rebuild_rev_w(p, 4) : rebuild_rev_w(p, 8);
	if (lba == p->lbas)
		return 0;
	uint64_t ph = tbl_get(p, p->map, lba);
	eng_log(e, QS_LOG_ERR, "recovery: QLC block %llu mapped twice (LBAs %llu, %llu)",
		(unsigned long long)ph, (unsigned long long)tbl_get(p, p->rev, ph),
		(unsigned long long)lba);
	return -EBADMSG;
}

/* Valid blocks per band: a sequential pass over the reverse map (which,
 * for each block, is set exactly when the map points at it). */
static void rebuild_valid(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (uint64_t b = 0; b < p->nbands; b++) {
		uint64_t base = b * p->band_blocks;
		uint32_t valid = 0;
		if (p->width == 4) {
			const uint32_t *r = (const uint32_t *)p->rev + base;
			for (uint32_t i = 0; i < p->band_blocks; i++)
				valid += r[i] != UINT32_MAX;
		} else {
			const uint64_t *r = (const uint64_t *)p->rev + base;
			for (uint32_t i = 0; i < p->band_blocks; i++)
				valid += r[i] != PLC_NONE;
		}
		p->bands[b].valid = valid;
	}
}

/*
 * The clean state was read: bands and reverse map are as the clean close
 * left them (bands[].valid and age set by clean_take), and so are the
 * streams' open bands and write pointers. Every band without a valid block
 * is free: the close made every record durable.
 */
static void clean_resume(struct qs_engine *e)
{
	struct plc *p = e->plc;
	p->mapped = p->cs.mapped;
	p->closes = p->cs.closes;
	p->free_n = p->free_head = 0;
	for (uint64_t b = 0; b < p->nbands; b++) {
		struct band *bd = &p->bands[b];
		bool open = b == p->cs.open[0] || b == p->cs.open[1];
		bd->state = open ? BAND_OPEN : bd->valid ? BAND_FULL : BAND_FREE;
		if (bd->state == BAND_FREE)
			p->freeq[p->free_n++] = b;
	}
	for (int s = 0; s < 2; s++) {
		p->open[s] = p->cs.open[s] == UINT64_MAX ? PLC_NONE : p->cs.open[s];
		p->wp[s] = p->cs.wp[s];
	}
}

int plc_rebuild(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (p->cs_loaded) {
		clean_resume(e);
		return 0;
	}
	p->mapped = 0;
	for (uint64_t b = 0; b < p->nbands; b++)
		memset(&p->bands[b], 0, sizeof(p->bands[b]));
	int rc = rebuild_rev(e);
	if (rc)
		return rc;
	rebuild_valid(e);
	p->free_n = p->free_head = 0;
	for (uint64_t b = 0; b < p->nbands; b++) {
		struct band *bd = &p->bands[b];
		if (bd->valid) {
			bd->state = BAND_FULL;
			bd->age = 0;
		} else {
			bd->state = BAND_FREE;
			p->freeq[p->free_n++] = b;
		}
	}
	rebuild_resume(e);
	return 0;
}

void plc_stats(const struct qs_engine *e, struct qs_engine_stats *s)
{
	const struct plc *p = e->plc;
	s->placement = QS_PLACE_LOG;
	s->op_pct = e->conf.op_pct;
	s->bands = p->nbands;
	s->bands_free = p->free_n;
	s->bands_open = (p->open[0] != PLC_NONE) + (p->open[1] != PLC_NONE);
	s->bands_full = p->nbands - p->free_n - s->bands_open;
	s->band_bytes = (uint64_t)p->band_blocks * QS_BLOCK_SIZE;
	s->gc_victims = p->gc_victims;
	s->gc_read_bytes = p->gc_read_bytes;
	s->gc_write_bytes = p->gc_write_bytes;
	s->gc_moved_blocks = p->gc_moved;
	s->map_bytes = (p->lbas + p->phys) * p->width;
	s->map_page_writes = p->map_page_writes;
	s->mapped_blocks = p->mapped;
	s->clean_state = p->cs_loaded;
}
