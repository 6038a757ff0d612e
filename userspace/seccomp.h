/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp: the syscall filter every command runs under.
 *
 * The filter is built with libseccomp once per sandbox (at policy load) and
 * exported as a classic BPF program, so the child installs it between fork
 * and execve with one async-signal-safe syscall.
 */
#ifndef CW_SECCOMP_H
#define CW_SECCOMP_H

#include <stddef.h>

#include "policy.h"
#include "util.h"

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
 * deny/allow lists). Unknown syscall names are errors. NULL + errno + err. */
struct cw_seccomp_prog *cw_seccomp_build(const struct cw_sandbox *sb,
					 struct cw_error *err);
/* Installs it in the calling thread (needs no_new_privs or CAP_SYS_ADMIN).
 * Async-signal-safe: for use between fork and execve. 0 or -errno. */
int cw_seccomp_install(const struct cw_seccomp_prog *p);
/* Number of BPF instructions (for tests and `probe`). */
size_t cw_seccomp_len(const struct cw_seccomp_prog *p);
void cw_seccomp_free(struct cw_seccomp_prog *p);

#endif
