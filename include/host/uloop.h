/* SPDX-License-Identifier: MIT */
/*
 * qs_uloop: one io_uring shared by everything a host thread drives (the
 * io_uring volumes, the ublk queues, the daemon's signal and control fds),
 * with completions dispatched by pointer.
 *
 * Every submission carries a struct qs_uop in its user_data; when its CQE is
 * reaped, op->done(op, cqe->res) runs. Nothing is ever completed from inside
 * a submitting call: errors found before an SQE is issued are queued with
 * qs_uloop_defer() and delivered by the next qs_uloop_run(), like any CQE.
 * This is what struct qs_vol's contract ("the op must not invoke the
 * callback before it returns") asks of a volume.
 *
 * A loop belongs to one thread: every call, and every done callback, happens
 * on the thread that calls qs_uloop_run().
 */
#ifndef QS_HOST_ULOOP_H
#define QS_HOST_ULOOP_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

struct qs_uop;
typedef void (*qs_uop_fn)(struct qs_uop *op, int res);

struct qs_uop {
	qs_uop_fn done;	      /* called with the CQE's res, or the deferred res */
	qs_uop_fn retry;      /* called (res 0) when SQEs are free again */
	struct qs_uop *next;  /* deferred / waiting list link (loop-owned) */
	int res;	      /* deferred result (loop-owned) */
};

/*
 * A deadline on the loop's thread without a kernel object (no SQE, no fd):
 * qs_uloop_run() shortens its wait to the earliest armed timer and calls
 * fire(t) once CLOCK_MONOTONIC has reached t's deadline. Used by volumes
 * that complete requests at a computed time (the emulated QLC). The owner
 * keeps the struct alive while it is armed.
 */
struct qs_utimer;
typedef void (*qs_utimer_fn)(struct qs_utimer *t);

struct qs_utimer {
	qs_utimer_fn fire;	 /* set by the owner before arming */
	uint64_t deadline_ns;	 /* CLOCK_MONOTONIC (loop-owned while armed) */
	struct qs_utimer *next;	 /* loop-owned */
	bool armed;		 /* loop-owned: read it, do not write it */
};

struct qs_uloop {
	struct io_uring ring;
	struct qs_uop *deferred, **deferred_tail;
	struct qs_uop *waiting, **waiting_tail;
	struct qs_utimer *timers; /* armed timers, unsorted (there are few) */
	unsigned pending_sqes; /* prepared, not yet submitted */
	bool ready;
};

/*
 * Set up the ring with room for at least entries SQEs (the completion queue
 * is twice that; the kernel keeps overflowing CQEs, IORING_FEAT_NODROP).
 * Returns 0 or -errno. The caller owns l and must qs_uloop_exit() it.
 */
int qs_uloop_init(struct qs_uloop *l, unsigned entries);
void qs_uloop_exit(struct qs_uloop *l);

/* The ring's file descriptor: pollable, readable when CQEs are waiting. */
int qs_uloop_fd(const struct qs_uloop *l);

/*
 * A free SQE, flushing prepared ones to the kernel if the queue is full.
 * NULL when none can be had now: the caller then parks its op with
 * qs_uloop_wait_sqe() and prepares it again from op->retry. The caller must
 * set the SQE's user_data to its op (io_uring_sqe_set_data) before the next
 * loop call.
 */
struct io_uring_sqe *qs_uloop_sqe(struct qs_uloop *l);

/* Park op until SQEs are free: op->retry(op, 0) runs from qs_uloop_run(). */
void qs_uloop_wait_sqe(struct qs_uloop *l, struct qs_uop *op);

/* Complete op with res from the next qs_uloop_run(), not before. */
void qs_uloop_defer(struct qs_uloop *l, struct qs_uop *op, int res);

/* Hand prepared SQEs to the kernel. Returns the number taken or -errno. */
int qs_uloop_submit(struct qs_uloop *l);

/*
 * Arm t to fire at deadline_ns (CLOCK_MONOTONIC, the clock of
 * qs_henv_now_ns), replacing its previous deadline if armed. t->fire runs
 * once, from a later qs_uloop_run(), never from this call. Disarm with
 * qs_uloop_timer_cancel() before freeing t; qs_uloop_exit() forgets armed
 * timers without firing them.
 */
void qs_uloop_timer_set(struct qs_uloop *l, struct qs_utimer *t, uint64_t deadline_ns);
void qs_uloop_timer_cancel(struct qs_uloop *l, struct qs_utimer *t);

/*
 * Submit what is prepared, then dispatch completions: deferred ones, every
 * CQE available, due timers, then parked submissions. If nothing was ready
 * and timeout_ns != 0, first wait for a CQE for up to timeout_ns
 * (UINT64_MAX: without limit), or until the earliest armed timer is due if
 * that comes first. Returns the number of callbacks and timers run (0 on
 * timeout) or -errno (-EINTR when a signal interrupted the wait).
 */
int qs_uloop_run(struct qs_uloop *l, uint64_t timeout_ns);

/* Dispatch whatever is complete without waiting: qs_uloop_run(l, 0). */
int qs_uloop_reap(struct qs_uloop *l);

#endif
