/* SPDX-License-Identifier: MIT */
/*
 * qlcshape volume ops: how the engine talks to a device.
 *
 * The engine never issues a syscall. Every device it uses (the fast-tier log
 * device and the QLC device) is a struct qs_vol: a table of asynchronous
 * operations plus a context pointer, in the spirit of OCF's ocf_volume_ops.
 * The daemon implements them with io_uring on O_DIRECT descriptors, the bench
 * with device models on a virtual clock, the tests with RAM, power-loss and
 * fault-injecting volumes.
 *
 * Contract for every op:
 *  - Offsets and lengths are in bytes and multiples of 4096.
 *  - Buffers belong to the caller (the engine) and stay valid and untouched
 *    until the completion callback runs.
 *  - The op must not invoke the callback before it returns: completion is
 *    always reported later, from the host's event loop. This keeps the
 *    engine free of re-entrancy through its own submissions.
 *  - The callback runs exactly once, with 0 on success or a negative errno.
 *  - Ops are only called from the thread that drives the engine.
 */
#ifndef QLCSHAPE_VOL_H
#define QLCSHAPE_VOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define QS_BLOCK_SIZE 4096u
#define QS_BLOCK_SHIFT 12

typedef void (*qs_io_cb)(void *arg, int result);

/* Write flags. */
#define QS_WRITE_FUA 0x1u /* durable when the callback reports success */

struct qs_vol_ops {
	/* Read iov[0..iovcnt) from byte offset off. */
	void (*read)(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		     qs_io_cb cb, void *arg);
	/* Write iov[0..iovcnt) at byte offset off; flags is QS_WRITE_*. */
	void (*write)(void *ctx, uint64_t off, const struct iovec *iov,
		      int iovcnt, unsigned flags, qs_io_cb cb, void *arg);
	/* Make every write that completed before this call durable. */
	void (*flush)(void *ctx, qs_io_cb cb, void *arg);
	/*
	 * Discard [off, off+len): afterwards the range reads back as zeroes
	 * (the daemon implements it with BLKZEROOUT / write-zeroes with unmap,
	 * not with a plain TRIM whose read-back is undefined). Durable like a
	 * write: after a flush, or at once when the volume has no volatile
	 * cache.
	 */
	void (*discard)(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb,
			void *arg);
};

/* Volume properties. */
#define QS_VOL_VOLATILE_CACHE 0x1u /* completed writes need a flush */

struct qs_vol {
	const struct qs_vol_ops *ops;
	void *ctx;
	uint64_t size;	/* bytes, a multiple of 4096 */
	unsigned flags; /* QS_VOL_* */
};

#endif
