/* SPDX-License-Identifier: MIT */
/* qs_engb: qs_backend over struct qs_engine (see header). */
#include "backend_engine.h"

static int engb_read(void *ctx, uint64_t off, uint64_t len, void *buf, qs_backend_cb cb, void *arg)
{
	return qs_engine_read(ctx, off, len, buf, cb, arg);
}

static int engb_write(void *ctx, uint64_t off, uint64_t len, const void *buf, unsigned flags,
		      qs_backend_cb cb, void *arg)
{
	return qs_engine_write(ctx, off, len, buf, flags, cb, arg);
}

static int engb_flush(void *ctx, qs_backend_cb cb, void *arg)
{
	return qs_engine_flush(ctx, cb, arg);
}

static int engb_discard(void *ctx, uint64_t off, uint64_t len, qs_backend_cb cb, void *arg)
{
	return qs_engine_discard(ctx, off, len, cb, arg);
}

static const struct qs_backend_ops engb_ops = {
	.read = engb_read,
	.write = engb_write,
	.flush = engb_flush,
	.discard = engb_discard,
};

void qs_engb_init(struct qs_backend *bk, struct qs_engine *e)
{
	bk->ops = &engb_ops;
	bk->ctx = e;
	bk->size = qs_engine_size(e);
	/* The engine's writes are durable only after a flush (or FUA). */
	bk->volatile_cache = 1;
	bk->name = "engine";
}
