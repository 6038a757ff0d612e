/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MCP Streamable HTTP transport (protocol 2025-03-26 to 2025-11-25) on
 * libmicrohttpd, event-driven (two epoll threads; a request waiting for its
 * answer is suspended and holds no thread): a command that runs long holds
 * only its own connection. One endpoint, /mcp:
 *   POST    one JSON-RPC message; a request is answered with JSON, or with
 *           an SSE stream for tools/call when the client accepts one;
 *           notifications and responses get 202
 *   GET     405: this server sends nothing outside answers to requests
 *   DELETE  ends the session named by Mcp-Session-Id
 * Every request needs a bearer token of a grant in the token file (401
 * otherwise, audited, nothing decided); a present Origin must be on the
 * allow-list (403, audited); initialize opens a session whose id every later
 * request must carry (400 without, 404 when unknown or of another grant).
 * Connections that have not presented a matching token are bounded per
 * peer and in total, and given a deadline (http_connections.h).
 */
#ifndef CW_SERVER_HTTP_H
#define CW_SERVER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "lib/util.h"

#define CW_HTTP_DEFAULT_HOST "127.0.0.1"
#define CW_HTTP_DEFAULT_TIMEOUT_S 30
#define CW_HTTP_DEFAULT_MAX_CONNECTIONS 256
#define CW_HTTP_DEFAULT_MAX_SESSIONS 1024
#define CW_HTTP_DEFAULT_SESSION_IDLE_S 3600
#define CW_HTTP_DEFAULT_HEADER_TIMEOUT_S 10
#define CW_HTTP_DEFAULT_MAX_PEER_CONNECTIONS 32
#define CW_HTTP_PATH "/mcp"

struct cw_http_opts {
	const char *listen;		/* [HOST:]PORT, [V6]:PORT; port 0 picks one */
	const char *tokens_path;	/* the token file (required) */
	const char *policy_path;	/* the server's policy; NULL: embedded */
	const char *const *origins;	/* allowed Origin values */
	size_t norigins;
	size_t max_request;		/* largest request body, bytes */
	unsigned timeout_s;		/* idle connection, and to send a body */
	unsigned max_connections;
	unsigned max_sessions;
	unsigned session_idle_s;	/* a session unused this long ends */
	unsigned max_peer_connections;	/* unauthenticated, per peer */
	unsigned header_timeout_s;	/* to present a matching token */
};

struct cw_http;

/* Loads the token file and the grants' policies and starts listening. NULL
 * with what went wrong in diag. The engine must outlive the server. */
struct cw_http *cw_http_start(struct cw_engine *e,
			      const struct cw_http_opts *o,
			      struct cw_diag *diag);

/* The port listened on (useful with port 0) and a printable address. */
uint16_t cw_http_port(const struct cw_http *h);
const char *cw_http_address(const struct cw_http *h);

/* Re-reads the token file, the server's policy and every grant's policy.
 * All or nothing: on any error the running configuration stays, and diag
 * says why. Sessions, calls in progress and counters are untouched.
 * 0 or -EINVAL. Audited either way. */
int cw_http_reload(struct cw_http *h, struct cw_diag *diag);

/* Stops listening, waits for calls in progress, frees every session. */
void cw_http_stop(struct cw_http *h);

#endif
