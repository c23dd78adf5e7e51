/* SPDX-License-Identifier: MIT */
/* qs_uloop: a single-threaded io_uring completion dispatcher (see header). */
#include "host/env.h"
#include "host/uloop.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int qs_uloop_init(struct qs_uloop *l, unsigned entries)
{
	struct io_uring_params p;
	int ret;

	memset(l, 0, sizeof(*l));
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	if (entries < 8)
		entries = 8;
	p.cq_entries = entries * 2;
	ret = io_uring_queue_init_params(entries, &l->ring, &p);
	if (ret < 0)
		return ret;
	l->deferred_tail = &l->deferred;
	l->waiting_tail = &l->waiting;
	l->ready = true;
	return 0;
}

void qs_uloop_exit(struct qs_uloop *l)
{
	if (!l->ready)
		return;
	io_uring_queue_exit(&l->ring);
	l->ready = false;
}

int qs_uloop_fd(const struct qs_uloop *l)
{
	return l->ring.ring_fd;
}

int qs_uloop_submit(struct qs_uloop *l)
{
	int ret;

	if (!l->pending_sqes)
		return 0;
	ret = io_uring_submit(&l->ring);
	if (ret > 0)
		l->pending_sqes -= (unsigned)ret > l->pending_sqes ? l->pending_sqes : (unsigned)ret;
	return ret;
}

struct io_uring_sqe *qs_uloop_sqe(struct qs_uloop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe) {
		/* The SQ ring is full: the kernel consumes SQEs at submit. */
		if (qs_uloop_submit(l) < 0)
			return NULL;
		sqe = io_uring_get_sqe(&l->ring);
		if (!sqe)
			return NULL;
	}
	l->pending_sqes++;
	return sqe;
}

static void uloop_append(struct qs_uop ***tail, struct qs_uop *op)
{
	op->next = NULL;
	**tail = op;
	*tail = &op->next;
}

void qs_uloop_wait_sqe(struct qs_uloop *l, struct qs_uop *op)
{
	uloop_append(&l->waiting_tail, op);
}

void qs_uloop_defer(struct qs_uloop *l, struct qs_uop *op, int res)
{
	op->res = res;
	uloop_append(&l->deferred_tail, op);
}

/* Run the deferred list as it stands now; new deferrals wait for next time. */
static int uloop_run_deferred(struct qs_uloop *l)
{
	struct qs_uop *op = l->deferred;
	int n = 0;

	l->deferred = NULL;
	l->deferred_tail = &l->deferred;
	while (op) {
		struct qs_uop *next = op->next;
		op->done(op, op->res);
		op = next;
		n++;
	}
	return n;
}

static int uloop_run_cqes(struct qs_uloop *l)
{
	struct io_uring_cqe *cqe;
	int n = 0;

	while (io_uring_peek_cqe(&l->ring, &cqe) == 0) {
		struct qs_uop *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		/* Consume first: the callback may submit and reap again. */
		io_uring_cqe_seen(&l->ring, cqe);
		if (op) {
			op->done(op, res);
			n++;
		}
	}
	return n;
}

static void uloop_run_waiting(struct qs_uloop *l)
{
	struct qs_uop *op = l->waiting;

	l->waiting = NULL;
	l->waiting_tail = &l->waiting;
	while (op) {
		struct qs_uop *next = op->next;
		op->retry(op, 0);
		op = next;
	}
}

void qs_uloop_timer_cancel(struct qs_uloop *l, struct qs_utimer *t)
{
	struct qs_utimer **pp;

	if (!t->armed)
		return;
	for (pp = &l->timers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	t->next = NULL;
	t->armed = false;
}

void qs_uloop_timer_set(struct qs_uloop *l, struct qs_utimer *t, uint64_t deadline_ns)
{
	if (!t->armed) {
		t->next = l->timers;
		l->timers = t;
		t->armed = true;
	}
	t->deadline_ns = deadline_ns;
}

/* How long the timers let the loop sleep from now: UINT64_MAX without any. */
static uint64_t uloop_timer_wait(const struct qs_uloop *l, uint64_t now)
{
	uint64_t w = UINT64_MAX;

	for (const struct qs_utimer *t = l->timers; t; t = t->next) {
		uint64_t d = t->deadline_ns > now ? t->deadline_ns - now : 0;

		if (d < w)
			w = d;
	}
	return w;
}

/* Fire the timers that are due; a fire() may re-arm its timer (next time). */
static int uloop_run_timers(struct qs_uloop *l)
{
	struct qs_utimer *due = NULL, **pp = &l->timers;
	uint64_t now;
	int n = 0;

	if (!l->timers)
		return 0;
	now = qs_henv_now_ns();
	while (*pp) {
		struct qs_utimer *t = *pp;

		if (t->deadline_ns <= now) {
			*pp = t->next;
			t->armed = false;
			t->next = due;
			due = t;
		} else {
			pp = &t->next;
		}
	}
	while (due) {
		struct qs_utimer *t = due;

		due = t->next;
		t->next = NULL;
		t->fire(t);
		n++;
	}
	return n;
}

int qs_uloop_run(struct qs_uloop *l, uint64_t timeout_ns)
{
	struct io_uring_cqe *cqe;
	int n, ret;

	ret = qs_uloop_submit(l);
	if (ret < 0 && ret != -EBUSY && ret != -EAGAIN)
		return ret;
	if (timeout_ns && l->timers) {
		uint64_t w = uloop_timer_wait(l, qs_henv_now_ns());

		if (w < timeout_ns)
			timeout_ns = w;
	}
	if (!l->deferred && timeout_ns && io_uring_peek_cqe(&l->ring, &cqe) != 0) {
		if (timeout_ns == UINT64_MAX) {
			ret = io_uring_wait_cqe(&l->ring, &cqe);
		} else {
			struct __kernel_timespec ts = {
				.tv_sec = (long long)(timeout_ns / 1000000000u),
				.tv_nsec = (long long)(timeout_ns % 1000000000u),
			};
			ret = io_uring_wait_cqe_timeout(&l->ring, &cqe, &ts);
		}
		if (ret < 0 && ret != -ETIME)
			return ret;
	}
	n = uloop_run_deferred(l);
	n += uloop_run_cqes(l);
	n += uloop_run_timers(l);
	if (l->waiting)
		uloop_run_waiting(l);
	return n;
}

int qs_uloop_reap(struct qs_uloop *l)
{
	return qs_uloop_run(l, 0);
}
