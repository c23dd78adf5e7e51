/* SPDX-License-Identifier: MIT */
/*
 * The engine's DRAM, planned before it is built: what qs_engine_open will
 * allocate for a configuration and two devices, by part (struct
 * qs_engine_mem), and how engine.dram_limit is divided between map pages
 * and the rest. The engine splits its budget with this plan, the hosts
 * check a budget against it before they start, and the bench quotes it at
 * the real drive's scale; test_place checks it against what an engine
 * opened on the same devices measures (qs_engine_get_stats, mem).
 *
 * The plan is of an engine just opened: the dirty-IU pool as sized for a
 * log full of whole dirty IUs, which grows when IUs are sparser (docs/
 * ARCHITECTURE.md, Memory, gives the worst case), and no request in
 * flight.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"
#include "place.h"

/* What eng_alloc counts for size bytes at align: the header's room too. */
static uint64_t held(uint64_t size, uint64_t align)
{
	return (size ? size : 1) + (align < 16 ? 16 : align);
}


/* Bitmaps of log placement: whole 64-bit words (place.c, bitmap_alloc). */
static uint64_t bits_plan(uint64_t bits)
{
	return held((bits + 63) / 64 * 8, 64);
}

struct geo {
	uint64_t log_blocks, segs, client_blocks;
	/* log placement */
	uint64_t lbas, phys, nbands, map_pages;
	uint32_t band_blocks, width;
};

/* The log's geometry as format lays it out (recover.c, format_start, and
 * plc_format_geometry); false when the fast device is too small. */
static bool geo_plan(const struct qs_engine_conf *c, uint64_t fast_bytes, uint64_t qlc_bytes,
		     struct geo *g)
{
	uint64_t seg = c->segment_blocks, blocks = fast_bytes / QS_BLOCK_SIZE, after = 0;
	memset(g, 0, sizeof(*g));
	g->client_blocks = qs_engine_conf_client_size(c, qlc_bytes) / QS_BLOCK_SIZE;
	if (c->placement == QS_PLACE_LOG) {
		g->band_blocks = (uint32_t)(c->band_bytes / QS_BLOCK_SIZE);
		g->nbands = qlc_bytes / c->band_bytes;
		g->phys = g->nbands * g->band_blocks;
		g->width = qs_engine_conf_map_width(c, g->phys);
		g->lbas = qs_engine_conf_client_size(c, qlc_bytes) / QS_BLOCK_SIZE;
		g->map_pages = qs_fmt_map_pages(g->lbas, g->width);
		after = qs_fmt_plc_blocks(g->lbas, g->phys, g->band_blocks,
					  c->iu_bytes / QS_BLOCK_SIZE, g->width);
	}
	if (!seg || blocks < QS_FMT_LOG_START + after)
		return false;
	uint64_t log = (blocks - QS_FMT_LOG_START - after) / seg * seg;
	if (log > (uint64_t)SLOT_MASK / seg * seg)
		log = (uint64_t)SLOT_MASK / seg * seg;
	g->log_blocks = log;
	g->segs = log / seg;
	return log >= QS_FMT_MIN_LOG_SEGMENTS * seg;
}

/* The log blocks in use at once conf allows: the window, or the whole log. */
static uint64_t window_of(const struct qs_engine_conf *c, const struct geo *g)
{
	uint64_t w = c->log_window_blocks;
	return w && w < g->log_blocks ? w : g->log_blocks;
}

/* The dirty-IU pool at open: dirty_ius_max (fixed), else sized for a
 * window of whole dirty IUs (it grows when IUs are sparser). */
static uint64_t pool_of(const struct qs_engine_conf *c, uint64_t window)
{
	return c->dirty_ius_max ? c->dirty_ius_max
				: eng_diu_pool(window, c->iu_bytes / QS_BLOCK_SIZE);
}

/* The log index and the dirty-IU state for a window and a pool. */
static void cache_plan(const struct qs_engine_conf *c, const struct geo *g, uint64_t window,
		       uint64_t ius, struct qs_engine_mem *m)
{
	uint64_t ib = c->iu_bytes / QS_BLOCK_SIZE;
	m->index = qs_index_plan(window, g->client_blocks - 1, eng_idx_val_bits(g->log_blocks));
	m->dirty = qs_index_plan(ius, g->client_blocks / ib, ENG_DIU_VAL_BITS) +
		   held(ius * sizeof(struct diu), 64);
}

/* Everything but log placement's parts (engine.c, eng_alloc_log; destage.c,
 * dst_init; recover.c, the superblock buffer: the scan's read-ahead is
 * freed when recovery ends). */
static void log_side_plan(const struct qs_engine_conf *c, const struct geo *g,
			  struct qs_engine_mem *m)
{
	uint64_t ib = c->iu_bytes / QS_BLOCK_SIZE, qd = c->destage_qd;
	uint64_t window = window_of(c, g);
	cache_plan(c, g, window, pool_of(c, window), m);
	uint64_t ring = c->dram_buffer_bytes / QS_BLOCK_SIZE;
	ring = ring > g->log_blocks ? g->log_blocks : ring;
	uint64_t nrec = c->log_qd + 2;
	m->other = sizeof(struct qs_engine) + 2 * held(g->segs * 4, 64) + held(g->segs * 8, 64) +
		   held(nrec * sizeof(struct rec), 64) + nrec * held(QS_BLOCK_SIZE, QS_BLOCK_SIZE) +
		   (ring ? held(ring * QS_BLOCK_SIZE, QS_BLOCK_SIZE) : 0) +
		   held((ib + 1) * 4, 64) + held(qd * sizeof(struct destage), 64) +
		   held(qd * sizeof(struct failed_iu), 64) +
		   qd * (2 * held(c->iu_bytes, QS_BLOCK_SIZE) + held(ib * 4, 16) +
			 held((ib + 1) * sizeof(struct dpiece), 16)) +
		   held(QS_BLOCK_SIZE, QS_BLOCK_SIZE);
}

/* What one map page frame costs beyond its page: its frame, its read's
 * context and its places in the two lists of dirty pages (mapcache.c,
 * mpc_init; place.c, plc_init), counted for every frame (COW frames need
 * less: an upper bound). */
#define FRAME_EXTRA (sizeof(struct mpc_frame) + sizeof(struct mpc_io) + 2 * sizeof(uint64_t))

/* P2L frames and the victim's P2L pages (place.c, p2l_alloc). */
static uint64_t p2l_plan(const struct qs_engine_conf *c, const struct geo *g)
{
	uint32_t ib = c->iu_bytes / QS_BLOCK_SIZE, cover = qs_fmt_p2l_cover(g->width, ib);
	uint64_t pages = qs_fmt_p2l_band_pages(g->band_blocks, cover);
	uint64_t n = plc_p2l_frames(c->destage_qd);
	return held(n * sizeof(struct p2l_frame), 64) + 2 * n * held(QS_BLOCK_SIZE, QS_BLOCK_SIZE) +
	       n * held(2 * QS_BLOCK_SIZE, QS_BLOCK_SIZE) +
	       held(2 * pages * QS_BLOCK_SIZE, QS_BLOCK_SIZE) + held(pages, 16);
}

/* Log placement's parts for map_limit bytes of map pages (place.c, plc_init). */
static void plc_side_plan(const struct qs_engine_conf *c, const struct geo *g,
			  uint64_t map_limit, struct qs_engine_mem *m)
{
	uint64_t ib = c->iu_bytes / QS_BLOCK_SIZE, qd = c->destage_qd;
	uint64_t total = map_limit / QS_BLOCK_SIZE, ncow, pages;
	uint64_t unit_pages = 2 * ib, want = MPC_PINS > 2 * unit_pages ? MPC_PINS : 2 * unit_pages;
	ncow = total / 4 < want ? total / 4 : want;
	pages = total - ncow;
	if (total >= 2 * g->map_pages + 8) {
		pages = g->map_pages;
		ncow = g->map_pages > 4 ? g->map_pages : 4;
	}
	uint64_t n = pages + ncow;
	m->map_pages = held(n * sizeof(struct mpc_frame), 64) + held(pages * sizeof(struct mpc_io), 64) +
		       held(n * QS_BLOCK_SIZE, QS_BLOCK_SIZE);
	m->map_meta = held(g->map_pages * 4, 64) + held((g->map_pages + 7) / 8, 64) +
		      3 * bits_plan(g->map_pages) + 2 * held(pages * 8, 64) +
		      plc_pend_plan(c->map_keep_per_page, g->map_pages, g->width);
	m->qlc_blocks = bits_plan(g->phys);
	m->bands = held(g->nbands * sizeof(struct band), 64) + 2 * held(g->nbands * 8, 64);
	m->other += held(sizeof(struct plc), 64) + held(2 * qd * sizeof(struct unit), 64) +
		    2 * qd * (held(c->iu_bytes, QS_BLOCK_SIZE) + 3 * held(ib * 8, 16) +
			      held(ib * 4, 16) + held(ib * sizeof(struct plc_ext), 16)) +
		    PLC_MAP_QD * held(QS_BLOCK_SIZE, QS_BLOCK_SIZE) + p2l_plan(c, g);
}

static void mem_sum(struct qs_engine_mem *m)
{
	m->total = m->index + m->dirty + m->map_pages + m->map_meta + m->qlc_blocks + m->bands +
		   m->other;
}

/* Frames an engine holding the whole map takes (mapcache.c, mpc_init), and
 * the least map_dram_limit that gives them. */
static uint64_t whole_frames(const struct geo *g)
{
	return g->map_pages + (g->map_pages > 4 ? g->map_pages : 4);
}

static uint64_t whole_limit(const struct qs_engine_conf *c, const struct geo *g)
{
	uint64_t cap = (2 * g->map_pages + 8) * QS_BLOCK_SIZE, min = qs_engine_conf_map_min(c);
	return cap > min ? cap : min;
}

/* Log placement: all of the engine but what grows with its map pages. */
static uint64_t rest_plan(const struct qs_engine_conf *c, const struct geo *g,
			  const struct qs_engine_mem *log_side)
{
	struct qs_engine_mem r = *log_side;
	plc_side_plan(c, g, 0, &r);
	mem_sum(&r);
	return r.total;
}

/* ---- dividing dram_limit ------------------------------------------------------ */

/* The least window a budget may leave: 32 segments, room for the records
 * log placement keeps room for (place.c, plc_init, checks the window) and
 * for data beside them. */
static uint64_t window_min(const struct qs_engine_conf *c, const struct geo *g)
{
	uint64_t w = 32ull * c->segment_blocks;
	return w < g->log_blocks ? w : g->log_blocks;
}

#define POOL_MIN 1024u /* dirty IUs a budget leaves at least */

static uint64_t cache_cost(const struct qs_engine_conf *c, const struct geo *g, uint64_t window,
			   uint64_t ius)
{
	struct qs_engine_mem m;
	cache_plan(c, g, window, ius, &m);
	return m.index + m.dirty;
}

/*
 * A window's pool when the budget binds: with log placement a dirty IU per
 * block, in place one per four blocks. Log placement's writes are spread
 * over the whole drive, where nearly every dirty IU holds one block: with
 * fewer records than blocks the records bound the log before its window
 * does, and writes met that bound with no pacing to even their waits out
 * (4K random writes over 100%: p99.9 12.2 ms, against 1.0 ms at the
 * window). In place serves smaller spans, where IUs fill before destage.
 */
static uint64_t pool_for(const struct qs_engine_conf *c, uint64_t window)
{
	uint64_t per = c->placement == QS_PLACE_LOG ? 1 : 4;
	return window / per > POOL_MIN ? window / per : POOL_MIN;
}

/* The largest x in [lo, hi] with f(x) <= budget (f grows with x); lo if none. */
#define LARGEST_FIT(lo, hi, expr_of_x, budget)                                                   \
	({                                                                                       \
		uint64_t lo_ = (lo), hi_ = (hi);                                                 \
		while (lo_ < hi_) {                                                              \
			uint64_t x = lo_ + (hi_ - lo_ + 1) / 2;                                  \
			if ((expr_of_x) <= (budget))                                             \
				lo_ = x;                                                         \
			else                                                                     \
				hi_ = x - 1;                                                     \
		}                                                                                \
		lo_;                                                                             \
	})

/*
 * Divide c->dram_limit into the limits it stands for (out: a copy of c with
 * log_window_blocks, dirty_ius_max and, with log placement, map_dram_limit
 * set). What does not grow with them comes first; then each its least (the
 * least log format makes, POOL_MIN dirty IUs, the least map pages); of
 * what is left, log placement gives the log's cache a third and map pages
 * the rest (the whole map, when it fits, at the least limit that gives
 * it, and the cache what that leaves), in place the cache all of it. In
 * the cache the window is the largest that leaves room for its dirty IUs
 * (pool_for), the dirty IUs then what the window leaves, up to one a
 * block. Why a third: with 4 KiB writes spread over the whole drive every
 * cached block is a dirty IU of its own and a map page miss costs a fast-
 * tier read, while a larger window only delays destage (docs/ARCHITECTURE.md,
 * Memory). -ENOMEM below the floor (dram_floor).
 */
static int split_plan(const struct qs_engine_conf *c, const struct geo *g,
		      const struct qs_engine_mem *base, struct qs_engine_conf *out)
{
	*out = *c;
	uint64_t fixed = base->total - base->index - base->dirty;
	if (c->placement == QS_PLACE_LOG)
		fixed = rest_plan(c, g, base) - base->index - base->dirty;
	uint64_t wmin = window_min(c, g), frame = QS_BLOCK_SIZE + FRAME_EXTRA;
	uint64_t cmin = cache_cost(c, g, wmin, POOL_MIN), mmin = 0, mwhole = 0;
	if (c->placement == QS_PLACE_LOG) {
		uint64_t f = qs_engine_conf_map_min(c) / QS_BLOCK_SIZE;
		mmin = (f < whole_frames(g) ? f : whole_frames(g)) * frame;
		mwhole = whole_frames(g) * frame;
	}
	/* The store of kept map changes comes out of the map pages' share,
	 * not the window's: taken from the whole, it cost the window a third
	 * of it, and 4K random writes over 100% had p99.9 3.3 ms against 0.54
	 * (docs/ARCHITECTURE.md, Memory). */
	uint64_t pend = c->placement == QS_PLACE_LOG
		? plc_pend_plan(c->map_keep_per_page, g->map_pages, g->width) : 0;
	fixed -= pend;
	if (c->dram_limit < fixed + cmin + mmin + pend)
		return -ENOMEM;
	uint64_t left = c->dram_limit - fixed, cache = left, map = 0;
	if (c->placement == QS_PLACE_LOG) {
		uint64_t spare = left - cmin - mmin - pend, whole = cache_cost(c, g, g->log_blocks,
									pool_for(c, g->log_blocks));
		cache = cmin + (spare + pend) / 3;
		if (cache > cmin + spare)
			cache = cmin + spare; /* the map pages keep their least */
		cache = cache < whole ? cache : whole > cmin ? whole : cmin;
		map = left - cache - pend;
		if (map >= mwhole) {
			map = mwhole;
			cache = left - map - pend;
		}
	}
	uint64_t w = LARGEST_FIT(wmin, g->log_blocks, cache_cost(c, g, x, pool_for(c, x)), cache);
	uint64_t d = LARGEST_FIT(pool_for(c, w), w > POOL_MIN ? w : POOL_MIN, cache_cost(c, g, w, x),
				 cache);
	out->log_window_blocks = w >= g->log_blocks ? 0 : w; /* 0: the whole log */
	out->dirty_ius_max = d;
	if (c->placement == QS_PLACE_LOG) {
		uint64_t frames = map / frame;
		out->map_dram_limit = frames >= whole_frames(g) ? whole_limit(c, g)
							       : frames * QS_BLOCK_SIZE;
	}
	return 0;
}

/* The least dram_limit conf runs with; 0 when the fast device is too small
 * to tell. */
static uint64_t dram_floor(const struct qs_engine_conf *c, uint64_t fast_bytes, uint64_t qlc_bytes)
{
	struct geo g;
	struct qs_engine_mem m;
	if (c->mode == QS_MODE_PASSTHROUGH || !geo_plan(c, fast_bytes, qlc_bytes, &g))
		return 0;
	memset(&m, 0, sizeof(m));
	log_side_plan(c, &g, &m);
	mem_sum(&m);
	uint64_t fixed = m.total - m.index - m.dirty;
	uint64_t cmin = cache_cost(c, &g, window_min(c, &g), POOL_MIN);
	if (c->placement != QS_PLACE_LOG)
		return fixed + cmin;
	uint64_t frames = qs_engine_conf_map_min(c) / QS_BLOCK_SIZE;
	if (frames > whole_frames(&g))
		frames = whole_frames(&g);
	return rest_plan(c, &g, &m) - m.index - m.dirty + cmin +
	       frames * (QS_BLOCK_SIZE + FRAME_EXTRA);
}

uint64_t qs_engine_conf_dram_auto(const struct qs_engine_conf *c, uint64_t qlc_bytes)
{
	if (c->placement != QS_PLACE_LOG)
		return 0;
	/* 2.5 GiB per 30.72 TB, in whole MiB */
	double b = (double)(2560ull << 20) * (double)qlc_bytes / 30.72e12;
	uint64_t mib = (uint64_t)(b / (1 << 20));
	return mib > 1024 ? mib << 20 : 1ull << 30;
}

int qs_engine_dram_split(const struct qs_engine_conf *conf, uint64_t fast_bytes,
			 uint64_t qlc_bytes, struct qs_engine_conf *out)
{
	struct geo g;
	struct qs_engine_conf resolved = *conf;
	const struct qs_engine_conf *c = &resolved;
	if (resolved.dram_limit == QS_CONF_DRAM_AUTO)
		resolved.dram_limit = qs_engine_conf_dram_auto(conf, qlc_bytes);
	*out = resolved;
	if (c->mode == QS_MODE_PASSTHROUGH || !c->dram_limit)
		return 0;
	if (!geo_plan(c, fast_bytes, qlc_bytes, &g))
		return -ENOSPC;
	struct qs_engine_mem m;
	memset(&m, 0, sizeof(m));
	log_side_plan(c, &g, &m);
	mem_sum(&m);
	return split_plan(c, &g, &m, out);
}

int qs_engine_dram_plan(const struct qs_engine_conf *conf, uint64_t fast_bytes,
			uint64_t qlc_bytes, struct qs_engine_mem *m, uint64_t *map_limit)
{
	struct geo g;
	struct qs_engine_conf split;
	memset(m, 0, sizeof(*m));
	if (conf->mode == QS_MODE_PASSTHROUGH) {
		m->other = m->total = sizeof(struct qs_engine);
		return 0;
	}
	if (!geo_plan(conf, fast_bytes, qlc_bytes, &g))
		return -ENOSPC;
	int rc = qs_engine_dram_split(conf, fast_bytes, qlc_bytes, &split);
	if (rc)
		return rc;
	const struct qs_engine_conf *c = &split;
	log_side_plan(c, &g, m);
	if (c->placement != QS_PLACE_LOG) {
		mem_sum(m);
		return 0;
	}
	uint64_t min = qs_engine_conf_map_min(c), limit = c->map_dram_limit;
	plc_side_plan(c, &g, limit, m);
	mem_sum(m);
	if (map_limit)
		*map_limit = limit;
	return limit < min && !(c->dram_limit && limit == whole_limit(c, &g)) ? -ENOMEM : 0;
}

uint64_t qs_engine_conf_map_min(const struct qs_engine_conf *c)
{
	/* room to pin the map pages of a whole unit's extents, twice */
	return 16ull * c->iu_bytes > QS_CONF_MAP_DRAM_MIN ? 16ull * c->iu_bytes : QS_CONF_MAP_DRAM_MIN;
}

int qs_engine_conf_check_dram(const struct qs_engine_conf *c, uint64_t fast_bytes,
			      uint64_t qlc_bytes, struct qs_conf_err *err)
{
	struct qs_engine_mem m;
	uint64_t limit = 0;
	int rc = qs_engine_dram_plan(c, fast_bytes, qlc_bytes, &m, &limit);
	if (rc != -ENOMEM)
		return 0; /* a geometry error is the format's to report, with its sizes */
	struct qs_engine_conf resolved = *c;
	if (resolved.dram_limit == QS_CONF_DRAM_AUTO)
		resolved.dram_limit = qs_engine_conf_dram_auto(c, qlc_bytes);
	c = &resolved;
	if (err) {
		err->field = QS_CONF_FIELD_DRAM_LIMIT;
		/* the parts at the floor: the least window, pool and map pages */
		struct qs_engine_conf floor = *c;
		struct geo g;
		floor.dram_limit = 0;
		floor.map_dram_limit = qs_engine_conf_map_min(c);
		if (geo_plan(c, fast_bytes, qlc_bytes, &g)) {
			uint64_t w = window_min(c, &g);
			floor.log_window_blocks = w < g.log_blocks ? w : 0;
			floor.dirty_ius_max = POOL_MIN;
		}
		struct qs_engine_mem need;
		qs_engine_dram_plan(&floor, fast_bytes, qlc_bytes, &need, NULL);
		need.total = dram_floor(c, fast_bytes, qlc_bytes);
		if (c->placement == QS_PLACE_LOG)
			snprintf(err->msg, sizeof(err->msg),
				 "dram_limit %llu: the engine needs at least %llu bytes for these "
				 "devices (log index %llu, dirty IUs %llu, per QLC block %llu, map "
				 "pages %llu at least, the rest %llu, with the least window of the "
				 "log); raise dram_limit (or lower engine.dram_buffer)",
				 (unsigned long long)c->dram_limit,
				 (unsigned long long)need.total, (unsigned long long)need.index,
				 (unsigned long long)need.dirty, (unsigned long long)need.qlc_blocks,
				 (unsigned long long)(need.map_pages + need.map_meta),
				 (unsigned long long)(need.other + need.bands));
		else
			snprintf(err->msg, sizeof(err->msg),
				 "dram_limit %llu: the engine needs at least %llu bytes for these "
				 "devices (log index %llu, dirty IUs %llu, the rest %llu, with the "
				 "least window of the log); raise dram_limit (or lower "
				 "engine.dram_buffer)", (unsigned long long)c->dram_limit,
				 (unsigned long long)need.total, (unsigned long long)need.index,
				 (unsigned long long)need.dirty, (unsigned long long)need.other);
	}
	return -EINVAL;
}
