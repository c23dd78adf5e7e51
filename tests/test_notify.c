/* SPDX-License-Identifier: MIT */
/*
 * sd_notify (daemon/notify.c) against a fake $NOTIFY_SOCKET: path and
 * abstract sockets, the environment checks, the watchdog schedule; then the
 * real daemon's notify sequence on a start that cannot finish (this host has
 * no ublk): STATUS= during the log format and recovery, and never READY=1 or
 * STOPPING=1, because the device never existed. The full sequence on a
 * device that does start (READY=1, WATCHDOG=1, STOPPING=1, STATUS= during
 * the drain, in that order) runs in the VM suite (tests/vm/guest.sh).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../daemon/notify.h"
#include "ttmp.h"

static char daemon_path[PATH_MAX];

struct sink {
	int fd;
	char dir[64];
	char path[128];
};

/* A datagram socket at a path in a fresh directory, as systemd makes one. */
static void sink_open(struct sink *s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	ttmp_dir(s->dir, sizeof(s->dir), "notify");
	snprintf(s->path, sizeof(s->path), "%s/notify", s->dir);
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(s->fd >= 0);
	strcpy(sa.sun_path, s->path);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
}

/* The next datagram, or "" if none is queued. */
static const char *sink_next(struct sink *s)
{
	static char buf[512];
	ssize_t n = recv(s->fd, buf, sizeof(buf) - 1, 0);

	if (n < 0) {
		assert_int_equal(errno, EAGAIN);
		n = 0;
	}
	buf[n] = 0;
	return buf;
}

static void sink_close(struct sink *s)
{
	close(s->fd);
	unlink(s->path);
	rmdir(s->dir);
}

static void env_clear(void)
{
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

static void test_no_socket_is_a_noop(void **state)
{
	struct qs_notify n;
	char err[256];

	(void)state;
	env_clear();
	setenv("WATCHDOG_USEC", "1000000", 1); /* ignored without a socket */
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), 0);
	assert_int_equal(qs_notify_send(&n, "READY=1"), 0);
	assert_int_equal(n.sent, 0);
	assert_true(qs_notify_timeout(&n, 0) == UINT64_MAX);
	assert_int_equal(qs_notify_watchdog(&n, UINT64_MAX / 2), 0);
	env_clear();
}

static void test_path_socket(void **state)
{
	struct qs_notify n;
	struct sink s;
	char err[256];

	(void)state;
	env_clear();
	sink_open(&s);
	setenv("NOTIFY_SOCKET", s.path, 1);
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), 0);
	assert_int_equal(qs_notify_send(&n, "STATUS=recovering the log"), 0);
	assert_int_equal(qs_notify_send(&n, "READY=1"), 0);
	assert_string_equal(sink_next(&s), "STATUS=recovering the log");
	assert_string_equal(sink_next(&s), "READY=1");
	assert_string_equal(sink_next(&s), "");
	assert_int_equal(n.sent, 2);
	/* The socket gone: the error comes back, nothing crashes. */
	sink_close(&s);
	assert_int_equal(qs_notify_send(&n, "STOPPING=1"), -ENOENT);
	env_clear();
}

static void test_abstract_socket(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct qs_notify n;
	char name[64], err[256], buf[64];
	socklen_t len;
	ssize_t r;
	int fd;

	(void)state;
	env_clear();
	snprintf(name, sizeof(name), "@qs-test-notify-%d", (int)getpid());
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), 0);
	assert_int_equal(qs_notify_send(&n, "READY=1"), 0);
	r = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_int_equal(r, 7);
	buf[r] = 0;
	assert_string_equal(buf, "READY=1");
	close(fd);
	env_clear();
}

static void test_bad_environment(void **state)
{
	static const char *const bad_usec[] = {"0", "-5", "abc", "10s", " 5", ""};
	struct qs_notify n;
	struct sink s;
	char err[256], longpath[200];
	size_t i;

	(void)state;
	env_clear();
	setenv("NOTIFY_SOCKET", "relative/socket", 1);
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NOTIFY_SOCKET='relative/socket'"));
	assert_int_equal(qs_notify_send(&n, "READY=1"), 0); /* off, no crash */
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	setenv("NOTIFY_SOCKET", longpath, 1);
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(n.sa_len, 0);

	sink_open(&s);
	setenv("NOTIFY_SOCKET", s.path, 1);
	for (i = 0; i < sizeof(bad_usec) / sizeof(bad_usec[0]); i++) {
		setenv("WATCHDOG_USEC", bad_usec[i], 1);
		/* An empty value is the same as none; the others are errors. */
		assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)),
				 *bad_usec[i] ? -EINVAL : 0);
		if (*bad_usec[i])
			assert_non_null(strstr(err, "WATCHDOG_USEC="));
		assert_true(qs_notify_timeout(&n, 0) == UINT64_MAX);
		/* The socket itself still works. */
		assert_int_equal(qs_notify_send(&n, "READY=1"), 0);
		assert_string_equal(sink_next(&s), "READY=1");
	}
	setenv("WATCHDOG_USEC", "1000000", 1);
	setenv("WATCHDOG_PID", "12x", 1);
	assert_int_equal(qs_notify_init(&n, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "WATCHDOG_PID='12x'"));
	assert_true(qs_notify_timeout(&n, 0) == UINT64_MAX);
	sink_close(&s);
	env_clear();
}

static void test_watchdog_schedule(void **state)
{
	const uint64_t t0 = 5000000000ull, half = 1000000000ull; /* USEC 2 s */
	struct qs_notify n;
	struct sink s;
	char err[256], pid[32];

	(void)state;
	env_clear();
	sink_open(&s);
	setenv("NOTIFY_SOCKET", s.path, 1);
	setenv("WATCHDOG_USEC", "2000000", 1);
	assert_int_equal(qs_notify_init(&n, t0, err, sizeof(err)), 0);
	assert_true(n.wd_interval_ns == half);
	/* Nothing due before half the interval; the loop may sleep till then. */
	assert_true(qs_notify_timeout(&n, t0) == half);
	assert_true(qs_notify_timeout(&n, t0 + 400000000) == half - 400000000);
	assert_int_equal(qs_notify_watchdog(&n, t0 + half - 1), 0);
	assert_string_equal(sink_next(&s), "");
	assert_true(qs_notify_timeout(&n, t0 + half) == 0);
	assert_int_equal(qs_notify_watchdog(&n, t0 + half), 1);
	assert_string_equal(sink_next(&s), "WATCHDOG=1");
	/* One ping per interval, counted from the ping, however late it was. */
	assert_int_equal(qs_notify_watchdog(&n, t0 + half + 1), 0);
	assert_int_equal(qs_notify_watchdog(&n, t0 + 3 * half + 7), 1);
	assert_true(qs_notify_timeout(&n, t0 + 3 * half + 7) == half);
	assert_string_equal(sink_next(&s), "WATCHDOG=1");
	assert_string_equal(sink_next(&s), "");

	/* Meant for another process: no pings. Ours: pings. */
	setenv("WATCHDOG_PID", "1", 1);
	assert_int_equal(qs_notify_init(&n, t0, err, sizeof(err)), 0);
	assert_true(qs_notify_timeout(&n, t0) == UINT64_MAX);
	assert_int_equal(qs_notify_watchdog(&n, t0 + 10 * half), 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(qs_notify_init(&n, t0, err, sizeof(err)), 0);
	assert_int_equal(qs_notify_watchdog(&n, t0 + half), 1);
	assert_string_equal(sink_next(&s), "WATCHDOG=1");
	sink_close(&s);
	env_clear();
}

/*
 * Run the daemon with args and a NOTIFY_SOCKET; collect what it sent,
 * '\n'-separated, into out. Returns its exit status.
 */
static int run_daemon(struct sink *s, const char *const *args, char *out, size_t outlen)
{
	char *argv[8];
	const char *m;
	size_t i, used = 0;
	int status;
	pid_t pid;

	argv[0] = daemon_path;
	for (i = 0; args[i]; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2); /* its log is not this test's output */
		setenv("NOTIFY_SOCKET", s->path, 1);
		setenv("WATCHDOG_USEC", "20000", 1);
		execv(daemon_path, argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	out[0] = 0;
	while (*(m = sink_next(s))) {
		/* Pings are checked in the VM, where the daemon lives long. */
		if (!strcmp(m, "WATCHDOG=1"))
			continue;
		used += (size_t)snprintf(out + used, outlen - used, "%s\n", m);
		assert_true(used < outlen);
	}
	return WEXITSTATUS(status);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_daemon_sequence_without_ublk(void **state)
{
	char conf[256], fast[256], qlc[256], sock[256], text[1024], got[2048];
	char link_path[256];
	const char *args_fmt[] = {"--config", conf, "--format-only", NULL};
	const char *args[] = {"--config", conf, NULL};
	struct sink s;
	int fd;

	(void)state;
	if (access(daemon_path, X_OK) != 0)
		fail_msg("%s: not built (make SAN=1 all tests)", daemon_path);
	if (access("/dev/ublk-control", F_OK) == 0)
		skip(); /* the start would succeed here; the VM suite covers that case */
	env_clear();
	sink_open(&s);
	snprintf(conf, sizeof(conf), "%s/qs.ini", s.dir);
	snprintf(fast, sizeof(fast), "%s/fast.img", s.dir);
	snprintf(qlc, sizeof(qlc), "%s/qlc.img", s.dir);
	snprintf(sock, sizeof(sock), "%s/ctl.sock", s.dir);
	fd = open(fast, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0 && ftruncate(fd, 64 << 20) == 0);
	close(fd);
	fd = open(qlc, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0 && ftruncate(fd, 256 << 20) == 0);
	close(fd);

	/* A config error: nothing at all reaches systemd. */
	write_file(conf, "[devices]\nfast = /nonexistent\nbogus_key = 1\n");
	assert_int_equal(run_daemon(&s, args, got, sizeof(got)), 2);
	assert_string_equal(got, "");
	/* --format-only without a log to format (the RAM test backend). */
	write_file(conf, "[daemon]\nbackend = ram\n");
	assert_int_equal(run_daemon(&s, args_fmt, got, sizeof(got)), 2);
	assert_string_equal(got, "");

	/* Issue 12: fast naming the QLC file through a link: --format-only
	 * wrote the log into the QLC file and exited 0. Refused before any
	 * write now; the QLC file still reads as zeroes. */
	snprintf(link_path, sizeof(link_path), "%s/fast-link.img", s.dir);
	assert_int_equal(symlink(qlc, link_path), 0);
	snprintf(text, sizeof(text),
		 "[devices]\nfast = %s\nqlc = %s\niu = 64K\n[daemon]\ncontrol_socket = %s\n",
		 link_path, qlc, sock);
	write_file(conf, text);
	assert_int_equal(run_daemon(&s, args_fmt, got, sizeof(got)), 1);
	assert_string_equal(got, "");
	{
		static char blk[1 << 20];
		fd = open(qlc, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(read(fd, blk, sizeof(blk)), (ssize_t)sizeof(blk));
		close(fd);
		for (size_t i = 0; i < sizeof(blk); i++)
			if (blk[i])
				fail_msg("the QLC file was written at byte %zu", i);
	}
	unlink(link_path);
	/* --format-only in passthrough: there is no log; it said "log formatted". */
	snprintf(text, sizeof(text),
		 "[devices]\nqlc = %s\niu = 64K\n[engine]\nmode = passthrough\n"
		 "[daemon]\ncontrol_socket = %s\n", qlc, sock);
	write_file(conf, text);
	assert_int_equal(run_daemon(&s, args_fmt, got, sizeof(got)), 2);
	assert_string_equal(got, "");

	snprintf(text, sizeof(text),
		 "[devices]\nfast = %s\nqlc = %s\niu = 64K\n[daemon]\nbackend = engine\n"
		 "control_socket = %s\n",
		 fast, qlc, sock);
	write_file(conf, text);
	/*
	 * --format-only: format, clean close, exit 0, no device; then a start
	 * recovers that log and fails at ublk: STATUS= for each step, and no
	 * READY=1, since no device ever existed.
	 */
	assert_int_equal(run_daemon(&s, args_fmt, got, sizeof(got)), 0);
	assert_string_equal(got, "STATUS=formatting the log\nSTATUS=log recovered\n");
	assert_int_equal(run_daemon(&s, args, got, sizeof(got)), 1);
	assert_string_equal(got, "STATUS=recovering the log\nSTATUS=log recovered\n");

	unlink(conf);
	unlink(fast);
	unlink(qlc);
	unlink(sock);
	sink_close(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_socket_is_a_noop),
		cmocka_unit_test(test_path_socket),
		cmocka_unit_test(test_abstract_socket),
		cmocka_unit_test(test_bad_environment),
		cmocka_unit_test(test_watchdog_schedule),
		cmocka_unit_test(test_daemon_sequence_without_ublk),
	};
	char self[PATH_MAX];

	(void)argc;
	/* The daemon of the same build: BUILD/tests/test_notify -> BUILD/qlcshaped. */
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(daemon_path, sizeof(daemon_path), "%s/../qlcshaped", dirname(self));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
