/* SPDX-License-Identifier: MIT */
/* qs_ramb: RAM test backend (see header). */
#include "backend_ram.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct qs_ramb {
	struct qs_uloop *loop;
	uint8_t *mem;
	uint64_t size;
	uint64_t inflight;
};

struct ramb_req {
	struct qs_uop op;
	struct qs_ramb *r;
	qs_backend_cb cb;
	void *arg;
};

static void ramb_done(struct qs_uop *op, int res)
{
	struct ramb_req *q = (struct ramb_req *)op;
	qs_backend_cb cb = q->cb;
	void *arg = q->arg;

	q->r->inflight--;
	free(q);
	cb(arg, res);
}

/* The copy is done at once; only the completion is deferred. */
static int ramb_complete_later(struct qs_ramb *r, qs_backend_cb cb, void *arg)
{
	struct ramb_req *q = malloc(sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->op.done = ramb_done;
	q->op.retry = NULL;
	q->r = r;
	q->cb = cb;
	q->arg = arg;
	r->inflight++;
	qs_uloop_defer(r->loop, &q->op, 0);
	return 0;
}

static int ramb_check(const struct qs_ramb *r, uint64_t off, uint64_t len)
{
	if ((off | len) % 4096 || !len || off > r->size || len > r->size - off)
		return -EINVAL;
	return 0;
}

static int ramb_read(void *ctx, uint64_t off, uint64_t len, void *buf, qs_backend_cb cb, void *arg)
{
	struct qs_ramb *r = ctx;
	int err = ramb_check(r, off, len);

	if (err)
		return err;
	memcpy(buf, r->mem + off, len);
	return ramb_complete_later(r, cb, arg);
}

static int ramb_write(void *ctx, uint64_t off, uint64_t len, const void *buf, unsigned flags,
		      qs_backend_cb cb, void *arg)
{
	struct qs_ramb *r = ctx;
	int err = ramb_check(r, off, len);

	(void)flags; /* RAM is as durable as it gets here */
	if (err)
		return err;
	memcpy(r->mem + off, buf, len);
	return ramb_complete_later(r, cb, arg);
}

static int ramb_flush(void *ctx, qs_backend_cb cb, void *arg)
{
	return ramb_complete_later(ctx, cb, arg);
}

static int ramb_discard(void *ctx, uint64_t off, uint64_t len, qs_backend_cb cb, void *arg)
{
	struct qs_ramb *r = ctx;
	int err = ramb_check(r, off, len);

	if (err)
		return err;
	/* Pages given back read as zeroes (private anonymous mapping). */
	if (madvise(r->mem + off, len, MADV_DONTNEED) != 0)
		memset(r->mem + off, 0, len);
	return ramb_complete_later(r, cb, arg);
}

static const struct qs_backend_ops ramb_ops = {
	.read = ramb_read,
	.write = ramb_write,
	.flush = ramb_flush,
	.discard = ramb_discard,
};

int qs_ramb_create(struct qs_ramb **out, struct qs_uloop *loop, uint64_t size,
		   struct qs_backend *bk)
{
	struct qs_ramb *r;

	if (!size || size % 4096)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->mem == MAP_FAILED) {
		free(r);
		return -ENOMEM;
	}
	r->loop = loop;
	r->size = size;
	bk->ops = &ramb_ops;
	bk->ctx = r;
	bk->size = size;
	bk->volatile_cache = 0;
	bk->name = "ram (test backend)";
	*out = r;
	return 0;
}

void qs_ramb_free(struct qs_ramb *r)
{
	if (!r)
		return;
	munmap(r->mem, r->size);
	free(r);
}
