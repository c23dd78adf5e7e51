/* SPDX-License-Identifier: MIT */
/* The control socket's statistics answers, text and JSON: see stats.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "outbuf.h"
#include "stats.h"

#define U(x) ((unsigned long long)(x))

static double st_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Mean lateness of the emulated drive's completions, microseconds. */
static double st_late_us(const struct qs_emu_stats *es)
{
	return es->completions ? (double)es->late_ns_sum / (double)es->completions / 1e3 : 0.0;
}

/* GC write amplification: QLC bytes written by destage and GC over destage's. */
static double st_gc_waf(const struct qs_engine_stats *e)
{
	return e->destage_bytes ? (double)(e->destage_bytes + e->gc_write_bytes) /
					  (double)e->destage_bytes
				: 1.0;
}

static void st_json_engine(struct qs_out *o, const struct qs_stats_view *v)
{
	const struct qs_engine_stats *e = v->engine;

	qs_out_printf(o, ",\n \"cache\": {\"cached_blocks\": %llu, \"dirty_ius\": %llu, "
	       "\"index_bytes\": %llu},\n", U(e->cached_blocks), U(e->dirty_ius),
	       U(e->index_bytes));
	qs_out_printf(o, " \"log\": {\"blocks\": %llu, \"used_blocks\": %llu, \"used_pct\": %.1f, "
	       "\"appends\": %llu, \"append_bytes\": %llu, \"flushes\": %llu, "
	       "\"throttled_writes\": %llu, \"paced_writes\": %llu},\n", U(e->log_blocks),
	       U(e->log_used_blocks), st_pct(e->log_used_blocks, e->log_blocks), U(e->log_appends),
	       U(e->log_append_bytes), U(e->log_flushes), U(e->throttled_writes),
	       U(e->paced_writes));
	qs_out_printf(o, " \"destage\": {\"ius\": %llu, \"full_ius\": %llu, \"partial_ius\": %llu, "
	       "\"bytes\": %llu, \"mbs\": %.3f, \"retries\": %llu},\n", U(e->destage_ius),
	       U(e->destage_full_ius), U(e->destage_partial_ius), U(e->destage_bytes),
	       v->rate.destage_mbs, U(e->destage_retries));
	qs_out_printf(o, " \"qlc\": {\"writes\": %llu, \"write_bytes\": %llu, \"whole_iu_writes\": "
	       "%llu, \"whole_iu_pct\": %.2f, \"reads\": %llu, \"read_bytes\": %llu, "
	       "\"read_fill_bytes\": %llu, \"bypass_writes\": %llu},\n", U(e->qlc_writes),
	       U(e->qlc_write_bytes), U(e->qlc_iu_whole_writes),
	       st_pct(e->qlc_iu_whole_writes, e->qlc_writes), U(e->qlc_reads),
	       U(e->qlc_read_bytes), U(e->read_fill_bytes), U(e->bypass_writes));
	qs_out_printf(o, " \"placement\": \"%s\",\n", e->placement == QS_PLACE_LOG ? "log" : "inplace");
	if (e->placement == QS_PLACE_LOG)
		qs_out_printf(o, " \"bands\": {\"total\": %llu, \"free\": %llu, \"open\": %llu, "
		       "\"full\": %llu, \"bytes\": %llu, \"op_pct\": %u},\n"
		       " \"gc\": {\"victims\": %llu, \"read_bytes\": %llu, \"write_bytes\": %llu, "
		       "\"moved_blocks\": %llu, \"waf\": %.3f},\n"
		       " \"map\": {\"bytes\": %llu, \"mapped_blocks\": %llu, \"page_writes\": %llu, "
		       "\"from_clean_state\": %s, \"dram_limit\": %llu, \"resident_bytes\": %llu, "
		       "\"peak_bytes\": %llu, \"region_bytes\": %llu, \"hits\": %llu, "
		       "\"misses\": %llu, \"page_reads\": %llu, \"kept\": %llu, "
		       "\"kept_applied\": %llu, \"kept_page_reads\": %llu, \"kept_stale\": %llu},\n"
		       " \"p2l\": {\"page_writes\": %llu, \"page_reads\": %llu, "
		       "\"gc_stuck_blocks\": %llu},\n",
		       U(e->bands), U(e->bands_free), U(e->bands_open), U(e->bands_full),
		       U(e->band_bytes), e->op_pct, U(e->gc_victims), U(e->gc_read_bytes),
		       U(e->gc_write_bytes), U(e->gc_moved_blocks), st_gc_waf(e), U(e->map_bytes),
		       U(e->mapped_blocks), U(e->map_page_writes), e->clean_state ? "true" : "false",
		       U(e->map_dram_limit), U(e->map_resident_bytes), U(e->map_peak_bytes),
		       U(e->map_region_bytes), U(e->map_hits), U(e->map_misses),
		       U(e->map_page_reads), U(e->map_kept), U(e->map_kept_applied),
		       U(e->map_kept_reads), U(e->map_kept_stale), U(e->p2l_page_writes),
		       U(e->p2l_page_reads), U(e->gc_stuck_blocks));
	qs_out_printf(o, " \"memory\": {\"index\": %llu, \"dirty\": %llu, \"map_pages\": %llu, "
	       "\"map_meta\": %llu, \"qlc_blocks\": %llu, \"bands\": %llu, \"other\": %llu, "
	       "\"total\": %llu},\n", U(e->mem.index), U(e->mem.dirty), U(e->mem.map_pages),
	       U(e->mem.map_meta), U(e->mem.qlc_blocks), U(e->mem.bands), U(e->mem.other),
	       U(e->mem.total));
	qs_out_printf(o, " \"errors\": {\"fast\": %llu, \"qlc\": %llu, \"client\": %llu, "
	       "\"failed\": %s}", U(e->fast_errors), U(e->qlc_errors), U(e->client_errors),
	       e->failed ? "true" : "false");
}

int qs_stats_render_json(const struct qs_stats_view *v, char *out, size_t len)
{
	struct qs_out o = {.out = out, .len = len};
	const struct qs_prom_frontend *f = v->frontend;

	if (!len)
		return -ENOSPC;
	out[0] = 0;
	qs_out_printf(&o, "{\"backend\": \"%s\", \"interval_s\": %.3f,\n"
	       " \"client\": {\"reads\": %llu, \"read_bytes\": %llu, \"writes\": %llu, "
	       "\"write_bytes\": %llu, \"flushes\": %llu, \"discards\": %llu, "
	       "\"write_zeroes\": %llu, \"errors\": %llu, \"inflight\": %u, "
	       "\"read_iops\": %.1f, \"write_iops\": %.1f, \"read_mbs\": %.3f, "
	       "\"write_mbs\": %.3f}", v->backend, v->interval_s, U(f->reads), U(f->read_bytes),
	       U(f->writes), U(f->write_bytes), U(f->flushes), U(f->discards),
	       U(f->write_zeroes), U(f->errors), f->inflight, v->rate.read_iops,
	       v->rate.write_iops, v->rate.read_mbs, v->rate.write_mbs);
	if (v->engine)
		st_json_engine(&o, v);
	if (v->emu)
		qs_out_printf(&o, ",\n \"emu\": {\"writes\": %llu, \"write_bytes\": %llu, \"reads\": %llu, "
		       "\"partial_iu_writes\": %llu, \"rmw\": %llu, \"nand_prog_bytes\": %llu, "
		       "\"late_us_mean\": %.1f, \"late_us_max\": %.1f}", U(v->emu->writes),
		       U(v->emu->write_bytes), U(v->emu->reads), U(v->emu->model.partial_ius),
		       U(v->emu->model.rmw), U(v->emu->model.nand_prog_bytes),
		       st_late_us(v->emu), (double)v->emu->late_ns_max / 1e3);
	qs_out_printf(&o, "}\n");
	return o.full ? -ENOSPC : 0;
}

static void st_text_engine(struct qs_out *o, const struct qs_stats_view *v)
{
	const struct qs_engine_stats *e = v->engine;

	qs_out_printf(o, "cache            %llu cached blocks, %llu dirty IUs, %llu index bytes\n",
	       U(e->cached_blocks), U(e->dirty_ius), U(e->index_bytes));
	qs_out_printf(o, "log              %llu of %llu blocks used (%.1f%%), %llu appends, %llu "
	       "flushes, %llu throttled writes, %llu paced\n", U(e->log_used_blocks),
	       U(e->log_blocks), st_pct(e->log_used_blocks, e->log_blocks), U(e->log_appends),
	       U(e->log_flushes), U(e->throttled_writes), U(e->paced_writes));
	qs_out_printf(o, "destage          %llu IUs (%llu full, %llu partial), %.3f MB/s (last %.1f s), "
	       "%llu retries\n", U(e->destage_ius), U(e->destage_full_ius),
	       U(e->destage_partial_ius), v->rate.destage_mbs, v->interval_s,
	       U(e->destage_retries));
	qs_out_printf(o, "qlc              %llu writes (%llu bytes), %llu whole-IU (%.2f%%), %llu reads, "
	       "%llu read-fill bytes, %llu bypass writes\n", U(e->qlc_writes),
	       U(e->qlc_write_bytes), U(e->qlc_iu_whole_writes),
	       st_pct(e->qlc_iu_whole_writes, e->qlc_writes), U(e->qlc_reads),
	       U(e->read_fill_bytes), U(e->bypass_writes));
	if (e->placement == QS_PLACE_LOG)
		qs_out_printf(o, "bands            %llu of %llu free, %llu open, %llu full, %llu bytes "
		       "each, op %u%%\n"
		       "gc               %llu victims, %llu bytes read, %llu written, %llu blocks "
		       "moved, write amplification %.3f\n"
		       "map              %llu bytes of DRAM, %llu blocks mapped, %llu page writes; "
		       "valid bitmap %s at start\n"
		       "map pages        %llu of %llu bytes in DRAM (peak %llu, limit %llu), "
		       "%llu hits, %llu misses, %llu page reads\n"
		       "kept changes     %llu kept, %llu applied, %llu page reads, %llu old "
		       "values found stale by GC\n"
		       "p2l pages        %llu written, %llu read; %llu valid blocks GC could not "
		       "place\n",
		       U(e->bands_free), U(e->bands), U(e->bands_open), U(e->bands_full),
		       U(e->band_bytes), e->op_pct, U(e->gc_victims), U(e->gc_read_bytes),
		       U(e->gc_write_bytes), U(e->gc_moved_blocks), st_gc_waf(e), U(e->map_bytes),
		       U(e->mapped_blocks), U(e->map_page_writes),
		       e->clean_state ? "read from the clean state" : "rebuilt from the map",
		       U(e->map_resident_bytes), U(e->map_region_bytes / 2), U(e->map_peak_bytes),
		       U(e->map_dram_limit), U(e->map_hits), U(e->map_misses), U(e->map_page_reads),
		       U(e->map_kept), U(e->map_kept_applied), U(e->map_kept_reads),
		       U(e->map_kept_stale), U(e->p2l_page_writes), U(e->p2l_page_reads),
		       U(e->gc_stuck_blocks));
	qs_out_printf(o, "engine dram      %llu bytes: index %llu, dirty-IU records %llu, map pages "
	       "%llu, per map page %llu, per QLC block %llu, bands %llu, buffers and other %llu\n",
	       U(e->mem.total), U(e->mem.index), U(e->mem.dirty), U(e->mem.map_pages),
	       U(e->mem.map_meta), U(e->mem.qlc_blocks), U(e->mem.bands), U(e->mem.other));
	qs_out_printf(o, "errors           fast %llu, qlc %llu, client %llu%s\n", U(e->fast_errors),
	       U(e->qlc_errors), U(e->client_errors),
	       e->failed ? "; LOG FAILED: writes return EIO" : "");
}

int qs_stats_render_text(const struct qs_stats_view *v, char *out, size_t len)
{
	struct qs_out o = {.out = out, .len = len};
	const struct qs_prom_frontend *f = v->frontend;
	const struct qs_emu_stats *es = v->emu;

	if (!len)
		return -ENOSPC;
	out[0] = 0;
	qs_out_printf(&o, "backend          %s\n"
	       "client           %llu reads (%llu bytes), %llu writes (%llu bytes), %llu flushes, "
	       "%llu discards, %llu write-zeroes, %llu errors, %u in flight\n"
	       "client rate      %.1f read IOPS, %.1f write IOPS, %.3f MB/s read, %.3f MB/s write "
	       "(last %.1f s)\n", v->backend, U(f->reads), U(f->read_bytes), U(f->writes),
	       U(f->write_bytes), U(f->flushes), U(f->discards), U(f->write_zeroes), U(f->errors),
	       f->inflight, v->rate.read_iops, v->rate.write_iops, v->rate.read_mbs,
	       v->rate.write_mbs, v->interval_s);
	if (v->engine)
		st_text_engine(&o, v);
	/* The emulated drive's own view: what shaping spares it. */
	if (es)
		qs_out_printf(&o, "emulated qlc     %llu writes, %llu partial-IU (%llu read-modify-writes "
		       "in the drive), NAND write amplification %.2f, completions %.0f us late on "
		       "average (max %.1f ms)\n", U(es->writes), U(es->model.partial_ius),
		       U(es->model.rmw),
		       es->write_bytes ? (double)es->model.nand_prog_bytes / (double)es->write_bytes
				       : 0.0,
		       st_late_us(es), (double)es->late_ns_max / 1e6);
	return o.full ? -ENOSPC : 0;
}
