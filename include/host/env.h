/* SPDX-License-Identifier: MIT */
/*
 * qs_henv: the engine environment (include/qlcshape/env.h) of a real host:
 * CLOCK_MONOTONIC, one timer kept as a deadline the host loop waits for,
 * aligned heap memory from jemalloc (libc in the sanitizer build), and log
 * lines on stderr.
 *
 * The timer is not a kernel object: the loop asks qs_henv_timeout() how long
 * it may sleep and calls qs_henv_expired() after waking, which tells whether
 * to call qs_engine_timer(). That keeps the engine's one timer on the loop
 * thread with no extra fd or SQE.
 */
#ifndef QS_HOST_ENV_H
#define QS_HOST_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "qlcshape/env.h"

struct qs_henv {
	struct qs_env env; /* pass &henv->env to the engine */
	uint64_t deadline_ns; /* 0: no timer */
	enum qs_log_level max_level; /* lines above it are dropped */
	const char *prefix;	     /* "qlcshaped: " etc. */
};

/* Fill h; prefix must outlive it. */
void qs_henv_init(struct qs_henv *h, const char *prefix, enum qs_log_level max_level);

uint64_t qs_henv_now_ns(void);

/* How long the loop may wait: UINT64_MAX without a timer, 0 if it is due. */
uint64_t qs_henv_timeout(const struct qs_henv *h);

/* True once (and clears the deadline) when the timer is due. */
bool qs_henv_expired(struct qs_henv *h);

#endif
