/* SPDX-License-Identifier: MIT */
/*
 * fio's JSON output (qs_report_fio_json, report.h): the layout fio 3.33
 * prints with --output-format=json, so that tools written for fio's JSON
 * read the bench's. fio's writer puts one member on a line, indents by two
 * spaces and separates keys with " : "; this one does the same, so the
 * files also look alike. The bench's own figures go in one object of
 * its own per job, "qlcshape" (docs/BENCH-OUTPUT.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report.h"

#define FJ_MAX_DEPTH 8

/* The writer: the stream, and per open level whether it has a member yet. */
struct fj {
	FILE *f;
	int depth;
	bool any[FJ_MAX_DEPTH];
};

/* The start of the next member at this level: comma, new line, indent, and
 * "key" : unless key is NULL (an array's element). */
static void fj_key(struct fj *w, const char *key)
{
	fputs(w->any[w->depth] ? ",\n" : "\n", w->f);
	w->any[w->depth] = true;
	for (int i = 0; i <= w->depth; i++)
		fputs("  ", w->f);
	if (key) {
		qs_report_json_quote(w->f, key);
		fputs(" : ", w->f);
	}
}

/* Open an object ('{') or array ('[') as member key (NULL at the top or in
 * an array). The layout nests at most 5 deep (a job's percentiles). */
static void fj_open(struct fj *w, const char *key, char brace)
{
	if (w->depth >= 0)
		fj_key(w, key);
	fputc(brace, w->f);
	w->any[++w->depth] = false;
}

static void fj_close(struct fj *w, char brace)
{
	bool any = w->any[w->depth];
	w->depth--;
	if (any) {
		fputc('\n', w->f);
		for (int i = 0; i <= w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(brace, w->f);
}

static void fj_u64(struct fj *w, const char *key, uint64_t v)
{
	fj_key(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

/* A double as fio prints it ("%f"); JSON has no inf or NaN: null. */
static void fj_dbl(struct fj *w, const char *key, double v)
{
	fj_key(w, key);
	if (isfinite(v))
		fprintf(w->f, "%f", v);
	else
		fputs("null", w->f);
}

static void fj_str(struct fj *w, const char *key, const char *v)
{
	fj_key(w, key);
	qs_report_json_quote(w->f, v);
}

static void fj_bool(struct fj *w, const char *key, bool v)
{
	fj_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

/* Options as fio lists them: an object of strings. */
static void fj_opts(struct fj *w, const char *key, const struct qs_report_opt *o, size_t n)
{
	fj_open(w, key, '{');
	for (size_t i = 0; i < n; i++)
		fj_str(w, o[i].key, o[i].val);
	fj_close(w, '}');
}

/* One latency (slat_ns, clat_ns, lat_ns): fio prints the percentiles only
 * when it has samples. */
static void fj_lat(struct fj *w, const char *key, const struct qs_report_lat *l)
{
	fj_open(w, key, '{');
	fj_u64(w, "min", l->min);
	fj_u64(w, "max", l->max);
	fj_dbl(w, "mean", l->mean);
	fj_dbl(w, "stddev", l->stddev);
	fj_u64(w, "N", l->n);
	if (l->n) {
		fj_open(w, "percentile", '{');
		/* npct 0 (a latency of zeros filled by hand): fio's list */
		const double *at = l->npct ? l->at : qs_report_pct_list;
		unsigned n = l->npct ? l->npct : QS_REPORT_NPCT;
		for (unsigned i = 0; i < n; i++) {
			char k[32];
			snprintf(k, sizeof(k), "%f", at[i]);
			fj_u64(w, k, l->pct[i]);
		}
		fj_close(w, '}');
	}
	fj_close(w, '}');
}

/*
 * One direction as fio prints it. As in fio, a direction without I/O has
 * a runtime of 0 and no rates; bw is in KiB/s (bw_bytes / 1024) and the
 * runtime in ms. Rates are taken over the window in ns, not the rounded
 * ms (a simulated run is often a few ms long).
 */
static void fj_dir(struct fj *w, const char *key, const struct qs_report_fdir *d,
		   uint64_t runtime_ns)
{
	static const char *const lat_keys[QS_LAT_N] = {"slat_ns", "clat_ns", "lat_ns"};
	uint64_t rt = d->total_ios ? runtime_ns : 0;
	double s = (double)rt / 1e9;
	uint64_t bw_bytes = s > 0 ? (uint64_t)llround((double)d->io_bytes / s) : 0;
	fj_open(w, key, '{');
	fj_u64(w, "io_bytes", d->io_bytes);
	fj_u64(w, "io_kbytes", d->io_bytes >> 10);
	fj_u64(w, "bw_bytes", bw_bytes);
	fj_u64(w, "bw", bw_bytes / 1024);
	fj_dbl(w, "iops", s > 0 ? (double)d->total_ios / s : 0.0);
	fj_u64(w, "runtime", (uint64_t)llround((double)rt / 1e6));
	fj_u64(w, "total_ios", d->total_ios);
	fj_u64(w, "short_ios", 0); /* the engine completes whole requests or fails the run */
	fj_u64(w, "drop_ios", 0);
	for (int k = 0; k < QS_LAT_N; k++)
		fj_lat(w, lat_keys[k], &d->lat[k]);
	fj_close(w, '}');
}

/* "NAME (shaping off)" or "NAME (shaping on, POLICY, PLACEMENT)". */
static void fj_jobname(char *b, size_t n, const struct qs_report_run *r)
{
	const char *name = r->fio_name ? r->fio_name : r->job ? r->job : "";
	if (!r->shaping)
		snprintf(b, n, "%s (shaping off)", name);
	else
		snprintf(b, n, "%s (shaping on, %s, %s)", name, r->policy ? r->policy : "-",
			 r->placement && *r->placement ? r->placement : "inplace");
}

/* A member that does not apply: null. */
static void fj_null(struct fj *w, const char *key)
{
	fj_key(w, key);
	fputs("null", w->f);
}

/* The steady-state object of the bench's JSON, or null. */
static void fj_ss(struct fj *w, const struct qs_report_ss *ss)
{
	if (!ss->criterion) {
		fj_null(w, "steadystate");
		return;
	}
	fj_open(w, "steadystate", '{');
	fj_str(w, "criterion", ss->criterion);
	fj_dbl(w, "limit", ss->limit);
	fj_bool(w, "pct", ss->pct);
	fj_dbl(w, "duration_s", ss->duration_s);
	fj_bool(w, "reached", ss->reached);
	fj_dbl(w, "at_s", ss->at_s);
	fj_dbl(w, "last", ss->last);
	fj_close(w, '}');
}

/* The wear object of the bench's JSON, the common rate from its entries. */
static void fj_wear(struct fj *w, const struct qs_report_fio_doc *doc,
		    const struct qs_report_run *r)
{
	double common = qs_report_common_rate(doc->bench, doc->nbench, r->job);
	double rated = r->rated_write_bytes_per_s > 0 ? r->rated_write_bytes_per_s : NAN;
	fj_open(w, "wear", '{');
	fj_dbl(w, "drive_prog_amp", r->wear.drive_prog_amp);
	fj_dbl(w, "nand_per_client", r->wear.nand_per_client);
	fj_dbl(w, "client_bytes_writable", r->wear.client_bytes_writable);
	fj_dbl(w, "life_years", r->wear.life_years);
	fj_dbl(w, "common_write_bytes_per_s", common);
	fj_dbl(w, "life_years_common", qs_report_life_at(r, common));
	fj_dbl(w, "rated_write_bytes_per_s", rated);
	fj_dbl(w, "life_years_rated", qs_report_life_at(r, rated));
	fj_close(w, '}');
}

/* The map object of the bench's JSON, or null without log placement. */
static void fj_map(struct fj *w, const struct qs_report_run *r)
{
	if (!qs_report_is_log(r)) {
		fj_null(w, "map");
		return;
	}
	fj_open(w, "map", '{');
	fj_u64(w, "hits", r->map_hits);
	fj_u64(w, "misses", r->map_misses);
	fj_dbl(w, "miss_pct", qs_report_map_miss_pct(r));
	fj_u64(w, "page_reads", r->map_page_reads);
	fj_u64(w, "page_writes", r->map_page_writes);
	fj_u64(w, "page_io_bytes", qs_report_map_io_bytes(r));
	fj_u64(w, "dram_peak_bytes", r->map_peak_bytes);
	fj_close(w, '}');
}

/* The memory object of the bench's JSON, or null with shaping off. */
static void fj_mem(struct fj *w, const struct qs_report_run *r)
{
	const struct qs_engine_mem *m = &r->mem;
	if (!r->shaping) {
		fj_null(w, "memory");
		return;
	}
	fj_open(w, "memory", '{');
	fj_u64(w, "engine_bytes", m->total);
	fj_u64(w, "engine_full_scale_bytes", qs_report_mem_full_scale(r));
	fj_open(w, "parts", '{');
	fj_u64(w, "index", m->index);
	fj_u64(w, "dirty", m->dirty);
	fj_u64(w, "map_pages", m->map_pages);
	fj_u64(w, "map_meta", m->map_meta);
	fj_u64(w, "qlc_blocks", m->qlc_blocks);
	fj_u64(w, "bands", m->bands);
	fj_u64(w, "other", m->other);
	fj_close(w, '}');
	fj_close(w, '}');
}

/* The bench's own figures of entry r (the fields of its --json runs). */
static void fj_qlcshape(struct fj *w, const struct qs_report_fio_doc *doc,
			const struct qs_report_run *r)
{
	fj_open(w, "qlcshape", '{');
	fj_str(w, "job", r->job);
	fj_str(w, "shaping", qs_report_shaping_name(r->shaping));
	fj_str(w, "policy", r->shaping && r->policy ? r->policy : "-");
	fj_str(w, "placement", r->shaping && r->placement ? r->placement : "-");
	fj_str(w, "mode", r->mode ? r->mode : "sim");
	fj_u64(w, "members", r->members);
	fj_open(w, "qlc", '{');
	fj_u64(w, "write_bytes", r->qlc.write_bytes);
	fj_u64(w, "writes", r->qlc.writes);
	fj_u64(w, "iu_whole_writes", r->qlc.iu_whole_writes);
	fj_u64(w, "read_fill_bytes", r->qlc.read_fill_bytes);
	fj_dbl(w, "waf_host", r->qlc.waf_host);
	fj_dbl(w, "waf_iu", r->qlc.waf_iu);
	fj_dbl(w, "life_years", r->qlc.life_years);
	fj_close(w, '}');
	fj_open(w, "client", '{');
	fj_u64(w, "write_bytes", r->client_write_bytes);
	fj_u64(w, "round_write_bytes", r->round_write_bytes);
	fj_dbl(w, "round_share_pct", qs_report_round_share(r));
	fj_close(w, '}');
	fj_open(w, "log", '{');
	fj_u64(w, "dirty_start_bytes", r->dirty_start_bytes);
	fj_u64(w, "dirty_end_bytes", r->dirty_end_bytes);
	fj_dbl(w, "dirty_end_share_pct", qs_report_dirty_share(r));
	fj_dbl(w, "dirty_growth_pct", qs_report_dirty_growth(r));
	fj_close(w, '}');
	fj_ss(w, &r->ss);
	fj_wear(w, doc, r);
	fj_open(w, "fast", '{');
	fj_u64(w, "write_bytes", r->fast_write_bytes);
	fj_u64(w, "read_bytes", r->fast_read_bytes);
	fj_dbl(w, "written_per_client_byte", qs_report_per_client(r, r->fast_write_bytes));
	fj_dbl(w, "read_per_client_byte", qs_report_per_client(r, r->fast_read_bytes));
	fj_dbl(w, "life_years", r->shaping ? r->fast_life_years : NAN);
	fj_close(w, '}');
	fj_map(w, r);
	fj_mem(w, r);
	fj_close(w, '}');
}

/* One element of "jobs". */
static void fj_job(struct fj *w, const struct qs_report_fio_doc *doc,
		   const struct qs_report_run *r)
{
	static const char *const dirs[QS_DDIR_N] = {"read", "write", "trim"};
	char name[160];
	fj_jobname(name, sizeof(name), r);
	fj_open(w, NULL, '{');
	fj_str(w, "jobname", name);
	fj_u64(w, "groupid", r->groupid);
	/* a run that fails prints no report; max_latency ends a job with one */
	fj_u64(w, "error", (uint64_t)r->error);
	fj_opts(w, "job options", r->opts, r->nopts);
	for (int d = 0; r->unified != QS_UNIFIED_MIXED && d < QS_DDIR_N; d++)
		fj_dir(w, dirs[d], &r->fio[d], r->runtime_ns);
	if (r->unified != QS_UNIFIED_NONE)
		fj_dir(w, "mixed", &r->fio_mixed, r->runtime_ns);
	fj_u64(w, "job_runtime", (uint64_t)llround((double)r->runtime_ns / 1e6));
	if (r->lat_depth) {
		/* fio's units: the target in ns, the window in us */
		fj_u64(w, "latency_depth", r->lat_depth);
		fj_u64(w, "latency_target", r->lat_target_ns);
		fj_dbl(w, "latency_percentile", r->lat_pct);
		fj_u64(w, "latency_window", r->lat_window_ns / 1000);
	}
	fj_qlcshape(w, doc, r);
	fj_close(w, '}');
}

int qs_report_fio_json(FILE *f, const struct qs_report_fio_doc *doc)
{
	struct fj w = {.f = f, .depth = -1};
	time_t t = (time_t)(doc->time_ms / 1000);
	struct tm tm;
	char when[64] = "";
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm); /* ctime's */
	fj_open(&w, NULL, '{');
	fj_str(&w, "fio version", doc->version);
	fj_u64(&w, "timestamp", (uint64_t)(doc->time_ms / 1000));
	fj_u64(&w, "timestamp_ms", (uint64_t)doc->time_ms);
	fj_str(&w, "time", when);
	if (doc->ngopts)
		fj_opts(&w, "global options", doc->gopts, doc->ngopts);
	fj_open(&w, "jobs", '[');
	for (size_t i = 0; i < doc->n; i++)
		fj_job(&w, doc, &doc->runs[i]);
	fj_close(&w, ']');
	fj_close(&w, '}');
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
