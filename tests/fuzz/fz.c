/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fz.h"

const char *fz_input_name;
static char fz_path[128];

static void fz_cleanup(void)
{
	if (fz_path[0])
		unlink(fz_path);
}

const char *fz_file(const uint8_t *data, size_t size, const char *suffix)
{
	if (!fz_path[0]) {
		int fd;
		snprintf(fz_path, sizeof(fz_path), "/tmp/qs_fuzz_XXXXXX%s", suffix);
		fd = mkstemps(fz_path, (int)strlen(suffix));
		if (fd < 0)
			fz_fail("mkstemps %s: %s", fz_path, strerror(errno));
		close(fd);
		atexit(fz_cleanup);
	}
	FILE *f = fopen(fz_path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		fz_fail("cannot write %s: %s", fz_path, strerror(errno));
	return fz_path;
}

void fz_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fuzz finding%s%s: ", fz_input_name ? " in " : "",
		fz_input_name ? fz_input_name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
