/* SPDX-License-Identifier: Apache-2.0 */
/*
 * disk: the writable trees' budgets (sandbox.disk), set when a policy is
 * loaded and reported in each launch record.
 */
#ifndef CW_ENGINE_DISK_H
#define CW_ENGINE_DISK_H

#include <jansson.h>

#include "policy/policy.h"

/*
 * As root, gives each tree of sb's sandbox.disk.tmpfs and disk.image its
 * budget (kernel/tmpfs.h, kernel/diskimage.h). Returns what each tree of
 * filesystem.write has, for the launch record: {"TREE": {"tmpfs":
 * "BUDGET-TREE", "max_mb": N, "max_inodes": N} | {"image": "BUDGET-TREE",
 * "file": "IMAGE", "max_mb": N, "max_inodes": N} | {"error": "why"}}, the
 * innermost budget holding it; *gap (malloc'd, NULL when none) names the
 * trees left without one and why. NULL when out of memory.
 */
json_t *cw_disk_budgets(const struct cw_sandbox *sb, char **gap);

#endif
