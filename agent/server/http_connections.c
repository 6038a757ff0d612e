// SPDX-License-Identifier: Apache-2.0
/*
 * The HTTP transport's connections by peer (see http_connections.h).
 *
 * Why not libmicrohttpd's own bounds: MHD_OPTION_PER_IP_CONNECTION_LIMIT
 * counts authenticated connections too (every client behind one proxy, or
 * on loopback beside the command that attacks, shares an address) and
 * refuses the newcomer, so whoever holds connections first wins; and
 * MHD_OPTION_CONNECTION_TIMEOUT is an idle timeout that each trickled byte
 * restarts. Here the newcomer wins instead (a client that means to ask
 * sends its headers at once; a holder's connections are the old ones), the
 * deadline counts from the accept, and only connections without a matching
 * token are ever closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <jansson.h>

#include "audit/audit.h"
#include "audit/types.h"
#include "lib/util.h"
#include "server/http_connections.h"

/* How often the deadline and the per-peer limit are enforced. */
#define TICK_MS 250
/* A peer's connections younger than this are spared by its limit: a burst
 * of new connections from one client, whose headers are on their way. */
#define GRACE_US 2000000
/* At most one record of closed connections per this many seconds. */
#define RECORD_INTERVAL_S 10
/* Refused requests that get a record each, per interval; the rest are
 * counted. */
#define REFUSALS_RECORDED 20
/* Peers named in a record; the others are counted together. */
#define RECORD_PEERS 16
#define PEER_BUCKETS 256
/* "xxxx:xxxx:xxxx:xxxx::/64" and its terminator, with room. */
#define PEER_NAME_MAX 64

enum close_reason {
	CLOSED_PEER_LIMIT,
	CLOSED_UNAUTHENTICATED_LIMIT,
	CLOSED_HEADER_TIMEOUT,
	CLOSED_REASONS,
};

static const char *const reason_names[CLOSED_REASONS] = {
	[CLOSED_PEER_LIMIT] = "peer_limit",
	[CLOSED_UNAUTHENTICATED_LIMIT] = "unauthenticated_limit",
	[CLOSED_HEADER_TIMEOUT] = "header_timeout",
};

/* A peer as counted: an IPv4 address (127.0.0.0/8 as 127.0.0.0), ::1, or
 * the /64 of another IPv6 address; family 0 when the address is unknown. */
struct peer_key {
	uint8_t family;
	uint8_t addr[16];
};

struct peer {
	struct peer_key key;
	struct peer *next;		/* in its bucket */
	struct cw_http_conn *oldest, *newest; /* its unauthenticated ones */
	unsigned n;
};

struct cw_http_conn {
	int fd;
	int64_t accepted_us;
	struct peer *peer;		/* NULL: authenticated, or closing */
	struct cw_http_conn *prev, *next;	/* in its peer's list */
	struct cw_http_conn *all_prev, *all_next; /* in every one's list */
	bool closing;			/* shut down by us */
};

/* What was closed since the last record. */
struct closed_sum {
	unsigned by_reason[CLOSED_REASONS];
	struct {
		struct peer_key key;
		unsigned n;
	} peers[RECORD_PEERS];
	unsigned npeers;
	unsigned others;		/* closed of peers not listed */
	int64_t since_us;
};

struct cw_http_conns {
	struct cw_engine *engine;
	struct cw_http_conn_limits l;
	unsigned max_unauthenticated;	/* three quarters of max_connections */

	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t stop_cond;
	bool stopping;
	bool started;
	pthread_t thread;
	struct peer *buckets[PEER_BUCKETS];
	struct cw_http_conn *oldest, *newest; /* unauthenticated, by age */
	unsigned open;			/* connections not being closed */
	unsigned unauthenticated;
	struct closed_sum sum;
	int64_t refusals_since_us;	/* the interval of the recorded ones */
	unsigned refusals_recorded;
	unsigned refused_401, refused_403; /* counted, not recorded */
	int64_t counted_since_us;
};

static void peer_key_of(const struct sockaddr *sa, struct peer_key *k)
{
	static const uint8_t loopback6[16] = { [15] = 1 };
	const uint8_t *v4 = NULL;

	memset(k, 0, sizeof(*k));
	if (sa && sa->sa_family == AF_INET) {
		v4 = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			v4 = a->s6_addr + 12;
		} else {
			k->family = AF_INET6;
			/* A host is given a whole /64: one peer. */
			memcpy(k->addr, a->s6_addr,
			       memcmp(a->s6_addr, loopback6, 16) == 0 ? 16 : 8);
		}
	}
	if (!v4)
		return;
	k->family = AF_INET;
	/* Every loopback address is this machine: one peer, so a command
	 * cannot multiply its share by binding 127.0.0.2, 127.0.0.3 ... */
	if (v4[0] == 127)
		k->addr[0] = 127;
	else
		memcpy(k->addr, v4, 4);
}

static void peer_name(const struct peer_key *k, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (k->family == AF_INET && k->addr[0] == 127)
		snprintf(buf, len, "127.0.0.0/8");
	else if (k->family == AF_INET)
		snprintf(buf, len, "%s", inet_ntop(AF_INET, k->addr, a, sizeof(a)));
	else if (k->family == AF_INET6 && k->addr[15] == 1)
		snprintf(buf, len, "::1");
	else if (k->family == AF_INET6)
		snprintf(buf, len, "%s/64",
			 inet_ntop(AF_INET6, k->addr, a, sizeof(a)));
	else
		snprintf(buf, len, "unknown");
}

static unsigned peer_bucket(const struct peer_key *k)
{
	uint32_t h = 2166136261u;
	size_t i;

	h = (h ^ k->family) * 16777619u;
	for (i = 0; i < sizeof(k->addr); i++)
		h = (h ^ k->addr[i]) * 16777619u;
	return h % PEER_BUCKETS;
}

static struct peer *peer_get(struct cw_http_conns *t, const struct peer_key *k)
{
	struct peer **b = &t->buckets[peer_bucket(k)], *p;

	for (p = *b; p; p = p->next)
		if (memcmp(&p->key, k, sizeof(*k)) == 0)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->key = *k;
	p->next = *b;
	*b = p;
	return p;
}

static void peer_drop(struct cw_http_conns *t, struct peer *p)
{
	struct peer **b = &t->buckets[peer_bucket(&p->key)];

	while (*b != p)
		b = &(*b)->next;
	*b = p->next;
	free(p);
}

/* c is unauthenticated and now the newest of its peer and of all. */
static void link_unauthenticated(struct cw_http_conns *t,
				 struct cw_http_conn *c, struct peer *p)
{
	c->peer = p;
	c->prev = p->newest;
	if (p->newest)
		p->newest->next = c;
	else
		p->oldest = c;
	p->newest = c;
	p->n++;
	c->all_prev = t->newest;
	if (t->newest)
		t->newest->all_next = c;
	else
		t->oldest = c;
	t->newest = c;
	t->unauthenticated++;
}

/* c no longer counts as unauthenticated; its peer goes with its last. */
static void unlink_unauthenticated(struct cw_http_conns *t,
				   struct cw_http_conn *c)
{
	struct peer *p = c->peer;

	if (!p)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->oldest = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		p->newest = c->prev;
	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		t->oldest = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	else
		t->newest = c->all_prev;
	c->prev = c->next = c->all_prev = c->all_next = NULL;
	c->peer = NULL;
	t->unauthenticated--;
	if (--p->n == 0)
		peer_drop(t, p);
}

static void sum_add(struct closed_sum *s, const struct peer_key *k,
		    enum close_reason why, int64_t now)
{
	unsigned i;

	if (!s->by_reason[0] && !s->by_reason[1] && !s->by_reason[2])
		s->since_us = now;
	s->by_reason[why]++;
	for (i = 0; i < s->npeers; i++)
		if (memcmp(&s->peers[i].key, k, sizeof(*k)) == 0) {
			s->peers[i].n++;
			return;
		}
	if (s->npeers == RECORD_PEERS) {
		s->others++;
		return;
	}
	s->peers[s->npeers].key = *k;
	s->peers[s->npeers++].n = 1;
}

/* Shuts c down: libmicrohttpd sees its end at once and closes it (its
 * socket stays open until cw_http_conns_closed, which takes the lock). */
static void close_conn(struct cw_http_conns *t, struct cw_http_conn *c,
		       enum close_reason why, int64_t now)
{
	struct peer_key k = c->peer->key;

	unlink_unauthenticated(t, c);
	c->closing = true;
	t->open--;
	sum_add(&t->sum, &k, why, now);
	shutdown(c->fd, SHUT_RDWR);
}

/* The oldest unauthenticated connection of the peer that holds the most
 * (of two that hold as many, the one whose oldest is older), other than
 * the newcomer except; NULL when there is none. */
static struct cw_http_conn *heaviest_oldest(struct cw_http_conns *t,
					    const struct cw_http_conn *except)
{
	struct cw_http_conn *best = NULL;
	unsigned i, best_n = 0;
	struct peer *p;

	for (i = 0; i < PEER_BUCKETS; i++)
		for (p = t->buckets[i]; p; p = p->next) {
			struct cw_http_conn *c = p->oldest;

			if (c == except)
				c = c->next;
			if (!c)
				continue;
			if (p->n > best_n ||
			    (p->n == best_n && c->accepted_us < best->accepted_us)) {
				best = c;
				best_n = p->n;
			}
		}
	return best;
}

/* A peer over its limit loses its oldest connections past the grace. */
static void trim_peer(struct cw_http_conns *t, struct peer *p, int64_t now)
{
	while (p->n > t->l.max_peer &&
	       now - p->oldest->accepted_us >= GRACE_US)
		close_conn(t, p->oldest, CLOSED_PEER_LIMIT, now);
}

struct cw_http_conn *cw_http_conns_opened(struct cw_http_conns *t, int fd,
					  const struct sockaddr *sa)
{
	struct cw_http_conn *c = calloc(1, sizeof(*c)), *v;
	int64_t now = cw_mono_us();
	struct peer_key k;
	struct peer *p;

	peer_key_of(sa, &k);
	pthread_mutex_lock(&t->lock);
	p = c ? peer_get(t, &k) : NULL;
	if (!p) {
		/* What cannot be counted is not served. */
		pthread_mutex_unlock(&t->lock);
		free(c);
		shutdown(fd, SHUT_RDWR);
		return NULL;
	}
	c->fd = fd;
	c->accepted_us = now;
	t->open++;
	link_unauthenticated(t, c, p);
	trim_peer(t, p, now);
	/* Over the unauthenticated share, or taking the last free slot: the
	 * heaviest peer makes room, so the next newcomer finds a slot too. */
	while ((t->unauthenticated > t->max_unauthenticated ||
		t->open >= t->l.max_connections) &&
	       (v = heaviest_oldest(t, c)))
		close_conn(t, v, CLOSED_UNAUTHENTICATED_LIMIT, now);
	pthread_mutex_unlock(&t->lock);
	return c;
}

void cw_http_conns_authenticated(struct cw_http_conns *t,
				 struct cw_http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&t->lock);
	unlink_unauthenticated(t, c);
	pthread_mutex_unlock(&t->lock);
}

void cw_http_conns_closed(struct cw_http_conns *t, struct cw_http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&t->lock);
	unlink_unauthenticated(t, c);
	if (!c->closing)
		t->open--;
	pthread_mutex_unlock(&t->lock);
	free(c);
}

/* One "access" record for what s counts; the flush is left to the next
 * synced record, as for every access record. */
static void write_record(struct cw_engine *e, const struct closed_sum *s,
			 int64_t now)
{
	json_t *rec, *reasons = json_object(), *remotes = json_object();
	char name[PEER_NAME_MAX];
	struct cw_error err;
	unsigned i, count = 0;

	for (i = 0; i < CLOSED_REASONS; i++) {
		count += s->by_reason[i];
		json_object_set_new(reasons, reason_names[i],
				    json_integer(s->by_reason[i]));
	}
	for (i = 0; i < s->npeers; i++) {
		peer_name(&s->peers[i].key, name, sizeof(name));
		json_object_set_new(remotes, name, json_integer(s->peers[i].n));
	}
	rec = json_pack("{s:s, s:s, s:I, s:o, s:o, s:I, s:I}", "event",
			"closed", "reason",
			"connections closed before they presented a valid bearer token",
			"count", (json_int_t)count, "reasons", reasons,
			"remotes", remotes, "other_remotes",
			(json_int_t)s->others, "seconds",
			(json_int_t)((now - s->since_us) / 1000000));
	if (!rec || cw_engine_audit(e, CW_AUDIT_T(ACCESS), rec,
				    CW_AUDIT_DEFER_SYNC, &err) < 0)
		fprintf(stderr, "cmdwarden serve: could not audit %u closed connections: %s\n",
			count, rec ? err.text : "out of memory");
	json_decref(rec);
}

bool cw_http_conns_refusal_recorded(struct cw_http_conns *t, unsigned status)
{
	int64_t now = cw_mono_us();
	bool recorded = false;

	pthread_mutex_lock(&t->lock);
	if (now - t->refusals_since_us >= RECORD_INTERVAL_S * 1000000LL) {
		t->refusals_since_us = now;
		t->refusals_recorded = 0;
	}
	if (t->refusals_recorded < REFUSALS_RECORDED) {
		t->refusals_recorded++;
		recorded = true;
	} else {
		if (!t->refused_401 && !t->refused_403)
			t->counted_since_us = now;
		if (status == 401)
			t->refused_401++;
		else
			t->refused_403++;
	}
	pthread_mutex_unlock(&t->lock);
	return recorded;
}

/* Under the lock: the record of the refusals counted, when due. */
static void maybe_record_refusals(struct cw_http_conns *t, int64_t now,
				  bool force)
{
	struct cw_error err;
	unsigned n401 = t->refused_401, n403 = t->refused_403;
	json_t *rec;

	if (!n401 && !n403)
		return;
	if (!force && now - t->counted_since_us < RECORD_INTERVAL_S * 1000000LL)
		return;
	t->refused_401 = t->refused_403 = 0;
	pthread_mutex_unlock(&t->lock);
	rec = json_pack("{s:s, s:s, s:I, s:{s:I, s:I}, s:I}", "event",
			"refused", "reason",
			"requests refused for their token or origin past the ones recorded one by one",
			"count", (json_int_t)(n401 + n403), "statuses", "401",
			(json_int_t)n401, "403", (json_int_t)n403, "seconds",
			(json_int_t)((now - t->counted_since_us) / 1000000));
	if (!rec || cw_engine_audit(t->engine, CW_AUDIT_T(ACCESS), rec,
				    CW_AUDIT_DEFER_SYNC, &err) < 0)
		fprintf(stderr, "cmdwarden serve: could not audit %u refused requests: %s\n",
			n401 + n403, rec ? err.text : "out of memory");
	json_decref(rec);
	pthread_mutex_lock(&t->lock);
}

/* Under the lock: takes the counts when a record is due (or when forced)
 * and writes it without the lock. */
static void maybe_record(struct cw_http_conns *t, int64_t now, bool force)
{
	const struct closed_sum *s = &t->sum;
	struct closed_sum taken;

	maybe_record_refusals(t, now, force);
	if (!s->by_reason[0] && !s->by_reason[1] && !s->by_reason[2])
		return;
	if (!force && now - s->since_us < RECORD_INTERVAL_S * 1000000LL)
		return;
	taken = t->sum;
	memset(&t->sum, 0, sizeof(t->sum));
	pthread_mutex_unlock(&t->lock);
	write_record(t->engine, &taken, now);
	pthread_mutex_lock(&t->lock);
}

static void enforce(struct cw_http_conns *t, int64_t now)
{
	int64_t deadline = (int64_t)t->l.header_timeout_s * 1000000;
	struct peer *p, *next;
	unsigned i;

	while (t->oldest && now - t->oldest->accepted_us >= deadline)
		close_conn(t, t->oldest, CLOSED_HEADER_TIMEOUT, now);
	for (i = 0; i < PEER_BUCKETS; i++)
		for (p = t->buckets[i]; p; p = next) {
			next = p->next;	/* trim_peer leaves p at max_peer */
			trim_peer(t, p, now);
		}
}

static void *enforcer_main(void *arg)
{
	struct cw_http_conns *t = arg;
	struct timespec until;

	pthread_mutex_lock(&t->lock);
	while (!t->stopping) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->stop_cond, &t->lock, &until);
		if (t->stopping)
			break;
		enforce(t, cw_mono_us());
		maybe_record(t, cw_mono_us(), false);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct cw_http_conns *cw_http_conns_new(struct cw_engine *e,
					const struct cw_http_conn_limits *l)
{
	struct cw_http_conns *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (!t)
		return NULL;
	t->engine = e;
	t->l = *l;
	t->max_unauthenticated = l->max_connections - l->max_connections / 4;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->stop_cond, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

int cw_http_conns_start(struct cw_http_conns *t)
{
	int ret = -pthread_create(&t->thread, NULL, enforcer_main, t);

	t->started = ret == 0;
	return ret;
}

void cw_http_conns_free(struct cw_http_conns *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	pthread_cond_broadcast(&t->stop_cond);
	pthread_mutex_unlock(&t->lock);
	if (t->started)
		pthread_join(t->thread, NULL);
	pthread_mutex_lock(&t->lock);
	maybe_record(t, cw_mono_us(), true);
	pthread_mutex_unlock(&t->lock);
	pthread_cond_destroy(&t->stop_cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
