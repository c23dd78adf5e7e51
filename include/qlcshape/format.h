/* SPDX-License-Identifier: MIT */
/*
 * On-disk format of the fast-tier log device. docs/FORMAT.md describes every
 * byte; the static_asserts below pin the layout so that a change to a struct
 * cannot silently change the format.
 *
 * All integers are little-endian (the engine builds only on little-endian
 * hosts, checked below). Every structure carries a magic number, a format
 * version and a CRC32C stored last, validated in that order, then the range
 * of every field, each failure with its own status.
 *
 * Device layout, in 4 KiB blocks:
 *   block 0            superblock copy 0
 *   block 1            superblock copy 1
 *   blocks 2 ..        the log: log_blocks blocks, a whole number of segments
 *   map_start ..       log placement only: the map region, two copies (slots)
 *                      of each of map_pages map pages, page p at
 *                      map_start + 2p + slot
 *   map_start + 2 map_pages ..
 *                      log placement only: the P2L region, two slots of each
 *                      P2L page (which client block each QLC block of a band
 *                      was written for), page q at p2l_start + 2q + slot
 *   p2l_start + 2 p2l_pages ..
 *                      log placement only: the clean state, written by a
 *                      clean shutdown (struct qs_fmt_clean, then the band
 *                      pages, then the valid-bitmap pages)
 */
#ifndef QLCSHAPE_FORMAT_H
#define QLCSHAPE_FORMAT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "qlcshape's on-disk format is little-endian; big-endian hosts are not supported"
#endif

#define QS_FMT_VERSION 6u
#define QS_FMT_SB_MAGIC 0x42535351u  /* "QSSB" */
#define QS_FMT_REC_MAGIC 0x524c5351u /* "QSLR" */
#define QS_FMT_MAP_MAGIC 0x504d5351u /* "QSMP" */
#define QS_FMT_CLEAN_MAGIC 0x53435351u /* "QSCS" */
#define QS_FMT_BAND_MAGIC 0x50425351u  /* "QSBP" */
#define QS_FMT_VALID_MAGIC 0x50565351u /* "QSVP" */
#define QS_FMT_P2L_MAGIC 0x50505351u   /* "QSPP" */
#define QS_FMT_SB_COPIES 2u
#define QS_FMT_LOG_START 2u /* first log block */

#define QS_SB_CLEAN 0x1u /* written by a clean shutdown; head_* are valid */
/* With QS_SB_CLEAN, log placement only: the clean state region holds the
 * valid bitmap and the bands as of this superblock's generation. */
#define QS_SB_CLEAN_STATE 0x2u

/* Where destaged data goes on the QLC (struct qs_fmt_sb.placement). */
#define QS_FMT_PLACE_INPLACE 0u /* each LBA at its home: the QLC is the client's image */
#define QS_FMT_PLACE_LOG 1u	/* appended into bands; a map says where each LBA is */

/* Bounds that keep every accepted geometry able to make progress. */
#define QS_FMT_MIN_LOG_SEGMENTS 4u  /* two are kept for header-only records */
#define QS_FMT_MAX_POS (1ull << 62) /* positions and seqs stay far from wrapping */

/* Superblock: the first 176 bytes of blocks 0 and 1; the rest is zero. */
struct qs_fmt_sb {
	uint32_t magic;		 /* QS_FMT_SB_MAGIC */
	uint16_t version;	 /* QS_FMT_VERSION */
	uint16_t size;		 /* sizeof(struct qs_fmt_sb) */
	uint64_t generation;	 /* +1 per write; copy = generation % 2 */
	uint8_t uuid[16];	 /* identity of this log */
	uint64_t fast_size;	 /* bytes of the log device at format */
	uint64_t qlc_size;	 /* client-visible bytes */
	uint32_t iu_bytes;	 /* QLC indirection unit */
	uint32_t segment_blocks; /* log segment size */
	uint64_t log_start;	 /* first log block (QS_FMT_LOG_START) */
	uint64_t log_blocks;	 /* log size, multiple of segment_blocks */
	uint64_t tail_pos;	 /* monotonic block position of the oldest record */
	uint64_t tail_seq;	 /* its sequence number */
	uint64_t epoch;		 /* +1 at every open; records carry it */
	uint64_t head_pos;	 /* QS_SB_CLEAN: where the next record goes */
	uint64_t head_seq;	 /* QS_SB_CLEAN: its sequence number */
	uint32_t flags;		 /* QS_SB_* */
	uint32_t placement;	 /* QS_FMT_PLACE_* */
	/* Log placement only (zero in place): */
	uint32_t band_blocks;	 /* band size in 4 KiB blocks, whole IUs */
	uint32_t map_width;	 /* bytes per map entry: 4, or 8 for > 2^32 blocks */
	uint64_t qlc_phys_size;	 /* QLC bytes holding bands (whole bands) */
	uint64_t map_start;	 /* first block of the map region */
	uint64_t map_pages;	 /* map pages; the region is 2 * map_pages blocks */
	uint64_t map_seq;	 /* the map pages hold every record before this seq */
	uint64_t map_gen;	 /* map page copies of a later gen are not committed */
	uint32_t reserved;	 /* zero */
	uint32_t crc;		 /* CRC32C of bytes [0, offsetof(crc)) */
};
static_assert(sizeof(struct qs_fmt_sb) == 176, "superblock size");
static_assert(offsetof(struct qs_fmt_sb, generation) == 8, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, uuid) == 16, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, iu_bytes) == 48, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, tail_pos) == 72, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, epoch) == 88, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, flags) == 112, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, placement) == 116, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, qlc_phys_size) == 128, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, map_pages) == 144, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, map_seq) == 152, "sb layout");
static_assert(offsetof(struct qs_fmt_sb, crc) == 172, "sb layout");

/* Extent kinds in a log record. */
enum qs_fmt_ext_kind {
	QS_EXT_DATA = 1,  /* nblocks of data follow in the record's data area */
	QS_EXT_ZERO = 2,  /* the blocks read as zeroes (partial-IU discard) */
	QS_EXT_INVAL = 3, /* drop cached copies: the QLC holds newer data */
	/* Log placement only. MAP and MOVE take two entries: the extent, then
	 * a struct qs_fmt_ext_phys payload in the next entry. */
	QS_EXT_MAP = 4,	  /* destaged: lba+i is at phys+i if its cached copy is
			     still the one at log position src+i */
	QS_EXT_MOVE = 5,  /* relocated by GC: lba+i moves to phys+i if it is
			     still mapped at old+i */
	QS_EXT_TRIM = 6,  /* discarded: unmapped, cached copies dropped */
};

struct qs_fmt_extent {
	uint64_t lba;	  /* first 4 KiB block on the client device */
	uint32_t nblocks; /* length in 4 KiB blocks */
	uint32_t kind;	  /* enum qs_fmt_ext_kind */
};
static_assert(sizeof(struct qs_fmt_extent) == 16, "extent size");

/* The entry after a MAP or MOVE extent. */
struct qs_fmt_ext_phys {
	uint64_t phys; /* first QLC block (4 KiB units) it now lives at */
	uint64_t from; /* MAP: log position of the copy destaged; MOVE: old QLC block */
};
static_assert(sizeof(struct qs_fmt_ext_phys) == 16, "extent payload size");

/*
 * Map page (log placement): entries for LBAs [page * per_page, + nentries),
 * each the QLC block the LBA lives at, all ones when unmapped, map_width
 * bytes little-endian, as of the map checkpoint gen: the map after every
 * record before the page's seq (at or after the superblock's map_seq, which
 * every committed page has reached). Written to the slot that does not hold the
 * page's newest committed copy, so that a torn or uncommitted write leaves
 * that copy; a slot that is all zeroes was never written since format (the
 * region is zeroed then).
 */
#define QS_FMT_MAP_BYTES 4056u
struct qs_fmt_map_page {
	uint32_t magic;	   /* QS_FMT_MAP_MAGIC */
	uint16_t version;  /* QS_FMT_VERSION */
	uint16_t width;	   /* sb.map_width */
	uint64_t page;	   /* its page number */
	uint64_t gen;	   /* map checkpoint it belongs to: the newest copy at or
			      below the superblock's map_gen wins */
	uint64_t seq;	   /* map page: it holds every record below this seq and
			      none at or above it (recovery replays a record
			      onto it only from there); zero in the pages that
			      share this layout */
	uint32_t nentries; /* QS_FMT_MAP_BYTES / width, fewer on the last page */
	uint8_t entries[QS_FMT_MAP_BYTES];
	uint32_t crc;	   /* CRC32C of bytes [0, offsetof(crc)), seeded as records */
};
static_assert(sizeof(struct qs_fmt_map_page) == 4096, "map page size");
static_assert(offsetof(struct qs_fmt_map_page, seq) == 24, "map page layout");
static_assert(offsetof(struct qs_fmt_map_page, entries) == 36, "map page layout");
static_assert(offsetof(struct qs_fmt_map_page, crc) == 4092, "map page layout");

/*
 * Clean state (log placement): what recovery would otherwise rebuild from
 * the whole map, written by a clean shutdown after its last map pages and
 * before the superblock that names it (QS_SB_CLEAN_STATE), at the start of
 * the region after the map region. Block 0 is this header (the rest of the
 * block zero); then band_pages band pages and valid pages valid-bitmap
 * pages, both with the map page's layout (struct qs_fmt_map_page) under
 * their own magic, gen = the header's generation:
 *   band page p: entries for bands [p * 507, + nentries), 8 bytes each,
 *     valid blocks (bits 0-31) and bands filled since it was (bits 32-63);
 *   valid-bitmap page p: bytes [p * 4056, + nentries) of the bitmap of QLC
 *     blocks the map points at (width 1; block b is bit b % 8 of byte b / 8).
 * Only the superblock of the same generation makes it current, so a
 * region left by an earlier shutdown, or torn by a crash before the
 * superblock was written, is never taken.
 */
struct qs_fmt_clean {
	uint32_t magic;	     /* QS_FMT_CLEAN_MAGIC */
	uint16_t version;    /* QS_FMT_VERSION */
	uint16_t size;	     /* sizeof(struct qs_fmt_clean) */
	uint64_t generation; /* the superblock generation that commits it */
	uint64_t nbands;     /* qlc_phys_size / band bytes */
	uint64_t closes;     /* bands filled so far (GC's clock for band age) */
	uint64_t mapped;     /* client blocks the map points at */
	uint64_t open[2];    /* the client and GC streams' open bands, or all ones */
	uint32_t wp[2];	     /* their next block, whole IUs, at most band_blocks */
	uint32_t reserved;   /* zero */
	uint32_t crc;	     /* CRC32C of bytes [0, offsetof(crc)), seeded as records */
};
static_assert(sizeof(struct qs_fmt_clean) == 72, "clean state header size");
static_assert(offsetof(struct qs_fmt_clean, generation) == 8, "clean state layout");
static_assert(offsetof(struct qs_fmt_clean, open) == 40, "clean state layout");
static_assert(offsetof(struct qs_fmt_clean, wp) == 56, "clean state layout");
static_assert(offsetof(struct qs_fmt_clean, crc) == 68, "clean state layout");

#define QS_FMT_BAND_ENTRY 8u /* bytes per band page entry */

#define QS_FMT_REC_MAX_EXTENTS 252u

#define QS_REC_VOID 0x1u /* stands in for a record whose write failed */

/*
 * Log record header: one 4 KiB block, followed by nblocks data blocks (the
 * DATA extents' blocks, in extent order). A record never crosses a segment
 * boundary.
 */
struct qs_fmt_rec {
	uint32_t magic;	   /* QS_FMT_REC_MAGIC */
	uint16_t version;  /* QS_FMT_VERSION */
	uint16_t flags;	   /* QS_REC_* */
	uint64_t seq;	   /* consecutive, never reused */
	uint64_t pos;	   /* monotonic block position of this header */
	uint64_t epoch;	   /* superblock epoch when written */
	uint32_t nblocks;  /* data blocks after the header */
	uint32_t nextents; /* used entries of ext[] */
	uint32_t data_crc; /* CRC32C of the data blocks (0 blocks: 0) */
	uint32_t reserved; /* zero */
	struct qs_fmt_extent ext[QS_FMT_REC_MAX_EXTENTS];
	uint32_t pad[3];   /* zero */
	uint32_t crc;	   /* CRC32C of bytes [0, offsetof(crc)) */
};
static_assert(sizeof(struct qs_fmt_rec) == 4096, "record header size");
static_assert(offsetof(struct qs_fmt_rec, seq) == 8, "rec layout");
static_assert(offsetof(struct qs_fmt_rec, nblocks) == 32, "rec layout");
static_assert(offsetof(struct qs_fmt_rec, data_crc) == 40, "rec layout");
static_assert(offsetof(struct qs_fmt_rec, ext) == 48, "rec layout");
static_assert(offsetof(struct qs_fmt_rec, crc) == 4092, "rec layout");

/*
 * Validation results, one per field, in the order they are checked; each
 * one's qs_fmt_status_str names the field it rejected.
 */
enum qs_fmt_status {
	QS_FMT_OK = 0,
	QS_FMT_BAD_MAGIC,
	QS_FMT_BAD_VERSION,
	QS_FMT_BAD_CRC,
	QS_FMT_BAD_SIZE,	   /* sb.size */
	QS_FMT_BAD_IU_BYTES,	   /* sb: not a power of two from 4 KiB to 16 MiB */
	QS_FMT_BAD_SEGMENT_BLOCKS, /* sb: not 2 to 2^20 */
	QS_FMT_BAD_LOG_START,	   /* sb: not QS_FMT_LOG_START */
	QS_FMT_BAD_LOG_BLOCKS,	   /* sb: not whole segments, under 4 segments, over 2^31,
				      or past the device */
	QS_FMT_BAD_FAST_SIZE,	   /* sb: not the device's size */
	QS_FMT_BAD_QLC_SIZE,	   /* sb: zero or not whole IUs */
	QS_FMT_BAD_PLACEMENT,	   /* sb: no known placement */
	QS_FMT_BAD_BAND,	   /* sb: band_blocks or qlc_phys_size (log placement) */
	QS_FMT_BAD_MAP,		   /* sb: map_width, map_start or map_pages */
	QS_FMT_BAD_FLAGS,	   /* sb or rec: unknown flag bits */
	QS_FMT_BAD_TAIL,	   /* sb: tail_pos, tail_seq, epoch or generation past 2^62 */
	QS_FMT_BAD_HEAD_POS,	   /* sb, CLEAN: head_pos before tail_pos or a log ahead */
	QS_FMT_BAD_HEAD_SEQ,	   /* sb, CLEAN: head_seq before tail_seq, or past 2^62 */
	QS_FMT_BAD_RESERVED,	   /* nonzero reserved field */
	QS_FMT_BAD_POSITION,	   /* rec.pos: not where the record was found */
	QS_FMT_BAD_NEXTENTS,	   /* rec: more than QS_FMT_REC_MAX_EXTENTS */
	QS_FMT_BAD_EXTENT_KIND,	   /* rec: an extent of no known kind, or not of this
				      log's placement */
	QS_FMT_BAD_EXTENT_RANGE,   /* rec: an extent empty or past the client device */
	QS_FMT_BAD_EXTENT_PHYS,	   /* rec: a MAP or MOVE payload missing or out of range */
	QS_FMT_BAD_LENGTH,	   /* rec.nblocks: not the DATA extents' total, or past the segment */
	QS_FMT_BAD_PAGE,	   /* map page: number, width or entry count */
	QS_FMT_BAD_ENTRY,	   /* map page: an entry past the QLC's bands; P2L page:
				      past the client device; band page: more
				      valid blocks than a band holds, or an age past
				      the bands filled */
	QS_FMT_BAD_SEQ,		   /* map page: seq past 2^62 */
	QS_FMT_BAD_GENERATION,	   /* clean state: not the superblock's generation */
	QS_FMT_BAD_COUNT,	   /* clean state: nbands, or mapped past the client device */
	QS_FMT_BAD_OPEN,	   /* clean state: an open band or write pointer out of range */
};
#define QS_FMT_STATUS_LAST QS_FMT_BAD_OPEN

const char *qs_fmt_status_str(enum qs_fmt_status st);

/* Seal: compute and store the CRC. */
void qs_fmt_sb_seal(struct qs_fmt_sb *sb);

/*
 * A record's CRC starts from a seed taken from the log's uuid, so that
 * records left on the device by an earlier format of it fail the check.
 */
uint32_t qs_fmt_rec_seed(const struct qs_fmt_sb *sb);
void qs_fmt_rec_seal(struct qs_fmt_rec *rec, uint32_t seed);

/*
 * Validate a superblock read from a device of fast_size bytes: magic,
 * version, CRC, then every field's range.
 */
enum qs_fmt_status qs_fmt_sb_check(const struct qs_fmt_sb *sb, uint64_t fast_size);

/*
 * Validate a record header found at monotonic position pos of the log
 * described by sb: magic, version, CRC, then fields (pos matches, extents
 * inside the client device, nblocks equal to the DATA extents' total and
 * within the segment). The CRC is seeded with qs_fmt_rec_seed(sb). The
 * data CRC is checked by the caller.
 */
enum qs_fmt_status qs_fmt_rec_check(const struct qs_fmt_rec *rec,
				    const struct qs_fmt_sb *sb, uint64_t pos);

/* Map entries per page for a given width (4, 5 or 8), and pages for n LBAs. */
static inline uint32_t qs_fmt_map_per_page(uint32_t width)
{
	return QS_FMT_MAP_BYTES / width;
}

static inline uint64_t qs_fmt_map_pages(uint64_t lbas, uint32_t width)
{
	return (lbas + qs_fmt_map_per_page(width) - 1) / qs_fmt_map_per_page(width);
}

/* The unmapped value of a 5-byte entry, and its mask. */
#define QS_FMT_MAP_NONE5 ((1ull << 40) - 1)

/* Map entry width for a QLC of phys 4 KiB blocks in bands: the fewest
 * bytes of 4, 5 and 8 that hold every block number and the unmapped value
 * (5 from 16 TiB of QLC: a 30.72 TB drive's 7.5e9 blocks need 33 bits,
 * and 5 bytes put 811 entries on a page where 8 put 507). */
static inline uint32_t qs_fmt_map_width(uint64_t phys)
{
	return phys < UINT32_MAX ? 4 : phys < QS_FMT_MAP_NONE5 ? 5 : 8;
}

/* Whether a log may use width for a QLC of phys blocks: 4, 5 or 8, and no
 * narrower than qs_fmt_map_width (a wider one is allowed: the bench runs a
 * small model with the real drive's width). */
static inline bool qs_fmt_map_width_ok(uint32_t width, uint64_t phys)
{
	return (width == 4 || width == 5 || width == 8) && width >= qs_fmt_map_width(phys);
}

/* The value of an unmapped entry of the given width. */
static inline uint64_t qs_fmt_map_none(uint32_t width)
{
	return width == 4 ? UINT32_MAX : width == 5 ? QS_FMT_MAP_NONE5 : UINT64_MAX;
}

void qs_fmt_map_seal(struct qs_fmt_map_page *pg, uint32_t seed);

/*
 * Validate map page copy found for page page_no of the log described by sb:
 * magic, version, CRC, then page number, width and count, then that every
 * entry is unmapped or a block of the QLC's bands.
 */
enum qs_fmt_status qs_fmt_map_check(const struct qs_fmt_map_page *pg,
				    const struct qs_fmt_sb *sb, uint64_t page_no);

/*
 * P2L pages (log placement): for each band, the client block each of its
 * QLC blocks was written for (all ones: padding, or not written since the
 * band was last opened), map_width bytes an entry, cover entries a page (a
 * whole number of IUs, so a unit never starts a page mid-IU), the last
 * page of a band holding the rest. Page q = band * band_pages + i covers
 * the band's blocks [i * cover, + nentries). Written with the map page's
 * layout under QS_FMT_P2L_MAGIC, alternately to its two slots, gen rising
 * with every write (epoch << 40 | writes this open): the valid copy of
 * the highest gen is the newest. A unit's entries are durable before its
 * MAP or MOVE record is written, so GC finds the client block of every
 * block the map points at; entries of blocks it does not point at may be
 * stale and are not read.
 */
static inline uint32_t qs_fmt_p2l_cover(uint32_t width, uint32_t iu_blocks)
{
	return qs_fmt_map_per_page(width) / iu_blocks * iu_blocks;
}

static inline uint32_t qs_fmt_p2l_band_pages(uint32_t band_blocks, uint32_t cover)
{
	return (band_blocks + cover - 1) / cover;
}

/* Entries on P2L page q: the cover, or what is left of its band. */
static inline uint32_t qs_fmt_p2l_nentries(uint64_t q, uint32_t band_blocks, uint32_t cover)
{
	uint64_t first = q % qs_fmt_p2l_band_pages(band_blocks, cover) * cover;
	uint64_t left = band_blocks - first;
	return (uint32_t)(left < cover ? left : cover);
}

/* The blocks after the log with log placement: the map region, the P2L
 * region and the clean state; lbas client blocks, phys QLC blocks in
 * bands of band_blocks, IUs of iu_blocks, map entries of width bytes. */
uint64_t qs_fmt_plc_blocks(uint64_t lbas, uint64_t phys, uint32_t band_blocks,
			   uint32_t iu_blocks, uint32_t width);

/* Band entries per band page, and the clean state's blocks (header, band
 * pages, valid-bitmap pages) for a QLC of phys blocks in bands of
 * band_blocks. */
static inline uint32_t qs_fmt_band_per_page(void)
{
	return QS_FMT_MAP_BYTES / QS_FMT_BAND_ENTRY;
}

static inline uint64_t qs_fmt_band_pages(uint64_t nbands)
{
	return (nbands + qs_fmt_band_per_page() - 1) / qs_fmt_band_per_page();
}

static inline uint64_t qs_fmt_valid_pages(uint64_t phys)
{
	return ((phys + 7) / 8 + QS_FMT_MAP_BYTES - 1) / QS_FMT_MAP_BYTES;
}

static inline uint64_t qs_fmt_clean_blocks(uint64_t phys, uint32_t band_blocks)
{
	return 1 + qs_fmt_band_pages(phys / band_blocks) + qs_fmt_valid_pages(phys);
}

void qs_fmt_clean_seal(struct qs_fmt_clean *c, uint32_t seed);

/*
 * Validate a clean state header against the superblock sb that names it:
 * magic, version, CRC (seeded as records), size, generation, band count
 * and mapped, open bands and write pointers, reserved.
 */
enum qs_fmt_status qs_fmt_clean_check(const struct qs_fmt_clean *c, const struct qs_fmt_sb *sb);

/*
 * Validate band page page_no (magic QS_FMT_BAND_MAGIC) or valid-bitmap page
 * page_no (QS_FMT_VALID_MAGIC) of the clean state c, already checked: magic,
 * version, CRC, page number, width and count, generation, then every entry
 * (valid pages: no bit past the QLC's bands).
 */
enum qs_fmt_status qs_fmt_band_page_check(const struct qs_fmt_map_page *pg,
					  const struct qs_fmt_sb *sb,
					  const struct qs_fmt_clean *c, uint64_t page_no);
enum qs_fmt_status qs_fmt_valid_page_check(const struct qs_fmt_map_page *pg,
					   const struct qs_fmt_sb *sb,
					   const struct qs_fmt_clean *c, uint64_t page_no);

/*
 * Validate a copy of P2L page page_no of the log sb describes: magic,
 * version, CRC, page number, width and count (the band's cover, or what is
 * left of the band), every entry unmapped or a client block, zero after.
 */
enum qs_fmt_status qs_fmt_p2l_check(const struct qs_fmt_map_page *pg, const struct qs_fmt_sb *sb,
				    uint64_t page_no);

#endif
