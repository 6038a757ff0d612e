/* SPDX-License-Identifier: Apache-2.0 */
/*
 * records: the fields of every audit record the engine writes, one builder
 * per record type: agent, decision, launch, exit, net, seccomp, limit,
 * approval (access is built by server/http_reply.c; exec, file and process
 * records of kernel events by kernel/trace, cw_trace_event_json). The
 * types' names are the one list of audit/types.h (CW_AUDIT_T), which the
 * writer's callers, `audit query --type` and `audit stats` use.
 * Each builder returns a new object (NULL when out of memory) for the
 * caller to write; adding a record type is its row in audit/types.h and
 * types.c, its builder here and its call site.
 */
#ifndef CW_ENGINE_RECORDS_H
#define CW_ENGINE_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <jansson.h>

#include "kernel/bpfnet.h"
#include "kernel/cgroup.h"
#include "kernel/landlock.h"
#include "kernel/seccomp.h"
#include "kernel/spawn.h"
#include "kernel/user.h"
#include "kernel/trace.h"
#include "policy/decide.h"
#include "server/tools.h"

/* agent: what protects the calls of this run, once at start. cg and
 * trace may be NULL (layer off); trace_error "" when none. */
json_t *cw_rec_agent_start(const char *policy_path,
			   struct cw_cgroup_root *cg, struct cw_trace *trace,
			   const char *trace_error);

/* decision: the verdict on a call, or (invalid) why its arguments were
 * refused; how: the approval's answer, may be NULL. */
json_t *cw_rec_decision(const struct cw_call *call, bool invalid,
			const char *invalid_text, const struct cw_verdict *v,
			json_t *how);

/* launch: what an allowed run_command is about to run under: u and cwd
 * are the account and directory it gets (after any fallback). ll: the
 * Landlock ruleset, NULL when the layer is off; trace: the call's event
 * sources, NULL when none. */
json_t *cw_rec_launch(const char *tool, const struct cw_sandbox *sb,
		      const struct cw_run_args *ra, const struct cw_user *u,
		      const char *cwd, const struct cw_landlock *ll,
		      struct cw_trace *trace);

/* What the exit record of a command that ran reports. */
struct cw_exit_facts {
	const struct cw_spawn_result *run;
	uid_t uid;
	gid_t gid;
	const char *cwd;
	bool cancelled;
	const char *rate_error;		/* its count not durable, or NULL */
	bool cgroup;			/* it ran in a call cgroup */
	const struct cw_cgroup_stats *cg;
	const char *cgroup_error;	/* its end failed, or NULL */
	const struct cw_bpfnet_stats *net; /* NULL: no network rules */
	bool seccomp;			/* under a seccomp filter */
	uint64_t seccomp_recorded;	/* seccomp records written */
	struct cw_trace *trace;		/* NULL: no kernel events traced */
	const struct cw_trace_stats *events;
};

/* exit: a command that ran. */
json_t *cw_rec_exit(const struct cw_exit_facts *f);

/* exit: a call that reserved its counters but launched nothing; cancelled
 * is said when with_cancelled. */
json_t *cw_rec_exit_unlaunched(const char *error, bool with_cancelled,
			       bool cancelled);

/* net: one network event of a call. */
json_t *cw_rec_net(const struct cw_bpfnet_event *ev);
/* Completes the net record of a refused unix connect or send (bpf_trace):
 * masked, or whether it was could not be told. */
/* A denied event in a few words, for the call's notes: "10.0.0.1:443
 * (rule deny)". */
void cw_rec_net_brief(const struct cw_bpfnet_event *ev, char *buf, size_t len);
void cw_rec_net_unix(json_t *rec, bool masked);

/* seccomp: one described syscall denial. */
json_t *cw_rec_seccomp(const struct cw_seccomp_denial *d);

/* limit: a limit the call ran into, its peak against its max. */
json_t *cw_rec_limit(const char *limit, int64_t peak, int64_t max);
/* The memory limit, with the OOM kills it caused. */
json_t *cw_rec_limit_memory(const struct cw_cgroup_stats *c);
/* A sandbox.files limit crossed by process pid (comm), which was killed;
 * deny_open names the path and prefix instead of a peak and max. */
json_t *cw_rec_limit_files(const char *limit, int64_t peak, int64_t max,
			   const struct cw_trace_limit *who);
json_t *cw_rec_limit_deny_open(const struct cw_trace_stats *t);
/* A process killed because its kernel event found the trace's ring buffer
 * full: never let go on unrecorded. */
json_t *cw_rec_limit_trace_ring(const struct cw_trace_stats *t);

/* approval: an operator's answer to an approval id, refused or not. */
json_t *cw_rec_approval(const char *id, bool approve, int ret,
			const struct ucred *peer, json_t *desc);

#endif
