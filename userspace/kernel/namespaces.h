/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces: each call's own IPC, pid and mount namespaces.
 *
 * A holder is a process made ahead of time (kernel/ns_pool.h) in new IPC,
 * pid and mount namespaces: their init (pid 1), a fork of the agent with
 * memory of its own. It cuts the propagation of its mounts back to the
 * sandbox, mounts a /proc of its pid namespace, re-mounts the writable
 * trees outside filesystem.exec noexec,nosuid,nodev, sets vm.memfd_noexec
 * where the kernel has it, reaps the orphans of the call and lives until
 * the agent closes its end of the holder's socket (or dies); its exit ends
 * whatever is left in the pid namespace.
 *
 * A call joins the holder's namespaces on its way to execve: the agent's
 * launching thread points its children's pid namespace at the holder's
 * (setns CLONE_NEWPID, which changes no running process), and the child it
 * starts joins the holder's mount and IPC namespaces itself. The command
 * stays the agent's own child, so its wait status is exact; in its
 * namespace it is pid 2 or above and sees only the call's processes.
 *
 * The kernel's per-user limits (inotify instances and watches, POSIX
 * message queue bytes, pending signals, processes) are counted per user
 * namespace and, above it, against the namespace's owner. Each call gets a
 * user namespace of its own, every id mapped to itself (files, Landlock and
 * the audit see the same uid as before), owned by a transient uid of
 * CW_NS_OWNER_BASE.. that no process runs as: what one call holds counts
 * against that uid, not the sandbox user's, so it cannot starve the next
 * call or the sandbox user's own processes. The command joins it last,
 * after everything that needs the agent's privileges.
 */
#ifndef CW_KERNEL_NAMESPACES_H
#define CW_KERNEL_NAMESPACES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/util.h"
#include "policy/policy.h"

/* What to re-mount: each tree of filesystem.write that no exec tree holds
 * (noexec), each exec tree inside one of those (exec again), and each
 * unix socket of a service outside the calls to mask (bound over with
 * /dev/null, so that a connect or send there finds no socket, however the
 * path is written). Copies of the paths, owned by the plan. */
struct cw_ns_mounts {
	bool userns;		/* a user namespace of its own too */
	bool shm;		/* a tmpfs of its own on CW_NS_SHM (listed in
				 * filesystem.write) */
	char **noexec;
	size_t nnoexec;
	char **exec;
	size_t nexec;
	char **mask;
	size_t nmask, capmask;
};

/* POSIX shared memory: a tmpfs of the call's own when write lists it. */
#define CW_NS_SHM "/dev/shm"

int cw_ns_mounts_plan(const struct cw_sandbox *sb, struct cw_ns_mounts *m,
		      struct cw_error *err);
/* Adds a socket to mask. 0 or -ENOMEM. */
int cw_ns_mounts_mask(struct cw_ns_mounts *m, const char *path);
void cw_ns_mounts_free(struct cw_ns_mounts *m);

/* The owners of the calls' user namespaces: uids no account may use. */
#define CW_NS_OWNER_BASE 1879048192u	/* 0x70000000 */
#define CW_NS_OWNER_COUNT 65536u

struct cw_ns_holder {
	pid_t pid;		/* in the agent's pid namespace */
	int pidfd;		/* what setns joins */
	int sock;		/* the agent's end: closing it ends the holder */
	int root;		/* O_PATH /proc/PID/root: its mount namespace */
	bool proc;		/* a /proc of its own pid namespace */
	bool memfd_noexec;	/* vm.memfd_noexec 2 there */
	unsigned masked;	/* sockets of the plan masked there */
	int userns;		/* the call's user namespace; -1 */
	int userns_err;		/* why not (errno), when asked for */
	uid_t owner;		/* its owner */
	bool reap;		/* the caller's child, not the forker's */
};

/* The process that forks the holders (namespaces.c says why), forked now.
 * NULL with err when it cannot start. */
struct cw_ns_forker;
struct cw_ns_forker *cw_ns_forker_start(struct cw_error *err);
void cw_ns_forker_stop(struct cw_ns_forker *f);

/* Starts a holder for the plan m (NULL: no re-mounts), forked by f (NULL:
 * by the caller itself, which then reaps it). 0, or -errno with err naming
 * the step that failed (-EPERM/-EINVAL/-ENOSYS: this kernel or these
 * privileges allow no such namespaces). */
int cw_ns_holder_start(struct cw_ns_forker *f, const struct cw_ns_mounts *m,
		       struct cw_ns_holder *h, struct cw_error *err);
/* Ends the holder and everything left in its pid namespace, and reaps it.
 * Harmless on a holder never started (pid 0). */
void cw_ns_holder_stop(struct cw_ns_holder *h);

/* Masks one more socket in the holder's mount namespace (one that came
 * after the holder): 0, 1 when path is no socket there, or -errno. */
int cw_ns_holder_mask(struct cw_ns_holder *h, const char *path);

/* Whether path, as thread tid of the call passed it to connect or sendmsg
 * (relative to its working directory), names a socket masked in h's mount
 * namespace: 1, 0 (a socket or nothing), or -errno when that cannot be told
 * (the thread of a relative path has ended). */
int cw_ns_socket_masked(const struct cw_ns_holder *h, pid_t tid,
			const char *path);

/* In the launching thread: processes it starts from now on are in h's pid
 * namespace; cw_ns_leave_pid (from the same thread) goes back to the
 * agent's. 0 or -errno. */
int cw_ns_enter_pid(const struct cw_ns_holder *h);
int cw_ns_leave_pid(void);
/* In the started child, before it changes directory (async-signal-safe):
 * joins the mount and IPC namespaces of the holder behind pidfd, then the
 * user namespace userns (-1: none), which keeps no privilege outside it. */
int cw_ns_join(int pidfd, int userns);

#endif
