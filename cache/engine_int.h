/* SPDX-License-Identifier: MIT */
/*
 * Engine internals shared by its files: engine.c (client API, requests,
 * open/free), conf.c (configuration), log.c (log writer, index upkeep,
 * flush pipeline), qop.c (whole-IU QLC operations), destage.c (dirty IUs,
 * destage, checkpoint) and recover.c (format, recovery, close).
 *
 * Positions: the log is addressed by a monotonic block position `pos` that
 * never wraps; the block on the device is QS_FMT_LOG_START + pos % log_blocks.
 * The index stores the wrapped position (`slot`, < 2^31) of a block's newest
 * copy; since a live copy lies in [tail_pos, alloc_pos), which is at most one
 * lap long, the slot determines pos uniquely (slot_to_pos).
 */
#ifndef QS_CACHE_ENGINE_INT_H
#define QS_CACHE_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "index.h"
#include "place.h"
#include "qlcshape/engine.h"
#include "qlcshape/format.h"

#define SLOT_TOMB 0x80000000u /* index value flag: block reads as zeroes */
#define SLOT_MASK 0x7fffffffu
#define NIL UINT32_MAX
#define DST_FAIL_GIVE_UP 5 /* destage failures in a row before full-log writes fail */
/* Recovery reads the log a segment per read, up to this many segments (and
 * RCV_SCAN_BYTES) ahead of the record it checks: the device streams instead
 * of answering one header read at a time. */
#define RCV_SCAN_AHEAD 8u
#define RCV_SCAN_BYTES (16u << 20)

enum req_type { REQ_READ, REQ_WRITE, REQ_FLUSH, REQ_DISCARD, REQ_INTERNAL };

/* Where a whole-IU QLC operation (qop.c) is. */
enum qop_stage {
	QOP_NONE = 0,	   /* no qop, or not started */
	QOP_QLC = 1,	   /* the QLC write (FUA) or discard in flight */
	QOP_QLC_FLUSH = 2, /* a discard's QLC flush in flight */
	QOP_INVAL = 3,	   /* durable on the QLC: its INVAL record being logged */
	QOP_DONE = 4,	   /* IUs released */
};

struct req {
	enum req_type type;
	uint64_t lba, nblocks;	/* 4 KiB blocks */
	unsigned char *buf;
	unsigned flags;
	qs_req_cb cb;
	void *arg;
	int pending; /* outstanding parts */
	int result;
	uint64_t appended; /* write: blocks handed to the log so far */
	struct req *next;  /* space-wait, flush or ready list */
	struct req *qop_next; /* qop-wait list: a discard may sit in both */
	/* whole-IU QLC op (bypass write or discard of whole IUs) */
	uint64_t qop_iu, qop_ius;
	uint64_t qop_lba, qop_nblocks; /* the INVAL extent to log */
	enum qop_stage qop_stage;
	bool inval_todo;
	bool waiting;		/* in the space-wait list */
	bool paced;		/* charged by eng_pace_admit (once) */
	bool pace_held;		/* counted in paced_writes */
	bool fua_flushing;	/* FUA: waiting for the log flush */
	uint32_t inval_pending;	/* INVAL extents in the log, not yet complete */
	uint64_t inval_done;	/* blocks of INVAL extents appended */
	uint64_t zero_lba[2], zero_n[2]; /* discard: partial-IU tombstones */
	struct iovec iov1;
	/* log placement: MAP/MOVE extents to log (a unit's), or a TRIM */
	const struct plc_ext *px;
	uint32_t px_n, px_done;
	/* What it waits for behind the acquirer: map page px_wait_pg - 1 to
	 * arrive, or (px_wait_pg 0) mpc.gen to move from px_wait_gen - 1; as
	 * the acquirer, with every page it lacks being read, mpc.reads_done
	 * to move from px_wait_rd - 1. */
	uint64_t px_wait_pg, px_wait_gen, px_wait_rd;
	struct qs_engine *owner;
	struct req *all_prev, *all_next; /* every live request, for teardown */
	struct req *pg_next;	/* log placement: reads waiting for map pages */
	uint64_t pg_pins[REQ_PG_PINS]; /* ... and the pages each holds meanwhile */
	uint32_t npg_pins;
};

/*
 * The first member of every context allocated for one device I/O (struct
 * sub, place.c's struct upiece): it links the context in e->io_live while
 * the I/O is in flight, so that an engine freed after a crash, whose
 * volumes never complete what was in flight, frees those contexts too.
 */
struct io_link {
	struct io_link *prev, *next;
};

/* One piece of a client request issued to a volume. */
struct sub {
	struct io_link link; /* first: eng_io_alloc */
	struct qs_engine *e;
	struct req *req;
	uint64_t seg;  /* pinned log segment, or UINT64_MAX */
	uint64_t band; /* log placement: pinned band, or UINT64_MAX */
	bool log;
	struct iovec iov;
};

/* An in-memory log record: the open batch, or one in flight. */
struct rec {
	struct rec *next;	 /* in-flight FIFO, in seq order */
	uint64_t seq, pos;	 /* header position */
	uint32_t nblocks;	 /* data blocks so far */
	bool done, voiding, submitted;
	int result;
	uint64_t prev_alloc;	 /* alloc_pos before this record was opened */
	struct qs_engine *owner;
	struct qs_fmt_rec *hdr;	 /* 4 KiB, aligned */
	struct req *ext_req[QS_FMT_REC_MAX_EXTENTS];
	const unsigned char *ext_buf[QS_FMT_REC_MAX_EXTENTS];
	struct iovec iov[QS_FMT_REC_MAX_EXTENTS * 2 + 1];
	int iovcnt;
	/* log placement: map pages its extents change, pinned until applied */
	uint64_t pins[PLC_REC_PAGES];
	uint32_t npins;
	/* ... and those it keeps in the store instead (plc->pend), with the
	 * entries it holds room for there */
	uint64_t kpages[PLC_REC_PAGES];
	uint32_t nkp, kept;
};

/* A dirty IU: an IU with at least one cached block. */
struct diu {
	uint64_t iu;
	uint64_t lseq;		/* when it was last (re)linked into its bucket */
	uint32_t fprev, fnext;	/* FIFO list, oldest first */
	uint32_t bprev, bnext;	/* bucket list by count (while buckets_on) */
	uint32_t count;		/* cached blocks */
	uint32_t born_ms;	/* when it became dirty, engine ms */
};

/* An entry of the sweep snapshot: an IU and its dirty-IU slot then. */
struct sweep_ent {
	uint64_t iu;
	uint32_t idx;
};

/* An IU with a QLC operation in flight (destage, bypass, discard). */
struct busy {
	uint64_t iu;
	struct busy *next;
};
#define BUSY_BUCKETS 1024u

struct destage {
	struct qs_engine *e;
	bool active;
	uint64_t iu;
	int pending, result;
	unsigned char *buf;	/* iu_bytes, aligned */
	unsigned char *fill;	/* iu_bytes: the QLC read of the gaps lands here */
	uint32_t *snap;		/* per block: slot|TOMB, or NIL */
	uint32_t cached;
	bool discard;
	struct iovec iov;
	struct dpiece *pieces;	/* iu_blocks + 1: its reads (log runs, one QLC read) */
	uint32_t npieces;	/* used since dst_start */
};

/* A checkpoint's steps, in order (destage.c, ckpt_step): each starts when
 * the one before completed. */
enum eng_ckpt_stage {
	CKPT_MAP_FLUSH,	 /* log placement: the map pages the tail is to pass */
	CKPT_QLC_FLUSH,	 /* the QLC's write cache: destaged IUs durable */
	CKPT_LOG_FLUSH,	 /* the fast tier's write cache: the records up to the new tail */
	CKPT_SUPERBLOCK, /* the superblock that moves the tail */
};

/* A clean close's steps after the map and the clean state (recover.c,
 * close_cb), in order; CLOSE_DONE also when one failed. */
enum eng_close_stage {
	CLOSE_START,
	CLOSE_QLC_FLUSH,
	CLOSE_LOG_FLUSH,
	CLOSE_SUPERBLOCK,
	CLOSE_DONE,
};

/* "the map page flush", "the QLC flush", ...: a step for the log. */
const char *eng_ckpt_stage_name(enum eng_ckpt_stage s);
const char *eng_close_stage_name(enum eng_close_stage s);

/* One read of a destage. */
struct dpiece {
	struct destage *d;
	uint64_t seg; /* pinned segment, or UINT64_MAX */
	bool log;     /* from the log into d->buf; else the QLC read of the
			 gaps, blocks b..b+n-1, into d->fill */
	uint32_t b, n;
	struct iovec iov;
};

struct failed_iu {
	uint64_t iu;
	uint64_t retry_at_ns;
	uint32_t attempts;
};


struct qs_engine {
	struct qs_env env;
	struct qs_vol *fast, *qlc;
	struct qs_engine_conf conf;
	uint32_t iu_blocks;
	uint64_t dev_blocks;
	uint64_t t0_ns;

	bool ready, closing, closed, failed, opening;
	bool no_data; /* QS_OPEN_NO_DATA: skip checksums and copies of data */
	uint64_t mem_bytes; /* what eng_alloc holds now (eng_mem) */
	qs_req_cb open_cb, close_cb, drain_cb;
	void *open_arg, *close_arg, *drain_arg;
	bool draining;

	/* log geometry and positions */
	struct qs_fmt_sb sb; /* last superblock written or read */
	uint32_t seed;	     /* record CRC seed, from the log's uuid */
	uint64_t log_blocks, nsegs;
	/* Blocks of the log in use at once at most (conf.log_window_blocks,
	 * or the whole log): what the index is sized for. Data waits for room
	 * beyond it as at the end of the log (rec_room). */
	uint64_t win_blocks;
	uint64_t diu_max;	/* conf.dirty_ius_max: data waits at it; 0 none */
	uint32_t seg_blocks;
	uint64_t tail_pos, tail_seq;  /* durable tail */
	uint64_t alloc_pos, next_seq; /* where the next record goes */
	uint64_t done_pos, done_seq;  /* end of in-order completed records */
	uint32_t *seg_live;	      /* live index entries per segment */
	uint32_t *seg_pins;	      /* reads in flight per segment */
	uint64_t *seg_first_seq;      /* seq of the record at segment start */

	/* records */
	struct rec *recs;	/* eng_nrecs() */
	struct rec *free_recs;
	struct rec *open;	/* batch being filled */
	struct rec *fifo_head, *fifo_tail;
	uint32_t inflight_recs;

	/* DRAM buffer: a ring mirroring the newest log positions */
	unsigned char *ring;
	uint64_t ring_blocks, ring_from, ring_hi; /* [ring_from, ring_hi), last ring_blocks */

	/* index and dirty IUs */
	struct qs_index idx;
	struct qs_index diu_map; /* iu -> diu pool index */
	struct diu *dius;
	uint32_t diu_cap, diu_free, ndius;
	uint32_t diu_hw;	/* slots [diu_hw, diu_cap) never used yet: free */
	bool diu_short;		/* a block found no dirty-IU slot: counts may be short */
	uint32_t fifo_first, fifo_last;
	uint32_t *bucket_head; /* [iu_blocks + 1] */
	bool buckets_on;       /* bucket lists kept (fullest-first order only) */
	uint64_t bucket_seq;   /* last diu.lseq handed out */
	struct sweep_ent *sweep; /* sorted IU snapshot for the sweep policy */
	uint64_t sweep_n, sweep_at, sweep_cap;

	/* QLC ops in flight, per IU */
	struct busy *busy[BUSY_BUCKETS];
	struct busy *busy_free;
	struct req *qop_wait_head, *qop_wait_tail;

	/* destage */
	struct destage *dst;
	uint32_t dst_active;
	struct failed_iu *failed_ius;
	uint32_t nfailed;
	bool qlc_unflushed; /* destage writes since the last QLC flush */
	uint64_t dst_pause_until; /* after an error, no destage before this */
	uint32_t dst_fail_streak;
	uint64_t client_seq;	/* client requests so far (no clock read per request) */
	uint64_t idle_seq;	/* client_seq when idle_since_ns was taken */
	uint64_t idle_since_ns;	/* no client request seen since then */

	/* checkpoint */
	bool ckpt_active;
	enum eng_ckpt_stage ckpt_stage;
	uint64_t ckpt_pos, ckpt_seq;
	uint64_t ckpt_scan_pos, ckpt_scan_seq; /* dead up to here (see ckpt_candidate) */
	struct qs_fmt_sb *sb_buf; /* 4 KiB aligned */
	struct qs_fmt_sb sb_next; /* being written */
	qs_io_cb sb_cb;
	void *sb_arg;
	uint64_t ckpt_retry_ns;
	uint64_t ckpt_flush_seq; /* done_seq when its log flush was issued */
	uint32_t ckpt_fail_streak;

	/* waits */
	struct req *space_head, *space_tail; /* appends waiting: see log_full */
	/*
	 * Why the appends wait: true when the last append that could not be
	 * made found no log room (destage and checkpoint must free some);
	 * false when it only found every record slot in flight (log_qd
	 * writes), which the next record completion ends by itself.
	 */
	bool log_full;
	bool space_kicking;	 /* in eng_space_kick's walk of the queue */
	/* Write pacing (log.c, eng_pace_admit). */
	double pace_free;	 /* blocks per ns checkpoints free (0: not measured yet) */
	double pace_tokens;	 /* blocks that may go now */
	uint64_t pace_last_ns;	 /* last bucket fill */
	uint64_t pace_win_ns, pace_win_blocks; /* the free rate's current window */
	uint64_t pace_wake_ns;	 /* when a held write may go */
	uint64_t pace_step_ns;	 /* when held writes last went */
	bool pace_stepping;	 /* in eng_pace_step: paced writes may go */
	bool pace_in;		 /* the log is in the paced band */
	bool pace_held;		 /* a write waits for its turn */
	struct req *flush_cur, *flush_next;  /* flush pipeline */
	bool flush_inflight;
	uint64_t flush_seq;   /* done_seq when the flush in flight was issued */
	uint64_t durable_seq; /* records below this seq are durable (volatile log) */
	struct req *ready_head, *ready_tail; /* completions to deliver */
	int depth;			     /* engine call nesting */
	uint64_t timer_at;

	/* requests */
	struct req *free_reqs;
	struct req *all_reqs;
	struct io_link *io_live; /* eng_io_alloc's contexts in flight */

	struct qs_engine_stats st;

	struct plc *plc; /* log placement; NULL in place */

	/* recovery scan state: segments read RCV_SCAN_AHEAD at a time */
	unsigned char *scan_data;	   /* scan_ahead segment buffers */
	uint64_t scan_pos, scan_seq, scan_epoch;
	bool scan_tried_next, scan_clean;
	uint32_t scan_ahead;		   /* segments read ahead: buffers */
	uint64_t scan_next_seg;		   /* next segment to read */
	uint64_t scan_seg[RCV_SCAN_AHEAD]; /* per buffer: the segment it holds */
	int scan_res[RCV_SCAN_AHEAD];	   /* per buffer: 1 reading, 0 read, or -errno */
	struct iovec scan_seg_iov[RCV_SCAN_AHEAD];
	struct scan_rd_ctx { struct qs_engine *e; uint32_t k; } scan_rd[RCV_SCAN_AHEAD];
	uint32_t scan_inflight;
	bool scan_running, scan_stopping;
	int scan_stop_res;		   /* 1: the log ends there; else -errno */
	struct qs_fmt_sb *sb_read[2];
	struct iovec sb_read_iov[2], sb_iov;
	struct sb_read_ctx { struct qs_engine *e; int copy; } sb_read_ctx[2];
	enum eng_close_stage close_stage;
	bool close_started;
	int sb_read_res[2];
	int open_pending;
	unsigned open_flags;
};

/* engine.c */
void *eng_alloc(struct qs_engine *e, size_t size, size_t align);
void eng_free(struct qs_engine *e, void *p);
/* Bytes eng_alloc counted for p (header included); 0 for NULL. */
size_t eng_alloc_bytes(const void *p);
/* The engine's DRAM by part, for qs_engine_get_stats. */
void eng_mem(const struct qs_engine *e, struct qs_engine_mem *m);
/* A context for one device I/O, whose first member is a struct io_link;
 * freed by eng_io_free when the I/O completes, or by qs_engine_free. */
void *eng_io_alloc(struct qs_engine *e, size_t size);
void eng_io_free(struct qs_engine *e, void *ctx);
void eng_log(struct qs_engine *e, enum qs_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t eng_now(struct qs_engine *e);
void eng_enter(struct qs_engine *e);
void eng_leave(struct qs_engine *e);
void eng_leave_deliver(struct qs_engine *e);
void eng_req_done(struct qs_engine *e, struct req *r);
void eng_notify(struct qs_engine *e, qs_req_cb cb, void *arg, int res);
void eng_req_part_done(struct qs_engine *e, struct req *r, int result);
struct req *eng_req_alloc(struct qs_engine *e);
void eng_req_free(struct qs_engine *e, struct req *r);
void eng_arm_timer(struct qs_engine *e);
void eng_maybe_finish_close(struct qs_engine *e);
/*
 * Record slots: log_qd records in flight, the open one being filled, and
 * one closed that waits for a write slot (so filling never waits on the
 * record ahead of it).
 */
/* Dirty-IU records dst_init sizes the pool and its lookup for: a log full
 * of whole dirty IUs (both grow if IUs are sparser); cache/mem.c plans it. */
static inline uint64_t eng_diu_pool(uint64_t log_blocks, uint32_t iu_blocks)
{
	uint64_t ius = log_blocks / iu_blocks;
	return ius < 1024 ? 1024 : ius > UINT32_MAX / 4 ? UINT32_MAX / 4 : ius;
}

/* Bits that hold every number up to n (at least 1). */
static inline uint32_t eng_bits(uint64_t n)
{
	return n ? 64 - (uint32_t)__builtin_clzll(n) : 1;
}

/* The block index's value bits: a log slot (below log_blocks) and
 * SLOT_TOMB (index.h: the flag takes a bit of a packed slot). */
static inline uint32_t eng_idx_val_bits(uint64_t log_blocks)
{
	return eng_bits(log_blocks - 1) + 1;
}

/* The dirty-IU lookup's value bits: a record's number, whole. (Dirty IUs
 * are not bounded by the log's blocks: tombstones of many IUs share one
 * header block.) */
#define ENG_DIU_VAL_BITS 32u

static inline uint32_t eng_nrecs(const struct qs_engine *e)
{
	return e->conf.log_qd + 2;
}
/* Count a QLC write of len bytes at off (whole IUs or not). */
void eng_qlc_count_write(struct qs_engine *e, uint64_t off, uint64_t len);
int eng_alloc_log(struct qs_engine *e);
void eng_fail(struct qs_engine *e, const char *why);
/* Run read r (its map pages in DRAM with log placement): issue its pieces
 * and drop the submission's part. */
void eng_read_run(struct qs_engine *e, struct req *r);
/* Recovery's log scan waited for map pages: go on. */
void rcv_scan_resume(struct qs_engine *e);
/* Issue one piece of client request r on vol ('r', 'w', 'f', 'd'), pinning
 * log segment pin_seg or band pin_band (UINT64_MAX: none) until it is done. */
int eng_sub_io(struct qs_engine *e, struct req *r, struct qs_vol *vol, int op, uint64_t off,
	       void *buf, uint64_t len, uint64_t pin_seg, uint64_t pin_band);

/* log.c: positions, the DRAM ring, index upkeep, log writer, flushes */
static inline uint32_t pos_slot(const struct qs_engine *e, uint64_t pos)
{
	return (uint32_t)(pos % e->log_blocks);
}

static inline uint64_t slot_seg(const struct qs_engine *e, uint32_t slot)
{
	return (slot & SLOT_MASK) / e->seg_blocks;
}

uint64_t eng_slot_to_pos(const struct qs_engine *e, uint32_t slot);
uint64_t eng_pos_off(const struct qs_engine *e, uint64_t pos);
bool eng_ring_has(const struct qs_engine *e, uint64_t pos);
unsigned char *eng_ring_at(const struct qs_engine *e, uint64_t pos);
void eng_index_set(struct qs_engine *e, uint64_t lba, uint32_t val);
void eng_index_drop(struct qs_engine *e, uint64_t lba);
void eng_index_drop_range(struct qs_engine *e, uint64_t lba, uint64_t n);
/* Records with a seq below this are durable on the log device. */
uint64_t eng_durable_seq(const struct qs_engine *e);
/* Apply a completed record's extents to the index (and the map); runtime
 * false in recovery. */
void eng_apply_record(struct qs_engine *e, const struct qs_fmt_rec *h, uint64_t pos,
		      bool runtime);
void eng_apply_extent(struct qs_engine *e, const struct qs_fmt_extent *x,
		      uint64_t hdr_pos, uint64_t data_pos);
/* Append what r still has to log; false if it must wait for room. */
bool eng_log_append(struct qs_engine *e, struct req *r);
/* Park r until log room or a record slot frees up (one pending part). */
void eng_space_wait(struct qs_engine *e, struct req *r);
/*
 * Pacing: may r's data be appended now? false: wait (eng_space_wait) for
 * the timer (pace_wake_ns). A request is charged once; requests without
 * data, and all of them below the paced band, always may.
 */
bool eng_pace_admit(struct qs_engine *e, struct req *r);
/* A checkpoint freed blocks of the log: the rate pacing admits at follows. */
void eng_pace_freed(struct qs_engine *e, uint64_t blocks);
/* The timer: held writes go, as far as the bucket allows. */
void eng_pace_step(struct qs_engine *e);
/* Blocks of the paced band (from pace_pct, or urgent_pct, to full). */
uint64_t eng_pace_band(const struct qs_engine *e);
/* Writes are being paced, and the log is still in the band. */
bool eng_pace_on(const struct qs_engine *e);
void eng_space_kick(struct qs_engine *e);
void eng_log_kick(struct qs_engine *e);
/* r completes once everything completed before now is durable on the log. */
void eng_flush_enqueue(struct qs_engine *e, struct req *r);

/* qop.c: whole-IU QLC operations */
void eng_qop_submit(struct qs_engine *e, struct req *r, uint64_t iu, uint64_t ius);
void eng_qop_kick(struct qs_engine *e);
void eng_qop_release(struct qs_engine *e, struct req *r);
void eng_qop_finish(struct qs_engine *e, struct req *r, int res);

/* destage.c */
int dst_init(struct qs_engine *e);
void dst_fini(struct qs_engine *e);
void dst_diu_add(struct qs_engine *e, uint64_t iu);
void dst_diu_sub(struct qs_engine *e, uint64_t iu);
void dst_kick(struct qs_engine *e);
/* conf.policy changed: drop the sweep order, bucket upkeep if not needed. */
void dst_policy_changed(struct qs_engine *e);
void ckpt_kick(struct qs_engine *e, bool force);
/* The next dirty IU the policy would destage, NIL if none eligible. after:
 * the IU this caller picked last, with nothing run since (NIL: none); in
 * FIFO order the scan goes on behind it, where the rest are. */
uint32_t dst_pick(struct qs_engine *e, uint32_t after, bool urgent, bool space);
/* After a failed destage or GC unit: pause all destage with a back-off. */
void dst_pause(struct qs_engine *e);
bool busy_has(struct qs_engine *e, uint64_t iu);
int busy_add(struct qs_engine *e, uint64_t iu);
void busy_del(struct qs_engine *e, uint64_t iu);
uint64_t dst_next_deadline(struct qs_engine *e);
uint32_t eng_ms(struct qs_engine *e);
bool eng_idle(struct qs_engine *e, uint64_t now);

/* recover.c */
void rcv_start(struct qs_engine *e);
/* Write the next superblock (generation + 1) with this tail; FUA. On
 * success e->sb becomes the new superblock before cb runs. */
void rcv_write_sb(struct qs_engine *e, uint64_t tail_pos, uint64_t tail_seq, bool clean,
		  qs_io_cb cb, void *arg);
void eng_check_drain(struct qs_engine *e);

#endif
