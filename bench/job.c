/* SPDX-License-Identifier: MIT */
/*
 * Bench job files (see job.h). iniparser reads the values; this file also
 * scans the text itself, because iniparser keeps no line numbers and every
 * error must name its line, and because iniparser silently accepts things
 * fio users would want flagged (keys outside a section, bare flags).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <iniparser.h>

#include "job.h"
#include "host/text.h"

#define NS_PER_S 1000000000ull

/* One "key = value" line or section header found by the scanner. */
struct scan_ent {
	char sec[QS_JOB_NAME_MAX]; /* lowercased like iniparser */
	char key[64];		   /* lowercased; "" for a section header */
	char secname[QS_JOB_NAME_MAX]; /* header as written (job name) */
	unsigned line;
};

struct scan {
	struct scan_ent *ent;
	size_t n, cap;
};

/* A size or offset that may be a percentage of the capacity. */
struct pct_size {
	bool set, pct;
	double pct_val;
	uint64_t bytes;
	unsigned line; /* where it was last set, for errors after resolving */
};

struct job_build {
	struct qs_job job;
	unsigned kb_base;
	struct pct_size size, offset;
	unsigned line_numjobs, line_offset_inc, line_trace, line_bs;
	char wait_for[QS_JOB_NAME_MAX]; /* wait_for's job name ("" none) */
	unsigned line_wait_for;
	unsigned line_ss, line_ss_time;
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *qs_job_rw_name(enum qs_job_rw rw)
{
	switch (rw) {
	case QS_RW_READ: return "read";
	case QS_RW_WRITE: return "write";
	case QS_RW_RANDREAD: return "randread";
	case QS_RW_RANDWRITE: return "randwrite";
	case QS_RW_RW: return "rw";
	case QS_RW_RANDRW: return "randrw";
	}
	return "?";
}

bool qs_job_reads(const struct qs_job *j)
{
	if (j->trace)
		return true;
	switch (j->rw) {
	case QS_RW_READ:
	case QS_RW_RANDREAD:
		return true;
	case QS_RW_RW:
	case QS_RW_RANDRW:
		return j->rwmixread > 0;
	default:
		return false;
	}
}

bool qs_job_writes(const struct qs_job *j)
{
	if (j->trace)
		return true;
	switch (j->rw) {
	case QS_RW_WRITE:
	case QS_RW_RANDWRITE:
		return true;
	case QS_RW_RW:
	case QS_RW_RANDRW:
		return j->rwmixread < 100;
	default:
		return false;
	}
}

/* Split a number from its suffix; the number may have a fraction ("1.5g"). */
static int split_number(const char *s, double *num, uint64_t *inum, bool *is_int,
			const char **suffix)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -EINVAL;
	errno = 0;
	unsigned long long u = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end == '.') {
		*num = strtod(s, &end);
		*is_int = false;
	} else {
		*inum = u;
		*num = (double)u;
		*is_int = true;
	}
	while (isspace((unsigned char)*end))
		end++;
	*suffix = end;
	return 0;
}

/* Case-insensitive equality of suffix (trailing blanks allowed) and word. */
static bool suffix_is(const char *suffix, const char *word)
{
	size_t n = strlen(word);
	if (strncasecmp(suffix, word, n))
		return false;
	for (suffix += n; *suffix; suffix++)
		if (!isspace((unsigned char)*suffix))
			return false;
	return true;
}

int qs_job_parse_size(const char *s, unsigned kb_base, uint64_t *out)
{
	static const char units[] = "kmgtpe";
	double num;
	uint64_t inum = 0;
	bool is_int;
	const char *suf;
	int rc = split_number(s, &num, &inum, &is_int, &suf);
	if (rc)
		return rc;

	uint64_t mult = 1;
	if (*suf && !suffix_is(suf, "b")) {
		const char *u = strchr(units, tolower((unsigned char)*suf));
		if (!u)
			return -EINVAL;
		/* "KiB" is binary whatever kb_base says; "k", "kb" follow kb_base. */
		unsigned base = kb_base;
		const char *rest = suf + 1;
		if (suffix_is(rest, "ib"))
			base = 1024;
		else if (*rest && !suffix_is(rest, "b") && !suffix_is(rest, ""))
			return -EINVAL;
		for (const char *p = units; p <= u; p++) {
			if (mult > UINT64_MAX / base)
				return -ERANGE;
			mult *= base;
		}
	}
	if (is_int) {
		if (inum && mult > UINT64_MAX / inum)
			return -ERANGE;
		*out = inum * mult;
	} else {
		double v = num * (double)mult;
		if (v >= 18446744073709551616.0)
			return -ERANGE;
		*out = (uint64_t)v;
	}
	return 0;
}

int qs_job_parse_time(const char *s, uint64_t unit_ns, uint64_t *out)
{
	static const struct {
		const char *suf;
		uint64_t ns;
	} units[] = {
		{"ns", 1}, {"us", 1000}, {"usec", 1000}, {"ms", 1000000},
		{"msec", 1000000}, {"s", NS_PER_S}, {"sec", NS_PER_S},
		{"m", 60 * NS_PER_S}, {"min", 60 * NS_PER_S},
		{"h", 3600 * NS_PER_S}, {"d", 86400 * NS_PER_S},
	};
	double num;
	uint64_t inum = 0;
	bool is_int;
	const char *suf;
	int rc = split_number(s, &num, &inum, &is_int, &suf);
	if (rc)
		return rc;
	uint64_t mult = unit_ns;
	if (*suf) {
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (suffix_is(suf, units[i].suf))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		mult = units[i].ns;
	}
	double v = num * (double)mult;
	if (v >= 9.2e18)
		return -ERANGE;
	*out = is_int ? inum * mult : (uint64_t)(v + 0.5);
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_uint(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	unsigned long long u = strtoull(v, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || *end || u < lo || u > hi)
		return -EINVAL;
	*out = u;
	return 0;
}

static int parse_pct_size(const char *v, unsigned kb_base, struct pct_size *ps)
{
	size_t n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n && v[n - 1] == '%') {
		char buf[64], *end;
		if (n >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, v, n - 1);
		buf[n - 1] = 0;
		double p = strtod(buf, &end);
		if (end == buf || *end || !(p > 0 && p <= 100))
			return -EINVAL;
		ps->pct = true;
		ps->pct_val = p;
	} else {
		if (qs_job_parse_size(v, kb_base, &ps->bytes))
			return -EINVAL;
		ps->pct = false;
	}
	ps->set = true;
	return 0;
}

/*
 * The job file's keys. Each handler applies one value to b, with key the
 * name it was given under; on a bad value it returns -EINVAL and *allowed
 * says what would be fine.
 */
typedef int (*job_key_fn)(struct job_build *b, const char *key, const char *v, unsigned line,
			  const char **allowed);

static int job_key_rw(struct job_build *b, const char *key, const char *v, unsigned line,
		      const char **allowed)
{
	static const struct {
		const char *name;
		enum qs_job_rw rw;
	} rws[] = {
		{"read", QS_RW_READ}, {"write", QS_RW_WRITE},
		{"randread", QS_RW_RANDREAD}, {"randwrite", QS_RW_RANDWRITE},
		{"rw", QS_RW_RW}, {"readwrite", QS_RW_RW},
		{"randrw", QS_RW_RANDRW},
	};
	*allowed = "read, write, randread, randwrite, rw (readwrite), randrw";
	for (size_t i = 0; i < sizeof(rws) / sizeof(rws[0]); i++) {
		if (!strcasecmp(v, rws[i].name)) {
			b->job.rw = rws[i].rw;
			return 0;
		}
	}
	return -EINVAL;
}

static int job_key_bs(struct job_build *b, const char *key, const char *v, unsigned line,
		      const char **allowed)
{
	uint64_t u;
	/* With kb_base=1000, 4k is 4000 bytes: the range is said in bytes
	 * and KiB, which mean the same under either base. */
	*allowed = b->kb_base == 1000
			   ? "a multiple of 4096 bytes from 4096 to 16777216 (4KiB to "
			     "16MiB; with kb_base=1000, 4k is 4000 bytes: write 4KiB "
			     "or 4096) (one value for reads and writes)"
			   : "a size that is a multiple of 4k, from 4k to 16m "
			     "(one value for reads and writes)";
	if (qs_job_parse_size(v, b->kb_base, &u) || !u || u % 4096 || u > (16u << 20))
		return -EINVAL;
	b->job.bs = u;
	b->line_bs = line;
	return 0;
}

static int job_key_rwmix(struct job_build *b, const char *key, const char *v, unsigned line,
			 const char **allowed)
{
	uint64_t u;
	*allowed = "an integer percentage from 0 to 100";
	if (parse_uint(v, 0, 100, &u))
		return -EINVAL;
	b->job.rwmixread = key[5] == 'r' ? (unsigned)u : 100 - (unsigned)u;
	return 0;
}

/* iodepth, numjobs, rate_iops: one integer in a range each */
static int job_key_count(struct job_build *b, const char *key, const char *v, unsigned line,
			 const char **allowed)
{
	static const struct {
		const char *allowed;
		uint64_t min, max;
	} k[] = {
		{"an integer from 1 to 65536", 1, 65536},
		{"an integer from 1 to 1024", 1, 1024},
		{"an integer from 0 (unrated) to 100000000, one value for reads and writes "
		 "together", 0, 100000000},
	};
	size_t i = key[0] == 'i' ? 0 : key[0] == 'n' ? 1 : 2;
	uint64_t u;
	*allowed = k[i].allowed;
	if (parse_uint(v, k[i].min, k[i].max, &u))
		return -EINVAL;
	if (i == 0) {
		b->job.iodepth = (unsigned)u;
	} else if (i == 1) {
		b->job.numjobs = (unsigned)u;
		b->line_numjobs = line;
	} else {
		b->job.rate_iops = u;
	}
	return 0;
}

/* size and offset: a size or a percentage of the capacity */
static int job_key_span(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct pct_size *ps = key[0] == 's' ? &b->size : &b->offset;
	*allowed = b->kb_base == 1000
			   ? "a size (4KiB, 1MiB, 1GiB...) or a percentage of the "
			     "capacity (5%), a multiple of 4096 bytes (with "
			     "kb_base=1000, 4k is 4000 bytes)"
			   : "a size (4k, 1m, 1g...) or a percentage of the "
			     "capacity (5%), a multiple of 4k";
	if (parse_pct_size(v, b->kb_base, ps))
		return -EINVAL;
	if (!ps->pct && ps->bytes % 4096)
		return -EINVAL;
	if (key[0] == 's' && !ps->pct && !ps->bytes)
		return -EINVAL;
	ps->line = line;
	return 0;
}

static int job_key_offset_inc(struct job_build *b, const char *key, const char *v,
			      unsigned line, const char **allowed)
{
	uint64_t u;
	*allowed = b->kb_base == 1000
			   ? "a multiple of 4096 bytes (with kb_base=1000, 4k is 4000 "
			     "bytes: write 4KiB or 4096)"
			   : "a size that is a multiple of 4k";
	if (qs_job_parse_size(v, b->kb_base, &u) || u % 4096)
		return -EINVAL;
	b->job.offset_increment = u;
	b->line_offset_inc = line;
	return 0;
}

/* random_distribution: NAME[:PARAM], PARAM checked per distribution */
static int job_key_dist(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct qs_job *j = &b->job;
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	double p = NAN;
	*allowed = "random, zipf[:theta] (theta > 0, not 1; default 1.1), "
		   "pareto[:h] (0 < h < 1; default 0.2)";
	if (colon) {
		char *end;
		p = strtod(colon + 1, &end);
		if (end == colon + 1 || *end)
			return -EINVAL;
	}
	if (n == 6 && !strncasecmp(v, "random", n) && !colon) {
		j->dist = QS_DIST_RANDOM;
		p = 0;
	} else if (n == 4 && !strncasecmp(v, "zipf", n)) {
		if (!colon)
			p = 1.1;
		if (!(p > 0) || p == 1.0 || p > 100)
			return -EINVAL;
		j->dist = QS_DIST_ZIPF;
	} else if (n == 6 && !strncasecmp(v, "pareto", n)) {
		if (!colon)
			p = 0.2;
		if (!(p > 0 && p < 1))
			return -EINVAL;
		j->dist = QS_DIST_PARETO;
	} else {
		return -EINVAL;
	}
	j->dist_param = p;
	return 0;
}

/* norandommap, time_based, stonewall, trace_ignore_time */
static int job_key_bool(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct qs_job *j = &b->job;
	bool bv;
	*allowed = "0 or 1 (also true/false, yes/no, on/off)";
	if (parse_bool(v, &bv))
		return -EINVAL;
	if (key[0] == 'n')
		j->norandommap = bv;
	else if (key[0] == 's')
		j->stonewall = bv;
	else if (key[1] == 'i')
		j->time_based = bv;
	else
		j->trace_ignore_time = bv;
	return 0;
}

static int job_key_rate_process(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	*allowed = "linear, poisson";
	if (!strcasecmp(v, "linear"))
		b->job.rate_process = QS_RATE_LINEAR;
	else if (!strcasecmp(v, "poisson"))
		b->job.rate_process = QS_RATE_POISSON;
	else
		return -EINVAL;
	return 0;
}

/* runtime, ramp_time */
static int job_key_time(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	uint64_t u;
	*allowed = "a time up to 30 days: seconds, or a number with us, "
		   "ms, s, m, h or d (500ms, 2s, 1m)";
	if (qs_job_parse_time(v, NS_PER_S, &u) || u > 30 * 86400 * NS_PER_S)
		return -EINVAL;
	*(!strcmp(key, "runtime")     ? &b->job.runtime_ns
	  : !strcmp(key, "ramp_time") ? &b->job.ramp_time_ns
				      : &b->job.startdelay_ns) = u;
	return 0;
}

const char *qs_job_ss_name(enum qs_job_ss ss)
{
	static const char *const names[] = {"none", "iops", "iops_slope", "bw", "bw_slope"};
	return ss <= QS_SS_BW_SLOPE ? names[ss] : "?";
}

/* steadystate (ss): CRITERION:LIMIT, LIMIT a number or a percentage */
static int job_key_ss(struct job_build *b, const char *key, const char *v, unsigned line,
		      const char **allowed)
{
	*allowed = "iops:L, iops_slope:L, bw:L or bw_slope:L, L a number at least 0 "
		   "(IOPS, bytes/s; per sample for slopes) or a percentage of the mean "
		   "(iops_slope:0.5%)";
	const char *colon = strchr(v, ':');
	if (!colon)
		return -EINVAL;
	size_t n = (size_t)(colon - v);
	enum qs_job_ss ss = QS_SS_NONE;
	for (int k = QS_SS_IOPS; k <= QS_SS_BW_SLOPE; k++)
		if (strlen(qs_job_ss_name((enum qs_job_ss)k)) == n &&
		    !strncasecmp(v, qs_job_ss_name((enum qs_job_ss)k), n))
			ss = (enum qs_job_ss)k;
	char *end;
	double lim = strtod(colon + 1, &end);
	bool pct = *end == '%';
	if (ss == QS_SS_NONE || end == colon + 1 || (pct ? end[1] : *end) || !(lim >= 0) ||
	    !isfinite(lim))
		return -EINVAL;
	b->job.ss = ss;
	b->job.ss_limit = lim;
	b->job.ss_pct = pct;
	b->line_ss = line;
	return 0;
}

/* steadystate_duration, _ramp_time, _check_interval (and fio's short names) */
static int job_key_ss_time(struct job_build *b, const char *key, const char *v, unsigned line,
			   const char **allowed)
{
	uint64_t u;
	*allowed = "a time up to 30 days: seconds, or a number with us, "
		   "ms, s, m, h or d (500ms, 2s, 1m)";
	if (qs_job_parse_time(v, NS_PER_S, &u) || u > 30 * 86400 * NS_PER_S)
		return -EINVAL;
	bool dur = strstr(key, "dur") != NULL, itv = strstr(key, "interval") != NULL;
	if (itv && !u) {
		*allowed = "a time above 0 (default 1s)";
		return -EINVAL;
	}
	*(dur ? &b->job.ss_dur_ns : itv ? &b->job.ss_interval_ns : &b->job.ss_ramp_ns) = u;
	if (dur || itv)
		b->line_ss_time = line;
	return 0;
}

static int job_key_kb_base(struct job_build *b, const char *key, const char *v, unsigned line,
			   const char **allowed)
{
	uint64_t u;
	*allowed = "1024 or 1000";
	if (parse_uint(v, 1000, 1024, &u) || (u != 1000 && u != 1024))
		return -EINVAL;
	b->kb_base = (unsigned)u;
	return 0;
}

static int job_key_trace(struct job_build *b, const char *key, const char *v, unsigned line,
			 const char **allowed)
{
	*allowed = "a path to a trace file (relative to the current "
		   "directory)";
	if (!*v)
		return -EINVAL;
	char *p = strdup(v);
	if (!p)
		return -ENOMEM;
	free(b->job.trace);
	b->job.trace = p;
	b->line_trace = line;
	return 0;
}

static int job_key_wait_for(struct job_build *b, const char *key, const char *v, unsigned line,
			    const char **allowed)
{
	(void)key;
	*allowed = "the name of an earlier job of the same group";
	if (!*v || strlen(v) >= sizeof(b->wait_for))
		return -EINVAL;
	snprintf(b->wait_for, sizeof(b->wait_for), "%s", v);
	b->line_wait_for = line;
	return 0;
}

static int job_key_trace_format(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	*allowed = "auto, mqsim, msr, iolog";
	return qs_trace_format_parse(v, &b->job.trace_format);
}

static int job_key_timescale(struct job_build *b, const char *key, const char *v,
			     unsigned line, const char **allowed)
{
	char *end;
	*allowed = "a number above 0 and at most 1000000 (1 = time "
		   "stamps as they are, 0.5 = twice as fast)";
	double d = strtod(v, &end);
	if (end == v || *end || !(d > 0 && d <= 1e6))
		return -EINVAL;
	b->job.trace_timescale = d;
	return 0;
}

/* fio options with no meaning in the bench; accepted so real fio job files
 * load. */
static int job_key_ignored(struct job_build *b, const char *key, const char *v,
			   unsigned line, const char **allowed)
{
	return 0;
}

static const struct {
	const char *key;
	job_key_fn fn;
} job_keys[] = {
	{"rw", job_key_rw}, {"readwrite", job_key_rw},
	{"bs", job_key_bs}, {"blocksize", job_key_bs},
	{"rwmixread", job_key_rwmix}, {"rwmixwrite", job_key_rwmix},
	{"iodepth", job_key_count},
	{"numjobs", job_key_count},
	{"size", job_key_span}, {"offset", job_key_span},
	{"offset_increment", job_key_offset_inc},
	{"random_distribution", job_key_dist},
	{"norandommap", job_key_bool}, {"time_based", job_key_bool},
	{"stonewall", job_key_bool}, {"trace_ignore_time", job_key_bool},
	{"rate_iops", job_key_count},
	{"rate_process", job_key_rate_process},
	{"runtime", job_key_time}, {"ramp_time", job_key_time},
	{"startdelay", job_key_time}, {"wait_for", job_key_wait_for},
	{"kb_base", job_key_kb_base},
	{"steadystate", job_key_ss}, {"ss", job_key_ss},
	{"steadystate_duration", job_key_ss_time}, {"ss_dur", job_key_ss_time},
	{"steadystate_ramp_time", job_key_ss_time}, {"ss_ramp", job_key_ss_time},
	{"steadystate_check_interval", job_key_ss_time}, {"ss_interval", job_key_ss_time},
	{"trace", job_key_trace},
	{"trace_format", job_key_trace_format},
	{"trace_timescale", job_key_timescale},
	{"ioengine", job_key_ignored}, {"direct", job_key_ignored},
	{"filename", job_key_ignored}, {"group_reporting", job_key_ignored},
	{"thread", job_key_ignored}, {"description", job_key_ignored},
	{"name", job_key_ignored},
};

/* Apply one key to b: 0, -EINVAL (a bad value: *allowed says what would be
 * fine), -ENOMEM, or -ENOENT for a key the bench does not know. */
static int job_apply(struct job_build *b, const char *key, const char *v,
		     unsigned line, const char **allowed)
{
	for (size_t i = 0; i < sizeof(job_keys) / sizeof(job_keys[0]); i++)
		if (!strcmp(key, job_keys[i].key))
			return job_keys[i].fn(b, key, v, line, allowed);
	return -ENOENT;
}

static void job_defaults(struct job_build *b)
{
	memset(b, 0, sizeof(*b));
	b->kb_base = 1024;
	b->job.rw = QS_RW_READ;
	b->job.bs = 4096;
	b->job.rwmixread = 50;
	b->job.iodepth = 1;
	b->job.numjobs = 1;
	b->job.dist = QS_DIST_RANDOM;
	b->job.rate_process = QS_RATE_LINEAR;
	b->job.trace_format = QS_TRACE_AUTO;
	b->job.trace_timescale = 1.0;
	b->job.ss_interval_ns = NS_PER_S; /* fio's steadystate_check_interval */
}

static void str_trim(char *s)
{
	char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	size_t n = strlen(p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	memmove(s, p, n);
	s[n] = 0;
}

static void str_lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static int scan_push(struct scan *sc, const struct scan_ent *e)
{
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 32;
		struct scan_ent *n = realloc(sc->ent, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		sc->ent = n;
		sc->cap = cap;
	}
	sc->ent[sc->n++] = *e;
	return 0;
}

/* Find sections, keys and their lines; reject what iniparser would accept
 * quietly or reject without a line number. */
static int scan_file(const char *path, struct scan *sc, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int rc = -errno;
		errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	char *buf = NULL;
	size_t cap = 0;
	unsigned line = 0;
	int rc = 0;
	struct scan_ent cur = {0};
	struct stat st;

	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: not a regular file (%s); give the path of a job file",
		     path, S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
		fclose(f);
		return -EINVAL;
	}

	ssize_t got;
	while ((got = getline(&buf, &cap, f)) >= 0) {
		line++;
		/* iniparser and str_trim stop at a NUL: the rest of the line
		 * (all of it, for a leading NUL) would vanish unseen. */
		size_t len = (size_t)got - (got && buf[got - 1] == '\n');
		if (len > QS_JOB_MAX_LINE) {
			errf(err, errlen, "%s:%u: line longer than %d characters (%zu)",
			     path, line, QS_JOB_MAX_LINE, len);
			rc = -EINVAL;
			break;
		}
		const char *nul = memchr(buf, 0, (size_t)got);
		if (nul) {
			errf(err, errlen, "%s:%u: NUL byte at column %zu; a job file "
			     "must be text", path, line, (size_t)(nul - buf) + 1);
			rc = -EINVAL;
			break;
		}
		str_trim(buf);
		if (!*buf || *buf == ';' || *buf == '#')
			continue;
		if (*buf == '[') {
			char *close = strchr(buf, ']');
			if (!close) {
				errf(err, errlen, "%s:%u: section header '%s' has no ']'",
				     path, line, buf);
				rc = -EINVAL;
				break;
			}
			/* iniparser drops what follows the ']' ([j] bs=64k loses
			 * bs), so a key there is refused, not ignored. */
			char *rest = close + 1;
			while (isspace((unsigned char)*rest))
				rest++;
			if (*rest) {
				errf(err, errlen, "%s:%u: '%s' follows the section header "
				     "'%.*s'; put it on a line of its own", path, line,
				     rest, (int)(close - buf + 1), buf);
				rc = -EINVAL;
				break;
			}
			*close = 0;
			memset(&cur, 0, sizeof(cur));
			snprintf(cur.secname, sizeof(cur.secname), "%s", buf + 1);
			str_trim(cur.secname);
			if (!*cur.secname || strlen(buf + 1) >= QS_JOB_NAME_MAX) {
				errf(err, errlen, "%s:%u: section name '%s': must be "
				     "1 to %d characters", path, line, buf + 1,
				     QS_JOB_NAME_MAX - 1);
				rc = -EINVAL;
				break;
			}
			snprintf(cur.sec, sizeof(cur.sec), "%s", cur.secname);
			str_lower(cur.sec);
			cur.line = line;
			for (size_t i = 0; i < sc->n; i++) {
				if (!sc->ent[i].key[0] && !strcmp(sc->ent[i].sec, cur.sec)) {
					errf(err, errlen, "%s:%u: section [%s] repeats the "
					     "one on line %u; job names must be unique",
					     path, line, cur.secname, sc->ent[i].line);
					rc = -EINVAL;
					goto out;
				}
			}
			rc = scan_push(sc, &cur);
			if (rc)
				break;
			continue;
		}
		char *eq = strchr(buf, '=');
		if (!eq && !strncasecmp(buf, "include", 7) &&
		    (!buf[7] || isspace((unsigned char)buf[7]))) {
			errf(err, errlen, "%s:%u: '%s': fio's include is not supported; "
			     "copy the sections of the included file into this one",
			     path, line, buf);
			rc = -EINVAL;
			break;
		}
		if (!eq) {
			errf(err, errlen, "%s:%u: '%s' has no value; write %s=1 for a "
			     "flag (key=value)", path, line, buf, buf);
			rc = -EINVAL;
			break;
		}
		if (!cur.sec[0]) {
			errf(err, errlen, "%s:%u: key '%.*s' is outside any section; "
			     "put it under [global] or a job", path, line,
			     (int)(eq - buf), buf);
			rc = -EINVAL;
			break;
		}
		struct scan_ent e = cur;
		*eq = 0;
		str_trim(buf);
		if (!*buf || strlen(buf) >= sizeof(e.key)) {
			errf(err, errlen, "%s:%u: key '%s': must be 1 to %zu characters",
			     path, line, buf, sizeof(e.key) - 1);
			rc = -EINVAL;
			break;
		}
		snprintf(e.key, sizeof(e.key), "%s", buf);
		str_lower(e.key);
		e.line = line;
		rc = scan_push(sc, &e);
		if (rc)
			break;
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		errf(err, errlen, "%s: read error", path);
	}
out:
	free(buf);
	fclose(f);
	return rc;
}

/* Apply every key of section sec, in file order. */
static int apply_section(struct job_build *b, const struct scan *sc,
			 const char *sec, dictionary *d, const char *path,
			 char *err, size_t errlen)
{
	for (size_t i = 0; i < sc->n; i++) {
		const struct scan_ent *e = &sc->ent[i];
		if (!e->key[0] || strcmp(e->sec, sec))
			continue;
		char full[QS_JOB_NAME_MAX + 80];
		snprintf(full, sizeof(full), "%s:%s", e->sec, e->key);
		const char *v = iniparser_getstring(d, full, "");
		const char *allowed = "";
		int rc = job_apply(b, e->key, v, e->line, &allowed);
		if (rc == -ENOENT) {
			errf(err, errlen, "%s:%u: [%s] unknown key '%s' (value '%s'); "
			     "see docs/BENCH-OUTPUT.md for the job options",
			     path, e->line, e->secname, e->key, v);
			return -EINVAL;
		}
		if (rc == -ENOMEM) {
			errf(err, errlen, "%s: out of memory", path);
			return rc;
		}
		if (rc) {
			errf(err, errlen, "%s:%u: [%s] key '%s' value '%s': allowed: %s",
			     path, e->line, e->secname, e->key, v, allowed);
			return -EINVAL;
		}
	}
	return 0;
}

/* Turn percentages into bytes and check that every clone's span fits. */
static int job_resolve(struct job_build *b, uint64_t capacity, bool runtime_given,
		       const char *path, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;

	if (b->offset.set)
		j->offset = b->offset.pct ?
			(uint64_t)((double)capacity * b->offset.pct_val / 100.0) / 4096 * 4096 :
			b->offset.bytes;
	if (j->offset >= capacity) {
		errf(err, errlen, "%s:%u: [%s] key 'offset' value %" PRIu64
		     ": allowed: below the capacity %" PRIu64 " bytes",
		     path, b->offset.line, j->name, j->offset, capacity);
		return -EINVAL;
	}
	if (j->trace && j->numjobs != 1) {
		errf(err, errlen, "%s:%u: [%s] key 'numjobs' value %u: allowed: 1 "
		     "for a trace job", path, b->line_numjobs ? b->line_numjobs : j->line,
		     j->name, j->numjobs);
		return -EINVAL;
	}
	uint64_t last = j->offset;
	if (j->numjobs > 1) {
		if (j->offset_increment &&
		    (j->numjobs - 1) > (capacity - j->offset) / j->offset_increment) {
			errf(err, errlen, "%s:%u: [%s] key 'offset_increment' value "
			     "%" PRIu64 ": allowed: offset + (numjobs - 1) * "
			     "offset_increment below the capacity %" PRIu64,
			     path, b->line_offset_inc, j->name, j->offset_increment,
			     capacity);
			return -EINVAL;
		}
		last += (uint64_t)(j->numjobs - 1) * j->offset_increment;
		if (last >= capacity) {
			errf(err, errlen, "%s:%u: [%s] key 'offset_increment' value "
			     "%" PRIu64 ": allowed: offset + (numjobs - 1) * "
			     "offset_increment below the capacity %" PRIu64,
			     path, b->line_offset_inc, j->name, j->offset_increment,
			     capacity);
			return -EINVAL;
		}
	}
	if (b->size.set)
		j->size = b->size.pct ?
			(uint64_t)((double)capacity * b->size.pct_val / 100.0) / 4096 * 4096 :
			b->size.bytes;
	else
		j->size = capacity - last; /* fio: the rest of the file */
	if (j->size > capacity - last) {
		errf(err, errlen, "%s:%u: [%s] key 'size' value %" PRIu64 ": allowed: "
		     "at most %" PRIu64 " (capacity %" PRIu64 " minus the last "
		     "clone's offset %" PRIu64 ")", path,
		     b->size.line ? b->size.line : j->line, j->name, j->size,
		     capacity - last, capacity, last);
		return -EINVAL;
	}
	if (!j->trace && j->size < j->bs) {
		errf(err, errlen, "%s:%u: [%s] key 'size' value %" PRIu64 ": allowed: "
		     "at least bs (%" PRIu64 ")", path,
		     b->size.line ? b->size.line : j->line, j->name, j->size, j->bs);
		return -EINVAL;
	}
	if (j->ss_dur_ns && j->ss == QS_SS_NONE) {
		errf(err, errlen, "%s:%u: [%s] key 'steadystate_duration' value %.9g s: allowed "
		     "only with a steadystate criterion (steadystate=iops_slope:0.5%%)", path,
		     b->line_ss_time, j->name, (double)j->ss_dur_ns / 1e9);
		return -EINVAL;
	}
	if (j->ss_dur_ns && (j->ss_dur_ns % j->ss_interval_ns ||
			     j->ss_dur_ns / j->ss_interval_ns < 2 ||
			     j->ss_dur_ns / j->ss_interval_ns > QS_JOB_SS_MAX_SAMPLES)) {
		errf(err, errlen, "%s:%u: [%s] key 'steadystate_duration' value %.9g s: allowed: "
		     "2 to %u times steadystate_check_interval (%.9g s), a whole number of them",
		     path, b->line_ss_time, j->name, (double)j->ss_dur_ns / 1e9,
		     QS_JOB_SS_MAX_SAMPLES, (double)j->ss_interval_ns / 1e9);
		return -EINVAL;
	}
	if (j->time_based && !j->runtime_ns && !runtime_given) {
		errf(err, errlen, "%s:%u: [%s] key 'time_based' value 1: allowed "
		     "only with a runtime above 0 (in the file or --runtime)", path, j->line,
		     j->name);
		return -EINVAL;
	}
	return 0;
}

unsigned qs_job_file_override(struct qs_job_file *f, uint64_t runtime_ns,
			      uint64_t ramp_ns, FILE *warn)
{
	unsigned cut = 0;
	for (size_t i = 0; i < f->njobs; i++) {
		struct qs_job *j = &f->jobs[i];
		if (runtime_ns != UINT64_MAX) {
			j->runtime_ns = runtime_ns;
			j->time_based = true;
		}
		if (ramp_ns != UINT64_MAX) {
			j->ramp_time_ns = ramp_ns;
		} else if (runtime_ns != UINT64_MAX && j->ramp_time_ns > runtime_ns) {
			if (warn)
				fprintf(warn, "%s:%u: [%s] key 'ramp_time' value %.9g s is "
					"longer than --runtime %.9g s: cut to %.9g s (give "
					"--ramp-time for another ramp)\n", f->path, j->line,
					j->name, (double)j->ramp_time_ns / 1e9,
					(double)runtime_ns / 1e9, (double)runtime_ns / 1e9);
			j->ramp_time_ns = runtime_ns;
			cut++;
		}
	}
	return cut;
}

void qs_job_file_free(struct qs_job_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->njobs; i++)
		free(f->jobs[i].trace);
	free(f->jobs);
	free(f->path);
	free(f);
}

static int quiet_ini_error(const char *fmt, ...)
{
	/* Syntax errors are found by scan_file with line numbers first. */
	(void)fmt;
	return 0;
}

/*
 * wait_for names the job to wait for; the bench runs a group of jobs on
 * one engine, so that job must be an earlier one of the same group (fio
 * has the same rule in effect: a stonewall between them would wait anyway).
 */
static int job_resolve_wait(struct job_build *b, const struct qs_job_file *f, const char *path,
			    char *err, size_t errlen)
{
	if (!b->wait_for[0])
		return 0;
	size_t k = f->njobs;
	while (k > 0 && strcmp(f->jobs[k - 1].name, b->wait_for))
		k--;
	const char *why = !k ? "no earlier job has that name" : NULL;
	for (size_t i = k; !why && i <= f->njobs; i++)
		if (i == f->njobs ? b->job.stonewall : f->jobs[i].stonewall)
			why = "a stonewall stands between the two jobs, so they do not run "
			      "together";
	if (why) {
		errf(err, errlen, "%s:%u: [%s] key 'wait_for' value '%s': allowed: the name of an "
		     "earlier job of the same group (%s)", path, b->line_wait_for, b->job.name,
		     b->wait_for, why);
		return -EINVAL;
	}
	b->job.wait_back = (unsigned)(f->njobs - (k - 1));
	return 0;
}

static int job_file_load_runtime(const char *path, uint64_t capacity, uint64_t runtime_ns,
				 struct qs_job_file **out, char *err, size_t errlen)
{
	struct scan sc = {0};
	struct qs_job_file *f = NULL;
	dictionary *d = NULL;
	int rc;

	*out = NULL;
	if (!capacity || capacity % 4096) {
		errf(err, errlen, "%s: capacity %" PRIu64 " must be a positive "
		     "multiple of 4096", path, capacity);
		return -EINVAL;
	}
	rc = scan_file(path, &sc, err, errlen);
	if (rc)
		goto out;
	iniparser_set_error_callback(quiet_ini_error);
	d = iniparser_load(path);
	iniparser_set_error_callback(NULL); /* back to the default for others */
	if (!d) {
		errf(err, errlen, "%s: iniparser could not read the file", path);
		rc = -EINVAL;
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path)) ||
	    !(f->jobs = calloc(sc.n ? sc.n : 1, sizeof(*f->jobs)))) {
		errf(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	f->capacity = capacity;
	for (size_t i = 0; i < sc.n; i++) {
		const struct scan_ent *e = &sc.ent[i];
		if (e->key[0] || !strcmp(e->sec, "global"))
			continue;
		struct job_build b;
		job_defaults(&b);
		snprintf(b.job.name, sizeof(b.job.name), "%s", e->secname);
		b.job.line = e->line;
		/* As in fio, [global] only shapes the jobs that follow it. */
		rc = 0;
		for (size_t g = 0; g < i; g++)
			if (!sc.ent[g].key[0] && !strcmp(sc.ent[g].sec, "global"))
				rc = apply_section(&b, &sc, "global", d, path, err, errlen);
		if (!rc)
			rc = apply_section(&b, &sc, e->sec, d, path, err, errlen);
		if (!rc)
			rc = job_resolve(&b, capacity, runtime_ns != UINT64_MAX, path, err,
					 errlen);
		if (!rc)
			rc = job_resolve_wait(&b, f, path, err, errlen);
		if (rc) {
			free(b.job.trace);
			goto out;
		}
		f->jobs[f->njobs++] = b.job;
	}
	if (!f->njobs) {
		errf(err, errlen, "%s: no job section (only [global] or nothing)",
		     path);
		rc = -EINVAL;
	}
out:
	if (d)
		iniparser_freedict(d);
	free(sc.ent);
	if (rc)
		qs_job_file_free(f);
	else
		*out = f;
	return rc;
}

int qs_job_file_load_runtime(const char *path, uint64_t capacity, uint64_t runtime_ns,
			     struct qs_job_file **out, char *err, size_t errlen)
{
	int rc = job_file_load_runtime(path, capacity, runtime_ns, out, err, errlen);
	if (rc < 0)
		qs_text_vis_msg(err, errlen); /* the file's bytes, quoted, as text */
	return rc;
}

int qs_job_file_load(const char *path, uint64_t capacity,
		     struct qs_job_file **out, char *err, size_t errlen)
{
	return qs_job_file_load_runtime(path, capacity, UINT64_MAX, out, err, errlen);
}
