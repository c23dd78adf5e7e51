/* SPDX-License-Identifier: MIT */
/*
 * On-disk format: every validation branch of superblock and record loading
 * is hit by a corrupted input, directly and through recovery.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "qlcshape/format.h"
#include "th.h"

#define FAST (2 * 1024 * 1024ull)

static struct qs_fmt_sb good_sb(void)
{
	struct qs_fmt_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.magic = QS_FMT_SB_MAGIC;
	sb.version = QS_FMT_VERSION;
	sb.size = sizeof(sb);
	sb.generation = 3;
	sb.uuid[0] = 0x5a;
	sb.fast_size = FAST;
	sb.qlc_size = 16 << 20;
	sb.iu_bytes = 65536;
	sb.segment_blocks = 16;
	sb.log_start = QS_FMT_LOG_START;
	sb.log_blocks = 496;
	sb.tail_pos = 100;
	sb.tail_seq = 7;
	sb.epoch = 2;
	qs_fmt_sb_seal(&sb);
	return sb;
}

static enum qs_fmt_status sb_with(void (*mut)(struct qs_fmt_sb *), int reseal)
{
	struct qs_fmt_sb sb = good_sb();
	mut(&sb);
	if (reseal)
		qs_fmt_sb_seal(&sb);
	return qs_fmt_sb_check(&sb, FAST);
}

static void m_magic(struct qs_fmt_sb *s) { s->magic ^= 1; }
static void m_version(struct qs_fmt_sb *s) { s->version = 1; } /* the format before log placement */
static void m_byte(struct qs_fmt_sb *s) { s->tail_pos ^= 0x100; }
static void m_size(struct qs_fmt_sb *s) { s->size = 64; }
static void m_iu(struct qs_fmt_sb *s) { s->iu_bytes = 65536 + 4096; }
static void m_seg(struct qs_fmt_sb *s) { s->segment_blocks = 1; }
static void m_start(struct qs_fmt_sb *s) { s->log_start = 3; }
static void m_logmul(struct qs_fmt_sb *s) { s->log_blocks = 497; }
static void m_logbig(struct qs_fmt_sb *s) { s->log_blocks = 512; }
static void m_fast(struct qs_fmt_sb *s) { s->fast_size = FAST * 2; }
static void m_qlc(struct qs_fmt_sb *s) { s->qlc_size = 65536 + 4096; }
static void m_qlc0(struct qs_fmt_sb *s) { s->qlc_size = 0; }
static void m_iupow(struct qs_fmt_sb *s) { s->iu_bytes = 1u << 25; }
static void m_segbig(struct qs_fmt_sb *s) { s->segment_blocks = (1u << 20) + 1; }
static void m_log0(struct qs_fmt_sb *s) { s->log_blocks = 0; }
static void m_headseq(struct qs_fmt_sb *s) { s->flags = QS_SB_CLEAN; s->head_pos = 120; s->head_seq = 6; }
static void m_flags(struct qs_fmt_sb *s) { s->flags = 0x8; }
static void m_head(struct qs_fmt_sb *s) { s->flags = QS_SB_CLEAN; s->head_pos = 50; }
static void m_headfar(struct qs_fmt_sb *s) { s->flags = QS_SB_CLEAN; s->head_pos = 100 + 497; s->head_seq = 9; }
static void m_resv(struct qs_fmt_sb *s) { s->reserved = 1; }
static void m_logsmall(struct qs_fmt_sb *s) { s->log_blocks = 48; } /* 3 segments */
static void m_loghuge(struct qs_fmt_sb *s) { s->log_blocks = 1ull << 31; }
static void m_tail(struct qs_fmt_sb *s) { s->tail_pos = 0xffffffffffffffebull; }
static void m_tailseq(struct qs_fmt_sb *s) { s->tail_seq = QS_FMT_MAX_POS; }
static void m_place(struct qs_fmt_sb *s) { s->placement = 2; }
static void m_band(struct qs_fmt_sb *s) { s->band_blocks = 64; }
static void m_map(struct qs_fmt_sb *s) { s->map_pages = 1; }
static void m_none(struct qs_fmt_sb *s) { (void)s; }

static void test_sb_branches(void **st)
{
	assert_int_equal(sb_with(m_none, 0), QS_FMT_OK);
	assert_int_equal(sb_with(m_magic, 0), QS_FMT_BAD_MAGIC);
	assert_int_equal(sb_with(m_version, 0), QS_FMT_BAD_VERSION);
	assert_int_equal(sb_with(m_byte, 0), QS_FMT_BAD_CRC);
	assert_int_equal(sb_with(m_size, 1), QS_FMT_BAD_SIZE);
	assert_int_equal(sb_with(m_iu, 1), QS_FMT_BAD_IU_BYTES);
	assert_int_equal(sb_with(m_seg, 1), QS_FMT_BAD_SEGMENT_BLOCKS);
	assert_int_equal(sb_with(m_start, 1), QS_FMT_BAD_LOG_START);
	assert_int_equal(sb_with(m_logmul, 1), QS_FMT_BAD_LOG_BLOCKS);
	assert_int_equal(sb_with(m_logbig, 1), QS_FMT_BAD_LOG_BLOCKS);
	assert_int_equal(sb_with(m_fast, 1), QS_FMT_BAD_FAST_SIZE);
	assert_int_equal(sb_with(m_qlc, 1), QS_FMT_BAD_QLC_SIZE);
	assert_int_equal(sb_with(m_qlc0, 1), QS_FMT_BAD_QLC_SIZE);
	assert_int_equal(sb_with(m_iupow, 1), QS_FMT_BAD_IU_BYTES);
	assert_int_equal(sb_with(m_segbig, 1), QS_FMT_BAD_SEGMENT_BLOCKS);
	assert_int_equal(sb_with(m_log0, 1), QS_FMT_BAD_LOG_BLOCKS);
	assert_int_equal(sb_with(m_flags, 1), QS_FMT_BAD_FLAGS);
	assert_int_equal(sb_with(m_head, 1), QS_FMT_BAD_HEAD_POS);
	assert_int_equal(sb_with(m_headfar, 1), QS_FMT_BAD_HEAD_POS);
	assert_int_equal(sb_with(m_headseq, 1), QS_FMT_BAD_HEAD_SEQ);
	assert_int_equal(sb_with(m_resv, 1), QS_FMT_BAD_RESERVED);
	assert_int_equal(sb_with(m_logsmall, 1), QS_FMT_BAD_LOG_BLOCKS);
	assert_int_equal(sb_with(m_loghuge, 1), QS_FMT_BAD_LOG_BLOCKS);
	assert_int_equal(sb_with(m_tail, 1), QS_FMT_BAD_TAIL);
	assert_int_equal(sb_with(m_tailseq, 1), QS_FMT_BAD_TAIL);
	assert_int_equal(sb_with(m_place, 1), QS_FMT_BAD_PLACEMENT);
	assert_int_equal(sb_with(m_band, 1), QS_FMT_BAD_BAND);
	assert_int_equal(sb_with(m_map, 1), QS_FMT_BAD_MAP);
	/* magic is checked before version, version before CRC */
	struct qs_fmt_sb sb = good_sb();
	sb.magic = 0;
	sb.version = 9;
	assert_int_equal(qs_fmt_sb_check(&sb, FAST), QS_FMT_BAD_MAGIC);
	sb = good_sb();
	sb.version = 9;
	sb.tail_pos = 1;
	assert_int_equal(qs_fmt_sb_check(&sb, FAST), QS_FMT_BAD_VERSION);
	for (int i = QS_FMT_OK; i <= QS_FMT_STATUS_LAST; i++)
		for (int j = QS_FMT_OK; j < i; j++) /* one message per status */
			assert_string_not_equal(qs_fmt_status_str((enum qs_fmt_status)i),
						qs_fmt_status_str((enum qs_fmt_status)j));
}

static struct qs_fmt_rec *good_rec(const struct qs_fmt_sb *sb, uint64_t pos)
{
	struct qs_fmt_rec *r = calloc(1, sizeof(*r));
	r->magic = QS_FMT_REC_MAGIC;
	r->version = QS_FMT_VERSION;
	r->seq = 9;
	r->pos = pos;
	r->epoch = 2;
	r->nblocks = 3;
	r->nextents = 2;
	r->ext[0] = (struct qs_fmt_extent){.lba = 10, .nblocks = 3, .kind = QS_EXT_DATA};
	r->ext[1] = (struct qs_fmt_extent){.lba = 40, .nblocks = 2, .kind = QS_EXT_ZERO};
	qs_fmt_rec_seal(r, qs_fmt_rec_seed(sb));
	return r;
}

#define REC_CASE(expr, reseal, want)                                        \
	do {                                                                \
		struct qs_fmt_rec *r = good_rec(&sb, 112);                   \
		expr;                                                       \
		if (reseal)                                                 \
			qs_fmt_rec_seal(r, qs_fmt_rec_seed(&sb));            \
		assert_int_equal(qs_fmt_rec_check(r, &sb, 112), want);       \
		free(r);                                                    \
	} while (0)

static void test_rec_branches(void **st)
{
	struct qs_fmt_sb sb = good_sb();
	REC_CASE((void)0, 0, QS_FMT_OK);
	REC_CASE(r->magic = 0, 0, QS_FMT_BAD_MAGIC);
	REC_CASE(r->version = 7, 0, QS_FMT_BAD_VERSION);
	REC_CASE(r->ext[0].lba = 11, 0, QS_FMT_BAD_CRC);
	/* a record of an earlier format of the same device: other seed */
	REC_CASE(qs_fmt_rec_seal(r, qs_fmt_rec_seed(&sb) + 1), 0, QS_FMT_BAD_CRC);
	REC_CASE(r->pos = 113, 1, QS_FMT_BAD_POSITION);
	REC_CASE(r->flags = 0x10, 1, QS_FMT_BAD_FLAGS);
	REC_CASE(r->reserved = 1, 1, QS_FMT_BAD_RESERVED);
	REC_CASE(r->pad[2] = 1, 1, QS_FMT_BAD_RESERVED);
	REC_CASE(r->nextents = QS_FMT_REC_MAX_EXTENTS + 1, 1, QS_FMT_BAD_NEXTENTS);
	REC_CASE(r->ext[1].kind = 0, 1, QS_FMT_BAD_EXTENT_KIND);
	REC_CASE(r->ext[1].kind = 4, 1, QS_FMT_BAD_EXTENT_KIND);
	REC_CASE(r->ext[1].nblocks = 0, 1, QS_FMT_BAD_EXTENT_RANGE);
	REC_CASE(r->ext[1].lba = (16 << 20) / 4096, 1, QS_FMT_BAD_EXTENT_RANGE);
	REC_CASE(r->ext[1].lba = (16 << 20) / 4096 - 1, 1, QS_FMT_BAD_EXTENT_RANGE);
	REC_CASE(r->nblocks = 4, 1, QS_FMT_BAD_LENGTH);
	REC_CASE((r->ext[0].nblocks = 16, r->nblocks = 16), 1, QS_FMT_BAD_LENGTH); /* crosses the segment */
	REC_CASE((r->flags = QS_REC_VOID, r->nextents = 0), 1, QS_FMT_OK);
}

/*
 * A log-placement superblock: a 64 MiB QLC in 16 bands of 4 MiB (1024
 * blocks), 48 MiB of client space; the map region after the log (26
 * blocks), then the clean state (header, 1 band page, 17 reverse-map
 * pages): 2 + 464 + 26 + 19 = 511 of the device's 512 blocks.
 */
static struct qs_fmt_sb good_log_sb(void)
{
	struct qs_fmt_sb sb = good_sb();
	sb.placement = QS_FMT_PLACE_LOG;
	sb.qlc_size = 48ull << 20;
	sb.qlc_phys_size = 64ull << 20;
	sb.band_blocks = 1024;
	sb.map_width = 4;
	sb.map_pages = qs_fmt_map_pages((48ull << 20) / 4096, 4);
	sb.log_blocks = 416;
	sb.map_start = QS_FMT_LOG_START + 416;
	sb.map_seq = sb.tail_seq;
	qs_fmt_sb_seal(&sb);
	return sb;
}

static void test_log_sb_branches(void **st)
{
	struct qs_fmt_sb sb = good_log_sb(), x;
	assert_int_equal(qs_fmt_sb_check(&sb, FAST), QS_FMT_OK);
#define LSB(expr, want) do { x = sb; expr; qs_fmt_sb_seal(&x); \
		assert_int_equal(qs_fmt_sb_check(&x, FAST), want); } while (0)
	LSB(x.band_blocks = 8, QS_FMT_BAD_BAND);	 /* under 2 IUs */
	LSB(x.band_blocks = 1000, QS_FMT_BAD_BAND);	 /* not whole IUs */
	LSB(x.qlc_phys_size += 4096, QS_FMT_BAD_BAND);	 /* not whole bands */
	LSB(x.qlc_size = x.qlc_phys_size, QS_FMT_BAD_BAND); /* no spare */
	LSB(x.qlc_phys_size = 3ull << 22, QS_FMT_BAD_BAND); /* 3 bands */
	LSB(x.map_width = 8, QS_FMT_BAD_MAP); /* allowed, but map_pages are of width 4 */
	LSB(x.map_width = 3, QS_FMT_BAD_MAP);
	LSB(x.map_pages++, QS_FMT_BAD_MAP);
	LSB(x.map_start = 100, QS_FMT_BAD_MAP);		 /* inside the log */
	LSB(x.map_start = FAST / 4096 - 1, QS_FMT_BAD_MAP); /* past the device */
	LSB(x.map_seq = x.tail_seq - 1, QS_FMT_BAD_MAP);   /* records lost between */
	/* after the log: the map (13 pages, 26 blocks), the P2L pages (16
	 * bands of 2 pages of 1008 and 16 entries, 64 blocks), the clean
	 * state (header, band page, valid page: 3) */
	assert_int_equal(qs_fmt_clean_blocks(16384, 1024), 3);
	assert_int_equal(qs_fmt_plc_blocks(12288, 16384, 1024, 16, 4), 26 + 64 + 3);
	/* 5-byte entries: 811 a page, P2L cover 800 (whole IUs): 16 map pages,
	 * 2 P2L pages a band */
	assert_int_equal(qs_fmt_map_per_page(5), 811);
	assert_int_equal(qs_fmt_p2l_cover(5, 16), 800);
	assert_int_equal(qs_fmt_plc_blocks(12288, 16384, 1024, 16, 5), 2 * 16 + 64 + 3);
	/* widths: the narrowest that holds the QLC, or wider; never narrower */
	assert_int_equal(qs_fmt_map_width(16384), 4);
	assert_int_equal(qs_fmt_map_width(7500000000ull), 5);
	assert_int_equal(qs_fmt_map_width(1ull << 41), 8);
	assert_true(qs_fmt_map_width_ok(5, 16384) && qs_fmt_map_width_ok(8, 16384));
	assert_false(qs_fmt_map_width_ok(4, 7500000000ull) || qs_fmt_map_width_ok(6, 16384));
	LSB(x.map_start += 2, QS_FMT_BAD_MAP);		 /* no room for the clean state */
	LSB(x.map_start += 1, QS_FMT_OK);		 /* the last block used */
	/* The clean state: log placement, a clean shutdown's copy only. */
	LSB((x.flags = QS_SB_CLEAN | QS_SB_CLEAN_STATE, x.head_pos = x.tail_pos,
	     x.head_seq = x.tail_seq), QS_FMT_OK);
	LSB(x.flags = QS_SB_CLEAN_STATE, QS_FMT_BAD_FLAGS);
	LSB(x.flags = 0x4, QS_FMT_BAD_FLAGS);
#undef LSB
	struct qs_fmt_sb ip = good_sb();
	ip.flags = QS_SB_CLEAN | QS_SB_CLEAN_STATE;
	ip.head_pos = ip.tail_pos;
	ip.head_seq = ip.tail_seq;
	qs_fmt_sb_seal(&ip);
	assert_int_equal(qs_fmt_sb_check(&ip, FAST), QS_FMT_BAD_FLAGS); /* in place: none */
}

static void test_log_rec_branches(void **st)
{
	struct qs_fmt_sb sb = good_log_sb(), ip = good_sb();
	struct qs_fmt_rec *r = calloc(1, sizeof(*r));
	r->magic = QS_FMT_REC_MAGIC;
	r->version = QS_FMT_VERSION;
	r->pos = 200;
	r->nextents = 3;
	r->ext[0] = (struct qs_fmt_extent){.lba = 10, .nblocks = 2, .kind = QS_EXT_MAP};
	struct qs_fmt_ext_phys py = {.phys = 4000, .from = 150};
	memcpy(&r->ext[1], &py, sizeof(py));
	r->ext[2] = (struct qs_fmt_extent){.lba = 30, .nblocks = 5, .kind = QS_EXT_TRIM};
#define LREC(expr, s, want) do { struct qs_fmt_rec c = *r; struct qs_fmt_rec *q = &c; expr; \
		qs_fmt_rec_seal(q, qs_fmt_rec_seed(&s)); \
		assert_int_equal(qs_fmt_rec_check(q, &s, 200), want); } while (0)
	LREC((void)q, sb, QS_FMT_OK);
	LREC((void)q, ip, QS_FMT_BAD_EXTENT_KIND); /* not in an in-place log */
	LREC(q->ext[2].kind = QS_EXT_ZERO, sb, QS_FMT_BAD_EXTENT_KIND);
	LREC(q->nextents = 1, sb, QS_FMT_BAD_EXTENT_PHYS); /* payload missing */
	py.phys = (64ull << 20) / 4096 - 1; /* runs past the last band */
	LREC(memcpy(&q->ext[1], &py, sizeof(py)), sb, QS_FMT_BAD_EXTENT_PHYS);
	py.phys = 4000;
	py.from = 199; /* the destaged copy must lie before the record */
	LREC(memcpy(&q->ext[1], &py, sizeof(py)), sb, QS_FMT_BAD_EXTENT_PHYS);
	py.from = (64ull << 20) / 4096; /* a MOVE from past the QLC */
	LREC((q->ext[0].kind = QS_EXT_MOVE, memcpy(&q->ext[1], &py, sizeof(py))), sb,
	     QS_FMT_BAD_EXTENT_PHYS);
#undef LREC
	free(r);
}

static void test_map_page_branches(void **st)
{
	struct qs_fmt_sb sb = good_log_sb();
	uint32_t per = qs_fmt_map_per_page(4);
	assert_int_equal(per, 1014);
	struct qs_fmt_map_page *pg = calloc(1, sizeof(*pg)), c;
	pg->magic = QS_FMT_MAP_MAGIC;
	pg->version = QS_FMT_VERSION;
	pg->width = 4;
	pg->page = 2;
	pg->gen = 5;
	pg->nentries = per;
	memset(pg->entries, 0xff, per * 4); /* unmapped */
	uint32_t v = 7;
	memcpy(pg->entries + 12, &v, 4);
#define PG(expr, want) do { c = *pg; expr; qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb)); \
		assert_int_equal(qs_fmt_map_check(&c, &sb, 2), want); } while (0)
	PG((void)0, QS_FMT_OK);
	PG(c.magic = 0, QS_FMT_BAD_MAGIC);
	PG(c.version = 1, QS_FMT_BAD_VERSION);
	PG(c.page = 3, QS_FMT_BAD_PAGE);
	PG(c.width = 8, QS_FMT_BAD_PAGE);
	PG(c.nentries = per - 1, QS_FMT_BAD_PAGE);
	PG(c.seq = 1ull << 40, QS_FMT_OK); /* ahead of the superblock's map_seq: allowed */
	PG(c.seq = 1ull << 62, QS_FMT_BAD_SEQ);
	v = (64u << 20) / 4096;
	PG(memcpy(c.entries + 40, &v, 4), QS_FMT_BAD_ENTRY);
	v--; /* the last block of the bands */
	PG(memcpy(c.entries + 40, &v, 4), QS_FMT_OK);
	v = UINT32_MAX - 1; /* one below unmapped: the check's v + 1 must not wrap it in */
	PG(memcpy(c.entries + 4 * (per - 1), &v, 4), QS_FMT_BAD_ENTRY);
	/* a page of an earlier format of the device: another seed */
	c = *pg;
	qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb) + 1);
	assert_int_equal(qs_fmt_map_check(&c, &sb, 2), QS_FMT_BAD_CRC);
	/* the last page holds what is left */
	uint64_t last = sb.map_pages - 1, left = (48ull << 20) / 4096 - last * per;
	c = *pg;
	c.page = last;
	c.nentries = (uint32_t)left;
	memset(c.entries + left * 4, 0, QS_FMT_MAP_BYTES - left * 4);
	qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb));
	assert_int_equal(qs_fmt_map_check(&c, &sb, last), QS_FMT_OK);
	c.entries[QS_FMT_MAP_BYTES - 1] = 1;
	qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb));
	assert_int_equal(qs_fmt_map_check(&c, &sb, last), QS_FMT_BAD_RESERVED);
#undef PG
	free(pg);
}

/*
 * 5-byte entries, which the check reads with 8-byte loads but the last: an
 * entry out of range is found at the first, a middle, the next to last and
 * the last place, and one below unmapped (40 bits) is not taken for it.
 */
static void test_map_page_width5(void **st)
{
	(void)st;
	struct qs_fmt_sb sb = good_log_sb();
	sb.map_width = 5;
	sb.map_pages = qs_fmt_map_pages(sb.qlc_size / QS_BLOCK_SIZE, 5);
	uint32_t per = qs_fmt_map_per_page(5);
	assert_int_equal(per, 811);
	struct qs_fmt_map_page *pg = calloc(1, sizeof(*pg)), c;
	pg->magic = QS_FMT_MAP_MAGIC;
	pg->version = QS_FMT_VERSION;
	pg->width = 5;
	pg->page = 1;
	pg->nentries = per;
	memset(pg->entries, 0xff, (size_t)per * 5); /* unmapped */
	uint64_t last_ok = (64u << 20) / 4096 - 1, out = last_ok + 1;
	uint64_t below_none = (1ull << 40) - 2;
	uint32_t at[] = {0, per / 2, per - 2, per - 1};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		uint8_t *x = pg->entries + (size_t)at[i] * 5;
		c = *pg;
		memcpy(c.entries + (x - pg->entries), &last_ok, 5);
		qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb));
		assert_int_equal(qs_fmt_map_check(&c, &sb, 1), QS_FMT_OK);
		memcpy(c.entries + (x - pg->entries), &out, 5);
		qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb));
		assert_int_equal(qs_fmt_map_check(&c, &sb, 1), QS_FMT_BAD_ENTRY);
		memcpy(c.entries + (x - pg->entries), &below_none, 5);
		qs_fmt_map_seal(&c, qs_fmt_rec_seed(&sb));
		assert_int_equal(qs_fmt_map_check(&c, &sb, 1), QS_FMT_BAD_ENTRY);
	}
	free(pg);
}

/* The clean state's header, band pages and valid-bitmap pages. */
static void test_clean_state_branches(void **st)
{
	struct qs_fmt_sb sb = good_log_sb();
	uint32_t seed = qs_fmt_rec_seed(&sb);
	struct qs_fmt_clean h = {.magic = QS_FMT_CLEAN_MAGIC, .version = QS_FMT_VERSION,
				 .size = sizeof(h), .generation = sb.generation, .nbands = 16,
				 .closes = 40, .mapped = 100, .open = {3, UINT64_MAX},
				 .wp = {32, 0}};
	struct qs_fmt_clean c;
#define CS(expr, want) do { c = h; expr; qs_fmt_clean_seal(&c, seed); \
		assert_int_equal(qs_fmt_clean_check(&c, &sb), want); } while (0)
	CS((void)0, QS_FMT_OK);
	CS(c.magic = QS_FMT_MAP_MAGIC, QS_FMT_BAD_MAGIC);
	CS(c.version = 2, QS_FMT_BAD_VERSION);
	c = h;
	qs_fmt_clean_seal(&c, seed + 1); /* an earlier format's */
	assert_int_equal(qs_fmt_clean_check(&c, &sb), QS_FMT_BAD_CRC);
	CS(c.size = 64, QS_FMT_BAD_SIZE);
	CS(c.generation--, QS_FMT_BAD_GENERATION); /* an earlier shutdown's */
	CS(c.nbands = 15, QS_FMT_BAD_COUNT);
	CS(c.mapped = 12289, QS_FMT_BAD_COUNT);	   /* more than the client's 12288 */
	CS(c.mapped = 12288, QS_FMT_OK);
	CS(c.open[1] = 16, QS_FMT_BAD_OPEN);	   /* no such band */
	CS(c.open[1] = 3, QS_FMT_BAD_OPEN);	   /* both streams in one */
	CS(c.wp[0] = 33, QS_FMT_BAD_OPEN);	   /* not whole IUs */
	CS(c.wp[0] = 1040, QS_FMT_BAD_OPEN);	   /* past the band */
	CS(c.wp[0] = 1024, QS_FMT_OK);		   /* full */
	CS(c.wp[1] = 16, QS_FMT_BAD_OPEN);	   /* no band, a write pointer */
	CS(c.reserved = 1, QS_FMT_BAD_RESERVED);
#undef CS
	struct qs_fmt_map_page *pg = calloc(1, sizeof(*pg)), p;
	pg->magic = QS_FMT_BAND_MAGIC;
	pg->version = QS_FMT_VERSION;
	pg->width = QS_FMT_BAND_ENTRY;
	pg->gen = h.generation;
	pg->nentries = 16;
	uint64_t v = 1024 | 40ull << 32; /* full, filled 40 bands ago */
	memcpy(pg->entries + 8, &v, 8);
#define BP(expr, want) do { p = *pg; expr; qs_fmt_map_seal(&p, seed); \
		assert_int_equal(qs_fmt_band_page_check(&p, &sb, &h, 0), want); } while (0)
	BP((void)0, QS_FMT_OK);
	BP(p.magic = QS_FMT_VALID_MAGIC, QS_FMT_BAD_MAGIC);
	BP(p.version = 2, QS_FMT_BAD_VERSION);
	BP(p.page = 1, QS_FMT_BAD_PAGE);
	BP(p.width = 4, QS_FMT_BAD_PAGE);
	BP(p.nentries = 15, QS_FMT_BAD_PAGE);
	BP(p.gen++, QS_FMT_BAD_GENERATION);
	BP(p.seq = 1, QS_FMT_BAD_RESERVED); /* a map page's field only */
	BP(p.entries[16 * 8] = 1, QS_FMT_BAD_RESERVED);
	v = 1025;
	BP(memcpy(p.entries, &v, 8), QS_FMT_BAD_ENTRY); /* more than a band holds */
	v = 41ull << 32;
	BP(memcpy(p.entries, &v, 8), QS_FMT_BAD_ENTRY); /* filled before the first fill */
	/* valid pages: 16384 blocks, 2048 bytes, one page */
	pg->magic = QS_FMT_VALID_MAGIC;
	pg->width = 1;
	pg->nentries = 2048;
	memset(pg->entries, 0, QS_FMT_MAP_BYTES);
	memset(pg->entries, 0xa5, 2048);
#undef BP
#define RP(no, expr, want) do { p = *pg; p.page = no; expr; qs_fmt_map_seal(&p, seed); \
		assert_int_equal(qs_fmt_valid_page_check(&p, &sb, &h, no), want); } while (0)
	RP(0, (void)0, QS_FMT_OK);
	RP(0, p.magic = QS_FMT_BAND_MAGIC, QS_FMT_BAD_MAGIC);
	RP(0, p.version = 3, QS_FMT_BAD_VERSION);
	RP(0, p.page = 1, QS_FMT_BAD_PAGE);
	RP(1, (void)0, QS_FMT_BAD_PAGE);	/* 2048 bytes: page 0 only */
	RP(0, p.nentries = 2047, QS_FMT_BAD_PAGE);
	RP(0, p.width = 4, QS_FMT_BAD_PAGE);
	RP(0, p.gen = 0, QS_FMT_BAD_GENERATION);
	RP(0, p.entries[2048] = 1, QS_FMT_BAD_RESERVED);
#undef RP
	free(pg);
}

/* P2L pages: band-relative pages of 1008 entries (63 IUs of 16 blocks),
 * the band's last page the 16 left; entries a client block or none. */
static void test_p2l_page_branches(void **st)
{
	struct qs_fmt_sb sb = good_log_sb();
	uint32_t seed = qs_fmt_rec_seed(&sb);
	assert_int_equal(qs_fmt_p2l_cover(4, 16), 1008);
	assert_int_equal(qs_fmt_p2l_band_pages(1024, 1008), 2);
	struct qs_fmt_map_page *pg = calloc(1, sizeof(*pg)), p;
	pg->magic = QS_FMT_P2L_MAGIC;
	pg->version = QS_FMT_VERSION;
	pg->width = 4;
	pg->gen = 7ull << 40;
	pg->nentries = 1008;
	memset(pg->entries, 0xff, 1008 * 4);
	uint32_t l = 12287; /* the last client block */
	memcpy(pg->entries + 40, &l, 4);
#define PP(no, expr, want) do { p = *pg; p.page = no; expr; qs_fmt_map_seal(&p, seed); \
		assert_int_equal(qs_fmt_p2l_check(&p, &sb, no), want); } while (0)
	PP(4, (void)0, QS_FMT_OK);	/* band 2, its first page */
	PP(4, p.magic = QS_FMT_MAP_MAGIC, QS_FMT_BAD_MAGIC);
	PP(4, p.version = 3, QS_FMT_BAD_VERSION);
	p = *pg;
	p.page = 4;
	qs_fmt_map_seal(&p, seed + 1); /* an earlier format's */
	assert_int_equal(qs_fmt_p2l_check(&p, &sb, 4), QS_FMT_BAD_CRC);
	PP(4, p.page = 5, QS_FMT_BAD_PAGE);
	PP(4, p.width = 8, QS_FMT_BAD_PAGE);
	PP(4, p.seq = 1, QS_FMT_BAD_RESERVED); /* a map page's field only */
	PP(5, (void)0, QS_FMT_BAD_PAGE);	/* a band's second page holds 16 */
	PP(5, (p.nentries = 16, memset(p.entries + 64, 0, QS_FMT_MAP_BYTES - 64)), QS_FMT_OK);
	l = 12288;
	PP(4, memcpy(p.entries + 40, &l, 4), QS_FMT_BAD_ENTRY); /* past the client */
	PP(4, p.entries[1008 * 4] = 1, QS_FMT_BAD_RESERVED);
#undef PP
	free(pg);
}

/* ---- through recovery ---- */

static void write_one(struct th *h, uint64_t lba, uint64_t ver)
{
	unsigned char *b = aligned_alloc(4096, 4096);
	tblk_fill(b, lba, ver);
	assert_int_equal(th_io(h, 'w', lba * 4096, 4096, b, 0), 0);
	free(b);
}

static uint64_t read_ver(struct th *h, uint64_t lba)
{
	unsigned char *b = aligned_alloc(4096, 4096);
	uint64_t v = ~0ull;
	assert_int_equal(th_io(h, 'r', lba * 4096, 4096, b, 0), 0);
	assert_int_equal(tblk_decode(b, lba, &v), 0);
	free(b);
	return v;
}

static void test_recovery_corruption(void **st)
{
	struct th h;
	assert_int_equal(th_init(&h, FAST, 16 << 20, 3), 0);
	assert_int_equal(th_open(&h, true), 0);
	write_one(&h, 5, 1);
	write_one(&h, 6, 2);
	write_one(&h, 7, 3);
	assert_int_equal(th_io(&h, 'f', 0, 0, NULL, 0), 0);
	th_crash(&h, true);

	/* the newest superblock copy corrupted: the other copy still opens */
	struct qs_fmt_sb *sb0 = (struct qs_fmt_sb *)h.fast.durable;
	struct qs_fmt_sb *sb1 = (struct qs_fmt_sb *)(h.fast.durable + 4096);
	struct qs_fmt_sb *newest = sb0->generation > sb1->generation ? sb0 : sb1;
	struct qs_fmt_sb saved = *newest;
	newest->magic = 0;
	memcpy(h.fast.cur, h.fast.durable, h.fast.size);
	assert_int_equal(th_open(&h, false), 0);
	assert_int_equal(read_ver(&h, 6), 2);
	th_crash(&h, false);

	/* a copy with a bad field: recovery's warning names that field */
	struct qs_fmt_sb *bad = qs_fmt_sb_check(sb1, FAST) == QS_FMT_OK ? sb0 : sb1;
	bad->segment_blocks = 1;
	qs_fmt_sb_seal(bad);
	memcpy(h.fast.cur, h.fast.durable, h.fast.size);
	h.env.warnings[0] = 0;
	assert_int_equal(th_open(&h, false), 0);
	assert_non_null(strstr(h.env.warnings, "segment_blocks out of range"));
	th_crash(&h, false);

	/* both copies bad (one bad CRC, one bad version): refuses, EBADMSG */
	sb0 = (struct qs_fmt_sb *)h.fast.durable;
	sb1 = (struct qs_fmt_sb *)(h.fast.durable + 4096);
	struct qs_fmt_sb keep0 = *sb0, keep1 = *sb1;
	sb0->tail_seq ^= 1;
	sb1->version = 99;
	memcpy(h.fast.cur, h.fast.durable, h.fast.size);
	assert_int_equal(th_open(&h, false), -EBADMSG);
	/* both of the format before this one: refused, naming both versions
	 * and what to do */
	*sb0 = keep0;
	*sb1 = keep1;
	sb0->version = sb1->version = QS_FMT_VERSION - 1;
	qs_fmt_sb_seal(sb0);
	qs_fmt_sb_seal(sb1);
	memcpy(h.fast.cur, h.fast.durable, h.fast.size);
	h.env.warnings[0] = 0;
	assert_int_equal(th_open(&h, false), -EBADMSG);
	char want[128];
	snprintf(want, sizeof(want), "the log is of format version %u and this build reads "
		 "version %u only: drain it", QS_FMT_VERSION - 1, QS_FMT_VERSION);
	if (!strstr(h.env.warnings, want))
		fail_msg("'%s' not in: %s", want, h.env.warnings);
	*sb0 = keep0;
	*sb1 = keep1;
	(void)saved;

	/* a record's data corrupted: the log ends before it */
	struct qs_fmt_sb *best = sb0->generation > sb1->generation ? sb0 : sb1;
	uint64_t blk = QS_FMT_LOG_START + best->tail_pos % best->log_blocks;
	struct qs_fmt_rec *first = (struct qs_fmt_rec *)(h.fast.durable + blk * 4096);
	assert_int_equal(first->magic, QS_FMT_REC_MAGIC);
	/* find the record holding lba 7 and flip a data byte */
	uint64_t pos = best->tail_pos;
	for (int i = 0; i < 8; i++) {
		struct qs_fmt_rec *r = (struct qs_fmt_rec *)(h.fast.durable +
			(QS_FMT_LOG_START + pos % best->log_blocks) * 4096);
		if (r->magic != QS_FMT_REC_MAGIC)
			break;
		if (r->nextents && r->ext[0].lba == 7) {
			h.fast.durable[(QS_FMT_LOG_START + (pos + 1) % best->log_blocks) * 4096 + 100] ^= 1;
			break;
		}
		pos += 1 + r->nblocks;
	}
	memcpy(h.fast.cur, h.fast.durable, h.fast.size);
	assert_int_equal(th_open(&h, false), 0);
	assert_int_equal(read_ver(&h, 5), 1);
	assert_int_equal(read_ver(&h, 6), 2);
	assert_int_equal(read_ver(&h, 7), 0); /* its record was rejected */
	assert_int_equal(th_close(&h), 0);

	/* a log formatted for another IU size is refused with EINVAL */
	h.conf.iu_bytes = 131072;
	assert_int_equal(th_open(&h, false), -EINVAL);
	th_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_branches),
		cmocka_unit_test(test_rec_branches),
		cmocka_unit_test(test_log_sb_branches),
		cmocka_unit_test(test_log_rec_branches),
		cmocka_unit_test(test_map_page_branches),
		cmocka_unit_test(test_map_page_width5),
		cmocka_unit_test(test_clean_state_branches),
		cmocka_unit_test(test_p2l_page_branches),
		cmocka_unit_test(test_recovery_corruption),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
