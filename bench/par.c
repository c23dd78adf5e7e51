/* SPDX-License-Identifier: MIT */
/* Tasks in forked children, results over pipes. See par.h. */
#include "par.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef QS_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define PAR_MSG_MAX 1024 /* longest error message of a task */

/* What a worker writes back for each task: this header, then out_size
 * bytes, then the message (msg_len <= PAR_MSG_MAX bytes, no NUL). */
struct par_hdr {
	int32_t rc;
	uint32_t msg_len;
};

/*
 * A worker: a child process that runs the tasks it is sent, one at a time.
 * Workers live for the whole qs_par_run, so that memory a task has touched
 * is warm for the next (a fresh process pays a page fault for every page
 * it touches, and the simulator touches tens of MiB a run).
 */
struct par_worker {
	pid_t pid;
	int cmd;	    /* task numbers to the worker; closed = no more */
	int res;	    /* results from the worker */
	size_t task;	    /* task under way, SIZE_MAX when idle */
	unsigned char *buf; /* the result as read so far (room for the longest) */
	size_t len;
};

unsigned qs_par_default_workers(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 with all n bytes, 0 at end of file before any, -1 on error or a
 * partial read. */
static int read_all(int fd, void *p, size_t n)
{
	unsigned char *c = p;
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, c + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 && got == 0 ? 0 : -1;
		got += (size_t)r;
	}
	return 1;
}

/* In the worker: run each task sent until the command pipe closes, then
 * leave without running the parent's exit handlers or flushing its stdio
 * buffers a second time. */
static void worker_main(int cmd, int res, qs_par_fn fn, void *ctx, size_t out_size)
{
#ifndef QS_NO_JEMALLOC
	/*
	 * A fresh arena: the parent's free memory is shared with this process
	 * copy on write, in 2 MiB pages (bench/main.c asks for them), and
	 * allocating from it would copy a huge page at the first write to each.
	 */
	unsigned arena;
	size_t asz = sizeof(arena);
	if (mallctl("arenas.create", &arena, &asz, NULL, 0) == 0) {
		mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
		mallctl("thread.arena", NULL, NULL, &arena, sizeof(arena));
	}
#endif
	void *out = malloc(out_size ? out_size : 1);
	if (!out)
		_exit(2); /* the parent reports a worker that left without a result */
	size_t i;
	int st = 0;
	while (!st && read_all(cmd, &i, sizeof(i)) == 1) {
		char msg[PAR_MSG_MAX + 1] = "";
		memset(out, 0, out_size);
		struct par_hdr h = {fn(ctx, i, out, msg, sizeof(msg)), 0};
		if (h.rc)
			h.msg_len = (uint32_t)strnlen(msg, PAR_MSG_MAX);
		fflush(stdout);
		fflush(stderr);
		if (write_all(res, &h, sizeof(h)) || write_all(res, out, out_size) ||
		    write_all(res, msg, h.msg_len))
			st = 2;
	}
	_exit(st);
}

/* Start worker k; wk[0..nwk) are the others (their pipes must not stay
 * open in the new process, or closing a command pipe would not end its
 * worker). */
static int spawn(struct par_worker *k, const struct par_worker *wk, unsigned nwk, qs_par_fn fn,
		 void *ctx, size_t out_size, char *err, size_t errlen)
{
	int c[2], r[2];
	if (pipe2(c, O_CLOEXEC) < 0) {
		int e = errno;
		snprintf(err, errlen, "worker: pipe: %s", strerror(e));
		return -e;
	}
	if (pipe2(r, O_CLOEXEC) < 0) {
		int e = errno;
		close(c[0]);
		close(c[1]);
		snprintf(err, errlen, "worker: pipe: %s", strerror(e));
		return -e;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(c[0]);
		close(c[1]);
		close(r[0]);
		close(r[1]);
		snprintf(err, errlen, "worker: fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		close(c[1]);
		close(r[0]);
		for (unsigned j = 0; j < nwk; j++) {
			if (wk[j].cmd >= 0)
				close(wk[j].cmd);
			if (wk[j].res >= 0)
				close(wk[j].res);
		}
		worker_main(c[0], r[1], fn, ctx, out_size);
	}
	close(c[0]);
	close(r[1]);
	*k = (struct par_worker){pid, c[1], r[0], SIZE_MAX, NULL, 0};
	return 0;
}

/* Hand task i to idle worker k. */
static int assign(struct par_worker *k, size_t i, char *err, size_t errlen)
{
	k->task = i;
	k->len = 0;
	if (write_all(k->cmd, &i, sizeof(i))) {
		snprintf(err, errlen, "task %zu: cannot send it to its worker: %s", i,
			 strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Why worker k is gone before finishing its task: reap it and say so. */
static int lost(struct par_worker *k, char *err, size_t errlen)
{
	int status = 0;
	while (waitpid(k->pid, &status, 0) < 0 && errno == EINTR)
		;
	k->pid = -1;
	if (WIFSIGNALED(status))
		snprintf(err, errlen, "task %zu: its process died of signal %d (%s)", k->task,
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(err, errlen, "task %zu: its process exited with status %d and %s", k->task,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 k->len ? "a partial result" : "no result");
	return -EIO;
}

/*
 * Read what worker k has sent. 1 when its task's result is complete (then
 * stored, or its error returned), 0 when more is to come, -errno when the
 * worker is lost.
 */
static int take(struct par_worker *k, void *outs, size_t out_size, char *err, size_t errlen,
		int *task_rc)
{
	struct par_hdr h = {0, 0};
	if (!k->buf && !(k->buf = malloc(sizeof(h) + out_size + PAR_MSG_MAX))) {
		snprintf(err, errlen, "out of memory for a task's result");
		return -ENOMEM;
	}
	/* the header first, then what it says follows */
	size_t want = sizeof(h);
	if (k->len >= sizeof(h)) {
		memcpy(&h, k->buf, sizeof(h));
		want += out_size + h.msg_len;
	}
	ssize_t r;
	do
		r = read(k->res, k->buf + k->len, want - k->len);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return lost(k, err, errlen);
	k->len += (size_t)r;
	if (k->len < sizeof(h))
		return 0;
	memcpy(&h, k->buf, sizeof(h));
	if (h.msg_len > PAR_MSG_MAX) {
		snprintf(err, errlen, "task %zu: a result message of %u bytes", k->task, h.msg_len);
		return -EIO;
	}
	if (k->len < sizeof(h) + out_size + h.msg_len)
		return 0;
	*task_rc = h.rc;
	if (h.rc)
		snprintf(err, errlen, "%.*s", (int)h.msg_len, (const char *)k->buf + sizeof(h) + out_size);
	else
		memcpy((unsigned char *)outs + k->task * out_size, k->buf + sizeof(h), out_size);
	return 1;
}

static void release(struct par_worker *k)
{
	if (k->cmd >= 0)
		close(k->cmd); /* an idle worker leaves at end of file */
	if (k->pid > 0) {
		if (k->task != SIZE_MAX)
			kill(k->pid, SIGKILL); /* busy with a task no one wants now */
		while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (k->res >= 0)
		close(k->res);
	free(k->buf);
	*k = (struct par_worker){-1, -1, -1, SIZE_MAX, NULL, 0};
}

int qs_par_run(size_t n, unsigned workers, qs_par_fn fn, void *ctx, void *outs,
	       size_t out_size, char *err, size_t errlen, size_t *failed)
{
	if (workers > n)
		workers = (unsigned)n;
	if (workers <= 1) {
		for (size_t i = 0; i < n; i++) {
			void *out = (unsigned char *)outs + i * out_size;
			memset(out, 0, out_size);
			int rc = fn(ctx, i, out, err, errlen);
			if (rc) {
				if (failed)
					*failed = i;
				return rc;
			}
		}
		return 0;
	}
	struct par_worker *wk = calloc(workers, sizeof(*wk));
	struct pollfd *pf = calloc(workers, sizeof(*pf));
	if (!wk || !pf) {
		free(wk);
		free(pf);
		snprintf(err, errlen, "out of memory for %u workers", workers);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < workers; k++)
		wk[k] = (struct par_worker){-1, -1, -1, SIZE_MAX, NULL, 0};
	size_t next = 0, done = 0, bad = 0;
	int rc = 0;
	for (unsigned k = 0; k < workers && !rc; k++) {
		rc = spawn(&wk[k], wk, workers, fn, ctx, out_size, err, errlen);
		if (!rc)
			rc = assign(&wk[k], next++, err, errlen);
		bad = next ? next - 1 : 0;
	}
	while (!rc && done < n) {
		unsigned np = 0;
		for (unsigned k = 0; k < workers; k++)
			if (wk[k].task != SIZE_MAX)
				pf[np++] = (struct pollfd){wk[k].res, POLLIN, (short)k};
		/* revents carries nothing in; the worker is found again by fd */
		if (poll(pf, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			snprintf(err, errlen, "poll: %s", strerror(-rc));
			break;
		}
		for (unsigned p = 0; p < np && !rc; p++) {
			if (!(pf[p].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct par_worker *k = NULL;
			for (unsigned q = 0; q < workers && !k; q++)
				if (wk[q].res == pf[p].fd)
					k = &wk[q];
			int task_rc = 0;
			int t = take(k, outs, out_size, err, errlen, &task_rc);
			if (t == 0)
				continue;
			bad = k->task;
			if (t < 0 || task_rc) {
				rc = t < 0 ? t : task_rc < 0 ? task_rc : -EIO;
				break;
			}
			done++;
			k->task = SIZE_MAX;
			if (next < n)
				rc = assign(k, next++, err, errlen);
			if (rc)
				bad = next - 1;
		}
	}
	for (unsigned k = 0; k < workers; k++)
		release(&wk[k]);
	free(wk);
	free(pf);
	if (rc && failed)
		*failed = bad;
	return rc;
}
