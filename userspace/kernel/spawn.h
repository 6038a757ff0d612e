/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn: run one shell command confined, capture its output, reap it.
 *
 * The child gets its own session and process group, the sandbox user's
 * uid/gid/groups, an environment built only from the policy and the call,
 * no inherited descriptors beyond stdin (/dev/null), stdout and stderr,
 * rlimit floors, PR_SET_NO_NEW_PRIVS, then the seccomp filter and execve of
 * `shell -c command`. Failures before execve reach the parent through a
 * CLOEXEC pipe, so "could not launch" is told apart from "ran and failed".
 */
#ifndef CW_KERNEL_SPAWN_H
#define CW_KERNEL_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/landlock.h"
#include "kernel/namespaces.h"

struct cw_user;
#include "policy/policy.h"
#include "kernel/seccomp.h"
#include "lib/util.h"

/* Watching a running command from the caller's side; every field optional. */
struct cw_spawn_watch {
	int cancel_fd;		/* readable (an eventfd written by another
				 * thread): kill the command's process group
				 * now; -1 for none */
	int64_t tick_ms;	/* on_tick every tick_ms while it runs */
	void (*on_tick)(void *ctx, int64_t elapsed_us);
	/* Output as it arrives, every byte (the callee keeps what it
	 * can); stream 1 is stdout, 2 stderr. */
	void (*on_output)(void *ctx, int stream, const char *data,
			  size_t len);
	void *ctx;
};

struct cw_spawn_opts {
	const struct cw_sandbox *sb;
	const char *command;
	const char *cwd;	/* NULL: the sandbox's cwd (with fallback) */
	const struct cw_user *user; /* the account, resolved by the caller
				     * (the launch record names it); NULL:
				     * resolved here */
	const char *const *env_extra; /* "K=V" from the call; NULL-terminated */
	/* What the command reads on stdin, given as a file of its own (a
	 * memfd: it never blocks the agent and ends where the data ends);
	 * NULL: /dev/null. */
	const char *stdin_data;
	size_t stdin_len;
	int64_t timeout_ms;	/* <= 0: sb->timeout_s, or for a background
				 * command sb->background_timeout_s */
	bool background;	/* capped by background_timeout_s (0: none)
				 * rather than timeout_s */
	int64_t kill_grace_ms;	/* SIGTERM to SIGKILL; <= 0: 2000 */
	const struct cw_seccomp_prog *seccomp; /* NULL: no filter */
	/* Kernel layers prepared by the caller; all optional. */
	const struct cw_landlock *landlock; /* after no_new_privs, before
					     * seccomp */
	bool into_cgroup;	/* start the child in cgroup_fd (clone3 with
				 * CLONE_INTO_CGROUP, else it joins itself) */
	int cgroup_fd;		/* a cgroup v2 directory */
	const int *join_fds;	/* v1 tasks files the child writes
				 * "0" to before anything else */
	size_t njoin;
	/* The cgroup enforces memory / pids: the rlimit floors for them are
	 * left off, so the cgroup is what stops (and reports) a breach. */
	bool cgroup_memory;
	bool cgroup_pids;
	/* The call's own IPC, pid and mount namespaces, held by h
	 * (kernel/namespaces.h); NULL: the agent's. */
	const struct cw_ns_holder *ns;
	/* The loginuid its processes get, by which the kernel audit knows
	 * the call's events (kernel/kaudit.h); 0: theirs is the agent's. */
	uint32_t loginuid;
	/* With on_seccomp, the filter's denials come to the agent: each is
	 * answered with EPERM and passed to on_seccomp (from the thread in
	 * cw_spawn_run, while the command runs); the first
	 * seccomp_describe_max (0: 64) come with syscall name and comm.
	 * Without, or where the kernel gives no listener, the filter answers
	 * them itself, unseen. */
	void (*on_seccomp)(void *ctx, const struct cw_seccomp_denial *d);
	void *seccomp_ctx;
	unsigned seccomp_describe_max;
	const struct cw_spawn_watch *watch; /* NULL: none */
	/* Called in the parent once the child has exec'd. */
	void (*on_launch)(void *ctx, pid_t pid, uid_t uid, gid_t gid,
			  const char *cwd);
	void *ctx;
};

struct cw_spawn_result {
	char *out;		/* NUL-terminated: max_output_bytes at most,
				 * and a marker line where bytes were cut */
	size_t out_len;
	char *err;
	size_t err_len;
	uint64_t out_total;	/* bytes the command wrote, kept or not */
	uint64_t err_total;
	uint64_t out_omitted;	/* of them, not kept: out holds the first
				 * and last bytes with a marker line between
				 * (lib/headtail.h) */
	uint64_t err_omitted;
	bool truncated;		/* either stream was cut */
	int exit_code;		/* -1 when killed by a signal */
	int term_signal;	/* 0 when it exited */
	bool timed_out;
	bool cancelled;		/* killed through watch->cancel_fd */
	unsigned left_running;	/* processes still running when the main
				 * one exited, killed then */
	int64_t duration_us;
	pid_t pid;
	bool seccomp_audited;	/* denials came to the agent */
	uint64_t seccomp_denied; /* syscalls answered with EPERM */
};

/* Runs to completion. 0 when the command ran (whatever its exit status);
 * -errno with err filled when it could not be launched at all. */
int cw_spawn_run(const struct cw_spawn_opts *o, struct cw_spawn_result *r,
		 struct cw_error *err);
void cw_spawn_result_free(struct cw_spawn_result *r);

/* The exit status as a shell reports it: 128 + the signal when one ended
 * the command, else its exit code. The result, the exit record and a
 * job's state all say this one. */
static inline int cw_spawn_status(const struct cw_spawn_result *r)
{
	return r->term_signal ? 128 + r->term_signal : r->exit_code;
}

#endif
