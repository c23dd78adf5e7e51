/* SPDX-License-Identifier: MIT */
/*
 * CSV traces: libCacheSim's block layout ("version,time,op,size,lbn", the
 * layout of its data/ directory) and any CSV placed by a column map
 * (trace_columns). trace.h describes both.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"
#include "host/text.h"

int trace_csv_split(char *s, char **fld, int max)
{
	int n = 0;
	for (char *p = s;;) {
		char *c = strchr(p, ',');
		if (n == max)
			return max + 1;
		if (c)
			*c = 0;
		fld[n++] = trace_trim(p);
		if (!c)
			return n;
		p = c + 1;
	}
}

/* An unsigned integer, decimal or 0x hex, filling the string. */
static bool csv_u64(const char *s, uint64_t *out)
{
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
		char *end;
		if (!isxdigit((unsigned char)s[2]))
			return false;
		errno = 0;
		*out = strtoull(s + 2, &end, 16);
		return !errno && !*end;
	}
	return trace_parse_u64(s, out);
}

/* A SCSI opcode: one or two hex digits, with or without 0x. */
static bool csv_scsi(const char *s, unsigned *op)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	size_t n = strlen(s);
	if (n < 1 || n > 2 || strspn(s, "0123456789abcdefABCDEF") != n)
		return false;
	*op = (unsigned)strtoul(s, NULL, 16);
	return true;
}

/*
 * What a SCSI opcode does to the replay: 1 with io->op set (READ and WRITE
 * of 6, 10, 12 and 16 bytes, SYNCHRONIZE CACHE 10 and 16), 0 for a command
 * that moves no data the replay would carry (INQUIRY, UNMAP, ...).
 */
static int csv_scsi_op(unsigned op, struct qs_io *io)
{
	switch (op) {
	case 0x08: case 0x28: case 0xa8: case 0x88:
		io->op = QS_IO_READ;
		return 1;
	case 0x0a: case 0x2a: case 0xaa: case 0x8a:
		io->op = QS_IO_WRITE;
		return 1;
	case 0x35: case 0x91:
		io->op = QS_IO_SYNC;
		return 1;
	default:
		return 0;
	}
}

/* libCacheSim's header line. */
static bool lcs_header(char *const *fld, int n)
{
	static const char *const names[] = {"version", "time", "op", "size", "lbn"};
	if (n != 5)
		return false;
	for (int i = 0; i < 5; i++)
		if (strcasecmp(fld[i], names[i]))
			return false;
	return true;
}

bool trace_lcs_line(const char *s)
{
	char buf[256], *fld[6];
	uint64_t u;
	unsigned op;
	snprintf(buf, sizeof(buf), "%s", s);
	int n = trace_csv_split(buf, fld, 5);
	if (lcs_header(fld, n))
		return true;
	return n == 5 && trace_parse_u64(fld[0], &u) && trace_parse_ns(fld[1], 1, &u) &&
	       csv_scsi(fld[2], &op) && trace_parse_u64(fld[3], &u) && trace_parse_u64(fld[4], &u);
}

/* Time, size and lbn of a libCacheSim line, checked. */
static int lcs_fields(struct qs_trace *t, char **fld, uint64_t *ns, uint64_t *size,
		      uint64_t *lbn, char *err, size_t errlen)
{
	uint64_t v;
	char q[80];
	if (!trace_parse_u64(fld[0], &v)) {
		snprintf(err, errlen, "%s:%u: version '%s': allowed an unsigned integer", t->path,
			 t->line, qs_text_vis(q, sizeof(q), fld[0]));
		return -EINVAL;
	}
	if (!trace_parse_ns(fld[1], 1000000000ull, ns)) {
		snprintf(err, errlen, "%s:%u: time '%s': allowed seconds, a number >= 0 (fractions "
			 "allowed)", t->path, t->line, qs_text_vis(q, sizeof(q), fld[1]));
		return -EINVAL;
	}
	if (!trace_parse_u64(fld[3], size) || !trace_parse_u64(fld[4], lbn) ||
	    *lbn > UINT64_MAX / 512) {
		snprintf(err, errlen, "%s:%u: size '%s' lbn '%s': allowed unsigned integers (size "
			 "in bytes, lbn in 512-byte sectors below 2^55)", t->path, t->line, fld[3],
			 fld[4]);
		return -EINVAL;
	}
	return 0;
}

int trace_parse_lcs(struct qs_trace *t, char *s, struct qs_io *io, char *err, size_t errlen)
{
	char *fld[6];
	uint64_t ns, size, lbn;
	unsigned op;
	int n = trace_csv_split(s, fld, 5);
	if (t->csv_first && lcs_header(fld, n))
		return 0;
	if (n != 5) {
		snprintf(err, errlen, "%s:%u: expected 5 comma-separated fields 'version,time,op,"
			 "size,lbn' (libCacheSim), found %s%d", t->path, t->line,
			 n > 5 ? "more than " : "", n > 5 ? 5 : n);
		return -EINVAL;
	}
	int rc = lcs_fields(t, fld, &ns, &size, &lbn, err, errlen);
	if (rc)
		return rc;
	if (!csv_scsi(fld[2], &op)) {
		snprintf(err, errlen, "%s:%u: op '%s': allowed a SCSI opcode in hex (28 read, 2a "
			 "write, ...)", t->path, t->line, fld[2]);
		return -EINVAL;
	}
	if (!csv_scsi_op(op, io) || (io->op != QS_IO_SYNC && !size))
		return 0; /* moves no data the replay carries */
	if ((rc = trace_set_time(t, io, ns, 1.0, "time", err, errlen)))
		return rc;
	if (io->op == QS_IO_SYNC)
		return 1;
	io->orig_off = lbn * 512;
	io->orig_len = size;
	return trace_map_range(t, io, err, errlen);
}

/* ---- CSV with a column map ---- */

static const char *const csv_field_names[QS_TF_N] = {"time", "op", "offset", "size"};

/* An op by name: read/r, write/w, trim/discard/d, flush/sync/f. */
static bool csv_op_name(const char *s, enum qs_io_op *op)
{
	static const struct {
		const char *name;
		enum qs_io_op op;
	} ops[] = {
		{"read", QS_IO_READ}, {"r", QS_IO_READ}, {"write", QS_IO_WRITE},
		{"w", QS_IO_WRITE}, {"trim", QS_IO_TRIM}, {"discard", QS_IO_TRIM},
		{"d", QS_IO_TRIM}, {"flush", QS_IO_SYNC}, {"sync", QS_IO_SYNC},
		{"f", QS_IO_SYNC},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcasecmp(s, ops[i].name)) {
			*op = ops[i].op;
			return true;
		}
	}
	return false;
}

/* The op column's value: 1 with io->op, 0 for a SCSI command without
 * data, -EINVAL. */
static int csv_op(struct qs_trace *t, const char *s, struct qs_io *io, char *err, size_t errlen)
{
	static const char *const allowed[] = {
		"read, r, write, w, trim, discard, d, flush, sync or f",
		"a SCSI opcode in hex (28 read, 2a write, ...)", "0 (write) or 1 (read)",
		"0 (read) or 1 (write)",
	};
	enum qs_io_op op;
	unsigned code;
	bool ok = true;
	switch (t->o.cols.opcode) {
	case QS_TOP_NAME:
		if ((ok = csv_op_name(s, &op)))
			io->op = op;
		break;
	case QS_TOP_SCSI:
		if ((ok = csv_scsi(s, &code)))
			return csv_scsi_op(code, io);
		break;
	case QS_TOP_W0R1:
	case QS_TOP_R0W1:
		ok = !strcmp(s, "0") || !strcmp(s, "1");
		io->op = (s[0] == '1') == (t->o.cols.opcode == QS_TOP_W0R1) ? QS_IO_READ
									    : QS_IO_WRITE;
		break;
	}
	if (ok)
		return 1;
	char q[80];
	snprintf(err, errlen, "%s:%u: column %u (op) '%s': allowed %s", t->path, t->line,
		 t->o.cols.col[QS_TF_OP], qs_text_vis(q, sizeof(q), s), allowed[t->o.cols.opcode]);
	return -EINVAL;
}

/* offset or size: an unsigned integer (or 0x hex) times its unit. */
static int csv_bytes(struct qs_trace *t, char **fld, enum qs_trace_field f, uint64_t *out,
		     char *err, size_t errlen)
{
	const struct qs_trace_cols *c = &t->o.cols;
	const char *s = fld[c->col[f] - 1];
	uint64_t v;
	if (csv_u64(s, &v) && !__builtin_mul_overflow(v, c->unit[f], out))
		return 0;
	char q[80];
	snprintf(err, errlen, "%s:%u: column %u (%s) '%s': allowed an unsigned integer (or 0x "
		 "hex) of %" PRIu64 "-byte units, below 2^64 bytes", t->path, t->line, c->col[f],
		 csv_field_names[f], qs_text_vis(q, sizeof(q), s), c->unit[f]);
	return -EINVAL;
}

/* The time column, if the map has one. */
static int csv_time(struct qs_trace *t, char **fld, struct qs_io *io, char *err, size_t errlen)
{
	const struct qs_trace_cols *c = &t->o.cols;
	uint64_t ns;
	if (!c->col[QS_TF_TIME])
		return 0;
	const char *s = fld[c->col[QS_TF_TIME] - 1];
	if (!trace_parse_ns(s, c->unit[QS_TF_TIME], &ns)) {
		char q[80];
		snprintf(err, errlen, "%s:%u: column %u (time) '%s': allowed a number >= 0 "
			 "(fractions allowed) of its unit, below 2^64 ns", t->path, t->line,
			 c->col[QS_TF_TIME], qs_text_vis(q, sizeof(q), s));
		return -EINVAL;
	}
	return trace_set_time(t, io, ns, 1.0, "time", err, errlen);
}

/* The highest column the map names. */
static unsigned csv_max_col(const struct qs_trace_cols *c)
{
	unsigned m = 0;
	for (int i = 0; i < QS_TF_N; i++)
		if (c->col[i] > m)
			m = c->col[i];
	return m;
}

int trace_parse_csv(struct qs_trace *t, char *s, struct qs_io *io, char *err, size_t errlen)
{
	char *fld[QS_TRACE_MAX_COL + 1];
	const struct qs_trace_cols *c = &t->o.cols;
	uint64_t v;
	unsigned need = csv_max_col(c);
	int n = trace_csv_split(s, fld, QS_TRACE_MAX_COL);
	/* a first line whose offset is no number names the columns */
	if (t->csv_first && (unsigned)n >= need && !csv_u64(fld[c->col[QS_TF_OFFSET] - 1], &v))
		return 0;
	if ((unsigned)n < need) {
		snprintf(err, errlen, "%s:%u: %d comma-separated fields: trace_columns needs %u",
			 t->path, t->line, n, need);
		return -EINVAL;
	}
	int rc = csv_op(t, fld[c->col[QS_TF_OP] - 1], io, err, errlen);
	if (rc <= 0)
		return rc;
	if ((rc = csv_time(t, fld, io, err, errlen)))
		return rc;
	if (io->op == QS_IO_SYNC)
		return 1;
	if ((rc = csv_bytes(t, fld, QS_TF_OFFSET, &io->orig_off, err, errlen)) ||
	    (rc = csv_bytes(t, fld, QS_TF_SIZE, &io->orig_len, err, errlen)))
		return rc;
	if (!io->orig_len)
		return 0; /* no data */
	return trace_map_range(t, io, err, errlen);
}

/* A unit of offset or size: B, sector, KiB or a number of bytes. */
static bool csv_byte_unit(const char *u, uint64_t *out)
{
	if (!strcasecmp(u, "B"))
		*out = 1;
	else if (!strcasecmp(u, "sector"))
		*out = 512;
	else if (!strcasecmp(u, "KiB"))
		*out = 1024;
	else
		return trace_parse_u64(u, out) && *out > 0;
	return true;
}

/* A unit of time: s, ms, us, ns, 100ns (Windows filetime). */
static bool csv_time_unit(const char *u, uint64_t *out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {{"s", 1000000000ull}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}, {"100ns", 100}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(u, units[i].name)) {
			*out = units[i].ns;
			return true;
		}
	}
	return false;
}

static bool csv_opcode_unit(const char *u, enum qs_trace_opcode *out)
{
	static const char *const names[] = {"name", "scsi", "w0r1", "r0w1"};
	for (int i = 0; i < 4; i++) {
		if (!strcmp(u, names[i])) {
			*out = (enum qs_trace_opcode)i;
			return true;
		}
	}
	return false;
}

/* The unit of field f (u NULL: the default; time has none). */
static int csv_unit(struct qs_trace_cols *c, int f, const char *u, char *err, size_t errlen)
{
	bool ok;
	if (f == QS_TF_TIME)
		ok = u && csv_time_unit(u, &c->unit[f]);
	else if (f == QS_TF_OP)
		ok = !u || csv_opcode_unit(u, &c->opcode);
	else if (u)
		ok = csv_byte_unit(u, &c->unit[f]);
	else
		ok = (c->unit[f] = 1) == 1; /* bytes */
	if (ok)
		return 0;
	static const char *const allowed[] = {
		"time needs a unit: s, ms, us, ns or 100ns (time:1:s)",
		"op's encoding: name, scsi, w0r1 or r0w1",
		"offset's unit: B, sector, KiB or a number of bytes",
		"size's unit: B, sector, KiB or a number of bytes",
	};
	snprintf(err, errlen, "%s%s%s", u ? "unit '" : "", u ? u : "", u ? "': " : "");
	size_t n = strlen(err);
	snprintf(err + n, errlen - n, "%s", allowed[f]);
	return -EINVAL;
}

/* One FIELD:COLUMN[:UNIT] item into c. */
static int csv_item(char *item, struct qs_trace_cols *c, char *err, size_t errlen)
{
	char *col = strchr(item, ':'), *unit = NULL;
	uint64_t v;
	if (col) {
		*col++ = 0;
		if ((unit = strchr(col, ':')))
			*unit++ = 0;
	}
	int f = 0;
	while (f < QS_TF_N && strcmp(item, csv_field_names[f]))
		f++;
	if (f == QS_TF_N) {
		snprintf(err, errlen, "field '%s': allowed time, op, offset, size", item);
		return -EINVAL;
	}
	if (!col || !trace_parse_u64(col, &v) || v < 1 || v > QS_TRACE_MAX_COL) {
		snprintf(err, errlen, "%s: a column from 1 to %d after the colon (%s:2)", item,
			 QS_TRACE_MAX_COL, item);
		return -EINVAL;
	}
	if (c->col[f]) {
		snprintf(err, errlen, "field %s given twice", item);
		return -EINVAL;
	}
	for (int i = 0; i < QS_TF_N; i++) {
		if (c->col[i] == v) {
			snprintf(err, errlen, "column %" PRIu64 " is both %s and %s", v,
				 csv_field_names[i], item);
			return -EINVAL;
		}
	}
	c->col[f] = (unsigned)v;
	return csv_unit(c, f, unit, err, errlen);
}

int qs_trace_columns_parse(const char *s, struct qs_trace_cols *c, char *err, size_t errlen)
{
	char buf[256];
	memset(c, 0, sizeof(*c));
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "at most %zu characters", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		int rc = csv_item(trace_trim(p), c, err, errlen);
		if (rc)
			return rc;
	}
	for (int f = QS_TF_OP; f < QS_TF_N; f++) {
		if (!c->col[f]) {
			snprintf(err, errlen, "needs op, offset and size (time too for a timed "
				 "replay), e.g. time:1:s,op:2,offset:3:sector,size:4:B");
			return -EINVAL;
		}
	}
	return 0;
}
