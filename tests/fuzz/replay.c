/* SPDX-License-Identifier: MIT */
/*
 * The replay driver of a fuzz harness (make test, gcc, no libFuzzer): runs
 * LLVMFuzzerTestOneInput once on every file of the harness's committed
 * corpus, tests/fuzz/corpus/NAME/ (NAME from the program's own name,
 * test_fuzz_NAME, relative to the source tree's top), or of the
 * directories or files given as arguments. A regression run: no mutation.
 * Exits 0 when every input ran (a finding aborts before), 1 when the corpus
 * cannot be read or is empty (so a missing corpus fails the test).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fz.h"


static int run_file(const char *path, unsigned long *n)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	/* Exactly the input's size, so ASan sees a read past its end. */
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fz_input_name = path;
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	fz_input_name = NULL;
	free(buf);
	(*n)++;
	return 0;
}

static int run_path(const char *path, unsigned long *n)
{
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path, n);
	struct dirent **ents;
	int k = scandir(path, &ents, NULL, alphasort), ret = 0;
	if (k < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < k; i++) {
		char p[4096];
		if (ents[i]->d_name[0] != '.' && !ret) {
			snprintf(p, sizeof(p), "%s/%s", path, ents[i]->d_name);
			ret = run_file(p, n);
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/'), *name;
	char def[512];
	unsigned long n = 0;
	int ret = 0;

	base = base ? base + 1 : argv[0];
	name = strncmp(base, "test_fuzz_", 10) ? base : base + 10;
	snprintf(def, sizeof(def), "tests/fuzz/corpus/%s", name);

	if (argc < 2)
		ret = run_path(def, &n);
	for (int i = 1; i < argc && !ret; i++)
		ret = run_path(argv[i], &n);
	if (!ret && n == 0) {
		fprintf(stderr, "fuzz replay %s: no inputs (run from the source tree's top)\n",
			name);
		ret = -1;
	}
	if (ret)
		return 1;
	printf("fuzz replay %s: %lu inputs, no finding\n", name, n);
	return 0;
}
