/* SPDX-License-Identifier: MIT */
/*
 * qs_par_run: every task's output lands at its index whatever the number
 * of workers (outputs larger than a pipe's buffer included), the first
 * failure stops the rest with its own message, and a child that dies or
 * leaves without a result is an error naming the task, never a result.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../bench/par.h"

#define OUT_WORDS (48 * 1024) /* 192 KiB: three times a pipe's buffer */

struct ctx {
	size_t fail_at;	 /* task that returns -EINVAL, or SIZE_MAX */
	size_t kill_at;	 /* task whose process kills itself, or SIZE_MAX */
	size_t quit_at;	 /* task whose process exits without a result, or SIZE_MAX */
	const char *tag; /* set before the run: a child may point at it */
};

static int task(void *arg, size_t i, void *out, char *err, size_t errlen)
{
	struct ctx *c = arg;
	uint32_t *w = out;
	if (i == c->fail_at) {
		snprintf(err, errlen, "task %zu refused", i);
		return -EINVAL;
	}
	if (i == c->kill_at)
		raise(SIGKILL);
	if (i == c->quit_at)
		_exit(0);
	for (size_t k = 0; k < OUT_WORDS; k++)
		w[k] = (uint32_t)(i * 1000003u + k);
	memcpy(&w[0], &c->tag, sizeof(c->tag)); /* a pointer made before the run */
	return 0;
}

static struct ctx ctx_ok(void)
{
	return (struct ctx){SIZE_MAX, SIZE_MAX, SIZE_MAX, "tag"};
}

static void test_outputs_in_place(void **st)
{
	(void)st;
	const size_t n = 7, sz = OUT_WORDS * sizeof(uint32_t);
	static const unsigned workers[] = {1, 2, 3, 8};
	for (size_t wi = 0; wi < sizeof(workers) / sizeof(workers[0]); wi++) {
		struct ctx c = ctx_ok();
		uint32_t *outs = malloc(n * sz);
		assert_non_null(outs);
		memset(outs, 0xab, n * sz);
		char err[256] = "";
		assert_int_equal(qs_par_run(n, workers[wi], task, &c, outs, sz, err, sizeof(err),
					    NULL), 0);
		for (size_t i = 0; i < n; i++) {
			const uint32_t *w = outs + i * OUT_WORDS;
			const char *tag;
			memcpy(&tag, &w[0], sizeof(tag));
			assert_ptr_equal(tag, c.tag);
			for (size_t k = 2; k < OUT_WORDS; k++)
				assert_int_equal(w[k], (uint32_t)(i * 1000003u + k));
		}
		free(outs);
	}
}

static void check_error(struct ctx c, unsigned workers, int want_rc, size_t want_task,
			const char *want_msg)
{
	const size_t n = 6, sz = OUT_WORDS * sizeof(uint32_t);
	void *outs = calloc(n, sz);
	assert_non_null(outs);
	char err[256] = "";
	size_t failed = SIZE_MAX;
	int rc = qs_par_run(n, workers, task, &c, outs, sz, err, sizeof(err), &failed);
	assert_int_equal(rc, want_rc);
	assert_int_equal(failed, want_task);
	if (!strstr(err, want_msg))
		fail_msg("message '%s' lacks '%s'", err, want_msg);
	free(outs);
}

static void test_failure_stops(void **st)
{
	(void)st;
	struct ctx c = ctx_ok();
	c.fail_at = 3;
	check_error(c, 1, -EINVAL, 3, "task 3 refused");
	check_error(c, 2, -EINVAL, 3, "task 3 refused");
	check_error(c, 4, -EINVAL, 3, "task 3 refused");
}

static void test_child_dies(void **st)
{
	(void)st;
	struct ctx c = ctx_ok();
	c.kill_at = 2;
	check_error(c, 2, -EIO, 2, "task 2: its process died of signal 9");
	c = ctx_ok();
	c.quit_at = 4;
	check_error(c, 3, -EIO, 4, "task 4: its process exited with status 0 and no result");
}

static void test_nothing_to_do(void **st)
{
	(void)st;
	struct ctx c = ctx_ok();
	char err[64] = "";
	assert_int_equal(qs_par_run(0, 4, task, &c, NULL, 16, err, sizeof(err), NULL), 0);
	assert_true(qs_par_default_workers() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outputs_in_place),
		cmocka_unit_test(test_failure_stops),
		cmocka_unit_test(test_child_dies),
		cmocka_unit_test(test_nothing_to_do),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
