// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fdpass.h"

union cmsg_buf {
	char buf[CMSG_SPACE(CW_FDPASS_MAX * sizeof(int))];
	struct cmsghdr align;
};

ssize_t cw_fd_send(int sock, const void *buf, size_t len, const int *fds,
		   size_t nfds)
{
	union cmsg_buf u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (nfds > CW_FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfds) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

ssize_t cw_fd_recv(int sock, void *buf, size_t len, int *fds, size_t maxfds,
		   size_t *nfds)
{
	union cmsg_buf u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	size_t n, i;
	ssize_t got;
	int fd;

	*nfds = 0;
	do {
		got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (got < 0 && errno == EINTR);
	if (got < 0)
		return got;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			/* more than the caller takes: not leaked */
			if (*nfds < maxfds)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return got;
}
