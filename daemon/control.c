/* SPDX-License-Identifier: MIT */
/* qs_ctld: control socket server on the loop (see header). */
#include "control.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "host/ctl.h"
#include "host/env.h"
#include "host/text.h"

/* Back-off after an accept that failed for want of a resource (EMFILE,
 * ENFILE, ENOBUFS, ENOMEM): re-arming at once spins at 100% CPU and logs
 * each failure, since the pending connection stays in the queue. */
#define CTLD_BACKOFF_MIN_NS (10ull * 1000 * 1000)
#define CTLD_BACKOFF_MAX_NS (1000ull * 1000 * 1000)

struct ctld_conn {
	struct qs_uop op; /* first */
	struct qs_utimer idle; /* from accept to the last byte of the reply */
	struct qs_ctld *c;
	struct ctld_conn *next, **pprev;
	int fd;
	bool sending;
	bool waiting; /* a drain is running for it */
	bool timed_out; /* the idle timer fired: recv ends with EOF (shutdown) */
	size_t in_len;
	char in[QS_CTL_MAX_REQUEST + 2];
	char *out;
	size_t out_len, out_done;
};

struct qs_ctld {
	struct qs_uop accept_op;
	struct qs_uloop *loop;
	const struct qs_ctld_ops *ops;
	void *ctx;
	int fd;
	char *path;
	struct ctld_conn *conns;
	unsigned nconns, max_conns;
	uint64_t idle_ns;
	struct qs_utimer backoff;  /* armed while accept waits out a failure */
	uint64_t backoff_ns;	   /* the next wait; 0 = accept is healthy */
	unsigned long failures;	   /* accept failures since it last worked */
};

static void ctld_conn_free(struct ctld_conn *k)
{
	qs_uloop_timer_cancel(k->c->loop, &k->idle);
	k->c->nconns--;
	*k->pprev = k->next;
	if (k->next)
		k->next->pprev = k->pprev;
	close(k->fd);
	free(k->out);
	free(k);
}

static void ctld_conn_io(struct qs_uop *op, int res);

/* Queue the next recv or send of k, or park it until an SQE is free. */
static void ctld_conn_arm(struct qs_uop *op, int unused)
{
	struct ctld_conn *k = (struct ctld_conn *)op;
	struct io_uring_sqe *sqe = qs_uloop_sqe(k->c->loop);

	(void)unused;
	if (!sqe) {
		qs_uloop_wait_sqe(k->c->loop, op);
		return;
	}
	if (k->sending)
		io_uring_prep_send(sqe, k->fd, k->out + k->out_done, k->out_len - k->out_done,
				   MSG_NOSIGNAL);
	else
		io_uring_prep_recv(sqe, k->fd, k->in + k->in_len, QS_CTL_MAX_REQUEST + 1 - k->in_len,
				   0);
	io_uring_sqe_set_data(sqe, op);
}

/*
 * Answer "ok\n<body>" or "error: <body>\n" and close after sending. An
 * error may quote the request: tabs and bytes that are not valid UTF-8 go
 * out as \xNN, as the config reader writes them.
 */
static void ctld_reply(struct ctld_conn *k, int result, const char *body)
{
	char vis[2048];
	size_t blen;

	if (result < 0) {
		snprintf(vis, sizeof(vis), "%s", body);
		qs_text_vis_msg(vis, sizeof(vis)); /* newlines kept */
		body = vis;
	}
	blen = strlen(body);
	k->out = malloc(blen + 16);
	if (!k->out) {
		ctld_conn_free(k);
		return;
	}
	if (result < 0)
		k->out_len = (size_t)sprintf(k->out, "error: %s%s", body,
					     blen && body[blen - 1] == '\n' ? "" : "\n");
	else
		k->out_len = (size_t)sprintf(k->out, "ok\n%s", body);
	k->out_done = 0;
	k->sending = true;
	/* A fresh window for the reply (a drain may have taken long). */
	qs_uloop_timer_set(k->c->loop, &k->idle, qs_henv_now_ns() + k->c->idle_ns);
	ctld_conn_arm(&k->op, 0);
}

/*
 * The connection's time is up. A recv or send of it is in the kernel and
 * points at k, so k is not freed here: shutdown ends the recv with EOF
 * (answered as a timeout in ctld_conn_io) or fails the send (freed there).
 */
static void ctld_idle_fire(struct qs_utimer *t)
{
	struct ctld_conn *k = (struct ctld_conn *)((char *)t - offsetof(struct ctld_conn, idle));

	if (k->waiting)
		return;
	k->timed_out = true;
	shutdown(k->fd, k->sending ? SHUT_RDWR : SHUT_RD);
}

static void ctld_drain_done(void *token, int result, const char *msg)
{
	struct ctld_conn *k = token;

	k->waiting = false;
	ctld_reply(k, result, msg);
}

static void ctld_handle(struct ctld_conn *k, char *nl)
{
	struct qs_ctld *c = k->c;
	char *line = k->in;
	char *out = malloc(QS_CTL_MAX_REPLY);
	int ret;

	if (!out) {
		ctld_conn_free(k);
		return;
	}
	out[0] = 0;
	*nl = 0;
	if (nl > line && nl[-1] == '\r')
		nl[-1] = 0;
	while (*line == ' ')
		line++;
	if (!strcmp(line, "stats")) {
		ret = c->ops->stats(c->ctx, QS_CTL_TEXT, out, QS_CTL_MAX_REPLY);
	} else if (!strcmp(line, "stats json")) {
		ret = c->ops->stats(c->ctx, QS_CTL_JSON, out, QS_CTL_MAX_REPLY);
	} else if (!strcmp(line, "stats prometheus")) {
		ret = c->ops->stats(c->ctx, QS_CTL_PROMETHEUS, out, QS_CTL_MAX_REPLY);
	} else if (!strcmp(line, "stats state")) {
		ret = c->ops->stats(c->ctx, QS_CTL_STATE, out, QS_CTL_MAX_REPLY);
	} else if (!strncmp(line, "policy set ", 11)) {
		ret = c->ops->policy(c->ctx, line + 11, out, QS_CTL_MAX_REPLY);
	} else if (!strcmp(line, "drain")) {
		ret = c->ops->drain(c->ctx, ctld_drain_done, k, out, QS_CTL_MAX_REPLY);
		if (ret == 0) {
			k->waiting = true;
			free(out);
			return;
		}
		if (ret > 0)
			ret = 0; /* answered at once */
	} else {
		snprintf(out, QS_CTL_MAX_REPLY,
			 "unknown command '%.64s'; commands: stats [json|prometheus|state], policy set NAME "
			 "[key=value...], drain",
			 line);
		ret = -EINVAL;
	}
	ctld_reply(k, ret, out);
	free(out);
}

static void ctld_conn_io(struct qs_uop *op, int res)
{
	struct ctld_conn *k = (struct ctld_conn *)op;

	/* EOF before a newline (the peer shut its side down, or the idle
	 * timer shut ours) is answered, since the peer may still read; a
	 * client that connected and closed without a byte is not. */
	if (res <= 0 && !k->sending && (res == 0 || k->timed_out) &&
	    (k->timed_out || k->in_len)) {
		char msg[160];
		if (k->timed_out)
			snprintf(msg, sizeof(msg), "no complete request within %llu ms; "
				 "end the request with a newline",
				 (unsigned long long)(k->c->idle_ns / 1000000));
		else
			snprintf(msg, sizeof(msg), "the request ended (EOF) after %zu bytes "
				 "without a newline; end it with '\\n'", k->in_len);
		ctld_reply(k, -EINVAL, msg);
		return;
	}
	if (res <= 0) {
		/* Peer gone (or error) before the exchange finished. */
		ctld_conn_free(k);
		return;
	}
	if (k->sending) {
		k->out_done += (size_t)res;
		if (k->out_done < k->out_len)
			ctld_conn_arm(op, 0);
		else
			ctld_conn_free(k);
		return;
	}
	k->in_len += (size_t)res;
	k->in[k->in_len] = 0;
	/* Searched by length, not as a string: a NUL would hide the newline
	 * after it and leave the request unanswered until the timeout. */
	char *nl = memchr(k->in, '\n', k->in_len);
	char *nul = memchr(k->in, 0, nl ? (size_t)(nl - k->in) : k->in_len);
	if (nul) {
		char msg[96];
		snprintf(msg, sizeof(msg), "the request holds a NUL byte at offset %zu; "
			 "requests are text lines", (size_t)(nul - k->in));
		ctld_reply(k, -EINVAL, msg);
		return;
	}
	if (nl) {
		/* Other control bytes would reach the user's terminal in the
		 * error that echoes the line; a tab separates words, a CR may
		 * end the line. */
		for (char *p = k->in; p < nl; p++) {
			unsigned char b = (unsigned char)*p;
			if ((b < 0x20 && b != '\t' && !(b == '\r' && p + 1 == nl)) || b == 0x7f) {
				char msg[112];
				snprintf(msg, sizeof(msg), "the request holds control byte 0x%02x at "
					 "offset %zu; requests are text lines", b,
					 (size_t)(p - k->in));
				ctld_reply(k, -EINVAL, msg);
				return;
			}
		}
		ctld_handle(k, nl);
		return;
	}
	if (k->in_len > QS_CTL_MAX_REQUEST) {
		char msg[96];
		snprintf(msg, sizeof(msg), "request line longer than %d bytes",
			 QS_CTL_MAX_REQUEST);
		ctld_reply(k, -E2BIG, msg);
		return;
	}
	ctld_conn_arm(op, 0);
}

static void ctld_accept_arm(struct qs_uop *op, int unused)
{
	struct qs_ctld *c = (struct qs_ctld *)op;
	struct io_uring_sqe *sqe = qs_uloop_sqe(c->loop);

	(void)unused;
	if (!sqe) {
		qs_uloop_wait_sqe(c->loop, op);
		return;
	}
	io_uring_prep_accept(sqe, c->fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data(sqe, op);
}

static void ctld_backoff_fire(struct qs_utimer *t)
{
	struct qs_ctld *c = (struct qs_ctld *)((char *)t - offsetof(struct qs_ctld, backoff));

	ctld_accept_arm(&c->accept_op, 0);
}

/* Refuse a client over the cap with an answer, not a hang: the reply is
 * short and the socket new, so a non-blocking send takes all of it. */
static void ctld_refuse(struct qs_ctld *c, int fd)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "error: %u control connections are open, the "
			 "most served at once; try again\n", c->nconns);

	if (send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* nothing more to do for it */
	}
	close(fd);
}

static void ctld_accepted(struct qs_uop *op, int res)
{
	struct qs_ctld *c = (struct qs_ctld *)op;
	struct ctld_conn *k;

	if (res >= 0) {
		if (c->failures)
			fprintf(stderr, "qlcshaped: control socket accept works again "
				"(%lu failures)\n", c->failures);
		c->failures = 0;
		c->backoff_ns = 0;
		k = c->nconns < c->max_conns ? calloc(1, sizeof(*k)) : NULL;
		if (!k) {
			ctld_refuse(c, res); /* over the cap (or out of memory) */
		} else {
			k->c = c;
			k->fd = res;
			k->op.done = ctld_conn_io;
			k->op.retry = ctld_conn_arm;
			k->idle.fire = ctld_idle_fire;
			k->next = c->conns;
			if (k->next)
				k->next->pprev = &k->next;
			k->pprev = &c->conns;
			c->conns = k;
			c->nconns++;
			qs_uloop_timer_set(c->loop, &k->idle, qs_henv_now_ns() + c->idle_ns);
			ctld_conn_arm(&k->op, 0);
		}
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
		/* The client stays queued; try again later, and say so once. */
		if (!c->failures++)
			fprintf(stderr, "qlcshaped: control socket accept: %s; retrying every "
				"%llu ms up to %llu ms while it lasts (%u connections open)\n",
				strerror(-res),
				(unsigned long long)(CTLD_BACKOFF_MIN_NS / 1000000),
				(unsigned long long)(CTLD_BACKOFF_MAX_NS / 1000000), c->nconns);
		c->backoff_ns = c->backoff_ns ? c->backoff_ns * 2 : CTLD_BACKOFF_MIN_NS;
		if (c->backoff_ns > CTLD_BACKOFF_MAX_NS)
			c->backoff_ns = CTLD_BACKOFF_MAX_NS;
		qs_uloop_timer_set(c->loop, &c->backoff, qs_henv_now_ns() + c->backoff_ns);
		return;
	} else if (res != -EINTR && res != -ECONNABORTED) {
		fprintf(stderr, "qlcshaped: control socket accept: %s\n", strerror(-res));
	}
	ctld_accept_arm(op, 0);
}

void qs_ctld_set_limits(struct qs_ctld *c, unsigned max_conns, uint64_t idle_ns)
{
	c->max_conns = max_conns ? max_conns : QS_CTLD_MAX_CONNS;
	c->idle_ns = idle_ns ? idle_ns : QS_CTLD_IDLE_NS;
}

int qs_ctld_open(struct qs_ctld **out, struct qs_uloop *loop, const char *path,
		 const struct qs_ctld_ops *ops, void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct qs_ctld *c;
	int ret;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: control socket path longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		return -ENOMEM;
	}
	c->loop = loop;
	c->ops = ops;
	c->ctx = ctx;
	c->accept_op.done = ctld_accepted;
	c->accept_op.retry = ctld_accept_arm;
	c->backoff.fire = ctld_backoff_fire;
	qs_ctld_set_limits(c, 0, 0);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto fail;
	/* A stale socket from a previous run would make bind fail. */
	unlink(path);
	{
		/* Created 0600 from the start: no window with wider permissions. */
		mode_t old = umask(0177);
		int b = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));

		umask(old);
		if (b < 0 || listen(c->fd, 16) < 0)
			goto fail;
	}
	ctld_accept_arm(&c->accept_op, 0);
	*out = c;
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "%s: control socket: %s", path, strerror(errno));
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c);
	return ret;
}

void qs_ctld_close(struct qs_ctld *c)
{
	if (!c)
		return;
	qs_uloop_timer_cancel(c->loop, &c->backoff);
	while (c->conns)
		ctld_conn_free(c->conns);
	close(c->fd);
	unlink(c->path);
	free(c->path);
	free(c);
}

int qs_ctld_policy_parse(const char *args, struct qs_policy *pol, char *out, size_t len)
{
	struct qs_policy p = *pol;
	char buf[QS_CTL_MAX_REQUEST], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", args);
	tok = strtok_r(buf, " \t", &save);
	if (!tok || qs_policy_parse_order(tok, &p.order)) {
		snprintf(out, len, "policy name '%s': expected fifo, sweep or fullest",
			 tok ? tok : "");
		return -EINVAL;
	}
	while ((tok = strtok_r(NULL, " \t", &save))) {
		static const struct {
			const char *key;
			size_t off;
			unsigned long max;
		} keys[] = {
			{"hold_ms", offsetof(struct qs_policy, hold_ms), 3600000},
			{"start_pct", offsetof(struct qs_policy, start_pct), 100},
			{"urgent_pct", offsetof(struct qs_policy, urgent_pct), 100},
			{"idle_ms", offsetof(struct qs_policy, idle_ms), 86400000},
			{"max_age_ms", offsetof(struct qs_policy, max_age_ms), 86400000},
			{"pace_pct", offsetof(struct qs_policy, pace_pct), 99},
		};
		char *eq = strchr(tok, '='), *end;
		unsigned long v;
		size_t i;

		if (!eq) {
			snprintf(out, len, "'%s': expected key=value", tok);
			return -EINVAL;
		}
		*eq++ = 0;
		if (!strcmp(tok, "partial")) {
			if (!strcmp(eq, "fill"))
				p.partial = QS_PARTIAL_FILL;
			else if (!strcmp(eq, "hold"))
				p.partial = QS_PARTIAL_HOLD;
			else {
				snprintf(out, len, "partial = '%s': expected fill or hold", eq);
				return -EINVAL;
			}
			continue;
		}
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(tok, keys[i].key))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			snprintf(out, len, "unknown key '%s'; keys: partial, hold_ms, start_pct, "
				 "urgent_pct, idle_ms, max_age_ms, pace_pct", tok);
			return -EINVAL;
		}
		errno = 0;
		v = strtoul(eq, &end, 10);
		if (!*eq || *end || errno || v > keys[i].max) {
			snprintf(out, len, "%s = '%s': expected an integer in 0..%lu", tok, eq,
				 keys[i].max);
			return -EINVAL;
		}
		*(uint32_t *)((char *)&p + keys[i].off) = (uint32_t)v;
	}
	if (p.start_pct > p.urgent_pct) {
		snprintf(out, len, "start_pct %u > urgent_pct %u", p.start_pct, p.urgent_pct);
		return -EINVAL;
	}
	*pol = p;
	return 0;
}
