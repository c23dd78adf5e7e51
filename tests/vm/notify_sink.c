/* SPDX-License-Identifier: MIT */
/*
 * notify-sink SOCKET DEVICE: a stand-in for systemd's notify socket in the
 * VM tests. Binds a datagram socket at the path SOCKET and prints each
 * message it receives on a line of its own, followed by " dev=1" if DEVICE
 * existed as a block device when the message arrived, else " dev=0" (so
 * the test can tell READY=1 came only once /dev/ublkbN was there). Runs
 * until killed; stdout is flushed after every line.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify-sink SOCKET DEVICE\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (;;) {
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			perror("recv");
			return 1;
		}
		buf[n] = 0;
		printf("%s dev=%d\n", buf, stat(argv[2], &st) == 0 && S_ISBLK(st.st_mode));
		fflush(stdout);
	}
}
