/* SPDX-License-Identifier: MIT */
/*
 * qs_backend: what the ublk frontend hands requests to.
 *
 * The shape is the engine's client API (qs_engine_read/write/flush/discard)
 * on purpose, so the production backend is a thin adapter over a struct
 * qs_engine and the frontend cannot tell it from the RAM test backend:
 *
 *  - off and len are bytes, multiples of 4096, inside size.
 *  - A call returns 0 and later runs cb(arg, 0 or -errno) exactly once, or
 *    returns -errno and never runs cb.
 *  - cb never runs inside the call that submitted the request: it runs from
 *    the host loop (qs_uloop_run) on the same thread, and may submit again.
 *  - Buffers belong to the caller and stay untouched until cb.
 *  - Every call comes from the thread running the loop (the engine is
 *    single-threaded).
 *  - discard: the range reads back as zeroes once cb reports success (the
 *    frontend maps both DISCARD and WRITE_ZEROES to it).
 */
#ifndef QS_BACKEND_H
#define QS_BACKEND_H

#include <stdint.h>

#include "qlcshape/vol.h" /* QS_WRITE_FUA */

typedef void (*qs_backend_cb)(void *arg, int result);

struct qs_backend_ops {
	int (*read)(void *ctx, uint64_t off, uint64_t len, void *buf, qs_backend_cb cb,
		    void *arg);
	int (*write)(void *ctx, uint64_t off, uint64_t len, const void *buf, unsigned flags,
		     qs_backend_cb cb, void *arg);
	int (*flush)(void *ctx, qs_backend_cb cb, void *arg);
	int (*discard)(void *ctx, uint64_t off, uint64_t len, qs_backend_cb cb, void *arg);
};

struct qs_backend {
	const struct qs_backend_ops *ops;
	void *ctx;
	uint64_t size;	    /* bytes the client sees, a multiple of 4096 */
	int volatile_cache; /* writes need a flush to be durable */
	const char *name;   /* for logs: "engine", "ram (test backend)" */
};

#endif
