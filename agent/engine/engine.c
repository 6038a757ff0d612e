// SPDX-License-Identifier: Apache-2.0
/*
 * engine: open and close, the rules (a policy and what it compiles to),
 * and the state concurrent calls share. cw_engine_submit and
 * cw_engine_run (call.c) run on many threads at once (the worker pool's,
 * server/workers.c, plus one per background command). What they share:
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
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/types.h"
#include "engine/disk.h"
#include "engine/internal.h"
#include "engine/ns_pool.h"
#include "engine/records.h"

/* An ended call's network entries are kept this long: beyond TCP's FIN
 * timeouts. */
#define SEALED_TTL_US (300LL * 1000000)

static void sealed_expire(struct cw_engine *e, bool force);

/*
 * Kernel events of calls: tracepoint BPF where this kernel has it (which
 * also enforces sandbox.files), else the kernel's audit (exec with argv
 * and the mutations), else fanotify, else none; beside the last two, fork
 * and exit from the process events connector; the records say which. A
 * tracing failure stops the agent only when the policy requires bpf_trace.
 */
static int open_trace(struct cw_engine *e, const struct cw_engine_opts *o,
		      struct cw_diag *diag)
{
	const struct cw_probe *p = cw_engine_probe();
	struct cw_trace_opts to = {
		.ringbuf_kib = o->trace_ringbuf_kib,
		.no_pause = o->trace_no_pause,
		.cgroup2_mount = p->cgroup2_mount,
		.proc_events = p->item[CW_FEAT_PROC_EVENTS].ok,
	};
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
	if (p->item[CW_FEAT_KAUDIT].ok) {
		to.kaudit = true;
		e->trace = cw_trace_open(&to, &err);
		if (e->trace)
			return 0;
		snprintf(e->trace_error + strlen(e->trace_error),
			 sizeof(e->trace_error) - strlen(e->trace_error),
			 "%skaudit: %s", e->trace_error[0] ? "; " : "",
			 err.text);
		to.kaudit = false;
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

void cw_ll_put(struct cw_ll_ref *r)
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

static bool cgroup_required(const struct cw_engine *e)
{
	return cw_policy_sandbox(e->rules->policy)->require_layers &
	       CW_LAYER_CGROUP;
}

/* The cgroup notes of a describe object, joined, for a refusal. */
static const char *cgroup_notes(json_t *d)
{
	static __thread char buf[768];
	json_t *v;
	size_t i, n = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(d, "notes"), i, v) {
		int k = snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "; " : "",
				 json_string_value(v));

		if (k < 0 || (size_t)k >= sizeof(buf) - n)
			break;
		n += (size_t)k;
	}
	return n ? buf : "no reason recorded";
}

struct cw_engine *cw_engine_open(const struct cw_engine_opts *o,
				 struct cw_diag *diag)
{
	struct cw_engine *e;
	struct cw_error err;
	const char *state = o->state_dir ? o->state_dir : CW_DEFAULT_STATE_DIR;
	const char *audit = o->audit_path ? o->audit_path : CW_DEFAULT_AUDIT;
	uint64_t max_bytes, max_total;
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
		if (cgroup_required(e) && (!e->cg_memory || !e->cg_pids)) {
			cw_diag_add(diag, "", 0, 0, "", "cgroup: the policy requires layer \"cgroup\", but no cgroup the agent can be in has the %s controller: %s",
				    !e->cg_memory ? "memory" : "pids",
				    cgroup_notes(d));
			json_decref(d);
			goto fail;
		}
		json_decref(d);
		/* Without the pool each call makes its own: slower, same
		 * enforcement. */
		e->pool = cw_cgroup_pool_open(e->cg,
					      cw_policy_sandbox(e->rules->policy));
	}
	if (cw_layer_on(CW_LAYER_NAMESPACES)) {
		e->ns = cw_ns_pool_open(e->rules,
					e->cg ? cw_cgroup_calls_path(e->cg) :
						NULL,
					&err);
		if (!e->ns) {
			cw_diag_add(diag, "", 0, 0, "", "namespaces: %s",
				    err.text);
			goto fail;
		}
	}
	/* Loaded and attached once; calls only update maps. */
	if (cw_layer_on(CW_LAYER_BPF_NET) && e->cg &&
	    cw_cgroup_calls_fd(e->cg) >= 0) {
		struct cw_bpfnet_opts no = {
			.cgroup_fd = cw_cgroup_calls_fd(e->cg),
			.guard_listeners = true,
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
	max_bytes = !o->audit_max_bytes ? CW_DEFAULT_AUDIT_MAX_BYTES :
		    o->audit_max_bytes == UINT64_MAX ? 0 : o->audit_max_bytes;
	max_total = !o->audit_max_total ? CW_DEFAULT_AUDIT_MAX_TOTAL :
		    o->audit_max_total == UINT64_MAX ? 0 : o->audit_max_total;
	if (max_total && max_total < max_bytes) {
		cw_diag_add(diag, "", 0, 0, "",
			    "audit log: --audit-max-total (%" PRIu64 " bytes) is less than one file of --audit-max-bytes (%" PRIu64 " bytes); make it at least that, or 0 to keep every file",
			    max_total, max_bytes);
		goto fail;
	}
	cw_audit_set_max_bytes(e->audit, max_bytes);
	cw_audit_set_max_total(e->audit, max_total);
	/* What protects the calls of this run, once, for the audit reader. */
	rec = cw_rec_agent_start(o->policy_path, e->cg, e->trace,
				 e->trace_error);
	if (!rec || cw_audit_write(e->audit, CW_AUDIT_T(AGENT), NULL, rec, &err) < 0) {
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
	cw_ns_pool_close(e->ns);
	if (e->net)
		sealed_expire(e, true);
	cw_bpfnet_close(e->net);
	cw_cgroup_close(e->cg);
	cw_rules_put(e->rules);
	pthread_mutex_destroy(&e->rules_lock);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

int cw_engine_guard_port(struct cw_engine *e, uint16_t port)
{
	return e->net ? cw_bpfnet_guard_port(e->net, port) : 0;
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
	r->disk = cw_disk_budgets(cw_policy_sandbox(r->policy), &r->disk_gap);
	if (!r->disk) {
		cw_diag_add(diag, r->policy->source, 0, 0, "", "out of memory");
		goto fail;
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
	cw_ll_put(r->landlock);
	json_decref(r->disk);
	free(r->disk_gap);
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

int cw_engine_record(struct cw_engine *e, struct cw_call_result *r,
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

void cw_call_fail(struct cw_call_result *r, const char *what,
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

void cw_engine_seal(struct cw_engine *e, uint64_t cgid, const char *id)
{
	pthread_mutex_lock(&e->lock);
	sealed_expire(e, false);
	if (e->nsealed == CW_ENGINE_SEALED_MAX) {
		/* Full: the oldest goes first. */
		cw_bpfnet_call_remove(e->net, e->sealed[0].cgid, NULL);
		if (e->cg)
			cw_cgroup_remove_call(e->cg, e->sealed[0].id);
		memmove(&e->sealed[0], &e->sealed[1],
			(CW_ENGINE_SEALED_MAX - 1) * sizeof(e->sealed[0]));
		e->nsealed--;
	}
	e->sealed[e->nsealed].cgid = cgid;
	snprintf(e->sealed[e->nsealed].id, sizeof(e->sealed[0].id), "%s", id);
	e->sealed[e->nsealed].since = cw_mono_us();
	e->nsealed++;
	pthread_mutex_unlock(&e->lock);
}

void cw_engine_collect_add(struct cw_engine *e, struct cw_net_ctx *nc)
{
	pthread_mutex_lock(&e->lock);
	nc->next = e->collecting;
	e->collecting = nc;
	pthread_mutex_unlock(&e->lock);
}

void cw_engine_collect_remove(struct cw_engine *e, struct cw_net_ctx *nc)
{
	struct cw_net_ctx **pp;

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
void cw_engine_net_event(void *ctx, const struct cw_bpfnet_event *ev)
{
	struct cw_engine *e = ctx;
	struct cw_net_ctx *nc;
	struct cw_error err;

	pthread_mutex_lock(&e->lock);
	for (nc = e->collecting; nc; nc = nc->next)
		if (nc->cgid == ev->cgroup_id)
			break;
	if (nc && !ev->allowed && !nc->r->net_first[0])
		cw_rec_net_brief(ev, nc->r->net_first, sizeof(nc->r->net_first));
	if (nc)
		cw_engine_record(e, nc->r, CW_AUDIT_T(NET), cw_rec_net(ev),
				 CW_AUDIT_DEFER_SYNC, &err);
	pthread_mutex_unlock(&e->lock);
}

bool cw_engine_slot_take(struct cw_engine *e, int64_t *running)
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

void cw_engine_slot_give(struct cw_engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->running--;
	pthread_mutex_unlock(&e->lock);
}

struct cw_ll_ref *cw_rules_landlock(struct cw_rules *ru,
				    const struct cw_sandbox *sb, bool *ok,
				    struct cw_error *err)
{
	struct cw_ll_ref *cur, *fresh = NULL, *old = NULL;

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
		cw_ll_put(cur);
		*ok = false;
		return NULL;
	}
	fresh->refs = 2;	/* the rules' and ours */
	pthread_mutex_lock(&ru->ll_lock);
	old = ru->landlock;
	ru->landlock = fresh;
	pthread_mutex_unlock(&ru->ll_lock);
	cw_ll_put(old);		/* the rules' reference to it */
	cw_ll_put(cur);		/* ours */
	return fresh;
}

void cw_engine_operator_approvals(struct cw_engine *e, bool on)
{
	e->operator_approvals = on;
}

struct cw_approvals *cw_engine_approvals(struct cw_engine *e)
{
	return e->approvals;
}

void cw_engine_fail_at(struct cw_engine *e, enum cw_launch_step step)
{
	__atomic_store_n(&e->fail_at, (int)step, __ATOMIC_RELAXED);
}

bool cw_engine_injected(const struct cw_engine *e, enum cw_launch_step s)
{
	return s != CW_STEP_NONE &&
	       __atomic_load_n(&e->fail_at, __ATOMIC_RELAXED) == (int)s;
}

uint64_t cw_engine_decisions(const struct cw_engine *e)
{
	return __atomic_load_n(&e->decisions, __ATOMIC_RELAXED);
}

void cw_engine_result_free(struct cw_call_result *r)
{
	cw_spawn_result_free(&r->run);
	json_decref(r->data);
	r->data = NULL;
}
