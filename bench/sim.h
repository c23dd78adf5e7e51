/* SPDX-License-Identifier: MIT */
/*
 * Deterministic discrete-event simulation on a virtual clock.
 *
 * A struct qs_sim owns an event heap ordered by (time, sequence number), so
 * events at the same time run in the order they were scheduled, and a run is
 * a pure function of its inputs. It provides:
 *  - a struct qs_env whose now_ns is the virtual clock and whose timer_set
 *    schedules one call of the callback registered with
 *    qs_sim_set_timer_cb() (the bench calls qs_engine_timer from it);
 *  - struct qs_sim_vol, a struct qs_vol over a device model (include/host/model.h):
 *    each op asks the model for its completion time and schedules the
 *    completion callback as an event, never calling it before returning
 *    (include/qlcshape/vol.h contract).
 *
 * Everything is single-threaded: call it from one thread only.
 */
#ifndef QS_BENCH_SIM_H
#define QS_BENCH_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "qlcshape/env.h"
#include "qlcshape/vol.h"

#include "host/model.h"

struct qs_sim;

/* A new simulation at virtual time 0. NULL with errno on failure. */
struct qs_sim *qs_sim_new(void);
/* Free the simulation; pending events are dropped without being called. */
void qs_sim_free(struct qs_sim *s);

/* The environment (virtual clock, timer, malloc-based memory, log to stderr
 * at QS_LOG_WARN and above). Valid as long as s. */
const struct qs_env *qs_sim_env(struct qs_sim *s);

/* The callback that env->timer_set deadlines fire (e.g. a wrapper calling
 * qs_engine_timer). fn runs from the event loop at the deadline. */
void qs_sim_set_timer_cb(struct qs_sim *s, void (*fn)(void *arg), void *arg);

/* Current virtual time in ns. */
uint64_t qs_sim_now(const struct qs_sim *s);

/*
 * Schedule fn(arg, result) at virtual time t (clamped to now: never in the
 * past). Returns 0 or -ENOMEM. fn runs from qs_sim_run*(), never from here.
 */
int qs_sim_schedule(struct qs_sim *s, uint64_t t, qs_io_cb fn, void *arg, int result);

/* Run events until none is left or qs_sim_stop() is called; returns the
 * number of events run. */
uint64_t qs_sim_run(struct qs_sim *s);
/* Run every event with time <= t, then set the clock to t (if later). */
uint64_t qs_sim_run_until(struct qs_sim *s, uint64_t t);
/* Make the current qs_sim_run*() return after the event being run. */
void qs_sim_stop(struct qs_sim *s);
/* Pending events. */
uint64_t qs_sim_pending(const struct qs_sim *s);

/* What a model-backed volume does with data. */
enum qs_sim_data {
	/* Timing only; read buffers are left untouched (benchmarks that never
	 * look at data, e.g. calibrate, may pass one small dummy buffer). */
	QS_SIM_DATA_NONE = 0,
	/* Timing only; reads return zeroes (the buffers are cleared). */
	QS_SIM_DATA_ZERO = 1,
	/* Written data is kept in a sparse RAM store of 4 KiB blocks; reads
	 * return it, zeroes where never written or discarded. */
	QS_SIM_DATA_STORE = 2,
};

/*
 * A volume over model m driven by s, handling data as mode says. Writes and
 * discards take effect in the store when they complete; reads copy (or
 * clear) their buffers when they complete. The volume does not own s or m,
 * which must outlive it. NULL with errno on failure.
 */
struct qs_sim_vol *qs_sim_vol_new(struct qs_sim *s, struct qs_model *m,
				  enum qs_sim_data mode);
void qs_sim_vol_free(struct qs_sim_vol *v);
/* The struct qs_vol to give the engine; valid as long as v. */
struct qs_vol *qs_sim_vol_vol(struct qs_sim_vol *v);
/* Requests submitted and not yet completed. */
uint64_t qs_sim_vol_inflight(const struct qs_sim_vol *v);

/*
 * Power to v: with on false, a power cut. Every request in flight, and
 * every one submitted until power is back, is lost: none takes effect in
 * the store and none calls back (the caller abandons whatever submitted
 * them). The models still charge their time, so running the simulation
 * until no event is left brings the drive to idle, as after a restart.
 * Writes that completed before the cut stay: the model has no volatile
 * cache to lose (the fast-tier profiles have power-loss protection).
 */
void qs_sim_vol_set_power(struct qs_sim_vol *v, bool on);

/*
 * CPU seconds this thread spent moving data to and from v's store
 * (QS_SIM_DATA_STORE; 0 otherwise): work a real device does by DMA, which
 * a measurement of the engine's CPU subtracts. Counted only while
 * qs_sim_vol_count_cpu says (off at create): it reads the thread's CPU
 * clock twice a request, which cost about 15% of a run that keeps data.
 */
double qs_sim_vol_store_cpu_s(const struct qs_sim_vol *v);
void qs_sim_vol_count_cpu(struct qs_sim_vol *v, bool on);

#endif
