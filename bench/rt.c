/* SPDX-License-Identifier: MIT */
/*
 * The bench's real-time driver: jobs through the real engine on the real
 * clock, over io_uring volumes (dev mode) or emulated drives (emu mode).
 * See bench/rt.h and docs/BENCH.md.
 *
 * The run loop mirrors bench/run.c's (same clones, slots, windows and
 * figures); what differs is where time comes from. Instead of events on a
 * virtual clock, the loop waits on the io_uring for completions, at most
 * until the next of: the engine's timer (qs_henv), a job's ramp end or end,
 * an open-loop clone's next I/O time.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/emu_vol.h"
#include "host/env.h"
#include "host/uloop.h"
#include "host/uring_vol.h"
#include "delta.h"
#include "hist.h"
#include "host/profile.h"
#include "rating.h"
#include "rt.h"
#include "workload.h"

/* Longest the loop sleeps without looking at the clock (progress line, and
 * a bound on any wait the loop did not foresee). */
#define RT_MAX_WAIT_NS 100000000ull
/* Slot buffer for trace jobs, whose I/O sizes are not known up front. */
#define RT_TRACE_BUF (1u << 20)
/* Cap on the I/O buffers of one run (slots x largest I/O). */
#define RT_BUF_MAX (4ull << 30)
#define RT_RING_ENTRIES 1024u

/* ---- counting volume: what the engine sends a device ---- */

struct rt_count {
	uint64_t reads, read_bytes;
	uint64_t writes, write_bytes, whole_writes; /* whole_writes: IU-aligned whole IUs */
	uint64_t flushes, discards, discard_bytes;
};

/*
 * A struct qs_vol that counts each request at submission and passes it to
 * the lower volume unchanged (same callback and argument: the lower volume
 * keeps the no-inline-completion contract). Its size may be smaller than
 * the lower volume's (the log capped by --cache, the QLC rounded to IUs).
 */
struct rt_cvol {
	struct qs_vol vol;
	struct qs_vol *lower;
	uint32_t iu;
	struct rt_count c;
};

static uint64_t rt_iov_len(const struct iovec *iov, int iovcnt)
{
	uint64_t n = 0;
	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

static void rt_cvol_read(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
			 qs_io_cb cb, void *arg)
{
	struct rt_cvol *v = ctx;
	v->c.reads++;
	v->c.read_bytes += rt_iov_len(iov, iovcnt);
	v->lower->ops->read(v->lower->ctx, off, iov, iovcnt, cb, arg);
}

static void rt_cvol_write(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
			  unsigned flags, qs_io_cb cb, void *arg)
{
	struct rt_cvol *v = ctx;
	uint64_t len = rt_iov_len(iov, iovcnt);
	v->c.writes++;
	v->c.write_bytes += len;
	if (len && off % v->iu == 0 && len % v->iu == 0)
		v->c.whole_writes++;
	v->lower->ops->write(v->lower->ctx, off, iov, iovcnt, flags, cb, arg);
}

static void rt_cvol_flush(void *ctx, qs_io_cb cb, void *arg)
{
	struct rt_cvol *v = ctx;
	v->c.flushes++;
	v->lower->ops->flush(v->lower->ctx, cb, arg);
}

static void rt_cvol_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	struct rt_cvol *v = ctx;
	v->c.discards++;
	v->c.discard_bytes += len;
	v->lower->ops->discard(v->lower->ctx, off, len, cb, arg);
}

static const struct qs_vol_ops rt_cvol_ops = {
	.read = rt_cvol_read,
	.write = rt_cvol_write,
	.flush = rt_cvol_flush,
	.discard = rt_cvol_discard,
};

static void rt_cvol_init(struct rt_cvol *v, struct qs_vol *lower, uint64_t size, uint32_t iu)
{
	memset(v, 0, sizeof(*v));
	v->lower = lower;
	v->iu = iu;
	v->vol.ops = &rt_cvol_ops;
	v->vol.ctx = v;
	v->vol.size = size;
	v->vol.flags = lower->flags;
}

/* The counts as device model counters (host_* fields), as sim mode reports. */
static void rt_count_model(const struct rt_count *a, const struct rt_count *b,
			   struct qs_model_counters *d)
{
	memset(d, 0, sizeof(*d));
	d->host_reads = b->reads - a->reads;
	d->host_read_bytes = b->read_bytes - a->read_bytes;
	d->host_writes = b->writes - a->writes;
	d->host_write_bytes = b->write_bytes - a->write_bytes;
	d->host_flushes = b->flushes - a->flushes;
	d->host_discards = b->discards - a->discards;
	d->host_discard_bytes = b->discard_bytes - a->discard_bytes;
}

/* ---- world: the devices, the loop, the environment ---- */

struct rt_dev {
	char *path;
	struct qs_uvol *uv; /* a block device claimed exclusively (QS_UVOL_EXCL) */
	struct stat st;
};

struct qs_rt_world {
	struct qs_rt_conf conf;
	char profile_path[512], fast_path[512];
	struct qs_profile prof, fast_prof; /* fast_prof: emu only */
	struct qs_uloop loop;
	struct qs_henv henv;
	struct rt_dev qlc, fast;	/* dev */
	struct qs_emu *qe, *fe;		/* emu: open during a run only */
	struct qs_rt_late qlate, flate; /* emu: of the last run */
	struct rt_cvol qc, fc;
	uint64_t capacity, log_bytes;
	uint32_t iu;
	double rating_bytes;		/* emu: endurance rating; NAN if unknown */
	uint64_t rated_capacity;
};

/*
 * Open path as a device of the run. A block device is claimed with O_EXCL
 * (the volume's QS_UVOL_EXCL): the kernel refuses that claim while the
 * device (or a partition of it) is mounted, is part of LVM, MD or
 * device-mapper, or is held by another exclusive opener, which is exactly
 * the set of devices a benchmark that overwrites must not touch. The claim
 * lasts as long as the volume, until the world is freed, so nothing can
 * mount the device during the runs.
 */
static int rt_dev_open(struct qs_rt_world *w, struct rt_dev *d, const char *opt,
		       const char *path, char *err, size_t errlen)
{
	if (stat(path, &d->st) < 0) {
		int rc = -errno;
		snprintf(err, errlen,
			 "%s %s: %s (dev mode needs an existing block device or regular file; "
			 "a test file: dd if=/dev/zero of=%s bs=1M count=4096 oflag=direct)", opt,
			 path, strerror(errno), path);
		return rc;
	}
	if (!S_ISBLK(d->st.st_mode) && !S_ISREG(d->st.st_mode)) {
		snprintf(err, errlen, "%s %s: neither a block device nor a regular file", opt, path);
		return -ENODEV;
	}
	d->path = strdup(path);
	if (!d->path) {
		snprintf(err, errlen, "%s %s: out of memory", opt, path);
		return -ENOMEM;
	}
	char uerr[512];
	int rc = qs_uvol_open(&d->uv, &w->loop, path, QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL, 0, uerr,
			      sizeof(uerr));
	if (rc == -EBUSY && S_ISBLK(d->st.st_mode))
		snprintf(err, errlen,
			 "%s %s: the device is in use (a mounted file system on it or on one of "
			 "its partitions, LVM, MD or device-mapper, or another program holding it "
			 "exclusively): refused, dev mode overwrites the device; unmount or "
			 "release it, or pick another", opt, path);
	else if (rc)
		snprintf(err, errlen, "%s %s", opt, uerr);
	return rc;
}

static void rt_dev_close(struct rt_dev *d)
{
	qs_uvol_close(d->uv);
	d->uv = NULL;
	free(d->path);
	d->path = NULL;
}

static bool rt_same_dev(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static int rt_world_open(const struct qs_rt_conf *conf, struct qs_rt_world **out, char *err,
			 size_t errlen);

/*
 * Emu mode: the QLC model's capacity and the log as sim mode sizes them
 * (bench/run.h): the model at the faithful scale unless --scale-gib, the
 * log at the real drive's --cache scaled by the same factor.
 */
static int rt_emu_world(struct qs_rt_world *w, char *err, size_t errlen)
{
	const struct qs_rt_conf *conf = &w->conf;
	qs_profile_path(conf->fast, w->fast_path, sizeof(w->fast_path));
	int rc = qs_profile_load(w->fast_path, &w->fast_prof, err, errlen);
	if (rc)
		return rc;
	uint64_t scaled = conf->scale_bytes ? conf->scale_bytes : qs_emu_faithful_bytes(&w->prof);
	if (!scaled || scaled > w->prof.capacity_bytes)
		scaled = w->prof.capacity_bytes;
	w->capacity = scaled / w->iu * w->iu;
	double ratio = (double)w->capacity / (double)w->prof.capacity_bytes;
	uint64_t log = (uint64_t)((double)conf->cache_bytes * ratio);
	log -= log % (1u << 20);
	if (log < (8u << 20)) {
		snprintf(err, errlen,
			 "--cache %llu bytes scaled by 1/%.0f gives a %llu-byte log: need at least "
			 "8 MiB after scaling", (unsigned long long)conf->cache_bytes, 1 / ratio,
			 (unsigned long long)log);
		return -EINVAL;
	}
	w->log_bytes = log;
	w->rating_bytes = NAN;
	w->rated_capacity = w->prof.capacity_bytes;
	if (conf->rating_bytes > 0)
		w->rating_bytes = conf->rating_bytes;
	else
		qs_rating_lookup(&w->prof, &w->rating_bytes, &w->rated_capacity);
	return 0;
}

int qs_rt_world_new(const struct qs_rt_conf *conf, struct qs_rt_world **out, char *err,
		    size_t errlen)
{
	*out = NULL;
	if (conf->kind == QS_RT_EMU)
		return rt_world_open(conf, out, err, errlen);
	if (!conf->yes_overwrite) {
		snprintf(err, errlen,
			 "dev mode overwrites %s%s%s with benchmark data and a log format: add "
			 "--yes-overwrite to confirm", conf->qlc_dev ? conf->qlc_dev : "the QLC device",
			 conf->fast_dev ? " and " : "", conf->fast_dev ? conf->fast_dev : "");
		return -EPERM;
	}
	if (!conf->qlc_dev) {
		snprintf(err, errlen, "dev mode needs --qlc-dev PATH (a block device or file)");
		return -EINVAL;
	}
	return rt_world_open(conf, out, err, errlen);
}

/* The world of either mode, once dev mode's confirmation is checked. */
static int rt_world_open(const struct qs_rt_conf *conf, struct qs_rt_world **out, char *err,
			 size_t errlen)
{
	struct qs_rt_world *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->conf = *conf;
	qs_profile_path(conf->profile, w->profile_path, sizeof(w->profile_path));
	int rc = qs_profile_load(w->profile_path, &w->prof, err, errlen);
	if (rc)
		goto fail;
	w->iu = w->prof.iu_bytes;
	rc = qs_uloop_init(&w->loop, RT_RING_ENTRIES);
	if (rc) {
		snprintf(err, errlen, "io_uring setup (%u entries): %s", RT_RING_ENTRIES,
			 strerror(-rc));
		goto fail;
	}
	qs_henv_init(&w->henv, "qlcshape: ", QS_LOG_WARN);
	if (conf->kind == QS_RT_EMU) {
		rc = rt_emu_world(w, err, errlen);
		if (rc)
			goto fail;
		*out = w;
		return 0;
	}
	rc = rt_dev_open(w, &w->qlc, "--qlc-dev", conf->qlc_dev, err, errlen);
	if (rc)
		goto fail;
	if (conf->fast_dev) {
		rc = rt_dev_open(w, &w->fast, "--fast-dev", conf->fast_dev, err, errlen);
		if (rc)
			goto fail;
		if (rt_same_dev(&w->qlc.st, &w->fast.st)) {
			snprintf(err, errlen, "--fast-dev %s and --qlc-dev %s are the same device: "
					      "give two", conf->fast_dev, conf->qlc_dev);
			rc = -EINVAL;
			goto fail;
		}
	}
	w->capacity = w->qlc.uv->vol.size / w->iu * w->iu;
	if (!w->capacity) {
		snprintf(err, errlen, "--qlc-dev %s: %llu bytes, smaller than one IU (%u bytes)",
			 conf->qlc_dev, (unsigned long long)w->qlc.uv->vol.size, w->iu);
		rc = -EINVAL;
		goto fail;
	}
	rt_cvol_init(&w->qc, &w->qlc.uv->vol, w->capacity, w->iu);
	if (w->fast.uv) {
		uint64_t log = w->fast.uv->vol.size;
		if (conf->cache_bytes && conf->cache_bytes < log)
			log = conf->cache_bytes;
		/* 1 MiB granularity: the engine's default log segment */
		log -= log % (1u << 20);
		if (log < (8u << 20)) {
			snprintf(err, errlen, "--fast-dev %s: a %llu-byte log (the device, or --cache "
					      "if smaller): need at least 8 MiB", conf->fast_dev,
				 (unsigned long long)log);
			rc = -EINVAL;
			goto fail;
		}
		w->log_bytes = log;
		rt_cvol_init(&w->fc, &w->fast.uv->vol, log, QS_BLOCK_SIZE);
	}
	*out = w;
	return 0;
fail:
	qs_rt_world_free(w);
	return rc;
}

void qs_rt_world_free(struct qs_rt_world *w)
{
	if (!w)
		return;
	/* Runs return only once their engine is closed: nothing is in flight. */
	qs_emu_close(w->qe);
	qs_emu_close(w->fe);
	rt_dev_close(&w->qlc);
	rt_dev_close(&w->fast);
	qs_uloop_exit(&w->loop);
	free(w);
}

uint64_t qs_rt_world_capacity(const struct qs_rt_world *w)
{
	return w->capacity;
}

uint64_t qs_rt_world_log_bytes(const struct qs_rt_world *w)
{
	return w->log_bytes;
}

uint32_t qs_rt_world_iu(const struct qs_rt_world *w)
{
	return w->iu;
}

static const char *rt_dev_kind(const struct rt_dev *d)
{
	if (S_ISBLK(d->st.st_mode))
		return "block device";
	return d->uv->direct ? "file, O_DIRECT" : "file, buffered (no O_DIRECT here)";
}

void qs_rt_world_late(const struct qs_rt_world *w, struct qs_rt_late *qlc,
		      struct qs_rt_late *fast)
{
	*qlc = w->qlate;
	*fast = w->flate;
}

void qs_rt_world_describe(const struct qs_rt_world *w, char *buf, size_t len)
{
	if (w->conf.kind == QS_RT_EMU) {
		snprintf(buf, len,
			 "emulated QLC %s: %.2f GiB model (1/%.0f of the drive), IU %u KiB, filled "
			 "sequentially before each run; emulated fast tier %s: log %.1f MB (--cache "
			 "%.3g GB scaled alike); timing only (no data kept)",
			 w->prof.name, (double)w->capacity / 1073741824.0,
			 (double)w->prof.capacity_bytes / (double)w->capacity, w->iu / 1024,
			 w->fast_prof.name, (double)w->log_bytes / 1e6,
			 (double)w->conf.cache_bytes / 1e9);
		return;
	}
	int n = snprintf(buf, len, "QLC %s (%s, %.1f GB used, IU %u KiB from profile %s)",
			 w->qlc.path, rt_dev_kind(&w->qlc), (double)w->capacity / 1e9,
			 w->iu / 1024, w->prof.name);
	if (n < 0 || (size_t)n >= len)
		return;
	if (w->fast.uv)
		snprintf(buf + n, len - (size_t)n, ", fast tier %s (%s, log %.1f MB)",
			 w->fast.path, rt_dev_kind(&w->fast), (double)w->log_bytes / 1e6);
	else
		snprintf(buf + n, len - (size_t)n, ", no fast tier");
}

/* ---- stamps ---- */

static uint64_t rt_stamp_check(uint64_t off, uint64_t seed)
{
	uint64_t x = QS_RT_STAMP_MAGIC ^ off ^ seed;
	return (x << 23) | (x >> 41);
}

static void rt_stamp(void *blk, uint64_t off, uint64_t seed)
{
	struct qs_rt_stamp s = {QS_RT_STAMP_MAGIC, off, seed, rt_stamp_check(off, seed)};
	memcpy(blk, &s, sizeof(s));
}

bool qs_rt_stamp_ok(const void *blk, uint64_t off, uint64_t seed)
{
	struct qs_rt_stamp s;
	memcpy(&s, blk, sizeof(s));
	return s.magic == QS_RT_STAMP_MAGIC && s.off == off && s.seed == seed &&
	       s.check == rt_stamp_check(off, seed);
}

/* ---- one run ---- */

struct rt_run;

struct rt_job {
	struct rt_run *r;
	const struct qs_job *job;
	unsigned live;
	uint64_t ramp_end, end;
	bool in_window, window_done;
	struct qs_hist *hr, *hw;
	uint64_t rd_ios, rd_bytes, wr_ios, wr_bytes, ios;
	struct qs_engine_stats e0, e1;
	struct rt_count q0, q1, f0, f1;
	struct qs_model_counters qm0, qm1, fm0, fm1; /* emu: the models' */
	uint64_t win_start, win_end;
};

struct rt_clone {
	struct rt_job *j;
	struct qs_wl *wl;
	unsigned iodepth, inflight;
	bool ended, timed, have_next, next_due, done;
	uint64_t due_ns; /* have_next: when next is to be issued */
	struct qs_io next;
};

struct rt_slot {
	struct rt_clone *c;
	uint64_t issue_ns;
	uint64_t bytes;
	enum qs_io_op op;
	void *buf;
	struct rt_slot *next_free;
};

struct rt_run {
	struct qs_rt_world *w;
	struct rt_job *jobs;
	size_t njobs;
	struct qs_engine *e;
	struct rt_clone *clones;
	unsigned nclones, live;
	struct rt_slot *slots, *free_slots;
	void *bufs;
	uint64_t slot_bytes;
	uint64_t inflight; /* client I/Os in flight, all clones */
	uint64_t seed;
	uint64_t t0, end_max;
	bool flag;
	int flag_res;
	int err;
	char *errbuf;
	size_t errlen;
	const char *vname;
	uint64_t prog_last;
};

static void rt_fail(struct rt_run *r, const struct qs_job *job, int rc, const char *what)
{
	if (r->err)
		return;
	r->err = rc;
	snprintf(r->errbuf, r->errlen, "job '%s': %s: %s", job->name, what, strerror(-rc));
}

static void rt_snapshot(struct rt_job *j, struct qs_engine_stats *es, struct rt_count *q,
			struct rt_count *f, struct qs_model_counters *qm,
			struct qs_model_counters *fm)
{
	struct qs_rt_world *w = j->r->w;
	qs_engine_get_stats(j->r->e, es);
	*q = w->qc.c;
	*f = w->fc.c;
	if (w->qe) {
		struct qs_emu_stats st;
		qs_emu_get_stats(w->qe, &st);
		*qm = st.model;
		qs_emu_get_stats(w->fe, &st);
		*fm = st.model;
	}
}

static void rt_window_open(struct rt_job *j)
{
	if (j->in_window || j->window_done)
		return;
	j->in_window = true;
	j->win_start = qs_henv_now_ns();
	rt_snapshot(j, &j->e0, &j->q0, &j->f0, &j->qm0, &j->fm0);
}

static void rt_window_close(struct rt_job *j)
{
	if (j->window_done)
		return;
	if (!j->in_window)
		rt_window_open(j);
	j->in_window = false;
	j->window_done = true;
	j->win_end = qs_henv_now_ns();
	rt_snapshot(j, &j->e1, &j->q1, &j->f1, &j->qm1, &j->fm1);
}

static void rt_clone_finish(struct rt_clone *c)
{
	struct rt_job *j = c->j;
	if (c->done || !c->ended || c->inflight)
		return;
	c->done = true;
	if (--j->live == 0)
		rt_window_close(j);
	j->r->live--;
}

/* runtime over: the job's window closes, its clones issue nothing more */
static void rt_job_end(struct rt_job *j)
{
	struct rt_run *r = j->r;
	rt_window_close(j);
	for (unsigned i = 0; i < r->nclones; i++) {
		struct rt_clone *c = &r->clones[i];
		if (c->j != j || c->ended)
			continue;
		c->ended = true;
		rt_clone_finish(c);
	}
}

static void rt_progress(struct rt_run *r)
{
	uint64_t now = qs_henv_now_ns();
	if (now - r->prog_last < 250000000ull)
		return;
	r->prog_last = now;
	double t = (double)(now - r->t0) / 1e9;
	const char *name = r->jobs[0].job->name;
	if (r->end_max != UINT64_MAX)
		fprintf(stderr, "\r  %s%s, %s: %3.0f%% of %.2f s (wall clock)  ", name,
			r->njobs > 1 ? " (group)" : "", r->vname,
			100.0 * t / ((double)(r->end_max - r->t0) / 1e9),
			(double)(r->end_max - r->t0) / 1e9);
	else
		fprintf(stderr, "\r  %s%s, %s: %.2f s (wall clock)  ", name,
			r->njobs > 1 ? " (group)" : "", r->vname, t);
}

static void rt_issue(struct rt_clone *c, const struct qs_io *io);
static void rt_pump(struct rt_clone *c);

static void rt_io_done(void *arg, int res)
{
	struct rt_slot *s = arg;
	struct rt_clone *c = s->c;
	struct rt_job *j = c->j;
	struct rt_run *r = j->r;
	uint64_t now = qs_henv_now_ns();
	if (res)
		rt_fail(r, j->job, res, s->op == QS_IO_READ ? "read failed" : "write failed");
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
	r->inflight--;
	if (c->ended) {
		rt_clone_finish(c);
		return;
	}
	if (c->timed) {
		if (c->next_due) {
			c->next_due = false;
			struct qs_io io = c->next;
			c->have_next = false;
			rt_issue(c, &io);
			rt_pump(c);
		}
	} else {
		rt_pump(c);
	}
}

static void rt_issue(struct rt_clone *c, const struct qs_io *io)
{
	struct rt_run *r = c->j->r;
	struct rt_slot *s = r->free_slots;
	if (!s || io->len > r->slot_bytes) {
		char what[96];
		snprintf(what, sizeof(what), s ? "I/O of %llu bytes larger than the %llu-byte buffer"
					       : "no free slot",
			 (unsigned long long)io->len, (unsigned long long)r->slot_bytes);
		rt_fail(r, c->j->job, -E2BIG, what);
		return;
	}
	r->free_slots = s->next_free;
	s->c = c;
	s->bytes = io->orig_len ? io->orig_len : io->len;
	s->op = io->op;
	int rc;
	switch (io->op) {
	case QS_IO_READ:
		s->issue_ns = qs_henv_now_ns();
		rc = qs_engine_read(r->e, io->off, io->len, s->buf, rt_io_done, s);
		break;
	case QS_IO_WRITE:
		for (uint64_t b = 0; b < io->len; b += QS_BLOCK_SIZE)
			rt_stamp((char *)s->buf + b, io->off + b, r->seed);
		s->issue_ns = qs_henv_now_ns();
		rc = qs_engine_write(r->e, io->off, io->len, s->buf, 0, rt_io_done, s);
		break;
	case QS_IO_TRIM:
		s->issue_ns = qs_henv_now_ns();
		rc = qs_engine_discard(r->e, io->off, io->len, rt_io_done, s);
		break;
	default:
		s->issue_ns = qs_henv_now_ns();
		rc = qs_engine_flush(r->e, rt_io_done, s);
		break;
	}
	if (rc) {
		s->next_free = r->free_slots;
		r->free_slots = s;
		rt_fail(r, c->j->job, rc, "submission refused by the engine");
		return;
	}
	c->inflight++;
	r->inflight++;
}

static int rt_next(struct rt_clone *c, struct qs_io *io)
{
	int rc = qs_wl_next(c->wl, io);
	if (rc < 0) {
		struct rt_run *r = c->j->r;
		if (!r->err) {
			r->err = rc;
			snprintf(r->errbuf, r->errlen, "job '%s': %s", c->j->job->name,
				 qs_wl_error(c->wl));
		}
	}
	return rc;
}

/* Open loop: the clone's next I/O is due (or overdue). */
static void rt_due(struct rt_clone *c)
{
	if (c->inflight >= c->iodepth) {
		c->next_due = true; /* goes out when a slot frees (fio's iodepth cap) */
		return;
	}
	struct qs_io io = c->next;
	c->have_next = false;
	rt_issue(c, &io);
	rt_pump(c);
}

static void rt_pump(struct rt_clone *c)
{
	struct rt_run *r = c->j->r;
	if (c->ended || r->err)
		return;
	if (c->timed) {
		if (c->have_next)
			return;
		struct qs_io io;
		if (rt_next(c, &io) <= 0) {
			c->ended = true;
			rt_clone_finish(c);
			return;
		}
		uint64_t t = r->t0 + io.at_ns;
		if (t >= c->j->end) {
			c->ended = true;
			rt_clone_finish(c);
			return;
		}
		c->next = io;
		c->have_next = true;
		c->due_ns = t;
		return;
	}
	while (c->inflight < c->iodepth && !c->ended && !r->err) {
		struct qs_io io;
		if (rt_next(c, &io) <= 0) {
			c->ended = true;
			rt_clone_finish(c);
			return;
		}
		if (io.timed) {
			/* a timed trace: switch this clone to open loop */
			c->timed = true;
			c->next = io;
			c->have_next = true;
			c->due_ns = r->t0 + io.at_ns;
			return;
		}
		rt_issue(c, &io);
	}
}

/*
 * Run what is due on the clock (ramp ends, job ends, open-loop I/Os) and
 * return the next time something will be (UINT64_MAX: nothing scheduled).
 */
static uint64_t rt_tick(struct rt_run *r)
{
	uint64_t now = qs_henv_now_ns(), next = UINT64_MAX;
	for (size_t i = 0; i < r->njobs; i++) {
		struct rt_job *j = &r->jobs[i];
		if (j->window_done)
			continue;
		if (!j->in_window) {
			if (now >= j->ramp_end)
				rt_window_open(j);
			else if (j->ramp_end < next)
				next = j->ramp_end;
		}
		if (j->end != UINT64_MAX) {
			if (now >= j->end)
				rt_job_end(j);
			else if (j->end < next)
				next = j->end;
		}
	}
	for (unsigned i = 0; i < r->nclones && !r->err; i++) {
		struct rt_clone *c = &r->clones[i];
		while (c->have_next && !c->next_due && !c->ended && !r->err && now >= c->due_ns)
			rt_due(c);
		if (c->have_next && !c->next_due && !c->ended && c->due_ns < next)
			next = c->due_ns;
	}
	return next;
}

/* One turn of the loop: wait for completions until deadline at most, then
 * run the engine's timer if it is due. 0 or -errno from io_uring. */
static int rt_turn(struct rt_run *r, uint64_t deadline)
{
	struct qs_rt_world *w = r->w;
	uint64_t now = qs_henv_now_ns();
	uint64_t to = deadline == UINT64_MAX ? UINT64_MAX : deadline > now ? deadline - now : 0;
	uint64_t et = qs_henv_timeout(&w->henv);
	if (et < to)
		to = et;
	if (to > RT_MAX_WAIT_NS)
		to = RT_MAX_WAIT_NS;
	int n = qs_uloop_run(&w->loop, to);
	if (n < 0 && n != -EINTR)
		return n;
	if (r->e && qs_henv_expired(&w->henv))
		qs_engine_timer(r->e);
	return 0;
}

static void rt_flag_cb(void *arg, int res)
{
	struct rt_run *r = arg;
	r->flag = true;
	r->flag_res = res;
}

/* Turn the loop until the open or close callback ran; its result. */
static int rt_wait_flag(struct rt_run *r)
{
	while (!r->flag) {
		int rc = rt_turn(r, UINT64_MAX);
		if (rc)
			return rc;
	}
	return r->flag_res;
}

static void rt_teardown(struct rt_run *r)
{
	if (r->e)
		qs_engine_free(r->e);
	if (r->clones)
		for (unsigned i = 0; i < r->nclones; i++)
			qs_wl_close(r->clones[i].wl);
	free(r->clones);
	free(r->slots);
	free(r->bufs);
	if (r->jobs)
		for (size_t i = 0; i < r->njobs; i++) {
			free(r->jobs[i].hr);
			free(r->jobs[i].hw);
		}
	free(r->jobs);
}

static void rt_result(struct rt_run *r, struct rt_job *j, const struct qs_bench_variant *v,
		      struct qs_bench_result *res)
{
	struct qs_rt_world *w = r->w;
	qs_delta_engine_stats(&res->eng, &j->e0, &j->e1);
	if (w->qe) {
		qs_delta_model_counters(&res->qlc, &j->qm0, &j->qm1);
		qs_delta_model_counters(&res->fast, &j->fm0, &j->fm1);
	} else {
		rt_count_model(&j->q0, &j->q1, &res->qlc);
		rt_count_model(&j->f0, &j->f1, &res->fast);
	}
	res->ios = j->ios;
	res->window_ns = j->win_end - j->win_start;
	struct qs_report_run *rep = &res->rep;
	rep->job = j->job->name;
	rep->shaping = v->shaping;
	rep->policy = v->shaping ? qs_policy_order_name(v->order) : "-";
	rep->mode = w->conf.kind == QS_RT_EMU ? "emu" : "dev";
	qs_report_dir_fill(&rep->read, j->hr, j->rd_ios, j->rd_bytes, res->window_ns);
	qs_report_dir_fill(&rep->write, j->hw, j->wr_ios, j->wr_bytes, res->window_ns);
	/* What reached the device, counted at its volume; read-fill is the
	 * engine's (a read does not say why it was issued). WAF IU from the
	 * drive model in emu mode, as in sim mode; dev mode has none:
	 * drive_write_bytes 0 leaves WAF IU and the life figure unknown. */
	struct qs_report_qlc_in qi = {
		.client_write_bytes = res->eng.client_write_bytes,
		.qlc_write_bytes = j->q1.write_bytes - j->q0.write_bytes,
		.qlc_writes = j->q1.writes - j->q0.writes,
		.qlc_iu_whole_writes = j->q1.whole_writes - j->q0.whole_writes,
		.read_fill_bytes = res->eng.read_fill_bytes,
		.elapsed_ns = res->window_ns,
		.rating_bytes = NAN,
		.rated_capacity = w->capacity,
		.capacity = w->capacity,
	};
	if (w->qe) {
		qi.drive_write_bytes = res->qlc.host_write_bytes;
		qi.drive_prog_bytes = res->qlc.host_prog_bytes;
		qi.rating_bytes = w->rating_bytes;
		qi.rated_capacity = w->rated_capacity;
		qi.capacity = w->prof.capacity_bytes; /* the drive modelled, as sim */
	}
	qs_report_qlc_fill(&rep->qlc, &qi);
	rep->fast_write_bytes = j->f1.write_bytes - j->f0.write_bytes;
}

/* xorshift64: the slot buffers start as incompressible bytes, as fio's do. */
static void rt_fill_random(void *buf, uint64_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1, *p = buf;
	for (uint64_t i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
}

/* Buffer bytes per slot: the largest I/O the jobs can issue. */
static uint64_t rt_slot_bytes(const struct qs_job *jobs, size_t njobs)
{
	uint64_t n = QS_BLOCK_SIZE;
	for (size_t i = 0; i < njobs; i++) {
		uint64_t b = jobs[i].trace ? RT_TRACE_BUF : jobs[i].bs;
		if (b > n)
			n = b;
	}
	return (n + QS_BLOCK_SIZE - 1) / QS_BLOCK_SIZE * QS_BLOCK_SIZE;
}

/*
 * Emu mode: fresh emulated drives for one run, the QLC preconditioned by a
 * sequential fill of the whole model (the published fio method, as sim
 * mode), the fast tier fresh (an SCM model has no state a fill would
 * change). Their model clocks start now.
 */
static int rt_emu_open(struct qs_rt_world *w, char *err, size_t errlen)
{
	struct qs_emu_conf c = {
		.profile = &w->prof,
		.size = w->capacity,
		.backing = QS_EMU_NONE, /* timing only, as sim mode */
		.precondition = QS_EMU_PRECOND_SEQ,
	};
	char e2[512];
	memset(&w->qlate, 0, sizeof(w->qlate));
	memset(&w->flate, 0, sizeof(w->flate));
	int rc = qs_emu_open(&w->qe, &w->loop, &c, e2, sizeof(e2));
	if (rc) {
		snprintf(err, errlen, "emulated QLC (profile %s): %s", w->prof.name, e2);
		return rc;
	}
	c.profile = &w->fast_prof;
	c.size = w->log_bytes;
	c.precondition = QS_EMU_PRECOND_NONE;
	rc = qs_emu_open(&w->fe, &w->loop, &c, e2, sizeof(e2));
	if (rc) {
		snprintf(err, errlen, "emulated fast tier (profile %s): %s", w->fast_prof.name, e2);
		return rc;
	}
	rt_cvol_init(&w->qc, qs_emu_vol(w->qe), w->capacity, w->iu);
	rt_cvol_init(&w->fc, qs_emu_vol(w->fe), w->log_bytes, QS_BLOCK_SIZE);
	return 0;
}

static void rt_late(struct qs_emu *e, struct qs_rt_late *l)
{
	struct qs_emu_stats st;
	qs_emu_get_stats(e, &st);
	l->requests = st.reads + st.writes + st.flushes + st.discards;
	l->late = st.completions;
	l->late_ns_sum = st.late_ns_sum;
	l->late_ns_max = st.late_ns_max;
}

/* Emu mode, after a run: keep the lateness figures, free the drives. */
static void rt_emu_close(struct qs_rt_world *w)
{
	if (w->qe)
		rt_late(w->qe, &w->qlate);
	if (w->fe)
		rt_late(w->fe, &w->flate);
	qs_emu_close(w->qe);
	qs_emu_close(w->fe);
	w->qe = w->fe = NULL;
}

int qs_rt_run_group(struct qs_rt_world *w, const struct qs_job *jobs, size_t njobs,
		    const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		    char *err, size_t errlen)
{
	uint64_t wall0 = qs_henv_now_ns();
	memset(res, 0, njobs * sizeof(*res));
	struct rt_run run, *r = &run;
	memset(r, 0, sizeof(*r));
	r->w = w;
	r->errbuf = err;
	r->errlen = errlen;
	r->seed = seed;
	r->vname = v->shaping ? qs_policy_order_name(v->order) : "shaping off";
	const char *name = jobs[0].name;
	int rc = -ENOMEM;
	if (v->shaping && !w->fast.uv && w->conf.kind == QS_RT_DEV) {
		snprintf(err, errlen, "job '%s': shaping on needs a fast tier: give --fast-dev PATH "
				      "(or --shaping off)", name);
		return -EINVAL;
	}
	r->njobs = njobs;
	r->jobs = calloc(njobs, sizeof(*r->jobs));
	if (!r->jobs) {
		snprintf(err, errlen, "job '%s': out of memory setting up the run", name);
		goto out;
	}
	uint64_t nslots = 0;
	for (size_t i = 0; i < njobs; i++) {
		struct rt_job *j = &r->jobs[i];
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
	r->slot_bytes = rt_slot_bytes(jobs, njobs);
	if (nslots * r->slot_bytes > RT_BUF_MAX) {
		rc = -E2BIG;
		snprintf(err, errlen, "job '%s': %llu I/O slots of %llu bytes need more than the "
				      "%llu GiB of buffers a run may use: lower iodepth, numjobs or bs",
			 name, (unsigned long long)nslots, (unsigned long long)r->slot_bytes,
			 RT_BUF_MAX >> 30);
		goto out;
	}
	r->clones = calloc(r->nclones, sizeof(*r->clones));
	r->slots = calloc(nslots, sizeof(*r->slots));
	if (!r->clones || !r->slots ||
	    posix_memalign(&r->bufs, QS_BLOCK_SIZE, nslots * r->slot_bytes)) {
		r->bufs = NULL;
		snprintf(err, errlen, "job '%s': out of memory for %llu I/O slots of %llu bytes", name,
			 (unsigned long long)nslots, (unsigned long long)r->slot_bytes);
		goto out;
	}
	rt_fill_random(r->bufs, nslots * r->slot_bytes, seed);
	for (uint64_t i = 0; i < nslots; i++) {
		r->slots[i].buf = (char *)r->bufs + i * r->slot_bytes;
		r->slots[i].next_free = r->free_slots;
		r->free_slots = &r->slots[i];
	}

	if (w->conf.kind == QS_RT_EMU) {
		rc = rt_emu_open(w, err, errlen);
		if (rc)
			goto out;
	}
	struct qs_engine_conf ec;
	qs_engine_conf_default(&ec);
	ec.mode = v->shaping ? QS_MODE_CACHE : QS_MODE_PASSTHROUGH;
	ec.policy.order = v->order;
	ec.iu_bytes = w->iu;
	w->qc.c = (struct rt_count){0};
	w->fc.c = (struct rt_count){0};
	w->henv.deadline_ns = 0;
	r->e = qs_engine_open(&w->henv.env, v->shaping ? &w->fc.vol : NULL, &w->qc.vol, &ec,
			      QS_OPEN_FORMAT, rt_flag_cb, r);
	if (!r->e) {
		rc = -errno;
		snprintf(err, errlen, "job '%s': engine open: %s", name, strerror(errno));
		goto out;
	}
	rc = rt_wait_flag(r);
	if (rc) {
		snprintf(err, errlen, "job '%s': engine open (format) failed: %s", name,
			 strerror(-rc));
		goto close; /* a failed open must still be closed */
	}

	r->t0 = qs_henv_now_ns();
	r->prog_last = r->t0;
	r->end_max = 0;
	unsigned ci = 0;
	for (size_t i = 0; i < njobs; i++) {
		struct rt_job *j = &r->jobs[i];
		const struct qs_job *job = j->job;
		for (unsigned k = 0; k < job->numjobs; k++, ci++) {
			struct rt_clone *c = &r->clones[ci];
			c->j = j;
			c->iodepth = job->iodepth;
			c->timed = job->rate_iops != 0;
			rc = qs_wl_open(job, k, seed, &c->wl, err, errlen);
			if (rc)
				goto close;
		}
		j->live = job->numjobs;
		j->ramp_end = r->t0 + job->ramp_time_ns;
		/* fio: runtime starts when ramp_time ends (the run lasts both) */
		j->end = job->runtime_ns ? j->ramp_end + job->runtime_ns : UINT64_MAX;
		if (j->end > r->end_max)
			r->end_max = j->end;
		if (!job->ramp_time_ns)
			rt_window_open(j);
	}
	r->live = r->nclones;
	for (unsigned i = 0; i < r->nclones && !r->err; i++)
		rt_pump(&r->clones[i]);
	while (r->live && !r->err) {
		uint64_t next = rt_tick(r);
		if (!r->live || r->err)
			break;
		if (!r->inflight && next == UINT64_MAX && !w->henv.deadline_ns) {
			rc = -EIO;
			snprintf(err, errlen, "job '%s': run stalled: %u clones busy, no I/O in flight "
					      "and nothing scheduled", name, r->live);
			goto close;
		}
		rc = rt_turn(r, next);
		if (rc) {
			snprintf(err, errlen, "job '%s': io_uring: %s", name, strerror(-rc));
			goto close;
		}
		if (w->conf.progress)
			rt_progress(r);
	}
	rc = r->err;
	if (rc)
		goto close;
	for (size_t i = 0; i < njobs; i++)
		rt_window_close(&r->jobs[i]);
close:
	/* Whatever happened, the engine is closed (in-flight I/O finishes, no
	 * destage): the next run, or the world's release, must find no
	 * request in flight on the devices. */
	{
		uint64_t run_end = qs_henv_now_ns();
		int first = rc;
		r->flag = false;
		int crc = qs_engine_close(r->e, rt_flag_cb, r);
		if (!crc)
			crc = rt_wait_flag(r);
		/* client I/O still in flight on error completes during close */
		while (!crc && r->inflight)
			crc = rt_turn(r, UINT64_MAX);
		if (first)
			goto out;
		if (crc) {
			rc = crc;
			snprintf(err, errlen, "job '%s': engine close: %s", name, strerror(-crc));
			goto out;
		}
		for (size_t i = 0; i < njobs; i++) {
			rt_result(r, &r->jobs[i], v, &res[i]);
			res[i].sim_ns = run_end - r->t0;
		}
		rc = 0;
	}
out:
	rt_teardown(r);
	rt_emu_close(w);
	if (w->conf.progress)
		fprintf(stderr, "\r%60s\r", "");
	double wall = (double)(qs_henv_now_ns() - wall0) / 1e9;
	for (size_t i = 0; i < njobs; i++)
		res[i].wall_s = wall;
	return rc;
}

int qs_rt_run_job(struct qs_rt_world *w, const struct qs_job *job,
		  const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		  char *err, size_t errlen)
{
	return qs_rt_run_group(w, job, 1, v, seed, res, err, errlen);
}
