/* SPDX-License-Identifier: MIT */
/*
 * qs_ctld: the daemon's side of the control socket (protocol in
 * include/host/ctl.h), served on the loop like everything else: accept, recv,
 * send through io_uring, one request per connection. The commands' work is
 * the daemon's, through qs_ctld_ops.
 */
#ifndef QS_CONTROL_H
#define QS_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/uloop.h"
#include "qlcshape/engine.h"

typedef void (*qs_ctld_done)(void *token, int result, const char *msg);

enum qs_ctl_format {
	QS_CTL_TEXT,	   /* "stats" */
	QS_CTL_JSON,	   /* "stats json" */
	QS_CTL_PROMETHEUS, /* "stats prometheus": text exposition format */
	QS_CTL_STATE,	   /* "stats state": the engine's internal state (bug reports) */
};

struct qs_ctld_ops {
	/* Write the statistics in format fmt into out. 0 or -errno (message in out). */
	int (*stats)(void *ctx, enum qs_ctl_format fmt, char *out, size_t len);
	/* "NAME [k=v...]": switch the policy; describe the result in out. 0 or -errno. */
	int (*policy)(void *ctx, const char *args, char *out, size_t len);
	/*
	 * Start a drain; done(token, 0 or -errno, message) runs later, exactly
	 * once, on the loop thread. Returns 0; or 1 when there is nothing to
	 * do (answer in out); or -errno (message in out). done runs only after 0.
	 */
	int (*drain)(void *ctx, qs_ctld_done done, void *token, char *out, size_t len);
};

struct qs_ctld;

/*
 * Limits on what clients can hold (issue 12: 100 clients that never end
 * their line took every fd and spun the accept). A connection gets
 * QS_CTLD_IDLE_NS from accept to the end of its reply (a drain's wait does
 * not count); then it is answered "error: no complete request ..." and
 * closed. Past QS_CTLD_MAX_CONNS open connections a new client is answered
 * "error: ... try again" and closed at once. A failed accept for want of
 * fds or memory is retried after 10 ms, doubling up to 1 s, logged once.
 */
#define QS_CTLD_MAX_CONNS 16
#define QS_CTLD_IDLE_NS (10ull * 1000 * 1000 * 1000)

/* Other limits (0 = the default), for tests. */
void qs_ctld_set_limits(struct qs_ctld *c, unsigned max_conns, uint64_t idle_ns);

/*
 * Listen on path (an old socket file there is replaced; mode 0600) and serve
 * requests from loop. Returns 0 or -errno with a message in err.
 */
int qs_ctld_open(struct qs_ctld **out, struct qs_uloop *loop, const char *path,
		 const struct qs_ctld_ops *ops, void *ctx, char *err, size_t errlen);

/*
 * Close every connection and the socket, remove the socket file. Only once
 * the loop's ring is torn down (qs_uloop_exit): pending accepts, receives
 * and sends point into the structures freed here.
 */
void qs_ctld_close(struct qs_ctld *c);

/*
 * The arguments of "policy set": "NAME [key=value...]" (NAME fifo, sweep or
 * fullest; keys partial, hold_ms, start_pct, urgent_pct, idle_ms,
 * max_age_ms, pace_pct) applied over *p, which keeps the keys not given. 0 with *p
 * updated, or -EINVAL with *p unchanged and a message naming the word,
 * key or value and what is allowed in out. Any thread; reads args only.
 */
int qs_ctld_policy_parse(const char *args, struct qs_policy *p, char *out, size_t len);

#endif
