/* SPDX-License-Identifier: MIT */
/*
 * A randomized workload against an engine, checked against a reference
 * model. Every block's content names its LBA and a version, so a read tells
 * exactly which write it came from (or that it is torn). The model keeps,
 * per block, every version ever submitted in order (0 = zeroes, from a
 * discard or never written), which one completed last, and which one was
 * covered by the last completed flush: that is enough to check
 * read-your-writes while running and invariants 1 to 3 after a crash.
 */
#ifndef QS_TWORK_H
#define QS_TWORK_H

#include "th.h"

struct tblock {
	uint64_t *hist;	  /* versions submitted, in order; hist[0] = 0 */
	uint32_t nhist, cap;
	uint32_t done;	  /* index of the latest completed version */
	uint32_t floor;	  /* index durable at the last completed flush/FUA */
	uint32_t flushing; /* snapshot taken when a flush was submitted */
	bool busy;	  /* a write or discard in flight */
	bool uncertain;	  /* a failed write left old-or-new */
	uint32_t fail_lo; /* uncertain: any index >= fail_lo is allowed */
};

struct twork {
	struct th *h;
	uint64_t rng;
	uint64_t span; /* blocks */
	struct tblock *b;
	uint64_t next_ver;
	uint32_t inflight, max_inflight;
	uint64_t ops, failed, read_mismatch;
	bool allow_failures; /* fault runs: failed requests are expected */
	bool whole_ius;	     /* issue some IU-aligned multi-IU writes */
	uint32_t iu_blocks;
	char last_error[256];
	struct top_ctx *live;
};

void twork_init(struct twork *w, struct th *h, uint64_t span, uint64_t seed);
void twork_fini(struct twork *w);
/* Issue n operations (keeping up to max_inflight in flight); stops early
 * if the world crashes. Returns the number issued. */
uint64_t twork_run(struct twork *w, uint64_t n);
/* Wait for everything in flight (not across a crash). */
void twork_quiesce(struct twork *w);
/* Read every block and check it against the model: after a crash
 * (crashed = true) any version from the durable one on is allowed;
 * otherwise exactly the latest completed one. Returns violations. */
uint64_t twork_verify_all(struct twork *w, bool crashed);
/* After a crash and recovery: forget what was in flight. */
void twork_after_crash(struct twork *w);

#endif
