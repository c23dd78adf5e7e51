/* SPDX-License-Identifier: MIT */
/*
 * Window deltas of counters: the figures of a measured window are the
 * difference of two snapshots (end of ramp, end of window). Shared by the
 * simulated runs (bench/run.c) and the real-time ones (bench/rt.c) so that
 * both count every field the same way.
 */
#ifndef QS_BENCH_DELTA_H
#define QS_BENCH_DELTA_H

#include "qlcshape/engine.h"

#include "host/model.h"

/*
 * d = b - a for every counter of the engine statistics; the gauges
 * (cached_blocks, dirty_ius, log_blocks, log_used_blocks, index_bytes,
 * inflight, failed, mem...) are b's. a must be the earlier snapshot. d
 * may not alias a or b.
 */
void qs_delta_engine_stats(struct qs_engine_stats *d, const struct qs_engine_stats *a,
			   const struct qs_engine_stats *b);

/* d = b - a for every device model counter (all are counters). */
void qs_delta_model_counters(struct qs_model_counters *d, const struct qs_model_counters *a,
			     const struct qs_model_counters *b);

#endif
