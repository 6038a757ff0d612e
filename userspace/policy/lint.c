// SPDX-License-Identifier: Apache-2.0
/* Warnings about legal but probably unintended policy constructs. */
#include "policy/lint.h"

/* A list on the left of in/regex means "every element": in deny_if on
 * command.programs that denies only when all programs match, which is
 * rarely what the author meant. */
void cw_policy_lint(const struct cw_policy *p, struct cw_diag *warn)
{
	size_t i, j;

	for (i = 0; i < p->nrules; i++) {
		const struct cw_rule *r = &p->rules[i];

		for (j = 0; j < r->ndeny_if; j++) {
			const struct cw_cond *c = &r->deny_if[j];

			if (c->kind != CW_PATH_CMD_PROGRAMS ||
			    (c->op != CW_OP_IN && c->op != CW_OP_REGEX))
				continue;
			cw_diag_add(warn, p->source, 0, 0, c->where,
				    "deny_if command.programs with \"%s\" holds only when every program matches, so \"ls; rm x\" passes a rule about rm; to deny when any program matches, use \"contains\" in deny_if, or \"%s\" in require",
				    cw_op_name(c->op),
				    c->op == CW_OP_IN ? "not_in" : "not_regex");
		}
	}
}
