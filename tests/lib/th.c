/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qlcshape/format.h"
#include "th.h"

int th_init(struct th *h, uint64_t fast_size, uint64_t qlc_size, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	tenv_init(&h->env);
	h->w.rng = seed * 7919 + 17;
	if (tvol_init(&h->fast, &h->w, fast_size, true) || tvol_init(&h->qlc, &h->w, qlc_size, true))
		return -ENOMEM;
	h->fast.random_order = h->qlc.random_order = true;
	qs_engine_conf_default(&h->conf);
	h->conf.segment_blocks = 16;
	h->conf.group_commit_blocks = 16;
	h->conf.destage_qd = 4;
	h->conf.dram_buffer_bytes = 0;
	h->conf.policy.idle_ms = 0;
	/* No budget: the tests set the limits they test (map_dram_limit,
	 * log_window_blocks, dirty_ius_max) themselves, and dram_limit's
	 * default would override them. */
	h->conf.dram_limit = 0;
	return 0;
}

int th_init_paged(struct th *h, uint64_t seed)
{
	/* superblocks, log, 14 map pages' two slots, 360 bands' P2L page in
	 * two, the clean state's 3 */
	int rc = th_init(h, (2 + 1024 + 28 + 720 + 3) * 4096ull, 360ull * 4 * 65536, seed);
	if (rc)
		return rc;
	h->conf.placement = QS_PLACE_LOG;
	h->conf.op_pct = 40;
	h->conf.band_bytes = 4 * 65536;
	h->conf.map_dram_limit = 64 << 10;
	h->conf.iu_bytes = 4096; /* 64 KiB holds a 4 KiB IU's unit of pages, twice */
	h->qlc.check_iu = 4096;
	h->qlc.check_band = 4 * 65536;
	return 0;
}

void th_fini(struct th *h)
{
	if (h->e)
		qs_engine_free(h->e);
	h->e = NULL;
	tvol_fini(&h->fast);
	tvol_fini(&h->qlc);
}

static void open_cb(void *arg, int res)
{
	struct th *h = arg;
	h->open_res = res;
	h->open_done = true;
}

int th_open(struct th *h, bool format)
{
	h->open_done = false;
	if (!format)
		tvol_band_reopen(&h->qlc);
	h->e = qs_engine_open(&h->env.env, &h->fast.vol, &h->qlc.vol, &h->conf,
			      (format ? QS_OPEN_FORMAT : 0) | h->open_flags, open_cb, h);
	if (!h->e)
		return -errno;
	th_wait(h, &h->open_done);
	if (!h->open_done)
		return -ETIMEDOUT;
	if (h->open_res) {
		qs_engine_free(h->e);
		h->e = NULL;
	}
	return h->open_res;
}

bool th_step(struct th *h)
{
	bool f = h->fast.queue != NULL, q = h->qlc.queue != NULL;
	h->env.now += h->step_ns ? h->step_ns : 1000; /* 1 us a step by default */
	if (f && q)
		return tvol_step((trng(&h->w.rng) & 1) ? &h->fast : &h->qlc);
	if (f)
		return tvol_step(&h->fast);
	if (q)
		return tvol_step(&h->qlc);
	if (h->env.deadline && h->e) {
		if (h->env.deadline > h->env.now)
			h->env.now = h->env.deadline;
		h->env.deadline = 0;
		qs_engine_timer(h->e);
		return true;
	}
	return false;
}

void th_wait(struct th *h, const bool *flag)
{
	while (!*flag && !h->w.crashed && th_step(h))
		;
}

void th_run_idle(struct th *h)
{
	for (int i = 0; i < 10000000 && th_step(h); i++)
		;
}

struct sync_io {
	bool done;
	int res;
};

static void sync_cb(void *arg, int res)
{
	struct sync_io *s = arg;
	s->res = res;
	s->done = true;
}

int th_io(struct th *h, char op, uint64_t off, uint64_t len, void *buf, unsigned flags)
{
	struct sync_io s = {0};
	int rc;
	switch (op) {
	case 'r': rc = qs_engine_read(h->e, off, len, buf, sync_cb, &s); break;
	case 'w': rc = qs_engine_write(h->e, off, len, buf, flags, sync_cb, &s); break;
	case 'f': rc = qs_engine_flush(h->e, sync_cb, &s); break;
	case 'd': rc = qs_engine_discard(h->e, off, len, sync_cb, &s); break;
	case 'D': rc = qs_engine_drain(h->e, sync_cb, &s); break;
	default: return -EINVAL;
	}
	if (rc)
		return rc;
	th_wait(h, &s.done);
	return s.done ? s.res : -ETIMEDOUT;
}

int th_close(struct th *h)
{
	return th_close_stats(h, NULL);
}

int th_close_stats(struct th *h, struct qs_engine_stats *st)
{
	struct sync_io s = {0};
	int rc = qs_engine_close(h->e, sync_cb, &s);
	if (!rc) {
		th_wait(h, &s.done);
		rc = s.done ? s.res : -ETIMEDOUT;
	}
	if (st)
		qs_engine_get_stats(h->e, st);
	qs_engine_free(h->e);
	h->e = NULL;
	return rc;
}

int th_close_or_crash(struct th *h)
{
	/* Not on the stack: a close cut by the crash may still call back,
	 * from th_crash's last steps. */
	static struct sync_io s;
	s.done = false;
	int rc = qs_engine_close(h->e, sync_cb, &s);
	if (rc)
		return rc;
	th_wait(h, &s.done);
	if (h->w.crashed)
		return 1;
	qs_engine_free(h->e);
	h->e = NULL;
	return s.done ? s.res : -ETIMEDOUT;
}

void th_crash(struct th *h, bool power)
{
	tvol_crash(&h->fast, power);
	tvol_crash(&h->qlc, power);
	/* Let the dead engine see every outstanding I/O fail, then drop it.
	 * w.crashed stays set meanwhile, so clients ignore those results. */
	h->w.crashed = true;
	h->w.crash_at = 0;
	if (h->e) {
		h->env.deadline = 0;
		for (int i = 0; i < 1000000 && (h->fast.queue || h->qlc.queue); i++)
			th_step(h);
		qs_engine_free(h->e);
		h->e = NULL;
	}
	tvol_revive(&h->fast);
	tvol_revive(&h->qlc);
	h->env.deadline = 0;
	h->w.crashed = false;
}

/* The newest valid copy among a page's two slots at blk, or NULL. */
static const struct qs_fmt_map_page *audit_pick(const struct qs_fmt_sb *sb, const unsigned char *blk,
						 uint64_t no, bool map)
{
	const struct qs_fmt_map_page *best = NULL;
	for (int s = 0; s < 2; s++) {
		const struct qs_fmt_map_page *c = (const void *)(blk + s * 4096);
		bool ok = map ? qs_fmt_map_check(c, sb, no) == QS_FMT_OK && c->gen <= sb->map_gen
			      : qs_fmt_p2l_check(c, sb, no) == QS_FMT_OK;
		if (ok && (!best || c->gen > best->gen))
			best = c;
	}
	return best;
}

static uint64_t audit_entry(const struct qs_fmt_map_page *pg, uint32_t k, uint32_t width)
{
	if (width == 4) {
		uint32_t v;
		memcpy(&v, pg->entries + (size_t)k * 4, 4);
		return v == UINT32_MAX ? UINT64_MAX : v;
	}
	if (width == 5) {
		uint64_t v = 0;
		memcpy(&v, pg->entries + (size_t)k * 5, 5);
		return v == QS_FMT_MAP_NONE5 ? UINT64_MAX : v;
	}
	uint64_t v;
	memcpy(&v, pg->entries + (size_t)k * 8, 8);
	return v;
}

uint64_t th_p2l_audit(struct th *h, char *why, size_t len)
{
	const unsigned char *img = h->fast.cur;
	const struct qs_fmt_sb *a = (const void *)img, *b = (const void *)(img + 4096), *sb;
	bool va = qs_fmt_sb_check(a, h->fast.size) == QS_FMT_OK;
	bool vb = qs_fmt_sb_check(b, h->fast.size) == QS_FMT_OK;
	sb = va && (!vb || a->generation > b->generation) ? a : b;
	if (!va && !vb) {
		snprintf(why, len, "p2l audit: no valid superblock");
		return 1;
	}
	if (sb->placement != QS_FMT_PLACE_LOG)
		return 0;
	uint64_t lbas = sb->qlc_size / 4096, phys = sb->qlc_phys_size / 4096, bad = 0;
	uint32_t w = sb->map_width, per = qs_fmt_map_per_page(w), iu = sb->iu_bytes / 4096;
	uint32_t cover = qs_fmt_p2l_cover(w, iu), bp = qs_fmt_p2l_band_pages(sb->band_blocks, cover);
	uint64_t p2l_start = sb->map_start + 2 * sb->map_pages;
	for (uint64_t pg = 0; pg < sb->map_pages; pg++) {
		const struct qs_fmt_map_page *m =
			audit_pick(sb, img + (sb->map_start + 2 * pg) * 4096, pg, true);
		for (uint32_t k = 0; m && k < m->nentries && pg * per + k < lbas; k++) {
			uint64_t lba = pg * per + k, ph = audit_entry(m, k, w);
			if (ph == UINT64_MAX || ph >= phys)
				continue;
			uint64_t band = ph / sb->band_blocks, off = ph % sb->band_blocks;
			uint64_t q = band * bp + off / cover;
			const struct qs_fmt_map_page *c =
				audit_pick(sb, img + (p2l_start + 2 * q) * 4096, q, false);
			uint64_t got = c ? audit_entry(c, (uint32_t)(off % cover), w) : UINT64_MAX;
			if (got != lba) {
				if (!bad)
					snprintf(why, len, "p2l audit: LBA %llu at QLC block %llu, "
						 "its P2L page %llu says %lld%s",
						 (unsigned long long)lba, (unsigned long long)ph,
						 (unsigned long long)q, (long long)got,
						 c ? "" : " (no valid copy)");
				bad++;
			}
		}
	}
	return bad;
}
