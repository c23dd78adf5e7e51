/* SPDX-License-Identifier: MIT */
/* The sd_notify protocol without libsystemd; see notify.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify.h"

/* Parse a decimal without sign, leading or trailing junk. */
static int nt_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int qs_notify_init(struct qs_notify *n, uint64_t now_ns, char *err, size_t errlen)
{
	const char *path = getenv("NOTIFY_SOCKET");
	const char *usec = getenv("WATCHDOG_USEC");
	const char *wpid = getenv("WATCHDOG_PID");
	uint64_t us, pid;
	size_t len;
	int ret = 0;

	memset(n, 0, sizeof(*n));
	if (errlen)
		err[0] = 0;
	if (path && *path) {
		len = strlen(path);
		if (len >= sizeof(n->sa.sun_path) || (path[0] != '/' && path[0] != '@')) {
			snprintf(err, errlen,
				 "NOTIFY_SOCKET='%s': not an absolute path or '@' abstract name "
				 "shorter than %zu bytes; no notifications are sent",
				 path, sizeof(n->sa.sun_path));
			ret = -EINVAL;
		} else {
			n->sa.sun_family = AF_UNIX;
			memcpy(n->sa.sun_path, path, len);
			/* An abstract name has no terminating NUL in its length. */
			if (path[0] == '@')
				n->sa.sun_path[0] = 0;
			n->sa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
		}
	}
	if (!usec || !*usec || !n->sa_len)
		return ret;
	/* Meant for another process (a parent that exec'd us keeps it)? */
	if (wpid && *wpid) {
		if (nt_parse_u64(wpid, &pid) || pid == 0) {
			snprintf(err, errlen,
				 "WATCHDOG_PID='%s': not a process ID; no watchdog pings are sent",
				 wpid);
			return -EINVAL;
		}
		if (pid != (uint64_t)getpid())
			return ret;
	}
	/* systemd's own bound: a positive count of microseconds below UINT64_MAX. */
	if (nt_parse_u64(usec, &us) || us == 0 || us == UINT64_MAX) {
		snprintf(err, errlen,
			 "WATCHDOG_USEC='%s': allowed 1 to %llu microseconds; no watchdog pings "
			 "are sent",
			 usec, (unsigned long long)(UINT64_MAX - 1));
		return -EINVAL;
	}
	/*
	 * Half the interval, as sd_watchdog_enabled(3) advises: one late turn
	 * of the loop must not cost a restart.
	 */
	n->wd_interval_ns = us > UINT64_MAX / 500 ? UINT64_MAX / 2 : us * 500;
	n->wd_next_ns = now_ns + n->wd_interval_ns;
	return ret;
}

int qs_notify_send(struct qs_notify *n, const char *msg)
{
	int fd, ret = 0;

	if (!n->sa_len)
		return 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (const struct sockaddr *)&n->sa,
		   n->sa_len) < 0)
		ret = -errno;
	else
		n->sent++;
	close(fd);
	return ret;
}

uint64_t qs_notify_timeout(const struct qs_notify *n, uint64_t now_ns)
{
	if (!n->wd_interval_ns)
		return UINT64_MAX;
	return n->wd_next_ns > now_ns ? n->wd_next_ns - now_ns : 0;
}

int qs_notify_watchdog(struct qs_notify *n, uint64_t now_ns)
{
	int ret;

	if (!n->wd_interval_ns || now_ns < n->wd_next_ns)
		return 0;
	n->wd_next_ns = now_ns + n->wd_interval_ns;
	ret = qs_notify_send(n, "WATCHDOG=1");
	return ret < 0 ? ret : 1;
}
