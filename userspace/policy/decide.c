// SPDX-License-Identifier: Apache-2.0
/*
 * Decision engine: (compiled policy, call, counter view, now) -> verdict.
 * Pure: no I/O, no clock reads, counters are only read through the view.
 * Each condition op is a row of ops.c (its evaluation and the words of its
 * denial); this file walks the rules, builds the reasons and checks limits.
 *
 * Order of evaluation, first match wins:
 *   1. hidden tool (hide: [...] or "*")          -> DENY, rule "hide"
 *   2. no rule: default "deny"                  -> DENY, rule "default"
 *               default "allow"                 -> go on (all_tools limits)
 *   3. rule action "deny"                       -> DENY, tools.<name>.action
 *   4. a `require` condition that does not hold -> DENY, its JSON path
 *   5. a `deny_if` condition that holds         -> DENY, its JSON path
 *   6. a limit (all_tools, then the rule's) with count >= max
 *                                               -> RATE_LIMITED, its path,
 *      retry_after_us = the longest wait among the refusing limits
 *   7. action "require_approval"                -> APPROVAL, else ALLOW
 *
 * Condition semantics:
 *   - "args.a.b.0" walks call->args (NULL = {}) by object key and, on
 *     arrays, by decimal index. A step into a missing key, an index out of
 *     range or a scalar means the value is missing.
 *   - "command.programs" (list of program basenames) and "command.opaque"
 *     (boolean) come from cw_shlex_analyze(args.command), run at most once
 *     per call and only for rules that use them. A missing or non-string
 *     args.command gives programs [] and opaque true.
 *   - exists: value true holds when the value is present, false when absent.
 *     For every other op a missing value makes the condition not hold: a
 *     `require` on it denies, a `deny_if` on it does not.
 *   - eq/neq: structural equality; numbers compare by value (1 == 1.0) at
 *     every depth, so an integer/real spelling cannot slip past a check.
 *   - in/not_in: the value (a scalar) is / is not equal to an element of the
 *     policy's array. A list on the left: every element must satisfy it
 *     (an empty list satisfies it). So `require command.programs in [...]`
 *     is an allow-list; to deny when any one program is X, use
 *     `deny_if command.programs contains X` (or an array of names).
 *   - lt/lte/gt/gte: numbers only, integer and real compared exactly.
 *   - regex/not_regex: strings only (POSIX ERE, unanchored unless the
 *     pattern anchors). A list on the left: every element.
 *   - contains: a string contains the value as a substring; a list has an
 *     element equal to the value. A policy value that is an array of strings
 *     means "contains any of them".
 *   - prefix: a string starts with the value.
 *   - max_length: string length in bytes, or array length, <= value.
 *   - A value of the wrong type for the op (a number where regex needs a
 *     string, an object in an `in`, a string with a NUL byte for regex)
 *     fails closed: in `require` it does not hold and in `deny_if` it holds,
 *     both deny, and the reason says which type was wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/decide.h"
#include "policy/ops.h"
#include "policy/shlex.h"
#include "lib/text.h"

/* A quoted tool or counter name in a reason: room for the cut name with
 * every byte of it escaped. */
#define NAME_QUOTE_LEN 160

/* command.* values of one call, computed on first use. */
struct cmdinfo {
	bool done;
	json_t *programs;
	json_t *opaque;
};

const char *cw_verdict_name(enum cw_verdict_kind k)
{
	switch (k) {
	case CW_VERDICT_ALLOW:
		return "allow";
	case CW_VERDICT_DENY:
		return "deny";
	case CW_VERDICT_APPROVAL:
		return "approval";
	case CW_VERDICT_RATE_LIMITED:
		return "rate_limited";
	}
	return "?";
}

void cw_limit_key(const struct cw_limit *l, const struct cw_call *call,
		  char *buf, size_t len)
{
	const char *id;

	switch (l->scope) {
	case CW_SCOPE_GRANT:
		id = call && call->grant ? call->grant : "";
		break;
	case CW_SCOPE_SESSION:
		id = call && call->session ? call->session : "";
		break;
	default:
		id = "*";
		break;
	}
	/* An id too long for buf is cut: distinct callers then share one
	 * count, which can only limit more, never less. */
	if (snprintf(buf, len, "%s|%s|%s", l->counter,
		     cw_scope_name(l->scope), id) < 0 && len)
		buf[0] = '\0';
}

/* ---- conditions ------------------------------------------------------- */

static bool is_index(const char *s, size_t *out)
{
	size_t n = 0, i;

	if (!s[0] || strlen(s) > 18)
		return false;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		n = n * 10 + (size_t)(s[i] - '0');
	}
	*out = n;
	return true;
}

static json_t *resolve_args(json_t *args, const struct cw_cond *c)
{
	json_t *v = args;
	size_t i, idx;

	if (!v)
		return NULL;
	for (i = 0; i < c->nparts && v; i++) {
		if (json_is_object(v))
			v = json_object_get(v, c->parts[i]);
		else if (json_is_array(v) && is_index(c->parts[i], &idx))
			v = json_array_get(v, idx);
		else
			v = NULL;
	}
	return v;
}

static int cmd_analyze(json_t *args, struct cmdinfo *ci)
{
	struct cw_shlex sh;
	json_t *cmd = args ? json_object_get(args, "command") : NULL;
	size_t i;
	int err;

	ci->done = true;
	ci->programs = json_array();
	if (!ci->programs)
		return -ENOMEM;
	if (!json_is_string(cmd)) {
		ci->opaque = json_true();
		return 0;
	}
	err = cw_shlex_analyze(json_string_value(cmd), json_string_length(cmd),
			       &sh);
	if (err)
		return err;
	for (i = 0; i < sh.nprograms; i++) {
		/* program names are bytes; no UTF-8 check */
		err = json_array_append_new(ci->programs,
					    json_stringn_nocheck(
						    sh.programs[i],
						    strlen(sh.programs[i])));
		if (err) {
			err = -ENOMEM;
			goto out;
		}
	}
	ci->opaque = json_boolean(sh.opaque);
out:
	cw_shlex_free(&sh);
	return err;
}

static enum cw_op_res eval_cond(const struct cw_cond *c, const json_t *v,
				struct cw_op_detail *d)
{
	const struct cw_op_def *op = cw_op_get(c->op);

	memset(d, 0, sizeof(*d));
	if (!op)
		return CW_OP_TYPE;
	if (!v && !op->on_missing) {
		d->missing = true;
		return CW_OP_NO;
	}
	return op->eval(c, v, d);
}

/* ---- reasons ---------------------------------------------------------- */

/* Compact JSON of v, cut to fit buf. */
static void show(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
				     JSON_ENSURE_ASCII);
	size_t n;

	if (!s) {
		snprintf(buf, len, "(value)");
		return;
	}
	n = strlen(s);
	if (n >= len && len > 4) {
		memcpy(buf, s, len - 4);
		memcpy(buf + len - 4, "...", 4);
	} else {
		snprintf(buf, len, "%s", s);
	}
	free(s);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return strlen(json_string_value(v)) != json_string_length(v) ?
			       "a string with a NUL byte" :
			       "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

static const char *op_needs(const struct cw_cond *c)
{
	const struct cw_op_def *op = cw_op_get(c->op);

	if (op && op->needs_fn)
		return op->needs_fn(c);
	return op && op->needs ? op->needs : "another type";
}

/* The op as a phrase: holds ("matches regex V") or not ("does not ..."). */
static void op_phrase(const struct cw_cond *c, bool holds,
		      const struct cw_op_detail *d, char *buf, size_t len)
{
	const struct cw_op_def *op = cw_op_get(c->op);
	char val[160];

	show(c->value, val, sizeof(val));
	if (op && op->phrase)
		op->phrase(c, holds, d, val, buf, len);
	else
		snprintf(buf, len, "%s %s", !op ? "?" : holds ? op->yes : op->no,
			 val);
}

/* Why a condition denies: a `require` that failed or a `deny_if` that held. */
static void cond_reason(const struct cw_cond *c, enum cw_op_res r,
			const json_t *v, const struct cw_op_detail *d,
			char *buf, size_t len)
{
	const struct cw_op_def *op = cw_op_get(c->op);
	char what[400], subj[200], el[100];
	bool holds = r == CW_OP_YES;

	if (d->elem) {
		show(d->elem, el, sizeof(el));
		snprintf(subj, sizeof(subj), "%s element %s", c->path, el);
	} else if (v && json_is_array(v) && holds && op && op->each) {
		snprintf(subj, sizeof(subj), "every element of %s", c->path);
	} else if (v && json_is_number(v) && op && op->numeric) {
		show(v, el, sizeof(el));
		snprintf(subj, sizeof(subj), "%s (%s)", c->path, el);
	} else {
		snprintf(subj, sizeof(subj), "%s", c->path);
	}

	if (r == CW_OP_TYPE) {
		const json_t *bad = d->elem ? d->elem : v;

		snprintf(what, sizeof(what),
			 "%s is %s but op \"%s\" needs %s (a wrong type fails closed)",
			 subj, type_name(bad), cw_op_name(c->op),
			 op_needs(c));
	} else if (d->missing) {
		char ph[200];

		op_phrase(c, true, d, ph, sizeof(ph));
		snprintf(what, sizeof(what), "%s is missing (required: %s)",
			 c->path, ph);
	} else {
		char ph[200];

		op_phrase(c, holds, d, ph, sizeof(ph));
		snprintf(what, sizeof(what), "%s %s", subj, ph);
	}
	if (c->reason && c->reason[0] && r == CW_OP_TYPE)
		snprintf(buf, len, "%s; %s", c->reason, what);
	else if (c->reason && c->reason[0])
		snprintf(buf, len, "%s", c->reason);
	else
		snprintf(buf, len, "%s", what);
}

/* ---- the decision ----------------------------------------------------- */

static void set(struct cw_verdict *out, enum cw_verdict_kind kind,
		const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct cw_verdict *out, enum cw_verdict_kind kind,
		const char *rule, const char *fmt, ...)
{
	va_list ap;

	out->kind = kind;
	snprintf(out->rule, sizeof(out->rule), "%s", rule);
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	cw_text_utf8_trim(out->rule);
	cw_text_utf8_trim(out->reason);
}

/* Evaluates one list of conditions; returns 1 when it denied (out set),
 * 0 when it did not, -errno on failure. */
static int check_conds(const struct cw_cond *conds, size_t n, bool require,
		       json_t *args, struct cmdinfo *ci,
		       struct cw_verdict *out)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		const struct cw_cond *c = &conds[i];
		struct cw_op_detail d;
		json_t *v;
		enum cw_op_res r;

		if (c->kind != CW_PATH_ARGS && !ci->done) {
			err = cmd_analyze(args, ci);
			if (err)
				return err;
		}
		if (c->kind == CW_PATH_CMD_PROGRAMS)
			v = ci->programs;
		else if (c->kind == CW_PATH_CMD_OPAQUE)
			v = ci->opaque;
		else
			v = resolve_args(args, c);
		r = eval_cond(c, v, &d);
		if (require ? r == CW_OP_YES : r == CW_OP_NO)
			continue;
		out->kind = CW_VERDICT_DENY;
		snprintf(out->rule, sizeof(out->rule), "%s", c->where);
		cond_reason(c, r, v, &d, out->reason, sizeof(out->reason));
		cw_text_utf8_trim(out->rule);
		cw_text_utf8_trim(out->reason);
		return 1;
	}
	return 0;
}

static void fmt_secs(int64_t us, char *buf, size_t len)
{
	/* tenths, rounded up: never tell a caller to retry too early */
	int64_t t = (us + 99999) / 100000;

	snprintf(buf, len, "%" PRId64 ".%" PRId64 "s", t / 10, t % 10);
}

void cw_verdict_rate_limited(struct cw_verdict *out, const struct cw_limit *l,
			     int64_t retry_us)
{
	char retry[32], name[NAME_QUOTE_LEN];

	out->retry_after_us = retry_us;
	fmt_secs(retry_us, retry, sizeof(retry));
	cw_text_quote(name, sizeof(name), l->counter);
	if (l->max == 0)
		set(out, CW_VERDICT_RATE_LIMITED, l->where,
		    "rate limit %s (0 per %" PRId64 "s, scope %s) allows no calls",
		    name, l->window_s, cw_scope_name(l->scope));
	else
		set(out, CW_VERDICT_RATE_LIMITED, l->where,
		    "rate limit %s (%" PRId64 " per %" PRId64
		    "s, scope %s) reached; retry after %s",
		    name, l->max, l->window_s, cw_scope_name(l->scope), retry);
}

static int check_limits(const struct cw_policy *p, const struct cw_rule *r,
			const struct cw_call *call,
			const struct cw_counter_view *counters,
			int64_t now_us, struct cw_verdict *out)
{
	const struct cw_limit *worst = NULL;
	int64_t worst_retry = 0;
	size_t i, n = p->nall_limits + (r ? r->nlimits : 0);

	if (n > CW_MAX_CALL_LIMITS) {
		set(out, CW_VERDICT_DENY, "",
		    "internal error: %zu limits apply to this call, at most %d are supported",
		    n, CW_MAX_CALL_LIMITS);
		return -E2BIG;
	}
	for (i = 0; i < n; i++) {
		const struct cw_limit *l = i < p->nall_limits ?
			&p->all_limits[i] : &r->limits[i - p->nall_limits];
		struct cw_limit_ref *ref = &out->limits[i];
		int64_t count = 0, wait = 0;
		int err;

		ref->limit = l;
		cw_limit_key(l, call, ref->key, sizeof(ref->key));
		out->nlimits = i + 1;
		if (!counters || !counters->window)
			continue;
		err = counters->window(counters->ctx, ref->key,
				       l->window_s * 1000000, now_us, l->max,
				       &count, &wait);
		if (err) {
			set(out, CW_VERDICT_DENY, l->where,
			    "internal error: rate limit counters unreadable: %s",
			    strerror(err < 0 ? -err : err));
			return err < 0 ? err : -err;
		}
		if (count < l->max)
			continue;
		if (wait < 0)
			wait = 0;
		if (!worst || wait > worst_retry) {
			worst = l;
			worst_retry = wait;
		}
	}
	if (!worst)
		return 0;
	cw_verdict_rate_limited(out, worst, worst_retry);
	return 0;
}

int cw_decide(const struct cw_policy *p, const struct cw_call *call,
	      const struct cw_counter_view *counters, int64_t now_us,
	      struct cw_verdict *out)
{
	struct cmdinfo ci = { 0 };
	const struct cw_rule *r;
	char tool[NAME_QUOTE_LEN], path[256];
	json_t *args;
	int err;

	cw_verdict_clear(out);
	out->kind = CW_VERDICT_DENY;
	if (!p || !call || !call->tool) {
		set(out, CW_VERDICT_DENY, "",
		    "internal error: no policy or no tool name");
		return -EINVAL;
	}
	args = call->args;
	if (args && !json_is_object(args)) {
		set(out, CW_VERDICT_DENY, "",
		    "the call's arguments are not a JSON object");
		return -EINVAL;
	}
	cw_text_quote(tool, sizeof(tool), call->tool);

	if (cw_policy_hidden(p, call->tool)) {
		set(out, CW_VERDICT_DENY, "hide",
		    "tool %s is hidden by the policy", tool);
		return 0;
	}
	r = cw_policy_rule(p, call->tool);
	if (!r && p->default_action != CW_ACTION_ALLOW) {
		set(out, CW_VERDICT_DENY, "default",
		    "tool %s is not listed in the policy and the default is deny",
		    tool);
		return 0;
	}
	if (r && r->action == CW_ACTION_DENY) {
		snprintf(path, sizeof(path), "tools.%s.action", r->name);
		if (r->reason && r->reason[0])
			set(out, CW_VERDICT_DENY, path, "%s", r->reason);
		else
			set(out, CW_VERDICT_DENY, path,
			    "tool %s is denied by the policy", tool);
		return 0;
	}
	if (r) {
		err = check_conds(r->require, r->nrequire, true, args, &ci,
				  out);
		if (!err)
			err = check_conds(r->deny_if, r->ndeny_if, false, args,
					  &ci, out);
		if (err < 0) {
			set(out, CW_VERDICT_DENY, "",
			    "internal error: evaluating conditions: %s",
			    strerror(-err));
			goto out;
		}
		if (err > 0) {
			err = 0;
			goto out;
		}
	}
	err = check_limits(p, r, call, counters, now_us, out);
	if (err || out->kind == CW_VERDICT_RATE_LIMITED)
		goto out;
	if (!r) {
		set(out, CW_VERDICT_ALLOW, "default",
		    "tool %s is not listed in the policy and the default is allow",
		    tool);
		goto out;
	}
	snprintf(path, sizeof(path), "tools.%s", r->name);
	if (r->action == CW_ACTION_APPROVAL) {
		if (r->reason && r->reason[0])
			set(out, CW_VERDICT_APPROVAL, path, "%s", r->reason);
		else
			set(out, CW_VERDICT_APPROVAL, path,
			    "tool %s requires approval", tool);
	} else {
		set(out, CW_VERDICT_ALLOW, path, "allowed by %s", path);
	}
out:
	json_decref(ci.programs);
	json_decref(ci.opaque);
	if (err)
		out->kind = CW_VERDICT_DENY;
	return err;
}

void cw_verdict_clear(struct cw_verdict *v)
{
	memset(v, 0, offsetof(struct cw_verdict, limits));
	v->nlimits = 0;
}

void cw_verdict_copy(struct cw_verdict *dst, const struct cw_verdict *src)
{
	memcpy(dst, src, offsetof(struct cw_verdict, limits));
	memcpy(dst->limits, src->limits, src->nlimits * sizeof(src->limits[0]));
	dst->nlimits = src->nlimits;
}
