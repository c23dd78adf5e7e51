/* SPDX-License-Identifier: MIT */
/*
 * The engine's client path and log writer.
 *
 * Write (shaping on): a write is appended to the open log record (group
 * commit: one record carries many client writes, up to group_commit_blocks
 * and 252 extents) and completes when that record, and every record before
 * it, is written. Records complete in sequence order even when the device
 * completes them out of order, so the index always reflects a prefix of the
 * log: exactly what recovery will rebuild. The write is acknowledged before
 * it is durable; a later flush (or FUA) makes it durable.
 *
 * Whole-IU writes above bypass_min_bytes go straight to the QLC (a "qop"),
 * and so do the whole-IU part of discards. See qop_* for how they are
 * ordered against cached copies and destage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"
#include "qlcshape/crc32c.h"

static void qop_release(struct qs_engine *e, struct req *r);

/* ---- environment helpers ---------------------------------------------- */

void *eng_alloc(struct qs_engine *e, size_t size, size_t align)
{
	return e->env.ops->alloc(e->env.ctx, size ? size : 1, align < 16 ? 16 : align);
}

void eng_free(struct qs_engine *e, void *p)
{
	if (p)
		e->env.ops->free(e->env.ctx, p);
}

void eng_log(struct qs_engine *e, enum qs_log_level lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!e->env.ops->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->env.ops->log(e->env.ctx, lvl, msg);
}

uint64_t eng_now(struct qs_engine *e)
{
	return e->env.ops->now_ns(e->env.ctx);
}

uint32_t eng_ms(struct qs_engine *e)
{
	return (uint32_t)((eng_now(e) - e->t0_ns) / 1000000u);
}

/* True when no client request has arrived for idle_ms. Requests are only
 * counted; the clock is read here, on the timer and completion paths. */
bool eng_idle(struct qs_engine *e, uint64_t now)
{
	if (!e->conf.policy.idle_ms)
		return false;
	if (e->client_seq != e->idle_seq) {
		e->idle_seq = e->client_seq;
		e->idle_since_ns = now;
		return false;
	}
	return now - e->idle_since_ns >= (uint64_t)e->conf.policy.idle_ms * 1000000u;
}

/* ---- configuration ------------------------------------------------------ */

void qs_engine_conf_default(struct qs_engine_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = QS_MODE_CACHE;
	c->iu_bytes = 65536;
	c->segment_blocks = 256;      /* 1 MiB */
	c->group_commit_blocks = 256; /* 1 MiB records */
	c->log_qd = 4;
	c->destage_qd = 16;
	c->dram_buffer_bytes = 64ull << 20;
	c->bypass_min_bytes = 0;
	c->policy.order = QS_ORDER_SWEEP;
	c->policy.partial = QS_PARTIAL_FILL;
	c->policy.hold_ms = 1000;
	c->policy.start_pct = 50;
	c->policy.urgent_pct = 85;
	c->policy.idle_ms = 2000;
	c->policy.max_age_ms = 0;
}

int qs_engine_conf_check(const struct qs_engine_conf *c, struct qs_conf_err *err)
{
#define BAD(f, ...) do { if (err) { err->field = QS_CONF_FIELD_##f; \
	snprintf(err->msg, sizeof(err->msg), __VA_ARGS__); } return -EINVAL; } while (0)
	if (c->mode != QS_MODE_CACHE && c->mode != QS_MODE_PASSTHROUGH)
		BAD(MODE, "mode %d: must be cache or passthrough", (int)c->mode);
	if (c->iu_bytes < QS_CONF_IU_MIN || (c->iu_bytes & (c->iu_bytes - 1)) ||
	    c->iu_bytes > QS_CONF_IU_MAX)
		BAD(IU_BYTES, "iu_bytes %u: must be a power of two from %u to %u", c->iu_bytes,
		    QS_CONF_IU_MIN, QS_CONF_IU_MAX);
	if (c->segment_blocks < QS_CONF_SEGMENT_BLOCKS_MIN ||
	    c->segment_blocks > QS_CONF_SEGMENT_BLOCKS_MAX)
		BAD(SEGMENT_BLOCKS, "segment_blocks %u: must be %u to %u", c->segment_blocks,
		    QS_CONF_SEGMENT_BLOCKS_MIN, QS_CONF_SEGMENT_BLOCKS_MAX);
	if (c->group_commit_blocks < 2 || c->group_commit_blocks > c->segment_blocks)
		BAD(GROUP_COMMIT_BLOCKS, "group_commit_blocks %u: must be 2 to segment_blocks (%u)",
		    c->group_commit_blocks, c->segment_blocks);
	if (c->log_qd < 1 || c->log_qd > QS_CONF_LOG_QD_MAX)
		BAD(LOG_QD, "log_qd %u: must be 1 to %u", c->log_qd, QS_CONF_LOG_QD_MAX);
	if (c->destage_qd < 1 || c->destage_qd > QS_CONF_DESTAGE_QD_MAX)
		BAD(DESTAGE_QD, "destage_qd %u: must be 1 to %u", c->destage_qd,
		    QS_CONF_DESTAGE_QD_MAX);
	if (c->dram_buffer_bytes % QS_BLOCK_SIZE)
		BAD(DRAM_BUFFER_BYTES, "dram_buffer_bytes %llu: must be a multiple of 4096",
		    (unsigned long long)c->dram_buffer_bytes);
	if (c->bypass_min_bytes && c->bypass_min_bytes % c->iu_bytes)
		BAD(BYPASS_MIN_BYTES,
		    "bypass_min_bytes %llu: must be 0 (off) or a multiple of iu_bytes (%u)",
		    (unsigned long long)c->bypass_min_bytes, c->iu_bytes);
	if (c->qlc_size % c->iu_bytes)
		BAD(QLC_SIZE, "qlc_size %llu: must be a multiple of iu_bytes (%u)",
		    (unsigned long long)c->qlc_size, c->iu_bytes);
	const struct qs_policy *p = &c->policy;
	if (p->order > QS_ORDER_FULLEST)
		BAD(POLICY_ORDER, "policy order %d: must be fifo, sweep or fullest", (int)p->order);
	if (p->partial > QS_PARTIAL_HOLD)
		BAD(POLICY_PARTIAL, "partial %d: must be fill or hold", (int)p->partial);
	if (p->start_pct > 100 || p->urgent_pct > 100 || p->start_pct > p->urgent_pct)
		BAD(POLICY_WATERMARKS,
		    "watermarks start %u%%, urgent %u%%: need 0 <= start <= urgent <= 100",
		    p->start_pct, p->urgent_pct);
	return 0;
#undef BAD
}

static const char *const order_names[] = {"fifo", "sweep", "fullest"};

int qs_policy_parse_order(const char *name, enum qs_order *order)
{
	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(name, order_names[i])) {
			*order = (enum qs_order)i;
			return 0;
		}
	return -EINVAL;
}

const char *qs_policy_order_name(enum qs_order order)
{
	return order <= QS_ORDER_FULLEST ? order_names[order] : "?";
}

/* ---- requests, completion delivery, timer -------------------------------- */

struct req *eng_req_alloc(struct qs_engine *e)
{
	struct req *r = e->free_reqs;
	if (r)
		e->free_reqs = r->next;
	else if (!(r = eng_alloc(e, sizeof(*r), 16)))
		return NULL;
	memset(r, 0, sizeof(*r));
	r->all_next = e->all_reqs;
	if (e->all_reqs)
		e->all_reqs->all_prev = r;
	e->all_reqs = r;
	return r;
}

void eng_req_free(struct qs_engine *e, struct req *r)
{
	if (r->all_prev)
		r->all_prev->all_next = r->all_next;
	else
		e->all_reqs = r->all_next;
	if (r->all_next)
		r->all_next->all_prev = r->all_prev;
	r->next = e->free_reqs;
	e->free_reqs = r;
}

/* Queue r's completion; it is delivered when the engine unwinds. */
void eng_req_done(struct qs_engine *e, struct req *r)
{
	r->next = NULL;
	if (e->ready_tail)
		e->ready_tail->next = r;
	else
		e->ready_head = r;
	e->ready_tail = r;
}

/*
 * Deliver an engine-level completion (open, drain, close) the way client
 * completions are delivered: queued, and called when the engine unwinds.
 * Only when not even a request can be allocated is cb called at once.
 */
void eng_notify(struct qs_engine *e, qs_req_cb cb, void *arg, int res)
{
	struct req *r = eng_req_alloc(e);
	if (!r) {
		cb(arg, res);
		return;
	}
	r->type = REQ_INTERNAL;
	r->cb = cb;
	r->arg = arg;
	r->result = res;
	eng_req_done(e, r);
}

static void flush_enqueue(struct qs_engine *e, struct req *r);

static void req_finish(struct qs_engine *e, struct req *r)
{
	/*
	 * FUA: the data is in the log (or on the QLC, with its INVAL record in
	 * the log); a flush of the log device then makes it and every write
	 * before it durable. A record alone is not enough: recovery stops at
	 * the first missing record, so durability must cover the prefix.
	 */
	if (r->type == REQ_WRITE && !r->result && (r->flags & QS_WRITE_FUA) &&
	    e->conf.mode == QS_MODE_CACHE && !r->fua_flushing) {
		r->fua_flushing = true;
		flush_enqueue(e, r);
		return;
	}
	eng_req_done(e, r);
}

void eng_req_part_done(struct qs_engine *e, struct req *r, int result)
{
	if (result < 0 && !r->result)
		r->result = result;
	if (--r->pending == 0)
		req_finish(e, r);
}

void eng_enter(struct qs_engine *e)
{
	e->depth++;
}

void eng_arm_timer(struct qs_engine *e)
{
	uint64_t at = 0;
	if (e->ready_head)
		at = eng_now(e);
	else if (e->ready)
		at = dst_next_deadline(e);
	if (at != e->timer_at) {
		e->timer_at = at;
		e->env.ops->timer_set(e->env.ctx, at);
	}
}

static void deliver(struct qs_engine *e)
{
	while (e->ready_head) {
		struct req *r = e->ready_head;
		e->ready_head = r->next;
		if (!e->ready_head)
			e->ready_tail = NULL;
		qs_req_cb cb = r->cb;
		void *arg = r->arg;
		int res = r->result;
		if (r->type != REQ_INTERNAL) {
			e->st.inflight--;
			if (res < 0)
				e->st.client_errors++;
		}
		eng_req_free(e, r);
		if (cb)
			cb(arg, res);
	}
}

/* Leave an engine entry point. Completions are delivered only when leaving
 * the outermost entry of a completion or timer path (deliver == true), so a
 * client callback never runs inside the submission that started it. */
void eng_leave(struct qs_engine *e)
{
	e->depth--;
}

void eng_leave_deliver(struct qs_engine *e)
{
	if (e->depth == 1)
		deliver(e);
	e->depth--;
	if (e->depth == 0) {
		eng_check_drain(e);
		eng_maybe_finish_close(e);
		if (e->ready_head) {
			/* a drain that just finished, or close: deliver now */
			e->depth++;
			deliver(e);
			e->depth--;
		}
		if (e->depth == 0)
			eng_arm_timer(e);
	}
}

/*
 * Leaving a submission: only completions queued by it need the timer now.
 * Deadlines (hold, age, idle, retries) are set when completions arrive; a
 * submission can only make them later, and an early timer merely looks
 * and re-arms. This keeps clock reads off the per-request path.
 */
static void leave_submit(struct qs_engine *e)
{
	e->depth--;
	if (e->depth == 0 && e->ready_head)
		eng_arm_timer(e);
}

void qs_engine_timer(struct qs_engine *e)
{
	e->timer_at = 0;
	eng_enter(e);
	if (e->ready && !e->closed) {
		dst_kick(e);
		ckpt_kick(e, false);
	}
	eng_leave_deliver(e);
}

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

static inline uint32_t pos_slot(const struct qs_engine *e, uint64_t pos)
{
	return (uint32_t)(pos % e->log_blocks);
}

static inline uint64_t slot_seg(const struct qs_engine *e, uint32_t slot)
{
	return (slot & SLOT_MASK) / e->seg_blocks;
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

void eng_fail(struct qs_engine *e, const char *why)
{
	if (!e->failed)
		eng_log(e, QS_LOG_ERR, "engine failed: %s; writes now fail with EIO", why);
	e->failed = true;
	e->st.failed = true;
}

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

static void index_drop_range(struct qs_engine *e, uint64_t lba, uint64_t n)
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
		index_drop_range(e, x->lba, x->nblocks);
		break;
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
	uint64_t limit = e->log_blocks - 2ull * e->seg_blocks;
	uint64_t space = used < limit ? limit - used : 0;
	return (uint32_t)(room < space ? room : space);
}

static void rec_close(struct qs_engine *e)
{
	struct rec *r = e->open;
	if (!r)
		return;
	e->open = NULL;
	if (!r->hdr->nextents) {
		/* Nothing in it: give back its position and sequence number. */
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
static bool log_append(struct qs_engine *e, struct req *r)
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
		} else if (r->zero_n[0] || r->zero_n[1]) {
			int k = r->zero_n[0] ? 0 : 1;
			lba = r->zero_lba[k];
			n = r->zero_n[k];
			kind = QS_EXT_ZERO;
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
			/* Extents longer than 32 bits of blocks are split. */
			if (n > UINT32_MAX)
				n = UINT32_MAX & ~(uint64_t)(e->iu_blocks - 1);
			if (kind == QS_EXT_ZERO) {
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

/*
 * Park r until log room or a record slot frees up; it keeps one pending
 * part meanwhile. Only a wait for room counts as a throttled write.
 */
static void space_wait(struct qs_engine *e, struct req *r)
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
	while (*pp) {
		struct req *r = *pp;
		bool done;
		if (e->failed) {
			r->inval_todo = false;
			if (r->qop_stage == 3) {
				/* its QLC op is done; nothing will log its INVAL */
				r->qop_stage = 4;
				qop_release(e, r);
				eng_req_part_done(e, r, -EIO);
			}
			done = true;
		} else if (wants_data(r) && data_blocked) {
			done = false;
		} else {
			done = log_append(e, r);
			if (!done && wants_data(r))
				data_blocked = true;
		}
		if (!done && wants_data(r) && e->log_full && e->dst_fail_streak >= DST_FAIL_GIVE_UP) {
			/*
			 * The log is full and destage keeps failing (the QLC is
			 * failing): waiting would hang the block device. The write
			 * fails instead; everything cached stays cached and is
			 * retried, and writes flow again once a destage succeeds.
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
		eng_req_part_done(e, r, e->failed ? -EIO : 0); /* the "waiting" part */
	}
	e->space_tail = last;
	eng_log_kick(e);
}

static void qop_finish(struct qs_engine *e, struct req *r, int res);
static void qop_release(struct qs_engine *e, struct req *r);
static void qop_release(struct qs_engine *e, struct req *r);

/* Fail every request in a record that cannot be recovered. */
static void rec_fail_reqs(struct qs_engine *e, struct rec *r)
{
	for (uint32_t i = 0; i < r->hdr->nextents; i++) {
		struct req *q = r->ext_req[i];
		if (r->hdr->ext[i].kind == QS_EXT_INVAL)
			qop_finish(e, q, -EIO);
		else
			eng_req_part_done(e, q, -EIO);
	}
	r->hdr->nextents = 0;
}

static void rec_retire(struct qs_engine *e, struct rec *r)
{
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
			uint64_t data = r->pos + 1;
			prefetch_extents(e, r);
			for (uint32_t i = 0; i < r->hdr->nextents; i++) {
				const struct qs_fmt_extent *x = &r->hdr->ext[i];
				eng_apply_extent(e, x, r->pos, data);
				if (x->kind == QS_EXT_DATA)
					data += x->nblocks;
			}
			for (uint32_t i = 0; i < r->hdr->nextents; i++) {
				if (r->hdr->ext[i].kind == QS_EXT_INVAL)
					qop_finish(e, r->ext_req[i], 0);
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
	e->st.log_flushes++;
	e->fast->ops->flush(e->fast->ctx, flush_cb, e);
}

/*
 * r completes once everything completed before now is durable on the log
 * device: at once when the device has no volatile cache, else after a
 * device flush issued after now (a flush already in flight may have been
 * issued before some of those completions, so r waits for the next one).
 */
static void flush_enqueue(struct qs_engine *e, struct req *r)
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

/* ---- whole-IU QLC operations (bypass writes, whole-IU discards) --------- */

/*
 * Ordering: a qop holds every IU it covers busy, so no destage of those IUs
 * runs during it (a destage landing after it would put older data on the
 * QLC). The QLC op is made durable (FUA, or discard then flush) before the
 * INVAL record that drops the older cached copies is appended: if that
 * record were durable first, a crash could leave neither the cached copy
 * nor the new data. The client is acknowledged when the INVAL record is in
 * the log; cached copies are dropped at that moment, in log order.
 */
static void qop_cb(void *arg, int res);

static bool qop_can_start(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		if (busy_has(e, r->qop_iu + i))
			return false;
	return true;
}

static void qop_start(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		busy_add(e, r->qop_iu + i);
	uint64_t off = r->qop_iu * e->conf.iu_bytes, len = r->qop_ius * e->conf.iu_bytes;
	r->qop_stage = 1;
	if (r->type == REQ_WRITE) {
		struct iovec *iov = &r->iov1;
		iov->iov_base = r->buf;
		iov->iov_len = len;
		e->st.qlc_writes++;
		e->st.qlc_write_bytes += len;
		e->st.qlc_iu_whole_writes++;
		e->st.bypass_writes++;
		e->st.bypass_bytes += len;
		e->qlc->ops->write(e->qlc->ctx, off, iov, 1,
				   (e->qlc->flags & QS_VOL_VOLATILE_CACHE) ? QS_WRITE_FUA : 0,
				   qop_cb, r);
	} else {
		e->st.qlc_discards++;
		e->qlc->ops->discard(e->qlc->ctx, off, len, qop_cb, r);
	}
}

void eng_qop_kick(struct qs_engine *e)
{
	struct req **pp = &e->qop_wait_head, *last = NULL;
	while (*pp) {
		struct req *r = *pp;
		if (qop_can_start(e, r)) {
			*pp = r->qop_next;
			qop_start(e, r);
		} else {
			last = r;
			pp = &r->qop_next;
		}
	}
	e->qop_wait_tail = last;
}

static void qop_submit(struct qs_engine *e, struct req *r, uint64_t iu, uint64_t ius)
{
	r->qop_iu = iu;
	r->qop_ius = ius;
	r->pending++;
	if (!e->qop_wait_head && qop_can_start(e, r)) {
		qop_start(e, r);
		return;
	}
	r->qop_next = NULL;
	if (e->qop_wait_tail)
		e->qop_wait_tail->qop_next = r;
	else
		e->qop_wait_head = r;
	e->qop_wait_tail = r;
}

static void qop_release(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		busy_del(e, r->qop_iu + i);
	eng_qop_kick(e);
	dst_kick(e);
}

/* One INVAL extent of r's qop is in the log (res 0) or failed. When the
 * last one is done the IUs are released and the qop's part completes. */
static void qop_finish(struct qs_engine *e, struct req *r, int res)
{
	r->inval_pending--;
	if (res < 0 && !r->result)
		r->result = res;
	if (!r->inval_pending && !r->inval_todo && r->qop_stage != 4) {
		r->qop_stage = 4;
		qop_release(e, r);
		eng_req_part_done(e, r, res);
	}
	eng_req_part_done(e, r, res); /* the extent itself */
}

static void qop_cb(void *arg, int res)
{
	struct req *r = arg;
	struct qs_engine *e = r->owner;
	eng_enter(e);
	if (res < 0) {
		e->st.qlc_errors++;
		eng_log(e, QS_LOG_ERR, "QLC %s of IUs %llu+%llu failed: %s",
			r->type == REQ_WRITE ? "write" : "discard",
			(unsigned long long)r->qop_iu, (unsigned long long)r->qop_ius,
			strerror(-res));
		r->qop_stage = 4;
		qop_release(e, r);
		eng_req_part_done(e, r, res);
	} else if (r->qop_stage == 1 && r->type != REQ_WRITE &&
		   (e->qlc->flags & QS_VOL_VOLATILE_CACHE)) {
		r->qop_stage = 2;
		e->st.qlc_flushes++;
		e->qlc->ops->flush(e->qlc->ctx, qop_cb, r);
	} else {
		r->qop_stage = 3;
		r->inval_todo = true;
		r->inval_done = 0;
		if (r->waiting) {
			/* Still waiting for room for its tombstones: the INVAL
			 * extent is appended with them. */
			goto out;
		}
		r->pending++; /* the append itself */
		space_wait(e, r);
		eng_space_kick(e); /* header-only: need not wait behind writes */
	}
out:
	eng_leave_deliver(e);
}

/* ---- client entry points --------------------------------------------------- */

static int check_range(struct qs_engine *e, uint64_t off, uint64_t len)
{
	if ((off | len) % QS_BLOCK_SIZE || len == 0 || off >= e->conf.qlc_size ||
	    len > e->conf.qlc_size - off)
		return -EINVAL;
	return 0;
}

static int req_new(struct qs_engine *e, enum req_type t, uint64_t off, uint64_t len,
		   void *buf, unsigned flags, qs_req_cb cb, void *arg, struct req **out)
{
	if (!e->ready || e->closing)
		return e->closing ? -ESHUTDOWN : -EAGAIN;
	if (t != REQ_FLUSH) {
		int rc = check_range(e, off, len);
		if (rc)
			return rc;
	}
	struct req *r = eng_req_alloc(e);
	if (!r)
		return -ENOMEM;
	r->type = t;
	r->lba = off / QS_BLOCK_SIZE;
	r->nblocks = len / QS_BLOCK_SIZE;
	r->buf = buf;
	r->flags = flags;
	r->cb = cb;
	r->arg = arg;
	r->owner = e;
	r->pending = 1; /* the submission itself; dropped at its end */
	e->st.inflight++;
	e->client_seq++;
	*out = r;
	return 0;
}

static void sub_cb(void *arg, int res)
{
	struct sub *s = arg;
	struct qs_engine *e = s->e;
	eng_enter(e);
	if (res < 0) {
		if (s->log)
			e->st.fast_errors++;
		else
			e->st.qlc_errors++;
	}
	if (s->seg != UINT64_MAX)
		e->seg_pins[s->seg]--;
	struct req *r = s->req;
	eng_free(e, s);
	eng_req_part_done(e, r, res);
	if (e->ready)
		ckpt_kick(e, false);
	eng_leave_deliver(e);
}

/* Issue one piece of a client request on vol; s is freed on completion. */
static int sub_io(struct qs_engine *e, struct req *r, struct qs_vol *vol, int op,
		  uint64_t off, void *buf, uint64_t len, uint64_t pin_seg)
{
	struct sub *s = eng_alloc(e, sizeof(*s), 16);
	if (!s)
		return -ENOMEM;
	s->e = e;
	s->req = r;
	s->seg = pin_seg;
	s->log = vol == e->fast;
	s->iov.iov_base = buf;
	s->iov.iov_len = len;
	if (pin_seg != UINT64_MAX)
		e->seg_pins[pin_seg]++;
	r->pending++;
	switch (op) {
	case 'r':
		vol->ops->read(vol->ctx, off, &s->iov, 1, sub_cb, s);
		break;
	case 'w':
		vol->ops->write(vol->ctx, off, &s->iov, 1, r->flags & QS_WRITE_FUA, sub_cb, s);
		break;
	case 'f':
		vol->ops->flush(vol->ctx, sub_cb, s);
		break;
	case 'd':
		vol->ops->discard(vol->ctx, off, len, sub_cb, s);
		break;
	}
	return 0;
}

static void qlc_count_write(struct qs_engine *e, uint64_t off, uint64_t len)
{
	e->st.qlc_writes++;
	e->st.qlc_write_bytes += len;
	if (off % e->conf.iu_bytes == 0 && len % e->conf.iu_bytes == 0)
		e->st.qlc_iu_whole_writes++;
}

int qs_engine_read(struct qs_engine *e, uint64_t off, uint64_t len, void *buf,
		   qs_req_cb cb, void *arg)
{
	struct req *r;
	int rc = req_new(e, REQ_READ, off, len, buf, 0, cb, arg, &r);
	if (rc)
		return rc;
	eng_enter(e);
	e->st.client_reads++;
	e->st.client_read_bytes += len;
	unsigned char *b = buf;
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		e->st.qlc_reads++;
		e->st.qlc_read_bytes += len;
		rc = sub_io(e, r, e->qlc, 'r', off, buf, len, UINT64_MAX);
		goto out;
	}
	/*
	 * Per 4 KiB block: the newest cached copy if any (DRAM buffer, else
	 * the log device), zeroes for a discarded block, else the QLC.
	 * Adjacent blocks from the same source are read with one I/O. A log
	 * read pins its segment so the checkpoint cannot reclaim it mid-read.
	 */
	for (uint64_t i = 0; i < r->nblocks && !rc;) {
		uint64_t lba = r->lba + i;
		uint32_t v;
		if (!qs_index_get(&e->idx, lba, &v)) {
			uint64_t j = i + 1;
			while (j < r->nblocks && !qs_index_get(&e->idx, r->lba + j, &v))
				j++;
			e->st.qlc_reads++;
			e->st.qlc_read_bytes += (j - i) * QS_BLOCK_SIZE;
			rc = sub_io(e, r, e->qlc, 'r', lba * QS_BLOCK_SIZE, b + i * QS_BLOCK_SIZE,
				    (j - i) * QS_BLOCK_SIZE, UINT64_MAX);
			i = j;
			continue;
		}
		if (v & SLOT_TOMB) {
			if (!e->no_data)
				memset(b + i * QS_BLOCK_SIZE, 0, QS_BLOCK_SIZE);
			i++;
			continue;
		}
		uint64_t pos = eng_slot_to_pos(e, v);
		if (eng_ring_has(e, pos)) {
			if (!e->no_data)
				memcpy(b + i * QS_BLOCK_SIZE, eng_ring_at(e, pos), QS_BLOCK_SIZE);
			i++;
			continue;
		}
		uint64_t j = i + 1;
		uint32_t w;
		while (j < r->nblocks && qs_index_get(&e->idx, r->lba + j, &w) &&
		       w == v + (j - i) && slot_seg(e, w) == slot_seg(e, v))
			j++;
		e->st.log_read_bytes += (j - i) * QS_BLOCK_SIZE;
		rc = sub_io(e, r, e->fast, 'r', eng_pos_off(e, pos), b + i * QS_BLOCK_SIZE,
			    (j - i) * QS_BLOCK_SIZE, slot_seg(e, v));
		i = j;
	}
out:
	eng_req_part_done(e, r, rc);
	leave_submit(e);
	return 0;
}

int qs_engine_write(struct qs_engine *e, uint64_t off, uint64_t len, const void *buf,
		    unsigned flags, qs_req_cb cb, void *arg)
{
	struct req *r;
	if (e->failed && e->ready)
		return -EIO;
	int rc = req_new(e, REQ_WRITE, off, len, (void *)buf, flags & QS_WRITE_FUA, cb, arg, &r);
	if (rc)
		return rc;
	eng_enter(e);
	e->st.client_writes++;
	e->st.client_write_bytes += len;
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		qlc_count_write(e, off, len);
		rc = sub_io(e, r, e->qlc, 'w', off, r->buf, len, UINT64_MAX);
		eng_req_part_done(e, r, rc);
	} else if (e->conf.bypass_min_bytes && len >= e->conf.bypass_min_bytes &&
		   off % e->conf.iu_bytes == 0 && len % e->conf.iu_bytes == 0) {
		qop_submit(e, r, off / e->conf.iu_bytes, len / e->conf.iu_bytes);
		eng_req_part_done(e, r, 0);
	} else if (e->space_head || !log_append(e, r)) {
		space_wait(e, r); /* keeps the submission's part until appended */
		dst_kick(e);
		ckpt_kick(e, e->log_full);
	} else {
		eng_req_part_done(e, r, 0);
	}
	eng_log_kick(e);
	dst_kick(e);
	leave_submit(e);
	return 0;
}

int qs_engine_flush(struct qs_engine *e, qs_req_cb cb, void *arg)
{
	struct req *r;
	int rc = req_new(e, REQ_FLUSH, 0, 0, NULL, 0, cb, arg, &r);
	if (rc)
		return rc;
	eng_enter(e);
	e->st.client_flushes++;
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		e->st.qlc_flushes++;
		rc = sub_io(e, r, e->qlc, 'f', 0, NULL, 0, UINT64_MAX);
		eng_req_part_done(e, r, rc);
	} else {
		r->pending = 0;
		flush_enqueue(e, r);
	}
	leave_submit(e);
	return 0;
}

int qs_engine_discard(struct qs_engine *e, uint64_t off, uint64_t len, qs_req_cb cb,
		      void *arg)
{
	struct req *r;
	if (e->failed && e->ready)
		return -EIO;
	int rc = req_new(e, REQ_DISCARD, off, len, NULL, 0, cb, arg, &r);
	if (rc)
		return rc;
	eng_enter(e);
	e->st.client_discards++;
	e->st.client_discard_bytes += len;
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		e->st.qlc_discards++;
		rc = sub_io(e, r, e->qlc, 'd', off, NULL, len, UINT64_MAX);
		eng_req_part_done(e, r, rc);
		leave_submit(e);
		return 0;
	}
	/* Whole IUs go to the QLC; the partial head and tail become tombstones. */
	uint64_t lba = r->lba, end = r->lba + r->nblocks, ib = e->iu_blocks;
	uint64_t a = (lba + ib - 1) / ib * ib, z = end / ib * ib;
	if (a < z) {
		if (lba < a) {
			r->zero_lba[0] = lba;
			r->zero_n[0] = a - lba;
		}
		if (z < end) {
			r->zero_lba[1] = z;
			r->zero_n[1] = end - z;
		}
		qop_submit(e, r, a / ib, (z - a) / ib);
	} else {
		r->zero_lba[0] = lba;
		r->zero_n[0] = r->nblocks;
	}
	/* Tombstones are header-only: they need not wait behind writes. */
	space_wait(e, r);
	eng_space_kick(e);
	leave_submit(e);
	return 0;
}

/* ---- misc public ------------------------------------------------------------ */

int qs_engine_set_policy(struct qs_engine *e, const struct qs_policy *p)
{
	struct qs_engine_conf c = e->conf;
	c.policy = *p;
	int rc = qs_engine_conf_check(&c, NULL);
	if (rc)
		return rc;
	e->conf.policy = *p;
	dst_policy_changed(e);
	eng_log(e, QS_LOG_INFO, "destage policy now %s", qs_policy_order_name(p->order));
	eng_enter(e);
	dst_kick(e);
	leave_submit(e);
	return 0;
}

void qs_engine_get_policy(const struct qs_engine *e, struct qs_policy *p)
{
	*p = e->conf.policy;
}

void qs_engine_get_stats(const struct qs_engine *e, struct qs_engine_stats *s)
{
	*s = e->st;
	s->dirty_ius = e->ndius;
	s->log_blocks = e->log_blocks;
	s->log_used_blocks = e->log_blocks ? e->alloc_pos - e->tail_pos : 0;
	s->index_bytes = (e->idx.slots ? qs_index_bytes(&e->idx) : 0) +
			 (e->diu_map.slots ? qs_index_bytes(&e->diu_map) : 0) +
			 (uint64_t)e->diu_cap * sizeof(struct diu);
	s->failed = e->failed;
}

uint64_t qs_engine_size(const struct qs_engine *e)
{
	return e->conf.qlc_size;
}

/* ---- open / free ------------------------------------------------------------- */

struct qs_engine *qs_engine_open(const struct qs_env *env, struct qs_vol *fast,
				 struct qs_vol *qlc, const struct qs_engine_conf *conf,
				 unsigned flags, qs_req_cb cb, void *arg)
{
	struct qs_engine_conf c = *conf;
	if (!c.qlc_size)
		c.qlc_size = qlc->size / c.iu_bytes * c.iu_bytes;
	if (qs_engine_conf_check(&c, NULL) || c.qlc_size > qlc->size ||
	    (c.mode == QS_MODE_CACHE && !fast)) {
		errno = EINVAL;
		return NULL;
	}
	struct qs_engine *e = env->ops->alloc(env->ctx, sizeof(*e), 64);
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->env = *env;
	e->fast = fast;
	e->qlc = qlc;
	e->conf = c;
	e->iu_blocks = c.iu_bytes / QS_BLOCK_SIZE;
	e->dev_blocks = c.qlc_size / QS_BLOCK_SIZE;
	e->t0_ns = eng_now(e);
	e->open_cb = cb;
	e->open_arg = arg;
	e->open_flags = flags;
	e->no_data = (flags & QS_OPEN_NO_DATA) != 0;
	e->opening = true;
	eng_enter(e);
	rcv_start(e);
	leave_submit(e);
	return e;
}

void qs_engine_free(struct qs_engine *e)
{
	if (!e)
		return;
	dst_fini(e);
	if (e->recs) {
		for (uint32_t i = 0; i < e->conf.log_qd + 2; i++)
			eng_free(e, e->recs[i].hdr);
		eng_free(e, e->recs);
	}
	eng_free(e, e->ring);
	eng_free(e, e->seg_live);
	eng_free(e, e->seg_pins);
	eng_free(e, e->seg_first_seq);
	eng_free(e, e->sb_buf);
	eng_free(e, e->scan_hdr);
	eng_free(e, e->scan_data);
	eng_free(e, e->sb_read[0]);
	eng_free(e, e->sb_read[1]);
	if (e->idx.slots)
		qs_index_fini(&e->idx);
	/* Requests still live: only after a crash (a test tearing down an
	 * engine whose volumes died) or a close that never finished. */
	while (e->all_reqs) {
		struct req *r = e->all_reqs;
		e->all_reqs = r->all_next;
		eng_free(e, r);
	}
	while (e->free_reqs) {
		struct req *r = e->free_reqs;
		e->free_reqs = r->next;
		eng_free(e, r);
	}
	struct qs_env env = e->env;
	env.ops->free(env.ctx, e);
}

/* Allocate the log-side structures once the geometry is known. */
int eng_alloc_log(struct qs_engine *e)
{
	e->nsegs = e->log_blocks / e->seg_blocks;
	e->seg_live = eng_alloc(e, e->nsegs * sizeof(uint32_t), 64);
	e->seg_pins = eng_alloc(e, e->nsegs * sizeof(uint32_t), 64);
	e->seg_first_seq = eng_alloc(e, e->nsegs * sizeof(uint64_t), 64);
	uint32_t nrec = e->conf.log_qd + 2;
	e->recs = eng_alloc(e, nrec * sizeof(struct rec), 64);
	if (!e->seg_live || !e->seg_pins || !e->seg_first_seq || !e->recs)
		return -ENOMEM;
	memset(e->seg_live, 0, e->nsegs * sizeof(uint32_t));
	memset(e->seg_pins, 0, e->nsegs * sizeof(uint32_t));
	memset(e->seg_first_seq, 0, e->nsegs * sizeof(uint64_t));
	memset(e->recs, 0, nrec * sizeof(struct rec));
	for (uint32_t i = 0; i < nrec; i++) {
		e->recs[i].owner = e;
		e->recs[i].hdr = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		if (!e->recs[i].hdr)
			return -ENOMEM;
		e->recs[i].next = e->free_recs;
		e->free_recs = &e->recs[i];
	}
	if (e->conf.dram_buffer_bytes) {
		e->ring_blocks = e->conf.dram_buffer_bytes / QS_BLOCK_SIZE;
		if (e->ring_blocks > e->log_blocks)
			e->ring_blocks = e->log_blocks;
		e->ring = eng_alloc(e, e->ring_blocks * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		if (!e->ring)
			return -ENOMEM;
	}
	int rc = qs_index_init(&e->idx, &e->env, e->log_blocks);
	if (rc)
		return rc;
	return dst_init(e);
}

int qs_engine_drain(struct qs_engine *e, qs_req_cb cb, void *arg)
{
	if (!e->ready || e->closing)
		return e->closing ? -ESHUTDOWN : -EAGAIN;
	if (e->drain_cb)
		return -EBUSY;
	e->drain_cb = cb;
	e->drain_arg = arg;
	e->draining = true;
	eng_enter(e);
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		/* nothing is ever dirty */
		e->drain_cb = NULL;
		e->draining = false;
		eng_notify(e, cb, arg, 0);
	} else {
		dst_kick(e);
		ckpt_kick(e, true);
		eng_check_drain(e); /* nothing dirty: done at once */
	}
	leave_submit(e);
	return 0;
}

void qs_engine_debug_dump(const struct qs_engine *e, char *out, size_t len)
{
	uint32_t nspace = 0, nqop = 0, nflush = 0, nfree = 0, nready = 0;
	for (struct req *r = e->space_head; r; r = r->next)
		nspace++;
	for (struct req *r = e->qop_wait_head; r; r = r->qop_next)
		nqop++;
	for (struct req *r = e->flush_next; r; r = r->next)
		nflush++;
	for (struct rec *r = e->free_recs; r; r = r->next)
		nfree++;
	for (struct req *r = e->ready_head; r; r = r->next)
		nready++;
	size_t o = 0;
	for (struct req *r = e->all_reqs; r && o + 200 < len; r = r->all_next)
		o += (size_t)snprintf(out + o, len - o,
				      "req type %d lba %llu+%llu pending %d appended %llu waiting %d "
				      "qop %d/%llu inval %d/%u; ",
				      r->type, (unsigned long long)r->lba,
				      (unsigned long long)r->nblocks, r->pending,
				      (unsigned long long)r->appended, r->waiting, r->qop_stage,
				      (unsigned long long)r->qop_ius, r->inval_todo, r->inval_pending);
	out += o;
	len -= o;
	snprintf(out, len,
		 "space-wait %u qop-wait %u flush-next %u flush-inflight %d free-recs %u "
		 "inflight-recs %u open %p fifo %p ready %u dst %u ckpt %d tail %llu alloc %llu "
		 "done %llu timer %llu",
		 nspace, nqop, nflush, e->flush_inflight, nfree, e->inflight_recs, (void *)e->open,
		 (void *)e->fifo_head, nready, e->dst_active, e->ckpt_active,
		 (unsigned long long)e->tail_pos, (unsigned long long)e->alloc_pos,
		 (unsigned long long)e->done_pos, (unsigned long long)e->timer_at);
}
