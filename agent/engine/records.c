// SPDX-License-Identifier: Apache-2.0
/* The engine's audit record builders, one per record type (records.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine/layers.h"
#include "engine/records.h"
#include "version.h"

json_t *cw_rec_agent_start(const char *policy_path,
			   struct cw_cgroup_root *cg, struct cw_trace *trace,
			   const char *trace_error)
{
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:i, s:o, s:o}", "event", "start",
			"version", CW_VERSION, "pid", (int)getpid(), "probe",
			cw_probe_json(cw_engine_probe()), "layers",
			cw_engine_layers());
	if (!rec)
		return NULL;
	if (cg)
		json_object_set_new(rec, "cgroup", cw_cgroup_describe(cg));
	json_object_set_new(rec, "sources",
			    trace ? cw_trace_sources(trace) : json_array());
	if (trace_error[0])
		json_object_set_new(rec, "trace_error",
				    json_string(trace_error));
	json_object_set_new(rec, "policy",
			    json_string(policy_path ? policy_path :
						      "<embedded>"));
	return rec;
}

json_t *cw_rec_decision(const struct cw_call *call, bool invalid,
			const char *invalid_text, const struct cw_verdict *v,
			json_t *how)
{
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O?}", "tool",
			call->tool, "grant", call->grant ? call->grant : "",
			"session", call->session ? call->session : "",
			"verdict",
			invalid ? "invalid" : cw_verdict_name(v->kind),
			"rule", invalid ? "arguments" : v->rule,
			"reason", invalid ? invalid_text : v->reason,
			"args", call->args);
	if (rec && v->kind == CW_VERDICT_RATE_LIMITED)
		json_object_set_new(rec, "retry_after_ms",
				    json_integer(v->retry_after_us / 1000));
	if (rec && how)
		json_object_set(rec, "approval", how);
	return rec;
}

json_t *cw_rec_launch(const char *tool, const struct cw_sandbox *sb,
		      const struct cw_run_args *ra, const struct cw_user *u,
		      const char *cwd, const struct cw_landlock *ll,
		      struct cw_trace *trace)
{
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:I, s:o, s:s}",
			"tool", tool, "user", u->user, "uid", (json_int_t)u->uid,
			"gid", (json_int_t)u->gid, "shell", sb->shell,
			"cwd", cwd, "timeout_ms",
			(json_int_t)ra->timeout_ms, "layers",
			cw_engine_layers(), "seccomp_profile",
			sb->seccomp.profile);
	if (!rec)
		return NULL;
	if (ll)
		json_object_set_new(rec, "landlock", cw_landlock_describe(ll));
	json_object_set_new(rec, "layer_gaps", cw_engine_layer_gaps());
	json_object_set_new(rec, "sources",
			    trace ? cw_trace_sources(trace) : json_array());
	if (sb->login_shell)
		json_object_set_new(rec, "login_shell", json_true());
	if (ra->stdin_data)
		json_object_set_new(rec, "stdin_bytes",
				    json_integer((json_int_t)ra->stdin_len));
	if (ra->background)
		json_object_set_new(rec, "background", json_true());
	return rec;
}

/* The exit record's kernel-event counts. */
static json_t *exit_events(const struct cw_trace_stats *t)
{
	json_t *ev = json_pack("{s:I, s:I, s:I, s:I}", "exec",
			       (json_int_t)t->exec, "file",
			       (json_int_t)t->file, "fork",
			       (json_int_t)t->fork, "exit",
			       (json_int_t)t->exit);

	/* read-only opens summed into reads records */
	if (ev && t->reads)
		json_object_set_new(ev, "reads",
				    json_integer((json_int_t)t->reads));
	if (ev && t->unattributed)
		json_object_set_new(ev, "unattributed",
				    json_integer((json_int_t)t->unattributed));
	if (ev && t->pauses) {
		json_object_set_new(ev, "paused",
				    json_integer((json_int_t)t->pauses));
		json_object_set_new(ev, "paused_ms",
				    json_integer((json_int_t)(t->paused_us / 1000)));
	}
	if (ev && t->missing)
		json_object_set_new(ev, "missing",
				    json_integer((json_int_t)t->missing));
	return ev;
}

json_t *cw_rec_exit(const struct cw_exit_facts *f)
{
	const struct cw_spawn_result *run = f->run;
	json_t *rec;

	rec = json_pack("{s:i, s:I, s:I, s:s, s:i, s:i, s:I, s:I, s:I, s:b, s:b}",
			"pid", (int)run->pid, "uid", (json_int_t)f->uid,
			"gid", (json_int_t)f->gid, "cwd", f->cwd,
			"exit_code", cw_spawn_status(run),
			"signal", run->term_signal, "duration_ms",
			(json_int_t)(run->duration_us / 1000),
			"stdout_bytes", (json_int_t)run->out_total,
			"stderr_bytes", (json_int_t)run->err_total,
			"truncated", run->truncated, "timed_out",
			run->timed_out);
	if (!rec)
		return NULL;
	if (f->cancelled)
		json_object_set_new(rec, "cancelled", json_true());
	if (f->rate_error)
		json_object_set_new(rec, "rate_error",
				    json_string(f->rate_error));
	if (f->cgroup) {
		json_object_set_new(rec, "killed_after_exit",
				    json_integer((json_int_t)f->cg->killed));
		if (f->cgroup_error)
			json_object_set_new(rec, "cgroup_error",
					    json_string(f->cgroup_error));
	}
	if (f->net)
		json_object_set_new(
			rec, "net",
			json_pack("{s:I, s:I, s:I}", "connections",
				  (json_int_t)f->net->connections, "denied",
				  (json_int_t)f->net->denied, "egress_bytes",
				  (json_int_t)f->net->egress_bytes));
	if (f->seccomp)
		json_object_set_new(
			rec, "seccomp",
			json_pack("{s:b, s:I, s:I, s:I}", "audited",
				  run->seccomp_audited, "denied",
				  (json_int_t)run->seccomp_denied, "recorded",
				  (json_int_t)f->seccomp_recorded, "suppressed",
				  (json_int_t)(run->seccomp_denied -
					       f->seccomp_recorded)));
	json_object_set_new(rec, "sources",
			    f->trace ? cw_trace_sources(f->trace) :
				       json_array());
	json_object_set_new(rec, "events_lost",
			    json_integer((json_int_t)f->events->lost));
	if (f->trace) {
		json_object_set_new(rec, "events", exit_events(f->events));
		if (cw_trace_enforces_files(f->trace))
			json_object_set_new(
				rec, "files",
				json_pack("{s:I, s:I}", "written",
					  (json_int_t)f->events->files_written,
					  "write_bytes",
					  (json_int_t)f->events->write_bytes));
	}
	return rec;
}

json_t *cw_rec_exit_unlaunched(const char *error, bool with_cancelled,
			       bool cancelled)
{
	if (with_cancelled)
		return json_pack("{s:s, s:b, s:b}", "error", error,
				 "launched", 0, "cancelled", cancelled);
	return json_pack("{s:s, s:b}", "error", error, "launched", 0);
}

static const char *family_name(int f)
{
	switch (f) {
	case AF_INET:
		return "inet";
	case AF_INET6:
		return "inet6";
	case AF_PACKET:
		return "packet";
	}
	return "other";
}

/* Why a local service was refused, for the reader of the record. */
static const char *service_reason(const char *service)
{
	if (!strcmp(service, "envd"))
		return "E2B's envd (runs processes and files as any user) listens on this port; network.local_services does not allow it";
	if (!strcmp(service, "mcp_gateway"))
		return "E2B's MCP gateway listens on this port; network.local_services does not allow it";
	if (!strcmp(service, "agent"))
		return "the agent's own HTTP port; network.local_services does not allow it";
	return "a socket outside the calls listens on this local port; network.local_services does not allow it";
}

json_t *cw_rec_net(const struct cw_bpfnet_event *ev)
{
	json_t *rec;

	rec = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:s, s:i, s:s, s:s}",
			"pid", (int)ev->pid, "comm", ev->comm, "op",
			ev->op ? ev->op : "", "family",
			family_name(ev->family), "socket_type", ev->type,
			"protocol", ev->protocol, "address", ev->addr,
			"port", (int)ev->port, "verdict",
			ev->allowed ? "allow" : "deny", "rule",
			ev->rule ? ev->rule : "");
	if (rec && ev->service)
		json_object_update_new(rec, json_pack("{s:s, s:s}", "service",
						      ev->service, "reason",
						      service_reason(ev->service)));
	if (rec && ev->option)
		json_object_set_new(rec, "option", json_string(ev->option));
	if (rec && ev->rule && !strcmp(ev->rule, "source_route"))
		json_object_set_new(rec, "reason", json_string(
			"a source route sends the packet to a first hop other than the destination the rules judged"));
	return rec;
}

void cw_rec_net_brief(const struct cw_bpfnet_event *ev, char *buf, size_t len)
{
	const char *rule = ev->rule ? ev->rule : "deny";

	if (!ev->addr[0])
		snprintf(buf, len, "%s of a %s socket (rule %s)",
			 ev->op ? ev->op : "use", family_name(ev->family), rule);
	else if (ev->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u (rule %s)", ev->addr,
			 (unsigned)ev->port, rule);
	else
		snprintf(buf, len, "%s:%u (rule %s)", ev->addr,
			 (unsigned)ev->port, rule);
}

void cw_rec_net_unix(json_t *rec, bool masked)
{
	json_object_update_new(rec, json_pack("{s:s, s:s, s:s}", "verdict",
		"deny", "rule", "unix_socket", "reason", masked ?
		"a unix socket of a service outside the calls, masked in the call's mount namespace; network.unix_sockets lists the paths a call may reach" :
		"refused (ECONNREFUSED) by a masked socket or one without a reader: the relative path could not be resolved after its thread ended"));
}

json_t *cw_rec_seccomp(const struct cw_seccomp_denial *d)
{
	json_t *args = json_array();
	int i;

	/* Hex strings: 64-bit values do not fit JSON integers. */
	for (i = 0; args && i < 6; i++)
		json_array_append_new(args, json_sprintf("0x%llx",
				      (unsigned long long)d->args[i]));
	/* family and protocol name what socket and socketpair asked for */
	return json_pack("{s:s, s:i, s:s, s:o?, s:i, s:s, s:s, s:s*, s:s*}",
			 "syscall", d->name[0] ? d->name : "unknown", "nr",
			 d->nr, "arch", d->arch_name, "args", args, "pid",
			 (int)d->pid, "comm", d->comm, "action",
			 d->err == EPERM ? "EPERM" : "errno", "family",
			 d->family[0] ? d->family : NULL, "protocol",
			 d->protocol[0] ? d->protocol : NULL);
}

json_t *cw_rec_limit(const char *limit, int64_t peak, int64_t max)
{
	return json_pack("{s:s, s:I, s:I}", "limit", limit, "peak",
			 (json_int_t)peak, "max", (json_int_t)max);
}

json_t *cw_rec_limit_memory(const struct cw_cgroup_stats *c)
{
	return json_pack("{s:s, s:I, s:I, s:I}", "limit", "memory", "peak",
			 (json_int_t)c->memory_peak, "max",
			 (json_int_t)c->memory_max, "oom_kills",
			 (json_int_t)c->oom_kills);
}

json_t *cw_rec_limit_files(const char *limit, int64_t peak, int64_t max,
			   const struct cw_trace_limit *who)
{
	return json_pack("{s:s, s:I, s:I, s:i, s:s, s:s}", "limit", limit,
			 "peak", (json_int_t)peak, "max", (json_int_t)max,
			 "pid", (int)who->pid, "comm", who->comm, "action",
			 "killed");
}

json_t *cw_rec_limit_deny_open(const struct cw_trace_stats *t)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "limit",
			 "deny_open", "path", t->deny_path, "prefix",
			 t->deny_prefix, "pid", (int)t->deny.pid, "comm",
			 t->deny.comm, "action", "killed");
}

json_t *cw_rec_limit_trace_ring(const struct cw_trace_stats *t)
{
	return json_pack("{s:s, s:I, s:i, s:s, s:s}", "limit", "trace_ring",
			 "lost", (json_int_t)t->lost, "pid",
			 (int)t->lost_kill.pid, "comm", t->lost_kill.comm,
			 "action", "killed");
}

json_t *cw_rec_approval(const char *id, bool approve, int ret,
			const struct ucred *peer, json_t *desc)
{
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:s, s:i, s:i}", "approval_id", id,
			"answer", approve ? "approve" : "reject", "outcome",
			ret == 0 ? "done" :
			ret == -ETIMEDOUT ? "expired" : "already decided",
			"peer_uid", (int)peer->uid, "peer_pid", (int)peer->pid);
	if (rec && desc)
		json_object_update(rec, desc);
	return rec;
}
