/* SPDX-License-Identifier: MIT */
/* Discrete-event simulation core and the model-backed volume. See sim.h. */
#include "sim.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ev {
	uint64_t t, seq;
	qs_io_cb fn;
	void *arg;
	int result;
};

struct qs_sim {
	uint64_t now, seq;
	struct ev *heap;
	size_t n, cap;
	int stop;
	/*
	 * Engine timer: one deadline, kept beside the heap rather than in it
	 * (the engine re-arms it far more often than it fires, and superseded
	 * deadlines left in the heap made it grow to tens of thousands of
	 * entries). It is ordered with the events by the same (time, sequence
	 * number) key, taken when it was set, so it runs exactly where an
	 * event scheduled then would.
	 */
	bool timer_on;
	uint64_t timer_t, timer_seq;
	void (*timer_fn)(void *);
	void *timer_arg;
	struct qs_env_ops ops;
	struct qs_env env;
};

static inline int ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int qs_sim_schedule(struct qs_sim *s, uint64_t t, qs_io_cb fn, void *arg, int result)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct ev *h = realloc(s->heap, nc * sizeof(*h));
		if (!h)
			return -ENOMEM;
		s->heap = h;
		s->cap = nc;
	}
	struct ev e = {t < s->now ? s->now : t, s->seq++, fn, arg, result};
	size_t i = s->n++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
	return 0;
}

static struct ev pop(struct qs_sim *s)
{
	struct ev top = s->heap[0];
	struct ev last = s->heap[--s->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->n)
			break;
		if (c + 1 < s->n && ev_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->n)
		s->heap[i] = last;
	return top;
}

/* The timer's deadline comes before the first event in the heap. */
static inline bool timer_first(const struct qs_sim *s)
{
	return s->timer_on && (!s->n || s->timer_t < s->heap[0].t ||
			       (s->timer_t == s->heap[0].t && s->timer_seq < s->heap[0].seq));
}

static uint64_t run(struct qs_sim *s, uint64_t until, int bounded)
{
	uint64_t n = 0;
	s->stop = 0;
	while ((s->n || s->timer_on) && !s->stop) {
		if (timer_first(s)) {
			if (bounded && s->timer_t > until)
				break;
			s->timer_on = false;
			s->now = s->timer_t;
			if (s->timer_fn)
				s->timer_fn(s->timer_arg);
			n++;
			continue;
		}
		if (bounded && s->heap[0].t > until)
			break;
		struct ev e = pop(s);
		s->now = e.t;
		e.fn(e.arg, e.result);
		n++;
	}
	if (bounded && !s->stop && until > s->now)
		s->now = until;
	return n;
}

uint64_t qs_sim_run(struct qs_sim *s)
{
	return run(s, 0, 0);
}

uint64_t qs_sim_run_until(struct qs_sim *s, uint64_t t)
{
	return run(s, t, 1);
}

void qs_sim_stop(struct qs_sim *s)
{
	s->stop = 1;
}

uint64_t qs_sim_pending(const struct qs_sim *s)
{
	return s->n + (s->timer_on ? 1 : 0);
}

uint64_t qs_sim_now(const struct qs_sim *s)
{
	return s->now;
}

void qs_sim_set_timer_cb(struct qs_sim *s, void (*fn)(void *), void *arg)
{
	s->timer_fn = fn;
	s->timer_arg = arg;
}

static uint64_t env_now(void *ctx)
{
	return ((struct qs_sim *)ctx)->now;
}

/* Set (or with 0 cancel) the one deadline; a past one fires from the loop
 * at the current time, like an event scheduled in the past. */
static void env_timer_set(void *ctx, uint64_t deadline)
{
	struct qs_sim *s = ctx;
	s->timer_on = deadline != 0;
	if (deadline) {
		s->timer_t = deadline < s->now ? s->now : deadline;
		s->timer_seq = s->seq++;
	}
}

static void *env_alloc(void *ctx, size_t size, size_t align)
{
	void *p = NULL;
	/* malloc aligns blocks of 16 bytes or more to 16 (glibc, and
	 * jemalloc's size classes above 8) and is much cheaper than
	 * posix_memalign for the engine's small per-request objects. */
	if (align <= 16)
		return malloc(size < 16 ? 16 : size);
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size ? size : 1))
		return NULL;
	return p;
}

static void env_free(void *ctx, void *p)
{
	free(p);
}

static void env_log(void *ctx, enum qs_log_level level, const char *msg)
{
	struct qs_sim *s = ctx;
	if (level <= QS_LOG_WARN)
		fprintf(stderr, "[sim %.6f s] %s\n", (double)s->now / 1e9, msg);
}

struct qs_sim *qs_sim_new(void)
{
	struct qs_sim *s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->ops.now_ns = env_now;
	s->ops.timer_set = env_timer_set;
	s->ops.alloc = env_alloc;
	s->ops.free = env_free;
	s->ops.log = env_log;
	s->env.ops = &s->ops;
	s->env.ctx = s;
	return s;
}

void qs_sim_free(struct qs_sim *s)
{
	if (!s)
		return;
	free(s->heap);
	free(s);
}

const struct qs_env *qs_sim_env(struct qs_sim *s)
{
	return &s->env;
}

/* ---- model-backed volume ---- */

/* Sparse block store: open addressing on block numbers, linear probing. */
struct store {
	uint64_t *keys; /* block + 1; 0 = empty */
	void **pages;
	size_t cap, n;
};

struct plain;

struct qs_sim_vol {
	struct qs_vol vol;
	struct qs_sim *sim;
	struct qs_model *model;
	enum qs_sim_data mode;
	struct store st;
	uint64_t inflight;
	struct plain *free_plain; /* completion records to reuse */
	bool power_off;		  /* qs_sim_vol_set_power: completions are lost */
	double store_cpu_s;	  /* qs_sim_vol_store_cpu_s */
	bool count_cpu;		  /* qs_sim_vol_count_cpu */
};

/* A request that must touch data when it completes. */
struct req {
	struct qs_sim_vol *v;
	int op;
	uint64_t off, len;
	qs_io_cb cb;
	void *arg;
	int iovcnt;
	struct iovec iov[];
};

static size_t st_slot(const struct store *st, uint64_t blk)
{
	uint64_t h = (blk + 1) * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 20) & (st->cap - 1);
	while (st->keys[i] && st->keys[i] != blk + 1)
		i = (i + 1) & (st->cap - 1);
	return i;
}

static int st_grow(struct store *st)
{
	struct store n = {0};
	n.cap = st->cap ? st->cap * 2 : 1024;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.pages = calloc(n.cap, sizeof(*n.pages));
	if (!n.keys || !n.pages) {
		free(n.keys);
		free(n.pages);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->cap; i++) {
		if (!st->keys[i] || !st->pages[i])
			continue;
		size_t j = st_slot(&n, st->keys[i] - 1);
		n.keys[j] = st->keys[i];
		n.pages[j] = st->pages[i];
		n.n++;
	}
	free(st->keys);
	free(st->pages);
	*st = n;
	return 0;
}

/* The page of blk, created when create is set; NULL if absent (zeroes). */
static void *st_get(struct store *st, uint64_t blk, int create)
{
	if (!st->cap) {
		if (!create || st_grow(st))
			return NULL;
	}
	size_t i = st_slot(st, blk);
	if (st->keys[i] && st->pages[i])
		return st->pages[i];
	if (!create)
		return NULL;
	if (!st->keys[i] && (st->n + 1) * 4 > st->cap * 3) {
		if (st_grow(st))
			return NULL;
		i = st_slot(st, blk);
	}
	void *pg = calloc(1, QS_BLOCK_SIZE);
	if (!pg)
		return NULL;
	if (!st->keys[i])
		st->n++;
	st->keys[i] = blk + 1;
	st->pages[i] = pg;
	return pg;
}

/* Discarded blocks keep their slot with no page: they read back as zeroes. */
static void st_drop(struct store *st, uint64_t blk)
{
	if (!st->cap)
		return;
	size_t i = st_slot(st, blk);
	if (st->keys[i] && st->pages[i]) {
		free(st->pages[i]);
		st->pages[i] = NULL;
	}
}

static void st_free(struct store *st)
{
	for (size_t i = 0; i < st->cap; i++)
		free(st->pages[i]);
	free(st->keys);
	free(st->pages);
	memset(st, 0, sizeof(*st));
}

/* Copy between the store and an iovec list, one 4 KiB block at a time. */
static int st_copy(struct store *st, uint64_t off, const struct iovec *iov, int iovcnt,
		   int to_store)
{
	uint64_t blk = off / QS_BLOCK_SIZE;
	for (int i = 0; i < iovcnt; i++) {
		uint8_t *b = iov[i].iov_base;
		for (size_t o = 0; o < iov[i].iov_len; o += QS_BLOCK_SIZE, blk++) {
			if (to_store) {
				void *pg = st_get(st, blk, 1);
				if (!pg)
					return -ENOMEM;
				memcpy(pg, b + o, QS_BLOCK_SIZE);
			} else {
				void *pg = st_get(st, blk, 0);
				if (pg)
					memcpy(b + o, pg, QS_BLOCK_SIZE);
				else
					memset(b + o, 0, QS_BLOCK_SIZE);
			}
		}
	}
	return 0;
}

static double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void vol_done(void *a, int result)
{
	struct req *r = a;
	struct qs_sim_vol *v = r->v;
	if (v->power_off) {
		v->inflight--;
		free(r);
		return;
	}
	if (result == 0) {
		double t0 = v->count_cpu ? thread_cpu_s() : 0;
		if (r->op == QS_OP_WRITE)
			result = st_copy(&v->st, r->off, r->iov, r->iovcnt, 1);
		else if (r->op == QS_OP_READ)
			result = st_copy(&v->st, r->off, r->iov, r->iovcnt, 0);
		else if (r->op == QS_OP_DISCARD)
			for (uint64_t b = r->off / QS_BLOCK_SIZE;
			     b < (r->off + r->len) / QS_BLOCK_SIZE; b++)
				st_drop(&v->st, b);
		if (v->count_cpu)
			v->store_cpu_s += thread_cpu_s() - t0;
	}
	v->inflight--;
	qs_io_cb cb = r->cb;
	void *arg = r->arg;
	free(r);
	cb(arg, result);
}

/* The completion of an op with no data to move; kept on a free list
 * (at most as many as were ever in flight at once). */
struct plain {
	struct qs_sim_vol *v;
	qs_io_cb cb;
	void *arg;
	struct plain *next;
};

static void plain_done(void *a, int result)
{
	struct plain *p = a;
	struct qs_sim_vol *v = p->v;
	qs_io_cb cb = p->cb;
	void *arg = p->arg;
	p->next = v->free_plain;
	v->free_plain = p;
	v->inflight--;
	if (!v->power_off)
		cb(arg, result);
}

/*
 * Common path of every op: validate, ask the model for the completion
 * time, schedule the completion. Errors are reported through the callback
 * too, at the current time, but never from inside this call.
 */
static void vol_submit(struct qs_sim_vol *v, int op, uint64_t off, uint64_t len,
		       const struct iovec *iov, int iovcnt, unsigned flags, qs_io_cb cb,
		       void *arg)
{
	struct qs_sim *s = v->sim;
	int err = 0;
	if (op != QS_OP_FLUSH &&
	    (off % QS_BLOCK_SIZE || len % QS_BLOCK_SIZE || off > v->vol.size ||
	     len > v->vol.size - off))
		err = -EINVAL;
	for (int i = 0; !err && iov && i < iovcnt; i++)
		if (iov[i].iov_len % QS_BLOCK_SIZE)
			err = -EINVAL;
	uint64_t t = s->now;
	if (!err && !(op != QS_OP_FLUSH && len == 0)) {
		t = qs_model_submit(v->model, s->now, op, off, len);
		if (op == QS_OP_WRITE && (flags & QS_WRITE_FUA) &&
		    (v->vol.flags & QS_VOL_VOLATILE_CACHE))
			t = qs_model_submit(v->model, t, QS_OP_FLUSH, 0, 0);
	}
	v->inflight++;
	if (v->mode == QS_SIM_DATA_ZERO && !err && op == QS_OP_READ) {
		/* Cleared now: the caller may not look before the completion. */
		for (int i = 0; i < iovcnt; i++)
			memset(iov[i].iov_base, 0, iov[i].iov_len);
	}
	if (v->mode == QS_SIM_DATA_STORE && !err && op != QS_OP_FLUSH) {
		struct req *r = malloc(sizeof(*r) + (size_t)(iov ? iovcnt : 0) * sizeof(*iov));
		if (r) {
			*r = (struct req){v, op, off, len, cb, arg, iov ? iovcnt : 0};
			if (iov)
				memcpy(r->iov, iov, (size_t)iovcnt * sizeof(*iov));
			if (!qs_sim_schedule(s, t, vol_done, r, 0))
				return;
			free(r);
		}
		err = -ENOMEM;
	}
	struct plain *p = v->free_plain;
	if (p)
		v->free_plain = p->next;
	else
		p = malloc(sizeof(*p));
	if (p) {
		*p = (struct plain){v, cb, arg, NULL};
		if (!qs_sim_schedule(s, err ? s->now : t, plain_done, p, err))
			return;
		free(p);
	}
	/* Out of memory for the event itself: nothing can report later. */
	fprintf(stderr, "qs_sim_vol: out of memory scheduling a completion\n");
	abort();
}

void qs_sim_vol_set_power(struct qs_sim_vol *v, bool on)
{
	v->power_off = !on;
}

double qs_sim_vol_store_cpu_s(const struct qs_sim_vol *v)
{
	return v->store_cpu_s;
}

void qs_sim_vol_count_cpu(struct qs_sim_vol *v, bool on)
{
	v->count_cpu = on;
}

static uint64_t iov_len(const struct iovec *iov, int iovcnt)
{
	uint64_t n = 0;
	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

static void op_read(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		    qs_io_cb cb, void *arg)
{
	vol_submit(ctx, QS_OP_READ, off, iov_len(iov, iovcnt), iov, iovcnt, 0, cb, arg);
}

static void op_write(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		     unsigned flags, qs_io_cb cb, void *arg)
{
	vol_submit(ctx, QS_OP_WRITE, off, iov_len(iov, iovcnt), iov, iovcnt, flags, cb, arg);
}

static void op_flush(void *ctx, qs_io_cb cb, void *arg)
{
	vol_submit(ctx, QS_OP_FLUSH, 0, 0, NULL, 0, 0, cb, arg);
}

static void op_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	vol_submit(ctx, QS_OP_DISCARD, off, len, NULL, 0, 0, cb, arg);
}

static const struct qs_vol_ops sim_vol_ops = {
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.discard = op_discard,
};

struct qs_sim_vol *qs_sim_vol_new(struct qs_sim *s, struct qs_model *m, enum qs_sim_data mode)
{
	struct qs_sim_vol *v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->sim = s;
	v->model = m;
	v->mode = mode;
	v->vol.ops = &sim_vol_ops;
	v->vol.ctx = v;
	v->vol.size = qs_model_capacity(m) / QS_BLOCK_SIZE * QS_BLOCK_SIZE;
	v->vol.flags = qs_model_profile(m)->plp ? 0 : QS_VOL_VOLATILE_CACHE;
	return v;
}

void qs_sim_vol_free(struct qs_sim_vol *v)
{
	if (!v)
		return;
	st_free(&v->st);
	while (v->free_plain) {
		struct plain *p = v->free_plain;
		v->free_plain = p->next;
		free(p);
	}
	free(v);
}

struct qs_vol *qs_sim_vol_vol(struct qs_sim_vol *v)
{
	return &v->vol;
}

uint64_t qs_sim_vol_inflight(const struct qs_sim_vol *v)
{
	return v->inflight;
}
