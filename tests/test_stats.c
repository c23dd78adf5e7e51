/* SPDX-License-Identifier: MIT */
/*
 * qs_stats: the control socket's text and JSON statistics answers, rendered
 * in-process from a view with a distinct value in every field: each value
 * lands in its place, the backend without an engine shows no engine lines,
 * the emulated drive's lines appear only with one, and a short buffer is
 * reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "../daemon/stats.h"

static const struct qs_prom_frontend fe = {
	.reads = 11, .read_bytes = 12, .writes = 13, .write_bytes = 14,
	.flushes = 15, .discards = 16, .write_zeroes = 17, .errors = 18, .inflight = 19,
};

static struct qs_engine_stats eng(void)
{
	struct qs_engine_stats e;
	memset(&e, 0, sizeof(e));
	e.cached_blocks = 21;
	e.dirty_ius = 22;
	e.index_bytes = 23;
	e.log_blocks = 200;
	e.log_used_blocks = 50;
	e.log_appends = 26;
	e.log_append_bytes = 27;
	e.log_flushes = 28;
	e.throttled_writes = 29;
	e.destage_ius = 31;
	e.destage_full_ius = 32;
	e.destage_partial_ius = 33;
	e.destage_bytes = 34;
	e.destage_retries = 35;
	e.qlc_writes = 8;
	e.qlc_iu_whole_writes = 2;
	e.qlc_write_bytes = 41;
	e.qlc_reads = 42;
	e.qlc_read_bytes = 43;
	e.read_fill_bytes = 44;
	e.bypass_writes = 45;
	e.fast_errors = 51;
	e.qlc_errors = 52;
	e.client_errors = 53;
	e.mem = (struct qs_engine_mem){.index = 71, .dirty = 72, .map_pages = 73, .map_meta = 74,
				       .qlc_blocks = 75, .bands = 76, .other = 77, .total = 518};
	return e;
}

static struct qs_stats_view view(const struct qs_engine_stats *e, const struct qs_emu_stats *es)
{
	struct qs_stats_view v = {
		.backend = e ? "engine" : "ram",
		.interval_s = 2.5,
		.frontend = &fe,
		.rate = {.read_iops = 1.5, .write_iops = 2.5, .read_mbs = 3.25, .write_mbs = 4.5,
			 .destage_mbs = 5.75},
		.engine = e,
		.emu = es,
	};
	return v;
}

static void test_text_ram(void **st)
{
	struct qs_stats_view v = view(NULL, NULL);
	char out[1024];
	assert_int_equal(qs_stats_render_text(&v, out, sizeof(out)), 0);
	assert_string_equal(out,
		"backend          ram\n"
		"client           11 reads (12 bytes), 13 writes (14 bytes), 15 flushes, "
		"16 discards, 17 write-zeroes, 18 errors, 19 in flight\n"
		"client rate      1.5 read IOPS, 2.5 write IOPS, 3.250 MB/s read, 4.500 MB/s write "
		"(last 2.5 s)\n");
}

static void test_text_engine(void **st)
{
	struct qs_engine_stats e = eng();
	struct qs_emu_stats es = {.writes = 61, .write_bytes = 1000, .completions = 4,
				  .late_ns_sum = 8000, .late_ns_max = 2500000};
	es.model.partial_ius = 62;
	es.model.rmw = 63;
	es.model.nand_prog_bytes = 2500;
	struct qs_stats_view v = view(&e, &es);
	char out[4096];
	assert_int_equal(qs_stats_render_text(&v, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\ncache            21 cached blocks, 22 dirty IUs, 23 index "
				    "bytes\n"));
	assert_non_null(strstr(out, "\nlog              50 of 200 blocks used (25.0%), 26 appends, "
				    "28 flushes, 29 throttled writes, 0 paced\n"));
	assert_non_null(strstr(out, "\ndestage          31 IUs (32 full, 33 partial), 5.750 MB/s "
				    "(last 2.5 s), 35 retries\n"));
	assert_non_null(strstr(out, "\nqlc              8 writes (41 bytes), 2 whole-IU (25.00%), "
				    "42 reads, 44 read-fill bytes, 45 bypass writes\n"));
	assert_non_null(strstr(out, "\nengine dram      518 bytes: index 71, dirty-IU records 72, "
				    "map pages 73, per map page 74, per QLC block 75, bands 76, "
				    "buffers and other 77\n"));
	assert_non_null(strstr(out, "\nerrors           fast 51, qlc 52, client 53\n"));
	assert_non_null(strstr(out, "\nemulated qlc     61 writes, 62 partial-IU (63 "
				    "read-modify-writes in the drive), NAND write amplification "
				    "2.50, completions 2 us late on average (max 2.5 ms)\n"));
	e.failed = true;
	assert_int_equal(qs_stats_render_text(&v, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "client 53; LOG FAILED: writes return EIO\n"));
}

static void test_json(void **st)
{
	struct qs_engine_stats e = eng();
	struct qs_stats_view v = view(&e, NULL);
	char out[4096];
	assert_int_equal(qs_stats_render_json(&v, out, sizeof(out)), 0);
	assert_true(!strncmp(out, "{\"backend\": \"engine\", \"interval_s\": 2.500,\n", 43));
	const char *want[] = {
		"\"reads\": 11,", "\"read_bytes\": 12,", "\"write_zeroes\": 17,", "\"inflight\": 19,",
		"\"write_mbs\": 4.500}", "\"dirty_ius\": 22,", "\"used_pct\": 25.0,",
		"\"append_bytes\": 27,", "\"mbs\": 5.750,", "\"whole_iu_pct\": 25.00,",
		"\"read_bytes\": 43,", "\"bypass_writes\": 45}", "\"failed\": false}",
		" \"memory\": {\"index\": 71, \"dirty\": 72, \"map_pages\": 73, \"map_meta\": 74, "
		"\"qlc_blocks\": 75, \"bands\": 76, \"other\": 77, \"total\": 518},\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_non_null(strstr(out, want[i]));
	assert_null(strstr(out, "\"emu\""));
	size_t n = strlen(out), open = 0, close = 0;
	for (size_t i = 0; i < n; i++) {
		open += out[i] == '{';
		close += out[i] == '}';
	}
	assert_int_equal(open, close);
	assert_string_equal(out + n - 2, "}\n");

	v = view(NULL, NULL);
	assert_int_equal(qs_stats_render_json(&v, out, sizeof(out)), 0);
	assert_null(strstr(out, "\"cache\""));
	assert_string_equal(out + strlen(out) - 3, "}}\n");
}

static void test_short_buffer(void **st)
{
	struct qs_engine_stats e = eng();
	struct qs_stats_view v = view(&e, NULL);
	char out[64];
	assert_int_equal(qs_stats_render_text(&v, out, sizeof(out)), -ENOSPC);
	assert_int_equal(qs_stats_render_json(&v, out, sizeof(out)), -ENOSPC);
	assert_true(strlen(out) < sizeof(out));
	assert_int_equal(qs_stats_render_json(&v, out, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_ram),
		cmocka_unit_test(test_text_engine),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_short_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
