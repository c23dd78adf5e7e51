/* SPDX-License-Identifier: MIT */
/*
 * qs_out: a cursor that writes formatted text into a caller's buffer, for
 * the daemon's pure renderers (prom.c, stats.c). Writes stop at the end of
 * the buffer, which stays NUL-terminated, and the cursor remembers that
 * something did not fit, so a renderer checks once, at the end.
 */
#ifndef QS_OUTBUF_H
#define QS_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>

struct qs_out {
	char *out;
	size_t len, pos; /* len > 0: the caller checks for an empty buffer */
	bool full;	 /* something did not fit */
};

/* Append to o, printf-style; nothing once o is full. */
void qs_out_printf(struct qs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
