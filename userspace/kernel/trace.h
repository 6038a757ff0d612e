/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace: what a call's processes did in the kernel — programs executed,
 * processes forked and exited, files opened, unlinked, renamed, chmod-ed,
 * chown-ed — each event handed to the call's sink, tagged with its call.
 *
 * Sources, chosen at open:
 *   "bpf_tracepoint"  the programs of bpf/trace.bpf.c (raw tracepoints,
 *                     CO-RE: needs kernel BTF), which also enforce
 *                     sandbox.files; events through a BPF ring buffer
 *   "kaudit"          where tracepoint BPF is missing: the kernel's audit
 *                     (kaudit.h)
 *   "fanotify"        where both are missing: fanotify events
 *                     (exec, open, modify, close_write) attributed to a
 *                     call by the process's cgroup (userspace/kernel/fanotify.c)
 *   "proc_events"     beside the last two: fork and exit from the process
 *                     events connector (procevents.h)
 * Events are read on a dedicated thread, so a burst never blocks a call;
 * cw_trace_call_end reads whatever of the call is still queued, so every
 * event of a call has reached its sink when it returns. Events that could
 * not be recorded are counted, never dropped silently.
 *
 * Thread-safe: calls may start and end concurrently.
 */
#ifndef CW_KERNEL_TRACE_H
#define CW_KERNEL_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/policy.h"
#include "lib/util.h"

struct cw_trace;
struct cw_trace_call;

struct cw_trace_opts {
	bool bpf;		/* use the tracepoint programs */
	bool kaudit;		/* else the kernel's audit (kaudit.h) */
	bool fanotify;		/* else fanotify */
	bool proc_events;	/* beside kaudit or fanotify, fork and exit
				 * from the process events connector
				 * (procevents.h) */
	unsigned ringbuf_kib;	/* 0: CW_TRACE_RINGBUF_DEFAULT_KIB */
	bool no_pause;		/* the call filling the ring is not paused;
				 * either way, a process whose event finds
				 * the ring full is killed (and the event
				 * counted lost) */
	const char *btf_path;	/* NULL: the kernel's own BTF */
	const char *cgroup2_mount;	/* for fanotify's attribution */
};

#define CW_TRACE_RINGBUF_DEFAULT_KIB 512
#define CW_TRACE_RINGBUF_MAX_KIB (1u << 20)

/* Opens the sources asked for. With bpf, a load failure is an error
 * (NULL + errno + err naming the program and the verifier's last line).
 * Starts the reading thread. */
struct cw_trace *cw_trace_open(const struct cw_trace_opts *o,
			       struct cw_error *err);
void cw_trace_close(struct cw_trace *t);

/* The sources in use: ["bpf_tracepoint"], ["kaudit", "proc_events"],
 * ["fanotify", "proc_events"], either without "proc_events", or []. New
 * reference. */
json_t *cw_trace_sources(const struct cw_trace *t);
/* The sources in use, as cw_trace_sources names them: how many. */
#define CW_TRACE_SOURCES_MAX 4
size_t cw_trace_source_names(const struct cw_trace *t,
			     const char *names[CW_TRACE_SOURCES_MAX]);

/* Whether sandbox.files limits are enforced (only by bpf_tracepoint). */
bool cw_trace_enforces_files(const struct cw_trace *t);

enum cw_trace_kind {
	CW_TRACE_EXEC = 1,
	CW_TRACE_FORK,
	CW_TRACE_EXIT,
	CW_TRACE_FILE,
	CW_TRACE_UNIX,		/* a unix connect or send refused: op, path,
				 * flags (the socket's type) */
	CW_TRACE_SEEN,		/* bpf: a file's first read-only open, its
				 * path (kept by trace.c, not a sink's) */
	CW_TRACE_READS,		/* read-only opens summed: files */
};

/* One decoded event. Strings point into the event; valid during the sink
 * call only. */
struct cw_trace_event {
	enum cw_trace_kind kind;
	const char *source;	/* "bpf", "kaudit" or "fanotify" */
	uint64_t cgroup_id;
	uint32_t pid, tid, uid;
	char comm[17];
	/* exec */
	uint32_t ppid;
	const char *filename;
	const char *argv;	/* NUL-separated */
	size_t argv_len;
	/* fork / exit */
	uint32_t child;
	int exit_code;		/* exit: the code, -1 if killed */
	int exit_signal;	/* exit: the signal, 0 if none */
	/* file */
	const char *op;		/* "open", "unlink", "rmdir", "rename", "chmod",
				 * "chown", "mkdir", "exec" (a failed one),
				 * "truncate", "link", "symlink", "mknod",
				 * "utimes", "setxattr", "removexattr",
				 * "fallocate";
				 * fanotify: "open", "modify",
				 * "close_write"; unix: "connect", "sendmsg" */
	const char *path;
	const char *path2;	/* rename's and link's new name, symlink's
				 * target, an xattr's name; else NULL */
	int dirfd, dirfd2;	/* -100 (AT_FDCWD) when the path is not
				 * relative to a descriptor */
	uint32_t flags, mode;
	int64_t owner, group;	/* chown; -1 unchanged */
	uint64_t size;		/* truncate's and fallocate's length, an
				 * xattr value's size, mknod's device */
	/* seen: the file */
	uint64_t ino;
	uint32_t dev;
	/* reads: the record's fields (kernel/reads.h); borrowed */
	json_t *reads;
	int64_t ret;		/* the system call's result; fanotify: 0 */
	bool has_ret;
	/* truncation */
	bool path_truncated, path2_truncated, argv_truncated;
	/* bpf: the path was walked up from the file the call opened or
	 * named by descriptor, not read from the program's memory */
	bool path_kernel;
};

/* Decodes one ring buffer record of bpf/trace.bpf.c. 0, or -EINVAL for a
 * record too short for its kind or of an unknown kind. */
int cw_trace_decode(const void *data, size_t size, struct cw_trace_event *ev);

/* The record type ("exec", "file", "reads", "process"; "net" for unix) and its
 * fields, without the reserved names (ts, seq, type, invocation, prev).
 * New reference. A unix event's record is the engine's to make: it alone
 * can tell whether the socket was masked. */
const char *cw_trace_event_type(const struct cw_trace_event *ev);
json_t *cw_trace_event_json(const struct cw_trace_event *ev);

typedef void (*cw_trace_sink)(void *ctx, const struct cw_trace_event *ev);

/* Starts tracing the call whose processes live in the v2 cgroup cgid
 * (named invocation beneath the calls cgroup, for fanotify), with
 * sb->files enforced. cgroup_fd is that cgroup's directory (-1: none),
 * whose cgroup.freeze pauses the call while the ring buffer is over half
 * full of events not yet read (unless no_pause). sink is called from the reading thread, or from
 * cw_trace_call_end, never concurrently for one call: once per event, and
 * with ev NULL at the end of each round of reading (a sink that buffers
 * writes what it holds then; the last such call comes before
 * cw_trace_call_end returns). NULL + err. */
struct cw_trace_call *cw_trace_call_add(struct cw_trace *t, uint64_t cgid,
					int cgroup_fd, const char *invocation,
					const struct cw_sandbox *sb,
					cw_trace_sink sink, void *ctx,
					struct cw_error *err);

struct cw_trace_limit {
	bool hit;
	uint32_t pid;		/* the process killed */
	char comm[17];
};

struct cw_trace_stats {
	uint64_t exec, fork, exit, file;	/* events delivered */
	uint64_t lost;		/* events the source had no room for */
	uint64_t unattributed;	/* fanotify: events seen while the call ran
				 * whose process was gone before it could be
				 * matched to a call */
	uint64_t missing;	/* submitted but not read by the end (0) */
	uint64_t pauses;	/* times the call was paused for its events */
	uint64_t paused_us;	/* and for how long in all */
	uint64_t files_written, write_bytes;
	struct cw_trace_limit files, bytes, deny;
	struct cw_trace_limit lost_kill;	/* killed: its event found the
						 * ring full */
	uint64_t reads;		/* read-only opens summed */
	char deny_path[129];	/* the path that hit deny_open */
	char deny_prefix[129];	/* and the prefix it matched */
};

/* The loginuid the call's processes are to be given (spawn.h), for the
 * kernel audit to attribute their events by; 0 when not that source. */
uint32_t cw_trace_call_loginuid(const struct cw_trace_call *c);

/* Ends the call, after its processes are gone: delivers what is still
 * queued for it, reads its counters, forgets it. */
void cw_trace_call_end(struct cw_trace *t, struct cw_trace_call *c,
		       struct cw_trace_stats *st);

/* Events lost by every call since open. */
uint64_t cw_trace_lost_total(const struct cw_trace *t);

#endif
