// SPDX-License-Identifier: Apache-2.0
/*
 * The call state machine: submit (parse, decide once; a refused or
 * invalid call is recorded and answered here), then on a worker: approve,
 * reserve (a max_concurrent slot, the rate-limit counters), record the
 * decision, launch (launch.c) or answer a job tool, and answer. A
 * reservation is given back on one path only (give_back), so every
 * decision record followed by a reservation gets its exit record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/types.h"
#include "engine/internal.h"
#include "engine/records.h"

/* A job keeps this much of each stream when the policy sets no
 * max_output_bytes. */
#define JOB_OUTPUT_DEFAULT (1024 * 1024)

/* A call decided at submission, waiting for a worker to run the rest. */
struct cw_pending {
	struct cw_engine *e;
	struct cw_rules *ru;		/* the rules it was decided under */
	struct cw_tool_args a;
	char invocation[32];
	struct cw_verdict verdict;	/* ALLOW or APPROVAL */
};

/* One call on its worker, from approval to answer. */
struct call {
	struct cw_engine *e;
	struct cw_rules *ru;
	const struct cw_sandbox *sb;
	const struct cw_call *call;
	const struct cw_call_hooks *h;
	struct cw_tool_args *a;
	struct cw_call_result *r;
	struct cw_cgroup_call *cgc;	/* made ahead by the pool, or NULL */
	json_t *how;			/* how an approval was answered */
	bool slot;			/* holds a max_concurrent slot */
	bool reserved;			/* holds its rate-limit counters */
	bool decided;			/* its decision record is written */
	bool kept;			/* the reservation is used (or owned
					 * by a background job) */
	struct cw_unlaunched why;	/* launched nothing: why */
};

/* All but the verdict's limit table, which cw_decide fills. */
static void result_init(struct cw_call_result *r)
{
	memset(r, 0, offsetof(struct cw_call_result, verdict.limits));
	memset(&r->verdict.nlimits, 0, sizeof(*r) -
	       offsetof(struct cw_call_result, verdict.nlimits));
}

static void deny_text(struct cw_call_result *r)
{
	snprintf(r->message, sizeof(r->message), "[POLICY DENIED] %s (rule: %s)",
		 r->verdict.reason, r->verdict.rule);
}

/*
 * The one way a reservation is given back: the call launched nothing, so
 * its counters return, and its decision record, when written (why not
 * NULL), gets the exit record that says so.
 */
static void give_back(struct cw_engine *e, struct cw_call_result *r,
		      const struct cw_unlaunched *why)
{
	struct cw_error err;

	cw_rate_release(e->rates, r->invocation, NULL);
	if (why)
		cw_engine_record(e, r, CW_AUDIT_T(EXIT),
				 cw_rec_exit_unlaunched(why->error,
							why->with_cancelled,
							r->cancelled),
				 0, &err);
}

/* The decision record. answer_now: a call answered at submission, whose
 * record the hooks may ask to be told durable later. 0 or -errno with
 * err. */
static int record_decision(struct cw_engine *e, const struct cw_call *call,
			   bool invalid, json_t *how, unsigned flags,
			   const struct cw_call_hooks *h, bool answer_now,
			   struct cw_call_result *r, struct cw_error *err)
{
	json_t *rec = cw_rec_decision(call, invalid, r->message, &r->verdict,
				      how);
	int ret;

	if (!rec) {
		cw_error_set(err, "out of memory");
		return -ENOMEM;
	}
	if (!answer_now || !h || !h->durable)
		return cw_engine_record(e, r, CW_AUDIT_T(DECISION), rec, flags, err);
	/* A refused call: its answer waits for the record, not its thread. */
	ret = cw_audit_write_async(e->audit, CW_AUDIT_T(DECISION), r->invocation, rec,
				   h->durable, h->durable_ctx, err);
	json_decref(rec);
	if (!ret) {
		__atomic_add_fetch(&r->audit_records, 1, __ATOMIC_RELAXED);
		r->durable_later = true;
	}
	return ret;
}

/* ---- submission ------------------------------------------------------ */

enum cw_submitted cw_engine_submit(struct cw_engine *e, struct cw_rules *rules,
				   const struct cw_call *call,
				   const struct cw_call_hooks *h,
				   struct cw_call_result *r,
				   struct cw_pending **pending)
{
	struct cw_rules *ru = rules ? cw_rules_get(rules) : cw_engine_rules(e);
	struct cw_tool_args a;
	struct cw_pending *p;
	struct cw_error err = { 0 };
	bool invalid;
	int ret;

	*pending = NULL;
	result_init(r);
	cw_random_id("inv-", r->invocation, sizeof(r->invocation));
	invalid = cw_tool_args_parse(cw_policy_sandbox(ru->policy), call->tool,
				     call->args, &a, r->message,
				     sizeof(r->message)) < 0;
	memcpy(r->sandbox_id, a.sandbox_id, sizeof(r->sandbox_id));
	if (!invalid) {
		/* No counter view: the reservation checks the limits and
		 * records the call in one transaction. */
		__atomic_add_fetch(&e->decisions, 1, __ATOMIC_RELAXED);
		ret = cw_decide(ru->policy, call, NULL, cw_now_us(),
				&r->verdict);
		if (ret < 0) {
			r->verdict.kind = CW_VERDICT_DENY;
			snprintf(r->verdict.reason, sizeof(r->verdict.reason),
				 "internal error while deciding: %s",
				 strerror(-ret));
		}
	}
	if (!invalid && (r->verdict.kind == CW_VERDICT_ALLOW ||
			 r->verdict.kind == CW_VERDICT_APPROVAL)) {
		p = malloc(sizeof(*p));
		if (!p) {
			cw_error_set(&err, "out of memory");
			cw_call_fail(r, "could not take the call", &err);
			goto out;
		}
		p->e = e;
		p->ru = ru;
		p->a = a;	/* moved: the pending call owns it now */
		memcpy(p->invocation, r->invocation, sizeof(p->invocation));
		cw_verdict_copy(&p->verdict, &r->verdict);
		*pending = p;
		return CW_CALL_NEEDS_WORKER;
	}
	if (record_decision(e, call, invalid, NULL, 0, h, true, r, &err) < 0)
		cw_call_fail(r, "call refused because the audit log cannot be written",
			     &err);
	else if (invalid)
		r->outcome = CW_OUTCOME_INVALID;
	else {
		r->outcome = CW_OUTCOME_DENIED;
		deny_text(r);
	}
out:
	cw_tool_args_free(&a);
	cw_rules_put(ru);
	return CW_CALL_ANSWERED;
}

void cw_engine_pending_free(struct cw_pending *p)
{
	if (!p)
		return;
	cw_tool_args_free(&p->a);
	cw_rules_put(p->ru);
	free(p);
}

/* ---- approval ---------------------------------------------------------- */

/* Without a person to ask: an approval id an operator decides, and the
 * identical call retried once it is approved. */
static void operator_approval(struct cw_engine *e, const struct cw_call *call,
			      const struct cw_run_args *ra,
			      struct cw_call_result *r, json_t **how)
{
	static const char *const states[] = { "pending", "approved",
					       "rejected", "used" };
	enum cw_approval_state st = CW_APPROVAL_PENDING;
	int64_t life = cw_approvals_lifetime_s(e->approvals);
	char id[32] = "";
	int ret;

	ret = cw_approvals_check(e->approvals, call->grant, call->tool,
				 call->args, ra->command ? ra->command : call->tool,
				 cw_mono_us(), id, &st);
	if (ret == -ENOMEM) {
		r->verdict.kind = CW_VERDICT_DENY;
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "tool \"%.100s\" requires approval and the approval could not be recorded (out of memory)",
			 call->tool);
		return;
	}
	*how = json_pack("{s:s, s:s, s:s}", "via", "operator", "id", id,
			 "state", states[st]);
	if (!ret) {
		r->verdict.kind = CW_VERDICT_ALLOW;
		return;
	}
	r->verdict.kind = CW_VERDICT_DENY;
	if (st == CW_APPROVAL_REJECTED)
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "approval %s for this call was rejected by an operator",
			 id);
	else
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "approval required: approval id %s is pending; an operator approves it with `cmdwarden approve %s` (or rejects it with `cmdwarden reject %s`), then retry this identical call within %llds; the approval runs it once",
			 id, id, id, (long long)life);
}

/* The approval a require_approval verdict asks for. On return the verdict
 * is ALLOW or DENY; c->how (may stay NULL) describes the answer for the
 * decision record. */
static void approve(struct call *c)
{
	const struct cw_run_args *ra = &c->a->run;
	const struct cw_call_hooks *h = c->h;
	struct cw_call_result *r = c->r;
	struct cw_ask q = {
		.tool = c->call->tool,
		.command = ra->command,
		.cwd = ra->command ? (ra->has_cwd ? ra->cwd : c->sb->cwd) : NULL,
		.rule = r->verdict.rule,
		.reason = r->verdict.reason,
	};
	int ans = h && h->ask ? h->ask(h->ctx, &q) : -ENOTSUP;

	if (ans < 0 && c->e->operator_approvals) {
		operator_approval(c->e, c->call, ra, r, &c->how);
		return;
	}
	if (ans >= 0) {
		static const char *const names[] = { "accept", "decline",
						     "cancel" };

		c->how = json_pack("{s:s, s:s}", "via", "elicitation",
				   "answer", names[ans]);
		if (ans == CW_ANSWER_ACCEPT) {
			r->verdict.kind = CW_VERDICT_ALLOW;
			return;
		}
		r->verdict.kind = CW_VERDICT_DENY;
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "approval for tool \"%.100s\" was %s by the user",
			 c->call->tool,
			 ans == CW_ANSWER_DECLINE ? "declined" : "cancelled");
		return;
	}
	/* No way to ask a human: refuse, saying so. */
	r->verdict.kind = CW_VERDICT_DENY;
	snprintf(r->verdict.reason, sizeof(r->verdict.reason),
		 "tool \"%.100s\" requires approval and this server has no way to ask for it",
		 c->call->tool);
}

/* ---- reservation ------------------------------------------------------- */

/* An allowed call takes what it needs to go on: a max_concurrent slot
 * (run_command) and its rate-limit counters, reserved at now. What it
 * cannot take turns the verdict into a refusal. */
static void reserve(struct call *c, int64_t now)
{
	struct cw_engine *e = c->e;
	struct cw_call_result *r = c->r;
	struct cw_error err = { 0 };
	int64_t running = 0, retry = 0;
	size_t which = 0;
	int ret;

	if (r->verdict.kind != CW_VERDICT_ALLOW)
		return;
	if (c->a->kind == CW_TOOL_RUN) {
		c->slot = cw_engine_slot_take(e, &running);
		if (!c->slot) {
			r->verdict.kind = CW_VERDICT_DENY;
			snprintf(r->verdict.rule, sizeof(r->verdict.rule),
				 "max_concurrent");
			snprintf(r->verdict.reason, sizeof(r->verdict.reason),
				 "too many commands running at once: %lld running, max_concurrent is %lld; retry when one has ended",
				 (long long)running, (long long)e->max_running);
			return;
		}
		/* A cgroup made ahead of time names the invocation. */
		c->cgc = cw_cgroup_pool_take(e->pool, c->sb);
		if (c->cgc)
			snprintf(r->invocation, sizeof(r->invocation), "%s",
				 cw_cgroup_call_name(c->cgc));
	}
	/* A foreground command's count is flushed while it starts (launch),
	 * still before the answer. */
	ret = cw_rate_reserve_flags(e->rates, r->verdict.limits,
				    r->verdict.nlimits, now, r->invocation,
				    c->a->kind == CW_TOOL_RUN &&
						    !c->a->run.background ?
					    CW_RATE_DEFER_SYNC :
					    0,
				    &retry, &which, &err);
	if (ret == -EAGAIN) {
		cw_verdict_rate_limited(&r->verdict,
					r->verdict.limits[which].limit, retry);
	} else if (ret < 0) {
		/* Fail closed: no count, no call. */
		r->verdict.kind = CW_VERDICT_DENY;
		snprintf(r->verdict.rule, sizeof(r->verdict.rule), "limits");
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "the rate-limit store failed: %s", err.text);
	} else {
		c->reserved = true;
	}
	if (c->slot && !c->reserved) {
		cw_engine_slot_give(e);
		c->slot = false;
	}
}

/* ---- background calls -------------------------------------------------- */

/* A background command: its launch and everything after, on its job's
 * thread. */
struct bg_call {
	struct cw_engine *e;
	struct cw_rules *ru;		/* a reference, for the job's life */
	struct cw_cgroup_call *cgc;	/* made ahead, or NULL */
	struct cw_run_args ra;
	struct cw_call_result r;
	struct cw_job *job;
};

static void bg_launched(void *ctx, pid_t pid)
{
	cw_job_launched(((struct bg_call *)ctx)->job, pid);
}

static void bg_output(void *ctx, int stream, const char *data, size_t len)
{
	cw_job_output(((struct bg_call *)ctx)->job, stream, data, len);
}

static void bg_main(struct cw_job *job, void *arg)
{
	struct bg_call *bg = arg;
	struct cw_runner rn = {
		.cancel_fd = cw_job_cancel_fd(job),
		.output = bg_output,
		.launched = bg_launched,
		.ctx = bg,
	};
	struct cw_unlaunched why;

	bg->job = job;
	/* The launch record is synced: the caller is answered at launch,
	 * long before the exit record's sync. */
	if (cw_launch(bg->e, bg->ru, CW_TOOL_RUN_COMMAND, &bg->ra, &rn,
		      bg->cgc, true, &bg->r, &why) < 0)
		give_back(bg->e, &bg->r, &why);
	/* Its slot is free before anyone can see it ended. */
	cw_engine_slot_give(bg->e);
	cw_job_finish(job, bg->r.outcome == CW_OUTCOME_RAN ? &bg->r.run : NULL,
		      &bg->r.notes,
		      bg->r.outcome == CW_OUTCOME_RAN ? NULL : bg->r.message);
	cw_engine_result_free(&bg->r);
	cw_run_args_free(&bg->ra);
	cw_rules_put(bg->ru);
	free(bg);
}

/* Starts the call's command in the background; r gets its pid once it
 * runs. 0 once the job owns the call (its arguments, cgroup, slot and
 * reservation); -errno, owning nothing, when it could not start. */
static int run_background(struct call *c)
{
	struct cw_engine *e = c->e;
	struct cw_call_result *r = c->r;
	struct bg_call *bg;
	struct cw_job *job;
	pid_t pid = 0;
	char msg[512];
	int ret;

	bg = calloc(1, sizeof(*bg));
	if (!bg) {
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return -ENOMEM;
	}
	bg->e = e;
	bg->ru = cw_rules_get(c->ru);
	bg->ra = c->a->run;
	bg->cgc = c->cgc;
	snprintf(bg->r.invocation, sizeof(bg->r.invocation), "%s",
		 r->invocation);
	ret = cw_jobs_start(e->jobs, r->invocation, c->call->grant,
			    c->sb->max_output_bytes > 0 ?
				    (size_t)c->sb->max_output_bytes :
				    JOB_OUTPUT_DEFAULT,
			    bg_main, bg, &job);
	if (ret < 0) {
		cw_rules_put(bg->ru);
		free(bg);
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message),
			 "could not start the background call: %s",
			 strerror(-ret));
		return ret;
	}
	/* Moved: the job owns the arguments, the cgroup and the slot. */
	memset(&c->a->run, 0, sizeof(c->a->run));
	c->cgc = NULL;
	c->slot = false;
	if (cw_job_wait_launched(job, &pid, msg, sizeof(msg)) < 0) {
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message), "%s", msg);
		return 0;
	}
	r->outcome = CW_OUTCOME_RAN;
	r->background = true;
	r->run.pid = pid;
	return 0;
}

/* ---- the rest of a call ------------------------------------------------ */

/* command_status / command_kill, already allowed and audited. */
static void job_tool(struct call *c)
{
	struct cw_call_result *r = c->r;
	const char *inv = c->a->invocation;
	char msg[512];

	r->data = c->a->kind == CW_TOOL_KILL ?
			  cw_jobs_kill(c->e->jobs, inv, c->call->grant,
				       CW_KILL_WAIT_MS, msg, sizeof(msg)) :
			  cw_jobs_status(c->e->jobs, inv, c->call->grant, msg,
					 sizeof(msg));
	if (!r->data) {
		r->outcome = CW_OUTCOME_INVALID;
		snprintf(r->message, sizeof(r->message), "%s", msg);
		return;
	}
	r->outcome = CW_OUTCOME_RAN;
}

static void progress_tick(void *ctx, int64_t elapsed_us)
{
	const struct cw_call_hooks *h = ctx;

	h->progress(h->ctx, elapsed_us / 1000);
}

/* A foreground run_command on this thread. 0 once launched. */
static int run_foreground(struct call *c)
{
	const struct cw_call_hooks *h = c->h;
	struct cw_runner rn = { .cancel_fd = -1 };
	struct cw_cgroup_call *cgc = c->cgc;

	if (h) {
		rn.cancel_fd = h->cancel_fd;
		if (h->progress && h->progress_ms > 0) {
			rn.tick_ms = h->progress_ms;
			rn.tick = progress_tick;
			rn.ctx = (void *)h;
		}
	}
	c->cgc = NULL;	/* the launch's */
	return cw_launch(c->e, c->ru, c->call->tool, &c->a->run,
			 h ? &rn : NULL, cgc, false, c->r, &c->why);
}

/* The allowed call, recorded, does what its tool does. */
static void dispatch(struct call *c)
{
	struct cw_call_result *r = c->r;

	switch (c->a->kind) {
	case CW_TOOL_STATUS:
	case CW_TOOL_KILL:
		job_tool(c);
		c->kept = true;
		return;
	case CW_TOOL_OTHER:
		r->outcome = CW_OUTCOME_UNKNOWN_TOOL;
		snprintf(r->message, sizeof(r->message),
			 "unknown tool \"%.200s\"", c->call->tool);
		break;
	case CW_TOOL_RUN:
		if (c->a->run.background ? run_background(c) == 0 :
					   run_foreground(c) == 0) {
			c->kept = true;
			return;
		}
		break;
	}
	/* Nothing launched; a launch step said why, else the result does. */
	if (!c->why.error[0])
		snprintf(c->why.error, sizeof(c->why.error), "%s", r->message);
}

void cw_engine_run(struct cw_pending *p, const struct cw_call *call,
		   const struct cw_call_hooks *h, struct cw_call_result *r)
{
	struct call c = {
		.e = p->e, .ru = p->ru, .sb = cw_policy_sandbox(p->ru->policy),
		.call = call, .h = h, .a = &p->a, .r = r,
	};
	struct cw_error err = { 0 };
	int64_t now = cw_now_us();

	result_init(r);
	memcpy(r->invocation, p->invocation, sizeof(r->invocation));
	memcpy(r->sandbox_id, p->a.sandbox_id, sizeof(r->sandbox_id));
	cw_verdict_copy(&r->verdict, &p->verdict);
	if (r->verdict.kind == CW_VERDICT_APPROVAL) {
		approve(&c);
		now = cw_now_us();
	}
	reserve(&c, now);
	/* An allowed foreground run_command has launch and exit records to
	 * come: the exit record's sync makes all three durable before the
	 * answer. */
	if (record_decision(c.e, call, false, c.how,
			    c.reserved && c.a->kind == CW_TOOL_RUN ?
				    CW_AUDIT_DEFER_SYNC :
				    0,
			    h, false, r, &err) < 0) {
		cw_call_fail(r, "call refused because the audit log cannot be written",
			     &err);
		goto out;
	}
	c.decided = true;
	if (r->verdict.kind != CW_VERDICT_ALLOW) {
		r->outcome = CW_OUTCOME_DENIED;
		deny_text(r);
		goto out;
	}
	dispatch(&c);
out:
	/* The one release: a reservation the call did not use goes back. */
	if (c.reserved && !c.kept)
		give_back(c.e, r, c.decided ? &c.why : NULL);
	cw_cgroup_pool_retire(c.e->pool, c.cgc, false);
	if (c.slot)
		cw_engine_slot_give(c.e);
	json_decref(c.how);
	cw_engine_pending_free(p);
}

void cw_engine_call_hooked(struct cw_engine *e, struct cw_rules *rules,
			   const struct cw_call *call,
			   const struct cw_call_hooks *h,
			   struct cw_call_result *r)
{
	struct cw_pending *p;

	if (cw_engine_submit(e, rules, call, h, r, &p) == CW_CALL_NEEDS_WORKER)
		cw_engine_run(p, call, h, r);
}

void cw_engine_call(struct cw_engine *e, const struct cw_call *call,
		    struct cw_call_result *r)
{
	cw_engine_call_hooked(e, NULL, call, NULL, r);
}
