/* SPDX-License-Identifier: Apache-2.0 */
/*
 * notes: what the agent reading a result must be told about its call in
 * words: why the command was killed or refused something, and what of
 * its output is missing. Each is one line, "[cmdwarden] ...", appended to
 * the result's stderr and listed in structuredContent's notes; bounded in
 * number and size, so a call that hits everything still gets a short
 * answer, and never added to stdout.
 */
#ifndef CW_ENGINE_NOTES_H
#define CW_ENGINE_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/bpfnet.h"
#include "lib/util.h"
#include "kernel/cgroup.h"
#include "kernel/spawn.h"
#include "kernel/trace.h"
#include "policy/policy.h"
#include "server/tools.h"

#define CW_NOTES_MAX 8
#define CW_NOTE_LEN 256
#define CW_NOTE_PREFIX "[cmdwarden] "

struct cw_notes {
	char v[CW_NOTES_MAX][CW_NOTE_LEN];
	unsigned n;
	unsigned dropped;	/* notes past CW_NOTES_MAX */
};

/* Adds a note (printf-style, without the prefix); cut at CW_NOTE_LEN. */
void cw_note(struct cw_notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* err (len bytes), then "[cmdwarden] note\n" for each note, into b (which
 * the caller frees). 0 or -ENOMEM. */
int cw_notes_append(struct cw_buf *b, const char *err, size_t len,
		    const struct cw_notes *n);

/* What a call that ran went through; NULL for a layer that was off. */
struct cw_note_facts {
	const struct cw_sandbox *sb;
	const struct cw_run_args *ra;
	const struct cw_spawn_result *run;
	const struct cw_cgroup_stats *cg;
	const struct cw_bpfnet_stats *net;
	const char *net_first;	/* the first refused connection, "" */
	const struct cw_trace_stats *trace;
	const char *seccomp_first; /* the first refused syscall's name, "" */
	uint64_t fs_denied;	/* file accesses Landlock refused (as the
				 * trace saw them: cw_notes_fs_refusal) */
	const char *fs_first;	/* the first of them, "" */
	uint64_t audit_summarised; /* kernel events past sandbox.audit */
};

/* Whether a file event's EACCES was Landlock's: the access op needs
 * (exec; write for a writing open, unlink, rmdir, rename, mkdir; read) is
 * not granted at path, an absolute path, by sb's filesystem lists, or a
 * deny entry covers it. Then brief says what and which list, as "write
 * /opt/x (not beneath sandbox.filesystem.write)". An EACCES where the
 * lists grant the access came from the file's own permissions. */
bool cw_notes_fs_refusal(const struct cw_sandbox *sb, const char *op,
			 uint32_t flags, const char *path, char *brief,
			 size_t len);
/* The same for a relative path whose directory cannot be told any more:
 * brief names the path as given and both causes it may have. */
bool cw_notes_fs_refusal_relative(const char *op, uint32_t flags,
				  const char *path, char *brief, size_t len);

/* The notes of a call that ran: each kill, limit and refusal it met. */
void cw_notes_explain(struct cw_notes *n, const struct cw_note_facts *f);

#endif
