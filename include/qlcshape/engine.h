/* SPDX-License-Identifier: MIT */
/*
 * qlcshape engine: the write-shaping cache.
 *
 * The engine keeps a circular log on a fast-tier volume in front of a QLC
 * volume and turns client writes into whole, aligned indirection-unit (IU)
 * writes to the QLC. See docs/ARCHITECTURE.md for the data path and
 * docs/FORMAT.md for the on-disk layout.
 *
 * Threading contract: one engine instance is single-threaded. Every call
 * into it (submissions, qs_engine_timer, statistics, policy changes, close)
 * and every volume completion callback must come from the same thread, the
 * one driving the host's event loop. Client completion callbacks are called
 * from that thread too, from inside a volume completion or qs_engine_timer
 * call, never from inside the submission that started the request. A
 * callback may submit new requests.
 *
 * Client buffers belong to the client and must stay valid and unchanged
 * until the request's callback runs; the engine may write directly from
 * them to the log device.
 */
#ifndef QLCSHAPE_ENGINE_H
#define QLCSHAPE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qlcshape/env.h"
#include "qlcshape/vol.h"

struct qs_engine;

typedef void (*qs_req_cb)(void *arg, int result); /* 0 or -errno */

enum qs_mode {
	QS_MODE_CACHE = 0,	 /* shaping on: log, coalesce, destage whole IUs */
	QS_MODE_PASSTHROUGH = 1, /* shaping off: requests go to the QLC as is */
};

enum qs_order {
	QS_ORDER_FIFO = 0,    /* oldest dirty IU first */
	QS_ORDER_SWEEP = 1,   /* LBA-ordered passes over the dirty set */
	QS_ORDER_FULLEST = 2, /* most dirty blocks first */
};

enum qs_partial {
	QS_PARTIAL_FILL = 0, /* destage a partly dirty IU now, read-filling */
	QS_PARTIAL_HOLD = 1, /* wait up to hold_ms for the rest to arrive */
};

/* Where destage puts data on the QLC (docs/ARCHITECTURE.md, Placement). */
enum qs_placement {
	QS_PLACE_INPLACE = 0, /* each LBA at its home; partial IUs are read-filled */
	QS_PLACE_LOG = 1,     /* cached blocks of any LBAs packed into whole IUs,
				 appended to bands; a map, and GC over op_pct */
};

/* Log placement: which full band GC empties next. */
enum qs_gc_victim {
	QS_GC_GREEDY = 0,	/* fewest valid blocks */
	QS_GC_COST_BENEFIT = 1, /* most free space gained per block moved, by age */
};

/* A destage policy: a name plus parameters (see docs/ARCHITECTURE.md). */
struct qs_policy {
	enum qs_order order;
	enum qs_partial partial;
	uint32_t hold_ms;     /* QS_PARTIAL_HOLD: max age of a held partial IU */
	uint32_t start_pct;   /* log use at which destage starts */
	uint32_t urgent_pct;  /* log use at which destage runs at full depth */
	uint32_t idle_ms;     /* destage everything after this long idle; 0 off */
	uint32_t max_age_ms;  /* destage dirty data older than this; 0 off */
	uint32_t pace_pct;    /* log use from which writes are paced (never below
				 urgent_pct; with log placement, of the log
				 data may fill); 0 off */
};

struct qs_engine_conf {
	enum qs_mode mode;
	uint32_t iu_bytes;	       /* QLC indirection unit, 4 KiB multiple */
	uint32_t segment_blocks;       /* log segment, in 4 KiB blocks */
	uint32_t group_commit_blocks;  /* max blocks in one log record */
	uint32_t log_qd;	       /* log writes in flight */
	uint32_t destage_qd;	       /* destage IUs in flight (urgent) */
	uint64_t dram_buffer_bytes;    /* recent-data buffer; 0 = none */
	uint64_t bypass_min_bytes;     /* whole-IU writes this big skip the log; 0 off */
	uint64_t qlc_size;	       /* client-visible size; 0 = QLC size (in place)
					  or the QLC's bands less op_pct (log) */
	struct qs_policy policy;
	enum qs_placement placement;
	uint32_t op_pct;	       /* log: share of the QLC kept for GC, 5..50 */
	uint64_t band_bytes;	       /* log: band size, whole IUs */
	enum qs_gc_victim gc_victim;   /* log: GC victim choice */
	uint64_t map_dram_limit;       /* log: DRAM for map pages; the rest stay on
					  the fast tier and are read when needed
					  (ignored when dram_limit is set) */
	uint64_t dram_limit;	       /* the engine's DRAM, all of it, divided at
					  open into log_window_blocks,
					  dirty_ius_max and (log placement)
					  map_dram_limit (qs_engine_dram_split);
					  0 = no budget: those three as set;
					  QS_CONF_DRAM_AUTO (the default) =
					  qs_engine_conf_dram_auto's */
	uint64_t log_window_blocks;    /* the most log blocks in use at once, so
					  the most the log index holds; 0 = the
					  whole log */
	uint32_t map_keep_per_page;    /* log, timing only (a prototype): keep
					  this many map changes per map page
					  for pages not in DRAM (cache/pend.c);
					  0 = none */
	uint32_t map_entry_bytes;      /* log: map and P2L entry width at format,
					  4, 5 or 8, no narrower than the QLC
					  needs; 0 = the narrowest it needs (a
					  host modelling a larger drive sets
					  that drive's) */
	uint64_t dirty_ius_max;	       /* the most dirty IUs, their records fixed
					  at open (writes wait for destage at
					  it); 0 = sized for whole IUs, grown
					  when they are sparser */
};

/* Fill conf with the defaults documented in conf/qlcshaped.ini. */
void qs_engine_conf_default(struct qs_engine_conf *conf);

/*
 * Limits of the fields qs_engine_conf_check bounds on its own, for hosts that
 * check a value where it is read (the daemon's config reader).
 */
#define QS_CONF_IU_MIN 4096u
#define QS_CONF_IU_MAX (1u << 20)
#define QS_CONF_SEGMENT_BLOCKS_MIN 2u
#define QS_CONF_SEGMENT_BLOCKS_MAX 65536u
#define QS_CONF_LOG_QD_MAX 64u
#define QS_CONF_DESTAGE_QD_MAX 1024u
#define QS_CONF_MAP_DRAM_MIN (64ull << 10) /* 16 pages: room for those in use at once */
/* dram_limit's default: a budget from the QLC's size (qs_engine_conf_dram_auto). */
#define QS_CONF_DRAM_AUTO UINT64_MAX

/* The field a failed qs_engine_conf_check rejected. */
enum qs_conf_field {
	QS_CONF_FIELD_NONE = 0,
	QS_CONF_FIELD_MODE,
	QS_CONF_FIELD_IU_BYTES,
	QS_CONF_FIELD_SEGMENT_BLOCKS,
	QS_CONF_FIELD_GROUP_COMMIT_BLOCKS, /* bounded by segment_blocks */
	QS_CONF_FIELD_LOG_QD,
	QS_CONF_FIELD_DESTAGE_QD,
	QS_CONF_FIELD_DRAM_BUFFER_BYTES,
	QS_CONF_FIELD_BYPASS_MIN_BYTES,	   /* a multiple of iu_bytes */
	QS_CONF_FIELD_QLC_SIZE,		   /* a multiple of iu_bytes */
	QS_CONF_FIELD_POLICY_ORDER,
	QS_CONF_FIELD_POLICY_PARTIAL,
	QS_CONF_FIELD_POLICY_WATERMARKS,   /* start_pct and urgent_pct together */
	QS_CONF_FIELD_PLACEMENT,
	QS_CONF_FIELD_OP_PCT,		   /* also: too few bands for the QLC */
	QS_CONF_FIELD_BAND_BYTES,
	QS_CONF_FIELD_GC_VICTIM,
	QS_CONF_FIELD_POLICY_PACE,
	QS_CONF_FIELD_MAP_DRAM_LIMIT,
	QS_CONF_FIELD_DRAM_LIMIT,	   /* below what the devices need (qs_engine_conf_check_dram) */
};

/* Why qs_engine_conf_check refused a configuration. */
struct qs_conf_err {
	enum qs_conf_field field;
	char msg[320]; /* "FIELD VALUE: must be ...", for a person */
};

/*
 * Check conf for consistency: 0, or -EINVAL with, if err is not NULL, the
 * first field found wrong and a message naming it. Any thread, any time;
 * reads conf only.
 */
int qs_engine_conf_check(const struct qs_engine_conf *conf, struct qs_conf_err *err);

/*
 * Check conf against a QLC of qlc_bytes: log placement needs at least four
 * bands of spare room (two open, two kept so GC can always finish a band)
 * and a client size that fits. On error, write a message naming the field.
 * May be called before open, by config readers that know the device.
 */
int qs_engine_conf_check_qlc(const struct qs_engine_conf *conf, uint64_t qlc_bytes,
			     struct qs_conf_err *err);

/*
 * Bytes of the fast device that log placement takes beyond the log, for a
 * QLC of qlc_bytes: the map region (two 4 KiB slots per map page), the P2L
 * region (two slots per P2L page: the client block of each QLC block, for
 * GC) and the clean state (the valid bitmap and the bands, written by a
 * clean shutdown); 0 in place. A host sizing a fast device for a given log adds
 * this.
 */
uint64_t qs_engine_conf_map_bytes(const struct qs_engine_conf *conf, uint64_t qlc_bytes);

/*
 * The engine's DRAM for conf over a fast device of fast_bytes and a QLC of
 * qlc_bytes, by part, as qs_engine_open will allocate it (an engine just
 * opened: the dirty-IU pool sized for whole dirty IUs, growing when they
 * are sparser, unless dirty_ius_max fixes it). With conf->dram_limit set,
 * the plan is of the split qs_engine_dram_split gives (*map_limit, when
 * not NULL: the map_dram_limit the engine will use). Any time; no devices needed.
 * 0; -ENOSPC when the fast device is too small for the log (format says
 * why); -ENOMEM when dram_limit is below what the rest needs plus the least
 * map pages (qs_engine_conf_check_dram says how much).
 */
struct qs_engine_mem;
/*
 * The budget dram_limit = QS_CONF_DRAM_AUTO stands for over a QLC of
 * qlc_bytes: with log placement 2.5 GiB per 30.72 TB (the node QLC is
 * deployed in: 12 such drives and 64 GB of DRAM), at least 1 GiB; in place
 * 0, no budget (a budget there bounds the dirty IUs a small span coalesces
 * in: docs/ARCHITECTURE.md, Memory, measures what it costs). Any time.
 */
uint64_t qs_engine_conf_dram_auto(const struct qs_engine_conf *conf, uint64_t qlc_bytes);
/*
 * Divide conf->dram_limit for those devices into the limits it stands for:
 * out is conf with log_window_blocks, dirty_ius_max and, with log
 * placement, map_dram_limit set, and dram_limit the budget itself (auto
 * resolved; unchanged without dram_limit, or auto in place). The engine
 * does this at open; a host that runs the engine on smaller devices than
 * the real ones (the bench's drive model) divides the real budget and
 * scales the parts. 0; -ENOSPC (the fast device is too small for the log);
 * -ENOMEM (dram_limit below what the engine needs).
 */
int qs_engine_dram_split(const struct qs_engine_conf *conf, uint64_t fast_bytes,
			 uint64_t qlc_bytes, struct qs_engine_conf *out);
int qs_engine_dram_plan(const struct qs_engine_conf *conf, uint64_t fast_bytes,
			uint64_t qlc_bytes, struct qs_engine_mem *m, uint64_t *map_limit);
/* Check conf->dram_limit against those devices: 0, or -EINVAL with err
 * naming QS_CONF_FIELD_DRAM_LIMIT, the size needed and its parts. */
int qs_engine_conf_check_dram(const struct qs_engine_conf *conf, uint64_t fast_bytes,
			      uint64_t qlc_bytes, struct qs_conf_err *err);
/* The least DRAM for map pages conf allows (map_dram_limit's floor). */
uint64_t qs_engine_conf_map_min(const struct qs_engine_conf *conf);

/* The map entry width a log of conf over phys QLC blocks in bands is
 * formatted with (map_entry_bytes, or the narrowest that fits). */
uint32_t qs_engine_conf_map_width(const struct qs_engine_conf *conf, uint64_t phys);

/* Client-visible bytes conf gives over a QLC of qlc_bytes (0 if invalid). */
uint64_t qs_engine_conf_client_size(const struct qs_engine_conf *conf, uint64_t qlc_bytes);

const char *qs_placement_name(enum qs_placement p);
int qs_placement_parse(const char *name, enum qs_placement *p);
const char *qs_gc_victim_name(enum qs_gc_victim g);
int qs_gc_victim_parse(const char *name, enum qs_gc_victim *g);

/* Parse a policy name ("fifo", "sweep", "fullest"); -EINVAL if unknown. */
int qs_policy_parse_order(const char *name, enum qs_order *order);
const char *qs_policy_order_name(enum qs_order order);

#define QS_OPEN_FORMAT 0x1u /* write a new, empty log (destroys the old one) */
/*
 * Timing only: the caller never looks at data and its volumes store none
 * (the bench's simulation). The engine then skips the work done on data
 * bytes alone: the data checksum and header seal of log records, and the
 * copies into, out of and zeroing from its DRAM buffer. Every decision,
 * I/O offset, length and statistic is the same as without the flag. A log
 * written this way cannot be recovered: never with volumes that keep data.
 */
#define QS_OPEN_NO_DATA 0x2u

/*
 * Create an engine over fast (the log device; unused in passthrough mode,
 * may be NULL there) and qlc, then format or recover the log. cb runs once
 * recovery is done, with 0 (the engine then accepts requests) or -errno
 * (the engine must then only be closed). The engine keeps pointers to env,
 * fast and qlc, which must outlive it. Returns NULL only when memory for the
 * engine itself cannot be had or conf is invalid (errno is set).
 */
struct qs_engine *qs_engine_open(const struct qs_env *env, struct qs_vol *fast,
				 struct qs_vol *qlc,
				 const struct qs_engine_conf *conf,
				 unsigned flags, qs_req_cb cb, void *arg);

/*
 * Submit a read, write, flush or discard. off and len are bytes, multiples
 * of 4096, within the client-visible size; otherwise -EINVAL and no callback.
 * On 0 the callback runs exactly once later. -ESHUTDOWN once close started,
 * -EIO when the engine has failed (see qs_engine_stats.failed).
 *
 * Write semantics: complete means in the log (shaping on) or on the QLC
 * (passthrough); durable only after a later flush completes, or at once with
 * QS_WRITE_FUA. Discard: the range reads back as zeroes once it completes.
 */
int qs_engine_read(struct qs_engine *e, uint64_t off, uint64_t len, void *buf,
		   qs_req_cb cb, void *arg);
int qs_engine_write(struct qs_engine *e, uint64_t off, uint64_t len,
		    const void *buf, unsigned flags, qs_req_cb cb, void *arg);
int qs_engine_flush(struct qs_engine *e, qs_req_cb cb, void *arg);
int qs_engine_discard(struct qs_engine *e, uint64_t off, uint64_t len,
		      qs_req_cb cb, void *arg);

/* The host calls this when the deadline last given to env->timer_set passes. */
void qs_engine_timer(struct qs_engine *e);

/*
 * Destage every dirty block and checkpoint the log; cb runs when the log is
 * empty (or with -errno if destage keeps failing). Client I/O may continue.
 */
int qs_engine_drain(struct qs_engine *e, qs_req_cb cb, void *arg);

/*
 * Stop: wait for in-flight requests, write a clean superblock, then run cb.
 * After cb the engine must be freed with qs_engine_free(). New submissions
 * fail with -ESHUTDOWN from the moment close is called. Close does not
 * destage (call qs_engine_drain first for that); a drain still running
 * completes with -ECANCELED.
 */
int qs_engine_close(struct qs_engine *e, qs_req_cb cb, void *arg);
void qs_engine_free(struct qs_engine *e);

/* Switch the destage policy while running (-EINVAL if p is inconsistent). */
int qs_engine_set_policy(struct qs_engine *e, const struct qs_policy *p);
/* The policy in force. */
void qs_engine_get_policy(const struct qs_engine *e, struct qs_policy *p);

/*
 * The engine's DRAM by part (docs/ARCHITECTURE.md, Memory). total counts
 * every byte the engine holds (its allocations, headers included, and its
 * indexes); the parts are its structures' sizes and other is the rest
 * (buffers, requests, records). Opened with QS_OPEN_NO_DATA (the bench's
 * timing-only runs) the figures are those of the same engine holding data:
 * map page frames count as though allocated, and the timing-only copy of
 * the map does not count.
 */
struct qs_engine_mem {
	uint64_t index;	     /* log index: where each cached block's newest copy is */
	uint64_t dirty;	     /* dirty-IU records and their lookup */
	uint64_t map_pages;  /* log: map page frames and the checkpoint's copies */
	uint64_t map_meta;   /* log: per map page, where it is and its state */
	uint64_t qlc_blocks; /* log: per QLC block, whether the map points at it */
	uint64_t bands;	     /* log: per band, validity and queues */
	uint64_t other;	     /* buffers, requests, records: total less the parts */
	uint64_t total;
};

struct qs_engine_stats {
	uint64_t client_reads, client_read_bytes;
	uint64_t client_writes, client_write_bytes;
	uint64_t client_flushes, client_discards, client_discard_bytes;
	uint64_t client_errors;
	uint64_t log_appends, log_append_bytes; /* records, bytes incl. headers */
	uint64_t log_read_bytes;
	uint64_t log_flushes;
	uint64_t qlc_writes, qlc_write_bytes;
	uint64_t qlc_iu_whole_writes; /* aligned, whole number of IUs */
	uint64_t qlc_reads, qlc_read_bytes;
	uint64_t qlc_discards, qlc_flushes;
	uint64_t read_fill_bytes;  /* read from the QLC to complete partial IUs (one read
				      an IU, first gap to last, cached blocks between) */
	uint64_t bypass_writes, bypass_bytes;
	uint64_t destage_ius, destage_full_ius, destage_partial_ius;
	uint64_t destage_bytes;
	uint64_t checkpoints;
	uint64_t throttled_writes; /* writes that waited for log space */
	uint64_t paced_writes;	   /* writes held for their turn (policy.pace_pct) */
	uint64_t fast_errors, qlc_errors; /* device I/O errors seen */
	uint64_t destage_retries;
	uint64_t cached_blocks;	   /* blocks whose newest copy is in the log */
	uint64_t dirty_ius;
	uint64_t log_blocks, log_used_blocks;
	uint64_t index_bytes;	   /* memory of index and dirty-IU state */
	uint32_t inflight;	   /* client requests in flight */
	bool failed;		   /* log unusable: writes fail with -EIO */
	/* log placement (zero in place) */
	uint32_t placement;	   /* enum qs_placement */
	uint32_t op_pct;
	uint64_t bands, bands_free, bands_open, bands_full; /* full: closed, holding data */
	uint64_t band_bytes;
	uint64_t gc_victims;	   /* bands GC emptied */
	uint64_t gc_read_bytes;	   /* read from victims */
	uint64_t gc_write_bytes;   /* relocated (whole IUs, padding included) */
	uint64_t gc_moved_blocks;  /* blocks whose map now points at their new copy */
	uint64_t map_bytes;	   /* DRAM of the map (its page frames, map_dram_limit
				      at most, and a few bits per page) and the valid
				      bitmap (a bit per QLC block) */
	uint64_t map_page_writes;  /* map pages written to the fast tier */
	uint64_t map_dram_limit;   /* engine.map_dram_limit */
	uint64_t map_resident_bytes; /* map pages in DRAM now (copies for a running
					checkpoint included) */
	uint64_t map_peak_bytes;   /* the most map_resident_bytes has been */
	uint64_t map_region_bytes; /* the map's region on the fast tier (two slots a page) */
	uint64_t map_hits, map_misses; /* lookups that found their page in DRAM, or not,
					  each once: a request looking again as pages
					  arrive is not counted again */
	uint64_t map_page_reads;   /* map pages read from the fast tier (misses) */
	uint64_t mapped_blocks;	   /* client blocks with a QLC copy */
	bool clean_state;	   /* this open took the clean state a clean close wrote
				      (valid bitmap and bands), not a rebuild from the map */
	/* log placement's P2L pages (GC's client block of each QLC block) */
	uint64_t p2l_page_writes;  /* written: a unit's entries before its record */
	uint64_t p2l_page_reads;   /* read: a victim's pages, both slots */
	uint64_t gc_stuck_blocks;  /* valid blocks GC found no P2L entry for (their
				      band is left; 0 unless the fast tier lost them) */
	/* log placement's kept map changes (engine.map_keep_per_page) */
	uint64_t map_kept;	   /* changes kept for pages not in DRAM */
	uint64_t map_kept_applied; /* kept changes applied to their pages */
	uint64_t map_kept_reads;   /* pages read to apply kept changes */
	uint64_t map_kept_stale;   /* old page values GC found garbage without
				      the page */
	struct qs_engine_mem mem;  /* DRAM by part */
};

void qs_engine_get_stats(const struct qs_engine *e, struct qs_engine_stats *s);

/*
 * A test aid: walk the engine's state and check what must hold between any
 * two engine calls (log placement: every LBA's value, kept or in its page,
 * is a distinct QLC block with its valid bit; the bits set are exactly
 * those and the page values kept changes still owe; each band's count and
 * the mapped count agree with the bits; no kept change was lost). Slow:
 * every LBA. 0; -EUCLEAN with the first violation in why; -ENOTSUP where
 * the state is not all in DRAM (a paged map holding data) or there is
 * nothing to walk (in place); -ENOMEM.
 */
int qs_engine_check(struct qs_engine *e, char *why, size_t len);

/* One line of internal state for debugging (queues, positions). */
void qs_engine_debug_dump(const struct qs_engine *e, char *out, size_t len);

/* The client-visible capacity in bytes. */
uint64_t qs_engine_size(const struct qs_engine *e);

#endif
