/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup_pool: call cgroups made ahead of time and removed afterwards, on a
 * thread of their own, so that the mkdirs, limit writes and rmdirs of the
 * hierarchies (v2, and v1 memory and pids on hybrid machines) are not on
 * the path between a call's request and its answer.
 *
 * One call cgroup is kept ready, named like an invocation id ("inv-..."):
 * the call that takes it uses that name as its invocation id, so audit
 * records and cgroup paths keep matching. Calls that find nothing ready, or
 * a ready cgroup made for other limits, create their own as before.
 */
#ifndef CW_KERNEL_CGROUP_POOL_H
#define CW_KERNEL_CGROUP_POOL_H

#include <stdbool.h>

#include "kernel/cgroup.h"
#include "policy/policy.h"

struct cw_cgroup_pool;

/* Starts the thread, which prepares a first call cgroup with sb's limits.
 * NULL + errno when the thread cannot start. r must outlive the pool. */
struct cw_cgroup_pool *cw_cgroup_pool_open(struct cw_cgroup_root *r,
					   const struct cw_sandbox *sb);
/* Stops the thread, then removes the ready cgroup and every retired one
 * still waiting, before returning. */
void cw_cgroup_pool_close(struct cw_cgroup_pool *p);

/* The ready call cgroup if it fits sb (its name is the caller's new
 * invocation id), else NULL; either way the next one, for sb's limits, is
 * prepared in the background. */
struct cw_cgroup_call *cw_cgroup_pool_take(struct cw_cgroup_pool *p,
					   const struct cw_sandbox *sb);

/* Hands over a call cgroup to be removed in the background (keep_v2: as
 * cw_cgroup_call_end_keep_v2). Processes still inside are killed first. */
void cw_cgroup_pool_retire(struct cw_cgroup_pool *p, struct cw_cgroup_call *c,
			   bool keep_v2);

struct cw_cgroup_pool_stats {
	unsigned long prepared;	/* call cgroups made ahead */
	unsigned long taken;	/* ... and used by a call */
	unsigned long discarded; /* ... that did not fit and were removed */
	unsigned long removed;	/* retired cgroups removed */
	unsigned long failed;	/* preparations or removals that failed */
};

/* Waits until the thread has nothing left to do, then reads its counts. */
void cw_cgroup_pool_settle(struct cw_cgroup_pool *p,
			   struct cw_cgroup_pool_stats *st);

#endif
