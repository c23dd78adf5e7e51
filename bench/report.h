/* SPDX-License-Identifier: MIT */
/*
 * Bench reports: the same list of runs printed as a terminal table (shaping
 * off and on side by side per job), JSON (fio's spirit, shape documented in
 * docs/BENCH-OUTPUT.md), CSV and SVG charts. Every printer writes to a
 * FILE * the caller owns and returns 0 or -errno (-EIO if the stream
 * failed). The runs are only read.
 */
#ifndef QS_BENCH_REPORT_H
#define QS_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct qs_hist;

/* Client-side figures of one direction (reads or writes). */
struct qs_report_dir {
	double iops;
	uint64_t bw_bytes;	    /* bytes per second */
	double lat_mean_ns;
	uint64_t lat_p50_ns, lat_p99_ns, lat_p999_ns;
};

struct qs_report_qlc {
	uint64_t write_bytes;	  /* bytes written to the QLC device */
	uint64_t writes;	  /* write commands sent to it */
	uint64_t iu_whole_writes; /* of those, IU-aligned and whole IUs */
	uint64_t read_fill_bytes; /* QLC reads done to complete partial IUs */
	double waf_host;	  /* QLC write bytes / client write bytes */
	double waf_iu;		  /* bytes the drive programs / bytes it got */
	double life_years;	  /* projected life; INFINITY if no writes */
};

struct qs_report_run {
	const char *job;    /* job name */
	bool shaping;	    /* false: passthrough ("off"); true: cache ("on") */
	const char *policy; /* destage policy name; "-" or "" when off */
	const char *placement; /* "inplace" or "log"; "-", "" or NULL when off */
	const char *mode;   /* bench mode: "sim", "emu", "dev"; NULL = "sim" */
	struct qs_report_dir read, write;
	struct qs_report_qlc qlc;
	uint64_t fast_write_bytes; /* bytes written to the fast tier */
};

/* A variant's name as the table's columns give it: its policy, "log-POLICY"
 * with log placement. */
const char *qs_report_label(const struct qs_report_run *r);

/*
 * Fill d from a latency histogram of one direction and its totals over
 * elapsed_ns (the measured time, after ramp_time): iops = ios / s,
 * bw_bytes = bytes / s. elapsed_ns 0 gives zero rates.
 */
void qs_report_dir_fill(struct qs_report_dir *d, const struct qs_hist *lat,
			uint64_t ios, uint64_t bytes, uint64_t elapsed_ns);

/*
 * Projected drive life in years:
 *   life = rating_bytes * (capacity / rated_capacity)
 *          / (qlc_write_bytes_per_s * waf_iu * 31557600 s/year)
 * rating_bytes is the endurance rating (bytes written, e.g. 22.93 PBW =
 * 22.93e15) for the write pattern it was measured with, on a drive of
 * rated_capacity bytes; capacity is the drive being modelled (the rating
 * scales with it: a fixed number of full-drive writes). waf_iu is the
 * IU write amplification relative to that pattern (1 when the writes reaching
 * the drive are whole IUs, as in the rating's 64K random pattern). Returns
 * INFINITY when nothing is written, NAN on invalid input (<= 0 ratings).
 */
double qs_report_life_years(double rating_bytes, uint64_t rated_capacity,
			    uint64_t capacity, double qlc_write_bytes_per_s,
			    double waf_iu);

/* What one run measured on the QLC side, over the measured window. */
struct qs_report_qlc_in {
	uint64_t client_write_bytes;  /* bytes the workload wrote */
	uint64_t qlc_write_bytes;     /* bytes the engine wrote to the QLC */
	uint64_t qlc_writes, qlc_iu_whole_writes, read_fill_bytes;
	uint64_t drive_write_bytes;   /* bytes the QLC model received; 0 = no model */
	uint64_t drive_prog_bytes;    /* bytes it programmed for them (whole IUs) */
	uint64_t elapsed_ns;	      /* measured time */
	double rating_bytes;	      /* endurance rating, bytes (64K random) */
	uint64_t rated_capacity;      /* capacity the rating is for */
	uint64_t capacity;	      /* capacity of the modelled drive */
};

/*
 * Fill q from in with the formulas of docs/BENCH-OUTPUT.md:
 * waf_host = qlc_write_bytes / client_write_bytes, waf_iu =
 * drive_prog_bytes / drive_write_bytes, life_years from
 * qs_report_life_years() at qlc_write_bytes / elapsed. A ratio whose
 * denominator is 0 is NAN (printed as null / empty), and so is the life
 * when waf_iu is unknown (no drive model, e.g. dev mode).
 */
void qs_report_qlc_fill(struct qs_report_qlc *q, const struct qs_report_qlc_in *in);

/* Shaping label used in every output: "off" or "on". */
const char *qs_report_shaping_name(bool shaping);

/* Terminal table: per job, one column per run (off first), plus on/off
 * ratio columns against the job's first "off" run. */
int qs_report_table(FILE *f, const struct qs_report_run *runs, size_t n);

/* JSON: {"version": 1, "runs": [...]}; see docs/BENCH-OUTPUT.md. */
int qs_report_json(FILE *f, const struct qs_report_run *runs, size_t n);

/* CSV: one header line, then one line per run; same fields as JSON. */
int qs_report_csv(FILE *f, const struct qs_report_run *runs, size_t n);

/* Figures a bar chart can show. */
enum qs_report_metric {
	QS_METRIC_WRITE_IOPS = 0,
	QS_METRIC_READ_IOPS,
	QS_METRIC_WRITE_BW,
	QS_METRIC_READ_BW,
	QS_METRIC_WRITE_P99,
	QS_METRIC_READ_P99,
	QS_METRIC_QLC_WRITE_BYTES,
	QS_METRIC_WAF_HOST,
	QS_METRIC_WAF_IU,
	QS_METRIC_LIFE_YEARS,
};

/* The metric's value in run r and its label with unit. */
double qs_report_metric_value(const struct qs_report_run *r,
			      enum qs_report_metric m);
const char *qs_report_metric_label(enum qs_report_metric m);

/*
 * SVG, grouped bars: one panel per metric, one group per job, one bar per
 * run variant ("off", "on sweep"...) in a legend colour. title may be NULL.
 * metrics NULL means the A/B pair: write IOPS and QLC IU write amplification.
 */
int qs_report_svg_bars(FILE *f, const char *title,
		       const struct qs_report_run *runs, size_t n,
		       const enum qs_report_metric *metrics, size_t nmetrics);

struct qs_report_point {
	double x, y;
};

struct qs_report_series {
	const char *name;
	const struct qs_report_point *pts;
	size_t n;
};

/*
 * SVG, line chart: each series a polyline with markers, in legend colours
 * (e.g. x = IOPS, y = p99 latency in us, one series per shaping/policy).
 * Points are drawn in the given order. log_y draws y on a log10 axis (all
 * y must then be > 0).
 */
int qs_report_svg_lines(FILE *f, const char *title, const char *xlabel,
			const char *ylabel, const struct qs_report_series *s,
			size_t nseries, bool log_y);

#endif
