/* SPDX-License-Identifier: MIT */
/*
 * Whole-IU QLC operations ("qops"): bypass writes of whole IUs and the
 * whole-IU part of discards go straight to the QLC, ordered against cached
 * copies and destage as described below.
 */
#include <errno.h>
#include <string.h>

#include "engine_int.h"

/*
 * Ordering: a qop holds every IU it covers busy, so no destage of those IUs
 * runs during it (a destage landing after it would put older data on the
 * QLC). The QLC op is made durable (FUA, or discard then flush) before the
 * INVAL record that drops the older cached copies is appended: if that
 * record were durable first, a crash could leave neither the cached copy
 * nor the new data. The client is acknowledged when the INVAL record is in
 * the log; cached copies are dropped at that moment, in log order.
 */
static void qop_cb(void *arg, int res);

static bool qop_can_start(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		if (busy_has(e, r->qop_iu + i))
			return false;
	return true;
}

static void qop_start(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		busy_add(e, r->qop_iu + i);
	uint64_t off = r->qop_iu * e->conf.iu_bytes, len = r->qop_ius * e->conf.iu_bytes;
	r->qop_stage = QOP_QLC;
	if (r->type == REQ_WRITE) {
		struct iovec *iov = &r->iov1;
		iov->iov_base = r->buf;
		iov->iov_len = len;
		eng_qlc_count_write(e, off, len);
		e->st.bypass_writes++;
		e->st.bypass_bytes += len;
		e->qlc->ops->write(e->qlc->ctx, off, iov, 1,
				   (e->qlc->flags & QS_VOL_VOLATILE_CACHE) ? QS_WRITE_FUA : 0,
				   qop_cb, r);
	} else {
		e->st.qlc_discards++;
		e->qlc->ops->discard(e->qlc->ctx, off, len, qop_cb, r);
	}
}

void eng_qop_kick(struct qs_engine *e)
{
	struct req **pp = &e->qop_wait_head, *last = NULL;
	while (*pp) {
		struct req *r = *pp;
		if (qop_can_start(e, r)) {
			*pp = r->qop_next;
			qop_start(e, r);
		} else {
			last = r;
			pp = &r->qop_next;
		}
	}
	e->qop_wait_tail = last;
}

void eng_qop_submit(struct qs_engine *e, struct req *r, uint64_t iu, uint64_t ius)
{
	r->qop_iu = iu;
	r->qop_ius = ius;
	r->pending++;
	if (!e->qop_wait_head && qop_can_start(e, r)) {
		qop_start(e, r);
		return;
	}
	r->qop_next = NULL;
	if (e->qop_wait_tail)
		e->qop_wait_tail->qop_next = r;
	else
		e->qop_wait_head = r;
	e->qop_wait_tail = r;
}

void eng_qop_release(struct qs_engine *e, struct req *r)
{
	for (uint64_t i = 0; i < r->qop_ius; i++)
		busy_del(e, r->qop_iu + i);
	eng_qop_kick(e);
	dst_kick(e);
}

/* One INVAL extent of r's qop is in the log (res 0) or failed. When the
 * last one is done the IUs are released and the qop's part completes. */
void eng_qop_finish(struct qs_engine *e, struct req *r, int res)
{
	r->inval_pending--;
	if (res < 0 && !r->result)
		r->result = res;
	if (!r->inval_pending && !r->inval_todo && r->qop_stage != QOP_DONE) {
		r->qop_stage = QOP_DONE;
		eng_qop_release(e, r);
		eng_req_part_done(e, r, res);
	}
	eng_req_part_done(e, r, res); /* the extent itself */
}

static void qop_cb(void *arg, int res)
{
	struct req *r = arg;
	struct qs_engine *e = r->owner;
	eng_enter(e);
	if (res < 0) {
		e->st.qlc_errors++;
		eng_log(e, QS_LOG_ERR, "QLC %s of IUs %llu+%llu failed: %s",
			r->type == REQ_WRITE ? "write" : "discard",
			(unsigned long long)r->qop_iu, (unsigned long long)r->qop_ius,
			strerror(-res));
		r->qop_stage = QOP_DONE;
		eng_qop_release(e, r);
		eng_req_part_done(e, r, res);
	} else if (r->qop_stage == QOP_QLC && r->type != REQ_WRITE &&
		   (e->qlc->flags & QS_VOL_VOLATILE_CACHE)) {
		r->qop_stage = QOP_QLC_FLUSH;
		e->st.qlc_flushes++;
		e->qlc->ops->flush(e->qlc->ctx, qop_cb, r);
	} else {
		r->qop_stage = QOP_INVAL;
		r->inval_todo = true;
		r->inval_done = 0;
		if (r->waiting) {
			/* Still waiting for room for its tombstones: the INVAL
			 * extent is appended with them. */
			goto out;
		}
		r->pending++; /* the append itself */
		eng_space_wait(e, r);
		eng_space_kick(e); /* header-only: need not wait behind writes */
	}
out:
	eng_leave_deliver(e);
}
