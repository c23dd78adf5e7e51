/* SPDX-License-Identifier: MIT */
/*
 * qlcshape environment: everything the engine needs from its host that is
 * not device I/O: time, one timer, memory and logging (compare OCF's
 * ocf_env.h). The engine reads no clock and owns no thread, so the same code
 * runs on the daemon's real clock, on the bench's virtual clock and in
 * deterministic tests.
 */
#ifndef QLCSHAPE_ENV_H
#define QLCSHAPE_ENV_H

#include <stddef.h>
#include <stdint.h>

enum qs_log_level {
	QS_LOG_ERR = 3,
	QS_LOG_WARN = 4,
	QS_LOG_INFO = 6,
	QS_LOG_DEBUG = 7,
};

struct qs_env_ops {
	/* Monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *ctx);
	/*
	 * Ask the host to call qs_engine_timer() once at or after deadline_ns
	 * (same clock as now_ns). A new call replaces the previous deadline;
	 * deadline_ns == 0 cancels it.
	 */
	void (*timer_set)(void *ctx, uint64_t deadline_ns);
	/* Aligned allocation; align is a power of two. NULL on failure. */
	void *(*alloc)(void *ctx, size_t size, size_t align);
	void (*free)(void *ctx, void *p);
	/* One line of log, without a trailing newline. May be NULL. */
	void (*log)(void *ctx, enum qs_log_level level, const char *msg);
};

struct qs_env {
	const struct qs_env_ops *ops;
	void *ctx;
};

#endif
