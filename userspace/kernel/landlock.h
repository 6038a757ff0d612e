/* SPDX-License-Identifier: Apache-2.0 */
/*
 * landlock: sandbox.filesystem (and, where the ABI allows, TCP ports and
 * scoping) as a Landlock ruleset.
 *
 * The ruleset is built once per sandbox in the agent and kept as a file
 * descriptor; the child applies it between fork and execve with one
 * async-signal-safe syscall (after no_new_privs, right before seccomp).
 */
#ifndef CW_KERNEL_LANDLOCK_H
#define CW_KERNEL_LANDLOCK_H

#include <stdbool.h>

#include <jansson.h>

#include "policy/policy.h"
#include "lib/util.h"

struct cw_landlock;

/* The running kernel's Landlock ABI version, 0 when unavailable. */
int cw_landlock_abi(void);

/* Builds the ruleset for sb->filesystem (and network/scoping by ABI).
 * abi: the ABI to target (normally cw_landlock_abi(); tests pass lower
 * values to check the best-effort downgrade). NULL + errno + err on failure;
 * errno EOPNOTSUPP when abi is 0. */
struct cw_landlock *cw_landlock_build(const struct cw_sandbox *sb, int abi,
				      struct cw_error *err);
/* The same, with paths looked up from root (a directory descriptor, for
 * example /proc/PID/root of a process in another mount namespace): the
 * rules then name the objects that namespace's paths lead to, its own
 * /proc among them. root -1 is cw_landlock_build. */
struct cw_landlock *cw_landlock_build_at(const struct cw_sandbox *sb, int abi,
					 int root, struct cw_error *err);
void cw_landlock_free(struct cw_landlock *l);

/* True when a rule is on an object of the agent's /proc, which a call
 * with a /proc of its own does not see: its ruleset is then built again
 * from its root (cw_landlock_build_at). */
bool cw_landlock_names_proc(const struct cw_landlock *l);

/* The ruleset descriptor (O_CLOEXEC), for the launcher to keep open. */
int cw_landlock_fd(const struct cw_landlock *l);

/* Restricts the calling thread. Needs no_new_privs. Async-signal-safe.
 * 0 or -errno. */
int cw_landlock_apply(const struct cw_landlock *l);

/* For a call with a procfs of its own mounted at /proc, and maybe a tmpfs
 * of its own at /dev/shm: the same ruleset, made again from the rules l
 * keeps (a descriptor each, no path looked up again) with those on the
 * agent's /proc (and beneath it) given to the procfs proc_fd is the root
 * of, and those at or beneath /dev/shm to the tmpfs shm_fd is the root
 * of (either -1: kept as they are). Applied like l; its staleness is l's.
 * NULL with err; errno ENOTSUP when l could not keep its rules (more than
 * a quarter of the agent's descriptor limit): cw_landlock_can_move says
 * so first, and cw_landlock_build_at is the way then. */
bool cw_landlock_can_move(const struct cw_landlock *l);
struct cw_landlock *cw_landlock_moved(const struct cw_landlock *l,
				      int proc_fd, int shm_fd,
				      struct cw_error *err);
/* True when a rule is at or beneath /dev/shm. */
bool cw_landlock_names_shm(const struct cw_landlock *l);

/* True when the ruleset no longer matches the filesystem: a granted path
 * now names another file or directory, a directory listed to leave out a
 * deny entry has gained, lost or renamed entries, or a missing list entry
 * now exists. Build again then (in the agent). */
bool cw_landlock_stale(const struct cw_landlock *l);

/* What the ruleset enforces, for launch records and probe:
 * {"abi": N, "filesystem": true, "tcp_ports": bool, "scoped": [...]} */
json_t *cw_landlock_describe(const struct cw_landlock *l);

#endif
