/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine: one tool call from arguments to result, and the state calls
 * share (rules, audit log, rate-limit store, kernel layers, jobs,
 * approvals). A call is submitted and decided exactly once, then approved,
 * reserved, launched, recorded and answered (call.c); a refused or invalid
 * call is answered at submission, any other needs a worker to run the
 * rest. Shared by the MCP server and `cmdwarden exec`.
 */
#ifndef CW_ENGINE_ENGINE_H
#define CW_ENGINE_ENGINE_H

#include <stdbool.h>

#include <jansson.h>

#include "audit/audit.h"
#include "engine/layers.h"
#include "engine/notes.h"
#include "policy/decide.h"
#include "policy/lint.h"
#include "policy/policy.h"
#include "kernel/probe.h"
#include "kernel/spawn.h"
#include "lib/util.h"

#define CW_DEFAULT_STATE_DIR "/var/lib/cmdwarden"
#define CW_DEFAULT_AUDIT "/var/log/cmdwarden/audit.jsonl"
/* The audit log rotates before it passes this size (see audit.h). */
#define CW_DEFAULT_AUDIT_MAX_BYTES (64ull << 20)
/* ... and its files together stay under this (retention, see audit.h). */
#define CW_DEFAULT_AUDIT_MAX_TOTAL (512ull << 20)
/* How long command_kill waits for a killed job to be gone. */
#define CW_KILL_WAIT_MS 10000

struct cw_engine;

struct cw_engine_opts {
	const char *policy_path;	/* NULL: the embedded default */
	const char *state_dir;		/* NULL: CW_DEFAULT_STATE_DIR */
	const char *audit_path;		/* NULL: CW_DEFAULT_AUDIT */
	uint64_t audit_max_bytes;	/* 0: CW_DEFAULT_AUDIT_MAX_BYTES;
					 * UINT64_MAX: never rotate */
	uint64_t audit_max_total;	/* 0: CW_DEFAULT_AUDIT_MAX_TOTAL;
					 * UINT64_MAX: keep every file */
	unsigned trace_ringbuf_kib;	/* 0: the default */
	int64_t approval_lifetime_s;	/* 0: CW_APPROVAL_LIFETIME_S */
	bool trace_no_pause;		/* a full ring kills the process
					 * whose event it cannot take, with
					 * no pausing of the call first */
};

/* Legal but probably unintended constructs, as warnings: the policy's
 * lint (policy/lint.h), under the name `check` and `serve` call it by. */
static inline void cw_engine_lint(const struct cw_policy *p,
				  struct cw_diag *warn)
{
	cw_policy_lint(p, warn);
}

struct cw_engine *cw_engine_open(const struct cw_engine_opts *o,
				 struct cw_diag *diag);
void cw_engine_close(struct cw_engine *e);
/* Calls may not reach this local port (the agent's own listener) unless
 * their network.local_services allow it. 0 or -errno. */
int cw_engine_guard_port(struct cw_engine *e, uint16_t port);
/* The default policy at this moment (borrowed: valid until the next
 * cw_engine_set_rules; threads that may race a reload use cw_engine_rules). */
const struct cw_policy *cw_engine_policy(const struct cw_engine *e);

/*
 * Rules: a policy with the seccomp filter and Landlock ruleset it compiles
 * to. Reference-counted, so a reload can replace them while calls still run
 * under the old ones.
 */
struct cw_rules;

/* cw_engine_load_policy plus the filter and ruleset; NULL with diag. */
struct cw_rules *cw_rules_load(const char *path, struct cw_diag *diag);
struct cw_rules *cw_rules_get(struct cw_rules *r);
void cw_rules_put(struct cw_rules *r);
const struct cw_policy *cw_rules_policy(const struct cw_rules *r);

/* The default rules (a new reference), and their replacement (takes its own
 * reference; calls already running keep the old ones). */
struct cw_rules *cw_engine_rules(struct cw_engine *e);
void cw_engine_set_rules(struct cw_engine *e, struct cw_rules *r);

/* Writes a record that belongs to no call (a refused HTTP request, a
 * reload); flags as for cw_audit_write_flags. 0 or -errno with err. */
int cw_engine_audit(struct cw_engine *e, const char *type, json_t *fields,
		    unsigned flags, struct cw_error *err);

enum cw_outcome {
	CW_OUTCOME_RAN = 0,	/* the command ran; see run */
	CW_OUTCOME_DENIED,	/* policy said no; message starts [POLICY DENIED] */
	CW_OUTCOME_INVALID,	/* bad arguments; message says which */
	CW_OUTCOME_UNKNOWN_TOOL, /* allowed, but no such tool here */
	CW_OUTCOME_FAILED,	/* could not launch or could not audit */
};

struct cw_call_result {
	enum cw_outcome outcome;
	struct cw_verdict verdict;
	char invocation[32];
	char message[1024];
	struct cw_spawn_result run;
	char sandbox_id[128];
	uint64_t audit_records;	/* records written for this call */
	uint64_t net_connections; /* connections the command made */
	uint64_t net_denied;	/* and those refused */
	char net_first[160];	/* the first refused: "address:port (rule
				 * R)", "" */
	struct cw_notes notes;	/* RAN: what the agent must be told */
	uint64_t execs, files;	/* kernel events recorded: programs executed,
				 * file operations */
	uint64_t events_lost;	/* kernel events that could not be recorded */
	const char *sources[CW_TRACE_SOURCES_MAX];	/* the kernel event
				 * sources in force (cw_trace_source_names) */
	size_t nsources;
	bool background;	/* RAN: started in the background; run.pid */
	bool cancelled;		/* the caller gave up; nobody reads this */
	bool durable_later;	/* hooks->durable will be told (see there) */
	json_t *data;		/* RAN by command_status / command_kill */
};

/* What an approval asks about, for the person who decides. */
struct cw_ask {
	const char *tool;
	const char *command;	/* run_command's command, else NULL */
	const char *cwd;	/* where it would run */
	const char *rule;	/* JSON path of the rule that asks */
	const char *reason;	/* the rule's reason, may be "" */
};

enum cw_answer {
	CW_ANSWER_ACCEPT = 0,
	CW_ANSWER_DECLINE,
	CW_ANSWER_CANCEL,
};

/* How the caller takes part in a running call; NULL hooks: not at all. */
struct cw_call_hooks {
	int cancel_fd;		/* an eventfd, readable once the caller has
				 * given up on the call: its process tree is
				 * killed; -1 for never */
	int64_t progress_ms;	/* progress every progress_ms while it runs */
	void (*progress)(void *ctx, int64_t elapsed_ms);
	/* Asks the person behind the client about a require_approval call:
	 * a CW_ANSWER_*, or -errno when it cannot ask. NULL: cannot ask. */
	int (*ask)(void *ctx, const struct cw_ask *q);
	void *ctx;
	/* For a call answered at submission (refused or invalid): its
	 * decision record is written without waiting for the disk, and
	 * durable(durable_ctx, ...) says when it is durable or that it
	 * failed (cw_audit_write_async), on another thread; the result then
	 * has durable_later set, and must not be given to the caller before
	 * that. */
	cw_audit_done_fn durable;
	void *durable_ctx;
};

/*
 * A call in two steps. cw_engine_submit parses the arguments (the tool
 * table, server/tools.h) and decides the call, once, under rules (NULL:
 * the default rules). A call refused by the policy or with invalid
 * arguments launches nothing and asks no one: it is recorded and answered
 * at once, CW_CALL_ANSWERED with r filled. Any other call returns
 * CW_CALL_NEEDS_WORKER with *pending set: the rest (approval, counters,
 * launch, records) runs with cw_engine_run, on a thread that may wait,
 * under the verdict and rules of the submission. Thread-safe: calls run
 * concurrently, each on its caller's thread (a background call's command
 * on a thread of its own).
 */
struct cw_pending;

enum cw_submitted {
	CW_CALL_ANSWERED = 0,
	CW_CALL_NEEDS_WORKER,
};

enum cw_submitted cw_engine_submit(struct cw_engine *e, struct cw_rules *rules,
				   const struct cw_call *call,
				   const struct cw_call_hooks *h,
				   struct cw_call_result *r,
				   struct cw_pending **pending);
/* Runs the rest of a submitted call and frees pending; r gets the result.
 * call: the call submitted (its arguments may be a copy of them). */
void cw_engine_run(struct cw_pending *pending, const struct cw_call *call,
		   const struct cw_call_hooks *h, struct cw_call_result *r);
/* Drops a submitted call that will not run (nothing was recorded). */
void cw_engine_pending_free(struct cw_pending *pending);

/* Both steps on the caller's thread (hooks may be NULL); never fails as a
 * function: every problem is an outcome. */
void cw_engine_call_hooked(struct cw_engine *e, struct cw_rules *rules,
			   const struct cw_call *call,
			   const struct cw_call_hooks *h,
			   struct cw_call_result *r);
/* The same under the default rules, without hooks. */
void cw_engine_call(struct cw_engine *e, const struct cw_call *call,
		    struct cw_call_result *r);
void cw_engine_result_free(struct cw_call_result *r);

/* A require_approval call whose client cannot be asked gets an approval id
 * an operator decides (cw_control_answer) once this is on; off, such calls
 * are refused as having no way to ask. */
void cw_engine_operator_approvals(struct cw_engine *e, bool on);

/* The approvals operators decide (server/control.c answers them). */
struct cw_approvals *cw_engine_approvals(struct cw_engine *e);

/* For tests: the steps of a launch, in order, and a failure injected at
 * one of them in every later call (CW_STEP_NONE: none). */
enum cw_launch_step {
	CW_STEP_NONE = 0,
	CW_STEP_LANDLOCK,	/* the ruleset */
	CW_STEP_RECORD,		/* the launch record */
	CW_STEP_CGROUP,		/* the call's cgroup */
	CW_STEP_NET,		/* its network rules */
	CW_STEP_TRACE,		/* its kernel event tracing */
	CW_STEP_SPAWN,		/* the command itself */
};
void cw_engine_fail_at(struct cw_engine *e, enum cw_launch_step step);
/* Policy decisions the engine has made since open (cw_decide calls). */
uint64_t cw_engine_decisions(const struct cw_engine *e);

#endif
