// SPDX-License-Identifier: Apache-2.0
/*
 * launch: one allowed run_command under every kernel layer. Each layer
 * has one attach (before the command can start) and one detach (after it,
 * or after an attach that failed), and attach runs as a chain that stops
 * at the first failure:
 *
 *   seccomp    the policy's filter and the listener of its denials
 *   landlock   the ruleset, rebuilt when a file it names was replaced
 *   (record)   the launch record, once the ruleset is known
 *   cgroup     the call's own cgroup (made ahead by the pool, or now)
 *   bpf_net    the call's network rules, keyed by that cgroup
 *   bpf_trace  the call's kernel event tracing, likewise
 *
 * The layers go in the order of the layer table (layers.c) but for
 * cgroup, which bpf_net and bpf_trace live in. After the command, cgroup
 * is detached first (whatever is left of the call dies with it), so the
 * other layers then see everything the call did.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/types.h"
#include "engine/internal.h"
#include "engine/ns_pool.h"
#include "engine/records.h"

/* Denied syscalls recorded in full per call; the rest are counted in the
 * exit record (seccomp.suppressed), so a flood costs neither the disk nor
 * the call's time, and none goes unaccounted. */
#define SECCOMP_RECORDS_MAX 64
/* Kernel event records written in one batch. */
#define TRACE_BATCH 256

#define RETURN_ON_FAILURE(x)			\
	do {					\
		int ret_ = (x);			\
		if (ret_ < 0)			\
			return ret_;		\
	} while (0)

/* Kernel event records of one call, batched. */
struct trace_ctx {
	struct cw_engine *e;
	const char *invocation;
	uint64_t written;	/* records written */
	uint64_t failed;	/* records the log refused */
	struct cw_error err;	/* the first refusal */
	struct cw_audit_rec recs[TRACE_BATCH];	/* not written yet */
	size_t n;
	const struct cw_ns_holder *ns;	/* the call's namespaces, or NULL */
	/* file accesses Landlock refused, for the notes */
	const struct cw_sandbox *sb;
	const char *cwd;		/* the command's start directory */
	pid_t main_pid;			/* the command's own process */
	uint64_t fs_denied;
	char fs_first[224];
	/* the last forks seen, child -> parent: a process that failed and
	 * is gone is looked up in its parent's directory */
	struct { uint32_t child, parent; } forks[64];
	unsigned nforks;
	/* sandbox.audit: the records and bytes written; past the budget an
	 * event is counted by its type and op instead */
	uint64_t bytes;
	uint64_t summarised;
	struct { const char *type, *op; uint64_t n; } sums[24];
	unsigned nsums;
};

/* One launch. */
struct launch {
	struct cw_engine *e;
	struct cw_rules *ru;
	const struct cw_sandbox *sb;
	const char *tool;
	const struct cw_run_args *ra;
	const struct cw_runner *rn;
	bool sync_launch;
	struct cw_call_result *r;
	struct cw_unlaunched *why;
	struct cw_error err;

	struct cw_spawn_opts so;
	struct cw_spawn_watch watch;
	struct cw_user user;		/* resolved before the launch record */
	bool have_user;
	/* What the launcher actually used, for the exit record. */
	uid_t uid;
	gid_t gid;
	char cwd[PATH_MAX];
	/* The reservation made durable while the command starts. */
	struct cw_rate_store *rates;
	int rate_ret;
	struct cw_error rate_err;

	uint64_t seccomp_recorded;	/* seccomp records written */
	char seccomp_first[32];		/* the first denial's syscall */
	struct cw_ll_ref *ll;		/* landlock */
	struct cw_ns_slot *ns;		/* namespaces */
	struct cw_cgroup_call *cgc;	/* cgroup */
	uint64_t cgid;
	struct cw_cgroup_stats cst;
	int cg_ret;
	char cg_err[512];
	bool net_added;			/* bpf_net */
	struct cw_net_ctx nc;
	struct cw_bpfnet_stats nst;
	struct cw_trace_call *tcall;	/* bpf_trace */
	struct trace_ctx tctx;
	struct cw_trace_stats tst;
};

/* A launch step failed: r and the exit record say what. */
static int step_failed(struct launch *l, const char *what, int ret)
{
	cw_call_fail(l->r, what, &l->err);
	snprintf(l->why->error, sizeof(l->why->error), "%s", l->r->message);
	return ret < 0 ? ret : -EIO;
}

/* A failure the tests asked for at step s. */
static bool inject(struct launch *l, enum cw_launch_step s)
{
	if (!cw_engine_injected(l->e, s))
		return false;
	cw_error_set(&l->err, "failure injected at launch step %d", (int)s);
	return true;
}

/* ---- seccomp ----------------------------------------------------------- */

/* One `seccomp` record per described denial; made durable with the exit
 * record, like the net records. */
static void seccomp_event(void *ctx, const struct cw_seccomp_denial *d)
{
	struct launch *l = ctx;
	struct cw_error err;

	if (!d->described)
		return;
	if (!l->seccomp_first[0])
		snprintf(l->seccomp_first, sizeof(l->seccomp_first), "%s",
			 d->name[0] ? d->name : "unknown");
	if (cw_engine_record(l->e, l->r, CW_AUDIT_T(SECCOMP), cw_rec_seccomp(d),
			     CW_AUDIT_DEFER_SYNC, &err) == 0)
		l->seccomp_recorded++;
}

static int attach_seccomp(struct launch *l)
{
	l->so.seccomp = l->ru->seccomp;
	l->so.on_seccomp = seccomp_event;
	l->so.seccomp_ctx = l;
	l->so.seccomp_describe_max = SECCOMP_RECORDS_MAX;
	return 0;
}

/* ---- landlock ---------------------------------------------------------- */

static int attach_landlock(struct launch *l)
{
	bool ok;

	l->ll = cw_rules_landlock(l->ru, l->sb, &ok, &l->err);
	if (!ok || inject(l, CW_STEP_LANDLOCK))
		return step_failed(l, "could not rebuild the Landlock ruleset",
				   -EIO);
	l->so.landlock = l->ll ? l->ll->ll : NULL;
	return 0;
}

static void detach_landlock(struct launch *l)
{
	cw_ll_put(l->ll);
	l->ll = NULL;
}

/* ---- namespaces -------------------------------------------------------- */

/* After landlock: a call with a /proc of its own may need its ruleset
 * built for that /proc, which the slot has. */
static int attach_ns(struct launch *l)
{
	if (!l->e->ns)
		return 0;
	l->ns = cw_ns_pool_take(l->e->ns, l->ru, l->ll, &l->err);
	if (!l->ns)
		return step_failed(l, "could not make the call's namespaces",
				   -EIO);
	l->so.ns = &l->ns->h;
	l->so.landlock = cw_ns_slot_landlock(l->ns);
	return 0;
}

/* After the cgroup's kill: the holder's end takes whatever is left in the
 * call's pid namespace. */
static void detach_ns(struct launch *l)
{
	if (!l->ns)
		return;
	cw_ns_pool_give(l->e->ns, l->ns);
	l->ns = NULL;
}

/* ---- the account -------------------------------------------------------- */

/* Looked up before the launch record, so that it names the account and
 * directory the command really gets (a fallback to nobody, to "/"). */
static int resolve_account(struct launch *l)
{
	int ret;

	if (l->ra->user[0]) {
		/* an account the policy lists for calls to pick: named,
		 * so never replaced by nobody */
		struct cw_sandbox picked = *l->sb;

		picked.user = (char *)l->ra->user; /* only read */
		picked.user_explicit = true;
		ret = cw_user_resolve(&picked, &l->user, &l->err);
	} else {
		ret = cw_user_resolve(l->sb, &l->user, &l->err);
	}
	if (ret < 0) {
		cw_user_free(&l->user);
		return step_failed(l, "could not launch the command", ret);
	}
	l->have_user = true;
	l->so.user = &l->user;
	/* resolved once: the record names it and the launcher uses it */
	l->so.cwd = cw_user_cwd(l->sb, l->ra->has_cwd ? l->ra->cwd : NULL,
				&l->user);
	return 0;
}

static void release_account(struct launch *l)
{
	if (l->have_user)
		cw_user_free(&l->user);
	l->have_user = false;
	l->so.user = NULL;
	l->so.cwd = NULL;	/* may point into the account */
}

/* ---- the launch record ------------------------------------------------- */

/* The unix sockets outside the calls the call's mount namespace masks. */
static json_t *masked_sockets(const struct cw_ns_mounts *m)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < m->nmask; i++)
		json_array_append_new(a, json_string(m->mask[i]));
	return a;
}

static int record_launch(struct launch *l)
{
	struct cw_engine *e = l->e;
	json_t *rec;
	int ret;

	rec = cw_rec_launch(l->tool, l->sb, l->ra, &l->user, l->so.cwd,
			    l->ll ? l->ll->ll : NULL,
			    e->trace && e->cg ? e->trace : NULL);
	if (rec && l->ns)
		json_object_set_new(rec, "unix_sockets_masked",
				    masked_sockets(&l->ns->m));
	if (rec) {
		json_object_set(rec, "disk_budget", l->ru->disk);
		if (l->ru->disk_gap)
			json_object_set_new(json_object_get(rec, "layer_gaps"),
					    "disk_budget",
					    json_string(l->ru->disk_gap));
	}
	if (inject(l, CW_STEP_RECORD)) {
		json_decref(rec);
		ret = -EIO;
	} else if (!rec) {
		cw_error_set(&l->err, "out of memory");
		ret = -ENOMEM;
	} else {
		ret = cw_engine_record(e, l->r, CW_AUDIT_T(LAUNCH), rec,
				       l->sync_launch ? 0 : CW_AUDIT_DEFER_SYNC,
				       &l->err);
	}
	if (ret < 0)
		return step_failed(l, "call refused because the audit log cannot be written",
				   ret);
	return 0;
}

/* ---- cgroup ------------------------------------------------------------ */

static int attach_cgroup(struct launch *l)
{
	struct cw_engine *e = l->e;

	if (!e->cg)
		return 0;
	if (!l->cgc)
		l->cgc = cw_cgroup_call_new(e->cg, l->r->invocation, l->sb,
					    &l->err);
	if (!l->cgc || inject(l, CW_STEP_CGROUP))
		return step_failed(l, "could not create the call's cgroup",
				   -EIO);
	l->cgid = cw_cgroup_call_id(l->cgc);
	l->so.cgroup_fd = cw_cgroup_call_fd(l->cgc);
	l->so.into_cgroup = l->so.cgroup_fd >= 0;
	l->so.njoin = cw_cgroup_call_v1_procs(l->cgc, &l->so.join_fds);
	l->so.cgroup_memory = e->cg_memory;
	l->so.cgroup_pids = e->cg_pids;
	return 0;
}

/* After the command: killed and measured now; the directories are removed
 * after the answer. With network rules, the v2 directory outlives the
 * call's processes: sockets they left keep their cgroup, and so the
 * programs that drop what they still send. */
static void detach_cgroup(struct launch *l, bool ran)
{
	struct cw_error cerr = { 0 };

	if (!l->cgc)
		return;
	if (ran) {
		l->cg_ret = cw_cgroup_call_stop(l->cgc, &l->cst, &cerr);
		if (l->cg_ret < 0)
			snprintf(l->cg_err, sizeof(l->cg_err), "%s",
				 cerr.text);
	}
	cw_cgroup_pool_retire(l->e->pool, l->cgc, ran && l->net_added);
	l->cgc = NULL;
}

/* ---- bpf_net ----------------------------------------------------------- */

static int attach_net(struct launch *l)
{
	struct cw_engine *e = l->e;
	int ret;

	if (!e->net || !l->cgid)
		return 0;
	ret = inject(l, CW_STEP_NET) ? -EIO :
		cw_bpfnet_call_add(e->net, l->cgid, l->sb, &l->err);
	if (ret < 0)
		return step_failed(l, "could not install the call's network rules",
				   ret);
	l->net_added = true;
	l->nc.r = l->r;
	l->nc.cgid = l->cgid;
	cw_engine_collect_add(e, &l->nc);
	return 0;
}

/* After the command: its network events become records, and its entries
 * stay sealed a while. */
static void detach_net(struct launch *l, bool ran)
{
	struct cw_engine *e = l->e;

	if (!l->net_added)
		return;
	l->net_added = false;
	if (!ran) {
		cw_engine_collect_remove(e, &l->nc);
		cw_bpfnet_call_remove(e->net, l->cgid, NULL);
		return;
	}
	cw_bpfnet_call_seal(e->net, l->cgid, &l->nst);
	l->r->net_connections = l->nst.connections;
	l->r->net_denied = l->nst.denied;
	cw_bpfnet_drain(e->net, cw_engine_net_event, e);
	cw_engine_collect_remove(e, &l->nc);
	cw_engine_seal(e, l->cgid, l->r->invocation);
}

/* ---- bpf_trace --------------------------------------------------------- */

static void trace_flush(struct trace_ctx *tc)
{
	struct cw_error err;
	uint64_t bytes;
	size_t i;

	if (!tc->n)
		return;
	if (!cw_audit_write_batch(tc->e->audit, tc->recs, tc->n,
				  CW_AUDIT_DEFER_SYNC, &bytes, &err)) {
		tc->written += tc->n;
		tc->bytes += bytes;
	} else {
		if (!tc->failed)
			tc->err = err;
		tc->failed += tc->n;
	}
	for (i = 0; i < tc->n; i++)
		json_decref(tc->recs[i].fields);
	tc->n = 0;
}

/* The directory a relative path of process pid was taken from: its cwd
 * or descriptor dirfd while it lives; once it is gone, its parent's cwd
 * (a fork shares it), or for the command's own process its start
 * directory. 0, or -1 when unknown. */
static int event_dir(const struct trace_ctx *tc, uint32_t pid, int dirfd,
		     char *dir, size_t len)
{
	char link[64];
	ssize_t n;
	unsigned i;

	if (dirfd == -100)
		snprintf(link, sizeof(link), "/proc/%u/cwd", pid);
	else
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", pid, dirfd);
	n = readlink(link, dir, len - 1);
	if (n > 0) {
		dir[n] = '\0';
		return 0;
	}
	if (dirfd != -100)
		return -1;
	for (i = 0; i < tc->nforks && i < CW_ARRAY_SIZE(tc->forks); i++)
		if (tc->forks[i].child == pid) {
			snprintf(link, sizeof(link), "/proc/%u/cwd",
				 tc->forks[i].parent);
			n = readlink(link, dir, len - 1);
			if (n <= 0)
				return -1;
			dir[n] = '\0';
			return 0;
		}
	if ((pid_t)pid != __atomic_load_n(&tc->main_pid, __ATOMIC_ACQUIRE) ||
	    !tc->cwd)
		return -1;
	snprintf(dir, len, "%s", tc->cwd);
	return 0;
}

/* The absolute path of a file event; 0, or -1 when it cannot be told.
 * A resolved path must exist, as an exec's does, else it was resolved
 * against the wrong directory. */
static int event_path(const struct trace_ctx *tc,
		      const struct cw_trace_event *ev, char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *rel = ev->path;
	struct stat st;
	int n;

	if (rel[0] == '/')
		return snprintf(out, len, "%s", rel) < (int)len ? 0 : -1;
	if (event_dir(tc, ev->tid, ev->dirfd, dir, sizeof(dir)) < 0)
		return -1;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	n = snprintf(out, len, "%s/%s", strcmp(dir, "/") ? dir : "", rel);
	if (n <= 0 || (size_t)n >= len)
		return -1;
	if (!strcmp(ev->op, "exec") && stat(out, &st) < 0)
		return -1;
	return 0;
}

/* A file access refused with EACCES: counted for the notes when it was
 * Landlock's (the policy's lists do not grant it). A relative path whose
 * directory is gone with its process is told as given, with both causes
 * it may have. */
static void fs_refusal(struct trace_ctx *tc, const struct cw_trace_event *ev)
{
	char path[PATH_MAX], brief[sizeof(tc->fs_first)];

	if (!tc->sb)
		return;
	if (event_path(tc, ev, path, sizeof(path)) == 0) {
		if (!cw_notes_fs_refusal(tc->sb, ev->op, ev->flags, path,
					 brief, sizeof(brief)))
			return;
	} else if (!cw_notes_fs_refusal_relative(ev->op, ev->flags,
						 ev->path, brief,
						 sizeof(brief))) {
		return;
	}
	if (!tc->fs_denied++)
		snprintf(tc->fs_first, sizeof(tc->fs_first), "%s", brief);
}

/* Past the call's audit budget (sandbox.audit; the bytes are known per
 * batch, so it may be passed by one batch): true, and the event counted by
 * its type and op. */
static bool over_budget(struct trace_ctx *tc, const struct cw_trace_event *ev)
{
	const char *type, *op;
	unsigned i;

	if ((!tc->sb->audit.max_records ||
	     tc->written + tc->n < (uint64_t)tc->sb->audit.max_records) &&
	    (!tc->sb->audit.max_bytes ||
	     tc->bytes < (uint64_t)tc->sb->audit.max_bytes))
		return false;
	tc->summarised++;
	type = cw_trace_event_type(ev);
	op = ev->kind == CW_TRACE_FORK ? "fork" :
	     ev->kind == CW_TRACE_EXIT ? "exit" : ev->op ? ev->op : "";
	for (i = 0; i < tc->nsums; i++)
		if (tc->sums[i].type == type && !strcmp(tc->sums[i].op, op))
			break;
	if (i == tc->nsums && i < CW_ARRAY_SIZE(tc->sums)) {
		tc->sums[i].type = type;
		tc->sums[i].op = op;
		tc->nsums++;
	}
	if (i < tc->nsums)
		tc->sums[i].n++;
	return true;
}

/* One exec, file or process record per kernel event of the call, written
 * in batches (a burst costs one write per batch, not per record); called
 * on the trace's reading thread, ev NULL when a round of reading ends.
 * The exit record's sync makes them durable. */
static void trace_event(void *ctx, const struct cw_trace_event *ev)
{
	struct trace_ctx *tc = ctx;
	int masked = 0;
	json_t *rec;

	if (!ev) {
		trace_flush(tc);
		return;
	}
	if (ev->kind == CW_TRACE_FORK)
		tc->forks[tc->nforks++ % CW_ARRAY_SIZE(tc->forks)] =
			(typeof(tc->forks[0])){ ev->child, ev->pid };
	if (ev->kind == CW_TRACE_FILE && ev->has_ret && ev->ret == -EACCES)
		fs_refusal(tc, ev);
	if (ev->kind == CW_TRACE_UNIX) {
		/* A socket without a reader refuses so too: not ours. */
		masked = tc->ns ? cw_ns_socket_masked(tc->ns, ev->tid, ev->path) :
				  0;
		if (!masked)
			return;
	}
	/* a refused connection is a net record whatever the budget */
	if (ev->kind != CW_TRACE_UNIX && over_budget(tc, ev))
		return;
	rec = cw_trace_event_json(ev);
	if (rec && ev->kind == CW_TRACE_UNIX)
		cw_rec_net_unix(rec, masked > 0);
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

static int attach_trace(struct launch *l)
{
	struct cw_engine *e = l->e;

	if (!e->trace || !l->cgid)
		return 0;
	l->tctx.e = e;
	l->tctx.invocation = l->r->invocation;
	l->tctx.ns = l->ns ? &l->ns->h : NULL;
	l->tctx.sb = l->sb;
	l->tctx.cwd = l->so.cwd;
	if (!inject(l, CW_STEP_TRACE))
		l->tcall = cw_trace_call_add(e->trace, l->cgid,
					     cw_cgroup_call_fd(l->cgc),
					     l->r->invocation, l->sb,
					     trace_event, &l->tctx, &l->err);
	if (!l->tcall)
		return step_failed(l, "could not trace the call's kernel events",
				   -EIO);
	l->so.loginuid = cw_trace_call_loginuid(l->tcall);
	return 0;
}

/* After the command: its processes are gone, so every kernel event of the
 * call is queued by now, and becomes a record before the exit record. */
static void detach_trace(struct launch *l, bool ran)
{
	struct cw_engine *e = l->e;
	struct cw_call_result *r = l->r;

	if (!l->tcall)
		return;
	cw_trace_call_end(e->trace, l->tcall, ran ? &l->tst : NULL);
	l->tcall = NULL;
	if (!ran)
		return;
	__atomic_add_fetch(&r->audit_records, l->tctx.written,
			   __ATOMIC_RELAXED);
	r->execs = l->tst.exec;
	r->files = l->tst.file;
	r->events_lost = l->tst.lost;
	r->nsources = cw_trace_source_names(e->trace, r->sources);
}

/* ---- the chain --------------------------------------------------------- */

static int attach(struct launch *l)
{
	RETURN_ON_FAILURE(attach_seccomp(l));
	RETURN_ON_FAILURE(attach_landlock(l));
	RETURN_ON_FAILURE(attach_ns(l));
	RETURN_ON_FAILURE(resolve_account(l));
	RETURN_ON_FAILURE(record_launch(l));
	RETURN_ON_FAILURE(attach_cgroup(l));
	RETURN_ON_FAILURE(attach_net(l));
	RETURN_ON_FAILURE(attach_trace(l));
	return 0;
}

/* ran: the command was started (or its start was tried): what the layers
 * saw is collected. Else what attach made is undone. */
static void detach(struct launch *l, bool ran)
{
	detach_cgroup(l, ran);
	/* before the namespaces end: the trail's last unix refusals are
	 * told masked or not in them */
	detach_trace(l, ran);
	detach_ns(l);
	detach_net(l, ran);
	detach_landlock(l);
}

/* ---- the command ------------------------------------------------------- */

static void on_launch(void *ctx, pid_t pid, uid_t uid, gid_t gid,
		      const char *cwd)
{
	struct launch *l = ctx;

	l->uid = uid;
	l->gid = gid;
	snprintf(l->cwd, sizeof(l->cwd), "%s", cwd ? cwd : "");
	/* read by the trace's thread */
	__atomic_store_n(&l->tctx.main_pid, pid, __ATOMIC_RELEASE);
	/* The flush runs while the command starts on another CPU; a call
	 * whose count cannot be made durable does not go on. */
	if (l->rates) {
		l->rate_ret = cw_rate_sync(l->rates, &l->rate_err);
		if (l->rate_ret < 0)
			kill(-pid, SIGKILL);
	}
	if (l->rn && l->rn->launched)
		l->rn->launched(l->rn->ctx, pid);
}

/* True once the caller has given up (its cancel eventfd is readable). */
static bool cancelled(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) == 1;
}

static int spawn(struct launch *l)
{
	const struct cw_runner *rn = l->rn;
	struct cw_call_result *r = l->r;
	int ret;

	l->so.sb = l->sb;
	l->so.command = l->ra->command;
	l->so.env_extra = (const char *const *)l->ra->env;
	l->so.timeout_ms = l->ra->timeout_ms;
	l->so.background = l->ra->background;
	l->so.stdin_data = l->ra->stdin_data;
	l->so.stdin_len = l->ra->stdin_len;
	if (rn) {
		l->watch.cancel_fd = rn->cancel_fd;
		l->watch.tick_ms = rn->tick_ms;
		l->watch.on_tick = rn->tick;
		l->watch.on_output = rn->output;
		l->watch.ctx = rn->ctx;
		l->so.watch = &l->watch;
	}
	l->so.on_launch = on_launch;
	l->so.ctx = l;
	if (rn && cancelled(rn->cancel_fd)) {
		r->cancelled = true;
		ret = -ECANCELED;
		cw_error_set(&l->err, "the caller cancelled the call before it started");
	} else if (inject(l, CW_STEP_SPAWN)) {
		ret = -EIO;
	} else {
		ret = cw_spawn_run(&l->so, &r->run, &l->err);
		r->cancelled = r->run.cancelled;
	}
	if (ret < 0) {
		/* Could not launch at all: the call did not happen. */
		cw_call_fail(r, ret == -ECANCELED ? "call cancelled" :
						    "could not launch the command",
			     &l->err);
		snprintf(l->why->error, sizeof(l->why->error), "%s",
			 l->err.text);
		l->why->with_cancelled = true;
	}
	return ret;
}

/* The events past sandbox.audit, by "type" or "type:op". */
static json_t *audit_budget_record(const struct trace_ctx *tc)
{
	json_t *by = json_object(), *rec;
	char key[64];
	unsigned i;

	for (i = 0; by && i < tc->nsums; i++) {
		snprintf(key, sizeof(key), "%s%s%s", tc->sums[i].type,
			 tc->sums[i].op[0] ? ":" : "", tc->sums[i].op);
		json_object_set_new(by, key,
				    json_integer((json_int_t)tc->sums[i].n));
	}
	rec = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:s}", "limit",
			"audit_records", "records", (json_int_t)tc->written,
			"bytes", (json_int_t)tc->bytes, "max_records",
			(json_int_t)tc->sb->audit.max_records, "max_bytes",
			(json_int_t)tc->sb->audit.max_bytes, "summarised",
			(json_int_t)tc->summarised, "events", by, "action",
			"summarised");
	return rec;
}

/* A `limit` record for each limit the call ran into. */
static void record_limits(struct launch *l)
{
	const struct cw_sandbox *sb = l->sb;
	const struct cw_cgroup_stats *c = &l->cst;
	const struct cw_bpfnet_stats *n = &l->nst;
	const struct cw_trace_stats *t = &l->tst;
	json_t *recs[10];	/* one per limit below */
	size_t i, k = 0;
	struct cw_error err;

	if (c->pids_limited)
		recs[k++] = cw_rec_limit("pids", c->pids_peak, c->pids_max);
	if (c->memory_limited || c->oom_kills)
		recs[k++] = cw_rec_limit_memory(c);
	if (n->connections_exhausted)
		recs[k++] = cw_rec_limit("max_connections", n->connections,
					 sb->network.max_connections);
	if (n->egress_exhausted)
		recs[k++] = cw_rec_limit("max_egress_bytes", n->egress_bytes,
					 sb->network.max_egress_bytes);
	if (l->r->run.timed_out)
		recs[k++] = cw_rec_limit("timeout",
					 l->r->run.duration_us / 1000,
					 l->ra->timeout_ms);
	/* sandbox.files, enforced by the trace. */
	if (l->e->trace && t->files.hit)
		recs[k++] = cw_rec_limit_files("max_files_written",
					       t->files_written,
					       sb->files.max_files_written,
					       &t->files);
	if (l->e->trace && t->bytes.hit)
		recs[k++] = cw_rec_limit_files("max_write_bytes",
					       t->write_bytes,
					       sb->files.max_write_bytes,
					       &t->bytes);
	if (l->e->trace && t->deny.hit)
		recs[k++] = cw_rec_limit_deny_open(t);
	if (l->e->trace && t->lost_kill.hit)
		recs[k++] = cw_rec_limit_trace_ring(t);
	if (l->tctx.summarised)
		recs[k++] = audit_budget_record(&l->tctx);
	for (i = 0; i < k; i++)
		cw_engine_record(l->e, l->r, CW_AUDIT_T(LIMIT), recs[i],
				 CW_AUDIT_DEFER_SYNC, &err);
}

/* What the agent reading the result must be told about its call. */
static void explain(struct launch *l)
{
	struct cw_note_facts f = {
		.sb = l->sb,
		.ra = l->ra,
		.run = &l->r->run,
		.cg = l->cgid ? &l->cst : NULL,
		.net = l->e->net && l->cgid ? &l->nst : NULL,
		.net_first = l->r->net_first,
		.trace = l->e->trace && l->cgid ? &l->tst : NULL,
		.seccomp_first = l->seccomp_first,
		.fs_denied = l->tctx.fs_denied,
		.fs_first = l->tctx.fs_first,
		.audit_summarised = l->tctx.summarised,
	};

	cw_notes_explain(&l->r->notes, &f);
}

/* The exit record of a command that ran, and the call's outcome. */
static void record_exit(struct launch *l)
{
	struct cw_engine *e = l->e;
	struct cw_call_result *r = l->r;
	struct cw_exit_facts f = {
		.run = &r->run,
		.uid = l->uid,
		.gid = l->gid,
		.cwd = l->cwd,
		.cancelled = r->cancelled,
		.rate_error = l->rate_ret < 0 ? l->rate_err.text : NULL,
		.cgroup = l->cgid != 0,
		.cg = &l->cst,
		.cgroup_error = l->cg_ret < 0 ? l->cg_err : NULL,
		.net = e->net && l->cgid ? &l->nst : NULL,
		.seccomp = l->so.seccomp != NULL,
		.seccomp_recorded = l->seccomp_recorded,
		.trace = e->trace && l->cgid ? e->trace : NULL,
		.events = &l->tst,
	};
	json_t *rec;

	if (l->cgid)
		record_limits(l);
	rec = cw_rec_exit(&f);
	if (l->tctx.failed) {
		/* Kernel events the log refused: the trail is incomplete. */
		json_decref(rec);
		rec = NULL;
		l->err = l->tctx.err;
	}
	if (!rec || cw_engine_record(e, r, CW_AUDIT_T(EXIT), rec, 0, &l->err) < 0) {
		if (!rec && !l->tctx.failed)
			cw_error_set(&l->err, "out of memory");
		/* The caller must not see a result the audit does not hold. */
		cw_spawn_result_free(&r->run);
		cw_call_fail(r, "result withheld because the audit log cannot be written",
			     &l->err);
		return;
	}
	if (l->rate_ret < 0) {
		cw_spawn_result_free(&r->run);
		cw_call_fail(r, "call stopped at launch because its rate-limit count cannot be made durable",
			     &l->rate_err);
		return;
	}
	r->outcome = CW_OUTCOME_RAN;
	explain(l);
}

int cw_launch(struct cw_engine *e, struct cw_rules *ru, const char *tool,
	      const struct cw_run_args *ra, const struct cw_runner *rn,
	      struct cw_cgroup_call *cgc, bool sync_launch,
	      struct cw_call_result *r, struct cw_unlaunched *why)
{
	struct launch l = {
		.e = e, .ru = ru, .sb = cw_policy_sandbox(ru->policy),
		.tool = tool, .ra = ra, .rn = rn, .sync_launch = sync_launch,
		.r = r, .why = why, .cgc = cgc,
		.watch = { .cancel_fd = -1 },
		.rates = sync_launch ? NULL : e->rates,
	};
	int ret;

	why->error[0] = '\0';
	why->with_cancelled = false;
	ret = attach(&l);
	if (ret < 0) {
		detach(&l, false);
		release_account(&l);
		return ret;
	}
	ret = spawn(&l);
	release_account(&l);
	/* Whatever is left of the call dies with its cgroup, then its
	 * rules go and its events become records. */
	detach(&l, true);
	if (ret < 0)
		return ret;
	record_exit(&l);
	return 0;
}
