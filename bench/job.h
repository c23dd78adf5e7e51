/* SPDX-License-Identifier: MIT */
/*
 * Bench job files: fio-style INI, fio's option names and meanings.
 *
 *   [global]          options every job below inherits
 *   rw=randwrite
 *   size=5%
 *   [4k-randwrite]    one section per job; its options override [global]
 *   bs=4k
 *
 * Options (fio semantics unless noted; docs/BENCH-OUTPUT.md has the list):
 * rw (with fio's :N; trims too), bs (R,W,T; multiples of 512, rounded up to
 * 4 KiB), bsrange, bssplit, blockalign, rwmixread, rwmixwrite,
 * iodepth, numjobs, size, filesize, io_size, loops, number_ios,
 * fill_device, offset, offset_increment, random_distribution (also normal,
 * zoned, zoned_abs), percentage_random, norandommap, rate_iops, rate, thinktime,
 * thinktime_blocks, zonemode=strided (zonesize, zoneskip), nrfiles=1,
 * rate_process, runtime, ramp_time, time_based, stonewall, kb_base,
 * steadystate (ss), steadystate_duration (ss_dur), steadystate_ramp_time
 * (ss_ramp), steadystate_check_interval (ss_interval), flow, flow_id,
 * flow_sleep, and fio's reporting: group_reporting, new_group,
 * unified_rw_reporting, name, percentile_list; the sync family (fsync,
 * fdatasync, end_fsync, fsync_on_close as flushes, sync and write_barrier as
 * FUA writes), max_latency, rate_min, rate_iops_min, rate_cycle,
 * offset_align, thinktime_iotime, fio's latency_target search
 * (latency_window, latency_percentile, latency_run); and for replay: trace (read_iolog), trace_format,
 * trace_columns, trace_timescale, trace_ignore_time (replay_no_stall),
 * replay_time_scale, replay_skip.
 * fio's syntax: a bare flag means flag=1 (time_based), ';' and '#' start
 * comments, "include FILE" reads FILE (relative to the including file's
 * directory) in place, ${NAME} is the environment variable NAME.
 * Every option of fio 3.33 is in one table (job.c's job_opts, read with
 * qs_job_opt): implemented, accepted without effect (ioengine, direct,
 * filename, verify, write_bw_log, ...: listed in the job's noeffect and
 * qs_job_file's ignored), or refused with the reason.
 */
#ifndef QS_BENCH_JOB_H
#define QS_BENCH_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "trace.h"

enum qs_job_rw {
	QS_RW_READ = 0,
	QS_RW_WRITE,
	QS_RW_RANDREAD,
	QS_RW_RANDWRITE,
	QS_RW_RW,     /* sequential mix ("rw" or "readwrite") */
	QS_RW_RANDRW, /* random mix */
	QS_RW_TRIM,	     /* sequential trims (engine discards) */
	QS_RW_RANDTRIM,	     /* random trims */
	QS_RW_TRIMWRITE,     /* fio's trimwrite: each trim then a write of its blocks */
	QS_RW_RANDTRIMWRITE, /* the same at random offsets */
};

enum qs_job_dist {
	QS_DIST_RANDOM = 0, /* uniform */
	QS_DIST_ZIPF,	    /* zipf:theta, theta > 0 and != 1 */
	QS_DIST_PARETO,	    /* pareto:h, 0 < h < 1 */
	QS_DIST_ZONED,	    /* zoned: / zoned_abs: access%/size pairs (zones[]) */
	QS_DIST_NORMAL,	    /* normal:dev, dev the deviation in % of the span, > 0 */
};

/* Zones a zoned or zoned_abs random_distribution may have. */
#define QS_JOB_ZONES_MAX 32

/* One zone of random_distribution=zoned: (or zoned_abs:): share of the
 * random I/Os and the blocks they fall in, from the span's start on. */
struct qs_job_zone {
	double access_pct; /* of the random I/Os, > 0; the zones' sum is 100 */
	uint64_t first, nblocks; /* in bs units of the span, resolved */
};

enum qs_job_rate_process {
	QS_RATE_LINEAR = 0, /* even spacing, 1/rate_iops apart */
	QS_RATE_POISSON,    /* exponential gaps with mean 1/rate_iops */
};

/* fio's steadystate criteria: how the per-interval samples must settle. */
enum qs_job_ss {
	QS_SS_NONE = 0,
	QS_SS_IOPS,	  /* every IOPS sample within the limit of their mean */
	QS_SS_IOPS_SLOPE, /* least-squares slope of the IOPS samples below the limit */
	QS_SS_BW,	  /* the same with bandwidth (bytes/s) */
	QS_SS_BW_SLOPE,
};

/* Samples a steady-state window may hold (steadystate_duration /
 * steadystate_check_interval). */
#define QS_JOB_SS_MAX_SAMPLES 100000

#define QS_JOB_NAME_MAX 64
/* The longest job file line, newline not counted (also once ${VAR} is
 * substituted): longer ones are refused naming the line. */
#define QS_JOB_MAX_LINE 1000

/* Block sizes a direction of a job may list (fio's bssplit). */
#define QS_JOB_BSS_MAX 64

/* One block size of a direction: lo == hi for one size (bs=R,W or a
 * bssplit entry), else fio's bsrange: multiples of lo up to hi, uniform. */
struct qs_job_bss {
	uint64_t lo, hi; /* bytes, multiples of 4096 */
	double pct;	 /* share of the direction's I/Os; a direction's sum is 100 */
	/* bytes the job asks for per I/O when that is not a multiple of 4 KiB
	 * (bs=512, bssplit=1536/10): lo is it rounded up to whole 4 KiB
	 * blocks, the rounding reported as such; 0: lo itself */
	uint64_t req;
};

/* The directions a job file gives per direction values for (bs=R,W,T):
 * reads, writes, trims (fio's order; QS_DDIR_* of report.h). */
#define QS_JOB_DIRS 3

/* One job, every option resolved to bytes, ns and enums. */
struct qs_job {
	char name[QS_JOB_NAME_MAX];
	char fio_name[QS_JOB_NAME_MAX]; /* fio's name= ("": the section's) */
	unsigned line;		   /* line of the job's [section] header */
	enum qs_job_rw rw;
	uint64_t bs;		   /* bytes, multiple of 4096; with several
				      sizes (nbss) the smallest: the grid
				      random offsets are drawn on */
	/* fio's bs=R,W,T, bsrange and bssplit: per direction (0 reads, 1
	 * writes, 2 trims) the sizes and their shares; every nbss 0: every
	 * I/O is bs */
	struct qs_job_bss bss[QS_JOB_DIRS][QS_JOB_BSS_MAX];
	unsigned nbss[QS_JOB_DIRS];
	uint64_t bs_max;	   /* the largest I/O (bs without nbss) */
	unsigned rwmixread;	   /* percent of reads in rw/randrw */
	unsigned iodepth;	   /* outstanding I/Os per clone (closed loop) */
	unsigned numjobs;	   /* clones of this job */
	uint64_t size;		   /* bytes of the span each clone works on */
	uint64_t offset;	   /* byte where clone 0's span starts */
	uint64_t offset_increment; /* clone i starts at offset + i * this */
	enum qs_job_dist dist;
	double dist_param;	   /* theta (zipf) or h (pareto) */
	bool norandommap;	   /* uniform draws with repeats; else a
				      permutation covers every block per pass */
	double rate_iops;	   /* per clone; 0 = unrated (closed loop); from
				      rate_iops, or fio's rate (bytes/s) / bs */
	enum qs_job_rate_process rate_process;
	/* a mixed job (rw, randrw) with a cap per direction that differ (fio's
	 * rate=R,W or rate_iops=R,W): rate_iops is their sum and a read is
	 * drawn with this share of it instead of rwmixread, so that each
	 * direction runs at its cap */
	bool rate_mix;
	double rate_read_share;
	uint64_t runtime_ns;	   /* 0 = until size bytes are done */
	uint64_t ramp_time_ns;	   /* leading time excluded from statistics */
	uint64_t startdelay_ns;	   /* fio's startdelay: the job (its ramp, its
				      runtime) starts this long after its group
				      starts, or after wait_for's job ended */
	unsigned wait_back;	   /* fio's wait_for: 0 = none, else the job
				      this many places earlier in the file (of
				      the same group) must end first */
	bool time_based;	   /* run for runtime even after io_bytes */
	uint64_t io_bytes;	   /* bytes a clone does before it ends (if not
				      time_based): fio's io_size (else size, or
				      size with filesize) times loops; 0 (a job
				      not from a file): size */
	uint64_t number_ios;	   /* fio's number_ios: end after this many
				      I/Os per clone; 0 = no limit */
	int64_t seq_skip;	   /* rw=read:N (sequential): N bytes skipped
				      after every I/O, a multiple of 4096;
				      negative goes backwards */
	uint64_t rand_seq_nr;	   /* rw=randread:N: a new random offset every
				      N I/Os, sequential between (1: every I/O) */
	uint64_t zone_size, zone_skip; /* fio's zonemode=strided (sequential
				      patterns): zone_size bytes of I/O, then
				      zone_skip bytes skipped; 0: no zones */
	uint64_t thinktime_ns;	   /* fio's thinktime: a closed-loop clone
				      waits this long before the I/O after every
				      thinktime_blocks; 0: none */
	uint64_t thinktime_blocks; /* >= 1 (fio's default 1) */
	/* fio's thinktime_iotime: thinktime once this much time passed since
	 * the last one (fio counts the thinktime in); then thinktime_blocks
	 * counts only if the file set it (thinktime_blocks_set). 0: none */
	uint64_t thinktime_iotime_ns;
	bool thinktime_blocks_set;
	/* fio's latency profile: with lat_target_ns, each clone searches for
	 * the deepest queue (1 to iodepth) at which lat_pct percent of the
	 * I/Os of a lat_window_ns window take at most lat_target_ns, and ends
	 * one window after it settles (lat_run: searches for the whole run);
	 * 0: no search (fio's default) */
	uint64_t lat_target_ns, lat_window_ns;
	double lat_pct; /* 0..100, fio's 100 */
	bool lat_run;
	unsigned pct_seq[QS_JOB_DIRS]; /* 100 - fio's percentage_random, for
				      reads, writes, trims: of a random pattern's I/Os, the
				      share that follows the last I/O instead
				      of a random offset (0: all random) */
	/* fio's sync family, for writes the job generates (a trace carries
	 * its own flushes): an engine flush after every fsync_every writes
	 * (fsync, fdatasync) and once the job's I/O is done (end_fsync,
	 * fsync_on_close); every barrier_every-th write (write_barrier), or
	 * every write (sync), with FUA. 0 / false: none. */
	uint64_t fsync_every, barrier_every;
	/* fio's max_latency: an I/O of the window slower than this ends the
	 * job with fio's error (ETIMEDOUT); 0: no bound */
	uint64_t max_latency_ns;
	/* fio's rate_min (bytes/s) and rate_iops_min per direction: checked
	 * over every rate_cycle_ns of the window; a direction the job issues
	 * below either ends the job with fio's error (EIO); 0: unchecked */
	uint64_t rate_min[QS_JOB_DIRS], rate_iops_min[QS_JOB_DIRS];
	uint64_t rate_cycle_ns; /* 0: fio's 1 s */
	/* fio's percentile_list: the percentiles fio's JSON reports, ascending;
	 * npct 0: fio's default list */
	double pct_list[QS_REPORT_PCT_MAX];
	unsigned npct;
	bool end_fsync, sync_writes;
	struct qs_job_zone zones[QS_JOB_ZONES_MAX];
	unsigned nzones;	   /* QS_DIST_ZONED only */
	bool stonewall;		   /* wait for earlier jobs before starting */
	/* fio's flow: a clone of a job with weight flow issues its next I/O
	 * only while its share of the I/Os its flow_id's clones issued is at
	 * most its share of their weights; else it waits flow_sleep_ns (once
	 * its I/O in flight is done), or for the others to issue more */
	unsigned flow, flow_id;	   /* weight 0: no flow control */
	uint64_t flow_sleep_ns;
	/* fio's reporting groups: new_group (or stonewall) starts a new group
	 * (groupid, counted from 0 in file order, fio's rule); a job with
	 * group_reporting is reported together with the job before it when
	 * both are in one group (fio sums a group's clones and jobs into one
	 * result) */
	bool new_group, group_reporting;
	unsigned groupid;
	enum qs_report_unified unified; /* fio's unified_rw_reporting */
	/* the key=value options of the job's own section as written, the
	 * last value of a repeated key (fio's "job options"; bare flags are
	 * not listed, as in fio's JSON); owned by the job file */
	const struct qs_report_opt *opts;
	size_t nopts;
	/*
	 * fio's steady-state detection (steadystate, steadystate_duration,
	 * steadystate_ramp_time, steadystate_check_interval): from ss_ramp_ns
	 * after the start, one sample of the job's IOPS or bandwidth (reads and
	 * writes together) per ss_interval_ns; the job ends once the last
	 * ss_dur_ns of samples meet the criterion (and its ramp_time is over),
	 * else at runtime. ss_dur_ns 0: no detection (fio's default).
	 */
	enum qs_job_ss ss;
	double ss_limit;	   /* absolute (IOPS, bytes/s, per sample for slopes) */
	bool ss_pct;		   /* ss_limit is a percentage of the samples' mean */
	uint64_t ss_dur_ns, ss_ramp_ns, ss_interval_ns;
	/* Replay (trace set): the generator options above except iodepth,
	 * size, offset and runtime are unused. */
	char *trace;		   /* path as written, NULL if none */
	const char *trace_file;	   /* where trace= was set: one of qs_job_file's files */
	unsigned trace_line;
	enum qs_trace_format trace_format;
	struct qs_trace_cols trace_cols; /* trace_columns (csv) */
	double trace_timescale;	   /* > 0; 1.0 = time stamps as they are */
	bool trace_ignore_time;
	/* fio's replay_skip: the requests of the trace not replayed, a bit
	 * (1u << QS_IO_READ ...) per kind (bench/workload.h); 0: none */
	unsigned replay_skip;
	/* fio's replay_scale (offsets divided by it) and replay_align (then
	 * aligned down to it, a power of 2); 0: as is */
	uint64_t replay_scale, replay_align;
	/* fio's write_iolog: the path the run's I/O is logged to as fio's
	 * iolog (version 2), NULL: none */
	char *write_iolog;
	/* The largest request of the trace after the 4 KiB mapping, once a
	 * scan found it (qs_trace_scan); 0 = not known, the run reads it. */
	uint64_t trace_max_io;
	/* fio's direct=0 or buffered=1: the job asks for buffered I/O, which
	 * the bench never does (its real I/O is O_DIRECT); where it was set */
	bool buffered;
	const char *buffered_file; /* one of qs_job_file's files */
	unsigned buffered_line;
	/* sizes written for a larger drive than the model: the keys
	 * qs_job_file_load_scaled scaled ("offset, offset_increment"; "":
	 * none) and by what they were divided */
	char scaled[64];
	double scaled_by;
	/* the options of the job and its [global] that change nothing in
	 * simulation ("ioengine, direct"), in the order first met; NULL if
	 * none. Owned by the file. */
	char *noeffect;
};

struct qs_job_file {
	char *path;
	uint64_t capacity; /* bytes the percentages were taken of */
	struct qs_job *jobs;
	size_t njobs;
	/* fio options the file sets that only concern a real engine, host,
	 * data content or fio's reports, "ioengine, direct, ..." in the order
	 * first met; NULL if none. Owned by the file. */
	char *ignored;
	char **files; /* the job file and every file it includes */
	size_t nfiles;
	/* the key=value options of every [global] section, as the jobs'
	 * opts (fio's "global options"); gopts points into opt_store */
	const struct qs_report_opt *gopts;
	size_t ngopts;
	struct qs_report_opt *opt_store; /* every job's and the globals' */
	size_t nopt_store;
};

/*
 * Load the job file at path. capacity (bytes, > 0) is the device size that
 * size=N% and offset=N% refer to and that every clone's span must fit in.
 * Every job section after [global] inherits it (fio's rule); keys before
 * any section are an error. On error returns -errno (-EINVAL for bad content) and writes one
 * line to err naming the file, line, key, value and what is allowed. On
 * success the caller owns *out and frees it with qs_job_file_free().
 */
int qs_job_file_load(const char *path, uint64_t capacity,
		     struct qs_job_file **out, char *err, size_t errlen);

/*
 * qs_job_file_load for a caller that will apply a --runtime of runtime_ns
 * (UINT64_MAX: none) with qs_job_file_override: that runtime satisfies a
 * time_based job's need of one, which the file may then leave out. The
 * caller must apply the override before running the jobs.
 */
int qs_job_file_load_runtime(const char *path, uint64_t capacity, uint64_t runtime_ns,
			     struct qs_job_file **out, char *err, size_t errlen);

/*
 * qs_job_file_load_runtime for a capacity that models a drive scale times
 * larger (the bench's model of the real drive, >= 1): a job whose sizes
 * and offsets in bytes (size, filesize, offset, offset_increment,
 * io_size) do not fit capacity has them divided by scale (4 KiB down), as
 * the bench scales --cache, and is refused only if they still do not fit
 * (with the error of the sizes as written); the job's scaled names them.
 * A job that fits is not scaled. scale 1: qs_job_file_load_runtime.
 */
int qs_job_file_load_scaled(const char *path, uint64_t capacity, uint64_t runtime_ns,
			    double scale, struct qs_job_file **out, char *err, size_t errlen);

/*
 * The command line's --runtime and --ramp-time for every job of f
 * (UINT64_MAX = not given). --runtime sets runtime (and time_based=1) and
 * also bounds the ramp: fio's ramp_time comes before the runtime, so a
 * job's ramp_time=30d under --runtime 200ms would run for 30 days. Without
 * --ramp-time, a job's ramp_time longer than --runtime is cut to it (the
 * run lasts at most twice --runtime) and a line naming the file, the
 * section's line, the key and both values goes to warn (if not NULL).
 * Returns the number of ramps cut.
 */
unsigned qs_job_file_override(struct qs_job_file *f, uint64_t runtime_ns,
			      uint64_t ramp_ns, FILE *warn);

/*
 * The bench's answer to each fio option (and to its own): every key a job
 * file may hold is in one table, in one of three classes.
 */
enum qs_job_opt_class {
	QS_JOB_OPT_DOES = 1,	/* implemented with fio's meaning */
	QS_JOB_OPT_NONE = 2,	/* accepted, no effect on a simulated drive (noted) */
	QS_JOB_OPT_REFUSED = 3, /* refused with the reason (some accept fio's off) */
};

struct qs_job_opt_info {
	const char *key;
	enum qs_job_opt_class cls; /* an alias: its option's */
	const char *here;	   /* what it does here, why nothing, or why refused */
	const char *of;		   /* an alias: the option it stands for; else NULL */
	bool flag;		   /* may stand alone (key means key=1) */
};

/* The i-th entry of the table into *out; false past its end. */
bool qs_job_opt(size_t i, struct qs_job_opt_info *out);

/* Free f and everything in it (NULL is fine). */
void qs_job_file_free(struct qs_job_file *f);

/* fio's name of a steadystate criterion ("iops_slope", ...; "none"). */
const char *qs_job_ss_name(enum qs_job_ss ss);

/* The mean size the job asks for per I/O of direction dir (0 reads, 1
 * writes, 2 trims), in bytes: bs, or the mean of its bs=R,W,T, bsrange or
 * bssplit sizes (as asked, before 4 KiB rounding). Any time after load. */
double qs_job_mean_bs(const struct qs_job *j, int dir);

/* fio's name of rw ("randwrite", ...). */
const char *qs_job_rw_name(enum qs_job_rw rw);

/* Whether a job issues reads / writes / trims at all (trace jobs: all
 * true). */
bool qs_job_reads(const struct qs_job *j);
bool qs_job_writes(const struct qs_job *j);
bool qs_job_trims(const struct qs_job *j);

/* Whether rw is one of the random patterns (randread, randtrim...). */
bool qs_job_rw_random(enum qs_job_rw rw);

/*
 * Parse fio-style numbers (exposed for the command line and tests).
 * qs_job_parse_size: "4096", "4k", "1m", "1g", "2t", "1p", with optional
 * "b"/"ib" ("4KiB", "4kb"); kb_base 1024 or 1000 decides what "k" means,
 * "KiB" is always 1024. qs_job_parse_time: a bare number is in `unit_ns`
 * (seconds for runtime), suffixes us, ms, s, m, h, d. Both -EINVAL on junk,
 * -ERANGE on overflow.
 */
int qs_job_parse_size(const char *s, unsigned kb_base, uint64_t *out);
int qs_job_parse_time(const char *s, uint64_t unit_ns, uint64_t *out);

#endif
