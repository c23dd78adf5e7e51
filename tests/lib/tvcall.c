/* SPDX-License-Identifier: MIT */
/* Synchronous calls on a loop-driven volume for the tests; see tvcall.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "host/env.h"

#include "tvcall.h"

static int tvcall_order;

static void tvcall_fail(const char *what)
{
	fprintf(stderr, "tvcall: %s\n", what);
	abort();
}

void tvcall_done(void *arg, int res)
{
	struct tvcall *c = arg;

	c->calls++;
	c->res = res;
	c->at = qs_henv_now_ns();
	c->order = ++tvcall_order;
	if (c->in_submit)
		c->early = 1;
}

void tvcall_wait(struct qs_uloop *l, struct tvcall *c, int n)
{
	/* bounded: 1000 turns of at most 100 ms; a hang fails the test */
	for (int i = 0; i < 1000; i++) {
		int left = 0;

		for (int k = 0; k < n; k++)
			left += c[k].calls == 0;
		if (!left)
			break;
		if (qs_uloop_run(l, 100000000ull) < 0)
			tvcall_fail("the loop failed");
	}
	for (int k = 0; k < n; k++) {
		if (c[k].calls != 1)
			tvcall_fail(c[k].calls ? "a callback ran twice" : "a request never completed");
		if (c[k].early)
			tvcall_fail("a callback ran inside the submitting call");
	}
}

int tvcall_write(struct qs_uloop *l, struct qs_vol *v, uint64_t off, void *buf, size_t len,
		 unsigned flags)
{
	struct iovec iov = {buf, len};
	struct tvcall c = {.in_submit = 1};

	v->ops->write(v->ctx, off, &iov, 1, flags, tvcall_done, &c);
	c.in_submit = 0;
	tvcall_wait(l, &c, 1);
	return c.res;
}

int tvcall_read(struct qs_uloop *l, struct qs_vol *v, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = {buf, len};
	struct tvcall c = {.in_submit = 1};

	v->ops->read(v->ctx, off, &iov, 1, tvcall_done, &c);
	c.in_submit = 0;
	tvcall_wait(l, &c, 1);
	return c.res;
}

int tvcall_discard(struct qs_uloop *l, struct qs_vol *v, uint64_t off, uint64_t len)
{
	struct tvcall c = {.in_submit = 1};

	v->ops->discard(v->ctx, off, len, tvcall_done, &c);
	c.in_submit = 0;
	tvcall_wait(l, &c, 1);
	return c.res;
}

int tvcall_flush(struct qs_uloop *l, struct qs_vol *v)
{
	struct tvcall c = {.in_submit = 1};

	v->ops->flush(v->ctx, tvcall_done, &c);
	c.in_submit = 0;
	tvcall_wait(l, &c, 1);
	return c.res;
}

void *tvcall_buf(size_t len, int byte)
{
	void *p = aligned_alloc(4096, len);

	if (!p)
		tvcall_fail("out of memory for a buffer");
	memset(p, byte, len);
	return p;
}
