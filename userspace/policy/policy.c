// SPDX-License-Identifier: Apache-2.0
/*
 * Policy: parse, validate and compile a policy.json.
 *
 * Validation never stops at the first problem: every error is collected
 * with its JSON path, then mapped back to a line and column by re-scanning
 * the text (jansson keeps no positions for values), so a policy author sees
 * all of them at once, in file order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include "policy/decide.h"
#include "policy/policy.h"
#include "lib/text.h"
#include "bpf/trace.h"

extern const char cw_default_policy_json[], cw_default_policy_json_end[];

#define PATH_LEN 256		/* as struct cw_error.path */
#define POLICY_MAX_BYTES (16u << 20)
#define COUNTER_MAX_LEN 128
#define WINDOW_MAX_S (366 * 86400)

/*
 * The default sandbox profile, the one place it is defined.
 *
 * It is used as is when run_command has no "sandbox" section, and it is the
 * base a "sandbox" section is applied to: every field given overrides the
 * default of that field; nested objects (env, resources, filesystem, network,
 * seccomp) are applied field by field, so "resources": {"memory_mb": 64}
 * keeps the other resource limits. Lists replace the default list as a
 * whole. env.set is merged key by key; a key set to null removes a default.
 */
static const char default_sandbox_json[] =
	"{\n"
	"  \"user\": \"user\",\n"
	"  \"shell\": \"/bin/bash\",\n"
	"  \"cwd\": \"/home/user\",\n"
	"  \"env\": {\n"
	"    \"pass\": [\"LANG\", \"TERM\"],\n"
	"    \"set\": { \"PATH\": \"/usr/local/bin:/usr/bin:/bin\" }\n"
	"  },\n"
	"  \"timeout_s\": 60,\n"
	"  \"max_output_bytes\": 1048576,\n"
	"  \"resources\": { \"memory_mb\": 1024, \"pids\": 256, \"cpu_s\": 120,\n"
	"                 \"nofile\": 1024, \"file_size_mb\": 512 },\n"
	"  \"filesystem\": { \"read\": [\"/\"],\n"
	"                  \"write\": [\"/home/user\", \"/tmp\"],\n"
	"                  \"exec\": [\"/usr\", \"/bin\"],\n"
	"                  \"deny\": [\"/root\", \"/etc/shadow\"] },\n"
	"  \"network\": { \"default\": \"allow\",\n"
	"               \"deny\": [\"169.254.169.254/32\", \"fd00:ec2::254/128\"],\n"
	"               \"allow\": [], \"max_connections\": 256,\n"
	"               \"max_egress_bytes\": 0, \"raw_sockets\": false },\n"
	"  \"seccomp\": { \"profile\": \"default\", \"deny\": [], \"allow\": [] },\n"
	"  \"require_layers\": []\n"
	"}\n";

/* Range of each bounded number of the sandbox section. */
#define TIMEOUT_MAX_S 86400
#define MAX_CONCURRENT 65536
#define OUTPUT_MAX_BYTES (256ll << 20)
#define MEMORY_MAX_MB (1ll << 30)
#define PIDS_MAX 4194304ll
#define CPU_MAX_S (1ll << 31)
#define NOFILE_MAX (1ll << 20)
#define FSIZE_MAX_MB (1ll << 30)
#define CONN_MAX (1ll << 31)

struct loader {
	const char *source;
	struct cw_diag *diag;
	size_t nerr;
	bool oom;
};

static const char *const op_names[] = {
	[CW_OP_EQ] = "eq",		[CW_OP_NEQ] = "neq",
	[CW_OP_IN] = "in",		[CW_OP_NOT_IN] = "not_in",
	[CW_OP_LT] = "lt",		[CW_OP_LTE] = "lte",
	[CW_OP_GT] = "gt",		[CW_OP_GTE] = "gte",
	[CW_OP_REGEX] = "regex",	[CW_OP_NOT_REGEX] = "not_regex",
	[CW_OP_CONTAINS] = "contains",	[CW_OP_PREFIX] = "prefix",
	[CW_OP_MAX_LENGTH] = "max_length", [CW_OP_EXISTS] = "exists",
};

static const char *const layer_names[] = {
	"seccomp", "landlock", "bpf_net", "cgroup", "bpf_trace",
};

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

const char *cw_op_name(enum cw_op op)
{
	if ((size_t)op < CW_ARRAY_SIZE(op_names) && op_names[op])
		return op_names[op];
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

/* ---- diagnostics ------------------------------------------------------ */

static void __attribute__((format(printf, 3, 4)))
perr(struct loader *ld, const char *path, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ld->nerr++;
	if (ld->diag)
		cw_diag_add(ld->diag, ld->source, 0, 0, path, "%s", text);
}

static char *xstrdup(struct loader *ld, const char *s)
{
	char *d = strdup(s);

	if (!d)
		ld->oom = true;
	return d;
}

static void *xcalloc(struct loader *ld, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = calloc(n, size);
	if (!p)
		ld->oom = true;
	return p;
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

static void path_key(char *dst, const char *parent, const char *key)
{
	int r;

	if (parent[0])
		r = snprintf(dst, PATH_LEN, "%s.%s", parent, key);
	else
		r = snprintf(dst, PATH_LEN, "%s", key);
	if (r < 0)
		dst[0] = '\0';
}

static void path_idx(char *dst, const char *parent, size_t i)
{
	if (snprintf(dst, PATH_LEN, "%s[%zu]", parent, i) < 0)
		dst[0] = '\0';
}

/* Edit distance, for "did you mean"; large when either side is long. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *suggest(const char *word, const char *const *known)
{
	const char *best = NULL;
	size_t bd = 3, i;

	for (i = 0; known[i]; i++) {
		size_t d = edit_distance(word, known[i]);

		if (d < bd) {
			bd = d;
			best = known[i];
		}
	}
	return best;
}

/* "a", "b" or "c" */
static void one_of(char *buf, size_t len, const char *const *known)
{
	size_t o = 0, i, n = 0;

	while (known[n])
		n++;
	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++) {
		int r = snprintf(buf + o, len - o, "%s\"%s\"",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ",
				 known[i]);

		if (r < 0)
			break;
		o += (size_t)r;
	}
}

static void unknown_word(struct loader *ld, const char *path, const char *what,
			 const char *word, const char *const *known)
{
	char list[320], qw[CW_TEXT_QUOTE_LEN], hint[64] = "";
	const char *near = suggest(word, known);

	one_of(list, sizeof(list), known);
	if (near && snprintf(hint, sizeof(hint), " (did you mean \"%s\"?)",
			     near) < 0)
		hint[0] = '\0';
	perr(ld, path, "unknown %s %s%s; expected %s", what,
	     cw_text_quote(qw, sizeof(qw), word), hint, list);
}

/* Every key of obj must be in known (NULL-terminated). */
static void check_keys(struct loader *ld, json_t *obj, const char *path,
		       const char *const *known)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		char kp[PATH_LEN];
		size_t i;

		for (i = 0; known[i]; i++)
			if (!strcmp(key, known[i]))
				break;
		if (known[i])
			continue;
		path_key(kp, path, key);
		unknown_word(ld, kp, "key", key, known);
	}
}

static bool want_type(struct loader *ld, json_t *v, const char *path,
		      bool ok, const char *expected)
{
	if (!ok)
		perr(ld, path, "expected %s, got %s", expected, jtype(v));
	return ok;
}

/* An integer in [lo, hi]; on success *out is set. */
static bool get_int(struct loader *ld, json_t *v, const char *path,
		    long long lo, long long hi, const char *expected,
		    int64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		if (json_is_integer(v))
			perr(ld, path, "%lld is out of range; expected %s",
			     (long long)json_integer_value(v), expected);
		else
			perr(ld, path, "expected %s, got %s", expected,
			     jtype(v));
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

/* ---- string vectors --------------------------------------------------- */

static void strv_free(struct cw_strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static int strv_push(struct loader *ld, struct cw_strv *s, const char *str)
{
	char **v = realloc(s->v, (s->n + 1) * sizeof(*v));
	char *d;

	if (!v) {
		ld->oom = true;
		return -ENOMEM;
	}
	s->v = v;
	d = xstrdup(ld, str);
	if (!d)
		return -ENOMEM;
	s->v[s->n++] = d;
	return 0;
}

/* Checks one element of a string list; returns false (after reporting). */
typedef bool (*str_check)(struct loader *ld, const char *s, const char *path);

/* Replaces *dst with the strings of arr when every element passes check. */
static void strv_set(struct loader *ld, json_t *arr, const char *path,
		     const char *expected, str_check check, struct cw_strv *dst)
{
	struct cw_strv nv = { 0 };
	bool ok = true;
	size_t i;
	json_t *e;

	if (!want_type(ld, arr, path, json_is_array(arr), expected))
		return;
	json_array_foreach(arr, i, e) {
		char ep[PATH_LEN];

		path_idx(ep, path, i);
		if (!json_is_string(e)) {
			perr(ld, ep, "expected a string, got %s", jtype(e));
			ok = false;
			continue;
		}
		if (check && !check(ld, json_string_value(e), ep)) {
			ok = false;
			continue;
		}
		if (ok && strv_push(ld, &nv, json_string_value(e)))
			ok = false;
	}
	if (!ok) {
		strv_free(&nv);
		return;
	}
	strv_free(dst);
	*dst = nv;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- conditions and limits -------------------------------------------- */

static bool check_nonempty(struct loader *ld, const char *s, const char *path)
{
	if (s[0])
		return true;
	perr(ld, path, "empty string; expected a non-empty name");
	return false;
}

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

static void parse_cond_path(struct loader *ld, struct cw_cond *c,
			    const char *s, const char *path, bool run_command)
{
	const char *p;

	if (!strcmp(s, "command.programs") || !strcmp(s, "command.opaque")) {
		if (!run_command) {
			perr(ld, path,
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

		perr(ld, path,
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

			perr(ld, path,
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

static bool all_strings(json_t *arr)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (!json_is_string(e))
			return false;
	return true;
}

/* Checks the value's type against the op; compiles regexes. */
static void check_cond_value(struct loader *ld, struct cw_cond *c, json_t *v,
			     const char *vpath)
{
	const char *opn = cw_op_name(c->op);
	char qs[CW_TEXT_QUOTE_LEN];
	int rc;

	switch (c->op) {
	case CW_OP_EQ:
	case CW_OP_NEQ:
		break;
	case CW_OP_IN:
	case CW_OP_NOT_IN:
		want_type(ld, v, vpath, json_is_array(v),
			  "an array of values for op \"in\"/\"not_in\"");
		break;
	case CW_OP_LT:
	case CW_OP_LTE:
	case CW_OP_GT:
	case CW_OP_GTE:
		if (!json_is_number(v))
			perr(ld, vpath, "expected a number for op \"%s\", got %s",
			     opn, jtype(v));
		break;
	case CW_OP_REGEX:
	case CW_OP_NOT_REGEX:
		if (!json_is_string(v)) {
			perr(ld, vpath,
			     "expected a string (a POSIX extended regex) for op \"%s\", got %s",
			     opn, jtype(v));
			break;
		}
		rc = regcomp(&c->re, json_string_value(v),
			     REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[160];

			regerror(rc, &c->re, msg, sizeof(msg));
			perr(ld, vpath,
			     "bad regex %s: %s; expected a POSIX extended regular expression",
			     cw_text_quote(qs, sizeof(qs),
					   json_string_value(v)),
			     msg);
			break;
		}
		c->has_re = true;
		break;
	case CW_OP_CONTAINS:
		if (json_is_object(v) ||
		    (json_is_array(v) && !all_strings(v)))
			perr(ld, vpath,
			     "expected a string, a number, a boolean, null or an array of strings for op \"contains\", got %s%s",
			     jtype(v),
			     json_is_array(v) ? " with non-string elements" :
						"");
		break;
	case CW_OP_PREFIX:
		if (!json_is_string(v))
			perr(ld, vpath,
			     "expected a string for op \"prefix\", got %s",
			     jtype(v));
		break;
	case CW_OP_MAX_LENGTH:
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			perr(ld, vpath,
			     "expected a non-negative integer for op \"max_length\", got %s",
			     json_is_integer(v) ? "a negative integer" :
						  jtype(v));
		break;
	case CW_OP_EXISTS:
		if (!json_is_boolean(v))
			perr(ld, vpath,
			     "expected true (present) or false (absent) for op \"exists\", got %s",
			     jtype(v));
		break;
	}
}

/* command.programs is a list of strings, command.opaque a boolean: ops
 * that can never apply to them are load errors, not silent denials. */
static void check_cmd_op(struct loader *ld, struct cw_cond *c, json_t *v,
			 const char *path)
{
	bool ok;

	if (c->kind == CW_PATH_CMD_PROGRAMS) {
		ok = c->op == CW_OP_EQ || c->op == CW_OP_NEQ ||
		     c->op == CW_OP_IN || c->op == CW_OP_NOT_IN ||
		     c->op == CW_OP_REGEX || c->op == CW_OP_NOT_REGEX ||
		     c->op == CW_OP_CONTAINS || c->op == CW_OP_MAX_LENGTH ||
		     c->op == CW_OP_EXISTS;
		if (!ok)
			perr(ld, path,
			     "op \"%s\" cannot apply to command.programs (a list of program names); expected eq, neq, in, not_in, regex, not_regex, contains, max_length or exists",
			     cw_op_name(c->op));
		return;
	}
	ok = c->op == CW_OP_EQ || c->op == CW_OP_NEQ || c->op == CW_OP_IN ||
	     c->op == CW_OP_NOT_IN || c->op == CW_OP_EXISTS;
	if (!ok) {
		perr(ld, path,
		     "op \"%s\" cannot apply to command.opaque (a boolean); expected eq, neq, in, not_in or exists",
		     cw_op_name(c->op));
		return;
	}
	if (v && (c->op == CW_OP_EQ || c->op == CW_OP_NEQ) &&
	    !json_is_boolean(v))
		perr(ld, path, "command.opaque is a boolean; expected true or false as value, got %s",
		     jtype(v));
}

static void parse_cond(struct loader *ld, json_t *o, const char *path,
		       bool run_command, struct cw_cond *c)
{
	static const char *const keys[] = { "path", "op", "value", "reason",
					    NULL };
	char kp[PATH_LEN];
	json_t *v, *val;
	bool op_ok = false;
	size_t i;

	if (!want_type(ld, o, path, json_is_object(o),
		       "a condition object {\"path\", \"op\", \"value\"}"))
		return;
	check_keys(ld, o, path, keys);
	c->where = xstrdup(ld, path);

	path_key(kp, path, "path");
	v = json_object_get(o, "path");
	if (!v)
		perr(ld, kp,
		     "missing required field \"path\"; expected a string such as \"args.command\"");
	else if (want_type(ld, v, kp, json_is_string(v), "a string")) {
		c->path = xstrdup(ld, json_string_value(v));
		parse_cond_path(ld, c, json_string_value(v), kp, run_command);
	}

	path_key(kp, path, "op");
	v = json_object_get(o, "op");
	if (!v) {
		perr(ld, kp,
		     "missing required field \"op\"; expected one of eq, neq, in, not_in, lt, lte, gt, gte, regex, not_regex, contains, prefix, max_length, exists");
	} else if (want_type(ld, v, kp, json_is_string(v), "a string")) {
		for (i = 0; i < CW_ARRAY_SIZE(op_names); i++)
			if (!strcmp(json_string_value(v), op_names[i]))
				break;
		if (i < CW_ARRAY_SIZE(op_names)) {
			c->op = (enum cw_op)i;
			op_ok = true;
		} else {
			const char *known[CW_ARRAY_SIZE(op_names) + 1];

			memcpy(known, op_names, sizeof(op_names));
			known[CW_ARRAY_SIZE(op_names)] = NULL;
			unknown_word(ld, kp, "op", json_string_value(v),
				     known);
		}
	}

	path_key(kp, path, "value");
	val = json_object_get(o, "value");
	if (op_ok && !val && c->op != CW_OP_EXISTS)
		perr(ld, kp, "missing required field \"value\" for op \"%s\"",
		     cw_op_name(c->op));
	if (op_ok && val)
		check_cond_value(ld, c, val, kp);
	if (op_ok && c->path && c->kind != CW_PATH_ARGS)
		check_cmd_op(ld, c, val, path);
	/* exists without a value means "is present". */
	c->value = val ? json_incref(val) : json_true();

	path_key(kp, path, "reason");
	v = json_object_get(o, "reason");
	if (v && want_type(ld, v, kp, json_is_string(v), "a string"))
		c->reason = xstrdup(ld, json_string_value(v));
}

static void parse_conds(struct loader *ld, json_t *arr, const char *path,
			bool run_command, struct cw_cond **out, size_t *n,
			bool *uses_command)
{
	size_t i;
	json_t *e;

	if (!want_type(ld, arr, path, json_is_array(arr),
		       "an array of conditions"))
		return;
	*out = xcalloc(ld, json_array_size(arr), sizeof(**out));
	if (!*out)
		return;
	json_array_foreach(arr, i, e) {
		char ep[PATH_LEN];

		path_idx(ep, path, i);
		parse_cond(ld, e, ep, run_command, &(*out)[i]);
		*n = i + 1;
		if ((*out)[i].path && (*out)[i].kind != CW_PATH_ARGS)
			*uses_command = true;
	}
}

static bool check_counter(struct loader *ld, const char *s, const char *path)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		/* '|' separates the parts of a counter key. */
		if (c < 0x20 || c == 0x7f || c == '|') {
			perr(ld, path,
			     "counter name has a control character or '|'; expected printable text");
			return false;
		}
	}
	if (!i || i > COUNTER_MAX_LEN) {
		perr(ld, path,
		     "counter name is %zu bytes long; expected 1 to %d bytes",
		     i, COUNTER_MAX_LEN);
		return false;
	}
	return true;
}

static void parse_limit(struct loader *ld, json_t *o, const char *path,
			struct cw_limit *l)
{
	static const char *const keys[] = { "counter", "window", "max",
					    "scope", NULL };
	static const char *const scopes[] = { "grant", "session", "global",
					      NULL };
	static const char *const windows[] = { "second", "minute", "hour",
					       "day", NULL };
	static const int64_t window_s[] = { 1, 60, 3600, 86400 };
	char kp[PATH_LEN], qs[CW_TEXT_QUOTE_LEN];
	json_t *v;
	size_t i;

	if (!want_type(ld, o, path, json_is_object(o),
		       "a limit object {\"counter\", \"window\", \"max\", \"scope\"}"))
		return;
	check_keys(ld, o, path, keys);
	l->where = xstrdup(ld, path);

	path_key(kp, path, "counter");
	v = json_object_get(o, "counter");
	if (!v)
		perr(ld, kp,
		     "missing required field \"counter\"; expected the counter's name");
	else if (want_type(ld, v, kp, json_is_string(v), "a string") &&
		 check_counter(ld, json_string_value(v), kp))
		l->counter = xstrdup(ld, json_string_value(v));

	path_key(kp, path, "window");
	v = json_object_get(o, "window");
	if (!v) {
		perr(ld, kp,
		     "missing required field \"window\"; expected \"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds");
	} else if (json_is_string(v)) {
		for (i = 0; windows[i]; i++)
			if (!strcmp(json_string_value(v), windows[i]))
				break;
		if (windows[i])
			l->window_s = window_s[i];
		else
			perr(ld, kp,
			     "unknown window %s; expected \"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds",
			     cw_text_quote(qs, sizeof(qs),
					   json_string_value(v)));
	} else {
		get_int(ld, v, kp, 1, WINDOW_MAX_S,
			"\"second\", \"minute\", \"hour\", \"day\" or a positive number of seconds (at most 31622400, 366 days)",
			&l->window_s);
	}

	path_key(kp, path, "max");
	v = json_object_get(o, "max");
	if (!v)
		perr(ld, kp,
		     "missing required field \"max\"; expected a non-negative integer");
	else
		get_int(ld, v, kp, 0, INT64_MAX, "a non-negative integer",
			&l->max);

	path_key(kp, path, "scope");
	v = json_object_get(o, "scope");
	l->scope = CW_SCOPE_GRANT;
	if (v && want_type(ld, v, kp, json_is_string(v), "a string")) {
		for (i = 0; scopes[i]; i++)
			if (!strcmp(json_string_value(v), scopes[i]))
				break;
		if (scopes[i])
			l->scope = (enum cw_scope)i;
		else
			unknown_word(ld, kp, "scope", json_string_value(v),
				     scopes);
	}
}

static void parse_limits(struct loader *ld, json_t *arr, const char *path,
			 struct cw_limit **out, size_t *n)
{
	size_t i;
	json_t *e;

	if (!want_type(ld, arr, path, json_is_array(arr), "an array of limits"))
		return;
	*out = xcalloc(ld, json_array_size(arr), sizeof(**out));
	if (!*out)
		return;
	json_array_foreach(arr, i, e) {
		char ep[PATH_LEN];

		path_idx(ep, path, i);
		parse_limit(ld, e, ep, &(*out)[i]);
		*n = i + 1;
	}
}

/* ---- sandbox ---------------------------------------------------------- */

static void net_rules_free(struct cw_net_rule *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(r[i].text);
	free(r);
}

static void sandbox_free(struct cw_sandbox *sb)
{
	free(sb->user);
	free(sb->shell);
	free(sb->cwd);
	strv_free(&sb->env_pass);
	strv_free(&sb->env_set_keys);
	strv_free(&sb->env_set_vals);
	strv_free(&sb->filesystem.read);
	strv_free(&sb->filesystem.write);
	strv_free(&sb->filesystem.exec);
	strv_free(&sb->filesystem.deny);
	net_rules_free(sb->network.deny, sb->network.ndeny);
	net_rules_free(sb->network.allow, sb->network.nallow);
	free(sb->seccomp.profile);
	strv_free(&sb->seccomp.deny);
	strv_free(&sb->seccomp.allow);
	strv_free(&sb->files.deny_open);
	memset(sb, 0, sizeof(*sb));
}

static bool check_abs_path(struct loader *ld, const char *s, const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (s[0] == '/' && strlen(s) < PATH_MAX)
		return true;
	perr(ld, path, "%s is not an absolute path; expected a path starting with \"/\"",
	     cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static bool check_ident(struct loader *ld, const char *s, const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (cw_is_identifier(s))
		return true;
	perr(ld, path,
	     "%s is not a valid environment variable name; expected letters, digits and '_', not starting with a digit",
	     cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static bool check_user(struct loader *ld, const char *s, const char *path)
{
	size_t i;
	char qs[CW_TEXT_QUOTE_LEN];

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '.' || (s[i] == '-' && i > 0)))
			break;
	if (i && !s[i] && i <= 32)
		return true;
	perr(ld, path,
	     "%s is not a valid user name; expected 1 to 32 letters, digits, '.', '_' or '-' (not first)",
	     cw_text_quote(qs, sizeof(qs), s));
	return false;
}

static void set_str(struct loader *ld, json_t *v, const char *path,
		    str_check check, char **dst)
{
	char *d;

	if (!want_type(ld, v, path, json_is_string(v), "a string"))
		return;
	if (check && !check(ld, json_string_value(v), path))
		return;
	d = xstrdup(ld, json_string_value(v));
	if (!d)
		return;
	free(*dst);
	*dst = d;
}

static void set_bool(struct loader *ld, json_t *v, const char *path,
		     bool *dst)
{
	if (want_type(ld, v, path, json_is_boolean(v), "true or false"))
		*dst = json_is_true(v);
}

static bool parse_port(const char *s, char **end, unsigned *out)
{
	unsigned long n;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, end, 10);
	if (errno || n < 1 || n > 65535)
		return false;
	*out = (unsigned)n;
	return true;
}

/*
 * ADDR[/LEN][:PORT[-PORT]]; an IPv6 address with a port and no prefix length
 * is written in brackets: [::1]:443.
 */
static bool parse_net_rule(const char *text, struct cw_net_rule *r,
			   char *why, size_t whylen)
{
	char addr[64], *end;
	const char *p = text, *ports = NULL, *slash;
	size_t alen;
	unsigned lo = 0, hi = 0, i;
	long len = -1;

	memset(r, 0, sizeof(*r));
	if (*p == '[') {
		const char *close = strchr(p, ']');

		if (!close) {
			snprintf(why, whylen, "missing ']'");
			return false;
		}
		alen = (size_t)(close - p - 1);
		if (alen >= sizeof(addr))
			goto bad_addr;
		memcpy(addr, p + 1, alen);
		addr[alen] = '\0';
		p = close + 1;
	} else {
		slash = strchr(p, '/');
		if (slash) {
			alen = (size_t)(slash - p);
		} else {
			const char *c1 = strchr(p, ':');

			/* a single ':' is IPv4 with a port, more is IPv6 */
			if (c1 && !strchr(c1 + 1, ':'))
				alen = (size_t)(c1 - p);
			else
				alen = strlen(p);
		}
		if (alen >= sizeof(addr))
			goto bad_addr;
		memcpy(addr, p, alen);
		addr[alen] = '\0';
		p += alen;
	}
	if (inet_pton(AF_INET, addr, r->addr) == 1) {
		r->family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		r->family = AF_INET6;
	} else {
		goto bad_addr;
	}
	if (*p == '/') {
		p++;
		if (*p < '0' || *p > '9') {
			snprintf(why, whylen, "missing prefix length after '/'");
			return false;
		}
		errno = 0;
		len = strtol(p, &end, 10);
		if (errno || len > (r->family == AF_INET ? 32 : 128)) {
			snprintf(why, whylen,
				 "prefix length out of range (0 to %d)",
				 r->family == AF_INET ? 32 : 128);
			return false;
		}
		p = end;
	}
	if (len < 0)
		len = r->family == AF_INET ? 32 : 128;
	r->prefix = (uint8_t)len;
	if (*p == ':') {
		ports = p + 1;
		if (!parse_port(ports, &end, &lo))
			goto bad_port;
		hi = lo;
		if (*end == '-' && !parse_port(end + 1, &end, &hi))
			goto bad_port;
		if (*end || hi < lo)
			goto bad_port;
		p = end;
	}
	if (*p) {
		snprintf(why, whylen, "unexpected text after the address");
		return false;
	}
	for (i = 0; i < 16; i++) {
		unsigned bits = (unsigned)len > i * 8 ?
					(unsigned)len - i * 8 : 0;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		if (r->addr[i] & ~mask) {
			snprintf(why, whylen,
				 "host bits are set beyond the /%ld prefix",
				 len);
			return false;
		}
	}
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return true;
bad_addr:
	snprintf(why, whylen, "not an IPv4 or IPv6 address");
	return false;
bad_port:
	snprintf(why, whylen, "bad port range (expected 1-65535, low-high)");
	return false;
}

static void set_net_rules(struct loader *ld, json_t *arr, const char *path,
			  struct cw_net_rule **dst, size_t *ndst)
{
	struct cw_net_rule *nr = NULL;
	size_t i, n = 0;
	bool ok = true;
	json_t *e;

	if (!want_type(ld, arr, path, json_is_array(arr),
		       "an array of CIDR strings such as \"10.0.0.0/8:443\""))
		return;
	nr = xcalloc(ld, json_array_size(arr), sizeof(*nr));
	if (json_array_size(arr) && !nr)
		return;
	json_array_foreach(arr, i, e) {
		char ep[PATH_LEN], why[96], qs[CW_TEXT_QUOTE_LEN];

		path_idx(ep, path, i);
		if (!json_is_string(e)) {
			perr(ld, ep, "expected a CIDR string, got %s",
			     jtype(e));
			ok = false;
			continue;
		}
		if (!parse_net_rule(json_string_value(e), &nr[n], why,
				    sizeof(why))) {
			perr(ld, ep,
			     "bad CIDR %s: %s; expected ADDR[/LEN][:PORT[-PORT]] such as \"10.0.0.0/8\", \"0.0.0.0/0:443\" or \"[::1]:8000-8999\"",
			     cw_text_quote(qs, sizeof(qs),
					   json_string_value(e)),
			     why);
			ok = false;
			continue;
		}
		nr[n].text = xstrdup(ld, json_string_value(e));
		if (!nr[n].text)
			ok = false;
		n++;
	}
	if (!ok) {
		net_rules_free(nr, n);
		return;
	}
	net_rules_free(*dst, *ndst);
	*dst = nr;
	*ndst = n;
}

static void set_int(struct loader *ld, json_t *v, const char *path,
		    long long lo, long long hi, const char *expected,
		    int64_t *dst)
{
	int64_t x;

	if (get_int(ld, v, path, lo, hi, expected, &x))
		*dst = x;
}

static void env_set_merge(struct loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	const char *key;
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o),
		       "an object of NAME: value strings"))
		return;
	json_object_foreach(o, key, v) {
		char kp[PATH_LEN];
		size_t i;

		path_key(kp, path, key);
		if (!check_ident(ld, key, kp))
			continue;
		if (!json_is_string(v) && !json_is_null(v)) {
			perr(ld, kp,
			     "expected a string (or null to remove a default), got %s",
			     jtype(v));
			continue;
		}
		for (i = 0; i < sb->env_set_keys.n; i++)
			if (!strcmp(sb->env_set_keys.v[i], key))
				break;
		if (json_is_null(v)) {
			if (i == sb->env_set_keys.n)
				continue;
			free(sb->env_set_keys.v[i]);
			free(sb->env_set_vals.v[i]);
			sb->env_set_keys.n--;
			sb->env_set_vals.n--;
			memmove(&sb->env_set_keys.v[i],
				&sb->env_set_keys.v[i + 1],
				(sb->env_set_keys.n - i) * sizeof(char *));
			memmove(&sb->env_set_vals.v[i],
				&sb->env_set_vals.v[i + 1],
				(sb->env_set_vals.n - i) * sizeof(char *));
		} else if (i < sb->env_set_keys.n) {
			char *d = xstrdup(ld, json_string_value(v));

			if (!d)
				return;
			free(sb->env_set_vals.v[i]);
			sb->env_set_vals.v[i] = d;
		} else {
			if (strv_push(ld, &sb->env_set_keys, key))
				return;
			if (strv_push(ld, &sb->env_set_vals,
				      json_string_value(v))) {
				free(sb->env_set_keys.v[--sb->env_set_keys.n]);
				return;
			}
		}
	}
}

static void apply_env(struct loader *ld, struct cw_sandbox *sb, json_t *o,
		      const char *path)
{
	static const char *const keys[] = { "pass", "set", NULL };
	char kp[PATH_LEN];
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o),
		       "an object {\"pass\", \"set\"}"))
		return;
	check_keys(ld, o, path, keys);
	path_key(kp, path, "pass");
	v = json_object_get(o, "pass");
	if (v)
		strv_set(ld, v, kp, "an array of variable names", check_ident,
			 &sb->env_pass);
	path_key(kp, path, "set");
	v = json_object_get(o, "set");
	if (v)
		env_set_merge(ld, sb, v, kp);
}

struct int_field {
	const char *name;
	long long lo, hi;
	const char *expected;
	size_t off;
};

#define SB_OFF(f) offsetof(struct cw_sandbox, f)

static void apply_ints(struct loader *ld, struct cw_sandbox *sb, json_t *o,
		       const char *path, const struct int_field *f, size_t n)
{
	char kp[PATH_LEN];
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(o, f[i].name);

		if (!v)
			continue;
		path_key(kp, path, f[i].name);
		set_int(ld, v, kp, f[i].lo, f[i].hi, f[i].expected,
			(int64_t *)((char *)sb + f[i].off));
	}
}

static void apply_resources(struct loader *ld, struct cw_sandbox *sb,
			    json_t *o, const char *path)
{
	static const char *const keys[] = { "memory_mb", "pids", "cpu_s",
					    "nofile", "file_size_mb", NULL };
	static const struct int_field f[] = {
		{ "memory_mb", 0, MEMORY_MAX_MB,
		  "an integer from 0 (unlimited) to 1073741824 MiB",
		  SB_OFF(resources.memory_mb) },
		{ "pids", 0, PIDS_MAX,
		  "an integer from 0 (unlimited) to 4194304",
		  SB_OFF(resources.pids) },
		{ "cpu_s", 0, CPU_MAX_S,
		  "an integer from 0 (unlimited) to 2147483648 seconds",
		  SB_OFF(resources.cpu_s) },
		{ "nofile", 0, NOFILE_MAX,
		  "an integer from 0 (unlimited) to 1048576",
		  SB_OFF(resources.nofile) },
		{ "file_size_mb", 0, FSIZE_MAX_MB,
		  "an integer from 0 (unlimited) to 1073741824 MiB",
		  SB_OFF(resources.file_size_mb) },
	};

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
}

static void apply_filesystem(struct loader *ld, struct cw_sandbox *sb,
			     json_t *o, const char *path)
{
	static const char *const keys[] = { "read", "write", "exec", "deny",
					    NULL };
	struct cw_strv *dst[] = { &sb->filesystem.read, &sb->filesystem.write,
				  &sb->filesystem.exec, &sb->filesystem.deny };
	char kp[PATH_LEN];
	size_t i;

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	for (i = 0; i < CW_ARRAY_SIZE(dst); i++) {
		json_t *v = json_object_get(o, keys[i]);

		if (!v)
			continue;
		path_key(kp, path, keys[i]);
		strv_set(ld, v, kp, "an array of absolute paths",
			 check_abs_path, dst[i]);
	}
}

static void apply_network(struct loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	static const char *const keys[] = { "default", "deny", "allow",
					    "max_connections",
					    "max_egress_bytes", "raw_sockets",
					    "audit_allowed", NULL };
	static const char *const defaults[] = { "allow", "deny", NULL };
	static const struct int_field f[] = {
		{ "max_connections", 0, CONN_MAX,
		  "an integer from 0 (unlimited) to 2147483648",
		  SB_OFF(network.max_connections) },
		{ "max_egress_bytes", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(network.max_egress_bytes) },
	};
	char kp[PATH_LEN];
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	v = json_object_get(o, "default");
	path_key(kp, path, "default");
	if (v && want_type(ld, v, kp, json_is_string(v), "a string")) {
		if (!strcmp(json_string_value(v), "allow"))
			sb->network.default_allow = true;
		else if (!strcmp(json_string_value(v), "deny"))
			sb->network.default_allow = false;
		else
			unknown_word(ld, kp, "network default",
				     json_string_value(v), defaults);
	}
	v = json_object_get(o, "deny");
	path_key(kp, path, "deny");
	if (v)
		set_net_rules(ld, v, kp, &sb->network.deny, &sb->network.ndeny);
	v = json_object_get(o, "allow");
	path_key(kp, path, "allow");
	if (v)
		set_net_rules(ld, v, kp, &sb->network.allow,
			      &sb->network.nallow);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
	v = json_object_get(o, "raw_sockets");
	path_key(kp, path, "raw_sockets");
	if (v)
		set_bool(ld, v, kp, &sb->network.raw_sockets);
	v = json_object_get(o, "audit_allowed");
	path_key(kp, path, "audit_allowed");
	if (v)
		set_bool(ld, v, kp, &sb->network.audit_allowed);
}

/* A deny_open prefix must fit the kernel program's fixed-size slot. */
static bool check_deny_prefix(struct loader *ld, const char *s,
			      const char *path)
{
	char qs[CW_TEXT_QUOTE_LEN];

	if (!check_abs_path(ld, s, path))
		return false;
	if (strlen(s) < TRACE_DENY_LEN)
		return true;
	perr(ld, path, "%s is longer than %d bytes; expected a shorter path prefix",
	     cw_text_quote(qs, sizeof(qs), s), TRACE_DENY_LEN - 1);
	return false;
}

static void apply_files(struct loader *ld, struct cw_sandbox *sb, json_t *o,
			const char *path)
{
	static const char *const keys[] = { "max_files_written",
					    "max_write_bytes", "deny_open",
					    NULL };
	static const struct int_field f[] = {
		{ "max_files_written", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(files.max_files_written) },
		{ "max_write_bytes", 0, INT64_MAX,
		  "a non-negative integer (0 = unlimited)",
		  SB_OFF(files.max_write_bytes) },
	};
	char kp[PATH_LEN];
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
	v = json_object_get(o, "deny_open");
	path_key(kp, path, "deny_open");
	if (!v)
		return;
	if (json_is_array(v) && json_array_size(v) > TRACE_DENY_MAX) {
		perr(ld, kp, "%zu prefixes; expected at most %d",
		     json_array_size(v), TRACE_DENY_MAX);
		return;
	}
	strv_set(ld, v, kp, "an array of absolute path prefixes",
		 check_deny_prefix, &sb->files.deny_open);
}

static bool check_profile(struct loader *ld, const char *s, const char *path)
{
	static const char *const profiles[] = { "default", "none", NULL };

	if (!strcmp(s, "default") || !strcmp(s, "none"))
		return true;
	unknown_word(ld, path, "seccomp profile", s, profiles);
	return false;
}

static void apply_seccomp(struct loader *ld, struct cw_sandbox *sb,
			  json_t *o, const char *path)
{
	static const char *const keys[] = { "profile", "deny", "allow", NULL };
	char kp[PATH_LEN];
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	v = json_object_get(o, "profile");
	path_key(kp, path, "profile");
	if (v)
		set_str(ld, v, kp, check_profile, &sb->seccomp.profile);
	v = json_object_get(o, "deny");
	path_key(kp, path, "deny");
	if (v)
		strv_set(ld, v, kp, "an array of syscall names",
			 check_nonempty, &sb->seccomp.deny);
	v = json_object_get(o, "allow");
	path_key(kp, path, "allow");
	if (v)
		strv_set(ld, v, kp, "an array of syscall names",
			 check_nonempty, &sb->seccomp.allow);
}

static void apply_layers(struct loader *ld, struct cw_sandbox *sb, json_t *a,
			 const char *path)
{
	static const char *const known[] = { "seccomp", "landlock", "bpf_net",
					     "cgroup", "bpf_trace", NULL };
	unsigned bits = 0;
	bool ok = true;
	size_t i, k;
	json_t *e;

	if (!want_type(ld, a, path, json_is_array(a),
		       "an array of layer names"))
		return;
	json_array_foreach(a, i, e) {
		char ep[PATH_LEN];

		path_idx(ep, path, i);
		if (!want_type(ld, e, ep, json_is_string(e), "a string")) {
			ok = false;
			continue;
		}
		for (k = 0; k < CW_ARRAY_SIZE(layer_names); k++)
			if (!strcmp(json_string_value(e), layer_names[k]))
				break;
		if (k == CW_ARRAY_SIZE(layer_names)) {
			unknown_word(ld, ep, "layer", json_string_value(e),
				     known);
			ok = false;
			continue;
		}
		bits |= 1u << k;
	}
	if (ok)
		sb->require_layers = bits;
}

/* Applies a sandbox object on top of sb; explicit marks the policy's own. */
static void apply_sandbox(struct loader *ld, struct cw_sandbox *sb, json_t *o,
			  const char *path, bool explicit)
{
	static const char *const keys[] = { "user", "shell", "cwd", "env",
					    "timeout_s", "max_output_bytes",
					    "resources", "filesystem",
					    "network", "seccomp", "files",
					    "require_layers", NULL };
	static const struct int_field f[] = {
		{ "timeout_s", 1, TIMEOUT_MAX_S,
		  "an integer from 1 to 86400 seconds", SB_OFF(timeout_s) },
		{ "max_output_bytes", 1, OUTPUT_MAX_BYTES,
		  "an integer from 1 to 268435456 (256 MiB)",
		  SB_OFF(max_output_bytes) },
	};
	char kp[PATH_LEN];
	json_t *v;

	if (!want_type(ld, o, path, json_is_object(o), "an object"))
		return;
	check_keys(ld, o, path, keys);
	v = json_object_get(o, "user");
	path_key(kp, path, "user");
	if (v) {
		set_str(ld, v, kp, check_user, &sb->user);
		sb->user_explicit = explicit;
	}
	v = json_object_get(o, "shell");
	path_key(kp, path, "shell");
	if (v)
		set_str(ld, v, kp, check_abs_path, &sb->shell);
	v = json_object_get(o, "cwd");
	path_key(kp, path, "cwd");
	if (v) {
		set_str(ld, v, kp, check_abs_path, &sb->cwd);
		sb->cwd_explicit = explicit;
	}
	v = json_object_get(o, "env");
	path_key(kp, path, "env");
	if (v)
		apply_env(ld, sb, v, kp);
	apply_ints(ld, sb, o, path, f, CW_ARRAY_SIZE(f));
	v = json_object_get(o, "resources");
	path_key(kp, path, "resources");
	if (v)
		apply_resources(ld, sb, v, kp);
	v = json_object_get(o, "filesystem");
	path_key(kp, path, "filesystem");
	if (v)
		apply_filesystem(ld, sb, v, kp);
	v = json_object_get(o, "network");
	path_key(kp, path, "network");
	if (v)
		apply_network(ld, sb, v, kp);
	v = json_object_get(o, "seccomp");
	path_key(kp, path, "seccomp");
	if (v)
		apply_seccomp(ld, sb, v, kp);
	v = json_object_get(o, "files");
	path_key(kp, path, "files");
	if (v)
		apply_files(ld, sb, v, kp);
	v = json_object_get(o, "require_layers");
	path_key(kp, path, "require_layers");
	if (v)
		apply_layers(ld, sb, v, kp);
}

/* Fills sb with the default profile; the profile is checked like a policy
 * so a bad edit of it shows up as a load error. */
static void default_sandbox(struct loader *ld, struct cw_sandbox *sb)
{
	struct loader dl = { "<default sandbox>", ld->diag, 0, false };
	json_error_t je;
	json_t *o;

	o = json_loads(default_sandbox_json, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		perr(ld, "", "internal: default sandbox profile: %s", je.text);
		return;
	}
	apply_sandbox(&dl, sb, o, "", false);
	json_decref(o);
	ld->nerr += dl.nerr;
	ld->oom |= dl.oom;
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
		sandbox_free(r->sandbox);
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
	strv_free(&p->hide);
	sandbox_free(&p->default_sandbox);
	free(p->source);
	free(p);
}

static void parse_rule(struct loader *ld, struct cw_policy *p,
		       const char *name, json_t *o, const char *path,
		       struct cw_rule *r)
{
	static const char *const keys[] = { "action", "reason", "require",
					    "deny_if", "limits", "sandbox",
					    NULL };
	static const char *const actions[] = { "allow", "deny",
					       "require_approval", NULL };
	bool run_command = !strcmp(name, "run_command");
	char kp[PATH_LEN];
	json_t *v;
	size_t i;

	r->name = xstrdup(ld, name);
	if (!name[0])
		perr(ld, path, "empty tool name; expected the tool's name");
	if (!want_type(ld, o, path, json_is_object(o),
		       "a rule object ({} allows the tool)"))
		return;
	check_keys(ld, o, path, keys);

	v = json_object_get(o, "action");
	path_key(kp, path, "action");
	if (v && want_type(ld, v, kp, json_is_string(v), "a string")) {
		for (i = 0; actions[i]; i++)
			if (!strcmp(json_string_value(v), actions[i]))
				break;
		if (actions[i])
			r->action = (enum cw_action)i;
		else
			unknown_word(ld, kp, "action", json_string_value(v),
				     actions);
	}
	v = json_object_get(o, "reason");
	path_key(kp, path, "reason");
	if (v && want_type(ld, v, kp, json_is_string(v), "a string"))
		r->reason = xstrdup(ld, json_string_value(v));
	v = json_object_get(o, "require");
	path_key(kp, path, "require");
	if (v)
		parse_conds(ld, v, kp, run_command, &r->require, &r->nrequire,
			    &r->uses_command);
	v = json_object_get(o, "deny_if");
	path_key(kp, path, "deny_if");
	if (v)
		parse_conds(ld, v, kp, run_command, &r->deny_if, &r->ndeny_if,
			    &r->uses_command);
	v = json_object_get(o, "limits");
	path_key(kp, path, "limits");
	if (v) {
		parse_limits(ld, v, kp, &r->limits, &r->nlimits);
		if (r->nlimits + p->nall_limits > CW_MAX_CALL_LIMITS)
			perr(ld, kp,
			     "%zu limits apply to this tool with all_tools; expected at most %d",
			     r->nlimits + p->nall_limits,
			     CW_MAX_CALL_LIMITS);
	}
	v = json_object_get(o, "sandbox");
	path_key(kp, path, "sandbox");
	if (v && !run_command) {
		perr(ld, kp,
		     "a sandbox section applies only to run_command; expected no \"sandbox\" here");
	} else if (v) {
		r->sandbox = xcalloc(ld, 1, sizeof(*r->sandbox));
		if (!r->sandbox)
			return;
		default_sandbox(ld, r->sandbox);
		apply_sandbox(ld, r->sandbox, v, kp, true);
	}
}

static int cmp_rule(const void *a, const void *b)
{
	return strcmp(((const struct cw_rule *)a)->name,
		      ((const struct cw_rule *)b)->name);
}

static void compile(struct loader *ld, struct cw_policy *p, json_t *root)
{
	static const char *const keys[] = { "version", "default", "hide",
					    "max_concurrent", "all_tools",
					    "tools", NULL };
	static const char *const defaults[] = { "allow", "deny", NULL };
	static const char *const all_keys[] = { "limits", NULL };
	const char *name;
	json_t *v, *rv;
	size_t i, w;

	default_sandbox(ld, &p->default_sandbox);
	if (!want_type(ld, root, "", json_is_object(root),
		       "a JSON object at the top level"))
		return;
	check_keys(ld, root, "", keys);

	v = json_object_get(root, "version");
	if (!v)
		perr(ld, "version",
		     "missing required field \"version\"; expected \"version\": \"1\"");
	else if (want_type(ld, v, "version", json_is_string(v),
			   "the string \"1\"") &&
		 strcmp(json_string_value(v), "1")) {
		char qs[CW_TEXT_QUOTE_LEN];

		perr(ld, "version", "unsupported version %s; expected \"1\"",
		     cw_text_quote(qs, sizeof(qs),
				   json_string_value(v)));
	}

	v = json_object_get(root, "default");
	p->default_action = CW_ACTION_DENY;
	if (!v) {
		perr(ld, "default",
		     "missing required field \"default\"; expected \"allow\" or \"deny\"");
	} else if (want_type(ld, v, "default", json_is_string(v),
			     "\"allow\" or \"deny\"")) {
		if (!strcmp(json_string_value(v), "allow"))
			p->default_action = CW_ACTION_ALLOW;
		else if (strcmp(json_string_value(v), "deny"))
			unknown_word(ld, "default", "default action",
				     json_string_value(v), defaults);
	}

	v = json_object_get(root, "hide");
	if (v) {
		strv_set(ld, v, "hide", "an array of tool names (\"*\" for all)",
			 check_nonempty, &p->hide);
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
		set_int(ld, v, "max_concurrent", 1, MAX_CONCURRENT,
			"an integer from 1 to 65536 commands running at once",
			&p->max_concurrent);

	v = json_object_get(root, "all_tools");
	if (v && want_type(ld, v, "all_tools", json_is_object(v),
			   "an object {\"limits\": [...]}")) {
		check_keys(ld, v, "all_tools", all_keys);
		rv = json_object_get(v, "limits");
		if (rv) {
			parse_limits(ld, rv, "all_tools.limits",
				     &p->all_limits, &p->nall_limits);
			if (p->nall_limits > CW_MAX_CALL_LIMITS)
				perr(ld, "all_tools.limits",
				     "%zu limits; expected at most %d",
				     p->nall_limits,
				     CW_MAX_CALL_LIMITS);
		}
	}

	v = json_object_get(root, "tools");
	if (v && want_type(ld, v, "tools", json_is_object(v),
			   "an object mapping tool names to rules")) {
		p->rules = xcalloc(ld, json_object_size(v), sizeof(*p->rules));
		if (json_object_size(v) && !p->rules)
			return;
		json_object_foreach(v, name, rv) {
			char kp[PATH_LEN];

			path_key(kp, "tools", name);
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
	char path[PATH_LEN];
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

	if (!sc->path.data || sc->path.len >= PATH_LEN)
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
		char p[PATH_LEN];

		if (d->items[i].line)
			continue;
		memcpy(p, d->items[i].path, PATH_LEN);
		p[PATH_LEN - 1] = '\0';
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
			memcpy(sc.want[n].path, p, PATH_LEN);
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
		memcpy(key.path, d->items[i].path, PATH_LEN);
		key.path[PATH_LEN - 1] = '\0';
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
	struct loader ld = { source ? source : "<buffer>", diag, 0, false };
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
	p->source = xstrdup(&ld, ld.source);
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

const struct cw_sandbox *cw_policy_sandbox(const struct cw_policy *p)
{
	const struct cw_rule *r = cw_policy_rule(p, "run_command");

	if (!p)
		return NULL;
	return r && r->sandbox ? r->sandbox : &p->default_sandbox;
}
