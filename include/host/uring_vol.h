/* SPDX-License-Identifier: MIT */
/*
 * qs_uvol: a struct qs_vol over an O_DIRECT block device or regular file,
 * driven through a qs_uloop (io_uring).
 *
 *  - read / write: IORING_OP_READV / WRITEV; a QS_WRITE_FUA write carries
 *    RWF_DSYNC (the block layer turns it into a FUA write, or write + flush
 *    on devices without FUA; on a file it is a range fdatasync).
 *  - flush: IORING_OP_FSYNC with IORING_FSYNC_DATASYNC.
 *  - discard (must read back as zeroes): IORING_OP_FALLOCATE with
 *    PUNCH_HOLE|KEEP_SIZE. On a block device the kernel maps that to
 *    write-zeroes with unmap (blkdev_fallocate -> blkdev_issue_zeroout with
 *    BLKDEV_ZERO_NOFALLBACK), i.e. what BLKZEROOUT does, but asynchronously
 *    in an io_uring worker instead of blocking the event loop thread. When
 *    the device or file system refuses it (EOPNOTSUPP), the volume switches
 *    for good to ZERO_RANGE|KEEP_SIZE, which writes zeroes if it must.
 *
 * Completions are reaped by the loop's owner (qs_uloop_run / qs_uloop_reap)
 * and never run inside the submitting call. Short transfers are continued
 * until done; an error completes the request with -errno. Requests outside
 * the volume or not 4096-aligned complete (later) with -EINVAL.
 */
#ifndef QS_HOST_URING_VOL_H
#define QS_HOST_URING_VOL_H

#include <stddef.h>
#include <stdint.h>

#include "host/uloop.h"
#include "qlcshape/vol.h"

#define QS_UVOL_BUFFERED_OK 0x1u /* files on fs without O_DIRECT: buffered */
#define QS_UVOL_CREATE 0x2u	 /* create a missing regular file of size */
#define QS_UVOL_EXCL 0x4u	 /* claim a block device exclusively (O_EXCL) */

struct qs_uvol {
	struct qs_vol vol;     /* ops, ctx (this), size, QS_VOL_* flags */
	struct qs_uloop *loop; /* not owned */
	int fd;
	int excl_fd;	       /* QS_UVOL_EXCL claim of a block device; -1 */
	int is_blkdev;
	int direct;	       /* opened with O_DIRECT */
	int discard_mode;      /* fallocate mode in use for discard */
	uint64_t inflight;     /* requests not yet completed */
};

/*
 * Open path (block device or regular file) for I/O through loop. size: for
 * QS_UVOL_CREATE, the size of a file to create or extend; otherwise 0, and
 * the volume's size is the device's or file's (rounded down to 4096).
 * Volatile cache flag: a block device's queue/write_cache, always for files.
 * QS_UVOL_EXCL: a block device is also opened O_EXCL and held so until
 * close, so the kernel refuses it while it is mounted or claimed by another
 * holder (another qlcshaped, md, dm, a mount), and refuses those while we
 * hold it; -EBUSY then. Regular files are not claimed.
 * On error returns -errno and writes a message naming path to err. The
 * caller owns *out and closes it with qs_uvol_close() once no request is in
 * flight; loop must outlive it.
 */
int qs_uvol_open(struct qs_uvol **out, struct qs_uloop *loop, const char *path,
		 unsigned flags, uint64_t size, char *err, size_t errlen);
void qs_uvol_close(struct qs_uvol *v);

/* The volume ops table (for tests and for wrapping volumes). */
extern const struct qs_vol_ops qs_uvol_ops;

#endif
