/* SPDX-License-Identifier: MIT */
/* Temporary files and directories for the tests; see ttmp.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttmp.h"

static void ttmp_die(const char *what, const char *path)
{
	perror(path);
	fprintf(stderr, "ttmp: cannot create the temporary %s %s\n", what, path);
	abort();
}

void ttmp_file(char *path, size_t n, const char *tag, const char *suffix, const char *text)
{
	if (!suffix)
		suffix = "";
	if ((size_t)snprintf(path, n, "/tmp/qs_test_%s_XXXXXX%s", tag, suffix) >= n)
		ttmp_die("file (name too long)", path);
	int fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0)
		ttmp_die("file", path);
	size_t len = text ? strlen(text) : 0;
	if (len && write(fd, text, len) != (ssize_t)len)
		ttmp_die("file's contents", path);
	if (close(fd))
		ttmp_die("file's contents", path);
}

void ttmp_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		ttmp_die("file's contents", path);
}

int ttmp_stderr(int (*fn)(int, char **), char **argv, char **err)
{
	char path[64];
	int argc = 0;
	while (argv[argc])
		argc++;
	ttmp_file(path, sizeof(path), "stderr", NULL, NULL);
	fflush(stderr);
	int saved = dup(2), fd = open(path, O_WRONLY | O_TRUNC);
	if (saved < 0 || fd < 0)
		ttmp_die("stderr capture", path);
	dup2(fd, 2);
	close(fd);
	int rc = fn(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *f = fopen(path, "r");
	if (!f)
		ttmp_die("stderr capture", path);
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	unlink(path);
	if (!buf)
		ttmp_die("stderr capture (out of memory)", path);
	buf[len] = 0;
	*err = buf;
	return rc;
}

void ttmp_dir(char *path, size_t n, const char *tag)
{
	if ((size_t)snprintf(path, n, "/tmp/qs_test_%s_XXXXXX", tag) >= n || !mkdtemp(path))
		ttmp_die("directory", path);
}
