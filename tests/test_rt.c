/* SPDX-License-Identifier: MIT */
/*
 * The bench's real-time driver (bench/rt.h). Dev mode on files in /tmp:
 * runs complete with sane figures, every QLC write with shaping on is whole
 * aligned IUs and the counting wrapper agrees with the engine's own
 * statistics, and what the runs wrote reads back (through a recovered
 * engine, then from the QLC file after a drain) as blocks stamped with
 * their own offset; refusals (no confirmation, not a device, the same
 * device twice, a mounted device) and the command line's dev-mode errors.
 * Emu mode on tiny emulated drives: the same counts, checked a second time
 * by the QLC model (partial IUs it received), WAF IU and lateness figures.
 * Both modes carry a variant's drives and engine from group to group (a
 * read group finds what the write group before it left).
 * No timing is checked: a benchmark is never a timed pass/fail test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench/cmds.h"
#include "../bench/drive.h"
#include "../bench/rt.h"
#include "host/env.h"
#include "host/uloop.h"
#include "host/uring_vol.h"
#include "tprof.h"
#include "ttmp.h"

#define MIB (1024ull * 1024)
#define QLC_BYTES (64 * MIB)
#define FAST_BYTES (16 * MIB)
#define SEED 7

/*
 * Not time based: each job ends after one pass over its 6 MiB span (1536
 * writes of 4 KiB, every block once: randwrite draws a permutation). 6 MiB
 * is 3/8 of the 16 MiB log, above the 50% destage watermark with the
 * headers of the records, so destage runs in every shaping-on run whatever
 * the machine's speed.
 */
static const char *fill_fio =
	"[global]\n"
	"bs=4k\n"
	"iodepth=8\n"
	"size=6m\n"
	"stonewall=1\n"
	"[seq]\n"
	"rw=write\n"
	"[rand]\n"
	"rw=randwrite\n"
	"offset=8m\n";

/* A short time-based mix, as a user would run it. */
static const char *mix_fio =
	"[mix]\n"
	"rw=randrw\n"
	"rwmixread=50\n"
	"bs=8k\n"
	"size=8m\n"
	"offset=32m\n"
	"iodepth=4\n"
	"numjobs=2\n"
	"runtime=300ms\n"
	"ramp_time=50ms\n"
	"time_based=1\n";

static char dir[64], prof_path[96], fprof_path[96], qlc_path[96], fast_path[96];

/* A fresh file of size bytes of zeroes. */
static void make_dev(const char *path, uint64_t size)
{
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	/* /tmp: ext4 on the development machine, so O_DIRECT is exercised;
	 * on tmpfs the volumes fall back to buffered I/O and this still runs */
	ttmp_dir(dir, sizeof(dir), "rt");
	snprintf(prof_path, sizeof(prof_path), "%s/tiny.ini", dir);
	snprintf(fprof_path, sizeof(fprof_path), "%s/tinyscm.ini", dir);
	ttmp_write(fprof_path, tprof_tiny_scm);
	snprintf(qlc_path, sizeof(qlc_path), "%s/qlc.img", dir);
	snprintf(fast_path, sizeof(fast_path), "%s/fast.img", dir);
	ttmp_write(prof_path, tprof_tiny_qlc);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(prof_path);
	unlink(fprof_path);
	unlink(qlc_path);
	unlink(fast_path);
	rmdir(dir);
	return 0;
}

static struct qs_job_file *load_jobs(const char *text, uint64_t capacity)
{
	char path[128], err[512];
	snprintf(path, sizeof(path), "%s/job.fio", dir);
	ttmp_write(path, text);
	struct qs_job_file *jf = NULL;
	int rc = qs_job_file_load(path, capacity, &jf, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	unlink(path);
	return jf;
}

static struct qs_rt_world *open_world(bool fast)
{
	struct qs_rt_conf c = {
		.kind = QS_RT_DEV,
		.qlc_dev = qlc_path,
		.fast_dev = fast ? fast_path : NULL,
		.profile = prof_path,
		.yes_overwrite = true,
	};
	struct qs_rt_world *w = NULL;
	char err[512];
	int rc = qs_rt_world_new(&c, &w, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	return w;
}

/* The client figures and the QLC counters of a finished run agree. */
static void check_counts(const struct qs_bench_result *r, uint64_t writes)
{
	assert_int_equal(r->ios, writes);
	assert_int_equal(r->eng.client_writes, writes);
	assert_int_equal(r->eng.client_write_bytes, writes * 4096);
	assert_true(r->rep.write.iops > 0);
	assert_true(r->rep.write.lat_p50_ns > 0);
	assert_true(r->rep.write.lat_p99_ns >= r->rep.write.lat_p50_ns);
	assert_true(r->window_ns > 0);
	/* the wrapper saw what the engine says it sent */
	assert_int_equal(r->rep.qlc.writes, r->eng.qlc_writes);
	assert_int_equal(r->rep.qlc.write_bytes, r->eng.qlc_write_bytes);
	assert_int_equal(r->rep.qlc.iu_whole_writes, r->eng.qlc_iu_whole_writes);
	assert_int_equal(r->qlc.host_writes, r->eng.qlc_writes);
}

/* Block b (4 KiB) of buf, offset off on the device: stamped or zero. */
static void check_block(const unsigned char *blk, uint64_t off, bool written)
{
	if (written) {
		if (!qs_drv_stamp_ok(blk, off, SEED))
			fail_msg("block at %llu: not stamped for its offset",
				 (unsigned long long)off);
	} else {
		for (size_t i = 0; i < 4096; i++)
			if (blk[i])
				fail_msg("block at %llu: never written, holds data",
					 (unsigned long long)off);
	}
}

/* Whether the first njobs jobs of fill_fio wrote the block at off. */
static bool in_fill(uint64_t off, size_t njobs)
{
	return off < 6 * MIB || (njobs > 1 && off >= 8 * MIB && off < 14 * MIB);
}

/* Engine callbacks of the read-back below. */
struct wait {
	bool done;
	int res;
};

static void wait_cb(void *arg, int res)
{
	struct wait *w = arg;
	w->done = true;
	w->res = res;
}

static void spin(struct qs_uloop *l, struct qs_henv *h, struct qs_engine *e, struct wait *w)
{
	while (!w->done) {
		uint64_t to = qs_henv_timeout(h);
		assert_true(qs_uloop_run(l, to > 100000000u ? 100000000u : to) >= 0);
		if (e && qs_henv_expired(h))
			qs_engine_timer(e);
	}
	assert_int_equal(w->res, 0);
}

/*
 * Recover the log a shaping-on run left (runs close without draining), read
 * the first 16 MiB through the engine, drain, close, then read the QLC file
 * itself: both must hold exactly the stamped blocks of the first njobs
 * fills. Drained here, since the next run formats the log anew and what it
 * held would be lost (as it is between the runs of a bench command).
 */
static void read_back_cached(size_t njobs)
{
	struct qs_uloop loop;
	struct qs_henv henv;
	struct qs_uvol *fv, *qv;
	char err[256];
	assert_int_equal(qs_uloop_init(&loop, 64), 0);
	qs_henv_init(&henv, "test_rt: ", QS_LOG_WARN);
	assert_int_equal(qs_uvol_open(&fv, &loop, fast_path, QS_UVOL_BUFFERED_OK, 0, err,
				      sizeof(err)), 0);
	assert_int_equal(qs_uvol_open(&qv, &loop, qlc_path, QS_UVOL_BUFFERED_OK, 0, err,
				      sizeof(err)), 0);
	struct qs_engine_conf ec;
	qs_engine_conf_default(&ec);
	struct wait w = {0};
	struct qs_engine *e = qs_engine_open(&henv.env, &fv->vol, &qv->vol, &ec, 0, wait_cb, &w);
	assert_non_null(e);
	spin(&loop, &henv, e, &w);
	struct qs_engine_stats st;
	qs_engine_get_stats(e, &st);
	assert_true(st.cached_blocks > 0); /* the runs left data in the log */
	unsigned char *buf = NULL;
	assert_int_equal(posix_memalign((void **)&buf, 4096, MIB), 0);
	for (uint64_t off = 0; off < 16 * MIB; off += MIB) {
		w = (struct wait){0};
		assert_int_equal(qs_engine_read(e, off, MIB, buf, wait_cb, &w), 0);
		spin(&loop, &henv, e, &w);
		for (uint64_t b = 0; b < MIB; b += 4096)
			check_block(buf + b, off + b, in_fill(off + b, njobs));
	}
	w = (struct wait){0};
	assert_int_equal(qs_engine_drain(e, wait_cb, &w), 0);
	spin(&loop, &henv, e, &w);
	w = (struct wait){0};
	assert_int_equal(qs_engine_close(e, wait_cb, &w), 0);
	spin(&loop, &henv, e, &w);
	qs_engine_free(e);
	qs_uvol_close(fv);
	qs_uvol_close(qv);
	qs_uloop_exit(&loop);
	/* everything is on the QLC now */
	int fd = open(qlc_path, O_RDONLY);
	assert_true(fd >= 0);
	for (uint64_t off = 0; off < 16 * MIB; off += MIB) {
		assert_int_equal(pread(fd, buf, MIB, (off_t)off), (ssize_t)MIB);
		for (uint64_t b = 0; b < MIB; b += 4096)
			check_block(buf + b, off + b, in_fill(off + b, njobs));
	}
	close(fd);
	free(buf);
}

static void test_dev_shaping_on(void **state)
{
	(void)state;
	make_dev(qlc_path, QLC_BYTES);
	make_dev(fast_path, FAST_BYTES);
	struct qs_rt_world *w = open_world(true);
	assert_int_equal(qs_rt_world_sizes(w)->capacity, QLC_BYTES);
	assert_int_equal(qs_rt_world_sizes(w)->log_bytes, FAST_BYTES);
	assert_int_equal(qs_rt_world_iu(w), 65536);
	struct qs_job_file *jf = load_jobs(fill_fio, qs_rt_world_sizes(w)->capacity);
	assert_int_equal(jf->njobs, 2);
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_SWEEP};
	char err[512];
	for (size_t i = 0; i < jf->njobs; i++) {
		struct qs_bench_result r;
		int rc = qs_rt_run_job(w, &jf->jobs[i], &v, SEED, &r, err, sizeof(err));
		if (rc)
			fprintf(stderr, "%s\n", err);
		assert_int_equal(rc, 0);
		check_counts(&r, 1536);
		assert_string_equal(r.rep.policy, "sweep");
		assert_true(r.rep.shaping);
		/* destage ran, and only whole aligned IUs reached the QLC */
		assert_true(r.rep.qlc.writes > 0);
		assert_int_equal(r.rep.qlc.iu_whole_writes, r.rep.qlc.writes);
		assert_int_equal(r.rep.qlc.write_bytes % 65536, 0);
		assert_true(r.rep.fast_write_bytes >= 6 * MIB);
		assert_int_equal(r.fast.host_write_bytes, r.rep.fast_write_bytes);
		/* no drive model in dev mode: these are unknown, not made up */
		assert_true(isnan(r.rep.qlc.waf_iu));
		assert_true(isnan(r.rep.qlc.life_years));
		if (i == 1) /* random 4 KiB: partly dirty IUs are read-filled */
			assert_true(r.rep.qlc.read_fill_bytes > 0);
		read_back_cached(i + 1);
	}
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

/* fill_fio's random job with log placement (fifo) in w; its figures into
 * *r, checked against what the job issued. */
/* Log placement on fresh files in dev mode: a 1 MiB band, 20% spare. */
static struct qs_rt_conf dev_log_conf(void)
{
	make_dev(qlc_path, QLC_BYTES);
	make_dev(fast_path, FAST_BYTES);
	return (struct qs_rt_conf){
		.kind = QS_RT_DEV, .qlc_dev = qlc_path, .fast_dev = fast_path,
		.profile = prof_path, .yes_overwrite = true,
		.log_placement = true, .op_pct = 20, .band_bytes = 1 * MIB,
	};
}

/* Log placement on a 128 MiB emulated QLC, 20% spare. */
static struct qs_rt_conf emu_log_conf(void)
{
	return (struct qs_rt_conf){
		.kind = QS_RT_EMU, .profile = prof_path, .fast = fprof_path,
		.scale_bytes = 128 * MIB, .cache_bytes = 134000000,
		.log_placement = true, .op_pct = 20,
	};
}

static void run_log_fill(struct qs_rt_world *w, const struct qs_job_file *jf,
			 struct qs_bench_result *r)
{
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO,
				     .placement = QS_PLACE_LOG};
	char err[512];
	int rc = qs_rt_run_job(w, &jf->jobs[1], &v, SEED, r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	check_counts(r, 1536);
}

/*
 * Log placement in dev mode: the map region comes out of the fast device
 * first (so every variant has the same log), and the random fill reaches
 * the QLC file only as whole IUs, none read-filled; a band size the QLC
 * cannot hold enough of is refused by the engine's check, not run.
 */
static void test_dev_log_placement(void **state)
{
	(void)state;
	struct qs_rt_conf c = dev_log_conf();
	struct qs_rt_world *w = NULL;
	char err[512];
	assert_int_equal(qs_rt_world_new(&c, &w, err, sizeof(err)), 0);
	struct qs_engine_conf lc;
	qs_rt_world_log_conf(w, &lc);
	assert_int_equal(lc.band_bytes, 1 * MIB);
	uint64_t map = qs_engine_conf_map_bytes(&lc, QLC_BYTES);
	assert_true(map > 0);
	assert_true(qs_rt_world_sizes(w)->log_bytes <= FAST_BYTES - map);
	assert_true(qs_rt_world_sizes(w)->log_bytes >= FAST_BYTES - map - 2 * MIB);
	uint64_t cap = qs_engine_conf_client_size(&lc, QLC_BYTES);
	struct qs_job_file *jf = load_jobs(fill_fio, cap);
	struct qs_bench_result r;
	run_log_fill(w, jf, &r);
	assert_string_equal(r.rep.placement, "log");
	assert_true(r.rep.qlc.writes > 0);
	assert_int_equal(r.rep.qlc.iu_whole_writes, r.rep.qlc.writes);
	assert_int_equal(r.rep.qlc.read_fill_bytes, 0);
	assert_true(r.eng.bands > 4);
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

static void test_dev_shaping_off(void **state)
{
	(void)state;
	make_dev(qlc_path, QLC_BYTES);
	struct qs_rt_world *w = open_world(false);
	assert_int_equal(qs_rt_world_sizes(w)->log_bytes, 0);
	struct qs_job_file *jf = load_jobs(fill_fio, qs_rt_world_sizes(w)->capacity);
	struct qs_bench_variant v = {.shaping = false};
	char err[512];
	for (size_t i = 0; i < jf->njobs; i++) {
		struct qs_bench_result r;
		assert_int_equal(qs_rt_run_job(w, &jf->jobs[i], &v, SEED, &r, err, sizeof(err)), 0);
		check_counts(&r, 1536);
		/* passthrough: every client write reaches the QLC as it is */
		assert_int_equal(r.rep.qlc.writes, 1536);
		assert_int_equal(r.rep.qlc.iu_whole_writes, 0);
		assert_int_equal(r.rep.qlc.write_bytes, 6 * MIB);
		assert_int_equal(r.rep.fast_write_bytes, 0);
		assert_true(r.rep.qlc.waf_host == 1.0);
	}
	/* shaping on without a fast tier is refused, not run */
	v.shaping = true;
	struct qs_bench_result r;
	assert_int_equal(qs_rt_run_job(w, &jf->jobs[0], &v, SEED, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--fast-dev"));
	qs_job_file_free(jf);
	qs_rt_world_free(w);
	int fd = open(qlc_path, O_RDONLY);
	assert_true(fd >= 0);
	unsigned char *buf = malloc(MIB);
	assert_non_null(buf);
	for (uint64_t off = 0; off < 16 * MIB; off += MIB) {
		assert_int_equal(pread(fd, buf, MIB, (off_t)off), (ssize_t)MIB);
		for (uint64_t b = 0; b < MIB; b += 4096)
			check_block(buf + b, off + b, in_fill(off + b, 2));
	}
	free(buf);
	close(fd);
}

/*
 * A trace request larger than 1 MiB (the trace reader accepts up to
 * QS_TRACE_MAX_IO) failed the run: trace jobs had 1 MiB slots, and the
 * driver said "I/O of 2097152 bytes larger than the 1048576-byte buffer".
 * The slots now hold the trace's largest request.
 */
static void test_dev_trace_large_request(void **state)
{
	(void)state;
	char tpath[128], job[512], err[512];
	make_dev(qlc_path, QLC_BYTES);
	snprintf(tpath, sizeof(tpath), "%s/big.trace", dir);
	/* MQSim: time, device, start sector, sectors, type (0 write, 1 read) */
	ttmp_write(tpath, "0 0 0 4096 0\n10 0 8192 8 0\n20 0 0 4096 1\n");
	snprintf(job, sizeof(job), "[t]\ntrace=%s\ntrace_format=mqsim\niodepth=4\n", tpath);
	struct qs_rt_world *w = open_world(false);
	struct qs_job_file *jf = load_jobs(job, qs_rt_world_sizes(w)->capacity);
	struct qs_bench_variant v = {.shaping = false};
	struct qs_bench_result r;
	int rc = qs_rt_run_job(w, &jf->jobs[0], &v, SEED, &r, err, sizeof(err));
	if (rc)
		fail_msg("run: %d: %s", rc, err);
	assert_int_equal(r.ios, 3);
	assert_int_equal(r.eng.client_write_bytes, 2 * MIB + 4096);
	qs_job_file_free(jf);
	qs_rt_world_free(w);
	unlink(tpath);
}

/* A time-based mix with a ramp, groups of two clones: reads and writes. */
static void test_dev_timed_mix(void **state)
{
	(void)state;
	make_dev(qlc_path, QLC_BYTES);
	make_dev(fast_path, FAST_BYTES);
	struct qs_rt_world *w = open_world(true);
	struct qs_job_file *jf = load_jobs(mix_fio, qs_rt_world_sizes(w)->capacity);
	char err[512];
	for (int on = 0; on < 2; on++) {
		struct qs_bench_variant v = {.shaping = on, .order = QS_ORDER_FIFO};
		struct qs_bench_result r;
		int rc = qs_rt_run_job(w, &jf->jobs[0], &v, SEED, &r, err, sizeof(err));
		if (rc)
			fprintf(stderr, "%s\n", err);
		assert_int_equal(rc, 0);
		assert_true(r.ios > 0);
		assert_true(r.rep.read.iops > 0 && r.rep.write.iops > 0);
		assert_true(r.window_ns > 0 && r.sim_ns >= r.window_ns);
		/* the window excludes the ramp: fewer client I/Os counted than run */
		assert_true(r.eng.client_reads + r.eng.client_writes <= r.ios);
		assert_int_equal(r.rep.qlc.writes, r.eng.qlc_writes);
		if (on)
			assert_int_equal(r.rep.qlc.iu_whole_writes, r.rep.qlc.writes);
	}
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

/* The block device holding / (mounted), or "" if there is none to find. */
static void root_blkdev(char *out, size_t n)
{
	struct stat root, st;
	out[0] = 0;
	if (stat("/", &root) < 0)
		return;
	DIR *d = opendir("/dev");
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char p[300];
		snprintf(p, sizeof(p), "/dev/%s", de->d_name);
		if (lstat(p, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == root.st_dev) {
			snprintf(out, n, "%s", p);
			break;
		}
	}
	closedir(d);
}

static int world_err(const char *qlc, const char *fast, bool yes, char *err, size_t n)
{
	struct qs_rt_conf c = {
		.kind = QS_RT_DEV,
		.qlc_dev = qlc,
		.fast_dev = fast,
		.profile = prof_path,
		.yes_overwrite = yes,
	};
	struct qs_rt_world *w = NULL;
	int rc = qs_rt_world_new(&c, &w, err, n);
	/* none of these may open; free it anyway, it has written nothing */
	qs_rt_world_free(w);
	return rc;
}

static void test_dev_refusals(void **state)
{
	(void)state;
	char err[512];
	make_dev(qlc_path, QLC_BYTES);
	make_dev(fast_path, FAST_BYTES);
	assert_int_equal(world_err(qlc_path, fast_path, false, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "--yes-overwrite"));
	assert_int_equal(world_err(dir, NULL, true, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, dir));
	assert_int_equal(world_err("/nonexistent/qs_rt", NULL, true, err, sizeof(err)), -ENOENT);
	assert_int_equal(world_err(qlc_path, qlc_path, true, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "same device"));
	make_dev(fast_path, 4 * MIB);
	assert_int_equal(world_err(qlc_path, fast_path, true, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "8 MiB"));
	/* A mounted block device: claimed with O_EXCL, which the kernel
	 * refuses. Nothing is written even if the claim were granted: the
	 * world only opens devices, runs write. */
	char blk[300];
	root_blkdev(blk, sizeof(blk));
	int fd = blk[0] ? open(blk, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		/* no such device node, or no access to it (not root, a container's
		 * device cgroup): nothing to check the refusal on here */
		fprintf(stderr, "test_rt: mounted-device refusal not checked: %s%s%s\n",
			blk[0] ? blk : "no block device node for /", blk[0] ? ": " : "",
			blk[0] ? strerror(errno) : "");
		return;
	}
	close(fd);
	assert_int_equal(world_err(blk, NULL, true, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "in use"));
}

static int cli(int argc, char **argv)
{
	return qs_cmd_bench_run(argc, argv);
}

static void test_cli(void **state)
{
	(void)state;
	char job[128], json[128];
	snprintf(job, sizeof(job), "%s/cli.fio", dir);
	snprintf(json, sizeof(json), "%s/out.json", dir);
	ttmp_write(job, fill_fio);
	make_dev(qlc_path, QLC_BYTES);
	make_dev(fast_path, FAST_BYTES);
	char *a1[] = {"run", job, "--mode", "dev", "--yes-overwrite", NULL};
	assert_int_equal(cli(5, a1), 2); /* no --qlc-dev */
	char *a2[] = {"run", job, "--mode", "dev", "--qlc-dev", qlc_path, "--fast-dev",
		      fast_path, NULL};
	assert_int_equal(cli(8, a2), 2); /* no confirmation */
	char *a3[] = {"run", job, "--qlc-dev", qlc_path, NULL};
	assert_int_equal(cli(4, a3), 2); /* sim mode takes no device */
	char *a4[] = {"run", job, "--mode", "dev", "--qlc-dev", qlc_path, "--yes-overwrite", NULL};
	assert_int_equal(cli(7, a4), 2); /* shaping on (both) needs --fast-dev */
	char *a5[] = {"run", job, "--mode", "dev", "--qlc-dev", qlc_path, "--shaping", "off",
		      "--yes-overwrite", "--scale-gib", "1", NULL};
	assert_int_equal(cli(11, a5), 2); /* no model in dev mode */
	char *a6[] = {"run", job, "--mode", "dev", "--qlc-dev", qlc_path, "--fast-dev", fast_path,
		      "--yes-overwrite", "--profile", prof_path, "--quiet", "--json", json, NULL};
	assert_int_equal(cli(14, a6), 0);
	FILE *f = fopen(json, "r");
	assert_non_null(f);
	char text[16384];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	assert_non_null(strstr(text, "\"job\": \"seq\""));
	assert_non_null(strstr(text, "\"job\": \"rand\""));
	assert_non_null(strstr(text, "\"shaping\": \"on\""));
	assert_non_null(strstr(text, "\"shaping\": \"off\""));
	assert_non_null(strstr(text, "\"mode\": \"dev\""));
	assert_null(strstr(text, "\"mode\": \"sim\""));
	unlink(json);
	unlink(job);
}

/* Emu mode: a 128 MiB model of the tiny QLC, a 16 MiB log. */
static struct qs_rt_world *open_emu(void)
{
	struct qs_rt_conf c = {
		.kind = QS_RT_EMU,
		.profile = prof_path,
		.fast = fprof_path,
		.scale_bytes = 128 * MIB,
		/* 1 GB drive at 128 MiB: 134 MB of log at the drive's scale is
		 * 17.9 MB on the model, 17 MiB after rounding */
		.cache_bytes = 134000000,
	};
	struct qs_rt_world *w = NULL;
	char err[512];
	int rc = qs_rt_world_new(&c, &w, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(qs_rt_world_sizes(w)->capacity, 128 * MIB);
	assert_int_equal(qs_rt_world_sizes(w)->log_bytes, 17 * MIB);
	char desc[512];
	qs_rt_world_describe(w, desc, sizeof(desc));
	assert_non_null(strstr(desc, "tinyqlc"));
	assert_non_null(strstr(desc, "tinyscm"));
	return w;
}

static void test_emu_fill(void **state)
{
	(void)state;
	struct qs_rt_world *w = open_emu();
	struct qs_job_file *jf = load_jobs(fill_fio, qs_rt_world_sizes(w)->capacity);
	char err[512];
	for (int on = 0; on < 2; on++)
		for (size_t i = 0; i < jf->njobs; i++) {
			struct qs_bench_variant v = {.shaping = on, .order = QS_ORDER_FULLEST};
			struct qs_bench_result r;
			int rc = qs_rt_run_job(w, &jf->jobs[i], &v, SEED, &r, err, sizeof(err));
			if (rc)
				fprintf(stderr, "%s\n", err);
			assert_int_equal(rc, 0);
			check_counts(&r, 1536);
			/* the model received exactly what the wrapper counted */
			assert_int_equal(r.qlc.host_writes, r.rep.qlc.writes);
			assert_int_equal(r.qlc.host_write_bytes, r.rep.qlc.write_bytes);
			assert_int_equal(r.fast.host_write_bytes, r.rep.fast_write_bytes);
			struct qs_rt_late lq, lf;
			qs_rt_world_late(w, &lq, &lf);
			assert_true(lq.requests >= r.rep.qlc.writes);
			if (on) {
				assert_true(r.rep.qlc.writes > 0);
				assert_int_equal(r.rep.qlc.iu_whole_writes, r.rep.qlc.writes);
				/* and the drive saw no partial IU: a second witness */
				assert_int_equal(r.qlc.partial_ius, 0);
				assert_true(lf.requests > 0);
			} else {
				assert_int_equal(r.rep.qlc.writes, 1536);
				assert_true(r.qlc.partial_ius > 0);
				assert_int_equal(lf.requests, 0);
				/* 4 KiB writes on a 64 KiB IU: the drive programs more
				 * than it gets (exactly 16 only once all is programmed) */
				assert_true(r.rep.qlc.waf_iu > 1.0);
			}
		}
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

/* Log placement in emu mode: the emulated fast tier holds the map region
 * besides the same log, bands are the model's superblocks, and the model
 * sees no partial IU. */
static void test_emu_log_placement(void **state)
{
	(void)state;
	struct qs_rt_conf c = emu_log_conf();
	struct qs_rt_world *w = NULL;
	char err[512];
	assert_int_equal(qs_rt_world_new(&c, &w, err, sizeof(err)), 0);
	assert_int_equal(qs_rt_world_sizes(w)->log_bytes, 17 * MIB);
	struct qs_engine_conf lc;
	qs_rt_world_log_conf(w, &lc);
	assert_true(lc.band_bytes >= 2 * 65536 && lc.band_bytes % 65536 == 0);
	struct qs_job_file *jf = load_jobs(fill_fio,
					   qs_engine_conf_client_size(&lc, 128 * MIB));
	struct qs_bench_result r;
	run_log_fill(w, jf, &r);
	assert_true(r.rep.qlc.writes > 0);
	assert_int_equal(r.qlc.partial_ius, 0);
	assert_int_equal(r.rep.qlc.read_fill_bytes, 0);
	assert_int_equal(r.eng.band_bytes, lc.band_bytes);
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

/*
 * A write group, then a read group of the blocks written, with log
 * placement in emu mode. Carried (qs_rt_carry_begin), the read group finds
 * the engine and drives the write group left, its map included: it reads
 * the blocks from the devices. Each on fresh drives and a new engine, the
 * map is empty and the reads reach no device; and that time-based job of
 * reads that need no device still ends at its runtime (it ran for ever on
 * the real clock, each completion issuing the next inside the engine's
 * delivery loop).
 */
static const char *carry_fio =
	"[global]\n"
	"bs=4k\n"
	"iodepth=8\n"
	"size=6m\n"
	"[w]\n"
	"rw=randwrite\n"
	"[r]\n"
	"stonewall\n"
	"rw=randread\n"
	"runtime=200ms\n"
	"time_based=1\n";

static void check_carry(const struct qs_rt_conf *c, uint64_t qlc_bytes)
{
	struct qs_rt_world *w = NULL;
	char err[512];
	assert_int_equal(qs_rt_world_new(c, &w, err, sizeof(err)), 0);
	struct qs_engine_conf lc;
	qs_rt_world_log_conf(w, &lc);
	struct qs_job_file *jf = load_jobs(carry_fio, qs_engine_conf_client_size(&lc, qlc_bytes));
	struct qs_bench_variant v = {.shaping = true, .order = QS_ORDER_FIFO,
				     .placement = QS_PLACE_LOG};
	struct qs_bench_result rw, rr;
	for (int carry = 1; carry >= 0; carry--) {
		if (carry)
			assert_int_equal(qs_rt_carry_begin(w, &v, err, sizeof(err)), 0);
		int rc = qs_rt_run_job(w, &jf->jobs[0], &v, SEED, &rw, err, sizeof(err));
		if (!rc)
			rc = qs_rt_run_job(w, &jf->jobs[1], &v, SEED, &rr, err, sizeof(err));
		if (rc)
			fprintf(stderr, "%s\n", err);
		assert_int_equal(rc, 0);
		if (carry)
			assert_int_equal(qs_rt_carry_end(w, err, sizeof(err)), 0);
		check_counts(&rw, 1536);
		assert_true(rr.rep.read.iops > 0);
		/* emu: the models' counts; dev: the wrappers' */
		uint64_t dev_reads = rr.qlc.host_reads + rr.fast.host_reads;
		if (carry)
			assert_true(dev_reads > 0);
		else
			assert_int_equal(dev_reads, 0);
	}
	/* one carry at a time, and only for its own variant */
	assert_int_equal(qs_rt_carry_begin(w, &v, err, sizeof(err)), 0);
	assert_int_equal(qs_rt_carry_begin(w, &v, err, sizeof(err)), -EBUSY);
	struct qs_bench_variant other = {.shaping = false};
	assert_int_equal(qs_rt_run_job(w, &jf->jobs[0], &other, SEED, &rw, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(qs_rt_carry_end(w, err, sizeof(err)), 0);
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

/*
 * --precondition seq: before a variant's runs the QLC file is written once
 * in order (every 4 KiB block of it, incompressible bytes), straight to it,
 * and the world counts the fill; without it the file stays as it is.
 */
static void test_dev_precondition(void **state)
{
	(void)state;
	for (int pre = 1; pre >= 0; pre--) {
		struct qs_rt_conf c = dev_log_conf();
		c.log_placement = false;
		c.precondition = pre;
		struct qs_rt_world *w = NULL;
		char err[512];
		assert_int_equal(qs_rt_world_new(&c, &w, err, sizeof(err)), 0);
		struct qs_bench_variant v = {.shaping = false};
		assert_int_equal(qs_rt_carry_begin(w, &v, err, sizeof(err)), 0);
		assert_int_equal(qs_rt_carry_end(w, err, sizeof(err)), 0);
		uint64_t fills, ns;
		qs_rt_world_fill(w, &fills, &ns);
		assert_int_equal(fills, (uint64_t)pre);
		qs_rt_world_free(w);
		/* every block written (none left zero), or none */
		int fd = open(qlc_path, O_RDONLY);
		assert_true(fd >= 0);
		static char blk[4096], zero[4096];
		uint64_t zeroes = 0, n = 0;
		while (read(fd, blk, sizeof(blk)) == (ssize_t)sizeof(blk)) {
			zeroes += !memcmp(blk, zero, sizeof(blk));
			n++;
		}
		close(fd);
		assert_int_equal(n, QLC_BYTES / 4096);
		assert_int_equal(zeroes, pre ? 0 : n);
	}
}

static void test_emu_carry(void **state)
{
	(void)state;
	struct qs_rt_conf c = emu_log_conf();
	check_carry(&c, 128 * MIB);
}

/* The same on files in dev mode. */
static void test_dev_carry(void **state)
{
	(void)state;
	struct qs_rt_conf c = dev_log_conf();
	check_carry(&c, QLC_BYTES);
}

static void test_emu_timed_mix(void **state)
{
	(void)state;
	struct qs_rt_world *w = open_emu();
	struct qs_job_file *jf = load_jobs(mix_fio, qs_rt_world_sizes(w)->capacity);
	char err[512];
	for (int on = 0; on < 2; on++) {
		struct qs_bench_variant v = {.shaping = on, .order = QS_ORDER_SWEEP};
		struct qs_bench_result r;
		assert_int_equal(qs_rt_run_job(w, &jf->jobs[0], &v, SEED, &r, err, sizeof(err)), 0);
		assert_true(r.rep.read.iops > 0 && r.rep.write.iops > 0);
		assert_true(r.window_ns > 0);
		assert_int_equal(r.rep.qlc.writes, r.eng.qlc_writes);
		if (on)
			assert_int_equal(r.qlc.partial_ius, 0);
	}
	qs_job_file_free(jf);
	qs_rt_world_free(w);
}

static void test_emu_cli(void **state)
{
	(void)state;
	char job[128], json[128];
	snprintf(job, sizeof(job), "%s/cli.fio", dir);
	snprintf(json, sizeof(json), "%s/out.json", dir);
	ttmp_write(job, fill_fio);
	char *a1[] = {"run", job, "--mode", "emu", "--qlc-dev", qlc_path, NULL};
	assert_int_equal(cli(6, a1), 2); /* devices are dev mode's */
	char *a2[] = {"run", job, "--mode", "emu", "--profile", prof_path, "--fast", fprof_path,
		      "--scale-gib", "0.25", "--cache", "300m", "--quiet", "--json", json, NULL};
	assert_int_equal(cli(15, a2), 0);
	FILE *f = fopen(json, "r");
	assert_non_null(f);
	char text[16384];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	assert_non_null(strstr(text, "\"job\": \"rand\""));
	assert_non_null(strstr(text, "\"shaping\": \"on\""));
	assert_non_null(strstr(text, "\"mode\": \"emu\""));
	assert_null(strstr(text, "\"mode\": \"sim\""));
	/* each job on fresh emulated drives: the same runs, the same entries */
	char *a3[] = {"run", job, "--mode", "emu", "--profile", prof_path, "--fast", fprof_path,
		      "--scale-gib", "0.25", "--cache", "300m", "--quiet", "--json", json,
		      "--fresh-drive", NULL};
	assert_int_equal(cli(16, a3), 0);
	f = fopen(json, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	assert_non_null(strstr(text, "\"job\": \"rand\""));
	assert_non_null(strstr(text, "\"shaping\": \"on\""));
	unlink(json);
	unlink(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dev_refusals),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_dev_shaping_on),
		cmocka_unit_test(test_dev_log_placement),
		cmocka_unit_test(test_dev_shaping_off),
		cmocka_unit_test(test_dev_trace_large_request),
		cmocka_unit_test(test_dev_timed_mix),
		cmocka_unit_test(test_emu_fill),
		cmocka_unit_test(test_emu_log_placement),
		cmocka_unit_test(test_emu_timed_mix),
		cmocka_unit_test(test_emu_carry),
		cmocka_unit_test(test_dev_carry),
		cmocka_unit_test(test_dev_precondition),
		cmocka_unit_test(test_emu_cli),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
