/* SPDX-License-Identifier: MIT */
/*
 * qs_ctl: the control socket's wire protocol and its blocking client.
 *
 * A unix stream socket (mode 0600, daemon.control_socket). One request per
 * connection: the client writes one line, the daemon answers and closes.
 *
 *   stats                     text: client I/O, cache, log, destage, QLC
 *   stats json                the same as one JSON object
 *   stats prometheus          the Prometheus text format (daemon/prom.h)
 *   policy set NAME [k=v...]  switch the destage policy (NAME: fifo, sweep,
 *                             fullest; keys: partial, hold_ms, start_pct,
 *                             urgent_pct, idle_ms, max_age_ms, pace_pct)
 *   drain                     destage everything; answers when done
 *
 * The answer's first line is "ok" or "error: MESSAGE"; the body follows.
 * The daemon side is daemon/control.c; the client here is shared with the
 * qlcshape tool (`qlcshape stats|policy|drain`).
 */
#ifndef QS_HOST_CTL_H
#define QS_HOST_CTL_H

#include <stddef.h>

#define QS_CTL_MAX_REQUEST 1024
#define QS_CTL_MAX_REPLY 16384

/*
 * Send request (one line, no newline needed) to the daemon at path and read
 * the whole answer into reply (NUL-terminated, truncated to len). Waits at
 * most timeout_ms for the answer (drain can take long: pass 0 for no limit).
 * Returns 0 when the daemon answered "ok", 1 when it answered "error: ...",
 * or -errno when it could not be reached (message in reply).
 */
int qs_ctl_call(const char *path, const char *request, char *reply, size_t len, int timeout_ms);

#endif
