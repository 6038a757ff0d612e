// SPDX-License-Identifier: Apache-2.0
/*
 * Policy: parse, validate and compile a policy.json: the top level (version,
 * default, hide, max_concurrent, all_tools, tools), rules, conditions and
 * limits; loading from a file, a buffer or the embedded default; lookups.
 * The sandbox section is compiled in sandbox.c, the condition ops are the
 * table in ops.c, and the loader's error and field helpers are in load.c.
 *
 * Validation never stops at the first problem: every error is collected
 * with its JSON path, then mapped back to a line and column by re-scanning
 * the text (jansson keeps no positions for values), so a policy author sees
 * all of them at once, in file order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/decide.h"
#include "policy/ops.h"
#include "policy/policy.h"
#include "policy/sandbox.h"
#include "lib/text.h"

extern const char cw_default_policy_json[], cw_default_policy_json_end[];

#define POLICY_MAX_BYTES (16u << 20)
#define COUNTER_MAX_LEN 128
#define WINDOW_MAX_S (366 * 86400)

#define MAX_CONCURRENT 65536
/* Room for the list of op names in an error. */
#define CMD_OPS_LEN 256



const char *cw_action_name(enum cw_action a)
{
	switch (a) {
	case CW_ACTION_ALLOW:
		return "allow";
	case CW_ACTION_DENY:
		return "deny";
	case CW_ACTION_APPROVAL:
		return "require_approval";
	}
	return "?";
}

const char *cw_scope_name(enum cw_scope s)
{
	switch (s) {
	case CW_SCOPE_GRANT:
		return "grant";
	case CW_SCOPE_SESSION:
		return "session";
	case CW_SCOPE_GLOBAL:
		return "global";
	}
	return "?";
}


static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- conditions and limits -------------------------------------------- */


static void cond_free(struct cw_cond *c)
{
	size_t i;

	free(c->path);
	for (i = 0; i < c->nparts; i++)
		free(c->parts[i]);
	free(c->parts);
	json_decref(c->value);
	if (c->has_re)
		regfree(&c->re);
	free(c->reason);
	free(c->where);
}

static void limit_free(struct cw_limit *l)
{
	free(l->counter);
	free(l->where);
}

static void parse_cond_path(struct cw_loader *ld, struct cw_cond *c,
			    const char *s, const char *path, bool run_command)
{
	const char *p;

	if (!strcmp(s, "command.programs") || !strcmp(s, "command.opaque")) {
		if (!run_command) {
			cw_load_err(ld, path,
				    "\"%s\" applies only to the run_command rule; expected \"args.<name>...\"",
				    s);
			return;
		}
		c->kind = s[8] == 'p' ? CW_PATH_CMD_PROGRAMS :
					CW_PATH_CMD_OPAQUE;
		return;
	}
	if (strncmp(s, "args.", 5)) {
		char qs[CW_TEXT_QUOTE_LEN];

		cw_load_err(ld, path,
			    "unknown path %s; expected \"args.<name>[.<name or index>]...\"%s",
			    cw_text_quote(qs, sizeof(qs), s),
			    run_command ?
			    ", \"command.programs\" or \"command.opaque\"" :
			    "");
		return;
	}
	c->kind = CW_PATH_ARGS;
	p = s + 5;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char **parts;
		char *part;

		if (!n) {
			char qs[CW_TEXT_QUOTE_LEN];

			cw_load_err(ld, path,
				    "empty component in path %s; expected \"args.<name>[.<name or index>]...\"",
				    cw_text_quote(qs, sizeof(qs), s));
			return;
		}
		parts = realloc(c->parts, (c->nparts + 1) * sizeof(*parts));
		if (!parts) {
			ld->oom = true;
			return;
		}
		c->parts = parts;
		part = strndup(p, n);
		if (!part) {
			ld->oom = true;
			return;
		}
		c->parts[c->nparts++] = part;
		if (!dot)
			break;
		p = dot + 1;
	}
}

/* command.programs is a list of strings, command.opaque a boolean: ops
 * that can never apply to them are load errors, not silent denials. */
static void check_cmd_op(struct cw_loader *ld, struct cw_cond *c, json_t *v,
			 const char *path)
{
	const struct cw_op_def *op = cw_op_get(c->op);
	char ops[CMD_OPS_LEN];

	if (c->kind == CW_PATH_CMD_PROGRAMS) {
		if (!(op->on & CW_OP_ON_PROGRAMS)) {
			cw_op_list(ops, sizeof(ops), CW_OP_ON_PROGRAMS, " or ");
			cw_load_err(ld, path,
				    "op \"%s\" cannot apply to command.programs (a list of program names); expected %s",
				    op->name, ops);
		}
		return;
	}
	if (!(op->on & CW_OP_ON_OPAQUE)) {
		cw_op_list(ops, sizeof(ops), CW_OP_ON_OPAQUE, " or ");
		cw_load_err(ld, path,
			    "op \"%s\" cannot apply to command.opaque (a boolean); expected %s",
			    op->name, ops);
		return;
	}
	if (v && (c->op == CW_OP_EQ || c->op == CW_OP_NEQ) &&
	    !json_is_boolean(v))
		cw_load_err(ld, path, "command.opaque is a boolean; expected true or false as value, got %s",
			    cw_load_jtype(v));
}

static void parse_cond(struct cw_loader *ld, json_t *o, const char *path,
		       bool run_command, struct cw_cond *c)
{
	static const char *const keys[] = { "path", "op", "value", "reason",
					    NULL };
	char kp[CW_LOAD_PATH_LEN], ops[CMD_OPS_LEN];
	const char *known[CW_OPS_MAX + 1];
	json_t *v, *val;
	bool op_ok = false;

	if (!cw_load_want(ld, o, path, json_is_object(o),
			  "a condition object {\"path\", \"op\", \"value\"}"))
		return;
	cw_load_keys(ld, o, path, keys);
	c->where = cw_load_strdup(ld, path);

	cw_load_key(kp, path, "path");
	v = json_object_get(o, "path");
	if (!v)
		cw_load_err(ld, kp,
			    "missing required field \"path\"; expected a string such as \"args.command\"");
	else if (cw_load_want(ld, v, kp, json_is_string(v), "a string")) {
		c->path = cw_load_strdup(ld, json_string_value(v));
		parse_cond_path(ld, c, json_string_value(v), kp, run_command);
	}

	cw_load_key(kp, path, "op");
	v = json_object_get(o, "op");
	if (!v) {
		cw_op_list(ops, sizeof(ops), 0, ", ");
		cw_load_err(ld, kp,
			    "missing required field \"op\"; expected one of %s",
			    ops);
	} else if (cw_load_want(ld, v, kp, json_is_string(v), "a string")) {
		if (cw_op_find(json_string_value(v), &c->op)) {
			op_ok = true;
		} else {
			cw_op_names(known, CW_ARRAY_SIZE(known));
			cw_load_unknown(ld, kp, "op", json_string_value(v),
					known);
		}
	}

	cw_load_key(kp, path, "value");
	val = json_object_get(o, "value");
	if (op_ok && !val && c->op != CW_OP_EXISTS)
		cw_load_err(ld, kp, "missing required field \"value\" for op \"%s\"",
			    cw_op_name(c->op));
	if (op_ok && val && cw_op_get(c->op)->check)
		cw_op_get(c->op)->check(ld, c, val, kp);
	if (op_ok && c->path && c->kind != CW_PATH_ARGS)
		check_cmd_op(ld, c, val, path);
	/* exists without a value means "is present". */
	c->value = val ? json_incref(val) : json_true();

	cw_load_key(kp, path, "reason");
	v = json_object_get(o, "reason");
	if (v && cw_load_want(ld, v, kp, json_is_string(v), "a string"))
		c->reason = cw_load_strdup(ld, json_string_value(v));
}

static void parse_conds(struct cw_loader *ld, json_t *arr, const char *path,
			bool run_command, struct cw_cond **out, size_t *n,
			bool *uses_command)
{
	size_t i;
	json_t *e;

	if (!cw_load_want(ld, arr, path, json_is_array(arr),
			  "an array of conditions"))
		return;
	*out = cw_load_calloc(ld, json_array_size(arr), sizeof(**out));
	if (!*out)
		return;
	json_array_foreach(arr, i, e) {
		char ep[CW_LOAD_PATH_LEN];

		cw_load_idx(ep, path, i);
		parse_cond(ld, e, ep, run_command, &(*out)[i]);
		*n = i + 1;
		if ((*out)[i].path && (*out)[i].kind != CW_PATH_ARGS)
			*uses_command = true;
	}
}

static bool check_counter(struct cw_loader *ld, const char *s, const char *path)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		/* '|' separates the parts of a counter key. */
		if (c < 0x20 || c == 0x7f || c == '|') {
			cw_load_err(ld, path,
				    "counter name has a control character or '|'; expected printable text");
			return false;
		}
	}
	if (!i || i > COUNTER_MAX_LEN) {
		cw_load_err(ld, path,
			    "counter name is %zu bytes long; expected 1 to %d bytes",
			    i, COUNTER_MAX_LEN);
		return false;
	}
	return true;
}

static void parse_limit(struct cw_loader *ld, json_t *o, const char *path,
			struct cw_limit *l)
{
	static const char *const keys[] = { "counter", "window", "max",
					    "scope", NULL };
	static const char *const scopes[] = { "grant", "session", "global",
					      NULL };
	static const char *const windows[] = { "second", "minute", "hour",
					       "day", NULL };
	static const int64_t window_s[] = { 1, 60, 3600, 86400 };
	char kp[CW_LOAD_PATH_LEN], qs[CW_TEXT_QUOTE_LEN];
	json_t *v;
	size_t i;

	if (!cw_load_want(ld, o, path, json_is_object(o),
			  "a limit object {\"counter\", \"window\", \"max\", \"scope\"}"))
		return;
	cw_load_keys(ld, o, path, keys);
	l->where = cw_load_strdup(ld, path);

	cw_load_key(kp, path, "counter");
	v = json_object_get(o, "counter");
	if (!v)
		cw_load_err(ld, kp,
			    "missing required field \"counter\"; expected the counter's name");
	else if (cw_load_want(ld, v, kp, json_is_string(v), "a string") &&
		 check_counter(ld, json_string_value(v), kp))
		l->counter = cw_load_strdup(ld, json_string_value(v));

	cw_load_key(kp, path, "window");
	v = json_object_get(o, "window");
	if (!v) {
		cw_load_err(ld, kp,
			    "missing required field \"window\"; expected \"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds");
	} else if (json_is_string(v)) {
		for (i = 0; windows[i]; i++)
			if (!strcmp(json_string_value(v), windows[i]))
				break;
		if (windows[i])
			l->window_s = window_s[i];
		else
			cw_load_err(ld, kp,
				    "unknown window %s; expected \"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds",
				    cw_text_quote(qs, sizeof(qs),
						  json_string_value(v)));
	} else {
		cw_load_get_int(ld, v, kp, 1, WINDOW_MAX_S,
				"\"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds (at most 31622400, 366 days)",
				&l->window_s);
	}

	cw_load_key(kp, path, "max");
	v = json_object_get(o, "max");
	if (!v)
		cw_load_err(ld, kp,
			    "missing required field \"max\"; expected a non-negative integer");
	else
		cw_load_get_int(ld, v, kp, 0, INT64_MAX, "a non-negative integer",
				&l->max);

	cw_load_key(kp, path, "scope");
	v = json_object_get(o, "scope");
	l->scope = CW_SCOPE_GRANT;
	if (v && cw_load_want(ld, v, kp, json_is_string(v), "a string")) {
		for (i = 0; scopes[i]; i++)
			if (!strcmp(json_string_value(v), scopes[i]))
				break;
		if (scopes[i])
			l->scope = (enum cw_scope)i;
		else
			cw_load_unknown(ld, kp, "scope", json_string_value(v),
					scopes);
	}
}

static void parse_limits(struct cw_loader *ld, json_t *arr, const char *path,
			 struct cw_limit **out, size_t *n)
{
	size_t i;
	json_t *e;

	if (!cw_load_want(ld, arr, path, json_is_array(arr), "an array of limits"))
		return;
	*out = cw_load_calloc(ld, json_array_size(arr), sizeof(**out));
	if (!*out)
		return;
	json_array_foreach(arr, i, e) {
		char ep[CW_LOAD_PATH_LEN];

		cw_load_idx(ep, path, i);
		parse_limit(ld, e, ep, &(*out)[i]);
		*n = i + 1;
	}
}

/* ---- rules and the policy --------------------------------------------- */

static void rule_free(struct cw_rule *r)
{
	size_t i;

	free(r->name);
	free(r->reason);
	for (i = 0; i < r->nrequire; i++)
		cond_free(&r->require[i]);
	free(r->require);
	for (i = 0; i < r->ndeny_if; i++)
		cond_free(&r->deny_if[i]);
	free(r->deny_if);
	for (i = 0; i < r->nlimits; i++)
		limit_free(&r->limits[i]);
	free(r->limits);
	if (r->sandbox) {
		cw_sandbox_free(r->sandbox);
		free(r->sandbox);
	}
}

void cw_policy_free(struct cw_policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nrules; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	for (i = 0; i < p->nall_limits; i++)
		limit_free(&p->all_limits[i]);
	free(p->all_limits);
	cw_load_strv_free(&p->hide);
	cw_sandbox_free(&p->default_sandbox);
	free(p->source);
	free(p);
}

static void parse_rule(struct cw_loader *ld, struct cw_policy *p,
		       const char *name, json_t *o, const char *path,
		       struct cw_rule *r)
{
	static const char *const keys[] = { "action", "reason", "require",
					    "deny_if", "limits", "sandbox",
					    NULL };
	static const char *const actions[] = { "allow", "deny",
					       "require_approval", NULL };
	bool run_command = !strcmp(name, "run_command");
	char kp[CW_LOAD_PATH_LEN];
	json_t *v;
	size_t i;

	r->name = cw_load_strdup(ld, name);
	if (!name[0])
		cw_load_err(ld, path, "empty tool name; expected the tool's name");
	if (!cw_load_want(ld, o, path, json_is_object(o),
			  "a rule object ({} allows the tool)"))
		return;
	cw_load_keys(ld, o, path, keys);

	v = json_object_get(o, "action");
	cw_load_key(kp, path, "action");
	if (v && cw_load_want(ld, v, kp, json_is_string(v), "a string")) {
		for (i = 0; actions[i]; i++)
			if (!strcmp(json_string_value(v), actions[i]))
				break;
		if (actions[i])
			r->action = (enum cw_action)i;
		else
			cw_load_unknown(ld, kp, "action", json_string_value(v),
					actions);
	}
	v = json_object_get(o, "reason");
	cw_load_key(kp, path, "reason");
	if (v && cw_load_want(ld, v, kp, json_is_string(v), "a string"))
		r->reason = cw_load_strdup(ld, json_string_value(v));
	v = json_object_get(o, "require");
	cw_load_key(kp, path, "require");
	if (v)
		parse_conds(ld, v, kp, run_command, &r->require, &r->nrequire,
			    &r->uses_command);
	v = json_object_get(o, "deny_if");
	cw_load_key(kp, path, "deny_if");
	if (v)
		parse_conds(ld, v, kp, run_command, &r->deny_if, &r->ndeny_if,
			    &r->uses_command);
	v = json_object_get(o, "limits");
	cw_load_key(kp, path, "limits");
	if (v) {
		parse_limits(ld, v, kp, &r->limits, &r->nlimits);
		if (r->nlimits + p->nall_limits > CW_MAX_CALL_LIMITS)
			cw_load_err(ld, kp,
				    "%zu limits apply to this tool with all_tools; expected at most %d",
				    r->nlimits + p->nall_limits,
				    CW_MAX_CALL_LIMITS);
	}
	v = json_object_get(o, "sandbox");
	cw_load_key(kp, path, "sandbox");
	if (v && !run_command) {
		cw_load_err(ld, kp,
			    "a sandbox section applies only to run_command; expected no \"sandbox\" here");
	} else if (v) {
		r->sandbox = cw_load_calloc(ld, 1, sizeof(*r->sandbox));
		if (!r->sandbox)
			return;
		cw_sandbox_default(ld, r->sandbox);
		cw_sandbox_apply(ld, r->sandbox, v, kp, true);
	}
}

static int cmp_rule(const void *a, const void *b)
{
	return strcmp(((const struct cw_rule *)a)->name,
		      ((const struct cw_rule *)b)->name);
}

static void compile(struct cw_loader *ld, struct cw_policy *p, json_t *root)
{
	static const char *const keys[] = { "version", "default", "hide",
					    "max_concurrent", "all_tools",
					    "tools", NULL };
	static const char *const defaults[] = { "allow", "deny", NULL };
	static const char *const all_keys[] = { "limits", NULL };
	const char *name;
	json_t *v, *rv;
	size_t i, w;

	cw_sandbox_default(ld, &p->default_sandbox);
	if (!cw_load_want(ld, root, "", json_is_object(root),
			  "a JSON object at the top level"))
		return;
	cw_load_keys(ld, root, "", keys);

	v = json_object_get(root, "version");
	if (!v)
		cw_load_err(ld, "version",
			    "missing required field \"version\"; expected \"version\": \"1\"");
	else if (cw_load_want(ld, v, "version", json_is_string(v),
			      "the string \"1\"") &&
		 strcmp(json_string_value(v), "1")) {
		char qs[CW_TEXT_QUOTE_LEN];

		cw_load_err(ld, "version", "unsupported version %s; expected \"1\"",
			    cw_text_quote(qs, sizeof(qs),
					  json_string_value(v)));
	}

	v = json_object_get(root, "default");
	p->default_action = CW_ACTION_DENY;
	if (!v) {
		cw_load_err(ld, "default",
			    "missing required field \"default\"; expected \"allow\" or \"deny\"");
	} else if (cw_load_want(ld, v, "default", json_is_string(v),
				"\"allow\" or \"deny\"")) {
		if (!strcmp(json_string_value(v), "allow"))
			p->default_action = CW_ACTION_ALLOW;
		else if (strcmp(json_string_value(v), "deny"))
			cw_load_unknown(ld, "default", "default action",
					json_string_value(v), defaults);
	}

	v = json_object_get(root, "hide");
	if (v) {
		cw_load_strv_set(ld, v, "hide", "an array of tool names (\"*\" for all)",
				 cw_load_nonempty, &p->hide);
		if (p->hide.n)
			qsort(p->hide.v, p->hide.n, sizeof(char *), cmp_str);
		for (i = 0, w = 0; i < p->hide.n; i++) {
			if (!strcmp(p->hide.v[i], "*"))
				p->hide_all = true;
			if (w && !strcmp(p->hide.v[w - 1], p->hide.v[i]))
				free(p->hide.v[i]);
			else
				p->hide.v[w++] = p->hide.v[i];
		}
		p->hide.n = w;
	}

	/* 0 = not set: the engine uses CPUs x 4. */
	v = json_object_get(root, "max_concurrent");
	if (v)
		cw_load_set_int(ld, v, "max_concurrent", 1, MAX_CONCURRENT,
				"an integer from 1 to 65536 commands running at once",
				&p->max_concurrent);

	v = json_object_get(root, "all_tools");
	if (v && cw_load_want(ld, v, "all_tools", json_is_object(v),
			      "an object {\"limits\": [...]}")) {
		cw_load_keys(ld, v, "all_tools", all_keys);
		rv = json_object_get(v, "limits");
		if (rv) {
			parse_limits(ld, rv, "all_tools.limits",
				     &p->all_limits, &p->nall_limits);
			if (p->nall_limits > CW_MAX_CALL_LIMITS)
				cw_load_err(ld, "all_tools.limits",
					    "%zu limits; expected at most %d",
					    p->nall_limits,
					    CW_MAX_CALL_LIMITS);
		}
	}

	v = json_object_get(root, "tools");
	if (v && cw_load_want(ld, v, "tools", json_is_object(v),
			      "an object mapping tool names to rules")) {
		p->rules = cw_load_calloc(ld, json_object_size(v), sizeof(*p->rules));
		if (json_object_size(v) && !p->rules)
			return;
		json_object_foreach(v, name, rv) {
			char kp[CW_LOAD_PATH_LEN];

			cw_load_key(kp, "tools", name);
			parse_rule(ld, p, name, rv, kp, &p->rules[p->nrules]);
			p->nrules++;
		}
		if (!ld->oom && p->nrules)
			qsort(p->rules, p->nrules, sizeof(*p->rules),
			      cmp_rule);
	}
}

/* ---- positions: JSON path -> line:column ------------------------------ */

struct pos {
	char path[CW_LOAD_PATH_LEN];
	int line, col;
};

struct scan {
	const char *s, *end;
	int line, col;
	bool bad;
	struct cw_buf path;
	struct pos *want;	/* sorted by path */
	size_t nwant;
};

static int cmp_pos(const void *a, const void *b)
{
	return strcmp(((const struct pos *)a)->path,
		      ((const struct pos *)b)->path);
}

static void sc_adv(struct scan *sc)
{
	unsigned char c = (unsigned char)*sc->s++;

	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		sc->col++;
	}
}

static void sc_ws(struct scan *sc)
{
	while (sc->s < sc->end && (*sc->s == ' ' || *sc->s == '\t' ||
				   *sc->s == '\n' || *sc->s == '\r'))
		sc_adv(sc);
}

static void sc_mark(struct scan *sc, int line, int col)
{
	struct pos key, *hit;

	if (!sc->path.data || sc->path.len >= CW_LOAD_PATH_LEN)
		return;
	memcpy(key.path, sc->path.data, sc->path.len + 1);
	hit = bsearch(&key, sc->want, sc->nwant, sizeof(key), cmp_pos);
	if (hit && !hit->line) {
		hit->line = line;
		hit->col = col;
	}
}

/* Skips a string token; the text between the quotes is [*b, *e). */
static void sc_string(struct scan *sc, const char **b, const char **e)
{
	sc_adv(sc);
	*b = sc->s;
	while (sc->s < sc->end && *sc->s != '"') {
		if (*sc->s == '\\' && sc->s + 1 < sc->end)
			sc_adv(sc);
		sc_adv(sc);
	}
	*e = sc->s;
	if (sc->s < sc->end)
		sc_adv(sc);
	else
		sc->bad = true;
}

static void sc_push_key(struct scan *sc, const char *b, size_t n)
{
	if ((sc->path.len && cw_buf_append(&sc->path, ".", 1)) ||
	    cw_buf_append(&sc->path, b, n))
		sc->bad = true;
}

static void sc_push_idx(struct scan *sc, size_t idx)
{
	char tmp[32];
	int r = snprintf(tmp, sizeof(tmp), "[%zu]", idx);

	if (r < 0 || cw_buf_append(&sc->path, tmp, (size_t)r))
		sc->bad = true;
}

static void sc_value(struct scan *sc)
{
	const char *b, *e;
	size_t base, idx = 0;

	sc_ws(sc);
	if (sc->s >= sc->end) {
		sc->bad = true;
		return;
	}
	base = sc->path.len;
	if (*sc->s == '{' || *sc->s == '[') {
		char close = *sc->s == '{' ? '}' : ']';
		bool obj = close == '}';

		sc_adv(sc);
		sc_ws(sc);
		if (sc->s < sc->end && *sc->s == close) {
			sc_adv(sc);
			return;
		}
		while (!sc->bad && sc->s < sc->end) {
			int line, col;

			sc_ws(sc);
			line = sc->line;
			col = sc->col;
			if (obj) {
				json_t *k = NULL;

				if (sc->s >= sc->end || *sc->s != '"') {
					sc->bad = true;
					return;
				}
				sc_string(sc, &b, &e);
				if (memchr(b, '\\', (size_t)(e - b))) {
					/* jansson decodes the escapes */
					k = json_loadb(b - 1,
						       (size_t)(e - b) + 2,
						       JSON_DECODE_ANY, NULL);
					if (!json_is_string(k)) {
						json_decref(k);
						sc->bad = true;
						return;
					}
					sc_push_key(sc, json_string_value(k),
						    json_string_length(k));
					json_decref(k);
				} else {
					sc_push_key(sc, b, (size_t)(e - b));
				}
				sc_mark(sc, line, col);
				sc_ws(sc);
				if (sc->s >= sc->end || *sc->s != ':') {
					sc->bad = true;
					return;
				}
				sc_adv(sc);
			} else {
				sc_push_idx(sc, idx++);
				sc_mark(sc, line, col);
			}
			if (sc->bad)
				return;
			sc_value(sc);
			sc->path.len = base;
			if (sc->path.data)
				sc->path.data[base] = '\0';
			sc_ws(sc);
			if (sc->s < sc->end && *sc->s == ',') {
				sc_adv(sc);
				continue;
			}
			if (sc->s < sc->end && *sc->s == close) {
				sc_adv(sc);
				return;
			}
			sc->bad = true;
		}
		return;
	}
	if (*sc->s == '"') {
		sc_string(sc, &b, &e);
		return;
	}
	while (sc->s < sc->end && !strchr(",]} \t\r\n", *sc->s))
		sc_adv(sc);
}

/* Strips the last ".key" or "[i]" of path; false when nothing is left. */
static bool path_parent(char *path)
{
	char *dot = strrchr(path, '.'), *br = strrchr(path, '[');
	char *cut = dot > br ? dot : br;

	if (!cut) {
		if (!path[0])
			return false;
		path[0] = '\0';
		return true;
	}
	*cut = '\0';
	return true;
}

struct err_at {
	struct cw_error e;
	size_t idx;
};

static int cmp_err(const void *a, const void *b)
{
	const struct err_at *x = a, *y = b;
	long lx = x->e.line ? x->e.line : LONG_MAX;
	long ly = y->e.line ? y->e.line : LONG_MAX;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->e.column != y->e.column)
		return x->e.column < y->e.column ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Gives errors [from, n) a line and column, then sorts them by position
 * (a stable sort: errors at the same place keep their order). */
static void locate_errors(struct cw_diag *d, size_t from, const char *buf,
			  size_t len)
{
	struct scan sc = { .s = buf, .end = buf + len, .line = 1, .col = 1 };
	struct err_at *tmp = NULL;
	size_t i, j, n = 0, cap = 0;

	for (i = from; i < d->n; i++) {
		char p[CW_LOAD_PATH_LEN];

		if (d->items[i].line)
			continue;
		memcpy(p, d->items[i].path, CW_LOAD_PATH_LEN);
		p[CW_LOAD_PATH_LEN - 1] = '\0';
		do {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct pos *w = realloc(sc.want,
							nc * sizeof(*w));

				if (!w)
					goto out;
				sc.want = w;
				cap = nc;
			}
			memset(&sc.want[n], 0, sizeof(sc.want[n]));
			memcpy(sc.want[n].path, p, CW_LOAD_PATH_LEN);
			n++;
		} while (path_parent(p));
	}
	if (!n)
		goto sort;
	qsort(sc.want, n, sizeof(*sc.want), cmp_pos);
	for (i = 1, j = 1; i < n; i++)
		if (strcmp(sc.want[i].path, sc.want[j - 1].path))
			sc.want[j++] = sc.want[i];
	sc.nwant = j;
	if (cw_buf_append(&sc.path, "", 0))
		goto out;
	sc_ws(&sc);
	sc_mark(&sc, sc.line, sc.col);
	sc_value(&sc);
	for (i = from; i < d->n; i++) {
		struct pos key, *hit;

		if (d->items[i].line)
			continue;
		memcpy(key.path, d->items[i].path, CW_LOAD_PATH_LEN);
		key.path[CW_LOAD_PATH_LEN - 1] = '\0';
		do {
			hit = bsearch(&key, sc.want, sc.nwant, sizeof(key),
				      cmp_pos);
			if (hit && hit->line) {
				d->items[i].line = hit->line;
				d->items[i].column = hit->col;
				break;
			}
		} while (path_parent(key.path));
	}
sort:
	n = d->n - from;
	if (n < 2)
		goto out;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		goto out;
	for (i = 0; i < n; i++) {
		tmp[i].e = d->items[from + i];
		tmp[i].idx = i;
	}
	qsort(tmp, n, sizeof(*tmp), cmp_err);
	for (i = 0; i < n; i++)
		d->items[from + i] = tmp[i].e;
out:
	free(tmp);
	free(sc.want);
	cw_buf_free(&sc.path);
}

/* ---- loading ---------------------------------------------------------- */

struct cw_policy *cw_policy_load_buffer(const char *buf, size_t len,
					const char *source,
					struct cw_diag *diag)
{
	struct cw_loader ld = { source ? source : "<buffer>", diag, 0, false };
	size_t from = diag ? diag->n : 0;
	struct cw_policy *p = NULL;
	json_t *root = NULL;
	json_error_t je;
	int err;

	if (!buf)
		buf = "";
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (json_error_code(&je) == json_error_out_of_memory) {
			err = ENOMEM;
			goto fail;
		}
		if (diag)
			cw_diag_add(diag, ld.source, je.line > 0 ? je.line : 0,
				    je.line > 0 ? je.column : 0, "",
				    "invalid JSON: %s; expected %s", je.text,
				    json_error_code(&je) ==
						    json_error_duplicate_key ?
					    "each key at most once in an object (a repeated key must not silently override)" :
					    "a JSON object (the policy)");
		err = EINVAL;
		goto fail;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = ENOMEM;
		goto fail;
	}
	p->source = cw_load_strdup(&ld, ld.source);
	compile(&ld, p, root);
	if (ld.oom) {
		err = ENOMEM;
		goto fail;
	}
	if (ld.nerr) {
		err = EINVAL;
		if (diag)
			locate_errors(diag, from, buf, len);
		goto fail;
	}
	json_decref(root);
	return p;
fail:
	cw_policy_free(p);
	json_decref(root);
	if (err == ENOMEM && diag)
		cw_diag_add(diag, ld.source, 0, 0, "",
			    "out of memory while loading the policy");
	errno = err;
	return NULL;
}

static int read_file(const char *path, char **out, size_t *outlen)
{
	struct cw_buf b = { 0 };
	struct stat st;
	char chunk[65536];
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		if (b.len + (size_t)n > POLICY_MAX_BYTES) {
			err = -EFBIG;
			goto out;
		}
		err = cw_buf_append(&b, chunk, (size_t)n);
		if (err)
			goto out;
	}
	if (!b.data && cw_buf_append(&b, "", 0)) {
		err = -ENOMEM;
		goto out;
	}
	*out = b.data;
	*outlen = b.len;
	b.data = NULL;
	err = 0;
out:
	cw_buf_free(&b);
	close(fd);
	return err;
}

struct cw_policy *cw_policy_load_file(const char *path, struct cw_diag *diag)
{
	struct cw_policy *p;
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = read_file(path, &buf, &len);
	if (err) {
		if (diag)
			cw_diag_add(diag, path, 0, 0, "",
				    "cannot read the policy file: %s%s",
				    strerror(-err),
				    err == -EFBIG ?
					    " (expected at most 16 MiB)" :
					    "");
		errno = -err;
		return NULL;
	}
	p = cw_policy_load_buffer(buf, len, path, diag);
	err = p ? 0 : errno;
	free(buf);
	errno = err;
	return p;
}

struct cw_policy *cw_policy_load_default(struct cw_diag *diag)
{
	return cw_policy_load_buffer(
		cw_default_policy_json,
		(size_t)(cw_default_policy_json_end - cw_default_policy_json),
		"<embedded>", diag);
}

/* ---- lookups ---------------------------------------------------------- */

static int cmp_name_rule(const void *key, const void *r)
{
	return strcmp(key, ((const struct cw_rule *)r)->name);
}

static int cmp_name_str(const void *key, const void *s)
{
	return strcmp(key, *(char *const *)s);
}

const struct cw_rule *cw_policy_rule(const struct cw_policy *p,
				     const char *tool)
{
	if (!p || !tool || !p->nrules)
		return NULL;
	return bsearch(tool, p->rules, p->nrules, sizeof(*p->rules),
		       cmp_name_rule);
}

bool cw_policy_hidden(const struct cw_policy *p, const char *tool)
{
	if (!p || !tool)
		return false;
	if (p->hide_all)
		return true;
	return p->hide.n && bsearch(tool, p->hide.v, p->hide.n,
				    sizeof(char *), cmp_name_str);
}

bool cw_policy_refuses(const struct cw_policy *p, const char *tool)
{
	const struct cw_rule *r;

	if (!p || !tool)
		return false;
	if (cw_policy_hidden(p, tool))
		return true;
	r = cw_policy_rule(p, tool);
	return r ? r->action == CW_ACTION_DENY :
		   p->default_action == CW_ACTION_DENY;
}

const struct cw_sandbox *cw_policy_sandbox(const struct cw_policy *p)
{
	const struct cw_rule *r = cw_policy_rule(p, "run_command");

	if (!p)
		return NULL;
	return r && r->sandbox ? r->sandbox : &p->default_sandbox;
}
