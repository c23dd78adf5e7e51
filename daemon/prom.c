/* SPDX-License-Identifier: MIT */
/* qs_prom: statistics in the Prometheus text exposition format. */
#include "outbuf.h"
#include "prom.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "qlcshape/vol.h"

/* A label value as the format wants it: \\, \" and \n escaped. */
static void pw_label_value(struct qs_out *w, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			qs_out_printf(w, "\\\\");
		else if (*v == '"')
			qs_out_printf(w, "\\\"");
		else if (*v == '\n')
			qs_out_printf(w, "\\n");
		else
			qs_out_printf(w, "%c", *v);
	}
}

/* Which family the last HELP/TYPE pair was written for: one pair per family. */
struct pfam {
	const char *last;
};

static void pw_family(struct qs_out *w, struct pfam *f, const char *name, const char *type,
		      const char *help)
{
	if (f->last && !strcmp(f->last, name))
		return;
	f->last = name;
	qs_out_printf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{config="...",key="val"} with the optional second label. */
static void pw_series(struct qs_out *w, const char *config, const char *name, const char *lkey,
		      const char *lval)
{
	qs_out_printf(w, "%s{config=\"", name);
	pw_label_value(w, config);
	qs_out_printf(w, "\"");
	if (lkey) {
		qs_out_printf(w, ",%s=\"", lkey);
		pw_label_value(w, lval);
		qs_out_printf(w, "\"");
	}
	qs_out_printf(w, "}");
}

static void pw_u64(struct qs_out *w, struct pfam *f, const char *config, const char *name,
		   const char *type, const char *help, const char *lkey, const char *lval,
		   uint64_t v)
{
	pw_family(w, f, name, type, help);
	pw_series(w, config, name, lkey, lval);
	qs_out_printf(w, " %llu\n", (unsigned long long)v);
}

static void pw_double(struct qs_out *w, struct pfam *f, const char *config, const char *name,
		      const char *help, const char *fmt, double v)
{
	char num[64];

	pw_family(w, f, name, "gauge", help);
	pw_series(w, config, name, NULL, NULL);
	snprintf(num, sizeof(num), fmt, v);
	qs_out_printf(w, " %s\n", num);
}

/*
 * The engine's counters and gauges, one row per sample; rows of one family
 * are adjacent and share its HELP and TYPE. scale turns 4 KiB block counts
 * into bytes.
 */
struct pmetric {
	const char *name, *type, *help;
	const char *lkey, *lval;
	size_t off; /* a uint64_t in struct qs_engine_stats */
	uint64_t scale;
};

#define ES(f) offsetof(struct qs_engine_stats, f)
#define C "counter"
#define G "gauge"

static const struct pmetric engine_metrics[] = {
	{"qlcshape_client_requests_total", C,
	 "Client requests the engine completed, by operation.", "op", "read", ES(client_reads), 1},
	{"qlcshape_client_requests_total", C, NULL, "op", "write", ES(client_writes), 1},
	{"qlcshape_client_requests_total", C, NULL, "op", "flush", ES(client_flushes), 1},
	{"qlcshape_client_requests_total", C, NULL, "op", "discard", ES(client_discards), 1},
	{"qlcshape_client_bytes_total", C, "Client bytes the engine completed, by operation.",
	 "op", "read", ES(client_read_bytes), 1},
	{"qlcshape_client_bytes_total", C, NULL, "op", "write", ES(client_write_bytes), 1},
	{"qlcshape_client_bytes_total", C, NULL, "op", "discard", ES(client_discard_bytes), 1},
	{"qlcshape_client_errors_total", C, "Client requests the engine completed with an error.",
	 NULL, NULL, ES(client_errors), 1},
	{"qlcshape_log_appends_total", C, "Records appended to the fast-tier log.", NULL, NULL,
	 ES(log_appends), 1},
	{"qlcshape_log_append_bytes_total", C,
	 "Bytes appended to the fast-tier log, record headers included.", NULL, NULL,
	 ES(log_append_bytes), 1},
	{"qlcshape_log_read_bytes_total", C, "Bytes read back from the fast-tier log.", NULL, NULL,
	 ES(log_read_bytes), 1},
	{"qlcshape_log_flushes_total", C, "Cache flushes sent to the fast-tier device.", NULL, NULL,
	 ES(log_flushes), 1},
	{"qlcshape_log_checkpoints_total", C, "Log checkpoints written.", NULL, NULL,
	 ES(checkpoints), 1},
	{"qlcshape_log_size_bytes", G, "Size of the fast-tier log.", NULL, NULL, ES(log_blocks),
	 QS_BLOCK_SIZE},
	{"qlcshape_log_used_bytes", G, "Part of the fast-tier log in use (not yet reclaimed).",
	 NULL, NULL, ES(log_used_blocks), QS_BLOCK_SIZE},
	{"qlcshape_throttled_writes_total", C, "Client writes that waited for log space.", NULL,
	 NULL, ES(throttled_writes), 1},
	{"qlcshape_paced_writes_total", C,
	 "Client writes held for their step by pacing (policy.pace_pct).", NULL, NULL,
	 ES(paced_writes), 1},
	{"qlcshape_cached_bytes", G, "Data whose newest copy is in the log (4 KiB blocks).", NULL,
	 NULL, ES(cached_blocks), QS_BLOCK_SIZE},
	{"qlcshape_dirty_ius", G, "Indirection units with data not yet destaged to the QLC.", NULL,
	 NULL, ES(dirty_ius), 1},
	{"qlcshape_index_memory_bytes", G, "Memory of the cache index and dirty-IU state.", NULL,
	 NULL, ES(index_bytes), 1},
	{"qlcshape_engine_memory_bytes", G,
	 "The engine's DRAM by part, all of it between them: index (log index), dirty "
	 "(dirty-IU records), map_pages (map page frames and checkpoint copies), map_meta "
	 "(per map page), qlc_blocks (per QLC block), bands (per band; these four 0 in "
	 "place), other (buffers, requests, records).", "part", "index", ES(mem.index), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "dirty", ES(mem.dirty), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "map_pages", ES(mem.map_pages), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "map_meta", ES(mem.map_meta), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "qlc_blocks", ES(mem.qlc_blocks), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "bands", ES(mem.bands), 1},
	{"qlcshape_engine_memory_bytes", G, NULL, "part", "other", ES(mem.other), 1},
	{"qlcshape_destage_ius_total", C,
	 "Indirection units destaged to the QLC; partial ones were read-filled first.", "kind",
	 "full", ES(destage_full_ius), 1},
	{"qlcshape_destage_ius_total", C, NULL, "kind", "partial", ES(destage_partial_ius), 1},
	{"qlcshape_destage_bytes_total", C, "Bytes destaged to the QLC.", NULL, NULL,
	 ES(destage_bytes), 1},
	{"qlcshape_destage_retries_total", C, "Destage writes retried after an error.", NULL, NULL,
	 ES(destage_retries), 1},
	{"qlcshape_qlc_requests_total", C, "Requests sent to the QLC drive, by operation.", "op",
	 "read", ES(qlc_reads), 1},
	{"qlcshape_qlc_requests_total", C, NULL, "op", "write", ES(qlc_writes), 1},
	{"qlcshape_qlc_requests_total", C, NULL, "op", "flush", ES(qlc_flushes), 1},
	{"qlcshape_qlc_requests_total", C, NULL, "op", "discard", ES(qlc_discards), 1},
	{"qlcshape_qlc_bytes_total", C, "Bytes read from and written to the QLC drive.", "op",
	 "read", ES(qlc_read_bytes), 1},
	{"qlcshape_qlc_bytes_total", C, NULL, "op", "write", ES(qlc_write_bytes), 1},
	{"qlcshape_qlc_whole_iu_writes_total", C,
	 "QLC writes that were IU-aligned and a whole number of IUs long.", NULL, NULL,
	 ES(qlc_iu_whole_writes), 1},
	{"qlcshape_qlc_read_fill_bytes_total", C,
	 "QLC bytes read to complete partly dirty IUs before writing them whole.", NULL, NULL,
	 ES(read_fill_bytes), 1},
	{"qlcshape_bypass_writes_total", C, "Whole-IU client writes that skipped the log.", NULL,
	 NULL, ES(bypass_writes), 1},
	{"qlcshape_bypass_bytes_total", C, "Bytes of client writes that skipped the log.", NULL,
	 NULL, ES(bypass_bytes), 1},
	{"qlcshape_device_errors_total", C, "I/O errors from the devices, by tier.", "tier", "fast",
	 ES(fast_errors), 1},
	{"qlcshape_device_errors_total", C, NULL, "tier", "qlc", ES(qlc_errors), 1},
	{"qlcshape_bands", G, "Log placement: QLC bands by state (all 0 in place).", "state",
	 "free", ES(bands_free), 1},
	{"qlcshape_bands", G, NULL, "state", "open", ES(bands_open), 1},
	{"qlcshape_bands", G, NULL, "state", "full", ES(bands_full), 1},
	{"qlcshape_gc_victims_total", C, "Log placement: bands GC emptied.", NULL, NULL,
	 ES(gc_victims), 1},
	{"qlcshape_gc_bytes_total", C,
	 "Log placement: QLC bytes GC read from victims and wrote relocated.", "op", "read",
	 ES(gc_read_bytes), 1},
	{"qlcshape_gc_bytes_total", C, NULL, "op", "write", ES(gc_write_bytes), 1},
	{"qlcshape_map_memory_bytes", G, "Log placement: DRAM of the map and the valid bitmap.", NULL,
	 NULL, ES(map_bytes), 1},
	{"qlcshape_bands_total", G, "Log placement: QLC bands (0 in place).", NULL, NULL,
	 ES(bands), 1},
	{"qlcshape_band_size_bytes", G, "Log placement: the size of a band.", NULL, NULL,
	 ES(band_bytes), 1},
	{"qlcshape_gc_moved_blocks_total", C,
	 "Log placement: blocks GC relocated that the map now points at.", NULL, NULL,
	 ES(gc_moved_blocks), 1},
	{"qlcshape_map_page_writes_total", C, "Log placement: map pages written to the fast tier.",
	 NULL, NULL, ES(map_page_writes), 1},
	{"qlcshape_p2l_page_writes_total", C,
	 "Log placement: P2L pages (a band's client blocks, for GC) written to the fast tier.",
	 NULL, NULL, ES(p2l_page_writes), 1},
	{"qlcshape_p2l_page_reads_total", C,
	 "Log placement: P2L pages read from the fast tier (a victim's, both slots).", NULL, NULL,
	 ES(p2l_page_reads), 1},
	{"qlcshape_gc_stuck_blocks_total", C,
	 "Log placement: valid blocks GC found no P2L entry for; their band is left (0 unless "
	 "the fast tier lost them).", NULL, NULL, ES(gc_stuck_blocks), 1},
	{"qlcshape_mapped_bytes", G, "Log placement: client data with a copy on the QLC.", NULL,
	 NULL, ES(mapped_blocks), 4096},
	{"qlcshape_map_dram_limit_bytes", G,
	 "Log placement: engine.map_dram_limit, the DRAM map pages may take.", NULL, NULL,
	 ES(map_dram_limit), 1},
	{"qlcshape_map_resident_bytes", G, "Log placement: map pages in DRAM now.", NULL, NULL,
	 ES(map_resident_bytes), 1},
	{"qlcshape_map_resident_peak_bytes", G,
	 "Log placement: the most map pages in DRAM since start.", NULL, NULL,
	 ES(map_peak_bytes), 1},
	{"qlcshape_map_region_bytes", G,
	 "Log placement: the map's region on the fast tier (two slots a page).", NULL, NULL,
	 ES(map_region_bytes), 1},
	{"qlcshape_map_lookups_total", C,
	 "Log placement: map page lookups, by whether the page was in DRAM.", "result", "hit",
	 ES(map_hits), 1},
	{"qlcshape_map_lookups_total", C, NULL, "result", "miss", ES(map_misses), 1},
	{"qlcshape_map_page_reads_total", C, "Log placement: map pages read from the fast tier.",
	 NULL, NULL, ES(map_page_reads), 1},
	{"qlcshape_map_kept_changes_total", C,
	 "Log placement: map changes kept for pages not in DRAM (engine.map_keep_per_page; "
	 "0 while it is timing only).", NULL, NULL, ES(map_kept), 1},
	{"qlcshape_map_kept_applied_total", C,
	 "Log placement: kept map changes applied to their pages.", NULL, NULL,
	 ES(map_kept_applied), 1},
	{"qlcshape_map_kept_page_reads_total", C,
	 "Log placement: map pages read to apply kept changes.", NULL, NULL, ES(map_kept_reads), 1},
	{"qlcshape_map_kept_stale_total", C,
	 "Log placement: old page values of kept changes GC found to be garbage.", NULL, NULL,
	 ES(map_kept_stale), 1},
};

#undef ES
#undef C
#undef G

/* The HELP text of a row: its own, or that of the family's first row. */
static const char *pm_help(size_t i)
{
	while (!engine_metrics[i].help && i > 0)
		i--;
	return engine_metrics[i].help;
}

static void pw_frontend(struct qs_out *w, struct pfam *f, const char *cfg,
			const struct qs_prom_frontend *fe)
{
	static const char *reqs = "Requests the ublk frontend served, by operation.";
	static const char *bytes = "Bytes the ublk frontend served, by operation.";
	static const char *n = "qlcshape_frontend_requests_total";
	static const char *b = "qlcshape_frontend_bytes_total";

	pw_u64(w, f, cfg, n, "counter", reqs, "op", "read", fe->reads);
	pw_u64(w, f, cfg, n, "counter", reqs, "op", "write", fe->writes);
	pw_u64(w, f, cfg, n, "counter", reqs, "op", "flush", fe->flushes);
	pw_u64(w, f, cfg, n, "counter", reqs, "op", "discard", fe->discards);
	pw_u64(w, f, cfg, n, "counter", reqs, "op", "write_zeroes", fe->write_zeroes);
	pw_u64(w, f, cfg, b, "counter", bytes, "op", "read", fe->read_bytes);
	pw_u64(w, f, cfg, b, "counter", bytes, "op", "write", fe->write_bytes);
	pw_u64(w, f, cfg, "qlcshape_frontend_errors_total", "counter",
	       "Requests the ublk frontend completed with an error.", NULL, NULL, fe->errors);
	pw_u64(w, f, cfg, "qlcshape_frontend_inflight_requests", "gauge",
	       "Requests the daemon holds now.", NULL, NULL, fe->inflight);
}

static void pw_engine(struct qs_out *w, struct pfam *f, const char *cfg,
		      const struct qs_engine_stats *e)
{
	pw_u64(w, f, cfg, "qlcshape_engine_failed", "gauge",
	       "1 when the log is unusable and writes fail with EIO, else 0.", NULL, NULL,
	       e->failed ? 1 : 0);
	pw_u64(w, f, cfg, "qlcshape_client_inflight_requests", "gauge",
	       "Client requests in flight in the engine.", NULL, NULL, e->inflight);
	pw_u64(w, f, cfg, "qlcshape_placement_log", "gauge",
	       "1 with log placement (destage into bands, a map, GC), 0 in place.", NULL, NULL,
	       e->placement == QS_PLACE_LOG);
	pw_u64(w, f, cfg, "qlcshape_op_percent", "gauge",
	       "Log placement: the share of the QLC kept from the client for GC.", NULL, NULL,
	       e->op_pct);
	pw_u64(w, f, cfg, "qlcshape_map_from_clean_state", "gauge",
	       "Log placement: 1 when this start read the valid bitmap and bands a clean stop "
	       "wrote, 0 when it rebuilt them from the map.", NULL, NULL, e->clean_state);
	for (size_t i = 0; i < sizeof(engine_metrics) / sizeof(engine_metrics[0]); i++) {
		const struct pmetric *m = &engine_metrics[i];
		uint64_t v;

		memcpy(&v, (const char *)e + m->off, sizeof(v));
		pw_u64(w, f, cfg, m->name, m->type, pm_help(i), m->lkey, m->lval, v * m->scale);
	}
	/* No log (passthrough): no ratio rather than a division by zero. */
	if (e->log_blocks)
		pw_double(w, f, cfg, "qlcshape_log_used_ratio",
			  "Log use, 0 to 1: destage starts at policy.start_pct and runs at full "
			  "depth from policy.urgent_pct.",
			  "%.6g", (double)e->log_used_blocks / (double)e->log_blocks);
}

int qs_prom_render(const struct qs_prom_input *in, char *out, size_t len)
{
	struct qs_out w = {.out = out, .len = len};
	struct pfam f = {0};
	const char *cfg;

	if (!len)
		return -ENOSPC;
	out[0] = 0;
	if (!in || !in->config || !*in->config)
		return -EINVAL;
	cfg = in->config;
	if (in->backend) {
		pw_family(&w, &f, "qlcshape_info", "gauge",
			  "Always 1; labels name the instance's config and backend.");
		qs_out_printf(&w, "qlcshape_info{config=\"");
		pw_label_value(&w, cfg);
		qs_out_printf(&w, "\",backend=\"");
		pw_label_value(&w, in->backend);
		qs_out_printf(&w, "\"} 1\n");
	}
	if (in->start_time_s > 0)
		pw_double(&w, &f, cfg, "qlcshape_start_time_seconds",
			  "Start time of the daemon since the Unix epoch.", "%.3f",
			  in->start_time_s);
	if (in->iu_bytes)
		pw_u64(&w, &f, cfg, "qlcshape_iu_bytes", "gauge",
		       "Indirection unit of the QLC drive (whole-IU writes are shaped to it).",
		       NULL, NULL, in->iu_bytes);
	if (in->size_bytes)
		pw_u64(&w, &f, cfg, "qlcshape_size_bytes", "gauge",
		       "Client-visible size of the block device.", NULL, NULL, in->size_bytes);
	if (in->frontend)
		pw_frontend(&w, &f, cfg, in->frontend);
	if (in->engine)
		pw_engine(&w, &f, cfg, in->engine);
	return w.full ? -ENOSPC : 0;
}
