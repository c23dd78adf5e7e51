/* SPDX-License-Identifier: MIT */
/* qs_uvol on regular files in /tmp: data, flush, discard, errors, async-ness. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/uring_vol.h"
#include "ttmp.h"
#include "tvcall.h"

#define VOL_SIZE (1024u * 1024u)

struct fix {
	struct qs_uloop loop;
	struct qs_uvol *v;
	char path[64];
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	ttmp_file(f->path, sizeof(f->path), "uvol", NULL, NULL);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	assert_int_equal(qs_uvol_open(&f->v, &f->loop, f->path,
				      QS_UVOL_CREATE | QS_UVOL_BUFFERED_OK, VOL_SIZE, err,
				      sizeof(err)),
			 0);
	assert_int_equal(f->v->vol.size, VOL_SIZE);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	assert_int_equal(f->v->inflight, 0);
	qs_uvol_close(f->v);
	qs_uloop_exit(&f->loop);
	unlink(f->path);
	free(f);
	return 0;
}

static void test_write_read_back(void **state)
{
	struct fix *f = *state;
	char *w = tvcall_buf(16384, 0), *r = tvcall_buf(16384, 0);

	for (size_t i = 0; i < 16384; i++)
		w[i] = (char)(i * 7 + 3);
	assert_int_equal(tvcall_write(&f->loop, &f->v->vol, 8192, w, 16384, 0), 0);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, 8192, r, 16384), 0);
	assert_memory_equal(w, r, 16384);
	/* A FUA write lands and reads back too. */
	memset(w, 0x5a, 4096);
	assert_int_equal(tvcall_write(&f->loop, &f->v->vol, VOL_SIZE - 4096, w, 4096, QS_WRITE_FUA), 0);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, VOL_SIZE - 4096, r, 4096), 0);
	assert_memory_equal(w, r, 4096);
	free(w);
	free(r);
}

/* Several iovecs (more than the inline copy holds), each its own buffer. */
static void test_vectored(void **state)
{
	struct fix *f = *state;
	struct iovec iov[6], riov[6];
	struct tvcall d = {0};

	for (int i = 0; i < 6; i++) {
		iov[i].iov_base = tvcall_buf(4096, 'a' + i);
		iov[i].iov_len = 4096;
		riov[i].iov_base = tvcall_buf(4096, 0);
		riov[i].iov_len = 4096;
	}
	f->v->vol.ops->write(f->v->vol.ctx, 65536, iov, 6, 0, tvcall_done, &d);
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, 0);
	d.calls = 0;
	/* Read back as one iovec array in a different split. */
	f->v->vol.ops->read(f->v->vol.ctx, 65536, riov, 6, tvcall_done, &d);
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, 0);
	for (int i = 0; i < 6; i++) {
		assert_memory_equal(iov[i].iov_base, riov[i].iov_base, 4096);
		free(iov[i].iov_base);
		free(riov[i].iov_base);
	}
}

static void test_flush(void **state)
{
	struct fix *f = *state;
	char *w = tvcall_buf(4096, 0x11);
	struct tvcall d = {.in_submit = 1};

	assert_int_equal(tvcall_write(&f->loop, &f->v->vol, 0, w, 4096, 0), 0);
	f->v->vol.ops->flush(f->v->vol.ctx, tvcall_done, &d);
	d.in_submit = 0;
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, 0);
	free(w);
}

static void test_discard_zeroes(void **state)
{
	struct fix *f = *state;
	char *w = tvcall_buf(65536, 0xee), *r = tvcall_buf(65536, 0x77), *z = tvcall_buf(65536, 0);
	struct tvcall d = {.in_submit = 1};

	assert_int_equal(tvcall_write(&f->loop, &f->v->vol, 131072, w, 65536, 0), 0);
	/* Discard the middle 32 KiB; the edges keep their data. */
	f->v->vol.ops->discard(f->v->vol.ctx, 131072 + 16384, 32768, tvcall_done, &d);
	d.in_submit = 0;
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, 0);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, 131072, r, 65536), 0);
	assert_memory_equal(r, w, 16384);
	assert_memory_equal(r + 16384, z, 32768);
	assert_memory_equal(r + 49152, w + 49152, 16384);
	free(w);
	free(r);
	free(z);
}

static void test_errors(void **state)
{
	struct fix *f = *state;
	char *b = tvcall_buf(8192, 0);
	struct tvcall d = {.in_submit = 1};

	/* Past the end, straddling the end, misaligned: -EINVAL, later. */
	assert_int_equal(tvcall_write(&f->loop, &f->v->vol, VOL_SIZE, b, 4096, 0), -EINVAL);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, VOL_SIZE - 4096, b, 8192), -EINVAL);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, 512, b, 4096), -EINVAL);
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, 0, b, 1000), -EINVAL);
	f->v->vol.ops->discard(f->v->vol.ctx, VOL_SIZE - 4096, 8192, tvcall_done, &d);
	d.in_submit = 0;
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, -EINVAL);
	free(b);
}

/* Many requests in flight at once, more than the ring has SQEs. */
static void test_many_inflight(void **state)
{
	struct fix *f = *state;
	enum { N = 200 };
	struct tvcall d[N];
	char *w = tvcall_buf(N * 4096, 0), *r = tvcall_buf(N * 4096, 0);
	struct iovec iov[N];

	memset(d, 0, sizeof(d));
	for (int i = 0; i < N; i++) {
		memset(w + i * 4096, i, 4096);
		iov[i].iov_base = w + i * 4096;
		iov[i].iov_len = 4096;
		f->v->vol.ops->write(f->v->vol.ctx, (uint64_t)i * 4096, &iov[i], 1, 0, tvcall_done,
				     &d[i]);
	}
	for (int n = 0, guard = 0; guard < 10000; guard++) {
		n = 0;
		for (int i = 0; i < N; i++)
			n += d[i].calls;
		if (n == N)
			break;
		assert_true(qs_uloop_run(&f->loop, 100000000ull) >= 0);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(d[i].calls, 1);
		assert_int_equal(d[i].res, 0);
	}
	assert_int_equal(tvcall_read(&f->loop, &f->v->vol, 0, r, N * 4096), 0);
	assert_memory_equal(w, r, N * 4096);
	free(w);
	free(r);
}

static void test_open_errors(void **state)
{
	struct qs_uloop loop;
	struct qs_uvol *v;
	char err[256];

	(void)state;
	assert_int_equal(qs_uloop_init(&loop, 8), 0);
	assert_int_equal(qs_uvol_open(&v, &loop, "/nonexistent/qs", 0, 0, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/qs"));
	assert_int_equal(qs_uvol_open(&v, &loop, "/tmp/qs_uvol_bad", QS_UVOL_CREATE, 1000, err,
				      sizeof(err)),
			 -EINVAL);
	assert_null(v);
	qs_uloop_exit(&loop);
}

/*
 * QS_UVOL_EXCL on a loop device over a file: a second claim is refused
 * with -EBUSY and an error naming the device, and the claim ends at close.
 * Skipped where no loop device can be set up (no root, no loop driver).
 */
static void test_exclusive_claim(void **state)
{
	char file[64], dev[64] = "", cmd[128], err[256];
	struct qs_uloop loop;
	struct qs_uvol *a, *b;
	FILE *p;

	(void)state;
	ttmp_file(file, sizeof(file), "uvol_loop", NULL, NULL);
	assert_int_equal(truncate(file, 4 << 20), 0);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p || !fgets(dev, sizeof(dev), p) || strncmp(dev, "/dev/loop", 9)) {
		if (p)
			pclose(p);
		unlink(file);
		skip();
	}
	pclose(p);
	dev[strcspn(dev, "\n")] = 0;
	assert_int_equal(qs_uloop_init(&loop, 8), 0);
	assert_int_equal(qs_uvol_open(&a, &loop, dev, QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL, 0, err,
				      sizeof(err)),
			 0);
	assert_true(a->is_blkdev);
	assert_int_equal(qs_uvol_open(&b, &loop, dev, QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL, 0, err,
				      sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, dev));
	assert_non_null(strstr(err, "exclusively"));
	/* Without the flag the device opens (as a reader such as blkid would). */
	assert_int_equal(qs_uvol_open(&b, &loop, dev, QS_UVOL_BUFFERED_OK, 0, err, sizeof(err)), 0);
	qs_uvol_close(b);
	qs_uvol_close(a);
	assert_int_equal(qs_uvol_open(&b, &loop, dev, QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL, 0, err,
				      sizeof(err)),
			 0);
	qs_uvol_close(b);
	qs_uloop_exit(&loop);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", dev);
	assert_int_equal(system(cmd), 0);
	unlink(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vectored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discard_zeroes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_inflight, setup, teardown),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_exclusive_claim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
