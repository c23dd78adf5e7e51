/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/rand.h"

#include "tlib.h"

uint64_t trng(uint64_t *s)
{
	return qs_splitmix64(s);
}

/* ---- environment ---- */

static uint64_t env_now(void *ctx)
{
	return ((struct tenv *)ctx)->now;
}

static void env_timer(void *ctx, uint64_t deadline)
{
	((struct tenv *)ctx)->deadline = deadline;
}

static void *env_alloc(void *ctx, size_t size, size_t align)
{
	void *p = NULL;
	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size))
		return NULL;
	return p;
}

static void env_free(void *ctx, void *p)
{
	free(p);
}

static void env_log(void *ctx, enum qs_log_level lvl, const char *msg)
{
	struct tenv *t = ctx;
	if (lvl <= QS_LOG_ERR)
		t->logged_errors++;
	size_t used = strlen(t->warnings);
	if (lvl <= QS_LOG_WARN)
		snprintf(t->warnings + used, sizeof(t->warnings) - used, "%s\n", msg);
	if (t->verbose)
		fprintf(stderr, "[engine %d] %s\n", (int)lvl, msg);
}

static const struct qs_env_ops tenv_ops = {
	.now_ns = env_now,
	.timer_set = env_timer,
	.alloc = env_alloc,
	.free = env_free,
	.log = env_log,
};

void tenv_init(struct tenv *t)
{
	memset(t, 0, sizeof(*t));
	t->env.ops = &tenv_ops;
	t->env.ctx = t;
	t->now = 1000000000ull;
	t->verbose = getenv("QS_TEST_VERBOSE") != NULL;
}

/* ---- test volume ---- */

/* Chunks either image may differ from zero in: a crash copies only those
 * (the images start zeroed), not the whole volume. */
#define TV_CHUNK (1u << 20)

enum top_kind { TOP_READ, TOP_WRITE, TOP_FLUSH, TOP_DISCARD };

struct top {
	struct top *next;
	enum top_kind kind;
	uint64_t off, len;
	const struct iovec *iov; /* reads: where to put the data */
	int iovcnt;
	unsigned char *data;	 /* writes: a copy taken at submission (tv_buf_get) */
	unsigned data_class;	 /* its size class: 4 KiB << data_class */
	unsigned flags;
	bool forced; /* FUA: always survives */
	qs_io_cb cb;
	void *arg;
	int fail;
};

static void q_push(struct tvol *v, struct top *o)
{
	o->next = v->queue;
	v->queue = o;
	v->nqueue++;
}

static int fault_check(struct tvol *v)
{
	v->ios++;
	if (v->dead)
		return -EIO;
	if (v->fail_at && (v->ios == v->fail_at || (v->fail_persistent && v->ios > v->fail_at))) {
		v->fault_hit = true;
		return -EIO;
	}
	return 0;
}

static void crash_point(struct tvol *v)
{
	struct tworld *w = v->w;
	if (!w)
		return;
	w->points++;
	if (w->crash_at && w->points == w->crash_at)
		w->crashed = true;
}

static struct top *op_new(struct tvol *v, enum top_kind k, uint64_t off, uint64_t len,
			  qs_io_cb cb, void *arg)
{
	struct top *o = calloc(1, sizeof(*o));
	if (!o)
		abort();
	o->kind = k;
	o->off = off;
	o->len = len;
	o->cb = cb;
	o->arg = arg;
	o->fail = fault_check(v);
	if (!o->fail && (off > v->size || len > v->size - off || off % 4096 || len % 4096))
		o->fail = -EINVAL;
	return o;
}

static uint64_t iov_len(const struct iovec *iov, int n)
{
	uint64_t l = 0;
	for (int i = 0; i < n; i++)
		l += iov[i].iov_len;
	return l;
}

static void tv_read(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt, qs_io_cb cb,
		    void *arg)
{
	struct tvol *v = ctx;
	struct top *o = op_new(v, TOP_READ, off, iov_len(iov, iovcnt), cb, arg);
	o->iov = iov;
	o->iovcnt = iovcnt;
	q_push(v, o);
}

static void band_check(struct tvol *v, uint64_t off, uint64_t len)
{
	uint64_t b = off / v->check_band, start = b * v->check_band;
	if (!v->band_next) {
		v->band_next = calloc(v->size / v->check_band + 1, sizeof(uint64_t));
		if (!v->band_next)
			abort();
	}
	bool resumed = v->band_next[b] == UINT64_MAX && (!v->check_iu || off % v->check_iu == 0);
	if ((off != start && off != v->band_next[b] && !resumed) ||
	    off + len > start + v->check_band)
		v->band_violations++;
	v->band_next[b] = off + len;
}

void tvol_band_reopen(struct tvol *v)
{
	if (!v->band_next)
		return;
	for (uint64_t b = 0; b <= v->size / v->check_band; b++)
		v->band_next[b] = UINT64_MAX;
}

/*
 * The copies writes take at submission come from free lists by size class,
 * for the reason tv_image_get gives: fresh blocks from the allocator are
 * faulted in anew for every write of every point of a sweep (measured,
 * test_crash at QS_CRASH_STEP=20, plain build: 3.7 s with fresh copies, 2.7
 * s with these; under AddressSanitizer no difference, its allocator being
 * the cost there). A copy is as large as its class, so an access past its
 * write's length but within the class is not caught by ASan: only tlib
 * reads the copies. Reachable from here until exit.
 */
#define TV_BUF_CLASSES 12 /* 4 KiB to 8 MiB */
#define TV_BUF_KEEP 64	  /* free copies kept per class */
struct tv_free {
	struct tv_free *next;
};
static struct tv_free *tv_buf_free[TV_BUF_CLASSES];
static unsigned tv_buf_nfree[TV_BUF_CLASSES];

static unsigned char *tv_buf_get(uint64_t len, unsigned *cls)
{
	unsigned c = 0;
	while ((4096ull << c) < len)
		c++;
	*cls = c;
	if (c < TV_BUF_CLASSES && tv_buf_free[c]) {
		struct tv_free *f = tv_buf_free[c];
		tv_buf_free[c] = f->next;
		tv_buf_nfree[c]--;
		return (unsigned char *)f;
	}
	unsigned char *b = malloc(4096ull << c);
	if (!b)
		abort();
	return b;
}

static void tv_buf_put(unsigned char *b, unsigned cls)
{
	if (cls >= TV_BUF_CLASSES || tv_buf_nfree[cls] >= TV_BUF_KEEP) {
		free(b);
		return;
	}
	struct tv_free *f = (struct tv_free *)b;
	f->next = tv_buf_free[cls];
	tv_buf_free[cls] = f;
	tv_buf_nfree[cls]++;
}

static void tv_write(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		     unsigned flags, qs_io_cb cb, void *arg)
{
	struct tvol *v = ctx;
	uint64_t len = iov_len(iov, iovcnt);
	crash_point(v);
	struct top *o = op_new(v, TOP_WRITE, off, len, cb, arg);
	o->flags = flags;
	v->writes++;
	if (v->check_iu && (off % v->check_iu || len % v->check_iu || !len))
		v->iu_violations++;
	if (v->check_band)
		band_check(v, off, len);
	o->data = tv_buf_get(len, &o->data_class);
	uint64_t p = 0;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(o->data + p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	q_push(v, o);
}

static void tv_flush(void *ctx, qs_io_cb cb, void *arg)
{
	struct tvol *v = ctx;
	crash_point(v);
	v->flushes++;
	q_push(v, op_new(v, TOP_FLUSH, 0, 0, cb, arg));
}

static void tv_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	struct tvol *v = ctx;
	crash_point(v);
	v->discards++;
	q_push(v, op_new(v, TOP_DISCARD, off, len, cb, arg));
}

static const struct qs_vol_ops tvol_ops = {
	.read = tv_read, .write = tv_write, .flush = tv_flush, .discard = tv_discard,
};

/*
 * Zeroed images of volumes that ended, kept for the next tvol_init of the
 * same size. A crash sweep makes new volumes for each of its thousands of
 * points; fresh zeroed memory from the allocator is faulted in page by page
 * as the workload writes it, which cost more than all the copies (about a
 * third of the sweep's time, most of it in the kernel). Zeroing a mapped
 * image again is cheaper. Reachable from here until exit, so no leak.
 */
#define TV_SPARES 8
static struct {
	unsigned char *p;
	uint64_t size;
} tv_spare[TV_SPARES];

static unsigned char *tv_image_get(uint64_t size)
{
	for (unsigned i = 0; i < TV_SPARES; i++)
		if (tv_spare[i].p && tv_spare[i].size == size) {
			unsigned char *p = tv_spare[i].p;
			tv_spare[i].p = NULL;
			return p;
		}
	return calloc(1, size);
}

static void tv_image_put(unsigned char *p, uint64_t size)
{
	if (!p)
		return;
	for (unsigned i = 0; i < TV_SPARES; i++)
		if (!tv_spare[i].p) {
			memset(p, 0, size); /* tests write images directly too */
			tv_spare[i].p = p;
			tv_spare[i].size = size;
			return;
		}
	free(p);
}

int tvol_init(struct tvol *v, struct tworld *w, uint64_t size, bool volatile_cache)
{
	memset(v, 0, sizeof(*v));
	v->w = w;
	v->size = size;
	v->cur = tv_image_get(size);
	v->durable = tv_image_get(size);
	v->touched = calloc(1, size / TV_CHUNK / 8 + 1);
	if (!v->cur || !v->durable || !v->touched)
		return -ENOMEM;
	v->tear_unit = 512;
	v->vol.ops = &tvol_ops;
	v->vol.ctx = v;
	v->vol.size = size;
	v->vol.flags = volatile_cache ? QS_VOL_VOLATILE_CACHE : 0;
	return 0;
}

static void op_free(struct top *o)
{
	if (o->data)
		tv_buf_put(o->data, o->data_class);
	free(o);
}

void tvol_fini(struct tvol *v)
{
	while (v->queue) {
		struct top *o = v->queue;
		v->queue = o->next;
		op_free(o);
	}
	while (v->unflushed) {
		struct top *o = v->unflushed;
		v->unflushed = o->next;
		op_free(o);
	}
	free(v->band_next);
	tv_image_put(v->cur, v->size);
	tv_image_put(v->durable, v->size);
	free(v->touched);
}

static void touch(struct tvol *v, uint64_t off, uint64_t len)
{
	for (uint64_t c = off / TV_CHUNK; len && c <= (off + len - 1) / TV_CHUNK; c++)
		v->touched[c / 8] |= (uint8_t)(1u << (c % 8));
}

static void apply(struct tvol *v, unsigned char *img, const struct top *o)
{
	touch(v, o->off, o->len);
	if (o->kind == TOP_WRITE)
		memcpy(img + o->off, o->data, o->len);
	else if (o->kind == TOP_DISCARD)
		memset(img + o->off, 0, o->len);
}

static void make_durable(struct tvol *v)
{
	struct top *o = v->unflushed;
	v->unflushed = NULL;
	/* stored newest first: reverse to apply oldest first */
	struct top *rev = NULL;
	while (o) {
		struct top *n = o->next;
		o->next = rev;
		rev = o;
		o = n;
	}
	while (rev) {
		struct top *n = rev->next;
		apply(v, v->durable, rev);
		op_free(rev);
		rev = n;
	}
}

bool tvol_step(struct tvol *v)
{
	if (!v->queue)
		return false;
	/* pick the oldest (tail of the LIFO list) or a random one */
	uint64_t k = v->random_order && v->w ? trng(&v->w->rng) % v->nqueue : v->nqueue - 1;
	struct top **pp = &v->queue;
	for (uint64_t i = 0; i < k; i++)
		pp = &(*pp)->next;
	struct top *o = *pp;
	*pp = o->next;
	v->nqueue--;
	int res = v->dead ? -EIO : o->fail;
	if (!res) {
		switch (o->kind) {
		case TOP_READ: {
			uint64_t p = o->off;
			for (int i = 0; i < o->iovcnt; i++) {
				memcpy(o->iov[i].iov_base, v->cur + p, o->iov[i].iov_len);
				p += o->iov[i].iov_len;
			}
			break;
		}
		case TOP_WRITE:
		case TOP_DISCARD:
			apply(v, v->cur, o);
			if (!(v->vol.flags & QS_VOL_VOLATILE_CACHE)) {
				apply(v, v->durable, o);
			} else {
				/* FUA: durable now, and kept in order among the
				 * unflushed writes so an older cached write to the
				 * same blocks cannot land over it at a crash. */
				if (o->flags & QS_WRITE_FUA) {
					apply(v, v->durable, o);
					o->forced = true;
				}
				o->next = v->unflushed;
				v->unflushed = o;
				o->cb(o->arg, 0);
				return true;
			}
			break;
		case TOP_FLUSH:
			make_durable(v);
			break;
		}
	}
	qs_io_cb cb = o->cb;
	void *arg = o->arg;
	op_free(o);
	cb(arg, res);
	return true;
}

static void tear(struct tvol *v, unsigned char *img, const struct top *o)
{
	uint64_t choice = o->forced ? 1 : trng(&v->w->rng) % 3;
	if (choice == 0)
		return; /* dropped */
	if (choice == 1) {
		apply(v, img, o); /* kept */
		return;
	}
	/* torn: each 512-byte sector independently old or new */
	touch(v, o->off, o->len);
	uint32_t u = v->tear_unit;
	for (uint64_t s = 0; s < o->len; s += u)
		if (trng(&v->w->rng) & 1) {
			if (o->kind == TOP_WRITE)
				memcpy(img + o->off + s, o->data + s, u);
			else
				memset(img + o->off + s, 0, u);
		}
}

void tvol_crash(struct tvol *v, bool power)
{
	if (power) {
		/* unflushed completed writes, oldest first, then in-flight ones */
		struct top *rev = NULL;
		for (struct top *o = v->unflushed; o;) {
			struct top *n = o->next;
			o->next = rev;
			rev = o;
			o = n;
		}
		v->unflushed = NULL;
		while (rev) {
			struct top *n = rev->next;
			tear(v, v->durable, rev);
			op_free(rev);
			rev = n;
		}
		for (struct top *o = v->queue; o; o = o->next)
			if (!o->fail && (o->kind == TOP_WRITE || o->kind == TOP_DISCARD))
				tear(v, v->durable, o);
	} else {
		/* the device keeps its cache: completed writes all survive */
		make_durable(v);
		for (struct top *o = v->queue; o; o = o->next)
			if (!o->fail && (o->kind == TOP_WRITE || o->kind == TOP_DISCARD) &&
			    (trng(&v->w->rng) & 1))
				apply(v, v->durable, o);
	}
	for (uint64_t c = 0; c * TV_CHUNK < v->size; c++)
		if (v->touched[c / 8] & (1u << (c % 8))) {
			uint64_t n = v->size - c * TV_CHUNK < TV_CHUNK ? v->size - c * TV_CHUNK : TV_CHUNK;
			memcpy(v->cur + c * TV_CHUNK, v->durable + c * TV_CHUNK, n);
		}
	v->dead = true;
}

void tvol_revive(struct tvol *v)
{
	while (v->queue) {
		struct top *o = v->queue;
		v->queue = o->next;
		op_free(o);
	}
	v->nqueue = 0;
	v->dead = false;
	v->fail_at = 0;
	v->fault_hit = false;
}

/* ---- block patterns ---- */

void tblk_fill(void *blk, uint64_t lba, uint64_t ver)
{
	uint64_t *w = blk;
	if (!ver) {
		memset(blk, 0, 4096);
		return;
	}
	uint64_t s = lba * 0x100000001b3ull ^ ver;
	w[0] = lba;
	w[1] = ver;
	for (int i = 2; i < 512; i++)
		w[i] = trng(&s);
}

int tblk_decode(const void *blk, uint64_t lba, uint64_t *ver)
{
	const uint64_t *w = blk;
	static const unsigned char zero[4096];
	if (!memcmp(blk, zero, 4096)) {
		*ver = 0;
		return 0;
	}
	if (w[0] != lba || !w[1])
		return -1;
	uint64_t s = lba * 0x100000001b3ull ^ w[1];
	for (int i = 2; i < 512; i++)
		if (w[i] != trng(&s))
			return -1;
	*ver = w[1];
	return 0;
}
