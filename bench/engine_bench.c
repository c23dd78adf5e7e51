/* SPDX-License-Identifier: MIT */
/*
 * qlcshape bench engine: the engine's own cost, in-process, on one core.
 *
 * Both volumes are RAM: an op is queued at submission and carried out
 * (memcpy) when the loop polls, as a real io_uring completion would come
 * back later. So every figure includes the copies a RAM "device" does, and
 * the memcpy_4k case, measured in the same run on the same kind of memory,
 * gives the yardstick: on a noisy machine the ratio is what counts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "host/env.h"
#include "host/rand.h"
#include "cmds.h"
#include "qlcshape/engine.h"

#define BS 4096u
#define QD 32u

/* ---- RAM volume with deferred completion ---- */

struct rop {
	char kind;
	uint64_t off, len;
	const struct iovec *iov;
	int iovcnt;
	qs_io_cb cb;
	void *arg;
};

struct rvol {
	struct qs_vol vol;
	unsigned char *mem;
	struct rop *ring;
	uint32_t cap, head, tail; /* power-of-two ring */
};

static void rv_push(struct rvol *v, char kind, uint64_t off, uint64_t len,
		    const struct iovec *iov, int iovcnt, qs_io_cb cb, void *arg)
{
	if (v->tail - v->head == v->cap) {
		fprintf(stderr, "qlcshape: bench: RAM volume queue overflow\n");
		abort();
	}
	struct rop *o = &v->ring[v->tail++ & (v->cap - 1)];
	o->kind = kind;
	o->off = off;
	o->len = len;
	o->iov = iov;
	o->iovcnt = iovcnt;
	o->cb = cb;
	o->arg = arg;
}

static void rv_read(void *ctx, uint64_t off, const struct iovec *iov, int n, qs_io_cb cb, void *arg)
{
	rv_push(ctx, 'r', off, 0, iov, n, cb, arg);
}

static void rv_write(void *ctx, uint64_t off, const struct iovec *iov, int n, unsigned fl,
		     qs_io_cb cb, void *arg)
{
	rv_push(ctx, 'w', off, 0, iov, n, cb, arg);
}

static void rv_flush(void *ctx, qs_io_cb cb, void *arg)
{
	rv_push(ctx, 'f', 0, 0, NULL, 0, cb, arg);
}

static void rv_discard(void *ctx, uint64_t off, uint64_t len, qs_io_cb cb, void *arg)
{
	rv_push(ctx, 'd', off, len, NULL, 0, cb, arg);
}

static const struct qs_vol_ops rv_ops = {rv_read, rv_write, rv_flush, rv_discard};

/* Carry out and complete what is queued now (not what completions add). */
static unsigned rv_poll(struct rvol *v)
{
	uint32_t end = v->tail, n = 0;
	while (v->head != end) {
		struct rop o = v->ring[v->head++ & (v->cap - 1)];
		uint64_t p = o.off;
		if (o.kind == 'r' || o.kind == 'w')
			for (int i = 0; i < o.iovcnt; i++) {
				if (o.kind == 'r')
					memcpy(o.iov[i].iov_base, v->mem + p, o.iov[i].iov_len);
				else
					memcpy(v->mem + p, o.iov[i].iov_base, o.iov[i].iov_len);
				p += o.iov[i].iov_len;
			}
		else if (o.kind == 'd')
			memset(v->mem + o.off, 0, o.len);
		o.cb(o.arg, 0);
		n++;
	}
	return n;
}

static int rv_init(struct rvol *v, uint64_t size)
{
	memset(v, 0, sizeof(*v));
	v->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->mem == MAP_FAILED)
		return -errno;
	/* touch it all now so page faults are not counted as engine time */
	memset(v->mem, 0, size);
	v->cap = 1u << 16;
	v->ring = calloc(v->cap, sizeof(*v->ring));
	if (!v->ring)
		return -ENOMEM;
	v->vol.ops = &rv_ops;
	v->vol.ctx = v;
	v->vol.size = size;
	v->vol.flags = 0; /* like Optane: power-loss protected */
	return 0;
}

static void rv_fini(struct rvol *v, uint64_t size)
{
	munmap(v->mem, size);
	free(v->ring);
}

/* ---- one benchmark world ---- */

struct world {
	struct qs_henv henv;
	struct rvol fast, qlc;
	uint64_t fast_size, qlc_size;
	struct qs_engine *e;
	uint32_t inflight;
	bool done;
	int res;
	uint64_t errors;
	uint64_t rng;
};

static void flag_cb(void *arg, int res)
{
	struct world *w = arg;
	w->done = true;
	w->res = res;
}

static void io_cb(void *arg, int res)
{
	struct world *w = arg;
	w->inflight--;
	if (res)
		w->errors++;
}

static void poll_once(struct world *w)
{
	rv_poll(&w->fast);
	rv_poll(&w->qlc);
	if (qs_henv_expired(&w->henv))
		qs_engine_timer(w->e);
}

static int world_open(struct world *w, uint64_t log_bytes, uint64_t qlc_bytes,
		      uint64_t dram, uint32_t start_pct)
{
	memset(w, 0, sizeof(*w));
	qs_henv_init(&w->henv, "qlcshape bench: ", QS_LOG_WARN);
	w->fast_size = log_bytes + 2 * BS;
	w->qlc_size = qlc_bytes;
	w->rng = 42;
	int rc = rv_init(&w->fast, w->fast_size);
	if (!rc)
		rc = rv_init(&w->qlc, w->qlc_size);
	if (rc)
		return rc;
	struct qs_engine_conf c;
	qs_engine_conf_default(&c);
	c.dram_buffer_bytes = dram;
	c.policy.start_pct = start_pct;
	c.policy.urgent_pct = start_pct > 85 ? start_pct : 85;
	c.policy.idle_ms = 0;
	w->e = qs_engine_open(&w->henv.env, &w->fast.vol, &w->qlc.vol, &c, QS_OPEN_FORMAT,
			      flag_cb, w);
	if (!w->e)
		return -errno;
	while (!w->done) {
		poll_once(w);
		if (!w->henv.deadline_ns && !w->fast.tail && !w->done)
			break;
	}
	return w->done ? w->res : -EIO;
}

static void world_close(struct world *w)
{
	w->done = false;
	if (!qs_engine_close(w->e, flag_cb, w))
		while (!w->done)
			poll_once(w);
	qs_engine_free(w->e);
	rv_fini(&w->fast, w->fast_size);
	rv_fini(&w->qlc, w->qlc_size);
}

/* Run n requests of size bs, random over [0, span), QD deep; returns ns. */
static uint64_t run(struct world *w, char op, uint64_t n, uint64_t bs, uint64_t span_base,
		    uint64_t span, unsigned char *bufs)
{
	uint64_t t0 = qs_henv_now_ns(), issued = 0;
	uint64_t slots = span / bs;
	while (issued < n || w->inflight) {
		while (w->inflight < QD && issued < n) {
			uint64_t off = span_base + qs_splitmix64(&w->rng) % slots * bs;
			unsigned char *b = bufs + (issued % QD) * bs;
			int rc = op == 'w' ? qs_engine_write(w->e, off, bs, b, 0, io_cb, w)
					   : qs_engine_read(w->e, off, bs, b, io_cb, w);
			if (rc) {
				fprintf(stderr, "qlcshape: bench: submit failed: %s\n", strerror(-rc));
				return 0;
			}
			w->inflight++;
			issued++;
		}
		poll_once(w);
	}
	return qs_henv_now_ns() - t0;
}

struct result {
	const char *name;
	double ops_per_s, ns_per_op;
	char note[160];
};

static void put(struct result *r, const char *name, uint64_t n, uint64_t ns)
{
	r->name = name;
	r->ns_per_op = ns ? (double)ns / (double)n : 0;
	r->ops_per_s = ns ? (double)n * 1e9 / (double)ns : 0;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: qlcshape bench engine [--json FILE] [--ops N]\n"
		"  Drives the engine in-process on RAM volumes, one core, 32 requests in\n"
		"  flight, and prints operations per second and nanoseconds per operation\n"
		"  for each case beside a plain 4 KiB memcpy measured in the same run.\n"
		"  --json FILE  also write the figures as JSON\n"
		"  --ops N      requests per case (default 1000000)\n");
	return f == stdout ? 0 : 2;
}

int qs_cmd_bench_engine(int argc, char **argv)
{
	const char *json = NULL;
	uint64_t n = 1000000;
	static const struct option opts[] = {
		{"json", required_argument, NULL, 'j'},
		{"ops", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = optarg;
			break;
		case 'n': {
			char *end;
			n = strtoull(optarg, &end, 10);
			if (*end || n < 1000) {
				fprintf(stderr, "qlcshape bench engine: --ops '%s': need a whole number >= 1000\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (optind != argc)
		return usage(stderr);

	enum { LOG = 256u << 20 };
	unsigned char *bufs = aligned_alloc(BS, QD * 65536);
	if (!bufs)
		return 1;
	uint64_t s = 7;
	for (size_t i = 0; i < QD * 65536 / 8; i++)
		((uint64_t *)bufs)[i] = qs_splitmix64(&s);
	struct result res[6];
	memset(res, 0, sizeof(res));
	struct world w;
	struct qs_engine_stats st;
	double bytes_per_block = 0, moved_per_write = 0, full_bytes_per_block = 0;
	uint64_t destaged_small = 0;

	/* memcpy_4k: the yardstick, on the same amount of cold memory */
	{
		size_t region = LOG;
		unsigned char *dst = mmap(NULL, region, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (dst == MAP_FAILED)
			return 1;
		memset(dst, 0, region);
		uint64_t r = 1, t0 = qs_henv_now_ns();
		for (uint64_t i = 0; i < n; i++)
			memcpy(dst + qs_splitmix64(&r) % (region / BS) * BS, bufs + (i % QD) * BS, BS);
		put(&res[5], "memcpy_4k", n, qs_henv_now_ns() - t0);
		munmap(dst, region);
	}

	/* write_4k: 4K random writes over a quarter of a 256 MiB log */
	int rc = world_open(&w, LOG, 1ull << 30, 0, 90);
	if (rc) {
		fprintf(stderr, "qlcshape: bench: engine open failed: %s\n", strerror(-rc));
		return 1;
	}
	put(&res[0], "write_4k", n, run(&w, 'w', n, BS, 0, LOG / 16, bufs));
	qs_engine_get_stats(w.e, &st);
	destaged_small = st.destage_ius;
	bytes_per_block = st.cached_blocks ? (double)st.index_bytes / (double)st.cached_blocks : 0;
	/* the index is sized for the whole log: per block of log capacity */
	bytes_per_block = (double)st.index_bytes / (double)st.log_blocks;
	snprintf(res[0].note, sizeof(res[0].note),
		 "%llu destages; index %.1f B per log block of capacity",
		 (unsigned long long)destaged_small, bytes_per_block);
	/* read_4k_cached: the same span, all cached (log reads, no DRAM buffer) */
	put(&res[2], "read_4k_cached", n, run(&w, 'r', n, BS, 0, LOG / 16, bufs));
	/* read_4k_uncached: a span never written: QLC reads */
	put(&res[3], "read_4k_uncached", n, run(&w, 'r', n, BS, LOG / 2, LOG / 2, bufs));
	world_close(&w);

	/* write_4k_destage: span ten times the log, destage running */
	rc = world_open(&w, LOG / 4, 10ull * LOG / 4, 16u << 20, 50);
	if (rc)
		return 1;
	put(&res[1], "write_4k_destage", n, run(&w, 'w', n, BS, 0, 10ull * LOG / 4, bufs));
	qs_engine_get_stats(w.e, &st);
	moved_per_write = (double)(st.log_append_bytes + st.log_read_bytes + st.qlc_read_bytes +
				   st.qlc_write_bytes) / (double)st.client_writes;
	full_bytes_per_block =
		st.cached_blocks ? (double)st.index_bytes / (double)st.cached_blocks : 0;
	snprintf(res[1].note, sizeof(res[1].note),
		 "%.1f KiB moved per 4 KiB write; %llu IUs destaged; index+IU state %.1f B "
		 "per cached block (%llu blocks, %llu dirty IUs)",
		 moved_per_write / 1024, (unsigned long long)st.destage_ius, full_bytes_per_block,
		 (unsigned long long)st.cached_blocks, (unsigned long long)st.dirty_ius);
	world_close(&w);

	/* write_64k: aligned 64K random writes through the log */
	rc = world_open(&w, LOG, 1ull << 30, 0, 90);
	if (rc)
		return 1;
	uint64_t n64 = n / 8;
	put(&res[4], "write_64k", n64, run(&w, 'w', n64, 65536, 0, LOG / 4, bufs));
	world_close(&w);
	free(bufs);

	printf("qlcshape engine benchmark: RAM volumes, one core, %u requests in flight, %llu "
	       "requests per case (write_64k: %llu)\n\n",
	       QD, (unsigned long long)n, (unsigned long long)n64);
	printf("%-18s %14s %10s %9s  %s\n", "case", "ops/s", "ns/op", "x memcpy", "notes");
	for (int i = 0; i < 6; i++)
		printf("%-18s %14.0f %10.1f %9.1f  %s\n", res[i].name, res[i].ops_per_s,
		       res[i].ns_per_op, res[5].ns_per_op ? res[i].ns_per_op / res[5].ns_per_op : 0,
		       res[i].note);
	if (w.errors)
		fprintf(stderr, "qlcshape: bench: %llu requests failed\n", (unsigned long long)w.errors);
	if (json) {
		FILE *f = fopen(json, "w");
		if (!f) {
			fprintf(stderr, "qlcshape bench engine: cannot write %s: %s\n", json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\n  \"ops_per_case\": %llu,\n  \"queue_depth\": %u,\n",
			(unsigned long long)n, QD);
		for (int i = 0; i < 6; i++)
			fprintf(f, "  \"%s\": {\"ops_per_s\": %.0f, \"ns_per_op\": %.1f},\n",
				res[i].name, res[i].ops_per_s, res[i].ns_per_op);
		fprintf(f, "  \"index_bytes_per_log_block\": %.2f,\n"
			   "  \"index_bytes_per_cached_block_full_sparse\": %.2f,\n"
			   "  \"write_4k_destage_bytes_moved_per_write\": %.0f\n}\n",
			bytes_per_block, full_bytes_per_block, moved_per_write);
		fclose(f);
		printf("\nJSON written to %s\n", json);
	}
	return 0;
}
