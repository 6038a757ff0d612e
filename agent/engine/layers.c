// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel layers: one row each, indexed by CW_LAYER_IDX_* (CW_LAYERS in
 * policy/policy.h gives their names, bits and order). A row says which
 * probed features the layer needs and whether this build enforces it;
 * everything that asks "is this layer on here, and why not" reads this
 * table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/layers.h"
#include "kernel/seccomp.h"

/* Most probed features a layer needs. */
#define LAYER_NEEDS_MAX 5
/* Room for "feature: why it is missing". */
#define WHY_LEN 256

struct layer {
	bool built;		/* this build enforces it */
	enum cw_feature need[LAYER_NEEDS_MAX];
	size_t nneed;
};

/* One row per CW_LAYERS entry (policy/policy.h), by its bit number. */
static const struct layer layers[CW_LAYER_COUNT] = {
	[CW_LAYER_IDX_SECCOMP] = { true, { CW_FEAT_SECCOMP }, 1 },
	[CW_LAYER_IDX_LANDLOCK] = { true, { CW_FEAT_LANDLOCK }, 1 },
	[CW_LAYER_IDX_BPF_NET] = { true,
	  { CW_FEAT_CGROUP2, CW_FEAT_BPF_CGROUP_SOCK_ADDR,
	    CW_FEAT_BPF_CGROUP_SOCK, CW_FEAT_BPF_CGROUP_SKB,
	    CW_FEAT_BPF_RINGBUF }, 5 },
	[CW_LAYER_IDX_CGROUP] = { true, { CW_FEAT_CGROUP2 }, 1 },
	[CW_LAYER_IDX_BPF_TRACE] = { true,
	  { CW_FEAT_CGROUP2, CW_FEAT_KERNEL_BTF, CW_FEAT_BPF_TRACEPOINT,
	    CW_FEAT_BPF_RINGBUF }, 4 },
	[CW_LAYER_IDX_NAMESPACES] = { true, { CW_FEAT_CALL_NAMESPACES }, 1 },
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct cw_probe probe;

/*
 * The probe parses the kernel's BTF and loads BPF objects: done in a child,
 * so the agent's own memory never holds them (its resident size stays
 * small). The result is plain data, passed back through a pipe.
 */
static void run_probe(void)
{
	int fds[2], status, rc;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		goto inline_probe;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		goto inline_probe;
	}
	if (pid == 0) {
		struct cw_probe p;

		close(fds[0]);
		cw_probe_run(&p);
		_exit(cw_write_all(fds[1], &p, sizeof(p)) < 0 ? 1 : 0);
	}
	close(fds[1]);
	rc = cw_read_all(fds[0], &probe, sizeof(probe));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0)
		return;
inline_probe:
	cw_probe_run(&probe);
}

const struct cw_probe *cw_engine_probe(void)
{
	pthread_once(&probe_once, run_probe);
	return &probe;
}

/* NULL when the layer can be used, else why not. */
static const char *layer_missing(const struct layer *l, char *buf,
				 size_t len)
{
	const struct cw_probe *p = cw_engine_probe();
	size_t i;

	if (!l->built)
		return "this version of cmdwarden does not enforce this layer yet";
	for (i = 0; i < l->nneed; i++) {
		const struct cw_probe_item *it = &p->item[l->need[i]];

		if (!it->ok) {
			snprintf(buf, len, "%s: %s", cw_probe_name(l->need[i]),
				 it->detail);
			return buf;
		}
	}
	return NULL;
}

bool cw_layer_on(unsigned bit)
{
	char why[WHY_LEN];
	size_t i;

	for (i = 0; i < CW_LAYER_COUNT; i++)
		if ((1u << i) == bit)
			return !layer_missing(&layers[i], why, sizeof(why));
	return false;
}

json_t *cw_engine_layers(void)
{
	json_t *o = json_object();
	char why[WHY_LEN];
	size_t i;

	for (i = 0; o && i < CW_LAYER_COUNT; i++)
		json_object_set_new(o, cw_layer_names[i],
				    json_boolean(!layer_missing(&layers[i], why,
								sizeof(why))));
	return o;
}

json_t *cw_engine_layers_off(void)
{
	json_t *o = json_object();
	char why[WHY_LEN];
	const char *m;
	size_t i;

	for (i = 0; o && i < CW_LAYER_COUNT; i++) {
		m = layer_missing(&layers[i], why, sizeof(why));
		if (m)
			json_object_set_new(o, cw_layer_names[i], json_string(m));
	}
	return o;
}

/* What a layer in force cannot do on this kernel: the probe's reason for
 * each feature it would use for that. */
json_t *cw_engine_layer_gaps(void)
{
	const struct cw_probe *p = cw_engine_probe();
	char why[WHY_LEN];
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (!layer_missing(&layers[CW_LAYER_IDX_BPF_NET], why, sizeof(why)) &&
	    !p->item[CW_FEAT_SOCK_DIAG_INET].ok)
		json_object_set_new(o, "local_services",
				    json_string(p->item[CW_FEAT_SOCK_DIAG_INET].detail));
	if (!layer_missing(&layers[CW_LAYER_IDX_NAMESPACES], why, sizeof(why)) &&
	    access("/proc/sys/vm/memfd_noexec", F_OK) < 0)
		json_object_set_new(o, "memfd_noexec",
				    json_string("no vm.memfd_noexec (before Linux 6.3): a binary written into a memfd can be executed"));
	if (!layer_missing(&layers[CW_LAYER_IDX_NAMESPACES], why, sizeof(why)) &&
	    !p->item[CW_FEAT_CALL_USERNS].ok)
		json_object_set_new(o, "per_uid_limits",
				    json_string(p->item[CW_FEAT_CALL_USERNS].detail));
	if (!layer_missing(&layers[CW_LAYER_IDX_NAMESPACES], why, sizeof(why))) {
		char trace[WHY_LEN];
		const char *m = layer_missing(&layers[CW_LAYER_IDX_BPF_TRACE],
					      trace, sizeof(trace));

		if (m)
			json_object_set_new(o, "unix_refusal_records",
					    json_sprintf("a connect refused by a masked unix socket leaves no net record without bpf_trace (%s)", m));
	}
	return o;
}

/* What of this policy goes unenforced without layer i, as a tail. */
static const char *unenforced(const struct cw_sandbox *sb, size_t i)
{
	switch (i) {
	case CW_LAYER_IDX_BPF_TRACE:
		return sb->files.max_files_written || sb->files.max_write_bytes ||
			       sb->files.deny_open.n ?
			       "; the policy's sandbox.files limits are not "
			       "enforced" : "";
	case CW_LAYER_IDX_BPF_NET:
		return "; sandbox.network rules and limits are not enforced";
	case CW_LAYER_IDX_LANDLOCK:
		return "; sandbox.filesystem is not enforced";
	case CW_LAYER_IDX_CGROUP:
		return "; sandbox.resources memory and pids fall back to "
		       "rlimits";
	case CW_LAYER_IDX_NAMESPACES:
		return "; commands share the agent's SysV IPC, /dev/shm and "
		       "/proc, and "
		       "code copied into a writable tree can be mapped "
		       "executable";
	default:
		return "";
	}
}

void cw_engine_layer_warnings(const struct cw_policy *p, struct cw_diag *warn)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(p);
	char why[WHY_LEN];
	const char *m;
	size_t i;

	for (i = 0; i < CW_LAYER_COUNT; i++) {
		if (sb->require_layers & (1u << i))
			continue;
		m = layer_missing(&layers[i], why, sizeof(why));
		if (m)
			cw_diag_add(warn, p->source, 0, 0, "", "layer \"%s\" is not available and commands run without it: %s%s",
				    cw_layer_names[i], m,
				    unenforced(sb, i));
	}
}

/* The required-layer check: each layer in require_layers must be on. */
static void check_layers(const struct cw_policy *p, const char *source,
			 struct cw_diag *diag)
{
	const struct cw_sandbox *sb = cw_policy_sandbox(p);
	char why[WHY_LEN];
	const char *m;
	size_t i;

	for (i = 0; i < CW_LAYER_COUNT; i++) {
		if (!(sb->require_layers & (1u << i)))
			continue;
		m = layer_missing(&layers[i], why, sizeof(why));
		if (m)
			cw_diag_add(diag, source, 0, 0,
				    "tools.run_command.sandbox.require_layers",
				    "required layer \"%s\" is not available: %s; remove it from require_layers to run without it",
				    cw_layer_names[i], m);
	}
}

struct cw_policy *cw_engine_load_policy(const char *path,
					struct cw_diag *diag)
{
	struct cw_seccomp_prog *prog;
	struct cw_policy *p;
	struct cw_error err;
	size_t before = diag->n;
	const char *source = path ? path : "<embedded>";

	p = path ? cw_policy_load_file(path, diag) :
		   cw_policy_load_default(diag);
	if (!p)
		return NULL;
	prog = cw_seccomp_build(cw_policy_sandbox(p), &err);
	if (!prog)
		cw_diag_add(diag, source, 0, 0,
			    "tools.run_command.sandbox.seccomp", "%s",
			    err.text);
	cw_seccomp_free(prog);
	check_layers(p, source, diag);
	if (diag->n > before) {
		cw_policy_free(p);
		errno = EINVAL;
		return NULL;
	}
	return p;
}
