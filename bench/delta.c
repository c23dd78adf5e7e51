/* SPDX-License-Identifier: MIT */
/* Window deltas of engine and model counters (see delta.h). */
#include "delta.h"

#define DELTA(f) (d->f = b->f - a->f)

void qs_delta_engine_stats(struct qs_engine_stats *d, const struct qs_engine_stats *a,
			   const struct qs_engine_stats *b)
{
	*d = *b; /* gauges (cached_blocks, dirty_ius, log_*_blocks...) at the end */
	DELTA(client_reads);
	DELTA(client_read_bytes);
	DELTA(client_writes);
	DELTA(client_write_bytes);
	DELTA(client_flushes);
	DELTA(client_discards);
	DELTA(client_discard_bytes);
	DELTA(client_errors);
	DELTA(log_appends);
	DELTA(log_append_bytes);
	DELTA(log_read_bytes);
	DELTA(log_flushes);
	DELTA(qlc_writes);
	DELTA(qlc_write_bytes);
	DELTA(qlc_iu_whole_writes);
	DELTA(qlc_reads);
	DELTA(qlc_read_bytes);
	DELTA(qlc_discards);
	DELTA(qlc_flushes);
	DELTA(read_fill_bytes);
	DELTA(bypass_writes);
	DELTA(bypass_bytes);
	DELTA(destage_ius);
	DELTA(destage_full_ius);
	DELTA(destage_partial_ius);
	DELTA(destage_bytes);
	DELTA(checkpoints);
	DELTA(throttled_writes);
	DELTA(fast_errors);
	DELTA(qlc_errors);
	DELTA(destage_retries);
	DELTA(paced_writes);
	DELTA(gc_victims);
	DELTA(gc_read_bytes);
	DELTA(gc_write_bytes);
	DELTA(gc_moved_blocks);
	DELTA(map_page_writes);
	DELTA(map_hits);
	DELTA(map_misses);
	DELTA(map_page_reads);
}

void qs_delta_model_counters(struct qs_model_counters *d, const struct qs_model_counters *a,
			     const struct qs_model_counters *b)
{
	DELTA(host_reads);
	DELTA(host_read_bytes);
	DELTA(host_writes);
	DELTA(host_write_bytes);
	DELTA(host_flushes);
	DELTA(host_discards);
	DELTA(host_discard_bytes);
	DELTA(nand_read_bytes);
	DELTA(nand_prog_bytes);
	DELTA(host_prog_bytes);
	DELTA(partial_ius);
	DELTA(rmw);
	DELTA(buffer_merges);
	DELTA(gc_runs);
	DELTA(gc_moves);
	DELTA(erases);
}
