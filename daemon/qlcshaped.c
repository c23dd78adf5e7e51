/* SPDX-License-Identifier: MIT */
/*
 * qlcshaped: the daemon. One instance serves one /dev/ublkbN.
 *
 * Structure: everything runs on the main thread around one io_uring
 * (qs_uloop): the ublk queues' fetch/commit commands, the backend (the
 * engine and its volumes' I/O, or the RAM test backend), the signalfd. The
 * only other threads are short-lived helpers for the blocking ublk control
 * commands START_DEV and STOP_DEV (see daemon/ublk.h) and io_uring's own
 * workers. States:
 *
 *   STARTING  backend ready, START_DEV in flight on its helper
 *   RUNNING   /dev/ublkbN exists; READY=1 sent to systemd
 *   STOPPING  SIGTERM/SIGINT seen: STOP_DEV in flight; requests still served
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
#include "backend_ram.h"
#include "common_config.h"
#include "common_uloop.h"
#include "nvme_iu.h"
#include "ublk.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57 /* Linux 5.6 */
#endif

enum d_state { D_STARTING, D_RUNNING, D_STOPPING, D_DONE };

struct daemon {
	struct qs_config cfg;
	struct qs_uloop loop;
	struct qs_backend bk;
	struct qs_ramb *ram;
	struct qs_ublk *ublk;
	int sfd;
	struct signalfd_siginfo si;
	struct qs_uop sig_op;
	enum d_state state;
	bool stop_requested;
	int exit_code;
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

/*
 * sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET (a path, or
 * an abstract name written with a leading '@'). Silently nothing when not
 * run by systemd.
 */
static void d_notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	len = strlen(path);
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		d_log("sd_notify: %s", strerror(errno));
	close(fd);
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
	if (!f || fputs("-1000", f) < 0 || fclose(f) != 0) {
		d_log("warning: cannot set oom_score_adj: %s", strerror(errno));
		if (f)
			fclose(f);
	}
}

static void d_sig_arm(struct daemon *d);

static void d_on_stopped(void *arg, int res)
{
	struct daemon *d = arg;

	if (res < 0) {
		d_log("STOP_DEV: %s", strerror(-res));
		d->exit_code = 1;
	}
	d->state = D_DONE;
}

static void d_stop(struct daemon *d)
{
	int ret;

	d->stop_requested = true;
	if (d->state != D_RUNNING)
		return; /* STARTING: d_on_started stops; STOPPING/DONE: nothing to do */
	d->state = D_STOPPING;
	d_notify("STOPPING=1");
	d_log("stopping /dev/ublkb%d", qs_ublk_dev_id(d->ublk));
	ret = qs_ublk_stop(d->ublk, d_on_stopped, d);
	if (ret < 0) {
		d_log("STOP_DEV: %s", strerror(-ret));
		d->exit_code = 1;
		d->state = D_DONE;
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
		d->state = D_DONE;
		return;
	}
	feat = qs_ublk_features(d->ublk, &ioctl_encode);
	d->state = D_RUNNING;
	d_log("/dev/ublkb%d ready: %llu bytes, backend %s, flags 0x%llx, %s opcodes",
	      qs_ublk_dev_id(d->ublk), (unsigned long long)d->bk.size, d->bk.name,
	      (unsigned long long)feat, ioctl_encode ? "ioctl-encoded" : "legacy");
	d_notify("READY=1");
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

static int d_backend_open(struct daemon *d)
{
	int ret;

	switch (d->cfg.backend) {
	case QS_BACKEND_RAM:
		ret = qs_ramb_create(&d->ram, &d->loop, d->cfg.ram_size, &d->bk);
		if (ret < 0)
			d_log("ram backend of %llu bytes: %s", (unsigned long long)d->cfg.ram_size,
			      strerror(-ret));
		return ret;
	case QS_BACKEND_ENGINE:
		d_log("%s: daemon.backend = engine: the engine backend is not built into this "
		      "qlcshaped yet; use backend = ram to test the frontend",
		      d->cfg.file);
		return -ENOSYS;
	}
	return -EINVAL;
}

static void d_backend_close(struct daemon *d)
{
	qs_ramb_free(d->ram);
	d->ram = NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: qlcshaped --config FILE\n\n"
		   "Serves /dev/ublkbN through the qlcshape engine; see conf/qlcshaped.ini.\n"
		   "SIGTERM or SIGINT stops it cleanly.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct daemon d = {.sfd = -1};
	struct qs_ublk_conf uc;
	const char *config = NULL;
	char err[512], msg[512];
	sigset_t mask;
	uint32_t iu;
	enum qs_iu_source iu_src;
	int c, ret;

	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
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
	ret = qs_config_load(&d.cfg, config, err, sizeof(err));
	if (ret) {
		d_log("%s", err);
		return 2;
	}

	/* Signals arrive through the loop; block them before any thread exists. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d.sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (d.sfd < 0) {
		d_log("signalfd: %s", strerror(errno));
		goto out_cfg;
	}
	d.sig_op.done = d_on_signal;
	d.sig_op.retry = d_sig_retry;
	d_harden();

	ret = qs_uloop_init(&d.loop, d.cfg.queues * d.cfg.queue_depth + 256);
	if (ret < 0) {
		d_log("io_uring: %s", strerror(-ret));
		goto out_cfg;
	}
	if (d.cfg.backend == QS_BACKEND_ENGINE) {
		qs_iu_detect(d.cfg.qlc, d.cfg.iu_bytes, &iu, &iu_src, msg, sizeof(msg));
	} else {
		iu = d.cfg.iu_bytes ? d.cfg.iu_bytes : QS_IU_FALLBACK;
		snprintf(msg, sizeof(msg), "IU %u bytes from %s (ram backend)", iu,
			 d.cfg.iu_bytes ? "config" : "default");
	}
	d_log("%s", msg);
	if (d_backend_open(&d) < 0)
		goto out_loop;

	uc = (struct qs_ublk_conf){
		.queues = d.cfg.queues,
		.depth = d.cfg.queue_depth,
		.max_io_bytes = d.cfg.max_io_bytes,
		.dev_id = d.cfg.dev_id,
		.iu_bytes = iu,
		.user_recovery = d.cfg.user_recovery,
	};
	ret = qs_ublk_create(&d.ublk, &d.loop, &uc, &d.bk, err, sizeof(err));
	if (ret < 0) {
		d_log("%s", err);
		goto out_backend;
	}
	d_sig_arm(&d);
	d.state = D_STARTING;
	ret = qs_ublk_start(d.ublk, d_on_started, &d);
	if (ret < 0) {
		d_log("START_DEV: %s", strerror(-ret));
		d.state = D_DONE;
	}
	d.exit_code = 0;
	while (d.state != D_DONE) {
		ret = qs_uloop_run(&d.loop, UINT64_MAX);
		if (ret < 0 && ret != -EINTR) {
			d_log("event loop: %s", strerror(-ret));
			d.exit_code = 1;
			break;
		}
	}
	{
		struct qs_ublk_stats s;

		qs_ublk_get_stats(d.ublk, &s);
		d_log("served %llu reads (%llu bytes), %llu writes (%llu bytes), %llu flushes, "
		      "%llu discards, %llu write-zeroes, %llu errors",
		      (unsigned long long)s.reads, (unsigned long long)s.read_bytes,
		      (unsigned long long)s.writes, (unsigned long long)s.write_bytes,
		      (unsigned long long)s.flushes, (unsigned long long)s.discards,
		      (unsigned long long)s.write_zeroes, (unsigned long long)s.errors);
	}
	/* Tear the ring down first: it cancels the fetches that pin /dev/ublkcN. */
	qs_uloop_exit(&d.loop);
	qs_ublk_destroy(d.ublk);
	d_backend_close(&d);
	close(d.sfd);
	qs_config_free(&d.cfg);
	d_log("exit %d", d.exit_code);
	return d.exit_code;

out_backend:
	d_backend_close(&d);
out_loop:
	qs_uloop_exit(&d.loop);
out_cfg:
	if (d.sfd >= 0)
		close(d.sfd);
	qs_config_free(&d.cfg);
	return 1;
}
