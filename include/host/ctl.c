/* SPDX-License-Identifier: MIT */
/* qs_ctl: blocking control-socket client (see header). */
#include "host/ctl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int qs_ctl_call(const char *path, const char *request, char *reply, size_t len, int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char line[QS_CTL_MAX_REQUEST + 1];
	size_t got = 0, n;
	int fd, ret;

	if (len == 0)
		return -EINVAL;
	reply[0] = 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(reply, len, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	n = (size_t)snprintf(line, sizeof(line), "%s\n", request);
	if (n >= sizeof(line)) {
		snprintf(reply, len, "request longer than %d bytes", QS_CTL_MAX_REQUEST);
		return -E2BIG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(reply, len, "socket: %s", strerror(errno));
		return ret;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		snprintf(reply, len, "%s: %s (is qlcshaped running?)", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n) {
		ret = -errno;
		snprintf(reply, len, "%s: send: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		ret = poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
		if (ret == 0) {
			snprintf(reply, len, "%s: no answer within %d ms", path, timeout_ms);
			close(fd);
			return -ETIMEDOUT;
		}
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			break;
		if (got + 1 >= len) {
			char sink[512];

			r = recv(fd, sink, sizeof(sink), 0); /* drop what does not fit */
		} else {
			r = recv(fd, reply + got, len - 1 - got, 0);
			if (r > 0)
				got += (size_t)r;
		}
		if (r == 0)
			break;
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			snprintf(reply, len, "%s: recv: %s", path, strerror(errno));
			close(fd);
			return ret;
		}
	}
	reply[got] = 0;
	close(fd);
	if (!strncmp(reply, "ok", 2) && (reply[2] == '\n' || reply[2] == 0))
		return 0;
	if (!strncmp(reply, "error:", 6))
		return 1;
	snprintf(reply, len, "%s: malformed answer", path);
	return -EPROTO;
}
