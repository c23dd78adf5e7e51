/* SPDX-License-Identifier: MIT */
/* Bench reports: table, JSON, CSV, SVG (see report.h, docs/BENCH-OUTPUT.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "qlcshape/format.h"
#include "report.h"

#define SECONDS_PER_YEAR 31557600.0 /* Julian year, 365.25 days */

static const char *const palette[] = {
	"#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
	"#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

const char *qs_report_shaping_name(bool shaping)
{
	return shaping ? "on" : "off";
}

static const char *policy_of(const struct qs_report_run *r)
{
	return r->policy && *r->policy ? r->policy : "-";
}

bool qs_report_is_log(const struct qs_report_run *r)
{
	return r->shaping && r->placement && !strcmp(r->placement, "log");
}

static const char *placement_of(const struct qs_report_run *r)
{
	if (!r->shaping || !r->placement || !*r->placement)
		return "-";
	return r->placement;
}

const char *qs_report_label(const struct qs_report_run *r)
{
	static const char *const log_names[] = {"log-fifo", "log-sweep", "log-fullest"};
	if (qs_report_is_log(r))
		for (unsigned i = 0; i < 3; i++)
			if (!strcmp(policy_of(r), log_names[i] + 4))
				return log_names[i];
	return policy_of(r);
}

const double qs_report_pct_list[QS_REPORT_NPCT] = {
	1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99,
};

void qs_report_lat_fill(struct qs_report_lat *l, const struct qs_hist *h, const double *list,
			unsigned npct)
{
	memset(l, 0, sizeof(*l));
	if (!h || !h->count)
		return;
	if (!list || !npct || npct > QS_REPORT_PCT_MAX) {
		list = qs_report_pct_list;
		npct = QS_REPORT_NPCT;
	}
	l->n = h->count;
	l->min = h->min;
	l->max = h->max;
	l->mean = qs_hist_mean(h);
	l->stddev = qs_hist_stddev(h);
	l->npct = npct;
	for (unsigned i = 0; i < npct; i++) {
		l->at[i] = list[i];
		l->pct[i] = qs_hist_percentile(h, list[i]);
	}
}

void qs_report_dir_fill(struct qs_report_dir *d, const struct qs_hist *lat,
			uint64_t ios, uint64_t bytes, uint64_t elapsed_ns)
{
	memset(d, 0, sizeof(*d));
	if (elapsed_ns) {
		double s = (double)elapsed_ns / 1e9;
		d->iops = (double)ios / s;
		d->bw_bytes = (uint64_t)llround((double)bytes / s);
	}
	if (lat && lat->count) {
		d->lat_mean_ns = qs_hist_mean(lat);
		d->lat_p50_ns = qs_hist_percentile(lat, 50.0);
		d->lat_p99_ns = qs_hist_percentile(lat, 99.0);
		d->lat_p999_ns = qs_hist_percentile(lat, 99.9);
	}
}

double qs_report_life_years(double budget_bytes, uint64_t rated_capacity,
			    uint64_t capacity, double qlc_write_bytes_per_s,
			    double prog_amp)
{
	if (!(budget_bytes > 0) || !rated_capacity || !capacity || !(prog_amp > 0) ||
	    !(qlc_write_bytes_per_s >= 0))
		return NAN;
	if (qlc_write_bytes_per_s == 0)
		return INFINITY;
	double budget = budget_bytes * ((double)capacity / (double)rated_capacity);
	return budget / (qlc_write_bytes_per_s * prog_amp * SECONDS_PER_YEAR);
}

double qs_report_fast_life(double rating_bytes, double rating_prog_amp, uint64_t write_bytes,
			   uint64_t model_write_bytes, uint64_t model_nand_prog_bytes,
			   uint64_t elapsed_ns)
{
	if (!elapsed_ns)
		return NAN;
	double amp = model_write_bytes && model_nand_prog_bytes
			     ? (double)model_nand_prog_bytes / (double)model_write_bytes
			     : 1;
	double budget = rating_bytes * (rating_prog_amp > 0 ? rating_prog_amp : 1);
	/* the whole device's rating: no capacity scaling */
	return qs_report_life_years(budget, 1, 1, (double)write_bytes / ((double)elapsed_ns / 1e9),
				    amp);
}

void qs_report_qlc_fill(struct qs_report_qlc *q, const struct qs_report_qlc_in *in)
{
	q->write_bytes = in->qlc_write_bytes;
	q->writes = in->qlc_writes;
	q->iu_whole_writes = in->qlc_iu_whole_writes;
	q->read_fill_bytes = in->read_fill_bytes;
	q->waf_host = in->client_write_bytes ?
		(double)in->qlc_write_bytes / (double)in->client_write_bytes : NAN;
	q->waf_iu = in->drive_write_bytes ?
		(double)in->drive_prog_bytes / (double)in->drive_write_bytes : NAN;
	if (!in->elapsed_ns) {
		q->life_years = NAN;
		return;
	}
	double rate = (double)in->qlc_write_bytes / ((double)in->elapsed_ns / 1e9);
	/*
	 * The NAND budget (the rating times its pattern's amplification) over
	 * what the drive programs per byte it is sent, its GC included: the
	 * model's figure, whatever the workload is called. Nothing written:
	 * the life is unbounded whatever the amplification would be.
	 */
	double amp = in->drive_write_bytes ?
		(double)in->drive_nand_prog_bytes / (double)in->drive_write_bytes : NAN;
	double budget = in->rating_bytes * (in->rating_prog_amp > 0 ? in->rating_prog_amp : 1);
	q->life_years = rate == 0 ? INFINITY :
		isnan(amp) ? NAN :
		qs_report_life_years(budget, in->rated_capacity, in->capacity, rate, amp);
}

void qs_report_wear_fill(struct qs_report_wear *w, const struct qs_report_qlc_in *in)
{
	w->drive_prog_amp = in->drive_write_bytes ?
		(double)in->drive_nand_prog_bytes / (double)in->drive_write_bytes : NAN;
	w->nand_per_client = in->client_write_bytes && !isnan(w->drive_prog_amp) ?
		(double)in->qlc_write_bytes / (double)in->client_write_bytes *
		w->drive_prog_amp : NAN;
	w->client_bytes_writable = NAN;
	w->life_years = NAN;
	double amp = in->rating_prog_amp > 0 ? in->rating_prog_amp : 1;
	if (!(in->rating_bytes > 0) || !in->rated_capacity || !in->capacity ||
	    isnan(w->nand_per_client))
		return;
	double budget = in->rating_bytes * ((double)in->capacity / (double)in->rated_capacity) *
			amp;
	w->client_bytes_writable = w->nand_per_client > 0 ? budget / w->nand_per_client : INFINITY;
	if (in->elapsed_ns) {
		double rate = (double)in->client_write_bytes / ((double)in->elapsed_ns / 1e9);
		w->life_years = w->client_bytes_writable / (rate * SECONDS_PER_YEAR);
	}
}

/* Same job name (NULL-safe). */
static bool same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

double qs_report_common_rate(const struct qs_report_run *runs, size_t n, const char *job)
{
	double min = NAN;
	for (size_t i = 0; i < n; i++) {
		const struct qs_report_run *r = &runs[i];
		double rate = (double)r->write.bw_bytes;
		if (!same_str(r->job, job) || !(rate > 0) || isnan(r->wear.client_bytes_writable))
			continue;
		if (isnan(min) || rate < min)
			min = rate;
	}
	return min;
}

double qs_report_round_share(const struct qs_report_run *r)
{
	return r->client_write_bytes ?
		100.0 * (double)r->round_write_bytes / (double)r->client_write_bytes : NAN;
}

double qs_report_dirty_share(const struct qs_report_run *r)
{
	return r->client_write_bytes ?
		100.0 * (double)r->dirty_end_bytes / (double)r->client_write_bytes : NAN;
}

double qs_report_dirty_growth(const struct qs_report_run *r)
{
	if (!r->client_write_bytes)
		return NAN;
	return 100.0 * ((double)r->dirty_end_bytes - (double)r->dirty_start_bytes) /
	       (double)r->client_write_bytes;
}

double qs_report_map_miss_pct(const struct qs_report_run *r)
{
	uint64_t lookups = r->map_hits + r->map_misses;
	if (!qs_report_is_log(r) || !lookups)
		return NAN;
	return 100.0 * (double)r->map_misses / (double)lookups;
}

double qs_report_per_client(const struct qs_report_run *r, uint64_t bytes)
{
	return r->client_write_bytes ? (double)bytes / (double)r->client_write_bytes : NAN;
}

uint64_t qs_report_map_io_bytes(const struct qs_report_run *r)
{
	return (r->map_page_reads + r->map_page_writes) * QS_BLOCK_SIZE;
}

/*
 * The same engine over the real drive and log: the plan for them
 * (qs_engine_dram_plan: entry widths and page counts are the real drive's,
 * not the model's scaled up), plus what the run grew beyond its own plan,
 * dirty-IU records scaled up, requests as they were. Without the run's
 * devices, the parts that grow with capacity scaled up, the rest as run.
 */
bool qs_report_mem_full_parts(const struct qs_report_run *r, struct qs_engine_mem *full)
{
	const struct qs_engine_conf *c = &r->mem_conf;
	double scale = r->mem_scale > 0 ? r->mem_scale : 1;
	struct qs_engine_mem run;
	if (!r->mem_fast || qs_engine_dram_plan(c, r->mem_fast, r->mem_qlc, &run, NULL))
		return false;
	struct qs_engine_conf fc = *c;
	uint64_t qlc = (uint64_t)((double)r->mem_qlc * scale);
	uint64_t log = r->mem_fast - QS_FMT_LOG_START * QS_BLOCK_SIZE -
		       qs_engine_conf_map_bytes(c, r->mem_qlc);
	if (c->placement == QS_PLACE_LOG && !c->dram_limit) {
		uint64_t m = (uint64_t)((double)c->map_dram_limit * scale) / QS_BLOCK_SIZE * QS_BLOCK_SIZE;
		fc.map_dram_limit = m > qs_engine_conf_map_min(c) ? m : qs_engine_conf_map_min(c);
	}
	if (c->dram_limit && c->dram_limit != QS_CONF_DRAM_AUTO)
		fc.dram_limit = (uint64_t)((double)c->dram_limit * scale);
	/* A budget the bench divided for the real drive and scaled down
	 * (qs_drv_dram_conf): its parts scaled back up. */
	if (c->log_window_blocks)
		fc.log_window_blocks = (uint64_t)((double)c->log_window_blocks * scale);
	if (c->dirty_ius_max) {
		double d = (double)c->dirty_ius_max * scale;
		fc.dirty_ius_max = d < (double)(1ull << 31) ? (uint64_t)d : 1ull << 31;
	}
	qlc = c->placement == QS_PLACE_LOG ? qlc / c->band_bytes * c->band_bytes : qlc;
	uint64_t fast = QS_FMT_LOG_START * QS_BLOCK_SIZE + (uint64_t)((double)log * scale) +
			qs_engine_conf_map_bytes(&fc, qlc);
	if (qs_engine_dram_plan(&fc, fast, qlc, full, NULL))
		return false;
	const struct qs_engine_mem *m = &r->mem;
	uint64_t dirty = m->dirty > run.dirty ? m->dirty - run.dirty : 0;
	uint64_t other = m->other > run.other ? m->other - run.other : 0;
	dirty = (uint64_t)llround((double)dirty * scale);
	full->dirty += dirty;
	full->other += other;
	full->total += dirty + other;
	return true;
}

uint64_t qs_report_mem_full_scale(const struct qs_report_run *r)
{
	const struct qs_engine_mem *m = &r->mem;
	double scale = r->mem_scale > 0 ? r->mem_scale : 1;
	struct qs_engine_mem full;
	if (scale == 1)
		return m->total;
	if (qs_report_mem_full_parts(r, &full))
		return full.total;
	uint64_t grows = m->total > m->other ? m->total - m->other : 0;
	return m->other + (uint64_t)llround((double)grows * scale);
}

double qs_report_life_at(const struct qs_report_run *r, double client_bytes_per_s)
{
	if (!(client_bytes_per_s > 0) || isnan(r->wear.client_bytes_writable))
		return NAN;
	return r->wear.client_bytes_writable / (client_bytes_per_s * SECONDS_PER_YEAR);
}

/* ---------------------------------------------------------------- table */

/* The rates a job's life rows use: its variants' common (slowest) client
 * write rate, and the rate its rate_iops asks for (0: unrated). */
struct trates {
	double common, rated;
	bool rounding; /* some variant's writes were rounded to 4 KiB */
	bool steady;   /* some variant checked for steady state */
	bool reads, writes, trims;
	bool log; /* some column has log placement */
	bool shaping; /* some column has shaping on */
	enum qs_report_unified unified; /* the job's unified_rw_reporting */
};

/* How a shaping-on column compares with shaping off: on / off, on - off
 * (percentages: a ratio of two shares means nothing), or not at all. */
enum cmp { CMP_RATIO, CMP_DIFF, CMP_NONE };

struct row {
	const char *label;
	int dir;  /* 0 read, 1 write, 2 other, 3 other, only when the job is rated,
		     4 writes, only when some were rounded, 5 only when steady
		     state was checked, 6 trim, 7 the directions together (fio's
		     unified_rw_reporting), 8 writes, whatever unified says,
		     9 only when a column has log placement, 10 only when a
		     column has shaping on */
	double (*get)(const struct qs_report_run *r, const struct trates *t);
	const char *fmt;
	enum cmp cmp;
};

#define G(name, expr) \
	static double name(const struct qs_report_run *r, const struct trates *t) \
	{ (void)t; return (expr); }
G(g_r_iops, r->read.iops)
G(g_r_bw, (double)r->read.bw_bytes / 1e6)
G(g_r_mean, r->read.lat_mean_ns / 1e3)
G(g_r_p50, (double)r->read.lat_p50_ns / 1e3)
G(g_r_p99, (double)r->read.lat_p99_ns / 1e3)
G(g_r_p999, (double)r->read.lat_p999_ns / 1e3)
G(g_w_iops, r->write.iops)
G(g_w_bw, (double)r->write.bw_bytes / 1e6)
G(g_w_mean, r->write.lat_mean_ns / 1e3)
G(g_w_p50, (double)r->write.lat_p50_ns / 1e3)
G(g_w_p99, (double)r->write.lat_p99_ns / 1e3)
G(g_w_p999, (double)r->write.lat_p999_ns / 1e3)
G(g_t_iops, r->trim.iops)
G(g_t_bw, (double)r->trim.bw_bytes / 1e6)
G(g_t_mean, r->trim.lat_mean_ns / 1e3)
G(g_t_p99, (double)r->trim.lat_p99_ns / 1e3)
G(g_m_iops, r->mixed.iops)
G(g_m_bw, (double)r->mixed.bw_bytes / 1e6)
G(g_m_mean, r->mixed.lat_mean_ns / 1e3)
G(g_m_p50, (double)r->mixed.lat_p50_ns / 1e3)
G(g_m_p99, (double)r->mixed.lat_p99_ns / 1e3)
G(g_m_p999, (double)r->mixed.lat_p999_ns / 1e3)
G(g_c_bytes, (double)r->client_write_bytes / 1e6)
G(g_c_round, (double)r->round_write_bytes / 1e6)
G(g_c_share, qs_report_round_share(r))
G(g_q_bytes, (double)r->qlc.write_bytes / 1e6)
G(g_q_writes, (double)r->qlc.writes)
G(g_q_whole, r->qlc.writes ? 100.0 * (double)r->qlc.iu_whole_writes / (double)r->qlc.writes
			   : NAN)
G(g_q_fill, (double)r->qlc.read_fill_bytes / 1e6)
G(g_q_wafh, r->qlc.waf_host)
G(g_q_wafi, r->qlc.waf_iu)
G(g_d_amp, r->wear.drive_prog_amp)
G(g_nand, r->wear.nand_per_client)
G(g_tbw, r->wear.client_bytes_writable / 1e12)
G(g_life, r->wear.life_years)
G(g_life_common, qs_report_life_at(r, t->common))
G(g_life_rated, qs_report_life_at(r, t->rated))
G(g_f_bytes, (double)r->fast_write_bytes / 1e6)
G(g_f_rbytes, r->shaping ? (double)r->fast_read_bytes / 1e6 : NAN)
G(g_f_wpc, r->shaping ? qs_report_per_client(r, r->fast_write_bytes) : NAN)
G(g_f_rpc, r->shaping ? qs_report_per_client(r, r->fast_read_bytes) : NAN)
G(g_f_life, r->shaping ? r->fast_life_years : NAN)
G(g_map_rpc, qs_report_is_log(r) ? qs_report_per_client(r, r->map_page_reads * QS_BLOCK_SIZE)
				 : NAN)
/* seconds to steady state; -INFINITY: checked, not reached ("not steady") */
G(g_ss_at, !r->ss.criterion ? NAN : r->ss.reached ? r->ss.at_s : -INFINITY)
G(g_ss_crit, r->ss.criterion ? r->ss.last : NAN)
G(g_dirty, (double)r->dirty_end_bytes / 1e6)
G(g_map_miss, qs_report_map_miss_pct(r))
G(g_map_io, qs_report_is_log(r) ? (double)qs_report_map_io_bytes(r) / 1e6 : NAN)
G(g_map_peak, qs_report_is_log(r) ? (double)r->map_peak_bytes / 1e6 : NAN)
G(g_mem, r->shaping ? (double)r->mem.total / 1e6 : NAN)
G(g_mem_full, r->shaping ? (double)qs_report_mem_full_scale(r) / 1e6 : NAN)
G(g_dirty_growth, qs_report_dirty_growth(r))
#undef G

static const struct row rows[] = {
	{"steady at s", 5, g_ss_at, "%.1f", CMP_NONE},
	{"steady criterion", 5, g_ss_crit, "%.3g", CMP_NONE},
	{"read IOPS", 0, g_r_iops, "%.0f", CMP_RATIO},
	{"read MB/s", 0, g_r_bw, "%.1f", CMP_RATIO},
	{"read lat mean us", 0, g_r_mean, "%.1f", CMP_RATIO},
	{"read lat p50 us", 0, g_r_p50, "%.1f", CMP_RATIO},
	{"read lat p99 us", 0, g_r_p99, "%.1f", CMP_RATIO},
	{"read lat p99.9 us", 0, g_r_p999, "%.1f", CMP_RATIO},
	{"write IOPS", 1, g_w_iops, "%.0f", CMP_RATIO},
	{"write MB/s", 1, g_w_bw, "%.1f", CMP_RATIO},
	{"write lat mean us", 1, g_w_mean, "%.1f", CMP_RATIO},
	{"write lat p50 us", 1, g_w_p50, "%.1f", CMP_RATIO},
	{"write lat p99 us", 1, g_w_p99, "%.1f", CMP_RATIO},
	{"write lat p99.9 us", 1, g_w_p999, "%.1f", CMP_RATIO},
	{"trim IOPS", 6, g_t_iops, "%.0f", CMP_RATIO},
	{"trim MB/s", 6, g_t_bw, "%.1f", CMP_RATIO},
	{"trim lat mean us", 6, g_t_mean, "%.1f", CMP_RATIO},
	{"trim lat p99 us", 6, g_t_p99, "%.1f", CMP_RATIO},
	{"mixed IOPS", 7, g_m_iops, "%.0f", CMP_RATIO},
	{"mixed MB/s", 7, g_m_bw, "%.1f", CMP_RATIO},
	{"mixed lat mean us", 7, g_m_mean, "%.1f", CMP_RATIO},
	{"mixed lat p50 us", 7, g_m_p50, "%.1f", CMP_RATIO},
	{"mixed lat p99 us", 7, g_m_p99, "%.1f", CMP_RATIO},
	{"mixed lat p99.9 us", 7, g_m_p999, "%.1f", CMP_RATIO},
	{"client write MB", 4, g_c_bytes, "%.1f", CMP_RATIO},
	{"4K rounding MB", 4, g_c_round, "%.1f", CMP_RATIO},
	{"4K rounding %", 4, g_c_share, "%.1f", CMP_DIFF},
	{"QLC write MB", 2, g_q_bytes, "%.1f", CMP_RATIO},
	{"QLC writes", 2, g_q_writes, "%.0f", CMP_RATIO},
	{"QLC whole-IU writes %", 2, g_q_whole, "%.1f", CMP_DIFF},
	{"QLC read-fill MB", 2, g_q_fill, "%.1f", CMP_RATIO},
	{"WAF host", 2, g_q_wafh, "%.3f", CMP_RATIO},
	{"WAF IU", 2, g_q_wafi, "%.3f", CMP_RATIO},
	{"drive prog amp", 2, g_d_amp, "%.3f", CMP_RATIO},
	{"NAND B per client B", 2, g_nand, "%.3f", CMP_RATIO},
	{"client TB writable", 2, g_tbw, "%.1f", CMP_RATIO},
	{"life y, own rate", 2, g_life, "%.2f", CMP_RATIO},
	{"life y, slowest rate", 2, g_life_common, "%.2f", CMP_RATIO},
	{"life y, rate_iops", 3, g_life_rated, "%.2f", CMP_RATIO},
	{"fast-tier write MB", 2, g_f_bytes, "%.1f", CMP_RATIO},
	{"fast-tier read MB", 10, g_f_rbytes, "%.1f", CMP_NONE},
	{"fast-tier W/client B", 10, g_f_wpc, "%.3f", CMP_NONE},
	{"fast-tier R/client B", 10, g_f_rpc, "%.3f", CMP_NONE},
	{"fast-tier life y", 10, g_f_life, "%.2f", CMP_NONE},
	{"log dirty at end MB", 8, g_dirty, "%.1f", CMP_NONE},
	{"log dirty growth %", 8, g_dirty_growth, "%.1f", CMP_NONE},
	{"map misses %", 9, g_map_miss, "%.2f", CMP_NONE},
	{"map page I/O MB", 9, g_map_io, "%.1f", CMP_NONE},
	{"map page R/client B", 9, g_map_rpc, "%.3f", CMP_NONE},
	{"map DRAM peak MB", 9, g_map_peak, "%.2f", CMP_NONE},
	{"engine DRAM MB", 10, g_mem, "%.1f", CMP_NONE},
	{"full-scale DRAM MB", 10, g_mem_full, "%.1f", CMP_NONE},
};

/* Whether row rw has a place in a job's table: its direction is issued, or
 * its condition holds (fio's unified_rw_reporting=mixed shows the
 * directions together only, both shows them after each one). */
static bool row_shown(const struct row *rw, const struct trates *t)
{
	bool apart = t->unified != QS_UNIFIED_MIXED;
	switch (rw->dir) {
	case 0: return t->reads && apart;
	case 1: return t->writes && apart;
	case 3: return t->rated > 0;
	case 4: return t->rounding;
	case 5: return t->steady;
	case 6: return t->trims && apart;
	case 7: return t->unified != QS_UNIFIED_NONE;
	case 8: return t->writes;
	case 9: return t->log;
	case 10: return t->shaping;
	default: return true;
	}
}

static void cell(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v) && v < 0)
		snprintf(buf, len, "not steady");
	else if (isinf(v))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, fmt, v);
}

int qs_report_table(FILE *f, const struct qs_report_run *runs, size_t n)
{
	size_t *cols = calloc(n ? n : 1, sizeof(*cols));
	if (!cols)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < i; k++)
			if (same_str(runs[k].job, runs[i].job))
				seen = true;
		if (seen)
			continue;
		/* This job's runs: every "off" first, then "on", file order. */
		size_t nc = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = i; k < n; k++)
				if (same_str(runs[k].job, runs[i].job) &&
				    runs[k].shaping == (pass == 1))
					cols[nc++] = k;
		const struct qs_report_run *base = runs[cols[0]].shaping ? NULL : &runs[cols[0]];
		struct trates tr = {.common = qs_report_common_rate(runs, n, runs[i].job),
				    .unified = runs[i].unified};
		for (size_t c = 0; c < nc; c++) {
			tr.reads |= runs[cols[c]].read.iops > 0;
			tr.writes |= runs[cols[c]].write.iops > 0;
			tr.trims |= runs[cols[c]].trim.iops > 0;
			if (runs[cols[c]].rated_write_bytes_per_s > 0)
				tr.rated = runs[cols[c]].rated_write_bytes_per_s;
			tr.rounding |= runs[cols[c]].round_write_bytes > 0;
			tr.log |= qs_report_is_log(&runs[cols[c]]);
			tr.shaping |= runs[cols[c]].shaping;
			tr.steady |= runs[cols[c]].ss.criterion != NULL;
		}

		fprintf(f, "job %s\n%-22s", runs[i].job ? runs[i].job : "", "");
		for (size_t c = 0; c < nc; c++) {
			char h[40];
			const struct qs_report_run *r = &runs[cols[c]];
			if (r->shaping)
				snprintf(h, sizeof(h), "on %s", qs_report_label(r));
			else
				snprintf(h, sizeof(h), "off");
			fprintf(f, " %14.14s", h);
		}
		if (base)
			for (size_t c = 0; c < nc; c++)
				if (runs[cols[c]].shaping) {
					char h[40];
					snprintf(h, sizeof(h), "%s/off", qs_report_label(&runs[cols[c]]));
					fprintf(f, " %12.12s", h);
				}
		fputc('\n', f);
		for (size_t ri = 0; ri < sizeof(rows) / sizeof(rows[0]); ri++) {
			const struct row *rw = &rows[ri];
			if (!row_shown(rw, &tr))
				continue;
			fprintf(f, "  %-20s", rw->label);
			for (size_t c = 0; c < nc; c++) {
				char b[32];
				cell(b, sizeof(b), rw->fmt, rw->get(&runs[cols[c]], &tr));
				fprintf(f, " %14s", b);
			}
			if (base)
				for (size_t c = 0; c < nc; c++) {
					if (!runs[cols[c]].shaping)
						continue;
					double a = rw->get(base, &tr), b = rw->get(&runs[cols[c]], &tr);
					char s[32];
					if (rw->cmp == CMP_RATIO && a > 0 && isfinite(a) && isfinite(b))
						snprintf(s, sizeof(s), "%.2fx", b / a);
					else if (rw->cmp == CMP_DIFF && isfinite(a) && isfinite(b))
						snprintf(s, sizeof(s), "%+.1f pt", b - a);
					else
						snprintf(s, sizeof(s), "-");
					fprintf(f, " %12s", s);
				}
			fputc('\n', f);
		}
		for (size_t c = 0; c < nc && tr.steady; c++) {
			const struct qs_report_ss *ss = &runs[cols[c]].ss;
			if (ss->criterion) {
				fprintf(f, "  (steady state: %s below %g%s over %.9g s)\n",
					ss->criterion, ss->limit, ss->pct ? "%" : "", ss->duration_s);
				break;
			}
		}
		for (size_t c = 0; c < nc; c++) {
			const struct qs_report_run *e = &runs[cols[c]];
			if (e->error && e->error_why[0])
				fprintf(f, "  (%s)\n", e->error_why);
			if (e->lat_depth)
				fprintf(f, "  (latency: target=%.1f us, window=%.9g s, "
					"percentile=%.2f%%, depth=%u with shaping %s)\n",
					(double)e->lat_target_ns / 1e3,
					(double)e->lat_window_ns / 1e9, e->lat_pct, e->lat_depth,
					e->shaping ? "on" : "off");
		}
		if (isfinite(tr.common))
			fprintf(f, "  (slowest rate: %.1f MB/s of client writes, the slowest "
				"variant's)\n", tr.common / 1e6);
		if (tr.rated > 0)
			fprintf(f, "  (rate_iops: %.1f MB/s of client writes)\n", tr.rated / 1e6);
		fputc('\n', f);
	}
	free(cols);
	return ferror(f) ? -EIO : 0;
}

/* ----------------------------------------------------------------- JSON */

void qs_report_json_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* JSON has no infinity or NaN: those become null. */
static void json_num(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

static void json_dir(FILE *f, const char *name, const struct qs_report_dir *d)
{
	fprintf(f, "      \"%s\": {\"iops\": ", name);
	json_num(f, d->iops, "%.3f");
	fprintf(f, ", \"bw_bytes\": %" PRIu64 ", \"lat_ns\": {\"mean\": ", d->bw_bytes);
	json_num(f, d->lat_mean_ns, "%.3f");
	fprintf(f, ", \"percentile\": {\"50.000000\": %" PRIu64 ", \"99.000000\": %" PRIu64
		", \"99.900000\": %" PRIu64 "}}}", d->lat_p50_ns, d->lat_p99_ns,
		d->lat_p999_ns);
}

/* The wear figures of r, its job's common rate and its rate_iops rate. */
struct wear_out {
	double common, life_common, rated, life_rated;
};

static void wear_out(const struct qs_report_run *runs, size_t n, const struct qs_report_run *r,
		     struct wear_out *o)
{
	o->common = qs_report_common_rate(runs, n, r->job);
	o->life_common = qs_report_life_at(r, o->common);
	o->rated = r->rated_write_bytes_per_s > 0 ? r->rated_write_bytes_per_s : NAN;
	o->life_rated = qs_report_life_at(r, o->rated);
}

/* The map's figures of the table's rows (null without log placement). */
static void json_map(FILE *f, const struct qs_report_run *r)
{
	fputs("      \"map\": ", f);
	if (!qs_report_is_log(r)) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"hits\": %" PRIu64 ", \"misses\": %" PRIu64 ", \"miss_pct\": ",
		r->map_hits, r->map_misses);
	json_num(f, qs_report_map_miss_pct(r), "%.6f");
	fprintf(f, ", \"page_reads\": %" PRIu64 ", \"page_writes\": %" PRIu64
		",\n              \"page_io_bytes\": %" PRIu64 ", \"dram_peak_bytes\": %" PRIu64
		"}", r->map_page_reads, r->map_page_writes, qs_report_map_io_bytes(r),
		r->map_peak_bytes);
}

/* The engine's DRAM, as run and at full scale, and its parts as run
 * (null with shaping off: no engine state to count). */
static void json_mem(FILE *f, const struct qs_report_run *r)
{
	const struct qs_engine_mem *m = &r->mem;
	fputs("      \"memory\": ", f);
	if (!r->shaping) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"engine_bytes\": %" PRIu64 ", \"engine_full_scale_bytes\": %" PRIu64
		",\n                 \"parts\": {\"index\": %" PRIu64 ", \"dirty\": %" PRIu64
		", \"map_pages\": %" PRIu64 ", \"map_meta\": %" PRIu64 ", \"qlc_blocks\": %"
		PRIu64 ", \"bands\": %" PRIu64 ", \"other\": %" PRIu64 "}}", m->total,
		qs_report_mem_full_scale(r), m->index, m->dirty, m->map_pages, m->map_meta,
		m->qlc_blocks, m->bands, m->other);
}

int qs_report_json(FILE *f, const struct qs_report_run *runs, size_t n)
{
	fputs("{\n  \"version\": 1,\n  \"runs\": [", f);
	for (size_t i = 0; i < n; i++) {
		const struct qs_report_run *r = &runs[i];
		fputs(i ? ",\n    {\n" : "\n    {\n", f);
		fputs("      \"job\": ", f);
		qs_report_json_quote(f, r->job);
		fprintf(f, ",\n      \"shaping\": \"%s\",\n      \"policy\": ",
			qs_report_shaping_name(r->shaping));
		qs_report_json_quote(f, policy_of(r));
		fputs(",\n      \"placement\": ", f);
		qs_report_json_quote(f, placement_of(r));
		fputs(",\n      \"mode\": ", f);
		qs_report_json_quote(f, r->mode ? r->mode : "sim");
		fputs(",\n", f);
		json_dir(f, "read", &r->read);
		fputs(",\n", f);
		json_dir(f, "write", &r->write);
		fprintf(f, ",\n      \"qlc\": {\"write_bytes\": %" PRIu64 ", \"writes\": %" PRIu64
			", \"iu_whole_writes\": %" PRIu64 ", \"read_fill_bytes\": %" PRIu64
			", \"waf_host\": ", r->qlc.write_bytes, r->qlc.writes,
			r->qlc.iu_whole_writes, r->qlc.read_fill_bytes);
		json_num(f, r->qlc.waf_host, "%.6f");
		fputs(", \"waf_iu\": ", f);
		json_num(f, r->qlc.waf_iu, "%.6f");
		fputs(", \"life_years\": ", f);
		json_num(f, r->qlc.life_years, "%.6f");
		struct wear_out wo;
		wear_out(runs, n, r, &wo);
		fprintf(f, "},\n      \"client\": {\"write_bytes\": %" PRIu64
			", \"round_write_bytes\": %" PRIu64 ", \"round_share_pct\": ",
			r->client_write_bytes, r->round_write_bytes);
		json_num(f, qs_report_round_share(r), "%.6f");
		fprintf(f, "},\n      \"log\": {\"dirty_start_bytes\": %" PRIu64
			", \"dirty_end_bytes\": %" PRIu64 ", \"dirty_end_share_pct\": ",
			r->dirty_start_bytes, r->dirty_end_bytes);
		json_num(f, qs_report_dirty_share(r), "%.6f");
		fputs(", \"dirty_growth_pct\": ", f);
		json_num(f, qs_report_dirty_growth(r), "%.6f");
		fputs("},\n      \"steadystate\": ", f);
		if (r->ss.criterion) {
			fputs("{\"criterion\": ", f);
			qs_report_json_quote(f, r->ss.criterion);
			fputs(", \"limit\": ", f);
			json_num(f, r->ss.limit, "%.6f");
			fprintf(f, ", \"pct\": %s, \"duration_s\": ", r->ss.pct ? "true" : "false");
			json_num(f, r->ss.duration_s, "%.6f");
			fprintf(f, ", \"reached\": %s, \"at_s\": ", r->ss.reached ? "true" : "false");
			json_num(f, r->ss.at_s, "%.6f");
			fputs(", \"last\": ", f);
			json_num(f, r->ss.last, "%.6f");
			fputs("}", f);
		} else {
			fputs("null", f);
		}
		fputs(",\n      \"wear\": {\"drive_prog_amp\": ", f);
		json_num(f, r->wear.drive_prog_amp, "%.6f");
		fputs(", \"nand_per_client\": ", f);
		json_num(f, r->wear.nand_per_client, "%.6f");
		fputs(", \"client_bytes_writable\": ", f);
		json_num(f, r->wear.client_bytes_writable, "%.0f");
		fputs(", \"life_years\": ", f);
		json_num(f, r->wear.life_years, "%.6f");
		fputs(",\n               \"common_write_bytes_per_s\": ", f);
		json_num(f, wo.common, "%.3f");
		fputs(", \"life_years_common\": ", f);
		json_num(f, wo.life_common, "%.6f");
		fputs(", \"rated_write_bytes_per_s\": ", f);
		json_num(f, wo.rated, "%.3f");
		fputs(", \"life_years_rated\": ", f);
		json_num(f, wo.life_rated, "%.6f");
		fprintf(f, "},\n      \"fast\": {\"write_bytes\": %" PRIu64 ", \"read_bytes\": %" PRIu64
			   ", \"written_per_client_byte\": ",
			r->fast_write_bytes, r->fast_read_bytes);
		json_num(f, qs_report_per_client(r, r->fast_write_bytes), "%.6f");
		fputs(", \"read_per_client_byte\": ", f);
		json_num(f, qs_report_per_client(r, r->fast_read_bytes), "%.6f");
		fputs(", \"life_years\": ", f);
		json_num(f, r->shaping ? r->fast_life_years : NAN, "%.6f");
		fputs("},\n", f);
		json_map(f, r);
		fputs(",\n", f);
		json_mem(f, r);
		fputs("\n    }", f);
	}
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------------ CSV */

static void csv_str(FILE *f, const char *s)
{
	s = s ? s : "";
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v, const char *fmt)
{
	fputc(',', f);
	if (isfinite(v))
		fprintf(f, fmt, v);
}

static void csv_dir(FILE *f, const struct qs_report_dir *d)
{
	csv_num(f, d->iops, "%.3f");
	fprintf(f, ",%" PRIu64, d->bw_bytes);
	csv_num(f, d->lat_mean_ns, "%.3f");
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, d->lat_p50_ns, d->lat_p99_ns,
		d->lat_p999_ns);
}

/* An unsigned figure, or an empty field where it does not apply. */
static void csv_u64(FILE *f, bool applies, uint64_t v)
{
	fputc(',', f);
	if (applies)
		fprintf(f, "%" PRIu64, v);
}

/* The table's map rows: empty fields without log placement. */
static void csv_map(FILE *f, const struct qs_report_run *r)
{
	csv_num(f, qs_report_map_miss_pct(r), "%.6f");
	csv_u64(f, qs_report_is_log(r), qs_report_map_io_bytes(r));
	csv_u64(f, qs_report_is_log(r), r->map_peak_bytes);
}

/* The engine's DRAM, as run and at full scale: empty with shaping off. */
static void csv_mem(FILE *f, const struct qs_report_run *r)
{
	csv_u64(f, r->shaping, r->mem.total);
	csv_u64(f, r->shaping, qs_report_mem_full_scale(r));
}

int qs_report_csv(FILE *f, const struct qs_report_run *runs, size_t n)
{
	fputs("job,shaping,policy,placement,"
	      "read_iops,read_bw_bytes,read_lat_mean_ns,read_lat_p50_ns,"
	      "read_lat_p99_ns,read_lat_p999_ns,"
	      "write_iops,write_bw_bytes,write_lat_mean_ns,write_lat_p50_ns,"
	      "write_lat_p99_ns,write_lat_p999_ns,"
	      "qlc_write_bytes,qlc_writes,qlc_iu_whole_writes,qlc_read_fill_bytes,"
	      "qlc_waf_host,qlc_waf_iu,qlc_life_years,fast_write_bytes,mode,"
	      "drive_prog_amp,nand_per_client,client_bytes_writable,life_years,"
	      "common_write_bytes_per_s,life_years_common,rated_write_bytes_per_s,"
	      "life_years_rated,client_write_bytes,round_write_bytes,round_share_pct,"
	      "dirty_start_bytes,dirty_end_bytes,dirty_end_share_pct,dirty_growth_pct,"
	      "ss_criterion,ss_reached,ss_at_s,map_miss_pct,map_page_io_bytes,"
	      "map_dram_peak_bytes,engine_bytes,engine_full_scale_bytes,fast_read_bytes,"
	      "fast_written_per_client,fast_read_per_client,map_page_reads_per_client,"
	      "fast_life_years\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct qs_report_run *r = &runs[i];
		csv_str(f, r->job);
		fprintf(f, ",%s,", qs_report_shaping_name(r->shaping));
		csv_str(f, policy_of(r));
		fputc(',', f);
		csv_str(f, placement_of(r));
		csv_dir(f, &r->read);
		csv_dir(f, &r->write);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, r->qlc.write_bytes,
			r->qlc.writes, r->qlc.iu_whole_writes, r->qlc.read_fill_bytes);
		csv_num(f, r->qlc.waf_host, "%.6f");
		csv_num(f, r->qlc.waf_iu, "%.6f");
		csv_num(f, r->qlc.life_years, "%.6f");
		fprintf(f, ",%" PRIu64 ",", r->fast_write_bytes);
		csv_str(f, r->mode ? r->mode : "sim");
		struct wear_out wo;
		wear_out(runs, n, r, &wo);
		csv_num(f, r->wear.drive_prog_amp, "%.6f");
		csv_num(f, r->wear.nand_per_client, "%.6f");
		csv_num(f, r->wear.client_bytes_writable, "%.0f");
		csv_num(f, r->wear.life_years, "%.6f");
		csv_num(f, wo.common, "%.3f");
		csv_num(f, wo.life_common, "%.6f");
		csv_num(f, wo.rated, "%.3f");
		csv_num(f, wo.life_rated, "%.6f");
		fprintf(f, ",%" PRIu64 ",%" PRIu64, r->client_write_bytes, r->round_write_bytes);
		csv_num(f, qs_report_round_share(r), "%.6f");
		fprintf(f, ",%" PRIu64 ",%" PRIu64, r->dirty_start_bytes, r->dirty_end_bytes);
		csv_num(f, qs_report_dirty_share(r), "%.6f");
		csv_num(f, qs_report_dirty_growth(r), "%.6f");
		fputc(',', f);
		if (r->ss.criterion)
			fprintf(f, "%s,%d", r->ss.criterion, r->ss.reached ? 1 : 0);
		else
			fputc(',', f);
		csv_num(f, r->ss.at_s, "%.6f");
		csv_map(f, r);
		csv_mem(f, r);
		csv_u64(f, r->shaping, r->fast_read_bytes);
		csv_num(f, r->shaping ? qs_report_per_client(r, r->fast_write_bytes) : NAN, "%.6f");
		csv_num(f, r->shaping ? qs_report_per_client(r, r->fast_read_bytes) : NAN, "%.6f");
		csv_num(f, qs_report_is_log(r) ? qs_report_per_client(r, r->map_page_reads *
								  QS_BLOCK_SIZE)
					       : NAN,
			"%.6f");
		csv_num(f, r->shaping ? r->fast_life_years : NAN, "%.6f");
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------------ SVG */

double qs_report_metric_value(const struct qs_report_run *r, enum qs_report_metric m)
{
	switch (m) {
	case QS_METRIC_WRITE_IOPS: return r->write.iops;
	case QS_METRIC_READ_IOPS: return r->read.iops;
	case QS_METRIC_WRITE_BW: return (double)r->write.bw_bytes / 1e6;
	case QS_METRIC_READ_BW: return (double)r->read.bw_bytes / 1e6;
	case QS_METRIC_WRITE_P99: return (double)r->write.lat_p99_ns / 1e3;
	case QS_METRIC_READ_P99: return (double)r->read.lat_p99_ns / 1e3;
	case QS_METRIC_QLC_WRITE_BYTES: return (double)r->qlc.write_bytes / 1e6;
	case QS_METRIC_WAF_HOST: return r->qlc.waf_host;
	case QS_METRIC_WAF_IU: return r->qlc.waf_iu;
	case QS_METRIC_LIFE_YEARS: return r->qlc.life_years;
	case QS_METRIC_NAND_PER_CLIENT: return r->wear.nand_per_client;
	case QS_METRIC_DRIVE_PROG_AMP: return r->wear.drive_prog_amp;
	case QS_METRIC_LIFE_COMMON: return NAN;
	}
	return NAN;
}

const char *qs_report_metric_label(enum qs_report_metric m)
{
	switch (m) {
	case QS_METRIC_WRITE_IOPS: return "write IOPS";
	case QS_METRIC_READ_IOPS: return "read IOPS";
	case QS_METRIC_WRITE_BW: return "write MB/s";
	case QS_METRIC_READ_BW: return "read MB/s";
	case QS_METRIC_WRITE_P99: return "write p99 latency (us)";
	case QS_METRIC_READ_P99: return "read p99 latency (us)";
	case QS_METRIC_QLC_WRITE_BYTES: return "QLC write MB";
	case QS_METRIC_WAF_HOST: return "QLC write amplification, host (x)";
	case QS_METRIC_WAF_IU: return "QLC write amplification, IU (x)";
	case QS_METRIC_LIFE_YEARS: return "projected QLC life (years)";
	case QS_METRIC_NAND_PER_CLIENT: return "NAND bytes programmed per client byte written (x)";
	case QS_METRIC_DRIVE_PROG_AMP: return "drive program amplification, GC included (x)";
	case QS_METRIC_LIFE_COMMON: return "QLC life at the slowest variant's write rate (years)";
	}
	return "?";
}

static void xml_str(FILE *f, const char *s)
{
	for (s = s ? s : ""; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A round step near range / target_ticks: 1, 2 or 5 times a power of 10. */
static double nice_step(double range, int target_ticks)
{
	if (!(range > 0))
		return 1;
	double raw = range / target_ticks;
	double p = pow(10, floor(log10(raw)));
	double m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* Short label for an axis tick or bar value: 1.5K, 2.3M, 0.25. */
static void fmt_short(char *b, size_t n, double v)
{
	double a = fabs(v);
	if (!isfinite(v))
		snprintf(b, n, isnan(v) ? "-" : "inf");
	else if (a >= 1e9)
		snprintf(b, n, "%.3gG", v / 1e9);
	else if (a >= 1e6)
		snprintf(b, n, "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(b, n, "%.3gK", v / 1e3);
	else if (a >= 1e3)
		snprintf(b, n, "%.0f", v); /* %g would write 8.4e+03 */
	else
		snprintf(b, n, "%.3g", v);
}

static void svg_head(FILE *f, int w, int h)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h, w, h);
}

/* Run variant: "off" or "on POLICY"; equal variants share a colour. */
static void variant_name(char *b, size_t n, const struct qs_report_run *r)
{
	if (r->shaping)
		snprintf(b, n, "on %s", qs_report_label(r));
	else
		snprintf(b, n, "off");
}

/* Bar i's value: metric_value, or the life at its job's common rate. */
static double bar_value(const struct qs_report_run *runs, size_t n, size_t i,
			enum qs_report_metric m)
{
	if (m == QS_METRIC_LIFE_COMMON)
		return qs_report_life_at(&runs[i], qs_report_common_rate(runs, n, runs[i].job));
	return qs_report_metric_value(&runs[i], m);
}

int qs_report_svg_bars(FILE *f, const char *title,
		       const struct qs_report_run *runs, size_t n,
		       const enum qs_report_metric *metrics, size_t nmetrics)
{
	static const enum qs_report_metric ab[] = {QS_METRIC_WRITE_IOPS,
						   QS_METRIC_NAND_PER_CLIENT};
	if (!metrics) {
		metrics = ab;
		nmetrics = sizeof(ab) / sizeof(ab[0]);
	}
	size_t *job_of = calloc(n ? n : 1, sizeof(size_t));
	size_t *var_of = calloc(n ? n : 1, sizeof(size_t));
	size_t *jobs = calloc(n ? n : 1, sizeof(size_t));  /* first run of job j */
	size_t *vars = calloc(n ? n : 1, sizeof(size_t));  /* first run of variant v */
	size_t *slot = calloc(n ? n : 1, sizeof(size_t));  /* job j's group in a panel */
	bool *shown = calloc(n ? n : 1, sizeof(bool));	   /* job j has a bar there */
	if (!job_of || !var_of || !jobs || !vars || !slot || !shown) {
		free(job_of), free(var_of), free(jobs), free(vars), free(slot), free(shown);
		return -ENOMEM;
	}
	size_t nj = 0, nv = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j, v;
		char a[80], b[80];
		for (j = 0; j < nj; j++)
			if (same_str(runs[jobs[j]].job, runs[i].job))
				break;
		if (j == nj)
			jobs[nj++] = i;
		job_of[i] = j;
		variant_name(a, sizeof(a), &runs[i]);
		for (v = 0; v < nv; v++) {
			variant_name(b, sizeof(b), &runs[vars[v]]);
			if (!strcmp(a, b))
				break;
		}
		if (v == nv)
			vars[nv++] = i;
		var_of[i] = v;
	}

	/* A panel shows the jobs with a value in it (a write figure leaves out
	 * read-only jobs, whose zero bars said nothing), and only if it has one. */
	size_t npanels = 0;
	for (size_t m = 0; m < nmetrics; m++)
		for (size_t i = 0; i < n; i++) {
			double v = bar_value(runs, n, i, metrics[m]);
			if (isfinite(v) && v > 0) {
				npanels++;
				break;
			}
		}
	const int W = 960, top = 60, ph = 250, gap = 70, left = 80, right = 20;
	const int H = top + (int)npanels * (ph + gap) + 10;
	const int pw = W - left - right;
	svg_head(f, W, H);
	if (title) {
		fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\" "
			"text-anchor=\"middle\">", W / 2);
		xml_str(f, title);
		fputs("</text>\n", f);
	}
	/* legend */
	for (size_t v = 0; v < nv; v++) {
		char name[80];
		int x = left + (int)v * 140;
		variant_name(name, sizeof(name), &runs[vars[v]]);
		fprintf(f, "<rect x=\"%d\" y=\"36\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"46\">", x, palette[v % NPALETTE], x + 16);
		xml_str(f, name);
		fputs("</text>\n", f);
	}
	for (size_t m = 0, pm = 0; m < nmetrics; m++) {
		int y0 = top + (int)pm * (ph + gap) + 20; /* panel top */
		double vmax = 0;
		memset(shown, 0, n * sizeof(*shown));
		for (size_t i = 0; i < n; i++) {
			double v = bar_value(runs, n, i, metrics[m]);
			if (isfinite(v) && v > 0)
				shown[job_of[i]] = true;
			if (isfinite(v) && v > vmax)
				vmax = v;
		}
		size_t nshown = 0;
		for (size_t j = 0; j < nj; j++)
			if (shown[j])
				slot[j] = nshown++;
		if (!nshown)
			continue;
		pm++;
		double step = nice_step(vmax > 0 ? vmax : 1, 5);
		double ymax = ceil((vmax > 0 ? vmax : 1) / step) * step;
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">",
			left, y0 - 8);
		xml_str(f, qs_report_metric_label(metrics[m]));
		fputs("</text>\n", f);
		for (double t = 0; t <= ymax + step / 2; t += step) {
			double y = y0 + ph - t / ymax * ph;
			char b[32];
			fmt_short(b, sizeof(b), t);
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				"stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
				"</text>\n", left, y, left + pw, y, left - 6, y + 4, b);
		}
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
			left, y0, left, y0 + ph, left, y0 + ph, left + pw, y0 + ph);
		double gw = (double)pw / (double)nshown;
		double bw = (gw * 0.8) / (double)(nv ? nv : 1);
		for (size_t j = 0; j < nj; j++) {
			if (!shown[j])
				continue;
			double gx = left + gw * (double)slot[j] + gw * 0.1;
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
				"font-size=\"11\">", gx + gw * 0.4, y0 + ph + 16);
			xml_str(f, runs[jobs[j]].job);
			fputs("</text>\n", f);
			for (size_t i = 0; i < n; i++) {
				if (job_of[i] != j)
					continue;
				double v = bar_value(runs, n, i, metrics[m]);
				double x = gx + bw * (double)var_of[i];
				char b[32];
				fmt_short(b, sizeof(b), v);
				if (isfinite(v) && v > 0) {
					double h = v / ymax * ph;
					fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
						"height=\"%.1f\" fill=\"%s\"><title>", x,
						y0 + ph - h, bw * 0.92, h,
						palette[var_of[i] % NPALETTE]);
					xml_str(f, runs[i].job);
					fprintf(f, " %s: %s</title></rect>\n",
						runs[i].shaping ? "on" : "off", b);
					fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
						"font-size=\"10\">%s</text>\n", x + bw * 0.46,
						y0 + ph - h - 3, b);
				} else {
					fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
						"font-size=\"10\">%s</text>\n", x + bw * 0.46,
						y0 + ph - 3, b);
				}
			}
		}
	}
	fputs("</svg>\n", f);
	free(job_of), free(var_of), free(jobs), free(vars), free(slot), free(shown);
	return ferror(f) ? -EIO : 0;
}

int qs_report_svg_lines(FILE *f, const char *title, const char *xlabel,
			const char *ylabel, const struct qs_report_series *s,
			size_t nseries, bool log_y)
{
	double xmax = 0, ymin = INFINITY, ymax = 0;
	for (size_t k = 0; k < nseries; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			const struct qs_report_point *p = &s[k].pts[i];
			if (!isfinite(p->x) || !isfinite(p->y))
				continue;
			if (log_y && !(p->y > 0))
				return -EINVAL;
			if (p->x > xmax)
				xmax = p->x;
			if (p->y > ymax)
				ymax = p->y;
			if (p->y < ymin)
				ymin = p->y;
		}
	const int W = 960, H = 620, left = 90, right = 30, top = 60, bottom = 70;
	const int pw = W - left - right, ph = H - top - bottom;
	double xstep = nice_step(xmax > 0 ? xmax : 1, 8);
	double xtop = ceil((xmax > 0 ? xmax : 1) / xstep) * xstep;
	double ylo = 0, yhi, ystep = 0;
	if (log_y) {
		ylo = isfinite(ymin) ? floor(log10(ymin)) : 0;
		yhi = ymax > 0 ? ceil(log10(ymax)) : 1;
		if (yhi <= ylo)
			yhi = ylo + 1;
	} else {
		ystep = nice_step(ymax > 0 ? ymax : 1, 6);
		yhi = ceil((ymax > 0 ? ymax : 1) / ystep) * ystep;
	}
#define SX(x) (left + (x) / xtop * pw)
#define SY(y) (top + ph - ((log_y ? log10(y) : (y)) - ylo) / (yhi - ylo) * ph)
	svg_head(f, W, H);
	if (title) {
		fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\" "
			"text-anchor=\"middle\">", W / 2);
		xml_str(f, title);
		fputs("</text>\n", f);
	}
	for (double t = 0; t <= xtop + xstep / 2; t += xstep) {
		char b[32];
		fmt_short(b, sizeof(b), t);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
			SX(t), top, SX(t), top + ph, SX(t), top + ph + 16, b);
	}
	if (log_y) {
		for (double e = ylo; e <= yhi + 0.5; e += 1) {
			char b[32];
			double y = top + ph - (e - ylo) / (yhi - ylo) * ph;
			fmt_short(b, sizeof(b), pow(10, e));
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				"stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
				"</text>\n", left, y, left + pw, y, left - 6, y + 4, b);
		}
	} else {
		for (double t = 0; t <= yhi + ystep / 2; t += ystep) {
			char b[32];
			fmt_short(b, sizeof(b), t);
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				"stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
				"</text>\n", left, SY(t), left + pw, SY(t), left - 6, SY(t) + 4, b);
		}
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"black\"/>\n", left, top, pw, ph);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", left + pw / 2, H - 24);
	xml_str(f, xlabel);
	fprintf(f, "</text>\n<text x=\"20\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %d)\">", top + ph / 2, top + ph / 2);
	xml_str(f, ylabel);
	fputs("</text>\n", f);
	for (size_t k = 0; k < nseries; k++) {
		const char *col = palette[(k + 1) % NPALETTE];
		int lx = left + (int)k * 160;
		fprintf(f, "<rect x=\"%d\" y=\"36\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"46\">", lx, col, lx + 16);
		xml_str(f, s[k].name);
		fprintf(f, "</text>\n<polyline fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"2\" points=\"", col);
		for (size_t i = 0; i < s[k].n; i++) {
			const struct qs_report_point *p = &s[k].pts[i];
			if (isfinite(p->x) && isfinite(p->y))
				fprintf(f, "%.1f,%.1f ", SX(p->x), SY(p->y));
		}
		fputs("\"/>\n", f);
		for (size_t i = 0; i < s[k].n; i++) {
			const struct qs_report_point *p = &s[k].pts[i];
			char bx[32], by[32];
			if (!isfinite(p->x) || !isfinite(p->y))
				continue;
			fmt_short(bx, sizeof(bx), p->x);
			fmt_short(by, sizeof(by), p->y);
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">"
				"<title>%s, %s</title></circle>\n", SX(p->x), SY(p->y), col,
				bx, by);
		}
	}
#undef SX
#undef SY
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
