/* SPDX-License-Identifier: MIT */
/* qs_config: the shipped example loads; every error names file, line, key, value, range. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/config.h"
#include "th.h"
#include "ttmp.h"

static char tmp_path[64];

static const char *write_conf(const char *text)
{
	ttmp_file(tmp_path, sizeof(tmp_path), "conf", NULL, text);
	return tmp_path;
}

/* The repo's example, from the repo root or relative to this source file. */
static const char *example_path(void)
{
	static char path[512];
	const char *src = __FILE__;
	const char *slash = strrchr(src, '/');

	if (access("conf/qlcshaped.ini", R_OK) == 0)
		return "conf/qlcshaped.ini";
	snprintf(path, sizeof(path), "%.*s/../conf/qlcshaped.ini",
		 slash ? (int)(slash - src) : 1, slash ? src : ".");
	return path;
}

static void test_example_file(void **state)
{
	struct qs_config c;
	struct qs_engine_conf e;
	char err[512] = "";
	int ret;

	(void)state;
	ret = qs_config_load(&c, example_path(), err, sizeof(err));
	if (ret)
		fail_msg("%s", err);
	assert_string_equal(c.fast, "/dev/disk/by-id/nvme-optane-example");
	assert_string_equal(c.qlc, "/dev/disk/by-id/nvme-qlc-example");
	assert_int_equal(c.iu_bytes, 0);
	assert_string_equal(c.control_socket, "/run/qlcshaped/qlc0.sock");
	assert_true(c.drain_on_stop);
	assert_int_equal(c.backend, QS_BACKEND_ENGINE);
	assert_int_equal(c.queues, 1);
	assert_int_equal(c.queue_depth, 64);
	assert_int_equal(c.max_io_bytes, 512 * 1024);
	assert_int_equal(c.dev_id, -1);
	assert_false(c.user_recovery);
	assert_true(qs_config_is_set(&c, "policy.order"));
	assert_false(qs_config_is_set(&c, "policy.nonexistent"));

	/* The overlay writes what the file set, and nothing else. */
	memset(&e, 0xab, sizeof(e));
	qs_config_engine_conf(&c, &e);
	assert_int_equal(e.mode, QS_MODE_CACHE);
	assert_int_equal(e.segment_blocks, 256);
	assert_int_equal(e.group_commit_blocks, 256);
	assert_int_equal(e.log_qd, 4);
	assert_int_equal(e.destage_qd, 16);
	assert_int_equal(e.dram_buffer_bytes, 64ull << 20);
	assert_int_equal(e.bypass_min_bytes, 0);
	assert_int_equal(e.qlc_size, 0);
	assert_int_equal(e.policy.order, QS_ORDER_FIFO);
	assert_int_equal(e.policy.partial, QS_PARTIAL_FILL);
	assert_int_equal(e.policy.hold_ms, 1000);
	assert_int_equal(e.policy.start_pct, 50);
	assert_int_equal(e.policy.urgent_pct, 85);
	assert_int_equal(e.policy.idle_ms, 2000);
	assert_int_equal(e.policy.max_age_ms, 0);
	/* iu = auto: left for detection. */
	assert_int_equal(e.iu_bytes, 0xabababab);
	qs_config_free(&c);
}

static void test_minimal_and_overlay(void **state)
{
	struct qs_config c;
	struct qs_engine_conf e;
	char err[512] = "";
	const char *p = write_conf("; minimal\n[devices]\nqlc = /dev/qlc\nfast = /dev/fast\n"
				   "iu = 128KiB\n[policy]\norder = FULLEST ; comment\n"
				   "[daemon]\nbackend = ram\nram_size = 64M\n");

	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	unlink(p);
	assert_int_equal(c.iu_bytes, 128 * 1024);
	assert_int_equal(c.backend, QS_BACKEND_RAM);
	assert_int_equal(c.ram_size, 64ull << 20);
	assert_string_equal(c.control_socket, "/run/qlcshaped.sock");
	memset(&e, 0, sizeof(e));
	e.log_qd = 7;
	qs_config_engine_conf(&c, &e);
	assert_int_equal(e.log_qd, 7); /* not in the file: untouched */
	assert_int_equal(e.policy.order, QS_ORDER_FULLEST);
	assert_int_equal(e.iu_bytes, 128 * 1024);
	qs_config_free(&c);

	/* The ram backend needs no device at all. */
	p = write_conf("[daemon]\nbackend = ram\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	unlink(p);
	assert_null(c.qlc);
	qs_config_free(&c);

	/* passthrough needs no fast device. */
	p = write_conf("[devices]\nqlc = emu:p5316-30t\n[engine]\nmode = passthrough\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	unlink(p);
	assert_string_equal(c.qlc, "emu:p5316-30t");
	assert_null(c.fast);
	/* [emu] defaults: RAM, 1 GiB, model as big as the device, sequential fill. */
	assert_null(c.emu_backing);
	assert_int_equal(c.emu_size, 1ull << 30);
	assert_int_equal(c.emu_model_size, 0);
	assert_int_equal(c.emu_precondition, 0);
	qs_config_free(&c);

	/* The [emu] keys, and a profile given by its path. */
	p = write_conf("[devices]\nqlc = emu:/etc/qlcshape/my-drive.ini\n[engine]\n"
		       "mode = passthrough\n[emu]\nbacking = /var/lib/qlc.img\nsize = 256M\n"
		       "model_size = 1G\nprecondition = random\n");
	if (qs_config_load(&c, p, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(p);
	assert_string_equal(c.qlc, "emu:/etc/qlcshape/my-drive.ini");
	assert_string_equal(c.emu_backing, "/var/lib/qlc.img");
	assert_int_equal(c.emu_size, 256ull << 20);
	assert_int_equal(c.emu_model_size, 1ull << 30);
	assert_int_equal(c.emu_precondition, 1);
	qs_config_free(&c);
	p = write_conf("[devices]\nqlc = emu:p5316-30t\n[engine]\nmode = passthrough\n[emu]\n"
		       "backing = none\nmodel_size = auto\nprecondition = none\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	unlink(p);
	assert_string_equal(c.emu_backing, "none");
	assert_int_equal(c.emu_model_size, 0);
	assert_int_equal(c.emu_precondition, 2);
	qs_config_free(&c);
}

/* Load text, expect -EINVAL and a message containing every needle. */
static void expect_error(const char *text, const char *const *needles)
{
	struct qs_config c;
	char err[512] = "";
	const char *p = write_conf(text);
	int ret = qs_config_load(&c, p, err, sizeof(err));

	unlink(p);
	if (ret != -EINVAL)
		fail_msg("expected -EINVAL, got %d for:\n%s", ret, text);
	assert_non_null(strstr(err, p)); /* the file */
	for (; *needles; needles++)
		if (!strstr(err, *needles))
			fail_msg("message '%s' lacks '%s'", err, *needles);
}

#define EXPECT(text, ...) expect_error(text, (const char *const[]){__VA_ARGS__, NULL})

static void test_errors_values(void **state)
{
	(void)state;
	/* Out of range: key, value, range and line. */
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\nlog_qd = 0\n", ":5:", "engine.log_qd",
	       "'0'", "1..64");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\nlog_qd = 5000\n", ":5:", "5000",
	       "1..64");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\nlog_qd = 12abc\n", ":5:", "12abc");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[policy]\nstart_pct = 101\n", ":5:",
	       "policy.start_pct", "0..100");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[ublk]\ndev_id = -2\n", ":5:", "ublk.dev_id",
	       "-1..");
	/* Sizes: syntax, range, alignment, IU power of two. */
	EXPECT("[devices]\nqlc = /q\nfast = /f\niu = 48K\n", ":4:", "devices.iu", "'48K'",
	       "power of two", "4K..1M");
	EXPECT("[devices]\nqlc = /q\nfast = /f\niu = 2K\n", ":4:", "'2K'", "4K..1M");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\ndram_buffer = lots\n", ":5:",
	       "engine.dram_buffer", "'lots'", "0..1T");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\nbypass_min = 1000\n", ":5:",
	       "multiple of 4096");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[ublk]\nmax_io = 2M\n", ":5:", "ublk.max_io",
	       "4K..1M");
	/* Enums and booleans. */
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[policy]\norder = random\n", ":5:",
	       "policy.order", "'random'", "fifo|sweep|fullest");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[engine]\nmode = fast\n", ":5:", "cache|passthrough");
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[daemon]\ndrain_on_stop = maybe\n", ":5:",
	       "daemon.drain_on_stop", "'maybe'", "yes or no");
	/* Paths. */
	EXPECT("[devices]\nqlc = relative/path\nfast = /f\n", ":2:", "devices.qlc",
	       "absolute path");
	EXPECT("[devices]\nqlc = emu:\nfast = /f\n", ":2:", "emu:PROFILE");
	EXPECT("[devices]\nqlc = emu:bad/name\nfast = /f\n", ":2:", "profile name",
	       "absolute path");
	/* [emu]. */
	EXPECT("[devices]\nqlc = emu:x\nfast = /f\n[emu]\nbacking = q.img\n", ":5:",
	       "emu.backing", "'q.img'", "ram, none or the absolute path");
	EXPECT("[devices]\nqlc = emu:x\nfast = /f\n[emu]\nsize = 100K\n", ":5:", "emu.size",
	       "'100K'", "1M..64T");
	EXPECT("[devices]\nqlc = emu:x\nfast = /f\n[emu]\nmodel_size = big\n", ":5:",
	       "emu.model_size", "'auto' or a size", "1M..1024T");
	EXPECT("[devices]\nqlc = emu:x\nfast = /f\n[emu]\nsize = 256M\nmodel_size = 128M\n",
	       ":6:", "emu.model_size", "134217728", "at least emu.size (268435456");
	EXPECT("[devices]\nqlc = emu:x\nfast = /f\n[emu]\nprecondition = full\n", ":5:",
	       "emu.precondition", "'full'", "seq|random|none");
	EXPECT("[devices]\nqlc = /dev/q\nfast = /f\n\n[emu]\nsize = 1G\n", ":6:",
	       "emu.size", "applies only to an emulated QLC", "'/dev/q'");
	EXPECT("[daemon]\nbackend = ram\n[emu]\nbacking = ram\n", ":4:", "emu.backing",
	       "devices.qlc is not set");
	EXPECT("[devices]\nqlc = /q\nfast =\n", ":3:", "devices.fast", "empty");
}

static void test_errors_structure(void **state)
{
	(void)state;
	EXPECT("[devices]\nqlc = /q\nfast = /f\nsize = 1G\n", ":4:", "unknown key 'size'",
	       "[devices]", "allowed keys: fast, qlc, iu");
	EXPECT("[devices]\nqlc = /q\n[cache]\nx = 1\n", ":3:", "unknown section [cache]");
	EXPECT("qlc = /q\n", ":1:", "outside any [section]");
	EXPECT("[devices]\nqlc = /q\nthis line is wrong\n", ":3:", "expected 'key = value'");
	EXPECT("[devices\nqlc = /q\n", ":1:", "malformed section");
	EXPECT("[devices]\nqlc = /q\nfast = /f\nqlc = /r\n", ":4:", "devices.qlc", "repeated",
	       "line 2");
	{
		/* A line longer than the scanner's buffer is refused, not split. */
		char *t = malloc(6000);

		assert_non_null(t);
		strcpy(t, "[devices]\nqlc = /");
		memset(t + strlen(t), 'a', 5000);
		strcpy(t + 17 + 5000, "\n");
		EXPECT(t, ":2:", "line longer than");
		free(t);
	}
	EXPECT("[devices]\nfast = /f\n", "devices.qlc", "missing");
	EXPECT("[devices]\nfast = /f\n[daemon]\nbackend = engine\n", "devices.qlc", "missing");
	EXPECT("[devices]\nqlc = /q\n", "devices.fast", "missing", "passthrough");
	/* issue 12: the daemon said "io_uring: Invalid argument", naming no key */
	EXPECT("[devices]\nqlc = /q\nfast = /f\n[ublk]\nqueues = 8\nqueue_depth = 4096\n",
	       ":6: key 'ublk.queue_depth'", "queues 8 x queue_depth 4096 = 32768",
	       "up to 32256 (queue_depth up to 4032 with 8 queues)");
}

/* Write n bytes (NULs allowed) to a fresh file; its name. */
static const char *write_bytes(const void *b, size_t n)
{
	ttmp_file(tmp_path, sizeof(tmp_path), "conf", NULL, NULL);
	FILE *f = fopen(tmp_path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return tmp_path;
}

static void load_ok(const char *p, struct qs_config *c)
{
	char err[512] = "";
	if (qs_config_load(c, p, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(p);
}

/* Issue 12: what iniparser did to hostile or unusual files. */
static void test_reader_hostile(void **state)
{
	struct qs_config c;
	char err[512];

	(void)state;
	/* a comment ending in a backslash swallowed the next line */
	load_ok(write_conf("[devices]\n; path C:\\\nqlc = /q\nfast = /f\n"), &c);
	assert_string_equal(c.qlc, "/q");
	qs_config_free(&c);
	/* values were cut at '#' and ';' */
	load_ok(write_conf("[devices]\nqlc = /q\nfast = /f;x\n[daemon]\n"
			   "control_socket = /run/a#b.sock # the socket\n"), &c);
	assert_string_equal(c.control_socket, "/run/a#b.sock");
	assert_string_equal(c.fast, "/f;x");
	qs_config_free(&c);
	/* quoted: taken as it is */
	load_ok(write_conf("[devices]\nqlc = \"/q ;x\" ; comment\nfast = /f\n"), &c);
	assert_string_equal(c.qlc, "/q ;x");
	qs_config_free(&c);
	/* a comment after a section header, a UTF-8 BOM, a 3000-byte line, CRLF */
	{
		char *t = malloc(4000);
		assert_non_null(t);
		strcpy(t, "\xef\xbb\xbf[devices] ; drives\r\nqlc = /q\r\nfast = /f\r\n;");
		size_t at = strlen(t);
		memset(t + at, 'c', 3000);
		strcpy(t + at + 3000, "\n");
		load_ok(write_conf(t), &c);
		free(t);
	}
	assert_string_equal(c.fast, "/f");
	qs_config_free(&c);

	/* a NUL byte: named, not "iniparser could not load the file" */
	static const char nul[] = "[devices]\nqlc\0 = /q\n";
	const char *p = write_bytes(nul, sizeof(nul) - 1);
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), -EINVAL);
	unlink(p);
	print_message("%s\n", err);
	assert_non_null(strstr(err, ":2: NUL byte 0x00 at column 4"));
	/* binary garbage is shown escaped, not raw */
	EXPECT("[devices]\nqlc = /q\n\x01\x02zz\n", ":3:", "control byte 0x01 at column 1");
	EXPECT("[devices]\n\xff\xfe\x80 = 1\n", ":2:", "unknown key '\\xff\\xfe\\x80'");
	EXPECT("[devices]\nqlc = /q\xff\nfast = rel\n", ":3:", "'rel'");
	/* a value continued with '\' was reported as a missing key */
	EXPECT("[devices]\nqlc = /q\nfast = /f\\\n  ast\n", ":3:", "devices.fast",
	       "ends with a backslash", "continuation");
	EXPECT("[devices]\nqlc = \"/q\n", ":2:", "closing '\"'");
	EXPECT("[devices] qlc = /q\n", ":1:", "'qlc = /q' follows the ']'");
	/* a directory as the config */
	char dir[64];
	ttmp_dir(dir, sizeof(dir), "conf_dir");
	assert_int_equal(qs_config_load(&c, dir, err, sizeof(err)), -EINVAL);
	rmdir(dir);
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, "not a regular file (a directory)"));
}

/* Consistency between keys is the engine's check; the message still points at the file. */
static void test_engine_cross_check(void **state)
{
	struct qs_config c;
	struct qs_engine_conf e;
	char err[512] = "";
	const char *p;

	(void)state;
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\nsegment_blocks = 64\n"
		       "group_commit_blocks = 128\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_key_line(&c, "engine.group_commit_blocks"), 6);
	assert_int_equal(qs_config_key_line(&c, "engine.log_qd"), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	assert_int_equal(qs_config_check_engine(&c, &e, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, p));
	assert_non_null(strstr(err, ":6:"));
	assert_non_null(strstr(err, "engine.group_commit_blocks"));
	assert_non_null(strstr(err, "128"));
	qs_config_free(&c);
	unlink(p);

	/* Only segment_blocks set; the engine's default group commit is larger. */
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\nsegment_blocks = 4\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	assert_int_equal(qs_config_check_engine(&c, &e, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":5:"));
	assert_non_null(strstr(err, "engine.segment_blocks"));
	qs_config_free(&c);
	unlink(p);

	/* engine.size larger than the QLC (issue 12, finding 13: the daemon said
	 * "engine open: Invalid argument"): the key, its line and both sizes. */
	p = write_conf("[devices]\nqlc = /q\nfast = /f\niu = 64K\n[engine]\nsize = 2G\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	assert_int_equal(qs_config_check_engine(&c, &e, 0, 0, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_engine(&c, &e, 1ull << 30, 0, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	for (const char *want = ":6: key 'engine.size'\0" "2147483648\0" "1073741824 bytes\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);
	assert_int_equal(qs_config_check_engine(&c, &e, 4ull << 30, 0, err, sizeof(err)), 0);
	qs_config_free(&c);
	unlink(p);

	/* engine.dram_limit below what the devices need: the key, its line,
	 * the size set and the size needed; enough, and it passes. */
	p = write_conf("[devices]\nqlc = /q\nfast = /f\niu = 64K\n[engine]\nplacement = log\n"
		       "dram_limit = 64M\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	e.iu_bytes = 65536;
	assert_int_equal(qs_config_check_engine(&c, &e, 64ull << 30, 0, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_engine(&c, &e, 64ull << 30, 8ull << 30, err, sizeof(err)),
			 -EINVAL);
	print_message("%s\n", err);
	for (const char *want = ":7: key 'engine.dram_limit'\0" "dram_limit 67108864\0"
				"needs at least \0" "raise dram_limit\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);
	e.dram_limit = 1ull << 30;
	assert_int_equal(qs_config_check_engine(&c, &e, 64ull << 30, 8ull << 30, err, sizeof(err)), 0);
	qs_config_free(&c);
	unlink(p);

	/* One budget: dram_limit and map_dram_limit together are refused. */
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\nmap_dram_limit = 1G\n"
		       "dram_limit = 4G\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), -EINVAL);
	for (const char *want = ":5: key 'engine.map_dram_limit'\0" "(line 6)\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);

	/* dram_limit's words: auto (the default), none; map_dram_limit alone
	 * means no budget; anything else is named with the words allowed. */
	const char *words[] = {"dram_limit = auto\n", "dram_limit = none\n", "map_dram_limit = 1G\n",
			       "", "dram_limit = 3G\n"};
	const uint64_t want_dl[] = {QS_CONF_DRAM_AUTO, 0, 0, QS_CONF_DRAM_AUTO, 3ull << 30};
	for (int i = 0; i < 5; i++) {
		char text[256];
		snprintf(text, sizeof(text), "[devices]\nqlc = /q\nfast = /f\n[engine]\n%s", words[i]);
		p = write_conf(text);
		assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
		qs_engine_conf_default(&e);
		qs_config_engine_conf(&c, &e);
		assert_int_equal(e.dram_limit, want_dl[i]);
		qs_config_free(&c);
		unlink(p);
	}
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\ndram_limit = lots\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), -EINVAL);
	for (const char *want = ":5: key 'engine.dram_limit' = 'lots'\0" "'auto', 'none' or \0";
	     *want; want += strlen(want) + 1)
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);
	unlink(p);

	/* Watermarks in the wrong order. */
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[policy]\nstart_pct = 90\n"
		       "urgent_pct = 40\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	assert_int_equal(qs_config_check_engine(&c, &e, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":5:"));
	assert_non_null(strstr(err, "policy.start_pct"));
	qs_config_free(&c);
	unlink(p);

	/* The shipped example is consistent with the engine's rules. */
	assert_int_equal(qs_config_load(&c, example_path(), err, sizeof(err)), 0);
	qs_engine_conf_default(&e);
	qs_config_engine_conf(&c, &e);
	e.iu_bytes = 65536;
	if (qs_config_check_engine(&c, &e, 0, 0, err, sizeof(err)))
		fail_msg("%s", err);
	qs_config_free(&c);
}

/* Issue 12: fast and qlc naming one file (or a link to it) formatted the
 * log into the QLC file; --format-only in passthrough said "log
 * formatted". Both are refused naming the keys. */
static void test_same_device_and_format_only(void **state)
{
	struct qs_config c;
	char err[512] = "", dir[64], a[96], b[96], l[96], text[512];
	const char *p;

	(void)state;
	ttmp_dir(dir, sizeof(dir), "conf_dev");
	snprintf(a, sizeof(a), "%s/qlc.img", dir);
	snprintf(b, sizeof(b), "%s/fast.img", dir);
	snprintf(l, sizeof(l), "%s/link.img", dir);
	ttmp_write(a, "");
	ttmp_write(b, "");
	assert_int_equal(symlink(a, l), 0);
	const char *fasts[] = {a, l};
	for (size_t i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "[devices]\nqlc = %s\nfast = %s\n", a, fasts[i]);
		p = write_conf(text);
		assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
		assert_int_equal(qs_config_check_devices(&c, err, sizeof(err)), -EINVAL);
		print_message("%s\n", err);
		assert_non_null(strstr(err, p));
		assert_non_null(strstr(err, ":3: key 'devices.fast'"));
		assert_non_null(strstr(err, "key 'devices.qlc' (line 2"));
		assert_non_null(strstr(err, "same file"));
		qs_config_free(&c);
		unlink(p);
	}
	/* two files, or a QLC that does not exist yet: fine here */
	snprintf(text, sizeof(text), "[devices]\nqlc = %s\nfast = %s\n", a, b);
	p = write_conf(text);
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_devices(&c, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_format_only(&c, err, sizeof(err)), 0);
	qs_config_free(&c);
	unlink(p);

	snprintf(text, sizeof(text), "[devices]\nqlc = %s\nfast = %s\n[engine]\n"
		 "mode = passthrough\n", a, b);
	p = write_conf(text);
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_format_only(&c, err, sizeof(err)), -EINVAL);
	print_message("%s\n", err);
	assert_non_null(strstr(err, ":5: --format-only: key 'engine.mode' value 'passthrough'"));
	qs_config_free(&c);
	unlink(p);
	unlink(l);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void test_missing_file(void **state)
{
	struct qs_config c;
	char err[256];

	(void)state;
	assert_int_equal(qs_config_load(&c, "/nonexistent/qs.ini", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/qs.ini"));
}

static void test_parse_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(qs_config_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(qs_config_parse_size("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(qs_config_parse_size("64KiB", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(qs_config_parse_size("2g", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(qs_config_parse_size("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(qs_config_parse_size("", &v), -EINVAL);
	assert_int_equal(qs_config_parse_size("-1", &v), -EINVAL);
	assert_int_equal(qs_config_parse_size("1X", &v), -EINVAL);
	assert_int_equal(qs_config_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(qs_config_parse_size("17179869184T", &v), -EINVAL);
}

/*
 * engine.segment_blocks changed after the format was silently ignored (issue
 * 12, finding 10): the log keeps its own. A log formatted with 16-block
 * segments and a file asking for 64 gives a warning naming the file, line,
 * key, both values and --format; a file that agrees, or does not set the
 * key, or a device with no valid superblock, gives none.
 */
static void test_log_geometry_changed(void **state)
{
	struct qs_config c;
	struct th h;
	char err[512] = "", msg[1024] = "";
	const char *p;

	(void)state;
	assert_int_equal(th_init(&h, (2 + 64) * 4096ull, 1ull << 20, 1), 0);
	h.conf.iu_bytes = 16384;
	assert_int_equal(th_open(&h, true), 0); /* segment_blocks 16 */
	assert_int_equal(th_close(&h), 0);

	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\nsegment_blocks = 64\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_log(&c, h.fast.cur, h.fast.size, msg, sizeof(msg)), 1);
	print_message("%s\n", msg);
	for (const char *want = ":5: key 'engine.segment_blocks' is 64\0on /f was formatted "
				"with 16\0--format to apply 64\0";
	     *want; want += strlen(want) + 1)
		if (!strstr(msg, want) || !strstr(msg, p))
			fail_msg("'%s' or the file not in: %s", want, msg);
	/* No valid superblock (a blank device): the open reports that. */
	memset(h.fast.cur, 0, 2 * 4096);
	msg[0] = 0;
	assert_int_equal(qs_config_check_log(&c, h.fast.cur, h.fast.size, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	qs_config_free(&c);
	unlink(p);

	assert_int_equal(th_open(&h, true), 0);
	assert_int_equal(th_close(&h), 0);
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n[engine]\nsegment_blocks = 16\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_log(&c, h.fast.cur, h.fast.size, msg, sizeof(msg)), 0);
	qs_config_free(&c);
	unlink(p);
	p = write_conf("[devices]\nqlc = /q\nfast = /f\n");
	assert_int_equal(qs_config_load(&c, p, err, sizeof(err)), 0);
	assert_int_equal(qs_config_check_log(&c, h.fast.cur, h.fast.size, msg, sizeof(msg)), 0);
	qs_config_free(&c);
	unlink(p);
	th_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_minimal_and_overlay),
		cmocka_unit_test(test_errors_values),
		cmocka_unit_test(test_errors_structure),
		cmocka_unit_test(test_reader_hostile),
		cmocka_unit_test(test_engine_cross_check),
		cmocka_unit_test(test_log_geometry_changed),
		cmocka_unit_test(test_same_device_and_format_only),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_parse_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
