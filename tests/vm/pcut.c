/* SPDX-License-Identifier: MIT */
/*
 * pcut: the client side of the VM power-cut test (tests/vm/powercut.sh).
 *
 *   pcut write DEV LOGDEV SEED BLOCKS CUTAT   issue writes until killed
 *   pcut check DEV LOGDEV                     check DEV against LOGDEV
 *
 * write: discard the region and flush (so what was never written reads as
 * zeroes), then a stream of operations over the first BLOCKS 4 KiB blocks of DEV
 * (O_DIRECT): writes of 1 to 16 blocks and, one in ten, discards, from 8
 * threads, so up to 8 are in flight; two in flight never overlap, so the
 * operations touching one block are ordered by their sequence number.
 * Operation j is a pure function of (SEED, j), and so is every block it
 * writes: a header (magic, seed, j, block number) and a pattern, so the
 * check can tell exactly which operation a block holds and that no part
 * of its 4 KiB is from anything else. Every 16..128 operations (seeded) a
 * flush: wait until nothing is in flight, fdatasync(DEV), then record on
 * LOGDEV "all operations below S completed before a completed flush".
 * Before operation j is issued, LOGDEV holds an issue bound above j
 * (reserved 256 at a time). LOGDEV is a plain virtio disk opened
 * O_DIRECT|O_DSYNC: what the checker logged survives the cut. After CUTAT
 * operations, "qs-vm: power cut now" on stdout, the host's cue to kill qemu,
 * and the writes go on until it does.
 *
 * check: for each block b, W_b = the last operation below S touching b
 * (none: the block was never written, zeroes). Allowed: W_b's content, or
 * the content of any operation j >= S touching b below the issue bound (a
 * write's exact 4 KiB, or zeroes for a discard). Anything else is a
 * violation: older than W_b (a completed, flushed write lost), torn within
 * 4 KiB, or foreign data. Prints the counts; exits 1 on any violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BLK 4096
#define MAGIC 0x7163637574626c6bULL	/* "qccutblk" */
#define LOGMAGIC 0x71636375746c6f67ULL	/* "qccutlog" */
#define THREADS 8
#define MAXLEN 16
#define RESERVE 256

struct op {
	uint64_t start;
	uint32_t len;
	int discard;
};

/* The log's three 4 KiB slots: 0 the run (seed, blocks), 1 the issue
 * bound, 2 the last completed flush. */
struct logrec {
	uint64_t magic, seed, blocks, value, count;
};

static uint64_t seed, blocks;
static int fd, logfd;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static struct op gen(uint64_t j)
{
	uint64_t r = mix(seed * 0x100000001b3ULL ^ mix(j));
	struct op o;

	o.len = 1 + (uint32_t)(r % MAXLEN);
	o.start = (r >> 8) % blocks;
	if (o.start + o.len > blocks)
		o.len = (uint32_t)(blocks - o.start);
	o.discard = (r >> 60) % 10 == 0;
	return o;
}

/* Flush interval after flush number f. */
static uint64_t interval(uint64_t f)
{
	return 16 + mix(seed ^ 0x666c757368ULL ^ mix(f)) % 113;
}

static void fill(uint64_t j, uint64_t b, uint64_t *p)
{
	p[0] = MAGIC;
	p[1] = seed;
	p[2] = j;
	p[3] = b;
	for (int i = 4; i < BLK / 8; i++)
		p[i] = mix(seed ^ (j << 20) ^ (b << 4) ^ (uint64_t)i);
}

static void die(const char *what)
{
	fprintf(stderr, "pcut: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void put_log(int slot, uint64_t value, uint64_t count)
{
	static __thread void *buf;
	struct logrec r = {LOGMAGIC, seed, blocks, value, count};

	if (!buf && posix_memalign(&buf, BLK, BLK))
		die("memory");
	memset(buf, 0, BLK);
	memcpy(buf, &r, sizeof(r));
	if (pwrite(logfd, buf, BLK, (off_t)slot * BLK) != BLK)
		die("log device write");
}

static int get_log(int slot, struct logrec *r)
{
	void *buf;

	if (posix_memalign(&buf, BLK, BLK))
		die("memory");
	if (pread(logfd, buf, BLK, (off_t)slot * BLK) != BLK)
		die("log device read");
	memcpy(r, buf, sizeof(*r));
	free(buf);
	return r->magic == LOGMAGIC;
}

/* The dispatcher: the next operation, the ones in flight, the flush. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint64_t next_op, bound, next_flush, flushes, cutat;
static struct op inflight[THREADS];
static int busy[THREADS], ninflight, flushing;

static int overlaps(struct op o)
{
	for (int i = 0; i < THREADS; i++)
		if (busy[i] && o.start < inflight[i].start + inflight[i].len &&
		    inflight[i].start < o.start + o.len)
			return 1;
	return 0;
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	void *buf;

	if (posix_memalign(&buf, BLK, (size_t)MAXLEN * BLK))
		die("memory");
	for (;;) {
		pthread_mutex_lock(&mu);
		for (;;) {
			if (flushing) {
				pthread_cond_wait(&cv, &mu);
				continue;
			}
			if (next_op == next_flush) {
				/* Everything below next_op completed before the flush is issued. */
				if (ninflight) {
					pthread_cond_wait(&cv, &mu);
					continue;
				}
				flushing = 1;
				pthread_mutex_unlock(&mu);
				if (fdatasync(fd))
					die("flush (fdatasync) of the device");
				put_log(2, next_op, flushes + 1);
				pthread_mutex_lock(&mu);
				flushes++;
				next_flush = next_op + interval(flushes);
				flushing = 0;
				pthread_cond_broadcast(&cv);
				continue;
			}
			if (overlaps(gen(next_op))) {
				pthread_cond_wait(&cv, &mu);
				continue;
			}
			break;
		}
		uint64_t j = next_op++;
		struct op o = gen(j);
		if (j >= bound) {
			/* Logged before the operation is issued (under the lock:
			 * nothing above the old bound is issued meanwhile). */
			bound = j + RESERVE;
			put_log(1, bound, 0);
		}
		inflight[me] = o;
		busy[me] = 1;
		ninflight++;
		if (j == cutat) {
			printf("qs-vm: power cut now (operation %" PRIu64 ", %" PRIu64 " flushes)\n",
			       j, flushes);
			fflush(stdout);
		}
		pthread_mutex_unlock(&mu);

		if (o.discard) {
			uint64_t range[2] = {o.start * BLK, (uint64_t)o.len * BLK};
			if (ioctl(fd, BLKDISCARD, range))
				die("discard (BLKDISCARD) on the device");
		} else {
			for (uint32_t i = 0; i < o.len; i++)
				fill(j, o.start + i, (uint64_t *)((char *)buf + (size_t)i * BLK));
			if (pwrite(fd, buf, (size_t)o.len * BLK, (off_t)(o.start * BLK)) !=
			    (ssize_t)o.len * BLK)
				die("write to the device");
		}

		pthread_mutex_lock(&mu);
		busy[me] = 0;
		ninflight--;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static int do_write(uint64_t at)
{
	pthread_t t[THREADS];

	cutat = at;
	/* The region's prior content (a format leaves the QLC's data, in
	 * place) becomes zeroes: discard it all and flush before the run is
	 * recorded, so "never written" means zeroes and any earlier run's
	 * data found by the check is a violation. */
	uint64_t range[2] = {0, blocks * BLK};
	if (ioctl(fd, BLKDISCARD, range))
		die("discard (BLKDISCARD) of the region");
	if (fdatasync(fd))
		die("flush (fdatasync) of the device after the discard");
	put_log(1, 0, 0);
	put_log(2, 0, 0);
	put_log(0, 0, 0);	/* the run's header last: a check finds it only once the rest is reset */
	next_flush = interval(0);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			die("thread");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int do_check(void)
{
	struct logrec hdr, bnd, fl;
	uint64_t *last, s, nb, ok_flushed = 0, ok_newer = 0, zero = 0, bad = 0;
	void *buf, *want;

	if (!get_log(0, &hdr) || !get_log(1, &bnd) || !get_log(2, &fl) ||
	    hdr.seed != bnd.seed || hdr.seed != fl.seed) {
		fprintf(stderr, "pcut: no run recorded on the log device (was pcut write run?)\n");
		return 2;
	}
	seed = hdr.seed;
	blocks = hdr.blocks;
	s = fl.value;
	nb = bnd.value;
	printf("qs-vm: pcut: seed %" PRIu64 ", %" PRIu64 " blocks, %" PRIu64
	       " flushes completed, operations below %" PRIu64 " flushed, issue bound %" PRIu64 "\n",
	       seed, blocks, fl.count, s, nb);
	last = malloc(blocks * sizeof(*last));
	if (!last || posix_memalign(&buf, BLK, BLK) || posix_memalign(&want, BLK, BLK))
		die("memory");
	/* W_b + 1, 0 = never written. */
	memset(last, 0, blocks * sizeof(*last));
	for (uint64_t j = 0; j < s; j++) {
		struct op o = gen(j);
		for (uint32_t i = 0; i < o.len; i++)
			last[o.start + i] = j + 1;
	}
	for (uint64_t b = 0; b < blocks; b++) {
		const uint64_t *p = buf;
		uint64_t w = last[b], j;
		const char *why = NULL;

		if (pread(fd, buf, BLK, (off_t)(b * BLK)) != BLK)
			die("read of the device");
		int allzero = p[0] == 0 && !memcmp(buf, (char *)buf + 8, BLK - 8);
		if (allzero) {
			int okz = w == 0 || gen(w - 1).discard;
			for (j = s; !okz && j < nb; j++) {
				struct op o = gen(j);
				okz = o.discard && b >= o.start && b < o.start + o.len;
			}
			if (okz) {
				zero++;
				continue;
			}
			why = "zeroes, which no allowed operation left";
		} else if (p[0] != MAGIC || p[1] != seed || p[3] != b) {
			why = "foreign data (torn, misplaced, or another run's)";
		} else {
			j = p[2];
			struct op o = gen(j);
			fill(j, b, want);
			if (j >= nb || o.discard || b < o.start || b >= o.start + o.len)
				why = "names an operation that never wrote it";
			else if (memcmp(buf, want, BLK))
				why = "torn within 4 KiB";
			else if (w && j == w - 1) {
				ok_flushed++;
				continue;
			} else if (j >= s) {
				ok_newer++;
				continue;
			} else
				why = "older than the last write completed before the last flush";
		}
		if (bad++ < 10)
			printf("qs-vm: pcut: VIOLATION block %" PRIu64 ": %s (holds op %" PRIu64
			       ", allowed op %" PRId64 " or any from %" PRIu64 ")\n",
			       b, why, p[0] == MAGIC ? p[2] : 0, (int64_t)w - 1, s);
	}
	printf("qs-vm: pcut: %" PRIu64 " blocks checked: %" PRIu64 " the flushed write, %" PRIu64
	       " newer, %" PRIu64 " zeroes allowed, %" PRIu64 " violations\n",
	       blocks, ok_flushed, ok_newer, zero, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int wr = argc == 7 && !strcmp(argv[1], "write");

	if (!wr && !(argc == 4 && !strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: pcut write DEV LOGDEV SEED BLOCKS CUTAT\n"
				"       pcut check DEV LOGDEV\n");
		return 2;
	}
	fd = open(argv[2], (wr ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (fd < 0)
		die(argv[2]);
	logfd = open(argv[3], O_RDWR | O_DIRECT | O_DSYNC);
	if (logfd < 0)
		die(argv[3]);
	if (!wr)
		return do_check();
	seed = strtoull(argv[4], NULL, 0);
	blocks = strtoull(argv[5], NULL, 0);
	if (!blocks) {
		fprintf(stderr, "pcut: BLOCKS must be > 0\n");
		return 2;
	}
	return do_write(strtoull(argv[6], NULL, 0));
}
