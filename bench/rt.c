/* SPDX-License-Identifier: MIT */
/*
 * The bench's real-time driver: jobs through the real engine on the real
 * clock, over io_uring volumes (dev mode) or emulated drives (emu mode).
 * See bench/rt.h and docs/BENCH.md.
 *
 * Runs go through the bench's one job driver (bench/drive.h); this world
 * gives it the real clock and waits on the io_uring for completions, at
 * most until the driver's next deadline or the engine's timer (qs_henv,
 * one turn of qs_hloop_turn), whichever comes first.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qlcshape/format.h"
#include "host/emu_vol.h"
#include "host/rand.h"
#include "host/env.h"
#include "host/loop.h"
#include "host/profile.h"
#include "host/uloop.h"
#include "host/uring_vol.h"

#include "delta.h"
#include "drive.h"
#include "rt.h"

/* Longest the loop sleeps without looking at the clock (progress line, and
 * a bound on any wait the loop did not foresee). */
#define RT_MAX_WAIT_NS 100000000ull
#define RT_RING_ENTRIES 1024u
/* Dev mode's sequential fill: 1 MiB writes, 16 in flight (a sequential
 * stream deep enough for any drive's full write bandwidth). */
#define RT_FILL_CHUNK (1u << 20)
#define RT_FILL_QD 16u

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

struct rt_fill {
	uint64_t inflight;
	int err; /* the first error */
};

struct qs_rt_world {
	struct qs_rt_conf conf;
	char profile_path[512], fast_path[512];
	struct qs_profile prof, fast_prof; /* fast_prof: emu only */
	struct qs_uloop loop;
	struct qs_henv henv;
	struct rt_dev qlc, fast;	/* dev */
	struct qs_emu *qe, *fe;		/* emu: open during a run, or a carry */
	struct qs_rt_late qlate, flate; /* emu: of the last run */
	/* emu: the drives' stats at the last run's start (its lateness is
	 * the difference) */
	struct qs_emu_stats qs0, fs0;
	/*
	 * Between qs_rt_carry_begin and qs_rt_carry_end: one variant's runs on
	 * the same drives, with the engine its last run left open (NULL before
	 * the first, or after a failure closed it).
	 */
	bool carrying;
	const struct qs_bench_variant *carry_v;
	struct qs_engine *carry;
	struct rt_cvol qc, fc;
	struct qs_drv_sizes sz;		/* dev: the devices' (no rating); emu: as sim */
	uint64_t fill_ns, fills;	/* dev, --precondition: the last fill's time, how many */
	struct rt_fill fill;		/* dev, --precondition: the fill's writes */
	uint32_t iu;
	uint64_t superblock_bytes;	/* emu: one superblock of the QLC model */
	uint64_t map_bytes;		/* log placement: the map region */
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
 * Dev mode: the log on the fast device, --cache or the device if smaller;
 * with log placement among the variants the map region comes first out of
 * the device, so every variant runs with the same log.
 */
static int rt_dev_log(struct qs_rt_world *w, char *err, size_t errlen)
{
	const struct qs_rt_conf *conf = &w->conf;
	uint64_t dev = w->fast.uv->vol.size;
	if (conf->log_placement) {
		struct qs_engine_conf lc;
		qs_rt_world_log_conf(w, &lc);
		w->map_bytes = qs_engine_conf_map_bytes(&lc, w->sz.capacity);
	}
	uint64_t log = dev > w->map_bytes ? dev - w->map_bytes : 0;
	if (conf->cache_bytes && conf->cache_bytes < log)
		log = conf->cache_bytes;
	w->sz.log_bytes = qs_drv_log_bytes(log);
	if (!w->sz.log_bytes) {
		snprintf(err, errlen, "--fast-dev %s: a %llu-byte log (the device%s, or --cache if "
			 "smaller): need at least %llu MiB", conf->fast_dev, (unsigned long long)log,
			 w->map_bytes ? " less log placement's map region" : "",
			 QS_DRV_LOG_MIN >> 20);
		return -EINVAL;
	}
	rt_cvol_init(&w->fc, &w->fast.uv->vol, w->sz.log_bytes, QS_BLOCK_SIZE);
	return 0;
}

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
	rc = qs_drv_sizes_model(&w->prof, conf->scale_bytes, conf->cache_bytes, conf->rating_bytes,
				&w->sz, err, errlen);
	if (rc)
		return rc;
	if (conf->log_placement) {
		/* the band is a superblock of the model the runs emulate */
		struct qs_model *m = qs_model_new(&w->prof, w->sz.capacity);
		if (!m) {
			rc = -errno;
			snprintf(err, errlen, "QLC model %s: %s", w->prof.name, strerror(errno));
			return rc;
		}
		w->superblock_bytes = qs_model_superblock_bytes(m);
		qs_model_free(m);
		struct qs_engine_conf lc;
		qs_rt_world_log_conf(w, &lc);
		w->map_bytes = qs_engine_conf_map_bytes(&lc, w->sz.capacity);
	}
	return 0;
}

void qs_rt_world_log_conf(const struct qs_rt_world *w, struct qs_engine_conf *c)
{
	double scale = w->conf.kind == QS_RT_EMU && w->conf.cache_bytes
		? (double)w->sz.log_bytes / (double)w->conf.cache_bytes : 1.0;
	qs_drv_log_conf(w->iu, w->conf.op_pct, w->conf.band_bytes, w->superblock_bytes, scale, c);
	c->map_dram_limit = qs_drv_map_dram(w->conf.map_dram_bytes, scale);
	/* an emulated drive: the real drive's entries, as sim mode */
	if (w->conf.kind == QS_RT_EMU)
		c->map_entry_bytes = qs_fmt_map_width(w->prof.capacity_bytes / QS_BLOCK_SIZE);
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
	w->sz.rating_bytes = NAN; /* a device's rating is not known here */
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
	w->sz.capacity = w->qlc.uv->vol.size / w->iu * w->iu;
	if (!w->sz.capacity) {
		snprintf(err, errlen, "--qlc-dev %s: %llu bytes, smaller than one IU (%u bytes)",
			 conf->qlc_dev, (unsigned long long)w->qlc.uv->vol.size, w->iu);
		rc = -EINVAL;
		goto fail;
	}
	rt_cvol_init(&w->qc, &w->qlc.uv->vol, w->sz.capacity, w->iu);
	if (w->fast.uv) {
		rc = rt_dev_log(w, err, errlen);
		if (rc)
			goto fail;
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

void qs_rt_world_fill(const struct qs_rt_world *w, uint64_t *fills, uint64_t *last_ns)
{
	*fills = w->fills;
	*last_ns = w->fill_ns;
}

const struct qs_drv_sizes *qs_rt_world_sizes(const struct qs_rt_world *w)
{
	return &w->sz;
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

/* The real drive's capacity over the one the runs use: the emulated model
 * is scaled as in sim mode; dev mode runs on the real devices. */
static double rt_scale(const struct qs_rt_world *w)
{
	if (w->conf.kind != QS_RT_EMU)
		return 1;
	return (double)w->prof.capacity_bytes / (double)w->sz.capacity;
}

void qs_rt_world_describe(const struct qs_rt_world *w, char *buf, size_t len)
{
	if (w->conf.kind == QS_RT_EMU) {
		snprintf(buf, len,
			 "emulated QLC %s: %.2f GiB model (1/%.0f of the drive), IU %u KiB, filled "
			 "sequentially when opened; emulated fast tier %s: log %.1f MB (--cache "
			 "%.3g GB scaled alike); timing only (no data kept)",
			 w->prof.name, (double)w->sz.capacity / 1073741824.0, rt_scale(w),
			 w->iu / 1024,
			 w->fast_prof.name, (double)w->sz.log_bytes / 1e6,
			 (double)w->conf.cache_bytes / 1e9);
		return;
	}
	int n = snprintf(buf, len, "QLC %s (%s, %.1f GB used, IU %u KiB from profile %s, %s)",
			 w->qlc.path, rt_dev_kind(&w->qlc), (double)w->sz.capacity / 1e9,
			 w->iu / 1024, w->prof.name,
			 w->conf.precondition ? "written in order before the runs (--precondition seq)"
					      : "as it is (no --precondition)");
	if (n < 0 || (size_t)n >= len)
		return;
	if (w->fast.uv)
		snprintf(buf + n, len - (size_t)n, ", fast tier %s (%s, log %.1f MB)",
			 w->fast.path, rt_dev_kind(&w->fast), (double)w->sz.log_bytes / 1e6);
	else
		snprintf(buf + n, len - (size_t)n, ", no fast tier");
}

/* ---- one run ---- */

/* The fast volume a run gives the engine: the log, and for log placement
 * the map region after it. */
static uint64_t rt_fast_bytes(const struct qs_rt_world *w, const struct qs_bench_variant *v)
{
	bool log = v->shaping && v->placement == QS_PLACE_LOG;
	return w->sz.log_bytes + (log ? w->map_bytes : 0);
}

/*
 * Emu mode: fresh emulated drives for one run, the QLC preconditioned by a
 * sequential fill of the whole model (the published fio method, as sim
 * mode), the fast tier fresh (an SCM model has no state a fill would
 * change). Their model clocks start now.
 */
static int rt_emu_open(struct qs_rt_world *w, const struct qs_bench_variant *v, char *err,
		       size_t errlen)
{
	uint64_t fast = rt_fast_bytes(w, v);
	struct qs_emu_conf c = {
		.profile = &w->prof,
		.size = w->sz.capacity,
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
	c.size = fast;
	c.precondition = QS_EMU_PRECOND_NONE;
	rc = qs_emu_open(&w->fe, &w->loop, &c, e2, sizeof(e2));
	if (rc) {
		snprintf(err, errlen, "emulated fast tier (profile %s): %s", w->fast_prof.name, e2);
		return rc;
	}
	rt_cvol_init(&w->qc, qs_emu_vol(w->qe), w->sz.capacity, w->iu);
	rt_cvol_init(&w->fc, qs_emu_vol(w->fe), fast, QS_BLOCK_SIZE);
	return 0;
}

/* How late e was since its stats s0 (and since rt_emu_mark reset its max). */
static void rt_late(struct qs_emu *e, const struct qs_emu_stats *s0, struct qs_rt_late *l)
{
	struct qs_emu_stats st;
	qs_emu_get_stats(e, &st);
	l->requests = st.reads + st.writes + st.flushes + st.discards -
		      (s0->reads + s0->writes + s0->flushes + s0->discards);
	l->late = st.completions - s0->completions;
	l->late_ns_sum = st.late_ns_sum - s0->late_ns_sum;
	l->late_ns_max = st.late_ns_max;
}

/* Emu mode, at a run's start: the stats its lateness is counted from. */
static void rt_emu_mark(struct qs_rt_world *w)
{
	if (w->qe) {
		qs_emu_reset_late_max(w->qe);
		qs_emu_get_stats(w->qe, &w->qs0);
	}
	if (w->fe) {
		qs_emu_reset_late_max(w->fe);
		qs_emu_get_stats(w->fe, &w->fs0);
	}
}

/* Emu mode, after a run: its lateness figures. */
static void rt_emu_late(struct qs_rt_world *w)
{
	if (w->qe)
		rt_late(w->qe, &w->qs0, &w->qlate);
	if (w->fe)
		rt_late(w->fe, &w->fs0, &w->flate);
}

/* Emu mode, after a run or a carry: free the drives. */
static void rt_emu_close(struct qs_rt_world *w)
{
	qs_emu_close(w->qe);
	qs_emu_close(w->fe);
	w->qe = w->fe = NULL;
}

/* The device counters at one job's window edges: what the engine sent
 * each volume, and (emu) the models' own. */
struct rt_window {
	struct rt_count q0, q1, f0, f1;
	struct qs_model_counters qm0, qm1, fm0, fm1;
};

struct rt_run {
	struct qs_rt_world *w;
	struct rt_window *win; /* one per job */
};

static uint64_t rt_now(void *ctx)
{
	return qs_henv_now_ns();
}

/* One turn of the loop, at most until deadline (and RT_MAX_WAIT_NS). */
static int rt_wait(void *ctx, struct qs_engine *e, uint64_t deadline)
{
	struct rt_run *r = ctx;
	uint64_t now = qs_henv_now_ns();
	uint64_t to = deadline > now ? deadline - now : 0;
	return qs_hloop_turn(&r->w->loop, &r->w->henv, e, to < RT_MAX_WAIT_NS ? to : RT_MAX_WAIT_NS);
}

static void rt_window_edge(void *ctx, size_t job, bool end)
{
	struct rt_run *r = ctx;
	struct qs_rt_world *w = r->w;
	struct rt_window *x = &r->win[job];
	*(end ? &x->q1 : &x->q0) = w->qc.c;
	*(end ? &x->f1 : &x->f0) = w->fc.c;
	if (w->qe) {
		struct qs_emu_stats st;
		qs_emu_get_stats(w->qe, &st);
		*(end ? &x->qm1 : &x->qm0) = st.model;
		qs_emu_get_stats(w->fe, &st);
		*(end ? &x->fm1 : &x->fm0) = st.model;
	}
}

/* The devices' figures of a report entry: from job open's window opening
 * to job close's closing. */
static void rt_result(void *ctx, size_t open, size_t close, struct qs_bench_result *res)
{
	struct rt_run *r = ctx;
	struct qs_rt_world *w = r->w;
	const struct rt_window *x0 = &r->win[open], *x1 = &r->win[close];
	if (w->qe) {
		qs_delta_model_counters(&res->qlc, &x0->qm0, &x1->qm1);
		qs_delta_model_counters(&res->fast, &x0->fm0, &x1->fm1);
	} else {
		rt_count_model(&x0->q0, &x1->q1, &res->qlc);
		rt_count_model(&x0->f0, &x1->f1, &res->fast);
	}
	res->rep.mode = w->conf.kind == QS_RT_EMU ? "emu" : "dev";
	/* What reached the device, counted at its volume; read-fill is the
	 * engine's (a read does not say why it was issued). WAF IU from the
	 * drive model in emu mode, as in sim mode; dev mode has none:
	 * drive_write_bytes 0 leaves WAF IU and the life figure unknown. */
	struct qs_report_qlc_in qi = {
		.client_write_bytes = res->rep.client_write_bytes,
		.qlc_write_bytes = x1->q1.write_bytes - x0->q0.write_bytes,
		.qlc_writes = x1->q1.writes - x0->q0.writes,
		.qlc_iu_whole_writes = x1->q1.whole_writes - x0->q0.whole_writes,
		.read_fill_bytes = res->eng.read_fill_bytes,
		.elapsed_ns = res->window_ns,
		.rating_bytes = NAN,
		.rated_capacity = w->sz.capacity,
		.capacity = w->sz.capacity,
	};
	if (w->qe) {
		qi.drive_write_bytes = res->qlc.host_write_bytes;
		qi.drive_prog_bytes = res->qlc.host_prog_bytes;
		qi.drive_nand_prog_bytes = res->qlc.nand_prog_bytes;
		qi.rating_bytes = w->sz.rating_bytes;
		qi.rating_prog_amp = w->sz.rating_prog_amp;
		qi.rated_capacity = w->sz.rated_capacity;
		qi.capacity = w->prof.capacity_bytes; /* the drive modelled, as sim */
	}
	qs_report_qlc_fill(&res->rep.qlc, &qi);
	qs_report_wear_fill(&res->rep.wear, &qi);
	res->rep.fast_write_bytes = x1->f1.write_bytes - x0->f0.write_bytes;
	res->rep.fast_read_bytes = x1->f1.read_bytes - x0->f0.read_bytes;
	/* emu: the fast model's profile and counters; dev: no rating */
	res->rep.fast_life_years = w->fe ? qs_drv_fast_life(&w->fast_prof, res) : NAN;
	res->rep.mem_scale = rt_scale(w);
}

static const struct qs_drv_world_ops rt_ops = {
	.now = rt_now,
	.wait = rt_wait, /* one turn: no wake needed, the driver looks after each */
	.window = rt_window_edge,
	.result = rt_result,
};

static void rt_fill_cb(void *arg, int res)
{
	struct rt_fill *f = arg;
	f->inflight--;
	if (res < 0 && !f->err)
		f->err = res;
}

/* Turn the loop until f has at most most writes in flight. An error of the
 * loop's own ends the wait at once (the loop is broken: nothing it holds
 * will complete) with the error in f; f lives in the world, so a callback
 * that comes after all the same finds it. */
static void rt_fill_wait(struct qs_rt_world *w, struct rt_fill *f, uint64_t most)
{
	while (f->inflight > most) {
		int rc = qs_uloop_run(&w->loop, RT_MAX_WAIT_NS);
		if (rc < 0 && rc != -EINTR) {
			f->err = f->err ? f->err : rc;
			return;
		}
	}
}

/*
 * Dev mode, --precondition seq: the QLC device written once from start to
 * end, straight to the device (no engine is open), incompressible bytes
 * (a drive that compresses or deduplicates must not skip them), then
 * flushed, so that the runs find a full drive as the published methods'
 * do. On an error, what was in flight completes first; -errno with the
 * offset reached in err.
 */
static int rt_dev_fill(struct qs_rt_world *w, char *err, size_t errlen)
{
	struct qs_vol *v = &w->qlc.uv->vol;
	uint64_t cap = w->sz.capacity, off = 0, t0 = qs_henv_now_ns();
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, RT_FILL_CHUNK)) {
		snprintf(err, errlen, "--precondition: out of memory for the fill's buffer");
		return -ENOMEM;
	}
	uint64_t seed = 0x5eedf111ull + w->fills, *p = buf;
	for (size_t i = 0; i < RT_FILL_CHUNK / sizeof(*p); i++)
		p[i] = qs_splitmix64(&seed);
	/* every write of a chunk shares one iovec, the tail its own: both stay
	 * as they are until the fill is over */
	struct iovec whole = {buf, RT_FILL_CHUNK}, tail = {buf, cap % RT_FILL_CHUNK};
	struct rt_fill *f = &w->fill;
	*f = (struct rt_fill){0};
	while (off < cap && !f->err) {
		struct iovec *iov = cap - off >= RT_FILL_CHUNK ? &whole : &tail;
		f->inflight++;
		v->ops->write(v->ctx, off, iov, 1, 0, rt_fill_cb, f);
		off += iov->iov_len;
		rt_fill_wait(w, f, RT_FILL_QD - 1);
		if (w->conf.progress && off % (1024ull * RT_FILL_CHUNK) == 0)
			fprintf(stderr, "\r--precondition: %llu of %llu MB written in order",
				(unsigned long long)(off / 1000000), (unsigned long long)(cap / 1000000));
	}
	rt_fill_wait(w, f, 0);
	if (!f->err) {
		f->inflight++;
		v->ops->flush(v->ctx, rt_fill_cb, f);
		rt_fill_wait(w, f, 0);
	}
	if (w->conf.progress)
		fprintf(stderr, "\r%70s\r", "");
	if (!f->inflight)
		free(buf); /* else the device may still read it: left to the exit */
	if (f->err) {
		snprintf(err, errlen, "--precondition: --qlc-dev %s: writing it in order failed near "
			 "byte %llu: %s", w->conf.qlc_dev, (unsigned long long)off, strerror(-f->err));
		return f->err;
	}
	w->fill_ns = qs_henv_now_ns() - t0;
	w->fills++;
	return 0;
}

/*
 * The drives of variant v for a run or a carry: emu, fresh emulated drives
 * (the QLC filled); dev, the QLC device written in order first with
 * --precondition, and the fast device's counting volume sized for v. The
 * counters start at zero and the engine's timer is unarmed.
 */
static int rt_drives_open(struct qs_rt_world *w, const struct qs_bench_variant *v, char *err,
			  size_t errlen)
{
	int rc = w->conf.kind == QS_RT_EMU ? rt_emu_open(w, v, err, errlen) : 0;
	if (!rc && w->conf.kind == QS_RT_DEV && w->conf.precondition)
		rc = rt_dev_fill(w, err, errlen);
	if (!rc && w->conf.kind == QS_RT_DEV && w->fast.uv)
		rt_cvol_init(&w->fc, &w->fast.uv->vol, rt_fast_bytes(w, v), QS_BLOCK_SIZE);
	w->qc.c = (struct rt_count){0};
	w->fc.c = (struct rt_count){0};
	w->henv.deadline_ns = 0;
	return rc;
}

/* Run jobs on the drives open in w (and, carrying, on w->carry). */
static int rt_run_on(struct qs_rt_world *w, struct rt_run *r, const struct qs_job *jobs,
		     size_t njobs, const struct qs_bench_variant *v, uint64_t seed,
		     struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
		     char *err, size_t errlen)
{
	struct qs_engine_conf lc;
	qs_rt_world_log_conf(w, &lc);
	struct qs_drv_run d = {
		.ops = &rt_ops,
		.ctx = r,
		.env = &w->henv.env,
		.fast = &w->fc.vol,
		.qlc = &w->qc.vol,
		.iu_bytes = w->iu,
		.op_pct = lc.op_pct,
		.band_bytes = lc.band_bytes,
		.map_dram_limit = lc.map_dram_limit,
		.map_entry_bytes = lc.map_entry_bytes,
		.dram_limit = w->conf.dram_limit_bytes ? w->conf.dram_limit_bytes
			    : w->conf.map_dram_bytes ? 0 : QS_CONF_DRAM_AUTO,
		.real_qlc = w->prof.capacity_bytes,
		.real_log = w->conf.cache_bytes,
		.dram_scale = rt_scale(w),
		/* Emu drives keep no data (timing only, as sim mode): the
		 * engine must not check what it reads back, such as map
		 * pages, or every page read is a bad magic and destage
		 * retries for ever. Dev mode keeps data. */
		.open_flags = w->conf.kind == QS_RT_EMU ? QS_OPEN_NO_DATA : 0,
		.jobs = jobs,
		.njobs = njobs,
		.v = v,
		.seed = seed,
		.progress = w->conf.progress,
		.clock_name = "(wall clock)",
		.fio = fio,
		.nfio = nfio,
		.carry = w->carrying ? &w->carry : NULL,
		.min_lat_ns = QS_DRV_MIN_LAT_NS,
	};
	rt_emu_mark(w);
	int rc = qs_drv_run(&d, res, err, errlen);
	rt_emu_late(w);
	return rc;
}

int qs_rt_run_group_fio(struct qs_rt_world *w, const struct qs_job *jobs, size_t njobs,
			const struct qs_bench_variant *v, uint64_t seed,
			struct qs_bench_result *res, struct qs_report_run *fio, size_t *nfio,
			char *err, size_t errlen)
{
	uint64_t wall0 = qs_henv_now_ns();
	struct rt_run r = {.w = w};
	int rc;
	memset(res, 0, njobs * sizeof(*res));
	if (v->shaping && !w->fast.uv && w->conf.kind == QS_RT_DEV) {
		snprintf(err, errlen, "job '%s': shaping on needs a fast tier: give --fast-dev PATH "
				      "(or --shaping off)", jobs[0].name);
		return -EINVAL;
	}
	if (w->carrying && v != w->carry_v) {
		snprintf(err, errlen, "job '%s': a carry runs one variant's jobs", jobs[0].name);
		return -EINVAL;
	}
	r.win = calloc(njobs, sizeof(*r.win));
	if (!r.win) {
		snprintf(err, errlen, "job '%s': out of memory setting up the run", jobs[0].name);
		return -ENOMEM;
	}
	rc = w->carrying ? 0 : rt_drives_open(w, v, err, errlen);
	if (!rc)
		rc = rt_run_on(w, &r, jobs, njobs, v, seed, res, fio, nfio, err, errlen);
	if (!w->carrying)
		rt_emu_close(w);
	free(r.win);
	double wall = (double)(qs_henv_now_ns() - wall0) / 1e9;
	for (size_t i = 0; i < njobs; i++)
		res[i].wall_s = wall;
	return rc;
}

int qs_rt_carry_begin(struct qs_rt_world *w, const struct qs_bench_variant *v, char *err,
		      size_t errlen)
{
	if (w->carrying) {
		snprintf(err, errlen, "a carry is already open");
		return -EBUSY;
	}
	memset(&w->qlate, 0, sizeof(w->qlate));
	memset(&w->flate, 0, sizeof(w->flate));
	int rc = rt_drives_open(w, v, err, errlen);
	if (rc) {
		rt_emu_close(w);
		return rc;
	}
	w->carrying = true;
	w->carry_v = v;
	w->carry = NULL;
	return 0;
}

int qs_rt_carry_end(struct qs_rt_world *w, char *err, size_t errlen)
{
	int rc = 0;
	if (!w->carrying)
		return 0;
	if (w->carry) {
		/* The last run left the engine open with its background work
		 * (destage, GC, checkpoints) going on: close it on this world,
		 * its I/O in flight completing, before the drives go. */
		struct rt_run r = {.w = w};
		rc = qs_drv_engine_close(&rt_ops, &r, w->carry);
		if (rc && err)
			snprintf(err, errlen, "closing the engine after the last job: %s",
				 strerror(-rc));
		w->carry = NULL;
	}
	w->carrying = false;
	w->carry_v = NULL;
	if (!rc)
		rt_emu_close(w);
	return rc;
}

int qs_rt_run_group(struct qs_rt_world *w, const struct qs_job *jobs, size_t njobs,
		    const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		    char *err, size_t errlen)
{
	return qs_rt_run_group_fio(w, jobs, njobs, v, seed, res, NULL, NULL, err, errlen);
}

int qs_rt_run_job(struct qs_rt_world *w, const struct qs_job *job,
		  const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		  char *err, size_t errlen)
{
	return qs_rt_run_group(w, job, 1, v, seed, res, err, errlen);
}
