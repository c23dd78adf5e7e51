/* SPDX-License-Identifier: MIT */
/*
 * The table of every job option in docs/BENCH-OUTPUT.md is the code's
 * (issue 33): between the lines "<!-- job options: begin -->" and
 * "<!-- job options: end -->" the doc must hold, row for row, what
 * qs_job_opt gives (option, class, what it does here), so neither can
 * change without the other.
 *
 * test_job_opts --print writes the rows as they should be, to paste into
 * the doc after a change to bench/job.c's job_opts. The doc is read from
 * QS_SRCDIR (scripts/run-tests.sh sets it), else the current directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/job.h"

#define BEGIN "<!-- job options: begin -->"
#define END "<!-- job options: end -->"

static const char *srcdir(void)
{
	const char *d = getenv("QS_SRCDIR");
	return d && *d ? d : ".";
}

/* The doc's row of the i-th entry into buf; false past the table's end. */
static bool opt_row(size_t i, char *buf, size_t len)
{
	static const char *const cls[] = {"", "1 implemented", "2 no effect", "3 refused"};
	struct qs_job_opt_info o;
	if (!qs_job_opt(i, &o))
		return false;
	if (o.of)
		snprintf(buf, len, "| `%s` | %s | alias of `%s` |", o.key, cls[o.cls], o.of);
	else
		snprintf(buf, len, "| `%s`%s | %s | %s |", o.key, o.flag ? " (flag)" : "",
			 cls[o.cls], o.here);
	return true;
}

static void print_rows(FILE *out)
{
	char row[600];
	fprintf(out, "| option | class | here |\n|---|---|---|\n");
	for (size_t i = 0; opt_row(i, row, sizeof(row)); i++)
		fprintf(out, "%s\n", row);
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = 0;
}

static void test_doc_table(void **state)
{
	(void)state;
	char path[1024], line[1200], want[600];
	snprintf(path, sizeof(path), "%s/docs/BENCH-OUTPUT.md", srcdir());
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (set QS_SRCDIR to the source tree)", path);
	bool in = false, seen = false;
	size_t i = 0, header = 0;
	unsigned ln = 0;
	while (fgets(line, sizeof(line), f)) {
		ln++;
		chomp(line);
		if (!strcmp(line, BEGIN)) {
			in = seen = true;
			continue;
		}
		if (!in)
			continue;
		if (!strcmp(line, END))
			break;
		if (!line[0] || header < 2) {
			header += line[0] != 0;
			continue;
		}
		if (!opt_row(i, want, sizeof(want)))
			fail_msg("%s:%u: a row the code's table has not: %s", path, ln, line);
		if (strcmp(line, want)) {
			print_rows(stderr);
			fail_msg("%s:%u: the row is\n  %s\nwhere bench/job.c's table says\n  %s\n"
				 "(the table as it should be is above; test_job_opts --print)",
				 path, ln, line, want);
		}
		i++;
	}
	fclose(f);
	if (!seen)
		fail_msg("%s: no line '%s'", path, BEGIN);
	if (opt_row(i, want, sizeof(want)))
		fail_msg("%s: the doc's table ends before the code's row %s", path, want);
	printf("job options: %zu rows, the doc and the code agree\n", i);
}

/* The counts by class, for the reports (aliases not counted). */
static void test_counts(void **state)
{
	(void)state;
	struct qs_job_opt_info o;
	size_t n[4] = {0}, aliases = 0;
	for (size_t i = 0; qs_job_opt(i, &o); i++) {
		if (o.of)
			aliases++;
		else
			n[o.cls]++;
	}
	printf("job options: %zu implemented, %zu without effect, %zu refused; %zu aliases\n",
	       n[1], n[2], n[3], aliases);
	assert_true(n[1] > 50);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--print")) {
		print_rows(stdout);
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_table),
		cmocka_unit_test(test_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
