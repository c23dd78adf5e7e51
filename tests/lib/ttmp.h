/* SPDX-License-Identifier: MIT */
/*
 * Temporary files and directories for the tests, under /tmp, named
 * qs_test_TAG_XXXXXX (plus an optional suffix such as ".ini"), so a run
 * that dies leaves names that say which test made them. Failures abort:
 * a test cannot go on without its file. The caller owns what is created
 * and unlinks it.
 */
#ifndef QS_TTMP_H
#define QS_TTMP_H

#include <stddef.h>

/* A new file holding text (NULL: empty); its name into path (n bytes). */
void ttmp_file(char *path, size_t n, const char *tag, const char *suffix, const char *text);

/* Write text to path, replacing what it held. */
void ttmp_write(const char *path, const char *text);

/*
 * Call fn(argc, argv) (argv NULL-ended, argc counted here) with standard
 * error going to a temporary file; what it wrote into *err (the caller
 * frees it). Returns fn's result.
 */
int ttmp_stderr(int (*fn)(int, char **), char **argv, char **err);

/* A new, empty directory; its name into path (n bytes). */
void ttmp_dir(char *path, size_t n, const char *tag);

#endif
