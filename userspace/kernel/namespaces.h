/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces: the call's own IPC, pid and mount namespaces.
 *
 * The launcher clones the call's first process into new IPC, pid and
 * mount namespaces while it is still root. That process is the
 * namespace's init (pid 1, kernel/spawn.c); the command's process, pid 2,
 * sets the mount namespace up before it drops to the sandbox user: the
 * propagation back to the sandbox cut, a /proc of the call's pid
 * namespace, the writable trees outside filesystem.exec re-mounted
 * noexec,nosuid,nodev, and executable memfds refused where the kernel can.
 * SysV objects then die with the call, /proc shows only the call's
 * processes, and nothing written by the call can be mapped executable.
 *
 * cw_ns_mounts_plan runs in the agent; cw_ns_setup_mounts in the child,
 * async-signal-safe.
 */
#ifndef CW_KERNEL_NAMESPACES_H
#define CW_KERNEL_NAMESPACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"
#include "policy/policy.h"

/* The clone flags for the call's namespaces. */
uint64_t cw_ns_clone_flags(void);

/* What to re-mount: each tree of filesystem.write that no exec tree holds
 * (noexec), and each exec tree inside one of those (exec again). The
 * paths point into the sandbox, which must outlive the plan. */
struct cw_ns_mounts {
	const char **noexec;
	size_t nnoexec;
	const char **exec;
	size_t nexec;
};

int cw_ns_mounts_plan(const struct cw_sandbox *sb, struct cw_ns_mounts *m,
		      struct cw_error *err);
void cw_ns_mounts_free(struct cw_ns_mounts *m);

/* The steps of cw_ns_setup_mounts, to tell which one failed. */
enum cw_ns_step {
	CW_NS_PROPAGATION,
	CW_NS_PROC,
	CW_NS_NOEXEC,		/* index: the noexec tree */
	CW_NS_EXEC,		/* index: the exec tree */
	CW_NS_MEMFD,
};

/* What the setup gave the call, for the spawn result. */
struct cw_ns_outcome {
	bool proc;		/* a /proc of its pid namespace */
	bool memfd_noexec;	/* vm.memfd_noexec 2 in its pid namespace */
};

/* In the new mount namespace: no propagation back to the sandbox's; with
 * proc, a /proc of the caller's pid namespace; the trees of m re-mounted;
 * executable memfds refused (vm.memfd_noexec, 6.3+) where the kernel has
 * it. 0, or -errno with *step and *index the one that failed. */
int cw_ns_setup_mounts(bool proc, const struct cw_ns_mounts *m,
		       struct cw_ns_outcome *out, enum cw_ns_step *step,
		       size_t *index);

#endif
