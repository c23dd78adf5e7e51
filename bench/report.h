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

#include "qlcshape/engine.h"

struct qs_hist;

/* One key=value of a job file as written (fio's "job options"). */
struct qs_report_opt {
	const char *key, *val;
};

/* fio's default percentile list (its percentile_list), in fio's order. */
#define QS_REPORT_NPCT 17
extern const double qs_report_pct_list[QS_REPORT_NPCT];
/* The most a job's percentile_list may hold (fio's limit). */
#define QS_REPORT_PCT_MAX 20

/* The directions fio reports, in its order. */
enum qs_report_ddir { QS_DDIR_READ = 0, QS_DDIR_WRITE, QS_DDIR_TRIM, QS_DDIR_N };

/* The latencies fio reports of a direction: submission (issue until the
 * engine took the request), completion (from then on) and their sum. */
enum qs_report_latk { QS_LAT_SUBMIT = 0, QS_LAT_COMPLETE, QS_LAT_TOTAL, QS_LAT_N };

/* fio's unified_rw_reporting: how an entry's directions are reported. */
enum qs_report_unified {
	QS_UNIFIED_NONE = 0, /* read, write and trim each on their own */
	QS_UNIFIED_MIXED,    /* the three summed, reported as "mixed" only */
	QS_UNIFIED_BOTH,     /* each on its own, then "mixed" */
};

/* fio's statistics of one latency in ns (its slat_ns, clat_ns, lat_ns). */
struct qs_report_lat {
	uint64_t n, min, max;	      /* min and max 0 when n is 0 */
	double mean, stddev;	      /* stddev of the sample (n - 1), fio's */
	unsigned npct;		      /* percentiles below (0: fio's list, zeros) */
	double at[QS_REPORT_PCT_MAX]; /* the job's percentile_list, else fio's */
	uint64_t pct[QS_REPORT_PCT_MAX]; /* the latency at each */
};

/* fio's figures of one direction over the measured window. */
struct qs_report_fdir {
	uint64_t io_bytes;  /* client bytes completed (before 4 KiB rounding) */
	uint64_t total_ios; /* I/Os completed */
	struct qs_report_lat lat[QS_LAT_N];
};

/* Fill l from the histogram h (NULL or empty: all zero). */
/* l from h at the npct percentiles of list (ascending; NULL or 0: fio's
 * default, qs_report_pct_list). */
void qs_report_lat_fill(struct qs_report_lat *l, const struct qs_hist *h, const double *list,
			unsigned npct);

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

/*
 * Wear of one run, from the QLC model's counters over the measured window
 * (docs/BENCH-OUTPUT.md, Formulas). NAN where a figure does not exist (no
 * drive model, no rating, no client writes).
 */
struct qs_report_wear {
	double drive_prog_amp;	       /* NAND bytes programmed / bytes written to the QLC */
	double nand_per_client;	       /* NAND bytes programmed / client bytes written */
	double client_bytes_writable;  /* client bytes until the rated budget is used up */
	double life_years;	       /* that, at this run's own client write rate */
};

/* fio's steady-state detection in one run (job option steadystate). */
struct qs_report_ss {
	const char *criterion; /* "iops", "iops_slope", "bw", "bw_slope"; NULL: not checked */
	double limit;	       /* as in the job file */
	bool pct;	       /* limit in percent of the samples' mean */
	double duration_s;     /* steadystate_duration */
	bool reached;	       /* the job ended steady (else at runtime, or its size) */
	double at_s;	       /* when, seconds since the job started; NAN if not */
	double last;	       /* the last criterion value computed; NAN: the ring never filled */
};

struct qs_report_run {
	const char *job;    /* job name */
	/* fio's error of the job: 0, or ETIMEDOUT when an I/O took
	 * over_lat_ns, above its max_latency max_lat_ns, and ended it */
	int error;
	uint64_t over_lat_ns, max_lat_ns;
	char error_why[200]; /* what ended the job, for the table ("": none) */
	/* fio's latency_target search: the depth it allowed when the job
	 * ended (its last clone's, fio's rule for a sum; 0: no search), and
	 * the job's latency_target, latency_window and latency_percentile */
	unsigned lat_depth;
	uint64_t lat_target_ns, lat_window_ns;
	double lat_pct;
	bool shaping;	    /* false: passthrough ("off"); true: cache ("on") */
	const char *policy; /* destage policy name; "-" or "" when off */
	const char *placement; /* "inplace" or "log"; "-", "" or NULL when off */
	const char *mode;   /* bench mode: "sim", "emu", "dev"; NULL = "sim" */
	struct qs_report_dir read, write;
	struct qs_report_dir trim;  /* trims (fio's rw=trim, randtrim; traces) */
	struct qs_report_dir mixed; /* the three together (unified_rw_reporting) */
	struct qs_report_qlc qlc;
	uint64_t fast_write_bytes; /* bytes written to the fast tier */
	uint64_t fast_read_bytes;  /* bytes read from it (log data, map and P2L pages) */
	double fast_life_years;	   /* the fast device's projected life at this run's
				      rate of writes to it (qs_report_fast_life);
				      NAN: no rating, or shaping off */
	struct qs_report_wear wear;
	/* the writes the engine received in the window (every job of a group,
	 * as the QLC figures): bytes the client asked for, and bytes rounding
	 * them out to whole 4 KiB blocks added (traces; generated I/O is whole
	 * blocks) */
	uint64_t client_write_bytes, round_write_bytes;
	/* bytes whose newest copy was still only in the log (dirty, not yet
	 * on the QLC) when the window opened and when it closed; 0 when off */
	uint64_t dirty_start_bytes, dirty_end_bytes;
	/* log placement's map pages over the window: lookups that found their
	 * page in DRAM or not, pages read and written on the fast tier, and
	 * the most DRAM they took (0 in place) */
	uint64_t map_hits, map_misses, map_page_reads, map_page_writes, map_peak_bytes;
	/* the engine's DRAM by part when the window closed, at the run's
	 * scale (shaping on; not reported off), and mem_scale, the real
	 * drive's capacity over the model's (0 or 1: unscaled, dev mode),
	 * which qs_report_mem_full_scale() needs */
	struct qs_engine_mem mem;
	double mem_scale;
	/* the engine's configuration and devices at the run's scale (shaping
	 * on; mem_fast 0 when unknown): the full-scale figure plans the same
	 * engine over the real drive (qs_report_mem_full_scale) */
	struct qs_engine_conf mem_conf;
	uint64_t mem_fast, mem_qlc;
	struct qs_report_ss ss;
	/* client write bytes per second the job asks for with rate_iops (all
	 * clones, writes' share of the mix); 0 when unrated */
	double rated_write_bytes_per_s;
	/* fio's figures per direction and the directions together, over
	 * runtime_ns: the client window, the longest of the entry's jobs'
	 * (fio's runtime of a group) */
	struct qs_report_fdir fio[QS_DDIR_N], fio_mixed;
	uint64_t runtime_ns;
	/* fio's reporting: the jobs this entry sums (group_reporting; 1 for
	 * a job of its own; 0: the job is summed in an earlier entry and is
	 * not reported), fio's group number, unified_rw_reporting of the
	 * entry's first job, the name fio prints (NULL: job), and that job's
	 * options as written (fio's "job options") */
	unsigned members;
	unsigned groupid;
	enum qs_report_unified unified;
	const char *fio_name;
	const struct qs_report_opt *opts;
	size_t nopts;
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
 *   life = budget_bytes * (capacity / rated_capacity)
 *          / (qlc_write_bytes_per_s * prog_amp * 31557600 s/year)
 * budget_bytes is what the drive may program over its life (the rating in
 * bytes written times the NAND bytes its pattern programs per byte, e.g.
 * 104.55e15 x 1.00), on a drive of rated_capacity bytes; capacity is the
 * drive being modelled (the budget scales with it: a fixed number of
 * full-drive writes). prog_amp is what the drive programs per byte sent
 * to it (qs_report_qlc_fill: the model's, IU effect and GC). Returns
 * INFINITY when nothing is written, NAN on invalid input (<= 0 budget).
 * Any time, any thread.
 */
/*
 * The fast device's projected life in years: its rating (rating_bytes,
 * its profile's endurance_pbw x 1e15) times the NAND bytes per byte
 * under the rating's pattern (rating_prog_amp; 0: 1), over the run's rate
 * of writes to it (write_bytes over elapsed_ns) times its own program
 * amplification where its model has one (model_nand_prog_bytes /
 * model_write_bytes; model_write_bytes 0: none, 1). The whole device's
 * rating: a log that is one partition of a shared device wears it with
 * the others' writes as well. NAN without a rating or a window; INFINITY
 * when nothing was written.
 */
double qs_report_fast_life(double rating_bytes, double rating_prog_amp, uint64_t write_bytes,
			   uint64_t model_write_bytes, uint64_t model_nand_prog_bytes,
			   uint64_t elapsed_ns);

double qs_report_life_years(double budget_bytes, uint64_t rated_capacity,
			    uint64_t capacity, double qlc_write_bytes_per_s,
			    double prog_amp);

/* What one run measured on the QLC side, over the measured window. */
struct qs_report_qlc_in {
	uint64_t client_write_bytes;  /* bytes the client asked to write (before
					 4 KiB rounding) */
	uint64_t qlc_write_bytes;     /* bytes the engine wrote to the QLC */
	uint64_t qlc_writes, qlc_iu_whole_writes, read_fill_bytes;
	uint64_t drive_write_bytes;   /* bytes the QLC model received; 0 = no model */
	uint64_t drive_prog_bytes;    /* bytes it programmed for them (whole IUs) */
	uint64_t drive_nand_prog_bytes; /* bytes its NAND programmed (host and GC) */
	uint64_t elapsed_ns;	      /* measured time */
	double rating_bytes;	      /* endurance rating, bytes (the profile's pattern) */
	uint64_t rated_capacity;      /* capacity the rating is for */
	uint64_t capacity;	      /* capacity of the modelled drive */
	double rating_prog_amp;	      /* NAND bytes per byte under the rating's
					 pattern (0: 1) */
};

/*
 * Fill q from in with the formulas of docs/BENCH-OUTPUT.md:
 * waf_host = qlc_write_bytes / client_write_bytes, waf_iu =
 * drive_prog_bytes / drive_write_bytes, life_years from
 * qs_report_life_years() of the NAND budget (rating_bytes x
 * rating_prog_amp) at qlc_write_bytes / elapsed, amplified by the drive's
 * drive_nand_prog_bytes / drive_write_bytes (IU effect and GC). A ratio
 * whose denominator is 0 is NAN (printed as null / empty), and so is the
 * life when the drive's amplification is unknown (no drive model, e.g.
 * dev mode).
 */
void qs_report_qlc_fill(struct qs_report_qlc *q, const struct qs_report_qlc_in *in);

/*
 * Fill w from in with the wear formulas of docs/BENCH-OUTPUT.md:
 * drive_prog_amp = drive_nand_prog_bytes / drive_write_bytes,
 * nand_per_client = qlc_write_bytes / client_write_bytes x drive_prog_amp,
 * client_bytes_writable = rating_bytes x capacity / rated_capacity x
 * rating_prog_amp / nand_per_client, life_years = that at client bytes /
 * elapsed. NAN when a figure's inputs are missing (INFINITY: nothing
 * programmed). Any time; in stays the caller's.
 */
void qs_report_wear_fill(struct qs_report_wear *w, const struct qs_report_qlc_in *in);

/*
 * The common client write rate of job's variants among runs[0..n): the
 * slowest client write bytes per second of those that wrote and have a
 * wear figure (NAN if none). Every variant's life at this one rate
 * compares their wear; job NULL matches runs without a name.
 */
double qs_report_common_rate(const struct qs_report_run *runs, size_t n, const char *job);

/* Percent of r's client write bytes that 4 KiB rounding added (NAN
 * without client writes). */
double qs_report_round_share(const struct qs_report_run *r);

/*
 * Percent of r's client write bytes still dirty in the log when its window
 * closed (NAN without client writes), and the percent by which the dirty
 * bytes grew over the window. From QS_REPORT_DIRTY_NOTE_PCT of growth up,
 * WAF host is a lower bound: the window's writes it leaves out were not
 * made up for by older ones destaged in it, and the run should be longer.
 */
#define QS_REPORT_DIRTY_NOTE_PCT 10.0
double qs_report_dirty_share(const struct qs_report_run *r);
double qs_report_dirty_growth(const struct qs_report_run *r);
double qs_report_dirty_share(const struct qs_report_run *r);

/* Whether r ran with log placement (the map figures exist). */
bool qs_report_is_log(const struct qs_report_run *r);

/* Percent of r's map lookups that missed DRAM (NAN without log placement
 * or lookups), and the bytes of map pages it read and wrote on the fast
 * tier. */
double qs_report_map_miss_pct(const struct qs_report_run *r);
uint64_t qs_report_map_io_bytes(const struct qs_report_run *r);
/* bytes per client byte written in the window (client_write_bytes); NAN
 * without client writes. What one fast device serving several QLC drives
 * carries per byte each of them is written. */
double qs_report_per_client(const struct qs_report_run *r, uint64_t bytes);

/*
 * r's engine DRAM at the real drive's scale: the bench scales the drive,
 * the log and the map's DRAM down alike; this is the plan of the same
 * engine over the real ones (qs_report_mem_full_parts). A run whose devices
 * are unknown takes the parts that grow with capacity times mem_scale and
 * other (buffers, requests, records) as run.
 */
uint64_t qs_report_mem_full_scale(const struct qs_report_run *r);
/* The parts of that figure, when the run's engine and devices are known
 * (mem_fast): the plan of the same engine over the real drive and log
 * (qs_engine_dram_plan), with what the run grew beyond its own plan
 * added (dirty-IU records scaled up, requests as run). false: unknown. */
bool qs_report_mem_full_parts(const struct qs_report_run *r, struct qs_engine_mem *full);

/* Years run r's client_bytes_writable lasts at client_bytes_per_s (NAN if
 * either is unknown or the rate is not above 0). */
double qs_report_life_at(const struct qs_report_run *r, double client_bytes_per_s);

/* Shaping label used in every output: "off" or "on". */
const char *qs_report_shaping_name(bool shaping);

/* Terminal table: per job, one column per run (off first), plus on/off
 * ratio columns against the job's first "off" run. */
int qs_report_table(FILE *f, const struct qs_report_run *runs, size_t n);

/* s as a JSON string, quoted, '"' and backslash escaped, control bytes as
 * \u00XX (NULL: ""). */
void qs_report_json_quote(FILE *f, const char *s);

/* JSON: {"version": 1, "runs": [...]}; see docs/BENCH-OUTPUT.md. */
int qs_report_json(FILE *f, const struct qs_report_run *runs, size_t n);

/* fio's JSON (--output-format=json): fio's layout, for tools that read it. */
struct qs_report_fio_doc {
	const char *version;	/* "fio version" */
	int64_t time_ms;	/* when the runs ended, ms since the epoch */
	const struct qs_report_opt *gopts; /* the job file's [global] options */
	size_t ngopts;
	/* fio's entries ("jobs"), in order, their groupid as it is to be
	 * printed; each entry's name is its fio_name (else job) and its
	 * variant: "NAME (shaping off)", "NAME (shaping on, fifo, inplace)" */
	const struct qs_report_run *runs;
	size_t n;
	/* the bench's entries of the same runs: the common rates of the
	 * wear figures (qs_report_common_rate) are taken among these */
	const struct qs_report_run *bench;
	size_t nbench;
};

/*
 * fio's JSON of doc: "fio version", "timestamp", "timestamp_ms", "time",
 * "global options", "jobs", and per job "jobname", "groupid", "error",
 * "job options", "read", "write", "trim" (or "mixed", or both, after
 * unified_rw_reporting) each with io_bytes, io_kbytes, bw_bytes, bw (KiB/s),
 * iops, runtime (ms), total_ios, short_ios, drop_ios and slat_ns, clat_ns,
 * lat_ns (min, max, mean, stddev, N and, with samples, percentile at fio's
 * default list, keys printed with "%f"), "job_runtime", and the bench's
 * own figures in "qlcshape" (docs/BENCH-OUTPUT.md).
 */
int qs_report_fio_json(FILE *f, const struct qs_report_fio_doc *doc);

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
	QS_METRIC_NAND_PER_CLIENT,
	QS_METRIC_DRIVE_PROG_AMP,
	QS_METRIC_LIFE_COMMON, /* life at the job's slowest variant's rate */
};

/* The metric's value in run r and its label with unit. QS_METRIC_LIFE_COMMON
 * needs the job's other runs: NAN here, qs_report_svg_bars draws it. */
double qs_report_metric_value(const struct qs_report_run *r,
			      enum qs_report_metric m);
const char *qs_report_metric_label(enum qs_report_metric m);

/*
 * SVG, grouped bars: one panel per metric, one group per job, one bar per
 * run variant ("off", "on sweep"...) in a legend colour. title may be NULL.
 * metrics NULL means the A/B set: write IOPS (panel left out when no run
 * writes) and NAND bytes programmed per client byte.
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
