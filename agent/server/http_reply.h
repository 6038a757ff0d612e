/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the HTTP transport answers with when the answer is known whole: a
 * body (with the headers its status calls for), a JSON-RPC message, or a
 * refusal (an HTTP status and a JSON-RPC error saying why), audited when
 * it refuses who is asking.
 */
#ifndef CW_SERVER_HTTP_REPLY_H
#define CW_SERVER_HTTP_REPLY_H

#include <jansson.h>

#include "engine/engine.h"
#include "server/mhd.h"

/* Queues status with body (ours to free; NULL: empty) of this type (NULL:
 * none) and, when not NULL, the Mcp-Session-Id header. A 401 says how to
 * authenticate, a 405 which methods are allowed. */
enum MHD_Result cw_http_send_body(struct MHD_Connection *c, unsigned status,
				  const char *type, char *body,
				  const char *session_id);

/* The same with msg (taken) as application/json. */
enum MHD_Result cw_http_send_json(struct MHD_Connection *c, unsigned status,
				  json_t *msg, const char *session_id);

/* An HTTP refusal: status plus a JSON-RPC error of this code saying why. */
enum MHD_Result cw_http_refuse(struct MHD_Connection *c, unsigned status,
			       int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A refusal of who is asking (token, origin): an "access" record of the
 * audit log says who was refused and why, then the refusal is sent. */
enum MHD_Result cw_http_refuse_audited(struct cw_engine *e,
				       struct MHD_Connection *c,
				       unsigned status, const char *method,
				       const char *why, const char *origin);

#endif
