/* SPDX-License-Identifier: MIT */
/*
 * Device models on a timeline (in the style of NVMeVirt): every parallel
 * resource of a drive (controller cores, host link in each direction, NAND
 * channels, dies) has a next-free time in nanoseconds, and a request's
 * completion time follows from the resources it needs. NAND drives keep real
 * state: an IU-granular mapping, per-superblock validity, a PLP write buffer,
 * read-modify-write of partial IUs and greedy garbage collection with the
 * profile's over-provisioning, per FTL region (LBA ranges with their own
 * spare) when the profile has several. See docs/MODEL.md.
 *
 * A model is single-threaded and deterministic: the same profile, scale and
 * sequence of submissions give the same completion times. It keeps no data
 * (timing and state only).
 */
#ifndef QS_HOST_MODEL_H
#define QS_HOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "host/profile.h"

enum qs_model_op {
	QS_OP_READ = 0,
	QS_OP_WRITE = 1,
	QS_OP_FLUSH = 2,
	QS_OP_DISCARD = 3,
};

struct qs_model_counters {
	uint64_t host_reads, host_read_bytes;
	uint64_t host_writes, host_write_bytes;
	uint64_t host_flushes, host_discards, host_discard_bytes;
	uint64_t nand_read_bytes;	/* die reads: host, RMW and GC */
	uint64_t nand_prog_bytes;	/* programmed: host and GC */
	uint64_t host_prog_bytes;	/* IUs programmed for host writes */
	uint64_t partial_ius;		/* IU writes that were not whole */
	uint64_t rmw;			/* partial IUs that read the old IU */
	uint64_t buffer_merges;		/* writes merged into a buffered IU */
	uint64_t gc_runs, gc_moves;	/* victims collected, IUs relocated */
	uint64_t erases;		/* die blocks erased */
};

struct qs_model;

/*
 * Create a model of profile p with a user capacity of scaled_capacity bytes
 * (0: the profile's real capacity). The scaled model keeps the profile's
 * ratios (over-provisioning, number of superblocks) and its parallelism and
 * timings, so throughput does not depend on the scale; docs/MODEL.md shows
 * runs at two scales. Returns NULL with errno set (ENOMEM, EINVAL). The
 * model copies p; the caller owns the result and frees it with
 * qs_model_free().
 */
struct qs_model *qs_model_new(const struct qs_profile *p, uint64_t scaled_capacity);

/*
 * qs_model_new with the reason: 0 and the model in *out (the caller's, freed
 * with qs_model_free), or -EINVAL when the profile cannot be modelled at
 * that size, with err naming the profile, the keys whose values caused it,
 * those values and the allowed range (e.g. a die stripe so wide that the
 * model would exceed 2^31 IUs); -ENOMEM likewise. Any thread.
 */
int qs_model_create(struct qs_model **out, const struct qs_profile *p, uint64_t scaled_capacity,
		    char *err, size_t errlen);

/*
 * The default scaled capacity for profile p, the one sim mode, emu mode,
 * calibrate and the emulated QLC start from (docs/MODEL.md, Scaling): 2^20
 * IUs, or more where the die stripe is so wide that fewer superblocks than
 * the profile asks for would fit (GC statistics depend on their count);
 * at most the drive's capacity, in whole IUs. A smaller model has fewer,
 * relatively more spare superblocks: its GC is not the calibrated one.
 */
uint64_t qs_model_default_bytes(const struct qs_profile *p);
void qs_model_free(struct qs_model *m);

/* Deep copy of m (state, timelines, counters). NULL with errno on failure. */
struct qs_model *qs_model_clone(const struct qs_model *m);

/*
 * A frozen deep copy of m, to clone many times cheaply: its mapping tables
 * (the bulk of a NAND model) live in a memfd that each clone of the
 * snapshot maps copy-on-write, so a clone costs the pages it writes, not
 * the drive's size. The snapshot answers the read-only calls (capacity,
 * profile, counters, idle time, check) and qs_model_clone; it must never be
 * submitted to (its tables are read-only: a write faults). Free it with
 * qs_model_free(), also while clones of it live. NULL with errno on failure.
 */
struct qs_model *qs_model_snapshot(const struct qs_model *m);

/*
 * Submit one request at virtual time now_ns and return its completion time
 * (>= now_ns). off and len are bytes within the model's capacity; len is
 * ignored for QS_OP_FLUSH. Callers must submit with non-decreasing now_ns
 * only in the sense that time never runs backwards for them; the model
 * accepts any now_ns but its resources never become free in the past.
 */
uint64_t qs_model_submit(struct qs_model *m, uint64_t now_ns, int op, uint64_t off,
			 uint64_t len);

/* The model's user capacity in bytes (the scaled one). */
uint64_t qs_model_capacity(const struct qs_model *m);
uint32_t qs_model_iu_bytes(const struct qs_model *m);
const struct qs_profile *qs_model_profile(const struct qs_model *m);

/* The time at which every resource of the drive is idle. */
uint64_t qs_model_idle_time(const struct qs_model *m);

/*
 * Sequential fill of [off, off+len) in whole IUs (preconditioning), starting
 * at now_ns with enough requests in flight to keep the drive busy. Returns
 * the time the drive is idle again.
 */
uint64_t qs_model_fill_seq(struct qs_model *m, uint64_t now_ns, uint64_t off, uint64_t len);

/*
 * Fill of [off, off+len) writing each whole IU once, in a random order drawn
 * from seed (preconditioning that leaves every superblock holding data from
 * all over the range). Returns the time the drive is idle again.
 */
uint64_t qs_model_fill_random(struct qs_model *m, uint64_t now_ns, uint64_t off, uint64_t len,
			      uint64_t seed);

void qs_model_get_counters(const struct qs_model *m, struct qs_model_counters *c);

/*
 * State checks for tests: recount validity from the mapping and compare
 * with the per-superblock counters and reverse map. 0 if consistent, -EIO.
 */
int qs_model_check(const struct qs_model *m);

/* Free superblocks right now (tests and reports). */
uint32_t qs_model_free_superblocks(const struct qs_model *m);
uint32_t qs_model_superblocks(const struct qs_model *m);
/* Bytes of user data one superblock holds (0 for a model without NAND). */
uint64_t qs_model_superblock_bytes(const struct qs_model *m);

#endif
