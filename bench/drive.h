/* SPDX-License-Identifier: MIT */
/*
 * qs_drv: the one job driver of the bench. It opens an engine over the
 * volumes a world gives it, runs a group of jobs through it (clones, I/O
 * slots, ramp and measured windows, closed and open loop, as fio runs the
 * jobs between two stonewalls), closes the engine whatever happened, and
 * fills the figures every mode shares. Where time comes from is the
 * world's: the simulator (bench/run.c, virtual time) or the real clock over
 * an io_uring loop (bench/rt.c, emu and dev modes), behind struct
 * qs_drv_world_ops.
 *
 * Single-threaded: a run belongs to the thread that calls qs_drv_run, and
 * every world callback runs on it.
 */
#ifndef QS_BENCH_DRIVE_H
#define QS_BENCH_DRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qlcshape/engine.h"

#include "host/profile.h"

#include "job.h"
#include "run.h"

/*
 * What the driver asks of the world a run is in. ctx is the world's; the
 * driver never frees it.
 */
struct qs_drv_world_ops {
	/* The world's clock, ns: every time the driver handles is on it. */
	uint64_t (*now)(void *ctx);
	/*
	 * Let the world run (complete I/O, fire e's timer when it is due; e
	 * may be NULL before the engine exists) until deadline at most
	 * (UINT64_MAX: none), or until wake is called, or, for a world that
	 * runs in turns, for one turn. 0, or -errno: -EIO when nothing is left
	 * that could ever happen, another from the world's loop.
	 */
	int (*wait)(void *ctx, struct qs_engine *e, uint64_t deadline);
	/* Make the current wait return soon: something the driver waits for
	 * happened, or a deadline came nearer. NULL for a world whose every
	 * wait is one turn. */
	void (*wake)(void *ctx);
	/* Job job's measured window opens (end false) or closes: keep the
	 * world's device counters for result. */
	void (*window)(void *ctx, size_t job, bool end);
	/* The device figures into res (res->qlc, res->fast, res->rep.qlc,
	 * res->rep.fast_write_bytes, res->rep.mode) over the window from job
	 * open's window opening to job close's closing (a report entry that
	 * sums several jobs spans their windows; one job: open == close);
	 * res->eng, res->window_ns and the client figures are already filled. */
	void (*result)(void *ctx, size_t open, size_t close, struct qs_bench_result *res);
	/* Power to both devices (qs_sim_vol_set_power): off, every request
	 * in flight and every later one is lost without a callback. NULL for
	 * a world that cannot cut power (real devices): no recovery runs. */
	void (*power)(void *ctx, bool on);
	/* CPU seconds the world itself spent so far moving the devices' data
	 * (a simulated store's copies, which real devices do by DMA), for the
	 * engine's own CPU figure, while counted (dev_cpu_count); NULL: none. */
	double (*dev_cpu_s)(void *ctx);
	/* Count what dev_cpu_s gives from now on (on) or no more: counting
	 * costs two reads of the thread's CPU clock a request, so the driver
	 * counts only while it measures the engine's CPU. NULL with dev_cpu_s. */
	void (*dev_cpu_count)(void *ctx, bool on);
};

/* One run: a group of jobs in one variant, in one world. */
struct qs_drv_run {
	const struct qs_drv_world_ops *ops;
	void *ctx;
	/* the engine to open: environment, volumes (fast NULL when shaping is
	 * off), open flags besides QS_OPEN_FORMAT */
	const struct qs_env *env;
	struct qs_vol *fast, *qlc;
	uint32_t iu_bytes;
	uint32_t op_pct;     /* log placement: engine.op_pct */
	uint64_t band_bytes; /* log placement: engine.band_size */
	uint64_t map_dram_limit; /* log placement: engine.map_dram_limit */
	uint32_t map_keep_per_page; /* log placement, sim: engine.map_keep_per_page */
	uint32_t map_entry_bytes; /* log placement: the real drive's map entry width */
	/* engine.dram_limit at the real drive's scale (0: none;
	 * QS_CONF_DRAM_AUTO: the real drive's default), divided
	 * for the real drive (a QLC of real_qlc bytes, a log of real_log)
	 * and scaled to the run's devices by dram_scale (real bytes per run
	 * byte; 1: the run's devices are the real ones) (qs_drv_dram_conf) */
	uint64_t dram_limit, real_qlc, real_log;
	double dram_scale;
	unsigned open_flags;
	const struct qs_job *jobs;
	size_t njobs;
	const struct qs_bench_variant *v;
	uint64_t seed;
	/*
	 * Client buffers. With shared_buf, every I/O uses that one buffer of
	 * shared_bytes, never read (timing-only volumes). Without, each I/O
	 * slot has a buffer of its own for the largest I/O the jobs issue,
	 * filled with incompressible bytes, and every 4 KiB block a write
	 * carries starts with a stamp (struct qs_drv_stamp).
	 */
	void *shared_buf;
	uint64_t shared_bytes;
	bool progress;		/* progress line on stderr */
	const char *clock_name;	/* in the progress line: "simulated", "(wall clock)" */
	/*
	 * fio's report entries (qs_report_fio_json), when not NULL: room for
	 * one per clone of the jobs, filled with fio's entries in order (each
	 * clone of a job without group_reporting alone, a job with it summed
	 * into the entry before when of the same group), their number in
	 * *nfio. Device figures as res's, over each entry's jobs' windows.
	 */
	struct qs_report_run *fio;
	size_t *nfio;
	/*
	 * The engine carried from group to group (a variant's job file on one
	 * drive, as fio runs it on one device). NULL: this run formats an
	 * engine and closes it. Else in: an open engine, left by the run
	 * before on these very volumes, environment and variant, to run on
	 * instead of formatting one (NULL: format); out: the engine left open
	 * for the next run, background work (destage, GC, checkpoints) and
	 * all, or NULL when the run failed and closed it. The caller closes
	 * the last one (qs_drv_engine_close).
	 */
	struct qs_engine **carry;
	/* The least time a client I/O takes, issue to completion (0: none):
	 * QS_DRV_MIN_LAT_NS. */
	uint64_t min_lat_ns;
};

/*
 * The least time a client I/O takes: the host's own work for one that
 * needs no device (a read of blocks never written or of the DRAM buffer).
 * 1 us is the engine's CPU for a cached 4 KiB read (`qlcshape bench
 * engine`, read_4k_cached: 945 ns on the 2-core development machine);
 * ublk's round trip would add to it. I/Os that reach a device take longer
 * anyway, so only those are changed. Without it, on a virtual clock such
 * a job runs for ever at one instant. The real-time worlds apply it too,
 * so that both modes count such I/Os alike (on the real clock they take
 * about that anyway).
 */
#define QS_DRV_MIN_LAT_NS 1000u

/*
 * Open the engine (QS_OPEN_FORMAT; or take *d->carry), run d's jobs on it
 * and close it (no drain) whether they succeeded or not, unless d->carry
 * asks to leave it open after a run that succeeded; the engine is freed only once
 * closed. With d->v->recovery and shaping on (the world must have power
 * and volumes that keep the fast tier's data, d->open_flags without
 * QS_OPEN_NO_DATA), power is cut after the window and the engine recovered,
 * closed and reopened before that close: res->rec. Fills res[0..njobs),
 * one per job: the bench's report entry of a job at res[i], or, for a job
 * that group_reporting sums into the entry of an earlier job of its group,
 * rep.members 0 and its name (the entry's rep.members counts its jobs);
 * res->sim_ns: the run's time, ramp included; res->wall_s is the caller's.
 * Returns 0, or -errno with one line naming the job in err. Every I/O the
 * run issued has completed when it returns.
 */
int qs_drv_run(const struct qs_drv_run *d, struct qs_bench_result *res, char *err,
	       size_t errlen);

/*
 * Close e, an engine qs_drv_run left open in *carry, on the world of ops
 * and ctx (its devices' I/O in flight completes, no destage), and free it;
 * 0 or -errno. One whose close cannot complete is left allocated (its
 * volumes may still call it).
 */
int qs_drv_engine_close(const struct qs_drv_world_ops *ops, void *ctx, struct qs_engine *e);

/*
 * Log sizes: a bench run's log is whole segments of the engine's default
 * size, and at least QS_DRV_LOG_MIN (a log of a few segments would spend
 * the run throttled). bytes rounded down to whole segments, or 0 when that
 * is under the minimum.
 */
#define QS_DRV_LOG_MIN (8ull << 20)
uint64_t qs_drv_log_bytes(uint64_t bytes);

/*
 * The fast tier's projected life for res->rep.fast_life_years: the
 * rating of fp (its profile; NAN without one) over res's window of writes
 * to it, with res->fast's model counters for its own amplification
 * (qs_report_fast_life). For both worlds, once res's counters are in.
 */
double qs_drv_fast_life(const struct qs_profile *fp, const struct qs_bench_result *res);

/*
 * The engine settings of log placement in a bench world, filled into c
 * over the engine's defaults: iu_bytes, op_pct, and the band: band_bytes
 * when not 0 (--band-size), else one superblock of the QLC model
 * (superblock_bytes, so the drive sees whole superblocks written in
 * order), else, with no model or one without NAND, 1 GiB at the real
 * drive's scale (scale: model bytes per real byte, 1 unscaled); whole IUs,
 * at least two.
 */
void qs_drv_log_conf(uint32_t iu_bytes, uint32_t op_pct, uint64_t band_bytes,
		     uint64_t superblock_bytes, double scale, struct qs_engine_conf *c);
/*
 * engine.map_dram_limit for a bench world: map_dram_bytes (at the real
 * drive's scale; 0 = the engine's default) scaled like the drive, so the
 * share of the map that fits in DRAM is the real drive's; at least the
 * engine's minimum.
 */
uint64_t qs_drv_map_dram(uint64_t map_dram_bytes, double scale);
/*
 * A budget for a bench engine: dram_limit, at the real drive's scale (a
 * QLC of real_qlc bytes, a log of real_log; QS_CONF_DRAM_AUTO: the
 * engine's default for that QLC; 0: none), divided as the engine would
 * divide it over those devices (qs_engine_dram_split), each part then
 * scaled down by scale (real bytes per model byte) into c's
 * log_window_blocks, dirty_ius_max and (log placement) map_dram_limit, so
 * that the model holds the share of its log, dirty IUs and map that the
 * real drive would. c: the engine's configuration for the model, placement
 * and geometry set; its dram_limit is left 0 (scale 1: set to dram_limit,
 * for the engine to divide). 0, or -EINVAL with err saying what the real
 * drive needs at least.
 */
int qs_drv_dram_conf(uint64_t dram_limit, uint64_t real_qlc, uint64_t real_log, double scale,
		     struct qs_engine_conf *c, char *err, size_t errlen);

/* How a world is sized: the client's capacity, the log, the rating. */
struct qs_drv_sizes {
	uint64_t capacity;	 /* what job percentages refer to (whole IUs) */
	uint64_t log_bytes;	 /* the log a shaping-on run uses (0: none) */
	double rating_bytes;	 /* endurance rating for the life figure; NAN if none */
	uint64_t rated_capacity; /* the capacity that rating is for */
	double rating_prog_amp;	 /* NAND bytes per byte written under the rating's
				    pattern (the profile's endurance_prog_amp; 1
				    when not given) */
};

/*
 * The sizes of a world that models the drive of profile p (sim and emu
 * modes): the model at scale_bytes (0: qs_model_default_bytes), the log
 * cache_bytes at the real drive's scale scaled alike (so it keeps its
 * ratio to a span given in percent), the rating rating_bytes (0: the
 * profile's endurance_pbw, if any). 0, or -EINVAL with a message when the
 * scaled log is too small.
 */
int qs_drv_sizes_model(const struct qs_profile *p, uint64_t scale_bytes, uint64_t cache_bytes,
		       double rating_bytes, struct qs_drv_sizes *out, char *err, size_t errlen);

/* The first bytes of every 4 KiB block a stamped run writes (little-endian host). */
#define QS_DRV_STAMP_MAGIC 0x4b4c425452534c51ull /* "QLSRTBLK" */
struct qs_drv_stamp {
	uint64_t magic;	/* QS_DRV_STAMP_MAGIC */
	uint64_t off;	/* byte offset of this block on the client device */
	uint64_t seed;	/* the run's seed */
	uint64_t check;	/* magic ^ off ^ seed, rotated: catches a torn stamp */
};

/* Whether the 4 KiB block at blk is stamped for offset off and seed. */
bool qs_drv_stamp_ok(const void *blk, uint64_t off, uint64_t seed);

#endif
