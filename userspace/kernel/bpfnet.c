// SPDX-License-Identifier: Apache-2.0
/*
 * bpfnet: loads bpf/net.bpf.c once (skeleton: open, size the ring buffer,
 * load, attach every program to the calls cgroup) and turns a call's
 * sandbox.network into map entries keyed by the call's cgroup id. What the
 * programs decide, and in which order, is documented at the top of
 * bpf/net.bpf.c.
 *
 * A call's rules become LPM trie entries. The kernel returns only the
 * longest matching entry, so each entry carries the port ranges of every
 * rule of the same list whose CIDR covers it: 10.0.0.0/8:22 and
 * 10.1.0.0/16:80 give 10.1.0.0/16 the ranges 22 and 80.
 *
 * Local services: the guarded ports (E2B's envd and MCP gateway from the
 * start, the agent's own listener when it says so, and with
 * guard_listeners every port a socket outside the calls listens on) and
 * the machine's addresses are read again each time a call is added,
 * before its rules go in: the call starts from what listens and which
 * addresses exist at that moment. Between two calls, an address that
 * appears is still caught by the egress program (loopback routing is the
 * kernel's own answer); a listener that appears is guarded from the next
 * call on. Re-reading costs two netlink dumps per call and no thread;
 * a listener has no change notification to watch anyway.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/bpfnet.h"
#include "kernel/libbpf.h"
#include "kernel/netscan.h"
#include "bpf/net.h"
#include "bpf/net.skel.h"

#define RINGBUF_DEFAULT_KIB 256
#define RINGBUF_MAX_KIB (1u << 20)
#define NPORTS 65536
#define MAX_LOCAL_ADDRS 1024	/* the size of local4 and local6 */

/* E2B's in-sandbox control planes, on every local address. */
#define PORT_ENVD 49983
#define PORT_MCP_GATEWAY 50005

enum trie {
	T_DENY4 = 0,
	T_ALLOW4,
	T_DENY6,
	T_ALLOW6,
	T_SVC4,
	T_SVC6,
	T_COUNT,
};

/* A policy list and the tries it goes to. */
struct list {
	const char *name;
	enum trie t4, t6;
};

static const struct list l_deny = { "deny", T_DENY4, T_DENY6 };
static const struct list l_allow = { "allow", T_ALLOW4, T_ALLOW6 };
static const struct list l_svc = { "local_services", T_SVC4, T_SVC6 };

struct laddr {
	int family;
	uint8_t addr[16];
	uint32_t kind;		/* enum net_local */
};

/* One trie entry a call owns, kept so that removal needs no map walk. */
struct tkey {
	enum trie trie;
	union {
		struct net_key4 k4;
		struct net_key6 k6;
	};
};

struct call {
	uint64_t cgid;
	struct tkey *keys;
	size_t nkeys;
	size_t cap;
	struct call *next;
};

struct cw_bpfnet {
	struct net_bpf *skel;
	struct ring_buffer *rb;
	int trie_fd[T_COUNT];
	pthread_mutex_t lock;		/* calls and everything below */
	struct call *calls;
	bool guard_listeners;
	uint8_t fixed[NPORTS];		/* enum net_guard set at open, by
					 * cw_bpfnet_guard_port */
	uint8_t guarded[NPORTS];	/* what the map holds */
	uint8_t *seen;			/* NPORTS: scratch for a scan */
	struct laddr *addrs;		/* what local4 and local6 hold */
	size_t naddrs;
	struct laddr *scan;		/* MAX_LOCAL_ADDRS: scratch */
	size_t nscan;
	pthread_mutex_t drain_lock;	/* rb, cb, cb_ctx, ndrained */
	void (*cb)(void *ctx, const struct cw_bpfnet_event *ev);
	void *cb_ctx;
	int ndrained;
};

/* A rule reduced to what a trie entry needs. */
struct nrule {
	uint8_t addr[16];
	unsigned prefix;
	uint16_t lo, hi;
	const char *text;
};

struct range {
	uint16_t lo, hi;
};

static const char *const op_names[] = {
	[NET_OP_CONNECT] = "connect", [NET_OP_SENDMSG] = "sendmsg",
	[NET_OP_BIND] = "bind",	      [NET_OP_SOCKET] = "socket",
	[NET_OP_EGRESS] = "egress",   [NET_OP_SETSOCKOPT] = "setsockopt",
};

static const char *const rule_names[] = {
	[NET_RULE_DENY] = "deny",
	[NET_RULE_ALLOW] = "allow",
	[NET_RULE_DEFAULT] = "default",
	[NET_RULE_RAW_SOCKETS] = "raw_sockets",
	[NET_RULE_MAX_CONNECTIONS] = "max_connections",
	[NET_RULE_MAX_EGRESS_BYTES] = "max_egress_bytes",
	[NET_RULE_LOCAL_SERVICE] = "local_service",
	[NET_RULE_SOURCE_ROUTE] = "source_route",
};

/* The options cw_setsockopt refuses, by level << 16 | optname. */
static const char *option_name(uint32_t option)
{
	switch (option) {
	case IPPROTO_IP << 16 | IP_OPTIONS:
		return "IP_OPTIONS";
	case IPPROTO_IPV6 << 16 | IPV6_RTHDR:
		return "IPV6_RTHDR";
	case IPPROTO_IPV6 << 16 | IPV6_2292RTHDR:
		return "IPV6_2292RTHDR";
	case IPPROTO_IPV6 << 16 | IPV6_2292PKTOPTIONS:
		return "IPV6_2292PKTOPTIONS";
	}
	return "unknown";
}

static const char *const guard_names[] = {
	[NET_GUARD_ENVD] = "envd",
	[NET_GUARD_MCP_GATEWAY] = "mcp_gateway",
	[NET_GUARD_AGENT] = "agent",
	[NET_GUARD_LISTENER] = "listener",
};

/* A name from one of the tables above; "unknown" outside it. */
#define NAME_OF(names, i)                                         \
	((i) < CW_ARRAY_SIZE(names) && (names)[i] ? (names)[i] : "unknown")

static int on_event(void *ctx, void *data, size_t size)
{
	struct cw_bpfnet *b = ctx;
	const struct net_event *e = data;
	struct cw_bpfnet_event ev;

	if (size < sizeof(*e))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.cgroup_id = e->cgid;
	ev.pid = e->pid;
	memcpy(ev.comm, e->comm, sizeof(ev.comm) - 1);
	ev.family = e->family;
	ev.type = e->type;
	ev.protocol = e->protocol;
	ev.port = e->port;
	if ((e->family == AF_INET || e->family == AF_INET6) &&
	    e->op != NET_OP_SOCKET && e->op != NET_OP_SETSOCKOPT &&
	    !inet_ntop(e->family, e->addr, ev.addr, sizeof(ev.addr)))
		ev.addr[0] = '\0';
	ev.op = NAME_OF(op_names, e->op);
	ev.allowed = e->allowed;
	ev.rule = NAME_OF(rule_names, e->rule);
	if (e->guard)
		ev.service = NAME_OF(guard_names, e->guard);
	if (e->op == NET_OP_SETSOCKOPT)
		ev.option = option_name(e->option);
	b->ndrained++;
	if (b->cb)
		b->cb(b->cb_ctx, &ev);
	return 0;
}

void cw_bpfnet_close(struct cw_bpfnet *b)
{
	struct call *c, *next;

	if (!b)
		return;
	ring_buffer__free(b->rb);
	/* Destroying the links detaches; closing the maps frees them. */
	net_bpf__destroy(b->skel);
	for (c = b->calls; c; c = next) {
		next = c->next;
		free(c->keys);
		free(c);
	}
	free(b->seen);
	free(b->addrs);
	free(b->scan);
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->drain_lock);
	free(b);
}

static int attach_all(struct cw_bpfnet *b, int cgroup_fd,
		      struct cw_error *err)
{
	const struct bpf_object_skeleton *s = b->skel->skeleton;
	int i, ret;

	for (i = 0; i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *ps =
			(const void *)((const char *)s->progs +
				       (size_t)i * s->prog_skel_sz);

		*ps->link = bpf_program__attach_cgroup(*ps->prog, cgroup_fd);
		if (!*ps->link) {
			ret = -errno;
			cw_error_set(err, "attaching BPF program %s: %s",
				     ps->name, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Brings the guarded map to fixed, then the ports in seen (when not
 * NULL); only the ports that change are written. */
static int write_guards_seen(struct cw_bpfnet *b, const uint8_t *seen)
{
	int fd = bpf_map__fd(b->skel->maps.guarded);
	uint32_t port, v;

	for (port = 1; port < NPORTS; port++) {
		v = b->fixed[port] ? b->fixed[port] :
		    seen && seen[port] ? NET_GUARD_LISTENER : 0;
		if (v == b->guarded[port])
			continue;
		if (bpf_map_update_elem(fd, &port, &v, BPF_ANY))
			return -errno;
		b->guarded[port] = (uint8_t)v;
	}
	return 0;
}

static int write_guards(struct cw_bpfnet *b)
{
	return write_guards_seen(b, b->guard_listeners ? b->seen : NULL);
}

static bool is_call(const struct cw_bpfnet *b, uint64_t cgid)
{
	const struct call *c;

	for (c = b->calls; c; c = c->next)
		if (c->cgid == cgid)
			return true;
	return false;
}

/*
 * A call's own listener stays reachable from the calls. Where the kernel
 * does not say a socket's cgroup (listeners read from /proc/net), only
 * those of root and of the agent's user are known not to be the calls'.
 */
static void on_listener(void *ctx, const struct cw_netscan_listener *l)
{
	struct cw_bpfnet *b = ctx;

	if (l->cgroup_known ? !is_call(b, l->cgroup_id) :
			      l->uid == 0 || l->uid == geteuid())
		b->seen[l->port] = 1;
}

static void on_addr(void *ctx, int family, const uint8_t *addr,
		    bool broadcast)
{
	struct cw_bpfnet *b = ctx;
	struct laddr *a;

	if (b->nscan == MAX_LOCAL_ADDRS)
		return;
	a = &b->scan[b->nscan++];
	memset(a, 0, sizeof(*a));
	a->family = family;
	memcpy(a->addr, addr, family == AF_INET ? 4 : 16);
	a->kind = broadcast ? NET_LOCAL_BROADCAST : NET_LOCAL_ADDRESS;
}

static int laddr_find(const struct laddr *v, size_t n, const struct laddr *a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].family == a->family &&
		    !memcmp(v[i].addr, a->addr, sizeof(a->addr)))
			return (int)i;
	return -1;
}

static int laddr_write(struct cw_bpfnet *b, const struct laddr *a, bool add)
{
	struct bpf_map *m = a->family == AF_INET ? b->skel->maps.local4 :
						   b->skel->maps.local6;
	size_t klen = a->family == AF_INET ? 4 : 16;

	if (add)
		return bpf_map__update_elem(m, a->addr, klen, &a->kind,
					    sizeof(a->kind), BPF_ANY) ?
			       -errno : 0;
	return bpf_map__delete_elem(m, a->addr, klen, 0) && errno != ENOENT ?
		       -errno : 0;
}

/* Reads the machine's addresses and listeners again into local4, local6
 * and guarded. Called with b->lock held. */
static int refresh_local(struct cw_bpfnet *b, struct cw_error *err)
{
	size_t i;
	int ret;

	b->nscan = 0;
	ret = cw_netscan_addrs(on_addr, b);
	if (ret) {
		cw_error_set(err, "bpfnet: reading the machine's addresses: %s",
			     strerror(-ret));
		return ret;
	}
	for (i = 0; i < b->nscan; i++)
		if (laddr_find(b->addrs, b->naddrs, &b->scan[i]) < 0 ||
		    b->scan[i].kind != b->addrs[laddr_find(b->addrs, b->naddrs,
						&b->scan[i])].kind) {
			ret = laddr_write(b, &b->scan[i], true);
			if (ret)
				goto map_failed;
		}
	for (i = 0; i < b->naddrs; i++)
		if (laddr_find(b->scan, b->nscan, &b->addrs[i]) < 0) {
			ret = laddr_write(b, &b->addrs[i], false);
			if (ret)
				goto map_failed;
		}
	memcpy(b->addrs, b->scan, b->nscan * sizeof(*b->scan));
	b->naddrs = b->nscan;
	if (!b->guard_listeners)
		return 0;
	memset(b->seen, 0, NPORTS);
	ret = cw_netscan_listeners(on_listener, b);
	if (ret) {
		cw_error_set(err, "bpfnet: reading the machine's listening sockets: %s",
			     strerror(-ret));
		return ret;
	}
	ret = write_guards(b);
	if (ret)
		goto map_failed;
	return 0;
map_failed:
	cw_error_set(err, "bpfnet: updating the local services maps: %s",
		     strerror(-ret));
	return ret;
}

int cw_bpfnet_guard_port(struct cw_bpfnet *b, uint16_t port)
{
	int ret;

	if (!b || !port)
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	if (!b->fixed[port])
		b->fixed[port] = NET_GUARD_AGENT;
	ret = write_guards(b);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

struct cw_bpfnet *cw_bpfnet_open(const struct cw_bpfnet_opts *o,
				 struct cw_error *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	libbpf_print_fn_t old;
	struct cw_bpfnet *b;
	int ret;

	if (!o || o->cgroup_fd < 0 || o->ringbuf_kib > RINGBUF_MAX_KIB) {
		cw_error_set(err, "bpfnet: %s",
			     !o || o->cgroup_fd < 0 ?
				     "no cgroup to attach to" :
				     "ring buffer larger than 1 GiB");
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		cw_error_set(err, "bpfnet: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->drain_lock, NULL);
	old = cw_libbpf_log_begin();

	/* A missing btf_custom_path is never read: nothing here needs kernel
	 * BTF (no CO-RE, no typed ksyms, no tracing programs). */
	oo.btf_custom_path = o->btf_path;
	b->skel = net_bpf__open_opts(&oo);
	if (!b->skel) {
		ret = -errno;
		cw_libbpf_error(err, "opening the network BPF object", -ret);
		goto out;
	}
	ret = bpf_map__set_max_entries(b->skel->maps.events,
				       cw_libbpf_ringbuf_bytes(o->ringbuf_kib,
						RINGBUF_DEFAULT_KIB));
	if (ret) {
		cw_libbpf_error(err, "sizing the network ring buffer", -ret);
		goto out;
	}
	ret = net_bpf__load(b->skel);
	if (ret) {
		cw_libbpf_error(err, "loading the network BPF programs", -ret);
		goto out;
	}
	ret = attach_all(b, o->cgroup_fd, err);
	if (ret)
		goto out;
	b->trie_fd[T_DENY4] = bpf_map__fd(b->skel->maps.deny4);
	b->trie_fd[T_ALLOW4] = bpf_map__fd(b->skel->maps.allow4);
	b->trie_fd[T_DENY6] = bpf_map__fd(b->skel->maps.deny6);
	b->trie_fd[T_ALLOW6] = bpf_map__fd(b->skel->maps.allow6);
	b->trie_fd[T_SVC4] = bpf_map__fd(b->skel->maps.svc4);
	b->trie_fd[T_SVC6] = bpf_map__fd(b->skel->maps.svc6);
	b->guard_listeners = o->guard_listeners;
	b->seen = calloc(NPORTS, 1);
	b->addrs = calloc(MAX_LOCAL_ADDRS, sizeof(*b->addrs));
	b->scan = calloc(MAX_LOCAL_ADDRS, sizeof(*b->scan));
	if (!b->seen || !b->addrs || !b->scan) {
		ret = -ENOMEM;
		cw_error_set(err, "bpfnet: out of memory");
		goto out;
	}
	b->fixed[PORT_ENVD] = NET_GUARD_ENVD;
	b->fixed[PORT_MCP_GATEWAY] = NET_GUARD_MCP_GATEWAY;
	ret = write_guards(b);
	if (ret) {
		cw_error_set(err, "bpfnet: guarding E2B's control-plane ports: %s",
			     strerror(-ret));
		goto out;
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_event,
				 b, NULL);
	if (!b->rb) {
		ret = -errno;
		cw_libbpf_error(err, "opening the network ring buffer", -ret);
		goto out;
	}
out:
	cw_libbpf_log_end(old);
	if (ret) {
		cw_bpfnet_close(b);
		errno = -ret;
		return NULL;
	}
	return b;
}

static struct call **find_call(struct cw_bpfnet *b, uint64_t cgid)
{
	struct call **pc;

	for (pc = &b->calls; *pc; pc = &(*pc)->next)
		if ((*pc)->cgid == cgid)
			return pc;
	return pc;
}

static bool trie_v4(enum trie t)
{
	return t == T_DENY4 || t == T_ALLOW4 || t == T_SVC4;
}

static void *tkey_ptr(struct tkey *k)
{
	return trie_v4(k->trie) ? (void *)&k->k4 : (void *)&k->k6;
}

/* Deletes a call's trie entries and forgets their keys. */
static int drop_rules(struct cw_bpfnet *b, struct call *c)
{
	int ret = 0;
	size_t i;

	for (i = 0; i < c->nkeys; i++)
		if (bpf_map_delete_elem(b->trie_fd[c->keys[i].trie],
					tkey_ptr(&c->keys[i])) &&
		    errno != ENOENT && !ret)
			ret = -errno;
	free(c->keys);
	c->keys = NULL;
	c->nkeys = c->cap = 0;
	return ret;
}

/* Deletes every map entry of the call; the first error other than ENOENT. */
static int call_clear(struct cw_bpfnet *b, struct call *c)
{
	int ret = 0, r;

	/* The config first: without it the programs ignore the cgroup, so
	 * no half-removed rule set is ever consulted. */
	if (bpf_map__delete_elem(b->skel->maps.calls, &c->cgid,
				 sizeof(c->cgid), 0) &&
	    errno != ENOENT)
		ret = -errno;
	if (bpf_map__delete_elem(b->skel->maps.counters, &c->cgid,
				 sizeof(c->cgid), 0) &&
	    errno != ENOENT && !ret)
		ret = -errno;
	r = drop_rules(b, c);
	return ret ? ret : r;
}

static bool prefix_covers(const uint8_t *net, unsigned prefix,
			  const uint8_t *addr)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(net, addr, full))
		return false;
	return !rest || !((net[full] ^ addr[full]) & (uint8_t)(0xff00 >> rest));
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (int)x->lo - (int)y->lo;
}

/* Sorts and merges overlapping or adjacent ranges; the new count. */
static size_t merge_ranges(struct range *r, size_t n)
{
	size_t i, m = 0;

	qsort(r, n, sizeof(*r), range_cmp);
	for (i = 0; i < n; i++) {
		if (m && (uint32_t)r[m - 1].hi + 1 >= r[i].lo) {
			if (r[i].hi > r[m - 1].hi)
				r[m - 1].hi = r[i].hi;
			continue;
		}
		r[m++] = r[i];
	}
	return m;
}

static int push_key(struct call *c, const struct tkey *k)
{
	if (c->nkeys == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct tkey *keys = realloc(c->keys, cap * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		c->keys = keys;
		c->cap = cap;
	}
	c->keys[c->nkeys++] = *k;
	return 0;
}

/*
 * Writes one trie's entries: one per distinct CIDR, holding the merged
 * port ranges of every rule whose CIDR covers it.
 */
static int write_trie(struct cw_bpfnet *b, struct call *c, enum trie t,
		      const struct nrule *r, size_t n, const char *list,
		      struct cw_error *err)
{
	bool v4 = trie_v4(t);
	struct range *rs = NULL;
	size_t i, j, nr;
	int ret = 0;

	if (!n)
		return 0;
	rs = calloc(n, sizeof(*rs));
	if (!rs) {
		cw_error_set(err, "bpfnet: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct net_ports v;
		struct tkey k;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = r[j].prefix == r[i].prefix &&
			       !memcmp(r[j].addr, r[i].addr, 16);
		if (seen)
			continue;
		nr = 0;
		for (j = 0; j < n; j++) {
			if (r[j].prefix > r[i].prefix ||
			    !prefix_covers(r[j].addr, r[j].prefix, r[i].addr))
				continue;
			rs[nr].lo = r[j].lo;
			rs[nr].hi = r[j].hi;
			nr++;
		}
		nr = merge_ranges(rs, nr);
		if (nr > NET_MAX_RANGES) {
			cw_error_set(err, "network.%s: more than %d separate port ranges apply to %s",
				     list, NET_MAX_RANGES, r[i].text);
			ret = -E2BIG;
			goto out;
		}
		memset(&v, 0, sizeof(v));
		v.n = (uint32_t)nr;
		for (j = 0; j < nr; j++) {
			v.r[j].lo = rs[j].lo;
			v.r[j].hi = rs[j].hi;
		}
		memset(&k, 0, sizeof(k));
		k.trie = t;
		if (v4) {
			k.k4.prefixlen = 64 + r[i].prefix;
			k.k4.cgid[0] = (uint32_t)c->cgid;
			k.k4.cgid[1] = (uint32_t)(c->cgid >> 32);
			memcpy(k.k4.addr, r[i].addr, 4);
		} else {
			k.k6.prefixlen = 64 + r[i].prefix;
			k.k6.cgid[0] = (uint32_t)c->cgid;
			k.k6.cgid[1] = (uint32_t)(c->cgid >> 32);
			memcpy(k.k6.addr, r[i].addr, 16);
		}
		/* Recorded first, so a failed update is still cleaned up. */
		ret = push_key(c, &k);
		if (ret) {
			cw_error_set(err, "bpfnet: out of memory");
			goto out;
		}
		if (bpf_map_update_elem(b->trie_fd[t], tkey_ptr(&k), &v,
					BPF_ANY)) {
			ret = -errno;
			cw_error_set(err, "network.%s: installing %s: %s", list,
				     r[i].text, strerror(-ret));
			goto out;
		}
	}
out:
	free(rs);
	return ret;
}

static const uint8_t v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0,
					     0, 0, 0, 0, 0xff, 0xff };

/*
 * Splits one policy list by family. IPv6 rules inside ::ffff:0:0/96 are
 * IPv4 destinations and go to the IPv4 trie, where the programs look up
 * IPv4-mapped addresses.
 */
static int write_list(struct cw_bpfnet *b, struct call *c,
		      const struct list *l, const struct cw_net_rule *rules,
		      size_t n, struct cw_error *err)
{
	const char *list = l->name;
	struct nrule *r4 = NULL, *r6 = NULL;
	size_t i, n4 = 0, n6 = 0;
	int ret;

	r4 = calloc(n ? n : 1, sizeof(*r4));
	r6 = calloc(n ? n : 1, sizeof(*r6));
	if (!r4 || !r6) {
		cw_error_set(err, "bpfnet: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct cw_net_rule *s = &rules[i];
		struct nrule *d;

		if (s->family == AF_INET) {
			d = &r4[n4++];
			memcpy(d->addr, s->addr, 4);
			d->prefix = s->prefix > 32 ? 32 : s->prefix;
		} else if (s->family == AF_INET6 && s->prefix >= 96 &&
			   !memcmp(s->addr, v4mapped_prefix, 12)) {
			d = &r4[n4++];
			memcpy(d->addr, s->addr + 12, 4);
			d->prefix = s->prefix > 128 ? 32 : s->prefix - 96u;
		} else if (s->family == AF_INET6) {
			d = &r6[n6++];
			memcpy(d->addr, s->addr, 16);
			d->prefix = s->prefix > 128 ? 128 : s->prefix;
		} else {
			cw_error_set(err, "network.%s[%zu]: unknown family %d",
				     list, i, s->family);
			ret = -EINVAL;
			goto out;
		}
		d->text = s->text ? s->text : "?";
		if (!s->port_lo && !s->port_hi) {
			d->lo = 0;
			d->hi = 65535;
		} else if (s->port_lo && s->port_lo <= s->port_hi) {
			d->lo = s->port_lo;
			d->hi = s->port_hi;
		} else {
			cw_error_set(err, "network.%s: bad port range in %s",
				     list, d->text);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = write_trie(b, c, l->t4, r4, n4, list, err);
	if (!ret)
		ret = write_trie(b, c, l->t6, r6, n6, list, err);
out:
	free(r6);
	free(r4);
	return ret;
}

int cw_bpfnet_call_add(struct cw_bpfnet *b, uint64_t cgroup_id,
		       const struct cw_sandbox *sb, struct cw_error *err)
{
	struct net_counters zero;
	struct net_call cfg;
	struct call *c = NULL;
	int ret;

	if (!b || !cgroup_id || !sb) {
		cw_error_set(err, "bpfnet: no cgroup id or sandbox");
		return -EINVAL;
	}
	pthread_mutex_lock(&b->lock);
	if (*find_call(b, cgroup_id)) {
		cw_error_set(err, "bpfnet: cgroup %llu already has rules",
			     (unsigned long long)cgroup_id);
		ret = -EEXIST;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		cw_error_set(err, "bpfnet: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	c->cgid = cgroup_id;
	ret = refresh_local(b, err);
	if (ret)
		goto out;
	ret = write_list(b, c, &l_deny, sb->network.deny, sb->network.ndeny,
			 err);
	if (!ret)
		ret = write_list(b, c, &l_allow, sb->network.allow,
				 sb->network.nallow, err);
	if (!ret)
		ret = write_list(b, c, &l_svc, sb->network.local_services,
				 sb->network.nlocal_services, err);
	if (ret)
		goto out;
	memset(&zero, 0, sizeof(zero));
	if (bpf_map__update_elem(b->skel->maps.counters, &cgroup_id,
				 sizeof(cgroup_id), &zero, sizeof(zero),
				 BPF_ANY)) {
		ret = -errno;
		cw_error_set(err, "bpfnet: installing counters: %s",
			     strerror(-ret));
		goto out;
	}
	/* Last: the programs act on the cgroup from this update on. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.default_allow = sb->network.default_allow;
	cfg.raw_sockets = sb->network.raw_sockets;
	cfg.report_allowed = sb->network.audit_allowed;
	cfg.max_connections = sb->network.max_connections > 0 ?
				      (uint64_t)sb->network.max_connections : 0;
	cfg.max_egress_bytes = sb->network.max_egress_bytes > 0 ?
				       (uint64_t)sb->network.max_egress_bytes :
				       0;
	if (bpf_map__update_elem(b->skel->maps.calls, &cgroup_id,
				 sizeof(cgroup_id), &cfg, sizeof(cfg),
				 BPF_ANY)) {
		ret = -errno;
		cw_error_set(err, "bpfnet: installing the call's rules: %s",
			     strerror(-ret));
		goto out;
	}
	c->next = b->calls;
	b->calls = c;
	c = NULL;
out:
	if (c) {
		call_clear(b, c);
		free(c->keys);
		free(c);
	}
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int cw_bpfnet_call_remove(struct cw_bpfnet *b, uint64_t cgroup_id,
			  struct cw_bpfnet_stats *st)
{
	struct net_counters cnt;
	struct call **pc, *c;
	int ret;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!b)
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	pc = find_call(b, cgroup_id);
	c = *pc;
	if (!c) {
		ret = -ENOENT;
		goto out;
	}
	if (st && !bpf_map__lookup_elem(b->skel->maps.counters, &cgroup_id,
					sizeof(cgroup_id), &cnt, sizeof(cnt),
					0)) {
		st->connections = cnt.connections;
		st->denied = cnt.denied;
		st->egress_bytes = cnt.egress_bytes;
		st->egress_exhausted = cnt.egress_exhausted;
		st->connections_exhausted = cnt.connections_exhausted;
	}
	ret = call_clear(b, c);
	*pc = c->next;
	free(c->keys);
	free(c);
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/*
 * A call has ended but its sockets may not have: data a command queued
 * before it exited keeps being sent by the kernel. Sealing keeps the
 * call's entries but drops all of its egress from now on; the caller
 * removes them later, once such sockets are surely gone.
 */
int cw_bpfnet_call_seal(struct cw_bpfnet *b, uint64_t cgroup_id,
			struct cw_bpfnet_stats *st)
{
	struct net_counters cnt;
	struct net_call cfg;
	struct call *c;
	int ret = 0;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!b)
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	c = *find_call(b, cgroup_id);
	if (!c) {
		ret = -ENOENT;
		goto out;
	}
	if (bpf_map__lookup_elem(b->skel->maps.counters, &cgroup_id,
				 sizeof(cgroup_id), &cnt, sizeof(cnt), 0) ||
	    bpf_map__lookup_elem(b->skel->maps.calls, &cgroup_id,
				 sizeof(cgroup_id), &cfg, sizeof(cfg), 0)) {
		ret = -errno;
		goto out;
	}
	if (st) {
		st->connections = cnt.connections;
		st->denied = cnt.denied;
		st->egress_bytes = cnt.egress_bytes;
		st->egress_exhausted = cnt.egress_exhausted;
		st->connections_exhausted = cnt.connections_exhausted;
	}
	/* An exhausted one-byte budget drops every packet, silently. */
	cfg.default_allow = 0;
	cfg.max_egress_bytes = 1;
	cnt.egress_exhausted = 1;
	if (bpf_map__update_elem(b->skel->maps.counters, &cgroup_id,
				 sizeof(cgroup_id), &cnt, sizeof(cnt), 0) ||
	    bpf_map__update_elem(b->skel->maps.calls, &cgroup_id,
				 sizeof(cgroup_id), &cfg, sizeof(cfg), 0)) {
		ret = -errno;
		goto out;
	}
	/* Denied by default now, the rules admit nothing: they go at once,
	 * so the minutes a sealed call lingers cost the kernel and the agent
	 * only its config and counters, not one trie entry per CIDR. */
	ret = drop_rules(b, c);
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int cw_bpfnet_drain(struct cw_bpfnet *b,
		    void (*cb)(void *ctx, const struct cw_bpfnet_event *ev),
		    void *ctx)
{
	int ret;

	if (!b)
		return -EINVAL;
	pthread_mutex_lock(&b->drain_lock);
	b->cb = cb;
	b->cb_ctx = ctx;
	b->ndrained = 0;
	ret = ring_buffer__consume(b->rb);
	if (ret >= 0)
		ret = b->ndrained;
	b->cb = NULL;
	b->cb_ctx = NULL;
	pthread_mutex_unlock(&b->drain_lock);
	return ret;
}

int cw_bpfnet_fd(const struct cw_bpfnet *b)
{
	return b ? ring_buffer__epoll_fd(b->rb) : -EINVAL;
}

uint64_t cw_bpfnet_lost(const struct cw_bpfnet *b)
{
	uint64_t *v, sum = 0;
	uint32_t zero = 0;
	int i, ncpu;

	if (!b)
		return 0;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	if (!bpf_map__lookup_elem(b->skel->maps.lost, &zero, sizeof(zero), v,
				  (size_t)ncpu * sizeof(*v), 0))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}
