// SPDX-License-Identifier: Apache-2.0
/*
 * netscan: netlink dumps of the machine's addresses (RTM_GETADDR) and of
 * its listening sockets (SOCK_DIAG_BY_FAMILY: TCP in LISTEN, UDP in any
 * state, for IPv4 and IPv6). Each dump is one request on a fresh socket,
 * read until NLMSG_DONE.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "kernel/netscan.h"

#define TCP_LISTEN_STATE 10	/* TCP_LISTEN of include/net/tcp_states.h */

/* Sends req (len bytes, a whole netlink message) on the netlink socket
 * fd and calls on_msg for every message of the answer. 0 or -errno. */
static int dump(int fd, const void *req, size_t len,
		int (*on_msg)(const struct nlmsghdr *h, void *ctx), void *ctx)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	static __thread uint32_t buf[8192];
	int ret = 0, done = 0;
	ssize_t n;

	if (sendto(fd, req, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	while (!done) {
		struct nlmsghdr *h;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (n == 0) {
			ret = -EPROTO;
			goto out;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				ret = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) &&
				      e->error ? e->error : -EPROTO;
				goto out;
			}
			ret = on_msg(h, ctx);
			if (ret)
				goto out;
		}
	}
out:
	return ret;
}

struct addr_ctx {
	void (*cb)(void *ctx, int family, const uint8_t *addr, bool broadcast);
	void *ctx;
};

static int on_addr(const struct nlmsghdr *h, void *p)
{
	const struct addr_ctx *a = p;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	const uint8_t *local = NULL, *address = NULL;
	size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;
	const struct rtattr *rta;
	int len;

	if (h->nlmsg_type != RTM_NEWADDR ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)) ||
	    (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
	for (rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (RTA_PAYLOAD(rta) < alen)
			continue;
		if (rta->rta_type == IFA_LOCAL)
			local = RTA_DATA(rta);
		else if (rta->rta_type == IFA_ADDRESS)
			address = RTA_DATA(rta);
		else if (rta->rta_type == IFA_BROADCAST &&
			 ifa->ifa_family == AF_INET)
			a->cb(a->ctx, AF_INET, RTA_DATA(rta), true);
	}
	/* IFA_ADDRESS of an IPv4 point-to-point link is the peer's. */
	if (!local && ifa->ifa_family == AF_INET6)
		local = address;
	if (local)
		a->cb(a->ctx, ifa->ifa_family, local, false);
	return 0;
}

int cw_netscan_addrs(void (*cb)(void *ctx, int family, const uint8_t *addr,
				bool broadcast),
		     void *ctx)
{
	struct {
		struct nlmsghdr h;
		struct ifaddrmsg m;
	} req;
	struct addr_ctx a = { cb, ctx };
	int fd, ret;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETADDR;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.m.ifa_family = AF_UNSPEC;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	ret = dump(fd, &req, sizeof(req), on_addr, &a);
	close(fd);
	return ret;
}

struct sock_ctx {
	void (*cb)(void *ctx, const struct cw_netscan_listener *l);
	void *ctx;
	int protocol;
};

static int on_sock(const struct nlmsghdr *h, void *p)
{
	const struct sock_ctx *s = p;
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	struct cw_netscan_listener l;
	const struct rtattr *rta;
	int len;

	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return 0;
	memset(&l, 0, sizeof(l));
	l.family = m->idiag_family;
	l.protocol = s->protocol;
	l.port = ntohs(m->id.idiag_sport);
	l.uid = m->idiag_uid;
	if (!l.port)
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (rta = (const struct rtattr *)(m + 1); RTA_OK(rta, len);
	     rta = RTA_NEXT(rta, len))
		if (rta->rta_type == INET_DIAG_CGROUP_ID &&
		    RTA_PAYLOAD(rta) >= sizeof(uint64_t)) {
			memcpy(&l.cgroup_id, RTA_DATA(rta), sizeof(uint64_t));
			l.cgroup_known = true;
		}
	s->cb(s->ctx, &l);
	return 0;
}

/* One /proc/net table: "sl local:port rem:port st ... uid timeout inode". */
static int proc_table(const char *path, int family, int protocol,
		      void (*cb)(void *ctx, const struct cw_netscan_listener *l),
		      void *ctx)
{
	struct cw_netscan_listener l;
	unsigned port, st, uid;
	char line[512];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	/* the header line */
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %u",
			   &port, &st, &uid) != 3 || !port || port > 65535)
			continue;
		if (protocol == IPPROTO_TCP && st != TCP_LISTEN_STATE)
			continue;
		memset(&l, 0, sizeof(l));
		l.family = family;
		l.protocol = protocol;
		l.port = (uint16_t)port;
		l.uid = uid;
		cb(ctx, &l);
	}
	fclose(f);
	return 0;
}

int cw_netscan_listeners_proc(void (*cb)(void *ctx,
					 const struct cw_netscan_listener *l),
			      void *ctx)
{
	static const struct {
		const char *path;
		int family, protocol;
	} t[] = {
		{ "/proc/net/tcp", AF_INET, IPPROTO_TCP },
		{ "/proc/net/tcp6", AF_INET6, IPPROTO_TCP },
		{ "/proc/net/udp", AF_INET, IPPROTO_UDP },
		{ "/proc/net/udp6", AF_INET6, IPPROTO_UDP },
	};
	size_t i;
	int ret;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ret = proc_table(t[i].path, t[i].family, t[i].protocol, cb,
				 ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/* /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path"; a
 * listener has __SO_ACCEPTCON (0x10000) in Flags and state 01
 * (SS_UNCONNECTED); a bound datagram socket is unconnected too. */
#define UNIX_ACCEPTCON 0x10000UL
#define UNIX_UNCONNECTED 1

int cw_netscan_unix(void (*cb)(void *ctx, const struct cw_netscan_unix *u),
		    void *ctx)
{
	struct cw_netscan_unix u;
	unsigned long flags, inode;
	unsigned type, st;
	char *line = NULL;
	size_t cap = 0;
	int off;
	FILE *f;

	f = fopen("/proc/net/unix", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *path;

		off = 0;
		if (sscanf(line, "%*s %*x %*x %lx %x %x %lu %n", &flags, &type,
			   &st, &inode, &off) != 4 || !off)
			continue;
		path = line + off;
		path[strcspn(path, "\n")] = '\0';
		/* abstract (@), unbound, or connected: nothing to reach */
		if (!path[0] || path[0] == '@' || st != UNIX_UNCONNECTED)
			continue;
		if (type != SOCK_DGRAM && !(flags & UNIX_ACCEPTCON))
			continue;
		u.path = path;
		u.inode = inode;
		cb(ctx, &u);
	}
	free(line);
	fclose(f);
	return 0;
}

struct diag_req {
	struct nlmsghdr h;
	struct inet_diag_req_v2 r;
};

/* The dump of one family's sockets of one protocol: TCP listeners only,
 * every bound UDP socket. */
static void diag_req(struct diag_req *req, int family, int protocol)
{
	memset(req, 0, sizeof(*req));
	req->h.nlmsg_len = sizeof(*req);
	req->h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req->r.sdiag_family = (uint8_t)family;
	req->r.sdiag_protocol = (uint8_t)protocol;
	req->r.idiag_states = protocol == IPPROTO_TCP ?
				      1u << TCP_LISTEN_STATE : ~0u;
}

static void no_listener(void *ctx, const struct cw_netscan_listener *l)
{
	(void)ctx;
	(void)l;
}

int cw_netscan_inet_diag(void)
{
	struct sock_ctx s = { no_listener, NULL, IPPROTO_TCP };
	struct diag_req req;
	int fd, ret;

	diag_req(&req, AF_INET, IPPROTO_TCP);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	ret = dump(fd, &req, sizeof(req), on_sock, &s);
	close(fd);
	return ret;
}

int cw_netscan_listeners(void (*cb)(void *ctx,
				    const struct cw_netscan_listener *l),
			 void *ctx)
{
	static const int families[] = { AF_INET, AF_INET6 };
	static const int protocols[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct sock_ctx s = { cb, ctx, 0 };
	struct diag_req req;
	int fd, ret = 0;
	size_t i, j;

	/* one socket for the four dumps */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			diag_req(&req, families[i], protocols[j]);
			s.protocol = protocols[j];
			ret = dump(fd, &req, sizeof(req), on_sock, &s);
			/* No inet diagnostics at all (TCP over IPv4 is the
			 * first asked): all of it from /proc/net. */
			if (ret == -ENOENT && !i && !j) {
				close(fd);
				return cw_netscan_listeners_proc(cb, ctx);
			}
			/* a kernel without UDP or IPv6 diagnostics */
			if (ret == -ENOENT || ret == -EAFNOSUPPORT)
				ret = 0;
			if (ret)
				goto out;
		}
out:
	close(fd);
	return ret;
}
