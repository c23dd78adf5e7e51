/* SPDX-License-Identifier: MIT */
/*
 * qs_prom: the text is valid exposition format (checked by a parser written
 * from the format's rules, which is itself tested on bad input), every
 * engine and frontend counter is rendered with its own value, label values
 * are escaped, and a short buffer is reported, never published.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../daemon/prom.h"

#define MAXS 256
#define NAMELEN 512

struct sample {
	char name[NAMELEN];
	char labels[256]; /* as written, between the braces */
	double value;
};

struct parsed {
	struct sample s[MAXS];
	int n;
	char fams[MAXS][NAMELEN];
	char types[MAXS][16];
	int nfam;
	char err[256];
};

static int p_fail(struct parsed *p, int line, const char *fmt, const char *arg)
{
	char msg[200];

	snprintf(msg, sizeof(msg), fmt, arg);
	snprintf(p->err, sizeof(p->err), "line %d: %s", line, msg);
	return -1;
}

static bool valid_name(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/*
 * Parse the exposition text by the format's rules plus the conventions this
 * project promises: HELP then TYPE before a family's samples, each family
 * once, samples adjacent to their family, counters named *_total, a label
 * config= first on every sample, values that parse as numbers, a final
 * newline. Returns 0 or -1 with p->err set.
 */
static int parse(const char *text, struct parsed *p)
{
	const char *l = text;
	char help_for[NAMELEN] = "", cur[NAMELEN] = "", curtype[16] = "";
	int line = 0;

	memset(p, 0, sizeof(*p));
	if (!*text || text[strlen(text) - 1] != '\n')
		return p_fail(p, 0, "%s", "no final newline");
	while (*l) {
		const char *nl = strchr(l, '\n');
		size_t n = (size_t)(nl - l);
		char buf[512];

		line++;
		if (n >= sizeof(buf))
			return p_fail(p, line, "%s", "line too long");
		memcpy(buf, l, n);
		buf[n] = 0;
		l = nl + 1;
		if (!strncmp(buf, "# HELP ", 7)) {
			char *sp = strchr(buf + 7, ' ');

			if (!sp || !valid_name(buf + 7, (size_t)(sp - buf - 7)) || !sp[1])
				return p_fail(p, line, "bad HELP: %s", buf);
			*sp = 0;
			if (strchr(sp + 1, '\\'))
				return p_fail(p, line, "unescaped backslash in HELP %s", buf + 7);
			snprintf(help_for, sizeof(help_for), "%s", buf + 7);
			continue;
		}
		if (!strncmp(buf, "# TYPE ", 7)) {
			char *sp = strchr(buf + 7, ' ');

			if (!sp)
				return p_fail(p, line, "bad TYPE: %s", buf);
			*sp = 0;
			if (strcmp(buf + 7, help_for))
				return p_fail(p, line, "TYPE without HELP first: %s", buf + 7);
			if (strcmp(sp + 1, "counter") && strcmp(sp + 1, "gauge"))
				return p_fail(p, line, "type %s", sp + 1);
			for (int i = 0; i < p->nfam; i++)
				if (!strcmp(p->fams[i], buf + 7))
					return p_fail(p, line, "family %s twice", buf + 7);
			if (!strcmp(sp + 1, "counter") && !ends_with(buf + 7, "_total"))
				return p_fail(p, line, "counter %s not named *_total", buf + 7);
			if (p->nfam == MAXS)
				return p_fail(p, line, "%s", "too many families");
			snprintf(p->fams[p->nfam], sizeof(p->fams[0]), "%s", buf + 7);
			snprintf(p->types[p->nfam++], sizeof(p->types[0]), "%s", sp + 1);
			snprintf(cur, sizeof(cur), "%s", buf + 7);
			snprintf(curtype, sizeof(curtype), "%s", sp + 1);
			continue;
		}
		if (buf[0] == '#' || !buf[0])
			return p_fail(p, line, "unexpected line: '%s'", buf);
		{
			struct sample *s;
			char *brace = strchr(buf, '{'), *close, *end, *q;
			size_t nlen;

			if (!brace)
				return p_fail(p, line, "sample without labels: %s", buf);
			nlen = (size_t)(brace - buf);
			if (!valid_name(buf, nlen))
				return p_fail(p, line, "bad metric name: %s", buf);
			*brace = 0;
			if (strcmp(buf, cur))
				return p_fail(p, line, "sample of %s outside its family", buf);
			/* Labels: key="value" pairs; a value ends at an unescaped quote. */
			q = brace + 1;
			if (strncmp(q, "config=\"", 8))
				return p_fail(p, line, "first label is not config: %s", q);
			while (*q != '}') {
				char *eq = strchr(q, '=');

				if (!eq || eq[1] != '"' || !valid_name(q, (size_t)(eq - q)))
					return p_fail(p, line, "bad label: %s", q);
				q = eq + 2;
				while (*q && *q != '"') {
					if (*q == '\\') {
						if (q[1] != '\\' && q[1] != '"' && q[1] != 'n')
							return p_fail(p, line, "bad escape: %s", q);
						q++;
					}
					if (*q == '\n')
						return p_fail(p, line, "%s", "raw newline in label");
					q++;
				}
				if (*q != '"')
					return p_fail(p, line, "%s", "unterminated label value");
				q++;
				if (*q == ',')
					q++;
				else if (*q != '}')
					return p_fail(p, line, "after label: %s", q);
			}
			close = q;
			if (close[1] != ' ' || !close[2])
				return p_fail(p, line, "no value: %s", buf);
			if (p->n == MAXS)
				return p_fail(p, line, "%s", "too many samples");
			s = &p->s[p->n++];
			snprintf(s->name, sizeof(s->name), "%s", buf);
			snprintf(s->labels, sizeof(s->labels), "%.*s", (int)(close - brace - 1),
				 brace + 1);
			errno = 0;
			s->value = strtod(close + 2, &end);
			if (*end || errno || !isfinite(s->value))
				return p_fail(p, line, "bad value: %s", close + 2);
			if (!strcmp(curtype, "counter") && s->value < 0)
				return p_fail(p, line, "negative counter %s", buf);
		}
	}
	/* Every family has samples. */
	for (int i = 0; i < p->nfam; i++) {
		int found = 0;

		for (int j = 0; j < p->n && !found; j++)
			found = !strcmp(p->s[j].name, p->fams[i]);
		if (!found)
			return p_fail(p, 0, "family %s without samples", p->fams[i]);
	}
	return 0;
}

/* The value of name{labels}; fails the test when absent. */
static double value_of(const struct parsed *p, const char *name, const char *labels)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->s[i].name, name) && !strcmp(p->s[i].labels, labels))
			return p->s[i].value;
	fail_msg("no sample %s{%s}", name, labels);
	return -1;
}

static bool has_family(const struct parsed *p, const char *prefix)
{
	for (int i = 0; i < p->nfam; i++)
		if (!strncmp(p->fams[i], prefix, strlen(prefix)))
			return true;
	return false;
}

/* Every field a distinct value, so a field rendered in another's place shows. */
static void fill_engine(struct qs_engine_stats *e)
{
	memset(e, 0, sizeof(*e));
	e->client_reads = 101;
	e->client_read_bytes = 102;
	e->client_writes = 103;
	e->client_write_bytes = 104;
	e->client_flushes = 105;
	e->client_discards = 106;
	e->client_discard_bytes = 107;
	e->client_errors = 108;
	e->log_appends = 109;
	e->log_append_bytes = 110;
	e->log_read_bytes = 111;
	e->log_flushes = 112;
	e->qlc_writes = 113;
	e->qlc_write_bytes = 114;
	e->qlc_iu_whole_writes = 115;
	e->qlc_reads = 116;
	e->qlc_read_bytes = 117;
	e->qlc_discards = 118;
	e->qlc_flushes = 119;
	e->read_fill_bytes = 120;
	e->bypass_writes = 121;
	e->bypass_bytes = 122;
	e->destage_full_ius = 124;
	e->destage_partial_ius = 125;
	e->destage_ius = 249;
	e->destage_bytes = 126;
	e->checkpoints = 127;
	e->throttled_writes = 128;
	e->paced_writes = 149;
	e->fast_errors = 129;
	e->qlc_errors = 130;
	e->destage_retries = 131;
	e->cached_blocks = 132;
	e->dirty_ius = 133;
	e->log_blocks = 1000;
	e->log_used_blocks = 250;
	e->index_bytes = 136;
	e->inflight = 137;
	e->failed = true;
	e->placement = QS_PLACE_LOG;
	e->op_pct = 20;
	e->bands = 150;
	e->bands_free = 141;
	e->bands_open = 2;
	e->bands_full = 7;
	e->band_bytes = 1 << 20;
	e->gc_victims = 142;
	e->gc_read_bytes = 143;
	e->gc_write_bytes = 144;
	e->gc_moved_blocks = 145;
	e->map_bytes = 146;
	e->map_page_writes = 147;
	e->mapped_blocks = 148;
	e->clean_state = true;
	e->p2l_page_writes = 151;
	e->p2l_page_reads = 152;
	e->gc_stuck_blocks = 153;
	e->map_dram_limit = 149;
	e->map_resident_bytes = 150;
	e->map_peak_bytes = 151;
	e->map_region_bytes = 152;
	e->map_hits = 153;
	e->map_misses = 154;
	e->map_page_reads = 155;
	e->map_kept = 156;
	e->map_kept_applied = 157;
	e->map_kept_reads = 158;
	e->map_kept_stale = 159;
	e->mem = (struct qs_engine_mem){.index = 156, .dirty = 157, .map_pages = 158,
					.map_meta = 159, .qlc_blocks = 160, .bands = 161,
					.other = 162, .total = 1113};
}

static const struct qs_prom_frontend fe_sample = {
	.reads = 201, .read_bytes = 202, .writes = 203, .write_bytes = 204,
	.flushes = 205, .discards = 206, .write_zeroes = 207, .errors = 208, .inflight = 209,
};

static char buf[16384];
static struct parsed P;

static void render_ok(const struct qs_prom_input *in)
{
	int ret = qs_prom_render(in, buf, sizeof(buf));

	assert_int_equal(ret, 0);
	if (parse(buf, &P))
		fail_msg("%s\n%s", P.err, buf);
}

static void test_every_counter(void **state)
{
	struct qs_engine_stats e;
	struct qs_prom_input in = {
		.config = "qlc0", .backend = "engine", .iu_bytes = 65536,
		.size_bytes = 30720ull << 30, .start_time_s = 1764500000.25,
		.frontend = &fe_sample, .engine = &e,
	};
	const char *c = "config=\"qlc0\"";
	char l[128];

	(void)state;
	fill_engine(&e);
	render_ok(&in);
#define V(name, extra) (snprintf(l, sizeof(l), "%s%s", c, extra), value_of(&P, name, l))
	assert_true(V("qlcshape_info", ",backend=\"engine\"") == 1);
	assert_true(V("qlcshape_start_time_seconds", "") == 1764500000.25);
	assert_true(V("qlcshape_iu_bytes", "") == 65536);
	assert_true(V("qlcshape_size_bytes", "") == (double)(30720ull << 30));
	assert_true(V("qlcshape_frontend_requests_total", ",op=\"read\"") == 201);
	assert_true(V("qlcshape_frontend_bytes_total", ",op=\"read\"") == 202);
	assert_true(V("qlcshape_frontend_requests_total", ",op=\"write\"") == 203);
	assert_true(V("qlcshape_frontend_bytes_total", ",op=\"write\"") == 204);
	assert_true(V("qlcshape_frontend_requests_total", ",op=\"flush\"") == 205);
	assert_true(V("qlcshape_frontend_requests_total", ",op=\"discard\"") == 206);
	assert_true(V("qlcshape_frontend_requests_total", ",op=\"write_zeroes\"") == 207);
	assert_true(V("qlcshape_frontend_errors_total", "") == 208);
	assert_true(V("qlcshape_frontend_inflight_requests", "") == 209);
	assert_true(V("qlcshape_client_requests_total", ",op=\"read\"") == 101);
	assert_true(V("qlcshape_client_bytes_total", ",op=\"read\"") == 102);
	assert_true(V("qlcshape_client_requests_total", ",op=\"write\"") == 103);
	assert_true(V("qlcshape_client_bytes_total", ",op=\"write\"") == 104);
	assert_true(V("qlcshape_client_requests_total", ",op=\"flush\"") == 105);
	assert_true(V("qlcshape_client_requests_total", ",op=\"discard\"") == 106);
	assert_true(V("qlcshape_client_bytes_total", ",op=\"discard\"") == 107);
	assert_true(V("qlcshape_client_errors_total", "") == 108);
	assert_true(V("qlcshape_log_appends_total", "") == 109);
	assert_true(V("qlcshape_log_append_bytes_total", "") == 110);
	assert_true(V("qlcshape_log_read_bytes_total", "") == 111);
	assert_true(V("qlcshape_log_flushes_total", "") == 112);
	assert_true(V("qlcshape_qlc_requests_total", ",op=\"write\"") == 113);
	assert_true(V("qlcshape_qlc_bytes_total", ",op=\"write\"") == 114);
	assert_true(V("qlcshape_qlc_whole_iu_writes_total", "") == 115);
	assert_true(V("qlcshape_qlc_requests_total", ",op=\"read\"") == 116);
	assert_true(V("qlcshape_qlc_bytes_total", ",op=\"read\"") == 117);
	assert_true(V("qlcshape_qlc_requests_total", ",op=\"discard\"") == 118);
	assert_true(V("qlcshape_qlc_requests_total", ",op=\"flush\"") == 119);
	assert_true(V("qlcshape_qlc_read_fill_bytes_total", "") == 120);
	assert_true(V("qlcshape_bypass_writes_total", "") == 121);
	assert_true(V("qlcshape_bypass_bytes_total", "") == 122);
	/* destage_ius is the sum of the two kinds, so it is the family's sum. */
	assert_true(V("qlcshape_destage_ius_total", ",kind=\"full\"") == 124);
	assert_true(V("qlcshape_destage_ius_total", ",kind=\"partial\"") == 125);
	assert_true(V("qlcshape_destage_bytes_total", "") == 126);
	assert_true(V("qlcshape_log_checkpoints_total", "") == 127);
	assert_true(V("qlcshape_throttled_writes_total", "") == 128);
	assert_true(V("qlcshape_paced_writes_total", "") == 149);
	assert_true(V("qlcshape_device_errors_total", ",tier=\"fast\"") == 129);
	assert_true(V("qlcshape_device_errors_total", ",tier=\"qlc\"") == 130);
	assert_true(V("qlcshape_destage_retries_total", "") == 131);
	/* Block counts come out in bytes. */
	assert_true(V("qlcshape_cached_bytes", "") == 132.0 * 4096);
	assert_true(V("qlcshape_dirty_ius", "") == 133);
	assert_true(V("qlcshape_log_size_bytes", "") == 1000.0 * 4096);
	assert_true(V("qlcshape_log_used_bytes", "") == 250.0 * 4096);
	assert_true(V("qlcshape_log_used_ratio", "") == 0.25);
	assert_true(V("qlcshape_index_memory_bytes", "") == 136);
	assert_true(V("qlcshape_client_inflight_requests", "") == 137);
	assert_true(V("qlcshape_engine_failed", "") == 1);
	assert_true(V("qlcshape_placement_log", "") == 1);
	assert_true(V("qlcshape_op_percent", "") == 20);
	assert_true(V("qlcshape_bands_total", "") == 150);
	assert_true(V("qlcshape_bands", ",state=\"free\"") == 141);
	assert_true(V("qlcshape_bands", ",state=\"open\"") == 2);
	assert_true(V("qlcshape_bands", ",state=\"full\"") == 7);
	assert_true(V("qlcshape_band_size_bytes", "") == 1 << 20);
	assert_true(V("qlcshape_gc_victims_total", "") == 142);
	assert_true(V("qlcshape_gc_bytes_total", ",op=\"read\"") == 143);
	assert_true(V("qlcshape_gc_bytes_total", ",op=\"write\"") == 144);
	assert_true(V("qlcshape_gc_moved_blocks_total", "") == 145);
	assert_true(V("qlcshape_map_memory_bytes", "") == 146);
	assert_true(V("qlcshape_map_page_writes_total", "") == 147);
	assert_true(V("qlcshape_mapped_bytes", "") == 148.0 * 4096);
	assert_true(V("qlcshape_map_from_clean_state", "") == 1);
	assert_true(V("qlcshape_p2l_page_writes_total", "") == 151);
	assert_true(V("qlcshape_p2l_page_reads_total", "") == 152);
	assert_true(V("qlcshape_gc_stuck_blocks_total", "") == 153);
	assert_true(V("qlcshape_map_dram_limit_bytes", "") == 149);
	assert_true(V("qlcshape_map_resident_bytes", "") == 150);
	assert_true(V("qlcshape_map_resident_peak_bytes", "") == 151);
	assert_true(V("qlcshape_map_region_bytes", "") == 152);
	assert_true(V("qlcshape_map_lookups_total", ",result=\"hit\"") == 153);
	assert_true(V("qlcshape_map_lookups_total", ",result=\"miss\"") == 154);
	assert_true(V("qlcshape_map_page_reads_total", "") == 155);
	assert_true(V("qlcshape_map_kept_changes_total", "") == 156);
	assert_true(V("qlcshape_map_kept_applied_total", "") == 157);
	assert_true(V("qlcshape_map_kept_page_reads_total", "") == 158);
	assert_true(V("qlcshape_map_kept_stale_total", "") == 159);
	/* The engine's DRAM by part; the parts are the family's sum, so the
	 * total is no sample of it (as destage_ius above). */
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"index\"") == 156);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"dirty\"") == 157);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"map_pages\"") == 158);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"map_meta\"") == 159);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"qlc_blocks\"") == 160);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"bands\"") == 161);
	assert_true(V("qlcshape_engine_memory_bytes", ",part=\"other\"") == 162);
	double dram = 0;
	for (int i = 0; i < P.n; i++)
		if (!strcmp(P.s[i].name, "qlcshape_engine_memory_bytes"))
			dram += P.s[i].value;
	assert_true(dram == e.mem.total);
#undef V
	/* Nothing else: every sample was looked up above (88 of them). */
	assert_int_equal(P.n, 88);
}

/*
 * A field added to struct qs_engine_stats must be rendered too: this fails
 * until daemon/prom.c and test_every_counter know it.
 */
static void test_stats_struct_known(void **state)
{
	(void)state;
	/* 37 counters, inflight and failed in 8 bytes, placement and op_pct
	 * in 8, then 12 counters of log placement, clean_state in 8, 7 of
	 * the map's pages, 3 of the P2L pages, 4 of kept map changes, and
	 * the 8 of struct qs_engine_mem */
	size_t known = 37 * sizeof(uint64_t) + 8 + 8 + 12 * sizeof(uint64_t) + 8 +
		       7 * sizeof(uint64_t) + 3 * sizeof(uint64_t) + 4 * sizeof(uint64_t) +
		       8 * sizeof(uint64_t);
	if (sizeof(struct qs_engine_stats) != known)
		fail_msg("struct qs_engine_stats is %zu bytes, not the %zu this renderer knows: "
			 "render the new field in daemon/prom.c and check it here",
			 sizeof(struct qs_engine_stats), known);
}

static void test_failed_flag_and_large_values(void **state)
{
	struct qs_engine_stats e;
	struct qs_prom_input in = {.config = "a", .engine = &e};

	(void)state;
	fill_engine(&e);
	e.failed = false;
	e.qlc_write_bytes = UINT64_MAX;
	render_ok(&in);
	assert_true(value_of(&P, "qlcshape_engine_failed", "config=\"a\"") == 0);
	assert_non_null(strstr(buf, "qlcshape_qlc_bytes_total{config=\"a\",op=\"write\"} "
				    "18446744073709551615\n"));
	/* No backend, time, IU or size given: none rendered. */
	assert_false(has_family(&P, "qlcshape_info"));
	assert_false(has_family(&P, "qlcshape_start_time"));
	assert_false(has_family(&P, "qlcshape_iu_bytes"));
	assert_false(has_family(&P, "qlcshape_size_bytes"));
	assert_false(has_family(&P, "qlcshape_frontend_"));
}

/* RAM backend: the frontend's counters only. */
static void test_no_engine(void **state)
{
	struct qs_prom_input in = {.config = "ram0", .backend = "ram", .frontend = &fe_sample};

	(void)state;
	render_ok(&in);
	assert_true(has_family(&P, "qlcshape_frontend_requests_total"));
	assert_false(has_family(&P, "qlcshape_log_"));
	assert_false(has_family(&P, "qlcshape_qlc_"));
	assert_false(has_family(&P, "qlcshape_engine_failed"));
	assert_int_equal(P.nfam, 5);
}

/* Passthrough has no log: no ratio (not a NaN from 0/0). */
static void test_passthrough_no_ratio(void **state)
{
	struct qs_engine_stats e;
	struct qs_prom_input in = {.config = "p", .engine = &e};

	(void)state;
	fill_engine(&e);
	e.log_blocks = e.log_used_blocks = 0;
	render_ok(&in);
	assert_false(has_family(&P, "qlcshape_log_used_ratio"));
	assert_true(value_of(&P, "qlcshape_log_size_bytes", "config=\"p\"") == 0);
}

static void test_label_escaping(void **state)
{
	struct qs_prom_input in = {.config = "a\"b\\c\nd", .backend = "x",
				   .frontend = &fe_sample};

	(void)state;
	render_ok(&in);
	assert_non_null(strstr(buf, "qlcshape_info{config=\"a\\\"b\\\\c\\nd\",backend=\"x\"} 1\n"));
	value_of(&P, "qlcshape_frontend_errors_total", "config=\"a\\\"b\\\\c\\nd\"");
}

static void test_bad_input(void **state)
{
	struct qs_prom_input in = {.frontend = &fe_sample};

	(void)state;
	strcpy(buf, "junk");
	assert_int_equal(qs_prom_render(&in, buf, sizeof(buf)), -EINVAL);
	assert_string_equal(buf, "");
	in.config = "";
	assert_int_equal(qs_prom_render(&in, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(qs_prom_render(NULL, buf, sizeof(buf)), -EINVAL);
	in.config = "x";
	assert_int_equal(qs_prom_render(&in, buf, 0), -ENOSPC);
}

/* Every buffer shorter than the text: -ENOSPC and a NUL within the buffer. */
static void test_short_buffer(void **state)
{
	struct qs_engine_stats e;
	struct qs_prom_input in = {.config = "qlc0", .backend = "engine", .iu_bytes = 65536,
				   .frontend = &fe_sample, .engine = &e};
	static char small[16384];
	size_t need;

	(void)state;
	fill_engine(&e);
	assert_int_equal(qs_prom_render(&in, buf, sizeof(buf)), 0);
	need = strlen(buf) + 1;
	fprintf(stderr, "prometheus text: %zu bytes\n", need);
	assert_true(need < 14336); /* the size the header promises is enough */
	for (size_t len = 1; len < need; len += (len < 64 ? 1 : 97)) {
		memset(small, 'x', sizeof(small));
		assert_int_equal(qs_prom_render(&in, small, len), -ENOSPC);
		assert_non_null(memchr(small, 0, len));
		assert_int_equal(small[len], 'x'); /* nothing written past len */
	}
	assert_int_equal(qs_prom_render(&in, small, need - 1), -ENOSPC);
	assert_int_equal(qs_prom_render(&in, small, need), 0);
	assert_string_equal(small, buf);
}

/* The checker itself rejects what breaks the rules, so the tests above can fail. */
static void test_checker_rejects(void **state)
{
	static const char *bad[] = {
		"x{config=\"a\"} 1\n", /* no HELP/TYPE */
		"# HELP x_total h\n# TYPE x_total counter\nx_total{config=\"a\"} 1", /* no final \n */
		"# HELP x h\n# TYPE x counter\nx{config=\"a\"} 1\n", /* counter not _total */
		"# TYPE x gauge\nx{config=\"a\"} 1\n",		      /* TYPE without HELP */
		"# HELP x h\n# TYPE x gauge\nx{config=\"a\"} one\n",  /* value */
		"# HELP x h\n# TYPE x gauge\nx{config=\"a\\q\"} 1\n", /* escape */
		"# HELP x h\n# TYPE x gauge\nx{op=\"a\"} 1\n",	      /* no config label */
		"# HELP x h\n# TYPE x gauge\nx{config=\"a\"} 1\n# HELP x h\n# TYPE x gauge\n"
		"x{config=\"b\"} 1\n", /* family twice */
		"# HELP x h\n# TYPE x gauge\n# HELP y h\n# TYPE y gauge\ny{config=\"a\"} 1\n",
		"# HELP x h\n# TYPE x gauge\ny{config=\"a\"} 1\n", /* outside its family */
	};
	const char *good = "# HELP x_total h\n# TYPE x_total counter\nx_total{config=\"a\"} 1\n";

	(void)state;
	assert_int_equal(parse(good, &P), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &P) == 0)
			fail_msg("checker accepted bad text %zu:\n%s", i, bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checker_rejects),
		cmocka_unit_test(test_every_counter),
		cmocka_unit_test(test_stats_struct_known),
		cmocka_unit_test(test_failed_flag_and_large_values),
		cmocka_unit_test(test_no_engine),
		cmocka_unit_test(test_passthrough_no_ratio),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
