/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside userspace/policy/: the condition ops as one table (ops.c). A row
 * says what the op is called, what value the policy compiler accepts for
 * it, how decide.c evaluates it and how a denial words it. Adding an op is
 * one enum cw_op value (policy.h) and one row with its functions.
 */
#ifndef CW_POLICY_OPS_H
#define CW_POLICY_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "policy/load.h"
#include "policy/policy.h"

/* What evaluating a condition found. */
enum cw_op_res {
	CW_OP_NO = 0,
	CW_OP_YES,
	CW_OP_TYPE,	/* wrong type for the op: fails closed */
};

/* What evaluation saw, for the reason text. */
struct cw_op_detail {
	bool missing;
	const json_t *elem;	/* the list element that decided, if any */
	size_t length;		/* max_length: the length measured */
};

/* The command.* paths an op can apply to. */
#define CW_OP_ON_PROGRAMS 0x1u	/* command.programs, a list of names */
#define CW_OP_ON_OPAQUE 0x2u	/* command.opaque, a boolean */

struct cw_op_def {
	const char *name;
	unsigned on;		/* CW_OP_ON_* */
	bool on_missing;	/* evaluated when the value is missing */
	bool each;		/* a list on the left: every element */
	bool numeric;		/* the reason shows the number compared */
	/* Load: checks the policy's value v (at vpath); NULL: any value. */
	void (*check)(struct cw_loader *ld, struct cw_cond *c, json_t *v,
		      const char *vpath);
	/* Decide: the condition on the call's value v. */
	enum cw_op_res (*eval)(const struct cw_cond *c, const json_t *v,
			       struct cw_op_detail *d);
	/* Wording: "<subject> <yes|no> <value>", or phrase when set. */
	const char *yes, *no;
	void (*phrase)(const struct cw_cond *c, bool holds,
		       const struct cw_op_detail *d, const char *val,
		       char *buf, size_t len);
	/* Wording of a wrong type: "op X needs <needs>", or needs_fn. */
	const char *needs;
	const char *(*needs_fn)(const struct cw_cond *c);
};

/* At most this many ops: room for a list of their names. */
#define CW_OPS_MAX 32

/* The row of op, or NULL when op is not one. */
const struct cw_op_def *cw_op_get(enum cw_op op);
/* The op called name; false when there is none. */
bool cw_op_find(const char *name, enum cw_op *out);
/* Fills known (n + 1 entries: every op, then NULL); returns n. */
size_t cw_op_names(const char **known, size_t len);
/* "eq, neq, ..." of the ops that apply to on (0: every op), in table
 * order, the last joined with last_sep (", " or " or "). */
void cw_op_list(char *buf, size_t len, unsigned on, const char *last_sep);

#endif
