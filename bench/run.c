/* SPDX-License-Identifier: MIT */
/*
 * The simulator's world for the bench's job driver (bench/drive.h): the
 * filled drive shared by the runs of one invocation, and for each run a
 * fresh simulation whose virtual clock the driver waits on. See
 * bench/run.h and docs/BENCH.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qlcshape/format.h"
#include "host/env.h"
#include "host/profile.h"

#include "delta.h"
#include "drive.h"
#include "run.h"
#include "sim.h"

/* The largest client I/O a run can carry (one shared, never-read buffer). */
#define RN_BUF_BYTES (16u << 20)

struct qs_bench_world {
	struct qs_bench_conf conf;
	char profile_path[512], fast_path[512];
	struct qs_profile qlc_p, fast_p;
	struct qs_drv_sizes sz;	/* capacity: the QLC model's; log_bytes: the fast volume's */
	struct qs_model *filled; /* preconditioned QLC model (a snapshot), cloned per run */
	uint64_t fill_idle_ns;	/* when the filled drive is idle */
	bool is_filled;		/* qs_bench_world_fill has run: filled is the snapshot */
	void *buf;		/* RN_BUF_BYTES, shared by every I/O */
};

void qs_bench_conf_default(struct qs_bench_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->profile = "p5316-30t";
	c->fast = "optane";
	c->cache_bytes = 400000000000ull; /* 400 GB Optane-class log */
	c->op_pct = 20;
}

void qs_bench_world_log_conf(const struct qs_bench_world *w, struct qs_engine_conf *c)
{
	double scale = (double)w->sz.log_bytes / (double)w->conf.cache_bytes;
	qs_drv_log_conf(qs_model_iu_bytes(w->filled), w->conf.op_pct, w->conf.band_bytes,
			qs_model_superblock_bytes(w->filled), scale, c);
	c->map_dram_limit = qs_drv_map_dram(w->conf.map_dram_bytes, scale);
	c->map_keep_per_page = w->conf.map_keep;
	/* the real drive's entries, so a map page holds what it would hold */
	c->map_entry_bytes = qs_fmt_map_width(w->qlc_p.capacity_bytes / QS_BLOCK_SIZE);
}

int qs_bench_world_new(const struct qs_bench_conf *conf, struct qs_bench_world **out,
		       char *err, size_t errlen)
{
	struct qs_bench_world *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->conf = *conf;
	qs_profile_path(conf->profile, w->profile_path, sizeof(w->profile_path));
	qs_profile_path(conf->fast, w->fast_path, sizeof(w->fast_path));
	w->conf.profile = w->profile_path;
	w->conf.fast = w->fast_path;
	int rc = qs_profile_load(w->profile_path, &w->qlc_p, err, errlen);
	if (!rc)
		rc = qs_profile_load(w->fast_path, &w->fast_p, err, errlen);
	if (rc) {
		free(w);
		return rc;
	}
	rc = qs_drv_sizes_model(&w->qlc_p, conf->scale_bytes, conf->cache_bytes, conf->rating_bytes,
				&w->sz, err, errlen);
	if (rc) {
		free(w);
		return rc;
	}
	uint64_t scaled = w->sz.capacity;
	char why[512];
	rc = qs_model_create(&w->filled, &w->qlc_p, scaled, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "QLC model at %llu bytes: %s", (unsigned long long)scaled,
			 why);
		free(w);
		return rc;
	}
	w->buf = calloc(1, RN_BUF_BYTES);
	if (!w->buf) {
		qs_model_free(w->filled);
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

int qs_bench_world_fill(struct qs_bench_world *w, char *err, size_t errlen)
{
	if (w->is_filled)
		return 0;
	/* Precondition as the published fio method: the whole drive filled
	 * sequentially, then the workloads on their span. */
	w->fill_idle_ns = qs_model_fill_seq(w->filled, 0, 0, qs_model_capacity(w->filled));
	/* Every run clones the filled drive: from a snapshot, a clone costs
	 * the pages of the mapping tables that run writes, not the drive. */
	struct qs_model *snap = qs_model_snapshot(w->filled);
	if (!snap) {
		int rc = -errno;
		snprintf(err, errlen, "QLC model %s: snapshot of the filled drive: %s",
			 w->qlc_p.name, strerror(errno));
		return rc;
	}
	qs_model_free(w->filled);
	w->filled = snap;
	w->is_filled = true;
	return 0;
}

uint32_t qs_bench_world_iu(const struct qs_bench_world *w)
{
	return qs_model_iu_bytes(w->filled);
}

void qs_bench_world_free(struct qs_bench_world *w)
{
	if (!w)
		return;
	qs_model_free(w->filled);
	free(w->buf);
	free(w);
}

const struct qs_drv_sizes *qs_bench_world_sizes(const struct qs_bench_world *w)
{
	return &w->sz;
}

double qs_bench_world_scale(const struct qs_bench_world *w)
{
	return (double)w->qlc_p.capacity_bytes / (double)w->sz.capacity;
}

const struct qs_profile *qs_bench_world_qlc_profile(const struct qs_bench_world *w)
{
	return &w->qlc_p;
}

const struct qs_profile *qs_bench_world_fast_profile(const struct qs_bench_world *w)
{
	return &w->fast_p;
}

/* ---- one run on the simulator ---- */

/* The simulated world of one run: a fresh simulation, a copy of the filled
 * drive, a fresh fast tier; or a drive's, carried from group to group. */
struct rn_sim {
	struct qs_bench_world *w;
	struct qs_sim *sim;
	struct qs_model *qm, *fm;
	struct qs_bench_drive *drive; /* owns sim, qm, fm, qv, fv (NULL: this run does) */
	struct qs_sim_vol *qv, *fv;
	struct qs_engine *e;   /* whose timer the simulation fires */
	uint64_t stop_at;      /* a stop event is pending at this time (0: none) */
	struct rn_window *win; /* one per job */
};

struct qs_bench_drive {
	struct qs_model *m; /* the variant's QLC drive */
	uint64_t free_ns;   /* when the filled drive's resources are idle */
	/* The world its groups share (rs.sim NULL until the first group), so
	 * that the events and timer a group leaves point at memory that
	 * lives on; and the engine left open (qs_drv_run's carry). */
	struct rn_sim rs;
	struct qs_engine *e;
};

int qs_bench_drive_new(const struct qs_bench_world *w, struct qs_bench_drive **out, char *err,
		       size_t errlen)
{
	if (!w->is_filled) {
		snprintf(err, errlen, "QLC model %s: the world's drive is not filled (call "
			 "qs_bench_world_fill first)", w->qlc_p.name);
		return -EINVAL;
	}
	struct qs_bench_drive *d = calloc(1, sizeof(*d));
	if (d)
		d->m = qs_model_clone(w->filled);
	if (!d || !d->m) {
		free(d);
		snprintf(err, errlen, "QLC model %s: no memory for a variant's copy of the drive",
			 w->qlc_p.name);
		return -ENOMEM;
	}
	d->free_ns = w->fill_idle_ns;
	*out = d;
	return 0;
}


/* The device counters at one job's window edges. */
struct rn_window {
	struct qs_model_counters q0, q1, f0, f1;
};


static uint64_t rn_now(void *ctx)
{
	struct rn_sim *s = ctx;
	return qs_sim_now(s->sim);
}

static void rn_ev_stop(void *arg, int res)
{
	(void)res;
	struct rn_sim *s = arg;
	/* an earlier wait's deadline, superseded by a nearer one, does not stop */
	if (qs_sim_now(s->sim) == s->stop_at) {
		s->stop_at = 0;
		qs_sim_stop(s->sim);
	}
}

/* Run events until deadline (an event stops the simulation there) or a
 * wake; -EIO when no event is left. */
static int rn_wait(void *ctx, struct qs_engine *e, uint64_t deadline)
{
	struct rn_sim *s = ctx;
	s->e = e;
	if (deadline != UINT64_MAX && deadline != s->stop_at) {
		if (qs_sim_schedule(s->sim, deadline, rn_ev_stop, s, 0))
			return -ENOMEM;
		s->stop_at = deadline;
	}
	if (!qs_sim_pending(s->sim))
		return -EIO;
	qs_sim_run(s->sim);
	return 0;
}

static void rn_wake(void *ctx)
{
	struct rn_sim *s = ctx;
	qs_sim_stop(s->sim);
}

static void rn_timer(void *arg)
{
	struct rn_sim *s = arg;
	if (s->e)
		qs_engine_timer(s->e);
}

static void rn_window_edge(void *ctx, size_t job, bool end)
{
	struct rn_sim *s = ctx;
	struct rn_window *x = &s->win[job];
	qs_model_get_counters(s->qm, end ? &x->q1 : &x->q0);
	qs_model_get_counters(s->fm, end ? &x->f1 : &x->f0);
}

/* The drives' figures of a report entry: the models' counters from job
 * open's window opening to job close's closing. */
static void rn_result(void *ctx, size_t open, size_t close, struct qs_bench_result *res)
{
	struct rn_sim *s = ctx;
	struct qs_bench_world *w = s->w;
	const struct rn_window *x0 = &s->win[open], *x1 = &s->win[close];
	qs_delta_model_counters(&res->qlc, &x0->q0, &x1->q1);
	qs_delta_model_counters(&res->fast, &x0->f0, &x1->f1);
	struct qs_report_qlc_in qi = {
		.client_write_bytes = res->rep.client_write_bytes,
		.qlc_write_bytes = res->eng.qlc_write_bytes,
		.qlc_writes = res->eng.qlc_writes,
		.qlc_iu_whole_writes = res->eng.qlc_iu_whole_writes,
		.read_fill_bytes = res->eng.read_fill_bytes,
		.drive_write_bytes = res->qlc.host_write_bytes,
		.drive_prog_bytes = res->qlc.host_prog_bytes,
		.drive_nand_prog_bytes = res->qlc.nand_prog_bytes,
		.elapsed_ns = res->window_ns,
		.rating_bytes = w->sz.rating_bytes,
		.rated_capacity = w->sz.rated_capacity,
		.capacity = w->qlc_p.capacity_bytes,
		.rating_prog_amp = w->sz.rating_prog_amp,
	};
	qs_report_qlc_fill(&res->rep.qlc, &qi);
	qs_report_wear_fill(&res->rep.wear, &qi);
	res->rep.fast_write_bytes = res->fast.host_write_bytes;
	res->rep.fast_read_bytes = res->fast.host_read_bytes;
	res->rep.fast_life_years = qs_drv_fast_life(&w->fast_p, res);
	res->rep.mem_scale = qs_bench_world_scale(w);
}

static void rn_power(void *ctx, bool on)
{
	struct rn_sim *s = ctx;
	qs_sim_vol_set_power(s->qv, on);
	qs_sim_vol_set_power(s->fv, on);
}

static double rn_dev_cpu_s(void *ctx)
{
	struct rn_sim *s = ctx;
	return qs_sim_vol_store_cpu_s(s->qv) + qs_sim_vol_store_cpu_s(s->fv);
}

static void rn_dev_cpu_count(void *ctx, bool on)
{
	struct rn_sim *s = ctx;
	qs_sim_vol_count_cpu(s->qv, on);
	qs_sim_vol_count_cpu(s->fv, on);
}

static const struct qs_drv_world_ops rn_ops = {
	.now = rn_now,
	.wait = rn_wait,
	.wake = rn_wake,
	.window = rn_window_edge,
	.result = rn_result,
	.power = rn_power,
	.dev_cpu_s = rn_dev_cpu_s,
	.dev_cpu_count = rn_dev_cpu_count,
};

static bool rn_keeps_data(const struct qs_bench_variant *v)
{
	return v->shaping && v->recovery;
}

/* The fast tier's model, sized for v: log placement keeps its map region
 * there besides the log, so the log is the same in every variant. */
static struct qs_model *rn_fast_new(struct qs_bench_world *w, const struct qs_bench_variant *v)
{
	uint64_t fast = w->sz.log_bytes;
	if (v->shaping && v->placement == QS_PLACE_LOG) {
		struct qs_engine_conf lc;
		qs_bench_world_log_conf(w, &lc);
		fast += qs_engine_conf_map_bytes(&lc, qs_model_capacity(w->filled));
	}
	return qs_model_new(&w->fast_p, fast);
}

/*
 * The world of a run for njobs jobs: drive d's, set up by its first group
 * and carried on (its clock goes on where the last group left it), or
 * with d NULL a fresh simulation with a copy of the filled drive and a new
 * fast tier, at the time the filled drive is idle.
 */
static int rn_sim_new(struct rn_sim *s, struct qs_bench_world *w, struct qs_bench_drive *d,
		      size_t njobs, const struct qs_bench_variant *v)
{
	s->w = w;
	s->drive = d;
	s->e = NULL;
	s->win = calloc(njobs, sizeof(*s->win));
	if (!s->win)
		return -ENOMEM;
	if (s->sim) /* the drive's, from its last group */
		return 0;
	s->sim = qs_sim_new();
	s->qm = d ? d->m : qs_model_clone(w->filled);
	s->fm = rn_fast_new(w, v);
	if (!s->sim || !s->qm || !s->fm)
		return -ENOMEM;
	/* the filled drive's resources are busy until it is idle: start there */
	qs_sim_run_until(s->sim, d ? d->free_ns : w->fill_idle_ns);
	/* Timing only: the engine's destage then writes whatever is in its
	 * buffers, which a benchmark never looks at; so the engine is opened
	 * with QS_OPEN_NO_DATA and skips checksums and copies of data. A run
	 * that measures recovery keeps the fast tier's data (the log and the
	 * map pages recovery reads; client data is the shared buffer's
	 * zeroes) and the engine does all its work on it. */
	s->qv = qs_sim_vol_new(s->sim, s->qm, QS_SIM_DATA_NONE);
	s->fv = qs_sim_vol_new(s->sim, s->fm, rn_keeps_data(v) ? QS_SIM_DATA_STORE
							    : QS_SIM_DATA_NONE);
	if (!s->qv || !s->fv)
		return -ENOMEM;
	qs_sim_set_timer_cb(s->sim, rn_timer, s);
	return 0;
}

/* The world of s: volumes, simulation and both models (qm is a drive's
 * own m when it has one). */
static void rn_world_free(struct rn_sim *s)
{
	qs_sim_vol_free(s->qv);
	qs_sim_vol_free(s->fv);
	qs_sim_free(s->sim);
	qs_model_free(s->qm);
	qs_model_free(s->fm);
}

/* The run's part of s; a drive's world stays for its next group. */
static void rn_sim_free(struct rn_sim *s)
{
	free(s->win);
	s->win = NULL;
	if (!s->drive)
		rn_world_free(s);
}

void qs_bench_drive_free(struct qs_bench_drive *d)
{
	if (!d)
		return;
	struct rn_sim *s = &d->rs;
	/* The engine carried from the last group closes on the drive's clock;
	 * one that cannot close may still be called by the volumes, which
	 * then stay allocated with it. */
	if (d->e && qs_drv_engine_close(&rn_ops, s, d->e)) {
		fprintf(stderr, "qlcshape bench: the engine carried from group to group did not "
				"close; its devices are left allocated\n");
		return;
	}
	if (s->sim)
		rn_world_free(s); /* its qm is d->m */
	else
		qs_model_free(d->m);
	free(d);
}

int qs_bench_run_group_fio(struct qs_bench_world *w, const struct qs_job *jobs, size_t njobs,
			   const struct qs_bench_variant *v, uint64_t seed,
			   struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			   char *err, size_t errlen)
{
	return qs_bench_run_group_on(w, NULL, jobs, njobs, v, seed, res, fio, nfio, err, errlen);
}

int qs_bench_run_group_on(struct qs_bench_world *w, struct qs_bench_drive *drive,
			  const struct qs_job *jobs, size_t njobs,
			  const struct qs_bench_variant *v, uint64_t seed,
			  struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			  char *err, size_t errlen)
{
	uint64_t wall0 = qs_henv_now_ns();
	struct rn_sim own = {0}, *s = drive ? &drive->rs : &own;
	if (!w->is_filled) {
		memset(res, 0, njobs * sizeof(*res));
		snprintf(err, errlen, "job '%s': the world's drive is not filled (call "
			 "qs_bench_world_fill first)", jobs[0].name);
		return -EINVAL;
	}
	int rc = rn_sim_new(s, w, drive, njobs, v);
	struct qs_engine_conf lc;
	qs_bench_world_log_conf(w, &lc);
	if (rc) {
		memset(res, 0, njobs * sizeof(*res));
		snprintf(err, errlen, "job '%s': out of memory setting up the run", jobs[0].name);
	} else {
		struct qs_drv_run d = {
			.ops = &rn_ops,
			.ctx = s,
			.env = qs_sim_env(s->sim),
			.fast = qs_sim_vol_vol(s->fv),
			.qlc = qs_sim_vol_vol(s->qv),
			.iu_bytes = qs_model_iu_bytes(s->qm),
			.op_pct = lc.op_pct,
			.band_bytes = lc.band_bytes,
			.map_dram_limit = lc.map_dram_limit,
			.map_keep_per_page = lc.map_keep_per_page,
			.map_entry_bytes = lc.map_entry_bytes,
			.dram_limit = w->conf.dram_limit_bytes ? w->conf.dram_limit_bytes
			    : w->conf.map_dram_bytes ? 0 : QS_CONF_DRAM_AUTO,
			.real_qlc = w->qlc_p.capacity_bytes,
			.real_log = w->conf.cache_bytes,
			.dram_scale = qs_bench_world_scale(w),
			.open_flags = rn_keeps_data(v) ? 0 : QS_OPEN_NO_DATA,
			.jobs = jobs,
			.njobs = njobs,
			.v = v,
			.seed = seed,
			.shared_buf = w->buf,
			.shared_bytes = RN_BUF_BYTES,
			.progress = w->conf.progress,
			.clock_name = "simulated",
			.fio = fio,
			.nfio = nfio,
			.carry = drive ? &drive->e : NULL,
			.min_lat_ns = QS_DRV_MIN_LAT_NS,
		};
		rc = qs_drv_run(&d, res, err, errlen);
	}
	rn_sim_free(s);
	double wall = (double)(qs_henv_now_ns() - wall0) / 1e9;
	for (size_t i = 0; i < njobs; i++)
		res[i].wall_s = wall;
	return rc;
}

int qs_bench_run_group(struct qs_bench_world *w, const struct qs_job *jobs, size_t njobs,
		       const struct qs_bench_variant *v, uint64_t seed,
		       struct qs_bench_result *res, char *err, size_t errlen)
{
	return qs_bench_run_group_fio(w, jobs, njobs, v, seed, res, NULL, NULL, err, errlen);
}

int qs_bench_run_job(struct qs_bench_world *w, const struct qs_job *job,
		     const struct qs_bench_variant *v, uint64_t seed,
		     struct qs_bench_result *res, char *err, size_t errlen)
{
	return qs_bench_run_group(w, job, 1, v, seed, res, err, errlen);
}
