/* SPDX-License-Identifier: MIT */
/* Histogram accuracy and merge; report JSON/CSV/table/SVG; life formula. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/hist.h"
#include "../bench/report.h"
#include "../bench/workload.h"

/* ------------------------------------------------------------ histogram */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Reference percentile: smallest v with at least p% of values <= v. */
static uint64_t ref_pct(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void test_hist_buckets(void **state)
{
	(void)state;
	struct qs_wl_rng r;
	qs_wl_rng_seed(&r, 1);
	/* every value lands in a bucket whose range holds it, and the bucket
	 * width is at most 1/128 of its lower bound */
	for (int i = 0; i < 200000; i++) {
		uint64_t x = qs_wl_rng_next(&r); /* two draws, in order */
		uint64_t v = x >> (qs_wl_rng_next(&r) % 64);
		size_t b = qs_hist_bucket_of(v);
		uint64_t lo, hi;
		assert_true(b < QS_HIST_BUCKETS);
		qs_hist_bucket_range(b, &lo, &hi);
		assert_true(lo <= v && v <= hi);
		assert_true((hi - lo) <= lo / 128);
	}
	uint64_t lo, hi;
	qs_hist_bucket_range(qs_hist_bucket_of(UINT64_MAX), &lo, &hi);
	assert_int_equal(hi, UINT64_MAX);
	for (uint64_t v = 0; v < 300; v++) {
		qs_hist_bucket_range(qs_hist_bucket_of(v), &lo, &hi);
		assert_true(lo <= v && v <= hi);
	}
}

static void test_hist_percentiles(void **state)
{
	(void)state;
	const size_t n = 100001;
	uint64_t *v = malloc(n * sizeof(*v));
	struct qs_hist *h = qs_hist_new(), *a = qs_hist_new(), *b = qs_hist_new();
	struct qs_wl_rng r;
	qs_wl_rng_seed(&r, 2);
	long double sum = 0;
	for (size_t i = 0; i < n; i++) {
		/* log-normal-ish latencies: 20 us median, a long tail to ~50 ms */
		double z = 0;
		for (int k = 0; k < 4; k++)
			z += qs_wl_rng_double(&r) - 0.5;
		v[i] = (uint64_t)(20000.0 * exp(z * 4.0)) + (i % 1000 == 0 ? 40000000 : 0);
		qs_hist_add(h, v[i]);
		qs_hist_add(i % 3 ? a : b, v[i]);
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	const double ps[] = {1, 10, 50, 90, 99, 99.9, 99.99, 100};
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = ref_pct(v, n, ps[i]), got = qs_hist_percentile(h, ps[i]);
		double rel = fabs((double)got - (double)want) / (double)want;
		print_message("p%g: reference %llu, histogram %llu (%.3f%%)\n", ps[i],
			      (unsigned long long)want, (unsigned long long)got, rel * 100);
		assert_true(rel < 0.01);
	}
	assert_int_equal(h->count, n);
	assert_int_equal(h->min, v[0]);
	assert_int_equal(h->max, v[n - 1]);
	assert_true(fabs(qs_hist_mean(h) - (double)(sum / n)) < 1e-6 * qs_hist_mean(h));
	/* the sample standard deviation, two-pass over the values */
	long double m = sum / n, ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += ((long double)v[i] - m) * ((long double)v[i] - m);
	double sd = (double)sqrtl(ss / (n - 1));
	assert_true(fabs(qs_hist_stddev(h) - sd) < 1e-6 * sd);

	/* merge of the two halves is the whole */
	qs_hist_merge(a, b);
	assert_int_equal(a->count, h->count);
	assert_int_equal(a->min, h->min);
	assert_int_equal(a->max, h->max);
	assert_memory_equal(a->bucket, h->bucket, sizeof(h->bucket));
	assert_true(fabs(qs_hist_mean(a) - qs_hist_mean(h)) < 1e-6);
	assert_true(fabs(qs_hist_stddev(a) - qs_hist_stddev(h)) < 1e-6 * sd);

	/* exact small values; empty histogram */
	struct qs_hist *s = qs_hist_new();
	assert_int_equal(qs_hist_percentile(s, 50), 0);
	assert_true(qs_hist_mean(s) == 0);
	assert_true(qs_hist_stddev(s) == 0);
	qs_hist_add(s, 7);
	assert_true(qs_hist_stddev(s) == 0); /* one value: no deviation */
	qs_hist_reset(s);
	for (uint64_t i = 1; i <= 100; i++)
		qs_hist_add(s, i);
	/* 1..100: variance n(n+1)/12 = 841.666... */
	assert_true(fabs(qs_hist_stddev(s) - sqrt(101.0 * 100 / 12)) < 1e-9);
	assert_int_equal(qs_hist_percentile(s, 50), 50);
	assert_int_equal(qs_hist_percentile(s, 99), 99);
	assert_int_equal(qs_hist_percentile(s, 99.9), 100);
	free(s);
	free(v);
	free(h);
	free(a);
	free(b);
}

/* ---------------------------------------------------------- tiny JSON */

enum jt { J_NULL, J_NUM, J_STR, J_ARR, J_OBJ, J_BOOL };
struct jv {
	enum jt t;
	double num;
	char *str;
	size_t n;
	char **keys;
	struct jv **items;
};

struct jp {
	const char *s;
	bool bad;
};

static void jws(struct jp *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static struct jv *jnew(enum jt t)
{
	struct jv *v = calloc(1, sizeof(*v));
	v->t = t;
	return v;
}

static char *jstring(struct jp *p)
{
	if (*p->s != '"') {
		p->bad = true;
		return NULL;
	}
	p->s++;
	char *out = malloc(strlen(p->s) + 1);
	size_t k = 0;
	while (*p->s && *p->s != '"') {
		if (*p->s == '\\') {
			p->s++;
			if (*p->s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p->s[i]))
						p->bad = true;
				out[k++] = '?';
				p->s += 5;
				continue;
			}
			if (!strchr("\"\\/bfnrt", *p->s))
				p->bad = true;
		} else if ((unsigned char)*p->s < 0x20) {
			p->bad = true;
		}
		out[k++] = *p->s++;
	}
	if (*p->s != '"')
		p->bad = true;
	else
		p->s++;
	out[k] = 0;
	return out;
}

static struct jv *jvalue(struct jp *p);

static void jpush(struct jv *v, char *key, struct jv *item)
{
	v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
	v->items = realloc(v->items, (v->n + 1) * sizeof(*v->items));
	v->keys[v->n] = key;
	v->items[v->n++] = item;
}

static struct jv *jvalue(struct jp *p)
{
	jws(p);
	if (*p->s == '{' || *p->s == '[') {
		bool obj = *p->s == '{';
		char close = obj ? '}' : ']';
		struct jv *v = jnew(obj ? J_OBJ : J_ARR);
		p->s++;
		jws(p);
		if (*p->s == close) {
			p->s++;
			return v;
		}
		for (;;) {
			char *key = NULL;
			jws(p);
			if (obj) {
				key = jstring(p);
				jws(p);
				if (*p->s != ':')
					p->bad = true;
				else
					p->s++;
			}
			jpush(v, key, jvalue(p));
			jws(p);
			if (*p->s == ',') {
				p->s++;
				continue;
			}
			if (*p->s == close) {
				p->s++;
				return v;
			}
			p->bad = true;
			return v;
		}
	}
	if (*p->s == '"') {
		struct jv *v = jnew(J_STR);
		v->str = jstring(p);
		return v;
	}
	if (!strncmp(p->s, "null", 4)) {
		p->s += 4;
		return jnew(J_NULL);
	}
	if (!strncmp(p->s, "true", 4) || !strncmp(p->s, "false", 5)) {
		p->s += *p->s == 't' ? 4 : 5;
		return jnew(J_BOOL);
	}
	/* JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	const char *st = p->s;
	if (*p->s == '-')
		p->s++;
	if (*p->s == '0')
		p->s++;
	else if (isdigit((unsigned char)*p->s))
		while (isdigit((unsigned char)*p->s))
			p->s++;
	else
		p->bad = true;
	if (*p->s == '.') {
		p->s++;
		if (!isdigit((unsigned char)*p->s))
			p->bad = true;
		while (isdigit((unsigned char)*p->s))
			p->s++;
	}
	if (*p->s == 'e' || *p->s == 'E') {
		p->s++;
		if (*p->s == '+' || *p->s == '-')
			p->s++;
		if (!isdigit((unsigned char)*p->s))
			p->bad = true;
		while (isdigit((unsigned char)*p->s))
			p->s++;
	}
	struct jv *v = jnew(J_NUM);
	v->num = strtod(st, NULL);
	return v;
}

static void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		free(v->keys[i]);
		jfree(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->str);
	free(v);
}

/* Member key of object v, which must exist with type t. */
static const struct jv *jget(const struct jv *v, const char *key, enum jt t)
{
	if (v->t != J_OBJ)
		fail_msg("not an object looking for '%s'", key);
	const struct jv *found = NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key)) {
			if (found)
				fail_msg("duplicate key '%s'", key);
			found = v->items[i];
		}
	if (!found)
		fail_msg("missing key '%s'", key);
	if (found->t != t)
		fail_msg("key '%s' has type %d, want %d", key, found->t, t);
	return found;
}

static void jkeys(const struct jv *v, const char *const *keys)
{
	size_t n = 0;
	for (; keys[n]; n++)
		;
	if (v->n != n)
		fail_msg("object has %zu keys, want %zu (first want '%s')", v->n, n, keys[0]);
	for (size_t i = 0; i < n; i++)
		if (strcmp(v->keys[i], keys[i]))
			fail_msg("key %zu is '%s', want '%s'", i, v->keys[i], keys[i]);
}

/* ---------------------------------------------------------------- runs */

static void sample_runs(struct qs_report_run r[3])
{
	memset(r, 0, 3 * sizeof(*r));
	r[0].job = "4k-randwrite";
	r[0].shaping = false;
	r[0].policy = "";
	r[0].write = (struct qs_report_dir){17529.5, 71800000, 2950000.5, 2900000,
					    5100000, 7000000};
	r[0].qlc = (struct qs_report_qlc){7180000000ull, 1752950, 0, 0, 1.0, 16.0, 0.9};
	r[0].wear = (struct qs_report_wear){35.9, 35.9, 2.9e18, 1.28};
	r[1] = r[0];
	r[1].shaping = true;
	r[1].policy = "sweep";
	r[1].mode = "dev";
	r[1].write = (struct qs_report_dir){350000.25, 1433600000, 90000, 80000,
					    200000, 900000};
	r[1].qlc = (struct qs_report_qlc){7300000000ull, 111390, 111390, 120000000,
					  1.017, 1.0, 14.3};
	r[1].wear = (struct qs_report_wear){2.4, 2.44, 1.5e19, 0.33};
	r[1].rated_write_bytes_per_s = 1e9;
	r[1].client_write_bytes = 8000;
	r[1].round_write_bytes = 2000;
	r[1].ss = (struct qs_report_ss){"iops_slope", 0.5, true, 20, true, 42.5, 0.25};
	r[1].dirty_start_bytes = 3000;
	r[1].dirty_end_bytes = 4000;
	r[1].fast_write_bytes = 7400000000ull;
	r[1].fast_read_bytes = 6000;
	r[1].fast_life_years = 2.5;
	r[0].fast_life_years = 7; /* shaping off: reported as none */
	r[1].map_hits = 300;
	r[1].map_misses = 100;
	r[1].map_page_reads = 50;
	r[1].map_page_writes = 30;
	r[1].map_peak_bytes = 65536;
	/* 39 MB that grow with capacity, 70 MB of buffers that do not */
	r[1].mem = (struct qs_engine_mem){.index = 10000000, .dirty = 20000000,
					  .map_pages = 3000000, .map_meta = 400000,
					  .qlc_blocks = 5000000, .bands = 600000,
					  .other = 70000000, .total = 109000000};
	r[1].mem_scale = 192;
	r[2].job = "64k \"quoted\", job";
	r[2].shaping = false;
	r[2].policy = NULL;
	r[2].read = (struct qs_report_dir){101000, 6619136000ull, 300000, 290000,
					   600000, 800000};
	r[2].qlc.waf_host = NAN;
	r[2].qlc.waf_iu = NAN;
	r[2].qlc.life_years = INFINITY;
	r[2].wear = (struct qs_report_wear){NAN, NAN, NAN, NAN};
}

static char *capture(int (*fn)(FILE *, const struct qs_report_run *, size_t),
		     const struct qs_report_run *r, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(fn(f, r, n), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void check_dir(const struct jv *d, const struct qs_report_dir *want)
{
	jkeys(d, (const char *[]){"iops", "bw_bytes", "lat_ns", NULL});
	assert_true(fabs(jget(d, "iops", J_NUM)->num - want->iops) < 0.001);
	assert_true(jget(d, "bw_bytes", J_NUM)->num == (double)want->bw_bytes);
	const struct jv *lat = jget(d, "lat_ns", J_OBJ);
	jkeys(lat, (const char *[]){"mean", "percentile", NULL});
	assert_true(fabs(jget(lat, "mean", J_NUM)->num - want->lat_mean_ns) < 0.001);
	const struct jv *pc = jget(lat, "percentile", J_OBJ);
	jkeys(pc, (const char *[]){"50.000000", "99.000000", "99.900000", NULL});
	assert_true(jget(pc, "50.000000", J_NUM)->num == (double)want->lat_p50_ns);
	assert_true(jget(pc, "99.000000", J_NUM)->num == (double)want->lat_p99_ns);
	assert_true(jget(pc, "99.900000", J_NUM)->num == (double)want->lat_p999_ns);
}

/*
 * The map and memory objects of sample_runs' runs (r[1] with log
 * placement): null for the runs off; the map's lookups, the share that
 * missed, its page I/O and peak; the engine's DRAM as run, at full scale
 * (70 MB of buffers as run, 39 MB that grow with capacity x 192) and by
 * part.
 */
static void check_json_map_mem(const struct jv *runs)
{
	for (size_t i = 0; i < 3; i += 2) {
		jget(runs->items[i], "map", J_NULL);
		jget(runs->items[i], "memory", J_NULL);
	}
	const struct jv *m = jget(runs->items[1], "map", J_OBJ);
	jkeys(m, (const char *[]){"hits", "misses", "miss_pct", "page_reads", "page_writes",
				  "page_io_bytes", "dram_peak_bytes", NULL});
	assert_true(jget(m, "hits", J_NUM)->num == 300);
	assert_true(jget(m, "misses", J_NUM)->num == 100);
	assert_true(jget(m, "miss_pct", J_NUM)->num == 25.0);
	assert_true(jget(m, "page_reads", J_NUM)->num == 50);
	assert_true(jget(m, "page_writes", J_NUM)->num == 30);
	assert_true(jget(m, "page_io_bytes", J_NUM)->num == 80 * 4096);
	assert_true(jget(m, "dram_peak_bytes", J_NUM)->num == 65536);
	const struct jv *mem = jget(runs->items[1], "memory", J_OBJ);
	jkeys(mem, (const char *[]){"engine_bytes", "engine_full_scale_bytes", "parts", NULL});
	assert_true(jget(mem, "engine_bytes", J_NUM)->num == 109e6);
	assert_true(jget(mem, "engine_full_scale_bytes", J_NUM)->num == 70e6 + 39e6 * 192);
	const struct jv *pt = jget(mem, "parts", J_OBJ);
	jkeys(pt, (const char *[]){"index", "dirty", "map_pages", "map_meta", "qlc_blocks",
				   "bands", "other", NULL});
	assert_true(jget(pt, "index", J_NUM)->num == 10e6);
	assert_true(jget(pt, "dirty", J_NUM)->num == 20e6);
	assert_true(jget(pt, "map_pages", J_NUM)->num == 3e6);
	assert_true(jget(pt, "map_meta", J_NUM)->num == 400e3);
	assert_true(jget(pt, "qlc_blocks", J_NUM)->num == 5e6);
	assert_true(jget(pt, "bands", J_NUM)->num == 600e3);
	assert_true(jget(pt, "other", J_NUM)->num == 70e6);
}

static void test_json(void **state)
{
	(void)state;
	struct qs_report_run r[3];
	sample_runs(r);
	r[1].placement = "log";
	char *out = capture(qs_report_json, r, 3);
	struct jp p = {out, false};
	struct jv *root = jvalue(&p);
	jws(&p);
	if (p.bad || *p.s)
		fail_msg("invalid JSON near '%.40s' in:\n%s", p.s, out);
	jkeys(root, (const char *[]){"version", "runs", NULL});
	assert_true(jget(root, "version", J_NUM)->num == 1);
	const struct jv *runs = jget(root, "runs", J_ARR);
	assert_int_equal(runs->n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct jv *o = runs->items[i];
		jkeys(o, (const char *[]){"job", "shaping", "policy", "placement", "mode", "read",
					  "write", "qlc", "client", "log", "steadystate", "wear",
					  "fast", "map", "memory", NULL});
		jkeys(jget(o, "client", J_OBJ), (const char *[]){"write_bytes",
				"round_write_bytes", "round_share_pct", NULL});
		jkeys(jget(o, "log", J_OBJ), (const char *[]){"dirty_start_bytes",
				"dirty_end_bytes", "dirty_end_share_pct", "dirty_growth_pct", NULL});
		const struct jv *w = jget(o, "wear", J_OBJ);
		jkeys(w, (const char *[]){"drive_prog_amp", "nand_per_client",
					  "client_bytes_writable", "life_years",
					  "common_write_bytes_per_s", "life_years_common",
					  "rated_write_bytes_per_s", "life_years_rated", NULL});
		assert_string_equal(jget(o, "shaping", J_STR)->str, r[i].shaping ? "on" : "off");
		check_dir(jget(o, "read", J_OBJ), &r[i].read);
		check_dir(jget(o, "write", J_OBJ), &r[i].write);
		const struct jv *q = jget(o, "qlc", J_OBJ);
		jkeys(q, (const char *[]){"write_bytes", "writes", "iu_whole_writes",
					  "read_fill_bytes", "waf_host", "waf_iu",
					  "life_years", NULL});
		assert_true(jget(q, "write_bytes", J_NUM)->num == (double)r[i].qlc.write_bytes);
		assert_true(jget(q, "iu_whole_writes", J_NUM)->num ==
			    (double)r[i].qlc.iu_whole_writes);
		assert_true(jget(q, "read_fill_bytes", J_NUM)->num ==
			    (double)r[i].qlc.read_fill_bytes);
		const struct jv *f = jget(o, "fast", J_OBJ);
		jkeys(f, (const char *[]){"write_bytes", "read_bytes", "written_per_client_byte",
					  "read_per_client_byte", "life_years", NULL});
		if (!r[i].shaping) /* set for run 0, but no fast tier without shaping */
			jget(f, "life_years", J_NULL);
		else
			assert_true(jget(f, "life_years", J_NUM)->num == 2.5);
		assert_true(jget(f, "write_bytes", J_NUM)->num == (double)r[i].fast_write_bytes);
		assert_true(jget(f, "read_bytes", J_NUM)->num == (double)r[i].fast_read_bytes);
		if (i == 1) /* 6000 bytes read for 8000 written by the client */
			assert_true(jget(f, "read_per_client_byte", J_NUM)->num == 0.75);
	}
	assert_string_equal(jget(runs->items[0], "job", J_STR)->str, "4k-randwrite");
	assert_string_equal(jget(runs->items[0], "policy", J_STR)->str, "-");
	assert_string_equal(jget(runs->items[1], "policy", J_STR)->str, "sweep");
	/* the placement: "-" when shaping is off, as set otherwise */
	assert_string_equal(jget(runs->items[0], "placement", J_STR)->str, "-");
	assert_string_equal(jget(runs->items[1], "placement", J_STR)->str, "log");
	/* the mode: NULL is the simulation's */
	assert_string_equal(jget(runs->items[0], "mode", J_STR)->str, "sim");
	assert_string_equal(jget(runs->items[1], "mode", J_STR)->str, "dev");
	assert_string_equal(jget(runs->items[2], "job", J_STR)->str, "64k \"quoted\", job");
	const struct jv *q1 = jget(runs->items[1], "qlc", J_OBJ);
	assert_true(fabs(jget(q1, "waf_host", J_NUM)->num - 1.017) < 1e-9);
	assert_true(fabs(jget(q1, "life_years", J_NUM)->num - 14.3) < 1e-9);
	/* not-a-number and infinity are null: JSON has neither */
	const struct jv *q2 = jget(runs->items[2], "qlc", J_OBJ);
	jget(q2, "waf_host", J_NULL);
	jget(q2, "life_years", J_NULL);
	/* wear: every variant's life at the slowest one's client write rate
	 * (r[0]'s 71.8 MB/s), and at the job's rate_iops when it has one */
	const struct jv *w0 = jget(runs->items[0], "wear", J_OBJ);
	const struct jv *w1 = jget(runs->items[1], "wear", J_OBJ);
	assert_true(fabs(jget(w1, "nand_per_client", J_NUM)->num - 2.44) < 1e-9);
	assert_true(jget(w1, "common_write_bytes_per_s", J_NUM)->num == 71800000.0);
	assert_true(jget(w0, "common_write_bytes_per_s", J_NUM)->num == 71800000.0);
	double yr = 31557600.0;
	assert_true(fabs(jget(w1, "life_years_common", J_NUM)->num - 1.5e19 / (71.8e6 * yr)) <
		    1e-5);
	assert_true(fabs(jget(w0, "life_years_common", J_NUM)->num - 2.9e18 / (71.8e6 * yr)) <
		    1e-5);
	assert_true(fabs(jget(w1, "life_years_rated", J_NUM)->num - 1.5e19 / (1e9 * yr)) < 1e-5);
	jget(w0, "rated_write_bytes_per_s", J_NULL);
	/* steady state: null when not checked, else what and when */
	jget(runs->items[0], "steadystate", J_NULL);
	const struct jv *ss = jget(runs->items[1], "steadystate", J_OBJ);
	jkeys(ss, (const char *[]){"criterion", "limit", "pct", "duration_s", "reached", "at_s",
				   "last", NULL});
	assert_string_equal(jget(ss, "criterion", J_STR)->str, "iops_slope");
	assert_true(jget(ss, "at_s", J_NUM)->num == 42.5);
	jget(jget(runs->items[2], "wear", J_OBJ), "life_years_common", J_NULL);
	check_json_map_mem(runs);
	jfree(root);
	free(out);

	/* in place: no map figures, the engine's DRAM still; a log run
	 * without lookups has no miss share; shaping off has no engine DRAM
	 * whatever the run holds */
	r[0].mem = r[1].mem;
	r[1].placement = "inplace";
	r[2].shaping = true;
	r[2].placement = "log";
	out = capture(qs_report_json, r, 3);
	p = (struct jp){out, false};
	root = jvalue(&p);
	runs = jget(root, "runs", J_ARR);
	jget(runs->items[0], "memory", J_NULL);
	jget(runs->items[1], "map", J_NULL);
	jget(jget(runs->items[1], "memory", J_OBJ), "engine_bytes", J_NUM);
	const struct jv *m2 = jget(runs->items[2], "map", J_OBJ);
	jget(m2, "miss_pct", J_NULL);
	assert_true(jget(m2, "page_io_bytes", J_NUM)->num == 0);
	/* mem_scale 0: unscaled, full scale is the run's figure */
	assert_true(jget(jget(runs->items[2], "memory", J_OBJ), "engine_full_scale_bytes",
			 J_NUM)->num == 0);
	jfree(root);
	free(out);

	/* no runs is still a valid document */
	out = capture(qs_report_json, r, 0);
	p = (struct jp){out, false};
	root = jvalue(&p);
	jws(&p);
	assert_false(p.bad || *p.s);
	assert_int_equal(jget(root, "runs", J_ARR)->n, 0);
	jfree(root);
	free(out);
}

/* Split one CSV line (RFC 4180 quoting) into fields; returns the count. */
static size_t csv_split(const char *line, char fields[][64], size_t max)
{
	size_t n = 0;
	const char *s = line;
	for (;;) {
		char *o = fields[n];
		size_t k = 0;
		if (*s == '"') {
			s++;
			while (*s && !(*s == '"' && s[1] != '"')) {
				if (*s == '"')
					s++;
				if (k < 63)
					o[k++] = *s;
				s++;
			}
			if (*s == '"')
				s++;
		} else {
			while (*s && *s != ',' && *s != '\n')
				if (k < 63)
					o[k++] = *s++;
		}
		o[k] = 0;
		n++;
		if (*s != ',' || n == max)
			return n;
		s++;
	}
}

/*
 * fio's JSON: fio's layout and key spelling (" : ", the percentile keys
 * printed with "%f"), a direction without I/O has runtime 0 and no
 * percentiles, bw is bw_bytes / 1024, runtime is in ms, unified mixed
 * prints "mixed" alone, the bench's figures sit in "qlcshape" with null
 * for what does not exist.
 */
static void test_fio_json(void **state)
{
	(void)state;
	struct qs_report_run r[3];
	sample_runs(r);
	const struct qs_report_opt go[] = {{"size", "5%"}}, jo[] = {{"rw", "randwrite"}};
	r[0].opts = jo;
	r[0].nopts = 1;
	r[0].runtime_ns = 2500000; /* 2.5 ms: runtime 3 (rounded), rates in ns */
	struct qs_report_fdir *w = &r[0].fio[QS_DDIR_WRITE];
	w->io_bytes = 40960;
	w->total_ios = 10;
	struct qs_hist *h = qs_hist_new();
	for (uint64_t v = 1000; v <= 10000; v += 1000)
		qs_hist_add(h, v);
	qs_report_lat_fill(&w->lat[QS_LAT_TOTAL], h, NULL, 0);
	/* fio's percentile_list: clat at those only */
	qs_report_lat_fill(&w->lat[QS_LAT_COMPLETE], h, (const double[]){25, 99.5}, 2);
	w->lat[QS_LAT_SUBMIT].n = 10;
	free(h);
	r[1].fio_name = "alias";
	r[1].placement = "log";
	r[1].groupid = 3;
	r[2].unified = QS_UNIFIED_MIXED;
	r[2].error = 110; /* max_latency ended it: fio's ETIMEDOUT */
	struct qs_report_fio_doc doc = {"fio-3.33-qlcshape", 1700000000123, go, 1, r, 3, r, 3};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(qs_report_fio_json(f, &doc), 0);
	fclose(f);
	assert_non_null(strstr(out, "{\n  \"fio version\" : \"fio-3.33-qlcshape\",\n"));
	assert_non_null(strstr(out, "\"99.990000\" : 10000"));
	struct jp p = {out, false};
	struct jv *root = jvalue(&p);
	jws(&p);
	if (p.bad || *p.s)
		fail_msg("invalid JSON near '%.40s' in:\n%s", p.s, out);
	jkeys(root, (const char *[]){"fio version", "timestamp", "timestamp_ms", "time",
				     "global options", "jobs", NULL});
	assert_true(jget(root, "timestamp_ms", J_NUM)->num == 1700000000123.0);
	assert_true(jget(root, "timestamp", J_NUM)->num == 1700000000.0);
	assert_string_equal(jget(jget(root, "global options", J_OBJ), "size", J_STR)->str, "5%");
	const struct jv *jobs = jget(root, "jobs", J_ARR);
	assert_int_equal(jobs->n, 3);
	const struct jv *j0 = jobs->items[0];
	jkeys(j0, (const char *[]){"jobname", "groupid", "error", "job options", "read", "write",
				   "trim", "job_runtime", "qlcshape", NULL});
	assert_string_equal(jget(j0, "jobname", J_STR)->str, "4k-randwrite (shaping off)");
	const struct jv *wr = jget(j0, "write", J_OBJ);
	jkeys(wr, (const char *[]){"io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime",
				   "total_ios", "short_ios", "drop_ios", "slat_ns", "clat_ns",
				   "lat_ns", NULL});
	assert_true(jget(wr, "io_kbytes", J_NUM)->num == 40);
	assert_true(jget(wr, "bw_bytes", J_NUM)->num == 16384000); /* 40960 B / 2.5 ms */
	assert_true(jget(wr, "bw", J_NUM)->num == 16000);
	assert_true(jget(wr, "iops", J_NUM)->num == 4000);
	assert_true(jget(wr, "runtime", J_NUM)->num == 3);
	const struct jv *lat = jget(wr, "lat_ns", J_OBJ);
	jkeys(lat, (const char *[]){"min", "max", "mean", "stddev", "N", "percentile", NULL});
	assert_true(jget(lat, "N", J_NUM)->num == 10 && jget(lat, "mean", J_NUM)->num == 5500);
	assert_true(fabs(jget(lat, "stddev", J_NUM)->num - 3027.650354) < 1e-3);
	const struct jv *pct = jget(lat, "percentile", J_OBJ);
	assert_int_equal(pct->n, QS_REPORT_NPCT);
	assert_string_equal(pct->keys[13], "99.500000");
	/* a bucket's midpoint: within 1/256 */
	assert_true(fabs(jget(pct, "50.000000", J_NUM)->num - 5000) <= 5000 / 256.0);
	/* clat with a percentile_list of 25:99.5 has those two */
	pct = jget(jget(wr, "clat_ns", J_OBJ), "percentile", J_OBJ);
	assert_int_equal(pct->n, 2);
	assert_string_equal(pct->keys[0], "25.000000");
	assert_string_equal(pct->keys[1], "99.500000");
	assert_true(fabs(jget(pct, "99.500000", J_NUM)->num - 10000) <= 10000 / 256.0);
	/* slat, zeros filled by hand: fio's list */
	assert_int_equal(jget(jget(wr, "slat_ns", J_OBJ), "percentile", J_OBJ)->n,
			 QS_REPORT_NPCT);
	const struct jv *rd = jget(j0, "read", J_OBJ);
	assert_true(jget(rd, "runtime", J_NUM)->num == 0 && jget(rd, "iops", J_NUM)->num == 0);
	jkeys(jget(rd, "clat_ns", J_OBJ), (const char *[]){"min", "max", "mean", "stddev", "N",
							   NULL});
	jkeys(jget(j0, "qlcshape", J_OBJ), (const char *[]){"job", "shaping", "policy",
				"placement", "mode", "members", "qlc", "client", "log",
				"steadystate", "wear", "fast", "map", "memory", NULL});
	jget(jget(j0, "qlcshape", J_OBJ), "map", J_NULL);
	jget(jget(j0, "qlcshape", J_OBJ), "memory", J_NULL);
	const struct jv *j1 = jobs->items[1];
	assert_string_equal(jget(j1, "jobname", J_STR)->str, "alias (shaping on, sweep, log)");
	assert_true(jget(j1, "groupid", J_NUM)->num == 3);
	const struct jv *q1 = jget(j1, "qlcshape", J_OBJ);
	assert_string_equal(jget(q1, "mode", J_STR)->str, "dev");
	/* the same map and memory figures as the bench's --json */
	const struct jv *m1 = jget(q1, "map", J_OBJ);
	assert_true(jget(m1, "miss_pct", J_NUM)->num == 25.0);
	assert_true(jget(m1, "page_io_bytes", J_NUM)->num == 80 * 4096);
	assert_true(jget(m1, "dram_peak_bytes", J_NUM)->num == 65536);
	const struct jv *mem1 = jget(q1, "memory", J_OBJ);
	assert_true(jget(mem1, "engine_bytes", J_NUM)->num == 109e6);
	assert_true(jget(mem1, "engine_full_scale_bytes", J_NUM)->num == 70e6 + 39e6 * 192);
	assert_true(jget(jget(mem1, "parts", J_OBJ), "qlc_blocks", J_NUM)->num == 5e6);
	const struct jv *j2 = jobs->items[2];
	jkeys(j2, (const char *[]){"jobname", "groupid", "error", "job options", "mixed",
				   "job_runtime", "qlcshape", NULL});
	assert_true(jget(j2, "error", J_NUM)->num == 110);
	assert_true(jget(j0, "error", J_NUM)->num == 0);
	const struct jv *q2 = jget(jget(j2, "qlcshape", J_OBJ), "qlc", J_OBJ);
	jget(q2, "waf_host", J_NULL);
	jget(q2, "life_years", J_NULL); /* infinite: JSON has no inf */
	jfree(root);
	free(out);
}

static void test_csv(void **state)
{
	(void)state;
	struct qs_report_run r[3];
	sample_runs(r);
	r[1].placement = "log";
	char *out = capture(qs_report_csv, r, 3);
	char (*f)[64] = calloc(64, 64);
	char *save = NULL, *line = strtok_r(out, "\n", &save);
	size_t nh = csv_split(line, f, 64);
	assert_int_equal(nh, 53);
	assert_string_equal(f[0], "job");
	assert_string_equal(f[3], "placement");
	assert_string_equal(f[4], "read_iops");
	assert_string_equal(f[9], "read_lat_p999_ns");
	assert_string_equal(f[15], "write_lat_p999_ns");
	assert_string_equal(f[16], "qlc_write_bytes");
	assert_string_equal(f[23], "fast_write_bytes");
	assert_string_equal(f[24], "mode");
	assert_string_equal(f[26], "nand_per_client");
	assert_string_equal(f[30], "life_years_common");
	assert_string_equal(f[32], "life_years_rated");
	assert_string_equal(f[35], "round_share_pct");
	assert_string_equal(f[38], "dirty_end_share_pct");
	assert_string_equal(f[39], "dirty_growth_pct");
	assert_string_equal(f[42], "ss_at_s");
	assert_string_equal(f[43], "map_miss_pct");
	assert_string_equal(f[44], "map_page_io_bytes");
	assert_string_equal(f[45], "map_dram_peak_bytes");
	assert_string_equal(f[46], "engine_bytes");
	assert_string_equal(f[47], "engine_full_scale_bytes");
	assert_string_equal(f[48], "fast_read_bytes");
	assert_string_equal(f[49], "fast_written_per_client");
	assert_string_equal(f[50], "fast_read_per_client");
	assert_string_equal(f[51], "map_page_reads_per_client");
	assert_string_equal(f[52], "fast_life_years");
	int lines = 0;
	while ((line = strtok_r(NULL, "\n", &save))) {
		size_t n = csv_split(line, f, 64);
		assert_int_equal(n, nh);
		if (lines == 1) {
			assert_string_equal(f[1], "on");
			assert_string_equal(f[2], "sweep");
			assert_string_equal(f[3], "log");
			assert_string_equal(f[10], "350000.250");
			assert_string_equal(f[16], "7300000000");
			assert_string_equal(f[23], "7400000000");
			assert_string_equal(f[24], "dev");
			assert_string_equal(f[26], "2.440000");
			assert_string_equal(f[29], "71800000.000");
			assert_string_equal(f[33], "8000");
			assert_string_equal(f[35], "25.000000");
			assert_string_equal(f[37], "4000");
			assert_string_equal(f[38], "50.000000");
			assert_string_equal(f[39], "12.500000"); /* (4000 - 3000) / 8000 */
			assert_string_equal(f[40], "iops_slope");
			assert_string_equal(f[41], "1");
			assert_string_equal(f[42], "42.500000");
			assert_string_equal(f[43], "25.000000");
			assert_string_equal(f[44], "327680");
			assert_string_equal(f[45], "65536");
			assert_string_equal(f[46], "109000000");
			assert_string_equal(f[47], "7558000000");
			assert_string_equal(f[48], "6000");
			assert_string_equal(f[49], "925000.000000");
			assert_string_equal(f[50], "0.750000");
			assert_string_equal(f[51], "25.600000"); /* 50 pages x 4096 / 8000 */
		} else {
			/* shaping off: neither map nor engine figures */
			for (size_t k = 43; k < 52; k++)
				assert_string_equal(f[k], "");
		}
		if (lines == 2) {
			assert_string_equal(f[0], "64k \"quoted\", job");
			assert_string_equal(f[20], ""); /* NaN waf_host: empty */
			assert_string_equal(f[22], ""); /* infinite life: empty */
		}
		lines++;
	}
	assert_int_equal(lines, 3);
	free(f);
	free(out);
}

static void test_table(void **state)
{
	(void)state;
	struct qs_report_run r[3];
	sample_runs(r);
	char *out = capture(qs_report_table, r, 3);
	print_message("%s", out);
	assert_non_null(strstr(out, "job 4k-randwrite"));
	assert_non_null(strstr(out, "on sweep"));
	assert_non_null(strstr(out, "sweep/off"));
	/* write IOPS row: off, on, and the ratio 350000.25 / 17529.5 */
	char *row = strstr(out, "write IOPS");
	assert_non_null(row);
	assert_non_null(strstr(row, "17530"));
	assert_non_null(strstr(row, "350000"));
	assert_non_null(strstr(row, "19.97x"));
	/* the read-only job has no write rows and an infinite life */
	char *j2 = strstr(out, "job 64k");
	assert_non_null(j2);
	assert_null(strstr(j2, "write IOPS"));
	assert_non_null(strstr(j2, "read IOPS"));
	assert_non_null(strstr(j2, "life y, own rate"));
	/* shares compare as a difference (points), not as a ratio of two
	 * percentages */
	row = strstr(out, "QLC whole-IU writes %");
	assert_non_null(row);
	assert_non_null(strstr(row, "+100.0 pt"));
	/* life at the slowest variant's rate: on lives 1.5e19 / 2.9e18 = 5.17x off */
	row = strstr(out, "life y, slowest rate");
	assert_non_null(row);
	assert_true(strstr(row, "5.17x") < strchr(row, '\n'));
	assert_non_null(strstr(out, "slowest rate: 71.8 MB/s"));
	/* rounding rows, since a variant's writes were rounded: 25% on, 0 off */
	row = strstr(out, "4K rounding %");
	assert_true(row && row < j2);
	assert_true(strstr(row, "+25.0 pt") < strchr(row, '\n'));
	assert_null(strstr(j2, "4K rounding"));
	row = strstr(out, "life y, rate_iops");
	assert_true(row && row < j2);
	assert_null(strstr(j2, "life y, rate_iops"));
	/* the first job shows no read rows */
	char *r1 = strstr(out, "read IOPS");
	assert_true(r1 > j2);
	assert_null(strstr(out, "trim IOPS"));
	assert_null(strstr(out, "mixed IOPS"));
	/* the engine's DRAM, as run and at full scale: '-' off, and only for
	 * a job with shaping on; the map rows only with log placement */
	row = strstr(out, "engine DRAM MB");
	assert_true(row && row < j2);
	assert_true(strchr(row, '-') < strstr(row, "109.0"));
	assert_true(strstr(row, "109.0") < strchr(row, '\n'));
	row = strstr(out, "full-scale DRAM MB");
	assert_true(row && row < j2 && strstr(row, "7558.0") < strchr(row, '\n'));
	assert_null(strstr(j2, "DRAM"));
	assert_null(strstr(out, "map misses %"));
	free(out);

	r[1].placement = "log";
	out = capture(qs_report_table, r, 3);
	row = strstr(out, "map misses %");
	assert_true(row && strstr(row, "25.00") < strchr(row, '\n'));
	row = strstr(out, "map page I/O MB");
	assert_true(row && strstr(row, "0.3") < strchr(row, '\n'));
	row = strstr(out, "map DRAM peak MB");
	assert_true(row && strstr(row, "0.07") < strchr(row, '\n'));
	r[1].placement = NULL;
	free(out);

	/* trims get rows of their own; fio's unified_rw_reporting=mixed shows
	 * the directions together only, both after each one */
	r[0].trim = (struct qs_report_dir){1234, 5054464, 800, 700, 900, 1000};
	r[1].trim = r[0].trim;
	r[2].unified = QS_UNIFIED_MIXED;
	r[2].mixed = r[2].read;
	out = capture(qs_report_table, r, 3);
	j2 = strstr(out, "job 64k");
	row = strstr(out, "trim IOPS");
	assert_true(row && row < j2 && strstr(row, "1234") < strchr(row, '\n'));
	assert_non_null(strstr(j2, "mixed IOPS"));
	assert_null(strstr(j2, "read IOPS"));
	free(out);
	r[2].unified = QS_UNIFIED_BOTH;
	out = capture(qs_report_table, r, 3);
	j2 = strstr(out, "job 64k");
	assert_true(strstr(j2, "read IOPS") && strstr(j2, "read IOPS") < strstr(j2, "mixed IOPS"));
	free(out);
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static void test_svg(void **state)
{
	(void)state;
	struct qs_report_run r[3];
	sample_runs(r);
	const enum qs_report_metric m[] = {QS_METRIC_WRITE_IOPS, QS_METRIC_WAF_IU,
					   QS_METRIC_READ_IOPS};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_svg_bars(f, "A & B", r, 3, m, 3), 0);
	fclose(f);
	assert_true(!strncmp(buf, "<?xml", 5));
	assert_non_null(strstr(buf, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(buf, "A &amp; B"));
	assert_non_null(strstr(buf, "64k &quot;quoted&quot;, job"));
	assert_int_equal(count(buf, "<svg"), 1);
	assert_int_equal(count(buf, "</svg>\n"), 1);
	/* bars: write IOPS off + on, waf_iu off + on, read IOPS of the read
	 * job; the write panels leave the read-only job out (its label and its
	 * bar's tooltip are in the read panel only) */
	assert_int_equal(count(buf, "</rect>"), 5);
	assert_int_equal(count(buf, "64k &quot;quoted&quot;, job"), 2);
	assert_int_equal(count(buf, "<text"), count(buf, "</text>"));
	assert_null(strstr(buf, "nan"));
	free(buf);

	/* no metric list: write IOPS and NAND bytes per client byte */
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_svg_bars(f, NULL, r, 3, NULL, 0), 0);
	fclose(f);
	assert_non_null(strstr(buf, ">write IOPS<"));
	assert_non_null(strstr(buf, ">NAND bytes programmed per client byte written (x)<"));
	assert_null(strstr(buf, "IU (x)"));
	assert_int_equal(count(buf, "</rect>"), 4);
	free(buf);

	struct qs_report_point off[] = {{1000, 80}, {5000, 95}, {9000, 400}};
	struct qs_report_point on[] = {{1000, 20}, {10000, 30}, {60000, 90}};
	struct qs_report_series s[] = {{"off", off, 3}, {"on sweep", on, 3}};
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_svg_lines(f, "p99 against IOPS", "IOPS", "p99 (us)",
					     s, 2, true), 0);
	fclose(f);
	assert_int_equal(count(buf, "<polyline"), 2);
	assert_int_equal(count(buf, "<circle"), 6);
	assert_null(strstr(buf, "nan"));
	free(buf);
	/* a log axis cannot show zero */
	struct qs_report_point z[] = {{1, 0}};
	struct qs_report_series sz = {"z", z, 1};
	f = open_memstream(&buf, &len);
	assert_int_equal(qs_report_svg_lines(f, NULL, "x", "y", &sz, 1, true), -22);
	fclose(f);
	free(buf);
}

static void test_life_and_fill(void **state)
{
	(void)state;
	/* 22.93 PBW over 100 MB/s of whole-IU writes: 7.27 years */
	double y = qs_report_life_years(22.93e15, 30720000000000ull, 30720000000000ull,
					100e6, 1.0);
	assert_true(fabs(y - 22.93e15 / (100e6 * 31557600.0)) < 1e-9);
	assert_true(fabs(y - 7.266) < 0.001);
	/* half the capacity: half the budget; 16x IU amplification: 1/16 */
	double h = qs_report_life_years(22.93e15, 30720000000000ull, 15360000000000ull,
					100e6, 1.0);
	assert_true(fabs(h - y / 2) < 1e-9);
	double a = qs_report_life_years(22.93e15, 30720000000000ull, 30720000000000ull,
					100e6, 16.0);
	assert_true(fabs(a - y / 16) < 1e-9);
	assert_true(isinf(qs_report_life_years(1e15, 1, 1, 0, 1)));
	assert_true(isnan(qs_report_life_years(0, 1, 1, 1, 1)));
	/* the fast device: 146 PB over 1 GB/s is 4.63 years; a model that
	 * programs twice what it is sent halves it, a rating pattern's
	 * amplification of 1.5 gives half again */
	double f1 = qs_report_fast_life(146e15, 0, 10000000000ull, 0, 0, 10000000000ull);
	assert_true(fabs(f1 - 146e15 / (1e9 * 31557600.0)) < 1e-9);
	assert_true(fabs(f1 - 4.6265) < 0.001);
	double f2 = qs_report_fast_life(146e15, 1.5, 10000000000ull, 500, 1000, 10000000000ull);
	assert_true(fabs(f2 - f1 * 1.5 / 2) < 1e-9);
	assert_true(isnan(qs_report_fast_life(NAN, 1, 1, 0, 0, 1)));
	assert_true(isnan(qs_report_fast_life(1e15, 1, 1, 0, 0, 0)));
	assert_true(isinf(qs_report_fast_life(1e15, 1, 0, 0, 0, 1)));

	/* 4 KiB random writes passed through: waf_host 1, waf_iu 16 */
	struct qs_report_qlc q;
	struct qs_report_qlc_in in = {
		.client_write_bytes = 1000000000, .qlc_write_bytes = 1000000000,
		.qlc_writes = 244140, .qlc_iu_whole_writes = 0,
		.drive_write_bytes = 1000000000, .drive_prog_bytes = 16000000000ull,
		.drive_nand_prog_bytes = 16000000000ull,
		.elapsed_ns = 10000000000ull, .rating_bytes = 22.93e15,
		.rated_capacity = 30720000000000ull, .capacity = 30720000000000ull,
	};
	qs_report_qlc_fill(&q, &in);
	assert_true(q.waf_host == 1.0);
	assert_true(q.waf_iu == 16.0);
	assert_int_equal(q.writes, 244140);
	assert_true(fabs(q.life_years - y / 16) < 1e-9); /* 100 MB/s as above */
	/* the drive's GC counts: twice the NAND, half the life; a budget of
	 * the rating times its pattern's amplification, twice the life */
	in.drive_nand_prog_bytes = 32000000000ull;
	qs_report_qlc_fill(&q, &in);
	assert_true(fabs(q.life_years - y / 32) < 1e-9);
	in.rating_prog_amp = 2;
	qs_report_qlc_fill(&q, &in);
	assert_true(fabs(q.life_years - y / 16) < 1e-9);
	in.rating_prog_amp = 0;
	in.drive_nand_prog_bytes = 16000000000ull;
	in.client_write_bytes = 0;
	in.drive_write_bytes = 0;
	qs_report_qlc_fill(&q, &in);
	assert_true(isnan(q.waf_host) && isnan(q.waf_iu) && isnan(q.life_years));
	in.qlc_write_bytes = 0;
	qs_report_qlc_fill(&q, &in);
	assert_true(isinf(q.life_years));

	/* wear: 4 KiB writes through a drive programming 32 NAND bytes per
	 * byte (16 for the IU, 2 for its GC) against a budget of the rating
	 * times its pattern's 4.56 */
	struct qs_report_wear w;
	in = (struct qs_report_qlc_in){
		.client_write_bytes = 1000000000, .qlc_write_bytes = 1500000000,
		.drive_write_bytes = 1500000000, .drive_prog_bytes = 24000000000ull,
		.drive_nand_prog_bytes = 48000000000ull, .elapsed_ns = 10000000000ull,
		.rating_bytes = 22.93e15, .rated_capacity = 30720000000000ull,
		.capacity = 15360000000000ull, .rating_prog_amp = 4.56,
	};
	qs_report_wear_fill(&w, &in);
	assert_true(w.drive_prog_amp == 32.0);
	assert_true(w.nand_per_client == 48.0); /* waf_host 1.5 x 32 */
	double budget = 22.93e15 / 2 * 4.56;
	assert_true(fabs(w.client_bytes_writable / (budget / 48) - 1) < 1e-12);
	assert_true(fabs(w.life_years / (budget / 48 / (1e8 * 31557600.0)) - 1) < 1e-12);
	in.rating_prog_amp = 0; /* not given: the rating itself is the budget */
	qs_report_wear_fill(&w, &in);
	assert_true(fabs(w.client_bytes_writable / (22.93e15 / 2 / 48) - 1) < 1e-12);
	in.drive_write_bytes = 0; /* no model: nothing known */
	qs_report_wear_fill(&w, &in);
	assert_true(isnan(w.drive_prog_amp) && isnan(w.nand_per_client) &&
		    isnan(w.client_bytes_writable) && isnan(w.life_years));
	in.drive_write_bytes = 1500000000;
	in.rating_bytes = NAN; /* no rating: amplification known, life not */
	qs_report_wear_fill(&w, &in);
	assert_true(w.nand_per_client == 48.0 && isnan(w.life_years));

	struct qs_hist *lat = qs_hist_new();
	for (uint64_t i = 1; i <= 1000; i++)
		qs_hist_add(lat, i * 1000);
	struct qs_report_dir d;
	qs_report_dir_fill(&d, lat, 1000, 1000 * 4096, 500000000ull);
	assert_true(fabs(d.iops - 2000) < 1e-9);
	assert_int_equal(d.bw_bytes, 2000 * 4096);
	assert_true(fabs(d.lat_mean_ns - 500500) < 1e-6);
	assert_true(labs((long)d.lat_p50_ns - 500000) <= 500000 / 200);
	assert_true(labs((long)d.lat_p99_ns - 990000) <= 990000 / 200);
	assert_true(labs((long)d.lat_p999_ns - 999000) <= 999000 / 200);
	free(lat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_percentiles),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_fio_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_life_and_fill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
