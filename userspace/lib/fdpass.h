/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fdpass: one message with descriptors over a unix socket (SCM_RIGHTS).
 * Both calls are async-signal-safe, so a forked child may make them.
 */
#ifndef CW_LIB_FDPASS_H
#define CW_LIB_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define CW_FDPASS_MAX 4

/* Sends len bytes with nfds (at most CW_FDPASS_MAX) descriptors; EINTR is
 * retried. The bytes sent, or -1 with errno. */
ssize_t cw_fd_send(int sock, const void *buf, size_t len, const int *fds,
		   size_t nfds);
/* Receives up to len bytes and up to maxfds descriptors (close-on-exec)
 * into fds, *nfds saying how many came; EINTR is retried. The bytes
 * received (0 at EOF), or -1 with errno. */
ssize_t cw_fd_recv(int sock, void *buf, size_t len, int *fds, size_t maxfds,
		   size_t *nfds);

#endif
