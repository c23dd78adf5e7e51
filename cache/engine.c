/* SPDX-License-Identifier: MIT */
/*
 * The engine's client API and life cycle: open and free, the request
 * objects and how their completions are delivered (never inside the
 * submission that started them), the timer entry, read/write/flush/discard
 * submission, drain, policy and statistics.
 *
 * Where each part of the engine lives:
 *   engine.c   this file: client API, requests, delivery, open/free
 *   conf.c     configuration defaults and checks, policy names
 *   log.c      the log writer (group commit, in-order completion, VOID
 *              rewrite), applying records to the index, the flush pipeline
 *   qop.c      whole-IU QLC operations (bypass writes, whole-IU discards)
 *   destage.c  dirty-IU bookkeeping, destage policies, destage, checkpoint
 *   recover.c  format, recovery scan, superblock writes, clean close
 *
 * Write (shaping on): a write is appended to the open log record and
 * completes when that record, and every record before it, is written
 * (log.c). It is acknowledged before it is durable; a later flush (or FUA)
 * makes it durable.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

/* ---- environment helpers ---------------------------------------------- */

/*
 * Every allocation carries its size just below the pointer returned, so the
 * engine knows its own DRAM to the byte (qs_engine_get_stats, mem.total),
 * whatever the host's allocator is. The header takes the alignment's room
 * (16 bytes at least), which is counted too.
 */
struct mem_hdr {
	uint64_t bytes; /* counted: what was asked of the host */
	uint64_t pad;	/* from the host's pointer to the caller's */
};

void *eng_alloc(struct qs_engine *e, size_t size, size_t align)
{
	size_t pad = align < 16 ? 16 : align;
	unsigned char *raw = e->env.ops->alloc(e->env.ctx, (size ? size : 1) + pad, pad);
	if (!raw)
		return NULL;
	struct mem_hdr *h = (struct mem_hdr *)(raw + pad) - 1;
	h->bytes = (size ? size : 1) + pad;
	h->pad = pad;
	e->mem_bytes += h->bytes;
	return raw + pad;
}

size_t eng_alloc_bytes(const void *p)
{
	return p ? (size_t)((const struct mem_hdr *)p - 1)->bytes : 0;
}

void eng_free(struct qs_engine *e, void *p)
{
	if (!p)
		return;
	struct mem_hdr *h = (struct mem_hdr *)p - 1;
	e->mem_bytes -= h->bytes;
	e->env.ops->free(e->env.ctx, (unsigned char *)p - h->pad);
}

void *eng_io_alloc(struct qs_engine *e, size_t size)
{
	struct io_link *l = eng_alloc(e, size, 16);
	if (!l)
		return NULL;
	l->prev = NULL;
	l->next = e->io_live;
	if (e->io_live)
		e->io_live->prev = l;
	e->io_live = l;
	return l;
}

void eng_io_free(struct qs_engine *e, void *ctx)
{
	struct io_link *l = ctx;
	if (l->prev)
		l->prev->next = l->next;
	else
		e->io_live = l->next;
	if (l->next)
		l->next->prev = l->prev;
	eng_free(e, l);
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
		eng_flush_enqueue(e, r);
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
	if (e->depth == 0 && (e->ready_head || e->pace_held))
		eng_arm_timer(e);
}

void qs_engine_timer(struct qs_engine *e)
{
	e->timer_at = 0;
	eng_enter(e);
	if (e->ready && !e->closed) {
		if (e->pace_held && eng_now(e) >= e->pace_wake_ns)
			eng_pace_step(e); /* paced writes' turn */
		plc_kick(e);
		dst_kick(e);
		ckpt_kick(e, false);
	}
	eng_leave_deliver(e);
}

void eng_fail(struct qs_engine *e, const char *why)
{
	if (!e->failed)
		eng_log(e, QS_LOG_ERR, "engine failed: %s; writes now fail with EIO", why);
	e->failed = true;
	e->st.failed = true;
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
	if (s->band != UINT64_MAX)
		plc_band_unpin(e, s->band);
	struct req *r = s->req;
	eng_io_free(e, s);
	eng_req_part_done(e, r, res);
	if (e->ready)
		ckpt_kick(e, false);
	eng_leave_deliver(e);
}

/* Issue one piece of a client request on vol; s is freed on completion. */
int eng_sub_io(struct qs_engine *e, struct req *r, struct qs_vol *vol, int op, uint64_t off,
	       void *buf, uint64_t len, uint64_t pin_seg, uint64_t pin_band)
{
	struct sub *s = eng_io_alloc(e, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->e = e;
	s->req = r;
	s->seg = pin_seg;
	s->band = pin_band;
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

void eng_qlc_count_write(struct qs_engine *e, uint64_t off, uint64_t len)
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
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		e->st.qlc_reads++;
		e->st.qlc_read_bytes += len;
		rc = eng_sub_io(e, r, e->qlc, 'r', off, buf, len, UINT64_MAX, UINT64_MAX);
		goto out;
	}
	/* Log placement: the map pages of its blocks first (it waits for
	 * them if they are on the fast tier only, and runs then). */
	if (!e->plc || plc_read_ready(e, r))
		eng_read_run(e, r);
	leave_submit(e);
	return 0;
out:
	eng_req_part_done(e, r, rc);
	leave_submit(e);
	return 0;
}

void eng_read_run(struct qs_engine *e, struct req *r)
{
	int rc = 0;
	unsigned char *b = r->buf;
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
			if (e->plc) {
				rc = plc_read(e, r, lba, j - i, b + i * QS_BLOCK_SIZE);
				i = j;
				continue;
			}
			e->st.qlc_reads++;
			e->st.qlc_read_bytes += (j - i) * QS_BLOCK_SIZE;
			rc = eng_sub_io(e, r, e->qlc, 'r', lba * QS_BLOCK_SIZE, b + i * QS_BLOCK_SIZE,
					(j - i) * QS_BLOCK_SIZE, UINT64_MAX, UINT64_MAX);
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
		rc = eng_sub_io(e, r, e->fast, 'r', eng_pos_off(e, pos), b + i * QS_BLOCK_SIZE,
				(j - i) * QS_BLOCK_SIZE, slot_seg(e, v), UINT64_MAX);
		i = j;
	}
	eng_req_part_done(e, r, rc);
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
		eng_qlc_count_write(e, off, len);
		rc = eng_sub_io(e, r, e->qlc, 'w', off, r->buf, len, UINT64_MAX, UINT64_MAX);
		eng_req_part_done(e, r, rc);
	} else if (e->conf.bypass_min_bytes && len >= e->conf.bypass_min_bytes &&
		   off % e->conf.iu_bytes == 0 && len % e->conf.iu_bytes == 0) {
		eng_qop_submit(e, r, off / e->conf.iu_bytes, len / e->conf.iu_bytes);
		eng_req_part_done(e, r, 0);
	} else if (e->space_head || !eng_pace_admit(e, r) || !eng_log_append(e, r)) {
		eng_space_wait(e, r); /* keeps the submission's part until appended */
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
		rc = eng_sub_io(e, r, e->qlc, 'f', 0, NULL, 0, UINT64_MAX, UINT64_MAX);
		eng_req_part_done(e, r, rc);
	} else {
		r->pending = 0;
		eng_flush_enqueue(e, r);
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
		rc = eng_sub_io(e, r, e->qlc, 'd', off, NULL, len, UINT64_MAX, UINT64_MAX);
		eng_req_part_done(e, r, rc);
		leave_submit(e);
		return 0;
	}
	if (e->plc) {
		/* Log placement: one TRIM in the log unmaps the range; the QLC
		 * is not told (its bands are rewritten whole anyway). */
		r->zero_lba[0] = r->lba;
		r->zero_n[0] = r->nblocks;
		eng_space_wait(e, r);
		eng_space_kick(e);
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
		eng_qop_submit(e, r, a / ib, (z - a) / ib);
	} else {
		r->zero_lba[0] = lba;
		r->zero_n[0] = r->nblocks;
	}
	/* Tombstones are header-only: they need not wait behind writes. */
	eng_space_wait(e, r);
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
	eng_mem(e, &s->mem);
	if (e->plc)
		plc_stats(e, s); /* the map's memory is map_bytes, not in index_bytes */
}

/* The engine's DRAM by part (struct qs_engine_mem says what each holds). */
void eng_mem(const struct qs_engine *e, struct qs_engine_mem *m)
{
	memset(m, 0, sizeof(*m));
	/* the two indexes allocate through the environment, not eng_alloc */
	uint64_t diu_map = e->diu_map.slots ? qs_index_bytes(&e->diu_map) : 0;
	m->index = e->idx.slots ? qs_index_bytes(&e->idx) : 0;
	m->dirty = diu_map + eng_alloc_bytes(e->dius);
	m->total = sizeof(*e) + e->mem_bytes + m->index + diu_map;
	if (e->plc)
		plc_mem(e, m);
	uint64_t parts = m->index + m->dirty + m->map_pages + m->map_meta + m->qlc_blocks + m->bands;
	m->other = m->total > parts ? m->total - parts : 0;
}

/* The split of the engine's DRAM, logged at open so an operator sees where
 * the budget goes before the first request. */
static void eng_log_plan(struct qs_engine *e, const struct qs_engine_mem *m)
{
	const double MiB = 1024.0 * 1024.0;
	char lim[64] = "no dram_limit", dirty[96] = "(grows when IUs are sparse)";
	if (e->conf.dram_limit)
		snprintf(lim, sizeof(lim), "dram_limit %.1f MiB", (double)e->conf.dram_limit / MiB);
	if (e->conf.dirty_ius_max)
		snprintf(dirty, sizeof(dirty), "(at most %llu dirty IUs)",
			 (unsigned long long)e->conf.dirty_ius_max);
	char win[128] = "";
	if (e->conf.log_window_blocks)
		snprintf(win, sizeof(win), " (at most %.1f GiB of the log in use)",
			 (double)e->conf.log_window_blocks * QS_BLOCK_SIZE / (1024 * MiB));
	if (e->conf.placement == QS_PLACE_LOG)
		eng_log(e, QS_LOG_INFO,
			"engine DRAM at open: %.1f MiB of %s: map pages %.1f MiB (map_dram_limit "
			"%.1f MiB), map state %.1f, per QLC block %.1f, log index %.1f%s, dirty "
			"IUs %.1f %s, bands %.1f, buffers and the rest %.1f",
			(double)m->total / MiB, lim, (double)m->map_pages / MiB,
			(double)e->conf.map_dram_limit / MiB, (double)m->map_meta / MiB,
			(double)m->qlc_blocks / MiB, (double)m->index / MiB, win,
			(double)m->dirty / MiB, dirty,
			(double)m->bands / MiB, (double)m->other / MiB);
	else
		eng_log(e, QS_LOG_INFO,
			"engine DRAM at open: %.1f MiB of %s: log index %.1f MiB%s, dirty IUs "
			"%.1f %s, buffers and the rest %.1f",
			(double)m->total / MiB, lim, (double)m->index / MiB, win,
			(double)m->dirty / MiB, dirty,
			(double)m->other / MiB);
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
	if (c.mode == QS_MODE_PASSTHROUGH)
		c.placement = QS_PLACE_INPLACE;
	c.qlc_size = qs_engine_conf_client_size(&c, qlc->size);
	if (qs_engine_conf_check_qlc(&c, qlc->size, NULL) ||
	    (c.mode == QS_MODE_CACHE && !fast)) {
		errno = EINVAL;
		return NULL;
	}
	/* One budget: with dram_limit set, it is divided into the log's
	 * window, the dirty-IU records and map pages (the hosts checked it:
	 * a budget too small is a configuration error, refused here too). */
	struct qs_engine_mem plan;
	int prc = c.mode == QS_MODE_CACHE ? qs_engine_dram_split(&c, fast->size, qlc->size, &c)
					  : -ENOSPC;
	if (!prc)
		prc = qs_engine_dram_plan(&c, fast->size, qlc->size, &plan, NULL);
	else if (c.dram_limit == QS_CONF_DRAM_AUTO)
		c.dram_limit = 0; /* passthrough: nothing to budget */
	if (prc == -ENOMEM) {
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
	if (!prc)
		eng_log_plan(e, &plan);
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
	plc_fini(e);
	if (e->recs) {
		for (uint32_t i = 0; i < eng_nrecs(e); i++)
			eng_free(e, e->recs[i].hdr);
		eng_free(e, e->recs);
	}
	eng_free(e, e->ring);
	eng_free(e, e->seg_live);
	eng_free(e, e->seg_pins);
	eng_free(e, e->seg_first_seq);
	eng_free(e, e->sb_buf);
	eng_free(e, e->scan_data);
	eng_free(e, e->sb_read[0]);
	eng_free(e, e->sb_read[1]);
	if (e->idx.slots)
		qs_index_fini(&e->idx);
	/* Requests and device I/O still live: only after a crash (volumes
	 * that never completed what was in flight) or a close that never
	 * finished. */
	while (e->io_live) {
		struct io_link *l = e->io_live;
		e->io_live = l->next;
		eng_free(e, l);
	}
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
	uint32_t nrec = eng_nrecs(e);
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
	/* The window bounds what the index holds (rec_room), so the index
	 * is sized for it, not for the whole log. */
	uint64_t w = e->conf.log_window_blocks;
	e->win_blocks = w && w < e->log_blocks ? w : e->log_blocks;
	e->diu_max = e->conf.dirty_ius_max;
	int rc = qs_index_init(&e->idx, &e->env, e->win_blocks, e->dev_blocks - 1,
			       eng_idx_val_bits(e->log_blocks));
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

int qs_engine_check(struct qs_engine *e, char *why, size_t len)
{
	if (len)
		why[0] = 0;
	return e->plc ? plc_check(e, why, len) : -ENOTSUP;
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
	if (e->plc) {
		size_t o2 = strlen(out);
		const struct plc *p = e->plc;
		snprintf(out + o2, len - o2,
			 " | bands free %llu drained %llu open %lld/%lld gc %u victim %lld@%llu "
			 "parked %d/%d mf %d dirty pages %llu | map frames %u+%u resident %u cows %u "
			 "pins %u loading %u free %d lru %d want %d/%d reads-waiting %d",
			 (unsigned long long)p->free_n, (unsigned long long)p->ndrained,
			 (long long)p->open[0], (long long)p->open[1], p->gc_active,
			 (long long)p->victim, (unsigned long long)p->victim_at,
			 p->park_head[0] != NULL, p->park_head[1] != NULL, p->mf_active,
			 (unsigned long long)p->ndirty, p->mpc.nframes, p->mpc.ncow, p->mpc.resident,
			 p->mpc.cows, p->mpc.pins, p->mpc.loading, p->mpc.free_head != MPC_NONE,
			 p->mpc.lru_head != MPC_NONE, p->mpc.want, p->mpc.want_frame,
			 p->rd_head != NULL);
	}
}
