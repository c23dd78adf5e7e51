/* SPDX-License-Identifier: MIT */
/*
 * Format, recovery and clean shutdown.
 *
 * Recovery reads both superblock copies and takes the valid one with the
 * highest generation. From its tail it scans the log record by record: a
 * record is taken only if its header is valid, its sequence number is the
 * next one, its epoch is not older than the record before it, and its data
 * checksum matches. The first record that fails ends the log: whatever was
 * after it was never acknowledged as durable (records complete in order).
 * A writer that could not fit a record in a segment's remainder started the
 * next segment instead, so a miss inside a segment is retried once at the
 * next segment start.
 *
 * Every open writes a superblock with epoch + 1 before accepting writes.
 * Records after a torn one may still be intact on disk; the new records
 * written over the torn one carry the new epoch, and the epoch rule stops a
 * later scan from wandering into those stale leftovers.
 *
 * The scan reads the log a whole segment per read, several segments ahead
 * (RCV_SCAN_AHEAD): records are checked in the buffers, so the device
 * streams the log instead of answering one header read after another.
 *
 * After a clean shutdown the superblock records the head, and the scan
 * checks headers only: the data was verified when it was written and
 * nothing was in flight when the superblock was sealed.
 */
#include <errno.h>
#include <string.h>

#include "engine_int.h"
#include "qlcshape/crc32c.h"
#include "qlcshape/splitmix64.h"

static void open_done(struct qs_engine *e, int res)
{
	e->opening = false;
	if (!res)
		e->ready = true;
	else
		e->closed = true;
	eng_notify(e, e->open_cb, e->open_arg, res);
}

static void leave(struct qs_engine *e)
{
	eng_leave_deliver(e);
}

/* ---- superblock writes ------------------------------------------------------ */

static void sb_write_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	if (!res) {
		e->sb = e->sb_next;
		plc_map_committed(e);
	}
	e->sb_cb(e->sb_arg, res);
}

void rcv_write_sb(struct qs_engine *e, uint64_t tail_pos, uint64_t tail_seq, bool clean,
		  qs_io_cb cb, void *arg)
{
	struct qs_fmt_sb *n = &e->sb_next;
	*n = e->sb;
	n->generation++;
	n->tail_pos = tail_pos;
	n->tail_seq = tail_seq;
	n->flags = clean ? QS_SB_CLEAN : 0;
	n->head_pos = clean ? e->done_pos : 0;
	n->head_seq = clean ? e->done_seq : 0;
	plc_map_commit_fields(e, n);
	if (clean)
		plc_clean_commit_fields(e, n);
	qs_fmt_sb_seal(n);
	memset(e->sb_buf, 0, QS_BLOCK_SIZE);
	memcpy(e->sb_buf, n, sizeof(*n));
	e->sb_cb = cb;
	e->sb_arg = arg;
	e->sb_iov.iov_base = e->sb_buf;
	e->sb_iov.iov_len = QS_BLOCK_SIZE;
	/* FUA: the superblock moves the tail; it must be durable before the
	 * space behind the old tail is written again. */
	e->fast->ops->write(e->fast->ctx, (n->generation % QS_FMT_SB_COPIES) * QS_BLOCK_SIZE,
			    &e->sb_iov, 1, QS_WRITE_FUA, sb_write_cb, e);
}

/* ---- format --------------------------------------------------------------------- */


static void format_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		eng_log(e, QS_LOG_ERR, "format: superblock write failed: %s", strerror(-res));
		open_done(e, res);
	} else if (e->sb.generation == 1) {
		/* Both copies are written, so no copy of an older log survives. */
		rcv_write_sb(e, e->tail_pos, e->tail_seq, false, format_cb, e);
	} else {
		eng_log(e, QS_LOG_INFO, "formatted log: %llu blocks in %llu segments",
			(unsigned long long)e->log_blocks, (unsigned long long)e->nsegs);
		e->ring_from = e->ring_hi = e->alloc_pos;
		open_done(e, 0);
	}
	leave(e);
}

static void format_map_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		eng_log(e, QS_LOG_ERR, "format: zeroing the map region failed: %s", strerror(-res));
		open_done(e, res);
	} else {
		rcv_write_sb(e, 0, 1, false, format_cb, e);
	}
	leave(e);
}

static int geometry_from_sb(struct qs_engine *e)
{
	e->seg_blocks = e->sb.segment_blocks;
	e->log_blocks = e->sb.log_blocks;
	if (e->log_blocks > SLOT_MASK) {
		eng_log(e, QS_LOG_ERR, "log of %llu blocks exceeds the index's 2^31",
			(unsigned long long)e->log_blocks);
		return -EINVAL;
	}
	int rc = eng_alloc_log(e);
	if (!rc && e->sb.placement == QS_FMT_PLACE_LOG)
		rc = plc_init(e);
	return rc;
}

static void format_start(struct qs_engine *e)
{
	uint64_t blocks = e->fast->size / QS_BLOCK_SIZE;
	uint64_t seg = e->conf.segment_blocks;
	struct qs_fmt_sb *sb = &e->sb;
	memset(sb, 0, sizeof(*sb));
	uint64_t log = blocks > QS_FMT_LOG_START ? (blocks - QS_FMT_LOG_START) / seg * seg : 0;
	if (log > (uint64_t)SLOT_MASK / seg * seg)
		log = (uint64_t)SLOT_MASK / seg * seg;
	uint64_t map_blocks = 0;
	if (e->conf.placement == QS_PLACE_LOG) {
		log = plc_format_geometry(e, seg);
		map_blocks = qs_engine_conf_map_bytes(&e->conf, e->qlc->size) / QS_BLOCK_SIZE;
	}
	if (log < QS_FMT_MIN_LOG_SEGMENTS * seg) {
		eng_log(e, QS_LOG_ERR,
			"log device of %llu bytes is too small: need at least %llu bytes%s",
			(unsigned long long)e->fast->size,
			(unsigned long long)((QS_FMT_LOG_START + QS_FMT_MIN_LOG_SEGMENTS * seg +
					      map_blocks) * QS_BLOCK_SIZE),
			map_blocks ? " (the log, and log placement's map region and clean state)" : "");
		open_done(e, -ENOSPC);
		return;
	}
	sb->magic = QS_FMT_SB_MAGIC;
	sb->version = QS_FMT_VERSION;
	sb->size = sizeof(*sb);
	sb->generation = 0; /* the first write makes it 1 */
	uint64_t s0 = eng_now(e) ^ (uintptr_t)e, u0 = qs_splitmix64(&s0);
	uint64_t s1 = u0 ^ e->fast->size, u1 = qs_splitmix64(&s1);
	memcpy(sb->uuid, &u0, 8);
	memcpy(sb->uuid + 8, &u1, 8);
	sb->fast_size = e->fast->size;
	sb->qlc_size = e->conf.qlc_size;
	sb->iu_bytes = e->conf.iu_bytes;
	sb->segment_blocks = (uint32_t)seg;
	sb->log_start = QS_FMT_LOG_START;
	sb->log_blocks = log;
	sb->tail_pos = 0;
	sb->tail_seq = 1;
	sb->epoch = 1;
	e->seed = qs_fmt_rec_seed(sb);
	int rc = geometry_from_sb(e);
	if (rc) {
		open_done(e, rc);
		return;
	}
	e->tail_pos = e->alloc_pos = e->done_pos = 0;
	e->tail_seq = e->next_seq = e->done_seq = 1;
	if (e->plc) {
		/* The map region must read as never written before a superblock
		 * names it. */
		plc_format_map(e, format_map_cb, e);
		return;
	}
	rcv_write_sb(e, 0, 1, false, format_cb, e);
}

/* ---- recovery --------------------------------------------------------------------- */

static void scan_end(struct qs_engine *e);

/* The superblock with the new epoch is durable: the engine may write. */
static void ready_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0)
		eng_log(e, QS_LOG_ERR, "recovery: superblock write failed: %s", strerror(-res));
	open_done(e, res);
	if (!res) {
		plc_kick(e);
		dst_kick(e);
	}
	leave(e);
}

/* The scan is done and durable: a superblock with the next epoch, so that
 * the records written from now on tell themselves from stale ones. */
static void recovered_seal(struct qs_engine *e)
{
	e->sb.epoch++;
	rcv_write_sb(e, e->tail_pos, e->tail_seq, false, ready_cb, e);
}

static void recovered_flush_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		eng_log(e, QS_LOG_ERR, "recovery: log device flush failed: %s", strerror(-res));
		open_done(e, res);
	} else {
		recovered_seal(e);
	}
	leave(e);
}

static void valid_read_cb(void *arg, int res);
static void scan_end_rest(struct qs_engine *e);

static void scan_end(struct qs_engine *e)
{
	/* e->alloc_pos / next_seq hold the end of the last valid record. */
	e->done_pos = e->alloc_pos;
	e->done_seq = e->next_seq;
	e->ring_from = e->ring_hi = e->alloc_pos;
	if (e->plc) {
		plc_valid_read(e, valid_read_cb, e);
		return;
	}
	scan_end_rest(e);
}

static void valid_read_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0)
		open_done(e, res);
	else
		scan_end_rest(e);
	leave(e);
}

static void scan_end_rest(struct qs_engine *e)
{
	if (e->plc) {
		int rc = plc_rebuild(e);
		if (rc) {
			open_done(e, rc);
			return;
		}
		eng_log(e, QS_LOG_INFO, "recovered map: %llu blocks mapped, %llu of %llu bands free%s",
			(unsigned long long)e->plc->mapped, (unsigned long long)e->plc->free_n,
			(unsigned long long)e->plc->nbands,
			e->plc->cs_loaded ? " (valid bitmap and bands from the clean state)"
					  : " (valid bitmap rebuilt from the map)");
	}
	eng_log(e, QS_LOG_INFO,
		"recovered log: records %llu..%llu, %llu cached blocks in %u dirty IUs%s",
		(unsigned long long)e->tail_seq, (unsigned long long)e->next_seq - 1,
		(unsigned long long)e->st.cached_blocks, e->ndius,
		e->scan_clean ? " (clean shutdown: headers checked)" : "");
	if (!e->scan_clean && (e->fast->flags & QS_VOL_VOLATILE_CACHE)) {
		/*
		 * What the scan read may still sit in the device's volatile
		 * cache (a process crash loses no device cache). The engine
		 * now acts on it: a record that emptied a band lets the band
		 * be written again. Were the record lost to a power cut after
		 * that, the next recovery would map blocks into the rewritten
		 * band. So it is made durable first.
		 */
		e->st.log_flushes++;
		e->fast->ops->flush(e->fast->ctx, recovered_flush_cb, e);
		return;
	}
	recovered_seal(e);
}

/* Take the record h, at scan_pos: apply it and move past it. */
static void scan_apply(struct qs_engine *e, const struct qs_fmt_rec *h)
{
	if (e->scan_pos % e->seg_blocks == 0)
		e->seg_first_seq[(e->scan_pos / e->seg_blocks) % e->nsegs] = h->seq;
	if (!(h->flags & QS_REC_VOID))
		eng_apply_record(e, h, e->scan_pos, false);
	e->scan_epoch = h->epoch;
	e->scan_pos += 1 + h->nblocks;
	e->scan_seq++;
	e->alloc_pos = e->scan_pos;
	e->next_seq = e->scan_seq;
	e->scan_tried_next = false;
}

/*
 * The scan is over (res 1: the log ends at scan_pos; else -errno). Reads
 * ahead may still be in flight into the buffers: the open completes only
 * once they are back, so that no completion finds a freed engine.
 */
static void scan_stop(struct qs_engine *e, int res)
{
	e->scan_stopping = true;
	e->scan_stop_res = res;
	/* ... and so may the map page reads of log placement's replay. */
	if (e->scan_inflight || (e->plc && e->plc->mpc.loading))
		return;
	eng_free(e, e->scan_data);
	e->scan_data = NULL;
	if (res == 1)
		scan_end(e);
	else
		open_done(e, res);
}

static void scan_rd_cb(void *arg, int res);

/* Read the segments from the one scan_pos is in up to scan_ahead ahead,
 * none past a lap from the tail (the same blocks again). */
static void scan_request(struct qs_engine *e)
{
	uint64_t cur = e->scan_pos / e->seg_blocks;
	uint64_t lap = (e->tail_pos + e->log_blocks + e->seg_blocks - 1) / e->seg_blocks;
	if (e->scan_next_seg < cur)
		e->scan_next_seg = cur;
	while (e->scan_next_seg < cur + e->scan_ahead && e->scan_next_seg < lap) {
		uint64_t seg = e->scan_next_seg++;
		uint32_t k = (uint32_t)(seg % e->scan_ahead);
		e->scan_seg[k] = seg;
		e->scan_res[k] = 1;
		e->scan_inflight++;
		struct iovec *v = &e->scan_seg_iov[k];
		v->iov_base = e->scan_data + (size_t)k * e->seg_blocks * QS_BLOCK_SIZE;
		v->iov_len = (size_t)e->seg_blocks * QS_BLOCK_SIZE;
		e->fast->ops->read(e->fast->ctx, eng_pos_off(e, seg * e->seg_blocks), v, 1,
				   scan_rd_cb, &e->scan_rd[k]);
	}
}

/*
 * Check the record h at scan_pos, in its segment's buffer: 0 to take it,
 * 1 the log ends there, 2 retry at the next segment, -errno.
 */
static int scan_check(struct qs_engine *e, const struct qs_fmt_rec *h)
{
	enum qs_fmt_status st = qs_fmt_rec_check(h, &e->sb, e->scan_pos);
	bool ok = st == QS_FMT_OK && h->seq == e->scan_seq && h->epoch >= e->scan_epoch &&
		  h->epoch <= e->sb.epoch;
	if (!ok) {
		if (!e->scan_tried_next && e->scan_pos % e->seg_blocks)
			return 2; /* the writer may have skipped the rest of this segment */
		if (!e->scan_clean)
			return 1;
		eng_log(e, QS_LOG_ERR, "recovery: record %llu before the clean head is invalid (%s)",
			(unsigned long long)e->scan_seq, qs_fmt_status_str(st));
		return -EBADMSG;
	}
	/* The record fits in its segment (qs_fmt_rec_check): its data follows
	 * in the buffer. After a clean shutdown it was checked when written. */
	if (!e->scan_clean && !(h->flags & QS_REC_VOID) && h->nblocks &&
	    qs_crc32c(0, (const unsigned char *)h + QS_BLOCK_SIZE,
		      (size_t)h->nblocks * QS_BLOCK_SIZE) != h->data_crc) {
		eng_log(e, QS_LOG_INFO, "recovery: record %llu has a torn data area; log ends there",
			(unsigned long long)h->seq);
		return 1;
	}
	return 0;
}

/*
 * Take records while their segments are read; return to wait for a read.
 * A loop, not a chain of callbacks: a segment holds many records, and a
 * volume may complete a read before submit returns (scan_running then
 * keeps scan_rd_cb from entering a second time).
 */
static void scan_run(struct qs_engine *e)
{
	e->scan_running = true;
	while (!e->scan_stopping) {
		if (e->scan_clean && e->scan_seq == e->sb.head_seq) {
			scan_stop(e, 1);
			break;
		}
		/* A full lap from the tail is the most the log can hold. */
		if (e->scan_pos + 2 - e->tail_pos > e->log_blocks) {
			scan_stop(e, 1);
			break;
		}
		scan_request(e);
		uint64_t seg = e->scan_pos / e->seg_blocks;
		uint32_t k = (uint32_t)(seg % e->scan_ahead);
		if (e->scan_seg[k] != seg) {
			/* scan_request covers [seg, seg + scan_ahead): cannot happen */
			eng_log(e, QS_LOG_ERR, "recovery: segment %llu was not read",
				(unsigned long long)seg);
			scan_stop(e, -EIO);
			break;
		}
		if (e->scan_res[k] == 1)
			break; /* scan_rd_cb goes on */
		if (e->scan_res[k] < 0) {
			eng_log(e, QS_LOG_ERR, "recovery: log read at block %llu failed: %s",
				(unsigned long long)(eng_pos_off(e, seg * e->seg_blocks) / QS_BLOCK_SIZE),
				strerror(-e->scan_res[k]));
			scan_stop(e, e->scan_res[k]);
			break;
		}
		/* The buffer stays put while its records are applied: slot k
		 * is read again only once the scan has left segment seg. */
		const struct qs_fmt_rec *h = (const void *)(e->scan_data +
			((size_t)k * e->seg_blocks + e->scan_pos % e->seg_blocks) * QS_BLOCK_SIZE);
		int rc = scan_check(e, h);
		if (rc == 2) {
			e->scan_tried_next = true;
			e->scan_pos += e->seg_blocks - e->scan_pos % e->seg_blocks;
		} else if (rc) {
			scan_stop(e, rc);
		} else {
			/* Log placement: the map pages its extents change, in
			 * DRAM first; their reads resume the scan. */
			int pr = e->plc ? plc_scan_ready(e, h) : 1;
			if (pr < 0) {
				eng_log(e, QS_LOG_ERR, "recovery: record %llu: a map page could not "
					"be read: %s", (unsigned long long)h->seq, strerror(-pr));
				scan_stop(e, pr);
				break;
			}
			if (!pr)
				break;
			scan_apply(e, h);
			if (e->failed)
				scan_stop(e, -ENOMEM);
		}
	}
	e->scan_running = false;
}

void rcv_scan_resume(struct qs_engine *e)
{
	if (e->scan_running || !e->scan_data)
		return;
	if (e->scan_stopping) {
		if (!e->scan_inflight && !e->plc->mpc.loading)
			scan_stop(e, e->scan_stop_res);
		return;
	}
	scan_run(e);
}

static void scan_rd_cb(void *arg, int res)
{
	struct scan_rd_ctx *c = arg;
	struct qs_engine *e = c->e;
	eng_enter(e);
	e->scan_inflight--;
	e->scan_res[c->k] = res < 0 ? res : 0;
	if (e->scan_stopping) {
		if (!e->scan_inflight && !e->scan_running)
			scan_stop(e, e->scan_stop_res);
	} else if (!e->scan_running) {
		scan_run(e);
	}
	leave(e);
}

/* Scan from the tail (scan_pos, scan_seq), segment buffers allocated. */
static void scan_start(struct qs_engine *e)
{
	e->scan_next_seg = e->scan_pos / e->seg_blocks;
	for (uint32_t k = 0; k < e->scan_ahead; k++) {
		e->scan_seg[k] = UINT64_MAX;
		e->scan_res[k] = 1;
		e->scan_rd[k].e = e;
		e->scan_rd[k].k = k;
	}
	scan_run(e);
}

static void map_loaded_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0)
		open_done(e, res);
	else
		scan_start(e);
	leave(e);
}

static void sb_read_cb(void *arg, int res)
{
	struct sb_read_ctx *c = arg;
	struct qs_engine *e = c->e;
	int copy = c->copy;
	eng_enter(e);
	e->sb_read_res[copy] = res;
	if (--e->open_pending) {
		leave(e);
		return;
	}
	enum qs_fmt_status st[2];
	int best = -1;
	for (int i = 0; i < 2; i++) {
		st[i] = e->sb_read_res[i] < 0 ? QS_FMT_BAD_MAGIC
					      : qs_fmt_sb_check(e->sb_read[i], e->fast->size);
		if (e->sb_read_res[i] < 0)
			eng_log(e, QS_LOG_WARN, "superblock copy %d: read failed: %s", i,
				strerror(-e->sb_read_res[i]));
		else if (st[i] == QS_FMT_BAD_VERSION)
			eng_log(e, QS_LOG_WARN, "superblock copy %d: format version %u; this build "
				"reads version %u", i, (unsigned)e->sb_read[i]->version, QS_FMT_VERSION);
		else if (st[i] != QS_FMT_OK)
			eng_log(e, QS_LOG_WARN, "superblock copy %d: %s", i, qs_fmt_status_str(st[i]));
		if (st[i] == QS_FMT_OK &&
		    (best < 0 || e->sb_read[i]->generation > e->sb_read[best]->generation))
			best = i;
	}
	if (best < 0) {
		bool blank = st[0] == QS_FMT_BAD_MAGIC && st[1] == QS_FMT_BAD_MAGIC;
		int old = st[0] == QS_FMT_BAD_VERSION ? 0 : st[1] == QS_FMT_BAD_VERSION ? 1 : -1;
		if (old >= 0)
			eng_log(e, QS_LOG_ERR, "the log is of format version %u and this build reads "
				"version %u only: drain it with the version that wrote it, then format "
				"it (qlcshaped --format destroys what it caches)",
				(unsigned)e->sb_read[old]->version, QS_FMT_VERSION);
		else
			eng_log(e, QS_LOG_ERR, "%s",
				blank ? "log device holds no qlcshape log; format it first"
				      : "both superblock copies are invalid; the log cannot be recovered");
		open_done(e, blank ? -ENODATA : -EBADMSG);
		leave(e);
		return;
	}
	e->sb = *e->sb_read[best];
	for (int i = 0; i < 2; i++) { /* both reads are done: nothing else reads them */
		eng_free(e, e->sb_read[i]);
		e->sb_read[i] = NULL;
	}
	if (e->sb.placement != (uint32_t)e->conf.placement) {
		eng_log(e, QS_LOG_ERR,
			"log was formatted for %s placement, but this open asks for %s; set "
			"placement = %s, or format a new log (destroys what it caches)",
			e->sb.placement == QS_FMT_PLACE_LOG ? "log" : "in-place",
			qs_placement_name(e->conf.placement),
			e->sb.placement == QS_FMT_PLACE_LOG ? "log" : "inplace");
		open_done(e, -EINVAL);
		leave(e);
		return;
	}
	if (e->sb.placement == QS_FMT_PLACE_LOG &&
	    ((uint64_t)e->sb.band_blocks * QS_BLOCK_SIZE != e->conf.band_bytes ||
	     e->sb.qlc_phys_size > e->qlc->size)) {
		eng_log(e, QS_LOG_ERR,
			"log was formatted for bands of %llu bytes over %llu QLC bytes, but this "
			"open has band_bytes %llu and a QLC of %llu bytes; use the same settings "
			"and device, or format a new log",
			(unsigned long long)e->sb.band_blocks * QS_BLOCK_SIZE,
			(unsigned long long)e->sb.qlc_phys_size,
			(unsigned long long)e->conf.band_bytes, (unsigned long long)e->qlc->size);
		open_done(e, -EINVAL);
		leave(e);
		return;
	}
	if (e->sb.iu_bytes != e->conf.iu_bytes || e->sb.qlc_size != e->conf.qlc_size) {
		eng_log(e, QS_LOG_ERR,
			"log was formatted for IU %u bytes and QLC size %llu, but this open "
			"asks for IU %u and size %llu; use the same QLC device and IU",
			e->sb.iu_bytes, (unsigned long long)e->sb.qlc_size, e->conf.iu_bytes,
			(unsigned long long)e->conf.qlc_size);
		open_done(e, -EINVAL);
		leave(e);
		return;
	}
	e->seed = qs_fmt_rec_seed(&e->sb);
	int rc = geometry_from_sb(e);
	if (!rc) {
		size_t seg_bytes = (size_t)e->seg_blocks * QS_BLOCK_SIZE;
		e->scan_ahead = RCV_SCAN_BYTES / seg_bytes;
		e->scan_ahead = e->scan_ahead < 1 ? 1
				: e->scan_ahead > RCV_SCAN_AHEAD ? RCV_SCAN_AHEAD : e->scan_ahead;
		e->scan_data = eng_alloc(e, e->scan_ahead * seg_bytes, QS_BLOCK_SIZE);
		if (!e->scan_data)
			rc = -ENOMEM;
	}
	if (rc) {
		open_done(e, rc);
		leave(e);
		return;
	}
	e->tail_pos = e->alloc_pos = e->scan_pos = e->sb.tail_pos;
	e->tail_seq = e->next_seq = e->scan_seq = e->sb.tail_seq;
	e->scan_clean = e->sb.flags & QS_SB_CLEAN;
	e->scan_epoch = 0;
	if (e->plc)
		plc_load(e, map_loaded_cb, e); /* the map first, then the log on top */
	else
		scan_start(e);
	leave(e);
}

void rcv_start(struct qs_engine *e)
{
	if (e->conf.mode == QS_MODE_PASSTHROUGH) {
		open_done(e, 0);
		return;
	}
	e->sb_buf = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	if (!e->sb_buf) {
		open_done(e, -ENOMEM);
		return;
	}
	if (e->open_flags & QS_OPEN_FORMAT) {
		format_start(e);
		return;
	}
	e->open_pending = 2;
	for (int i = 0; i < 2; i++) {
		e->sb_read[i] = eng_alloc(e, QS_BLOCK_SIZE, QS_BLOCK_SIZE);
		if (!e->sb_read[i]) {
			open_done(e, -ENOMEM);
			return;
		}
		e->sb_read_ctx[i].e = e;
		e->sb_read_ctx[i].copy = i;
		e->sb_read_iov[i].iov_base = e->sb_read[i];
		e->sb_read_iov[i].iov_len = QS_BLOCK_SIZE;
	}
	for (int i = 0; i < 2; i++)
		e->fast->ops->read(e->fast->ctx, (uint64_t)i * QS_BLOCK_SIZE, &e->sb_read_iov[i], 1,
				   sb_read_cb, &e->sb_read_ctx[i]);
}

/* ---- close ------------------------------------------------------------------------ */

static void close_mapped_cb(void *arg, int res);
static void close_cleaned_cb(void *arg, int res);
static void close_begin(struct qs_engine *e);

const char *eng_close_stage_name(enum eng_close_stage s)
{
	switch (s) {
	case CLOSE_START: return "start";
	case CLOSE_QLC_FLUSH: return "QLC flush";
	case CLOSE_LOG_FLUSH: return "log device flush";
	case CLOSE_SUPERBLOCK: return "clean superblock write";
	case CLOSE_DONE: return "end";
	}
	return "step";
}

/* The step that was in flight completed (res): on to the next. */
static void close_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		/* CLOSE_DONE: the caller said why (a map page write, a failed
		 * engine) */
		if (e->close_stage != CLOSE_DONE)
			eng_log(e, QS_LOG_ERR, "close: the %s failed: %s; the next open will scan "
				"the log", eng_close_stage_name(e->close_stage), strerror(-res));
		e->close_stage = CLOSE_DONE;
	} else if (e->close_stage < CLOSE_DONE) {
		e->close_stage++;
	}
	if (e->close_stage == CLOSE_LOG_FLUSH && (e->fast->flags & QS_VOL_VOLATILE_CACHE)) {
		e->st.log_flushes++;
		e->fast->ops->flush(e->fast->ctx, close_cb, e);
	} else if (e->close_stage <= CLOSE_SUPERBLOCK) {
		e->close_stage = CLOSE_SUPERBLOCK;
		/* Everything before the head is durable and nothing is in flight:
		 * the next open may trust the headers up to head. */
		rcv_write_sb(e, e->tail_pos, e->tail_seq, true, close_cb, e);
		e->close_stage = CLOSE_SUPERBLOCK;
	} else {
		e->closed = true;
		eng_notify(e, e->close_cb, e->close_arg, res < 0 ? res : 0);
	}
	leave(e);
}

void eng_maybe_finish_close(struct qs_engine *e)
{
	if (!e->closing || e->close_started || e->opening)
		return;
	if (e->st.inflight || e->fifo_head || (e->open && e->open->hdr->nextents) ||
	    e->dst_active || e->ckpt_active || e->flush_inflight || e->space_head ||
	    e->qop_wait_head || e->drain_cb || plc_busy(e))
		return;
	e->close_started = true;
	if (e->open) {
		/* an empty open record: give it back */
		struct rec *r = e->open;
		e->open = NULL;
		e->alloc_pos = r->prev_alloc;
		e->next_seq--;
		r->next = e->free_recs;
		e->free_recs = r;
	}
	eng_enter(e);
	if (e->plc && e->ready && !e->failed)
		plc_map_flush(e, close_mapped_cb, e); /* the clean open reads it, not the log */
	else
		close_begin(e);
	eng_leave(e);
}

static void close_mapped_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0) {
		/* Not clean: the next open replays the log over the older pages. */
		eng_log(e, QS_LOG_ERR, "close: map page write failed: %s; the next open will "
			"scan the log", strerror(-res));
		e->close_stage = CLOSE_DONE;
		close_cb(e, res);
	} else {
		plc_clean_write(e, close_cleaned_cb, e);
	}
	leave(e);
}

/* The clean state is written, or not (the superblock then leaves it out,
 * and the next open rebuilds what it holds): the close goes on. */
static void close_cleaned_cb(void *arg, int res)
{
	struct qs_engine *e = arg;
	eng_enter(e);
	if (res < 0)
		eng_log(e, QS_LOG_WARN, "close: clean state write failed: %s; the next open "
			"rebuilds the valid bitmap from the map", strerror(-res));
	close_begin(e);
	leave(e);
}

static void close_begin(struct qs_engine *e)
{
	if (e->conf.mode == QS_MODE_PASSTHROUGH || !e->ready || e->failed) {
		e->close_stage = CLOSE_DONE;
		close_cb(e, e->failed ? -EIO : 0);
	} else if (e->qlc_unflushed && (e->qlc->flags & QS_VOL_VOLATILE_CACHE)) {
		e->close_stage = CLOSE_QLC_FLUSH;
		e->qlc_unflushed = false;
		e->st.qlc_flushes++;
		e->qlc->ops->flush(e->qlc->ctx, close_cb, e);
	} else {
		/*
		 * Nothing of the QLC's to flush: on to the log device's flush
		 * (CLOSE_LOG_FLUSH), which must come before the clean
		 * superblock. This started at the start and went from the QLC
		 * flush straight to the superblock, so a clean close whose
		 * QLC writes were all FUA (log placement) sealed a clean
		 * superblock over map pages, clean state and records still in
		 * the device's cache: the crash sweep's points inside the
		 * close found it.
		 */
		e->close_stage = CLOSE_QLC_FLUSH;
		close_cb(e, 0);
	}
}

int qs_engine_close(struct qs_engine *e, qs_req_cb cb, void *arg)
{
	if (e->closing)
		return -EALREADY;
	e->closing = true;
	e->close_cb = cb;
	e->close_arg = arg;
	eng_enter(e);
	if (e->drain_cb) {
		/* Close stops destage; a drain still running cannot finish. */
		qs_req_cb dcb = e->drain_cb;
		e->drain_cb = NULL;
		e->draining = false;
		eng_notify(e, dcb, e->drain_arg, -ECANCELED);
	}
	plc_kick(e); /* units waiting for a band give up */
	eng_log_kick(e);
	eng_leave(e);
	if (e->depth == 0) {
		eng_maybe_finish_close(e);
		eng_arm_timer(e);
	}
	return 0;
}
