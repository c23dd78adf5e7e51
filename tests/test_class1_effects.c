/* SPDX-License-Identifier: MIT */
/*
 * Every class-1 (implemented) option of the job option table changes what
 * it should (issue 33). For each, a job file is loaded twice, without the
 * option (or with one value) and with it (or another value), and the two
 * loaded jobs must differ in the field the option is meant to set. The
 * options that are implemented at fio's default only (rw_sequencer,
 * thinktime_blocks_type, ba, nrfiles) must load at it and be refused at
 * another value.
 *
 * The test walks the option table itself (qs_job_opt): a class-1 option
 * without an entry in checks[] below fails it, and so does an entry for
 * an option that is not class 1, so a newly implemented option needs its
 * check. What the options do in a run is tested where it is implemented
 * (test_bench_run, test_workload, test_trace); this test makes sure no
 * option is merely parsed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/job.h"
#include "ttmp.h"

/* The capacity the jobs are loaded for. */
#define CAP (1ull << 30)

enum check_kind {
	CK_FIELD,   /* the bytes of the field differ */
	CK_STR,	    /* the field is a char *: NULL against a string, or two strings */
	CK_DEFAULT, /* a loads, b is refused (fio's default only) */
};

struct check {
	const char *key;
	const char *pre; /* jobs before the one checked ("" none) */
	const char *a, *b;
	enum check_kind kind;
	size_t off, len; /* the field of struct qs_job */
};

#define F(x) CK_FIELD, offsetof(struct qs_job, x), sizeof(((struct qs_job *)0)->x)
#define S(x) CK_STR, offsetof(struct qs_job, x), sizeof(char *)
#define DEF CK_DEFAULT, 0, 0

#define SS "runtime=10\ntime_based\nsteadystate=iops:5%\n"
#define TR "trace=t.log\n"
#define CSV "trace=t.csv\ntrace_format=csv\n"
#define ZN "rw=write\nzonemode=strided\n"

static const struct check checks[] = {
	{"name", "", "", "name=other", F(fio_name)},
	{"wait_for", "[first]\n", "", "wait_for=first", F(wait_back)},
	{"rw", "", "rw=read", "rw=randwrite", F(rw)},
	{"bs", "", "bs=4k", "bs=8k", F(bs)},
	{"ba", "", "ba=4k", "ba=8k", DEF},
	{"bsrange", "", "", "bsrange=4k-16k", F(bs_max)},
	{"bssplit", "", "", "bssplit=4k/50:8k/50", F(bs_max)},
	{"norandommap", "", "rw=randread", "rw=randread\nnorandommap", F(norandommap)},
	{"rw_sequencer", "", "rw_sequencer=sequential", "rw_sequencer=identical", DEF},
	{"iodepth", "", "iodepth=1", "iodepth=8", F(iodepth)},
	{"size", "", "size=4m", "size=8m", F(size)},
	{"io_size", "", "", "io_size=1m", F(io_bytes)},
	{"fill_device", "", "", "fill_device=1", F(size)},
	{"filesize", "", "", "filesize=8m", F(size)},
	{"offset", "", "", "offset=1m", F(offset)},
	{"offset_increment", "", "numjobs=2", "numjobs=2\noffset_increment=4m",
	 F(offset_increment)},
	{"offset_align", "", "offset=3%", "offset=3%\noffset_align=1m", F(offset)},
	{"number_ios", "", "", "number_ios=10", F(number_ios)},
	{"random_distribution", "", "rw=randread", "rw=randread\nrandom_distribution=zipf:1.2",
	 F(dist)},
	{"percentage_random", "", "rw=randread", "rw=randread\npercentage_random=50", F(pct_seq)},
	{"nrfiles", "", "nrfiles=1", "nrfiles=2", DEF},
	{"fsync", "", "rw=write", "rw=write\nfsync=4", F(fsync_every)},
	{"fdatasync", "", "rw=write", "rw=write\nfdatasync=4", F(fsync_every)},
	{"write_barrier", "", "rw=write", "rw=write\nwrite_barrier=4", F(barrier_every)},
	{"loops", "", "", "loops=3", F(io_bytes)},
	{"numjobs", "", "", "numjobs=3", F(numjobs)},
	{"startdelay", "", "", "startdelay=1", F(startdelay_ns)},
	{"runtime", "", "runtime=1", "runtime=2", F(runtime_ns)},
	{"time_based", "", "runtime=1", "runtime=1\ntime_based", F(time_based)},
	{"ramp_time", "", "", "ramp_time=1", F(ramp_time_ns)},
	{"write_iolog", "", "", "write_iolog=/tmp/qs_never_written.log", S(write_iolog)},
	{"read_iolog", "", "", "read_iolog=t.log", S(trace)},
	{"replay_no_stall", "", TR, TR "replay_no_stall=1", F(trace_ignore_time)},
	{"replay_scale", "", TR, TR "replay_scale=2", F(replay_scale)},
	{"replay_align", "", TR, TR "replay_align=8192", F(replay_align)},
	{"replay_time_scale", "", TR, TR "replay_time_scale=50", F(trace_timescale)},
	{"replay_skip", "", TR, TR "replay_skip=write", F(replay_skip)},
	{"zonemode", "", "rw=write\nzonemode=none", ZN "zonesize=1m", F(zone_size)},
	{"zonesize", "", ZN "zonesize=1m", ZN "zonesize=2m", F(zone_size)},
	{"zoneskip", "", ZN "zonesize=1m", ZN "zonesize=1m\nzoneskip=1m", F(zone_skip)},
	{"rwmixread", "", "rw=randrw", "rw=randrw\nrwmixread=70", F(rwmixread)},
	{"rwmixwrite", "", "rw=randrw", "rw=randrw\nrwmixwrite=70", F(rwmixread)},
	{"thinktime", "", "", "thinktime=100", F(thinktime_ns)},
	{"thinktime_blocks", "", "thinktime=100", "thinktime=100\nthinktime_blocks=4",
	 F(thinktime_blocks)},
	{"thinktime_blocks_type", "", "thinktime_blocks_type=complete",
	 "thinktime_blocks_type=issue", DEF},
	{"thinktime_iotime", "", "thinktime=100", "thinktime=100\nthinktime_iotime=1",
	 F(thinktime_iotime_ns)},
	{"rate", "", "rw=read", "rw=read\nrate=1m", F(rate_iops)},
	{"rate_min", "", "", "rate_min=1m", F(rate_min)},
	{"rate_process", "", "rate_iops=100", "rate_iops=100\nrate_process=poisson",
	 F(rate_process)},
	{"rate_cycle", "", "", "rate_cycle=500", F(rate_cycle_ns)},
	{"rate_iops", "", "", "rate_iops=100", F(rate_iops)},
	{"rate_iops_min", "", "", "rate_iops_min=100", F(rate_iops_min)},
	{"max_latency", "", "", "max_latency=1000", F(max_latency_ns)},
	{"latency_target", "", "", "latency_target=1000", F(lat_target_ns)},
	{"latency_window", "", "latency_target=1000", "latency_target=1000\nlatency_window=5000",
	 F(lat_window_ns)},
	{"latency_percentile", "", "latency_target=1000",
	 "latency_target=1000\nlatency_percentile=99", F(lat_pct)},
	{"latency_run", "", "latency_target=1000", "latency_target=1000\nlatency_run=1",
	 F(lat_run)},
	{"sync", "", "rw=write", "rw=write\nsync=1", F(sync_writes)},
	{"end_fsync", "", "rw=write", "rw=write\nend_fsync=1", F(end_fsync)},
	{"fsync_on_close", "", "rw=write", "rw=write\nfsync_on_close=1", F(end_fsync)},
	{"stonewall", "[first]\n", "", "stonewall", F(stonewall)},
	{"new_group", "[first]\n", "", "new_group", F(groupid)},
	{"group_reporting", "", "", "group_reporting", F(group_reporting)},
	{"percentile_list", "", "", "percentile_list=50:99", F(npct)},
	{"unified_rw_reporting", "", "", "unified_rw_reporting=mixed", F(unified)},
	{"kb_base", "", "size=4096k", "kb_base=1000\nsize=4096k", F(size)},
	{"flow_id", "", "flow=1", "flow=1\nflow_id=3", F(flow_id)},
	{"flow", "", "", "flow=2", F(flow)},
	{"flow_sleep", "", "flow=1", "flow=1\nflow_sleep=100", F(flow_sleep_ns)},
	{"steadystate", "", SS "ss_dur=2s", SS "ss_dur=2s\nsteadystate=bw:5%", F(ss)},
	{"steadystate_duration", "", SS "ss_dur=2s", SS "steadystate_duration=4s", F(ss_dur_ns)},
	{"steadystate_ramp_time", "", SS "ss_dur=2s", SS "ss_dur=2s\nsteadystate_ramp_time=1s",
	 F(ss_ramp_ns)},
	{"steadystate_check_interval", "", SS "ss_dur=2s",
	 SS "ss_dur=2s\nsteadystate_check_interval=500ms", F(ss_interval_ns)},
	{"trace", "", "", "trace=t.log", S(trace)},
	{"trace_format", "", TR, TR "trace_format=iolog", F(trace_format)},
	{"trace_columns", "", CSV "trace_columns=op:1,offset:2,size:3",
	 CSV "trace_columns=op:2,offset:3,size:4", F(trace_cols)},
	{"trace_timescale", "", TR, TR "trace_timescale=2", F(trace_timescale)},
	{"trace_ignore_time", "", TR, TR "trace_ignore_time", F(trace_ignore_time)},
};

#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

static const struct check *check_find(const char *key)
{
	for (size_t i = 0; i < NCHECKS; i++)
		if (!strcmp(checks[i].key, key))
			return &checks[i];
	return NULL;
}

/* The last job of pre + "[j]" + side as a file, into *f (freed by the
 * caller); the loader's result. */
static int load_side(const struct check *c, const char *side, struct qs_job_file **f,
		     char *err, size_t errlen)
{
	char text[1024], path[64];
	snprintf(text, sizeof(text), "%s[j]\nsize=4m\n%s\n", c->pre, side);
	ttmp_file(path, sizeof(path), "c1", ".fio", text);
	int rc = qs_job_file_load(path, CAP, f, err, errlen);
	unlink(path);
	return rc;
}

/* Whether the side text sets name (name=..., or the name alone). */
static bool side_sets_name(const char *side, const char *name)
{
	size_t k = strlen(name);
	for (const char *p = side; (p = strstr(p, name)); p += k)
		if ((p == side || p[-1] == '\n') && (p[k] == '=' || p[k] == '\n' || !p[k]))
			return true;
	return false;
}

/* Whether text names the option key or one of its aliases: as a line
 * that sets it (sets), else quoted as the loader's errors quote keys. */
static bool names_opt(const char *text, const char *key, bool sets)
{
	struct qs_job_opt_info o;
	for (size_t i = 0; qs_job_opt(i, &o); i++) {
		if (strcmp(o.key, key) && (!o.of || strcmp(o.of, key)))
			continue;
		char q[80];
		snprintf(q, sizeof(q), "'%s'", o.key);
		if (sets ? side_sets_name(text, o.key) : strstr(text, q) != NULL)
			return true;
	}
	return false;
}

/* One check: 0 when the option changed its field (or, CK_DEFAULT, was
 * refused off its default), else a message in why. */
static int check_run(const struct check *c, char *why, size_t len)
{
	struct qs_job_file *fa = NULL, *fb = NULL;
	char err[512] = "";
	if (!names_opt(c->b, c->key, true)) {
		snprintf(why, len, "its b side does not set it: '%s'", c->b);
		return -1;
	}
	if (load_side(c, c->a, &fa, err, sizeof(err))) {
		snprintf(why, len, "a ('%s') refused: %s", c->a, err);
		return -1;
	}
	int rcb = load_side(c, c->b, &fb, err, sizeof(err));
	int rc = 0;
	if (c->kind == CK_DEFAULT) {
		if (rcb != -EINVAL || !names_opt(err, c->key, false)) {
			snprintf(why, len, "b ('%s') not refused naming the key: %d '%s'", c->b,
				 rcb, err);
			rc = -1;
		}
	} else if (rcb) {
		snprintf(why, len, "b ('%s') refused: %s", c->b, err);
		rc = -1;
	} else {
		const char *ja = (const char *)&fa->jobs[fa->njobs - 1];
		const char *jb = (const char *)&fb->jobs[fb->njobs - 1];
		bool differ;
		if (c->kind == CK_STR) {
			const char *sa = *(char *const *)(ja + c->off);
			const char *sb = *(char *const *)(jb + c->off);
			differ = !sa != !sb || (sa && strcmp(sa, sb));
		} else {
			differ = memcmp(ja + c->off, jb + c->off, c->len) != 0;
		}
		if (!differ) {
			snprintf(why, len, "'%s' and '%s' load the same field", c->a, c->b);
			rc = -1;
		}
	}
	qs_job_file_free(fa);
	qs_job_file_free(fb);
	return rc;
}

/* Every class-1 option of the table has a check, and every check is of a
 * class-1 option. */
static void test_every_option_checked(void **state)
{
	(void)state;
	struct qs_job_opt_info o;
	unsigned missing = 0, class1 = 0;
	for (size_t i = 0; qs_job_opt(i, &o); i++) {
		if (o.cls != QS_JOB_OPT_DOES || o.of)
			continue;
		class1++;
		if (!check_find(o.key)) {
			printf("class-1 option without a check: %s\n", o.key);
			missing++;
		}
	}
	for (size_t k = 0; k < NCHECKS; k++) {
		bool found = false;
		for (size_t i = 0; qs_job_opt(i, &o); i++)
			found |= !strcmp(o.key, checks[k].key) && o.cls == QS_JOB_OPT_DOES && !o.of;
		if (!found) {
			printf("a check for an option that is not class 1: %s\n", checks[k].key);
			missing++;
		}
	}
	printf("class-1 options: %u, checks: %zu\n", class1, NCHECKS);
	assert_int_equal(missing, 0);
}

/* Each check holds. */
static void test_each_changes_its_field(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < NCHECKS; i++) {
		char why[1200];
		if (check_run(&checks[i], why, sizeof(why))) {
			printf("%s: %s\n", checks[i].key, why);
			bad++;
		}
	}
	printf("class-1 checks: %zu, failed %u\n", NCHECKS, bad);
	assert_int_equal(bad, 0);
}

/* The check itself fails on an option that changes nothing: a side that
 * does not set its key, two values loading the same field, and a value at
 * fio's default taken for one that should be refused. */
static void test_checks_can_fail(void **state)
{
	(void)state;
	char why[1200];
	const struct check same = {"iodepth", "", "iodepth=4", "iodepth=4", F(iodepth)};
	const struct check other = {"iodepth", "", "", "bs=8k", F(iodepth)};
	const struct check not_refused = {"nrfiles", "", "nrfiles=1", "nrfiles=1", DEF};
	assert_int_equal(check_run(&same, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "load the same field"));
	assert_int_equal(check_run(&other, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "does not set it"));
	assert_int_equal(check_run(&not_refused, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not refused"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_checked),
		cmocka_unit_test(test_each_changes_its_field),
		cmocka_unit_test(test_checks_can_fail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
