/* SPDX-License-Identifier: MIT */
/*
 * Synchronous calls on an asynchronous struct qs_vol driven by a qs_uloop,
 * for the tests of the host's volumes (io_uring, emulated): each call
 * submits one request, runs the loop until its callback ran, and checks the
 * volume rules every such volume keeps: the callback runs once, and never
 * inside the submitting call. A broken rule or a hang aborts the test.
 */
#ifndef QS_TVCALL_H
#define QS_TVCALL_H

#include <stddef.h>
#include <stdint.h>

#include "qlcshape/vol.h"

#include "host/uloop.h"

/* One request's completion, as the callback saw it. */
struct tvcall {
	int calls;
	int res;
	int in_submit; /* set while the test is inside the submitting call */
	int early;     /* the callback ran while in_submit was set */
	uint64_t at;   /* CLOCK_MONOTONIC when it ran */
	int order;     /* completion order among every tvcall, from 1 */
};

/* The callback to give a volume, with a struct tvcall as its argument. */
void tvcall_done(void *arg, int res);

/* Run l until each of c[0..n) has had its callback, then check the rules. */
void tvcall_wait(struct qs_uloop *l, struct tvcall *c, int n);

/* One request each, waited for; its result. */
int tvcall_write(struct qs_uloop *l, struct qs_vol *v, uint64_t off, void *buf, size_t len,
		 unsigned flags);
int tvcall_read(struct qs_uloop *l, struct qs_vol *v, uint64_t off, void *buf, size_t len);
int tvcall_discard(struct qs_uloop *l, struct qs_vol *v, uint64_t off, uint64_t len);
int tvcall_flush(struct qs_uloop *l, struct qs_vol *v);

/* A 4 KiB-aligned buffer of len bytes set to byte; the caller frees it. */
void *tvcall_buf(size_t len, int byte);

#endif
