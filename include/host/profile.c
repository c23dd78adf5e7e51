/* SPDX-License-Identifier: MIT */
/* Drive profile loader: INI via iniparser, every value range-checked. */
#include "host/profile.h"
#include "host/text.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <iniparser.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum key_type { K_U32, K_U64, K_DBL, K_NS, K_MEDIA, K_ERW };

/*
 * One key of section [drive]. scale converts the file's unit to the
 * struct's (e.g. GB to bytes, us to ns); min and max are in the file's unit
 * so error messages quote what the user wrote.
 */
struct key_def {
	const char *name;
	enum key_type type;
	size_t off;
	double min, max, scale;
	int required;
};

#define F(x) offsetof(struct qs_profile, x)
static const struct key_def keys[] = {
	{"media", K_MEDIA, F(media), 0, 1, 1, 1},
	{"capacity_gb", K_U64, F(capacity_bytes), 1, 1e6, 1e9, 1},
	{"iu_kib", K_U32, F(iu_bytes), 4, 1024, 1024, 1},
	{"op_pct", K_DBL, F(op_pct), 0, 200, 1, 1},
	{"channels", K_U32, F(channels), 1, 64, 1, 1},
	{"dies_per_channel", K_U32, F(dies_per_channel), 1, 64, 1, 1},
	{"unit_ius", K_U32, F(unit_ius), 1, 256, 1, 1},
	{"superblocks", K_U32, F(superblocks), 16, 100000, 1, 0},
	{"gc_free_low", K_U32, F(gc_free_low), 2, 1000, 1, 0},
	{"t_read_us", K_NS, F(t_read_ns), 0.1, 10000, 1000, 1},
	{"t_prog_us", K_NS, F(t_prog_ns), 0.1, 100000, 1000, 1},
	{"t_erase_us", K_NS, F(t_erase_ns), 0, 100000, 1000, 0},
	{"block_units", K_U32, F(block_units), 1, 100000, 1, 0},
	{"channel_mbps", K_DBL, F(channel_mbps), 10, 100000, 1, 1},
	{"link_read_mbps", K_DBL, F(link_read_mbps), 10, 100000, 1, 1},
	{"link_write_mbps", K_DBL, F(link_write_mbps), 10, 100000, 1, 1},
	{"ctrl_units", K_U32, F(ctrl_units), 1, 64, 1, 1},
	{"ctrl_ns", K_NS, F(ctrl_ns), 1, 1e6, 1, 1},
	{"write_buffer_mib", K_U64, F(write_buffer_bytes), 0, 65536, 1048576, 0},
	{"plp", K_U32, F(plp), 0, 1, 1, 1},
	{"ftl_regions", K_U32, F(ftl_regions), 1, 1024, 1, 0},
	{"prog_passes", K_U32, F(prog_passes), 1, 16, 1, 0},
	{"unit_major", K_U32, F(unit_major), 0, 1, 1, 0},
	{"gc_paced", K_U32, F(gc_paced), 0, 1, 1, 0},
	{"power_w", K_DBL, F(power_w), 0.1, 1000, 1, 0},
	{"power_idle_w", K_DBL, F(power_idle_w), 0.01, 1000, 1, 0},
	{"prog_mw", K_DBL, F(prog_mw), 1, 100000, 1, 0},
	{"endurance_pbw", K_DBL, F(endurance_pbw), 0.001, 1e6, 1, 0},
	{"endurance_rw", K_ERW, F(endurance_rw), 0, 0, 1, 0},
	{"endurance_bs_kib", K_U32, F(endurance_bs_bytes), 4, 1024, 1024, 0},
	{"endurance_prog_amp", K_DBL, F(endurance_prog_amp), 1, 100, 1, 0},
};
#undef F

const char *qs_profile_endurance_rw_name(enum qs_endurance_rw rw)
{
	switch (rw) {
	case QS_ENDURANCE_RANDWRITE:
		return "randwrite";
	case QS_ENDURANCE_WRITE:
		return "write";
	case QS_ENDURANCE_NONE:
		break;
	}
	return "none";
}

/* PREFIX/share/qlcshape for a program installed as PREFIX/bin/NAME. */
static bool pf_share_dir(char *buf, size_t len)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = 0;
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return false;
		*slash = 0;
	}
	n = snprintf(buf, len, "%s/share/qlcshape", exe);
	return n > 0 && (size_t)n < len;
}

int qs_data_find(const char *file, char *path, size_t pathlen, char *err, size_t errlen)
{
	char share[4096], first[4200];

	snprintf(path, pathlen, "conf/%s", file);
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(first, sizeof(first), "%s", path);
	if (pf_share_dir(share, sizeof(share))) {
		snprintf(path, pathlen, "%s/%s", share, file);
		if (access(path, R_OK) == 0)
			return 0;
		snprintf(err, errlen, "neither %s nor %s exists", first, path);
	} else {
		snprintf(err, errlen, "%s does not exist", first);
	}
	snprintf(path, pathlen, "%s", first);
	return -ENOENT;
}

int qs_profile_find(const char *name, char *path, size_t pathlen, char *err, size_t errlen)
{
	const char *dir = getenv("QS_PROFILE_DIR");
	char file[512], why[8600];
	size_t n = strlen(name);
	int ret;

	if (strchr(name, '/') || (n > 4 && !strcmp(name + n - 4, ".ini"))) {
		snprintf(path, pathlen, "%s", name);
		if (access(path, R_OK) == 0)
			return 0;
		ret = -errno;
		snprintf(err, errlen, "profile %s: %s", name, strerror(errno));
		return ret;
	}
	if (dir && *dir) {
		snprintf(path, pathlen, "%s/%s.ini", dir, name);
		if (access(path, R_OK) == 0)
			return 0;
		snprintf(err, errlen, "profile '%s': %s does not exist ($QS_PROFILE_DIR)", name,
			 path);
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "profiles/%s.ini", name);
	ret = qs_data_find(file, path, pathlen, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "profile '%s': %s (set QS_PROFILE_DIR, or give a path)", name,
			 why);
	return ret;
}

void qs_profile_path(const char *name, char *buf, size_t buflen)
{
	char err[256];

	(void)qs_profile_find(name, buf, buflen, err, sizeof(err));
}

/*
 * iniparser keeps no line numbers, so find the line of [drive] key by
 * scanning the file ourselves; 0 when not found (a missing key).
 */
static int key_line(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512];
	int no = 0, found = 0, in_drive = 0;
	size_t klen = strlen(key);
	while (fgets(line, sizeof(line), f)) {
		no++;
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '[') {
			in_drive = !strncasecmp(s, "[drive]", 7);
			continue;
		}
		if (in_drive && !strncasecmp(s, key, klen)) {
			char *r = s + klen;
			while (*r == ' ' || *r == '\t')
				r++;
			if (*r == '=' || *r == ':') {
				found = no;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

static int bad(char *err, size_t errlen, const char *path, const char *key,
	       const char *val, const char *why)
{
	snprintf(err, errlen, "%s:%d: [drive] %s = '%s': %s", path, key_line(path, key), key,
		 val ? val : "", why);
	return -EINVAL;
}

/*
 * The endurance keys go together: a rating means nothing without the
 * pattern it was measured with. The pattern's blocks must be whole IUs:
 * the rating is then a number of bytes programmed once each (times the
 * pattern's GC: endurance_prog_amp), and the bench charges a run's own
 * amplification, IU effect and GC, on top of it (docs/MODEL.md).
 */
static int check_endurance(const struct qs_profile *p, const char *path, char *err,
			   size_t errlen)
{
	int has_pbw = p->endurance_pbw > 0, has_rw = p->endurance_rw != QS_ENDURANCE_NONE,
	    has_bs = p->endurance_bs_bytes != 0;
	if (!has_pbw && !has_rw && !has_bs) {
		if (p->endurance_prog_amp > 0) {
			snprintf(err, errlen, "%s: [drive] endurance_prog_amp needs a rating: "
				 "give endurance_pbw, endurance_rw and endurance_bs_kib too", path);
			return -EINVAL;
		}
		return 0;
	}
	const char *missing = !has_pbw ? "endurance_pbw" : !has_rw ? "endurance_rw"
				: !has_bs ? "endurance_bs_kib" : NULL;
	if (missing) {
		snprintf(err, errlen,
			 "%s: [drive] %s is missing: endurance_pbw, endurance_rw and "
			 "endurance_bs_kib go together (the rating and the pattern it was "
			 "measured with); give all three or none",
			 path, missing);
		return -EINVAL;
	}
	if (p->endurance_bs_bytes % p->iu_bytes) {
		char v[32], why[200];
		snprintf(v, sizeof(v), "%u", p->endurance_bs_bytes / 1024);
		snprintf(why, sizeof(why),
			 "must be a whole number of IUs (iu_kib = %u) in 4..1024: the "
			 "life figures charge the drive's IU amplification on top of the rating",
			 p->iu_bytes / 1024);
		return bad(err, errlen, path, "endurance_bs_kib", v, why);
	}
	return 0;
}

/*
 * The power keys go together: the budget for die programs is the active
 * power less the idle power, shared by programs of prog_mw each. Without
 * them no cap applies.
 */
static int check_power(const struct qs_profile *p, const char *path, char *err, size_t errlen)
{
	int n = (p->power_w > 0) + (p->power_idle_w > 0) + (p->prog_mw > 0);
	if (n == 0)
		return 0;
	if (n < 3) {
		snprintf(err, errlen, "%s: [drive] %s is missing: power_w, power_idle_w and "
			 "prog_mw go together (active and idle power, power of one die "
			 "program); give all three or none", path,
			 !(p->power_w > 0) ? "power_w" : !(p->power_idle_w > 0) ? "power_idle_w"
			 : "prog_mw");
		return -EINVAL;
	}
	if (p->power_idle_w + p->prog_mw / 1000.0 > p->power_w) {
		char v[32], why[200];
		snprintf(v, sizeof(v), "%g", p->power_idle_w);
		snprintf(why, sizeof(why), "leaves no power for one die program: power_w (%g) "
			 "must exceed power_idle_w + prog_mw / 1000 (%g)", p->power_w,
			 p->power_idle_w + p->prog_mw / 1000.0);
		return bad(err, errlen, path, "power_idle_w", v, why);
	}
	return 0;
}

/*
 * What iniparser accepts quietly or refuses without a line: keys before
 * [drive] (dropped), a repeated key (the last won), a misspelt or missing
 * [drive] (reported as "[drive] media is missing": getsecnkeys gives 0, not
 * -1), NUL bytes and long lines (the whole file refused, no line). The
 * scan refuses each by line, so iniparser only reads what it reads right.
 */
#define PF_MAX_LINE 1000
static int pf_scan(FILE *f, const char *path, char *err, size_t errlen)
{
	struct pf_key {
		char name[160]; /* "section:key" */
		int line;
	} seen[512];
	char sec[64] = "";
	size_t nseen = 0;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t got;
	int no = 0, drive = 0, rc = 0;

	while ((got = getline(&buf, &cap, f)) >= 0) {
		no++;
		size_t len = (size_t)got - (got && buf[got - 1] == '\n');
		if (len > PF_MAX_LINE) {
			snprintf(err, errlen, "%s:%d: line longer than %d characters (%zu)", path, no,
				 PF_MAX_LINE, len);
			rc = -EINVAL;
			break;
		}
		if (memchr(buf, 0, (size_t)got)) {
			snprintf(err, errlen, "%s:%d: NUL byte at column %zu; a profile must be text",
				 path, no, (size_t)((char *)memchr(buf, 0, (size_t)got) - buf) + 1);
			rc = -EINVAL;
			break;
		}
		char *s = buf;
		while (isspace((unsigned char)*s))
			s++;
		char *e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');
			if (!close || close[1]) {
				snprintf(err, errlen, "%s:%d: malformed section header '%.80s'%s", path,
					 no, s, close ? ": nothing may follow the ']' (put a comment "
						       "on a line of its own)" : ": no ']'");
				rc = -EINVAL;
				break;
			}
			/* [drive] for the model; [method.NAME] and [test.N] hold the
			 * calibration (bench/calibrate.c, docs/MODEL.md). */
			bool is_drive = !strncasecmp(s, "[drive]", 7) && close == s + 6;
			if (!is_drive && strncasecmp(s, "[method.", 8) && strncasecmp(s, "[test.", 6)) {
				snprintf(err, errlen, "%s:%d: unknown section '%.80s'; allowed: [drive], "
					 "[method.NAME], [test.N]", path, no, s);
				rc = -EINVAL;
				break;
			}
			*close = 0;
			for (size_t i = 0; i < nseen; i++) {
				if (!strchr(seen[i].name, ':') && !strcasecmp(seen[i].name, s + 1)) {
					snprintf(err, errlen, "%s:%d: [%.60s] repeats the one on line %d",
						 path, no, s + 1, seen[i].line);
					rc = -EINVAL;
					goto out;
				}
			}
			snprintf(sec, sizeof(sec), "%s", s + 1);
			if (nseen < sizeof(seen) / sizeof(seen[0])) {
				snprintf(seen[nseen].name, sizeof(seen[nseen].name), "%s", sec);
				seen[nseen++].line = no;
			}
			if (is_drive)
				drive = no;
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value', found '%.80s'", path, no,
				 s);
			rc = -EINVAL;
			break;
		}
		char *k = s;
		while (eq > k && isspace((unsigned char)eq[-1]))
			eq--;
		*eq = 0;
		if (!*sec) {
			snprintf(err, errlen, "%s:%d: key '%.60s' before [drive]; put it under "
				 "[drive]", path, no, k);
			rc = -EINVAL;
			break;
		}
		char full[160];
		snprintf(full, sizeof(full), "%s:%.80s", sec, k);
		for (size_t i = 0; i < nseen; i++) {
			if (!strcasecmp(seen[i].name, full)) {
				snprintf(err, errlen, "%s:%d: [%s] %.60s repeats the one on line "
					 "%d; give each key once", path, no, sec, k, seen[i].line);
				rc = -EINVAL;
				goto out;
			}
		}
		if (nseen < sizeof(seen) / sizeof(seen[0])) {
			snprintf(seen[nseen].name, sizeof(seen[nseen].name), "%s", full);
			seen[nseen++].line = no;
		}
	}
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s:%d: read error: %s", path, no + 1, strerror(errno));
		rc = -EIO;
	}
	if (!rc && !drive) {
		snprintf(err, errlen, "%s: no [drive] section (%d lines read); a profile's drive "
			 "keys go under [drive]", path, no);
		rc = -EINVAL;
	}
out:
	free(buf);
	return rc;
}

static int profile_load(const char *path, struct qs_profile *p, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot open profile: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a profile file (%s)", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "a device, pipe or socket");
		fclose(f);
		return -EINVAL;
	}
	int src = pf_scan(f, path, err, errlen);
	fclose(f);
	if (src)
		return src;
	dictionary *d = iniparser_load(path);
	if (!d) {
		snprintf(err, errlen, "%s: not a valid INI file", path);
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	p->superblocks = 1024;
	p->gc_free_low = 4;
	p->block_units = 1;
	p->ftl_regions = 1;
	p->prog_passes = 1;
	p->write_buffer_bytes = 0;
	int rc = 0;

	/* Name: the file's base name without .ini, unless [drive] name is set. */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(p->name, sizeof(p->name), "%s", base);
	char *dot = strstr(p->name, ".ini");
	if (dot)
		*dot = 0;
	const char *nm = iniparser_getstring(d, "drive:name", NULL);
	if (nm)
		snprintf(p->name, sizeof(p->name), "%s", nm);

	/* Reject keys we do not know: a typo must not silently keep a default. */
	int nk = iniparser_getsecnkeys(d, "drive");
	if (nk < 0) {
		snprintf(err, errlen, "%s: no [drive] section", path);
		iniparser_freedict(d);
		return -EINVAL;
	}
	const char **names = calloc((size_t)nk + 1, sizeof(*names));
	if (!names) {
		iniparser_freedict(d);
		return -ENOMEM;
	}
	iniparser_getseckeys(d, "drive", names);
	for (int i = 0; i < nk && !rc; i++) {
		const char *k = names[i] + strlen("drive:");
		int known = !strcmp(k, "name");
		for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
			known |= !strcmp(k, keys[j].name);
		if (!known)
			rc = bad(err, errlen, path, k, iniparser_getstring(d, names[i], ""),
				 "unknown key (see docs/MODEL.md for the keys of [drive])");
	}
	free(names);

	for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]) && !rc; j++) {
		const struct key_def *kd = &keys[j];
		char full[96], why[160];
		snprintf(full, sizeof(full), "drive:%s", kd->name);
		const char *v = iniparser_getstring(d, full, NULL);
		if (!v) {
			if (kd->required) {
				snprintf(err, errlen, "%s: [drive] %s is missing (required)", path,
					 kd->name);
				rc = -EINVAL;
			}
			continue;
		}
		char *p_ = (char *)p + kd->off;
		if (kd->type == K_MEDIA) {
			if (!strcasecmp(v, "nand"))
				*(enum qs_media *)(void *)p_ = QS_MEDIA_NAND;
			else if (!strcasecmp(v, "scm"))
				*(enum qs_media *)(void *)p_ = QS_MEDIA_SCM;
			else
				rc = bad(err, errlen, path, kd->name, v, "allowed: nand, scm");
			continue;
		}
		if (kd->type == K_ERW) {
			if (!strcmp(v, "randwrite"))
				*(enum qs_endurance_rw *)(void *)p_ = QS_ENDURANCE_RANDWRITE;
			else if (!strcmp(v, "write"))
				*(enum qs_endurance_rw *)(void *)p_ = QS_ENDURANCE_WRITE;
			else
				rc = bad(err, errlen, path, kd->name, v,
					 "allowed: randwrite, write (fio's rw of the rated pattern)");
			continue;
		}
		char *end;
		errno = 0;
		double x = strtod(v, &end);
		while (*end && isspace((unsigned char)*end))
			end++;
		if (end == v || *end || errno || x != x) {
			snprintf(why, sizeof(why), "not a number; allowed %g..%g", kd->min, kd->max);
			rc = bad(err, errlen, path, kd->name, v, why);
			continue;
		}
		if (x < kd->min || x > kd->max) {
			snprintf(why, sizeof(why), "out of range; allowed %g..%g", kd->min, kd->max);
			rc = bad(err, errlen, path, kd->name, v, why);
			continue;
		}
		if ((kd->type == K_U32 || kd->type == K_U64) && x != (double)(uint64_t)x) {
			snprintf(why, sizeof(why), "must be a whole number in %g..%g", kd->min,
				 kd->max);
			rc = bad(err, errlen, path, kd->name, v, why);
			continue;
		}
		double y = x * kd->scale;
		switch (kd->type) {
		case K_U32:
			*(uint32_t *)(void *)p_ = (uint32_t)y;
			break;
		case K_U64:
		case K_NS:
			*(uint64_t *)(void *)p_ = (uint64_t)(y + 0.5);
			break;
		case K_DBL:
			*(double *)(void *)p_ = y;
			break;
		case K_MEDIA:
		case K_ERW:
			break;
		}
	}
	if (!rc && (p->iu_bytes & (p->iu_bytes - 1))) {
		char v[32];
		snprintf(v, sizeof(v), "%u", p->iu_bytes / 1024);
		rc = bad(err, errlen, path, "iu_kib", v, "must be a power of two in 4..1024");
	}
	if (!rc && p->media == QS_MEDIA_NAND &&
	    p->write_buffer_bytes < 2ull * qs_profile_dies(p) * p->unit_ius * p->iu_bytes) {
		char v[32], why[160];
		snprintf(v, sizeof(v), "%llu",
			 (unsigned long long)(p->write_buffer_bytes >> 20));
		snprintf(why, sizeof(why),
			 "must hold two die stripes: at least %llu MiB for these dies and "
			 "unit_ius, at most 65536",
			 (unsigned long long)((2ull * qs_profile_dies(p) * p->unit_ius *
					       p->iu_bytes + (1 << 20) - 1) >> 20));
		rc = bad(err, errlen, path, "write_buffer_mib", v, why);
	}
	if (!rc && p->media == QS_MEDIA_NAND && 2ull * p->gc_free_low > p->superblocks) {
		/* The model would grow the drive to fit the watermark, quietly. */
		char v[32], why[200];
		snprintf(v, sizeof(v), "%u", p->gc_free_low);
		snprintf(why, sizeof(why),
			 "at most half of superblocks (%u): %u, or raise superblocks",
			 p->superblocks, p->superblocks / 2);
		rc = bad(err, errlen, path, "gc_free_low", v, why);
	}
	if (!rc && p->media == QS_MEDIA_NAND &&
	    4ull * p->ftl_regions + p->gc_free_low > p->superblocks) {
		/*
		 * Each region needs a superblock of data, an open host and an
		 * open GC superblock and one to make progress; short of them the
		 * model grows the drive, quietly (a profile of 3 KB with 700
		 * regions of 16 superblocks made a model of 3,417 superblocks
		 * and 14 GB of maps; found by tests/fuzz/fuzz_profile.c).
		 */
		char v[32], why[200];
		snprintf(v, sizeof(v), "%u", p->ftl_regions);
		snprintf(why, sizeof(why),
			 "each region needs 4 superblocks of its own: at most (superblocks %u - "
			 "gc_free_low %u) / 4 = %u, or raise superblocks", p->superblocks,
			 p->gc_free_low,
			 p->superblocks > p->gc_free_low ? (p->superblocks - p->gc_free_low) / 4 : 0);
		rc = bad(err, errlen, path, "ftl_regions", v, why);
	}
	if (!rc)
		rc = check_endurance(p, path, err, errlen);
	if (!rc)
		rc = check_power(p, path, err, errlen);
	iniparser_freedict(d);
	return rc;
}

int qs_profile_load(const char *path, struct qs_profile *p, char *err, size_t errlen)
{
	int rc = profile_load(path, p, err, errlen);
	if (rc < 0)
		qs_text_vis_msg(err, errlen); /* the file's bytes, quoted, as text */
	return rc;
}
