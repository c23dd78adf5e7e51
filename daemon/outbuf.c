/* SPDX-License-Identifier: MIT */
/* A text cursor over a caller's buffer; see outbuf.h. */
#include <stdarg.h>
#include <stdio.h>

#include "outbuf.h"

void qs_out_printf(struct qs_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->out + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos) {
		o->full = true;
		o->pos = o->len - 1; /* vsnprintf left a NUL there */
		return;
	}
	o->pos += (size_t)n;
}
