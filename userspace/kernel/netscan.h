/* SPDX-License-Identifier: Apache-2.0 */
/*
 * netscan: what the machine's network stack holds right now, read over
 * netlink: its own addresses (rtnetlink) and the ports its sockets listen
 * on (sock_diag), each with the cgroup and user that own it.
 */
#ifndef CW_KERNEL_NETSCAN_H
#define CW_KERNEL_NETSCAN_H

#include <stdbool.h>
#include <stdint.h>

/* Calls cb for every address of every interface (family AF_INET or
 * AF_INET6, addr in network order, 4 or 16 bytes); broadcast: the
 * interface's IPv4 broadcast address. 0 or -errno. */
int cw_netscan_addrs(void (*cb)(void *ctx, int family, const uint8_t *addr,
				bool broadcast),
		     void *ctx);

/* One socket that takes traffic on a local port: a TCP listener or a
 * bound UDP socket, IPv4 or IPv6. */
struct cw_netscan_listener {
	int family;
	int protocol;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;		/* host order, never 0 */
	uint64_t cgroup_id;	/* the socket's cgroup v2 id, when known */
	bool cgroup_known;	/* false: read from /proc/net (a kernel
				 * without inet sock_diag), uid only */
	uint32_t uid;
};

/* Calls cb for every listener of the current network namespace, from
 * sock_diag, else from /proc/net/{tcp,tcp6,udp,udp6}. 0 or -errno. */
int cw_netscan_listeners(void (*cb)(void *ctx,
				    const struct cw_netscan_listener *l),
			 void *ctx);
/* 0 when the kernel answers inet sock_diag (listeners come with their
 * cgroup), -ENOENT when it has none, else -errno. */
int cw_netscan_inet_diag(void);

/* The same from /proc/net alone (what a kernel without inet sock_diag
 * gets; tests). */
int cw_netscan_listeners_proc(void (*cb)(void *ctx,
					 const struct cw_netscan_listener *l),
			      void *ctx);

/* One pathname unix socket that takes connections (a listener) or
 * datagrams (bound, unconnected), as /proc/net/unix names it: the path
 * as its socket was bound, absolute or not. */
struct cw_netscan_unix {
	const char *path;
	unsigned long inode;	/* the socket's (sockfs) inode */
};

/* Calls cb for every such socket of the current network namespace; not
 * abstract ones, nor connected ones. 0 or -errno. */
int cw_netscan_unix(void (*cb)(void *ctx, const struct cw_netscan_unix *u),
		    void *ctx);

#endif
