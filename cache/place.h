/* SPDX-License-Identifier: MIT */
/*
 * Log placement's internals (cache/place.c), shared with the engine files
 * that hand it work: the read path, destage, the log writer's record
 * completion, checkpoint, recovery and close.
 *
 * With placement = log the QLC is divided into bands. Destage packs cached
 * 4 KiB blocks of any LBAs into whole IUs ("units") appended to the open
 * client band; GC packs the still-valid blocks of a victim band into units
 * appended to the open GC band. A map gives, for every client LBA, the QLC
 * block holding it (or none: it reads as zeroes); a bitmap in DRAM says
 * which QLC blocks the map points at (valid), and P2L pages on the fast
 * tier the LBA each block of a band was written for, so GC reads a
 * victim's P2L pages to move its valid blocks (SPDK's FTL keeps band
 * metadata for the same reason). A unit's P2L entries are written before
 * its MAP or MOVE record, so they are durable for every block the map
 * points at.
 *
 * Map changes are records in the fast-tier log (MAP for destage, MOVE for
 * GC, TRIM for discards; docs/FORMAT.md) applied in log order at runtime
 * and in recovery alike; map pages on the fast tier are written by every
 * checkpoint before the tail moves past the records they cover.
 */
#ifndef QS_CACHE_PLACE_H
#define QS_CACHE_PLACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "qlcshape/engine.h"
#include "qlcshape/format.h"
#include "qlcshape/vol.h"
#include "pend.h"

struct qs_engine;
struct req;
struct rec;

#define PLC_NONE UINT64_MAX  /* map/P2L: nothing there */
#define PLC_GC_RESERVE 2u    /* free bands only GC may open */
#define PLC_MAP_QD 16u	     /* map page writes in flight */
#define PLC_LOAD_BLOCKS 256u /* blocks read (recovery) or written (clean state) at once */
#define PLC_REC_PAGES (2u * QS_CONF_IU_MAX / 4096u) /* a unit's extents' pages, largest IU */
#define MPC_PINS 256u	     /* map pages pinned at once, at most (fewer in small caches) */
#define REQ_PG_PINS 2u	     /* map pages a waiting read holds */
#define MPC_NONE UINT32_MAX

/* bitmaps */
static inline bool plc_bit(const uint8_t *bm, uint64_t i)
{
	return bm[i >> 3] & (1u << (i & 7));
}

static inline void plc_bit_put(uint8_t *bm, uint64_t i, bool v)
{
	if (v)
		bm[i >> 3] |= (uint8_t)(1u << (i & 7));
	else
		bm[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

enum mpc_state {
	MPC_FREE = 0,	/* in a free list */
	MPC_LOADING,	/* its page is being read */
	MPC_READY,	/* holds its page */
	MPC_ERROR,	/* its page's read failed: waiters see err, then it is freed */
	MPC_COW,	/* a page's copy at the running flush's snapshot */
};

/* A frame of the map page cache (cache/mapcache.c): one map page. */
struct mpc_frame {
	uint64_t page;	     /* the page held (LOADING, READY, ERROR) */
	uint32_t prev, next; /* LRU of evictable frames (MRU at the head), or a free list */
	uint32_t pins;	     /* records whose extents will change it */
	uint32_t cow;	     /* frame of its snapshot copy, or MPC_NONE */
	int err;	     /* ERROR: the read's -errno */
	uint8_t state;	     /* enum mpc_state */
	bool dirty;	     /* changed since the last snapshot */
	bool pending;	     /* in the running flush, not yet copied for writing */
	bool wb;	     /* a write of it in flight */
	bool in_lru;
	bool acq;	     /* held by the acquirer (plc_rec_pin) */
};

struct mpc_io {
	struct qs_engine *e;
	uint32_t f;
	struct iovec iov;
};

/*
 * The map page cache. Page frames hold map pages; COW frames hold the
 * copies a running flush needs of pages changed before it wrote them.
 * Both together are engine.map_dram_limit.
 */
struct mpc {
	uint32_t nframes, ncow;	/* page frames, then COW frames */
	struct mpc_frame *fr;	/* [nframes + ncow] */
	struct qs_fmt_map_page *data; /* [nframes + ncow]; NULL when timing only */
	struct mpc_io *io;	/* [nframes]: a page read per frame at most */
	uint32_t *pg_frame;	/* [map_pages]: frame holding the page, or MPC_NONE */
	uint8_t *empty;		/* [map_pages] bits: never written since format (all unmapped) */
	uint32_t lru_head, lru_tail, free_head, cow_free;
	uint32_t resident, cows, peak; /* frames holding a page; COW copies; most of both */
	uint32_t pins;		/* pinned pages, all records */
	uint32_t loading;	/* page reads in flight */
	uint32_t err_head;	/* ERROR frames, through next */
	bool want;		/* something waits for a page or a frame */
	/* Bumped by every change that may let a record have pages it could
	 * not have before: a page arriving (or failing), a frame taken, a
	 * pin, hold or error frame let go, the acquirer changing. A request
	 * that waited at an unchanged gen would wait again (plc_rec_pin). */
	uint64_t gen;
	uint64_t reads_done; /* page reads completed, failed ones too */
	bool want_frame;	/* ... and found none to take */
	/* Lookups, each counted once (hits, misses), and pages read (reads).
	 * relook: plc_pages_kick is retrying the requests that wait, whose
	 * lookups were counted when they were first made: a request whose
	 * page was missing would otherwise count a hit when it arrived, and
	 * every waiter a hit at every other page's arrival. (A request that
	 * waited for log space and makes its first lookups in that walk goes
	 * uncounted: the figure errs low on lookups, never double.) */
	uint64_t hits, misses, reads;
	bool relook;
	unsigned char *scratch; /* timing only: where page reads land */
};

enum band_state {
	BAND_FREE = 0,	/* in the free queue */
	BAND_OPEN,	/* being written by a stream */
	BAND_FULL,	/* written to the end; holds valid blocks, or waits to be freed */
	BAND_VICTIM,	/* being emptied by GC */
};

struct band {
	uint32_t valid;	   /* blocks the map points at */
	uint32_t pins;	   /* QLC reads in flight from it */
	uint32_t inflight; /* unit writes in flight into it */
	uint8_t state;	   /* enum band_state */
	bool drained;	   /* in the drained list: no valid block, not yet free */
	bool stuck;	   /* GC cannot empty it: P2L entries of valid blocks lost */
	uint64_t drop_seq; /* last log record that took a block from it */
	uint64_t age;	   /* plc.closes when it was filled (GC's age) */
};

/* One MAP, MOVE or TRIM extent to be logged. */
struct plc_ext {
	uint64_t lba, phys, from;
	uint32_t n, kind;
};

/*
 * A frame of a P2L page being filled: the pages the streams' units are
 * placed in, each until its stream has moved past it and every entry set
 * is durable. Entries are set when a unit is placed (unit_issue); a write
 * of the page carries every entry set when it started (set, done: counts).
 */
struct p2l_frame {
	struct qs_engine *e;
	uint64_t page;	     /* the P2L page held, PLC_NONE: free */
	uint32_t refs;	     /* units placed in it not yet past their P2L write */
	uint64_t set, done;  /* entries set so far; set when the last write done began */
	uint64_t wr_set;     /* set when the write in flight began */
	bool wb;	     /* a write in flight */
	uint8_t slot;	     /* the slot the next write goes to */
	int err;	     /* the last write's -errno, 0 once one succeeds */
	/* Taken mid-page (a stream resumed after a restart): the entries
	 * before base_k are the page's newest copy on the device, read (into
	 * rbuf, both slots) before the first write. */
	bool need_base, base_rd;
	uint32_t base_k;
	struct qs_fmt_map_page *data, *wbuf; /* entries as set; the copy being written */
	unsigned char *rbuf;		     /* 2 blocks */
	struct iovec iov;
};

/* A unit: one whole IU written to a band, by destage or by GC. */
struct unit {
	struct qs_engine *e;
	bool active, gc;
	bool p2l_wait;	   /* written; its MAP or MOVE waits for its P2L entries */
	uint32_t pf[2];	   /* frames of its P2L entries (UINT32_MAX: none) */
	uint64_t pneed[2]; /* their set count once its entries were in */
	int pending, result;
	uint32_t n;	   /* slots filled (the rest is padding) */
	uint64_t *lba;	   /* per slot: the client block */
	uint64_t *from;	   /* destage: log position of the copy; GC: old QLC block */
	uint32_t *snap;	   /* destage: index value when gathered (segment pinned) */
	uint64_t *ius;	   /* destage: IUs held busy */
	uint32_t nius;
	uint64_t phys;	   /* QLC block the unit went to */
	uint64_t band;
	unsigned char *buf; /* iu_bytes */
	struct iovec iov;
	struct plc_ext *x; /* what to log once written */
	uint32_t nx;
	struct unit *next; /* parked: waiting for a band */
};

#define PLC_MERGE_MAX 64u /* kept pages read at once to apply their entries */

struct plc {
	uint64_t lbas, phys;	/* client blocks; QLC blocks in bands */
	/* Kept map updates (cache/pend.c; timing only until recovery replays
	 * them, docs/ARCHITECTURE.md, Memory): changes of pages not in DRAM,
	 * applied by reading the page that holds the most once the store is
	 * 7/8 full. */
	struct qs_pend pend;
	uint32_t pend_reserved;		/* entries records hold room for */
	uint32_t nmerge;		/* pages read to apply their entries */
	uint64_t merge_pg[PLC_MERGE_MAX];
	uint64_t pend_kept, pend_applied, pend_page_reads, pend_overflow;
	uint64_t pend_stale_gc; /* old page values GC found garbage (PEND_STALE) */
	uint64_t move_wrong;	/* qs_engine_check: a move's bit against the table */
	uint32_t band_blocks;
	uint64_t nbands;
	uint32_t width;		/* map entry bytes: 4 or 8 */
	void *map;		/* timing only: [lbas], the map's contents (frames
				   then only say what would be in DRAM) */
	void *p2l_all;		/* timing only: [phys], what the P2L pages would hold */
	uint8_t *valid;		/* [phys] bits: the map points at the block */
	/* P2L pages on the fast tier (format.h): per band band_pages of
	 * cover entries, two slots each from p2l_start */
	uint64_t p2l_start, p2l_pages;
	uint32_t p2l_cover, p2l_band_pages;
	uint64_t p2l_gen;	/* last gen written: epoch << 40 | writes */
	struct p2l_frame *pfr;	/* [npfr] */
	uint32_t npfr;
	/* The victim's P2L pages, both slots, read when GC picks it: the
	 * slot of each page that holds its newest valid copy, or -1. */
	unsigned char *vic_buf;	/* 2 * p2l_band_pages blocks */
	int8_t *vic_sel;	/* [p2l_band_pages] */
	struct iovec vic_iov;
	uint8_t vic_state;	/* VIC_* */
	uint64_t gc_retry_ns;	/* after a failed read of a victim's pages: not before */
	uint32_t vic_fail_streak; /* such reads failed in a row */
	struct mpc mpc;		/* the map's pages in DRAM */
	struct req *rd_head, *rd_tail; /* reads waiting for map pages */
	bool scan_waits;	/* recovery's scan waits for map pages */
	bool kicking, kick_again; /* plc_pages_kick running; called again meanwhile */
	uint32_t pin_cap;	/* pages pinned at once: the COW frames */
	/* The one request that may read pages for a record and keep them
	 * while it waits (plc_rec_pin says why only one). */
	struct req *acq;
	uint32_t acq_n, acq_need; /* pages it holds; pages its record needs */
	uint64_t acq_pgs[PLC_REC_PAGES];
	uint32_t rec_pages;	/* pages one record may pin: a unit's extents' (a TRIM: half) */
	struct band *bands;
	uint64_t *freeq;	/* ring of free bands, oldest freed first */
	uint64_t free_head, free_n;
	uint64_t *drained;	/* bands with no valid block, not yet reusable */
	uint64_t ndrained;
	uint64_t open[2], wp[2]; /* per stream (0 client, 1 GC): band, next block */
	uint64_t closes;	/* bands filled so far */
	uint64_t apply_seq;	/* seq of the record being applied */
	struct unit *gcu;	/* destage_qd GC units, then destage_qd destage units */
	struct unit *dstu;
	uint32_t gc_active;
	uint64_t victim, victim_at; /* band being emptied, next block to look at */
	struct unit *park_head[2], *park_tail[2]; /* per stream */
	bool flush_asked;	/* a log flush requested to free drained bands */
	uint64_t flush_retry_ns; /* after a failed one: not before this */
	/* map pages on the fast tier */
	uint32_t rsv_per_unit;	/* log blocks kept per unit still to destage */
	uint32_t per_page;
	uint64_t map_start, map_pages;
	uint8_t *newest;	/* bitmap: slot 1 holds its committed copy */
	uint64_t *dirty_list, ndirty; /* pages dirty (resident: at most nframes) */
	uint32_t dirty_hi;	/* that many dirty pages ask for a checkpoint */
	uint8_t *written;	/* bitmap: written since the last commit (to !newest) */
	uint64_t nwritten;
	uint8_t *stale;		/* recovery: bitmap of slots to zero (uncommitted copies) */
	uint64_t gen;		/* last map gen handed out (or seen on the device) */
	uint64_t snap_seq, snap_gen; /* the running or last flush's snapshot */
	bool mf_ready;		/* that flush is written in full, not yet committed */
	/* map flush (checkpoint stage 0, close) */
	bool mf_active;
	uint64_t *mf_list, mf_n, mf_next;
	uint32_t mf_inflight;
	int mf_result;
	qs_io_cb mf_cb;
	void *mf_arg;
	struct plc_mfw { struct qs_engine *e; uint64_t page; uint32_t slot; bool busy;
			 struct qs_fmt_map_page *buf; struct iovec iov; } mfw[PLC_MAP_QD];
	/* region reads in recovery (the map, the clean state) and the clean
	 * state's write at close: PLC_LOAD_BLOCKS at a time through ld_buf */
	unsigned char *ld_buf;
	uint64_t ld_start, ld_blocks, ld_next; /* the region, the next block of it */
	struct iovec ld_iov;
	int (*ld_take)(struct qs_engine *e, uint64_t blk, const unsigned char *buf, uint64_t n);
	void (*ld_done)(struct qs_engine *e, int res);
	bool ld_rd_failed;	/* the region read ended on a read error */
	qs_io_cb ld_cb;		/* plc_load's or plc_clean_write's caller */
	void *ld_arg;
	/* clean state (docs/FORMAT.md): header, band pages, valid-bitmap pages */
	uint64_t cs_start, cs_band_pages, cs_blocks;
	uint64_t cs_gen;	/* written for the superblock of this generation */
	bool cs_written;	/* written in full (close) */
	bool cs_loaded;		/* read and valid (recovery): plc_rebuild takes it */
	struct qs_fmt_clean cs; /* the header read, while the pages are checked */
	/* statistics */
	uint64_t gc_victims, gc_read_bytes, gc_write_bytes, gc_moved, map_page_writes, mapped;
	uint64_t p2l_page_writes, p2l_page_reads, gc_unknown; /* unknown: valid blocks
							   whose P2L entry was lost */
};

enum { VIC_NONE = 0, VIC_LOADING, VIC_READY };

/* ---- map page cache (cache/mapcache.c) ---- */

/* Allocate the frames (plc_init, after the geometry is known); -errno. */
int mpc_init(struct qs_engine *e);
void mpc_fini(struct qs_engine *e);
/*
 * Map page pg in DRAM: 1 when it is (now the most recently used), 0 when
 * it is being read or no frame is free (a checkpoint is asked for; the
 * caller waits and is kicked, see plc_pages_kick), -errno when its read
 * failed (the caller fails what needed it; the next call reads again).
 */
int mpc_get(struct qs_engine *e, uint64_t pg);
/* As mpc_get, but never reads or evicts: 1 resident and read, 0 not (the
 * caller waits and is kicked), -errno its read failed. */
int mpc_peek(struct qs_engine *e, uint64_t pg);
/* The entries of map page pg, which mpc_get found in DRAM. */
uint8_t *mpc_entries(struct plc *p, uint64_t pg);
/* Pin a resident page for a record that will change it, or unpin it. A
 * pinned page stays resident; pinning a page the running flush has not
 * written yet copies it first (0, or -EAGAIN when no COW frame is free). */
int mpc_pin(struct qs_engine *e, uint64_t pg);
void mpc_unpin(struct qs_engine *e, uint64_t pg);
/* Keep resident page pg from eviction for a moment (while its neighbours
 * are looked up), and let it go; no COW, no count against the pin cap. */
void mpc_hold(struct qs_engine *e, uint64_t pg);
void mpc_release(struct qs_engine *e, uint64_t pg);
/* Resident page pg is about to change: off the LRU until written. */
void mpc_dirty(struct qs_engine *e, uint64_t pg);
/* A frame may have become evictable (clean, unpinned, no write in flight). */
void mpc_settle(struct qs_engine *e, uint32_t f);
/* Copy of resident page pg's frame for the snapshot (plc_map_flush). */
void mpc_cow(struct qs_engine *e, uint64_t pg);
void mpc_cow_free(struct qs_engine *e, uint32_t f);
/* ERROR frames seen by their waiters go back to the free list. */
void mpc_errors_release(struct qs_engine *e);
/* Timing-only reads land here. */

/* ---- waiting for map pages ---- */

/* A read needs the map pages of its blocks: true when they are all in
 * DRAM (run it now); false when r was queued (eng_read_run runs it once
 * they are) or failed (its submission's part is done with the error). */
bool plc_read_ready(struct qs_engine *e, struct req *r);
/* Pages or frames came free: resume what waits for them. */
void plc_pages_kick(struct qs_engine *e);
/*
 * The log writer adds extents x[0..n) (a unit's MAP or MOVE extents still
 * to log, or one TRIM) to record rec: pin the map pages they change, all
 * in this record (a unit's records are what the log's reserve counts).
 * 1 pinned; 0 not now (the request r waits in the space queue, kicked when
 * pages arrive); -ENOSPC: rec has no room for them, close it and try the
 * next; -errno: a page's read failed.
 */
int plc_rec_pin(struct qs_engine *e, struct req *r, struct rec *rec, const struct plc_ext *x,
		uint32_t n);
/* r leaves the space queue (done or failed): the pages it held for a
 * record go back. Any time; nothing if r held none. */
void plc_acq_drop(struct qs_engine *e, struct req *r);
/* A TRIM of n blocks at lba, shortened to the map pages one record pins. */
uint64_t plc_trim_clip(const struct qs_engine *e, uint64_t lba, uint64_t n);
/* The record's extents applied or failed: its pages are unpinned. */
void plc_rec_unpin(struct qs_engine *e, struct rec *rec);
/* Recovery: the map pages record h changes, in DRAM? 1 yes; 0 wait (the
 * scan is resumed); -errno. */
int plc_scan_ready(struct qs_engine *e, const struct qs_fmt_rec *h);
/* Recovery: write back replayed pages to free frames (uncommitted). */
void plc_rcv_writeback(struct qs_engine *e);
/* A checkpoint is needed to make map pages clean. */
bool plc_map_pressed(const struct qs_engine *e);

/* P2L frames plc_init allocates (cache/mem.c plans them too). */
uint32_t plc_p2l_frames(uint32_t destage_qd);
/* Set up log placement from e->sb (format or recovery); -errno. */
int plc_init(struct qs_engine *e);
void plc_fini(struct qs_engine *e);
/* Lay out a new log-placement log on the fast device: fills e->sb's
 * placement fields and returns the log's size in blocks (0: too small). */
uint64_t plc_format_geometry(struct qs_engine *e, uint64_t seg);
/* Zero the map region (format); cb when durable. */
void plc_format_map(struct qs_engine *e, qs_io_cb cb, void *arg);

/* Read path: blocks lba..lba+n-1, none cached, into buf; their map pages
 * are in DRAM (plc_read_ready said so, and nothing ran since). */
int plc_read(struct qs_engine *e, struct req *r, uint64_t lba, uint64_t n, unsigned char *buf);
void plc_band_unpin(struct qs_engine *e, uint64_t band);

/* Destage: start one unit from the dirty set (first, or the policy's pick);
 * false when nothing could be started. */
bool plc_dst_start(struct qs_engine *e, uint32_t first, bool urgent, bool space);
/* GC and freeing of bands: run after completions and on the timer. */
void plc_kick(struct qs_engine *e);
/*
 * Log blocks kept free for the map records that destaging everything
 * cached (and in flight) would take at worst: a MAP record per unit and
 * the MOVE records of the GC that finds it a band. Data and TRIMs are
 * admitted only outside it, MAP and MOVE records anywhere, so destage
 * and GC can always finish and let the log's tail move.
 */
uint64_t plc_log_reserve(const struct qs_engine *e);
/* Destage cannot open a band now: only GC can make progress. */
bool plc_starved(const struct qs_engine *e);
/* When placement next needs the timer (a flush to retry), or 0. */
uint64_t plc_next_deadline(const struct qs_engine *e);
/* Anything of placement's still in flight (close waits for it). */
bool plc_busy(const struct qs_engine *e);

/* Apply a MAP or MOVE extent (x, its payload py) or a TRIM, at record
 * completion (runtime) or in recovery. */
/* What the store of kept map changes takes (cache/mem.c plans it). */
uint64_t plc_pend_plan(uint32_t per_page, uint64_t map_pages, uint32_t width);
void plc_apply(struct qs_engine *e, const struct qs_fmt_extent *x,
	       const struct qs_fmt_ext_phys *py, bool runtime);
/* Recovery: the map region is read for which slot holds each page's
 * committed copy (the pages themselves are read when looked up), then the
 * clean state if the superblock names one; cb(arg, 0 or -errno). */
void plc_load(struct qs_engine *e, qs_io_cb cb, void *arg);
/* Recovery's log is replayed: the valid bitmap from the map it ends with
 * (a pass over the map region), unless the clean state gave it; cb(arg, 0
 * or -errno). */
void plc_valid_read(struct qs_engine *e, qs_io_cb cb, void *arg);
/* Recovery done: band validity and free bands from the valid bitmap, or
 * from the clean state if plc_load took it. */
int plc_rebuild(struct qs_engine *e);
/*
 * Clean close, after the last map flush: write the clean state (what
 * plc_rebuild would otherwise compute from the whole map) for the
 * superblock about to be written; cb(arg, 0 or -errno) once written (not
 * flushed). On error the close goes on without it: the next open rebuilds.
 */
void plc_clean_write(struct qs_engine *e, qs_io_cb cb, void *arg);
/* Into the clean superblock about to be written: QS_SB_CLEAN_STATE if the
 * clean state was written for it. */
void plc_clean_commit_fields(const struct qs_engine *e, struct qs_fmt_sb *sb);
/*
 * Write every dirty map page as the map is now (a snapshot: later changes
 * copy a page still to be written first); cb once they are written (not
 * flushed). The next superblock commits them (plc_map_commit_fields).
 */
void plc_map_flush(struct qs_engine *e, qs_io_cb cb, void *arg);
/* Into a superblock about to be written: the map_seq and map_gen of the
 * last flush written in full, if not committed yet. */
void plc_map_commit_fields(const struct qs_engine *e, struct qs_fmt_sb *sb);
/* That superblock is durable: the flush's pages are the committed copies. */
void plc_map_committed(struct qs_engine *e);
/* The log has become durable up to (not including) seq. */
void plc_durable(struct qs_engine *e);

struct qs_engine_stats;
void plc_stats(const struct qs_engine *e, struct qs_engine_stats *s);
/* qs_engine_check for log placement. */
int plc_check(struct qs_engine *e, char *why, size_t len);
/* Log placement's parts of the engine's DRAM into m (eng_mem), and total
 * corrected for timing-only runs. */
void plc_mem(const struct qs_engine *e, struct qs_engine_mem *m);

#endif
