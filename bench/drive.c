/* SPDX-License-Identifier: MIT */
/*
 * The bench's job driver: one group of jobs, one variant, through the real
 * engine in whatever world the caller gives (bench/drive.h).
 *
 * Time is the world's. The driver keeps its own deadlines (a job's ramp
 * end and end, an open-loop clone's next I/O), runs what is due with
 * drv_tick and asks the world to wait until the nearest; the world
 * completes I/O and fires the engine's timer meanwhile. Completions come
 * back through the engine's callbacks, on the same thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/env.h"
#include "host/model.h"
#include "qlcshape/format.h"

#include "delta.h"
#include "drive.h"
#include "hist.h"
#include "rating.h"
#include "trace.h"
#include "workload.h"

/* Cap on the I/O buffers of one run (slots x largest I/O). */
#define DRV_BUF_MAX (4ull << 30)
/* Completions between two looks at the wall clock for the progress line. */
#define DRV_PROGRESS_EVERY 0x4000u
#define DRV_PROGRESS_NS 250000000ull

struct drv_run;

/*
 * The client figures of one report unit over its jobs' windows: per
 * direction (fio's read, write, trim) the I/Os, the client bytes and the
 * three latencies fio reports, in histograms made on first use. A unit is
 * what one report entry sums: a job's clones, or a clone alone, or the
 * jobs of a group with group_reporting (qs_drv_run's fio).
 *
 * On the simulator's clock every submission latency is 0 and the
 * completion latency is the total: until a direction's first nonzero
 * submission latency (drv_stats_split) only its total is recorded, one
 * histogram per I/O instead of three (a third of the simulation's speed).
 */
struct drv_stats {
	uint64_t ios[QS_DDIR_N], bytes[QS_DDIR_N];
	struct qs_hist *h[QS_DDIR_N][QS_LAT_N];
};

/* One job of the run: its clones, window and figures. */
struct drv_job {
	struct drv_run *r;
	size_t index;
	const struct qs_job *job;
	unsigned live; /* clones not finished */
	uint64_t start, ramp_end, end; /* start: t0 + startdelay */
	bool started;		       /* its clones issue (start has come) */
	bool in_window, window_done;
	uint64_t ios;
	uint64_t over_lat_ns; /* fio's max_latency: the I/O that ended the job */
	bool lt_over;	      /* that I/O was over latency_target at depth 1 */
	FILE *iolog;	      /* fio's write_iolog, NULL: none */
	/* fio's rate_min, rate_iops_min: the window's I/Os and bytes per
	 * direction, at the last check, the next check; what ended the job */
	uint64_t dir_ios[QS_DDIR_N], dir_bytes[QS_DDIR_N];
	uint64_t rm_ios0[QS_DDIR_N], rm_bytes0[QS_DDIR_N], rm_next;
	bool rm_primed, rm_failed, rm_iops;
	int rm_dir;
	double rm_got, rm_want;
	uint64_t round0, round1; /* the run's wr_round at window open, close */
	uint64_t bytes;		 /* bytes completed, whole run, reads and writes */
	/* steady state (job->ss_dur_ns != 0): the next sample's time, the
	 * counts at the last one, a ring of the last ss_cap samples */
	uint64_t ss_next, ss_ios0, ss_bytes0;
	bool ss_based;		 /* the counts at ss_ramp were taken */
	double *ss_ring;
	unsigned ss_cap, ss_n, ss_head;
	bool ss_reached;
	uint64_t ss_at;		 /* when it was reached, since the start */
	double ss_crit;		 /* the last criterion computed (NAN: none yet) */
	struct qs_engine_stats e0, e1;
	uint64_t win_start, win_end;
};

/*
 * fio's flow control among the clones of the jobs with the same flow_id
 * (flow.c of fio 3.33): count starts at 1 and counts every I/O its clones
 * issued, weight sums the weights (flow) of its clones that have started
 * and not finished. A clone may issue while its own count over count is
 * at most its weight over weight.
 */
struct drv_flow {
	unsigned id;
	uint64_t count, weight;
};

struct drv_clone {
	struct drv_job *j;
	struct drv_stats *st; /* the report unit it counts in */
	/* fio's flow: its flow (NULL: none), the I/Os it issued under it; held
	 * back until flow_until (0: until another clone's completion,
	 * UINT64_MAX: until its own I/O in flight is done, then flow_sleep) */
	struct drv_flow *flow;
	uint64_t flow_count, flow_until;
	bool flow_held;
	struct qs_wl *wl;
	unsigned iodepth, inflight;
	bool ended;	/* stream ended or runtime over: issue no more */
	bool timed;	/* open loop: each I/O at its at_ns */
	bool have_next; /* next holds the next I/O, due at due_ns (open loop,
			   or closed loop after a thinktime) */
	bool next_due;	/* its time came while iodepth were in flight */
	bool done;	/* ended and drained: counted out of live */
	uint64_t due_ns;
	struct qs_io next;
	uint64_t think_left; /* closed loop: I/Os before the next thinktime */
	uint64_t think_last; /* thinktime_iotime: when the last thinktime began */
	/* fio's latency_target search (io_u.c's lat_target_*): iodepth above is
	 * the depth it allows, between lt_low and lt_high (the job's iodepth
	 * until a window fails); the window began at lt_ts with lt_ios0 of the
	 * clone's lt_ios completed, lt_failed of them over the target since.
	 * lt_quiesce: a depth change waits for the I/O in flight to drain */
	unsigned lt_low, lt_high, lt_stable;
	bool lt_end_run, lt_quiesce;
	uint64_t lt_ts, lt_ios, lt_ios0, lt_failed;
};

struct drv_slot {
	struct drv_clone *c;
	uint64_t issue_ns; /* when it was handed to the engine */
	uint64_t sub_ns;   /* when the engine's submission call returned */
	uint64_t bytes; /* client bytes (orig_len) */
	enum qs_io_op op;
	void *buf;
	struct drv_slot *next_free; /* also: the next early completion */
	uint64_t due_ns; /* an early completion: when its client sees it */
	int res;	 /* an early completion's result */
};

struct drv_run {
	const struct qs_drv_run *d;
	struct drv_job *jobs;
	struct qs_engine *e;
	struct drv_clone *clones;
	unsigned nclones, live; /* clones not finished (ended and drained) */
	/* report units (struct drv_stats), in clone order; unit u sums
	 * clones of the jobs ujob[u][0] to ujob[u][1] */
	struct drv_stats *units;
	size_t nunits;
	size_t (*ujob)[2];
	struct drv_flow *flows; /* one per flow_id the jobs name */
	size_t nflows;
	unsigned flow_held;	/* clones held back by their flow */
	struct drv_slot *slots, *free_slots;
	/* completions the engine gave before d->min_lat_ns, or after the time
	 * drv_tick last said something is due, due order */
	struct drv_slot *early;
	uint64_t tick_next; /* what drv_tick last returned: the next time due */
	uint64_t nslots, slot_bytes;
	void *bufs;	   /* the slots' own buffers (none with a shared one) */
	uint64_t inflight; /* client I/Os in flight, all clones */
	uint64_t wr_round; /* bytes 4 KiB rounding added to the writes submitted */
	uint64_t t0, end_max;
	uint64_t armed;	   /* the deadline the world is waiting for */
	bool flag;	   /* open/close callback ran */
	bool closing;	   /* qs_engine_close called */
	bool closed;	   /* its callback ran: the engine may be freed */
	int flag_res;
	struct qs_engine_conf ec; /* the conf of the last open */
	int err;
	char *errbuf;
	size_t errlen;
	const char *vname;
	uint64_t prog_wall, prog_count;
};

static uint64_t drv_now(const struct drv_run *r)
{
	return r->d->ops->now(r->d->ctx);
}

static void drv_wake(struct drv_run *r)
{
	if (r->d->ops->wake)
		r->d->ops->wake(r->d->ctx);
}

static void drv_fail(struct drv_run *r, const struct qs_job *job, int rc, const char *what)
{
	if (r->err)
		return;
	r->err = rc;
	snprintf(r->errbuf, r->errlen, "job '%s': %s: %s", job->name, what, strerror(-rc));
	drv_wake(r);
}

/* fio's rate_cycle: the period rate_min and rate_iops_min are checked
 * over (0: fio's default, 1 s) */
static uint64_t drv_rm_cycle(const struct qs_job *job)
{
	return job->rate_cycle_ns ? job->rate_cycle_ns : 1000000000ull;
}

/* Whether the job has a minimum rate for a direction it issues. */
static bool drv_rm_on(const struct qs_job *job)
{
	bool issues[QS_DDIR_N] = {qs_job_reads(job), qs_job_writes(job), qs_job_trims(job)};
	for (int d = 0; d < QS_DDIR_N; d++)
		if (issues[d] && (job->rate_min[d] || job->rate_iops_min[d]))
			return true;
	return false;
}

static void drv_lat_init(struct drv_clone *c);

static void drv_window_open(struct drv_job *j)
{
	if (j->in_window || j->window_done)
		return;
	/* fio's reset of the stats at the ramp's end starts the latency
	 * search again, from depth 1 */
	for (unsigned i = 0; j->job->lat_target_ns && i < j->r->nclones; i++)
		if (j->r->clones[i].j == j)
			drv_lat_init(&j->r->clones[i]);
	j->in_window = true;
	j->win_start = drv_now(j->r);
	j->round0 = j->r->wr_round;
	j->rm_next = j->win_start + drv_rm_cycle(j->job);
	qs_engine_get_stats(j->r->e, &j->e0);
	j->r->d->ops->window(j->r->d->ctx, j->index, false);
}

static void drv_window_close(struct drv_job *j)
{
	if (j->window_done)
		return;
	if (!j->in_window)
		drv_window_open(j);
	j->in_window = false;
	j->window_done = true;
	j->win_end = drv_now(j->r);
	j->round1 = j->r->wr_round;
	qs_engine_get_stats(j->r->e, &j->e1);
	j->r->d->ops->window(j->r->d->ctx, j->index, true);
}

/* Job j ended: the jobs that wait_for it start after their startdelay (at
 * the next tick). */
static void drv_release_waiters(struct drv_job *j)
{
	struct drv_run *r = j->r;
	for (size_t i = j->index + 1; i < r->d->njobs; i++) {
		struct drv_job *w = &r->jobs[i];
		if (w->job->wait_back && i - w->job->wait_back == j->index) {
			w->start = drv_now(r) + w->job->startdelay_ns;
			drv_wake(r);
		}
	}
}

/* Count a clone out once it issues nothing more and has nothing in flight.
 * The job's window ends with its last clone (if runtime did not end it
 * first); the run ends with the last clone of the run. */
static void drv_flow_exit(struct drv_clone *c);

static void drv_clone_finish(struct drv_clone *c)
{
	struct drv_job *j = c->j;
	if (c->done || !c->ended || c->inflight)
		return;
	c->done = true;
	drv_flow_exit(c);
	if (--j->live == 0) {
		drv_window_close(j);
		drv_release_waiters(j);
	}
	if (--j->r->live == 0)
		drv_wake(j->r);
}

/* runtime over: the job's window closes, its clones issue nothing more */
static void drv_job_end(struct drv_job *j)
{
	struct drv_run *r = j->r;
	drv_window_close(j);
	for (unsigned i = 0; i < r->nclones; i++) {
		struct drv_clone *c = &r->clones[i];
		if (c->j != j || c->ended)
			continue;
		c->ended = true;
		drv_clone_finish(c);
	}
}

/* At most every DRV_PROGRESS_NS of wall-clock time: how far the run is. */
static void drv_progress(struct drv_run *r)
{
	uint64_t wall = qs_henv_now_ns();
	if (!r->d->progress || wall - r->prog_wall < DRV_PROGRESS_NS)
		return;
	r->prog_wall = wall;
	double t = (double)(drv_now(r) - r->t0) / 1e9;
	const char *name = r->jobs[0].job->name, *group = r->d->njobs > 1 ? " (group)" : "";
	if (r->end_max != UINT64_MAX) {
		double total = (double)(r->end_max - r->t0) / 1e9;
		fprintf(stderr, "\r  %s%s, %s: %3.0f%% of %.2f s %s  ", name, group, r->vname,
			100.0 * t / total, total, r->d->clock_name);
	} else {
		fprintf(stderr, "\r  %s%s, %s: %.2f s %s  ", name, group, r->vname, t,
			r->d->clock_name);
	}
}

static void drv_issue(struct drv_clone *c, const struct qs_io *io);
static void drv_pump(struct drv_clone *c);
static void drv_flow_sleep(struct drv_clone *c);
static void drv_flow_retry(struct drv_run *r);

/* The histogram of direction d's latency k in st, made on first use;
 * NULL when out of memory. */
static struct qs_hist *drv_stats_hist(struct drv_stats *st, int d, int k)
{
	if (!st->h[d][k])
		st->h[d][k] = qs_hist_new();
	return st->h[d][k];
}

/*
 * Direction d of st gets its submission and completion histograms: the
 * I/Os so far had a submission latency of 0, so a completion latency
 * equal to their total. 0 or -ENOMEM.
 */
static int drv_stats_split(struct drv_stats *st, int d)
{
	struct qs_hist *sl = drv_stats_hist(st, d, QS_LAT_SUBMIT);
	struct qs_hist *cl = drv_stats_hist(st, d, QS_LAT_COMPLETE);
	if (!sl || !cl)
		return -ENOMEM;
	qs_hist_add_n(sl, 0, st->ios[d]);
	if (st->h[d][QS_LAT_TOTAL])
		qs_hist_merge(cl, st->h[d][QS_LAT_TOTAL]);
	return 0;
}

/* The figures of one completed I/O, while its job's window is open: fio's
 * submission latency (issue until the engine's call returned: nothing on
 * the simulator's clock, the call's time on a real one), completion latency
 * (from then on) and their sum. Flushes are not counted (fio's sync
 * figures are not reported). */
static void drv_count(struct drv_clone *c, const struct drv_slot *s, uint64_t now)
{
	int d = s->op == QS_IO_READ ? QS_DDIR_READ : s->op == QS_IO_WRITE ? QS_DDIR_WRITE
		: s->op == QS_IO_TRIM ? QS_DDIR_TRIM : -1;
	struct drv_stats *st = c->st;
	if (d < 0)
		return;
	uint64_t slat = s->sub_ns - s->issue_ns;
	struct qs_hist *h = NULL;
	if (!slat || st->h[d][QS_LAT_SUBMIT] || !drv_stats_split(st, d))
		h = drv_stats_hist(st, d, QS_LAT_TOTAL);
	if (!h) {
		drv_fail(c->j->r, c->j->job, -ENOMEM, "latency histogram");
		return;
	}
	qs_hist_add(h, now - s->issue_ns);
	if (st->h[d][QS_LAT_SUBMIT]) {
		qs_hist_add(st->h[d][QS_LAT_SUBMIT], slat);
		qs_hist_add(st->h[d][QS_LAT_COMPLETE], now - s->sub_ns);
	}
	st->ios[d]++;
	st->bytes[d] += s->bytes;
	c->j->dir_ios[d]++;
	c->j->dir_bytes[d] += s->bytes;
	/* fio's max_latency: the job ends at the first I/O above it, with
	 * fio's error; the other jobs go on */
	uint64_t max = c->j->job->max_latency_ns;
	if (max && now - s->issue_ns > max && !c->j->over_lat_ns) {
		c->j->over_lat_ns = now - s->issue_ns;
		drv_job_end(c->j);
	}
}

static void drv_lat_complete(struct drv_clone *c, uint64_t lat);
static bool drv_lat_held(struct drv_clone *c);

static void drv_io_finish(struct drv_slot *s, int res)
{
	struct drv_clone *c = s->c;
	struct drv_job *j = c->j;
	struct drv_run *r = j->r;
	if (res)
		drv_fail(r, j->job, res, s->op == QS_IO_READ ? "read failed" : "write failed");
	j->ios++;
	j->bytes += s->bytes;
	if (j->in_window)
		drv_count(c, s, drv_now(r));
	bool rw = s->op != QS_IO_SYNC; /* fio's io_blocks: reads, writes, trims */
	uint64_t lat = drv_now(r) - s->issue_ns;
	s->next_free = r->free_slots;
	r->free_slots = s;
	c->inflight--;
	r->inflight--;
	if (r->closing && !r->inflight)
		drv_wake(r);
	if ((++r->prog_count % DRV_PROGRESS_EVERY) == 0)
		drv_progress(r);
	if (j->job->lat_target_ns && rw && !c->ended)
		drv_lat_complete(c, lat);
	if (c->ended) {
		drv_clone_finish(c);
	} else if (drv_lat_held(c)) {
		/* latency_target's quiesce: nothing issues until drained */
	} else if (c->next_due) {
		struct qs_io io = c->next;
		c->next_due = false;
		c->have_next = false;
		drv_issue(c, &io);
		drv_pump(c);
	} else if (c->flow_held && c->flow_until == UINT64_MAX && !c->inflight) {
		drv_flow_sleep(c); /* fio quiesces, then sleeps */
	} else if (!c->timed) {
		drv_pump(c);
	}
	drv_flow_retry(r);
}

/*
 * The engine completed s. Before d->min_lat_ns after its issue (an I/O
 * that needed no device, such as a read of unwritten blocks or of the DRAM
 * buffer, completes at once on a virtual clock) its client sees it only
 * then: without that, a job of such I/Os would run for ever at one
 * instant. The early ones wait in due order (issue orders them but for
 * ties of completion time) for drv_tick.
 *
 * So does a completion that comes after the time drv_tick last said
 * something is due (a ramp or a job's end). Only the real clock passes it
 * inside the world's wait: there the engine delivers its completions in
 * one loop, and a closed-loop job of I/Os that need no device (a read of
 * blocks never written) issues the next from each, the loop never ends,
 * and without this the job never did either (emu, a log-placement read
 * job on a fresh engine). A virtual clock never passes the deadline it
 * waits for, so it is not changed.
 */
static void drv_io_done(void *arg, int res)
{
	struct drv_slot *s = arg;
	struct drv_run *r = s->c->j->r;
	uint64_t now = drv_now(r), due = s->issue_ns + r->d->min_lat_ns;
	if (now > r->tick_next && due < now)
		due = now;
	else if (now >= due) {
		drv_io_finish(s, res);
		return;
	}
	s->due_ns = due;
	s->res = res;
	struct drv_slot **pp = &r->early;
	while (*pp && (*pp)->due_ns <= due)
		pp = &(*pp)->next_free;
	s->next_free = *pp;
	*pp = s;
	if (due < r->armed)
		drv_wake(r); /* sooner than the world is waiting for */
}

/* Early completions now due reach their clients; the next one's time. */
static uint64_t drv_early_tick(struct drv_run *r, uint64_t now)
{
	while (r->early && r->early->due_ns <= now) {
		struct drv_slot *s = r->early;
		r->early = s->next_free;
		drv_io_finish(s, s->res);
	}
	return r->early ? r->early->due_ns : UINT64_MAX;
}

uint64_t qs_drv_log_bytes(uint64_t bytes)
{
	struct qs_engine_conf c;
	qs_engine_conf_default(&c);
	bytes -= bytes % ((uint64_t)c.segment_blocks * QS_BLOCK_SIZE);
	return bytes < QS_DRV_LOG_MIN ? 0 : bytes;
}

void qs_drv_log_conf(uint32_t iu_bytes, uint32_t op_pct, uint64_t band_bytes,
		     uint64_t superblock_bytes, double scale, struct qs_engine_conf *c)
{
	qs_engine_conf_default(c);
	c->iu_bytes = iu_bytes;
	c->placement = QS_PLACE_LOG;
	c->op_pct = op_pct;
	uint64_t band = band_bytes ? band_bytes : superblock_bytes;
	if (!band)
		band = (uint64_t)((double)(1ull << 30) * scale);
	band = band / iu_bytes * iu_bytes;
	c->band_bytes = band > 2ull * iu_bytes ? band : 2ull * iu_bytes;
}

uint64_t qs_drv_map_dram(uint64_t map_dram_bytes, double scale)
{
	struct qs_engine_conf c;
	qs_engine_conf_default(&c);
	uint64_t real = map_dram_bytes ? map_dram_bytes : c.map_dram_limit;
	uint64_t b = (uint64_t)((double)real * scale) / QS_BLOCK_SIZE * QS_BLOCK_SIZE;
	return b < QS_CONF_MAP_DRAM_MIN ? QS_CONF_MAP_DRAM_MIN : b;
}

int qs_drv_dram_conf(uint64_t dram_limit, uint64_t real_qlc, uint64_t real_log, double scale,
		     struct qs_engine_conf *c, char *err, size_t errlen)
{
	if (c->mode != QS_MODE_CACHE)
		return 0;
	if (dram_limit == QS_CONF_DRAM_AUTO && scale > 1)
		dram_limit = qs_engine_conf_dram_auto(c, real_qlc); /* the real drive's */
	if (!dram_limit || scale <= 1) {
		c->dram_limit = dram_limit; /* the engine divides it itself */
		return 0;
	}
	struct qs_engine_conf fc = *c, out;
	fc.dram_limit = dram_limit;
	fc.log_window_blocks = fc.dirty_ius_max = 0;
	if (fc.placement == QS_PLACE_LOG) {
		uint64_t band = (uint64_t)((double)c->band_bytes * scale);
		fc.band_bytes = band / c->iu_bytes * c->iu_bytes;
	}
	uint64_t fast = QS_FMT_LOG_START * QS_BLOCK_SIZE + real_log +
			qs_engine_conf_map_bytes(&fc, real_qlc);
	struct qs_conf_err why;
	if (qs_engine_conf_check_dram(&fc, fast, real_qlc, &why)) {
		snprintf(err, errlen, "at the real drive's scale, %s", why.msg);
		return -EINVAL;
	}
	if (qs_engine_dram_split(&fc, fast, real_qlc, &out)) {
		snprintf(err, errlen, "dram_limit %llu: the real drive's log does not fit its fast "
			 "device", (unsigned long long)dram_limit);
		return -EINVAL;
	}
	uint64_t w = (uint64_t)((double)out.log_window_blocks / scale);
	uint64_t wmin = 32ull * c->segment_blocks;
	c->log_window_blocks = out.log_window_blocks ? (w > wmin ? w : wmin) : 0;
	uint64_t d = (uint64_t)((double)out.dirty_ius_max / scale);
	c->dirty_ius_max = out.dirty_ius_max ? (d > 1024 ? d : 1024) : 0;
	if (c->placement == QS_PLACE_LOG) {
		/* no fewer pages than a unit pins, however small the model */
		uint64_t m = qs_drv_map_dram(out.map_dram_limit, 1 / scale);
		uint64_t min = qs_engine_conf_map_min(c);
		c->map_dram_limit = m > min ? m : min;
	}
	c->dram_limit = 0;
	return 0;
}

int qs_drv_sizes_model(const struct qs_profile *p, uint64_t scale_bytes, uint64_t cache_bytes,
		       double rating_bytes, struct qs_drv_sizes *out, char *err, size_t errlen)
{
	uint64_t scaled = scale_bytes ? scale_bytes : qs_model_default_bytes(p);
	if (scaled > p->capacity_bytes)
		scaled = p->capacity_bytes;
	out->capacity = scaled - scaled % p->iu_bytes;
	double ratio = (double)out->capacity / (double)p->capacity_bytes;
	out->log_bytes = qs_drv_log_bytes((uint64_t)((double)cache_bytes * ratio));
	if (!out->log_bytes) {
		snprintf(err, errlen, "--cache %llu bytes scaled by 1/%.0f gives a log under %llu "
			 "MiB: need at least that after scaling", (unsigned long long)cache_bytes,
			 1 / ratio, QS_DRV_LOG_MIN >> 20);
		return -EINVAL;
	}
	/* --rating-pbw, else the profile's endurance_pbw (for the real drive
	 * of capacity_gb; the loader checks that its pattern is whole IUs),
	 * else none (life "-"). */
	out->rating_bytes = NAN;
	out->rated_capacity = p->capacity_bytes;
	out->rating_prog_amp = p->endurance_prog_amp > 0 ? p->endurance_prog_amp : 1;
	if (rating_bytes > 0)
		out->rating_bytes = rating_bytes;
	else
		qs_rating_lookup(p, &out->rating_bytes, &out->rated_capacity);
	return 0;
}

double qs_drv_fast_life(const struct qs_profile *fp, const struct qs_bench_result *res)
{
	double bytes;
	uint64_t cap;
	if (qs_rating_lookup(fp, &bytes, &cap))
		return NAN;
	return qs_report_fast_life(bytes, fp->endurance_prog_amp, res->rep.fast_write_bytes,
				   res->fast.host_write_bytes, res->fast.nand_prog_bytes,
				   res->window_ns);
}

/* Stamp every 4 KiB block of a write with its own offset and the seed. */
static uint64_t drv_stamp_check(uint64_t off, uint64_t seed)
{
	uint64_t x = QS_DRV_STAMP_MAGIC ^ off ^ seed;
	return (x << 23) | (x >> 41);
}

static void drv_stamp(void *buf, uint64_t off, uint64_t len, uint64_t seed)
{
	for (uint64_t b = 0; b < len; b += QS_BLOCK_SIZE) {
		struct qs_drv_stamp s = {QS_DRV_STAMP_MAGIC, off + b, seed,
					 drv_stamp_check(off + b, seed)};
		memcpy((char *)buf + b, &s, sizeof(s));
	}
}

bool qs_drv_stamp_ok(const void *blk, uint64_t off, uint64_t seed)
{
	struct qs_drv_stamp s;
	memcpy(&s, blk, sizeof(s));
	return s.magic == QS_DRV_STAMP_MAGIC && s.off == off && s.seed == seed &&
	       s.check == drv_stamp_check(off, seed);
}

/* fio's iolog names a file per line; fio replays it with replay_redirect
 * (as 'qlcshape bench trace-export' writes them) */
#define DRV_IOLOG_FILE "qlc"

/* fio's write_iolog: the log of job j, version 2 (no time stamps), its
 * file added and opened; 0 or -EIO with the message in r's errbuf */
static int drv_iolog_open(struct drv_run *r, struct drv_job *j)
{
	j->iolog = fopen(j->job->write_iolog, "w");
	if (!j->iolog) {
		snprintf(r->errbuf, r->errlen, "job '%s': write_iolog '%s': %s", j->job->name,
			 j->job->write_iolog, strerror(errno));
		return -EIO;
	}
	fprintf(j->iolog, "fio version 2 iolog\n%s add\n%s open\n", DRV_IOLOG_FILE,
		DRV_IOLOG_FILE);
	return 0;
}

/* One I/O the job issues as fio logs it: the bytes it asked for (a sync
 * takes an offset and length of 0, which fio needs) */
static void drv_iolog_io(FILE *f, const struct qs_io *io)
{
	static const char *const act[QS_IO_SYNC + 1] = {"read", "write", "trim", "sync"};
	bool sync = io->op == QS_IO_SYNC;
	fprintf(f, "%s %s %" PRIu64 " %" PRIu64 "\n", DRV_IOLOG_FILE, act[io->op],
		sync ? 0 : io->orig_off, sync ? 0 : io->orig_len);
}

/* Submit io to the engine; a refusal fails the run. */
static int drv_submit(struct drv_run *r, struct drv_slot *s, const struct qs_io *io)
{
	switch (io->op) {
	case QS_IO_READ:
		return qs_engine_read(r->e, io->off, io->len, s->buf, drv_io_done, s);
	case QS_IO_WRITE:
		return qs_engine_write(r->e, io->off, io->len, s->buf,
				       io->fua ? QS_WRITE_FUA : 0, drv_io_done, s);
	case QS_IO_TRIM:
		return qs_engine_discard(r->e, io->off, io->len, drv_io_done, s);
	default:
		return qs_engine_flush(r->e, drv_io_done, s);
	}
}

static void drv_issue(struct drv_clone *c, const struct qs_io *io)
{
	struct drv_run *r = c->j->r;
	struct drv_slot *s = r->free_slots;
	if (!s || io->len > r->slot_bytes) {
		char what[96];
		snprintf(what, sizeof(what), s ? "I/O of %llu bytes larger than the %llu-byte buffer"
					       : "no free slot",
			 (unsigned long long)io->len, (unsigned long long)r->slot_bytes);
		drv_fail(r, c->j->job, -E2BIG, what);
		return;
	}
	r->free_slots = s->next_free;
	s->c = c;
	s->bytes = io->orig_len ? io->orig_len : io->len;
	if (io->op == QS_IO_WRITE && io->len > s->bytes)
		r->wr_round += io->len - s->bytes;
	s->op = io->op;
	if (io->op == QS_IO_WRITE && !r->d->shared_buf)
		drv_stamp(s->buf, io->off, io->len, r->d->seed);
	s->issue_ns = drv_now(r);
	if (c->j->iolog)
		drv_iolog_io(c->j->iolog, io);
	int rc = drv_submit(r, s, io);
	/* the engine never completes a request inside its submission call
	 * (engine.h), so s is still this request's */
	s->sub_ns = drv_now(r);
	if (rc) {
		s->next_free = r->free_slots;
		r->free_slots = s;
		drv_fail(r, c->j->job, rc, "submission refused by the engine");
		return;
	}
	c->inflight++;
	r->inflight++;
}

/* Next I/O of the stream into *io: 1, 0 at its end, -errno on error. */
static int drv_next(struct drv_clone *c, struct qs_io *io)
{
	int rc = qs_wl_next(c->wl, io);
	struct drv_run *r = c->j->r;
	if (rc < 0 && !r->err) {
		r->err = rc;
		snprintf(r->errbuf, r->errlen, "job '%s': %s", c->j->job->name,
			 qs_wl_error(c->wl));
		drv_wake(r);
	}
	return rc;
}

/* Open loop: io is the clone's next I/O, due at t. */
static void drv_hold(struct drv_clone *c, const struct qs_io *io, uint64_t t)
{
	c->next = *io;
	c->have_next = true;
	c->due_ns = t;
	if (t < c->j->r->armed)
		drv_wake(c->j->r); /* sooner than the world is waiting for */
}

/* Open loop: the clone's next I/O is due (or overdue). */
static void drv_due(struct drv_clone *c)
{
	if (c->inflight >= c->iodepth || drv_lat_held(c)) {
		c->next_due = true; /* goes out when a slot frees (fio's iodepth cap) */
		return;
	}
	struct qs_io io = c->next;
	c->have_next = false;
	drv_issue(c, &io);
	drv_pump(c);
}

static void drv_end_clone(struct drv_clone *c)
{
	c->ended = true;
	drv_clone_finish(c);
}

/*
 * fio's search for the deepest queue that meets latency_target (io_u.c's
 * lat_target_* of fio 3.33), per clone as fio runs it per thread: from
 * depth 1, each window of latency_window either holds (the share of its
 * I/Os at most latency_target is latency_percentile or more: the depth
 * doubles, or bisects towards the lowest depth that failed) or fails (back
 * halfway to the last depth that held). A depth that holds and would not
 * change is the answer: the clone runs one more window there and ends
 * (latency_run: it keeps searching). The clone's iodepth is the depth the
 * search allows.
 */

/* fio's lat_new_cycle: a window starts now. */
static void drv_lat_cycle(struct drv_clone *c)
{
	c->lt_ts = drv_now(c->j->r);
	c->lt_ios0 = c->lt_ios;
	c->lt_failed = 0;
}

/* fio's lat_target_init (and lat_target_reset, at the ramp's end): the
 * search starts at depth 1, unless it is in its last window. */
static void drv_lat_init(struct drv_clone *c)
{
	const struct qs_job *job = c->j->job;
	if (!job->lat_target_ns || c->lt_end_run)
		return;
	c->iodepth = 1;
	c->lt_low = 1;
	c->lt_high = job->iodepth;
	c->lt_stable = 0;
	drv_lat_cycle(c);
}

/* Whether c waits for its I/O in flight before it issues: fio quiesces
 * after a depth change, so that the next window measures the new depth
 * alone; drained, that window starts. */
static bool drv_lat_held(struct drv_clone *c)
{
	if (!c->lt_quiesce)
		return false;
	if (c->inflight)
		return true;
	c->lt_quiesce = false;
	drv_lat_cycle(c);
	return false;
}

/* fio's __lat_target_failed: back off halfway to the lowest depth that
 * held, after a quiesce; true at depth 1, where nothing is left to try. */
static bool drv_lat_down(struct drv_clone *c)
{
	if (c->iodepth == 1)
		return true;
	c->lt_high = c->iodepth;
	if (c->iodepth == c->lt_low)
		c->lt_low--;
	c->iodepth = (c->iodepth + c->lt_low) / 2;
	c->lt_stable = 0;
	c->lt_quiesce = true;
	return false;
}

/* fio's lat_target_success: the window held at the clone's depth. */
static void drv_lat_up(struct drv_clone *c)
{
	const struct qs_job *job = c->j->job;
	unsigned qd = c->iodepth;
	c->lt_low = qd;
	/* one below the lowest depth that failed: fio raises that bound by
	 * one after three windows in a row held, since the latency there
	 * stays below the target */
	if (qd + 1 == c->lt_high && ++c->lt_stable >= 3) {
		c->lt_high++;
		c->lt_stable = 0;
	}
	if (c->lt_high != job->iodepth)
		c->iodepth = (qd + c->lt_high) / 2; /* bisect below a failure */
	else
		c->iodepth = qd * 2; /* none yet: double */
	if (c->iodepth > job->iodepth)
		c->iodepth = job->iodepth;
	if (!job->lat_run && c->iodepth == qd) {
		if (c->lt_end_run) {
			drv_end_clone(c); /* the window at the depth found is done */
			return;
		}
		c->lt_end_run = true; /* one more window, at this depth alone */
		c->lt_quiesce = true;
	}
	if (!c->lt_quiesce)
		drv_lat_cycle(c);
}

/* A read, write or trim of c's completed after lat: fio counts it over
 * the target (with latency_percentile 100 it backs off at once, and at
 * depth 1 the job ends with fio's error, ETIMEDOUT), then, after the ramp
 * and once the window has run its time, judges the window. */
static void drv_lat_complete(struct drv_clone *c, uint64_t lat)
{
	struct drv_job *j = c->j;
	const struct qs_job *job = j->job;
	c->lt_ios++;
	if (!j->in_window)
		return;
	if (lat > job->lat_target_ns) {
		if (job->lat_pct < 100) {
			c->lt_failed++;
		} else if (drv_lat_down(c)) {
			if (!j->over_lat_ns) {
				j->over_lat_ns = lat;
				j->lt_over = true;
				drv_job_end(j);
			}
			return;
		}
	}
	if (c->lt_quiesce || drv_now(j->r) - c->lt_ts < job->lat_window_ns)
		return;
	uint64_t ios = c->lt_ios - c->lt_ios0;
	double ok = (double)(ios - c->lt_failed) / (double)ios * 100.0;
	if (ok >= job->lat_pct)
		drv_lat_up(c);
	else
		drv_lat_down(c); /* at depth 1 the window goes on (fio's rule) */
}

/* The flow of flow_id id in r, made on first use (r->flows has room for
 * one per clone). */
static struct drv_flow *drv_flow_get(struct drv_run *r, unsigned id)
{
	for (size_t i = 0; i < r->nflows; i++)
		if (r->flows[i].id == id)
			return &r->flows[i];
	r->flows[r->nflows] = (struct drv_flow){id, 1, 0};
	return &r->flows[r->nflows++];
}

/* Job j started: its clones join their flow (fio adds a job's weight when
 * it starts). */
static void drv_flow_join(struct drv_job *j)
{
	struct drv_run *r = j->r;
	for (unsigned i = 0; j->job->flow && i < r->nclones; i++) {
		struct drv_clone *c = &r->clones[i];
		if (c->j != j)
			continue;
		c->flow = drv_flow_get(r, j->job->flow_id);
		c->flow->weight += j->job->flow;
	}
}

/* Clone c finished: its I/Os and weight leave its flow (fio's flow_put),
 * and so does a hold. */
static void drv_flow_exit(struct drv_clone *c)
{
	if (!c->flow)
		return;
	c->flow->count -= c->flow_count;
	c->flow->weight -= c->j->job->flow;
	c->flow = NULL;
	if (c->flow_held) {
		c->flow_held = false;
		c->j->r->flow_held--;
	}
}

/* A held clone's flow_sleep starts now (its I/O in flight is done). */
static void drv_flow_sleep(struct drv_clone *c)
{
	struct drv_run *r = c->j->r;
	c->flow_until = drv_now(r) + c->j->job->flow_sleep_ns;
	if (c->flow_until < r->armed)
		drv_wake(r); /* sooner than the world is waiting for */
}

/*
 * fio's flow_threshold_exceeded for clone c's next I/O: false (and the I/O
 * counted in its flow) when its share of the flow's I/Os is at most its
 * share of the weights; else c is held back: for flow_sleep once its I/O
 * in flight is done, or until another clone's completion without it.
 */
static bool drv_flow_hold(struct drv_clone *c)
{
	struct drv_flow *f = c->flow;
	if (c->flow_held)
		return true;
	if ((double)c->flow_count / (double)f->count <=
	    (double)c->j->job->flow / (double)f->weight) {
		c->flow_count++;
		f->count++;
		return false;
	}
	c->flow_held = true;
	c->j->r->flow_held++;
	c->flow_until = 0;
	if (c->j->job->flow_sleep_ns) {
		c->flow_until = UINT64_MAX;
		if (!c->inflight)
			drv_flow_sleep(c);
	}
	return true;
}

/* Release clone c's hold and let it issue again. */
static void drv_flow_release(struct drv_clone *c)
{
	c->flow_held = false;
	c->j->r->flow_held--;
	drv_pump(c);
}

/* The clones held until another clone's completion look again: that
 * completion may have let their flow's other clones issue. */
static void drv_flow_retry(struct drv_run *r)
{
	for (unsigned i = 0; r->flow_held && i < r->nclones && !r->err; i++) {
		struct drv_clone *c = &r->clones[i];
		if (c->flow_held && !c->flow_until && !c->ended)
			drv_flow_release(c);
	}
}

/* fio's handle_thinktime before clone c's next I/O: whether a thinktime
 * comes first. With thinktime_iotime, once that much time passed since the
 * last one began (the thinktime counted in); after thinktime_blocks I/Os,
 * with thinktime_iotime only if the file set thinktime_blocks (fio's
 * default 1 would think after every I/O). */
static bool drv_think(struct drv_clone *c)
{
	const struct qs_job *job = c->j->job;
	uint64_t now = drv_now(c->j->r), iot = job->thinktime_iotime_ns;
	bool by_blocks = !iot || job->thinktime_blocks_set;
	bool stall = (iot && now - c->think_last >= iot + job->thinktime_ns) ||
		     (by_blocks && !c->think_left);
	if (!stall) {
		if (by_blocks)
			c->think_left--;
		return false;
	}
	c->think_left = job->thinktime_blocks - 1;
	c->think_last = now;
	return true;
}

/* Keep the clone going: closed loop fills iodepth, open loop holds the
 * next I/O until its time. */
static void drv_pump(struct drv_clone *c)
{
	struct drv_run *r = c->j->r;
	struct qs_io io;
	if (c->ended || r->err || !c->j->started || drv_lat_held(c))
		return;
	if (c->timed) {
		if (c->have_next)
			return;
		if (drv_next(c, &io) <= 0 || c->j->start + io.at_ns >= c->j->end)
			drv_end_clone(c);
		else
			drv_hold(c, &io, c->j->start + io.at_ns);
		return;
	}
	const struct qs_job *job = c->j->job;
	while (c->inflight < c->iodepth && !c->ended && !r->err && !c->have_next) {
		if (c->flow && drv_flow_hold(c))
			return;
		if (drv_next(c, &io) <= 0) {
			drv_end_clone(c);
			return;
		}
		if (io.timed) {
			/* a timed trace: switch this clone to open loop */
			c->timed = true;
			drv_hold(c, &io, c->j->start + io.at_ns);
			return;
		}
		if (job->thinktime_ns && drv_think(c)) {
			/* fio's thinktime: the next I/O waits thinktime from
			 * now (a completion, or the start) */
			drv_hold(c, &io, drv_now(r) + job->thinktime_ns);
			return;
		}
		drv_issue(c, &io);
	}
}

/* Job j starts at now: its ramp, then its runtime (fio: the run lasts
 * both); without ramp its window opens. */
static void drv_job_begin(struct drv_job *j, uint64_t now)
{
	struct drv_run *r = j->r;
	const struct qs_job *job = j->job;
	j->started = true;
	j->start = now;
	j->ramp_end = now + job->ramp_time_ns;
	j->end = job->runtime_ns ? j->ramp_end + job->runtime_ns : UINT64_MAX;
	if (j->end > r->end_max)
		r->end_max = j->end;
	j->ss_next = now + job->ss_ramp_ns; /* the counts there, then samples */
	for (unsigned i = 0; i < r->nclones; i++) {
		struct drv_clone *c = &r->clones[i];
		if (c->j == j) {
			c->think_last = now; /* fio's: the job's start */
			drv_lat_init(c);
		}
	}
	if (!job->ramp_time_ns)
		drv_window_open(j);
	drv_flow_join(j);
}

/* startdelay or wait_for over: the job begins, its clones issue. */
static void drv_job_start(struct drv_job *j, uint64_t now)
{
	struct drv_run *r = j->r;
	drv_job_begin(j, now);
	for (unsigned i = 0; i < r->nclones && !r->err; i++)
		if (r->clones[i].j == j)
			drv_pump(&r->clones[i]);
}

/*
 * fio's criterion over the ring's samples: the largest deviation from their
 * mean (iops, bw) or the least-squares slope over the sample index
 * (*_slope), absolute or in percent of the mean; INFINITY when a
 * percentage of a zero mean is asked for.
 */
static double drv_ss_criterion(const struct drv_job *j)
{
	unsigned n = j->ss_n;
	double sy = 0, sxy = 0, sx = 0, sxx = 0, dev = 0;
	for (unsigned i = 0; i < n; i++) {
		double y = j->ss_ring[(j->ss_head + i) % j->ss_cap];
		sy += y;
		sx += i;
		sxx += (double)i * i;
		sxy += (double)i * y;
	}
	double mean = sy / n;
	bool slope = j->job->ss == QS_SS_IOPS_SLOPE || j->job->ss == QS_SS_BW_SLOPE;
	if (slope) {
		dev = fabs((n * sxy - sx * sy) / (n * sxx - sx * sx));
	} else {
		for (unsigned i = 0; i < n; i++) {
			double d = fabs(j->ss_ring[(j->ss_head + i) % j->ss_cap] - mean);
			if (d > dev)
				dev = d;
		}
	}
	if (!j->job->ss_pct)
		return dev;
	return mean > 0 ? 100.0 * dev / mean : INFINITY;
}

/* One steady-state sample at its time now: the job's IOPS or bandwidth
 * over the interval just ended; the job ends when the ring is full, its
 * ramp is over (a window to report) and the criterion is below the limit. */
static void drv_ss_sample(struct drv_job *j, uint64_t now)
{
	const struct qs_job *job = j->job;
	bool bw = job->ss == QS_SS_BW || job->ss == QS_SS_BW_SLOPE;
	uint64_t ios = j->ios, bytes = j->bytes;
	if (j->ss_based) {
		double s = (double)job->ss_interval_ns / 1e9;
		double y = bw ? (double)(bytes - j->ss_bytes0) / s : (double)(ios - j->ss_ios0) / s;
		if (j->ss_n < j->ss_cap) {
			j->ss_ring[(j->ss_head + j->ss_n++) % j->ss_cap] = y;
		} else {
			j->ss_ring[j->ss_head] = y;
			j->ss_head = (j->ss_head + 1) % j->ss_cap;
		}
	}
	j->ss_based = true;
	j->ss_ios0 = ios;
	j->ss_bytes0 = bytes;
	if (j->ss_n < j->ss_cap)
		return;
	j->ss_crit = drv_ss_criterion(j);
	if (j->ss_crit < job->ss_limit && now > j->ramp_end) {
		j->ss_reached = true;
		j->ss_at = now - j->start;
		drv_job_end(j);
	}
}

/*
 * fio's rate_min and rate_iops_min over the rate_cycle that ends now: a
 * direction the job issues below either ends the job, with fio's error
 * (EIO); else the counts are the next cycle's start. As in fio, the first
 * cycle only takes the counts (its I/Os may not have completed yet).
 */
static void drv_rm_check(struct drv_job *j)
{
	const struct qs_job *job = j->job;
	if (!j->rm_primed) {
		j->rm_primed = true;
		memcpy(j->rm_bytes0, j->dir_bytes, sizeof(j->rm_bytes0));
		memcpy(j->rm_ios0, j->dir_ios, sizeof(j->rm_ios0));
		return;
	}
	bool issues[QS_DDIR_N] = {qs_job_reads(job), qs_job_writes(job), qs_job_trims(job)};
	double s = (double)drv_rm_cycle(job) / 1e9;
	for (int d = 0; d < QS_DDIR_N && !j->rm_failed; d++) {
		double bps = (double)(j->dir_bytes[d] - j->rm_bytes0[d]) / s;
		double iops = (double)(j->dir_ios[d] - j->rm_ios0[d]) / s;
		if (!issues[d])
			continue;
		if (job->rate_min[d] && bps < (double)job->rate_min[d]) {
			j->rm_failed = true;
			j->rm_got = bps;
			j->rm_want = (double)job->rate_min[d];
		} else if (job->rate_iops_min[d] && iops < (double)job->rate_iops_min[d]) {
			j->rm_failed = j->rm_iops = true;
			j->rm_got = iops;
			j->rm_want = (double)job->rate_iops_min[d];
		}
		j->rm_dir = d;
		j->rm_bytes0[d] = j->dir_bytes[d];
		j->rm_ios0[d] = j->dir_ios[d];
	}
	if (j->rm_failed)
		drv_job_end(j);
}

/* A job's deadlines at now: it starts at start (startdelay, wait_for), its
 * window opens at ramp end, its steady-state samples are taken, it ends at
 * end. Returns the next of them still to come (UINT64_MAX: none). */
static uint64_t drv_tick_job(struct drv_job *j, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	if (j->window_done)
		return next;
	if (!j->started) {
		if (now < j->start)
			return j->start; /* UINT64_MAX: waiting for another job */
		drv_job_start(j, now);
	}
	if (j->ss_cap) {
		while (now >= j->ss_next && !j->window_done) {
			drv_ss_sample(j, j->ss_next);
			j->ss_next += j->job->ss_interval_ns;
		}
		if (j->window_done)
			return next;
		next = j->ss_next;
	}
	if (!j->in_window) {
		if (now >= j->ramp_end)
			drv_window_open(j);
		else if (j->ramp_end < next)
			next = j->ramp_end;
	}
	if (j->in_window && drv_rm_on(j->job)) {
		while (now >= j->rm_next && !j->window_done) {
			drv_rm_check(j);
			j->rm_next += drv_rm_cycle(j->job);
		}
		if (j->window_done)
			return UINT64_MAX;
		next = j->rm_next < next ? j->rm_next : next;
	}
	if (j->end != UINT64_MAX) {
		if (now >= j->end)
			drv_job_end(j);
		else if (j->end < next)
			next = j->end;
	}
	return next;
}

/*
 * Run what is due on the clock (ramp ends, job ends, open-loop I/Os) and
 * return the next time something will be (UINT64_MAX: nothing scheduled).
 */
static uint64_t drv_tick(struct drv_run *r)
{
	r->tick_next = UINT64_MAX; /* what it runs is due: no completion waits */
	uint64_t now = drv_now(r), next = drv_early_tick(r, now);
	for (size_t i = 0; i < r->d->njobs; i++) {
		uint64_t t = drv_tick_job(&r->jobs[i], now);
		if (t < next)
			next = t;
	}
	for (unsigned i = 0; i < r->nclones && !r->err; i++) {
		struct drv_clone *c = &r->clones[i];
		while (c->have_next && !c->next_due && !c->ended && !r->err && now >= c->due_ns)
			drv_due(c);
		if (c->have_next && !c->next_due && !c->ended && c->due_ns < next)
			next = c->due_ns;
		/* fio's flow_sleep over: the held clone looks again */
		bool sleeping = c->flow_held && c->flow_until && c->flow_until != UINT64_MAX;
		if (sleeping && !c->ended && now >= c->flow_until)
			drv_flow_release(c);
		else if (sleeping && !c->ended && c->flow_until < next)
			next = c->flow_until;
	}
	drv_flow_retry(r);
	r->tick_next = next;
	return next;
}

static int drv_wait(struct drv_run *r, uint64_t deadline)
{
	r->armed = deadline;
	int rc = r->d->ops->wait(r->d->ctx, r->e, deadline);
	r->armed = 0;
	return rc;
}

static void drv_flag_cb(void *arg, int res)
{
	struct drv_run *r = arg;
	r->flag = true;
	r->flag_res = res;
	r->closed = r->closing;
	drv_wake(r);
}

/* Let the world run until the open or close callback ran; its result. */
static int drv_wait_flag(struct drv_run *r)
{
	while (!r->flag) {
		int rc = drv_wait(r, UINT64_MAX);
		if (rc)
			return rc;
	}
	return r->flag_res;
}

/*
 * The largest request of a trace job's trace, read through once (memory
 * does not grow with it), so that its slots hold any of them. A slot of a
 * fixed 1 MiB failed a run at the first larger request the reader had
 * accepted (up to QS_TRACE_MAX_IO), naming neither file nor line; a slot of
 * QS_TRACE_MAX_IO for every trace would hold 16 MiB per slot for traces of
 * 8 KiB requests. A trace that cannot be read gets QS_TRACE_MAX_IO: the
 * run's own reader then reports why, with file and line. bench run, ab and
 * curve scan every trace before the drive is filled and keep the figure in
 * the job (trace_max_io), so that runs do not read the trace again here.
 */
static uint64_t drv_trace_max_io(const struct qs_job *j)
{
	if (j->trace_max_io)
		return j->trace_max_io; /* the scan before the run found it */
	struct qs_trace_opts o = {
		.format = j->trace_format,
		.cols = j->trace_cols,
		.timescale = j->trace_timescale,
		.ignore_time = true, /* sizes only */
		.scale = j->replay_scale,
		.align = j->replay_align,
	};
	struct qs_trace *t;
	struct qs_io io;
	uint64_t n = QS_BLOCK_SIZE;
	char err[256];
	int rc;

	if (qs_trace_open(j->trace, &o, &t, err, sizeof(err)))
		return QS_TRACE_MAX_IO;
	while ((rc = qs_trace_next(t, &io, err, sizeof(err))) == 1)
		if (io.len > n)
			n = io.len;
	qs_trace_close(t);
	return rc < 0 ? QS_TRACE_MAX_IO : n;
}

/* Buffer bytes per slot: the largest I/O the jobs can issue. */
static uint64_t drv_slot_bytes(const struct qs_job *jobs, size_t njobs)
{
	uint64_t n = QS_BLOCK_SIZE;
	for (size_t i = 0; i < njobs; i++) {
		uint64_t b = jobs[i].trace ? drv_trace_max_io(&jobs[i])
			     : jobs[i].bs_max > jobs[i].bs ? jobs[i].bs_max : jobs[i].bs;
		if (b > n)
			n = b;
	}
	return (n + QS_BLOCK_SIZE - 1) / QS_BLOCK_SIZE * QS_BLOCK_SIZE;
}

/* xorshift64: the slot buffers start as incompressible bytes, as fio's do. */
static void drv_fill_random(void *buf, uint64_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *p = buf;
	for (uint64_t i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
}

/* The slots and their buffers (shared, or one each). */
static int drv_slots_new(struct drv_run *r, const char *name)
{
	const struct qs_drv_run *d = r->d;
	r->slot_bytes = d->shared_buf ? d->shared_bytes : drv_slot_bytes(d->jobs, d->njobs);
	if (!d->shared_buf && r->nslots * r->slot_bytes > DRV_BUF_MAX) {
		snprintf(r->errbuf, r->errlen, "job '%s': %llu I/O slots of %llu bytes need more "
			 "than the %llu GiB of buffers a run may use: lower iodepth, numjobs or bs",
			 name, (unsigned long long)r->nslots, (unsigned long long)r->slot_bytes,
			 DRV_BUF_MAX >> 30);
		return -E2BIG;
	}
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	if (!r->slots || (!d->shared_buf && posix_memalign(&r->bufs, QS_BLOCK_SIZE,
							     r->nslots * r->slot_bytes))) {
		r->bufs = NULL;
		snprintf(r->errbuf, r->errlen, "job '%s': out of memory for %llu I/O slots of %llu "
			 "bytes", name, (unsigned long long)r->nslots,
			 (unsigned long long)r->slot_bytes);
		return -ENOMEM;
	}
	if (r->bufs)
		drv_fill_random(r->bufs, r->nslots * r->slot_bytes, d->seed);
	for (uint64_t i = 0; i < r->nslots; i++) {
		struct drv_slot *s = &r->slots[i];
		s->buf = r->bufs ? (char *)r->bufs + i * r->slot_bytes : d->shared_buf;
		s->next_free = r->free_slots;
		r->free_slots = s;
	}
	return 0;
}

/*
 * Whether clone k of job i joins the report unit before it. With d->fio,
 * fio's rule: a clone of a job with group_reporting joins the clone
 * before, in its job or (its first clone) the previous job's when that is
 * of the same group; every other clone is an entry of its own. Else the
 * bench's: a job's clones are one entry, which a job with group_reporting
 * joins to the previous job's of its group.
 */
static bool drv_joins(const struct qs_drv_run *d, size_t i, unsigned k)
{
	const struct qs_job *j = &d->jobs[i];
	bool prev = i > 0 && j->group_reporting && d->jobs[i - 1].groupid == j->groupid;
	if (d->fio)
		return j->group_reporting && (k > 0 || prev);
	return k > 0 || prev;
}

/* Whether job i starts a bench entry (it does not join the one before). */
static bool drv_entry_head(const struct qs_drv_run *d, size_t i)
{
	return !(i > 0 && d->jobs[i].group_reporting &&
		 d->jobs[i - 1].groupid == d->jobs[i].groupid);
}

/* The report units and which clone counts in which; 0 or -ENOMEM. */
static int drv_units_new(struct drv_run *r)
{
	const struct qs_drv_run *d = r->d;
	r->units = calloc(r->nclones, sizeof(*r->units));
	r->ujob = calloc(r->nclones, sizeof(*r->ujob));
	if (!r->units || !r->ujob)
		return -ENOMEM;
	unsigned ci = 0;
	for (size_t i = 0; i < d->njobs; i++) {
		for (unsigned k = 0; k < d->jobs[i].numjobs; k++, ci++) {
			if (!r->nunits || !drv_joins(d, i, k))
				r->ujob[r->nunits++][0] = i;
			r->ujob[r->nunits - 1][1] = i;
			r->clones[ci].st = &r->units[r->nunits - 1];
		}
	}
	return 0;
}

static void drv_stats_free(struct drv_stats *st)
{
	for (int d = 0; d < QS_DDIR_N; d++)
		for (int k = 0; k < QS_LAT_N; k++)
			free(st->h[d][k]);
	memset(st, 0, sizeof(*st));
}

/* Merge src into *dst, made on first use; 0 or -ENOMEM. */
static int drv_hist_merge(struct qs_hist **dst, const struct qs_hist *src)
{
	if (!src)
		return 0;
	if (!*dst && !(*dst = qs_hist_new()))
		return -ENOMEM;
	qs_hist_merge(*dst, src);
	return 0;
}

/* Add src's figures of direction sd to dst's of direction dd (either may
 * be split, drv_stats_split); 0 or -ENOMEM. */
static int drv_stats_add(struct drv_stats *dst, int dd, const struct drv_stats *src, int sd)
{
	struct qs_hist **h = dst->h[dd];
	const struct qs_hist *const *sh = (const struct qs_hist *const *)src->h[sd];
	bool split = sh[QS_LAT_SUBMIT] || h[QS_LAT_SUBMIT];
	if (split && !h[QS_LAT_SUBMIT] && drv_stats_split(dst, dd))
		return -ENOMEM;
	if (drv_hist_merge(&h[QS_LAT_TOTAL], sh[QS_LAT_TOTAL]))
		return -ENOMEM;
	if (split && sh[QS_LAT_SUBMIT]) {
		qs_hist_merge(h[QS_LAT_SUBMIT], sh[QS_LAT_SUBMIT]);
		qs_hist_merge(h[QS_LAT_COMPLETE], sh[QS_LAT_COMPLETE]);
	} else if (split) {
		qs_hist_add_n(h[QS_LAT_SUBMIT], 0, src->ios[sd]);
		if (sh[QS_LAT_TOTAL])
			qs_hist_merge(h[QS_LAT_COMPLETE], sh[QS_LAT_TOTAL]);
	}
	dst->ios[dd] += src->ios[sd];
	dst->bytes[dd] += src->bytes[sd];
	return 0;
}

/* Jobs, the clones, their report units and the slots. */
static int drv_setup(struct drv_run *r)
{
	const struct qs_drv_run *d = r->d;
	const char *name = d->jobs[0].name;
	r->jobs = calloc(d->njobs, sizeof(*r->jobs));
	if (!r->jobs)
		goto nomem;
	for (size_t i = 0; i < d->njobs; i++) {
		struct drv_job *j = &r->jobs[i];
		j->r = r;
		j->index = i;
		j->job = &d->jobs[i];
		j->ss_crit = NAN;
		if (j->job->ss_dur_ns && j->job->ss != QS_SS_NONE) {
			j->ss_cap = (unsigned)(j->job->ss_dur_ns / j->job->ss_interval_ns);
			j->ss_ring = calloc(j->ss_cap, sizeof(*j->ss_ring));
			if (!j->ss_ring)
				goto nomem;
		}
		r->nclones += d->jobs[i].numjobs;
		r->nslots += (uint64_t)d->jobs[i].iodepth * d->jobs[i].numjobs;
		if (j->job->write_iolog && drv_iolog_open(r, j))
			return -EIO;
	}
	r->clones = calloc(r->nclones, sizeof(*r->clones));
	r->flows = calloc(r->nclones, sizeof(*r->flows));
	if (!r->clones || !r->flows || drv_units_new(r))
		goto nomem;
	return drv_slots_new(r, name);
nomem:
	snprintf(r->errbuf, r->errlen, "job '%s': out of memory setting up the run", name);
	return -ENOMEM;
}

/* r->ec: the engine configuration of r's variant; 0 or -EINVAL (the
 * budget, r->errbuf says why). */
static int drv_conf(struct drv_run *r)
{
	const struct qs_drv_run *d = r->d;
	struct qs_engine_conf *ec = &r->ec;
	qs_engine_conf_default(ec);
	ec->mode = d->v->shaping ? QS_MODE_CACHE : QS_MODE_PASSTHROUGH;
	ec->policy.order = d->v->order;
	ec->iu_bytes = d->iu_bytes;
	if (d->v->set_bypass)
		ec->bypass_min_bytes = d->v->bypass_min_bytes;
	if (d->v->set_pace)
		ec->policy.pace_pct = d->v->pace_pct;
	if (d->v->shaping && d->v->placement == QS_PLACE_LOG) {
		ec->placement = QS_PLACE_LOG;
		ec->op_pct = d->op_pct;
		ec->band_bytes = d->band_bytes;
		ec->map_dram_limit = d->map_dram_limit;
		ec->map_entry_bytes = d->map_entry_bytes;
		ec->map_keep_per_page = d->map_keep_per_page;
	}
	return qs_drv_dram_conf(d->dram_limit, d->real_qlc, d->real_log, d->dram_scale, ec,
				r->errbuf, r->errlen);
}

/* Open the engine (a new log with QS_OPEN_FORMAT in flags, else recovery)
 * and wait for it. */
static int drv_open(struct drv_run *r, unsigned flags)
{
	const struct qs_drv_run *d = r->d;
	const char *name = d->jobs[0].name;
	int crc = drv_conf(r);
	if (crc)
		return crc;
	r->flag = r->closing = r->closed = false;
	r->e = qs_engine_open(d->env, d->v->shaping ? d->fast : NULL, d->qlc, &r->ec,
			      flags | d->open_flags, drv_flag_cb, r);
	if (!r->e) {
		int rc = -errno;
		snprintf(r->errbuf, r->errlen, "job '%s': engine open: %s", name, strerror(errno));
		return rc;
	}
	int rc = drv_wait_flag(r);
	if (rc)
		snprintf(r->errbuf, r->errlen, "job '%s': engine open (%s) failed: %s", name,
			 flags & QS_OPEN_FORMAT ? "format" : "recovery", strerror(-rc));
	return rc;
}

/* The clones' streams, the jobs' deadlines, the measured windows of jobs
 * without ramp; t0 is now. */
static int drv_start(struct drv_run *r)
{
	const struct qs_drv_run *d = r->d;
	r->t0 = drv_now(r);
	r->prog_wall = qs_henv_now_ns();
	unsigned ci = 0;
	for (size_t i = 0; i < d->njobs; i++) {
		struct drv_job *j = &r->jobs[i];
		const struct qs_job *job = j->job;
		for (unsigned k = 0; k < job->numjobs; k++, ci++) {
			struct drv_clone *c = &r->clones[ci];
			c->j = j;
			c->iodepth = job->iodepth;
			c->timed = job->rate_iops != 0;
			c->think_left = job->thinktime_blocks; /* the first go at once */
			int rc = qs_wl_open(job, k, d->seed, &c->wl, r->errbuf, r->errlen);
			if (rc)
				return rc;
		}
		j->live = job->numjobs;
		j->start = job->wait_back ? UINT64_MAX : r->t0 + job->startdelay_ns;
		if (j->start == r->t0)
			drv_job_begin(j, r->t0); /* its clones go in drv_loop */
	}
	return 0;
}

/* Drive the clones until every one has finished; 0 or -errno. */
static int drv_loop(struct drv_run *r)
{
	const char *name = r->d->jobs[0].name;
	r->live = r->nclones;
	for (unsigned i = 0; i < r->nclones && !r->err; i++)
		drv_pump(&r->clones[i]);
	while (r->live && !r->err) {
		uint64_t next = drv_tick(r);
		if (!r->live || r->err)
			break;
		if (!r->inflight && next == UINT64_MAX) {
			snprintf(r->errbuf, r->errlen, "job '%s': run stalled: %u clones busy, no I/O "
				 "in flight and nothing scheduled", name, r->live);
			return -EIO;
		}
		int rc = drv_wait(r, next);
		if (rc && !r->err) {
			/* -EIO: no event left while requests wait, the engine is
			 * stuck: its state goes with the error, for the report. */
			static char dbg[65536];
			qs_engine_debug_dump(r->e, dbg, sizeof(dbg));
			fprintf(stderr, "engine state: %s\n", dbg);
			snprintf(r->errbuf, r->errlen, "job '%s': %s with %u clones busy (engine state "
				 "above)", name, strerror(-rc), r->live);
			return rc;
		}
		drv_progress(r);
	}
	if (r->err)
		return r->err;
	for (size_t i = 0; i < r->d->njobs; i++)
		drv_window_close(&r->jobs[i]);
	return 0;
}

/* Let every client I/O in flight complete, early ones included; 0 or
 * -errno. */
static int drv_drain(struct drv_run *r)
{
	int rc = 0;
	while (!rc && r->inflight) {
		uint64_t next = drv_early_tick(r, drv_now(r));
		if (r->inflight)
			rc = drv_wait(r, next);
	}
	return rc;
}

/* Close the engine (in-flight I/O finishes, no destage) and let every
 * client I/O still in flight complete; 0 or -errno. */
static int drv_close(struct drv_run *r)
{
	r->closing = true;
	r->flag = false;
	int rc = qs_engine_close(r->e, drv_flag_cb, r);
	if (!rc)
		rc = drv_wait_flag(r);
	return rc ? rc : drv_drain(r);
}

/*
 * Free what the run allocated. The engine only once its close completed
 * (engine.h: an engine, even one whose open failed, is closed before it is
 * freed); one whose close could not complete may still be called by its
 * volumes, so it is left allocated.
 */
static void drv_teardown(struct drv_run *r)
{
	if (r->e && r->closed)
		qs_engine_free(r->e);
	if (r->clones)
		for (unsigned i = 0; i < r->nclones; i++)
			qs_wl_close(r->clones[i].wl);
	free(r->clones);
	free(r->slots);
	free(r->bufs);
	for (size_t i = 0; r->jobs && i < r->d->njobs; i++) {
		free(r->jobs[i].ss_ring);
		if (r->jobs[i].iolog) {
			fprintf(r->jobs[i].iolog, "%s close\n", DRV_IOLOG_FILE);
			fclose(r->jobs[i].iolog);
		}
	}
	free(r->jobs);
	for (size_t u = 0; r->units && u < r->nunits; u++)
		drv_stats_free(&r->units[u]);
	free(r->units);
	free(r->ujob);
	free(r->flows);
}

/* Client write bytes per second job asks for with rate_iops: every clone's
 * rate, the writes' share of the mix, the writes' mean size each; 0 when
 * unrated. */
static double drv_rated_write_rate(const struct qs_job *job)
{
	if (!job->rate_iops || job->trace || !qs_job_writes(job))
		return 0;
	double share = job->rw != QS_RW_RW && job->rw != QS_RW_RANDRW ? 1.0
		       : job->rate_mix ? 1.0 - job->rate_read_share
				       : (100.0 - job->rwmixread) / 100.0;
	return (double)job->rate_iops * job->numjobs * share * qs_job_mean_bs(job, true);
}

/* fio's figures of one direction (io, latencies) from st's direction d;
 * unsplit, every submission latency was 0 and completion the total. */
static void drv_fdir(struct qs_report_fdir *f, const struct drv_stats *st, int d,
		     const struct qs_job *job)
{
	f->io_bytes = st->bytes[d];
	f->total_ios = st->ios[d];
	bool split = st->h[d][QS_LAT_SUBMIT] != NULL;
	const double *pl = job->pct_list; /* fio's percentile_list (npct 0: fio's) */
	qs_report_lat_fill(&f->lat[QS_LAT_TOTAL], st->h[d][QS_LAT_TOTAL], pl, job->npct);
	qs_report_lat_fill(&f->lat[QS_LAT_COMPLETE],
			   st->h[d][split ? QS_LAT_COMPLETE : QS_LAT_TOTAL], pl, job->npct);
	qs_report_lat_fill(&f->lat[QS_LAT_SUBMIT], st->h[d][QS_LAT_SUBMIT], pl, job->npct);
	if (!split)
		f->lat[QS_LAT_SUBMIT].n = st->ios[d]; /* that many zeros */
}

/* The client figures of rep from st over runtime_ns: per direction the
 * table's and fio's, and the directions together; 0 or -ENOMEM. */
static int drv_stats_report(const struct drv_stats *st, uint64_t runtime_ns,
			    const struct qs_job *job, struct qs_report_run *rep)
{
	struct qs_report_dir *dir[QS_DDIR_N] = {&rep->read, &rep->write, &rep->trim};
	struct drv_stats mixed = {0};
	int rc = 0;
	for (int d = 0; d < QS_DDIR_N; d++) {
		drv_fdir(&rep->fio[d], st, d, job);
		qs_report_dir_fill(dir[d], st->h[d][QS_LAT_TOTAL], st->ios[d], st->bytes[d],
				   runtime_ns);
		if (!rc)
			rc = drv_stats_add(&mixed, 0, st, d);
	}
	drv_fdir(&rep->fio_mixed, &mixed, 0, job);
	qs_report_dir_fill(&rep->mixed, mixed.h[0][QS_LAT_TOTAL], mixed.ios[0], mixed.bytes[0],
			   runtime_ns);
	drv_stats_free(&mixed);
	return rc;
}

/* fio's error of an entry: the first of its jobs that max_latency,
 * latency_target or rate_min ended, and what ended it for the table. */
static void drv_entry_error(struct qs_report_run *rep, const struct drv_job *j, bool shaping)
{
	static const char *const dirs[QS_DDIR_N] = {"reads", "writes", "trims"};
	const char *sh = shaping ? "on" : "off";
	if (rep->error)
		return;
	if (j->lt_over) {
		rep->error = ETIMEDOUT; /* fio's lat_fatal, as for max_latency */
		rep->over_lat_ns = j->over_lat_ns;
		snprintf(rep->error_why, sizeof(rep->error_why), "latency_target %.1f us at "
			 "depth 1: with shaping %s an I/O took %.1f us and ended the job there, "
			 "fio's error %d", (double)j->job->lat_target_ns / 1e3, sh,
			 (double)rep->over_lat_ns / 1e3, ETIMEDOUT);
	} else if (j->over_lat_ns) {
		rep->error = ETIMEDOUT; /* fio's error for max_latency */
		rep->over_lat_ns = j->over_lat_ns;
		rep->max_lat_ns = j->job->max_latency_ns;
		snprintf(rep->error_why, sizeof(rep->error_why), "max_latency %.1f us: with "
			 "shaping %s an I/O took %.1f us and ended the job there, fio's error %d",
			 (double)rep->max_lat_ns / 1e3, sh, (double)rep->over_lat_ns / 1e3,
			 ETIMEDOUT);
	} else if (j->rm_failed) {
		rep->error = EIO; /* fio's error for rate_min, rate_iops_min */
		snprintf(rep->error_why, sizeof(rep->error_why), "%s: with shaping %s the %s "
			 "ran at %.6g %s over a rate_cycle of %.6g s, below %.6g: the job ended "
			 "there, fio's error %d", j->rm_iops ? "rate_iops_min" : "rate_min", sh,
			 dirs[j->rm_dir], j->rm_got, j->rm_iops ? "I/Os/s" : "bytes/s",
			 (double)drv_rm_cycle(j->job) / 1e9, j->rm_want, EIO);
	}
}

/* fio's latency_target figures of an entry over the jobs a..b: the depth
 * of the last clone with a search among those st counts (fio reports a
 * sum with its last thread's). */
static void drv_entry_lat(const struct drv_run *r, size_t a, size_t b,
			  const struct drv_stats *st, struct qs_report_run *rep)
{
	bool unit = false;
	for (size_t u = 0; u < r->nunits; u++)
		unit |= st == &r->units[u];
	rep->lat_depth = 0;
	for (unsigned i = 0; i < r->nclones; i++) {
		const struct drv_clone *c = &r->clones[i];
		const struct qs_job *job = c->j->job;
		if (c->j->index < a || c->j->index > b || !job->lat_target_ns ||
		    (unit && c->st != st))
			continue;
		rep->lat_depth = c->iodepth;
		rep->lat_target_ns = job->lat_target_ns;
		rep->lat_window_ns = job->lat_window_ns;
		rep->lat_pct = job->lat_pct;
	}
}

/*
 * The figures of a report entry that sums st over the jobs a..b (which
 * share the drive): the client's from st over the longest of their
 * windows (fio's runtime of a group), the engine's and the world's over
 * the union of the windows, from the first to open to the last to close;
 * steady state, options and names are job a's. 0 or -ENOMEM.
 */
static int drv_entry(struct drv_run *r, size_t a, size_t b, const struct drv_stats *st,
		     struct qs_bench_result *res)
{
	const struct qs_bench_variant *v = r->d->v;
	struct drv_job *jo = &r->jobs[a], *jc = &r->jobs[a];
	uint64_t runtime = 0;
	double rated = 0;
	res->ios = 0;
	res->rep.error = 0;
	for (size_t i = a; i <= b; i++) {
		struct drv_job *j = &r->jobs[i];
		drv_entry_error(&res->rep, j, v->shaping);
		jo = j->win_start < jo->win_start ? j : jo;
		jc = j->win_end > jc->win_end ? j : jc;
		runtime = j->win_end - j->win_start > runtime ? j->win_end - j->win_start : runtime;
		rated += drv_rated_write_rate(j->job);
		res->ios += j->ios;
	}
	const struct drv_job *j = &r->jobs[a];
	qs_delta_engine_stats(&res->eng, &jo->e0, &jc->e1);
	res->window_ns = jc->win_end - jo->win_start;
	struct qs_report_run *rep = &res->rep;
	rep->job = j->job->name;
	rep->fio_name = j->job->fio_name[0] ? j->job->fio_name : NULL;
	rep->shaping = v->shaping;
	rep->policy = v->shaping ? qs_policy_order_name(v->order) : "-";
	rep->placement = v->shaping ? qs_placement_name(v->placement) : "-";
	rep->rated_write_bytes_per_s = rated;
	/* what the engine received in the window (every job of the group, as
	 * the QLC figures), less what rounding added: the bytes asked for */
	rep->round_write_bytes = jc->round1 - jo->round0;
	rep->client_write_bytes = res->eng.client_write_bytes > rep->round_write_bytes ?
		res->eng.client_write_bytes - rep->round_write_bytes : 0;
	rep->dirty_start_bytes = jo->e0.cached_blocks * QS_BLOCK_SIZE;
	rep->dirty_end_bytes = jc->e1.cached_blocks * QS_BLOCK_SIZE;
	rep->map_hits = res->eng.map_hits;
	rep->map_misses = res->eng.map_misses;
	rep->map_page_reads = res->eng.map_page_reads;
	rep->map_page_writes = res->eng.map_page_writes;
	rep->map_peak_bytes = res->eng.map_peak_bytes;
	/* DRAM when the window closed, as the map's peak: a passthrough
	 * engine holds no cache state, so shaping off reports none */
	if (v->shaping) {
		rep->mem = res->eng.mem;
		rep->mem_conf = r->ec;
		rep->mem_fast = r->d->fast->size;
		rep->mem_qlc = r->d->qlc->size;
	}
	struct qs_report_ss *ss = &rep->ss;
	ss->criterion = j->ss_cap ? qs_job_ss_name(j->job->ss) : NULL;
	ss->limit = j->job->ss_limit;
	ss->pct = j->job->ss_pct;
	ss->duration_s = (double)j->job->ss_dur_ns / 1e9;
	ss->reached = j->ss_reached;
	ss->at_s = j->ss_reached ? (double)j->ss_at / 1e9 : NAN;
	ss->last = j->ss_crit;
	rep->runtime_ns = runtime;
	rep->members = (unsigned)(b - a + 1);
	rep->groupid = j->job->groupid;
	rep->unified = j->job->unified;
	rep->opts = j->job->opts;
	rep->nopts = j->job->nopts;
	drv_entry_lat(r, a, b, st, rep);
	int rc = drv_stats_report(st, runtime, j->job, rep);
	r->d->ops->result(r->d->ctx, jo->index, jc->index, res);
	return rc;
}

/* The units u..u2-1 summed into one (NULL when out of memory); *tmp holds
 * the sum when there is more than one, else st is unit u itself. */
static const struct drv_stats *drv_units_sum(struct drv_run *r, size_t u, size_t u2,
					     struct drv_stats *tmp)
{
	if (u2 - u == 1)
		return &r->units[u];
	for (size_t x = u; x < u2; x++)
		for (int d = 0; d < QS_DDIR_N; d++)
			if (drv_stats_add(tmp, d, &r->units[x], d))
				return NULL;
	return tmp;
}

/*
 * The bench's entries into res, one slot per job: an entry at its first
 * job, members 0 at the jobs a group_reporting entry sums after it; and
 * with d->fio, fio's entries (one per unit). 0 or -ENOMEM.
 */
static int drv_results(struct drv_run *r, struct qs_bench_result *res)
{
	const struct qs_drv_run *d = r->d;
	int rc = 0;
	for (size_t a = 0, u = 0; a < d->njobs && !rc;) {
		size_t b = a, u2 = u;
		while (b + 1 < d->njobs && !drv_entry_head(d, b + 1))
			b++;
		while (u2 < r->nunits && r->ujob[u2][0] <= b)
			u2++;
		struct drv_stats tmp = {0};
		const struct drv_stats *st = drv_units_sum(r, u, u2, &tmp);
		rc = st ? drv_entry(r, a, b, st, &res[a]) : -ENOMEM;
		drv_stats_free(&tmp);
		for (size_t i = a + 1; i <= b; i++) {
			res[i].rep.job = d->jobs[i].name;
			res[i].rep.shaping = d->v->shaping;
			res[i].rep.members = 0; /* in res[a]'s entry */
		}
		a = b + 1;
		u = u2;
	}
	for (size_t u = 0; d->fio && u < r->nunits && !rc; u++) {
		struct qs_bench_result *one = calloc(1, sizeof(*one));
		rc = one ? drv_entry(r, r->ujob[u][0], r->ujob[u][1], &r->units[u], one) : -ENOMEM;
		if (one)
			d->fio[u] = one->rep;
		free(one);
	}
	if (d->fio)
		*d->nfio = rc ? 0 : r->nunits;
	return rc;
}

/* CPU of this thread, less what the world spent moving device data. */
static double drv_cpu_s(const struct drv_run *r)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	double dev = r->d->ops->dev_cpu_s ? r->d->ops->dev_cpu_s(r->d->ctx) : 0;
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9 - dev;
}

/* Open on what the devices hold (no format): its time on the world's clock
 * and the CPU it took. */
static int drv_reopen(struct drv_run *r, uint64_t *ns, double *cpu_s)
{
	if (r->d->ops->dev_cpu_count)
		r->d->ops->dev_cpu_count(r->d->ctx, true);
	uint64_t t0 = drv_now(r);
	double c0 = drv_cpu_s(r);
	int rc = drv_open(r, 0);
	*ns = drv_now(r) - t0;
	*cpu_s = drv_cpu_s(r) - c0;
	if (r->d->ops->dev_cpu_count)
		r->d->ops->dev_cpu_count(r->d->ctx, false);
	return rc;
}

/*
 * Recovery after the window (struct qs_bench_recovery): cut the power with
 * the engine's own I/O (destage, GC, map pages, checkpoints) in flight, let
 * the devices go idle, drop the engine as a crash would and open a new one
 * on what the fast tier holds; then close that one cleanly and open again.
 * Client I/O has all completed (the loop waits for it), so nothing of the
 * driver's is lost. Leaves r->e open for qs_drv_run's close.
 */
static int drv_recover(struct drv_run *r, struct qs_bench_recovery *rec)
{
	const struct qs_drv_run *d = r->d;
	struct qs_engine_stats st;
	qs_engine_get_stats(r->e, &st);
	rec->log_used_bytes = st.log_used_blocks * QS_BLOCK_SIZE;
	rec->cached_blocks = st.cached_blocks;
	rec->map_bytes = st.map_bytes;
	rec->map_region_bytes = r->ec.placement == QS_PLACE_LOG
		? qs_engine_conf_map_bytes(&r->ec, d->qlc->size) : 0;
	d->ops->power(d->ctx, false);
	/* Nothing reaches the old engine now, neither completions nor its
	 * timer (the world fires the timer of the engine it is given). */
	while (d->ops->wait(d->ctx, NULL, UINT64_MAX) == 0)
		;
	qs_engine_free(r->e);
	r->e = NULL;
	d->ops->power(d->ctx, true);
	int rc = drv_reopen(r, &rec->dirty_ns, &rec->dirty_cpu_s);
	if (!rc)
		rc = drv_close(r);
	if (!rc) {
		qs_engine_free(r->e);
		r->e = NULL;
		rc = drv_reopen(r, &rec->clean_ns, &rec->clean_cpu_s);
	}
	rec->measured = !rc;
	return rc;
}

struct drv_closer {
	const struct qs_drv_world_ops *ops;
	void *ctx;
	bool done;
	int res;
};

static void drv_closer_cb(void *arg, int res)
{
	struct drv_closer *c = arg;
	c->done = true;
	c->res = res;
	if (c->ops->wake)
		c->ops->wake(c->ctx);
}

int qs_drv_engine_close(const struct qs_drv_world_ops *ops, void *ctx, struct qs_engine *e)
{
	struct drv_closer c = {.ops = ops, .ctx = ctx};
	int rc = qs_engine_close(e, drv_closer_cb, &c);
	while (!rc && !c.done)
		rc = ops->wait(ctx, e, UINT64_MAX);
	if (c.done) {
		qs_engine_free(e);
		rc = c.res;
	}
	return rc;
}

int qs_drv_run(const struct qs_drv_run *d, struct qs_bench_result *res, char *err,
	       size_t errlen)
{
	struct drv_run run = {.d = d, .errbuf = err, .errlen = errlen, .tick_next = UINT64_MAX};
	struct drv_run *r = &run;
	r->vname = d->v->shaping ? qs_policy_order_name(d->v->order) : "shaping off";
	memset(res, 0, d->njobs * sizeof(*res));
	/* A carried engine is this run's from the start, so that a failure
	 * anywhere below closes it. */
	r->e = d->carry ? *d->carry : NULL;
	if (d->carry)
		*d->carry = NULL;
	if (r->e)
		(void)drv_conf(r); /* what the carried engine was opened with */
	int rc = drv_setup(r);
	if (!rc && !r->e)
		rc = drv_open(r, QS_OPEN_FORMAT);
	if (!r->e) {
		drv_teardown(r);
		return rc;
	}
	if (!rc)
		rc = drv_start(r);
	if (!rc)
		rc = drv_loop(r);
	uint64_t run_end = drv_now(r);
	struct qs_bench_recovery rec = {0};
	if (!rc && d->v->recovery && d->v->shaping && d->ops->power)
		rc = drv_recover(r, &rec);
	/* Carried on: the clients' I/O completes first (its callbacks are this
	 * run's); the engine's own goes on in the next run. */
	if (!rc && d->carry)
		rc = drv_drain(r);
	if (!rc && d->carry) {
		*d->carry = r->e;
		r->e = NULL;
	}
	/* Otherwise, whatever happened, the engine is closed: the next run, or
	 * the world's release, must find no request in flight on the devices. */
	int crc = r->e ? drv_close(r) : 0;
	if (!rc && crc) {
		rc = crc;
		snprintf(err, errlen, "job '%s': engine close: %s", d->jobs[0].name,
			 strerror(-crc));
	}
	if (!rc && drv_results(r, res)) {
		rc = -ENOMEM;
		snprintf(err, errlen, "job '%s': out of memory for the report", d->jobs[0].name);
	}
	for (size_t i = 0; i < d->njobs && !rc; i++) {
		res[i].sim_ns = run_end - r->t0;
		res[i].rec = rec;
	}
	drv_teardown(r);
	if (d->progress)
		fprintf(stderr, "\r%60s\r", "");
	return rc;
}
