/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine's own state, shared by its files and by no one else:
 * engine.c (open, close, rules, the state calls share), call.c (the call
 * state machine), launch.c (one command's launch under every layer).
 */
#ifndef CW_ENGINE_INTERNAL_H
#define CW_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/approvals.h"
#include "engine/engine.h"
#include "engine/jobs.h"
#include "kernel/bpfnet.h"
#include "kernel/cgroup.h"
#include "kernel/cgroup_pool.h"
#include "kernel/landlock.h"
#include "kernel/seccomp.h"
#include "kernel/trace.h"
#include "rate/ratelimit.h"
#include "server/tools.h"

struct cw_ns_pool;

/* Ended calls whose network entries are kept, at most. */
#define CW_ENGINE_SEALED_MAX 1024
/* Room for why kernel event tracing is not what it could be. */
#define CW_ENGINE_TRACE_ERROR_LEN 512

/* A Landlock ruleset in use by launches; freed by its last user. */
struct cw_ll_ref {
	struct cw_landlock *ll;
	int refs;
};

/* A policy and what it compiles to. Shared by the calls that use it and
 * freed with the last of them, so a reload can replace it meanwhile. */
struct cw_rules {
	int refs;			/* atomic */
	struct cw_policy *policy;
	struct cw_seccomp_prog *seccomp;
	pthread_mutex_t ll_lock;	/* the swap of landlock */
	struct cw_ll_ref *landlock;	/* NULL when the layer is off */
	json_t *disk;			/* the writable trees' budgets */
	char *disk_gap;			/* the trees without one; NULL */
};

/* A call collecting its network events, in e->collecting. */
struct cw_net_ctx {
	struct cw_call_result *r;
	uint64_t cgid;
	struct cw_net_ctx *next;
};

struct cw_engine {
	pthread_mutex_t rules_lock;	/* guards the swap of rules */
	struct cw_rules *rules;		/* the default policy's */
	struct cw_cgroup_root *cg;	/* NULL when the layer is off */
	struct cw_cgroup_pool *pool;	/* call cgroups made and removed
					 * off the calls' path; may be NULL */
	struct cw_ns_pool *ns;		/* the calls' namespaces; NULL when
					 * the layer is off */
	bool cg_memory, cg_pids;	/* it enforces memory / pids limits */
	struct cw_bpfnet *net;		/* NULL when the layer is off */
	struct cw_trace *trace;		/* NULL when no kernel event source */
	char trace_error[CW_ENGINE_TRACE_ERROR_LEN]; /* why tracepoint BPF
						      * was not used */
	struct cw_rate_store *rates;
	struct cw_audit *audit;
	struct cw_jobs *jobs;
	struct cw_approvals *approvals;	/* internally locked */
	bool operator_approvals;	/* set before calls start */
	int fail_at;			/* enum cw_launch_step, for tests */
	uint64_t decisions;		/* atomic: policy decisions made */
	int64_t max_running;
	pthread_mutex_t lock;		/* everything below */
	int64_t running;		/* commands running now */
	struct cw_net_ctx *collecting;	/* calls whose net events we want */
	/* Ended calls whose network entries still drop what their sockets
	 * send, removed once their time has passed (engine.c). */
	struct { uint64_t cgid; int64_t since; char id[32]; }
		sealed[CW_ENGINE_SEALED_MAX];
	size_t nsealed;
};

/* Writes one record of call r (counted in r->audit_records); takes
 * fields. 0 or -errno with err. */
int cw_engine_record(struct cw_engine *e, struct cw_call_result *r,
		     const char *type, json_t *fields, unsigned flags,
		     struct cw_error *err);

/* r failed: outcome FAILED, message "what: err". */
void cw_call_fail(struct cw_call_result *r, const char *what,
		  const struct cw_error *err);

/* The current Landlock ruleset of ru, rebuilt first when a file it names
 * was replaced (rules name files as they were). NULL with *ok false when
 * the rebuild failed; NULL with *ok true when the layer is off. */
struct cw_ll_ref *cw_rules_landlock(struct cw_rules *ru,
				    const struct cw_sandbox *sb, bool *ok,
				    struct cw_error *err);
void cw_ll_put(struct cw_ll_ref *r);

/* A slot among max_concurrent running commands; false (with the number
 * running) when all are taken. */
bool cw_engine_slot_take(struct cw_engine *e, int64_t *running);
void cw_engine_slot_give(struct cw_engine *e);

/* The network events of a call go to nc->r while it is listed. */
void cw_engine_collect_add(struct cw_engine *e, struct cw_net_ctx *nc);
void cw_engine_collect_remove(struct cw_engine *e, struct cw_net_ctx *nc);
/* One `net` record per drained event, for the call it belongs to. */
void cw_engine_net_event(void *ctx, const struct cw_bpfnet_event *ev);
/* An ended call's network entries (cgroup id cgid, call cgroup id), kept
 * a while so its sockets' late sends are still dropped. */
void cw_engine_seal(struct cw_engine *e, uint64_t cgid, const char *id);

/* How a launch is watched: by its caller (foreground) or its job. */
struct cw_runner {
	int cancel_fd;
	int64_t tick_ms;
	void (*tick)(void *ctx, int64_t elapsed_us);
	void (*output)(void *ctx, int stream, const char *data, size_t len);
	void (*launched)(void *ctx, pid_t pid);
	void *ctx;
};

/* Why a launch launched nothing, for the exit record of the call. */
struct cw_unlaunched {
	char error[1024];
	bool with_cancelled;	/* the record says whether it was cancelled */
};

/*
 * Launch of an allowed, reserved run_command whose decision record is
 * written: every layer attached in turn, the spawn, every layer detached,
 * the limit and exit records. 0 once the command was launched (its exit
 * record is written, or the result withheld); -errno when nothing was
 * launched: r says why and why says it for the exit record, which the
 * caller writes as it gives the reservation back. Takes cgc (a call
 * cgroup made ahead, or NULL). sync_launch: the launch record is synced
 * at once (a background call), else the reservation is flushed while the
 * command starts. On the caller's thread, or on a background job's.
 */
int cw_launch(struct cw_engine *e, struct cw_rules *ru, const char *tool,
	      const struct cw_run_args *ra, const struct cw_runner *rn,
	      struct cw_cgroup_call *cgc, bool sync_launch,
	      struct cw_call_result *r, struct cw_unlaunched *why);

/* Whether a failure is injected at this launch step (tests). */
bool cw_engine_injected(const struct cw_engine *e, enum cw_launch_step s);

#endif
