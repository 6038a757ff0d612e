/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools: the tool table. Each tool (run_command, command_status,
 * command_kill) in one place: its tools/list entry (title, description,
 * input and output schemas, annotations), the parsing of its arguments
 * into the struct the engine runs from, and the shape of its result.
 * Nothing else knows the tools' JSON argument names.
 */
#ifndef CW_SERVER_TOOLS_H
#define CW_SERVER_TOOLS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"

#define CW_TOOL_RUN_COMMAND "run_command"
#define CW_TOOL_COMMAND_STATUS "command_status"
#define CW_TOOL_COMMAND_KILL "command_kill"

/* Longest invocation_id command_status and command_kill accept. */
#define CW_TOOL_INVOCATION_MAX 64
/* sandboxId is echoed back: at most this many bytes, NUL included. */
#define CW_TOOL_SANDBOX_ID_LEN 128

enum cw_tool_kind {
	CW_TOOL_OTHER = 0,	/* no such tool here */
	CW_TOOL_RUN,
	CW_TOOL_STATUS,
	CW_TOOL_KILL,
};

/* Everything a run_command call may set for itself, checked and narrowed
 * against the policy's sandbox. Owned: a background command outlives the
 * request's arguments. */
struct cw_run_args {
	char *command;
	char cwd[PATH_MAX];
	bool has_cwd;
	bool background;
	int64_t timeout_ms;	/* 0: none (a background command under
				 * background_timeout_s 0) */
	int64_t timeout_asked_ms; /* the call's "timeout", 0 when none */
	bool timeout_capped;	/* it asked for more than the policy's */
	char **env;		/* NULL-terminated "K=V" */
	char user[33];		/* "user", one of sandbox.users; "": the
				 * policy's */
	char *stdin_data;	/* "stdin", fed to the command; NULL: none
				 * (/dev/null) */
	size_t stdin_len;
};

/* A tool call's arguments as the engine runs them. */
struct cw_tool_args {
	enum cw_tool_kind kind;
	char sandbox_id[CW_TOOL_SANDBOX_ID_LEN]; /* echoed back, may be "" */
	struct cw_run_args run;			/* CW_TOOL_RUN */
	char invocation[CW_TOOL_INVOCATION_MAX + 1]; /* STATUS, KILL */
};

/* Parses args (an object, or NULL for {}) of tool under sandbox sb into a
 * (which the caller frees with cw_tool_args_free, whatever the result).
 * a->kind and a->sandbox_id are set even when the arguments are wrong.
 * 0, or -EINVAL / -ENOMEM with msg saying what was wrong. */
int cw_tool_args_parse(const struct cw_sandbox *sb, const char *tool,
		       json_t *args, struct cw_tool_args *a, char *msg,
		       size_t len);
void cw_tool_args_free(struct cw_tool_args *a);
void cw_run_args_free(struct cw_run_args *a);

/* The tool list as sent in tools/list: a tool the policy refuses whatever
 * the call (cw_policy_refuses) is left out; it is still refused if called. */
json_t *cw_mcp_tools(const struct cw_policy *p);
/* The initialize result's instructions, naming only the listed tools. */
const char *cw_mcp_instructions(const struct cw_policy *p);

struct cw_call_result;

/* The E2B-shaped object {stdout, stderr, exit_code, sandboxId}; with
 * extended true also duration_ms, truncated, timed_out, signal,
 * invocation_id and audit (the call's records and what the kernel layers
 * refused). A background call: {message, pid, sandboxId}, extended with
 * invocation_id, background and audit. New reference. */
json_t *cw_tool_result_json(const struct cw_call_result *r, bool extended);

/* The structured result of a call that ran, for its tool: the E2B shape
 * (extended or not) of run_command, the job state of command_status and
 * command_kill. New reference. */
json_t *cw_tool_result(const struct cw_call_result *r, bool extended);

#endif
