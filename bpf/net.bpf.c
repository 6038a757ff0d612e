// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Network enforcement for run_command calls: cgroup-BPF programs attached
 * once, with BPF_F_ALLOW_MULTI links, to <own>/calls, the parent of every
 * call cgroup. A call is configured by map entries keyed by its cgroup id;
 * a cgroup without an entry in "calls" is not touched (return 1).
 *
 * Programs (uapi contexts only, no kernel BTF, no CO-RE; Linux 6.1 rules):
 *   cgroup/connect4, connect6   address+port rules, then max_connections
 *   cgroup/sendmsg4, sendmsg6   address+port rules for unconnected UDP
 *   cgroup/bind4, bind6         address+port rules on the local address
 *   cgroup/sock_create          raw_sockets (SOCK_RAW of IPv4/IPv6)
 *   cgroup/setsockopt           refuses the options that set source routes
 *                               (IP_OPTIONS, IPV6_RTHDR, IPV6_2292RTHDR,
 *                               IPV6_2292PKTOPTIONS)
 *   cgroup_skb/egress           destination rules, per packet, for sockets
 *                               the hooks above never see (raw, ICMP,
 *                               SCTP...), for TCP SYNs and for every UDP
 *                               datagram; packets carrying IPv4 options or
 *                               an IPv6 routing header; then the
 *                               max_egress_bytes budget
 *
 * Maps:
 *   calls      hash: cgroup id -> struct net_call
 *   counters   hash: cgroup id -> struct net_counters
 *   deny4, allow4, deny6, allow6
 *              LPM tries: {64 + prefix, cgroup id, address} -> port ranges.
 *              Userspace merges into each entry the ranges of every shorter
 *              rule that covers it, so the longest match alone decides.
 *   svc4, svc6 LPM tries as above: the call's local_services
 *   guarded    array: port -> enum net_guard (0: not guarded), every call
 *   local4, local6
 *              hash: the machine's addresses -> enum net_local
 *   events     ring buffer of struct net_event; lost: per-CPU count of
 *              events the ring buffer had no room for
 *
 * Which call: the programs run only for sockets created in a cgroup under
 * calls/. The sock_addr and sock_create programs key by the cgroup of the
 * task making the system call (bpf_get_current_cgroup_id), the egress
 * program by the socket's cgroup (bpf_skb_cgroup_id); the SYN check in
 * egress covers a call's TCP socket connected from another cgroup.
 *
 * Decision for an address and port: a matching deny entry denies; else a
 * matching allow entry allows; else the call's default. Deny wins over
 * allow whatever the prefix lengths, so an allow rule can never reopen what
 * a deny rule closes. Port 0 ("no port": ICMP, raw, bind to port 0) matches
 * only rules without a port.
 *
 * Addresses are decided where they go: a connect or send to 0.0.0.0 or ::
 * (or ::ffff:0.0.0.0) goes to loopback, so the rules see 127.0.0.1 or ::1
 * (the event keeps the address as written); loopback follows the rules
 * like any other address. The egress program judges the destination in
 * the packet itself, whatever the hooks were shown: a UDP datagram to an
 * address the sendmsg hook did not see (a socket connected in another
 * cgroup) is decided there, and a source route (IPv4 options, an IPv6
 * routing header, whose first hop is not the destination the hooks
 * judged) is refused outright, with rule source_route, as the
 * setsockopt program refuses the options that set one.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) reaches a.b.c.d over IPv4,
 * so it is decided by the IPv4 rules (userspace also copies IPv6 rules
 * inside ::ffff:0:0/96 to the IPv4 tries).
 *
 * Local services: a connect or send that no deny rule refuses and whose
 * destination is local goes to a port in "guarded" (E2B's envd and MCP
 * gateway, the agent's own listener, the ports of listeners outside the
 * calls) is refused, with rule local_service, unless the call's
 * local_services tries (svc4, svc6) admit that address and port. Allow
 * rules and the default never reopen it. A destination is local when it
 * is 127.0.0.0/8, ::1, 0.0.0.0, :: (the kernel sends to loopback what is
 * addressed to the unspecified address, so these are matched against
 * local_services as 127.0.0.1 and ::1), a broadcast or multicast address
 * (delivered to local listeners too), one of the machine's addresses
 * (local4, local6, kept by userspace), or, in the egress program, any
 * packet the kernel routes through the loopback device: that is the
 * kernel's own decision, so an address added since userspace last read
 * them is caught there (a TCP connect then times out rather than failing
 * with EPERM).
 *
 * bind: a bind to a port is decided like a connect to that address and
 * port; a bind to port 0 (the kernel picks the port, as clients do) is
 * refused only by a deny rule without a port, since what the socket then
 * sends is checked on its own.
 *
 * Limits:
 *   - max_connections counts admitted connect() calls (TCP and UDP); UDP
 *     datagrams sent with sendto() do not count. Concurrent connects are
 *     counted without an atomic fetch, so a race can refuse one connect
 *     too many, never admit one too many.
 *   - sendmsg hooks run only for UDP sends that name an address; a
 *     connected UDP socket was decided at connect(), and every datagram
 *     is decided again at egress.
 *   - The egress budget counts IP packets (headers, ACKs and loopback
 *     traffic included) when they leave, a GSO packet as a whole (up to
 *     64 KiB); the packet that would exceed it is dropped and so is
 *     everything after it. TCP sees drops and stalls, not an error.
 *   - Egress events carry no pid or comm: cgroup_skb programs may run in
 *     softirq context and cannot read the current task on 6.1.
 *   - Inbound connections accepted by a listener of the call are not
 *     filtered (no ingress program).
 *   - A datagram a socket of another cgroup sends is not decided (the
 *     egress program keys by the socket's cgroup); one a call's socket
 *     sends is, whoever sends it.
 *   - AF_PACKET sockets never reach cgroup/sock_create or cgroup_skb
 *     (Linux runs sock_create from inet_create/inet6_create only); the
 *     program refuses them in case a kernel does call it. Elsewhere they
 *     need CAP_NET_RAW, which calls run without; for a call run as root a
 *     seccomp rule on socket(AF_PACKET, ...) is what refuses them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "net.h"

#define AF_INET		2
#define AF_INET6	10
#define AF_PACKET	17
#define SOCK_STREAM	1
#define SOCK_DGRAM	2
#define SOCK_RAW	3
#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#define IPPROTO_UDPLITE	136
#define NEXTHDR_HOP	0
#define NEXTHDR_ROUTING	43
#define NEXTHDR_DEST	60
#define SOL_IP		0
#define SOL_IPV6	41
#define IP_OPTIONS	4
#define IPV6_2292RTHDR	5
#define IPV6_2292PKTOPTIONS 6
#define IPV6_RTHDR	57
#define PAGE_SIZE	4096

#define MAX_CALLS	4096
#define MAX_ENTRIES	16384
#define MAX_LOCAL	1024
#define LOOPBACK_IFINDEX 1	/* the loopback device, in every netns */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLS);
	__type(key, __u64);
	__type(value, struct net_call);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLS);
	__type(key, __u64);
	__type(value, struct net_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_key4);
	__type(value, struct net_ports);
} deny4 SEC(".maps"), allow4 SEC(".maps"), svc4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_key6);
	__type(value, struct net_ports);
} deny6 SEC(".maps"), allow6 SEC(".maps"), svc6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} guarded SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);
} local4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCAL);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct net_addr6);
	__type(value, __u32);
} local6 SEC(".maps");

/* Resized by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline int ports_match(const struct net_ports *p, __u16 port)
{
	__u32 i;

	for (i = 0; i < NET_MAX_RANGES; i++) {
		if (i >= p->n)
			break;
		if (port >= p->r[i].lo && port <= p->r[i].hi)
			return 1;
	}
	return 0;
}

/* Whether the call's entry in an IPv4 trie covers ip and port. */
static __always_inline int in_trie4(void *trie, __u64 cgid, __u32 ip,
				    __u16 port)
{
	struct net_key4 k = {};
	struct net_ports *p;

	k.prefixlen = 64 + 32;
	k.cgid[0] = (__u32)cgid;
	k.cgid[1] = (__u32)(cgid >> 32);
	__builtin_memcpy(k.addr, &ip, sizeof(ip));
	p = bpf_map_lookup_elem(trie, &k);
	return p && ports_match(p, port);
}

static __always_inline int in_trie6(void *trie, __u64 cgid, const __u32 *ip6,
				    __u16 port)
{
	struct net_key6 k = {};
	struct net_ports *p;

	k.prefixlen = 64 + 128;
	k.cgid[0] = (__u32)cgid;
	k.cgid[1] = (__u32)(cgid >> 32);
	__builtin_memcpy(k.addr, ip6, 16);
	p = bpf_map_lookup_elem(trie, &k);
	return p && ports_match(p, port);
}

/* NET_RULE_DENY, NET_RULE_ALLOW, or 0 when no rule matches. */
static __always_inline int match4(__u64 cgid, __u32 ip, __u16 port)
{
	if (in_trie4(&deny4, cgid, ip, port))
		return NET_RULE_DENY;
	if (in_trie4(&allow4, cgid, ip, port))
		return NET_RULE_ALLOW;
	return 0;
}

static __always_inline int match6(__u64 cgid, const __u32 *ip6, __u16 port)
{
	if (in_trie6(&deny6, cgid, ip6, port))
		return NET_RULE_DENY;
	if (in_trie6(&allow6, cgid, ip6, port))
		return NET_RULE_ALLOW;
	return 0;
}

/* ::ffff:a.b.c.d */
static __always_inline int v4mapped(const __u32 *ip6)
{
	return ip6[0] == 0 && ip6[1] == 0 && ip6[2] == bpf_htonl(0x0000ffff);
}

static __always_inline int match_any6(__u64 cgid, const __u32 *ip6,
				      __u16 port)
{
	if (v4mapped(ip6))
		return match4(cgid, ip6[3], port);
	return match6(cgid, ip6, port);
}

/* Loopback, unspecified, broadcast, multicast or one of the machine's. */
static __always_inline int is_local4(__u32 ip)
{
	__u32 h = bpf_ntohl(ip);

	if (h >> 24 == 127 || h == 0 || h == 0xffffffff || h >> 28 == 0xe)
		return 1;
	return bpf_map_lookup_elem(&local4, &ip) != NULL;
}

static __always_inline int is_local6(const __u32 *ip6)
{
	struct net_addr6 a;

	if (!ip6[0] && !ip6[1] && !ip6[2] &&
	    (!ip6[3] || ip6[3] == bpf_htonl(1)))
		return 1;
	if (bpf_ntohl(ip6[0]) >> 24 == 0xff)
		return 1;
	__builtin_memcpy(a.addr, ip6, 16);
	return bpf_map_lookup_elem(&local6, &a) != NULL;
}

/* What guards the port, when the destination is local (on_lo: the packet
 * is routed through loopback) and no local service of the call admits
 * it; else 0. */
static __always_inline int guard4(__u64 cgid, __u32 ip, __u16 port, int on_lo)
{
	__u32 key = port, *g;

	g = bpf_map_lookup_elem(&guarded, &key);
	if (!g || !*g || !port)
		return 0;
	if (!on_lo && !is_local4(ip))
		return 0;
	return in_trie4(&svc4, cgid, ip, port) ? 0 : *g;
}

static __always_inline int guard6(__u64 cgid, const __u32 *ip6, __u16 port,
				  int on_lo)
{
	__u32 key = port, *g;

	if (v4mapped(ip6))
		return guard4(cgid, ip6[3], port, on_lo);
	g = bpf_map_lookup_elem(&guarded, &key);
	if (!g || !*g || !port)
		return 0;
	if (!on_lo && !is_local6(ip6))
		return 0;
	return in_trie6(&svc6, cgid, ip6, port) ? 0 : *g;
}

static __always_inline int allowed_by(const struct net_call *cfg, int rule)
{
	return rule == NET_RULE_ALLOW ||
	       (rule == NET_RULE_DEFAULT && cfg->default_allow);
}

static __always_inline void emit(struct net_event *ev, int task)
{
	__u32 zero = 0;
	__u64 *n;

	if (task) {
		ev->pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	}
	if (bpf_ringbuf_output(&events, ev, sizeof(*ev), 0)) {
		n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			__sync_fetch_and_add(n, 1);
	}
}

static __always_inline void count_denied(__u64 cgid)
{
	struct net_counters *c = bpf_map_lookup_elem(&counters, &cgid);

	if (c)
		__sync_fetch_and_add(&c->denied, 1);
}

/*
 * Admits one more connection unless the cap is reached. Without an atomic
 * fetch (BPF v1), add first and look: a concurrent connect can only make
 * the count look higher, so the cap is never exceeded.
 */
static __always_inline int admit_connection(__u64 cgid,
					    const struct net_call *cfg)
{
	struct net_counters *c = bpf_map_lookup_elem(&counters, &cgid);

	if (!c)
		return 1;
	__sync_fetch_and_add(&c->connections, 1);
	if (cfg->max_connections && c->connections > cfg->max_connections) {
		__sync_fetch_and_add(&c->connections, -1);
		c->connections_exhausted = 1;
		return 0;
	}
	return 1;
}

/* Shared by the six sock_addr programs; returns 1 to allow, 0 to refuse. */
static __always_inline int sock_addr(struct bpf_sock_addr *ctx, __u8 op,
				     int v6)
{
	struct net_event ev = {};
	struct net_call *cfg;
	__u32 ip6[4] = {};
	__u64 cgid;
	__u16 port;
	int rule, ok;

	cgid = bpf_get_current_cgroup_id();
	cfg = bpf_map_lookup_elem(&calls, &cgid);
	if (!cfg)
		return 1;
	port = bpf_ntohs((__u16)ctx->user_port);
	if (v6) {
		ip6[0] = ctx->user_ip6[0];
		ip6[1] = ctx->user_ip6[1];
		ip6[2] = ctx->user_ip6[2];
		ip6[3] = ctx->user_ip6[3];
	} else {
		ip6[0] = ctx->user_ip4;
	}
	__builtin_memcpy(ev.addr, ip6, 16);
	/* The unspecified address is loopback to connect and send; to bind
	 * it is every address. */
	if (op != NET_OP_BIND) {
		if (v6 && !ip6[0] && !ip6[1] && !ip6[2] && !ip6[3])
			ip6[3] = bpf_htonl(1);
		else if (v6 && v4mapped(ip6) && !ip6[3])
			ip6[3] = bpf_htonl(0x7f000001);
		else if (!v6 && !ip6[0])
			ip6[0] = bpf_htonl(0x7f000001);
	}
	rule = v6 ? match_any6(cgid, ip6, port) : match4(cgid, ip6[0], port);
	if (!rule)
		rule = NET_RULE_DEFAULT;
	if (rule != NET_RULE_DENY && op != NET_OP_BIND) {
		ev.guard = v6 ? guard6(cgid, ip6, port, 0) :
				guard4(cgid, ip6[0], port, 0);
		if (ev.guard)
			rule = NET_RULE_LOCAL_SERVICE;
	}
	/* A bind to port 0 that no deny rule refuses passes the default. */
	ok = allowed_by(cfg, rule) ||
	     (op == NET_OP_BIND && port == 0 && rule == NET_RULE_DEFAULT);
	if (ok && op == NET_OP_CONNECT && !admit_connection(cgid, cfg)) {
		ok = 0;
		rule = NET_RULE_MAX_CONNECTIONS;
	}
	if (!ok)
		count_denied(cgid);
	if (ok && !cfg->report_allowed)
		return 1;
	ev.cgid = cgid;
	ev.family = v6 ? AF_INET6 : AF_INET;
	ev.type = ctx->type;
	ev.protocol = ctx->protocol;
	ev.port = port;
	ev.op = op;
	ev.allowed = ok;
	ev.rule = rule;
	emit(&ev, 1);
	return ok;
}

SEC("cgroup/connect4")
int cw_connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_CONNECT, 0);
}

SEC("cgroup/connect6")
int cw_connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_CONNECT, 1);
}

SEC("cgroup/sendmsg4")
int cw_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_SENDMSG, 0);
}

SEC("cgroup/sendmsg6")
int cw_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_SENDMSG, 1);
}

SEC("cgroup/bind4")
int cw_bind4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_BIND, 0);
}

SEC("cgroup/bind6")
int cw_bind6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, NET_OP_BIND, 1);
}

SEC("cgroup/sock_create")
int cw_sock_create(struct bpf_sock *sk)
{
	struct net_event ev = {};
	struct net_call *cfg;
	__u64 cgid;
	int raw;

	cgid = bpf_get_current_cgroup_id();
	cfg = bpf_map_lookup_elem(&calls, &cgid);
	if (!cfg)
		return 1;
	raw = sk->family == AF_PACKET || sk->type == SOCK_RAW;
	if (!raw || (cfg->raw_sockets && !cfg->report_allowed))
		return 1;
	if (!cfg->raw_sockets)
		count_denied(cgid);
	ev.cgid = cgid;
	ev.family = sk->family;
	ev.type = sk->type;
	ev.protocol = sk->protocol;
	ev.op = NET_OP_SOCKET;
	ev.allowed = cfg->raw_sockets;
	ev.rule = NET_RULE_RAW_SOCKETS;
	emit(&ev, 1);
	return cfg->raw_sockets ? 1 : 0;
}

static __always_inline int sets_source_route(int level, int name)
{
	if (level == SOL_IP)
		return name == IP_OPTIONS;
	return level == SOL_IPV6 &&
	       (name == IPV6_RTHDR || name == IPV6_2292RTHDR ||
		name == IPV6_2292PKTOPTIONS);
}

/* A source route makes the first hop, not the destination the connect
 * and sendmsg hooks judged, receive the packet. */
SEC("cgroup/setsockopt")
int cw_setsockopt(struct bpf_sockopt *ctx)
{
	struct net_event ev = {};
	struct bpf_sock *sk;
	__u64 cgid;

	if (!sets_source_route(ctx->level, ctx->optname) || ctx->optlen <= 0)
		goto pass;
	cgid = bpf_get_current_cgroup_id();
	if (!bpf_map_lookup_elem(&calls, &cgid))
		goto pass;
	count_denied(cgid);
	ev.cgid = cgid;
	sk = ctx->sk;
	if (sk) {
		ev.family = sk->family;
		ev.type = sk->type;
		ev.protocol = sk->protocol;
	}
	ev.op = NET_OP_SETSOCKOPT;
	ev.rule = NET_RULE_SOURCE_ROUTE;
	ev.option = (__u32)ctx->level << 16 | (__u32)ctx->optname;
	emit(&ev, 1);
	return 0;
pass:
	/* The program sees one page of a larger value; 0 hands the kernel
	 * the caller's own buffer. */
	if (ctx->optlen > PAGE_SIZE)
		ctx->optlen = 0;
	return 1;
}

/*
 * Whether the packet's destination must be decided here: always for
 * sockets the sock_addr programs never see (raw, ICMP, SCTP...); for the
 * SYN of a TCP socket, since a connect made by another task (an MPTCP
 * subflow opened by a kernel worker, a socket handed out of the call)
 * meets cgroup/connect* with that task's cgroup, not the call's; and for
 * every UDP datagram, whose real destination (a socket connected in
 * another cgroup, a source route) the sendmsg hook may not have seen.
 */
static __always_inline int needs_check(struct __sk_buff *skb, __u16 *type)
{
	struct bpf_sock *sk = skb->sk;

	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return 0;	/* request and timewait sockets: TCP replies */
	*type = sk->type;
	if (sk->type == SOCK_STREAM && sk->protocol == IPPROTO_TCP)
		return sk->state == BPF_TCP_SYN_SENT;
	return 1;
}

/*
 * Destination of the packet from its IP header (skb data starts there).
 * *srr: the packet carries IPv4 options or an IPv6 routing header (behind
 * hop-by-hop and destination options, which unprivileged sockets cannot
 * set but the port lies behind).
 */
static __always_inline int packet_dest(struct __sk_buff *skb,
				       struct net_event *ev, int *srr)
{
	__u8 b0 = 0, proto = 0, ext[2];
	__u16 dport = 0;
	__u32 l4;
	int i;

	*srr = 0;
	if (bpf_skb_load_bytes(skb, 0, &b0, 1))
		return -1;
	if (b0 >> 4 == 4) {
		ev->family = AF_INET;
		if (bpf_skb_load_bytes(skb, 9, &proto, 1) ||
		    bpf_skb_load_bytes(skb, 16, ev->addr, 4))
			return -1;
		l4 = (b0 & 0xf) * 4;
		*srr = l4 > 20;
	} else if (b0 >> 4 == 6) {
		ev->family = AF_INET6;
		if (bpf_skb_load_bytes(skb, 6, &proto, 1) ||
		    bpf_skb_load_bytes(skb, 24, ev->addr, 16))
			return -1;
		l4 = 40;
#pragma unroll
		for (i = 0; i < 3; i++) {
			if (proto == NEXTHDR_ROUTING) {
				*srr = 1;
				break;
			}
			if (proto != NEXTHDR_HOP && proto != NEXTHDR_DEST)
				break;
			if (bpf_skb_load_bytes(skb, l4, ext, 2))
				return -1;
			proto = ext[0];
			l4 += ((__u32)ext[1] + 1) * 8;
		}
	} else {
		return -1;
	}
	ev->protocol = proto;
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
	    !bpf_skb_load_bytes(skb, l4 + 2, &dport, 2))
		ev->port = bpf_ntohs(dport);
	return 0;
}

SEC("cgroup_skb/egress")
int cw_egress(struct __sk_buff *skb)
{
	struct net_event ev = {};
	struct net_counters *c;
	struct net_call *cfg;
	__u32 ip6[4] = {};
	__u64 cgid, len;
	__u16 type = 0;
	int rule, srr, on_lo;

	cgid = bpf_skb_cgroup_id(skb);
	cfg = bpf_map_lookup_elem(&calls, &cgid);
	if (!cfg)
		return 1;
	ev.cgid = cgid;
	ev.op = NET_OP_EGRESS;
	if (needs_check(skb, &type)) {
		ev.type = type;
		if (packet_dest(skb, &ev, &srr)) {
			rule = NET_RULE_DEFAULT;
		} else if (srr) {
			rule = NET_RULE_SOURCE_ROUTE;
		} else {
			on_lo = skb->ifindex == LOOPBACK_IFINDEX;
			__builtin_memcpy(ip6, ev.addr, 16);
			rule = ev.family == AF_INET ?
				       match4(cgid, ip6[0], ev.port) :
				       match_any6(cgid, ip6, ev.port);
			if (!rule)
				rule = NET_RULE_DEFAULT;
			if (rule != NET_RULE_DENY)
				ev.guard = ev.family == AF_INET ?
					guard4(cgid, ip6[0], ev.port, on_lo) :
					guard6(cgid, ip6, ev.port, on_lo);
			if (ev.guard)
				rule = NET_RULE_LOCAL_SERVICE;
		}
		if (!allowed_by(cfg, rule)) {
			count_denied(cgid);
			ev.rule = rule;
			emit(&ev, 0);
			return 0;
		}
	}
	c = bpf_map_lookup_elem(&counters, &cgid);
	if (!c)
		return 1;
	if (cfg->max_egress_bytes && c->egress_exhausted)
		return 0;
	len = skb->len;
	__sync_fetch_and_add(&c->egress_bytes, len);
	if (!cfg->max_egress_bytes || c->egress_bytes <= cfg->max_egress_bytes)
		return 1;
	__sync_fetch_and_add(&c->egress_bytes, -len);
	if (c->egress_exhausted)
		return 0;
	/* Once per call: retransmissions would flood the ring buffer. */
	c->egress_exhausted = 1;
	__sync_fetch_and_add(&c->denied, 1);
	if (!ev.family)
		packet_dest(skb, &ev, &srr);
	ev.type = type;
	ev.rule = NET_RULE_MAX_EGRESS_BYTES;
	emit(&ev, 0);
	return 0;
}
