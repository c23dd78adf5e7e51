/* SPDX-License-Identifier: MIT */
/*
 * qlcshape bench run | ab | curve: command lines over bench/run.h (sim mode)
 * and bench/rt.h (emu and dev mode), output through bench/report.h.
 * docs/BENCH.md describes every option and figure.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "host/env.h"
#include "host/text.h"

#include "cmds.h"
#include "par.h"
#include "rt.h"
#include "run.h"

#define RC_MAX_POLICIES 8
#define RC_DEFAULT_JOB "conf/bench/default.fio"

enum rc_kind { RC_RUN, RC_AB, RC_CURVE };

/* fio's --output-format: which reports the run writes (a set) */
enum rc_format { RC_FMT_NORMAL = 1, RC_FMT_JSON = 2 };

/* What fio's JSON says it is: fio 3.33's layout, written by the bench. */
#define RC_FIO_VERSION "fio-3.33-qlcshape"
enum rc_mode { RC_SIM, RC_DEV, RC_EMU };

struct rc_opts {
	enum rc_kind kind;
	const char *cmd; /* "bench run" ... for messages */
	const char *job_path;
	struct qs_bench_conf conf;
	bool off, on;
	enum qs_order pol[RC_MAX_POLICIES];
	unsigned npol;
	enum qs_placement place[2]; /* with shaping on: inplace, log or both */
	unsigned nplace;
	uint64_t seed;
	const char *json, *csv, *svg;
	bool quiet;
	unsigned formats;   /* enum rc_format bits (default normal) */
	const char *output; /* --output F: the reports go to F, not stdout */
	FILE *out;	    /* stdout or F */
	FILE *txt;	    /* the normal text (table, notes, speed); NULL: none */
	FILE *note;	    /* the notes: txt, or stderr when only JSON is written */
	uint64_t runtime_ns, ramp_ns; /* overrides; UINT64_MAX = as in the job */
	enum rc_mode mode;
	const char *qlc_dev, *fast_dev; /* dev mode */
	bool yes_overwrite;
	bool fast_set, scale_set, rating_set; /* given on the command line */
	unsigned workers; /* runs at once (sim mode); 0 = not given */
	bool recovery;	  /* --recovery: power cut and recovery after each run */
	bool fresh_drive; /* --fresh-drive: every group on a fresh copy of the filled drive */
	bool precondition; /* --precondition seq: dev mode fills the QLC device first */
	bool precondition_set; /* --precondition given */
	/* --bypass-min, --pace-pct: engine settings over its defaults */
	bool set_bypass, set_pace;
	uint64_t bypass_min;
	uint32_t pace_pct;
};

/* The world the runs use: the simulator's, or the real-time driver's. */
struct rc_world {
	struct qs_bench_world *sim;
	struct qs_rt_world *rt;
};

/* Log placement's engine settings in the world w. */
static void rc_log_conf(const struct rc_world *w, struct qs_engine_conf *lc)
{
	if (w->rt)
		qs_rt_world_log_conf(w->rt, lc);
	else
		qs_bench_world_log_conf(w->sim, lc);
}

static bool rc_has_log(const struct rc_opts *o)
{
	for (unsigned i = 0; o->on && i < o->nplace; i++)
		if (o->place[i] == QS_PLACE_LOG)
			return true;
	return false;
}

/*
 * Whether the drives and the engine carry from group to group within a
 * variant, unless --fresh-drive (bench curve: never). In every mode; dev's
 * devices keep what the runs before wrote whatever the bench does, so
 * there --fresh-drive means a new engine (and log) for every group.
 */
static bool rc_carries(const struct rc_opts *o)
{
	return !o->fresh_drive && o->kind != RC_CURVE;
}

/* Jobs of the group that starts at job g: g and those up to the next stonewall. */
static size_t rc_group_len(const struct qs_job_file *jf, size_t g)
{
	size_t gn = 1;
	while (g + gn < jf->njobs && !jf->jobs[g + gn].stonewall)
		gn++;
	return gn;
}

/*
 * What job percentages refer to. With log placement among the variants
 * the client size it leaves (the QLC's bands less op_pct), for every
 * variant, so that all of them write the same span.
 */
static uint64_t rc_capacity(const struct rc_opts *o, const struct rc_world *w)
{
	uint64_t cap = w->rt ? qs_rt_world_sizes(w->rt)->capacity
			     : qs_bench_world_sizes(w->sim)->capacity;
	if (rc_has_log(o)) {
		/* in every mode: emu and dev runs took the whole QLC and the
		 * engine refused their writes past the client size */
		struct qs_engine_conf lc;
		if (w->rt)
			qs_rt_world_log_conf(w->rt, &lc);
		else
			qs_bench_world_log_conf(w->sim, &lc);
		cap = qs_engine_conf_client_size(&lc, cap);
	}
	return cap;
}

/* Run a group in w; with fio not NULL also fio's entries (run.h). */
static int rc_group(struct rc_world *w, const struct qs_job *jobs, size_t n,
		    const struct qs_bench_variant *v, uint64_t seed, struct qs_bench_result *res,
		    struct qs_report_run *fio, size_t *nfio, char *err, size_t errlen)
{
	if (w->rt)
		return qs_rt_run_group_fio(w->rt, jobs, n, v, seed, res, fio, nfio, err, errlen);
	return qs_bench_run_group_fio(w->sim, jobs, n, v, seed, res, fio, nfio, err, errlen);
}

static void rc_world_free(struct rc_world *w)
{
	qs_rt_world_free(w->rt);
	qs_bench_world_free(w->sim);
}

static int rc_usage(FILE *f, enum rc_kind kind)
{
	if (kind == RC_AB)
		fprintf(f, "usage: qlcshape bench ab [OPTIONS]\n"
			   "  Runs the default job, " RC_DEFAULT_JOB " (installed: PREFIX/share/\n"
			   "  qlcshape/bench/default.fio), with shaping off and on (same as\n"
			   "  'qlcshape bench run " RC_DEFAULT_JOB " --shaping both').\n");
	else if (kind == RC_CURVE)
		fprintf(f, "usage: qlcshape bench curve JOB [OPTIONS]\n"
			   "  For each job and variant: the maximum rate (closed loop), then\n"
			   "  rate_iops at 10%%..120%% of it (open loop): latency against IOPS.\n");
	else
		fprintf(f, "usage: qlcshape bench run JOB [OPTIONS]\n"
			   "  Runs each job of the fio-style JOB file through the engine on the\n"
			   "  simulator (or in real time: --mode emu, dev), shaping off and on, and\n"
			   "  prints them side by side.\n");
	if (kind != RC_AB)
		fprintf(f, "  A job with trace=PATH replays a trace (mqsim, msr, iolog, blktrace\n"
			   "  files or their NAME, blkparse text, libcachesim, csv with\n"
			   "  trace_columns); every trace is read through before the drive is\n"
			   "  filled, a bad one refused with its line, and each gets a summary line.\n");
	fprintf(f,
		"options:\n"
		"  --profile NAME     QLC drive profile (default p5316-30t): NAME.ini in\n"
		"                     conf/profiles, else in PREFIX/share/qlcshape/profiles\n"
		"  --fast NAME        fast-tier (log) profile (default optane)\n"
		"  --cache SIZE       log size at the real drive's scale (default 400g; k/m/g/t\n"
		"                     are decimal here); scaled with the drive model\n"
		"  --shaping off|on|both  variants to run (default both)\n"
		"  --placement inplace|log|both  where destage puts data with shaping on\n"
		"                     (default inplace); each placement runs with each\n"
		"                     policy; with log, job sizes in %% are of the client\n"
		"                     size log placement leaves, for every variant\n"
		"  --op-pct N         log placement: QLC share kept for GC, 5..50 (default 20)\n"
		"  --band-size SIZE   log placement: band size at the model's scale (default\n"
		"                     one superblock of the QLC model; dev mode: 1g)\n"
		"  --map-dram SIZE    log placement, no budget: DRAM for the map's pages at\n"
		"                     the real drive's scale (engine.map_dram_limit; k/m/g\n"
		"                     binary); scaled with the drive model like --cache\n"
		"  --map-keep N       log placement, sim mode, a prototype: keep N map\n"
		"                     changes per map page for pages not in DRAM and apply\n"
		"                     them by reading the page that holds the most\n"
		"                     (engine.map_keep_per_page, 1 to 64; timing only:\n"
		"                     recovery does not replay them yet, so not with\n"
		"                     --recovery)\n"
		"  --dram-limit SIZE  the engine's whole DRAM at the real drive's scale\n"
		"                     (engine.dram_limit; k/m/g/t binary; not with\n"
		"                     --map-dram): divided as the engine divides it for the\n"
		"                     real drive and log, each part scaled with the model;\n"
		"                     default: the engine's (log placement 2.5 GiB per\n"
		"                     30.72 TB of QLC, in place none)\n"
		"  --policy NAME      destage policy with shaping on: fifo, sweep, fullest;\n"
		"                     repeat for several (default the engine's, fifo)\n"
		"  --bypass-min SIZE  with shaping on, in-place placement (log placement has\n"
		"                     none): whole-IU writes this big skip the log\n"
		"                     (engine.bypass_min; 0 = never; default the engine's)\n"
		"  --pace-pct N       with shaping on: log use from which writes are paced\n"
		"                     (policy.pace_pct, 0 = off to 99; default the engine's)\n"
		"  --recovery         sim, shaping on: after each run's window cut the power\n"
		"                     (the engine's own I/O in flight is lost), recover, close\n"
		"                     and open again; prints the recovery times (the fast\n"
		"                     tier then keeps its data: slower, more memory)\n"
		"  --mode sim|emu|dev sim: simulation on a virtual clock (default); emu: the\n"
		"                     same models emulated in real time; dev: the engine on\n"
		"                     real devices or files, real clock\n"
		"  --qlc-dev PATH     dev: the QLC block device or file (OVERWRITTEN)\n"
		"  --fast-dev PATH    dev: the fast-tier device or file for the log (OVERWRITTEN;\n"
		"                     needed with shaping on); the log is --cache or the device\n"
		"  --yes-overwrite    dev: confirm that both devices may be overwritten; mounted\n"
		"                     or in-use block devices are refused anyway\n"
		"  --precondition seq|none  dev: seq writes the whole QLC device once in order\n"
		"                     before each variant's runs (each run with --fresh-drive),\n"
		"                     as the published methods fill a drive; default none (the\n"
		"                     device as it is)\n"
		"  --fresh-drive      every job (group between stonewalls) on a fresh copy of\n"
		"                     the filled drive (sim), fresh emulated drives (emu) or\n"
		"                     the devices as they are (dev), and a new engine; by\n"
		"                     default each variant runs the whole file on drives and\n"
		"                     an engine of its own (dev: the devices), each job\n"
		"                     finding them as the one before left them (bench curve:\n"
		"                     always fresh)\n"
		"  --seed N           workload seed (default 1)\n"
		"  --scale-gib N      QLC model capacity in GiB (default as bench calibrate)\n"
		"  --rating-pbw X     endurance rating, PB written, for the life figure (default: the\n"
		"                     profile's endurance_pbw)\n"
		"  --runtime T        every job's runtime (and time_based=1), e.g. 10s, 500ms\n"
		"  --ramp-time T      every job's ramp_time\n"
		"  --workers N        sim: runs at once, each in a worker process (default: the\n"
		"                     CPUs, %u here, but at most one a variant, or with\n"
		"                     --fresh-drive one for every two runs; 1 = one after\n"
		"                     another in this process); the figures do not depend on it\n"
		"  --json F, --csv F, --svg F   also write the runs as JSON, CSV, SVG\n"
		"  --output-format L  fio's: normal (the table, default), json (fio's JSON\n"
		"                     layout: one fio job per job and variant), or both,\n"
		"                     normal,json (bench curve: normal only)\n"
		"  --output F         fio's: write those reports to F instead of stdout\n"
		"  --quiet            no table and no progress (files and JSON only)\n",
		qs_par_default_workers());
	return f == stdout ? 0 : 2;
}

/* The options that belong to one mode only; 0 or exit status 2. */
static int rc_check_mode(const struct rc_opts *o)
{
	const char *bad = NULL;
	if (o->mode != RC_DEV)
		bad = o->qlc_dev ? "--qlc-dev" : o->fast_dev ? "--fast-dev" :
		      o->yes_overwrite ? "--yes-overwrite" : NULL;
	if (bad) {
		fprintf(stderr, "qlcshape %s: %s: only with --mode dev\n", o->cmd, bad);
		return 2;
	}
	if (o->mode != RC_DEV && o->precondition_set) {
		/* the models are always filled in order first */
		fprintf(stderr, "qlcshape %s: --precondition: only with --mode dev (sim and emu "
				"fill the QLC model in order before the runs anyway)\n", o->cmd);
		return 2;
	}
	if (o->recovery && (o->mode != RC_SIM || !o->on || o->kind == RC_CURVE)) {
		/* a power cut needs devices the bench can switch off: the models */
		fprintf(stderr, "qlcshape %s: --recovery: only with --mode sim, shaping on, and "
				"bench run or ab\n", o->cmd);
		return 2;
	}
	if (o->conf.map_keep && (o->mode != RC_SIM || o->recovery)) {
		/* the engine refuses kept changes where it holds data */
		fprintf(stderr, "qlcshape %s: --map-keep: only with --mode sim and without "
				"--recovery (a timing-only prototype: recovery does not replay "
				"kept map changes yet)\n", o->cmd);
		return 2;
	}
	if (o->mode != RC_SIM && o->workers > 1) {
		/* real time: parallel runs would share the devices and the clock */
		fprintf(stderr, "qlcshape %s: --workers %u: only with --mode sim (emu and dev "
				"runs go one at a time)\n", o->cmd, o->workers);
		return 2;
	}
	if (o->mode != RC_DEV)
		return 0;
	/* no drive model in dev mode: the model's options mean nothing there */
	bad = o->fast_set ? "--fast" : o->scale_set ? "--scale-gib" :
	      o->rating_set ? "--rating-pbw" : NULL;
	if (bad) {
		fprintf(stderr, "qlcshape %s: %s: not with --mode dev (no drive model there; the "
				"devices are --qlc-dev and --fast-dev)\n", o->cmd, bad);
		return 2;
	}
	if (!o->qlc_dev) {
		fprintf(stderr, "qlcshape %s: --mode dev needs --qlc-dev PATH (a block device or "
				"file)\n", o->cmd);
		return 2;
	}
	if (o->on && !o->fast_dev) {
		fprintf(stderr, "qlcshape %s: shaping on needs --fast-dev PATH in dev mode (or "
				"--shaping off)\n", o->cmd);
		return 2;
	}
	if (!o->yes_overwrite) {
		fprintf(stderr, "qlcshape %s: --mode dev overwrites %s%s%s (benchmark data, a log "
				"format): add --yes-overwrite to confirm\n", o->cmd, o->qlc_dev,
			o->on ? " and " : "", o->on ? o->fast_dev : "");
		return 2;
	}
	return 0;
}

/* --cache, --seed, --scale-gib, --rating-pbw, --workers: one number each;
 * 0, or the command's exit status. */
static int rc_opt_number(int c, const char *arg, struct rc_opts *o)
{
	char *end;
	uint64_t v;
	double x;
	switch (c) {
	case 'c':
		if (qs_job_parse_size(arg, 1000, &v) || v < 1000000) {
			fprintf(stderr, "qlcshape %s: --cache '%s': allowed a size of at least 1m "
					"(e.g. 400g; k/m/g/t are powers of 1000)\n", o->cmd, arg);
			return 2;
		}
		o->conf.cache_bytes = v;
		return 0;
	case 'S':
		errno = 0;
		o->seed = strtoull(arg, &end, 0);
		if (errno || !*arg || *end || *arg == '-') {
			fprintf(stderr, "qlcshape %s: --seed '%s': allowed a whole number 0..2^64-1\n",
				o->cmd, arg);
			return 2;
		}
		return 0;
	case 'g':
		x = strtod(arg, &end);
		if (*end || !*arg || !(x >= 0.25 && x <= 65536)) {
			fprintf(stderr, "qlcshape %s: --scale-gib '%s': allowed 0.25..65536\n", o->cmd,
				arg);
			return 2;
		}
		o->conf.scale_bytes = (uint64_t)(x * 1073741824.0);
		o->scale_set = true;
		return 0;
	case 'r':
		x = strtod(arg, &end);
		if (*end || !*arg || !(x > 0 && x <= 1e6)) {
			fprintf(stderr, "qlcshape %s: --rating-pbw '%s': allowed a number in (0, 1e6]\n",
				o->cmd, arg);
			return 2;
		}
		o->conf.rating_bytes = x * 1e15;
		o->rating_set = true;
		return 0;
	default: /* 'W' */
		v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || v < 1 || v > 256) {
			fprintf(stderr, "qlcshape %s: --workers '%s': allowed 1 to 256\n", o->cmd, arg);
			return 2;
		}
		o->workers = (unsigned)v;
		return 0;
	}
}

/* --runtime (c 'T') or --ramp-time ('R'); 0, or the exit status. */
static int rc_opt_time(int c, const char *arg, struct rc_opts *o)
{
	uint64_t t;
	if (qs_job_parse_time(arg, 1000000000ull, &t) || (c == 'T' && !t) ||
	    t > 86400000000000ull) {
		fprintf(stderr, "qlcshape %s: --%s '%s': allowed a time %sup to 1 day "
				"(e.g. 10s, 500ms; bare numbers are seconds)\n", o->cmd,
			c == 'T' ? "runtime" : "ramp-time", arg, c == 'T' ? "above 0 " : "");
		return 2;
	}
	*(c == 'T' ? &o->runtime_ns : &o->ramp_ns) = t;
	return 0;
}

/* --shaping off|on|both; 0, or the exit status. */
static int rc_opt_shaping(const char *arg, struct rc_opts *o)
{
	if (!strcmp(arg, "off"))
		o->off = true, o->on = false;
	else if (!strcmp(arg, "on"))
		o->off = false, o->on = true;
	else if (!strcmp(arg, "both"))
		o->off = o->on = true;
	else {
		fprintf(stderr, "qlcshape %s: --shaping '%s': allowed off, on, both\n", o->cmd, arg);
		return 2;
	}
	return 0;
}

/* --policy NAME, once per name; 0, or the exit status. */
static int rc_opt_policy(const char *arg, struct rc_opts *o)
{
	enum qs_order ord;
	if (qs_policy_parse_order(arg, &ord)) {
		fprintf(stderr, "qlcshape %s: --policy '%s': allowed fifo, sweep, fullest\n", o->cmd,
			arg);
		return 2;
	}
	for (unsigned i = 0; i < o->npol; i++)
		if (o->pol[i] == ord)
			return 0;
	if (o->npol == RC_MAX_POLICIES)
		return 2;
	o->pol[o->npol++] = ord;
	return 0;
}

/* --placement inplace|log|both; 0, or the exit status. */
static int rc_opt_placement(const char *arg, struct rc_opts *o)
{
	o->nplace = 0;
	if (!strcmp(arg, "inplace") || !strcmp(arg, "both"))
		o->place[o->nplace++] = QS_PLACE_INPLACE;
	if (!strcmp(arg, "log") || !strcmp(arg, "both"))
		o->place[o->nplace++] = QS_PLACE_LOG;
	if (!o->nplace) {
		fprintf(stderr, "qlcshape %s: --placement '%s': allowed inplace, log, both\n",
			o->cmd, arg);
		return 2;
	}
	return 0;
}

/* --op-pct N, --band-size SIZE, --map-dram SIZE (log placement) or
 * --dram-limit SIZE; 0, or the exit status. */
static int rc_opt_log(int c, const char *arg, struct rc_opts *o)
{
	char *end;
	if (c == 'O') {
		unsigned long v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || v < 5 || v > 50) {
			fprintf(stderr, "qlcshape %s: --op-pct '%s': allowed 5 to 50\n", o->cmd, arg);
			return 2;
		}
		o->conf.op_pct = (uint32_t)v;
		return 0;
	}
	uint64_t b;
	if (c == 'Z') {
		if (qs_job_parse_size(arg, 1024, &b) || b < (1ull << 20) || b > (64ull << 40)) {
			fprintf(stderr, "qlcshape %s: --dram-limit '%s': allowed 1m to 64t (k/m/g/t "
					"are binary here), at the real drive's scale\n", o->cmd, arg);
			return 2;
		}
		o->conf.dram_limit_bytes = b;
		return 0;
	}
	if (c == 'k') {
		unsigned long v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || v < 1 || v > 64) {
			fprintf(stderr, "qlcshape %s: --map-keep '%s': allowed 1 to 64 changes per "
					"map page\n", o->cmd, arg);
			return 2;
		}
		o->conf.map_keep = (uint32_t)v;
		return 0;
	}
	if (c == 'M') {
		if (qs_job_parse_size(arg, 1024, &b) || b < QS_CONF_MAP_DRAM_MIN || b > (64ull << 40)) {
			fprintf(stderr, "qlcshape %s: --map-dram '%s': allowed 64k to 64t (k/m/g/t "
					"are binary here), at the real drive's scale\n", o->cmd, arg);
			return 2;
		}
		o->conf.map_dram_bytes = b;
		return 0;
	}
	if (qs_job_parse_size(arg, 1024, &b) || b < 131072 || b % 4096 || b > (64ull << 30)) {
		fprintf(stderr, "qlcshape %s: --band-size '%s': allowed 128k to 64g, whole 4 KiB "
				"blocks (k/m/g are binary here), at the model's scale\n", o->cmd, arg);
		return 2;
	}
	o->conf.band_bytes = b;
	return 0;
}

/* --bypass-min SIZE or --pace-pct N (shaping on); 0, or the exit status.
 * The engine checks the rest when it opens (bypass_min a multiple of the
 * IU; no bypass with log placement: rc_parse). */
static int rc_opt_engine(int c, const char *arg, struct rc_opts *o)
{
	if (c == 'y') {
		uint64_t b;
		if (qs_job_parse_size(arg, 1024, &b) || b > (1ull << 30)) {
			fprintf(stderr, "qlcshape %s: --bypass-min '%s': allowed 0 (off) to 1g, a "
					"multiple of the IU (k/m/g are binary here)\n", o->cmd, arg);
			return 2;
		}
		o->bypass_min = b;
		o->set_bypass = true;
		return 0;
	}
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end || v > 99) {
		fprintf(stderr, "qlcshape %s: --pace-pct '%s': allowed 0 (off) to 99\n", o->cmd, arg);
		return 2;
	}
	o->pace_pct = (uint32_t)v;
	o->set_pace = true;
	return 0;
}

/* --mode sim|emu|dev; 0, or the exit status. */
static int rc_opt_mode(const char *arg, struct rc_opts *o)
{
	static const char *const names[] = {[RC_SIM] = "sim", [RC_EMU] = "emu", [RC_DEV] = "dev"};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && !strcmp(arg, names[i])) {
			o->mode = (enum rc_mode)i;
			return 0;
		}
	fprintf(stderr, "qlcshape %s: --mode '%s': allowed sim, emu, dev\n", o->cmd, arg);
	return 2;
}

/*
 * fio's --output-format: a comma-separated list of normal and json. json+
 * (fio's JSON with every bin of the latency histograms) and terse are
 * refused saying why. 0, or exit status 2.
 */
static int rc_opt_format(const char *arg, struct rc_opts *o)
{
	char buf[64], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", arg);
	o->formats = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const char *why = NULL;
		if (!strcmp(t, "normal"))
			o->formats |= RC_FMT_NORMAL;
		else if (!strcmp(t, "json"))
			o->formats |= RC_FMT_JSON;
		else if (!strcmp(t, "json+"))
			why = "fio's json+ adds every bucket of each latency histogram (\"bins\"): "
			      "the bench keeps its histograms (7424 buckets each, three latencies "
			      "a direction) in the runs' workers and brings back only their "
			      "statistics; use json (min, max, mean, stddev, N, percentiles)";
		else if (!strcmp(t, "terse"))
			why = "fio's terse (semicolon) format is not written; use normal or json";
		else
			why = "allowed normal, json, or both (normal,json)";
		if (why) {
			fprintf(stderr, "qlcshape %s: --output-format '%s': %s\n", o->cmd, t, why);
			return 2;
		}
	}
	if (!o->formats) {
		fprintf(stderr, "qlcshape %s: --output-format '%s': allowed normal, json, or both "
				"(normal,json)\n", o->cmd, arg);
		return 2;
	}
	if (o->kind == RC_CURVE && (o->formats & RC_FMT_JSON)) {
		fprintf(stderr, "qlcshape %s: --output-format json: not for bench curve (its runs "
				"are the points of a rate sweep, not fio's jobs); use bench run, or "
				"curve's --json and --csv\n", o->cmd);
		return 2;
	}
	return 0;
}

/* --precondition seq|none (dev mode); 0, or the exit status. */
static int rc_opt_precondition(const char *arg, struct rc_opts *o)
{
	if (strcmp(arg, "seq") && strcmp(arg, "none")) {
		fprintf(stderr, "qlcshape %s: --precondition '%s': allowed seq (write the QLC device "
				"once in order before the runs), none\n", o->cmd, arg);
		return 2;
	}
	o->precondition = !strcmp(arg, "seq");
	o->precondition_set = true;
	return 0;
}

/* One option from getopt_long; 0 to go on, else what rc_parse returns. */
static int rc_opt(int c, const char *arg, struct rc_opts *o)
{
	switch (c) {
	case 'p': o->conf.profile = arg; return 0;
	case 'f': o->conf.fast = arg; o->fast_set = true; return 0;
	case 'j': o->json = arg; return 0;
	case 'C': o->csv = arg; return 0;
	case 'v': o->svg = arg; return 0;
	case 'q': o->quiet = true; return 0;
	case 'Q': o->qlc_dev = arg; return 0;
	case 'F': o->fast_dev = arg; return 0;
	case 'Y': o->yes_overwrite = true; return 0;
	case 'X': o->recovery = true; return 0;
	case 'D': o->fresh_drive = true; return 0;
	case 'K': return rc_opt_precondition(arg, o);
	case 's': return rc_opt_shaping(arg, o);
	case 'P': return rc_opt_policy(arg, o);
	case 'L': return rc_opt_placement(arg, o);
	case 'O': case 'B': case 'M': case 'Z': case 'k': return rc_opt_log(c, arg, o);
	case 'm': return rc_opt_mode(arg, o);
	case 'y': case 'e': return rc_opt_engine(c, arg, o);
	case 'c': case 'S': case 'g': case 'r': case 'W': return rc_opt_number(c, arg, o);
	case 'T': case 'R': return rc_opt_time(c, arg, o);
	case 'o': o->output = arg; return 0;
	case 'U': return rc_opt_format(arg, o);
	case 'h': return rc_usage(stdout, o->kind) ? 2 : -1;
	default: return rc_usage(stderr, o->kind);
	}
}

/* The job: bench ab's default, else the one JOB argument. */
static int rc_job_arg(int argc, char **argv, struct rc_opts *o)
{
	if (o->kind != RC_AB) {
		if (optind + 1 != argc) {
			fprintf(stderr, "qlcshape %s: %s\n", o->cmd,
				optind == argc ? "missing JOB file" : "only one JOB file allowed");
			return rc_usage(stderr, o->kind);
		}
		o->job_path = argv[optind];
		return 0;
	}
	if (optind != argc) {
		fprintf(stderr, "qlcshape %s: unexpected argument '%s' (the job is %s)\n", o->cmd,
			argv[optind], RC_DEFAULT_JOB);
		return 2;
	}
	static char job[4096];
	char err[8600];
	if (qs_data_find("bench/default.fio", job, sizeof(job), err, sizeof(err)) < 0) {
		fprintf(stderr, "qlcshape %s: the default job: %s\n", o->cmd, err);
		return 1;
	}
	o->job_path = job;
	return 0;
}

static int rc_parse(int argc, char **argv, struct rc_opts *o)
{
	static const struct option opts[] = {
		{"profile", required_argument, NULL, 'p'},
		{"fast", required_argument, NULL, 'f'},
		{"cache", required_argument, NULL, 'c'},
		{"shaping", required_argument, NULL, 's'},
		{"policy", required_argument, NULL, 'P'},
		{"placement", required_argument, NULL, 'L'},
		{"op-pct", required_argument, NULL, 'O'},
		{"band-size", required_argument, NULL, 'B'},
		{"map-dram", required_argument, NULL, 'M'},
		{"map-keep", required_argument, NULL, 'k'},
		{"dram-limit", required_argument, NULL, 'Z'},
		{"bypass-min", required_argument, NULL, 'y'},
		{"pace-pct", required_argument, NULL, 'e'},
		{"mode", required_argument, NULL, 'm'},
		{"seed", required_argument, NULL, 'S'},
		{"scale-gib", required_argument, NULL, 'g'},
		{"rating-pbw", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'j'},
		{"csv", required_argument, NULL, 'C'},
		{"svg", required_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"runtime", required_argument, NULL, 'T'},
		{"ramp-time", required_argument, NULL, 'R'},
		{"qlc-dev", required_argument, NULL, 'Q'},
		{"fast-dev", required_argument, NULL, 'F'},
		{"yes-overwrite", no_argument, NULL, 'Y'},
		{"workers", required_argument, NULL, 'W'},
		{"recovery", no_argument, NULL, 'X'},
		{"fresh-drive", no_argument, NULL, 'D'},
		{"precondition", required_argument, NULL, 'K'},
		{"output-format", required_argument, NULL, 'U'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	qs_bench_conf_default(&o->conf);
	o->formats = RC_FMT_NORMAL;
	o->off = o->on = true;
	o->seed = 1;
	o->runtime_ns = o->ramp_ns = UINT64_MAX;
	optind = 1;
	opterr = 1;
	int c, rc;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if ((rc = rc_opt(c, optarg, o)))
			return rc;
	if ((rc = rc_job_arg(argc, argv, o)))
		return rc;
	if (o->conf.dram_limit_bytes && o->conf.map_dram_bytes) {
		fprintf(stderr, "qlcshape %s: --dram-limit and --map-dram both given: with a "
				"budget the map pages get what the rest leaves; drop one\n", o->cmd);
		return 2;
	}
	if (!o->npol) { /* the engine's default order (fifo: docs/BENCH.md says why) */
		struct qs_engine_conf ec;
		qs_engine_conf_default(&ec);
		o->pol[o->npol++] = ec.policy.order;
	}
	if (!o->nplace)
		o->place[o->nplace++] = QS_PLACE_INPLACE;
	if (o->set_bypass && o->bypass_min && o->nplace == 1 && o->place[0] == QS_PLACE_LOG) {
		fprintf(stderr, "qlcshape %s: --bypass-min %llu: log placement has no bypass (every "
				"write goes through the log); it applies to --placement inplace\n",
			o->cmd, (unsigned long long)o->bypass_min);
		return 2;
	}
	o->conf.progress = !o->quiet && isatty(2);
	return rc_check_mode(o);
}

static int rc_write(const char *cmd, const char *path, const char *what,
		    int (*fn)(FILE *, const void *), const void *arg)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "qlcshape %s: cannot write %s to %s: %s\n", cmd, what, path,
			strerror(errno));
		return 1;
	}
	int rc = fn(f, arg);
	if (fclose(f) && !rc)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "qlcshape %s: writing %s to %s: %s\n", cmd, what, path, strerror(-rc));
		return 1;
	}
	return 0;
}

struct rc_runs {
	const struct qs_report_run *runs;
	size_t n;
	const char *title;
	const struct qs_report_series *series;
	size_t nseries;
};

static int rc_json(FILE *f, const void *a)
{
	const struct rc_runs *r = a;
	return qs_report_json(f, r->runs, r->n);
}

static int rc_csv(FILE *f, const void *a)
{
	const struct rc_runs *r = a;
	return qs_report_csv(f, r->runs, r->n);
}

static int rc_bars(FILE *f, const void *a)
{
	const struct rc_runs *r = a;
	/* reads too: a job file usually holds read jobs beside the write ones;
	 * wear as NAND bytes per client byte (the IU and the drive's GC
	 * together, not WAF IU alone) and as life at one common rate */
	static const enum qs_report_metric m[] = {QS_METRIC_WRITE_IOPS,
						  QS_METRIC_NAND_PER_CLIENT,
						  QS_METRIC_LIFE_COMMON, QS_METRIC_READ_IOPS,
						  QS_METRIC_WRITE_P99, QS_METRIC_WAF_HOST};
	return qs_report_svg_bars(f, r->title, r->runs, r->n, m, sizeof(m) / sizeof(m[0]));
}

static int rc_lines(FILE *f, const void *a)
{
	const struct rc_runs *r = a;
	return qs_report_svg_lines(f, r->title, "IOPS (reads + writes)", "p99 latency (us)",
				   r->series, r->nseries, true);
}

/* Write the JSON, CSV and SVG files the options ask for; svg draws the chart. */
static int rc_outputs(const struct rc_opts *o, const struct rc_runs *rr,
		      int (*svg)(FILE *, const void *))
{
	int st = 0;
	if (o->json)
		st |= rc_write(o->cmd, o->json, "JSON", rc_json, rr);
	if (o->csv)
		st |= rc_write(o->cmd, o->csv, "CSV", rc_csv, rr);
	if (o->svg)
		st |= rc_write(o->cmd, o->svg, "SVG", svg, rr);
	return st;
}

static void rc_describe(const struct rc_opts *o, const struct rc_world *rw,
			const struct qs_job_file *jf)
{
	FILE *f = o->txt;
	if (!o->txt)
		return;
	if (rw->rt) {
		char desc[1024];
		qs_rt_world_describe(rw->rt, desc, sizeof(desc));
		static const char *const how[2][2] = {
			{"each job on the devices as the one before left them, with a new engine",
			 "each variant runs the jobs in order on the devices and one engine"},
			{"each job on fresh emulated drives",
			 "each variant runs the jobs in order on emulated drives of its own"}};
		fprintf(f, "qlcshape %s %s: %s mode (%s, real clock), seed %llu\n%s; %s\n", o->cmd,
			jf->path, o->mode == RC_EMU ? "emu" : "dev",
			o->mode == RC_EMU ? "device models in real time" : "real devices",
			(unsigned long long)o->seed, desc, how[o->mode == RC_EMU][rc_carries(o)]);
		return;
	}
	const struct qs_bench_world *w = rw->sim;
	double scale = qs_bench_world_scale(w);
	fprintf(f, "qlcshape %s %s: QLC %s, fast tier %s, seed %llu\n", o->cmd, jf->path,
		o->conf.profile, o->conf.fast, (unsigned long long)o->seed);
	fprintf(f, "model: %.2f GiB QLC (1/%.0f of the drive), log %.1f MB (--cache %.3g GB "
		   "scaled alike); drive filled sequentially first; %s\n",
		(double)qs_bench_world_sizes(w)->capacity / 1073741824.0, scale,
		(double)qs_bench_world_sizes(w)->log_bytes / 1e6, (double)o->conf.cache_bytes / 1e9,
		rc_carries(o) ? "each variant runs the jobs in order on a drive of its own"
			      : "each job on a fresh copy of it");
	const struct qs_profile *p = qs_bench_world_qlc_profile(w);
	double rating = qs_bench_world_sizes(w)->rating_bytes;
	if (o->conf.rating_bytes > 0)
		fprintf(f, "life: endurance rating %.4g PBW (--rating-pbw), taken as whole-IU "
			   "writes\n", rating / 1e15);
	else if (rating > 0)
		fprintf(f, "life: endurance rating %.5g PBW for %u KiB %s x %.3g NAND bytes per "
			   "byte under it (profile): the NAND budget, over each run's own "
			   "amplification\n", rating / 1e15, p->endurance_bs_bytes / 1024,
			qs_profile_endurance_rw_name(p->endurance_rw),
			p->endurance_prog_amp > 0 ? p->endurance_prog_amp : 1);
	else
		fprintf(f, "life: no endurance rating in the profile (endurance_pbw) or "
			   "--rating-pbw: not projected\n");
	const struct qs_profile *fp = qs_bench_world_fast_profile(w);
	if (fp->endurance_pbw > 0)
		fprintf(f, "fast-tier life: the whole device's rating, %.5g PBW (profile %s), "
			   "over the run's writes to it\n", fp->endurance_pbw, fp->name);
	else
		fprintf(f, "fast-tier life: no endurance rating in profile %s (endurance_pbw): "
			   "not projected\n", fp->name);
}

/* The real-time world of dev and emu mode. */
static int rc_rt_world(const struct rc_opts *o, struct qs_rt_world **w, char *err, size_t errlen)
{
	struct qs_rt_conf c = {
		.kind = o->mode == RC_EMU ? QS_RT_EMU : QS_RT_DEV,
		.qlc_dev = o->qlc_dev,
		.fast_dev = o->fast_dev,
		.profile = o->conf.profile,
		.fast = o->conf.fast,
		.cache_bytes = o->conf.cache_bytes,
		.scale_bytes = o->conf.scale_bytes,
		.rating_bytes = o->conf.rating_bytes,
		.yes_overwrite = o->yes_overwrite,
		.progress = o->conf.progress,
		.precondition = o->precondition,
		.log_placement = rc_has_log(o),
		.op_pct = o->conf.op_pct,
		.band_bytes = o->conf.band_bytes,
		.map_dram_bytes = o->conf.map_dram_bytes,
		.dram_limit_bytes = o->conf.dram_limit_bytes,
	};
	return qs_rt_world_new(&c, w, err, errlen);
}

/* Log placement's settings against the QLC of the world: GC must be able
 * to make progress (qs_engine_conf_check_qlc); 0 or an exit status. */
static int rc_check_log(const struct rc_opts *o, struct rc_world *w)
{
	if (!rc_has_log(o))
		return 0;
	struct qs_engine_conf lc;
	struct qs_conf_err ce = {0};
	rc_log_conf(w, &lc);
	uint64_t qlc = w->rt ? qs_rt_world_sizes(w->rt)->capacity
			     : qs_bench_world_sizes(w->sim)->capacity;
	if (!qs_engine_conf_check_qlc(&lc, qlc, &ce))
		return 0;
	fprintf(stderr, "qlcshape %s: log placement on a %llu-byte QLC: %s (--op-pct %u, "
			"--band-size %llu)\n", o->cmd, (unsigned long long)qlc, ce.msg, lc.op_pct,
		(unsigned long long)lc.band_bytes);
	rc_world_free(w);
	return 2;
}

/* The options a trace job's replay reads its trace with: clone 0's span
 * (a trace job has one clone), as qs_wl_open sets it. */
static struct qs_trace_opts rc_trace_opts(const struct qs_job *j)
{
	struct qs_trace_opts t = {
		.format = j->trace_format,
		.cols = j->trace_cols,
		.timescale = j->trace_timescale,
		.ignore_time = j->trace_ignore_time,
		.scale = j->replay_scale,
		.align = j->replay_align,
		.span_off = j->offset,
		.span_len = j->size,
	};
	return t;
}

/*
 * Read every trace job's trace through before the drive is filled: a bad
 * trace is refused now, naming the job file's line and the trace's own
 * (it used to fail in the first run, after the fill), the runs learn each
 * trace's largest request without reading it again, and each trace gets
 * its summary line, appended to sum. 0 or exit status 2 (1 when a trace
 * cannot be read at all).
 */
static int rc_traces(const struct rc_opts *o, const struct rc_world *w, struct qs_job_file *jf,
		     FILE *sum)
{
	uint32_t iu = w->rt ? qs_rt_world_iu(w->rt) : qs_bench_world_iu(w->sim);
	for (size_t i = 0; i < jf->njobs; i++) {
		struct qs_job *j = &jf->jobs[i];
		struct qs_trace_opts t = rc_trace_opts(j);
		struct qs_trace_summary s;
		char err[1024], line[1500], q[300];
		if (!j->trace)
			continue;
		int rc = qs_trace_scan(j->trace, &t, iu, &s, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "qlcshape %s: %s:%u: [%s] key 'trace' value '%s': %s\n",
				o->cmd, j->trace_file, j->trace_line, j->name,
				qs_text_vis(q, sizeof(q), j->trace), err);
			return rc == -EINVAL ? 2 : 1;
		}
		j->trace_max_io = s.max_io;
		fprintf(sum, "trace [%s] %s (%s): %s\n", j->name, qs_text_vis(q, sizeof(q), j->trace),
			qs_trace_format_name(s.format), qs_trace_summary_format(&s, line, sizeof(line)));
	}
	return 0;
}

/* The traces, then (sim) the drive's fill, then the header: 0 or an
 * exit status; frees w and *jf on failure. */
static int rc_prepare(struct rc_opts *o, struct rc_world *w, struct qs_job_file **jf)
{
	char *sum = NULL, err[1024];
	size_t sumlen = 0;
	FILE *f = open_memstream(&sum, &sumlen);
	int st = f ? rc_traces(o, w, *jf, f) : 1;
	if (f)
		fclose(f);
	if (!st && w->sim && qs_bench_world_fill(w->sim, err, sizeof(err))) {
		fprintf(stderr, "qlcshape %s: %s\n", o->cmd, err);
		st = 1;
	}
	if (st) {
		free(sum);
		qs_job_file_free(*jf);
		*jf = NULL;
		rc_world_free(w);
		return st;
	}
	rc_describe(o, w, *jf);
	if (o->note && sum) /* with the notes: stderr when only JSON is written */
		fputs(sum, o->note);
	free(sum);
	return 0;
}

/* Load world and job file, check the traces, fill the drive; 0 or an exit
 * status. */
static int rc_setup(struct rc_opts *o, struct rc_world *w, struct qs_job_file **jf)
{
	char err[1024];
	memset(w, 0, sizeof(*w));
	int rc = o->mode != RC_SIM ? rc_rt_world(o, &w->rt, err, sizeof(err))
				   : qs_bench_world_new(&o->conf, &w->sim, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qlcshape %s: %s\n", o->cmd, err);
		return 1;
	}
	if ((rc = rc_check_log(o, w)))
		return rc;
	/* sizes written for the real drive scale with the model in sim mode
	 * (emu and dev runs take them as they are) */
	rc = qs_job_file_load_scaled(o->job_path, rc_capacity(o, w), o->runtime_ns,
				     w->sim ? qs_bench_world_scale(w->sim) : 1, jf, err,
				     sizeof(err));
	if (rc) {
		fprintf(stderr, "qlcshape %s: %s\n", o->cmd, err);
		rc_world_free(w);
		return rc == -EINVAL ? 2 : 1;
	}
	/* the bench's real I/O (emu, dev) is O_DIRECT: on the devices of dev
	 * mode a job asking for the page cache would measure something else */
	for (size_t i = 0; o->mode == RC_DEV && i < (*jf)->njobs; i++) {
		const struct qs_job *j = &(*jf)->jobs[i];
		if (!j->buffered)
			continue;
		fprintf(stderr, "qlcshape %s: %s:%u: [%s] buffered I/O (direct=0 or "
				"buffered=1): allowed in --mode dev: direct=1 only (the bench "
				"reads and writes the devices with O_DIRECT; sim and emu ignore "
				"it)\n", o->cmd, j->buffered_file, j->buffered_line, j->name);
		qs_job_file_free(*jf);
		*jf = NULL;
		rc_world_free(w);
		return 2;
	}
	/* one note per job: the options it sets (itself or through [global])
	 * that change nothing here */
	for (size_t i = 0; i < (*jf)->njobs; i++) {
		const struct qs_job *j = &(*jf)->jobs[i];
		if (j->scaled[0])
			fprintf(stderr, "qlcshape %s: %s: [%s] sizes for a larger drive than the "
				"model, divided by %.4g as --cache is (4 KiB down): %s\n", o->cmd,
				o->job_path, j->name, j->scaled_by, j->scaled);
		if (j->noeffect)
			fprintf(stderr, "qlcshape %s: %s: [%s] ignored in %s: %s\n", o->cmd,
				o->job_path, j->name,
				o->mode == RC_SIM ? "simulation"
						  : "the bench (its own engine does the I/O)",
				j->noeffect);
	}
	/* command-line overrides, as fio's own --runtime does for every job */
	qs_job_file_override(*jf, o->runtime_ns, o->ramp_ns, stderr);
	return rc_prepare(o, w, jf);
}

static double rc_clock(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double rc_wall(void)
{
	return (double)qs_henv_now_ns() / 1e9;
}

/*
 * The speed line. CPU time is printed too: on a shared machine the wall
 * clock also counts time the process waited for a core. With several
 * workers the CPU time is theirs added up, and the line says how many runs
 * shared how many workers (the per-CPU figure is then the one that
 * compares with a single run's).
 */
static void rc_speed(const struct rc_opts *o, uint64_t ios, double sim_s, double wall_s,
		     double cpu_s, size_t runs, unsigned workers)
{
	FILE *f = o->txt;
	if (!o->txt)
		return;
	if (o->mode != RC_SIM) {
		/* real time: the figure is the run's length, not a speed */
		fprintf(f, "\nran %llu client I/Os (%.2f s of real time, ramps included) in "
			   "%.2f s wall, %.2f s CPU\n", (unsigned long long)ios, sim_s, wall_s,
			cpu_s);
		return;
	}
	char par[64] = "";
	if (workers > 1 && runs > 1)
		snprintf(par, sizeof(par), "; %zu runs, %u at a time", runs,
			 workers < runs ? workers : (unsigned)runs);
	fprintf(f, "\nsimulated %llu client I/Os (%.2f s of virtual time) in %.2f s wall, "
		   "%.2f s CPU: %.0f simulated I/Os per wall-clock second (%.0f per CPU "
		   "second%s)\n", (unsigned long long)ios, sim_s, wall_s, cpu_s,
		wall_s > 0 ? (double)ios / wall_s : 0, cpu_s > 0 ? (double)ios / cpu_s : 0, par);
}

/*
 * Shaping on, a run whose log never started destaging in the measured
 * window measured an empty cache, not the steady state: say so (the cure is
 * a longer runtime or ramp_time, not a different figure).
 */
static void rc_note_steady(const struct rc_opts *o, const struct qs_bench_result *r,
			   const char *name)
{
	FILE *f = o->note;
	if (!o->note || !r->rep.shaping || !r->eng.client_write_bytes || r->eng.destage_ius)
		return;
	fprintf(f, "note: %s, %s: no destage in the measured window (log %.0f%% used at "
		   "the end): these are the figures of a cache that has not filled, not of the "
		   "steady state; raise runtime and ramp_time (or replay a longer trace)\n",
		name, qs_report_label(&r->rep),
		r->eng.log_blocks
			? 100.0 * (double)r->eng.log_used_blocks / (double)r->eng.log_blocks
			: 0.0);
}

/*
 * Shaping on, a run whose log gained much dirty data over its window
 * counted in WAF host only what reached the QLC: say that it is a lower
 * bound and how to lengthen the run. (A log that is about as full at both
 * ends of the window, as in steady state, destaged in it about as much as
 * the window left behind.)
 */
static void rc_note_dirty(const struct rc_opts *o, const struct qs_bench_result *r,
			  const char *name)
{
	FILE *f = o->note;
	double grew = qs_report_dirty_growth(&r->rep);
	if (!o->note || !r->rep.shaping || !(grew >= QS_REPORT_DIRTY_NOTE_PCT))
		return;
	fprintf(f, "note: %s, shaping on %s: %.1f MB still dirty in the log when the window "
		   "closed, %.1f MB more than when it opened (%.0f%% of the window's %.1f MB of "
		   "client writes): WAF host and the wear figures count only what reached the QLC "
		   "and are a lower bound; lengthen the run (ramp_time and runtime, or "
		   "steadystate, or a longer trace) until the log is full before the window opens "
		   "and the window writes many times the %.1f MB log\n",
		name, qs_report_label(&r->rep), (double)r->rep.dirty_end_bytes / 1e6,
		((double)r->rep.dirty_end_bytes - (double)r->rep.dirty_start_bytes) / 1e6, grew,
		(double)r->rep.client_write_bytes / 1e6,
		(double)r->eng.log_blocks * QS_BLOCK_SIZE / 1e6);
}

/*
 * Emu mode: how late the emulated drives delivered completions in the run
 * just done. An emulation is only as fast as the host lets it be: late
 * completions make the figures slower than the model's, and say so.
 */
static void rc_note_late(const struct rc_opts *o, const struct qs_rt_late *q,
			 const struct qs_rt_late *f, const char *name, const char *variant)
{
	if (!o->note || o->mode != RC_EMU)
		return;
	const struct qs_rt_late *l[2] = {q, f};
	char part[2][160];
	for (int i = 0; i < 2; i++) {
		if (!l[i]->requests) {
			snprintf(part[i], sizeof(part[i]), "unused");
			continue;
		}
		/* every completion comes some time after its model time (timer
		 * wake-up, the loop's turn): the mean is the figure to read */
		snprintf(part[i], sizeof(part[i]),
			 "%llu completions, on average %.1f us after their model time (max %.2f ms)",
			 (unsigned long long)l[i]->requests,
			 (double)l[i]->late_ns_sum / (double)l[i]->requests / 1000,
			 (double)l[i]->late_ns_max / 1e6);
	}
	fprintf(o->note, "emu timing: %s, %s: QLC %s; fast tier %s\n", name, variant, part[0],
		part[1]);
}

/* Dev mode, --precondition seq: how often the QLC device was filled and
 * how fast the last fill went (its sequential write rate). */
static void rc_note_fill(const struct rc_opts *o, const struct rc_world *w)
{
	uint64_t fills = 0, ns = 0;
	if (!o->note || !w->rt)
		return;
	qs_rt_world_fill(w->rt, &fills, &ns);
	if (!fills || !ns)
		return;
	double bytes = (double)qs_rt_world_sizes(w->rt)->capacity;
	fprintf(o->note, "precondition: --qlc-dev %s written in order %llu time%s (before each "
		"%s), the last %.1f GB in %.1f s, %.0f MB/s\n", o->qlc_dev,
		(unsigned long long)fills, fills == 1 ? "" : "s",
		rc_carries(o) ? "variant" : "run", bytes / 1e9, (double)ns / 1e9,
		bytes / ((double)ns / 1e9) / 1e6);
}

static const char *rc_variant_name(const struct qs_report_run *r)
{
	return r->shaping ? qs_report_label(r) : "shaping off";
}

/*
 * --recovery: what each shaping-on run's recovery took. The simulator
 * charges the devices' time; the engine's CPU is measured on this machine
 * and added. Log, map and records all grow with the drive (the log is
 * scaled alike), so the real drive's figure is the model's times the scale.
 */
static void rc_print_recovery(const struct rc_opts *o, const struct rc_world *w,
			      const struct qs_bench_result *res, size_t n)
{
	FILE *f = o->txt;
	if (!o->txt || !o->recovery)
		return;
	double scale = qs_bench_world_scale(w->sim);
	fprintf(f, "\nrecovery after a power cut at the end of the window (device time "
		   "simulated, CPU measured here; the real drive is %.0fx the model):\n", scale);
	fprintf(f, "%-24s %-12s %10s %12s %11s %9s %9s %12s %21s\n", "job", "variant",
		"log used", "map region", "cached", "devices", "CPU", "real drive",
		"clean: devices, CPU");
	for (size_t i = 0; i < n; i++) {
		const struct qs_bench_recovery *r = &res[i].rec;
		if (!r->measured)
			continue;
		double dirty = (double)r->dirty_ns / 1e9 + r->dirty_cpu_s;
		double clean = (double)r->clean_ns / 1e9 + r->clean_cpu_s;
		fprintf(f, "%-24s %-12s %8.1f MB %9.1f MB %11llu %7.3f s %7.3f s %10.1f s "
			   "%7.3f s, %.3f s (real drive %.1f s)\n",
			res[i].rep.job, rc_variant_name(&res[i].rep),
			(double)r->log_used_bytes / 1e6, (double)r->map_region_bytes / 1e6,
			(unsigned long long)r->cached_blocks, (double)r->dirty_ns / 1e9,
			r->dirty_cpu_s, dirty * scale, (double)r->clean_ns / 1e9, r->clean_cpu_s,
			clean * scale);
	}
}

/*
 * One run: a group of jobs (between stonewalls) in one variant; for
 * rc_curve one job at a rate (0: closed loop, the maximum).
 */
struct rc_task {
	size_t g, gn, k; /* first job, jobs, variant */
	bool carry;	 /* the groups of jobs g..g+gn-1 one after another on one drive */
	bool curve;	 /* run job g alone at rate_iops = rate */
	unsigned step;	 /* curve: 0 for the maximum, else rate is step * 10% of it */
	uint64_t rate;	 /* curve: rate_iops per clone */
};

struct rc_tasks {
	const struct rc_opts *o;
	struct rc_world *w;
	const struct qs_job_file *jf;
	const struct rc_task *t;
	/* real-time modes (in process): each group's lateness, at its first
	 * job's place among the task's maxgn */
	struct qs_rt_late (*late)[2];
	/* a task's output: maxgn results, then (maxc > 0, fio's JSON asked
	 * for) room for maxc of fio's entries and their count */
	size_t maxgn, maxc;
};

/* Bytes of one task's output. */
static size_t rc_out_size(const struct rc_tasks *c)
{
	size_t n = c->maxgn * sizeof(struct qs_bench_result);
	return c->maxc ? n + c->maxc * sizeof(struct qs_report_run) + sizeof(size_t) : n;
}

/* fio's entries in task output out (NULL when not asked for). */
static struct qs_report_run *rc_out_fio(const struct rc_tasks *c, void *out)
{
	return c->maxc ? (void *)((char *)out + c->maxgn * sizeof(struct qs_bench_result))
		       : NULL;
}

/* Their count in task output out (NULL when not asked for). */
static size_t *rc_out_nfio(const struct rc_tasks *c, void *out)
{
	return c->maxc ? (void *)((char *)rc_out_fio(c, out) +
				  c->maxc * sizeof(struct qs_report_run)) : NULL;
}

/* Variant k: shaping off first (if run), then each placement with each policy. */
static struct qs_bench_variant rc_variant(const struct rc_opts *o, size_t k)
{
	struct qs_bench_variant v = {0};
	v.shaping = !(o->off && k == 0);
	size_t on = v.shaping ? k - (o->off ? 1 : 0) : 0;
	v.order = o->pol[on % o->npol];
	v.placement = o->place[on / o->npol];
	v.recovery = v.shaping && o->recovery;
	v.set_bypass = o->set_bypass && v.placement == QS_PLACE_INPLACE;
	v.bypass_min_bytes = o->bypass_min;
	v.set_pace = o->set_pace;
	v.pace_pct = o->pace_pct;
	return v;
}

/* Variants per job: shaping off, and the placements times the policies. */
static size_t rc_variants(const struct rc_opts *o)
{
	return (o->off ? 1 : 0) + (o->on ? (size_t)o->npol * o->nplace : 0);
}

/*
 * A carrying task: variant v (task i) runs the groups of t's jobs in order
 * on drives of its own (sim: a copy of the filled drive; emu: emulated
 * drives; dev: the devices) and one engine, each group's results at its
 * jobs' places in out, fio's entries one group after the other, each
 * group's lateness (emu) at its first job's place.
 */
static int rc_task_carry(struct rc_tasks *c, size_t i, const struct qs_bench_variant *v,
			 void *out, char *err, size_t errlen)
{
	const struct rc_task *t = &c->t[i];
	struct qs_rt_world *rt = c->w->rt;
	struct qs_bench_drive *d = NULL;
	int rc = rt ? qs_rt_carry_begin(rt, v, err, errlen)
		    : qs_bench_drive_new(c->w->sim, &d, err, errlen);
	struct qs_bench_result *res = out;
	struct qs_report_run *fio = rc_out_fio(c, out);
	size_t n = 0;
	for (size_t g = t->g; !rc && g < t->g + t->gn;) {
		size_t gn = rc_group_len(c->jf, g), k = 0, at = g - t->g;
		const struct qs_job *jobs = &c->jf->jobs[g];
		if (rt)
			rc = qs_rt_run_group_fio(rt, jobs, gn, v, c->o->seed, res + at,
						 fio ? fio + n : NULL, fio ? &k : NULL, err, errlen);
		else
			rc = qs_bench_run_group_on(c->w->sim, d, jobs, gn, v, c->o->seed, res + at,
						   fio ? fio + n : NULL, fio ? &k : NULL, err,
						   errlen);
		if (!rc && rt) {
			struct qs_rt_late *l = c->late[i * c->maxgn + at];
			qs_rt_world_late(rt, &l[0], &l[1]);
		}
		n += k;
		g += gn;
	}
	if (rc_out_nfio(c, out))
		*rc_out_nfio(c, out) = n;
	if (rt) {
		int erc = qs_rt_carry_end(rt, rc ? NULL : err, errlen);
		rc = rc ? rc : erc;
	}
	qs_bench_drive_free(d);
	return rc;
}

/*
 * qs_par_fn: run task i into out (its group's results, first job first). A
 * curve run's rep.job is left NULL (it would point at this function's copy
 * of the job): the caller names the run.
 */
static int rc_task_run(void *ctx, size_t i, void *out, char *err, size_t errlen)
{
	struct rc_tasks *c = ctx;
	const struct rc_task *t = &c->t[i];
	struct qs_bench_variant v = rc_variant(c->o, t->k);
	const struct qs_job *jobs = &c->jf->jobs[t->g];
	struct qs_job one;
	if (t->curve) {
		one = *jobs;
		one.rate_iops = t->rate;
		jobs = &one;
	}
	if (t->carry)
		return rc_task_carry(c, i, &v, out, err, errlen);
	int rc = rc_group(c->w, jobs, t->gn, &v, c->o->seed, out, rc_out_fio(c, out),
			  rc_out_nfio(c, out), err, errlen);
	if (t->curve)
		((struct qs_bench_result *)out)->rep.job = NULL;
	if (!rc && c->w->rt) /* the group's, kept at its first job */
		qs_rt_world_late(c->w->rt, &c->late[i * c->maxgn][0],
				 &c->late[i * c->maxgn][1]);
	return rc;
}

/*
 * Workers for nruns runs: as asked, else the CPUs, but no more than one for
 * every two runs. A worker process starts with cold memory (page faults
 * for all it touches, where this process reuses what earlier runs freed),
 * which costs about as much as a short run: measured on the main job's 4K
 * random writes, shaping off and on took 0.28 to 0.32 s in two workers
 * against 0.18 to 0.21 s one after the other here.
 */
static unsigned rc_workers(const struct rc_opts *o, size_t nruns)
{
	if (o->mode != RC_SIM)
		return 1; /* real time: the runs share the devices and the clock */
	if (o->workers)
		return o->workers;
	unsigned w = qs_par_default_workers();
	/* a carrying run is a variant's whole file: long enough to pay for a
	 * worker's cold start, so one worker each (up to the CPUs) */
	size_t most = rc_carries(o) ? nruns : nruns / 2;
	if (most < w)
		w = most ? (unsigned)most : 1;
	return w;
}

/* CPU seconds of this process and of its children that have been reaped. */
static double rc_cpu(void)
{
	struct rusage ru;
	double t = rc_clock(CLOCK_PROCESS_CPUTIME_ID);
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		t += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return t;
}

/*
 * fio's JSON of the runs (--output-format json) to o->out: fio's entries of
 * every task, variant by variant (each variant as one fio run of the whole
 * file), their groups numbered on from the previous variant's so that no
 * two variants share a groupid; the wear figures' common rates from the
 * bench's entries reps. 0, or exit status 1.
 */
static int rc_fio_json(const struct rc_opts *o, const struct rc_tasks *c, char *outs,
		       size_t ntask, const struct qs_report_run *reps, size_t nreps)
{
	const struct qs_job_file *jf = c->jf;
	size_t per = rc_variants(o), n = 0, cap = 0;
	unsigned groups = jf->jobs[jf->njobs - 1].groupid + 1;
	for (size_t i = 0; i < ntask; i++)
		cap += *rc_out_nfio(c, outs + i * rc_out_size(c));
	struct qs_report_run *runs = calloc(cap ? cap : 1, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "qlcshape %s: out of memory for fio's JSON\n", o->cmd);
		return 1;
	}
	for (size_t k = 0; k < per; k++) {
		for (size_t i = 0; i < ntask; i++) {
			char *out = outs + i * rc_out_size(c);
			if (c->t[i].k != k)
				continue;
			for (size_t e = 0; e < *rc_out_nfio(c, out); e++) {
				runs[n] = rc_out_fio(c, out)[e];
				runs[n++].groupid += (unsigned)k * groups;
			}
		}
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now); /* fio's timestamp: when the runs ended */
	struct qs_report_fio_doc doc = {RC_FIO_VERSION,
					(int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
					jf->gopts, jf->ngopts, runs, n, reps, nreps};
	int rc = qs_report_fio_json(o->out, &doc);
	free(runs);
	if (!rc)
		return 0;
	fprintf(stderr, "qlcshape %s: writing fio's JSON: %s\n", o->cmd, strerror(-rc));
	return 1;
}

static int rc_run(struct rc_opts *o)
{
	struct rc_world w;
	struct qs_job_file *jf;
	int st = rc_setup(o, &w, &jf);
	if (st)
		return st;
	size_t per = rc_variants(o);
	/* jobs between stonewalls run together, as in fio: one task a group
	 * and variant, variants of a group next to each other; or, when the
	 * drive carries, one task a variant running every group in order */
	size_t ntask = 0, maxgn = 1, maxc = 1, allc = 0;
	struct rc_task *tasks = calloc(jf->njobs * per, sizeof(*tasks));
	for (size_t g = 0; tasks && g < jf->njobs;) {
		size_t gn = rc_group_len(jf, g), clones = 0;
		for (size_t j = g; j < g + gn; j++)
			clones += jf->jobs[j].numjobs;
		for (size_t k = 0; k < per && !rc_carries(o); k++)
			tasks[ntask++] = (struct rc_task){g, gn, k, false, false, 0, 0};
		maxgn = gn > maxgn ? gn : maxgn;
		maxc = clones > maxc ? clones : maxc;
		allc += clones;
		g += gn;
	}
	for (size_t k = 0; tasks && k < per && rc_carries(o); k++)
		tasks[ntask++] = (struct rc_task){0, jf->njobs, k, true, false, 0, 0};
	if (rc_carries(o)) {
		maxgn = jf->njobs;
		maxc = allc;
	}
	struct rc_tasks ctx = {o, &w, jf, tasks, NULL, maxgn,
			       o->formats & RC_FMT_JSON ? maxc : 0};
	struct qs_bench_result *res = calloc(jf->njobs * per, sizeof(*res));
	struct qs_report_run *reps = calloc(jf->njobs * per, sizeof(*reps));
	char *tmp = calloc(ntask ? ntask : 1, rc_out_size(&ctx));
	struct qs_rt_late (*late)[2] = calloc(jf->njobs * per, sizeof(*late));
	struct qs_rt_late (*tlate)[2] = calloc((ntask ? ntask : 1) * maxgn, sizeof(*tlate));
	size_t n = 0;
	uint64_t ios = 0, sim_ns = 0;
	double wall0 = rc_wall(), cpu0 = rc_cpu();
	char err[1024];
	if (!tasks || !res || !reps || !tmp || !late || !tlate) {
		fprintf(stderr, "qlcshape %s: out of memory\n", o->cmd);
		st = 1;
		goto out;
	}
	unsigned workers = rc_workers(o, ntask);
	ctx.late = tlate;
	if (qs_par_run(ntask, workers, rc_task_run, &ctx, tmp, rc_out_size(&ctx), err,
		       sizeof(err), NULL)) {
		fprintf(stderr, "qlcshape %s: %s\n", o->cmd, err);
		st = 1;
		goto out;
	}
	for (size_t i = 0; i < ntask; i++) {
		const struct rc_task *t = &tasks[i];
		const struct qs_bench_result *r = (void *)(tmp + i * rc_out_size(&ctx));
		for (size_t j = 0; j < t->gn; j++) {
			res[(t->g + j) * per + t->k] = r[j];
			ios += r[j].ios;
			if (!j || jf->jobs[t->g + j].stonewall) /* a group's time, once */
				sim_ns += r[j].sim_ns;
		}
		for (size_t j = 0; j < t->gn; j++)
			memcpy(late[(t->g + j) * per + t->k], tlate[i * maxgn + j],
			       sizeof(tlate[0]));
	}
	/* the report's entries: a job group_reporting sums into an earlier
	 * job's entry has none of its own */
	for (size_t i = 0; i < jf->njobs * per; i++) {
		if (!res[i].rep.members)
			continue;
		memmove(late[n], late[i], sizeof(late[i]));
		res[n++] = res[i];
	}
	for (size_t i = 0; i < n; i++)
		reps[i] = res[i].rep;
	double wall = rc_wall() - wall0, cpu = rc_cpu() - cpu0;
	if (o->txt) {
		fprintf(o->txt, "\n");
		qs_report_table(o->txt, reps, n);
	}
	for (size_t i = 0; i < n; i++) {
		rc_note_steady(o, &res[i], res[i].rep.job);
		rc_note_dirty(o, &res[i], res[i].rep.job);
	}
	for (size_t i = 0; i < n; i++)
		if (late[i][0].requests || late[i][1].requests)
			rc_note_late(o, &late[i][0], &late[i][1], res[i].rep.job,
				     rc_variant_name(&res[i].rep));
	rc_note_fill(o, &w);
	rc_print_recovery(o, &w, res, n);
	struct rc_runs rr = {reps, n, "qlcshape bench: shaping off vs on", NULL, 0};
	st |= rc_outputs(o, &rr, rc_bars);
	rc_speed(o, ios, (double)sim_ns / 1e9, wall, cpu, ntask, workers);
	if (ctx.maxc)
		st |= rc_fio_json(o, &ctx, tmp, ntask, reps, n);
out:
	free(tasks);
	free(res);
	free(reps);
	free(tmp);
	free(late);
	free(tlate);
	qs_job_file_free(jf);
	rc_world_free(&w);
	return st;
}

/* ---- curve ---- */

#define RC_CURVE_STEPS 12 /* 10% .. 120% */

static double rc_total_iops(const struct qs_report_run *r)
{
	return r->read.iops + r->write.iops;
}

/* p99 of the direction the job mostly issues (writes if it writes at all). */
static double rc_p99_us(const struct qs_job *j, const struct qs_report_run *r)
{
	const struct qs_report_dir *d = qs_job_writes(j) ? &r->write : &r->read;
	return (double)d->lat_p99_ns / 1000.0;
}

/*
 * For each job and variant: the maximum rate (closed loop), then rate_iops
 * at 10%..120% of it. The maximum runs of all variants go first, side by
 * side; then all the rated runs (each needs only its own maximum).
 */
static int rc_curve(struct rc_opts *o)
{
	FILE *f = o->txt;
	struct rc_world w;
	struct qs_job_file *jf;
	int st = rc_setup(o, &w, &jf);
	if (st)
		return st;
	size_t per = rc_variants(o);
	size_t nvar = jf->njobs * per, npts = RC_CURVE_STEPS + 1;
	struct qs_report_run *reps = calloc(nvar * npts, sizeof(*reps));
	char (*names)[QS_JOB_NAME_MAX + 16] = calloc(nvar * npts, sizeof(*names));
	char (*snames)[QS_JOB_NAME_MAX + 32] = calloc(nvar, sizeof(*snames));
	struct qs_report_point *pts = calloc(nvar * npts, sizeof(*pts));
	struct qs_report_series *ser = calloc(nvar, sizeof(*ser));
	struct rc_task *tasks = calloc(nvar * npts, sizeof(*tasks));
	struct qs_bench_result *res = calloc(nvar * npts, sizeof(*res));
	struct qs_rt_late (*late)[2] = calloc(nvar * npts, sizeof(*late));
	size_t n = 0, ns = 0;
	uint64_t ios = 0, sim_ns = 0;
	double wall0 = rc_wall(), cpu0 = rc_cpu();
	char err[1024];
	if (!reps || !names || !snames || !pts || !ser || !tasks || !res || !late) {
		fprintf(stderr, "qlcshape %s: out of memory\n", o->cmd);
		st = 1;
		goto out;
	}
	unsigned workers = rc_workers(o, nvar);
	/* variant x = j * per + k: its maximum is task x, its step s task
	 * nvar + x * RC_CURVE_STEPS + s - 1 */
	for (size_t x = 0; x < nvar; x++)
		tasks[x] = (struct rc_task){x / per, 1, x % per, false, true, 0, 0};
	struct rc_tasks ctx = {o, &w, jf, tasks, late, 1, 0};
	size_t ntask = nvar;
	if (qs_par_run(nvar, workers, rc_task_run, &ctx, res, sizeof(*res), err, sizeof(err),
		       NULL))
		goto failed;
	for (size_t x = 0; x < nvar; x++) {
		double max = rc_total_iops(&res[x].rep);
		const struct qs_job *job = &jf->jobs[x / per];
		for (unsigned step = 1; max > 0 && step <= RC_CURVE_STEPS; step++) {
			double per_clone = max * step * 10 / 100.0 / job->numjobs;
			uint64_t rate = per_clone < 1 ? 1 : (uint64_t)(per_clone + 0.5);
			tasks[nvar + x * RC_CURVE_STEPS + step - 1] =
				(struct rc_task){x / per, 1, x % per, false, true, step, rate};
		}
	}
	/* variants without a maximum have no steps (their entries stay step 0):
	 * pack the rated runs together */
	size_t nrated = 0;
	struct rc_task *rated = tasks + nvar;
	for (size_t i = 0; i < nvar * RC_CURVE_STEPS; i++)
		if (rated[i].step)
			rated[nrated++] = rated[i];
	ctx.t = rated;
	ctx.late = late + nvar;
	ntask = nvar + nrated;
	unsigned rated_workers = rc_workers(o, nrated);
	if (rated_workers > workers)
		workers = rated_workers; /* for the speed line */
	if (qs_par_run(nrated, rated_workers, rc_task_run, &ctx, res + nvar, sizeof(*res), err,
		       sizeof(err), NULL))
		goto failed;
	if (o->txt)
		fprintf(f, "\n%-24s %-8s %6s %12s %12s %10s %10s %10s %10s %10s\n", "job",
			"variant", "rate", "target IOPS", "IOPS", "MB/s", "mean us", "p50 us",
			"p99 us", "p99.9 us");
	size_t r = nvar; /* next rated result */
	for (size_t x = 0; x < nvar; x++) {
		const struct qs_job *job = &jf->jobs[x / per];
		struct qs_bench_variant v = rc_variant(o, x % per);
		struct qs_report_series *s = &ser[ns];
		snprintf(snames[ns], sizeof(snames[ns]), "%s %s%s", job->name,
			 v.shaping ? "on " : "off", v.shaping ? qs_policy_order_name(v.order) : "");
		s->name = snames[ns];
		s->pts = &pts[n];
		ns++;
		for (unsigned step = 0; step <= RC_CURVE_STEPS; step++) {
			size_t i = step ? r : x;
			if (step && (r >= nvar + nrated || tasks[i].g != x / per ||
				     tasks[i].k != x % per))
				break; /* no maximum, so no steps */
			if (step)
				r++;
			const struct qs_bench_result *q = &res[i];
			unsigned pct = step * 10;
			ios += q->ios;
			sim_ns += q->sim_ns;
			if (step)
				snprintf(names[n], sizeof(names[n]), "%s@%u%%", job->name, pct);
			else
				snprintf(names[n], sizeof(names[n]), "%s@max", job->name);
			reps[n] = q->rep;
			reps[n].job = names[n];
			const struct qs_report_dir *d = qs_job_writes(job) ? &q->rep.write : &q->rep.read;
			char rate[16];
			snprintf(rate, sizeof(rate), step ? "%u%%" : "max", pct);
			if (o->txt)
				fprintf(f, "%-24s %-8s %6s %12.0f %12.0f %10.1f %10.1f %10.1f "
					   "%10.1f %10.1f\n", job->name,
					v.shaping ? qs_policy_order_name(v.order) : "off", rate,
					step ? (double)tasks[i].rate * job->numjobs : 0,
					rc_total_iops(&q->rep),
					(double)(q->rep.read.bw_bytes + q->rep.write.bw_bytes) / 1e6,
					d->lat_mean_ns / 1000, (double)d->lat_p50_ns / 1000,
					(double)d->lat_p99_ns / 1000, (double)d->lat_p999_ns / 1000);
			rc_note_steady(o, q, names[n]);
			rc_note_dirty(o, q, names[n]);
			if (late[i][0].requests || late[i][1].requests)
				rc_note_late(o, &late[i][0], &late[i][1], names[n],
					     rc_variant_name(&q->rep));
			if (step) {
				pts[n].x = rc_total_iops(&q->rep);
				pts[n].y = rc_p99_us(job, &q->rep);
				if (pts[n].y <= 0)
					pts[n].y = 0.001; /* log axis: never 0 */
				s->n++;
			}
			n++;
			if (!step && rc_total_iops(&q->rep) <= 0)
				fprintf(stderr, "qlcshape %s: job '%s': no I/O completed at the maximum "
						"rate; no curve\n", o->cmd, job->name);
		}
		/* points of a series are contiguous; the max run sits before them */
		s->pts = s->n ? &pts[n - s->n] : s->pts;
	}
	rc_note_fill(o, &w);
	double wall = rc_wall() - wall0, cpu = rc_cpu() - cpu0;
	struct rc_runs rr = {reps, n, "qlcshape bench curve: p99 latency against IOPS", ser, ns};
	st |= rc_outputs(o, &rr, rc_lines);
	rc_speed(o, ios, (double)sim_ns / 1e9, wall, cpu, ntask, workers);
	goto out;
failed:
	fprintf(stderr, "qlcshape %s: %s\n", o->cmd, err);
	st = 1;
out:
	free(reps);
	free(names);
	free(snames);
	free(pts);
	free(ser);
	free(tasks);
	free(res);
	free(late);
	qs_job_file_free(jf);
	rc_world_free(&w);
	return st;
}

/*
 * Where the reports go (fio's --output): stdout, or the file F. The normal
 * text goes there when asked for and not --quiet; its notes go to stderr
 * when only JSON is written (stdout then holds nothing but the JSON).
 * 0, or exit status 1.
 */
static int rc_streams_open(struct rc_opts *o)
{
	o->out = stdout;
	if (o->output && !(o->out = fopen(o->output, "w"))) {
		fprintf(stderr, "qlcshape %s: --output '%s': cannot create: %s\n", o->cmd, o->output,
			strerror(errno));
		return 1;
	}
	bool normal = o->formats & RC_FMT_NORMAL;
	o->txt = normal && !o->quiet ? o->out : NULL;
	o->note = o->quiet ? NULL : normal ? o->out : stderr;
	return 0;
}

/* Close --output's file; 0, or exit status 1 when it could not be written. */
static int rc_streams_close(struct rc_opts *o)
{
	int bad = ferror(o->out);
	if (o->out != stdout && fclose(o->out))
		bad = 1;
	if (!bad)
		return 0;
	fprintf(stderr, "qlcshape %s: writing %s failed\n", o->cmd,
		o->output ? o->output : "the standard output");
	return 1;
}

static int rc_main(enum rc_kind kind, const char *cmd, int argc, char **argv)
{
	struct rc_opts o;
	memset(&o, 0, sizeof(o));
	o.kind = kind;
	o.cmd = cmd;
	int st = rc_parse(argc, argv, &o);
	if (st)
		return st < 0 ? 0 : st;
	if ((st = rc_streams_open(&o)))
		return st;
	st = kind == RC_CURVE ? rc_curve(&o) : rc_run(&o);
	return rc_streams_close(&o) ? (st ? st : 1) : st;
}

int qs_cmd_bench_run(int argc, char **argv)
{
	return rc_main(RC_RUN, "bench run", argc, argv);
}

int qs_cmd_bench_ab(int argc, char **argv)
{
	return rc_main(RC_AB, "bench ab", argc, argv);
}

int qs_cmd_bench_curve(int argc, char **argv)
{
	return rc_main(RC_CURVE, "bench curve", argc, argv);
}
