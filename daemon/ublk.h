/* SPDX-License-Identifier: MIT */
/*
 * qs_ublk: the ublk frontend. Creates /dev/ublkbN and serves its requests
 * from a qs_backend, all queues on the one thread that runs the qs_uloop.
 *
 * Why one thread for every queue: the engine is single-threaded (one
 * instance, every call and callback on one thread) and a block may arrive on
 * any hardware queue, so requests from all queues must meet on the engine's
 * thread anyway. Queue threads would only add a hand-off (a lock or a ring
 * per queue) on every request and every completion. With one thread the
 * FETCH/COMMIT commands of all queues, the volumes' I/O and the engine share
 * one io_uring and one io_uring_enter per batch. The cost is one core for
 * the data path; sharding engines by IU range is the way out if that ever
 * limits, and it does not at QLC write rates.
 *
 * The kernel requires that each queue's commands come from one task (its
 * "ubq_daemon"); one task for all queues satisfies that.
 *
 * Kernel versions: the control commands are probed with GET_FEATURES
 * (ioctl-encoded, Linux 6.5+). If it fails (6.1 answers an ioctl-encoded
 * opcode with ENODEV), the legacy opcodes are used for control and io
 * commands alike; otherwise the ioctl-encoded ones, and UBLK_F_CMD_IOCTL_ENCODE
 * is requested.
 *
 * User recovery (conf.user_recovery with a fixed dev_id): the device is
 * created with UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE. If the
 * daemon dies, the kernel keeps /dev/ublkbN and quiesces it: requests the
 * dead daemon had fetched but not committed are requeued (REISSUE) and,
 * with everything submitted meanwhile, wait in the block layer. A new
 * daemon finding the device (GET_DEV_INFO) checks it matches, sends
 * START_USER_RECOVERY, fetches every tag and sends END_USER_RECOVERY
 * instead of START_DEV; the requeued requests are then served again. A
 * reissued write is simply written again (same data, same place), and a
 * write the dead daemon had completed is already in the engine's log.
 *
 * A device left by a dead daemon (any fixed dev_id): create looks for it
 * first. One it can re-attach (user recovery on both sides, not stopped,
 * same geometry) it re-attaches; any other it deletes and creates afresh,
 * logging which and why. One whose recorded owner is a running qlcshaped,
 * or whose /dev/ublkcN a running process holds, it refuses (-EBUSY). It
 * waits up to 60 s for a dead daemon's device to be released (longer than
 * the kernel's 30 s request timeout, see UBLK_TAKEOVER_WAIT_S in ublk.c).
 *
 * Life cycle (every call on the loop thread unless said otherwise):
 *   qs_ublk_create  ADD_DEV, open /dev/ublkcN, SET_PARAMS, map descriptors,
 *                   prepare FETCH_REQ for every tag of every queue (or, when
 *                   recovering, START_USER_RECOVERY instead of ADD_DEV and
 *                   SET_PARAMS)
 *   qs_ublk_start   START_DEV (or END_USER_RECOVERY; data[0] = pid) on a
 *                   helper thread, because it returns only after the kernel
 *                   has read the partition table through the queues this
 *                   thread must keep serving; then the device's request
 *                   timeout is shortened (queue/io_timeout, from a detached
 *                   thread: the store freezes the queue)
 *   qs_ublk_stop    STOP_DEV on a helper thread, same reason (del_gendisk
 *                   flushes through the queues); the kernel then aborts the
 *                   fetch commands; once they are all back, unmap, close
 *                   /dev/ublkcN and DEL_DEV (helper thread), so that nothing
 *                   is left for a kill during what the caller does next
 *                   (the engine's drain and close)
 *   qs_ublk_destroy unmap, close /dev/ublkcN, DEL_DEV if the stop did not
 *                   (which waits for the close)
 */
#ifndef QS_UBLK_H
#define QS_UBLK_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "host/uloop.h"

struct qs_ublk_conf {
	uint32_t queues;	/* hardware queues */
	uint32_t depth;		/* tags per queue */
	uint32_t max_io_bytes;	/* per-tag buffer; max_sectors = this / 512 */
	int32_t dev_id;		/* -1: the kernel picks */
	uint32_t iu_bytes;	/* physical block, io_min, io_opt, discard granularity */
	bool user_recovery;	/* request UBLK_F_USER_RECOVERY */
};

struct qs_ublk_stats {
	uint64_t reads, writes, flushes, discards, write_zeroes, errors;
	uint64_t read_bytes, write_bytes;
};

struct qs_ublk;

typedef void (*qs_ublk_cb)(void *arg, int result);

/*
 * Set up the device (not yet visible as /dev/ublkbN), or, with a fixed
 * dev_id, take over or replace the one a dead daemon left (see above; this
 * may block for up to 60 s while the kernel finishes with a dead daemon, so
 * call it once the backend is ready: the log recovered). bk must outlive the
 * frontend. Returns 0 or -errno with a message in err naming the device and
 * what to do. loop must be the one the caller runs, sized for queues * depth
 * commands plus backend I/O.
 */
int qs_ublk_create(struct qs_ublk **out, struct qs_uloop *loop, const struct qs_ublk_conf *conf,
		   struct qs_backend *bk, char *err, size_t errlen);

/*
 * Start the device: cb(arg, 0 or -errno) runs on the loop thread once
 * START_DEV returned, /dev/ublkbN then exists. The loop must keep running.
 * Returns 0 (cb will run) or -errno (it will not: another start or stop is
 * in progress, or no eventfd could be had).
 */
int qs_ublk_start(struct qs_ublk *u, qs_ublk_cb cb, void *arg);

/*
 * Stop and delete the device: cb(arg, STOP_DEV's result) runs on the loop
 * thread once STOP_DEV returned and, if it succeeded, the device is deleted
 * (if a fetch command is still pending 5 s after STOP_DEV, or DEL_DEV fails,
 * cb runs anyway and qs_ublk_destroy deletes it). The loop must keep running
 * until then (requests keep arriving while the kernel tears the disk down).
 * Returns 0 (cb will run) or -errno (it will not). Afterwards call
 * qs_ublk_destroy().
 */
int qs_ublk_stop(struct qs_ublk *u, qs_ublk_cb cb, void *arg);

/*
 * Release everything and delete the device. Only after stop (or a failed
 * start), and after the loop's ring is torn down (qs_uloop_exit): fetch
 * commands still pending there hold /dev/ublkcN open, and DEL_DEV waits for
 * its release.
 */
void qs_ublk_destroy(struct qs_ublk *u);

int qs_ublk_dev_id(const struct qs_ublk *u);
/* Requests handed to the backend and not yet committed back. */
uint32_t qs_ublk_inflight(const struct qs_ublk *u);
void qs_ublk_get_stats(const struct qs_ublk *u, struct qs_ublk_stats *s);
/* Whether create re-attached to a device a dead daemon left (user recovery). */
bool qs_ublk_recovered(const struct qs_ublk *u);
/* Negotiated kernel feature flags (UBLK_F_*), and whether opcodes are ioctl-encoded. */
uint64_t qs_ublk_features(const struct qs_ublk *u, bool *ioctl_encode);

#endif
