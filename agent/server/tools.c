// SPDX-License-Identifier: Apache-2.0
/*
 * The tool table: one row per tool, with its tools/list entry and its
 * argument parser, and the result shapes of the tools. The engine runs
 * what the parsers fill (struct cw_tool_args), never the JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "lib/json.h"
#include "server/tools.h"

/* Most entries in run_command's envs, and their total size. */
#define MAX_ENVS 256
#define MAX_ENV_BYTES (64 * 1024)
/* The longest timeout a call may ask for, in seconds (a day). */
#define MAX_TIMEOUT_S 86400

/* What the server's instructions say of every call, after its tools. */
#define INSTRUCTIONS_TAIL "Every call is decided by the execution policy, confined by the kernel and audited; denials start with [POLICY DENIED]."

/* ---- run_command ------------------------------------------------------ */

static json_t *run_input_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s, s:i, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:{s:s}, s:s}, s:{s:s, s:i, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}, s:[s], s:b}",
		"type", "object", "properties",
		"command", "type", "string", "minLength", 1, "description",
		"The shell command to run (run as `shell -l -c command`, a login shell, unless the policy says otherwise).",
		"sandboxId", "type", "string", "description",
		"Accepted and echoed back, for E2B compatibility.",
		"background", "type", "boolean", "description",
		"Return at once with the pid and invocation_id; follow it with command_status and command_kill.",
		"cwd", "type", "string", "description",
		"Working directory; must lie within what the policy allows.",
		"envs", "type", "object", "additionalProperties", "type",
		"string", "description", "Extra environment variables.",
		"timeout", "type", "number", "exclusiveMinimum", 0,
		"description",
		"Timeout in seconds; can only shorten the policy's.",
		"stdin", "type", "string", "description",
		"Text the command reads on its standard input (otherwise it reads nothing: /dev/null).",
		"user", "type", "string", "description",
		"The account to run as: one the policy lists in sandbox.users (otherwise the policy's user).",
		"required", "command", "additionalProperties", 0);
}

/* A foreground result has stdout, stderr and exit_code; a background one
 * message, pid and background. */
static json_t *run_output_schema(void)
{
	json_t *o = json_pack(
		"{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}, s:[s, s]}",
		"type", "object", "properties", "stdout", "type", "string",
		"stderr", "type", "string", "exit_code", "type", "integer",
		"sandboxId", "type", "string", "duration_ms", "type",
		"integer", "truncated", "type", "boolean", "timed_out",
		"type", "boolean", "signal", "type", "integer",
		"invocation_id", "type", "string", "audit", "type", "object",
		"required", "sandboxId", "invocation_id");
	json_t *props = json_object_get(o, "properties");

	json_object_set_new(props, "message", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "pid", json_pack("{s:s}", "type", "integer"));
	json_object_set_new(props, "background",
			    json_pack("{s:s}", "type", "boolean"));
	return o;
}

static json_t *run_entry(void)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b, s:b}}",
			 "name", CW_TOOL_RUN_COMMAND, "title",
			 "Run a shell command",
			 "description",
			 "Run a shell command in the sandbox under the execution policy (seccomp-confined, audited). Returns stdout, stderr and exit_code.",
			 "inputSchema", run_input_schema(),
			 "outputSchema", run_output_schema(),
			 "annotations", "readOnlyHint", 0,
			 "destructiveHint", 1, "openWorldHint", 1);
}

static bool under_any(const char *path, const struct cw_strv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (cw_path_under(path, v->v[i]))
			return true;
	return false;
}

void cw_run_args_free(struct cw_run_args *a)
{
	size_t i;

	free(a->command);
	a->command = NULL;
	free(a->stdin_data);
	a->stdin_data = NULL;
	if (a->env)
		for (i = 0; a->env[i]; i++)
			free(a->env[i]);
	free(a->env);
	a->env = NULL;
}

static const char *const run_keys[] = { "command", "sandboxId", "background",
					"cwd", "envs", "timeout", "stdin",
					"user" };

/* "user": the policy's own account, or one of sandbox.users. */
static int parse_user(const struct cw_sandbox *sb, json_t *v,
		      struct cw_run_args *a, char *msg, size_t len)
{
	const char *u = json_is_string(v) ? json_string_value(v) : NULL;
	size_t i;

	if (!u || !u[0] || strlen(u) >= sizeof(a->user)) {
		snprintf(msg, len, "\"user\" must be an account name of at most %zu bytes",
			 sizeof(a->user) - 1);
		return -EINVAL;
	}
	if (sb->user && strcmp(u, sb->user) == 0)
		return 0;	/* the policy's own: nothing to pick */
	for (i = 0; i < sb->users.n; i++)
		if (strcmp(u, sb->users.v[i]) == 0) {
			snprintf(a->user, sizeof(a->user), "%s", u);
			return 0;
		}
	if (!sb->users.n)
		snprintf(msg, len, "\"user\": this policy lets no call pick its account (sandbox.users is empty); commands run as \"%.32s\"",
			 sb->user ? sb->user : "user");
	else
		snprintf(msg, len, "\"user\": \"%.32s\" is not one of the accounts the policy lists in sandbox.users",
			 u);
	return -EINVAL;
}

/* "cwd": an absolute path, resolved, that narrows the sandbox's. */
static int parse_cwd(const struct cw_sandbox *sb, json_t *v,
		     struct cw_run_args *a, char *msg, size_t len)
{
	const char *c = json_is_string(v) ? json_string_value(v) : NULL;

	if (!c || c[0] != '/' || strlen(c) >= PATH_MAX) {
		snprintf(msg, len, "\"cwd\" must be an absolute path");
		return -EINVAL;
	}
	if (!realpath(c, a->cwd)) {
		snprintf(msg, len, "\"cwd\" %.256s: %s", c, strerror(errno));
		return -EINVAL;
	}
	/* Narrow only: inside the sandbox's cwd or a readable or writable
	 * tree, never inside a denied one. */
	if (!(cw_path_under(a->cwd, sb->cwd) ||
	      under_any(a->cwd, &sb->filesystem.read) ||
	      under_any(a->cwd, &sb->filesystem.write)) ||
	    under_any(a->cwd, &sb->filesystem.deny)) {
		snprintf(msg, len, "\"cwd\" %.256s is outside what the policy's sandbox allows",
			 a->cwd);
		return -EINVAL;
	}
	a->has_cwd = true;
	return 0;
}

/* "envs": an object of strings under identifier names, bounded. */
static int parse_envs(json_t *v, struct cw_run_args *a, char *msg, size_t len)
{
	const char *key;
	size_t n = 0, bytes = 0;
	json_t *ev;

	if (!json_is_object(v) || json_object_size(v) > MAX_ENVS) {
		snprintf(msg, len, "\"envs\" must be an object of at most %d strings",
			 MAX_ENVS);
		return -EINVAL;
	}
	a->env = calloc(json_object_size(v) + 1, sizeof(char *));
	if (!a->env) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	json_object_foreach(v, key, ev) {
		const char *s = json_string_value(ev);

		if (!cw_is_identifier(key) || !s ||
		    strlen(s) != json_string_length(ev)) {
			snprintf(msg, len, "\"envs.%.64s\" must be a string value under a name of letters, digits and _",
				 key);
			return -EINVAL;
		}
		bytes += strlen(key) + strlen(s) + 2;
		if (bytes > MAX_ENV_BYTES) {
			snprintf(msg, len, "\"envs\" exceeds %d bytes",
				 MAX_ENV_BYTES);
			return -EINVAL;
		}
		if (asprintf(&a->env[n], "%s=%s", key, s) < 0) {
			a->env[n] = NULL;
			snprintf(msg, len, "out of memory");
			return -ENOMEM;
		}
		n++;
	}
	return 0;
}

/* 0, or -EINVAL with msg saying what was wrong; a is freed by the caller
 * either way. */
static int parse_run(const struct cw_sandbox *sb, json_t *args,
		     struct cw_tool_args *ta, char *msg, size_t len)
{
	struct cw_run_args *a = &ta->run;
	const char *key;
	json_t *v;
	size_t i;
	int ret;

	a->timeout_ms = sb->timeout_s * 1000;
	if (!args || !json_is_object(args)) {
		snprintf(msg, len, "arguments must be an object with a \"command\" string");
		return -EINVAL;
	}
	json_object_foreach(args, key, v) {
		bool known = false;

		for (i = 0; i < CW_ARRAY_SIZE(run_keys); i++)
			known |= strcmp(key, run_keys[i]) == 0;
		if (!known) {
			snprintf(msg, len, "unknown argument \"%.64s\"; expected command, sandboxId, background, cwd, envs, timeout, stdin or user",
				 key);
			return -EINVAL;
		}
	}
	v = json_object_get(args, "command");
	if (!json_is_string(v) || json_string_length(v) == 0) {
		snprintf(msg, len, "\"command\" must be a non-empty string");
		return -EINVAL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(msg, len, "\"command\" must not contain NUL bytes");
		return -EINVAL;
	}
	v = json_object_get(args, "sandboxId");
	if (v && (!json_is_string(v) ||
		  json_string_length(v) >= CW_TOOL_SANDBOX_ID_LEN)) {
		snprintf(msg, len, "\"sandboxId\" must be a string of at most %d bytes",
			 CW_TOOL_SANDBOX_ID_LEN - 1);
		return -EINVAL;
	}
	v = json_object_get(args, "background");
	if (v && !json_is_boolean(v)) {
		snprintf(msg, len, "\"background\" must be a boolean");
		return -EINVAL;
	}
	a->background = json_is_true(v);
	/* A background command has a limit of its own (0: none). */
	if (a->background)
		a->timeout_ms = sb->background_timeout_s * 1000;
	v = json_object_get(args, "timeout");
	if (v) {
		double t = json_is_number(v) ? json_number_value(v) : -1;

		if (!(t > 0) || t > MAX_TIMEOUT_S) {
			snprintf(msg, len, "\"timeout\" must be a number of seconds greater than 0 and at most %d",
				 MAX_TIMEOUT_S);
			return -EINVAL;
		}
		a->timeout_asked_ms = (int64_t)(t * 1000);
		if (a->timeout_asked_ms < 1)
			a->timeout_asked_ms = 1;
		/* A call may only shorten the policy's timeout. */
		if (!a->timeout_ms || a->timeout_asked_ms <= a->timeout_ms)
			a->timeout_ms = a->timeout_asked_ms;
		else
			a->timeout_capped = true;
	}
	v = json_object_get(args, "cwd");
	if (v && (ret = parse_cwd(sb, v, a, msg, len)) < 0)
		return ret;
	v = json_object_get(args, "envs");
	if (v && (ret = parse_envs(v, a, msg, len)) < 0)
		return ret;
	v = json_object_get(args, "user");
	if (v && (ret = parse_user(sb, v, a, msg, len)) < 0)
		return ret;
	v = json_object_get(args, "stdin");
	if (v && !json_is_string(v)) {
		snprintf(msg, len, "\"stdin\" must be a string (the text the command reads on its standard input)");
		return -EINVAL;
	}
	if (v) {
		/* its length, not strlen: it may hold NUL bytes */
		a->stdin_len = json_string_length(v);
		a->stdin_data = malloc(a->stdin_len + 1);
		if (!a->stdin_data) {
			snprintf(msg, len, "out of memory");
			return -ENOMEM;
		}
		memcpy(a->stdin_data, json_string_value(v), a->stdin_len + 1);
	}
	a->command = strdup(json_string_value(json_object_get(args, "command")));
	if (!a->command) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* ---- command_status, command_kill ------------------------------------ */

static json_t *job_input_schema(const char *what)
{
	return json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s], s:b}",
			 "type", "object", "properties", "invocation_id",
			 "type", "string", "description", what, "sandboxId",
			 "type", "string", "description",
			 "Accepted and echoed back, for E2B compatibility.",
			 "required", "invocation_id", "additionalProperties",
			 0);
}

static json_t *job_output_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[s, s]}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}, s:[s, s]}",
		"type", "object", "properties", "invocation_id", "type",
		"string", "pid", "type", "integer", "running", "type",
		"boolean", "exit_code", "type", "integer", "null", "signal",
		"type", "integer", "timed_out", "type", "boolean", "killed",
		"type", "boolean", "stdout", "type", "string", "stderr",
		"type", "string", "truncated", "type", "boolean",
		"duration_ms", "type", "integer", "sandboxId", "type",
		"string", "required", "invocation_id", "running");
}

static json_t *status_entry(void)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b}}", "name",
			 CW_TOOL_COMMAND_STATUS, "title",
			 "State of a background command", "description",
			 "Whether a background run_command is still running, its exit code once ended, and its output so far (bounded by the policy's max_output_bytes).",
			 "inputSchema",
			 job_input_schema("The invocation_id a background run_command returned."),
			 "outputSchema", job_output_schema(),
			 "annotations", "readOnlyHint", 1);
}

static json_t *kill_entry(void)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b, s:b}}",
			 "name", CW_TOOL_COMMAND_KILL, "title",
			 "Kill a background command", "description",
			 "Kill a background run_command and every process it started; returns its final state.",
			 "inputSchema",
			 job_input_schema("The invocation_id a background run_command returned."),
			 "outputSchema", job_output_schema(),
			 "annotations", "readOnlyHint", 0,
			 "destructiveHint", 1);
}

/* {"invocation_id": "inv-..."}, sandboxId accepted. */
static int parse_job(const struct cw_sandbox *sb, json_t *args,
		     struct cw_tool_args *a, char *msg, size_t len)
{
	const char *key;
	json_t *v;

	(void)sb;
	json_object_foreach(args, key, v) {
		if (strcmp(key, "invocation_id") && strcmp(key, "sandboxId")) {
			snprintf(msg, len, "unknown argument \"%.64s\"; expected invocation_id or sandboxId",
				 key);
			return -EINVAL;
		}
	}
	v = json_object_get(args, "invocation_id");
	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) > CW_TOOL_INVOCATION_MAX) {
		snprintf(msg, len, "\"invocation_id\" must be the invocation id a background run_command returned");
		return -EINVAL;
	}
	snprintf(a->invocation, sizeof(a->invocation), "%s",
		 json_string_value(v));
	return 0;
}

/* ---- the table --------------------------------------------------------- */

struct tool {
	const char *name;
	enum cw_tool_kind kind;
	json_t *(*entry)(void);	/* its tools/list entry */
	int (*parse)(const struct cw_sandbox *sb, json_t *args,
		     struct cw_tool_args *a, char *msg, size_t len);
};

static const struct tool tools[] = {
	{ CW_TOOL_RUN_COMMAND, CW_TOOL_RUN, run_entry, parse_run },
	{ CW_TOOL_COMMAND_STATUS, CW_TOOL_STATUS, status_entry, parse_job },
	{ CW_TOOL_COMMAND_KILL, CW_TOOL_KILL, kill_entry, parse_job },
};

int cw_tool_args_parse(const struct cw_sandbox *sb, const char *tool,
		       json_t *args, struct cw_tool_args *a, char *msg,
		       size_t len)
{
	json_t *sid = args ? json_object_get(args, "sandboxId") : NULL;
	size_t i;

	memset(a, 0, sizeof(*a));
	/* Echoed back whatever the tool, as far as it is a string. */
	if (json_is_string(sid))
		snprintf(a->sandbox_id, sizeof(a->sandbox_id), "%s",
			 json_string_value(sid));
	for (i = 0; i < CW_ARRAY_SIZE(tools); i++)
		if (!strcmp(tool, tools[i].name)) {
			a->kind = tools[i].kind;
			return tools[i].parse(sb, args, a, msg, len);
		}
	return 0;
}

void cw_tool_args_free(struct cw_tool_args *a)
{
	cw_run_args_free(&a->run);
}

json_t *cw_mcp_tools(const struct cw_policy *p)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; list && i < CW_ARRAY_SIZE(tools); i++)
		if (!cw_policy_refuses(p, tools[i].name))
			json_array_append_new(list, tools[i].entry());
	return list;
}

const char *cw_mcp_instructions(const struct cw_policy *p)
{
	bool run = !cw_policy_refuses(p, CW_TOOL_RUN_COMMAND);
	bool status = !cw_policy_refuses(p, CW_TOOL_COMMAND_STATUS);
	bool kill = !cw_policy_refuses(p, CW_TOOL_COMMAND_KILL);

	if (!run)
		return "This server's policy opens no tool to this caller.";
	if (status && kill)
		return "Call run_command to run shell commands (background: true returns at once; then command_status and command_kill). " INSTRUCTIONS_TAIL;
	if (status)
		return "Call run_command to run shell commands (background: true returns at once; then command_status). " INSTRUCTIONS_TAIL;
	if (kill)
		return "Call run_command to run shell commands (background: true returns at once; then command_kill). " INSTRUCTIONS_TAIL;
	return "Call run_command to run shell commands. " INSTRUCTIONS_TAIL;
}

/* ---- results ----------------------------------------------------------- */

/* The command's stderr, then a line for each note: the agent reads why
 * its command was killed or refused where it reads the command's own
 * complaints. */
static json_t *stderr_with_notes(const struct cw_call_result *r)
{
	const char *err = r->run.err ? r->run.err : "";
	struct cw_buf b = { 0 };
	json_t *v;

	if (!r->notes.n)
		return cw_json_bytes(err, r->run.err_len);
	v = cw_notes_append(&b, err, r->run.err_len, &r->notes) == 0 ?
		    cw_json_bytes(b.data, b.len) :
		    cw_json_bytes(err, r->run.err_len);
	cw_buf_free(&b);
	return v;
}

static json_t *notes_json(const struct cw_notes *n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; a && i < n->n; i++)
		json_array_append_new(a, cw_json_bytes(n->v[i], strlen(n->v[i])));
	return a;
}

json_t *cw_tool_result_json(const struct cw_call_result *r, bool extended)
{
	int code = cw_spawn_status(&r->run);
	json_t *o, *a;

	if (r->background) {
		/* the text, too, carries what command_status needs */
		o = json_pack("{s:s, s:i, s:s, s:s}", "message",
			      "The command is running in the background; ask command_status or command_kill with its invocation_id.",
			      "pid", (int)r->run.pid, "sandboxId", r->sandbox_id,
			      "invocation_id", r->invocation);
		if (o && extended) {
			json_object_set_new(o, "background", json_true());
			json_object_set_new(o, "audit",
					    json_pack("{s:I}", "records",
						      (json_int_t)r->audit_records));
		}
		return o;
	}
	o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "stdout",
			    cw_json_bytes(r->run.out ? r->run.out : "",
					  r->run.out_len));
	json_object_set_new(o, "stderr", stderr_with_notes(r));
	json_object_set_new(o, "exit_code", json_integer(code));
	json_object_set_new(o, "sandboxId", json_string(r->sandbox_id));
	if (r->run.left_running && !extended)
		json_object_set_new(o, "left_running_killed",
				    json_integer(r->run.left_running));
	if (!extended) {
		/* what a text-only agent must know, when it is so */
		if (r->run.timed_out)
			json_object_set_new(o, "timed_out", json_true());
		if (r->run.truncated)
			json_object_set_new(o, "truncated", json_true());
		if (r->run.term_signal)
			json_object_set_new(o, "signal",
					    json_integer(r->run.term_signal));
		return o;
	}
	json_object_set_new(o, "duration_ms",
			    json_integer(r->run.duration_us / 1000));
	json_object_set_new(o, "truncated", json_boolean(r->run.truncated));
	json_object_set_new(o, "timed_out", json_boolean(r->run.timed_out));
	json_object_set_new(o, "signal", json_integer(r->run.term_signal));
	json_object_set_new(o, "invocation_id", json_string(r->invocation));
	json_object_set_new(o, "left_running_killed",
			    json_integer(r->run.left_running));
	json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:I}",
		"stdout_bytes", (json_int_t)r->run.out_total,
		"stdout_omitted", (json_int_t)r->run.out_omitted,
		"stderr_bytes", (json_int_t)r->run.err_total,
		"stderr_omitted", (json_int_t)r->run.err_omitted));
	json_object_set_new(o, "notes", notes_json(&r->notes));
	json_object_set_new(o, "audit",
			    json_pack("{s:I, s:I, s:{s:I, s:I}}", "records",
				      (json_int_t)r->audit_records, "connects",
				      (json_int_t)r->net_connections,
				      "denials", "seccomp",
				      (json_int_t)r->run.seccomp_denied, "net",
				      (json_int_t)r->net_denied));
	/* What the kernel event sources recorded, and what they could not. */
	a = json_object_get(o, "audit");
	if (a) {
		json_t *src = json_array();
		size_t i;

		json_object_set_new(a, "execs", json_integer((json_int_t)r->execs));
		json_object_set_new(a, "files", json_integer((json_int_t)r->files));
		json_object_set_new(a, "events_lost",
				    json_integer((json_int_t)r->events_lost));
		for (i = 0; src && i < r->nsources; i++)
			json_array_append_new(src, json_string(r->sources[i]));
		json_object_set_new(a, "sources", src);
	}
	return o;
}

/* run_command's result is its E2B shape; command_status and command_kill
 * answer with the job's state, which the engine hands back as data, and
 * the sandboxId of the call when it gave one. */
json_t *cw_tool_result(const struct cw_call_result *r, bool extended)
{
	if (!r->data)
		return cw_tool_result_json(r, extended);
	if (r->sandbox_id[0])
		json_object_set_new(r->data, "sandboxId",
				    json_string(r->sandbox_id));
	return json_incref(r->data);
}
