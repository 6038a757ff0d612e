/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MCP server core, independent of transport: JSON-RPC 2.0 messages in,
 * responses out. One struct cw_mcp per MCP session.
 */
#ifndef CW_SERVER_MCP_H
#define CW_SERVER_MCP_H

#include <stddef.h>

#include <jansson.h>

#include "engine/engine.h"
#include "server/tools.h"

#define CW_JSONRPC_PARSE_ERROR -32700
#define CW_JSONRPC_INVALID_REQUEST -32600
#define CW_JSONRPC_METHOD_NOT_FOUND -32601
#define CW_JSONRPC_INVALID_PARAMS -32602
#define CW_JSONRPC_INTERNAL_ERROR -32603

#define CW_MCP_LATEST_VERSION "2025-11-25"

/* Most tools/call requests of one session in flight at once. */
#define CW_MCP_MAX_INFLIGHT 256
/* Progress notifications, when a request asks for them, this often. */
#define CW_MCP_PROGRESS_MS 2000
/* How long an elicitation waits for the person's answer. */
#define CW_MCP_ASK_TIMEOUT_S 600

struct cw_mcp;

/*
 * How a session sends to its client outside a direct answer: responses of
 * calls that ran on the worker pool, notifications (progress), and
 * requests (elicitation/create). The transport writes each message whole;
 * it may be called from any thread. related is the id of the client's
 * request the message belongs to (NULL when none), so that a transport
 * with one stream per request (Streamable HTTP) can route it. It does not
 * take msg. 0 or -errno.
 */
struct cw_mcp_out {
	int (*send)(void *ctx, json_t *msg, json_t *related);
	/* Optional: the response to related, serialized (text is the
	 * callee's to free, NULL when it could not be built: out of
	 * memory). A refusal is serialized on the thread that decided it, so
	 * telling it once durable costs little. */
	int (*send_final)(void *ctx, char *text, json_t *related);
	void *ctx;
	/* A call the policy refuses outright is answered through send too,
	 * from the audit log's flusher thread once its decision record is
	 * durable, so the thread that handed it in never waits for the disk.
	 * Otherwise it is answered at once, after that wait. */
	bool refusals_later;
};

/* grant: the caller's credential name ("local" for stdio). */
struct cw_mcp *cw_mcp_new(struct cw_engine *e, const char *grant,
			  const char *session_id);
/* Waits for the session's calls in flight (cw_mcp_drain), then frees. */
void cw_mcp_free(struct cw_mcp *m);

/* Where a session finds the rules of its grant, asked at every request so
 * that a reload takes effect in sessions already open: a new reference, or
 * NULL for the engine's default rules. Without it, always the default. */
typedef struct cw_rules *(*cw_mcp_rules_fn)(void *ctx, const char *grant);
void cw_mcp_set_rules_source(struct cw_mcp *m, cw_mcp_rules_fn fn,
			     void *ctx);

/* With an out channel, tools/call requests the engine cannot answer at
 * submission run on the threads of the worker pool (workers.h) and are
 * answered through it, so one slow command blocks nothing else; the
 * session also honours notifications/cancelled, sends progress and asks
 * for approvals by elicitation. Without, calls run inline. Set before the
 * first message. */
void cw_mcp_set_out(struct cw_mcp *m, const struct cw_mcp_out *out);

/* Waits until every call in flight has been answered. Cancel first to
 * stop them: cw_mcp_cancel_all. */
void cw_mcp_drain(struct cw_mcp *m);
/* Cancels every call in flight (the client is gone); pending elicitations
 * end as cancelled. */
void cw_mcp_cancel_all(struct cw_mcp *m);
/* The client sends nothing more: elicitations waiting for its answer end
 * as cancelled (their calls are denied); running calls go on. */
void cw_mcp_end_input(struct cw_mcp *m);

/* Handles one message as raw bytes (parse errors answered with -32700).
 * Returns the response to send (new reference) or NULL when none is due
 * (notifications, responses, calls answered later through out). */
json_t *cw_mcp_handle_raw(struct cw_mcp *m, const char *buf, size_t len);
json_t *cw_mcp_handle(struct cw_mcp *m, json_t *msg);

/* A JSON-RPC error response; id may be NULL (sent as null). */
json_t *cw_mcp_error(json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
