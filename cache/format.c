/* SPDX-License-Identifier: MIT */
/* Sealing and validation of the on-disk structures (docs/FORMAT.md). */
#include <stdbool.h>
#include <string.h>

#include "qlcshape/crc32c.h"
#include "qlcshape/format.h"
#include "qlcshape/vol.h"

const char *qs_fmt_status_str(enum qs_fmt_status st)
{
	switch (st) {
	case QS_FMT_OK: return "valid";
	case QS_FMT_BAD_MAGIC: return "bad magic number";
	case QS_FMT_BAD_VERSION: return "unsupported format version";
	case QS_FMT_BAD_CRC: return "checksum mismatch";
	case QS_FMT_BAD_SIZE: return "bad structure size";
	case QS_FMT_BAD_IU_BYTES: return "iu_bytes out of range";
	case QS_FMT_BAD_SEGMENT_BLOCKS: return "segment_blocks out of range";
	case QS_FMT_BAD_LOG_START: return "log_start is not the first log block";
	case QS_FMT_BAD_LOG_BLOCKS: return "log_blocks out of range";
	case QS_FMT_BAD_FAST_SIZE: return "fast_size is not the log device's size";
	case QS_FMT_BAD_QLC_SIZE: return "qlc_size out of range";
	case QS_FMT_BAD_PLACEMENT: return "unknown placement";
	case QS_FMT_BAD_BAND: return "band_blocks or qlc_phys_size out of range";
	case QS_FMT_BAD_MAP: return "map region out of range";
	case QS_FMT_BAD_FLAGS: return "unknown flags";
	case QS_FMT_BAD_TAIL: return "tail_pos, tail_seq, epoch or generation out of range";
	case QS_FMT_BAD_HEAD_POS: return "head_pos out of range";
	case QS_FMT_BAD_HEAD_SEQ: return "head_seq out of range";
	case QS_FMT_BAD_RESERVED: return "reserved field not zero";
	case QS_FMT_BAD_POSITION: return "record position out of place";
	case QS_FMT_BAD_NEXTENTS: return "nextents out of range";
	case QS_FMT_BAD_EXTENT_KIND: return "bad extent kind";
	case QS_FMT_BAD_EXTENT_RANGE: return "extent outside the client device";
	case QS_FMT_BAD_EXTENT_PHYS: return "map extent's QLC blocks out of range";
	case QS_FMT_BAD_LENGTH: return "bad record length";
	case QS_FMT_BAD_PAGE: return "page number, width or count wrong";
	case QS_FMT_BAD_SEQ: return "map page sequence number out of range";
	case QS_FMT_BAD_ENTRY: return "entry out of range";
	case QS_FMT_BAD_GENERATION: return "generation is not the superblock's";
	case QS_FMT_BAD_COUNT: return "band count or mapped blocks out of range";
	case QS_FMT_BAD_OPEN: return "open band or write pointer out of range";
	}
	return "unknown status";
}

void qs_fmt_sb_seal(struct qs_fmt_sb *sb)
{
	sb->crc = qs_crc32c(0, sb, offsetof(struct qs_fmt_sb, crc));
}

uint32_t qs_fmt_rec_seed(const struct qs_fmt_sb *sb)
{
	uint32_t seed;
	memcpy(&seed, sb->uuid, sizeof(seed));
	return seed;
}

void qs_fmt_rec_seal(struct qs_fmt_rec *rec, uint32_t seed)
{
	rec->crc = qs_crc32c(seed, rec, offsetof(struct qs_fmt_rec, crc));
}

static int is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* The band fields of a log-placement superblock (all zero in place). */
static enum qs_fmt_status sb_check_band(const struct qs_fmt_sb *sb)
{
	if (sb->placement == QS_FMT_PLACE_INPLACE)
		return sb->band_blocks || sb->qlc_phys_size ? QS_FMT_BAD_BAND : QS_FMT_OK;
	uint32_t iu_blocks = sb->iu_bytes / QS_BLOCK_SIZE;
	uint64_t band_bytes = (uint64_t)sb->band_blocks * QS_BLOCK_SIZE;
	if (sb->band_blocks < 2 * iu_blocks || sb->band_blocks % iu_blocks ||
	    sb->band_blocks > (1u << 24) || sb->qlc_phys_size % band_bytes ||
	    sb->qlc_phys_size / band_bytes < 4 || sb->qlc_phys_size <= sb->qlc_size)
		return QS_FMT_BAD_BAND;
	return QS_FMT_OK;
}

static enum qs_fmt_status sb_check_map(const struct qs_fmt_sb *sb, uint64_t fast_size)
{
	if (sb->placement == QS_FMT_PLACE_INPLACE)
		return sb->map_width || sb->map_start || sb->map_pages || sb->map_seq ||
			       sb->map_gen ? QS_FMT_BAD_MAP : QS_FMT_OK;
	uint64_t phys = sb->qlc_phys_size / QS_BLOCK_SIZE;
	uint32_t width = sb->map_width;
	if (!qs_fmt_map_width_ok(width, phys))
		return QS_FMT_BAD_MAP;
	/* The map region, then the clean state (sb_check_band came first:
	 * band_blocks is not zero). */
	uint64_t after = qs_fmt_plc_blocks(sb->qlc_size / QS_BLOCK_SIZE, phys, sb->band_blocks,
					   sb->iu_bytes / QS_BLOCK_SIZE, width);
	if (sb->map_pages != qs_fmt_map_pages(sb->qlc_size / QS_BLOCK_SIZE, width) ||
	    sb->map_start < sb->log_start + sb->log_blocks ||
	    sb->map_start > fast_size / QS_BLOCK_SIZE ||
	    after > fast_size / QS_BLOCK_SIZE - sb->map_start ||
	    sb->map_seq >= QS_FMT_MAX_POS || sb->map_gen >= QS_FMT_MAX_POS ||
	    sb->map_seq < sb->tail_seq)
		return QS_FMT_BAD_MAP;
	return QS_FMT_OK;
}

static enum qs_fmt_status sb_check_positions(const struct qs_fmt_sb *sb)
{
	/* Far from wrapping: positions and sequence numbers only grow. */
	if (sb->tail_pos >= QS_FMT_MAX_POS || sb->tail_seq >= QS_FMT_MAX_POS ||
	    sb->epoch >= QS_FMT_MAX_POS || sb->generation >= QS_FMT_MAX_POS)
		return QS_FMT_BAD_TAIL;
	/* head_* mean something only in a clean shutdown's copy */
	if ((sb->flags & QS_SB_CLEAN) &&
	    (sb->head_pos < sb->tail_pos || sb->head_pos - sb->tail_pos > sb->log_blocks))
		return QS_FMT_BAD_HEAD_POS;
	if ((sb->flags & QS_SB_CLEAN) &&
	    (sb->head_seq < sb->tail_seq || sb->head_seq >= QS_FMT_MAX_POS))
		return QS_FMT_BAD_HEAD_SEQ;
	return QS_FMT_OK;
}

enum qs_fmt_status qs_fmt_sb_check(const struct qs_fmt_sb *sb, uint64_t fast_size)
{
	enum qs_fmt_status st;
	if (sb->magic != QS_FMT_SB_MAGIC)
		return QS_FMT_BAD_MAGIC;
	if (sb->version != QS_FMT_VERSION)
		return QS_FMT_BAD_VERSION;
	if (sb->crc != qs_crc32c(0, sb, offsetof(struct qs_fmt_sb, crc)))
		return QS_FMT_BAD_CRC;
	if (sb->size != sizeof(*sb))
		return QS_FMT_BAD_SIZE;
	if (sb->iu_bytes < QS_BLOCK_SIZE || !is_pow2(sb->iu_bytes) || sb->iu_bytes > (1u << 24))
		return QS_FMT_BAD_IU_BYTES;
	if (sb->segment_blocks < 2 || sb->segment_blocks > (1u << 20))
		return QS_FMT_BAD_SEGMENT_BLOCKS;
	if (sb->log_start != QS_FMT_LOG_START)
		return QS_FMT_BAD_LOG_START;
	/* At least four segments: two are kept for header-only records, and
	 * data needs room beside the record being checkpointed. */
	if (sb->log_blocks % sb->segment_blocks ||
	    sb->log_blocks < (uint64_t)QS_FMT_MIN_LOG_SEGMENTS * sb->segment_blocks ||
	    sb->log_blocks > 0x7fffffffull ||
	    (sb->log_start + sb->log_blocks) * QS_BLOCK_SIZE > fast_size)
		return QS_FMT_BAD_LOG_BLOCKS;
	if (sb->fast_size != fast_size)
		return QS_FMT_BAD_FAST_SIZE;
	if (sb->qlc_size == 0 || sb->qlc_size % sb->iu_bytes)
		return QS_FMT_BAD_QLC_SIZE;
	if (sb->placement > QS_FMT_PLACE_LOG)
		return QS_FMT_BAD_PLACEMENT;
	if ((st = sb_check_band(sb)) != QS_FMT_OK)
		return st;
	if ((st = sb_check_map(sb, fast_size)) != QS_FMT_OK)
		return st;
	/* The clean state exists in log placement only, and means something
	 * only in a clean shutdown's copy. */
	if ((sb->flags & ~(QS_SB_CLEAN | QS_SB_CLEAN_STATE)) ||
	    ((sb->flags & QS_SB_CLEAN_STATE) &&
	     (!(sb->flags & QS_SB_CLEAN) || sb->placement != QS_FMT_PLACE_LOG)))
		return QS_FMT_BAD_FLAGS;
	if ((st = sb_check_positions(sb)) != QS_FMT_OK)
		return st;
	if (sb->reserved)
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
}

/* Is kind allowed in a log of this placement? */
static int kind_ok(const struct qs_fmt_sb *sb, uint32_t kind)
{
	bool log = sb->placement == QS_FMT_PLACE_LOG;
	switch (kind) {
	case QS_EXT_DATA: return 1;
	case QS_EXT_ZERO: case QS_EXT_INVAL: return !log;
	case QS_EXT_MAP: case QS_EXT_MOVE: case QS_EXT_TRIM: return log;
	}
	return 0;
}

/* The payload of the MAP or MOVE extent x found at position pos. */
static int phys_ok(const struct qs_fmt_sb *sb, const struct qs_fmt_extent *x,
		   const struct qs_fmt_ext_phys *py, uint64_t pos)
{
	uint64_t phys = sb->qlc_phys_size / QS_BLOCK_SIZE;
	if (py->phys >= phys || x->nblocks > phys - py->phys)
		return 0;
	if (x->kind == QS_EXT_MAP) /* the copy destaged lies before this record */
		return py->from < pos && x->nblocks <= pos - py->from;
	return py->from < phys && x->nblocks <= phys - py->from;
}

enum qs_fmt_status qs_fmt_rec_check(const struct qs_fmt_rec *rec,
				    const struct qs_fmt_sb *sb, uint64_t pos)
{
	if (rec->magic != QS_FMT_REC_MAGIC)
		return QS_FMT_BAD_MAGIC;
	if (rec->version != QS_FMT_VERSION)
		return QS_FMT_BAD_VERSION;
	if (rec->crc != qs_crc32c(qs_fmt_rec_seed(sb), rec, offsetof(struct qs_fmt_rec, crc)))
		return QS_FMT_BAD_CRC;
	if (rec->pos != pos)
		return QS_FMT_BAD_POSITION;
	if (rec->flags & ~QS_REC_VOID)
		return QS_FMT_BAD_FLAGS;
	if (rec->reserved || rec->pad[0] || rec->pad[1] || rec->pad[2])
		return QS_FMT_BAD_RESERVED;
	if (rec->nextents > QS_FMT_REC_MAX_EXTENTS)
		return QS_FMT_BAD_NEXTENTS;
	uint64_t dev_blocks = sb->qlc_size / QS_BLOCK_SIZE;
	uint64_t data = 0;
	for (uint32_t i = 0; i < rec->nextents; i++) {
		const struct qs_fmt_extent *x = &rec->ext[i];
		if (!kind_ok(sb, x->kind))
			return QS_FMT_BAD_EXTENT_KIND;
		if (x->nblocks == 0 || x->lba >= dev_blocks || x->nblocks > dev_blocks - x->lba)
			return QS_FMT_BAD_EXTENT_RANGE;
		if (x->kind == QS_EXT_DATA)
			data += x->nblocks;
		if (x->kind == QS_EXT_MAP || x->kind == QS_EXT_MOVE) {
			struct qs_fmt_ext_phys py;
			if (++i >= rec->nextents)
				return QS_FMT_BAD_EXTENT_PHYS;
			memcpy(&py, &rec->ext[i], sizeof(py));
			if (!phys_ok(sb, x, &py, pos))
				return QS_FMT_BAD_EXTENT_PHYS;
		}
	}
	uint64_t seg_off = pos % sb->segment_blocks;
	if ((!(rec->flags & QS_REC_VOID) && data != rec->nblocks) ||
	    seg_off + 1 + rec->nblocks > sb->segment_blocks)
		return QS_FMT_BAD_LENGTH;
	return QS_FMT_OK;
}

void qs_fmt_map_seal(struct qs_fmt_map_page *pg, uint32_t seed)
{
	pg->crc = qs_crc32c(seed, pg, offsetof(struct qs_fmt_map_page, crc));
}

/*
 * Every entry unmapped or below phys. One loop per width, without a branch
 * inside, so that it vectorizes: recovery checks both slots of every page,
 * two entries per client block, and this was the largest part of a clean
 * open's CPU.
 */
static bool map_entries_in(const struct qs_fmt_map_page *pg, uint64_t phys)
{
	/* entries sits at offset 36: an 8-byte entry is not aligned, so
	 * each is read with memcpy of a constant size (one plain load).
	 * Unmapped is all ones, so v + 1 wraps to 0: v + 1 > phys is true
	 * exactly for a mapped entry outside the bands (phys < 2^32 - 1 with
	 * 4-byte entries: the superblock check). */
	const uint8_t *b = pg->entries;
	uint32_t bad = 0;
	if (pg->width == 4) {
		for (uint32_t i = 0; i < pg->nentries; i++) {
			uint32_t v;
			memcpy(&v, b + (size_t)i * 4, 4);
			bad |= (uint32_t)(v + 1) > phys;
		}
	} else if (pg->width == 5) {
		/* Little-endian 40 bits; unmapped + 1 wraps to 0 in 40 bits.
		 * Each entry is read with an 8-byte load and masked: a 5-byte
		 * memcpy compiles to byte loads, ten times slower (4.8 against
		 * 0.5 us a page here), and every page a lookup reads is checked
		 * (1.5 pages a client write over a whole drive). The loads stay
		 * inside the page: the last entry is read with 5 bytes. */
		uint32_t n = pg->nentries, i = 0;
		for (; i + 1 < n; i++) {
			uint64_t v;
			memcpy(&v, b + (size_t)i * 5, 8);
			bad |= ((v + 1) & QS_FMT_MAP_NONE5) > phys;
		}
		for (; i < n; i++) {
			uint64_t v = 0;
			memcpy(&v, b + (size_t)i * 5, 5);
			bad |= ((v + 1) & QS_FMT_MAP_NONE5) > phys;
		}
	} else {
		for (uint32_t i = 0; i < pg->nentries; i++) {
			uint64_t v;
			memcpy(&v, b + (size_t)i * 8, 8);
			bad |= v + 1 > phys;
		}
	}
	return !bad;
}

/*
 * What map, band and valid-bitmap pages share, in their order: magic,
 * version, CRC (seeded as records), then page number, width and count for
 * a table of total entries of width bytes.
 */
static enum qs_fmt_status page_head_check(const struct qs_fmt_map_page *pg,
					  const struct qs_fmt_sb *sb, uint32_t magic,
					  uint32_t width, uint64_t total, uint64_t page_no)
{
	if (pg->magic != magic)
		return QS_FMT_BAD_MAGIC;
	if (pg->version != QS_FMT_VERSION)
		return QS_FMT_BAD_VERSION;
	if (pg->crc != qs_crc32c(qs_fmt_rec_seed(sb), pg, offsetof(struct qs_fmt_map_page, crc)))
		return QS_FMT_BAD_CRC;
	uint32_t per = width ? qs_fmt_map_per_page(width) : 0;
	if (!per || pg->page != page_no || pg->width != width || page_no * per >= total)
		return QS_FMT_BAD_PAGE;
	uint64_t left = total - page_no * per;
	if (pg->nentries != (left < per ? left : per))
		return QS_FMT_BAD_PAGE;
	return QS_FMT_OK;
}

/* The bytes after a page's entries are zero. */
static bool page_tail_zero(const struct qs_fmt_map_page *pg)
{
	for (size_t b = (size_t)pg->nentries * pg->width; b < QS_FMT_MAP_BYTES; b++)
		if (pg->entries[b])
			return false;
	return true;
}

enum qs_fmt_status qs_fmt_map_check(const struct qs_fmt_map_page *pg,
				    const struct qs_fmt_sb *sb, uint64_t page_no)
{
	/* sb passed its check: map_pages is the client blocks' page count */
	enum qs_fmt_status st = page_head_check(pg, sb, QS_FMT_MAP_MAGIC, sb->map_width,
						sb->qlc_size / QS_BLOCK_SIZE, page_no);
	if (st != QS_FMT_OK)
		return st;
	if (pg->seq >= QS_FMT_MAX_POS)
		return QS_FMT_BAD_SEQ;
	if (!map_entries_in(pg, sb->qlc_phys_size / QS_BLOCK_SIZE))
		return QS_FMT_BAD_ENTRY;
	if (!page_tail_zero(pg))
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
}

void qs_fmt_clean_seal(struct qs_fmt_clean *c, uint32_t seed)
{
	c->crc = qs_crc32c(seed, c, offsetof(struct qs_fmt_clean, crc));
}

enum qs_fmt_status qs_fmt_clean_check(const struct qs_fmt_clean *c, const struct qs_fmt_sb *sb)
{
	if (c->magic != QS_FMT_CLEAN_MAGIC)
		return QS_FMT_BAD_MAGIC;
	if (c->version != QS_FMT_VERSION)
		return QS_FMT_BAD_VERSION;
	if (c->crc != qs_crc32c(qs_fmt_rec_seed(sb), c, offsetof(struct qs_fmt_clean, crc)))
		return QS_FMT_BAD_CRC;
	if (c->size != sizeof(*c))
		return QS_FMT_BAD_SIZE;
	if (c->generation != sb->generation)
		return QS_FMT_BAD_GENERATION;
	uint64_t phys = sb->qlc_phys_size / QS_BLOCK_SIZE;
	if (!sb->band_blocks || c->nbands != phys / sb->band_blocks ||
	    c->mapped > sb->qlc_size / QS_BLOCK_SIZE)
		return QS_FMT_BAD_COUNT;
	uint32_t iu = sb->iu_bytes / QS_BLOCK_SIZE;
	for (int s = 0; s < 2; s++) {
		bool none = c->open[s] == UINT64_MAX;
		if ((!none && c->open[s] >= c->nbands) || (none && c->wp[s]) ||
		    c->wp[s] > sb->band_blocks || !iu || c->wp[s] % iu)
			return QS_FMT_BAD_OPEN;
	}
	if (c->open[0] != UINT64_MAX && c->open[0] == c->open[1])
		return QS_FMT_BAD_OPEN;
	if (c->reserved)
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
}

/* What band and valid-bitmap pages share: magic, version, CRC, page number,
 * width and count of total entries, generation, zero past the entries. */
static enum qs_fmt_status tab_check(const struct qs_fmt_map_page *pg, const struct qs_fmt_sb *sb,
				    const struct qs_fmt_clean *c, uint32_t magic,
				    uint32_t width, uint64_t total, uint64_t page_no)
{
	enum qs_fmt_status st = page_head_check(pg, sb, magic, width, total, page_no);
	if (st != QS_FMT_OK)
		return st;
	if (pg->gen != c->generation)
		return QS_FMT_BAD_GENERATION;
	if (pg->seq || !page_tail_zero(pg))
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
}

enum qs_fmt_status qs_fmt_band_page_check(const struct qs_fmt_map_page *pg,
					  const struct qs_fmt_sb *sb,
					  const struct qs_fmt_clean *c, uint64_t page_no)
{
	enum qs_fmt_status st = tab_check(pg, sb, c, QS_FMT_BAND_MAGIC, QS_FMT_BAND_ENTRY,
					  c->nbands, page_no);
	if (st != QS_FMT_OK)
		return st;
	for (uint32_t i = 0; i < pg->nentries; i++) {
		uint64_t v;
		memcpy(&v, pg->entries + (size_t)i * QS_FMT_BAND_ENTRY, sizeof(v));
		if ((uint32_t)v > sb->band_blocks || (v >> 32) > c->closes)
			return QS_FMT_BAD_ENTRY;
	}
	return QS_FMT_OK;
}

enum qs_fmt_status qs_fmt_valid_page_check(const struct qs_fmt_map_page *pg,
					   const struct qs_fmt_sb *sb,
					   const struct qs_fmt_clean *c, uint64_t page_no)
{
	uint64_t phys = sb->qlc_phys_size / QS_BLOCK_SIZE;
	enum qs_fmt_status st = tab_check(pg, sb, c, QS_FMT_VALID_MAGIC, 1, (phys + 7) / 8,
					  page_no);
	if (st != QS_FMT_OK)
		return st;
	/* The last byte of the bitmap: no bit past the last block. */
	if ((page_no + 1) * QS_FMT_MAP_BYTES >= (phys + 7) / 8 && phys % 8 &&
	    (pg->entries[pg->nentries - 1] >> (phys % 8)))
		return QS_FMT_BAD_ENTRY;
	return QS_FMT_OK;
}

uint64_t qs_fmt_plc_blocks(uint64_t lbas, uint64_t phys, uint32_t band_blocks,
			   uint32_t iu_blocks, uint32_t width)
{
	uint32_t cover = qs_fmt_p2l_cover(width, iu_blocks ? iu_blocks : 1);
	uint64_t p2l = band_blocks && cover ? phys / band_blocks *
						      qs_fmt_p2l_band_pages(band_blocks, cover) : 0;
	return 2 * qs_fmt_map_pages(lbas, width) + 2 * p2l +
	       (band_blocks ? qs_fmt_clean_blocks(phys, band_blocks) : 0);
}

enum qs_fmt_status qs_fmt_p2l_check(const struct qs_fmt_map_page *pg, const struct qs_fmt_sb *sb,
				    uint64_t page_no)
{
	uint32_t width = sb->map_width, iu = sb->iu_bytes / QS_BLOCK_SIZE;
	if (pg->magic != QS_FMT_P2L_MAGIC)
		return QS_FMT_BAD_MAGIC;
	if (pg->version != QS_FMT_VERSION)
		return QS_FMT_BAD_VERSION;
	if (pg->crc != qs_crc32c(qs_fmt_rec_seed(sb), pg, offsetof(struct qs_fmt_map_page, crc)))
		return QS_FMT_BAD_CRC;
	uint32_t cover = width && iu ? qs_fmt_p2l_cover(width, iu) : 0;
	uint32_t per_band = cover ? qs_fmt_p2l_band_pages(sb->band_blocks, cover) : 0;
	if (!per_band || pg->page != page_no || pg->width != width)
		return QS_FMT_BAD_PAGE;
	if (pg->nentries != qs_fmt_p2l_nentries(page_no, sb->band_blocks, cover))
		return QS_FMT_BAD_PAGE;
	if (!map_entries_in(pg, sb->qlc_size / QS_BLOCK_SIZE))
		return QS_FMT_BAD_ENTRY;
	if (pg->seq || !page_tail_zero(pg))
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
}
