/* SPDX-License-Identifier: MIT */
/* qs_config: strict INI configuration of one daemon instance. */
#include "host/config.h"
#include "host/text.h"
#include "qlcshape/format.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

enum cfg_type {
	CFG_STR,    /* char *: a path or name, non-empty */
	CFG_QLC,    /* char *: a path or emu:PROFILE */
	CFG_U32,    /* uint32_t in [min, max] */
	CFG_I32,    /* int32_t in [min, max] */
	CFG_SIZE32, /* uint32_t byte size in [min, max], multiple of 4096 */
	CFG_SIZE64, /* uint64_t byte size in [min, max], multiple of 4096 */
	CFG_IU,	    /* uint32_t: "auto" (0) or a power-of-two size in [min, max] */
	CFG_BOOL,   /* bool: yes/no, true/false, on/off, 1/0 */
	CFG_ENUM,   /* an enum (int-sized) named by one of names[] */
	CFG_BACKING, /* char *: "ram", "none" or an absolute path */
	CFG_SIZE64A, /* uint64_t: "auto" (0) or a byte size as CFG_SIZE64 */
	CFG_BUDGET,  /* uint64_t: "auto" (QS_CONF_DRAM_AUTO), "none" (0) or a size */
};

struct cfg_key {
	const char *section, *key;
	enum cfg_type type;
	size_t off;	   /* in struct qs_config */
	int64_t min, max;  /* numeric range (inclusive) */
	const char *names; /* CFG_ENUM: "a|b|c", value = index */
	bool engine;	   /* lives in qs_config.engine: overlaid, not defaulted */
};

#define OFF(f) offsetof(struct qs_config, f)
#define KIB ((int64_t)1024)
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)
#define TIB (1024 * GIB)

static const struct cfg_key cfg_keys[] = {
	{"devices", "fast", CFG_STR, OFF(fast), 0, 0, NULL, false},
	{"devices", "qlc", CFG_QLC, OFF(qlc), 0, 0, NULL, false},
	{"devices", "iu", CFG_IU, OFF(iu_bytes), QS_CONF_IU_MIN, QS_CONF_IU_MAX, NULL, false},
	{"engine", "mode", CFG_ENUM, OFF(engine.mode), 0, 0, "cache|passthrough", true},
	{"engine", "segment_blocks", CFG_U32, OFF(engine.segment_blocks), QS_CONF_SEGMENT_BLOCKS_MIN,
	 QS_CONF_SEGMENT_BLOCKS_MAX, NULL, true},
	{"engine", "group_commit_blocks", CFG_U32, OFF(engine.group_commit_blocks), 2,
	 QS_CONF_SEGMENT_BLOCKS_MAX, NULL, true},
	{"engine", "log_qd", CFG_U32, OFF(engine.log_qd), 1, QS_CONF_LOG_QD_MAX, NULL, true},
	{"engine", "destage_qd", CFG_U32, OFF(engine.destage_qd), 1, QS_CONF_DESTAGE_QD_MAX, NULL, true},
	{"engine", "dram_buffer", CFG_SIZE64, OFF(engine.dram_buffer_bytes), 0, TIB, NULL, true},
	{"engine", "bypass_min", CFG_SIZE64, OFF(engine.bypass_min_bytes), 0, GIB, NULL, true},
	{"engine", "size", CFG_SIZE64, OFF(engine.qlc_size), 0, 1024 * TIB, NULL, true},
	{"engine", "placement", CFG_ENUM, OFF(engine.placement), 0, 0, "inplace|log", true},
	{"engine", "op_pct", CFG_U32, OFF(engine.op_pct), 5, 50, NULL, true},
	{"engine", "band_size", CFG_SIZE64, OFF(engine.band_bytes), 128 * KIB, 64 * GIB, NULL, true},
	{"engine", "gc", CFG_ENUM, OFF(engine.gc_victim), 0, 0, "greedy|cost-benefit", true},
	{"engine", "map_dram_limit", CFG_SIZE64, OFF(engine.map_dram_limit), (int64_t)QS_CONF_MAP_DRAM_MIN,
	 64 * TIB, NULL, true},
	{"engine", "dram_limit", CFG_BUDGET, OFF(engine.dram_limit), 1 * MIB, 64 * TIB, NULL, true},
	{"policy", "order", CFG_ENUM, OFF(engine.policy.order), 0, 0, "fifo|sweep|fullest", true},
	{"policy", "partial", CFG_ENUM, OFF(engine.policy.partial), 0, 0, "fill|hold", true},
	{"policy", "hold_ms", CFG_U32, OFF(engine.policy.hold_ms), 0, 3600000, NULL, true},
	{"policy", "start_pct", CFG_U32, OFF(engine.policy.start_pct), 0, 100, NULL, true},
	{"policy", "urgent_pct", CFG_U32, OFF(engine.policy.urgent_pct), 0, 100, NULL, true},
	{"policy", "idle_ms", CFG_U32, OFF(engine.policy.idle_ms), 0, 86400000, NULL, true},
	{"policy", "max_age_ms", CFG_U32, OFF(engine.policy.max_age_ms), 0, 86400000, NULL, true},
	{"policy", "pace_pct", CFG_U32, OFF(engine.policy.pace_pct), 0, 99, NULL, true},
	{"daemon", "control_socket", CFG_STR, OFF(control_socket), 0, 0, NULL, false},
	{"daemon", "drain_on_stop", CFG_BOOL, OFF(drain_on_stop), 0, 1, NULL, false},
	{"daemon", "backend", CFG_ENUM, OFF(backend), 0, 0, "engine|ram", false},
	{"daemon", "ram_size", CFG_SIZE64, OFF(ram_size), 1 * MIB, 64 * GIB, NULL, false},
	{"emu", "backing", CFG_BACKING, OFF(emu_backing), 0, 0, NULL, false},
	{"emu", "size", CFG_SIZE64, OFF(emu_size), 1 * MIB, 64 * TIB, NULL, false},
	{"emu", "model_size", CFG_SIZE64A, OFF(emu_model_size), 1 * MIB, 1024 * TIB, NULL, false},
	{"emu", "precondition", CFG_ENUM, OFF(emu_precondition), 0, 0, "seq|random|none", false},
	{"ublk", "queues", CFG_U32, OFF(queues), 1, 64, NULL, false},
	{"ublk", "queue_depth", CFG_U32, OFF(queue_depth), 1, 4096, NULL, false},
	{"ublk", "max_io", CFG_SIZE32, OFF(max_io_bytes), 4 * KIB, 1 * MIB, NULL, false},
	{"ublk", "dev_id", CFG_I32, OFF(dev_id), -1, 1 << 20, NULL, false},
	{"ublk", "user_recovery", CFG_BOOL, OFF(user_recovery), 0, 1, NULL, false},
};
#define CFG_NKEYS (sizeof(cfg_keys) / sizeof(cfg_keys[0]))

_Static_assert(CFG_NKEYS <= QS_CONFIG_MAX_KEYS, "grow QS_CONFIG_MAX_KEYS");
_Static_assert(sizeof(enum qs_mode) == sizeof(int) && sizeof(enum qs_order) == sizeof(int) &&
		       sizeof(enum qs_partial) == sizeof(int) &&
		       sizeof(enum qs_backend_kind) == sizeof(int),
	       "CFG_ENUM stores an int");

static void cfg_defaults(struct qs_config *c)
{
	c->control_socket = NULL; /* filled after load: strdup needs checking */
	c->drain_on_stop = true;
	c->backend = QS_BACKEND_ENGINE;
	c->ram_size = 256 * MIB;
	c->emu_size = 1 * GIB;
	c->emu_model_size = 0;
	c->emu_precondition = 0; /* seq */
	c->queues = 1;
	c->queue_depth = 64;
	c->max_io_bytes = 512 * KIB;
	c->dev_id = -1;
	c->user_recovery = false;
}

#define QS_CONFIG_DEFAULT_SOCKET "/run/qlcshaped.sock"

int qs_config_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1ull << 10; end++; break;
	case 'm': mult = 1ull << 20; end++; break;
	case 'g': mult = 1ull << 30; end++; break;
	case 't': mult = 1ull << 40; end++; break;
	default: break;
	}
	if (mult != 1 && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'b' || end[1] == 'B'))
		end += 2;
	else if (mult != 1 && (end[0] == 'b' || end[0] == 'B'))
		end++;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

/* One key=value line as scanned from the file. */
struct cfg_line {
	char section[64], key[64];
	char *value; /* comment and quotes removed */
	int line;
};

struct cfg_scan {
	struct cfg_line *lines;
	size_t n, cap;
};

static char *cfg_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static void cfg_lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static int cfg_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cfg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const struct cfg_key *cfg_find(const char *section, const char *key)
{
	for (size_t i = 0; i < CFG_NKEYS; i++)
		if (!strcmp(cfg_keys[i].section, section) && (!key || !strcmp(cfg_keys[i].key, key)))
			return &cfg_keys[i];
	return NULL;
}

/* "a, b, c": the keys of a section, for "unknown key" messages. */
static void cfg_section_keys(const char *section, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < CFG_NKEYS && used < len; i++) {
		if (strcmp(cfg_keys[i].section, section))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 cfg_keys[i].key);
	}
}

/*
 * The reader (docs/DAEMON.md, "Config syntax"): one line is a blank, a
 * comment (';' or '#' first), a [section] (a comment may follow), or
 * key = value. A value ends at a ';' or '#' that follows a blank (so
 * /run/a#b.sock stays whole), or is "quoted" (taken as it is). No line
 * continuation: a value ending in '\' is refused, and a comment ending in
 * one is only a comment. A UTF-8 byte order mark opening the file is
 * skipped; a NUL or another control character, or a line over
 * QS_CONFIG_MAX_LINE bytes, is refused naming the line and column. Also
 * refused: keys outside a section, unknown sections and keys, repeats.
 * Text echoed in messages is made visible (cfg_vis).
 */
static int cfg_scan_file(const char *path, struct cfg_scan *sc, char *err, size_t errlen)
{
	char section[64] = "", *buf = NULL, vis[160];
	size_t bufcap = 0;
	ssize_t got;
	int lineno = 0, ret = 0;
	FILE *f = fopen(path, "re");
	struct stat st;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		fclose(f);
		return cfg_err(err, errlen, "%s: not a regular file (%s); give the path of "
			       "the config file", path, S_ISDIR(st.st_mode) ? "a directory" :
			       "a device, pipe or socket");
	}
	while ((got = getline(&buf, &bufcap, f)) >= 0) {
		char *s = buf, *eq, *v;
		size_t len = (size_t)got;

		lineno++;
		if (len && s[len - 1] == '\n')
			s[--len] = 0;
		if (len && s[len - 1] == '\r')
			s[--len] = 0;
		if (lineno == 1 && len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
			s += 3; /* what some editors put first: not content */
			len -= 3;
		}
		if (len > QS_CONFIG_MAX_LINE) {
			ret = cfg_err(err, errlen, "%s:%d: line longer than %d characters (%zu)",
				      path, lineno, QS_CONFIG_MAX_LINE, len);
			break;
		}
		for (size_t i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)s[i];

			if (ch < 0x20 && ch != '\t') {
				ret = cfg_err(err, errlen, "%s:%d: %s byte 0x%02x at column %zu; "
					      "the file must be text", path, lineno,
					      ch ? "control" : "NUL", ch, i + 1);
				goto out;
			}
		}
		s = cfg_trim(s);
		if (!*s || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');
			char *rest = close ? cfg_trim(close + 1) : NULL;

			if (!close) {
				ret = cfg_err(err, errlen, "%s:%d: malformed section header '%s': "
					      "no ']'", path, lineno, qs_text_vis(vis, sizeof(vis), s));
				break;
			}
			if (*rest && *rest != ';' && *rest != '#') {
				ret = cfg_err(err, errlen, "%s:%d: malformed section header: '%s' "
					      "follows the ']'; put keys on lines of their own",
					      path, lineno, qs_text_vis(vis, sizeof(vis), rest));
				break;
			}
			*close = 0;
			snprintf(section, sizeof(section), "%s", cfg_trim(s + 1));
			cfg_lower(section);
			if (!cfg_find(section, NULL)) {
				ret = cfg_err(err, errlen,
					      "%s:%d: unknown section [%s]; allowed: [devices], "
					      "[engine], [policy], [daemon], [emu], [ublk]",
					      path, lineno, qs_text_vis(vis, sizeof(vis), section));
				break;
			}
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			ret = cfg_err(err, errlen, "%s:%d: expected 'key = value', found '%s'",
				      path, lineno, qs_text_vis(vis, sizeof(vis), s));
			break;
		}
		*eq = 0;
		v = cfg_trim(eq + 1);
		s = cfg_trim(s);
		cfg_lower(s);
		if (!*section) {
			ret = cfg_err(err, errlen, "%s:%d: key '%s' outside any [section]", path,
				      lineno, qs_text_vis(vis, sizeof(vis), s));
			break;
		}
		if (!cfg_find(section, s)) {
			char keys[512];

			cfg_section_keys(section, keys, sizeof(keys));
			ret = cfg_err(err, errlen,
				      "%s:%d: unknown key '%s' in [%s]; allowed keys: %s", path,
				      lineno, qs_text_vis(vis, sizeof(vis), s), section, keys);
			break;
		}
		for (size_t i = 0; i < sc->n; i++) {
			if (!strcmp(sc->lines[i].section, section) && !strcmp(sc->lines[i].key, s)) {
				ret = cfg_err(err, errlen,
					      "%s:%d: key '%s.%s' repeated (first set on line %d)",
					      path, lineno, section, s, sc->lines[i].line);
				goto out;
			}
		}
		if (*v == '"') {
			char *q = strchr(v + 1, '"');
			char *rest = q ? cfg_trim(q + 1) : NULL;

			if (!q || (*rest && *rest != ';' && *rest != '#')) {
				ret = cfg_err(err, errlen, "%s:%d: key '%s.%s': %s", path, lineno,
					      section, s, q ? "text after the closing '\"'"
							    : "a value opened with '\"' needs a "
							      "closing '\"' on the same line");
				break;
			}
			*q = 0;
			v++;
		} else {
			for (char *c = v; *c; c++) {
				if ((*c == ';' || *c == '#') && c > v && isspace((unsigned char)c[-1])) {
					*c = 0;
					break;
				}
			}
			v = cfg_trim(v);
			if (*v && v[strlen(v) - 1] == '\\') {
				ret = cfg_err(err, errlen, "%s:%d: key '%s.%s' = '%s' ends with a "
					      "backslash: continuation lines are not supported; "
					      "write the value on one line (or quote it)", path,
					      lineno, section, s, qs_text_vis(vis, sizeof(vis), v));
				break;
			}
		}
		if (sc->n == sc->cap) {
			size_t cap = sc->cap ? sc->cap * 2 : 32;
			struct cfg_line *nl = realloc(sc->lines, cap * sizeof(*nl));

			if (!nl) {
				ret = -ENOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				break;
			}
			sc->lines = nl;
			sc->cap = cap;
		}
		struct cfg_line *l = &sc->lines[sc->n];
		l->value = strdup(v);
		if (!l->value) {
			ret = -ENOMEM;
			snprintf(err, errlen, "%s: out of memory", path);
			break;
		}
		snprintf(l->section, sizeof(l->section), "%s", section);
		snprintf(l->key, sizeof(l->key), "%s", s);
		l->line = lineno;
		sc->n++;
	}
out:
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error at line %d: %s", path, lineno + 1,
			 strerror(errno));
	}
	free(buf);
	fclose(f);
	return ret;
}

static bool cfg_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* "64K" style rendering of a range bound for messages. */
static void cfg_fmt_size(char *buf, size_t len, int64_t v)
{
	if (v >= TIB && v % TIB == 0)
		snprintf(buf, len, "%" PRId64 "T", v / TIB);
	else if (v >= GIB && v % GIB == 0)
		snprintf(buf, len, "%" PRId64 "G", v / GIB);
	else if (v >= MIB && v % MIB == 0)
		snprintf(buf, len, "%" PRId64 "M", v / MIB);
	else if (v >= KIB && v % KIB == 0)
		snprintf(buf, len, "%" PRId64 "K", v / KIB);
	else
		snprintf(buf, len, "%" PRId64, v);
}

/* CFG_STR, CFG_QLC: an absolute path (or emu:PROFILE), copied */
static int cfg_parse_path(struct qs_config *c, const struct cfg_key *k, const char *val,
			  int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	char *copy;

	if (!*val)
		return cfg_err(err, errlen, "%s:%d: key '%s.%s' is empty; expected a path",
			       file, line, k->section, k->key);
	if (k->type == CFG_QLC && !strncmp(val, "emu:", 4)) {
		const char *p = val + 4;

		if (!*p)
			return cfg_err(err, errlen,
				       "%s:%d: key '%s.%s' = '%s': 'emu:' needs a profile "
				       "name (emu:PROFILE)",
				       file, line, k->section, k->key, val);
		/* A name (looked up at start-up) or a profile file's absolute path. */
		for (; *p && val[4] != '/'; p++)
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
			    *p != '.')
				return cfg_err(err, errlen,
					       "%s:%d: key '%s.%s' = '%s': profile name "
					       "allows letters, digits, '-', '_', '.' (or "
					       "give an absolute path: emu:/dir/NAME.ini)",
					       file, line, k->section, k->key, val);
	} else if (val[0] != '/') {
		return cfg_err(err, errlen,
			       "%s:%d: key '%s.%s' = '%s': expected an absolute path%s",
			       file, line, k->section, k->key, val,
			       k->type == CFG_QLC ? " or emu:PROFILE" : "");
	}
	copy = strdup(val);
	if (!copy)
		return -ENOMEM;
	*(char **)dst = copy;
	return 0;
}

/* CFG_BACKING: ram, none or an absolute path, copied */
static int cfg_parse_backing(struct qs_config *c, const struct cfg_key *k, const char *val,
			     int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	char *copy;

	if (strcmp(val, "ram") && strcmp(val, "none") && val[0] != '/')
		return cfg_err(err, errlen,
			       "%s:%d: key '%s.%s' = '%s': expected ram, none or the "
			       "absolute path of a file or block device",
			       file, line, k->section, k->key, val);
	copy = strdup(val);
	if (!copy)
		return -ENOMEM;
	*(char **)dst = copy;
	return 0;
}

/* CFG_U32, CFG_I32: an integer in [min, max] */
static int cfg_parse_int(struct qs_config *c, const struct cfg_key *k, const char *val,
			 int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	char *end;
	long long v;

	errno = 0;
	v = strtoll(val, &end, 10);
	if (!*val || *end || errno || v < k->min || v > k->max)
		return cfg_err(err, errlen,
			       "%s:%d: key '%s.%s' = '%s': expected an integer in "
			       "%" PRId64 "..%" PRId64,
			       file, line, k->section, k->key, val, k->min, k->max);
	if (k->type == CFG_U32)
		*(uint32_t *)dst = (uint32_t)v;
	else
		*(int32_t *)dst = (int32_t)v;
	return 0;
}

/* CFG_IU, CFG_SIZE32, CFG_SIZE64, CFG_SIZE64A: a byte size (or auto) */
static int cfg_parse_size(struct qs_config *c, const struct cfg_key *k, const char *val,
			  int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	char lo[32], hi[32];
	uint64_t v;

	if (k->type == CFG_IU && !strcasecmp(val, "auto")) {
		*(uint32_t *)dst = 0;
		return 0;
	}
	if (k->type == CFG_SIZE64A && !strcasecmp(val, "auto")) {
		*(uint64_t *)dst = 0;
		return 0;
	}
	if (k->type == CFG_BUDGET && (!strcasecmp(val, "auto") || !strcasecmp(val, "none"))) {
		*(uint64_t *)dst = !strcasecmp(val, "auto") ? QS_CONF_DRAM_AUTO : 0;
		return 0;
	}
	cfg_fmt_size(lo, sizeof(lo), k->min);
	cfg_fmt_size(hi, sizeof(hi), k->max);
	if (qs_config_parse_size(val, &v) || v < (uint64_t)k->min ||
	    v > (uint64_t)k->max || v % 4096)
		return cfg_err(err, errlen,
			       "%s:%d: key '%s.%s' = '%s': expected %sa size in %s..%s "
			       "bytes, a multiple of 4096 (suffixes K, M, G, T)",
			       file, line, k->section, k->key, val,
			       k->type == CFG_BUDGET			    ? "'auto', 'none' or "
			       : k->type == CFG_IU || k->type == CFG_SIZE64A ? "'auto' or "
									      : "",
			       lo, hi);
	if (k->type == CFG_IU && !cfg_is_pow2(v))
		return cfg_err(err, errlen,
			       "%s:%d: key '%s.%s' = '%s': the IU must be a power of two "
			       "in %s..%s",
			       file, line, k->section, k->key, val, lo, hi);
	if (k->type == CFG_SIZE64 || k->type == CFG_SIZE64A || k->type == CFG_BUDGET)
		*(uint64_t *)dst = v;
	else
		*(uint32_t *)dst = (uint32_t)v;
	return 0;
}

/* CFG_BOOL */
static int cfg_parse_bool(struct qs_config *c, const struct cfg_key *k, const char *val,
			  int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(val, yes[i])) {
			*(bool *)dst = true;
			return 0;
		}
		if (!strcasecmp(val, no[i])) {
			*(bool *)dst = false;
			return 0;
		}
	}
	return cfg_err(err, errlen,
		       "%s:%d: key '%s.%s' = '%s': expected yes or no (true/false, "
		       "on/off, 1/0)",
		       file, line, k->section, k->key, val);
}

/* CFG_ENUM: one of the names, stored as its index */
static int cfg_parse_enum(struct qs_config *c, const struct cfg_key *k, const char *val,
			  int line, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *file = c->file;
	const char *p = k->names;
	int idx = 0;
	size_t n = strlen(val);

	while (*p) {
		size_t len = strcspn(p, "|");

		if (len == n && !strncasecmp(p, val, n)) {
			*(int *)dst = idx;
			return 0;
		}
		p += len;
		if (*p == '|')
			p++;
		idx++;
	}
	return cfg_err(err, errlen, "%s:%d: key '%s.%s' = '%s': expected one of %s", file,
		       line, k->section, k->key, val, k->names);
}

/* Parse and range-check one value; the message names everything. */
static int cfg_parse_value(struct qs_config *c, const struct cfg_key *k, const char *val,
			   int line, char *err, size_t errlen)
{
	switch (k->type) {
	case CFG_STR:
	case CFG_QLC:
		return cfg_parse_path(c, k, val, line, err, errlen);
	case CFG_BACKING:
		return cfg_parse_backing(c, k, val, line, err, errlen);
	case CFG_U32:
	case CFG_I32:
		return cfg_parse_int(c, k, val, line, err, errlen);
	case CFG_IU:
	case CFG_SIZE32:
	case CFG_SIZE64:
	case CFG_SIZE64A:
	case CFG_BUDGET:
		return cfg_parse_size(c, k, val, line, err, errlen);
	case CFG_BOOL:
		return cfg_parse_bool(c, k, val, line, err, errlen);
	case CFG_ENUM:
		return cfg_parse_enum(c, k, val, line, err, errlen);
	}
	return -EINVAL;
}

void qs_config_free(struct qs_config *c)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (cfg_keys[i].type == CFG_STR || cfg_keys[i].type == CFG_QLC ||
		    cfg_keys[i].type == CFG_BACKING) {
			char **p = (char **)((char *)c + cfg_keys[i].off);
			free(*p);
			*p = NULL;
		}
	}
	free(c->file);
	c->file = NULL;
}

static int cfg_index(const char *name);

/* The [emu] keys describe an emulated QLC: refused without one. */
static int cfg_check_emu(const struct qs_config *c, char *err, size_t errlen)
{
	bool emu = c->qlc && !strncmp(c->qlc, "emu:", 4);

	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (strcmp(cfg_keys[i].section, "emu") || !c->set[i] || emu)
			continue;
		return cfg_err(err, errlen,
			       "%s:%d: key 'emu.%s' applies only to an emulated QLC "
			       "(devices.qlc = emu:PROFILE); devices.qlc is %s%s%s",
			       c->file, c->line[i], cfg_keys[i].key, c->qlc ? "'" : "",
			       c->qlc ? c->qlc : "not set", c->qlc ? "'" : "");
	}
	if (emu && c->emu_model_size && c->emu_model_size < c->emu_size) {
		int i = cfg_index("emu.model_size");

		return cfg_err(err, errlen,
			       "%s:%d: key 'emu.model_size' = %llu bytes: expected auto or at "
			       "least emu.size (%llu bytes): the emulated drive is the first "
			       "emu.size bytes of the model",
			       c->file, c->line[i], (unsigned long long)c->emu_model_size,
			       (unsigned long long)c->emu_size);
	}
	return 0;
}

int qs_config_load(struct qs_config *c, const char *path, char *err, size_t errlen)
{
	struct cfg_scan sc = {0};
	int ret;

	memset(c, 0, sizeof(*c));
	cfg_defaults(c);
	c->file = strdup(path);
	if (!c->file)
		return -ENOMEM;
	ret = cfg_scan_file(path, &sc, err, errlen);
	if (ret)
		goto out;
	for (size_t i = 0; i < sc.n; i++) {
		const struct cfg_line *l = &sc.lines[i];
		const struct cfg_key *k = cfg_find(l->section, l->key);
		ret = cfg_parse_value(c, k, l->value, l->line, err, errlen);
		if (ret) {
			/* The message echoes the value: made visible. */
			char *raw = strdup(err);

			if (raw)
				qs_text_vis(err, errlen, raw);
			free(raw);
			goto out;
		}
		c->set[k - cfg_keys] = true;
		c->line[k - cfg_keys] = l->line;
	}
	if (!c->qlc && c->backend == QS_BACKEND_ENGINE) {
		ret = cfg_err(err, errlen,
			      "%s: key 'devices.qlc' is missing; expected a path or emu:PROFILE "
			      "(only daemon.backend = ram does without)",
			      path);
		goto out;
	}
	if (c->backend == QS_BACKEND_ENGINE && !c->fast &&
	    !(qs_config_is_set(c, "engine.mode") && c->engine.mode == QS_MODE_PASSTHROUGH)) {
		ret = cfg_err(err, errlen,
			      "%s: key 'devices.fast' is missing; required unless engine.mode = "
			      "passthrough",
			      path);
		goto out;
	}
	if (qs_config_is_set(c, "engine.dram_limit") && qs_config_is_set(c, "engine.map_dram_limit")) {
		/* One budget: map pages get what the rest leaves of dram_limit. */
		ret = cfg_err(err, errlen,
			      "%s:%d: key 'engine.map_dram_limit' with key 'engine.dram_limit' (line "
			      "%d): set one; dram_limit is the engine's whole DRAM and gives map "
			      "pages what the rest leaves", path,
			      qs_config_key_line(c, "engine.map_dram_limit"),
			      qs_config_key_line(c, "engine.dram_limit"));
		goto out;
	}
	ret = cfg_check_emu(c, err, errlen);
	if (ret)
		goto out;
	if ((uint64_t)c->queues * c->queue_depth > QS_CONFIG_RING_MAX - QS_CONFIG_RING_EXTRA) {
		const char *key = qs_config_is_set(c, "ublk.queue_depth") ? "ublk.queue_depth"
									   : "ublk.queues";
		ret = cfg_err(err, errlen,
			      "%s:%d: key '%s': queues %u x queue_depth %u = %llu ublk commands, "
			      "with the engine's %d entries more than the %d an io_uring holds; "
			      "allowed: queues x queue_depth up to %d (queue_depth up to %u with "
			      "%u queues)", path, qs_config_key_line(c, key), key, c->queues,
			      c->queue_depth, (unsigned long long)c->queues * c->queue_depth,
			      QS_CONFIG_RING_EXTRA, QS_CONFIG_RING_MAX,
			      QS_CONFIG_RING_MAX - QS_CONFIG_RING_EXTRA,
			      (QS_CONFIG_RING_MAX - QS_CONFIG_RING_EXTRA) / c->queues, c->queues);
		goto out;
	}
	if (!c->control_socket) {
		c->control_socket = strdup(QS_CONFIG_DEFAULT_SOCKET);
		if (!c->control_socket)
			ret = -ENOMEM;
	}
out:
	for (size_t i = 0; i < sc.n; i++)
		free(sc.lines[i].value);
	free(sc.lines);
	if (ret)
		qs_config_free(c);
	return ret;
}

static int cfg_index(const char *name)
{
	const char *dot = strchr(name, '.');
	char section[64];

	if (!dot || (size_t)(dot - name) >= sizeof(section))
		return -1;
	memcpy(section, name, (size_t)(dot - name));
	section[dot - name] = 0;
	for (size_t i = 0; i < CFG_NKEYS; i++)
		if (!strcmp(cfg_keys[i].section, section) && !strcmp(cfg_keys[i].key, dot + 1))
			return (int)i;
	return -1;
}

bool qs_config_is_set(const struct qs_config *c, const char *name)
{
	int i = cfg_index(name);

	return i >= 0 && c->set[i];
}

int qs_config_key_line(const struct qs_config *c, const char *name)
{
	int i = cfg_index(name);

	return i >= 0 && c->set[i] ? c->line[i] : 0;
}

/* The keys behind each field the engine's check can reject. */
static const struct {
	enum qs_conf_field field;
	const char *key, *also; /* also: the partner key the bound comes from */
} cfg_engine_fields[] = {
	{QS_CONF_FIELD_MODE, "engine.mode", NULL},
	{QS_CONF_FIELD_IU_BYTES, "devices.iu", NULL},
	{QS_CONF_FIELD_SEGMENT_BLOCKS, "engine.segment_blocks", NULL},
	{QS_CONF_FIELD_GROUP_COMMIT_BLOCKS, "engine.group_commit_blocks", "engine.segment_blocks"},
	{QS_CONF_FIELD_LOG_QD, "engine.log_qd", NULL},
	{QS_CONF_FIELD_DESTAGE_QD, "engine.destage_qd", NULL},
	{QS_CONF_FIELD_DRAM_BUFFER_BYTES, "engine.dram_buffer", NULL},
	{QS_CONF_FIELD_BYPASS_MIN_BYTES, "engine.bypass_min", "devices.iu"},
	{QS_CONF_FIELD_QLC_SIZE, "engine.size", "devices.iu"},
	{QS_CONF_FIELD_POLICY_ORDER, "policy.order", NULL},
	{QS_CONF_FIELD_POLICY_PARTIAL, "policy.partial", NULL},
	{QS_CONF_FIELD_POLICY_WATERMARKS, "policy.start_pct", "policy.urgent_pct"},
	{QS_CONF_FIELD_PLACEMENT, "engine.placement", NULL},
	{QS_CONF_FIELD_OP_PCT, "engine.op_pct", "engine.band_size"},
	{QS_CONF_FIELD_BAND_BYTES, "engine.band_size", "devices.iu"},
	{QS_CONF_FIELD_GC_VICTIM, "engine.gc", NULL},
	{QS_CONF_FIELD_POLICY_PACE, "policy.pace_pct", NULL},
	{QS_CONF_FIELD_MAP_DRAM_LIMIT, "engine.map_dram_limit", NULL},
	{QS_CONF_FIELD_DRAM_LIMIT, "engine.dram_limit", NULL},
};

int qs_config_check_engine(const struct qs_config *c, const struct qs_engine_conf *conf,
			   uint64_t qlc_bytes, uint64_t fast_bytes, char *err, size_t errlen)
{
	struct qs_conf_err why;
	int rc = qlc_bytes ? qs_engine_conf_check_qlc(conf, qlc_bytes, &why)
			   : qs_engine_conf_check(conf, &why);

	if (!rc && qlc_bytes && fast_bytes && conf->mode == QS_MODE_CACHE)
		rc = qs_engine_conf_check_dram(conf, fast_bytes, qlc_bytes, &why);
	if (!rc)
		return 0;
	for (size_t i = 0; i < sizeof(cfg_engine_fields) / sizeof(cfg_engine_fields[0]); i++) {
		const char *key = cfg_engine_fields[i].key, *also = cfg_engine_fields[i].also;
		int line;

		if (cfg_engine_fields[i].field != why.field)
			continue;
		/* Point at the key the file set: the named one, else its partner. */
		if (!qs_config_is_set(c, key) && also && qs_config_is_set(c, also))
			key = also;
		line = qs_config_key_line(c, key);
		if (line)
			return cfg_err(err, errlen, "%s:%d: key '%s' conflicts with the engine's "
				       "settings: %s", c->file, line, key, why.msg);
		return cfg_err(err, errlen, "%s: key '%s' (engine default, not in the file) "
			       "conflicts with the engine's settings: %s", c->file, key, why.msg);
	}
	return cfg_err(err, errlen, "%s: engine settings: %s", c->file, why.msg);
}

int qs_config_check_devices(const struct qs_config *c, char *err, size_t errlen)
{
	struct stat f, q;

	if (!c->fast || !c->qlc || !strncmp(c->qlc, "emu:", 4))
		return 0;
	if (stat(c->fast, &f) || stat(c->qlc, &q))
		return 0;
	bool same = S_ISBLK(f.st_mode) && S_ISBLK(q.st_mode) ? f.st_rdev == q.st_rdev
							      : f.st_dev == q.st_dev && f.st_ino == q.st_ino;
	if (!same)
		return 0;
	return cfg_err(err, errlen, "%s:%d: key 'devices.fast' ('%s') and key 'devices.qlc' "
		       "(line %d, '%s') name the same %s (device %u:%u, inode %llu): the log "
		       "would be written into the QLC's data; give the log its own device or "
		       "file", c->file, qs_config_key_line(c, "devices.fast"), c->fast,
		       qs_config_key_line(c, "devices.qlc"), c->qlc,
		       S_ISBLK(f.st_mode) ? "block device" : "file",
		       S_ISBLK(f.st_mode) ? major(f.st_rdev) : major(f.st_dev),
		       S_ISBLK(f.st_mode) ? minor(f.st_rdev) : minor(f.st_dev),
		       (unsigned long long)f.st_ino);
}

int qs_config_check_format_only(const struct qs_config *c, char *err, size_t errlen)
{
	if (c->backend != QS_BACKEND_ENGINE)
		return cfg_err(err, errlen, "%s:%d: --format-only: key 'daemon.backend' is not "
			       "'engine', so there is no log to format; drop --format-only",
			       c->file, qs_config_key_line(c, "daemon.backend"));
	if (qs_config_is_set(c, "engine.mode") && c->engine.mode == QS_MODE_PASSTHROUGH)
		return cfg_err(err, errlen, "%s:%d: --format-only: key 'engine.mode' value "
			       "'passthrough' keeps no log, so there is nothing to format; drop "
			       "--format-only, or set engine.mode = cache", c->file,
			       qs_config_key_line(c, "engine.mode"));
	return 0;
}

int qs_config_check_log(const struct qs_config *c, const void *sb_blocks, uint64_t fast_size,
			char *msg, size_t len)
{
	struct qs_fmt_sb sb[QS_FMT_SB_COPIES];
	int best = -1;

	for (unsigned i = 0; i < QS_FMT_SB_COPIES; i++) {
		memcpy(&sb[i], (const char *)sb_blocks + (size_t)i * 4096, sizeof(sb[i]));
		if (qs_fmt_sb_check(&sb[i], fast_size) == QS_FMT_OK &&
		    (best < 0 || sb[i].generation > sb[best].generation))
			best = (int)i;
	}
	if (best < 0 || !qs_config_is_set(c, "engine.segment_blocks") ||
	    sb[best].segment_blocks == c->engine.segment_blocks)
		return 0;
	snprintf(msg, len, "%s:%d: key 'engine.segment_blocks' is %u, but the log on %s was "
		 "formatted with %u; the log keeps %u until it is formatted again: start once "
		 "with --format to apply %u (erases the log: drain first), or set %u to match",
		 c->file, qs_config_key_line(c, "engine.segment_blocks"),
		 c->engine.segment_blocks, c->fast ? c->fast : "the fast device",
		 sb[best].segment_blocks, sb[best].segment_blocks, c->engine.segment_blocks,
		 sb[best].segment_blocks);
	return 1;
}

void qs_config_engine_conf(const struct qs_config *c, struct qs_engine_conf *conf)
{
	size_t base = offsetof(struct qs_config, engine);

	for (size_t i = 0; i < CFG_NKEYS; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		size_t width;

		if (!k->engine || !c->set[i])
			continue;
		width = k->type == CFG_SIZE64 || k->type == CFG_BUDGET ? sizeof(uint64_t)
									 : sizeof(uint32_t);
		memcpy((char *)conf + (k->off - base), (const char *)c + k->off, width);
	}
	/* map_dram_limit alone: no budget, the map pages as set (the two
	 * together are refused by qs_config_load) */
	if (qs_config_is_set(c, "engine.map_dram_limit") && !qs_config_is_set(c, "engine.dram_limit"))
		conf->dram_limit = 0;
	if (c->iu_bytes)
		conf->iu_bytes = c->iu_bytes;
}
