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
 * block holding it (or none: it reads as zeroes); a reverse map gives the
 * LBA a QLC block was written for, so GC can tell which blocks of a victim
 * are still valid (map[rev[p]] == p).
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

#include "qlcshape/format.h"
#include "qlcshape/vol.h"

struct qs_engine;
struct req;

#define PLC_NONE UINT64_MAX  /* map/rev: nothing there */
#define PLC_GC_RESERVE 2u    /* free bands only GC may open */
#define PLC_MAP_QD 16u	     /* map page writes in flight */
#define PLC_LOAD_BLOCKS 256u /* blocks read (recovery) or written (clean state) at once */

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
	uint64_t drop_seq; /* last log record that took a block from it */
	uint64_t age;	   /* plc.closes when it was filled (GC's age) */
};

/* One MAP, MOVE or TRIM extent to be logged. */
struct plc_ext {
	uint64_t lba, phys, from;
	uint32_t n, kind;
};

/* A unit: one whole IU written to a band, by destage or by GC. */
struct unit {
	struct qs_engine *e;
	bool active, gc;
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

struct plc {
	uint64_t lbas, phys;	/* client blocks; QLC blocks in bands */
	uint32_t band_blocks;
	uint64_t nbands;
	uint32_t width;		/* map entry bytes: 4 or 8 */
	void *map, *rev;	/* [lbas], [phys] */
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
	uint8_t *dirty, *newest; /* bitmaps: page dirty; slot 1 holds its committed copy */
	uint64_t *dirty_list, ndirty;
	uint8_t *pending;	/* in the running flush, not yet copied for writing */
	uint8_t *written;	/* written since the last commit (to !newest) */
	uint64_t *written_list, nwritten;
	struct qs_fmt_map_page **cow; /* per page: its copy at the snapshot, if changed */
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
	/* clean state (docs/FORMAT.md): header, band pages, reverse-map pages */
	uint64_t cs_start, cs_band_pages, cs_blocks;
	uint64_t cs_gen;	/* written for the superblock of this generation */
	bool cs_written;	/* written in full (close) */
	bool cs_loaded;		/* read and valid (recovery): plc_rebuild takes it */
	struct qs_fmt_clean cs; /* the header read, while the pages are checked */
	/* statistics */
	uint64_t gc_victims, gc_read_bytes, gc_write_bytes, gc_moved, map_page_writes, mapped;
};

/* Set up log placement from e->sb (format or recovery); -errno. */
int plc_init(struct qs_engine *e);
void plc_fini(struct qs_engine *e);
/* Lay out a new log-placement log on the fast device: fills e->sb's
 * placement fields and returns the log's size in blocks (0: too small). */
uint64_t plc_format_geometry(struct qs_engine *e, uint64_t seg);
/* Zero the map region (format); cb when durable. */
void plc_format_map(struct qs_engine *e, qs_io_cb cb, void *arg);

/* Read path: blocks lba..lba+n-1, none cached, into buf. */
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
void plc_apply(struct qs_engine *e, const struct qs_fmt_extent *x,
	       const struct qs_fmt_ext_phys *py, bool runtime);
/* Recovery: the map region is read into the map; cb(arg, 0 or -errno). */
void plc_load(struct qs_engine *e, qs_io_cb cb, void *arg);
/* Recovery done: reverse map, band validity and free bands from the map,
 * or from the clean state if plc_load took it. */
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

#endif
