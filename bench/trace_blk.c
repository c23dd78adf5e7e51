/* SPDX-License-Identifier: MIT */
/*
 * blktrace traces: the binary records blktrace writes (struct blk_io_trace
 * of <linux/blktrace_api.h>, one file per CPU, merged by time as blkparse
 * merges them) and blkparse's default text output. Both take only queued
 * (Q) requests, classified by one function, so that the two readers of
 * one trace yield the same requests (tests/test_trace.c checks them
 * against blkparse itself).
 */
#include <byteswap.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/blktrace_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"

/* blktrace's per-CPU files a base name may have. */
#define BLK_MAX_FILES 4096

/* One input file and the record it is at. */
struct blk_in {
	char *path;
	FILE *f;
	uint64_t size;		 /* bytes, to tell a cut record from the end */
	bool swap;		 /* written on a machine of the other byte order */
	bool have;		 /* rec holds its next record */
	struct blk_io_trace rec; /* host byte order */
	uint64_t recno, next_off; /* rec's number (from 1), the byte after it */
};

struct trace_blk {
	struct blk_in *in;
	unsigned n;
	unsigned siblings; /* one NAME.blktrace.N named alone: the others there */
};

bool trace_blk_magic(const unsigned char *b, size_t n)
{
	if (n < 4)
		return false;
	uint32_t m;
	memcpy(&m, b, 4);
	return (m & 0xffffff00u) == BLK_IO_TRACE_MAGIC ||
	       (bswap_32(m) & 0xffffff00u) == BLK_IO_TRACE_MAGIC;
}

unsigned trace_blk_files(const struct qs_trace *t)
{
	return t->blk->n;
}

unsigned trace_blk_siblings(const struct qs_trace *t)
{
	return t->blk->siblings;
}

void trace_blk_close(struct qs_trace *t)
{
	if (!t->blk)
		return;
	for (unsigned i = 0; i < t->blk->n; i++) {
		if (t->blk->in[i].f)
			fclose(t->blk->in[i].f);
		free(t->blk->in[i].path);
	}
	free(t->blk->in);
	free(t->blk);
	t->blk = NULL;
}

static void blk_swap(struct blk_io_trace *r)
{
	r->magic = bswap_32(r->magic);
	r->sequence = bswap_32(r->sequence);
	r->time = bswap_64(r->time);
	r->sector = bswap_64(r->sector);
	r->bytes = bswap_32(r->bytes);
	r->action = bswap_32(r->action);
	r->pid = bswap_32(r->pid);
	r->device = bswap_32(r->device);
	r->cpu = bswap_32(r->cpu);
	r->error = bswap_16(r->error);
	r->pdu_len = bswap_16(r->pdu_len);
}

/* The record's magic and version, and the byte order of its file (taken
 * from its first record). */
static int blk_check_magic(struct blk_in *in, char *err, size_t errlen)
{
	uint32_t m = in->rec.magic;
	if (in->recno == 1)
		in->swap = (m & 0xffffff00u) != BLK_IO_TRACE_MAGIC &&
			   (bswap_32(m) & 0xffffff00u) == BLK_IO_TRACE_MAGIC;
	if (in->swap)
		blk_swap(&in->rec);
	m = in->rec.magic;
	if ((m & 0xffffff00u) != BLK_IO_TRACE_MAGIC) {
		snprintf(err, errlen, "%s: record %" PRIu64 " (byte %" PRIu64 "): magic 0x%08x is "
			 "not blktrace's (0x%08x with the version): not a blktrace file, or "
			 "damaged there", in->path, in->recno, in->next_off - sizeof(in->rec), m,
			 BLK_IO_TRACE_MAGIC);
		return -EINVAL;
	}
	if ((m & 0xff) != BLK_IO_TRACE_VERSION) {
		snprintf(err, errlen, "%s: record %" PRIu64 ": blktrace format version %u: "
			 "allowed %u (the one blktrace 1.x and current kernels write)", in->path,
			 in->recno, m & 0xff, BLK_IO_TRACE_VERSION);
		return -EINVAL;
	}
	return 0;
}

/* Read in's next record (and step over its payload): 0 (in->have false at
 * the end) or -errno. */
static int blk_in_read(struct blk_in *in, char *err, size_t errlen)
{
	size_t n = fread(&in->rec, 1, sizeof(in->rec), in->f);
	in->have = false;
	if (n == 0 && !ferror(in->f))
		return 0;
	in->recno++;
	in->next_off += n;
	if (n < sizeof(in->rec)) {
		snprintf(err, errlen, "%s: record %" PRIu64 " (byte %" PRIu64 "): %s", in->path,
			 in->recno, in->next_off - n, ferror(in->f) ? strerror(errno) :
			 "the file ends inside the record (cut short: copy the trace again, or "
			 "truncate it to its whole records)");
		return ferror(in->f) ? -EIO : -EINVAL;
	}
	int rc = blk_check_magic(in, err, errlen);
	if (rc)
		return rc;
	if (in->next_off + in->rec.pdu_len > in->size) {
		snprintf(err, errlen, "%s: record %" PRIu64 ": its %u bytes of payload pass the "
			 "end of the file (cut short: copy the trace again)", in->path, in->recno,
			 in->rec.pdu_len);
		return -EINVAL;
	}
	in->next_off += in->rec.pdu_len;
	if (in->rec.pdu_len && fseeko(in->f, (off_t)in->next_off, SEEK_SET)) {
		snprintf(err, errlen, "%s: record %" PRIu64 ": %s", in->path, in->recno,
			 strerror(errno));
		return -EIO;
	}
	in->have = true;
	return 0;
}

/* Open input i at path and read its first record. */
static int blk_in_open(struct trace_blk *b, unsigned i, const char *path, char *err,
		       size_t errlen)
{
	struct blk_in *in = &b->in[i];
	struct stat st;
	if (!(in->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	in->f = fopen(path, "rb");
	if (!in->f || fstat(fileno(in->f), &st)) {
		int rc = -errno;
		snprintf(err, errlen, "%s: cannot open trace: %s", path, strerror(errno));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a trace file (not a regular file)", path);
		return -EINVAL;
	}
	in->size = (uint64_t)st.st_size;
	return blk_in_read(in, err, errlen);
}

static bool blk_exists(const char *base, unsigned cpu)
{
	char p[4200];
	struct stat st;
	int n = snprintf(p, sizeof(p), "%s.blktrace.%u", base, cpu);
	return n > 0 && (size_t)n < sizeof(p) && stat(p, &st) == 0;
}

/* The per-CPU files of base: .0, .1, ... up to the first missing one. */
static unsigned blk_count(const char *base)
{
	unsigned n = 0;
	while (n < BLK_MAX_FILES && blk_exists(base, n))
		n++;
	return n;
}

/* Named alone, NAME.blktrace.N: how many per-CPU files of NAME lie beside
 * it (the summary says that the others were not read). */
static unsigned blk_siblings(const char *path)
{
	const char *d = strstr(path, ".blktrace.");
	if (!d)
		return 0;
	const char *p = d + 10;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == d + 10 || *p)
		return 0;
	char base[4200];
	if (d - path >= 4000)
		return 0;
	snprintf(base, sizeof(base), "%.*s", (int)(d - path), path);
	unsigned n = blk_count(base);
	return n > 1 ? n - 1 : 0;
}

int trace_blk_open(struct qs_trace *t, bool base, char *err, size_t errlen)
{
	if (t->f) {
		fclose(t->f); /* opened to look at: the inputs are opened here */
		t->f = NULL;
	}
	struct trace_blk *b = calloc(1, sizeof(*b));
	unsigned n = base ? blk_count(t->path) : 1;
	if (!b || !(b->in = calloc(n, sizeof(*b->in)))) {
		free(b);
		snprintf(err, errlen, "%s: out of memory", t->path);
		return -ENOMEM;
	}
	t->blk = b;
	b->n = n;
	b->siblings = base ? 0 : blk_siblings(t->path);
	for (unsigned i = 0; i < n; i++) {
		char p[4200];
		if (base)
			snprintf(p, sizeof(p), "%.4000s.blktrace.%u", t->path, i);
		else
			snprintf(p, sizeof(p), "%.4000s", t->path);
		int rc = blk_in_open(b, i, p, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* The input whose record comes first in time (the lower file on a tie, as
 * a stable merge); NULL when all are at their end. */
static struct blk_in *blk_first(struct trace_blk *b)
{
	struct blk_in *best = NULL;
	for (unsigned i = 0; i < b->n; i++)
		if (b->in[i].have && (!best || b->in[i].rec.time < best->rec.time))
			best = &b->in[i];
	return best;
}

/* blkparse's direction letter of a record: discard, write, read (any data
 * that is neither), none. */
static char blk_dir(const struct blk_io_trace *r)
{
	uint32_t cat = r->action >> BLK_TC_SHIFT;
	if (cat & BLK_TC_DISCARD)
		return 'D';
	if (cat & BLK_TC_WRITE)
		return 'W';
	return r->bytes ? 'R' : 'N';
}

/* One record: 1 with a request, 0 for an event that is none (not a queue
 * event, a notification, a SCSI pass-through), -errno. */
static int blk_record(struct qs_trace *t, const struct blk_io_trace *r, struct qs_io *io,
		      char *err, size_t errlen)
{
	uint32_t cat = r->action >> BLK_TC_SHIFT;
	uint32_t act = r->action & 0xffff & ~(uint32_t)__BLK_TA_CGROUP;
	if ((cat & (BLK_TC_NOTIFY | BLK_TC_PC)) || act != __BLK_TA_QUEUE)
		return 0;
	char dev[32];
	snprintf(dev, sizeof(dev), "%u,%u", r->device >> 20, r->device & 0xfffff);
	int rc = trace_blk_device(t, dev, err, errlen);
	if (rc)
		return rc;
	if (r->sector > UINT64_MAX / 512) {
		char w[600];
		snprintf(err, errlen, "%s: sector %llu: allowed below 2^55",
			 trace_where(t, w, sizeof(w)), (unsigned long long)r->sector);
		return -EINVAL;
	}
	return trace_blk_request(t, cat & BLK_TC_FLUSH, blk_dir(r), r->sector * 512, r->bytes,
				 r->time, io, err, errlen);
}

int trace_blk_next(struct qs_trace *t, struct qs_io *io, char *err, size_t errlen)
{
	struct blk_in *in;
	while ((in = blk_first(t->blk))) {
		struct blk_io_trace r = in->rec;
		t->rec = in->recno;
		t->rec_path = in->path;
		int rc = blk_in_read(in, err, errlen);
		if (rc)
			return rc;
		memset(io, 0, sizeof(*io));
		rc = blk_record(t, &r, io, err, errlen);
		if (rc)
			return rc;
		t->skipped++;
	}
	return 0;
}

int trace_blk_device(struct qs_trace *t, const char *dev, char *err, size_t errlen)
{
	uint64_t at = t->rec ? t->rec : t->line;
	if (!t->dev[0]) {
		snprintf(t->dev, sizeof(t->dev), "%s", dev);
		t->dev_at = at;
		return 0;
	}
	if (!strcmp(t->dev, dev))
		return 0;
	char w[600];
	snprintf(err, errlen, "%s: device %s is a second device (the trace's requests were on "
		 "%s from %s %" PRIu64 " on); the replay drives one device: trace each device "
		 "into a trace of its own (blktrace -d DEV -o NAME)", trace_where(t, w, sizeof(w)),
		 dev, t->dev, t->rec ? "record" : "line", t->dev_at);
	return -EINVAL;
}

int trace_blk_request(struct qs_trace *t, bool flush, char dir, uint64_t off, uint64_t len,
		      uint64_t stamp_ns, struct qs_io *io, char *err, size_t errlen)
{
	int rc;
	if (!len && !flush)
		return 0; /* no data, no flush: nothing the device would do */
	if (len) {
		io->op = dir == 'D' ? QS_IO_TRIM : dir == 'W' ? QS_IO_WRITE : QS_IO_READ;
		io->orig_off = off;
		io->orig_len = len;
		if ((rc = trace_set_time(t, io, stamp_ns, 1.0, "time", err, errlen)))
			return rc;
		if ((rc = trace_map_range(t, io, err, errlen)) <= 0)
			return rc;
	}
	if (!flush)
		return 1;
	/* the flush first, then the data (a preflush precedes its write) */
	struct qs_io f = {.op = QS_IO_SYNC};
	if ((rc = trace_set_time(t, &f, stamp_ns, 1.0, "time", err, errlen)))
		return rc;
	if (len) {
		t->ahead = *io;
		t->have_ahead = true;
	}
	*io = f;
	return 1;
}

/* ---- blkparse's text ---- */

/* A time "S.NNNNNNNNN" as nanoseconds. */
static bool bp_time(const char *s, uint64_t *ns)
{
	const char *dot = strchr(s, '.');
	return dot && strlen(dot + 1) == 9 && trace_parse_ns(s, 1000000000ull, ns);
}

/* blkparse's RWBS: an optional F (flush), the direction D, W, R or N, then
 * any of F (FUA), A (readahead), S (sync), M (metadata). */
static bool bp_rwbs(const char *s, bool *flush, char *dir)
{
	*flush = *s == 'F';
	if (*flush)
		s++;
	if (!*s || !strchr("DWRN", *s))
		return false;
	*dir = *s++;
	return strspn(s, "FASM") == strlen(s);
}

/* Split s at blanks in place into at most max fields; the count. */
static int bp_split(char *s, char **fld, int max)
{
	int n = 0;
	for (char *save = NULL, *p = strtok_r(s, " \t", &save); p && n < max;
	     p = strtok_r(NULL, " \t", &save))
		fld[n++] = p;
	return n;
}

/* The leading fields of an event line: "MAJ,MIN CPU SEQ S.NS PID ACTION". */
static bool bp_event(char **fld, int n, uint64_t *ns)
{
	unsigned a, b;
	int used = 0;
	uint64_t u;
	if (n < 6 || sscanf(fld[0], "%u,%u%n", &a, &b, &used) != 2 || fld[0][used])
		return false;
	if (!trace_parse_u64(fld[1], &u) || !trace_parse_u64(fld[2], &u) ||
	    !bp_time(fld[3], ns) || !trace_parse_u64(fld[4], &u))
		return false;
	size_t al = strlen(fld[5]);
	return al >= 1 && al <= 2 && isalpha((unsigned char)fld[5][0]) &&
	       (al == 1 || isalpha((unsigned char)fld[5][1]));
}

bool trace_blkparse_line(const char *s)
{
	char buf[256], *fld[8];
	uint64_t ns;
	snprintf(buf, sizeof(buf), "%s", s);
	return bp_event(fld, bp_split(buf, fld, 8), &ns);
}

/* Lines of blkparse's closing statistics: "CPU0 (sda):", "Total (sda):"
 * open them; "Input file ... added" lines come with them. */
static bool bp_stats_start(const char *s)
{
	if (!strncmp(s, "Total (", 7))
		return true;
	if (strncmp(s, "CPU", 3) || !isdigit((unsigned char)s[3]))
		return false;
	s += 3;
	while (isdigit((unsigned char)*s))
		s++;
	return !strncmp(s, " (", 2);
}

/* A queue line's "SECTOR + COUNT" (absent for a request with no data): 0,
 * 1 for a SCSI pass-through request ("BYTES [...]", no sector: skipped, as
 * the binary reader skips it), -EINVAL. */
static int bp_range(struct qs_trace *t, char **fld, int n, uint64_t *off, uint64_t *len,
		    char *err, size_t errlen)
{
	uint64_t sec, cnt;
	*off = *len = 0;
	if (n <= 7 || fld[7][0] == '[')
		return 0;
	if (trace_parse_u64(fld[7], &cnt) && (n == 8 || fld[8][0] == '['))
		return 1;
	if (n < 10 || strcmp(fld[8], "+") || !trace_parse_u64(fld[7], &sec) ||
	    !trace_parse_u64(fld[9], &cnt) || sec > UINT64_MAX / 512 || cnt > (1ull << 40)) {
		snprintf(err, errlen, "%s:%u: a queue (Q) event needs 'SECTOR + COUNT' after its "
			 "RWBS field (sector below 2^55, count at most 2^40), found '%s%s%s'",
			 t->path, t->line, n > 7 ? fld[7] : "", n > 8 ? " " : "", n > 8 ? fld[8] : "");
		return -EINVAL;
	}
	*off = sec * 512;
	*len = cnt * 512;
	return 0;
}

int trace_parse_blkparse(struct qs_trace *t, char *s, struct qs_io *io, char *err,
			 size_t errlen)
{
	char *fld[12];
	uint64_t ns, off, len;
	bool flush;
	char dir;
	if (t->blkparse_end || bp_stats_start(s) || !strncmp(s, "Input file ", 11)) {
		t->blkparse_end = t->blkparse_end || bp_stats_start(s);
		return 0; /* blkparse's statistics, not events */
	}
	int n = bp_split(s, fld, 12);
	if (!bp_event(fld, n, &ns)) {
		snprintf(err, errlen, "%s:%u: not a blkparse event line (expected 'MAJ,MIN CPU "
			 "SEQUENCE SECONDS.NANOSECONDS PID ACTION ...', blkparse's default output)",
			 t->path, t->line);
		return -EINVAL;
	}
	if (strcmp(fld[5], "Q"))
		return 0; /* counted at its queue event only */
	if (n < 7 || !bp_rwbs(fld[6], &flush, &dir)) {
		snprintf(err, errlen, "%s:%u: RWBS field '%s': allowed an optional F, one of D, "
			 "W, R, N, then any of F, A, S, M (blkparse's)", t->path, t->line,
			 n < 7 ? "" : fld[6]);
		return -EINVAL;
	}
	int rc = bp_range(t, fld, n, &off, &len, err, errlen);
	if (rc)
		return rc > 0 ? 0 : rc;
	if ((rc = trace_blk_device(t, fld[0], err, errlen)))
		return rc;
	return trace_blk_request(t, flush, dir, off, len, ns, io, err, errlen);
}
