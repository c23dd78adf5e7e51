/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the control protocol, served by the daemon's real server
 * (daemon/control.c) on a qs_uloop, its commands done the daemon's way over
 * an engine on RAM volumes (tests/lib): statistics rendered by
 * daemon/stats.c and daemon/prom.c, "policy set" parsed by
 * qs_ctld_policy_parse and applied with qs_engine_set_policy, drain through
 * qs_engine_drain.
 *
 * The input is up to FZ_CLIENTS requests separated by 0xff bytes; each is
 * sent raw by its own client, all connected at once, which then ends its
 * side (shutdown). Every client that sent a byte must get an answer within
 * FZ_WAIT_MS whose first line is "ok" or starts with "error: " and holds
 * no control bytes, DEL or invalid UTF-8 (the server writes them \xNN), and the server must then close the connection (one
 * that sent nothing is closed unanswered, as the server means to). The server, loop and engine live for the whole
 * run; each input starts from the default policy with a few blocks cached,
 * so that a drain has work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../daemon/control.h"
#include "../../daemon/prom.h"
#include "../../daemon/stats.h"
#include "fz.h"
#include "host/ctl.h"
#include "host/env.h"
#include "th.h"

#define FZ_CLIENTS 4
#define FZ_WAIT_MS 5000

struct fz_drain {
	qs_ctld_done done;
	void *token;
	bool busy;
};

static struct {
	bool ready;
	struct qs_uloop loop;
	struct qs_ctld *ctld;
	struct th h;
	struct fz_drain drain;
	char sock[108];
} fz;

static int fz_stats(void *ctx, enum qs_ctl_format fmt, char *out, size_t len)
{
	struct qs_engine_stats e;
	struct qs_prom_frontend fe = {0};
	struct qs_stats_view v = {.backend = "engine", .frontend = &fe, .engine = &e,
				  .interval_s = 1.0};

	qs_engine_get_stats(fz.h.e, &e);
	if (fmt == QS_CTL_PROMETHEUS) {
		struct qs_prom_input in = {
			.config = "fuzz", .backend = "engine", .iu_bytes = fz.h.conf.iu_bytes,
			.size_bytes = qs_engine_size(fz.h.e), .frontend = &fe, .engine = &e,
		};
		return qs_prom_render(&in, out, len);
	}
	return fmt == QS_CTL_JSON ? qs_stats_render_json(&v, out, len)
				  : qs_stats_render_text(&v, out, len);
}

static int fz_policy(void *ctx, const char *args, char *out, size_t len)
{
	struct qs_policy p;
	int ret;

	qs_engine_get_policy(fz.h.e, &p);
	ret = qs_ctld_policy_parse(args, &p, out, len);
	if (ret < 0)
		return ret;
	ret = qs_engine_set_policy(fz.h.e, &p);
	if (ret < 0) {
		snprintf(out, len, "engine refused the policy: %s", strerror(-ret));
		return ret;
	}
	snprintf(out, len, "policy %s start_pct=%u urgent_pct=%u\n",
		 qs_policy_order_name(p.order), p.start_pct, p.urgent_pct);
	return 0;
}

static void fz_drained(void *arg, int res)
{
	struct fz_drain *d = arg;
	d->busy = false;
	d->done(d->token, res, res < 0 ? "drain failed" : "drained\n");
}

static int fz_drain_start(void *ctx, qs_ctld_done done, void *token, char *out, size_t len)
{
	struct qs_engine_stats es;
	int ret;

	qs_engine_get_stats(fz.h.e, &es);
	if (fz.drain.busy || (!es.dirty_ius && !es.cached_blocks)) {
		snprintf(out, len, fz.drain.busy ? "a drain is running\n" : "nothing to drain\n");
		return 1;
	}
	fz.drain = (struct fz_drain){.done = done, .token = token, .busy = true};
	ret = qs_engine_drain(fz.h.e, fz_drained, &fz.drain);
	if (ret < 0) {
		fz.drain.busy = false;
		snprintf(out, len, "drain: %s", strerror(-ret));
	}
	return ret;
}

static const struct qs_ctld_ops fz_ops = {
	.stats = fz_stats, .policy = fz_policy, .drain = fz_drain_start,
};

static void fz_cleanup(void)
{
	qs_uloop_exit(&fz.loop);
	qs_ctld_close(fz.ctld);
	th_fini(&fz.h);
}

static void fz_setup(void)
{
	char err[256];
	int rc;

	if (th_init(&fz.h, (2 + 64) * 4096ull, 1ull << 20, 1))
		fz_fail("out of memory for the volumes");
	fz.h.conf.iu_bytes = 16384;
	rc = th_open(&fz.h, true);
	if (rc)
		fz_fail("engine format: %s", strerror(-rc));
	rc = qs_uloop_init(&fz.loop, 64);
	if (rc)
		fz_fail("qs_uloop_init: %s", strerror(-rc));
	snprintf(fz.sock, sizeof(fz.sock), "/tmp/qs_fuzz_ctl_%d.sock", (int)getpid());
	if (qs_ctld_open(&fz.ctld, &fz.loop, fz.sock, &fz_ops, NULL, err, sizeof(err)))
		fz_fail("qs_ctld_open: %s", err);
	atexit(fz_cleanup);
	fz.ready = true;
}

static int fz_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		fz_fail("socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fz.sock);
	/* The listen backlog takes it at once; the server accepts on the loop. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		fz_fail("connect %s: %s", fz.sock, strerror(errno));
	return fd;
}

struct fz_client {
	int fd;
	const uint8_t *req;
	size_t len, sent;
	bool shut, eof;
	char reply[QS_CTL_MAX_REPLY + 1];
	size_t got;
};

/* Move what can move without blocking; true once this client is done. */
static bool fz_client_pump(struct fz_client *k)
{
	while (k->sent < k->len) {
		ssize_t n = send(k->fd, k->req + k->sent, k->len - k->sent, MSG_NOSIGNAL);
		if (n > 0) {
			k->sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			break;
		k->sent = k->len; /* the server closed early: its answer is what counts */
	}
	if (k->sent == k->len && !k->shut) {
		shutdown(k->fd, SHUT_WR);
		k->shut = true;
	}
	for (;;) {
		char tmp[4096];
		ssize_t n = recv(k->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
		if (n > 0) {
			size_t room = sizeof(k->reply) - 1 - k->got, c = (size_t)n < room ? (size_t)n : room;
			memcpy(k->reply + k->got, tmp, c);
			k->got += c;
			k->reply[k->got] = 0;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			k->eof = true;
		break;
	}
	return k->eof;
}

/* Length of the character at p: 1 for ASCII, 2 to 4 for valid UTF-8, else 0. */
static size_t fz_utf8_len(const unsigned char *p)
{
	size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xf5 ? 0 : p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3
		 : p[0] >= 0xc2 ? 2 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_client k[FZ_CLIENTS];
	struct qs_policy pol;
	unsigned char blk[4096];
	int n = 0;

	if (!fz.ready)
		fz_setup();
	pol = fz.h.conf.policy;
	qs_engine_set_policy(fz.h.e, &pol);
	memset(blk, 0x5a, sizeof(blk));
	for (unsigned i = 0; i < 3; i++)
		if (th_io(&fz.h, 'w', (uint64_t)i * 8 * 4096, 4096, blk, 0))
			fz_fail("engine write failed");

	for (size_t i = 0; n < FZ_CLIENTS;) {
		const uint8_t *end = memchr(data + i, 0xff, size - i);
		size_t len = end ? (size_t)(end - (data + i)) : size - i;
		memset(&k[n], 0, sizeof(k[n]));
		k[n].req = data + i;
		k[n].len = len;
		k[n].fd = fz_connect();
		n++;
		if (!end)
			break;
		i += len + 1;
	}

	uint64_t deadline = qs_henv_now_ns() + FZ_WAIT_MS * 1000000ull;
	for (;;) {
		bool all = true;
		qs_uloop_run(&fz.loop, 1000000);
		for (int s = 0; s < 200 && th_step(&fz.h); s++)
			;
		for (int c = 0; c < n; c++)
			all &= fz_client_pump(&k[c]);
		if (all)
			break;
		if (qs_henv_now_ns() > deadline)
			fz_fail("no answer within %d ms to a client of %d", FZ_WAIT_MS, n);
	}
	for (int c = 0; c < n; c++) {
		close(k[c].fd);
		if (!k[c].len && !k[c].got)
			continue; /* connected and closed without a byte: no answer, by design */
		if (strcmp(k[c].reply, "ok") && strncmp(k[c].reply, "ok\n", 3) &&
		    strncmp(k[c].reply, "error: ", 7))
			fz_fail("client %d: the answer starts with neither 'ok' nor 'error: ': '%.80s'",
				c, k[c].reply);
		for (const unsigned char *p = (const unsigned char *)k[c].reply; *p && *p != '\n';) {
			size_t u = fz_utf8_len(p);
			if (*p < 0x20 || *p == 0x7f || !u)
				fz_fail("client %d: the answer's first line holds byte 0x%02x raw: "
					"'%.80s'", c, *p, k[c].reply);
			p += u;
		}
	}
	/* A drain still running (the engine had more to do) ends before the next input. */
	while (fz.drain.busy && th_step(&fz.h))
		;
	if (fz.drain.busy)
		fz_fail("a drain never completed");
	return 0;
}
