// SPDX-License-Identifier: Apache-2.0
/*
 * Decision engine: (compiled policy, call, counter view, now) -> verdict.
 * Pure: no I/O, no clock reads, counters are only read through the view.
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
#include "policy/shlex.h"
#include "lib/text.h"

/* A quoted tool or counter name in a reason: room for the cut name with
 * every byte of it escaped. */
#define NAME_QUOTE_LEN 160

enum res {
	RES_NO = 0,
	RES_YES,
	RES_TYPE,	/* wrong type for the op: fails closed */
};

/* What evaluation found, for the reason text. */
struct detail {
	bool missing;
	const json_t *elem;	/* the list element that decided, if any */
	size_t length;		/* max_length: the length measured */
};

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

/* ---- values ----------------------------------------------------------- */

static int cmp_int_real(json_int_t i, double d)
{
	json_int_t t;
	double frac;

	if (d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	t = (json_int_t)d;	/* truncates, exact in range */
	if (i != t)
		return i < t ? -1 : 1;
	frac = d - (double)t;
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static int cmp_num(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);

		return (x > y) - (x < y);
	}
	if (json_is_real(a) && json_is_real(b)) {
		double x = json_real_value(a), y = json_real_value(b);

		return (x > y) - (x < y);
	}
	if (json_is_integer(a))
		return cmp_int_real(json_integer_value(a), json_real_value(b));
	return -cmp_int_real(json_integer_value(b), json_real_value(a));
}

static bool value_equal(const json_t *a, const json_t *b)
{
	const char *key;
	json_t *av;
	size_t i;

	if (json_is_number(a) && json_is_number(b))
		return cmp_num(a, b) == 0;
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b),
			       json_string_length(a));
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!value_equal(json_array_get(a, i),
					 json_array_get(b, i)))
				return false;
		return true;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach((json_t *)a, key, av) {
			json_t *bv = json_object_get(b, key);

			if (!bv || !value_equal(av, bv))
				return false;
		}
		return true;
	default:
		return true;	/* true, false, null: same type */
	}
}

static bool member(const json_t *v, const json_t *arr)
{
	size_t i;

	for (i = 0; i < json_array_size(arr); i++)
		if (value_equal(v, json_array_get(arr, i)))
			return true;
	return false;
}

static bool has_nul(const json_t *s)
{
	return strlen(json_string_value(s)) != json_string_length(s);
}

static bool substr(const json_t *hay, const json_t *needle)
{
	return memmem(json_string_value(hay), json_string_length(hay),
		      json_string_value(needle),
		      json_string_length(needle)) != NULL;
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

static enum res eval_regex(const struct cw_cond *c, const json_t *s)
{
	bool match;

	if (!json_is_string(s) || has_nul(s) || !c->has_re)
		return RES_TYPE;
	match = regexec(&c->re, json_string_value(s), 0, NULL, 0) == 0;
	return match == (c->op == CW_OP_REGEX) ? RES_YES : RES_NO;
}

/* in/not_in/regex/not_regex on a list: every element must satisfy it. */
static enum res eval_each(const struct cw_cond *c, const json_t *v,
			  struct detail *d)
{
	size_t i;

	for (i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);
		enum res r;

		if (c->op == CW_OP_REGEX || c->op == CW_OP_NOT_REGEX) {
			r = eval_regex(c, e);
		} else if (json_is_object(e) || json_is_array(e)) {
			r = RES_TYPE;
		} else {
			bool in = member(e, c->value);

			r = in == (c->op == CW_OP_IN) ? RES_YES : RES_NO;
		}
		if (r != RES_YES) {
			d->elem = e;
			return r;
		}
	}
	return RES_YES;
}

static enum res eval_contains(const struct cw_cond *c, const json_t *v)
{
	const json_t *val = c->value;
	size_t i;

	if (json_is_string(v)) {
		if (json_is_string(val))
			return substr(v, val) ? RES_YES : RES_NO;
		if (!json_is_array(val))
			return RES_TYPE;
		for (i = 0; i < json_array_size(val); i++) {
			const json_t *n = json_array_get(val, i);

			if (json_is_string(n) && substr(v, n))
				return RES_YES;
		}
		return RES_NO;
	}
	if (!json_is_array(v))
		return RES_TYPE;
	if (json_is_array(val)) {
		for (i = 0; i < json_array_size(v); i++)
			if (member(json_array_get(v, i), val))
				return RES_YES;
		return RES_NO;
	}
	return member(val, v) ? RES_YES : RES_NO;
}

static enum res eval_cond(const struct cw_cond *c, const json_t *v,
			  struct detail *d)
{
	int cmp;

	memset(d, 0, sizeof(*d));
	if (c->op == CW_OP_EXISTS)
		return (v != NULL) == json_is_true(c->value) ? RES_YES :
							       RES_NO;
	if (!v) {
		d->missing = true;
		return RES_NO;
	}
	switch (c->op) {
	case CW_OP_EQ:
		return value_equal(v, c->value) ? RES_YES : RES_NO;
	case CW_OP_NEQ:
		return value_equal(v, c->value) ? RES_NO : RES_YES;
	case CW_OP_IN:
	case CW_OP_NOT_IN:
		if (!json_is_array(c->value) || json_is_object(v))
			return RES_TYPE;
		if (json_is_array(v))
			return eval_each(c, v, d);
		return member(v, c->value) == (c->op == CW_OP_IN) ? RES_YES :
								    RES_NO;
	case CW_OP_LT:
	case CW_OP_LTE:
	case CW_OP_GT:
	case CW_OP_GTE:
		if (!json_is_number(v) || !json_is_number(c->value))
			return RES_TYPE;
		cmp = cmp_num(v, c->value);
		if (c->op == CW_OP_LT)
			return cmp < 0 ? RES_YES : RES_NO;
		if (c->op == CW_OP_LTE)
			return cmp <= 0 ? RES_YES : RES_NO;
		if (c->op == CW_OP_GT)
			return cmp > 0 ? RES_YES : RES_NO;
		return cmp >= 0 ? RES_YES : RES_NO;
	case CW_OP_REGEX:
	case CW_OP_NOT_REGEX:
		if (json_is_array(v))
			return eval_each(c, v, d);
		return eval_regex(c, v);
	case CW_OP_CONTAINS:
		return eval_contains(c, v);
	case CW_OP_PREFIX:
		if (!json_is_string(v) || !json_is_string(c->value))
			return RES_TYPE;
		return json_string_length(v) >= json_string_length(c->value) &&
				       !memcmp(json_string_value(v),
					       json_string_value(c->value),
					       json_string_length(c->value)) ?
			       RES_YES :
			       RES_NO;
	case CW_OP_MAX_LENGTH:
		if (json_is_string(v))
			d->length = json_string_length(v);
		else if (json_is_array(v))
			d->length = json_array_size(v);
		else
			return RES_TYPE;
		return (json_int_t)d->length <= json_integer_value(c->value) ?
			       RES_YES :
			       RES_NO;
	case CW_OP_EXISTS:
		break;
	}
	return RES_TYPE;
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
		return has_nul(v) ? "a string with a NUL byte" : "a string";
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
	switch (c->op) {
	case CW_OP_IN:
	case CW_OP_NOT_IN:
		return "a string, number, boolean or null (or a list of them)";
	case CW_OP_LT:
	case CW_OP_LTE:
	case CW_OP_GT:
	case CW_OP_GTE:
		return "a number";
	case CW_OP_REGEX:
	case CW_OP_NOT_REGEX:
		return "a string without NUL bytes (or a list of them)";
	case CW_OP_CONTAINS:
		/* a number, boolean or null can only be an element of a list */
		if (!json_is_string(c->value) && !json_is_array(c->value))
			return "a list";
		return "a string or a list";
	case CW_OP_PREFIX:
		return "a string";
	case CW_OP_MAX_LENGTH:
		return "a string or a list";
	default:
		return "another type";
	}
}

/* The op as a phrase: holds ("matches regex V") or not ("does not ..."). */
static void op_phrase(const struct cw_cond *c, bool holds,
		      const struct detail *d, char *buf, size_t len)
{
	char val[160];
	const char *p;

	show(c->value, val, sizeof(val));
	switch (c->op) {
	case CW_OP_EQ:
	case CW_OP_NEQ:
		p = holds == (c->op == CW_OP_EQ) ? "equals" :
						   "does not equal";
		break;
	case CW_OP_IN:
	case CW_OP_NOT_IN:
		p = holds == (c->op == CW_OP_IN) ? "is in" : "is not in";
		break;
	case CW_OP_LT:
		p = holds ? "is less than" : "is not less than";
		break;
	case CW_OP_LTE:
		p = holds ? "is at most" : "is greater than";
		break;
	case CW_OP_GT:
		p = holds ? "is greater than" : "is not greater than";
		break;
	case CW_OP_GTE:
		p = holds ? "is at least" : "is less than";
		break;
	case CW_OP_REGEX:
	case CW_OP_NOT_REGEX:
		p = holds == (c->op == CW_OP_REGEX) ? "matches regex" :
						      "does not match regex";
		break;
	case CW_OP_CONTAINS:
		p = json_is_array(c->value) ?
			    (holds ? "contains one of" : "contains none of") :
			    (holds ? "contains" : "does not contain");
		break;
	case CW_OP_PREFIX:
		p = holds ? "starts with" : "does not start with";
		break;
	case CW_OP_MAX_LENGTH:
		if (holds)
			snprintf(buf, len, "is at most %s long", val);
		else
			snprintf(buf, len, "is %zu long, longer than %s",
				 d->length, val);
		return;
	case CW_OP_EXISTS:
		snprintf(buf, len, "%s",
			 holds == json_is_true(c->value) ? "is present" :
							   "is absent");
		return;
	default:
		p = "?";
		break;
	}
	snprintf(buf, len, "%s %s", p, val);
}

/* Why a condition denies: a `require` that failed or a `deny_if` that held. */
static void cond_reason(const struct cw_cond *c, enum res r,
			const json_t *v, const struct detail *d, char *buf,
			size_t len)
{
	char what[400], subj[200], el[100];
	bool holds = r == RES_YES;

	if (d->elem) {
		show(d->elem, el, sizeof(el));
		snprintf(subj, sizeof(subj), "%s element %s", c->path, el);
	} else if (v && json_is_array(v) && holds &&
		   (c->op == CW_OP_IN || c->op == CW_OP_NOT_IN ||
		    c->op == CW_OP_REGEX || c->op == CW_OP_NOT_REGEX)) {
		snprintf(subj, sizeof(subj), "every element of %s", c->path);
	} else if (v && json_is_number(v) && c->op >= CW_OP_LT &&
		   c->op <= CW_OP_GTE) {
		show(v, el, sizeof(el));
		snprintf(subj, sizeof(subj), "%s (%s)", c->path, el);
	} else {
		snprintf(subj, sizeof(subj), "%s", c->path);
	}

	if (r == RES_TYPE) {
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
	if (c->reason && c->reason[0] && r == RES_TYPE)
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
		struct detail d;
		json_t *v;
		enum res r;

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
		if (require ? r == RES_YES : r == RES_NO)
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
