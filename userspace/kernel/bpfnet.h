/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpfnet: the eBPF network programs (bpf/net.bpf.c). Loaded and attached
 * once, at agent start, to the cgroup all calls live under; a call is
 * configured by updating maps keyed by its cgroup id, never by loading.
 * The programs use only uapi contexts and load without kernel BTF.
 */
#ifndef CW_KERNEL_BPFNET_H
#define CW_KERNEL_BPFNET_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"
#include "lib/util.h"

struct cw_bpfnet;

struct cw_bpfnet_opts {
	int cgroup_fd;		/* v2 cgroup to attach to (BPF_F_ALLOW_MULTI) */
	const char *btf_path;	/* NULL: libbpf's default; a missing path
				 * simulates a kernel without BTF */
	unsigned ringbuf_kib;	/* 0: 256 */
	bool guard_listeners;	/* the ports of every listener outside the
				 * calls are local services too (else only
				 * E2B's and cw_bpfnet_guard_port's) */
};

/* Opens, loads and attaches. NULL + errno + err (naming the program that
 * failed to load or attach, and the verifier's last line when there is). */
struct cw_bpfnet *cw_bpfnet_open(const struct cw_bpfnet_opts *o,
				 struct cw_error *err);
/* Detaches and unloads. */
void cw_bpfnet_close(struct cw_bpfnet *b);

/* Calls may not reach port on a local address (the agent's own listener)
 * unless their local_services allow it. 0 or -errno. */
int cw_bpfnet_guard_port(struct cw_bpfnet *b, uint16_t port);

/* Reads the machine's addresses and listeners again (local services),
 * then installs the call's rules (sb->network) under its cgroup id, or
 * removes them. Calls of a cgroup without rules are allowed (only cmdwarden's own
 * call cgroups are configured). 0 or -errno. */
int cw_bpfnet_call_add(struct cw_bpfnet *b, uint64_t cgroup_id,
		       const struct cw_sandbox *sb, struct cw_error *err);
/* Counters of the call, read before removal. */
struct cw_bpfnet_stats {
	uint64_t connections;	/* connects and first sends admitted */
	uint64_t denied;	/* refused by an address, port, raw or cap rule */
	uint64_t egress_bytes;
	bool egress_exhausted;	/* a packet was dropped by the byte budget */
	bool connections_exhausted;
};
int cw_bpfnet_call_remove(struct cw_bpfnet *b, uint64_t cgroup_id,
			  struct cw_bpfnet_stats *st);

/* Ends a call's network: reads its counters, then drops everything its
 * sockets still send (data queued before the command exited) and deletes
 * its address rules. Its config and counters stay until
 * cw_bpfnet_call_remove. 0 or -errno. */
int cw_bpfnet_call_seal(struct cw_bpfnet *b, uint64_t cgroup_id,
			struct cw_bpfnet_stats *st);

/* One network event, decoded from the ring buffer. */
struct cw_bpfnet_event {
	uint64_t cgroup_id;
	uint32_t pid;
	char comm[16];
	int family;		/* AF_INET, AF_INET6, AF_PACKET ... */
	int type;		/* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW */
	int protocol;
	char addr[64];		/* printable address, "" when none */
	uint16_t port;
	const char *op;		/* "connect", "sendmsg", "bind", "socket",
				 * "egress", "setsockopt" */
	bool allowed;
	const char *rule;	/* "deny", "allow", "default", "raw_sockets",
				 * "max_connections", "max_egress_bytes",
				 * "local_service", "source_route" */
	const char *service;	/* with "local_service": what listens there,
				 * "envd", "mcp_gateway", "agent" or
				 * "listener"; else NULL */
	const char *option;	/* with "setsockopt": the option refused,
				 * "IP_OPTIONS", "IPV6_RTHDR" ...; else NULL */
};

/* Drains the ring buffer, calling cb for each event; returns the number
 * of events or -errno. Never blocks. */
int cw_bpfnet_drain(struct cw_bpfnet *b,
		    void (*cb)(void *ctx, const struct cw_bpfnet_event *ev),
		    void *ctx);
/* The ring buffer's epoll-able fd, for callers that wait. */
int cw_bpfnet_fd(const struct cw_bpfnet *b);
/* Events lost because the ring buffer was full. */
uint64_t cw_bpfnet_lost(const struct cw_bpfnet *b);

#endif
