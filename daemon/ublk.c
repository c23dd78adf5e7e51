/* SPDX-License-Identifier: MIT */
/* qs_ublk: ublk frontend, all queues on the loop thread (see header). */
#include "ublk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ublk_compat.h"

#define UBLK_CTRL_DEV "/dev/ublk-control"

/*
 * How long start-up waits for a device a dead daemon left to become usable
 * (its /dev/ublkcN released, the device quiesced), retrying EBUSY. Longer
 * than the block layer's default request timeout (30 s): on Linux 6.12 a
 * queue whose every tag was in the dead daemon's hands is only aborted by
 * that timeout (ublk_timeout), and START_USER_RECOVERY waits behind it. The
 * daemon shortens the device's timeout (UBLK_IO_TIMEOUT_MS below), but that
 * can fail (a read-only /sys) or have been undone, and the window must still
 * cover the kernel's default then.
 */
#define UBLK_TAKEOVER_WAIT_S 60

/*
 * The request timeout the daemon gives /dev/ublkbN (queue/io_timeout), in
 * milliseconds. While the daemon lives, ublk answers a timeout by re-arming
 * it (privileged devices), so a short one costs a timer scan, not an error.
 * When the daemon dies holding every tag of a queue, that timeout is what
 * aborts the queue on 6.12 (no io command is left to cancel): 30 s by
 * default, at most this plus the block layer's rounding to whole seconds.
 */
#define UBLK_IO_TIMEOUT_MS 1000

enum tag_state {
	TAG_FETCHING, /* FETCH or COMMIT_AND_FETCH in the kernel */
	TAG_BACKEND,  /* request handed to the backend */
	TAG_DEAD,     /* aborted by the kernel (device stopping) */
};

struct ublk_tag {
	struct qs_uop op; /* first: CQEs hand it back */
	struct qs_ublk *u;
	uint16_t q, tag;
	enum tag_state state;
	bool committing;  /* the next SQE is a COMMIT_AND_FETCH */
	int32_t result;	  /* what the commit reports */
	uint8_t io_op;	  /* UBLK_IO_OP_* of the request in the backend */
	uint32_t io_len;
	void *buf;
};

struct ublk_queue {
	const struct ublksrv_io_desc *descs; /* read-only kernel descriptor area */
	size_t descs_len;
	struct ublk_tag *tags;
};

/* A control command run on a helper thread, reported through an eventfd. */
struct ublk_async {
	struct qs_uop op;
	struct qs_ublk *u;
	pthread_t thread;
	int efd;
	uint64_t efd_val;
	unsigned legacy_op, ioctl_op;
	struct ublksrv_ctrl_cmd cmd;
	int result;
	bool joinable;
	qs_ublk_cb cb;
	void *arg;
};

struct qs_ublk {
	struct qs_uloop *loop;
	struct qs_backend *bk;
	struct qs_ublk_conf conf;
	struct io_uring ctrl; /* SQE128 ring for control commands */
	bool ctrl_ready;
	pthread_mutex_t ctrl_lock; /* the helper thread and this thread share ctrl */
	int ctrl_fd, cdev_fd;
	int dev_id;
	bool added;
	bool recovering; /* re-attaching to a quiesced device (user recovery) */
	bool ioctl_encode;
	uint64_t features; /* from GET_FEATURES, or the 6.1 set */
	uint64_t flags;	   /* negotiated UBLK_F_* */
	struct ublk_queue *queues;
	void *bufs;
	size_t bufs_len;
	uint32_t inflight;
	uint32_t live_tags;
	struct ublk_async *async; /* at most one control command in flight */
	struct qs_ublk_stats stats;
	/* qs_ublk_start's and qs_ublk_stop's caller, called once the step ends */
	qs_ublk_cb user_cb;
	void *user_arg;
	/* stop: STOP_DEV's result, and whether it waits for the aborted fetches */
	int stop_res;
	bool stop_waits_tags;
	struct qs_utimer stop_timer;
};

static int ublk_log2(uint32_t v)
{
	int s = 0;

	while ((1u << s) < v)
		s++;
	return s;
}

/* Run one control command synchronously on the SQE128 ring. */
static int ublk_ctrl_cmd(struct qs_ublk *u, unsigned op, struct ublksrv_ctrl_cmd *cmd)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	pthread_mutex_lock(&u->ctrl_lock);
	sqe = io_uring_get_sqe(&u->ctrl);
	if (!sqe) {
		pthread_mutex_unlock(&u->ctrl_lock);
		return -EBUSY;
	}
	/* The command lives in the SQE's 80-byte tail (cmd[]), hence SQE128. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, u->ctrl_fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), cmd, sizeof(*cmd));
	ret = io_uring_submit_and_wait(&u->ctrl, 1);
	if (ret >= 0) {
		ret = io_uring_wait_cqe(&u->ctrl, &cqe);
		if (ret == 0) {
			ret = cqe->res;
			io_uring_cqe_seen(&u->ctrl, cqe);
		}
	}
	pthread_mutex_unlock(&u->ctrl_lock);
	return ret;
}

static void ublk_cmd_init(struct qs_ublk *u, struct ublksrv_ctrl_cmd *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->dev_id = (uint32_t)u->dev_id;
	cmd->queue_id = (uint16_t)-1; /* not a queue command */
}

static int ublk_ctrl(struct qs_ublk *u, unsigned legacy_op, unsigned ioctl_op,
		     struct ublksrv_ctrl_cmd *cmd)
{
	return ublk_ctrl_cmd(u, u->ioctl_encode ? ioctl_op : legacy_op, cmd);
}

/* 6.5+ answers GET_FEATURES; 6.1 fails any ioctl-encoded opcode. */
static void ublk_probe_features(struct qs_ublk *u)
{
	struct ublksrv_ctrl_cmd cmd;
	uint64_t feat = 0;
	int ret;

	ublk_cmd_init(u, &cmd);
	cmd.addr = (uint64_t)(uintptr_t)&feat;
	cmd.len = sizeof(feat);
	ret = ublk_ctrl_cmd(u, UBLK_U_CMD_GET_FEATURES, &cmd);
	if (ret >= 0) {
		u->ioctl_encode = true;
		u->features = feat;
		fprintf(stderr, "qlcshaped: ublk: GET_FEATURES 0x%llx, ioctl-encoded opcodes\n",
			(unsigned long long)feat);
	} else {
		u->ioctl_encode = false;
		u->features = QS_UBLK_F_KNOWN_61;
		fprintf(stderr,
			"qlcshaped: ublk: GET_FEATURES failed (%s): legacy opcodes (Linux 6.1-6.4)\n",
			strerror(-ret));
	}
}

static void ublk_prep_io_cmd(struct qs_ublk *u, struct io_uring_sqe *sqe, struct ublk_tag *t)
{
	struct ublksrv_io_cmd cmd = {
		.q_id = t->q,
		.tag = t->tag,
		.result = t->committing ? t->result : 0,
		.addr = (uint64_t)(uintptr_t)t->buf,
	};
	unsigned op;

	if (t->committing)
		op = u->ioctl_encode ? UBLK_U_IO_COMMIT_AND_FETCH_REQ : UBLK_IO_COMMIT_AND_FETCH_REQ;
	else
		op = u->ioctl_encode ? UBLK_U_IO_FETCH_REQ : UBLK_IO_FETCH_REQ;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, u->cdev_fd, NULL, 0, 0);
	sqe->cmd_op = op;
	/* 16 bytes: fits the cmd[] tail of a 64-byte SQE, no SQE128 needed. */
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), &cmd, sizeof(cmd));
	io_uring_sqe_set_data(sqe, &t->op);
}

static void ublk_tag_issue(struct qs_uop *op, int unused)
{
	struct ublk_tag *t = (struct ublk_tag *)op;
	struct io_uring_sqe *sqe = qs_uloop_sqe(t->u->loop);

	(void)unused;
	if (!sqe) {
		qs_uloop_wait_sqe(t->u->loop, op);
		return;
	}
	t->state = TAG_FETCHING;
	ublk_prep_io_cmd(t->u, sqe, t);
}

static void ublk_commit(struct ublk_tag *t, int32_t result)
{
	struct qs_ublk *u = t->u;

	u->inflight--;
	if (result < 0)
		u->stats.errors++;
	t->result = result;
	t->committing = true;
	ublk_tag_issue(&t->op, 0);
}

static void ublk_backend_done(void *arg, int res)
{
	struct ublk_tag *t = arg;

	if (res < 0) {
		ublk_commit(t, res);
		return;
	}
	/* Reads and writes report bytes; flush, discard, write-zeroes 0. */
	ublk_commit(t, (t->io_op == UBLK_IO_OP_READ || t->io_op == UBLK_IO_OP_WRITE) ?
			       (int32_t)t->io_len : 0);
}

static void ublk_handle_request(struct ublk_tag *t)
{
	struct qs_ublk *u = t->u;
	const struct ublksrv_io_desc *iod = &u->queues[t->q].descs[t->tag];
	uint32_t op_flags = iod->op_flags;
	uint64_t off = iod->start_sector << 9;
	uint64_t len = (uint64_t)iod->nr_sectors << 9;
	struct qs_backend *bk = u->bk;
	int ret;

	t->state = TAG_BACKEND;
	t->io_op = (uint8_t)(op_flags & 0xff);
	t->io_len = (uint32_t)len;
	u->inflight++;
	switch (t->io_op) {
	case UBLK_IO_OP_READ:
		u->stats.reads++;
		u->stats.read_bytes += len;
		ret = len > u->conf.max_io_bytes ? -EINVAL :
			bk->ops->read(bk->ctx, off, len, t->buf, ublk_backend_done, t);
		break;
	case UBLK_IO_OP_WRITE:
		u->stats.writes++;
		u->stats.write_bytes += len;
		ret = len > u->conf.max_io_bytes ? -EINVAL :
			bk->ops->write(bk->ctx, off, len, t->buf,
				       (op_flags & UBLK_IO_F_FUA) ? QS_WRITE_FUA : 0,
				       ublk_backend_done, t);
		break;
	case UBLK_IO_OP_FLUSH:
		u->stats.flushes++;
		ret = bk->ops->flush(bk->ctx, ublk_backend_done, t);
		break;
	case UBLK_IO_OP_DISCARD:
	case UBLK_IO_OP_WRITE_ZEROES:
		/* The backend's discard reads back zeroes: it serves both. */
		if (t->io_op == UBLK_IO_OP_DISCARD)
			u->stats.discards++;
		else
			u->stats.write_zeroes++;
		ret = bk->ops->discard(bk->ctx, off, len, ublk_backend_done, t);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
	if (ret < 0)
		ublk_commit(t, ret);
}

static void ublk_stop_release(struct qs_ublk *u);

static void ublk_tag_cqe(struct qs_uop *op, int res)
{
	struct ublk_tag *t = (struct ublk_tag *)op;

	if (res == UBLK_IO_RES_OK) {
		ublk_handle_request(t);
		return;
	}
	/* UBLK_IO_RES_ABORT: the device is stopping; anything else is a bug. */
	if (res != UBLK_IO_RES_ABORT)
		fprintf(stderr, "qlcshaped: ublk: queue %u tag %u: io command failed: %s\n", t->q,
			t->tag, strerror(-res));
	t->state = TAG_DEAD;
	t->u->live_tags--;
	if (!t->u->live_tags && t->u->stop_waits_tags)
		ublk_stop_release(t->u);
}

static int ublk_open_cdev(struct qs_ublk *u, char *err, size_t errlen)
{
	char path[64];
	/* devtmpfs/udev may take a moment to create the node, and udev may hold it. */
	struct timespec ts = {0, 10 * 1000 * 1000};

	snprintf(path, sizeof(path), "/dev/ublkc%d", u->dev_id);
	for (int i = 0; i < 500; i++) {
		u->cdev_fd = open(path, O_RDWR | O_CLOEXEC);
		if (u->cdev_fd >= 0)
			return 0;
		if (errno != EBUSY && errno != ENOENT)
			break;
		nanosleep(&ts, NULL);
	}
	snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	return -errno;
}

static int ublk_set_params(struct qs_ublk *u, char *err, size_t errlen)
{
	struct ublk_params p;
	struct ublksrv_ctrl_cmd cmd;
	int iu_shift = ublk_log2(u->conf.iu_bytes);
	int ret;

	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	p.types = UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD;
	/* Without VOLATILE_CACHE and FUA the kernel never sends flushes. */
	p.basic.attrs = UBLK_ATTR_VOLATILE_CACHE | UBLK_ATTR_FUA;
	p.basic.logical_bs_shift = 12;
	p.basic.physical_bs_shift = (uint8_t)iu_shift;
	p.basic.io_min_shift = (uint8_t)iu_shift;
	p.basic.io_opt_shift = (uint8_t)iu_shift;
	p.basic.max_sectors = u->conf.max_io_bytes >> 9;
	p.basic.dev_sectors = u->bk->size >> 9;
	p.discard.discard_granularity = u->conf.iu_bytes;
	p.discard.max_discard_sectors = UINT_MAX >> 9 & ~7u;
	p.discard.max_write_zeroes_sectors = UINT_MAX >> 9 & ~7u;
	p.discard.max_discard_segments = 1;
	ublk_cmd_init(u, &cmd);
	cmd.addr = (uint64_t)(uintptr_t)&p;
	cmd.len = sizeof(p);
	ret = ublk_ctrl(u, UBLK_CMD_SET_PARAMS, UBLK_U_CMD_SET_PARAMS, &cmd);
	if (ret < 0)
		snprintf(err, errlen, "ublk SET_PARAMS: %s", strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* The fresh-device path: open /dev/ublkcN, then SET_PARAMS. */
static int ublk_set_params_after_open(struct qs_ublk *u, char *err, size_t errlen)
{
	int ret = ublk_open_cdev(u, err, errlen);

	return ret ? ret : ublk_set_params(u, err, errlen);
}

static int ublk_map_queues(struct qs_ublk *u, char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t max_sz = (UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc) + (size_t)page - 1) &
			~((size_t)page - 1);
	size_t sz = (u->conf.depth * sizeof(struct ublksrv_io_desc) + (size_t)page - 1) &
		    ~((size_t)page - 1);

	u->bufs_len = (size_t)u->conf.queues * u->conf.depth * u->conf.max_io_bytes;
	u->bufs = mmap(NULL, u->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (u->bufs == MAP_FAILED) {
		u->bufs = NULL;
		snprintf(err, errlen, "ublk: cannot map %zu bytes of I/O buffers", u->bufs_len);
		return -ENOMEM;
	}
	for (uint32_t q = 0; q < u->conf.queues; q++) {
		struct ublk_queue *uq = &u->queues[q];
		void *m = mmap(NULL, sz, PROT_READ, MAP_SHARED | MAP_POPULATE, u->cdev_fd,
			       (off_t)(UBLKSRV_CMD_BUF_OFFSET + q * max_sz));

		if (m == MAP_FAILED) {
			snprintf(err, errlen, "ublk: queue %u: cannot map descriptors: %s", q,
				 strerror(errno));
			return -errno;
		}
		uq->descs = m;
		uq->descs_len = sz;
		uq->tags = calloc(u->conf.depth, sizeof(*uq->tags));
		if (!uq->tags) {
			snprintf(err, errlen, "ublk: out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < u->conf.depth; i++) {
			struct ublk_tag *t = &uq->tags[i];

			t->op.done = ublk_tag_cqe;
			t->op.retry = ublk_tag_issue;
			t->u = u;
			t->q = (uint16_t)q;
			t->tag = (uint16_t)i;
			t->buf = (char *)u->bufs +
				 ((size_t)q * u->conf.depth + i) * u->conf.max_io_bytes;
		}
	}
	return 0;
}

static int ublk_get_info(struct qs_ublk *u, struct ublksrv_ctrl_dev_info *info)
{
	struct ublksrv_ctrl_cmd cmd;

	memset(info, 0, sizeof(*info));
	ublk_cmd_init(u, &cmd);
	cmd.addr = (uint64_t)(uintptr_t)info;
	cmd.len = sizeof(*info);
	return ublk_ctrl(u, UBLK_CMD_GET_DEV_INFO, UBLK_U_CMD_GET_DEV_INFO, &cmd);
}

static double ublk_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *ublk_state_name(uint16_t state)
{
	switch (state) {
	case UBLK_S_DEV_DEAD:
		return "stopped";
	case UBLK_S_DEV_LIVE:
		return "live";
	case UBLK_S_DEV_QUIESCED:
		return "quiesced";
	}
	return "unknown";
}

/*
 * Whether pid is a running process, not one that is exiting or a zombie:
 * the kernel keeps a dead daemon's pid in the device info, and a daemon
 * killed a moment ago may still be in its exit (PF_EXITING) while the kernel
 * tears its rings down. Its name goes to comm (empty if there is none).
 */
static bool ublk_pid_running(int pid, char *comm, size_t len)
{
	char path[64], buf[512], *p;
	unsigned long flags = 0;
	char state = 0;
	size_t n;
	FILE *f;

	comm[0] = 0;
	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags ..."; comm may hold ')' */
	p = strrchr(buf, ')');
	if (!p || !strchr(buf, '('))
		return false;
	snprintf(comm, len, "%.*s", (int)(p - strchr(buf, '(') - 1), strchr(buf, '(') + 1);
	if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return false;
	/* 0x4 is PF_EXITING (include/linux/sched.h, unchanged since 2.6) */
	return state != 'Z' && state != 'X' && !(flags & 0x4);
}

/*
 * Whether someone holds /dev/ublkcN open. ublk lets one opener at a time
 * (ublk_ch_open answers EBUSY), so opening and closing it again tells,
 * without side effects: a live server always holds it, a dead one's is
 * released once the kernel has torn its io_uring down. No node (udev not
 * done, or the device going away) counts as free.
 */
static bool ublk_cdev_busy(int dev_id)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/ublkc%d", dev_id);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EBUSY;
}

/*
 * Whether the device found can be re-attached by this configuration: why
 * not in why, or "" if it can.
 */
static void ublk_recover_check(struct qs_ublk *u, const struct ublksrv_ctrl_dev_info *info,
			       char *why, size_t len)
{
	struct ublksrv_ctrl_cmd cmd;
	struct ublk_params p;
	int ret;

	why[0] = 0;
	if (!u->conf.user_recovery) {
		snprintf(why, len, "ublk.user_recovery is off in this configuration");
		return;
	}
	if (!(info->flags & UBLK_F_USER_RECOVERY)) {
		snprintf(why, len, "it was created without user recovery");
		return;
	}
	if (info->state == UBLK_S_DEV_DEAD) {
		snprintf(why, len, "it is stopped (its daemon died during or after a stop)");
		return;
	}
	if (info->nr_hw_queues != u->conf.queues || info->queue_depth != u->conf.depth ||
	    info->max_io_buf_bytes != u->conf.max_io_bytes) {
		snprintf(why, len, "it has %u queues of depth %u, max_io %u; the config asks for "
			 "%u, %u, %u", info->nr_hw_queues, info->queue_depth,
			 info->max_io_buf_bytes, u->conf.queues, u->conf.depth,
			 u->conf.max_io_bytes);
		return;
	}
	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	ublk_cmd_init(u, &cmd);
	cmd.addr = (uint64_t)(uintptr_t)&p;
	cmd.len = sizeof(p);
	ret = ublk_ctrl(u, UBLK_CMD_GET_PARAMS, UBLK_U_CMD_GET_PARAMS, &cmd);
	if (ret < 0) {
		snprintf(why, len, "GET_PARAMS: %s", strerror(-ret));
		return;
	}
	if (p.basic.dev_sectors != u->bk->size >> 9 ||
	    (1u << p.basic.physical_bs_shift) != u->conf.iu_bytes)
		snprintf(why, len, "it has %llu bytes and a %u-byte physical block; the backend "
			 "has %llu bytes and the IU is %u",
			 (unsigned long long)p.basic.dev_sectors << 9,
			 1u << p.basic.physical_bs_shift, (unsigned long long)u->bk->size,
			 u->conf.iu_bytes);
}

/*
 * A device with the configured dev_id exists: decide what to do with it.
 * Returns 1 when it is re-attached by user recovery (START_USER_RECOVERY
 * done), 0 when it was deleted or had vanished (create a fresh one), or
 * -errno with a message in err: it belongs to a live process, or it stayed
 * busy for UBLK_TAKEOVER_WAIT_S.
 *
 * What a daemon can leave, whatever the moment it was killed at (docs/
 * DAEMON.md, "Restart after a kill"): a live or quiesced device with user
 * recovery (killed while serving), re-attached when this configuration
 * matches it; a stopped one (killed during or after STOP_DEV, or any device
 * without user recovery, which the kernel stops itself), deleted. A device
 * whose recorded owner still runs a qlcshaped, or whose /dev/ublkcN a
 * running process holds, is never touched.
 */
static int ublk_take_over(struct qs_ublk *u, char *err, size_t errlen)
{
	double deadline = ublk_now_s() + UBLK_TAKEOVER_WAIT_S;
	struct timespec ts = {0, 100 * 1000 * 1000};
	struct ublksrv_ctrl_dev_info info;
	struct ublksrv_ctrl_cmd cmd;
	char why[256], comm[64], self[64];
	int said = -1; /* the decision last logged: 0 re-attach, 1 delete */
	int ret;

	ublk_pid_running(getpid(), self, sizeof(self));
	for (;;) {
		ret = ublk_get_info(u, &info);
		if (ret == -ENODEV)
			return 0;
		if (ret < 0) {
			snprintf(err, errlen, "ublk GET_DEV_INFO %d: %s", u->dev_id, strerror(-ret));
			return ret;
		}
		/* A live owner: a running qlcshaped, or a running process holding ublkcN. */
		if ((int)info.ublksrv_pid != getpid() &&
		    ublk_pid_running(info.ublksrv_pid, comm, sizeof(comm)) &&
		    (!strcmp(comm, self) || ublk_cdev_busy(u->dev_id))) {
			snprintf(err, errlen, "ublk device %d (/dev/ublkb%d) is in use by %s, pid %d, "
				 "which is running: stop that instance first, or give this "
				 "configuration another ublk.dev_id", u->dev_id, u->dev_id,
				 comm[0] ? comm : "a process", info.ublksrv_pid);
			return -EBUSY;
		}
		ublk_recover_check(u, &info, why, sizeof(why));
		/* Logged again if it changes: a device being stopped while we wait. */
		if (said != (why[0] != 0)) {
			fprintf(stderr, "qlcshaped: ublk: device %d exists (%s, flags 0x%llx, last "
				"owner pid %d, not running): %s\n", u->dev_id,
				ublk_state_name(info.state), (unsigned long long)info.flags,
				info.ublksrv_pid, why[0] ? "deleting it to create a fresh one" :
				"re-attaching by user recovery");
			if (why[0])
				fprintf(stderr, "qlcshaped: ublk: device %d cannot be re-attached: %s\n",
					u->dev_id, why);
			said = why[0] != 0;
		}
		if (!why[0]) {
			/*
			 * EBUSY until the dead daemon's /dev/ublkcN is released
			 * and the device quiesced (6.1: by its monitor work,
			 * within 5 s; 6.12: at once, or after the request
			 * timeout when a queue had every tag in flight).
			 */
			ublk_cmd_init(u, &cmd);
			ret = ublk_ctrl(u, UBLK_CMD_START_USER_RECOVERY,
					UBLK_U_CMD_START_USER_RECOVERY, &cmd);
			if (ret == 0) {
				u->added = true;
				u->recovering = true;
				u->flags = info.flags;
				return 1;
			}
			if (ret != -EBUSY) {
				/* e.g. EINVAL: a daemon killed while re-attaching left no queue ready */
				fprintf(stderr, "qlcshaped: ublk: device %d: START_USER_RECOVERY: %s; "
					"deleting it to create a fresh one\n", u->dev_id,
					strerror(-ret));
				goto del;
			}
		} else if (!ublk_cdev_busy(u->dev_id)) {
			goto del;
		}
		if (ublk_now_s() > deadline) {
			snprintf(err, errlen, "ublk device %d is still busy after %d s (%s): "
				 "/dev/ublkc%d is held open, or the kernel has not finished with "
				 "the dead daemon's requests; find a holder with fuser /dev/ublkc%d",
				 u->dev_id, UBLK_TAKEOVER_WAIT_S,
				 why[0] ? "to delete it" : "START_USER_RECOVERY answers EBUSY",
				 u->dev_id, u->dev_id);
			return -EBUSY;
		}
		nanosleep(&ts, NULL);
	}
del:
	/* DEL_DEV waits until every reference to the device is gone. */
	ublk_cmd_init(u, &cmd);
	ret = ublk_ctrl(u, UBLK_CMD_DEL_DEV, UBLK_U_CMD_DEL_DEV, &cmd);
	if (ret < 0 && ret != -ENODEV) {
		snprintf(err, errlen, "ublk DEL_DEV %d (a device left by a dead daemon): %s",
			 u->dev_id, strerror(-ret));
		return ret;
	}
	fprintf(stderr, "qlcshaped: ublk: device %d deleted\n", u->dev_id);
	return 0;
}

int qs_ublk_create(struct qs_ublk **out, struct qs_uloop *loop, const struct qs_ublk_conf *conf,
		   struct qs_backend *bk, char *err, size_t errlen)
{
	struct ublksrv_ctrl_dev_info info;
	struct ublksrv_ctrl_cmd cmd;
	struct qs_ublk *u;
	uint64_t want;
	int ret;

	*out = NULL;
	if (!conf->queues || !conf->depth || conf->depth > UBLK_MAX_QUEUE_DEPTH ||
	    conf->max_io_bytes < 4096 || conf->max_io_bytes % 4096 || conf->iu_bytes < 4096 ||
	    (conf->iu_bytes & (conf->iu_bytes - 1)) || bk->size < 4096) {
		snprintf(err, errlen, "ublk: invalid queue, buffer or IU configuration");
		return -EINVAL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->loop = loop;
	u->bk = bk;
	u->conf = *conf;
	u->ctrl_fd = -1;
	u->cdev_fd = -1;
	u->dev_id = conf->dev_id;
	pthread_mutex_init(&u->ctrl_lock, NULL);
	u->queues = calloc(conf->queues, sizeof(*u->queues));
	if (!u->queues) {
		ret = -ENOMEM;
		snprintf(err, errlen, "ublk: out of memory");
		goto fail;
	}
	u->ctrl_fd = open(UBLK_CTRL_DEV, O_RDWR | O_CLOEXEC);
	if (u->ctrl_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s (is ublk_drv loaded?)", UBLK_CTRL_DEV,
			 strerror(errno));
		goto fail;
	}
	ret = io_uring_queue_init(4, &u->ctrl, IORING_SETUP_SQE128);
	if (ret < 0) {
		snprintf(err, errlen, "ublk: control ring: %s", strerror(-ret));
		goto fail;
	}
	u->ctrl_ready = true;
	ublk_probe_features(u);

	/* A fixed dev_id: a dead instance of this configuration may have left it. */
	if (conf->dev_id >= 0) {
		ret = ublk_take_over(u, err, errlen);
		if (ret < 0)
			goto fail;
		if (ret == 1) {
			fprintf(stderr, "qlcshaped: ublk: recovering device %d (flags 0x%llx)\n",
				u->dev_id, (unsigned long long)u->flags);
			goto attach;
		}
	}

	want = 0;
	if (u->ioctl_encode)
		want |= UBLK_F_CMD_IOCTL_ENCODE;
	if (conf->user_recovery) {
		/* REISSUE: requests the dead daemon held go to the next one. */
		if ((u->features & UBLK_F_USER_RECOVERY) &&
		    (u->features & UBLK_F_USER_RECOVERY_REISSUE))
			want |= UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE;
		else
			fprintf(stderr, "qlcshaped: ublk: kernel lacks UBLK_F_USER_RECOVERY\n");
		if (conf->dev_id < 0)
			fprintf(stderr, "qlcshaped: ublk: user recovery needs a fixed ublk.dev_id "
				"to find the device again\n");
	}
	memset(&info, 0, sizeof(info));
	info.nr_hw_queues = (uint16_t)conf->queues;
	info.queue_depth = (uint16_t)conf->depth;
	info.max_io_buf_bytes = conf->max_io_bytes;
	info.dev_id = (uint32_t)conf->dev_id;
	info.ublksrv_pid = getpid();
	info.flags = want;
	ublk_cmd_init(u, &cmd);
	cmd.addr = (uint64_t)(uintptr_t)&info;
	cmd.len = sizeof(info);
	ret = ublk_ctrl(u, UBLK_CMD_ADD_DEV, UBLK_U_CMD_ADD_DEV, &cmd);
	if (ret < 0) {
		if (ret == -EEXIST && conf->dev_id >= 0)
			snprintf(err, errlen, "ublk ADD_DEV %d: %s (it appeared meanwhile: another "
				 "instance with this ublk.dev_id?)", conf->dev_id, strerror(-ret));
		else
			snprintf(err, errlen, "ublk ADD_DEV: %s", strerror(-ret));
		goto fail;
	}
	u->added = true;
	u->dev_id = (int)info.dev_id;
	u->flags = info.flags;
	if (info.max_io_buf_bytes < conf->max_io_bytes)
		u->conf.max_io_bytes = info.max_io_buf_bytes; /* the kernel rounds down */
	ret = ublk_set_params_after_open(u, err, errlen);
	if (ret)
		goto fail;
	goto map;
attach:
	ret = ublk_open_cdev(u, err, errlen);
	if (ret)
		goto fail;
map:
	ret = ublk_map_queues(u, err, errlen);
	if (ret)
		goto fail;
	/* FETCH every tag; submitted by the loop (or qs_ublk_start) before START_DEV. */
	for (uint32_t q = 0; q < conf->queues; q++)
		for (uint32_t i = 0; i < conf->depth; i++)
			ublk_tag_issue(&u->queues[q].tags[i].op, 0);
	u->live_tags = conf->queues * conf->depth;
	*out = u;
	return 0;
fail:
	qs_ublk_destroy(u);
	return ret;
}

static void *ublk_async_thread(void *arg)
{
	struct ublk_async *a = arg;
	uint64_t one = 1;

	a->result = ublk_ctrl(a->u, a->legacy_op, a->ioctl_op, &a->cmd);
	if (write(a->efd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write of 1 cannot fail; the loop would hang */
	return NULL;
}

static void ublk_async_done(struct qs_uop *op, int res)
{
	struct ublk_async *a = (struct ublk_async *)op;
	qs_ublk_cb cb = a->cb;
	void *arg = a->arg;
	int result = a->result;

	(void)res;
	if (a->joinable)
		pthread_join(a->thread, NULL);
	close(a->efd);
	a->u->async = NULL;
	free(a);
	cb(arg, result);
}

static int ublk_async(struct qs_ublk *u, unsigned legacy_op, unsigned ioctl_op, uint64_t data0,
		      qs_ublk_cb cb, void *arg)
{
	struct ublk_async *a;
	struct io_uring_sqe *sqe;
	int ret;

	if (u->async)
		return -EBUSY;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->u = u;
	a->op.done = ublk_async_done;
	a->legacy_op = legacy_op;
	a->ioctl_op = ioctl_op;
	a->cb = cb;
	a->arg = arg;
	ublk_cmd_init(u, &a->cmd);
	a->cmd.data[0] = data0;
	a->efd = eventfd(0, EFD_CLOEXEC);
	if (a->efd < 0) {
		ret = -errno;
		free(a);
		return ret;
	}
	sqe = qs_uloop_sqe(u->loop);
	if (!sqe) {
		close(a->efd);
		free(a);
		return -EBUSY;
	}
	io_uring_prep_read(sqe, a->efd, &a->efd_val, sizeof(a->efd_val), 0);
	io_uring_sqe_set_data(sqe, &a->op);
	/* The fetches (and this read) must be in the kernel before START_DEV. */
	ret = qs_uloop_submit(u->loop);
	if (ret < 0)
		fprintf(stderr, "qlcshaped: ublk: submit: %s\n", strerror(-ret));
	u->async = a;
	ret = pthread_create(&a->thread, NULL, ublk_async_thread, a);
	if (ret) {
		/* Report through cb like any result: the queued read completes. */
		uint64_t one = 1;

		a->result = -ret;
		a->joinable = false;
		if (write(a->efd, &one, sizeof(one)) != sizeof(one))
			abort();
		return 0;
	}
	a->joinable = true;
	return 0;
}

/*
 * Give /dev/ublkbN the short request timeout (UBLK_IO_TIMEOUT_MS) through
 * sysfs: ublk has no parameter for it. On a thread of its own, detached,
 * because the kernel freezes the queue for the store (6.12's
 * queue_attr_store): that waits for the requests in flight, which only the
 * loop thread can complete (after a re-attach the requeued ones are already
 * flowing). A failure (a read-only /sys, as under systemd's
 * ProtectKernelTunables without the unit's ReadWritePaths) is a warning: only
 * the re-attach after a kill gets slower.
 */
static void *ublk_io_timeout_thread(void *arg)
{
	int dev_id = (int)(intptr_t)arg;
	char path[96], val[16];
	int fd, n;

	snprintf(path, sizeof(path), "/sys/block/ublkb%d/queue/io_timeout", dev_id);
	n = snprintf(val, sizeof(val), "%d", UBLK_IO_TIMEOUT_MS);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, val, (size_t)n) == n) {
		close(fd);
		return NULL;
	}
	if (fd < 0 && errno == ENOENT) {
		/* The block layer shows io_timeout only for drivers with a timeout handler. */
		fprintf(stderr, "qlcshaped: ublk: no %s: this kernel's ublk has no request timeout "
			"handler (6.1: its monitor work frees a dead daemon's device within 5 s), "
			"nothing to shorten\n", path);
		return NULL;
	}
	fprintf(stderr, "qlcshaped: ublk: warning: cannot set %s to %s ms: %s; a restart after "
		"a kill may wait for the kernel's default request timeout (30 s on Linux 6.12) "
		"when every tag of a queue was in flight\n", path, val, strerror(errno));
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void ublk_set_io_timeout(struct qs_ublk *u)
{
	pthread_attr_t attr;
	pthread_t th;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&th, &attr, ublk_io_timeout_thread, (void *)(intptr_t)u->dev_id);
	pthread_attr_destroy(&attr);
	if (ret)
		fprintf(stderr, "qlcshaped: ublk: warning: no thread to set the request timeout: "
			"%s\n", strerror(ret));
}

static void ublk_started(void *arg, int res)
{
	struct qs_ublk *u = arg;

	if (res == 0)
		ublk_set_io_timeout(u);
	u->user_cb(u->user_arg, res);
}

int qs_ublk_start(struct qs_ublk *u, qs_ublk_cb cb, void *arg)
{
	u->user_cb = cb;
	u->user_arg = arg;
	/* Both wait until every tag is fetched, then let requests flow. */
	if (u->recovering)
		return ublk_async(u, UBLK_CMD_END_USER_RECOVERY, UBLK_U_CMD_END_USER_RECOVERY,
				  (uint64_t)getpid(), ublk_started, u);
	return ublk_async(u, UBLK_CMD_START_DEV, UBLK_U_CMD_START_DEV, (uint64_t)getpid(),
			  ublk_started, u);
}

bool qs_ublk_recovered(const struct qs_ublk *u)
{
	return u->recovering;
}

/* Release the descriptor maps and /dev/ublkcN: both hold the device. */
static void ublk_release_cdev(struct qs_ublk *u)
{
	if (u->queues)
		for (uint32_t q = 0; q < u->conf.queues; q++) {
			if (u->queues[q].descs)
				munmap((void *)u->queues[q].descs, u->queues[q].descs_len);
			u->queues[q].descs = NULL;
		}
	if (u->cdev_fd >= 0)
		close(u->cdev_fd);
	u->cdev_fd = -1;
}

static void ublk_deleted(void *arg, int res)
{
	struct qs_ublk *u = arg;

	if (res < 0) {
		fprintf(stderr, "qlcshaped: ublk DEL_DEV %d: %s\n", u->dev_id, strerror(-res));
	} else {
		u->added = false;
		fprintf(stderr, "qlcshaped: ublk: device %d deleted\n", u->dev_id);
	}
	u->user_cb(u->user_arg, u->stop_res);
}

/* Every fetch is back (aborted): let go of the device and delete it. */
static void ublk_stop_release(struct qs_ublk *u)
{
	int ret;

	u->stop_waits_tags = false;
	qs_uloop_timer_cancel(u->loop, &u->stop_timer);
	ublk_release_cdev(u);
	ret = ublk_async(u, UBLK_CMD_DEL_DEV, UBLK_U_CMD_DEL_DEV, 0, ublk_deleted, u);
	if (ret < 0) {
		fprintf(stderr, "qlcshaped: ublk DEL_DEV %d: %s (retried at exit)\n", u->dev_id,
			strerror(-ret));
		u->user_cb(u->user_arg, u->stop_res);
	}
}

static void ublk_stop_timeout(struct qs_utimer *t)
{
	struct qs_ublk *u = (struct qs_ublk *)((char *)t - offsetof(struct qs_ublk, stop_timer));

	/* Not expected: the kernel aborts every fetch at STOP_DEV. Delete at exit. */
	fprintf(stderr, "qlcshaped: ublk: %u io commands still pending 5 s after STOP_DEV; "
		"the device is deleted at exit instead\n", u->live_tags);
	u->stop_waits_tags = false;
	u->user_cb(u->user_arg, u->stop_res);
}

static void ublk_stopped(void *arg, int res)
{
	struct qs_ublk *u = arg;

	u->stop_res = res;
	if (res < 0) {
		u->user_cb(u->user_arg, res);
		return;
	}
	/*
	 * Delete the device now rather than at exit, so that a kill during the
	 * drain and close that follow leaves nothing behind: the next start
	 * then creates a fresh device. DEL_DEV waits for /dev/ublkcN to be
	 * released, which needs every fetch command back: STOP_DEV has aborted
	 * them, their CQEs may still be on their way.
	 */
	if (!u->live_tags) {
		ublk_stop_release(u);
		return;
	}
	u->stop_waits_tags = true;
	u->stop_timer.fire = ublk_stop_timeout;
	qs_uloop_timer_set(u->loop, &u->stop_timer, (uint64_t)(ublk_now_s() * 1e9) +
			   5000000000ull);
}

int qs_ublk_stop(struct qs_ublk *u, qs_ublk_cb cb, void *arg)
{
	u->user_cb = cb;
	u->user_arg = arg;
	return ublk_async(u, UBLK_CMD_STOP_DEV, UBLK_U_CMD_STOP_DEV, 0, ublk_stopped, u);
}

void qs_ublk_destroy(struct qs_ublk *u)
{
	if (!u)
		return;
	if (u->stop_waits_tags)
		qs_uloop_timer_cancel(u->loop, &u->stop_timer);
	/* DEL_DEV waits until /dev/ublkcN is released: unmap and close it first. */
	ublk_release_cdev(u);
	if (u->queues) {
		for (uint32_t q = 0; q < u->conf.queues; q++)
			free(u->queues[q].tags);
		free(u->queues);
	}
	if (u->added) {
		struct ublksrv_ctrl_cmd cmd;
		int ret;

		ublk_cmd_init(u, &cmd);
		ret = ublk_ctrl(u, UBLK_CMD_DEL_DEV, UBLK_U_CMD_DEL_DEV, &cmd);
		if (ret < 0)
			fprintf(stderr, "qlcshaped: ublk DEL_DEV %d: %s\n", u->dev_id,
				strerror(-ret));
	}
	if (u->bufs)
		munmap(u->bufs, u->bufs_len);
	if (u->ctrl_ready)
		io_uring_queue_exit(&u->ctrl);
	if (u->ctrl_fd >= 0)
		close(u->ctrl_fd);
	pthread_mutex_destroy(&u->ctrl_lock);
	free(u);
}

int qs_ublk_dev_id(const struct qs_ublk *u)
{
	return u->dev_id;
}

uint32_t qs_ublk_inflight(const struct qs_ublk *u)
{
	return u->inflight;
}

void qs_ublk_get_stats(const struct qs_ublk *u, struct qs_ublk_stats *s)
{
	*s = u->stats;
}

uint64_t qs_ublk_features(const struct qs_ublk *u, bool *ioctl_encode)
{
	if (ioctl_encode)
		*ioctl_encode = u->ioctl_encode;
	return u->flags;
}
