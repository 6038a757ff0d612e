// SPDX-License-Identifier: Apache-2.0
/*
 * Concurrent calls. cw_engine_call runs on many threads at once (one per
 * MCP request, plus one per background command). What they share:
 *  - rules (policy, seccomp program, Landlock ruleset): reference-counted,
 *    read-only but for the Landlock ruleset, swapped under the rules'
 *    ll_lock when stale and kept alive by its own count while a launch
 *    uses it; e->rules_lock guards the swap of the default rules (reload);
 *  - audit writer, rate-limit store, bpfnet maps and ring buffer, kernel
 *    event tracing, the cgroup pool, the launcher's account cache: each
 *    has its own lock inside its module;
 *  - cgroup root: read-only after open; each call works in its own
 *    directory;
 *  - e->lock guards the rest: the sealed list, the running-command count
 *    and limit for max_concurrent, and the list of
 *    calls whose network events are being collected (a drain hands each
 *    event to the call it belongs to, whichever thread drains);
 *  - background jobs: agent/engine/jobs.c, under its own lock.
 * Lock order: bpfnet's drain lock, then e->lock, then the audit lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/approvals.h"
#include "audit/audit.h"
#include "engine/engine.h"
#include "engine/jobs.h"
#include "engine/layers.h"
#include "engine/records.h"
#include "server/tools.h"
#include "kernel/bpfnet.h"
#include "kernel/cgroup.h"
#include "kernel/cgroup_pool.h"
#include "lib/json.h"
#include "kernel/landlock.h"
#include "version.h"
#include "rate/ratelimit.h"
#include "kernel/probe.h"
#include "kernel/seccomp.h"
#include "kernel/trace.h"

#define SEALED_MAX 1024
/* A job keeps this much of each stream when the policy sets no
 * max_output_bytes. */
#define JOB_OUTPUT_DEFAULT (1024 * 1024)
#define SEALED_TTL_US (300LL * 1000000)	/* beyond TCP's FIN timeouts */

/* A Landlock ruleset in use by launches; freed by its last user. */
struct ll_ref {
	struct cw_landlock *ll;
	int refs;
};

struct net_ctx;

/* A policy and what it compiles to. Shared by the calls that use it and
 * freed with the last of them, so a reload can replace it meanwhile. */
struct cw_rules {
	int refs;			/* atomic */
	struct cw_policy *policy;
	struct cw_seccomp_prog *seccomp;
	pthread_mutex_t ll_lock;	/* the swap of landlock */
	struct ll_ref *landlock;	/* NULL when the layer is off */
};

struct cw_engine {
	pthread_mutex_t rules_lock;	/* guards the swap of rules */
	struct cw_rules *rules;		/* the default policy's */
	struct cw_cgroup_root *cg;	/* NULL when the layer is off */
	struct cw_cgroup_pool *pool;	/* call cgroups made and removed
					 * off the calls' path; may be NULL */
	bool cg_memory, cg_pids;	/* it enforces memory / pids limits */
	struct cw_bpfnet *net;		/* NULL when the layer is off */
	struct cw_trace *trace;		/* NULL when no kernel event source */
	char trace_error[512];		/* why tracepoint BPF was not used */
	struct cw_rate_store *rates;
	struct cw_audit *audit;
	struct cw_jobs *jobs;
	struct cw_approvals *approvals;	/* internally locked */
	bool operator_approvals;	/* set before calls start */
	int64_t max_running;
	pthread_mutex_t lock;		/* everything below */
	int64_t running;		/* commands running now */
	struct net_ctx *collecting;	/* calls whose net events we want */
	/* Ended calls whose network entries still drop what their sockets
	 * send, removed once SEALED_TTL_US has passed. */
	struct { uint64_t cgid; int64_t since; char id[32]; } sealed[SEALED_MAX];
	size_t nsealed;
};

static void sealed_expire(struct cw_engine *e, bool force);

/*
 * Kernel events of calls: tracepoint BPF where this kernel has it (which
 * also enforces sandbox.files), else fanotify, else none; the records say
 * which. A tracing failure stops the agent only when the policy requires
 * bpf_trace.
 */
static int open_trace(struct cw_engine *e, const struct cw_engine_opts *o,
		      struct cw_diag *diag)
{
	const struct cw_probe *p = cw_engine_probe();
	struct cw_trace_opts to = { .ringbuf_kib = o->trace_ringbuf_kib,
				    .drop_on_overflow = o->trace_drop,
				    .cgroup2_mount = p->cgroup2_mount };
	struct cw_error err = { 0 };

	if (cw_layer_on(CW_LAYER_BPF_TRACE)) {
		to.bpf = true;
		e->trace = cw_trace_open(&to, &err);
		if (e->trace)
			return 0;
		if (cw_policy_sandbox(e->rules->policy)->require_layers &
		    CW_LAYER_BPF_TRACE) {
			cw_diag_add(diag, "", 0, 0, "", "eBPF tracing programs: %s",
				    err.text);
			return -EINVAL;
		}
		snprintf(e->trace_error, sizeof(e->trace_error), "%s",
			 err.text);
		to.bpf = false;
	}
	if (!p->item[CW_FEAT_FANOTIFY].ok)
		return 0;
	to.fanotify = true;
	e->trace = cw_trace_open(&to, &err);
	if (!e->trace)
		snprintf(e->trace_error + strlen(e->trace_error),
			 sizeof(e->trace_error) - strlen(e->trace_error),
			 "%sfanotify: %s", e->trace_error[0] ? "; " : "",
			 err.text);
	return 0;
}

static void ll_put(struct ll_ref *r)
{
	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	cw_landlock_free(r->ll);
	free(r);
}

/* Commands allowed at once under policy p: its max_concurrent, else the
 * number of CPUs times four. */
static int64_t max_concurrent(const struct cw_policy *p)
{
	long n;

	if (p->max_concurrent > 0)
		return p->max_concurrent;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return (n > 0 ? n : 1) * 4;
}

struct cw_engine *cw_engine_open(const struct cw_engine_opts *o,
				 struct cw_diag *diag)
{
	struct cw_engine *e;
	struct cw_error err;
	const char *state = o->state_dir ? o->state_dir : CW_DEFAULT_STATE_DIR;
	const char *audit = o->audit_path ? o->audit_path : CW_DEFAULT_AUDIT;
	json_t *rec;

	e = calloc(1, sizeof(*e));
	if (!e) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		return NULL;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->rules_lock, NULL);
	e->jobs = cw_jobs_new();
	e->approvals = cw_approvals_new(o->approval_lifetime_s);
	if (!e->jobs || !e->approvals) {
		cw_diag_add(diag, "", 0, 0, "", "out of memory");
		goto fail;
	}
	e->rules = cw_rules_load(o->policy_path, diag);
	if (!e->rules)
		goto fail;
	e->max_running = max_concurrent(e->rules->policy);
	if (cw_layer_on(CW_LAYER_CGROUP)) {
		json_t *d;

		e->cg = cw_cgroup_open(&err);
		if (!e->cg) {
			cw_diag_add(diag, "", 0, 0, "", "cgroup: %s", err.text);
			goto fail;
		}
		d = cw_cgroup_describe(e->cg);
		e->cg_memory = json_is_string(json_object_get(d, "memory"));
		e->cg_pids = json_is_string(json_object_get(d, "pids"));
		json_decref(d);
		/* Without the pool each call makes its own: slower, same
		 * enforcement. */
		e->pool = cw_cgroup_pool_open(e->cg,
					      cw_policy_sandbox(e->rules->policy));
	}
	/* Loaded and attached once; calls only update maps. */
	if (cw_layer_on(CW_LAYER_BPF_NET) && e->cg &&
	    cw_cgroup_calls_fd(e->cg) >= 0) {
		struct cw_bpfnet_opts no = {
			.cgroup_fd = cw_cgroup_calls_fd(e->cg),
		};

		e->net = cw_bpfnet_open(&no, &err);
		if (!e->net) {
			cw_diag_add(diag, "", 0, 0, "", "eBPF network programs: %s",
				    err.text);
			goto fail;
		}
	}
	if (e->cg) {
		if (open_trace(e, o, diag) < 0)
			goto fail;
	}
	e->rates = cw_rate_open_sqlite(state, &err);
	if (!e->rates) {
		cw_diag_add(diag, "", 0, 0, "", "rate-limit store: %s",
			    err.text);
		goto fail;
	}
	e->audit = cw_audit_open(audit, &err);
	if (!e->audit) {
		cw_diag_add(diag, "", 0, 0, "", "audit log: %s", err.text);
		goto fail;
	}
	cw_audit_set_max_bytes(e->audit,
			       !o->audit_max_bytes ? CW_DEFAULT_AUDIT_MAX_BYTES :
			       o->audit_max_bytes == UINT64_MAX ? 0 :
							       o->audit_max_bytes);
	/* What protects the calls of this run, once, for the audit reader. */
	rec = cw_rec_agent_start(o->policy_path, e->cg, e->trace,
				 e->trace_error);
	if (!rec || cw_audit_write(e->audit, "agent", NULL, rec, &err) < 0) {
		json_decref(rec);
		cw_diag_add(diag, "", 0, 0, "", "audit log: %s",
			    rec ? err.text : "out of memory");
		goto fail;
	}
	json_decref(rec);
	return e;
fail:
	cw_engine_close(e);
	return NULL;
}

void cw_engine_close(struct cw_engine *e)
{
	if (!e)
		return;
	/* Background commands end with the agent: their threads write
	 * their exit records first. */
	cw_jobs_free(e->jobs);
	cw_trace_close(e->trace);
	cw_approvals_free(e->approvals);
	cw_audit_close(e->audit);
	cw_rate_close(e->rates);
	cw_cgroup_pool_close(e->pool);
	if (e->net)
		sealed_expire(e, true);
	cw_bpfnet_close(e->net);
	cw_cgroup_close(e->cg);
	cw_rules_put(e->rules);
	pthread_mutex_destroy(&e->rules_lock);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

int64_t cw_engine_max_concurrent(const struct cw_engine *e)
{
	return e->max_running;
}

const struct cw_policy *cw_engine_policy(const struct cw_engine *e)
{
	return e->rules->policy;
}

struct cw_rules *cw_rules_load(const char *path, struct cw_diag *diag)
{
	struct cw_rules *r;
	struct cw_error err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		cw_diag_add(diag, path ? path : "<embedded>", 0, 0, "",
			    "out of memory");
		return NULL;
	}
	r->refs = 1;
	pthread_mutex_init(&r->ll_lock, NULL);
	r->policy = cw_engine_load_policy(path, diag);
	if (!r->policy)
		goto fail;
	r->seccomp = cw_seccomp_build(cw_policy_sandbox(r->policy), &err);
	if (!r->seccomp) {
		cw_diag_add(diag, r->policy->source, 0, 0, "", "seccomp: %s",
			    err.text);
		goto fail;
	}
	if (cw_layer_on(CW_LAYER_LANDLOCK)) {
		r->landlock = calloc(1, sizeof(*r->landlock));
		if (!r->landlock) {
			cw_diag_add(diag, r->policy->source, 0, 0, "",
				    "out of memory");
			goto fail;
		}
		r->landlock->refs = 1;
		r->landlock->ll = cw_landlock_build(cw_policy_sandbox(r->policy),
						    cw_landlock_abi(), &err);
		if (!r->landlock->ll) {
			cw_diag_add(diag, r->policy->source, 0, 0, err.path,
				    "landlock: %s", err.text);
			goto fail;
		}
	}
	return r;
fail:
	cw_rules_put(r);
	return NULL;
}

struct cw_rules *cw_rules_get(struct cw_rules *r)
{
	if (r)
		__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

void cw_rules_put(struct cw_rules *r)
{
	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	ll_put(r->landlock);
	cw_seccomp_free(r->seccomp);
	cw_policy_free(r->policy);
	pthread_mutex_destroy(&r->ll_lock);
	free(r);
}

const struct cw_policy *cw_rules_policy(const struct cw_rules *r)
{
	return r->policy;
}

int cw_engine_audit(struct cw_engine *e, const char *type, json_t *fields,
		    unsigned flags, struct cw_error *err)
{
	return cw_audit_write_flags(e->audit, type, NULL, fields, flags, err);
}

struct cw_rules *cw_engine_rules(struct cw_engine *e)
{
	struct cw_rules *r;

	pthread_mutex_lock(&e->rules_lock);
	r = cw_rules_get(e->rules);
	pthread_mutex_unlock(&e->rules_lock);
	return r;
}

void cw_engine_set_rules(struct cw_engine *e, struct cw_rules *r)
{
	struct cw_rules *old;

	pthread_mutex_lock(&e->rules_lock);
	old = e->rules;
	e->rules = cw_rules_get(r);
	pthread_mutex_unlock(&e->rules_lock);
	/* max_concurrent is policy-wide: the default policy's. */
	pthread_mutex_lock(&e->lock);
	e->max_running = max_concurrent(r->policy);
	pthread_mutex_unlock(&e->lock);
	cw_rules_put(old);
}

static int audit(struct cw_engine *e, struct cw_call_result *r,
		 const char *type, json_t *fields, unsigned flags,
		 struct cw_error *err)
{
	int ret = cw_audit_write_flags(e->audit, type, r->invocation, fields,
				       flags, err);

	json_decref(fields);
	/* Network events of a call may be written by another call's
	 * thread (whichever drains the ring buffer). */
	if (!ret)
		__atomic_add_fetch(&r->audit_records, 1, __ATOMIC_RELAXED);
	return ret;
}

/* How a launch is watched: by its caller (foreground) or its job. */
struct runner {
	int cancel_fd;
	int64_t tick_ms;
	void (*tick)(void *ctx, int64_t elapsed_us);
	void (*output)(void *ctx, int stream, const char *data, size_t len);
	void (*launched)(void *ctx, pid_t pid);
	void *ctx;
};

/* What the launcher actually used, for the exit record. */
struct launched {
	uid_t uid;
	gid_t gid;
	char cwd[PATH_MAX];
	bool set;
	const struct runner *run;
	/* The reservation to make durable while the command starts. */
	struct cw_rate_store *rates;
	int rate_ret;
	struct cw_error rate_err;
};

static void on_launch(void *ctx, pid_t pid, uid_t uid, gid_t gid,
		      const char *cwd)
{
	struct launched *l = ctx;

	l->uid = uid;
	l->gid = gid;
	snprintf(l->cwd, sizeof(l->cwd), "%s", cwd ? cwd : "");
	l->set = true;
	/* The flush runs while the command starts on another CPU; a call
	 * whose count cannot be made durable does not go on. */
	if (l->rates) {
		l->rate_ret = cw_rate_sync(l->rates, &l->rate_err);
		if (l->rate_ret < 0)
			kill(-pid, SIGKILL);
	}
	if (l->run && l->run->launched)
		l->run->launched(l->run->ctx, pid);
}

static void deny_text(struct cw_call_result *r)
{
	snprintf(r->message, sizeof(r->message), "[POLICY DENIED] %s (rule: %s)",
		 r->verdict.reason, r->verdict.rule);
}

static void fail(struct cw_call_result *r, const char *what,
		 const struct cw_error *err)
{
	r->outcome = CW_OUTCOME_FAILED;
	snprintf(r->message, sizeof(r->message), "%s: %s", what, err->text);
}

/* Removes sealed calls older than the TTL (all of them when force).
 * Under e->lock, or alone at close. */
static void sealed_expire(struct cw_engine *e, bool force)
{
	int64_t now = cw_mono_us();
	size_t i, k = 0;

	for (i = 0; i < e->nsealed; i++) {
		if (force || now - e->sealed[i].since >= SEALED_TTL_US) {
			cw_bpfnet_call_remove(e->net, e->sealed[i].cgid, NULL);
			if (e->cg)
				cw_cgroup_remove_call(e->cg, e->sealed[i].id);
		} else {
			e->sealed[k++] = e->sealed[i];
		}
	}
	e->nsealed = k;
}

static void sealed_add(struct cw_engine *e, uint64_t cgid, const char *id)
{
	pthread_mutex_lock(&e->lock);
	sealed_expire(e, false);
	if (e->nsealed == SEALED_MAX) {
		/* Full: the oldest goes first. */
		cw_bpfnet_call_remove(e->net, e->sealed[0].cgid, NULL);
		if (e->cg)
			cw_cgroup_remove_call(e->cg, e->sealed[0].id);
		memmove(&e->sealed[0], &e->sealed[1],
			(SEALED_MAX - 1) * sizeof(e->sealed[0]));
		e->nsealed--;
	}
	e->sealed[e->nsealed].cgid = cgid;
	snprintf(e->sealed[e->nsealed].id, sizeof(e->sealed[0].id), "%s", id);
	e->sealed[e->nsealed].since = cw_mono_us();
	e->nsealed++;
	pthread_mutex_unlock(&e->lock);
}

/* A call collecting its network events, in e->collecting. */
struct net_ctx {
	struct cw_call_result *r;
	uint64_t cgid;
	struct net_ctx *next;
};

static void collecting_add(struct cw_engine *e, struct net_ctx *nc)
{
	pthread_mutex_lock(&e->lock);
	nc->next = e->collecting;
	e->collecting = nc;
	pthread_mutex_unlock(&e->lock);
}

static void collecting_remove(struct cw_engine *e, struct net_ctx *nc)
{
	struct net_ctx **pp;

	pthread_mutex_lock(&e->lock);
	for (pp = &e->collecting; *pp; pp = &(*pp)->next)
		if (*pp == nc) {
			*pp = nc->next;
			break;
		}
	pthread_mutex_unlock(&e->lock);
}

/* One `net` record per event, for the call it belongs to, whichever call
 * drains; written before that call's exit record, whose sync makes them
 * durable. Events of calls that have ended are dropped. */
static void net_event(void *ctx, const struct cw_bpfnet_event *ev)
{
	struct cw_engine *e = ctx;
	struct net_ctx *nc;
	struct cw_error err;

	pthread_mutex_lock(&e->lock);
	for (nc = e->collecting; nc; nc = nc->next)
		if (nc->cgid == ev->cgroup_id)
			break;
	if (nc)
		audit(e, nc->r, "net", cw_rec_net(ev), CW_AUDIT_DEFER_SYNC, &err);
	pthread_mutex_unlock(&e->lock);
}

/* Denied syscalls recorded in full per call; the rest are counted in the
 * exit record (seccomp.suppressed), so a flood costs neither the disk nor
 * the call's time, and none goes unaccounted. */
#define SECCOMP_RECORDS_MAX 64

struct seccomp_ctx {
	struct cw_engine *e;
	struct cw_call_result *r;
	uint64_t recorded;
};

/* One `seccomp` record per described denial; made durable with the exit
 * record, like the net records. */
static void seccomp_event(void *ctx, const struct cw_seccomp_denial *d)
{
	struct seccomp_ctx *sc = ctx;
	struct cw_error err;

	if (!d->described)
		return;
	if (audit(sc->e, sc->r, "seccomp", cw_rec_seccomp(d),
		  CW_AUDIT_DEFER_SYNC, &err) == 0)
		sc->recorded++;
}

/* A `limit` record for each limit the call ran into. */
static void audit_limits(struct cw_engine *e, struct cw_call_result *r,
			 const struct cw_sandbox *sb, int64_t timeout_ms,
			 const struct cw_cgroup_stats *c,
			 const struct cw_bpfnet_stats *n)
{
	struct cw_error err;

	if (c->pids_limited)
		audit(e, r, "limit",
		      cw_rec_limit("pids", c->pids_peak, c->pids_max),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (c->memory_limited || c->oom_kills)
		audit(e, r, "limit", cw_rec_limit_memory(c),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (n->connections_exhausted)
		audit(e, r, "limit",
		      cw_rec_limit("max_connections", n->connections,
				   sb->network.max_connections),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (n->egress_exhausted)
		audit(e, r, "limit",
		      cw_rec_limit("max_egress_bytes", n->egress_bytes,
				   sb->network.max_egress_bytes),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (r->run.timed_out)
		audit(e, r, "limit",
		      cw_rec_limit("timeout", r->run.duration_us / 1000,
				   timeout_ms),
		      CW_AUDIT_DEFER_SYNC, &err);
}

#define TRACE_BATCH 256

struct trace_ctx {
	struct cw_engine *e;
	const char *invocation;
	uint64_t written;	/* records written */
	uint64_t failed;	/* records the log refused */
	struct cw_error err;	/* the first refusal */
	struct cw_audit_rec recs[TRACE_BATCH];	/* not written yet */
	size_t n;
};

static void trace_flush(struct trace_ctx *tc)
{
	struct cw_error err;
	size_t i;

	if (!tc->n)
		return;
	if (!cw_audit_write_batch(tc->e->audit, tc->recs, tc->n,
				  CW_AUDIT_DEFER_SYNC, &err)) {
		tc->written += tc->n;
	} else {
		if (!tc->failed)
			tc->err = err;
		tc->failed += tc->n;
	}
	for (i = 0; i < tc->n; i++)
		json_decref(tc->recs[i].fields);
	tc->n = 0;
}

/* One exec, file or process record per kernel event of the call, written
 * in batches (a burst costs one write per batch, not per record); called
 * on the trace's reading thread, ev NULL when a round of reading ends.
 * The exit record's sync makes them durable. */
static void trace_event(void *ctx, const struct cw_trace_event *ev)
{
	struct trace_ctx *tc = ctx;
	json_t *rec;

	if (!ev) {
		trace_flush(tc);
		return;
	}
	rec = cw_trace_event_json(ev);
	if (!rec) {
		if (!tc->failed++)
			cw_error_set(&tc->err, "out of memory");
		return;
	}
	tc->recs[tc->n].type = cw_trace_event_type(ev);
	tc->recs[tc->n].invocation = tc->invocation;
	tc->recs[tc->n].fields = rec;
	if (++tc->n == TRACE_BATCH)
		trace_flush(tc);
}

/* A `limit` record for each sandbox.files limit the call crossed. */
static void audit_file_limits(struct cw_engine *e, struct cw_call_result *r,
			      const struct cw_sandbox *sb,
			      const struct cw_trace_stats *t)
{
	struct cw_error err;

	if (t->files.hit)
		audit(e, r, "limit",
		      cw_rec_limit_files("max_files_written", t->files_written,
					 sb->files.max_files_written,
					 &t->files),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (t->bytes.hit)
		audit(e, r, "limit",
		      cw_rec_limit_files("max_write_bytes", t->write_bytes,
					 sb->files.max_write_bytes, &t->bytes),
		      CW_AUDIT_DEFER_SYNC, &err);
	if (t->deny.hit)
		audit(e, r, "limit", cw_rec_limit_deny_open(t),
		      CW_AUDIT_DEFER_SYNC, &err);
}

/* A slot among max_concurrent running commands; false when all are
 * taken. */
static bool slot_take(struct cw_engine *e, int64_t *running)
{
	bool ok;

	pthread_mutex_lock(&e->lock);
	*running = e->running;
	ok = e->running < e->max_running;
	if (ok)
		e->running++;
	pthread_mutex_unlock(&e->lock);
	return ok;
}

static void slot_give(struct cw_engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->running--;
	pthread_mutex_unlock(&e->lock);
}

/* The current Landlock ruleset, rebuilt first when a file it names was
 * replaced (rules name files as they were). NULL with *ok false when the
 * rebuild failed; NULL with *ok true when the layer is off. */
static struct ll_ref *ll_get(struct cw_rules *ru, const struct cw_sandbox *sb,
			     bool *ok, struct cw_error *err)
{
	struct ll_ref *cur, *fresh = NULL, *old = NULL;

	*ok = true;
	pthread_mutex_lock(&ru->ll_lock);
	cur = ru->landlock;
	if (cur)
		__atomic_add_fetch(&cur->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ru->ll_lock);
	if (!cur || !cw_landlock_stale(cur->ll))
		return cur;
	/* Built outside the lock: it reads the file system. */
	fresh = calloc(1, sizeof(*fresh));
	if (fresh)
		fresh->ll = cw_landlock_build(sb, cw_landlock_abi(), err);
	else
		cw_error_set(err, "out of memory");
	if (!fresh || !fresh->ll) {
		free(fresh);
		ll_put(cur);
		*ok = false;
		return NULL;
	}
	fresh->refs = 2;	/* the rules' and ours */
	pthread_mutex_lock(&ru->ll_lock);
	old = ru->landlock;
	ru->landlock = fresh;
	pthread_mutex_unlock(&ru->ll_lock);
	ll_put(old);		/* the rules' reference to it */
	ll_put(cur);		/* ours */
	return fresh;
}

/* True once the caller has given up (its cancel eventfd is readable). */
static bool cancelled(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) == 1;
}

/*
 * Launch of an allowed, reserved run_command whose decision record is
 * written: launch record, cgroup, network rules, spawn, teardown, limit
 * and exit records. On failure before launch the reservation is given
 * back. On the caller's thread, or on a background job's.
 */
static void run_launch(struct cw_engine *e, struct cw_rules *ru,
		       const char *tool, const struct cw_run_args *ra,
		       const struct runner *rn, struct cw_cgroup_call *cgc,
		       bool sync_launch, struct cw_call_result *r)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(ru->policy);
	struct cw_spawn_opts so = { 0 };
	struct cw_spawn_watch watch = { .cancel_fd = -1 };
	struct launched launched = { .run = rn,
				     .rates = sync_launch ? NULL : e->rates };
	struct seccomp_ctx sc = { e, r, 0 };
	struct cw_cgroup_stats cst = { 0 };
	struct cw_bpfnet_stats nst = { 0 };
	struct cw_trace_call *tcall = NULL;
	struct trace_ctx tctx = { 0 };
	struct cw_trace_stats tst = { 0 };
	struct net_ctx nc = { .r = r };
	struct cw_error err = { 0 }, aerr;
	struct ll_ref *ll;
	bool net_added = false, ll_ok;
	uint64_t cgid = 0;
	int cg_ret = 0;
	char cg_err[512] = "";
	json_t *rec;
	int ret;

	ll = ll_get(ru, sb, &ll_ok, &err);
	if (!ll_ok) {
		cw_rate_release(e->rates, r->invocation, NULL);
		fail(r, "could not rebuild the Landlock ruleset", &err);
		goto out;
	}
	rec = cw_rec_launch(tool, sb, ra, ll ? ll->ll : NULL,
			    e->trace && e->cg ? e->trace : NULL);
	if (!rec || audit(e, r, "launch", rec,
			  sync_launch ? 0 : CW_AUDIT_DEFER_SYNC, &err) < 0) {
		if (!rec)
			cw_error_set(&err, "out of memory");
		cw_rate_release(e->rates, r->invocation, NULL);
		fail(r, "call refused because the audit log cannot be written",
		     &err);
		goto out;
	}

	/* The call's own cgroup and network rules, before it can start. */
	if (e->cg && !cgc)
		cgc = cw_cgroup_call_new(e->cg, r->invocation, sb, &err);
	if (e->cg) {
		if (!cgc) {
			cw_rate_release(e->rates, r->invocation, NULL);
			fail(r, "could not create the call's cgroup", &err);
			audit(e, r, "exit",
			      cw_rec_exit_unlaunched(r->message, false, false),
			      0, &aerr);
			goto out;
		}
		cgid = cw_cgroup_call_id(cgc);
	}
	if (e->net && cgid) {
		ret = cw_bpfnet_call_add(e->net, cgid, sb, &err);
		if (ret < 0) {
			cw_cgroup_pool_retire(e->pool, cgc, false);
			cgc = NULL;
			cw_rate_release(e->rates, r->invocation, NULL);
			fail(r, "could not install the call's network rules",
			     &err);
			audit(e, r, "exit",
			      cw_rec_exit_unlaunched(r->message, false, false),
			      0, &aerr);
			goto out;
		}
		net_added = true;
		nc.cgid = cgid;
		collecting_add(e, &nc);
	}
	if (e->trace && cgid) {
		tctx.e = e;
		tctx.invocation = r->invocation;
		tcall = cw_trace_call_add(e->trace, cgid,
					  cw_cgroup_call_fd(cgc), r->invocation,
					  sb, trace_event, &tctx, &err);
		if (!tcall) {
			/* Its network rules go at out:. */
			cw_cgroup_pool_retire(e->pool, cgc, false);
			cgc = NULL;
			cw_rate_release(e->rates, r->invocation, NULL);
			fail(r, "could not trace the call's kernel events", &err);
			audit(e, r, "exit",
			      cw_rec_exit_unlaunched(r->message, false, false),
			      0, &aerr);
			goto out;
		}
	}

	so.sb = sb;
	so.command = ra->command;
	so.cwd = ra->has_cwd ? ra->cwd : NULL;
	so.env_extra = (const char *const *)ra->env;
	so.timeout_ms = ra->timeout_ms;
	so.seccomp = ru->seccomp;
	so.landlock = ll ? ll->ll : NULL;
	if (cgc) {
		so.cgroup_fd = cw_cgroup_call_fd(cgc);
		so.into_cgroup = so.cgroup_fd >= 0;
		so.njoin = cw_cgroup_call_v1_procs(cgc, &so.join_fds);
		so.cgroup_memory = e->cg_memory;
		so.cgroup_pids = e->cg_pids;
	}
	if (rn) {
		watch.cancel_fd = rn->cancel_fd;
		watch.tick_ms = rn->tick_ms;
		watch.on_tick = rn->tick;
		watch.on_output = rn->output;
		watch.ctx = rn->ctx;
		so.watch = &watch;
	}
	so.on_launch = on_launch;
	so.ctx = &launched;
	so.on_seccomp = seccomp_event;
	so.seccomp_ctx = &sc;
	so.seccomp_describe_max = SECCOMP_RECORDS_MAX;
	if (rn && cancelled(rn->cancel_fd)) {
		r->cancelled = true;
		ret = -ECANCELED;
		cw_error_set(&err, "the caller cancelled the call before it started");
	} else {
		ret = cw_spawn_run(&so, &r->run, &err);
		r->cancelled = r->run.cancelled;
	}

	/* Whatever is left of the call dies with its cgroup, then its rules
	 * go and its network events become records. */
	if (cgc) {
		struct cw_error cerr = { 0 };

		/* Killed and measured now; the directories are removed after
		 * the answer. With network rules, the v2 directory outlives
		 * the call's processes: sockets they left keep their cgroup,
		 * and so the programs that drop what they still send. */
		cg_ret = cw_cgroup_call_stop(cgc, &cst, &cerr);
		cw_cgroup_pool_retire(e->pool, cgc, net_added);
		cgc = NULL;
		if (cg_ret < 0)
			snprintf(cg_err, sizeof(cg_err), "%s", cerr.text);
	}
	/* Its processes are gone: every kernel event of the call is queued
	 * by now, and becomes a record before the exit record. */
	if (tcall) {
		cw_trace_call_end(e->trace, tcall, &tst);
		tcall = NULL;
		__atomic_add_fetch(&r->audit_records, tctx.written,
				   __ATOMIC_RELAXED);
		r->execs = tst.exec;
		r->files = tst.file;
		r->events_lost = tst.lost;
		r->src_bpf = cw_trace_enforces_files(e->trace);
		r->src_fanotify = !r->src_bpf;
	}
	if (net_added) {
		cw_bpfnet_call_seal(e->net, cgid, &nst);
		r->net_connections = nst.connections;
		r->net_denied = nst.denied;
		cw_bpfnet_drain(e->net, net_event, e);
		collecting_remove(e, &nc);
		sealed_add(e, cgid, r->invocation);
		net_added = false;
	}

	if (ret < 0) {
		/* Could not launch at all: the call did not happen, so its
		 * counters are given back. */
		cw_rate_release(e->rates, r->invocation, NULL);
		fail(r, ret == -ECANCELED ? "call cancelled" :
					    "could not launch the command",
		     &err);
		audit(e, r, "exit",
		      cw_rec_exit_unlaunched(err.text, true, r->cancelled), 0,
		      &aerr);
		goto out;
	}
	if (cgid)
		audit_limits(e, r, sb, ra->timeout_ms, &cst, &nst);
	if (cgid && e->trace)
		audit_file_limits(e, r, sb, &tst);
	{
		struct cw_exit_facts f = {
			.run = &r->run,
			.uid = launched.uid,
			.gid = launched.gid,
			.cwd = launched.cwd,
			.cancelled = r->cancelled,
			.rate_error = launched.rate_ret < 0 ?
					      launched.rate_err.text : NULL,
			.cgroup = cgid != 0,
			.cg = &cst,
			.cgroup_error = cg_ret < 0 ? cg_err : NULL,
			.net = e->net && cgid ? &nst : NULL,
			.seccomp = so.seccomp != NULL,
			.seccomp_recorded = sc.recorded,
			.trace = e->trace && cgid ? e->trace : NULL,
			.events = &tst,
		};

		rec = cw_rec_exit(&f);
	}
	if (tctx.failed) {
		/* Kernel events the log refused: the trail is incomplete. */
		json_decref(rec);
		rec = NULL;
		err = tctx.err;
	}
	if (!rec || audit(e, r, "exit", rec, 0, &err) < 0) {
		if (!rec && !tctx.failed)
			cw_error_set(&err, "out of memory");
		/* The caller must not see a result the audit does not hold. */
		cw_spawn_result_free(&r->run);
		fail(r, "result withheld because the audit log cannot be written",
		     &err);
		goto out;
	}
	if (launched.rate_ret < 0) {
		cw_spawn_result_free(&r->run);
		fail(r, "call stopped at launch because its rate-limit count cannot be made durable",
		     &launched.rate_err);
		goto out;
	}
	r->outcome = CW_OUTCOME_RAN;
out:
	if (tcall)
		cw_trace_call_end(e->trace, tcall, NULL);
	if (net_added) {
		collecting_remove(e, &nc);
		cw_bpfnet_call_remove(e->net, cgid, NULL);
	}
	cw_cgroup_pool_retire(e->pool, cgc, false);
	ll_put(ll);
}

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
	struct runner rn = {
		.cancel_fd = cw_job_cancel_fd(job),
		.output = bg_output,
		.launched = bg_launched,
		.ctx = bg,
	};

	bg->job = job;
	/* The launch record is synced: the caller is answered at launch,
	 * long before the exit record's sync. */
	run_launch(bg->e, bg->ru, CW_TOOL_RUN_COMMAND, &bg->ra, &rn, bg->cgc,
		   true, &bg->r);
	/* Its slot is free before anyone can see it ended. */
	slot_give(bg->e);
	cw_job_finish(job, bg->r.outcome == CW_OUTCOME_RAN ? &bg->r.run : NULL,
		      bg->r.outcome == CW_OUTCOME_RAN ? NULL : bg->r.message);
	cw_engine_result_free(&bg->r);
	cw_run_args_free(&bg->ra);
	cw_rules_put(bg->ru);
	free(bg);
}

/* Starts ra's command in the background; r gets its pid once it runs. */
static void run_background(struct cw_engine *e, struct cw_rules *ru,
			   struct cw_run_args *ra, struct cw_cgroup_call **cgc,
			   const struct cw_call *call,
			   struct cw_call_result *r)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(ru->policy);
	struct bg_call *bg;
	struct cw_job *job;
	pid_t pid = 0;
	char msg[512];
	int ret;

	bg = calloc(1, sizeof(*bg));
	if (!bg) {
		cw_rate_release(e->rates, r->invocation, NULL);
		slot_give(e);
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	bg->e = e;
	bg->ru = cw_rules_get(ru);
	bg->ra = *ra;		/* moved: the job owns the arguments now */
	memset(ra, 0, sizeof(*ra));
	bg->cgc = *cgc;		/* and the cgroup */
	*cgc = NULL;
	snprintf(bg->r.invocation, sizeof(bg->r.invocation), "%s",
		 r->invocation);
	ret = cw_jobs_start(e->jobs, r->invocation, call->grant,
			    sb->max_output_bytes > 0 ?
				    (size_t)sb->max_output_bytes :
				    JOB_OUTPUT_DEFAULT,
			    bg_main, bg, &job);
	if (ret < 0) {
		cw_run_args_free(&bg->ra);
		cw_cgroup_pool_retire(e->pool, bg->cgc, false);
		cw_rules_put(bg->ru);
		free(bg);
		cw_rate_release(e->rates, r->invocation, NULL);
		slot_give(e);
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message),
			 "could not start the background call: %s",
			 strerror(-ret));
		return;
	}
	if (cw_job_wait_launched(job, &pid, msg, sizeof(msg)) < 0) {
		r->outcome = CW_OUTCOME_FAILED;
		snprintf(r->message, sizeof(r->message), "%s", msg);
		return;
	}
	r->outcome = CW_OUTCOME_RAN;
	r->background = true;
	r->run.pid = pid;
}

/* command_status / command_kill, already allowed and audited. */
static void job_tool(struct cw_engine *e, const struct cw_call *call,
		     const char *inv, bool kill, struct cw_call_result *r)
{
	char msg[512];

	r->data = kill ? cw_jobs_kill(e->jobs, inv, call->grant,
				      CW_KILL_WAIT_MS, msg, sizeof(msg)) :
			 cw_jobs_status(e->jobs, inv, call->grant, msg,
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

void cw_engine_operator_approvals(struct cw_engine *e, bool on)
{
	e->operator_approvals = on;
}

struct cw_approvals *cw_engine_approvals(struct cw_engine *e)
{
	return e->approvals;
}

/* The approval a require_approval verdict asks for. On return the verdict
 * is ALLOW or DENY; *how (may stay NULL) describes the answer for the
 * decision record. */
static void approve(struct cw_engine *e, const struct cw_sandbox *sb,
		    const struct cw_call *call, const struct cw_run_args *ra,
		    const struct cw_call_hooks *h, struct cw_call_result *r,
		    json_t **how)
{
	struct cw_ask q = {
		.tool = call->tool,
		.command = ra->command,
		.cwd = ra->command ? (ra->has_cwd ? ra->cwd : sb->cwd) : NULL,
		.rule = r->verdict.rule,
		.reason = r->verdict.reason,
	};
	int ans = h && h->ask ? h->ask(h->ctx, &q) : -ENOTSUP;

	if (ans < 0 && e->operator_approvals) {
		operator_approval(e, call, ra, r, how);
		return;
	}
	if (ans >= 0) {
		static const char *const names[] = { "accept", "decline",
						     "cancel" };

		*how = json_pack("{s:s, s:s}", "via", "elicitation", "answer",
				 names[ans]);
		if (ans == CW_ANSWER_ACCEPT) {
			r->verdict.kind = CW_VERDICT_ALLOW;
			return;
		}
		r->verdict.kind = CW_VERDICT_DENY;
		snprintf(r->verdict.reason, sizeof(r->verdict.reason),
			 "approval for tool \"%.100s\" was %s by the user",
			 call->tool,
			 ans == CW_ANSWER_DECLINE ? "declined" : "cancelled");
		return;
	}
	/* No way to ask a human: refuse, saying so. */
	r->verdict.kind = CW_VERDICT_DENY;
	snprintf(r->verdict.reason, sizeof(r->verdict.reason),
		 "tool \"%.100s\" requires approval and this server has no way to ask for it",
		 call->tool);
}

static void call_with(struct cw_engine *e, struct cw_rules *ru,
		      const struct cw_call *call,
		      const struct cw_call_hooks *h, struct cw_call_result *r);

void cw_engine_call_hooked(struct cw_engine *e, struct cw_rules *rules,
			   const struct cw_call *call,
			   const struct cw_call_hooks *h,
			   struct cw_call_result *r)
{
	struct cw_rules *ru = rules ? cw_rules_get(rules) : cw_engine_rules(e);

	call_with(e, ru, call, h, r);
	cw_rules_put(ru);
}

static void call_with(struct cw_engine *e, struct cw_rules *ru,
		      const struct cw_call *call,
		      const struct cw_call_hooks *h, struct cw_call_result *r)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(ru->policy);
	struct cw_tool_args ta;
	struct cw_run_args *ra = &ta.run;
	struct runner rn = { .cancel_fd = -1 };
	struct cw_cgroup_call *cgc = NULL;
	struct cw_error err = { 0 };
	enum cw_tool_kind kind;
	bool reserved = false, invalid, slot = false;
	int64_t now = cw_now_us(), running = 0;
	json_t *rec, *how = NULL;
	int ret;

	/* All but the verdict's limit table, which cw_decide fills. */
	memset(r, 0, offsetof(struct cw_call_result, verdict.limits));
	memset(&r->verdict.nlimits, 0, sizeof(*r) -
	       offsetof(struct cw_call_result, verdict.nlimits));
	cw_random_id("inv-", r->invocation, sizeof(r->invocation));
	invalid = cw_tool_args_parse(sb, call->tool, call->args, &ta,
				     r->message, sizeof(r->message)) < 0;
	memcpy(r->sandbox_id, ta.sandbox_id, sizeof(r->sandbox_id));
	kind = ta.kind;

	if (!invalid && h && h->decided) {
		cw_verdict_copy(&r->verdict, h->decided);
	} else if (!invalid) {
		/* No counter view: the reservation below checks the limits
		 * and records the call in one transaction. */
		ret = cw_decide(ru->policy, call, NULL, now, &r->verdict);
		if (ret < 0) {
			r->verdict.kind = CW_VERDICT_DENY;
			snprintf(r->verdict.reason, sizeof(r->verdict.reason),
				 "internal error while deciding: %s",
				 strerror(-ret));
		}
	}
	if (!invalid && r->verdict.kind == CW_VERDICT_APPROVAL) {
		approve(e, sb, call, ra, h, r, &how);
		now = cw_now_us();
	}
	if (!invalid && r->verdict.kind == CW_VERDICT_ALLOW &&
	    kind == CW_TOOL_RUN) {
		slot = slot_take(e, &running);
		if (!slot) {
			r->verdict.kind = CW_VERDICT_DENY;
			snprintf(r->verdict.rule, sizeof(r->verdict.rule),
				 "max_concurrent");
			snprintf(r->verdict.reason, sizeof(r->verdict.reason),
				 "too many commands running at once: %lld running, max_concurrent is %lld; retry when one has ended",
				 (long long)running,
				 (long long)e->max_running);
		}
	}
	if (slot) {
		/* A cgroup made ahead of time names the invocation. */
		cgc = cw_cgroup_pool_take(e->pool, sb);
		if (cgc)
			snprintf(r->invocation, sizeof(r->invocation), "%s",
				 cw_cgroup_call_name(cgc));
	}
	if (!invalid && r->verdict.kind == CW_VERDICT_ALLOW) {
		size_t which = 0;
		int64_t retry = 0;

		/* A foreground command's count is flushed while it starts
		 * (run_launch), still before the answer. */
		ret = cw_rate_reserve_flags(e->rates, r->verdict.limits,
					    r->verdict.nlimits, now,
					    r->invocation,
					    kind == CW_TOOL_RUN && !ra->background ?
						    CW_RATE_DEFER_SYNC :
						    0,
					    &retry, &which, &err);
		if (ret == -EAGAIN) {
			cw_verdict_rate_limited(&r->verdict,
						r->verdict.limits[which].limit,
						retry);
		} else if (ret < 0) {
			/* Fail closed: no count, no call. */
			r->verdict.kind = CW_VERDICT_DENY;
			snprintf(r->verdict.rule, sizeof(r->verdict.rule),
				 "limits");
			snprintf(r->verdict.reason, sizeof(r->verdict.reason),
				 "the rate-limit store failed: %s", err.text);
		} else {
			reserved = true;
		}
	}
	if (slot && !reserved) {
		slot_give(e);
		slot = false;
	}

	rec = cw_rec_decision(call, invalid, r->message, &r->verdict, how);
	/* An allowed foreground run_command has launch and exit records to
	 * come: the exit record's sync makes all three durable before the
	 * answer. */
	if (rec && h && h->decided && h->durable) {
		/* A refused call: its answer waits for the record, not its
		 * thread. */
		ret = cw_audit_write_async(e->audit, "decision", r->invocation,
					   rec, h->durable, h->durable_ctx,
					   &err);
		json_decref(rec);
		if (!ret) {
			__atomic_add_fetch(&r->audit_records, 1,
					   __ATOMIC_RELAXED);
			r->durable_later = true;
		}
	} else if (!rec) {
		ret = -ENOMEM;
	} else {
		ret = audit(e, r, "decision", rec,
			    reserved && kind == CW_TOOL_RUN ? CW_AUDIT_DEFER_SYNC :
							   0,
			    &err);
	}
	if (ret < 0) {
		if (!rec)
			cw_error_set(&err, "out of memory");
		if (reserved)
			cw_rate_release(e->rates, r->invocation, NULL);
		fail(r, "call refused because the audit log cannot be written",
		     &err);
		goto out;
	}
	if (invalid) {
		r->outcome = CW_OUTCOME_INVALID;
		goto out;
	}
	if (r->verdict.kind != CW_VERDICT_ALLOW) {
		r->outcome = CW_OUTCOME_DENIED;
		deny_text(r);
		goto out;
	}
	if (kind == CW_TOOL_STATUS || kind == CW_TOOL_KILL) {
		job_tool(e, call, ta.invocation, kind == CW_TOOL_KILL, r);
		goto out;
	}
	if (kind != CW_TOOL_RUN) {
		cw_rate_release(e->rates, r->invocation, NULL);
		r->outcome = CW_OUTCOME_UNKNOWN_TOOL;
		snprintf(r->message, sizeof(r->message),
			 "unknown tool \"%.200s\"", call->tool);
		goto out;
	}
	if (ra->background) {
		slot = false;	/* the job gives it back when it ends */
		run_background(e, ru, ra, &cgc, call, r);
		goto out;
	}
	if (h) {
		rn.cancel_fd = h->cancel_fd;
		if (h->progress && h->progress_ms > 0) {
			rn.tick_ms = h->progress_ms;
			rn.tick = progress_tick;
			rn.ctx = (void *)h;
		}
	}
	run_launch(e, ru, call->tool, ra, h ? &rn : NULL, cgc, false, r);
	cgc = NULL;
out:
	cw_cgroup_pool_retire(e->pool, cgc, false);
	if (slot)
		slot_give(e);
	json_decref(how);
	cw_tool_args_free(&ta);
}

void cw_engine_call(struct cw_engine *e, const struct cw_call *call,
		    struct cw_call_result *r)
{
	cw_engine_call_hooked(e, NULL, call, NULL, r);
}

void cw_engine_call_with(struct cw_engine *e, struct cw_rules *rules,
			 const struct cw_call *call, struct cw_call_result *r)
{
	cw_engine_call_hooked(e, rules, call, NULL, r);
}

void cw_engine_result_free(struct cw_call_result *r)
{
	cw_spawn_result_free(&r->run);
	json_decref(r->data);
	r->data = NULL;
}
