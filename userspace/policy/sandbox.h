/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside the policy loader: the sandbox section, compiled into struct
 * cw_sandbox (policy/policy.h). Not for use outside userspace/policy/.
 */
#ifndef CW_POLICY_SANDBOX_H
#define CW_POLICY_SANDBOX_H

#include <stdbool.h>

#include <jansson.h>

#include "policy/load.h"

/* Fills sb with the default profile; the profile is checked like a policy
 * so a bad edit of it shows up as a load error. */
void cw_sandbox_default(struct cw_loader *ld, struct cw_sandbox *sb);
/* Applies a sandbox object on top of sb (every field given overrides it);
 * explicit marks the policy's own section, not the default. */
void cw_sandbox_apply(struct cw_loader *ld, struct cw_sandbox *sb, json_t *o,
		      const char *path, bool explicit);
void cw_sandbox_free(struct cw_sandbox *sb);

#endif
