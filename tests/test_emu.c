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

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define IU (64 * KIB)
#define SIZE (8 * MIB)

/* A small QLC-like drive with slow dies, so model times are easy to see. */
static struct qs_profile slow_qlc(int plp)
{
	struct qs_profile p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "test-slow-qlc");
	p.media = QS_MEDIA_NAND;
	p.capacity_bytes = 256 * MIB;
	p.iu_bytes = IU;
	p.op_pct = 10;
	p.channels = 2;
	p.dies_per_channel = 2;
	p.unit_ius = 1;
	p.superblocks = 16;
	p.gc_free_low = 2;
	p.t_read_ns = 20000000;	 /* 20 ms */
	p.t_prog_ns = 30000000;	 /* 30 ms */
	p.t_erase_ns = 5000000;
	p.block_units = 4;
	p.channel_mbps = 800;
	p.link_read_mbps = 7000;
	p.link_write_mbps = 7000;
	p.ctrl_units = 2;
	p.ctrl_ns = 2000;
	p.write_buffer_bytes = 1 * MIB;
	p.plp = plp;
	return p;
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct fix {
	struct qs_uloop loop;
	struct qs_profile prof;
	struct qs_emu *e;
	struct qs_vol *v;
};

struct done {
	int calls;
	int res;
	int in_submit; /* set while the test is inside the submitting call */
	int early;     /* the callback ran inside the submitting call */
	uint64_t at;   /* CLOCK_MONOTONIC when it ran */
	int order;     /* global completion order, from 1 */
};

static int g_order;

static void on_done(void *arg, int res)
{
	struct done *d = arg;

	d->calls++;
	d->res = res;
	d->at = mono();
	d->order = ++g_order;
	if (d->in_submit)
		d->early = 1;
}

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

/* Run the loop until every d[i] has had its callback (bounded). */
static void wait_all(struct fix *f, struct done *d, int n)
{
	for (int i = 0; i < 2000; i++) {
		int left = 0;

		for (int k = 0; k < n; k++)
			left += d[k].calls == 0;
		if (!left)
			break;
		assert_true(qs_uloop_run(&f->loop, 10000000ull) >= 0);
	}
	for (int k = 0; k < n; k++) {
		assert_int_equal(d[k].calls, 1);
		assert_int_equal(d[k].early, 0);
	}
}

static void *abuf(size_t len, int byte)
{
	void *p = aligned_alloc(4096, len);

	assert_non_null(p);
	memset(p, byte, len);
	return p;
}

static int do_write(struct fix *f, uint64_t off, void *buf, size_t len, unsigned flags)
{
	struct iovec iov = {buf, len};
	struct done d = {.in_submit = 1};

	f->v->ops->write(f->v->ctx, off, &iov, 1, flags, on_done, &d);
	d.in_submit = 0;
	wait_all(f, &d, 1);
	return d.res;
}

static int do_read(struct fix *f, uint64_t off, void *buf, size_t len)
{
	struct iovec iov = {buf, len};
	struct done d = {.in_submit = 1};

	f->v->ops->read(f->v->ctx, off, &iov, 1, on_done, &d);
	d.in_submit = 0;
	wait_all(f, &d, 1);
	return d.res;
}

static int do_discard(struct fix *f, uint64_t off, uint64_t len)
{
	struct done d = {.in_submit = 1};

	f->v->ops->discard(f->v->ctx, off, len, on_done, &d);
	d.in_submit = 0;
	wait_all(f, &d, 1);
	return d.res;
}

static int do_flush(struct fix *f)
{
	struct done d = {.in_submit = 1};

	f->v->ops->flush(f->v->ctx, on_done, &d);
	d.in_submit = 0;
	wait_all(f, &d, 1);
	return d.res;
}

static void fill_pattern(unsigned char *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(i * 31 + seed + (i >> 12));
}

/* Vectored write, read back in another split, zeroes where never written. */
static void round_trip(struct fix *f)
{
	unsigned char *w = abuf(5 * 4096, 0), *r = abuf(IU, 0x77), *z = abuf(IU, 0);
	struct iovec wiov[3] = {{w, 8192}, {w + 8192, 4096}, {w + 12288, 8192}};
	struct iovec riov[2] = {{r, 4096}, {r + 4096, 4 * 4096}};
	struct done d[2] = {{.in_submit = 1}, {.in_submit = 1}};
	uint64_t off = 3 * IU + 4096;

	fill_pattern(w, 5 * 4096, 7);
	f->v->ops->write(f->v->ctx, off, wiov, 3, 0, on_done, &d[0]);
	d[0].in_submit = 0;
	wait_all(f, &d[0], 1);
	assert_int_equal(d[0].res, 0);
	f->v->ops->read(f->v->ctx, off, riov, 2, on_done, &d[1]);
	d[1].in_submit = 0;
	wait_all(f, &d[1], 1);
	assert_int_equal(d[1].res, 0);
	assert_memory_equal(w, r, 5 * 4096);
	/* Never written: zeroes (the preconditioning stores no data). */
	assert_int_equal(do_read(f, SIZE - IU, r, IU), 0);
	assert_memory_equal(r, z, IU);
	/* The last block of the device works. */
	memset(w, 0xa5, 4096);
	assert_int_equal(do_write(f, SIZE - 4096, w, 4096, QS_WRITE_FUA), 0);
	assert_int_equal(do_read(f, SIZE - 4096, r, 4096), 0);
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
	uint64_t t0 = mono();

	*clone = qs_model_clone(qs_emu_model(f->e));
	assert_non_null(*clone);
	return qs_emu_mono_time(f->e, qs_model_submit(*clone, qs_emu_model_time(f->e, t0),
							 mop[op], off, len));
}

static void submit(struct fix *f, enum op op, uint64_t off, void *buf, uint64_t len,
		   struct done *d)
{
	struct iovec iov = {buf, len};

	d->in_submit = 1;
	switch (op) {
	case OP_R: f->v->ops->read(f->v->ctx, off, &iov, 1, on_done, d); break;
	case OP_W: f->v->ops->write(f->v->ctx, off, &iov, 1, 0, on_done, d); break;
	case OP_F: f->v->ops->flush(f->v->ctx, on_done, d); break;
	case OP_D: f->v->ops->discard(f->v->ctx, off, len, on_done, d); break;
	}
	d->in_submit = 0;
}

static void test_not_before_model_time(void **state)
{
	struct fix *f = *state;
	unsigned char *b = abuf(IU, 0x3c);
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
		struct done d = {0};
		uint64_t bound = bound_before(f, seq[i].op, seq[i].off, seq[i].len, &clone);

		t_submit = mono();
		submit(f, seq[i].op, seq[i].off, b, seq[i].len, &d);
		wait_all(f, &d, 1);
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
	unsigned char *b = abuf(2 * IU, 0);
	struct done d[3] = {{0}};

	/* A slow read (die), then a discard (controller only), then a flush
	 * (PLP: controller only): the read completes last. */
	submit(f, OP_R, 20 * IU, b, IU, &d[0]);
	submit(f, OP_D, 40 * IU, b, IU, &d[1]);
	submit(f, OP_F, 0, b, 0, &d[2]);
	assert_int_equal(qs_emu_inflight(f->e), 3);
	wait_all(f, d, 3);
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
	unsigned char *b = abuf(IU, 0x42);
	struct qs_model *clone;
	struct done d = {0};
	uint64_t bound, t0;

	(void)state;
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 0, QS_EMU_RAM, NULL);
	assert_true(f->v->flags & QS_VOL_VOLATILE_CACHE);
	t0 = mono();
	assert_int_equal(do_write(f, 2 * IU, b, IU, 0), 0);
	bound = bound_before(f, OP_F, 0, 0, &clone);
	submit(f, OP_F, 0, b, 0, &d);
	wait_all(f, &d, 1);
	assert_int_equal(d.res, 0);
	assert_true(d.at >= bound);
	/* The IU was programmed (30 ms from when its data was in) before the
	 * flush completed, whenever the write itself completed. */
	assert_true(d.at - t0 >= 30000000);
	qs_model_free(clone);
	/* FUA on such a drive costs the flush too. */
	t0 = mono();
	assert_int_equal(do_write(f, 3 * IU, b, IU, QS_WRITE_FUA), 0);
	assert_true(mono() - t0 >= 30000000);
	free(b);
	teardown((void **)&f);
}

static void test_flush_plp(void **state)
{
	struct fix *f = *state;

	assert_false(f->v->flags & QS_VOL_VOLATILE_CACHE);
	assert_int_equal(do_flush(f), 0);
}

static void test_discard_zeroes(void **state)
{
	struct fix *f = *state;
	unsigned char *w = abuf(3 * IU, 0), *r = abuf(3 * IU, 0x77), *z = abuf(3 * IU, 0);
	uint64_t off = 30 * IU;

	fill_pattern(w, 3 * IU, 3);
	assert_int_equal(do_write(f, off, w, 3 * IU, 0), 0);
	/* The middle IU and one block inside the last. */
	assert_int_equal(do_discard(f, off + IU, IU), 0);
	assert_int_equal(do_discard(f, off + 2 * IU + 8192, 4096), 0);
	assert_int_equal(do_read(f, off, r, 3 * IU), 0);
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
	unsigned char *b = abuf(8192, 0);
	struct iovec iov = {b, 4096}, odd = {b, 1000};
	struct done d[7] = {{0}};
	struct qs_emu_stats s;

	for (int i = 0; i < 7; i++)
		d[i].in_submit = 1;
	f->v->ops->read(f->v->ctx, 100, &iov, 1, on_done, &d[0]);	      /* misaligned */
	f->v->ops->write(f->v->ctx, SIZE, &iov, 1, 0, on_done, &d[1]);     /* past the end */
	f->v->ops->write(f->v->ctx, 0, &odd, 1, 0, on_done, &d[2]);	      /* odd length */
	f->v->ops->read(f->v->ctx, 0, &iov, 0, on_done, &d[3]);	      /* no iovec */
	f->v->ops->discard(f->v->ctx, SIZE - 4096, 8192, on_done, &d[4]); /* past the end */
	f->v->ops->discard(f->v->ctx, 0, 0, on_done, &d[5]);		      /* empty */
	f->v->ops->write(f->v->ctx, SIZE - 4096, &iov, 1, 0, on_done, &d[6]); /* fine */
	for (int i = 0; i < 7; i++)
		d[i].in_submit = 0;
	wait_all(f, d, 7);
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
	char path[] = "/tmp/qs_emu_XXXXXX";
	unsigned char *w = abuf(2 * IU, 0), *r = abuf(2 * IU, 0), *z = abuf(IU, 0);
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_FILE, path);
	/* The page cache needs fdatasync: the volume says so. */
	assert_true(f->v->flags & QS_VOL_VOLATILE_CACHE);
	round_trip(f);
	fill_pattern(w, 2 * IU, 11);
	assert_int_equal(do_write(f, 50 * IU, w, 2 * IU, 0), 0);
	assert_int_equal(do_flush(f), 0);
	assert_int_equal(do_discard(f, 51 * IU, IU), 0);
	qs_emu_close(f->e);
	fix_open(f, 1, QS_EMU_FILE, path);
	assert_int_equal(do_read(f, 50 * IU, r, 2 * IU), 0);
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
	unsigned char *w = abuf(IU, 0x99), *r = abuf(IU, 0x77), *z = abuf(IU, 0);

	(void)state;
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	fix_open(f, 1, QS_EMU_NONE, NULL);
	assert_int_equal(do_write(f, 0, w, IU, 0), 0);
	assert_int_equal(do_read(f, 0, r, IU), 0);
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
	unsigned char *b = abuf(IU, 0);
	struct done d[2] = {{0}};

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
	assert_true(qs_emu_model_time(e, mono()) >= qs_emu_fill_ns(e));
	assert_true(qs_emu_model_time(e, mono()) < qs_emu_fill_ns(e) + 5000000000ull);
	qs_emu_close(e);
	qs_uloop_exit(&loop);
}

static void test_profile_find(void **state)
{
	char dir[] = "/tmp/qs_emu_prof_XXXXXX", file[128], path[256], err[512];
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/x1.ini", dir);
	fp = fopen(file, "w");
	assert_non_null(fp);
	fputs("[drive]\n", fp);
	fclose(fp);
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
	f->at = mono();
}

/* The loop's timers: fire once, not before the deadline; cancel works. */
static void test_uloop_timer(void **state)
{
	struct qs_uloop loop;
	struct tfire a = {.t.fire = on_fire}, b = {.t.fire = on_fire};
	uint64_t t0 = mono();

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
