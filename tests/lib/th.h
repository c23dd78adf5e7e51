/* SPDX-License-Identifier: MIT */
/* Test harness: one engine over two test volumes, driven step by step. */
#ifndef QS_TH_H
#define QS_TH_H

#include "tlib.h"

struct th {
	struct tenv env;
	struct tworld w;
	struct tvol fast, qlc;
	struct qs_engine *e;
	struct qs_engine_conf conf;
	int open_res;
	bool open_done;
	unsigned open_flags; /* added to th_open's flags (e.g. QS_OPEN_NO_DATA) */
	uint64_t step_ns;    /* simulated time a step takes (0: 1 us) */
};

/* Volumes of the given sizes; conf defaults scaled for tests. */
int th_init(struct th *h, uint64_t fast_size, uint64_t qlc_size, uint64_t seed);
/*
 * Log placement with the map far larger than its DRAM, for the tests that
 * sweep it: 360 bands of 256 KiB at op 40% (13,824 client blocks: 14 map
 * pages), 4 KiB IUs, 64 KiB of map DRAM (12 page frames, 4 COW frames), a
 * log of about 1024 blocks. 0 or -errno.
 */
int th_init_paged(struct th *h, uint64_t seed);
void th_fini(struct th *h);
/* Open (format or recover) and run until the open callback; returns its result. */
int th_open(struct th *h, bool format);
/* One step: complete one volume op, or fire the timer. false when idle. */
bool th_step(struct th *h);
/* Run until *flag is set or nothing is left to do. */
void th_wait(struct th *h, const bool *flag);
void th_run_idle(struct th *h);
/* op: 'r' read, 'w' write, 'f' flush, 'd' discard, 'D' drain; waits. */
int th_io(struct th *h, char op, uint64_t off, uint64_t len, void *buf, unsigned flags);
/* Close (clean superblock) and free the engine. */
int th_close(struct th *h);
/* th_close, with the engine's statistics taken once the close is done,
 * before the engine is freed (st may be NULL). */
int th_close_stats(struct th *h, struct qs_engine_stats *st);
/* Close with the world's crash point armed: 1 if the crash point came
 * during the close (the engine is left for th_crash), else the close's
 * result (0 or -errno, the engine freed). */
int th_close_or_crash(struct th *h);
/* Crash: volumes lose what they would, the engine is torn down. */
void th_crash(struct th *h, bool power);
/*
 * Log placement, after a clean close (th_close: the committed map pages are
 * the map): read from the fast volume's contents, every mapped client block
 * must be the entry of its QLC block in the newest valid copy of that
 * block's P2L page, or GC could not move it. Returns the blocks that are
 * not (0: all are; the first one described in why).
 */
uint64_t th_p2l_audit(struct th *h, char *why, size_t len);

#endif
