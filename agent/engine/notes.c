// SPDX-License-Identifier: Apache-2.0
/* notes: engine/notes.h. */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/notes.h"

void cw_note(struct cw_notes *n, const char *fmt, ...)
{
	va_list ap;

	if (n->n >= CW_NOTES_MAX) {
		n->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(n->v[n->n++], CW_NOTE_LEN, fmt, ap);
	va_end(ap);
}

int cw_notes_append(struct cw_buf *b, const char *err, size_t len,
		    const struct cw_notes *n)
{
	unsigned i;
	int rc;

	rc = cw_buf_append(b, err, len);
	if (!rc && len && err[len - 1] != '\n')
		rc = cw_buf_append(b, "\n", 1);
	for (i = 0; !rc && i < n->n; i++) {
		rc = cw_buf_append(b, CW_NOTE_PREFIX, strlen(CW_NOTE_PREFIX));
		if (!rc)
			rc = cw_buf_append(b, n->v[i], strlen(n->v[i]));
		if (!rc)
			rc = cw_buf_append(b, "\n", 1);
	}
	return rc;
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "es";
}

static void explain_timeout(struct cw_notes *n, const struct cw_note_facts *f)
{
	const struct cw_run_args *ra = f->ra;
	const char *key = ra->background ? "sandbox.background_timeout_s" :
					   "sandbox.timeout_s";
	double limit = (double)ra->timeout_ms / 1000;

	if (f->run->timed_out && ra->timeout_capped)
		cw_note(n, "killed at the time limit of %g s (%s); the call asked for %g s, longer than the policy allows",
			limit, key, (double)ra->timeout_asked_ms / 1000);
	else if (f->run->timed_out && ra->timeout_asked_ms)
		cw_note(n, "killed at the time limit of %g s the call asked for (timeout)",
			limit);
	else if (f->run->timed_out)
		cw_note(n, "killed at the time limit of %g s (%s)%s", limit, key,
			ra->background ? "" :
			"; a server or a longer job runs with background: true");
	else if (ra->timeout_capped)
		cw_note(n, "the call asked for a time limit of %g s; the policy allows at most %g s (%s), which applied",
			(double)ra->timeout_asked_ms / 1000, limit, key);
}

static void explain_resources(struct cw_notes *n, const struct cw_note_facts *f)
{
	const struct cw_sandbox *sb = f->sb;
	const struct cw_spawn_result *run = f->run;
	const struct cw_cgroup_stats *c = f->cg;
	int sig = run->term_signal ? run->term_signal :
		  run->exit_code > 128 ? run->exit_code - 128 : 0;

	if (c && c->oom_kills)
		cw_note(n, "killed by the memory limit of %lld MiB (sandbox.resources.memory_mb); peak %llu MiB",
			(long long)sb->resources.memory_mb,
			(unsigned long long)(c->memory_peak >> 20));
	else if (c && c->memory_limited)
		cw_note(n, "the memory limit of %lld MiB was reached (sandbox.resources.memory_mb); peak %llu MiB",
			(long long)sb->resources.memory_mb,
			(unsigned long long)(c->memory_peak >> 20));
	if (c && c->pids_limited)
		cw_note(n, "a fork was refused at the process limit of %lld (sandbox.resources.pids)",
			(long long)sb->resources.pids);
	if (sig == SIGXCPU)
		cw_note(n, "killed by the CPU time limit of %lld s (sandbox.resources.cpu_s)",
			(long long)sb->resources.cpu_s);
	if (sig == SIGXFSZ)
		cw_note(n, "killed writing past the file size limit of %lld MiB (sandbox.resources.file_size_mb)",
			(long long)sb->resources.file_size_mb);
}

static void explain_output(struct cw_notes *n, const struct cw_note_facts *f)
{
	const struct cw_spawn_result *run = f->run;
	long long max = f->sb->max_output_bytes;

	if (!run->truncated)
		return;
	cw_note(n, "output cut where the marker line is: %llu of %llu bytes of stdout and %llu of %llu of stderr left out (sandbox.max_output_bytes keeps the first %lld and the last %lld bytes of each)",
		(unsigned long long)run->out_omitted,
		(unsigned long long)run->out_total,
		(unsigned long long)run->err_omitted,
		(unsigned long long)run->err_total, max - max / 2, max / 2);
}

static void explain_refusals(struct cw_notes *n, const struct cw_note_facts *f)
{
	const struct cw_sandbox *sb = f->sb;
	const struct cw_bpfnet_stats *net = f->net;
	const struct cw_trace_stats *t = f->trace;

	if (f->run->seccomp_denied)
		cw_note(n, "%llu system call%s refused by seccomp (EPERM)%s%s",
			(unsigned long long)f->run->seccomp_denied,
			f->run->seccomp_denied == 1 ? "" : "s",
			f->seccomp_first[0] ? ", the first " : "",
			f->seccomp_first);
	if (net && net->denied)
		cw_note(n, "%llu connection%s refused by sandbox.network%s%s",
			(unsigned long long)net->denied,
			net->denied == 1 ? "" : "s",
			f->net_first[0] ? ", the first " : "", f->net_first);
	if (net && net->connections_exhausted)
		cw_note(n, "connections past %lld were refused (sandbox.network.max_connections)",
			(long long)sb->network.max_connections);
	if (net && net->egress_exhausted)
		cw_note(n, "data past %lld bytes sent was dropped (sandbox.network.max_egress_bytes)",
			(long long)sb->network.max_egress_bytes);
	if (t && t->files.hit)
		cw_note(n, "killed at the limit of %lld files written (sandbox.files.max_files_written)",
			(long long)sb->files.max_files_written);
	if (t && t->bytes.hit)
		cw_note(n, "killed at the limit of %lld bytes written to files (sandbox.files.max_write_bytes)",
			(long long)sb->files.max_write_bytes);
	if (t && t->deny.hit)
		cw_note(n, "killed opening %s, beneath %s (sandbox.files.deny_open)",
			t->deny_path, t->deny_prefix);
	if (t && t->lost_kill.hit)
		cw_note(n, "%s (pid %u) killed: its kernel events found the audit's ring buffer full, %llu lost (serve's --trace-ringbuf, --trace-overflow)",
			t->lost_kill.comm, (unsigned)t->lost_kill.pid,
			(unsigned long long)t->lost);
	if (f->audit_summarised)
		cw_note(n, "%llu kernel event%s past the audit budget of %lld records or %lld bytes were counted by kind, not recorded one by one (sandbox.audit)",
			(unsigned long long)f->audit_summarised,
			f->audit_summarised == 1 ? "" : "s",
			(long long)sb->audit.max_records,
			(long long)sb->audit.max_bytes);
	if (f->fs_denied)
		cw_note(n, "%llu file access%s refused by Landlock (EACCES), the first: %s",
			(unsigned long long)f->fs_denied,
			f->fs_denied == 1 ? "" : "es",
			f->fs_first ? f->fs_first : "");
}

static bool under_any(const char *path, const struct cw_strv *v,
		      const char **which)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (cw_path_under(path, v->v[i])) {
			*which = v->v[i];
			return true;
		}
	return false;
}

/* The access a file operation needs of Landlock: "exec", "read",
 * "write", or NULL for one Landlock does not refuse (chmod, chown). */
static const char *access_needed(const char *op, uint32_t flags)
{
	if (!op)
		return NULL;
	if (!strcmp(op, "exec"))
		return "exec";
	if (!strcmp(op, "open"))
		return flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC) ?
			       "write" : "read";
	if (!strcmp(op, "unlink") || !strcmp(op, "rmdir") ||
	    !strcmp(op, "rename") || !strcmp(op, "mkdir") ||
	    !strcmp(op, "truncate") || !strcmp(op, "symlink") ||
	    !strcmp(op, "mknod"))
		return "write";
	return NULL;
}

bool cw_notes_fs_refusal_relative(const char *op, uint32_t flags,
				  const char *path, char *brief, size_t len)
{
	const char *need = access_needed(op, flags);

	if (!need || !path)
		return false;
	snprintf(brief, len, "%s %.160s (not beneath sandbox.filesystem.%s, or the file's own mode)",
		 need, path, need);
	return true;
}

bool cw_notes_fs_refusal(const struct cw_sandbox *sb, const char *op,
			 uint32_t flags, const char *path, char *brief,
			 size_t len)
{
	const char *need = access_needed(op, flags), *which;
	const struct cw_strv *list;

	if (!sb || !need || !path || path[0] != '/')
		return false;
	/* terminals: probed by programs such as the clear_console of a
	 * login shell's ~/.bash_logout, never the agent's own doing */
	if (!strncmp(path, "/dev/tty", 8) || !strcmp(path, "/dev/console"))
		return false;
	list = !strcmp(need, "exec")  ? &sb->filesystem.exec :
	       !strcmp(need, "write") ? &sb->filesystem.write :
					&sb->filesystem.read;
	if (under_any(path, &sb->filesystem.deny, &which)) {
		snprintf(brief, len, "%s %.160s (beneath %.64s, sandbox.filesystem.deny)",
			 need, path, which);
		return true;
	}
	if (under_any(path, list, &which))
		return false;
	snprintf(brief, len, "%s %.160s (not beneath sandbox.filesystem.%s)",
		 need, path, need);
	return true;
}

void cw_notes_explain(struct cw_notes *n, const struct cw_note_facts *f)
{
	explain_timeout(n, f);
	explain_resources(n, f);
	if (f->run->left_running)
		cw_note(n, "%u process%s the command left running %s killed when it ended; a server runs with background: true",
			f->run->left_running, plural(f->run->left_running),
			f->run->left_running == 1 ? "was" : "were");
	explain_refusals(n, f);
	explain_output(n, f);
}
