/* SPDX-License-Identifier: MIT */
/*
 * Test library: an environment on a manual clock, a test volume that is at
 * once a RAM volume, a power-loss volume (holds unflushed writes; a crash
 * keeps, drops or tears each at 512-byte granularity), a fault volume (fails
 * the Nth I/O, transiently or for good) and an IU checker (counts QLC writes
 * that are not whole aligned IUs), plus a harness that drives an engine
 * over two such volumes and a reference model of what each block may hold.
 */
#ifndef QS_TLIB_H
#define QS_TLIB_H

#include <stdbool.h>
#include <stdint.h>

#include "qlcshape/engine.h"

/* ---- environment ---- */
struct tenv {
	struct qs_env env;
	uint64_t now;
	uint64_t deadline;
	bool verbose;
	uint64_t logged_errors;
	char warnings[1024]; /* messages at QS_LOG_WARN or worse, one a line, as fit */
};
void tenv_init(struct tenv *t);

/* ---- world: counts write/flush submissions across volumes for crashes ---- */
struct tworld {
	uint64_t points;   /* write + flush submissions so far */
	uint64_t crash_at; /* crash when points reaches this; 0 = never */
	bool crashed;
	uint64_t rng;
};

/* ---- test volume ---- */
struct top; /* a queued operation */
struct tvol {
	struct qs_vol vol;
	struct tworld *w;
	uint64_t size;
	unsigned char *cur;	/* what reads return */
	unsigned char *durable; /* what survives a power loss */
	uint8_t *touched;	/* 1 MiB chunks either image was written in */
	struct top *queue;	/* submitted, not yet completed */
	uint64_t nqueue;
	struct top *unflushed;	/* completed, not yet durable, oldest first */
	bool random_order;	/* complete queued ops in random order */
	uint32_t tear_unit;	/* power loss tears at this granularity (512) */
	/* fault injection: fail the fail_at-th I/O (1-based) of this volume */
	uint64_t ios, fail_at;
	bool fail_persistent, fault_hit, dead;
	/* IU checker */
	uint32_t check_iu;
	uint64_t iu_violations, writes, flushes, discards;
	/* band checker (log placement): writes within each check_band-sized
	 * band must follow one another, or start the band over at its start;
	 * after tvol_band_reopen a band's first write may resume it at any
	 * IU (check_iu) */
	uint64_t check_band;
	uint64_t *band_next;
	uint64_t band_violations;
};
int tvol_init(struct tvol *v, struct tworld *w, uint64_t size, bool volatile_cache);
void tvol_fini(struct tvol *v);
/*
 * An engine opens on what the volume holds: the bands it had open are
 * not recorded on the devices, so it resumes them after their last mapped
 * block, which may lie before the last write into the band. Each band's
 * next write may be any IU of it; writes follow on from there.
 */
void tvol_band_reopen(struct tvol *v);
/* Complete one queued op (random or oldest); false if none queued. */
bool tvol_step(struct tvol *v);
/*
 * Power loss (power = true): every unflushed or in-flight write is kept,
 * dropped or torn (512-byte sectors) by the world's rng; the volume then
 * reads what is durable. Process crash (power = false): completed writes
 * stay (the device's cache survives), in-flight ones are kept or dropped.
 * Queued ops are failed later with -EIO by tvol_step (volume dead).
 */
void tvol_crash(struct tvol *v, bool power);
/* Back to life after a crash: empty queue, not dead, same data. */
void tvol_revive(struct tvol *v);

/* ---- reference model and block contents ---- */
/* Fill a 4 KiB block with the pattern of (lba, ver); ver 0 is all zeroes. */
void tblk_fill(void *blk, uint64_t lba, uint64_t ver);
/* Decode a block: 0 ok (*ver set, 0 for zeroes), -1 if it is no exact
 * pattern of that lba (torn or foreign). */
int tblk_decode(const void *blk, uint64_t lba, uint64_t *ver);

uint64_t trng(uint64_t *s);

#endif
