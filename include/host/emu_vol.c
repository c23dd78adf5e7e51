/* SPDX-License-Identifier: MIT */
/* qs_emu: the bench's device model run in real time as a volume (see header). */
#include "host/emu_vol.h"
#include "host/env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "host/uring_vol.h"

struct emu_req {
	struct qs_emu *e;
	struct emu_req *prev, *next; /* every live request, for close */
	struct emu_req *due_next;    /* emu_fire's list of requests to deliver */
	uint64_t due_ns;	     /* CLOCK_MONOTONIC: not delivered before */
	uint64_t seq;		     /* submission order: ties in the heap */
	qs_io_cb cb;
	void *arg;
	int res;
	bool timed;	   /* has a model time (not an argument error) */
	bool time_up;	   /* left the heap: its time has come */
	bool file_pending; /* the backing file's I/O has not completed */
};

struct qs_emu {
	struct qs_vol vol; /* ops, ctx (this), size, flags */
	struct qs_uloop *loop;
	struct qs_model *model;
	enum qs_emu_backing backing;
	unsigned char *ram;
	uint64_t ram_len;
	struct qs_uvol *file;
	bool model_volatile; /* the profile has no PLP: FUA costs a flush */
	int64_t delta;	     /* model time = CLOCK_MONOTONIC + delta */
	uint64_t fill_ns;
	struct emu_req **heap; /* min-heap by (due_ns, seq) */
	size_t nheap, capheap;
	struct emu_req *live;
	uint64_t seq;
	uint64_t inflight;
	struct qs_utimer timer;
	struct qs_emu_stats st;
	struct qs_model_counters base; /* the model's counters after the fill */
};

uint64_t qs_emu_model_time(const struct qs_emu *e, uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + e->delta);
}

uint64_t qs_emu_mono_time(const struct qs_emu *e, uint64_t model_ns)
{
	return (uint64_t)((int64_t)model_ns - e->delta);
}

/* ---- the heap of requests waiting for their time ---- */

static bool heap_less(const struct emu_req *a, const struct emu_req *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static int heap_push(struct qs_emu *e, struct emu_req *r)
{
	size_t i;

	if (e->nheap == e->capheap) {
		size_t cap = e->capheap ? e->capheap * 2 : 64;
		struct emu_req **h = realloc(e->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		e->heap = h;
		e->capheap = cap;
	}
	i = e->nheap++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!heap_less(r, e->heap[parent]))
			break;
		e->heap[i] = e->heap[parent];
		i = parent;
	}
	e->heap[i] = r;
	return 0;
}

static struct emu_req *heap_pop(struct qs_emu *e)
{
	struct emu_req *top = e->heap[0], *last = e->heap[--e->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= e->nheap)
			break;
		if (c + 1 < e->nheap && heap_less(e->heap[c + 1], e->heap[c]))
			c++;
		if (!heap_less(e->heap[c], last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (e->nheap)
		e->heap[i] = last;
	return top;
}

/* ---- completion ---- */

static void emu_unlink(struct qs_emu *e, struct emu_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		e->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
}

/* Deliver r's completion; nothing of e is touched after the callback. */
static void emu_complete(struct emu_req *r, uint64_t now)
{
	struct qs_emu *e = r->e;
	qs_io_cb cb = r->cb;
	void *arg = r->arg;
	int res = r->res;

	if (res < 0) {
		e->st.errors++;
	} else if (r->timed) {
		uint64_t late = now > r->due_ns ? now - r->due_ns : 0;

		e->st.completions++;
		e->st.late_ns_sum += late;
		if (late > e->st.late_ns_max)
			e->st.late_ns_max = late;
	}
	emu_unlink(e, r);
	e->inflight--;
	free(r);
	cb(arg, res);
}

static void emu_arm(struct qs_emu *e)
{
	if (e->nheap)
		qs_uloop_timer_set(e->loop, &e->timer, e->heap[0]->due_ns);
	else
		qs_uloop_timer_cancel(e->loop, &e->timer);
}

/*
 * The timer: take every request whose time has come out of the heap first
 * and re-arm, then deliver them in (time, submission) order. Callbacks may
 * submit (the new requests go into the heap and move the timer) and the
 * last one may close the volume, so nothing of e is used after them.
 */
static void emu_fire(struct qs_utimer *t)
{
	struct qs_emu *e = (struct qs_emu *)((char *)t - offsetof(struct qs_emu, timer));
	struct emu_req *due = NULL, **tail = &due;
	uint64_t now = qs_henv_now_ns();

	while (e->nheap && e->heap[0]->due_ns <= now) {
		struct emu_req *r = heap_pop(e);

		r->time_up = true;
		if (r->file_pending)
			continue; /* the file's completion delivers it */
		r->due_next = NULL;
		*tail = r;
		tail = &r->due_next;
	}
	emu_arm(e);
	while (due) {
		struct emu_req *r = due;

		due = r->due_next;
		emu_complete(r, now);
	}
}

/* The backing file's I/O for r is done. */
static void emu_file_done(void *arg, int res)
{
	struct emu_req *r = arg;

	r->file_pending = false;
	if (res < 0 && r->res == 0)
		r->res = res;
	if (r->time_up)
		emu_complete(r, qs_henv_now_ns());
}

/* ---- submission ---- */

static struct emu_req *emu_req_new(struct qs_emu *e, qs_io_cb cb, void *arg)
{
	struct emu_req *r = calloc(1, sizeof(*r));

	if (!r) {
		/*
		 * Without the request there is no way to report later, and the
		 * contract forbids reporting now (exactly one callback, never
		 * inline): stop loudly, as qs_uvol does.
		 */
		fprintf(stderr, "qs_emu: out of memory for a request\n");
		abort();
	}
	r->e = e;
	r->cb = cb;
	r->arg = arg;
	r->seq = e->seq++;
	r->next = e->live;
	if (e->live)
		e->live->prev = r;
	e->live = r;
	e->inflight++;
	return r;
}

/* Queue r for its time (due_ns set); the timer moves if r is the earliest. */
static void emu_queue(struct qs_emu *e, struct emu_req *r)
{
	if (heap_push(e, r) < 0) {
		fprintf(stderr, "qs_emu: out of memory queueing a completion\n");
		abort();
	}
	if (e->heap[0] == r)
		qs_uloop_timer_set(e->loop, &e->timer, r->due_ns);
}

/* An argument error: completed with err from the next loop turn. */
static void emu_fail(struct qs_emu *e, struct emu_req *r, int err)
{
	r->res = err;
	r->due_ns = 0;
	emu_queue(e, r);
}

static int emu_check(const struct qs_emu *e, uint64_t off, uint64_t len)
{
	if ((off | len) & (QS_BLOCK_SIZE - 1) || len == 0)
		return -EINVAL;
	if (off > e->vol.size || len > e->vol.size - off)
		return -EINVAL;
	return 0;
}

/* Ask the model for op's time, now; FUA on a drive without PLP adds a flush. */
static void emu_time(struct qs_emu *e, struct emu_req *r, int op, uint64_t off, uint64_t len,
		     unsigned flags)
{
	uint64_t t = qs_model_submit(e->model, qs_emu_model_time(e, qs_henv_now_ns()), op, off, len);

	if (op == QS_OP_WRITE && (flags & QS_WRITE_FUA) && e->model_volatile)
		t = qs_model_submit(e->model, t, QS_OP_FLUSH, 0, 0);
	r->due_ns = qs_emu_mono_time(e, t);
	r->timed = true;
}

static void emu_ram_copy(struct qs_emu *e, bool write, uint64_t off, const struct iovec *iov,
			 int iovcnt)
{
	unsigned char *p = e->ram + off;

	for (int i = 0; i < iovcnt; i++) {
		if (write)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
}

static void emu_rw(struct qs_emu *e, bool write, uint64_t off, const struct iovec *iov,
		   int iovcnt, unsigned flags, qs_io_cb cb, void *arg)
{
	struct emu_req *r = emu_req_new(e, cb, arg);
	uint64_t len = 0;
	int err;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	err = iovcnt <= 0 ? -EINVAL : emu_check(e, off, len);
	if (err) {
		emu_fail(e, r, err);
		return;
	}
	emu_time(e, r, write ? QS_OP_WRITE : QS_OP_READ, off, len, flags);
	if (write) {
		e->st.writes++;
		e->st.write_bytes += len;
	} else {
		e->st.reads++;
		e->st.read_bytes += len;
	}
	switch (e->backing) {
	case QS_EMU_RAM:
		emu_ram_copy(e, write, off, iov, iovcnt);
		break;
	case QS_EMU_NONE:
		for (int i = 0; !write && i < iovcnt; i++)
			memset(iov[i].iov_base, 0, iov[i].iov_len);
		break;
	case QS_EMU_FILE:
		r->file_pending = true;
		if (write)
			e->file->vol.ops->write(e->file->vol.ctx, off, iov, iovcnt, flags,
						emu_file_done, r);
		else
			e->file->vol.ops->read(e->file->vol.ctx, off, iov, iovcnt, emu_file_done,
					       r);
		break;
	}
	emu_queue(e, r);
}

static void emu_read(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt, qs_io_cb cb,
		     void *arg)
{
	emu_rw(ctx, false, off, iov, iovcnt, 0, cb, arg);
}

static void emu_write(void *ctx, uint64_t off, const struct iovec *iov, int iovcnt,
		      unsigned flags, qs_io_cb cb, void *arg)
{
	emu_rw(ctx, true, off, iov, iovcnt, flags, cb, arg);
}

static void emu_flush(void *ctx, qs_io_cb cb, void *arg)
{
	struct qs_emu *e = ctx;
	struct emu_req *r = emu_req_new(e, cb, arg);

	emu_time(e, r, QS_OP_FLUSH, 0, 0, 0);
	e->st.flushes++;
	if (e->backing == QS_EMU_FILE) {
		/* The file's page cache too: the data must survive a crash. */
		r->file_pending = true;
		e->file->vol.ops->flush(e->file->vol.ctx, emu_file_done, r);
	}
	emu_queue(e, r);
}

static void emu_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	struct qs_emu *e = ctx;
	struct emu_req *r = emu_req_new(e, cb, arg);
	int err = emu_check(e, off, len);

	if (err) {
		emu_fail(e, r, err);
		return;
	}
	emu_time(e, r, QS_OP_DISCARD, off, len, 0);
	e->st.discards++;
	switch (e->backing) {
	case QS_EMU_RAM:
		/*
		 * Private anonymous pages read back as zeroes after
		 * MADV_DONTNEED, and their memory is returned; off and len are
		 * multiples of 4096 and the mapping is page-aligned.
		 */
		if (sysconf(_SC_PAGESIZE) != QS_BLOCK_SIZE ||
		    madvise(e->ram + off, len, MADV_DONTNEED) != 0)
			memset(e->ram + off, 0, len);
		break;
	case QS_EMU_NONE:
		break;
	case QS_EMU_FILE:
		r->file_pending = true;
		e->file->vol.ops->discard(e->file->vol.ctx, off, len, emu_file_done, r);
		break;
	}
	emu_queue(e, r);
}

static const struct qs_vol_ops emu_ops = {
	.read = emu_read,
	.write = emu_write,
	.flush = emu_flush,
	.discard = emu_discard,
};

/* ---- open / close ---- */

const char *qs_emu_backing_name(enum qs_emu_backing b)
{
	switch (b) {
	case QS_EMU_RAM: return "ram";
	case QS_EMU_FILE: return "file";
	case QS_EMU_NONE: return "none";
	}
	return "?";
}

const char *qs_emu_precond_name(enum qs_emu_precond p)
{
	switch (p) {
	case QS_EMU_PRECOND_SEQ: return "seq";
	case QS_EMU_PRECOND_RANDOM: return "random";
	case QS_EMU_PRECOND_NONE: return "none";
	}
	return "?";
}

static int emu_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int emu_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

int qs_emu_open(struct qs_emu **out, struct qs_uloop *loop, const struct qs_emu_conf *c,
		char *err, size_t errlen)
{
	const struct qs_profile *p = c->profile;
	unsigned long long size = c->size;
	uint64_t model_bytes, mono;
	struct qs_emu *e;
	int ret;

	*out = NULL;
	if (!p || !p->iu_bytes)
		return emu_err(err, errlen, -EINVAL, "emulated drive: no profile");
	if (size == 0 || size % QS_BLOCK_SIZE)
		return emu_err(err, errlen, -EINVAL,
			       "emulated drive: size %llu bytes: expected a positive multiple "
			       "of 4096", size);
	if (size > p->capacity_bytes)
		return emu_err(err, errlen, -EINVAL,
			       "emulated drive: size %llu bytes is larger than the %s drive "
			       "(%llu bytes)", size, p->name,
			       (unsigned long long)p->capacity_bytes);
	/* The model works in whole IUs: the device's last IU may be partial. */
	model_bytes = (size + p->iu_bytes - 1) / p->iu_bytes * p->iu_bytes;
	if (c->model_bytes) {
		if (c->model_bytes < model_bytes || c->model_bytes > p->capacity_bytes)
			return emu_err(err, errlen, -EINVAL,
				       "emulated drive: model size %llu bytes: expected %llu "
				       "(the device size rounded up to the %u-byte IU) to %llu "
				       "(the %s drive's capacity)",
				       (unsigned long long)c->model_bytes,
				       (unsigned long long)model_bytes, p->iu_bytes,
				       (unsigned long long)p->capacity_bytes, p->name);
		model_bytes = c->model_bytes;
	}
	if (c->backing == QS_EMU_FILE && (!c->path || !*c->path))
		return emu_err(err, errlen, -EINVAL, "emulated drive: file backing without a path");
	e = calloc(1, sizeof(*e));
	if (!e)
		return emu_err(err, errlen, -ENOMEM, "emulated drive: out of memory");
	e->loop = loop;
	e->backing = c->backing;
	e->timer.fire = emu_fire;
	char why[512];
	ret = qs_model_create(&e->model, p, model_bytes, why, sizeof(why));
	if (ret < 0) {
		emu_err(err, errlen, ret, "emulated drive: model of %llu bytes: %s",
			(unsigned long long)model_bytes, why);
		goto fail;
	}
	if (qs_model_capacity(e->model) < size) {
		ret = emu_err(err, errlen, -EINVAL,
			      "emulated drive: the %s model holds %llu bytes, less than the "
			      "size %llu", p->name,
			      (unsigned long long)qs_model_capacity(e->model), size);
		goto fail;
	}
	switch (c->backing) {
	case QS_EMU_RAM:
		/* Reserved lazily: only written pages cost memory. */
		e->ram = mmap(NULL, size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (e->ram == MAP_FAILED) {
			e->ram = NULL;
			ret = emu_err(err, errlen, -errno,
				      "emulated drive: cannot map %llu bytes of memory for its "
				      "data: %s; use a smaller size or a file", size,
				      strerror(errno));
			goto fail;
		}
		e->ram_len = size;
		break;
	case QS_EMU_FILE: {
		char ferr[512];

		ret = qs_uvol_open(&e->file, loop, c->path,
				   QS_UVOL_CREATE | QS_UVOL_BUFFERED_OK | QS_UVOL_EXCL,
				   size, ferr, sizeof(ferr));
		if (ret < 0) {
			emu_err(err, errlen, ret, "emulated drive: %s", ferr);
			goto fail;
		}
		if (e->file->vol.size < size) {
			ret = emu_err(err, errlen, -EINVAL,
				      "emulated drive: %s holds %llu bytes, less than the size "
				      "%llu", c->path, (unsigned long long)e->file->vol.size,
				      size);
			goto fail;
		}
		break;
	}
	case QS_EMU_NONE:
		break;
	default:
		ret = emu_err(err, errlen, -EINVAL, "emulated drive: backing %d unknown",
			      (int)c->backing);
		goto fail;
	}
	switch (c->precondition) {
	case QS_EMU_PRECOND_SEQ:
		e->fill_ns = qs_model_fill_seq(e->model, 0, 0, qs_model_capacity(e->model));
		break;
	case QS_EMU_PRECOND_RANDOM:
		e->fill_ns = qs_model_fill_random(e->model, 0, 0, qs_model_capacity(e->model),
						  c->seed);
		break;
	case QS_EMU_PRECOND_NONE:
		e->fill_ns = 0;
		break;
	default:
		ret = emu_err(err, errlen, -EINVAL, "emulated drive: precondition %d unknown",
			      (int)c->precondition);
		goto fail;
	}
	qs_model_get_counters(e->model, &e->base);
	/* The model's "now" is the end of its fill. */
	mono = qs_henv_now_ns();
	e->delta = (int64_t)e->fill_ns - (int64_t)mono;
	e->model_volatile = !p->plp;
	e->vol.ops = &emu_ops;
	e->vol.ctx = e;
	e->vol.size = size;
	e->vol.flags = p->plp ? 0 : QS_VOL_VOLATILE_CACHE;
	if (e->file && (e->file->vol.flags & QS_VOL_VOLATILE_CACHE))
		e->vol.flags |= QS_VOL_VOLATILE_CACHE;
	*out = e;
	return 0;
fail:
	qs_emu_close(e);
	return ret;
}

void qs_emu_close(struct qs_emu *e)
{
	if (!e)
		return;
	qs_uloop_timer_cancel(e->loop, &e->timer);
	/* Only after the loop is gone can requests remain: drop them. */
	while (e->live) {
		struct emu_req *r = e->live;

		e->live = r->next;
		free(r);
	}
	free(e->heap);
	if (e->ram)
		munmap(e->ram, e->ram_len);
	qs_uvol_close(e->file);
	qs_model_free(e->model);
	free(e);
}

struct qs_vol *qs_emu_vol(struct qs_emu *e)
{
	return &e->vol;
}

uint64_t qs_emu_inflight(const struct qs_emu *e)
{
	return e->inflight;
}

const struct qs_model *qs_emu_model(const struct qs_emu *e)
{
	return e->model;
}

uint64_t qs_emu_fill_ns(const struct qs_emu *e)
{
	return e->fill_ns;
}

void qs_emu_get_stats(const struct qs_emu *e, struct qs_emu_stats *s)
{
	struct qs_model_counters now;
	const uint64_t *b = (const uint64_t *)&e->base;
	uint64_t *n = (uint64_t *)&now;

	_Static_assert(sizeof(now) % sizeof(uint64_t) == 0, "counters are uint64_t");
	*s = e->st;
	qs_model_get_counters(e->model, &now);
	/* What the drive did since the fill: the fill is not the workload's. */
	for (size_t i = 0; i < sizeof(now) / sizeof(uint64_t); i++)
		n[i] -= b[i];
	s->model = now;
}

void qs_emu_reset_late_max(struct qs_emu *e)
{
	e->st.late_ns_max = 0;
}
