/* SPDX-License-Identifier: MIT */
/*
 * qlcshaped: the daemon. One instance serves one /dev/ublkbN.
 *
 * Structure: everything runs on the main thread around one io_uring
 * (qs_uloop): the ublk queues' fetch/commit commands, the backend (the
 * engine and its volumes' I/O, or the RAM test backend), the signalfd. The
 * only other threads are short-lived helpers for the blocking ublk control
 * commands START_DEV and STOP_DEV (see daemon/ublk.h) and io_uring's own
 * workers. The engine's one timer is the loop's wait timeout (qs_henv).
 * States:
 *
 *   OPENING   engine backend: log recovery (or format) in progress
 *   STARTING  backend ready, START_DEV in flight on its helper
 *   RUNNING   /dev/ublkbN exists; READY=1 sent to systemd
 *   STOPPING  SIGTERM/SIGINT seen: STOP_DEV in flight; requests still served
 *   CLOSING   device gone: drain (if drain_on_stop), then the engine's clean
 *             close (clean superblock)
 *   DONE      the loop ends; ring torn down, device deleted, exit
 *
 * The device must not be mounted in the daemon's own mount namespace: a
 * daemon that blocks on a page fault or writeback against its own device
 * deadlocks (systemd's PrivateMounts or a separate namespace avoids it).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"
#include "backend_engine.h"
#include "backend_ram.h"
#include "host/config.h"
#include "host/env.h"
#include "host/loop.h"
#include "prom.h"
#include "stats.h"
#include "host/uloop.h"
#include "host/ctl.h"
#include "host/emu_vol.h"
#include "host/uring_vol.h"
#include "control.h"
#include "notify.h"
#include "nvme_iu.h"
#include "ublk.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57 /* Linux 5.6 */
#endif

enum d_state { D_OPENING, D_STARTING, D_RUNNING, D_STOPPING, D_CLOSING, D_DONE };

struct daemon {
	struct qs_config cfg;
	struct qs_uloop loop;
	struct qs_henv henv;
	struct qs_notify nt; /* sd_notify and the watchdog */
	struct qs_backend bk;
	struct qs_ramb *ram;
	struct qs_uvol *fast, *qlc;
	struct qs_emu *qlc_emu;	 /* devices.qlc = emu:PROFILE instead of qlc */
	struct qs_vol *qlc_vol;	 /* what the engine gets: qlc's or qlc_emu's */
	struct qs_engine *eng;
	bool engine_closing;
	bool format;
	bool format_only; /* --format-only: format, close cleanly, exit */
	uint32_t iu;
	struct qs_ctld *ctld;
	bool ctl_draining;	 /* a drain requested over the control socket runs */
	bool stop_after_drain;	 /* the stop waits for that drain */
	struct {			 /* previous stats request, for rates */
		uint64_t t_ns, reads, writes, read_bytes, write_bytes, destage_bytes;
	} prev;
	struct qs_ublk *ublk;
	int sfd;
	struct signalfd_siginfo si;
	struct qs_uop sig_op;
	enum d_state state;
	bool stop_requested;
	int exit_code;
	double start_real_s; /* Unix time of start, for qlcshape_start_time_seconds */
};

static void d_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void d_log(const char *fmt, ...)
{
	va_list ap;

	fputs("qlcshaped: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Tell systemd (daemon/notify.h); a failure is logged, never fatal. */
static void d_notify(struct daemon *d, const char *msg)
{
	int ret = qs_notify_send(&d->nt, msg);

	if (ret < 0)
		d_log("sd_notify '%s': %s", msg, strerror(-ret));
}

/* The status line while the device is up, after READY=1 and after a drain. */
static void d_notify_serving(struct daemon *d)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "STATUS=serving /dev/ublkb%d", qs_ublk_dev_id(d->ublk));
	d_notify(d, msg);
}

/*
 * Keep the kernel from deadlocking or killing us under memory pressure:
 * PR_SET_IO_FLUSHER lets allocations in this thread avoid recursing into
 * I/O on our own device; oom_score_adj -1000 keeps the OOM killer away
 * from the process every write to the device depends on.
 */
static void d_harden(void)
{
	FILE *f;

	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0)
		d_log("warning: PR_SET_IO_FLUSHER: %s", strerror(errno));
	f = fopen("/proc/self/oom_score_adj", "we");
	if (f) {
		/* The write happens at fclose; both can fail. */
		int bad = fputs("-1000", f) < 0;

		bad |= fclose(f) != 0;
		if (!bad)
			return;
	}
	d_log("warning: cannot set oom_score_adj: %s", strerror(errno));
}

static void d_sig_arm(struct daemon *d);

static void d_on_closed(void *arg, int res)
{
	struct daemon *d = arg;

	if (res < 0) {
		d_log("engine close: %s", strerror(-res));
		d->exit_code = 1;
	} else {
		d_log("engine closed cleanly");
	}
	d->state = D_DONE;
}

/* The end of every path: close the engine if there is one, then DONE. */
static void d_finish(struct daemon *d)
{
	int ret;

	if (!d->eng || d->engine_closing) {
		if (!d->engine_closing)
			d->state = D_DONE;
		return;
	}
	d->state = D_CLOSING;
	d->engine_closing = true;
	ret = qs_engine_close(d->eng, d_on_closed, d);
	if (ret < 0) {
		d_log("engine close: %s", strerror(-ret));
		d->exit_code = 1;
		d->state = D_DONE;
	}
}

static void d_on_drained(void *arg, int res)
{
	struct daemon *d = arg;

	if (res < 0) {
		d_log("drain: %s (closing anyway; the log keeps what is not destaged)",
		      strerror(-res));
		d->exit_code = 1;
	} else {
		d_log("drained: every block is on the QLC");
	}
	d_finish(d);
}

static void d_on_stopped(void *arg, int res)
{
	struct daemon *d = arg;
	int ret;

	if (res < 0) {
		d_log("STOP_DEV: %s", strerror(-res));
		d->exit_code = 1;
	}
	if (d->eng && d->cfg.drain_on_stop) {
		struct qs_engine_stats es;

		/*
		 * Nothing dirty, nothing cached: the QLC already holds every
		 * block. Skipping also sidesteps a drain that would never
		 * report (qs_engine_drain of an idle, empty log waits for a
		 * destage or checkpoint completion that never comes).
		 */
		qs_engine_get_stats(d->eng, &es);
		if (!es.dirty_ius && !es.cached_blocks) {
			d_log("nothing to drain");
			d_finish(d);
			return;
		}
		d->state = D_CLOSING;
		d_notify(d, "STATUS=draining the log to the QLC");
		if (d->ctl_draining) {
			/* The engine runs one drain at a time: finish after that one. */
			d_log("waiting for the drain requested over the control socket");
			d->stop_after_drain = true;
			return;
		}
		d_log("draining");
		ret = qs_engine_drain(d->eng, d_on_drained, d);
		if (ret == 0)
			return;
		d_log("drain: %s", strerror(-ret));
		d->exit_code = 1;
	}
	d_finish(d);
}

static void d_stop(struct daemon *d)
{
	int ret;

	d->stop_requested = true;
	if (d->state != D_RUNNING)
		return; /* OPENING/STARTING: their callbacks stop; later: under way */
	d->state = D_STOPPING;
	d_notify(d, "STOPPING=1");
	d_log("stopping /dev/ublkb%d", qs_ublk_dev_id(d->ublk));
	ret = qs_ublk_stop(d->ublk, d_on_stopped, d);
	if (ret < 0) {
		d_log("STOP_DEV: %s", strerror(-ret));
		d->exit_code = 1;
		d_finish(d);
	}
}

static void d_on_started(void *arg, int res)
{
	struct daemon *d = arg;
	bool ioctl_encode;
	uint64_t feat;

	if (res < 0) {
		d_log("START_DEV: %s", strerror(-res));
		d->exit_code = 1;
		d_finish(d);
		return;
	}
	feat = qs_ublk_features(d->ublk, &ioctl_encode);
	d->state = D_RUNNING;
	d_log("/dev/ublkb%d ready%s: %llu bytes, backend %s, flags 0x%llx, %s opcodes",
	      qs_ublk_dev_id(d->ublk),
	      qs_ublk_recovered(d->ublk) ? " (re-attached by user recovery)" : "",
	      (unsigned long long)d->bk.size, d->bk.name,
	      (unsigned long long)feat, ioctl_encode ? "ioctl-encoded" : "legacy");
	d_notify(d, "READY=1");
	d_notify_serving(d);
	if (d->stop_requested)
		d_stop(d);
}

static void d_on_signal(struct qs_uop *op, int res)
{
	struct daemon *d = (struct daemon *)((char *)op - offsetof(struct daemon, sig_op));

	if (res == (int)sizeof(d->si)) {
		d_log("signal %u received", d->si.ssi_signo);
		d_stop(d);
	} else if (res < 0 && res != -EINTR && res != -ECANCELED) {
		d_log("signalfd read: %s", strerror(-res));
	}
	if (d->state != D_DONE)
		d_sig_arm(d);
}

static void d_sig_arm(struct daemon *d)
{
	struct io_uring_sqe *sqe = qs_uloop_sqe(&d->loop);

	if (!sqe) {
		/* Ring full for now: the retry re-arms. */
		qs_uloop_wait_sqe(&d->loop, &d->sig_op);
		return;
	}
	io_uring_prep_read(sqe, d->sfd, &d->si, sizeof(d->si), 0);
	io_uring_sqe_set_data(sqe, &d->sig_op);
}

static void d_sig_retry(struct qs_uop *op, int res)
{
	struct daemon *d = (struct daemon *)((char *)op - offsetof(struct daemon, sig_op));

	(void)res;
	d_sig_arm(d);
}

/* ---- control socket commands ---------------------------------------------- */

static double d_rate(uint64_t now, uint64_t then, double dt)
{
	return dt > 0 ? (double)(now - then) / dt : 0;
}

/* The config's name: its file name without directory and ".ini" (the
 * systemd instance name %i), the Prometheus label config="NAME". */
static void d_config_name(const char *file, char *out, size_t len)
{
	const char *b = strrchr(file, '/');
	size_t n;

	b = b ? b + 1 : file;
	n = strlen(b);
	if (n > 4 && !strcmp(b + n - 4, ".ini"))
		n -= 4;
	snprintf(out, len, "%.*s", (int)n, b);
}

/* The frontend's counters as the renderers take them. */
static void d_frontend(const struct daemon *d, const struct qs_ublk_stats *u,
		       struct qs_prom_frontend *fe)
{
	*fe = (struct qs_prom_frontend){
		.reads = u->reads, .read_bytes = u->read_bytes,
		.writes = u->writes, .write_bytes = u->write_bytes,
		.flushes = u->flushes, .discards = u->discards, .write_zeroes = u->write_zeroes,
		.errors = u->errors, .inflight = d->ublk ? qs_ublk_inflight(d->ublk) : 0,
	};
}

static int d_ctl_prometheus(struct daemon *d, const struct qs_prom_frontend *fe,
			    const struct qs_engine_stats *e, char *out, size_t len)
{
	char name[256];
	struct qs_prom_input in = {
		.config = name,
		.backend = d->bk.name,
		.iu_bytes = d->iu,
		.size_bytes = d->bk.size,
		.start_time_s = d->start_real_s,
		.frontend = fe,
		.engine = d->eng ? e : NULL,
	};
	int ret;

	d_config_name(d->cfg.file, name, sizeof(name));
	ret = qs_prom_render(&in, out, len);
	if (ret < 0)
		snprintf(out, len, "cannot render the Prometheus text: %s", strerror(-ret));
	return ret;
}

/* Rates since the previous stats answer, which this one then becomes. */
static void d_stats_rates(struct daemon *d, const struct qs_ublk_stats *u,
			  const struct qs_engine_stats *e, struct qs_stats_view *v)
{
	uint64_t now = qs_henv_now_ns();
	double dt = (double)(now - d->prev.t_ns) / 1e9;

	v->interval_s = dt;
	v->rate.read_iops = d_rate(u->reads, d->prev.reads, dt);
	v->rate.write_iops = d_rate(u->writes, d->prev.writes, dt);
	v->rate.read_mbs = d_rate(u->read_bytes, d->prev.read_bytes, dt) / 1e6;
	v->rate.write_mbs = d_rate(u->write_bytes, d->prev.write_bytes, dt) / 1e6;
	if (d->eng)
		v->rate.destage_mbs = d_rate(e->destage_bytes, d->prev.destage_bytes, dt) / 1e6;
	d->prev.t_ns = now;
	d->prev.reads = u->reads;
	d->prev.writes = u->writes;
	d->prev.read_bytes = u->read_bytes;
	d->prev.write_bytes = u->write_bytes;
	d->prev.destage_bytes = e->destage_bytes;
}

/* The stats answer: gathered once, rendered as text, JSON or Prometheus. */
static int d_ctl_stats(void *ctx, enum qs_ctl_format fmt, char *out, size_t len)
{
	struct daemon *d = ctx;
	struct qs_ublk_stats u = {0};
	struct qs_engine_stats e;
	struct qs_prom_frontend fe;
	struct qs_emu_stats es;
	struct qs_stats_view v = {.backend = d->bk.name, .frontend = &fe};

	if (d->ublk)
		qs_ublk_get_stats(d->ublk, &u);
	if (fmt == QS_CTL_STATE) {
		/* what the engine holds and waits for: a drain or a request that
		 * never ends is diagnosed from this line */
		if (!d->eng) {
			snprintf(out, len, "no engine: backend %s\n", d->bk.name);
			return 0;
		}
		qs_engine_debug_dump(d->eng, out, len > 1 ? len - 1 : len);
		strncat(out, "\n", len - strlen(out) - 1);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	if (d->eng)
		qs_engine_get_stats(d->eng, &e);
	d_frontend(d, &u, &fe);
	if (fmt == QS_CTL_PROMETHEUS)
		return d_ctl_prometheus(d, &fe, &e, out, len); /* counters only: no rates */
	d_stats_rates(d, &u, &e, &v);
	v.engine = d->eng ? &e : NULL;
	if (d->qlc_emu) {
		qs_emu_get_stats(d->qlc_emu, &es);
		v.emu = &es;
	}
	return fmt == QS_CTL_JSON ? qs_stats_render_json(&v, out, len)
				  : qs_stats_render_text(&v, out, len);
}

/* "NAME [key=value...]" over the current policy, then qs_engine_set_policy. */
static int d_ctl_policy(void *ctx, const char *args, char *out, size_t len)
{
	struct daemon *d = ctx;
	struct qs_policy p;
	int ret;

	if (!d->eng) {
		snprintf(out, len, "no engine (backend %s)", d->bk.name);
		return -ENODEV;
	}
	qs_engine_get_policy(d->eng, &p); /* unset keys keep their current value */
	ret = qs_ctld_policy_parse(args, &p, out, len);
	if (ret < 0)
		return ret;
	ret = qs_engine_set_policy(d->eng, &p);
	if (ret < 0) {
		snprintf(out, len, "engine refused the policy: %s", strerror(-ret));
		return ret;
	}
	snprintf(out, len, "policy %s partial=%s hold_ms=%u start_pct=%u urgent_pct=%u idle_ms=%u "
		 "max_age_ms=%u pace_pct=%u\n", qs_policy_order_name(p.order),
		 p.partial == QS_PARTIAL_HOLD ? "hold" : "fill", p.hold_ms, p.start_pct,
		 p.urgent_pct, p.idle_ms, p.max_age_ms, p.pace_pct);
	d_log("%s", out);
	return 0;
}

struct d_drain_req {
	struct daemon *d;
	qs_ctld_done done;
	void *token;
};

static void d_ctl_drained(void *arg, int res)
{
	struct d_drain_req *r = arg;
	struct daemon *d = r->d;
	char msg[128];

	if (res < 0)
		snprintf(msg, sizeof(msg), "drain: %s", strerror(-res));
	else
		snprintf(msg, sizeof(msg), "drained: every block is on the QLC\n");
	d->ctl_draining = false;
	r->done(r->token, res, msg);
	free(r);
	if (d->stop_after_drain)
		d_on_drained(d, res);
	else if (d->state == D_RUNNING)
		d_notify_serving(d);
}

static int d_ctl_drain(void *ctx, qs_ctld_done done, void *token, char *out, size_t len)
{
	struct daemon *d = ctx;
	struct qs_engine_stats es;
	struct d_drain_req *r;
	int ret;

	if (!d->eng) {
		snprintf(out, len, "no engine (backend %s)", d->bk.name);
		return -ENODEV;
	}
	/* See d_on_stopped: the engine's drain of an empty log never reports. */
	qs_engine_get_stats(d->eng, &es);
	if (!es.dirty_ius && !es.cached_blocks) {
		snprintf(out, len, "nothing to drain\n");
		return 1;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		snprintf(out, len, "out of memory");
		return -ENOMEM;
	}
	r->d = d;
	r->done = done;
	r->token = token;
	ret = qs_engine_drain(d->eng, d_ctl_drained, r);
	if (ret < 0) {
		free(r);
		snprintf(out, len, "drain: %s", strerror(-ret));
		return ret;
	}
	d->ctl_draining = true;
	d_log("drain requested over the control socket");
	d_notify(d, "STATUS=draining the log to the QLC (requested over the control socket)");
	return 0;
}

static const struct qs_ctld_ops d_ctl_ops = {
	.stats = d_ctl_stats,
	.policy = d_ctl_policy,
	.drain = d_ctl_drain,
};

/* Create the ublk device over d->bk and start it (state STARTING). */
static void d_frontend_start(struct daemon *d)
{
	struct qs_ublk_conf uc = {
		.queues = d->cfg.queues,
		.depth = d->cfg.queue_depth,
		.max_io_bytes = d->cfg.max_io_bytes,
		.dev_id = d->cfg.dev_id,
		.iu_bytes = d->iu,
		.user_recovery = d->cfg.user_recovery,
	};
	char err[512];
	int ret;

	d->prev.t_ns = qs_henv_now_ns();
	ret = qs_ctld_open(&d->ctld, &d->loop, d->cfg.control_socket, &d_ctl_ops, d, err,
			   sizeof(err));
	if (ret < 0) {
		d_log("%s (key 'daemon.control_socket' in %s)", err, d->cfg.file);
		d->exit_code = 1;
		d_finish(d);
		return;
	}
	ret = qs_ublk_create(&d->ublk, &d->loop, &uc, &d->bk, err, sizeof(err));
	if (ret < 0) {
		d_log("%s", err);
		d->exit_code = 1;
		d_finish(d);
		return;
	}
	d->state = D_STARTING;
	ret = qs_ublk_start(d->ublk, d_on_started, d);
	if (ret < 0) {
		d_log("START_DEV: %s", strerror(-ret));
		d->exit_code = 1;
		d_finish(d);
	}
}

static void d_on_engine_open(void *arg, int res)
{
	struct daemon *d = arg;

	if (res < 0) {
		d_log("engine open: %s%s", strerror(-res),
		      res == -ENODATA ? ": the fast device holds no log; start once with "
					"--format (it erases the log device)" : "");
		d->exit_code = 1;
		d_finish(d);
		return;
	}
	d_notify(d, "STATUS=log recovered");
	qs_engb_init(&d->bk, d->eng);
	d_log("engine open: %llu bytes, mode %s", (unsigned long long)d->bk.size,
	      d->cfg.engine.mode == QS_MODE_PASSTHROUGH && qs_config_is_set(&d->cfg, "engine.mode") ?
		      "passthrough" : "cache");
	if (d->stop_requested) {
		d_finish(d);
		return;
	}
	if (d->format_only) {
		/* The clean close writes the superblock a normal start recovers from. */
		d_log("log formatted; exiting (--format-only)");
		d_finish(d);
		return;
	}
	d_frontend_start(d);
}

static int d_vol_open(struct daemon *d, const char *key, const char *path, struct qs_uvol **v)
{
	char err[512];
	int ret;

	/* Exclusive: nobody may mount or write the drive behind the engine's back. */
	ret = qs_uvol_open(v, &d->loop, path, QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL, 0, err,
			   sizeof(err));
	if (ret < 0) {
		d_log("%s: key '%s': %s", d->cfg.file, key, err);
		return ret;
	}
	if (!(*v)->direct)
		d_log("warning: %s: no O_DIRECT on this file system: buffered I/O, durability "
		      "through fdatasync", path);
	return 0;
}

static bool d_qlc_is_emu(const struct daemon *d)
{
	return !strncmp(d->cfg.qlc, "emu:", 4);
}

/* devices.qlc = emu:PROFILE: find and load the profile; it gives the IU. */
static int d_emu_profile(struct daemon *d, struct qs_profile *p)
{
	int line = qs_config_key_line(&d->cfg, "devices.qlc");
	char path[4096], err[512];
	int ret;

	ret = qs_profile_find(d->cfg.qlc + 4, path, sizeof(path), err, sizeof(err));
	if (!ret)
		ret = qs_profile_load(path, p, err, sizeof(err));
	if (ret) {
		d_log("%s:%d: key 'devices.qlc' = '%s': %s", d->cfg.file, line, d->cfg.qlc, err);
		return ret;
	}
	if (p->iu_bytes < QS_IU_MIN || p->iu_bytes > QS_IU_MAX ||
	    (p->iu_bytes & (p->iu_bytes - 1))) {
		d_log("%s:%d: key 'devices.qlc' = '%s': profile %s has a %u-byte IU; the engine "
		      "needs a power of two from %u to %u", d->cfg.file, line, d->cfg.qlc, path,
		      p->iu_bytes, QS_IU_MIN, QS_IU_MAX);
		return -EINVAL;
	}
	d->iu = p->iu_bytes;
	d_log("IU %u bytes from the emulated drive's profile %s (%s)", d->iu, p->name, path);
	if (d->cfg.iu_bytes && d->cfg.iu_bytes != d->iu)
		d_log("warning: %s:%d: key 'devices.iu' = %u ignored: the emulated drive has the "
		      "profile's IU", d->cfg.file, qs_config_key_line(&d->cfg, "devices.iu"),
		      d->cfg.iu_bytes);
	return 0;
}

/* Which [emu] key an error of qs_emu_open comes from (for the message). */
static const char *d_emu_err_key(const struct daemon *d, const char *err)
{
	if (strstr(err, "emulated drive: size ") || strstr(err, "cannot map"))
		return "emu.size";
	if (strstr(err, "emulated drive: model size"))
		return "emu.model_size";
	if (d->cfg.emu_backing && d->cfg.emu_backing[0] == '/')
		return "emu.backing";
	return "devices.qlc";
}

/* What the emulated QLC saw and did, and how closely real time followed it. */
static void d_emu_report(const struct daemon *d)
{
	struct qs_emu_stats s;

	qs_emu_get_stats(d->qlc_emu, &s);
	d_log("emulated QLC: %llu reads, %llu writes (%llu bytes), %llu flushes, %llu discards; "
	      "in the drive %llu partial-IU writes, %llu read-modify-writes, NAND write "
	      "amplification %.2f so far (its write buffer may still hold data); completions "
	      "%.0f us late on average (max %.1f ms)",
	      (unsigned long long)s.reads, (unsigned long long)s.writes,
	      (unsigned long long)s.write_bytes, (unsigned long long)s.flushes,
	      (unsigned long long)s.discards, (unsigned long long)s.model.partial_ius,
	      (unsigned long long)s.model.rmw,
	      s.write_bytes ? (double)s.model.nand_prog_bytes / (double)s.write_bytes : 0.0,
	      s.completions ? (double)s.late_ns_sum / (double)s.completions / 1e3 : 0.0,
	      (double)s.late_ns_max / 1e6);
}

/* Open the emulated QLC (the model, preconditioned, over RAM or a file). */
static int d_emu_open(struct daemon *d, const struct qs_profile *p, bool cache_mode)
{
	const char *b = d->cfg.emu_backing ? d->cfg.emu_backing : "ram";
	struct qs_emu_conf ec = {
		.profile = p,
		.size = d->cfg.emu_size,
		.model_bytes = d->cfg.emu_model_size,
		.backing = !strcmp(b, "ram") ? QS_EMU_RAM
			   : !strcmp(b, "none") ? QS_EMU_NONE : QS_EMU_FILE,
		.path = b[0] == '/' ? b : NULL,
		.precondition = (enum qs_emu_precond)d->cfg.emu_precondition,
		.seed = 1,
	};
	const struct qs_model *m;
	uint64_t t0 = qs_henv_now_ns(), faithful;
	char err[512];
	int ret;

	_Static_assert(QS_EMU_PRECOND_SEQ == 0 && QS_EMU_PRECOND_RANDOM == 1 &&
			       QS_EMU_PRECOND_NONE == 2,
		       "emu.precondition names are seq|random|none in this order");
	ret = qs_emu_open(&d->qlc_emu, &d->loop, &ec, err, sizeof(err));
	if (ret) {
		const char *key = d_emu_err_key(d, err);
		int line = qs_config_key_line(&d->cfg, key);

		if (line)
			d_log("%s:%d: key '%s': %s", d->cfg.file, line, key, err);
		else
			d_log("%s: key '%s' (%s): %s", d->cfg.file, key,
			      strcmp(key, "devices.qlc") ? "default, not in the file" : d->cfg.qlc,
			      err);
		return ret;
	}
	m = qs_emu_model(d->qlc_emu);
	d_log("emulated QLC %s: %llu bytes, data %s%s, model of %llu bytes with %u superblocks, "
	      "preconditioning %s (%.1f s of drive time, %.2f s here)", p->name,
	      (unsigned long long)ec.size, b,
	      ec.backing == QS_EMU_FILE ? "" : " (nothing survives the daemon)",
	      (unsigned long long)qs_model_capacity(m), qs_model_superblocks(m),
	      qs_emu_precond_name(ec.precondition), (double)qs_emu_fill_ns(d->qlc_emu) / 1e9,
	      (double)(qs_henv_now_ns() - t0) / 1e9);
	faithful = qs_model_default_bytes(p);
	if (p->media == QS_MEDIA_NAND && qs_model_superblocks(m) < p->superblocks)
		d_log("note: the profile's %u superblocks need a model of at least %llu bytes "
		      "(emu.model_size) for its calibrated garbage collection; this one has %u",
		      p->superblocks, (unsigned long long)faithful, qs_model_superblocks(m));
	if (ec.backing != QS_EMU_FILE && !d->format && cache_mode)
		d_log("warning: the emulated QLC starts empty (emu.backing = %s), but the log on "
		      "the fast device is recovered: blocks destaged before this start now read "
		      "as zeroes; start with --format, or keep the data in a file", b);
	d->qlc_vol = qs_emu_vol(d->qlc_emu);
	return 0;
}

/*
 * Before a recovery: a geometry key changed in the file since the log was
 * formatted has no effect until --format; say so (issue 12, finding 10:
 * segment_blocks was silently ignored). Reads the superblock copies from
 * the fast device synchronously, before the loop serves anything; a read
 * that fails is left to the engine's open, which reports it.
 */
static void d_check_log_geometry(struct daemon *d)
{
	char msg[1024];
	void *buf = aligned_alloc(4096, 2 * 4096);

	if (!buf)
		return;
	if (pread(d->fast->fd, buf, 2 * 4096, 0) == 2 * 4096 &&
	    qs_config_check_log(&d->cfg, buf, d->fast->vol.size, msg, sizeof(msg)) > 0)
		d_log("warning: %s", msg);
	free(buf);
}

/* Open the volumes and start the engine's recovery (state OPENING). */
static int d_engine_open(struct daemon *d)
{
	struct qs_engine_conf ec;
	enum qs_iu_source src;
	struct qs_profile prof;
	char msg[512];
	int ret;

	if (d_qlc_is_emu(d)) {
		ret = d_emu_profile(d, &prof);
		if (ret)
			return ret;
	} else {
		qs_iu_detect(d->cfg.qlc, d->cfg.iu_bytes, &d->iu, &src, msg, sizeof(msg));
		d_log("%s", msg);
	}
	qs_engine_conf_default(&ec);
	qs_config_engine_conf(&d->cfg, &ec);
	ec.iu_bytes = d->iu;
	ret = qs_config_check_engine(&d->cfg, &ec, 0, 0, msg, sizeof(msg));
	if (ret) {
		d_log("%s", msg);
		return ret;
	}
	if (ec.mode == QS_MODE_CACHE) {
		/* Before anything is opened: a format would write the log into
		 * the QLC's data. */
		ret = qs_config_check_devices(&d->cfg, msg, sizeof(msg));
		if (ret) {
			d_log("%s", msg);
			return ret;
		}
		if (!d->cfg.fast) {
			d_log("%s: key 'devices.fast' is missing; engine.mode = cache needs it",
			      d->cfg.file);
			return -EINVAL;
		}
		ret = d_vol_open(d, "devices.fast", d->cfg.fast, &d->fast);
		if (ret)
			return ret;
		if (!d->format)
			d_check_log_geometry(d);
	}
	if (d_qlc_is_emu(d)) {
		ret = d_emu_open(d, &prof, ec.mode == QS_MODE_CACHE);
	} else {
		ret = d_vol_open(d, "devices.qlc", d->cfg.qlc, &d->qlc);
		if (!ret)
			d->qlc_vol = &d->qlc->vol;
	}
	if (ret)
		return ret;
	/* The client size and log placement's bands depend on the QLC's size. */
	ret = qs_config_check_engine(&d->cfg, &ec, d->qlc_vol->size,
				     d->fast ? d->fast->vol.size : 0, msg, sizeof(msg));
	if (ret) {
		d_log("%s (QLC %s: %llu bytes)", msg, d->cfg.qlc,
		      (unsigned long long)d->qlc_vol->size);
		return ret;
	}
	d->state = D_OPENING;
	d_notify(d, d->format ? "STATUS=formatting the log" : "STATUS=recovering the log");
	d_log("%s the log on %s", d->format ? "formatting" : "recovering",
	      d->fast ? d->cfg.fast : "(none: passthrough)");
	d->eng = qs_engine_open(&d->henv.env, d->fast ? &d->fast->vol : NULL, d->qlc_vol, &ec,
				d->format ? QS_OPEN_FORMAT : 0, d_on_engine_open, d);
	if (!d->eng) {
		ret = -errno;
		d_log("engine open: %s (fast %llu bytes, qlc %llu bytes)", strerror(errno),
		      d->fast ? (unsigned long long)d->fast->vol.size : 0ull,
		      (unsigned long long)d->qlc_vol->size);
		return ret;
	}
	return 0;
}

static int d_backend_open(struct daemon *d)
{
	int ret;

	switch (d->cfg.backend) {
	case QS_BACKEND_RAM:
		d->iu = d->cfg.iu_bytes ? d->cfg.iu_bytes : QS_IU_FALLBACK;
		d_log("IU %u bytes from %s (ram test backend)", d->iu,
		      d->cfg.iu_bytes ? "config" : "default");
		ret = qs_ramb_create(&d->ram, &d->loop, d->cfg.ram_size, &d->bk);
		if (ret < 0) {
			d_log("ram backend of %llu bytes: %s", (unsigned long long)d->cfg.ram_size,
			      strerror(-ret));
			return ret;
		}
		d_frontend_start(d);
		return 0;
	case QS_BACKEND_ENGINE:
		return d_engine_open(d);
	}
	return -EINVAL;
}

static void d_backend_close(struct daemon *d)
{
	qs_ramb_free(d->ram);
	d->ram = NULL;
	qs_engine_free(d->eng);
	d->eng = NULL;
	qs_uvol_close(d->fast);
	qs_uvol_close(d->qlc);
	qs_emu_close(d->qlc_emu);
	d->fast = d->qlc = NULL;
	d->qlc_emu = NULL;
	d->qlc_vol = NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: qlcshaped --config FILE [--format | --format-only]\n\n"
		   "Serves /dev/ublkbN through the qlcshape engine; see conf/qlcshaped.ini.\n"
		   "  --format       write a new, empty log on the fast device (erases it), then serve\n"
		   "  --format-only  the same, then exit without serving (before a systemd start)\n"
		   "The running instance is controlled with qlcshape stats|policy|drain --config FILE.\n"
		   "SIGTERM or SIGINT stops it cleanly.\n");
}

/* Options and the config file into d: -1 to go on, else the exit status. */
static int d_args(struct daemon *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"format", no_argument, NULL, 'f'},
		{"format-only", no_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config = NULL;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "c:fFh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'f':
			d->format = true;
			break;
		case 'F':
			d->format = d->format_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!config || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (qs_config_load(&d->cfg, config, err, sizeof(err))) {
		d_log("%s", err);
		return 2;
	}
	if (d->format_only && qs_config_check_format_only(&d->cfg, err, sizeof(err))) {
		d_log("%s", err);
		qs_config_free(&d->cfg);
		return 2;
	}
	return -1;
}

/* Signals on a signalfd, the environment, sd_notify, the ring; 0 or -1. */
static int d_setup(struct daemon *d)
{
	struct timespec ts;
	char err[512];
	sigset_t mask;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	d->start_real_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	/* Signals arrive through the loop; block them before any thread exists. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (d->sfd < 0) {
		d_log("signalfd: %s", strerror(errno));
		return -1;
	}
	d->sig_op.done = d_on_signal;
	d->sig_op.retry = d_sig_retry;
	d_harden();

	qs_henv_init(&d->henv, "qlcshaped: ", QS_LOG_INFO);
	if (qs_notify_init(&d->nt, qs_henv_now_ns(), err, sizeof(err)) < 0)
		d_log("warning: %s", err);
	if (d->nt.wd_interval_ns)
		d_log("systemd watchdog: WATCHDOG=1 every %.3f s",
		      (double)d->nt.wd_interval_ns / 1e9);
	/* Room for every ublk command plus the engine's log and destage I/O. */
	ret = qs_uloop_init(&d->loop, d->cfg.queues * d->cfg.queue_depth + QS_CONFIG_RING_EXTRA);
	if (ret < 0) {
		d_log("io_uring with %u entries (ublk.queues %u x ublk.queue_depth %u + %d): %s",
		      d->cfg.queues * d->cfg.queue_depth + QS_CONFIG_RING_EXTRA, d->cfg.queues,
		      d->cfg.queue_depth, QS_CONFIG_RING_EXTRA, strerror(-ret));
		return -1;
	}
	return 0;
}

/* The event loop, from the backend's open to the end of the state machine. */
static void d_run(struct daemon *d)
{
	int ret;

	d_sig_arm(d);
	d->exit_code = 0;
	if (d_backend_open(d) < 0) {
		d->exit_code = 1;
		d_finish(d);
	}
	while (d->state != D_DONE) {
		ret = qs_hloop_turn(&d->loop, &d->henv, d->eng,
				    qs_notify_timeout(&d->nt, qs_henv_now_ns()));
		if (ret < 0) {
			d_log("event loop: %s", strerror(-ret));
			d->exit_code = 1;
			break;
		}
		/* The loop turned: tell systemd's watchdog (see notify.h). */
		ret = qs_notify_watchdog(&d->nt, qs_henv_now_ns());
		if (ret < 0)
			d_log("sd_notify WATCHDOG=1: %s", strerror(-ret));
	}
}

/* The last log lines: what the instance served and what its engine did. */
static void d_report(struct daemon *d)
{
	if (d->ublk) {
		struct qs_ublk_stats s;

		qs_ublk_get_stats(d->ublk, &s);
		d_log("served %llu reads (%llu bytes), %llu writes (%llu bytes), %llu flushes, "
		      "%llu discards, %llu write-zeroes, %llu errors",
		      (unsigned long long)s.reads, (unsigned long long)s.read_bytes,
		      (unsigned long long)s.writes, (unsigned long long)s.write_bytes,
		      (unsigned long long)s.flushes, (unsigned long long)s.discards,
		      (unsigned long long)s.write_zeroes, (unsigned long long)s.errors);
	}
	if (d->eng) {
		struct qs_engine_stats es;

		qs_engine_get_stats(d->eng, &es);
		d_log("engine: %llu QLC writes (%llu bytes), %llu whole-IU, %llu read-fill bytes, "
		      "%llu log appends, %llu destaged IUs, %llu errors",
		      (unsigned long long)es.qlc_writes, (unsigned long long)es.qlc_write_bytes,
		      (unsigned long long)es.qlc_iu_whole_writes,
		      (unsigned long long)es.read_fill_bytes, (unsigned long long)es.log_appends,
		      (unsigned long long)es.destage_ius,
		      (unsigned long long)(es.fast_errors + es.qlc_errors + es.client_errors));
	}
	if (d->qlc_emu)
		d_emu_report(d);
}

int main(int argc, char **argv)
{
	struct daemon d = {.sfd = -1};
	int ret = d_args(&d, argc, argv);

	if (ret >= 0)
		return ret;
	if (d_setup(&d) < 0) {
		if (d.sfd >= 0)
			close(d.sfd);
		qs_config_free(&d.cfg);
		return 1;
	}
	d_run(&d);
	d_report(&d);
	/* Tear the ring down first: it cancels the fetches that pin /dev/ublkcN. */
	qs_uloop_exit(&d.loop);
	qs_ublk_destroy(d.ublk);
	qs_ctld_close(d.ctld);
	d_backend_close(&d);
	close(d.sfd);
	qs_config_free(&d.cfg);
	d_log("exit %d", d.exit_code);
	return d.exit_code;
}
