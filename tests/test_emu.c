/* SPDX-License-Identifier: MIT */
/*
 * qs_emu (the device model in real time) on a qs_uloop: data round trip in
 * RAM, in a file (also across a reopen) and without data; completion never
 * before the model's time (checked against a clone of the volume's model
 * taken just before each submission); ordering by model time; flush on a
 * drive with and without PLP; discard reads back zeroes; argument and open
 * errors; the profile lookup; close after the loop is gone. Timing is only
 * ever checked as "not earlier than".
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/emu_vol.h"
#include "host/env.h"
#include "ttmp.h"
#include "tprof.h"
#include "tvcall.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define IU (64 * KIB)
#define SIZE (8 * MIB)

/* A small QLC-like drive with slow dies, so model times are easy to see. */
static struct qs_profile slow_qlc(int plp)
{
	struct qs_profile p;

	tprof_small_qlc(&p, "test-slow-qlc");
	p.channels = 2;
	p.unit_ius = 1;
	p.superblocks = 16;
	p.gc_free_low = 2;
	p.t_read_ns = 20000000;	 /* 20 ms */
	p.t_prog_ns = 30000000;	 /* 30 ms */
	p.write_buffer_bytes = 1 * MIB;
	p.plp = plp;
	return p;
}

struct fix {
	struct qs_uloop loop;
	struct qs_profile prof;
	struct qs_emu *e;
	struct qs_vol *v;
};

static void fix_open(struct fix *f, int plp, enum qs_emu_backing b, const char *path)
{
	struct qs_emu_conf c = {
		.size = SIZE,
		.backing = b,
		.path = path,
		.precondition = QS_EMU_PRECOND_SEQ,
	};
	char err[512];

	f->prof = slow_qlc(plp);
	c.profile = &f->prof;
	assert_int_equal(qs_emu_open(&f->e, &f->loop, &c, err, sizeof(err)), 0);
	f->v = qs_emu_vol(f->e);
	assert_int_equal(f->v->size, SIZE);
}

static int setup_ram(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_RAM, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	if (f->e)
		assert_int_equal(qs_emu_inflight(f->e), 0);
	qs_emu_close(f->e);
	qs_uloop_exit(&f->loop);
	free(f);
	return 0;
}

static void fill_pattern(unsigned char *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 31 + seed + (i >> 12));
}

/* Vectored write, read back in another split, zeroes where never written. */
static void round_trip(struct fix *f)
{
	unsigned char *w = tvcall_buf(5 * 4096, 0), *r = tvcall_buf(IU, 0x77), *z = tvcall_buf(IU, 0);
	struct iovec wiov[3] = {{w, 8192}, {w + 8192, 4096}, {w + 12288, 8192}};
	struct iovec riov[2] = {{r, 4096}, {r + 4096, 4 * 4096}};
	struct tvcall d[2] = {{.in_submit = 1}, {.in_submit = 1}};
	uint64_t off = 3 * IU + 4096;

	fill_pattern(w, 5 * 4096, 7);
	f->v->ops->write(f->v->ctx, off, wiov, 3, 0, tvcall_done, &d[0]);
	d[0].in_submit = 0;
	tvcall_wait(&f->loop, &d[0], 1);
	assert_int_equal(d[0].res, 0);
	f->v->ops->read(f->v->ctx, off, riov, 2, tvcall_done, &d[1]);
	d[1].in_submit = 0;
	tvcall_wait(&f->loop, &d[1], 1);
	assert_int_equal(d[1].res, 0);
	assert_memory_equal(w, r, 5 * 4096);
	/* Never written: zeroes (the preconditioning stores no data). */
	assert_int_equal(tvcall_read(&f->loop, f->v, SIZE - IU, r, IU), 0);
	assert_memory_equal(r, z, IU);
	/* The last block of the device works. */
	memset(w, 0xa5, 4096);
	assert_int_equal(tvcall_write(&f->loop, f->v, SIZE - 4096, w, 4096, QS_WRITE_FUA), 0);
	assert_int_equal(tvcall_read(&f->loop, f->v, SIZE - 4096, r, 4096), 0);
	assert_memory_equal(w, r, 4096);
	free(w);
	free(r);
	free(z);
}

static void test_ram_round_trip(void **state)
{
	struct fix *f = *state;
	struct qs_emu_stats s;

	round_trip(f);
	qs_emu_get_stats(f->e, &s);
	assert_int_equal(s.writes, 2);
	assert_int_equal(s.reads, 3);
	assert_int_equal(s.write_bytes, 6 * 4096);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.completions, 5);
	/* The drive saw two partial IU writes (the fill is not counted). */
	assert_int_equal(s.model.host_writes, 2);
	assert_true(s.model.partial_ius >= 2);
	assert_int_equal(s.model.host_reads, 3);
	/* A fresh maximum of lateness; the counts run on. */
	assert_true(s.late_ns_max > 0);
	qs_emu_reset_late_max(f->e);
	qs_emu_get_stats(f->e, &s);
	assert_int_equal(s.late_ns_max, 0);
	assert_int_equal(s.completions, 5);
}

/*
 * Submit one op and check that it completes no earlier than the model
 * says: a clone of the volume's model, asked at a time taken before the
 * submission, gives a lower bound (the model's resources only get busier
 * with a later submission time).
 */
enum op { OP_R, OP_W, OP_F, OP_D };

static uint64_t bound_before(struct fix *f, enum op op, uint64_t off, uint64_t len, struct qs_model **clone)
{
	static const int mop[] = {QS_OP_READ, QS_OP_WRITE, QS_OP_FLUSH, QS_OP_DISCARD};
	uint64_t t0 = qs_henv_now_ns();

	*clone = qs_model_clone(qs_emu_model(f->e));
	assert_non_null(*clone);
	return qs_emu_mono_time(f->e, qs_model_submit(*clone, qs_emu_model_time(f->e, t0),
							 mop[op], off, len));
}

static void submit(struct fix *f, enum op op, uint64_t off, void *buf, uint64_t len,
		   struct tvcall *d)
{
	struct iovec iov = {buf, len};

	d->in_submit = 1;
	switch (op) {
	case OP_R: f->v->ops->read(f->v->ctx, off, &iov, 1, tvcall_done, d); break;
	case OP_W: f->v->ops->write(f->v->ctx, off, &iov, 1, 0, tvcall_done, d); break;
	case OP_F: f->v->ops->flush(f->v->ctx, tvcall_done, d); break;
	case OP_D: f->v->ops->discard(f->v->ctx, off, len, tvcall_done, d); break;
	}
	d->in_submit = 0;
}

static void test_not_before_model_time(void **state)
{
	struct fix *f = *state;
	unsigned char *b = tvcall_buf(IU, 0x3c);
	static const struct {
		enum op op;
		uint64_t off, len;
	} seq[] = {
		{OP_R, 0, 4096},	  /* a die read: >= 20 ms */
		{OP_W, 5 * IU + 8192, 4096}, /* partial IU: read-modify-write */
		{OP_W, 9 * IU, IU},	  /* whole IU */
		{OP_R, 5 * IU, IU},
		{OP_D, 12 * IU, 2 * IU},
		{OP_F, 0, 0},
	};
	uint64_t t_submit = 0;

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct qs_model *clone;
		struct tvcall d = {0};
		uint64_t bound = bound_before(f, seq[i].op, seq[i].off, seq[i].len, &clone);

		t_submit = qs_henv_now_ns();
		submit(f, seq[i].op, seq[i].off, b, seq[i].len, &d);
		tvcall_wait(&f->loop, &d, 1);
		assert_int_equal(d.res, 0);
		if (d.at < bound)
			fail_msg("op %zu completed %llu ns before the model's time", i,
				 (unsigned long long)(bound - d.at));
		if (i == 0)
			assert_true(d.at - t_submit >= 20000000); /* t_read */
		qs_model_free(clone);
	}
	free(b);
}

/* Several in flight: delivered in model-time order, not submission order. */
static void test_model_time_order(void **state)
{
	struct fix *f = *state;
	unsigned char *b = tvcall_buf(2 * IU, 0);
	struct tvcall d[3] = {{0}};

	/* A slow read (die), then a discard (controller only), then a flush
	 * (PLP: controller only): the read completes last. */
	submit(f, OP_R, 20 * IU, b, IU, &d[0]);
	submit(f, OP_D, 40 * IU, b, IU, &d[1]);
	submit(f, OP_F, 0, b, 0, &d[2]);
	assert_int_equal(qs_emu_inflight(f->e), 3);
	tvcall_wait(&f->loop, d, 3);
	assert_true(d[0].order > d[1].order);
	assert_true(d[0].order > d[2].order);
	assert_true(d[0].at - d[1].at >= 15000000);
	assert_int_equal(qs_emu_inflight(f->e), 0);
	free(b);
}

/* Without PLP the flush waits for the buffered data to be programmed. */
static void test_flush_without_plp(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	unsigned char *b = tvcall_buf(IU, 0x42);
	struct qs_model *clone;
	struct tvcall d = {0};
	uint64_t bound, t0;

	(void)state;
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 0, QS_EMU_RAM, NULL);
	assert_true(f->v->flags & QS_VOL_VOLATILE_CACHE);
	t0 = qs_henv_now_ns();
	assert_int_equal(tvcall_write(&f->loop, f->v, 2 * IU, b, IU, 0), 0);
	bound = bound_before(f, OP_F, 0, 0, &clone);
	submit(f, OP_F, 0, b, 0, &d);
	tvcall_wait(&f->loop, &d, 1);
	assert_int_equal(d.res, 0);
	assert_true(d.at >= bound);
	/* The IU was programmed (30 ms from when its data was in) before the
	 * flush completed, whenever the write itself completed. */
	assert_true(d.at - t0 >= 30000000);
	qs_model_free(clone);
	/* FUA on such a drive costs the flush too. */
	t0 = qs_henv_now_ns();
	assert_int_equal(tvcall_write(&f->loop, f->v, 3 * IU, b, IU, QS_WRITE_FUA), 0);
	assert_true(qs_henv_now_ns() - t0 >= 30000000);
	free(b);
	teardown((void **)&f);
}

static void test_flush_plp(void **state)
{
	struct fix *f = *state;

	assert_false(f->v->flags & QS_VOL_VOLATILE_CACHE);
	assert_int_equal(tvcall_flush(&f->loop, f->v), 0);
}

static void test_discard_zeroes(void **state)
{
	struct fix *f = *state;
	unsigned char *w = tvcall_buf(3 * IU, 0), *r = tvcall_buf(3 * IU, 0x77), *z = tvcall_buf(3 * IU, 0);
	uint64_t off = 30 * IU;

	fill_pattern(w, 3 * IU, 3);
	assert_int_equal(tvcall_write(&f->loop, f->v, off, w, 3 * IU, 0), 0);
	/* The middle IU and one block inside the last. */
	assert_int_equal(tvcall_discard(&f->loop, f->v, off + IU, IU), 0);
	assert_int_equal(tvcall_discard(&f->loop, f->v, off + 2 * IU + 8192, 4096), 0);
	assert_int_equal(tvcall_read(&f->loop, f->v, off, r, 3 * IU), 0);
	assert_memory_equal(r, w, IU);
	assert_memory_equal(r + IU, z, IU);
	assert_memory_equal(r + 2 * IU, w + 2 * IU, 8192);
	assert_memory_equal(r + 2 * IU + 8192, z, 4096);
	assert_memory_equal(r + 2 * IU + 12288, w + 2 * IU + 12288, IU - 12288);
	free(w);
	free(r);
	free(z);
}

static void test_errors(void **state)
{
	struct fix *f = *state;
	unsigned char *b = tvcall_buf(8192, 0);
	struct iovec iov = {b, 4096}, odd = {b, 1000};
	struct tvcall d[7] = {{0}};
	struct qs_emu_stats s;

	for (int i = 0; i < 7; i++)
		d[i].in_submit = 1;
	f->v->ops->read(f->v->ctx, 100, &iov, 1, tvcall_done, &d[0]);	      /* misaligned */
	f->v->ops->write(f->v->ctx, SIZE, &iov, 1, 0, tvcall_done, &d[1]);     /* past the end */
	f->v->ops->write(f->v->ctx, 0, &odd, 1, 0, tvcall_done, &d[2]);	      /* odd length */
	f->v->ops->read(f->v->ctx, 0, &iov, 0, tvcall_done, &d[3]);	      /* no iovec */
	f->v->ops->discard(f->v->ctx, SIZE - 4096, 8192, tvcall_done, &d[4]); /* past the end */
	f->v->ops->discard(f->v->ctx, 0, 0, tvcall_done, &d[5]);		      /* empty */
	f->v->ops->write(f->v->ctx, SIZE - 4096, &iov, 1, 0, tvcall_done, &d[6]); /* fine */
	for (int i = 0; i < 7; i++)
		d[i].in_submit = 0;
	tvcall_wait(&f->loop, d, 7);
	for (int i = 0; i < 6; i++)
		assert_int_equal(d[i].res, -EINVAL);
	assert_int_equal(d[6].res, 0);
	qs_emu_get_stats(f->e, &s);
	assert_int_equal(s.errors, 6);
	assert_int_equal(s.writes, 1);
	free(b);
}

static void expect_open_error(const struct qs_emu_conf *c, int ret, const char *needle)
{
	struct qs_uloop loop;
	struct qs_emu *e = (struct qs_emu *)1;
	char err[512] = "";

	assert_int_equal(qs_uloop_init(&loop, 8), 0);
	assert_int_equal(qs_emu_open(&e, &loop, c, err, sizeof(err)), ret);
	assert_null(e);
	if (!strstr(err, needle))
		fail_msg("message '%s' lacks '%s'", err, needle);
	qs_uloop_exit(&loop);
}

static void test_open_errors(void **state)
{
	struct qs_profile p = slow_qlc(1);
	struct qs_emu_conf c = {.profile = &p, .size = SIZE};

	(void)state;
	c.size = 0;
	expect_open_error(&c, -EINVAL, "size 0 bytes: expected a positive multiple of 4096");
	c.size = SIZE + 512;
	expect_open_error(&c, -EINVAL, "multiple of 4096");
	c.size = 512 * MIB;
	expect_open_error(&c, -EINVAL, "larger than the test-slow-qlc drive");
	c.size = SIZE;
	c.model_bytes = SIZE / 2;
	expect_open_error(&c, -EINVAL, "model size 4194304 bytes: expected 8388608");
	c.model_bytes = 0;
	c.backing = QS_EMU_FILE;
	expect_open_error(&c, -EINVAL, "without a path");
	c.path = "/nonexistent-dir/qlc.img";
	expect_open_error(&c, -ENOENT, "/nonexistent-dir/qlc.img");
	c.backing = QS_EMU_RAM;
	c.profile = NULL;
	expect_open_error(&c, -EINVAL, "no profile");
}

/* A file keeps the data across a close and reopen; flush reaches it. */
static void test_file_backing(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	char path[64];
	unsigned char *w = tvcall_buf(2 * IU, 0), *r = tvcall_buf(2 * IU, 0), *z = tvcall_buf(IU, 0);

	(void)state;
	ttmp_file(path, sizeof(path), "emu", NULL, NULL);
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_FILE, path);
	/* The page cache needs fdatasync: the volume says so. */
	assert_true(f->v->flags & QS_VOL_VOLATILE_CACHE);
	round_trip(f);
	fill_pattern(w, 2 * IU, 11);
	assert_int_equal(tvcall_write(&f->loop, f->v, 50 * IU, w, 2 * IU, 0), 0);
	assert_int_equal(tvcall_flush(&f->loop, f->v), 0);
	assert_int_equal(tvcall_discard(&f->loop, f->v, 51 * IU, IU), 0);
	qs_emu_close(f->e);
	fix_open(f, 1, QS_EMU_FILE, path);
	assert_int_equal(tvcall_read(&f->loop, f->v, 50 * IU, r, 2 * IU), 0);
	assert_memory_equal(r, w, IU);
	assert_memory_equal(r + IU, z, IU);
	unlink(path);
	free(w);
	free(r);
	free(z);
	teardown((void **)&f);
}

static void test_no_data(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	unsigned char *w = tvcall_buf(IU, 0x99), *r = tvcall_buf(IU, 0x77), *z = tvcall_buf(IU, 0);

	(void)state;
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_NONE, NULL);
	assert_int_equal(tvcall_write(&f->loop, f->v, 0, w, IU, 0), 0);
	assert_int_equal(tvcall_read(&f->loop, f->v, 0, r, IU), 0);
	assert_memory_equal(r, z, IU);
	free(w);
	free(r);
	free(z);
	teardown((void **)&f);
}

/* Requests still pending when the loop is torn down are dropped by close. */
static void test_close_after_loop_exit(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	unsigned char *b = tvcall_buf(IU, 0);
	struct tvcall d[2] = {{0}};

	(void)state;
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_RAM, NULL);
	submit(f, OP_R, 0, b, IU, &d[0]);
	submit(f, OP_W, IU, b, 4096, &d[1]);
	assert_int_equal(qs_emu_inflight(f->e), 2);
	qs_uloop_exit(&f->loop);
	qs_emu_close(f->e);
	assert_int_equal(d[0].calls + d[1].calls, 0);
	free(b);
	free(f);
}

static void test_preconditioning(void **state)
{
	struct qs_profile p = slow_qlc(1);
	struct qs_emu_conf c = {.profile = &p, .size = SIZE, .backing = QS_EMU_NONE};
	struct qs_uloop loop;
	struct qs_emu *e;
	char err[256];

	(void)state;
	assert_int_equal(qs_uloop_init(&loop, 8), 0);
	c.precondition = QS_EMU_PRECOND_NONE;
	assert_int_equal(qs_emu_open(&e, &loop, &c, err, sizeof(err)), 0);
	assert_int_equal(qs_emu_fill_ns(e), 0);
	/* The device is the model's whole capacity by default. */
	assert_int_equal(qs_model_capacity(qs_emu_model(e)), SIZE);
	qs_emu_close(e);
	c.precondition = QS_EMU_PRECOND_RANDOM;
	c.model_bytes = 4 * SIZE;
	assert_int_equal(qs_emu_open(&e, &loop, &c, err, sizeof(err)), 0);
	assert_true(qs_emu_fill_ns(e) > 0);
	assert_int_equal(qs_model_capacity(qs_emu_model(e)), 4 * SIZE);
	assert_int_equal(qs_emu_vol(e)->size, SIZE);
	/* The model's clock starts at the end of its fill. */
	assert_int_equal(qs_emu_model_time(e, qs_emu_mono_time(e, 12345)), 12345);
	assert_true(qs_emu_model_time(e, qs_henv_now_ns()) >= qs_emu_fill_ns(e));
	assert_true(qs_emu_model_time(e, qs_henv_now_ns()) < qs_emu_fill_ns(e) + 5000000000ull);
	qs_emu_close(e);
	qs_uloop_exit(&loop);
}

static void test_profile_find(void **state)
{
	char dir[64], file[128], path[256], err[512];

	(void)state;
	ttmp_dir(dir, sizeof(dir), "emu_prof");
	snprintf(file, sizeof(file), "%s/x1.ini", dir);
	ttmp_write(file, "[drive]\n");
	setenv("QS_PROFILE_DIR", dir, 1);
	assert_int_equal(qs_profile_find("x1", path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, file);
	assert_int_equal(qs_profile_find("nope", path, sizeof(path), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nope.ini"));
	assert_non_null(strstr(err, dir));
	/* A path is taken as it is. */
	assert_int_equal(qs_profile_find(file, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, file);
	assert_int_equal(qs_profile_find("/nonexistent/p.ini", path, sizeof(path), err,
					     sizeof(err)), -ENOENT);
	unsetenv("QS_PROFILE_DIR");
	/* Without the variable: ./conf/profiles, then the installed directory. */
	assert_int_equal(qs_profile_find("nope", path, sizeof(path), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "conf/profiles/nope.ini"));
	unlink(file);
	rmdir(dir);
}

struct tfire {
	struct qs_utimer t;
	int fired;
	uint64_t at;
};

static void on_fire(struct qs_utimer *t)
{
	struct tfire *f = (struct tfire *)t;

	f->fired++;
	f->at = qs_henv_now_ns();
}

/* The loop's timers: fire once, not before the deadline; cancel works. */
static void test_uloop_timer(void **state)
{
	struct qs_uloop loop;
	struct tfire a = {.t.fire = on_fire}, b = {.t.fire = on_fire};
	uint64_t t0 = qs_henv_now_ns();

	(void)state;
	assert_int_equal(qs_uloop_init(&loop, 8), 0);
	qs_uloop_timer_set(&loop, &a.t, t0 + 5000000);
	qs_uloop_timer_set(&loop, &b.t, t0 + 2000000);
	assert_int_equal(a.fired + b.fired, 0);
	qs_uloop_timer_cancel(&loop, &b.t);
	assert_false(b.t.armed);
	/* One wait without limit returns when a is due. */
	assert_int_equal(qs_uloop_run(&loop, UINT64_MAX), 1);
	assert_int_equal(a.fired, 1);
	assert_true(a.at >= t0 + 5000000);
	assert_false(a.t.armed);
	assert_int_equal(qs_uloop_run(&loop, 3000000), 0);
	assert_int_equal(a.fired, 1);
	assert_int_equal(b.fired, 0);
	qs_uloop_exit(&loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ram_round_trip, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_not_before_model_time, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_model_time_order, setup_ram, teardown),
		cmocka_unit_test(test_flush_without_plp),
		cmocka_unit_test_setup_teardown(test_flush_plp, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_discard_zeroes, setup_ram, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup_ram, teardown),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_file_backing),
		cmocka_unit_test(test_no_data),
		cmocka_unit_test(test_close_after_loop_exit),
		cmocka_unit_test(test_preconditioning),
		cmocka_unit_test(test_profile_find),
		cmocka_unit_test(test_uloop_timer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
