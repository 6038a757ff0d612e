// SPDX-License-Identifier: Apache-2.0
/* Whole answers and refusals of the HTTP transport (see http_reply.h). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "audit/types.h"
#include "audit/audit.h"
#include "lib/json.h"
#include "server/http.h"
#include "server/http_headers.h"
#include "server/http_reply.h"
#include "server/mcp.h"

/* Room for a refusal's sentence. */
#define REFUSAL_MAX 512
/* "[v6]:port" of a client, or "unknown". */
#define REMOTE_MAX 80
/* A port number in decimal, and its terminator. */
#define PORT_MAX 8

enum MHD_Result cw_http_send_body(struct MHD_Connection *c, unsigned status,
				  const char *type, char *body,
				  const char *session_id)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body,
					    body ? MHD_RESPMEM_MUST_FREE :
						   MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (session_id)
		MHD_add_response_header(r, CW_HTTP_SESSION_ID_HEADER,
					session_id);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"cmdwarden\"");
	/* Who was refused keeps no connection (and no slot) for later. */
	if (status == MHD_HTTP_UNAUTHORIZED || status == MHD_HTTP_FORBIDDEN)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
					"POST, DELETE");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result cw_http_send_json(struct MHD_Connection *c, unsigned status,
				  json_t *msg, const char *session_id)
{
	char *s = msg ? cw_json_compact(msg) : NULL;

	json_decref(msg);
	if (!s)
		return MHD_NO;
	return cw_http_send_body(c, status, "application/json", s, session_id);
}

enum MHD_Result cw_http_refuse(struct MHD_Connection *c, unsigned status,
			       int code, const char *fmt, ...)
{
	char msg[REFUSAL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cw_http_send_json(c, status, cw_mcp_error(NULL, code, "%s", msg),
				 NULL);
}

static void client_address(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char host[INET6_ADDRSTRLEN] = "", port[PORT_MAX] = "";
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(buf, len, "unknown");
	if (!sa)
		return;
	if (getnameinfo(sa,
			sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						    sizeof(struct sockaddr_in),
			host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%s" :
							       "%s:%s",
			 host, port);
}

/* The record's sync is left to the next synced record: a caller without a
 * token must not be able to make the agent flush its disk at will. */
enum MHD_Result cw_http_refuse_audited(struct cw_engine *e,
				       struct MHD_Connection *c,
				       unsigned status, const char *method,
				       const char *why, const char *origin)
{
	struct cw_error err;
	char remote[REMOTE_MAX];
	json_t *rec;

	client_address(c, remote, sizeof(remote));
	rec = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "event", "refused",
			"status", (int)status, "reason", why, "remote", remote,
			"method", method, "path", CW_HTTP_PATH);
	if (rec && origin)
		json_object_set_new(rec, "origin", cw_json_bytes(origin,
								 strlen(origin)));
	if (!rec ||
	    cw_engine_audit(e, CW_AUDIT_T(ACCESS), rec, CW_AUDIT_DEFER_SYNC, &err) < 0)
		fprintf(stderr, "cmdwarden serve: could not audit a refused request from %s: %s\n",
			remote, rec ? err.text : "out of memory");
	json_decref(rec);
	return cw_http_refuse(c, status, CW_JSONRPC_INVALID_REQUEST, "%s", why);
}
