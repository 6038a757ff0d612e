/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces: the call's own IPC, pid and mount namespaces.
 *
 * The launcher clones the call's first process into new IPC, pid and
 * mount namespaces while it is still root. That process is the
 * namespace's init (pid 1): it cuts the mount propagation back to the
 * sandbox, mounts a /proc of its own pid namespace, then starts the
 * command and reaps until the command's main process exits. SysV objects
 * then die with the call, and /proc shows only the call's processes.
 *
 * The functions here run in that child: async-signal-safe calls only.
 */
#ifndef CW_KERNEL_NAMESPACES_H
#define CW_KERNEL_NAMESPACES_H

#include <stdbool.h>
#include <stdint.h>

/* The clone flags for the call's namespaces. */
uint64_t cw_ns_clone_flags(void);

/* The steps of cw_ns_setup_mounts, to tell which one failed. */
enum cw_ns_step {
	CW_NS_PROPAGATION,
	CW_NS_PROC,
};

/* In the new mount namespace: no propagation back to the sandbox's, and
 * with proc a /proc of the caller's pid namespace. 0, or -errno with *step
 * the one that failed. */
int cw_ns_setup_mounts(bool proc, enum cw_ns_step *step);

#endif
