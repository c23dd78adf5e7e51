/* SPDX-License-Identifier: MIT */
/*
 * The daemon's control socket server (daemon/control.c) against hostile
 * clients, in-process: the server on a qs_uloop, clients as non-blocking
 * sockets that the test pumps along with the loop (issue 12).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../daemon/control.h"
#include "host/ctl.h"
#include "host/env.h"
#include "ttmp.h"

struct fixture {
	struct qs_uloop loop;
	struct qs_ctld *ctld;
	char dir[64], sock[96];
};

static int fake_stats(void *ctx, enum qs_ctl_format fmt, char *out, size_t len)
{
	snprintf(out, len, "stats %d\n", (int)fmt);
	return 0;
}

static int fake_policy(void *ctx, const char *args, char *out, size_t len)
{
	snprintf(out, len, "policy %s\n", args);
	return 0;
}

static int fake_drain(void *ctx, qs_ctld_done done, void *token, char *out, size_t len)
{
	snprintf(out, len, "nothing to drain\n");
	return 1;
}

static const struct qs_ctld_ops ops = {
	.stats = fake_stats, .policy = fake_policy, .drain = fake_drain,
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];
	assert_non_null(f);
	assert_int_equal(qs_uloop_init(&f->loop, 64), 0);
	ttmp_dir(f->dir, sizeof(f->dir), "control");
	snprintf(f->sock, sizeof(f->sock), "%s/ctl.sock", f->dir);
	if (qs_ctld_open(&f->ctld, &f->loop, f->sock, &ops, NULL, err, sizeof(err)))
		fail_msg("qs_ctld_open: %s", err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	qs_uloop_exit(&f->loop);
	qs_ctld_close(f->ctld);
	rmdir(f->dir);
	free(f);
	return 0;
}

static int client(const struct fixture *f)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static void send_all(int fd, const void *buf, size_t n)
{
	assert_int_equal(send(fd, buf, n, MSG_NOSIGNAL), (ssize_t)n);
}

/*
 * Run the loop until fd's reply has ended (EOF) or timeout_ms passed;
 * the reply (NUL-terminated) into buf. Returns the callbacks the loop
 * ran, or -1 on timeout.
 */
static long pump_reply(struct fixture *f, int fd, char *buf, size_t len, int timeout_ms)
{
	uint64_t end = qs_henv_now_ns() + (uint64_t)timeout_ms * 1000000;
	size_t got = 0;
	long calls = 0;
	buf[0] = 0;
	while (qs_henv_now_ns() < end) {
		int n = qs_uloop_run(&f->loop, 5 * 1000 * 1000);
		if (n > 0)
			calls += n;
		ssize_t r = recv(fd, buf + got, len - 1 - got, MSG_DONTWAIT);
		if (r > 0) {
			got += (size_t)r;
			buf[got] = 0;
		} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			return calls;
		}
	}
	return -1;
}

/* The loop for ms milliseconds; the callbacks it ran. */
static long pump_for(struct fixture *f, int ms)
{
	uint64_t end = qs_henv_now_ns() + (uint64_t)ms * 1000000;
	long calls = 0;
	while (qs_henv_now_ns() < end) {
		int n = qs_uloop_run(&f->loop, 5 * 1000 * 1000);
		if (n > 0)
			calls += n;
	}
	return calls;
}

static void expect_reply(struct fixture *f, int fd, const char *want, int timeout_ms)
{
	char buf[1024];
	if (pump_reply(f, fd, buf, sizeof(buf), timeout_ms) < 0)
		fail_msg("no reply (and no EOF) within %d ms; wanted '%s', got '%s'",
			 timeout_ms, want, buf);
	print_message("reply: %s", buf);
	if (!strstr(buf, want))
		fail_msg("reply '%s' lacks '%s'", buf, want);
	close(fd);
}

static void test_good_request(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	send_all(fd, "stats json\n", 11);
	expect_reply(f, fd, "ok\nstats 1\n", 2000);
	fd = client(f);
	send_all(fd, "stats state\n", 12);
	expect_reply(f, fd, "ok\nstats 3\n", 2000);
}

/* "stat" and EOF: the request was never answered. */
static void test_eof_without_newline(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	send_all(fd, "stat", 4);
	shutdown(fd, SHUT_WR);
	expect_reply(f, fd, "error: the request ended (EOF) after 4 bytes without a newline",
		     2000);
}

/* A NUL before the newline hid the newline: no answer. */
static void test_nul_before_newline(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	send_all(fd, "st\0ats\n", 7);
	expect_reply(f, fd, "error: the request holds a NUL byte at offset 2", 2000);
}

/*
 * Control bytes in a request were echoed raw in the error (found by
 * tests/fuzz/fuzz_control.c): an escape sequence reached the user's
 * terminal. They are refused like a NUL, naming the byte and its offset.
 */
static void test_control_bytes(void **state)
{
	struct fixture *f = *state;
	int fd = client(f);
	send_all(fd, "he\x01llo\x1b[2J\n", 11);
	expect_reply(f, fd, "error: the request holds control byte 0x01 at offset 2", 2000);
	fd = client(f);
	send_all(fd, "policy set fifo\x1b[2J\n", 20);
	expect_reply(f, fd, "error: the request holds control byte 0x1b at offset 15", 2000);
	/* A tab separates words and a CR may end the line; quoted back in an
	 * error, a tab and invalid UTF-8 are written \xNN. */
	fd = client(f);
	send_all(fd, "policy set\tfifo\xf2\r\n", 19);
	expect_reply(f, fd, "unknown command 'policy set\\x09fifo\\xf2'", 2000);
	fd = client(f);
	send_all(fd, "stats\r\n", 7);
	expect_reply(f, fd, "ok\nstats 0\n", 2000);
}

static void test_too_long(void **state)
{
	struct fixture *f = *state;
	char big[QS_CTL_MAX_REQUEST + 8];
	memset(big, 'x', sizeof(big));
	int fd = client(f);
	send_all(fd, big, sizeof(big));
	expect_reply(f, fd, "error: request line longer than 1024 bytes", 2000);
}

/* A client that never ends its line is answered and closed in time. */
static void test_idle_timeout(void **state)
{
	struct fixture *f = *state;
	qs_ctld_set_limits(f->ctld, 0, 200 * 1000 * 1000);
	int fd = client(f);
	send_all(fd, "stats", 5);
	uint64_t t0 = qs_henv_now_ns();
	expect_reply(f, fd, "error: no complete request within 200 ms", 3000);
	uint64_t ms = (qs_henv_now_ns() - t0) / 1000000;
	print_message("answered after %llu ms\n", (unsigned long long)ms);
	assert_true(ms >= 150 && ms < 2000);
}

/* Past the cap a client is told so at once, and served once one leaves. */
static void test_connection_cap(void **state)
{
	struct fixture *f = *state;
	int held[4];
	qs_ctld_set_limits(f->ctld, 4, 500 * 1000 * 1000);
	for (int i = 0; i < 4; i++) {
		held[i] = client(f);
		send_all(held[i], "stats", 5);
	}
	pump_for(f, 50);
	int fd = client(f);
	expect_reply(f, fd, "error: 4 control connections are open", 1000);
	for (int i = 0; i < 4; i++)
		expect_reply(f, held[i], "error: no complete request within 500 ms", 3000);
	fd = client(f);
	send_all(fd, "stats\n", 6);
	expect_reply(f, fd, "ok\nstats 0\n", 2000);
}

/*
 * Out of fds, the accept was re-armed at once: a line per failure at 100%
 * CPU. With the back-off the loop runs a few callbacks and logs one line,
 * and the waiting client is served once fds are free again.
 */
static void test_emfile_backoff(void **state)
{
	struct fixture *f = *state;
	char log[64];
	ttmp_file(log, sizeof(log), "control_log", NULL, NULL);
	int logfd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
	int saved = dup(2);
	assert_true(logfd >= 0 && saved >= 0);
	int fd = client(f);
	send_all(fd, "stats\n", 6);

	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	int probe = dup(0); /* the lowest free fd: a limit there fails every new one */
	assert_true(probe >= 0);
	close(probe);
	fflush(stderr);
	dup2(logfd, 2);
	low = old;
	low.rlim_cur = (rlim_t)probe;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	long calls = pump_for(f, 300);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	char buf[256];
	long more = pump_reply(f, fd, buf, sizeof(buf), 3000);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(logfd);
	close(fd);
	print_message("%ld callbacks in 300 ms out of fds; then '%s'\n", calls, buf);
	assert_true(more >= 0);
	assert_non_null(strstr(buf, "ok\nstats 0\n"));
	assert_true(calls < 100);

	FILE *lf = fopen(log, "r");
	assert_non_null(lf);
	char line[512];
	int fails = 0, again = 0;
	while (fgets(line, sizeof(line), lf)) {
		print_message("log: %s", line);
		fails += strstr(line, "control socket accept: Too many open files") != NULL;
		again += strstr(line, "control socket accept works again") != NULL;
	}
	fclose(lf);
	unlink(log);
	assert_int_equal(fails, 1);
	assert_int_equal(again, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof_without_newline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_before_newline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emfile_backoff, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
