/* SPDX-License-Identifier: MIT */
/* qs_uvol: io_uring volume over an O_DIRECT block device or file. */
#include "host/uring_vol.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

enum uvol_kind { UVOL_READ, UVOL_WRITE, UVOL_FLUSH, UVOL_DISCARD };

#define UVOL_INLINE_IOV 4
#define UVOL_PUNCH (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
#define UVOL_ZERO (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)

struct uvol_req {
	struct qs_uop op; /* first: the loop hands it back */
	struct qs_uvol *v;
	enum uvol_kind kind;
	unsigned flags;
	uint64_t off, len, done;
	struct iovec *iov; /* our copy: the caller's array may be on its stack */
	int iovcnt;
	int mode; /* discard: fallocate mode this attempt used */
	qs_io_cb cb;
	void *arg;
	struct iovec iov_inline[UVOL_INLINE_IOV];
};

static void uvol_finish(struct uvol_req *r, int res)
{
	qs_io_cb cb = r->cb;
	void *arg = r->arg;

	r->v->inflight--;
	if (r->iov != r->iov_inline)
		free(r->iov);
	free(r);
	cb(arg, res);
}

/* Drop the first n bytes of the request's iovec (after a short transfer). */
static void uvol_iov_advance(struct uvol_req *r, uint64_t n)
{
	while (n && r->iovcnt) {
		if (n >= r->iov->iov_len) {
			n -= r->iov->iov_len;
			r->iov++;
			r->iovcnt--;
		} else {
			r->iov->iov_base = (char *)r->iov->iov_base + n;
			r->iov->iov_len -= n;
			n = 0;
		}
	}
}

static void uvol_done(struct qs_uop *op, int res);

/* Prepare the SQE for r's next step, or park it until SQEs are free. */
static void uvol_issue(struct qs_uop *op, int unused)
{
	struct uvol_req *r = (struct uvol_req *)op;
	struct qs_uvol *v = r->v;
	struct io_uring_sqe *sqe = qs_uloop_sqe(v->loop);

	(void)unused;
	if (!sqe) {
		qs_uloop_wait_sqe(v->loop, op);
		return;
	}
	switch (r->kind) {
	case UVOL_READ:
		io_uring_prep_readv(sqe, v->fd, r->iov, (unsigned)r->iovcnt, r->off + r->done);
		break;
	case UVOL_WRITE:
		io_uring_prep_writev(sqe, v->fd, r->iov, (unsigned)r->iovcnt, r->off + r->done);
		if (r->flags & QS_WRITE_FUA)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case UVOL_FLUSH:
		io_uring_prep_fsync(sqe, v->fd, IORING_FSYNC_DATASYNC);
		break;
	case UVOL_DISCARD:
		r->mode = v->discard_mode;
		io_uring_prep_fallocate(sqe, v->fd, r->mode, (off_t)r->off, (off_t)r->len);
		break;
	}
	io_uring_sqe_set_data(sqe, op);
}

static void uvol_done(struct qs_uop *op, int res)
{
	struct uvol_req *r = (struct uvol_req *)op;
	struct qs_uvol *v = r->v;

	if (res < 0) {
		if (r->kind == UVOL_DISCARD && r->mode == UVOL_PUNCH &&
		    (res == -EOPNOTSUPP || res == -EINVAL)) {
			/* No unmapping write-zeroes here: zero the range instead. */
			v->discard_mode = UVOL_ZERO;
			uvol_issue(op, 0);
			return;
		}
		uvol_finish(r, res);
		return;
	}
	if (r->kind == UVOL_READ || r->kind == UVOL_WRITE) {
		if (res == 0) {
			/* The range was checked against the size: EOF is an error. */
			uvol_finish(r, -EIO);
			return;
		}
		r->done += (uint64_t)res;
		if (r->done < r->len) {
			uvol_iov_advance(r, (uint64_t)res);
			uvol_issue(op, 0);
			return;
		}
	}
	uvol_finish(r, 0);
}

static struct uvol_req *uvol_req_new(struct qs_uvol *v, enum uvol_kind kind, qs_io_cb cb,
				     void *arg)
{
	struct uvol_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->v = v;
	r->kind = kind;
	r->cb = cb;
	r->arg = arg;
	r->op.done = uvol_done;
	r->op.retry = uvol_issue;
	r->iov = r->iov_inline;
	v->inflight++;
	return r;
}

/*
 * The ops cannot fail synchronously: argument errors are delivered through
 * the loop like any completion, which needs the request. Without even that
 * small allocation there is no way to honour the contract (no inline
 * callback, exactly one callback), so the process stops loudly.
 */
static struct uvol_req *uvol_req_get(struct qs_uvol *v, enum uvol_kind kind, qs_io_cb cb,
				     void *arg)
{
	struct uvol_req *r = uvol_req_new(v, kind, cb, arg);

	if (!r) {
		fprintf(stderr, "qs_uvol: out of memory for a request\n");
		abort();
	}
	return r;
}

static int uvol_check_range(const struct qs_uvol *v, uint64_t off, uint64_t len)
{
	if ((off | len) & (QS_BLOCK_SIZE - 1))
		return -EINVAL;
	if (off > v->vol.size || len > v->vol.size - off)
		return -EINVAL;
	return 0;
}

static void uvol_rw(struct qs_uvol *v, enum uvol_kind kind, uint64_t off, const struct iovec *iov,
		    int iovcnt, unsigned flags, qs_io_cb cb, void *arg)
{
	struct uvol_req *r = uvol_req_get(v, kind, cb, arg);
	uint64_t len = 0;
	int err;

	r->off = off;
	r->flags = flags;
	if (iovcnt <= 0) {
		qs_uloop_defer(v->loop, &r->op, -EINVAL);
		return;
	}
	if (iovcnt > UVOL_INLINE_IOV) {
		r->iov = malloc(sizeof(*iov) * (size_t)iovcnt);
		if (!r->iov) {
			r->iov = r->iov_inline;
			qs_uloop_defer(v->loop, &r->op, -ENOMEM);
			return;
		}
	}
	memcpy(r->iov, iov, sizeof(*iov) * (size_t)iovcnt);
	r->iovcnt = iovcnt;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	r->len = len;
	err = uvol_check_range(v, off, len);
	if (!err && len == 0)
		err = -EINVAL;
	if (err) {
		qs_uloop_defer(v->loop, &r->op, err);
		return;
	}
	uvol_issue(&r->op, 0);
}

static void uvol_read(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt, qs_io_cb cb,
		      void *arg)
{
	uvol_rw(ctx, UVOL_READ, off, iov, iovcnt, 0, cb, arg);
}

static void uvol_write(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		       unsigned flags, qs_io_cb cb, void *arg)
{
	uvol_rw(ctx, UVOL_WRITE, off, iov, iovcnt, flags, cb, arg);
}

static void uvol_flush(void *ctx, qs_io_cb cb, void *arg)
{
	struct qs_uvol *v = ctx;

	uvol_issue(&uvol_req_get(v, UVOL_FLUSH, cb, arg)->op, 0);
}

static void uvol_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	struct qs_uvol *v = ctx;
	struct uvol_req *r = uvol_req_get(v, UVOL_DISCARD, cb, arg);
	int err = uvol_check_range(v, off, len);

	r->off = off;
	r->len = len;
	if (err || len == 0) {
		qs_uloop_defer(v->loop, &r->op, err ? err : -EINVAL);
		return;
	}
	uvol_issue(&r->op, 0);
}

const struct qs_vol_ops qs_uvol_ops = {
	.read = uvol_read,
	.write = uvol_write,
	.flush = uvol_flush,
	.discard = uvol_discard,
};

/*
 * Whether a block device caches writes volatilely: queue/write_cache says
 * "write back" or "write through". A partition's queue/ is its disk's.
 * Unknown counts as volatile: an unneeded flush is cheap, a missing one is not.
 */
static int uvol_blk_volatile(dev_t rdev)
{
	char path[128], buf[32];
	const char *fmt[] = {"/sys/dev/block/%u:%u/queue/write_cache",
			     "/sys/dev/block/%u:%u/../queue/write_cache"};

	for (size_t i = 0; i < 2; i++) {
		FILE *f;

		snprintf(path, sizeof(path), fmt[i], major(rdev), minor(rdev));
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		return strncmp(buf, "write through", 13) != 0;
	}
	return 1;
}

int qs_uvol_open(struct qs_uvol **out, struct qs_uloop *loop, const char *path, unsigned flags,
		 uint64_t size, char *err, size_t errlen)
{
	struct qs_uvol *v;
	struct stat st;
	int oflags = O_RDWR | O_CLOEXEC;
	int fd, ret;

	*out = NULL;
	if ((flags & QS_UVOL_CREATE) && (size == 0 || size % QS_BLOCK_SIZE)) {
		snprintf(err, errlen, "%s: size %llu is not a positive multiple of 4096", path,
			 (unsigned long long)size);
		return -EINVAL;
	}
	if (flags & QS_UVOL_CREATE)
		oflags |= O_CREAT;
	fd = open(path, oflags | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL && (flags & QS_UVOL_BUFFERED_OK))
		fd = open(path, oflags, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: stat: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	v->fd = fd;
	v->excl_fd = -1;
	v->loop = loop;
	v->direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
	v->discard_mode = UVOL_PUNCH;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes;

		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: BLKGETSIZE64: %s", path, strerror(errno));
			goto fail;
		}
		v->is_blkdev = 1;
		/*
		 * A second descriptor holds the claim: O_EXCL without O_CREAT
		 * means "exclusive" only for block devices, which is known only
		 * now that the path is open.
		 */
		if (flags & QS_UVOL_EXCL) {
			v->excl_fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
			if (v->excl_fd < 0) {
				ret = -errno;
				snprintf(err, errlen,
					 "%s: cannot claim the device exclusively: %s%s", path,
					 strerror(errno),
					 errno == EBUSY ? " (mounted, or held by another program "
							  "such as another qlcshaped, md or dm)" : "");
				goto fail;
			}
		}
		v->vol.size = bytes & ~(uint64_t)(QS_BLOCK_SIZE - 1);
		v->vol.flags = uvol_blk_volatile(st.st_rdev) ? QS_VOL_VOLATILE_CACHE : 0;
	} else if (S_ISREG(st.st_mode)) {
		if ((flags & QS_UVOL_CREATE) && (uint64_t)st.st_size < size &&
		    ftruncate(fd, (off_t)size) < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: cannot extend to %llu bytes: %s", path,
				 (unsigned long long)size, strerror(errno));
			goto fail;
		}
		if ((flags & QS_UVOL_CREATE) && (uint64_t)st.st_size < size)
			st.st_size = (off_t)size;
		v->vol.size = (uint64_t)st.st_size & ~(uint64_t)(QS_BLOCK_SIZE - 1);
		/* The page cache and the file system's metadata need fdatasync. */
		v->vol.flags = QS_VOL_VOLATILE_CACHE;
	} else {
		ret = -ENODEV;
		snprintf(err, errlen, "%s: neither a block device nor a regular file", path);
		goto fail;
	}
	if (v->vol.size == 0) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: size is below 4096 bytes", path);
		goto fail;
	}
	v->vol.ops = &qs_uvol_ops;
	v->vol.ctx = v;
	*out = v;
	return 0;
fail:
	if (v->excl_fd >= 0)
		close(v->excl_fd);
	close(fd);
	free(v);
	return ret;
}

void qs_uvol_close(struct qs_uvol *v)
{
	if (!v)
		return;
	if (v->excl_fd >= 0)
		close(v->excl_fd);
	close(v->fd);
	free(v);
}
