/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP transport's connections, counted by peer, so that whoever holds
 * many connections open without a bearer token (half-open, idle, or
 * trickling its headers) cannot lock out the clients that hold one:
 *   - a connection that has not presented a matching token is
 *     unauthenticated; one that has is never closed here;
 *   - a peer (an IPv4 address, all of 127.0.0.0/8 as one, an IPv6 /64) may
 *     hold max_peer unauthenticated connections older than a grace second
 *     or two; beyond that its oldest ones are closed;
 *   - unauthenticated connections together take at most three quarters of
 *     max_connections, and never the last free one: a new connection over
 *     either bound closes the oldest unauthenticated connection of the peer
 *     that holds the most, so the rest stays free for authenticated ones
 *     and a newcomer always gets in;
 *   - an unauthenticated connection is closed header_timeout_s after it was
 *     accepted, however slowly it keeps sending (slowloris).
 * A connection is closed by shutting its socket down; libmicrohttpd sees
 * the end of it and closes it as usual. What was closed is audited as one
 * "access" record per interval with counts by reason and peer, never one
 * record per connection. Likewise the requests refused for their token or
 * origin: the first few of an interval get a record each, the rest are
 * counted in one.
 */
#ifndef CW_SERVER_HTTP_CONNECTIONS_H
#define CW_SERVER_HTTP_CONNECTIONS_H

#include <stdbool.h>
#include <sys/socket.h>

#include "engine/engine.h"

struct cw_http_conn_limits {
	unsigned max_connections;	/* all connections, as libmicrohttpd's */
	unsigned max_peer;		/* unauthenticated ones per peer */
	unsigned header_timeout_s;	/* to present a matching token */
};

struct cw_http_conns;
struct cw_http_conn;

/* NULL with errno. The engine (for the audit) must outlive it. */
struct cw_http_conns *cw_http_conns_new(struct cw_engine *e,
					const struct cw_http_conn_limits *l);
/* Starts the thread that enforces the deadline and the per-peer limit and
 * writes the records; 0 or -errno. */
int cw_http_conns_start(struct cw_http_conns *t);
/* Stops the thread and writes what was closed since the last record.
 * Every connection must have been closed (cw_http_conns_closed). NULL is
 * ignored. */
void cw_http_conns_free(struct cw_http_conns *t);

/* A connection was accepted on socket fd from sa; it may close others.
 * The record to pass to the calls below, or NULL when out of memory (then
 * the connection is shut down at once). */
struct cw_http_conn *cw_http_conns_opened(struct cw_http_conns *t, int fd,
					  const struct sockaddr *sa);
/* The connection presented a matching bearer token; NULL is ignored. */
void cw_http_conns_authenticated(struct cw_http_conns *t,
				 struct cw_http_conn *c);
/* A request is refused (401 or 403): true when it gets a record of its
 * own, false when the interval's share is spent and it is counted into
 * the interval's record instead. */
bool cw_http_conns_refusal_recorded(struct cw_http_conns *t, unsigned status);
/* libmicrohttpd is about to close its socket; frees c. NULL is ignored. */
void cw_http_conns_closed(struct cw_http_conns *t, struct cw_http_conn *c);

#endif
