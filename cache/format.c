/* SPDX-License-Identifier: MIT */
/* Sealing and validation of the on-disk structures (docs/FORMAT.md). */
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
	case QS_FMT_BAD_FLAGS: return "unknown flags";
	case QS_FMT_BAD_HEAD_POS: return "head_pos out of range";
	case QS_FMT_BAD_HEAD_SEQ: return "head_seq before tail_seq";
	case QS_FMT_BAD_RESERVED: return "reserved field not zero";
	case QS_FMT_BAD_POSITION: return "record position out of place";
	case QS_FMT_BAD_NEXTENTS: return "nextents out of range";
	case QS_FMT_BAD_EXTENT_KIND: return "bad extent kind";
	case QS_FMT_BAD_EXTENT_RANGE: return "extent outside the client device";
	case QS_FMT_BAD_LENGTH: return "bad record length";
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

enum qs_fmt_status qs_fmt_sb_check(const struct qs_fmt_sb *sb, uint64_t fast_size)
{
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
	if (sb->log_blocks == 0 || sb->log_blocks % sb->segment_blocks ||
	    sb->log_blocks > (1ull << 40) ||
	    (sb->log_start + sb->log_blocks) * QS_BLOCK_SIZE > fast_size)
		return QS_FMT_BAD_LOG_BLOCKS;
	if (sb->fast_size != fast_size)
		return QS_FMT_BAD_FAST_SIZE;
	if (sb->qlc_size == 0 || sb->qlc_size % sb->iu_bytes)
		return QS_FMT_BAD_QLC_SIZE;
	if (sb->flags & ~QS_SB_CLEAN)
		return QS_FMT_BAD_FLAGS;
	/* head_* mean something only in a clean shutdown's copy */
	if ((sb->flags & QS_SB_CLEAN) && (sb->head_pos < sb->tail_pos ||
					  sb->head_pos - sb->tail_pos > sb->log_blocks))
		return QS_FMT_BAD_HEAD_POS;
	if ((sb->flags & QS_SB_CLEAN) && sb->head_seq < sb->tail_seq)
		return QS_FMT_BAD_HEAD_SEQ;
	if (sb->reserved[0] || sb->reserved[1])
		return QS_FMT_BAD_RESERVED;
	return QS_FMT_OK;
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
		if (x->kind < QS_EXT_DATA || x->kind > QS_EXT_INVAL)
			return QS_FMT_BAD_EXTENT_KIND;
		if (x->nblocks == 0 || x->lba >= dev_blocks || x->nblocks > dev_blocks - x->lba)
			return QS_FMT_BAD_EXTENT_RANGE;
		if (x->kind == QS_EXT_DATA)
			data += x->nblocks;
	}
	uint64_t seg_off = pos % sb->segment_blocks;
	if ((!(rec->flags & QS_REC_VOID) && data != rec->nblocks) ||
	    seg_off + 1 + rec->nblocks > sb->segment_blocks)
		return QS_FMT_BAD_LENGTH;
	return QS_FMT_OK;
}
