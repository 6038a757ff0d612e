/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup: one cgroup per call, beneath the cgroup the agent was started in.
 *
 * Hierarchies are found from /proc/self/mountinfo and the agent's place in
 * each from /proc/self/cgroup; nothing is created at a hierarchy's root and
 * /sys/fs/cgroup is never assumed. In cgroup v2 the agent moves itself into
 * the leaf <own>/agent (the no-internal-processes rule) and each call gets
 * <own>/calls/<id>. Where memory or pids are only v1 controllers (hybrid
 * machines), each call also gets <own-v1>/calls/<id> in those hierarchies.
 * setrlimit in the launcher remains the floor. The root and its
 * hierarchies are cgroup.c's; one call's cgroups are cgroup_call.c's.
 */
#ifndef CW_KERNEL_CGROUP_H
#define CW_KERNEL_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "policy/policy.h"
#include "lib/util.h"

struct cw_cgroup_root;
struct cw_cgroup_call;

/* Finds the hierarchies, creates <own>/calls (and <own>/agent in v2, moving
 * the agent there), enables the controllers it can in v2, and kills and
 * removes stale call cgroups left by a crashed earlier run. NULL + errno +
 * err when no usable hierarchy exists. */
struct cw_cgroup_root *cw_cgroup_open(struct cw_error *err);
/* Removes what cw_cgroup_open created when it is empty (the agent moves
 * back to its own cgroup). */
void cw_cgroup_close(struct cw_cgroup_root *r);

/* The v2 directory all call cgroups live under (<own>/calls), the attach
 * point for cgroup-BPF programs; -1 when there is no v2 hierarchy. */
int cw_cgroup_calls_fd(const struct cw_cgroup_root *r);
const char *cw_cgroup_calls_path(const struct cw_cgroup_root *r);

/* What is enforced where: {"v2": path or null, "memory": "v2"|"v1"|null,
 * "pids": ..., "cpu": ..., "kill": "cgroup.kill"|"freeze"|"signal"} */
json_t *cw_cgroup_describe(const struct cw_cgroup_root *r);

/* Creates the call's cgroups with limits from res (0 = no limit):
 * memory.max (v2) or memory.limit_in_bytes (v1), pids.max, cpu.max for
 * cpu_s as a share is not expressible: cpu_s stays an rlimit. */
struct cw_cgroup_call *cw_cgroup_call_new(struct cw_cgroup_root *r,
					  const char *id,
					  const struct cw_sandbox *sb,
					  struct cw_error *err);

/* Would a call created for sb now have c's limits? A call prepared ahead
 * of time is only used for a sandbox it fits. */
bool cw_cgroup_call_fits(const struct cw_cgroup_call *c,
			 const struct cw_sandbox *sb);
/* The call's directory name (the id it was created with). */
const char *cw_cgroup_call_name(const struct cw_cgroup_call *c);

/* For the launcher: the v2 directory fd (clone3 CLONE_INTO_CGROUP), -1 if
 * none; and v1 tasks descriptors the child writes "0" to before
 * execve (opened O_WRONLY|O_CLOEXEC). */
int cw_cgroup_call_fd(const struct cw_cgroup_call *c);
size_t cw_cgroup_call_v1_procs(const struct cw_cgroup_call *c,
			       const int **fds);
/* The v2 cgroup id (for BPF maps), 0 if none. */
uint64_t cw_cgroup_call_id(const struct cw_cgroup_call *c);

/* Number of processes still in the call's cgroups (any hierarchy). */
int cw_cgroup_call_nprocs(const struct cw_cgroup_call *c);

struct cw_cgroup_stats {
	bool memory_limited;	/* memory limit hit (OOM kill or max events) */
	uint64_t memory_peak;	/* bytes, 0 if unknown */
	uint64_t memory_max;	/* the limit set, 0 = none */
	uint64_t oom_kills;
	bool pids_limited;	/* a fork failed at pids.max */
	uint64_t pids_peak;	/* 0 if unknown */
	uint64_t pids_max;
	uint64_t killed;	/* processes killed at the end */
};

/* Kills every process in the call's cgroups (cgroup.kill, else freeze,
 * kill, thaw; v1: repeated SIGKILL of cgroup.procs until empty), waits
 * until they are gone, reads the statistics, removes the cgroups and frees
 * c. 0 or -errno (c is freed either way; err says what was left behind). */
int cw_cgroup_call_end(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
		       struct cw_error *err);

/* Only the first half of the end: kills, waits, reads the statistics;
 * the directories stay (locked) until cw_cgroup_call_end or _keep_v2,
 * which can then run later, off the path of the call. 0 or -errno. */
int cw_cgroup_call_stop(struct cw_cgroup_call *c, struct cw_cgroup_stats *st,
			struct cw_error *err);

/* The same, but the v2 directory (emptied of processes) stays: sockets
 * the call left behind keep their cgroup, and so its cgroup-BPF programs,
 * until cw_cgroup_remove_call removes it. */
int cw_cgroup_call_end_keep_v2(struct cw_cgroup_call *c,
			       struct cw_cgroup_stats *st,
			       struct cw_error *err);
int cw_cgroup_remove_call(struct cw_cgroup_root *r, const char *id);

/* The invocation whose call cgroup holds pid (the last "calls" component
 * of its v2 path, any agent's): 1 found, 0 not in a call cgroup, -ESRCH
 * when the process is gone. */
int cw_cgroup_pid_invocation(pid_t pid, char *inv, size_t len);

#endif
