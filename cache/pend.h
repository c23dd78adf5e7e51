/* SPDX-License-Identifier: MIT */
/*
 * Kept map updates: the map entries log placement has changed but whose map
 * page is not in DRAM, held per page until the page is next read.
 *
 * Why: over a whole 30.72 TB drive the map has 7.4 million pages and 4K
 * random writes change nearly every entry on a page no other change in DRAM
 * shares, so applying each change in the page costs a page read and, at the
 * next checkpoint, a page write: 1.5 map page reads per client block. Kept
 * here instead, the changes of one page are applied by one read and one
 * write once the page holds several: taking the page that holds the most
 * when the store is full (greedy, as GC takes the emptiest band), a store of
 * m changes per map page applies about 2m + 1 a read (a simulation of
 * uniform random changes: 3.0 at m = 1, 5.0 at 2, 7.0 at 3).
 *
 * What this module is: the store only. It keeps, per LBA, the newest value
 * with a few flag bits and the epoch the caller says its replay needs (see
 * docs/ARCHITECTURE.md, Memory: what recovery must find in the log to
 * rebuild a kept change, and why the tail may not pass it); counts per page
 * and per epoch; finds the page holding the most; and hands a page's or an
 * epoch's entries back. It does no I/O, reads no clock and allocates only at
 * init, through the environment: the capacity is fixed, so a full store is
 * the caller's signal to apply a page (qs_pend_fullest, qs_pend_page_take).
 *
 * Layout: 16 bytes an entry (a page's entries in a singly linked list),
 * 16 bytes a map page (its list, its count and its place in the list of pages
 * with the same count), 4 bytes a possible count and 4 an epoch. Lookups
 * walk the page's list, which the greedy take keeps short (a few entries a
 * page at the sizes above). Single-threaded, like the engine.
 */
#ifndef QS_CACHE_PEND_H
#define QS_CACHE_PEND_H

#include <stdbool.h>
#include <stdint.h>

#include "qlcshape/env.h"

#define QS_PEND_NONE UINT32_MAX
#define QS_PEND_EPOCHS_MAX 256u

struct qs_pend_ent {
	uint64_t val;	/* the entry's value (the caller's: a QLC block, or none) */
	uint32_t next;	/* the next entry of the page, or QS_PEND_NONE */
	uint16_t off;	/* the LBA's place in its page */
	uint8_t flags;	/* the caller's */
	uint8_t epoch;	/* the epoch its replay needs */
};

struct qs_pend_page {
	uint32_t head;	     /* first entry, or QS_PEND_NONE */
	uint32_t count;	     /* entries, and QS_PEND_HELD while held */
	uint32_t prev, next; /* pages with the same count (count > 0), or held */
};

#define QS_PEND_HELD (1u << 31)

struct qs_pend {
	const struct qs_env *env;
	struct qs_pend_ent *ent;  /* cap entries; the free ones chained by next */
	struct qs_pend_page *pg;  /* npages */
	uint32_t *bucket;	  /* per_page + 1 heads: pages by count */
	uint32_t held_head;	  /* held pages (qs_pend_page_hold) */
	uint32_t held_count;	  /* entries of held pages */
	uint32_t *epoch_count;	  /* nepochs */
	uint64_t npages;
	uint32_t per_page, nepochs;
	uint32_t cap, count, free_head;
	uint32_t max_count;	  /* no page holds more (may be stale high) */
};

/*
 * Size the store for cap entries over npages map pages of per_page entries
 * each (LBA / per_page is the page), with nepochs epoch numbers (1 to
 * QS_PEND_EPOCHS_MAX). 0, -EINVAL or -ENOMEM; the store is empty.
 */
int qs_pend_init(struct qs_pend *pd, const struct qs_env *env, uint32_t cap,
		 uint64_t npages, uint32_t per_page, uint32_t nepochs);
/* Free what init allocated; pd may be zeroed or initialised. */
void qs_pend_fini(struct qs_pend *pd);
/* What qs_pend_init allocates for these arguments (cache/mem.c plans it). */
uint64_t qs_pend_plan(uint32_t cap, uint64_t npages, uint32_t per_page, uint32_t nepochs);

/* lba's kept entry: true and *e pointing at it (valid until the next
 * change of the store), or false. The caller may change e->val and
 * e->flags in place; the epoch only through qs_pend_put. */
bool qs_pend_get(const struct qs_pend *pd, uint64_t lba, struct qs_pend_ent **e);

/*
 * Keep val for lba (replacing what was kept), with flags and epoch. 0, or
 * -ENOSPC when the store is full and lba has no entry: the caller applies a
 * page (qs_pend_fullest) first. lba below npages * per_page, epoch below
 * nepochs.
 */
int qs_pend_put(struct qs_pend *pd, uint64_t lba, uint64_t val, uint8_t flags,
		uint8_t epoch);

/* The page holding the most entries (*page set) and how many; 0 when empty. */
uint32_t qs_pend_fullest(struct qs_pend *pd, uint64_t *page);

/* Entries kept for page (0 to per_page). */
static inline uint32_t qs_pend_page_count(const struct qs_pend *pd, uint64_t page)
{
	return pd->pg[page].count & ~QS_PEND_HELD;
}

/*
 * Hold page (it has entries): qs_pend_fullest no longer returns it, while
 * its entries stay (looked up, replaced, added to) until qs_pend_page_take
 * removes them and the hold. For a page being read to apply its entries:
 * the next fullest is another page, and lookups still find the values.
 */
void qs_pend_page_hold(struct qs_pend *pd, uint64_t page);

static inline bool qs_pend_page_held(const struct qs_pend *pd, uint64_t page)
{
	return pd->pg[page].count & QS_PEND_HELD;
}

/* Entries of pages not held: what applying the fullest pages can free. */
static inline uint32_t qs_pend_unheld_count(const struct qs_pend *pd)
{
	return pd->count - pd->held_count;
}

/* Entries whose replay needs epoch. */
static inline uint32_t qs_pend_epoch_count(const struct qs_pend *pd, uint32_t epoch)
{
	return pd->epoch_count[epoch];
}

typedef void (*qs_pend_fn)(void *arg, uint64_t lba, const struct qs_pend_ent *e);

/* Remove every entry of page and its hold, calling fn on each first (in
 * no set order); returns how many. fn must not change the store. */
uint32_t qs_pend_page_take(struct qs_pend *pd, uint64_t page, qs_pend_fn fn, void *arg);

/*
 * Every entry whose epoch is from: fn is called on it (it must not change
 * the store) and its epoch becomes to. Returns how many. Walks the pages
 * that hold entries (held ones too), not all pages.
 */
uint32_t qs_pend_epoch_move(struct qs_pend *pd, uint32_t from, uint32_t to, qs_pend_fn fn,
			    void *arg);

#endif
