/* SPDX-License-Identifier: MIT */
/*
 * Log placement's map in bounded DRAM: a cache of map pages.
 *
 * The map has an entry per client block: 4 bytes per 4 KiB, 24 GB for a
 * 30.72 TB drive. Its pages live on the fast tier (the map region, two
 * slots a page, docs/FORMAT.md) and only engine.map_dram_limit of them are
 * in DRAM, as SPDK's FTL keeps its L2P (l2p_dram_limit). A page is read
 * when a lookup misses, through the fast volume's ops like every other
 * engine I/O; what needed it waits (a read request, a record about to be
 * built, recovery's scan) while everything else goes on.
 *
 * Why pages leave DRAM only clean: a dirty page is written by the next
 * checkpoint's map flush, which writes the map exactly as it was at a
 * snapshot (plc_map_flush), the state the superblock then commits. Writing
 * a page back on eviction instead would put a later state in a slot a
 * commit may take, and recovery replays records on top of the committed
 * map expecting that very state (a MOVE applies only where the block is
 * still at its old place). So eviction takes the least recently used
 * clean page, and dirty pages past a quarter of the frames ask for a
 * checkpoint, which makes them clean. Recovery, where no checkpoint can
 * run, writes pages back as uncommitted copies (plc_rcv_writeback).
 *
 * Frames a record's extents will change are pinned from the moment the
 * extent is added to the record until the record is applied, so applying
 * (synchronous, in log order) never misses. A page the running flush has
 * not written yet is copied when it is pinned (COW frames), so the flush
 * still writes the snapshot. Pins in all are capped by the number of COW
 * frames (a quarter of the limit, MPC_PINS or two units' pages at most),
 * so the copies fit in the limit too.
 */
#include <errno.h>
#include <string.h>

#include "engine_int.h"

static struct mpc_frame *fr(struct plc *p, uint32_t f)
{
	return &p->mpc.fr[f];
}

static void lru_del(struct plc *p, uint32_t f)
{
	struct mpc *m = &p->mpc;
	struct mpc_frame *x = fr(p, f);
	if (!x->in_lru)
		return;
	if (x->prev != MPC_NONE)
		fr(p, x->prev)->next = x->next;
	else
		m->lru_head = x->next;
	if (x->next != MPC_NONE)
		fr(p, x->next)->prev = x->prev;
	else
		m->lru_tail = x->prev;
	x->in_lru = false;
}

static void lru_add(struct plc *p, uint32_t f)
{
	struct mpc *m = &p->mpc;
	struct mpc_frame *x = fr(p, f);
	x->prev = MPC_NONE;
	x->next = m->lru_head;
	if (m->lru_head != MPC_NONE)
		fr(p, m->lru_head)->prev = f;
	else
		m->lru_tail = f;
	m->lru_head = f;
	x->in_lru = true;
}

static void peak_note(struct mpc *m)
{
	if (m->resident + m->cows > m->peak)
		m->peak = m->resident + m->cows;
}

int mpc_init(struct qs_engine *e)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint64_t total = e->conf.map_dram_limit / QS_BLOCK_SIZE;
	if (total < 16) /* the config check's minimum keeps this false */
		return -EINVAL;
	/* A quarter at most for COW frames, which bound the pins: three
	 * quarters stay for pages, pinned or not. */
	/* A record must hold a whole unit's MAP or MOVE extents, one per block
	 * at worst and two pages each (the log's reserve counts one record a
	 * unit): COW frames, which bound the pins, twice that. */
	uint64_t unit_pages = 2 * (uint64_t)e->iu_blocks;
	uint64_t want = MPC_PINS > 2 * unit_pages ? MPC_PINS : 2 * unit_pages;
	uint64_t ncow = total / 4 < want ? total / 4 : want;
	if (ncow < 2 * unit_pages) /* the config check's minimum keeps this false */
		return -EINVAL;
	uint64_t pages = total - ncow;
	p->rec_pages = (uint32_t)unit_pages;
	if (total >= 2 * p->map_pages + 8) {
		/* The whole map fits, twice: a frame per page, never evicted,
		 * and a COW frame per page, so pins need no cap. */
		pages = p->map_pages;
		ncow = p->map_pages > 4 ? p->map_pages : 4;
		p->pin_cap = UINT32_MAX;
	} else {
		p->pin_cap = (uint32_t)ncow;
	}
	m->ncow = (uint32_t)ncow;
	m->nframes = (uint32_t)pages;
	/* A quarter of the frames dirty asks for a checkpoint: the rest stay
	 * for lookups. When the whole map fits, only a lack of frames does. */
	p->dirty_hi = m->nframes >= p->map_pages ? UINT32_MAX : m->nframes / 4;
	uint32_t n = m->nframes + m->ncow;
	m->fr = eng_alloc(e, (size_t)n * sizeof(*m->fr), 64);
	m->io = eng_alloc(e, (size_t)m->nframes * sizeof(*m->io), 64);
	m->pg_frame = eng_alloc(e, (size_t)p->map_pages * sizeof(uint32_t), 64);
	size_t eb = (size_t)(p->map_pages + 7) / 8;
	m->empty = eng_alloc(e, eb, 64);
	if (e->no_data)
		m->scratch = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	else
		m->data = eng_alloc(e, (size_t)n * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	if (!m->fr || !m->io || !m->pg_frame || !m->empty || (!m->scratch && !m->data))
		return -ENOMEM;
	memset(m->pg_frame, 0xff, (size_t)p->map_pages * sizeof(uint32_t));
	memset(m->empty, 0xff, eb); /* format: nothing written; recovery says otherwise */
	memset(m->fr, 0, (size_t)n * sizeof(*m->fr));
	m->lru_head = m->lru_tail = m->err_head = MPC_NONE;
	m->free_head = m->cow_free = MPC_NONE;
	for (uint32_t f = n; f-- > 0;) {
		fr(p, f)->cow = MPC_NONE;
		uint32_t *head = f < m->nframes ? &m->free_head : &m->cow_free;
		fr(p, f)->next = *head;
		*head = f;
	}
	for (uint32_t f = 0; f < m->nframes; f++)
		m->io[f].e = e, m->io[f].f = f;
	return 0;
}

void mpc_fini(struct qs_engine *e)
{
	struct mpc *m = &e->plc->mpc;
	eng_free(e, m->fr);
	eng_free(e, m->io);
	eng_free(e, m->pg_frame);
	eng_free(e, m->empty);
	eng_free(e, m->data);
	eng_free(e, m->scratch);
}

uint8_t *mpc_entries(struct plc *p, uint64_t pg)
{
	if (p->map) /* timing only: the contents are here, frames only count */
		return (uint8_t *)p->map + pg * p->per_page * p->width;
	return p->mpc.data[p->mpc.pg_frame[pg]].entries;
}

/* A free page frame, evicting the least recently used clean page if
 * none is free; MPC_NONE when every frame is dirty, pinned or busy. */
static uint32_t frame_take(struct plc *p)
{
	struct mpc *m = &p->mpc;
	uint32_t f = m->free_head;
	if (f != MPC_NONE) {
		m->free_head = fr(p, f)->next;
		return f;
	}
	f = m->lru_tail;
	if (f == MPC_NONE)
		return MPC_NONE;
	lru_del(p, f);
	m->pg_frame[fr(p, f)->page] = MPC_NONE;
	m->resident--;
	return f;
}

static void frame_free(struct plc *p, uint32_t f)
{
	struct mpc *m = &p->mpc;
	fr(p, f)->state = MPC_FREE;
	fr(p, f)->next = m->free_head;
	m->free_head = f;
}

void mpc_settle(struct qs_engine *e, uint32_t f)
{
	struct plc *p = e->plc;
	struct mpc_frame *x = fr(p, f);
	if (x->state == MPC_READY && !x->pins && !x->dirty && !x->pending && !x->wb &&
	    !x->in_lru)
		lru_add(p, f); /* waiters are kicked by the completion that got here */
}

static void page_read_cb(void *arg, int res)
{
	struct mpc_io *io = arg;
	struct qs_engine *e = io->e;
	struct plc *p = e->plc;
	struct mpc_frame *x = fr(p, io->f);
	eng_enter(e);
	p->mpc.loading--;
	if (res < 0) {
		e->st.fast_errors++;
		eng_log(e, QS_LOG_ERR, "map page %llu: read failed: %s",
			(unsigned long long)x->page, strerror(-res));
	} else if (!e->no_data) {
		enum qs_fmt_status st = qs_fmt_map_check(&p->mpc.data[io->f], &e->sb, x->page);
		if (st != QS_FMT_OK) {
			eng_log(e, QS_LOG_ERR, "map page %llu (slot %d): %s",
				(unsigned long long)x->page,
				plc_bit(p->newest, x->page) ^ plc_bit(p->written, x->page),
				qs_fmt_status_str(st));
			res = -EBADMSG;
		}
	}
	if (res < 0) {
		x->state = MPC_ERROR;
		x->err = res;
		x->next = p->mpc.err_head;
		p->mpc.err_head = io->f;
	} else {
		x->state = MPC_READY;
		mpc_settle(e, io->f);
	}
	p->mpc.want = true;
	p->mpc.gen++;
	p->mpc.reads_done++;
	plc_pages_kick(e);
	if (!e->ready)
		rcv_scan_resume(e); /* a stopped scan may wait for this read */
	eng_leave_deliver(e);
}

/* Page pg, never written since format, reads as all unmapped. */
static void page_blank(struct plc *p, uint32_t f, uint64_t pg)
{
	if (!p->mpc.data)
		return;
	struct qs_fmt_map_page *b = &p->mpc.data[f];
	uint64_t first = pg * p->per_page;
	memset(b, 0, sizeof(*b));
	b->page = pg;
	b->nentries = (uint32_t)(p->lbas - first < p->per_page ? p->lbas - first : p->per_page);
	memset(b->entries, 0xff, (size_t)b->nentries * p->width);
}

int mpc_peek(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint32_t f = m->pg_frame[pg];
	if (f == MPC_NONE) {
		m->want = true;
		return 0;
	}
	struct mpc_frame *x = fr(p, f);
	if (x->state == MPC_ERROR)
		return x->err;
	if (x->state == MPC_LOADING) {
		m->want = true;
		return 0;
	}
	if (!m->relook)
		m->hits++;
	if (x->in_lru && m->lru_head != f) {
		lru_del(p, f);
		lru_add(p, f);
	}
	return 1;
}

int mpc_get(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint32_t f = m->pg_frame[pg];
	if (f != MPC_NONE)
		return mpc_peek(e, pg);
	if ((f = frame_take(p)) == MPC_NONE) {
		/* Every frame is dirty or in use: a checkpoint makes the dirty
		 * ones clean (plc_map_pressed). */
		m->want = m->want_frame = true;
		return 0;
	}
	if (!m->relook)
		m->misses++;
	struct mpc_frame *x = fr(p, f);
	m->gen++;
	x->page = pg;
	x->pins = 0;
	x->cow = MPC_NONE;
	x->dirty = x->pending = x->wb = x->in_lru = x->acq = false;
	m->pg_frame[pg] = f;
	m->resident++;
	peak_note(m);
	if (plc_bit(m->empty, pg)) {
		page_blank(p, f, pg);
		x->state = MPC_READY;
		mpc_settle(e, f);
		return 1;
	}
	/* Its newest copy: the slot it was last written to since the last
	 * commit, else the committed one. */
	uint32_t slot = plc_bit(p->newest, pg) ^ plc_bit(p->written, pg);
	x->state = MPC_LOADING;
	m->reads++;
	m->loading++;
	m->want = true;
	struct mpc_io *io = &m->io[f];
	io->iov.iov_base = m->data ? (void *)&m->data[f] : (void *)m->scratch;
	io->iov.iov_len = QS_BLOCK_SIZE;
	e->fast->ops->read(e->fast->ctx, (p->map_start + 2 * pg + slot) * QS_BLOCK_SIZE, &io->iov,
			   1, page_read_cb, io);
	return 0;
}

int mpc_pin(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint32_t f = m->pg_frame[pg];
	struct mpc_frame *x = fr(p, f);
	if (x->pending && x->cow == MPC_NONE) {
		if (m->cow_free == MPC_NONE) {
			m->want = m->want_frame = true;
			return -EAGAIN;
		}
		mpc_cow(e, pg);
	}
	if (!x->pins++)
		lru_del(p, f);
	m->pins++;
	m->gen++; /* the open record may now hold a waiter's pages */
	return 0;
}

void mpc_dirty(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	uint32_t f = p->mpc.pg_frame[pg];
	lru_del(p, f);
	fr(p, f)->dirty = true;
}

void mpc_hold(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	uint32_t f = p->mpc.pg_frame[pg];
	if (!fr(p, f)->pins++)
		lru_del(p, f);
}

void mpc_release(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	uint32_t f = p->mpc.pg_frame[pg];
	fr(p, f)->pins--;
	p->mpc.gen++;
	mpc_settle(e, f);
}

void mpc_unpin(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	uint32_t f = p->mpc.pg_frame[pg];
	fr(p, f)->pins--;
	p->mpc.pins--;
	p->mpc.gen++;
	mpc_settle(e, f);
}

void mpc_cow(struct qs_engine *e, uint64_t pg)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint32_t f = m->pg_frame[pg], c = m->cow_free;
	m->cow_free = fr(p, c)->next;
	fr(p, c)->state = MPC_COW;
	if (m->data)
		memcpy(&m->data[c], &m->data[f], QS_BLOCK_SIZE);
	fr(p, f)->cow = c;
	m->cows++;
	peak_note(m);
}

void mpc_cow_free(struct qs_engine *e, uint32_t f)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	uint32_t c = fr(p, f)->cow;
	fr(p, f)->cow = MPC_NONE;
	fr(p, c)->state = MPC_FREE;
	fr(p, c)->next = m->cow_free;
	m->cow_free = c;
	m->cows--;
	m->gen++;
}

void mpc_errors_release(struct qs_engine *e)
{
	struct plc *p = e->plc;
	struct mpc *m = &p->mpc;
	while (m->err_head != MPC_NONE) {
		uint32_t f = m->err_head;
		m->err_head = fr(p, f)->next;
		m->gen++;
		m->pg_frame[fr(p, f)->page] = MPC_NONE;
		m->resident--;
		frame_free(p, f);
	}
}
