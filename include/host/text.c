/* SPDX-License-Identifier: MIT */
/* qs_text: file content made fit for a message (see header). */
#include "host/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t text_utf8_len(const unsigned char *p)
{
	size_t n = p[0] >= 0xf5 ? 0 : p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;

	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static const char *text_vis(char *dst, size_t n, const char *src, int keep)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t o = 0;

	while (*p && o + 5 < n) {
		size_t u = *p >= 0x80 ? text_utf8_len(p) : 0;

		if (u) {
			memcpy(dst + o, p, u);
			o += u;
			p += u;
		} else if (*p != keep && (*p < 0x20 || *p >= 0x7f)) {
			o += (size_t)snprintf(dst + o, n - o, "\\x%02x", *p++);
		} else {
			dst[o++] = (char)*p++;
		}
	}
	if (*p && o + 4 <= n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = 0;
	return dst;
}

const char *qs_text_vis(char *dst, size_t n, const char *src)
{
	return text_vis(dst, n, src, -1);
}

void qs_text_vis_msg(char *msg, size_t size)
{
	const unsigned char *p;
	char *copy;

	if (!msg || size < 8)
		return;
	msg[size - 1] = 0;
	for (p = (const unsigned char *)msg; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p >= 0x7f)
			break;
	if (!*p)
		return; /* the common case: nothing to rewrite */
	copy = strdup(msg);
	if (!copy) {
		/* No memory for the copy: blank the bytes instead. */
		for (char *q = msg; *q; q++)
			if ((unsigned char)*q < 0x20 && *q != '\n')
				*q = '?';
		return;
	}
	text_vis(msg, size, copy, '\n');
	free(copy);
}
