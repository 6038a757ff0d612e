/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp: the syscall filter every command runs under.
 *
 * The filter is built with libseccomp once per sandbox (at policy load) and
 * exported as a classic BPF program, so the child installs it between fork
 * and execve with one async-signal-safe syscall.
 */
#ifndef CW_KERNEL_SECCOMP_H
#define CW_KERNEL_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "lib/util.h"

/* The default profile, grouped; each group is denied for one reason.
 * The README's profile table is generated from the same list by
 * `cmdwarden seccomp-profile`. */
struct cw_seccomp_group {
	const char *name;	/* "ptrace", "namespaces", ... */
	const char *reason;	/* why an agent's command has no business here */
	const char *const *syscalls; /* NULL-terminated */
};
extern const struct cw_seccomp_group cw_seccomp_groups[];
extern const size_t cw_seccomp_ngroups;

struct cw_seccomp_prog;

/* Builds the filter for sb->seccomp (profile "default" or "none", plus
 * deny/allow lists and the socket families the default profile allows
 * beyond its own). Unknown syscall or family names are errors.
 * NULL + errno + err. */
struct cw_seccomp_prog *cw_seccomp_build(const struct cw_sandbox *sb,
					 struct cw_error *err);
/* Installs it in the calling thread (needs no_new_privs or CAP_SYS_ADMIN).
 * Async-signal-safe: for use between fork and execve. 0 or -errno. */
int cw_seccomp_install(const struct cw_seccomp_prog *p);
/* Installs the filter with a listener where the kernel allows one: then the
 * denied syscalls wait for an answer from *listener (CLOEXEC), which the
 * caller hands to the agent; else the errno filter, and *listener = -1.
 * Async-signal-safe. 0 or -errno. */
int cw_seccomp_install_listener(const struct cw_seccomp_prog *p,
				int *listener);
/* Whether p has a variant that sends denials to a listener. */
bool cw_seccomp_can_notify(const struct cw_seccomp_prog *p);

/* One denied syscall, as the agent saw it. */
struct cw_seccomp_denial {
	int nr;
	uint32_t arch;		/* AUDIT_ARCH_* */
	const char *arch_name;	/* "x86_64", ... (static) */
	uint64_t args[6];
	pid_t pid;		/* in the agent's pid namespace */
	int err;		/* the errno it was answered with */
	bool described;		/* name and comm were looked up */
	char name[32];		/* "" unless described */
	char comm[16];		/* "" unless described or when it was gone */
	/* socket and socketpair, when described: the family ("AF_VSOCK", or
	 * its number) and for AF_NETLINK the protocol; "" otherwise */
	char family[24];
	char protocol[32];
};

/* The agent's end of one call's listener; owns fd. NULL + errno. */
struct cw_seccomp_listener;
struct cw_seccomp_listener *cw_seccomp_listener_new(int fd);
void cw_seccomp_listener_free(struct cw_seccomp_listener *l);
int cw_seccomp_listener_fd(const struct cw_seccomp_listener *l);
/* Answers one pending notification, if any, with EPERM and fills d (with
 * name and comm when describe). 1 answered, 0 none pending, -EPIPE when no
 * process is left under the filter, else -errno. Never blocks. */
int cw_seccomp_listener_answer(struct cw_seccomp_listener *l, bool describe,
			       struct cw_seccomp_denial *d);

/* Number of BPF instructions (for tests and `probe`). */
size_t cw_seccomp_len(const struct cw_seccomp_prog *p);
void cw_seccomp_free(struct cw_seccomp_prog *p);

#endif
