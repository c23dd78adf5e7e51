/* SPDX-License-Identifier: MIT */
/*
 * Engine configuration: the defaults documented in conf/qlcshaped.ini, the
 * consistency check every open and policy change goes through, and the
 * names of the destage orders.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"

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
	c->policy.order = QS_ORDER_FIFO;
	c->policy.partial = QS_PARTIAL_FILL;
	c->policy.hold_ms = 1000;
	c->policy.start_pct = 50;
	c->policy.urgent_pct = 85;
	c->policy.idle_ms = 2000;
	c->policy.max_age_ms = 0;
	c->policy.pace_pct = 95;
	c->placement = QS_PLACE_INPLACE;
	c->op_pct = 20;
	c->band_bytes = 1ull << 30;
	c->gc_victim = QS_GC_COST_BENEFIT;
	c->map_dram_limit = 2ull << 30;
	c->dram_limit = QS_CONF_DRAM_AUTO;
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
	if (p->pace_pct > 99)
		BAD(POLICY_PACE, "pace_pct %u: must be 0 (off) to 99", p->pace_pct);
	/* Set from dram_limit, or by a host scaling a real drive's split. */
	if (c->dirty_ius_max && (c->dirty_ius_max < 1024 || c->dirty_ius_max > (1ull << 31)))
		BAD(DRAM_LIMIT, "dirty_ius_max %llu: must be 0 (none) or 1024 to 2^31",
		    (unsigned long long)c->dirty_ius_max);
	if (c->log_window_blocks && c->log_window_blocks < 32ull * c->segment_blocks)
		BAD(DRAM_LIMIT, "log_window_blocks %llu: must be 0 (the whole log) or at least 32 "
		    "segments (%llu blocks)", (unsigned long long)c->log_window_blocks,
		    32ull * c->segment_blocks);
	if (c->placement > QS_PLACE_LOG)
		BAD(PLACEMENT, "placement %d: must be inplace or log", (int)c->placement);
	if (c->placement == QS_PLACE_LOG) {
		if (c->op_pct < 5 || c->op_pct > 50)
			BAD(OP_PCT, "op_pct %u: must be 5 to 50", c->op_pct);
		if (c->band_bytes < 2ull * c->iu_bytes || c->band_bytes % c->iu_bytes ||
		    c->band_bytes > (1ull << 36))
			BAD(BAND_BYTES, "band_bytes %llu: must be a multiple of iu_bytes (%u), 2 IUs to 64 GiB",
			    (unsigned long long)c->band_bytes, c->iu_bytes);
		if (c->bypass_min_bytes)
			BAD(BYPASS_MIN_BYTES, "bypass_min_bytes %llu: must be 0 with log placement (every write "
			    "goes through the log)", (unsigned long long)c->bypass_min_bytes);
		if (c->gc_victim > QS_GC_COST_BENEFIT)
			BAD(GC_VICTIM, "gc %d: must be greedy or cost-benefit", (int)c->gc_victim);
		if (c->map_entry_bytes && c->map_entry_bytes != 4 && c->map_entry_bytes != 5 &&
		    c->map_entry_bytes != 8)
			BAD(PLACEMENT, "map_entry_bytes %u: must be 0 (the narrowest the QLC needs), "
			    "4, 5 or 8", c->map_entry_bytes);
		uint64_t min = qs_engine_conf_map_min(c);
		if (!c->dram_limit && c->map_dram_limit < min)
			BAD(MAP_DRAM_LIMIT, "map_dram_limit %llu: must be at least %llu (16 IUs of "
			    "%u bytes, 64 KiB at least)", (unsigned long long)c->map_dram_limit,
			    (unsigned long long)min, c->iu_bytes);
	}
	return 0;
#undef BAD
}

/* Spare bands log placement needs: a client and a GC band open, and two
 * kept free so GC can always finish the band it empties. */
#define LOG_MIN_SPARE_BANDS 4u

uint64_t qs_engine_conf_client_size(const struct qs_engine_conf *c, uint64_t qlc_bytes)
{
	if (c->placement != QS_PLACE_LOG)
		return c->qlc_size ? c->qlc_size : qlc_bytes / c->iu_bytes * c->iu_bytes;
	if (!c->band_bytes || !c->iu_bytes)
		return 0;
	uint64_t phys = qlc_bytes / c->band_bytes * c->band_bytes;
	uint64_t avail = phys / 100 * (100 - c->op_pct) + phys % 100 * (100 - c->op_pct) / 100;
	avail = avail / c->iu_bytes * c->iu_bytes;
	return c->qlc_size ? c->qlc_size : avail;
}

uint32_t qs_engine_conf_map_width(const struct qs_engine_conf *c, uint64_t phys)
{
	uint32_t need = qs_fmt_map_width(phys);
	return c->map_entry_bytes > need ? c->map_entry_bytes : need;
}

uint64_t qs_engine_conf_map_bytes(const struct qs_engine_conf *c, uint64_t qlc_bytes)
{
	if (c->placement != QS_PLACE_LOG || !c->band_bytes)
		return 0;
	uint64_t phys = qlc_bytes / c->band_bytes * (c->band_bytes / QS_BLOCK_SIZE);
	uint64_t lbas = qs_engine_conf_client_size(c, qlc_bytes) / QS_BLOCK_SIZE;
	return qs_fmt_plc_blocks(lbas, phys, (uint32_t)(c->band_bytes / QS_BLOCK_SIZE),
				 c->iu_bytes / QS_BLOCK_SIZE, qs_engine_conf_map_width(c, phys)) *
	       QS_BLOCK_SIZE;
}

int qs_engine_conf_check_qlc(const struct qs_engine_conf *c, uint64_t qlc_bytes,
			     struct qs_conf_err *err)
{
#define BAD(f, ...) do { if (err) { err->field = QS_CONF_FIELD_##f; \
	snprintf(err->msg, sizeof(err->msg), __VA_ARGS__); } return -EINVAL; } while (0)
	int rc = qs_engine_conf_check(c, err);
	if (rc)
		return rc;
	uint64_t client = qs_engine_conf_client_size(c, qlc_bytes);
	if (c->placement != QS_PLACE_LOG) {
		if (client > qlc_bytes || !client)
			BAD(QLC_SIZE, "qlc_size %llu: must be 1 IU to the QLC's %llu bytes",
			    (unsigned long long)client, (unsigned long long)qlc_bytes);
		return 0;
	}
	/*
	 * GC must gain room by emptying a band: with all but the spare bands
	 * full, they must hold at most 95% valid blocks on average, or a
	 * victim would move nearly a band to free one.
	 */
	uint64_t bands = qlc_bytes / c->band_bytes;
	uint64_t need = (client / 95 * 100 + client % 95 * 100 / 95 + c->band_bytes - 1) /
			c->band_bytes + LOG_MIN_SPARE_BANDS;
	if (bands < need || !client)
		BAD(OP_PCT, "op_pct %u, band_bytes %llu: %llu bands, %llu needed (4 spare, "
		    "95%% full); raise op_pct or make bands smaller", c->op_pct,
		    (unsigned long long)c->band_bytes, (unsigned long long)bands,
		    (unsigned long long)need);
	return 0;
#undef BAD
}

static const char *const placement_names[] = {"inplace", "log"};
static const char *const gc_names[] = {"greedy", "cost-benefit"};
static const char *const order_names[] = {"fifo", "sweep", "fullest"};

/* The index of name among names[0..n), or -EINVAL. */
static int name_index(const char *const *names, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -EINVAL;
}

const char *qs_placement_name(enum qs_placement p)
{
	return p <= QS_PLACE_LOG ? placement_names[p] : "?";
}

int qs_placement_parse(const char *name, enum qs_placement *p)
{
	int i = name_index(placement_names, 2, name);
	if (i >= 0)
		*p = (enum qs_placement)i;
	return i < 0 ? i : 0;
}

const char *qs_gc_victim_name(enum qs_gc_victim g)
{
	return g <= QS_GC_COST_BENEFIT ? gc_names[g] : "?";
}

int qs_gc_victim_parse(const char *name, enum qs_gc_victim *g)
{
	int i = name_index(gc_names, 2, name);
	if (i >= 0)
		*g = (enum qs_gc_victim)i;
	return i < 0 ? i : 0;
}

int qs_policy_parse_order(const char *name, enum qs_order *order)
{
	int i = name_index(order_names, 3, name);
	if (i >= 0)
		*order = (enum qs_order)i;
	return i < 0 ? i : 0;
}

const char *qs_policy_order_name(enum qs_order order)
{
	return order <= QS_ORDER_FULLEST ? order_names[order] : "?";
}
