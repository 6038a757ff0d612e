/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the HTTP transport checks in a request's headers before it reads a
 * body: the Origin against the allow-list, the bearer token against the
 * grants, the MCP-Protocol-Version, the Content-Type, the Accept and the
 * Content-Length. Each check is a pure function of the header's value
 * (NULL when the header is absent); the order of the checks and the
 * refusals they lead to are the request routing's (http.c).
 */
#ifndef CW_SERVER_HTTP_HEADERS_H
#define CW_SERVER_HTTP_HEADERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/grant.h"

#define CW_HTTP_SESSION_ID_HEADER "Mcp-Session-Id"
#define CW_HTTP_VERSION_HEADER "MCP-Protocol-Version"
/* The protocol versions served, newest first, as refusals list them; the
 * table cw_http_version_supported reads holds the same. */
#define CW_HTTP_VERSIONS "2025-11-25, 2025-06-18, 2025-03-26"

/* origin is one of the n allowed ones (case-insensitive). */
bool cw_http_origin_allowed(const char *const *allowed, size_t n,
			    const char *origin);

/* v is a protocol version this server speaks. */
bool cw_http_version_supported(const char *v);

/* The index of the grant whose token the Authorization header carries
 * ("Bearer TOKEN", spaces around the token ignored), or -1. */
int cw_http_authenticate(const struct cw_grants *g, const char *auth);

/* The Content-Type is application/json, parameters allowed. */
bool cw_http_json_content(const char *content_type);

/* The Accept header allows a JSON answer (no Accept allows anything). */
bool cw_http_accepts_json(const char *accept);
/* The Accept header allows an SSE stream. */
bool cw_http_accepts_sse(const char *accept);

/* The Content-Length is a number over max; it goes to *len then. */
bool cw_http_length_over(const char *content_length, size_t max,
			 uint64_t *len);

#endif
