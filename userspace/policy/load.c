// SPDX-License-Identifier: Apache-2.0
/*
 * The policy loader's shared pieces: errors with their JSON path, "did you
 * mean" for unknown words, typed field readers and string lists. Used by
 * the policy core (policy.c), the sandbox section (sandbox.c) and the
 * condition ops' value checks (ops.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/load.h"
#include "lib/text.h"

/* ---- errors ----------------------------------------------------------- */

void cw_load_err(struct cw_loader *ld, const char *path, const char *fmt, ...)
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

char *cw_load_strdup(struct cw_loader *ld, const char *s)
{
	char *d = strdup(s);

	if (!d)
		ld->oom = true;
	return d;
}

void *cw_load_calloc(struct cw_loader *ld, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = calloc(n, size);
	if (!p)
		ld->oom = true;
	return p;
}

const char *cw_load_jtype(const json_t *v)
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

void cw_load_key(char *dst, const char *parent, const char *key)
{
	int r;

	if (parent[0])
		r = snprintf(dst, CW_LOAD_PATH_LEN, "%s.%s", parent, key);
	else
		r = snprintf(dst, CW_LOAD_PATH_LEN, "%s", key);
	if (r < 0)
		dst[0] = '\0';
}

void cw_load_idx(char *dst, const char *parent, size_t i)
{
	if (snprintf(dst, CW_LOAD_PATH_LEN, "%s[%zu]", parent, i) < 0)
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

void cw_load_unknown(struct cw_loader *ld, const char *path, const char *what,
		     const char *word, const char *const *known)
{
	char list[320], qw[CW_TEXT_QUOTE_LEN], hint[64] = "";
	const char *near = suggest(word, known);

	one_of(list, sizeof(list), known);
	if (near && snprintf(hint, sizeof(hint), " (did you mean \"%s\"?)",
			     near) < 0)
		hint[0] = '\0';
	cw_load_err(ld, path, "unknown %s %s%s; expected %s", what,
		    cw_text_quote(qw, sizeof(qw), word), hint, list);
}

/* Every key of obj must be in known (NULL-terminated). */
void cw_load_keys(struct cw_loader *ld, json_t *obj, const char *path,
		  const char *const *known)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		char kp[CW_LOAD_PATH_LEN];
		size_t i;

		for (i = 0; known[i]; i++)
			if (!strcmp(key, known[i]))
				break;
		if (known[i])
			continue;
		cw_load_key(kp, path, key);
		cw_load_unknown(ld, kp, "key", key, known);
	}
}

bool cw_load_want(struct cw_loader *ld, json_t *v, const char *path, bool ok,
		  const char *expected)
{
	if (!ok)
		cw_load_err(ld, path, "expected %s, got %s", expected, cw_load_jtype(v));
	return ok;
}

/* An integer in [lo, hi]; on success *out is set. */
bool cw_load_get_int(struct cw_loader *ld, json_t *v, const char *path,
		     long long lo, long long hi, const char *expected,
		     int64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		if (json_is_integer(v))
			cw_load_err(ld, path, "%lld is out of range; expected %s",
				    (long long)json_integer_value(v), expected);
		else
			cw_load_err(ld, path, "expected %s, got %s", expected,
				    cw_load_jtype(v));
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

/* ---- string vectors --------------------------------------------------- */

void cw_load_strv_free(struct cw_strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int cw_load_strv_push(struct cw_loader *ld, struct cw_strv *s,
		      const char *str)
{
	char **v = realloc(s->v, (s->n + 1) * sizeof(*v));
	char *d;

	if (!v) {
		ld->oom = true;
		return -ENOMEM;
	}
	s->v = v;
	d = cw_load_strdup(ld, str);
	if (!d)
		return -ENOMEM;
	s->v[s->n++] = d;
	return 0;
}

/* Replaces *dst with the strings of arr when every element passes check. */
void cw_load_strv_set(struct cw_loader *ld, json_t *arr, const char *path,
		      const char *expected, cw_load_check check,
		      struct cw_strv *dst)
{
	struct cw_strv nv = { 0 };
	bool ok = true;
	size_t i;
	json_t *e;

	if (!cw_load_want(ld, arr, path, json_is_array(arr), expected))
		return;
	json_array_foreach(arr, i, e) {
		char ep[CW_LOAD_PATH_LEN];

		cw_load_idx(ep, path, i);
		if (!json_is_string(e)) {
			cw_load_err(ld, ep, "expected a string, got %s", cw_load_jtype(e));
			ok = false;
			continue;
		}
		if (check && !check(ld, json_string_value(e), ep)) {
			ok = false;
			continue;
		}
		if (ok && cw_load_strv_push(ld, &nv, json_string_value(e)))
			ok = false;
	}
	if (!ok) {
		cw_load_strv_free(&nv);
		return;
	}
	cw_load_strv_free(dst);
	*dst = nv;
}

bool cw_load_nonempty(struct cw_loader *ld, const char *s, const char *path)
{
	if (s[0])
		return true;
	cw_load_err(ld, path, "empty string; expected a non-empty name");
	return false;
}

void cw_load_set_int(struct cw_loader *ld, json_t *v, const char *path,
		     long long lo, long long hi, const char *expected,
		     int64_t *dst)
{
	int64_t x;

	if (cw_load_get_int(ld, v, path, lo, hi, expected, &x))
		*dst = x;
}
