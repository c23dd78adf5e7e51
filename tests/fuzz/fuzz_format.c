/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the on-disk format through the engine's open and recovery
 * (cache/recover.c, cache/format.c), in place and log placement.
 *
 * The input is a fast-tier image over RAM volumes (tests/lib), written
 * sparsely so that mutations land on what the engine parses:
 *
 *   byte 0        flags: FZ_LOG (bit 0) opens with placement = log, else in
 *                 place (the device's size and the QLC follow); FZ_RAW_SB0,
 *                 FZ_RAW_SB1 (bits 1, 2) leave that superblock copy's CRC as
 *                 given; FZ_RAW_DATA (bit 3) leaves records' data CRCs
 *   then chunks   [block: u8][length: u16 little-endian][length bytes]: the
 *                 bytes go to the start of that fast block (at most 4096;
 *                 the rest of the block stays zero; later chunks win)
 *
 * Before the open, the harness reseals what would otherwise stop every
 * mutation at a CRC: both superblock copies (unless FZ_RAW_SB*), every
 * block of the log that carries a record's magic (its data CRC over the
 * blocks after it, unless FZ_RAW_DATA, then its header CRC, seeded with the
 * newest superblock's uuid), every map page copy of the map region, and the
 * clean state's header and pages.
 *
 * An open must complete (else: a hang, a finding). When it succeeds, the
 * harness reads the whole client device, writes a few blocks, flushes,
 * closes, reopens and reads everything again: the second open must succeed
 * and return exactly the first image with the writes applied.
 *
 * With QS_FUZZ_VERBOSE set in the environment, each open's result is
 * printed.
 *
 * FZ_MKSEED builds instead a program that writes the seed corpus (images of
 * real logs, clean and crashed, and the superblock reproducers of issue 12)
 * into the directory it is given (each run gives new log uuids, so the
 * files differ from the committed ones in those bytes):
 *   cc -DFZ_MKSEED -Iinclude -Itests/lib -D_GNU_SOURCE tests/fuzz/fuzz_format.c \
 *      tests/fuzz/fz.c tests/lib/tlib.c tests/lib/th.c cache/[a-z]*.c -lm -o /tmp/mkseed && \
 *      /tmp/mkseed tests/fuzz/corpus/format
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz.h"
#include "qlcshape/crc32c.h"
#include "qlcshape/format.h"
#include "th.h"

#define FZ_LOG 0x1u
#define FZ_RAW_SB0 0x2u
#define FZ_RAW_SB1 0x4u
#define FZ_RAW_DATA 0x8u

#define FZ_IU 16384u
#define FZ_SEG 16u
#define FZ_LOG_BLOCKS (4 * FZ_SEG)	/* in place: the smallest log format accepts */
#define FZ_LOG_BLOCKS_LOG (10 * FZ_SEG) /* log placement: room for map records too */
#define FZ_QLC_INPLACE (64ull * FZ_IU) /* 1 MiB */
#define FZ_BAND (4ull * FZ_IU)
#define FZ_QLC_LOG (32 * FZ_BAND)	/* 2 MiB, 25% over-provisioning */
#define FZ_WRITES 8u

static void fz_conf(struct th *h, bool log)
{
	h->conf.iu_bytes = FZ_IU;
	h->conf.segment_blocks = FZ_SEG;
	h->conf.group_commit_blocks = FZ_SEG;
	if (log) {
		h->conf.placement = QS_PLACE_LOG;
		h->conf.op_pct = 25;
		h->conf.band_bytes = FZ_BAND;
	}
}

/* The volumes' sizes for a placement. */
static void fz_sizes(bool log, uint64_t *fast, uint64_t *qlc)
{
	struct th h;
	memset(&h, 0, sizeof(h));
	qs_engine_conf_default(&h.conf);
	fz_conf(&h, log);
	*qlc = log ? FZ_QLC_LOG : FZ_QLC_INPLACE;
	*fast = (QS_FMT_LOG_START + (log ? FZ_LOG_BLOCKS_LOG : FZ_LOG_BLOCKS)) *
			(uint64_t)QS_BLOCK_SIZE +
		qs_engine_conf_map_bytes(&h.conf, *qlc);
}

static int fz_init(struct th *h, bool log)
{
	uint64_t fast, qlc;
	fz_sizes(log, &fast, &qlc);
	if (th_init(h, fast, qlc, 1))
		return -ENOMEM;
	fz_conf(h, log);
	return 0;
}

/* The superblock copy with the valid CRC and the higher generation (NULL if none). */
static const struct qs_fmt_sb *fz_newest_sb(const unsigned char *img, uint64_t fast)
{
	const struct qs_fmt_sb *best = NULL;
	for (unsigned c = 0; c < QS_FMT_SB_COPIES; c++) {
		const struct qs_fmt_sb *sb = (const void *)(img + c * QS_BLOCK_SIZE);
		if (qs_fmt_sb_check(sb, fast) == QS_FMT_OK &&
		    (!best || sb->generation > best->generation))
			best = sb;
	}
	return best;
}

static void fz_reseal(unsigned char *img, uint64_t fast, unsigned flags)
{
	uint64_t nblk = fast / QS_BLOCK_SIZE;
	if (!(flags & FZ_RAW_SB0))
		qs_fmt_sb_seal((struct qs_fmt_sb *)img);
	if (!(flags & FZ_RAW_SB1))
		qs_fmt_sb_seal((struct qs_fmt_sb *)(img + QS_BLOCK_SIZE));
	const struct qs_fmt_sb *sb = fz_newest_sb(img, fast);
	if (!sb)
		return;
	struct qs_fmt_sb s = *sb; /* the image changes below */
	uint32_t seed = qs_fmt_rec_seed(&s);
	for (uint64_t b = QS_FMT_LOG_START; b < nblk; b++) {
		struct qs_fmt_rec *r = (void *)(img + b * QS_BLOCK_SIZE);
		if (r->magic != QS_FMT_REC_MAGIC)
			continue;
		if (!(flags & FZ_RAW_DATA) && r->nblocks < nblk - b)
			r->data_crc = qs_crc32c(0, img + (b + 1) * QS_BLOCK_SIZE,
						(size_t)r->nblocks * QS_BLOCK_SIZE);
		qs_fmt_rec_seal(r, seed);
	}
	if (s.placement != QS_FMT_PLACE_LOG || s.map_start >= nblk)
		return;
	/* The map region, the P2L region and the clean state after them:
	 * map, P2L, band and valid-bitmap pages share one layout. */
	for (uint64_t b = s.map_start; b < nblk; b++) {
		struct qs_fmt_map_page *pg = (void *)(img + b * QS_BLOCK_SIZE);
		if (pg->magic == QS_FMT_MAP_MAGIC || pg->magic == QS_FMT_BAND_MAGIC ||
		    pg->magic == QS_FMT_VALID_MAGIC || pg->magic == QS_FMT_P2L_MAGIC)
			qs_fmt_map_seal(pg, seed);
		else if (pg->magic == QS_FMT_CLEAN_MAGIC)
			qs_fmt_clean_seal((struct qs_fmt_clean *)pg, seed);
	}
}

/* Block contents the harness writes: lba and version, then zeroes. */
static void fz_block(unsigned char *blk, uint64_t lba, uint64_t ver)
{
	memset(blk, 0, QS_BLOCK_SIZE);
	memcpy(blk, &lba, 8);
	memcpy(blk + 8, &ver, 8);
}

static void fz_read_all(struct th *h, unsigned char *buf, uint64_t size, const char *when)
{
	const uint64_t step = 16 * QS_BLOCK_SIZE;
	for (uint64_t off = 0; off < size; off += step) {
		uint64_t n = size - off < step ? size - off : step;
		int rc = th_io(h, 'r', off, n, buf + off, 0);
		if (rc)
			fz_fail("%s: read of %llu bytes at %llu: %s", when,
				(unsigned long long)n, (unsigned long long)off, strerror(-rc));
	}
}

static uint64_t fz_hash(const uint8_t *data, size_t size)
{
	uint64_t x = 1469598103934665603ull;
	for (size_t i = 0; i < size; i++)
		x = (x ^ data[i]) * 1099511628211ull;
	return x;
}

/* After a successful open: read all, write, close, reopen, compare. */
static void fz_roundtrip(struct th *h, uint64_t hash)
{
	uint64_t size = qs_engine_size(h->e), nblk = size / QS_BLOCK_SIZE;
	unsigned char *img = malloc(size), *again = malloc(size);
	unsigned char blk[QS_BLOCK_SIZE];
	int rc;

	if (!img || !again)
		fz_fail("out of memory for a %llu-byte image", (unsigned long long)size);
	fz_read_all(h, img, size, "after the first open");
	for (unsigned i = 0; i < FZ_WRITES && nblk; i++) {
		uint64_t lba = (hash >> (i * 7)) % nblk;
		fz_block(blk, lba, 1000 + i);
		rc = th_io(h, 'w', lba * QS_BLOCK_SIZE, QS_BLOCK_SIZE, blk, 0);
		if (rc)
			fz_fail("write of block %llu: %s", (unsigned long long)lba, strerror(-rc));
		memcpy(img + lba * QS_BLOCK_SIZE, blk, QS_BLOCK_SIZE);
	}
	rc = th_io(h, 'f', 0, 0, NULL, 0);
	if (rc)
		fz_fail("flush: %s", strerror(-rc));
	rc = th_close(h);
	if (rc)
		fz_fail("close: %s", strerror(-rc));
	rc = th_open(h, false);
	if (rc)
		fz_fail("reopen after a clean close: %s (log: %s)", strerror(-rc),
			h->env.warnings);
	if (qs_engine_size(h->e) != size)
		fz_fail("reopen: size %llu, was %llu", (unsigned long long)qs_engine_size(h->e),
			(unsigned long long)size);
	fz_read_all(h, again, size, "after the reopen");
	for (uint64_t b = 0; b < nblk; b++)
		if (memcmp(img + b * QS_BLOCK_SIZE, again + b * QS_BLOCK_SIZE, QS_BLOCK_SIZE))
			fz_fail("block %llu differs after close and reopen",
				(unsigned long long)b);
	rc = th_close(h);
	if (rc)
		fz_fail("second close: %s", strerror(-rc));
	free(img);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct th h;
	unsigned flags;
	int rc;

	if (size < 1)
		return 0;
	flags = data[0];
	if (fz_init(&h, flags & FZ_LOG))
		fz_fail("out of memory for the volumes");
	h.env.verbose = false;
	for (size_t i = 1; i + 3 <= size;) {
		uint64_t blk = data[i];
		size_t len = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;
		i += 3;
		if (len > size - i)
			len = size - i;
		if ((blk + 1) * QS_BLOCK_SIZE <= h.fast.size)
			memcpy(h.fast.cur + blk * QS_BLOCK_SIZE, data + i,
			       len < QS_BLOCK_SIZE ? len : QS_BLOCK_SIZE);
		i += len;
	}
	fz_reseal(h.fast.cur, h.fast.size, flags);
	memcpy(h.fast.durable, h.fast.cur, h.fast.size);

	rc = th_open(&h, false);
	if (getenv("QS_FUZZ_VERBOSE"))
		fprintf(stderr, "open: %s%s%s\n", rc ? strerror(-rc) : "ok", rc ? "; " : "",
			rc ? h.env.warnings : "");
	if (rc == -ETIMEDOUT)
		fz_fail("open never completed (a hang)");
	if (rc == 0)
		fz_roundtrip(&h, fz_hash(data, size));
	th_fini(&h);
	return 0;
}

#ifdef FZ_MKSEED
/* ---- the seed corpus ---- */

static FILE *seed_open(const char *dir, const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		fz_fail("%s: %s", p, strerror(errno));
	return f;
}

/* The fast image of h, sparse: every block that is not all zeroes, its
 * trailing zeroes cut. mut, if set, changes the superblocks first. */
static void seed_write(const char *dir, const char *name, struct th *h, unsigned flags,
		       void (*mut)(struct qs_fmt_sb *))
{
	unsigned char *img = malloc(h->fast.size);
	memcpy(img, h->fast.cur, h->fast.size);
	if (mut)
		for (unsigned c = 0; c < QS_FMT_SB_COPIES; c++)
			mut((struct qs_fmt_sb *)(img + c * QS_BLOCK_SIZE));
	/* The harness reseals every CRC: zero them, so blocks trim short. */
	for (uint64_t b = QS_FMT_LOG_START; b < h->fast.size / QS_BLOCK_SIZE; b++) {
		struct qs_fmt_rec *r = (void *)(img + b * QS_BLOCK_SIZE);
		if (r->magic == QS_FMT_REC_MAGIC || r->magic == QS_FMT_MAP_MAGIC)
			r->crc = 0; /* the same offset in both */
	}
	FILE *f = seed_open(dir, name);
	fputc((int)flags, f);
	for (uint64_t b = 0; b < h->fast.size / QS_BLOCK_SIZE; b++) {
		const unsigned char *p = img + b * QS_BLOCK_SIZE;
		size_t len = QS_BLOCK_SIZE;
		while (len && !p[len - 1])
			len--;
		if (!len)
			continue;
		fputc((int)b, f);
		fputc((int)(len & 0xff), f);
		fputc((int)(len >> 8), f);
		fwrite(p, 1, len, f);
	}
	fclose(f);
	free(img);
}

static void seed_fill(struct th *h, unsigned n, uint64_t stride, uint64_t ver)
{
	unsigned char blk[QS_BLOCK_SIZE];
	uint64_t nblk = qs_engine_size(h->e) / QS_BLOCK_SIZE;
	for (unsigned i = 0; i < n; i++) {
		uint64_t lba = (i * stride) % nblk;
		fz_block(blk, lba, ver + i);
		if (th_io(h, 'w', lba * QS_BLOCK_SIZE, QS_BLOCK_SIZE, blk, 0))
			fz_fail("seed write");
	}
	th_io(h, 'f', 0, 0, NULL, 0);
}

static void m_log2seg(struct qs_fmt_sb *s) { s->log_blocks = 2 * FZ_SEG; }
static void m_log3seg(struct qs_fmt_sb *s) { s->log_blocks = 3 * FZ_SEG; }
static void m_tailwrap(struct qs_fmt_sb *s)
{
	s->tail_pos = 0xffffffffffffffebull;
	s->head_pos = s->tail_pos;
}
static void m_tailmax(struct qs_fmt_sb *s)
{
	s->tail_pos = QS_FMT_MAX_POS - 1;
	s->head_pos = s->tail_pos;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	for (int log = 0; log < 2; log++) {
		unsigned fl = log ? FZ_LOG : 0;
		const char *pl = log ? "log" : "inplace";
		_Static_assert(offsetof(struct qs_fmt_rec, crc) ==
				       offsetof(struct qs_fmt_map_page, crc), "crc offset");
		char name[128];
		struct th h;
		int rc;

		/* A fresh format, closed clean. */
		fz_init(&h, log);
		if ((rc = th_open(&h, true)))
			fz_fail("seed format: %s (%s)", strerror(-rc), h.env.warnings);
		th_close(&h);
		snprintf(name, sizeof(name), "%s-empty-clean", pl);
		seed_write(dir, name, &h, fl, NULL);
		/* Issue 12, finding 2: log_blocks of 2 and 3 segments. */
		snprintf(name, sizeof(name), "%s-repro-log-2-segments", pl);
		seed_write(dir, name, &h, fl, m_log2seg);
		snprintf(name, sizeof(name), "%s-repro-log-3-segments", pl);
		seed_write(dir, name, &h, fl, m_log3seg);
		/* Finding 3: tail_pos 27 blocks short of 2^64; and just under the bound. */
		snprintf(name, sizeof(name), "%s-repro-tail-pos-wrap", pl);
		seed_write(dir, name, &h, fl, m_tailwrap);
		snprintf(name, sizeof(name), "%s-tail-pos-max", pl);
		seed_write(dir, name, &h, fl, m_tailmax);
		th_fini(&h);

		/* Records in the log, then a crash: recovery replays them. */
		fz_init(&h, log);
		if ((rc = th_open(&h, true)))
			fz_fail("seed format: %s (%s)", strerror(-rc), h.env.warnings);
		seed_fill(&h, 12, 5, 1);
		th_crash(&h, false);
		snprintf(name, sizeof(name), "%s-records-crashed", pl);
		seed_write(dir, name, &h, fl, NULL);
		th_fini(&h);

		/* Data destaged (map records and pages in log placement), more
		 * written, closed clean. */
		fz_init(&h, log);
		if ((rc = th_open(&h, true)))
			fz_fail("seed format: %s (%s)", strerror(-rc), h.env.warnings);
		seed_fill(&h, 40, 3, 1);
		th_io(&h, 'D', 0, 0, NULL, 0);
		seed_fill(&h, 6, 11, 100);
		th_close(&h);
		snprintf(name, sizeof(name), "%s-destaged-clean", pl);
		seed_write(dir, name, &h, fl, NULL);
		th_fini(&h);

		/* The same crashed after the drain. */
		fz_init(&h, log);
		if ((rc = th_open(&h, true)))
			fz_fail("seed format: %s (%s)", strerror(-rc), h.env.warnings);
		seed_fill(&h, 40, 3, 1);
		th_io(&h, 'D', 0, 0, NULL, 0);
		seed_fill(&h, 6, 11, 100);
		th_crash(&h, false);
		snprintf(name, sizeof(name), "%s-destaged-crashed", pl);
		seed_write(dir, name, &h, fl, NULL);
		th_fini(&h);
	}
	return 0;
}
#endif
