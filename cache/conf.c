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
	c->policy.order = QS_ORDER_SWEEP;
	c->policy.partial = QS_PARTIAL_FILL;
	c->policy.hold_ms = 1000;
	c->policy.start_pct = 50;
	c->policy.urgent_pct = 85;
	c->policy.idle_ms = 2000;
	c->policy.max_age_ms = 0;
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
	return 0;
#undef BAD
}

static const char *const order_names[] = {"fifo", "sweep", "fullest"};

int qs_policy_parse_order(const char *name, enum qs_order *order)
{
	for (unsigned i = 0; i < 3; i++)
		if (!strcmp(name, order_names[i])) {
			*order = (enum qs_order)i;
			return 0;
		}
	return -EINVAL;
}

const char *qs_policy_order_name(enum qs_order order)
{
	return order <= QS_ORDER_FULLEST ? order_names[order] : "?";
}
