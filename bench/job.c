/* SPDX-License-Identifier: MIT */
/*
 * Bench job files (see job.h). The file is read here, line by line, with
 * fio's syntax: [sections], key=value, bare flags (time_based), inline ';'
 * and '#' comments, include FILE and ${VAR}. iniparser (which reads the
 * daemon's config) cannot: it keeps no line numbers, takes a bare key for
 * an empty value, and knows neither include nor ${VAR}.
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

#include "job.h"
#include "workload.h"
#include "host/text.h"

#define NS_PER_S 1000000000ull

/* One "key = value" line, bare option or section header found by the
 * scanner. */
struct scan_ent {
	char sec[QS_JOB_NAME_MAX]; /* lowercased (fio's names are case-blind) */
	char key[64];		   /* lowercased; "" for a section header */
	char secname[QS_JOB_NAME_MAX]; /* header as written (job name) */
	char *val;		   /* owned; NULL for a bare option or a header */
	const char *file;	   /* the file the line is in (owned by the scan) */
	unsigned line;
};

struct scan {
	struct scan_ent *ent;
	size_t n, cap;
	char **files; /* every file read, the job file and its includes */
	size_t nfiles;
};

/* A size or offset that may be a percentage of the capacity. */
struct pct_size {
	bool set, pct;
	double pct_val;
	uint64_t bytes;
	unsigned line; /* where it was last set, for errors after resolving */
	const char *file;
};

struct job_build {
	struct qs_job job;
	unsigned kb_base;
	struct pct_size size, offset;
	unsigned line_numjobs, line_offset_inc, line_bs, line_cols;
	const char *file_cols;
	char why[400]; /* a key's reason that depends on its value */
	const char *file_bs, *key_bs; /* where the sizes were set, and by which key */
	uint64_t align[QS_JOB_DIRS];  /* fio's blockalign per direction; 0: not set */
	unsigned line_flow;	      /* where flow was set */
	const char *file_flow;
	unsigned line_align;
	const char *file_align;
	char wait_for[QS_JOB_NAME_MAX]; /* wait_for's job name ("" none) */
	unsigned line_wait_for;
	unsigned line_ss, line_ss_time;
	struct pct_size filesize, io_size;
	uint64_t loops;
	bool fill_device;
	bool rate_set;	      /* fio's rate: bytes/s for reads, writes, trims */
	uint64_t rate[QS_JOB_DIRS];
	/* fio's rate_iops=R,W[,T] with more than one field: per direction */
	bool riops_set;
	uint64_t riops[QS_JOB_DIRS];
	unsigned line_rate, line_dist, line_zone;
	bool strided; /* zonemode=strided */
	/* the files of the lines above that errors after the load name (an
	 * included file's line is in that file) */
	const char *file, *sec_file; /* the entry being applied; the section's */
	const char *file_numjobs, *file_offset_inc, *file_wait_for, *file_ss_time,
		*file_rate, *file_dist, *file_zone;
	uint64_t offset_align; /* fio's offset_align: bytes, 0 = none */
	bool end_fsync, fsync_on_close; /* as set: either flushes at the end */
	const char *key_sync, *file_sync; /* the last of the sync family set on */
	unsigned line_sync;
	bool zones_abs;	      /* zoned_abs: zone sizes in bytes, else in % */
	double zone_size[QS_JOB_ZONES_MAX]; /* % of size or bytes; < 0: the rest */
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

double qs_job_mean_bs(const struct qs_job *j, int dir)
{
	const struct qs_job_bss *e = j->bss[dir];
	if (!j->nbss[dir])
		return (double)j->bs;
	double m = 0;
	for (unsigned i = 0; i < j->nbss[dir]; i++) {
		uint64_t cnt = e[i].hi / e[i].lo; /* sizes lo, 2 lo, ... cnt lo */
		double lo = (double)(e[i].req ? e[i].req : e[i].lo);
		m += e[i].pct / 100.0 * lo * (double)(cnt + 1) / 2.0;
	}
	return m;
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
	case QS_RW_TRIM: return "trim";
	case QS_RW_RANDTRIM: return "randtrim";
	case QS_RW_TRIMWRITE: return "trimwrite";
	case QS_RW_RANDTRIMWRITE: return "randtrimwrite";
	}
	return "?";
}

bool qs_job_rw_random(enum qs_job_rw rw)
{
	return rw == QS_RW_RANDREAD || rw == QS_RW_RANDWRITE || rw == QS_RW_RANDRW ||
	       rw == QS_RW_RANDTRIM || rw == QS_RW_RANDTRIMWRITE;
}

bool qs_job_trims(const struct qs_job *j)
{
	return j->trace || j->rw == QS_RW_TRIM || j->rw == QS_RW_RANDTRIM ||
	       j->rw == QS_RW_TRIMWRITE || j->rw == QS_RW_RANDTRIMWRITE;
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
	case QS_RW_TRIMWRITE:
	case QS_RW_RANDTRIMWRITE:
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
		{"randrw", QS_RW_RANDRW}, {"trim", QS_RW_TRIM}, {"randtrim", QS_RW_RANDTRIM},
		{"trimwrite", QS_RW_TRIMWRITE}, {"randtrimwrite", QS_RW_RANDTRIMWRITE},
	};
	*allowed = "read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, "
		   "trimwrite, randtrimwrite; with fio's :N, for sequential ones a size "
		   "(multiple of 4k, may be negative) skipped after every I/O, for random "
		   "ones a new offset every N I/Os";
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	size_t i;
	for (i = 0; i < sizeof(rws) / sizeof(rws[0]); i++)
		if (strlen(rws[i].name) == n && !strncasecmp(v, rws[i].name, n))
			break;
	if (i == sizeof(rws) / sizeof(rws[0]))
		return -EINVAL;
	enum qs_job_rw rw = rws[i].rw;
	bool random = qs_job_rw_random(rw);
	int64_t skip = 0;
	uint64_t nr = 1;
	if (colon && random) {
		if (parse_uint(colon + 1, 1, UINT32_MAX, &nr))
			return -EINVAL;
	} else if (colon) {
		const char *m = colon + 1;
		bool neg = *m == '-';
		uint64_t u;
		if (qs_job_parse_size(m + neg, b->kb_base, &u) || u % 4096 || u > (1ull << 50))
			return -EINVAL;
		skip = neg ? -(int64_t)u : (int64_t)u;
	}
	b->job.rw = rw;
	b->job.seq_skip = skip;
	b->job.rand_seq_nr = nr;
	return 0;
}

/*
 * One block size of bs, bsrange or bssplit into *out: a multiple of 4 KiB
 * up to 16 MiB. With req not NULL also a multiple of 512 bytes (fio's
 * sector), which the engine's 4 KiB blocks cannot carry as it is: *out is
 * then the size rounded up to whole blocks and *req the size asked for
 * (0 when it was whole blocks already), so that the rounding is reported.
 * 0 or -EINVAL.
 */
static int parse_bs(const char *v, unsigned kb_base, uint64_t *out, uint64_t *req)
{
	uint64_t u;
	if (qs_job_parse_size(v, kb_base, &u) || !u || u > (16u << 20) ||
	    u % (req ? 512 : 4096))
		return -EINVAL;
	*out = (u + 4095) / 4096 * 4096;
	if (req)
		*req = u % 4096 ? u : 0;
	return 0;
}

/* Split v at commas into at most 3 trimmed fields of buf (fio's
 * reads,writes,trims); the count of fields, or -EINVAL. fio's rule for
 * the missing ones: a direction without a field takes the last field. */
static int split_dirs(const char *v, char *buf, size_t len, char *f[3])
{
	if (strlen(v) >= len)
		return -EINVAL;
	snprintf(buf, len, "%s", v);
	int n = 1;
	f[0] = buf;
	f[1] = f[2] = NULL;
	for (char *c = buf; (c = strchr(c, ',')); n++) {
		if (n == 3)
			return -EINVAL;
		*c++ = 0;
		f[n] = c;
	}
	for (int i = 0; i < n; i++)
		str_trim(f[i]);
	return n;
}

/* What parse_dirs reads in each field. */
enum dir_kind {
	DIR_BS,	  /* a block size (parse_bs) */
	DIR_SIZE, /* any size (rate's bytes/s) */
	DIR_PCT,  /* an integer percentage 0..100 */
	DIR_IOPS, /* I/Os per second, 0..1e8 (rate_iops) */
};

/*
 * fio's per-direction values R[,W[,T]] into u[0] (reads), u[1] (writes),
 * u[2] (trims), fio's rule: a direction without a field takes the last
 * one (bs=4k,8k: trims 8k), an empty field keeps u's value (bs=4k,8k,).
 * DIR_BS also gives each size asked for into req (parse_bs). Fields, or
 * -EINVAL.
 */
static int parse_dirs(const char *v, unsigned kb_base, enum dir_kind kind,
		      uint64_t u[QS_JOB_DIRS], uint64_t req[QS_JOB_DIRS])
{
	char buf[128], *f[3];
	int n = split_dirs(v, buf, sizeof(buf), f);
	if (n < 1 || (n == 1 && !*f[0]))
		return -EINVAL;
	for (int i = 0; i < QS_JOB_DIRS; i++) {
		const char *fld = f[i < n ? i : n - 1];
		if (!*fld)
			continue;
		if (kind == DIR_BS     ? parse_bs(fld, kb_base, &u[i], &req[i])
		    : kind == DIR_SIZE ? qs_job_parse_size(fld, kb_base, &u[i])
		    : kind == DIR_IOPS ? parse_uint(fld, 0, 100000000, &u[i])
				       : parse_uint(fld, 0, 100, &u[i]))
			return -EINVAL;
	}
	return n;
}

static const char *bs_allowed(const struct job_build *b)
{
	/* With kb_base=1000, 4k is 4000 bytes: the range is said in bytes
	 * and KiB, which mean the same under either base. */
	return b->kb_base == 1000
		       ? "a multiple of 512 bytes from 512 to 16777216 (16MiB; with "
			 "kb_base=1000, 4k is 4000 bytes: write 4KiB or 4096), or R,W[,T] for "
			 "reads, writes and trims; a size that is not whole 4 KiB blocks "
			 "(the simulated drive's) is rounded up to them, reported as rounding"
		       : "a multiple of 512 bytes from 512 to 16m, or R,W[,T] for reads, "
			 "writes and trims; a size that is not whole 4 KiB blocks (the "
			 "simulated drive's) is rounded up to them, reported as rounding";
}

/* bs (blocksize): one size, or R,W[,T] per direction (fio's rule for the
 * missing and empty fields, parse_dirs); one entry per direction when
 * they differ or a size is rounded */
static int job_key_bs(struct job_build *b, const char *key, const char *v, unsigned line,
		      const char **allowed)
{
	uint64_t u[QS_JOB_DIRS] = {4096, 4096, 4096}, req[QS_JOB_DIRS] = {0};
	*allowed = bs_allowed(b);
	if (parse_dirs(v, b->kb_base, DIR_BS, u, req) < 0)
		return -EINVAL;
	struct qs_job *j = &b->job;
	bool one = u[0] == u[1] && u[1] == u[2] && !req[0] && !req[1] && !req[2];
	for (int d = 0; d < QS_JOB_DIRS; d++) {
		j->bss[d][0] = (struct qs_job_bss){u[d], u[d], 100, req[d]};
		j->nbss[d] = one ? 0 : 1;
	}
	if (one)
		j->bs = u[0];
	b->line_bs = line;
	b->file_bs = b->file;
	b->key_bs = key;
	return 0;
}

/* bsrange (blocksize_range): LO-HI[,LO-HI[,LO-HI]] per direction */
static int job_key_bsrange(struct job_build *b, const char *key, const char *v, unsigned line,
			   const char **allowed)
{
	char buf[128], *f[3];
	*allowed = "LO-HI, or LO-HI,LO-HI[,LO-HI] (reads, writes, trims): sizes that are "
		   "multiples of 4k from 4k to 16m, LO at most HI (the simulated drive's "
		   "block is 4 KiB)";
	int n = split_dirs(v, buf, sizeof(buf), f);
	if (n < 1)
		return -EINVAL;
	struct qs_job_bss r[QS_JOB_DIRS];
	for (int i = 0; i < QS_JOB_DIRS; i++) {
		char *fld = f[i < n ? i : n - 1];
		char *dash = strchr(fld, '-');
		if (!dash)
			return -EINVAL;
		*dash = 0;
		int bad = parse_bs(fld, b->kb_base, &r[i].lo, NULL) ||
			  parse_bs(dash + 1, b->kb_base, &r[i].hi, NULL) || r[i].lo > r[i].hi;
		*dash = '-';
		if (bad)
			return -EINVAL;
		r[i].pct = 100;
		r[i].req = 0;
	}
	for (int d = 0; d < QS_JOB_DIRS; d++) {
		b->job.bss[d][0] = r[d];
		b->job.nbss[d] = 1;
	}
	b->line_bs = line;
	b->file_bs = b->file;
	b->key_bs = key;
	return 0;
}

/* One direction's bssplit list SIZE/PCT:SIZE/PCT... into e (k entries);
 * a PCT left empty shares what the others leave. 0 or -EINVAL. */
static int bssplit_list(const char *list, unsigned kb_base, struct qs_job_bss *e, unsigned *k)
{
	char tmp[QS_JOB_MAX_LINE + 1];
	snprintf(tmp, sizeof(tmp), "%s", list);
	unsigned n = 0, empty = 0;
	double sum = 0;
	for (char *save = NULL, *x = strtok_r(tmp, ":", &save); x; x = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(x, '/'), *end;
		if (n == QS_JOB_BSS_MAX)
			return -EINVAL;
		if (slash)
			*slash = 0;
		uint64_t sz, req;
		if (parse_bs(x, kb_base, &sz, &req))
			return -EINVAL;
		double pct = -1;
		if (slash && slash[1]) {
			pct = strtod(slash + 1, &end);
			if (end == slash + 1 || *end || !(pct >= 0 && pct <= 100))
				return -EINVAL;
			sum += pct;
		} else {
			empty++;
		}
		e[n++] = (struct qs_job_bss){sz, sz, pct, req};
	}
	if (!n || sum > 100 + 1e-6 || (!empty && fabs(sum - 100) > 1e-6))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (e[i].pct < 0)
			e[i].pct = (100 - sum) / empty;
	*k = n;
	return 0;
}

/* bssplit: a list for every direction, or one per direction split by ','
 * (fio's rule: trims without a list take the writes'; an empty list here
 * takes the first) */
static int job_key_bssplit(struct job_build *b, const char *key, const char *v, unsigned line,
			   const char **allowed)
{
	char buf[QS_JOB_MAX_LINE + 1], *f[3];
	*allowed = "SIZE/PCT:SIZE/PCT... (one list for every direction, or up to three "
		   "split by ',' for reads, writes, trims), sizes multiples of 512 from 512 "
		   "to 16m (one that is not whole 4 KiB blocks, the simulated drive's, is "
		   "rounded up to them, reported as rounding), the PCT of a list summing to "
		   "100 (an empty PCT shares the rest)";
	int n = split_dirs(v, buf, sizeof(buf), f);
	if (n < 1)
		return -EINVAL;
	struct qs_job *j = &b->job;
	for (int d = 0; d < QS_JOB_DIRS; d++) {
		const char *list = d >= n ? f[n - 1] : *f[d] ? f[d] : f[0];
		if (bssplit_list(list, b->kb_base, j->bss[d], &j->nbss[d]))
			return -EINVAL;
	}
	b->line_bs = line;
	b->file_bs = b->file;
	b->key_bs = key;
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

/* iodepth, numjobs, rate_iops, loops, number_ios: one integer in a range each */
static int job_key_count(struct job_build *b, const char *key, const char *v, unsigned line,
			 const char **allowed)
{
	static const struct {
		const char *key, *allowed;
		uint64_t min, max;
	} k[] = {
		{"iodepth", "an integer from 1 to 65536", 1, 65536},
		{"numjobs", "an integer from 1 to 1024", 1, 1024},
		{"rate_iops", "an integer from 0 (unrated) to 100000000, one value for reads "
			      "and writes together, or R,W[,T] for each", 0, 100000000},
		{"loops", "an integer from 1 to 1000000000", 1, 1000000000},
		{"number_ios", "an integer from 0 (no limit) to 10^15", 0, 1000000000000000ull},
		{"thinktime_blocks", "an integer from 1 to 1000000000", 1, 1000000000},
	};
	size_t i = 0;
	while (strcmp(key, k[i].key))
		i++;
	uint64_t u;
	*allowed = k[i].allowed;
	if (parse_uint(v, k[i].min, k[i].max, &u))
		return -EINVAL;
	switch (i) {
	case 0: b->job.iodepth = (unsigned)u; break;
	case 1: b->job.numjobs = (unsigned)u; b->line_numjobs = line; b->file_numjobs = b->file; break;
	case 2: b->job.rate_iops = (double)u; break;
	case 3: b->loops = u; break;
	case 4: b->job.number_ios = u; break;
	default: b->job.thinktime_blocks = u; b->job.thinktime_blocks_set = true; break;
	}
	return 0;
}

/* percentage_random: R[,W[,T]] percentages */
static int job_key_pct_random(struct job_build *b, const char *key, const char *v,
			      unsigned line, const char **allowed)
{
	uint64_t u[QS_JOB_DIRS] = {100, 100, 100};
	*allowed = "R[,W[,T]]: integer percentages from 0 (sequential) to 100 (all random), "
		   "for reads, writes and trims (one value: all)";
	if (parse_dirs(v, b->kb_base, DIR_PCT, u, NULL) < 0)
		return -EINVAL;
	for (int d = 0; d < QS_JOB_DIRS; d++)
		b->job.pct_seq[d] = 100 - (unsigned)u[d];
	return 0;
}

/* fio's rate_iops: one value paces the clone's I/Os together (the bench's
 * rule, job_key_count); R,W[,T] paces each direction at its own */
static int job_key_rate_iops(struct job_build *b, const char *key, const char *v,
			     unsigned line, const char **allowed)
{
	b->riops_set = false;
	if (!strchr(v, ','))
		return job_key_count(b, key, v, line, allowed);
	*allowed = "an integer from 0 (unrated) to 100000000, one value for reads and writes "
		   "together, or R,W[,T] for each";
	uint64_t r[QS_JOB_DIRS] = {0, 0, 0};
	if (parse_dirs(v, b->kb_base, DIR_IOPS, r, NULL) < 0)
		return -EINVAL;
	memcpy(b->riops, r, sizeof(r));
	b->riops_set = true;
	b->job.rate_iops = 0;
	b->line_rate = line;
	b->file_rate = b->file;
	return 0;
}

/* fio's rate: bytes/s for reads[,writes[,trims]]; an empty field keeps
 * that direction unrated, one value rates both */
static int job_key_rate(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	*allowed = "R[,W[,T]]: bytes per second (suffixes k, m, g...) for reads, writes "
		   "and trims (one value: all; an empty field: unrated)";
	uint64_t r[QS_JOB_DIRS] = {0, 0, 0};
	if (parse_dirs(v, b->kb_base, DIR_SIZE, r, NULL) < 0)
		return -EINVAL;
	memcpy(b->rate, r, sizeof(r));
	b->rate_set = r[0] || r[1] || r[2];
	b->line_rate = line;
	b->file_rate = b->file;
	return 0;
}

/* size, offset, filesize, io_size (io_limit): a size or a percentage of the
 * capacity */
static int job_key_span(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct pct_size *ps = !strcmp(key, "size")     ? &b->size
			      : !strcmp(key, "offset")   ? &b->offset
			      : !strcmp(key, "filesize") ? &b->filesize
							 : &b->io_size;
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
	if (ps != &b->offset && !ps->pct && !ps->bytes)
		return -EINVAL;
	ps->line = line;
	ps->file = b->file;
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
	b->file_offset_inc = b->file;
	return 0;
}

/* random_distribution=zoned:A/S:A/S... or zoned_abs:A/SIZE:...: A the share
 * of random I/Os in percent, S the zone's share of size in percent (zoned)
 * or its size (zoned_abs); the last S may be empty for the rest. */
static int job_key_zoned(struct job_build *b, const char *v, bool abs, const char **allowed)
{
	*allowed = abs ? "zoned_abs:A/SIZE:A/SIZE... (A: percent of the random I/Os, the "
			 "A summing to 100; SIZE a multiple of bs, the last may be empty: "
			 "the rest of size)"
		       : "zoned:A/S:A/S... (A: percent of the random I/Os, S: percent of "
			 "size, each summing to 100; the last S may be empty: the rest)";
	char buf[QS_JOB_MAX_LINE + 1];
	snprintf(buf, sizeof(buf), "%s", v);
	double acc_sum = 0;
	unsigned n = 0;
	for (char *save = NULL, *z = strtok_r(buf, ":", &save); z; z = strtok_r(NULL, ":", &save)) {
		char *slash = strchr(z, '/'), *end;
		if (!slash || n == QS_JOB_ZONES_MAX)
			return -EINVAL;
		*slash = 0;
		double a = strtod(z, &end);
		if (end == z || *end || !(a > 0 && a <= 100))
			return -EINVAL;
		double size = -1;
		const char *sz = slash + 1;
		if (*sz && abs) {
			uint64_t u;
			if (qs_job_parse_size(sz, b->kb_base, &u) || !u || u % 4096)
				return -EINVAL;
			size = (double)u;
		} else if (*sz) {
			size = strtod(sz, &end);
			if (end == sz || (*end && strcmp(end, "%")) || !(size > 0 && size <= 100))
				return -EINVAL;
		} else if (save && *save) {
			return -EINVAL; /* only the last zone takes the rest */
		}
		b->job.zones[n].access_pct = a;
		b->zone_size[n++] = size;
		acc_sum += a;
	}
	if (!n || fabs(acc_sum - 100) > 1e-6)
		return -EINVAL;
	b->job.nzones = n;
	b->zones_abs = abs;
	b->job.dist = QS_DIST_ZONED;
	b->job.dist_param = 0;
	return 0;
}

/* random_distribution: NAME[:PARAM], PARAM checked per distribution */
static int job_key_dist(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct qs_job *j = &b->job;
	b->line_dist = line;
	b->file_dist = b->file;
	if (!strncasecmp(v, "zoned:", 6))
		return job_key_zoned(b, v + 6, false, allowed);
	if (!strncasecmp(v, "zoned_abs:", 10))
		return job_key_zoned(b, v + 10, true, allowed);
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	double p = NAN;
	j->nzones = 0;
	*allowed = "random, zipf[:theta] (theta > 0, not 1; default 1.1), "
		   "pareto[:h] (0 < h < 1; default 0.2), normal:dev (dev in percent of the "
		   "span, above 0, at most 100), zoned:A/S:..., zoned_abs:A/SIZE:...";
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
	} else if (n == 6 && !strncasecmp(v, "normal", n)) {
		if (!colon || !(p > 0 && p <= 100))
			return -EINVAL;
		j->dist = QS_DIST_NORMAL;
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

/* norandommap, time_based, stonewall, trace_ignore_time, fill_device */
static int job_key_bool(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct qs_job *j = &b->job;
	bool bv;
	*allowed = "0 or 1 (also true/false, yes/no, on/off)";
	if (parse_bool(v, &bv))
		return -EINVAL;
	if (key[0] == 'f')
		b->fill_device = bv;
	else if (key[0] == 'n')
		j->norandommap = bv;
	else if (key[0] == 's')
		j->stonewall = bv;
	else if (key[1] == 'i')
		j->time_based = bv;
	else
		j->trace_ignore_time = bv;
	return 0;
}

/* fio's reporting options: group_reporting and new_group (flags), and
 * unified_rw_reporting (none, mixed, both, or fio's 0, 1, 2) */
static int job_key_report(struct job_build *b, const char *key, const char *v, unsigned line,
			  const char **allowed)
{
	static const char *const unified[] = {"none", "mixed", "both"};
	struct qs_job *j = &b->job;
	bool bv;
	if (strcmp(key, "unified_rw_reporting")) {
		*allowed = "0 or 1 (also true/false, yes/no, on/off)";
		if (parse_bool(v, &bv))
			return -EINVAL;
		*(key[0] == 'g' ? &j->group_reporting : &j->new_group) = bv;
		return 0;
	}
	*allowed = "none, mixed or both (fio's 0, 1, 2)";
	for (unsigned i = 0; i < 3; i++) {
		if (!strcasecmp(v, unified[i]) || (v[0] == (char)('0' + i) && !v[1])) {
			j->unified = (enum qs_report_unified)i;
			return 0;
		}
	}
	return -EINVAL;
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
	*(!strcmp(key, "runtime") || !strcmp(key, "timeout") ? &b->job.runtime_ns
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
	if (dur || itv) {
		b->line_ss_time = line;
		b->file_ss_time = b->file;
	}
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

/*
 * fio's engines that move blocks (sync, libaio, io_uring, sg, rbd, nbd,
 * ...) run on the bench's own, with no effect, and so does null (fio's
 * examples use it to show an access pattern, zipf.fio, which the bench
 * runs on the drive); those whose I/O is not a drive's are refused, each
 * with what it does instead.
 */
static const struct {
	const char *name, *why;
} job_engines_refused[] = {
	{"cpuio", "fio's cpuio engine burns CPU: it has no I/O for the bench to simulate"},
	{"net", "fio's net engine moves data over a network, not to a drive"},
	{"netsplice", "fio's netsplice engine moves data over a network, not to a drive"},
	{"rdma", "fio's rdma engine moves data between hosts' memory, not to a drive"},
	{"exec", "fio's exec engine runs a program: no I/O for the bench to simulate"},
	{"e4defrag", "fio's e4defrag engine is ext4's online defragmentation, a file system's work"},
	{"filecreate", "fio's filecreate engine creates files: metadata, no block I/O"},
	{"filestat", "fio's filestat engine stats files: metadata, no block I/O"},
	{"filedelete", "fio's filedelete engine deletes files: metadata, no block I/O"},
	{"ftruncate", "fio's ftruncate engine changes file sizes: no block I/O"},
	{"falloc", "fio's falloc engine allocates file space: no data written"},
};

static int job_key_ioengine(struct job_build *b, const char *key, const char *v, unsigned line,
			    const char **allowed)
{
	(void)b, (void)key, (void)line;
	for (size_t i = 0; i < sizeof(job_engines_refused) / sizeof(job_engines_refused[0]); i++)
		if (!strcmp(v, job_engines_refused[i].name)) {
			*allowed = job_engines_refused[i].why;
			return -ENOTSUP;
		}
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
	b->job.trace_file = b->file;
	b->job.trace_line = line;
	return 0;
}

/* fio's name: the name fio prints for the job (its JSON's jobname); the
 * bench's tables keep the section's name, which is unique in a file */
static int job_key_name(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	(void)key;
	*allowed = "a name of 1 to 63 characters";
	if (!*v || strlen(v) >= sizeof(b->job.fio_name))
		return -EINVAL;
	snprintf(b->job.fio_name, sizeof(b->job.fio_name), "%s", v);
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
	b->file_wait_for = b->file;
	return 0;
}

static int job_key_trace_format(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	*allowed = "auto, mqsim, msr, iolog, blktrace, blkparse, libcachesim, csv";
	return qs_trace_format_parse(v, &b->job.trace_format);
}

/* trace_columns: the column map of a csv trace */
static int job_key_trace_columns(struct job_build *b, const char *key, const char *v,
				 unsigned line, const char **allowed)
{
	char why[sizeof(b->why) - 120];
	int rc = qs_trace_columns_parse(v, &b->job.trace_cols, why, sizeof(why));
	snprintf(b->why, sizeof(b->why), "FIELD:COLUMN[:UNIT],... with op, offset, size (and "
		 "time) as docs/BENCH-OUTPUT.md, Traces, says; here: %s", why);
	*allowed = b->why;
	b->line_cols = line;
	b->file_cols = b->file;
	return rc;
}

static int job_key_timescale(struct job_build *b, const char *key, const char *v,
			     unsigned line, const char **allowed)
{
	char *end;
	*allowed = "a number above 0 and at most 1e12 (1 = time stamps as they are, 0.5 = "
		   "twice as fast, 1e9 = stamps in seconds taken as nanoseconds)";
	double d = strtod(v, &end);
	if (end == v || *end || !(d > 0 && d <= QS_TRACE_MAX_SCALE))
		return -EINVAL;
	b->job.trace_timescale = d;
	return 0;
}

/* fio's write_iolog: where the run logs the I/O it issues */
static int job_key_write_iolog(struct job_build *b, const char *key, const char *v,
			       unsigned line, const char **allowed)
{
	*allowed = "a path for the iolog (relative to the current directory)";
	if (!*v)
		return -EINVAL;
	char *p = strdup(v);
	if (!p)
		return -ENOMEM;
	free(b->job.write_iolog);
	b->job.write_iolog = p;
	return 0;
}

/* fio's replay_time_scale: the trace's rate in percent of its own (50:
 * half as fast, 200: twice), as trace_timescale's factor on its times */
static int job_key_replay_time(struct job_build *b, const char *key, const char *v,
			       unsigned line, const char **allowed)
{
	uint64_t u;
	*allowed = "an integer percentage from 1 to 1000000000 of the trace's rate (100: as "
		   "recorded, 200: twice as fast)";
	if (parse_uint(v, 1, 1000000000, &u))
		return -EINVAL;
	b->job.trace_timescale = 100.0 / (double)u;
	return 0;
}

/* fio's replay_scale (an integer factor) and replay_align (a power of 2,
 * in bytes, fio's sizes) */
static int job_key_replay_off(struct job_build *b, const char *key, const char *v,
			      unsigned line, const char **allowed)
{
	uint64_t u;
	if (!strcmp(key, "replay_scale")) {
		*allowed = "an integer from 1 to 1000000000: the trace's offsets divided by it";
		if (parse_uint(v, 1, 1000000000, &u))
			return -EINVAL;
		b->job.replay_scale = u;
		return 0;
	}
	*allowed = "a power of 2 (512, 4k, 64k...): the trace's offsets aligned down to it";
	if (qs_job_parse_size(v, b->kb_base, &u) || !u || (u & (u - 1)))
		return -EINVAL;
	b->job.replay_align = u;
	return 0;
}

/* fio's replay_skip: read, write, trim, flush (or sync), separated by ',' */
static int job_key_replay_skip(struct job_build *b, const char *key, const char *v,
			       unsigned line, const char **allowed)
{
	static const struct {
		const char *name;
		unsigned op;
	} k[] = {{"read", QS_IO_READ}, {"write", QS_IO_WRITE}, {"trim", QS_IO_TRIM},
		 {"flush", QS_IO_SYNC}, {"sync", QS_IO_SYNC}};
	char buf[128];
	*allowed = "read, write, trim and flush (or sync), separated by ','";
	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	unsigned mask = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		str_trim(t);
		size_t i = 0;
		while (i < sizeof(k) / sizeof(k[0]) && strcasecmp(t, k[i].name))
			i++;
		if (i == sizeof(k) / sizeof(k[0]))
			return -EINVAL;
		mask |= 1u << k[i].op;
	}
	if (!mask)
		return -EINVAL;
	b->job.replay_skip = mask;
	return 0;
}

/* blockalign (ba): fio's boundary of random offsets, R[,W[,T]]; checked
 * once the job's sizes are known (job_resolve_align) */
static int job_key_blockalign(struct job_build *b, const char *key, const char *v,
			      unsigned line, const char **allowed)
{
	uint64_t u[QS_JOB_DIRS] = {0, 0, 0};
	*allowed = "R[,W[,T]]: sizes, multiples of 4k";
	if (parse_dirs(v, b->kb_base, DIR_SIZE, u, NULL) < 0)
		return -EINVAL;
	for (int d = 0; d < QS_JOB_DIRS; d++)
		if (u[d] % 4096)
			return -EINVAL;
	memcpy(b->align, u, sizeof(u));
	b->line_align = line;
	b->file_align = b->file;
	return 0;
}

/* nrfiles: fio's files per job; the bench's job works on one span, as
 * with one file */
static int job_key_nrfiles(struct job_build *b, const char *key, const char *v, unsigned line,
			   const char **allowed)
{
	uint64_t u;
	*allowed = "1 (a job works on one span of the simulated drive, as on one file)";
	return parse_uint(v, 1, 1, &u);
}

/* A time of at most max ns into *out, bare numbers in unit_ns: 0, or
 * -EINVAL (not a time, or above max). */
static int job_time_upto(const char *v, uint64_t unit_ns, uint64_t max, uint64_t *out)
{
	uint64_t u;
	if (qs_job_parse_time(v, unit_ns, &u) || u > max)
		return -EINVAL;
	*out = u;
	return 0;
}

/* thinktime (and thinktime_spin, its busy part in fio, which a simulated
 * clone spends waiting alike): a time, bare numbers in microseconds */
static int job_key_think(struct job_build *b, const char *key, const char *v, unsigned line,
			 const char **allowed)
{
	uint64_t u;
	*allowed = "a time up to 1 hour: microseconds, or a number with us, ms, s";
	if (job_time_upto(v, 1000, 3600 * NS_PER_S, &u))
		return -EINVAL;
	if (!strcmp(key, "thinktime"))
		b->job.thinktime_ns = u;
	return 0;
}

/* fio's thinktime_iotime: a time, bare numbers in seconds (fio's unit) */
static int job_key_think_iotime(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	*allowed = "a time up to 1 day: seconds, or a number with us, ms, s, m, h (0: none)";
	return job_time_upto(v, NS_PER_S, 86400 * NS_PER_S, &b->job.thinktime_iotime_ns);
}

/* fio's latency profile: latency_target and latency_window (times, bare
 * numbers in microseconds, fio's unit), latency_percentile (a float from 0
 * to 100), latency_run (a bool) */
static int job_key_latency(struct job_build *b, const char *key, const char *v,
			   unsigned line, const char **allowed)
{
	struct qs_job *j = &b->job;
	char *end;
	switch (key[8]) {
	case 't':
		*allowed = "a time up to 1 hour: microseconds, or a number with us, ms, s (0: none)";
		return job_time_upto(v, 1000, 3600 * NS_PER_S, &j->lat_target_ns);
	case 'w':
		*allowed = "a time up to 1 hour: microseconds, or a number with us, ms, s";
		return job_time_upto(v, 1000, 3600 * NS_PER_S, &j->lat_window_ns);
	case 'p':
		*allowed = "a number from 0 to 100 (percent of the window's I/Os)";
		j->lat_pct = strtod(v, &end);
		if (end == v || *end || !(j->lat_pct >= 0 && j->lat_pct <= 100))
			return -EINVAL;
		return 0;
	default:
		*allowed = "0 or 1 (also true/false, yes/no, on/off)";
		return parse_bool(v, &j->lat_run) ? -EINVAL : 0;
	}
}

/* fio's flow (a weight, 0..1000), flow_id (the flow's number) and
 * flow_sleep (microseconds a held clone waits before it looks again) */
static int job_key_flow(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	uint64_t u;
	struct qs_job *j = &b->job;
	if (!strcmp(key, "flow_sleep")) {
		*allowed = "a time up to 1 hour: microseconds, or a number with us, ms, s";
		if (qs_job_parse_time(v, 1000, &u) || u > 3600 * NS_PER_S)
			return -EINVAL;
		j->flow_sleep_ns = u;
		return 0;
	}
	bool weight = !strcmp(key, "flow");
	*allowed = weight ? "an integer weight from 0 (no flow control) to 1000 (fio 3.33's)"
			  : "an integer from 0 to 4294967295";
	if (parse_uint(v, 0, weight ? 1000 : UINT32_MAX, &u))
		return -EINVAL;
	*(weight ? &j->flow : &j->flow_id) = (unsigned)u;
	b->line_flow = weight ? line : b->line_flow;
	b->file_flow = weight ? b->file : b->file_flow;
	return 0;
}

/* zonemode: none, or strided (zonesize, zoneskip); zbd is refused */
static int job_key_zonemode(struct job_build *b, const char *key, const char *v, unsigned line,
			    const char **allowed)
{
	*allowed = "none or strided (zonemode=zbd is not simulated: the simulated QLC drive "
		   "is a conventional one)";
	if (strcasecmp(v, "none") && strcasecmp(v, "strided"))
		return -EINVAL;
	b->strided = !strcasecmp(v, "strided");
	b->line_zone = line;
	b->file_zone = b->file;
	return 0;
}

/* zonesize, zoneskip: sizes, multiples of 4k */
static int job_key_zone(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	uint64_t u;
	*allowed = "a size that is a multiple of 4k (zonesize above 0)";
	bool size = !strcmp(key, "zonesize");
	if (qs_job_parse_size(v, b->kb_base, &u) || u % 4096 || (size && !u))
		return -EINVAL;
	*(size ? &b->job.zone_size : &b->job.zone_skip) = u;
	if (!b->line_zone) {
		b->line_zone = line;
		b->file_zone = b->file;
	}
	return 0;
}

/* A value that fio takes for "off": such a class-3 option is accepted with
 * it, since it asks for nothing the simulation lacks. */
static bool job_value_off(const char *v)
{
	bool on;
	return !strcasecmp(v, "none") || (!parse_bool(v, &on) && !on);
}

/* fio's offset_align: an offset given in % is aligned up to this (0: the
 * 4 KiB block, the bench's grid) */
static int job_key_offset_align(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	uint64_t u;
	*allowed = "a size that is a multiple of 4k, or 0";
	if (qs_job_parse_size(v, b->kb_base, &u) || u % 4096)
		return -EINVAL;
	b->offset_align = u;
	return 0;
}

/* rw_sequencer, thinktime_blocks_type: only fio's default is what the
 * bench does, so the other value is refused with the reason */
static int job_key_default_only(struct job_build *b, const char *key, const char *v,
				unsigned line, const char **allowed)
{
	bool seq = !strcmp(key, "rw_sequencer");
	*allowed = seq ? "sequential (fio's default; identical, the same offset N times, "
			 "is not simulated)"
		       : "complete (fio's default: thinktime after thinktime_blocks "
			 "completions; issue is not simulated)";
	return strcasecmp(v, seq ? "sequential" : "complete") ? -EINVAL : 0;
}

/* fio's replay_no_stall: a trace replayed as fast as iodepth allows */
static int job_key_no_stall(struct job_build *b, const char *key, const char *v, unsigned line,
			    const char **allowed)
{
	bool on;
	*allowed = "0 or 1 (also true/false, yes/no, on/off)";
	if (parse_bool(v, &on))
		return -EINVAL;
	b->job.trace_ignore_time = on;
	return 0;
}

/* fio's sync family: fsync and fdatasync (a flush after every N writes;
 * the simulated drive has no metadata to leave out), write_barrier (every
 * N-th write FUA), end_fsync and fsync_on_close (a flush at the end), sync
 * (every write FUA: O_SYNC and O_DSYNC alike, as a block device's are) */
static int job_key_sync(struct job_build *b, const char *key, const char *v, unsigned line,
			const char **allowed)
{
	struct qs_job *j = &b->job;
	bool on;
	uint64_t u;
	if (!job_value_off(v)) { /* a trace job refuses it, naming this line */
		b->key_sync = key;
		b->file_sync = b->file;
		b->line_sync = line;
	}
	if (!strcmp(key, "sync")) {
		*allowed = "none, 0, sync, 1 or dsync (fio's values)";
		if (!strcasecmp(v, "sync") || !strcasecmp(v, "dsync") || !strcmp(v, "1"))
			j->sync_writes = true;
		else if (!strcasecmp(v, "none") || !strcmp(v, "0"))
			j->sync_writes = false;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "end_fsync") || !strcmp(key, "fsync_on_close")) {
		*allowed = "0 or 1 (also true/false, yes/no, on/off)";
		if (parse_bool(v, &on))
			return -EINVAL;
		/* either asks for the flush at the end; the other may be 0 */
		j->end_fsync = on || (key[0] == 'e' ? b->fsync_on_close : b->end_fsync);
		*(key[0] == 'e' ? &b->end_fsync : &b->fsync_on_close) = on;
		return 0;
	}
	*allowed = "an integer from 0 (none) to 1000000000: writes per flush (fsync, "
		   "fdatasync) or per FUA write (write_barrier)";
	if (parse_uint(v, 0, 1000000000, &u))
		return -EINVAL;
	*(key[0] == 'w' ? &j->barrier_every : &j->fsync_every) = u;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* fio's percentile_list: P:P:..., each in [0, 100], at most 20; sorted,
 * as fio reports them */
static int job_key_pct_list(struct job_build *b, const char *key, const char *v,
			    unsigned line, const char **allowed)
{
	struct qs_job *j = &b->job;
	*allowed = "up to 20 percentiles from 0 to 100 separated by ':' (99:99.9:99.99)";
	unsigned n = 0;
	for (const char *p = v;; p++) {
		char *end;
		double x = strtod(p, &end);
		if (end == p || !(x >= 0 && x <= 100) || n == QS_REPORT_PCT_MAX ||
		    (*end && *end != ':'))
			return -EINVAL;
		j->pct_list[n++] = x;
		p = end;
		if (!*p)
			break;
	}
	qsort(j->pct_list, n, sizeof(j->pct_list[0]), cmp_double);
	j->npct = n;
	return 0;
}

/* fio's max_latency: a time, bare numbers in microseconds (fio's unit) */
static int job_key_max_latency(struct job_build *b, const char *key, const char *v,
			       unsigned line, const char **allowed)
{
	*allowed = "a time up to 1 hour: microseconds, or a number with us, ms, s (0: none)";
	return job_time_upto(v, 1000, 3600 * NS_PER_S, &b->job.max_latency_ns);
}

/* fio's rate_min (bytes/s), rate_iops_min (R[,W[,T]]) and rate_cycle
 * (their period, bare numbers in milliseconds, fio's unit) */
static int job_key_rate_min(struct job_build *b, const char *key, const char *v,
			    unsigned line, const char **allowed)
{
	struct qs_job *j = &b->job;
	if (!strcmp(key, "rate_cycle")) {
		*allowed = "a time above 0 and up to 1 hour: milliseconds, or a number with us, "
			   "ms, s";
		if (qs_job_parse_time(v, 1000000, &j->rate_cycle_ns) || !j->rate_cycle_ns ||
		    j->rate_cycle_ns > 3600 * NS_PER_S)
			return -EINVAL;
		return 0;
	}
	bool iops = !strcmp(key, "rate_iops_min");
	*allowed = iops ? "R[,W[,T]]: integers from 0 (unchecked) to 100000000, I/Os per "
			  "second for reads, writes and trims (one value: all)"
			: "R[,W[,T]]: bytes per second (suffixes k, m, g...) for reads, writes "
			  "and trims (one value: all; 0: unchecked)";
	uint64_t *u = iops ? j->rate_iops_min : j->rate_min;
	uint64_t r[QS_JOB_DIRS] = {0, 0, 0};
	if (parse_dirs(v, b->kb_base, iops ? DIR_IOPS : DIR_SIZE, r, NULL) < 0)
		return -EINVAL;
	memcpy(u, r, sizeof(r));
	return 0;
}

/* fio's bare flags: a key written alone means key=1 */
#define JK_FLAG 1u
/* class 3 unless the value is fio's off (0, false...): then class 2 */
#define JK_OFF 2u

/*
 * Every option of fio 3.33 (fio --cmdhelp=all), its aliases and the bench's
 * own, in one table the parser reads: the class, and what the option does
 * here (class 1), why it changes nothing (class 2) or why it is refused
 * (class 3). docs/BENCH-OUTPUT.md carries the same table, which
 * tests/test_job_opts.c compares with this one.
 *
 * Class 1 and some class 2 entries have a handler (class 2: it checks the
 * value, e.g. direct, which --mode dev reads). An alias names its option
 * (of): the handler sees that option's name.
 */
struct job_opt {
	const char *key;
	job_key_fn fn;
	unsigned flags;
	enum qs_job_opt_class cls;
	const char *here;
	const char *of; /* an alias: the option it stands for, else NULL */
};

#define DO(k, f, fl, h) {k, f, fl, QS_JOB_OPT_DOES, h, NULL}
#define NONE(k, fl, h) {k, NULL, fl, QS_JOB_OPT_NONE, h, NULL}
#define NONE_FN(k, f, fl, h) {k, f, fl, QS_JOB_OPT_NONE, h, NULL}
#define REFUSE(k, fl, h) {k, NULL, fl, QS_JOB_OPT_REFUSED, h, NULL}
#define ALIAS(k, o) {k, NULL, 0, 0, NULL, o}

/* the reasons shared by several options */
#define WHY_ENGINE "the bench has one engine of its own, with no kernel path"
#define WHY_CPUIO "an option of fio's cpuio engine, which burns CPU: the bench refuses it"
#define WHY_NET "an option of fio's net, netsplice and rdma engines (I/O over a network): the bench refuses them"
#define WHY_EXEC "an option of fio's exec engine, which runs a program: the bench refuses it"
#define WHY_HOST "every job works on the one simulated drive, on a virtual clock"
#define WHY_FILES "a job works on one span of the drive, not on files"
#define WHY_DATA "the simulation holds no data"
#define WHY_LOGS "fio's own logs and reports: the bench writes its own (table, --json, --csv, --output-format=json)"
#define WHY_ERRORS "the simulated drive returns no errors"
#define WHY_RAND "the bench's random streams are its own, always repeatable with --seed"
#define WHY_PRIO "the simulated drive has no priority classes"
#define WHY_ZBD "zoned block devices are not simulated: the simulated QLC drive is a conventional one"

static const struct job_opt job_opts[] = {
	/* job description and files */
	NONE("description", 0, "fio's text about the job"),
	DO("name", job_key_name, 0, "the name fio prints: jobname in --output-format=json"),
	DO("wait_for", job_key_wait_for, 0, "start when that earlier job of the group has ended"),
	NONE("filename", 0, WHY_FILES),
	NONE("lockfile", 0, WHY_FILES),
	NONE("directory", 0, WHY_FILES),
	NONE("filename_format", 0, WHY_FILES),
	NONE("unique_filename", 0, WHY_FILES),
	NONE("opendir", 0, WHY_FILES),
	/* direction and block sizes */
	DO("rw", job_key_rw, 0, "direction and pattern, with fio's :N"),
	ALIAS("readwrite", "rw"),
	DO("bs", job_key_bs, 0, "bytes per I/O, or R,W,T per direction"),
	ALIAS("blocksize", "bs"),
	DO("ba", job_key_blockalign, 0, "the grid of random offsets: the smallest size the job issues"),
	ALIAS("blockalign", "ba"),
	DO("bsrange", job_key_bsrange, 0, "sizes drawn uniformly in a range, per direction"),
	ALIAS("blocksize_range", "bsrange"),
	DO("bssplit", job_key_bssplit, 0, "sizes and their shares, per direction"),
	NONE("bs_unaligned", JK_FLAG, "the alignment of fio's buffers in memory: " WHY_DATA),
	ALIAS("blocksize_unaligned", "bs_unaligned"),
	NONE("randrepeat", 0, WHY_RAND),
	NONE("randseed", 0, WHY_RAND),
	DO("norandommap", job_key_bool, JK_FLAG, "uniform draws with repeats instead of every block once per pass"),
	NONE("ignore_error", 0, WHY_ERRORS),
	DO("rw_sequencer", job_key_default_only, 0, "sequential (fio's default) only: identical is refused"),
	/* engine and queue */
	NONE_FN("ioengine", job_key_ioengine, 0,
		WHY_ENGINE "; refused: cpuio, net, netsplice, rdma, exec, e4defrag, filecreate, "
		"filestat, filedelete, ftruncate and falloc, whose I/O is not a drive's"),
	DO("iodepth", job_key_count, 0, "I/Os in flight per clone"),
	NONE("iodepth_batch", 0, WHY_ENGINE),
	ALIAS("iodepth_batch_submit", "iodepth_batch"),
	NONE("iodepth_batch_complete_min", 0, WHY_ENGINE),
	ALIAS("iodepth_batch_complete", "iodepth_batch_complete_min"),
	NONE("iodepth_batch_complete_max", 0, WHY_ENGINE),
	NONE("iodepth_low", 0, WHY_ENGINE),
	REFUSE("serialize_overlap", JK_OFF, "an I/O that overlaps one in flight is not held back in the simulation; 0 is accepted"),
	NONE("io_submit_mode", 0, WHY_ENGINE),
	/* sizes and offsets */
	DO("size", job_key_span, 0, "bytes of each clone's span, or N% of the drive"),
	DO("io_size", job_key_span, 0, "bytes of I/O before the job ends"),
	ALIAS("io_limit", "io_size"),
	DO("fill_device", job_key_bool, JK_FLAG, "the span runs to the end of the drive"),
	ALIAS("fill_fs", "fill_device"),
	DO("filesize", job_key_span, 0, "the span; size is then the bytes of I/O"),
	REFUSE("file_append", JK_OFF, "the span is on the drive: I/O past the end of a file has no meaning here; 0 is accepted"),
	DO("offset", job_key_span, 0, "where clone 0's span starts"),
	ALIAS("fileoffset", "offset"),
	DO("offset_increment", job_key_offset_inc, 0, "clone i starts at offset + i * this"),
	DO("offset_align", job_key_offset_align, 0, "the boundary an offset in % is rounded down to"),
	DO("number_ios", job_key_count, 0, "a clone ends after this many I/Os"),
	NONE("random_generator", 0, WHY_RAND),
	DO("random_distribution", job_key_dist, 0, "block popularity: random, zipf, pareto, normal, zoned, zoned_abs"),
	DO("percentage_random", job_key_pct_random, 0, "of a random pattern's I/Os, the share at a random offset"),
	NONE("allrandrepeat", 0, WHY_RAND),
	DO("nrfiles", job_key_nrfiles, 0, "1: a job works on one span, as on one file"),
	ALIAS("nr_files", "nrfiles"),
	NONE("file_service_type", 0, WHY_FILES),
	NONE("openfiles", 0, WHY_FILES),
	NONE("fallocate", 0, WHY_FILES),
	NONE("fadvise_hint", 0, "the bench's I/O bypasses the page cache"),
	DO("fsync", job_key_sync, 0, "an engine flush after every N writes"),
	DO("fdatasync", job_key_sync, 0, "an engine flush after every N writes (no metadata to leave out)"),
	DO("write_barrier", job_key_sync, 0, "every N-th write with FUA"),
	NONE("sync_file_range", 0, "the bench's I/O bypasses the page cache, which is what it would write back"),
	NONE("direct", 0, "the bench's I/O is always direct (--mode dev refuses direct=0)"),
	NONE("atomic", 0, WHY_ENGINE),
	NONE("buffered", 0, "the bench's I/O is always direct (--mode dev refuses buffered=1)"),
	REFUSE("overwrite", JK_OFF, "fio lays files out before the I/O; the simulated drive is filled before every run anyway, 0 is accepted"),
	DO("loops", job_key_count, 0, "the job's I/O is done this many times"),
	DO("numjobs", job_key_count, 0, "clones of the job"),
	DO("startdelay", job_key_time, 0, "start this long after the group starts"),
	DO("runtime", job_key_time, 0, "run length"),
	ALIAS("timeout", "runtime"),
	DO("time_based", job_key_bool, JK_FLAG, "run for runtime even after the bytes are done"),
	REFUSE("verify_only", JK_FLAG | JK_OFF, "fio's verify pass without the writes: " WHY_DATA " to verify; 0 is accepted"),
	DO("ramp_time", job_key_time, 0, "leading time whose I/O is not counted"),
	NONE("clocksource", 0, "the simulation runs on a virtual clock"),
	NONE("mem", 0, "fio's buffer memory: " WHY_DATA),
	ALIAS("iomem", "mem"),
	/* verification (data content) */
	NONE("verify", 0, WHY_DATA),
	NONE("do_verify", JK_FLAG, WHY_DATA),
	NONE("verify_interval", 0, WHY_DATA),
	NONE("verify_offset", 0, WHY_DATA),
	NONE("verify_pattern", 0, WHY_DATA),
	NONE("verify_fatal", JK_FLAG, WHY_DATA),
	NONE("verify_dump", JK_FLAG, WHY_DATA),
	NONE("verify_async", 0, WHY_DATA),
	NONE("verify_backlog", 0, WHY_DATA),
	NONE("verify_backlog_batch", 0, WHY_DATA),
	NONE("experimental_verify", 0, WHY_DATA),
	NONE("verify_state_load", 0, WHY_DATA),
	NONE("verify_state_save", 0, WHY_DATA),
	REFUSE("trim_percentage", JK_OFF, "verify's trims are not simulated (" WHY_DATA "); rw=randtrim or trimwrite issue trims; 0 is accepted"),
	NONE("trim_verify_zero", 0, WHY_DATA),
	REFUSE("trim_backlog", JK_OFF, "verify's trims are not simulated (" WHY_DATA "); rw=randtrim or trimwrite issue trims; 0 is accepted"),
	NONE("trim_backlog_batch", 0, WHY_DATA),
	/* replay */
	DO("write_iolog", job_key_write_iolog, 0, "the run's I/O, as issued, into this file as fio's iolog"),
	DO("read_iolog", job_key_trace, 0, "replay this iolog (or any trace the bench reads): the bench's trace"),
	NONE("read_iolog_chunked", 0, "the bench reads a trace as it replays it"),
	DO("replay_no_stall", job_key_no_stall, 0, "replay as fast as iodepth allows: trace_ignore_time"),
	NONE("replay_redirect", 0, "a trace replays on the one simulated drive, whatever its device"),
	DO("replay_scale", job_key_replay_off, 0, "the trace's offsets divided by this, before the bench maps them"),
	DO("replay_align", job_key_replay_off, 0, "the trace's offsets aligned down to this power of 2, before the bench maps them"),
	DO("replay_time_scale", job_key_replay_time, 0, "the trace's rate in percent: trace_timescale = 100 / it"),
	DO("replay_skip", job_key_replay_skip, 0, "the trace's reads, writes, trims or flushes are not replayed"),
	REFUSE("merge_blktrace_file", 0, "several blktraces are not merged: one trace per job"),
	REFUSE("merge_blktrace_scalars", 0, "several blktraces are not merged: one trace per job"),
	REFUSE("merge_blktrace_iters", 0, "several blktraces are not merged: one trace per job"),
	NONE("exec_prerun", 0, "the bench runs no commands of a job file"),
	NONE("exec_postrun", 0, "the bench runs no commands of a job file"),
	NONE("ioscheduler", 0, WHY_ENGINE),
	/* zones */
	DO("zonemode", job_key_zonemode, 0, "none or strided (zbd is refused: " WHY_ZBD ")"),
	DO("zonesize", job_key_zone, 0, "strided: bytes of I/O per zone"),
	REFUSE("zonecapacity", 0, WHY_ZBD),
	REFUSE("zonerange", 0, "zonemode=strided is simulated with zones of zonesize only"),
	DO("zoneskip", job_key_zone, 0, "strided: bytes skipped after each zone"),
	REFUSE("read_beyond_wp", 0, WHY_ZBD),
	REFUSE("max_open_zones", 0, WHY_ZBD),
	REFUSE("job_max_open_zones", 0, WHY_ZBD),
	REFUSE("ignore_zone_limits", 0, WHY_ZBD),
	REFUSE("zone_reset_threshold", 0, WHY_ZBD),
	REFUSE("zone_reset_frequency", 0, WHY_ZBD),
	NONE("lockmem", 0, WHY_HOST),
	DO("rwmixread", job_key_rwmix, 0, "percent of reads in rw/randrw"),
	DO("rwmixwrite", job_key_rwmix, 0, "percent of writes in rw/randrw"),
	NONE("nice", 0, WHY_HOST),
	NONE("prio", 0, WHY_PRIO),
	NONE("prioclass", 0, WHY_PRIO),
	/* think time and rates */
	DO("thinktime", job_key_think, 0, "a closed-loop clone waits this long every thinktime_blocks I/Os"),
	NONE_FN("thinktime_spin", job_key_think, 0, "fio's busy part of thinktime: a simulated clone waits the whole thinktime alike"),
	DO("thinktime_blocks", job_key_count, 0, "I/Os between thinktimes"),
	DO("thinktime_blocks_type", job_key_default_only, 0, "complete (fio's default) only: issue is refused"),
	DO("thinktime_iotime", job_key_think_iotime, 0, "thinktime after every this much I/O time (s), also every thinktime_blocks if that is set"),
	DO("rate", job_key_rate, 0, "bytes/s, R,W,T, turned into rate_iops"),
	DO("rate_min", job_key_rate_min, 0, "bytes/s, R,W,T: a direction below it over a rate_cycle ends the job with fio's error 5 (EIO)"),
	ALIAS("ratemin", "rate_min"),
	DO("rate_process", job_key_rate_process, 0, "linear or poisson gaps"),
	DO("rate_cycle", job_key_rate_min, 0, "the period rate_min and rate_iops_min are checked over (ms; 1 s)"),
	ALIAS("ratecycle", "rate_cycle"),
	REFUSE("rate_ignore_thinktime", JK_OFF, "a rated clone with thinktime keeps its schedule; 0 is accepted"),
	DO("rate_iops", job_key_rate_iops, 0, "I/Os per second per clone (open loop), or R,W,T"),
	DO("rate_iops_min", job_key_rate_min, 0, "I/Os per second, R,W,T: as rate_min"),
	DO("max_latency", job_key_max_latency, 0, "an I/O slower than this ends the job with fio's error 110 (ETIMEDOUT)"),
	DO("latency_target", job_key_latency, 0, "fio's search, per clone, for the deepest queue (up to iodepth) whose latencies meet it: the depth under the table and in fio's JSON"),
	DO("latency_window", job_key_latency, 0, "the time each depth of latency_target's search is measured over"),
	DO("latency_percentile", job_key_latency, 0, "the percent of a window's I/Os that must meet latency_target (100: the first over it backs off at once, and at depth 1 ends the job with fio's error 110)"),
	DO("latency_run", job_key_latency, 0, "latency_target's search goes on for the whole run instead of ending the job at the depth found"),
	/* the host */
	NONE("invalidate", JK_FLAG, "the bench's I/O bypasses the page cache"),
	DO("sync", job_key_sync, 0, "sync, dsync or 1: every write with FUA"),
	NONE("write_hint", 0, "the simulated QLC drive has no write streams"),
	NONE("create_serialize", JK_FLAG, WHY_FILES),
	NONE("create_fsync", 0, WHY_FILES),
	NONE("create_on_open", JK_FLAG, WHY_FILES),
	REFUSE("create_only", JK_OFF, "fio only lays out files and does no I/O: " WHY_FILES "; 0 is accepted"),
	NONE("allow_file_create", 0, WHY_FILES),
	NONE("allow_mounted_write", 0, "the simulated drive is no mounted file system"),
	NONE("pre_read", 0, "the bench's I/O bypasses the page cache, which fio would fill"),
	NONE("cpumask", 0, WHY_HOST),
	NONE("cpus_allowed", 0, WHY_HOST),
	NONE("cpus_allowed_policy", 0, WHY_HOST),
	NONE("numa_cpu_nodes", 0, WHY_HOST),
	NONE("numa_mem_policy", 0, WHY_HOST),
	DO("end_fsync", job_key_sync, 0, "an engine flush once the job's I/O is done"),
	DO("fsync_on_close", job_key_sync, 0, "an engine flush once the job's I/O is done (its one file closes)"),
	NONE("unlink", 0, WHY_FILES),
	NONE("unlink_each_loop", 0, WHY_FILES),
	NONE("exitall", JK_FLAG, "not simulated: every job runs its course (fio stops them all when the first ends)"),
	NONE("exit_what", 0, "exitall's scope: every job runs its course"),
	NONE("exitall_on_error", JK_FLAG, WHY_ERRORS),
	DO("stonewall", job_key_bool, JK_FLAG, "wait for earlier jobs; a new reporting group"),
	ALIAS("wait_for_previous", "stonewall"),
	DO("new_group", job_key_report, JK_FLAG, "a new reporting group"),
	NONE("thread", JK_FLAG, WHY_HOST),
	/* fio's logs and reports */
	NONE("per_job_logs", JK_FLAG, WHY_LOGS),
	NONE("write_bw_log", JK_FLAG, WHY_LOGS),
	NONE("bwavgtime", 0, WHY_LOGS),
	NONE("write_lat_log", JK_FLAG, WHY_LOGS),
	NONE("write_iops_log", JK_FLAG, WHY_LOGS),
	NONE("iopsavgtime", 0, WHY_LOGS),
	NONE("log_entries", 0, WHY_LOGS),
	NONE("log_avg_msec", 0, WHY_LOGS),
	NONE("log_hist_msec", 0, WHY_LOGS),
	NONE("log_hist_coarseness", 0, WHY_LOGS),
	NONE("write_hist_log", JK_FLAG, WHY_LOGS),
	NONE("log_max_value", 0, WHY_LOGS),
	NONE("log_offset", JK_FLAG, WHY_LOGS),
	NONE("log_prio", JK_FLAG, WHY_LOGS),
	NONE("log_compression", 0, WHY_LOGS),
	NONE("log_compression_cpus", 0, WHY_LOGS),
	NONE("log_store_compressed", 0, WHY_LOGS),
	NONE("log_unix_epoch", 0, WHY_LOGS),
	NONE("log_alternate_epoch", 0, WHY_LOGS),
	NONE("log_alternate_epoch_clock_id", 0, WHY_LOGS),
	NONE("block_error_percentiles", 0, WHY_ERRORS),
	DO("group_reporting", job_key_report, JK_FLAG, "a group's jobs (and clones) reported as one"),
	NONE("stats", 0, "the bench reports every job"),
	/* data content */
	NONE("zero_buffers", JK_FLAG, WHY_DATA),
	NONE("refill_buffers", JK_FLAG, WHY_DATA),
	NONE("scramble_buffers", JK_FLAG, WHY_DATA),
	NONE("buffer_pattern", 0, WHY_DATA),
	NONE("buffer_compress_percentage", 0, WHY_DATA ", and neither compresses nor deduplicates"),
	NONE("buffer_compress_chunk", 0, WHY_DATA ", and neither compresses nor deduplicates"),
	NONE("dedupe_percentage", 0, WHY_DATA ", and neither compresses nor deduplicates"),
	NONE("dedupe_mode", 0, WHY_DATA ", and neither compresses nor deduplicates"),
	NONE("dedupe_working_set_percentage", 0, WHY_DATA ", and neither compresses nor deduplicates"),
	NONE("dedupe_global", JK_FLAG, WHY_DATA ", and neither compresses nor deduplicates"),
	/* latency reporting */
	NONE("clat_percentiles", 0, "the bench reports its own percentiles of completion latency"),
	NONE("lat_percentiles", 0, "the bench reports its own percentiles of completion latency"),
	NONE("slat_percentiles", 0, "the simulation has no submission latency"),
	DO("percentile_list", job_key_pct_list, 0, "the percentiles of fio's JSON (--output-format=json)"),
	NONE("significant_figures", 0, WHY_LOGS),
	NONE("disk_util", 0, "the simulated drive has no kernel disk statistics"),
	NONE("gtod_reduce", JK_FLAG, WHY_HOST),
	NONE("disable_lat", 0, "the bench measures every latency on its virtual clock, at no cost"),
	NONE("disable_clat", 0, "the bench measures every latency on its virtual clock, at no cost"),
	NONE("disable_slat", 0, "the simulation has no submission latency"),
	NONE("disable_bw_measurement", 0, "the bench measures bandwidth on its virtual clock, at no cost"),
	ALIAS("disable_bw", "disable_bw_measurement"),
	NONE("gtod_cpu", 0, WHY_HOST),
	DO("unified_rw_reporting", job_key_report, 0, "none, mixed or both"),
	NONE("continue_on_error", 0, WHY_ERRORS),
	NONE("error_dump", JK_FLAG, WHY_ERRORS),
	REFUSE("profile", 0, "fio's built-in profiles (tiobench, act) are not known to the bench: write their jobs out"),
	NONE("cgroup", 0, WHY_HOST),
	NONE("cgroup_nodelete", 0, WHY_HOST),
	NONE("cgroup_weight", 0, WHY_HOST),
	NONE("uid", 0, WHY_HOST),
	NONE("gid", 0, WHY_HOST),
	DO("kb_base", job_key_kb_base, 0, "what k, m, g mean: 1024 or 1000"),
	NONE("unit_base", 0, "not read yet: the bench reports bytes"),
	NONE("hugepage-size", 0, "fio's buffer memory: " WHY_DATA),
	DO("flow_id", job_key_flow, 0, "the flow a job's weight is in"),
	DO("flow", job_key_flow, 0, "fio 3.33's flow weight"),
	DO("flow_sleep", job_key_flow, 0, "how long a held clone waits before it looks again"),
	DO("steadystate", job_key_ss, 0, "fio's steady-state criterion"),
	ALIAS("ss", "steadystate"),
	DO("steadystate_duration", job_key_ss_time, 0, "the window the criterion must hold over"),
	ALIAS("ss_dur", "steadystate_duration"),
	DO("steadystate_ramp_time", job_key_ss_time, 0, "time before samples are collected"),
	ALIAS("ss_ramp", "steadystate_ramp_time"),
	/* not in fio --cmdhelp=all: fio's engine options, its own extras and the bench's */
	DO("steadystate_check_interval", job_key_ss_time, 0, "one sample per interval (fio's, not in its option list)"),
	ALIAS("ss_interval", "steadystate_check_interval"),
	NONE("hipri", JK_FLAG, WHY_ENGINE),
	NONE("fixedbufs", JK_FLAG, WHY_ENGINE),
	NONE("registerfiles", JK_FLAG, WHY_ENGINE),
	NONE("sqthread_poll", JK_FLAG, WHY_ENGINE),
	NONE("userspace_reap", JK_FLAG, WHY_ENGINE),
	NONE("sqthread_poll_cpu", 0, WHY_ENGINE),
	NONE("nonvectored", 0, WHY_ENGINE),
	NONE("uncached", 0, WHY_ENGINE),
	NONE("nowait", JK_FLAG, WHY_ENGINE),
	NONE("force_async", 0, WHY_ENGINE),
	NONE("cmd_type", 0, WHY_ENGINE),
	NONE("hipri_percentage", 0, WHY_ENGINE),
	NONE("thp", 0, WHY_ENGINE),
	NONE("readfua", JK_FLAG, WHY_ENGINE),
	NONE("writefua", JK_FLAG, WHY_ENGINE),
	NONE("sg_write_mode", 0, WHY_ENGINE),
	NONE("stream_id", 0, WHY_ENGINE),
	/* the own options of fio's remote block and file engines (gfapi, mtd,
	 * nbd, rados, rbd), which run on the bench's engine too */
	NONE("volume", 0, WHY_ENGINE),
	NONE("brick", 0, WHY_ENGINE),
	NONE("single-instance", 0, WHY_ENGINE),
	NONE("skip_bad", 0, WHY_ENGINE),
	NONE("uri", 0, WHY_ENGINE),
	NONE("clustername", 0, WHY_ENGINE),
	NONE("pool", 0, WHY_ENGINE),
	NONE("clientname", 0, WHY_ENGINE),
	NONE("conf", 0, WHY_ENGINE),
	NONE("busy_poll", 0, WHY_ENGINE),
	NONE("touch_objects", 0, WHY_ENGINE),
	NONE("rbdname", 0, WHY_ENGINE),
	/* and those of the engines the bench refuses (job_key_ioengine) */
	REFUSE("cpuload", 0, WHY_CPUIO),
	REFUSE("cpuchunks", 0, WHY_CPUIO),
	REFUSE("cpumode", 0, WHY_CPUIO),
	REFUSE("exit_on_io_done", 0, WHY_CPUIO),
	REFUSE("hostname", 0, WHY_NET),
	REFUSE("port", 0, WHY_NET),
	REFUSE("protocol", 0, WHY_NET),
	REFUSE("nodelay", 0, WHY_NET),
	REFUSE("listen", 0, WHY_NET),
	REFUSE("pingpong", 0, WHY_NET),
	REFUSE("interface", 0, WHY_NET),
	REFUSE("ttl", 0, WHY_NET),
	REFUSE("window_size", 0, WHY_NET),
	REFUSE("mss", 0, WHY_NET),
	REFUSE("bindname", 0, WHY_NET),
	REFUSE("verb", 0, WHY_NET),
	REFUSE("program", 0, WHY_EXEC),
	REFUSE("arguments", 0, WHY_EXEC),
	REFUSE("grace_time", 0, WHY_EXEC),
	REFUSE("std_redirect", 0, WHY_EXEC),
	REFUSE("donorname", 0, "an option of fio's e4defrag engine (ext4's online defragmentation), which the bench refuses"),
	REFUSE("inplace", 0, "an option of fio's e4defrag engine (ext4's online defragmentation), which the bench refuses"),
	REFUSE("stat_type", 0, "an option of fio's filestat engine (file metadata), which the bench refuses"),
	NONE("cmdprio", 0, WHY_PRIO),
	NONE("cmdprio_class", 0, WHY_PRIO),
	NONE("cmdprio_percentage", 0, WHY_PRIO),
	NONE("cmdprio_bssplit", 0, WHY_PRIO),
	NONE("threads", JK_FLAG, WHY_HOST),
	REFUSE("flow_watermark", 0, "fio 3.33 has no flow_watermark: its flow is a weight (flow, flow_id, flow_sleep)"),
	DO("trace", job_key_trace, 0, "replay this trace (the bench's own)"),
	DO("trace_format", job_key_trace_format, 0, "the trace's format, or auto (the bench's own)"),
	DO("trace_columns", job_key_trace_columns, 0, "a csv trace's column map (the bench's own)"),
	DO("trace_timescale", job_key_timescale, 0, "multiplies the trace's times (the bench's own)"),
	DO("trace_ignore_time", job_key_bool, JK_FLAG, "issue as fast as iodepth allows (the bench's own)"),
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The entry of key, an alias resolved to its option; NULL if unknown. */
static const struct job_opt *job_opt_find(const char *key)
{
	for (size_t i = 0; i < ARRAY_LEN(job_opts); i++) {
		if (strcmp(key, job_opts[i].key))
			continue;
		return job_opts[i].of ? job_opt_find(job_opts[i].of) : &job_opts[i];
	}
	return NULL;
}

bool qs_job_opt(size_t i, struct qs_job_opt_info *out)
{
	if (i >= ARRAY_LEN(job_opts))
		return false;
	const struct job_opt *o = &job_opts[i], *t = o->of ? job_opt_find(o->of) : o;
	out->key = o->key;
	out->cls = t->cls;
	out->here = t->here;
	out->of = o->of;
	out->flag = t->flags & JK_FLAG;
	return true;
}

/* Add key to the list *list ("a, b"), once; 0 or -ENOMEM. */
static int job_list_add(char **list, const char *key)
{
	size_t n = *list ? strlen(*list) : 0, k = strlen(key);
	for (const char *p = *list; p && (p = strstr(p, key)); p += k)
		if ((p == *list || p[-1] == ' ') && (!p[k] || p[k] == ','))
			return 0;
	char *s = realloc(*list, n + k + 3);
	if (!s)
		return -ENOMEM;
	snprintf(s + n, k + 3, "%s%s", n ? ", " : "", key);
	*list = s;
	return 0;
}

/* An option without effect here: in the job's note and the file's. */
static int job_note_ignored(struct job_build *b, struct qs_job_file *f, const char *key)
{
	int rc = job_list_add(&b->job.noeffect, key);
	return rc ? rc : job_list_add(&f->ignored, key);
}

/* direct=0 or buffered=1 (fio's inverse pair) asks for buffered I/O. */
static int job_note_buffered(struct job_build *b, const struct scan_ent *e,
			     const char **allowed)
{
	bool on = true;
	*allowed = "0 or 1 (also true/false, yes/no, on/off)";
	if (e->val && parse_bool(e->val, &on))
		return -EINVAL;
	b->job.buffered = e->key[0] == 'd' ? !on : on;
	b->job.buffered_file = e->file;
	b->job.buffered_line = e->line;
	return 0;
}

/* Apply the scanned entry e to b: 0, -EINVAL (a bad value: *allowed says
 * what would be fine), -ENODATA (a bare key that needs a value), -ENOTSUP
 * (a fio option the bench refuses: *allowed says why), -ENOMEM, or -ENOENT
 * for a key the bench does not know. Ignored options go to f's
 * list. */
static int job_apply(struct job_build *b, const struct scan_ent *e, struct qs_job_file *f,
		     const char **allowed)
{
	const struct job_opt *o = job_opt_find(e->key);
	if (!o)
		return -ENOENT;
	if (!e->val && !(o->flags & JK_FLAG)) {
		*allowed = "key=value (only fio's flags may stand alone)";
		return -ENODATA;
	}
	const char *v = e->val ? e->val : "1";
	if (o->cls == QS_JOB_OPT_REFUSED && !((o->flags & JK_OFF) && job_value_off(v))) {
		*allowed = o->here;
		return -ENOTSUP;
	}
	if (o->fn) {
		int rc = o->fn(b, o->key, v, e->line, allowed);
		if (rc || o->cls == QS_JOB_OPT_DOES)
			return rc;
	}
	if (!strcmp(o->key, "direct") || !strcmp(o->key, "buffered")) {
		int rc = job_note_buffered(b, e, allowed);
		if (rc)
			return rc;
	}
	return job_note_ignored(b, f, e->key);
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
	b->job.thinktime_blocks = 1;
	b->job.lat_pct = 100; /* fio's latency_percentile */
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

static void scan_free(struct scan *sc)
{
	for (size_t i = 0; i < sc->n; i++)
		free(sc->ent[i].val);
	for (size_t i = 0; i < sc->nfiles; i++)
		free(sc->files[i]);
	free(sc->ent);
	free(sc->files);
}

/* Keep a copy of path for the entries read from it; NULL on no memory. */
static const char *scan_add_file(struct scan *sc, const char *path)
{
	char **n = realloc(sc->files, (sc->nfiles + 1) * sizeof(*n));
	if (!n)
		return NULL;
	sc->files = n;
	if (!(n[sc->nfiles] = strdup(path)))
		return NULL;
	return n[sc->nfiles++];
}

/*
 * fio's environment substitution: every ${NAME} in the line in becomes the
 * value of NAME. 0, or -EINVAL with a message (an unset NAME, an unclosed
 * "${", a result longer than QS_JOB_MAX_LINE).
 */
static int scan_expand_env(const char *path, unsigned line, const char *in, char *out,
			   size_t outlen, char *err, size_t errlen)
{
	size_t o = 0;
	const char *line_start = in;
	while (*in) {
		const char *add = in;
		size_t n = 1;
		if (in[0] == '$' && in[1] == '{') {
			const char *close = strchr(in + 2, '}');
			char name[128];
			if (!close || close == in + 2 || (size_t)(close - in - 2) >= sizeof(name)) {
				errf(err, errlen, "%s:%u: '%s': allowed: ${NAME} with a name of 1 to "
				     "%zu characters and a closing '}'", path, line, in,
				     sizeof(name) - 1);
				return -EINVAL;
			}
			memcpy(name, in + 2, (size_t)(close - in - 2));
			name[close - in - 2] = 0;
			add = getenv(name);
			if (!add) {
				size_t k = strcspn(line_start, "=");
				errf(err, errlen, "%s:%u: key '%.*s': ${%s}: the environment "
				     "variable is not set (fio would keep the text as it is, a value "
				     "no option of the bench takes)",
				     path, line, (int)k, line_start, name);
				return -EINVAL;
			}
			n = strlen(add);
			in = close + 1;
		} else {
			in++;
		}
		if (o + n >= outlen || o + n > QS_JOB_MAX_LINE) {
			errf(err, errlen, "%s:%u: the line with its ${...} substituted is longer "
			     "than %d characters", path, line, QS_JOB_MAX_LINE);
			return -EINVAL;
		}
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = 0;
	return 0;
}

/* Cut a value at an inline ';' or '#' comment (fio's and iniparser's
 * rule) and drop one pair of surrounding quotes (iniparser's, kept so
 * that job files written for it still load). */
static void scan_value_clean(char *v)
{
	if ((v[0] == '"' || v[0] == '\'') && strchr(v + 1, v[0])) {
		char q = v[0];
		char *close = strchr(v + 1, q);
		size_t n = (size_t)(close - v - 1);
		memmove(v, v + 1, n);
		v[n] = 0;
		return;
	}
	v[strcspn(v, ";#")] = 0;
	str_trim(v);
}

#define SCAN_MAX_DEPTH 8 /* include nesting */

/*
 * Read the job file at path into sc: sections, keys, values and their
 * files and lines. *cur is the section the lines are in (an include goes
 * on in the includer's section, and the includer goes on in the last
 * section of the included file, as if its text stood there). Rejects what
 * fio would reject or what would be lost: a key outside any section, a
 * header with text after it, a NUL byte, an overlong line.
 */
static int scan_file(const char *path, struct scan *sc, struct scan_ent *cur, unsigned depth,
		     char *err, size_t errlen)
{
	const char *fpath = scan_add_file(sc, path);
	if (!fpath) {
		errf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
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
	struct stat st;
	char *lbuf = malloc(QS_JOB_MAX_LINE + 2);

	if (!lbuf) {
		errf(err, errlen, "%s: out of memory", path);
		fclose(f);
		return -ENOMEM;
	}
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: not a regular file (%s); give the path of a job file",
		     path, S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
		rc = -EINVAL;
		goto out;
	}

	ssize_t got;
	while ((got = getline(&buf, &cap, f)) >= 0) {
		line++;
		size_t len = (size_t)got - (got && buf[got - 1] == '\n');
		if (len > QS_JOB_MAX_LINE) {
			errf(err, errlen, "%s:%u: line longer than %d characters (%zu)",
			     path, line, QS_JOB_MAX_LINE, len);
			rc = -EINVAL;
			break;
		}
		/* str_trim stops at a NUL: the rest of the line would vanish unseen. */
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
		rc = scan_expand_env(path, line, buf, lbuf, QS_JOB_MAX_LINE + 2, err, errlen);
		if (rc)
			break;
		char *l = lbuf;
		if (*l == '[') {
			char *close = strchr(l, ']');
			if (!close) {
				errf(err, errlen, "%s:%u: section header '%s' has no ']'",
				     path, line, l);
				rc = -EINVAL;
				break;
			}
			/* fio would take [j] bs=64k for the header alone and lose
			 * bs, so a key there is refused, not ignored. */
			char *rest = close + 1;
			while (isspace((unsigned char)*rest))
				rest++;
			if (*rest && *rest != ';' && *rest != '#') {
				errf(err, errlen, "%s:%u: '%s' follows the section header "
				     "'%.*s'; put it on a line of its own", path, line,
				     rest, (int)(close - l + 1), l);
				rc = -EINVAL;
				break;
			}
			*close = 0;
			memset(cur, 0, sizeof(*cur));
			snprintf(cur->secname, sizeof(cur->secname), "%s", l + 1);
			str_trim(cur->secname);
			if (!*cur->secname || strlen(l + 1) >= QS_JOB_NAME_MAX) {
				errf(err, errlen, "%s:%u: section name '%s': must be "
				     "1 to %d characters", path, line, l + 1,
				     QS_JOB_NAME_MAX - 1);
				rc = -EINVAL;
				break;
			}
			snprintf(cur->sec, sizeof(cur->sec), "%s", cur->secname);
			str_lower(cur->sec);
			cur->line = line;
			cur->file = fpath;
			for (size_t i = 0; i < sc->n; i++) {
				if (!sc->ent[i].key[0] && !strcmp(sc->ent[i].sec, cur->sec) &&
				    strcmp(cur->sec, "global")) {
					errf(err, errlen, "%s:%u: section [%s] repeats the "
					     "one on line %u of %s; job names must be unique",
					     path, line, cur->secname, sc->ent[i].line,
					     sc->ent[i].file);
					rc = -EINVAL;
					goto out;
				}
			}
			rc = scan_push(sc, cur);
			if (rc)
				break;
			continue;
		}
		char *eq = strchr(l, '=');
		if (!eq && !strncasecmp(l, "include", 7) && isspace((unsigned char)l[7])) {
			char *inc = l + 8;
			str_trim(inc);
			char ipath[4096];
			const char *slash = strrchr(path, '/');
			/* fio: relative to the directory of the including file */
			if (*inc == '/' || !slash)
				snprintf(ipath, sizeof(ipath), "%s", inc);
			else
				snprintf(ipath, sizeof(ipath), "%.*s/%s", (int)(slash - path),
					 path, inc);
			if (depth + 1 >= SCAN_MAX_DEPTH) {
				errf(err, errlen, "%s:%u: include %s: allowed: at most %d files "
				     "deep (an include loop?)", path, line, inc, SCAN_MAX_DEPTH);
				rc = -EINVAL;
				break;
			}
			/* the outermost include is named in front of the message */
			char ierr[768];
			rc = scan_file(ipath, sc, cur, depth + 1, ierr, sizeof(ierr));
			if (rc) {
				if (depth)
					errf(err, errlen, "%s", ierr);
				else
					errf(err, errlen, "%s:%u: include %s: %s", path, line,
					     inc, ierr);
				break;
			}
			continue;
		}
		struct scan_ent e = *cur;
		e.file = fpath;
		e.line = line;
		if (eq) {
			*eq = 0;
			str_trim(l);
		} else if (l[strcspn(l, " \t;#")]) {
			l[strcspn(l, ";#")] = 0;
			str_trim(l);
			if (l[strcspn(l, " \t")]) {
				errf(err, errlen, "%s:%u: '%s' is neither key=value nor a bare "
				     "option (fio's flags: time_based, norandommap...)",
				     path, line, l);
				rc = -EINVAL;
				break;
			}
		}
		if (!cur->sec[0]) {
			errf(err, errlen, "%s:%u: key '%s' is outside any section; "
			     "put it under [global] or a job", path, line, l);
			rc = -EINVAL;
			break;
		}
		if (!*l || strlen(l) >= sizeof(e.key)) {
			errf(err, errlen, "%s:%u: key '%s': must be 1 to %zu characters",
			     path, line, l, sizeof(e.key) - 1);
			rc = -EINVAL;
			break;
		}
		snprintf(e.key, sizeof(e.key), "%s", l);
		str_lower(e.key);
		e.val = NULL;
		if (eq) {
			char *v = eq + 1;
			str_trim(v);
			scan_value_clean(v);
			if (!(e.val = strdup(v))) {
				errf(err, errlen, "%s: out of memory", path);
				rc = -ENOMEM;
				break;
			}
		}
		rc = scan_push(sc, &e);
		if (rc) {
			free(e.val);
			break;
		}
	}
	if (!rc && ferror(f)) {
		rc = -EIO;
		errf(err, errlen, "%s: read error", path);
	}
out:
	free(lbuf);
	free(buf);
	fclose(f);
	return rc;
}

/* Apply every key of section sec among the first n entries, in file order. */
static int apply_section(struct job_build *b, const struct scan *sc, size_t n, const char *sec,
			 struct qs_job_file *f, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		const struct scan_ent *e = &sc->ent[i];
		if (!e->key[0] || strcmp(e->sec, sec))
			continue;
		const char *allowed = "";
		b->file = e->file;
		int rc = job_apply(b, e, f, &allowed);
		const char *v = e->val ? e->val : "";
		if (rc == -ENOENT) {
			errf(err, errlen, "%s:%u: [%s] unknown key '%s' (value '%s'); "
			     "see docs/BENCH-OUTPUT.md for the job options",
			     e->file, e->line, e->secname, e->key, v);
			return -EINVAL;
		}
		if (rc == -ENOMEM) {
			errf(err, errlen, "%s: out of memory", e->file);
			return rc;
		}
		if (rc == -ENOTSUP) {
			errf(err, errlen, "%s:%u: [%s] key '%s' value '%s': refused: %s",
			     e->file, e->line, e->secname, e->key, v, allowed);
			return -EINVAL;
		}
		if (rc == -ENODATA) {
			errf(err, errlen, "%s:%u: [%s] key '%s' has no value; allowed: %s",
			     e->file, e->line, e->secname, e->key, allowed);
			return -EINVAL;
		}
		if (rc) {
			errf(err, errlen, "%s:%u: [%s] key '%s' value '%s': allowed: %s",
			     e->file, e->line, e->secname, e->key, v, allowed);
			return -EINVAL;
		}
	}
	return 0;
}

/* The bytes of a size that may be a percentage of capacity (4 KiB down). */
static uint64_t pct_bytes(const struct pct_size *ps, uint64_t capacity)
{
	return ps->pct ? (uint64_t)((double)capacity * ps->pct_val / 100.0) / 4096 * 4096
		       : ps->bytes;
}

/* fio's rate (bytes/s per direction) as the job's rate_iops. */
/*
 * A mixed job (rw, randrw) capped per direction at iops[0] reads and
 * iops[1] writes per second, caps written unequal (differ): each direction
 * runs at its cap
 * when their sum paces the clone and a read is drawn with its share
 * (fio's rated directions take turns by their due times, not by
 * rwmixread). A direction unrated beside a rated one is refused: a clone
 * has one timeline. Returns 1 when it applies, 0 when not, -EINVAL.
 */
static int job_rate_mix(struct job_build *b, const double iops[2], bool differ,
			const char *key, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;
	if ((j->rw != QS_RW_RW && j->rw != QS_RW_RANDRW) || !differ || j->trace)
		return 0;
	if (!iops[0] || !iops[1] || j->rate_iops) {
		errf(err, errlen, "%s:%u: [%s] key '%s': allowed: a cap for both reads and "
		     "writes of a mixed job, or one value (a clone's I/Os have one timeline: "
		     "an unrated direction beside a rated one is not simulated)",
		     b->file_rate, b->line_rate, j->name, key);
		return -EINVAL;
	}
	j->rate_iops = iops[0] + iops[1];
	j->rate_mix = true;
	j->rate_read_share = iops[0] / j->rate_iops;
	return 1;
}

static int job_resolve_rate(struct job_build *b, const char *path, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;
	if (b->riops_set) {
		double io[2] = {(double)b->riops[0], (double)b->riops[1]};
		int rc = b->rate_set ? 0 : job_rate_mix(b, io, io[0] != io[1], "rate_iops",
							err, errlen);
		if (rc)
			return rc < 0 ? rc : 0;
		/* one direction's job, or equal caps: the directions' sum */
		bool issues[QS_JOB_DIRS] = {qs_job_reads(j), qs_job_writes(j), qs_job_trims(j)};
		for (int d = 0; d < QS_JOB_DIRS; d++)
			j->rate_iops += issues[d] ? (double)b->riops[d] : 0;
	}
	if (!b->rate_set)
		return 0;
	if (!j->rate_iops) {
		double io[2] = {(double)b->rate[0] / qs_job_mean_bs(j, 0),
				(double)b->rate[1] / qs_job_mean_bs(j, 1)};
		int rc = job_rate_mix(b, io, b->rate[0] != b->rate[1], "rate", err, errlen);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	const char *why = NULL;
	bool issues[QS_JOB_DIRS] = {qs_job_reads(j), qs_job_writes(j), qs_job_trims(j)};
	unsigned n = 0;
	double r = 0, bs = 0;
	for (int d = 0; d < QS_JOB_DIRS; d++) {
		if (!issues[d])
			continue;
		if (n && b->rate[d] != (uint64_t)(r / n))
			why = "one value for a job that issues several directions (the bench "
			      "paces a mixed job as a whole, not each direction)";
		n++;
		r += (double)b->rate[d];
		bs += qs_job_mean_bs(j, d);
	}
	if (j->rate_iops)
		why = "not with rate_iops in the same job (one rate)";
	else if (j->trace)
		why = "not for a trace job (the trace's time stamps pace it)";
	if (why) {
		errf(err, errlen, "%s:%u: [%s] key 'rate' value %" PRIu64 ",%" PRIu64 ",%" PRIu64
		     ": allowed: %s", b->file_rate, b->line_rate, j->name, b->rate[0], b->rate[1],
		     b->rate[2], why);
		return -EINVAL;
	}
	/* a mixed job's caps are equal: each direction at its rate, together
	 * at their sum, over the mean of their sizes */
	j->rate_iops = r / (bs / n);
	return 0;
}

/* fio's blockalign: the bench draws random offsets on the grid of the
 * smallest size the job issues (fio's default blockalign); another
 * boundary is refused. */
static int job_resolve_align(struct job_build *b, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;
	bool issues[QS_JOB_DIRS] = {qs_job_reads(j), qs_job_writes(j), qs_job_trims(j)};
	for (int d = 0; d < QS_JOB_DIRS; d++) {
		if (!issues[d] || !b->align[d] || b->align[d] == j->bs)
			continue;
		errf(err, errlen, "%s:%u: [%s] key 'blockalign' value %" PRIu64 ": allowed: %" PRIu64
		     " (the smallest size the job issues, whole 4 KiB blocks: the bench draws "
		     "random offsets on that grid, fio's default)", b->file_align, b->line_align,
		     j->name, b->align[d], j->bs);
		return -EINVAL;
	}
	return 0;
}

/* random_distribution=zoned/zoned_abs: each zone's blocks, from the span's
 * start on. */
static int job_resolve_zones(struct job_build *b, const char *path, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;
	if (j->dist != QS_DIST_ZONED)
		return 0;
	uint64_t nb = j->size / j->bs, first = 0;
	double given = 0;
	for (unsigned i = 0; i < j->nzones; i++)
		given += b->zone_size[i] > 0 ? b->zone_size[i] : 0;
	const char *why = NULL;
	if (!b->zones_abs && b->zone_size[j->nzones - 1] > 0 && fabs(given - 100) > 1e-6)
		why = "zone sizes summing to 100 percent (or the last empty: the rest)";
	for (unsigned i = 0; !why && i < j->nzones; i++) {
		double zs = b->zone_size[i];
		uint64_t n;
		if (zs < 0 || (!b->zones_abs && i == j->nzones - 1))
			n = nb > first ? nb - first : 0; /* the rest */
		else if (b->zones_abs)
			n = (uint64_t)zs / j->bs;
		else
			n = (uint64_t)(zs * (double)nb / 100.0 + 0.5);
		if (!n || n > nb - first) {
			why = b->zones_abs ? "zones of at least bs each, all within size"
					   : "zones of at least one block (bs) of size each";
			break;
		}
		j->zones[i].first = first;
		j->zones[i].nblocks = n;
		first += n;
	}
	if (why) {
		errf(err, errlen, "%s:%u: [%s] key 'random_distribution': %u zones over %" PRIu64
		     " blocks of %" PRIu64 " bytes: allowed: %s", b->file_dist, b->line_dist, j->name,
		     j->nzones, nb, j->bs, why);
		return -EINVAL;
	}
	return 0;
}

/* A column map goes with the csv format, and csv needs one. */
static int job_resolve_trace(struct job_build *b, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;
	bool cols = j->trace_cols.col[QS_TF_OFFSET] != 0;
	if (!j->trace)
		return 0;
	if (cols && j->trace_format != QS_TRACE_AUTO && j->trace_format != QS_TRACE_CSV) {
		errf(err, errlen, "%s:%u: [%s] key 'trace_columns': allowed only with "
		     "trace_format=csv (or auto), not %s, whose columns are fixed", b->file_cols,
		     b->line_cols, j->name, qs_trace_format_name(j->trace_format));
		return -EINVAL;
	}
	if (b->key_sync && (j->fsync_every || j->barrier_every || j->end_fsync ||
			    j->sync_writes)) {
		errf(err, errlen, "%s:%u: [%s] key '%s': allowed only for a job that generates "
		     "its I/O, not with a trace (which carries its own flushes and FUA writes)",
		     b->file_sync, b->line_sync, j->name, b->key_sync);
		return -EINVAL;
	}
	if (!cols && j->trace_format == QS_TRACE_CSV) {
		errf(err, errlen, "%s:%u: [%s] key 'trace' with trace_format=csv: needs "
		     "trace_columns, the column map (e.g. trace_columns=time:1:s,op:2,offset:3:sector,size:4:B)",
		     j->trace_file, j->trace_line, j->name);
		return -EINVAL;
	}
	return 0;
}

/* Turn percentages into bytes and check that every clone's span fits. */
static int job_resolve(struct job_build *b, uint64_t capacity, bool runtime_given,
		       const char *path, char *err, size_t errlen)
{
	struct qs_job *j = &b->job;

	if (b->offset.set)
		j->offset = pct_bytes(&b->offset, capacity);
	/* fio aligns a percentage offset up, to offset_align */
	if (b->offset.set && b->offset.pct && b->offset_align && j->offset % b->offset_align)
		j->offset += b->offset_align - j->offset % b->offset_align;
	if (j->offset >= capacity) {
		errf(err, errlen, "%s:%u: [%s] key 'offset' value %" PRIu64
		     ": allowed: below the capacity %" PRIu64 " bytes",
		     b->offset.file ? b->offset.file : b->sec_file, b->offset.line, j->name,
		     j->offset, capacity);
		return -EINVAL;
	}
	if (job_resolve_trace(b, err, errlen))
		return -EINVAL;
	if (j->trace && j->numjobs != 1) {
		errf(err, errlen, "%s:%u: [%s] key 'numjobs' value %u: allowed: 1 "
		     "for a trace job", b->line_numjobs ? b->file_numjobs : b->sec_file,
		     b->line_numjobs ? b->line_numjobs : j->line,
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
			     b->file_offset_inc ? b->file_offset_inc : b->sec_file,
			     b->line_offset_inc, j->name, j->offset_increment,
			     capacity);
			return -EINVAL;
		}
		last += (uint64_t)(j->numjobs - 1) * j->offset_increment;
		if (last >= capacity) {
			errf(err, errlen, "%s:%u: [%s] key 'offset_increment' value "
			     "%" PRIu64 ": allowed: offset + (numjobs - 1) * "
			     "offset_increment below the capacity %" PRIu64,
			     b->file_offset_inc ? b->file_offset_inc : b->sec_file,
			     b->line_offset_inc, j->name, j->offset_increment,
			     capacity);
			return -EINVAL;
		}
	}
	/* fio: filesize is the file (the span), size then the bytes of I/O;
	 * fill_device writes to the end of the device */
	const struct pct_size *span = b->filesize.set ? &b->filesize : &b->size;
	const char *span_key = b->filesize.set ? "filesize" : "size";
	if (span->set && !b->fill_device)
		j->size = pct_bytes(span, capacity);
	else
		j->size = capacity - last; /* fio: the rest of the file */
	if (j->size > capacity - last) {
		errf(err, errlen, "%s:%u: [%s] key '%s' value %" PRIu64 ": allowed: "
		     "at most %" PRIu64 " (capacity %" PRIu64 " minus the last "
		     "clone's offset %" PRIu64 ")", span->line ? span->file : b->sec_file,
		     span->line ? span->line : j->line, j->name, span_key, j->size,
		     capacity - last, capacity, last);
		return -EINVAL;
	}
	j->bs_max = j->bs;
	if (j->nbss[0] || j->nbss[1] || j->nbss[2]) {
		/* several sizes: the smallest the job issues is the grid of the
		 * offsets (a direction it does not issue changes nothing) */
		bool issues[QS_JOB_DIRS] = {qs_job_reads(j), qs_job_writes(j), qs_job_trims(j)};
		uint64_t lo = UINT64_MAX, hi = 0;
		for (int d = 0; d < QS_JOB_DIRS; d++) {
			if (!j->nbss[d]) {
				j->bss[d][0] = (struct qs_job_bss){j->bs, j->bs, 100, 0};
				j->nbss[d] = 1;
			}
			for (unsigned i = 0; issues[d] && i < j->nbss[d]; i++) {
				lo = j->bss[d][i].lo < lo ? j->bss[d][i].lo : lo;
				hi = j->bss[d][i].hi > hi ? j->bss[d][i].hi : hi;
			}
		}
		j->bs = lo;
		j->bs_max = hi;
		for (unsigned i = 0; qs_job_trims(j) && !j->trace && i < j->nbss[2]; i++) {
			if (!j->bss[2][i].req)
				continue;
			/* a trace's trims are rounded inward; a generated size
			 * has no inside to round to */
			errf(err, errlen, "%s:%u: [%s] key '%s': trims of %" PRIu64 " bytes: "
			     "allowed: trims of whole 4 KiB blocks (a discard rounded out "
			     "to the simulated drive's blocks would trim bytes the job did "
			     "not ask for): give trims a multiple of 4k (bs=R,W,T)",
			     b->file_bs, b->line_bs, j->name, b->key_bs, j->bss[2][i].req);
			return -EINVAL;
		}
	}
	if (!j->trace && j->size < j->bs_max) {
		errf(err, errlen, "%s:%u: [%s] key '%s' value %" PRIu64 ": allowed: "
		     "at least bs (%" PRIu64 ")", span->line ? span->file : b->sec_file,
		     span->line ? span->line : j->line, j->name, span_key, j->size, j->bs_max);
		return -EINVAL;
	}
	uint64_t io = j->size;
	if (b->io_size.set)
		io = pct_bytes(&b->io_size, capacity);
	else if (b->filesize.set && b->size.set && !b->fill_device)
		io = pct_bytes(&b->size, capacity);
	uint64_t loops = b->loops ? b->loops : 1;
	if (io > UINT64_MAX / loops) {
		errf(err, errlen, "%s:%u: [%s] key 'loops' value %" PRIu64 ": allowed: loops "
		     "times the bytes of one loop (%" PRIu64 ") below 2^64", b->sec_file, j->line,
		     j->name, loops, io);
		return -EINVAL;
	}
	j->io_bytes = io * loops;
	if (b->strided || j->zone_size) {
		bool random = qs_job_rw_random(j->rw);
		const char *why = !b->strided	 ? "zonesize and zoneskip only with zonemode=strided"
				  : !j->zone_size ? "zonemode=strided needs a zonesize above 0"
				  : random || j->seq_skip
					  ? "zonemode=strided with a sequential pattern without :N "
					    "(random zones are not simulated)"
				  : j->zone_size < j->bs_max ? "a zonesize of at least bs"
							     : NULL;
		if (why) {
			errf(err, errlen, "%s:%u: [%s] key 'zonemode': allowed: %s", b->file_zone,
			     b->line_zone, j->name, why);
			return -EINVAL;
		}
	}
	int rc = job_resolve_rate(b, path, err, errlen);
	if (!rc)
		rc = job_resolve_zones(b, path, err, errlen);
	if (!rc)
		rc = job_resolve_align(b, err, errlen);
	if (!rc && j->flow && (j->rate_iops || j->trace)) {
		errf(err, errlen, "%s:%u: [%s] key 'flow' value %u: allowed only in a job that is "
		     "neither paced (rate, rate_iops) nor a trace: the bench holds back a clone "
		     "that issues as fast as it can, a paced one keeps its schedule", b->file_flow,
		     b->line_flow, j->name, j->flow);
		rc = -EINVAL;
	}
	if (rc)
		return rc;
	if (j->ss_dur_ns && j->ss == QS_SS_NONE) {
		errf(err, errlen, "%s:%u: [%s] key 'steadystate_duration' value %.9g s: allowed "
		     "only with a steadystate criterion (steadystate=iops_slope:0.5%%)",
		     b->file_ss_time, b->line_ss_time, j->name, (double)j->ss_dur_ns / 1e9);
		return -EINVAL;
	}
	if (j->ss_dur_ns && (j->ss_dur_ns % j->ss_interval_ns ||
			     j->ss_dur_ns / j->ss_interval_ns < 2 ||
			     j->ss_dur_ns / j->ss_interval_ns > QS_JOB_SS_MAX_SAMPLES)) {
		errf(err, errlen, "%s:%u: [%s] key 'steadystate_duration' value %.9g s: allowed: "
		     "2 to %u times steadystate_check_interval (%.9g s), a whole number of them",
		     b->file_ss_time, b->line_ss_time, j->name, (double)j->ss_dur_ns / 1e9,
		     QS_JOB_SS_MAX_SAMPLES, (double)j->ss_interval_ns / 1e9);
		return -EINVAL;
	}
	if (j->time_based && !j->runtime_ns && !runtime_given) {
		errf(err, errlen, "%s:%u: [%s] key 'time_based' value 1: allowed "
		     "only with a runtime above 0 (in the file or --runtime)", b->sec_file, j->line,
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
	for (size_t i = 0; i < f->njobs; i++) {
		free(f->jobs[i].trace);
		free(f->jobs[i].noeffect);
		free(f->jobs[i].write_iolog);
	}
	free(f->jobs);
	free(f->path);
	free(f->ignored);
	for (size_t i = 0; i < f->nopt_store; i++) {
		free((char *)f->opt_store[i].key);
		free((char *)f->opt_store[i].val);
	}
	free(f->opt_store);
	for (size_t i = 0; i < f->nfiles; i++)
		free(f->files[i]);
	free(f->files);
	free(f);
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
		     "earlier job of the same group (%s)", b->file_wait_for, b->line_wait_for, b->job.name,
		     b->wait_for, why);
		return -EINVAL;
	}
	b->job.wait_back = (unsigned)(f->njobs - (k - 1));
	return 0;
}

/*
 * The key=value entries of section sec (lowercased name) among sc's, as
 * fio's JSON lists them: in file order, a repeated key once with its last
 * value, bare flags left out. Appended to f's store; *first, *n: where.
 * 0 or -ENOMEM.
 */
static int job_opts_collect(struct qs_job_file *f, const struct scan *sc, const char *sec,
			    size_t *first, size_t *n)
{
	*first = f->nopt_store;
	*n = 0;
	for (size_t i = 0; i < sc->n; i++) {
		const struct scan_ent *e = &sc->ent[i];
		if (!e->key[0] || !e->val || strcmp(e->sec, sec))
			continue;
		size_t k = *first;
		while (k < f->nopt_store && strcmp(f->opt_store[k].key, e->key))
			k++;
		char *val = strdup(e->val);
		if (!val)
			return -ENOMEM;
		if (k < f->nopt_store) {
			free((char *)f->opt_store[k].val);
			f->opt_store[k].val = val;
			continue;
		}
		char *key = strdup(e->key);
		if (!key) {
			free(val);
			return -ENOMEM;
		}
		f->opt_store[f->nopt_store++] = (struct qs_report_opt){key, val};
		(*n)++;
	}
	return 0;
}

/* Every job's options and the globals' into f (the store holds at most
 * one entry per scanned line); 0 or -ENOMEM. */
static int job_opts_fill(struct qs_job_file *f, const struct scan *sc)
{
	size_t first, n;
	f->opt_store = calloc(sc->n ? sc->n : 1, sizeof(*f->opt_store));
	if (!f->opt_store || job_opts_collect(f, sc, "global", &first, &n))
		return -ENOMEM;
	f->gopts = f->opt_store + first;
	f->ngopts = n;
	for (size_t i = 0; i < f->njobs; i++) {
		char sec[QS_JOB_NAME_MAX];
		snprintf(sec, sizeof(sec), "%s", f->jobs[i].name);
		str_lower(sec);
		if (job_opts_collect(f, sc, sec, &first, &n))
			return -ENOMEM;
		f->jobs[i].opts = f->opt_store + first;
		f->jobs[i].nopts = n;
	}
	return 0;
}

/* fio's reporting groups: a job with stonewall or new_group starts the
 * next group once the current one has a job (fio's add_job rule). */
static void job_groups_number(struct qs_job_file *f)
{
	unsigned gid = 0;
	for (size_t i = 0; i < f->njobs; i++) {
		struct qs_job *j = &f->jobs[i];
		if (i && (j->stonewall || j->new_group))
			gid++;
		j->groupid = gid;
	}
}

/*
 * A job's sizes and offsets written in bytes for the real drive (fio's
 * cross-stripe-verify.fio: offset_increment=124g for 30 clones of a 3.7 TB
 * drive) scaled down with the model, as --cache is: each of size,
 * filesize, offset, offset_increment and io_size given in bytes (not in %)
 * divided by scale (the real drive's capacity over the model's), 4 KiB
 * down; j->scaled names them. false when there is nothing to scale.
 */
static bool job_scale_abs(struct job_build *b, double scale)
{
	struct qs_job *j = &b->job;
	struct {
		const char *key;
		uint64_t *v;
	} abs[5] = {
		{"size", b->size.set && !b->size.pct ? &b->size.bytes : NULL},
		{"filesize", b->filesize.set && !b->filesize.pct ? &b->filesize.bytes : NULL},
		{"offset", b->offset.set && !b->offset.pct ? &b->offset.bytes : NULL},
		{"offset_increment", j->offset_increment ? &j->offset_increment : NULL},
		{"io_size", b->io_size.set && !b->io_size.pct ? &b->io_size.bytes : NULL},
	};
	size_t n = 0;
	for (size_t i = 0; i < 5; i++) {
		if (!abs[i].v || !*abs[i].v)
			continue;
		uint64_t v = (uint64_t)((double)*abs[i].v / scale) / 4096 * 4096;
		/* a size stays one block at least; an offset may become 0 */
		*abs[i].v = v || i == 2 ? v : 4096;
		n += (size_t)snprintf(j->scaled + n, sizeof(j->scaled) - n, "%s%s",
				      n ? ", " : "", abs[i].key);
	}
	j->scaled_by = scale;
	return n > 0;
}

/* Resolve b; a job whose byte sizes do not fit capacity is resolved again
 * with them scaled (job_scale_abs), kept if it fits then, else refused
 * with the error of the sizes as written. */
static int job_resolve_scaled(struct job_build *b, uint64_t capacity, double scale,
			      bool runtime_given, const char *path, char *err, size_t errlen)
{
	struct job_build keep = *b;
	int rc = job_resolve(b, capacity, runtime_given, path, err, errlen);
	if (rc != -EINVAL || scale <= 1 || b->job.trace)
		return rc;
	struct job_build sc = keep;
	char err2[512];
	if (!job_scale_abs(&sc, scale) ||
	    job_resolve(&sc, capacity, runtime_given, path, err2, sizeof(err2)))
		return rc;
	*b = sc;
	return 0;
}

static int job_file_load_runtime(const char *path, uint64_t capacity, uint64_t runtime_ns,
				 double scale, struct qs_job_file **out, char *err,
				 size_t errlen)
{
	struct scan sc = {0};
	struct scan_ent cur = {0};
	struct qs_job_file *f = NULL;
	int rc;

	*out = NULL;
	if (!capacity || capacity % 4096) {
		errf(err, errlen, "%s: capacity %" PRIu64 " must be a positive "
		     "multiple of 4096", path, capacity);
		return -EINVAL;
	}
	rc = scan_file(path, &sc, &cur, 0, err, errlen);
	if (rc)
		goto out;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path)) ||
	    !(f->jobs = calloc(sc.n ? sc.n : 1, sizeof(*f->jobs)))) {
		errf(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	/* the jobs point at the file names (buffered_file) */
	f->files = sc.files;
	f->nfiles = sc.nfiles;
	sc.files = NULL;
	sc.nfiles = 0;
	f->capacity = capacity;
	for (size_t i = 0; i < sc.n; i++) {
		const struct scan_ent *e = &sc.ent[i];
		if (e->key[0] || !strcmp(e->sec, "global"))
			continue;
		struct job_build b;
		job_defaults(&b);
		snprintf(b.job.name, sizeof(b.job.name), "%s", e->secname);
		b.job.line = e->line;
		b.sec_file = e->file;
		/* As in fio, a [global] only shapes the jobs that follow it. */
		rc = apply_section(&b, &sc, i, "global", f, err, errlen);
		if (!rc)
			rc = apply_section(&b, &sc, sc.n, e->sec, f, err, errlen);
		if (!rc)
			rc = job_resolve_scaled(&b, capacity, scale, runtime_ns != UINT64_MAX,
						path, err, errlen);
		if (!rc)
			rc = job_resolve_wait(&b, f, path, err, errlen);
		if (rc) {
			free(b.job.trace);
			free(b.job.noeffect);
			free(b.job.write_iolog);
			goto out;
		}
		f->jobs[f->njobs++] = b.job;
	}
	if (!f->njobs) {
		errf(err, errlen, "%s: no job section (only [global] or nothing)",
		     path);
		rc = -EINVAL;
		goto out;
	}
	job_groups_number(f);
	rc = job_opts_fill(f, &sc);
	if (rc)
		errf(err, errlen, "%s: out of memory", path);
out:
	scan_free(&sc);
	if (rc)
		qs_job_file_free(f);
	else
		*out = f;
	return rc;
}

int qs_job_file_load_scaled(const char *path, uint64_t capacity, uint64_t runtime_ns,
			    double scale, struct qs_job_file **out, char *err, size_t errlen)
{
	int rc = job_file_load_runtime(path, capacity, runtime_ns, scale, out, err, errlen);
	if (rc < 0)
		qs_text_vis_msg(err, errlen); /* the file's bytes, quoted, as text */
	return rc;
}

int qs_job_file_load_runtime(const char *path, uint64_t capacity, uint64_t runtime_ns,
			     struct qs_job_file **out, char *err, size_t errlen)
{
	return qs_job_file_load_scaled(path, capacity, runtime_ns, 1, out, err, errlen);
}

int qs_job_file_load(const char *path, uint64_t capacity,
		     struct qs_job_file **out, char *err, size_t errlen)
{
	return qs_job_file_load_runtime(path, capacity, UINT64_MAX, out, err, errlen);
}
