/* SPDX-License-Identifier: MIT */
/* Checks of the error messages the loaders write, shared by the harnesses. */
#ifndef QS_FZ_MSG_H
#define QS_FZ_MSG_H

#include <string.h>

#include "fz.h"

/*
 * A refusal must say something and name the file, and must not echo
 * control bytes of the input raw (issue 12, finding 11): what the user
 * reads is a line of text. what names the loader for the report.
 */
static inline void fz_check_err(const char *what, int rc, const char *err, const char *path)
{
	if (rc >= 0)
		return;
	if (!err[0])
		fz_fail("%s refused the input (%d) with an empty message", what, rc);
	if (path && !strstr(err, path))
		fz_fail("%s: the message does not name the file %s: %s", what, path, err);
	for (const unsigned char *p = (const unsigned char *)err; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			fz_fail("%s: the message holds control byte 0x%02x: %s", what, *p, err);
}

#endif
