/* SPDX-License-Identifier: MIT */
/*
 * The bench's real-time driver: the jobs of bench/run.h driven through the
 * real engine on the real clock (qs_henv, host/env.h) and an
 * io_uring loop (qs_uloop), instead of on the simulator.
 *
 *  - dev mode: the QLC and the fast tier are block devices or regular
 *    files (--qlc-dev, --fast-dev), opened as O_DIRECT io_uring volumes
 *    (qs_uvol). Block devices are claimed with O_EXCL for the whole
 *    command, so a device that holds a mounted file system or is in use
 *    (LVM, MD, another O_EXCL holder) is refused. The runs overwrite both.
 *  - emu mode: both tiers are emulated drives (qs_emu,
 *    include/host/emu_vol.h): the device models of sim mode, at the same
 *    scale and log size, completing requests in real time. Every run opens
 *    them afresh (the QLC model preconditioned by a sequential fill, as in
 *    sim mode), so runs do not see each other's writes. Timing only, as in
 *    sim mode: the drives keep no data (reads return zeroes), which changes
 *    no timing; the engine still does all its work on the data (checksums,
 *    copies), since in real time that work costs the clock.
 *
 * Same jobs, same variants, same figures (struct qs_bench_result, filled as
 * qs_bench_run_group fills it), with these differences (docs/BENCH.md):
 * runtime and ramp_time are wall-clock time; the QLC write figures
 * (writes, bytes, whole-IU writes) are counted by a wrapper around the QLC
 * volume, i.e. what the engine actually sent the device; dev mode has no
 * drive model, hence no WAF IU and no life figure (NAN), and the device
 * keeps what earlier runs wrote (no preconditioning, no copy per run);
 * results are not reproducible to the byte.
 *
 * Every 4 KiB block a run writes starts with a stamp (struct qs_drv_stamp,
 * bench/drive.h) naming its own byte offset and the run's seed, so a test
 * can read the devices back and check that every block holds either what was there
 * before or data written for that very offset.
 *
 * Single-threaded: one world, its loop and its runs belong to the thread
 * that created the world.
 */
#ifndef QS_BENCH_RT_H
#define QS_BENCH_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drive.h"
#include "run.h"

enum qs_rt_kind {
	QS_RT_DEV = 0, /* block devices or files */
	QS_RT_EMU = 1, /* emulated drives (device models in real time) */
};

struct qs_rt_conf {
	enum qs_rt_kind kind;
	const char *qlc_dev;	/* dev: QLC device or file (required) */
	const char *fast_dev;	/* dev: fast-tier device or file; needed when
				   a run has shaping on, may be NULL otherwise */
	const char *profile;	/* QLC profile: its IU; emu: the QLC model */
	const char *fast;	/* emu: the fast-tier profile */
	uint64_t cache_bytes;	/* dev: log size cap (the fast device's size if
				   smaller); emu: log size at the real drive's
				   scale, scaled with the model as in sim mode */
	uint64_t scale_bytes;	/* emu: QLC model capacity; 0 = as sim mode */
	double rating_bytes;	/* emu: endurance rating override (bytes); 0 = built in */
	bool yes_overwrite;	/* dev: the user confirmed the devices may be overwritten */
	bool progress;		/* progress line on stderr (caller checks isatty) */
	/* dev: write the QLC device once in order before each variant's runs
	 * (before each run with --fresh-drive), as the published methods fill
	 * a drive before measuring; false: the device as it is */
	bool precondition;
	/* log placement among the variants: the fast tier holds the map
	 * region besides the log (emu: the emulated device grows by it; dev:
	 * the log is what the device leaves, so every variant has the same) */
	bool log_placement;
	uint32_t op_pct;	/* log placement: engine.op_pct */
	uint64_t band_bytes;	/* log placement: band size; 0 = as qs_drv_log_conf */
	uint64_t map_dram_bytes; /* log placement: map DRAM; 0 = the engine's default
				    (scaled like the log on an emulated drive) */
	uint64_t dram_limit_bytes; /* engine.dram_limit; 0 = none (divided for the
				      real drive and scaled on an emulated one) */
};

struct qs_rt_world;

/*
 * Load the profile and open (and, for block devices, claim exclusively)
 * the devices. Refuses without conf->yes_overwrite, a block device that is
 * mounted or in use, a path that is neither a block device nor a regular
 * file, and the same device given twice. On error returns -errno and
 * writes one line naming the path or option into err. The caller owns *out
 * (qs_rt_world_free); conf and its strings need not outlive the call.
 */
int qs_rt_world_new(const struct qs_rt_conf *conf, struct qs_rt_world **out, char *err,
		    size_t errlen);
void qs_rt_world_free(struct qs_rt_world *w);

/*
 * The world's sizes (bench/drive.h; owned by w): capacity, the engine's
 * client capacity (QLC size rounded down to the IU), what job percentages
 * refer to; log_bytes, the log a shaping-on run uses (0 without a fast
 * device); emu: the rating as sim mode's, dev: none (NAN).
 */
const struct qs_drv_sizes *qs_rt_world_sizes(const struct qs_rt_world *w);
/*
 * The engine settings of log placement in this world (qs_drv_log_conf):
 * emu: a band is one superblock of the QLC model; dev: 1 GiB unless
 * --band-size.
 */
void qs_rt_world_log_conf(const struct qs_rt_world *w, struct qs_engine_conf *c);

/* Dev mode, --precondition seq: how many fills of the QLC device were done
 * and how long the last one took (0 and 0 without). */
void qs_rt_world_fill(const struct qs_rt_world *w, uint64_t *fills, uint64_t *last_ns);

/* The QLC IU in bytes (from the profile). */
uint32_t qs_rt_world_iu(const struct qs_rt_world *w);
/* One line describing the devices (paths, sizes, O_DIRECT or buffered;
 * emu: the models, scale and log). */
void qs_rt_world_describe(const struct qs_rt_world *w, char *buf, size_t len);

/* Emu mode: how late one emulated device delivered completions in the last
 * run (all zero in dev mode or before a run). */
struct qs_rt_late {
	uint64_t requests;    /* requests completed */
	uint64_t late;	      /* of those, delivered after their model time */
	uint64_t late_ns_sum; /* sum of the delays of the late ones */
	uint64_t late_ns_max;
};
void qs_rt_world_late(const struct qs_rt_world *w, struct qs_rt_late *qlc,
		      struct qs_rt_late *fast);

/*
 * Run jobs[0..njobs) together in variant v on the real clock, as
 * qs_bench_run_group does on the simulator (same semantics for groups,
 * ramp, runtime, open and closed loop), and fill res[0..njobs). res->qlc
 * and res->fast: emu, the models' counters as in sim mode; dev, what the
 * wrappers counted at the volumes (host_* fields, the others 0). Returns 0
 * or -errno with a
 * message in err. Outside a carry, a run gets drives of its own (emu:
 * fresh emulated drives, the QLC filled in order) and a shaping-on run
 * formats a new log on the fast device; every run closes the engine (no
 * drain) before returning. Inside one (qs_rt_carry_begin), the run takes
 * the drives and the engine as the variant's run before left them.
 */
int qs_rt_run_group(struct qs_rt_world *w, const struct qs_job *jobs, size_t njobs,
		    const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		    char *err, size_t errlen);

/* qs_rt_run_group that also fills fio's report entries into fio and their
 * number into *nfio, as qs_bench_run_group_fio. */
int qs_rt_run_group_fio(struct qs_rt_world *w, const struct qs_job *jobs, size_t njobs,
			const struct qs_bench_variant *v, uint64_t seed,
			struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			char *err, size_t errlen);

/*
 * A carry: variant v runs a whole job file, group after group, on one set
 * of drives (emu: emulated drives opened and filled here, once; dev: the
 * devices), with the engine each run leaves open taken by the next, as a
 * real drive running a fio job file keeps its state from job to job. Call
 * qs_rt_carry_begin before the variant's first run (v must outlive the
 * carry and be the v of every run in it) and qs_rt_carry_end after its
 * last, or after a failure: it closes the engine left open (no drain) and
 * frees emulated drives. 0 or -errno with one line in err (end: err may be
 * NULL).
 */
int qs_rt_carry_begin(struct qs_rt_world *w, const struct qs_bench_variant *v, char *err,
		      size_t errlen);
int qs_rt_carry_end(struct qs_rt_world *w, char *err, size_t errlen);

/* qs_rt_run_group with one job. */
int qs_rt_run_job(struct qs_rt_world *w, const struct qs_job *job,
		  const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		  char *err, size_t errlen);

#endif
