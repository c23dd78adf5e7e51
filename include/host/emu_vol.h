/* SPDX-License-Identifier: MIT */
/*
 * qs_emu: an emulated drive. The device model (host/model.h, the one the
 * bench simulates) run in real time: a struct qs_vol whose requests complete no earlier than the
 * CLOCK_MONOTONIC time the model gives for them, holding the data in RAM,
 * in a file, or nowhere (timing only). It lets qlcshaped front an emulated
 * QLC drive on a machine that has none (`qlc = emu:PROFILE`), and the
 * bench's emu mode drive the engine against a model in real time.
 *
 * Timing. The model runs on its own nanosecond clock, mapped onto
 * CLOCK_MONOTONIC at open so that the model's "now" is the moment its
 * preconditioning fill ended. Each request asks qs_model_submit() for its
 * completion time at the moment it is submitted; the request waits in a
 * min-heap by that time, and one loop timer (qs_uloop_timer_set, no kernel
 * object, no thread, no busy wait) fires at the earliest one. A request is
 * completed once its time has come and its data has moved; when the host is
 * slower than the model (a busy machine, a VM under TCG) completions come
 * late, never early: qs_emu_get_stats() reports by how much.
 *
 * Data. Writes, reads and discards take effect on the store when they are
 * submitted (so reads see every write submitted before them; in-flight
 * overlapping requests are unordered, as on a real drive), and the
 * completion is delivered at the model's time:
 *  - QS_EMU_RAM: an anonymous private mapping of the device size, reserved
 *    lazily (a page costs memory once written; discard gives whole pages
 *    back with MADV_DONTNEED, which reads back as zeroes). Nothing survives
 *    the process: durability across a restart is nil.
 *  - QS_EMU_FILE: a regular file (created or extended to the size) or a
 *    block device (claimed exclusively, QS_UVOL_EXCL: refused while mounted
 *    or held), through a qs_uvol on the same loop (O_DIRECT where the
 *    file system has it, else buffered): the request completes at the later
 *    of the model's time and the file I/O's completion. Flush and FUA reach
 *    the file (fdatasync / RWF_DSYNC), so the data survives a restart of the
 *    process and, after a flush, of the machine.
 *  - QS_EMU_NONE: no data; reads return zeroes (benchmarks that never look
 *    at data).
 *
 * Model. The model is built for model_bytes (default: the device size
 * rounded up to the IU); the device is its first size bytes, so a larger
 * model makes the device a span of a bigger drive (docs/MODEL.md, Scaling:
 * the model keeps the profile's superblock count only from a certain
 * capacity on). Preconditioning happens at open, on the model only (it
 * stores no data): a sequential fill of the whole model by default, as the
 * published methods do before measuring, so the emulated drive starts in a
 * full, steady state; or a fill in random IU order, or none (fresh drive).
 * The model's state is not saved: every open starts from that state again.
 *
 * Flags: QS_VOL_VOLATILE_CACHE when the profile has no power-loss
 * protection (the model charges the flush), or when the file backing
 * needs fdatasync. A FUA write to a volume with a volatile cache costs a
 * write plus a flush in the model.
 *
 * Threading: single-threaded, like every volume: the ops, the loop and
 * every callback on the thread that runs the loop.
 */
#ifndef QS_HOST_EMU_VOL_H
#define QS_HOST_EMU_VOL_H

#include <stddef.h>
#include <stdint.h>

#include "host/model.h"
#include "host/profile.h"
#include "host/uloop.h"
#include "qlcshape/vol.h"

enum qs_emu_backing {
	QS_EMU_RAM = 0,	 /* anonymous memory of the device size */
	QS_EMU_FILE = 1, /* conf.path: regular file or block device */
	QS_EMU_NONE = 2, /* timing only: writes dropped, reads give zeroes */
};

enum qs_emu_precond {
	QS_EMU_PRECOND_SEQ = 0,	   /* whole model filled sequentially (default) */
	QS_EMU_PRECOND_RANDOM = 1, /* every IU written once, random order */
	QS_EMU_PRECOND_NONE = 2,   /* fresh, empty drive */
};

struct qs_emu_conf {
	const struct qs_profile *profile; /* copied by the model */
	uint64_t size;			  /* device bytes: > 0, a multiple of 4096 */
	uint64_t model_bytes;		  /* model capacity; 0: size rounded up to the IU */
	enum qs_emu_backing backing;
	const char *path;		  /* QS_EMU_FILE only */
	enum qs_emu_precond precondition;
	uint64_t seed;			  /* QS_EMU_PRECOND_RANDOM's order */
};

struct qs_emu_stats {
	uint64_t reads, read_bytes, writes, write_bytes, flushes, discards;
	uint64_t errors;       /* requests completed with an error */
	uint64_t completions;  /* requests completed after their model time */
	uint64_t late_ns_sum;  /* sum over those of (delivery - model time) */
	uint64_t late_ns_max;
	struct qs_model_counters model; /* the drive's own view (IU RMW, GC...) */
};

struct qs_emu; /* opaque */

/*
 * Build the model, precondition it, set up the backing store. loop must
 * outlive the volume and is where completions are delivered. On error
 * returns -errno and writes one message to err naming what failed, the
 * value and what is allowed (the caller adds which config key it came
 * from). The caller owns *out and frees it with qs_emu_close().
 */
int qs_emu_open(struct qs_emu **out, struct qs_uloop *loop, const struct qs_emu_conf *conf,
		char *err, size_t errlen);

/*
 * Free the volume. Call it with no request in flight (qs_emu_inflight() ==
 * 0) or after the loop was torn down (qs_uloop_exit): completions still
 * pending are then dropped without their callbacks.
 */
void qs_emu_close(struct qs_emu *e);

/* The struct qs_vol to hand to the engine (owned by e). */
struct qs_vol *qs_emu_vol(struct qs_emu *e);

/* Requests submitted whose callback has not run yet. */
uint64_t qs_emu_inflight(const struct qs_emu *e);

/* Counters so far (see struct qs_emu_stats). */
void qs_emu_get_stats(const struct qs_emu *e, struct qs_emu_stats *s);

/* Start late_ns_max afresh (the other counters run on), so that a caller
 * measuring one stretch of a drive's life gets that stretch's maximum. */
void qs_emu_reset_late_max(struct qs_emu *e);

/* The model (read-only: capacity, profile, counters, clones for tests). */
const struct qs_model *qs_emu_model(const struct qs_emu *e);

/* The model's time at CLOCK_MONOTONIC time mono_ns, and back. */
uint64_t qs_emu_model_time(const struct qs_emu *e, uint64_t mono_ns);
uint64_t qs_emu_mono_time(const struct qs_emu *e, uint64_t model_ns);

/* Model time the preconditioning fill took (0 for QS_EMU_PRECOND_NONE). */
uint64_t qs_emu_fill_ns(const struct qs_emu *e);

const char *qs_emu_backing_name(enum qs_emu_backing b);
const char *qs_emu_precond_name(enum qs_emu_precond p);

#endif
