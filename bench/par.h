/* SPDX-License-Identifier: MIT */
/*
 * Independent tasks run side by side, each in a forked child process.
 *
 * The bench's simulated runs share nothing once the drive is filled: each
 * clones the filled drive and opens its own engine on its own simulator.
 * Forking after the fill gives every child that state for free (copy on
 * write), and a child's result is plain data written back over a pipe, so
 * the figures are the same whatever the number of workers; only the
 * wall-clock time changes. Real-time runs (emu, dev) must not use this:
 * they share devices and time.
 */
#ifndef QS_BENCH_PAR_H
#define QS_BENCH_PAR_H

#include <stddef.h>

/*
 * One task: fill out (out_size bytes, zeroed) and return 0, or return
 * -errno with a message in err. Runs in a child process when workers > 1:
 * it may use anything set up before qs_par_run, but only out and err come
 * back (pointers in out must point at memory that existed before the
 * call). Must not exit.
 */
typedef int (*qs_par_fn)(void *ctx, size_t i, void *out, char *err, size_t errlen);

/*
 * Run tasks 0..n-1 with up to workers at once and put task i's output at
 * outs + i * out_size. workers <= 1 runs them in order in this process.
 * Stops at the first task that fails (the others still running are
 * killed) and returns its -errno with its message in err; a child that
 * dies or cannot be started is -EIO / -errno with a message naming the
 * task. *failed is set to the failed task's index when failed != NULL.
 * stdout and stderr are flushed before each fork.
 */
int qs_par_run(size_t n, unsigned workers, qs_par_fn fn, void *ctx, void *outs,
	       size_t out_size, char *err, size_t errlen, size_t *failed);

/* Default number of workers: the CPUs this process may run on (>= 1). */
unsigned qs_par_default_workers(void);

#endif
