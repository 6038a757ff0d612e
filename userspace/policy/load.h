/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the policy loader (policy.c, sandbox.c, ops.c, load.c): the state
 * of one load, errors reported with their JSON path, typed field readers
 * and string lists. Not for use outside userspace/policy/.
 */
#ifndef CW_POLICY_LOAD_H
#define CW_POLICY_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"

/* A JSON path in an error: as struct cw_error.path. */
#define CW_LOAD_PATH_LEN 256

/* One load: every error is counted and appended to diag (when not NULL);
 * an allocation failure sets oom and the load fails with ENOMEM. */
struct cw_loader {
	const char *source;
	struct cw_diag *diag;
	size_t nerr;
	bool oom;
};

void cw_load_err(struct cw_loader *ld, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* strdup and calloc that set ld->oom on failure (calloc of 0: NULL). */
char *cw_load_strdup(struct cw_loader *ld, const char *s);
void *cw_load_calloc(struct cw_loader *ld, size_t n, size_t size);

/* "an object", "a string", ... for "expected X, got Y". */
const char *cw_load_jtype(const json_t *v);
/* dst = parent.key or parent[i]; dst holds CW_LOAD_PATH_LEN bytes. */
void cw_load_key(char *dst, const char *parent, const char *key);
void cw_load_idx(char *dst, const char *parent, size_t i);

/* "unknown WHAT "word" (did you mean "x"?); expected "a", "b" or "c"";
 * known is NULL-terminated. */
void cw_load_unknown(struct cw_loader *ld, const char *path, const char *what,
		     const char *word, const char *const *known);
/* Every key of obj must be in known (NULL-terminated). */
void cw_load_keys(struct cw_loader *ld, json_t *obj, const char *path,
		  const char *const *known);
/* Reports "expected X, got Y" unless ok; returns ok. */
bool cw_load_want(struct cw_loader *ld, json_t *v, const char *path, bool ok,
		  const char *expected);
/* An integer in [lo, hi]: get_int sets *out and returns true; set_int
 * sets *dst only when v is one. */
bool cw_load_get_int(struct cw_loader *ld, json_t *v, const char *path,
		     long long lo, long long hi, const char *expected,
		     int64_t *out);
void cw_load_set_int(struct cw_loader *ld, json_t *v, const char *path,
		     long long lo, long long hi, const char *expected,
		     int64_t *dst);

/* Checks one element of a string list; returns false (after reporting). */
typedef bool (*cw_load_check)(struct cw_loader *ld, const char *s,
			      const char *path);
bool cw_load_nonempty(struct cw_loader *ld, const char *s, const char *path);

void cw_load_strv_free(struct cw_strv *s);
int cw_load_strv_push(struct cw_loader *ld, struct cw_strv *s,
		      const char *str);
/* Replaces *dst with the strings of arr when every element passes check. */
void cw_load_strv_set(struct cw_loader *ld, json_t *arr, const char *path,
		      const char *expected, cw_load_check check,
		      struct cw_strv *dst);

#endif
