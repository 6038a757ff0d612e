/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What cgroup.c (the hierarchies and the root) and cgroup_call.c (one
 * call's cgroups) share: the root's and the call's structures and the one
 * call between them. Included by those two files only; everyone else sees
 * the opaque structs of kernel/cgroup.h.
 */
#ifndef CW_KERNEL_CGROUP_INTERNAL_H
#define CW_KERNEL_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/cgroup.h"

#define NHIER		3	/* v2, v1 memory, v1 pids */
#define HF_V2		0x1u
#define HF_MEMORY	0x2u	/* v1 hierarchy with the memory controller */
#define HF_PIDS		0x4u	/* v1 hierarchy with the pids controller */

/* How long to wait for a peer agent's flock on a directory. */
#define LOCK_TIMEOUT_US		(2 * 1000000LL)

enum kill_mode { KILL_CGROUP, KILL_FREEZE, KILL_SIGNAL };

struct hier {
	unsigned int flags;
	bool is_root;		/* <own> is the v2 root cgroup */
	char *rel;		/* <own> as /proc/self/cgroup names it */
	char *own;		/* <own> as a directory */
	char *calls;		/* <own>/calls */
	int own_fd;		/* LOCK_SH while the root is open */
	int calls_fd;
};

struct cw_cgroup_root {
	struct hier h[NHIER];
	size_t nh;
	int v2;			/* index in h, -1 if none */
	int mem;		/* hierarchy enforcing memory, -1 if none */
	int pids;		/* hierarchy enforcing pids, -1 if none */
	unsigned int v2_ctl;	/* controllers enabled in v2 calls/ */
	char *agent;		/* <own>/agent once the agent moved there */
	char *moved_from;	/* v2: the shared cgroup the agent started in,
				 * when <own> is a sibling made for it */
	enum kill_mode kill;
	unsigned int stale_removed;
	json_t *notes;
};

struct cw_cgroup_call {
	const struct cw_cgroup_root *r;
	char *id;
	int fd[NHIER];		/* the call's directories, LOCK_EX held */
	char *rel[NHIER];	/* as /proc/<pid>/cgroup names them */
	int v1_procs[NHIER];
	size_t nv1;
	uint64_t memory_max;
	uint64_t pids_max;
	uint64_t cgid;
	uint64_t mem_seen;	/* memory.current before the kill */
	bool stopped;		/* killed and measured; only removal is left */
};

/* Kills and removes calls/<name> in every hierarchy unless a live agent
 * holds it: 0 when removed, 1 when held, -errno with err filled. */
int cw_cgroup_end_stale(const struct cw_cgroup_root *r, const char *name,
			struct cw_error *err);

#endif
