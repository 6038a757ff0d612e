// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mcp.h"
#include "version.h"

static const char *const versions[] = { "2025-11-25", "2025-06-18",
					"2025-03-26" };

struct cw_mcp {
	struct cw_engine *engine;
	char *grant;
	char *session;
	cw_mcp_rules_fn rules_fn;
	void *rules_ctx;
	bool initialized;	/* initialize answered */
	char version[16];	/* negotiated protocol version */
};

struct cw_mcp *cw_mcp_new(struct cw_engine *e, const char *grant,
			  const char *session_id)
{
	struct cw_mcp *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->engine = e;
	m->grant = strdup(grant ? grant : "local");
	m->session = strdup(session_id ? session_id : "");
	if (!m->grant || !m->session) {
		cw_mcp_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void cw_mcp_set_rules_source(struct cw_mcp *m, cw_mcp_rules_fn fn,
			     void *ctx)
{
	m->rules_fn = fn;
	m->rules_ctx = ctx;
}

/* The rules for this request: a new reference, never NULL. */
static struct cw_rules *rules_now(struct cw_mcp *m)
{
	struct cw_rules *r = m->rules_fn ? m->rules_fn(m->rules_ctx, m->grant) :
					   NULL;

	return r ? r : cw_engine_rules(m->engine);
}

void cw_mcp_free(struct cw_mcp *m)
{
	if (!m)
		return;
	free(m->grant);
	free(m->session);
	free(m);
}

json_t *cw_mcp_error(json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			 id, "error", "code", code, "message", msg);
}

static json_t *result(json_t *id, json_t *res)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
			 "result", res);
}

static json_t *input_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s, s:i, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:{s:s}, s:s}, s:{s:s, s:i, s:s}}, s:[s], s:b}",
		"type", "object", "properties",
		"command", "type", "string", "minLength", 1, "description",
		"The shell command to run (run as `shell -c command`).",
		"sandboxId", "type", "string", "description",
		"Accepted and echoed back, for E2B compatibility.",
		"background", "type", "boolean", "description",
		"Run in the background (not supported by this version).",
		"cwd", "type", "string", "description",
		"Working directory; must lie within what the policy allows.",
		"envs", "type", "object", "additionalProperties", "type",
		"string", "description", "Extra environment variables.",
		"timeout", "type", "number", "exclusiveMinimum", 0,
		"description",
		"Timeout in seconds; can only shorten the policy's.",
		"required", "command", "additionalProperties", 0);
}

static json_t *output_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}, s:[s, s, s]}",
		"type", "object", "properties", "stdout", "type", "string",
		"stderr", "type", "string", "exit_code", "type", "integer",
		"sandboxId", "type", "string", "duration_ms", "type",
		"integer", "truncated", "type", "boolean", "timed_out",
		"type", "boolean", "signal", "type", "integer",
		"invocation_id", "type", "string", "audit", "type", "object",
		"required", "stdout", "stderr", "exit_code");
}

json_t *cw_mcp_tools(const struct cw_policy *p)
{
	json_t *tools = json_array();

	if (!tools)
		return NULL;
	if (!cw_policy_hidden(p, CW_TOOL_RUN_COMMAND))
		json_array_append_new(
			tools,
			json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b, s:b}}",
				  "name", CW_TOOL_RUN_COMMAND, "title",
				  "Run a shell command",
				  "description",
				  "Run a shell command in the sandbox under the execution policy (seccomp-confined, audited). Returns stdout, stderr and exit_code.",
				  "inputSchema", input_schema(),
				  "outputSchema", output_schema(),
				  "annotations", "readOnlyHint", 0,
				  "destructiveHint", 1, "openWorldHint", 1));
	return tools;
}

static json_t *do_initialize(struct cw_mcp *m, json_t *id, json_t *params)
{
	const char *want = NULL;
	size_t i;

	if (m->initialized)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_REQUEST,
				    "the session is already initialized");
	if (!json_is_object(params))
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "initialize needs params with protocolVersion, capabilities and clientInfo");
	want = json_string_value(json_object_get(params, "protocolVersion"));
	if (!want)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "params.protocolVersion must be a string");
	/* Answer with the client's version when supported, else our latest
	 * (the client then decides whether it can go on). */
	snprintf(m->version, sizeof(m->version), "%s", CW_MCP_LATEST_VERSION);
	for (i = 0; i < CW_ARRAY_SIZE(versions); i++)
		if (strcmp(want, versions[i]) == 0)
			snprintf(m->version, sizeof(m->version), "%s", want);
	m->initialized = true;
	return result(id,
		      json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}",
				"protocolVersion", m->version,
				"capabilities", "tools", "listChanged", 0,
				"serverInfo", "name", "cmdwarden", "title",
				"cmdwarden execution-point enforcer",
				"version", CW_VERSION, "instructions",
				"Call run_command to run shell commands. Every call is decided by the execution policy, confined by the kernel and audited; denials start with [POLICY DENIED]."));
}

static json_t *tool_error(const char *text)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
			 "text", text, "isError", 1);
}

static json_t *do_call(struct cw_mcp *m, json_t *id, json_t *params)
{
	struct cw_call_result r;
	struct cw_rules *rules;
	struct cw_call call;
	json_t *args, *res = NULL, *js;
	const char *name;
	char *text;

	name = json_string_value(json_object_get(params, "name"));
	if (!json_is_object(params) || !name)
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "tools/call needs params.name (a string)");
	args = json_object_get(params, "arguments");
	if (args && !json_is_object(args))
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS,
				    "params.arguments must be an object");
	call.tool = name;
	call.args = args;
	call.grant = m->grant;
	call.session = m->session;
	rules = rules_now(m);
	cw_engine_call_with(m->engine, rules, &call, &r);
	cw_rules_put(rules);
	switch (r.outcome) {
	case CW_OUTCOME_RAN:
		js = cw_engine_result_json(&r, false);
		text = js ? cw_json_compact(js) : NULL;
		json_decref(js);
		if (text)
			res = json_pack("{s:[{s:s, s:s}], s:o, s:b}",
					"content", "type", "text", "text",
					text, "structuredContent",
					cw_engine_result_json(&r, true),
					"isError", 0);
		free(text);
		break;
	case CW_OUTCOME_UNKNOWN_TOOL:
		cw_engine_result_free(&r);
		return cw_mcp_error(id, CW_JSONRPC_INVALID_PARAMS, "%s",
				    r.message);
	case CW_OUTCOME_DENIED:
	case CW_OUTCOME_FAILED:
		res = tool_error(r.message);
		break;
	case CW_OUTCOME_INVALID: {
		char msg[1100];

		snprintf(msg, sizeof(msg), "invalid arguments: %s", r.message);
		res = tool_error(msg);
		break;
	}
	}
	cw_engine_result_free(&r);
	if (!res)
		return cw_mcp_error(id, CW_JSONRPC_INTERNAL_ERROR,
				    "out of memory building the result");
	return result(id, res);
}

/* A request id must be a string or an integer (JSON-RPC; MCP forbids null). */
static bool valid_id(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

json_t *cw_mcp_handle(struct cw_mcp *m, json_t *msg)
{
	json_t *id, *params;
	const char *method, *ver;

	if (json_is_array(msg))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "batches are not supported: send one JSON-RPC message per line");
	if (!json_is_object(msg))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "a JSON-RPC message must be an object");
	id = json_object_get(msg, "id");
	ver = json_string_value(json_object_get(msg, "jsonrpc"));
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!method && (json_object_get(msg, "result") ||
			json_object_get(msg, "error")))
		return NULL; /* a response to us: we send no requests yet */
	if (!ver || strcmp(ver, "2.0") != 0)
		return cw_mcp_error(valid_id(id) ? id : NULL,
				    CW_JSONRPC_INVALID_REQUEST,
				    "\"jsonrpc\" must be \"2.0\"");
	if (!method)
		return cw_mcp_error(valid_id(id) ? id : NULL,
				    CW_JSONRPC_INVALID_REQUEST,
				    "\"method\" must be a string");
	if (params && !json_is_object(params))
		return id ? cw_mcp_error(valid_id(id) ? id : NULL,
					 CW_JSONRPC_INVALID_REQUEST,
					 "\"params\" must be an object") :
			    NULL;
	if (!id)
		return NULL; /* notifications: initialized, cancelled, ... */
	if (!valid_id(id))
		return cw_mcp_error(NULL, CW_JSONRPC_INVALID_REQUEST,
				    "\"id\" must be a string or an integer");

	if (strcmp(method, "initialize") == 0)
		return do_initialize(m, id, params);
	if (strcmp(method, "ping") == 0)
		return result(id, json_object());
	if (!m->initialized &&
	    (strcmp(method, "tools/list") == 0 ||
	     strcmp(method, "tools/call") == 0))
		return cw_mcp_error(id, CW_JSONRPC_INVALID_REQUEST,
				    "the session is not initialized: send initialize first");
	if (strcmp(method, "tools/list") == 0) {
		struct cw_rules *rules = rules_now(m);
		json_t *tools = cw_mcp_tools(cw_rules_policy(rules));

		cw_rules_put(rules);
		return result(id, json_pack("{s:o}", "tools", tools));
	}
	if (strcmp(method, "tools/call") == 0)
		return do_call(m, id, params);
	return cw_mcp_error(id, CW_JSONRPC_METHOD_NOT_FOUND,
			    "method \"%.100s\" not found", method);
}

json_t *cw_mcp_handle_raw(struct cw_mcp *m, const char *buf, size_t len)
{
	json_error_t jerr;
	json_t *msg, *resp;

	msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			 &jerr);
	if (!msg)
		return cw_mcp_error(NULL, CW_JSONRPC_PARSE_ERROR,
				    "parse error at line %d, column %d: %s",
				    jerr.line, jerr.column, jerr.text);
	resp = cw_mcp_handle(m, msg);
	json_decref(msg);
	return resp;
}
