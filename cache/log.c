/* SPDX-License-Identifier: MIT */
/*
 * The log writer: group commit, in-order completion, the VOID rewrite of a
 * failed record, applying completed records to the index, and the flush
 * pipeline.
 *
 * A write becomes one or more DATA extents of the open record (one record
 * carries many client writes, up to group_commit_blocks and 252 extents).
 * Records complete in sequence order even when the device completes them
 * out of order, so the index always reflects a prefix of the log: exactly
 * what recovery will rebuild. A client write is acknowledged once its
 * record and every record before it are written; it is durable only after
 * a later flush (or FUA), which the flush pipeline provides.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"
#include "qlcshape/crc32c.h"

/* ---- positions and the DRAM ring --------------------------------------- */

uint64_t eng_slot_to_pos(const struct qs_engine *e, uint32_t slot)
{
	uint64_t base = e->tail_pos - e->tail_pos % e->log_blocks;
	uint64_t pos = base + slot;
	if (pos < e->tail_pos)
		pos += e->log_blocks;
	return pos;
}

uint64_t eng_pos_off(const struct qs_engine *e, uint64_t pos)
{
	return (QS_FMT_LOG_START + pos % e->log_blocks) * QS_BLOCK_SIZE;
}


bool eng_ring_has(const struct qs_engine *e, uint64_t pos)
{
	return e->ring && pos >= e->ring_from && pos < e->ring_hi &&
	       e->ring_hi - pos <= e->ring_blocks;
}

unsigned char *eng_ring_at(const struct qs_engine *e, uint64_t pos)
{
	return e->ring + (pos % e->ring_blocks) * QS_BLOCK_SIZE;
}

static void ring_copy(struct qs_engine *e, uint64_t pos, const unsigned char *src,
		      uint64_t nblocks)
{
	for (uint64_t i = 0; i < nblocks && !e->no_data; i++)
		memcpy(eng_ring_at(e, pos + i), src + i * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	if (pos + nblocks > e->ring_hi)
		e->ring_hi = pos + nblocks;
}

/* ---- index maintenance --------------------------------------------------- */

/* Point lba's newest copy at val (a slot, maybe with SLOT_TOMB). */
void eng_index_set(struct qs_engine *e, uint64_t lba, uint32_t val)
{
	uint32_t old;
	int rc = qs_index_put(&e->idx, lba, val, &old);
	if (rc < 0) {
		eng_fail(e, "out of memory for the index");
		return;
	}
	if (rc == 1) {
		e->st.cached_blocks++;
		dst_diu_add(e, lba / e->iu_blocks);
	} else {
		e->seg_live[slot_seg(e, old)]--;
	}
	e->seg_live[slot_seg(e, val)]++;
}

void eng_index_drop(struct qs_engine *e, uint64_t lba)
{
	uint32_t old;
	if (!qs_index_del(&e->idx, lba, &old))
		return;
	e->seg_live[slot_seg(e, old)]--;
	e->st.cached_blocks--;
	dst_diu_sub(e, lba / e->iu_blocks);
}

void eng_index_drop_range(struct qs_engine *e, uint64_t lba, uint64_t n)
{
	uint64_t iu0 = lba / e->iu_blocks, iu1 = (lba + n + e->iu_blocks - 1) / e->iu_blocks;
	if (iu1 - iu0 <= 2ull * e->ndius + 4) {
		for (uint64_t iu = iu0; iu < iu1; iu++) {
			uint32_t d;
			if (!qs_index_get(&e->diu_map, iu, &d))
				continue;
			for (uint64_t b = iu * e->iu_blocks; b < (iu + 1) * e->iu_blocks; b++)
				if (b >= lba && b < lba + n)
					eng_index_drop(e, b);
		}
		return;
	}
	/* A range far larger than the dirty set: walk the dirty set instead. */
	for (uint32_t i = 0; i < e->diu_hw;) {
		struct diu *d = &e->dius[i];
		if (d->count && d->iu >= iu0 && d->iu < iu1) {
			uint64_t iu = d->iu;
			for (uint64_t b = iu * e->iu_blocks; b < (iu + 1) * e->iu_blocks; b++)
				if (b >= lba && b < lba + n)
					eng_index_drop(e, b);
			continue; /* slot i may now hold another IU; look again */
		}
		i++;
	}
}

void eng_apply_extent(struct qs_engine *e, const struct qs_fmt_extent *x,
		      uint64_t hdr_pos, uint64_t data_pos)
{
	switch (x->kind) {
	case QS_EXT_DATA:
		for (uint32_t i = 0; i < x->nblocks; i++)
			eng_index_set(e, x->lba + i, pos_slot(e, data_pos + i));
		break;
	case QS_EXT_ZERO:
		for (uint32_t i = 0; i < x->nblocks; i++)
			eng_index_set(e, x->lba + i, pos_slot(e, hdr_pos) | SLOT_TOMB);
		break;
	case QS_EXT_INVAL:
		eng_index_drop_range(e, x->lba, x->nblocks);
		break;
	case QS_EXT_TRIM:
		plc_apply(e, x, NULL, true);
		break;
	}
}

/*
 * A completed record's extents, in order. MAP and MOVE extents take their
 * payload from the next entry and change the map; in recovery (runtime
 * false) map changes leave the valid bitmap and band counts to the rebuild
 * at the end.
 */
void eng_apply_record(struct qs_engine *e, const struct qs_fmt_rec *h, uint64_t pos,
		      bool runtime)
{
	uint64_t data = pos + 1;
	if (e->plc)
		e->plc->apply_seq = h->seq;
	for (uint32_t i = 0; i < h->nextents; i++) {
		const struct qs_fmt_extent *x = &h->ext[i];
		if (x->kind == QS_EXT_MAP || x->kind == QS_EXT_MOVE) {
			struct qs_fmt_ext_phys py;
			memcpy(&py, &h->ext[++i], sizeof(py));
			plc_apply(e, x, &py, runtime);
			continue;
		}
		if (x->kind == QS_EXT_TRIM) {
			plc_apply(e, x, NULL, runtime);
			continue;
		}
		eng_apply_extent(e, x, pos, data);
		if (x->kind == QS_EXT_DATA)
			data += x->nblocks;
	}
}

/* ---- log writer ----------------------------------------------------------- */

static void rec_write_cb(void *arg, int res);

/* The open record, opened if needed; NULL when no record or no space. */
static struct rec *rec_open(struct qs_engine *e)
{
	if (e->open)
		return e->open;
	if (!e->free_recs)
		return NULL;
	uint64_t pos = e->alloc_pos;
	uint64_t off = pos % e->seg_blocks;
	if (e->seg_blocks - off < 2)
		pos += e->seg_blocks - off; /* records never cross segments */
	if (pos + 2 - e->tail_pos > e->log_blocks)
		return NULL;
	struct rec *r = e->free_recs;
	e->free_recs = r->next;
	r->next = NULL;
	r->pos = pos;
	r->seq = e->next_seq++;
	r->nblocks = 0;
	r->done = r->voiding = false;
	r->result = 0;
	r->iovcnt = 1;
	r->npins = 0;
	/* Timing only: the fixed fields are enough, the extents are filled
	 * one by one and nothing reads the unused ones. */
	memset(r->hdr, 0, e->no_data ? offsetof(struct qs_fmt_rec, ext) : sizeof(*r->hdr));
	r->prev_alloc = e->alloc_pos;
	if (pos % e->seg_blocks == 0)
		e->seg_first_seq[(pos / e->seg_blocks) % e->nsegs] = r->seq;
	e->alloc_pos = pos + 1;
	e->open = r;
	return r;
}

/* Blocks the open record can still take. */
static uint32_t rec_room(struct qs_engine *e, struct rec *r)
{
	if (r->hdr->nextents >= QS_FMT_REC_MAX_EXTENTS)
		return 0;
	uint64_t off = r->pos % e->seg_blocks;
	uint64_t room = e->seg_blocks - off - 1;
	if (room > e->conf.group_commit_blocks - 1)
		room = e->conf.group_commit_blocks - 1;
	room = room > r->nblocks ? room - r->nblocks : 0;
	/*
	 * Data may not use the last two segments of the log: they are kept
	 * for header-only records (tombstones, INVAL). A whole-IU write that
	 * already reached the QLC holds its IUs busy until its INVAL record is
	 * in the log; if data could fill the log, that record could wait for
	 * room that only destaging those very IUs would free.
	 */
	uint64_t end = r->pos + 1 + r->nblocks, used = end - e->tail_pos;
	uint64_t limit = e->win_blocks - 2ull * e->seg_blocks;
	uint64_t space;
	if (e->plc) {
		/* Each data block admitted brings its share of the map records
		 * that will destage it (see header_room). */
		uint64_t rsv = plc_log_reserve(e), per = e->plc->rsv_per_unit;
		limit = limit > rsv ? limit - rsv : 0;
		space = used < limit ? (limit - used) * e->iu_blocks / (e->iu_blocks + per) : 0;
	} else {
		space = used < limit ? limit - used : 0;
	}
	if (e->diu_max) {
		/* Each block admitted may be a dirty IU of its own; the records
		 * not yet applied count at their size. At the limit data waits,
		 * as for room, until destage frees records (dst_write_cb and
		 * log placement's units kick the waiters). */
		uint64_t pend = e->ndius + (e->alloc_pos - e->done_pos);
		uint64_t droom = pend < e->diu_max ? e->diu_max - pend : 0;
		space = space < droom ? space : droom;
	}
	return (uint32_t)(room < space ? room : space);
}

static void rec_close(struct qs_engine *e)
{
	struct rec *r = e->open;
	if (!r)
		return;
	e->open = NULL;
	if (!r->hdr->nextents) {
		/* Nothing in it: give back its position and sequence number
		 * (and any map page pinned for an extent that did not come). */
		if (e->plc)
			plc_rec_unpin(e, r);
		e->alloc_pos = r->prev_alloc;
		e->next_seq--;
		r->next = e->free_recs;
		e->free_recs = r;
		return;
	}
	r->next = NULL;
	if (e->fifo_tail)
		e->fifo_tail->next = r;
	else
		e->fifo_head = r;
	e->fifo_tail = r;
}

static void rec_add_extent(struct rec *r, uint64_t lba, uint32_t n, uint32_t kind,
			   struct req *q, const unsigned char *buf)
{
	uint32_t i = r->hdr->nextents++;
	r->hdr->ext[i].lba = lba;
	r->hdr->ext[i].nblocks = n;
	r->hdr->ext[i].kind = kind;
	r->ext_req[i] = q;
	r->ext_buf[i] = buf;
	if (kind == QS_EXT_DATA) {
		r->iov[r->iovcnt].iov_base = (void *)buf;
		r->iov[r->iovcnt].iov_len = (size_t)n * QS_BLOCK_SIZE;
		r->iovcnt++;
		r->nblocks += n;
	}
	q->pending++;
}

/*
 * May a header-only extent of this kind go into r? In log placement, MAP and
 * MOVE records always may: they are what lets destage and GC finish, and
 * the room they need is kept free by admitting data (and TRIMs) only while
 * the log, plus the map records that destaging everything cached would
 * take at worst, fits (plc_log_reserve). A record already open costs
 * nothing more.
 */
static bool header_room(struct qs_engine *e, const struct rec *r, uint32_t kind)
{
	if (!e->plc || r->hdr->nextents || kind == QS_EXT_MAP || kind == QS_EXT_MOVE)
		return true;
	uint64_t rsv = plc_log_reserve(e);
	return rsv < e->log_blocks && r->pos + 1 - e->tail_pos <= e->log_blocks - rsv;
}

/* A MAP or MOVE extent and its payload entry (owned by no request). */
static void rec_add_phys(struct rec *r, const struct plc_ext *px, struct req *q)
{
	uint32_t i = r->hdr->nextents;
	r->hdr->ext[i].lba = px->lba;
	r->hdr->ext[i].nblocks = px->n;
	r->hdr->ext[i].kind = px->kind;
	struct qs_fmt_ext_phys py = {px->phys, px->from};
	memcpy(&r->hdr->ext[i + 1], &py, sizeof(py));
	r->ext_req[i] = q;
	r->ext_req[i + 1] = NULL;
	r->ext_buf[i] = r->ext_buf[i + 1] = NULL;
	r->hdr->nextents += 2;
	q->pending++;
}

static void rec_submit(struct qs_engine *e, struct rec *r)
{
	struct qs_fmt_rec *h = r->hdr;
	h->magic = QS_FMT_REC_MAGIC;
	h->version = QS_FMT_VERSION;
	h->seq = r->seq;
	h->pos = r->pos;
	h->epoch = e->sb.epoch;
	h->nblocks = r->nblocks;
	uint32_t crc = 0;
	uint64_t p = r->pos + 1;
	for (int i = 1; i < r->iovcnt; i++) {
		if (!e->no_data)
			crc = qs_crc32c(crc, r->iov[i].iov_base, r->iov[i].iov_len);
		if (e->ring) {
			uint64_t n = r->iov[i].iov_len / QS_BLOCK_SIZE;
			ring_copy(e, p, r->iov[i].iov_base, n);
			p += n;
		}
	}
	h->data_crc = crc;
	if (!e->no_data)
		qs_fmt_rec_seal(h, e->seed);
	r->iov[0].iov_base = h;
	r->iov[0].iov_len = QS_BLOCK_SIZE;
	r->submitted = true;
	e->inflight_recs++;
	e->st.log_appends++;
	e->st.log_append_bytes += (uint64_t)(1 + r->nblocks) * QS_BLOCK_SIZE;
	e->fast->ops->write(e->fast->ctx, eng_pos_off(e, r->pos), r->iov, r->iovcnt, 0,
			    rec_write_cb, r);
}

/* Close the open batch when a write slot is free, and submit in order. */
void eng_log_kick(struct qs_engine *e)
{
	if (e->open && e->inflight_recs < e->conf.log_qd)
		rec_close(e);
	for (struct rec *r = e->fifo_head; r && e->inflight_recs < e->conf.log_qd; r = r->next)
		if (!r->submitted)
			rec_submit(e, r);
}

/* Append what r still has to log; false if it must wait for room. */
bool eng_log_append(struct qs_engine *e, struct req *r)
{
	for (;;) {
		uint64_t lba, n;
		uint32_t kind;
		const unsigned char *buf = NULL;
		if (r->type == REQ_WRITE && r->appended < r->nblocks && !r->qop_ius) {
			lba = r->lba + r->appended;
			n = r->nblocks - r->appended;
			buf = r->buf + r->appended * QS_BLOCK_SIZE;
			kind = QS_EXT_DATA;
		} else if (r->px_done < r->px_n) {
			/* MAP or MOVE: the extent and its payload, in one record */
			struct rec *rec = rec_open(e);
			if (!rec) {
				e->log_full = e->free_recs != NULL;
				return false;
			}
			if (rec->hdr->nextents + 2 > QS_FMT_REC_MAX_EXTENTS) {
				rec_close(e);
				continue;
			}
			if (!header_room(e, rec, r->px[r->px_done].kind)) {
				rec_close(e); /* empty: gives its position back */
				e->log_full = true;
				return false;
			}
			int pin = plc_rec_pin(e, r, rec, r->px + r->px_done, r->px_n - r->px_done);
			if (pin == -ENOSPC) {
				rec_close(e);
				continue;
			}
			if (pin < 0) {
				/* A map page could not be read: the unit fails and
				 * is retried; its extents logged so far stand. */
				if (!r->result)
					r->result = pin;
				r->px_done = r->px_n;
				return true;
			}
			if (!pin)
				return false; /* its map pages are coming */
			/* The pages of every extent left are pinned: add all
			 * that fit, not one a pass (a pass recounts the pages
			 * of all that are left: 36% of log placement's
			 * simulation time went there). */
			do
				rec_add_phys(rec, &r->px[r->px_done++], r);
			while (r->px_done < r->px_n &&
			       rec->hdr->nextents + 2 <= QS_FMT_REC_MAX_EXTENTS);
			continue;
		} else if (r->zero_n[0] || r->zero_n[1]) {
			int k = r->zero_n[0] ? 0 : 1;
			lba = r->zero_lba[k];
			n = r->zero_n[k];
			kind = e->plc ? QS_EXT_TRIM : QS_EXT_ZERO;
		} else if (r->inval_todo) {
			lba = r->qop_iu * e->iu_blocks;
			n = r->qop_ius * e->iu_blocks;
			kind = QS_EXT_INVAL;
		} else {
			return true;
		}
		struct rec *rec = rec_open(e);
		if (!rec) {
			/* With a free record slot, what is missing is room. */
			e->log_full = e->free_recs != NULL;
			return false;
		}
		if (kind == QS_EXT_DATA) {
			uint32_t room = rec_room(e, rec);
			if (!room) {
				if (!rec->hdr->nextents) {
					e->log_full = true; /* an empty record has no room */
					return false;
				}
				rec_close(e);
				continue;
			}
			if (n > room)
				n = room;
			r->appended += n;
		} else {
			if (rec->hdr->nextents >= QS_FMT_REC_MAX_EXTENTS) {
				rec_close(e);
				continue;
			}
			if (!header_room(e, rec, kind)) {
				rec_close(e);
				e->log_full = true;
				return false;
			}
			/* Extents longer than 32 bits of blocks are split. */
			if (n > UINT32_MAX)
				n = UINT32_MAX & ~(uint64_t)(e->iu_blocks - 1);
			if (kind == QS_EXT_TRIM) {
				/* and a TRIM's map pages must fit in DRAM at once */
				n = plc_trim_clip(e, lba, n);
				struct plc_ext t = {.lba = lba, .n = (uint32_t)n, .kind = kind};
				int pin = plc_rec_pin(e, r, rec, &t, 1);
				if (pin == -ENOSPC) {
					rec_close(e);
					continue;
				}
				if (pin < 0) {
					/* The rest of the discard fails: each block
					 * reads as before or as zeroes. */
					if (!r->result)
						r->result = -EIO;
					r->zero_n[0] = r->zero_n[1] = 0;
					return true;
				}
				if (!pin)
					return false;
			}
			if (kind == QS_EXT_ZERO || kind == QS_EXT_TRIM) {
				int k = r->zero_n[0] ? 0 : 1;
				r->zero_lba[k] += n;
				r->zero_n[k] -= n;
			} else {
				r->inval_pending++;
				r->inval_done += n;
				if (r->inval_done >= r->qop_ius * e->iu_blocks)
					r->inval_todo = false;
				lba += r->inval_done - n;
			}
		}
		rec_add_extent(rec, lba, (uint32_t)n, kind, r, buf);
		e->alloc_pos = rec->pos + 1 + rec->nblocks;
	}
}

static bool wants_data(const struct req *r)
{
	return r->type == REQ_WRITE && !r->qop_ius && r->appended < r->nblocks;
}

/* A discard whose ZERO extents (partial IUs) are not all logged yet. */
static bool wants_zero(const struct req *r)
{
	return r->type == REQ_DISCARD && (r->zero_n[0] || r->zero_n[1]);
}

/* ---- write pacing ------------------------------------------------------------ */

/*
 * Why pacing: without it writers run at full speed until the log is full,
 * then queue for the room the next checkpoint frees. Room comes back in
 * chunks, a checkpoint at a time, so some writes wait a whole destage and
 * checkpoint cycle while others go at once: in place, 4 KiB random writes
 * over a whole drive had p99 94 ms and p99.9 194 ms against the raw
 * drive's 30 and 40 ms (docs/BENCH.md, Tails). From the paced band's start
 * on, writes with data wait in the space queue and go in steps (the timer,
 * at most PACE_STEP_NS apart), as many as a token bucket allows. It fills
 * at the rate checkpoints have been freeing the log, twice that at the
 * band's start and nothing at full, so the log settles near the middle of
 * the band, its intake matched to what destage frees, and no write waits
 * for a whole cycle. The band lies above urgent_pct, where destage runs at
 * full depth, so pacing evens out the waits without lowering what destage
 * takes. Writes go in steps, not one by one, so that they share log
 * records: letting each in as its turn came gave most writes a record of
 * their own, a header block each, and cost 4K random writes over 5% of the
 * drive up to 13% of their rate.
 */
#define PACE_STEP_NS 500000ull	    /* paced writes go in steps at most this often */
#define PACE_WINDOW_NS 500000000ull /* the free rate's window, then smoothed */
#define PACE_MAX_DT_NS 100000000ull /* the most one bucket fill counts */

/*
 * The log use at which writes with data must wait for room: the whole log
 * in place (the two segments kept for header-only records are too few to
 * matter); with log placement, less the map records' reserve (rec_room,
 * plc_log_reserve), which grows with what is cached: with 4 KiB random
 * writes over a whole drive data met that limit at about 77% of the log,
 * so a band at 95% of the whole log never paced, and one write in a
 * thousand waited 45 ms for room (docs/BENCH.md, The map in bounded DRAM).
 */
static uint64_t pace_full(const struct qs_engine *e)
{
	if (!e->plc)
		return e->win_blocks;
	uint64_t limit = e->win_blocks - 2ull * e->seg_blocks, rsv = plc_log_reserve(e);
	return limit > rsv ? limit - rsv : 0;
}

/* First block of the paced band: pace_pct of pace_full, never below
 * urgent_pct (below it destage is not at full depth, and pacing would hold
 * writes under what destage could take); log_blocks: no band. */
static uint64_t pace_start(const struct qs_engine *e)
{
	const struct qs_policy *p = &e->conf.policy;
	uint32_t pct = p->pace_pct > p->urgent_pct ? p->pace_pct : p->urgent_pct;
	return p->pace_pct && pct < 100 ? pace_full(e) / 100 * pct : e->log_blocks;
}

uint64_t eng_pace_band(const struct qs_engine *e)
{
	uint64_t full = pace_full(e), start = pace_start(e);
	return full > start ? full - start : 0;
}

bool eng_pace_on(const struct qs_engine *e)
{
	return e->pace_in && e->alloc_pos - e->tail_pos >= pace_start(e);
}

/* Where used (at least the band's start) lies in the band: 0 at its
 * start, 1 at full. */
static double pace_level(const struct qs_engine *e, uint64_t used)
{
	uint64_t start = pace_start(e), full = pace_full(e);
	if (used >= full || full <= start)
		return 1.0;
	return (double)(used - start) / (double)(full - start);
}

/* The rate the bucket fills at, blocks per ns, at level (pace_level). */
static double pace_rate(const struct qs_engine *e, double level)
{
	return e->pace_free * 2.0 * (1.0 - level);
}

/* The bucket holds a record's worth, or four steps' worth if more. */
static double pace_burst(const struct qs_engine *e)
{
	double steps = e->pace_free * 4.0 * (double)PACE_STEP_NS;
	return steps > e->conf.group_commit_blocks ? steps : (double)e->conf.group_commit_blocks;
}

void eng_pace_freed(struct qs_engine *e, uint64_t blocks)
{
	if (pace_start(e) == e->log_blocks)
		return;
	uint64_t now = eng_now(e);
	if (!e->pace_win_ns) {
		e->pace_win_ns = now ? now : 1; /* the first checkpoint starts a window */
		return;
	}
	e->pace_win_blocks += blocks;
	uint64_t span = now - e->pace_win_ns;
	if (span < PACE_WINDOW_NS)
		return;
	if (span > 4 * PACE_WINDOW_NS) {
		/* Checkpoints were far apart (the engine was idle, or below
		 * any pressure): not the rate under load. Start again. */
		e->pace_win_ns = now;
		e->pace_win_blocks = 0;
		return;
	}
	double r = (double)e->pace_win_blocks / (double)span;
	e->pace_free = e->pace_free ? 0.8 * e->pace_free + 0.2 * r : r;
	e->pace_win_ns = now;
	e->pace_win_blocks = 0;
}

static void pace_fill(struct qs_engine *e, uint64_t now, double level)
{
	uint64_t dt = now > e->pace_last_ns ? now - e->pace_last_ns : 0;
	if (dt > PACE_MAX_DT_NS)
		dt = PACE_MAX_DT_NS;
	e->pace_last_ns = now;
	e->pace_tokens += pace_rate(e, level) * (double)dt;
	if (e->pace_tokens > pace_burst(e))
		e->pace_tokens = pace_burst(e);
}

bool eng_pace_admit(struct qs_engine *e, struct req *r)
{
	if (r->paced || !wants_data(r))
		return true;
	uint64_t used = e->alloc_pos - e->tail_pos;
	/* Below the band, or before a free rate is known: no pacing, and no
	 * clock read on the write path. */
	if (used < pace_start(e) || !e->pace_free) {
		e->pace_in = false;
		return true;
	}
	/*
	 * At the top of the band (the bucket all but stops) or with destage
	 * failing, writes go to the log as without pacing: they wait for room
	 * there, and fail with EIO if destage keeps failing with the log full
	 * (eng_space_kick). Held here instead, they would wait for ever.
	 */
	double level = pace_level(e, used);
	if (level >= 0.98 || e->dst_fail_streak >= DST_FAIL_GIVE_UP)
		return true;
	uint64_t now = eng_now(e);
	if (!e->pace_in) {
		e->pace_in = true; /* entering the band: a full bucket */
		e->pace_last_ns = now;
		e->pace_tokens = pace_burst(e);
	}
	pace_fill(e, now, level);
	uint64_t n = r->nblocks - r->appended;
	double need = (double)n < pace_burst(e) ? (double)n : pace_burst(e);
	if (e->pace_stepping && e->pace_tokens >= need) {
		e->pace_tokens -= (double)n; /* a large write may take it below 0 */
		r->paced = true;
		return true;
	}
	if (!r->pace_held) {
		r->pace_held = true;
		e->st.paced_writes++;
	}
	/* The next step, or later if the bucket needs longer to hold it. */
	double rate = pace_rate(e, level);
	double wait = e->pace_tokens >= need ? 0
		      : rate > 0 ? (need - e->pace_tokens) / rate : (double)PACE_STEP_NS;
	uint64_t at = now + (uint64_t)wait, next = e->pace_step_ns + PACE_STEP_NS;
	e->pace_wake_ns = at > next ? at : next;
	e->pace_held = true;
	return false;
}

void eng_pace_step(struct qs_engine *e)
{
	e->pace_step_ns = eng_now(e);
	e->pace_stepping = true;
	eng_space_kick(e);
	e->pace_stepping = false;
}

/*
 * Park r until log room or a record slot frees up; it keeps one pending
 * part meanwhile. Only a wait for room counts as a throttled write.
 */
void eng_space_wait(struct qs_engine *e, struct req *r)
{
	if (wants_data(r) && e->log_full)
		e->st.throttled_writes++;
	r->waiting = true;
	r->next = NULL;
	if (e->space_tail)
		e->space_tail->next = r;
	else
		e->space_head = r;
	e->space_tail = r;
	/* Destage has given up for now and the log is full: no completion
	 * may come to kick the queue, so it fails what waits for room now
	 * (eng_space_kick says why). */
	if (e->log_full && e->dst_fail_streak >= DST_FAIL_GIVE_UP && !e->space_kicking)
		eng_space_kick(e);
}

/*
 * Resume requests that wait for log room. Writes with data go in arrival
 * order; header-only appends (tombstones, INVAL) are never held behind a
 * write that does not fit, since they may use the reserve and are what
 * frees the log in the first place.
 */
void eng_space_kick(struct qs_engine *e)
{
	struct req **pp = &e->space_head, *last = NULL;
	bool data_blocked = false;
	e->log_full = false; /* the appends below say again */
	e->pace_held = false;
	e->space_kicking = true; /* what it releases may queue again: not a second walk */
	while (*pp) {
		struct req *r = *pp;
		bool done;
		if (e->failed) {
			r->inval_todo = false;
			if (r->qop_stage == QOP_INVAL) {
				/* its QLC op is done; nothing will log its INVAL */
				r->qop_stage = QOP_DONE;
				eng_qop_release(e, r);
				eng_req_part_done(e, r, -EIO);
			}
			done = true;
		} else if (wants_data(r) && data_blocked) {
			done = false;
		} else if (!eng_pace_admit(e, r)) {
			done = false;
			data_blocked = true; /* later writes take later turns */
		} else {
			done = eng_log_append(e, r);
			if (!done && wants_data(r))
				data_blocked = true;
		}
		if (!done && (wants_data(r) || wants_zero(r)) && e->log_full &&
		    e->dst_fail_streak >= DST_FAIL_GIVE_UP) {
			/*
			 * The log is full and destage keeps failing (the QLC is
			 * failing): waiting would hang the block device. The write
			 * fails instead; everything cached stays cached and is
			 * retried, and writes flow again once a destage succeeds.
			 * So does a discard's part that needs log room (the ZERO
			 * extents of partial IUs): it waited for ever before
			 * (test_engine test_pacing); a failed discard leaves each
			 * block old or zero.
			 */
			if (!r->result)
				r->result = -EIO;
			done = true;
		}
		if (!done) {
			last = r;
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		r->waiting = false;
		plc_acq_drop(e, r); /* failed, or its pages pinned already */
		eng_req_part_done(e, r, e->failed ? -EIO : 0); /* the "waiting" part */
	}
	e->space_tail = last;
	e->space_kicking = false;
	eng_log_kick(e);
}


/* Fail every request in a record that cannot be recovered. */
static void rec_fail_reqs(struct qs_engine *e, struct rec *r)
{
	for (uint32_t i = 0; i < r->hdr->nextents; i++) {
		struct req *q = r->ext_req[i];
		if (!q)
			continue; /* a MAP or MOVE payload */
		if (r->hdr->ext[i].kind == QS_EXT_INVAL)
			eng_qop_finish(e, q, -EIO);
		else
			eng_req_part_done(e, q, -EIO);
	}
	r->hdr->nextents = 0;
}

static void rec_retire(struct qs_engine *e, struct rec *r)
{
	if (e->plc)
		plc_rec_unpin(e, r);
	e->done_pos = r->pos + 1 + r->nblocks;
	e->done_seq = r->seq + 1;
	e->fifo_head = r->next;
	if (!e->fifo_head)
		e->fifo_tail = NULL;
	r->submitted = false;
	r->next = e->free_recs;
	e->free_recs = r;
}

/*
 * Applying a record's extents costs, per block, a few cache misses one
 * after the other (its index slot, its IU's map slot, its IU's record).
 * Asking for the first two of every block up front lets them overlap, then
 * for the IU records, whose slots the (now cached) map gives. A hint only:
 * nothing here changes state.
 */
#define PREFETCH_BLOCKS 64u
static void prefetch_extents(struct qs_engine *e, const struct rec *r)
{
	const struct qs_fmt_rec *h = r->hdr;
	uint32_t n = 0;
	for (uint32_t i = 0; i < h->nextents && n < PREFETCH_BLOCKS; i++) {
		const struct qs_fmt_extent *x = &h->ext[i];
		if (x->kind != QS_EXT_DATA)
			continue;
		for (uint32_t b = 0; b < x->nblocks && n < PREFETCH_BLOCKS; b++, n++) {
			qs_index_prefetch(&e->idx, x->lba + b);
			if (b == 0 || (x->lba + b) % e->iu_blocks == 0)
				qs_index_prefetch(&e->diu_map, (x->lba + b) / e->iu_blocks);
		}
	}
	n = 0;
	for (uint32_t i = 0; i < h->nextents && n < PREFETCH_BLOCKS; i++, n++) {
		const struct qs_fmt_extent *x = &h->ext[i];
		uint32_t d;
		if (x->kind == QS_EXT_DATA && qs_index_get(&e->diu_map, x->lba / e->iu_blocks, &d))
			__builtin_prefetch(&e->dius[d], 1);
	}
}

static void rec_complete_in_order(struct qs_engine *e)
{
	struct rec *r;
	while ((r = e->fifo_head) && r->done) {
		if (e->failed) {
			rec_fail_reqs(e, r);
		} else if (r->result < 0 && !r->voiding) {
			/*
			 * The record's write failed: its requests fail, and a VOID
			 * header of the same length takes its place so that the
			 * records after it stay reachable by recovery. Until the
			 * VOID header is written, nothing after it is acknowledged.
			 */
			rec_fail_reqs(e, r);
			struct qs_fmt_rec *h = r->hdr;
			memset(h, 0, sizeof(*h));
			h->magic = QS_FMT_REC_MAGIC;
			h->version = QS_FMT_VERSION;
			h->flags = QS_REC_VOID;
			h->seq = r->seq;
			h->pos = r->pos;
			h->epoch = e->sb.epoch;
			h->nblocks = r->nblocks;
			qs_fmt_rec_seal(h, e->seed);
			r->voiding = true;
			r->done = false;
			r->iov[0].iov_base = h;
			r->iov[0].iov_len = QS_BLOCK_SIZE;
			e->inflight_recs++;
			e->fast->ops->write(e->fast->ctx, eng_pos_off(e, r->pos), r->iov, 1,
					    0, rec_write_cb, r);
			return;
		} else if (r->result < 0) {
			eng_fail(e, "a log write and its VOID rewrite both failed");
			continue; /* loop again: fails this record's (empty) requests */
		} else if (!r->voiding) {
			prefetch_extents(e, r);
			eng_apply_record(e, r->hdr, r->pos, true);
			for (uint32_t i = 0; i < r->hdr->nextents; i++) {
				if (!r->ext_req[i])
					continue; /* a MAP or MOVE payload */
				if (r->hdr->ext[i].kind == QS_EXT_INVAL)
					eng_qop_finish(e, r->ext_req[i], 0);
				else
					eng_req_part_done(e, r->ext_req[i], 0);
			}
		}
		rec_retire(e, r);
	}
}

static void rec_write_cb(void *arg, int res)
{
	struct rec *r = arg;
	struct qs_engine *e = r->owner;
	eng_enter(e);
	e->inflight_recs--;
	if (res < 0) {
		e->st.fast_errors++;
		eng_log(e, QS_LOG_ERR, "log write at block %llu failed: %s",
			(unsigned long long)(eng_pos_off(e, r->pos) / QS_BLOCK_SIZE),
			strerror(-res));
	}
	r->done = true;
	r->result = res;
	rec_complete_in_order(e);
	if (e->failed) {
		/* Nothing queued behind a broken log can be acknowledged. */
		while (e->fifo_head && !e->fifo_head->submitted) {
			struct rec *q = e->fifo_head;
			rec_fail_reqs(e, q);
			rec_retire(e, q);
		}
		if (e->open) {
			rec_fail_reqs(e, e->open);
			rec_close(e);
		}
	}
	plc_pages_kick(e); /* the records' pages unpinned */
	eng_space_kick(e);
	dst_kick(e);
	ckpt_kick(e, false);
	eng_leave_deliver(e);
}

/* ---- flush pipeline ------------------------------------------------------- */

static void flush_kick(struct qs_engine *e);

static void flush_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		e->st.fast_errors++;
		eng_log(e, QS_LOG_ERR, "log device flush failed: %s", strerror(-res));
	}
	struct req *r = e->flush_cur;
	e->flush_cur = NULL;
	e->flush_inflight = false;
	if (res >= 0 && e->flush_seq > e->durable_seq) {
		e->durable_seq = e->flush_seq;
		plc_durable(e);
	}
	while (r) {
		struct req *n = r->next;
		if (res < 0 && !r->result)
			r->result = res;
		eng_req_done(e, r);
		r = n;
	}
	flush_kick(e);
	eng_leave_deliver(e);
}

static void flush_kick(struct qs_engine *e)
{
	if (e->flush_inflight || !e->flush_next)
		return;
	e->flush_cur = e->flush_next;
	e->flush_next = NULL;
	e->flush_inflight = true;
	e->flush_seq = e->done_seq; /* what this flush makes durable */
	e->st.log_flushes++;
	e->fast->ops->flush(e->fast->ctx, flush_cb, e);
}

/*
 * r completes once everything completed before now is durable on the log
 * device: at once when the device has no volatile cache, else after a
 * device flush issued after now (a flush already in flight may have been
 * issued before some of those completions, so r waits for the next one).
 */
void eng_flush_enqueue(struct qs_engine *e, struct req *r)
{
	if (e->failed && !r->result)
		r->result = -EIO;
	if (!(e->fast->flags & QS_VOL_VOLATILE_CACHE) || r->result) {
		eng_req_done(e, r);
		return;
	}
	r->next = e->flush_next;
	e->flush_next = r;
	flush_kick(e);
}

uint64_t eng_durable_seq(const struct qs_engine *e)
{
	return (e->fast->flags & QS_VOL_VOLATILE_CACHE) ? e->durable_seq : e->done_seq;
}
