/* SPDX-License-Identifier: MIT */
/*
 * ublk_min: the smallest correct ublk server, the measurement floor of
 * issue 32 (docs/DAEMON.md, "The ublk floor").
 *
 *   ublk_min --queues N --depth D --size BYTES
 *
 * A RAM disk of BYTES (a malloc'd buffer): reads copy out of it, writes
 * copy into it, flushes complete at once. One thread per ublk hardware
 * queue, each with its own io_uring, issues that queue's FETCH_REQ and
 * COMMIT_AND_FETCH_REQ; the main thread does the control commands and waits
 * for SIGTERM or SIGINT, then STOP_DEV and DEL_DEV. Nothing else: no
 * registered files or buffers, no CPU pinning, no zero copy, so it costs
 * what any ublk daemon with the copy path costs at least. Linux 6.1 (legacy
 * opcodes) to current (ioctl-encoded ones, chosen by GET_FEATURES as
 * daemon/ublk.c does). Prints "ublk_min: /dev/ublkbN ready" once the device
 * serves, and each queue's request counts at exit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np, strsignal */
#endif
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The UAPI newer than Debian 12's header (the Makefile passes -Idaemon). */
#include "ublk_compat.h"

/* 512 KiB per request, as qlcshaped's default ublk.max_io. */
#define UM_MAX_IO (512u * 1024)
#define UM_MAX_QUEUES 64

struct um_queue {
	int id;
	pthread_t thread;
	struct io_uring ring;
	bool ring_ok;
	const struct ublksrv_io_desc *descs; /* the kernel's, read-only */
	size_t descs_len;
	char *bufs; /* depth buffers of UM_MAX_IO, one per tag */
	int live;   /* tags whose fetch the kernel has not aborted */
	int err;    /* setup result, then the first io_uring failure */
	unsigned long long reads, writes, flushes, others;
};

static struct {
	unsigned queues, depth;
	unsigned long long size;
	char *data;
	int ctrl_fd, cdev_fd, dev_id;
	bool ioctl_encode;
	struct io_uring ctrl;
	unsigned started;	/* queue threads running */
	unsigned set_up;	/* of which past setup, failed or not */
	pthread_mutex_t lock;	/* set_up */
	pthread_cond_t cond;
	struct um_queue q[UM_MAX_QUEUES];
} um = {
	.ctrl_fd = -1,
	.cdev_fd = -1,
	.dev_id = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static int um_del_dev(void);

/* One control command on the SQE128 ring (its 32 bytes sit in the SQE's tail). */
static int um_ctrl(unsigned legacy_op, unsigned ioctl_op, struct ublksrv_ctrl_cmd *cmd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&um.ctrl);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, um.ctrl_fd, NULL, 0, 0);
	sqe->cmd_op = um.ioctl_encode ? ioctl_op : legacy_op;
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), cmd, sizeof(*cmd));
	ret = io_uring_submit_and_wait(&um.ctrl, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(&um.ctrl, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&um.ctrl, cqe);
	return ret;
}

static struct ublksrv_ctrl_cmd um_cmd(void *addr, size_t len)
{
	struct ublksrv_ctrl_cmd cmd = {
		.dev_id = (uint32_t)um.dev_id,
		.queue_id = (uint16_t)-1, /* not a queue command */
		.len = (uint16_t)len,
		.addr = (uint64_t)(uintptr_t)addr,
	};

	return cmd;
}

/* 6.5+ answers GET_FEATURES (ioctl-encoded); 6.1 fails it: legacy opcodes. */
static void um_probe(void)
{
	uint64_t feat = 0;
	struct ublksrv_ctrl_cmd cmd = um_cmd(&feat, sizeof(feat));

	um.ioctl_encode = true;
	if (um_ctrl(UBLK_U_CMD_GET_FEATURES, UBLK_U_CMD_GET_FEATURES, &cmd) < 0)
		um.ioctl_encode = false;
}

static int um_add_dev(void)
{
	struct ublksrv_ctrl_dev_info info = {
		.nr_hw_queues = (uint16_t)um.queues,
		.queue_depth = (uint16_t)um.depth,
		.max_io_buf_bytes = UM_MAX_IO,
		.dev_id = (uint32_t)-1, /* the kernel picks */
		.ublksrv_pid = getpid(),
		.flags = um.ioctl_encode ? UBLK_F_CMD_IOCTL_ENCODE : 0,
	};
	struct ublksrv_ctrl_cmd cmd = um_cmd(&info, sizeof(info));
	int ret = um_ctrl(UBLK_CMD_ADD_DEV, UBLK_U_CMD_ADD_DEV, &cmd);

	if (ret < 0) {
		fprintf(stderr, "ublk_min: ADD_DEV (%u queues, depth %u): %s\n", um.queues,
			um.depth, strerror(-ret));
		return ret;
	}
	um.dev_id = (int)info.dev_id;
	/* The kernel caps the queues at the CPU count, and may shrink the buffer. */
	if (info.nr_hw_queues != um.queues || info.max_io_buf_bytes != UM_MAX_IO) {
		fprintf(stderr, "ublk_min: device %d got %u queues of %u-byte requests for the %u "
			"of %u bytes asked: ask for at most %u queues (the CPU count)\n", um.dev_id,
			info.nr_hw_queues, info.max_io_buf_bytes, um.queues, UM_MAX_IO,
			info.nr_hw_queues);
		um_del_dev();
		return -EINVAL;
	}
	return 0;
}

/* devtmpfs or udev may take a moment to create /dev/ublkcN. */
static int um_open_cdev(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	char path[64];

	snprintf(path, sizeof(path), "/dev/ublkc%d", um.dev_id);
	for (int i = 0; i < 500; i++) {
		um.cdev_fd = open(path, O_RDWR | O_CLOEXEC);
		if (um.cdev_fd >= 0)
			return 0;
		if (errno != ENOENT && errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "ublk_min: %s: %s\n", path, strerror(errno));
	return -errno;
}

/* Volatile cache: the block layer then sends flushes, which a real disk gets. */
static int um_set_params(void)
{
	struct ublk_params p = {
		.len = sizeof(p),
		.types = UBLK_PARAM_TYPE_BASIC,
		.basic = {
			.attrs = UBLK_ATTR_VOLATILE_CACHE,
			.logical_bs_shift = 9,
			.physical_bs_shift = 12,
			.io_opt_shift = 12,
			.io_min_shift = 12,
			.max_sectors = UM_MAX_IO >> 9,
			.dev_sectors = um.size >> 9,
		},
	};
	struct ublksrv_ctrl_cmd cmd = um_cmd(&p, sizeof(p));
	int ret = um_ctrl(UBLK_CMD_SET_PARAMS, UBLK_U_CMD_SET_PARAMS, &cmd);

	if (ret < 0)
		fprintf(stderr, "ublk_min: SET_PARAMS on device %d: %s\n", um.dev_id,
			strerror(-ret));
	return ret < 0 ? ret : 0;
}

/* Queue FETCH_REQ (first) or COMMIT_AND_FETCH_REQ with result for a tag. */
static void um_queue_cmd(struct um_queue *q, unsigned tag, bool commit, int32_t result)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct ublksrv_io_cmd cmd = {
		.q_id = (uint16_t)q->id,
		.tag = (uint16_t)tag,
		.result = result,
		.addr = (uint64_t)(uintptr_t)(q->bufs + (size_t)tag * UM_MAX_IO),
	};

	if (!sqe) { /* not expected: one SQE per tag, and the ring has depth */
		io_uring_submit(&q->ring);
		sqe = io_uring_get_sqe(&q->ring);
	}
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, um.cdev_fd, NULL, 0, 0);
	if (commit)
		sqe->cmd_op = um.ioctl_encode ? UBLK_U_IO_COMMIT_AND_FETCH_REQ :
						UBLK_IO_COMMIT_AND_FETCH_REQ;
	else
		sqe->cmd_op = um.ioctl_encode ? UBLK_U_IO_FETCH_REQ : UBLK_IO_FETCH_REQ;
	/* 16 bytes: they fit a 64-byte SQE's tail. */
	memcpy((char *)sqe + offsetof(struct io_uring_sqe, cmd), &cmd, sizeof(cmd));
	io_uring_sqe_set_data64(sqe, tag);
}

/* Serve one request from RAM: the byte count, 0 for a flush, or -errno. */
static int32_t um_serve(struct um_queue *q, unsigned tag)
{
	const struct ublksrv_io_desc *iod = &q->descs[tag];
	unsigned long long off = iod->start_sector << 9;
	unsigned len = iod->nr_sectors << 9;
	char *buf = q->bufs + (size_t)tag * UM_MAX_IO;

	switch (ublksrv_get_op(iod)) {
	case UBLK_IO_OP_READ:
	case UBLK_IO_OP_WRITE:
		if (len > UM_MAX_IO || off > um.size || len > um.size - off)
			return -EINVAL;
		if (ublksrv_get_op(iod) == UBLK_IO_OP_READ) {
			q->reads++;
			memcpy(buf, um.data + off, len);
		} else {
			q->writes++;
			memcpy(um.data + off, buf, len);
		}
		return (int32_t)len;
	case UBLK_IO_OP_FLUSH:
		q->flushes++;
		return 0;
	}
	q->others++;
	return -EOPNOTSUPP;
}

/* One CQE: a request to serve, or a fetch the kernel aborted (stop). */
static void um_cqe(struct um_queue *q, const struct io_uring_cqe *cqe)
{
	unsigned tag = (unsigned)cqe->user_data;

	if (cqe->res == UBLK_IO_RES_OK) {
		um_queue_cmd(q, tag, true, um_serve(q, tag));
		return;
	}
	if (cqe->res != UBLK_IO_RES_ABORT)
		fprintf(stderr, "ublk_min: device %d queue %d tag %u: io command failed: %s\n",
			um.dev_id, q->id, tag, strerror(-cqe->res));
	q->live--;
}

static int um_queue_setup(struct um_queue *q)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	/* Each queue's descriptors start at a multiple of the largest area. */
	size_t stride = (UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc) + page - 1) &
			~(page - 1);
	void *m;
	int ret;

	ret = io_uring_queue_init(um.depth, &q->ring, 0);
	if (ret < 0)
		return ret;
	q->ring_ok = true;
	q->descs_len = (um.depth * sizeof(struct ublksrv_io_desc) + page - 1) & ~(page - 1);
	m = mmap(NULL, q->descs_len, PROT_READ, MAP_SHARED | MAP_POPULATE, um.cdev_fd,
		 (off_t)(UBLKSRV_CMD_BUF_OFFSET + (size_t)q->id * stride));
	if (m == MAP_FAILED)
		return -errno;
	q->descs = m;
	m = mmap(NULL, (size_t)um.depth * UM_MAX_IO, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	q->bufs = m;
	for (unsigned t = 0; t < um.depth; t++)
		um_queue_cmd(q, t, false, 0);
	q->live = (int)um.depth;
	ret = io_uring_submit(&q->ring);
	return ret < 0 ? ret : 0;
}

/* Serve until the kernel has aborted every fetch (STOP_DEV), or io_uring fails. */
static void um_queue_loop(struct um_queue *q)
{
	struct io_uring_cqe *cqe;
	unsigned head, n;
	int ret;

	while (q->live > 0) {
		ret = io_uring_submit_and_wait(&q->ring, 1);
		if (ret < 0 && ret != -EINTR) {
			q->err = ret;
			fprintf(stderr, "ublk_min: device %d queue %d: io_uring: %s; stopping\n",
				um.dev_id, q->id, strerror(-ret));
			kill(getpid(), SIGTERM); /* the main thread stops the device */
			return;
		}
		n = 0;
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			um_cqe(q, cqe);
			n++;
		}
		io_uring_cq_advance(&q->ring, n);
	}
}

static void *um_queue_thread(void *arg)
{
	struct um_queue *q = arg;

	q->err = um_queue_setup(q);
	if (q->err)
		fprintf(stderr, "ublk_min: device %d queue %d: setup: %s\n", um.dev_id, q->id,
			strerror(-q->err));
	pthread_mutex_lock(&um.lock);
	um.set_up++;
	pthread_cond_signal(&um.cond);
	pthread_mutex_unlock(&um.lock);
	if (!q->err)
		um_queue_loop(q);
	if (q->descs)
		munmap((void *)q->descs, q->descs_len);
	if (q->bufs)
		munmap(q->bufs, (size_t)um.depth * UM_MAX_IO);
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	return NULL;
}

/*
 * Start the queue threads; 0 once every one has its fetches in the kernel
 * (START_DEV would wait for ever for a queue that failed).
 */
static int um_start_queues(void)
{
	int ret = 0;

	for (unsigned i = 0; i < um.queues && !ret; i++) {
		um.q[i].id = (int)i;
		ret = -pthread_create(&um.q[i].thread, NULL, um_queue_thread, &um.q[i]);
		if (ret)
			fprintf(stderr, "ublk_min: device %d queue %u: no thread: %s\n", um.dev_id, i,
				strerror(-ret));
		else
			um.started++;
	}
	pthread_mutex_lock(&um.lock);
	while (um.set_up < um.started)
		pthread_cond_wait(&um.cond, &um.lock);
	pthread_mutex_unlock(&um.lock);
	for (unsigned i = 0; i < um.started; i++)
		if (um.q[i].err)
			ret = um.q[i].err;
	return ret;
}

/* START_DEV waits until every tag is fetched, then adds /dev/ublkbN. */
static int um_start_dev(void)
{
	struct ublksrv_ctrl_cmd cmd = um_cmd(NULL, 0);
	int ret;

	cmd.data[0] = (uint64_t)getpid();
	ret = um_ctrl(UBLK_CMD_START_DEV, UBLK_U_CMD_START_DEV, &cmd);
	if (ret < 0)
		fprintf(stderr, "ublk_min: START_DEV on device %d: %s\n", um.dev_id, strerror(-ret));
	return ret < 0 ? ret : 0;
}

/*
 * STOP_DEV: the kernel removes /dev/ublkbN (flushing through the queues,
 * which still serve) and aborts every fetch, so each queue thread ends.
 * Returns -ETIMEDOUT if one has not within 5 s: DEL_DEV would then wait
 * for ever for /dev/ublkcN, which the pending commands hold.
 */
static int um_stop_dev(void)
{
	struct ublksrv_ctrl_cmd cmd = um_cmd(NULL, 0);
	struct timespec until;
	int ret = um_ctrl(UBLK_CMD_STOP_DEV, UBLK_U_CMD_STOP_DEV, &cmd);

	if (ret < 0)
		fprintf(stderr, "ublk_min: STOP_DEV on device %d: %s\n", um.dev_id, strerror(-ret));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	for (unsigned i = 0; i < um.started; i++)
		if (pthread_timedjoin_np(um.q[i].thread, NULL, &until)) {
			fprintf(stderr, "ublk_min: device %d queue %u: fetches not aborted 5 s after "
				"STOP_DEV; exiting without DEL_DEV (the device stays, stopped: "
				"remove it with a ublk tool, or reboot)\n", um.dev_id, i);
			return -ETIMEDOUT;
		}
	return ret < 0 ? ret : 0;
}

/* DEL_DEV waits for /dev/ublkcN to be released: close it first. */
static int um_del_dev(void)
{
	struct ublksrv_ctrl_cmd cmd = um_cmd(NULL, 0);
	int ret;

	if (um.cdev_fd >= 0)
		close(um.cdev_fd);
	um.cdev_fd = -1;
	ret = um_ctrl(UBLK_CMD_DEL_DEV, UBLK_U_CMD_DEL_DEV, &cmd);
	if (ret < 0)
		fprintf(stderr, "ublk_min: DEL_DEV on device %d: %s\n", um.dev_id, strerror(-ret));
	return ret < 0 ? ret : 0;
}

static void um_report(void)
{
	for (unsigned i = 0; i < um.queues; i++)
		printf("ublk_min: queue %u: %llu reads, %llu writes, %llu flushes, %llu other\n", i,
		       um.q[i].reads, um.q[i].writes, um.q[i].flushes, um.q[i].others);
}

static void um_usage(void)
{
	fprintf(stderr, "usage: ublk_min --queues N --depth D --size BYTES\n"
		"  N 1 to %d, D 1 to %d, BYTES a multiple of 4096 (a RAM disk that big)\n",
		UM_MAX_QUEUES, UBLK_MAX_QUEUE_DEPTH);
	exit(2);
}

static void um_args(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long long v = strtoull(argv[i + 1], NULL, 0);

		if (!strcmp(argv[i], "--queues"))
			um.queues = (unsigned)v;
		else if (!strcmp(argv[i], "--depth"))
			um.depth = (unsigned)v;
		else if (!strcmp(argv[i], "--size"))
			um.size = v;
		else
			um_usage();
	}
	if (argc % 2 == 0 || !um.queues || um.queues > UM_MAX_QUEUES || !um.depth ||
	    um.depth > UBLK_MAX_QUEUE_DEPTH || !um.size || um.size % 4096)
		um_usage();
}

/* The control device and its ring, the RAM disk (touched now, not while measured). */
static int um_init(void)
{
	int ret;

	um.data = malloc(um.size);
	if (!um.data) {
		fprintf(stderr, "ublk_min: no memory for a %llu-byte RAM disk\n", um.size);
		return -ENOMEM;
	}
	memset(um.data, 0, um.size);
	um.ctrl_fd = open("/dev/ublk-control", O_RDWR | O_CLOEXEC);
	if (um.ctrl_fd < 0) {
		ret = -errno;
		fprintf(stderr, "ublk_min: /dev/ublk-control: %s (load ublk_drv)\n", strerror(-ret));
		return ret;
	}
	ret = io_uring_queue_init(4, &um.ctrl, IORING_SETUP_SQE128);
	if (ret < 0)
		fprintf(stderr, "ublk_min: control ring: %s\n", strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	sigset_t sigs;
	int sig, ret;

	um_args(argc, argv);
	/* Blocked in every thread; the main thread takes them with sigwait. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (um_init())
		return 1;
	um_probe();
	if (um_add_dev())
		return 1;
	if (um_open_cdev() || um_set_params()) {
		um_del_dev();
		return 1;
	}
	if (um_start_queues() || um_start_dev()) {
		/* Aborts the fetches in flight; the queue threads then end. */
		if (um_stop_dev() != -ETIMEDOUT)
			um_del_dev();
		return 1;
	}
	printf("ublk_min: /dev/ublkb%d ready: %u queues of depth %u, %llu bytes, %s opcodes\n",
	       um.dev_id, um.queues, um.depth, um.size, um.ioctl_encode ? "ioctl" : "legacy");
	fflush(stdout);
	sigwait(&sigs, &sig);
	ret = um_stop_dev();
	if (ret == -ETIMEDOUT)
		return 1;
	if (um_del_dev() || ret)
		return 1;
	um_report();
	printf("ublk_min: device %d deleted (%s)\n", um.dev_id, strsignal(sig));
	for (unsigned i = 0; i < um.queues; i++)
		if (um.q[i].err)
			return 1;
	return 0;
}
