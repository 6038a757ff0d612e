/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lint: constructs a policy may legally hold but that probably do not mean
 * what their author intended, as warnings (`cmdwarden check`, `serve`).
 */
#ifndef CW_POLICY_LINT_H
#define CW_POLICY_LINT_H

#include "lib/util.h"
#include "policy/policy.h"

/* Adds one warning per such construct of p to warn. */
void cw_policy_lint(const struct cw_policy *p, struct cw_diag *warn);

#endif
