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
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

/* ---- map and valid bitmap ----------------------------------------------- */

/* Entry i of a table of width w (4, 5 or 8; 5: little-endian 40 bits):
 * called with a constant w, the width test disappears from the loops that
 * run over the whole map. */
static inline uint64_t tbl_get_w(const void *t, uint64_t i, uint32_t w)
{
	if (w == 4) {
		uint32_t v = ((const uint32_t *)t)[i];
		return v == UINT32_MAX ? PLC_NONE : v;
	}
	if (w == 5) {
		uint64_t v = 0;
		memcpy(&v, (const uint8_t *)t + i * 5, 5);
		return v == QS_FMT_MAP_NONE5 ? PLC_NONE : v;
	}
	uint64_t v; /* a page's entries are not 8-byte aligned (format.h) */
	memcpy(&v, (const uint8_t *)t + i * 8, 8);
	return v;
}

static inline void tbl_set_w(void *t, uint64_t i, uint64_t v, uint32_t w)
{
	if (w == 4) {
		((uint32_t *)t)[i] = v == PLC_NONE ? UINT32_MAX : (uint32_t)v;
	} else if (w == 5) {
		uint64_t x = v == PLC_NONE ? QS_FMT_MAP_NONE5 : v;
		memcpy((uint8_t *)t + i * 5, &x, 5);
	} else {
		memcpy((uint8_t *)t + i * 8, &v, 8);
	}
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

/* Client block lba's entry, its map page in DRAM (mpc_get said so). */
static inline uint64_t map_get(struct plc *p, uint64_t lba)
{
	return tbl_get_w(mpc_entries(p, lba / p->per_page), lba % p->per_page, p->width);
}

static inline void map_put(struct plc *p, uint64_t lba, uint64_t v)
{
	tbl_set_w(mpc_entries(p, lba / p->per_page), lba % p->per_page, v, p->width);
}

/*
 * lba's entry is about to change: its page (pinned, or recovery's) becomes
 * dirty and joins the next map flush. A page the running flush has not
 * written yet was copied when it was pinned (mpc_pin), so that the flush
 * writes the map exactly as it was at its snapshot.
 */
static void page_touch(struct qs_engine *e, uint64_t lba)
{
	struct plc *p = e->plc;
	uint64_t pg = lba / p->per_page;
	uint32_t f = p->mpc.pg_frame[pg];
	struct mpc_frame *x = &p->mpc.fr[f];
	if (x->pending && x->cow == MPC_NONE) {
		/* Cannot happen (changes come from pinned pages, pinned ones
		 * are copied); if it did, this flush cannot be exact: fail it. */
		p->mf_result = -EIO;
	}
	if (x->dirty)
		return;
	mpc_dirty(e, pg);
	p->dirty_list[p->ndirty++] = pg;
}

/* ---- kept map updates --------------------------------------------------- */

/*
 * A kept change's flag: the value its page holds for the LBA still has its
 * valid bit. Set when a change is kept without the page in DRAM, so that
 * the value it replaced was not known; cleared when the page takes the
 * change (its value then loses the bit) or when GC meets that block and
 * finds it is not the LBA's kept value (pend_stale). So for an LBA, a set
 * valid bit names its value (kept, else the page's), or the page's value
 * while a kept change has this flag.
 */
#define PEND_STALE 1u

/* map_change's old: the value being replaced is not known. */
#define PLC_UNKNOWN (PLC_NONE - 1)

static uint32_t pend_cap(uint32_t per_page, uint64_t map_pages)
{
	uint64_t cap = map_pages * per_page;
	return cap < QS_PEND_NONE ? (uint32_t)cap : QS_PEND_NONE - 1;
}

uint64_t plc_pend_plan(uint32_t per_page, uint64_t map_pages, uint32_t width)
{
	if (!per_page || !map_pages)
		return 0;
	return qs_pend_plan(pend_cap(per_page, map_pages), map_pages, qs_fmt_map_per_page(width), 1);
}

static bool page_ready(const struct plc *p, uint64_t pg)
{
	uint32_t f = p->mpc.pg_frame[pg];
	return f != MPC_NONE && p->mpc.fr[f].state == MPC_READY;
}

/*
 * A change to page pg goes to the store, not the page: the page is not
 * pinned in DRAM (only a pinned page may change: a running map flush has
 * copied it).
 */
static bool pend_keeps(const struct plc *p, uint64_t pg)
{
	if (!p->pend.cap)
		return false;
	return !page_ready(p, pg) || !p->mpc.fr[p->mpc.pg_frame[pg]].pins;
}

/* lba's kept change, if any. */
static struct qs_pend_ent *pend_find(const struct plc *p, uint64_t lba)
{
	struct qs_pend_ent *x;
	return p->pend.cap && qs_pend_get(&p->pend, lba, &x) ? x : NULL;
}

/* lba's value: its kept change's, else its page's (in DRAM: the caller
 * made sure, or the timing-only table). */
static uint64_t map_lookup(struct plc *p, uint64_t lba)
{
	const struct qs_pend_ent *x = pend_find(p, lba);
	return x ? x->val : map_get(p, lba);
}

/*
 * Records reserve room in the store for the changes of pages they do not
 * pin (plc_rec_pin): pages not in DRAM, while the store has room for them
 * beside every other record's. true: kept, n entries reserved.
 */
static bool pend_reserve(struct plc *p, struct rec *rec, uint64_t pg, uint32_t n)
{
	if (!p->pend.cap || p->mpc.pg_frame[pg] != MPC_NONE || rec->nkp == PLC_REC_PAGES ||
	    (uint64_t)p->pend.count + p->pend_reserved + n > p->pend.cap)
		return false;
	rec->kpages[rec->nkp++] = pg;
	rec->kept += n;
	p->pend_reserved += n;
	return true;
}

static void band_drained(struct qs_engine *e, uint64_t b);

/* QLC block ph is no longer any LBA's: its valid bit and its band's count go. */
static void valid_drop(struct qs_engine *e, uint64_t ph)
{
	struct plc *p = e->plc;
	struct band *bd = &p->bands[band_of(p, ph)];
	plc_bit_put(p->valid, ph, false);
	p->mapped--;
	bd->valid--;
	bd->drop_seq = p->apply_seq;
	if (!bd->valid)
		band_drained(e, band_of(p, ph));
}

static void valid_add(struct plc *p, uint64_t ph)
{
	plc_bit_put(p->valid, ph, true);
	p->mapped++;
	p->bands[band_of(p, ph)].valid++;
}

/*
 * Keep lba -> phys (its page not pinned). The value it replaces loses its
 * valid bit now where it is known (old, or a kept change's, or the page's
 * while the page is in DRAM); else the page's value keeps it (PEND_STALE).
 */
static void pend_keep(struct qs_engine *e, uint64_t lba, uint64_t old, uint64_t phys)
{
	struct plc *p = e->plc;
	struct qs_pend_ent *x = pend_find(p, lba);
	uint8_t flags = x ? x->flags : 0;
	if (x)
		old = x->val;
	else if (old == PLC_UNKNOWN && page_ready(p, lba / p->per_page))
		old = map_get(p, lba);
	if (old == PLC_UNKNOWN)
		flags = PEND_STALE;
	if (qs_pend_put(&p->pend, lba, phys, flags, 0)) {
		/* Cannot happen: the records reserved room for every change
		 * of a page they did not pin. Were it to, the change is lost:
		 * counted, and qs_engine_check reports it. */
		p->pend_overflow++;
		return;
	}
	p->pend_kept++;
	if (old != PLC_UNKNOWN && old != PLC_NONE)
		valid_drop(e, old);
}

/* A kept change goes into its page (in DRAM, dirty): the page's value
 * loses its valid bit if the change was kept without knowing it. */
static void pend_merge_one(void *arg, uint64_t lba, const struct qs_pend_ent *x)
{
	struct qs_engine *e = arg;
	struct plc *p = e->plc;
	uint64_t pv = map_get(p, lba);
	if ((x->flags & PEND_STALE) && pv != PLC_NONE)
		valid_drop(e, pv);
	map_put(p, lba, x->val);
}

/* Page pg, pinned (or pinned for this), takes its kept changes. */
static void pend_merge(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	page_touch(e, pg * p->per_page);
	p->pend_applied += qs_pend_page_take(&p->pend, pg, pend_merge_one, e);
}

/*
 * GC met QLC block ph, written for lba, with its valid bit set, and lba's
 * kept change says another value: ph is the page's old value (PEND_STALE),
 * garbage now. Its bit goes and the change no longer owes it. true: so.
 */
static bool pend_stale(struct qs_engine *e, uint64_t lba, uint64_t ph)
{
	struct qs_pend_ent *x = pend_find(e->plc, lba);
	if (!x || !(x->flags & PEND_STALE) || x->val == ph)
		return false;
	x->flags &= (uint8_t)~PEND_STALE;
	valid_drop(e, ph);
	e->plc->pend_stale_gc++;
	return true;
}

/* Page pg, in DRAM, takes its kept changes: it is dirty, and the next
 * checkpoint writes it. false: no COW frame now, try again. */
static bool pend_apply_page(struct qs_engine *e, uint64_t pg)
{
	if (mpc_pin(e, pg))
		return false;
	pend_merge(e, pg);
	mpc_unpin(e, pg);
	return true;
}

/*
 * Past 7/8 of the store, read the pages holding the most changes and apply
 * them there (greedy: m changes a page apply about 2m + 1 a read); finish
 * those whose reads are done. A page being read is held in the store (the
 * next fullest is another; its changes are still found). Called as
 * records retire and pages arrive.
 */
static void pend_service(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (!p->pend.cap)
		return;
	for (uint32_t i = 0; i < p->nmerge;) {
		uint64_t pg = p->merge_pg[i];
		bool done = !qs_pend_page_held(&p->pend, pg); /* a record applied it */
		if (!done && !page_ready(p, pg)) {
			if (p->mpc.pg_frame[pg] == MPC_NONE)
				(void)mpc_get(e, pg); /* evicted before it was applied, or no frame yet */
		} else if (!done) {
			done = pend_apply_page(e, pg);
		}
		if (done)
			p->merge_pg[i] = p->merge_pg[--p->nmerge];
		else
			i++;
	}
	while (p->nmerge < PLC_MERGE_MAX &&
	       (uint64_t)qs_pend_unheld_count(&p->pend) + p->pend_reserved > p->pend.cap / 8 * 7) {
		uint64_t pg;
		if (!qs_pend_fullest(&p->pend, &pg))
			break;
		if (mpc_get(e, pg) > 0 && pend_apply_page(e, pg))
			continue;
		qs_pend_page_hold(&p->pend, pg);
		p->pend_page_reads++;
		p->merge_pg[p->nmerge++] = pg;
	}
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
 * Point lba at phys (or PLC_NONE), replacing old (PLC_UNKNOWN: look it
 * up). At runtime the valid bitmap follows (a bit for every QLC block the
 * map points at, so GC needs no map lookup to tell what is valid), and so
 * do the bands' valid counts; recovery builds both from the map it ends
 * with (plc_valid_read). A page not pinned keeps the change in the store.
 */
static void map_change(struct qs_engine *e, uint64_t lba, uint64_t old, uint64_t phys,
		       bool runtime)
{
	struct plc *p = e->plc;
	uint64_t pg = lba / p->per_page;
	if (runtime && pend_keeps(p, pg)) {
		pend_keep(e, lba, old, phys);
	} else {
		if (p->pend.cap && qs_pend_page_count(&p->pend, pg))
			pend_merge(e, pg); /* its kept changes first: they are newer */
		page_touch(e, lba);
		old = map_get(p, lba);
		map_put(p, lba, phys);
		if (!runtime)
			return; /* recovery: the bitmap and bands come from the final map */
		if (old != PLC_NONE)
			valid_drop(e, old);
	}
	if (phys != PLC_NONE)
		valid_add(p, phys);
}

static void map_set(struct qs_engine *e, uint64_t lba, uint64_t phys, bool runtime)
{
	map_change(e, lba, PLC_UNKNOWN, phys, runtime);
}

/*
 * Does GC's move of lba from QLC block from apply: is from still lba's
 * value? Without lba's page in DRAM and no kept change, from's valid bit
 * says: a set bit then names lba's only value. A kept change that names
 * another value makes from garbage if it was the page's old one.
 */
static bool move_applies(struct qs_engine *e, uint64_t lba, uint64_t from, bool runtime)
{
	struct plc *p = e->plc;
	const struct qs_pend_ent *x = pend_find(p, lba);
	if (x) {
		if (x->val == from)
			return true;
		if (runtime && plc_bit(p->valid, from))
			(void)pend_stale(e, lba, from);
		return false;
	}
	if (runtime && pend_keeps(p, lba / p->per_page)) {
		bool valid = plc_bit(p->valid, from);
		/* timing only, the whole map at hand: qs_engine_check reports
		 * a bit that did not say what the page holds */
		p->move_wrong += p->map && valid != (map_get(p, lba) == from);
		return valid;
	}
	return map_get(p, lba) == from;
}

/*
 * In recovery (runtime false): does lba's page (in DRAM) already hold the
 * record being applied? A page written since map_seq holds the records before its own
 * seq, and applying one of those again would act on a later state than
 * the record saw: a MOVE would find the block back at its old place in a
 * reused band and move it again.
 */
static bool page_holds(const struct plc *p, uint64_t lba, bool runtime)
{
	if (runtime || !p->mpc.data)
		return false; /* runtime, or timing only: no page is ahead of map_seq */
	const struct qs_fmt_map_page *b = &p->mpc.data[p->mpc.pg_frame[lba / p->per_page]];
	return p->apply_seq < b->seq;
}

/* Does a TRIM change lba: is it mapped, or (its page not in DRAM) may it be? */
static bool trim_applies(struct qs_engine *e, uint64_t lba, bool runtime)
{
	struct plc *p = e->plc;
	const struct qs_pend_ent *x = pend_find(p, lba);
	if (x)
		return x->val != PLC_NONE;
	if (runtime && pend_keeps(p, lba / p->per_page) && !page_ready(p, lba / p->per_page))
		return true;
	return map_get(p, lba) != PLC_NONE;
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
			if (page_holds(p, lba, runtime))
				continue;
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
			if (!page_holds(p, x->lba + i, runtime) &&
			    move_applies(e, x->lba + i, py->from + i, runtime)) {
				map_change(e, x->lba + i, py->from + i, py->phys + i, runtime);
				p->gc_moved += runtime;
			}
		break;
	case QS_EXT_TRIM:
		for (uint64_t i = 0; i < x->nblocks; i++)
			if (!page_holds(p, x->lba + i, runtime) && trim_applies(e, x->lba + i, runtime))
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
	uint32_t width = qs_engine_conf_map_width(&e->conf, phys);
	uint64_t pages = qs_fmt_map_pages(e->conf.qlc_size / QS_BLOCK_SIZE, width);
	uint64_t after = qs_fmt_plc_blocks(e->conf.qlc_size / QS_BLOCK_SIZE, phys,
					   (uint32_t)band_blocks, e->iu_blocks, width);
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
	size_t n = (size_t)((bits + 63) / 64 * 8); /* whole words: plc_map_committed */
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

/*
 * P2L frames, per stream: two for each of its destage_qd units (a unit's
 * entries lie in two pages at most, and the units in flight need not be
 * neighbours: one waiting for log space holds its pages while later ones
 * come and go), the page the stream is in, and one spare. So a unit always
 * finds its frames; were none free it would fail and be retried.
 */
uint32_t plc_p2l_frames(uint32_t destage_qd)
{
	return 2 * (2 * destage_qd + 2);
}

static int p2l_alloc(struct qs_engine *e)
{
	struct plc *p = e->plc;
	p->npfr = plc_p2l_frames(e->conf.destage_qd);
	p->pfr = eng_alloc(e, p->npfr * sizeof(*p->pfr), 64);
	p->vic_buf = eng_alloc(e, 2 * (size_t)p->p2l_band_pages * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	p->vic_sel = eng_alloc(e, p->p2l_band_pages, 16);
	if (!p->pfr || !p->vic_buf || !p->vic_sel)
		return -ENOMEM;
	memset(p->pfr, 0, p->npfr * sizeof(*p->pfr));
	for (uint32_t i = 0; i < p->npfr; i++) {
		struct p2l_frame *f = &p->pfr[i];
		f->e = e;
		f->page = PLC_NONE;
		f->data = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		f->wbuf = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		f->rbuf = eng_alloc(e, 2 * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		if (!f->data || !f->wbuf || !f->rbuf)
			return -ENOMEM;
	}
	return 0;
}

static void p2l_free(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (uint32_t i = 0; p->pfr && i < p->npfr; i++) {
		eng_free(e, p->pfr[i].data);
		eng_free(e, p->pfr[i].wbuf);
		eng_free(e, p->pfr[i].rbuf);
	}
	eng_free(e, p->pfr);
	eng_free(e, p->vic_buf);
	eng_free(e, p->vic_sel);
}

int plc_init(struct qs_engine *e)
{
	const struct qs_fmt_sb *sb = &e->sb;
	/* Recovery does not replay kept map changes yet: timing only. */
	if (e->conf.map_keep_per_page && !e->no_data) {
		eng_log(e, QS_LOG_ERR, "engine.map_keep_per_page %u: only for timing-only runs "
			"(the bench) until recovery replays kept map changes; set 0",
			e->conf.map_keep_per_page);
		return -EINVAL;
	}
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
	p->p2l_cover = qs_fmt_p2l_cover(p->width, e->iu_blocks);
	p->p2l_band_pages = qs_fmt_p2l_band_pages(p->band_blocks, p->p2l_cover);
	p->p2l_start = p->map_start + 2 * p->map_pages;
	p->p2l_pages = p->nbands * p->p2l_band_pages;
	p->p2l_gen = sb->epoch << 40;
	p->cs_start = p->p2l_start + 2 * p->p2l_pages;
	p->cs_band_pages = qs_fmt_band_pages(p->nbands);
	p->cs_blocks = qs_fmt_clean_blocks(p->phys, p->band_blocks);
	p->open[0] = p->open[1] = PLC_NONE;
	p->victim = PLC_NONE;
	p->bands = eng_alloc(e, p->nbands * sizeof(struct band), 64);
	p->freeq = eng_alloc(e, p->nbands * sizeof(uint64_t), 64);
	p->drained = eng_alloc(e, p->nbands * sizeof(uint64_t), 64);
	p->gcu = eng_alloc(e, 2 * e->conf.destage_qd * sizeof(struct unit), 64);
	p->dstu = p->gcu ? p->gcu + e->conf.destage_qd : NULL;
	if (p->gcu) /* zero now: a failed init's plc_fini frees what units hold */
		memset(p->gcu, 0, 2 * e->conf.destage_qd * sizeof(struct unit));
	if (!p->bands || !p->freeq || !p->drained || !p->gcu ||
	    (e->no_data && tbl_alloc(e, &p->map, p->lbas)) ||
	    (e->no_data && tbl_alloc(e, &p->p2l_all, p->phys)) ||
	    bitmap_alloc(e, &p->valid, p->phys) || p2l_alloc(e) ||
	    bitmap_alloc(e, &p->newest, p->map_pages) || bitmap_alloc(e, &p->written, p->map_pages) ||
	    bitmap_alloc(e, &p->stale, p->map_pages))
		return -ENOMEM;
	int rc = mpc_init(e);
	if (rc)
		return rc;
	if (e->conf.map_keep_per_page) {
		rc = qs_pend_init(&p->pend, &e->env, pend_cap(e->conf.map_keep_per_page, p->map_pages),
				  p->map_pages, p->per_page, 1);
		if (rc)
			return rc;
	}
	if (!(p->dirty_list = eng_alloc(e, p->mpc.nframes * sizeof(uint64_t), 64)) ||
	    !(p->mf_list = eng_alloc(e, p->mpc.nframes * sizeof(uint64_t), 64)))
		return -ENOMEM;
	memset(p->bands, 0, p->nbands * sizeof(struct band));
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
	if (e->win_blocks < need) {
		eng_log(e, QS_LOG_ERR,
			"log of %llu blocks in use at most (of %llu; a smaller window comes from "
			"dram_limit) is too small for log placement: it needs at least %llu (5 "
			"segments and room for map records)",
			(unsigned long long)e->win_blocks, (unsigned long long)e->log_blocks,
			(unsigned long long)need);
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
	qs_pend_fini(&p->pend);
	eng_free(e, p->p2l_all);
	eng_free(e, p->valid);
	p2l_free(e);
	eng_free(e, p->newest);
	eng_free(e, p->written);
	eng_free(e, p->stale);
	mpc_fini(e);
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
		uint64_t ph = map_lookup(p, lba + i);
		if (ph == PLC_NONE) {
			if (!e->no_data)
				memset(buf + i * QS_BLOCK_SIZE, 0, QS_BLOCK_SIZE);
			i++;
			continue;
		}
		/* Blocks written together lie together: merge within a band. */
		uint64_t j = i + 1;
		while (j < n && map_lookup(p, lba + j) == ph + (j - i) &&
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

/* ---- waiting for map pages --------------------------------------------- */

/* Map pages [pg0, pg1] in DRAM: 1 all of them, 0 some are coming, -errno
 * one's read failed. Every missing one is asked for, so they come
 * together. */
#define PAGES_HELD 64u /* pages pages_get holds at once; a longer range is rare */

static int pages_get(struct qs_engine *e, uint64_t pg0, uint64_t pg1)
{
	bool held[PAGES_HELD];
	int ready = 1;
	uint64_t pg;
	/* Each page found is held until the rest are looked up: with every
	 * other frame dirty or pinned, the next one's read would evict it. */
	for (pg = pg0; pg <= pg1; pg++) {
		int rc = mpc_get(e, pg);
		bool hold = rc > 0 && pg - pg0 < PAGES_HELD;
		if (pg - pg0 < PAGES_HELD)
			held[pg - pg0] = hold;
		if (hold)
			mpc_hold(e, pg);
		if (rc < 0) {
			ready = rc;
			pg++;
			break;
		}
		if (!rc)
			ready = 0;
	}
	for (uint64_t q = pg0; q < pg && q - pg0 < PAGES_HELD; q++)
		if (held[q - pg0])
			mpc_release(e, q);
	/* Past what could be held, a page may have gone meanwhile. */
	for (uint64_t q = pg0 + PAGES_HELD; ready > 0 && q <= pg1; q++) {
		uint32_t f = e->plc->mpc.pg_frame[q];
		if (f == MPC_NONE || e->plc->mpc.fr[f].state != MPC_READY) {
			e->plc->mpc.want = true;
			ready = 0;
		}
	}
	return ready;
}

static bool read_pinned(const struct req *r, uint64_t pg)
{
	for (uint32_t i = 0; i < r->npg_pins; i++)
		if (r->pg_pins[i] == pg)
			return true;
	return false;
}

/* Read r's map pages: 1 all in DRAM, 0 not yet, -errno. Pages that came
 * are pinned while it waits for the rest (reads of up to REQ_PG_PINS
 * pages, and within the pin cap), or concurrent waiters on a small cache
 * could evict each other's pages for ever. */
static int read_pages(struct qs_engine *e, struct req *r)
{
	struct plc *p = e->plc;
	uint64_t pg0 = r->lba / p->per_page, pg1 = (r->lba + r->nblocks - 1) / p->per_page;
	bool pin = pg1 - pg0 < REQ_PG_PINS;
	for (uint64_t pg = pg0; pin && pg <= pg1; pg++) {
		if (read_pinned(r, pg))
			continue;
		int rc = mpc_get(e, pg);
		if (rc < 0)
			return rc;
		if (rc && p->mpc.pins < p->pin_cap && !mpc_pin(e, pg))
			r->pg_pins[r->npg_pins++] = pg;
	}
	return pages_get(e, pg0, pg1);
}

/* The read ran or failed: its pages may go. */
static void read_unpin(struct qs_engine *e, struct req *r)
{
	for (uint32_t i = 0; i < r->npg_pins; i++)
		mpc_unpin(e, r->pg_pins[i]);
	r->npg_pins = 0;
}

bool plc_read_ready(struct qs_engine *e, struct req *r)
{
	struct plc *p = e->plc;
	r->npg_pins = 0;
	int rc = read_pages(e, r);
	if (rc > 0) {
		read_unpin(e, r);
		return true;
	}
	if (rc < 0) {
		/* The map page could not be read: the data it locates cannot be
		 * either. The next read of the page tries the device again. */
		read_unpin(e, r);
		eng_req_part_done(e, r, rc == -EBADMSG ? -EIO : rc);
		return false;
	}
	r->pg_next = NULL;
	if (p->rd_tail)
		p->rd_tail->pg_next = r;
	else
		p->rd_head = r;
	p->rd_tail = r;
	return false;
}

/* Waiting reads whose pages are all in DRAM now run (or fail). */
static void reads_kick(struct qs_engine *e)
{
	struct plc *p = e->plc;
	struct req **pp = &p->rd_head, *last = NULL;
	while (*pp) {
		struct req *r = *pp;
		int rc = read_pages(e, r);
		if (!rc) {
			last = r;
			pp = &r->pg_next;
			continue;
		}
		*pp = r->pg_next;
		if (!*pp)
			p->rd_tail = last;
		/* The run looks the map up at once: the pins may go first. */
		read_unpin(e, r);
		if (rc > 0)
			eng_read_run(e, r);
		else
			eng_req_part_done(e, r, rc == -EBADMSG ? -EIO : rc);
	}
}

void plc_pages_kick(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (p && p->nmerge && !p->kicking)
		pend_service(e);
	if (!p || !p->mpc.want)
		return;
	if (p->kicking) {
		p->kick_again = true; /* a completion inside the walk below */
		return;
	}
	p->kicking = true;
	p->mpc.relook = true;
	do {
		p->kick_again = false;
		p->mpc.want = p->mpc.want_frame = false;
		reads_kick(e);
		if (e->space_head)
			eng_space_kick(e);
		if (p->scan_waits) {
			p->scan_waits = false;
			rcv_scan_resume(e);
		}
		mpc_errors_release(e);
	} while (p->kick_again);
	p->mpc.relook = false;
	p->kicking = false;
	/* No frame to take: the checkpoint makes dirty pages clean. */
	if (p->mpc.want_frame && e->ready)
		ckpt_kick(e, false);
}

bool plc_map_pressed(const struct qs_engine *e)
{
	const struct plc *p = e->plc;
	return p && p->ndirty && (p->ndirty >= p->dirty_hi || p->mpc.want_frame);
}

uint64_t plc_trim_clip(const struct qs_engine *e, uint64_t lba, uint64_t n)
{
	const struct plc *p = e->plc;
	uint64_t end = (lba / p->per_page + p->rec_pages / 2) * p->per_page;
	return lba + n > end ? end - lba : n;
}

/* Does the acquirer hold pg (its frame's flag: a search of acq_pgs for
 * each of a record's pages was a tenth of the simulation's time)? */
static bool acq_holds(const struct plc *p, uint64_t pg)
{
	uint32_t f = p->mpc.pg_frame[pg];
	return f != MPC_NONE && p->mpc.fr[f].acq;
}

void plc_acq_drop(struct qs_engine *e, struct req *r)
{
	struct plc *p = e->plc;
	if (!p || p->acq != r)
		return;
	for (uint32_t i = 0; i < p->acq_n; i++) {
		p->mpc.fr[p->mpc.pg_frame[p->acq_pgs[i]]].acq = false;
		mpc_release(e, p->acq_pgs[i]);
	}
	p->acq = NULL;
	p->acq_n = p->acq_need = 0;
	p->mpc.gen++;
	p->mpc.want = true; /* the others may read pages now */
}

/* r, the acquirer (or none is): read what is missing of pgs, keep what
 * came. 1 all resident, 0 some are coming, -errno a read failed. */
static int acq_pages(struct qs_engine *e, struct req *r, const uint64_t *pgs, uint32_t np)
{
	struct plc *p = e->plc;
	int ready = 1;
	if (p->acq != r || p->acq_need != np)
		p->mpc.gen++;
	p->acq = r; /* its holds are released by plc_acq_drop(r) */
	p->acq_need = np;
	for (uint32_t k = 0; k < np; k++) {
		if (acq_holds(p, pgs[k]))
			continue;
		int rc = mpc_get(e, pgs[k]);
		if (rc < 0) {
			plc_acq_drop(e, r);
			return rc;
		}
		if (rc) {
			mpc_hold(e, pgs[k]);
			p->mpc.fr[p->mpc.pg_frame[pgs[k]]].acq = true;
			p->acq_pgs[p->acq_n++] = pgs[k];
		} else {
			ready = 0;
		}
	}
	return ready;
}

/* Any other request: go only if every page is already resident (no read,
 * no eviction), and the pins leave the acquirer's need. At 0, *miss is the
 * page that is not (UINT64_MAX: the pins). */
static int peek_pages(struct qs_engine *e, const uint64_t *pgs, uint32_t np, uint64_t *miss)
{
	struct plc *p = e->plc;
	*miss = UINT64_MAX;
	if (p->mpc.pins + np + p->acq_need > p->pin_cap) {
		p->mpc.want = true;
		return 0;
	}
	for (uint32_t k = 0; k < np; k++) {
		int rc = mpc_peek(e, pgs[k]);
		if (!rc)
			*miss = pgs[k];
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* Would r, which waited behind another acquirer, wait again? Exactly when
 * the page it missed is still not in DRAM, or (it waited for pins) nothing
 * changed since: the rest of plc_rec_pin would find the same. */
static bool rec_pin_waits(const struct plc *p, const struct req *r)
{
	if (!p->acq || p->acq == r)
		return false;
	if (r->px_wait_pg) {
		uint32_t f = p->mpc.pg_frame[r->px_wait_pg - 1];
		return f == MPC_NONE || p->mpc.fr[f].state == MPC_LOADING;
	}
	return r->px_wait_gen == p->mpc.gen + 1;
}

/* Is every one of pgs that the acquirer does not hold being read? Then
 * nothing but a read's completion changes what it would find. */
static bool acq_all_loading(const struct plc *p, const uint64_t *pgs, uint32_t np)
{
	for (uint32_t k = 0; k < np; k++) {
		uint32_t f = p->mpc.pg_frame[pgs[k]];
		if ((f == MPC_NONE || p->mpc.fr[f].state != MPC_LOADING) && !acq_holds(p, pgs[k]))
			return false;
	}
	return true;
}

/*
 * A set of map pages: those a record has pinned or kept and those
 * plc_rec_pin found it still needs, so that each extent's pages are told
 * apart in a probe or two (linear searches of the three lists for every
 * page were a sixth of log placement's simulation time). Open addressing,
 * at most half full: a record holds at most PLC_REC_PAGES of each.
 */
#define PGSET_SLOTS (8u * PLC_REC_PAGES)

struct pgset {
	uint32_t mask;
	uint64_t slot[PGSET_SLOTS];
};

static uint32_t pgset_at(const struct pgset *s, uint64_t pg)
{
	uint32_t i = (uint32_t)((pg * 0x9e3779b97f4a7c15ull) >> 32) & s->mask;
	while (s->slot[i] != UINT64_MAX && s->slot[i] != pg)
		i = (i + 1) & s->mask;
	return i;
}

static bool pgset_has(const struct pgset *s, uint64_t pg)
{
	return s->slot[pgset_at(s, pg)] == pg;
}

static void pgset_add(struct pgset *s, uint64_t pg)
{
	s->slot[pgset_at(s, pg)] = pg;
}

/* Holding rec's pins and kept pages, sized for more besides (at most
 * 2 * PLC_REC_PAGES: as many again of each). */
static void pgset_init(struct pgset *s, const struct rec *rec, uint32_t more)
{
	uint32_t n = 16;
	while (n < 2 * (rec->npins + rec->nkp + more))
		n <<= 1;
	s->mask = n - 1;
	memset(s->slot, 0xff, n * sizeof(s->slot[0]));
	for (uint32_t i = 0; i < rec->npins; i++)
		pgset_add(s, rec->pins[i]);
	for (uint32_t i = 0; i < rec->nkp; i++)
		pgset_add(s, rec->kpages[i]);
}

/*
 * Why one acquirer. Destage runs destage_qd units at once, and a unit's
 * extents change up to rec_pages map pages. When every unit read its
 * missing pages at once and let the ones that came go back to the LRU
 * while it waited for the rest, 16 units of 16 pages over 192 frames
 * evicted each other's pages for ever: the VM suite's drain destaged 169
 * IUs in 158 s with 418,013 page reads. So only one request (the
 * acquirer) reads pages for a record, and it keeps each one that came
 * (held: off the LRU) until it has them all and pins them; every other
 * request goes only on pages already resident. Its holds (at most
 * rec_pages) and the pins (at most pin_cap, a quarter of the limit) leave
 * frames for its reads; dirty frames become clean at the checkpoint that
 * a lack of frames asks for.
 */
int plc_rec_pin(struct qs_engine *e, struct req *r, struct rec *rec, const struct plc_ext *x,
		uint32_t n)
{
	struct plc *p = e->plc;
	uint64_t pgs[PLC_REC_PAGES];
	uint32_t np = 0;
	/* A unit that waited behind the acquirer waits again until the
	 * pages or pins change: recounting its pages at every kick was 40%
	 * of log placement's simulation time, all of it to wait again. */
	bool own = x == r->px + r->px_done;
	if (own && (rec_pin_waits(p, r) ||
		    (p->acq == r && r->px_wait_rd == p->mpc.reads_done + 1))) {
		p->mpc.want = true;
		return 0;
	}
	r->px_wait_pg = r->px_wait_gen = r->px_wait_rd = 0;
	/* the distinct pages the extents change, not pinned yet */
	struct pgset seen;
	uint64_t blocks = 0;
	for (uint32_t i = 0; i < n; i++)
		blocks += x[i].n;
	/* an extent of b blocks spans at most b / per_page + 2 pages */
	uint64_t span = 2ull * n + blocks / p->per_page;
	pgset_init(&seen, rec, span < 2 * PLC_REC_PAGES ? (uint32_t)span : 2 * PLC_REC_PAGES);
	for (uint32_t i = 0; i < n; i++)
		for (uint64_t pg = x[i].lba / p->per_page, last = (x[i].lba + x[i].n - 1) / p->per_page;
		     pg <= last; pg++) {
			if (pgset_has(&seen, pg))
				continue;
			if (pend_reserve(p, rec, pg, x[i].n)) {
				pgset_add(&seen, pg);
				continue;
			}
			if (np < PLC_REC_PAGES) {
				pgs[np++] = pg;
				pgset_add(&seen, pg);
			}
		}
	if (!np) {
		plc_acq_drop(e, r);
		return 1;
	}
	/* A unit's records are what the log's reserve counts: the whole unit
	 * goes in one record, a new one if this one has no room for it. */
	if (rec->npins + np > p->rec_pages)
		return rec->npins ? -ENOSPC : -E2BIG;
	int ready;
	if (p->acq && p->acq != r) {
		uint64_t miss;
		ready = peek_pages(e, pgs, np, &miss);
		if (!ready && own) {
			r->px_wait_pg = miss == UINT64_MAX ? 0 : miss + 1;
			r->px_wait_gen = p->mpc.gen + 1;
		}
	} else if (p->mpc.pins + np > p->pin_cap) {
		if (p->acq != r || p->acq_need != np)
			p->mpc.gen++;
		p->acq = r; /* first in line once pins go */
		p->acq_need = np;
		p->mpc.want = true;
		ready = 0;
	} else {
		ready = acq_pages(e, r, pgs, np);
		if (!ready && own && acq_all_loading(p, pgs, np))
			r->px_wait_rd = p->mpc.reads_done + 1;
	}
	if (ready <= 0)
		return ready;
	for (uint32_t i = 0; i < np; i++) {
		if (mpc_pin(e, pgs[i])) {
			/* no COW frame: what was pinned stays with the record,
			 * and the acquirer keeps the rest held */
			return 0;
		}
		rec->pins[rec->npins++] = pgs[i];
	}
	plc_acq_drop(e, r);
	return 1;
}

void plc_rec_unpin(struct qs_engine *e, struct rec *rec)
{
	for (uint32_t i = 0; i < rec->npins; i++)
		mpc_unpin(e, rec->pins[i]);
	rec->npins = 0;
	e->plc->pend_reserved -= rec->kept;
	rec->kept = rec->nkp = 0;
	pend_service(e);
}

int plc_scan_ready(struct qs_engine *e, const struct qs_fmt_rec *h)
{
	struct plc *p = e->plc;
	/* Before map_seq only a TRIM's dropping of cached copies applies. */
	if (h->seq < e->sb.map_seq || (h->flags & QS_REC_VOID))
		return 1;
	int ready = 1;
	for (uint32_t i = 0; i < h->nextents; i++) {
		const struct qs_fmt_extent *x = &h->ext[i];
		if (x->kind != QS_EXT_MAP && x->kind != QS_EXT_MOVE && x->kind != QS_EXT_TRIM)
			continue;
		if (x->nblocks && x->lba + x->nblocks <= p->lbas) {
			int rc = pages_get(e, x->lba / p->per_page,
					   (x->lba + x->nblocks - 1) / p->per_page);
			/* A failed read ends the open, but only once no other
			 * read is in flight (a freed engine would get it). */
			if (rc < 0 && !p->mpc.loading)
				return rc;
			if (rc <= 0)
				ready = 0;
		}
		if (x->kind != QS_EXT_TRIM)
			i++; /* the payload */
	}
	if (!ready) {
		p->scan_waits = true;
		if (p->mpc.want_frame)
			plc_rcv_writeback(e);
	}
	return ready;
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
		bd->stuck = false;
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

/* ---- P2L pages: the client block of each block of a band ----------------- */

/* The P2L page holding QLC block ph, and the entry in it. */
static uint64_t p2l_page_of(const struct plc *p, uint64_t ph, uint32_t *k)
{
	uint64_t b = band_of(p, ph), off = ph - b * p->band_blocks;
	*k = (uint32_t)(off % p->p2l_cover);
	return b * p->p2l_band_pages + off / p->p2l_cover;
}

/* Of P2L page q's two slots read into buf, the one holding its newest valid
 * copy, or -1 (never written in this format, or lost). */
static int p2l_newest(const struct qs_engine *e, const unsigned char *buf, uint64_t q)
{
	int best = -1;
	uint64_t gen = 0;
	for (int sl = 0; sl < 2; sl++) {
		const struct qs_fmt_map_page *c = (const void *)(buf + sl * QS_BLOCK_SIZE);
		if (qs_fmt_p2l_check(c, &e->sb, q) == QS_FMT_OK && (best < 0 || c->gen > gen)) {
			best = sl;
			gen = c->gen;
		}
	}
	return best;
}

/* Does stream s still have blocks to place in P2L page q? */
static bool p2l_stream_in(const struct plc *p, uint64_t q)
{
	for (int s = 0; s < 2; s++) {
		uint32_t k;
		if (p->open[s] != PLC_NONE &&
		    p2l_page_of(p, p->open[s] * p->band_blocks + p->wp[s], &k) == q)
			return true;
	}
	return false;
}

/* A frame no unit and no stream needs goes free. Entries set but never
 * written then are those of units that failed (a failed QLC write, no
 * frame for their second page): nothing maps their blocks. */
static void p2l_settle(struct plc *p, struct p2l_frame *f)
{
	if (f->page != PLC_NONE && !f->refs && !f->wb && !f->base_rd &&
	    !p2l_stream_in(p, f->page))
		f->page = PLC_NONE;
}

/* The frame of page q, taken fresh (every entry unset) when none holds it;
 * k is the first entry the caller sets: a stream enters a page at its
 * start, except when it resumes a band after a restart, and then the
 * entries before k come from the device (p2l_base). NULL: none free, which
 * the frames' count rules out. */
static struct p2l_frame *p2l_frame(struct qs_engine *e, uint64_t q, uint32_t k)
{
	struct plc *p = e->plc;
	struct p2l_frame *free = NULL;
	/* Found before any frame settles: band_alloc has already moved the
	 * stream past the page of a unit that ends it. */
	for (uint32_t i = 0; i < p->npfr; i++)
		if (p->pfr[i].page == q)
			return &p->pfr[i];
	for (uint32_t i = 0; i < p->npfr; i++) {
		struct p2l_frame *f = &p->pfr[i];
		p2l_settle(p, f);
		if (f->page == PLC_NONE && !free)
			free = f;
	}
	if (!free)
		return NULL;
	free->page = q;
	free->refs = 0;
	free->set = free->done = free->wr_set = 0;
	free->slot = 0;
	free->err = 0;
	free->need_base = k != 0;
	free->base_rd = false;
	free->base_k = k;
	struct qs_fmt_map_page *d = free->data;
	memset(d, 0, QS_BLOCK_SIZE);
	d->magic = QS_FMT_P2L_MAGIC;
	d->version = QS_FMT_VERSION;
	d->width = (uint16_t)p->width;
	d->page = q;
	d->nentries = qs_fmt_p2l_nentries(q, p->band_blocks, p->p2l_cover);
	memset(d->entries, 0xff, (size_t)d->nentries * p->width);
	return free;
}

/*
 * Unit u was placed at u->phys: its slots' client blocks (padding: none)
 * into the P2L frames of its pages, which it holds until its MAP or MOVE
 * record is logged. false: no frame (cannot happen; the unit fails).
 */
static bool p2l_place(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	u->pf[0] = u->pf[1] = UINT32_MAX;
	for (uint32_t k = 0; k < e->iu_blocks; k++) {
		uint32_t at;
		uint64_t q = p2l_page_of(p, u->phys + k, &at), lba = k < u->n ? u->lba[k] : PLC_NONE;
		int j = u->pf[0] == UINT32_MAX || p->pfr[u->pf[0]].page == q ? 0 : 1;
		if (u->pf[j] == UINT32_MAX) {
			struct p2l_frame *f = p2l_frame(e, q, at);
			if (!f)
				return false;
			u->pf[j] = (uint32_t)(f - p->pfr);
			f->refs++;
		}
		struct p2l_frame *f = &p->pfr[u->pf[j]];
		tbl_set(p, f->data->entries, at, lba);
		f->set++;
		u->pneed[j] = f->set;
		if (p->p2l_all)
			tbl_set(p, p->p2l_all, u->phys + k, lba);
	}
	return true;
}

/* The unit is done with its frames (logged, or failed). */
static void p2l_drop(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	for (int j = 0; j < 2; j++) {
		if (u->pf[j] == UINT32_MAX)
			continue;
		struct p2l_frame *f = &p->pfr[u->pf[j]];
		f->refs--;
		u->pf[j] = UINT32_MAX;
		p2l_settle(p, f);
	}
	u->p2l_wait = false;
}

static void p2l_write(struct qs_engine *e, struct p2l_frame *f);
static void unit_p2l_done(struct qs_engine *e, struct unit *u);

/* Units whose records wait for P2L writes: go on with those now durable. */
static void p2l_wake(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (uint32_t i = 0; i < 2 * e->conf.destage_qd; i++) {
		struct unit *u = &p->gcu[i];
		if (u->active && u->p2l_wait)
			unit_p2l_done(e, u);
	}
}

static void p2l_write_cb(void *arg, int res)
{
	struct p2l_frame *f = arg;
	struct qs_engine *e = f->e;
	eng_enter(e);
	f->wb = false;
	if (res < 0) {
		e->st.fast_errors++;
		f->err = res;
	} else {
		f->err = 0;
		f->done = f->wr_set;
		f->slot ^= 1;
		e->plc->p2l_page_writes++;
	}
	p2l_wake(e);
	p2l_settle(e->plc, f);
	plc_kick(e);
	eng_leave_deliver(e);
}

/* The page's newest copy is read: its entries before base_k into the
 * frame, and the next write goes to the other slot. */
static void p2l_base_cb(void *arg, int res)
{
	struct p2l_frame *f = arg;
	struct qs_engine *e = f->e;
	struct plc *p = e->plc;
	eng_enter(e);
	f->base_rd = false;
	if (res < 0) {
		e->st.fast_errors++;
		f->err = res;
	} else {
		int best = p2l_newest(e, f->rbuf, f->page);
		/* None: no block before base_k was ever mapped in this fill. */
		if (best >= 0) {
			const struct qs_fmt_map_page *c =
				(const void *)(f->rbuf + best * QS_BLOCK_SIZE);
			memcpy(f->data->entries, c->entries, (size_t)f->base_k * p->width);
			p->p2l_page_reads += 2;
		}
		f->slot = (uint8_t)(best >= 0 ? best ^ 1 : 0);
		f->need_base = false;
		f->err = 0;
	}
	p2l_wake(e);
	p2l_settle(e->plc, f);
	plc_kick(e);
	eng_leave_deliver(e);
}

/*
 * Write frame f's page as it is now to the slot not holding its newest
 * copy (a frame taken mid-page reads that copy first, p2l_base_cb, and
 * writes once it is in). FUA on a device with a volatile cache: the entries are durable
 * before the records that need them are written (the log's own flushes
 * order nothing between two regions written at once).
 */
static void p2l_write(struct qs_engine *e, struct p2l_frame *f)
{
	struct plc *p = e->plc;
	if (f->need_base) {
		if (f->base_rd)
			return;
		f->base_rd = true;
		f->iov.iov_base = f->rbuf;
		f->iov.iov_len = 2 * QS_BLOCK_SIZE;
		e->fast->ops->read(e->fast->ctx, (p->p2l_start + 2 * f->page) * QS_BLOCK_SIZE,
				   &f->iov, 1, p2l_base_cb, f);
		return;
	}
	uint64_t floor = e->sb.epoch << 40;
	p->p2l_gen = (p->p2l_gen > floor ? p->p2l_gen : floor) + 1;
	memcpy(f->wbuf, f->data, QS_BLOCK_SIZE);
	f->wbuf->gen = p->p2l_gen;
	qs_fmt_map_seal(f->wbuf, e->seed);
	f->wr_set = f->set;
	f->wb = true;
	f->iov.iov_base = f->wbuf;
	f->iov.iov_len = QS_BLOCK_SIZE;
	unsigned fl = (e->fast->flags & QS_VOL_VOLATILE_CACHE) ? QS_WRITE_FUA : 0;
	e->fast->ops->write(e->fast->ctx, (p->p2l_start + 2 * f->page + f->slot) * QS_BLOCK_SIZE,
			    &f->iov, 1, fl, p2l_write_cb, f);
}

/* Unit u is written: 1 when its P2L entries are durable; 0 when it waits
 * for a write (started here if none is in flight); -errno when the last
 * write of one of its pages failed (the unit fails, and is retried). */
static int p2l_sync(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	int ready = 1;
	for (int j = 0; j < 2; j++) {
		if (u->pf[j] == UINT32_MAX)
			continue;
		struct p2l_frame *f = &p->pfr[u->pf[j]];
		if (f->done >= u->pneed[j])
			continue;
		if (f->err && u->p2l_wait)
			return f->err;
		ready = 0;
		if (!f->wb && !f->base_rd)
			p2l_write(e, f);
	}
	return ready;
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
	p2l_drop(e, u);
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
			u->pf[0] = u->pf[1] = UINT32_MAX;
			u->p2l_wait = false;
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
	/* The IU's count is its blocks in the index: once they are found the
	 * rest of it holds none (with 4K random writes over a whole drive a
	 * dirty IU holds one or two; looking up all 16 was 8% of the
	 * simulation's time). */
	uint32_t left = e->diu_short ? e->iu_blocks : e->dius[di].count;
	busy_add(e, iu);
	u->ius[u->nius++] = iu;
	for (uint32_t b = 0; b < e->iu_blocks && u->n < e->iu_blocks && left; b++) {
		uint32_t v;
		if (!qs_index_get(&e->idx, lba0 + b, &v))
			continue;
		left--;
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
	uint32_t di = first != NIL ? first : dst_pick(e, NIL, urgent, space);
	/* Pack whole dirty IUs while they fit; one may be split at the end
	 * (the rest of it waits until this unit is logged). */
	while (di != NIL && unit_add_iu(e, u, di))
		di = dst_pick(e, di, urgent, space);
	if (!u->n) {
		unit_release(e, u);
		return false;
	}
	unit_read_cached(e, u);
	if (--u->pending == 0)
		unit_write(e, u);
	return true;
}

/* The client block valid block ph of the victim was written for, from its
 * P2L pages (PLC_NONE: lost). */
static uint64_t vic_lba(const struct qs_engine *e, uint64_t ph)
{
	const struct plc *p = e->plc;
	if (p->p2l_all)
		return tbl_get(p, p->p2l_all, ph);
	uint32_t k;
	uint64_t i = p2l_page_of(p, ph, &k) % p->p2l_band_pages;
	if (p->vic_sel[i] < 0)
		return PLC_NONE;
	const struct qs_fmt_map_page *pg =
		(const void *)(p->vic_buf + (2 * i + (uint64_t)p->vic_sel[i]) * QS_BLOCK_SIZE);
	return tbl_get(p, pg->entries, k);
}

/* GC: gather the next valid blocks of the victim into u and read them. A
 * valid block whose P2L entry was lost cannot be moved: its band is left
 * stuck (GC picks it no more) rather than freed under it. */
static void gc_gather(struct qs_engine *e, struct unit *u)
{
	struct plc *p = e->plc;
	uint64_t base = p->victim * p->band_blocks;
	while (p->victim_at < p->band_blocks && u->n < e->iu_blocks) {
		uint64_t ph = base + p->victim_at;
		if (!plc_bit(p->valid, ph)) {
			p->victim_at++;
			continue;
		}
		/* A run of valid blocks, one read. */
		uint32_t k = u->n;
		while (p->victim_at < p->band_blocks && u->n < e->iu_blocks) {
			uint64_t q = base + p->victim_at;
			if (!plc_bit(p->valid, q))
				break;
			uint64_t l = vic_lba(e, q);
			p->victim_at++;
			if (l == PLC_NONE) {
				p->gc_unknown++;
				p->bands[p->victim].stuck = true;
				break;
			}
			if (pend_stale(e, l, q))
				break; /* garbage: not moved */
			u->lba[u->n] = l;
			u->from[u->n] = q;
			u->n++;
		}
		uint32_t n = u->n - k;
		if (!n)
			continue;
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
	p->bands[u->band].inflight++;
	if (!p2l_place(e, u)) { /* the frames' count rules it out */
		unit_failed(e, u, -ENOMEM);
		return;
	}
	if (!e->no_data && u->n < e->iu_blocks)
		memset(u->buf + (size_t)u->n * QS_BLOCK_SIZE, 0,
		       (size_t)(e->iu_blocks - u->n) * QS_BLOCK_SIZE);
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
		unit_p2l_done(e, u);
	}
	dst_kick(e);
	eng_leave_deliver(e);
}

/* The unit is on the QLC: once its P2L entries are durable (a record
 * pointing the map at a block GC could not place would pin its band for
 * good), log its MAP or MOVE records. */
static void unit_p2l_done(struct qs_engine *e, struct unit *u)
{
	int rc = p2l_sync(e, u);
	if (rc <= 0) {
		u->p2l_wait = rc == 0;
		if (rc < 0)
			unit_failed(e, u, rc);
		return;
	}
	u->p2l_wait = false;
	unit_extents(e, u);
	struct req *r = eng_req_alloc(e);
	if (!r) {
		unit_failed(e, u, -ENOMEM);
		return;
	}
	r->type = REQ_INTERNAL;
	r->owner = e;
	r->cb = unit_logged;
	r->arg = u;
	r->px = u->x;
	r->px_n = u->nx;
	r->pending = 1; /* the wait for the append */
	/* Header-only: it may use the log's reserve, and it is what lets the
	 * log's tail move. */
	eng_space_wait(e, r);
	eng_space_kick(e);
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
		    bd->valid >= p->band_blocks || bd->stuck)
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

/* The victim's P2L pages are read: the newest valid copy of each. */
static void vic_select(struct qs_engine *e)
{
	struct plc *p = e->plc;
	uint64_t q0 = p->victim * p->p2l_band_pages;
	for (uint32_t i = 0; i < p->p2l_band_pages; i++)
		p->vic_sel[i] = (int8_t)p2l_newest(e, p->vic_buf + 2 * (uint64_t)i * QS_BLOCK_SIZE,
						   q0 + i);
}

static void vic_load_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	struct plc *p = e->plc;
	eng_enter(e);
	if (res < 0) {
		/* Given up for now: picked again after a pause (the timer). A
		 * log device that keeps failing reads leaves GC nothing to do
		 * and writers waiting for bands for ever: after a few failures
		 * in a row the log is given up, as for checkpoints, and waiting
		 * writes fail with EIO rather than hang the device. */
		e->st.fast_errors++;
		eng_log(e, QS_LOG_ERR, "GC: reading the P2L pages of band %llu failed: %s",
			(unsigned long long)p->victim, strerror(-res));
		if (p->victim != PLC_NONE && p->bands[p->victim].state == BAND_VICTIM)
			p->bands[p->victim].state = BAND_FULL;
		p->victim = PLC_NONE;
		p->vic_state = VIC_NONE;
		p->gc_retry_ns = eng_now(e) + (100000000ull << p->vic_fail_streak);
		if (++p->vic_fail_streak >= 5) {
			eng_fail(e, "GC cannot read the P2L pages on the log device");
			eng_space_kick(e);
		}
	} else {
		p->vic_fail_streak = 0;
		if (!p->p2l_all)
			vic_select(e);
		p->vic_state = VIC_READY;
	}
	plc_kick(e);
	eng_leave_deliver(e);
}

/* Read the new victim's P2L pages, both slots of each, at once. */
static void vic_load(struct qs_engine *e)
{
	struct plc *p = e->plc;
	p->vic_state = VIC_LOADING;
	p->p2l_page_reads += 2 * (uint64_t)p->p2l_band_pages;
	p->vic_iov.iov_base = p->vic_buf;
	p->vic_iov.iov_len = 2 * (size_t)p->p2l_band_pages * QS_BLOCK_SIZE;
	e->fast->ops->read(e->fast->ctx,
			   (p->p2l_start + 2 * p->victim * p->p2l_band_pages) * QS_BLOCK_SIZE,
			   &p->vic_iov, 1, vic_load_cb, e);
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
				if (p->vic_state == VIC_LOADING ||
				    (p->gc_retry_ns && eng_now(e) < p->gc_retry_ns))
					break;
				uint64_t v = gc_pick(e);
				if (v == PLC_NONE)
					break;
				p->gc_retry_ns = 0;
				p->victim = v;
				p->victim_at = 0;
				p->bands[v].state = BAND_VICTIM;
				p->gc_victims++;
				vic_load(e);
			}
			if (p->vic_state != VIC_READY)
				break;
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
	const struct plc *p = e->plc;
	if (!p)
		return 0;
	uint64_t a = p->flush_retry_ns, b = p->gc_retry_ns;
	return !a ? b : !b ? a : a < b ? a : b;
}

bool plc_busy(const struct qs_engine *e)
{
	const struct plc *p = e->plc;
	if (p && p->vic_state == VIC_LOADING)
		return true;
	for (uint32_t i = 0; p && i < p->npfr; i++)
		if (p->pfr[i].wb || p->pfr[i].base_rd)
			return true;
	return p && (p->gc_active || p->mf_active || p->mf_inflight || p->mpc.loading ||
		     p->park_head[0] || p->park_head[1]);
}

/* ---- map pages -------------------------------------------------------------- */

static void mf_issue(struct qs_engine *e);

/* Page pg with the entries of src (a frame's page), sealed with gen and
 * seq, the first record it does not hold (not in timing-only runs). */
static void page_fill(struct qs_engine *e, struct qs_fmt_map_page *b, uint64_t pg,
		      const struct qs_fmt_map_page *src, uint64_t gen, uint64_t seq)
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
	b->gen = gen;
	b->seq = seq;
	b->nentries = n;
	memcpy(b->entries, src->entries, (size_t)n * p->width);
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
	uint32_t f = p->mpc.pg_frame[w->page];
	p->mpc.fr[f].wb = false;
	if (res < 0) {
		e->st.fast_errors++;
		if (!p->mf_result)
			p->mf_result = res;
		/* written again by the next flush: the frame stays till then */
		if (!p->mpc.fr[f].dirty) {
			mpc_dirty(e, w->page);
			p->dirty_list[p->ndirty++] = w->page;
		}
	}
	mpc_settle(e, f);
	p->mpc.want = true; /* a frame may have come free */
	mf_issue(e);
	plc_pages_kick(e);
	eng_leave_deliver(e);
}

/* Write page pg to the slot that does not hold its committed copy: as it
 * was at the snapshot (its COW copy, if it changed since), with gen, and
 * seq, the first record that state does not hold. */
static void mf_write(struct qs_engine *e, struct plc_mfw *w, uint64_t pg, uint64_t gen,
		     uint64_t seq)
{
	struct plc *p = e->plc;
	uint32_t f = p->mpc.pg_frame[pg];
	struct mpc_frame *x = &p->mpc.fr[f];
	w->page = pg;
	w->slot = !plc_bit(p->newest, pg);
	w->busy = true;
	uint32_t src = x->cow != MPC_NONE ? x->cow : f;
	if (p->mpc.data)
		page_fill(e, w->buf, pg, &p->mpc.data[src], gen, seq);
	if (x->cow != MPC_NONE)
		mpc_cow_free(e, f);
	x->pending = false;
	x->wb = true;
	plc_bit_put(p->mpc.empty, pg, false);
	if (!plc_bit(p->written, pg)) {
		plc_bit_put(p->written, pg, true);
		p->nwritten++;
	}
	w->iov.iov_base = w->buf;
	w->iov.iov_len = QS_BLOCK_SIZE;
	p->mf_inflight++;
	p->map_page_writes++;
	e->fast->ops->write(e->fast->ctx, (p->map_start + 2 * pg + w->slot) * QS_BLOCK_SIZE,
			    &w->iov, 1, 0, mf_write_cb, w);
}

static struct plc_mfw *mfw_free(struct plc *p)
{
	for (uint32_t i = 0; i < PLC_MAP_QD; i++)
		if (!p->mfw[i].busy)
			return &p->mfw[i];
	return NULL;
}

static void mf_issue(struct qs_engine *e)
{
	struct plc *p = e->plc;
	struct plc_mfw *w;
	while (p->mf_next < p->mf_n && (w = mfw_free(p))) {
		uint64_t pg = p->mf_list[p->mf_next];
		/* A write of it still in flight (recovery's): this one must
		 * land after it; its completion issues again. */
		if (p->mpc.fr[p->mpc.pg_frame[pg]].wb)
			break;
		p->mf_next++;
		mf_write(e, w, pg, p->snap_gen, p->snap_seq);
	}
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
	 * done_seq applied, none after). A page pinned now will change before
	 * it is written: it is copied now (the COW frames outnumber the pins,
	 * and the last flush left none in use); one pinned later is copied
	 * when it is pinned (mpc_pin).
	 */
	memcpy(p->mf_list, p->dirty_list, p->ndirty * sizeof(uint64_t));
	p->mf_n = p->ndirty;
	p->mf_next = 0;
	p->mf_result = 0;
	for (uint64_t i = 0; i < p->ndirty; i++) {
		uint64_t pg = p->dirty_list[i];
		struct mpc_frame *x = &p->mpc.fr[p->mpc.pg_frame[pg]];
		x->dirty = false;
		x->pending = true;
		if (x->pins) {
			if (p->mpc.cow_free != MPC_NONE)
				mpc_cow(e, pg);
			else
				p->mf_result = -ENOMEM; /* cannot happen: see MPC_PINS */
		}
	}
	p->ndirty = 0;
	p->snap_seq = e->done_seq;
	p->snap_gen = ++p->gen;
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
	 * its committed copy there. A word at a time: most are zero. */
	uint64_t words = (p->map_pages + 63) / 64;
	for (uint64_t w = 0; w < words && p->nwritten; w++) {
		uint64_t bits;
		memcpy(&bits, p->written + w * 8, sizeof(bits));
		if (!bits)
			continue;
		memset(p->written + w * 8, 0, sizeof(bits));
		uint64_t nb;
		memcpy(&nb, p->newest + w * 8, sizeof(nb));
		nb ^= bits;
		memcpy(p->newest + w * 8, &nb, sizeof(nb));
		p->nwritten -= (uint64_t)__builtin_popcountll(bits);
	}
	p->mf_ready = false;
}

/*
 * Recovery has run out of frames: every one holds a page the replay
 * changed, and no checkpoint can run before the log is read to its end.
 * Such pages are written back as copies no superblock has committed (a
 * gen above all on the device, to the slot that does not hold the
 * committed copy): a crash now leaves them uncommitted, so the next
 * recovery ignores them; the first checkpoint's commit takes them, each
 * then the map as the snapshot has it (a page changed again is dirty again
 * and written again by that flush).
 */
/* What a page recovery writes back holds: every record the scan applied,
 * none after (it stops before the record whose pages it lacks). */
static uint64_t rcv_page_seq(const struct qs_engine *e)
{
	uint64_t next = e->plc->apply_seq + 1;
	return next > e->sb.map_seq ? next : e->sb.map_seq;
}

void plc_rcv_writeback(struct qs_engine *e)
{
	struct plc *p = e->plc;
	struct plc_mfw *w;
	for (uint64_t i = p->ndirty; i-- > 0 && (w = mfw_free(p));) {
		uint64_t pg = p->dirty_list[i];
		struct mpc_frame *x = &p->mpc.fr[p->mpc.pg_frame[pg]];
		if (x->wb)
			continue; /* one write of a page at a time */
		p->dirty_list[i] = p->dirty_list[--p->ndirty];
		x->dirty = false;
		mf_write(e, w, pg, ++p->gen, rcv_page_seq(e));
	}
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
 * Entries [k, k + n) of page b (width w) into out, PLC_NONE where unmapped.
 * 5-byte entries are read with 8-byte loads and masked: a 5-byte memcpy
 * compiles to byte loads. Every load stays inside the entries: the page's
 * last entry is read with 5 bytes.
 */
static void page_decode(const struct qs_fmt_map_page *b, uint32_t k, uint32_t n, uint32_t w,
			uint64_t *out)
{
	if (w != 5) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = tbl_get_w(b->entries, k + i, w);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		if (k + i + 1 < b->nentries) {
			memcpy(&v, b->entries + (size_t)(k + i) * 5, 8);
			v &= QS_FMT_MAP_NONE5;
			out[i] = v == QS_FMT_MAP_NONE5 ? PLC_NONE : v;
		} else {
			out[i] = tbl_get_w(b->entries, k + i, 5);
		}
	}
}

/*
 * Recovery's first pass: set the valid bit of every QLC block that page pg
 * (b: a committed copy) maps, and refuse a block mapped twice. The bits fall at random places in a bitmap
 * of 1 bit a QLC block (894 MiB at 30.72 TB, far past the caches), so each
 * batch of entries is decoded and its bitmap bytes prefetched before any is
 * touched: one entry after the other, a recovery spent 88 ns an entry here,
 * 530 s for the 6e9 entries of a 30.72 TB drive.
 */
static int valid_from_page(struct qs_engine *e, uint64_t pg, const struct qs_fmt_map_page *b)
{
	enum { BATCH = 32 };
	struct plc *p = e->plc;
	uint64_t lba = pg * p->per_page, ph[BATCH];
	for (uint32_t k = 0; k < b->nentries; k += BATCH) {
		uint32_t n = b->nentries - k < BATCH ? b->nentries - k : BATCH;
		page_decode(b, k, n, p->width, ph);
		for (uint32_t i = 0; i < n; i++)
			if (ph[i] != PLC_NONE)
				__builtin_prefetch(&p->valid[ph[i] >> 3], 1);
		for (uint32_t i = 0; i < n; i++) {
			if (ph[i] == PLC_NONE)
				continue;
			if (plc_bit(p->valid, ph[i])) {
				eng_log(e, QS_LOG_ERR, "recovery: QLC block %llu mapped twice (LBA %llu "
					"and another)", (unsigned long long)ph[i],
					(unsigned long long)(lba + k + i));
				return -EBADMSG;
			}
			plc_bit_put(p->valid, ph[i], true);
			p->mapped++;
		}
	}
	return 0;
}

/*
 * Find the newest committed copy of page pg in its two slots: valid, of a
 * gen at or below the superblock's map_gen (a copy of a later gen was
 * written by a checkpoint that never committed it). The page itself is
 * read again when a lookup needs it; here only which slot holds it and
 * whether it was ever written.
 */
static int load_page(struct qs_engine *e, uint64_t pg, const unsigned char *slots)
{
	struct plc *p = e->plc;
	const struct qs_fmt_map_page *c[2] = {(const void *)slots,
					      (const void *)(slots + QS_BLOCK_SIZE)};
	enum qs_fmt_status st[2];
	int best = -1, stale = -1;
	for (int s = 0; s < 2; s++) {
		st[s] = qs_fmt_map_check(c[s], &e->sb, pg);
		if (st[s] == QS_FMT_OK && c[s]->gen > p->gen)
			p->gen = c[s]->gen; /* new gens must pass every one on the device */
		if (st[s] == QS_FMT_OK && c[s]->gen > e->sb.map_gen) {
			stale = s;
			continue;
		}
		if (st[s] == QS_FMT_OK && (best < 0 || c[s]->gen > c[best]->gen))
			best = s;
	}
	/* Never committed since format: its first slot reads as zeroes (one
	 * torn or uncommitted write cannot spoil both). */
	if (best < 0 && !blank(c[0]) && !blank(c[1])) {
		eng_log(e, QS_LOG_ERR, "recovery: map page %llu: no committed copy (%s, %s)",
			(unsigned long long)pg, qs_fmt_status_str(st[0]), qs_fmt_status_str(st[1]));
		return -EBADMSG;
	}
	/* An uncommitted copy is zeroed before the open ends (plc_load), before
	 * a later commit could take it for a committed one; it lies in the
	 * slot the next write of the page goes to. */
	plc_bit_put(p->newest, pg, best >= 0 ? best : stale >= 0 ? !stale : 0);
	plc_bit_put(p->written, pg, false);
	plc_bit_put(p->stale, pg, stale >= 0);
	plc_bit_put(p->mpc.empty, pg, best < 0);
	if (best < 0)
		return 0;
	if (p->map)
		memcpy((uint8_t *)p->map + pg * p->per_page * p->width, c[best]->entries,
		       (size_t)c[best]->nentries * p->width);
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
static void stale_next(struct qs_engine *e);

/* The clean state applies when the superblock of a clean shutdown says it
 * left one, and only for the map pages at its head. */
static bool clean_usable(const struct qs_engine *e)
{
	return (e->sb.flags & QS_SB_CLEAN_STATE) && e->sb.map_seq == e->sb.head_seq;
}

static void map_done(struct qs_engine *e, int res)
{
	struct plc *p = e->plc;
	if (p->ld_rd_failed)
		eng_log(e, QS_LOG_ERR, "recovery: map read at page %llu failed: %s",
			(unsigned long long)(p->ld_next / 2), strerror(-res));
	if (res) {
		p->ld_cb(p->ld_arg, res);
		return;
	}
	if (clean_usable(e)) {
		clean_read(e);
		return;
	}
	p->ld_next = 0;
	stale_next(e);
}

void plc_load(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct plc *p = e->plc;
	p->ld_cb = cb;
	p->ld_arg = arg;
	region_read(e, p->map_start, 2 * p->map_pages, map_take, map_done);
}

static void stale_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	struct plc *p = e->plc;
	eng_enter(e);
	if (res < 0) {
		e->st.fast_errors++;
		eng_log(e, QS_LOG_ERR, "recovery: zeroing the uncommitted copy of map page %llu "
			"failed: %s", (unsigned long long)p->ld_next, strerror(-res));
		p->ld_cb(p->ld_arg, res);
	} else {
		p->ld_next++;
		stale_next(e);
	}
	eng_leave_deliver(e);
}

/* Zero every uncommitted copy load_page found, one at a time (they are
 * few: the pages of a checkpoint a crash interrupted), then the open goes
 * on to the log. */
static void stale_next(struct qs_engine *e)
{
	struct plc *p = e->plc;
	while (p->ld_next < p->map_pages && !plc_bit(p->stale, p->ld_next))
		p->ld_next++;
	if (p->ld_next >= p->map_pages) {
		p->ld_cb(p->ld_arg, 0);
		return;
	}
	uint64_t pg = p->ld_next;
	struct plc_mfw *w = &p->mfw[0];
	plc_bit_put(p->stale, pg, false);
	memset(w->buf, 0, QS_BLOCK_SIZE);
	w->iov.iov_base = w->buf;
	w->iov.iov_len = QS_BLOCK_SIZE;
	e->fast->ops->write(e->fast->ctx,
			    (p->map_start + 2 * pg + !plc_bit(p->newest, pg)) * QS_BLOCK_SIZE,
			    &w->iov, 1, 0, stale_cb, e);
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
		uint64_t first = (blk - 1 - p->cs_band_pages) * QS_FMT_MAP_BYTES;
		uint64_t bytes = (p->phys + 7) / 8;
		pg->magic = QS_FMT_VALID_MAGIC;
		pg->width = 1;
		pg->page = blk - 1 - p->cs_band_pages;
		pg->nentries = (uint32_t)(bytes - first < QS_FMT_MAP_BYTES ? bytes - first
									  : QS_FMT_MAP_BYTES);
		memcpy(pg->entries, p->valid + first, pg->nentries);
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
	eng_log(e, QS_LOG_WARN, "recovery: clean state %s %llu: %s; rebuilding the valid "
		"bitmap from the map instead", what, (unsigned long long)page, qs_fmt_status_str(st));
	return -EBADMSG;
}

/* Clean state chunk: the header, then band pages into the bands, then
 * valid-bitmap pages into the bitmap. */
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
			if ((st = qs_fmt_valid_page_check(pg, &e->sb, &p->cs, pgno)) != QS_FMT_OK)
				return clean_bad(e, "valid-bitmap page", pgno, st);
			memcpy(p->valid + pgno * QS_FMT_MAP_BYTES, pg->entries, pg->nentries);
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
			"header says %llu mapped; rebuilding the valid bitmap from the map instead",
			(unsigned long long)valid, (unsigned long long)p->cs.mapped);
		res = -EBADMSG;
	}
	if (p->ld_rd_failed || res == -ENOMEM)
		eng_log(e, QS_LOG_WARN, "recovery: clean state read at block %llu failed: %s; "
			"rebuilding the valid bitmap from the map instead",
			(unsigned long long)(p->cs_start + p->ld_next), strerror(-res));
	p->cs_loaded = !res;
	if (res) {
		/* What was taken goes: the bitmap comes from the map after all
		 * (plc_valid_read). */
		memset(p->valid, 0, (size_t)(p->phys + 63) / 64 * 8);
		memset(p->bands, 0, p->nbands * sizeof(struct band));
	}
	p->ld_next = 0;
	stale_next(e);
}

static void clean_read(struct qs_engine *e)
{
	struct plc *p = e->plc;
	region_read(e, p->cs_start, p->cs_blocks, clean_take, clean_done);
}

/* ---- the valid bitmap from the map recovery ends with ---------------------- */

/* Map region chunk: pairs of slots. A page in DRAM is as the replay left
 * it; any other is its newest copy on the device (the committed one, or
 * one recovery wrote back since). */
static int valid_take(struct qs_engine *e, uint64_t blk, const unsigned char *buf, uint64_t n)
{
	struct plc *p = e->plc;
	for (uint64_t i = 0; i < n; i += 2) {
		uint64_t pg = (blk + i) / 2;
		uint32_t f = p->mpc.pg_frame[pg];
		const struct qs_fmt_map_page *c;
		if (f != MPC_NONE && p->mpc.fr[f].state == MPC_READY) {
			c = &p->mpc.data[f];
		} else if (plc_bit(p->mpc.empty, pg)) {
			continue;
		} else {
			uint32_t slot = plc_bit(p->newest, pg) ^ plc_bit(p->written, pg);
			c = (const void *)(buf + (i + slot) * QS_BLOCK_SIZE);
			enum qs_fmt_status st = qs_fmt_map_check(c, &e->sb, pg);
			if (st != QS_FMT_OK) {
				eng_log(e, QS_LOG_ERR, "recovery: map page %llu (slot %u): %s", 
					(unsigned long long)pg, slot, qs_fmt_status_str(st));
				return -EBADMSG;
			}
		}
		int rc = valid_from_page(e, pg, c);
		if (rc)
			return rc;
	}
	return 0;
}

static void valid_done(struct qs_engine *e, int res)
{
	struct plc *p = e->plc;
	if (p->ld_rd_failed)
		eng_log(e, QS_LOG_ERR, "recovery: map read at page %llu failed: %s",
			(unsigned long long)(p->ld_next / 2), strerror(-res));
	p->ld_cb(p->ld_arg, res);
}

void plc_valid_read(struct qs_engine *e, qs_io_cb cb, void *arg)
{
	struct plc *p = e->plc;
	p->ld_cb = cb;
	p->ld_arg = arg;
	p->mapped = 0;
	if (p->cs_loaded || e->no_data) {
		cb(arg, 0);
		return;
	}
	region_read(e, p->map_start, 2 * p->map_pages, valid_take, valid_done);
}

/* First IU of band b past its last mapped block (band_blocks: none left). */
static uint32_t band_top(const struct qs_engine *e, uint64_t b)
{
	const struct plc *p = e->plc;
	uint64_t base = b * p->band_blocks;
	uint32_t top = p->band_blocks;
	while (top && !plc_bit(p->valid, base + top - 1))
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

/* Set bits in [from, from + n) of bitmap bm: whole 64-bit words between
 * the ends (the bitmap is allocated in whole words, bitmap_alloc). */
static uint64_t bits_count(const uint8_t *bm, uint64_t from, uint64_t n)
{
	uint64_t c = 0, i = from, end = from + n;
	for (; i < end && i % 64; i++)
		c += plc_bit(bm, i);
	for (; i + 64 <= end; i += 64) {
		uint64_t w;
		memcpy(&w, bm + i / 8, 8);
		c += (uint64_t)__builtin_popcountll(w);
	}
	for (; i < end; i++)
		c += plc_bit(bm, i);
	return c;
}

/* Valid blocks per band: a sequential pass over the valid bitmap (which,
 * for each block, is set exactly when the map points at it). */
static void rebuild_valid(struct qs_engine *e)
{
	struct plc *p = e->plc;
	for (uint64_t b = 0; b < p->nbands; b++)
		p->bands[b].valid = (uint32_t)bits_count(p->valid, b * p->band_blocks, p->band_blocks);
}

/*
 * The clean state was read: bands and valid bitmap are as the clean close
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
	for (int s = 0; s < 2; s++) {
		p->open[s] = p->cs.open[s] == UINT64_MAX ? PLC_NONE : p->cs.open[s];
		p->wp[s] = p->cs.wp[s];
	}
	for (uint64_t b = 0; b < p->nbands; b++) {
		struct band *bd = &p->bands[b];
		bool open = b == p->open[0] || b == p->open[1];
		bd->state = open ? BAND_OPEN : bd->valid ? BAND_FULL : BAND_FREE;
		if (bd->state == BAND_FREE)
			p->freeq[p->free_n++] = b;
	}
}

int plc_rebuild(struct qs_engine *e)
{
	struct plc *p = e->plc;
	if (p->cs_loaded) {
		clean_resume(e);
		return 0;
	}
	/* The valid bitmap was built from the final map (plc_valid_read). */
	for (uint64_t b = 0; b < p->nbands; b++)
		memset(&p->bands[b], 0, sizeof(p->bands[b]));
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
	const struct mpc *m = &p->mpc;
	/* DRAM: the frames (the limit, or the whole map if smaller), a frame
	 * number and three bits per page, the lists of dirty pages, and the
	 * valid bitmap. */
	s->map_bytes = (uint64_t)(m->nframes + m->ncow) * (QS_BLOCK_SIZE + sizeof(struct mpc_frame)) +
		       p->map_pages * sizeof(uint32_t) + 4 * ((p->map_pages + 7) / 8) +
		       2 * (uint64_t)m->nframes * sizeof(uint64_t) + (p->phys + 7) / 8;
	s->map_page_writes = p->map_page_writes;
	s->map_dram_limit = e->conf.map_dram_limit;
	s->map_resident_bytes = (uint64_t)(m->resident + m->cows) * QS_BLOCK_SIZE;
	s->map_peak_bytes = (uint64_t)m->peak * QS_BLOCK_SIZE;
	s->map_region_bytes = 2 * p->map_pages * QS_BLOCK_SIZE;
	s->map_hits = m->hits;
	s->map_misses = m->misses;
	s->map_page_reads = m->reads;
	s->mapped_blocks = p->mapped;
	s->clean_state = p->cs_loaded;
	s->p2l_page_writes = p->p2l_page_writes;
	s->p2l_page_reads = p->p2l_page_reads;
	s->gc_stuck_blocks = p->gc_unknown;
	s->map_kept = p->pend_kept;
	s->map_kept_applied = p->pend_applied;
	s->map_kept_reads = p->pend_page_reads;
	s->map_kept_stale = p->pend_stale_gc;
}

/* ---- qs_engine_check ----------------------------------------------------- */

/* QLC block ph is named by lba (as its value, or as the page's old value a
 * kept change owes): it must be in the bands, valid and named once. */
static int check_ref(struct plc *p, uint8_t *seen, uint64_t lba, uint64_t ph, const char *as,
		     char *why, size_t len)
{
	if (ph >= p->phys)
		snprintf(why, len, "LBA %llu's %s %llu is past the bands", (unsigned long long)lba,
			 as, (unsigned long long)ph);
	else if (!plc_bit(p->valid, ph))
		snprintf(why, len, "LBA %llu's %s %llu has no valid bit", (unsigned long long)lba, as,
			 (unsigned long long)ph);
	else if (plc_bit(seen, ph))
		snprintf(why, len, "QLC block %llu named twice (LBA %llu's %s)",
			 (unsigned long long)ph, (unsigned long long)lba, as);
	else
		return plc_bit_put(seen, ph, true), 0;
	return -EUCLEAN;
}

/* Every LBA's references (check_ref); *refs counts them. */
static int check_lbas(struct plc *p, uint8_t *seen, uint64_t *refs, char *why, size_t len)
{
	for (uint64_t lba = 0; lba < p->lbas; lba++) {
		const struct qs_pend_ent *x = pend_find(p, lba);
		uint64_t v = x ? x->val : map_get(p, lba);
		if (v != PLC_NONE && check_ref(p, seen, lba, v, "value", why, len))
			return -EUCLEAN;
		*refs += v != PLC_NONE;
		uint64_t pv = x && (x->flags & PEND_STALE) ? map_get(p, lba) : PLC_NONE;
		if (pv != PLC_NONE && check_ref(p, seen, lba, pv, "old page value", why, len))
			return -EUCLEAN;
		*refs += pv != PLC_NONE;
	}
	return 0;
}

/* The bits set are exactly those named, and each band counts its own. */
static int check_bits(struct plc *p, const uint8_t *seen, uint64_t refs, char *why, size_t len)
{
	uint64_t total = 0;
	for (uint64_t b = 0; b < p->nbands; b++) {
		uint64_t n = 0;
		for (uint64_t ph = b * p->band_blocks; ph < (b + 1) * p->band_blocks; ph++) {
			if (plc_bit(p->valid, ph) && !plc_bit(seen, ph)) {
				snprintf(why, len, "QLC block %llu is valid but no LBA names it",
					 (unsigned long long)ph);
				return -EUCLEAN;
			}
			n += plc_bit(p->valid, ph);
		}
		if (n != p->bands[b].valid) {
			snprintf(why, len, "band %llu counts %u valid blocks, its bits %llu",
				 (unsigned long long)b, (unsigned)p->bands[b].valid, (unsigned long long)n);
			return -EUCLEAN;
		}
		total += n;
	}
	if (total != refs || p->mapped != refs) {
		snprintf(why, len, "%llu blocks named, %llu valid bits, %llu counted mapped",
			 (unsigned long long)refs, (unsigned long long)total,
			 (unsigned long long)p->mapped);
		return -EUCLEAN;
	}
	return 0;
}

int plc_check(struct qs_engine *e, char *why, size_t len)
{
	struct plc *p = e->plc;
	if (!p->map)
		return -ENOTSUP; /* the map pages are not all in DRAM */
	if (p->pend_overflow) {
		snprintf(why, len, "%llu kept map changes lost: the store was full",
			 (unsigned long long)p->pend_overflow);
		return -EUCLEAN;
	}
	if (p->move_wrong) {
		snprintf(why, len, "%llu GC moves decided by a valid bit that was wrong",
			 (unsigned long long)p->move_wrong);
		return -EUCLEAN;
	}
	size_t n = (size_t)((p->phys + 63) / 64 * 8);
	uint8_t *seen = eng_alloc(e, n, 64);
	if (!seen)
		return -ENOMEM;
	memset(seen, 0, n);
	uint64_t refs = 0;
	int rc = check_lbas(p, seen, &refs, why, len);
	if (!rc)
		rc = check_bits(p, seen, refs, why, len);
	eng_free(e, seen);
	return rc;
}

void plc_mem(const struct qs_engine *e, struct qs_engine_mem *m)
{
	const struct plc *p = e->plc;
	const struct mpc *c = &p->mpc;
	uint64_t frames = (uint64_t)c->nframes + c->ncow;
	m->map_pages = frames * QS_BLOCK_SIZE + eng_alloc_bytes(c->fr) + eng_alloc_bytes(c->io);
	m->map_meta = eng_alloc_bytes(c->pg_frame) + eng_alloc_bytes(c->empty) +
		      eng_alloc_bytes(p->newest) + eng_alloc_bytes(p->written) +
		      eng_alloc_bytes(p->stale) + eng_alloc_bytes(p->dirty_list) +
		      eng_alloc_bytes(p->mf_list);
	/* the store allocates through the environment, not eng_alloc */
	uint64_t pend = plc_pend_plan(p->pend.cap ? e->conf.map_keep_per_page : 0, p->map_pages,
				      p->width);
	m->map_meta += pend;
	m->total += pend;
	m->qlc_blocks = eng_alloc_bytes(p->valid);
	m->bands = eng_alloc_bytes(p->bands) + eng_alloc_bytes(p->freeq) + eng_alloc_bytes(p->drained);
	/* Timing only: the map's contents and the scratch page are the
	 * model's, and the frames' data, which a real engine holds, is not
	 * allocated: counted as mpc_init would have. */
	uint64_t data = c->data ? eng_alloc_bytes(c->data) : frames * QS_BLOCK_SIZE + QS_BLOCK_SIZE;
	m->map_pages = data + eng_alloc_bytes(c->fr) + eng_alloc_bytes(c->io);
	if (!c->data)
		m->total = m->total + data - eng_alloc_bytes(p->map) - eng_alloc_bytes(c->scratch) -
			   eng_alloc_bytes(p->p2l_all);
}
