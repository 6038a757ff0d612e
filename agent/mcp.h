/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MCP server core, independent of transport: JSON-RPC 2.0 messages in,
 * responses out. One struct cw_mcp per MCP session.
 */
#ifndef CW_MCP_H
#define CW_MCP_H

#include <stddef.h>

#include <jansson.h>

#include "engine.h"

#define CW_JSONRPC_PARSE_ERROR -32700
#define CW_JSONRPC_INVALID_REQUEST -32600
#define CW_JSONRPC_METHOD_NOT_FOUND -32601
#define CW_JSONRPC_INVALID_PARAMS -32602
#define CW_JSONRPC_INTERNAL_ERROR -32603

#define CW_MCP_LATEST_VERSION "2025-11-25"

struct cw_mcp;

/* grant: the caller's credential name ("local" for stdio). */
struct cw_mcp *cw_mcp_new(struct cw_engine *e, const char *grant,
			  const char *session_id);
void cw_mcp_free(struct cw_mcp *m);

/* Where a session finds the rules of its grant, asked at every request so
 * that a reload takes effect in sessions already open: a new reference, or
 * NULL for the engine's default rules. Without it, always the default. */
typedef struct cw_rules *(*cw_mcp_rules_fn)(void *ctx, const char *grant);
void cw_mcp_set_rules_source(struct cw_mcp *m, cw_mcp_rules_fn fn,
			     void *ctx);

/* Handles one message as raw bytes (parse errors answered with -32700).
 * Returns the response to send (new reference) or NULL when none is due
 * (notifications, responses). */
json_t *cw_mcp_handle_raw(struct cw_mcp *m, const char *buf, size_t len);
json_t *cw_mcp_handle(struct cw_mcp *m, json_t *msg);

/* A JSON-RPC error response; id may be NULL (sent as null). */
json_t *cw_mcp_error(json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The tool list (hidden tools left out), as sent in tools/list. */
json_t *cw_mcp_tools(const struct cw_policy *p);

#endif
