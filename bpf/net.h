/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Structures shared by bpf/net.bpf.c and userspace/kernel/bpfnet.c. No
 * includes: the includer provides __u8.. __u64 (<linux/types.h> or
 * <linux/bpf.h>).
 */
#ifndef CW_BPF_NET_H
#define CW_BPF_NET_H

/* Port ranges one trie entry can hold (rules merged onto one CIDR). */
#define NET_MAX_RANGES 8

enum net_op {
	NET_OP_CONNECT = 1,
	NET_OP_SENDMSG,
	NET_OP_BIND,
	NET_OP_SOCKET,
	NET_OP_EGRESS,
	NET_OP_SETSOCKOPT,
};

enum net_rule {
	NET_RULE_DENY = 1,
	NET_RULE_ALLOW,
	NET_RULE_DEFAULT,
	NET_RULE_RAW_SOCKETS,
	NET_RULE_MAX_CONNECTIONS,
	NET_RULE_MAX_EGRESS_BYTES,
	NET_RULE_LOCAL_SERVICE,
	NET_RULE_SOURCE_ROUTE,	/* IPv4 options, an IPv6 routing header */
};

/* Map "guarded": what listens on a local port that calls may not reach. */
enum net_guard {
	NET_GUARD_ENVD = 1,	/* E2B's envd, 49983 */
	NET_GUARD_MCP_GATEWAY,	/* E2B's MCP gateway, 50005 */
	NET_GUARD_AGENT,	/* this agent's own listener (serve --http) */
	NET_GUARD_LISTENER,	/* a listener outside the calls */
};

/* Maps "local4" and "local6": the machine's own addresses (keys), with
 * what each is. */
enum net_local {
	NET_LOCAL_ADDRESS = 1,	/* an interface address */
	NET_LOCAL_BROADCAST,	/* an interface's broadcast address */
};

/* Map "calls": cgroup id -> how that call's sockets are decided. */
struct net_call {
	__u64 max_connections;	/* 0 = unlimited */
	__u64 max_egress_bytes;	/* 0 = unlimited */
	__u8 default_allow;
	__u8 raw_sockets;
	__u8 report_allowed;	/* emit events for allowed operations too */
	__u8 pad[5];
};

/* Map "counters": cgroup id -> what the call did. */
struct net_counters {
	__u64 connections;	/* connect() calls admitted */
	__u64 egress_bytes;	/* IP bytes admitted by the egress program */
	__u64 denied;
	__u32 egress_exhausted;
	__u32 connections_exhausted;
};

/*
 * LPM trie keys: prefixlen counts the 64 cgroup id bits too, so an entry
 * for a /N rule has prefixlen 64 + N and never matches another call.
 * cgid[0] is the low half of the id, cgid[1] the high half.
 */
struct net_key4 {
	__u32 prefixlen;
	__u32 cgid[2];
	__u8 addr[4];		/* network byte order */
};

struct net_key6 {
	__u32 prefixlen;
	__u32 cgid[2];
	__u8 addr[16];
};

/* Key of "local6". */
struct net_addr6 {
	__u8 addr[16];
};

/* Trie value: the port ranges (host byte order, inclusive) that apply to
 * the entry's CIDR, including those of every shorter rule covering it.
 * "Any port" is 0-65535; port 0 stands for "no port" and matches it only. */
struct net_ports {
	__u32 n;
	struct {
		__u16 lo;
		__u16 hi;
	} r[NET_MAX_RANGES];
};

/* Ring buffer record. */
struct net_event {
	__u64 cgid;
	__u32 pid;		/* tgid; 0 in the egress program */
	char comm[16];		/* "" in the egress program */
	__u16 family;
	__u16 type;
	__u16 protocol;
	__u16 port;		/* host byte order, 0 when none */
	__u8 addr[16];		/* network order; IPv4 in the first 4 */
	__u8 op;		/* enum net_op */
	__u8 allowed;
	__u8 rule;		/* enum net_rule */
	__u8 guard;		/* enum net_guard, NET_RULE_LOCAL_SERVICE */
	__u32 option;		/* NET_OP_SETSOCKOPT: level << 16 | optname */
};

#endif
