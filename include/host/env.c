/* SPDX-License-Identifier: MIT */
/* qs_henv: real-clock engine environment (see header). */
#include "host/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef QS_NO_JEMALLOC
/* jemalloc's non-standard API: aligned allocation with size classes and
 * thread caches, and sized free. The sanitizer build (QS_NO_JEMALLOC)
 * uses libc so that ASan can track every allocation. */
#include <jemalloc/jemalloc.h>
#endif

uint64_t qs_henv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t henv_now(void *ctx)
{
	(void)ctx;
	return qs_henv_now_ns();
}

static void henv_timer_set(void *ctx, uint64_t deadline_ns)
{
	struct qs_henv *h = ctx;

	h->deadline_ns = deadline_ns;
}

static void *henv_alloc(void *ctx, size_t size, size_t align)
{
	(void)ctx;
	if (align < sizeof(void *))
		align = sizeof(void *);
#ifndef QS_NO_JEMALLOC
	return mallocx(size ? size : 1, MALLOCX_ALIGN(align));
#else
	void *p = NULL;

	if (posix_memalign(&p, align, size ? size : 1))
		return NULL;
	return p;
#endif
}

static void henv_free(void *ctx, void *p)
{
	(void)ctx;
#ifndef QS_NO_JEMALLOC
	if (p)
		dallocx(p, 0);
#else
	free(p);
#endif
}

static void henv_log(void *ctx, enum qs_log_level level, const char *msg)
{
	struct qs_henv *h = ctx;
	const char *tag = level <= QS_LOG_ERR ? "error: " : level == QS_LOG_WARN ? "warning: " : "";

	if (level > h->max_level)
		return;
	fprintf(stderr, "%sengine: %s%s\n", h->prefix, tag, msg);
}

static const struct qs_env_ops henv_ops = {
	.now_ns = henv_now,
	.timer_set = henv_timer_set,
	.alloc = henv_alloc,
	.free = henv_free,
	.log = henv_log,
};

void qs_henv_init(struct qs_henv *h, const char *prefix, enum qs_log_level max_level)
{
	h->env.ops = &henv_ops;
	h->env.ctx = h;
	h->deadline_ns = 0;
	h->max_level = max_level;
	h->prefix = prefix;
}

uint64_t qs_henv_timeout(const struct qs_henv *h)
{
	uint64_t now;

	if (!h->deadline_ns)
		return UINT64_MAX;
	now = qs_henv_now_ns();
	return h->deadline_ns > now ? h->deadline_ns - now : 0;
}

bool qs_henv_expired(struct qs_henv *h)
{
	if (!h->deadline_ns || qs_henv_now_ns() < h->deadline_ns)
		return false;
	h->deadline_ns = 0;
	return true;
}
