/* SPDX-License-Identifier: MIT */
/*
 * The integrated A/B bench core: one job (or a group of jobs running
 * together), one variant, through the real engine on the simulator. See
 * bench/run.h and docs/BENCH.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delta.h"
#include "hist.h"
#include "host/profile.h"
#include "rating.h"
#include "run.h"
#include "sim.h"
#include "workload.h"

/* The largest client I/O a run can carry (one shared, never-read buffer). */
#define RN_BUF_BYTES (16u << 20)

struct qs_bench_world {
	struct qs_bench_conf conf;
	char profile_path[512], fast_path[512];
	struct qs_profile qlc_p, fast_p;
	uint64_t scaled;	/* QLC model capacity */
	uint64_t log_bytes;	/* fast volume size */
	struct qs_model *filled; /* preconditioned QLC model (a snapshot), cloned per run */
	uint64_t fill_idle_ns;	/* when the filled drive is idle */
	double rating_bytes;	/* endurance rating; NAN if unknown */
	uint64_t rated_capacity;
	void *buf;		/* RN_BUF_BYTES, shared by every I/O */
};

void qs_bench_conf_default(struct qs_bench_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->profile = "p5316-30t";
	c->fast = "optane";
	c->cache_bytes = 400000000000ull; /* 400 GB Optane-class log */
}

/* Default model capacity: as `bench calibrate` (docs/MODEL.md, Scaling). */
static uint64_t rn_default_scale(const struct qs_profile *p)
{
	uint64_t scaled = (uint64_t)p->iu_bytes << 20;
	if (p->media == QS_MEDIA_NAND) {
		double stripe = (double)qs_profile_dies(p) * p->unit_ius * p->iu_bytes;
		double need = stripe * p->superblocks / (1.0 + p->op_pct / 100.0);
		if (need > (double)scaled)
			scaled = (uint64_t)need;
	}
	return scaled;
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
	uint64_t scaled = conf->scale_bytes ? conf->scale_bytes : rn_default_scale(&w->qlc_p);
	if (scaled > w->qlc_p.capacity_bytes)
		scaled = w->qlc_p.capacity_bytes;
	scaled -= scaled % w->qlc_p.iu_bytes;
	w->scaled = scaled;
	/* The log keeps its ratio to the drive (and so to a span given in
	 * percent): cache and span are scaled together. 1 MiB granularity
	 * (the engine's default segment). */
	double ratio = (double)scaled / (double)w->qlc_p.capacity_bytes;
	uint64_t log = (uint64_t)((double)conf->cache_bytes * ratio);
	log -= log % (1u << 20);
	if (log < (8u << 20)) {
		snprintf(err, errlen,
			 "--cache %llu bytes scaled by 1/%.0f gives a %llu-byte log: need at least 8 MiB after scaling",
			 (unsigned long long)conf->cache_bytes, 1 / ratio, (unsigned long long)log);
		free(w);
		return -EINVAL;
	}
	w->log_bytes = log;
	/*
	 * Endurance rating for the life figure: --rating-pbw, else the
	 * profile's endurance_pbw (for the real drive of capacity_gb; the
	 * loader checks that its pattern is whole IUs), else none (life "-").
	 */
	w->rating_bytes = NAN;
	w->rated_capacity = w->qlc_p.capacity_bytes;
	if (conf->rating_bytes > 0)
		w->rating_bytes = conf->rating_bytes;
	else
		qs_rating_lookup(&w->qlc_p, &w->rating_bytes, &w->rated_capacity);
	w->filled = qs_model_new(&w->qlc_p, scaled);
	if (!w->filled) {
		rc = -errno;
		snprintf(err, errlen, "QLC model %s at %llu bytes: %s", w->qlc_p.name,
			 (unsigned long long)scaled, strerror(errno));
		free(w);
		return rc;
	}
	/* Precondition as the published fio method: the whole drive filled
	 * sequentially, then the workloads on their span. */
	w->fill_idle_ns = qs_model_fill_seq(w->filled, 0, 0, qs_model_capacity(w->filled));
	/* Every run clones the filled drive: from a snapshot, a clone costs
	 * the pages of the mapping tables that run writes, not the drive. */
	struct qs_model *snap = qs_model_snapshot(w->filled);
	if (!snap) {
		rc = -errno;
		snprintf(err, errlen, "QLC model %s: snapshot of the filled drive: %s",
			 w->qlc_p.name, strerror(errno));
		qs_model_free(w->filled);
		free(w);
		return rc;
	}
	qs_model_free(w->filled);
	w->filled = snap;
	w->buf = calloc(1, RN_BUF_BYTES);
	if (!w->buf) {
		qs_model_free(w->filled);
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

void qs_bench_world_free(struct qs_bench_world *w)
{
	if (!w)
		return;
	qs_model_free(w->filled);
	free(w->buf);
	free(w);
}

uint64_t qs_bench_world_capacity(const struct qs_bench_world *w)
{
	return w->scaled;
}

uint64_t qs_bench_world_log_bytes(const struct qs_bench_world *w)
{
	return w->log_bytes;
}

double qs_bench_world_scale(const struct qs_bench_world *w)
{
	return (double)w->qlc_p.capacity_bytes / (double)w->scaled;
}

double qs_bench_world_rating(const struct qs_bench_world *w)
{
	return w->rating_bytes;
}

const struct qs_profile *qs_bench_world_qlc_profile(const struct qs_bench_world *w)
{
	return &w->qlc_p;
}

/* ---- one run: a group of jobs running together on one engine ---- */

struct rn_run;

/* One job of the run: its clones, window and figures. */
struct rn_job {
	struct rn_run *r;
	const struct qs_job *job;
	unsigned live; /* clones not finished */
	uint64_t ramp_end, end;
	bool in_window, window_done;
	struct qs_hist *hr, *hw;
	uint64_t rd_ios, rd_bytes, wr_ios, wr_bytes, ios;
	struct qs_engine_stats e0, e1;
	struct qs_model_counters q0, q1, f0, f1;
	uint64_t win_start, win_end;
};

struct rn_clone {
	struct rn_job *j;
	struct qs_wl *wl;
	unsigned iodepth, inflight;
	bool ended;	  /* stream ended or runtime over: issue no more */
	bool timed;	  /* open loop: each I/O at its at_ns */
	bool have_next;	  /* open loop: next holds the next I/O */
	bool next_due;	  /* its time came while iodepth were in flight */
	bool done;	  /* ended and drained: counted out of live */
	struct qs_io next;
};

struct rn_slot {
	struct rn_clone *c;
	uint64_t issue_ns;
	uint64_t bytes; /* client bytes (orig_len) */
	enum qs_io_op op;
	struct rn_slot *next_free;
};

struct rn_run {
	struct qs_bench_world *w;
	struct rn_job *jobs;
	size_t njobs;
	struct qs_sim *sim;
	struct qs_model *qm, *fm;
	struct qs_sim_vol *qv, *fv;
	struct qs_engine *e;
	struct rn_clone *clones;
	unsigned nclones, live; /* clones not finished (ended and drained) */
	struct rn_slot *slots, *free_slots;
	uint64_t t0, end_max;
	bool flag; /* open/close callback ran */
	int flag_res;
	int err;
	char *errbuf;
	size_t errlen;
	/* progress */
	const char *vname;
	struct timespec wall_last;
	uint64_t prog_count;
};

static void rn_fail(struct rn_run *r, const struct qs_job *job, int rc, const char *what)
{
	if (r->err)
		return;
	r->err = rc;
	snprintf(r->errbuf, r->errlen, "job '%s': %s: %s", job->name, what, strerror(-rc));
	qs_sim_stop(r->sim);
}

static void rn_snapshot(struct rn_run *r, struct qs_engine_stats *es, struct qs_model_counters *q,
			struct qs_model_counters *f)
{
	qs_engine_get_stats(r->e, es);
	qs_model_get_counters(r->qm, q);
	qs_model_get_counters(r->fm, f);
}

static void rn_window_open(struct rn_job *j)
{
	if (j->in_window || j->window_done)
		return;
	j->in_window = true;
	j->win_start = qs_sim_now(j->r->sim);
	rn_snapshot(j->r, &j->e0, &j->q0, &j->f0);
}

static void rn_window_close(struct rn_job *j)
{
	if (j->window_done)
		return;
	if (!j->in_window)
		rn_window_open(j);
	j->in_window = false;
	j->window_done = true;
	j->win_end = qs_sim_now(j->r->sim);
	rn_snapshot(j->r, &j->e1, &j->q1, &j->f1);
}

/* Count a clone out once it issues nothing more and has nothing in flight.
 * The job's window ends with its last clone (if runtime did not end it
 * first); the simulation stops with the last clone of the run. */
static void rn_clone_finish(struct rn_clone *c)
{
	struct rn_job *j = c->j;
	struct rn_run *r = j->r;
	if (c->done || !c->ended || c->inflight)
		return;
	c->done = true;
	if (--j->live == 0)
		rn_window_close(j);
	if (--r->live == 0)
		qs_sim_stop(r->sim);
}

static void rn_ev_ramp(void *arg, int res)
{
	(void)res;
	rn_window_open(arg);
}

static void rn_ev_end(void *arg, int res)
{
	(void)res;
	struct rn_job *j = arg;
	struct rn_run *r = j->r;
	rn_window_close(j);
	for (unsigned i = 0; i < r->nclones; i++) {
		struct rn_clone *c = &r->clones[i];
		if (c->j != j)
			continue;
		c->ended = true;
		rn_clone_finish(c);
	}
}

static void rn_progress(struct rn_run *r)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - r->wall_last.tv_sec) +
		    (double)(now.tv_nsec - r->wall_last.tv_nsec) / 1e9;
	if (dt < 0.25)
		return;
	r->wall_last = now;
	uint64_t t = qs_sim_now(r->sim) - r->t0;
	const char *name = r->jobs[0].job->name;
	if (r->end_max != UINT64_MAX)
		fprintf(stderr, "\r  %s%s, %s: %3.0f%% of %.2f s simulated  ", name,
			r->njobs > 1 ? " (group)" : "", r->vname,
			100.0 * (double)t / (double)(r->end_max - r->t0),
			(double)(r->end_max - r->t0) / 1e9);
	else
		fprintf(stderr, "\r  %s%s, %s: %.2f s simulated  ", name,
			r->njobs > 1 ? " (group)" : "", r->vname, (double)t / 1e9);
}

static void rn_issue(struct rn_clone *c, const struct qs_io *io);
static void rn_pump(struct rn_clone *c);

static void rn_io_done(void *arg, int res)
{
	struct rn_slot *s = arg;
	struct rn_clone *c = s->c;
	struct rn_job *j = c->j;
	struct rn_run *r = j->r;
	uint64_t now = qs_sim_now(r->sim);
	if (res)
		rn_fail(r, j->job, res, s->op == QS_IO_READ ? "read failed" : "write failed");
	j->ios++;
	if (j->in_window) {
		uint64_t lat = now - s->issue_ns;
		if (s->op == QS_IO_READ) {
			qs_hist_add(j->hr, lat);
			j->rd_ios++;
			j->rd_bytes += s->bytes;
		} else if (s->op == QS_IO_WRITE) {
			qs_hist_add(j->hw, lat);
			j->wr_ios++;
			j->wr_bytes += s->bytes;
		}
	}
	s->next_free = r->free_slots;
	r->free_slots = s;
	c->inflight--;
	if (r->w->conf.progress && (++r->prog_count & 0x3fff) == 0)
		rn_progress(r);
	if (c->ended) {
		rn_clone_finish(c);
		return;
	}
	if (c->timed) {
		if (c->next_due) {
			c->next_due = false;
			struct qs_io io = c->next;
			c->have_next = false;
			rn_issue(c, &io);
			rn_pump(c);
		}
	} else {
		rn_pump(c);
	}
}

static void rn_issue(struct rn_clone *c, const struct qs_io *io)
{
	struct rn_run *r = c->j->r;
	struct rn_slot *s = r->free_slots;
	if (!s || io->len > RN_BUF_BYTES) {
		rn_fail(r, c->j->job, -E2BIG,
			io->len > RN_BUF_BYTES ? "I/O larger than 16 MiB" : "no free slot");
		return;
	}
	r->free_slots = s->next_free;
	s->c = c;
	s->issue_ns = qs_sim_now(r->sim);
	s->bytes = io->orig_len ? io->orig_len : io->len;
	s->op = io->op;
	int rc;
	switch (io->op) {
	case QS_IO_READ:
		rc = qs_engine_read(r->e, io->off, io->len, r->w->buf, rn_io_done, s);
		break;
	case QS_IO_WRITE:
		rc = qs_engine_write(r->e, io->off, io->len, r->w->buf, 0, rn_io_done, s);
		break;
	case QS_IO_TRIM:
		rc = qs_engine_discard(r->e, io->off, io->len, rn_io_done, s);
		break;
	default:
		rc = qs_engine_flush(r->e, rn_io_done, s);
		break;
	}
	if (rc) {
		s->next_free = r->free_slots;
		r->free_slots = s;
		rn_fail(r, c->j->job, rc, "submission refused by the engine");
		return;
	}
	c->inflight++;
}

static void rn_ev_due(void *arg, int res)
{
	(void)res;
	struct rn_clone *c = arg;
	if (c->ended || !c->have_next || c->j->r->err)
		return;
	if (c->inflight >= c->iodepth) {
		c->next_due = true; /* goes out when a slot frees (fio's iodepth cap) */
		return;
	}
	struct qs_io io = c->next;
	c->have_next = false;
	rn_issue(c, &io);
	rn_pump(c);
}

/* Next I/O of the stream into *io: 1, 0 at its end, -errno on error. */
static int rn_next(struct rn_clone *c, struct qs_io *io)
{
	int rc = qs_wl_next(c->wl, io);
	if (rc < 0) {
		struct rn_run *r = c->j->r;
		if (!r->err) {
			r->err = rc;
			snprintf(r->errbuf, r->errlen, "job '%s': %s", c->j->job->name,
				 qs_wl_error(c->wl));
			qs_sim_stop(r->sim);
		}
	}
	return rc;
}

/* Keep the clone going: closed loop fills iodepth, open loop schedules the
 * next I/O at its time. */
static void rn_pump(struct rn_clone *c)
{
	struct rn_run *r = c->j->r;
	if (c->ended || r->err)
		return;
	if (c->timed) {
		if (c->have_next)
			return;
		struct qs_io io;
		if (rn_next(c, &io) <= 0) {
			c->ended = true;
			rn_clone_finish(c);
			return;
		}
		uint64_t t = r->t0 + io.at_ns;
		if (t >= c->j->end) {
			c->ended = true;
			rn_clone_finish(c);
			return;
		}
		c->next = io;
		c->have_next = true;
		if (qs_sim_schedule(r->sim, t, rn_ev_due, c, 0))
			rn_fail(r, c->j->job, -ENOMEM, "scheduling");
		return;
	}
	while (c->inflight < c->iodepth && !c->ended && !r->err) {
		struct qs_io io;
		if (rn_next(c, &io) <= 0) {
			c->ended = true;
			rn_clone_finish(c);
			return;
		}
		if (io.timed) {
			/* a timed trace: switch this clone to open loop */
			c->timed = true;
			c->next = io;
			c->have_next = true;
			if (qs_sim_schedule(r->sim, r->t0 + io.at_ns, rn_ev_due, c, 0))
				rn_fail(r, c->j->job, -ENOMEM, "scheduling");
			return;
		}
		rn_issue(c, &io);
	}
}

static void rn_flag_cb(void *arg, int res)
{
	struct rn_run *r = arg;
	r->flag = true;
	r->flag_res = res;
	qs_sim_stop(r->sim);
}

static void rn_timer(void *arg)
{
	struct rn_run *r = arg;
	if (r->e)
		qs_engine_timer(r->e);
}

/* Run the simulation until r->flag is set; -EIO if events run out first. */
static int rn_wait_flag(struct rn_run *r)
{
	while (!r->flag) {
		if (!qs_sim_pending(r->sim))
			return -EIO;
		qs_sim_run(r->sim);
	}
	return r->flag_res;
}

static void rn_teardown(struct rn_run *r)
{
	if (r->e)
		qs_engine_free(r->e);
	qs_sim_vol_free(r->qv);
	qs_sim_vol_free(r->fv);
	qs_sim_free(r->sim);
	qs_model_free(r->qm);
	qs_model_free(r->fm);
	if (r->clones)
		for (unsigned i = 0; i < r->nclones; i++)
			qs_wl_close(r->clones[i].wl);
	free(r->clones);
	free(r->slots);
	if (r->jobs)
		for (size_t i = 0; i < r->njobs; i++) {
			free(r->jobs[i].hr);
			free(r->jobs[i].hw);
		}
	free(r->jobs);
}

/* The figures of job j into res. */
static void rn_result(struct rn_run *r, struct rn_job *j, const struct qs_bench_variant *v,
		      struct qs_bench_result *res)
{
	struct qs_bench_world *w = r->w;
	qs_delta_engine_stats(&res->eng, &j->e0, &j->e1);
	qs_delta_model_counters(&res->qlc, &j->q0, &j->q1);
	qs_delta_model_counters(&res->fast, &j->f0, &j->f1);
	res->ios = j->ios;
	res->window_ns = j->win_end - j->win_start;
	struct qs_report_run *rep = &res->rep;
	rep->job = j->job->name;
	rep->shaping = v->shaping;
	rep->policy = v->shaping ? qs_policy_order_name(v->order) : "-";
	qs_report_dir_fill(&rep->read, j->hr, j->rd_ios, j->rd_bytes, res->window_ns);
	qs_report_dir_fill(&rep->write, j->hw, j->wr_ios, j->wr_bytes, res->window_ns);
	struct qs_report_qlc_in qi = {
		.client_write_bytes = res->eng.client_write_bytes,
		.qlc_write_bytes = res->eng.qlc_write_bytes,
		.qlc_writes = res->eng.qlc_writes,
		.qlc_iu_whole_writes = res->eng.qlc_iu_whole_writes,
		.read_fill_bytes = res->eng.read_fill_bytes,
		.drive_write_bytes = res->qlc.host_write_bytes,
		.drive_prog_bytes = res->qlc.host_prog_bytes,
		.elapsed_ns = res->window_ns,
		.rating_bytes = w->rating_bytes,
		.rated_capacity = w->rated_capacity,
		.capacity = w->qlc_p.capacity_bytes,
	};
	qs_report_qlc_fill(&rep->qlc, &qi);
	rep->fast_write_bytes = res->fast.host_write_bytes;
}

int qs_bench_run_group(struct qs_bench_world *w, const struct qs_job *jobs, size_t njobs,
		       const struct qs_bench_variant *v, uint64_t seed,
		       struct qs_bench_result *res, char *err, size_t errlen)
{
	struct timespec wall0, wall1;
	clock_gettime(CLOCK_MONOTONIC, &wall0);
	memset(res, 0, njobs * sizeof(*res));
	struct rn_run run, *r = &run;
	memset(r, 0, sizeof(*r));
	r->w = w;
	r->errbuf = err;
	r->errlen = errlen;
	r->vname = v->shaping ? qs_policy_order_name(v->order) : "shaping off";
	r->wall_last = wall0;
	const char *name = jobs[0].name;
	int rc = -ENOMEM;
	r->njobs = njobs;
	r->jobs = calloc(njobs, sizeof(*r->jobs));
	r->sim = qs_sim_new();
	r->qm = qs_model_clone(w->filled);
	r->fm = qs_model_new(&w->fast_p, w->log_bytes);
	if (!r->jobs || !r->sim || !r->qm || !r->fm) {
		snprintf(err, errlen, "job '%s': out of memory setting up the run", name);
		goto out;
	}
	uint64_t nslots = 0;
	for (size_t i = 0; i < njobs; i++) {
		struct rn_job *j = &r->jobs[i];
		j->r = r;
		j->job = &jobs[i];
		j->hr = qs_hist_new();
		j->hw = qs_hist_new();
		if (!j->hr || !j->hw) {
			snprintf(err, errlen, "job '%s': out of memory setting up the run", name);
			goto out;
		}
		r->nclones += jobs[i].numjobs;
		nslots += (uint64_t)jobs[i].iodepth * jobs[i].numjobs;
	}
	/* the filled drive's resources are busy until fill_idle_ns: start there */
	qs_sim_run_until(r->sim, w->fill_idle_ns);
	/* Timing only: the engine's destage then writes whatever is in its
	 * buffers, which a benchmark never looks at; so the engine is opened
	 * with QS_OPEN_NO_DATA and skips checksums and copies of data. */
	r->qv = qs_sim_vol_new(r->sim, r->qm, QS_SIM_DATA_NONE);
	r->fv = qs_sim_vol_new(r->sim, r->fm, QS_SIM_DATA_NONE);
	if (!r->qv || !r->fv) {
		snprintf(err, errlen, "job '%s': out of memory setting up the volumes", name);
		goto out;
	}
	qs_sim_set_timer_cb(r->sim, rn_timer, r);
	struct qs_engine_conf ec;
	qs_engine_conf_default(&ec);
	ec.mode = v->shaping ? QS_MODE_CACHE : QS_MODE_PASSTHROUGH;
	ec.policy.order = v->order;
	ec.iu_bytes = qs_model_iu_bytes(r->qm);
	r->e = qs_engine_open(qs_sim_env(r->sim), v->shaping ? qs_sim_vol_vol(r->fv) : NULL,
			      qs_sim_vol_vol(r->qv), &ec, QS_OPEN_FORMAT | QS_OPEN_NO_DATA,
			      rn_flag_cb, r);
	if (!r->e) {
		rc = -errno;
		snprintf(err, errlen, "job '%s': engine open: %s", name, strerror(errno));
		goto out;
	}
	rc = rn_wait_flag(r);
	if (rc) {
		snprintf(err, errlen, "job '%s': engine open (format) failed: %s", name,
			 strerror(-rc));
		goto out;
	}

	/* clones and their slots */
	r->clones = calloc(r->nclones, sizeof(*r->clones));
	r->slots = calloc(nslots, sizeof(*r->slots));
	if (!r->clones || !r->slots) {
		rc = -ENOMEM;
		snprintf(err, errlen, "job '%s': out of memory for %llu I/O slots", name,
			 (unsigned long long)nslots);
		goto out;
	}
	for (uint64_t i = 0; i < nslots; i++) {
		r->slots[i].next_free = r->free_slots;
		r->free_slots = &r->slots[i];
	}
	r->t0 = qs_sim_now(r->sim);
	r->end_max = 0;
	unsigned ci = 0;
	for (size_t i = 0; i < njobs; i++) {
		struct rn_job *j = &r->jobs[i];
		const struct qs_job *job = j->job;
		for (unsigned k = 0; k < job->numjobs; k++, ci++) {
			struct rn_clone *c = &r->clones[ci];
			c->j = j;
			c->iodepth = job->iodepth;
			c->timed = job->rate_iops != 0;
			rc = qs_wl_open(job, k, seed, &c->wl, err, errlen);
			if (rc)
				goto out;
		}
		j->live = job->numjobs;
		j->ramp_end = r->t0 + job->ramp_time_ns;
		/* fio: runtime starts when ramp_time ends (the run lasts both) */
		j->end = job->runtime_ns ? j->ramp_end + job->runtime_ns : UINT64_MAX;
		if (j->end > r->end_max)
			r->end_max = j->end;
		if (job->ramp_time_ns) {
			if (qs_sim_schedule(r->sim, j->ramp_end, rn_ev_ramp, j, 0))
				goto nomem;
		} else {
			rn_window_open(j);
		}
		if (j->end != UINT64_MAX && qs_sim_schedule(r->sim, j->end, rn_ev_end, j, 0))
			goto nomem;
	}
	r->live = r->nclones;
	for (unsigned i = 0; i < r->nclones && !r->err; i++)
		rn_pump(&r->clones[i]);
	while (r->live && !r->err) {
		if (!qs_sim_pending(r->sim)) {
			rc = -EIO;
			snprintf(err, errlen, "job '%s': simulation ran out of events with %u clones busy",
				 name, r->live);
			goto out;
		}
		qs_sim_run(r->sim);
	}
	if (r->err) {
		rc = r->err;
		goto out;
	}
	for (size_t i = 0; i < njobs; i++)
		rn_window_close(&r->jobs[i]);
	uint64_t sim_end = qs_sim_now(r->sim);
	/* Stop the engine cleanly: in-flight destage finishes, nothing more. */
	r->flag = false;
	rc = qs_engine_close(r->e, rn_flag_cb, r);
	if (!rc)
		rc = rn_wait_flag(r);
	if (rc) {
		snprintf(err, errlen, "job '%s': engine close: %s", name, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < njobs; i++) {
		rn_result(r, &r->jobs[i], v, &res[i]);
		res[i].sim_ns = sim_end - r->t0;
	}
	rc = 0;
	goto out;
nomem:
	rc = -ENOMEM;
	snprintf(err, errlen, "job '%s': out of memory scheduling events", name);
out:
	rn_teardown(r);
	if (w->conf.progress)
		fprintf(stderr, "\r%60s\r", "");
	clock_gettime(CLOCK_MONOTONIC, &wall1);
	double wall = (double)(wall1.tv_sec - wall0.tv_sec) +
		      (double)(wall1.tv_nsec - wall0.tv_nsec) / 1e9;
	for (size_t i = 0; i < njobs; i++)
		res[i].wall_s = wall;
	return rc;
}

int qs_bench_run_job(struct qs_bench_world *w, const struct qs_job *job,
		     const struct qs_bench_variant *v, uint64_t seed,
		     struct qs_bench_result *res, char *err, size_t errlen)
{
	return qs_bench_run_group(w, job, 1, v, seed, res, err, errlen);
}
