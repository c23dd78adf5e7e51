/* SPDX-License-Identifier: MIT */
/*
 * The integrated A/B bench: jobs of a fio-style job file driven through the
 * real engine (cache/) on the deterministic simulator (bench/sim.h), the
 * QLC device model as the engine's QLC volume and a fast-tier model as its
 * log volume, shaping off (QS_MODE_PASSTHROUGH) and on (QS_MODE_CACHE with
 * a destage policy), through the job driver of bench/drive.h. Commands:
 * `qlcshape bench run|ab|curve` (qs_cmd_bench_run & co. in cmds.h);
 * docs/BENCH.md describes them.
 *
 * A "world" holds what every run of one invocation shares: the two
 * profiles, the scale, and the QLC model preconditioned once (sequential
 * fill of the whole drive, as the published fio method does). Each variant
 * runs the job file on a drive of its own (struct qs_bench_drive, a deep
 * copy of that model), group after group, each finding the drive as the
 * one before left it, as a real drive running a fio job file does; or,
 * with no drive given, a group starts from a fresh copy of the filled
 * drive (--fresh-drive). A variant's runs are then a pure function of
 * (job file, profiles, scale, cache size, variant, seed), and variants are
 * independent of each other and of their order.
 *
 * Single-threaded; nothing here reads a real clock except the progress
 * display and the wall-time figure (neither reaches the JSON).
 */
#ifndef QS_BENCH_RUN_H
#define QS_BENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qlcshape/engine.h"

#include "job.h"
#include "host/model.h"
#include "report.h"

struct qs_drv_sizes; /* bench/drive.h */

/* What a world is built from. */
struct qs_bench_conf {
	const char *profile;	/* QLC profile name or path (qs_profile_path) */
	const char *fast;	/* fast-tier profile name or path */
	uint64_t cache_bytes;	/* log size at the real drive's scale */
	uint64_t scale_bytes;	/* QLC model capacity; 0 = default (as calibrate) */
	double rating_bytes;	/* endurance rating override (bytes); 0 = the profile's */
	bool progress;		/* progress line on stderr (caller checks isatty) */
	uint32_t op_pct;	/* log placement: over-provisioning (default 20) */
	uint64_t band_bytes;	/* log placement: band size; 0 = a superblock of the model */
	uint64_t map_dram_bytes; /* log placement: map DRAM at the real drive's scale;
				    0 = the engine's default */
	uint32_t map_keep;	/* log placement: engine.map_keep_per_page (a
				   timing-only prototype); 0 = none */
	uint64_t dram_limit_bytes; /* engine.dram_limit at the real drive's scale
				      (qs_drv_dram_conf); 0 = none */
};

/* Defaults: p5316-30t, optane, 400 GB cache, default scale. */
void qs_bench_conf_default(struct qs_bench_conf *c);

struct qs_bench_world;

/*
 * Load both profiles and build the QLC model at the scale, not yet
 * preconditioned: the caller checks what it can (job file, traces) first,
 * then calls qs_bench_world_fill before any run. On error returns -errno
 * and writes one line into err. The caller owns *out (free with
 * qs_bench_world_free); conf's strings are copied.
 */
int qs_bench_world_new(const struct qs_bench_conf *conf, struct qs_bench_world **out,
		       char *err, size_t errlen);

/*
 * Precondition the world's drive (the sequential fill of the whole drive)
 * and freeze it for the runs to clone; once, before the first
 * qs_bench_run_group (which refuses an unfilled world), again a no-op.
 * 0, or -errno with one line in err.
 */
int qs_bench_world_fill(struct qs_bench_world *w, char *err, size_t errlen);

/* The QLC model's indirection unit in bytes (filled or not). */
uint32_t qs_bench_world_iu(const struct qs_bench_world *w);
void qs_bench_world_free(struct qs_bench_world *w);

/*
 * The engine settings of log placement in this world: op_pct and the band
 * size (conf's, or one superblock of the QLC model, whole IUs, so that the
 * drive sees whole superblocks written sequentially; 1 GiB scaled like the
 * log for a model without NAND). conf is filled with the engine's defaults
 * first.
 */
void qs_bench_world_log_conf(const struct qs_bench_world *w, struct qs_engine_conf *conf);

/*
 * The world's sizes (bench/drive.h; owned by w): capacity, the QLC model's
 * (scaled) capacity, what job percentages refer to; log_bytes, the log
 * volume after scaling; rating_bytes, the endurance rating the life
 * figure uses in bytes written (NAN when there is none: no --rating-pbw and
 * no endurance_pbw in the profile).
 */
const struct qs_drv_sizes *qs_bench_world_sizes(const struct qs_bench_world *w);
/* Real capacity / model capacity (1 when unscaled). */
double qs_bench_world_scale(const struct qs_bench_world *w);
/* The QLC profile the rating and its pattern come from (owned by w). */
const struct qs_profile *qs_bench_world_qlc_profile(const struct qs_bench_world *w);
/* The fast tier's profile, as the QLC's. */
const struct qs_profile *qs_bench_world_fast_profile(const struct qs_bench_world *w);

/*
 * The devices one variant runs its groups on, as fio runs a job file on
 * one device: a copy of the world's filled QLC drive that keeps its state
 * (mapping, validity, GC, timelines) from group to group, the fast tier,
 * the simulation's clock and the engine itself, left open from group to
 * group (with shaping on its log, DRAM buffer and, with log placement,
 * its map of where the data went; destage and GC go on into the next
 * group). The first group formats the engine; qs_bench_drive_free closes
 * it.
 */
struct qs_bench_drive;

/*
 * A drive of its own for one variant, a copy of w's filled drive (w must
 * be filled: qs_bench_world_fill), into *out (the caller's, freed with
 * qs_bench_drive_free before w). 0, or -errno with one line in err.
 */
int qs_bench_drive_new(const struct qs_bench_world *w, struct qs_bench_drive **out, char *err,
		       size_t errlen);
void qs_bench_drive_free(struct qs_bench_drive *d);

/* One variant of a job: shaping off, or on with a policy. */
struct qs_bench_variant {
	bool shaping;
	enum qs_order order;	/* used when shaping */
	enum qs_placement placement; /* used when shaping */
	uint64_t rate_iops;	/* != 0: override the job's rate_iops (per clone) */
	bool recovery;		/* shaping on: measure recovery after the window
				   (struct qs_bench_recovery; sim only) */
	/* Engine settings over its defaults, used when shaping and set
	 * (bench run --bypass-min, --pace-pct): engine.bypass_min_bytes and
	 * policy.pace_pct. */
	bool set_bypass, set_pace;
	uint64_t bypass_min_bytes;
	uint32_t pace_pct;
};

/*
 * Recovery measured after a run (qs_drv_run.recovery): power is cut at the
 * end of the measured window, with the engine's own I/O in flight, and the
 * engine reopened on what the fast tier holds; then closed cleanly and
 * opened again. Times are on the run's clock (virtual in the simulator:
 * the devices' time alone); CPU seconds are the process's real CPU time
 * the opens took, which the simulator does not charge (never in a file:
 * they depend on the machine).
 */
struct qs_bench_recovery {
	bool measured;
	uint64_t log_used_bytes;	/* log in use at the cut */
	uint64_t cached_blocks;		/* blocks whose newest copy was in the log */
	uint64_t map_bytes;		/* DRAM of the map (log placement) */
	uint64_t map_region_bytes;	/* map pages on the fast tier (log placement) */
	uint64_t dirty_ns;		/* open after the cut, until it is ready */
	uint64_t clean_ns;		/* open after a clean close */
	double dirty_cpu_s, clean_cpu_s;
};

/* Everything one run measured, over its measured window (after ramp). */
struct qs_bench_result {
	struct qs_report_run rep;	/* job/policy point into static or job storage */
	struct qs_engine_stats eng;	/* engine counters, window delta (gauges: at end) */
	struct qs_model_counters qlc;	/* QLC model counters, window delta */
	struct qs_model_counters fast;	/* fast model counters, window delta */
	uint64_t ios;			/* client I/Os completed in the whole run */
	uint64_t sim_ns;		/* simulated time of the run (ramp included;
					   the whole group's for a group) */
	uint64_t window_ns;		/* measured time */
	double wall_s;			/* wall-clock seconds of the run or group
					   (not in any report) */
	struct qs_bench_recovery rec;	/* with qs_bench_variant.recovery */
};

/*
 * Run one job in one variant in w with seed; fills *res. Returns 0, or
 * -errno with a message in err (a submission the engine refused, an engine
 * that failed to open, a bad trace line). res->rep.job points into job.
 */
int qs_bench_run_job(struct qs_bench_world *w, const struct qs_job *job,
		     const struct qs_bench_variant *v, uint64_t seed,
		     struct qs_bench_result *res, char *err, size_t errlen);

/*
 * Run jobs[0..njobs) together on one engine and drive copy, as fio runs the
 * jobs between two stonewalls: all start at the same time, each with its
 * own clones, ramp, runtime and client figures; the QLC and fast-tier
 * figures of each are the whole drive's over that job's window (the jobs
 * share the drive). Fills res[0..njobs), one per job; a job that fio's
 * group_reporting sums into an earlier job's entry has rep.members 0 (the
 * entry's rep.members counts its jobs, its figures are theirs together).
 * Same errors as qs_bench_run_job (which is this with one job).
 */
int qs_bench_run_group(struct qs_bench_world *w, const struct qs_job *jobs, size_t njobs,
		       const struct qs_bench_variant *v, uint64_t seed,
		       struct qs_bench_result *res, char *err, size_t errlen);

/*
 * qs_bench_run_group that also fills fio's report entries into fio (room
 * for one per clone of the jobs) and their number into *nfio: each clone
 * of a job without group_reporting on its own, the clones and jobs that
 * group_reporting sums together as one (struct qs_drv_run's fio).
 */
int qs_bench_run_group_fio(struct qs_bench_world *w, const struct qs_job *jobs, size_t njobs,
			   const struct qs_bench_variant *v, uint64_t seed,
			   struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			   char *err, size_t errlen);

/*
 * qs_bench_run_group_fio on drive d (NULL: a fresh copy of w's filled
 * drive and a new engine, as qs_bench_run_group_fio): the group starts
 * when d's last group ended, on the state it left (its engine too), and
 * leaves d as it ends. d belongs to one variant of w (v each time); the
 * caller runs that variant's groups in the job file's order on it. After
 * a failed group d's engine is closed, and the next group formats one.
 */
int qs_bench_run_group_on(struct qs_bench_world *w, struct qs_bench_drive *d,
			  const struct qs_job *jobs, size_t njobs,
			  const struct qs_bench_variant *v, uint64_t seed,
			  struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			  char *err, size_t errlen);

#endif
