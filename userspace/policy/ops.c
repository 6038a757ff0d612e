// SPDX-License-Identifier: Apache-2.0
/*
 * The condition ops (eq, neq, in, not_in, lt, lte, gt, gte, regex,
 * not_regex, contains, prefix, max_length, exists) as one table: for each,
 * the value check the policy compiler runs at load, the evaluation
 * decide.c runs on a call's value, and the words of a denial. The
 * semantics of each op are described at the top of decide.c.
 */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "policy/ops.h"
#include "lib/text.h"

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

static bool all_strings(json_t *arr)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (!json_is_string(e))
			return false;
	return true;
}

static enum cw_op_res yes_if(bool b)
{
	return b ? CW_OP_YES : CW_OP_NO;
}

/* ---- value checks at load --------------------------------------------- */

static void check_in(struct cw_loader *ld, struct cw_cond *c, json_t *v,
		     const char *vpath)
{
	(void)c;
	cw_load_want(ld, v, vpath, json_is_array(v),
		     "an array of values for op \"in\"/\"not_in\"");
}

static void check_number(struct cw_loader *ld, struct cw_cond *c, json_t *v,
			 const char *vpath)
{
	if (!json_is_number(v))
		cw_load_err(ld, vpath, "expected a number for op \"%s\", got %s",
			    cw_op_name(c->op), cw_load_jtype(v));
}

/* Compiled once, here: a bad regex is a load error. */
static void check_regex(struct cw_loader *ld, struct cw_cond *c, json_t *v,
			const char *vpath)
{
	char qs[CW_TEXT_QUOTE_LEN], msg[160];
	int rc;

	if (!json_is_string(v)) {
		cw_load_err(ld, vpath,
			    "expected a string (a POSIX extended regex) for op \"%s\", got %s",
			    cw_op_name(c->op), cw_load_jtype(v));
		return;
	}
	rc = regcomp(&c->re, json_string_value(v), REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &c->re, msg, sizeof(msg));
		cw_load_err(ld, vpath,
			    "bad regex %s: %s; expected a POSIX extended regular expression",
			    cw_text_quote(qs, sizeof(qs), json_string_value(v)),
			    msg);
		return;
	}
	c->has_re = true;
}

static void check_contains(struct cw_loader *ld, struct cw_cond *c,
			   json_t *v, const char *vpath)
{
	(void)c;
	if (json_is_object(v) || (json_is_array(v) && !all_strings(v)))
		cw_load_err(ld, vpath,
			    "expected a string, a number, a boolean, null or an array of strings for op \"contains\", got %s%s",
			    cw_load_jtype(v),
			    json_is_array(v) ? " with non-string elements" :
					       "");
}

static void check_prefix(struct cw_loader *ld, struct cw_cond *c, json_t *v,
			 const char *vpath)
{
	(void)c;
	if (!json_is_string(v))
		cw_load_err(ld, vpath,
			    "expected a string for op \"prefix\", got %s",
			    cw_load_jtype(v));
}

static void check_max_length(struct cw_loader *ld, struct cw_cond *c,
			     json_t *v, const char *vpath)
{
	(void)c;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		cw_load_err(ld, vpath,
			    "expected a non-negative integer for op \"max_length\", got %s",
			    json_is_integer(v) ? "a negative integer" :
						 cw_load_jtype(v));
}

static void check_exists(struct cw_loader *ld, struct cw_cond *c, json_t *v,
			 const char *vpath)
{
	(void)c;
	if (!json_is_boolean(v))
		cw_load_err(ld, vpath,
			    "expected true (present) or false (absent) for op \"exists\", got %s",
			    cw_load_jtype(v));
}

/* ---- evaluation ------------------------------------------------------- */

static enum cw_op_res eval_eq(const struct cw_cond *c, const json_t *v,
			      struct cw_op_detail *d)
{
	(void)d;
	return yes_if(value_equal(v, c->value) == (c->op == CW_OP_EQ));
}

static enum cw_op_res eval_regex(const struct cw_cond *c, const json_t *s)
{
	bool match;

	if (!json_is_string(s) || has_nul(s) || !c->has_re)
		return CW_OP_TYPE;
	match = regexec(&c->re, json_string_value(s), 0, NULL, 0) == 0;
	return yes_if(match == (c->op == CW_OP_REGEX));
}

/* in/not_in/regex/not_regex on a list: every element must satisfy it. */
static enum cw_op_res eval_each(const struct cw_cond *c, const json_t *v,
				struct cw_op_detail *d)
{
	size_t i;

	for (i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);
		enum cw_op_res r;

		if (c->op == CW_OP_REGEX || c->op == CW_OP_NOT_REGEX)
			r = eval_regex(c, e);
		else if (json_is_object(e) || json_is_array(e))
			r = CW_OP_TYPE;
		else
			r = yes_if(member(e, c->value) == (c->op == CW_OP_IN));
		if (r != CW_OP_YES) {
			d->elem = e;
			return r;
		}
	}
	return CW_OP_YES;
}

static enum cw_op_res eval_in(const struct cw_cond *c, const json_t *v,
			      struct cw_op_detail *d)
{
	if (!json_is_array(c->value) || json_is_object(v))
		return CW_OP_TYPE;
	if (json_is_array(v))
		return eval_each(c, v, d);
	return yes_if(member(v, c->value) == (c->op == CW_OP_IN));
}

static enum cw_op_res eval_cmp(const struct cw_cond *c, const json_t *v,
			       struct cw_op_detail *d)
{
	int cmp;

	(void)d;
	if (!json_is_number(v) || !json_is_number(c->value))
		return CW_OP_TYPE;
	cmp = cmp_num(v, c->value);
	if (c->op == CW_OP_LT)
		return yes_if(cmp < 0);
	if (c->op == CW_OP_LTE)
		return yes_if(cmp <= 0);
	if (c->op == CW_OP_GT)
		return yes_if(cmp > 0);
	return yes_if(cmp >= 0);
}

static enum cw_op_res eval_match(const struct cw_cond *c, const json_t *v,
				 struct cw_op_detail *d)
{
	if (json_is_array(v))
		return eval_each(c, v, d);
	return eval_regex(c, v);
}

static enum cw_op_res eval_contains(const struct cw_cond *c, const json_t *v,
				    struct cw_op_detail *d)
{
	const json_t *val = c->value;
	size_t i;

	(void)d;
	if (json_is_string(v)) {
		if (json_is_string(val))
			return yes_if(substr(v, val));
		if (!json_is_array(val))
			return CW_OP_TYPE;
		for (i = 0; i < json_array_size(val); i++) {
			const json_t *n = json_array_get(val, i);

			if (json_is_string(n) && substr(v, n))
				return CW_OP_YES;
		}
		return CW_OP_NO;
	}
	if (!json_is_array(v))
		return CW_OP_TYPE;
	if (json_is_array(val)) {
		for (i = 0; i < json_array_size(v); i++)
			if (member(json_array_get(v, i), val))
				return CW_OP_YES;
		return CW_OP_NO;
	}
	return yes_if(member(val, v));
}

static enum cw_op_res eval_prefix(const struct cw_cond *c, const json_t *v,
				  struct cw_op_detail *d)
{
	(void)d;
	if (!json_is_string(v) || !json_is_string(c->value))
		return CW_OP_TYPE;
	return yes_if(json_string_length(v) >= json_string_length(c->value) &&
		      !memcmp(json_string_value(v),
			      json_string_value(c->value),
			      json_string_length(c->value)));
}

static enum cw_op_res eval_max_length(const struct cw_cond *c,
				      const json_t *v, struct cw_op_detail *d)
{
	if (json_is_string(v))
		d->length = json_string_length(v);
	else if (json_is_array(v))
		d->length = json_array_size(v);
	else
		return CW_OP_TYPE;
	return yes_if((json_int_t)d->length <= json_integer_value(c->value));
}

/* Present (v not NULL) or absent, as the value asks. */
static enum cw_op_res eval_exists(const struct cw_cond *c, const json_t *v,
				  struct cw_op_detail *d)
{
	(void)d;
	return yes_if((v != NULL) == json_is_true(c->value));
}

/* ---- wording ---------------------------------------------------------- */

static void phrase_contains(const struct cw_cond *c, bool holds,
			    const struct cw_op_detail *d, const char *val,
			    char *buf, size_t len)
{
	(void)d;
	snprintf(buf, len, "%s %s",
		 json_is_array(c->value) ?
			 (holds ? "contains one of" : "contains none of") :
			 (holds ? "contains" : "does not contain"),
		 val);
}

static void phrase_max_length(const struct cw_cond *c, bool holds,
			      const struct cw_op_detail *d, const char *val,
			      char *buf, size_t len)
{
	(void)c;
	if (holds)
		snprintf(buf, len, "is at most %s long", val);
	else
		snprintf(buf, len, "is %zu long, longer than %s", d->length,
			 val);
}

static void phrase_exists(const struct cw_cond *c, bool holds,
			  const struct cw_op_detail *d, const char *val,
			  char *buf, size_t len)
{
	(void)d;
	(void)val;
	snprintf(buf, len, "%s",
		 holds == json_is_true(c->value) ? "is present" : "is absent");
}

/* a number, boolean or null can only be an element of a list */
static const char *needs_contains(const struct cw_cond *c)
{
	if (!json_is_string(c->value) && !json_is_array(c->value))
		return "a list";
	return "a string or a list";
}

/* ---- the table -------------------------------------------------------- */

#define ON_ANY (CW_OP_ON_PROGRAMS | CW_OP_ON_OPAQUE)
#define IN_NEEDS "a string, number, boolean or null (or a list of them)"
#define RE_NEEDS "a string without NUL bytes (or a list of them)"

static const struct cw_op_def ops[] = {
	[CW_OP_EQ] = { "eq", ON_ANY, .eval = eval_eq,
		       .yes = "equals", .no = "does not equal" },
	[CW_OP_NEQ] = { "neq", ON_ANY, .eval = eval_eq,
			.yes = "does not equal", .no = "equals" },
	[CW_OP_IN] = { "in", ON_ANY, .each = true, .check = check_in,
		       .eval = eval_in, .yes = "is in", .no = "is not in",
		       .needs = IN_NEEDS },
	[CW_OP_NOT_IN] = { "not_in", ON_ANY, .each = true,
			   .check = check_in, .eval = eval_in,
			   .yes = "is not in", .no = "is in",
			   .needs = IN_NEEDS },
	[CW_OP_LT] = { "lt", 0, .numeric = true, .check = check_number,
		       .eval = eval_cmp, .yes = "is less than",
		       .no = "is not less than", .needs = "a number" },
	[CW_OP_LTE] = { "lte", 0, .numeric = true, .check = check_number,
			.eval = eval_cmp, .yes = "is at most",
			.no = "is greater than", .needs = "a number" },
	[CW_OP_GT] = { "gt", 0, .numeric = true, .check = check_number,
		       .eval = eval_cmp, .yes = "is greater than",
		       .no = "is not greater than", .needs = "a number" },
	[CW_OP_GTE] = { "gte", 0, .numeric = true, .check = check_number,
			.eval = eval_cmp, .yes = "is at least",
			.no = "is less than", .needs = "a number" },
	[CW_OP_REGEX] = { "regex", CW_OP_ON_PROGRAMS, .each = true,
			  .check = check_regex, .eval = eval_match,
			  .yes = "matches regex",
			  .no = "does not match regex", .needs = RE_NEEDS },
	[CW_OP_NOT_REGEX] = { "not_regex", CW_OP_ON_PROGRAMS, .each = true,
			      .check = check_regex, .eval = eval_match,
			      .yes = "does not match regex",
			      .no = "matches regex", .needs = RE_NEEDS },
	[CW_OP_CONTAINS] = { "contains", CW_OP_ON_PROGRAMS,
			     .check = check_contains, .eval = eval_contains,
			     .phrase = phrase_contains,
			     .needs_fn = needs_contains },
	[CW_OP_PREFIX] = { "prefix", 0, .check = check_prefix,
			   .eval = eval_prefix, .yes = "starts with",
			   .no = "does not start with", .needs = "a string" },
	[CW_OP_MAX_LENGTH] = { "max_length", CW_OP_ON_PROGRAMS,
			       .check = check_max_length,
			       .eval = eval_max_length,
			       .phrase = phrase_max_length,
			       .needs = "a string or a list" },
	[CW_OP_EXISTS] = { "exists", ON_ANY, .on_missing = true,
			   .check = check_exists, .eval = eval_exists,
			   .phrase = phrase_exists },
};

_Static_assert(CW_ARRAY_SIZE(ops) <= CW_OPS_MAX, "CW_OPS_MAX: too many ops");

const struct cw_op_def *cw_op_get(enum cw_op op)
{
	if ((size_t)op < CW_ARRAY_SIZE(ops) && ops[op].name)
		return &ops[op];
	return NULL;
}

const char *cw_op_name(enum cw_op op)
{
	const struct cw_op_def *d = cw_op_get(op);

	return d ? d->name : "?";
}

bool cw_op_find(const char *name, enum cw_op *out)
{
	size_t i;

	for (i = 0; i < CW_ARRAY_SIZE(ops); i++) {
		if (ops[i].name && !strcmp(name, ops[i].name)) {
			*out = (enum cw_op)i;
			return true;
		}
	}
	return false;
}

size_t cw_op_names(const char **known, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < CW_ARRAY_SIZE(ops) && n + 1 < len; i++)
		if (ops[i].name)
			known[n++] = ops[i].name;
	known[n] = NULL;
	return n;
}

void cw_op_list(char *buf, size_t len, unsigned on, const char *last_sep)
{
	size_t i, o = 0, n = 0, k = 0;

	for (i = 0; i < CW_ARRAY_SIZE(ops); i++)
		if (ops[i].name && (!on || (ops[i].on & on)))
			n++;
	buf[0] = '\0';
	for (i = 0; i < CW_ARRAY_SIZE(ops) && o < len; i++) {
		int r;

		if (!ops[i].name || (on && !(ops[i].on & on)))
			continue;
		r = snprintf(buf + o, len - o, "%s%s",
			     k == 0 ? "" : k + 1 == n ? last_sep : ", ",
			     ops[i].name);
		if (r < 0)
			break;
		o += (size_t)r;
		k++;
	}
}
