/* SPDX-License-Identifier: MIT */
/*
 * qs_notify: the daemon's side of systemd's sd_notify protocol, without
 * libsystemd. One datagram per message to the unix socket named by
 * $NOTIFY_SOCKET (a path, or an abstract name written with a leading '@'),
 * and the watchdog: when systemd sets $WATCHDOG_USEC (and $WATCHDOG_PID is
 * unset or ours), WATCHDOG=1 is due every half of that interval.
 *
 * The daemon pings from its one event loop, after each turn of it: a ping
 * then means the loop that serves every request and every engine
 * completion still turns. A thread that pings on its own would keep a hung
 * daemon alive.
 *
 * Not run by systemd (no $NOTIFY_SOCKET): every call is a no-op.
 */
#ifndef QS_NOTIFY_H
#define QS_NOTIFY_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct qs_notify {
	struct sockaddr_un sa;
	socklen_t sa_len;	/* 0: no $NOTIFY_SOCKET, nothing is sent */
	uint64_t wd_interval_ns; /* half of $WATCHDOG_USEC; 0: no watchdog */
	uint64_t wd_next_ns;	/* when the next WATCHDOG=1 is due */
	uint64_t sent;		/* datagrams sent, for tests and logs */
};

/*
 * Read $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID into n; the first
 * ping is due at now_ns + the ping interval. Call once at start-up.
 * Returns 0, or -EINVAL with a reason in err (the variable, its value and
 * what is allowed) when a variable is set but unusable; n is then still
 * usable, with that part off. The environment is left as it is: the
 * daemon starts no child that could inherit it by mistake.
 */
int qs_notify_init(struct qs_notify *n, uint64_t now_ns, char *err, size_t errlen);

/*
 * Send one message, e.g. "READY=1" or "STATUS=recovering the log". Returns
 * 0 (also when there is no socket to send to) or -errno from sendto. The
 * socket is opened per message: it is a handful of messages a minute.
 */
int qs_notify_send(struct qs_notify *n, const char *msg);

/*
 * How long the event loop may sleep before the next ping is due, in ns:
 * UINT64_MAX without a watchdog, 0 when due.
 */
uint64_t qs_notify_timeout(const struct qs_notify *n, uint64_t now_ns);

/*
 * Send WATCHDOG=1 if it is due at now_ns, and schedule the next one.
 * Call after every turn of the event loop. Returns 1 if a ping was sent,
 * 0 if none was due, -errno if sending failed (the next try is then at the
 * next interval: a failing socket must not turn into a busy loop).
 */
int qs_notify_watchdog(struct qs_notify *n, uint64_t now_ns);

#endif
